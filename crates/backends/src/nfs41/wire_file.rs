//! Open files over sharebench's own NFSv4.1 data path (`wire.rs`): a caller (a worker's
//! thread, or a load lane: `sharebench_core::caller`) holds one connection from a small
//! pool for all its open files, so workers never share one and a worker holding many files
//! open is still one client; OPEN, READ, WRITE, COMMIT, SETATTR of the size and CLOSE go
//! over it, and `--iodepth` keeps up to a session's slots of them in flight (a file's queue
//! takes the caller's connection for its lifetime). With `nconnect=N` a file also takes
//! N-1 connections of its own (each with its session; the open stateid is the client's,
//! valid on all of them) and its queue spreads requests over them, as Linux's `nconnect`
//! does. The namespace calls (lookups, mkdir, readdir, ...) stay with nfs-rs (`nfs41.rs`).
//! Not: a data cache (every read is a READ), delegations, locks.

use super::wire::{self, args, Channel, StateId, WireClient};
use super::xdr::Enc;
use sharebench_core::backend::{FileHandle, IoQueue, QueuedIo};
use sharebench_core::caller::PerCaller;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Idle connections kept for reuse (as the libnfs backend's pool).
const MAX_IDLE: usize = 16;
/// With no call for this long, the keeper sends a SEQUENCE so the client's lease (90 s at
/// the least in Ganesha's default, 60 s) does not run out while the target sits idle.
const RENEW_AFTER: Duration = Duration::from_secs(15);
/// Socket timeout while ending sessions on drop: a dead server is not waited for long.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(5);

/// The data path a target's files share: the client ID, idle connections, the connection
/// each caller holds, and when the last call ended (for lease renewal).
pub(super) struct Wire {
    pub(super) client: WireClient,
    idle: Mutex<Vec<Channel>>,
    held: PerCaller<Held>,
    /// `nfs4.1` or `nfs4.2`, for error messages.
    pub(super) label: &'static str,
    /// Session slots of a channel (what `--iodepth` may use).
    pub(super) slots: usize,
    /// Connections per open file (`nconnect`).
    pub(super) nconnect: usize,
    last_ms: AtomicU64,
    born: Instant,
}

/// An error of the data path as one line: protocol, operation, path, and what happened
/// (a lost connection said in plain words). Keeps the error's kind.
fn fail(label: &str, op: &str, what: &str, e: io::Error) -> io::Error {
    use io::ErrorKind as K;
    let detail = match e.kind() {
        K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
            format!("the connection to the server was lost ({e})")
        }
        K::WouldBlock | K::TimedOut => format!("no answer from the server ({e})"),
        _ => e.to_string(),
    };
    io::Error::new(e.kind(), format!("{label} {op} {what}: {detail}"))
}

/// A call on a file whose connection broke on an earlier call.
fn lost_earlier() -> io::Error {
    io::Error::other("the file's connection was lost earlier")
}

impl Wire {
    pub(super) fn new(
        client: WireClient,
        first: Channel,
        label: &'static str,
        nconnect: usize,
    ) -> Wire {
        Wire {
            client,
            slots: first.slots(),
            nconnect: nconnect.max(1),
            idle: Mutex::new(vec![first]),
            held: PerCaller::default(),
            label,
            last_ms: AtomicU64::new(0),
            born: Instant::now(),
        }
    }

