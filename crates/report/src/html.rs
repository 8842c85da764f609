//! report.html: one self-contained page (inline CSS and SVG, no script, no network) that
//! opens with the answer (who wins what, by how much, how sure) and then shows the
//! evidence: findings, warnings, per-operation heatmaps, 2D views and ratio maps, latency
//! (see `latency_html`), size classes, CPU, consistency, throughput mode, cache effects, environment and inputs. Not: the charts
//! themselves (see `svg`).

use crate::compare;
use crate::format;
use crate::model::{Analysis, SizeClass, Topic, Verdict};
use crate::svg::{self, esc};
use crate::warnings;
use std::fmt::Write;

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

fn class_cell(a: &Analysis, op: &str, class: SizeClass) -> (String, &'static str) {
    let Some(r) = a.classes.iter().find(|r| r.op == op && r.class == class) else {
        return ("–".into(), "");
    };
    let iops = |label: &str| r.stat(label).and_then(|s| s.iops);
    match (&r.winner, r.margin_pct(), &r.versus) {
        (Some(w), Some(m), Some(v)) => {
            let small = match (iops(w), r.runner_up.as_deref().and_then(iops)) {
                (Some(a), Some(b)) => format!(
                    "<br><span class=note>records ≤ 64 KiB: {} vs {} ops/s</span>",
                    format::ops(a),
                    format::ops(b)
                ),
                _ => String::new(),
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
            (
                format!(
                    "<span class=win>{}</span> {:+.0}%<br><span class=note>{}; {} cells</span>{small}",
                    esc(w),
                    m,
                    tag,
                    v.cells
                ),
                css,
            )
        }
        _ => (
            r.stats
                .first()
                .map(|s| {
                    let ops = s
                        .iops
                        .map(|v| format!(", {} ops/s at ≤ 64 KiB records", format::ops(v)))
                        .unwrap_or_default();
                    format!("{}: {}{ops}", esc(&s.label), format::rate(s.median))
                })
                .unwrap_or_default(),
            "",
        ),
    }
}

fn badge(sig: Option<bool>, descriptive: bool) -> &'static str {
    match (descriptive, sig) {
        (true, _) => "<span class='badge b-d'>observed</span>",
        (_, Some(true)) => "<span class='badge b-sig'>winner</span>",
        (_, Some(false)) => "<span class='badge b-ns'>no winner</span>",
        (_, None) => "<span class='badge b-nt'>not testable</span>",
    }
}

pub fn render(a: &Analysis) -> String {
    let mut h = String::with_capacity(1 << 20);
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width,initial-scale=1'><title>sharebench report: {}</title><style>{CSS}</style></head><body><main>",
        esc(&a.labels.join(" vs "))
    );
    let _ = write!(
        h,
        "<h1>sharebench report: {}</h1><p class=sub>{} input(s), {} records, baseline <b>{}</b>. Throughput in binary units (1 MB/s = 1024 KiB/s); medians over repetitions.</p>",
        esc(&a.labels.join(" vs ")),
        a.sources.len(),
        a.records.len(),
        esc(&a.baseline)
    );

    answer_section(&mut h, a);
    findings_section(&mut h, a);
    warnings_section(&mut h, a);
    op_sections(&mut h, a);
    crate::workloads::render(&mut h, a);
    cpu_table(&mut h, a);
    crate::latency_html::consistency_table(&mut h, a);
    throughput_table(&mut h, a);
    cache_table(&mut h, a);
    env_table(&mut h, a);

    h.push_str("<h2 id=method>Method</h2><p class=note>Per cell: median, mean, min, max and coefficient of variation over repetitions; the distribution-free 95% interval of the median from order statistics (from 6 repetitions; the rule --reps auto stops on). Comparisons: ratio of medians; a t-test on log throughput, paired by repetition (both targets measured side by side in one run), decides significance, with Benjamini-Hochberg adjustment over the cells of each operation (q &lt; 0.05), and its 95% interval of the ratio; a winner is called only when a difference is significant and at least the threshold, “equivalent” when the interval lies within it; Mann-Whitney U is shown on hover (with 3 repetitions a side its smallest two-sided p is 0.1, so it cannot decide alone). Cells of separate runs (one block of time a side) get a ratio, never a verdict. Size classes and findings: the replicates are the repetitions, not the cells: per repetition the mean log ratio over the cells, then a t-test and interval over the repetitions. Imported IOzone and fio figures count as one repetition each; inputs that share a label are runs of one target, and with three or more a side the runs are the replicates (paired by run where both sides share them, else Welch over the runs). See docs/statistics.md.</p>");
    h.push_str("</main></body></html>");
    h
}

