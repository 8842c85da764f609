//! Any directory through the kernel's system calls: local disks, tmpfs, loop-mounted images,
//! kernel and FUSE mounts. Paths are joined onto the root; nothing escapes it because the
//! workloads only name paths inside the tool's working directory.

use crate::mountinfo;
use crate::remount::Remount;
use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
use sharebench_core::backend::{
    Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, Mapping, OpenOptions, Purge,
    PurgeRequest, TargetInfo,
};
use std::fs::{self, File};
use std::io::{self, IoSlice, IoSliceMut, Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::{AsRawFd, IntoRawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub struct PosixBackend {
    root: PathBuf,
    mount: Option<mountinfo::Mount>,
    /// The remount that empties this file system's cache, once checked safe.
    remount: OnceLock<Result<Remount, String>>,
}

impl PosixBackend {
    /// A backend rooted at `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<PosixBackend, String> {
        let shown = root.display();
        let meta = fs::metadata(root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => format!("target '{shown}' does not exist"),
            _ => format!("target '{shown}': {e}"),
        })?;
        if !meta.is_dir() {
            return Err(format!("target '{shown}' is not a directory"));
        }
        let root = fs::canonicalize(root).map_err(|e| format!("target '{shown}': {e}"))?;
        let mount = mountinfo::lookup(&root);
        Ok(PosixBackend {
            root,
            mount,
            remount: OnceLock::new(),
        })
    }

    /// The checked remount of the file system holding the root (checked once).
    fn remount(&self) -> io::Result<&Remount> {
        self.remount
            .get_or_init(|| Remount::check(&self.root))
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// The client path a mount's bytes take.
fn client_of(fs_type: &str) -> &'static str {
    match fs_type {
        t if t.starts_with("fuse") => "fuse",
        "nfs" | "nfs4" => "kernel-nfs",
        "cifs" | "smb3" => "kernel-cifs",
        _ => "kernel",
    }
}

fn stat_of(m: &fs::Metadata) -> FileStat {
    FileStat {
        size: m.len(),
        is_dir: m.is_dir(),
        is_symlink: m.file_type().is_symlink(),
        mode: m.mode(),
        nlink: m.nlink(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    }
}

impl Backend for PosixBackend {
    fn info(&self) -> TargetInfo {
        let fs_type = self.mount.as_ref().map(|m| m.fs_type.clone());
        TargetInfo {
            backend: "posix".into(),
            client: client_of(fs_type.as_deref().unwrap_or("")).into(),
            local_root: Some(self.root.display().to_string()),
            fs_type,
            mount_point: self.mount.as_ref().map(|m| m.mount_point.clone()),
            mount_options: self.mount.as_ref().map(|m| m.options.clone()),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let mut flags = 0;
        if how.direct {
            flags |= libc::O_DIRECT;
        }
        if how.sync {
            flags |= libc::O_SYNC;
        }
        let file = fs::OpenOptions::new()
            .read(how.read)
            .write(how.write)
            .create(how.create)
            .truncate(how.truncate)
            .mode(0o640)
            .custom_flags(flags)
            .open(self.path(path))?;
        Ok(Box::new(PosixFile { file: Some(file) }))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        fs::metadata(self.path(path)).map(|m| stat_of(&m))
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        fs::symlink_metadata(self.path(path)).map(|m| stat_of(&m))
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        fs::OpenOptions::new()
            .write(true)
            .open(self.path(path))?
            .set_len(len)
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        fs::remove_file(self.path(path))
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        fs::create_dir(self.path(path))
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        fs::remove_dir(self.path(path))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.path(from), self.path(to))
    }

    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        fs::hard_link(self.path(existing), self.path(new))
    }

    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        std::os::unix::fs::symlink(target, self.path(link))
    }

    fn readlink(&self, path: &str) -> io::Result<String> {
        Ok(fs::read_link(self.path(path))?
            .to_string_lossy()
            .into_owned())
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        fs::read_dir(self.path(path))?
            .map(|e| {
                let e = e?;
                Ok(DirEntry {
                    name: e.file_name().to_string_lossy().into_owned(),
                    is_dir: e.file_type()?.is_dir(),
                })
            })
            .collect()
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        let s = nix::sys::statvfs::statvfs(&self.path(path))?;
        let frag = s.fragment_size() as u64;
        Ok(FsStat {
            block_size: frag,
            total_bytes: s.blocks() as u64 * frag,
            free_bytes: s.blocks_available() as u64 * frag,
            total_files: s.files() as u64,
            free_files: s.files_available() as u64,
        })
    }

    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        fs::set_permissions(self.path(path), fs::Permissions::from_mode(mode))
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let ts = |ns: i128| {
            nix::sys::time::TimeSpec::new(
                ns.div_euclid(1_000_000_000) as libc::time_t,
                ns.rem_euclid(1_000_000_000) as libc::c_long,
            )
        };
        nix::sys::stat::utimensat(
            nix::fcntl::AT_FDCWD,
            &self.path(path),
            &ts(atime_ns),
            &ts(mtime_ns),
            nix::sys::stat::UtimensatFlags::NoFollowSymlink,
        )
        .map_err(io::Error::from)
    }

    fn extents(&self, path: &str) -> io::Result<u64> {
        let file = File::open(self.path(path))?;
        crate::ffi::fiemap::count_extents(&file)
    }

    fn purge_cache(&self, path: &str, how: PurgeRequest) -> io::Result<Purge> {
        let full = self.path(path);
        match how {
            PurgeRequest::Drop => {
                let file = File::open(&full)?;
                file.sync_all()?;
                nix::unistd::sync();
                if fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok() {
                    return Ok(Purge::DropCaches);
                }
                posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)?;
                Ok(Purge::FadviseDontNeed)
            }
            PurgeRequest::Remount => {
                self.remount()?.run().map_err(io::Error::other)?;
                Ok(Purge::Remount)
            }
        }
    }

    fn check_purge(&self, how: PurgeRequest) -> Result<(), String> {
        match how {
            PurgeRequest::Drop => Ok(()),
            PurgeRequest::Remount => self.remount().map(|_| ()).map_err(|e| e.to_string()),
        }
    }

    /// Any depth, through io_uring, if the kernel allows it.
    fn check_iodepth(&self, depth: u32) -> Result<(), String> {
        if depth <= 1 {
            return Ok(());
        }
        crate::ffi::uring::probe(depth).map_err(|e| format!("--iodepth {depth}: {e}"))
    }
}

