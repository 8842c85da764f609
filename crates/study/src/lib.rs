//! sharebench-study: a seed's study as data, and what a run of it found. A study file
//! (`studies/*.toml`, built into the binary) names the lab it needs, its scales, its steps
//! (`sharebench run` lines and lab actions) and the seed's claims; a run leaves a study
//! directory (its steps' result directories, `study.json`), and this crate turns that into
//! verdicts and `report.html`. `run` runs a study whose run lines are plans (the lab
//! through `lab_guard`, each step through a session, the lab `actions`), and `runner`
//! keeps its books (the order of its units, their outcomes, resumed attempts); `check`
//! decides each claim. Not:
//! parsing command lines (the CLI parses each run line into a plan), nor the statistics
//! (see `sharebench-report`).

pub mod actions;
pub mod catalogue;
pub mod check;
pub mod hooks;
pub mod lab_guard;
pub mod page;
pub mod replication_hooks;
pub mod roles;
pub mod run;
pub mod runner;
pub mod spec;
pub mod state;
pub mod verdicts;

pub use spec::Study;

use check::{Block, Evidence, Measurement, Outcome, StepData};
use sharebench_core::record::Record;
use sharebench_report::analysis::Analysis;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The studies shipped with sharebench, by file name and text.
pub const BUILTIN: [(&str, &str); 5] = [
    (
        "dfs-nfs-vs-smb",
        include_str!("../../../studies/dfs-nfs-vs-smb.toml"),
    ),
    (
        "nfs-server-configs",
        include_str!("../../../studies/nfs-server-configs.toml"),
    ),
    (
        "media-prealloc",
        include_str!("../../../studies/media-prealloc.toml"),
    ),
    (
        "small-files",
        include_str!("../../../studies/small-files.toml"),
    ),
    (
        "nfs-connectathon",
        include_str!("../../../studies/nfs-connectathon.toml"),
    ),
];

/// Every shipped study, parsed.
pub fn builtin() -> Vec<(Study, &'static str)> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let s = Study::parse(text)
                .unwrap_or_else(|e| panic!("shipped study {name} does not parse: {e}"));
            (s, *text)
        })
        .collect()
}

/// A study by shipped name, or from a file path; returns it with its text.
pub fn find(name_or_path: &str) -> Result<(Study, String), String> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        let s = Study::parse(text).map_err(|e| format!("study {name_or_path}: {e}"))?;
        return Ok((s, text.to_string()));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("study file {}: {e}", path.display()))?;
        let s = Study::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok((s, text));
    }
    Err(format!(
        "unknown study '{name_or_path}' (shipped: {}; or give a .toml file)",
        BUILTIN.map(|(n, _)| n).join(", ")
    ))
}

/// A finished or partial study run, read back from its directory.
pub struct RunEvidence {
    pub dir: PathBuf,
    pub study: Study,
    pub state: state::RunState,
    pub steps: BTreeMap<String, StepData>,
    /// Problems met while loading (a step's results that cannot be read).
    pub warnings: Vec<String>,
    /// Where each role's target was, as its steps' manifests found it: what is mounted
    /// there (`server:/export`), or a native client's URL.
    pub sources: BTreeMap<String, String>,
}

impl Evidence for RunEvidence {
    fn step(&self, id: &str) -> Option<&StepData> {
        self.steps.get(id)
    }
    fn measurements(&self) -> &[Measurement] {
        &self.state.measurements
    }
}

/// Whether `dir` is a study run's directory.
pub fn is_study_dir(dir: &Path) -> bool {
    dir.join(state::STUDY_MARKER).is_file() && dir.join(state::STUDY_FILE).is_file()
}

