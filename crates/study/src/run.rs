//! Running a study whose run lines are already plans: the lab brought up as each step needs
//! it, each step run as an ordinary `sharebench run` into `steps/ID/` (or under `lab
//! mpirun` on several clients), its action taken (failover, replication traffic),
//! `study.json` saved after every step, the lab taken down and the report written. Ctrl-C
//! stops after the current measurement, keeps every record and reports what was measured;
//! a cut-off step's finished tests are carried over when it runs again. Not: reading the
//! study or its run lines (the CLI parses them, once, into [`StepRun`]s), or the verdicts
//! (`check`).

use crate::actions;
use crate::lab_guard::{LabGuard, LabServices};
use crate::roles::{self, Mapping, Play};
use crate::runner;
use crate::spec::{Action, Scale, Step, Study};
use crate::state::{self, RunState, StepStatus};
use sharebench_core::manifest::RunOutcome;
use sharebench_core::plan::Plan;
use sharebench_session::error::{CliError, CliResult};
use sharebench_session::{self as session, SessionSpec};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// A step's `run` line, parsed and checked when the study was read, with its roles'
/// targets in place: what the step runs.
pub struct StepRun {
    /// The line with the scale's values in place: the run's recorded command line.
    pub line: String,
    pub targets: Vec<String>,
    /// The names the records give the targets (the step's roles, or the targets' own).
    pub names: Vec<String>,
    /// Whether the lab must be up for it.
    pub lab: bool,
    /// One role at a time, in alternating blocks (`--switch`): `steps/ID/block-N/ROLE/`.
    pub one_at_a_time: bool,
    pub plan: Plan,
}

/// What a study run does with each of its steps.
pub enum StepPlan {
    Run(Box<StepRun>),
    /// A step that only takes an action: the lab's, or on the user's system (`mapped`: its
    /// role's target) through the user's hooks.
    Action {
        mapped: Option<String>,
    },
    /// Not run in this run, and why (an unmapped role, a step only the lab can run).
    NotRun(String),
}

/// The lab's optional services a study's plans need: smbnetfs only when a step measures
/// `lab:smb-fuse`; GlusterFS when a step measures a Gluster target or takes an action in
/// the lab (replication traffic; a failover, whose recovery waits for the replicated
/// volume's heal whatever the step measures). Decided from the planned targets, so a role
/// the lab plays counts as the lab target it plays it with.
fn lab_services(steps: &[Step], runs: &[StepPlan]) -> LabServices {
    let mut targets = runs
        .iter()
        .filter_map(|r| match r {
            StepPlan::Run(s) => Some(&s.targets),
            _ => None,
        })
        .flatten();
    let lab_action = steps.iter().zip(runs).any(|(step, r)| match r {
        StepPlan::Run(s) => s.lab && matches!(step.action, Some(Action::Failover { .. })),
        StepPlan::Action { mapped } => mapped.is_none(),
        StepPlan::NotRun(_) => false,
    });
    LabServices {
        smb_fuse: targets.clone().any(|t| t == "lab:smb-fuse"),
        gluster: lab_action || targets.any(|t| t.starts_with("lab:gluster")),
    }
}

impl StepPlan {
    /// Whether the lab must be up for it.
    fn uses_lab(&self) -> bool {
        match self {
            StepPlan::Run(r) => r.lab,
            StepPlan::Action { mapped } => mapped.is_none(),
            StepPlan::NotRun(_) => false,
        }
    }
}

/// A study ready to run: read and checked, every run line a plan, its directory made (or,
/// resumed, reopened) with the state saved there.
pub struct Prepared<'a> {
    pub study: &'a Study,
    pub scale: &'a Scale,
    /// One for each of the study's steps, in order.
    pub runs: Vec<StepPlan>,
    pub dir: PathBuf,
    pub state: RunState,
}

/// Parses a step's run line as `sharebench run` parses its arguments: its targets and
/// its plan.
pub type ParseRunLine = dyn Fn(&Step, &str) -> CliResult<(Vec<String>, Plan)>;

