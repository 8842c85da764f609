//! The one interface every target kind implements, the way fio's engines fill one
//! `ioengine_ops` table. Workloads are written against these traits only; a backend that
//! cannot do an operation returns `ErrorKind::Unsupported`. Paths are relative to the
//! backend's root, with `/` separators, so a native NFS or SMB client slots in unchanged.

use std::io::{self, IoSlice, IoSliceMut};

/// How to open a file. `create` with `truncate` makes a new, empty file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenOptions {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    pub truncate: bool,
    /// Bypass the client cache (O_DIRECT); buffers and offsets are then 4 KiB aligned.
    pub direct: bool,
    /// Every write is stable before it returns (O_SYNC).
    pub sync: bool,
}

impl OpenOptions {
    pub fn read_only() -> Self {
        OpenOptions {
            read: true,
            ..Default::default()
        }
    }
    pub fn read_write() -> Self {
        OpenOptions {
            read: true,
            write: true,
            ..Default::default()
        }
    }
    pub fn create_new() -> Self {
        OpenOptions {
            read: true,
            write: true,
            create: true,
            truncate: true,
            ..Default::default()
        }
    }
}

/// What `stat` reports, in the units every protocol has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    pub is_dir: bool,
    pub is_symlink: bool,
    pub mode: u32,
    pub nlink: u64,
    pub mtime_ns: i128,
}

/// One directory entry (`.` and `..` are never listed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub is_dir: bool,
}

/// What `statfs` reports: capacity and free space, and the file system's name when known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsStat {
    pub block_size: u64,
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub total_files: u64,
    pub free_files: u64,
    /// Mounted read-only (where the client can tell).
    pub read_only: bool,
}

/// How a cache purge was actually done, recorded next to the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purge {
    /// `sync; echo 3 > /proc/sys/vm/drop_caches` (needs root).
    DropCaches,
    /// posix_fadvise(POSIX_FADV_DONTNEED) on the file: what an unprivileged user can do.
    FadviseDontNeed,
    /// The file system was remounted.
    Remount,
    /// Nothing to purge (the backend keeps no cache).
    NotNeeded,
}

impl Purge {
    pub fn name(self) -> &'static str {
        match self {
            Purge::DropCaches => "drop_caches",
            Purge::FadviseDontNeed => "fadvise-dontneed",
            Purge::Remount => "remount",
            Purge::NotNeeded => "none-needed",
        }
    }
}

/// What the engine asks for before a cold measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PurgeRequest {
    /// drop_caches when allowed, else fadvise DONTNEED on the file.
    Drop,
    /// Remount the file system that holds the target.
    Remount,
}

/// Where the I/O goes, described for records and manifests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetInfo {
    /// The backend kind: `posix`, `null`, later `nfs`, `smb`.
    pub backend: String,
    /// The client path the bytes take: `kernel`, `fuse`, `tmpfs`, `none`, `libnfs`, ...
    pub client: String,
    /// The local directory, when there is one.
    pub local_root: Option<String>,
    /// File system type and mount options of the target, when known.
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_options: Option<String>,
}

