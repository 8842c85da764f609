//! Latency tails, operations per second and consistency of the matrix cells: what a
//! reader asks once "which is faster" is answered. How long do the slow requests take
//! (per cell, the medians over repetitions of p50 ... p99.99 and max; per target, its p99
//! against the baseline's, paired by repetition as throughput is), how many small
//! requests a second does a target serve, and how steady is it (the run-to-run CV of
//! throughput, the within-run jitter p99/p50, and for a target of several runs the spread
//! of its cell medians across them). Not: rendering (see `html`, `svg`) or
//! throughput comparisons (see `compare`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{Consistency, RunSpread, Tail, PERCENTILES};

use crate::model::{
    Analysis, CellKey, CellStats, Comparison, Finding, OpData, Overall, Topic, Verdict,
};
use crate::{compare, findings, format, stats};
use sharebench_core::operation::Operation;
use std::collections::{BTreeMap, BTreeSet};

/// Records up to this size get their operations per second shown beside MB/s: below it
/// a share's limit is the requests it serves, not the bytes.
pub const IOPS_MAX_RECORD: u64 = 64 * 1024;

/// Operations per second of a cell moving `kib_s` in records of `record_size` bytes.
pub fn iops(kib_s: f64, record_size: u64) -> f64 {
    kib_s * 1024.0 / record_size.max(1) as f64
}

/// The p99 of every cell that has one, as a cell of its own (one value per repetition,
/// same run): what `compare::compare_cells` compares.
pub fn p99_cells(cells: &BTreeMap<CellKey, CellStats>) -> BTreeMap<CellKey, CellStats> {
    cells
        .iter()
        .filter_map(|(k, c)| {
            let t = c.tail.as_ref()?;
            let (reps, values) = t.p99_by_rep.iter().copied().unzip();
            Some((*k, CellStats::of_values(values, reps, c.run_id.clone())))
        })
        .collect()
}

fn median_and_worst(v: &[(CellKey, f64)]) -> Option<(f64, f64, CellKey)> {
    let (k, worst) = v.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let values: Vec<f64> = v.iter().map(|x| x.1).collect();
    Some((stats::median(&values), worst, k))
}

/// Consistency of every label on every operation, labels in their order.
pub fn consistency(ops: &[OpData], labels: &[String]) -> Vec<Consistency> {
    let mut out = Vec::new();
    for op in ops {
        for label in labels {
            let Some(cells) = op.cells.get(label) else {
                continue;
            };
            let cv: Vec<(CellKey, f64)> = cells
                .iter()
                .filter_map(|(k, c)| Some((*k, c.cv?)))
                .collect();
            let jitter: Vec<(CellKey, f64)> = cells
                .iter()
                .filter_map(|(k, c)| Some((*k, c.tail.as_ref()?.jitter)))
                .filter(|(_, j)| j.is_finite())
                .collect();
            out.push(Consistency {
                op: op.op,
                label: label.clone(),
                cells: cells.len(),
                cv: median_and_worst(&cv),
                jitter: median_and_worst(&jitter),
                across_runs: median_and_worst(&across_runs(cells)),
            });
        }
    }
    out
}

/// Per cell with medians of at least two runs, the CV of those medians.
fn across_runs(cells: &BTreeMap<CellKey, CellStats>) -> Vec<(CellKey, f64)> {
    cells
        .iter()
        .filter_map(|(k, c)| {
            let medians: Vec<f64> = c.by_run.values().copied().collect();
            Some((*k, stats::cv_pct(&medians)?))
        })
        .collect()
}

/// Per label whose cells have medians of several runs, how far they move from run to run,
/// over every operation.
pub fn run_spread(ops: &[OpData], labels: &[String]) -> Vec<RunSpread> {
    labels
        .iter()
        .filter_map(|label| {
            let mut runs = BTreeSet::new();
            let mut cvs: Vec<(Operation, CellKey, f64)> = Vec::new();
            for op in ops {
                let Some(cells) = op.cells.get(label) else {
                    continue;
                };
                runs.extend(cells.values().flat_map(|c| c.by_run.keys()));
                cvs.extend(across_runs(cells).into_iter().map(|(k, v)| (op.op, k, v)));
            }
            let (op, cell, worst_cv) = cvs.iter().copied().max_by(|a, b| a.2.total_cmp(&b.2))?;
            let values: Vec<f64> = cvs.iter().map(|x| x.2).collect();
            Some(RunSpread {
                label: label.clone(),
                runs: runs.len(),
                cells: cvs.len(),
                median_cv: stats::median(&values),
                worst_cv,
                worst: (op, cell),
            })
        })
        .collect()
}

