//! sharebench-backends: the concrete targets behind `sharebench_core::backend::Backend`.
//! `posix` serves any directory (local disk, tmpfs, a kernel or FUSE mount); `null://`
//! discards writes and reads zeros, to measure the tool's own overhead. `nfs://` (libnfs for
//! NFSv3 and NFSv4.0, feature `nfs`; nfs-rs for NFSv4.1, feature `nfs41`), `smb://` (the
//! smb2 crate, feature `smb2`; libsmbclient with `?client=libsmbclient`, feature `smb`) and
//! `gluster://` (libgfapi, feature `gluster`) are native clients for hosts without kernel
//! NFS/CIFS clients; all obey `netguard` (loopback only, unless in a lab network namespace).
//! Not: workloads or measurement logic.

#![deny(unsafe_code)]

#[macro_use]
mod cursor;
pub mod client_cache;
pub mod ffi;
#[cfg(feature = "gluster")]
pub mod gluster;
mod held_dirs;
#[cfg(any(feature = "nfs41", feature = "smb2"))]
mod inflight;
pub mod mountinfo;
pub mod netguard;
#[cfg(feature = "nfs")]
pub mod nfs;
#[cfg(feature = "nfs41")]
pub mod nfs41;
#[cfg(feature = "nfs")]
mod nfs_tree;
pub mod nfsurl;
pub mod null;
pub mod posix;
pub mod remount;
#[cfg(feature = "smb")]
pub mod smb;
#[cfg(feature = "smb2")]
pub mod smb_rust;
pub mod smburl;

use sharebench_core::backend::Backend;
use std::path::Path;
use std::sync::Arc;

/// Opens a target named as on the command line: `null://`, a directory path,
/// `file:///path`, `nfs://host[:port]/export?version=3` (`version=4.1`: the NFSv4.1 client),
/// `smb://user@host[:port]/share` or `gluster://host[:port]/volume[/dir]` (libgfapi).
/// Errors are one line for the user.
pub fn open_target(spec: &str) -> Result<Arc<dyn Backend>, String> {
    if spec == "null://" || spec == "null:" || spec == "null" {
        return Ok(Arc::new(null::NullBackend));
    }
    if let Some((scheme, _)) = spec.split_once("://") {
        return match scheme {
            "file" => open_dir(&spec["file://".len()..]),
            "nfs" => open_nfs(spec),
            "smb" => open_smb(spec),
            "gluster" => open_gluster(spec),
            _ => Err(format!("target '{spec}': unknown scheme '{scheme}://' (known: null://, file://, nfs://, smb://, gluster://, or a directory)")),
        };
    }
    open_dir(spec)
}

/// `nfs://`: the version picks the client (NFSv4.1 and 4.2: nfs-rs; NFSv3 and NFSv4.0:
/// libnfs).
fn open_nfs(spec: &str) -> Result<Arc<dyn Backend>, String> {
    if nfsurl::parse(spec)?.version.through_nfs_rs() {
        open_nfs41(spec)
    } else {
        open_libnfs(spec)
    }
}

#[cfg(feature = "nfs")]
fn open_libnfs(spec: &str) -> Result<Arc<dyn Backend>, String> {
    nfs::NfsBackend::new(spec).map(|b| Arc::new(b) as Arc<dyn Backend>)
}

#[cfg(not(feature = "nfs"))]
fn open_libnfs(spec: &str) -> Result<Arc<dyn Backend>, String> {
    Err(format!(
        "target '{spec}': this build has no native NFSv3/NFSv4.0 client (build sharebench-backends with feature 'nfs')"
    ))
}

#[cfg(feature = "nfs41")]
fn open_nfs41(spec: &str) -> Result<Arc<dyn Backend>, String> {
    nfs41::Nfs41Backend::new(spec).map(|b| Arc::new(b) as Arc<dyn Backend>)
}

#[cfg(not(feature = "nfs41"))]
fn open_nfs41(spec: &str) -> Result<Arc<dyn Backend>, String> {
    Err(format!(
        "target '{spec}': this build has no native NFSv4.1/4.2 client (build sharebench-backends with feature 'nfs41')"
    ))
}

#[cfg(feature = "gluster")]
fn open_gluster(spec: &str) -> Result<Arc<dyn Backend>, String> {
    gluster::GlusterBackend::new(spec).map(|b| Arc::new(b) as Arc<dyn Backend>)
}

#[cfg(not(feature = "gluster"))]
fn open_gluster(spec: &str) -> Result<Arc<dyn Backend>, String> {
    Err(format!(
        "target '{spec}': this build has no native GlusterFS client (build sharebench-backends with feature 'gluster')"
    ))
}

/// `smb://`: the pure-Rust smb2 client, or libsmbclient with `?client=libsmbclient`.
fn open_smb(spec: &str) -> Result<Arc<dyn Backend>, String> {
    match smburl::parse(spec)?.client {
        smburl::Client::Smb2 => open_smb_rust(spec),
        smburl::Client::Libsmbclient => open_libsmbclient(spec),
    }
}

#[cfg(feature = "smb")]
fn open_libsmbclient(spec: &str) -> Result<Arc<dyn Backend>, String> {
    smb::SmbBackend::new(spec).map(|b| Arc::new(b) as Arc<dyn Backend>)
}

#[cfg(not(feature = "smb"))]
fn open_libsmbclient(spec: &str) -> Result<Arc<dyn Backend>, String> {
    Err(format!(
        "target '{spec}': this build has no libsmbclient client (build sharebench-backends with feature 'smb')"
    ))
}

#[cfg(feature = "smb2")]
fn open_smb_rust(spec: &str) -> Result<Arc<dyn Backend>, String> {
    smb_rust::SmbRustBackend::new(spec).map(|b| Arc::new(b) as Arc<dyn Backend>)
}

#[cfg(not(feature = "smb2"))]
fn open_smb_rust(spec: &str) -> Result<Arc<dyn Backend>, String> {
    Err(format!(
        "target '{spec}': this build has no pure-Rust SMB client (build sharebench-backends with feature 'smb2')"
    ))
}

/// POSIX open(2) flags for `how`, as the C client libraries take them (O_DIRECT has no
/// meaning for them and is left out).
#[cfg(any(feature = "nfs", feature = "smb", feature = "gluster"))]
pub(crate) fn open_flags(how: sharebench_core::backend::OpenOptions) -> libc::c_int {
    let mut flags = match (how.read, how.write) {
        (_, false) => libc::O_RDONLY,
        (false, true) => libc::O_WRONLY,
        (true, true) => libc::O_RDWR,
    };
    if how.create {
        flags |= libc::O_CREAT;
    }
    if how.truncate {
        flags |= libc::O_TRUNC;
    }
    if how.sync {
        flags |= libc::O_SYNC;
    }
    flags
}

fn open_dir(path: &str) -> Result<Arc<dyn Backend>, String> {
    posix::PosixBackend::new(Path::new(path)).map(|b| Arc::new(b) as Arc<dyn Backend>)
}
