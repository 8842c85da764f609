//! `smb://USER@HOST[:PORT]/SHARE/PATH`: SMB 3.1.1 through the pure-Rust `smb2` crate, the
//! default SMB client: thread-safe and pipelined, unlike libsmbclient (issue 13). Each
//! connection is a session of its own (TCP connection, NTLMv2 login, signing, tree
//! connect) with a tokio current-thread runtime of its own. A caller (a worker's thread, or
//! a load lane: `sharebench_core::caller`) holds one connection, taken from a pool, for all
//! its open files and calls, and gives it back when its last file closes: N workers are N
//! concurrent clients, whatever number of files each holds open (a load worker's `--iodepth`
//! lanes are a client each). Every call blocks on the connection's runtime from the
//! calling thread. `--iodepth` keeps several READs and WRITEs on one file in flight on its
//! connection (the crate matches replies by message id and grants credits).
//!
//! Only SMB 3.1.1 with a signed session is accepted: anything else is refused when the
//! target is opened. Reads and writes are single READ/WRITE requests of at most the
//! negotiated sizes; `fsync` sends FLUSH; `O_SYNC` writes ask for write-through.
//! `chmod` sets or clears the read-only attribute, as libsmbclient does (SMB has DOS
//! attributes, not modes).
//! A target path on a DFS root (MS-DFS, `lab:dfs-smb`) is followed once, when the target
//! is opened: the referral's first reachable target (each one checked against `netguard`
//! before it is dialled) becomes the server every connection goes to, as a DFS client
//! caches a referral. Not: links and symlinks, mmap, a client cache.

use crate::netguard;
use crate::smburl::{parse, password};
use sharebench_core::backend::{
    tampered, unsupported, Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, OpenOptions,
    Purge, PurgeRequest, QueuedIo, TargetInfo,
};
use sharebench_core::caller::PerCaller;
use smb2::client::connection::{Connection, FrameBytes};
use smb2::msg::close::CloseRequest;
use smb2::msg::create::{
    CreateDisposition, CreateRequest, CreateResponse, ImpersonationLevel, ShareAccess,
};
use smb2::msg::flush::FlushRequest;
use smb2::msg::query_info::InfoType;
use smb2::msg::read::{ReadRequest, SMB2_CHANNEL_NONE};
use smb2::msg::set_info::SetInfoRequest;
use smb2::msg::write::{WriteRequest, WriteResponse};
use smb2::pack::{FileTime, ReadCursor, Unpack};
use smb2::types::flags::FileAccessMask;
use smb2::types::status::NtStatus;
use smb2::types::{Command, CreditCharge, Dialect, FileId, OplockLevel, TreeId};
use smb2::{ClientConfig, FileTimes, RenameOptions, SmbClient, Tree};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, UNIX_EPOCH};

/// What records and manifests call this client.
pub const CLIENT: &str = "smb2-rs";

/// A call that takes longer fails instead of hanging the run.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Connecting, negotiating, logging in and connecting the tree.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 16;
/// FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE, FILE_WRITE_THROUGH and
/// FILE_OPEN_REPARSE_POINT (MS-SMB2 2.2.13).
const FILE_DIRECTORY_FILE: u32 = 0x01;
const FILE_NON_DIRECTORY_FILE: u32 = 0x40;
const FILE_WRITE_THROUGH: u32 = 0x02;
const FILE_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
/// SMB2_WRITEFLAG_WRITE_THROUGH (MS-SMB2 2.2.21).
const WRITEFLAG_WRITE_THROUGH: u32 = 0x1;
/// FileEndOfFileInformation (MS-FSCC 2.4.14).
const FILE_END_OF_FILE_INFORMATION: u8 = 20;
/// FileBasicInformation (MS-FSCC 2.4.7).
const FILE_BASIC_INFORMATION: u8 = 4;
/// FILE_ATTRIBUTE_NORMAL, _READONLY, _DIRECTORY and _REPARSE_POINT (MS-FSCC 2.6).
const ATTRIBUTE_NORMAL: u32 = 0x80;
const ATTRIBUTE_READONLY: u32 = 0x01;
const ATTRIBUTE_DIRECTORY: u32 = 0x10;
const ATTRIBUTE_REPARSE_POINT: u32 = 0x400;

/// Credits a READ or WRITE of `bytes` charges: one per 64 KiB (MS-SMB2 3.2.4.1.5).
fn charge(bytes: usize) -> CreditCharge {
    CreditCharge((bytes as u64).div_ceil(65536).clamp(1, u64::from(u16::MAX)) as u16)
}

/// An smb2 error as an `io::Error` of the matching kind, naming the call and the path.
fn io_error(op: &str, what: &str, e: smb2::Error) -> io::Error {
    use io::ErrorKind as K;
    use smb2::ErrorKind as S;
    let kind = match e.kind() {
        S::NotFound => K::NotFound,
        S::AlreadyExists => K::AlreadyExists,
        S::AccessDenied | S::AuthRequired => K::PermissionDenied,
        S::IsADirectory => K::IsADirectory,
        S::NotADirectory => K::NotADirectory,
        S::DiskFull => K::StorageFull,
        S::TimedOut => K::TimedOut,
        S::ConnectionLost => K::ConnectionAborted,
        S::Unsupported => K::Unsupported,
        S::InvalidName => K::InvalidInput,
        _ => K::Other,
    };
    io::Error::new(kind, format!("smb {op} {what}: {e}"))
}

/// The error of a reply whose status is not success.
fn status_error(status: NtStatus, command: Command) -> smb2::Error {
    smb2::Error::Protocol { status, command }
}

/// One logged-in connection with the share's tree connected, and the runtime that drives it.
struct Conn {
    rt: tokio::runtime::Runtime,
    client: Option<SmbClient>,
    conn: Option<Connection>,
    tree: Option<Tree>,
    /// Set when a call timed out, the connection was lost, or a CLOSE failed: the
    /// connection is in doubt, and is never handed out or pooled again.
    broken: AtomicBool,
}

