//! `--reps auto`: when to stop sampling a unit (a cell of the matrix, or a whole test).
//! After every round of a unit over the targets, the unit is settled when its figures are
//! known to the width asked for, or when it has used its samples or its time. Known means:
//! the 95% interval of each operation's median is within the width on every target, or,
//! with several targets, the 95% interval of the median ratio of each target to the first
//! (the first the run takes: the first in its `target_order`),
//! taken round by round, is. When the machine's speed drifts it moves every target alike,
//! and the ratio settles long before the medians do; when the targets' noise is their own
//! (the lab's servers), the medians settle first (docs/methods/statistics.md). The records of the round that
//! settles a unit say why (`Record::reps_stop`), so they are held until then. Not: the order
//! of the rounds (see `engine`).

use crate::median;
use crate::plan::AutoReps;
use crate::record::{Record, RepsStop, Scope, Status};
use crate::run::Observer;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::time::Duration;

/// What the rule has seen: every target's figures of every unit, by what they measure.
pub struct Tally {
    rule: AutoReps,
    /// (target, unit) -> measure (`measure_of`) -> repetition -> figure.
    figures: HashMap<(usize, usize), BTreeMap<String, BTreeMap<u32, f64>>>,
    /// unit -> time its samples took, over all targets.
    spent: HashMap<usize, Duration>,
    settled: HashSet<usize>,
}

impl Tally {
    pub fn new(rule: AutoReps) -> Tally {
        Tally {
            rule,
            figures: HashMap::new(),
            spent: HashMap::new(),
            settled: HashSet::new(),
        }
    }

    /// Counts the figures of a sample of `unit` on target `t` (records of an earlier attempt
    /// too, when a run resumes).
    pub fn add(&mut self, t: usize, unit: usize, records: &[Record]) {
        // Keyed by repetition: a round's figures on two targets are paired by it.
        let by_op = self.figures.entry((t, unit)).or_default();
        for r in records.iter().filter(|r| counts(r)) {
            by_op
                .entry(measure_of(r))
                .or_default()
                .insert(r.rep, r.figure());
        }
    }

    pub fn add_time(&mut self, unit: usize, took: Duration) {
        *self.spent.entry(unit).or_default() += took;
    }

    pub fn is_settled(&self, unit: usize) -> bool {
        self.settled.contains(&unit)
    }

    /// After repetition `rep` (0-based) of `unit` on the targets `alive`: why to take no more
    /// samples, if so. `last_rep` is the last repetition the plan allows.
    pub fn decide(
        &mut self,
        unit: usize,
        rep: u32,
        last_rep: u32,
        alive: &[usize],
    ) -> Option<RepsStop> {
        let known = alive.iter().all(|&t| self.known_well(t, unit))
            || match alive {
                [first, rest @ ..] if !rest.is_empty() => {
                    rest.iter().all(|&t| self.ratio_known_well(t, *first, unit))
                }
                _ => false,
            };
        let stop = if known {
            Some(RepsStop::Converged)
        } else if rep >= last_rep {
            Some(RepsStop::CountCap)
        } else if self
            .spent
            .get(&unit)
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            >= self.rule.max_unit_s * alive.len().max(1) as f64
        {
            Some(RepsStop::TimeCap)
        } else {
            None
        };
        if stop.is_some() {
            self.settled.insert(unit);
        }
        stop
    }

    /// Every operation of the unit on target `t` has at least `min` samples and an interval
    /// of its median within the width. A target with no figure for the unit (nothing
    /// measured, e.g. a cell every operation skips) has nothing left to learn.
    fn known_well(&self, t: usize, unit: usize) -> bool {
        let Some(by_op) = self.figures.get(&(t, unit)) else {
            return true;
        };
        by_op.values().all(|v| {
            let v: Vec<f64> = v.values().copied().collect();
            self.narrow(&v)
        })
    }

    /// Every measure of the unit has, on targets `t` and `base`, at least `min` rounds
    /// with both, and the interval of the median ratio t/base of those rounds is within the
    /// width. A target with no figures has nothing left to learn, as above.
    fn ratio_known_well(&self, t: usize, base: usize, unit: usize) -> bool {
        let (Some(a), Some(b)) = (
            self.figures.get(&(t, unit)),
            self.figures.get(&(base, unit)),
        ) else {
            return true;
        };
        a.iter().all(|(measure, by_rep)| {
            let Some(base_by_rep) = b.get(measure) else {
                return true;
            };
            let ratios: Vec<f64> = by_rep
                .iter()
                .filter_map(|(rep, x)| Some(x / base_by_rep.get(rep)?))
                .filter(|r| r.is_finite())
                .collect();
            self.narrow(&ratios)
        })
    }

