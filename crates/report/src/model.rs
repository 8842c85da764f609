//! The report's model: the types every stage shares, and nothing that computes a
//! comparison or renders one. Cells and their statistics over repetitions (and their
//! latency tails), operations, size classes, comparisons and their verdicts, cache
//! flags, the environment table, warnings, findings, consistency and the whole
//! analysis. Analysis fills them (see `analysis` and the modules it calls); renderers
//! read them (`html`, `xlsx`, `summary`). Defining them here, apart from the code that
//! fills them, keeps the crate free of import cycles.

use crate::load::Kind;
use crate::stats;
use sharebench_core::latency::LatencySummary;
use sharebench_core::manifest::Manifest;
use sharebench_core::operation::Operation;
use sharebench_core::record::Record;
use std::collections::BTreeMap;
use std::path::PathBuf;

// ---- Cells, operations and the whole analysis -------------------------------------

/// The workloads with report sections of their own (`workloads`); their records stay
/// out of the IOzone matrices.
pub fn is_workload_record(r: &Record) -> bool {
    use sharebench_core::record::WorkloadKind as W;
    matches!(
        r.workload,
        W::Metadata | W::Smallfiles | W::Stream | W::Load
    )
}

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
        let per_cpu: Vec<f64> = recs.iter().filter_map(|r| mib_per_cpu_s(r)).collect();
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

/// MiB a record moved per CPU second of the client; `None` where no CPU was recorded.
pub(crate) fn mib_per_cpu_s(r: &Record) -> Option<f64> {
    (r.cpu_total_s > 0.0).then(|| r.bytes as f64 / (1u64 << 20) as f64 / r.cpu_total_s)
}

/// Per run id of `recs` (records without one are left out), the median throughput.
pub(crate) fn by_run(recs: &[&Record]) -> BTreeMap<String, f64> {
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
    pub op: Operation,
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
    pub op: Operation,
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
    /// Children-see throughput against the baseline's same row (`compare::rows`).
    pub vs_baseline: Option<RowVersus>,
}

/// A throughput-mode row against another (the baseline's, or the other side of a claim),
/// judged alone. Unlike a cell's `Comparison`, whose ratio is of medians and is summed up
/// with the other cells', the ratio here is the centre of its own interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowVersus {
    /// Each side's geometric mean (over the repetitions both have, when paired); the
    /// medians when not testable.
    pub typical: (f64, f64),
    /// 95% interval of the ratio; `None` when not testable.
    pub ci: Option<(f64, f64)>,
    /// Two-sided p: a paired t on log ratios, or Welch's on logs.
    pub p: Option<f64>,
    /// `p` adjusted over the report's throughput-mode rows (Benjamini-Hochberg), which
    /// the verdict then reads; `None` for a row judged alone (a claim's).
    pub q: Option<f64>,
    /// Paired by repetition (both rows from one run), else Welch's.
    pub paired: bool,
    pub verdict: Verdict,
}

impl RowVersus {
    /// The ratio of the two typical figures, target's over the other's.
    pub fn ratio(&self) -> f64 {
        self.typical.0 / self.typical.1
    }

    /// In words, what the ratio compares and the test behind its p, for a reader:
    /// ("geometric means, paired by repetition", "paired t").
    pub fn basis(&self) -> (&'static str, &'static str) {
        match (self.ci, self.paired) {
            (None, _) => ("medians", "no test"),
            (Some(_), true) => ("geometric means, paired by repetition", "paired t"),
            (Some(_), false) => ("geometric means", "Welch"),
        }
    }
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
    /// Per label of several runs, the spread of its cell medians across them.
    pub run_spread: Vec<RunSpread>,
    pub env: EnvTable,
    pub warnings: Vec<Warning>,
    pub findings: Vec<Finding>,
    /// Problems met while loading (cut-off lines, unit conversions).
    pub load_warnings: Vec<String>,
    /// The smallest difference, in percent, that calls a winner (`--threshold`).
    pub threshold_pct: f64,
    /// The load workload's curves, per label.
    pub load_curves: Vec<crate::curves::LoadCurve>,
    /// The p99 bound the curves are read at (`--latency-bound`), µs.
    pub latency_bound_us: Option<f64>,
}

