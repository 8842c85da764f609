//! Records to the analysis a report shows: cells grouped by (label, op, file size, record
//! size) with statistics over repetitions, every label compared with the baseline, size
//! classes, throughput-mode rows, cache effects, environment, warnings and findings.
//! Only `ok` records count; single-worker records make the matrices and throughput-mode
//! aggregates their own section. Not: rendering (see `html`, `xlsx`, `summary`).

use crate::cache::{self, CacheFlag};
use crate::classes::{self, ClassRow};
use crate::compare::{self, Comparison};
use crate::env::{self, EnvTable};
use crate::findings::{self, Finding};
use crate::load::{Kind, Loaded};
use crate::stats;
use crate::tails::{self, Consistency, Tail};
use crate::warnings::{self, Warning};
use crate::{ReportError, Result};
use sharebench_core::manifest::Manifest;
use sharebench_core::op::Op;
use sharebench_core::record::{Record, Scope, Status};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// (file size, record size) in bytes.
pub type CellKey = (u64, u64);

/// One cell of one label and operation, over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct CellStats {
    /// Throughputs (KiB/s), one per repetition, in repetition order.
    pub values: Vec<f64>,
    /// The repetition of each value, and the run they all come from (`None` when they
    /// come from several): two cells of one run are paired by repetition, as the engine
    /// measured them side by side.
    pub reps: Vec<u32>,
    pub run_id: Option<String>,
    /// Per run the values come from, the median of that run's values: the replicates
    /// when a label's records come from several runs (`compare::Design`).
    pub by_run: BTreeMap<String, f64>,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation, percent; `None` for one repetition.
    pub cv: Option<f64>,
    /// Distribution-free 95% interval of the median (order statistics); `None` below six
    /// repetitions, where no such interval reaches 95%.
    pub ci: Option<(f64, f64)>,
    /// Median timed seconds.
    pub seconds: f64,
    /// Median CPU utilisation (percent of one CPU), when recorded.
    pub cpu_pct: Option<f64>,
    /// Median CPU utilisation of the server processes (lab servers), when recorded.
    pub server_cpu_pct: Option<f64>,
    /// Median MiB moved per CPU second, when CPU was recorded.
    pub mib_per_cpu_s: Option<f64>,
    /// Repetitions that are outliers (Tukey's fences), by index into `values`.
    pub outliers: Vec<stats::Outlier>,
    /// Latency percentiles over the repetitions; `None` where none was recorded
    /// (imported IOzone figures).
    pub tail: Option<Tail>,
}

impl CellStats {
    /// A cell of one repetition with this median and nothing else recorded (for tests and
    /// examples).
    pub fn single(median: f64) -> CellStats {
        CellStats::of_values(vec![median], vec![0], None)
    }

    /// A cell of these values (one per repetition `reps`, all of run `run_id` when
    /// `Some`) and nothing else recorded: what a comparison needs of any measure.
    pub fn of_values(values: Vec<f64>, reps: Vec<u32>, run_id: Option<String>) -> CellStats {
        CellStats {
            median: stats::median(&values),
            mean: stats::mean(&values),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            cv: stats::cv_pct(&values),
            ci: stats::median_ci(&values),
            seconds: 1.0,
            cpu_pct: None,
            server_cpu_pct: None,
            mib_per_cpu_s: None,
            outliers: stats::outliers(&values),
            tail: None,
            by_run: run_id
                .iter()
                .map(|r| (r.clone(), stats::median(&values)))
                .collect(),
            values,
            reps,
            run_id,
        }
    }

