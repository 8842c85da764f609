//! A client page cache for the native clients (`run --client-cache SIZE`): what a
//! kernel NFS or SMB client keeps of a file in its memory, bounded as the client
//! machine's memory bounds it. Reads of cached pages are memory copies; a read that
//! misses fetches the missing pages from the server in one request and keeps them; writes
//! go through to the server and keep the pages they fill. The least recently used pages
//! go first when the bound is reached, so a file larger than the cache is read from the
//! server again: the buffered-read cliff of a real client. Records name it (`client`:
//! `libnfs+cache 16 MiB`). Not: write-back (every write reaches the server as before), or
//! a cache shared between processes.

use sharebench_core::backend::{
    Backend, DirEntry, FileHandle, FileStat, FsStat, Mapping, OpenOptions, Purge, PurgeRequest,
    TargetInfo,
};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// The unit the cache keeps (the kernel's readahead and write-back work in such chunks).
pub const PAGE: u64 = 64 * 1024;

/// Pages by (path, page number), each with its bytes (shorter than `PAGE` at the end of a
/// file) and the time it was last used.
#[derive(Default)]
struct Pages {
    capacity: usize,
    map: HashMap<(String, u64), (Vec<u8>, u64)>,
    by_use: BTreeMap<u64, (String, u64)>,
    clock: u64,
}

impl Pages {
    fn get(&mut self, path: &str, n: u64) -> Option<&[u8]> {
        self.clock += 1;
        let clock = self.clock;
        let (bytes, used) = self.map.get_mut(&(path.to_string(), n))?;
        self.by_use.remove(used);
        *used = clock;
        self.by_use.insert(clock, (path.to_string(), n));
        Some(bytes)
    }

    fn put(&mut self, path: &str, n: u64, bytes: Vec<u8>) {
        if self.capacity == 0 {
            return;
        }
        self.clock += 1;
        let key = (path.to_string(), n);
        if let Some((_, used)) = self.map.insert(key.clone(), (bytes, self.clock)) {
            self.by_use.remove(&used);
        }
        self.by_use.insert(self.clock, key);
        while self.map.len() > self.capacity {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            self.map.remove(&oldest);
        }
    }

    fn forget(&mut self, path: &str) {
        let gone: Vec<(u64, (String, u64))> = self
            .by_use
            .iter()
            .filter(|(_, (p, _))| p == path)
            .map(|(u, k)| (*u, k.clone()))
            .collect();
        for (used, key) in gone {
            self.by_use.remove(&used);
            self.map.remove(&key);
        }
    }
}

/// A backend with a bounded client cache in front of it.
pub struct CachedBackend {
    inner: Arc<dyn Backend>,
    bytes: u64,
    pages: Arc<Mutex<Pages>>,
}

impl CachedBackend {
    /// `inner` with a cache of `bytes` (rounded down to whole pages).
    pub fn new(inner: Arc<dyn Backend>, bytes: u64) -> CachedBackend {
        let pages = Pages {
            capacity: (bytes / PAGE) as usize,
            ..Pages::default()
        };
        CachedBackend {
            inner,
            bytes,
            pages: Arc::new(Mutex::new(pages)),
        }
    }

    fn pages(&self) -> MutexGuard<'_, Pages> {
        lock(&self.pages)
    }
}

fn lock(p: &Mutex<Pages>) -> MutexGuard<'_, Pages> {
    // A panic elsewhere cannot leave the map half-changed in a way that matters: a page
    // is replaced or removed whole.
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// "16 MiB", "512 KiB".
fn size_name(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

impl Backend for CachedBackend {
    fn info(&self) -> TargetInfo {
        let mut i = self.inner.info();
        i.client = format!("{}+cache {}", i.client, size_name(self.bytes));
        i
    }
    fn stores_data(&self) -> bool {
        self.inner.stores_data()
    }
    fn shared_with_others(&self) -> Option<String> {
        self.inner.shared_with_others()
    }
    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let inner = self.inner.open(path, how)?;
        if how.truncate {
            self.pages().forget(path);
        }
        Ok(Box::new(CachedFile {
            inner,
            path: path.to_string(),
            pages: self.pages.clone(),
            pos: 0,
            bypass: how.direct,
            fresh: how.truncate,
        }))
    }
    fn stat(&self, path: &str) -> io::Result<FileStat> {
        self.inner.stat(path)
    }
    fn lstat(&self, path: &str) -> io::Result<FileStat> {
        self.inner.lstat(path)
    }
    fn truncate(&self, path: &str, len: u64) -> io::Result<()> {
        self.pages().forget(path);
        self.inner.truncate(path, len)
    }
    fn unlink(&self, path: &str) -> io::Result<()> {
        self.pages().forget(path);
        self.inner.unlink(path)
    }
    fn mkdir(&self, path: &str) -> io::Result<()> {
        self.inner.mkdir(path)
    }
    fn rmdir(&self, path: &str) -> io::Result<()> {
        self.inner.rmdir(path)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        {
            let mut p = self.pages();
            p.forget(from);
            p.forget(to);
        }
        self.inner.rename(from, to)
    }
    fn link(&self, existing: &str, new: &str) -> io::Result<()> {
        self.inner.link(existing, new)
    }
    fn symlink(&self, target: &str, link: &str) -> io::Result<()> {
        self.inner.symlink(target, link)
    }
    fn readlink(&self, path: &str) -> io::Result<String> {
        self.inner.readlink(path)
    }
    fn readdir(&self, path: &str) -> io::Result<Vec<DirEntry>> {
        self.inner.readdir(path)
    }
    fn statfs(&self, path: &str) -> io::Result<FsStat> {
        self.inner.statfs(path)
    }
    fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        self.inner.chmod(path, mode)
    }
    /// Empties this cache of the file, then whatever the client below keeps.
    fn purge_cache(&self, path: &str, how: PurgeRequest) -> io::Result<Purge> {
        self.pages().forget(path);
        self.inner.purge_cache(path, how)
    }
    fn check_purge(&self, how: PurgeRequest) -> Result<(), String> {
        self.inner.check_purge(how)
    }
    fn set_times(&self, path: &str, atime_ns: i128, mtime_ns: i128) -> io::Result<()> {
        self.inner.set_times(path, atime_ns, mtime_ns)
    }
    fn extents(&self, path: &str) -> io::Result<u64> {
        self.inner.extents(path)
    }
}

