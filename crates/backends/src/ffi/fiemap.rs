//! FIEMAP (`ioctl(FS_IOC_FIEMAP)`): how a file's data lies on the device, for the stream
//! workload's fragmentation figure. Counts physically contiguous runs the way `filefrag`
//! does: adjacent extents that continue each other logically and physically are one
//! (block-mapped ext3 files report runs cut at indirect-block boundaries).

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// `_IOWR('f', 11, struct fiemap)`, from linux/fs.h.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Sync the file before mapping it, so delayed allocation has happened.
const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;
const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
/// Extents fetched per ioctl.
const BATCH: usize = 512;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [FiemapExtent; BATCH],
}

/// Number of physically contiguous extents of `file` (0 for an empty or fully sparse file).
pub fn count_extents(file: &File) -> io::Result<u64> {
    let mut map = Box::new(Fiemap {
        fm_start: 0,
        fm_length: u64::MAX,
        fm_flags: FIEMAP_FLAG_SYNC,
        fm_mapped_extents: 0,
        fm_extent_count: BATCH as u32,
        fm_reserved: 0,
        fm_extents: [FiemapExtent::default(); BATCH],
    });
    let mut count = 0u64;
    // End of the previous run: (logical end, physical end).
    let mut prev: Option<(u64, u64)> = None;
    loop {
        map.fm_mapped_extents = 0;
        // SAFETY: `map` is a properly aligned, exclusively borrowed `struct fiemap` followed
        // by room for `fm_extent_count` (= BATCH) extents, exactly the layout the kernel
        // reads and fills; the file descriptor stays open for the call's duration.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                FS_IOC_FIEMAP,
                &mut *map as *mut Fiemap as *mut libc::c_void,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (map.fm_mapped_extents as usize).min(BATCH);
        if n == 0 {
            return Ok(count);
        }
        let mut last = false;
        for e in &map.fm_extents[..n] {
            let continues = prev.is_some_and(|(l, p)| l == e.fe_logical && p == e.fe_physical);
            if !continues {
                count += 1;
            }
            prev = Some((e.fe_logical + e.fe_length, e.fe_physical + e.fe_length));
            last |= e.fe_flags & FIEMAP_EXTENT_LAST != 0;
        }
        if last {
            return Ok(count);
        }
        let e = map.fm_extents[n - 1];
        map.fm_start = e.fe_logical + e.fe_length;
        map.fm_length = u64::MAX - map.fm_start;
        // Only the first call needs to sync.
        map.fm_flags = 0;
    }
}
