//! A run's matrix repetition by repetition: the replicates of a statistic over many cells
//! of one run (a study's steadiness, dips and CPU checks; the report's CPU findings). The
//! engine measures a run round by round, repetitions outermost, so a disturbed minute moves
//! repetition k of many cells at once: the cells of a run are not independent replicates,
//! its repetitions are (docs/methods/statistics.md, "Replicates"). Here a target's values are
//! tabled by cell and repetition, and a statistic over the cells is either computed per
//! repetition or jackknifed over them. Not: what a check or finding concludes.

use crate::stats;
use sharebench_core::op::Op;
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status};
use std::collections::{BTreeMap, BTreeSet};

/// One repetition: its run and number (a step's records may come from several runs).
pub type Rep = (String, u32);
/// One cell: the operation, file size and record size.
pub type Cell = (Op, u64, u64);
/// One target's values of a measure, cell by cell, repetition by repetition.
pub type Table = BTreeMap<Cell, BTreeMap<Rep, f64>>;

/// `target`'s single-worker matrix records of `ops` on files that `keep` accepts, valued by
/// `value` (records it gives no positive, finite value are left out).
pub fn table(
    records: &[Record],
    target: &str,
    ops: &[Op],
    keep: impl Fn(u64) -> bool,
    value: impl Fn(&Record) -> Option<f64>,
) -> Table {
    let mut t = Table::new();
    for r in records {
        let Operation::Io(op) = r.op else { continue };
        if r.target != target
            || r.status != Status::Ok
            || r.scope != Scope::Single
            || !ops.contains(&op)
            || !keep(r.file_size)
        {
            continue;
        }
        if let Some(v) = value(r).filter(|v| v.is_finite() && *v > 0.0) {
            t.entry((op, r.file_size, r.record_size))
                .or_default()
                .insert((r.run_id.clone(), r.rep), v);
        }
    }
    t
}

/// The repetitions that every cell of every table has: the replicates of a statistic
/// computed per repetition over the same cells (with `--reps auto`, cells stop at different
/// counts, and a later repetition holds only the cells that were still unsettled).
pub fn common_reps(tables: &[&Table]) -> Vec<Rep> {
    let mut cells = tables.iter().flat_map(|t| t.values());
    let Some(first) = cells.next() else {
        return Vec::new();
    };
    let mut reps: BTreeSet<&Rep> = first.keys().collect();
    for c in cells {
        reps.retain(|r| c.contains_key(*r));
    }
    reps.into_iter().cloned().collect()
}

/// Per repetition that every cell of both tables has, the mean over the cells of the log
/// ratio of `a`'s value to `b`'s: the replicates of a comparison over many cells.
pub fn mean_log_ratio_by_rep(ta: &Table, tb: &Table) -> Vec<f64> {
    common_reps(&[ta, tb])
        .iter()
        .filter_map(|rep| {
            let (sa, sb) = (slice(ta, rep), slice(tb, rep));
            let logs: Vec<f64> = sa
                .iter()
                .filter_map(|(c, x)| Some((x / sb.get(c)?).ln()))
                .collect();
            (!logs.is_empty()).then(|| stats::mean(&logs))
        })
        .collect()
}

/// Every repetition of either table.
pub fn all_reps(a: &Table, b: &Table) -> Vec<Rep> {
    let set: BTreeSet<&Rep> = a
        .values()
        .chain(b.values())
        .flat_map(|c| c.keys())
        .collect();
    set.into_iter().cloned().collect()
}

/// A statistic over the repetitions jackknifed over them: its value on all of `reps`, and
/// its p and 95% interval from leaving each out in turn (`stats::jackknife_log_t`).
/// `stat(skip)` is the statistic (a mean of logs) without repetition `skip`. `None` below
/// three repetitions, or where the statistic has no value without one of them.
pub fn jackknife(
    reps: &[Rep],
    stat: impl Fn(Option<&Rep>) -> Option<f64>,
) -> Option<(f64, f64, (f64, f64))> {
    let full = stat(None)?;
    let without: Vec<f64> = reps.iter().map(|r| stat(Some(r))).collect::<Option<_>>()?;
    let (p, ci) = stats::jackknife_log_t(full, &without)?;
    Some((full, p, ci))
}

