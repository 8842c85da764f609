//! sharebench's own NFSv4.1 data path: one TCP connection carrying one session, spoken
//! synchronously from the calling thread, as libnfs speaks NFSv3. Each COMPOUND is encoded
//! into one buffer and sent in one `writev` (with a WRITE's data beside it, not copied);
//! each reply is read into one buffer that is reused. Several requests may be in flight at
//! once, one per session slot, for `--iodepth` (`send` and `receive`, matched by XID).
//!
//! Why: nfs-rs, which keeps the namespace calls (lookups, mkdir, readdir, ...), spends
//! 3.6 µs more client CPU per READ and 6.7 µs per WRITE than libnfs (a task, a channel and
//! timers per call; third_party/README.md), so a v4.1/v3 ratio through it measures the
//! client library as much as the protocol.
//!
//! Only what files need: EXCHANGE_ID and CREATE_SESSION (no state protection, no back
//! channel: OPENs ask for no delegation), RECLAIM_COMPLETE, SEQUENCE, OPEN by name in a
//! directory, READ, WRITE, COMMIT, SETATTR of the size, CLOSE, DESTROY_SESSION and
//! DESTROY_CLIENTID. Credentials are AUTH_SYS. Not: delegations, pNFS, locks, Kerberos,
//! retransmission (a lost connection fails the call; the channel is then dropped).

use super::xdr::{pad_of, Dec, Enc};
use bytes::Bytes;
use nfs_rs::Nfs4ErrorCode;
use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const NFS_PROGRAM: u32 = 100_003;
const NFS_V4: u32 = 4;
const PROC_COMPOUND: u32 = 1;
const AUTH_NONE: u32 = 0;
const AUTH_SYS: u32 = 1;

pub(super) const OP_CLOSE: u32 = 4;
pub(super) const OP_COMMIT: u32 = 5;
pub(super) const OP_GETFH: u32 = 10;
pub(super) const OP_OPEN: u32 = 18;
pub(super) const OP_PUTFH: u32 = 22;
pub(super) const OP_READ: u32 = 25;
pub(super) const OP_SETATTR: u32 = 34;
pub(super) const OP_WRITE: u32 = 38;
const OP_EXCHANGE_ID: u32 = 42;
const OP_CREATE_SESSION: u32 = 43;
const OP_DESTROY_SESSION: u32 = 44;
const OP_SEQUENCE: u32 = 53;
const OP_DESTROY_CLIENTID: u32 = 57;
const OP_RECLAIM_COMPLETE: u32 = 58;
/// NFSv4.2 (RFC 7862): reserve space without writing it, as fallocate does.
pub(super) const OP_ALLOCATE: u32 = 59;

const NFS4ERR_DELAY: u32 = 10008;
const NFS4ERR_COMPLETE_ALREADY: u32 = 10054;
/// OPEN: access bits, and "no delegation, please" (RFC 8881 §18.16.3).
pub(super) const SHARE_ACCESS_READ: u32 = 1;
pub(super) const SHARE_ACCESS_WRITE: u32 = 2;
const SHARE_ACCESS_WANT_NO_DELEG: u32 = 0x0400;
/// WRITE's stable_how4.
pub(super) const UNSTABLE: u32 = 0;
const FILE_SYNC: u32 = 2;
/// WRITE's stable_how4 for a file opened with or without O_SYNC: FILE_SYNC, as libnfs and
/// the kernel client send O_SYNC writes, or UNSTABLE, committed later.
pub(super) fn stable_how(sync: bool) -> u32 {
    if sync {
        FILE_SYNC
    } else {
        UNSTABLE
    }
}

/// Attribute numbers of fattr4 (size is word 0 bit 4, mode word 1 bit 1).
const FATTR4_SIZE_WORD0: u32 = 1 << 4;
const FATTR4_MODE_WORD1: u32 = 1 << 1;

/// The largest reply record accepted (a READ of 1 MiB and its headers fit many times).
const MAX_RECORD: usize = 64 << 20;
/// Slots asked for in CREATE_SESSION (the server may grant fewer).
const SLOTS_ASKED: u32 = 64;
/// Room for a COMPOUND's headers beside its READ or WRITE data.
const HEADROOM: u32 = 4096;
/// How often a call the server answers with NFS4ERR_DELAY is sent again, and the first
/// pause (doubled each time, at most a second).
const DELAY_TRIES: u32 = 8;
const DELAY_FIRST: Duration = Duration::from_millis(10);

/// A stateid4: seqid and the 12 bytes that name the state.
pub(super) type StateId = [u8; 16];

/// An NFSv4 status an operation returned, as an error with the kind of its errno.
#[derive(Debug)]
pub(super) struct Status {
    pub(super) code: u32,
}

