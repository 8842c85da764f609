//! Records to the analysis a report shows: cells grouped by (label, op, file size, record
//! size) with statistics over repetitions, every label compared with the baseline, size
//! classes, throughput-mode rows, cache effects, environment, warnings and findings.
//! Only `ok` records count; single-worker records make the matrices and throughput-mode
//! aggregates their own section. Not: rendering (see `html`, `xlsx`, `summary`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{Analysis, CellKey, CellStats, OpData, Source, ThroughputRow};

use crate::load::Loaded;
use crate::stats;
use crate::{cache, classes, compare, env, findings, tails, warnings};
use crate::{ReportError, Result};
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status};
use std::collections::BTreeMap;

/// Analyses loaded records against `baseline` (default: the first label), calling winners
/// at `threshold_pct` (see `compare`).
pub fn analyse(loaded: Loaded, baseline: Option<&str>, threshold_pct: f64) -> Result<Analysis> {
    let labels: Vec<String> = loaded.datasets.iter().map(|d| d.label.clone()).collect();
    let baseline = match baseline {
        Some(b) if labels.iter().any(|l| l == b) => b.to_string(),
        Some(b) => {
            return Err(ReportError(format!(
                "--baseline '{b}' is not one of the labels ({})",
                labels.join(", ")
            )))
        }
        None => labels.first().cloned().unwrap_or_default(),
    };
    let mut records = Vec::new();
    let mut sources = Vec::new();
    for d in loaded.datasets {
        sources.push(Source {
            label: d.label.clone(),
            path: d.source.clone(),
            kind: d.kind,
            target: d.target.clone(),
            records: d.records.len(),
            manifest: d.manifest.clone(),
        });
        records.extend(d.records);
    }
    // The metadata, smallfiles and stream workloads have sections of their own.
    let workload_ok = records
        .iter()
        .any(|r| r.status == Status::Ok && crate::model::is_workload_record(r));
    let ok: Vec<&Record> = records
        .iter()
        .filter(|r| {
            r.status == Status::Ok
                && r.throughput_kib_s.is_finite()
                && r.throughput_kib_s > 0.0
                && !crate::model::is_workload_record(r)
        })
        .collect();
    if ok.is_empty() && !workload_ok {
        return Err(ReportError(
            "no successful measurement in the inputs".into(),
        ));
    }

    let ops = matrices(&ok, &baseline, threshold_pct);

    let throughput = throughput_rows(&ok, &baseline, &labels, threshold_pct);
    let classes = classes::class_rows(&ops, &labels, threshold_pct);
    let cache_flags = cache::detect(&ops, &sources);
    let consistency = tails::consistency(&ops, &labels);
    let run_spread = tails::run_spread(&ops, &labels);
    let env = env::table(&sources, &records);
    let mut warnings = warnings::collect(&ops, &labels, &records);
    warnings.extend(warnings::capped(&labels, &records, &ci_widths(&sources)));
    warnings.extend(warnings::hosts_differ(&sources));
    let mut analysis = Analysis {
        labels,
        baseline,
        sources,
        records,
        ops,
        classes,
        throughput,
        cache_flags,
        consistency,
        run_spread,
        env,
        warnings,
        findings: Vec::new(),
        load_warnings: loaded.warnings,
        threshold_pct,
        load_curves: Vec::new(),
        latency_bound_us: None,
    };
    analysis.load_curves = crate::curves::curves(&analysis.records, &analysis.labels);
    analysis.findings = findings::generate(&analysis);
    analysis.findings.extend(tails::generate(&analysis));
    Ok(analysis)
}

/// The matrices: single-worker records grouped by operation, label and cell, each label
/// compared with the baseline (throughput and p99), in IOzone's order of operations.
/// Each label's `--ci-width`, from its run's manifest, where it sampled with `--reps auto`.
fn ci_widths(sources: &[Source]) -> BTreeMap<String, f64> {
    sources
        .iter()
        .filter_map(|s| Some((s.label.clone(), s.manifest.as_ref()?.plan.auto_reps?.ci_pct)))
        .collect()
}