/// A storage target: a root under which all paths live.
pub trait Backend: Send + Sync {
    fn info(&self) -> TargetInfo;
    /// False for a target that keeps nothing (`null://`): nothing to verify or clean up.
    fn stores_data(&self) -> bool {
        true
    }
    /// A warning for the start of a run when other users can rename or replace entries in
    /// the target's root (a directory anyone may write in without the sticky bit). `None`
    /// where they cannot, or where the backend cannot tell.
    fn shared_with_others(&self) -> Option<String> {
        None
    }
    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>>;
    fn stat(&self, path: &str) -> io::Result<FileStat>;
    /// Like `stat` but does not follow a final symlink.
    fn lstat(&self, path: &str) -> io::Result<FileStat>;
    fn truncate(&self, path: &str, len: u64) -> io::Result<()>;
    fn unlink(&self, path: &str) -> io::Result<()>;
    fn mkdir(&self, path: &str) -> io::Result<()>;
    fn rmdir(&self, path: &str) -> io::Result<()>;
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;
    fn link(&self, existing: &str, new: &str) -> io::Result<()>;
    fn symlink(&self, target: &str, link: &str) -> io::Result<()>;
    fn readlink(&self, path: &str) -> io::Result<String>;
    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>>;
    fn statfs(&self, path: &str) -> io::Result<FsStat>;
    /// Sets mode bits (Connectathon's setattr).
    fn chmod(&self, path: &str, mode: u32) -> io::Result<()>;
    /// Empties the caches that would serve `path` from memory, as well as the backend can.
    fn purge_cache(&self, path: &str, how: PurgeRequest) -> io::Result<Purge>;
    /// Checks, before any I/O, that purges of this kind can be done here without harm (a
    /// remount that would lose or release nothing); the error is one line for the user.
    /// Backends whose purges touch nothing but caches have nothing to check.
    fn check_purge(&self, _how: PurgeRequest) -> Result<(), String> {
        Ok(())
    }
    /// Sets access and modification times, in nanoseconds since the epoch (utimensat; what
    /// `rsync -a` does after writing a file). Unsupported by default.
    fn set_times(&self, _path: &str, _atime_ns: i128, _mtime_ns: i128) -> io::Result<()> {
        Err(unsupported("setting file times"))
    }
    /// Told, untimed, before a measurement in which `callers` threads call this target at
    /// once (the load workload's lanes): a client that opens a connection per concurrent
    /// caller on demand opens them now, so their set-up is not timed as the first requests'
    /// latency. Nothing to do for most.
    fn expect_callers(&self, _callers: usize) -> io::Result<()> {
        Ok(())
    }
    /// Checks, before any I/O, that this target's client can keep `depth` requests in
    /// flight per open file (`--iodepth`); the error is one line for the user. A client that
    /// waits for each reply before it sends the next request takes depth 1 only.
    fn check_iodepth(&self, depth: u32) -> Result<(), String> {
        if depth <= 1 {
            return Ok(());
        }
        Err(format!(
            "--iodepth {depth}: the {} client waits for each reply before it sends the next request, so it takes --iodepth 1 only",
            self.info().client
        ))
    }
    /// How the file's data lies on the device: the number of physically contiguous extents
    /// (FIEMAP, after syncing the file), as `filefrag` counts them. Unsupported by default
    /// (a network client sees no blocks).
    fn extents(&self, _path: &str) -> io::Result<u64> {
        Err(unsupported("FIEMAP (extent maps)"))
    }
}

/// An open file. Cursor calls (`read`, `write`, `seek`) and positional calls are both
/// provided because IOzone measures both families.
pub trait FileHandle: Send {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize>;
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    fn seek(&mut self, offset: u64) -> io::Result<()>;
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// Vectored read at `offset`; the default issues one `pread` per buffer.
    fn preadv(&mut self, bufs: &mut [IoSliceMut<'_>], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        for b in bufs.iter_mut() {
            let n = self.pread(b, offset + done as u64)?;
            done += n;
            if n < b.len() {
                break;
            }
        }
        Ok(done)
    }
    /// Vectored write at `offset`; the default issues one `pwrite` per buffer.
    fn pwritev(&mut self, bufs: &[IoSlice<'_>], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        for b in bufs {
            let n = self.pwrite(b, offset + done as u64)?;
            done += n;
            if n < b.len() {
                break;
            }
        }
        Ok(done)
    }
    fn fsync(&mut self) -> io::Result<()>;
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// Maps the first `len` bytes for mmap mode, writable or read-only (as the file was
    /// opened); unsupported by default.
    fn map(&mut self, _len: u64, _writable: bool) -> io::Result<Box<dyn Mapping>> {
        Err(unsupported("mmap"))
    }
    /// Reserves blocks for `len` bytes from `offset` without writing them (fallocate mode 0:
    /// the file grows to cover them). Unsupported by default.
    fn allocate(&mut self, _offset: u64, _len: u64) -> io::Result<()> {
        Err(unsupported("fallocate"))
    }
    /// A queue that keeps up to `depth` requests on this file in flight at once, each with
    /// a buffer of `slot_len` bytes (`--iodepth`). Unsupported by default: see
    /// `Backend::check_iodepth`.
    fn queue(&mut self, _depth: usize, _slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Err(unsupported(
            "keeping several requests in flight (--iodepth)",
        ))
    }
    /// Closes the file, reporting errors a plain drop would hide (NFS reports write errors here).
    fn close(self: Box<Self>) -> io::Result<()>;
}

