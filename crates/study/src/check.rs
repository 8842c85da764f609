//! Verdicts: each claim of a study tested against this run's records, never against a
//! figure written in the study file. A verdict is `agrees` or `disagrees` only when the
//! test is significant (5%) in one direction; otherwise `inconclusive`, and `not tested`
//! (with the reason) when the run has no records the claim can be tested on. Figures
//! without a claim are `measured`. The rules are in docs/reference/studies.md. Not: rendering.

use crate::spec::{Axis, Check, Corner, Metric, Shape, DEFAULT_BLOCKS};
use serde::Serialize;
use sharebench_core::op::Op;
use sharebench_core::operation::Operation;
use sharebench_core::record::{Record, Scope, Status};
use sharebench_core::size::{parse_size, BareUnit};
use sharebench_report::analysis::{Analysis, CellKey, CellStats};
use sharebench_report::by_rep;
use sharebench_report::classes::SizeClass;
use sharebench_report::compare::{self, Comparison, ALPHA};
use sharebench_report::curves;
use sharebench_report::findings;
use sharebench_report::format;
use sharebench_report::stats;
use std::collections::{BTreeMap, BTreeSet};

/// What a run says of one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Agrees,
    Disagrees,
    Inconclusive,
    NotTested,
    /// A figure without a claim.
    Measured,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotTested => "not tested",
            Verdict::Measured => "measured",
        }
    }
}

/// A verdict and the numbers behind it, as one sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub verdict: Verdict,
    pub found: String,
}

fn not_tested(why: impl Into<String>) -> Outcome {
    Outcome {
        verdict: Verdict::NotTested,
        found: why.into(),
    }
}

/// One step's records and their analysis (absent when the step has no records).
#[derive(Default)]
pub struct StepData {
    pub records: Vec<Record>,
    pub analysis: Option<Analysis>,
    /// For steps that alternate: each run's block, by run id.
    pub blocks: BTreeMap<String, Block>,
}

/// One block of an alternation (`alternate` in a study's steps): the run of one step in
/// turn `n` (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub alternation: String,
    pub n: u32,
}

/// A number measured by a lab action.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Measurement {
    pub step: String,
    pub name: String,
    pub value: f64,
    pub unit: String,
    #[serde(default)]
    pub note: String,
}

/// Where a check finds its data.
pub trait Evidence {
    fn step(&self, id: &str) -> Option<&StepData>;
    fn measurements(&self) -> &[Measurement];
}

/// Tests `check`. `is_claim` is false for a figure without a claim: its verdict is then
/// `measured` (or `not tested`), whatever the numbers say.
pub fn evaluate(check: &Check, ev: &dyn Evidence, is_claim: bool) -> Outcome {
    let out = match check {
        Check::Measured { step, names } => measured(ev, step, names),
        Check::NotInLab { why } => not_tested(why.clone()),
        _ => {
            let Some(data) = ev.step(check.step()) else {
                return not_tested(format!(
                    "step '{}' has no records in this run",
                    check.step()
                ));
            };
            match check {
                Check::Faster {
                    a,
                    b,
                    ops,
                    threads: Some(t),
                    ..
                } => faster_threads(data, a, b, ops, *t),
                Check::Faster {
                    a,
                    b,
                    ops,
                    class,
                    corner,
                    ..
                } => faster(data, a, b, ops, *class, *corner),
                Check::Steadier {
                    a, b, ops, class, ..
                } => steadier(data, a, b, ops, *class),
                Check::FewerDips {
                    a, b, ops, class, ..
                } => fewer_dips(data, a, b, ops, *class),
                Check::CpuAbove {
                    targets,
                    ops,
                    pct,
                    min_file,
                    server,
                    ..
                } => cpu_above(data, targets, ops, *pct, min_file.as_deref(), *server),
                Check::CpuSimilar {
                    a,
                    b,
                    ops,
                    tolerance_pct,
                    ..
                } => cpu_similar(data, a, b, ops, *tolerance_pct),
                Check::Better {
                    step,
                    a,
                    b,
                    op,
                    op_b,
                    metric,
                    streams,
                } => better(
                    ev,
                    step,
                    (a, *op),
                    (b, op_b.unwrap_or(*op)),
                    *metric,
                    *streams,
                ),
                Check::Curve {
                    target,
                    op,
                    axis,
                    metric,
                    shape,
                    ..
                } => curve(data, target, *op, *axis, *metric, *shape),
                Check::Ranking {
                    step,
                    order,
                    op,
                    metric,
                } => ranking(ev, step, order, *op, *metric),
                Check::LoadCapacity { a, b, bound_ms, .. } => {
                    load_capacity(data, a, b, bound_ms * 1000.0)
                }
                Check::Measured { .. } | Check::NotInLab { .. } => {
                    unreachable!("handled above")
                }
            }
        }
    };
    as_figure_unless(is_claim, out)
}

/// A figure without a claim is `measured` (or `not tested`), whatever the numbers say.
fn as_figure_unless(is_claim: bool, out: Outcome) -> Outcome {
    if !is_claim && out.verdict != Verdict::NotTested {
        return Outcome {
            verdict: Verdict::Measured,
            found: out.found,
        };
    }
    out
}

/// Cells of `label` and `op` in the class (all cells without one).
fn cells<'a>(
    a: &'a Analysis,
    label: &str,
    op: Op,
    class: Option<SizeClass>,
) -> BTreeMap<CellKey, &'a CellStats> {
    a.ops
        .iter()
        .filter(|o| o.op == Operation::Io(op))
        .filter_map(|o| o.cells.get(label))
        .flat_map(|m| m.iter())
        .filter(|(k, _)| class.is_none_or(|c| SizeClass::of(k.0) == c))
        .map(|(k, v)| (*k, v))
        .collect()
}

fn scope_note(class: Option<SizeClass>) -> String {
    class
        .map(|c| format!(" ({} files)", c.name()))
        .unwrap_or_default()
}

/// Operations as the claims name them: `write/read`.
fn op_list(ops: &[Op]) -> String {
    ops.iter().map(|o| o.name()).collect::<Vec<_>>().join("/")
}

fn faster(
    data: &StepData,
    a: &str,
    b: &str,
    ops: &[Op],
    class: Option<SizeClass>,
    corner: Option<Corner>,
) -> Outcome {
    let Some(an) = &data.analysis else {
        return not_tested("no matrix records");
    };
    let mut all: Vec<Comparison> = Vec::new();
    for &op in ops {
        let of = |label: &str| -> BTreeMap<CellKey, CellStats> {
            let mut m: BTreeMap<CellKey, CellStats> = cells(an, label, op, class)
                .into_iter()
                .map(|(k, v)| (k, v.clone()))
                .collect();
            if let Some(c) = corner {
                let keys: Vec<CellKey> = m.keys().copied().collect();
                let kept = c.cells(&keys);
                m.retain(|k, _| kept.contains(k));
            }
            m
        };
        all.extend(compare::compare_cells(&of(a), &of(b), an.threshold_pct).into_values());
    }
    let scope = scope_note(class)
        + &corner
            .map(|c| format!(" ({})", c.name()))
            .unwrap_or_default();
    let o = compare::overall(all.iter(), an.threshold_pct);
    if o.cells == 0 {
        return not_tested(format!(
            "no cells of {} that both {a} and {b} have{scope}",
            op_list(ops),
        ));
    }
    let verdict = claim_verdict(o.verdict, o.ci, an.threshold_pct);
    let to_decide = open_words(
        o.verdict,
        verdict,
        o.geo_ratio,
        o.ci,
        an.threshold_pct,
        "repetitions at this spread",
    );
    Outcome {
        verdict,
        found: format!(
            "{a} vs {b}: {} ({}; geometric mean ratio, 95% interval) over {}{scope}: {}{to_decide}",
            compare::change_with_ci(o.geo_ratio, o.ci),
            compare::verdict_words(o.verdict, an.threshold_pct),
            op_list(ops),
            findings::evidence(&o),
        ),
    }
}

/// A claim that A is faster than B, against the comparison of A with B (its verdict and 95%
/// interval of A/B): agreed when A wins (significant and at least the threshold); refuted when
/// the interval leaves no room for A being faster by the threshold, its upper end below it
/// (B wins, the two are equivalent, or A is slower by however little); open otherwise. A claim
/// has a direction: "-3% [-4.8%, -1.6%]" is no winner by the two-sided rule, but it rules out
/// the claimed one.
fn claim_verdict(v: compare::Verdict, ci: Option<(f64, f64)>, threshold_pct: f64) -> Verdict {
    match v {
        compare::Verdict::Faster => Verdict::Agrees,
        compare::Verdict::Slower | compare::Verdict::Equivalent => Verdict::Disagrees,
        compare::Verdict::Inconclusive if rules_out_faster(ci, threshold_pct) => Verdict::Disagrees,
        compare::Verdict::Inconclusive | compare::Verdict::NotTestable => Verdict::Inconclusive,
    }
}

/// A claim made of `parts` parts (operations, targets): refuted when any part refutes it,
/// agreed when every part agrees (`favour`), open otherwise.
fn combined(favour: usize, against: usize, parts: usize) -> Verdict {
    if against > 0 {
        Verdict::Disagrees
    } else if favour == parts {
        Verdict::Agrees
    } else {
        Verdict::Inconclusive
    }
}

/// The 95% interval of A/B ends below the threshold: A is not faster by it.
fn rules_out_faster(ci: Option<(f64, f64)>, threshold_pct: f64) -> bool {
    ci.is_some_and(|(_, hi)| hi < 1.0 + threshold_pct / 100.0)
}