/// "Across 5 runs of tmpfs, a cell's median varied by 3.1% ...": one line of `spread`.
pub fn run_spread_line(spread: &RunSpread) -> String {
    let (op, k) = spread.worst;
    format!(
        "Across {} runs of {}, a cell's median varied by {:.1}% (CV of the runs' medians, median over {} cells; the most {:.1}%, {op} {} file / {} records)",
        spread.runs,
        spread.label,
        spread.median_cv,
        spread.cells,
        spread.worst_cv,
        format::size(k.0),
        format::size(k.1),
    )
}

/// The median operations per second over `cells` with records up to `IOPS_MAX_RECORD`;
/// `None` when there is none.
pub fn small_record_iops<'a>(
    cells: impl IntoIterator<Item = (&'a CellKey, &'a CellStats)>,
) -> Option<f64> {
    let v: Vec<f64> = cells
        .into_iter()
        .filter(|(k, _)| k.1 <= IOPS_MAX_RECORD)
        .map(|(k, c)| iops(c.median, k.1))
        .collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// The median p99 over `cells` that recorded latency.
pub fn median_p99<'a>(cells: impl IntoIterator<Item = &'a CellStats>) -> Option<f64> {
    let v: Vec<f64> = cells
        .into_iter()
        .filter_map(|c| c.tail.as_ref().map(Tail::p99))
        .filter(|v| v.is_finite())
        .collect();
    (!v.is_empty()).then(|| stats::median(&v))
}

/// The smallest record of the largest file that recorded latency: where per-request
/// costs show most.
fn smallest_record_of_largest_file(op: &OpData) -> Option<CellKey> {
    let with_tail = |k: &CellKey| {
        op.cells
            .values()
            .any(|c| c.get(k).is_some_and(|c| c.tail.is_some()))
    };
    let largest = op
        .all_cells
        .iter()
        .filter(|k| with_tail(k))
        .map(|k| k.0)
        .max()?;
    op.all_cells
        .iter()
        .filter(|k| k.0 == largest && with_tail(k))
        .min_by_key(|k| k.1)
        .copied()
}

/// Of the cells whose p99 differs from the baseline's significantly and beyond the
/// threshold, the one that differs most; `None` when no cell does (the most extreme of
/// undecided cells is noise).
fn most_different<'a>(
    cells: impl IntoIterator<Item = (&'a CellKey, &'a Comparison)>,
) -> Option<(CellKey, &'a Comparison)> {
    cells
        .into_iter()
        .filter(|(_, c)| c.verdict.decided_winner() && c.ratio.is_finite() && c.ratio > 0.0)
        .max_by(|a, b| a.1.ratio.ln().abs().total_cmp(&b.1.ratio.ln().abs()))
        .map(|(k, c)| (*k, c))
}

/// The cells worth a percentile plot, at most two per operation: the smallest record of
/// the largest file, and the cell whose p99 differs most (and significantly) from the
/// baseline's.
pub fn plotted_cells(op: &OpData) -> Vec<CellKey> {
    let mut out: Vec<CellKey> = smallest_record_of_largest_file(op).into_iter().collect();
    let most = most_different(op.p99_vs_baseline.values().flat_map(|m| m.iter()));
    if let Some((k, _)) = most.filter(|(k, _)| !out.contains(k)) {
        out.push(k);
    }
    out
}

/// Findings on the tails: per operation and label, its p99 against the baseline's over
/// the cells both have (tested as throughput is, over paired repetitions), with the cell
/// where they differ most; then, per operation, which label is the steadier.
pub fn generate(a: &Analysis) -> Vec<Finding> {
    let mut out = Vec::new();
    for op in &a.ops {
        for (label, cells) in &op.p99_vs_baseline {
            if let Some(f) = p99_finding(a, op, label, cells) {
                out.push(f);
            }
        }
        if let Some(f) = steadiness_finding(a, op.op) {
            out.push(f);
        }
    }
    out
}

