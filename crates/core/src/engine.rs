//! The engine: runs a plan against targets and emits one record per measurement. It only
//! schedules: repetitions outermost, then the workload's units (the IOzone matrix's cells,
//! the load workload's points, or one whole test), then the targets in turn (each unit of a
//! repetition starting one target later than in the last repetition, and one later than
//! the unit before it), so a unit's samples on the targets are close in time, drift on a
//! noisy machine hits them alike, and no target is first more often than another. With `--reps auto`, a unit is sampled until `sampling` settles
//! it. What a unit does is its workload's (`workload::Runner`); records go to an
//! `Observer`. It knows nothing of output formats.

use crate::backend::names_tampering;
use crate::operation::Operation;
use crate::plan::{Plan, Workload};
use crate::ranks::{Ranks, Solo};
use crate::record::Record;
use crate::run::{Observer, RunSummary, Target};
use crate::sampling::{self, Held};
use crate::workload::iozone::matrix::Matrix;
use crate::workload::load::LoadRunner;
use crate::workload::whole::WholeTest;
use crate::workload::{End, Gather, Runner, WorkloadRun};
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Runs the whole plan. Returns early (with `interrupted`) when `cancel` is set.
pub fn run(
    plan: &Plan,
    targets: &[Target],
    run_id: &str,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
) -> io::Result<RunSummary> {
    run_ranked(plan, targets, run_id, cancel, observer, &Solo, &[])
}

/// `run` as one rank of a multi-client run: every measurement starts on all ranks
/// together, and `ranks` hands rank 0 everyone's records (see `ranks`). `earlier` are the
/// records of the units in `plan.done`, which `--reps auto` counts as samples taken.
pub fn run_ranked(
    plan: &Plan,
    targets: &[Target],
    run_id: &str,
    cancel: &AtomicBool,
    observer: &mut dyn Observer,
    ranks: &dyn Ranks,
    earlier: &[Record],
) -> io::Result<RunSummary> {
    let runner = runner(&plan.workload);
    let mut summary = RunSummary::default();
    let mut dead = vec![false; targets.len()];
    let shared = Shared {
        plan,
        run_id,
        cancel,
        ranks,
    };
    for (t, target) in targets.iter().enumerate() {
        let mut w = shared.on(target, 0, &mut *observer, &mut summary);
        match runner.preflight(&mut w)? {
            End::Done => {}
            End::TargetFailed(why) if names_tampering(&why) => {
                return Ok(stopped(summary, target, why))
            }
            End::TargetFailed(why) => {
                dead[t] = true;
                observer.warn(&why);
            }
            End::Stopped(why) => return Ok(stopped(summary, target, why)),
            End::Interrupted => return Ok(interrupted(summary)),
        }
    }
    let mut tally = plan.auto_reps.map(sampling::Tally::new);
    if let Some(tally) = &mut tally {
        if ranks.size() > 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "--reps auto is for one client: give a multi-client run --reps N",
            ));
        }
        for r in earlier {
            let t = targets.iter().position(|t| t.name == r.target);
            if let (Some(t), Some(unit)) = (t, runner.unit_of(plan, r)) {
                tally.add(t, unit, std::slice::from_ref(r));
            }
        }
    }
    let n = targets.len();
    for rep in 0..plan.reps {
        for (u, unit) in runner.units(plan).into_iter().enumerate() {
            if tally.as_ref().is_some_and(|t| t.is_settled(unit)) {
                continue;
            }
            let turn = first_in_turn(n, rep, u);
            let mut held = Held::new(&mut *observer, tally.is_some());
            for &t in &turn {
                let target = &targets[t];
                if dead[t] || plan.done.contains(&(rep, target.name.clone(), unit)) {
                    continue;
                }
                let started = Instant::now();
                let mut w = shared.on(target, rep, &mut held, &mut summary);
                let end = runner.run(&mut w, unit)?;
                if let Some(tally) = &mut tally {
                    tally.add(t, unit, held.since_last());
                    tally.add_time(unit, started.elapsed());
                }
                match end {
                    End::Done => {}
                    // Another user swapped the tool's directory: nothing more is touched.
                    End::TargetFailed(why) if names_tampering(&why) => {
                        held.release(None)?;
                        return Ok(stopped(summary, target, why));
                    }
                    End::TargetFailed(why) => {
                        dead[t] = true;
                        held.warn(&format!(
                            "{}: giving up on this target after an error: {why}",
                            target.name
                        ));
                    }
                    End::Stopped(why) => {
                        held.release(None)?;
                        return Ok(stopped(summary, target, why));
                    }
                    End::Interrupted => {
                        held.release(None)?;
                        return Ok(interrupted(summary));
                    }
                }
            }
            let stop = tally.as_mut().and_then(|tally| {
                let alive: Vec<usize> = (0..n).filter(|&t| !dead[t]).collect();
                tally.decide(unit, rep, plan.reps - 1, &alive)
            });
            held.release(stop)?;
        }
    }
    Ok(summary)
}

