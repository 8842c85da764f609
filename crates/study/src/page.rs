//! The study's `report.html`: the question, the answer (computed from the headline step),
//! the seed's claims one by one with this run's verdict and numbers, the figures measured
//! without a claim, where the lab departs from the seed, and the evidence (each step's own
//! report). Several runs of one study are shown side by side. Not: the per-step reports
//! (see `sharebench-report`).

use crate::check::{Outcome, Verdict};
use crate::state::StepStatus;
use crate::RunEvidence;
use maud::{html, Markup};
use sharebench_core::operation::Operation;
use sharebench_report::analysis::Analysis;
use sharebench_report::classes::SizeClass;
use sharebench_report::compare;
use sharebench_report::html::document;
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

fn verdict_html(o: &Outcome) -> Markup {
    html! {
        span class={ "v " (css_class(o.verdict)) } { (o.verdict.name()) }
        " " (o.found)
    }
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

/// The run's headline comparison: the study's first whose step has records.
fn answer_of<'a>(v: &RunView<'a>) -> Option<(&'a crate::spec::Answer, &'a Analysis)> {
    v.run
        .study
        .answer
        .iter()
        .flat_map(|a| a.all())
        .find_map(|a| {
            let an = v.run.steps.get(&a.step)?.analysis.as_ref()?;
            Some((a, an))
        })
}

/// The headline sentence of one run: the answer step's overall comparison and CPU.
pub fn headline(v: &RunView) -> Option<String> {
    let (ans, an) = answer_of(v)?;
    // Every cell of every operation, compared as the claims compare them: replicates are
    // the repetitions measured side by side.
    let overall = |a: &str, b: &str| {
        let mut all = Vec::new();
        for op in &an.ops {
            let (Some(ca), Some(cb)) = (op.cells.get(a), op.cells.get(b)) else {
                continue;
            };
            all.extend(compare::compare_cells(ca, cb, an.threshold_pct).into_values());
        }
        compare::overall(all.iter(), an.threshold_pct)
    };
    let mut o = overall(&ans.a, &ans.b);
    if o.cells == 0 {
        return None;
    }
    // Told from the faster one's side: its ratio, and its cells counted as faster.
    let (winner, loser) = if o.geo_ratio >= 1.0 {
        (&ans.a, &ans.b)
    } else {
        o = overall(&ans.b, &ans.a);
        (&ans.b, &ans.a)
    };
    let (r, ci) = (o.geo_ratio, o.ci);
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
            "{winner} and {loser} are equivalent within ±{}%: {} over every operation ({evidence})",
            an.threshold_pct,
            compare::change_with_ci(r, ci),
        ),
        _ => format!(
            "Neither {winner} nor {loser} is decided faster overall: {winner} vs {loser} differs by {} ({evidence})",
            compare::change_with_ci(r, ci),
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

fn class_table(v: &RunView) -> Markup {
    let Some((ans, an)) = answer_of(v) else {
        return html! {};
    };
    if an.classes.is_empty() {
        return html! {};
    }
    let winner = |op: Operation, c: SizeClass| {
        an.classes
            .iter()
            .find(|r| r.op == op && r.class == c)
            .and_then(|r| Some((r.winner.as_ref()?, r.margin_pct()?, r.winner_called())))
    };
    html! {
        p {
            "Faster per operation and size class in step " code { (ans.step) }
            " (winner, margin by the geometric mean of per-cell ratios, * = significant at 5%):"
        }
        table {
            tr {
                th { "operation" }
                @for c in SizeClass::ALL {
                    th { (c.name()) " " span.note { (c.range()) } }
                }
            }
            @for op in &an.ops {
                tr {
                    th { (op.op) }
                    @for c in SizeClass::ALL {
                        @match winner(op.op, c) {
                            Some((w, m, sig)) => td { (w) " " (format!("{m:+.0}%")) @if sig { " *" } },
                            None => td { "–" },
                        }
                    }
                }
            }
        }
    }
}

/// The page, for one run or several runs of one study side by side. Built with maud:
/// every text is escaped unless it is marked up on purpose, and the markup is checked
/// when sharebench is compiled.
/// `over_runs`, one per claim when several runs are given: the figure over the runs
/// (`check::steadier_over_runs`), `None` for a claim each run decides on its own.
pub fn render(
    views: &[RunView],
    over_runs: &[Option<Outcome>],
    step_reports: &BTreeMap<String, String>,
) -> String {
    let study = &views[0].run.study;
    let body = html! {
                    h1 { (study.title) }
                    p.sub {
                        "Study " code { (study.name) } ", reproducing seed " code { (study.seed) } ". "
                        @for v in views {
                            (v.label) ": scale " b { (v.run.state.scale) } ", started "
                            (v.run.state.started_at) ", " (v.run.state.outcome.to_string()) ". "
                        }
                    }
                    h2 #question { "The question" }
                    p.q { (study.question) }
                    (roles(views))
                    (answer(views))
                    (claims(views, over_runs))
                    (figures(views, over_runs))
                    (departures(views))
                    (evidence(views, step_reports))
                    @for v in views.iter().filter(|v| !v.run.warnings.is_empty()) {
                        p.note { (run_prefix(views, v)) "Warnings:" }
                        ul { @for w in &v.run.warnings { li { (w) } } }
                    }
    };
    let title = format!("sharebench study: {}", study.title);
    document(&title, CSS, body).into_string() + "\n"
}

/// The answer: each run's headline, the claims that answer the question, the tally.
fn answer(views: &[RunView]) -> Markup {
    let study = &views[0].run.study;
    html! {
        h2 #answer { "The answer" }
        @for v in views {
            @let prefix = html! { @if views.len() > 1 { b { (v.label) } ": " } };
            @match headline(v) {
                Some(s) => p { (prefix) (s) },
                None if study.answer.is_some() => {
                    p { (prefix) "The headline step has no comparable records in this run." }
                }
                None => {}
            }
            @for (c, o) in study.claims.iter().zip(&v.outcomes) {
                @if study.answered_by.contains(&c.id) {
                    p {
                        (prefix) "“" (c.said.as_deref().or(c.source.as_deref()).unwrap_or(&c.id))
                        "” This run " b { (o.verdict.name()) } ": " (o.found) "."
                    }
                }
            }
            p { (prefix) "Claim by claim, " (tally_text(v)) "." }
            (class_table(v))
        }
    }
}

/// Claim by claim: what the seed said, each run's verdict and, with several runs, the
/// figure over them where only runs could decide.
fn claims(views: &[RunView], over_runs: &[Option<Outcome>]) -> Markup {
    let study = &views[0].run.study;
    let said: Vec<(usize, &crate::spec::Claim, &String)> = study
        .claims
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c, c.said.as_ref()?)))
        .collect();
    html! {
        h2 #claims { "Claim by claim" }
        p.note {
            "What the seed said, and what this run's records say. " i { "agrees" } " / "
            i { "disagrees" } " need a test significant at 5% in one direction; otherwise "
            i { "inconclusive" } ". The rules are in docs/reference/studies.md."
        }
        table {
            tr {
                th { "#" }
                th { "the seed said" }
                @for v in views { th { "this run found" (run_suffix(views, v)) } }
                @if !over_runs.is_empty() { th { "over the runs" } }
            }
            @for (n, (i, c, said)) in said.iter().enumerate() {
                tr id={ "claim-" (c.id) } {
                    td { (n + 1) }
                    td {
                        span.said { "“" (said) "”" }
                        @if let Some(s) = &c.source { br; span.note { (s) } }
                    }
                    @for v in views {
                        td {
                            (verdict_html(&v.outcomes[*i])) br;
                            span.note { "step " code { (c.check.step()) } }
                        }
                    }
                    @if !over_runs.is_empty() { td { (over_runs_cell(&over_runs[*i])) } }
                }
            }
        }
    }
}