fn p99_finding(
    a: &Analysis,
    op: &OpData,
    label: &str,
    cells: &BTreeMap<CellKey, Comparison>,
) -> Option<Finding> {
    let o: Overall = compare::overall(cells.values(), a.threshold_pct);
    if o.cells == 0 {
        return None;
    }
    // The cell that says most: the one that differs most, significantly; else the seed's
    // kind of cell (small records of a large file).
    let (k, c) = most_different(cells.iter()).or_else(|| {
        let k = smallest_record_of_largest_file(op)?;
        Some((k, cells.get(&k)?))
    })?;
    let k = &k;
    let p99 = |l: &str| {
        op.cells
            .get(l)
            .and_then(|m| m.get(k))
            .and_then(|c| c.tail.as_ref())
            .map(Tail::p99)
            .unwrap_or(f64::NAN)
    };
    let cell = format!(
        "at {} files and {} records {}'s p99 is {:.2}x {}'s, {} vs {} ({})",
        format::size(k.0),
        format::size(k.1),
        label,
        c.ratio,
        a.baseline,
        format::latency(p99(label)),
        format::latency(p99(&a.baseline)),
        c.verdict.describe_lower_is_better()
    );
    let (sig, head) = match o.verdict {
        Verdict::Faster | Verdict::Slower => {
            let (longer, shorter, r, ci) = if o.geo_ratio >= 1.0 {
                (label, a.baseline.as_str(), o.geo_ratio, o.ci)
            } else {
                (
                    a.baseline.as_str(),
                    label,
                    1.0 / o.geo_ratio,
                    o.ci.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
                )
            };
            (
                Some(true),
                format!(
                    "{}: {longer}'s p99 latency is longer than {shorter}'s by {}",
                    op.op,
                    compare::change_with_ci(r, ci)
                ),
            )
        }
        Verdict::NotTestable => (
            None,
            format!(
                "{}: p99 latency of {label} against {}: not testable ({})",
                op.op,
                a.baseline,
                compare::change_with_ci(o.geo_ratio, o.ci)
            ),
        ),
        _ => (
            Some(false),
            format!(
                "{}: p99 latency of {label} against {}: {}",
                op.op,
                a.baseline,
                match o.verdict {
                    Verdict::Equivalent => format!(
                        "equivalent within ±{}% ({})",
                        a.threshold_pct,
                        compare::change_with_ci(o.geo_ratio, o.ci)
                    ),
                    _ => format!(
                        "inconclusive at a {}% threshold ({})",
                        a.threshold_pct,
                        compare::change_with_ci(o.geo_ratio, o.ci)
                    ),
                }
            ),
        ),
    };
    Some(Finding {
        topic: Topic::Latency,
        op: Some(op.op),
        text: format!(
            "{head} (geometric mean over the cells; {}); {cell}.",
            findings::evidence_as(&o, "longer", "shorter")
        ),
        significant: sig,
    })
}

