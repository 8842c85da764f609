//! `sharebench study list|run`: the command line of a seed reproduced end to end. `run`
//! reads the study, parses every step's run line into a plan (once, before anything
//! runs), creates or reopens the study directory and hands the rest to
//! `sharebench_study::run`: the lab, the steps, their actions, the report. Ctrl-C stops
//! after the current measurement; `--resume` continues. Not: the running itself.

use crate::error::{CliError, CliResult};
use crate::run_cmd::{self, RunArgs};
use crate::session;
use clap::{Args, Parser, Subcommand};
use sharebench_core::manifest::RunOutcome;
use sharebench_core::safe_dir::SafeDir;
use sharebench_study::lab_guard;
use sharebench_study::run::{Prepared, StepRun};
use sharebench_study::spec::{Scale, Study};
use sharebench_study::state::{self, RunState, StepState};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub command: StudyCommand,
}

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Describe every shipped study: its seed, question, steps, claims and run time per scale
    List,
    /// Run a study (shipped name or a .toml file) and write its report
    #[command(after_help = "Examples:\n  \
sharebench study run dfs-nfs-vs-smb --scale quick\n  \
sharebench study run small-files --out results/small-files\n  \
sharebench study run dfs-nfs-vs-smb --out results/dfs --resume     continue after Ctrl-C\n\n\
The lab steps need root. The report of a finished or interrupted run can be made again with\n\
'sharebench report STUDY_DIR --out DIR'; two runs of one study are compared with\n\
'sharebench report RUN1 RUN2 --out DIR'.")]
    Run(StudyRunArgs),
}

#[derive(Args, Debug)]
pub struct StudyRunArgs {
    /// A shipped study (see 'sharebench study list') or a study file (.toml)
    pub study: String,
    /// How much to measure: each study's scales and their run times are in 'study list'
    #[arg(long, default_value = "quick")]
    pub scale: String,
    /// Study directory (new or empty; with --resume, the interrupted run's); default
    /// ./sharebench-results/study-NAME-<UTC time>
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue an interrupted run in --out: finished steps are kept, the cut-off step runs again
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// The smallest difference, in percent, that decides a claim (a winner, or
    /// "equivalent" within it); kept in study.json for re-reports (default 5; see
    /// docs/statistics.md)
    #[arg(long, value_name = "PCT", value_parser = crate::run_cmd::parse_percent)]
    pub threshold: Option<f64>,
}

pub fn main(args: StudyArgs) -> CliResult<()> {
    match args.command {
        StudyCommand::List => list(),
        StudyCommand::Run(a) => run(a),
    }
}

fn list() -> CliResult<()> {
    let mut out = crate::stdout::stdout();
    for (s, _) in sharebench_study::builtin() {
        let _ = writeln!(out, "{}  ({})\n  {}", s.name, s.seed, s.title);
        let _ = writeln!(out, "  Question: {}", s.question);
        let _ = writeln!(out, "  {}", s.about);
        let claims = s.claims.iter().filter(|c| c.said.is_some()).count();
        let _ = writeln!(
            out,
            "  {} steps, {claims} claims of the seed, {} figures{}",
            s.steps.len(),
            s.claims.len() - claims,
            if s.needs_lab() {
                "; needs the lab (root)"
            } else {
                ""
            }
        );
        for (name, sc) in s.scales_by_cost() {
            let limits = sc
                .limits
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let how = if sc.estimated {
                "estimated"
            } else {
                "measured"
            };
            let _ = writeln!(
                out,
                "  --scale {name:<9} about {} min ({how}){limits}",
                sc.minutes
            );
        }
        let _ = writeln!(out);
    }
    Ok(())
}