    fn narrow(&self, values: &[f64]) -> bool {
        values.len() >= self.rule.min as usize
            && median::ci_half_width_pct(values).is_some_and(|w| w <= self.rule.ci_pct)
    }
}

/// What the units `--reps auto` stopped at a cap reached: over those units, the median and
/// the largest of each unit's widest interval and of the samples its most spread measure
/// would need for `width_pct` (`median::samples_for_width`). Not: why they stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CappedReach {
    /// Half-width of the 95% interval of the median, percent: (median, largest).
    pub half_width_pct: (f64, f64),
    /// Samples a unit would take: (median, largest).
    pub samples: (f64, f64),
}

/// A unit of `--reps auto` as its records show it: the file and record size, or the test.
pub fn unit_key(r: &Record) -> (u64, u64, Option<String>) {
    (r.file_size, r.record_size, r.figures.test.clone())
}

/// `CappedReach` of the records of one target; `None` when no capped unit has six samples,
/// the fewest with an interval.
pub fn capped_reach(records: &[&Record], width_pct: f64) -> Option<CappedReach> {
    let capped: HashSet<_> = records
        .iter()
        .filter(|r| matches!(r.reps_stop, Some(RepsStop::CountCap | RepsStop::TimeCap)))
        .map(|r| unit_key(r))
        .collect();
    let mut figures: BTreeMap<_, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for r in records.iter().filter(|r| counts(r)) {
        let unit = unit_key(r);
        if capped.contains(&unit) {
            let by_measure = figures.entry(unit).or_default();
            by_measure
                .entry(measure_of(r))
                .or_default()
                .push(r.figure());
        }
    }
    let reached: Vec<(f64, f64)> = figures
        .values()
        .filter_map(|by_measure| {
            by_measure
                .values()
                .filter_map(|v| {
                    let need = median::samples_for_width(v, width_pct)?;
                    Some((median::ci_half_width_pct(v)?, need))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .collect();
    let spread = |pick: fn(&(f64, f64)) -> f64| {
        let v: Vec<f64> = reached.iter().map(pick).collect();
        (
            median::median(&v),
            v.iter().copied().fold(f64::MIN, f64::max),
        )
    };
    (!reached.is_empty()).then(|| CappedReach {
        half_width_pct: spread(|x| x.0),
        samples: spread(|x| x.1),
    })
}

/// Records that count: successful, and one per sample (a throughput run's aggregate, not
/// its workers).
fn counts(r: &Record) -> bool {
    r.status == Status::Ok && r.scope != Scope::Worker
}

/// What a record measures within its unit: the operation, and for the whole-test workloads
/// the test, file size, file count and stream count that tell its measurements apart.
fn measure_of(r: &Record) -> String {
    let f = &r.figures;
    format!(
        "{} {:?} {} {:?} {:?}",
        r.op, f.test, r.file_size, f.files, f.streams
    )
}

/// An observer that holds the records of a unit's round until the rule has decided, and
/// passes progress and warnings on at once. With `hold` false it holds nothing.
pub struct Held<'a> {
    inner: &'a mut dyn Observer,
    hold: bool,
    records: Vec<Record>,
    /// Where the current target's records begin in `records`.
    mark: usize,
}

impl<'a> Held<'a> {
    pub fn new(inner: &'a mut dyn Observer, hold: bool) -> Held<'a> {
        Held {
            inner,
            hold,
            records: Vec::new(),
            mark: 0,
        }
    }

    /// The records held since the last call (one target's sample of the unit).
    pub fn since_last(&mut self) -> &[Record] {
        let from = self.mark;
        self.mark = self.records.len();
        &self.records[from..]
    }

    /// Passes the held records on, those that count marked with why sampling stopped.
    pub fn release(&mut self, stop: Option<RepsStop>) -> io::Result<()> {
        self.mark = 0;
        for mut r in std::mem::take(&mut self.records) {
            if counts(&r) {
                r.reps_stop = stop;
            }
            self.inner.record(&r)?;
        }
        Ok(())
    }
}

impl Observer for Held<'_> {
    fn record(&mut self, record: &Record) -> io::Result<()> {
        if self.hold {
            self.records.push(record.clone());
            Ok(())
        } else {
            self.inner.record(record)
        }
    }
    fn progress(&mut self, planned_bytes: u64, what: &str) {
        self.inner.progress(planned_bytes, what);
    }
    fn warn(&mut self, message: &str) {
        self.inner.warn(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(rep: u32, op: &str, kib_s: f64) -> Record {
        Record {
            rep,
            op: op.parse().unwrap(),
            throughput_kib_s: kib_s,
            ..Record::default()
        }
    }

    fn rule() -> AutoReps {
        AutoReps {
            min: 6,
            ci_pct: 3.0,
            max_unit_s: 10.0,
        }
    }

    #[test]
    fn settles_when_every_target_and_operation_is_known_well() {
        let mut t = Tally::new(rule());
        for rep in 0..6u32 {
            // Target 0 is steady; target 1's read swings by 10% against it.
            t.add(
                0,
                7,
                &[
                    rec(rep, "write", 100.0 + rep as f64 * 0.1),
                    rec(rep, "read", 200.0),
                ],
            );
            let swing = if rep.is_multiple_of(2) { 110.0 } else { 90.0 };
            t.add(1, 7, &[rec(rep, "write", 100.0), rec(rep, "read", swing)]);
            assert_eq!(t.decide(7, rep, 29, &[0, 1]), None, "rep {rep}");
        }
        // With target 1 given up, target 0 alone decides.
        assert_eq!(t.decide(7, 6, 29, &[0]), Some(RepsStop::Converged));
        assert!(t.is_settled(7) && !t.is_settled(8));
    }

    #[test]
    fn targets_that_drift_together_settle_by_their_ratio() {
        let mut t = Tally::new(rule());
        for rep in 0..6u32 {
            // The machine halves its speed every other round; B is always 20% faster.
            let speed = if rep.is_multiple_of(2) { 100.0 } else { 50.0 };
            t.add(0, 1, &[rec(rep, "read", speed)]);
            t.add(1, 1, &[rec(rep, "read", speed * 1.2)]);
        }
        assert_eq!(t.decide(1, 5, 29, &[0, 1]), Some(RepsStop::Converged));
        // Alone, the same drift is far from ±3%.
        let mut t = Tally::new(rule());
        for rep in 0..6u32 {
            t.add(
                0,
                1,
                &[rec(
                    rep,
                    "read",
                    if rep.is_multiple_of(2) { 100.0 } else { 50.0 },
                )],
            );
        }
        assert_eq!(t.decide(1, 5, 29, &[0]), None);
    }

    #[test]
    fn caps_stop_a_unit_that_stays_noisy() {
        let mut t = Tally::new(rule());
        let noisy = |rep: u32| {
            rec(
                rep,
                "write",
                if rep.is_multiple_of(2) { 150.0 } else { 50.0 },
            )
        };
        for rep in 0..3 {
            t.add(0, 1, &[noisy(rep)]);
        }
        assert_eq!(t.decide(1, 2, 2, &[0]), Some(RepsStop::CountCap));
        let mut t = Tally::new(rule());
        t.add(0, 1, &[noisy(0)]);
        t.add(1, 1, &[noisy(1)]);
        t.add_time(1, Duration::from_secs(9));
        assert_eq!(
            t.decide(1, 0, 29, &[0, 1]),
            None,
            "10 s a target, two targets"
        );
        t.add_time(1, Duration::from_secs(11));
        assert_eq!(t.decide(1, 0, 29, &[0, 1]), Some(RepsStop::TimeCap));
    }

    #[test]
    fn held_records_are_released_in_order_and_marked() {
        #[derive(Default)]
        struct Kept(Vec<Record>);
        impl Observer for Kept {
            fn record(&mut self, r: &Record) -> io::Result<()> {
                self.0.push(r.clone());
                Ok(())
            }
        }
        let mut kept = Kept::default();
        let mut held = Held::new(&mut kept, true);
        held.record(&rec(0, "write", 1.0)).unwrap();
        assert_eq!(held.since_last().len(), 1);
        let mut failed = rec(0, "read", 0.0);
        failed.status = Status::Failed;
        held.record(&failed).unwrap();
        assert_eq!(held.since_last()[0].op.name(), "read");
        held.release(Some(RepsStop::TimeCap)).unwrap();
        let stops: Vec<_> = kept.0.iter().map(|r| (r.op.name(), r.reps_stop)).collect();
        assert_eq!(stops, [("write", Some(RepsStop::TimeCap)), ("read", None)]);
    }
}