/// A claim's figure over several runs, or that each run decides it on its own.
fn over_runs_cell(o: &Option<Outcome>) -> Markup {
    match o {
        Some(o) => verdict_html(o),
        None => html! { span.note { "each run decides it" } },
    }
}

/// The figures a study measures without a claim to check.
fn figures(views: &[RunView], over_runs: &[Option<Outcome>]) -> Markup {
    let study = &views[0].run.study;
    if study.claims.iter().all(|c| c.said.is_some()) {
        return html! {};
    }
    html! {
        h2 #figures { "Figures measured without a claim" }
        table {
            tr {
                th { "figure" }
                @for v in views { th { "measured" (run_suffix(views, v)) } }
                @if !over_runs.is_empty() { th { "over the runs" } }
            }
            @for (i, c) in study.claims.iter().enumerate().filter(|(_, c)| c.said.is_none()) {
                tr id={ "figure-" (c.id) } {
                    td { (c.source.as_deref().unwrap_or(&c.id)) }
                    @for v in views { td { (verdict_html(&v.outcomes[i])) } }
                    @if !over_runs.is_empty() { td { (over_runs_cell(&over_runs[i])) } }
                }
            }
        }
    }
}

/// Where the lab departs from the seed: the study's list, each run's notes and scale.
fn departures(views: &[RunView]) -> Markup {
    let study = &views[0].run.study;
    let limits = |v: &RunView| {
        v.run
            .study
            .scales
            .get(&v.run.state.scale)
            .and_then(|s| s.limits.clone())
    };
    html! {
        h2 #departures { "Where this lab departs from the seed" }
        ul {
            @if study.departures.is_empty() && views.iter().all(|v| v.run.state.notes.is_empty()) {
                li { "The study file lists none." }
            }
            @for d in &study.departures { li { (d) } }
            @for v in views {
                @for note in &v.run.state.notes { li { (run_prefix(views, v)) (note) } }
                @if let Some(l) = limits(v) {
                    li { (run_prefix(views, v)) "Scale " (v.run.state.scale) ": " (l) }
                }
            }
        }
    }
}

