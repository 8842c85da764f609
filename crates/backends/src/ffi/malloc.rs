//! glibc's allocator told to keep large freed blocks for reuse. Client libraries allocate
//! a buffer per request (the smb2 crate a 1 MiB message for each 1 MiB WRITE and READ,
//! libnfs a reply buffer); glibc serves blocks of 128 KiB and more with a fresh `mmap`
//! until its dynamic threshold has settled, so the first pass of a run faulted in every
//! page it moved: `run lab:smb -i write,read --file-sizes 64m --record-sizes 1m -n 3
//! --min-sample-time 0` read its first pass at 654 MiB/s with 51 ms of system CPU, and the
//! next two at 1,185 and 1,165 with 15 and 6 (2026-11-27; about 1 page fault per 4 KiB
//! moved in the first pass, from `perf record -e page-faults`). With the blocks kept, the
//! first pass reads like the others. The cost: memory freed by a run stays with the
//! process until it ends.
//! Not: a different allocator, or any setting but these two.

/// Blocks up to 32 MiB (glibc's largest heap-served size) come from the heap, and the heap
/// is not trimmed below 1 GiB of free memory. Call once, first thing in `main`.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of glibc's tuning parameters; it is called before any
    // other thread exists, and neither value can make an allocation fail or misbehave.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    /// Minor page faults of the calling thread so far.
    fn faults() -> i64 {
        // SAFETY: rusage is plain integers, for which all zeros is a valid value; getrusage
        // fills the one it is given.
        unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut u);
            u.ru_minflt
        }
    }

    /// A 1 MiB buffer, written all through and freed.
    fn touch_one_mib() {
        let v = std::hint::black_box(vec![7u8; 1 << 20]);
        drop(v);
    }

    #[test]
    fn a_freed_mebibyte_is_reused_without_faulting_its_pages_in_again() {
        super::keep_freed_memory();
        touch_one_mib(); // the heap grows to hold it once
        let before = faults();
        touch_one_mib();
        touch_one_mib();
        // Without the setting glibc maps a fresh 1 MiB block (or grows the heap again),
        // 256 faults each time.
        let took = faults() - before;
        assert!(took < 64, "{took} page faults for two reused 1 MiB buffers");
    }
}