impl Conn {
    fn connect(config: &ClientConfig, share: &str) -> Result<Conn, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start a runtime: {e}"))?;
        let made = rt.block_on(async {
            tokio::time::timeout(CONNECT_TIMEOUT, async {
                let mut client = SmbClient::connect(config.clone()).await?;
                let tree = client.connect_share(share).await?;
                Ok::<_, smb2::Error>((client, tree))
            })
            .await
        });
        let (client, tree) = match made {
            Ok(Ok(ct)) => ct,
            Ok(Err(e)) => {
                let why = match e.kind() {
                    smb2::ErrorKind::AuthRequired | smb2::ErrorKind::AccessDenied => {
                        "login or access refused (wrong user or password?)".to_string()
                    }
                    smb2::ErrorKind::NotFound => "no such share".to_string(),
                    _ => e.to_string(),
                };
                return Err(why);
            }
            Err(_) => return Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())),
        };
        let dialect = client.params().map(|p| p.dialect);
        if dialect != Some(Dialect::Smb3_1_1) || !client.session().should_sign {
            return Err(format!(
                "the server negotiated {dialect:?}, signing {}: this client takes only SMB 3.1.1 with signing (libsmbclient, ?client=libsmbclient, also speaks SMB 3.0 and 3.0.2, signed)",
                if client.session().should_sign { "on" } else { "off" }
            ));
        }
        let conn = client
            .connection_for(&tree)
            .map_err(|e| format!("no connection for the share: {e}"))?;
        Ok(Conn {
            rt,
            client: Some(client),
            conn: Some(conn),
            tree: Some(tree),
            broken: AtomicBool::new(false),
        })
    }

    /// Runs one call on this connection, bounded by [`CALL_TIMEOUT`]. The call may borrow
    /// from the caller (a WRITE its data): it is done before this returns.
    fn run<'f, T>(
        &self,
        op: &str,
        what: &str,
        call: impl FnOnce(Tree, Connection) -> Pin<Box<dyn Future<Output = smb2::Result<T>> + 'f>>,
    ) -> io::Result<T> {
        let tree = self.tree.clone().expect("connection in use after close");
        let conn = self.conn.clone().expect("connection in use after close");
        let fut = call(tree, conn);
        let got = match self
            .rt
            .block_on(async { tokio::time::timeout(CALL_TIMEOUT, fut).await })
        {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(io_error(op, what, e)),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "smb {op} {what}: no answer within {} s",
                    CALL_TIMEOUT.as_secs()
                ),
            )),
        };
        got.inspect_err(|e| self.doubt(e))
    }

    /// Marks the connection broken if `e` leaves it in doubt (no answer, or lost).
    fn doubt(&self, e: &io::Error) {
        use io::ErrorKind as K;
        if matches!(
            e.kind(),
            K::TimedOut
                | K::ConnectionAborted
                | K::ConnectionReset
                | K::BrokenPipe
                | K::UnexpectedEof
        ) {
            self.broken.store(true, Ordering::Relaxed);
        }
    }

    fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    fn tree_id(&self) -> TreeId {
        self.tree.as_ref().expect("tree").tree_id
    }
}

impl Drop for Conn {
    /// The tree and the session are left politely (bounded), and everything that may
    /// spawn a task is dropped inside the runtime, where the crate expects to be.
    fn drop(&mut self) {
        let _inside = self.rt.enter();
        if let (Some(tree), Some(mut conn)) = (self.tree.take(), self.conn.take()) {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(5), tree.disconnect(&mut conn)).await
            });
        }
        self.client.take();
    }
}

/// What every handle and call shares: how to connect, the idle connections, and the
/// connection each caller holds.
struct Shared {
    config: ClientConfig,
    share: String,
    idle: Mutex<Vec<Conn>>,
    leases: PerCaller<Lease>,
}

impl Shared {
    fn new(config: ClientConfig, share: String) -> Arc<Shared> {
        Arc::new(Shared {
            config,
            share,
            idle: Mutex::new(Vec::new()),
            leases: PerCaller::default(),
        })
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Conn>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self) -> io::Result<Conn> {
        if let Some(c) = self.idle().pop() {
            return Ok(c);
        }
        Conn::connect(&self.config, &self.share).map_err(|e| {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("smb connect: {e}"),
            )
        })
    }

    /// Pools `c` for the next caller, unless it is broken or the pool is full (then it is
    /// closed).
    fn give(&self, c: Conn) {
        if c.is_broken() {
            return;
        }
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(c);
        }
    }

    /// The connection the calling caller holds, or one from the pool that it holds from
    /// now on (for as long as something keeps the lease).
    fn lease(self: &Arc<Self>) -> io::Result<Arc<Lease>> {
        self.leases.get_or_make(
            |l| !l.is_broken(),
            || {
                Ok(Arc::new(Lease {
                    conn: Some(self.take()?),
                    shared: self.clone(),
                }))
            },
        )
    }

    /// Runs `f` on the caller's connection (a metadata call, no file kept open).
    fn with<T>(self: &Arc<Self>, f: impl FnOnce(&Conn) -> io::Result<T>) -> io::Result<T> {
        f(&**self.lease()?)
    }
}

/// A connection held by one caller: its open files and its calls share it. Given back
/// when the last holder lets go (`Shared::give`: pooled, or closed if broken or the pool
/// is full). Once it is broken, the caller's next open or call takes a new one; the files
/// still on it fail.
struct Lease {
    /// `None` only while dropped.
    conn: Option<Conn>,
    shared: Arc<Shared>,
}

impl std::ops::Deref for Lease {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn.as_ref().expect("lease holds its connection")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.shared.give(c);
        }
    }
}

pub struct SmbRustBackend {
    shown: String,
    /// The directory inside the share the target is rooted at (no leading `/`).
    base: String,
    shared: Arc<Shared>,
    read_max: usize,
    write_max: usize,
    /// The signing algorithm the session negotiated.
    signing: &'static str,
    /// Where a DFS referral sent the target (`\\server\share\path`), if it did.
    referral: Option<String>,
    /// The working directories this backend made at the target's root, each held open
    /// without FILE_SHARE_DELETE until it is removed (see `pin`).
    pins: Mutex<HashMap<String, SmbRustFile>>,
}

