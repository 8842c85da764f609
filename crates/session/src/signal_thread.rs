//! Ctrl-C, SIGTERM and SIGHUP handled on a thread with a file table of its own.
//!
//! A thread that shares the process's file table makes every data call of the measuring
//! thread dearer: with the table shared, the kernel takes a reference on the file for each
//! `read` or `write` and drops it after, and locks the file position of every `read` and
//! `write` through a cursor (a few per cent of a 4 KiB tmpfs read, which single-threaded
//! IOzone never pays: docs/measurements.md). So the thread that waits for the signals gets
//! a copy of the table (`unshare(CLONE_FILES)`) and closes every descriptor in it but the
//! standard streams and its end of the self-pipe: the measuring thread's table is its own
//! again, and no file the rest of the process closes stays open in the copy. Not: what a
//! signal does (the caller's `on_signal`).

use nix::sched::{unshare, CloneFlags};
use nix::sys::signal::{SigSet, Signal};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// The signals the thread answers.
const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Starts the thread: from now on each of `SIGNALS` calls `on_signal` there (signals that
/// arrive together may call it once). Call it once per process.
pub fn spawn(mut on_signal: impl FnMut() + Send + 'static) -> io::Result<()> {
    let (mut wake, waker) = UnixStream::pair()?;
    for s in SIGNALS {
        // Each registration owns a descriptor of the write end; the handler runs in
        // whichever thread the kernel picks (never this one: it blocks them below), and that
        // thread's table is the process's, where the descriptor stays open.
        signal_hook::low_level::pipe::register(s as i32, waker.try_clone()?)?;
    }
    drop(waker);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut mask = SigSet::empty();
            SIGNALS.iter().for_each(|&s| mask.add(s));
            let _ = mask.thread_block();
            if unshare(CloneFlags::CLONE_FILES).is_ok() {
                close_all_but(&[0, 1, 2, wake.as_raw_fd()]);
            }
            let mut byte = [0u8; 16];
            loop {
                match wake.read(&mut byte) {
                    Ok(0) => return,
                    Ok(_) => on_signal(),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        })?;
    Ok(())
}

/// Closes every descriptor of the calling thread's (unshared) table but `keep`.
fn close_all_but(keep: &[i32]) {
    let open: Vec<i32> = match std::fs::read_dir("/proc/thread-self/fd") {
        Ok(dir) => dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => return,
    };
    // The listing's own descriptor is closed by now; closing it again fails harmlessly.
    for fd in open.into_iter().filter(|fd| !keep.contains(fd)) {
        let _ = nix::unistd::close(fd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::time::{Duration, Instant};

    fn fds_of(tid: &str) -> BTreeSet<i32> {
        std::fs::read_dir(format!("/proc/self/task/{tid}/fd"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// The task id of this process's thread named `name`, waiting up to a second for it.
    fn thread_named(name: &str) -> String {
        let start = Instant::now();
        loop {
            for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                if comm.trim() == name {
                    return t.file_name().to_string_lossy().into_owned();
                }
            }
            assert!(start.elapsed() < Duration::from_secs(1), "no thread {name}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn the_thread_keeps_a_table_of_its_own_with_nothing_of_the_process() {
        let before = std::fs::File::open("/proc/self/status").unwrap();
        spawn(|| {}).unwrap();
        let tid = thread_named("signals");
        // Give it the moment it needs to unshare and close.
        let start = Instant::now();
        while fds_of(&tid).contains(&before.as_raw_fd()) {
            assert!(
                start.elapsed() < Duration::from_secs(1),
                "{:?}",
                fds_of(&tid)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let after = std::fs::File::open("/proc/self/status").unwrap();
        let (theirs, ours) = (fds_of(&tid), fds_of(&std::process::id().to_string()));
        assert!(!theirs.contains(&after.as_raw_fd()), "{theirs:?}");
        assert!(ours.contains(&before.as_raw_fd()) && ours.contains(&after.as_raw_fd()));
        // The standard streams and the self-pipe's read end, nothing else.
        assert_eq!(theirs.iter().filter(|&&fd| fd > 2).count(), 1, "{theirs:?}");
    }
}
