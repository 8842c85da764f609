//! `nfs://host[:port]/pseudo/path?version=4.1` (or `4.2`): a native NFSv4.1 client. Files
//! (OPEN, READ, WRITE, COMMIT, CLOSE) go through sharebench's own data path (`wire.rs`,
//! `wire_file.rs`: a connection and session per caller, a worker's thread or a load lane,
//! spoken from the worker's thread); `client=nfs-rs` sends them through nfs-rs instead (`Nfs41File`, `queue.rs`).
//! Lookups, mkdir, readdir and the other namespace calls always go through the pure-Rust
//! nfs-rs crate (libnfs 4.0 has no NFSv4.1). `version=4.2` mounts the same way with minor
//! version 2 (the operations sent are NFSv4.1's; a server answers them as a v4.2 server,
//! where it has a v4.2 path).
//! nfs-rs keeps one mount per target: one TCP connection carrying one NFSv4.1 session
//! (EXCHANGE_ID, CREATE_SESSION, every COMPOUND led by SEQUENCE, the back channel bound
//! with BIND_CONN_TO_SESSION), shared by every worker.
//!
//! nfs-rs is asynchronous. The backend owns a tokio current-thread runtime and each call
//! blocks on it from the calling thread, so one worker's RPCs run on its own thread with no
//! hand-off. While no call is running, a small keeper thread drives the runtime for a moment
//! every [`IDLE_TICK`], so that nfs-rs's lease renewal and back-channel handling go on
//! while the target sits idle (between cells, or while other targets run).
//!
//! Writes are UNSTABLE WRITEs, as the kernel client and libnfs send them; `fsync` and
//! `close` COMMIT them (checking the write verifiers). With `O_SYNC` the data path sends
//! FILE_SYNC WRITEs (as libnfs does) and nfs-rs COMMITs after every write (it cannot ask
//! for FILE_SYNC). Neither keeps a data cache, so every read is a
//! READ RPC and `--cache` has nothing to purge. At most one READ or WRITE of the mount's
//! negotiated rsize/wsize per call.
//! A server that announces pNFS (EXCHGID4_FLAG_USE_PNFS_MDS) makes nfs-rs 0.11.1 send a
//! LAYOUTGET before every READ and WRITE, and fall back to plain ones when it is refused:
//! one more round trip per I/O against a server that has no layouts to give. The mount
//! options of the records say `pnfs-mds-announced` then (the lab's Ganesha is configured
//! not to announce it).
//! fallocate is NFSv4.2's ALLOCATE, on the data path with `version=4.2` only.
//! Not: mmap, locking.

mod queue;
mod wire;
mod wire_file;
mod xdr;

use crate::netguard;
use crate::nfsurl::{parse, Version};
use bytes::Bytes;
use nfs_rs::{
    Attr, DirectoryCookie, Mount, NFSVersion, Nfs4ErrorCode, NfsError, WriteCommitted,
    WriteOutcome, OPEN_BOTH, OPEN_READ, OPEN_WRITE,
};
use sharebench_core::backend::{
    tampered, Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, OpenOptions, Purge,
    PurgeRequest, TargetInfo,
};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::WireClient;
use wire_file::Wire;

/// What records and manifests call this client (by its data path: sharebench's own, or
/// nfs-rs's), and how its errors begin.
fn names(version: Version, own_data_path: bool) -> (&'static str, &'static str) {
    match (version, own_data_path) {
        (Version::V4_2, true) => ("sharebench-nfs4.2", "nfs4.2"),
        (Version::V4_2, false) => ("nfs-rs-nfs4.2", "nfs4.2"),
        (_, true) => ("sharebench-nfs4.1", "nfs4.1"),
        (_, false) => ("nfs-rs-nfs4.1", "nfs4.1"),
    }
}

/// A call that takes longer fails instead of hanging the run (nfs-rs has its own, shorter
/// per-RPC timeouts; this bounds retries too).
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Mounting: connect, EXCHANGE_ID, CREATE_SESSION, BIND_CONN_TO_SESSION, lookups.
const MOUNT_TIMEOUT: Duration = Duration::from_secs(30);
/// Unmounting when the backend is dropped (DESTROY_SESSION, DESTROY_CLIENTID).
const UMOUNT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the runtime must have been idle before the keeper drives it, and how often
/// the keeper looks.
const IDLE_TICK: Duration = Duration::from_secs(2);
/// How long the keeper drives an idle runtime each time (timers, lease renewal, replies).
const IDLE_DRIVE: Duration = Duration::from_millis(20);
/// Mode of created files and directories (as the posix backend, umask 022).
const FILE_MODE: u32 = 0o640;
const DIR_MODE: u32 = 0o755;
/// Symlinks followed by `stat` before giving up (as Linux's ELOOP limit, smaller).
const MAX_SYMLINKS: usize = 8;