/// Where a DFS referral sends a path: the server to dial, its share and the path on it.
struct DfsTarget {
    addr: String,
    share: String,
    path: String,
}

/// A DFS policy that lets the crate dial a referral's target only where `netguard` allows
/// (loopback, or the lab's own network namespaces).
fn netguard_policy(spec: &str) -> smb2::DfsTargetPolicy {
    let spec = spec.to_string();
    smb2::DfsTargetPolicy::Ask(Arc::new(move |sign_in: &smb2::DfsSignIn| {
        netguard::resolve_allowed(&sign_in.target, &spec).is_ok()
    }))
}

/// Follows `path` through the DFS root `c`'s tree is, if it is one: `None` for a share that
/// is no DFS root, for its root itself, or for a path on no link.
fn follow_dfs(c: &mut Conn, path: &str, spec: &str) -> Result<Option<DfsTarget>, String> {
    let tree = c.tree.clone().expect("a fresh connection has its tree");
    if !tree.is_dfs || path.is_empty() {
        return Ok(None);
    }
    let client = c
        .client
        .as_mut()
        .expect("a fresh connection has its client");
    let link = match c.rt.block_on(async {
        tokio::time::timeout(CONNECT_TIMEOUT, client.resolve_dfs_link(&tree, path)).await
    }) {
        Ok(Ok(Some(link))) => link,
        Ok(Ok(None)) => return Ok(None),
        Ok(Err(e)) => return Err(format!("target '{spec}': DFS referral: {e}")),
        Err(_) => {
            return Err(format!(
                "target '{spec}': DFS referral: no answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            ))
        }
    };
    // `Tree::server` of a link's tree is the address the crate dialled, `host:port`.
    let addr = link.tree.server.clone();
    let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
    netguard::resolve_allowed(host, spec)?;
    Ok(Some(DfsTarget {
        addr,
        share: link.tree.share_name.clone(),
        path: link.path.trim_matches('/').to_string(),
    }))
}

impl SmbRustBackend {
    /// Parses `spec`, checks the host against the network rule, logs in (refusing anything
    /// but signed SMB 3.1.1) and checks that the share path is a directory. Errors are one
    /// line for the user.
    pub fn new(spec: &str) -> Result<SmbRustBackend, String> {
        let t = parse(spec)?;
        let ip = netguard::resolve_allowed(&t.host, spec)?;
        let host = if ip.is_ipv6() {
            format!("[{ip}]:{}", t.port)
        } else {
            format!("{ip}:{}", t.port)
        };
        let config = ClientConfig {
            addr: host,
            timeout: CONNECT_TIMEOUT,
            username: t.user.clone(),
            password: password()?,
            domain: t.workgroup.clone(),
            auto_reconnect: false,
            compression: false,
            dfs_enabled: true,
            dfs_target_policy: netguard_policy(spec),
            response_timeout: Some(CALL_TIMEOUT),
            ..ClientConfig::default()
        };
        let mut shared = Shared::new(config.clone(), t.share.clone());
        let mut c = shared.take().map_err(|e| format!("target '{spec}': {e}"))?;
        let mut base = t.path.clone();
        let mut referral = None;
        if let Some(target) = follow_dfs(&mut c, &t.path, spec)? {
            // Every connection from here on goes to the target, as a DFS client caches
            // the referral; the root's connection is left.
            drop(c);
            let config = ClientConfig {
                addr: target.addr.clone(),
                dfs_enabled: false,
                ..config
            };
            shared = Shared::new(config, target.share.clone());
            c = shared.take().map_err(|e| format!("target '{spec}': {e}"))?;
            referral = Some(
                format!("\\\\{}\\{}\\{}", target.addr, target.share, target.path)
                    .trim_end_matches('\\')
                    .to_string(),
            );
            base = target.path;
        }
        let params = c.client.as_ref().and_then(|cl| cl.params());
        let (read_max, write_max) = params
            .as_ref()
            .map(|p| (p.max_read_size as usize, p.max_write_size as usize))
            .unwrap_or((65536, 65536));
        let signing = if params.as_ref().is_some_and(|p| p.gmac_negotiated) {
            "aes-gmac"
        } else {
            "aes-cmac"
        };
        let b = SmbRustBackend {
            shown: spec.to_string(),
            base,
            shared: shared.clone(),
            read_max: read_max.clamp(4096, 8 << 20),
            write_max: write_max.clamp(4096, 8 << 20),
            signing,
            referral,
            pins: Mutex::new(HashMap::new()),
        };
        let root = b.path("");
        let st = c
            .run("stat", &root, |tree, mut conn| {
                let p = root.clone();
                Box::pin(async move { tree.stat(&mut conn, &p).await })
            })
            .map_err(|e| format!("target '{spec}': {e}"))?;
        shared.give(c);
        if !st.is_directory {
            return Err(format!("target '{spec}' is not a directory"));
        }
        Ok(b)
    }

    /// The share path of a backend-relative path.
    fn path(&self, rel: &str) -> String {
        let rel = rel.trim_matches('/');
        match (self.base.is_empty(), rel.is_empty()) {
            (true, _) => rel.to_string(),
            (false, true) => self.base.clone(),
            (false, false) => format!("{}/{rel}", self.base),
        }
    }

    /// Runs a call that takes the tree, a connection and a path on a borrowed connection.
    fn call<T: 'static>(
        &self,
        op: &str,
        rel: &str,
        f: impl FnOnce(Tree, Connection, String) -> Pin<Box<dyn Future<Output = smb2::Result<T>>>>,
    ) -> io::Result<T> {
        let p = self.path(rel);
        self.shared
            .with(|c| c.run(op, &p, |tree, conn| f(tree, conn, p.clone())))
    }
}

fn ns_of(t: FileTime) -> i128 {
    t.to_system_time()
        .and_then(|s| s.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

fn time_of(ns: i128) -> FileTime {
    let t = if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs() as u64)
    };
    FileTime::from_system_time(t)
}

/// The CREATE for an open(2)-like request on the file at `path`.
fn create_request(path: &str, how: OpenOptions) -> CreateRequest {
    let mut access = FileAccessMask::FILE_READ_ATTRIBUTES | FileAccessMask::SYNCHRONIZE;
    if how.read {
        access |= FileAccessMask::FILE_READ_DATA;
    }
    if how.write {
        access |= FileAccessMask::FILE_WRITE_DATA | FileAccessMask::FILE_WRITE_ATTRIBUTES;
    }
    let disposition = match (how.create, how.truncate) {
        (true, true) => CreateDisposition::FileOverwriteIf,
        (true, false) => CreateDisposition::FileOpenIf,
        (false, true) => CreateDisposition::FileOverwrite,
        (false, false) => CreateDisposition::FileOpen,
    };
    // A symlink planted under the name is opened as itself (servers that honour the flag:
    // Windows, Samba 4.22 and later), so `open` sees it and refuses it.
    let mut options = FILE_NON_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT;
    if how.sync {
        options |= FILE_WRITE_THROUGH;
    }
    CreateRequest {
        requested_oplock_level: OplockLevel::None,
        impersonation_level: ImpersonationLevel::Impersonation,
        desired_access: FileAccessMask::new(access),
        file_attributes: ATTRIBUTE_NORMAL,
        share_access: ShareAccess(
            ShareAccess::FILE_SHARE_READ
                | ShareAccess::FILE_SHARE_WRITE
                | ShareAccess::FILE_SHARE_DELETE,
        ),
        create_disposition: disposition,
        create_options: options,
        name: smb2::encode_path(path),
        create_contexts: Vec::new(),
    }
}

/// Opens a file: its id, and its attributes as the server gave them.
async fn open_file(
    conn: Connection,
    tree_id: TreeId,
    req: CreateRequest,
) -> smb2::Result<(FileId, u32)> {
    let frame = conn.execute(Command::Create, &req, Some(tree_id)).await?;
    if frame.header.status != NtStatus::SUCCESS {
        return Err(status_error(frame.header.status, Command::Create));
    }
    let r = CreateResponse::unpack(&mut ReadCursor::new(&frame.body))?;
    Ok((r.file_id, r.file_attributes))
}

/// A READ's reply with its data left where it arrived: the crate's `ReadResponse::unpack`
/// would copy it out, and a 1 MiB READ is copied often enough on its way in.
struct ReadReply {
    body: FrameBytes,
    data: Range<usize>,
}

impl ReadReply {
    fn data(&self) -> &[u8] {
        &self.body[self.data.clone()]
    }

    /// The reply to a READ that found the end of the file.
    fn eof() -> ReadReply {
        ReadReply {
            body: Vec::new().into(),
            data: 0..0,
        }
    }

    /// Where the data of a READ response's body lies (MS-SMB2 2.2.20: StructureSize 17,
    /// DataOffset counted from the start of the SMB2 header, DataLength).
    fn new(body: FrameBytes) -> smb2::Result<ReadReply> {
        const HEADER: usize = 64;
        let malformed = || smb2::Error::invalid_data("malformed READ response");
        if body.len() < 16 || body[..2] != 17u16.to_le_bytes() {
            return Err(malformed());
        }
        let len = u32::from_le_bytes([body[4], body[5], body[6], body[7]]) as usize;
        let data = if len == 0 {
            0..0
        } else {
            let start = usize::from(body[2])
                .checked_sub(HEADER)
                .ok_or_else(malformed)?;
            let end = start
                .checked_add(len)
                .filter(|&end| end <= body.len())
                .ok_or_else(malformed)?;
            start..end
        };
        Ok(ReadReply { body, data })
    }
}

async fn read_at(
    conn: Connection,
    tree_id: TreeId,
    file_id: FileId,
    offset: u64,
    len: usize,
) -> smb2::Result<ReadReply> {
    let req = ReadRequest {
        padding: 0x50,
        flags: 0,
        length: len as u32,
        offset,
        file_id,
        minimum_count: 0,
        channel: SMB2_CHANNEL_NONE,
        remaining_bytes: 0,
        read_channel_info: vec![],
    };
    let frame = conn
        .execute_with_credits(Command::Read, &req, Some(tree_id), charge(len))
        .await?;
    if frame.header.status == NtStatus::END_OF_FILE {
        return Ok(ReadReply::eof());
    }
    if frame.header.status != NtStatus::SUCCESS {
        return Err(status_error(frame.header.status, Command::Read));
    }
    ReadReply::new(frame.body)
}

async fn write_at(
    conn: Connection,
    tree_id: TreeId,
    file_id: FileId,
    offset: u64,
    data: &[u8],
    through: bool,
) -> smb2::Result<usize> {
    let req = BorrowedWrite {
        offset,
        file_id,
        through,
        data,
    };
    send_write(conn, tree_id, &req).await
}

/// A WRITE request whose data stays where the caller has it: the crate's `WriteRequest`
/// owns its data, which would be one more copy of every buffer written (MS-SMB2 2.2.21,
/// packed as `WriteRequest` packs it). It packs the fixed part; the data goes out as the
/// message's tail, signed and sent from the caller's buffer (`execute_with_tail`).
struct BorrowedWrite<'a> {
    offset: u64,
    file_id: FileId,
    /// SMB2_WRITEFLAG_WRITE_THROUGH.
    through: bool,
    data: &'a [u8],
}

