//! Workloads: families of operations written against the backend trait only, each behind
//! one interface the engine schedules (`Runner`). `iozone` is the file-size x record-size
//! matrix (`iozone::matrix`); `metadata` (the Connectathon basic tests), `smallfiles` (a
//! web-application tree copied as `rsync -a` does) and `stream` (media recording and
//! playback, with fragmentation) are whole tests (`whole`), and so is `load` (a mix issued
//! open-loop at stepped rates). Every workload builds and emits
//! its records through `WorkloadRun`, its view of one target in one repetition.

pub mod buffered;
pub mod iozone;
pub mod load;
pub mod metadata;
pub mod smallfiles;
pub mod stream;
pub mod tree;
pub mod whole;

use crate::backend::{Backend, FileStat};
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::disk_io::DiskIo;
use crate::latency::LatencyRecorder;
use crate::operation::Operation;
use crate::plan::Plan;
use crate::ranks::{Go, Ranks, Ready};
use crate::record::{Record, Status};
use crate::run::{Observer, RunSummary, Target};
use crate::server_cpu;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How a unit of a workload, or the check before it, ended: what the engine schedules next.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Done,
    /// This target is given up (the reason); the others go on.
    TargetFailed(String),
    /// The whole run must stop: going on is unsafe (see `RunSummary::stopped`).
    Stopped(String),
    Interrupted,
}

/// A workload as the engine schedules it: for each repetition and target, its units in
/// order (the IOzone matrix's cells; one whole test for the others), each run to its end.
pub trait Runner {
    /// The units of one repetition on one target, numbered as `Plan::done` keys them.
    fn units(&self, plan: &Plan) -> Vec<usize>;
    /// The unit a record of this workload belongs to; `None` for a record of no unit.
    fn unit_of(&self, plan: &Plan, record: &Record) -> Option<usize>;
    /// Checks a target once, before anything runs on it (every rank together); a target
    /// that fails is given up, with a record that says why.
    fn preflight(&self, w: &mut WorkloadRun) -> io::Result<End>;
    /// Runs one unit. Err only when records cannot be written (the run cannot go on).
    fn run(&self, w: &mut WorkloadRun, unit: usize) -> io::Result<End>;
}

/// Why a measurement or a workload stopped early: an I/O error, or Ctrl-C.
#[derive(Debug)]
pub enum PassError {
    Io(io::Error),
    Interrupted,
}

impl From<io::Error> for PassError {
    fn from(e: io::Error) -> Self {
        PassError::Io(e)
    }
}

/// One workload run on one target for one repetition: where records go and what they share.
pub struct WorkloadRun<'a> {
    pub plan: &'a Plan,
    pub run_id: &'a str,
    pub target: &'a Target,
    pub rep: u32,
    pub cancel: &'a AtomicBool,
    pub observer: &'a mut dyn Observer,
    pub summary: &'a mut RunSummary,
    /// The operation under way, named in the failed record if it fails, and what more the
    /// record's error should say of it ("load point 3 (1200 requests/s)").
    pub phase: Operation,
    pub phase_detail: Option<String>,
    /// The clients of a multi-client run (`Solo` for one).
    pub ranks: &'a dyn Ranks,
    pub gather: Gather,
}

/// A multi-client run's measurement under way across ranks: its records wait here for the
/// gather, which comes at the start of the next measurement (so every rank's records of
/// one measurement travel together) or at the end of the workload.
#[derive(Default)]
pub struct Gather {
    open: Option<Vec<Record>>,
    /// The ranks decided together to give the target up: this rank owes them nothing.
    decided: bool,
}

