//! The directories of a directory target, each reached through a handle the tool opened
//! itself: the root once, when the target is opened, and every directory below it from its
//! parent, one component at a time, never through a symlink. Entries are then created,
//! opened and removed relative to the handle of the directory that holds them (`openat`,
//! `unlinkat`, `O_NOFOLLOW`), so whatever another user renames, swaps or plants in a shared
//! target, the tool writes only into the directories it made.
//!
//! A directory the tool made right in the root (the working directory), where others may
//! be able to write, is also checked to be the one it made: reopened by path, it must be the
//! same inode; and the first file the tool creates in it must have the directory's owner,
//! which catches a directory swapped in by another user between the `mkdir` and the open
//! that follows it. Directories made inside it need no check: no one else can write there. Such a swap, or a symlink where the tool's own
//! directory should be, is a [`tampered`] error: the run stops.
//! Not: the data path (open files are the kernel's handles already), nor native clients.

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, Mode};
use sharebench_core::backend::{tampered, DirEntry};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Handles kept open at most; past that they are closed and reopened (and rechecked) on use.
const OPEN_AT_MOST: usize = 256;

/// A directory this process made: which inode it is, and whose its files are.
#[derive(Debug, Clone, Copy)]
struct Made {
    dev: u64,
    ino: u64,
    uid: u32,
    /// Its first new file had its owner (checked once).
    checked: bool,
}

#[derive(Default)]
struct Held {
    /// The root's handle; `None` once released for a remount, until next used.
    root: Option<Arc<OwnedFd>>,
    open: BTreeMap<String, Arc<OwnedFd>>,
    made: HashMap<String, Made>,
}

/// The root of a directory target and the directories below it, by handle.
pub struct HeldDirs {
    shown: PathBuf,
    /// The root's device and inode, which a reopened root must have.
    root_id: (u64, u64),
    held: Mutex<Held>,
}

impl HeldDirs {
    /// Opens the root (`root` is the path the user gave, already resolved).
    pub fn open(root: &Path) -> io::Result<HeldDirs> {
        let fd = open_root(root)?;
        let st = fstat(&fd)?;
        Ok(HeldDirs {
            shown: root.to_path_buf(),
            root_id: (st.st_dev, st.st_ino),
            held: Mutex::new(Held {
                root: Some(Arc::new(fd)),
                ..Held::default()
            }),
        })
    }

    /// The root's handle (opened again, and checked to be the same directory, after a
    /// release).
    pub fn root(&self) -> io::Result<Arc<OwnedFd>> {
        let mut held = self.held();
        if let Some(fd) = &held.root {
            return Ok(fd.clone());
        }
        let fd = open_root(&self.shown)?;
        let st = fstat(&fd)?;
        if (st.st_dev, st.st_ino) != self.root_id {
            return Err(io::Error::other(format!(
                "target '{}' is no longer the directory it was when the run began",
                self.shown.display()
            )));
        }
        let fd = Arc::new(fd);
        held.root = Some(fd.clone());
        Ok(fd)
    }

    /// Closes every handle held, so that the file system can be unmounted (a remount
    /// that empties its cache); each is opened again, and checked, when next used.
    pub fn release(&self) {
        let mut held = self.held();
        held.root = None;
        held.open.clear();
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn shown(&self, rel: &str) -> String {
        self.shown.join(rel).display().to_string()
    }

    /// The directory `rel` ("" for the root), reached from the root without symlinks.
    pub fn dir(&self, rel: &str) -> io::Result<Arc<OwnedFd>> {
        if rel.is_empty() {
            return self.root();
        }
        if let Some(fd) = self.held().open.get(rel) {
            return Ok(fd.clone());
        }
        let (parent, name) = self.parent(rel)?;
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&*parent, name, flags, Mode::empty()).map_err(|e| {
            // A symlink gives ELOOP or, with O_DIRECTORY, ENOTDIR, as a file does.
            let symlink = matches!(e, Errno::ELOOP | Errno::ENOTDIR)
                && fstatat(&*parent, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK);
            if symlink {
                tampered(format!(
                    "{} is a symlink where a directory was expected",
                    self.shown(rel)
                ))
            } else {
                io::Error::from(e)
            }
        })?;
        let st = fstat(&fd)?;
        let mut held = self.held();
        if let Some(m) = held.made.get(rel) {
            if (m.dev, m.ino) != (st.st_dev, st.st_ino) {
                return Err(tampered(format!(
                    "{} is no longer the directory sharebench made (owner uid {})",
                    self.shown(rel),
                    st.st_uid
                )));
            }
        }
        Ok(keep(&mut held, rel, fd))
    }

