//! libnfs 4.0's synchronous API (`<nfsc/libnfs.h>`), declared by hand, and a safe wrapper
//! over it: a [`Context`] is one connection with one export mounted; an [`OpenFile`] owns
//! the context its handle belongs to, so a handle can never be used with, or outlive, the
//! wrong context. A context is `Send` but not `Sync`: libnfs allows one context per thread,
//! never one context from two threads at once (sahlberg/libnfs#341, #266).
//! Not here: URL policy, pooling, the backend trait (see `crate::nfs`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::ptr;

#[repr(C)]
pub(super) struct RawContext {
    _opaque: [u8; 0],
}
#[repr(C)]
pub(super) struct RawFh {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawDir {
    _opaque: [u8; 0],
}

#[repr(C)]
struct RawUrl {
    server: *mut c_char,
    path: *mut c_char,
    file: *mut c_char,
}

/// `struct nfs_stat_64`: every field 64 bits.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Stat64 {
    pub dev: u64,
    pub ino: u64,
    pub mode: u64,
    pub nlink: u64,
    pub uid: u64,
    pub gid: u64,
    pub rdev: u64,
    pub size: u64,
    pub blksize: u64,
    pub blocks: u64,
    pub atime: u64,
    pub mtime: u64,
    pub ctime: u64,
    pub atime_nsec: u64,
    pub mtime_nsec: u64,
    pub ctime_nsec: u64,
    pub used: u64,
}

/// `struct nfs_statvfs_64`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Statvfs64 {
    pub bsize: u64,
    pub frsize: u64,
    pub blocks: u64,
    pub bfree: u64,
    pub bavail: u64,
    pub files: u64,
    pub ffree: u64,
    pub favail: u64,
    pub fsid: u64,
    pub flag: u64,
    pub namemax: u64,
}

/// `struct nfsdirent` (libnfs 4.0 layout).
#[repr(C)]
struct RawDirent {
    next: *mut RawDirent,
    name: *mut c_char,
    inode: u64,
    kind: u32,
    mode: u32,
    size: u64,
    atime: libc::timeval,
    mtime: libc::timeval,
    ctime: libc::timeval,
    uid: u32,
    gid: u32,
    nlink: u32,
    dev: u64,
    rdev: u64,
    blksize: u64,
    blocks: u64,
    used: u64,
    atime_nsec: u32,
    mtime_nsec: u32,
    ctime_nsec: u32,
}

/// NF3DIR / NF4DIR: the directory type in `nfsdirent.type`.
const NF_DIR: u32 = 2;

