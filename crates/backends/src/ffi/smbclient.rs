//! libsmbclient (Samba 4.17, `<samba-4.0/libsmbclient.h>`) through its context API,
//! declared by hand, and a safe wrapper: a [`Context`] (one client configuration with its
//! credentials, connections cached inside) and [`File`]s opened on it.
//!
//! Thread safety: libsmbclient is not thread-safe. Its talloc stack frames, loadparm
//! configuration and debug state are process globals; `smbc_thread_posix()`, which would
//! make the stack frames per thread, is declared in the header but not exported by Debian's
//! libsmbclient.so.0 (4.17), and even with it loadparm stays global. Separate contexts per
//! thread are therefore not safe, and every call into the library, on any context, holds
//! one process-wide lock ([`LIB`]): SMB calls from several workers are serialised.
//! Not here: URL policy, passwords' origin, the backend trait (see `crate::smb`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard};

#[repr(C)]
struct RawCtx {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawFile {
    _opaque: [u8; 0],
}

/// `struct smbc_dirent`: `name` is the first byte of the NUL-terminated name.
#[repr(C)]
struct RawDirent {
    smbc_type: u32,
    dirlen: u32,
    commentlen: u32,
    comment: *mut c_char,
    namelen: u32,
    name: [c_char; 1],
}

const SMBC_DIR: u32 = 7;

type AuthFn = unsafe extern "C" fn(
    *mut RawCtx,
    *const c_char,
    *const c_char,
    *mut c_char,
    c_int,
    *mut c_char,
    c_int,
    *mut c_char,
    c_int,
);
type LogFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_char);
type OpenFn = unsafe extern "C" fn(*mut RawCtx, *const c_char, c_int, libc::mode_t) -> *mut RawFile;
type ReadFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile, *mut c_void, usize) -> isize;
type WriteFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile, *const c_void, usize) -> isize;
type LseekFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile, libc::off_t, c_int) -> libc::off_t;
type FtruncateFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile, libc::off_t) -> c_int;
type CloseFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile) -> c_int;
type StatFn = unsafe extern "C" fn(*mut RawCtx, *const c_char, *mut libc::stat) -> c_int;
type StatVfsFn = unsafe extern "C" fn(*mut RawCtx, *mut c_char, *mut libc::statvfs) -> c_int;
type PathFn = unsafe extern "C" fn(*mut RawCtx, *const c_char) -> c_int;
type PathModeFn = unsafe extern "C" fn(*mut RawCtx, *const c_char, libc::mode_t) -> c_int;
type RenameFn =
    unsafe extern "C" fn(*mut RawCtx, *const c_char, *mut RawCtx, *const c_char) -> c_int;
type OpendirFn = unsafe extern "C" fn(*mut RawCtx, *const c_char) -> *mut RawFile;
type UtimesFn = unsafe extern "C" fn(*mut RawCtx, *const c_char, *mut libc::timeval) -> c_int;
type ReaddirFn = unsafe extern "C" fn(*mut RawCtx, *mut RawFile) -> *mut RawDirent;

