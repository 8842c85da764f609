//! gfapi's handle calls (`<glusterfs/api/glfs-handles.h>`): a volume's files and
//! directories as objects (their gfids), and every name created, opened or removed looked
//! up in a directory object, one component at a time, never through a symlink. Another
//! user who swaps a working directory for a symlink, or plants `f0 -> elsewhere`, gets
//! an error, not a write through the link (a dangling link would otherwise make the brick
//! create its target, outside the volume, as the caller).
//! Not here: the path calls that only read (stat, readdir: `gfapi`), the backend trait.

use super::gfapi::{check, cstr, failed, GlFile, RawFd, RawFs, Volume};
use std::ffi::{c_char, c_int};
use std::io;
use std::sync::Arc;

#[repr(C)]
struct RawObj {
    _opaque: [u8; 0],
}

extern "C" {
    fn glfs_h_lookupat(
        fs: *mut RawFs,
        parent: *mut RawObj,
        path: *const c_char,
        stat: *mut libc::stat,
        follow: c_int,
    ) -> *mut RawObj;
    fn glfs_h_creat_open(
        fs: *mut RawFs,
        parent: *mut RawObj,
        path: *const c_char,
        flags: c_int,
        mode: libc::mode_t,
        stat: *mut libc::stat,
        out_fd: *mut *mut RawFd,
    ) -> *mut RawObj;
    fn glfs_h_open(fs: *mut RawFs, object: *mut RawObj, flags: c_int) -> *mut RawFd;
    fn glfs_h_mkdir(
        fs: *mut RawFs,
        parent: *mut RawObj,
        path: *const c_char,
        mode: libc::mode_t,
        stat: *mut libc::stat,
    ) -> *mut RawObj;
    fn glfs_h_symlink(
        fs: *mut RawFs,
        parent: *mut RawObj,
        name: *const c_char,
        data: *const c_char,
        stat: *mut libc::stat,
    ) -> *mut RawObj;
    fn glfs_h_unlink(fs: *mut RawFs, parent: *mut RawObj, path: *const c_char) -> c_int;
    fn glfs_h_rename(
        fs: *mut RawFs,
        olddir: *mut RawObj,
        oldname: *const c_char,
        newdir: *mut RawObj,
        newname: *const c_char,
    ) -> c_int;
    fn glfs_h_link(
        fs: *mut RawFs,
        target: *mut RawObj,
        parent: *mut RawObj,
        name: *const c_char,
    ) -> c_int;
    fn glfs_h_truncate(fs: *mut RawFs, object: *mut RawObj, offset: libc::off_t) -> c_int;
    fn glfs_h_setattrs(
        fs: *mut RawFs,
        object: *mut RawObj,
        stat: *mut libc::stat,
        valid: c_int,
    ) -> c_int;
    fn glfs_h_close(object: *mut RawObj) -> c_int;
    fn glfs_object_copy(src: *mut RawObj) -> *mut RawObj;
}

const SET_ATTR_MODE: c_int = 0x1;
const SET_ATTR_ATIME: c_int = 0x10;
const SET_ATTR_MTIME: c_int = 0x20;

/// One file or directory of a volume (its gfid), which keeps the volume alive; released
/// when dropped.
pub struct Obj {
    raw: *mut RawObj,
    volume: Arc<Volume>,
}

// SAFETY: an object is the gfid and a reference on gfapi's inode, which gfapi locks
// itself; any thread may pass it to the handle calls, and it is closed only in Drop.
unsafe impl Send for Obj {}
// SAFETY: as above: the handle calls only read the object.
unsafe impl Sync for Obj {}

impl Drop for Obj {
    fn drop(&mut self) {
        // SAFETY: a live object, closed once.
        unsafe { glfs_h_close(self.raw) };
    }
}

/// The error for a name that is not what the tool made (a symlink, or another kind of
/// file): someone else changed the tool's directory, and the engine stops the run.
fn refused(name: &str, what: &str) -> io::Error {
    sharebench_core::backend::tampered(format!("gluster {name}: {what}, not followed"))
}

fn zeroed_stat() -> libc::stat {
    // SAFETY: an all-zero stat is a valid value of the plain C struct.
    unsafe { std::mem::zeroed() }
}

