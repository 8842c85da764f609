//! The IOzone matrix as the engine schedules it: each cell (file size x record size) of a
//! repetition is one unit, in which IOzone's tests run in order, each operation a pass by
//! every worker at once (see the parent module), with a cold cache before each test when
//! the plan asks, and the records of single runs and of throughput mode (IOzone's -t).
//! Not: the order of cells, repetitions and targets (the engine's), nor how a pass does
//! its I/O (the parent module's).

use super::gate::StartGate;
use super::{iodepth_for, Coordination, PassError, PassOutcome, PassSpec, WorkerBuffers};
use crate::backend::{Backend, PurgeRequest};
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::disk_io::DiskIo;
use crate::latency::LatencyRecorder;
use crate::op::Op;
use crate::pattern;
use crate::plan::{CachePolicy, Cell, Plan};
use crate::ranks::{Go, Ranks, Ready, Span};
use crate::record::{Record, Scope, Status, ThroughputSummary, WorkloadKind};
use crate::run::{Observer, RunSummary, Target};
use crate::server_cpu;
use crate::workload::{End, Runner, WorkloadRun};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The IOzone matrix's runner: one unit per cell.
pub struct Matrix;

impl Runner for Matrix {
    fn units(&self, plan: &Plan) -> Vec<usize> {
        (0..plan.cells.len()).collect()
    }

    fn unit_of(&self, plan: &Plan, r: &Record) -> Option<usize> {
        plan.cells
            .iter()
            .position(|c| c.file_size == r.file_size && c.record_size == r.record_size)
    }

    fn preflight(&self, _w: &mut WorkloadRun) -> io::Result<End> {
        Ok(End::Done)
    }

    fn run(&self, w: &mut WorkloadRun, unit: usize) -> io::Result<End> {
        let ctx = Context {
            plan: w.plan,
            run_id: w.run_id,
            ranks: w.ranks,
            target: w.target,
            rep: w.rep,
            cell_index: unit,
            cell: w.plan.cells[unit],
        };
        run_cell(&ctx, w.cancel, &mut *w.observer, &mut *w.summary)
    }
}

/// Everything that identifies one measurement.
struct Context<'a> {
    plan: &'a Plan,
    run_id: &'a str,
    ranks: &'a dyn Ranks,
    target: &'a Target,
    rep: u32,
    cell_index: usize,
    cell: Cell,
}

/// What one cell's tests share as they run one after another.
struct CellState {
    /// Each worker's file, the backend it is on, and its buffers.
    files: Vec<String>,
    on: Vec<Arc<dyn Backend>>,
    bufs: Vec<WorkerBuffers>,
    /// Whether the files hold a whole file's data (a test that reads needs it).
    file_written: bool,
    /// The IOzone test of the last operation: a new test gets a cold cache.
    last_test: Option<u8>,
    /// What the purge before this test did, for its first operation's records.
    purge_note: Option<String>,
    /// A failure that makes going on unsafe (a remount that failed): the whole run stops.
    fatal: Option<String>,
    /// The target's server and FUSE processes as the cell began (see `members_now`).
    servers: server_cpu::ProcessSet,
    fuse: server_cpu::ProcessSet,
}

