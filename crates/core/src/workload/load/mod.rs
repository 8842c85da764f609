//! The load workload: a mix of operations (`crate::mix`) issued open-loop by `--threads`
//! workers at stepped request rates, the load points. Each point is a unit of the engine,
//! so the targets take turns point by point and their curves are measured side by side in
//! time; it runs every worker on its own schedule for the point's time and emits one
//! record: requested and achieved rate, latency counted from the schedule, throughput,
//! client and server CPU, and whether the point is valid (achieved at least 99% of
//! requested, as SPECstorage marks points). A target's curve ends at its first invalid
//! point: past it the curve measures only the overload. Under MPI every rank is a client
//! with its share of the rate, and every point runs (stopping early would need the ranks
//! to agree on where).

pub mod schedule;
pub mod worker;

use super::whole::{conclude, WholeTest};
use super::{check, remove_tree, End, PassError, Runner, SpanEnd, WorkloadRun};
use crate::latency::LatencyRecorder;
use crate::plan::{LoadParams, Plan, Workload};
use crate::record::{Record, Scope};
use schedule::Schedule;
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use worker::Worker;

/// The share of the requested rate a valid point achieves.
pub const VALID_SHARE: f64 = 0.99;

/// How far ahead of the workers' first request the schedule starts: time to start them.
const LEAD: Duration = Duration::from_millis(20);

/// What one worker did at one load point.
struct PointOut {
    requested: u64,
    done: u64,
    dropped: u64,
    bytes: u64,
    /// From when each request was due, and from when it was issued.
    latency: LatencyRecorder,
    service: LatencyRecorder,
    /// When the schedule began, and when the worker issued its last request.
    start: Instant,
    last_issued: Instant,
}

/// The runner of the load workload; it keeps each target's workers between its points.
#[derive(Default)]
pub struct LoadRunner {
    curves: Mutex<BTreeMap<(String, u32), Curve>>,
}

/// A target's curve in one repetition: its workers and their directory while it runs.
enum Curve {
    Running { base: String, workers: Vec<Worker> },
    Ended,
}

impl Runner for LoadRunner {
    fn units(&self, plan: &Plan) -> Vec<usize> {
        match &plan.workload {
            Workload::Load(p) => (0..p.points as usize).collect(),
            _ => Vec::new(),
        }
    }

    fn unit_of(&self, _plan: &Plan, record: &Record) -> Option<usize> {
        record.figures.load_point.map(|p| p as usize)
    }

    fn preflight(&self, w: &mut WorkloadRun) -> io::Result<End> {
        WholeTest.preflight(w)
    }

    /// Runs load point `unit` on this target, setting its workers up first when this is
    /// its first point of the repetition, and removing them after its last.
    fn run(&self, w: &mut WorkloadRun, unit: usize) -> io::Result<End> {
        let Workload::Load(p) = &w.plan.workload else {
            return Ok(End::Done);
        };
        let mut curves = self.curves.lock().unwrap_or_else(|e| e.into_inner());
        let key = (w.target.name.clone(), w.rep);
        let curve = curves.entry(key).or_insert_with(|| Curve::Running {
            base: String::new(),
            workers: Vec::new(),
        });
        let Curve::Running { base, workers } = curve else {
            return Ok(End::Done);
        };
        let ran = (|| {
            if workers.is_empty() {
                *base = w
                    .target
                    .workdir
                    .file(&format!("load-r{}-c{}", w.rep, w.ranks.rank()));
                *workers = make_workers(w, p, base)?;
            }
            run_point(w, p, unit as u32, workers)
        })();
        let last = match &ran {
            Ok(valid) => unit + 1 == p.points as usize || !valid && w.ranks.size() == 1,
            Err(_) => true,
        };
        if last {
            w.phase = "cleanup".into();
            let mut closed = workers.iter_mut().try_for_each(|wk| wk.close());
            if !base.is_empty() {
                closed = closed.and_then(|()| remove_tree(w.backend(), base));
            }
            *curve = Curve::Ended;
            if let (Err(e), Ok(_)) = (closed, &ran) {
                return conclude(w, Err(PassError::Io(e)));
            }
        }
        conclude(w, ran.map(|_| ()))
    }
}