    pub fn from_records(recs: &[&Record]) -> CellStats {
        let values: Vec<f64> = recs.iter().map(|r| r.throughput_kib_s).collect();
        let cpu: Vec<f64> = recs
            .iter()
            .filter(|r| r.cpu_util_pct > 0.0)
            .map(|r| r.cpu_util_pct)
            .collect();
        let server: Vec<f64> = recs.iter().filter_map(|r| r.server_cpu_util_pct).collect();
        let per_cpu: Vec<f64> = recs
            .iter()
            .filter(|r| r.cpu_total_s > 0.0)
            .map(|r| r.bytes as f64 / (1 << 20) as f64 / r.cpu_total_s)
            .collect();
        let run_id = recs
            .first()
            .map(|r| r.run_id.clone())
            .filter(|id| !id.is_empty() && recs.iter().all(|r| &r.run_id == id));
        CellStats {
            seconds: stats::median(&recs.iter().map(|r| r.seconds).collect::<Vec<_>>()),
            cpu_pct: (!cpu.is_empty()).then(|| stats::median(&cpu)),
            server_cpu_pct: (!server.is_empty()).then(|| stats::median(&server)),
            mib_per_cpu_s: (!per_cpu.is_empty()).then(|| stats::median(&per_cpu)),
            tail: Tail::from_records(recs),
            by_run: by_run(recs),
            ..CellStats::of_values(values, recs.iter().map(|r| r.rep).collect(), run_id)
        }
    }
}

/// Per run id of `recs` (records without one are left out), the median throughput.
fn by_run(recs: &[&Record]) -> BTreeMap<String, f64> {
    let mut runs: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in recs.iter().filter(|r| !r.run_id.is_empty()) {
        runs.entry(r.run_id.clone())
            .or_default()
            .push(r.throughput_kib_s);
    }
    runs.into_iter()
        .map(|(id, v)| (id, stats::median(&v)))
        .collect()
}

/// Everything about one operation.
#[derive(Debug, Clone)]
pub struct OpData {
    pub op: String,
    /// label -> cell -> statistics.
    pub cells: BTreeMap<String, BTreeMap<CellKey, CellStats>>,
    /// label (not the baseline) -> cell -> comparison with the baseline.
    pub vs_baseline: BTreeMap<String, BTreeMap<CellKey, Comparison>>,
    /// label (not the baseline) -> cell -> its p99 latency against the baseline's (ratio
    /// above 1: the longer tail), on the cells both recorded latency for.
    pub p99_vs_baseline: BTreeMap<String, BTreeMap<CellKey, Comparison>>,
    /// Every cell any label has, sorted.
    pub all_cells: Vec<CellKey>,
}

impl OpData {
    pub fn file_sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.all_cells.iter().map(|c| c.0).collect();
        v.dedup();
        v
    }

    pub fn record_sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.all_cells.iter().map(|c| c.1).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// A throughput-mode result (aggregate records) over repetitions.
#[derive(Debug, Clone)]
pub struct ThroughputRow {
    pub label: String,
    pub op: String,
    pub threads: u32,
    pub file_size: u64,
    pub record_size: u64,
    pub reps: usize,
    pub children: CellStats,
    pub parent_sees: f64,
    pub min_worker: f64,
    pub max_worker: f64,
    pub avg_worker: f64,
    pub stonewalled: bool,
    /// Ratio of children-see medians against the baseline's same row, and Welch's p.
    pub vs_baseline: Option<(f64, Option<f64>)>,
}

/// Where a dataset came from, for the report's inputs table.
#[derive(Debug, Clone)]
pub struct Source {
    pub label: String,
    pub path: PathBuf,
    pub kind: Kind,
    pub target: String,
    pub records: usize,
    pub manifest: Option<Manifest>,
}

/// The whole analysis.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub labels: Vec<String>,
    pub baseline: String,
    pub sources: Vec<Source>,
    /// Every record loaded (all statuses), labels applied: the CSV.
    pub records: Vec<Record>,
    pub ops: Vec<OpData>,
    pub classes: Vec<ClassRow>,
    pub throughput: Vec<ThroughputRow>,
    pub cache_flags: Vec<CacheFlag>,
    /// Run-to-run and within-run steadiness, per operation and label.
    pub consistency: Vec<Consistency>,
    pub env: EnvTable,
    pub warnings: Vec<Warning>,
    pub findings: Vec<Finding>,
    /// Problems met while loading (cut-off lines, unit conversions).
    pub load_warnings: Vec<String>,
    /// The smallest difference, in percent, that calls a winner (`--threshold`).
    pub threshold_pct: f64,
}