extern "C" {
    fn smbc_new_context() -> *mut RawCtx;
    fn smbc_init_context(c: *mut RawCtx) -> *mut RawCtx;
    fn smbc_free_context(c: *mut RawCtx, shutdown_ctx: c_int) -> c_int;
    fn smbc_setDebug(c: *mut RawCtx, debug: c_int);
    fn smbc_setOptionDebugToStderr(c: *mut RawCtx, b: c_int);
    fn smbc_setLogCallback(c: *mut RawCtx, private_ptr: *mut c_void, f: Option<LogFn>);
    fn smbc_setConfiguration(c: *mut RawCtx, file: *const c_char) -> c_int;
    fn smbc_setOptionProtocols(c: *mut RawCtx, min: *const c_char, max: *const c_char) -> c_int;
    fn smbc_setUser(c: *mut RawCtx, user: *const c_char);
    fn smbc_setWorkgroup(c: *mut RawCtx, workgroup: *const c_char);
    fn smbc_setPort(c: *mut RawCtx, port: u16);
    fn smbc_setTimeout(c: *mut RawCtx, timeout_ms: c_int);
    fn smbc_setOptionNoAutoAnonymousLogin(c: *mut RawCtx, b: c_int);
    fn smbc_setOptionUseKerberos(c: *mut RawCtx, b: c_int);
    fn smbc_setOptionUseCCache(c: *mut RawCtx, b: c_int);
    fn smbc_setOptionUserData(c: *mut RawCtx, data: *mut c_void);
    fn smbc_getOptionUserData(c: *mut RawCtx) -> *mut c_void;
    fn smbc_setFunctionAuthDataWithContext(c: *mut RawCtx, f: Option<AuthFn>);
    fn smbc_set_credentials_with_fallback(
        c: *mut RawCtx,
        workgroup: *const c_char,
        user: *const c_char,
        password: *const c_char,
    );
    fn smbc_getFunctionOpen(c: *mut RawCtx) -> Option<OpenFn>;
    fn smbc_getFunctionRead(c: *mut RawCtx) -> Option<ReadFn>;
    fn smbc_getFunctionWrite(c: *mut RawCtx) -> Option<WriteFn>;
    fn smbc_getFunctionLseek(c: *mut RawCtx) -> Option<LseekFn>;
    fn smbc_getFunctionFtruncate(c: *mut RawCtx) -> Option<FtruncateFn>;
    fn smbc_getFunctionClose(c: *mut RawCtx) -> Option<CloseFn>;
    fn smbc_getFunctionStat(c: *mut RawCtx) -> Option<StatFn>;
    fn smbc_getFunctionStatVFS(c: *mut RawCtx) -> Option<StatVfsFn>;
    fn smbc_getFunctionUnlink(c: *mut RawCtx) -> Option<PathFn>;
    fn smbc_getFunctionRmdir(c: *mut RawCtx) -> Option<PathFn>;
    fn smbc_getFunctionMkdir(c: *mut RawCtx) -> Option<PathModeFn>;
    fn smbc_getFunctionChmod(c: *mut RawCtx) -> Option<PathModeFn>;
    fn smbc_getFunctionRename(c: *mut RawCtx) -> Option<RenameFn>;
    fn smbc_getFunctionOpendir(c: *mut RawCtx) -> Option<OpendirFn>;
    fn smbc_getFunctionReaddir(c: *mut RawCtx) -> Option<ReaddirFn>;
    fn smbc_getFunctionClosedir(c: *mut RawCtx) -> Option<CloseFn>;
    fn smbc_getFunctionUtimes(c: *mut RawCtx) -> Option<UtimesFn>;
}

/// The process-wide lock held during every libsmbclient call (see the module doc).
static LIB: Mutex<()> = Mutex::new(());

fn lib() -> MutexGuard<'static, ()> {
    LIB.lock().unwrap_or_else(|p| p.into_inner())
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("string with a NUL byte: {s:?}"),
        )
    })
}

/// The error of a failed call, from errno (libsmbclient reports nothing else).
fn last_error(op: &str, what: &str) -> io::Error {
    let os = io::Error::last_os_error();
    io::Error::new(os.kind(), format!("smb {op} {what}: {os}"))
}

/// How to connect. `password` is handed to the library only through the auth callback
/// and `smbc_set_credentials_with_fallback`; nothing here prints it.
pub struct Options<'a> {
    pub workgroup: &'a str,
    pub user: &'a str,
    pub password: &'a str,
    pub port: u16,
    /// `client min protocol` / `client max protocol`, e.g. "SMB3_00" and "SMB3_11".
    pub min_protocol: &'a str,
    pub max_protocol: &'a str,
}

/// Credentials the auth callback copies out; zeroed on drop.
struct Creds {
    workgroup: CString,
    user: CString,
    password: CString,
}

impl Drop for Creds {
    fn drop(&mut self) {
        let mut pw = std::mem::take(&mut self.password).into_bytes_with_nul();
        pw.fill(0);
        std::hint::black_box(&pw);
    }
}