impl WorkloadRun<'_> {
    pub fn backend(&self) -> &dyn Backend {
        self.target.backend.as_ref()
    }

    /// Err(Interrupted) once Ctrl-C was pressed.
    pub fn check(&self) -> Result<(), PassError> {
        check(self.cancel)
    }

    /// A record of this workload with everything but the figures filled in.
    pub fn record(&self, op: Operation, started_at: &str) -> Record {
        let info = self.target.backend.info();
        Record {
            run_id: self.run_id.to_string(),
            target: self.target.name.clone(),
            backend: info.backend,
            client: info.client,
            workload: self.plan.workload.kind(),
            op,
            threads: 1,
            rep: self.rep,
            include_close: true,
            sync: self.plan.timing.sync,
            cache: self.plan.cache.into(),
            started_at: started_at.to_string(),
            ..Record::default()
        }
    }

    /// Writes a record and counts it; in a multi-client run, keeps it for the gather.
    pub fn emit(&mut self, r: &Record) -> Result<(), PassError> {
        if let Some(open) = &mut self.gather.open {
            open.push(r.clone());
            return Ok(());
        }
        self.write(r)
    }

    fn write(&mut self, r: &Record) -> Result<(), PassError> {
        self.observer.record(r).map_err(PassError::Io)?;
        self.summary.records += 1;
        if r.status == Status::Failed {
            self.summary.failed += 1;
        }
        Ok(())
    }

    /// Before each measurement. In a multi-client run it gathers the last measurement's
    /// records, then every rank starts together (or, if a rank failed or was interrupted,
    /// none does); for one client it does nothing.
    pub fn start_together(&mut self) -> Result<(), PassError> {
        if self.ranks.size() > 1 {
            self.settle(Ready::Yes)?;
            let ready = if self.cancel.load(Ordering::Relaxed) {
                Ready::Interrupted
            } else {
                Ready::Yes
            };
            let go = self.ranks.start(ready)?;
            self.decide(go)?;
            self.gather.open = Some(Vec::new());
        }
        Ok(())
    }

    /// Starts a measured span: wall clock, this process's CPU and the servers' CPU.
    pub fn span(&self) -> Span {
        Span {
            started_at: now_rfc3339(),
            wall: Instant::now(),
            cpu: CpuSnapshot::now(),
            server: server_cpu::cpu_seconds(&self.target.servers),
            fuse: server_cpu::cpu_seconds(&self.target.fuse),
            disk: DiskIo::now(&self.target.disks),
        }
    }

    /// Multi-client runs: ends the measurement under way on every rank. Rank 0 writes
    /// every rank's records (merged, see `ranks::merge`); a rank's failure or Ctrl-C ends
    /// the target on every rank. Does nothing when no measurement is under way.
    pub fn settle(&mut self, mine: Ready) -> Result<(), PassError> {
        let Some(records) = self.gather.open.take() else {
            return Ok(());
        };
        let (merged, go) = self
            .ranks
            .finish(records, crate::ranks::Span::default(), mine)?;
        for r in &merged {
            self.write(r)?;
        }
        self.decide(go)
    }

    fn decide(&mut self, go: Go) -> Result<(), PassError> {
        match go {
            Go::On => Ok(()),
            Go::Stop(why) => {
                self.gather.decided = true;
                Err(PassError::Io(io::Error::other(why)))
            }
            Go::Interrupted => {
                self.gather.decided = true;
                Err(PassError::Interrupted)
            }
        }
    }

    /// After this rank's own error or Ctrl-C (`why`): tells the other ranks, at the
    /// collective they are waiting in, so all give the target up together. Nothing to do
    /// for one client, or when the ranks decided it together.
    pub fn abandon(&mut self, why: Ready) -> io::Result<()> {
        if self.ranks.size() == 1 || self.gather.decided {
            return Ok(());
        }
        self.gather.decided = true;
        if self.gather.open.is_some() {
            // This rank gives up whatever the others say.
            let _ = self.settle(why);
            return Ok(());
        }
        self.ranks.start(why).map(|_| ())
    }

    /// Fills time, CPU and server CPU of `r` from a finished span.
    pub fn close_span(&self, r: &mut Record, s: &SpanEnd) {
        r.seconds = s.seconds;
        set_cpu(r, &s.cpu, s.seconds);
        let servers = &self.target.servers;
        if !servers.is_empty() && s.server_s.is_finite() {
            r.server_cpu_s = Some(s.server_s);
            r.server_cpu_util_pct = Some(crate::cpu::util_pct(s.server_s, s.seconds));
        }
        if !self.target.fuse.is_empty() {
            r.add_fuse_cpu(s.fuse_s);
        }
        let here = Some(servers.on_this_machine(s.server_s)).filter(|h| h.is_finite());
        r.set_machine(&s.cpu, here.unwrap_or(0.0) + s.fuse_s);
        r.set_disk(s.disk);
    }

    pub fn finish(&self, span: Span) -> SpanEnd {
        let server_s = if self.target.servers.is_empty() {
            0.0
        } else {
            server_cpu::used(server_cpu::cpu_seconds(&self.target.servers), span.server)
                .unwrap_or(f64::NAN)
        };
        let fuse_s = (server_cpu::cpu_seconds(&self.target.fuse) - span.fuse).max(0.0);
        SpanEnd {
            started_at: span.started_at,
            seconds: span.wall.elapsed().as_secs_f64(),
            cpu: CpuSnapshot::now().since(&span.cpu),
            server_s,
            fuse_s,
            disk: DiskIo::now(&self.target.disks)
                .zip(span.disk)
                .map(|(now, then)| now.since(&then)),
        }
    }

    pub fn progress(&mut self, bytes: u64, what: &str) {
        let what = format!("{} {} {what}", self.target.name, self.plan.workload.name());
        self.observer.progress(bytes, &what);
    }
}

