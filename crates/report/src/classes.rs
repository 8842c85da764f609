//! The size classes of the seed study (small 4-512 KiB, medium 1-16 MiB, large
//! 32-512 MiB, very large >= 1 GiB) and, per operation and class, each label's median,
//! peak, stability (CV) and CPU, the winner, its margin over the runner-up and whether
//! that margin is significant. Not: per-cell comparisons (see `compare`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{ClassRow, ClassStat, SizeClass};

use crate::compare;
use crate::model::{CellKey, CellStats, OpData};
use crate::stats;
use crate::tails;
use std::collections::BTreeMap;

fn class_stat(label: &str, cells: &[(&CellKey, &CellStats)]) -> Option<ClassStat> {
    if cells.is_empty() {
        return None;
    }
    let medians: Vec<f64> = cells.iter().map(|(_, c)| c.median).collect();
    let (peak_cell, peak) = cells
        .iter()
        .map(|(k, c)| (**k, c.median))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let cvs: Vec<f64> = cells.iter().filter_map(|(_, c)| c.cv).collect();
    let cpu: Vec<f64> = cells.iter().filter_map(|(_, c)| c.cpu_pct).collect();
    let per_cpu: Vec<f64> = cells.iter().filter_map(|(_, c)| c.mib_per_cpu_s).collect();
    let server: Vec<f64> = cells.iter().filter_map(|(_, c)| c.server_cpu_pct).collect();
    Some(ClassStat {
        label: label.to_string(),
        cells: cells.len(),
        median: stats::median(&medians),
        peak,
        peak_cell,
        cv: (!cvs.is_empty()).then(|| stats::median(&cvs)),
        cpu_pct: (!cpu.is_empty()).then(|| stats::median(&cpu)),
        server_cpu_pct: (!server.is_empty()).then(|| stats::median(&server)),
        mib_per_cpu_s: (!per_cpu.is_empty()).then(|| stats::median(&per_cpu)),
        iops: tails::small_record_iops(cells.iter().copied()),
        p99_us: tails::median_p99(cells.iter().map(|(_, c)| *c)),
    })
}

/// Size-class rows of every operation, winners called at a threshold in percent.
pub fn class_rows(ops: &[OpData], labels: &[String], threshold_pct: f64) -> Vec<ClassRow> {
    let mut out = Vec::new();
    for op in ops {
        for class in SizeClass::ALL {
            let mut per_label: BTreeMap<&str, Vec<(&CellKey, &CellStats)>> = BTreeMap::new();
            for (label, cells) in &op.cells {
                per_label.insert(
                    label,
                    cells
                        .iter()
                        .filter(|(k, _)| SizeClass::of(k.0) == class)
                        .collect(),
                );
            }
            let stats: Vec<ClassStat> = labels
                .iter()
                .filter_map(|l| per_label.get(l.as_str()).and_then(|c| class_stat(l, c)))
                .collect();
            if stats.is_empty() {
                continue;
            }
            let mut ranked: Vec<&ClassStat> = stats.iter().collect();
            ranked.sort_by(|a, b| b.median.total_cmp(&a.median));
            let (winner, runner_up, versus) = if ranked.len() >= 2 {
                let (w, r) = (&ranked[0].label, &ranked[1].label);
                let in_class = |l: &str| -> BTreeMap<CellKey, CellStats> {
                    op.cells
                        .get(l)
                        .map(|c| {
                            c.iter()
                                .filter(|(k, _)| SizeClass::of(k.0) == class)
                                .map(|(k, v)| (*k, v.clone()))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let versus = |w: &str, r: &str| {
                    let cells = compare::compare_cells(&in_class(w), &in_class(r), threshold_pct);
                    compare::overall(cells.values(), threshold_pct)
                };
                let mut o = versus(w, r);
                let (mut w, mut r) = (w, r);
                // The winner is the faster by the paired per-cell ratios, which the test is about.
                if o.geo_ratio < 1.0 {
                    std::mem::swap(&mut w, &mut r);
                    o = versus(w, r);
                }
                (Some(w.clone()), Some(r.clone()), Some(o))
            } else {
                (None, None, None)
            };
            out.push(ClassRow {
                op: op.op,
                class,
                stats,
                winner,
                runner_up,
                versus,
            });
        }
    }
    out
}