/// Run-to-run CV of each cell that both tables have with at least three repetitions in
/// common, over those repetitions but `skip`: (`a`'s CV, `b`'s CV) per cell, where both are
/// above zero. Three are needed so that a cell keeps two when the jackknife leaves one out.
pub fn paired_cvs(a: &Table, b: &Table, skip: Option<&Rep>) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for (cell, ra) in a {
        let Some(rb) = b.get(cell) else { continue };
        let common: Vec<&Rep> = ra.keys().filter(|r| rb.contains_key(*r)).collect();
        if common.len() < 3 {
            continue;
        }
        let (va, vb): (Vec<f64>, Vec<f64>) = common
            .into_iter()
            .filter(|r| Some(*r) != skip)
            .map(|r| (ra[r], rb[r]))
            .unzip();
        if let (Some(x), Some(y)) = (stats::cv_pct(&va), stats::cv_pct(&vb)) {
            if x > 0.0 && y > 0.0 {
                out.push((x, y));
            }
        }
    }
    out
}

/// A dip is a cell below 70% of both neighbours along the record sizes of its operation
/// and file size. Over the cells of `values` (cell -> one value, e.g. one repetition's
/// throughput, or the median): (dips, cells that have two neighbours).
pub fn count_dips(values: &BTreeMap<Cell, f64>) -> (usize, usize) {
    let mut rows: BTreeMap<(Op, u64), Vec<f64>> = BTreeMap::new();
    // Cells are ordered by operation, file size, then record size.
    for ((op, file, _), v) in values {
        rows.entry((*op, *file)).or_default().push(*v);
    }
    let (mut dips, mut inner) = (0, 0);
    for row in rows.values() {
        for w in row.windows(3) {
            inner += 1;
            if w[1] < 0.7 * w[0] && w[1] < 0.7 * w[2] {
                dips += 1;
            }
        }
    }
    (dips, inner)
}

/// Repetition `rep`'s values of the table's cells.
pub fn slice(t: &Table, rep: &Rep) -> BTreeMap<Cell, f64> {
    t.iter()
        .filter_map(|(c, by)| Some((*c, *by.get(rep)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(n: u32) -> Rep {
        ("r1".into(), n)
    }

    fn row(values: &[f64]) -> BTreeMap<Cell, f64> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| ((Op::Read, 1 << 20, 4096 << i), *v))
            .collect()
    }

    #[test]
    fn a_dip_is_a_valley_deeper_than_thirty_percent() {
        assert_eq!(count_dips(&row(&[100.0, 50.0, 100.0, 75.0, 100.0])), (1, 3));
        // Rows are per operation and file size: no window spans two of them.
        let mut two = row(&[100.0, 50.0]);
        two.insert((Op::Write, 1 << 20, 4096), 100.0);
        assert_eq!(count_dips(&two), (0, 0));
    }

    #[test]
    fn the_replicates_are_the_repetitions_every_cell_has() {
        let mut a = Table::new();
        a.insert(
            (Op::Read, 1, 1),
            [(rep(0), 1.0), (rep(1), 1.0), (rep(2), 1.0)].into(),
        );
        a.insert((Op::Read, 1, 2), [(rep(0), 1.0), (rep(1), 1.0)].into());
        let b: Table = [((Op::Read, 1, 1), [(rep(1), 1.0), (rep(2), 1.0)].into())].into();
        assert_eq!(common_reps(&[&a, &b]), vec![rep(1)]);
        assert_eq!(all_reps(&a, &b), vec![rep(0), rep(1), rep(2)]);
        assert_eq!(slice(&a, &rep(2)).len(), 1);
    }

    #[test]
    fn cvs_are_paired_over_the_repetitions_both_have_but_the_one_left_out() {
        let a: Table = [(
            (Op::Read, 1, 1),
            [
                (rep(0), 100.0),
                (rep(1), 110.0),
                (rep(2), 90.0),
                (rep(3), 100.0),
            ]
            .into(),
        )]
        .into();
        let b = a.clone();
        let all = paired_cvs(&a, &b, None);
        assert_eq!(all.len(), 1);
        assert!((all[0].0 - all[0].1).abs() < 1e-12);
        let without = paired_cvs(&a, &b, Some(&rep(1)));
        assert!(without[0].0 < all[0].0, "{without:?} {all:?}");
        // A jackknife needs three repetitions.
        assert!(jackknife(&[rep(0), rep(1)], |_| Some(0.0)).is_none());
    }
}