// ---- Comparisons and their verdicts ------------------------------------------------

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significantly faster, by at least the threshold.
    Faster,
    Slower,
    /// The 95% interval of the ratio lies within the threshold either way.
    Equivalent,
    /// Neither: too noisy, or significant but smaller than the threshold with an interval
    /// that reaches beyond it.
    Inconclusive,
    NotTestable,
}

/// In verdicts.json by its name.
impl serde::Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Verdict {
    /// Its name in a table or a file: `faster`, ..., `not-testable`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotTestable => "not-testable",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Verdict::Faster => "faster (significant, beyond the threshold)",
            Verdict::Slower => "slower (significant, beyond the threshold)",
            Verdict::Equivalent => "equivalent within the threshold",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotTestable => "not testable (< 3 repetitions a side)",
        }
    }

    /// As `describe`, for a measure where the higher value is the worse (latency): a
    /// "faster" ratio above 1 is the longer tail.
    pub fn describe_lower_is_better(self) -> &'static str {
        match self {
            Verdict::Faster => "longer (significant, beyond the threshold)",
            Verdict::Slower => "shorter (significant, beyond the threshold)",
            other => other.describe(),
        }
    }

    /// Faster or slower: a winner was called.
    pub fn decided_winner(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }
}

/// What a cell's replicates are, and so how its two sides are compared.
#[derive(Debug, Clone, PartialEq)]
pub enum Design {
    /// Both sides of one run, measured side by side: paired by repetition.
    Repetitions,
    /// Both sides in each of several runs (labels that several inputs share, each input
    /// a run): paired by run, a run's median its value.
    PairedRuns,
    /// Each side from several runs of its own (IOzone's users run each configuration N
    /// times): the runs are the replicates, compared unpaired (Welch) on their medians.
    /// The per-run log medians of each side, by run.
    Runs(BTreeMap<String, f64>, BTreeMap<String, f64>),
    /// One block of time a side (two separate runs, or too few runs): a ratio, never a
    /// verdict.
    OneBlockEach,
}

/// One cell, target against baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Target median over baseline median.
    pub ratio: f64,
    /// 95% interval of the ratio (on logarithms); `None` when not testable.
    pub ci: Option<(f64, f64)>,
    pub design: Design,
    /// The log ratio of each replicate both sides have, by replicate ("rep 3", "run
    /// ID"; paired designs only): the replicates of a summary over cells.
    pub rep_logs: Vec<(String, f64)>,
    /// The test's p, two-sided: a paired t on logs, or Welch's.
    pub p: Option<f64>,
    /// `p` adjusted over the operation's cells (Benjamini-Hochberg).
    pub q: Option<f64>,
    /// Mann-Whitney U, two-sided (exact for small samples).
    pub p_mwu: Option<f64>,
    pub verdict: Verdict,
}

impl Comparison {
    /// Paired, by repetition or by run.
    pub fn paired(&self) -> bool {
        matches!(self.design, Design::Repetitions | Design::PairedRuns)
    }
}

/// What a summary over cells used as its replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replicates {
    /// Repetitions measured side by side in one run (every cell of that repetition
    /// together): this many, common to every cell.
    Repetitions(usize),
    /// Runs that measured both sides, paired by run: this many, common to every cell.
    PairedRuns(usize),
    /// Runs of each side's own (target's, baseline's), compared unpaired on each run's
    /// mean log over the cells.
    Runs(usize, usize),
    /// The cells come from separate runs: one block of time a side, so no interval and no
    /// verdict, whatever the number of cells.
    SeparateRuns,
}

