//! The latency and consistency parts of report.html: per operation, p50 and p99
//! heatmaps over the matrix, the p99 ratio map against the baseline and percentile plots
//! of chosen cells; and the consistency table (run-to-run CV, within-run p99/p50). Not:
//! the figures (see `tails`) or the charts' drawing (see `svg`).

use crate::format;
use crate::model::{Analysis, OpData};
use crate::svg;
use crate::tails;
use maud::{html, Markup, PreEscaped};

/// The latency of one operation, or nothing when no target recorded any (imports of
/// IOzone text, for example).
pub fn op_section(a: &Analysis, op: &OpData) -> Markup {
    let (Some(p50), Some(p99)) = (
        svg::range_of(&svg::P50, op.cells.values()),
        svg::range_of(&svg::P99, op.cells.values()),
    ) else {
        return html! {};
    };
    // One scale for both percentiles, so a p99 cell and a p50 cell of one colour match.
    let range = (p50.0.min(p99.0), p50.1.max(p99.1));
    let plotted = tails::plotted_cells(op);
    let lines = |k: &(u64, u64)| -> Vec<(String, [Option<f64>; 6])> {
        a.labels
            .iter()
            .filter_map(|l| {
                let t = op.cells.get(l)?.get(k)?.tail.as_ref()?;
                Some((l.clone(), t.percentiles))
            })
            .collect()
    };
    html! {
        h3 { "Latency heatmaps: p50 and p99" }
        p.note { "Per request (one system call, or one vectored call), the median over repetitions of each repetition's percentile; hover a cell for p50 to max and the jitter p99/p50." }
        div.charts {
            @for label in &a.labels {
                @if let Some(c) = op.cells.get(label) {
                    @for (m, name) in [(&svg::P50, "p50"), (&svg::P99, "p99")] {
                        (PreEscaped(svg::heatmap(&format!("{label} — {} {name}", op.op), Some(c), &op.all_cells, range, m)))
                    }
                }
            }
        }
        (PreEscaped(svg::legend(range, &svg::P99)))
        @if !op.p99_vs_baseline.is_empty() {
            h3 { "p99 latency against the baseline" }
            p.note { "Each target's p99 over the baseline's: above 1 (red) the longer tail, below 1 (blue) the shorter; tested as throughput is, over the repetitions measured side by side (= equivalent, ○ inconclusive, ? not testable)." }
            div.charts {
                @for label in &a.labels {
                    @if let Some(c) = op.p99_vs_baseline.get(label) {
                        (PreEscaped(svg::ratio_heatmap(&format!("p99 {label} / {} — {}", a.baseline, op.op), c, &op.all_cells, true)))
                    }
                }
            }
        }
        @if !plotted.is_empty() {
            h3 { "Percentiles of chosen cells" }
            p.note { "The smallest record of the largest file, and the cell whose p99 differs most from the baseline's." }
            div.charts {
                @for k in &plotted {
                    (PreEscaped(svg::percentile_plot(
                        &format!("{}: {} file, {} records", op.op, format::size(k.0), format::size(k.1)),
                        &lines(k),
                    )))
                }
            }
        }
    }
}

/// Per operation and target: how steady it is from run to run and within a run.
pub fn consistency_table(a: &Analysis) -> Markup {
    let cell = |k: (u64, u64)| format!("{} / {}", format::short_size(k.0), format::short_size(k.1));
    let nothing = a
        .consistency
        .iter()
        .all(|c| c.cv.is_none() && c.jitter.is_none());
    let runs = a.consistency.iter().any(|c| c.across_runs.is_some());
    html! {
        h2 id="consistency" { "Consistency" }
        @if nothing {
            p { "No cell of the file size x record size matrix with repetitions or latency: nothing to say of steadiness here (a load curve shows its latency in its own section)." }
        } @else {
            p.note { "Run to run: the coefficient of variation of a cell's throughput across repetitions, median over the cells and the worst cell. Within a run: p99 latency over p50 latency, median over the cells and the worst cell. Lower is steadier." }
            @if runs {
                p.note { "Across separate runs (a target given as several runs: sharebench runs, IOzone files): the coefficient of variation of the runs' medians of a cell, median over the cells and the worst cell: how far a run minutes later lands, which a run's own interval does not show." }
                @for s in &a.run_spread {
                    p { (crate::tails::run_spread_line(s)) "." }
                }
            }
            table {
                tr {
                    th { "operation" } th { "target" } th { "cells" } th { "run-to-run CV (median)" }
                    th { "worst CV (cell)" } th { "p99/p50 (median)" } th { "worst p99/p50 (cell)" }
                    @if runs { th { "CV across separate runs (median)" } th { "worst across separate runs (cell)" } }
                }
                @for c in &a.consistency {
                    tr {
                        td { (c.op) }
                        td { (c.label) }
                        td.num { (c.cells) }
                        td.num { (format::or_dash(c.cv.map(|v| format::pct(v.0)))) }
                        td.num { (format::or_dash(c.cv.map(|v| format!("{} ({})", format::pct(v.1), cell(v.2))))) }
                        td.num { (format::or_dash(c.jitter.map(|v| format!("{:.1}×", v.0)))) }
                        td.num { (format::or_dash(c.jitter.map(|v| format!("{:.1}× ({})", v.1, cell(v.2))))) }
                        @if runs {
                            td.num { (format::or_dash(c.across_runs.map(|v| format!("{:.1}%", v.0)))) }
                            td.num { (format::or_dash(c.across_runs.map(|v| format!("{:.1}% ({})", v.1, cell(v.2))))) }
                        }
                    }
                }
            }
        }
    }
}
