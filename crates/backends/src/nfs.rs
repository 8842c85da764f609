//! `nfs://host[:port]/export/path?version=3`: a native NFS client through libnfs, for hosts
//! without a kernel NFS client. Each open file gets a connection (a libnfs context) of its
//! own, taken from a small pool, so workers never share one; metadata calls borrow one from
//! the same pool. libnfs keeps no data cache here (no readahead or page cache options are
//! accepted), so every read and write is an RPC and `direct` needs nothing more.
//! NFSv4 (`version=4`) is NFSv4.0 in libnfs 4.0: reads work; WRITEs larger than
//! [`V4_MAX_WRITE`] fail to encode in Debian's libnfs 4.0.0 and are refused with a clear
//! error. NFSv4.1 is not available in libnfs at all: `version=4.1` goes to the nfs-rs
//! client (`nfs41.rs`) instead. Names are made and removed by directory handle
//! (`nfs_tree.rs`), so another user's symlink on a shared export is never followed.
//! Not: mmap, locking, a client cache.

use crate::ffi::libnfs::{Context, OpenFile, Stat64};
use crate::ffi::libnfs_async::NfsQueue;
use crate::ffi::libnfs_compound;
use crate::ffi::libnfs_handles::{handle_of, Change, Fh, NF3DIR};
use crate::netguard;
use crate::nfs_tree::{Tree, Wire};
use crate::nfsurl::{parse, Target, Version};
use sharebench_core::backend::{
    tampered, Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, OpenOptions, Purge,
    PurgeRequest, TargetInfo,
};
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// The largest NFSv4 WRITE libnfs 4.0.0 encodes: its COMPOUND buffer is 4 KiB, headers
/// included (writes of about 3.9 KB and more fail with "ZDR error: Failed to encode
/// COMPOUND4args"; fixed upstream in libnfs 5, sahlberg/libnfs#319).
pub const V4_MAX_WRITE: usize = 3072;

/// RPC timeout: a call that takes longer fails instead of hanging the run.
const TIMEOUT_MS: i32 = 60_000;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 16;
/// Mode of created files and directories (as the posix backend, umask 022).
const FILE_MODE: u32 = 0o640;
const DIR_MODE: u32 = 0o755;

/// The URL libnfs is given: the checked address instead of the name, the port as nfsport.
fn libnfs_url(t: &Target, ip: IpAddr) -> String {
    let version = if t.version == Version::V3 { 3 } else { 4 };
    let mut url = format!("nfs://{ip}{}?version={version}", t.path);
    if let Some(p) = t.port {
        url.push_str(&format!("&nfsport={p}"));
    }
    for (k, v) in &t.args {
        url.push_str(&format!("&{k}={v}"));
    }
    url
}

/// The path libnfs wants for a backend-relative path: absolute from the mount root.
fn abs(rel: &str) -> String {
    format!("/{}", rel.trim_start_matches('/'))
}

/// What every handle and call shares: how to connect, and the idle connections.
struct Shared {
    url: String,
    idle: Mutex<Vec<Context>>,
}

impl Shared {
    fn idle(&self) -> MutexGuard<'_, Vec<Context>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An idle connection, or a new one.
    fn take(&self) -> io::Result<Context> {
        if let Some(c) = self.idle().pop() {
            return Ok(c);
        }
        Context::mount(&self.url, TIMEOUT_MS)
    }

    fn give(&self, c: Context) {
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(c);
        }
    }

    /// Runs one metadata call on a borrowed connection.
    fn with<T>(&self, f: impl FnOnce(&mut Context) -> io::Result<T>) -> io::Result<T> {
        let mut c = self.take()?;
        let r = f(&mut c);
        self.give(c);
        r
    }
}

pub struct NfsBackend {
    shown: String,
    version: u32,
    /// Connections each open file has (`nconnect`).
    nconnect: u32,
    read_max: u64,
    write_max: u64,
    shared: Arc<Shared>,
    /// Where names are made and removed, by directory handle.
    tree: Tree,
}