/// Copies `src` into the C buffer `dst` of `cap` bytes, truncating, NUL-terminated.
///
/// # Safety
/// `dst` is null or points to `cap` writable bytes.
unsafe fn put(dst: *mut c_char, cap: c_int, src: &CStr) {
    if dst.is_null() || cap <= 0 {
        return;
    }
    let bytes = src.to_bytes();
    let n = bytes.len().min(cap as usize - 1);
    // SAFETY: `n + 1 <= cap` bytes are written into `dst`, as the caller guarantees.
    unsafe {
        ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast::<u8>(), n);
        *dst.add(n) = 0;
    }
}

/// Answers libsmbclient's request for credentials with the context's own.
unsafe extern "C" fn auth_callback(
    c: *mut RawCtx,
    _srv: *const c_char,
    _shr: *const c_char,
    wg: *mut c_char,
    wglen: c_int,
    un: *mut c_char,
    unlen: c_int,
    pw: *mut c_char,
    pwlen: c_int,
) {
    // SAFETY: called by libsmbclient on the calling thread (which holds LIB) with a live
    // context whose user data is the `Creds` box its `Context` owns, and with buffers of
    // the given sizes.
    unsafe {
        let creds = smbc_getOptionUserData(c) as *const Creds;
        if creds.is_null() {
            return;
        }
        put(wg, wglen, &(*creds).workgroup);
        put(un, unlen, &(*creds).user);
        put(pw, pwlen, &(*creds).password);
    }
}

/// Swallows libsmbclient's log output (it would otherwise go to stdout or stderr).
unsafe extern "C" fn discard_log(_private: *mut c_void, _level: c_int, _msg: *const c_char) {}

/// The context's functions, fetched once.
struct Fns {
    open: OpenFn,
    read: ReadFn,
    write: WriteFn,
    lseek: LseekFn,
    ftruncate: FtruncateFn,
    close: CloseFn,
    stat: StatFn,
    statvfs: StatVfsFn,
    unlink: PathFn,
    rmdir: PathFn,
    mkdir: PathModeFn,
    chmod: PathModeFn,
    rename: RenameFn,
    opendir: OpendirFn,
    readdir: ReaddirFn,
    closedir: CloseFn,
    utimes: UtimesFn,
}

/// A client context: configuration, credentials and its cached server connections.
pub struct Context {
    raw: *mut RawCtx,
    fns: Fns,
    _creds: Box<Creds>,
}

// SAFETY: the context is only ever touched with LIB held, which serialises every call into
// libsmbclient process-wide; it has no thread affinity beyond that.
unsafe impl Send for Context {}
// SAFETY: as above: shared references only reach the library under LIB.
unsafe impl Sync for Context {}

/// Client settings loaded into libsmbclient's (global) configuration: signing required,
/// SMB3 only. There is no API for `client signing`, so it goes through a private file.
fn load_client_config(raw: *mut RawCtx, opts: &Options) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "sharebench-smbclient-{}-{n}.conf",
        std::process::id()
    ));
    let text = format!(
        "[global]\n\tclient signing = required\n\tclient ipc signing = required\n\tclient min protocol = {}\n\tclient max protocol = {}\n\tlog level = 0\n",
        opts.min_protocol, opts.max_protocol
    );
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    f.write_all(text.as_bytes())?;
    drop(f);
    let cpath = cstr(&path.to_string_lossy())?;
    // SAFETY: live context, NUL-terminated path; caller holds LIB.
    let rc = unsafe { smbc_setConfiguration(raw, cpath.as_ptr()) };
    let _ = std::fs::remove_file(&path);
    if rc != 0 {
        return Err(io::Error::other(
            "libsmbclient: cannot load the client configuration",
        ));
    }
    let (min, max) = (cstr(opts.min_protocol)?, cstr(opts.max_protocol)?);
    // SAFETY: live context, NUL-terminated strings; caller holds LIB.
    if unsafe { smbc_setOptionProtocols(raw, min.as_ptr(), max.as_ptr()) } == 0 {
        return Err(io::Error::other(format!(
            "libsmbclient refused protocols {}..{}",
            opts.min_protocol, opts.max_protocol
        )));
    }
    Ok(())
}

