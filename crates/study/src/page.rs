//! The study's `report.html`: the question, the answer (computed from the headline step),
//! the seed's claims one by one with this run's verdict and numbers, the figures measured
//! without a claim, where the lab departs from the seed, and the evidence (each step's own
//! report). Several runs of one study are shown side by side. Not: the per-step reports
//! (see `sharebench-report`).

use crate::check::{Outcome, Verdict};
use crate::state::StepStatus;
use crate::RunEvidence;
use sharebench_report::classes::SizeClass;
use sharebench_report::compare;
use sharebench_report::svg::esc;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One run as the page shows it.
pub struct RunView<'a> {
    pub label: String,
    pub run: &'a RunEvidence,
    pub outcomes: Vec<Outcome>,
}

const CSS: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1f24;background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:18px 28px 60px}
h1{font-size:24px;margin:6px 0 2px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccd;padding-bottom:3px}
.sub{color:#555;margin:0 0 14px}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
th,td{border:1px solid #d5d8dc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
.q{font-size:16px;background:#fff;border-left:4px solid #3b6ea8;padding:8px 14px}
.v{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;font-weight:600;white-space:nowrap}
.agrees{background:#2e7d32;color:#fff}.disagrees{background:#c62828;color:#fff}
.inconclusive{background:#9e9e9e;color:#fff}.not-tested{background:#f0a202;color:#111}.measured{background:#546e7a;color:#fff}
.note{color:#555;font-size:13px}
.said{font-style:italic}
code{background:#f0f0f0;padding:0 3px}
"#;

fn css_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Agrees => "agrees",
        Verdict::Disagrees => "disagrees",
        Verdict::Inconclusive => "inconclusive",
        Verdict::NotTested => "not-tested",
        Verdict::Measured => "measured",
    }
}

fn verdict_html(o: &Outcome) -> String {
    format!(
        "<span class='v {}'>{}</span> {}",
        css_class(o.verdict),
        o.verdict.name(),
        esc(&o.found)
    )
}

/// Counts of verdicts over the seed's claims (figures left out).
fn tally(v: &RunView) -> BTreeMap<&'static str, usize> {
    let mut t = BTreeMap::new();
    for (c, o) in v.run.study.claims.iter().zip(&v.outcomes) {
        if c.said.is_some() {
            *t.entry(o.verdict.name()).or_insert(0) += 1;
        }
    }
    t
}

fn tally_text(v: &RunView) -> String {
    let t = tally(v);
    let n: usize = t.values().sum();
    let get = |k: &str| t.get(k).copied().unwrap_or(0);
    format!(
        "of the seed's {n} claims this run agrees with {}, disagrees with {}, is inconclusive on {} and could not test {}",
        get("agrees"),
        get("disagrees"),
        get("inconclusive"),
        get("not tested")
    )
}

/// The headline sentence of one run: the answer step's overall comparison and CPU.
pub fn headline(v: &RunView) -> Option<String> {
    let ans = v.run.study.answer.as_ref()?;
    let an = v.run.steps.get(&ans.step)?.analysis.as_ref()?;
    // Every cell of every operation, compared as the claims compare them: replicates are
    // the repetitions measured side by side.
    let mut all = Vec::new();
    for op in &an.ops {
        let (Some(ca), Some(cb)) = (op.cells.get(&ans.a), op.cells.get(&ans.b)) else {
            continue;
        };
        all.extend(compare::compare_cells(ca, cb, an.threshold_pct).into_values());
    }
    let o = compare::overall(all.iter(), an.threshold_pct);
    if o.cells == 0 {
        return None;
    }
    let (winner, loser, r, ci) = if o.geo_ratio >= 1.0 {
        (&ans.a, &ans.b, o.geo_ratio, o.ci)
    } else {
        let inverse = o.ci.map(|(lo, hi)| (1.0 / hi, 1.0 / lo));
        (&ans.b, &ans.a, 1.0 / o.geo_ratio, inverse)
    };
    // CPU time over measured time, all cells together: the servers' CPU is read in clock
    // ticks (10 ms), too coarse for a median of millisecond measurements.
    let records = &v.run.steps.get(&ans.step)?.records;
    let cpu = |label: &str, server: bool| {
        let (mut cpu, mut wall) = (0.0, 0.0);
        for r in records.iter().filter(|r| {
            r.target == *label
                && r.status == sharebench_core::record::Status::Ok
                && r.scope != sharebench_core::record::Scope::Worker
        }) {
            let c = if server {
                r.server_cpu_s
            } else {
                Some(r.cpu_total_s)
            };
            if let Some(c) = c {
                cpu += c;
                wall += r.seconds;
            }
        }
        (wall > 0.0).then(|| format!("{:.0}%", 100.0 * cpu / wall))
    };
    let evidence = sharebench_report::findings::evidence(&o);
    let mut s = match o.verdict {
        compare::Verdict::Faster | compare::Verdict::Slower => format!(
            "{winner} is faster than {loser}: {} over every operation (geometric mean ratio, 95% interval; {evidence})",
            compare::change_with_ci(r, ci),
        ),
        compare::Verdict::Equivalent => format!(
            "{} and {} are equivalent within ±{}%: {} over every operation ({evidence})",
            ans.a,
            ans.b,
            an.threshold_pct,
            compare::change_with_ci(o.geo_ratio, o.ci),
        ),
        _ => format!(
            "Neither {} nor {} is decided faster overall: {} vs {} differs by {} ({evidence})",
            ans.a,
            ans.b,
            ans.a,
            ans.b,
            compare::change_with_ci(o.geo_ratio, o.ci),
        ),
    };
    for label in [&ans.a, &ans.b] {
        if let Some(c) = cpu(label, false) {
            let server = cpu(label, true)
                .map(|x| format!(", servers {x}"))
                .unwrap_or_default();
            let _ = write!(
                s,
                "; {label} CPU: client {c}{server} of one core (CPU time over measured time)"
            );
        }
    }
    s.push('.');
    Some(s)
}

fn class_table(h: &mut String, v: &RunView) {
    let Some(ans) = v.run.study.answer.as_ref() else {
        return;
    };
    let Some(an) = v.run.steps.get(&ans.step).and_then(|s| s.analysis.as_ref()) else {
        return;
    };
    if an.classes.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<p>Faster per operation and size class in step <code>{}</code> (winner, margin by the geometric mean of per-cell ratios, * = significant at 5%):</p><table><tr><th>operation</th>",
        esc(&ans.step)
    );
    for c in SizeClass::ALL {
        let _ = write!(
            h,
            "<th>{} <span class=note>{}</span></th>",
            c.name(),
            c.range()
        );
    }
    h.push_str("</tr>");
    for op in &an.ops {
        let _ = write!(h, "<tr><th>{}</th>", esc(&op.op));
        for c in SizeClass::ALL {
            let cell = an
                .classes
                .iter()
                .find(|r| r.op == op.op && r.class == c)
                .and_then(|r| Some((r.winner.as_ref()?, r.margin_pct()?, r.winner_called())));
            match cell {
                Some((w, m, sig)) => {
                    let _ = write!(
                        h,
                        "<td>{} {:+.0}%{}</td>",
                        esc(w),
                        m,
                        if sig { " *" } else { "" }
                    );
                }
                None => h.push_str("<td>–</td>"),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// The page, for one run or several runs of one study side by side.
pub fn render(views: &[RunView], step_reports: &BTreeMap<String, String>) -> String {
    let study = &views[0].run.study;
    let mut h = String::with_capacity(1 << 16);
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width,initial-scale=1'><title>sharebench study: {}</title><style>{CSS}</style></head><body><main>",
        esc(&study.title)
    );
    let _ = write!(
        h,
        "<h1>{}</h1><p class=sub>Study <code>{}</code>, reproducing seed <code>{}</code>. ",
        esc(&study.title),
        esc(&study.name),
        esc(&study.seed)
    );
    for v in views {
        let st = &v.run.state;
        let _ = write!(
            h,
            "{}: scale <b>{}</b>, started {}, {}. ",
            esc(&v.label),
            esc(&st.scale),
            esc(&st.started_at),
            esc(&st.outcome.to_string())
        );
    }
    h.push_str("</p>");

    h.push_str("<h2 id=question>The question</h2>");
    let _ = write!(h, "<p class=q>{}</p>", esc(&study.question));

    answer(&mut h, views);
    claims(&mut h, views);
    figures(&mut h, views);
    departures(&mut h, views);
    evidence(&mut h, views, step_reports);
    for v in views {
        if !v.run.warnings.is_empty() {
            let _ = write!(h, "<p class=note>{}Warnings:</p><ul>", run_prefix(views, v));
            for w in &v.run.warnings {
                let _ = write!(h, "<li>{}</li>", esc(w));
            }
            h.push_str("</ul>");
        }
    }
    h.push_str("</main></body></html>\n");
    h
}

/// The answer: each run's headline, the claims that answer the question, the tally.
fn answer(h: &mut String, views: &[RunView]) {
    let study = &views[0].run.study;
    h.push_str("<h2 id=answer>The answer</h2>");
    for v in views {
        let prefix = if views.len() > 1 {
            format!("<b>{}</b>: ", esc(&v.label))
        } else {
            String::new()
        };
        match headline(v) {
            Some(s) => {
                let _ = write!(h, "<p>{prefix}{}</p>", esc(&s));
            }
            None if study.answer.is_some() => {
                let _ = write!(
                    h,
                    "<p>{prefix}The headline step has no comparable records in this run.</p>"
                );
            }
            None => {}
        }
        for (c, o) in study.claims.iter().zip(&v.outcomes) {
            if !study.answered_by.contains(&c.id) {
                continue;
            }
            let what = c.said.as_deref().or(c.source.as_deref()).unwrap_or(&c.id);
            let _ = write!(
                h,
                "<p>{prefix}“{}” This run <b>{}</b>: {}.</p>",
                esc(what),
                o.verdict.name(),
                esc(&o.found)
            );
        }
        let _ = write!(h, "<p>{prefix}Claim by claim, {}.</p>", esc(&tally_text(v)));
        class_table(h, v);
    }
}

/// Claim by claim: what the seed said and each run's verdict.
fn claims(h: &mut String, views: &[RunView]) {
    let study = &views[0].run.study;
    h.push_str("<h2 id=claims>Claim by claim</h2><p class=note>What the seed said, and what this run's records say. <i>agrees</i> / <i>disagrees</i> need a test significant at 5% in one direction; otherwise <i>inconclusive</i>. The rules are in docs/studies.md.</p><table><tr><th>#</th><th>the seed said</th>");
    for v in views {
        let _ = write!(h, "<th>this run found{}</th>", run_suffix(views, v));
    }
    h.push_str("</tr>");
    let mut n = 0;
    for (i, c) in study.claims.iter().enumerate() {
        let Some(said) = &c.said else { continue };
        n += 1;
        let _ = write!(
            h,
            "<tr id='claim-{}'><td>{n}</td><td><span class=said>“{}”</span>{}</td>",
            esc(&c.id),
            esc(said),
            c.source
                .as_ref()
                .map(|s| format!("<br><span class=note>{}</span>", esc(s)))
                .unwrap_or_default()
        );
        for v in views {
            let _ = write!(
                h,
                "<td>{}<br><span class=note>step <code>{}</code></span></td>",
                verdict_html(&v.outcomes[i]),
                esc(c.check.step())
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// The figures a study measures without a claim to check.
fn figures(h: &mut String, views: &[RunView]) {
    let study = &views[0].run.study;
    if study.claims.iter().any(|c| c.said.is_none()) {
        h.push_str(
            "<h2 id=figures>Figures measured without a claim</h2><table><tr><th>figure</th>",
        );
        for v in views {
            let _ = write!(h, "<th>measured{}</th>", run_suffix(views, v));
        }
        h.push_str("</tr>");
        for (i, c) in study.claims.iter().enumerate() {
            if c.said.is_some() {
                continue;
            }
            let _ = write!(
                h,
                "<tr id='figure-{}'><td>{}</td>",
                esc(&c.id),
                esc(c.source.as_deref().unwrap_or(&c.id))
            );
            for v in views {
                let _ = write!(h, "<td>{}</td>", verdict_html(&v.outcomes[i]));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
}

/// Where the lab departs from the seed: the study's list, each run's notes and scale.
fn departures(h: &mut String, views: &[RunView]) {
    let study = &views[0].run.study;
    h.push_str("<h2 id=departures>Where this lab departs from the seed</h2><ul>");
    if study.departures.is_empty() && views.iter().all(|v| v.run.state.notes.is_empty()) {
        h.push_str("<li>The study file lists none.</li>");
    }
    for d in &study.departures {
        let _ = write!(h, "<li>{}</li>", esc(d));
    }
    for v in views {
        for note in &v.run.state.notes {
            let _ = write!(h, "<li>{}{}</li>", run_prefix(views, v), esc(note));
        }
        if let Some(l) = &v
            .run
            .study
            .scales
            .get(&v.run.state.scale)
            .and_then(|s| s.limits.clone())
        {
            let _ = write!(
                h,
                "<li>{}Scale {}: {}</li>",
                run_prefix(views, v),
                esc(&v.run.state.scale),
                esc(l)
            );
        }
    }
    h.push_str("</ul>");
}

/// The evidence: every step, its line, each run's status and its report.
fn evidence(h: &mut String, views: &[RunView], step_reports: &BTreeMap<String, String>) {
    let study = &views[0].run.study;
    h.push_str("<h2 id=evidence>The evidence</h2><p class=note>Each step is an ordinary sharebench run; its report has every cell, chart, statistic and the environment.</p><table><tr><th>step</th><th>what</th>");
    for v in views {
        let _ = write!(h, "<th>status{}</th>", run_suffix(views, v));
    }
    h.push_str("<th>report</th></tr>");
    for step in &study.steps {
        // The line as the first run ran it (its scale's values substituted).
        let vars = study
            .scales
            .get(&views[0].run.state.scale)
            .map(|s| s.vars.clone())
            .unwrap_or_default();
        let what = step
            .run
            .as_deref()
            .map(|r| {
                let r = crate::spec::substitute(r, &vars).unwrap_or_else(|_| r.to_string());
                format!("<code>sharebench run {}</code>", esc(&r))
            })
            .unwrap_or_default();
        let action = step
            .action
            .as_ref()
            .map(|a| format!("<br>action: <code>{}</code>", esc(&format!("{a:?}"))))
            .unwrap_or_default();
        let _ = write!(
            h,
            "<tr id='step-{}'><td>{}</td><td>{}<br>{what}{action}</td>",
            esc(&step.id),
            esc(&step.id),
            esc(&step.title)
        );
        for v in views {
            let cell = step_status(v, &step.id);
            let _ = write!(h, "<td>{cell}</td>");
        }
        match step_reports.get(&step.id).filter(|p| !p.is_empty()) {
            Some(p) => {
                let _ = write!(h, "<td><a href='{}'>report</a></td>", esc(p));
            }
            None => h.push_str("<td>–</td>"),
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// A step's status in one run: how it ended, its time, the lab it ran in, its error.
fn step_status(v: &RunView, step: &str) -> String {
    match v.run.state.step(step) {
        Some(s) => {
            let lab = s
                .lab
                .as_ref()
                .map(|l| {
                    format!(
                        "<br><span class=note>lab: {} on a {} disk, link {}</span>",
                        esc(l.fs()),
                        esc(l.disk()),
                        esc(l.link())
                    )
                })
                .unwrap_or_default();
            let err = s
                .error
                .as_ref()
                .map(|e| format!("<br><span class=note>{}</span>", esc(e)))
                .unwrap_or_default();
            let blocks = match s.blocks_done {
                0 => String::new(),
                n => format!(", {n} alternating blocks"),
            };
            format!(
                "{} ({:.0} s{blocks}){lab}{err}",
                status_name(s.status),
                s.seconds
            )
        }
        None => "not run".into(),
    }
}

fn run_suffix(views: &[RunView], v: &RunView) -> String {
    if views.len() > 1 {
        format!(" ({})", esc(&v.label))
    } else {
        String::new()
    }
}

fn run_prefix(views: &[RunView], v: &RunView) -> String {
    if views.len() > 1 {
        format!("{}: ", esc(&v.label))
    } else {
        String::new()
    }
}

pub fn status_name(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Pending => "pending",
        StepStatus::Running => "running (cut off)",
        StepStatus::Complete => "complete",
        StepStatus::Failed => "complete, with failed measurements",
        StepStatus::Interrupted => "interrupted",
    }
}

/// The terminal summary: the headline and one line per claim.
pub fn summary_lines(views: &[RunView]) -> Vec<String> {
    let mut out = Vec::new();
    for v in views {
        let p = if views.len() > 1 {
            format!("[{}] ", v.label)
        } else {
            String::new()
        };
        if let Some(s) = headline(v) {
            out.push(format!("{p}{s}"));
        }
        out.push(format!("{p}Claims: {}.", tally_text(v)));
        for (c, o) in v.run.study.claims.iter().zip(&v.outcomes) {
            out.push(format!(
                "{p}  {:<13} {}: {}",
                o.verdict.name(),
                c.id,
                o.found
            ));
        }
    }
    out
}
