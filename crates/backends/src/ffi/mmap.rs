//! Memory mapping of a posix file for mmap mode (IOzone -B), through memmap2.

use sharebench_core::backend::Mapping;
use std::fs::File;
use std::io;

/// A shared mapping: writable for write operations, read-only for reads (a file opened
/// O_RDONLY cannot be mapped writable).
pub enum FileMapping {
    ReadOnly(memmap2::Mmap),
    Writable(memmap2::MmapMut),
}

impl FileMapping {
    /// Maps the first `len` bytes of `file`.
    pub fn new(file: &File, len: u64, writable: bool) -> io::Result<FileMapping> {
        let mut opts = memmap2::MmapOptions::new();
        opts.len(len as usize);
        // SAFETY: the mapping is of a file this process created in its own working
        // directory; no other code truncates it while mapped (the workload unmaps before
        // close), so accesses stay within the mapped length and never fault on a hole.
        Ok(unsafe {
            if writable {
                FileMapping::Writable(opts.map_mut(file)?)
            } else {
                FileMapping::ReadOnly(opts.map(file)?)
            }
        })
    }

    fn bytes(&self) -> &[u8] {
        match self {
            FileMapping::ReadOnly(m) => m,
            FileMapping::Writable(m) => m,
        }
    }
}

impl Mapping for FileMapping {
    fn read_at(&self, buf: &mut [u8], offset: u64) {
        let o = offset as usize;
        buf.copy_from_slice(&self.bytes()[o..o + buf.len()]);
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) {
        if let FileMapping::Writable(m) = self {
            let o = offset as usize;
            m[o..o + buf.len()].copy_from_slice(buf);
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            FileMapping::Writable(m) => m.flush(),
            FileMapping::ReadOnly(_) => Ok(()),
        }
    }
}
