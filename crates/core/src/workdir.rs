//! The tool's own working directory on a target, marked as its own: `sharebench-<run id>/`
//! with a marker file inside that also names the process that made it (pid and start time)
//! and where its results go. Removal checks the marker first and refuses a directory
//! without it, so the benchmark never deletes anything it did not create; `abandoned` finds
//! those whose process is gone (killed), for `sharebench clean`.

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
        Self::create_for(backend, run_id, None)
    }

    /// `create`, noting in the marker the results directory of the run.
    pub fn create_for(
        backend: &dyn Backend,
        run_id: &str,
        results: Option<&std::path::Path>,
    ) -> io::Result<Workdir> {
        let path = format!("sharebench-{run_id}");
        let me = Owner::this_process();
        let mut token = format!(
            "{TOKEN_START}{run_id}\npid {} {}\n",
            me.pid,
            me.start.unwrap_or(0)
        );
        if let Some(r) = results {
            token.push_str(&format!("results {}\n", r.display()));
        }
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

const TOKEN_START: &str = "sharebench working directory of run ";

/// The process that made a working directory: its pid, and its start time (clock ticks
/// after boot, /proc/PID/stat's 22nd field) so that a reused pid is not taken for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    pub start: Option<u64>,
}

impl Owner {
    fn this_process() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start: start_time(pid),
        }
    }

    /// Whether that process still runs (a pid alive without a known start time counts).
    pub fn is_alive(&self) -> bool {
        match (start_time(self.pid), self.start) {
            (None, _) => false,
            (Some(now), Some(then)) if then != 0 => now == then,
            (Some(_), _) => true,
        }
    }
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// A working directory found on a target, as its marker describes it.
#[derive(Debug, Clone)]
pub struct Found {
    pub workdir: Workdir,
    pub run_id: String,
    /// `None` in markers of versions before the owner was noted: then taken from the run id.
    pub owner: Option<Owner>,
    pub results: Option<String>,
}

impl Found {
    /// Whether its run has ended without removing it (its process is gone).
    pub fn is_abandoned(&self) -> bool {
        let owner = self.owner.clone().or_else(|| {
            // Run ids are `<UTC time>-<pid>[-n]`.
            let pid = self.run_id.split('-').nth(1)?.parse().ok()?;
            Some(Owner { pid, start: None })
        });
        owner.is_some_and(|o| !o.is_alive())
    }
}

/// Every working directory of sharebench's at the backend's root (those with a marker of
/// ours; anything else named `sharebench-*` is not listed, so never removed).
pub fn find(backend: &dyn Backend) -> io::Result<Vec<Found>> {
    let mut found = Vec::new();
    for e in backend.readdir("")? {
        if !e.is_dir || !e.name.starts_with("sharebench-") {
            continue;
        }
        let marker = format!("{}/{MARKER}", e.name);
        let Ok(mut f) = backend.open(&marker, OpenOptions::read_only()) else {
            continue;
        };
        let mut buf = vec![0u8; 4096];
        let n = crate::backend::read_full(f.as_mut(), &mut buf).unwrap_or(0);
        let _ = f.close();
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        let Some(first) = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix(TOKEN_START))
        else {
            continue;
        };
        let run_id = first.to_string();
        let mut owner = None;
        let mut results = None;
        for line in text.lines().skip(1) {
            if let Some(rest) = line.strip_prefix("pid ") {
                let mut it = rest.split(' ');
                let pid = it.next().and_then(|p| p.parse().ok());
                let start = it.next().and_then(|s| s.parse().ok());
                owner = pid.map(|pid| Owner { pid, start });
            } else if let Some(r) = line.strip_prefix("results ") {
                results = Some(r.to_string());
            }
        }
        found.push(Found {
            workdir: Workdir {
                path: e.name.clone(),
                token: text,
            },
            run_id,
            owner,
            results,
        });
    }
    Ok(found)
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