/// Runs every selected operation on one cell, IOzone test by test, then removes the files.
fn run_cell(
    ctx: &Context,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
    summary: &mut RunSummary,
) -> io::Result<End> {
    let plan = ctx.plan;
    let workers = plan.threads as usize;
    let places: Vec<_> = (0..workers).map(|w| ctx.target.place(w)).collect();
    let mut st = CellState {
        files: (places.iter().enumerate())
            .map(|(w, p)| p.workdir.file(&format!("f{w}")))
            .collect(),
        on: places.into_iter().map(|p| p.backend).collect(),
        bufs: (0..workers)
            .map(|_| WorkerBuffers::for_cell(&ctx.cell, plan.vector_records))
            .collect(),
        file_written: false,
        last_test: None,
        purge_note: None,
        fatal: None,
        servers: ctx.target.servers.members_now(),
        fuse: ctx.target.fuse.members_now(),
    };
    let end = CellRun {
        ctx,
        st: &mut st,
        cancel,
        observer,
        summary,
    }
    .run()?;
    if let Some(why) = st.fatal {
        // Nothing more is touched: the file system may not be where it was.
        return Ok(End::Stopped(why));
    }
    if !plan.keep_files {
        for (f, backend) in st.files.iter().zip(&st.on) {
            match backend.unlink(f) {
                Err(e) if e.kind() != io::ErrorKind::NotFound && end == End::Done => {
                    return Ok(End::TargetFailed(format!("cannot remove {f}: {e}")));
                }
                _ => {}
            }
        }
    }
    Ok(end)
}

/// A cell's operations as they run, and where their records go.
struct CellRun<'a, 'c> {
    ctx: &'a Context<'c>,
    st: &'a mut CellState,
    cancel: &'a AtomicBool,
    observer: &'a mut dyn Observer,
    summary: &'a mut RunSummary,
}

/// An operation of a sample, measured and not yet written.
struct Held {
    op: Op,
    specs: Vec<PassSpec>,
    taken: Result<Taken, Unmeasured>,
    waited: f64,
    purge_note: Option<String>,
}

impl CellRun<'_, '_> {
    /// Runs the cell's operations in IOzone's order, a pass each, as IOzone does. A sample
    /// (one client, `min_sample_s` > 0) then runs the whole sequence again, a round at a
    /// time, until the passes last the sample's time (see `more_rounds`). Each round starts
    /// without the file, as the first did, so every pass runs on the terms of IOzone's
    /// single one: a read reads a file just written and rewritten, a reread a file read
    /// once. (Passes over the same file drift: this machine has served a 64 MiB file it
    /// had read ten times half as fast again as one just written, so a faster target,
    /// which fits more passes into a sample, would gain more.) Without a sample, each
    /// operation's records are written as soon as it ends; a sample's, when its rounds end.
    fn run(&mut self) -> io::Result<End> {
        let ctx = self.ctx;
        let min_s = min_sample_s(ctx.plan, ctx.ranks.size());
        let mut held: Vec<Held> = Vec::new();
        for &op in &ctx.plan.ops {
            let workers = self.st.files.len();
            let specs: Vec<PassSpec> = (0..workers)
                .map(|w| pass_spec(ctx, op, w, &self.st.files[w]))
                .collect();
            let ready = get_ready(ctx, op, &specs, self.st, self.cancel);
            // Every rank starts together, or none does.
            let asked = Instant::now();
            let go = ctx.ranks.start(ready)?;
            let waited = asked.elapsed().as_secs_f64();
            let end = match go {
                Go::On => {
                    let st = &mut *self.st;
                    let taken = take(ctx, &specs, st, self.cancel);
                    let h = Held {
                        op,
                        specs,
                        taken,
                        waited,
                        purge_note: st.purge_note.take(),
                    };
                    if min_s > 0.0 && h.taken.is_ok() {
                        held.push(h);
                        continue;
                    }
                    self.write_all(held.drain(..))?;
                    self.write(h)?
                }
                Go::Stop(why) => {
                    self.write_all(held.drain(..))?;
                    self.observer.record(&failed_record(ctx, op, &why))?;
                    self.summary.records += 1;
                    self.summary.failed += 1;
                    End::TargetFailed(why)
                }
                Go::Interrupted => {
                    self.write_all(held.drain(..))?;
                    End::Interrupted
                }
            };
            if end != End::Done {
                return Ok(end);
            }
        }
        if !held.is_empty() {
            self.more_rounds(&mut held, min_s);
        }
        self.write_all(held.drain(..))
    }

