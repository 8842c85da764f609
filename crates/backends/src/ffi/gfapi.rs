//! libgfapi (`<glusterfs/api/glfs.h>`, GlusterFS 10), declared by hand, and a safe wrapper
//! over it: a [`Volume`] is one "virtual mount" of a volume (`glfs_t`), thread-safe, shared
//! by every worker; a [`GlFile`] is an open file (`glfs_fd_t`) that keeps its volume alive;
//! a [`GlQueue`] keeps several reads or writes on one file in flight through the
//! `_async` calls, whose callbacks run on gfapi's own threads.
//! Not here: URL policy and the backend trait (see `crate::gluster`).

use sharebench_core::backend::{IoQueue, QueuedIo};
use sharebench_core::buffer::AlignedBuf;
use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

#[repr(C)]
pub(super) struct RawFs {
    _opaque: [u8; 0],
}
#[repr(C)]
pub(super) struct RawFd {
    _opaque: [u8; 0],
}

type IoCbk = unsafe extern "C" fn(*mut RawFd, isize, *mut c_void, *mut c_void, *mut c_void);

extern "C" {
    fn glfs_new(volname: *const c_char) -> *mut RawFs;
    fn glfs_set_volfile_server(
        fs: *mut RawFs,
        transport: *const c_char,
        host: *const c_char,
        port: c_int,
    ) -> c_int;
    fn glfs_set_logging(fs: *mut RawFs, logfile: *const c_char, loglevel: c_int) -> c_int;
    fn glfs_init(fs: *mut RawFs) -> c_int;
    fn glfs_fini(fs: *mut RawFs) -> c_int;
    fn glfs_close(fd: *mut RawFd) -> c_int;
    fn glfs_pread(
        fd: *mut RawFd,
        buf: *mut c_void,
        count: usize,
        offset: i64,
        flags: c_int,
        poststat: *mut c_void,
    ) -> isize;
    fn glfs_pwrite(
        fd: *mut RawFd,
        buf: *const c_void,
        count: usize,
        offset: i64,
        flags: c_int,
        prestat: *mut c_void,
        poststat: *mut c_void,
    ) -> isize;
    fn glfs_pread_async(
        fd: *mut RawFd,
        buf: *mut c_void,
        count: usize,
        offset: i64,
        flags: c_int,
        cbk: IoCbk,
        data: *mut c_void,
    ) -> c_int;
    fn glfs_pwrite_async(
        fd: *mut RawFd,
        buf: *const c_void,
        count: c_int,
        offset: i64,
        flags: c_int,
        cbk: IoCbk,
        data: *mut c_void,
    ) -> c_int;
    fn glfs_fsync(fd: *mut RawFd, prestat: *mut c_void, poststat: *mut c_void) -> c_int;
    fn glfs_ftruncate(
        fd: *mut RawFd,
        length: i64,
        prestat: *mut c_void,
        poststat: *mut c_void,
    ) -> c_int;
    fn glfs_fallocate(fd: *mut RawFd, keep_size: c_int, offset: i64, len: usize) -> c_int;
    fn glfs_stat(fs: *mut RawFs, path: *const c_char, buf: *mut libc::stat) -> c_int;
    fn glfs_lstat(fs: *mut RawFs, path: *const c_char, buf: *mut libc::stat) -> c_int;
    fn glfs_readlink(fs: *mut RawFs, path: *const c_char, buf: *mut c_char, size: usize) -> isize;
    fn glfs_statvfs(fs: *mut RawFs, path: *const c_char, buf: *mut libc::statvfs) -> c_int;
    fn glfs_opendir(fs: *mut RawFs, path: *const c_char) -> *mut RawFd;
    fn glfs_readdir(fd: *mut RawFd) -> *mut libc::dirent;
    fn glfs_closedir(fd: *mut RawFd) -> c_int;
}

pub(super) fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path with a NUL byte: {s:?}"),
        )
    })
}

