//! Warnings when a measurement cannot be trusted, one per label and operation with
//! counts and the worst example, grouped by kind for the report (one line a kind): too short to time well (< 10 ms), high variation (CV >
//! 10%), outliers among repetitions, a single repetition (no interval, no test), records
//! that failed, measurements disturbed by other guests or processes, and cells `--reps
//! auto` stopped at a cap before their interval was narrow enough. Not: differences between labels (see `findings`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{WarnKind, Warning, WarningGroup};

use crate::format;
use crate::model::{OpData, Source};
use sharebench_core::record::{Record, Status};
use sharebench_core::sampling::{capped_reach, unit_key};
use std::collections::BTreeMap;

/// Measurements shorter than this are too short for the clock and the scheduler.
pub const MIN_SECONDS: f64 = 0.01;
/// Run-to-run variation above this is flagged.
pub const MAX_CV_PCT: f64 = 10.0;

/// Warnings grouped by kind, kinds in order of gravity, each group's worst first.
pub fn grouped(warnings: &[Warning]) -> Vec<WarningGroup<'_>> {
    let mut groups: Vec<WarningGroup> = Vec::new();
    for w in warnings {
        match groups.iter_mut().find(|g| g.kind == w.kind) {
            Some(g) => g.items.push(w),
            None => groups.push(WarningGroup {
                kind: w.kind,
                items: vec![w],
            }),
        }
    }
    groups.sort_by_key(|g| g.kind);
    for g in &mut groups {
        g.items.sort_by_key(|w| std::cmp::Reverse(w.affected));
    }
    groups
}

/// Multi-client runs whose ranks ran on hosts that are not alike.
pub fn hosts_differ(sources: &[Source]) -> Vec<Warning> {
    sources
        .iter()
        .filter_map(|s| {
            let text = crate::env::rank_hosts(&s.manifest.as_ref()?.hosts)?;
            let list = text.strip_prefix("DIFFER: ")?;
            Some(Warning {
                kind: WarnKind::HostsDiffer,
                label: s.label.clone(),
                op: None,
                text: format!(
                    "the clients of this multi-client run ran on hosts that differ: {list}"
                ),
                affected: 1,
            })
        })
        .collect()
}

pub fn collect(ops: &[OpData], labels: &[String], records: &[Record]) -> Vec<Warning> {
    let mut out = Vec::new();
    for label in labels {
        let bad: Vec<&Record> = records
            .iter()
            .filter(|r| &r.target == label && r.status != Status::Ok)
            .collect();
        if let Some(first) = bad.first() {
            out.push(Warning {
                kind: WarnKind::Failed,
                label: label.clone(),
                op: Some(first.op),
                text: format!(
                    "{} record(s) did not succeed and are left out (first: {} {} / {}: {:?} {})",
                    bad.len(),
                    first.op,
                    format::size(first.file_size),
                    format::size(first.record_size),
                    first.status,
                    first.error.clone().unwrap_or_default()
                ),
                affected: bad.len(),
            });
        }
    }
    out.extend(disturbed(labels, records));
    for op in ops {
        for (label, cells) in &op.cells {
            let n = cells.len();
            let single = cells.values().filter(|c| c.values.len() == 1).count();
            if single > 0 {
                out.push(Warning {
                    kind: WarnKind::SingleRep,
                    label: label.clone(),
                    op: Some(op.op),
                    text: format!("{single} of {n} cells have one repetition: no confidence interval and no test"),
                    affected: single,
                });
            }
            let short: Vec<_> = cells
                .iter()
                .filter(|(_, c)| c.seconds < MIN_SECONDS)
                .collect();
            if let Some((k, c)) = short
                .iter()
                .min_by(|a, b| a.1.seconds.total_cmp(&b.1.seconds))
            {
                out.push(Warning {
                    kind: WarnKind::TooShort,
                    label: label.clone(),
                    op: Some(op.op),
                    text: format!(
                        "{} of {n} cells took under {} s (shortest: {} / {} in {:.5} s): timer and scheduler noise dominate",
                        short.len(),
                        MIN_SECONDS,
                        format::size(k.0),
                        format::size(k.1),
                        c.seconds
                    ),
                    affected: short.len(),
                });
            }
            let noisy: Vec<_> = cells
                .iter()
                .filter(|(_, c)| c.cv.is_some_and(|v| v > MAX_CV_PCT))
                .collect();
            if let Some((k, c)) = noisy
                .iter()
                .max_by(|a, b| a.1.cv.unwrap_or(0.0).total_cmp(&b.1.cv.unwrap_or(0.0)))
            {
                out.push(Warning {
                    kind: WarnKind::HighVariation,
                    label: label.clone(),
                    op: Some(op.op),
                    text: format!(
                        "{} of {n} cells vary by more than {MAX_CV_PCT}% between repetitions (worst: {} / {}, CV {})",
                        noisy.len(),
                        format::size(k.0),
                        format::size(k.1),
                        format::pct(c.cv.unwrap_or(0.0))
                    ),
                    affected: noisy.len(),
                });
            }
            let out_cells: Vec<_> = cells
                .iter()
                .filter(|(_, c)| !c.outliers.is_empty())
                .collect();
            if let Some((k, c)) = out_cells.first() {
                let i = c.outliers[0].index;
                let severe = out_cells
                    .iter()
                    .filter(|(_, c)| c.outliers.iter().any(|o| o.severe))
                    .count();
                out.push(Warning {
                    kind: WarnKind::Outliers,
                    label: label.clone(),
                    op: Some(op.op),
                    text: format!(
                        "{} cells have an outlying repetition, {severe} of them severe (Tukey's fences; a cell's median is not moved by them; e.g. {} / {}: repetition {} at {} against a median of {})",
                        out_cells.len(),
                        format::size(k.0),
                        format::size(k.1),
                        i,
                        format::rate(c.values[i]),
                        format::rate(c.median)
                    ),
                    affected: out_cells.len(),
                });
            }
        }
    }
    out.sort_by_key(|w| w.kind);
    out
}