/// "read: lab:smb is the steadier, ...": observed, not tested (a CV is itself a figure
/// over the repetitions, so there is nothing left to replicate it with).
fn steadiness_finding(a: &Analysis, op: Operation) -> Option<Finding> {
    let rows: Vec<&Consistency> = a
        .consistency
        .iter()
        .filter(|c| c.op == op && c.cv.is_some())
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let cv = |c: &Consistency| c.cv.map(|v| v.0).unwrap_or(f64::NAN);
    let steady = rows.iter().min_by(|x, y| cv(x).total_cmp(&cv(y)))?;
    let shaky = rows.iter().max_by(|x, y| cv(x).total_cmp(&cv(y)))?;
    if cv(shaky) - cv(steady) < 2.0 {
        return None;
    }
    let jitter = match (steady.jitter, shaky.jitter) {
        (Some(s), Some(u)) => format!(
            "; within a run its p99 is {:.1}x its p50 against {:.1}x",
            s.0, u.0
        ),
        _ => String::new(),
    };
    Some(Finding {
        topic: Topic::Consistency,
        op: Some(op),
        text: format!(
            "{op}: {} is the steadier from run to run, throughput CV {} against {} for {} (median over the cells; worst {} vs {}){jitter}. Observed, not tested.",
            steady.label,
            format::pct(cv(steady)),
            format::pct(cv(shaky)),
            shaky.label,
            steady.cv.map(|v| format::pct(v.1)).unwrap_or_default(),
            shaky.cv.map(|v| format::pct(v.1)).unwrap_or_default(),
        ),
        significant: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sharebench_core::latency::LatencySummary;
    use sharebench_core::record::Record;

    fn rec(rep: u32, p50: f64, p99: f64) -> Record {
        Record {
            rep,
            run_id: "r1".into(),
            throughput_kib_s: 1000.0,
            latency: LatencySummary {
                lat_count: 100,
                lat_p50_us: p50,
                lat_p90_us: p50 * 1.5,
                lat_p99_us: p99,
                lat_p999_us: p99 * 2.0,
                lat_max_us: p99 * 4.0,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn tail_takes_medians_over_repetitions_and_leaves_unrecorded_percentiles_out() {
        let recs = [rec(0, 10.0, 40.0), rec(1, 12.0, 60.0), rec(2, 11.0, 44.0)];
        let refs: Vec<&Record> = recs.iter().collect();
        let t = Tail::from_records(&refs).unwrap();
        assert_eq!(t.p50(), 11.0);
        assert_eq!(t.p99(), 44.0);
        assert_eq!(t.percentiles[4], None, "p99.99 was not recorded");
        assert_eq!(t.p99_by_rep, vec![(0, 40.0), (1, 60.0), (2, 44.0)]);
        assert!((t.jitter - 4.0).abs() < 1e-9);
        let none: Vec<&Record> = Vec::new();
        assert!(Tail::from_records(&none).is_none());
    }

    #[test]
    fn p99_comparison_pairs_repetitions_and_calls_the_longer_tail() {
        let base: Vec<Record> = (0..6).map(|i| rec(i, 10.0, 40.0 + i as f64)).collect();
        let slow: Vec<Record> = (0..6).map(|i| rec(i, 10.0, 90.0 + i as f64)).collect();
        let cell = |v: &[Record]| {
            let refs: Vec<&Record> = v.iter().collect();
            BTreeMap::from([((1 << 20, 4096), CellStats::from_records(&refs))])
        };
        let c = compare::compare_cells(&p99_cells(&cell(&slow)), &p99_cells(&cell(&base)), 5.0);
        let c = &c[&(1 << 20, 4096)];
        assert!(c.paired());
        assert!(c.ratio > 2.0);
        assert_eq!(c.verdict, Verdict::Faster, "a higher p99: the longer tail");
    }

    #[test]
    fn iops_counts_records_per_second() {
        assert_eq!(iops(4096.0, 4096), 1024.0);
        let cells = BTreeMap::from([
            ((1 << 20, 4096), CellStats::single(4096.0)),
            ((1 << 20, 1 << 20), CellStats::single(1e6)),
        ]);
        assert_eq!(small_record_iops(cells.iter()), Some(1024.0));
    }

    /// A label's cell over runs: each run's records, one per value.
    fn cell_of_runs(runs: &[(&str, &[f64])]) -> CellStats {
        let recs: Vec<Record> = runs
            .iter()
            .flat_map(|(id, values)| {
                values.iter().enumerate().map(|(i, v)| Record {
                    rep: i as u32,
                    run_id: id.to_string(),
                    throughput_kib_s: *v,
                    ..Default::default()
                })
            })
            .collect();
        CellStats::from_records(&recs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn run_spread_is_the_cv_of_each_runs_median_and_only_for_several_runs() {
        // Medians 100, 110, 90 in the first cell (CV 10%); 200, 200, 200 in the second
        // (0%): whatever the samples around them, which is what a run's interval sees.
        let wide = cell_of_runs(&[
            ("r1", &[80.0, 100.0, 130.0]),
            ("r2", &[110.0, 90.0, 120.0]),
            ("r3", &[70.0, 90.0, 95.0]),
        ]);
        let flat = cell_of_runs(&[
            ("r1", &[200.0, 150.0, 250.0]),
            ("r2", &[200.0, 199.0, 201.0]),
            ("r3", &[200.0, 100.0, 300.0]),
        ]);
        let single = cell_of_runs(&[("r1", &[1.0, 2.0, 3.0])]);
        let cells = |c: Vec<((u64, u64), CellStats)>| c.into_iter().collect();
        let op = OpData {
            op: Operation::Io(sharebench_core::op::Op::Read),
            cells: BTreeMap::from([
                (
                    "t".to_string(),
                    cells(vec![((1 << 20, 1 << 16), wide), ((1 << 24, 1 << 16), flat)]),
                ),
                ("one".to_string(), cells(vec![((1 << 20, 1 << 16), single)])),
            ]),
            vs_baseline: BTreeMap::new(),
            p99_vs_baseline: BTreeMap::new(),
            all_cells: vec![(1 << 20, 1 << 16), (1 << 24, 1 << 16)],
        };
        let spread = run_spread(&[op], &["t".to_string(), "one".to_string()]);
        assert_eq!(
            spread.len(),
            1,
            "a label of one run has no spread across runs"
        );
        let s = &spread[0];
        assert_eq!((s.label.as_str(), s.runs, s.cells), ("t", 3, 2));
        assert!((s.worst_cv - 10.0).abs() < 1e-9, "{s:?}");
        assert!((s.median_cv - 5.0).abs() < 1e-9, "{s:?}");
        assert_eq!(
            s.worst,
            (
                Operation::Io(sharebench_core::op::Op::Read),
                (1 << 20, 1 << 16)
            )
        );
        let line = run_spread_line(s);
        assert!(
            line.starts_with("Across 3 runs of t, a cell's median varied by 5.0%"),
            "{line}"
        );
        assert!(
            line.contains("the most 10.0%, read 1 MiB file / 64 KiB records"),
            "{line}"
        );
    }
}
