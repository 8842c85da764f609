//! The tool's own working directory on a target, marked as its own: `sharebench-<run id>/`
//! with a marker file inside that also names the process that made it (pid and start time)
//! and where its results go. Removal checks the marker first and refuses a directory
//! without it, so the benchmark never deletes anything it did not create; `abandoned` finds
//! those whose process is gone (killed), for `sharebench clean`.

use crate::backend::{Backend, OpenOptions};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
        let _uncut = Uncut::enter();
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
            // This run marked it as it made it: someone else has replaced it since.
            return Err(crate::backend::tampered(format!(
                "refusing to delete {}: its marker is missing or not this run's",
                self.path
            )));
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
    let _uncut = Uncut::enter();
    if backend.lstat(marker).is_ok() && marker.rsplit_once('/').map(|(d, _)| d) == Some(dir) {
        backend.unlink(marker)?;
    }
    backend.rmdir(dir)
}

/// How many working directories are between their `mkdir` and a written marker, or between
/// the marker's removal and their `rmdir`: cut there, a directory is left that no one can
/// prove is sharebench's, so `clean` would rightly refuse it.
static UNMARKED: AtomicUsize = AtomicUsize::new(0);

/// One of those steps, under way while it lives.
struct Uncut;

impl Uncut {
    fn enter() -> Uncut {
        UNMARKED.fetch_add(1, Ordering::SeqCst);
        Uncut
    }
}

impl Drop for Uncut {
    fn drop(&mut self) {
        UNMARKED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits, at most `limit` (a server may hang), until no working directory is half made or
/// half removed: for a process about to exit without clean-up (a second Ctrl-C), so that
/// what it leaves still carries its marker and `sharebench clean` can remove it.
pub fn wait_until_marked(limit: Duration) {
    let start = Instant::now();
    while UNMARKED.load(Ordering::SeqCst) > 0 && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LogFs;
    use std::sync::Arc;

    /// Runs `step` on a thread, with the call that makes the log `at` long stalled for
    /// `pause`, and returns once that call has begun.
    fn stalled(
        fs: &Arc<LogFs>,
        at: usize,
        pause: Duration,
        step: impl FnOnce(&LogFs) + Send + 'static,
    ) -> std::thread::JoinHandle<()> {
        *fs.stall.lock().unwrap() = Some((at, pause));
        let before = fs.log.lock().unwrap().len();
        let fs2 = fs.clone();
        let handle = std::thread::spawn(move || step(&fs2));
        while fs.log.lock().unwrap().len() < before + at {
            std::thread::sleep(Duration::from_millis(1));
        }
        handle
    }

    fn exists(fs: &LogFs, path: &str) -> bool {
        fs.nodes.lock().unwrap().contains_key(path)
    }

    #[test]
    fn an_exit_waits_until_a_new_directory_has_its_marker() {
        let fs = Arc::new(LogFs::default());
        // The marker's open, right after the mkdir, stalls.
        let maker = stalled(&fs, 2, Duration::from_millis(200), |fs| {
            Workdir::create(fs, "new").map(drop).unwrap()
        });
        assert!(!exists(&fs, "sharebench-new/.sharebench-workdir"));
        wait_until_marked(Duration::from_secs(30));
        assert!(exists(&fs, "sharebench-new/.sharebench-workdir"));
        maker.join().unwrap();
    }

    #[test]
    fn an_exit_waits_until_an_unmarked_directory_is_gone_but_not_forever() {
        let fs = Arc::new(LogFs::default());
        let wd = Workdir::create(&*fs, "old").unwrap();
        fs.take();
        // readdir, lstat and unlink of the marker, then rmdir, which stalls.
        let marker = wd.marker();
        let remover = stalled(&fs, 4, Duration::from_millis(200), move |fs| {
            remove_tree(fs, "sharebench-old", &marker).unwrap()
        });
        assert!(exists(&fs, "sharebench-old"));
        assert!(!exists(&fs, "sharebench-old/.sharebench-workdir"));
        wait_until_marked(Duration::from_secs(30));
        assert!(!exists(&fs, "sharebench-old"));
        remover.join().unwrap();

        // A server that hangs there: the exit goes ahead after the limit.
        let wd = Workdir::create(&*fs, "hung").unwrap();
        fs.take();
        let marker = wd.marker();
        let remover = stalled(&fs, 4, Duration::from_secs(2), move |fs| {
            remove_tree(fs, "sharebench-hung", &marker).unwrap()
        });
        wait_until_marked(Duration::from_millis(50));
        assert!(exists(&fs, "sharebench-hung"), "returned within its limit");
        remover.join().unwrap();
    }
}
