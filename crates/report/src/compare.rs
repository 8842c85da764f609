//! One target against another, cell by cell: the ratio of medians, a t-test on log
//! throughput and its 95% interval of the ratio (paired by repetition when both cells come
//! from one run, whose engine measured them side by side; Welch's otherwise), Mann-Whitney U (reported alongside), and
//! Benjamini-Hochberg adjustment over the cells of one operation. A winner is called only
//! when a difference is both significant and at least the practical threshold; a ratio
//! whose interval lies within the threshold is "equivalent"; anything else is
//! "inconclusive". Fewer than three repetitions on a side is "not testable", never a guess.
//!
//! Replicates are the units that vary independently (docs/methods/statistics.md): repetitions
//! measured side by side in one run. Cells of two separate runs are one block of time a
//! side, whose difference mixes the targets with whatever drifted between the runs: they
//! get a ratio, never a verdict. Not: the statistics themselves (see `stats`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{Comparison, Design, Overall, Replicates, RowVersus, Verdict};

use crate::model::{CellKey, CellStats};
use crate::stats;
use std::collections::BTreeMap;

/// Repetitions needed on each side before a cell is tested.
pub const MIN_REPS: usize = 3;
/// False discovery rate of the per-operation family of cells.
pub const ALPHA: f64 = 0.05;

/// The smallest difference that picks a winner unless told (`--threshold`), percent. On
/// this kind of machine an A/A comparison (one target twice, interleaved) gives cell
/// ratios within about ±5%, and a difference below that rarely changes a choice of
/// server (docs/methods/statistics.md).
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// The verdict on a ratio (target over baseline) with its 95% interval, given whether the
/// difference is significant, at a threshold in percent.
pub fn decide(
    ratio: f64,
    ci: Option<(f64, f64)>,
    significant: bool,
    threshold_pct: f64,
) -> Verdict {
    let hi = 1.0 + threshold_pct / 100.0;
    let lo = 1.0 / hi;
    match ci {
        None => Verdict::NotTestable,
        Some(_) if significant && ratio >= hi => Verdict::Faster,
        Some(_) if significant && ratio <= lo => Verdict::Slower,
        Some((a, b)) if a >= lo && b <= hi => Verdict::Equivalent,
        Some(_) => Verdict::Inconclusive,
    }
}

/// For an inconclusive ratio: how many times the data (cells or repetitions) it would take
/// for the interval to narrow enough to decide, if the ratio stayed where it is. Inside the
/// threshold band the decision within reach is "equivalent" (both ends within the band);
/// outside it, a winner (the end toward 1 clear of it). Intervals narrow as 1/√n, on
/// logarithms; each side is taken as it is, since an interval of means (Welch) is not
/// symmetric around its ratio. `None` without an interval or on the band's edge.
pub fn data_to_decide(ratio: f64, ci: Option<(f64, f64)>, threshold_pct: f64) -> Option<f64> {
    let (lo, hi) = ci?;
    let point = ratio.ln();
    let (below, above) = (point - lo.ln(), hi.ln() - point);
    let band = (1.0 + threshold_pct / 100.0).ln();
    let need = |side: f64, room: f64| (room > 1e-9 && side > 0.0).then(|| (side / room).powi(2));
    if point.abs() >= band {
        let toward_one = if point > 0.0 { below } else { above };
        need(toward_one, point.abs())
    } else {
        let low = need(below, point + band)?;
        let high = need(above, band - point)?;
        Some(low.max(high))
    }
}

/// A verdict in words at a threshold in percent, for findings and claims: "faster,
/// significant and at least 5%", "equivalent within ±5%", ...
pub fn verdict_words(v: Verdict, threshold_pct: f64) -> String {
    match v {
        Verdict::Faster => format!("faster, significant and at least {threshold_pct}%"),
        Verdict::Slower => format!("slower, significant and at least {threshold_pct}%"),
        Verdict::Equivalent => format!("equivalent within ±{threshold_pct}%"),
        Verdict::Inconclusive => format!("inconclusive at a {threshold_pct}% threshold"),
        Verdict::NotTestable => "not testable, fewer than 3 repetitions a side".into(),
    }
}

/// "+12% [+8%, +16%]": a ratio as a change, with its interval.
pub fn change_with_ci(ratio: f64, ci: Option<(f64, f64)>) -> String {
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    match ci {
        Some((a, b)) => format!("{} [{}, {}]", pct(ratio), pct(a), pct(b)),
        None => pct(ratio),
    }
}