    /// A sample's further rounds (see `run`): every operation again, from a cell without
    /// its file (written, and purged at each test, as in the first round), until the passes
    /// of all operations together last `min_s` per operation and each operation's at least
    /// half of it. (Every round runs every operation, so waiting until the fastest alone
    /// has `min_s` keeps the slower ones running far past it: from the quick main job's
    /// pass times, 31 s more of timed passes than one operation at a time, against 12 s
    /// this way.) At most three times `min_s` of wall time per operation.
    /// An operation that fails keeps the failure as its result and ends the rounds; Ctrl-C
    /// ends them with the rounds done.
    fn more_rounds(&mut self, held: &mut [Held], min_s: f64) {
        let ctx = self.ctx;
        let began = Instant::now();
        let cap_s = 3.0 * min_s * held.len() as f64;
        let short = |held: &[Held]| {
            let seconds = |h: &Held| h.taken.as_ref().map_or(f64::INFINITY, Taken::seconds);
            let total: f64 = held.iter().map(seconds).sum();
            (total < min_s * held.len() as f64 || held.iter().any(|h| seconds(h) < min_s / 2.0))
                && held
                    .iter()
                    .all(|h| matches!(&h.taken, Ok(t) if !t.mismatched()))
        };
        while short(held)
            && began.elapsed().as_secs_f64() < cap_s
            && !self.cancel.load(Ordering::Relaxed)
        {
            if let Err(e) = self.without_files(held[0].op) {
                held[0].taken = Err(Unmeasured::Failed(e.to_string()));
                return;
            }
            for h in held.iter_mut() {
                let st = &mut *self.st;
                let next = match get_ready(ctx, h.op, &h.specs, st, self.cancel) {
                    Ready::Yes => take(ctx, &h.specs, st, self.cancel),
                    Ready::No(why) => Err(Unmeasured::Failed(why)),
                    Ready::Interrupted => Err(Unmeasured::Interrupted),
                };
                // The purge is the first round's to report.
                st.purge_note = None;
                match (next, &mut h.taken) {
                    (Ok(next), Ok(t)) => t.absorb(next),
                    (Ok(_), Err(_)) => {}
                    // Ctrl-C: the rounds already done stay, the one cut short goes.
                    (Err(Unmeasured::Interrupted), _) => return,
                    (Err(u), _) => {
                        h.taken = Err(u);
                        return;
                    }
                }
            }
        }
    }