impl RunEvidence {
    /// Reads a study directory: the study as it was run, its state, every step's records.
    /// Verdicts use `threshold_pct`, else the run's own (`study run --threshold`), else
    /// the default.
    pub fn load(dir: &Path, threshold_pct: Option<f64>) -> Result<RunEvidence, String> {
        if !is_study_dir(dir) {
            return Err(format!(
                "{}: not a sharebench study directory",
                dir.display()
            ));
        }
        let text = std::fs::read_to_string(dir.join(state::STUDY_FILE))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let study =
            Study::parse_saved(&text).map_err(|e| format!("{}/study.toml: {e}", dir.display()))?;
        let state = state::RunState::load(dir)?;
        // The roles each step measured at the run's scale.
        let study = match study.at_scale(&state.scale) {
            Ok(scaled) => scaled,
            Err(_) => study,
        };
        let threshold = threshold_pct
            .or(state.threshold_pct)
            .unwrap_or(sharebench_report::compare::DEFAULT_THRESHOLD_PCT);
        let mut steps = BTreeMap::new();
        let mut warnings = Vec::new();
        for step in &study.steps {
            if let Some(data) = load_step(dir, step, threshold, &mut warnings) {
                steps.insert(step.id.clone(), data);
            }
        }
        if study
            .claims
            .iter()
            .any(|c| c.check.step() == spec::ALL_STEPS)
        {
            if let Some(all) = all_steps(&steps, threshold, &mut warnings) {
                steps.insert(spec::ALL_STEPS.to_string(), all);
            }
        }
        let sources = role_sources(dir, &study);
        Ok(RunEvidence {
            dir: dir.to_path_buf(),
            study,
            state,
            steps,
            warnings,
            sources,
        })
    }

    /// Every claim's outcome, in the study's order.
    /// A claim on a step this run did not run (an unmapped role) says why.
    pub fn outcomes(&self) -> Vec<Outcome> {
        self.study
            .claims
            .iter()
            .map(|c| {
                let not_run = steps_read(&c.check).into_iter().find_map(|id| {
                    self.state
                        .step(id)
                        .filter(|s| s.status == state::StepStatus::NotRun)
                });
                match not_run {
                    Some(s) => Outcome {
                        verdict: check::Verdict::NotTested,
                        found: format!(
                            "step {} not run: {}",
                            s.id,
                            s.error.as_deref().unwrap_or("")
                        ),
                    },
                    None => check::evaluate(&c.check, self, c.said.is_some()),
                }
            })
            .collect()
    }
}

/// The steps a claim reads: its step, or, for `*`, the step each name it compares gives
/// after its `@`.
fn steps_read(check: &spec::Check) -> Vec<&str> {
    match check {
        spec::Check::Better { step, a, b, .. } if step == spec::ALL_STEPS => [a, b]
            .into_iter()
            .filter_map(|n| n.rsplit_once('@').map(|(_, id)| id))
            .collect(),
        c => vec![c.step()],
    }
}

/// The run.json of each of a step's runs (one, or one per block, or per block and role),
/// those that can be read; each read only when asked for.
fn step_manifests(
    dir: &Path,
    step: &spec::Step,
) -> impl Iterator<Item = sharebench_core::manifest::Manifest> {
    let runs = StepRuns::of(dir, step);
    let files: Vec<_> = runs.dirs().iter().map(|d| d.join("run.json")).collect();
    files
        .into_iter()
        .filter_map(|f| std::fs::read(f).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
}

/// Where each role's target was: the first manifest of a step that measured it says what
/// is mounted there, or (a native client) its URL.
fn role_sources(dir: &Path, study: &Study) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for step in study.steps.iter().filter(|s| !s.targets.is_empty()) {
        for m in step_manifests(dir, step) {
            for t in m
                .targets
                .iter()
                .filter(|t| study.roles.contains_key(&t.name))
            {
                let source = match (&t.mount_source, t.backend.as_str()) {
                    (Some(s), _) => Some(format!("mounted from {s}")),
                    (None, "posix") => None,
                    (None, _) => t.mount_point.clone(),
                };
                if let Some(s) = source {
                    out.entry(t.name.clone()).or_insert(s);
                }
            }
        }
    }
    out
}