/// How `t` and `b` are replicated: repetitions of one run, runs both have, runs of their
/// own, or one block each; with the paired log ratios where paired.
fn design(t: &CellStats, b: &CellStats) -> (Design, Vec<(String, f64)>) {
    if let Some(pairs) = pairs_by_rep(t, b) {
        return (Design::Repetitions, pairs);
    }
    let logs = |c: &CellStats| -> BTreeMap<String, f64> {
        c.by_run
            .iter()
            .filter(|(_, v)| **v > 0.0)
            .map(|(r, v)| (r.clone(), v.ln()))
            .collect()
    };
    let (lt, lb) = (logs(t), logs(b));
    let common: Vec<(String, f64)> = lt
        .iter()
        .filter_map(|(r, x)| Some((format!("run {r}"), x - lb.get(r)?)))
        .collect();
    if common.len() >= MIN_REPS {
        (Design::PairedRuns, common)
    } else if lt.len() >= MIN_REPS && lb.len() >= MIN_REPS && common.is_empty() {
        (Design::Runs(lt, lb), Vec::new())
    } else {
        (Design::OneBlockEach, Vec::new())
    }
}

/// Compares every cell both sides have, at a threshold in percent; cells only one side has
/// are left out (missing).
pub fn compare_cells(
    target: &BTreeMap<CellKey, CellStats>,
    base: &BTreeMap<CellKey, CellStats>,
    threshold_pct: f64,
) -> BTreeMap<CellKey, Comparison> {
    let keys: Vec<CellKey> = target
        .keys()
        .filter(|k| base.contains_key(k))
        .copied()
        .collect();
    let mut out: Vec<(CellKey, Comparison)> = Vec::with_capacity(keys.len());
    for k in keys {
        let (t, b) = (&target[&k], &base[&k]);
        let (design, rep_logs) = design(t, b);
        let exp = |m: &BTreeMap<String, f64>| -> Vec<f64> { m.values().map(|l| l.exp()).collect() };
        let (testable, (p, ci)) = match &design {
            Design::Repetitions | Design::PairedRuns => {
                let logs: Vec<f64> = rep_logs.iter().map(|(_, d)| *d).collect();
                let test = (logs.len() >= MIN_REPS)
                    .then(|| stats::mean_log_t(&logs))
                    .flatten();
                (
                    logs.len() >= MIN_REPS,
                    test.map_or((None, None), |(p, ci)| (Some(p), Some(ci))),
                )
            }
            Design::Runs(lt, lb) => {
                let (vt, vb) = (exp(lt), exp(lb));
                (
                    true,
                    (stats::welch_log_p(&vt, &vb), stats::welch_log_ci(&vt, &vb)),
                )
            }
            Design::OneBlockEach => {
                let testable = t.values.len() >= MIN_REPS && b.values.len() >= MIN_REPS;
                (
                    testable,
                    if testable {
                        (
                            stats::welch_log_p(&t.values, &b.values),
                            stats::welch_log_ci(&t.values, &b.values),
                        )
                    } else {
                        (None, None)
                    },
                )
            }
        };
        let p_mwu = if testable {
            stats::mann_whitney_p(&t.values, &b.values)
        } else {
            None
        };
        out.push((
            k,
            Comparison {
                ratio: if b.median > 0.0 {
                    t.median / b.median
                } else {
                    f64::NAN
                },
                ci,
                design,
                rep_logs,
                p,
                q: None,
                p_mwu,
                verdict: Verdict::NotTestable,
            },
        ));
    }
    let ps: Vec<Option<f64>> = out.iter().map(|(_, c)| c.p).collect();
    let qs = stats::benjamini_hochberg(&ps);
    for ((_, c), q) in out.iter_mut().zip(qs) {
        c.q = q;
        c.verdict = match (q, &c.design) {
            (None, _) => Verdict::NotTestable,
            // One block of time a side: the spread within each run says nothing of what
            // drifted between them.
            (Some(_), Design::OneBlockEach) => Verdict::Inconclusive,
            (Some(q), _) => decide(c.ratio, c.ci, q < ALPHA, threshold_pct),
        };
    }
    out.into_iter().collect()
}