impl Status {
    /// nfs-rs's name of the status, so messages read as the namespace calls' do.
    fn code(&self) -> Option<Nfs4ErrorCode> {
        Nfs4ErrorCode::try_from(Bytes::copy_from_slice(&self.code.to_be_bytes())).ok()
    }

    fn into_io(self) -> io::Error {
        let kind = self
            .code()
            .and_then(super::errno_of)
            .map(|errno| io::Error::from_raw_os_error(errno).kind())
            .unwrap_or(io::ErrorKind::Other);
        io::Error::new(kind, self)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code() {
            Some(c) => write!(f, "{c} ({c:?})"),
            None => write!(f, "NFSv4 status {}", self.code),
        }
    }
}

impl std::error::Error for Status {}

fn malformed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed reply: {what}"),
    )
}

/// How channels reach the server and who they are: the address, the minor version, the
/// AUTH_SYS credential, and the client ID every channel's session belongs to.
pub(super) struct WireClient {
    addr: SocketAddr,
    minor: u32,
    /// The encoded credential: flavor and body.
    cred: Vec<u8>,
    clientid: u64,
    /// CREATE_SESSION's sequence number for the next session (one at a time).
    next_session: Mutex<u32>,
    /// Distinguishes open-owners: every OPEN gets an owner of its own, so that one file
    /// opened by two workers is two opens, closed separately.
    owners: AtomicU32,
    /// The largest READ or WRITE a session carries (what the first one granted).
    pub(super) max_io: u32,
    timeout: Duration,
}

/// One connection and its session, used by one thread at a time.
pub(super) struct Channel {
    sock: TcpStream,
    session: [u8; 16],
    /// The sequence ID each slot's next request carries.
    seqids: Vec<u32>,
    free: Vec<u32>,
    /// Requests sent and not yet answered: XID and slot.
    waiting: Vec<(u32, u32)>,
    xid: u32,
    tx: Vec<u8>,
    /// The last reply record is `rx[..rx_len]`. `rx` only grows (its bytes past `rx_len`
    /// are stale), so a 1 MiB READ reply is not zero-filled before it is read into.
    rx: Vec<u8>,
    rx_len: usize,
    /// Set when the connection can no longer be trusted (a send or receive failed).
    pub(super) broken: bool,
}

impl WireClient {
    /// Connects, establishes a client ID (EXCHANGE_ID) and a first session
    /// (CREATE_SESSION, RECLAIM_COMPLETE). `owner` names this client to the server and
    /// must be unique to this process and target.
    pub(super) fn establish(
        addr: SocketAddr,
        minor: u32,
        uid: u32,
        gid: u32,
        owner: &[u8],
        want_io: u32,
        timeout: Duration,
    ) -> io::Result<(WireClient, Channel)> {
        let mut client = WireClient {
            addr,
            minor,
            cred: credential(uid, gid),
            clientid: 0,
            next_session: Mutex::new(0),
            owners: AtomicU32::new(0),
            max_io: want_io,
            timeout,
        };
        let mut ch = Channel::connect(&client)?;
        let (clientid, seq) = ch.exchange_id(&client, owner)?;
        client.clientid = clientid;
        *client
            .next_session
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = seq;
        let (session, slots, max_io) = ch.create_session(&client)?;
        client.max_io = max_io.min(want_io);
        ch.start(session, slots);
        let reclaimed = ch
            .call(&client, 1, |e| {
                e.u32(OP_RECLAIM_COMPLETE).u32(0);
            })
            .and_then(|mut r| op(&mut r.d, OP_RECLAIM_COMPLETE));
        match reclaimed {
            Ok(()) => {}
            Err(e) if status_of(&e) == Some(NFS4ERR_COMPLETE_ALREADY) => {}
            Err(e) => return Err(e),
        }
        Ok((client, ch))
    }

    /// NFSv4's minor version: 1, or 2 for NFSv4.2.
    pub(super) fn minor(&self) -> u32 {
        self.minor
    }

    /// A new connection with a session of its own for the same client ID.
    pub(super) fn channel(&self) -> io::Result<Channel> {
        let mut ch = Channel::connect(self)?;
        let (session, slots, _) = ch.create_session(self)?;
        ch.start(session, slots);
        Ok(ch)
    }

    /// A new open-owner: the client ID and a number no other OPEN of this client used.
    fn open_owner(&self, e: &mut Enc) {
        let n = self.owners.fetch_add(1, Ordering::Relaxed);
        e.u64(self.clientid)
            .opaque(format!("sb-open-{n}").as_bytes());
    }

    /// Ends the client ID on the server (after every channel's DESTROY_SESSION).
    pub(super) fn destroy(&self, ch: &mut Channel) -> io::Result<()> {
        ch.send_raw(self, 1, |e| {
            e.u32(OP_DESTROY_CLIENTID).u64(self.clientid);
        })?;
        op(&mut ch.receive_raw()?, OP_DESTROY_CLIENTID)
    }
}