/// What an inconclusive comparison says about the claim: that it still refutes it, or, where
/// it leaves the claim open, how much more data would decide it (nothing for any other
/// comparison).
fn open_words(
    v: compare::Verdict,
    claim: Verdict,
    ratio: f64,
    ci: Option<(f64, f64)>,
    threshold_pct: f64,
    more_of: &str,
) -> String {
    match (v, claim) {
        (compare::Verdict::Inconclusive, Verdict::Disagrees) => format!(
            "; the interval ends below +{threshold_pct}%, so the claimed difference is ruled out"
        ),
        (compare::Verdict::Inconclusive, Verdict::Inconclusive) => {
            compare::data_to_decide(ratio, ci, threshold_pct)
                .map(|k| to_decide(k, more_of))
                .unwrap_or_default()
        }
        _ => String::new(),
    }
}

fn faster_threads(data: &StepData, a: &str, b: &str, ops: &[Op], threads: u32) -> Outcome {
    let Some(an) = &data.analysis else {
        return not_tested("no throughput-mode records");
    };
    let row = |label: &str, op: Op| {
        an.throughput
            .iter()
            .find(|r| r.label == label && r.op == Operation::Io(op) && r.threads == threads)
    };
    let (mut favour, mut against, mut parts) = (0, 0, Vec::new());
    for &op in ops {
        let (Some(ra), Some(rb)) = (row(a, op), row(b, op)) else {
            parts.push(format!("{op}: not measured with {threads} workers on both"));
            continue;
        };
        // Paired by repetition when both come from one run, with the ratio of the
        // geometric means the interval is about: the medians' ratio could lie outside it
        // ("+2.1% [+3.9%, +25.0%]", 140 against 137 MB/s where the geometric means were
        // 148 and 130).
        let v = compare::rows(&ra.children, &rb.children, an.threshold_pct);
        let (ratio, ci, verdict, (ta, tb)) = (v.ratio(), v.ci, v.verdict, v.typical);
        let (typical, test) = v.basis();
        let claim = claim_verdict(verdict, ci, an.threshold_pct);
        match claim {
            Verdict::Agrees => favour += 1,
            Verdict::Disagrees => against += 1,
            _ => {}
        }
        let open = open_words(
            verdict,
            claim,
            ratio,
            ci,
            an.threshold_pct,
            "repetitions at this spread",
        );
        parts.push(format!(
            "{op} {} ({} vs {} {typical}, {test} {}, {}{open})",
            compare::change_with_ci(ratio, ci),
            format::rate(ta),
            format::rate(tb),
            format::p(v.p),
            compare::verdict_words(verdict, an.threshold_pct)
        ));
    }
    if favour + against == 0 && parts.iter().all(|p| p.contains("not measured")) {
        return not_tested(parts.join("; "));
    }
    let verdict = combined(favour, against, ops.len());
    Outcome {
        verdict,
        found: format!(
            "{a} vs {b}, {threads} workers, children-see throughput: {}",
            parts.join("; ")
        ),
    }
}

/// Files of the class (all without one).
fn in_class(class: Option<SizeClass>) -> impl Fn(u64) -> bool {
    move |file| class.is_none_or(|c| SizeClass::of(file) == c)
}

fn throughput(r: &Record) -> Option<f64> {
    Some(r.throughput_kib_s)
}

/// A claim that A's figures are steadier than B's, measured in one run and never decided
/// there. Per cell both have with three or more repetitions in common, the ratio of B's
/// run-to-run CV to A's; their geometric mean over the cells, with its p and 95% interval
/// from a jackknife over the repetitions (each left out in turn): the repetitions, not the
/// cells, are the replicates, since one disturbed repetition moves the CV of many cells at
/// once (`by_rep`). That interval says how well this run knows its own ratio, not how far
/// the next run's will be: from one run of the main job to the next the ratio moved further
/// than the intervals allowed, and claims were agreed in some runs and refuted in others
/// (docs/methods/statistics.md, "Steadiness: one run does not decide it"). So the
/// verdict stays open and the line says so; a speed claim, whose ratio repeats, is decided
/// in one run. Cells where either CV is 0 have no ratio and are left out.
fn steadier(data: &StepData, a: &str, b: &str, ops: &[Op], class: Option<SizeClass>) -> Outcome {
    let Some(an) = &data.analysis else {
        return not_tested("no matrix records");
    };
    let (ta, tb) = cv_tables(data, a, b, ops, class);
    let cvs = by_rep::paired_cvs(&ta, &tb, None);
    if cvs.is_empty() {
        return not_tested(format!(
            "no cells with three or more repetitions on both {a} and {b}{}",
            scope_note(class)
        ));
    }
    let mean_log = |skip: Option<&by_rep::Rep>| mean_log_cv_ratio(&ta, &tb, skip);
    let reps = by_rep::all_reps(&ta, &tb);
    let where_ = format!(
        "over {} cells of {}{}",
        cvs.len(),
        op_list(ops),
        scope_note(class)
    );
    let medians = format!(
        "{a} median {:.1}%, {b} median {:.1}%",
        stats::median(&cvs.iter().map(|c| c.0).collect::<Vec<_>>()),
        stats::median(&cvs.iter().map(|c| c.1).collect::<Vec<_>>())
    );
    let found = match by_rep::jackknife(&reps, mean_log) {
        None => format!(
            "{b}'s run-to-run CV against {a}'s {where_}: {medians}; {} repetitions, and an interval over them needs 3",
            reps.len()
        ),
        Some((log, p, ci)) => {
            let words = cv_words(log.exp(), ci, p, an.threshold_pct, true);
            format!(
                "{b}'s run-to-run CV against {a}'s: {} ({words}; geometric mean of per-cell ratios, 95% interval from a jackknife over {} repetitions) {where_}: {medians} ({})",
                compare::change_with_ci(log.exp(), Some(ci)),
                reps.len(),
                format::p(Some(p)),
            )
        }
    };
    Outcome {
        verdict: Verdict::Inconclusive,
        found: format!("{found}; {ONE_RUN_STEADINESS}"),
    }
}

/// How much more B's CV is than A's, in a speed verdict's words, said of one run
/// (`in_this_run`) or of several; the words only, never a verdict.
fn cv_words(ratio: f64, ci: (f64, f64), p: f64, threshold: f64, in_this_run: bool) -> String {
    let (within, in_) = if in_this_run {
        (" within this run", " in this run")
    } else {
        ("", "")
    };
    match compare::decide(ratio, Some(ci), p < ALPHA, threshold) {
        compare::Verdict::Faster => format!("more{within}, significant and at least {threshold}%"),
        compare::Verdict::Slower => format!("less{within}, significant and at least {threshold}%"),
        v => format!("{}{in_}", compare::verdict_words(v, threshold)),
    }
}

/// Both targets' figures by cell and repetition, for a steadiness claim.
fn cv_tables(
    data: &StepData,
    a: &str,
    b: &str,
    ops: &[Op],
    class: Option<SizeClass>,
) -> (by_rep::Table, by_rep::Table) {
    (
        by_rep::table(&data.records, a, ops, in_class(class), throughput),
        by_rep::table(&data.records, b, ops, in_class(class), throughput),
    )
}

/// The mean over the cells of ln(B's CV / A's CV), repetition `skip` left out if given.
fn mean_log_cv_ratio(
    ta: &by_rep::Table,
    tb: &by_rep::Table,
    skip: Option<&by_rep::Rep>,
) -> Option<f64> {
    let logs: Vec<f64> = by_rep::paired_cvs(ta, tb, skip)
        .iter()
        .map(|(x, y)| (y / x).ln())
        .collect();
    (!logs.is_empty()).then(|| stats::mean(&logs))
}

/// A steadiness claim over several runs of its study, each run one replicate (the level
/// that varies: docs/methods/statistics.md, "Steadiness: one run does not decide it"). Per
/// run, the figure its own line gives (the geometric mean over the cells of B's CV over
/// A's); over the runs, a one-sample t-test of their logarithms, decided as a speed claim
/// is: agreed when B varies more, significant and by at least the threshold; refuted when
/// the interval ends below it. Runs of one study each measure both targets side by side,
/// so each run's ratio is paired within itself. `runs` are distinct runs of one study at
/// one scale and mapping (the caller picks them: `write_report`); `is_claim` as `evaluate`
/// takes it. `None` for any other kind of check. Not: a check of one run (`steadier`).
pub fn steadier_over_runs(
    check: &Check,
    runs: &[&dyn Evidence],
    is_claim: bool,
) -> Option<Outcome> {
    let Check::Steadier {
        step,
        a,
        b,
        ops,
        class,
    } = check
    else {
        return None;
    };
    Some(as_figure_unless(
        is_claim,
        steadier_over(runs, step, a, b, ops, *class),
    ))
}