/// nfs_ftype4 values (RFC 8881 §3.3.14 / RFC 7530).
const NF4DIR: u32 = 2;
const NF4LNK: u32 = 5;

/// The URL nfs-rs is given: the checked address instead of the name, the path
/// percent-encoded (nfs-rs decodes each segment once), the port as nfsport.
fn nfs_rs_url(t: &crate::nfsurl::Target, ip: IpAddr, reserved_port: bool) -> String {
    let host = match ip {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    };
    let mut path = String::new();
    for b in t.path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            path.push(b as char);
        } else {
            path.push_str(&format!("%{b:02X}"));
        }
    }
    let mut url = format!("nfs://{host}{path}?version={}", t.version.name());
    if let Some(p) = t.port {
        url.push_str(&format!("&nfsport={p}"));
    }
    for k in ["uid", "gid", "nfsport"] {
        if let Some(v) = t.arg(k) {
            url.push_str(&format!("&{k}={v}"));
        }
    }
    if !reserved_port {
        url.push_str("&noresvport=true");
    }
    url
}

/// The path nfs-rs wants for a backend-relative path: absolute from the export root.
fn abs(rel: &str) -> String {
    format!("/{}", rel.trim_start_matches('/'))
}

/// The errno an NFSv4 status stands for, so that error kinds match the other backends'.
fn errno_of(code: Nfs4ErrorCode) -> Option<i32> {
    use Nfs4ErrorCode as C;
    Some(match code {
        C::NFS4ERR_PERM => libc::EPERM,
        C::NFS4ERR_NOENT => libc::ENOENT,
        C::NFS4ERR_IO => libc::EIO,
        C::NFS4ERR_NXIO => libc::ENXIO,
        C::NFS4ERR_ACCESS => libc::EACCES,
        C::NFS4ERR_EXIST => libc::EEXIST,
        C::NFS4ERR_XDEV => libc::EXDEV,
        C::NFS4ERR_NOTDIR => libc::ENOTDIR,
        C::NFS4ERR_ISDIR => libc::EISDIR,
        C::NFS4ERR_INVAL => libc::EINVAL,
        C::NFS4ERR_FBIG => libc::EFBIG,
        C::NFS4ERR_NOSPC => libc::ENOSPC,
        C::NFS4ERR_ROFS => libc::EROFS,
        C::NFS4ERR_MLINK => libc::EMLINK,
        C::NFS4ERR_NAMETOOLONG => libc::ENAMETOOLONG,
        C::NFS4ERR_NOTEMPTY => libc::ENOTEMPTY,
        C::NFS4ERR_DQUOT => libc::EDQUOT,
        C::NFS4ERR_STALE => libc::ESTALE,
        C::NFS4ERR_NOTSUPP => libc::EOPNOTSUPP,
        C::NFS4ERR_SYMLINK => libc::ELOOP,
        _ => return None,
    })
}

/// The NFSv4 status inside an nfs-rs error, looking through its wrappers.
fn nfs4_status(e: &NfsError) -> Option<Nfs4ErrorCode> {
    match e {
        NfsError::Nfs4(code) => Some(*code),
        NfsError::OperationOutcome(o) => nfs4_status(&o.source),
        _ => None,
    }
}

/// One line for the user: the protocol (`nfs4.1`), the operation, what it was on, and
/// nfs-rs's error chain.
fn io_error(label: &str, op: &str, what: &str, e: NfsError) -> io::Error {
    let kind = match nfs4_status(&e).and_then(errno_of) {
        Some(errno) => io::Error::from_raw_os_error(errno).kind(),
        None => e.kind(),
    };
    let mut detail = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        let text = s.to_string();
        if !detail.contains(&text) {
            detail.push_str(": ");
            detail.push_str(&text);
        }
        source = s.source();
    }
    let mut detail = detail.replace('\n', " ");
    // Said in plain words, as libnfs's errors say it: nfs-rs's own ("Uncertain NFS
    // operation ...: early eof") name its recovery state, not what happened.
    if e.is_connection_lost() {
        detail = format!("the connection to the server was lost ({detail})");
    }
    io::Error::new(kind, format!("{label} {op} {what}: {detail}"))
}

/// Runs `rt`'s timers, tasks and I/O for [`IDLE_DRIVE`]. The timer is made inside the
/// runtime's context (within the future): made outside, tokio panics.
fn drive_briefly(rt: &tokio::runtime::Runtime) {
    rt.block_on(async { tokio::time::sleep(IDLE_DRIVE).await });
}