impl Context {
    /// A configured, initialised context. It connects lazily, on the first call.
    pub fn new(opts: &Options) -> io::Result<Context> {
        let creds = Box::new(Creds {
            workgroup: cstr(opts.workgroup)?,
            user: cstr(opts.user)?,
            password: cstr(opts.password)?,
        });
        let _g = lib();
        // SAFETY: no preconditions; null is handled.
        let raw = unsafe { smbc_new_context() };
        if raw.is_null() {
            return Err(io::Error::other("libsmbclient: cannot create a context"));
        }
        let free = |raw: *mut RawCtx| {
            // SAFETY: `raw` is a live context of ours that nothing else references; LIB held.
            unsafe { smbc_free_context(raw, 1) };
        };
        // SAFETY: `raw` is live and not yet shared; LIB held. Logging is global: it goes to
        // a callback that drops it, never to stdout.
        unsafe {
            smbc_setOptionDebugToStderr(raw, 1);
            smbc_setLogCallback(raw, ptr::null_mut(), Some(discard_log));
            smbc_setDebug(raw, 0);
        }
        if let Err(e) = load_client_config(raw, opts) {
            free(raw);
            return Err(e);
        }
        // SAFETY: `raw` is live and not yet shared, the strings are NUL-terminated and live
        // in `creds`, which outlives the context (it is dropped after it); LIB held.
        unsafe {
            smbc_setUser(raw, creds.user.as_ptr());
            if !opts.workgroup.is_empty() {
                smbc_setWorkgroup(raw, creds.workgroup.as_ptr());
            }
            smbc_setPort(raw, opts.port);
            smbc_setTimeout(raw, 60_000);
            smbc_setOptionNoAutoAnonymousLogin(raw, 1);
            smbc_setOptionUseKerberos(raw, 0);
            smbc_setOptionUseCCache(raw, 0);
            smbc_setOptionUserData(raw, &*creds as *const Creds as *mut c_void);
            smbc_setFunctionAuthDataWithContext(raw, Some(auth_callback));
        }
        // SAFETY: `raw` is live and configured; on failure it is still ours to free.
        if unsafe { smbc_init_context(raw) }.is_null() {
            let e = io::Error::last_os_error();
            free(raw);
            return Err(io::Error::new(
                e.kind(),
                format!("libsmbclient: cannot initialise a context: {e}"),
            ));
        }
        // SAFETY: `raw` is initialised; the strings live in `creds`; LIB held.
        unsafe {
            smbc_set_credentials_with_fallback(
                raw,
                creds.workgroup.as_ptr(),
                creds.user.as_ptr(),
                creds.password.as_ptr(),
            );
        }
        // SAFETY: `raw` is initialised; the getters only read its function table.
        let fns = unsafe {
            (|| {
                Some(Fns {
                    open: smbc_getFunctionOpen(raw)?,
                    read: smbc_getFunctionRead(raw)?,
                    write: smbc_getFunctionWrite(raw)?,
                    lseek: smbc_getFunctionLseek(raw)?,
                    ftruncate: smbc_getFunctionFtruncate(raw)?,
                    close: smbc_getFunctionClose(raw)?,
                    stat: smbc_getFunctionStat(raw)?,
                    statvfs: smbc_getFunctionStatVFS(raw)?,
                    unlink: smbc_getFunctionUnlink(raw)?,
                    rmdir: smbc_getFunctionRmdir(raw)?,
                    mkdir: smbc_getFunctionMkdir(raw)?,
                    chmod: smbc_getFunctionChmod(raw)?,
                    rename: smbc_getFunctionRename(raw)?,
                    opendir: smbc_getFunctionOpendir(raw)?,
                    readdir: smbc_getFunctionReaddir(raw)?,
                    closedir: smbc_getFunctionClosedir(raw)?,
                    utimes: smbc_getFunctionUtimes(raw)?,
                })
            })()
        };
        let Some(fns) = fns else {
            free(raw);
            return Err(io::Error::other(
                "libsmbclient: a context function is missing",
            ));
        };
        Ok(Context {
            raw,
            fns,
            _creds: creds,
        })
    }