extern "C" {
    fn nfs_init_context() -> *mut RawContext;
    fn nfs_destroy_context(nfs: *mut RawContext);
    fn nfs_get_error(nfs: *mut RawContext) -> *mut c_char;
    fn nfs_parse_url_dir(nfs: *mut RawContext, url: *const c_char) -> *mut RawUrl;
    fn nfs_destroy_url(url: *mut RawUrl);
    fn nfs_set_dircache(nfs: *mut RawContext, enabled: c_int);
    fn nfs_set_timeout(nfs: *mut RawContext, milliseconds: c_int);
    fn nfs_set_autoreconnect(nfs: *mut RawContext, num_retries: c_int);
    fn nfs4_set_client_name(nfs: *mut RawContext, id: *const c_char);
    fn nfs_mount(nfs: *mut RawContext, server: *const c_char, export: *const c_char) -> c_int;
    fn nfs_get_readmax(nfs: *mut RawContext) -> u64;
    fn nfs_get_writemax(nfs: *mut RawContext) -> u64;
    fn nfs_stat64(nfs: *mut RawContext, path: *const c_char, st: *mut Stat64) -> c_int;
    fn nfs_lstat64(nfs: *mut RawContext, path: *const c_char, st: *mut Stat64) -> c_int;
    fn nfs_open2(
        nfs: *mut RawContext,
        path: *const c_char,
        flags: c_int,
        mode: c_int,
        fh: *mut *mut RawFh,
    ) -> c_int;
    fn nfs_close(nfs: *mut RawContext, fh: *mut RawFh) -> c_int;
    fn nfs_pread(
        nfs: *mut RawContext,
        fh: *mut RawFh,
        offset: u64,
        count: u64,
        buf: *mut c_void,
    ) -> c_int;
    fn nfs_read(nfs: *mut RawContext, fh: *mut RawFh, count: u64, buf: *mut c_void) -> c_int;
    fn nfs_pwrite(
        nfs: *mut RawContext,
        fh: *mut RawFh,
        offset: u64,
        count: u64,
        buf: *const c_void,
    ) -> c_int;
    fn nfs_write(nfs: *mut RawContext, fh: *mut RawFh, count: u64, buf: *const c_void) -> c_int;
    fn nfs_lseek(
        nfs: *mut RawContext,
        fh: *mut RawFh,
        offset: i64,
        whence: c_int,
        current: *mut u64,
    ) -> c_int;
    fn nfs_fsync(nfs: *mut RawContext, fh: *mut RawFh) -> c_int;
    fn nfs_ftruncate(nfs: *mut RawContext, fh: *mut RawFh, length: u64) -> c_int;
    fn nfs_truncate(nfs: *mut RawContext, path: *const c_char, length: u64) -> c_int;
    fn nfs_mkdir2(nfs: *mut RawContext, path: *const c_char, mode: c_int) -> c_int;
    fn nfs_rmdir(nfs: *mut RawContext, path: *const c_char) -> c_int;
    fn nfs_unlink(nfs: *mut RawContext, path: *const c_char) -> c_int;
    fn nfs_opendir(nfs: *mut RawContext, path: *const c_char, dir: *mut *mut RawDir) -> c_int;
    fn nfs_readdir(nfs: *mut RawContext, dir: *mut RawDir) -> *mut RawDirent;
    fn nfs_closedir(nfs: *mut RawContext, dir: *mut RawDir);
    fn nfs_statvfs64(nfs: *mut RawContext, path: *const c_char, st: *mut Statvfs64) -> c_int;
    fn nfs_readlink2(nfs: *mut RawContext, path: *const c_char, buf: *mut *mut c_char) -> c_int;
    fn nfs_chmod(nfs: *mut RawContext, path: *const c_char, mode: c_int) -> c_int;
    fn nfs_utimes(nfs: *mut RawContext, path: *const c_char, times: *mut libc::timeval) -> c_int;
    fn nfs_symlink(nfs: *mut RawContext, target: *const c_char, link: *const c_char) -> c_int;
    fn nfs_rename(nfs: *mut RawContext, from: *const c_char, to: *const c_char) -> c_int;
    fn nfs_link(nfs: *mut RawContext, from: *const c_char, to: *const c_char) -> c_int;
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path with a NUL byte: {s:?}"),
        )
    })
}

/// One NFS connection with one export mounted.
pub struct Context {
    raw: *mut RawContext,
}

// SAFETY: a libnfs context has no thread affinity and no shared global state; it may move
// between threads as long as only one uses it at a time, which `&mut self` on every call
// and the absence of `Sync` guarantee.
unsafe impl Send for Context {}