/// The runtime and the mount every handle and call shares.
struct Client {
    rt: tokio::runtime::Runtime,
    mount: Box<dyn Mount>,
    /// `nfs4.1` or `nfs4.2`, for error messages.
    label: &'static str,
    /// Calls running now, and when the last one ended (ms since `born`): the keeper drives
    /// the runtime only when both say it is idle.
    busy: AtomicUsize,
    last_ms: AtomicU64,
    born: Instant,
}

impl Client {
    /// Runs one nfs-rs call on this thread, bounded by `limit`.
    fn run_for<T>(
        &self,
        limit: Duration,
        op: &str,
        what: &str,
        call: impl Future<Output = nfs_rs::Result<T>>,
    ) -> io::Result<T> {
        self.busy.fetch_add(1, Ordering::SeqCst);
        let r = self
            .rt
            .block_on(async { tokio::time::timeout(limit, call).await });
        self.last_ms
            .store(self.born.elapsed().as_millis() as u64, Ordering::SeqCst);
        self.busy.fetch_sub(1, Ordering::SeqCst);
        match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(io_error(self.label, op, what, e)),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} {op} {what}: no answer within {} s",
                    self.label,
                    limit.as_secs()
                ),
            )),
        }
    }

    fn run<T>(
        &self,
        op: &str,
        what: &str,
        call: impl Future<Output = nfs_rs::Result<T>>,
    ) -> io::Result<T> {
        self.run_for(CALL_TIMEOUT, op, what, call)
    }

    /// Called by the keeper: drives the runtime briefly if nothing has for a while.
    fn drive_if_idle(&self) {
        let idle_ms = (self.born.elapsed().as_millis() as u64)
            .saturating_sub(self.last_ms.load(Ordering::SeqCst));
        if self.busy.load(Ordering::SeqCst) == 0 && idle_ms >= IDLE_TICK.as_millis() as u64 {
            drive_briefly(&self.rt);
        }
    }

    /// Attributes of `path` without following a final symlink (NFSv4 LOOKUP never does).
    fn lstat(&self, path: &str) -> io::Result<Attr> {
        let obj = self.run("lookup", path, self.mount.lookup_path(path))?;
        match obj.attr {
            Some(a) => Ok(a),
            // The export root itself: nfs-rs answers it without a LOOKUP.
            None => self.run("getattr", path, self.mount.getattr(obj.fh)),
        }
    }
}

pub struct Nfs41Backend {
    shown: String,
    version: Version,
    client: Arc<Client>,
    read_max: usize,
    write_max: usize,
    /// Session slots the server granted (what bounds concurrent RPCs), when reported.
    slots: Option<u32>,
    /// The server announced itself as a pNFS metadata server: nfs-rs then asks for a
    /// layout (LAYOUTGET) before READs and WRITEs, and uses plain ones when refused.
    pnfs_mds: bool,
    /// Files' OPEN, READ, WRITE, COMMIT and CLOSE through sharebench's own NFSv4.1 data
    /// path (`wire.rs`); `None` with `client=nfs-rs`, where nfs-rs carries them too.
    wire: Option<Arc<Wire>>,
    keeper: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
    /// The directories this backend made (paths from the export's root) and their file
    /// handles: what is created, opened or removed in them is reached by handle, so a
    /// directory another user swaps in under the same name is never written in.
    made: Mutex<HashMap<String, Bytes>>,
}