    fn touch(&self) {
        self.last_ms
            .store(self.born.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    fn take(&self) -> io::Result<Channel> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match idle {
            Some(ch) => Ok(ch),
            None => self.client.channel(),
        }
    }

    /// Keeps `ch` for the next open file, or ends its session when the pool is full. A
    /// broken channel is dropped: the server ends its session with the lease.
    fn give(&self, mut ch: Channel) {
        self.touch();
        if ch.broken || ch.in_flight() > 0 {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(ch);
            return;
        }
        drop(idle);
        ch.set_timeout(GOODBYE_TIMEOUT);
        let _ = ch.destroy(&self.client);
    }

    /// The connection the calling caller holds, or one from the pool that it holds from
    /// now on (for as long as one of its files is open).
    fn hold(self: &Arc<Self>) -> io::Result<Arc<Held>> {
        self.held.get_or_make(
            |h| !h.broken(),
            || {
                Ok(Arc::new(Held {
                    ch: Mutex::new(Some(self.take()?)),
                    wire: self.clone(),
                }))
            },
        )
    }

    /// Called by the keeper: renews the lease if no call has for a while.
    pub(super) fn renew_if_idle(&self) {
        let idle_ms = (self.born.elapsed().as_millis() as u64)
            .saturating_sub(self.last_ms.load(Ordering::Relaxed));
        if idle_ms < RENEW_AFTER.as_millis() as u64 {
            return;
        }
        if let Ok(mut ch) = self.take() {
            let _ = ch.call(&self.client, 0, |_| {});
            self.give(ch);
        }
        self.touch();
    }

    /// Opens `name` in the directory `dir_fh` (see `args::open` for `create`).
    pub(super) fn open(
        self: &Arc<Self>,
        path: String,
        dir_fh: &[u8],
        name: &str,
        access: u32,
        create: Option<(u32, bool)>,
        sync: bool,
    ) -> io::Result<WireFile> {
        let label = self.label;
        let held = self.hold().map_err(|e| fail(label, "connect", &path, e))?;
        let opened = held.with(|ch| {
            let mut r = ch.call(&self.client, 3, |e| {
                args::putfh(e, dir_fh);
                args::open(e, &self.client, name, access, create);
            })?;
            r.putfh()?;
            r.open()
        });
        let (stateid, fh) = opened.map_err(|e| fail(label, "open", &path, e))?;
        let mut file = WireFile {
            wire: self.clone(),
            path,
            fh,
            stateid,
            held: Some(held),
            chs: Vec::new(),
            pos: 0,
            max: self.client.max_io as usize,
            sync,
            unstable: Vec::new(),
        };
        // An error here drops `file`, which closes it on the connection it was opened on.
        while file.chs.len() + 1 < self.nconnect {
            let more = self.take().map_err(|e| file.fail("connect", e))?;
            file.chs.push(more);
        }
        Ok(file)
    }
}

impl Drop for Wire {
    /// Ends every idle session, then the client ID; a server that does not answer within
    /// a few seconds is not waited for.
    fn drop(&mut self) {
        let mut idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for ch in &mut idle {
            ch.set_timeout(GOODBYE_TIMEOUT);
            let _ = ch.destroy(&self.client);
        }
        if let Some(ch) = idle.iter_mut().find(|c| !c.broken) {
            let _ = self.client.destroy(ch);
        }
    }
}

/// A connection held by one caller: its files' calls go over it one at a time, and a
/// file's queue takes it out for its lifetime. Back in the pool when the caller's last
/// file closes (a broken one is dropped there).
pub(super) struct Held {
    /// `None` while a queue has it.
    ch: Mutex<Option<Channel>>,
    wire: Arc<Wire>,
}

impl Held {
    fn slot(&self) -> MutexGuard<'_, Option<Channel>> {
        self.ch.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn broken(&self) -> bool {
        self.slot().as_ref().is_some_and(|c| c.broken)
    }

    /// Runs `f` on the connection; while a queue of another of the caller's files has it,
    /// on one from the pool.
    fn with<T>(&self, f: impl FnOnce(&mut Channel) -> io::Result<T>) -> io::Result<T> {
        let mut slot = self.slot();
        match slot.as_mut() {
            Some(ch) if ch.broken => Err(lost_earlier()),
            Some(ch) => f(ch),
            None => {
                drop(slot);
                let mut ch = self.wire.take()?;
                let got = f(&mut ch);
                self.wire.give(ch);
                got
            }
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let ch = self.ch.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(ch) = ch {
            self.wire.give(ch);
        }
    }
}

/// An open file on the data path: its handle, its open stateid, its caller's connection,
/// and the write verifiers of UNSTABLE writes not yet committed.
pub(super) struct WireFile {
    wire: Arc<Wire>,
    /// For error messages.
    path: String,
    fh: Vec<u8>,
    stateid: StateId,
    /// The caller's connection, which carries every call but the queue's; `None` once
    /// closed.
    held: Option<Arc<Held>>,
    /// The connections a queue spreads its requests over: the caller's (taken out while
    /// the queue lives), then the file's own further ones (`nconnect`).
    chs: Vec<Channel>,
    pos: u64,
    /// The largest READ or WRITE one call carries.
    max: usize,
    /// Opened with O_SYNC: writes are FILE_SYNC (as libnfs and the kernel client send them).
    sync: bool,
    /// Distinct verifiers of UNSTABLE writes since the last COMMIT.
    unstable: Vec<[u8; 8]>,
}

impl WireFile {
    fn fail(&self, op: &str, e: io::Error) -> io::Error {
        fail(self.wire.label, op, &self.path, e)
    }