/// The answer: who wins per operation and size class, and the overall findings.
fn answer_section(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=answer>The answer</h2>");
    if a.labels.len() >= 2 && !a.classes.is_empty() {
        h.push_str("<p>Who is faster, per operation and file-size class: the winner by the geometric mean of per-cell ratios against the runner-up, its margin with its 95% interval, and the verdict: a winner only when the margin is significant (a t-test over the replicates, 5%: the repetitions of one run, each the mean log ratio of its cells measured side by side; or the runs, when several inputs share a label) and at least the threshold; one separate run a side gets no verdict; “equivalent” when the interval lies within the threshold; else “inconclusive”.</p><table><tr><th>operation</th>");
        for c in SizeClass::ALL {
            let _ = write!(
                h,
                "<th>{} files<br><span class=note>{}</span></th>",
                c.name(),
                c.range()
            );
        }
        h.push_str("</tr>");
        for op in &a.ops {
            let _ = write!(h, "<tr><th>{}</th>", esc(&op.op));
            for c in SizeClass::ALL {
                let (text, css) = class_cell(a, &op.op, c);
                let _ = write!(h, "<td class='{css}'>{text}</td>");
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    } else if a.labels.len() >= 2 {
        h.push_str("<p>No cell of the file size x record size matrix in common, so no winner per size class: the targets are compared in the sections of their workload below (load-latency curves, metadata rates, streams).</p>");
    } else {
        h.push_str("<p>Only one target: no comparison; the evidence below describes it.</p>");
    }
    let overall: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.topic == Topic::Overall)
        .collect();
    if !overall.is_empty() {
        h.push_str("<ul class=f>");
        for f in overall {
            let _ = write!(
                h,
                "<li>{}{}</li>",
                badge(f.significant, false),
                esc(&f.text)
            );
        }
        h.push_str("</ul>");
    }
}

/// Every other finding, with its badge.
fn findings_section(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=findings>Findings</h2><ul class=f>");
    let mut any = false;
    for f in a.findings.iter().filter(|f| f.topic != Topic::Overall) {
        any = true;
        let _ = write!(
            h,
            "<li>{}{}</li>",
            badge(
                f.significant,
                matches!(f.topic, Topic::Cache | Topic::Consistency)
            ),
            esc(&f.text)
        );
    }
    if !any && a.labels.len() >= 2 {
        h.push_str("<li>No comparison finding: the targets have no cell of the matrix in common (see their workload's section).</li>");
    } else if !any {
        h.push_str("<li>No comparison finding: a single target.</li>");
    }
    h.push_str("</ul>");
}

/// Input problems, then the warnings grouped by kind.
fn warnings_section(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=warnings>Warnings</h2>");
    if a.warnings.is_empty() && a.load_warnings.is_empty() {
        h.push_str(
            "<p>None: every cell has repetitions, long enough timings and low variation.</p>",
        );
    } else {
        h.push_str("<ul class=warn>");
        for w in &a.load_warnings {
            let _ = write!(h, "<li><b>input</b>: {}</li>", esc(w));
        }
        for g in warnings::grouped(&a.warnings) {
            let worst = g.items[0];
            let _ = write!(
                h,
                "<li><b>{}</b> ({} series) — {}. Worst, {}{}: {}</li>",
                g.kind.name(),
                g.items.len(),
                esc(&g.series()),
                esc(&worst.label),
                if worst.op.is_empty() {
                    String::new()
                } else {
                    format!(" {}", esc(&worst.op))
                },
                esc(&worst.text)
            );
        }
        h.push_str("</ul>");
    }
}

/// Per operation: throughput heatmaps, surface, 2D view, ratio maps, latency, classes.
fn op_sections(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=ops>Per operation</h2><p class=note>Heatmaps: file size (rows) × record size (columns), median throughput; hover a cell for the exact KiB/s, the repetitions, the 95% interval of the median and the CV. Grey “–” cells are missing for that input. Ratio maps: each target over the baseline, blue faster, red slower (saturating at 2× and 0.5×); = = equivalent (the ratio's 95% interval within the threshold), ○ = inconclusive (not significant with Benjamini-Hochberg q &lt; 0.05, or under the threshold), ? = not testable (fewer than 3 repetitions a side).</p>");
    for (i, op) in a.ops.iter().enumerate() {
        let _ = write!(
            h,
            "<details{}><summary>{}</summary>",
            if i == 0 { " open" } else { "" },
            esc(&op.op)
        );
        let range = svg::range_of(&svg::THROUGHPUT, op.cells.values()).unwrap_or((1.0, 1.0));
        h.push_str("<h3>Throughput heatmaps</h3><div class=charts>");
        for label in &a.labels {
            if let Some(c) = op.cells.get(label) {
                h.push_str(&svg::heatmap(
                    &format!("{} — {}", label, op.op),
                    Some(c),
                    &op.all_cells,
                    range,
                    &svg::THROUGHPUT,
                ));
            }
        }
        h.push_str("</div>");
        h.push_str(&svg::legend(range, &svg::THROUGHPUT));
        h.push_str(&crate::surface::section(op, &a.labels, range));
        h.push_str("<h3>Throughput vs file size (IOzone's 2D view)</h3><div class=charts>");
        for label in &a.labels {
            if let Some(c) = op.cells.get(label) {
                h.push_str(&svg::lines_2d(
                    &format!("{} — {}", label, op.op),
                    c,
                    range.1,
                ));
            }
        }
        h.push_str("</div>");
        if !op.vs_baseline.is_empty() {
            h.push_str("<h3>Ratio against the baseline</h3><div class=charts>");
            for label in &a.labels {
                if let Some(c) = op.vs_baseline.get(label) {
                    h.push_str(&svg::ratio_heatmap(
                        &format!("{} / {} — {}", label, a.baseline, op.op),
                        c,
                        &op.all_cells,
                        false,
                    ));
                }
            }
            h.push_str("</div>");
        }
        crate::latency_html::op_section(h, a, op);
        class_table(h, a, &op.op);
        h.push_str("</details>");
    }
}

fn class_table(h: &mut String, a: &Analysis, op: &str) {
    let rows: Vec<_> = a.classes.iter().filter(|r| r.op == op).collect();
    if rows.is_empty() {
        return;
    }
    h.push_str("<h3>Size classes</h3><table><tr><th>class</th><th>target</th><th>cells</th><th>median</th><th>peak (cell)</th><th>CV (stability)</th><th>ops/s (≤ 64 KiB records)</th><th>p99 latency</th><th>CPU</th><th>MiB per CPU s</th><th>winner, margin, significance</th></tr>");
    for r in rows {
        for (i, s) in r.stats.iter().enumerate() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td{}>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{} ({} / {})</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>",
                if i == 0 { format!("{} ({})", r.class.name(), r.class.range()) } else { String::new() },
                if r.winner.as_deref() == Some(&s.label) { " class=win" } else { "" },
                esc(&s.label),
                s.cells,
                format::rate(s.median),
                format::rate(s.peak),
                format::short_size(s.peak_cell.0),
                format::short_size(s.peak_cell.1),
                s.cv.map(format::pct).unwrap_or_else(|| "–".into()),
                s.iops.map(format::ops).unwrap_or_else(|| "–".into()),
                s.p99_us.map(format::latency).unwrap_or_else(|| "–".into()),
                s.cpu_pct.map(format::pct).unwrap_or_else(|| "–".into()),
                s.mib_per_cpu_s.map(|v| format!("{v:.0}")).unwrap_or_else(|| "–".into()),
            );
            if i == 0 {
                let verdict = match (&r.winner, &r.versus) {
                    (Some(w), Some(v)) => format!(
                        "{} {} over {}; {} ({}; {} of {} cells faster)",
                        esc(w),
                        format::change(v.geo_ratio),
                        esc(r.runner_up.as_deref().unwrap_or("")),
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
                let _ = write!(h, "<td rowspan={}>{verdict}</td>", r.stats.len());
            }
            h.push_str("</tr>");
        }
    }
    h.push_str("</table>");
}

fn cpu_table(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=cpu>CPU utilisation per size class</h2>");
    let rows: Vec<_> = a
        .classes
        .iter()
        .filter(|r| r.stats.iter().any(|s| s.cpu_pct.is_some()))
        .collect();
    if rows.is_empty() {
        h.push_str("<p>No CPU figures in the inputs (IOzone without -+u, for example).</p>");
        return;
    }
    h.push_str("<p class=note>Client CPU: the median over cells of the measuring process's CPU time over the timed interval (100% = one CPU). Server CPU: the lab servers' processes, where the records carry it. Throughput per CPU: MiB moved per CPU second.</p><table><tr><th>operation</th><th>class</th>");
    for l in &a.labels {
        let _ = write!(
            h,
            "<th>{} client CPU</th><th>{} server CPU</th><th>{} MiB/CPU s</th>",
            esc(l),
            esc(l),
            esc(l)
        );
    }
    h.push_str("</tr>");
    for r in rows {
        let _ = write!(h, "<tr><td>{}</td><td>{}</td>", esc(&r.op), r.class.name());
        for l in &a.labels {
            let s = r.stat(l);
            let _ = write!(
                h,
                "<td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>",
                s.and_then(|s| s.cpu_pct)
                    .map(format::pct)
                    .unwrap_or_else(|| "–".into()),
                s.and_then(|s| s.server_cpu_pct)
                    .map(format::pct)
                    .unwrap_or_else(|| "not recorded".into()),
                s.and_then(|s| s.mib_per_cpu_s)
                    .map(|v| format!("{v:.0}"))
                    .unwrap_or_else(|| "–".into())
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

fn throughput_table(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=throughput>Throughput mode</h2>");
    if a.throughput.is_empty() {
        h.push_str("<p>No throughput-mode (several workers) results in the inputs.</p>");
        return;
    }
    h.push_str("<table><tr><th>operation</th><th>workers</th><th>file / record</th><th>target</th><th>reps</th><th>children see</th><th>parent sees</th><th>min / max / avg per worker</th><th>CV</th><th>vs baseline</th></tr>");
    for t in &a.throughput {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=num>{}</td><td>{} / {}</td><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{} / {} / {}</td><td class=num>{}</td><td>{}</td></tr>",
            esc(&t.op),
            t.threads,
            format::short_size(t.file_size),
            format::short_size(t.record_size),
            esc(&t.label),
            t.reps,
            format::rate(t.children.median),
            if t.parent_sees > 0.0 { format::rate(t.parent_sees) } else { "–".into() },
            format::rate(t.min_worker),
            format::rate(t.max_worker),
            format::rate(t.avg_worker),
            t.children.cv.map(format::pct).unwrap_or_else(|| "–".into()),
            t.vs_baseline
                .map(|(r, p)| format!("{} ({})", format::change(r), format::p(p)))
                .unwrap_or_else(|| "–".into())
        );
    }
    h.push_str("</table>");
}

fn cache_table(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=cache>Cache effects</h2>");
    if a.cache_flags.is_empty() {
        h.push_str("<p>No operation loses more than 2× as the file size grows.</p>");
        return;
    }
    h.push_str("<p class=note>Where throughput falls by more than 2× against the best smaller file at the same record size: usually the file no longer fits a cache (page cache, server cache).</p><table><tr><th>target</th><th>operation</th><th>from</th><th>to</th><th>fall</th><th>record sizes affected</th><th>client RAM</th></tr>");
    for c in &a.cache_flags {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{} at {} ({} rec)</td><td>{} at {}</td><td class=num>{:.1}×</td><td class=num>{}</td><td>{}</td></tr>",
            esc(&c.label),
            esc(&c.op),
            format::rate(c.from_kib_s),
            format::size(c.from_file),
            format::size(c.record_size),
            format::rate(c.to_kib_s),
            format::size(c.to_file),
            c.factor(),
            c.record_sizes_affected,
            c.ram_bytes.map(format::size).unwrap_or_else(|| "unknown".into())
        );
    }
    h.push_str("</table>");
}

fn env_table(h: &mut String, a: &Analysis) {
    h.push_str("<h2 id=env>Environment</h2><p class=note>Rows whose values differ between targets are highlighted: they may explain a difference.</p><table><tr><th></th>");
    for l in &a.env.labels {
        let _ = write!(h, "<th>{}</th>", esc(l));
    }
    h.push_str("</tr>");
    for r in &a.env.rows {
        let _ = write!(
            h,
            "<tr{}><th>{}</th>",
            if r.differs { " class=diff" } else { "" },
            esc(&r.name)
        );
        for v in &r.values {
            let _ = write!(h, "<td>{}</td>", esc(v));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}