/// AUTH_SYS (RFC 5531 appendix A): flavor, then the body as an opaque.
fn credential(uid: u32, gid: u32) -> Vec<u8> {
    let mut body = Vec::new();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "sharebench".into());
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32);
    Enc(&mut body)
        .u32(stamp)
        .opaque(&host.as_bytes()[..host.len().min(255)])
        .u32(uid)
        .u32(gid)
        .u32(0);
    let mut cred = Vec::new();
    Enc(&mut cred).u32(AUTH_SYS).opaque(&body);
    cred
}

/// The NFSv4 status inside an error this module made, if it carries one.
pub(super) fn status_of(e: &io::Error) -> Option<u32> {
    e.get_ref()
        .and_then(|s| s.downcast_ref::<Status>())
        .map(|s| s.code)
}

/// Reads one operation's result header; an error status ends the reply.
fn op(d: &mut Dec, want: u32) -> io::Result<()> {
    let got = d.u32()?;
    if got != want {
        return Err(malformed(&format!("operation {got} where {want} was due")));
    }
    match d.u32()? {
        0 => Ok(()),
        code => Err(Status { code }.into_io()),
    }
}

/// A reply's results after SEQUENCE, for the operation decoders below.
pub(super) struct Reply<'r> {
    d: Dec<'r>,
}

impl Reply<'_> {
    pub(super) fn putfh(&mut self) -> io::Result<()> {
        op(&mut self.d, OP_PUTFH)
    }

    /// READ4resok: the data (borrowed from the reply) and whether it ends the file.
    pub(super) fn read(&mut self) -> io::Result<(&[u8], bool)> {
        op(&mut self.d, OP_READ)?;
        let eof = self.d.bool()?;
        Ok((self.d.opaque()?, eof))
    }

    /// WRITE4resok: bytes written, how stably, and the server's write verifier.
    pub(super) fn write(&mut self) -> io::Result<(u32, u32, [u8; 8])> {
        op(&mut self.d, OP_WRITE)?;
        let (count, committed) = (self.d.u32()?, self.d.u32()?);
        Ok((count, committed, verifier(&mut self.d)?))
    }

    pub(super) fn commit(&mut self) -> io::Result<[u8; 8]> {
        op(&mut self.d, OP_COMMIT)?;
        verifier(&mut self.d)
    }

    /// OPEN4resok then GETFH: the open stateid and the file's handle.
    pub(super) fn open(&mut self) -> io::Result<(StateId, Vec<u8>)> {
        op(&mut self.d, OP_OPEN)?;
        let stateid = stateid(&mut self.d)?;
        self.d.skip_words(5)?; // change_info4
        self.d.skip_words(1)?; // rflags
        self.d.skip_bitmap()?; // attrset
        match self.d.u32()? {
            0 => {}
            3 => {
                // OPEN_DELEGATE_NONE_EXT: why, and for contention or resource a bool.
                if matches!(self.d.u32()?, 7 | 8) {
                    self.d.skip_words(1)?;
                }
            }
            t => {
                return Err(io::Error::other(format!(
                    "the server granted a delegation (type {t}) that was not asked for"
                )))
            }
        }
        op(&mut self.d, OP_GETFH)?;
        Ok((stateid, self.d.opaque()?.to_vec()))
    }

    /// SETATTR4res carries its bitmap whatever the status.
    pub(super) fn setattr(&mut self) -> io::Result<()> {
        let got = self.d.u32()?;
        if got != OP_SETATTR {
            return Err(malformed("SETATTR result missing"));
        }
        let code = self.d.u32()?;
        self.d.skip_bitmap()?;
        match code {
            0 => Ok(()),
            code => Err(Status { code }.into_io()),
        }
    }

    pub(super) fn allocate(&mut self) -> io::Result<()> {
        op(&mut self.d, OP_ALLOCATE)
    }

    pub(super) fn close(&mut self) -> io::Result<()> {
        op(&mut self.d, OP_CLOSE)?;
        stateid(&mut self.d).map(|_| ())
    }
}

fn verifier(d: &mut Dec) -> io::Result<[u8; 8]> {
    let mut v = [0; 8];
    v.copy_from_slice(d.fixed(8)?);
    Ok(v)
}

fn stateid(d: &mut Dec) -> io::Result<StateId> {
    let mut s = [0; 16];
    s.copy_from_slice(d.fixed(16)?);
    Ok(s)
}

/// Encoders of the operations files use, after SEQUENCE.
pub(super) mod args {
    use super::*;

    pub(in super::super) fn putfh(e: &mut Enc, fh: &[u8]) {
        e.u32(OP_PUTFH).opaque(fh);
    }