/// Every step's plan, made once before anything runs or the lab comes up: its run line
/// with the scale's values in place, parsed by `parse` (as `sharebench run` parses its
/// arguments: a typo in the last step is refused before the first runs; a step of roles
/// is parsed with its roles for targets, and its line must name none), its targets those
/// `mapping` gives its roles, or why it is not run. Refused here too: a lab that cannot
/// come up for the steps that need it.
pub fn plan(
    study: &Study,
    scale: &Scale,
    mapping: &Mapping,
    parse: &ParseRunLine,
) -> CliResult<Vec<StepPlan>> {
    let mut runs = Vec::with_capacity(study.steps.len());
    for step in &study.steps {
        let Some(line) = &step.run else {
            runs.push(match roles::play(study, step, &[], mapping) {
                Play::NotRun(why) => StepPlan::NotRun(why),
                Play::Run { targets, lab, .. } => StepPlan::Action {
                    mapped: targets.into_iter().next().filter(|_| !lab),
                },
            });
            continue;
        };
        let line = crate::spec::substitute(line, &scale.var_texts())
            .map_err(|e| CliError::usage(format!("step {}: {e}", step.id)))?;
        let (line_targets, plan) = parse(step, &format!("{} {line}", step.targets.join(" ")))?;
        if !step.targets.is_empty() && line_targets != step.targets {
            return Err(CliError::usage(format!(
                "step {}: its targets are its roles ({}); its run line names none",
                step.id,
                step.targets.join(", ")
            )));
        }
        runs.push(match roles::play(study, step, &line_targets, mapping) {
            Play::NotRun(why) => StepPlan::NotRun(why),
            Play::Run {
                names,
                targets,
                lab,
                one_at_a_time,
            } => {
                let (line, plan) = own_cache_on_mounts(&targets, line, plan);
                StepPlan::Run(Box::new(StepRun {
                    // As the user would type it: the roles' targets in place.
                    line: match step.targets.is_empty() {
                        true => line,
                        false => format!("{} {line}", targets.join(" ")),
                    },
                    targets,
                    names,
                    lab,
                    one_at_a_time,
                    plan,
                }))
            }
        });
    }
    let uses_lab = runs.iter().any(StepPlan::uses_lab);
    crate::lab_guard::check(study, uses_lab)?;
    Ok(runs)
}

/// A step's bounded client cache (`--client-cache`) stands in for a kernel client's page
/// cache on the lab's native clients; a role mapped to a directory (a kernel or FUSE mount)
/// has that cache itself, so the step runs there without the option, as the user's
/// clients do.
fn own_cache_on_mounts(targets: &[String], line: String, mut plan: Plan) -> (String, Plan) {
    let on_a_mount = targets
        .iter()
        .any(|t| !t.contains("://") && !t.starts_with("lab:"));
    if plan.client_cache.is_none() || !on_a_mount {
        return (line, plan);
    }
    plan.client_cache = None;
    let mut words = line.split_whitespace();
    let mut kept = Vec::new();
    while let Some(w) = words.next() {
        if w == "--client-cache" {
            words.next();
        } else if !w.starts_with("--client-cache=") {
            kept.push(w);
        }
    }
    (kept.join(" "), plan)
}

