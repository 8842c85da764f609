//! The tool's own working directory on a target, marked as its own: `sharebench-<run id>/`
//! with a marker file inside. Removal checks the marker first and refuses a directory
//! without it, so the benchmark never deletes anything it did not create.

use crate::backend::{Backend, OpenOptions};
use std::io;

pub const MARKER: &str = ".sharebench-workdir";

/// A working directory this run created on one backend.
#[derive(Debug, Clone)]
pub struct Workdir {
    pub path: String,
    token: String,
}

impl Workdir {
    /// Creates `sharebench-<run_id>` at the backend's root and marks it. Fails if it exists.
    pub fn create(backend: &dyn Backend, run_id: &str) -> io::Result<Workdir> {
        let path = format!("sharebench-{run_id}");
        let token = format!("sharebench working directory of run {run_id}\n");
        backend.mkdir(&path)?;
        let wd = Workdir { path, token };
        let mut f = backend.open(&wd.marker(), OpenOptions::create_new())?;
        crate::backend::write_all(f.as_mut(), wd.token.as_bytes())?;
        f.close()?;
        Ok(wd)
    }

    fn marker(&self) -> String {
        format!("{}/{MARKER}", self.path)
    }

    /// The path of a file inside the working directory.
    pub fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.path)
    }

    /// True when the marker holds this run's token.
    pub fn is_ours(&self, backend: &dyn Backend) -> bool {
        let Ok(mut f) = backend.open(&self.marker(), OpenOptions::read_only()) else {
            return false;
        };
        let mut buf = vec![0u8; self.token.len() + 1];
        let n = crate::backend::read_full(f.as_mut(), &mut buf).unwrap_or(0);
        let _ = f.close();
        buf[..n] == *self.token.as_bytes()
    }

    /// Deletes the working directory and everything in it, after checking the marker.
    pub fn remove(&self, backend: &dyn Backend) -> io::Result<()> {
        if !backend.stores_data() {
            return Ok(());
        }
        // A marker that cannot be read (the server is gone) is no proof of ownership.
        if let Err(e) = backend.stat(&self.marker()) {
            if e.kind() != io::ErrorKind::NotFound {
                let why = format!("cannot check the marker of {}, leaving it: {e}", self.path);
                return Err(io::Error::new(e.kind(), why));
            }
        }
        if !self.is_ours(backend) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "refusing to delete {}: its marker is missing or not this run's",
                    self.path
                ),
            ));
        }
        remove_tree(backend, &self.path, &self.marker())
    }
}

/// Removes the contents of `dir` (the marker last), then `dir`.
fn remove_tree(backend: &dyn Backend, dir: &str, marker: &str) -> io::Result<()> {
    for entry in backend.readdir(dir)? {
        let path = format!("{dir}/{}", entry.name);
        if path == marker {
            continue;
        }
        if entry.is_dir {
            remove_tree(backend, &path, marker)?;
        } else {
            backend.unlink(&path)?;
        }
    }
    if backend.lstat(marker).is_ok() && marker.rsplit_once('/').map(|(d, _)| d) == Some(dir) {
        backend.unlink(marker)?;
    }
    backend.rmdir(dir)
}