impl NfsBackend {
    /// Parses `spec`, checks the host against the network rule, mounts the export and
    /// checks that it is a directory. Errors are one line for the user.
    pub fn new(spec: &str) -> Result<NfsBackend, String> {
        let t = parse(spec)?;
        let version = match t.version {
            Version::V3 => 3,
            Version::V4_0 => 4,
            Version::V4_1 | Version::V4_2 => {
                return Err(format!(
                    "target '{spec}': libnfs speaks NFSv3 and NFSv4.0 only; NFSv4.1 and 4.2 go through nfs-rs"
                ))
            }
        };
        if t.data_through_nfs_rs {
            return Err(format!(
                "target '{spec}': client= chooses NFSv4.1's data path; version 3 and 4.0 have only libnfs"
            ));
        }
        let ip = netguard::resolve_allowed(&t.host, spec)?;
        if ip.is_ipv6() {
            return Err(format!(
                "target '{spec}': libnfs 4.0 cannot take an IPv6 address; use an IPv4 one"
            ));
        }
        let shared = Arc::new(Shared {
            url: libnfs_url(&t, ip),
            idle: Mutex::new(Vec::new()),
        });
        let mut ctx = shared.take().map_err(|e| format!("target '{spec}': {e}"))?;
        let (read_max, write_max) = ctx.io_max();
        let root = ctx
            .stat("/", true)
            .map_err(|e| format!("target '{spec}': {e}"))?;
        if root.mode as u32 & libc::S_IFMT != libc::S_IFDIR {
            return Err(format!("target '{spec}' is not a directory"));
        }
        let tree = if version == 3 {
            let root = ctx
                .open("/", libc::O_RDONLY, 0)
                .map_err(|(_, e)| format!("target '{spec}': {e}"))?;
            let fh = handle_of(&root);
            let (c, closed) = root.close();
            closed.map_err(|e| format!("target '{spec}': {e}"))?;
            ctx = c;
            Tree::new(Wire::V3, fh)
        } else {
            // NFSv4.0 opens no directory; the export path's handle comes from the
            // server's root, one LOOKUP per name, none of them followed.
            let fh = match libnfs_compound::root(&mut ctx, &t.path) {
                Ok((fh, Some(NF3DIR))) => fh,
                Ok(_) => return Err(format!("target '{spec}' is not a directory")),
                Err(e) => return Err(format!("target '{spec}': {e}")),
            };
            Tree::new(Wire::V40, fh)
        };
        shared.give(ctx);
        Ok(NfsBackend {
            shown: spec.to_string(),
            version,
            nconnect: t.nconnect,
            read_max: read_max.max(4096),
            write_max: write_max.max(4096),
            shared,
            tree,
        })
    }
}

fn stat_of(s: &Stat64) -> FileStat {
    let fmt = s.mode as u32 & libc::S_IFMT;
    FileStat {
        size: s.size,
        is_dir: fmt == libc::S_IFDIR,
        is_symlink: fmt == libc::S_IFLNK,
        mode: s.mode as u32,
        nlink: s.nlink,
        mtime_ns: i128::from(s.mtime) * 1_000_000_000 + i128::from(s.mtime_nsec),
    }
}

/// A symlink met where the tool's own directory or file should be (libnfs's ELOOP under
/// O_NOFOLLOW): someone else changed the working directory, and the engine stops the run.
fn refused_link(e: io::Error, path: &str) -> io::Error {
    if e.kind() == io::Error::from_raw_os_error(libc::ELOOP).kind() {
        return tampered(format!("nfs {path}: a symlink on the way, not followed"));
    }
    e
}

impl NfsBackend {
    /// The handle of a file just opened; with `nconnect`, the file is opened again (never
    /// created or truncated) on the further connections, for the queue's requests.
    /// On NFSv3 each open must be the file `expect` names: a path that names another one
    /// has been changed by someone else since the file was made or looked up.
    fn handle(
        &self,
        file: OpenFile,
        path: &str,
        flags: libc::c_int,
        expect: Option<&Fh>,
    ) -> io::Result<Box<dyn FileHandle>> {
        let mut h = NfsFile {
            file: Some(file),
            extra: Vec::new(),
            shared: self.shared.clone(),
            read_max: self.read_max as usize,
            write_max: if self.version == 4 {
                V4_MAX_WRITE
            } else {
                self.write_max as usize
            },
            v4: self.version == 4,
        };
        let again = flags & !(libc::O_CREAT | libc::O_TRUNC | libc::O_EXCL);
        for _ in 1..self.nconnect {
            let ctx = self.shared.take()?;
            match ctx.open(path, again, FILE_MODE) {
                Ok(f) => h.extra.push(f),
                Err((ctx, e)) => {
                    self.shared.give(ctx);
                    return Err(refused_link(e, path));
                }
            }
        }
        if let Some(fh) = expect {
            for f in std::iter::once(h.file.as_ref()).flatten().chain(&h.extra) {
                if handle_of(f) != *fh {
                    return Err(tampered(format!(
                        "nfs {path}: the path names another file than the tool's own, not used"
                    )));
                }
            }
        }
        Ok(Box::new(h))
    }
}

