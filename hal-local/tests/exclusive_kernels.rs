//! Kernels over plain slices (`Entry::Exclusive`): the driver hands them each binding as a
//! byte slice (read-only but for the one it declares it writes, and that one too where it
//! overlaps another binding) and runs every workgroup in turn.
#![cfg(feature = "exclusive")]

use hal_core::memory::BufferParams;
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, ExecutableSource, Record, Submit,
    Workgroups,
};
use hal_local::kernel::{elements, elements_mut, Entry, Exclusive, Kernel, KernelError, Writes};
use hal_local::{HostMemory, LocalConfig, LocalDevice, LocalStorage};

/// `out[i] = in[i] + constant[0]` as `i32`s, over this workgroup's share (x only).
fn add_i32(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    let add = *wg.constants.first().ok_or(KernelError::MissingConstants {
        needed: 1,
        given: 0,
    })? as i32;
    let (share, total) = (wg.id[0] as usize, wg.count[0] as usize);
    let [input, output] = wg.bindings else {
        return Err(KernelError::MissingBinding { index: 1, bound: 0 });
    };
    let input: &[i32] = elements(input.bytes(), 0)?;
    let output: &mut [i32] = elements_mut(output.bytes_mut(1)?, 1)?;
    let per = output.len().div_ceil(total);
    for (i, o) in output.iter_mut().enumerate().skip(share * per).take(per) {
        *o = input.get(i).copied().unwrap_or(0).wrapping_add(add);
    }
    Ok(())
}

/// Tries to write binding 0, which it does not declare: always refused.
fn write_input(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    let [input, ..] = wg.bindings else {
        return Err(KernelError::MissingBinding { index: 0, bound: 0 });
    };
    input.bytes_mut(0)?.fill(0xFF);
    Ok(())
}

/// Writes `row * 1000 + column` into each `i32` of binding 1 (rows of 7), through the
/// device's tiler: on the worker pool where the device has one.
fn rows_i32(wg: &mut Exclusive<'_, '_>) -> Result<(), KernelError> {
    const ROW: usize = 7;
    let tiler = wg.tiler;
    let [_, output] = wg.bindings else {
        return Err(KernelError::MissingBinding { index: 1, bound: 0 });
    };
    let output: &mut [i32] = elements_mut(output.bytes_mut(1)?, 1)?;
    let rows = output.len() / ROW;
    tiler.run(output, rows, ROW, |rows, tile| {
        if tile.len() < rows.len() * ROW {
            return Err(KernelError::Shape("tile too short"));
        }
        for (row, values) in rows.zip(tile.chunks_exact_mut(ROW)) {
            for (column, v) in values.iter_mut().enumerate() {
                *v = (row * 1000 + column) as i32;
            }
        }
        Ok(())
    })
}

static KERNELS: [Kernel; 3] = [
    Kernel {
        name: "rows_i32",
        entry: Entry::Exclusive(rows_i32, Writes::Binding(1)),
    },
    Kernel {
        name: "add_i32",
        entry: Entry::Exclusive(add_i32, Writes::Binding(1)),
    },
    Kernel {
        name: "write_input",
        entry: Entry::Exclusive(write_input, Writes::Binding(1)),
    },
];

fn run(dev: &mut LocalDevice<'_>, bindings: &[BufferRef], grid: [u32; 3]) -> Result<(), Error> {
    run_kernel(dev, "add_i32", bindings, grid)
}

fn run_kernel(
    dev: &mut LocalDevice<'_>,
    name: &str,
    bindings: &[BufferRef],
    grid: [u32; 3],
) -> Result<(), Error> {
    let kernel = dev.load_executable(ExecutableSource::Kernel(name))?;
    let cb = dev.create_command_buffer(CommandBufferMode::OneShot, 8, 0)?;
    dev.record(
        cb,
        Record::Dispatch {
            executable: kernel,
            workgroups: Workgroups::Direct(grid),
            constants: &[5],
            bindings,
        },
    )?;
    dev.end(cb)?;
    let result = dev.queue_execute(Submit::NOW, cb, &[]);
    dev.release_command_buffer(cb)?;
    dev.release_executable(kernel)?;
    result
}