/// `steadier_over_runs` for a steadiness check, at the first run's threshold.
fn steadier_over(
    runs: &[&dyn Evidence],
    step: &str,
    a: &str,
    b: &str,
    ops: &[Op],
    class: Option<SizeClass>,
) -> Outcome {
    let mut logs = Vec::new();
    let mut threshold = None;
    for data in runs.iter().filter_map(|r| r.step(step)) {
        let (ta, tb) = cv_tables(data, a, b, ops, class);
        if let (Some(log), Some(an)) = (mean_log_cv_ratio(&ta, &tb, None), &data.analysis) {
            logs.push(log);
            threshold.get_or_insert(an.threshold_pct);
        }
    }
    let threshold = threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT);
    let of = format!(
        "{b}'s run-to-run CV against {a}'s over {} of {} runs{}",
        logs.len(),
        runs.len(),
        scope_note(class)
    );
    let Some((p, ci)) = (logs.len() >= 3)
        .then(|| stats::mean_log_t(&logs))
        .flatten()
    else {
        return Outcome {
            verdict: Verdict::Inconclusive,
            found: format!(
                "{of}: three runs with the step's records are needed, each one replicate"
            ),
        };
    };
    let ratio = stats::mean(&logs).exp();
    let more = compare::decide(ratio, Some(ci), p < ALPHA, threshold);
    let verdict = claim_verdict(more, Some(ci), threshold);
    let open = open_words(more, verdict, ratio, Some(ci), threshold, "runs");
    let words = cv_words(ratio, ci, p, threshold, false);
    Outcome {
        verdict,
        found: format!(
            "{of}: {} ({words}; geometric mean of the runs' figures, 95% t-interval over the runs, {}){open}",
            compare::change_with_ci(ratio, Some(ci)),
            format::p(Some(p)),
        ),
    }
}

/// Why a steadiness claim stays open after one run, in its line.
const ONE_RUN_STEADINESS: &str = "one run does not decide which is steadier: from run to run this ratio moves further than one run's interval allows (docs/methods/statistics.md); decide it over three or more runs of the study (sharebench report RUN1 RUN2 RUN3)";

/// Beyond this many times the data, an estimate of what would decide a claim says only
/// that it is out of reach: a difference that small (or a count that rare) is not settled
/// by more of the same measurements, and the estimate itself means little there.
const MAX_DATA_FACTOR: f64 = 100.0;

/// What would decide an open claim: `k` times the `what` it has (from
/// `data_to_significance` or `data_to_decide`).
fn to_decide(k: f64, what: &str) -> String {
    if k > MAX_DATA_FACTOR {
        format!("; deciding it would take over {MAX_DATA_FACTOR:.0}x the {what}, more than any run here gives")
    } else {
        format!("; deciding it would take about {k:.1}x the {what}")
    }
}

/// A claim that B has far more dips than A, counted as the seed saw them, in one pass of the
/// matrix: per repetition that every cell of both has, each target's share of cells that dip
/// in that repetition's figures (`by_rep::count_dips`); the per-repetition differences (B's
/// share less A's) are the replicates, their mean with a 95% t-interval and p over the
/// repetitions. Agreed when B's share is significantly larger; refuted when A's is, or when
/// neither dips in any repetition; open otherwise.
fn fewer_dips(data: &StepData, a: &str, b: &str, ops: &[Op], class: Option<SizeClass>) -> Outcome {
    let ta = by_rep::table(&data.records, a, ops, in_class(class), throughput);
    let tb = by_rep::table(&data.records, b, ops, in_class(class), throughput);
    let (mut da, mut db, mut ia, mut ib, mut diffs) = (0, 0, 0, 0, Vec::new());
    for rep in by_rep::common_reps(&[&ta, &tb]) {
        let (x, i) = by_rep::count_dips(&by_rep::slice(&ta, &rep));
        let (y, j) = by_rep::count_dips(&by_rep::slice(&tb, &rep));
        if i > 0 && j > 0 {
            (da, ia, db, ib) = (da + x, ia + i, db + y, ib + j);
            // Percentage points.
            diffs.push(100.0 * (y as f64 / j as f64 - x as f64 / i as f64));
        }
    }
    if diffs.is_empty() {
        return not_tested(
            "no repetition with three record sizes of a file size on both sides, which a dip needs",
        );
    }
    let mean = stats::mean(&diffs);
    let test = stats::mean_t(&diffs);
    let significant = test.is_some_and(|(p, _)| p < ALPHA);
    let verdict = match (da + db, significant) {
        (0, _) => Verdict::Disagrees,
        (_, true) if mean > 0.0 => Verdict::Agrees,
        (_, true) => Verdict::Disagrees,
        _ => Verdict::Inconclusive,
    };
    let to_decide = match (
        verdict,
        test.and_then(|(p, _)| stats::data_to_significance(p, ALPHA)),
    ) {
        (Verdict::Inconclusive, Some(k)) => to_decide(k, "repetitions at these shares"),
        _ => String::new(),
    };
    let interval = match test {
        Some((_, (lo, hi))) => format!("{mean:+.2} [{lo:+.2}, {hi:+.2}]"),
        None => format!("{mean:+.2}"),
    };
    Outcome {
        verdict,
        found: format!(
            "dips (a cell below 70% of both record-size neighbours in one repetition's figures) in {}{}, over {} repetitions: {a} {da} of {ia} cells, {b} {db} of {ib} (cells with two neighbours, counted in each repetition); {b}'s share less {a}'s, per repetition: {interval} points (mean, 95% interval; t-test over the repetitions {}){to_decide}",
            op_list(ops),
            scope_note(class),
            diffs.len(),
            format::p(test.map(|(p, _)| p))
        ),
    }
}

/// A claim that every target's CPU reaches `pct` on files of at least `min_file`: per
/// repetition that every cell has, the median over the cells of client (or server) CPU
/// utilisation; per target, the geometric mean of those medians with a 95% t-interval over
/// the repetitions. Agreed when every target's interval lies at or above `pct`; refuted when
/// any target's lies below it; open otherwise (or with fewer than three repetitions).
fn cpu_above(
    data: &StepData,
    targets: &[String],
    ops: &[Op],
    pct: f64,
    min_file: Option<&str>,
    server: bool,
) -> Outcome {
    let min = match min_file.map(|t| parse_size(t, BareUnit::Bytes)) {
        None => 0,
        Some(Ok(v)) => v,
        Some(Err(e)) => return not_tested(format!("min_file: {e}")),
    };
    let side = if server { "server" } else { "client" };
    let cpu = |r: &Record| {
        if server {
            r.server_cpu_util_pct
        } else {
            Some(r.cpu_util_pct)
        }
    };
    let (mut parts, mut above, mut below) = (Vec::new(), 0, 0);
    for t in targets {
        let table = by_rep::table(&data.records, t, ops, |f| f >= min, cpu);
        let logs: Vec<f64> = by_rep::common_reps(&[&table])
            .iter()
            .map(|rep| {
                let v: Vec<f64> = by_rep::slice(&table, rep).into_values().collect();
                (stats::median(&v) / pct).ln()
            })
            .collect();
        if logs.is_empty() {
            return not_tested(format!(
                "no {side} CPU recorded for {t} on files of at least {}",
                format::size(min)
            ));
        }
        let typical = stats::mean(&logs).exp() * pct;
        match (logs.len() >= 3)
            .then(|| stats::mean_log_t(&logs))
            .flatten()
        {
            Some((_, (lo, hi))) => {
                above += usize::from(lo >= 1.0);
                below += usize::from(hi < 1.0);
                // Astride the threshold: how many times the repetitions would clear it.
                let open = (lo < 1.0 && hi >= 1.0)
                    .then(|| compare::data_to_decide(typical / pct, Some((lo, hi)), 0.0))
                    .flatten()
                    .map(|k| to_decide(k, "repetitions at this spread"))
                    .unwrap_or_default();
                parts.push(format!(
                    "{t} {typical:.0}% [{:.0}%, {:.0}%] ({} cells{open})",
                    lo * pct,
                    hi * pct,
                    table.len()
                ));
            }
            None => parts.push(format!(
                "{t} {typical:.0}% ({} cells; {} repetitions, an interval needs 3)",
                table.len(),
                logs.len()
            )),
        }
    }
    let verdict = combined(above, below, targets.len());
    Outcome {
        verdict,
        found: format!(
            "{side} CPU of {}{} (threshold {pct:.0}% of one core; per repetition the median over the cells, their geometric mean and 95% interval over the repetitions): {}",
            op_list(ops),
            if min > 0 {
                format!(" on files of at least {}", format::size(min))
            } else {
                String::new()
            },
            parts.join(", ")
        ),
    }
}

/// A claim that A and B use about the same client CPU: per repetition that every cell of
/// both has, the mean over the cells of the log ratio of A's CPU to B's; the geometric mean
/// ratio, its 95% t-interval and p over the repetitions. Agreed when the interval lies within
/// ±`tol` percent (equivalent); refuted when the ratio is significant and outside it; open
/// otherwise.
fn cpu_similar(data: &StepData, a: &str, b: &str, ops: &[Op], tol: f64) -> Outcome {
    let cpu = |r: &Record| Some(r.cpu_util_pct);
    let ta = by_rep::table(&data.records, a, ops, |_| true, cpu);
    let tb = by_rep::table(&data.records, b, ops, |_| true, cpu);
    let per_rep = by_rep::mean_log_ratio_by_rep(&ta, &tb);
    if per_rep.is_empty() {
        return not_tested(format!("no cells with CPU recorded on both {a} and {b}"));
    }
    let geo = stats::mean(&per_rep).exp();
    let cells = ta.keys().filter(|c| tb.contains_key(*c)).count();
    let test = (per_rep.len() >= 3)
        .then(|| stats::mean_log_t(&per_rep))
        .flatten();
    let Some((p, ci)) = test else {
        return Outcome {
            verdict: Verdict::Inconclusive,
            found: format!(
                "client CPU of {a} vs {b} over {cells} cells of {}: {}; {} repetitions every cell has, and an interval over them needs 3",
                op_list(ops),
                format::change(geo),
                per_rep.len()
            ),
        };
    };
    let (verdict, open) = match compare::decide(geo, Some(ci), p < ALPHA, tol) {
        compare::Verdict::Equivalent => (Verdict::Agrees, String::new()),
        compare::Verdict::Faster | compare::Verdict::Slower => (Verdict::Disagrees, String::new()),
        _ => (
            Verdict::Inconclusive,
            compare::data_to_decide(geo, Some(ci), tol)
                .map(|k| to_decide(k, "repetitions at this spread"))
                .unwrap_or_default(),
        ),
    };
    Outcome {
        verdict,
        found: format!(
            "client CPU of {a} vs {b} over {cells} cells of {}: {} (geometric mean ratio, 95% interval over {} repetitions; similar means the interval within ±{tol:.0}%), t-test {}{open}",
            op_list(ops),
            compare::change_with_ci(geo, Some(ci)),
            per_rep.len(),
            format::p(Some(p))
        ),
    }
}

