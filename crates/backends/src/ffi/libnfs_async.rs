//! `--iodepth` over libnfs: READs and WRITEs on one open file kept in flight through
//! libnfs 4.0's asynchronous calls (`nfs_pread_async`, `nfs_pwrite_async`) and its event
//! loop (`nfs_which_events`, `nfs_service`) on the file's own connection, as a kernel
//! client keeps several RPCs in flight. Each slot's buffer belongs to the queue; a request's
//! callback finds its slot through a token whose address is fixed for the queue's life,
//! and dropping the queue waits for every request still in flight (or, if the connection
//! is lost, leaves the memory allocated, since a late callback may still write it).
//! With `nconnect`, the file is open on several connections and requests go to them in
//! turn; the queue polls every connection's socket.
//! Not: vectored calls (a vectored request is one READ or WRITE of its whole length, which
//! libnfs splits at the server's maximum).

use super::libnfs::{OpenFile, RawContext, RawFh};
use sharebench_core::backend::{IoQueue, QueuedIo};
use std::collections::VecDeque;
use std::ffi::{c_int, c_void, CStr};
use std::io;
use std::time::{Duration, Instant};

type NfsCb = unsafe extern "C" fn(c_int, *mut RawContext, *mut c_void, *mut c_void);

extern "C" {
    fn nfs_pread_async(
        nfs: *mut RawContext,
        fh: *mut RawFh,
        offset: u64,
        count: u64,
        cb: NfsCb,
        private_data: *mut c_void,
    ) -> c_int;
    fn nfs_pwrite_async(
        nfs: *mut RawContext,
        fh: *mut RawFh,
        offset: u64,
        count: u64,
        buf: *const c_void,
        cb: NfsCb,
        private_data: *mut c_void,
    ) -> c_int;
    fn nfs_get_fd(nfs: *mut RawContext) -> c_int;
    fn nfs_which_events(nfs: *mut RawContext) -> c_int;
    fn nfs_service(nfs: *mut RawContext, revents: c_int) -> c_int;
}

/// How long the queue waits without any reply before it calls the connection lost (the
/// synchronous calls' RPC timeout is a minute too).
const STALL: Duration = Duration::from_secs(60);

/// What the callbacks write: the slots' buffers and what completed.
struct State {
    bufs: Vec<Vec<u8>>,
    /// Per slot: (reading, length) of the request in flight.
    asked: Vec<(bool, usize)>,
    ready: VecDeque<(usize, io::Result<usize>)>,
    in_flight: usize,
}

/// What a callback is given: where the state is, and which slot it answers.
struct Token {
    state: *mut State,
    slot: usize,
}

/// A reply: the data is copied into the slot (reads) and the result queued.
unsafe extern "C" fn on_reply(
    status: c_int,
    _nfs: *mut RawContext,
    data: *mut c_void,
    private_data: *mut c_void,
) {
    // SAFETY: `private_data` is a token of `NfsQueue::tokens`, which is neither moved nor
    // freed while a request that names it is in flight (see NfsQueue's Drop), and callbacks
    // run inside nfs_service on the thread that owns the queue, so nothing else touches the
    // state meanwhile.
    let (state, slot) = unsafe {
        let t = &*(private_data as *const Token);
        (&mut *t.state, t.slot)
    };
    let (reading, len) = state.asked[slot];
    let res = if status < 0 {
        // SAFETY: on failure libnfs passes an error string (or null) as `data`.
        let text = unsafe {
            if data.is_null() {
                String::new()
            } else {
                CStr::from_ptr(data as *const std::ffi::c_char)
                    .to_string_lossy()
                    .into_owned()
            }
        };
        let kind = io::Error::from_raw_os_error(-status).kind();
        Err(io::Error::new(
            kind,
            format!(
                "nfs async {}: {text}",
                if reading { "read" } else { "write" }
            ),
        ))
    } else {
        let n = (status as usize).min(len);
        if reading && n > 0 {
            // SAFETY: on a successful read libnfs passes `status` bytes at `data`.
            let got = unsafe { std::slice::from_raw_parts(data as *const u8, n) };
            state.bufs[slot][..n].copy_from_slice(got);
        }
        Ok(n)
    };
    state.in_flight -= 1;
    state.ready.push_back((slot, res));
}

/// Up to `depth` requests in flight on one file's connections.
pub struct NfsQueue<'f> {
    /// The file, open on each of its connections (one unless `nconnect`).
    files: Vec<&'f mut OpenFile>,
    /// The connection the next request goes to.
    next: usize,
    /// Owned through a raw pointer (from `Box::into_raw`) because callbacks write it while
    /// the queue is borrowed; freed in Drop once nothing is in flight.
    state: *mut State,
    tokens: Vec<Token>,
    /// The largest WRITE this connection encodes, if limited (see `crate::nfs::V4_MAX_WRITE`).
    max_write: Option<usize>,
}