#[test]
fn exclusive_kernels_see_plain_slices() {
    let mut storage: Box<LocalStorage> = Box::new(LocalStorage::EMPTY);
    let mut memory = vec![0u8; 64 * 1024];
    let config = LocalConfig {
        kernels: &KERNELS,
        ..LocalConfig::default()
    };
    let mut dev = LocalDevice::new(&mut storage, &mut memory, config).unwrap();
    #[repr(C, align(16))]
    struct Aligned([u8; 64]);
    let mut values = Aligned([0; 64]);
    for (i, word) in values.0.chunks_exact_mut(4).enumerate() {
        word.copy_from_slice(&(i as i32).to_ne_bytes());
    }
    let input = dev
        .import_buffer(
            HostMemory::ReadOnly(&values.0),
            BufferParams::host_visible(),
        )
        .unwrap();
    let output = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    for grid in [[1, 1, 1], [3, 1, 1]] {
        run(
            &mut dev,
            &[BufferRef::buffer(input), BufferRef::buffer(output)],
            grid,
        )
        .unwrap();
        let mut out = [0u8; 64];
        dev.read_buffer(BufferSpan::whole(output), &mut out)
            .unwrap();
        let got: Vec<i32> = out
            .chunks_exact(4)
            .map(|w| i32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        assert_eq!(got, (5..21).collect::<Vec<i32>>());
    }
    // Written in place: the output overlaps the input, so it is read-only to the kernel.
    let in_place = run(
        &mut dev,
        &[
            BufferRef::buffer(output).at(0, 32),
            BufferRef::buffer(output).at(16, 32),
        ],
        [1, 1, 1],
    );
    assert!(matches!(
        in_place,
        Err(Error::Kernel(KernelError::ReadOnly { index: 1 }))
    ));
    // A read-only output is the kernel's to refuse.
    let read_only = run(
        &mut dev,
        &[BufferRef::buffer(output), BufferRef::buffer(input)],
        [1, 1, 1],
    );
    assert!(matches!(
        read_only,
        Err(Error::Kernel(KernelError::ReadOnly { index: 1 }))
    ));
    // Only the binding the kernel declares is writable, however the buffers allow.
    let scratch = dev
        .allocate_buffer(BufferParams::host_visible(), 64)
        .unwrap();
    let undeclared = run_kernel(
        &mut dev,
        "write_input",
        &[BufferRef::buffer(scratch), BufferRef::buffer(output)],
        [1, 1, 1],
    );
    assert!(matches!(
        undeclared,
        Err(Error::Kernel(KernelError::ReadOnly { index: 0 }))
    ));
    dev.release_buffer(scratch).unwrap();
    // Elements need their alignment.
    let misaligned = run(
        &mut dev,
        &[
            BufferRef::buffer(input).at(2, 16),
            BufferRef::buffer(output),
        ],
        [1, 1, 1],
    );
    assert!(matches!(
        misaligned,
        Err(Error::Kernel(KernelError::Misaligned { index: 0, .. }))
    ));
    dev.release_buffer(output).unwrap();
    dev.release_buffer(input).unwrap();
}

/// Output rows cut into tiles cover every row once, inline and on a worker pool.
#[test]
fn tiles_cover_every_row() {
    let workers: &[usize] = if cfg!(feature = "threads") && !cfg!(miri) {
        &[1, 3]
    } else {
        &[1]
    };
    for &workers in workers {
        let mut storage: Box<LocalStorage> = Box::new(LocalStorage::EMPTY);
        let mut memory = vec![0u8; 64 * 1024];
        let config = LocalConfig {
            kernels: &KERNELS,
            workers,
            ..LocalConfig::default()
        };
        let mut dev = LocalDevice::new(&mut storage, &mut memory, config).unwrap();
        let rows = 23;
        let output = dev
            .allocate_buffer(BufferParams::host_visible(), rows * 7 * 4)
            .unwrap();
        run_kernel(
            &mut dev,
            "rows_i32",
            &[BufferRef::buffer(output), BufferRef::buffer(output)].map(|r| r.at(0, rows * 7 * 4)),
            [1, 1, 1],
        )
        .expect_err("the output overlaps binding 0: read-only");
        let input = dev
            .allocate_buffer(BufferParams::host_visible(), 4)
            .unwrap();
        run_kernel(
            &mut dev,
            "rows_i32",
            &[BufferRef::buffer(input), BufferRef::buffer(output)],
            [1, 1, 1],
        )
        .unwrap();
        let mut out = vec![0u8; (rows * 7 * 4) as usize];
        dev.read_buffer(BufferSpan::whole(output), &mut out)
            .unwrap();
        let got: Vec<i32> = out
            .chunks_exact(4)
            .map(|w| i32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let want: Vec<i32> = (0..rows as i32)
            .flat_map(|r| (0..7).map(move |c| r * 1000 + c))
            .collect();
        assert_eq!(got, want, "{workers} worker(s)");
        dev.release_buffer(input).unwrap();
        dev.release_buffer(output).unwrap();
    }
}
