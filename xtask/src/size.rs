//! `cargo xtask size`: flash and RAM of every QEMU board's firmware, read from the ELF files.
//!
//! Three binaries per board: `bare` (start-up, one log line, exit), `minimal` (the runtime
//! alone: hal-core + hal-local, one `fill_u32` kernel, one invocation) and the full firmware
//! (the digits model, its data, the on-target tests). Flash is what the image stores: code,
//! read-only data and the initial values of `.data`; RAM is `.data` + `.bss` (the statics:
//! device memory, heap, device tables), without the stack. The runtime's own flash is
//! `minimal − bare`, and it has a bound ([`RUNTIME_FLASH_BOUNDS`]): past it the command fails
//! (after writing the table). Writes `target/bench/size.json`.

use crate::boards::{self, Board};
use crate::step::{root, Result};
use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind};
use std::fmt::Write as _;
use std::path::Path;

/// The statics the report names, found by (mangled) symbol name.
const NAMED: &[(&str, &str)] = &[
    ("device_memory", "DEVICE_MEMORY"),
    ("heap", "HEAP_MEMORY"),
    ("shared_inputs", "SHARED_INPUTS"),
    ("device_tables", "7STORAGE17h"),
];

/// The most flash the runtime alone (`minimal` − `bare`) may take, per board; `cargo xtask
/// size` (and so `cargo xtask test`) fails past it. 12 KiB on the Cortex-M4F board is the
/// runtime's footprint target, in the range of TFLM's framework (about 9.7 KB on a
/// Cortex-M3) and below IREE's 30 KB; the runtime measures 10,376–10,396 B there (by
/// toolchain), so the bound leaves it about 1.9 KB to grow.
pub const RUNTIME_FLASH_BOUNDS: &[(&str, u64)] = &[("mps2-an386", 12 * 1024)];

/// Sizes of one binary.
#[derive(Debug, Default, Clone)]
pub struct Footprint {
    /// Code (every executable section, the vector table included).
    pub text: u64,
    /// Read-only data.
    pub rodata: u64,
    /// Initialized data (stored in flash, copied to RAM).
    pub data: u64,
    /// Zeroed data.
    pub bss: u64,
    /// Named statics inside `.data`/`.bss`: (name, bytes).
    pub named: Vec<(&'static str, u64)>,
}

impl Footprint {
    /// Bytes stored in flash.
    pub fn flash(&self) -> u64 {
        self.text + self.rodata + self.data
    }

    /// Bytes of RAM the statics take.
    pub fn ram(&self) -> u64 {
        self.data + self.bss
    }

    fn named(&self, name: &str) -> u64 {
        self.named
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, b)| *b)
    }

    fn json(&self) -> String {
        let mut s = format!(
            "{{\"flash\": {}, \"ram\": {}, \"text\": {}, \"rodata\": {}, \"data\": {}, \"bss\": {}",
            self.flash(),
            self.ram(),
            self.text,
            self.rodata,
            self.data,
            self.bss
        );
        for (name, bytes) in &self.named {
            let _ = write!(s, ", \"{name}\": {bytes}");
        }
        s.push('}');
        s
    }
}

/// Reads the footprint of the ELF at `path`.
pub fn footprint(path: &Path) -> Result<Footprint> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let elf = object::File::parse(&*bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut f = Footprint::default();
    for section in elf.sections() {
        let SectionFlags::Elf { sh_flags } = section.flags() else {
            continue;
        };
        let (alloc, write, exec) = (
            sh_flags & 0x2 != 0,
            sh_flags & 0x1 != 0,
            sh_flags & 0x4 != 0,
        );
        let name = section.name().unwrap_or("");
        // The stack is reserved, not a static: left out, as on the Cortex-M boards.
        if !alloc || name == ".stack" || name.starts_with(".heap") {
            continue;
        }
        let size = section.size();
        match (exec, write, section.kind()) {
            (true, _, _) => f.text += size,
            (false, false, _) => f.rodata += size,
            (false, true, SectionKind::UninitializedData | SectionKind::UninitializedTls) => {
                f.bss += size
            }
            (false, true, _) if section.file_range().is_none() => f.bss += size,
            (false, true, _) => f.data += size,
        }
    }
    // A device's static storage starts as `LocalStorage::EMPTY`, all zero bytes, so it must
    // be in `.bss`: in `.data` its image would cost flash as large as its tables.
    for symbol in elf.symbols() {
        if !symbol.name().is_ok_and(|n| n.contains("7STORAGE17h")) || symbol.size() == 0 {
            continue;
        }
        let section = symbol
            .section_index()
            .and_then(|i| elf.section_by_index(i).ok());
        if let Some(section) = section.filter(|s| s.file_range().is_some()) {
            return Err(format!(
                "{}: device tables `{}` ({} B) are in {}, not .bss: LocalStorage::EMPTY is no \
                 longer all zero bytes, and firmware pays that much flash for its image",
                path.display(),
                symbol.name().unwrap_or("?"),
                symbol.size(),
                section.name().unwrap_or("?")
            ));
        }
    }
    for (name, needle) in NAMED {
        let bytes: u64 = elf
            .symbols()
            .filter(|s| s.name().is_ok_and(|n| n.contains(needle)))
            .map(|s| s.size())
            .sum();
        if bytes > 0 {
            f.named.push((name, bytes));
        }
    }
    Ok(f)
}

