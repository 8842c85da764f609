//! A recording mock backend for unit tests of the engine and the workloads: an in-memory
//! tree that logs every call, whose files take every write and read back zeros. Not a
//! file system: contents are not kept, and it is compiled for tests only.

use crate::backend::{
    Backend, DirEntry, FileHandle, FileStat, FsStat, OpenOptions, Purge, PurgeRequest, TargetInfo,
};
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;

/// (is_dir, mode, symlink target, nlink)
pub type Node = (bool, u32, Option<String>, u64);

/// An in-memory file system that logs every call: enough to check the operation
/// sequence of each test.
#[derive(Default)]
pub struct LogFs {
    pub log: Mutex<Vec<String>>,
    /// path -> (is_dir, mode, symlink target, nlink)
    pub nodes: Mutex<BTreeMap<String, Node>>,
    /// A pause: the call that makes the log this long sleeps this long (a stalled server).
    pub stall: Mutex<Option<(usize, std::time::Duration)>>,
    /// A failure: a call whose log line starts with this fails with EIO (a dead server).
    pub fail_on: Mutex<Option<String>>,
}

impl LogFs {
    /// Logs a call; Err when `fail_on` matches it.
    fn log(&self, s: String) -> io::Result<()> {
        let fails = matches!(&*self.fail_on.lock().unwrap(), Some(f) if s.starts_with(f.as_str()));
        let len = {
            let mut log = self.log.lock().unwrap();
            log.push(s);
            log.len()
        };
        let stall = *self.stall.lock().unwrap();
        if let Some((_, pause)) = stall.filter(|(at, _)| *at == len) {
            std::thread::sleep(pause);
        }
        if fails {
            return Err(io::Error::other("injected failure"));
        }
        Ok(())
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
    fn nf(p: &str) -> io::Error {
        io::Error::new(io::ErrorKind::NotFound, p.to_string())
    }
}

struct NoFile;
impl FileHandle for NoFile {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        b.fill(0);
        Ok(b.len())
    }
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        Ok(b.len())
    }
    fn seek(&mut self, _o: u64) -> io::Result<()> {
        Ok(())
    }
    fn pread(&mut self, b: &mut [u8], _o: u64) -> io::Result<usize> {
        b.fill(0);
        Ok(b.len())
    }
    fn pwrite(&mut self, b: &[u8], _o: u64) -> io::Result<usize> {
        Ok(b.len())
    }
    fn fsync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn set_len(&mut self, _l: u64) -> io::Result<()> {
        Ok(())
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}

impl Backend for LogFs {
    fn info(&self) -> TargetInfo {
        TargetInfo::default()
    }
    fn stores_data(&self) -> bool {
        // Data is not kept: reads return nothing, so size checks are skipped.
        false
    }
    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        self.log(format!("open {path}"))?;
        let mut n = self.nodes.lock().unwrap();
        if how.create {
            n.insert(path.into(), (false, 0o644, None, 1));
        } else if !n.contains_key(path) {
            return Err(Self::nf(path));
        }
        Ok(Box::new(NoFile))
    }
    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.log(format!("stat {path}"))?;
        let n = self.nodes.lock().unwrap();
        let &(is_dir, mode, _, nlink) = n.get(path).ok_or_else(|| Self::nf(path))?;
        Ok(FileStat {
            is_dir,
            mode,
            nlink,
            ..Default::default()
        })
    }
    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.log(format!("lstat {path}"))?;
        let n = self.nodes.lock().unwrap();
        let (is_dir, mode, target, nlink) = n.get(path).ok_or_else(|| Self::nf(path))?;
        Ok(FileStat {
            is_dir: *is_dir,
            is_symlink: target.is_some(),
            mode: *mode,
            nlink: *nlink,
            ..Default::default()
        })
    }
    fn truncate(&self, _p: &str, _l: u64) -> io::Result<()> {
        Ok(())
    }
    fn unlink(&self, path: &str) -> io::Result<()> {
        self.log(format!("unlink {path}"))?;
        self.nodes
            .lock()
            .unwrap()
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| Self::nf(path))
    }
    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.log(format!("mkdir {path}"))?;
        self.nodes
            .lock()
            .unwrap()
            .insert(path.into(), (true, 0o755, None, 2));
        Ok(())
    }
    fn rmdir(&self, path: &str) -> io::Result<()> {
        self.log(format!("rmdir {path}"))?;
        self.nodes
            .lock()
            .unwrap()
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| Self::nf(path))
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.log(format!("rename {from} {to}"))?;
        let mut n = self.nodes.lock().unwrap();
        let v = n.remove(from).ok_or_else(|| Self::nf(from))?;
        n.insert(to.into(), v);
        Ok(())
    }
    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        self.log(format!("link {existing} {new}"))?;
        let mut n = self.nodes.lock().unwrap();
        let v = n.get(existing).cloned().ok_or_else(|| Self::nf(existing))?;
        n.insert(new.into(), v);
        Ok(())
    }
    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        self.log(format!("symlink {target} {link}"))?;
        self.nodes
            .lock()
            .unwrap()
            .insert(link.into(), (false, 0o777, Some(target.into()), 1));
        Ok(())
    }
    fn readlink(&self, path: &str) -> io::Result<String> {
        self.log(format!("readlink {path}"))?;
        let n = self.nodes.lock().unwrap();
        n.get(path)
            .and_then(|v| v.2.clone())
            .ok_or_else(|| Self::nf(path))
    }
    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        self.log(format!("readdir {path}"))?;
        let n = self.nodes.lock().unwrap();
        Ok(n.iter()
            .filter_map(|(k, v)| {
                let rest = k.strip_prefix(path)?.strip_prefix('/')?;
                (!rest.contains('/')).then(|| DirEntry {
                    name: rest.into(),
                    is_dir: v.0,
                })
            })
            .collect())
    }
    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        self.log(format!("statfs {path}"))?;
        Ok(FsStat::default())
    }
    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        self.log(format!("chmod {path} {mode:o}"))?;
        if let Some(v) = self.nodes.lock().unwrap().get_mut(path) {
            v.1 = mode;
        }
        Ok(())
    }
    fn purge_cache(&self, path: &str, _how: PurgeRequest) -> io::Result<Purge> {
        self.log(format!("purge {path}"))?;
        Ok(Purge::NotNeeded)
    }
}