fn matrices(ok: &[&Record], baseline: &str, threshold_pct: f64) -> Vec<OpData> {
    type Groups<'a> = BTreeMap<Operation, BTreeMap<String, BTreeMap<CellKey, Vec<&'a Record>>>>;
    let mut groups: Groups = BTreeMap::new();
    for r in ok.iter().filter(|r| r.scope == Scope::Single) {
        groups
            .entry(r.op)
            .or_default()
            .entry(r.target.clone())
            .or_default()
            .entry((r.file_size, r.record_size))
            .or_default()
            .push(r);
    }
    let mut ops = Vec::new();
    for (op, per_label) in groups {
        let mut cells: BTreeMap<String, BTreeMap<CellKey, CellStats>> = BTreeMap::new();
        let mut all = std::collections::BTreeSet::new();
        for (label, by_cell) in per_label {
            let stats: BTreeMap<CellKey, CellStats> = by_cell
                .into_iter()
                .map(|(k, recs)| (k, CellStats::from_records(&recs)))
                .collect();
            all.extend(stats.keys().copied());
            cells.insert(label, stats);
        }
        let mut vs_baseline = BTreeMap::new();
        let mut p99_vs_baseline = BTreeMap::new();
        if let Some(base) = cells.get(baseline) {
            let base_p99 = tails::p99_cells(base);
            for (label, c) in &cells {
                if label != baseline {
                    vs_baseline.insert(
                        label.clone(),
                        compare::compare_cells(c, base, threshold_pct),
                    );
                    let p99 =
                        compare::compare_cells(&tails::p99_cells(c), &base_p99, threshold_pct);
                    if !p99.is_empty() {
                        p99_vs_baseline.insert(label.clone(), p99);
                    }
                }
            }
        }
        ops.push(OpData {
            op,
            cells,
            vs_baseline,
            p99_vs_baseline,
            all_cells: all.into_iter().collect(),
        });
    }
    ops
}

fn throughput_rows(
    ok: &[&Record],
    baseline: &str,
    labels: &[String],
    threshold_pct: f64,
) -> Vec<ThroughputRow> {
    type Key = (Operation, u32, u64, u64, usize);
    let mut groups: BTreeMap<Key, BTreeMap<String, Vec<&Record>>> = BTreeMap::new();
    for r in ok.iter().filter(|r| r.scope == Scope::Aggregate) {
        let li = labels
            .iter()
            .position(|l| *l == r.target)
            .unwrap_or(usize::MAX);
        groups
            .entry((r.op, r.threads, r.file_size, r.record_size, 0))
            .or_default()
            .entry(format!("{li:06}\u{1f}{}", r.target))
            .or_default()
            .push(r);
    }
    let mut out = Vec::new();
    for ((op, threads, file_size, record_size, _), per_label) in groups {
        let base_children: Option<CellStats> = per_label
            .iter()
            .find(|(k, _)| k.ends_with(&format!("\u{1f}{baseline}")))
            .map(|(_, v)| CellStats::from_records(v));
        for (key, recs) in per_label {
            let label = key.split('\u{1f}').nth(1).unwrap_or("").to_string();
            let t = |f: fn(&sharebench_core::record::ThroughputSummary) -> f64| {
                stats::median(
                    &recs
                        .iter()
                        .map(|r| r.throughput.as_ref().map(f).unwrap_or(0.0))
                        .collect::<Vec<_>>(),
                )
            };
            let children = CellStats::from_records(&recs);
            let vs_baseline = base_children
                .as_ref()
                .filter(|_| label != baseline)
                .map(|b| compare::rows(&children, b, threshold_pct));
            out.push(ThroughputRow {
                label,
                op,
                threads,
                file_size,
                record_size,
                reps: recs.len(),
                parent_sees: t(|s| s.parent_sees_kib_s),
                min_worker: t(|s| s.min_worker_kib_s),
                max_worker: t(|s| s.max_worker_kib_s),
                avg_worker: t(|s| s.avg_worker_kib_s),
                stonewalled: recs.iter().any(|r| r.stonewalled),
                children,
                vs_baseline,
            });
        }
    }
    compare::adjust_rows(
        out.iter_mut().filter_map(|r| r.vs_baseline.as_mut()),
        threshold_pct,
    );
    out
}
