//! A directory the tool writes its own files into (results, reports, the lab's state and
//! credentials), held by an open handle so that nothing written there follows a symlink
//! someone else planted. The path is opened one component at a time without following
//! symlinks, but for those of root's or ours in directories nobody else can change; a
//! directory that another user owns and can write in, or that anyone may write in without
//! the sticky bit, is refused, as ssh refuses such a home; every file is created new
//! (`O_EXCL|O_NOFOLLOW`) relative to the handle, and replaced by a rename within it. Once
//! open, the handle is the directory: renaming it away or swapping a parent changes nothing.
//! Not: reading inputs, nor the files a workload makes on a target (the backends' business).

use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

/// An open directory of the tool's own.
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl SafeDir {
    /// Opens `path`, creating it and its missing parents (0755); errors say which component
    /// is refused and why.
    pub fn create(path: &Path) -> io::Result<SafeDir> {
        walk(path, true)
    }

    /// Opens an existing `path`.
    pub fn open(path: &Path) -> io::Result<SafeDir> {
        walk(path, false)
    }

    /// The path it was opened by (for messages; the handle is what is written through).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A subdirectory, created if missing, opened like any component of a path.
    pub fn subdir(&self, name: &str) -> io::Result<SafeDir> {
        let fd = step(&self.fd, OsStr::new(name), true, &self.path)?;
        let path = self.path.join(name);
        trusted(&fstat(&fd)?, &path)?;
        Ok(SafeDir { fd, path })
    }

    /// Creates a new file `name` with `mode`; fails if anything of that name exists.
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
        let fd = openat(&self.fd, name, flags | OFlag::O_CLOEXEC, mode_of(mode))
            .map_err(|e| self.error(name, e))?;
        Ok(File::from(fd))
    }

    /// Opens file `name` for reading; a symlink of that name is refused, not followed.
    pub fn open_file(&self, name: &str) -> io::Result<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty()).map_err(|e| self.error(name, e))?;
        Ok(File::from(fd))
    }

    /// Writes `bytes` as file `name` (mode `mode`), replacing what was there at once: a new
    /// file written beside it, then renamed over it. A symlink of that name is replaced,
    /// never followed.
    pub fn replace(&self, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
        let tmp = format!(".{name}.{}.tmp", std::process::id());
        self.remove(&tmp)?;
        let mut f = self.create_new(&tmp, mode)?;
        if let Err(e) = f.write_all(bytes) {
            let _ = self.remove(&tmp);
            return Err(e);
        }
        drop(f);
        renameat(&self.fd, tmp.as_str(), &self.fd, name).map_err(|e| self.error(name, e))
    }

    /// Writes `bytes` over the existing regular file `name` in place (no symlink followed),
    /// for when `replace` cannot: on a full disk, the blocks the file holds can still take
    /// a text of about its size. Not atomic: a reader may see it half written.
    pub fn overwrite(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let flags = OFlag::O_WRONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty()).map_err(|e| self.error(name, e))?;
        let mut f = File::from(fd);
        if !f.metadata()?.is_file() {
            return Err(io::Error::other(format!("{name} is not a regular file")));
        }
        f.write_all(bytes)?;
        f.set_len(bytes.len() as u64)
    }

    /// Removes file `name` if it is there (a symlink is removed, not followed).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        match unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(self.error(name, e)),
        }
    }

    /// Whether anything of that name is in the directory (a symlink counts, unfollowed).
    pub fn contains(&self, name: &str) -> bool {
        fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok()
    }

    /// Whether the directory holds nothing.
    pub fn is_empty(&self) -> io::Result<bool> {
        let fd = openat(
            &self.fd,
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut dir = nix::dir::Dir::from_fd(fd)?;
        let is_empty = dir
            .iter()
            .flatten()
            .all(|e| matches!(e.file_name().to_bytes(), b"." | b".."));
        Ok(is_empty)
    }

    fn error(&self, name: &str, e: Errno) -> io::Error {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("{}: {}", self.path.join(name).display(), e.desc()),
        )
    }
}

fn mode_of(mode: u32) -> Mode {
    Mode::from_bits_truncate(mode as nix::libc::mode_t)
}

/// Opens `path` component by component from `/` or the working directory.
fn walk(path: &Path, create: bool) -> io::Result<SafeDir> {
    let start = if path.is_absolute() { "/" } else { "." };
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut fd = nix::fcntl::open(start, dir_flags, Mode::empty())?;
    let mut at = PathBuf::from(start);
    trusted(&fstat(&fd)?, &at)?;
    for c in path.components() {
        let name = match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
            Component::ParentDir => OsStr::new(".."),
            Component::Normal(n) => n,
        };
        fd = step(&fd, name, create, &at)?;
        at.push(name);
        trusted(&fstat(&fd)?, &at)?;
    }
    Ok(SafeDir {
        fd,
        path: path.to_path_buf(),
    })
}