/// Per label: the cells whose samples `--reps auto` stopped at its count or time cap, so
/// their interval is wider than asked for, and how many repetitions the width would take.
/// `widths`: each label's `--ci-width`, where its run recorded one.
pub fn capped(
    labels: &[String],
    records: &[Record],
    widths: &BTreeMap<String, f64>,
) -> Vec<Warning> {
    use sharebench_core::record::RepsStop;
    let mut out = Vec::new();
    for label in labels {
        let mine: Vec<&Record> = records.iter().filter(|r| &r.target == label).collect();
        let mut cells = BTreeMap::new();
        for r in mine.iter().filter(|r| r.reps_stop.is_some()) {
            cells.insert(unit_key(r), r.reps_stop);
        }
        let count = |s: RepsStop| cells.values().filter(|x| **x == Some(s)).count();
        let (by_count, by_time) = (count(RepsStop::CountCap), count(RepsStop::TimeCap));
        if by_count + by_time == 0 {
            continue;
        }
        let width = widths.get(label).copied();
        let asked = width.map_or("the width asked for".to_string(), |w| format!("±{w}%"));
        let mut text = format!(
            "--reps auto: {by_count} of {} units used all their repetitions and {by_time} their time before every median (or ratio) was known to {asked}; their intervals are wider (see docs/methods/statistics.md)",
            cells.len()
        );
        if let Some(w) = width {
            text += &reach(&mine, w);
        }
        out.push(Warning {
            kind: WarnKind::Capped,
            label: label.clone(),
            op: None,
            text,
            affected: by_count + by_time,
        });
    }
    out
}

/// What the capped units reached and what `width` would take (`sampling::capped_reach`).
fn reach(records: &[&Record], width: f64) -> String {
    let Some(reach) = capped_reach(records, width) else {
        return String::new();
    };
    let ((hw, hw_max), (need, need_max)) = (reach.half_width_pct, reach.samples);
    format!(
        ". Their medians came to ±{hw:.1}% (the median over these units; the widest ±{hw_max:.1}%); at their spread ±{width}% takes about {need:.0} repetitions a unit ({need_max:.0} for the most spread; --max-reps, and --max-cell-time to give them the time)"
    )
}

