//! The terminal summary right after `run`, for every workload: for the IOzone matrix per
//! target and operation the median throughput over cells, the peak cell, the spread across
//! repetitions, the operations per second at records up to 64 KiB and the p99 latency; a
//! line per load point; the median rate of each operation of the other workloads. A
//! glance from the run's own records, with no comparison: comparing is the analysis's
//! (`sharebench report`, whose terminal lines are `super::render`).

use crate::format;
use crate::stats::{cv_pct, median};
use crate::tails::{iops, IOPS_MAX_RECORD};
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status, WorkloadKind};
use sharebench_core::size::format_size;
use std::collections::BTreeMap;
use std::io::Write;

/// Prints the summary of the records of a run of workload `kind`.
pub fn print(kind: WorkloadKind, records: &[Record], out: &mut dyn Write) {
    match kind {
        WorkloadKind::Iozone => {
            print_matrix(records, out);
            let _ = writeln!(
                out,
                "(rep CV%: the median over cells of the run-to-run variation across repetitions; - = one repetition, nothing to vary)"
            );
        }
        WorkloadKind::Load => print_load(records, out),
        _ => print_workload_summary(records, out),
    }
}

fn print_matrix(records: &[Record], out: &mut dyn Write) {
    // (target, op order, op) -> (file, record) -> (KiB/s, p99 µs) over repetitions
    type Cells = BTreeMap<(u64, u64), Vec<(f64, f64)>>;
    let mut groups: BTreeMap<(String, usize, Operation), Cells> = BTreeMap::new();
    let mut order: Vec<Operation> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.status == Status::Ok && r.scope != Scope::Worker)
    {
        let pos = order.iter().position(|o| *o == r.op).unwrap_or_else(|| {
            order.push(r.op);
            order.len() - 1
        });
        groups
            .entry((r.target.clone(), pos, r.op))
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
        let name = short_name(target);
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
fn print_load(records: &[Record], out: &mut dyn Write) {
    // (target, point) -> records over repetitions
    let mut points: BTreeMap<(String, u32), Vec<&Record>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.status == Status::Ok && r.scope != Scope::Worker && r.op == Operation::Load)
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

/// Values over repetitions, their unit, and extents per file.
type Group = (Vec<f64>, &'static str, Option<f64>);

/// The terminal summary of the metadata, smallfiles and stream workloads: per target and
/// operation, the median over repetitions of its rate (operations/s, or MiB/s for data).
fn print_workload_summary(records: &[Record], out: &mut dyn Write) {
    // (target, order, label) -> (values, unit, extents)
    let mut groups: BTreeMap<(String, usize, String), Group> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.status == Status::Ok && r.scope != Scope::Worker)
    {
        let g = &r.figures;
        let mut label = r.op.to_string();
        if let Some(t) = &g.test {
            label = format!("{t} {label}");
        }
        if let Some(n) = g.streams {
            label = format!("{label} x{n}");
        } else if r.workload == WorkloadKind::Metadata && r.bytes > 0 {
            label = format!("{label} {}", format_size(r.file_size));
        } else if r.workload == WorkloadKind::Metadata && g.dirs.is_some() && g.files.is_some() {
            label = format!("{label} n={}", g.files.unwrap_or(0));
        }
        let (value, unit) = if r.bytes > 0 || r.workload == WorkloadKind::Stream {
            (r.throughput_kib_s / 1024.0, "MiB/s")
        } else {
            (g.ops_per_s.unwrap_or(0.0), "ops/s")
        };
        let pos = order.iter().position(|o| o == &label).unwrap_or_else(|| {
            order.push(label.clone());
            order.len() - 1
        });
        let e = groups
            .entry((r.target.clone(), pos, label))
            .or_insert((Vec::new(), unit, None));
        e.0.push(value);
        if r.workload == WorkloadKind::Smallfiles {
            e.1 = "files/s";
            *e.0.last_mut().unwrap_or(&mut 0.0) = g.ops_per_s.unwrap_or(0.0);
        }
        if g.extents_per_file.is_some() {
            e.2 = g.extents_per_file;
        }
    }
    if groups.is_empty() {
        let _ = writeln!(out, "No successful measurements.");
        return;
    }
    let _ = writeln!(
        out,
        "{:<24} {:<30} {:>12} {:<8} {:>5} {:>9}",
        "target", "operation", "median", "unit", "reps", "extents"
    );
    for ((target, _, label), (values, unit, extents)) in &groups {
        let median = median(values);
        let name = short_name(target);
        let ext = extents
            .map(|e| format!("{e:.0}"))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{name:<24} {label:<30} {median:>12.1} {unit:<8} {:>5} {ext:>9}",
            values.len()
        );
    }
}

/// A target's name in 24 columns: its last 21 characters after "..." when longer.
fn short_name(target: &str) -> String {
    let n = target.chars().count();
    if n > 24 {
        format!("...{}", target.chars().skip(n - 21).collect::<String>())
    } else {
        target.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn long_names_keep_their_end_and_never_split_a_character() {
        assert_eq!(short_name("/dev/shm"), "/dev/shm");
        let long = "/mnt/ééééééééééééééééééééééééé/x";
        let s = short_name(long);
        assert!(s.starts_with("...") && s.ends_with("é/x"), "{s}");
        assert_eq!(s.chars().count(), 24);
    }
}