/// Opens directory `name` in `parent` (shown as `at`), creating it when asked; a symlink
/// is followed only when it is root's or ours in a directory nobody else can change.
fn step(parent: &OwnedFd, name: &OsStr, create: bool, at: &Path) -> io::Result<OwnedFd> {
    let shown = || at.join(name).display().to_string();
    let refuse = |why: String| io::Error::new(io::ErrorKind::PermissionDenied, why);
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    for _ in 0..2 {
        let st = match fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Err(Errno::ENOENT) if create => match mkdirat(parent, name, mode_of(0o755)) {
                Ok(()) | Err(Errno::EEXIST) => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        io::Error::from(e).kind(),
                        format!("cannot create {}: {}", shown(), e.desc()),
                    ))
                }
            },
            Err(e) => {
                return Err(io::Error::new(
                    io::Error::from(e).kind(),
                    format!("{}: {}", shown(), e.desc()),
                ))
            }
            Ok(st) => st,
        };
        let follow = match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
            SFlag::S_IFDIR => false,
            SFlag::S_IFLNK => {
                let mine = st.st_uid == 0 || st.st_uid == nix::unistd::geteuid().as_raw();
                let fixed = others_may_change(&fstat(parent)?).is_none();
                if !(mine && fixed) {
                    return Err(refuse(format!(
                        "{} is a symlink of user {}'s in a directory others can change: not followed",
                        shown(),
                        st.st_uid
                    )));
                }
                true
            }
            _ => return Err(refuse(format!("{} is not a directory", shown()))),
        };
        let flags = if follow {
            dir_flags
        } else {
            dir_flags | OFlag::O_NOFOLLOW
        };
        return openat(parent, name, flags, Mode::empty()).map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!("{}: {}", shown(), e.desc()),
            )
        });
    }
    Err(refuse(format!("{} keeps changing", shown())))
}

/// Refuses a directory that someone other than root and us may change.
fn trusted(st: &FileStat, at: &Path) -> io::Result<()> {
    match others_may_change(st) {
        None => Ok(()),
        Some(why) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}: refusing to write there (files could be swapped for symlinks)",
                at.display()
            ),
        )),
    }
}

/// Why someone other than root and us may add, remove or rename entries of a directory.
fn others_may_change(st: &FileStat) -> Option<String> {
    let me = nix::unistd::geteuid().as_raw();
    let mode = st.st_mode & 0o7777;
    let sticky = mode & 0o1000 != 0;
    if st.st_uid != 0 && st.st_uid != me && mode & 0o200 != 0 {
        return Some(format!(
            "is owned by user {}, who can write in it",
            st.st_uid
        ));
    }
    if mode & 0o002 != 0 && !sticky {
        return Some(format!(
            "is writable by everyone (mode {mode:04o}) without the sticky bit"
        ));
    }
    None
}

/// For file systems that do not ask: a handle on `path`'s directory for writing `path`'s
/// file, and the file name.
pub fn parent_and_name(path: &Path) -> io::Result<(SafeDir, String)> {
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        )
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((SafeDir::open(parent)?, name.to_string()))
}

impl AsFd for SafeDir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_missing_directories_and_new_files_only() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::create(&t.path().join("a/b/c")).unwrap();
        assert!(d.is_empty().unwrap());
        d.create_new("x", 0o644).unwrap().write_all(b"1").unwrap();
        assert!(
            d.create_new("x", 0o644).is_err(),
            "an existing file is never reused"
        );
        d.replace("x", b"2", 0o600).unwrap();
        let p = t.path().join("a/b/c/x");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "2");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!d.is_empty().unwrap() && d.contains("x"));
        assert!(d.subdir("s").unwrap().is_empty().unwrap());
    }

    #[test]
    fn never_writes_through_a_planted_symlink() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let d = SafeDir::create(&t.path().join("out")).unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("out/x")).unwrap();
        assert!(d.create_new("x", 0o644).is_err());
        // Replacing swaps the link itself for a file; the victim is untouched.
        d.replace("x", b"new", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(t.path().join("out/x"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_directory_anyone_may_change_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = SafeDir::create(&open.join("r")).unwrap_err().to_string();
        assert!(e.contains("writable by everyone"), "{e}");
        // With the sticky bit (as /tmp) nobody can rename what is ours: allowed.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        SafeDir::create(&open.join("r")).unwrap();
    }

    #[test]
    fn a_directory_of_another_user_who_can_write_is_refused() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let theirs = t.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(4242), None).unwrap();
        let e = SafeDir::create(&theirs.join("r")).unwrap_err().to_string();
        assert!(e.contains("owned by user 4242"), "{e}");
        // Their symlink, even to a directory of ours, is not followed in /tmp-like places.
        let sticky = t.path().join("sticky");
        std::fs::create_dir(&sticky).unwrap();
        std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let link = sticky.join("link");
        std::os::unix::fs::symlink(t.path(), &link).unwrap();
        nix::unistd::fchownat(
            nix::fcntl::AT_FDCWD,
            &link,
            Some(nix::unistd::Uid::from_raw(4242)),
            None,
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .unwrap();
        let e = SafeDir::create(&link.join("r")).unwrap_err().to_string();
        assert!(e.contains("symlink of user 4242"), "{e}");
    }
}