/// The order of the targets for the `u`th unit of repetition `rep`: it starts one target
/// later each repetition (A B, B A, A B, ...), so a drift that spans a unit's round falls
/// on every target alike, and one later each unit, so the first slot of a unit (which
/// follows another unit's work, and in an A/A check ran about 0.3% slower) and the first
/// repetition (on a cold cell) fall on every target in as many units.
fn first_in_turn(n: usize, rep: u32, u: usize) -> Vec<usize> {
    (0..n).map(|k| (k + rep as usize + u) % n).collect()
}

/// The unit of the plan a record belongs to (as `Plan::done` numbers units), if any.
pub fn unit_of(plan: &Plan, record: &Record) -> Option<usize> {
    runner(&plan.workload).unit_of(plan, record)
}

/// The runner of a plan's workload: the one place the engine knows which workloads exist.
fn runner(workload: &Workload) -> Box<dyn Runner> {
    match workload {
        Workload::Iozone => Box::new(Matrix),
        Workload::Metadata(_) | Workload::Smallfiles(_) | Workload::Stream(_) => {
            Box::new(WholeTest)
        }
        Workload::Load(_) => Box::new(LoadRunner::default()),
    }
}

/// What every unit of a run shares.
struct Shared<'r> {
    plan: &'r Plan,
    run_id: &'r str,
    cancel: &'r AtomicBool,
    ranks: &'r dyn Ranks,
}

impl<'r> Shared<'r> {
    /// The workload's view of one target in one repetition.
    fn on<'a>(
        &self,
        target: &'a Target,
        rep: u32,
        observer: &'a mut dyn Observer,
        summary: &'a mut RunSummary,
    ) -> WorkloadRun<'a>
    where
        'r: 'a,
    {
        WorkloadRun {
            plan: self.plan,
            run_id: self.run_id,
            target,
            rep,
            cancel: self.cancel,
            observer,
            summary,
            phase: Operation::Setup,
            phase_detail: None,
            ranks: self.ranks,
            gather: Gather::default(),
        }
    }
}

fn stopped(mut summary: RunSummary, target: &Target, why: String) -> RunSummary {
    summary.stopped = Some(format!("{}: {why}", target.name));
    summary
}

