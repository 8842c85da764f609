//! `sharebench study list|run`: a seed reproduced end to end. `run` creates a study
//! directory, brings the lab up as each step needs it (file system, link rate), runs each
//! step as an ordinary `sharebench run` into `steps/ID/`, takes the lab actions (failover,
//! replication traffic), saves `study.json` after every step, takes the lab down, and
//! writes the report. Ctrl-C stops after the current measurement, keeps every record,
//! reports what was measured and takes the lab down; `--resume` continues. The study
//! model and verdicts are `sharebench-study`; this is the running.

use crate::error::{CliError, CliResult};
use crate::run_cmd::{self, RunArgs};
use crate::session::{self, SessionSpec};
use crate::study_actions;
use clap::{Args, Parser, Subcommand};
use sharebench_core::manifest::RunOutcome;
use sharebench_core::safe_dir::SafeDir;
use sharebench_study::runner;
use sharebench_study::spec::{Action, LabNeeds, Scale, Step, Study};
use sharebench_study::state::{self, RunState, StepState, StepStatus};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// The lab a step needs, as `lab up` options; an error names what the study gave.
fn up_options(needs: &LabNeeds) -> Result<sharebench_lab::UpOptions, String> {
    let fail = |e: anyhow::Error| format!("the study's lab: {e:#}");
    Ok(sharebench_lab::UpOptions {
        backings: sharebench_lab::backing::Backing::parse_list(
            needs.fs(),
            needs.write_order.unwrap_or(false),
            needs.strict_allocate.unwrap_or(false),
        )
        .map_err(fail)?,
        link: needs.link().parse().map_err(fail)?,
        disk: sharebench_lab::disk::DiskProfile::named(needs.disk()).map_err(fail)?,
        ..Default::default()
    })
}

/// The lab as the study has it: brought up by the study, and taken down at its end.
struct LabGuard {
    current: Option<LabNeeds>,
    /// Whether a step measures `lab:smb-fuse`: only then is smbnetfs mounted.
    smb_fuse: bool,
}

impl LabGuard {
    fn ensure(&mut self, needs: &LabNeeds, out: &mut dyn Write) -> CliResult<()> {
        if self.current.as_ref() == Some(needs) {
            return Ok(());
        }
        if self.current.is_some() {
            self.down(out);
        }
        let write_order = needs.write_order.unwrap_or(false);
        let strict_allocate = needs.strict_allocate.unwrap_or(false);
        let _ = writeln!(
            out,
            "study: lab up (--fs {} --disk {} --link {}{}{})",
            needs.fs(),
            needs.disk(),
            needs.link(),
            if write_order { " --write-order" } else { "" },
            if strict_allocate {
                " --strict-allocate"
            } else {
                ""
            }
        );
        let opts = sharebench_lab::UpOptions {
            smb_fuse: self.smb_fuse,
            ..up_options(needs).map_err(CliError::failed)?
        };
        sharebench_lab::up(&opts).map_err(|e| CliError::failed(format!("lab up: {e:#}")))?;
        self.current = Some(needs.clone());
        Ok(())
    }

    fn down(&mut self, out: &mut dyn Write) {
        if self.current.take().is_some() {
            let _ = writeln!(out, "study: lab down");
            if let Err(e) = sharebench_lab::down() {
                let _ = writeln!(
                    std::io::stderr(),
                    "sharebench: warning: lab down: {e:#}; run 'sharebench lab down'"
                );
            }
        }
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        self.down(&mut crate::stdout::stdout());
    }
}

/// Whether `step` needs the lab at this scale (`vars`: a run line's targets may be a
/// variable).
fn step_needs_lab(
    study: &Study,
    step: &Step,
    vars: &std::collections::BTreeMap<String, String>,
) -> bool {
    let names_lab = step.run.as_deref().is_some_and(|r| {
        sharebench_study::spec::substitute(r, vars)
            .unwrap_or_else(|_| r.to_string())
            .contains("lab:")
    });
    step.lab.is_some()
        || step.action.is_some()
        || names_lab
        || (study.lab.is_some() && step.run.is_none())
}