impl Nfs41Backend {
    /// Parses `spec`, checks the host against the network rule, mounts the export over
    /// NFSv4.1 or 4.2 and checks that it is a directory. Errors are one line for the user.
    pub fn new(spec: &str) -> Result<Nfs41Backend, String> {
        let t = parse(spec)?;
        if !t.version.through_nfs_rs() {
            return Err(format!(
                "target '{spec}': the nfs-rs client here is for version=4.1 and 4.2 only"
            ));
        }
        let (_, label) = names(t.version, !t.data_through_nfs_rs);
        if t.nconnect > 1 && t.data_through_nfs_rs {
            return Err(format!(
                "target '{spec}': nconnect needs sharebench's data path (client=sharebench); nfs-rs keeps one session per target"
            ));
        }
        if t.arg("mountport").is_some() {
            return Err(format!(
                "target '{spec}': mountport is NFSv3's MOUNT service; NFSv4 has none"
            ));
        }
        let ip = netguard::resolve_allowed(&t.host, spec)?;
        // A reserved (privileged) source port needs root; nfs-rs binds one by default.
        let reserved = nix::unistd::geteuid().is_root();
        let url = nfs_rs_url(&t, ip, reserved);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("target '{spec}': cannot start the nfs-rs runtime: {e}"))?;
        let mounted = rt.block_on(async {
            tokio::time::timeout(MOUNT_TIMEOUT, nfs_rs::parse_url_and_mount(&url)).await
        });
        let mount = match mounted {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => {
                return Err(format!(
                    "target '{spec}': {}",
                    io_error(label, "mount", &t.path, e)
                ))
            }
            Err(_) => {
                return Err(format!(
                    "target '{spec}': {label} mount: no answer within {} s",
                    MOUNT_TIMEOUT.as_secs()
                ))
            }
        };
        let client = Arc::new(Client {
            rt,
            mount,
            label,
            busy: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
            born: Instant::now(),
        });
        // From here on, dropping `backend` unmounts.
        let mut backend = Nfs41Backend {
            shown: spec.to_string(),
            version: t.version,
            client: client.clone(),
            read_max: (client.mount.get_max_read_size() as usize).max(4096),
            write_max: (client.mount.get_max_write_size() as usize).max(4096),
            slots: None,
            pnfs_mds: client.mount.capabilities().pnfs,
            wire: None,
            keeper: None,
            made: Mutex::new(HashMap::new()),
        };
        let asked = match t.version {
            Version::V4_2 => NFSVersion::NFSv4p2,
            _ => NFSVersion::NFSv4p1,
        };
        if client.mount.version() != asked {
            return Err(format!(
                "target '{spec}': nfs-rs mounted {:?}, not NFSv{}",
                client.mount.version(),
                t.version.name()
            ));
        }
        let limits = client.rt.block_on(client.mount.nfs41_channel_limits());
        let Some(limits) = limits else {
            return Err(format!(
                "target '{spec}': nfs-rs reports no NFSv4.1 or 4.2 session for this mount"
            ));
        };
        backend.slots = Some(limits.max_requests);
        let root = client
            .lstat("/")
            .map_err(|e| format!("target '{spec}': {e}"))?;
        if root.type_ != NF4DIR {
            return Err(format!("target '{spec}' is not a directory"));
        }
        if !t.data_through_nfs_rs {
            let port = t
                .port
                .or(t.arg("nfsport").map(|p| p as u16))
                .unwrap_or(2049);
            let io = backend.read_max.min(backend.write_max) as u32;
            let wire = wire_session(&t, SocketAddr::new(ip, port), io, label)
                .map_err(|e| format!("target '{spec}': {e}"))?;
            backend.slots = Some(wire.slots as u32);
            backend.wire = Some(Arc::new(wire));
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let kept = client.clone();
        let kept_wire = backend.wire.clone();
        let keeper = std::thread::Builder::new()
            .name("nfs41-keeper".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(IDLE_TICK) {
                    kept.drive_if_idle();
                    if let Some(w) = &kept_wire {
                        w.renew_if_idle();
                    }
                }
            })
            .map_err(|e| format!("target '{spec}': cannot start the nfs-rs keeper: {e}"))?;
        backend.keeper = Some((stop, keeper));
        Ok(backend)
    }

    /// Follows symlinks from `path` to what they name (relative targets only: an
    /// absolute one names the client's file system, not the export).
    fn follow(&self, path: &str) -> io::Result<Attr> {
        let mut path = abs(path);
        for _ in 0..=MAX_SYMLINKS {
            let a = self.client.lstat(&path)?;
            if a.type_ != NF4LNK {
                return Ok(a);
            }
            let target =
                self.client
                    .run("readlink", &path, self.client.mount.readlink_path(&path))?;
            if target.starts_with('/') {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{} stat {path}: absolute symlink target '{target}' is outside the export",
                        self.client.label
                    ),
                ));
            }
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            path = format!("{dir}/{target}");
        }
        Err(io::Error::from_raw_os_error(libc::ELOOP))
    }

    /// The file handle of directory `dir` (a path from the export's root): the one it had
    /// when this backend made it, else looked up through nfs-rs.
    fn dir_fh(&self, dir: &str) -> io::Result<Bytes> {
        if let Some(fh) = self.made().get(dir) {
            return Ok(fh.clone());
        }
        let m = &self.client.mount;
        Ok(self.client.run("lookup", dir, m.lookup_path(dir))?.fh)
    }

    fn made(&self) -> std::sync::MutexGuard<'_, HashMap<String, Bytes>> {
        self.made.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuses a path whose directory this backend made but that another one now stands
    /// for (someone swapped it): for the calls nfs-rs makes by path.
    fn check_dir_of(&self, p: &str) -> io::Result<()> {
        let dir = abs(p.rsplit_once('/').map_or("", |(d, _)| d));
        let Some(mine) = self.made().get(&dir).cloned() else {
            return Ok(());
        };
        let m = &self.client.mount;
        let now = self.client.run("lookup", &dir, m.lookup_path(&dir))?.fh;
        if now != mine {
            return Err(tampered(format!(
                "{} {dir}: not the directory this run made",
                self.client.label
            )));
        }
        Ok(())
    }

    /// Opens `p` on the data path: OPEN by name in its directory's handle (creating with
    /// UNCHECKED4, which also truncates when asked: RFC 8881 §18.16.3).
    fn open_on_wire(
        &self,
        wire: &Arc<Wire>,
        p: String,
        access: u32,
        how: OpenOptions,
    ) -> io::Result<Box<dyn FileHandle>> {
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", &p));
        let dir_fh = self.dir_fh(&abs(dir))?;
        let share = match access {
            OPEN_READ => wire::SHARE_ACCESS_READ,
            OPEN_WRITE => wire::SHARE_ACCESS_WRITE,
            _ => wire::SHARE_ACCESS_READ | wire::SHARE_ACCESS_WRITE,
        };
        let create = how.create.then_some((FILE_MODE, how.truncate));
        let name = name.to_string();
        let mut file = wire.open(p, &dir_fh, &name, share, create, how.sync)?;
        if how.truncate && !how.create {
            file.set_len(0)?;
        }
        Ok(Box::new(file))
    }

    fn handle(&self, path: String, fh: Bytes, sync: bool) -> Nfs41File {
        Nfs41File {
            client: self.client.clone(),
            path,
            fh,
            open: true,
            pos: 0,
            read_max: self.read_max,
            write_max: self.write_max,
            sync,
            pending: Vec::new(),
        }
    }
}

