//! --verify catches a target that returns wrong data: the engine runs over a real posix
//! directory through a wrapper that flips one byte of every read at a chosen file offset,
//! the way a faulty server or cache would.

use sharebench_backends::posix::PosixBackend;
use sharebench_core::backend::*;
use sharebench_core::engine;
use sharebench_core::op::Op;
use sharebench_core::plan::{Cell, Plan};
use sharebench_core::record::{Record, Status};
use sharebench_core::run::{Observer, RunSummary, Target};
use sharebench_core::workdir::Workdir;
use std::io::{self, IoSlice, IoSliceMut};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const BAD_OFFSET: u64 = 5000;

struct Corrupting(PosixBackend);
struct CorruptFile {
    inner: Box<dyn FileHandle>,
    pos: u64,
}

fn flip(buf: &mut [u8], start: u64, n: usize) {
    if (start..start + n as u64).contains(&BAD_OFFSET) {
        buf[(BAD_OFFSET - start) as usize] ^= 0x40;
    }
}

impl FileHandle for CorruptFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        flip(buf, self.pos, n);
        self.pos += n as u64;
        Ok(n)
    }
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.pos = offset;
        self.inner.seek(offset)
    }
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = self.inner.pread(buf, offset)?;
        flip(buf, offset, n);
        Ok(n)
    }
    fn pwrite(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.inner.pwrite(buf, offset)
    }
    fn pwritev(&mut self, bufs: &[IoSlice<'_>], offset: u64) -> io::Result<usize> {
        self.inner.pwritev(bufs, offset)
    }
    fn preadv(&mut self, bufs: &mut [IoSliceMut<'_>], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        for b in bufs.iter_mut() {
            let n = self.pread(b, offset + done as u64)?;
            done += n;
        }
        Ok(done)
    }
    fn fsync(&mut self) -> io::Result<()> {
        self.inner.fsync()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        self.inner.close()
    }
}

impl Backend for Corrupting {
    fn info(&self) -> TargetInfo {
        self.0.info()
    }
    fn open(&self, path: &str, how: OpenOptions) -> io::Result<Box<dyn FileHandle>> {
        let inner = self.0.open(path, how)?;
        // The working directory's marker is read back as it is, only test files lie.
        if path.ends_with(sharebench_core::workdir::MARKER) {
            return Ok(inner);
        }
        Ok(Box::new(CorruptFile { inner, pos: 0 }))
    }
    fn stat(&self, p: &str) -> io::Result<FileStat> {
        self.0.stat(p)
    }
    fn lstat(&self, p: &str) -> io::Result<FileStat> {
        self.0.lstat(p)
    }
    fn truncate(&self, p: &str, l: u64) -> io::Result<()> {
        self.0.truncate(p, l)
    }
    fn unlink(&self, p: &str) -> io::Result<()> {
        self.0.unlink(p)
    }
    fn mkdir(&self, p: &str) -> io::Result<()> {
        self.0.mkdir(p)
    }
    fn rmdir(&self, p: &str) -> io::Result<()> {
        self.0.rmdir(p)
    }
    fn rename(&self, a: &str, b: &str) -> io::Result<()> {
        self.0.rename(a, b)
    }
    fn link(&self, a: &str, b: &str) -> io::Result<()> {
        self.0.link(a, b)
    }
    fn symlink(&self, a: &str, b: &str) -> io::Result<()> {
        self.0.symlink(a, b)
    }
    fn readlink(&self, p: &str) -> io::Result<String> {
        self.0.readlink(p)
    }
    fn readdir(&self, p: &str) -> io::Result<Vec<DirEntry>> {
        self.0.readdir(p)
    }
    fn statfs(&self, p: &str) -> io::Result<FsStat> {
        self.0.statfs(p)
    }
    fn chmod(&self, p: &str, m: u32) -> io::Result<()> {
        self.0.chmod(p, m)
    }
    fn purge_cache(&self, p: &str, h: PurgeRequest) -> io::Result<Purge> {
        self.0.purge_cache(p, h)
    }
}

#[derive(Default)]
struct Collect(Vec<Record>);
impl Observer for Collect {
    fn record(&mut self, r: &Record) -> io::Result<()> {
        self.0.push(r.clone());
        Ok(())
    }
}

fn run_with(backend: Arc<dyn Backend>, ops: Vec<Op>, verify: bool) -> (Vec<Record>, RunSummary) {
    let workdir =
        Workdir::create(backend.as_ref(), &format!("verify-{}", std::process::id())).unwrap();
    let plan = Plan {
        ops,
        cells: vec![Cell {
            file_size: 64 << 10,
            record_size: 4096,
        }],
        reps: 1,
        verify,
        ..Plan::default()
    };
    let target = Target {
        name: "corrupting".into(),
        backend: backend.clone(),
        workdir,
        servers: Default::default(),
        fuse: Default::default(),
        server_view: None,
        disks: Vec::new(),
        places: Vec::new(),
    };
    let mut obs = Collect::default();
    let summary = engine::run(
        &plan,
        std::slice::from_ref(&target),
        "t",
        &AtomicBool::new(false),
        &mut obs,
    )
    .unwrap();
    target.workdir.remove(backend.as_ref()).unwrap();
    (obs.0, summary)
}

#[test]
fn verify_reports_the_file_and_offset_of_wrong_data() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let backend: Arc<dyn Backend> = Arc::new(Corrupting(PosixBackend::new(dir.path()).unwrap()));
    let reads = vec![
        Op::Write,
        Op::Read,
        Op::RandomRead,
        Op::BackwardRead,
        Op::StrideRead,
        Op::Fread,
        Op::Pread,
        Op::Preadv,
    ];
    let (records, summary) = run_with(backend, reads.clone(), true);
    assert_eq!(
        summary.verify_failed,
        reads.len() as u64 - 1,
        "every read operation must catch it"
    );
    for r in records.iter().filter(|r| r.op.name() != "write") {
        assert_eq!(
            r.status,
            Status::VerifyFailed,
            "{} did not catch the flipped byte",
            r.op
        );
        assert_eq!(r.mismatch_offset, Some(BAD_OFFSET));
        assert!(r.mismatch_file.as_deref().unwrap().ends_with("/f0"));
    }
    assert_eq!(records[0].status, Status::Ok);
    assert!(!summary.all_ok());
}

#[test]
fn without_verify_the_same_run_passes_and_with_an_honest_target_verify_passes() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let lying: Arc<dyn Backend> = Arc::new(Corrupting(PosixBackend::new(dir.path()).unwrap()));
    let (_, summary) = run_with(lying, vec![Op::Write, Op::Read], false);
    assert!(summary.all_ok());
    let honest: Arc<dyn Backend> = Arc::new(PosixBackend::new(dir.path()).unwrap());
    let (_, summary) = run_with(
        honest,
        vec![Op::Write, Op::Read, Op::RandomMix, Op::RandomRead],
        true,
    );
    assert!(summary.all_ok(), "{summary:?}");
}
