//! Whether this process has the address space for more threads (`ulimit -v`). A thread
//! whose creation fails is an error the run reports; but a thread that starts and then
//! cannot map its signal stack makes std abort the whole process (no clean-up, no
//! run.json). So a run that starts many workers asks here first. Not: the other limits
//! (`ulimit -u`), whose failures come back from thread creation as errors.

use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};

/// std's stack for a spawned thread unless RUST_MIN_STACK says otherwise.
const DEFAULT_STACK: u64 = 2 << 20;
/// A thread's signal stack and guard pages, with room to spare.
const PER_THREAD_EXTRA: u64 = 128 << 10;
/// Left free beyond the threads, for what the run allocates meanwhile.
const SLACK: u64 = 64 << 20;

/// The address space `threads` new threads take, about.
fn needed(threads: u64) -> u64 {
    let stack = std::env::var("RUST_MIN_STACK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_STACK);
    threads.saturating_mul(stack + PER_THREAD_EXTRA)
}

/// Ok when `need` bytes more fit between `used` and `limit` (None: no limit), with slack;
/// else why not, in one line a user can act on.
fn fits(threads: u64, need: u64, used: u64, limit: Option<u64>) -> Result<(), String> {
    let Some(limit) = limit else { return Ok(()) };
    let left = limit.saturating_sub(used);
    if need.saturating_add(SLACK) <= left {
        return Ok(());
    }
    Err(format!(
        "cannot start worker threads: {threads} need about {} MiB of address space and {} MiB is left under the limit (ulimit -v); run fewer at once (--threads, --streams, --iodepth), or raise the limit",
        need >> 20,
        left >> 20
    ))
}

/// Whether `threads` more threads fit under this process's address-space limit.
pub fn check(threads: usize) -> Result<(), String> {
    let limit = match getrlimit(Resource::RLIMIT_AS) {
        Ok((soft, _)) if soft != RLIM_INFINITY => Some(soft),
        _ => None,
    };
    if limit.is_none() {
        return Ok(());
    }
    // /proc/self/statm: the first field is the address space in use, in pages.
    let used = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|pages| pages * page_size())
        .unwrap_or(0);
    fits(threads as u64, needed(threads as u64), used, limit)
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_fit_or_the_reason_says_what_to_change() {
        let gib = 1u64 << 30;
        assert!(fits(1024, 2 * gib, 0, None).is_ok(), "no limit");
        assert!(fits(4, 9 << 20, 100 << 20, Some(gib)).is_ok());
        let e = fits(
            1024,
            2 * gib + (100 << 20),
            200 << 20,
            Some(2_000_000 << 10),
        )
        .unwrap_err();
        assert!(
            e.starts_with("cannot start worker threads: 1024 need about 2148 MiB"),
            "{e}"
        );
        assert!(
            e.contains("1753 MiB is left") && e.contains("ulimit -v"),
            "{e}"
        );
        // Exactly the slack short: refused.
        assert!(fits(1, gib - SLACK + 1, 0, Some(gib)).is_err());
        assert!(fits(1, gib - SLACK, 0, Some(gib)).is_ok());
        assert_eq!(needed(0), 0);
    }
}
