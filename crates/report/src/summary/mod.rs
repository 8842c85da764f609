//! The terminal summaries, one module for both commands. Of a report's analysis (`render`,
//! the `report` command's terminal renderer): a compact table of winners by operation and
//! size class (margin and whether it is significant), every label against the baseline per
//! operation (verdict, ratio, interval), operations per second and p99
//! latency per operation and target, for a target of several runs how far its cell medians
//! moved between them, then the counts of findings and warnings. Of a run's
//! records, right after it ran (`run::print`): see there. A glance; the evidence is in
//! report.html. Not: colours or a pager.

pub mod run;

use crate::format;
use crate::model::{Analysis, SizeClass};
use crate::tails;
use crate::verdicts_json;
use std::fmt::Write;

pub fn render(a: &Analysis) -> String {
    let mut s = String::new();
    load_curves(&mut s, a);
    if a.ops.is_empty() && !a.load_curves.is_empty() {
        return s;
    }
    let _ = writeln!(s, "Winners by operation and size class (median of cell medians; * = a winner: significant and at least the threshold, see report.html)");
    let _ = write!(s, "{:<16}", "op");
    for c in SizeClass::ALL {
        let _ = write!(s, " {:<24}", format!("{} ({})", c.name(), c.range()));
    }
    s.push('\n');
    for op in &a.ops {
        let _ = write!(s, "{:<16}", op.op);
        for c in SizeClass::ALL {
            let cell = match a.classes.iter().find(|r| r.op == op.op && r.class == c) {
                None => "–".to_string(),
                Some(r) => match (&r.winner, r.margin_pct()) {
                    (Some(w), Some(m)) => {
                        format!("{w} {m:+.0}%{}", if r.winner_called() { "*" } else { "" })
                    }
                    _ => r
                        .stats
                        .first()
                        .map(|s| format!("{} {}", s.label, format::rate(s.median)))
                        .unwrap_or_default(),
                },
            };
            let _ = write!(s, " {:<24}", truncate(&cell, 24));
        }
        s.push('\n');
    }
    comparisons(&mut s, a);
    let tails_known = a.ops.iter().any(|op| {
        op.cells.values().any(|c| {
            tails::small_record_iops(c.iter()).is_some() || tails::median_p99(c.values()).is_some()
        })
    });
    if tails_known {
        let _ = writeln!(
            s,
            "Operations per second at records up to 64 KiB, and p99 latency (medians over the cells)"
        );
        let _ = write!(s, "{:<16}", "op");
        for l in &a.labels {
            let _ = write!(s, " {:<28}", truncate(l, 28));
        }
        s.push('\n');
        for op in &a.ops {
            let _ = write!(s, "{:<16}", op.op);
            for l in &a.labels {
                let cell = op.cells.get(l).map(|c| {
                    let ops = tails::small_record_iops(c.iter())
                        .map(|v| format!("{} ops/s", format::ops(v)));
                    let p99 = tails::median_p99(c.values())
                        .map(|v| format!("p99 {}", format::latency(v)));
                    [ops, p99]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                let _ = write!(
                    s,
                    " {:<28}",
                    truncate(&cell.unwrap_or_else(|| "–".into()), 28)
                );
            }
            s.push('\n');
        }
    }
    if !a.throughput.is_empty() {
        let _ = writeln!(
            s,
            "Throughput mode: {} rows (children see / parent sees) in report.html",
            a.throughput.len()
        );
    }
    for spread in &a.run_spread {
        let _ = writeln!(s, "{}", tails::run_spread_line(spread));
    }
    let sig = a
        .findings
        .iter()
        .filter(|f| f.significant == Some(true))
        .count();
    let kinds: Vec<String> = crate::warnings::grouped(&a.warnings)
        .iter()
        .map(|g| format!("{} ({})", g.kind.name(), g.items.len()))
        .collect();
    let _ = writeln!(
        s,
        "{} findings ({sig} naming a winner), baseline {}; warnings: {}",
        a.findings.len(),
        a.baseline,
        if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.join(", ")
        }
    );
    s
}

/// Every label against the baseline over all cells of each operation (the operation rows
/// of verdicts.json), the caveat of separate runs said once.
fn comparisons(s: &mut String, a: &Analysis) {
    let rows: Vec<_> = verdicts_json::rows(a)
        .into_iter()
        .filter(|r| r.scope == verdicts_json::Scope::Operation)
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "Against the baseline {} over all cells of each operation (per size class and cell: report.html, verdicts.json)",
        a.baseline
    );
    if rows.iter().any(verdicts_json::Row::of_separate_runs) {
        let _ = writeln!(
            s,
            "  separate runs are one block of time a side: shown, never called; measure both in one run to decide"
        );
    }
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    for r in &rows {
        let ci =
            r.ci.map(|(lo, hi)| format!(" [{}, {}]", pct(lo), pct(hi)))
                .unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<16} {:<24} {:<13} {}{ci}",
            r.op,
            truncate(&r.target, 24),
            r.verdict.name(),
            pct(r.ratio)
        );
    }
}

/// One line per load curve: its peak, knee, ORT and the rate within the latency bound.
fn load_curves(s: &mut String, a: &Analysis) {
    for c in &a.load_curves {
        let rate = |v: Option<f64>| v.map_or("–".to_string(), |r| format!("{r:.0}/s"));
        let bound = a
            .latency_bound_us
            .map(|b| format!(", p99 < {} up to {}", format::latency(b), rate(c.within(b))));
        let _ = writeln!(
            s,
            "Load {} (mix {}, {} points): peak valid {}, knee {}, ORT {}{}",
            c.label,
            c.mix,
            c.points.len(),
            rate(c.peak()),
            c.knee()
                .map_or("beyond the curve".into(), |k| format!("{k:.0}/s")),
            c.ort_us().map_or("–".into(), format::latency),
            bound.unwrap_or_default()
        );
    }
}

fn truncate(t: &str, n: usize) -> String {
    if t.chars().count() <= n {
        t.to_string()
    } else {
        let mut x: String = t.chars().take(n - 1).collect();
        x.push('…');
        x
    }
}