    /// Puts the cell back as a round finds it: no file, no test run yet. A round that
    /// starts with a write leaves the removal to it (a write removes its file itself), so
    /// a round costs no extra call to the target.
    fn without_files(&mut self, first: Op) -> io::Result<()> {
        self.st.file_written = false;
        self.st.last_test = None;
        if first.creates_file() {
            return Ok(());
        }
        for (f, backend) in self.st.files.iter().zip(&self.st.on) {
            match backend.unlink(f) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    fn write_all(&mut self, held: impl Iterator<Item = Held>) -> io::Result<End> {
        let mut end = End::Done;
        for h in held {
            let this = self.write(h)?;
            if end == End::Done {
                end = this;
            }
        }
        Ok(end)
    }

    /// Gathers every rank's records of one operation and writes them; returns what the
    /// ranks decided (go on, give the target up, or stop).
    fn write(&mut self, h: Held) -> io::Result<End> {
        let ctx = self.ctx;
        let (records, span, mine) = match h.taken {
            Ok(t) => (t.records(ctx, h.op, &self.st.files), t.span(), Ready::Yes),
            Err(Unmeasured::Failed(e)) => (
                vec![failed_record(ctx, h.op, &e)],
                Span::default(),
                Ready::No(e),
            ),
            Err(Unmeasured::Interrupted) => (Vec::new(), Span::default(), Ready::Interrupted),
        };
        let gathering = Instant::now();
        let (records, go) = ctx.ranks.finish(records, span, mine)?;
        if ctx.ranks.size() > 1 {
            self.summary.coordinated += 1;
            self.summary.coordination_s += h.waited + gathering.elapsed().as_secs_f64();
        }
        for mut r in records {
            // The purge belongs to the test's first operation; later ones report nothing new.
            r.cache_purge = h.purge_note.clone();
            match r.status {
                Status::VerifyFailed if r.scope != Scope::Worker => self.summary.verify_failed += 1,
                Status::Failed => self.summary.failed += 1,
                _ => {}
            }
            self.observer.record(&r)?;
            self.summary.records += 1;
        }
        Ok(match go {
            Go::On => {
                let planned = ctx.cell.file_size * self.st.files.len() as u64;
                let what = format!("{} {} {}", ctx.target.name, h.op, describe_cell(&ctx.cell));
                self.observer.progress(planned, &what);
                End::Done
            }
            Go::Stop(why) => End::TargetFailed(why),
            Go::Interrupted => End::Interrupted,
        })
    }
}

/// Before an operation: the files it needs written, and a cold cache at each new test
/// (IOzone's -U); whether this rank is ready to measure.
fn get_ready(
    ctx: &Context,
    op: Op,
    specs: &[PassSpec],
    st: &mut CellState,
    cancel: &AtomicBool,
) -> Ready {
    if cancel.load(Ordering::Relaxed) {
        return Ready::Interrupted;
    }
    if op.needs_existing_file() && !st.file_written {
        for (w, spec) in specs.iter().enumerate() {
            let backend = st.on[w].as_ref();
            if let Err(e) = super::prepare_file(backend, &st.files[w], spec, &mut st.bufs[w]) {
                return Ready::No(e.to_string());
            }
        }
        st.file_written = true;
    }
    if st.last_test != Some(op.iozone_test()) {
        st.last_test = Some(op.iozone_test());
        match purge(&st.on, ctx.plan.cache, &st.files) {
            Ok(note) => st.purge_note = note,
            Err(why) => {
                st.fatal = Some(why.clone());
                return Ready::No(why);
            }
        }
    }
    Ready::Yes
}

fn describe_cell(cell: &Cell) -> String {
    format!(
        "{}/{}",
        crate::size::format_size(cell.file_size),
        crate::size::format_size(cell.record_size)
    )
}

/// Purges caches as the policy asks, for every worker's file; returns what was done.
/// An error is a remount that failed: its file system may be unmounted, so the run stops.
fn purge(
    on: &[Arc<dyn Backend>],
    policy: CachePolicy,
    files: &[String],
) -> Result<Option<String>, String> {
    let how = match policy {
        CachePolicy::Drop => PurgeRequest::Drop,
        // One file system holds every worker's file (the session refuses a remount with
        // files in several directories): one remount empties it.
        CachePolicy::Remount => {
            return match on[0].purge_cache(&files[0], PurgeRequest::Remount) {
                Ok(p) => Ok(Some(p.name().to_string())),
                Err(e) => Err(e.to_string()),
            }
        }
        CachePolicy::Keep | CachePolicy::Direct => return Ok(None),
    };
    let mut done = None;
    for (f, backend) in files.iter().zip(on) {
        match backend.purge_cache(f, how) {
            Ok(p) => done = Some(p.name().to_string()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Ok(Some(format!("failed: {e}"))),
        }
    }
    Ok(done)
}

/// The least time of a sample: the plan's, for one client (the ranks of a multi-client run
/// start together once, as IOzone's -+m clients do) without remounts (one per test, as
/// IOzone's -U); otherwise 0, a single pass. In throughput mode each round starts the
/// workers together and stonewalls them, as IOzone's -t does once.
fn min_sample_s(plan: &Plan, ranks: u32) -> f64 {
    if ranks == 1 && plan.cache != CachePolicy::Remount {
        plan.min_sample_s
    } else {
        0.0
    }
}

fn mix_seed(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5EED_u64, |h, &p| {
        let mut z = (h ^ p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 31)
    })
}

fn pass_spec(ctx: &Context, op: Op, worker: usize, file: &str) -> PassSpec {
    let plan = ctx.plan;
    let cell_seed = mix_seed(&[plan.seed, u64::from(ctx.rep), ctx.cell_index as u64]);
    PassSpec {
        op,
        cell: ctx.cell,
        timing: plan.timing,
        direct: plan.direct(),
        stride: plan.stride,
        order_seed: mix_seed(&[cell_seed, op as u64, worker as u64]),
        verify_seed: plan.verify.then(|| pattern::file_seed(cell_seed, file)),
        vector_records: plan.vector_records,
        iodepth: iodepth_for(op, &plan.timing, plan.iodepth) as usize,
        mix_reader: (op == Op::RandomMix && (plan.threads > 1 || plan.throughput_mode))
            .then_some(worker.is_multiple_of(2)),
    }
}

/// Why an operation has no figures.
enum Unmeasured {
    Failed(String),
    Interrupted,
}

/// One operation as every worker ran it (a pass each; a sample adds its further rounds),
/// and what was counted around it.
struct Taken {
    outcomes: Vec<PassOutcome>,
    started_at: String,
    /// When the ranks let the measurement start, and when its last worker had returned.
    released: Instant,
    joined: Instant,
    /// The parent's view of the rounds: from the first worker's start to the last one's
    /// return, summed over rounds (throughput mode's "parent sees").
    parent_s: f64,
    /// This process's CPU and the machine's over the measurement.
    parent_cpu: CpuUsage,
    server_s: f64,
    fuse_s: f64,
    disk: Option<DiskIo>,
    /// What was counted just before the sample's first round and just after its last:
    /// the span over which the rest of the machine's CPU is judged (`over_span`).
    span_from: Readings,
    span_to: Readings,
}

/// This process's and the machine's CPU, and the lab servers' and FUSE daemon's CPU
/// seconds so far, at one moment.
#[derive(Clone, Copy)]
struct Readings {
    cpu: CpuSnapshot,
    server_s: f64,
    fuse_s: f64,
}

impl Taken {
    /// The timed seconds of its first worker: the rounds' measure (in throughput mode the
    /// stonewall gives every worker about the same).
    fn seconds(&self) -> f64 {
        self.outcomes.first().map_or(0.0, |o| o.seconds)
    }

    fn mismatched(&self) -> bool {
        self.outcomes.iter().any(|o| o.mismatch.is_some())
    }

    /// Adds a later round of the same operation: each worker's passes to its own.
    fn absorb(&mut self, next: Taken) {
        for (mine, theirs) in self.outcomes.iter_mut().zip(next.outcomes) {
            mine.absorb(theirs);
        }
        self.joined = next.joined;
        self.parent_s += next.parent_s;
        self.parent_cpu.add(&next.parent_cpu);
        self.server_s += next.server_s;
        self.fuse_s += next.fuse_s;
        self.disk = self.disk.zip(next.disk).map(|(a, b)| a.add(&b));
        self.span_to = next.span_to;
    }

    /// This process's and the machine's CPU over the sample's whole span, from before its
    /// first round to after its last (other operations' passes in between included), and
    /// what the lab's servers and FUSE daemon used meanwhile. One pair of /proc/stat
    /// readings a sample, so its rounding is counted once, not once per pass.
    fn over_span(&self) -> (CpuUsage, f64) {
        let (from, to) = (&self.span_from, &self.span_to);
        let elsewhere = (to.server_s - from.server_s).max(0.0) + (to.fuse_s - from.fuse_s).max(0.0);
        (to.cpu.since(&from.cpu), elsewhere)
    }

    /// From the first worker's start to the last one's return, in seconds since the
    /// release (the ranks line their spans up by it).
    fn span(&self) -> Span {
        let first = self.outcomes.iter().map(|o| o.started).min();
        let since = |t: Instant| t.saturating_duration_since(self.released).as_secs_f64();
        Span {
            start_s: since(first.unwrap_or(self.joined)),
            end_s: since(self.joined),
        }
    }

    /// The records: one for a single worker; in throughput mode one per worker and the
    /// aggregate, as IOzone's -t reports.
    fn records(&self, ctx: &Context, op: Op, files: &[String]) -> Vec<Record> {
        let (server_s, fuse_s) = (self.server_s, self.fuse_s);
        if self.outcomes.len() == 1 && !ctx.plan.throughput_mode {
            let o = &self.outcomes[0];
            let mut r = base_record(ctx, op, Scope::Single, &self.started_at);
            fill_from_outcome(&mut r, o, &files[0]);
            set_server_cpu(&mut r, &ctx.target.servers, server_s, o.seconds);
            if !ctx.target.fuse.is_empty() {
                r.add_fuse_cpu(fuse_s);
            }
            let (span_cpu, elsewhere_s) = self.over_span();
            r.set_machine(&span_cpu, elsewhere_s);
            r.set_disk(self.disk);
            return vec![r];
        }
        throughput_records(ctx, op, self, files)
    }
}

/// Runs one pass of an operation on every worker at once (one worker of one rank runs it
/// here, without a thread to start).
fn take(
    ctx: &Context,
    specs: &[PassSpec],
    st: &mut CellState,
    cancel: &AtomicBool,
) -> Result<Taken, Unmeasured> {
    let (released, workers) = (Instant::now(), specs.len());
    let barrier = StartGate::new(workers + 1);
    let first_done = AtomicBool::new(false);
    let coord = Coordination {
        start: Some(&barrier),
        first_done: &first_done,
        stonewall: ctx.plan.stonewall,
        cancel,
    };
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let (servers, fuse) = (&st.servers, &st.fuse);
    let outside = || {
        (
            CpuSnapshot::now(),
            server_cpu::cpu_seconds(servers),
            server_cpu::cpu_seconds(fuse),
            DiskIo::now(&ctx.target.disks),
        )
    };
    let (results, before) = if workers == 1 && ctx.ranks.size() == 1 {
        let alone = Coordination {
            start: None,
            ..coord
        };
        let before = outside();
        let (file, buf) = (&st.files[0], &mut st.bufs[0]);
        let result = super::run_pass(st.on[0].as_ref(), file, &specs[0], buf, &alone);
        (vec![result], before)
    } else {
        crate::thread_room::check(workers).map_err(Unmeasured::Failed)?;
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(workers);
            for (i, (((spec, file), backend), buf)) in specs
                .iter()
                .zip(&st.files)
                .zip(&st.on)
                .zip(st.bufs.iter_mut())
                .enumerate()
            {
                let (coord, backend) = (&coord, backend.as_ref());
                let spawned = std::thread::Builder::new()
                    .spawn_scoped(s, move || super::run_pass(backend, file, spec, buf, coord));
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // Those started return from the gate; the scope joins them.
                        barrier.call_off();
                        return Err(format!(
                            "cannot start worker thread {} of {workers}: {e} (lower --threads, or raise the limits: ulimit -u, ulimit -v)",
                            i + 1
                        ));
                    }
                }
            }
            // Workers cannot pass the barrier before the parent reaches it, so what is
            // counted from here covers all their work.
            let before = outside();
            barrier.wait();
            if ctx.plan.stonewall && ctx.ranks.size() > 1 {
                stonewall_across_ranks(ctx.ranks, &handles, &first_done);
            }
            let results: Vec<Result<PassOutcome, PassError>> = handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(PassError::Io(io::Error::other("worker thread panicked")))
                    })
                })
                .collect();
            Ok((results, before))
        })
        .map_err(Unmeasured::Failed)?
    };
    let (cpu0, server0, fuse0, disk0) = before;
    let (cpu1, server1, fuse1, disk1) = outside();
    let joined = Instant::now();
    let mut outcomes = Vec::with_capacity(workers);
    for r in results {
        match r {
            Ok(o) => outcomes.push(o),
            Err(PassError::Interrupted) => return Err(Unmeasured::Interrupted),
            Err(PassError::Io(e)) => return Err(Unmeasured::Failed(e.to_string())),
        }
    }
    // An operation that may create the file has written it whole.
    if specs.first().is_some_and(|s| s.op.may_create_file()) {
        st.file_written = true;
    }
    // The parent's view runs from the release (the earliest worker start: on a busy machine
    // the parent thread itself may be scheduled only after the workers are done) until
    // every worker has returned, untimed fsync and close included.
    let first_start = outcomes.iter().map(|o| o.started).min().unwrap_or(joined);
    Ok(Taken {
        parent_s: joined.saturating_duration_since(first_start).as_secs_f64(),
        outcomes,
        started_at,
        released,
        joined,
        parent_cpu: cpu1.since(&cpu0),
        server_s: server_cpu::used(server1, server0).unwrap_or(f64::NAN),
        fuse_s: (fuse1 - fuse0).max(0.0),
        disk: disk1.zip(disk0).map(|(now, then)| now.since(&then)),
        span_from: Readings {
            cpu: cpu0,
            server_s: servers.on_this_machine(server0),
            fuse_s: fuse0,
        },
        span_to: Readings {
            cpu: cpu1,
            server_s: servers.on_this_machine(server1),
            fuse_s: fuse1,
        },
    })
}