pub fn check(cancel: &AtomicBool) -> Result<(), PassError> {
    if cancel.load(Ordering::Relaxed) {
        Err(PassError::Interrupted)
    } else {
        Ok(())
    }
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A measurement under way.
pub struct Span {
    pub started_at: String,
    wall: Instant,
    cpu: CpuSnapshot,
    server: f64,
    fuse: f64,
    disk: Option<DiskIo>,
}

/// A finished measurement's time and CPU.
pub struct SpanEnd {
    pub started_at: String,
    pub seconds: f64,
    pub cpu: CpuUsage,
    /// The servers' CPU; NaN when unknown (a server elsewhere whose reading failed).
    pub server_s: f64,
    /// The FUSE daemon's CPU (see `Record::fuse_cpu_s`).
    pub fuse_s: f64,
    /// What reached the server's storage (see `Record::disk_writes`).
    pub disk: Option<DiskIo>,
}

pub fn set_cpu(r: &mut Record, cpu: &CpuUsage, seconds: f64) {
    r.cpu_user_s = cpu.user_s;
    r.cpu_sys_s = cpu.sys_s;
    r.cpu_total_s = cpu.total_s;
    r.cpu_util_pct = crate::cpu::util_pct(cpu.total_s, seconds);
}

/// Counts, time and latency of one operation type.
pub struct OpStats<K> {
    pub op: K,
    pub count: u64,
    pub ns: u64,
    pub bytes: u64,
    pub latency: LatencyRecorder,
}

/// Times operations by type (`K`: an `Operation`, or a workload's own names for calls it
/// does not record one by one), in the order types are first seen.
pub struct OpMeter<K> {
    pub ops: Vec<OpStats<K>>,
}

impl<K> Default for OpMeter<K> {
    fn default() -> Self {
        OpMeter { ops: Vec::new() }
    }
}

impl<K: Copy + PartialEq> OpMeter<K> {
    fn slot(&mut self, op: K) -> &mut OpStats<K> {
        let i = match self.ops.iter().position(|s| s.op == op) {
            Some(i) => i,
            None => {
                self.ops.push(OpStats {
                    op,
                    count: 0,
                    ns: 0,
                    bytes: 0,
                    latency: LatencyRecorder::new(),
                });
                self.ops.len() - 1
            }
        };
        &mut self.ops[i]
    }

    /// Runs `f` as one operation of type `op`, timing it.
    #[inline]
    pub fn time<T>(&mut self, op: K, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let t = Instant::now();
        let r = f();
        let ns = t.elapsed().as_nanos() as u64;
        let s = self.slot(op);
        s.count += 1;
        s.ns += ns;
        s.latency.record_ns(ns);
        r
    }

    /// Counts one whole operation of `bytes` that took `d` (e.g. a file written in many calls).
    pub fn record_whole(&mut self, op: K, d: std::time::Duration, bytes: u64) {
        let ns = d.as_nanos() as u64;
        let s = self.slot(op);
        s.count += 1;
        s.ns += ns;
        s.bytes += bytes;
        s.latency.record_ns(ns);
    }

    pub fn add_bytes(&mut self, op: K, bytes: u64) {
        self.slot(op).bytes += bytes;
    }

    pub fn get(&self, op: K) -> Option<&OpStats<K>> {
        self.ops.iter().find(|s| s.op == op)
    }

    pub fn total_ns(&self) -> u64 {
        self.ops.iter().map(|s| s.ns).sum()
    }
}

/// Removes `dir` and everything under it through the backend (symlinks are not followed).
pub fn remove_tree(backend: &dyn Backend, dir: &str) -> io::Result<()> {
    let st: FileStat = match backend.lstat(dir) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !st.is_dir {
        return backend.unlink(dir);
    }
    for e in backend.readdir(dir)? {
        let p = format!("{dir}/{}", e.name);
        if e.is_dir {
            remove_tree(backend, &p)?;
        } else {
            backend.unlink(&p)?;
        }
    }
    backend.rmdir(dir)
}

/// Checks up front that the target has the inodes and bytes a workload needs; the error
/// is one line for the user. A file system that reports no inode count (0) is not checked
/// for inodes.
pub fn check_space(
    backend: &dyn Backend,
    dir: &str,
    inodes: u64,
    bytes: u64,
) -> Result<(), String> {
    let st = match backend.statfs(dir) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::Unsupported => return Ok(()),
        Err(e) => return Err(format!("statfs failed: {e}")),
    };
    if st.read_only {
        return Err("cannot write there: read-only file system".into());
    }
    if st.total_files > 0 && st.free_files < inodes {
        return Err(format!(
            "needs {inodes} free inodes but the file system has {}",
            st.free_files
        ));
    }
    if st.total_bytes > 0 && st.free_bytes < bytes {
        return Err(format!(
            "needs {} free but the file system has {}",
            crate::size::format_amount(bytes),
            crate::size::format_amount(st.free_bytes)
        ));
    }
    Ok(())
}