    pub(in super::super) fn read(e: &mut Enc, s: &StateId, offset: u64, count: u32) {
        e.u32(OP_READ).fixed(s).u64(offset).u32(count);
    }

    /// WRITE's arguments up to its data's length; the data follows in the same send.
    pub(in super::super) fn write(e: &mut Enc, s: &StateId, offset: u64, stable: u32, len: usize) {
        e.u32(OP_WRITE)
            .fixed(s)
            .u64(offset)
            .u32(stable)
            .u32(len as u32);
    }

    pub(in super::super) fn commit(e: &mut Enc) {
        e.u32(OP_COMMIT).u64(0).u32(0);
    }

    /// OPEN by name in the current directory, then GETFH. `create`: UNCHECKED4 with
    /// `mode`, and size 0 when `truncate` (an existing file is then truncated, RFC 8881
    /// §18.16.3); otherwise the file must exist.
    pub(in super::super) fn open(
        e: &mut Enc,
        c: &WireClient,
        name: &str,
        access: u32,
        create: Option<(u32, bool)>,
    ) {
        e.u32(OP_OPEN)
            .u32(0)
            .u32(access | SHARE_ACCESS_WANT_NO_DELEG)
            .u32(0);
        c.open_owner(e);
        match create {
            None => {
                e.u32(0);
            }
            Some((mode, truncate)) => {
                e.u32(1).u32(0); // OPEN4_CREATE, UNCHECKED4
                let mut vals = Vec::new();
                if truncate {
                    Enc(&mut vals).u64(0);
                }
                Enc(&mut vals).u32(mode);
                let word0 = if truncate { FATTR4_SIZE_WORD0 } else { 0 };
                e.u32(2).u32(word0).u32(FATTR4_MODE_WORD1).opaque(&vals);
            }
        }
        e.u32(0).opaque(name.as_bytes()); // CLAIM_NULL
        e.u32(OP_GETFH);
    }

    pub(in super::super) fn set_size(e: &mut Enc, s: &StateId, len: u64) {
        let mut vals = Vec::new();
        Enc(&mut vals).u64(len);
        e.u32(OP_SETATTR)
            .fixed(s)
            .u32(1)
            .u32(FATTR4_SIZE_WORD0)
            .opaque(&vals);
    }

    /// ALLOCATE4args (RFC 7862 §15.1): NFSv4.2 only.
    pub(in super::super) fn allocate(e: &mut Enc, s: &StateId, offset: u64, len: u64) {
        e.u32(OP_ALLOCATE).fixed(s).u64(offset).u64(len);
    }

    pub(in super::super) fn close(e: &mut Enc, s: &StateId) {
        e.u32(OP_CLOSE).u32(0).fixed(s);
    }
}

