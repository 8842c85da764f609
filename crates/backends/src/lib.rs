//! sharebench-backends: the concrete targets behind `sharebench_core::backend::Backend`.
//! `posix` serves any directory (local disk, tmpfs, a kernel or FUSE mount); `null://`
//! discards writes and reads zeros, to measure the tool's own overhead. Native NFS and SMB
//! clients join here as modules of their own. Not: workloads or measurement logic.

#![deny(unsafe_code)]

pub mod ffi;
pub mod mountinfo;
pub mod null;
pub mod posix;

use sharebench_core::backend::Backend;
use std::path::Path;
use std::sync::Arc;

/// Opens a target named as on the command line: `null://`, a directory path, or
/// `file:///path`. Errors are one line for the user.
pub fn open_target(spec: &str) -> Result<Arc<dyn Backend>, String> {
    if spec == "null://" || spec == "null:" || spec == "null" {
        return Ok(Arc::new(null::NullBackend));
    }
    if let Some((scheme, _)) = spec.split_once("://") {
        return match scheme {
            "file" => open_dir(&spec["file://".len()..]),
            "nfs" | "smb" => Err(format!(
                "target '{spec}': the native {scheme} client is not built yet; mount the share and give its directory"
            )),
            _ => Err(format!("target '{spec}': unknown scheme '{scheme}://' (known: null://, file://, or a directory)")),
        };
    }
    open_dir(spec)
}

fn open_dir(path: &str) -> Result<Arc<dyn Backend>, String> {
    posix::PosixBackend::new(Path::new(path)).map(|b| Arc::new(b) as Arc<dyn Backend>)
}