    /// Runs `f` on the file's connection (with the client, the file handle and the open
    /// stateid); its error becomes one line naming `op` and the file.
    fn on_channel<T>(
        &mut self,
        op: &str,
        f: impl FnOnce(&mut Channel, &WireClient, &[u8], &StateId) -> io::Result<T>,
    ) -> io::Result<T> {
        let WireFile {
            wire,
            path,
            fh,
            stateid,
            held,
            ..
        } = self;
        let got = match held {
            Some(h) => h.with(|ch| f(ch, &wire.client, fh, stateid)),
            None => Err(lost_earlier()),
        };
        wire.touch();
        got.map_err(|e| fail(wire.label, op, path, e))
    }

    fn remember(&mut self, committed: u32, verifier: [u8; 8]) {
        if committed == wire::UNSTABLE && !self.unstable.contains(&verifier) {
            self.unstable.push(verifier);
        }
    }

    /// COMMITs the UNSTABLE writes acknowledged so far. A verifier that changed means the
    /// server restarted and may have lost them: that is an error, as the kernel client
    /// would resend them and sharebench cannot.
    fn commit(&mut self) -> io::Result<()> {
        if self.unstable.is_empty() {
            return Ok(());
        }
        let unstable = std::mem::take(&mut self.unstable);
        let verifier = self.on_channel("commit", |ch, c, fh, _| {
            let mut r = ch.call(c, 2, |e| {
                args::putfh(e, fh);
                args::commit(e);
            })?;
            r.putfh()?;
            r.commit()
        })?;
        if unstable.iter().any(|v| *v != verifier) {
            return Err(self.fail(
                "commit",
                io::Error::other(
                    "the server's write verifier changed (it restarted): unstable writes may be lost",
                ),
            ));
        }
        Ok(())
    }

    /// Sends CLOSE once and lets go of the connections.
    fn close_state(&mut self) -> io::Result<()> {
        if self.held.is_none() {
            return Ok(());
        }
        let closed = self.on_channel("close", |ch, c, fh, stateid| {
            let mut r = ch.call(c, 2, |e| {
                args::putfh(e, fh);
                args::close(e, stateid);
            })?;
            r.putfh()?;
            r.close()
        });
        for ch in std::mem::take(&mut self.chs) {
            self.wire.give(ch);
        }
        self.held = None;
        closed
    }
}

impl FileHandle for WireFile {
    cursor_over_positional_calls!(pos);

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.max);
        if n == 0 {
            return Ok(0);
        }
        self.on_channel("read", |ch, c, fh, stateid| {
            let mut r = ch.call(c, 2, |e| {
                args::putfh(e, fh);
                args::read(e, stateid, offset, n as u32);
            })?;
            r.putfh()?;
            let (data, _eof) = r.read()?;
            if data.len() > n {
                return Err(io::Error::other(format!(
                    "the server sent {} bytes for a READ of {n}",
                    data.len()
                )));
            }
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.max);
        if n == 0 {
            return Ok(0);
        }
        let stable = wire::stable_how(self.sync);
        let (count, committed, verifier) = self.on_channel("write", |ch, c, fh, stateid| {
            let write = |e: &mut Enc| {
                args::putfh(e, fh);
                args::write(e, stateid, offset, stable, n);
            };
            let mut r = ch.call_with(c, 2, write, &buf[..n])?;
            r.putfh()?;
            r.write()
        })?;
        self.remember(committed, verifier);
        Ok((count as usize).min(n))
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.commit()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.on_channel("setattr", |ch, c, fh, stateid| {
            let mut r = ch.call(c, 2, |e| {
                args::putfh(e, fh);
                args::set_size(e, stateid, len);
            })?;
            r.putfh()?;
            r.setattr()
        })
    }

    /// NFSv4.2's ALLOCATE (RFC 7862): the server reserves the range, as fallocate does on
    /// a local file. NFSv4.1 has no such operation.
    fn allocate(&mut self, offset: u64, len: u64) -> io::Result<()> {
        if self.wire.client.minor() < 2 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "fallocate needs NFSv4.2's ALLOCATE (version=4.2); NFSv4.1 has none",
            ));
        }
        self.on_channel("allocate", |ch, c, fh, stateid| {
            let mut r = ch.call(c, 2, |e| {
                args::putfh(e, fh);
                args::allocate(e, stateid, offset, len);
            })?;
            r.putfh()?;
            r.allocate()
        })
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(WireQueue::new(self, depth, slot_len)?))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        // As the kernel client does on close: uncommitted data is committed first, so a
        // lost write is reported here rather than never.
        let committed = self.commit();
        let closed = self.close_state();
        committed.and(closed)
    }
}