/// The log ratios (`ln t - ln b`) of the repetitions both cells have, by repetition, when
/// both come from one run; `None` for cells of separate runs (or of imports), which
/// Welch's test compares instead.
fn pairs_by_rep(t: &CellStats, b: &CellStats) -> Option<Vec<(String, f64)>> {
    Some(
        paired_values(t, b)?
            .into_iter()
            .map(|(rep, x, y)| (format!("rep {rep}"), x.ln() - y.ln()))
            .collect(),
    )
}

/// The positive values of the repetitions both cells have, (repetition, target's,
/// baseline's), when both come from one run; `None` otherwise.
fn paired_values(t: &CellStats, b: &CellStats) -> Option<Vec<(u32, f64, f64)>> {
    if t.run_id.is_none() || t.run_id != b.run_id {
        return None;
    }
    let base: BTreeMap<u32, f64> = b
        .reps
        .iter()
        .copied()
        .zip(b.values.iter().copied())
        .collect();
    Some(
        t.reps
            .iter()
            .zip(&t.values)
            .filter_map(|(&rep, &x)| {
                let y = *base.get(&rep)?;
                (x > 0.0 && y > 0.0).then_some((rep, x, y))
            })
            .collect(),
    )
}

/// Two throughput-mode rows, `t` against `b`, judged alone: paired by repetition when
/// both come from one run (the engine measured them side by side), Welch's otherwise. The
/// ratio is of the geometric means, the centre of the 95% interval (over the repetitions
/// both have, when paired), so it never lies outside it; a winner only when significant
/// and at least the threshold. Fewer than `MIN_REPS` a side is not testable.
pub fn rows(t: &CellStats, b: &CellStats, threshold_pct: f64) -> RowVersus {
    let (vt, vb, paired): (Vec<f64>, Vec<f64>, bool) = match paired_values(t, b) {
        Some(pairs) => (
            pairs.iter().map(|p| p.1).collect(),
            pairs.iter().map(|p| p.2).collect(),
            true,
        ),
        None => (t.values.clone(), b.values.clone(), false),
    };
    let test = if vt.len() < MIN_REPS || vb.len() < MIN_REPS {
        None
    } else if paired {
        let logs: Vec<f64> = vt.iter().zip(&vb).map(|(x, y)| x.ln() - y.ln()).collect();
        stats::mean_log_t(&logs)
    } else {
        stats::welch_log_p(&vt, &vb).zip(stats::welch_log_ci(&vt, &vb))
    };
    let typical = match test {
        Some(_) => (stats::geometric_mean(&vt), stats::geometric_mean(&vb)),
        None => (t.median, b.median),
    };
    let ci = test.map(|(_, ci)| ci);
    let p = test.map(|(p, _)| p);
    RowVersus {
        typical,
        ci,
        p,
        q: None,
        paired,
        verdict: decide(
            typical.0 / typical.1,
            ci,
            p.is_some_and(|p| p < ALPHA),
            threshold_pct,
        ),
    }
}

/// Decides `rows` as one family, as the cells of an operation are: on their p adjusted
/// over the family (Benjamini-Hochberg). An A/A check (one tmpfs twice, 52 rows of 4
/// workers) called 3 winners at +11% on raw p, as a 5% test must; adjusted, 1.
pub fn adjust_rows<'a>(rows: impl IntoIterator<Item = &'a mut RowVersus>, threshold_pct: f64) {
    let rows: Vec<&mut RowVersus> = rows.into_iter().collect();
    let ps: Vec<Option<f64>> = rows.iter().map(|r| r.p).collect();
    for (r, q) in rows.into_iter().zip(stats::benjamini_hochberg(&ps)) {
        r.q = q;
        r.verdict = decide(r.ratio(), r.ci, q.is_some_and(|q| q < ALPHA), threshold_pct);
    }
}

