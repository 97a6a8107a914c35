//! `board_memory!`: the statics every board declares the same way.

#[doc(hidden)]
pub use static_cell as __static_cell;

/// Declares a board's memory in the board crate: `DEVICE_BYTES` and `device_memory()` (the
/// hal-local device's region, a static handed out once), and, with a `heap:` size,
/// `HEAP_BYTES` and `init_heap()` (the `embedded-alloc` heap, behind the board's `heap`
/// feature). Attributes before `device:` go on the region's static (a `link_section`, say).
///
/// ```ignore
/// ember_firmware::board_memory!(device: 8 * 1024, heap: 4 * 1024 * 1024);
/// ```
#[macro_export]
macro_rules! board_memory {
    ($(#[$device_attr:meta])* device: $device:expr $(, heap: $heap:expr)? $(,)?) => {
        /// Bytes of the hal-local device's memory region.
        pub const DEVICE_BYTES: usize = $device;
        $(#[$device_attr])*
        static DEVICE_MEMORY: $crate::board_memory::__static_cell::ConstStaticCell<
            [u8; DEVICE_BYTES],
        > = $crate::board_memory::__static_cell::ConstStaticCell::new([0; DEVICE_BYTES]);

        /// The device's memory region; `None` after the first call.
        pub fn device_memory() -> Option<&'static mut [u8]> {
            DEVICE_MEMORY.try_take().map(|m| m.as_mut_slice())
        }

        $(
            /// Bytes of the heap.
            #[cfg(feature = "heap")]
            pub const HEAP_BYTES: usize = $heap;
            #[cfg(feature = "heap")]
            static HEAP_MEMORY: $crate::board_memory::__static_cell::ConstStaticCell<
                [core::mem::MaybeUninit<u8>; HEAP_BYTES],
            > = $crate::board_memory::__static_cell::ConstStaticCell::new(
                [core::mem::MaybeUninit::uninit(); HEAP_BYTES],
            );

            /// Gives the heap its memory (once; later calls do nothing).
            pub fn init_heap() {
                #[cfg(feature = "heap")]
                if let Some(memory) = HEAP_MEMORY.try_take() {
                    $crate::heap::init(memory);
                }
            }
        )?
    };
}
