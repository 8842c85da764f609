//! The latency and consistency parts of report.html: per operation, p50 and p99
//! heatmaps over the matrix, the p99 ratio map against the baseline and percentile plots
//! of chosen cells; and the consistency table (run-to-run CV, within-run p99/p50). Not:
//! the figures (see `tails`) or the charts' drawing (see `svg`).

use crate::format;
use crate::model::{Analysis, OpData};
use crate::svg::{self, esc};
use crate::tails;
use std::fmt::Write;

/// The latency of one operation, or nothing when no target recorded any (imports of
/// IOzone text, for example).
pub fn op_section(h: &mut String, a: &Analysis, op: &OpData) {
    let (Some(p50), Some(p99)) = (
        svg::range_of(&svg::P50, op.cells.values()),
        svg::range_of(&svg::P99, op.cells.values()),
    ) else {
        return;
    };
    // One scale for both percentiles, so a p99 cell and a p50 cell of one colour match.
    let range = (p50.0.min(p99.0), p50.1.max(p99.1));
    h.push_str("<h3>Latency heatmaps: p50 and p99</h3><p class=note>Per request (one system call, or one vectored call), the median over repetitions of each repetition's percentile; hover a cell for p50 to max and the jitter p99/p50.</p><div class=charts>");
    for label in &a.labels {
        let Some(c) = op.cells.get(label) else {
            continue;
        };
        for (m, name) in [(&svg::P50, "p50"), (&svg::P99, "p99")] {
            h.push_str(&svg::heatmap(
                &format!("{label} — {} {name}", op.op),
                Some(c),
                &op.all_cells,
                range,
                m,
            ));
        }
    }
    h.push_str("</div>");
    h.push_str(&svg::legend(range, &svg::P99));
    if !op.p99_vs_baseline.is_empty() {
        h.push_str("<h3>p99 latency against the baseline</h3><p class=note>Each target's p99 over the baseline's: above 1 (red) the longer tail, below 1 (blue) the shorter; tested as throughput is, over the repetitions measured side by side (= equivalent, ○ inconclusive, ? not testable).</p><div class=charts>");
        for label in &a.labels {
            if let Some(c) = op.p99_vs_baseline.get(label) {
                h.push_str(&svg::ratio_heatmap(
                    &format!("p99 {label} / {} — {}", a.baseline, op.op),
                    c,
                    &op.all_cells,
                    true,
                ));
            }
        }
        h.push_str("</div>");
    }
    let plotted = tails::plotted_cells(op);
    if plotted.is_empty() {
        return;
    }
    h.push_str("<h3>Percentiles of chosen cells</h3><p class=note>The smallest record of the largest file, and the cell whose p99 differs most from the baseline's.</p><div class=charts>");
    for k in plotted {
        let lines: Vec<(String, [Option<f64>; 6])> = a
            .labels
            .iter()
            .filter_map(|l| {
                let t = op.cells.get(l)?.get(&k)?.tail.as_ref()?;
                Some((l.clone(), t.percentiles))
            })
            .collect();
        h.push_str(&svg::percentile_plot(
            &format!(
                "{}: {} file, {} records",
                op.op,
                format::size(k.0),
                format::size(k.1)
            ),
            &lines,
        ));
    }
    h.push_str("</div>");
}

/// Per operation and target: how steady it is from run to run and within a run.
pub fn consistency_table(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=consistency>Consistency</h2>");
    if a.consistency
        .iter()
        .all(|c| c.cv.is_none() && c.jitter.is_none())
    {
        h.push_str(
            "<p>No cell of the file size x record size matrix with repetitions or latency: nothing to say of steadiness here (a load curve shows its latency in its own section).</p>",
        );
        return;
    }
    h.push_str("<p class=note>Run to run: the coefficient of variation of a cell's throughput across repetitions, median over the cells and the worst cell. Within a run: p99 latency over p50 latency, median over the cells and the worst cell. Lower is steadier.</p><table><tr><th>operation</th><th>target</th><th>cells</th><th>run-to-run CV (median)</th><th>worst CV (cell)</th><th>p99/p50 (median)</th><th>worst p99/p50 (cell)</th></tr>");
    let cell = |k: (u64, u64)| format!("{} / {}", format::short_size(k.0), format::short_size(k.1));
    for c in &a.consistency {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td></tr>",
            esc(&c.op),
            esc(&c.label),
            c.cells,
            c.cv.map(|v| format::pct(v.0)).unwrap_or_else(|| "–".into()),
            c.cv
                .map(|v| format!("{} ({})", format::pct(v.1), cell(v.2)))
                .unwrap_or_else(|| "–".into()),
            c.jitter
                .map(|v| format!("{:.1}×", v.0))
                .unwrap_or_else(|| "–".into()),
            c.jitter
                .map(|v| format!("{:.1}× ({})", v.1, cell(v.2)))
                .unwrap_or_else(|| "–".into()),
        );
    }
    h.push_str("</table>");
}