impl Drop for WireFile {
    fn drop(&mut self) {
        let _ = self.commit();
        let _ = self.close_state();
    }
}

/// What one piece moved: bytes, and for a WRITE how stably and under which verifier.
type Moved = (usize, Option<(u32, [u8; 8])>);

/// A request of the queue: which slot it serves and how far it has got. A request longer
/// than a READ or WRITE may be is sent as consecutive pieces, each its own COMPOUND.
struct Request {
    write: bool,
    len: usize,
    /// Pieces not answered yet.
    left: usize,
    /// Where the bytes moved end: `len`, or the first short piece's end.
    end: usize,
    error: Option<io::Error>,
}

/// A piece on the wire: its connection and XID, and its place (slot, offset in the slot's
/// buffer, length).
struct Sent {
    ch: usize,
    xid: u32,
    slot: usize,
    at: usize,
    n: usize,
}

/// Up to `depth` requests on one file in flight on its connections, each piece on a
/// session slot of its own (on the connection with the fewest in flight); pieces beyond
/// the slots wait their turn in `waiting`.
pub(super) struct WireQueue<'f> {
    file: &'f mut WireFile,
    bufs: Vec<Vec<u8>>,
    requests: Vec<Option<Request>>,
    /// Pieces not yet sent: (slot, offset in the slot's buffer, length, file offset).
    waiting: VecDeque<(usize, usize, usize, u64)>,
    /// Pieces on the wire, oldest first.
    sent: Vec<Sent>,
    done: VecDeque<(usize, io::Result<usize>)>,
    /// Whether `chs[0]` is the caller's connection (else one from the pool, the caller's
    /// being out with another queue).
    holds_callers: bool,
}

impl<'f> WireQueue<'f> {
    /// Takes the caller's connection (or, while another queue has it, one from the pool)
    /// as the first the queue uses.
    fn new(file: &'f mut WireFile, depth: usize, slot_len: usize) -> io::Result<Self> {
        let Some(held) = file.held.clone() else {
            return Err(file.fail("queue", lost_earlier()));
        };
        let callers = held.slot().take();
        let holds_callers = callers.is_some();
        let first = match callers {
            Some(ch) => ch,
            None => file.wire.take().map_err(|e| file.fail("connect", e))?,
        };
        file.chs.insert(0, first);
        Ok(WireQueue {
            file,
            bufs: vec![vec![0xA5; slot_len]; depth],
            requests: (0..depth).map(|_| None).collect(),
            waiting: VecDeque::new(),
            sent: Vec::new(),
            done: VecDeque::new(),
            holds_callers,
        })
    }

    /// Sends waiting pieces while a connection's session has a free slot.
    fn pump(&mut self) -> io::Result<()> {
        let f = &mut *self.file;
        let (client, fh, stateid) = (&f.wire.client, &f.fh, &f.stateid);
        let stable = wire::stable_how(f.sync);
        if f.chs.is_empty() || f.chs.iter().any(|c| c.broken) {
            return Err(lost_earlier());
        }
        while let Some(&(slot, at, n, offset)) = self.waiting.front() {
            let Some((i, ch)) = f
                .chs
                .iter_mut()
                .enumerate()
                .filter(|(_, c)| c.in_flight() < c.slots())
                .min_by_key(|(_, c)| c.in_flight())
            else {
                break;
            };
            self.waiting.pop_front();
            let write = self.requests[slot].as_ref().is_some_and(|r| r.write);
            let data: &[u8] = if write {
                &self.bufs[slot][at..at + n]
            } else {
                &[]
            };
            let piece = |e: &mut Enc| {
                args::putfh(e, fh);
                if write {
                    args::write(e, stateid, offset, stable, n);
                } else {
                    args::read(e, stateid, offset, n as u32);
                }
            };
            let xid = ch.send(client, 2, piece, data)?;
            self.sent.push(Sent {
                ch: i,
                xid,
                slot,
                at,
                n,
            });
        }
        Ok(())
    }

