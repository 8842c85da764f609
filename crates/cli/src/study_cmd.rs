//! `sharebench study list|run`: the command line of a seed reproduced end to end. `run`
//! reads the study, parses every step's run line into a plan (once, before anything
//! runs), creates or reopens the study directory and hands the rest to
//! `sharebench_study::run`: the lab, the steps, their actions, the report. Ctrl-C stops
//! after the current measurement; `--resume` continues. Not: the running itself.

use crate::error::{CliError, CliResult};
use crate::run_cmd::{self, RunArgs};
use crate::session;
use clap::{Args, Parser, Subcommand};
use sharebench_core::plan::Plan;
use sharebench_study::roles::{Given, Mapping};
use sharebench_study::run::{Prepared, StepPlan};
use sharebench_study::spec::{Scale, Step, Study};
use sharebench_study::state::{self, Opening, RunState};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub command: StudyCommand,
}

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Describe every shipped study: its seed, question, steps, claims and run time per scale
    List,
    /// List a study's roles: what its steps compare, each role's lab default, and what you
    /// may map it to with 'study run --target ROLE=TARGET'
    Roles {
        /// A shipped study (see 'sharebench study list') or a study file (.toml)
        study: String,
    },
    /// Run a study (shipped name or a .toml file) and write its report
    #[command(after_help = "Examples:\n  \
sharebench study run dfs-nfs-vs-smb --scale quick\n  \
sharebench study run small-files --out results/small-files\n  \
sharebench study run dfs-nfs-vs-smb --out results/dfs --resume     continue after Ctrl-C\n  \
sharebench study run nfs-server-configs --target windows-server=/mnt/win --target linux-server=/mnt/linux\n\n\
With --target (or --targets FILE), the study measures your own servers in the roles you map\n\
('sharebench study roles NAME' lists them) and the lab is not stood up: steps that need an\n\
unmapped role, or the lab itself, are reported as not run and why (--with-lab runs them in\n\
the lab). A targets file has one table per role:\n  \
[roles.windows-server]\n  \
target = \"/mnt/win\"\n  \
description = \"Windows Server 2022, Server for NFS, NTFS, 10 GbE\"\n\n\
The lab steps need root. The report of a finished or interrupted run can be made again with\n\
'sharebench report STUDY_DIR --out DIR'; runs of one study are compared with\n\
'sharebench report RUN1 RUN2 --out DIR', and three or more decide what one run cannot\n\
(which target is the steadier: each run is one replicate).")]
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
    /// docs/methods/statistics.md)
    #[arg(long, value_name = "PCT", value_parser = crate::run_cmd::parse_percent)]
    pub threshold: Option<f64>,
    /// Play a role with your own target: a directory (on a kernel or FUSE mount), nfs://,
    /// smb:// or gluster://; repeatable (roles: 'sharebench study roles NAME')
    #[arg(long = "target", value_name = "ROLE=TARGET")]
    pub targets: Vec<String>,
    /// The same mapping from a file, with a description of each system
    #[arg(long = "targets", value_name = "FILE.toml")]
    pub targets_file: Option<PathBuf>,
    /// With a mapping, let the lab play the roles left unmapped and run the steps only it
    /// can (needs root)
    #[arg(long)]
    pub with_lab: bool,
    /// Your command for what the lab does itself on your system, run through sh -c with a
    /// time limit: failover (take a replica down mid-run) and restore (bring it back;
    /// return once in sync), their output kept in the study directory; server-cpu (print
    /// the CPU seconds the server of the role in $SHAREBENCH_ROLE has used so far; read
    /// before and after each measurement); repeatable
    #[arg(long = "hook", value_name = "NAME=COMMAND")]
    pub hooks: Vec<String>,
    /// A role that cannot be mounted at once with the others, and your command that makes
    /// it the mounted one (as switching /etc/fstab lines): its steps run one role at a
    /// time, after its command, in alternating blocks (A, B, A, B, ...) that are their
    /// replicates; repeatable
    #[arg(long = "switch", value_name = "ROLE=COMMAND")]
    pub switches: Vec<String>,
    /// Your client machines, one MPI rank each (mpirun's hostfile: a host a line,
    /// optionally slots=N): the multi-client steps run there through mpirun, with the same
    /// mapping on every machine (docs/guide/multi-client.md)
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
}