/// One request of an [`IoQueue`]: `len` bytes at `offset`, written from or read into the
/// buffer of `slot`, in pieces of `piece` bytes when that is less than `len` (one vectored
/// call: preadv/pwritev's iovecs), else whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedIo {
    pub slot: usize,
    pub write: bool,
    pub offset: u64,
    pub len: usize,
    pub piece: usize,
}

/// Requests on one open file kept in flight together, as a kernel client's readahead and
/// write-behind or fio's `iodepth` do: io_uring for a directory, the asynchronous API of a
/// native client. A slot is a buffer that belongs to the queue, so a request's memory lives
/// as long as the request; dropping the queue waits for every request still in flight.
/// Not: ordering. Requests complete in whatever order the target answers.
pub trait IoQueue {
    /// How many requests can be in flight: the slots, numbered from 0.
    fn depth(&self) -> usize;
    /// The buffer of a slot that is not in flight: filled before a write, read after a read.
    fn buf(&mut self, slot: usize) -> &mut [u8];
    /// Issues a request on a free slot. It may wait in the queue until `complete` is called.
    fn submit(&mut self, io: QueuedIo) -> io::Result<()>;
    /// Waits for the next request to finish: its slot, and the bytes it moved or its error.
    /// An `Err` of the call itself means the queue is broken (no request can complete).
    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)>;
}

/// A memory-mapped file region (mmap mode).
pub trait Mapping: Send {
    fn read_at(&self, buf: &mut [u8], offset: u64);
    /// Copies `buf` in; a read-only mapping ignores it (the workload never writes one).
    fn write_at(&mut self, buf: &[u8], offset: u64);
    /// msync: make the written pages stable.
    fn flush(&mut self) -> io::Result<()>;
}

/// What every [`tampered`] error says, so that the engine knows one from its text too.
pub const TAMPERED: &str = "another user has changed sharebench's own directory in this target";

/// The error of an entry of the tool's own in a target that someone else replaced (a
/// directory swapped, a symlink planted where a directory of the tool's should be): going on
/// there is unsafe, so the engine stops the run ([`names_tampering`]).
pub fn tampered(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{what}: {TAMPERED}"),
    )
}

/// True when an error's text is that of [`tampered`].
pub fn names_tampering(why: &str) -> bool {
    why.contains(TAMPERED)
}

/// The error a backend returns for an operation it cannot do.
pub fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is not supported by this target"),
    )
}

/// Writes all of `buf` at `offset`, retrying short writes.
pub fn pwrite_all(f: &mut dyn FileHandle, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match f.pwrite(buf, offset)? {
            0 => return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0")),
            n => {
                buf = &buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Fills `buf` from `offset`, retrying short reads; returns bytes read (less at end of file).
pub fn pread_full(f: &mut dyn FileHandle, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.pread(&mut buf[done..], offset + done as u64)? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

/// Writes all of `buf` at the cursor, retrying short writes.
pub fn write_all(f: &mut dyn FileHandle, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match f.write(buf)? {
            0 => return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0")),
            n => buf = &buf[n..],
        }
    }
    Ok(())
}

/// Fills `buf` from the cursor, retrying short reads; returns bytes read.
pub fn read_full(f: &mut dyn FileHandle, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read(&mut buf[done..])? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}