fn interrupted(mut summary: RunSummary) -> RunSummary {
    summary.interrupted = true;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Op;
    use crate::plan::Cell;
    use crate::record::Record;
    use crate::testing::LogFs;
    use crate::workdir::Workdir;
    use std::sync::Arc;

    /// Keeps what the engine hands out, in order.
    #[derive(Default)]
    struct Kept {
        records: Vec<Record>,
        warnings: Vec<String>,
    }

    impl Observer for Kept {
        fn record(&mut self, r: &Record) -> io::Result<()> {
            self.records.push(r.clone());
            Ok(())
        }
        fn warn(&mut self, message: &str) {
            self.warnings.push(message.to_string());
        }
    }

    fn target(name: &str) -> (Target, Arc<LogFs>) {
        let fs = Arc::new(LogFs::default());
        let workdir = Workdir::create(fs.as_ref(), name).unwrap();
        let t = Target {
            name: name.into(),
            backend: fs.clone(),
            workdir,
            servers: Default::default(),
            fuse: Default::default(),
            server_view: None,
            disks: Vec::new(),
            places: Vec::new(),
        };
        (t, fs)
    }

    fn cell(file_size: u64, record_size: u64) -> Cell {
        Cell {
            file_size,
            record_size,
        }
    }

    fn plan(reps: u32) -> Plan {
        Plan {
            ops: vec![Op::Write, Op::Read],
            cells: vec![cell(64 << 10, 4 << 10), cell(128 << 10, 64 << 10)],
            reps,
            ..Plan::default()
        }
    }

    fn order(kept: &Kept) -> Vec<(u32, String, u64, String)> {
        kept.records
            .iter()
            .map(|r| (r.rep, r.target.clone(), r.file_size, r.op.to_string()))
            .collect()
    }

    #[test]
    fn repetitions_outermost_then_cells_then_targets_in_turn_each_cell_one_later() {
        let (a, _) = target("a");
        let (b, _) = target("b");
        let mut kept = Kept::default();
        let s = run(&plan(2), &[a, b], "r", &AtomicBool::new(false), &mut kept).unwrap();
        assert!(s.all_ok() && s.records == 16, "{s:?}");
        let got = order(&kept);
        let mut want = Vec::new();
        let (ab, ba) = (["a", "b"], ["b", "a"]);
        for (rep, turns) in [(0, [ab, ba]), (1, [ba, ab])] {
            for (size, turn) in [64 << 10, 128 << 10].into_iter().zip(turns) {
                for t in turn {
                    for op in ["write", "read"] {
                        want.push((rep, t.to_string(), size, op.to_string()));
                    }
                }
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn every_target_is_first_as_often_over_the_units_even_with_odd_repetitions() {
        for n in 2..=3 {
            let mut first = vec![0; n];
            let mut cold = vec![0; n];
            for u in 0..6 {
                for rep in 0..7 {
                    let turn = first_in_turn(n, rep, u);
                    let mut sorted = turn.clone();
                    sorted.sort();
                    assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "each target once");
                    first[turn[0]] += 1;
                    if rep == 0 {
                        cold[turn[0]] += 1;
                    }
                }
            }
            assert!(
                first.iter().all(|&f| f == first[0]),
                "{n} targets: {first:?}"
            );
            assert!(cold.iter().all(|&f| f == cold[0]), "{n} targets: {cold:?}");
        }
    }

    #[test]
    fn units_already_done_are_skipped_and_cancel_stops_at_once() {
        let (a, fs) = target("a");
        let mut p = plan(1);
        p.done.insert((0, "a".into(), 0));
        let mut kept = Kept::default();
        run(&p, &[a], "r", &AtomicBool::new(false), &mut kept).unwrap();
        let sizes: Vec<u64> = kept.records.iter().map(|r| r.file_size).collect();
        assert_eq!(sizes, [128 << 10, 128 << 10], "only the cell not done");
        // The cell's file was written, read and removed in the working directory.
        let calls = fs.take();
        let file = "sharebench-a/f0";
        assert!(calls.contains(&format!("open {file}")), "{calls:?}");
        assert_eq!(calls.last(), Some(&format!("unlink {file}")), "{calls:?}");

        let (a, _) = target("a2");
        let mut kept = Kept::default();
        let s = run(&plan(3), &[a], "r", &AtomicBool::new(true), &mut kept).unwrap();
        assert!(s.interrupted && kept.records.is_empty(), "{s:?}");
    }

    /// A sample repeats the whole cell, a round at a time, from no file: each read reads a
    /// file just written, as IOzone's single pass does, never a file read many times over.
    #[test]
    fn a_sample_repeats_the_cell_in_rounds_each_on_a_new_file() {
        let (kept, fs) = one_cell_in_rounds(vec![Op::Write, Op::Read]);
        let passes: Vec<u32> = kept.records.iter().map(|r| r.passes.unwrap()).collect();
        assert_eq!(passes.len(), 2);
        assert!(passes[0] > 1 && passes[0] == passes[1], "{passes:?}");
        for r in &kept.records {
            assert_eq!(r.bytes, u64::from(r.passes.unwrap()) * (64 << 10), "{r:?}");
        }
        // Each round: the write removes and creates the file, the read opens it; the file
        // goes at the end of the cell.
        let round = ["unlink", "open", "open"];
        assert_eq!(file_calls(&fs), rounds_then_unlink(&round, passes[0]));
    }

    /// A round that starts with a read removes the file first: the read's file is then
    /// written anew (untimed), as in the first round.
    #[test]
    fn a_round_without_a_write_starts_from_no_file() {
        let (kept, fs) = one_cell_in_rounds(vec![Op::Read]);
        let passes = kept.records[0].passes.unwrap();
        assert!(passes > 1, "{passes}");
        // The first round finds no file; each later one removes the last round's.
        let mut want = rounds_then_unlink(&["unlink", "open", "open"], passes);
        want.remove(0);
        assert_eq!(file_calls(&fs), want);
    }

    /// In throughput mode a sample is rounds too: each starts the workers together, each
    /// worker's record sums its passes, and the aggregate's "parent sees" sums the rounds'
    /// spans, not the time between them.
    #[test]
    fn throughput_mode_samples_in_rounds_of_all_workers() {
        let (a, _fs) = target("a");
        let p = Plan {
            ops: vec![Op::Write, Op::Read],
            cells: vec![cell(64 << 10, 4 << 10)],
            reps: 1,
            threads: 2,
            throughput_mode: true,
            stonewall: false,
            min_sample_s: 0.002,
            ..Plan::default()
        };
        let mut kept = Kept::default();
        let s = run(&p, &[a], "r", &AtomicBool::new(false), &mut kept).unwrap();
        assert!(s.all_ok(), "{s:?}");
        assert_eq!(
            kept.records.len(),
            2 * 3,
            "two workers and the aggregate, per op"
        );
        let passes = kept.records[0].passes.unwrap();
        assert!(passes > 1, "{passes}");
        for r in &kept.records {
            assert_eq!(r.passes, Some(passes), "{r:?}");
        }
        for op in kept.records.chunks(3) {
            let (workers, agg) = (&op[..2], &op[2]);
            assert_eq!(agg.scope, crate::record::Scope::Aggregate);
            for w in workers {
                assert_eq!(w.bytes, u64::from(passes) * (64 << 10), "{w:?}");
                assert!(agg.seconds >= w.seconds, "{agg:?} {w:?}");
            }
            assert_eq!(agg.bytes, workers.iter().map(|w| w.bytes).sum::<u64>());
        }
    }

    const FILE: &str = "sharebench-a/f0";

    /// Runs `ops` on one 64 KiB cell of target a with 2 ms samples (rounds), one repetition.
    fn one_cell_in_rounds(ops: Vec<Op>) -> (Kept, Arc<LogFs>) {
        let (a, fs) = target("a");
        let p = Plan {
            ops,
            cells: vec![cell(64 << 10, 4 << 10)],
            reps: 1,
            min_sample_s: 0.002,
            ..Plan::default()
        };
        fs.take();
        let mut kept = Kept::default();
        let s = run(&p, &[a], "r", &AtomicBool::new(false), &mut kept).unwrap();
        assert!(s.all_ok(), "{s:?}");
        (kept, fs)
    }

    /// The opens and removals of target a's file, in order.
    fn file_calls(fs: &LogFs) -> Vec<String> {
        fs.take()
            .into_iter()
            .filter(|c| c.ends_with(FILE) && (c.starts_with("open") || c.starts_with("unlink")))
            .collect()
    }

    /// `round`'s calls `n` times over, then the removal at the end of the cell.
    fn rounds_then_unlink(round: &[&str], n: u32) -> Vec<String> {
        let mut calls: Vec<String> = (0..n)
            .flat_map(|_| round.iter().map(|c| format!("{c} {FILE}")))
            .collect();
        calls.push(format!("unlink {FILE}"));
        calls
    }

    #[test]
    fn auto_repetitions_stop_each_cell_on_its_own_and_say_why() {
        use crate::plan::AutoReps;
        use crate::record::RepsStop;
        let (a, _) = target("a");
        let (b, _) = target("b");
        let mut p = plan(9);
        // Any interval is narrow enough: six samples, the least, settle every cell.
        p.auto_reps = Some(AutoReps {
            min: 6,
            ci_pct: 1e9,
            max_unit_s: 1e9,
        });
        let mut kept = Kept::default();
        let s = run(&p, &[a, b], "r", &AtomicBool::new(false), &mut kept).unwrap();
        assert!(s.all_ok(), "{s:?}");
        let reps: Vec<u32> = kept.records.iter().map(|r| r.rep).collect();
        assert_eq!(reps.iter().max(), Some(&5), "six samples, not nine");
        assert_eq!(kept.records.len(), 6 * 2 * 2 * 2);
        for r in &kept.records {
            let want = (r.rep == 5).then_some(RepsStop::Converged);
            assert_eq!(r.reps_stop, want, "{} {} rep {}", r.target, r.op, r.rep);
        }

        // Asking for more than the samples can give: the count cap, after the resumed
        // run's earlier records count as samples taken.
        let (a, _) = target("a3");
        let mut p = plan(7);
        p.auto_reps = Some(AutoReps {
            min: 6,
            ci_pct: 1e-9,
            max_unit_s: 1e9,
        });
        let earlier: Vec<Record> = kept
            .records
            .iter()
            .filter(|r| r.target == "a" && r.rep < 2 && r.file_size == 64 << 10)
            .map(|r| Record {
                target: "a3".into(),
                reps_stop: None,
                ..r.clone()
            })
            .collect();
        for r in &earlier {
            p.done.insert((r.rep, "a3".into(), 0));
        }
        let mut kept = Kept::default();
        let s = run_ranked(
            &p,
            &[a],
            "r",
            &AtomicBool::new(false),
            &mut kept,
            &Solo,
            &earlier,
        );
        assert!(s.unwrap().all_ok());
        let first: Vec<u32> = kept
            .records
            .iter()
            .filter(|r| r.file_size == 64 << 10)
            .map(|r| r.rep)
            .collect();
        assert_eq!(first, [2, 2, 3, 3, 4, 4, 5, 5, 6, 6], "resumed at rep 2");
        let capped = kept
            .records
            .iter()
            .filter(|r| r.reps_stop == Some(RepsStop::CountCap));
        assert_eq!(capped.count(), 4, "the last samples of both cells");
    }

    /// A load point that fails is recorded as `load`, its error naming the point, and the
    /// curve ends there with its files removed.
    #[test]
    fn a_failed_load_point_is_recorded_as_load_naming_the_point() {
        let (a, fs) = target("a");
        let mix = serde_json::from_str(
            r#"{"name": "t", "about": "t", "files": 2,
            "file_sizes": [{"size": "4k", "weight": 1}], "op": [{"kind": "stat", "weight": 1}]}"#,
        )
        .unwrap();
        let p = Plan {
            workload: Workload::Load(crate::plan::LoadParams {
                mix,
                rate_start: 1000.0,
                rate_step: 0.0,
                points: 3,
                point_seconds: 0.2,
                seed: 1,
            }),
            reps: 1,
            ..Plan::default()
        };
        let base = a.workdir.file("load-r0-c0");
        *fs.fail_on.lock().unwrap() = Some(format!("stat {base}/w0l0/"));
        let mut kept = Kept::default();
        let s = run(&p, &[a], "r", &AtomicBool::new(false), &mut kept).unwrap();
        assert!(!s.all_ok(), "{s:?}");
        let failed: Vec<&Record> = kept
            .records
            .iter()
            .filter(|r| r.status != crate::record::Status::Ok)
            .collect();
        assert_eq!(failed.len(), 1, "{:?}", kept.records);
        assert_eq!(failed[0].op, Operation::Load);
        let error = failed[0].error.as_deref().unwrap_or_default();
        assert!(
            error.starts_with("load point 1 (1000 requests/s): "),
            "{error}"
        );
        let left = fs.nodes.lock().unwrap();
        assert!(!left.keys().any(|k| k.starts_with(&base)), "{left:?}");
    }
}