impl Drop for Nfs41Backend {
    fn drop(&mut self) {
        if let Some((stop, keeper)) = self.keeper.take() {
            drop(stop);
            let _ = keeper.join();
        }
        // Ends the session and the client ID on the server; a dead server is not waited for.
        let c = &self.client;
        let _ = c.run_for(UMOUNT_TIMEOUT, "umount", &self.shown, c.mount.umount());
    }
}

/// A backend-relative path as its directory (from the export's root) and its last name.
fn split(path: &str) -> (String, String) {
    let p = abs(path);
    let (dir, name) = p.rsplit_once('/').unwrap_or(("", &p));
    (abs(dir), name.to_string())
}

fn stat_of(a: &Attr) -> FileStat {
    let fmt = match a.type_ {
        1 => libc::S_IFREG,
        NF4DIR => libc::S_IFDIR,
        3 => libc::S_IFBLK,
        4 => libc::S_IFCHR,
        NF4LNK => libc::S_IFLNK,
        6 => libc::S_IFSOCK,
        7 => libc::S_IFIFO,
        _ => 0,
    };
    FileStat {
        size: a.filesize,
        is_dir: a.type_ == NF4DIR,
        is_symlink: a.type_ == NF4LNK,
        mode: fmt | (a.file_mode & 0o7777),
        nlink: u64::from(a.nlink),
        mtime_ns: i128::from(a.mtime.seconds) * 1_000_000_000 + i128::from(a.mtime.nseconds),
    }
}

/// nfs-rs's time type from nanoseconds since the epoch (NFSv4 carries 64-bit seconds,
/// nfs-rs 32 unsigned ones: times before 1970 or after 2106 are refused).
fn time_of(ns: i128) -> io::Result<nfs_rs::Time> {
    let secs = ns.div_euclid(1_000_000_000);
    let nsecs = ns.rem_euclid(1_000_000_000) as u32;
    let secs = u32::try_from(secs).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nfs-rs takes times from 1970 to 2106 only",
        )
    })?;
    Ok(nfs_rs::Time {
        seconds: secs,
        nseconds: nsecs,
    })
}