/// `TARGET@STEP` names another step's target; anything else is `default`'s.
fn reference<'a>(ev: &dyn Evidence, default: &'a str, name: &'a str) -> (&'a str, &'a str) {
    if let Some((t, s)) = name.rsplit_once('@') {
        if ev.step(s).is_some() {
            return (s, t);
        }
    }
    (default, name)
}

fn metric_of(r: &Record, m: Metric) -> Option<f64> {
    match m {
        Metric::Seconds => Some(r.seconds),
        Metric::Rate => r.figures.ops_per_s,
        Metric::Throughput => Some(r.throughput_kib_s),
        Metric::Extents => r.figures.extents_per_file,
        Metric::ServerCpu => r.server_cpu_s,
        Metric::TotalCpu => r.server_cpu_s.map(|s| s + r.cpu_total_s),
        Metric::ClientCpu => Some(r.cpu_total_s),
    }
    .filter(|v| v.is_finite() && *v > 0.0)
}

/// One value of a metric: the run it comes from, and that run's block when its step
/// alternates.
struct Sample<'a> {
    value: f64,
    run: &'a str,
    rep: u32,
    block: Option<&'a Block>,
    /// What reached the server's disk meanwhile: write requests and flushes.
    disk: Option<(u64, u64)>,
}

/// The values of metric `m` over the `ok` single or aggregate records of `name`'s `op`
/// (one per repetition).
fn metric_values<'a>(
    ev: &'a dyn Evidence,
    step: &'a str,
    name: &'a str,
    op: Operation,
    m: Metric,
    streams: Option<u32>,
) -> Vec<Sample<'a>> {
    let (step, target) = reference(ev, step, name);
    let Some(data) = ev.step(step) else {
        return Vec::new();
    };
    data.records
        .iter()
        .filter(|r| r.target == target && r.op == op && r.status == Status::Ok)
        .filter(|r| r.scope != Scope::Worker)
        .filter(|r| streams.is_none() || r.figures.streams == streams)
        .filter_map(|r| {
            Some(Sample {
                value: metric_of(r, m)?,
                run: &r.run_id,
                rep: r.rep,
                block: data.blocks.get(&r.run_id),
                disk: r.disk_writes.zip(r.disk_flushes),
            })
        })
        .collect()
}

fn values(samples: &[Sample]) -> Vec<f64> {
    samples.iter().map(|s| s.value).collect()
}

/// "3020 writes and 5100 flushes": the medians of what reached the server's disk per
/// measurement, when every sample counted it.
fn disk_traffic(samples: &[Sample]) -> Option<String> {
    let counts: Vec<(u64, u64)> = samples.iter().map(|s| s.disk).collect::<Option<_>>()?;
    let med = |f: fn(&(u64, u64)) -> u64| {
        stats::median(&counts.iter().map(|c| f(c) as f64).collect::<Vec<_>>())
    };
    Some(format!(
        "{:.0} writes and {:.0} flushes",
        med(|c| c.0),
        med(|c| c.1)
    ))
}

/// Two sides measured in the blocks of one alternation: per block both have, the log
/// ratio of their medians (a over b), in block order. `None` unless every value of both
/// sides comes from a block of the same alternation.
fn block_log_ratios(sa: &[Sample], sb: &[Sample]) -> Option<Vec<f64>> {
    let alternation = sa.first()?.block?.alternation.as_str();
    let mut by_block: BTreeMap<u32, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (side, samples) in [(0, sa), (1, sb)] {
        for s in samples {
            let b = s.block.filter(|b| b.alternation == alternation)?;
            let e = by_block.entry(b.n).or_default();
            if side == 0 { &mut e.0 } else { &mut e.1 }.push(s.value);
        }
    }
    Some(
        by_block
            .values()
            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
            .map(|(a, b)| stats::median(a).ln() - stats::median(b).ln())
            .collect(),
    )
}

fn show(m: Metric, v: f64) -> String {
    match m {
        Metric::Seconds => format!("{} s", format::sig3(v)),
        Metric::Rate => format!("{}/s", format::sig3(v)),
        Metric::Throughput => format::rate(v),
        Metric::Extents => format::sig3(v),
        Metric::ServerCpu | Metric::ClientCpu | Metric::TotalCpu => {
            format!("{} CPU-s", format::sig3(v))
        }
    }
}

fn better(
    ev: &dyn Evidence,
    step: &str,
    (a, op_a): (&str, Operation),
    (b, op_b): (&str, Operation),
    m: Metric,
    streams: Option<u32>,
) -> Outcome {
    let sa = metric_values(ev, step, a, op_a, m, streams);
    let sb = metric_values(ev, step, b, op_b, m, streams);
    if sa.is_empty() || sb.is_empty() {
        return not_tested(format!(
            "no records with a {} for both {a} {op_a} and {b} {op_b}",
            m.name()
        ));
    }
    // Two steps are two blocks of time: a timed metric may differ by what drifted between
    // them (docs/methods/statistics.md, "Replicates"), unless the steps alternated, block by
    // block, and the blocks are the replicates. Extents count how a file was allocated,
    // which the machine's load does not move.
    let runs_a: BTreeSet<&str> = sa.iter().map(|s| s.run).collect();
    let separate_runs = sb.iter().all(|s| !runs_a.contains(s.run)) && m != Metric::Extents;
    let blocks = separate_runs.then(|| block_log_ratios(&sa, &sb)).flatten();
    let (va, vb) = (values(&sa), values(&sb));
    let (a, b, op) = if op_a == op_b {
        (a.to_string(), b.to_string(), op_a.to_string())
    } else {
        (format!("{a} {op_a}"), format!("{b} {op_b}"), String::new())
    };
    let (ma, mb) = (stats::median(&va), stats::median(&vb));
    let better_than_b = |ratio: f64| {
        if m.lower_is_better() {
            ratio < 1.0
        } else {
            ratio > 1.0
        }
    };
    let (p, how) = match (&blocks, separate_runs) {
        (Some(logs), _) => {
            let test = (logs.len() >= DEFAULT_BLOCKS as usize)
                .then(|| stats::mean_log_t(logs))
                .flatten();
            let geo = stats::mean(logs).exp();
            let how = match test {
                Some((p, ci)) => format!(
                    "; over {} alternating blocks, per-block ratio {} (95% interval), paired t {}",
                    logs.len(),
                    compare::change_with_ci(geo, Some(ci)),
                    format::p(Some(p))
                ),
                None => format!(
                    "; {} alternating block(s) with both: {DEFAULT_BLOCKS} needed to decide",
                    logs.len()
                ),
            };
            // The blocks decide, in the direction of their mean ratio.
            (test.map(|(p, _)| (p, better_than_b(geo))), how)
        }
        (None, true) => (
            None,
            "; measured in separate runs, one block of time each: not decided".to_string(),
        ),
        (None, false) => {
            let p = stats::welch_log_p(&va, &vb);
            (
                p.map(|p| (p, better_than_b(ma / mb))),
                format!(", Welch {}", format::p(p)),
            )
        }
    };
    let verdict = match p {
        Some((p, true)) if p < ALPHA => Verdict::Agrees,
        Some((p, false)) if p < ALPHA => Verdict::Disagrees,
        _ => Verdict::Inconclusive,
    };
    // Why a time differs, where the server's disk was counted: the stable writes.
    let disk = match (disk_traffic(&sa), disk_traffic(&sb)) {
        (Some(x), Some(y)) => format!("; to the server's disk per measurement: {a} {x}, {b} {y}"),
        _ => String::new(),
    };
    Outcome {
        verdict,
        found: format!(
            "{op}{}{}: {a} {} vs {b} {} (medians of {} and {} values, ratio {:.2}{how}){disk}",
            if op.is_empty() { "" } else { " " },
            m.name(),
            show(m, ma),
            show(m, mb),
            va.len(),
            vb.len(),
            ma / mb,
        ),
    }
}