impl smb2::pack::Pack for BorrowedWrite<'_> {
    fn pack(&self, cursor: &mut smb2::pack::WriteCursor) {
        cursor.write_u16_le(WriteRequest::STRUCTURE_SIZE);
        cursor.write_u16_le(0x70); // DataOffset: the header (64) and this structure (48)
        cursor.write_u32_le(self.data.len() as u32);
        cursor.write_u64_le(self.offset);
        cursor.write_u64_le(self.file_id.persistent);
        cursor.write_u64_le(self.file_id.volatile);
        cursor.write_u32_le(0); // Channel
        cursor.write_u32_le(0); // RemainingBytes
        cursor.write_u16_le(0); // WriteChannelInfoOffset
        cursor.write_u16_le(0); // WriteChannelInfoLength
        cursor.write_u32_le(if self.through {
            WRITEFLAG_WRITE_THROUGH
        } else {
            0
        });
        // StructureSize 49 counts one byte of buffer, also for an empty write.
        if self.data.is_empty() {
            cursor.write_u8(0);
        }
    }
}

async fn send_write(
    conn: Connection,
    tree_id: TreeId,
    req: &BorrowedWrite<'_>,
) -> smb2::Result<usize> {
    let frame = conn
        .execute_with_tail(
            Command::Write,
            req,
            req.data,
            Some(tree_id),
            charge(req.data.len()),
        )
        .await?;
    if frame.header.status != NtStatus::SUCCESS {
        return Err(status_error(frame.header.status, Command::Write));
    }
    Ok(WriteResponse::unpack(&mut ReadCursor::new(&frame.body))?.count as usize)
}