impl<'f> NfsQueue<'f> {
    pub fn new(
        files: Vec<&'f mut OpenFile>,
        depth: usize,
        slot_len: usize,
        max_write: Option<usize>,
    ) -> NfsQueue<'f> {
        assert!(!files.is_empty(), "a queue needs an open file");
        let state = Box::into_raw(Box::new(State {
            bufs: vec![vec![0xA5; slot_len]; depth],
            asked: vec![(false, 0); depth],
            ready: VecDeque::new(),
            in_flight: 0,
        }));
        let tokens = (0..depth).map(|slot| Token { state, slot }).collect();
        NfsQueue {
            files,
            next: 0,
            state,
            tokens,
            max_write,
        }
    }

    fn in_flight(&self) -> usize {
        // SAFETY: `state` is live until Drop; no callback runs outside `service`.
        unsafe { (*self.state).in_flight }
    }

    /// Waits up to 100 ms for any connection to be ready and lets libnfs handle each, which
    /// runs the callbacks of the replies that arrived. An error means a connection is lost.
    fn service(&mut self) -> io::Result<()> {
        let mut pfds: Vec<libc::pollfd> = self
            .files
            .iter()
            .map(|f| {
                let (ctx, _) = f.raw();
                // SAFETY: `ctx` is the file's live context, used from this thread only.
                let (fd, events) = unsafe { (nfs_get_fd(ctx), nfs_which_events(ctx)) };
                libc::pollfd {
                    fd,
                    events: events as libc::c_short,
                    revents: 0,
                }
            })
            .collect();
        // SAFETY: `pfds` is a valid array of that many pollfds.
        let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 100) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        for (f, p) in self.files.iter().zip(&pfds) {
            // A timed-out poll services every connection (libnfs's own timeouts run there).
            if rc > 0 && p.revents == 0 {
                continue;
            }
            let (ctx, _) = f.raw();
            // SAFETY: as above; callbacks it runs write only the state (see `on_reply`).
            if unsafe { nfs_service(ctx, c_int::from(p.revents)) } < 0 {
                return Err(f.ctx().error("service", "connection", -libc::EIO));
            }
        }
        Ok(())
    }
}

impl IoQueue for NfsQueue<'_> {
    fn depth(&self) -> usize {
        self.tokens.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        // SAFETY: the slot is free (not in flight), so no callback writes its buffer.
        unsafe {
            let st = &mut *self.state;
            &mut st.bufs[slot]
        }
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        if let (true, Some(max)) = (io.write, self.max_write) {
            if io.len > max {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("NFSv4 write of {} bytes: libnfs 4.0 cannot encode NFSv4 WRITEs over {max} bytes; use version=3, or record sizes of at most 3k", io.len),
                ));
            }
        }
        let file = &self.files[self.next % self.files.len()];
        self.next = self.next.wrapping_add(1);
        let (ctx, fh) = file.raw();
        let token = &mut self.tokens[io.slot] as *mut Token as *mut c_void;
        // SAFETY: the state is live; the slot is free, so no callback touches it now.
        let buf = unsafe {
            let st = &mut *self.state;
            st.asked[io.slot] = (!io.write, io.len);
            st.bufs[io.slot].as_ptr()
        };
        // SAFETY: live context and handle; the buffer (written requests) and the token stay
        // allocated and unmoved until the callback has run (Drop waits for it, or leaks).
        let rc = unsafe {
            if io.write {
                nfs_pwrite_async(
                    ctx,
                    fh,
                    io.offset,
                    io.len as u64,
                    buf.cast(),
                    on_reply,
                    token,
                )
            } else {
                nfs_pread_async(ctx, fh, io.offset, io.len as u64, on_reply, token)
            }
        };
        if rc < 0 {
            return Err(file.ctx().error("queue", "request", rc));
        }
        // SAFETY: as above.
        unsafe { (*self.state).in_flight += 1 };
        Ok(())
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        let mut last_reply = Instant::now();
        loop {
            // SAFETY: the state is live and no callback runs outside `service`.
            if let Some(done) = unsafe { (*self.state).ready.pop_front() } {
                return Ok(done);
            }
            if self.in_flight() == 0 {
                return Err(io::Error::other("nfs: no request in flight"));
            }
            if last_reply.elapsed() > STALL {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("nfs: no reply in {} s", STALL.as_secs()),
                ));
            }
            let before = self.in_flight();
            self.service()?;
            if self.in_flight() < before {
                last_reply = Instant::now();
            }
        }
    }
}

impl Drop for NfsQueue<'_> {
    fn drop(&mut self) {
        let began = Instant::now();
        while self.in_flight() > 0 && began.elapsed() < STALL {
            if self.service().is_err() {
                break;
            }
        }
        if self.in_flight() > 0 {
            // A callback may still come (libnfs runs them when the context is destroyed):
            // the state and the tokens stay allocated for it.
            std::mem::forget(std::mem::take(&mut self.tokens));
            return;
        }
        // SAFETY: from Box::into_raw in `new`, freed once, with nothing in flight.
        drop(unsafe { Box::from_raw(self.state) });
    }
}