impl NfsBackend {
    /// The open: the file is made or found by its directory's handle (see `Tree`), then
    /// opened through libnfs by path with O_NOFOLLOW, and used only if that open is the
    /// same file. O_TRUNC is done on the open file.
    fn open_by_handle(&self, rel: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let flags = crate::open_flags(how) | libc::O_NOFOLLOW;
        let plain = flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
        let path = abs(rel);
        if how.create && !self.tree.makes_files() {
            if let Some(made) = self.create_by_path(rel, &path, plain)? {
                return Ok(made);
            }
        }
        let mut ctx = self.shared.take()?;
        let create = how.create && self.tree.makes_files();
        let (fh, made) = match self.tree.file(&mut ctx, rel, create, FILE_MODE) {
            Ok(found) => found,
            Err(e) => {
                // A name the directories the tool holds do not have, but the path does:
                // the path leads somewhere else.
                let elsewhere =
                    e.kind() == io::ErrorKind::NotFound && ctx.stat(&path, false).is_ok();
                self.shared.give(ctx);
                if elsewhere {
                    return Err(tampered(format!(
                        "nfs {path}: the path names a file outside the tool's directory, not used"
                    )));
                }
                return Err(e);
            }
        };
        let file = match ctx.open(&path, plain, FILE_MODE) {
            Ok(file) => file,
            Err((ctx, e)) => {
                self.shared.give(ctx);
                return Err(refused_link(e, &path));
            }
        };
        let mut h = self.handle(file, &path, plain, Some(&fh))?;
        if how.truncate && how.write && !made {
            h.set_len(0)?;
        }
        Ok(h)
    }

    /// NFSv4.0 makes a regular file only by OPEN, whose state libnfs keeps, so the file is
    /// made by path, exclusively (which never opens anything planted under its name), and
    /// used only once the directory the tool holds names it (`Tree::adopt`). `None` when
    /// the name is taken: the caller opens what is there.
    fn create_by_path(
        &self,
        rel: &str,
        path: &str,
        plain: libc::c_int,
    ) -> io::Result<Option<Box<dyn FileHandle>>> {
        let ctx = self.shared.take()?;
        let file = match ctx.open(path, plain | libc::O_CREAT | libc::O_EXCL, FILE_MODE) {
            Ok(file) => file,
            Err((ctx, e)) => {
                self.shared.give(ctx);
                return match e.kind() {
                    io::ErrorKind::AlreadyExists => Ok(None),
                    _ => Err(refused_link(e, path)),
                };
            }
        };
        let fh = handle_of(&file);
        if let Err(e) = self.shared.with(|c| self.tree.adopt(c, rel, &fh)) {
            let (ctx, _) = file.close();
            self.shared.give(ctx);
            return Err(e);
        }
        self.handle(file, path, plain, Some(&fh)).map(Some)
    }

    /// A namespace call, by directory handle, on a connection from the pool.
    fn names<T>(&self, call: impl FnOnce(&Tree, &mut Context) -> io::Result<T>) -> io::Result<T> {
        self.shared.with(|c| call(&self.tree, c))
    }
}

impl Backend for NfsBackend {
    fn info(&self) -> TargetInfo {
        let (client, fs) = if self.version == 4 {
            ("libnfs-nfs4.0", "nfs4.0")
        } else {
            ("libnfs-nfs3", "nfs3")
        };
        TargetInfo {
            backend: "nfs".into(),
            client: client.into(),
            local_root: None,
            fs_type: Some(fs.into()),
            mount_point: Some(self.shown.clone()),
            mount_options: Some(format!(
                "vers={},rsize={},wsize={},nocache,{}",
                if self.version == 4 { "4.0" } else { "3" },
                self.read_max,
                self.write_max,
                if self.nconnect > 1 {
                    format!("nconnect={}-connections-per-open-file", self.nconnect)
                } else {
                    "one-connection-per-open-file".to_string()
                }
            )),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        self.open_by_handle(path, how)
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.shared
            .with(|c| c.stat(&abs(path), true))
            .map(|s| stat_of(&s))
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.shared
            .with(|c| c.stat(&abs(path), false))
            .map(|s| stat_of(&s))
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        self.names(|t, c| t.setattr(c, path, Change::Size(len)))
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        self.names(|t, c| t.remove(c, path, false))
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.names(|t, c| t.mkdir(c, path, DIR_MODE))
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        self.names(|t, c| t.remove(c, path, true))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.names(|t, c| t.rename(c, from, to))
    }

    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        self.names(|t, c| t.link(c, existing, new))
    }

    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        // The target is stored as given (relative to the link's directory, as with symlink(2)).
        self.names(|t, c| t.symlink(c, target, link))
    }

    fn readlink(&self, path: &str) -> io::Result<String> {
        self.shared.with(|c| c.readlink(&abs(path)))
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        let list = self.names(|t, c| {
            t.check_made(c, path)?;
            c.readdir(&abs(path))
        })?;
        Ok(list
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        let s = self.shared.with(|c| c.statvfs(&abs(path)))?;
        let unit = if s.frsize > 0 { s.frsize } else { s.bsize };
        Ok(FsStat {
            block_size: unit,
            total_bytes: s.blocks * unit,
            free_bytes: s.bavail * unit,
            total_files: s.files,
            free_files: s.favail,
            read_only: false,
        })
    }

    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        self.names(|t, c| t.setattr(c, path, Change::Mode(mode & 0o7777)))
    }

    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        // libnfs keeps no data cache here: every read goes to the server.
        Ok(Purge::NotNeeded)
    }

    /// Any depth: libnfs's asynchronous calls on each file's own connection.
    fn check_iodepth(&self, _depth: u32) -> Result<(), String> {
        Ok(())
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        self.names(|t, c| t.setattr(c, path, Change::Times(atime_ns, mtime_ns)))
    }
}