async fn simple(
    conn: Connection,
    tree_id: TreeId,
    command: Command,
    body: Box<dyn smb2::pack::Pack + Send>,
) -> smb2::Result<()> {
    let frame = conn.execute(command, body.as_ref(), Some(tree_id)).await?;
    if frame.header.status != NtStatus::SUCCESS {
        return Err(status_error(frame.header.status, command));
    }
    Ok(())
}

/// FileBasicInformation (MS-FSCC 2.4.7) that changes only the attributes: zero times
/// mean "leave as is".
fn basic_info(file_id: FileId, attributes: u32) -> Box<dyn smb2::pack::Pack + Send> {
    let mut buffer = vec![0u8; 40];
    buffer[32..36].copy_from_slice(&attributes.to_le_bytes());
    Box::new(SetInfoRequest {
        info_type: InfoType::File,
        file_info_class: FILE_BASIC_INFORMATION,
        additional_information: 0,
        file_id,
        buffer,
    })
}

fn set_eof(file_id: FileId, len: u64) -> Box<dyn smb2::pack::Pack + Send> {
    Box::new(SetInfoRequest {
        info_type: InfoType::File,
        file_info_class: FILE_END_OF_FILE_INFORMATION,
        additional_information: 0,
        file_id,
        buffer: len.to_le_bytes().to_vec(),
    })
}

