//! `say!`: one log line. defmt frames over semihosting on the QEMU boards (the host decodes
//! them with `defmt-print`), `println!` on the host board. Format strings use `{}` only, so
//! both back ends take them.

#[cfg(feature = "semihosting")]
macro_rules! say {
    ($($arg:tt)*) => { ::defmt::println!($($arg)*) };
}

#[cfg(all(feature = "std", not(feature = "semihosting")))]
macro_rules! say {
    ($($arg:tt)*) => { ::std::println!($($arg)*) };
}

/// A build with neither back end logs nothing (the arguments are still type-checked).
#[cfg(not(any(feature = "std", feature = "semihosting")))]
macro_rules! say {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{ $(let _ = &$arg;)* }};
}