/// One step's records and their analysis; `None` when it has none. A step that
/// alternates has its blocks' records together, each with its block.
fn load_step(
    dir: &Path,
    step: &spec::Step,
    threshold_pct: f64,
    warnings: &mut Vec<String>,
) -> Option<StepData> {
    let runs: Vec<(PathBuf, Option<Block>)> = match StepRuns::of(dir, step) {
        StepRuns::OneAtATime(by_role) => {
            return load_one_at_a_time(step, by_role, threshold_pct, warnings)
        }
        StepRuns::Once(d) => vec![(d, None)],
        StepRuns::Alternating(blocks) => blocks
            .into_iter()
            .map(|(n, d)| {
                let alternation = step.alternate.clone().unwrap_or_default();
                (d, Some(Block { alternation, n }))
            })
            .collect(),
    };
    let mut records = Vec::new();
    let mut blocks = BTreeMap::new();
    for (run_dir, block) in runs {
        let jsonl = run_dir.join("results.jsonl");
        if !jsonl.is_file() {
            continue;
        }
        match sharebench_core::record::read_jsonl(&jsonl) {
            Ok(r) => {
                if let Some(b) = block {
                    for run in r.records.iter().map(|r| &r.run_id) {
                        blocks.entry(run.clone()).or_insert_with(|| b.clone());
                    }
                }
                records.extend(r.records);
            }
            Err(e) => warnings.push(format!("step {}: {e}", step.id)),
        }
    }
    if records.is_empty() {
        return None;
    }
    let analysis = if blocks.is_empty() {
        sharebench_report::load::load_inputs(&[state::step_dir(dir, &step.id)], &[])
            .and_then(|l| sharebench_report::analysis::analyse(l, None, threshold_pct))
            .map_err(|e| warnings.push(format!("step {}: {e}", step.id)))
            .ok()
    } else {
        // The targets of one block were measured side by side, repetition by repetition:
        // for the analysis the blocks' repetitions are one run's, numbered apart.
        let common = format!("{}:blocks", step.id);
        let renumbered: Vec<Record> = records
            .iter()
            .cloned()
            .map(|mut r| {
                let n = blocks.get(&r.run_id).map_or(0, |b| b.n);
                r.rep += n * BLOCK_REP_STRIDE;
                r.run_id = common.clone();
                r
            })
            .collect();
        let listed: Vec<String> = (step_manifests(dir, step).next())
            .map(|m| m.targets.into_iter().map(|t| t.name).collect())
            .unwrap_or_default();
        let by_target = split_by_target(&renumbered, &listed, |t| t.to_string());
        analyse_datasets(by_target, &step.id, threshold_pct, warnings)
    };
    Some(StepData {
        records,
        analysis,
        blocks,
    })
}

/// Where a step of a study run left its records: one result directory, or one per block
/// of a step that alternates (`steps/ID/block-N/`), or one per block and role of a step
/// measured one role at a time (`--switch`: `steps/ID/block-N/ROLE/`).
enum StepRuns {
    Once(PathBuf),
    Alternating(Vec<(u32, PathBuf)>),
    OneAtATime(Vec<(u32, PathBuf)>),
}

impl StepRuns {
    /// The step's result directories as this run left them (blocks up to the first missing).
    fn of(dir: &Path, step: &spec::Step) -> StepRuns {
        let has = |d: &Path| d.join("results.jsonl").is_file();
        let mut by_role = Vec::new();
        for n in 1.. {
            let block = state::block_dir(dir, &step.id, n);
            let found: Vec<PathBuf> = step
                .targets
                .iter()
                .map(|role| block.join(role))
                .filter(|d| has(d))
                .collect();
            if found.is_empty() {
                break;
            }
            by_role.extend(found.into_iter().map(|d| (n, d)));
        }
        if !by_role.is_empty() {
            return StepRuns::OneAtATime(by_role);
        }
        match step.alternate {
            None => StepRuns::Once(state::step_dir(dir, &step.id)),
            Some(_) => StepRuns::Alternating(
                (1..)
                    .map(|n| (n, state::block_dir(dir, &step.id, n)))
                    .take_while(|(_, d)| has(d))
                    .collect(),
            ),
        }
    }

    fn dirs(&self) -> Vec<&Path> {
        match self {
            StepRuns::Once(d) => vec![d.as_path()],
            StepRuns::Alternating(v) | StepRuns::OneAtATime(v) => {
                v.iter().map(|(_, d)| d.as_path()).collect()
            }
        }
    }
}