impl Backend for Nfs41Backend {
    fn info(&self) -> TargetInfo {
        let slots = self
            .slots
            .map(|s| format!(",slots={s}"))
            .unwrap_or_default();
        let pnfs = if self.pnfs_mds {
            ",pnfs-mds-announced(layoutget-per-io)"
        } else {
            ""
        };
        let (client, label) = names(self.version, self.wire.is_some());
        TargetInfo {
            backend: "nfs".into(),
            client: client.into(),
            local_root: None,
            fs_type: Some(label.into()),
            mount_point: Some(self.shown.clone()),
            mount_options: Some(format!(
                "vers={},rsize={},wsize={}{slots}{pnfs},nocache,unstable-writes,commit-on-fsync-and-close,{}",
                self.version.name(),
                self.read_max,
                self.write_max,
                match &self.wire {
                    Some(w) if w.nconnect > 1 => format!(
                        "nconnect={},data:{}-connections-and-sessions-per-open-file-the-first-per-caller,namespace:nfs-rs-one-session",
                        w.nconnect, w.nconnect
                    ),
                    Some(_) => {
                        "data:connection-and-session-per-caller,namespace:nfs-rs-one-session"
                            .into()
                    }
                    None => "one-session-per-target".into(),
                }
            )),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let p = abs(path);
        let access = match (how.read, how.write) {
            (_, false) => OPEN_READ,
            (false, true) => OPEN_WRITE,
            (true, true) => OPEN_BOTH,
        };
        let m = &self.client.mount;
        if let Some(wire) = &self.wire {
            return self.open_on_wire(wire, p, access, how);
        }
        self.check_dir_of(&p)?;
        let create = || {
            self.client
                .run(
                    "create",
                    &p,
                    m.create_path_stateful_with_access(&p, Some(FILE_MODE), access),
                )
                .map(|f| f.object)
        };
        let obj = if how.create && how.truncate {
            // OPEN4_CREATE is UNCHECKED4 in nfs-rs: an existing file is opened as it is.
            create()?
        } else if how.create {
            // Not truncating: an existing file keeps its mode (nfs-rs sets the mode of a
            // file it creates with a SETATTR), so it is opened without creating first.
            match self.client.run("open", &p, m.open_path(&p, access)) {
                Ok(o) => o,
                Err(e) if e.kind() == io::ErrorKind::NotFound => create()?,
                Err(e) => return Err(e),
            }
        } else {
            self.client.run("open", &p, m.open_path(&p, access))?
        };
        // The handle owns the open state from here: an error below closes it on drop.
        let mut file = self.handle(p, obj.fh, how.sync);
        if how.truncate && obj.attr.as_ref().is_none_or(|a| a.filesize > 0) {
            file.set_len(0)?;
        }
        Ok(Box::new(file))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.follow(path).map(|a| stat_of(&a))
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.client.lstat(&abs(path)).map(|a| stat_of(&a))
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        let p = abs(path);
        let m = &self.client.mount;
        self.client.run(
            "setattr",
            &p,
            m.setattr_path(&p, false, None, None, None, Some(len), None, None),
        )
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        let (dir, name) = split(path);
        let fh = self.dir_fh(&dir)?;
        self.client
            .run("remove", &abs(path), self.client.mount.remove(fh, &name))
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        let (dir, name) = split(path);
        let fh = self.dir_fh(&dir)?;
        let m = &self.client.mount;
        let made = self
            .client
            .run("mkdir", &abs(path), m.mkdir(fh, &name, DIR_MODE))?;
        self.made().insert(abs(path), made.fh);
        Ok(())
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        let (dir, name) = split(path);
        let fh = self.dir_fh(&dir)?;
        let m = &self.client.mount;
        // NFSv4 REMOVE takes files too; rmdir(2) must not.
        let found = self
            .client
            .run("lookup", &abs(path), m.lookup(fh.clone(), &name))?;
        if found.attr.is_none_or(|a| a.type_ != NF4DIR) {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        self.client.run("remove", &abs(path), m.rmdir(fh, &name))?;
        self.made().remove(&abs(path));
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (f, t) = (abs(from), abs(to));
        self.client
            .run("rename", &f, self.client.mount.rename_path(&f, &t))?;
        // A directory this backend made keeps its handle under its new name.
        let mut made = self.made();
        let moved: Vec<String> = (made.keys())
            .filter(|k| **k == f || k.starts_with(&format!("{f}/")))
            .cloned()
            .collect();
        for k in moved {
            if let Some(fh) = made.remove(&k) {
                made.insert(format!("{t}{}", &k[f.len()..]), fh);
            }
        }
        Ok(())
    }

    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        let (e, n) = (abs(existing), abs(new));
        self.client
            .run("link", &n, self.client.mount.link_path(&e, &n))
            .map(|_| ())
    }

    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        // The target is stored as given (relative to the link's directory, as with symlink(2)).
        let l = abs(link);
        self.client
            .run("symlink", &l, self.client.mount.symlink_path(target, &l))
            .map(|_| ())
    }

    fn readlink(&self, path: &str) -> io::Result<String> {
        let p = abs(path);
        self.client
            .run("readlink", &p, self.client.mount.readlink_path(&p))
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        let p = abs(path);
        let m = &self.client.mount;
        let dir = self.client.run("lookup", &p, m.lookup_path(&p))?;
        let mut out = Vec::new();
        let mut at = DirectoryCookie::default();
        loop {
            let page = self
                .client
                .run("readdir", &p, m.readdirplus_page(dir.fh.clone(), at))?;
            out.extend(
                page.entries
                    .into_iter()
                    .filter(|e| e.file_name != "." && e.file_name != "..")
                    .map(|e| DirEntry {
                        is_dir: e.attr.as_ref().is_some_and(|a| a.type_ == NF4DIR),
                        name: e.file_name,
                    }),
            );
            if page.eof {
                return Ok(out);
            }
            at = page.next;
        }
    }

