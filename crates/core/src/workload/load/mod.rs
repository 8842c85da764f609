//! The load workload: a mix of operations (`crate::mix`) issued open-loop by `--threads`
//! workers at stepped request rates, the load points. Each worker keeps up to `--iodepth`
//! requests in flight, one per lane (`lane`), all on the worker's one schedule
//! (`schedule`). Each point is a unit of the engine,
//! so the targets take turns point by point and their curves are measured side by side in
//! time; it runs every worker on its own schedule for the point's time and emits one
//! record: requested and achieved rate, latency counted from the schedule, throughput,
//! client and server CPU, and whether the point is valid (achieved at least 99% of
//! requested, as SPECstorage marks points). A target's curve ends at its first invalid
//! point: past it the curve measures only the overload. Under MPI every rank is a client
//! with its share of the rate, and every point runs (stopping early would need the ranks
//! to agree on where).

pub mod lane;
pub mod schedule;

use super::whole::{conclude, WholeTest};
use super::{check, remove_tree, End, PassError, Runner, SpanEnd, WorkloadRun};
use crate::latency::LatencyRecorder;
use crate::operation::Operation;
use crate::plan::{LoadParams, Plan, Workload};
use crate::record::{Record, Scope};
use lane::Lane;
use schedule::Schedule;
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The share of the requested rate a valid point achieves.
pub const VALID_SHARE: f64 = 0.99;

/// How far ahead of the workers' first request the schedule starts: time to start them.
const LEAD: Duration = Duration::from_millis(20);

/// What every worker did at one load point: the requests of their schedules, and what
/// each lane did with those it took.
struct PointOut {
    requested: u64,
    dropped: u64,
    lanes: Vec<LaneOut>,
}

/// What one lane did at one load point.
struct LaneOut {
    done: u64,
    bytes: u64,
    /// From when each request was due, and from when it was issued.
    latency: LatencyRecorder,
    service: LatencyRecorder,
    /// When the schedule began, and when the lane issued its last request.
    start: Instant,
    last_issued: Instant,
}

/// The runner of the load workload; it keeps each target's lanes between its points.
#[derive(Default)]
pub struct LoadRunner {
    curves: Mutex<BTreeMap<(String, u32), Curve>>,
}

/// A target's curve in one repetition: its workers' lanes (each worker's `--iodepth` lanes
/// one after the other) and their directory while it runs.
enum Curve {
    Running { base: String, lanes: Vec<Lane> },
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

