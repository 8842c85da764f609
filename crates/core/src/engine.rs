//! The engine: runs a plan against targets and emits one record per measurement.
//! Order: repetitions outermost, then targets, then cells, then IOzone's tests in order, so
//! targets are interleaved in time and drift on a noisy machine hits them alike.
//! It knows nothing of output formats; records go to an `Observer`.

use crate::backend::{Backend, PurgeRequest};
use crate::cpu::CpuSnapshot;
use crate::latency::LatencyRecorder;
use crate::op::Op;
use crate::pattern;
use crate::plan::{CachePolicy, Cell, Plan, Workload};
use crate::ranks::{Go, Ranks, Ready, Solo, Span};
use crate::record::{Record, Scope, Status, ThroughputSummary};
use crate::server_cpu;
use crate::workdir::Workdir;
use crate::workload::iozone::{
    self, Coordination, PassError, PassOutcome, PassSpec, WorkerBuffers,
};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// A target ready to run: its name as the user gave it, its backend, its working directory.
pub struct Target {
    pub name: String,
    pub backend: Arc<dyn Backend>,
    pub workdir: Workdir,
    /// The target's server processes on this machine (the lab's), whose CPU is recorded
    /// with each measurement; empty for other targets.
    pub servers: server_cpu::ProcessSet,
    /// The FUSE daemon that carries a FUSE-mounted target's I/O on this machine (the
    /// lab's Gluster and smbnetfs mounts), whose CPU counts as client CPU; empty otherwise.
    pub fuse: server_cpu::ProcessSet,
    /// The same files as the server stores them, where that is on this machine (a lab
    /// share's directory on its backing image): for what only the server side can
    /// measure, such as extents through FIEMAP. `None` for other targets.
    pub server_view: Option<Arc<dyn Backend>>,
}

/// Receives records and progress. Errors from `record` stop the run (nowhere to write).
pub trait Observer {
    fn record(&mut self, record: &Record) -> io::Result<()>;
    /// Called after each measurement with the bytes it was planned to move.
    fn progress(&mut self, _planned_bytes: u64, _what: &str) {}
    /// A one-line warning for the user (e.g. a target given up after an error).
    fn warn(&mut self, _message: &str) {}
}

/// How a run ended.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RunSummary {
    pub records: u64,
    pub failed: u64,
    pub verify_failed: u64,
    pub interrupted: bool,
    /// Measurements coordinated across ranks, and the seconds spent coordinating them
    /// (the start barrier and the gather; zero for one client).
    pub coordinated: u64,
    pub coordination_s: f64,
    /// Why the run was stopped before its end by a failure that made going on unsafe
    /// (a remount that failed and may have left its file system unmounted).
    pub stopped: Option<String>,
}