/// The error of a failed call (gfapi sets errno), naming the call and the path.
pub(super) fn failed(op: &str, what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("gluster {op} {what}: {e}"))
}

pub(super) fn check(rc: c_int, op: &str, what: &str) -> io::Result<()> {
    if rc < 0 {
        Err(failed(op, what))
    } else {
        Ok(())
    }
}

/// One volume, mounted through gfapi: what `glfs_new` .. `glfs_init` made, until
/// `glfs_fini` when the last handle goes.
pub struct Volume {
    pub(super) raw: *mut RawFs,
}

// SAFETY: gfapi is thread-safe: one glfs_t serves calls from many threads at once (that is
// how fio's gfapi engine and qemu use it); the pointer is only freed in Drop, when no
// other reference (every GlFile holds an Arc) is left.
unsafe impl Send for Volume {}
// SAFETY: as above.
unsafe impl Sync for Volume {}

impl Volume {
    /// Mounts `volume` from the volfile server `host:port` (an IP address); gfapi's log
    /// goes to `log` (a path, or `/dev/null`).
    pub fn mount(host: &str, port: u16, volume: &str, log: &str) -> io::Result<Volume> {
        let (cvol, chost, tcp, clog) = (cstr(volume)?, cstr(host)?, cstr("tcp")?, cstr(log)?);
        // SAFETY: a NUL-terminated name; a null return is handled.
        let raw = unsafe { glfs_new(cvol.as_ptr()) };
        if raw.is_null() {
            return Err(failed("new", volume));
        }
        let v = Volume { raw };
        // SAFETY: `raw` is live; gfapi copies the strings.
        unsafe {
            check(
                glfs_set_volfile_server(v.raw, tcp.as_ptr(), chost.as_ptr(), c_int::from(port)),
                "volfile server",
                host,
            )?;
            glfs_set_logging(v.raw, clog.as_ptr(), 3);
        }
        // SAFETY: `raw` is live and configured.
        check(unsafe { glfs_init(v.raw) }, "mount of volume", volume)?;
        Ok(v)
    }

    pub fn stat(&self, path: &str, follow: bool) -> io::Result<libc::stat> {
        let c = cstr(path)?;
        // SAFETY: an all-zero stat is a valid value of the plain C struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: live volume, NUL-terminated path, `st` receives the result.
        let rc = unsafe {
            if follow {
                glfs_stat(self.raw, c.as_ptr(), &mut st)
            } else {
                glfs_lstat(self.raw, c.as_ptr(), &mut st)
            }
        };
        check(rc, "stat", path).map(|_| st)
    }

    pub fn statvfs(&self, path: &str) -> io::Result<libc::statvfs> {
        let c = cstr(path)?;
        // SAFETY: an all-zero statvfs is a valid value of the plain C struct.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: live volume, NUL-terminated path, `st` receives the result.
        let rc = unsafe { glfs_statvfs(self.raw, c.as_ptr(), &mut st) };
        check(rc, "statvfs", path).map(|_| st)
    }