/// A step measured one role at a time: each role's run in block N holds its repetitions
/// of every test; the block is the replicate (the roles were measured one after the other
/// within it, so their repetitions do not pair). Each test of each role is given by its
/// median repetition in the block (by time: a record as measured, not a mean), as
/// repetition N of one run, so the roles pair block by block.
fn load_one_at_a_time(
    step: &spec::Step,
    runs: Vec<(u32, PathBuf)>,
    threshold_pct: f64,
    warnings: &mut Vec<String>,
) -> Option<StepData> {
    let mut tests: BTreeMap<(u32, String), Vec<Record>> = BTreeMap::new();
    for (n, run_dir) in runs {
        match sharebench_core::record::read_jsonl(&run_dir.join("results.jsonl")) {
            Ok(r) => {
                for rec in r.records {
                    let f = &rec.figures;
                    let key = format!(
                        "{}|{}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
                        rec.target,
                        rec.op,
                        rec.file_size,
                        rec.record_size,
                        rec.threads,
                        rec.scope,
                        rec.worker,
                        rec.status,
                        f.test,
                        f.files,
                        f.streams,
                        f.load_point
                    );
                    tests.entry((n, key)).or_default().push(rec);
                }
            }
            Err(e) => warnings.push(format!("step {}: {e}", step.id)),
        }
    }
    let common = format!("{}:one-at-a-time", step.id);
    let mut records: Vec<Record> = tests
        .into_iter()
        .map(|((n, _), mut reps)| {
            reps.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
            let mut median = reps.swap_remove((reps.len() - 1) / 2);
            median.rep = n - 1;
            median.run_id = common.clone();
            median
        })
        .collect();
    if records.is_empty() {
        return None;
    }
    records.sort_by_key(|r| r.rep);
    let by_target = split_by_target(&records, &[], |t| t.to_string());
    let analysis = analyse_datasets(by_target, &step.id, threshold_pct, warnings);
    Some(StepData {
        records,
        analysis,
        blocks: BTreeMap::new(),
    })
}

/// Repetition `r` of block `n` is repetition `n * BLOCK_REP_STRIDE + r` in a step's
/// analysis (no run has this many repetitions).
const BLOCK_REP_STRIDE: u32 = 100_000;