/// Makes every worker's directory under `base` and its files (not timed).
fn make_workers(w: &mut WorkloadRun, p: &LoadParams, base: &str) -> Result<Vec<Worker>, PassError> {
    w.phase = "setup".into();
    w.backend().mkdir(base)?;
    let rank = w.ranks.rank();
    let mut workers = Vec::new();
    for i in 0..w.plan.threads {
        check(w.cancel)?;
        let seed = p.seed ^ (u64::from(w.rep) << 40) ^ (u64::from(rank) << 20) ^ u64::from(i);
        let dir = format!("{base}/w{i}");
        let sync = w.plan.timing.sync;
        workers.push(Worker::make(w.backend(), &dir, &p.mix, seed, sync)?);
    }
    Ok(workers)
}

/// Runs point `i` and emits its record; true when the point is valid.
fn run_point(
    w: &mut WorkloadRun,
    p: &LoadParams,
    i: u32,
    workers: &mut [Worker],
) -> Result<bool, PassError> {
    check(w.cancel)?;
    let rate = p.rate(i);
    w.phase = format!("load point {} ({rate:.0} requests/s)", i + 1);
    let per_worker = f64::from(w.plan.threads * w.ranks.size());
    let (outs, end) = point(w, workers, p, rate / per_worker)?;
    let valid = emit(w, p, i, &outs, &end)?;
    w.progress(
        1,
        &format!("point {} of {} at {rate:.0}/s", i + 1, p.points),
    );
    Ok(valid)
}

/// Runs one load point on every worker at once, each at `rate` requests/s.
fn point(
    w: &mut WorkloadRun,
    workers: &mut [Worker],
    p: &LoadParams,
    rate: f64,
) -> Result<(Vec<PointOut>, SpanEnd), PassError> {
    w.start_together()?;
    let (b, cancel, mix) = (w.backend(), w.cancel, &p.mix);
    let span = w.span();
    let t0 = Instant::now() + LEAD;
    let results: Vec<Result<PointOut, PassError>> = std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|wk| {
                let sched = Schedule::new(t0, rate, p.point_seconds, wk.fraction());
                s.spawn(move || drive(b, mix, wk, sched, cancel))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(PassError::Io(std::io::Error::other("load worker panicked")))
                })
            })
            .collect()
    });
    let end = w.finish(span);
    let outs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((outs, end))
}