    /// The handle of the directory holding `rel`, and `rel`'s last component.
    pub fn parent<'p>(&self, rel: &'p str) -> io::Result<(Arc<OwnedFd>, &'p str)> {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if name.is_empty() || name == "." || name == ".." || dir.split('/').any(|c| c == "..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{rel}' is not a plain path inside the target"),
            ));
        }
        Ok((self.dir(dir)?, name))
    }

    /// Makes directory `rel` (mode 0755). One made in a directory of the tool's own needs
    /// nothing more: no one else can put anything in its place, and it is opened from its
    /// parent when first used. One made right in the root, which others may be able to
    /// write, is opened at once and must be empty: else it is not the new one; it is then
    /// held, and its inode and owner noted.
    pub fn mkdir(&self, rel: &str) -> io::Result<()> {
        let (parent, name) = self.parent(rel)?;
        mkdirat(&*parent, name, Mode::from_bits_truncate(0o755))?;
        if rel.contains('/') {
            return Ok(());
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let swapped = || {
            tampered(format!(
                "{} was replaced right after sharebench made it",
                self.shown(rel)
            ))
        };
        let fd = openat(&*parent, name, flags, Mode::empty()).map_err(|e| match e {
            Errno::ELOOP | Errno::ENOTDIR | Errno::ENOENT => swapped(),
            e => io::Error::from(e),
        })?;
        if !entries(&fd)?.is_empty() {
            return Err(swapped());
        }
        let st = fstat(&fd)?;
        let mut held = self.held();
        held.made.insert(
            rel.to_string(),
            Made {
                dev: st.st_dev,
                ino: st.st_ino,
                uid: st.st_uid,
                checked: false,
            },
        );
        keep(&mut held, rel, fd);
        Ok(())
    }

    /// Checks, for the first file created in a directory this process made, that the file's
    /// owner is the directory's: a directory someone else swapped in is theirs, not ours.
    pub fn created(&self, rel: &str, file: &File) -> io::Result<()> {
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        let mut held = self.held();
        let Some(m) = held.made.get_mut(dir) else {
            return Ok(());
        };
        if m.checked {
            return Ok(());
        }
        let uid = fstat(file.as_fd())?.st_uid;
        if uid != m.uid {
            return Err(tampered(format!(
                "{} belongs to uid {}, not to whoever owns the files sharebench creates there (uid {uid})",
                self.shown(dir),
                m.uid
            )));
        }
        m.checked = true;
        Ok(())
    }

    /// Removes the empty directory `rel`. One right in the root must still be the one this
    /// process made (or, from another run, one it did not make at all: `clean`).
    pub fn rmdir(&self, rel: &str) -> io::Result<()> {
        let (parent, name) = self.parent(rel)?;
        if !rel.contains('/') {
            if let Some(m) = self.held().made.get(rel).copied() {
                let now = fstatat(&*parent, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                    .map(|st| (st.st_dev, st.st_ino));
                if now != Ok((m.dev, m.ino)) {
                    return Err(tampered(format!(
                        "{} was moved or replaced since sharebench made it (what is there now is left as it is)",
                        self.shown(rel)
                    )));
                }
            }
        }
        nix::unistd::unlinkat(&*parent, name, nix::unistd::UnlinkatFlags::RemoveDir)?;
        self.forget(rel);
        Ok(())
    }

    /// Drops what is held of `rel` and of everything below it (it was removed or renamed).
    pub fn forget(&self, rel: &str) {
        let mut held = self.held();
        held.open.remove(rel);
        // Everything below `rel/` sorts between it and `rel0` ('0' follows '/').
        let below: Vec<String> = held
            .open
            .range(format!("{rel}/")..format!("{rel}0"))
            .map(|(k, _)| k.clone())
            .collect();
        for k in below {
            held.open.remove(&k);
        }
        // Only directories made in the root are noted, so `rel` is the only one to drop.
        held.made.remove(rel);
    }

    /// The entries of directory `rel`.
    pub fn readdir(&self, rel: &str) -> io::Result<Vec<DirEntry>> {
        entries(&*self.dir(rel)?)
    }
}

fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    Ok(nix::fcntl::open(root, flags, Mode::empty())?)
}

/// Holds `fd` for `rel`, closing every other handle first when too many are open.
fn keep(held: &mut Held, rel: &str, fd: OwnedFd) -> Arc<OwnedFd> {
    if held.open.len() >= OPEN_AT_MOST {
        held.open.clear();
    }
    let fd = Arc::new(fd);
    held.open.insert(rel.to_string(), fd.clone());
    fd
}

/// The entries of an open directory (`.` and `..` left out); a symlink is not a directory.
fn entries(dir: &OwnedFd) -> io::Result<Vec<DirEntry>> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut listing = Dir::openat(dir, ".", flags, Mode::empty())?;
    let mut out = Vec::new();
    for e in listing.iter() {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match e.file_type() {
            Some(t) => t == Type::Directory,
            None => {
                let st = fstatat(dir, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW)?;
                st.st_mode & libc::S_IFMT == libc::S_IFDIR
            }
        };
        out.push(DirEntry { name, is_dir });
    }
    Ok(out)
}
