//! The terminal summary after `run`: per target and operation, the median throughput over
//! cells, the peak cell and the spread across repetitions. A glance, not the analysis
//! (that is `sharebench report`).

use sharebench_core::record::{Record, Scope, Status};
use sharebench_core::size::format_size;
use std::collections::BTreeMap;
use std::io::Write;

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Coefficient of variation in percent (sample standard deviation / mean).
fn cv_pct(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    (mean > 0.0).then(|| var.sqrt() / mean * 100.0)
}

pub fn print(records: &[Record], out: &mut dyn Write) {
    // (target, op order, op) -> (file, record) -> throughputs over repetitions
    type Cells = BTreeMap<(u64, u64), Vec<f64>>;
    let mut groups: BTreeMap<(String, usize, String), Cells> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.status == Status::Ok && r.scope != Scope::Worker)
    {
        let pos = order.iter().position(|o| o == &r.op).unwrap_or_else(|| {
            order.push(r.op.clone());
            order.len() - 1
        });
        groups
            .entry((r.target.clone(), pos, r.op.clone()))
            .or_default()
            .entry((r.file_size, r.record_size))
            .or_default()
            .push(r.throughput_kib_s / 1024.0);
    }
    if groups.is_empty() {
        let _ = writeln!(out, "No successful measurements.");
        return;
    }
    let _ = writeln!(
        out,
        "{:<24} {:<15} {:>5} {:>12} {:>12}  {:<13} {:>8}",
        "target", "op", "cells", "median MiB/s", "peak MiB/s", "peak at", "rep CV%"
    );
    for ((target, _, op), cells) in &groups {
        let mut medians: Vec<(f64, (u64, u64))> = Vec::new();
        let mut cvs: Vec<f64> = Vec::new();
        for (cell, values) in cells {
            medians.push((median(&mut values.clone()), *cell));
            if let Some(cv) = cv_pct(values) {
                cvs.push(cv);
            }
        }
        let mut all: Vec<f64> = medians.iter().map(|m| m.0).collect();
        let (peak, at) =
            medians
                .iter()
                .copied()
                .fold((f64::MIN, (0, 0)), |a, b| if b.0 > a.0 { b } else { a });
        let cv = if cvs.is_empty() {
            "-".to_string()
        } else {
            format!("{:.1}", median(&mut cvs))
        };
        let name = if target.len() > 24 {
            format!("...{}", &target[target.len() - 21..])
        } else {
            target.clone()
        };
        let _ = writeln!(
            out,
            "{:<24} {:<15} {:>5} {:>12.1} {:>12.1}  {:<13} {:>8}",
            name,
            op,
            cells.len(),
            median(&mut all),
            peak,
            format!("{}/{}", format_size(at.0), format_size(at.1)),
            cv
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_cv() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(cv_pct(&[1.0]).is_none());
        let cv = cv_pct(&[9.0, 10.0, 11.0]).unwrap();
        assert!((cv - 10.0).abs() < 1e-9);
    }
}