/// One worker's requests of one point, each issued when due (or when the worker is free).
fn drive(
    b: &dyn crate::backend::Backend,
    mix: &crate::mix::Mix,
    wk: &mut Worker,
    mut sched: Schedule,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<PointOut, PassError> {
    schedule::precise_timers();
    let mut out = PointOut {
        requested: sched.count(),
        done: 0,
        dropped: 0,
        bytes: 0,
        latency: LatencyRecorder::new(),
        service: LatencyRecorder::new(),
        start: sched.start(),
        last_issued: sched.start(),
    };
    while let Some(due) = sched.next_due(Instant::now()) {
        if !schedule::wait_until(due, cancel) {
            return Err(PassError::Interrupted);
        }
        let op = wk.pick(mix);
        let issued = Instant::now();
        let d = wk.issue(b, mix, op)?;
        let finished = Instant::now();
        out.latency.record_ns((finished - due).as_nanos() as u64);
        out.service.record_ns((finished - issued).as_nanos() as u64);
        out.done += 1;
        out.bytes += d.bytes;
        out.last_issued = issued;
    }
    out.dropped = sched.dropped();
    Ok(out)
}

/// Emits point `i`'s record; true when the point is valid.
fn emit(
    w: &mut WorkloadRun,
    p: &LoadParams,
    i: u32,
    outs: &[PointOut],
    end: &SpanEnd,
) -> Result<bool, PassError> {
    let requested: u64 = outs.iter().map(|o| o.requested).sum();
    let done: u64 = outs.iter().map(|o| o.done).sum();
    let dropped: u64 = outs.iter().map(|o| o.dropped).sum();
    let bytes: u64 = outs.iter().map(|o| o.bytes).sum();
    // The point lasts its time, or until its last request was issued when a backlog made
    // that later: the rate achieved counts the time issuing took. (Not until the last one
    // returned: that adds one request's service time, whatever the load.)
    let ran = outs
        .iter()
        .map(|o| {
            o.last_issued
                .saturating_duration_since(o.start)
                .as_secs_f64()
        })
        .fold(0.0, f64::max);
    let seconds = p.point_seconds.max(ran);
    let (mut latency, mut service) = (LatencyRecorder::new(), LatencyRecorder::new());
    for o in outs {
        latency.merge(&o.latency);
        service.merge(&o.service);
    }
    let want = requested as f64 / p.point_seconds;
    let achieved = done as f64 / seconds;
    let valid = achieved >= VALID_SHARE * want;
    let mut r = w.record("load", &end.started_at);
    r.scope = Scope::Single;
    r.threads = w.plan.threads;
    w.close_span(&mut r, end);
    r.bytes = bytes;
    r.throughput_kib_s = bytes as f64 / 1024.0 / seconds;
    r.latency = latency.summary();
    let g = &mut r.figures;
    g.mix = Some(p.mix.name.clone());
    g.load_point = Some(i);
    g.count = Some(done);
    g.requested_ops_s = Some(want);
    g.ops_per_s = Some(achieved);
    g.valid = Some(valid);
    g.service_p99_us = Some(service.summary().lat_p99_us);
    let mut notes = Vec::new();
    if !valid {
        notes.push(format!(
            "invalid: achieved {achieved:.0} of {want:.0} requests/s (below {:.0}%)",
            VALID_SHARE * 100.0
        ));
    }
    if dropped > 0 {
        notes.push(format!(
            "{dropped} requests not issued within twice the point's time"
        ));
    }
    g.note = (!notes.is_empty()).then(|| notes.join("; "));
    w.emit(&r)?;
    Ok(valid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::Mix;
    use crate::testing::LogFs;
    use std::sync::atomic::AtomicBool;

    /// A 100 ms stall at 1,000 requests/s holds up about 100 requests: counted from the
    /// schedule they are the slowest 10%, so p99 is tens of ms; counted from when each was
    /// issued only one request was slow, and p99 would hide the stall.
    #[test]
    fn a_stall_shows_in_every_request_it_held_up() {
        let fs = LogFs::default();
        let mix: Mix = serde_json::from_str(
            r#"{"name": "t", "about": "t", "files": 2,
            "file_sizes": [{"size": "4k", "weight": 1}], "op": [{"kind": "stat", "weight": 1}]}"#,
        )
        .unwrap();
        let mut wk = Worker::make(&fs, "d", &mix, 1, false).unwrap();
        fs.take();
        *fs.stall.lock().unwrap() = Some((100, Duration::from_millis(100)));
        let sched = Schedule::new(Instant::now(), 1000.0, 1.0, 0.5);
        let out = drive(&fs, &mix, &mut wk, sched, &AtomicBool::new(false)).unwrap();
        assert_eq!((out.requested, out.done, out.dropped), (1000, 1000, 0));
        let (due, issued) = (out.latency.summary(), out.service.summary());
        assert!(due.lat_p99_us > 50_000.0, "p99 from the schedule {due:?}");
        // About 100 requests held up by 50 ms on average: 5 ms a request over 1,000.
        assert!(due.lat_mean_us > 3_000.0, "mean from the schedule {due:?}");
        assert!(issued.lat_p99_us < 5_000.0, "p99 from issue {issued:?}");
        assert!(issued.lat_max_us >= 100_000.0, "{issued:?}");
    }
}