    /// Receives one reply, on the connection of the oldest piece on the wire, and books
    /// it to its request.
    fn receive_one(&mut self) -> io::Result<()> {
        let f = &mut *self.file;
        let Some(i) = self.sent.first().map(|s| s.ch) else {
            return Err(io::Error::other("no request on the wire"));
        };
        let Some(ch) = f.chs.get_mut(i).filter(|c| !c.broken) else {
            return Err(lost_earlier());
        };
        let (xid, reply) = ch.receive()?;
        let Some(k) = self.sent.iter().position(|s| s.ch == i && s.xid == xid) else {
            return Err(io::Error::other(format!("a reply to XID {xid} not sent")));
        };
        let Sent { slot, at, n, .. } = self.sent.remove(k);
        let write = self.requests[slot].as_ref().is_some_and(|r| r.write);
        let result = reply.and_then(|mut r| {
            r.putfh()?;
            if write {
                let (count, committed, v) = r.write()?;
                Ok((count as usize, Some((committed, v))))
            } else {
                let (data, _) = r.read()?;
                let k = data.len().min(n);
                self.bufs[slot][at..at + k].copy_from_slice(&data[..k]);
                Ok((k, None))
            }
        });
        self.book(slot, at, n, result);
        Ok(())
    }

    /// Books one piece's outcome to its request; a request whose pieces are all back is
    /// done.
    fn book(&mut self, slot: usize, at: usize, n: usize, result: io::Result<Moved>) {
        let Some(req) = self.requests[slot].as_mut() else {
            return;
        };
        req.left -= 1;
        match result {
            Ok((k, verifier)) => {
                if k < n {
                    req.end = req.end.min(at + k);
                }
                if let Some((committed, v)) = verifier {
                    self.file.remember(committed, v);
                }
            }
            Err(e) => {
                req.error.get_or_insert(e);
            }
        }
        if self.requests[slot].as_ref().is_some_and(|r| r.left == 0) {
            if let Some(req) = self.requests[slot].take() {
                let res = match req.error {
                    Some(e) => Err(self.file.fail(if req.write { "write" } else { "read" }, e)),
                    None => Ok(req.end.min(req.len)),
                };
                self.done.push_back((slot, res));
            }
        }
    }
}

impl IoQueue for WireQueue<'_> {
    fn depth(&self) -> usize {
        self.bufs.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        &mut self.bufs[slot]
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        let max = self.file.max;
        let pieces = io.len.div_ceil(max).max(1);
        for p in 0..pieces {
            let at = p * max;
            let n = (io.len - at).min(max);
            self.waiting
                .push_back((io.slot, at, n, io.offset + at as u64));
        }
        self.requests[io.slot] = Some(Request {
            write: io.write,
            len: io.len,
            left: pieces,
            end: io.len,
            error: None,
        });
        self.pump().map_err(|e| self.file.fail("queue", e))
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        loop {
            if let Some(d) = self.done.pop_front() {
                return Ok(d);
            }
            if self.sent.is_empty() && self.waiting.is_empty() {
                return Err(self
                    .file
                    .fail("queue", io::Error::other("no request in flight")));
            }
            self.pump().map_err(|e| self.file.fail("queue", e))?;
            self.receive_one().map_err(|e| self.file.fail("queue", e))?;
            self.file.wire.touch();
        }
    }
}

impl Drop for WireQueue<'_> {
    /// Requests still on the wire are waited for (each bounded by the socket's timeout),
    /// so the connection is settled before the file uses it again; unsent pieces are
    /// dropped. The first connection goes back where it came from; one with replies still
    /// owed is marked broken, never reused.
    fn drop(&mut self) {
        self.waiting.clear();
        while !self.sent.is_empty() {
            if self.receive_one().is_err() {
                break;
            }
        }
        if self.file.chs.is_empty() {
            return;
        }
        let mut first = self.file.chs.remove(0);
        if first.in_flight() > 0 {
            first.broken = true;
        }
        match (&self.file.held, self.holds_callers) {
            (Some(held), true) => *held.slot() = Some(first),
            _ => self.file.wire.give(first),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::tests::{channel, client, one_reply_server, words};
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn an_idle_client_renews_its_lease_with_a_sequence_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = client(listener.local_addr().unwrap());
        let server = one_reply_server(listener);
        let first = channel(&c);
        let mut w = Wire::new(c, first, "nfs4.1", 1);
        w.renew_if_idle();
        assert_eq!(
            w.last_ms.load(Ordering::Relaxed),
            0,
            "not idle yet: nothing sent"
        );
        w.born = Instant::now() - RENEW_AFTER - Duration::from_secs(1);
        w.renew_if_idle();
        let req = words(&server.join().unwrap());
        // The COMPOUND's header (no tag, minor version 1, one operation) and SEQUENCE.
        assert!(req.windows(4).any(|x| x == [0, 1, 1, 53]), "{req:?}");
        assert!(w.last_ms.load(Ordering::Relaxed) >= RENEW_AFTER.as_millis() as u64);
        assert_eq!(
            w.idle.lock().unwrap().len(),
            1,
            "the channel went back to the pool"
        );
    }
}