    fn statfs(&self, _path: &str) -> io::Result<FsStat> {
        // NFSv4 reports space in bytes for the export's file system, whatever the path.
        let s = self
            .client
            .run("fsstat", &self.shown, self.client.mount.fsstat())?;
        Ok(FsStat {
            block_size: 1,
            total_bytes: s.tbytes,
            free_bytes: s.abytes,
            total_files: s.tfiles,
            free_files: s.afiles,
            read_only: false,
        })
    }

    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        let p = abs(path);
        let m = &self.client.mount;
        self.client.run(
            "setattr",
            &p,
            m.setattr_path(&p, false, Some(mode & 0o7777), None, None, None, None, None),
        )
    }

    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        // nfs-rs keeps no data cache: every read goes to the server.
        Ok(Purge::NotNeeded)
    }

    /// Any depth: the session's slots carry concurrent requests (see `queue`).
    fn check_iodepth(&self, _depth: u32) -> Result<(), String> {
        Ok(())
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        let p = abs(path);
        let (a, t) = (time_of(atime_ns)?, time_of(mtime_ns)?);
        let m = &self.client.mount;
        self.client.run(
            "setattr",
            &p,
            m.setattr_path(&p, false, None, None, None, None, Some(a), Some(t)),
        )
    }
}

/// Establishes the data path's client ID and first session, as the nfs-rs mount's user.
fn wire_session(
    t: &crate::nfsurl::Target,
    addr: SocketAddr,
    io: u32,
    label: &'static str,
) -> io::Result<Wire> {
    static OWNERS: AtomicU64 = AtomicU64::new(0);
    let owner = format!(
        "sharebench-{}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        OWNERS.fetch_add(1, Ordering::Relaxed)
    );
    let uid = t
        .arg("uid")
        .unwrap_or_else(|| nix::unistd::getuid().as_raw());
    let gid = t
        .arg("gid")
        .unwrap_or_else(|| nix::unistd::getgid().as_raw());
    let minor = if t.version == Version::V4_2 { 2 } else { 1 };
    let (client, first) =
        WireClient::establish(addr, minor, uid, gid, owner.as_bytes(), io, CALL_TIMEOUT)
            .map_err(|e| io::Error::new(e.kind(), format!("{label} data path: {e}")))?;
    Ok(Wire::new(client, first, label, t.nconnect as usize))
}

/// An open NFSv4.1 file: its filehandle (nfs-rs keeps the open stateid for it), the
/// cursor, and the acknowledgements of UNSTABLE writes not yet committed.
struct Nfs41File {
    client: Arc<Client>,
    /// For error messages.
    path: String,
    fh: Bytes,
    /// False once CLOSE was sent.
    open: bool,
    pos: u64,
    read_max: usize,
    write_max: usize,
    /// Opened with O_SYNC: every write is committed before it returns.
    sync: bool,
    /// One acknowledgement per distinct write verifier (what COMMIT checks against).
    pending: Vec<WriteOutcome>,
}

impl Nfs41File {
    /// COMMITs every UNSTABLE write acknowledged so far, checking the verifiers.
    fn commit(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let m = &self.client.mount;
        self.client.run(
            "commit",
            &self.path,
            m.commit_write_batch(self.fh.clone(), 0, 0, &pending),
        )
    }

    fn remember(&mut self, w: WriteOutcome) {
        if w.committed == WriteCommitted::FileSync {
            return;
        }
        if !self
            .pending
            .iter()
            .any(|p| p.committed == w.committed && p.verifier == w.verifier)
        {
            self.pending.push(w);
        }
    }

    /// Sends CLOSE once; the open state on the server goes with it.
    fn close_state(&mut self) -> io::Result<()> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(());
        }
        let m = &self.client.mount;
        self.client
            .run("close", &self.path, m.close(self.fh.clone()))
    }
}

impl FileHandle for Nfs41File {
    cursor_over_positional_calls!(pos);

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.read_max);
        if n == 0 {
            return Ok(0);
        }
        let m = &self.client.mount;
        let data = self.client.run(
            "read",
            &self.path,
            m.read(self.fh.clone(), offset, n as u32),
        )?;
        if data.len() > n {
            return Err(io::Error::other(format!(
                "{} read: the server sent {} bytes for a READ of {n}",
                self.client.label,
                data.len()
            )));
        }
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.write_max);
        if n == 0 {
            return Ok(0);
        }
        let data = Bytes::copy_from_slice(&buf[..n]);
        let m = &self.client.mount;
        let w = self
            .client
            .run("write", &self.path, m.write(self.fh.clone(), offset, data))?;
        let count = (w.count as usize).min(n);
        self.remember(w);
        if self.sync {
            self.commit()?;
        }
        Ok(count)
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.commit()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let m = &self.client.mount;
        self.client.run(
            "setattr",
            &self.path,
            m.setattr(
                self.fh.clone(),
                None,
                None,
                None,
                None,
                Some(len),
                None,
                None,
            ),
        )
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(queue::Nfs41Queue::new(self, depth, slot_len)))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        // As the kernel client does on close: uncommitted data is committed first, so a
        // lost write is reported here rather than never.
        let committed = self.commit();
        let closed = self.close_state();
        committed.and(closed)
    }
}