/// Runs every step not yet done, then ends the run: outcome saved, report written and
/// summed up on `out`. The error says how the run ended when it did not complete.
pub fn run(p: Prepared, out: &mut dyn Write) -> CliResult<()> {
    let Prepared {
        study,
        scale,
        runs,
        dir,
        state: mut st,
    } = p;
    assert_eq!(runs.len(), study.steps.len(), "one run (or none) per step");
    let started = Instant::now();
    let mapping = st.mapping.clone();
    let mut lab = LabGuard::new(lab_services(&study.steps, &runs));
    let base_needs = study.lab.clone().unwrap_or_default();
    let blocks = scale.blocks();
    let units = runner::schedule(study, blocks);
    let mut stopped = false;
    for (i, unit) in units.iter().enumerate() {
        let step = unit.step;
        let done = st.step(&step.id).is_some_and(|s| {
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
        let k = study
            .steps
            .iter()
            .position(|s| s.id == step.id)
            .expect("a unit is one of the study's steps");
        if let StepPlan::NotRun(why) = &runs[k] {
            // Said once, not once a block.
            if unit.block.unwrap_or(1) == 1 {
                not_run(&step.id, why, &mut st, &dir, out)?;
            }
            continue;
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
        let uses_lab = runs[k].uses_lab();
        let result = (|| -> CliResult<StepStatus> {
            if uses_lab {
                lab.ensure(&needs, out)?;
            }
            if let Some(s) = st.step_mut(&step.id) {
                s.status = StepStatus::Running;
                s.lab = uses_lab.then(|| needs.clone());
            }
            st.save(&dir).map_err(CliError::failed)?;
            let at = StepAt {
                sdir: &sdir,
                earlier: earlier.as_deref(),
                vars: &scale.var_texts(),
                blocks,
                mapping: &mapping,
            };
            run_step(step, &runs[k], at, &mut st, out)
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
    lab.down(out);
    conclude(&dir, &mut st, stopped, started, out)
}

/// A step this run does not run: said, and kept in the state with why.
fn not_run(
    id: &str,
    why: &str,
    st: &mut RunState,
    dir: &Path,
    out: &mut dyn Write,
) -> CliResult<()> {
    let _ = writeln!(out, "study: step {id}: not run: {why}");
    if let Some(s) = st.step_mut(id) {
        s.status = StepStatus::NotRun;
        s.error = Some(why.to_string());
    }
    st.save(dir).map_err(CliError::failed)
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
    } else if st
        .steps
        .iter()
        .all(|s| matches!(s.status, StepStatus::Complete | StepStatus::NotRun))
    {
        RunOutcome::Complete
    } else {
        RunOutcome::Failed
    };
    st.save(dir).map_err(CliError::failed)?;

    let report_dir = runner::next_report_dir(dir);
    let evidence = crate::RunEvidence::load(dir, None).map_err(CliError::failed)?;
    let (lines, warnings) =
        crate::write_report(&[(String::from("this run"), evidence)], &report_dir)
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

/// A multi-client step: `sharebench run --plan-file FILE TARGETS --out SDIR` on N clients
/// at once, as a child process (MPI initialises once per process): on the lab's client
/// hosts through `sharebench lab mpirun`, or on the user's machines through `mpirun
/// --hostfile` (`study run --hostfile`). The ranks get the step's plan as data, written
/// beside its directory, not its line to parse again; a cut-off attempt is measured again
/// whole.
fn run_multi_client(
    n: u32,
    r: &StepRun,
    sdir: &Path,
    hostfile: Option<&Path>,
) -> CliResult<StepStatus> {
    let me = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find this program: {e}")))?;
    let name = sdir.file_name().unwrap_or_default().to_string_lossy();
    let plan_path = sdir.with_file_name(format!("{name}.plan.json"));
    sharebench_core::plan_file::write(&plan_path, &r.plan).map_err(CliError::failed)?;
    let mut run: Vec<String> = vec!["run".into(), "--plan-file".into()];
    run.push(plan_path.display().to_string());
    if r.names != r.targets {
        run.push("--target-names".into());
        run.push(r.names.join(","));
    }
    run.extend(r.targets.iter().cloned());
    run.push("--out".into());
    run.push(sdir.display().to_string());
    let (mut cmd, how) = match (r.lab, hostfile) {
        (false, Some(hosts)) => {
            let mut c = std::process::Command::new("mpirun");
            if nix::unistd::geteuid().is_root() {
                c.arg("--allow-run-as-root");
            }
            c.arg("--hostfile").arg(hosts).args(["-np", &n.to_string()]);
            c.arg(&me).args(&run);
            // Ranks on one machine share memory through vader, whose single-copy mode
            // many containers refuse; across machines it is not used.
            if std::env::var_os("OMPI_MCA_btl_vader_single_copy_mechanism").is_none() {
                c.env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
            }
            (c, "mpirun --hostfile")
        }
        _ => {
            let mut c = std::process::Command::new(&me);
            c.args(["lab", "mpirun", "--np", &n.to_string()]).args(&run);
            (c, "lab mpirun")
        }
    };
    let status = cmd
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::failed(format!("cannot start {how}: {e}")))?;
    match status.code() {
        Some(0) => Ok(StepStatus::Complete),
        Some(130) => Ok(StepStatus::Interrupted),
        Some(1) if sdir.join("results.jsonl").exists() => Ok(StepStatus::Failed),
        Some(c) => Err(CliError::failed(format!(
            "{how} -np {n} ended with exit code {c}"
        ))),
        None => Err(CliError::failed(format!("{how} was killed by a signal"))),
    }
}

/// Where a step runs: its directory, the cut-off attempt kept from before (if any), the
/// scale's values (an action's sizes may be variables) and blocks, and the user's hooks
/// and switches.
struct StepAt<'a> {
    sdir: &'a Path,
    earlier: Option<&'a Path>,
    vars: &'a BTreeMap<String, String>,
    blocks: u32,
    /// The user's hooks, switches and hostfile.
    mapping: &'a Mapping,
}

/// A step whose roles cannot be mounted at once (`--switch`): block by block, each role in
/// turn, after its switch command (kept as `block-N/ROLE.switch.log`), measured alone into
/// `steps/ID/block-N/ROLE/`. Its comparisons take the blocks as replicates (`load_step`).
fn run_one_at_a_time(
    step: &Step,
    r: &StepRun,
    at: &StepAt,
    out: &mut dyn Write,
) -> CliResult<StepStatus> {
    let mut status = StepStatus::Complete;
    for n in 1..=at.blocks {
        let bdir = at.sdir.join(format!("block-{n}"));
        std::fs::create_dir_all(&bdir)
            .map_err(|e| CliError::failed(format!("cannot make {}: {e}", bdir.display())))?;
        for (name, target) in r.names.iter().zip(&r.targets) {
            if session::cancelled() {
                return Ok(StepStatus::Interrupted);
            }
            if let Some(command) = at.mapping.switches.get(name) {
                let log = bdir.join(format!("{name}.switch.log"));
                crate::hooks::run(
                    &format!("switch {name}"),
                    command,
                    &log,
                    crate::hooks::LIMIT,
                )
                .map_err(CliError::failed)?;
            }
            let _ = writeln!(
                out,
                "study: step {}: block {n} of {}: {name}",
                step.id, at.blocks
            );
            let mut command_line = vec!["sharebench".to_string(), "run".to_string()];
            command_line.push(target.clone());
            command_line.extend(
                crate::spec::split_args(&r.line)
                    .unwrap_or_default()
                    .into_iter()
                    .skip(r.targets.len()),
            );
            let server_cpu = crate::hooks::server_cpu(at.mapping, std::slice::from_ref(name));
            let result = session::execute(
                SessionSpec {
                    plan: &r.plan,
                    targets: std::slice::from_ref(target),
                    names: std::slice::from_ref(name),
                    out: Some(bdir.join(name)),
                    command_line,
                    carried: Vec::new(),
                    cluster: None,
                    remount_at: None,
                    worker_dirs: &[],
                    server_cpu: &server_cpu,
                    quiet: false,
                },
                &mut |_| {},
            )?;
            if result.summary.interrupted {
                return Ok(StepStatus::Interrupted);
            }
            if !result.summary.all_ok() {
                status = StepStatus::Failed;
            }
        }
    }
    Ok(status)
}

/// Who takes a replica down mid-run and brings it back: the lab (kills and restarts
/// `host`, waits for the heal), or on the user's system their `failover` and `restore`
/// hooks, whose output is kept beside the step's directory (`ID.hook-NAME.log`).
enum Failover {
    Lab {
        host: String,
    },
    Hooks {
        hooks: BTreeMap<String, String>,
        sdir: PathBuf,
    },
}

impl Failover {
    /// A failover step's: by the lab on its own targets, else by the user's hooks; with
    /// the records the run takes before it.
    fn of(step: &Step, r: &StepRun, at: &StepAt) -> Option<(Failover, u64)> {
        let Some(Action::Failover {
            host,
            after_records,
        }) = &step.action
        else {
            return None;
        };
        let by = match r.lab {
            true => Failover::Lab { host: host.clone() },
            false => Failover::Hooks {
                hooks: at.mapping.hooks.clone(),
                sdir: at.sdir.to_path_buf(),
            },
        };
        Some((by, *after_records))
    }

    fn hook(hooks: &BTreeMap<String, String>, sdir: &Path, name: &str) -> Result<f64, String> {
        let command = hooks
            .get(name)
            .ok_or_else(|| format!("no --hook {name}=... given"))?;
        let step = sdir.file_name().unwrap_or_default().to_string_lossy();
        let log = sdir.with_file_name(format!("{step}.hook-{name}.log"));
        crate::hooks::run(name, command, &log, crate::hooks::LIMIT)
    }

    fn crash(&self) -> Result<String, String> {
        match self {
            Failover::Lab { host } => actions::kill_host(host),
            Failover::Hooks { hooks, sdir } => Self::hook(hooks, sdir, "failover")
                .map(|s| format!("the failover hook ran ({s:.1} s)")),
        }
    }

    fn recover(&self) -> CliResult<String> {
        match self {
            Failover::Lab { host } => actions::restart_and_heal(host),
            Failover::Hooks { hooks, sdir } => Self::hook(hooks, sdir, "restore")
                .map(|_| "from starting the restore hook until it returned".into())
                .map_err(CliError::failed),
        }
    }
}

/// The replication-traffic step's figures: the lab's wire, or on the user's replicated
/// share (`mapped`, its role's target) their hooks'.
fn replication_traffic(
    step: &str,
    mapped: Option<&str>,
    at: &StepAt,
    size: &str,
    change_pct: f64,
) -> CliResult<Vec<crate::check::Measurement>> {
    let Some(target) = mapped else {
        return actions::replication_traffic(at.sdir, step, size, change_pct);
    };
    let on = crate::replication_hooks::Replicas {
        target,
        hooks: &at.mapping.hooks,
        sdir: at.sdir,
    };
    crate::replication_hooks::traffic(&on, step, size, change_pct)
}

/// Runs one step: its run (in a thread of its own, beside the failover's if it has one),
/// and its action.
fn run_step(
    step: &Step,
    step_plan: &StepPlan,
    at: StepAt,
    st: &mut RunState,
    out: &mut dyn Write,
) -> CliResult<StepStatus> {
    if let Some(Action::ReplicationTraffic { size, change_pct }) = &step.action {
        let mapped = match step_plan {
            StepPlan::Action { mapped } => mapped.as_deref(),
            _ => None,
        };
        let size = crate::spec::substitute(size, at.vars).map_err(CliError::usage)?;
        st.measurements.extend(replication_traffic(
            &step.id,
            mapped,
            &at,
            &size,
            *change_pct,
        )?);
        return Ok(StepStatus::Complete);
    }
    let StepPlan::Run(r) = step_plan else {
        return Err(CliError::failed(format!(
            "step {}: no run line to run",
            step.id
        )));
    };
    if let Some(n) = step.clients.filter(|&n| n > 1) {
        // Its ranks measure a cut-off attempt again whole: nothing is carried over.
        return run_multi_client(n, r, at.sdir, at.mapping.hostfile.as_deref());
    }
    if r.one_at_a_time {
        // Measured again whole after a cut-off, too: its blocks belong together.
        return run_one_at_a_time(step, r, &at, out);
    }
    let mut plan = r.plan.clone();
    let mut carried = Vec::new();
    if let (Some(dir), None) = (at.earlier, &step.action) {
        let records = sharebench_core::record::read_jsonl(&dir.join("results.jsonl"))
            .map(|r| r.records)
            .unwrap_or_default();
        (plan.done, carried) = runner::finished_tests(&plan, records);
        if !carried.is_empty() {
            let _ = writeln!(
                out,
                "study: step {}: {} measurements of {} finished tests carried over from {}",
                step.id,
                carried.len(),
                plan.done.len(),
                dir.display()
            );
        }
    }
    let command_line: Vec<String> = ["sharebench", "run"]
        .iter()
        .map(|s| s.to_string())
        .chain(crate::spec::split_args(&r.line).unwrap_or_default())
        .collect();
    let failover = Failover::of(step, r, &at);
    let server_cpu = crate::hooks::server_cpu(at.mapping, &r.names);
    let done = AtomicBool::new(false);
    let taken = AtomicU64::new(0);
    let (result, fault) = std::thread::scope(|scope| {
        let fault = failover.as_ref().map(|(by, after)| {
            scope.spawn(|| actions::crash_after(*after, &taken, &done, || by.crash()))
        });
        let result = scope
            .spawn(|| {
                session::execute(
                    SessionSpec {
                        plan: &plan,
                        targets: &r.targets,
                        names: &r.names,
                        out: Some(at.sdir.to_path_buf()),
                        command_line,
                        carried,
                        cluster: None,
                        remount_at: None,
                        worker_dirs: &[],
                        server_cpu: &server_cpu,
                        quiet: false,
                    },
                    &mut |_| {
                        taken.fetch_add(1, Ordering::SeqCst);
                    },
                )
            })
            .join()
            .unwrap_or_else(|_| Err(CliError::failed("the step's run panicked")));
        done.store(true, Ordering::SeqCst);
        let fault = fault.map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())));
        (result, fault)
    });
    let result = result?;
    if let (Some((by, _)), Some(fault)) = (&failover, fault) {
        let found = actions::after_failover(&step.id, fault, &result.records, || by.recover())?;
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
    fn gluster_only_for_a_lab_action_or_a_gluster_target() {
        let (study, _) = crate::find("dfs-nfs-vs-smb").unwrap();
        let steps = &study.steps;
        let mut plans: Vec<StepPlan> = steps
            .iter()
            .map(|_| StepPlan::NotRun("unmapped".into()))
            .collect();
        assert!(!lab_services(steps, &plans).gluster);
        let traffic = steps
            .iter()
            .position(|s| s.id == "replication-traffic")
            .unwrap();
        plans[traffic] = StepPlan::Action {
            mapped: Some("/mnt/filer".into()),
        };
        assert!(
            !lab_services(steps, &plans).gluster,
            "an action on the user's system"
        );
        plans[traffic] = StepPlan::Action { mapped: None };
        assert!(lab_services(steps, &plans).gluster, "an action in the lab");
    }

    #[test]
    fn smbnetfs_only_for_a_step_measuring_it_as_target_or_role() {
        let (study, _) = crate::find("dfs-nfs-vs-smb").unwrap();
        let steps = &study.steps;
        let run = |targets: &[&str]| {
            StepPlan::Run(Box::new(StepRun {
                line: String::new(),
                targets: targets.iter().map(|t| t.to_string()).collect(),
                names: vec!["nfs".into(), "smb".into()],
                lab: true,
                one_at_a_time: false,
                plan: Plan::default(),
            }))
        };
        let mut plans: Vec<StepPlan> = steps
            .iter()
            .map(|_| run(&["lab:nfs4", "lab:smb"]))
            .collect();
        assert!(!lab_services(steps, &plans).smb_fuse);
        // A role the lab plays with its FUSE mount: the plan's target, not the line, says so.
        plans[0] = run(&["lab:nfs4", "lab:smb-fuse"]);
        let s = lab_services(steps, &plans);
        assert!(s.smb_fuse);
        assert!(s.gluster, "its failover step runs in the lab");
    }

    #[test]
    fn a_mount_keeps_its_own_cache_and_a_native_client_the_bounded_one() {
        let plan = Plan {
            client_cache: Some(2 << 20),
            ..Plan::default()
        };
        let line = "-w metadata --client-cache 2m --reps 1".to_string();
        let mount = ["/mnt/filer".to_string()];
        let (l, p) = own_cache_on_mounts(&mount, line.clone(), plan.clone());
        assert_eq!((l.as_str(), p.client_cache), ("-w metadata --reps 1", None));
        for native in ["lab:nfs3", "nfs://127.0.0.1/x?version=3"] {
            let (l, p) = own_cache_on_mounts(&[native.to_string()], line.clone(), plan.clone());
            assert_eq!((l, p.client_cache), (line.clone(), Some(2 << 20)));
        }
    }
}