/// An open NFS file with its own connection; `file` is `None` only after close.
struct NfsFile {
    file: Option<OpenFile>,
    /// The same file on the further connections of `nconnect` (queued I/O only).
    extra: Vec<OpenFile>,
    shared: Arc<Shared>,
    read_max: usize,
    write_max: usize,
    v4: bool,
}

impl NfsFile {
    fn f(&mut self) -> &mut OpenFile {
        self.file.as_mut().expect("nfs file used after close")
    }

    /// The part of `len` one WRITE may carry; an NFSv4 write libnfs 4.0 cannot encode is
    /// refused rather than split, so figures never mix in a silent workaround.
    fn write_len(&self, len: usize) -> io::Result<usize> {
        if self.v4 && len > V4_MAX_WRITE {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "NFSv4 write of {len} bytes: libnfs 4.0 cannot encode NFSv4 WRITEs over {V4_MAX_WRITE} bytes; use version=3, or record sizes of at most 3k"
                ),
            ));
        }
        Ok(len.min(self.write_max))
    }
}

impl FileHandle for NfsFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.read_max);
        self.f().read(&mut buf[..n])
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.write_len(buf.len())?;
        self.f().write(&buf[..n])
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.f().seek(offset)
    }

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.read_max);
        self.f().pread(&mut buf[..n], offset)
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = self.write_len(buf.len())?;
        self.f().pwrite(&buf[..n], offset)
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.f().fsync()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.f().set_len(len)
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        let max_write = self.v4.then_some(V4_MAX_WRITE);
        let primary = self.file.as_mut().expect("nfs file used after close");
        let files = std::iter::once(primary)
            .chain(self.extra.iter_mut())
            .collect();
        Ok(Box::new(NfsQueue::new(files, depth, slot_len, max_write)))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        let mut res = Ok(());
        for file in std::mem::take(&mut self.extra) {
            let (ctx, r) = file.close();
            self.shared.give(ctx);
            res = res.and(r);
        }
        let file = self.file.take().expect("closed twice");
        let (ctx, r) = file.close();
        self.shared.give(ctx);
        r.and(res)
    }
}

impl Drop for NfsFile {
    fn drop(&mut self) {
        for file in std::mem::take(&mut self.extra) {
            let (ctx, _) = file.close();
            self.shared.give(ctx);
        }
        if let Some(file) = self.file.take() {
            let (ctx, _) = file.close();
            self.shared.give(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libnfs_gets_the_checked_address_and_the_port_as_nfsport() {
        let t = parse("nfs://localhost:2050/pseudo/dir?version=4&uid=0&gid=0").unwrap();
        assert_eq!(
            libnfs_url(&t, "127.0.0.1".parse().unwrap()),
            "nfs://127.0.0.1/pseudo/dir?version=4&nfsport=2050&uid=0&gid=0"
        );
        let t = parse("nfs://h/srv/export?version=3").unwrap();
        assert_eq!(
            libnfs_url(&t, "127.0.0.1".parse().unwrap()),
            "nfs://127.0.0.1/srv/export?version=3"
        );
    }

    #[test]
    fn nfs41_is_not_for_libnfs() {
        let e = NfsBackend::new("nfs://127.0.0.1/x?version=4.1")
            .err()
            .unwrap();
        assert!(e.contains("NFSv3 and NFSv4.0 only"), "{e}");
    }

    #[test]
    fn paths_are_absolute_from_the_mount_root() {
        assert_eq!(abs(""), "/");
        assert_eq!(abs("sharebench-1/f0"), "/sharebench-1/f0");
    }
}
