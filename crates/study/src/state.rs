//! The study directory and `study.json`: what a study run has done so far, rewritten
//! (atomically) after every step, so an interrupted run can be reported and resumed. A
//! study directory holds the marker, `study.toml` (the study as run), `study.json`, and
//! `steps/ID/` (one ordinary result directory per step, or per block: `steps/ID/block-N/`,
//! or per block and role: `steps/ID/block-N/ROLE/`). Made new or reopened for `--resume`
//! here. Not: the records themselves (each run's results.jsonl).

use crate::check::Measurement;
use crate::roles::Mapping;
use crate::spec::{LabNeeds, Study};
use serde::{Deserialize, Serialize};
use sharebench_core::safe_dir::SafeDir;
use sharebench_session::error::{CliError, CliResult};
use std::path::{Path, PathBuf};

/// The file that marks a directory as a study run's own.
pub const STUDY_MARKER: &str = ".sharebench-study";
/// The study as it was run.
pub const STUDY_FILE: &str = "study.toml";
pub const STATE_FILE: &str = "study.json";

/// Where step `id`'s results go.
pub fn step_dir(dir: &Path, id: &str) -> PathBuf {
    dir.join("steps").join(id)
}

/// Where block `n` (from 1) of a step that alternates goes.
pub fn block_dir(dir: &Path, id: &str, n: u32) -> PathBuf {
    step_dir(dir, id).join(format!("block-{n}"))
}

/// How far a step got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    Pending,
    Running,
    Complete,
    /// Ran to the end with failed measurements (kept, and reported).
    Failed,
    Interrupted,
    /// Not run in this run, by design: a role the user did not map, a step only the lab
    /// can run while the user's targets stand in for it (`error` says which).
    NotRun,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepState {
    pub id: String,
    pub status: StepStatus,
    /// The lab as the step ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabNeeds>,
    #[serde(default)]
    pub seconds: f64,
    /// One line on what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Earlier attempts' result directories, kept when a step is run again on --resume.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<String>,
    /// A step that alternates: the blocks it has finished.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocks_done: u32,
}

impl StepState {
    /// A step not begun yet.
    pub fn pending(id: &str) -> StepState {
        StepState {
            id: id.to_string(),
            status: StepStatus::Pending,
            lab: None,
            seconds: 0.0,
            error: None,
            attempts: Vec::new(),
            blocks_done: 0,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    pub study: String,
    pub scale: String,
    pub tool_version: String,
    pub started_at: String,
    #[serde(default)]
    pub ended_at: Option<String>,
    pub outcome: sharebench_core::manifest::RunOutcome,
    pub steps: Vec<StepState>,
    #[serde(default)]
    pub measurements: Vec<Measurement>,
    /// What the run could not do as the seed did, found while running.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The threshold, in percent, the run's verdicts used (`study run --threshold`);
    /// `None`: the default. A re-report uses it unless told otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
    /// The user's targets for the study's roles (`study run --target`); empty when the lab
    /// played them all. `--resume` keeps it.
    #[serde(default, skip_serializing_if = "Mapping::is_empty")]
    pub mapping: Mapping,
}

impl RunState {
    /// A run of `study` about to start: every step pending.
    pub fn new(study: &Study, scale: &str, threshold_pct: Option<f64>, mapping: Mapping) -> Self {
        RunState {
            study: study.name.clone(),
            scale: scale.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_at: chrono::Utc::now().to_rfc3339(),
            ended_at: None,
            outcome: sharebench_core::manifest::RunOutcome::Running,
            steps: study
                .steps
                .iter()
                .map(|s| StepState::pending(&s.id))
                .collect(),
            measurements: Vec::new(),
            notes: Vec::new(),
            threshold_pct,
            mapping,
        }
    }

    pub fn load(dir: &Path) -> Result<RunState, String> {
        let path = dir.join(STATE_FILE);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let tmp = dir.join("study.json.tmp");
        std::fs::write(&tmp, text + "\n")
            .and_then(|_| std::fs::rename(&tmp, dir.join(STATE_FILE)))
            .map_err(|e| format!("cannot write {}: {e}", dir.join(STATE_FILE).display()))
    }

    pub fn step(&self, id: &str) -> Option<&StepState> {
        self.steps.iter().find(|s| s.id == id)
    }

    pub fn step_mut(&mut self, id: &str) -> Option<&mut StepState> {
        self.steps.iter_mut().find(|s| s.id == id)
    }
}

/// What a study run is opened with: its scale, threshold and mapping.
pub struct Opening<'a> {
    pub scale: &'a str,
    pub threshold_pct: Option<f64>,
    pub mapping: Mapping,
}

/// Makes a new study directory (`out`, else `./sharebench-results/study-NAME-RUNID`): the
/// marker, the study as it runs (`text`), `steps/`, and its state, all written through a
/// handle held on the directory, so nothing follows a symlink planted meanwhile.
pub fn create_dir(
    out: Option<PathBuf>,
    study: &Study,
    text: &str,
    o: Opening,
) -> CliResult<(PathBuf, RunState)> {
    let dir = out.unwrap_or_else(|| {
        let run_id = sharebench_session::new_run_id();
        Path::new("sharebench-results").join(format!("study-{}-{run_id}", study.name))
    });
    sharebench_report::check_out_dir(&dir).map_err(|e| CliError::usage(e.0))?;
    let io = |e: std::io::Error| CliError::usage(format!("--out {}: {e}", dir.display()));
    let held = SafeDir::create(&dir).map_err(io)?;
    held.subdir("steps").map_err(io)?;
    let marker = format!("sharebench study {}\n", study.name);
    held.replace(STUDY_MARKER, marker.as_bytes(), 0o644)
        .map_err(io)?;
    held.replace(STUDY_FILE, text.as_bytes(), 0o644)
        .map_err(io)?;
    let st = RunState::new(study, o.scale, o.threshold_pct, o.mapping);
    st.save(&dir).map_err(CliError::failed)?;
    Ok((dir, st))
}

/// Reopens an interrupted run's directory for `--resume`: the same study at the same
/// scale, its own mapping kept (a different one is refused); a threshold given now
/// replaces its own.
pub fn resume_dir(dir: &Path, study: &Study, o: Opening) -> CliResult<(PathBuf, RunState)> {
    let shown = dir.display();
    if !crate::is_study_dir(dir) {
        return Err(CliError::usage(format!(
            "--resume: {shown} is not a study directory"
        )));
    }
    let saved = std::fs::read_to_string(dir.join(STUDY_FILE))
        .map_err(|e| CliError::usage(format!("--resume: {e}")))?;
    let saved_study = Study::parse(&saved).map_err(CliError::usage)?;
    let mut st = RunState::load(dir).map_err(CliError::usage)?;
    if saved_study.name != study.name || st.scale != o.scale {
        return Err(CliError::usage(format!(
            "--resume: {shown} holds study {} at scale {}, not {} at {}",
            saved_study.name, st.scale, study.name, o.scale
        )));
    }
    if o.threshold_pct.is_some() {
        st.threshold_pct = o.threshold_pct;
    }
    if !o.mapping.is_empty() && o.mapping != st.mapping {
        return Err(CliError::usage(format!(
            "--resume: {shown} was run with other --target mappings; resume it without them (its own are kept)"
        )));
    }
    Ok((dir.to_path_buf(), st))
}