/// Refuses, before anything runs or the lab comes up, a study that cannot run here: a
/// step line `run` would refuse, several clients without MPI, the lab without root or
/// with a lab already up.
fn check_study(study: &Study, scale: &Scale) -> CliResult<()> {
    for step in &study.steps {
        if let Some(line) = &step.run {
            let line = sharebench_study::spec::substitute(line, &scale.vars)
                .map_err(|e| CliError::usage(format!("step {}: {e}", step.id)))?;
            let args = parse_run_line(&step.id, &line)?;
            run_cmd::build_plan(&args)
                .map_err(|e| CliError::usage(format!("step {}: {}", step.id, e.message)))?;
        }
    }
    let base = study.lab.clone().unwrap_or_default();
    for step in &study.steps {
        up_options(&base.merged(step.lab.as_ref()))
            .map_err(|e| CliError::usage(format!("step {}: {e}", step.id)))?;
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
    if study.needs_lab() {
        if !nix::unistd::geteuid().is_root() {
            return Err(CliError::usage(format!(
                "study {} uses the lab, which needs root",
                study.name
            )));
        }
        if sharebench_lab::state::LabState::load()
            .map_err(|e| CliError::usage(format!("{e:#}")))?
            .is_some()
        {
            return Err(CliError::usage(
                "a lab is already up; the study brings up its own: run 'sharebench lab down' first",
            ));
        }
    }
    Ok(())
}

fn run(a: StudyRunArgs) -> CliResult<()> {
    let (study, text) = sharebench_study::find(&a.study).map_err(CliError::usage)?;
    let scale = study.scale(&a.scale).map_err(CliError::usage)?.clone();
    check_study(&study, &scale)?;
    let (dir, mut st) = open_study_dir(&a, &study, &text)?;
    session::install_ctrlc();
    let started = Instant::now();
    let mut out = crate::stdout::stdout();
    let _ = writeln!(
        out,
        "study {} at scale {} (about {} min): {}",
        study.name,
        a.scale,
        scale.minutes,
        dir.display()
    );
    let mut lab = LabGuard {
        current: None,
        smb_fuse: study
            .steps
            .iter()
            .filter_map(|s| s.run.as_deref())
            .any(|r| r.contains("lab:smb-fuse")),
    };
    let base_needs = study.lab.clone().unwrap_or_default();
    let blocks = scale.blocks();
    let units = runner::schedule(&study, blocks);
    let mut stopped = false;
    for (i, unit) in units.iter().enumerate() {
        let step = unit.step;
        let saved = st.step(&step.id);
        let done = saved.is_some_and(|s| {
            matches!(s.status, StepStatus::Complete | StepStatus::Failed)
                || unit.block.is_some_and(|n| n <= s.blocks_done)
        });
        if done {
            let _ = writeln!(
                out,
                "study: step {}{} already done, kept",
                step.id,
                unit.of(blocks)
            );
            continue;
        }
        if session::cancelled() {
            stopped = true;
            break;
        }
        let sdir = match unit.block {
            None => state::step_dir(&dir, &step.id),
            Some(n) => state::block_dir(&dir, &step.id, n),
        };
        let earlier = runner::keep_cut_off_attempt(&dir, &sdir, &step.id, &mut st)
            .map_err(CliError::failed)?;
        let _ = writeln!(
            out,
            "study: step {}/{} {}{}: {}",
            i + 1,
            units.len(),
            step.id,
            unit.of(blocks),
            step.title
        );
        let needs = base_needs.merged(step.lab.as_ref());
        let t0 = Instant::now();
        let uses_lab = step_needs_lab(&study, step, &scale.vars);
        let result = (|| -> CliResult<StepStatus> {
            if uses_lab {
                lab.ensure(&needs, &mut out)?;
            }
            if let Some(s) = st.step_mut(&step.id) {
                s.status = StepStatus::Running;
                s.lab = uses_lab.then(|| needs.clone());
            }
            st.save(&dir).map_err(CliError::failed)?;
            run_step(step, &scale.vars, &sdir, earlier.as_deref(), &mut st)
        })();
        let s = st.step_mut(&step.id).expect("every step has a state");
        match unit.block {
            None => s.seconds = t0.elapsed().as_secs_f64(),
            Some(_) => s.seconds += t0.elapsed().as_secs_f64(),
        }
        match result {
            Ok(status) => runner::record_status(s, status, unit.block, blocks),
            Err(e) => {
                s.status = if e.code == 130 {
                    StepStatus::Interrupted
                } else {
                    StepStatus::Failed
                };
                s.error = Some(e.message.clone());
                let _ = writeln!(
                    std::io::stderr(),
                    "sharebench: warning: step {}{}: {}",
                    step.id,
                    unit.of(blocks),
                    e.message
                );
            }
        }
        let interrupted = s.status == StepStatus::Interrupted;
        st.save(&dir).map_err(CliError::failed)?;
        if interrupted || session::cancelled() {
            stopped = true;
            break;
        }
    }
    lab.down(&mut out);
    conclude(&dir, &mut st, stopped, started, &mut out)
}

/// Ends a study run: its outcome saved, a report written and summed up, and the exit.
fn conclude(
    dir: &Path,
    st: &mut RunState,
    stopped: bool,
    started: Instant,
    out: &mut dyn Write,
) -> CliResult<()> {
    st.ended_at = Some(chrono::Utc::now().to_rfc3339());
    st.outcome = if stopped {
        RunOutcome::Interrupted
    } else if st.steps.iter().all(|s| s.status == StepStatus::Complete) {
        RunOutcome::Complete
    } else {
        RunOutcome::Failed
    };
    st.save(dir).map_err(CliError::failed)?;

    let report_dir = runner::next_report_dir(dir);
    let evidence = sharebench_study::RunEvidence::load(dir, None).map_err(CliError::failed)?;
    let (lines, warnings) =
        sharebench_study::write_report(&[(String::from("this run"), evidence)], &report_dir)
            .map_err(CliError::failed)?;
    for w in warnings {
        let _ = writeln!(std::io::stderr(), "sharebench: warning: {w}");
    }
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(
        out,
        "Study: {} ({:.0} s)\nReport: {}",
        dir.display(),
        started.elapsed().as_secs_f64(),
        report_dir.join("report.html").display()
    );
    match st.outcome {
        RunOutcome::Interrupted => Err(CliError::interrupted(format!(
            "interrupted; the records and a report of what was measured are in {}; continue with --resume --out {}",
            dir.display(),
            dir.display()
        ))),
        RunOutcome::Failed => Err(CliError::failed(format!(
            "some steps failed (see the report's evidence table); records in {}",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// A multi-client step: `sharebench lab mpirun --np N run LINE --out SDIR`, as a child
/// process (MPI initialises once per process, and the ranks run on the lab's client hosts).
fn run_multi_client(n: u32, line: &str, sdir: &Path) -> CliResult<StepStatus> {
    let me = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find this program: {e}")))?;
    let mut args: Vec<String> = vec!["lab".into(), "mpirun".into(), "--np".into(), n.to_string()];
    args.push("run".into());
    args.extend(sharebench_study::spec::split_args(line).map_err(CliError::usage)?);
    args.push("--out".into());
    args.push(sdir.display().to_string());
    let status = std::process::Command::new(me)
        .args(&args)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::failed(format!("cannot start lab mpirun: {e}")))?;
    match status.code() {
        Some(0) => Ok(StepStatus::Complete),
        Some(130) => Ok(StepStatus::Interrupted),
        Some(1) if sdir.join("results.jsonl").exists() => Ok(StepStatus::Failed),
        Some(c) => Err(CliError::failed(format!(
            "lab mpirun --np {n} ended with exit code {c}"
        ))),
        None => Err(CliError::failed("lab mpirun was killed by a signal")),
    }
}

/// Runs one step: its `run` line (in a thread of its own, which enters the lab client's
/// namespace while this one stays on the host for the lab), and its action.
fn run_step(
    step: &sharebench_study::spec::Step,
    vars: &std::collections::BTreeMap<String, String>,
    sdir: &Path,
    earlier: Option<&Path>,
    st: &mut RunState,
) -> CliResult<StepStatus> {
    if let Some(Action::ReplicationTraffic { size, change_pct }) = &step.action {
        let size = sharebench_study::spec::substitute(size, vars).map_err(CliError::usage)?;
        let found = study_actions::replication_traffic(sdir, &step.id, &size, *change_pct)?;
        st.measurements.extend(found);
        return Ok(StepStatus::Complete);
    }
    let line = step
        .run
        .as_deref()
        .expect("validated: a step has run or action");
    let line = sharebench_study::spec::substitute(line, vars).map_err(CliError::usage)?;
    let args = parse_run_line(&step.id, &line)?;
    let mut plan = run_cmd::build_plan(&args)?;
    let mut carried = Vec::new();
    if let (Some(dir), None) = (earlier, &step.action) {
        let records = sharebench_core::record::read_jsonl(&dir.join("results.jsonl"))
            .map(|r| r.records)
            .unwrap_or_default();
        (plan.done, carried) = runner::finished_tests(&plan, records);
        if !carried.is_empty() {
            let _ = writeln!(
                crate::stdout::stdout(),
                "study: step {}: {} measurements of {} finished tests carried over from {}",
                step.id,
                carried.len(),
                plan.done.len(),
                dir.display()
            );
        }
    }
    if let Some(n) = step.clients.filter(|&n| n > 1) {
        return run_multi_client(n, &line, sdir);
    }
    let command_line: Vec<String> = ["sharebench", "run"]
        .iter()
        .map(|s| s.to_string())
        .chain(sharebench_study::spec::split_args(&line).unwrap_or_default())
        .collect();
    let failover = match &step.action {
        Some(Action::Failover {
            host,
            after_records,
        }) => Some((host.clone(), *after_records)),
        _ => None,
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let taken = std::sync::atomic::AtomicU64::new(0);
    let (result, fault) = std::thread::scope(|scope| {
        let fault = failover.as_ref().map(|(host, after)| {
            scope.spawn(|| study_actions::crash_after(host, *after, &taken, &done))
        });
        let result = scope
            .spawn(|| {
                session::execute(
                    SessionSpec {
                        plan: &plan,
                        targets: &args.targets,
                        out: Some(sdir.to_path_buf()),
                        command_line,
                        carried,
                        cluster: None,
                        remount_at: None,
                        quiet: false,
                    },
                    &mut |_| {
                        taken.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    },
                )
            })
            .join()
            .unwrap_or_else(|_| Err(CliError::failed("the step's run panicked")));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let fault = fault.map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())));
        (result, fault)
    });
    let result = result?;
    if let (Some((host, _)), Some(fault)) = (&failover, fault) {
        let found = study_actions::after_failover(&step.id, host, fault, &result.records)?;
        st.measurements.extend(found);
    }
    let s = &result.summary;
    Ok(if s.interrupted {
        StepStatus::Interrupted
    } else if s.all_ok() {
        StepStatus::Complete
    } else {
        StepStatus::Failed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_study_asks_for_labs_that_lab_up_accepts() {
        for (name, _) in sharebench_study::BUILTIN {
            let (study, _) = sharebench_study::find(name).unwrap();
            let base = study.lab.clone().unwrap_or_default();
            for step in &study.steps {
                let needs = base.merged(step.lab.as_ref());
                let opts = up_options(&needs).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(opts.link.name(), needs.link(), "{name}");
            }
        }
        let bad = LabNeeds {
            link: Some("3mbit".into()),
            ..Default::default()
        };
        assert!(up_options(&bad)
            .unwrap_err()
            .contains("unknown --link '3mbit'"));
    }

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