impl SmbRustBackend {
    fn pins(&self) -> MutexGuard<'_, HashMap<String, SmbRustFile>> {
        self.pins.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds the directory `path` (just made at the target's root) open without
    /// FILE_SHARE_DELETE, on the caller's connection, until `rmdir`: a rename or delete of
    /// it by anyone else (another SMB client, or a local process on a Windows server) then
    /// fails with a sharing violation, so the working directory cannot be swapped for a
    /// link or another directory under the run. SMB2 has no open relative to a directory
    /// handle; this is what the protocol offers instead. A Unix user on a Samba server's
    /// own disk is not bound by it.
    fn pin(&self, path: &str) -> io::Result<()> {
        let p = self.path(path);
        let req = CreateRequest {
            requested_oplock_level: OplockLevel::None,
            impersonation_level: ImpersonationLevel::Impersonation,
            // FILE_LIST_DIRECTORY (FILE_READ_DATA): an open asking only for attributes is a
            // stat open, which Windows and Samba leave out of share-mode checks.
            desired_access: FileAccessMask::new(
                FileAccessMask::FILE_READ_DATA
                    | FileAccessMask::FILE_READ_ATTRIBUTES
                    | FileAccessMask::SYNCHRONIZE,
            ),
            file_attributes: 0,
            share_access: ShareAccess(ShareAccess::FILE_SHARE_READ | ShareAccess::FILE_SHARE_WRITE),
            create_disposition: CreateDisposition::FileOpen,
            create_options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
            name: smb2::encode_path(&p),
            create_contexts: Vec::new(),
        };
        let (mut pin, attributes) = self.open_as(p, req, false)?;
        if attributes & ATTRIBUTE_REPARSE_POINT != 0 {
            let _ = pin.close_now();
            return Err(tampered(format!(
                "smb {}: a symlink where the tool's directory should be, not followed",
                pin.path
            )));
        }
        self.pins().insert(path.to_string(), pin);
        Ok(())
    }

    /// Pins (see `pin`) the directory `path` the tool has just made, if it is at the
    /// target's root, as working directories are. Also for libsmbclient's directories
    /// (`crate::smb`), which that library cannot pin itself.
    pub(crate) fn hold(&self, path: &str) -> io::Result<()> {
        if path.trim_matches('/').contains('/') {
            return Ok(());
        }
        self.pin(path)
    }

    /// Closes the pin of `path`, if any, before the tool removes it (the pin would refuse
    /// the tool's own delete too).
    pub(crate) fn let_go(&self, path: &str) {
        let pin = self.pins().remove(path);
        if let Some(mut pin) = pin {
            let _ = pin.close_now();
        }
    }

    /// Sends the CREATE `req` for `p` on the caller's connection: the open handle, which
    /// holds that connection until it is closed, and the attributes the server gave.
    fn open_as(&self, p: String, req: CreateRequest, sync: bool) -> io::Result<(SmbRustFile, u32)> {
        let conn = self.shared.lease()?;
        let tree_id = conn.tree_id();
        let (file_id, attributes) =
            conn.run("open", &p, |_, c| Box::pin(open_file(c, tree_id, req)))?;
        let file = SmbRustFile {
            conn: Some(conn),
            file_id,
            path: p,
            pos: 0,
            read_max: self.read_max,
            write_max: self.write_max,
            sync,
        };
        Ok((file, attributes))
    }
}

impl Backend for SmbRustBackend {
    /// Opens, into the pool (at most its size), the sessions `callers` concurrent load
    /// lanes will need beyond those they hold already (a lane holds its connection from
    /// set-up, with its files): made on demand, a session's NEGOTIATE, NTLM login and tree
    /// connect landed in the first load point's latency (p99 10-16 ms at 400/s, 4-6 ms at
    /// the next points).
    fn expect_callers(&self, callers: usize) -> io::Result<()> {
        let lanes = self.shared.leases.lanes();
        let idle = self.shared.idle().len();
        for _ in 0..callers.min(MAX_IDLE).saturating_sub(lanes + idle) {
            let c = Conn::connect(&self.shared.config, &self.shared.share).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    format!("smb connect: {e}"),
                )
            })?;
            self.shared.give(c);
        }
        Ok(())
    }

    fn info(&self) -> TargetInfo {
        TargetInfo {
            backend: "smb".into(),
            client: CLIENT.into(),
            local_root: None,
            fs_type: Some("smb3".into()),
            mount_point: Some(self.shown.clone()),
            mount_options: Some(format!(
                "protocol=SMB3_11,signing=required({}),rsize={},wsize={},connection-per-caller,nocache{}",
                self.signing,
                self.read_max,
                self.write_max,
                self.referral
                    .as_ref()
                    .map_or(String::new(), |r| format!(",dfs-referral={r}"))
            )),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let p = self.path(path);
        let req = create_request(&p, how);
        let (mut file, attributes) = self.open_as(p, req, how.sync)?;
        if attributes & (ATTRIBUTE_REPARSE_POINT | ATTRIBUTE_DIRECTORY) != 0 {
            let _ = file.close_now();
            return Err(tampered(format!(
                "smb {}: a symlink or a directory where a file of the tool's should be, not followed",
                file.path
            )));
        }
        Ok(Box::new(file))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        let st = self.call("stat", path, |tree, mut conn, p| {
            Box::pin(async move { tree.stat(&mut conn, &p).await })
        })?;
        Ok(FileStat {
            size: st.size,
            is_dir: st.is_directory,
            is_symlink: false,
            // What Samba shows of a mode over SMB: the type, and write bits unless the
            // read-only attribute is set.
            mode: match (st.is_directory, st.attributes.0 & ATTRIBUTE_READONLY != 0) {
                (true, false) => libc::S_IFDIR | 0o755,
                (true, true) => libc::S_IFDIR | 0o555,
                (false, false) => libc::S_IFREG | 0o644,
                (false, true) => libc::S_IFREG | 0o444,
            },
            nlink: 1,
            mtime_ns: ns_of(st.modified),
        })
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        // SMB without POSIX extensions shows no symlinks: lstat is stat.
        self.stat(path)
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        let mut f = self.open(
            path,
            OpenOptions {
                write: true,
                ..Default::default()
            },
        )?;
        let r = f.set_len(len);
        r.and(f.close())
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        self.call("unlink", path, |tree, mut conn, p| {
            Box::pin(async move { tree.delete_file(&mut conn, &p).await })
        })
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.call("mkdir", path, |tree, mut conn, p| {
            Box::pin(async move { tree.create_directory(&mut conn, &p).await })
        })?;
        self.hold(path)
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        self.let_go(path);
        self.call("rmdir", path, |tree, mut conn, p| {
            Box::pin(async move { tree.delete_directory(&mut conn, &p).await })
        })
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let to = self.path(to);
        self.call("rename", from, move |tree, mut conn, p| {
            Box::pin(async move {
                tree.rename_with(
                    &mut conn,
                    &p,
                    &to,
                    RenameOptions::new().replace_if_exists(true),
                )
                .await
            })
        })
    }

    fn link(&self, _existing: &str, _new: &str) -> io::Result<()> {
        Err(unsupported("link over the smb2 client"))
    }

    fn symlink(&self, _target: &str, _link: &str) -> io::Result<()> {
        Err(unsupported("symlink over the smb2 client"))
    }

    fn readlink(&self, _path: &str) -> io::Result<String> {
        Err(unsupported("readlink over the smb2 client"))
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        let list = self.call("readdir", path, |tree, mut conn, p| {
            Box::pin(async move { tree.list_directory(&mut conn, &p).await })
        })?;
        Ok(list
            .into_iter()
            .filter(|e| e.name != "." && e.name != "..")
            .map(|e| DirEntry {
                name: e.name,
                is_dir: e.is_directory,
            })
            .collect())
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        let fs = self.call("statfs", path, |tree, mut conn, _| {
            Box::pin(async move { tree.fs_info(&mut conn).await })
        })?;
        Ok(FsStat {
            block_size: u64::from(fs.bytes_per_sector) * u64::from(fs.sectors_per_unit.max(1)),
            total_bytes: fs.total_bytes,
            free_bytes: fs.free_bytes,
            total_files: 0,
            free_files: 0,
            read_only: false,
        })
    }

    /// SMB has DOS attributes, not modes: as libsmbclient and Samba map them, a mode
    /// without write bits sets the read-only attribute and any write bit clears it.
    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        let attributes = if mode & 0o222 == 0 {
            ATTRIBUTE_READONLY
        } else {
            ATTRIBUTE_NORMAL
        };
        let p = self.path(path);
        let mut req = create_request(
            &p,
            OpenOptions {
                read: true,
                ..Default::default()
            },
        );
        req.desired_access = FileAccessMask::new(
            FileAccessMask::FILE_READ_ATTRIBUTES | FileAccessMask::FILE_WRITE_ATTRIBUTES,
        );
        req.create_options = 0;
        self.shared.with(|c| {
            let tree_id = c.tree_id();
            c.run("chmod", &p, move |_, conn| {
                Box::pin(async move {
                    let (file_id, _) = open_file(conn.clone(), tree_id, req).await?;
                    let set = simple(
                        conn.clone(),
                        tree_id,
                        Command::SetInfo,
                        basic_info(file_id, attributes),
                    )
                    .await;
                    let closed = simple(
                        conn,
                        tree_id,
                        Command::Close,
                        Box::new(CloseRequest { flags: 0, file_id }),
                    )
                    .await;
                    set.and(closed)
                })
            })
        })
    }

    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        // No client cache: every read is a READ.
        Ok(Purge::NotNeeded)
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let times = FileTimes::new()
            .set_accessed(time_of(atime_ns))
            .set_modified(time_of(mtime_ns));
        self.call("utimes", path, move |tree, mut conn, p| {
            Box::pin(async move { tree.set_times(&mut conn, &p, times).await })
        })
    }

    /// Any depth: READs and WRITEs in flight on the file's connection.
    fn check_iodepth(&self, _depth: u32) -> Result<(), String> {
        Ok(())
    }
}

