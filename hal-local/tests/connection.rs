//! Memory connections between local devices, and copies that take the path they give.

use hal_core::connection::{connection, copy_between};
use hal_core::memory::BufferParams;
use hal_core::{BufferSpan, Device, Error, MemoryConnection, MemoryDomain};
use hal_local::alloc::Tlsf;
use hal_local::{LocalConfig, LocalDevice, LocalStorage};

type Small = LocalStorage<8, 64, 32, 4>;

fn device<'m>(
    storage: &'m mut Small,
    memory: &'m mut [u8],
    domain: MemoryDomain,
) -> LocalDevice<'m, Tlsf<32>> {
    let config = LocalConfig {
        domain,
        max_allocation_size: 256,
        ..LocalConfig::default()
    };
    LocalDevice::new(storage, memory, config).unwrap()
}

fn copy_with(a_domain: MemoryDomain, b_domain: MemoryDomain) -> MemoryConnection {
    let (mut ma, mut mb) = ([0u8; 4096], [0u8; 4096]);
    let (mut sa, mut sb) = (Small::EMPTY, Small::EMPTY);
    let mut a = device(&mut sa, &mut ma, a_domain);
    let mut b = device(&mut sb, &mut mb, b_domain);
    // 1000 bytes: several 256-byte chunks on both sides, at offsets that do not line up.
    let src = a
        .allocate_buffer(BufferParams::host_visible(), 1000)
        .unwrap();
    let dst = b
        .allocate_buffer(BufferParams::host_visible(), 1100)
        .unwrap();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    a.write_buffer(BufferSpan::whole(src), &data).unwrap();
    let mut staging = [0u8; 96];
    let path = copy_between(
        &mut a,
        BufferSpan::new(src, 10, 900),
        &mut b,
        BufferSpan::new(dst, 77, 900),
        900,
        &mut staging,
    )
    .unwrap();
    assert_eq!(
        path,
        connection(&a, BufferSpan::whole(src), &b, BufferSpan::whole(dst)).unwrap()
    );
    let mut out = vec![0u8; 900];
    b.read_buffer(BufferSpan::new(dst, 77, 900), &mut out)
        .unwrap();
    assert_eq!(out, data[10..910]);
    a.release_buffer(src).unwrap();
    b.release_buffer(dst).unwrap();
    path
}

#[test]
fn every_path_moves_the_same_bytes() {
    use MemoryDomain::*;
    assert_eq!(copy_with(Host, Host), MemoryConnection::Unified);
    let gpu = Device { fabric: 1 };
    assert_eq!(copy_with(gpu, gpu), MemoryConnection::Migratable);
    assert_eq!(copy_with(Host, gpu), MemoryConnection::Migratable);
    assert_eq!(copy_with(gpu, Device { fabric: 2 }), MemoryConnection::None);
}

#[test]
fn staged_copies_need_staging_and_stay_in_bounds() {
    let (mut ma, mut mb) = ([0u8; 2048], [0u8; 2048]);
    let (mut sa, mut sb) = (Small::EMPTY, Small::EMPTY);
    let mut a = device(&mut sa, &mut ma, MemoryDomain::Device { fabric: 1 });
    let mut b = device(&mut sb, &mut mb, MemoryDomain::Device { fabric: 2 });
    let src = a.allocate_buffer(BufferParams::host_visible(), 64).unwrap();
    let dst = b.allocate_buffer(BufferParams::host_visible(), 64).unwrap();
    let (s, d) = (BufferSpan::whole(src), BufferSpan::whole(dst));
    assert_eq!(
        copy_between(&mut a, s, &mut b, d, 64, &mut []),
        Err(Error::InvalidArgument("staging buffer is empty"))
    );
    assert!(matches!(
        copy_between(&mut a, s, &mut b, d, 65, &mut [0; 8]),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        copy_between(
            &mut a,
            BufferSpan::new(src, 8, 64),
            &mut b,
            d,
            64,
            &mut [0; 8]
        ),
        Err(Error::OutOfRange { .. })
    ));
    a.release_buffer(src).unwrap();
    assert!(matches!(
        copy_between(&mut a, s, &mut b, d, 64, &mut [0; 8]),
        Err(Error::StaleHandle { .. })
    ));
}

#[test]
fn bad_configurations_are_refused() {
    let mut memory = [0u8; 1024];
    let config = |f: fn(&mut LocalConfig)| {
        let mut c = LocalConfig::default();
        f(&mut c);
        c
    };
    let mut storage = Small::EMPTY;
    assert!(LocalDevice::new(
        &mut storage,
        &mut memory,
        config(|c| c.transient_bytes = 1 << 20)
    )
    .is_err());
    let mut storage = Small::EMPTY;
    assert!(LocalDevice::new(
        &mut storage,
        &mut memory,
        config(|c| c.max_allocation_size = 8)
    )
    .is_err());
    let mut storage = Small::EMPTY;
    assert!(LocalDevice::new(&mut storage, &mut memory, config(|c| c.workers = 0)).is_err());
    #[cfg(not(feature = "threads"))]
    assert!(matches!(
        LocalDevice::new(&mut storage, &mut memory, config(|c| c.workers = 4)),
        Err(Error::Unsupported(_))
    ));
}
