//! Every module passes the Khronos SPIR-V validator (`spirv-val`, SPIRV-Tools) for Vulkan
//! 1.0, where it is installed: naga validates its IR, this validates the words, including
//! the `NoContraction` decorations `build.rs` adds.

use std::process::Command;

use ember_kernels_wgsl::KERNELS;

#[test]
fn spirv_val_accepts_every_kernel() {
    if Command::new("spirv-val").arg("--version").output().is_err() {
        eprintln!("spirv-val is not installed: skipping");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ember-kernels-wgsl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let modules = KERNELS.iter().map(|k| (k.name, k.words));
    for (name, words) in modules {
        let path = dir.join(format!("{name}.spv"));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes).expect("write");
        let out = Command::new("spirv-val")
            .args(["--target-env", "vulkan1.0"])
            .arg(&path)
            .output()
            .expect("spirv-val");
        assert!(
            out.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