/// The evidence: every step, its line, each run's status and its report.
fn evidence(views: &[RunView], step_reports: &BTreeMap<String, String>) -> Markup {
    let study = &views[0].run.study;
    // The lines as the first run ran them (its scale's values substituted).
    let vars = study
        .scales
        .get(&views[0].run.state.scale)
        .map(|s| s.var_texts())
        .unwrap_or_default();
    let line = |r: &str| crate::spec::substitute(r, &vars).unwrap_or_else(|_| r.to_string());
    html! {
        h2 #evidence { "The evidence" }
        p.note {
            "Each step is an ordinary sharebench run; its report has every cell, chart, statistic and the environment."
        }
        table {
            tr {
                th { "step" }
                th { "what" }
                @for v in views { th { "status" (run_suffix(views, v)) } }
                th { "report" }
            }
            @for step in &study.steps {
                tr id={ "step-" (step.id) } {
                    td { (step.id) }
                    td {
                        (step.title) br;
                        @if let Some(r) = &step.run {
                            code { "sharebench run " @for t in &step.targets { (t) " " } (line(r)) }
                        }
                        @if let Some(a) = &step.action { br; "action: " code { (format!("{a:?}")) } }
                    }
                    @for v in views { td { (step_status(v, &step.id)) } }
                    @match step_reports.get(&step.id).filter(|p| !p.is_empty()) {
                        Some(p) => td { a href=(p) { "report" } },
                        None => td { "–" },
                    }
                }
            }
        }
    }
}

/// A step's status in one run: how it ended, its time, the lab it ran in, its error.
fn step_status(v: &RunView, step: &str) -> Markup {
    let Some(s) = v.run.state.step(step) else {
        return html! { "not run" };
    };
    html! {
        (status_name(s.status)) " (" (format!("{:.0}", s.seconds)) " s"
        @if s.blocks_done > 0 { ", " (s.blocks_done) " alternating blocks" }
        ")"
        @if let Some(l) = &s.lab {
            br;
            span.note { "lab: " (l.fs()) " on a " (l.disk()) " disk, link " (l.link()) }
        }
        @if let Some(e) = &s.error { br; span.note { (e) } }
    }
}

/// " (label)" after a column's title when several runs stand side by side.
fn run_suffix(views: &[RunView], v: &RunView) -> String {
    if views.len() > 1 {
        format!(" ({})", v.label)
    } else {
        String::new()
    }
}

/// "label: " before a line when several runs stand side by side.
fn run_prefix(views: &[RunView], v: &RunView) -> String {
    if views.len() > 1 {
        format!("{}: ", v.label)
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
        StepStatus::NotRun => "not run",
    }
}

/// Whose systems: each role, what it stands for, and what played it in each run (the
/// user's target and their description of it, or the lab's).
fn roles(views: &[RunView]) -> Markup {
    let study = &views[0].run.study;
    if study.roles.is_empty() {
        return html! {};
    }
    let played = |v: &RunView, name: &str| -> Markup {
        let mapping = &v.run.state.mapping;
        match (mapping.roles.get(name), study.roles[name].lab.as_deref()) {
            (Some(m), _) => html! {
                code { (m.target) }
                @if let Some(src) = v.run.sources.get(name) { " (" (src) ")" }
                @if let Some(d) = &m.description { br; (d) }
            },
            (None, Some(lab)) if mapping.uses_lab() => html! { code { (lab) } " (the lab's)" },
            _ => html! { span.note { "not played: no target mapped" } },
        }
    };
    html! {
        h2 #roles { "Whose systems" }
        table {
            tr {
                th { "role" }
                th { "what it stands for" }
                @for v in views { th { "played by" (run_suffix(views, v)) } }
            }
            @for (name, role) in &study.roles {
                tr id={ "role-" (name) } {
                    td { (name) }
                    td { (role.about) }
                    @for v in views { td { (played(v, name)) } }
                }
            }
        }
    }
}

/// The terminal summary: the headline and one line per claim.
pub fn summary_lines(views: &[RunView], over_runs: &[Option<Outcome>]) -> Vec<String> {
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
    let claims = views.first().map_or(&[][..], |v| &v.run.study.claims);
    let together: Vec<String> = claims
        .iter()
        .zip(over_runs)
        .filter_map(|(c, o)| {
            let o = o.as_ref()?;
            Some(format!("  {:<13} {}: {}", o.verdict.name(), c.id, o.found))
        })
        .collect();
    if !together.is_empty() {
        out.push("Over the runs, each one replicate (claims one run does not decide):".into());
        out.extend(together);
    }
    out
}
