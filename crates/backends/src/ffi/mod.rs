//! The only code in this crate that needs `unsafe`: thin wrappers, each unsafe block with
//! its SAFETY argument. `uring` hands io_uring its buffers; `malloc` tunes glibc's
//! allocator; `libnfs` (with its calls by handle: NFSv3's in `libnfs_handles`, NFSv4.0's
//! COMPOUNDs in `libnfs_compound`), `smbclient` and `gfapi` are hand-written declarations of
//! the C libraries' APIs (no bindgen, no libclang) with safe wrappers on top.

#[allow(unsafe_code)]
pub mod fiemap;
#[cfg(feature = "gluster")]
#[allow(unsafe_code)]
pub mod gfapi;
#[cfg(feature = "gluster")]
#[allow(unsafe_code)]
pub mod gfapi_objects;
#[cfg(feature = "nfs")]
#[allow(unsafe_code)]
pub mod libnfs;
#[cfg(feature = "nfs")]
#[allow(unsafe_code)]
pub mod libnfs_async;
#[cfg(feature = "nfs")]
#[allow(unsafe_code)]
pub mod libnfs_compound;
#[cfg(feature = "nfs")]
#[allow(unsafe_code)]
pub mod libnfs_handles;
#[allow(unsafe_code)]
pub mod malloc;
#[allow(unsafe_code)]
pub mod mmap;
#[cfg(feature = "smb")]
#[allow(unsafe_code)]
pub mod smbclient;
#[allow(unsafe_code)]
pub mod uring;

/// Nanoseconds since the epoch as a C `timeval` (microseconds, rounded down), for the C
/// libraries' utimes calls.
#[cfg(any(feature = "nfs", feature = "smb"))]
pub fn timeval(ns: i128) -> libc::timeval {
    let us = ns.div_euclid(1000);
    libc::timeval {
        tv_sec: us.div_euclid(1_000_000) as libc::time_t,
        tv_usec: us.rem_euclid(1_000_000) as libc::suseconds_t,
    }
}

#[cfg(all(test, any(feature = "nfs", feature = "smb")))]
mod tests {
    #[test]
    fn timevals_round_down() {
        let t = super::timeval(1_500_000_123_456_789);
        assert_eq!((t.tv_sec, t.tv_usec), (1_500_000, 123_456));
        let t = super::timeval(-1);
        assert_eq!((t.tv_sec, t.tv_usec), (-1, 999_999));
    }
}