impl RunSummary {
    pub fn all_ok(&self) -> bool {
        self.failed == 0 && self.verify_failed == 0 && !self.interrupted && self.stopped.is_none()
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

/// Runs the whole plan. Returns early (with `interrupted`) when `cancel` is set.
pub fn run(
    plan: &Plan,
    targets: &[Target],
    run_id: &str,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
) -> io::Result<RunSummary> {
    run_ranked(plan, targets, run_id, cancel, observer, &Solo)
}

/// `run` as one rank of a multi-client run: every measurement starts on all ranks
/// together, and `ranks` hands rank 0 everyone's records (see `ranks`).
pub fn run_ranked(
    plan: &Plan,
    targets: &[Target],
    run_id: &str,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
    ranks: &dyn Ranks,
) -> io::Result<RunSummary> {
    if plan.workload != Workload::Iozone {
        return run_workload(plan, targets, run_id, cancel, observer, ranks);
    }
    let mut summary = RunSummary::default();
    let mut dead = vec![false; targets.len()];
    for rep in 0..plan.reps {
        for (t, target) in targets.iter().enumerate() {
            for (cell_index, &cell) in plan.cells.iter().enumerate() {
                if dead[t] || plan.done.contains(&(rep, target.name.clone(), cell_index)) {
                    continue;
                }
                let ctx = Context {
                    plan,
                    run_id,
                    ranks,
                    target,
                    rep,
                    cell_index,
                    cell,
                };
                match run_cell(&ctx, cancel, observer, &mut summary)? {
                    CellEnd::Done => {}
                    CellEnd::TargetFailed(why) => {
                        dead[t] = true;
                        observer.warn(&format!(
                            "{}: giving up on this target after an error: {why}",
                            target.name
                        ));
                    }
                    CellEnd::Stopped(why) => {
                        summary.stopped = Some(format!("{}: {why}", target.name));
                        return Ok(summary);
                    }
                    CellEnd::Interrupted => {
                        summary.interrupted = true;
                        return Ok(summary);
                    }
                }
            }
        }
    }
    Ok(summary)
}

/// Checks up front that a target has the inodes and space the workload needs.
pub fn preflight(plan: &Plan, target: &Target) -> Result<(), String> {
    let (inodes, bytes) = match &plan.workload {
        Workload::Iozone => return Ok(()),
        Workload::Metadata(m) => m.needs(),
        Workload::Smallfiles(s) => s.needs(),
        Workload::Stream(s) => s.needs(),
    };
    crate::workload::check_space(target.backend.as_ref(), &target.workdir.path, inodes, bytes)
        .map_err(|e| format!("{}: {} workload: {e}", target.name, plan.workload.name()))
}

/// The metadata, smallfiles and stream workloads: repetitions outermost, then targets, so
/// targets are interleaved in time as with IOzone's matrix. In a multi-client run every
/// rank runs the same workload on its own files, each measurement starting together
/// (`WorkloadRun::start_together`), and a target any rank cannot use is given up by all.
fn run_workload(
    plan: &Plan,
    targets: &[Target],
    run_id: &str,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
    ranks: &dyn Ranks,
) -> io::Result<RunSummary> {
    use crate::workload::{self, iozone::PassError, Gather, WorkloadRun};
    let mut summary = RunSummary::default();
    let mut dead = vec![false; targets.len()];
    for (t, target) in targets.iter().enumerate() {
        let checked = preflight(plan, target);
        let ready = match &checked {
            Ok(()) => Ready::Yes,
            Err(why) => Ready::No(why.clone()),
        };
        let failed = match (checked, ranks.start(ready)?) {
            (_, Go::Interrupted) => {
                summary.interrupted = true;
                return Ok(summary);
            }
            (_, Go::Stop(why)) | (Err(why), Go::On) => Some(why),
            (Ok(()), Go::On) => None,
        };
        if let Some(why) = failed {
            dead[t] = true;
            observer.warn(&why);
            let mut w = WorkloadRun {
                plan,
                run_id,
                target,
                rep: 0,
                cancel,
                observer: &mut *observer,
                summary: &mut summary,
                phase: String::new(),
                ranks,
                gather: Gather::default(),
            };
            let mut r = w.record("preflight", &workload::now_rfc3339());
            r.status = Status::Failed;
            r.error = Some(why);
            if let Err(PassError::Io(e)) = w.emit(&r) {
                return Err(e);
            }
        }
    }
    for rep in 0..plan.reps {
        for (t, target) in targets.iter().enumerate() {
            let whole = (rep, target.name.clone(), crate::plan::WHOLE_TEST);
            if dead[t] || plan.done.contains(&whole) {
                continue;
            }
            let mut w = WorkloadRun {
                plan,
                run_id,
                target,
                rep,
                cancel,
                observer: &mut *observer,
                summary: &mut summary,
                phase: String::new(),
                ranks,
                gather: Gather::default(),
            };
            let ran = match &plan.workload {
                Workload::Iozone => Ok(()),
                Workload::Metadata(p) => workload::metadata::run(&mut w, p),
                Workload::Smallfiles(p) => workload::smallfiles::run(&mut w, p),
                Workload::Stream(p) => workload::stream::run(&mut w, p),
            }
            .and_then(|()| w.settle(Ready::Yes));
            match ran {
                Ok(()) => {}
                Err(PassError::Interrupted) => {
                    w.abandon(Ready::Interrupted)?;
                    summary.interrupted = true;
                    return Ok(summary);
                }
                Err(PassError::Io(e)) => {
                    let mut r = w.record(&w.phase, &workload::now_rfc3339());
                    r.status = Status::Failed;
                    r.error = Some(e.to_string());
                    match w.emit(&r) {
                        Ok(()) => {}
                        Err(PassError::Io(e)) => return Err(e),
                        Err(PassError::Interrupted) => {}
                    }
                    w.abandon(Ready::No(e.to_string()))?;
                    dead[t] = true;
                    observer.warn(&format!(
                        "{}: giving up on this target after an error: {e}",
                        target.name
                    ));
                }
            }
        }
    }
    Ok(summary)
}

enum CellEnd {
    Done,
    TargetFailed(String),
    /// The whole run must stop (see `RunSummary::stopped`).
    Stopped(String),
    Interrupted,
}

/// Runs every selected operation on one cell, IOzone test by test, then removes the files.
fn run_cell(
    ctx: &Context,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
    summary: &mut RunSummary,
) -> io::Result<CellEnd> {
    let plan = ctx.plan;
    let backend = ctx.target.backend.as_ref();
    let workers = plan.threads as usize;
    let files: Vec<String> = (0..workers)
        .map(|w| ctx.target.workdir.file(&format!("f{w}")))
        .collect();
    let mut bufs: Vec<WorkerBuffers> = (0..workers)
        .map(|_| WorkerBuffers::for_cell(&ctx.cell, plan.vector_records))
        .collect();
    let mut file_written = false;
    let mut last_test = None;
    let mut purge_note: Option<String> = None;
    let mut end = CellEnd::Done;
    // A failure that makes going on unsafe (a remount that failed): the whole run stops.
    let mut fatal: Option<String> = None;

    for &op in &plan.ops {
        let mut ready = if cancel.load(Ordering::Relaxed) {
            Ready::Interrupted
        } else {
            Ready::Yes
        };
        let specs: Vec<PassSpec> = (0..workers)
            .map(|w| pass_spec(ctx, op, w, &files[w]))
            .collect();
        if ready == Ready::Yes && op.needs_existing_file() && !file_written {
            for w in 0..workers {
                if let Err(e) = iozone::prepare_file(backend, &files[w], &specs[w], &mut bufs[w]) {
                    ready = Ready::No(e.to_string());
                    break;
                }
            }
            file_written = ready == Ready::Yes;
        }
        // A cold cache before the first operation of each IOzone test (IOzone's -U).
        if ready == Ready::Yes && last_test != Some(op.iozone_test()) {
            last_test = Some(op.iozone_test());
            match purge(backend, plan.cache, &files) {
                Ok(note) => purge_note = note,
                Err(why) => {
                    ready = Ready::No(why.clone());
                    fatal = Some(why);
                }
            }
        }
        // Every rank starts together, or none does.
        let asked = Instant::now();
        let go = ctx.ranks.start(ready)?;
        let mut coordination = asked.elapsed().as_secs_f64();
        match go {
            Go::On => {}
            Go::Interrupted => {
                end = CellEnd::Interrupted;
                break;
            }
            Go::Stop(why) => {
                let rec = failed_record(ctx, op, &why);
                observer.record(&rec)?;
                summary.records += 1;
                summary.failed += 1;
                end = CellEnd::TargetFailed(why);
                break;
            }
        }
        let released = Instant::now();
        let (measured, span) = measure(ctx, op, &specs, &files, &mut bufs, cancel);
        let span = span
            .map(|(first, last)| Span {
                start_s: first.saturating_duration_since(released).as_secs_f64(),
                end_s: last.saturating_duration_since(released).as_secs_f64(),
            })
            .unwrap_or_default();
        let planned = ctx.cell.file_size * workers as u64;
        let (records, mine) = match measured {
            Measured::Ok(records) => (records, Ready::Yes),
            Measured::Failed(e) => (vec![failed_record(ctx, op, &e)], Ready::No(e)),
            Measured::Interrupted => (Vec::new(), Ready::Interrupted),
        };
        let gathering = Instant::now();
        let (records, go) = ctx.ranks.finish(records, span, mine)?;
        coordination += gathering.elapsed().as_secs_f64();
        if ctx.ranks.size() > 1 {
            summary.coordinated += 1;
            summary.coordination_s += coordination;
        }
        for mut r in records {
            r.cache_purge = purge_note.clone();
            match r.status {
                Status::VerifyFailed if r.scope != Scope::Worker => summary.verify_failed += 1,
                Status::Failed => summary.failed += 1,
                _ => {}
            }
            observer.record(&r)?;
            summary.records += 1;
        }
        match go {
            Go::On => {
                if op.may_create_file() {
                    file_written = true;
                }
            }
            Go::Stop(why) => {
                end = CellEnd::TargetFailed(why);
                break;
            }
            Go::Interrupted => {
                end = CellEnd::Interrupted;
                break;
            }
        }
        // Later purges report nothing new until the next test starts.
        purge_note = None;
        observer.progress(
            planned,
            &format!("{} {} {}", ctx.target.name, op, describe_cell(&ctx.cell)),
        );
    }
    if let Some(why) = fatal {
        // Nothing more is touched: the file system may not be where it was.
        return Ok(CellEnd::Stopped(why));
    }

    if !plan.keep_files {
        for f in &files {
            match backend.unlink(f) {
                Err(e) if e.kind() != io::ErrorKind::NotFound && matches!(end, CellEnd::Done) => {
                    return Ok(CellEnd::TargetFailed(format!("cannot remove {f}: {e}")));
                }
                _ => {}
            }
        }
    }
    Ok(end)
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
    backend: &dyn Backend,
    policy: CachePolicy,
    files: &[String],
) -> Result<Option<String>, String> {
    let how = match policy {
        CachePolicy::Drop => PurgeRequest::Drop,
        // One file system holds every worker's file: one remount empties it.
        CachePolicy::Remount => {
            return match backend.purge_cache(&files[0], PurgeRequest::Remount) {
                Ok(p) => Ok(Some(p.name().to_string())),
                Err(e) => Err(e.to_string()),
            }
        }
        CachePolicy::Keep | CachePolicy::Direct => return Ok(None),
    };
    let mut done = None;
    for f in files {
        match backend.purge_cache(f, how) {
            Ok(p) => done = Some(p.name().to_string()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Ok(Some(format!("failed: {e}"))),
        }
    }
    Ok(done)
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
        mix_reader: (op == Op::RandomMix && (plan.threads > 1 || plan.throughput_mode))
            .then_some(worker.is_multiple_of(2)),
    }
}

enum Measured {
    Ok(Vec<Record>),
    Failed(String),
    Interrupted,
}

/// Runs one operation on every worker at once and turns the outcomes into records.
/// Also returns when the measurement ran: the first worker's start and the last one's end.
fn measure(
    ctx: &Context,
    op: Op,
    specs: &[PassSpec],
    files: &[String],
    bufs: &mut [WorkerBuffers],
    cancel: &AtomicBool,
) -> (Measured, Option<(Instant, Instant)>) {
    let backend = ctx.target.backend.as_ref();
    let workers = specs.len();
    let barrier = Barrier::new(workers + 1);
    let first_done = AtomicBool::new(false);
    let coord = Coordination {
        start: Some(&barrier),
        first_done: &first_done,
        stonewall: ctx.plan.stonewall,
        cancel,
    };
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);

    let (results, joined, parent_cpu, outside_s) = std::thread::scope(|s| {
        let handles: Vec<_> = specs
            .iter()
            .zip(files)
            .zip(bufs.iter_mut())
            .map(|((spec, file), buf)| {
                let coord = &coord;
                s.spawn(move || iozone::run_pass(backend, file, spec, buf, coord))
            })
            .collect();
        // Workers cannot pass the barrier before the parent reaches it, so CPU counted from
        // here covers all their work.
        let cpu0 = CpuSnapshot::now();
        let server0 = server_cpu::cpu_seconds(&ctx.target.servers);
        let fuse0 = server_cpu::cpu_seconds(&ctx.target.fuse);
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
        let server_s = server_cpu::cpu_seconds(&ctx.target.servers) - server0;
        let fuse_s = server_cpu::cpu_seconds(&ctx.target.fuse) - fuse0;
        (
            results,
            Instant::now(),
            CpuSnapshot::now().since(&cpu0),
            (server_s.max(0.0), fuse_s.max(0.0)),
        )
    });
    let (server_s, fuse_s) = outside_s;

    let mut outcomes = Vec::with_capacity(workers);
    for r in results {
        match r {
            Ok(o) => outcomes.push(o),
            Err(PassError::Interrupted) => return (Measured::Interrupted, None),
            Err(PassError::Io(e)) => return (Measured::Failed(e.to_string()), None),
        }
    }
    let first = outcomes.iter().map(|o| o.started).min().unwrap_or(joined);
    let span = Some((first, joined));

    let base = |scope: Scope| base_record(ctx, op, scope, &started_at);
    let mut records = Vec::new();
    if workers == 1 && !ctx.plan.throughput_mode {
        let o = &outcomes[0];
        let mut r = base(Scope::Single);
        fill_from_outcome(&mut r, o, &files[0]);
        set_server_cpu(&mut r, &ctx.target.servers, server_s, o.seconds);
        if !ctx.target.fuse.is_empty() {
            r.add_fuse_cpu(fuse_s);
        }
        records.push(r);
        return (Measured::Ok(records), span);
    }

    // Throughput mode: one record per worker, then the aggregate, as IOzone's -t reports.
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
    // The parent's view runs from the release (the earliest worker start: on a busy machine
    // the parent thread itself may be scheduled only after the workers are done) until
    // every worker has returned, untimed fsync and close included.
    let released = outcomes.iter().map(|o| o.started).min().unwrap_or(joined);
    let parent_seconds = joined.saturating_duration_since(released).as_secs_f64();
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
    (Measured::Ok(records), span)
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
    if !servers.is_empty() {
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
        workload: "iozone".into(),
        op: op.name().into(),
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
        cache: plan.cache.name().into(),
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
