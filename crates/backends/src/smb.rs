//! `smb://user@host[:port]/share/path`: a native SMB3 client through libsmbclient, for hosts
//! without a kernel CIFS client. The password comes from `SHAREBENCH_SMB_PASSWORD` or from
//! the file named by `SHAREBENCH_SMB_PASSWORD_FILE`, never from the command line, and is
//! never printed. Signing is required and only SMB3 (3.0 to 3.1.1) is negotiated.
//!
//! libsmbclient is not thread-safe (see `ffi::smbclient`): every call, from any worker,
//! holds one process-wide lock, so throughput with several workers is that of one client
//! (recorded in `mount_options` as `serialised`). SMB has no pread: positional calls seek
//! and transfer under that lock. libsmbclient has no flush call, so `fsync` only returns
//! (every write was acknowledged by the server before it returned); O_SYNC opens ask the
//! server for write-through. The working directory is held open, without
//! FILE_SHARE_DELETE, through the smb2 client (`pins`), which libsmbclient cannot do.
//! Not: links and symlinks (libsmbclient has no call for them), mmap, a client cache
//! (libsmbclient keeps none).

use crate::ffi::smbclient::{Context, File, Options};
use crate::ffi::timeval;
use crate::netguard;
use crate::smburl::{parse, password};
use sharebench_core::backend::{
    unsupported, Backend, DirEntry, FileHandle, FileStat, FsStat, OpenOptions, Purge, PurgeRequest,
    TargetInfo,
};
use std::io;
use std::sync::Arc;

/// `smbc_vfs_feature`: the server has no UNIX extensions (f_frsize then means sectors).
const SMBC_VFS_FEATURE_NO_UNIXCIFS: u64 = 1 << 30;

const FILE_MODE: u32 = 0o640;
const DIR_MODE: u32 = 0o755;

/// Percent-encodes a path for a libsmbclient URL (which decodes `%XX`).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub struct SmbBackend {
    shown: String,
    /// `smb://IP:PORT/share[/path]`, without user or password.
    base: String,
    ctx: Arc<Context>,
    /// The smb2 client, only to hold each working directory open without
    /// FILE_SHARE_DELETE while the run uses it (libsmbclient can ask for no share mode), so
    /// another SMB client cannot swap it (`SmbRustBackend::pin`).
    #[cfg(feature = "smb2")]
    pins: crate::smb_rust::SmbRustBackend,
}

impl SmbBackend {
    /// Parses `spec`, checks the host against the network rule, logs in and checks that
    /// the share path is a directory. Errors are one line for the user.
    pub fn new(spec: &str) -> Result<SmbBackend, String> {
        let t = parse(spec)?;
        let ip = netguard::resolve_allowed(&t.host, spec)?;
        let password = password()?;
        let host = if ip.is_ipv6() {
            format!("[{ip}]")
        } else {
            ip.to_string()
        };
        let mut base = format!("smb://{host}:{}/{}", t.port, encode(&t.share));
        if !t.path.is_empty() {
            base.push('/');
            base.push_str(&encode(&t.path));
        }
        let ctx = Context::new(&Options {
            workgroup: &t.workgroup,
            user: &t.user,
            password: &password,
            port: t.port,
            min_protocol: "SMB3_00",
            max_protocol: "SMB3_11",
        })
        .map_err(|e| format!("target '{spec}': {e}"))?;
        let root = ctx.stat(&base).map_err(|e| {
            let why = match e.kind() {
                io::ErrorKind::PermissionDenied => {
                    "login or access refused (wrong user or password?)".to_string()
                }
                io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                io::ErrorKind::NotFound => "no such share or directory".to_string(),
                _ => e.to_string(),
            };
            format!("target '{spec}': {why}")
        })?;
        if root.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(format!("target '{spec}' is not a directory"));
        }
        Ok(SmbBackend {
            shown: spec.to_string(),
            base,
            ctx: Arc::new(ctx),
            #[cfg(feature = "smb2")]
            pins: crate::smb_rust::SmbRustBackend::new(spec)
                .map_err(|e| format!("{e} (through smb2, which holds the working directory)"))?,
        })
    }

    fn url(&self, rel: &str) -> String {
        let rel = rel.trim_matches('/');
        if rel.is_empty() {
            self.base.clone()
        } else {
            format!("{}/{}", self.base, encode(rel))
        }
    }
}

