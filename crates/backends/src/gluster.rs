//! `gluster://host[:port]/volume[/dir]`: a GlusterFS volume through libgfapi, the library
//! fio's gfapi engine and qemu use, so Gluster is measured without FUSE as well as through
//! its FUSE mount. One "virtual mount" per target, shared by every worker (gfapi is
//! thread-safe); `--iodepth` goes through gfapi's asynchronous calls. gfapi keeps no data
//! cache of its own here, beyond what the volume's translators do (the same on both paths).
//! Everything the tool creates, changes or removes is reached by handle from the target's
//! directory, never through a symlink (`ffi::gfapi_objects`); stat and readdir go by path.
//! Not: mmap, locking.

use crate::ffi::gfapi::{GlFile, GlQueue, Volume};
use crate::ffi::gfapi_objects::Obj;
use crate::netguard;
use sharebench_core::backend::{
    Backend, DirEntry, FileHandle, FileStat, FsStat, IoQueue, OpenOptions, Purge, PurgeRequest,
    TargetInfo,
};
use std::io;
use std::sync::Arc;

/// glusterd's management port, where the volume file is fetched.
const VOLFILE_PORT: u16 = 24007;
/// Mode of created files and directories (as the posix backend, umask 022).
const FILE_MODE: u32 = 0o640;
const DIR_MODE: u32 = 0o755;

/// A parsed `gluster://` URL.
#[derive(Debug, PartialEq, Eq)]
struct Url {
    host: String,
    port: u16,
    volume: String,
    /// The directory inside the volume the target is rooted at: `/` or `/a/b`.
    dir: String,
}

fn parse(spec: &str) -> Result<Url, String> {
    let rest = spec
        .strip_prefix("gluster://")
        .ok_or_else(|| format!("target '{spec}': not a gluster:// URL"))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("target '{spec}': bad port '{p}'"))?,
        ),
        _ => (authority, VOLFILE_PORT),
    };
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    let volume = parts
        .next()
        .ok_or_else(|| format!("target '{spec}': no volume (gluster://HOST/VOLUME[/DIR])"))?;
    let dir: Vec<&str> = parts.collect();
    if dir.contains(&"..") {
        return Err(format!("target '{spec}': '..' in the path"));
    }
    Ok(Url {
        host: host.to_string(),
        port,
        volume: volume.to_string(),
        dir: format!("/{}", dir.join("/")),
    })
}

pub struct GlusterBackend {
    shown: String,
    url: Url,
    volume: Arc<Volume>,
    /// The target's directory, from which every name the tool writes is looked up.
    root: Obj,
}

impl GlusterBackend {
    /// Parses `spec`, checks the host against the network rule, mounts the volume and
    /// checks the directory. Errors are one line for the user.
    pub fn new(spec: &str) -> Result<GlusterBackend, String> {
        let url = parse(spec)?;
        let ip = netguard::resolve_allowed(&url.host, spec)?;
        let volume =
            Volume::mount(&ip.to_string(), url.port, &url.volume, "/dev/null").map_err(|e| {
                format!(
                    "target '{spec}': {e} (is glusterd at {ip}:{} serving volume '{}'?)",
                    url.port, url.volume
                )
            })?;
        let volume = Arc::new(volume);
        let root = Obj::root(&volume, &url.dir).map_err(|e| match e.kind() {
            io::ErrorKind::NotADirectory => format!("target '{spec}' is not a directory"),
            _ => format!("target '{spec}': {e}"),
        })?;
        Ok(GlusterBackend {
            shown: spec.to_string(),
            url,
            volume,
            root,
        })
    }

    /// The directory holding `path`'s last name (reached without following a symlink),
    /// and the name.
    fn at(&self, path: &str) -> io::Result<(Obj, String)> {
        self.root.parent_of(path)
    }

    /// What `path` names, itself (not followed).
    fn object(&self, path: &str) -> io::Result<Obj> {
        let (dir, name) = self.at(path)?;
        dir.lookup(&name).map(|(o, _)| o)
    }

    /// The volume path of a backend-relative path.
    fn abs(&self, rel: &str) -> String {
        let rel = rel.trim_start_matches('/');
        match (self.url.dir.as_str(), rel) {
            ("/", r) => format!("/{r}"),
            (d, "") => d.to_string(),
            (d, r) => format!("{d}/{r}"),
        }
    }
}

