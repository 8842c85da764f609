//! The terminal summary after `run`: per target and operation, the median throughput over
//! cells, the peak cell, the spread across repetitions, the operations per second at
//! records up to 64 KiB and the p99 latency. A glance, not the analysis
//! (that is `sharebench report`).

use sharebench_core::record::{Record, Scope, Status};
use sharebench_core::size::format_size;
use sharebench_report::format;
use sharebench_report::stats::{cv_pct, median};
use sharebench_report::tails::{iops, IOPS_MAX_RECORD};
use std::collections::BTreeMap;
use std::io::Write;

pub fn print(records: &[Record], out: &mut dyn Write) {
    // (target, op order, op) -> (file, record) -> (KiB/s, p99 µs) over repetitions
    type Cells = BTreeMap<(u64, u64), Vec<(f64, f64)>>;
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
            .push((r.throughput_kib_s, r.latency.lat_p99_us));
    }
    if groups.is_empty() {
        let _ = writeln!(out, "No successful measurements.");
        return;
    }
    let _ = writeln!(
        out,
        "{:<24} {:<15} {:>5} {:>12} {:>12}  {:<13} {:>8} {:>9} {:>9}",
        "target",
        "op",
        "cells",
        "median MiB/s",
        "peak MiB/s",
        "peak at",
        "rep CV%",
        "ops/s≤64k",
        "p99"
    );
    for ((target, _, op), cells) in &groups {
        let mut medians: Vec<(f64, (u64, u64))> = Vec::new();
        let mut cvs: Vec<f64> = Vec::new();
        let mut ops: Vec<f64> = Vec::new();
        let mut p99: Vec<f64> = Vec::new();
        for (cell, reps) in cells {
            let kib: Vec<f64> = reps.iter().map(|r| r.0).collect();
            let m = median(&kib);
            medians.push((m / 1024.0, *cell));
            if let Some(cv) = cv_pct(&kib) {
                cvs.push(cv);
            }
            if cell.1 > 0 && cell.1 <= IOPS_MAX_RECORD {
                ops.push(iops(m, cell.1));
            }
            let lat: Vec<f64> = reps.iter().map(|r| r.1).filter(|v| *v > 0.0).collect();
            if !lat.is_empty() {
                p99.push(median(&lat));
            }
        }
        let or_dash = |v: &[f64], f: fn(f64) -> String| {
            if v.is_empty() {
                "-".to_string()
            } else {
                f(median(v))
            }
        };
        let all: Vec<f64> = medians.iter().map(|m| m.0).collect();
        let (peak, at) =
            medians
                .iter()
                .copied()
                .fold((f64::MIN, (0, 0)), |a, b| if b.0 > a.0 { b } else { a });
        let cv = if cvs.is_empty() {
            "-".to_string()
        } else {
            format!("{:.1}", median(&cvs))
        };
        let name = if target.len() > 24 {
            format!("...{}", &target[target.len() - 21..])
        } else {
            target.clone()
        };
        let _ = writeln!(
            out,
            "{:<24} {:<15} {:>5} {:>12.1} {:>12.1}  {:<13} {:>8} {:>9} {:>9}",
            name,
            op,
            cells.len(),
            median(&all),
            peak,
            format!("{}/{}", format_size(at.0), format_size(at.1)),
            cv,
            or_dash(&ops, format::ops),
            or_dash(&p99, format::latency)
        );
    }
}

/// The terminal summary of the load workload: per target, one line per load point with the
/// requested and achieved rates, latency (from the schedule), throughput and client CPU per
/// request; medians over repetitions, and a point counts as valid when every repetition
/// was.
pub fn print_load(records: &[Record], out: &mut dyn Write) {
    // (target, point) -> records over repetitions
    let mut points: BTreeMap<(String, u32), Vec<&Record>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.status == Status::Ok && r.scope != Scope::Worker && r.op == "load")
    {
        if !order.contains(&r.target.as_str()) {
            order.push(&r.target);
        }
        let point = r.figures.load_point.unwrap_or(0);
        points.entry((r.target.clone(), point)).or_default().push(r);
    }
    for target in order {
        let mix = records
            .iter()
            .find_map(|r| {
                (r.target == target)
                    .then(|| r.figures.mix.clone())
                    .flatten()
            })
            .unwrap_or_default();
        let _ = writeln!(out, "{target}: load mix {mix}");
        let _ = writeln!(
            out,
            "  {:>6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}  valid",
            "point", "asked/s", "done/s", "p50 ms", "p99 ms", "svc p99", "MiB/s", "CPU µs"
        );
        for ((_, point), recs) in points.iter().filter(|((t, _), _)| t == target) {
            let med =
                |f: fn(&Record) -> f64| median(&recs.iter().map(|r| f(r)).collect::<Vec<_>>());
            let valid = recs.iter().all(|r| r.figures.valid == Some(true));
            let _ = writeln!(
                out,
                "  {:>6} {:>10.0} {:>10.0} {:>9.3} {:>9.3} {:>9.3} {:>9.1} {:>8.1}  {}",
                point + 1,
                med(|r| r.figures.requested_ops_s.unwrap_or(0.0)),
                med(|r| r.figures.ops_per_s.unwrap_or(0.0)),
                med(|r| r.latency.lat_p50_us) / 1000.0,
                med(|r| r.latency.lat_p99_us) / 1000.0,
                med(|r| r.figures.service_p99_us.unwrap_or(0.0)) / 1000.0,
                med(|r| r.throughput_kib_s) / 1024.0,
                med(|r| r.cpu_total_s / r.figures.count.unwrap_or(0).max(1) as f64) * 1e6,
                if valid { "yes" } else { "no" },
            );
        }
    }
    let _ = writeln!(
        out,
        "(latency from when each request was due; svc p99: from when it was issued; CPU µs: this process's CPU per request; valid: achieved at least 99% of asked)"
    );
}