    /// Runs load point `unit` on this target, setting its lanes up first when this is
    /// its first point of the repetition, and removing them after its last.
    fn run(&self, w: &mut WorkloadRun, unit: usize) -> io::Result<End> {
        let Workload::Load(p) = &w.plan.workload else {
            return Ok(End::Done);
        };
        let mut curves = self.curves.lock().unwrap_or_else(|e| e.into_inner());
        let key = (w.target.name.clone(), w.rep);
        let curve = curves.entry(key).or_insert_with(|| Curve::Running {
            base: String::new(),
            lanes: Vec::new(),
        });
        let Curve::Running { base, lanes } = curve else {
            return Ok(End::Done);
        };
        let ran = (|| {
            if lanes.is_empty() {
                *base = w
                    .target
                    .workdir
                    .file(&format!("load-r{}-c{}", w.rep, w.ranks.rank()));
                *lanes = make_lanes(w, p, base)?;
            }
            run_point(w, p, unit as u32, lanes)
        })();
        let last = match &ran {
            Ok(valid) => unit + 1 == p.points as usize || !valid && w.ranks.size() == 1,
            Err(_) => true,
        };
        if last {
            // A failed point keeps its phase for the record: a clean-up error counts only
            // after a point that ran.
            if ran.is_ok() {
                w.phase = Operation::Cleanup;
                w.phase_detail = None;
            }
            let mut closed = lanes.iter_mut().try_for_each(|l| l.close());
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

/// Makes every lane's directory under `base` (`w{worker}l{lane}`) and its files (not
/// timed): the lanes of worker 0, then those of worker 1, and so on, each acting as the
/// caller it is when driven (`caller::acting_as`), so a client that keeps a connection per
/// caller holds one per lane, not one per open file; then tells the target how many lanes
/// will call it at once (`Backend::expect_callers`).
fn make_lanes(w: &mut WorkloadRun, p: &LoadParams, base: &str) -> Result<Vec<Lane>, PassError> {
    w.phase = Operation::Setup;
    w.phase_detail = None;
    w.backend().mkdir(base)?;
    let rank = u64::from(w.ranks.rank());
    let mut lanes = Vec::new();
    for i in 0..w.plan.threads {
        for j in 0..w.plan.iodepth {
            check(w.cancel)?;
            let n = u64::from(i) * u64::from(w.plan.iodepth) + u64::from(j);
            let seed = p.seed ^ (u64::from(w.rep) << 40) ^ (rank << 20) ^ n;
            let dir = format!("{base}/w{i}l{j}");
            let sync = w.plan.timing.sync;
            // Made as its lane, whose thread changes each point: one caller throughout.
            let lane =
                crate::caller::acting_as(n, || Lane::make(w.backend(), &dir, &p.mix, seed, sync))?;
            lanes.push(lane);
        }
    }
    w.backend().expect_callers(lanes.len())?;
    Ok(lanes)
}

/// Runs point `i` and emits its record; true when the point is valid.
fn run_point(
    w: &mut WorkloadRun,
    p: &LoadParams,
    i: u32,
    lanes: &mut [Lane],
) -> Result<bool, PassError> {
    check(w.cancel)?;
    let rate = p.rate(i);
    w.phase = Operation::Load;
    w.phase_detail = Some(format!("load point {} ({rate:.0} requests/s)", i + 1));
    let per_worker = f64::from(w.plan.threads * w.ranks.size());
    let (out, end) = point(w, lanes, p, rate / per_worker)?;
    let valid = emit(w, p, i, &out, &end)?;
    w.progress(
        1,
        &format!("point {} of {} at {rate:.0}/s", i + 1, p.points),
    );
    Ok(valid)
}

/// Runs one load point on every worker at once, each at `rate` requests/s shared by its
/// lanes.
fn point(
    w: &mut WorkloadRun,
    lanes: &mut [Lane],
    p: &LoadParams,
    rate: f64,
) -> Result<(PointOut, SpanEnd), PassError> {
    w.start_together()?;
    let (b, cancel, mix) = (w.backend(), w.cancel, &p.mix);
    let depth = w.plan.iodepth.max(1) as usize;
    let span = w.span();
    let t0 = Instant::now() + LEAD;
    let schedules: Vec<Schedule> = lanes
        .chunks_mut(depth)
        .map(|worker| Schedule::new(t0, rate, p.point_seconds, worker[0].fraction()))
        .collect();
    crate::thread_room::check(lanes.len()).map_err(|e| PassError::Io(std::io::Error::other(e)))?;
    let results: Vec<Result<LaneOut, PassError>> = std::thread::scope(|s| {
        let handles: Vec<_> = lanes
            .iter_mut()
            .enumerate()
            .map(|(n, lane)| {
                let sched = &schedules[n / depth];
                s.spawn(move || {
                    crate::caller::acting_as(n as u64, || drive(b, mix, lane, sched, cancel))
                })
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
    let out = PointOut {
        requested: schedules.iter().map(Schedule::count).sum(),
        dropped: schedules.iter().map(Schedule::dropped).sum(),
        lanes: results.into_iter().collect::<Result<Vec<_>, _>>()?,
    };
    Ok((out, end))
}

/// One lane's share of its worker's requests at one point: it takes the next one when it
/// is free, and issues it when due (at once when it is overdue).
fn drive(
    b: &dyn crate::backend::Backend,
    mix: &crate::mix::Mix,
    lane: &mut Lane,
    sched: &Schedule,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<LaneOut, PassError> {
    schedule::precise_timers();
    let mut out = LaneOut {
        done: 0,
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
        let op = lane.pick(mix);
        let issued = Instant::now();
        let d = lane.issue(b, mix, op)?;
        let finished = Instant::now();
        out.latency.record_ns((finished - due).as_nanos() as u64);
        out.service.record_ns((finished - issued).as_nanos() as u64);
        out.done += 1;
        out.bytes += d.bytes;
        out.last_issued = issued;
    }
    Ok(out)
}

/// Emits point `i`'s record; true when the point is valid.
fn emit(
    w: &mut WorkloadRun,
    p: &LoadParams,
    i: u32,
    out: &PointOut,
    end: &SpanEnd,
) -> Result<bool, PassError> {
    let (requested, dropped, outs) = (out.requested, out.dropped, &out.lanes);
    let done: u64 = outs.iter().map(|o| o.done).sum();
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
    let mut r = w.record(Operation::Load, &end.started_at);
    r.scope = Scope::Single;
    r.threads = w.plan.threads;
    r.iodepth = w.plan.iodepth;
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

    fn stat_mix() -> Mix {
        serde_json::from_str(
            r#"{"name": "t", "about": "t", "files": 2,
            "file_sizes": [{"size": "4k", "weight": 1}], "op": [{"kind": "stat", "weight": 1}]}"#,
        )
        .unwrap()
    }

    /// Runs one second at 1,000 requests/s on `lanes` lanes sharing one schedule, the
    /// 100th call of the mock pausing 100 ms: (lane outputs, dropped).
    fn one_stalled_second(lanes: usize) -> (Vec<LaneOut>, u64) {
        let (fs, mix) = (LogFs::default(), stat_mix());
        let mut lanes: Vec<Lane> = (0..lanes)
            .map(|i| Lane::make(&fs, &format!("d{i}"), &mix, i as u64, false).unwrap())
            .collect();
        fs.take();
        *fs.stall.lock().unwrap() = Some((100, Duration::from_millis(100)));
        let sched = Schedule::new(Instant::now(), 1000.0, 1.0, 0.5);
        let cancel = AtomicBool::new(false);
        let outs = std::thread::scope(|s| {
            let hs: Vec<_> = lanes
                .iter_mut()
                .map(|l| s.spawn(|| drive(&fs, &mix, l, &sched, &cancel).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        (outs, sched.dropped())
    }

    /// A 100 ms stall at 1,000 requests/s holds up about 100 requests: counted from the
    /// schedule they are the slowest 10%, so p99 is tens of ms; counted from when each was
    /// issued only one request was slow, and p99 would hide the stall.
    #[test]
    fn a_stall_shows_in_every_request_it_held_up() {
        let (outs, dropped) = one_stalled_second(1);
        let out = &outs[0];
        assert_eq!((out.done, dropped), (1000, 0));
        let (due, issued) = (out.latency.summary(), out.service.summary());
        assert!(due.lat_p99_us > 50_000.0, "p99 from the schedule {due:?}");
        // About 100 requests held up by 50 ms on average: 5 ms a request over 1,000.
        assert!(due.lat_mean_us > 3_000.0, "mean from the schedule {due:?}");
        // Under 20 ms, not the sub-millisecond it is when the machine is quiet: unit tests
        // share two cores, and a stall counted from the schedule puts p99 near 90 ms.
        assert!(issued.lat_p99_us < 20_000.0, "p99 from issue {issued:?}");
        assert!(issued.lat_max_us >= 100_000.0, "{issued:?}");
    }

    /// With two lanes (`--iodepth 2`) the requests after a slow one are issued on schedule
    /// while it is outstanding: only the slow one is late.
    #[test]
    fn with_two_lanes_requests_go_out_on_schedule_while_one_is_outstanding() {
        let (outs, dropped) = one_stalled_second(2);
        assert_eq!(
            (outs.iter().map(|o| o.done).sum::<u64>(), dropped),
            (1000, 0)
        );
        let mut due = LatencyRecorder::new();
        outs.iter().for_each(|o| due.merge(&o.latency));
        let due = due.summary();
        assert!(due.lat_max_us >= 100_000.0, "the slow request {due:?}");
        // One lane alone would make the ~100 requests due in the stall late by up to 100
        // ms (p99 near 90 ms); 20 ms leaves room for two busy cores (5.6 ms seen in CI).
        assert!(due.lat_p99_us < 20_000.0, "p99 from the schedule {due:?}");
        // Both lanes took requests: the second one went on alone through the pause.
        assert!(
            outs.iter().all(|o| o.done >= 100),
            "{:?}",
            outs.iter().map(|o| o.done).collect::<Vec<_>>()
        );
    }
}