/// The summary of `cells` at a threshold in percent.
pub fn overall<'a>(cells: impl IntoIterator<Item = &'a Comparison>, threshold_pct: f64) -> Overall {
    let cells: Vec<&Comparison> = cells
        .into_iter()
        .filter(|c| c.ratio.is_finite() && c.ratio > 0.0)
        .collect();
    let count = |v: Verdict| cells.iter().filter(|c| c.verdict == v).count();
    let testable = cells
        .iter()
        .filter(|c| c.verdict != Verdict::NotTestable)
        .count();
    let medians_geo = || {
        let logs: Vec<f64> = cells.iter().map(|c| c.ratio.ln()).collect();
        if logs.is_empty() {
            f64::NAN
        } else {
            stats::mean(&logs).exp()
        }
    };
    let (replicates, geo_ratio, test) = if cells.iter().all(|c| c.paired()) {
        let per_rep = mean_log_ratio_by_rep(&cells);
        let geo = if per_rep.is_empty() {
            medians_geo()
        } else {
            stats::mean(&per_rep).exp()
        };
        let test = (per_rep.len() >= MIN_REPS)
            .then(|| stats::mean_log_t(&per_rep))
            .flatten();
        let n = per_rep.len();
        let by_run = cells.iter().all(|c| c.design == Design::PairedRuns);
        let replicates = if by_run {
            Replicates::PairedRuns(n)
        } else {
            Replicates::Repetitions(n)
        };
        (replicates, geo, test)
    } else if let Some((lt, lb)) = mean_log_by_run(&cells) {
        let (vt, vb): (Vec<f64>, Vec<f64>) = (
            lt.iter().map(|l| l.exp()).collect(),
            lb.iter().map(|l| l.exp()).collect(),
        );
        let geo = (stats::mean(&lt) - stats::mean(&lb)).exp();
        let test = stats::welch_log_p(&vt, &vb).zip(stats::welch_log_ci(&vt, &vb));
        (Replicates::Runs(lt.len(), lb.len()), geo, test)
    } else {
        (Replicates::SeparateRuns, medians_geo(), None)
    };
    let verdict = match (testable, replicates, test) {
        (0, _, _) => Verdict::NotTestable,
        (_, Replicates::SeparateRuns, _) => Verdict::Inconclusive,
        (_, _, None) => Verdict::NotTestable,
        (_, _, Some((p, ci))) => decide(geo_ratio, Some(ci), p < ALPHA, threshold_pct),
    };
    Overall {
        cells: cells.len(),
        geo_ratio,
        ci: test.map(|(_, ci)| ci),
        p: test.map(|(p, _)| p),
        replicates,
        faster: count(Verdict::Faster),
        slower: count(Verdict::Slower),
        equivalent: count(Verdict::Equivalent),
        testable,
        verdict,
    }
}

/// Cells whose sides are runs of their own (`Design::Runs`): per run every cell has,
/// the mean over the cells of its log median, target's and baseline's; `None` unless
/// every cell is so and each side keeps `MIN_REPS` runs.
fn mean_log_by_run(cells: &[&Comparison]) -> Option<(Vec<f64>, Vec<f64>)> {
    let mut targets: Vec<&BTreeMap<String, f64>> = Vec::new();
    let mut bases: Vec<&BTreeMap<String, f64>> = Vec::new();
    for c in cells {
        let Design::Runs(t, b) = &c.design else {
            return None;
        };
        targets.push(t);
        bases.push(b);
    }
    Some((mean_by_common_run(&targets)?, mean_by_common_run(&bases)?))
}

/// Per run that every map has, the mean of its values over the maps; `None` below
/// `MIN_REPS` such runs.
fn mean_by_common_run(maps: &[&BTreeMap<String, f64>]) -> Option<Vec<f64>> {
    let first = maps.first()?;
    let means: Vec<f64> = first
        .keys()
        .filter(|r| maps.iter().all(|m| m.contains_key(*r)))
        .map(|r| stats::mean(&maps.iter().map(|m| m[r]).collect::<Vec<_>>()))
        .collect();
    (means.len() >= MIN_REPS).then_some(means)
}