/// Throughput mode's records: one per worker, then the aggregate, as IOzone's -t reports.
fn throughput_records(ctx: &Context, op: Op, t: &Taken, files: &[String]) -> Vec<Record> {
    let Taken {
        outcomes,
        started_at,
        parent_s: parent_seconds,
        parent_cpu,
        server_s,
        fuse_s,
        disk,
        ..
    } = t;
    let (parent_seconds, server_s, fuse_s) = (*parent_seconds, *server_s, *fuse_s);
    let workers = outcomes.len();
    let base = |scope: Scope| base_record(ctx, op, scope, started_at);
    let mut records = Vec::with_capacity(workers + 1);
    let mut latency = LatencyRecorder::new();
    let mut rates = Vec::with_capacity(workers);
    for (w, o) in outcomes.iter().enumerate() {
        let mut r = base(Scope::Worker);
        r.worker = Some(w as u32);
        fill_from_outcome(&mut r, o, &files[w]);
        rates.push(r.throughput_kib_s);
        latency.merge(&o.latency);
        records.push(r);
    }
    let counted: u64 = outcomes.iter().map(|o| o.bytes).sum();
    let children_see: f64 = rates.iter().sum();
    let summary = ThroughputSummary {
        children_see_kib_s: children_see,
        parent_sees_kib_s: kib_per_s(counted, parent_seconds),
        min_worker_kib_s: rates.iter().copied().fold(f64::INFINITY, f64::min),
        max_worker_kib_s: rates.iter().copied().fold(0.0, f64::max),
        avg_worker_kib_s: children_see / workers as f64,
        min_xfer_bytes: outcomes.iter().map(|o| o.bytes).min().unwrap_or(0),
    };
    let mut agg = base(Scope::Aggregate);
    agg.bytes = counted;
    agg.passes = Some(outcomes.first().map_or(1, |o| o.passes));
    agg.seconds = parent_seconds;
    agg.throughput_kib_s = children_see;
    agg.throughput = Some(summary);
    agg.stonewalled = outcomes.iter().any(|o| o.stonewalled);
    agg.cpu_user_s = parent_cpu.user_s;
    agg.cpu_sys_s = parent_cpu.sys_s;
    agg.cpu_total_s = parent_cpu.total_s;
    agg.cpu_util_pct = crate::cpu::util_pct(parent_cpu.total_s, parent_seconds);
    agg.latency = latency.summary();
    set_server_cpu(&mut agg, &ctx.target.servers, server_s, parent_seconds);
    if !ctx.target.fuse.is_empty() {
        agg.add_fuse_cpu(fuse_s);
    }
    let (span_cpu, elsewhere_s) = t.over_span();
    agg.set_machine(&span_cpu, elsewhere_s);
    agg.set_disk(*disk);
    if let Some((w, o)) = outcomes
        .iter()
        .enumerate()
        .find(|(_, o)| o.mismatch.is_some())
    {
        agg.status = Status::VerifyFailed;
        agg.mismatch_file = Some(files[w].clone());
        agg.mismatch_offset = o.mismatch;
    }
    records.push(agg);
    records
}

