//! Any directory through the kernel's system calls: local disks, tmpfs, loop-mounted images,
//! kernel and FUSE mounts. Every entry is reached from a handle of the directory that holds
//! it (`held_dirs`), never by a path the kernel resolves from the root each time, and no
//! symlink is followed on the way: a target shared with other users cannot steer a write
//! elsewhere.

use crate::held_dirs::HeldDirs;
use crate::mountinfo;
use crate::remount::Remount;
use nix::errno::Errno;
use nix::fcntl::{openat, posix_fadvise, AtFlags, OFlag, PosixFadviseAdvice};
use nix::sys::stat::{fstat, fstatat, Mode};
use sharebench_core::backend::{
    tampered, Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, Mapping, OpenOptions,
    Purge, PurgeRequest, TargetInfo,
};
use std::fs::{self, File};
use std::io::{self, IoSlice, IoSliceMut, Seek, SeekFrom};
use std::os::unix::io::{AsRawFd, IntoRawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub struct PosixBackend {
    root: PathBuf,
    dirs: HeldDirs,
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
        let dirs = HeldDirs::open(&root).map_err(|e| format!("target '{shown}': {e}"))?;
        let mount = mountinfo::lookup(&root);
        Ok(PosixBackend {
            root,
            dirs,
            mount,
            remount: OnceLock::new(),
        })
    }

    /// The checked remount of the file system holding the root (checked once). The
    /// directory handles are let go first: held, they would keep it from being unmounted.
    fn remount(&self) -> io::Result<&Remount> {
        self.dirs.release();
        self.remount
            .get_or_init(|| Remount::check(&self.root))
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))
    }

    /// Opens the existing entry `rel` with `flags` (never through a symlink).
    fn open_existing(&self, rel: &str, flags: OFlag) -> io::Result<File> {
        let (dir, name) = self.dirs.parent(rel)?;
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        Ok(File::from(openat(&*dir, name, flags, Mode::empty())?))
    }

    /// The entry `rel` as `stat` sees it, following a last symlink or not.
    fn stat_at(&self, rel: &str, at: AtFlags) -> io::Result<FileStat> {
        let st = if rel.is_empty() {
            fstat(&*self.dirs.root()?)?
        } else {
            let (dir, name) = self.dirs.parent(rel)?;
            fstatat(&*dir, name, at)?
        };
        Ok(stat_of(&st))
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

fn stat_of(st: &nix::sys::stat::FileStat) -> FileStat {
    let kind = st.st_mode & libc::S_IFMT;
    FileStat {
        size: st.st_size as u64,
        is_dir: kind == libc::S_IFDIR,
        is_symlink: kind == libc::S_IFLNK,
        mode: st.st_mode,
        nlink: st.st_nlink,
        mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
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

    fn shared_with_others(&self) -> Option<String> {
        let mode = fstat(&*self.dirs.root().ok()?).ok()?.st_mode;
        let others_write = mode & 0o022 != 0;
        let sticky = mode & libc::S_ISVTX != 0;
        (others_write && !sticky).then(|| {
            format!(
                "target '{}' can be written by other users and has no sticky bit (mode {:o}): they can rename or replace sharebench's working directory there. sharebench follows none of their symlinks and stops if its directory is swapped, but they can spoil the run; chmod +t on it prevents that",
                self.root.display(),
                mode & 0o7777
            )
        })
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let mut flags = match (how.read, how.write) {
            (true, true) => OFlag::O_RDWR,
            (false, true) => OFlag::O_WRONLY,
            _ => OFlag::O_RDONLY,
        };
        if how.create {
            flags |= OFlag::O_CREAT;
        }
        if how.truncate {
            flags |= OFlag::O_TRUNC;
        }
        if how.direct {
            flags |= OFlag::O_DIRECT;
        }
        if how.sync {
            flags |= OFlag::O_SYNC;
        }
        let (dir, name) = self.dirs.parent(path)?;
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd =
            openat(&*dir, name, flags, Mode::from_bits_truncate(0o640)).map_err(|e| match e {
                Errno::ELOOP => tampered(format!(
                    "{} is a symlink, which sharebench does not follow",
                    self.root.join(path).display()
                )),
                e => io::Error::from(e),
            })?;
        let file = File::from(fd);
        if how.create {
            self.dirs.created(path, &file)?;
        }
        Ok(Box::new(PosixFile { file: Some(file) }))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.stat_at(path, AtFlags::empty())
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.stat_at(path, AtFlags::AT_SYMLINK_NOFOLLOW)
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        self.open_existing(path, OFlag::O_WRONLY)?.set_len(len)
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        let (dir, name) = self.dirs.parent(path)?;
        Ok(nix::unistd::unlinkat(
            &*dir,
            name,
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )?)
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.dirs.mkdir(path)
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        self.dirs.rmdir(path)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (from_dir, from_name) = self.dirs.parent(from)?;
        let (to_dir, to_name) = self.dirs.parent(to)?;
        nix::fcntl::renameat(&*from_dir, from_name, &*to_dir, to_name)?;
        self.dirs.forget(from);
        self.dirs.forget(to);
        Ok(())
    }

    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        let (old_dir, old_name) = self.dirs.parent(existing)?;
        let (new_dir, new_name) = self.dirs.parent(new)?;
        // No AT_SYMLINK_FOLLOW: a symlink is linked as itself.
        Ok(nix::unistd::linkat(
            &*old_dir,
            old_name,
            &*new_dir,
            new_name,
            AtFlags::empty(),
        )?)
    }

    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        let (dir, name) = self.dirs.parent(link)?;
        Ok(nix::unistd::symlinkat(target, &*dir, name)?)
    }

    fn readlink(&self, path: &str) -> io::Result<String> {
        let (dir, name) = self.dirs.parent(path)?;
        Ok(nix::fcntl::readlinkat(&*dir, name)?
            .to_string_lossy()
            .into_owned())
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        self.dirs.readdir(path)
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        // A directory (what the workloads ask about) by its held handle; else the entry.
        let s = match self.dirs.dir(path) {
            Ok(dir) => nix::sys::statvfs::fstatvfs(&*dir)?,
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                nix::sys::statvfs::fstatvfs(self.open_existing(path, OFlag::O_PATH)?)?
            }
            Err(e) => return Err(e),
        };
        let frag = s.fragment_size() as u64;
        Ok(FsStat {
            block_size: frag,
            total_bytes: s.blocks() as u64 * frag,
            free_bytes: s.blocks_available() as u64 * frag,
            total_files: s.files() as u64,
            free_files: s.files_available() as u64,
            read_only: s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY),
        })
    }

    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        let (dir, name) = self.dirs.parent(path)?;
        // One system call, as chmod(2) is (Connectathon times it). fchmodat follows a last
        // symlink, but the directory is the tool's own, checked before anything was
        // created in it: no one else can have put a symlink there, and the workloads
        // never chmod one of their own.
        Ok(nix::sys::stat::fchmodat(
            &*dir,
            name,
            Mode::from_bits_truncate(mode),
            nix::sys::stat::FchmodatFlags::FollowSymlink,
        )?)
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let ts = |ns: i128| {
            nix::sys::time::TimeSpec::new(
                ns.div_euclid(1_000_000_000) as libc::time_t,
                ns.rem_euclid(1_000_000_000) as libc::c_long,
            )
        };
        let (dir, name) = self.dirs.parent(path)?;
        nix::sys::stat::utimensat(
            &*dir,
            name,
            &ts(atime_ns),
            &ts(mtime_ns),
            nix::sys::stat::UtimensatFlags::NoFollowSymlink,
        )
        .map_err(io::Error::from)
    }

    fn extents(&self, path: &str) -> io::Result<u64> {
        let file = self.open_existing(path, OFlag::O_RDONLY)?;
        crate::ffi::fiemap::count_extents(&file)
    }

    fn purge_cache(&self, path: &str, how: PurgeRequest) -> io::Result<Purge> {
        match how {
            PurgeRequest::Drop => {
                let file = self.open_existing(path, OFlag::O_RDONLY)?;
                file.sync_all()?;
                nix::unistd::sync();
                if fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok() {
                    return Ok(Purge::DropCaches);
                }
                posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)?;
                Ok(Purge::FadviseDontNeed)
            }
            PurgeRequest::Remount => {
                let remount = self.remount()?;
                self.dirs.release();
                remount.run().map_err(io::Error::other)?;
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

#[cfg(test)]
mod held_dir_tests {
    use super::*;
    use sharebench_core::backend::{names_tampering, write_all};

    fn write(b: &PosixBackend, path: &str, bytes: &[u8]) -> io::Result<()> {
        let mut f = b.open(path, OpenOptions::create_new())?;
        write_all(f.as_mut(), bytes)?;
        f.close()
    }

    /// Renamed away and replaced by a directory of symlinks, the tool's directory still
    /// gets the tool's files; the symlinks' target is untouched; removing it is refused.
    #[test]
    fn a_swapped_directory_changes_where_nothing_goes() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "secret").unwrap();
        let root = t.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let b = PosixBackend::new(&root).unwrap();
        b.mkdir("w").unwrap();
        write(&b, "w/a", b"first").unwrap();
        std::fs::rename(root.join("w"), root.join("moved")).unwrap();
        std::fs::create_dir(root.join("w")).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("w/f0")).unwrap();
        write(&b, "w/f0", b"pattern").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret");
        assert_eq!(std::fs::read(root.join("moved/f0")).unwrap(), b"pattern");
        b.unlink("w/f0").unwrap();
        assert!(
            root.join("w/f0").symlink_metadata().is_ok(),
            "theirs is left"
        );
        b.unlink("w/a").unwrap();
        let e = b.rmdir("w").unwrap_err();
        assert!(names_tampering(&e.to_string()), "{e}");
        assert!(root.join("w").exists() && root.join("moved").exists());
    }

    /// A symlink where the tool's directory should be is never followed, and stops the run.
    #[test]
    fn a_symlink_for_a_directory_is_refused_as_tampering() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("f0"), "theirs").unwrap();
        let root = t.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("w")).unwrap();
        let b = PosixBackend::new(&root).unwrap();
        for e in [
            write(&b, "w/f0", b"pattern").unwrap_err(),
            b.unlink("w/f0").unwrap_err(),
            b.readdir("w").unwrap_err(),
        ] {
            assert!(names_tampering(&e.to_string()), "{e}");
        }
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("f0")).unwrap(),
            "theirs"
        );
        // A symlink as the file itself is never opened.
        b.mkdir("d").unwrap();
        std::os::unix::fs::symlink(elsewhere.join("f0"), root.join("d/l")).unwrap();
        let e = b.open("d/l", OpenOptions::read_write()).err().unwrap();
        assert!(names_tampering(&e.to_string()), "{e}");
    }

    /// The tool's own directories are reopened (and rechecked) once too many are held, and
    /// a path `..` could lead out of is refused.
    #[test]
    fn many_directories_are_reopened_and_paths_stay_inside() {
        let t = tempfile::tempdir().unwrap();
        let b = PosixBackend::new(t.path()).unwrap();
        b.mkdir("w").unwrap();
        for i in 0..300 {
            b.mkdir(&format!("w/{i}")).unwrap();
            write(&b, &format!("w/{i}/f"), b"x").unwrap();
        }
        for i in 0..300 {
            assert_eq!(b.stat(&format!("w/{i}/f")).unwrap().size, 1);
        }
        assert_eq!(b.readdir("w").unwrap().len(), 300);
        for p in ["w/../x", "../x", "w/.."] {
            let e = b.open(p, OpenOptions::create_new()).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}: {e}");
        }
    }
}