impl Replicates {
    /// "6 paired repetitions", "separate runs (one block of time each)".
    pub fn describe(self) -> String {
        match self {
            Replicates::Repetitions(n) => format!("{n} paired repetitions"),
            Replicates::PairedRuns(n) => format!("{n} runs, paired by run"),
            Replicates::Runs(a, b) => format!("{a} runs against {b}, each run a replicate"),
            Replicates::SeparateRuns => {
                "separate runs: one block of time each, never significant".into()
            }
        }
    }
}

/// A summary over many cells of one side against another. Its replicates are the
/// repetitions of one run: per repetition, the mean log ratio over the cells; the
/// geometric mean ratio, its 95% t-interval and p come from those, so a drift of the
/// machine between repetitions is counted, and 324 cells of one block are not 324
/// replicates. Also how many cells were faster, slower or equivalent, and the verdict at
/// the threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Overall {
    pub cells: usize,
    /// Geometric mean ratio: over cells and common repetitions when paired; over the
    /// cells' median ratios for separate runs.
    pub geo_ratio: f64,
    /// 95% t-interval of the geometric mean ratio over the repetitions.
    pub ci: Option<(f64, f64)>,
    /// One-sample t-test of the repetitions' mean log ratios.
    pub p: Option<f64>,
    pub replicates: Replicates,
    pub faster: usize,
    pub slower: usize,
    pub equivalent: usize,
    pub testable: usize,
    pub verdict: Verdict,
}

// ---- Size classes -------------------------------------------------------------------

pub(crate) const MIB: u64 = 1 << 20;

pub(crate) const GIB: u64 = 1 << 30;

/// A file-size class.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SizeClass {
    Small,
    Medium,
    Large,
    #[serde(alias = "very large", alias = "verylarge")]
    VeryLarge,
}

impl SizeClass {
    pub const ALL: [SizeClass; 4] = [
        SizeClass::Small,
        SizeClass::Medium,
        SizeClass::Large,
        SizeClass::VeryLarge,
    ];

    /// The class of a file size; sizes between the seed's bounds go to the class below.
    pub fn of(file_size: u64) -> SizeClass {
        if file_size < MIB {
            SizeClass::Small
        } else if file_size < 32 * MIB {
            SizeClass::Medium
        } else if file_size < GIB {
            SizeClass::Large
        } else {
            SizeClass::VeryLarge
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Large => "large",
            SizeClass::VeryLarge => "very large",
        }
    }

    pub fn range(self) -> &'static str {
        match self {
            SizeClass::Small => "4-512 KiB",
            SizeClass::Medium => "1-16 MiB",
            SizeClass::Large => "32-512 MiB",
            SizeClass::VeryLarge => ">= 1 GiB",
        }
    }
}

/// One label in one class of one operation.
#[derive(Debug, Clone)]
pub struct ClassStat {
    pub label: String,
    pub cells: usize,
    /// Median over the class's cells of the cell medians (KiB/s).
    pub median: f64,
    /// The best cell median and its cell.
    pub peak: f64,
    pub peak_cell: CellKey,
    /// Median over the cells of the per-cell CV across repetitions (run-to-run stability).
    pub cv: Option<f64>,
    pub cpu_pct: Option<f64>,
    /// Median server CPU utilisation, where recorded (lab servers).
    pub server_cpu_pct: Option<f64>,
    pub mib_per_cpu_s: Option<f64>,
    /// Median operations per second over the cells with records up to 64 KiB
    /// (`tails::IOPS_MAX_RECORD`).
    pub iops: Option<f64>,
    /// Median over the cells of the cell's p99 latency (µs), where recorded.
    pub p99_us: Option<f64>,
}

/// One operation and class, every label, and who wins.
#[derive(Debug, Clone)]
pub struct ClassRow {
    pub op: Operation,
    pub class: SizeClass,
    pub stats: Vec<ClassStat>,
    pub winner: Option<String>,
    pub runner_up: Option<String>,
    /// Winner over runner-up, on the cells both have.
    pub versus: Option<Overall>,
}