impl Channel {
    fn connect(c: &WireClient) -> io::Result<Channel> {
        let sock = TcpStream::connect_timeout(&c.addr, c.timeout)?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(c.timeout))?;
        sock.set_write_timeout(Some(c.timeout))?;
        Ok(Channel {
            sock,
            session: [0; 16],
            seqids: Vec::new(),
            free: Vec::new(),
            waiting: Vec::new(),
            xid: std::process::id().wrapping_mul(2_654_435_761),
            tx: Vec::with_capacity(512),
            rx: Vec::with_capacity(64 << 10),
            rx_len: 0,
            broken: false,
        })
    }

    fn start(&mut self, session: [u8; 16], slots: u32) {
        self.session = session;
        self.seqids = vec![1; slots as usize];
        self.free = (0..slots).rev().collect();
    }

    /// The socket's read and write timeout from now on.
    pub(super) fn set_timeout(&mut self, t: Duration) {
        let _ = self.sock.set_read_timeout(Some(t));
        let _ = self.sock.set_write_timeout(Some(t));
    }

    /// Session slots: how many requests may be in flight at once.
    pub(super) fn slots(&self) -> usize {
        self.seqids.len()
    }

    /// Requests sent and not yet received.
    pub(super) fn in_flight(&self) -> usize {
        self.waiting.len()
    }

    /// Begins a COMPOUND of `ops` operations in `tx`: record mark, RPC call header,
    /// COMPOUND4args header. Returns the XID.
    fn begin(&mut self, c: &WireClient, ops: u32) -> u32 {
        self.xid = self.xid.wrapping_add(1);
        self.tx.clear();
        let mut e = Enc(&mut self.tx);
        e.u32(0) // record mark, set in `send_with`
            .u32(self.xid)
            .u32(0) // CALL
            .u32(2) // RPC version
            .u32(NFS_PROGRAM)
            .u32(NFS_V4)
            .u32(PROC_COMPOUND);
        e.0.extend_from_slice(&c.cred);
        e.u32(AUTH_NONE)
            .u32(0) // verifier
            .u32(0) // tag
            .u32(c.minor)
            .u32(ops);
        self.xid
    }

    /// Sends `tx` and then `data` (a WRITE's payload, padded) as one record, in one
    /// vectored write where the socket takes it.
    fn send_with(&mut self, data: &[u8]) -> io::Result<()> {
        let len = self.tx.len() - 4 + data.len() + pad_of(data.len());
        self.tx[..4].copy_from_slice(&(0x8000_0000 | len as u32).to_be_bytes());
        let pad = [0u8; 3];
        let mut parts = [
            IoSlice::new(&self.tx),
            IoSlice::new(data),
            IoSlice::new(&pad[..pad_of(data.len())]),
        ];
        let mut parts: &mut [IoSlice] = &mut parts;
        while !parts.is_empty() {
            match self.sock.write_vectored(parts) {
                Ok(0) => {
                    self.broken = true;
                    return Err(io::ErrorKind::WriteZero.into());
                }
                Ok(n) => IoSlice::advance_slices(&mut parts, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Sends a COMPOUND with no SEQUENCE (client ID and session management).
    fn send_raw(
        &mut self,
        c: &WireClient,
        ops: u32,
        args: impl FnOnce(&mut Enc),
    ) -> io::Result<u32> {
        let xid = self.begin(c, ops);
        args(&mut Enc(&mut self.tx));
        self.send_with(&[]).map(|_| xid)
    }

    /// Sends SEQUENCE and `ops` more operations on a free slot, with `data` after them.
    /// The caller must not send more than `slots()` at once.
    pub(super) fn send(
        &mut self,
        c: &WireClient,
        ops: u32,
        args: impl FnOnce(&mut Enc),
        data: &[u8],
    ) -> io::Result<u32> {
        let Some(slot) = self.free.pop() else {
            return Err(io::Error::other(
                "no free session slot (a request too many in flight)",
            ));
        };
        let xid = self.begin(c, ops + 1);
        let highest = self.seqids.len() as u32 - 1;
        let mut e = Enc(&mut self.tx);
        e.u32(OP_SEQUENCE)
            .fixed(&self.session)
            .u32(self.seqids[slot as usize])
            .u32(slot)
            .u32(highest)
            .u32(0);
        args(&mut e);
        self.waiting.push((xid, slot));
        self.send_with(data).map(|_| xid)
    }

    /// Reads one reply record into `rx`; returns its XID and where the results begin,
    /// after the RPC and COMPOUND headers. Any error breaks the channel.
    fn read_record(&mut self) -> io::Result<(u32, usize)> {
        let got = self.read_record_once();
        self.broken |= got.is_err();
        got
    }

    fn read_record_once(&mut self) -> io::Result<(u32, usize)> {
        self.rx_len = 0;
        loop {
            let mut mark = [0; 4];
            self.sock.read_exact(&mut mark)?;
            let mark = u32::from_be_bytes(mark);
            let len = (mark & 0x7fff_ffff) as usize;
            let (at, end) = (self.rx_len, self.rx_len + len);
            if end > MAX_RECORD {
                return Err(malformed("a record larger than 64 MiB"));
            }
            if self.rx.len() < end {
                self.rx.resize(end, 0);
            }
            self.sock.read_exact(&mut self.rx[at..end])?;
            self.rx_len = end;
            if mark & 0x8000_0000 != 0 {
                break;
            }
        }
        let mut d = Dec::new(&self.rx[..self.rx_len]);
        let xid = d.u32()?;
        if d.u32()? != 1 {
            return Err(malformed("not a reply"));
        }
        if d.u32()? != 0 {
            let why = match d.u32()? {
                0 => "RPC version mismatch".to_string(),
                _ => format!("authentication refused (auth_stat {})", d.u32()?),
            };
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the server denied the call: {why}"),
            ));
        }
        d.u32()?; // verifier flavor
        d.opaque()?;
        match d.u32()? {
            0 => {}
            s => {
                return Err(malformed(&format!(
                    "the call was not accepted (accept_stat {s})"
                )))
            }
        }
        d.u32()?; // COMPOUND status: each operation's is read below
        d.opaque()?; // tag
        d.u32()?; // results
        Ok((xid, d.pos()))
    }

    fn receive_raw(&mut self) -> io::Result<Dec<'_>> {
        let (_, at) = self.read_record()?;
        Ok(Dec::new(&self.rx[at..self.rx_len]))
    }

    /// Waits for the next reply to a request sent with `send` and frees its slot
    /// (advancing the slot's sequence ID when SEQUENCE succeeded). Returns its XID and
    /// either its results after SEQUENCE or the first failed operation's status. The outer
    /// error is the connection's: the channel is broken then.
    pub(super) fn receive(&mut self) -> io::Result<(u32, io::Result<Reply<'_>>)> {
        let (xid, at) = self.receive_at()?;
        Ok((
            xid,
            at.map(|at| Reply {
                d: Dec::new(&self.rx[at..self.rx_len]),
            }),
        ))
    }

    /// `receive`, giving where the results after SEQUENCE begin in `rx`.
    fn receive_at(&mut self) -> io::Result<(u32, io::Result<usize>)> {
        let (xid, at) = self.read_record()?;
        let Some(i) = self.waiting.iter().position(|w| w.0 == xid) else {
            self.broken = true;
            return Err(malformed(&format!(
                "a reply to XID {xid}, which was not sent"
            )));
        };
        let (_, slot) = self.waiting.swap_remove(i);
        self.free.push(slot);
        let mut d = Dec::new(&self.rx[at..self.rx_len]);
        if let Err(e) = op(&mut d, OP_SEQUENCE) {
            return Ok((xid, Err(e)));
        }
        self.seqids[slot as usize] = self.seqids[slot as usize].wrapping_add(1);
        let skipped = d.skip_words(4 + 5); // sessionid, sequence, slot, highest, target, flags
        Ok((xid, skipped.map(|_| at + d.pos())))
    }

    /// Sends one COMPOUND (SEQUENCE and `ops` more) and waits for its reply, sending it
    /// again (boundedly) while the server answers NFS4ERR_DELAY. Needs no other request
    /// in flight.
    pub(super) fn call(
        &mut self,
        c: &WireClient,
        ops: u32,
        args: impl Fn(&mut Enc),
    ) -> io::Result<Reply<'_>> {
        self.call_with(c, ops, args, &[])
    }

    /// As `call`, with `data` sent after the arguments (a WRITE's payload).
    pub(super) fn call_with(
        &mut self,
        c: &WireClient,
        ops: u32,
        args: impl Fn(&mut Enc),
        data: &[u8],
    ) -> io::Result<Reply<'_>> {
        let mut pause = DELAY_FIRST;
        let mut tries = 1;
        let at = loop {
            self.send(c, ops, &args, data)?;
            match self.receive_at()?.1 {
                Err(e) if status_of(&e) == Some(NFS4ERR_DELAY) && tries < DELAY_TRIES => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                    tries += 1;
                }
                r => break r?,
            }
        };
        Ok(Reply {
            d: Dec::new(&self.rx[at..self.rx_len]),
        })
    }

    /// EXCHANGE_ID: the client ID and the sequence number of its first session.
    fn exchange_id(&mut self, c: &WireClient, owner: &[u8]) -> io::Result<(u64, u32)> {
        let boot = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        self.send_raw(c, 1, |e| {
            e.u32(OP_EXCHANGE_ID)
                .u64(boot) // co_verifier
                .opaque(owner)
                .u32(0) // flags
                .u32(0) // SP4_NONE
                .u32(0); // no implementation ID
        })?;
        let mut d = self.receive_raw()?;
        op(&mut d, OP_EXCHANGE_ID)?;
        Ok((d.u64()?, d.u32()?))
    }

    /// CREATE_SESSION: the session ID, the slots granted and the largest READ or WRITE
    /// its sizes allow.
    fn create_session(&mut self, c: &WireClient) -> io::Result<([u8; 16], u32, u32)> {
        let mut next = c.next_session.lock().unwrap_or_else(|p| p.into_inner());
        let want = c.max_io + HEADROOM;
        self.send_raw(c, 1, |e| {
            e.u32(OP_CREATE_SESSION).u64(c.clientid).u32(*next).u32(0);
            // Fore channel: no padding, sizes for the largest READ/WRITE, 16 operations.
            e.u32(0)
                .u32(want)
                .u32(want)
                .u32(4096)
                .u32(16)
                .u32(SLOTS_ASKED)
                .u32(0);
            // Back channel (unused: no delegations, no layouts): the smallest there is.
            e.u32(0).u32(4096).u32(4096).u32(0).u32(2).u32(1).u32(0);
            e.u32(0x4000_0000) // callback program
                .u32(1)
                .u32(AUTH_NONE);
        })?;
        let mut d = self.receive_raw()?;
        op(&mut d, OP_CREATE_SESSION)?;
        *next = next.wrapping_add(1);
        let mut session = [0; 16];
        session.copy_from_slice(d.fixed(16)?);
        d.skip_words(2)?; // sequence, flags
        d.skip_words(1)?; // header padding
        let (req, resp) = (d.u32()?, d.u32()?);
        d.skip_words(2)?; // cached size, operations
        let slots = d.u32()?.clamp(1, SLOTS_ASKED);
        let io = req.min(resp).saturating_sub(HEADROOM).max(4096);
        Ok((session, slots, io))
    }

    /// DESTROY_SESSION (nothing may be in flight).
    pub(super) fn destroy(&mut self, c: &WireClient) -> io::Result<()> {
        let session = self.session;
        self.send_raw(c, 1, |e| {
            e.u32(OP_DESTROY_SESSION).fixed(&session);
        })?;
        let mut d = self.receive_raw()?;
        op(&mut d, OP_DESTROY_SESSION)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A client of ID 0x0102030405060708 for a test server at `addr`.
    pub(in super::super) fn client(addr: SocketAddr) -> WireClient {
        WireClient {
            addr,
            minor: 1,
            cred: credential(0, 0),
            clientid: 0x0102_0304_0506_0708,
            next_session: Mutex::new(1),
            owners: AtomicU32::new(0),
            max_io: 1 << 20,
            timeout: Duration::from_secs(5),
        }
    }

    /// A channel to `c`'s server with a session of two slots, made without asking it.
    pub(in super::super) fn channel(c: &WireClient) -> Channel {
        let mut ch = Channel::connect(c).unwrap();
        ch.start([1; 16], 2);
        ch
    }

    pub(in super::super) fn words(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    }

    #[test]
    fn an_open_that_creates_and_truncates_sends_size_zero_and_the_mode() {
        let c = client("127.0.0.1:1".parse().unwrap());
        let mut b = Vec::new();
        args::open(
            &mut Enc(&mut b),
            &c,
            "f0",
            SHARE_ACCESS_WRITE,
            Some((0o640, true)),
        );
        let w = words(&b);
        assert_eq!(w[..4], [OP_OPEN, 0, SHARE_ACCESS_WRITE | 0x400, 0]);
        assert_eq!(w[4..6], [0x0102_0304, 0x0506_0708], "the client ID owns it");
        let owner = w[6] as usize;
        let at = 7 + owner.div_ceil(4);
        // OPEN4_CREATE, UNCHECKED4, bitmap {size, mode}, 12 bytes: size 0 then the mode.
        assert_eq!(
            w[at..at + 10],
            [
                1,
                0,
                2,
                FATTR4_SIZE_WORD0,
                FATTR4_MODE_WORD1,
                12,
                0,
                0,
                0o640,
                0
            ]
        );
        assert_eq!(w[at + 10], 2, "CLAIM_NULL's name is 2 bytes");
        assert_eq!(*w.last().unwrap(), OP_GETFH);
        // Without truncation the size is left out, so an existing file keeps its data.
        let mut b = Vec::new();
        args::open(
            &mut Enc(&mut b),
            &c,
            "f0",
            SHARE_ACCESS_READ,
            Some((0o640, false)),
        );
        let w = words(&b);
        let at = 7 + w[6] as usize / 4 + 1;
        assert_eq!(w[at..at + 7], [1, 0, 2, 0, FATTR4_MODE_WORD1, 4, 0o640]);
    }

    #[test]
    fn an_open_reply_gives_the_stateid_and_the_handle_past_a_refused_delegation() {
        let mut b = Vec::new();
        let mut e = Enc(&mut b);
        e.u32(OP_OPEN).u32(0).fixed(&[7; 16]);
        e.u32(1).u64(1).u64(2).u32(0).u32(1).u32(0); // change_info, rflags, attrset
        e.u32(3).u32(7).u32(0); // NONE_EXT, WND4_CONTENTION, no signal
        e.u32(OP_GETFH).u32(0).opaque(b"handle");
        let mut r = Reply { d: Dec::new(&b) };
        let (stateid, fh) = r.open().unwrap();
        assert_eq!((stateid, fh.as_slice()), ([7; 16], &b"handle"[..]));

        let mut b = Vec::new();
        Enc(&mut b).u32(OP_OPEN).u32(2); // NFS4ERR_NOENT
        let e = Reply { d: Dec::new(&b) }.open().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(status_of(&e), Some(2));
        assert!(e.to_string().contains("NFS4ERR_NOENT"), "{e}");
    }

    #[test]
    fn allocate_names_the_stateid_and_the_range() {
        let mut b = Vec::new();
        args::allocate(&mut Enc(&mut b), &[3; 16], 1 << 32, 4096);
        let w = words(&b);
        assert_eq!(w[0], OP_ALLOCATE);
        assert_eq!(w[1..5], [0x0303_0303; 4]);
        assert_eq!(w[5..], [1, 0, 0, 4096]);
    }

    #[test]
    fn a_failed_setattr_is_read_past_its_bitmap() {
        let mut b = Vec::new();
        Enc(&mut b).u32(OP_SETATTR).u32(28).u32(1).u32(0); // NFS4ERR_NOSPC, empty bitmap
        let e = Reply { d: Dec::new(&b) }.setattr().unwrap_err();
        assert_eq!(status_of(&e), Some(28));
        let mut b = Vec::new();
        Enc(&mut b).u32(OP_READ).u32(0);
        assert!(
            Reply { d: Dec::new(&b) }.setattr().is_err(),
            "another op's result"
        );
    }

    /// A server of one reply: reads a request, answers its XID with SEQUENCE, PUTFH and
    /// READ in two record fragments.
    pub(in super::super) fn one_reply_server(
        listener: TcpListener,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut mark = [0; 4];
            s.read_exact(&mut mark).unwrap();
            let len = (u32::from_be_bytes(mark) & 0x7fff_ffff) as usize;
            let mut req = vec![0; len];
            s.read_exact(&mut req).unwrap();
            let mut body = Vec::new();
            let mut e = Enc(&mut body);
            e.fixed(&req[..4]).u32(1).u32(0).u32(0).u32(0).u32(0); // reply, accepted, ok
            e.u32(0).u32(0).u32(3); // COMPOUND ok, no tag, 3 results
            e.u32(OP_SEQUENCE)
                .u32(0)
                .fixed(&[1; 16])
                .u32(1)
                .u32(0)
                .u32(0)
                .u32(0)
                .u32(0);
            e.u32(OP_PUTFH).u32(0);
            e.u32(OP_READ).u32(0).u32(1).opaque(b"hello");
            let (a, b) = body.split_at(10);
            s.write_all(&(a.len() as u32).to_be_bytes()).unwrap();
            s.write_all(a).unwrap();
            s.write_all(&(0x8000_0000 | b.len() as u32).to_be_bytes())
                .unwrap();
            s.write_all(b).unwrap();
            req
        })
    }

    /// A server answering each request with SEQUENCE, PUTFH and READ, the READ's result
    /// (after its status) being the next of `reads`, as is: one record each.
    fn read_replies_server(
        listener: TcpListener,
        reads: Vec<Vec<u8>>,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            for read in reads {
                let mut mark = [0; 4];
                s.read_exact(&mut mark).unwrap();
                let mut req = vec![0; (u32::from_be_bytes(mark) & 0x7fff_ffff) as usize];
                s.read_exact(&mut req).unwrap();
                let mut body = Vec::new();
                let mut e = Enc(&mut body);
                e.fixed(&req[..4]).u32(1).u32(0).u32(0).u32(0).u32(0);
                e.u32(0)
                    .u32(0)
                    .u32(3)
                    .u32(OP_SEQUENCE)
                    .u32(0)
                    .fixed(&[1; 16]);
                e.u32(1).u32(0).u32(0).u32(0).u32(0);
                e.u32(OP_PUTFH).u32(0).u32(OP_READ).u32(0).fixed(&read);
                s.write_all(&(0x8000_0000 | body.len() as u32).to_be_bytes())
                    .unwrap();
                s.write_all(&body).unwrap();
            }
        })
    }

    #[test]
    fn a_short_reply_after_a_long_one_is_read_alone() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = client(listener.local_addr().unwrap());
        let mut long = Vec::new();
        Enc(&mut long).u32(0).opaque(&[7; 8192]);
        // eof, then a length of 5 and no data: the record ends where the data should be.
        let mut cut = Vec::new();
        Enc(&mut cut).u32(1).u32(5);
        let server = read_replies_server(listener, vec![long, cut]);
        let mut ch = channel(&c);
        let read = |ch: &mut Channel| {
            let mut r = ch.call(&c, 2, |e| {
                args::putfh(e, b"fh");
                args::read(e, &[0; 16], 8192, 0);
            })?;
            r.putfh()?;
            r.read().map(|(data, _)| data.len())
        };
        assert_eq!(read(&mut ch).unwrap(), 8192);
        let e = read(&mut ch).unwrap_err();
        assert!(
            e.to_string().contains("malformed"),
            "the first reply's bytes were read as the second's: {e}"
        );
        server.join().unwrap();
    }

    #[test]
    fn a_call_frames_its_request_and_reads_a_fragmented_reply() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = client(listener.local_addr().unwrap());
        let server = one_reply_server(listener);
        let mut ch = channel(&c);
        let got = {
            let mut r = ch
                .call(&c, 2, |e| {
                    args::putfh(e, b"fh");
                    args::read(e, &[0; 16], 4096, 5);
                })
                .unwrap();
            r.putfh().unwrap();
            let (data, eof) = r.read().unwrap();
            (data.to_vec(), eof)
        };
        assert_eq!(got, (b"hello".to_vec(), true));
        assert_eq!(ch.seqids, [2, 1], "the slot used (slot 0) moved on");
        assert_eq!(ch.in_flight(), 0);
        let req = server.join().unwrap();
        let w = words(&req);
        assert_eq!(w[1..6], [0, 2, NFS_PROGRAM, NFS_V4, PROC_COMPOUND]);
        assert!(!ch.broken);
    }
}