impl Drop for Nfs41File {
    fn drop(&mut self) {
        let _ = self.commit();
        let _ = self.close_state();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfs_rs_gets_the_checked_address_and_an_encoded_path() {
        let t = parse("nfs://localhost:2050/nfs-sharing/a b%?version=4.1&uid=65534&gid=7").unwrap();
        assert_eq!(
            nfs_rs_url(&t, "127.0.0.1".parse().unwrap(), true),
            "nfs://127.0.0.1/nfs-sharing/a%20b%25?version=4.1&nfsport=2050&uid=65534&gid=7"
        );
        let t = parse("nfs://[::1]/?version=4.1").unwrap();
        assert_eq!(
            nfs_rs_url(&t, "::1".parse().unwrap(), false),
            "nfs://[::1]/?version=4.1&noresvport=true"
        );
    }

    #[test]
    fn a_lost_connection_is_said_in_plain_words() {
        let eof = NfsError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "early eof"));
        let e = io_error("nfs4.1", "commit", "/f0", eof);
        assert_eq!(
            e.to_string(),
            "nfs4.1 commit /f0: the connection to the server was lost (early eof)"
        );
        let denied = NfsError::Io(io::Error::new(io::ErrorKind::PermissionDenied, "no"));
        let e = io_error("nfs4.1", "open", "/f0", denied);
        assert_eq!(e.to_string(), "nfs4.1 open /f0: no");
    }

    #[test]
    fn refuses_what_nfsv41_does_not_have_in_one_line() {
        for (spec, needle) in [
            ("nfs://127.0.0.1/x?version=3", "version=4.1 and 4.2 only"),
            ("nfs://127.0.0.1/x?version=4.1&mountport=635", "MOUNT"),
            (
                "nfs://127.0.0.1/x?version=4.1&client=nfs-rs&nconnect=2",
                "nconnect needs sharebench's data path",
            ),
        ] {
            let e = Nfs41Backend::new(spec).err().unwrap();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn errors_keep_their_kind_and_name_the_call() {
        let e = io_error(
            "nfs4.1",
            "open",
            "/d/f",
            NfsError::Nfs4(Nfs4ErrorCode::NFS4ERR_NOENT),
        );
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().starts_with("nfs4.1 open /d/f: "), "{e}");
        let e = io_error(
            "nfs4.2",
            "mkdir",
            "/d",
            NfsError::Nfs4(Nfs4ErrorCode::NFS4ERR_EXIST),
        );
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn an_idle_runtime_is_driven_without_panicking() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ticked = std::sync::Arc::new(AtomicUsize::new(0));
        let t = ticked.clone();
        rt.spawn(async move {
            t.fetch_add(1, Ordering::SeqCst);
        });
        let start = Instant::now();
        drive_briefly(&rt);
        assert!(start.elapsed() >= IDLE_DRIVE);
        assert_eq!(ticked.load(Ordering::SeqCst), 1, "spawned work ran");
    }

    #[test]
    fn a_path_splits_into_its_directory_from_the_root_and_its_name() {
        assert_eq!(split("sb-1-t0/f0"), ("/sb-1-t0".into(), "f0".into()));
        assert_eq!(split("sb-1-t0"), ("/".into(), "sb-1-t0".into()));
        assert_eq!(split("a/b/c"), ("/a/b".into(), "c".into()));
    }

    #[test]
    fn attributes_become_posix_stat() {
        let a = Attr {
            type_: NF4DIR,
            file_mode: 0o755,
            nlink: 3,
            filesize: 4096,
            mtime: nfs_rs::Time {
                seconds: 2,
                nseconds: 5,
            },
            ..Attr::default()
        };
        let s = stat_of(&a);
        assert!(s.is_dir && !s.is_symlink);
        assert_eq!(s.mode, libc::S_IFDIR | 0o755);
        assert_eq!((s.nlink, s.size, s.mtime_ns), (3, 4096, 2_000_000_005));
        assert_eq!(time_of(1_500_000_000).unwrap().seconds, 1);
        assert!(time_of(-1).is_err());
    }
}