/// Per repetition, each target's load curve read at the bound: the rate up to which p99
/// stays under it (`curves::LoadCurve::within`); the ratio `a` over `b` per repetition,
/// t-tested over the repetitions (the targets took turns point by point, so a repetition
/// pairs them in time). A target whose p99 is over the bound at its lightest point
/// carries 0 there, and that repetition decides nothing.
fn load_capacity(data: &StepData, a: &str, b: &str, bound_us: f64) -> Outcome {
    // Per repetition: the capacity, and whether the curve reached the bound (or an
    // invalid point) at all; if not, the capacity is only a lower bound.
    let capacity = |target: &str| -> (BTreeMap<u32, f64>, bool) {
        let mut by_rep: BTreeMap<u32, Vec<Record>> = BTreeMap::new();
        for r in data.records.iter().filter(|r| r.target == target) {
            by_rep.entry(r.rep).or_default().push(r.clone());
        }
        let mut reached = true;
        let caps = by_rep
            .into_iter()
            .filter_map(|(rep, recs)| {
                let curve = curves::curves(&recs, &[target.to_string()]).pop()?;
                reached &= curve
                    .points
                    .iter()
                    .any(|p| !p.valid || p.p99_us >= bound_us);
                Some((rep, curve.within(bound_us).unwrap_or(0.0)))
            })
            .collect();
        (caps, reached)
    };
    let ((ca, reached_a), (cb, reached_b)) = (capacity(a), capacity(b));
    let at_least = |reached: bool| if reached { "" } else { "at least " };
    if ca.is_empty() || cb.is_empty() {
        return not_tested(format!("no load curves for both {a} and {b}"));
    }
    let logs: Vec<f64> = ca
        .iter()
        .filter_map(|(rep, x)| Some((*x, *cb.get(rep)?)))
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| x.ln() - y.ln())
        .collect();
    let test = stats::mean_log_t(&logs);
    let verdict = match test {
        Some((p, _)) if p < ALPHA && stats::mean(&logs) > 0.0 => Verdict::Agrees,
        Some((p, _)) if p < ALPHA => Verdict::Disagrees,
        _ => Verdict::Inconclusive,
    };
    let med = |c: &BTreeMap<u32, f64>| stats::median(&c.values().copied().collect::<Vec<_>>());
    let how = match test {
        Some((p, ci)) => format!(
            "per-repetition ratio {} (95% interval), paired t {}",
            compare::change_with_ci(stats::mean(&logs).exp(), Some(ci)),
            format::p(Some(p))
        ),
        None => format!(
            "{} repetition(s) with both curves under the bound at their lightest point: too few to decide",
            logs.len()
        ),
    };
    Outcome {
        verdict,
        found: format!(
            "at p99 < {}: {a} carries {}{:.0}/s, {b} {}{:.0}/s (medians over {} and {} repetitions of the rate up to which p99 stays under the bound; {how}){}",
            format::latency(bound_us),
            at_least(reached_a),
            med(&ca),
            at_least(reached_b),
            med(&cb),
            ca.len(),
            cb.len(),
            if reached_a && reached_b {
                ""
            } else {
                "; \"at least\": that curve ended below the bound, so its ratio is a bound too"
            }
        ),
    }
}

fn ranking(ev: &dyn Evidence, step: &str, order: &[String], op: Operation, m: Metric) -> Outcome {
    let mut measured: Vec<(String, Vec<Sample>, f64)> = Vec::new();
    let mut missing = Vec::new();
    for t in order {
        let samples = metric_values(ev, step, t, op, m, None);
        if samples.is_empty() {
            missing.push(t.clone());
        } else {
            let med = stats::median(&values(&samples));
            measured.push((t.clone(), samples, med));
        }
    }
    if measured.len() < 2 {
        return not_tested(format!(
            "'{op}' measured on fewer than two of the ranked targets"
        ));
    }
    let expected: Vec<&String> = order.iter().filter(|t| !missing.contains(t)).collect();
    let threshold = ev
        .step(step)
        .and_then(|d| d.analysis.as_ref())
        .map_or(compare::DEFAULT_THRESHOLD_PCT, |a| a.threshold_pct);
    let mut by_metric = measured;
    by_metric.sort_by(|x, y| {
        if m.lower_is_better() {
            x.2.total_cmp(&y.2)
        } else {
            y.2.total_cmp(&x.2)
        }
    });
    let pos = |t: &String| expected.iter().position(|e| *e == t).unwrap_or(0);
    // Pairs the run orders against the seed: any clearly separated one disagrees.
    let mut clear_inversion = false;
    let mut inversions = 0;
    // The inverted pairs left open: each with its interval, and the fewest times the
    // replicates that would decide one of them.
    let (mut open, mut fewest) = (Vec::new(), f64::INFINITY);
    for i in 0..by_metric.len() {
        for j in i + 1..by_metric.len() {
            if pos(&by_metric[i].0) > pos(&by_metric[j].0) {
                inversions += 1;
                let (x, y) = (&by_metric[i], &by_metric[j]);
                match pair_verdict(&x.1, &y.1, threshold) {
                    Some((compare::Verdict::Faster | compare::Verdict::Slower, ..)) => {
                        clear_inversion = true;
                    }
                    Some((v, ratio, ci)) => {
                        open.push(format!(
                            "{} against {}: {} ({})",
                            x.0,
                            y.0,
                            compare::change_with_ci(ratio, Some(ci)),
                            compare::verdict_words(v, threshold)
                        ));
                        let k = (v == compare::Verdict::Inconclusive)
                            .then(|| compare::data_to_decide(ratio, Some(ci), threshold))
                            .flatten();
                        if let Some(k) = k {
                            fewest = fewest.min(k);
                        }
                    }
                    None => open.push(format!(
                        "{} against {}: separate runs or under 3 replicates, never decided",
                        x.0, y.0
                    )),
                }
            }
        }
    }
    let verdict = if inversions == 0 {
        Verdict::Agrees
    } else if clear_inversion {
        Verdict::Disagrees
    } else {
        Verdict::Inconclusive
    };
    let list = by_metric
        .iter()
        .map(|(t, _, med)| format!("{t} {}", show(m, *med)))
        .collect::<Vec<_>>()
        .join(" < ");
    let mut found = format!(
        "{op} {} best first: {} ({inversions} pair(s) ordered against the seed{})",
        m.name(),
        list.replace(" < ", ", "),
        if inversions > 0 && !clear_inversion {
            ", none significantly and by the threshold"
        } else {
            ""
        }
    );
    if verdict == Verdict::Inconclusive {
        found.push_str(&format!("; {}", open.join("; ")));
        if fewest.is_finite() {
            found.push_str(&to_decide(fewest, "repetitions at this spread"));
        }
    }
    if !missing.is_empty() {
        found.push_str(&format!("; not measured: {}", missing.join(", ")));
    }
    Outcome { verdict, found }
}

/// Two targets' values compared as a speed claim is (significant and by at least
/// `threshold_pct`) over the replicates that vary independently: the repetitions both have
/// where they come from the same runs (the engine measured them side by side; per
/// repetition the log ratio, a t-test over them), else the blocks where their steps
/// alternate. The verdict, the geometric mean ratio (a over b) and its 95% interval; `None`
/// for values of separate runs (one block of time each) or fewer than three replicates.
fn pair_verdict(
    sa: &[Sample],
    sb: &[Sample],
    threshold_pct: f64,
) -> Option<(compare::Verdict, f64, (f64, f64))> {
    fn by_rep<'a>(s: &[Sample<'a>]) -> BTreeMap<(&'a str, u32), Vec<f64>> {
        let mut m: BTreeMap<(&str, u32), Vec<f64>> = BTreeMap::new();
        for x in s {
            m.entry((x.run, x.rep)).or_default().push(x.value);
        }
        m
    }
    let (ma, mb) = (by_rep(sa), by_rep(sb));
    let paired: Vec<f64> = ma
        .iter()
        .filter_map(|(k, a)| Some(stats::median(a).ln() - stats::median(mb.get(k)?).ln()))
        .collect();
    let logs = if paired.is_empty() {
        block_log_ratios(sa, sb).unwrap_or_default()
    } else {
        paired
    };
    let (p, ci) = (logs.len() >= 3)
        .then(|| stats::mean_log_t(&logs))
        .flatten()?;
    let ratio = stats::mean(&logs).exp();
    Some((
        compare::decide(ratio, Some(ci), p < ALPHA, threshold_pct),
        ratio,
        ci,
    ))
}

/// Whether the medians `v` (3 or more, along the axis) have the seed's `shape`.
fn shape_verdict(shape: Shape, v: &[f64]) -> Verdict {
    let n = v.len();
    let (peak, top) = v
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("3 points");
    let low = v.iter().copied().fold(f64::INFINITY, f64::min);
    match shape {
        Shape::RiseThenFall => {
            if peak > 0 && peak < n - 1 && v[0] < 0.9 * top && v[n - 1] < 0.9 * top {
                Verdict::Agrees
            } else if v.windows(2).all(|w| w[1] >= 0.9 * w[0])
                || v.windows(2).all(|w| w[1] <= 1.1 * w[0])
            {
                Verdict::Disagrees
            } else {
                Verdict::Inconclusive
            }
        }
        Shape::Falls => {
            if v[n - 1] < 0.9 * v[0] && v[0] >= 0.9 * top {
                Verdict::Agrees
            } else if v[n - 1] >= v[0] {
                Verdict::Disagrees
            } else {
                Verdict::Inconclusive
            }
        }
        Shape::Flat => {
            if top <= 1.25 * low {
                Verdict::Agrees
            } else if top > 1.5 * low {
                Verdict::Disagrees
            } else {
                Verdict::Inconclusive
            }
        }
        Shape::Cliff => {
            if v.windows(2).any(|w| w[1] < 0.5 * w[0]) {
                Verdict::Agrees
            } else if v.windows(2).all(|w| w[1] >= 0.8 * w[0]) {
                Verdict::Disagrees
            } else {
                Verdict::Inconclusive
            }
        }
    }
}