/// Sort key of an operation name: IOzone's order, unknown names last.
pub fn op_order(op: &str) -> (usize, String) {
    let i = op
        .parse::<Op>()
        .ok()
        .and_then(|o| Op::ALL.iter().position(|x| *x == o))
        .unwrap_or(usize::MAX);
    (i, op.to_string())
}

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
        .any(|r| r.status == Status::Ok && crate::workloads::is_workload_record(r));
    let ok: Vec<&Record> = records
        .iter()
        .filter(|r| {
            r.status == Status::Ok
                && r.throughput_kib_s.is_finite()
                && r.throughput_kib_s > 0.0
                && !crate::workloads::is_workload_record(r)
        })
        .collect();
    if ok.is_empty() && !workload_ok {
        return Err(ReportError(
            "no successful measurement in the inputs".into(),
        ));
    }

    // Matrices: single-worker records.
    type Groups<'a> =
        BTreeMap<(usize, String), BTreeMap<String, BTreeMap<CellKey, Vec<&'a Record>>>>;
    let mut groups: Groups = BTreeMap::new();
    for r in ok.iter().filter(|r| r.scope == Scope::Single) {
        groups
            .entry(op_order(&r.op))
            .or_default()
            .entry(r.target.clone())
            .or_default()
            .entry((r.file_size, r.record_size))
            .or_default()
            .push(r);
    }
    let mut ops = Vec::new();
    for ((_, op), per_label) in groups {
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
        if let Some(base) = cells.get(&baseline) {
            let base_p99 = tails::p99_cells(base);
            for (label, c) in &cells {
                if *label != baseline {
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

    let throughput = throughput_rows(&ok, &baseline, &labels);
    let classes = classes::class_rows(&ops, &labels, threshold_pct);
    let cache_flags = cache::detect(&ops, &sources);
    let consistency = tails::consistency(&ops, &labels);
    let env = env::table(&sources, &records);
    let mut warnings = warnings::collect(&ops, &labels, &records);
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
        env,
        warnings,
        findings: Vec::new(),
        load_warnings: loaded.warnings,
        threshold_pct,
    };
    analysis.findings = findings::generate(&analysis);
    analysis.findings.extend(tails::generate(&analysis));
    Ok(analysis)
}

fn throughput_rows(ok: &[&Record], baseline: &str, labels: &[String]) -> Vec<ThroughputRow> {
    type Key = ((usize, String), u32, u64, u64, usize);
    let mut groups: BTreeMap<Key, BTreeMap<String, Vec<&Record>>> = BTreeMap::new();
    for r in ok.iter().filter(|r| r.scope == Scope::Aggregate) {
        let li = labels
            .iter()
            .position(|l| *l == r.target)
            .unwrap_or(usize::MAX);
        groups
            .entry((op_order(&r.op), r.threads, r.file_size, r.record_size, 0))
            .or_default()
            .entry(format!("{li:06}\u{1f}{}", r.target))
            .or_default()
            .push(r);
    }
    let mut out = Vec::new();
    for ((order, threads, file_size, record_size, _), per_label) in groups {
        let base_values: Option<Vec<f64>> = per_label
            .iter()
            .find(|(k, _)| k.ends_with(&format!("\u{1f}{baseline}")))
            .map(|(_, v)| v.iter().map(|r| r.throughput_kib_s).collect());
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
            let vs_baseline = match (&base_values, label == baseline) {
                (Some(b), false) => {
                    let bm = stats::median(b);
                    let p = if recs.len() >= compare::MIN_REPS && b.len() >= compare::MIN_REPS {
                        stats::welch_log_p(&children.values, b)
                    } else {
                        None
                    };
                    Some((children.median / bm, p))
                }
                _ => None,
            };
            out.push(ThroughputRow {
                label,
                op: order.1.clone(),
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
    out
}
