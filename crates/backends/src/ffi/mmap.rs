//! Memory mapping of a posix file for mmap mode (IOzone -B), through memmap2.

use sharebench_core::backend::Mapping;
use std::fs::File;
use std::io;

pub struct FileMapping {
    map: memmap2::MmapMut,
}

impl FileMapping {
    /// Maps the first `len` bytes of `file` (opened read-write) shared.
    pub fn new(file: &File, len: u64) -> io::Result<FileMapping> {
        // SAFETY: the mapping is of a file this process created in its own working
        // directory; no other code truncates it while mapped (the workload unmaps before
        // close), so accesses stay within the mapped length and never fault on a hole.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(len as usize)
                .map_mut(file)?
        };
        Ok(FileMapping { map })
    }
}

impl Mapping for FileMapping {
    fn read_at(&self, buf: &mut [u8], offset: u64) {
        let o = offset as usize;
        buf.copy_from_slice(&self.map[o..o + buf.len()]);
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) {
        let o = offset as usize;
        self.map[o..o + buf.len()].copy_from_slice(buf);
    }

    fn flush(&mut self) -> io::Result<()> {
        self.map.flush()
    }
}