    pub fn stat(&self, url: &str) -> io::Result<libc::stat> {
        let c = cstr(url)?;
        // SAFETY: an all-zero `struct stat` is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let _g = lib();
        // SAFETY: live context, NUL-terminated URL, a writable struct stat; LIB held.
        let rc = unsafe { (self.fns.stat)(self.raw, c.as_ptr(), &mut st) };
        if rc < 0 {
            return Err(last_error("stat", url));
        }
        Ok(st)
    }

    pub fn statvfs(&self, url: &str) -> io::Result<libc::statvfs> {
        let c = cstr(url)?;
        // SAFETY: an all-zero `struct statvfs` is a valid value.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let _g = lib();
        // SAFETY: as in `stat`; libsmbclient does not write through the path pointer.
        let rc = unsafe { (self.fns.statvfs)(self.raw, c.as_ptr() as *mut c_char, &mut st) };
        if rc < 0 {
            return Err(last_error("statvfs", url));
        }
        Ok(st)
    }

    fn path_call(&self, op: &str, url: &str, f: PathFn) -> io::Result<()> {
        let c = cstr(url)?;
        let _g = lib();
        // SAFETY: live context, NUL-terminated URL, `f` one of this context's functions.
        if unsafe { f(self.raw, c.as_ptr()) } < 0 {
            return Err(last_error(op, url));
        }
        Ok(())
    }

    fn mode_call(&self, op: &str, url: &str, mode: u32, f: PathModeFn) -> io::Result<()> {
        let c = cstr(url)?;
        let _g = lib();
        // SAFETY: as in `path_call`.
        if unsafe { f(self.raw, c.as_ptr(), mode as libc::mode_t) } < 0 {
            return Err(last_error(op, url));
        }
        Ok(())
    }

    pub fn unlink(&self, url: &str) -> io::Result<()> {
        self.path_call("unlink", url, self.fns.unlink)
    }

    pub fn rmdir(&self, url: &str) -> io::Result<()> {
        self.path_call("rmdir", url, self.fns.rmdir)
    }

    pub fn mkdir(&self, url: &str, mode: u32) -> io::Result<()> {
        self.mode_call("mkdir", url, mode, self.fns.mkdir)
    }

