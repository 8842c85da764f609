//! The metadata, smallfiles and stream workloads as the engine schedules them: one whole
//! test per repetition and target (and the checks and endings the load workload's points
//! share with them), after a check that the target has the inodes and space
//! the test needs. In a multi-client run every rank runs the same test on its own files,
//! each measurement starting together (`WorkloadRun::start_together`), and a target any
//! rank cannot use is given up by all. Not: the tests themselves (their own modules).

use super::iozone::PassError;
use super::{End, Runner, WorkloadRun};
use crate::operation::Operation;
use crate::plan::{Plan, Workload, WHOLE_TEST};
use crate::ranks::{Go, Ready};
use crate::record::{Record, Status};
use crate::run::Target;
use std::io;

/// The runner of every workload that is one whole test.
pub struct WholeTest;

/// Checks up front that a target has the inodes and space the workload needs.
pub fn preflight(plan: &Plan, target: &Target) -> Result<(), String> {
    let Some((inodes, bytes)) = plan.needs() else {
        return Ok(());
    };
    super::check_space(target.backend.as_ref(), &target.workdir.path, inodes, bytes)
        .map_err(|e| format!("{}: {} workload: {e}", target.name, plan.workload.name()))
}

impl Runner for WholeTest {
    fn units(&self, _plan: &Plan) -> Vec<usize> {
        vec![WHOLE_TEST]
    }

    fn unit_of(&self, _plan: &Plan, _record: &Record) -> Option<usize> {
        Some(WHOLE_TEST)
    }

    /// Every rank checks its target; all go on, or all give it up with a failed record.
    fn preflight(&self, w: &mut WorkloadRun) -> io::Result<End> {
        let checked = preflight(w.plan, w.target);
        let ready = match &checked {
            Ok(()) => Ready::Yes,
            Err(why) => Ready::No(why.clone()),
        };
        let why = match (checked, w.ranks.start(ready)?) {
            (_, Go::Interrupted) => return Ok(End::Interrupted),
            (_, Go::Stop(why)) | (Err(why), Go::On) => why,
            (Ok(()), Go::On) => return Ok(End::Done),
        };
        let mut r = w.record(Operation::Preflight, &super::now_rfc3339());
        r.status = Status::Failed;
        r.error = Some(why.clone());
        if let Err(PassError::Io(e)) = w.emit(&r) {
            return Err(e);
        }
        Ok(End::TargetFailed(why))
    }

    fn run(&self, w: &mut WorkloadRun, _unit: usize) -> io::Result<End> {
        let ran = match &w.plan.workload {
            Workload::Iozone | Workload::Load(_) => Ok(()),
            Workload::Metadata(p) => super::metadata::run(w, p),
            Workload::Smallfiles(p) => super::smallfiles::run(w, p),
            Workload::Stream(p) => super::stream::run(w, p),
        };
        conclude(w, ran)
    }
}

/// Ends a unit: gathers its records across ranks, and turns an error into a failed record
/// (the operation under way named) and the target given up on every rank.
pub fn conclude(w: &mut WorkloadRun, ran: Result<(), PassError>) -> io::Result<End> {
    match ran.and_then(|()| w.settle(Ready::Yes)) {
        Ok(()) => Ok(End::Done),
        Err(PassError::Interrupted) => {
            w.abandon(Ready::Interrupted)?;
            Ok(End::Interrupted)
        }
        Err(PassError::Io(e)) => {
            let mut r = w.record(w.phase, &super::now_rfc3339());
            r.status = Status::Failed;
            r.error = Some(match &w.phase_detail {
                Some(detail) => format!("{detail}: {e}"),
                None => e.to_string(),
            });
            match w.emit(&r) {
                Ok(()) | Err(PassError::Interrupted) => {}
                Err(PassError::Io(e)) => return Err(e),
            }
            w.abandon(Ready::No(e.to_string()))?;
            Ok(End::TargetFailed(e.to_string()))
        }
    }
}