/// Per label: the measurements during which the hypervisor stole CPU time or other
/// processes used the machine (`Record::disturbed`), with the worst.
fn disturbed(labels: &[String], records: &[Record]) -> Vec<Warning> {
    let mut out = Vec::new();
    for label in labels {
        let ok: Vec<&Record> = records
            .iter()
            .filter(|r| &r.target == label && r.status == Status::Ok && r.others_cpu_s.is_some())
            .collect();
        let hit: Vec<&&Record> = ok.iter().filter(|r| r.disturbed()).collect();
        let share = |r: &Record, s: Option<f64>| r.machine_share_pct(s).unwrap_or(0.0);
        let Some(worst) = hit.iter().max_by(|a, b| {
            let load = |r: &Record| share(r, r.steal_s) + share(r, r.others_cpu_s);
            load(a).total_cmp(&load(b))
        }) else {
            continue;
        };
        out.push(Warning {
            kind: WarnKind::Disturbed,
            label: label.clone(),
            // Of the whole run, not of one operation: the worst is named in the text.
            op: None,
            text: format!(
                "{} of {} measurements ran while other guests (steal) or other processes took CPU time (worst: {} {} / {} repetition {}, steal {} and others {} of a CPU)",
                hit.len(),
                ok.len(),
                worst.op,
                format::size(worst.file_size),
                format::size(worst.record_size),
                worst.rep,
                format::pct(share(worst, worst.steal_s)),
                format::pct(share(worst, worst.others_cpu_s)),
            ),
            affected: hit.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(kind: WarnKind, label: &str, op: &str, affected: usize) -> Warning {
        Warning {
            kind,
            label: label.into(),
            op: (!op.is_empty()).then(|| op.parse().unwrap()),
            text: format!("{affected} cells"),
            affected,
        }
    }

    #[test]
    fn one_group_a_kind_gravest_kind_first_worst_series_first() {
        let ws = [
            w(WarnKind::SingleRep, "a", "write", 10),
            w(WarnKind::HighVariation, "b", "read", 2),
            w(WarnKind::SingleRep, "b", "write", 163),
            w(WarnKind::SingleRep, "a", "read", 12),
            w(WarnKind::Failed, "a", "write", 1),
        ];
        let g = grouped(&ws);
        let kinds: Vec<WarnKind> = g.iter().map(|g| g.kind).collect();
        assert_eq!(
            kinds,
            [
                WarnKind::Failed,
                WarnKind::SingleRep,
                WarnKind::HighVariation
            ]
        );
        assert_eq!(g[1].items[0].text, "163 cells");
        assert_eq!(g[1].series(), "b: write; a: read, write");
    }

    /// Six samples of one unit, the last stopped by the count cap.
    fn capped_unit(label: &str) -> Vec<Record> {
        use sharebench_core::record::RepsStop;
        let figures = [100.0, 104.0, 96.0, 108.0, 92.0, 100.0];
        let mut recs: Vec<Record> = (0..6)
            .map(|rep| Record {
                target: label.into(),
                rep,
                file_size: 1 << 20,
                record_size: 1 << 16,
                throughput_kib_s: figures[rep as usize],
                ..Default::default()
            })
            .collect();
        recs[5].reps_stop = Some(RepsStop::CountCap);
        recs
    }

    #[test]
    fn a_capped_unit_says_what_it_reached_and_what_the_width_would_take() {
        let recs = capped_unit("a");
        let widths = BTreeMap::from([("a".to_string(), 3.0)]);
        let w = capped(&["a".into()], &recs, &widths);
        assert_eq!(w.len(), 1);
        // Interval of six: [min, max], ±8%. Robust σ: 1.4826 × 4 = 5.93%, so
        // (2.457 × 5.93 / 3)² = 23.6 samples.
        let text = &w[0].text;
        assert!(text.contains("1 of 1 units used all their repetitions and 0 their time"));
        assert!(text.contains("known to ±3%"), "{text}");
        assert!(text.contains("came to ±8.0%"), "{text}");
        assert!(text.contains("takes about 24 repetitions"), "{text}");
        // Without the width its run asked for, no estimate.
        let w = capped(&["a".into()], &recs, &BTreeMap::new());
        assert!(w[0].text.contains("the width asked for"));
        assert!(!w[0].text.contains("takes about"));
    }
}