    pub fn readlink(&self, path: &str) -> io::Result<String> {
        let c = cstr(path)?;
        let mut buf = vec![0u8; 4096];
        // SAFETY: live volume; gfapi writes at most `buf.len()` bytes, not NUL-terminated.
        let n = unsafe { glfs_readlink(self.raw, c.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(failed("readlink", path));
        }
        buf.truncate(n as usize);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// The names in a directory, each with whether it is a directory (`.` and `..` left out).
    pub fn readdir(&self, path: &str) -> io::Result<Vec<(String, bool)>> {
        let c = cstr(path)?;
        // SAFETY: live volume, NUL-terminated path; a null return is an error.
        let dir = unsafe { glfs_opendir(self.raw, c.as_ptr()) };
        if dir.is_null() {
            return Err(failed("opendir", path));
        }
        let mut out = Vec::new();
        loop {
            // SAFETY: `dir` is open; the entry returned stays valid until the next call.
            let ent = unsafe { glfs_readdir(dir) };
            if ent.is_null() {
                break;
            }
            // SAFETY: a valid dirent whose d_name is NUL-terminated.
            let (name, kind) = unsafe {
                (
                    CStr::from_ptr((*ent).d_name.as_ptr())
                        .to_string_lossy()
                        .into_owned(),
                    (*ent).d_type,
                )
            };
            if name != "." && name != ".." {
                out.push((name, kind == libc::DT_DIR));
            }
        }
        // SAFETY: opened above, closed once.
        unsafe { glfs_closedir(dir) };
        Ok(out)
    }
}

impl Drop for Volume {
    fn drop(&mut self) {
        // SAFETY: every handle of the volume is closed (each held an Arc to it); fini once.
        unsafe { glfs_fini(self.raw) };
    }
}

/// An open file of a volume.
pub struct GlFile {
    fd: *mut RawFd,
    _volume: Arc<Volume>,
}

// SAFETY: a glfs_fd_t may be used from any thread (gfapi is thread-safe); `&mut self` on
// every call keeps one user at a time.
unsafe impl Send for GlFile {}

impl GlFile {
    /// Takes an fd gfapi opened (null: the call failed, with errno set).
    pub(super) fn from_raw(fd: *mut RawFd, volume: &Arc<Volume>, what: &str) -> io::Result<GlFile> {
        if fd.is_null() {
            return Err(failed("open", what));
        }
        Ok(GlFile {
            fd,
            _volume: volume.clone(),
        })
    }

    fn count(n: isize, op: &str) -> io::Result<usize> {
        if n < 0 {
            Err(failed(op, "file"))
        } else {
            Ok(n as usize)
        }
    }

    pub fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        // SAFETY: open fd; gfapi writes at most `buf.len()` bytes; no stat wanted.
        let n = unsafe {
            glfs_pread(
                self.fd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                offset as i64,
                0,
                std::ptr::null_mut(),
            )
        };
        Self::count(n, "pread")
    }

    pub fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        // SAFETY: open fd; gfapi reads `buf.len()` bytes; no stats wanted.
        let n = unsafe {
            glfs_pwrite(
                self.fd,
                buf.as_ptr().cast(),
                buf.len(),
                offset as i64,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        Self::count(n, "pwrite")
    }

    pub fn fsync(&mut self) -> io::Result<()> {
        // SAFETY: open fd; no stats wanted.
        let rc = unsafe { glfs_fsync(self.fd, std::ptr::null_mut(), std::ptr::null_mut()) };
        check(rc, "fsync", "file")
    }

    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        // SAFETY: open fd; no stats wanted.
        let rc = unsafe {
            glfs_ftruncate(
                self.fd,
                len as i64,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        check(rc, "ftruncate", "file")
    }

    pub fn allocate(&mut self, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: open fd.
        let rc = unsafe { glfs_fallocate(self.fd, 0, offset as i64, len as usize) };
        check(rc, "fallocate", "file")
    }

    /// Closes the file, with close's result.
    pub fn close(mut self) -> io::Result<()> {
        let fd = std::mem::replace(&mut self.fd, std::ptr::null_mut());
        // SAFETY: open fd, closed once (nulled so Drop does not close it again).
        check(unsafe { glfs_close(fd) }, "close", "file")
    }
}

impl Drop for GlFile {
    fn drop(&mut self) {
        if !self.fd.is_null() {
            // SAFETY: still open; closed once.
            unsafe { glfs_close(self.fd) };
        }
    }
}

/// How long a queue waits for a reply before it calls the volume unreachable.
const STALL: Duration = Duration::from_secs(60);

/// What the callbacks share with the queue: finished requests, and how many are out.
#[derive(Default)]
struct Done {
    ready: VecDeque<(usize, io::Result<usize>)>,
    in_flight: usize,
}

/// What a callback is given: the queue's shared state and which slot it answers.
struct Token {
    done: Arc<(Mutex<Done>, Condvar)>,
    slot: usize,
}

/// A finished request, on one of gfapi's threads: queued for `complete`.
unsafe extern "C" fn on_done(
    _fd: *mut RawFd,
    ret: isize,
    _pre: *mut c_void,
    _post: *mut c_void,
    data: *mut c_void,
) {
    // SAFETY: `data` is a token of `GlQueue::tokens`, which stay allocated and unmoved
    // while a request that names them is in flight (Drop waits for all, or leaks them).
    let token = unsafe { &*(data as *const Token) };
    let res = if ret < 0 {
        let e = io::Error::from_raw_os_error(-(ret as i32));
        Err(io::Error::new(e.kind(), format!("gluster async I/O: {e}")))
    } else {
        Ok(ret as usize)
    };
    let (lock, ready) = &*token.done;
    let mut d = lock.lock().unwrap_or_else(|p| p.into_inner());
    d.in_flight -= 1;
    d.ready.push_back((token.slot, res));
    ready.notify_one();
}

/// Up to `depth` reads or writes on one file in flight through gfapi's async calls.
pub struct GlQueue<'f> {
    file: &'f mut GlFile,
    slots: Vec<AlignedBuf>,
    tokens: Vec<Token>,
    done: Arc<(Mutex<Done>, Condvar)>,
}

impl<'f> GlQueue<'f> {
    pub fn new(file: &'f mut GlFile, depth: usize, slot_len: usize) -> GlQueue<'f> {
        let done = Arc::new((Mutex::new(Done::default()), Condvar::new()));
        GlQueue {
            file,
            slots: (0..depth).map(|_| AlignedBuf::filled(slot_len)).collect(),
            tokens: (0..depth)
                .map(|slot| Token {
                    done: done.clone(),
                    slot,
                })
                .collect(),
            done,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Done> {
        self.done.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl IoQueue for GlQueue<'_> {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        self.slots[slot].as_mut_slice()
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        let token = &self.tokens[io.slot] as *const Token as *mut c_void;
        let buf = self.slots[io.slot].as_mut_slice()[..io.len].as_mut_ptr();
        self.lock().in_flight += 1;
        // SAFETY: open fd; the slot's buffer and token stay allocated and unmoved until the
        // callback has run (Drop waits for every request, or leaks them).
        let rc = unsafe {
            if io.write {
                glfs_pwrite_async(
                    self.file.fd,
                    buf.cast(),
                    io.len as c_int,
                    io.offset as i64,
                    0,
                    on_done,
                    token,
                )
            } else {
                glfs_pread_async(
                    self.file.fd,
                    buf.cast(),
                    io.len,
                    io.offset as i64,
                    0,
                    on_done,
                    token,
                )
            }
        };
        if rc < 0 {
            self.lock().in_flight -= 1;
            return Err(failed("queue", "request"));
        }
        Ok(())
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        let (lock, ready) = &*self.done;
        let mut d = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(done) = d.ready.pop_front() {
                return Ok(done);
            }
            if d.in_flight == 0 {
                return Err(io::Error::other("gluster: no request in flight"));
            }
            let (next, timeout) = ready
                .wait_timeout(d, STALL)
                .unwrap_or_else(|p| p.into_inner());
            d = next;
            if timeout.timed_out() && d.ready.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("gluster: no reply in {} s", STALL.as_secs()),
                ));
            }
        }
    }
}

impl Drop for GlQueue<'_> {
    fn drop(&mut self) {
        let (lock, ready) = &*self.done;
        let mut d = lock.lock().unwrap_or_else(|p| p.into_inner());
        let began = std::time::Instant::now();
        while d.in_flight > 0 && began.elapsed() < STALL {
            d = ready
                .wait_timeout(d, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if d.in_flight > 0 {
            // gfapi may still write into the buffers and call back with the tokens.
            drop(d);
            std::mem::forget(std::mem::take(&mut self.slots));
            std::mem::forget(std::mem::take(&mut self.tokens));
        }
    }
}
