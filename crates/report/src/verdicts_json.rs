//! verdicts.json: what a report decided, as data a CI job can act on. Every label against
//! the baseline, per operation (all its cells), per size class and per cell, and every
//! throughput-mode row: ratio, 95% interval, test, p, threshold and verdict, with the
//! inputs' labels and run ids. The schema is in docs/reference/records.md ("verdicts.json"); a change
//! that breaks a reader raises `VERSION`. Not: deciding anything (`compare` does), nor the
//! gate on it (`slower_than`).

use crate::analysis::Analysis;
use crate::classes::SizeClass;
use crate::compare::{self, Comparison, Overall, ALPHA};
use crate::model::{Design, Replicates, RowVersus, ThroughputRow, Verdict};
use crate::{ReportError, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The schema's version: raised when a field changes meaning or goes away.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Verdicts<'a> {
    schema: &'static str,
    version: u32,
    threshold_pct: f64,
    baseline: &'a str,
    inputs: Vec<Input<'a>>,
    comparisons: Vec<Row>,
}

#[derive(Serialize)]
struct Input<'a> {
    label: &'a str,
    source: String,
    run_ids: Vec<&'a str>,
}

/// One comparison of `target` with `baseline`.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Row {
    pub target: String,
    pub baseline: String,
    pub op: String,
    pub scope: Scope,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    pub cells: usize,
    /// Target over baseline: above 1, the target is faster.
    pub ratio: f64,
    /// 95% interval of the ratio; absent when not testable.
    pub ci: Option<(f64, f64)>,
    /// The test and its replicates, in words.
    pub test: String,
    pub p: Option<f64>,
    /// `p` adjusted over the operation's cells (cells and throughput rows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q: Option<f64>,
    pub verdict: Verdict,
}

/// What a row covers.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// All the cells of an operation.
    Operation,
    /// The cells of a size class.
    Class,
    Cell,
    /// A throughput-mode row.
    Threads,
}

impl Row {
    /// Its sides come from separate runs: one block of time each, never called.
    pub fn of_separate_runs(&self) -> bool {
        self.test.starts_with(SEPARATE_RUNS)
    }
}

/// The test words of a comparison between separate runs.
const SEPARATE_RUNS: &str = "separate runs: one block of time each, never called";

/// A ratio that has no value (a median of zero) is written as 0.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

fn overall_row(target: &str, a: &Analysis, op: String, cells: &[&Comparison]) -> Row {
    let o: Overall = compare::overall(cells.iter().copied(), a.threshold_pct);
    let test = match o.replicates {
        Replicates::Repetitions(n) => format!(
            "t-test over {n} paired repetitions (per repetition the mean of the cells' log ratios)"
        ),
        Replicates::PairedRuns(n) => format!("t-test over {n} runs paired by run"),
        Replicates::Runs(a, b) => format!("Welch's t over {a} and {b} runs, each run a replicate"),
        Replicates::SeparateRuns => SEPARATE_RUNS.into(),
    };
    Row {
        target: target.to_string(),
        baseline: a.baseline.clone(),
        op,
        scope: Scope::Operation,
        class: None,
        file_size: None,
        record_size: None,
        threads: None,
        cells: o.cells,
        ratio: finite(o.geo_ratio),
        ci: o.ci,
        test,
        p: o.p,
        q: None,
        verdict: o.verdict,
    }
}

/// A cell's test in words.
fn design_words(d: &Design) -> &'static str {
    match d {
        Design::Repetitions => "paired t on log figures, by repetition",
        Design::PairedRuns => "paired t on log run medians, by run",
        Design::Runs(..) => "Welch's t on log run medians, each run a replicate",
        Design::OneBlockEach => SEPARATE_RUNS,
    }
}

/// Every comparison the report decides, in the order of its operations.
pub fn rows(a: &Analysis) -> Vec<Row> {
    let mut out = Vec::new();
    for od in &a.ops {
        let op = od.op.to_string();
        for (label, cells) in &od.vs_baseline {
            let all: Vec<&Comparison> = cells.values().collect();
            if all.is_empty() {
                continue;
            }
            out.push(overall_row(label, a, op.clone(), &all));
            for class in SizeClass::ALL {
                let some: Vec<&Comparison> = cells
                    .iter()
                    .filter(|(k, _)| SizeClass::of(k.0) == class)
                    .map(|(_, c)| c)
                    .collect();
                if !some.is_empty() {
                    let mut r = overall_row(label, a, op.clone(), &some);
                    (r.scope, r.class) = (Scope::Class, Some(class.name()));
                    out.push(r);
                }
            }
            for (k, c) in cells {
                out.push(Row {
                    target: label.clone(),
                    baseline: a.baseline.clone(),
                    op: op.clone(),
                    scope: Scope::Cell,
                    class: None,
                    file_size: Some(k.0),
                    record_size: Some(k.1),
                    threads: None,
                    cells: 1,
                    ratio: finite(c.ratio),
                    ci: c.ci,
                    test: design_words(&c.design).into(),
                    p: c.p,
                    q: c.q,
                    verdict: c.verdict,
                });
            }
        }
    }
    for t in &a.throughput {
        let Some(v) = &t.vs_baseline else { continue };
        out.push(throughput_row(a, t.label.as_str(), t, v));
    }
    out
}

fn throughput_row(a: &Analysis, label: &str, t: &ThroughputRow, v: &RowVersus) -> Row {
    Row {
        target: label.to_string(),
        baseline: a.baseline.clone(),
        op: t.op.to_string(),
        scope: Scope::Threads,
        class: None,
        file_size: Some(t.file_size),
        record_size: Some(t.record_size),
        threads: Some(t.threads),
        cells: 1,
        ratio: finite(v.ratio()),
        ci: v.ci,
        test: if v.paired {
            "paired t on log children-see throughput, by repetition".into()
        } else {
            "Welch's t on log children-see throughput".into()
        },
        p: v.p,
        q: v.q,
        verdict: v.verdict,
    }
}

/// The whole file.
pub fn render(a: &Analysis) -> Result<Vec<u8>> {
    let mut run_ids: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &a.records {
        if !r.run_id.is_empty() {
            run_ids.entry(&r.target).or_default().insert(&r.run_id);
        }
    }
    let doc = Verdicts {
        schema: "sharebench-verdicts",
        version: VERSION,
        threshold_pct: a.threshold_pct,
        baseline: &a.baseline,
        inputs: a
            .sources
            .iter()
            .map(|s| Input {
                label: &s.label,
                source: s.path.display().to_string(),
                run_ids: run_ids
                    .get(s.label.as_str())
                    .map(|ids| ids.iter().copied().collect())
                    .unwrap_or_default(),
            })
            .collect(),
        comparisons: rows(a),
    };
    let mut bytes = serde_json::to_vec_pretty(&doc)
        .map_err(|e| ReportError(format!("cannot build verdicts.json: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The operations (all their cells) and throughput-mode rows of a label decided slower than
/// the baseline by more than `pct` percent: significant, with the ratio at or below
/// 1 / (1 + pct/100). What `report --fail-if-slower` fails on.
pub fn slower_than(a: &Analysis, pct: f64) -> Vec<Row> {
    rows(a)
        .into_iter()
        .filter(|r| matches!(r.scope, Scope::Operation | Scope::Threads))
        .filter(|r| {
            let significant = r.q.or(r.p).is_some_and(|p| p < ALPHA);
            compare::decide(r.ratio, r.ci, significant, pct) == Verdict::Slower
        })
        .collect()
}