fn kind(st: &libc::stat) -> u32 {
    st.st_mode & libc::S_IFMT
}

impl Obj {
    /// The directory `path` names on `volume` (the user's own choice, so a symlink in it is
    /// followed, as any path the user gives).
    pub fn root(volume: &Arc<Volume>, path: &str) -> io::Result<Obj> {
        let c = cstr(path)?;
        let mut st = zeroed_stat();
        // SAFETY: live volume, a NUL-terminated path, `st` receives the attributes; a null
        // parent means the volume's root.
        let raw =
            unsafe { glfs_h_lookupat(volume.raw, std::ptr::null_mut(), c.as_ptr(), &mut st, 1) };
        let obj = Obj::wrap(raw, volume, "lookup", path)?;
        if kind(&st) != libc::S_IFDIR {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{path} is not a directory"),
            ));
        }
        Ok(obj)
    }

    fn wrap(raw: *mut RawObj, volume: &Arc<Volume>, op: &str, what: &str) -> io::Result<Obj> {
        if raw.is_null() {
            return Err(failed(op, what));
        }
        Ok(Obj {
            raw,
            volume: volume.clone(),
        })
    }

    fn fs(&self) -> *mut RawFs {
        self.volume.raw
    }

    /// `name` in this directory, itself (a symlink is not followed), with its attributes.
    pub fn lookup(&self, name: &str) -> io::Result<(Obj, libc::stat)> {
        let c = cstr(name)?;
        let mut st = zeroed_stat();
        // SAFETY: live volume and directory object, a single NUL-terminated name, follow 0.
        let raw = unsafe { glfs_h_lookupat(self.fs(), self.raw, c.as_ptr(), &mut st, 0) };
        Ok((Obj::wrap(raw, &self.volume, "lookup", name)?, st))
    }

    /// The directory that holds the last component of `rel` (a path under this one, with
    /// `/` between names), and that name. Every directory on the way must be one: a
    /// symlink or anything else is refused.
    pub fn parent_of(&self, rel: &str) -> io::Result<(Obj, String)> {
        let names: Vec<&str> = rel
            .split('/')
            .filter(|n| !n.is_empty() && *n != ".")
            .collect();
        let Some((last, dirs)) = names.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no name in an empty path",
            ));
        };
        if names.contains(&"..") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'..' in {rel}"),
            ));
        }
        let mut dir: Option<Obj> = None;
        for name in dirs {
            let (next, st) = dir.as_ref().unwrap_or(self).lookup(name)?;
            if kind(&st) != libc::S_IFDIR {
                return Err(refused(rel, &format!("{name} is not a directory")));
            }
            dir = Some(next);
        }
        let dir = match dir {
            Some(d) => d,
            None => self.lookup_self()?,
        };
        Ok((dir, (*last).to_string()))
    }

    /// Another reference to this object.
    fn lookup_self(&self) -> io::Result<Obj> {
        // SAFETY: a live object; a null copy is an error.
        let raw = unsafe { glfs_object_copy(self.raw) };
        Obj::wrap(raw, &self.volume, "copy", "directory")
    }

    /// Opens `name` in this directory with open(2) `flags`. With O_CREAT the file is
    /// created exclusively, so the brick never follows a link planted under the name; an
    /// existing file (without O_EXCL) is opened only if it is a regular file, and O_TRUNC
    /// is done on the open file.
    pub fn open_in(&self, name: &str, flags: c_int, mode: u32) -> io::Result<GlFile> {
        let c = cstr(name)?;
        if flags & libc::O_CREAT != 0 {
            let mut st = zeroed_stat();
            let mut fd: *mut RawFd = std::ptr::null_mut();
            // SAFETY: live volume and directory, a NUL-terminated name; gfapi sets `fd`
            // and `st`; a null object is an error (errno set).
            let raw = unsafe {
                glfs_h_creat_open(
                    self.fs(),
                    self.raw,
                    c.as_ptr(),
                    flags | libc::O_EXCL,
                    mode,
                    &mut st,
                    &mut fd,
                )
            };
            match Obj::wrap(raw, &self.volume, "create", name) {
                Ok(_created) => return GlFile::from_raw(fd, &self.volume, name),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && flags & libc::O_EXCL == 0 => {
                }
                Err(e) => return Err(e),
            }
        }
        let (obj, st) = self.lookup(name)?;
        if kind(&st) != libc::S_IFREG {
            return Err(refused(name, "not a regular file"));
        }
        let keep = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
        // SAFETY: live volume and object; a null fd is an error.
        let fd = unsafe { glfs_h_open(self.fs(), obj.raw, keep) };
        let mut file = GlFile::from_raw(fd, &self.volume, name)?;
        if flags & libc::O_TRUNC != 0 {
            file.set_len(0)?;
        }
        Ok(file)
    }

    pub fn mkdir_in(&self, name: &str, mode: u32) -> io::Result<()> {
        let c = cstr(name)?;
        let mut st = zeroed_stat();
        // SAFETY: live volume and directory, a NUL-terminated name.
        let raw = unsafe { glfs_h_mkdir(self.fs(), self.raw, c.as_ptr(), mode, &mut st) };
        Obj::wrap(raw, &self.volume, "mkdir", name).map(drop)
    }

    pub fn symlink_in(&self, name: &str, target: &str) -> io::Result<()> {
        let (c, t) = (cstr(name)?, cstr(target)?);
        let mut st = zeroed_stat();
        // SAFETY: live volume and directory, two NUL-terminated strings.
        let raw = unsafe { glfs_h_symlink(self.fs(), self.raw, c.as_ptr(), t.as_ptr(), &mut st) };
        Obj::wrap(raw, &self.volume, "symlink", name).map(drop)
    }

    /// Removes `name` from this directory: the link itself if it is one, a directory only
    /// with `dir` (as rmdir), anything else only without it (as unlink).
    pub fn remove_in(&self, name: &str, dir: bool) -> io::Result<()> {
        let (_, st) = self.lookup(name)?;
        match (dir, kind(&st) == libc::S_IFDIR) {
            (true, false) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{name} is not a directory"),
                ))
            }
            (false, true) => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{name} is a directory"),
                ))
            }
            _ => {}
        }
        let c = cstr(name)?;
        // SAFETY: live volume and directory, a NUL-terminated name (not followed).
        check(
            unsafe { glfs_h_unlink(self.fs(), self.raw, c.as_ptr()) },
            "unlink",
            name,
        )
    }

    pub fn rename_in(&self, from: &str, to_dir: &Obj, to: &str) -> io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        // SAFETY: live volume and directories, two NUL-terminated names.
        let rc = unsafe { glfs_h_rename(self.fs(), self.raw, a.as_ptr(), to_dir.raw, b.as_ptr()) };
        check(rc, "rename", to)
    }

    /// A hard link to `target` named `name` in this directory.
    pub fn link_in(&self, target: &Obj, name: &str) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: live volume and objects, a NUL-terminated name.
        check(
            unsafe { glfs_h_link(self.fs(), target.raw, self.raw, c.as_ptr()) },
            "link",
            name,
        )
    }

    pub fn truncate(&self, len: u64) -> io::Result<()> {
        // SAFETY: live volume and object.
        check(
            unsafe { glfs_h_truncate(self.fs(), self.raw, len as libc::off_t) },
            "truncate",
            "file",
        )
    }

    pub fn chmod(&self, mode: u32) -> io::Result<()> {
        let mut st = zeroed_stat();
        st.st_mode = mode;
        // SAFETY: live volume and object; gfapi reads the mode from `st`.
        check(
            unsafe { glfs_h_setattrs(self.fs(), self.raw, &mut st, SET_ATTR_MODE) },
            "chmod",
            "file",
        )
    }

    pub fn set_times(&self, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let mut st = zeroed_stat();
        st.st_atime = atime_ns.div_euclid(1_000_000_000) as libc::time_t;
        st.st_atime_nsec = atime_ns.rem_euclid(1_000_000_000) as i64;
        st.st_mtime = mtime_ns.div_euclid(1_000_000_000) as libc::time_t;
        st.st_mtime_nsec = mtime_ns.rem_euclid(1_000_000_000) as i64;
        // SAFETY: live volume and object; gfapi reads the times from `st`.
        let rc = unsafe {
            glfs_h_setattrs(
                self.fs(),
                self.raw,
                &mut st,
                SET_ATTR_ATIME | SET_ATTR_MTIME,
            )
        };
        check(rc, "utimens", "file")
    }
}
