//! A study report's verdicts.json: every claim and figure of each run with its check, its
//! verdict and what was found, beside report.html, as data a CI job can act on. The schema
//! is in docs/reference/records.md ("verdicts.json"); a change that breaks a reader raises `VERSION`.
//! Not: deciding (see `check`), nor each step's own comparisons (its report's
//! verdicts.json).

use crate::page::RunView;
use crate::spec::Check;
use serde::Serialize;

/// The schema's version: raised when a field changes meaning or goes away.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Doc<'a> {
    schema: &'static str,
    version: u32,
    study: &'a str,
    runs: Vec<Run<'a>>,
    /// With several runs: the claims that only runs could decide, over them, each run one
    /// replicate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    over_runs: Vec<Together<'a>>,
}

/// One claim (or figure) over several runs.
#[derive(Serialize)]
struct Together<'a> {
    id: &'a str,
    verdict: crate::check::Verdict,
    found: &'a str,
}

#[derive(Serialize)]
struct Run<'a> {
    label: &'a str,
    dir: String,
    scale: &'a str,
    threshold_pct: f64,
    claims: Vec<Claim<'a>>,
}

#[derive(Serialize)]
struct Claim<'a> {
    id: &'a str,
    /// The seed's words; absent for a figure measured without a claim.
    #[serde(skip_serializing_if = "Option::is_none")]
    said: Option<&'a str>,
    check: &'a Check,
    verdict: crate::check::Verdict,
    found: &'a str,
}

/// The whole file for these runs of one study; `over_runs` as `page::render` takes it.
pub fn render(views: &[RunView], over_runs: &[Option<crate::check::Outcome>]) -> Vec<u8> {
    let doc = Doc {
        schema: "sharebench-study-verdicts",
        version: VERSION,
        study: views.first().map_or("", |v| v.run.study.name.as_str()),
        runs: views
            .iter()
            .map(|v| Run {
                label: &v.label,
                dir: v.run.dir.display().to_string(),
                scale: &v.run.state.scale,
                threshold_pct: v
                    .run
                    .state
                    .threshold_pct
                    .unwrap_or(sharebench_report::compare::DEFAULT_THRESHOLD_PCT),
                claims: v
                    .run
                    .study
                    .claims
                    .iter()
                    .zip(&v.outcomes)
                    .map(|(c, o)| Claim {
                        id: &c.id,
                        said: c.said.as_deref(),
                        check: &c.check,
                        verdict: o.verdict,
                        found: &o.found,
                    })
                    .collect(),
            })
            .collect(),
        over_runs: views
            .first()
            .map(|v| v.run.study.claims.as_slice())
            .unwrap_or_default()
            .iter()
            .zip(over_runs)
            .filter_map(|(c, o)| {
                let o = o.as_ref()?;
                Some(Together {
                    id: &c.id,
                    verdict: o.verdict,
                    found: &o.found,
                })
            })
            .collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&doc).expect("plain data serialises");
    bytes.push(b'\n');
    bytes
}