/// An open posix file; `None` only after close.
struct PosixFile {
    file: Option<File>,
}

impl PosixFile {
    fn f(&mut self) -> &mut File {
        self.file.as_mut().expect("file used after close")
    }
}

/// The data path's calls go straight to the kernel through rustix. glibc's `read` and `write`
/// are cancellation points: in a process with more than one thread each call enables and
/// disables asynchronous cancellation around the system call, which sharebench never uses
/// and IOzone, single-threaded, never pays (4-5% of a 4 KiB tmpfs read here).
impl FileHandle for PosixFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::io::read(&*self.f(), buf)?)
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(rustix::io::write(&*self.f(), buf)?)
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.f().seek(SeekFrom::Start(offset)).map(|_| ())
    }

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pread(&*self.f(), buf, offset)?)
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pwrite(&*self.f(), buf, offset)?)
    }

    fn preadv(&mut self, bufs: &mut [IoSliceMut<'_>], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::preadv(&*self.f(), bufs, offset)?)
    }

    fn pwritev(&mut self, bufs: &[IoSlice<'_>], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pwritev(&*self.f(), bufs, offset)?)
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.f().sync_all()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.f().set_len(len)
    }

    fn allocate(&mut self, offset: u64, len: u64) -> io::Result<()> {
        nix::fcntl::fallocate(
            &*self.f(),
            nix::fcntl::FallocateFlags::empty(),
            offset as libc::off_t,
            len as libc::off_t,
        )
        .map_err(io::Error::from)
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(crate::ffi::uring::UringQueue::new(
            self.f(),
            depth,
            slot_len,
        )?))
    }

    fn map(&mut self, len: u64, writable: bool) -> io::Result<Box<dyn Mapping>> {
        Ok(Box::new(crate::ffi::mmap::FileMapping::new(
            self.f(),
            len,
            writable,
        )?))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        let file = self.file.take().expect("closed twice");
        let _ = file.as_raw_fd();
        // close(2) through nix so that its error (NFS reports write-back errors here) is seen.
        nix::unistd::close(file.into_raw_fd()).map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct system calls keep std's meaning: bytes land where asked, each call reads
    /// where the last left off or at its offset, the end of the file reads as 0, and a
    /// failing call is an `io::Error` with the kernel's errno.
    #[test]
    fn every_data_call_moves_the_bytes_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let b = PosixBackend::new(dir.path()).unwrap();
        let mut f = b.open("f", OpenOptions::create_new()).unwrap();
        assert_eq!(f.write(b"abcd").unwrap(), 4);
        assert_eq!(f.pwrite(b"XY", 1).unwrap(), 2);
        assert_eq!(
            f.pwritev(&[IoSlice::new(b"ef"), IoSlice::new(b"gh")], 4)
                .unwrap(),
            4
        );
        f.seek(0).unwrap();
        let mut four = [0u8; 4];
        assert_eq!(f.read(&mut four).unwrap(), 4);
        assert_eq!(&four, b"aXYd");
        assert_eq!(f.read(&mut four).unwrap(), 4);
        assert_eq!(&four, b"efgh");
        assert_eq!(f.read(&mut four).unwrap(), 0, "end of file");
        let mut two = [0u8; 2];
        assert_eq!(f.pread(&mut two, 3).unwrap(), 2);
        assert_eq!(&two, b"de");
        let (mut x, mut y) = ([0u8; 3], [0u8; 3]);
        let n = f
            .preadv(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)], 2)
            .unwrap();
        assert_eq!((n, &x, &y), (6, b"Yde", b"fgh"));
        f.close().unwrap();

        let mut ro = b.open("f", OpenOptions::read_only()).unwrap();
        let e = ro.write(b"z").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
    }
}