/// An open file, with the connection it was opened on (its caller's).
struct SmbRustFile {
    /// `None` only after close.
    conn: Option<Arc<Lease>>,
    file_id: FileId,
    /// For error messages.
    path: String,
    pos: u64,
    read_max: usize,
    write_max: usize,
    sync: bool,
}

impl SmbRustFile {
    fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("smb file used after close")
    }

    /// Sends CLOSE and lets go of the connection; one whose CLOSE failed is not reused.
    fn close_now(&mut self) -> io::Result<()> {
        let Some(c) = self.conn.take() else {
            return Ok(());
        };
        let (tree_id, file_id) = (c.tree_id(), self.file_id);
        let r = c.run("close", &self.path, |_, conn| {
            Box::pin(simple(
                conn,
                tree_id,
                Command::Close,
                Box::new(CloseRequest { flags: 0, file_id }),
            ))
        });
        if r.is_err() {
            c.broken.store(true, Ordering::Relaxed);
        }
        r
    }
}

impl FileHandle for SmbRustFile {
    cursor_over_positional_calls!(pos);

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.read_max);
        let (file_id, path) = (self.file_id, self.path.clone());
        let c = self.conn();
        let tree_id = c.tree_id();
        let reply = c.run("read", &path, |_, conn| {
            Box::pin(read_at(conn, tree_id, file_id, offset, n))
        })?;
        let data = reply.data();
        let got = data.len().min(n);
        buf[..got].copy_from_slice(&data[..got]);
        Ok(got)
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.write_max);
        let (file_id, path, sync) = (self.file_id, self.path.clone(), self.sync);
        let c = self.conn();
        let tree_id = c.tree_id();
        let wrote = c.run("write", &path, |_, conn| {
            Box::pin(write_at(conn, tree_id, file_id, offset, &buf[..n], sync))
        })?;
        Ok(wrote.min(n))
    }

    fn fsync(&mut self) -> io::Result<()> {
        let (file_id, path) = (self.file_id, self.path.clone());
        let c = self.conn();
        let tree_id = c.tree_id();
        c.run("flush", &path, |_, conn| {
            Box::pin(simple(
                conn,
                tree_id,
                Command::Flush,
                Box::new(FlushRequest { file_id }),
            ))
        })
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let (file_id, path) = (self.file_id, self.path.clone());
        let c = self.conn();
        let tree_id = c.tree_id();
        c.run("set length", &path, |_, conn| {
            Box::pin(simple(
                conn,
                tree_id,
                Command::SetInfo,
                set_eof(file_id, len),
            ))
        })
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(SmbQueue {
            slots: vec![vec![0xA5; slot_len]; depth],
            slot_len,
            flight: (0..depth).map(|_| None).collect(),
            file: self,
        }))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.close_now()
    }
}

impl Drop for SmbRustFile {
    fn drop(&mut self) {
        let _ = self.close_now();
    }
}

type Pending = Pin<Box<dyn Future<Output = smb2::Result<Done>>>>;

enum Done {
    /// The replies of a request's consecutive READs (one unless it was over the maximum).
    Read(Vec<ReadReply>),
    /// Bytes written, and the slot's buffer, lent to the request while it was in flight.
    Wrote(usize, Vec<u8>),
}

/// Up to `depth` READs and WRITEs on one file in flight on its connection: futures
/// polled together while the worker waits for the next completion, so a request goes on
/// the wire the first time the queue is polled after it was submitted. Requests longer
/// than the negotiated sizes are sent as consecutive chunks.
struct SmbQueue<'f> {
    file: &'f mut SmbRustFile,
    slots: Vec<Vec<u8>>,
    /// Each slot's length: a slot lent to a WRITE that failed is made again.
    slot_len: usize,
    flight: crate::inflight::Flight<Pending>,
}

async fn read_chunks(
    conn: Connection,
    ids: (TreeId, FileId),
    offset: u64,
    len: usize,
    max: usize,
) -> smb2::Result<Done> {
    let (mut replies, mut got) = (Vec::new(), 0);
    while got < len {
        let n = (len - got).min(max);
        let mut reply = read_at(conn.clone(), ids.0, ids.1, offset + got as u64, n).await?;
        let short = reply.data.len() < n;
        reply.data.end = reply.data.end.min(reply.data.start + n);
        got += reply.data.len();
        replies.push(reply);
        if short {
            break;
        }
    }
    Ok(Done::Read(replies))
}

/// Writes the first `len` bytes of a slot's buffer, which it hands back when done.
async fn write_chunks(
    conn: Connection,
    ids: (TreeId, FileId),
    offset: u64,
    (slot, len): (Vec<u8>, usize),
    max: usize,
    through: bool,
) -> smb2::Result<Done> {
    let data = &slot[..len];
    if data.len() <= max {
        // One WRITE (also an empty one).
        let wrote = write_at(conn, ids.0, ids.1, offset, data, through).await?;
        return Ok(Done::Wrote(wrote.min(len), slot));
    }
    // Chunks of at most the negotiated size, each packed from where it lies.
    let mut done = 0;
    while done < data.len() {
        let n = (data.len() - done).min(max);
        let chunk = &data[done..done + n];
        let wrote = write_at(
            conn.clone(),
            ids.0,
            ids.1,
            offset + done as u64,
            chunk,
            through,
        )
        .await?
        .min(n);
        done += wrote;
        if wrote < n {
            break;
        }
    }
    Ok(Done::Wrote(done, slot))
}