/// `records` by target, each target renamed `label(target)`, in the order of `listed` (the
/// run's list, whose first is the baseline), then in order of first sight: a run takes
/// its targets in an order of its own (`target_order`).
fn split_by_target(
    records: &[Record],
    listed: &[String],
    label: impl Fn(&str) -> String,
) -> Vec<(String, String, Vec<Record>)> {
    let mut targets: Vec<&str> = Vec::new();
    for r in records {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    targets.sort_by_key(|t| listed.iter().position(|l| l == t).unwrap_or(usize::MAX));
    targets
        .into_iter()
        .map(|t| {
            let name = label(t);
            let recs = records
                .iter()
                .filter(|r| r.target == t)
                .cloned()
                .map(|mut r| {
                    r.target = name.clone();
                    r
                })
                .collect();
            (name, t.to_string(), recs)
        })
        .collect()
}

/// The analysis of (label, target, records) datasets read from `source`.
fn analyse_datasets(
    datasets: Vec<(String, String, Vec<Record>)>,
    source: &str,
    threshold_pct: f64,
    warnings: &mut Vec<String>,
) -> Option<Analysis> {
    use sharebench_report::load::{Dataset, Kind, Loaded};
    let mut loaded = Loaded::default();
    for (label, target, records) in datasets {
        loaded.datasets.push(Dataset {
            label,
            source: PathBuf::from(source),
            kind: Kind::Sharebench,
            target,
            manifest: None,
            records,
        });
    }
    sharebench_report::analysis::analyse(loaded, None, threshold_pct)
        .map_err(|e| warnings.push(format!("step {source}: {e}")))
        .ok()
}

/// Every step's records together, each target renamed `TARGET@STEP`.
fn all_steps(
    steps: &BTreeMap<String, StepData>,
    threshold_pct: f64,
    warnings: &mut Vec<String>,
) -> Option<StepData> {
    let mut datasets = Vec::new();
    let mut blocks = BTreeMap::new();
    for (id, data) in steps {
        let listed = data.analysis.as_ref().map_or(&[][..], |a| &a.labels);
        datasets.extend(split_by_target(&data.records, listed, |t| {
            format!("{t}@{id}")
        }));
        blocks.extend(data.blocks.clone());
    }
    if datasets.is_empty() {
        return None;
    }
    let records = datasets
        .iter()
        .flat_map(|(_, _, r)| r.iter().cloned())
        .collect();
    let analysis = analyse_datasets(datasets, spec::ALL_STEPS, threshold_pct, warnings);
    Some(StepData {
        records,
        analysis,
        blocks,
    })
}

/// With several runs of one study, each claim's figure over them where only runs could
/// decide it (`check::steadier_over_runs`), else `None`; empty with one run. A run given
/// twice (or copied) counts once, by when it started; only runs at the first one's scale
/// and mapping are replicates of one figure, and only runs whose step set its targets up
/// in an order drawn for the run (`order_drawn`).
fn over_the_runs(runs: &[(String, RunEvidence)]) -> Vec<Option<check::Outcome>> {
    let [(_, first), _, ..] = runs else {
        return Vec::new();
    };
    let mut seen = std::collections::BTreeSet::new();
    let (alike, other): (Vec<&RunEvidence>, Vec<&RunEvidence>) = runs
        .iter()
        .map(|(_, r)| r)
        .filter(|r| seen.insert(r.state.started_at.as_str()))
        .partition(|r| {
            r.state.scale == first.state.scale && r.state.mapping == first.state.mapping
        });
    let left_out = match other.len() {
        0 => String::new(),
        n => format!("; {n} run(s) left out: another scale or mapping than the first"),
    };
    first
        .study
        .claims
        .iter()
        .map(|c| {
            let step = match &c.check {
                spec::Check::Steadier { step, .. } => step.as_str(),
                _ => return None,
            };
            let (drawn, listed): (Vec<&RunEvidence>, Vec<&RunEvidence>) =
                alike.iter().partition(|r| order_drawn(r, step));
            let evidence: Vec<&dyn Evidence> = drawn.iter().map(|r| *r as &dyn Evidence).collect();
            let mut o = check::steadier_over_runs(&c.check, &evidence, c.said.is_some())?;
            o.found.push_str(&left_out);
            if !listed.is_empty() {
                o.found.push_str(&format!(
                    "; {} run(s) left out: they took their targets as listed (runs before 2026-11-30), so the first-listed, taken first in every run, looked the less steady, or their run.json cannot be read",
                    listed.len()
                ));
            }
            o.found.push_str(&span(&drawn));
            Some(o)
        })
        .collect()
}

/// When the runs of a figure over runs started, first to last (UTC): what it decides holds
/// for the conditions of that span, and the main job's steadiness has moved between
/// morning and afternoon (docs/methods/statistics.md, "Steadiness over runs").
fn span(runs: &[&RunEvidence]) -> String {
    let minute = |r: &&RunEvidence| r.state.started_at.get(..16).map(|t| t.replace('T', " "));
    let mut starts: Vec<String> = runs.iter().filter_map(minute).collect();
    starts.sort();
    match (starts.first(), starts.last()) {
        (Some(a), Some(b)) => {
            format!("; the runs started {a} to {b} UTC, the conditions this speaks for")
        }
        _ => String::new(),
    }
}

/// Whether a run's `step` took its targets in an order drawn for the run (`target_order`
/// in its run.json): before that, the first-listed was always taken first, and the target
/// taken first measured as the less steady of two identical ones (docs/methods/
/// statistics.md, "Steadiness over runs").
fn order_drawn(run: &RunEvidence, step: &str) -> bool {
    let Some(step) = run.study.steps.iter().find(|s| s.id == step) else {
        return false;
    };
    let mut manifests = step_manifests(&run.dir, step).peekable();
    manifests.peek().is_some()
        && manifests.all(|m| m.targets.len() < 2 || !m.target_order.is_empty())
}

/// Writes the report of one study run (or of several runs of one study, compared) into
/// a new or empty `out`: `report.html` (question, answer, claims, evidence) and, per step
/// with records, `STEP/report.html`, `results.xlsx` and `results.csv`. Returns the lines
/// of the terminal summary and the warnings met.
pub fn write_report(
    runs: &[(String, RunEvidence)],
    out: &Path,
) -> Result<(Vec<String>, Vec<String>), String> {
    let Some((_, first)) = runs.first() else {
        return Err("no study run given".into());
    };
    if runs.iter().any(|(_, r)| r.study.name != first.study.name) {
        return Err("runs of different studies cannot be compared claim by claim".into());
    }
    sharebench_report::check_out_dir(out).map_err(|e| e.0)?;
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    let mut step_reports = BTreeMap::new();
    let mut warnings: Vec<String> = runs
        .iter()
        .flat_map(|(_, r)| r.warnings.iter().cloned())
        .collect();
    for step in &first.study.steps {
        // One input per run, or per block (and role) of a step that alternates (or runs
        // one role at a time), each labelled when there are several.
        let mut inputs: Vec<(PathBuf, String)> = Vec::new();
        let mut labelled = runs.len() > 1 || step.alternate.is_some();
        for (label, r) in runs.iter().filter(|(_, r)| r.steps.contains_key(&step.id)) {
            let of_run = if runs.len() > 1 {
                format!("{label} ")
            } else {
                String::new()
            };
            match StepRuns::of(&r.dir, step) {
                StepRuns::Once(d) => inputs.push((d, label.clone())),
                StepRuns::Alternating(blocks) => inputs.extend(
                    blocks
                        .into_iter()
                        .map(|(n, d)| (d, format!("{of_run}block {n}"))),
                ),
                // One role a run: the role's runs of every block are its replicates.
                StepRuns::OneAtATime(by_role) => {
                    labelled = true;
                    inputs.extend(by_role.into_iter().map(|(_, d)| {
                        let role = d.file_name().unwrap_or_default().to_string_lossy();
                        let label = format!("{of_run}{role}");
                        (d, label)
                    }))
                }
            }
        }
        if inputs.is_empty() {
            continue;
        }
        let (inputs, labels): (Vec<PathBuf>, Vec<String>) = inputs.into_iter().unzip();
        let labels = if labelled { labels } else { Vec::new() };
        let req = sharebench_report::ReportRequest {
            inputs,
            labels,
            baseline: None,
            out: out.join(&step.id),
            latency_bound_us: first.study.latency_bound_ms(&step.id).map(|ms| ms * 1000.0),
            ..Default::default()
        };
        match sharebench_report::build(&req) {
            Ok((_, rendered)) => {
                sharebench_report::write(&req.out, &rendered).map_err(|e| e.0)?;
                step_reports.insert(step.id.clone(), format!("{}/report.html", step.id));
            }
            Err(e) => {
                warnings.push(format!("step {}: no report: {e}", step.id));
            }
        }
    }
    let views: Vec<page::RunView> = runs
        .iter()
        .map(|(label, r)| page::RunView {
            label: label.clone(),
            outcomes: r.outcomes(),
            run: r,
        })
        .collect();
    let over_runs = over_the_runs(runs);
    let html = page::render(&views, &over_runs, &step_reports);
    let write_err = |e: std::io::Error| format!("cannot write in --out {}: {e}", out.display());
    // Written by handle, as new files: nothing follows a symlink planted meanwhile.
    let dir = sharebench_core::safe_dir::SafeDir::create(out).map_err(write_err)?;
    for (name, bytes) in [
        ("report.html", html.into_bytes()),
        ("verdicts.json", verdicts::render(&views, &over_runs)),
    ] {
        std::io::Write::write_all(&mut dir.create_new(name, 0o644).map_err(write_err)?, &bytes)
            .map_err(write_err)?;
    }
    Ok((page::summary_lines(&views, &over_runs), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_study_parses_and_states_its_scales() {
        let all = builtin();
        assert_eq!(all.len(), BUILTIN.len());
        for (s, _) in &all {
            for scale in ["tiny", "quick", "standard", "full"] {
                assert!(s.scale(scale).is_ok(), "{} has no {scale} scale", s.name);
            }
            assert!(!s.claims.is_empty(), "{} has no claims", s.name);
        }
        assert_eq!(find("dfs-nfs-vs-smb").unwrap().0.name, "dfs-nfs-vs-smb");
        assert!(find("nope").unwrap_err().contains("unknown study 'nope'"));
    }

    /// The step report of the main job's load step reads its curves at the bound of the
    /// study's load-capacity figure, so the two show the same rates.
    #[test]
    fn a_load_steps_report_takes_the_bound_of_its_figure() {
        let (s, _) = find("dfs-nfs-vs-smb").unwrap();
        assert_eq!(s.latency_bound_ms("load-build"), Some(10.0));
        assert_eq!(s.latency_bound_ms("matrix"), None);
    }
}