fn curve(
    data: &StepData,
    target: &str,
    op: Operation,
    axis: Axis,
    m: Metric,
    shape: Shape,
) -> Outcome {
    let mut by_x: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in data
        .records
        .iter()
        .filter(|r| r.target == target && r.op == op && r.status == Status::Ok)
        .filter(|r| r.scope != Scope::Worker)
    {
        let x = match axis {
            Axis::Count => r.figures.files,
            Axis::FileSize => Some(r.file_size),
        };
        if let (Some(x), Some(v)) = (x, metric_of(r, m)) {
            by_x.entry(x).or_default().push(v);
        }
    }
    if by_x.len() < 3 {
        return not_tested(format!(
            "{target} {op}: {} point(s) along the axis; a shape needs 3",
            by_x.len()
        ));
    }
    let xs: Vec<u64> = by_x.keys().copied().collect();
    let v: Vec<f64> = by_x.values().map(|v| stats::median(v)).collect();
    let verdict = shape_verdict(shape, &v);
    let series = xs
        .iter()
        .zip(&v)
        .map(|(x, y)| {
            let x = match axis {
                Axis::Count => x.to_string(),
                Axis::FileSize => format::size(*x),
            };
            format!("{x}: {}", show(m, *y))
        })
        .collect::<Vec<_>>()
        .join(", ");
    // Where a cliff falls, and the client that measured it (its cache bound, if any).
    let mut notes = Vec::new();
    if shape == Shape::Cliff {
        if let Some(i) = v.windows(2).position(|w| w[1] < 0.5 * w[0]) {
            let at = |x: u64| match axis {
                Axis::Count => x.to_string(),
                Axis::FileSize => format::size(x),
            };
            notes.push(format!(
                "the drop falls between {} and {}",
                at(xs[i]),
                at(xs[i + 1])
            ));
        }
    }
    let clients: BTreeSet<(&str, u32)> = data
        .records
        .iter()
        .filter(|r| r.target == target && r.op == op)
        .map(|r| (r.client.as_str(), r.iodepth))
        .collect();
    if let [(c, depth)] = clients.iter().copied().collect::<Vec<_>>()[..] {
        notes.push(if depth > 1 {
            format!("client {c}, {depth} requests in flight")
        } else {
            format!("client {c}")
        });
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join("; "))
    };
    Outcome {
        verdict,
        found: format!("{target} {op} {} (medians): {series}{notes}", m.name()),
    }
}