/// Per repetition every cell has, the mean over the cells of its log ratio: the
/// replicates of a summary over paired cells, in repetition order.
fn mean_log_ratio_by_rep(cells: &[&Comparison]) -> Vec<f64> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let mut sums: BTreeMap<&str, (f64, usize)> = first
        .rep_logs
        .iter()
        .map(|(r, _)| (r.as_str(), (0.0, 0)))
        .collect();
    for c in cells {
        let mine: BTreeMap<&str, f64> = c.rep_logs.iter().map(|(r, d)| (r.as_str(), *d)).collect();
        sums.retain(|r, _| mine.contains_key(r));
        for (r, (sum, n)) in sums.iter_mut() {
            *sum += mine[r];
            *n += 1;
        }
    }
    sums.values().map(|(sum, n)| sum / *n as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(values: &[f64]) -> CellStats {
        let mut c = CellStats::single(stats::median(values));
        c.values = values.to_vec();
        c
    }

    #[test]
    fn a_winner_needs_significance_and_the_threshold() {
        let ci = Some((1.08, 1.12));
        assert_eq!(decide(1.10, ci, true, 5.0), Verdict::Faster);
        assert_eq!(
            decide(1.0 / 1.10, Some((0.89, 0.93)), true, 5.0),
            Verdict::Slower
        );
        // Significant, but +2%: no winner; equivalent when the interval stays inside ±5%.
        assert_eq!(
            decide(1.02, Some((1.01, 1.03)), true, 5.0),
            Verdict::Equivalent
        );
        assert_eq!(
            decide(1.02, Some((1.01, 1.07)), true, 5.0),
            Verdict::Inconclusive
        );
        // Large but not significant: inconclusive, never a winner.
        assert_eq!(
            decide(1.30, Some((0.9, 1.8)), false, 5.0),
            Verdict::Inconclusive
        );
        assert_eq!(decide(1.30, None, true, 5.0), Verdict::NotTestable);
        // The bounds are symmetric in ratio: 1/1.05 is as far below as 1.05 above.
        assert_eq!(
            decide(0.956, Some((0.953, 0.96)), true, 5.0),
            Verdict::Equivalent
        );
        assert_eq!(
            decide(0.952, Some((0.95, 0.955)), true, 5.0),
            Verdict::Slower
        );
    }

    /// A cell of run `r1`, its values in repetition order.
    fn of_one_run(values: &[f64]) -> CellStats {
        let mut c = cell(values);
        c.reps = (0..values.len() as u32).collect();
        c.run_id = Some("r1".into());
        c
    }

    #[test]
    fn cells_and_their_summary_carry_intervals_and_verdicts() {
        let mut t = BTreeMap::new();
        let mut b = BTreeMap::new();
        // Three cells: A 20% faster, A the same within 1%, and one too noisy to say.
        t.insert((1, 1), of_one_run(&[120.0, 121.0, 119.0, 120.5]));
        b.insert((1, 1), of_one_run(&[100.0, 101.0, 99.0, 100.5]));
        t.insert((2, 1), of_one_run(&[100.2, 100.1, 99.9, 100.0]));
        b.insert((2, 1), of_one_run(&[100.0, 100.1, 99.8, 100.2]));
        t.insert((3, 1), of_one_run(&[60.0, 150.0, 100.0, 90.0]));
        b.insert((3, 1), of_one_run(&[100.0, 100.5, 99.5, 100.0]));
        let c = compare_cells(&t, &b, 5.0);
        let verdicts: Vec<Verdict> = c.values().map(|c| c.verdict).collect();
        assert_eq!(
            verdicts,
            [Verdict::Faster, Verdict::Equivalent, Verdict::Inconclusive]
        );
        let (lo, hi) = c[&(1, 1)].ci.unwrap();
        assert!(lo < 1.2 && 1.2 < hi && lo > 1.15 && hi < 1.25, "{lo} {hi}");
        let o = overall(c.values(), 5.0);
        assert_eq!((o.faster, o.equivalent, o.testable), (1, 1, 3));
        assert_eq!(o.replicates, Replicates::Repetitions(4));
        // The noisy cell swings each repetition's mean: the interval is wide; no verdict.
        assert_eq!(o.verdict, Verdict::Inconclusive);
        assert!(
            o.ci.is_some_and(|(lo, hi)| lo < 1.0 && hi > 1.1),
            "{:?}",
            o.ci
        );
    }

    #[test]
    fn a_summary_replicates_repetitions_not_cells() {
        // 300 cells, every one 5-6% faster in its own repetitions, but the machine
        // favoured A by 12% in half the repetitions and B by 2% in the others: the cells
        // agree with each other, the repetitions do not. Counting cells as replicates
        // would call +5% significant with a tiny interval.
        let favour = [1.12, 0.98, 1.12, 0.98, 1.12, 0.98];
        let mut t = BTreeMap::new();
        let mut b = BTreeMap::new();
        for i in 0..300u64 {
            let base: Vec<f64> = (0..6).map(|r| 100.0 + (i % 7) as f64 + r as f64).collect();
            let a: Vec<f64> = base.iter().zip(favour).map(|(x, f)| x * f).collect();
            t.insert((i, 1), of_one_run(&a));
            b.insert((i, 1), of_one_run(&base));
        }
        let c = compare_cells(&t, &b, 5.0);
        let o = overall(c.values(), 5.0);
        assert_eq!(o.replicates, Replicates::Repetitions(6));
        let (lo, hi) = o.ci.unwrap();
        assert!(lo < 1.0 && hi > 1.1, "{lo} {hi}");
        assert_eq!(o.verdict, Verdict::Inconclusive);
        // The same machine steady: every repetition +8%, a winner.
        let mut t2 = t.clone();
        for (k, cell) in t2.iter_mut() {
            cell.values = b[k].values.iter().map(|x| x * 1.08).collect();
        }
        let o = overall(compare_cells(&t2, &b, 5.0).values(), 5.0);
        assert_eq!(o.verdict, Verdict::Faster, "{o:?}");
        assert!((o.geo_ratio - 1.08).abs() < 1e-9, "{o:?}");
    }

    #[test]
    fn separate_runs_are_never_decided() {
        // Issue 18: two blocks of time, every cell +9%: a ratio, no interval, no winner.
        let mut t = BTreeMap::new();
        let mut b = BTreeMap::new();
        for i in 0..324u64 {
            let mut a = of_one_run(&[109.0, 109.5, 108.5]);
            a.run_id = Some("r2".into());
            t.insert((i, 1), a);
            b.insert((i, 1), of_one_run(&[100.0, 100.5, 99.5]));
        }
        let c = compare_cells(&t, &b, 5.0);
        assert!(c
            .values()
            .all(|c| !c.paired() && c.verdict == Verdict::Inconclusive));
        let o = overall(c.values(), 5.0);
        assert_eq!(o.replicates, Replicates::SeparateRuns);
        assert_eq!((o.ci, o.p, o.verdict), (None, None, Verdict::Inconclusive));
        assert!((o.geo_ratio - 1.09).abs() < 0.001, "{o:?}");
    }

    #[test]
    fn the_data_an_inconclusive_ratio_needs() {
        // +2.3% [-2.5%, +7.4%] at 5%: equivalence needs the interval inside ±5%.
        let k = data_to_decide(1.023, Some((0.975, 1.074)), 5.0).unwrap();
        assert!((3.0..4.5).contains(&k), "{k}");
        // +20% [-10%, +60%]: a winner needs the interval clear of 1: 2.5 times the data.
        let k = data_to_decide(1.2, Some((0.9, 1.6)), 5.0).unwrap();
        assert!((2.0..3.0).contains(&k), "{k}");
        assert_eq!(data_to_decide(1.2, None, 5.0), None);
        // +30.6% [-0.0%, +46.9%] (Welch, lopsided): the lower end sits on 1, so about the
        // data there is already, not half of it, as the interval's mean half-width said.
        let k = data_to_decide(1.306, Some((0.9999, 1.469)), 5.0).unwrap();
        assert!((0.95..1.05).contains(&k), "{k}");
        // A slower ratio looks at the upper end.
        let k = data_to_decide(1.0 / 1.2, Some((1.0 / 1.6, 1.0 / 0.9)), 5.0).unwrap();
        assert!((2.0..3.0).contains(&k), "{k}");
    }

    #[test]
    fn cells_of_one_run_are_paired_by_repetition() {
        // The machine's speed swings by half from round to round; B is always 8% faster.
        let speed = [100.0, 50.0, 90.0, 55.0, 100.0, 60.0];
        let one_run = |factor: f64| {
            let mut c = cell(&speed.map(|s| s * factor));
            c.reps = (0..6).collect();
            c.run_id = Some("r1".into());
            c
        };
        let t = BTreeMap::from([((1, 1), one_run(1.08))]);
        let b = BTreeMap::from([((1, 1), one_run(1.0))]);
        let c = &compare_cells(&t, &b, 5.0)[&(1, 1)];
        assert!(c.paired() && c.verdict == Verdict::Faster, "{c:?}");
        // The same figures from two runs: the swing hides the difference.
        let mut t2 = t.clone();
        t2.get_mut(&(1, 1)).unwrap().run_id = Some("r2".into());
        let c = &compare_cells(&t2, &b, 5.0)[&(1, 1)];
        assert!(!c.paired() && c.verdict == Verdict::Inconclusive, "{c:?}");
    }

    #[test]
    fn rows_of_one_run_are_paired_and_their_ratio_lies_in_its_interval() {
        // Four workers' single passes: the machine swings by half, B always 8% faster.
        let speed = [100.0, 50.0, 90.0, 55.0, 100.0, 60.0];
        let (t, b) = (of_one_run(&speed.map(|s| s * 1.08)), of_one_run(&speed));
        let v = rows(&t, &b, 5.0);
        assert!(v.paired && v.verdict == Verdict::Faster, "{v:?}");
        assert!((v.ratio() - 1.08).abs() < 1e-9, "{v:?}");
        // Two runs: Welch's, and the swing hides the difference.
        let mut t2 = t.clone();
        t2.run_id = Some("r2".into());
        let v = rows(&t2, &b, 5.0);
        assert!(!v.paired && v.verdict == Verdict::Inconclusive, "{v:?}");
        // Right-skewed passes whose medians barely differ while the geometric means do:
        // the ratio shown is the interval's centre, never outside it.
        let base = [
            100.0, 101.0, 99.0, 100.0, 100.0, 101.0, 99.0, 100.0, 101.0, 99.0, 100.0,
        ];
        let gain = [1.01, 1.01, 1.01, 1.3, 1.3, 1.3, 1.01, 1.3, 1.01, 1.3, 1.01];
        let t = of_one_run(&std::array::from_fn::<f64, 11, _>(|i| base[i] * gain[i]));
        let b = of_one_run(&base);
        let v = rows(&t, &b, 5.0);
        let (lo, hi) = v.ci.unwrap();
        assert!(lo <= v.ratio() && v.ratio() <= hi, "{v:?}");
        assert!(
            t.median / b.median < lo,
            "the medians' ratio would lie outside: {v:?}"
        );
        assert!((v.ratio() - v.typical.0 / v.typical.1).abs() < 1e-12);
        // Two repetitions a side: not testable, and the medians say so.
        let v = rows(&of_one_run(&[1.0, 2.0]), &of_one_run(&[1.0, 2.0]), 5.0);
        assert!(v.verdict == Verdict::NotTestable && v.basis().0 == "medians");
    }

    #[test]
    fn the_rows_of_a_report_are_one_family() {
        let row = |p: f64| RowVersus {
            typical: (111.0, 100.0),
            ci: Some((1.01, 1.22)),
            p: Some(p),
            q: None,
            paired: true,
            verdict: decide(1.11, Some((1.01, 1.22)), p < ALPHA, 5.0),
        };
        let mut rows = [row(0.04), row(0.5), row(0.6), row(0.7)];
        assert_eq!(
            rows[0].verdict,
            Verdict::Faster,
            "alone, p=0.04 is a winner"
        );
        adjust_rows(&mut rows, 5.0);
        assert!((rows[0].q.unwrap() - 0.16).abs() < 1e-9, "{:?}", rows[0]);
        assert_eq!(rows[0].verdict, Verdict::Inconclusive);
        // A clear one stays clear.
        let mut rows = [row(0.001), row(0.5)];
        adjust_rows(&mut rows, 5.0);
        assert_eq!(rows[0].verdict, Verdict::Faster);
    }

    #[test]
    fn runs_are_the_replicates_paired_when_both_sides_share_them() {
        // Three runs of both targets; the machine's speed swings by half from run to run,
        // B is always 10% faster: paired by run, that is clear.
        let speed = [("r1", 100.0), ("r2", 50.0), ("r3", 80.0)];
        let runs = |factor: f64| {
            let mut c = cell(&speed.map(|(_, s)| s * factor));
            c.by_run = speed
                .iter()
                .map(|(r, s)| (r.to_string(), s * factor))
                .collect();
            c
        };
        let t = BTreeMap::from([((1, 1), runs(1.1))]);
        let b = BTreeMap::from([((1, 1), runs(1.0))]);
        let c = &compare_cells(&t, &b, 5.0)[&(1, 1)];
        assert_eq!(c.design, Design::PairedRuns);
        assert_eq!(c.verdict, Verdict::Faster, "{c:?}");
        assert_eq!(overall([c], 5.0).replicates, Replicates::PairedRuns(3));
        // The same figures as runs of their own: unpaired, the swing hides the 10%.
        let mut t2 = t.clone();
        let cell = t2.get_mut(&(1, 1)).unwrap();
        cell.by_run = cell
            .by_run
            .iter()
            .map(|(r, v)| (format!("other-{r}"), *v))
            .collect();
        let c = &compare_cells(&t2, &b, 5.0)[&(1, 1)];
        assert!(matches!(c.design, Design::Runs(..)), "{c:?}");
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        assert_eq!(overall([c], 5.0).replicates, Replicates::Runs(3, 3));
    }
}