fn stat_of(s: &libc::stat) -> FileStat {
    let fmt = s.st_mode & libc::S_IFMT;
    FileStat {
        size: s.st_size as u64,
        is_dir: fmt == libc::S_IFDIR,
        is_symlink: fmt == libc::S_IFLNK,
        mode: s.st_mode,
        nlink: s.st_nlink,
        mtime_ns: i128::from(s.st_mtime) * 1_000_000_000 + i128::from(s.st_mtime_nsec),
    }
}

impl Backend for GlusterBackend {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            backend: "gluster".into(),
            client: "gfapi".into(),
            local_root: None,
            fs_type: Some("glusterfs".into()),
            mount_point: Some(self.shown.clone()),
            mount_options: Some(format!("volume={},native", self.url.volume)),
        }
    }

    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let mut flags = crate::open_flags(how);
        // gfapi takes O_DIRECT too (the C client libraries have no meaning for it).
        if how.direct {
            flags |= libc::O_DIRECT;
        }
        let (dir, name) = self.at(path)?;
        let file = dir.open_in(&name, flags, FILE_MODE)?;
        Ok(Box::new(GlusterFile {
            file: Some(file),
            pos: 0,
        }))
    }

    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.volume.stat(&self.abs(path), true).map(|s| stat_of(&s))
    }

    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.volume
            .stat(&self.abs(path), false)
            .map(|s| stat_of(&s))
    }

    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        self.object(path)?.truncate(len)
    }

    fn unlink(&self, path: &str) -> io::Result<()> {
        let (dir, name) = self.at(path)?;
        dir.remove_in(&name, false)
    }

    fn mkdir(&self, path: &str) -> io::Result<()> {
        let (dir, name) = self.at(path)?;
        dir.mkdir_in(&name, DIR_MODE)
    }

    fn rmdir(&self, path: &str) -> io::Result<()> {
        let (dir, name) = self.at(path)?;
        dir.remove_in(&name, true)
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let ((a, from), (b, to)) = (self.at(from)?, self.at(to)?);
        a.rename_in(&from, &b, &to)
    }

    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        let (dir, name) = self.at(new)?;
        dir.link_in(&self.object(existing)?, &name)
    }

    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        // The target is stored as given (relative to the link's directory, as symlink(2)).
        let (dir, name) = self.at(link)?;
        dir.symlink_in(&name, target)
    }

    fn readlink(&self, path: &str) -> io::Result<String> {
        self.volume.readlink(&self.abs(path))
    }

    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        Ok(self
            .volume
            .readdir(&self.abs(path))?
            .into_iter()
            .map(|(name, is_dir)| DirEntry { name, is_dir })
            .collect())
    }

    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        let s = self.volume.statvfs(&self.abs(path))?;
        let unit = if s.f_frsize > 0 {
            s.f_frsize
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
        self.object(path)?.chmod(mode & 0o7777)
    }

    fn purge_cache(&self, _path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        // No client page cache in gfapi: a read goes through the volume's translators,
        // as it would from the FUSE client with its cache emptied.
        Ok(Purge::NotNeeded)
    }

    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        self.object(path)?.set_times(atime_ns, mtime_ns)
    }

    /// Any depth: gfapi's asynchronous calls.
    fn check_iodepth(&self, _depth: u32) -> Result<(), String> {
        Ok(())
    }
}

/// An open file; `None` only after close. gfapi's positional calls carry the cursor
/// calls, the cursor kept here.
struct GlusterFile {
    file: Option<GlFile>,
    pos: u64,
}

impl GlusterFile {
    fn f(&mut self) -> &mut GlFile {
        self.file.as_mut().expect("gluster file used after close")
    }
}

impl FileHandle for GlusterFile {
    cursor_over_positional_calls!(pos);

    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.f().pread(buf, offset)
    }

    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.f().pwrite(buf, offset)
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.f().fsync()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.f().set_len(len)
    }

    fn allocate(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.f().allocate(offset, len)
    }

    fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
        Ok(Box::new(GlQueue::new(self.f(), depth, slot_len)))
    }

    fn close(mut self: Box<Self>) -> io::Result<()> {
        self.file.take().expect("closed twice").close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_host_port_volume_and_directory() {
        let u = parse("gluster://10.10.0.3/gv-single").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.volume.as_str(), u.dir.as_str()),
            ("10.10.0.3", 24007, "gv-single", "/")
        );
        let u = parse("gluster://h:24008/vol/a/b/").unwrap();
        assert_eq!((u.port, u.dir.as_str()), (24008, "/a/b"));
        assert!(parse("gluster://h").unwrap_err().contains("no volume"));
        assert!(parse("gluster://h:x/v").unwrap_err().contains("bad port"));
        assert!(parse("gluster://h/v/../w").unwrap_err().contains(".."));
    }
}
