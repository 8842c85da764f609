//! Signals handled on a thread with a file table of its own.
//!
//! A thread that shares the process's file table makes every data call of the measuring
//! thread dearer: with the table shared, the kernel takes a reference on the file for each
//! `read` or `write` and drops it after, and locks the file position of every `read` and
//! `write` through a cursor (a few per cent of a 4 KiB tmpfs read, which single-threaded
//! IOzone never pays: docs/measurements.md). So the thread that waits for the signals
//! blocks every signal, takes a copy of the table (`unshare(CLONE_FILES)`) and closes every
//! descriptor in it but the standard streams and its end of the self-pipe: the measuring
//! thread's table is its own again, and no file the rest of the process closes stays open
//! in the copy. Where that cannot be done in full the thread keeps the shared table (dearer
//! calls, nothing else changed). Not: what a signal does (the caller's `on_signal`).

use nix::sched::{unshare, CloneFlags};
use nix::sys::signal::{SigSet, Signal};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

/// Starts the thread, and returns once its table is its own: from then on each of
/// `signals` calls `on_signal` there (signals that arrive together may call it once), with
/// only the standard streams open: it may print and exit, not use the process's other
/// descriptors. On an error nothing stays registered. Call it once per set of signals.
pub fn spawn(signals: &[Signal], mut on_signal: impl FnMut() + Send + 'static) -> io::Result<()> {
    let (mut wake, waker) = UnixStream::pair()?;
    let (ready, set_up) = mpsc::channel();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            own_table(wake.as_raw_fd());
            let _ = ready.send(());
            let mut bytes = [0u8; 16];
            loop {
                match wake.read(&mut bytes) {
                    // Every write end gone: the registrations failed and were undone.
                    Ok(0) => return,
                    Ok(_) => on_signal(),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        })?;
    // The thread blocks every signal before anything else, so the handler (which writes to
    // the write end, a descriptor of the process's table) never runs there.
    let _ = set_up.recv();
    let mut registered = Vec::new();
    for &s in signals {
        let id = waker
            .try_clone()
            .and_then(|w| signal_hook::low_level::pipe::register(s as i32, w));
        match id {
            Ok(id) => registered.push(id),
            Err(e) => {
                for id in registered {
                    signal_hook::low_level::unregister(id);
                }
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Blocks every signal on the calling thread and gives it a table of its own holding only
/// the standard streams and `keep`; where a step fails, the table stays shared.
fn own_table(keep: RawFd) {
    if SigSet::all().thread_block().is_err() {
        return;
    }
    // Opened before the unshare so that a missing /proc or a full table leaves it shared;
    // read after it, when /proc/thread-self lists the thread's own table.
    let Ok(listing) = std::fs::read_dir("/proc/thread-self/fd") else {
        return;
    };
    if unshare(CloneFlags::CLONE_FILES).is_err() {
        return;
    }
    let mut open = Vec::new();
    for entry in listing {
        let fd = entry
            .ok()
            .and_then(|e| e.file_name().to_str()?.parse::<RawFd>().ok());
        match fd {
            Some(fd) => open.push(fd),
            // A listing cut short: every descriptor up to the limit instead.
            None => {
                open = (3..open_limit()).collect();
                break;
            }
        }
    }
    // The listing's own descriptor is closed by now; closing its number again fails harmlessly.
    for fd in open.into_iter().filter(|&fd| fd > 2 && fd != keep) {
        let _ = nix::unistd::close(fd);
    }
}

/// The highest descriptor number the process may hold, plus one.
fn open_limit() -> RawFd {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map(|(soft, _)| soft.min(1 << 20) as RawFd)
        .unwrap_or(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::time::Duration;

    fn fds_of(tid: &str) -> BTreeSet<RawFd> {
        std::fs::read_dir(format!("/proc/self/task/{tid}/fd"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// This process's thread named `name` (the test starts one).
    fn thread_named(name: &str) -> String {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .find(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name)
            })
            .map(|t| t.file_name().to_string_lossy().into_owned())
            .unwrap_or_else(|| panic!("no thread {name}"))
    }

    /// SIGUSR1, not the signals the binary answers: the test binary keeps its own answers
    /// to Ctrl-C and SIGTERM.
    #[test]
    fn the_thread_has_a_table_of_its_own_and_answers_the_signal() {
        let before = std::fs::File::open("/proc/self/status").unwrap();
        let (tx, rx) = mpsc::channel();
        spawn(&[Signal::SIGUSR1], move || {
            let _ = tx.send(());
        })
        .unwrap();
        let tid = thread_named("signals");
        let after = std::fs::File::open("/proc/self/status").unwrap();
        let (theirs, ours) = (fds_of(&tid), fds_of(&std::process::id().to_string()));
        // The standard streams and the self-pipe's read end, nothing of the process's.
        assert_eq!(theirs.iter().filter(|&&fd| fd > 2).count(), 1, "{theirs:?}");
        for f in [&before, &after] {
            assert!(!theirs.contains(&f.as_raw_fd()) && ours.contains(&f.as_raw_fd()));
        }
        // The handler runs on a thread of the shared table and wakes the signal thread.
        nix::sys::signal::raise(Signal::SIGUSR1).unwrap();
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the signal reached the thread");
    }
}
