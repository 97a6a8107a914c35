//! Dispatches that fail when they run: a kernel that refuses its workgroups, or a binding it
//! may not write, fails the submission with an error, never a panic, and writes nothing.

use super::{
    alloc, dispatch, download, host_params, load, upload, upload_f32, values, with_device, Target,
};
use alloc::{vec, vec::Vec};
use hal_core::{
    BufferRef, BufferSpan, CommandBufferMode, Device, Error, Executable, Record, SemaphoreValue,
    StatusCode, Submit, Timeout, Workgroups,
};

/// A kernel that refuses its workgroups (missing constants or bindings, a binding too small
/// or misaligned) fails its submission with an error, never a panic, and writes nothing it
/// should not.
pub fn kernel_errors_fail_the_submission<T: Target>() {
    with_device::<T>(|dev| {
        let small = alloc(dev, 16);
        let out = upload(dev, &[0xEE; 256]);
        let fill = load::<T>(dev, "fill_u32");
        let matmul = load::<T>(dev, "matmul_f32");
        let add = load::<T>(dev, "add_f32");
        let cases: [(Executable, &[u32], Vec<BufferRef>, &str); 5] = [
            (
                fill,
                &[],
                vec![BufferRef::buffer(out)],
                "fill_u32 without its constant",
            ),
            (fill, &[1], vec![], "fill_u32 without its binding"),
            (
                matmul,
                &[8, 8, 8],
                vec![
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                    BufferRef::buffer(out),
                ],
                "matmul_f32 with bindings too small for 8x8x8",
            ),
            (
                matmul,
                &[0, 4, 4],
                vec![
                    BufferRef::buffer(small),
                    BufferRef::buffer(small),
                    BufferRef::buffer(out),
                ],
                "matmul_f32 with M = 0",
            ),
            (
                add,
                &[],
                vec![
                    BufferRef::buffer(out).at(2, 64),
                    BufferRef::buffer(out).at(2, 64),
                    BufferRef::buffer(out).at(130, 64),
                ],
                "add_f32 with misaligned bindings",
            ),
        ];
        for (executable, constants, bindings, what) in cases {
            let result = dispatch(dev, executable, [2, 1, 1], constants, &bindings);
            assert!(result.is_err(), "{what}: the submission must fail");
        }
        assert_eq!(
            download(dev, out, 0, 256)[..2],
            [0xEE, 0xEE],
            "nothing written before the first binding"
        );
        for executable in [fill, matmul, add] {
            dev.release_executable(executable).expect("release");
        }
        dev.release_buffer(small).expect("release");
        dev.release_buffer(out).expect("release");
    });
}

/// A dispatch cannot write a buffer made with READ access only: the kernel sees it
/// read-only and the submission fails, leaving the bytes as they were.
pub fn dispatch_respects_access<T: Target>() {
    with_device::<T>(|dev| {
        let x = values(64, 41);
        let input = upload_f32(dev, &x);
        let read_only = dev
            .allocate_buffer(
                hal_core::memory::BufferParams {
                    access: hal_core::memory::MemoryAccess::READ,
                    ..host_params()
                },
                256,
            )
            .expect("a READ-only buffer");
        let before = download(dev, read_only, 0, 256);
        let relu = load::<T>(dev, "relu_f32");
        let result = dispatch(
            dev,
            relu,
            [2, 1, 1],
            &[],
            &[BufferRef::buffer(input), BufferRef::buffer(read_only)],
        );
        let after = download(dev, read_only, 0, 256);
        // It can still be read by a kernel.
        let out = alloc(dev, 256);
        dispatch(
            dev,
            relu,
            [2, 1, 1],
            &[],
            &[BufferRef::buffer(read_only), BufferRef::buffer(out)],
        )
        .expect("a READ-only buffer as a kernel input");
        dev.release_executable(relu).expect("release");
        for buffer in [input, read_only, out] {
            dev.release_buffer(buffer).expect("release");
        }
        assert!(
            result.is_err(),
            "a dispatch writing a READ-only buffer must fail"
        );
        assert_eq!(after, before, "the READ-only buffer was written");
    });
}

/// A failure carries its kind: a kernel's refusal is [`Error::Kernel`] where it is reported,
/// and fails the submission's signals with [`StatusCode::InvalidArgument`], which work
/// waiting on them inherits as it is.
pub fn failures_carry_their_kind<T: Target>() {
    with_device::<T>(|dev| {
        let out = upload(dev, &[0xEE; 64]);
        let fill = load::<T>(dev, "fill_u32");
        let first = dev.create_semaphore(0).expect("semaphore");
        let second = dev.create_semaphore(0).expect("semaphore");
        let cb = dev
            .create_command_buffer(CommandBufferMode::OneShot, 4, 0)
            .expect("command buffer");
        let bindings = [BufferRef::buffer(out)];
        dev.record(
            cb,
            Record::Dispatch {
                executable: fill,
                workgroups: Workgroups::Direct([1, 1, 1]),
                constants: &[],
                bindings: &bindings,
            },
        )
        .expect("recorded (the kernel checks its constants when it runs)");
        dev.end(cb).expect("end");
        let signal = [SemaphoreValue::new(first, 1)];
        let result = dev.queue_execute(Submit::new(&[], &signal), cb, &[]);
        assert!(
            matches!(result, Ok(()) | Err(Error::Kernel(_))),
            "a refused dispatch: {result:?}"
        );
        let code = StatusCode::InvalidArgument as u32;
        assert_eq!(
            dev.wait_semaphores(&signal, Timeout::Infinite),
            Err(Error::SemaphoreFailed { code })
        );
        // Work waiting on the failed semaphore fails with the same status.
        let waits = [SemaphoreValue::new(first, 1)];
        let next = [SemaphoreValue::new(second, 1)];
        dev.queue_fill(Submit::new(&waits, &next), BufferSpan::whole(out), &[0])
            .expect("queued behind the failure");
        assert_eq!(
            dev.query_semaphore(second),
            Err(Error::SemaphoreFailed { code })
        );
        assert_eq!(download(dev, out, 0, 64), vec![0xEE; 64], "nothing written");
        dev.release_command_buffer(cb).expect("release");
        dev.release_executable(fill).expect("release");
        for s in [first, second] {
            dev.release_semaphore(s).expect("release");
        }
        dev.release_buffer(out).expect("release");
    });
}