/// Builds every QEMU board, prints the table and writes `target/bench/size.json`.
pub fn size() -> Result {
    println!(
        "\n==> footprint of every QEMU board's firmware; the runtime alone within its bound \
         (RUNTIME_FLASH_BOUNDS in xtask/src/size.rs)"
    );
    let mut table = String::new();
    let mut json = String::from("{\n  \"boards\": [\n");
    let _ = writeln!(
        table,
        "{:<18} {:<22} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "board", "binary", "flash", "ram", "runtime", "device", "heap", "tables", "shared"
    );
    let qemu: Vec<Board> = boards::qemu_boards().collect();
    let mut runtimes = Vec::new();
    for (i, board) in qemu.iter().enumerate() {
        boards::build(*board)?;
        let bare = footprint(&boards::elf(*board, "bare")?)?;
        let minimal = footprint(&boards::elf(*board, "minimal")?)?;
        let full = footprint(&boards::elf(*board, board.name)?)?;
        let runtime = minimal.flash().saturating_sub(bare.flash());
        runtimes.push((*board, runtime));
        for (label, f) in [
            ("bare", &bare),
            ("minimal (runtime alone)", &minimal),
            ("digits + tests", &full),
        ] {
            let _ = writeln!(
                table,
                "{:<18} {:<22} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9}",
                board.name,
                label,
                f.flash(),
                f.ram(),
                if label == "bare" {
                    String::new()
                } else {
                    (f.flash().saturating_sub(bare.flash())).to_string()
                },
                f.named("device_memory"),
                f.named("heap"),
                f.named("device_tables"),
                f.named("shared_inputs"),
            );
        }
        let _ = writeln!(
            json,
            "    {{\"board\": \"{}\", \"target\": \"{}\", \"runtime_alone_flash\": {runtime}, \"bare\": {}, \"minimal\": {}, \"firmware\": {}}}{}",
            board.name,
            board.target.unwrap_or("host"),
            bare.json(),
            minimal.json(),
            full.json(),
            if i + 1 < qemu.len() { "," } else { "" }
        );
    }
    json.push_str("  ]\n}\n");
    println!("\nbytes; runtime = flash beyond `bare` (start-up, logging, panic handler); ram = .data + .bss (stack not included)\n{table}");
    let dir = root().join("target/bench");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = dir.join("size.json");
    std::fs::write(&out, json).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {}", out.display());
    let mut over = Vec::new();
    for (name, bound) in RUNTIME_FLASH_BOUNDS {
        let &(board, runtime) = runtimes
            .iter()
            .find(|(b, _)| b.name == *name)
            .ok_or_else(|| format!("RUNTIME_FLASH_BOUNDS names `{name}`, not a QEMU board"))?;
        println!(
            "runtime alone on {name}: {runtime} B of flash, bound {bound} B: {}",
            if runtime <= *bound { "within" } else { "OVER" }
        );
        over.extend(over_bound(board, runtime));
    }
    if over.is_empty() {
        Ok(())
    } else {
        Err(over.join("; "))
    }
}

/// Why `board`'s runtime-alone flash fails its bound, or `None` when within (or unbounded).
fn over_bound(board: Board, runtime: u64) -> Option<String> {
    let (_, bound) = RUNTIME_FLASH_BOUNDS
        .iter()
        .find(|(n, _)| *n == board.name)?;
    (runtime > *bound).then(|| {
        format!(
            "{} ({}): the runtime alone (`minimal` − `bare`) takes {runtime} B of flash, {} B \
             over its bound of {bound} B (RUNTIME_FLASH_BOUNDS in xtask/src/size.rs)",
            board.name,
            board.target.unwrap_or("host"),
            runtime - bound
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_bound_is_inclusive_and_names_board_and_bound() {
        let board = boards::find("mps2-an386").expect("board");
        assert_eq!(over_bound(board, 12 * 1024), None);
        let message = over_bound(board, 12 * 1024 + 1).expect("over");
        assert!(
            message.contains("mps2-an386") && message.contains("12288 B"),
            "{message}"
        );
        let unbounded = boards::find("qemu-virt-aarch64").expect("board");
        assert_eq!(over_bound(unbounded, u64::MAX), None);
    }
}