/// An open file behind the cache. Positions are kept here; the file below is only read
/// and written positionally.
struct CachedFile {
    inner: Box<dyn FileHandle>,
    path: String,
    pages: Arc<Mutex<Pages>>,
    pos: u64,
    /// Opened O_DIRECT: the cache is bypassed, as a kernel client's is.
    bypass: bool,
    /// Opened with truncate: nothing lies beyond what this handle wrote, so a write that
    /// begins a page fills all of it that exists.
    fresh: bool,
}

impl CachedFile {
    /// Reads `buf.len()` bytes at `offset` from the cache, fetching the missing pages of
    /// each gap from the server in one request.
    fn cached_read(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let end = offset + buf.len() as u64;
        let mut at = offset;
        while at < end {
            let n = at / PAGE;
            let hit = lock(&self.pages)
                .get(&self.path, n)
                .map(|page| copy_from_page(page, n, at, end, buf, offset));
            match hit {
                Some((copied, short)) => {
                    at += copied as u64;
                    if short {
                        break;
                    }
                }
                None => {
                    // Copied from what was fetched, not from the cache: a cache smaller
                    // than one request keeps only its last pages.
                    let (data, asked) = self.fetch(n, end)?;
                    let within = (at - n * PAGE) as usize;
                    let take = data.len().saturating_sub(within).min((end - at) as usize);
                    let dst = (at - offset) as usize;
                    buf[dst..dst + take].copy_from_slice(&data[within..within + take]);
                    at += take as u64;
                    if data.len() < asked {
                        break;
                    }
                }
            }
        }
        Ok((at - offset) as usize)
    }

    /// Fetches pages from `first` on, up to the one that holds `end - 1` or the first one
    /// already cached, in one read; keeps them. Returns the bytes fetched (fewer than
    /// asked at the end of the file) and the bytes asked.
    fn fetch(&mut self, first: u64, end: u64) -> io::Result<(Vec<u8>, usize)> {
        let last = (end - 1) / PAGE;
        let mut count = 1;
        {
            let mut p = lock(&self.pages);
            while first + count <= last && p.get(&self.path, first + count).is_none() {
                count += 1;
            }
        }
        let asked = (count * PAGE) as usize;
        let mut data = vec![0u8; asked];
        let mut got = 0;
        while got < data.len() {
            match self
                .inner
                .pread(&mut data[got..], first * PAGE + got as u64)?
            {
                0 => break,
                k => got += k,
            }
        }
        data.truncate(got);
        let mut p = lock(&self.pages);
        for (i, chunk) in data.chunks(PAGE as usize).enumerate() {
            p.put(&self.path, first + i as u64, chunk.to_vec());
        }
        if got == 0 {
            // At or past the end: remember the empty page so the next read stops at once.
            p.put(&self.path, first, Vec::new());
        }
        Ok((data, asked))
    }

    /// Keeps what a write of `data` at `offset` put in the pages it covers: into cached
    /// pages, and as new pages where it fills one (or begins one of a fresh file).
    fn keep_written(&mut self, data: &[u8], offset: u64) {
        let mut p = lock(&self.pages);
        let end = offset + data.len() as u64;
        let mut at = offset;
        while at < end {
            let n = at / PAGE;
            let start = n * PAGE;
            let stop = end.min(start + PAGE);
            let src = &data[(at - offset) as usize..(stop - offset) as usize];
            let within = (at - start) as usize;
            let page = match p.get(&self.path, n) {
                Some(old) => {
                    let mut page = old.to_vec();
                    if page.len() < within + src.len() {
                        page.resize(within + src.len(), 0);
                    }
                    page[within..within + src.len()].copy_from_slice(src);
                    Some(page)
                }
                None if within == 0 && (src.len() as u64 == PAGE || self.fresh) => {
                    Some(src.to_vec())
                }
                None => None,
            };
            match page {
                Some(page) => p.put(&self.path, n, page),
                None => p.forget_page(&self.path, n),
            }
            at = stop;
        }
    }
}

