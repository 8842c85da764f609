//! `null://`: every write is discarded and every read returns zeros, like fio's null
//! engine. It measures the tool's own per-operation cost. It stores nothing, so `--verify`
//! is refused and there is nothing to clean up.

use sharebench_core::backend::{
    Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, Mapping, OpenOptions, Purge,
    PurgeRequest, QueuedIo, TargetInfo,
};
use std::collections::VecDeque;
use std::io::{self, IoSlice, IoSliceMut};

pub struct NullBackend;

impl Backend for NullBackend {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            backend: "null".into(),
            client: "none".into(),
            ..Default::default()
        }
    }
    fn stores_data(&self) -> bool {
        false
    }
    fn open(&self, _path: &str, _how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        Ok(Box::new(NullFile { pos: 0 }))
    }
    fn stat(&self, _path: &str) -> io::Result<FileStat> {
        Ok(FileStat::default())
    }
    fn lstat(&self, _path: &str) -> io::Result<FileStat> {
        Ok(FileStat::default())
    }
    fn truncate(&self, _path: &str, _len: u64) -> io::Result<()> {
        Ok(())
    }
    fn unlink(&self, _path: &str) -> io::Result<()> {
        Ok(())
    }
    fn mkdir(&self, _path: &str) -> io::Result<()> {
        Ok(())
    }
    fn rmdir(&self, _path: &str) -> io::Result<()> {
        Ok(())
    }
    fn rename(&self, _from: &str, _to: &str) -> io::Result<()> {
        Ok(())
    }
    fn link(&self, _existing: &str, _new: &str) -> io::Result<()> {
        Ok(())
    }
    fn symlink(&self, _target: &str, _link: &str) -> io::Result<()> {
        Ok(())
    }
    fn readlink(&self, _path: &str) -> io::Result<String> {
        Ok(String::new())
    }
    fn readdir(&self, _path: &str) -> io::Result<Vec<DirEntry>> {
        Ok(Vec::new())
    }
    fn statfs(&self, _path: &str) -> io::Result<FsStat> {
        Ok(FsStat {
            block_size: 4096,
            total_bytes: u64::MAX,
            free_bytes: u64::MAX,
            total_files: u64::MAX,
            free_files: u64::MAX,
            read_only: false,
        })
    }
    fn chmod(&self, _path: &str, _mode: u32) -> io::Result<()> {
        Ok(())
    }
    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        Ok(Purge::NotNeeded)
    }
    /// Any depth: requests complete in the order they were issued, with nothing to wait
    /// for, so a deep queue measures the tool's own cost of keeping one.
    fn check_iodepth(&self, _depth: u32) -> Result<(), String> {
        Ok(())
    }
    fn set_times(&self, _path: &str, _atime_ns: i128, _mtime_ns: i128) -> io::Result<()> {
        Ok(())
    }
}

struct NullFile {
    pos: u64,
}

impl FileHandle for NullFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        buf.fill(0);
        self.pos += buf.len() as u64;
        Ok(buf.len())
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pos += buf.len() as u64;
        Ok(buf.len())
    }
    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.pos = offset;
        Ok(())
    }
    fn pread(&mut self, buf: &mut [u8], _offset: u64) -> io::Result<usize> {
        buf.fill(0);
        Ok(buf.len())
    }
    fn pwrite(&mut self, buf: &[u8], _offset: u64) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn preadv(&mut self, bufs: &mut [IoSliceMut<'_>], _offset: u64) -> io::Result<usize> {
        Ok(bufs
            .iter_mut()
            .map(|b| {
                b.fill(0);
                b.len()
            })
            .sum())
    }
    fn pwritev(&mut self, bufs: &[IoSlice<'_>], _offset: u64) -> io::Result<usize> {
        Ok(bufs.iter().map(|b| b.len()).sum())
    }
    fn fsync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn set_len(&mut self, _len: u64) -> io::Result<()> {
        Ok(())
    }
    fn allocate(&mut self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    fn map(&mut self, _len: u64, _writable: bool) -> io::Result<Box<dyn Mapping>> {
        Ok(Box::new(NullMapping))
    }
    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(NullQueue {
            slots: vec![vec![0; slot_len]; depth],
            issued: VecDeque::new(),
        }))
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}

/// `null://`'s queue: a read fills its slot with zeros when it completes.
struct NullQueue {
    slots: Vec<Vec<u8>>,
    issued: VecDeque<QueuedIo>,
}

impl IoQueue for NullQueue {
    fn depth(&self) -> usize {
        self.slots.len()
    }
    fn buf(&mut self, slot: usize) -> &mut [u8] {
        &mut self.slots[slot]
    }
    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        self.issued.push_back(io);
        Ok(())
    }
    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        let io = self
            .issued
            .pop_front()
            .ok_or_else(|| io::Error::other("null://: no request in flight"))?;
        if !io.write {
            self.slots[io.slot][..io.len].fill(0);
        }
        Ok((io.slot, Ok(io.len)))
    }
}

struct NullMapping;

impl Mapping for NullMapping {
    fn read_at(&self, buf: &mut [u8], _offset: u64) {
        buf.fill(0);
    }
    fn write_at(&mut self, _buf: &[u8], _offset: u64) {}
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