/// While this rank's workers run: the first of them to finish stops every rank's workers
/// (they note their figures), and another rank's first finisher stops this rank's, so the
/// stonewall strikes at the first finish of the whole run. Polls every half millisecond
/// until the stonewall has struck here.
fn stonewall_across_ranks<T>(
    ranks: &dyn Ranks,
    workers: &[std::thread::ScopedJoinHandle<'_, T>],
    first_done: &AtomicBool,
) {
    loop {
        // A worker that reaches the end of its file sets `first_done`.
        if first_done.load(Ordering::Relaxed) {
            ranks.stonewall_post();
            return;
        }
        if ranks.stonewall_heard() {
            first_done.store(true, Ordering::Relaxed);
            return;
        }
        if workers.iter().all(|h| h.is_finished()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// Server CPU over the measurement, for targets whose servers run here.
fn set_server_cpu(r: &mut Record, servers: &server_cpu::ProcessSet, server_s: f64, seconds: f64) {
    if !servers.is_empty() && server_s.is_finite() {
        r.server_cpu_s = Some(server_s);
        r.server_cpu_util_pct = Some(crate::cpu::util_pct(server_s, seconds));
    }
}

fn kib_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / 1024.0 / seconds
    } else {
        0.0
    }
}

fn fill_from_outcome(r: &mut Record, o: &PassOutcome, file: &str) {
    r.passes = Some(o.passes);
    r.bytes = o.bytes;
    r.seconds = o.seconds;
    r.throughput_kib_s = kib_per_s(o.bytes, o.seconds);
    r.cpu_user_s = o.cpu.user_s;
    r.cpu_sys_s = o.cpu.sys_s;
    r.cpu_total_s = o.cpu.total_s;
    r.cpu_util_pct = crate::cpu::util_pct(o.cpu.total_s, o.seconds);
    r.latency = o.latency.summary();
    r.stonewalled = o.stonewalled;
    if let Some(off) = o.mismatch {
        r.status = Status::VerifyFailed;
        r.mismatch_file = Some(file.to_string());
        r.mismatch_offset = Some(off);
        r.error = Some(format!(
            "data read back differs from what was written at byte {off} of {file}"
        ));
    }
}

fn base_record(ctx: &Context, op: Op, scope: Scope, started_at: &str) -> Record {
    let plan = ctx.plan;
    let info = ctx.target.backend.info();
    Record {
        run_id: ctx.run_id.to_string(),
        target: ctx.target.name.clone(),
        backend: info.backend,
        client: info.client,
        iodepth: iodepth_for(op, &plan.timing, plan.iodepth),
        workload: WorkloadKind::Iozone,
        op: op.into(),
        file_size: ctx.cell.file_size,
        record_size: ctx.cell.record_size,
        threads: plan.threads,
        scope,
        rep: ctx.rep,
        include_close: plan.timing.include_close,
        include_fsync: plan.timing.include_fsync,
        direct: plan.direct(),
        sync: plan.timing.sync,
        mmap: plan.timing.mmap,
        cache: plan.cache.into(),
        verify: plan.verify,
        started_at: started_at.to_string(),
        ..Record::default()
    }
}

fn failed_record(ctx: &Context, op: Op, error: &str) -> Record {
    let scope = if ctx.plan.threads == 1 && !ctx.plan.throughput_mode {
        Scope::Single
    } else {
        Scope::Aggregate
    };
    let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let mut r = base_record(ctx, op, scope, &started);
    r.status = Status::Failed;
    r.error = Some(error.to_string());
    r
}