    pub fn chmod(&self, url: &str, mode: u32) -> io::Result<()> {
        self.mode_call("chmod", url, mode, self.fns.chmod)
    }

    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        let _g = lib();
        // SAFETY: live context (used as both source and target context), NUL-terminated
        // URLs; LIB held.
        if unsafe { (self.fns.rename)(self.raw, a.as_ptr(), self.raw, b.as_ptr()) } < 0 {
            return Err(last_error("rename", &format!("{from} -> {to}")));
        }
        Ok(())
    }

    /// Sets access and modification times, given as timevals (microseconds).
    pub fn utimes(&self, url: &str, atime: libc::timeval, mtime: libc::timeval) -> io::Result<()> {
        let c = cstr(url)?;
        let mut times = [atime, mtime];
        let _g = lib();
        // SAFETY: live context, NUL-terminated URL, an array of two timevals alive for the
        // call; LIB held.
        if unsafe { (self.fns.utimes)(self.raw, c.as_ptr(), times.as_mut_ptr()) } < 0 {
            return Err(last_error("utimes", url));
        }
        Ok(())
    }

    /// Names in a directory (without `.` and `..`), each with whether it is a directory.
    pub fn readdir(&self, url: &str) -> io::Result<Vec<(String, bool)>> {
        let c = cstr(url)?;
        let _g = lib();
        // SAFETY: live context, NUL-terminated URL; LIB held throughout, so nothing else
        // touches the directory handle, whose entries stay valid until the next readdir.
        unsafe {
            let dir = (self.fns.opendir)(self.raw, c.as_ptr());
            if dir.is_null() {
                return Err(last_error("opendir", url));
            }
            let mut out = Vec::new();
            loop {
                let e = (self.fns.readdir)(self.raw, dir);
                if e.is_null() {
                    break;
                }
                let name = CStr::from_ptr(ptr::addr_of!((*e).name).cast::<c_char>())
                    .to_string_lossy()
                    .into_owned();
                if name != "." && name != ".." {
                    out.push((name, (*e).smbc_type == SMBC_DIR));
                }
            }
            (self.fns.closedir)(self.raw, dir);
            Ok(out)
        }
    }

    /// Opens a file with open(2) flags; it keeps the context alive.
    pub fn open(self: &Arc<Self>, url: &str, flags: c_int, mode: u32) -> io::Result<File> {
        let c = cstr(url)?;
        let _g = lib();
        // SAFETY: live context, NUL-terminated URL; LIB held.
        let raw = unsafe { (self.fns.open)(self.raw, c.as_ptr(), flags, mode as libc::mode_t) };
        if raw.is_null() {
            return Err(last_error("open", url));
        }
        Ok(File {
            ctx: self.clone(),
            raw,
        })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let _g = lib();
        // SAFETY: every File holds an Arc of this context, so none is open any more; the
        // context is freed exactly once, with LIB held.
        unsafe {
            smbc_free_context(self.raw, 1);
        }
    }
}

/// An open file; positional calls seek and transfer under one hold of the lock, so they
/// are atomic with respect to every other libsmbclient call.
pub struct File {
    ctx: Arc<Context>,
    raw: *mut RawFile,
}

// SAFETY: the handle is only used with LIB held (see Context).
unsafe impl Send for File {}

impl File {
    fn seek_locked(&self, offset: u64) -> io::Result<()> {
        // SAFETY: live context and file; the caller holds LIB.
        let r = unsafe {
            (self.ctx.fns.lseek)(
                self.ctx.raw,
                self.raw,
                offset as libc::off_t,
                libc::SEEK_SET,
            )
        };
        if r < 0 {
            return Err(last_error("lseek", "file"));
        }
        Ok(())
    }

    /// Reads up to `buf.len()` bytes at `offset`.
    pub fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let _g = lib();
        self.seek_locked(offset)?;
        // SAFETY: live context and file, `buf` writable for its length; LIB held.
        let n = unsafe {
            (self.ctx.fns.read)(self.ctx.raw, self.raw, buf.as_mut_ptr().cast(), buf.len())
        };
        if n < 0 {
            return Err(last_error("read", "file"));
        }
        Ok(n as usize)
    }

    /// Writes `buf` at `offset`; returns the bytes written.
    pub fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let _g = lib();
        self.seek_locked(offset)?;
        // SAFETY: live context and file, `buf` readable for its length; LIB held.
        let n =
            unsafe { (self.ctx.fns.write)(self.ctx.raw, self.raw, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(last_error("write", "file"));
        }
        Ok(n as usize)
    }

    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        let _g = lib();
        // SAFETY: live context and file; LIB held.
        if unsafe { (self.ctx.fns.ftruncate)(self.ctx.raw, self.raw, len as libc::off_t) } < 0 {
            return Err(last_error("ftruncate", "file"));
        }
        Ok(())
    }

    /// Closes the file, reporting the server's answer.
    pub fn close(mut self) -> io::Result<()> {
        let _g = lib();
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        // SAFETY: live context and file, closed exactly once (raw is nulled for Drop).
        if unsafe { (self.ctx.fns.close)(self.ctx.raw, raw) } < 0 {
            return Err(last_error("close", "file"));
        }
        Ok(())
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let _g = lib();
        // SAFETY: the file is still open on its live context; LIB held.
        unsafe {
            (self.ctx.fns.close)(self.ctx.raw, self.raw);
        }
    }
}