impl IoQueue for SmbQueue<'_> {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        &mut self.slots[slot]
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        let (file_id, sync) = (self.file.file_id, self.file.sync);
        let (read_max, write_max) = (self.file.read_max, self.file.write_max);
        let c = self.file.conn();
        let ids = (c.tree_id(), file_id);
        let conn = c.conn.clone().expect("connection");
        let fut: Pending = if io.write {
            // Lent to the request, not copied: the caller does not touch a slot in flight.
            let data = (std::mem::take(&mut self.slots[io.slot]), io.len);
            Box::pin(write_chunks(conn, ids, io.offset, data, write_max, sync))
        } else {
            Box::pin(read_chunks(conn, ids, io.offset, io.len, read_max))
        };
        self.flight[io.slot] = Some((io.write, fut));
        Ok(())
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        if self.flight.iter().all(Option::is_none) {
            return Err(io::Error::other("smb: no request in flight"));
        }
        let flight = &mut self.flight;
        let rt = &self.file.conn().rt;
        let (slot, write, out) = crate::inflight::wait_next(rt, flight, CALL_TIMEOUT, "smb")
            .inspect_err(|e| self.file.conn().doubt(e))?;
        let op = if write { "write" } else { "read" };
        let res = match out {
            Err(e) => {
                if self.slots[slot].is_empty() {
                    self.slots[slot] = vec![0xA5; self.slot_len];
                }
                let e = io_error(op, &self.file.path, e);
                self.file.conn().doubt(&e);
                Err(e)
            }
            Ok(Done::Read(replies)) => {
                let mut got = 0;
                for data in replies.iter().map(ReadReply::data) {
                    self.slots[slot][got..got + data.len()].copy_from_slice(data);
                    got += data.len();
                }
                Ok(got)
            }
            Ok(Done::Wrote(n, buf)) => {
                self.slots[slot] = buf;
                Ok(n)
            }
        };
        Ok((slot, res))
    }
}

impl Drop for SmbQueue<'_> {
    /// Requests still in flight are waited for (each bounded by the call timeout).
    fn drop(&mut self) {
        while self.flight.iter().any(Option::is_some) {
            if self.complete().is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed part followed by the data (the tail sent apart) is what the crate's
    /// `WriteRequest` packs.
    #[test]
    fn a_borrowed_write_packs_as_the_crates_write_request() {
        use smb2::pack::{Pack, WriteCursor};
        let file_id = FileId {
            persistent: 0x0102_0304_0506_0708,
            volatile: 0x1112_1314_1516_1718,
        };
        for (data, through) in [(vec![7u8; 3000], false), (vec![], true)] {
            let ours = BorrowedWrite {
                offset: 1 << 40,
                file_id,
                through,
                data: &data,
            };
            let theirs = WriteRequest {
                data_offset: 0x70,
                offset: 1 << 40,
                file_id,
                channel: 0,
                remaining_bytes: 0,
                write_channel_info_offset: 0,
                write_channel_info_length: 0,
                flags: if through { WRITEFLAG_WRITE_THROUGH } else { 0 },
                data: data.clone(),
            };
            let (mut a, mut b) = (WriteCursor::new(), WriteCursor::new());
            ours.pack(&mut a);
            a.write_bytes(&data);
            theirs.pack(&mut b);
            assert_eq!(a.into_inner(), b.into_inner());
        }
    }

    #[test]
    fn a_dfs_referral_is_followed_only_where_the_network_rule_allows() {
        let smb2::DfsTargetPolicy::Ask(allowed) = netguard_policy("smb://u@127.0.0.1/dfs/x") else {
            panic!("the policy asks netguard");
        };
        let to = |target: &str| smb2::DfsSignIn {
            server: "127.0.0.1".into(),
            target: target.into(),
        };
        assert!(allowed(&to("127.0.0.1")));
        assert!(allowed(&to("localhost")));
        if !netguard::in_private_netns() {
            // A referral to any other machine, or to a name only DNS knows, is refused.
            assert!(!allowed(&to("192.0.2.1")));
            assert!(!allowed(&to("fileserver.example.com")));
        }
    }

    /// A READ response's body: header fields, then `pad` bytes, then `data`.
    fn read_body(data_offset: u8, data: &[u8], pad: usize) -> Vec<u8> {
        let mut b = 17u16.to_le_bytes().to_vec();
        b.extend([data_offset, 0]);
        b.extend((data.len() as u32).to_le_bytes());
        b.extend([0; 8]);
        b.extend(vec![0; pad]);
        b.extend(data);
        b
    }

    #[test]
    fn a_read_reply_finds_its_data_in_place_and_refuses_what_overruns() {
        let r = ReadReply::new(read_body(64 + 16, b"abc", 0).into()).unwrap();
        assert_eq!(r.data(), b"abc");
        let r = ReadReply::new(read_body(64 + 24, b"xyz", 8).into()).unwrap();
        assert_eq!(r.data(), b"xyz", "data where its offset says, past padding");
        assert_eq!(
            ReadReply::new(read_body(0, b"", 0).into()).unwrap().data(),
            b""
        );
        let mut overrun = read_body(64 + 16, b"abc", 0);
        overrun[4] = 4;
        assert!(
            ReadReply::new(overrun.into()).is_err(),
            "length beyond the body"
        );
        assert!(
            ReadReply::new(read_body(10, b"abc", 0).into()).is_err(),
            "offset inside the header"
        );
        let mut size = read_body(64 + 16, b"abc", 0);
        size[0] = 16;
        assert!(ReadReply::new(size.into()).is_err(), "not a READ response");
        assert!(ReadReply::new(vec![17, 0, 80].into()).is_err(), "too short");
    }

    #[test]
    fn opens_ask_for_what_open_2_would() {
        let r = create_request("a/b", OpenOptions::create_new());
        assert_eq!(r.create_disposition, CreateDisposition::FileOverwriteIf);
        assert_eq!(r.name, "a\\b");
        let r = create_request("f", OpenOptions::read_only());
        assert_eq!(r.create_disposition, CreateDisposition::FileOpen);
        assert_eq!(r.desired_access.0 & FileAccessMask::FILE_WRITE_DATA, 0);
        assert_eq!(charge(1).0, 1);
        assert_eq!(charge(65537).0, 2);
    }

    #[test]
    fn times_round_trip_through_filetime() {
        let ns = 1_700_000_000_123_456_700i128;
        assert_eq!(ns_of(time_of(ns)), ns);
    }
}