impl Context {
    /// Connects and mounts the export named by a libnfs URL (`nfs://IP/path?version=3...`;
    /// the URL's arguments set the version and ports). The directory cache is off, so that
    /// several contexts on one export never list stale directories. Each context is its
    /// own NFSv4 client (a unique client name): contexts sharing libnfs's default name
    /// would reset each other's open state at the server.
    pub fn mount(url: &str, timeout_ms: i32) -> io::Result<Context> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = cstr(&format!("sharebench-{}-{n}", std::process::id()))?;
        let curl = cstr(url)?;
        // SAFETY: nfs_init_context has no preconditions; a null return is handled.
        let raw = unsafe { nfs_init_context() };
        if raw.is_null() {
            return Err(io::Error::other("libnfs: cannot create a context"));
        }
        let ctx = Context { raw };
        // No reconnecting: by default libnfs retries a lost connection for ever, and with
        // the server gone each call spun a core for the whole timeout before it failed. A
        // connection lost during a measurement is that target's failure, said at once.
        // SAFETY: `raw` is a live context owned by `ctx`; libnfs copies the name.
        unsafe {
            nfs_set_dircache(ctx.raw, 0);
            nfs_set_timeout(ctx.raw, timeout_ms);
            nfs_set_autoreconnect(ctx.raw, 0);
            nfs4_set_client_name(ctx.raw, name.as_ptr());
        }
        // SAFETY: `curl` is a NUL-terminated string that outlives the call.
        let parsed = unsafe { nfs_parse_url_dir(ctx.raw, curl.as_ptr()) };
        if parsed.is_null() {
            return Err(ctx.error("parse URL", url, -libc::EINVAL));
        }
        // SAFETY: `parsed` is a valid nfs_url whose strings stay alive until
        // nfs_destroy_url, which runs after nfs_mount returns.
        let rc = unsafe {
            let rc = if (*parsed).server.is_null() || (*parsed).path.is_null() {
                -libc::EINVAL
            } else {
                nfs_mount(ctx.raw, (*parsed).server, (*parsed).path)
            };
            nfs_destroy_url(parsed);
            rc
        };
        if rc != 0 {
            return Err(ctx.error("mount", url, rc));
        }
        Ok(ctx)
    }

    /// The raw context, for the calls by handle (`libnfs_handles`), made on this thread.
    pub(super) fn raw(&self) -> *mut RawContext {
        self.raw
    }

    /// The error of a failed call: the kind from the errno, the text from nfs_get_error.
    pub(super) fn error(&self, op: &str, what: &str, rc: c_int) -> io::Error {
        // SAFETY: `raw` is live; nfs_get_error returns null or a NUL-terminated string
        // owned by the context, copied here before any other call can change it.
        let text = unsafe {
            let p = nfs_get_error(self.raw);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        let errno = if rc < 0 { -rc } else { libc::EIO };
        let kind = io::Error::from_raw_os_error(errno).kind();
        let detail = if text.is_empty() {
            io::Error::from_raw_os_error(errno).to_string()
        } else if text.contains("nfs_service failed") || text.contains("POLLHUP") {
            // libnfs's words for a connection the server closed or lost.
            format!("the connection to the server was lost ({text})")
        } else {
            text
        };
        io::Error::new(kind, format!("nfs {op} {what}: {detail}"))
    }

    fn check(&self, op: &str, what: &str, rc: c_int) -> io::Result<()> {
        if rc < 0 {
            Err(self.error(op, what, rc))
        } else {
            Ok(())
        }
    }

    /// Largest READ and WRITE the server accepts (libnfs caps them at 1 MiB).
    pub fn io_max(&mut self) -> (u64, u64) {
        // SAFETY: `raw` is a live, mounted context.
        unsafe { (nfs_get_readmax(self.raw), nfs_get_writemax(self.raw)) }
    }

    fn path_op(
        &mut self,
        op: &str,
        path: &str,
        f: impl FnOnce(*mut RawContext, *const c_char) -> c_int,
    ) -> io::Result<()> {
        let c = cstr(path)?;
        let rc = f(self.raw, c.as_ptr());
        self.check(op, path, rc)
    }

    pub fn stat(&mut self, path: &str, follow: bool) -> io::Result<Stat64> {
        let mut st = Stat64::default();
        let c = cstr(path)?;
        // SAFETY: `raw` is live, `c` is NUL-terminated, `st` is a writable nfs_stat_64.
        let rc = unsafe {
            if follow {
                nfs_stat64(self.raw, c.as_ptr(), &mut st)
            } else {
                nfs_lstat64(self.raw, c.as_ptr(), &mut st)
            }
        };
        self.check("stat", path, rc).map(|_| st)
    }

    pub fn statvfs(&mut self, path: &str) -> io::Result<Statvfs64> {
        let mut st = Statvfs64::default();
        let c = cstr(path)?;
        // SAFETY: as in `stat`, with an nfs_statvfs_64 to fill.
        let rc = unsafe { nfs_statvfs64(self.raw, c.as_ptr(), &mut st) };
        self.check("statvfs", path, rc).map(|_| st)
    }

    pub fn truncate(&mut self, path: &str, len: u64) -> io::Result<()> {
        // SAFETY: live context and a NUL-terminated path for the duration of the call.
        self.path_op("truncate", path, |n, p| unsafe { nfs_truncate(n, p, len) })
    }

    pub fn mkdir(&mut self, path: &str, mode: u32) -> io::Result<()> {
        // SAFETY: as in `truncate`.
        self.path_op("mkdir", path, |n, p| unsafe {
            nfs_mkdir2(n, p, mode as c_int)
        })
    }

    pub fn rmdir(&mut self, path: &str) -> io::Result<()> {
        // SAFETY: as in `truncate`.
        self.path_op("rmdir", path, |n, p| unsafe { nfs_rmdir(n, p) })
    }

    pub fn unlink(&mut self, path: &str) -> io::Result<()> {
        // SAFETY: as in `truncate`.
        self.path_op("unlink", path, |n, p| unsafe { nfs_unlink(n, p) })
    }

    pub fn chmod(&mut self, path: &str, mode: u32) -> io::Result<()> {
        // SAFETY: as in `truncate`.
        self.path_op("chmod", path, |n, p| unsafe {
            nfs_chmod(n, p, mode as c_int)
        })
    }

    /// Sets access and modification times (the protocol keeps nanoseconds; libnfs takes
    /// microseconds).
    pub fn utimes(&mut self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let mut times = [super::timeval(atime_ns), super::timeval(mtime_ns)];
        // SAFETY: live context, NUL-terminated path, `times` is an array of two timevals
        // as nfs_utimes expects, alive for the call.
        self.path_op("utimes", path, |n, p| unsafe {
            nfs_utimes(n, p, times.as_mut_ptr())
        })
    }

    fn two_paths(
        &mut self,
        op: &str,
        a: &str,
        b: &str,
        f: unsafe extern "C" fn(*mut RawContext, *const c_char, *const c_char) -> c_int,
    ) -> io::Result<()> {
        let (ca, cb) = (cstr(a)?, cstr(b)?);
        // SAFETY: live context, two NUL-terminated strings alive for the call; `f` is one
        // of the libnfs functions of this signature.
        let rc = unsafe { f(self.raw, ca.as_ptr(), cb.as_ptr()) };
        self.check(op, &format!("{a} -> {b}"), rc)
    }

    pub fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.two_paths("rename", from, to, nfs_rename)
    }

    pub fn link(&mut self, existing: &str, new: &str) -> io::Result<()> {
        self.two_paths("link", existing, new, nfs_link)
    }

    pub fn symlink(&mut self, target: &str, link: &str) -> io::Result<()> {
        self.two_paths("symlink", target, link, nfs_symlink)
    }

    pub fn readlink(&mut self, path: &str) -> io::Result<String> {
        let c = cstr(path)?;
        let mut buf: *mut c_char = ptr::null_mut();
        // SAFETY: live context, NUL-terminated path; on success libnfs stores a malloc'd,
        // NUL-terminated string in `buf`, which is copied and freed with free(3) here.
        let rc = unsafe { nfs_readlink2(self.raw, c.as_ptr(), &mut buf) };
        self.check("readlink", path, rc)?;
        if buf.is_null() {
            return Err(io::Error::other(format!("nfs readlink {path}: no target")));
        }
        // SAFETY: see above; `buf` is non-null and owned by us now.
        let s = unsafe {
            let s = CStr::from_ptr(buf).to_string_lossy().into_owned();
            libc::free(buf as *mut c_void);
            s
        };
        Ok(s)
    }

    /// The names in a directory (without `.` and `..`), each with whether it is a directory.
    pub fn readdir(&mut self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let c = cstr(path)?;
        let mut dir: *mut RawDir = ptr::null_mut();
        // SAFETY: live context, NUL-terminated path, `dir` receives an nfsdir on success.
        let rc = unsafe { nfs_opendir(self.raw, c.as_ptr(), &mut dir) };
        self.check("opendir", path, rc)?;
        let mut out = Vec::new();
        // SAFETY: `dir` is the open nfsdir of this context; every entry nfs_readdir returns
        // stays valid until nfs_closedir, and its name is NUL-terminated. No other call on
        // the context happens in between.
        unsafe {
            loop {
                let e = nfs_readdir(self.raw, dir);
                if e.is_null() {
                    break;
                }
                let name = CStr::from_ptr((*e).name).to_string_lossy().into_owned();
                if name == "." || name == ".." {
                    continue;
                }
                let is_dir = (*e).kind == NF_DIR || (*e).mode & libc::S_IFMT == libc::S_IFDIR;
                out.push((name, is_dir));
            }
            nfs_closedir(self.raw, dir);
        }
        Ok(out)
    }

    /// Opens (or creates, with O_CREAT in `flags`) a file; the context moves into the
    /// handle. On failure the context comes back with the error.
    pub fn open(
        self,
        path: &str,
        flags: c_int,
        mode: u32,
    ) -> Result<OpenFile, (Context, io::Error)> {
        let c = match cstr(path) {
            Ok(c) => c,
            Err(e) => return Err((self, e)),
        };
        let mut fh: *mut RawFh = ptr::null_mut();
        // SAFETY: live context, NUL-terminated path, `fh` receives the handle on success.
        let rc = unsafe { nfs_open2(self.raw, c.as_ptr(), flags, mode as c_int, &mut fh) };
        if rc < 0 || fh.is_null() {
            let e = self.error("open", path, if rc < 0 { rc } else { -libc::EIO });
            return Err((self, e));
        }
        Ok(OpenFile {
            ctx: Some(self),
            fh,
        })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: `raw` came from nfs_init_context and is destroyed exactly once; every
        // handle of this context was closed first (an OpenFile owns its context).
        unsafe { nfs_destroy_context(self.raw) }
    }
}