/// Writes `text` into the new study directory, or checks the one being resumed.
fn open_study_dir(a: &StudyRunArgs, study: &Study, text: &str) -> CliResult<(PathBuf, RunState)> {
    if a.resume {
        let dir = a.out.clone().expect("clap: --resume requires --out");
        if !sharebench_study::is_study_dir(&dir) {
            return Err(CliError::usage(format!(
                "--resume: {} is not a study directory",
                dir.display()
            )));
        }
        let saved = std::fs::read_to_string(dir.join(state::STUDY_FILE))
            .map_err(|e| CliError::usage(format!("--resume: {e}")))?;
        let saved_study = Study::parse(&saved).map_err(CliError::usage)?;
        let st = RunState::load(&dir).map_err(CliError::usage)?;
        if saved_study.name != study.name || st.scale != a.scale {
            return Err(CliError::usage(format!(
                "--resume: {} holds study {} at scale {}, not {} at {}",
                dir.display(),
                saved_study.name,
                st.scale,
                study.name,
                a.scale
            )));
        }
        let mut st = st;
        if a.threshold.is_some() {
            st.threshold_pct = a.threshold;
        }
        return Ok((dir, st));
    }
    let run_id = session::new_run_id();
    let dir = a.out.clone().unwrap_or_else(|| {
        Path::new("sharebench-results").join(format!("study-{}-{run_id}", study.name))
    });
    sharebench_report::check_out_dir(&dir).map_err(|e| CliError::usage(e.0))?;
    let io = |e: std::io::Error| CliError::usage(format!("--out {}: {e}", dir.display()));
    // Held open: nothing written there follows a symlink planted meanwhile.
    let out = SafeDir::create(&dir).map_err(io)?;
    out.subdir("steps").map_err(io)?;
    let marker = format!("sharebench study {}\n", study.name);
    out.replace(state::STUDY_MARKER, marker.as_bytes(), 0o644)
        .map_err(io)?;
    out.replace(state::STUDY_FILE, text.as_bytes(), 0o644)
        .map_err(io)?;
    let st = RunState {
        study: study.name.clone(),
        scale: a.scale.clone(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: chrono::Utc::now().to_rfc3339(),
        ended_at: None,
        outcome: RunOutcome::Running,
        steps: study
            .steps
            .iter()
            .map(|s| StepState::pending(&s.id))
            .collect(),
        measurements: Vec::new(),
        notes: Vec::new(),
        threshold_pct: a.threshold,
    };
    st.save(&dir).map_err(CliError::failed)?;
    Ok((dir, st))
}

/// Parses a step's `run` line as `sharebench run` would.
fn parse_run_line(step: &str, line: &str) -> CliResult<RunArgs> {
    #[derive(Parser)]
    #[command(name = "run")]
    struct RunLine {
        #[command(flatten)]
        args: RunArgs,
    }
    let words = sharebench_study::spec::split_args(line)
        .map_err(|e| CliError::usage(format!("step {step}: {e}")))?;
    RunLine::try_parse_from(std::iter::once("run".to_string()).chain(words))
        .map(|l| l.args)
        .map_err(|e| {
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            CliError::usage(format!("step {step}: {first}"))
        })
}

/// Every step's run line, read once and checked before anything runs or the lab comes
/// up: parsed as `sharebench run` parses its arguments, with the scale's values in place,
/// into the plan the step will run (a typo in the last step is refused before the first
/// runs). Also refused here: several clients without MPI, and a lab that cannot come up.
fn prepare_runs(study: &Study, scale: &Scale) -> CliResult<Vec<Option<StepRun>>> {
    let mut runs = Vec::with_capacity(study.steps.len());
    for step in &study.steps {
        let Some(line) = &step.run else {
            runs.push(None);
            continue;
        };
        let line = sharebench_study::spec::substitute(line, &scale.var_texts())
            .map_err(|e| CliError::usage(format!("step {}: {e}", step.id)))?;
        let mut args = parse_run_line(&step.id, &line)?;
        if step.clients.is_some_and(|n| n > 1) {
            run_cmd::for_several_clients(&mut args);
        }
        let plan = run_cmd::build_plan(&args)
            .map_err(|e| CliError::usage(format!("step {}: {}", step.id, e.message)))?;
        runs.push(Some(StepRun {
            line,
            targets: args.targets,
            plan,
        }));
    }
    if let Some(step) = study
        .steps
        .iter()
        .find(|s| s.clients.is_some_and(|n| n > 1))
    {
        crate::lab_cmd::require_mpi().map_err(|e| {
            CliError::usage(format!(
                "study {}, step {}: {}",
                study.name, step.id, e.message
            ))
        })?;
    }
    lab_guard::check(study)?;
    Ok(runs)
}

fn run(a: StudyRunArgs) -> CliResult<()> {
    let (study, text) = sharebench_study::find(&a.study).map_err(CliError::usage)?;
    let scale = study.scale(&a.scale).map_err(CliError::usage)?.clone();
    let runs = prepare_runs(&study, &scale)?;
    let (dir, state) = open_study_dir(&a, &study, &text)?;
    session::install_ctrlc();
    let mut out = crate::stdout::stdout();
    let _ = writeln!(
        out,
        "study {} at scale {} (about {} min): {}",
        study.name,
        a.scale,
        scale.minutes,
        dir.display()
    );
    let prepared = Prepared {
        study: &study,
        scale: &scale,
        runs,
        dir,
        state,
    };
    sharebench_study::run::run(prepared, &mut out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lines_parse_as_sharebench_run_does() {
        let a = parse_run_line("m", "lab:nfs3 lab:smb -i write --file-sizes 1m --reps 2").unwrap();
        assert_eq!(a.targets, vec!["lab:nfs3", "lab:smb"]);
        let e = parse_run_line("m", "lab:nfs3 --bogus").unwrap_err();
        assert!(
            e.message.starts_with("step m: ") && e.message.contains("--bogus"),
            "{}",
            e.message
        );
    }
}