fn stat_of(s: &libc::stat) -> FileStat {
    FileStat {
        size: s.st_size as u64,
        is_dir: s.st_mode & libc::S_IFMT == libc::S_IFDIR,
        is_symlink: s.st_mode & libc::S_IFMT == libc::S_IFLNK,
        mode: s.st_mode,
        nlink: s.st_nlink,
        mtime_ns: i128::from(s.st_mtime) * 1_000_000_000 + i128::from(s.st_mtime_nsec),
    }
}

impl Backend for SmbBackend {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            backend: "smb".into(),
            client: "libsmbclient".into(),
            local_root: None,
            fs_type: Some("smb3".into()),
            mount_point: Some(self.shown.clone()),
            mount_options: Some(
                "protocol=SMB3_00-SMB3_11,signing=required,serialised,fsync=none,nocache".into(),
            ),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let flags = crate::open_flags(how);
        let file = self.ctx.open(&self.url(path), flags, FILE_MODE)?;
        Ok(Box::new(SmbFile {
            file: Some(file),
            pos: 0,
        }))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.ctx.stat(&self.url(path)).map(|s| stat_of(&s))
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        // SMB without POSIX extensions shows no symlinks: lstat is stat.
        self.stat(path)
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        let mut f = self.ctx.open(&self.url(path), libc::O_WRONLY, FILE_MODE)?;
        f.set_len(len)?;
        f.close()
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        self.ctx.unlink(&self.url(path))
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.ctx.mkdir(&self.url(path), DIR_MODE)?;
        #[cfg(feature = "smb2")]
        self.pins.hold(path)?;
        Ok(())
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        #[cfg(feature = "smb2")]
        self.pins.let_go(path);
        self.ctx.rmdir(&self.url(path))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.ctx.rename(&self.url(from), &self.url(to))
    }

    fn link(&self, _existing: &str, _new: &str) -> io::Result<()> {
        Err(unsupported("link over libsmbclient"))
    }

    fn symlink(&self, _target: &str, _link: &str) -> io::Result<()> {
        Err(unsupported("symlink over libsmbclient"))
    }

    fn readlink(&self, _path: &str) -> io::Result<String> {
        Err(unsupported("readlink over libsmbclient"))
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        Ok(self
            .ctx
            .readdir(&self.url(path))?
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        let s = self.ctx.statvfs(&self.url(path))?;
        // Without UNIX extensions (always, over SMB2/3) libsmbclient puts bytes per sector
        // in f_bsize and sectors per allocation unit in f_frsize; blocks count units.
        let unit = if s.f_flag & SMBC_VFS_FEATURE_NO_UNIXCIFS != 0 {
            s.f_bsize * s.f_frsize.max(1)
        } else {
            s.f_bsize
        };
        Ok(FsStat {
            block_size: unit,
            total_bytes: s.f_blocks * unit,
            free_bytes: s.f_bavail * unit,
            total_files: s.f_files,
            free_files: s.f_favail,
            read_only: false,
        })
    }

    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        self.ctx.chmod(&self.url(path), mode & 0o7777)
    }

    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        // libsmbclient keeps no data cache: every read goes to the server.
        Ok(Purge::NotNeeded)
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        self.ctx
            .utimes(&self.url(path), timeval(atime_ns), timeval(mtime_ns))
    }
}

/// An open SMB file and its cursor; `file` is `None` only after close.
struct SmbFile {
    file: Option<File>,
    pos: u64,
}

impl SmbFile {
    fn f(&mut self) -> &mut File {
        self.file.as_mut().expect("smb file used after close")
    }
}

impl FileHandle for SmbFile {
    cursor_over_positional_calls!(pos);

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.f().read_at(buf, offset)
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.f().write_at(buf, offset)
    }

    fn fsync(&mut self) -> io::Result<()> {
        // No flush call in libsmbclient; every write has been acknowledged already.
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.f().set_len(len)
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.file.take().expect("closed twice").close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_paths_for_urls() {
        assert_eq!(encode("sharebench-1/f0"), "sharebench-1/f0");
        assert_eq!(encode("a b%c"), "a%20b%25c");
    }
}