impl ClassRow {
    pub fn stat(&self, label: &str) -> Option<&ClassStat> {
        self.stats.iter().find(|s| s.label == label)
    }

    /// Margin of the winner in percent (geometric mean of per-cell ratios - 1).
    pub fn margin_pct(&self) -> Option<f64> {
        self.versus.as_ref().map(|v| (v.geo_ratio - 1.0) * 100.0)
    }

    /// A winner was called: faster, significantly and by at least the threshold.
    pub fn winner_called(&self) -> bool {
        self.versus
            .as_ref()
            .is_some_and(|v| v.verdict.decided_winner())
    }
}

// ---- Cache effects ------------------------------------------------------------------

/// One cliff: label, operation, the file sizes around it and the factor.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheFlag {
    pub label: String,
    pub op: Operation,
    /// The smaller file with the best throughput at the record size, and its median.
    pub from_file: u64,
    pub from_kib_s: f64,
    /// The first larger file that is more than 2x slower, and its median.
    pub to_file: u64,
    pub to_kib_s: f64,
    pub record_size: u64,
    /// How many record sizes show the same cliff at this file size.
    pub record_sizes_affected: usize,
    /// The client's memory (manifest), when known.
    pub ram_bytes: Option<u64>,
}

impl CacheFlag {
    pub fn factor(&self) -> f64 {
        self.from_kib_s / self.to_kib_s
    }
}

// ---- The environment table ---------------------------------------------------------

/// Rows of (what, value per label, differs).
#[derive(Debug, Clone, Default)]
pub struct EnvTable {
    pub labels: Vec<String>,
    pub rows: Vec<EnvRow>,
}

#[derive(Debug, Clone)]
pub struct EnvRow {
    pub name: String,
    pub values: Vec<String>,
    pub differs: bool,
}

// ---- Warnings -----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WarnKind {
    Failed,
    SingleRep,
    TooShort,
    HighVariation,
    Outliers,
    Disturbed,
    Capped,
    HostsDiffer,
}

