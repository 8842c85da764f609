//! report.html: one self-contained page (inline CSS and SVG, no script, no network) that
//! opens with the answer (who wins what, by how much, how sure) and then shows the
//! evidence: findings, warnings, per-operation heatmaps, 2D views and ratio maps, latency
//! (see `latency_html`), size classes, CPU, consistency, throughput mode, cache effects,
//! environment and inputs. Built with maud: markup checked when compiled, every text
//! escaped unless marked up on purpose. Not: the charts themselves (see `svg`), whose
//! drawings are spliced in as the SVG markup they are.

use crate::compare;
use crate::format;
use crate::model::{Analysis, SizeClass, Topic, Verdict};
use crate::svg;
use crate::verdicts_json::{self, Scope};
use crate::warnings;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use sharebench_core::operation::Operation;

const CSS: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1f24;background:#fafafa}
main{max-width:1280px;margin:0 auto;padding:18px 28px 60px}
h1{font-size:24px;margin:6px 0 2px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccd;padding-bottom:3px}
h3{font-size:15px;margin:16px 0 6px}
.sub{color:#555;margin:0 0 14px}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
th,td{border:1px solid #d5d8dc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.win{font-weight:600}
.sig{background:#e3f1e6}.ns{background:#f5f5f5;color:#555}.nt{background:#fff6de}
.badge{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;margin-right:6px}
.b-sig{background:#2e7d32;color:#fff}.b-ns{background:#9e9e9e;color:#fff}.b-nt{background:#f0a202;color:#111}.b-d{background:#546e7a;color:#fff}
ul.f li{margin:3px 0}
.diff td{background:#fff3cd}
details{background:#fff;border:1px solid #d5d8dc;border-radius:4px;margin:8px 0;padding:4px 12px}
summary{cursor:pointer;font-weight:600;font-size:16px;padding:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
svg.chart{background:#fff}
svg text.ct{font:600 13px system-ui,sans-serif;fill:#222}
svg text.ax{font:11px system-ui,sans-serif;fill:#444}
svg text.cv{font:10px system-ui,sans-serif;text-anchor:middle;pointer-events:none}
svg rect.miss{fill:#e6e6e6}
.warn li{margin:2px 0}
.note{color:#555;font-size:13px}
"#;

/// One cell of the answer table: the winner of a size class, its margin and verdict, and
/// the CSS class of that verdict.
fn class_cell(a: &Analysis, op: Operation, class: SizeClass) -> (Markup, &'static str) {
    let Some(r) = a.classes.iter().find(|r| r.op == op && r.class == class) else {
        return (html! { "–" }, "");
    };
    let iops = |label: &str| r.stat(label).and_then(|s| s.iops);
    let (Some(w), Some(m), Some(v)) = (&r.winner, r.margin_pct(), &r.versus) else {
        let only = r.stats.first().map(|s| {
            let ops = s
                .iops
                .map(|v| format!(", {} ops/s at ≤ 64 KiB records", format::ops(v)))
                .unwrap_or_default();
            format!("{}: {}{ops}", s.label, format::rate(s.median))
        });
        return (html! { (only.unwrap_or_default()) }, "");
    };
    let css = if r.winner_called() {
        "sig"
    } else if v.p.is_some() || v.testable > 0 {
        "ns"
    } else {
        "nt"
    };
    let tag = match v.verdict {
        Verdict::Faster | Verdict::Slower => format!(
            "significant and ≥ {}%, {}",
            a.threshold_pct,
            compare::change_with_ci(v.geo_ratio, v.ci)
        ),
        Verdict::Equivalent => format!(
            "equivalent within ±{}%, {}",
            a.threshold_pct,
            compare::change_with_ci(v.geo_ratio, v.ci)
        ),
        Verdict::Inconclusive => format!(
            "inconclusive, {}, {}",
            compare::change_with_ci(v.geo_ratio, v.ci),
            format::p(v.p)
        ),
        Verdict::NotTestable => "not testable".into(),
    };
    let small = match (iops(w), r.runner_up.as_deref().and_then(iops)) {
        (Some(a), Some(b)) => Some((format::ops(a), format::ops(b))),
        _ => None,
    };
    let cell = html! {
        span.win { (w) } " " (format!("{m:+.0}%")) br;
        span.note { (tag) "; " (v.cells) " cells" }
        @if let Some((a, b)) = small {
            br;
            span.note { "records ≤ 64 KiB: " (a) " vs " (b) " ops/s" }
        }
    };
    (cell, css)
}

/// A finding's badge: a winner, no winner, not testable, or observed (no test).
fn badge(sig: Option<bool>, descriptive: bool) -> Markup {
    let (css, text) = match (descriptive, sig) {
        (true, _) => ("b-d", "observed"),
        (_, Some(true)) => ("b-sig", "winner"),
        (_, Some(false)) => ("b-ns", "no winner"),
        (_, None) => ("b-nt", "not testable"),
    };
    html! { span class={ "badge " (css) } { (text) } }
}

const METHOD: &str = "Per cell: median, mean, min, max and coefficient of variation over repetitions; the distribution-free 95% interval of the median from order statistics (from 6 repetitions; the rule --reps auto stops on). That interval is this run's: on a shared machine a run minutes later can differ by more, with the machine's minute (several runs of one target, given the same --label, measure that). Comparisons: ratio of medians; a t-test on log throughput, paired by repetition (both targets measured side by side in one run), decides significance, with Benjamini-Hochberg adjustment over the cells of each operation (q < 0.05), and its 95% interval of the ratio; a winner is called only when a difference is significant and at least the threshold, “equivalent” when the interval lies within it; Mann-Whitney U is shown on hover (with 3 repetitions a side its smallest two-sided p is 0.1, so it cannot decide alone). Cells of separate runs (one block of time a side) get a ratio, never a verdict. Throughput-mode rows are judged alone against the baseline's row: paired by repetition when one run measured both (Welch's t otherwise), the ratio of geometric means with its 95% interval, decided with Benjamini-Hochberg adjustment over the rows. Size classes and findings: the replicates are the repetitions, not the cells: per repetition the mean log ratio over the cells, then a t-test and interval over the repetitions. Imported IOzone and fio figures count as one repetition each; inputs that share a label are runs of one target, and with three or more a side the runs are the replicates (paired by run where both sides share them, else Welch over the runs). See docs/methods/statistics.md.";

/// A self-contained page: its title, its own CSS, and `main` holding `body`. Shared by
/// the run report and the study report.
pub fn document(title: &str, css: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { (title) }
                style { (PreEscaped(css)) }
            }
            body { main { (body) } }
        }
    }
}

pub fn render(a: &Analysis) -> String {
    let title = a.labels.join(" vs ");
    let body = html! {
                    h1 { "sharebench report: " (title) }
                    p.sub {
                        (a.sources.len()) " input(s), " (a.records.len()) " records, baseline "
                        b { (a.baseline) }
                        ". Throughput in binary units (1 MB/s = 1024 KiB/s); medians over repetitions."
                    }
                    (answer_section(a))
                    (findings_section(a))
                    (warnings_section(a))
                    (op_sections(a))
                    (crate::workloads::render(a))
                    (cpu_table(a))
                    (crate::latency_html::consistency_table(a))
                    (throughput_table(a))
                    (cache_table(a))
                    (env_table(a))
                    h2 #method { "Method" }
                    p.note { (METHOD) }
    };
    document(&format!("sharebench report: {title}"), CSS, body).into_string()
}

/// The answer: who wins per operation and size class, and every comparison as a table.
fn answer_section(a: &Analysis) -> Markup {
    html! {
        h2 #answer { "The answer" }
        @if a.labels.len() >= 2 && !a.classes.is_empty() {
            p { "Who is faster, per operation and file-size class: the winner by the geometric mean of per-cell ratios against the runner-up, its margin with its 95% interval, and the verdict: a winner only when the margin is significant (a t-test over the replicates, 5%: the repetitions of one run, each the mean log ratio of its cells measured side by side; or the runs, when several inputs share a label) and at least the threshold; one separate run a side gets no verdict; “equivalent” when the interval lies within the threshold; else “inconclusive”." }
            table {
                tr {
                    th { "operation" }
                    @for c in SizeClass::ALL {
                        th { (c.name()) " files" br; span.note { (c.range()) } }
                    }
                }
                @for op in &a.ops {
                    tr {
                        th { (op.op) }
                        @for c in SizeClass::ALL {
                            @let (cell, css) = class_cell(a, op.op, c);
                            td class=(css) { (cell) }
                        }
                    }
                }
            }
        } @else if a.labels.len() >= 2 {
            p { "No cell of the file size x record size matrix in common, so no winner per size class: the targets are compared in the sections of their workload below (load-latency curves, metadata rates, streams)." }
        } @else {
            p { "Only one target: no comparison; the evidence below describes it." }
        }
        (comparisons_table(a))
    }
}

/// Every label against the baseline, per operation (all its cells) and size class, one row
/// each (the rows of verdicts.json), with the caveat they share stated once above them.
fn comparisons_table(a: &Analysis) -> Markup {
    let rows: Vec<verdicts_json::Row> = verdicts_json::rows(a)
        .into_iter()
        .filter(|r| matches!(r.scope, Scope::Operation | Scope::Class))
        .collect();
    let separate = rows.iter().any(verdicts_json::Row::of_separate_runs);
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    html! {
        @if !rows.is_empty() {
            h3 { "Every comparison with the baseline (" (a.baseline) ")" }
            @if separate {
                p.note { "Cells of separate runs are one block of time a side: a difference may be the runs', so it is shown and never called. Measure both in one run to decide it (docs/methods/statistics.md, “Replicates”)." }
            }
            table {
                tr {
                    th { "operation" } th { "files" } th { "target" } th { "verdict" }
                    th { "ratio" } th { "95% interval" } th { "test" } th { "cells" }
                }
                @for r in &rows {
                    tr {
                        td { (r.op) }
                        td { (r.class.unwrap_or("all")) }
                        td { (r.target) }
                        td class=(verdict_css(r.verdict)) { (r.verdict.name()) }
                        td.num { (pct(r.ratio)) }
                        td.num { (r.ci.map(|(lo, hi)| format!("{}, {}", pct(lo), pct(hi))).unwrap_or_else(|| "–".into())) }
                        td.note { (r.test.split([':', '(']).next().unwrap_or_default().trim()) }
                        td.num { (r.cells) }
                    }
                }
            }
        }
    }
}

/// The table's colour of a verdict: a winner, tested without one, or not testable.
fn verdict_css(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Faster | Verdict::Slower => "sig",
        Verdict::NotTestable => "nt",
        Verdict::Equivalent | Verdict::Inconclusive => "ns",
    }
}

/// Every other finding, with its badge.
fn findings_section(a: &Analysis) -> Markup {
    // Operations and size classes are rows of the answer's table; the findings that need a
    // sentence are the rest.
    let others: Vec<_> = a
        .findings
        .iter()
        .filter(|f| !matches!(f.topic, Topic::Overall | Topic::SizeClass))
        .collect();
    html! {
        h2 #findings { "Findings" }
        ul.f {
            @for f in &others {
                li {
                    (badge(f.significant, matches!(f.topic, Topic::Cache | Topic::Consistency)))
                    (f.text)
                }
            }
            @if others.is_empty() && a.ops.iter().any(|o| !o.vs_baseline.is_empty()) {
                li { "Nothing beyond the answer's table of comparisons." }
            } @else if others.is_empty() && a.labels.len() >= 2 {
                li { "No comparison finding: the targets have no cell of the matrix in common (see their workload's section)." }
            } @else if others.is_empty() {
                li { "No comparison finding: a single target." }
            }
        }
    }
}

/// Input problems, then the warnings grouped by kind.
fn warnings_section(a: &Analysis) -> Markup {
    html! {
        h2 #warnings { "Warnings" }
        @if a.warnings.is_empty() && a.load_warnings.is_empty() {
            p { "None: every cell has repetitions, long enough timings and low variation." }
        } @else {
            ul.warn {
                @for w in &a.load_warnings { li { b { "input" } ": " (w) } }
                @for g in warnings::grouped(&a.warnings) {
                    @let worst = g.items[0];
                    li {
                        b { (g.kind.name()) } " (" (g.items.len()) " series) — " (g.series())
                        ". Worst, " (worst.label)
                        @if let Some(op) = worst.op { " " (op) }
                        ": " (worst.text)
                    }
                }
            }
        }
    }
}

/// Per operation: throughput heatmaps, surface, 2D view, ratio maps, latency, classes.
fn op_sections(a: &Analysis) -> Markup {
    html! {
        h2 #ops { "Per operation" }
        p.note { "Heatmaps: file size (rows) × record size (columns), median throughput; hover a cell for the exact KiB/s, the repetitions, the 95% interval of the median and the CV. Grey “–” cells are missing for that input. Ratio maps: each target over the baseline, blue faster, red slower (saturating at 2× and 0.5×); = = equivalent (the ratio's 95% interval within the threshold), ○ = inconclusive (not significant with Benjamini-Hochberg q < 0.05, or under the threshold), ? = not testable (fewer than 3 repetitions a side)." }
        @for (i, op) in a.ops.iter().enumerate() {
            @let range = svg::range_of(&svg::THROUGHPUT, op.cells.values()).unwrap_or((1.0, 1.0));
            details open[i == 0] {
                summary { (op.op) }
                h3 { "Throughput heatmaps" }
                div.charts {
                    @for label in &a.labels {
                        @if let Some(c) = op.cells.get(label) {
                            (PreEscaped(svg::heatmap(&format!("{} — {}", label, op.op), Some(c), &op.all_cells, range, &svg::THROUGHPUT)))
                        }
                    }
                }
                (PreEscaped(svg::legend(range, &svg::THROUGHPUT)))
                (PreEscaped(crate::surface::section(op, &a.labels, range)))
                h3 { "Throughput vs file size (IOzone's 2D view)" }
                div.charts {
                    @for label in &a.labels {
                        @if let Some(c) = op.cells.get(label) {
                            (PreEscaped(svg::lines_2d(&format!("{} — {}", label, op.op), c, range.1)))
                        }
                    }
                }
                @if !op.vs_baseline.is_empty() {
                    h3 { "Ratio against the baseline" }
                    div.charts {
                        @for label in &a.labels {
                            @if let Some(c) = op.vs_baseline.get(label) {
                                (PreEscaped(svg::ratio_heatmap(&format!("{} / {} — {}", label, a.baseline, op.op), c, &op.all_cells, false)))
                            }
                        }
                    }
                }
                (crate::latency_html::op_section(a, op))
                (class_table(a, op.op))
            }
        }
    }
}

/// An operation's size classes: per target its figures, and the class's verdict.
fn class_table(a: &Analysis, op: Operation) -> Markup {
    let rows: Vec<_> = a.classes.iter().filter(|r| r.op == op).collect();
    if rows.is_empty() {
        return html! {};
    }
    let verdict = |r: &crate::model::ClassRow| match (&r.winner, &r.versus) {
        (Some(w), Some(v)) => format!(
            "{} {} over {}; {} ({}; {} of {} cells faster)",
            w,
            format::change(v.geo_ratio),
            r.runner_up.as_deref().unwrap_or(""),
            match v.verdict {
                Verdict::Faster | Verdict::Slower => "winner",
                Verdict::Equivalent => "equivalent",
                Verdict::Inconclusive => "inconclusive",
                Verdict::NotTestable => "not testable",
            },
            compare::change_with_ci(v.geo_ratio, v.ci),
            v.faster,
            v.cells
        ),
        _ => "–".into(),
    };
    html! {
        h3 { "Size classes" }
        table {
            tr {
                th { "class" } th { "target" } th { "cells" } th { "median" } th { "peak (cell)" }
                th { "CV (stability)" } th { "ops/s (≤ 64 KiB records)" } th { "p99 latency" }
                th { "CPU" } th { "MiB per CPU s" } th { "winner, margin, significance" }
            }
            @for r in &rows {
                @for (i, s) in r.stats.iter().enumerate() {
                    tr {
                        td { @if i == 0 { (r.class.name()) " (" (r.class.range()) ")" } }
                        td class=[(r.winner.as_deref() == Some(&s.label)).then_some("win")] { (s.label) }
                        td.num { (s.cells) }
                        td.num { (format::rate(s.median)) }
                        td.num {
                            (format::rate(s.peak)) " (" (format::short_size(s.peak_cell.0)) " / "
                            (format::short_size(s.peak_cell.1)) ")"
                        }
                        td.num { (format::or_dash(s.cv.map(format::pct))) }
                        td.num { (format::or_dash(s.iops.map(format::ops))) }
                        td.num { (format::or_dash(s.p99_us.map(format::latency))) }
                        td.num { (format::or_dash(s.cpu_pct.map(format::pct))) }
                        td.num { (format::or_dash(s.mib_per_cpu_s.map(|v| format!("{v:.0}")))) }
                        @if i == 0 { td rowspan=(r.stats.len()) { (verdict(r)) } }
                    }
                }
            }
        }
    }
}

fn cpu_table(a: &Analysis) -> Markup {
    let rows: Vec<_> = a
        .classes
        .iter()
        .filter(|r| r.stats.iter().any(|s| s.cpu_pct.is_some()))
        .collect();
    html! {
        h2 #cpu { "CPU utilisation per size class" }
        @if rows.is_empty() {
            p { "No CPU figures in the inputs (IOzone without -+u, for example)." }
        } @else {
            p.note { "Client CPU: the median over cells of the measuring process's CPU time over the timed interval (100% = one CPU). Server CPU: the lab servers' processes, where the records carry it. Throughput per CPU: MiB moved per CPU second." }
            table {
                tr {
                    th { "operation" } th { "class" }
                    @for l in &a.labels {
                        th { (l) " client CPU" } th { (l) " server CPU" } th { (l) " MiB/CPU s" }
                    }
                }
                @for r in &rows {
                    tr {
                        td { (r.op) } td { (r.class.name()) }
                        @for l in &a.labels {
                            @let s = r.stat(l);
                            td.num { (format::or_dash(s.and_then(|s| s.cpu_pct).map(format::pct))) }
                            td.num {
                                (s.and_then(|s| s.server_cpu_pct).map(format::pct).unwrap_or_else(|| "not recorded".into()))
                            }
                            td.num { (format::or_dash(s.and_then(|s| s.mib_per_cpu_s).map(|v| format!("{v:.0}")))) }
                        }
                    }
                }
            }
        }
    }
}

fn throughput_table(a: &Analysis) -> Markup {
    html! {
        h2 #throughput { "Throughput mode" }
        @if a.throughput.is_empty() {
            p { "No throughput-mode (several workers) results in the inputs." }
        } @else {
            table {
                tr {
                    th { "operation" } th { "workers" } th { "file / record" } th { "target" }
                    th { "reps" } th { "children see" } th { "parent sees" }
                    th { "min / max / avg per worker" } th { "CV" } th { "vs baseline (geometric means, 95% interval)" }
                }
                @for t in &a.throughput {
                    tr {
                        td { (t.op) }
                        td.num { (t.threads) }
                        td { (format::short_size(t.file_size)) " / " (format::short_size(t.record_size)) }
                        td { (t.label) }
                        td.num { (t.reps) }
                        td.num { (format::rate(t.children.median)) }
                        td.num { @if t.parent_sees > 0.0 { (format::rate(t.parent_sees)) } @else { "–" } }
                        td.num {
                            (format::rate(t.min_worker)) " / " (format::rate(t.max_worker)) " / "
                            (format::rate(t.avg_worker))
                        }
                        td.num { (format::or_dash(t.children.cv.map(format::pct))) }
                        td { (format::or_dash(t.vs_baseline.map(|v| format!("{} ({})", crate::compare::change_with_ci(v.ratio(), v.ci), format::p(v.p))))) }
                    }
                }
            }
        }
    }
}

fn cache_table(a: &Analysis) -> Markup {
    html! {
        h2 #cache { "Cache effects" }
        @if a.cache_flags.is_empty() {
            p { "No operation loses more than 2× as the file size grows." }
        } @else {
            p.note { "Where throughput falls by more than 2× against the best smaller file at the same record size: usually the file no longer fits a cache (page cache, server cache)." }
            table {
                tr {
                    th { "target" } th { "operation" } th { "from" } th { "to" } th { "fall" }
                    th { "record sizes affected" } th { "client RAM" }
                }
                @for c in &a.cache_flags {
                    tr {
                        td { (c.label) }
                        td { (c.op) }
                        td {
                            (format::rate(c.from_kib_s)) " at " (format::size(c.from_file)) " ("
                            (format::size(c.record_size)) " rec)"
                        }
                        td { (format::rate(c.to_kib_s)) " at " (format::size(c.to_file)) }
                        td.num { (format!("{:.1}×", c.factor())) }
                        td.num { (c.record_sizes_affected) }
                        td { (c.ram_bytes.map(format::size).unwrap_or_else(|| "unknown".into())) }
                    }
                }
            }
        }
    }
}

fn env_table(a: &Analysis) -> Markup {
    html! {
        h2 #env { "Environment" }
        p.note { "Rows whose values differ between targets are highlighted: they may explain a difference." }
        table {
            tr {
                th {}
                @for l in &a.env.labels { th { (l) } }
            }
            @for r in &a.env.rows {
                tr class=[r.differs.then_some("diff")] {
                    th { (r.name) }
                    @for v in &r.values { td { (v) } }
                }
            }
        }
    }
}