pub fn main(args: StudyArgs) -> CliResult<()> {
    match args.command {
        StudyCommand::List => list(),
        StudyCommand::Roles { study } => roles(&study),
        StudyCommand::Run(a) => run(a),
    }
}

fn list() -> CliResult<()> {
    let studies: Vec<Study> = sharebench_study::builtin()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let _ = write!(
        crate::stdout::stdout(),
        "{}",
        sharebench_study::catalogue::list(&studies)
    );
    Ok(())
}

fn roles(name: &str) -> CliResult<()> {
    let (study, _) = sharebench_study::find(name).map_err(CliError::usage)?;
    let _ = write!(
        crate::stdout::stdout(),
        "{}",
        sharebench_study::catalogue::roles(&study)
    );
    Ok(())
}

/// The roles the user maps (`--target`, `--targets`), each a study's, each target one
/// that opens: refused in one line before anything runs.
fn mapping(a: &StudyRunArgs, study: &Study) -> CliResult<Mapping> {
    let given = Given {
        targets: &a.targets,
        file: a.targets_file.as_deref(),
        hooks: &a.hooks,
        switches: &a.switches,
        hostfile: a.hostfile.as_deref(),
        with_lab: a.with_lab,
    };
    let m = Mapping::given(given, study).map_err(CliError::usage)?;
    for (role, t) in &m.roles {
        sharebench_backends::open_target(&t.target)
            .map_err(|e| CliError::usage(format!("--target {role}: {e}")))?;
    }
    Ok(m)
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

/// Every step's plan, read once before anything runs (see `sharebench_study::run::plan`),
/// its run line parsed as `sharebench run` parses its arguments. Also refused here:
/// several clients without MPI.
fn prepare_runs(study: &Study, scale: &Scale, mapping: &Mapping) -> CliResult<Vec<StepPlan>> {
    let parse = |step: &Step, line: &str| -> CliResult<(Vec<String>, Plan)> {
        let mut args = parse_run_line(&step.id, line)?;
        if step.clients.is_some_and(|n| n > 1) {
            run_cmd::for_several_clients(&mut args);
        }
        let plan = run_cmd::build_plan(&args)
            .map_err(|e| CliError::usage(format!("step {}: {}", step.id, e.message)))?;
        Ok((args.targets, plan))
    };
    let runs = sharebench_study::run::plan(study, scale, mapping, &parse)?;
    let several = study
        .steps
        .iter()
        .zip(&runs)
        .find(|(s, r)| s.clients.is_some_and(|n| n > 1) && matches!(r, StepPlan::Run(_)));
    if let Some((step, _)) = several {
        crate::lab_cmd::require_mpi().map_err(|e| {
            CliError::usage(format!(
                "study {}, step {}: {}",
                study.name, step.id, e.message
            ))
        })?;
    }
    Ok(runs)
}

fn run(a: StudyRunArgs) -> CliResult<()> {
    let (study, text) = sharebench_study::find(&a.study).map_err(CliError::usage)?;
    let scale = study.scale(&a.scale).map_err(CliError::usage)?.clone();
    let study = study.at_scale(&a.scale).map_err(CliError::usage)?;
    let mut mapping = mapping(&a, &study)?;
    if a.resume && mapping.is_empty() {
        // A resumed run keeps the mapping it was started with.
        if let Some(dir) = &a.out {
            if let Ok(st) = RunState::load(dir) {
                mapping = st.mapping;
            }
        }
    }
    let runs = prepare_runs(&study, &scale, &mapping)?;
    let opening = Opening {
        scale: &a.scale,
        threshold_pct: a.threshold,
        mapping,
    };
    let (dir, state) = match (&a.out, a.resume) {
        (Some(dir), true) => state::resume_dir(dir, &study, opening),
        (out, _) => state::create_dir(out.clone(), &study, &text, opening),
    }?;
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
