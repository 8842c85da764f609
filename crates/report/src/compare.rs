//! One target against another, cell by cell: the ratio of medians, Welch's t-test on log
//! throughput (the decision), Mann-Whitney U (reported alongside), and Benjamini-Hochberg
//! adjustment over the cells of one operation. Fewer than three repetitions on a side is
//! "not testable", never a guess. Not: the statistics themselves (see `stats`).

use crate::analysis::{CellKey, CellStats};
use crate::stats;
use std::collections::BTreeMap;

/// Repetitions needed on each side before a cell is tested.
pub const MIN_REPS: usize = 3;
/// False discovery rate of the per-operation family of cells.
pub const ALPHA: f64 = 0.05;

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoDifference,
    NotTestable,
}

impl Verdict {
    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Faster => "faster (significant)",
            Verdict::Slower => "slower (significant)",
            Verdict::NoDifference => "no significant difference",
            Verdict::NotTestable => "not testable (< 3 repetitions a side)",
        }
    }
}

/// One cell, target against baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Target median over baseline median.
    pub ratio: f64,
    /// Welch's t-test on logs, two-sided.
    pub p: Option<f64>,
    /// `p` adjusted over the operation's cells (Benjamini-Hochberg).
    pub q: Option<f64>,
    /// Mann-Whitney U, two-sided (exact for small samples).
    pub p_mwu: Option<f64>,
    pub verdict: Verdict,
}

/// Compares every cell both sides have; cells only one side has are left out (missing).
pub fn compare_cells(
    target: &BTreeMap<CellKey, CellStats>,
    base: &BTreeMap<CellKey, CellStats>,
) -> BTreeMap<CellKey, Comparison> {
    let keys: Vec<CellKey> = target
        .keys()
        .filter(|k| base.contains_key(k))
        .copied()
        .collect();
    let mut out: Vec<(CellKey, Comparison)> = Vec::with_capacity(keys.len());
    for k in keys {
        let (t, b) = (&target[&k], &base[&k]);
        let testable = t.values.len() >= MIN_REPS && b.values.len() >= MIN_REPS;
        let p = if testable {
            stats::welch_log_p(&t.values, &b.values)
        } else {
            None
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
        c.verdict = match q {
            None => Verdict::NotTestable,
            Some(q) if q < ALPHA && c.ratio > 1.0 => Verdict::Faster,
            Some(q) if q < ALPHA && c.ratio < 1.0 => Verdict::Slower,
            Some(_) => Verdict::NoDifference,
        };
    }
    out.into_iter().collect()
}

/// A summary over many cells of one side against another: geometric mean of the ratios,
/// the Wilcoxon signed-rank p of the log ratios (cells as pairs), and how many cells were
/// significantly faster or slower.
#[derive(Debug, Clone, PartialEq)]
pub struct Overall {
    pub cells: usize,
    pub geo_ratio: f64,
    pub p: Option<f64>,
    pub faster: usize,
    pub slower: usize,
    pub testable: usize,
}

impl Overall {
    /// Significant when the signed-rank test says so, or, with too few cells for it to
    /// reach 5% (fewer than 6), when every cell is significant in the same direction.
    pub fn significant(&self) -> bool {
        match self.p {
            Some(p) if p < ALPHA => true,
            _ => {
                self.cells > 0
                    && self.cells < 6
                    && self.testable == self.cells
                    && (self.faster == self.cells || self.slower == self.cells)
            }
        }
    }
}

pub fn overall<'a>(cells: impl IntoIterator<Item = &'a Comparison>) -> Overall {
    let cells: Vec<&Comparison> = cells
        .into_iter()
        .filter(|c| c.ratio.is_finite() && c.ratio > 0.0)
        .collect();
    let logs: Vec<f64> = cells.iter().map(|c| c.ratio.ln()).collect();
    Overall {
        cells: cells.len(),
        geo_ratio: if logs.is_empty() {
            f64::NAN
        } else {
            stats::mean(&logs).exp()
        },
        p: if logs.len() >= 2 {
            stats::signed_rank_p(&logs)
        } else {
            None
        },
        faster: cells
            .iter()
            .filter(|c| c.verdict == Verdict::Faster)
            .count(),
        slower: cells
            .iter()
            .filter(|c| c.verdict == Verdict::Slower)
            .count(),
        testable: cells
            .iter()
            .filter(|c| c.verdict != Verdict::NotTestable)
            .count(),
    }
}