impl WarnKind {
    pub fn name(self) -> &'static str {
        match self {
            WarnKind::Failed => "failed measurements",
            WarnKind::SingleRep => "single repetition",
            WarnKind::TooShort => "too short to time",
            WarnKind::HighVariation => "high variation",
            WarnKind::Outliers => "outliers",
            WarnKind::Disturbed => "disturbed by others",
            WarnKind::Capped => "stopped at a cap",
            WarnKind::HostsDiffer => "client hosts differ",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Warning {
    pub kind: WarnKind,
    pub label: String,
    /// The operation it concerns; `None` for the label or run as a whole.
    pub op: Option<Operation>,
    pub text: String,
    /// How many cells or measurements it concerns: the worst of a kind comes first.
    pub affected: usize,
}

/// The warnings of one kind, worst first: one line of the report.
#[derive(Debug, Clone)]
pub struct WarningGroup<'a> {
    pub kind: WarnKind,
    pub items: Vec<&'a Warning>,
}

impl WarningGroup<'_> {
    /// The series it concerns, compactly: "a: write, read; b: write" (labels in order
    /// of their worst warning).
    pub fn series(&self) -> String {
        let mut labels: Vec<(&str, Vec<&str>)> = Vec::new();
        for w in &self.items {
            match labels.iter_mut().find(|(l, _)| *l == w.label) {
                Some((_, ops)) => ops.extend(w.op.map(Operation::name)),
                None => labels.push((&w.label, w.op.map(Operation::name).into_iter().collect())),
            }
        }
        labels
            .into_iter()
            .map(|(l, ops)| {
                if ops.is_empty() {
                    l.to_string()
                } else {
                    format!("{l}: {}", ops.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

// ---- Findings -----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topic {
    /// The answer per operation over all cells.
    Overall,
    SizeClass,
    Cpu,
    Cache,
    ThroughputMode,
    /// Latency tails against the baseline (see `tails`).
    Latency,
    /// Which target is the steadier: observed, not tested.
    Consistency,
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub topic: Topic,
    /// The operation it concerns; `None` for the label or run as a whole.
    pub op: Option<Operation>,
    pub text: String,
    /// `Some(true)` a winner called (significant and beyond the threshold), `Some(false)`
    /// tested without one, `None` not testable.
    pub significant: Option<bool>,
}

// ---- Latency tails and consistency -------------------------------------------------

/// The percentiles a cell keeps, in order, with their names.
pub const PERCENTILES: [&str; 6] = ["p50", "p90", "p99", "p99.9", "p99.99", "max"];

pub(crate) fn percentiles(l: &LatencySummary) -> [f64; 6] {
    [
        l.lat_p50_us,
        l.lat_p90_us,
        l.lat_p99_us,
        l.lat_p999_us,
        l.lat_p9999_us,
        l.lat_max_us,
    ]
}

/// The latency of one cell over its repetitions, in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    /// The median over repetitions of each of `PERCENTILES`; `None` where no repetition
    /// recorded it (p99.99 in records older than it).
    pub percentiles: [Option<f64>; 6],
    /// (repetition, p99): the replicates of a comparison of tails.
    pub p99_by_rep: Vec<(u32, f64)>,
    /// The median over repetitions of p99 / p50: how far the slow requests stray from
    /// the typical one within a run.
    pub jitter: f64,
}

impl Tail {
    /// The tail of these records; `None` when none recorded a latency.
    pub fn from_records(recs: &[&Record]) -> Option<Tail> {
        let with: Vec<&&Record> = recs
            .iter()
            .filter(|r| r.latency.lat_count > 0 && r.latency.lat_p50_us > 0.0)
            .collect();
        if with.is_empty() {
            return None;
        }
        let mut pct = [None; 6];
        for (i, slot) in pct.iter_mut().enumerate() {
            let v: Vec<f64> = with
                .iter()
                .map(|r| percentiles(&r.latency)[i])
                .filter(|v| *v > 0.0)
                .collect();
            *slot = (!v.is_empty()).then(|| stats::median(&v));
        }
        let jitter: Vec<f64> = with
            .iter()
            .map(|r| r.latency.lat_p99_us / r.latency.lat_p50_us)
            .collect();
        Some(Tail {
            percentiles: pct,
            p99_by_rep: with.iter().map(|r| (r.rep, r.latency.lat_p99_us)).collect(),
            jitter: stats::median(&jitter),
        })
    }

    pub fn p50(&self) -> f64 {
        self.percentiles[0].unwrap_or(f64::NAN)
    }

    pub fn p99(&self) -> f64 {
        self.percentiles[2].unwrap_or(f64::NAN)
    }
}

/// How steady one label is on one operation, over the matrix's cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Consistency {
    pub op: Operation,
    pub label: String,
    pub cells: usize,
    /// Median and worst (with its cell) of the per-cell throughput CV across repetitions.
    pub cv: Option<(f64, f64, CellKey)>,
    /// Median and worst (with its cell) of the per-cell jitter p99/p50.
    pub jitter: Option<(f64, f64, CellKey)>,
    /// With records of several runs: median and worst (with its cell) of the per-cell CV
    /// of the runs' medians, the spread a run minutes later lands in, which no run's own
    /// interval shows.
    pub across_runs: Option<(f64, f64, CellKey)>,
}

/// How far one label's cell medians move from one run to the next, over every operation's
/// cells: per cell with records of at least two runs, the CV of the runs' medians. Only
/// for a label whose records come from several runs (`report RUN1 RUN2 RUN3` under one
/// `--label`, or a directory of runs).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpread {
    pub label: String,
    pub runs: usize,
    pub cells: usize,
    pub median_cv: f64,
    pub worst_cv: f64,
    pub worst: (Operation, CellKey),
}