fn measured(ev: &dyn Evidence, step: &str, names: &[String]) -> Outcome {
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        match ev
            .measurements()
            .iter()
            .find(|m| m.step == step && &m.name == n)
        {
            Some(m) => {
                let value = if m.value.fract() == 0.0 && m.value.abs() < 1e15 {
                    format!("{}", m.value as i64)
                } else {
                    format::sig3(m.value)
                };
                let mut p = format!("{} = {value}", m.name);
                if !m.unit.is_empty() {
                    p.push(' ');
                    p.push_str(&m.unit);
                }
                if !m.note.is_empty() {
                    p.push_str(&format!(" ({})", m.note));
                }
                parts.push(p);
            }
            None => missing.push(n.as_str()),
        }
    }
    if parts.is_empty() {
        return not_tested(format!("not measured: {}", missing.join(", ")));
    }
    if !missing.is_empty() {
        // The lab and a user's own system give different figures of one step.
        parts.push(format!("not measured in this run: {}", missing.join(", ")));
    }
    Outcome {
        verdict: Verdict::Measured,
        found: parts.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_would_decide_a_claim_is_named_up_to_a_hundredfold() {
        assert_eq!(
            to_decide(2.14, "repetitions at this spread"),
            "; deciding it would take about 2.1x the repetitions at this spread"
        );
        // One dip against none of 36 cells each (Fisher p = 0.5): z near 0, k near 1e30.
        let k = stats::data_to_significance(2.0 * 0.4999999, 2.0 * ALPHA).unwrap();
        assert!(k > 1e6, "{k}");
        let text = to_decide(k, "cells at these shares");
        assert_eq!(
            text,
            "; deciding it would take over 100x the cells at these shares, more than any run here gives"
        );
    }

    #[test]
    fn a_claim_of_a_winner_is_refuted_when_its_direction_is_ruled_out() {
        let inconclusive = compare::Verdict::Inconclusive;
        // Significantly slower, by less than the threshold: no loser by the two-sided rule,
        // but "a is faster" is ruled out.
        assert_eq!(
            claim_verdict(inconclusive, Some((0.952, 0.984)), 5.0),
            Verdict::Disagrees
        );
        // Not significant either way, and the interval ends below +5%: ruled out too.
        assert_eq!(
            claim_verdict(inconclusive, Some((0.85, 1.03)), 5.0),
            Verdict::Disagrees
        );
        // The interval reaches +5%: a may still be faster by the threshold.
        assert_eq!(
            claim_verdict(inconclusive, Some((0.98, 1.06)), 5.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            claim_verdict(inconclusive, Some((0.90, 1.20)), 5.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            claim_verdict(inconclusive, None, 5.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            claim_verdict(compare::Verdict::Faster, Some((1.04, 1.12)), 5.0),
            Verdict::Agrees
        );
        assert_eq!(
            claim_verdict(compare::Verdict::Equivalent, Some((0.97, 1.03)), 5.0),
            Verdict::Disagrees
        );
    }

    /// A write of `file_size` in `record_size` records by one worker of `target`, at
    /// `kib_s`, in run r1 (every target of these tests measured side by side).
    fn write_record(
        target: &str,
        file_size: u64,
        record_size: u64,
        rep: u32,
        kib_s: f64,
    ) -> Record {
        Record {
            target: target.into(),
            workload: sharebench_core::record::WorkloadKind::Iozone,
            op: Op::Write.into(),
            file_size,
            record_size,
            threads: 1,
            rep,
            bytes: file_size,
            seconds: 1.0,
            throughput_kib_s: kib_s,
            cpu_util_pct: 50.0,
            cpu_total_s: 0.5,
            status: Status::Ok,
            run_id: "r1".into(),
            ..Record::default()
        }
    }

    /// Records of a small matrix: `a` writes at `base_a` KiB/s with a 1% wobble per
    /// repetition, `b` at `base_b` with `wobble_b`.
    fn matrix(base_a: f64, base_b: f64, wobble_b: f64) -> StepData {
        let mut records = Vec::new();
        for (target, base, wobble) in [("a", base_a, 0.01), ("b", base_b, wobble_b)] {
            for file in [64u64 << 10, 256 << 10, 1 << 20, 4 << 20] {
                for rec in [4u64 << 10, 16 << 10, 64 << 10] {
                    for rep in 0..3u32 {
                        let f = 1.0 + wobble * [0.0, 1.0, -1.0][rep as usize];
                        let kib_s = base * f * (1.0 + (rec >> 12) as f64 / 100.0);
                        records.push(write_record(target, file, rec, rep, kib_s));
                    }
                }
            }
        }
        let mut data = StepData {
            records,
            ..Default::default()
        };
        data.analysis = Some(reanalyse(&data));
        data
    }

    /// The analysis of a step's records, targets `a` and `b`.
    fn reanalyse(data: &StepData) -> Analysis {
        let mut loaded = sharebench_report::load::Loaded::default();
        for t in ["a", "b"] {
            loaded.datasets.push(sharebench_report::load::Dataset {
                label: t.into(),
                source: "x".into(),
                kind: sharebench_report::load::Kind::Sharebench,
                target: t.into(),
                manifest: None,
                records: data
                    .records
                    .iter()
                    .filter(|r| r.target == t)
                    .cloned()
                    .collect(),
            });
        }
        sharebench_report::analysis::analyse(loaded, None, 5.0).unwrap()
    }

    struct One(StepData, Vec<Measurement>);
    impl Evidence for One {
        fn step(&self, id: &str) -> Option<&StepData> {
            (id == "m").then_some(&self.0)
        }
        fn measurements(&self) -> &[Measurement] {
            &self.1
        }
    }

    /// Load curves of `a` and `b` over three repetitions, ten points of 100-1,000/s: p99
    /// grows with the rate, `a`'s by `slope_a` ms per 100 requests/s, `b`'s by 1 ms.
    fn load_curves(slope_a: f64) -> StepData {
        let mut records = Vec::new();
        for (target, slope) in [("a", slope_a), ("b", 1.0)] {
            for rep in 0..3u32 {
                for point in 0..10u32 {
                    let rate = 100.0 * f64::from(point + 1);
                    let mut r = Record {
                        target: target.into(),
                        workload: sharebench_core::record::WorkloadKind::Load,
                        op: Operation::Load,
                        rep,
                        status: Status::Ok,
                        ..Record::default()
                    };
                    r.figures.load_point = Some(point);
                    r.figures.requested_ops_s = Some(rate);
                    r.figures.ops_per_s = Some(rate * (1.0 - 0.001 * f64::from(rep)));
                    r.figures.valid = Some(true);
                    r.latency.lat_p99_us = slope * 1000.0 * f64::from(point + 1);
                    records.push(r);
                }
            }
        }
        StepData {
            records,
            ..Default::default()
        }
    }

    #[test]
    fn load_capacity_reads_each_repetitions_curve_at_the_bound() {
        let check = |slope_a: f64| {
            let c = Check::LoadCapacity {
                step: "m".into(),
                a: "a".into(),
                b: "b".into(),
                bound_ms: 5.5,
            };
            evaluate(&c, &One(load_curves(slope_a), Vec::new()), true)
        };
        // a: p99 0.5 ms per 100/s, under 5.5 ms up to 1,000/s; b: up to 500/s.
        let o = check(0.5);
        assert_eq!(o.verdict, Verdict::Agrees, "{}", o.found);
        // a's p99 stays under the bound at every point: its capacity is a lower bound.
        assert!(
            o.found.contains("a carries at least 999/s, b 500/s"),
            "{}",
            o.found
        );
        let o = check(1.0);
        assert!(!o.found.contains("at least"), "{}", o.found);
        let o = check(2.0);
        assert_eq!(o.verdict, Verdict::Disagrees, "{}", o.found);
        // Over the bound already at the lightest point: nothing to decide.
        let o = check(6.0);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
    }

    fn faster(a: &str, b: &str, class: Option<SizeClass>) -> Check {
        Check::Faster {
            step: "m".into(),
            a: a.into(),
            b: b.into(),
            ops: vec![Op::Write],
            class,
            corner: None,
            threads: None,
        }
    }

    #[test]
    fn faster_agrees_disagrees_or_is_inconclusive_from_the_records() {
        let ev = One(matrix(2000.0, 1000.0, 0.01), Vec::new());
        let agrees = evaluate(&faster("a", "b", None), &ev, true);
        assert_eq!(agrees.verdict, Verdict::Agrees, "{}", agrees.found);
        assert!(agrees.found.contains("+100.0%"), "{}", agrees.found);
        assert_eq!(
            evaluate(&faster("b", "a", Some(SizeClass::Small)), &ev, true).verdict,
            Verdict::Disagrees
        );
        // No figure of the study decides: the same check without a claim is "measured".
        assert_eq!(
            evaluate(&faster("a", "b", None), &ev, false).verdict,
            Verdict::Measured
        );
        let none = evaluate(&faster("a", "b", Some(SizeClass::Large)), &ev, true);
        assert_eq!(none.verdict, Verdict::NotTested, "{}", none.found);
        // The same speed: the claimed difference is not there.
        let even = One(matrix(1000.0, 1000.0, 0.01), Vec::new());
        let o = evaluate(&faster("a", "b", None), &even, true);
        assert_eq!(o.verdict, Verdict::Disagrees, "{}", o.found);
        assert!(o.found.contains("equivalent within ±5%"), "{}", o.found);
    }

    #[test]
    fn steadier_is_measured_in_one_run_never_decided() {
        // Whatever the run shows, the verdict stays open and the line says why.
        let open_with = |data: StepData, a: &str, b: &str, words: &str| {
            let o = evaluate(&steadier(a, b), &One(data, Vec::new()), true);
            assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
            assert!(o.found.contains(words), "{words}: {}", o.found);
            assert!(o.found.contains("one run does not decide"), "{}", o.found);
        };
        let b_wobbles = || matrix(1000.0, 1000.0, 0.2);
        open_with(
            b_wobbles(),
            "a",
            "b",
            "more within this run, significant and at least 5%",
        );
        open_with(
            b_wobbles(),
            "b",
            "a",
            "less within this run, significant and at least 5%",
        );
        // Both vary alike.
        let alike = matrix(1000.0, 1000.0, 0.01);
        open_with(alike, "a", "b", "equivalent within ±5% in this run");
    }

    #[test]
    fn steadiness_is_decided_over_three_or_more_runs() {
        // Each run: b's repetitions wobble by `w`, a's by 1%.
        let run = |w: f64| One(matrix(1000.0, 1000.0, w), Vec::new());
        let over = |check: &Check, runs: &[One]| {
            let ev: Vec<&dyn Evidence> = runs.iter().map(|r| r as &dyn Evidence).collect();
            steadier_over_runs(check, &ev, true).expect("a steadiness claim")
        };
        let unsteady_b = [run(0.2), run(0.15), run(0.25)];
        for (a, b, verdict, words) in [
            ("a", "b", Verdict::Agrees, "more, significant"),
            ("b", "a", Verdict::Disagrees, "less, significant"),
        ] {
            let o = over(&steadier(a, b), &unsteady_b);
            assert_eq!(o.verdict, verdict, "{}", o.found);
            assert!(o.found.contains("over 3 of 3 runs"), "{}", o.found);
            assert!(o.found.contains(words), "{words}: {}", o.found);
        }
        // Two runs are not three replicates, however clear.
        let o = over(&steadier("a", "b"), &unsteady_b[..2]);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("three runs"), "{}", o.found);
        // Runs that disagree with each other decide nothing.
        let mixed = [run(0.2), run(0.001), run(0.03), run(0.004)];
        let o = over(&steadier("a", "b"), &mixed);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        // Other claims are each run's to decide.
        let ev: Vec<&dyn Evidence> = unsteady_b.iter().map(|r| r as &dyn Evidence).collect();
        assert!(steadier_over_runs(&faster("a", "b", None), &ev, true).is_none());
        // A figure without a claim is measured over the runs too, never agreed.
        let o = steadier_over_runs(&steadier("a", "b"), &ev, false).unwrap();
        assert_eq!(o.verdict, Verdict::Measured, "{}", o.found);
    }

    fn steadier(a: &str, b: &str) -> Check {
        Check::Steadier {
            step: "m".into(),
            a: a.into(),
            b: b.into(),
            ops: vec![Op::Write],
            class: None,
        }
    }

    /// Six repetitions of the small matrix, each record's throughput and CPU from `f(target,
    /// cell index, repetition)`.
    fn six_reps(f: impl Fn(&str, usize, u32) -> (f64, f64)) -> StepData {
        let mut records = Vec::new();
        for target in ["a", "b"] {
            let mut cell = 0;
            for file in [64u64 << 10, 256 << 10, 1 << 20, 4 << 20] {
                for rec in [4u64 << 10, 16 << 10, 64 << 10] {
                    for rep in 0..6u32 {
                        let (kib_s, cpu) = f(target, cell, rep);
                        let mut r = write_record(target, file, rec, rep, kib_s);
                        r.cpu_util_pct = cpu;
                        records.push(r);
                    }
                    cell += 1;
                }
            }
        }
        let mut data = StepData {
            records,
            ..Default::default()
        };
        data.analysis = Some(reanalyse(&data));
        data
    }

    /// A fixed wobble of a few percent, different in every cell and repetition.
    fn wobble(cell: usize, rep: u32, salt: usize) -> f64 {
        let x = ((cell * 7 + rep as usize * 13 + salt * 5) % 11) as f64;
        1.0 + (x - 5.0) / 200.0
    }

    #[test]
    fn one_disturbed_repetition_is_one_replicate_not_one_per_cell() {
        // b's sixth repetition ran 30% slow in every cell: over the 12 cells each, b's CV
        // is far above a's, and a test over the cells would call b unsteady; over the
        // repetitions, it is one bad repetition of six.
        let data = six_reps(|t, cell, rep| {
            let slow = if t == "b" && rep == 5 { 0.7 } else { 1.0 };
            (1000.0 * wobble(cell, rep, t.len()) * slow, 50.0)
        });
        let o = evaluate(&steadier("a", "b"), &One(data, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(
            o.found.contains("jackknife over 6 repetitions"),
            "{}",
            o.found
        );
        assert!(
            o.found
                .contains("inconclusive at a 5% threshold in this run"),
            "{}",
            o.found
        );
        // b slower in every repetition, two of them in turn: steadily less steady.
        let data = six_reps(|t, cell, rep| {
            let swing = if t == "b" {
                [1.0, 0.8, 1.2, 0.85, 1.15, 1.0][rep as usize]
            } else {
                1.0
            };
            (1000.0 * wobble(cell, rep, 0) * swing, 50.0)
        });
        let o = evaluate(&steadier("a", "b"), &One(data, Vec::new()), true);
        assert!(
            o.found
                .contains("more within this run, significant and at least 5%"),
            "{}",
            o.found
        );
    }

    #[test]
    fn cpu_claims_are_decided_over_the_repetitions() {
        let similar = |t: &str, cell: usize, rep: u32| {
            let level = if t == "a" { 50.0 } else { 51.0 };
            (1000.0, level * wobble(cell, rep, t.len()))
        };
        let check = |tol: f64| Check::CpuSimilar {
            step: "m".into(),
            a: "a".into(),
            b: "b".into(),
            ops: vec![Op::Write],
            tolerance_pct: tol,
        };
        let o = evaluate(&check(15.0), &One(six_reps(similar), Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Agrees, "{}", o.found);
        assert!(o.found.contains("over 6 repetitions"), "{}", o.found);
        let apart = six_reps(|t, cell, rep| {
            let level = if t == "a" { 50.0 } else { 80.0 };
            (1000.0, level * wobble(cell, rep, 0))
        });
        let o = evaluate(&check(15.0), &One(apart, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Disagrees, "{}", o.found);
        // One repetition of b at twice the CPU in every cell: not a difference of the two.
        let once = six_reps(|t, cell, rep| {
            let spike = if t == "b" && rep == 2 { 2.0 } else { 1.0 };
            (1000.0, 50.0 * wobble(cell, rep, t.len()) * spike)
        });
        let o = evaluate(&check(15.0), &One(once, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);

        let above = |level: f64| {
            let data = six_reps(|_, cell, rep| (1000.0, level * wobble(cell, rep, 1)));
            let check = Check::CpuAbove {
                step: "m".into(),
                targets: vec!["a".into(), "b".into()],
                ops: vec![Op::Write],
                pct: 95.0,
                min_file: Some("1m".into()),
                server: false,
            };
            evaluate(&check, &One(data, Vec::new()), true)
        };
        let o = above(99.0);
        assert_eq!(o.verdict, Verdict::Agrees, "{}", o.found);
        assert!(o.found.contains("(6 cells)"), "{}", o.found);
        assert_eq!(above(80.0).verdict, Verdict::Disagrees);
        let o = above(95.0);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
    }

    #[test]
    fn an_open_throughput_claim_says_what_would_decide_it() {
        // 4 workers, three repetitions: a 10% faster than b with a wide spread, which
        // pairing by repetition does not remove (the two wobble apart).
        let mut data = StepData::default();
        for (target, base, wobble) in [
            ("a", 1100.0, [1.0, 1.1, 0.9]),
            ("b", 1000.0, [1.0, 0.9, 1.1]),
        ] {
            for rep in 0..3u32 {
                let kib_s = base * wobble[rep as usize];
                data.records.push(Record {
                    threads: 4,
                    scope: Scope::Aggregate,
                    bytes: 4 * (512 << 10),
                    ..write_record(target, 512 << 10, 4 << 10, rep, kib_s)
                });
            }
        }
        data.analysis = Some(reanalyse(&data));
        let check = Check::Faster {
            step: "m".into(),
            a: "a".into(),
            b: "b".into(),
            ops: vec![Op::Write],
            class: None,
            corner: None,
            threads: Some(4),
        };
        let o = evaluate(&check, &One(data, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(
            o.found.contains("deciding it would take about"),
            "{}",
            o.found
        );
        // The figure is the one its interval is about, beside the rates it comes from.
        assert!(
            o.found.contains("write +10.0% [")
                && o.found
                    .contains("geometric means, paired by repetition, paired t"),
            "{}",
            o.found
        );
    }

    #[test]
    fn better_reads_workload_metrics_and_other_operations() {
        let ev = One(matrix(1000.0, 2000.0, 0.01), Vec::new());
        let check = Check::Better {
            step: "m".into(),
            a: "b".into(),
            b: "a".into(),
            op: Op::Write.into(),
            op_b: None,
            metric: Metric::Throughput,
            streams: None,
        };
        assert_eq!(evaluate(&check, &ev, true).verdict, Verdict::Agrees);
        // The same figures, b from another run (a study step of its own): two blocks of
        // time, so a timed metric is shown and never decided.
        let mut data = matrix(1000.0, 2000.0, 0.01);
        for r in data.records.iter_mut().filter(|r| r.target == "b") {
            r.run_id = "r2".into();
        }
        let o = evaluate(&check, &One(data, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("separate runs"), "{}", o.found);
        let missing = Check::Better {
            step: "m".into(),
            a: "a".into(),
            b: "a".into(),
            op: Op::Write.into(),
            op_b: Some(Op::Read.into()),
            metric: Metric::Throughput,
            streams: None,
        };
        assert_eq!(evaluate(&missing, &ev, true).verdict, Verdict::NotTested);
    }

    /// `a` and `b` in runs of their own, alternating: block n of `a` is run `aN`, of `b`
    /// `bN`; `a` writes at `ratios[n]` times `b`'s speed, which drifts block to block.
    fn alternated(ratios: &[f64]) -> StepData {
        let mut data = StepData::default();
        for (i, ratio) in ratios.iter().enumerate() {
            let n = i as u32 + 1;
            let drift = 1000.0 * (1.0 + 0.3 * (i % 2) as f64);
            for (target, speed) in [("a", drift * ratio), ("b", drift)] {
                let run = format!("{target}{n}");
                for rep in 0..3u32 {
                    data.records.push(Record {
                        target: target.into(),
                        op: Op::Write.into(),
                        rep,
                        seconds: 1.0,
                        throughput_kib_s: speed * (1.0 + 0.01 * rep as f64),
                        status: Status::Ok,
                        run_id: run.clone(),
                        ..Record::default()
                    });
                }
                let block = Block {
                    alternation: "g".into(),
                    n,
                };
                data.blocks.insert(run, block);
            }
        }
        data
    }

    #[test]
    fn a_ranking_is_refuted_only_by_a_pair_apart_over_the_repetitions() {
        // Seconds of `a` and `b` over three repetitions of one run; `b` at `b_over` a's.
        let ranked = |b_over: [f64; 3], b_run: &str| {
            let mut records = Vec::new();
            for rep in 0..3u32 {
                let wobble = [1.0, 1.3, 0.8][rep as usize];
                for (t, f, run) in [("a", 1.0, "r1"), ("b", b_over[rep as usize], b_run)] {
                    let mut r = write_record(t, 1 << 20, 1 << 20, rep, 1000.0);
                    (r.seconds, r.run_id) = (10.0 * wobble * f, run.into());
                    records.push(r);
                }
            }
            let data = StepData {
                records,
                ..Default::default()
            };
            let check = Check::Ranking {
                step: "m".into(),
                order: vec!["b".into(), "a".into()],
                op: Op::Write.into(),
                metric: Metric::Seconds,
            };
            evaluate(&check, &One(data, Vec::new()), true)
        };
        // b is 10% slower in every repetition, while the repetitions themselves swing by
        // 30%: apart, paired by repetition (an unpaired test would see only the swing).
        let o = ranked([1.1, 1.1, 1.1], "r1");
        assert_eq!(o.verdict, Verdict::Disagrees, "{}", o.found);
        assert_eq!(ranked([0.9, 0.92, 0.9], "r1").verdict, Verdict::Agrees);
        // 2% slower in every repetition: significant, and below the threshold; open, and
        // the outcome names the pair's interval.
        let o = ranked([1.02, 1.021, 1.02], "r1");
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(
            o.found
                .contains("a against b: -2.0% [-2.1%, -1.9%] (equivalent within ±5%)"),
            "{}",
            o.found
        );
        // Slower, but the same values from a run of its own: one block of time each.
        // b slower by 10% on the whole but not in every repetition: open, with what would
        // decide it.
        let o = ranked([1.1, 0.9, 1.2], "r1");
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("deciding it would take"), "{}", o.found);
        let o = ranked([1.1, 1.1, 1.1], "r2");
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("never decided"), "{}", o.found);
    }

    #[test]
    fn better_across_alternating_blocks_takes_the_blocks_as_replicates() {
        let check = Check::Better {
            step: "m".into(),
            a: "a".into(),
            b: "b".into(),
            op: Op::Write.into(),
            op_b: None,
            metric: Metric::Throughput,
            streams: None,
        };
        // a is 20% faster in every block, whatever the machine did between blocks.
        let o = evaluate(
            &check,
            &One(alternated(&[1.2, 1.21, 1.19]), Vec::new()),
            true,
        );
        assert_eq!(o.verdict, Verdict::Agrees, "{}", o.found);
        assert!(o.found.contains("over 3 alternating blocks"), "{}", o.found);
        assert!(o.found.contains("+20.0%"), "{}", o.found);
        // Reversed in one block: no consistent difference, not decided.
        let o = evaluate(&check, &One(alternated(&[1.2, 0.8, 1.1]), Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        // Two blocks are too few to decide.
        let o = evaluate(&check, &One(alternated(&[1.2, 1.2]), Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("3 needed"), "{}", o.found);
        // Blocks of two different alternations were not measured in turns.
        let mut data = alternated(&[1.2, 1.21, 1.19]);
        for (run, b) in data.blocks.iter_mut() {
            if run.starts_with('b') {
                b.alternation = "other".into();
            }
        }
        let o = evaluate(&check, &One(data, Vec::new()), true);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(o.found.contains("separate runs"), "{}", o.found);
    }

    #[test]
    fn measured_figures_and_untestable_claims_say_so() {
        let m = Measurement {
            step: "t".into(),
            name: "rsync-delta".into(),
            value: 1.5,
            unit: "MiB".into(),
            note: String::new(),
        };
        let ev = One(matrix(1.0, 1.0, 0.0), vec![m]);
        let o = evaluate(
            &Check::Measured {
                step: "t".into(),
                names: vec!["rsync-delta".into(), "gluster-heal".into()],
            },
            &ev,
            false,
        );
        assert_eq!(o.verdict, Verdict::Measured);
        assert!(o.found.contains("rsync-delta = 1.50 MiB"), "{}", o.found);
        assert!(
            o.found
                .ends_with("; not measured in this run: gluster-heal"),
            "{}",
            o.found
        );
        let o = evaluate(
            &Check::NotInLab {
                why: "no Windows".into(),
            },
            &ev,
            true,
        );
        assert_eq!(
            (o.verdict, o.found.as_str()),
            (Verdict::NotTested, "no Windows")
        );
    }

    #[test]
    fn more_dips_agree_only_when_the_repetitions_say_so() {
        // b dips at 16 KiB on `files` of the four file sizes in the repetitions `reps`;
        // a never does.
        let dips = |files: usize, reps: &[u32]| {
            let reps = reps.to_vec();
            let data = six_reps(move |t, cell, rep| {
                let (file, rec) = (cell / 3, cell % 3);
                let dip = t == "b" && rec == 1 && file < files && reps.contains(&rep);
                (
                    1000.0 * wobble(cell, rep, 0) * if dip { 0.5 } else { 1.0 },
                    50.0,
                )
            });
            let check = Check::FewerDips {
                step: "m".into(),
                a: "a".into(),
                b: "b".into(),
                ops: vec![Op::Write],
                class: None,
            };
            evaluate(&check, &One(data, Vec::new()), true)
        };
        // 4 of 4 against 0 of 4 in each of six repetitions.
        let o = dips(4, &[0, 1, 2, 3, 4, 5]);
        assert_eq!(o.verdict, Verdict::Agrees, "{}", o.found);
        assert!(
            o.found.contains("a 0 of 24 cells, b 24 of 24"),
            "{}",
            o.found
        );
        // All four in one repetition of six: one disturbed pass, not a pattern; in two,
        // still open, and it says what would decide it.
        assert_eq!(dips(4, &[3]).verdict, Verdict::Inconclusive);
        let o = dips(4, &[1, 3]);
        assert_eq!(o.verdict, Verdict::Inconclusive, "{}", o.found);
        assert!(
            o.found.contains("deciding it would take about"),
            "{}",
            o.found
        );
        assert_eq!(dips(0, &[]).verdict, Verdict::Disagrees);
    }
}
