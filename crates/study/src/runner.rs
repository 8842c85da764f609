//! The study runner's bookkeeping: the order a study's units run in (alternating
//! blocks), a unit's outcome in its step's state, what an interrupted attempt finished and
//! where it is kept, where the next report goes. Not: running anything (`run` does).

use crate::spec::{Step, Study};
use crate::state::{RunState, StepState, StepStatus};
use sharebench_core::engine;
use sharebench_core::plan::Plan;
use sharebench_core::record::Record;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One run of a study: a step, or one block of a step that alternates.
pub struct Unit<'a> {
    pub step: &'a Step,
    pub block: Option<u32>,
}

impl Unit<'_> {
    /// " (block 2 of 3)", or nothing for a step that does not alternate.
    pub fn of(&self, blocks: u32) -> String {
        self.block
            .map(|n| format!(" (block {n} of {blocks})"))
            .unwrap_or_default()
    }
}

/// The study's steps in the order they run: each in its place, except that the steps of
/// an alternation run in turns where the first of them stands, block by block (A, B, A,
/// B, ...), so that what drifts on the machine lands on each of them alike.
pub fn schedule(study: &Study, blocks: u32) -> Vec<Unit<'_>> {
    let alternations = study.alternations();
    let mut units = Vec::new();
    let mut started = BTreeSet::new();
    for step in &study.steps {
        match step.alternate.as_deref() {
            None => units.push(Unit { step, block: None }),
            Some(name) if started.insert(name) => {
                for n in 1..=blocks {
                    for &member in &alternations[name] {
                        units.push(Unit {
                            step: member,
                            block: Some(n),
                        });
                    }
                }
            }
            Some(_) => {}
        }
    }
    units
}

/// A unit's outcome in its step's state: a step that alternates is complete (or failed,
/// when a block had failed measurements) after its last block, and running until then.
pub fn record_status(s: &mut StepState, status: StepStatus, block: Option<u32>, blocks: u32) {
    let Some(n) = block else {
        s.status = status;
        s.error = None;
        return;
    };
    match status {
        StepStatus::Complete | StepStatus::Failed => {
            s.blocks_done = n;
            if status == StepStatus::Failed {
                s.error = Some(format!("block {n}: some measurements failed"));
            }
            s.status = if n < blocks {
                StepStatus::Running
            } else if s.error.is_some() {
                StepStatus::Failed
            } else {
                StepStatus::Complete
            };
        }
        other => s.status = other,
    }
}

/// The tests an interrupted attempt finished, and their records. Records are written in
/// the engine's order (repetitions, then cells, then targets), so every test before the
/// last one that appears is complete; the last may have been cut off and runs again.
pub fn finished_tests(
    plan: &Plan,
    records: Vec<Record>,
) -> (BTreeSet<(u32, String, usize)>, Vec<Record>) {
    let key = |r: &Record| engine::unit_of(plan, r).map(|c| (r.rep, r.target.clone(), c));
    let Some(last) = records.iter().rev().find_map(key) else {
        return Default::default();
    };
    let kept: Vec<_> = records
        .into_iter()
        .filter(|r| key(r).is_some_and(|k| k != last))
        .collect();
    let done = kept.iter().filter_map(key).collect();
    (done, kept)
}

/// A cut-off attempt of a step: kept beside, never overwritten (`STEP.attempt-N`), and
/// returned so that its finished tests are carried into the new attempt.
pub fn keep_cut_off_attempt(
    dir: &Path,
    sdir: &Path,
    step: &str,
    st: &mut RunState,
) -> Result<Option<PathBuf>, String> {
    if !sdir.exists() {
        return Ok(None);
    }
    let n = st.step(step).map_or(0, |s| s.attempts.len()) + 1;
    let mut name = sdir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".attempt-{n}"));
    let kept = sdir.with_file_name(name);
    std::fs::rename(sdir, &kept).map_err(|e| format!("cannot keep {}: {e}", sdir.display()))?;
    if let Some(s) = st.step_mut(step) {
        let shown = kept.strip_prefix(dir).unwrap_or(&kept);
        s.attempts.push(shown.display().to_string());
    }
    Ok(Some(kept))
}

/// `report`, or `report-2`, ... when a resumed run already wrote one.
pub fn next_report_dir(dir: &Path) -> PathBuf {
    let first = dir.join("report");
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| dir.join(format!("report-{n}")))
        .find(|p| !p.exists())
        .expect("some report-N is free")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sharebench_core::op::Op;
    use sharebench_core::plan::Cell;

    const STEPS: &str = r#"
name = "t"
title = "T"
seed = "s.txt"
question = "Q?"
about = "A"
[scales.tiny]
minutes = 1
vars = {}
[[steps]]
id = "a"
title = "A"
run = "/tmp -i write"
[[steps]]
id = "b"
title = "B"
run = "/tmp -i write"
alternate = "g"
[[steps]]
id = "c"
title = "C"
run = "/tmp -i write"
[[steps]]
id = "d"
title = "D"
run = "/tmp -i write"
alternate = "g"
"#;

    #[test]
    fn alternating_steps_run_in_turns_where_the_first_stands() {
        let study = Study::parse(STEPS).unwrap();
        let order: Vec<String> = schedule(&study, 2)
            .iter()
            .map(|u| format!("{}{}", u.step.id, u.of(2)))
            .collect();
        assert_eq!(
            order,
            [
                "a",
                "b (block 1 of 2)",
                "d (block 1 of 2)",
                "b (block 2 of 2)",
                "d (block 2 of 2)",
                "c"
            ]
        );
    }

    #[test]
    fn an_alternating_step_ends_with_its_last_block_and_keeps_a_failed_one() {
        let mut s = StepState::pending("b");
        record_status(&mut s, StepStatus::Failed, Some(1), 2);
        assert_eq!((s.status, s.blocks_done), (StepStatus::Running, 1));
        record_status(&mut s, StepStatus::Complete, Some(2), 2);
        assert_eq!((s.status, s.blocks_done), (StepStatus::Failed, 2));
        assert_eq!(
            s.error.as_deref(),
            Some("block 1: some measurements failed")
        );
        // A step that does not alternate takes its run's status, and an old error goes.
        record_status(&mut s, StepStatus::Complete, None, 2);
        assert_eq!((s.status, s.error), (StepStatus::Complete, None));
    }

    #[test]
    fn resume_keeps_every_test_but_the_last_one_begun() {
        let cells = vec![
            Cell {
                file_size: 1 << 20,
                record_size: 4096,
            },
            Cell {
                file_size: 1 << 20,
                record_size: 65536,
            },
        ];
        let plan = Plan {
            cells: cells.clone(),
            ..Plan::default()
        };
        let rec = |rep, target: &str, cell: usize, op: Op| Record {
            rep,
            target: target.into(),
            op: op.into(),
            file_size: cells[cell].file_size,
            record_size: cells[cell].record_size,
            ..Record::default()
        };
        let records = vec![
            rec(0, "a", 0, Op::Write),
            rec(0, "a", 0, Op::Read),
            rec(0, "a", 1, Op::Write),
            rec(0, "a", 1, Op::Read),
            rec(0, "b", 0, Op::Write),
        ];
        let (done, kept) = finished_tests(&plan, records);
        assert_eq!(kept.len(), 4);
        assert_eq!(
            done.into_iter().collect::<Vec<_>>(),
            vec![(0, "a".to_string(), 0), (0, "a".to_string(), 1)]
        );
        assert!(finished_tests(&plan, Vec::new()).0.is_empty());
    }
}