/// An open file and the context it belongs to. `ctx` is `None` only after `close`.
pub struct OpenFile {
    ctx: Option<Context>,
    fh: *mut RawFh,
}

// SAFETY: the handle is only used through its own context, which moves with it (see
// `Context`'s Send).
unsafe impl Send for OpenFile {}

impl OpenFile {
    pub(super) fn ctx(&self) -> &Context {
        self.ctx.as_ref().expect("nfs file used after close")
    }

    pub(super) fn raw(&self) -> (*mut RawContext, *mut RawFh) {
        (self.ctx().raw, self.fh)
    }

    fn count(&self, op: &str, rc: c_int) -> io::Result<usize> {
        if rc < 0 {
            Err(self.ctx().error(op, "file", rc))
        } else {
            Ok(rc as usize)
        }
    }

    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, f) = self.raw();
        // SAFETY: live context and handle; libnfs writes at most `buf.len()` bytes to it.
        let rc = unsafe { nfs_read(n, f, buf.len() as u64, buf.as_mut_ptr().cast()) };
        self.count("read", rc)
    }

    pub fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let (n, f) = self.raw();
        // SAFETY: as in `read`.
        let rc = unsafe { nfs_pread(n, f, offset, buf.len() as u64, buf.as_mut_ptr().cast()) };
        self.count("pread", rc)
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (n, f) = self.raw();
        // SAFETY: live context and handle; libnfs reads `buf.len()` bytes from it.
        let rc = unsafe { nfs_write(n, f, buf.len() as u64, buf.as_ptr().cast()) };
        self.count("write", rc)
    }

    pub fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let (n, f) = self.raw();
        // SAFETY: as in `write`.
        let rc = unsafe { nfs_pwrite(n, f, offset, buf.len() as u64, buf.as_ptr().cast()) };
        self.count("pwrite", rc)
    }

    pub fn seek(&mut self, offset: u64) -> io::Result<()> {
        let (n, f) = self.raw();
        let mut now = 0u64;
        // SAFETY: live context and handle; `now` receives the new offset.
        let rc = unsafe { nfs_lseek(n, f, offset as i64, libc::SEEK_SET, &mut now) };
        self.count("lseek", rc).map(|_| ())
    }

    pub fn fsync(&mut self) -> io::Result<()> {
        let (n, f) = self.raw();
        // SAFETY: live context and handle.
        let rc = unsafe { nfs_fsync(n, f) };
        self.count("fsync", rc).map(|_| ())
    }

    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        let (n, f) = self.raw();
        // SAFETY: live context and handle.
        let rc = unsafe { nfs_ftruncate(n, f, len) };
        self.count("ftruncate", rc).map(|_| ())
    }

    /// Closes the handle and gives the context back, with close's result.
    pub fn close(mut self) -> (Context, io::Result<()>) {
        let (n, f) = self.raw();
        // SAFETY: live context and handle; the handle is closed exactly once (fh is
        // nulled so Drop does not close it again).
        let rc = unsafe { nfs_close(n, f) };
        self.fh = ptr::null_mut();
        let ctx = self.ctx.take().expect("closed twice");
        let res = if rc < 0 {
            Err(ctx.error("close", "file", rc))
        } else {
            Ok(())
        };
        (ctx, res)
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        if let (Some(ctx), false) = (&self.ctx, self.fh.is_null()) {
            // SAFETY: the handle is still open and belongs to `ctx`, which is dropped
            // (destroyed) only after this.
            unsafe {
                nfs_close(ctx.raw, self.fh);
            }
        }
    }
}