impl Pages {
    fn forget_page(&mut self, path: &str, n: u64) {
        if let Some((_, used)) = self.map.remove(&(path.to_string(), n)) {
            self.by_use.remove(&used);
        }
    }
}

/// Copies what page `n` holds of [`at`, `end`) into `buf` (which starts at `offset`).
/// Returns the bytes copied and whether the page ended the file before `end`.
fn copy_from_page(
    page: &[u8],
    n: u64,
    at: u64,
    end: u64,
    buf: &mut [u8],
    offset: u64,
) -> (usize, bool) {
    let within = (at - n * PAGE) as usize;
    let want = ((end - at) as usize).min(PAGE as usize - within);
    let have = page.len().saturating_sub(within).min(want);
    if have == 0 {
        return (0, true);
    }
    let dst = (at - offset) as usize;
    buf[dst..dst + have].copy_from_slice(&page[within..within + have]);
    (have, have < want)
}

impl FileHandle for CachedFile {
    cursor_over_positional_calls!(pos);
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        if self.bypass || buf.is_empty() {
            return self.inner.pread(buf, offset);
        }
        self.cached_read(buf, offset)
    }
    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = self.inner.pwrite(buf, offset)?;
        if self.bypass {
            lock(&self.pages).forget(&self.path);
        } else {
            self.keep_written(&buf[..n], offset);
        }
        Ok(n)
    }
    fn fsync(&mut self) -> io::Result<()> {
        self.inner.fsync()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        lock(&self.pages).forget(&self.path);
        self.inner.set_len(len)
    }
    fn map(&mut self, len: u64, writable: bool) -> io::Result<Box<dyn Mapping>> {
        // The mapping writes around the cache.
        lock(&self.pages).forget(&self.path);
        self.inner.map(len, writable)
    }
    fn allocate(&mut self, offset: u64, len: u64) -> io::Result<()> {
        self.inner.allocate(offset, len)
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posix::PosixBackend;

    fn cached(bytes: u64) -> (tempfile::TempDir, CachedBackend) {
        let dir = tempfile::tempdir().unwrap();
        let inner = PosixBackend::new(dir.path()).unwrap();
        (dir, CachedBackend::new(Arc::new(inner), bytes))
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn reads_what_was_written_through_the_cache_and_around_it() {
        let (dir, b) = cached(4 * PAGE);
        let data = pattern(3 * PAGE as usize + 1000, 7);
        let mut f = b.open("f", OpenOptions::create_new()).unwrap();
        f.write(&data[..100_000]).unwrap();
        f.write(&data[100_000..]).unwrap();
        // Changed behind the cache's back: a cached page still answers, as a client's does.
        std::fs::write(dir.path().join("other"), &data).unwrap();
        let mut back = vec![0u8; data.len() + 500];
        let n = f.pread(&mut back, 0).unwrap();
        assert_eq!((n, &back[..n]), (data.len(), &data[..]));
        f.close().unwrap();
        // A file read cold, at odd offsets, and past its end.
        let mut g = b.open("other", OpenOptions::read_only()).unwrap();
        for (off, len) in [
            (5u64, 70_000usize),
            (PAGE - 3, 10),
            (0, data.len()),
            (data.len() as u64 - 4, 100),
        ] {
            let mut buf = vec![0u8; len];
            let n = g.pread(&mut buf, off).unwrap();
            let want = &data[off as usize..(off as usize + len).min(data.len())];
            assert_eq!(&buf[..n], want, "at {off}+{len}");
        }
        assert_eq!(g.pread(&mut [0u8; 10], data.len() as u64 + 7).unwrap(), 0);
        g.close().unwrap();
    }

    #[test]
    fn keeps_at_most_its_bound_and_forgets_what_changes() {
        let (dir, b) = cached(2 * PAGE);
        let data = pattern(4 * PAGE as usize, 1);
        std::fs::write(dir.path().join("f"), &data).unwrap();
        let mut f = b.open("f", OpenOptions::read_only()).unwrap();
        let mut buf = vec![0u8; data.len()];
        f.pread(&mut buf, 0).unwrap();
        assert_eq!(b.pages().map.len(), 2, "the bound is two pages");
        // The last pages read are the ones kept.
        assert!(b.pages().get("f", 3).is_some() && b.pages().get("f", 0).is_none());
        f.close().unwrap();
        b.purge_cache("f", PurgeRequest::Drop).unwrap();
        assert!(b.pages().map.is_empty());
        let mut f = b.open("f", OpenOptions::read_only()).unwrap();
        f.pread(&mut buf[..10], 0).unwrap();
        b.unlink("f").unwrap();
        assert!(b.pages().map.is_empty());
        assert!(
            b.info().client.ends_with("+cache 128 KiB"),
            "{}",
            b.info().client
        );
    }
}
