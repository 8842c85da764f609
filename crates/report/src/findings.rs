//! Generated findings: sentences in the style of the seed study ("for medium files A
//! reaches higher peaks, 4.80 vs 4.60 GB/s at 16 MiB / 1 MiB records, while B is more
//! stable, CV 4% vs 11%"), each built from the analysis and carrying its numbers and its
//! significance. A sentence is only written when its numbers exist; a winner is named only
//! when the difference is significant and at least the threshold, and otherwise the
//! sentence says "equivalent" or "inconclusive" with the interval of the ratio. Not:
//! warnings about data quality (see `warnings`).

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{Finding, Topic};

use crate::by_rep;
use crate::compare;
use crate::format;
use crate::model::{mib_per_cpu_s, Analysis, ClassRow, Overall, SizeClass, Verdict};
use crate::stats;
use sharebench_core::operation::Operation;

/// How the summary was tested, and what its cells said: "t-test over 6 paired
/// repetitions p=0.012, 40 cells; ...".
pub fn evidence(o: &Overall) -> String {
    evidence_as(o, "faster", "slower")
}

/// `evidence`, naming the cells whose ratio is significantly above 1 `above` and below
/// 1 `below` ("longer" and "shorter" for a latency).
pub fn evidence_as(o: &Overall, above: &str, below: &str) -> String {
    let p = match (o.replicates, o.p) {
        (compare::Replicates::Repetitions(n), Some(_)) => format!(
            "t-test over {n} paired repetitions {}, {} cells",
            format::p(o.p),
            o.cells
        ),
        (compare::Replicates::Repetitions(n), None) => format!(
            "{} cell(s), {n} repetitions in common: too few to test",
            o.cells
        ),
        (compare::Replicates::PairedRuns(n), Some(_)) => format!(
            "t-test over {n} runs paired by run {}, {} cells",
            format::p(o.p),
            o.cells
        ),
        (compare::Replicates::Runs(a, b), Some(_)) => format!(
            "Welch's t over {a} and {b} runs, each run a replicate, {}, {} cells",
            format::p(o.p),
            o.cells
        ),
        (compare::Replicates::PairedRuns(n), None) | (compare::Replicates::Runs(n, _), None) => {
            format!("{} cell(s), {n} runs in common: too few to test", o.cells)
        }
        (compare::Replicates::SeparateRuns, _) => format!(
            "{} cells from separate runs, one block of time each: shown, never called",
            o.cells
        ),
    };
    if o.testable > 0 {
        format!(
            "{p}; {} cells {above}, {} {below}, {} equivalent, {} inconclusive",
            o.faster,
            o.slower,
            o.equivalent,
            o.testable - o.faster - o.slower - o.equivalent
        )
    } else {
        format!(
            "{p}; cells not testable (fewer than {} repetitions)",
            compare::MIN_REPS
        )
    }
}

fn significance(v: Verdict) -> Option<bool> {
    match v {
        Verdict::Faster | Verdict::Slower => Some(true),
        Verdict::Equivalent | Verdict::Inconclusive => Some(false),
        Verdict::NotTestable => None,
    }
}

/// "equivalent within ±5% (+1.2% [-0.8%, +3.1%])" or "inconclusive at a 5% threshold (...)":
/// the outcome of a comparison that called no winner.
fn no_winner(o: &Overall, threshold_pct: f64) -> String {
    let ratio = compare::change_with_ci(o.geo_ratio, o.ci);
    match o.verdict {
        Verdict::Equivalent => format!("equivalent within ±{threshold_pct}% ({ratio})"),
        Verdict::NotTestable => format!("not testable ({ratio})"),
        _ => format!("inconclusive at a {threshold_pct}% threshold ({ratio})"),
    }
}

pub fn generate(a: &Analysis) -> Vec<Finding> {
    let mut out = Vec::new();
    // The answer: each label against the baseline, per operation.
    for op in &a.ops {
        for (label, cells) in &op.vs_baseline {
            let o = compare::overall(cells.values(), a.threshold_pct);
            if o.cells == 0 {
                continue;
            }
            let sig = significance(o.verdict);
            let text = if sig == Some(true) {
                let (faster, slower, r, ci) = if o.geo_ratio >= 1.0 {
                    (label.as_str(), a.baseline.as_str(), o.geo_ratio, o.ci)
                } else {
                    let inverse = o.ci.map(|(lo, hi)| (1.0 / hi, 1.0 / lo));
                    (
                        a.baseline.as_str(),
                        label.as_str(),
                        1.0 / o.geo_ratio,
                        inverse,
                    )
                };
                format!(
                    "{}: {faster} is faster than {slower} by {} (geometric mean ratio, 95% interval; {}).",
                    op.op,
                    compare::change_with_ci(r, ci),
                    evidence(&o)
                )
            } else {
                format!(
                    "{}: {label} against {}: {} for {label} ({}).",
                    op.op,
                    a.baseline,
                    no_winner(&o, a.threshold_pct),
                    evidence(&o)
                )
            };
            out.push(Finding {
                topic: Topic::Overall,
                op: Some(op.op),
                text,
                significant: sig,
            });
        }
    }
    for row in &a.classes {
        if let Some(f) = class_finding(row, a.threshold_pct) {
            out.push(f);
        }
        if let Some(f) = cpu_finding(a, row) {
            out.push(f);
        }
    }
    for c in &a.cache_flags {
        let ram = c
            .ram_bytes
            .map(|m| {
                format!(
                    "; the client has {} of RAM, the file is {:.0}% of it",
                    format::size(m),
                    c.to_file as f64 / m as f64 * 100.0
                )
            })
            .unwrap_or_default();
        out.push(Finding {
            topic: Topic::Cache,
            op: Some(c.op),
            text: format!(
                "{} {}: throughput falls {:.1}x from {} at {} files to {} at {} files ({} records{}{}), a likely cache effect.",
                c.label,
                c.op,
                c.factor(),
                format::rate(c.from_kib_s),
                format::size(c.from_file),
                format::rate(c.to_kib_s),
                format::size(c.to_file),
                format::size(c.record_size),
                if c.record_sizes_affected > 1 { format!(", and {} more record sizes", c.record_sizes_affected - 1) } else { String::new() },
                ram
            ),
            significant: None,
        });
    }
    out.extend(throughput_findings(a));
    out
}

/// Each throughput-mode row against the baseline's, with its interval and verdict.
fn throughput_findings(a: &Analysis) -> Vec<Finding> {
    let mut out = Vec::new();
    let compared = a
        .throughput
        .iter()
        .filter(|t| t.vs_baseline.is_some())
        .count();
    for t in &a.throughput {
        let Some(v) = t.vs_baseline else {
            continue;
        };
        let verdict = compare::verdict_words(v.verdict, a.threshold_pct);
        let (typical, test) = v.basis();
        out.push(Finding {
            topic: Topic::ThroughputMode,
            op: Some(t.op),
            text: format!(
                "{} with {} workers ({} files, {} records): {} children see {} against {} for {} ({typical}; {}, {test} {}{}, {verdict}).",
                t.op,
                t.threads,
                format::size(t.file_size),
                format::size(t.record_size),
                t.label,
                format::rate(v.typical.0),
                format::rate(v.typical.1),
                a.baseline,
                compare::change_with_ci(v.ratio(), v.ci),
                format::p(v.p),
                v.q.map_or(String::new(), |q| format!(
                    ", q={q:.3} over the {} rows (Benjamini-Hochberg)",
                    compared
                ))
            ),
            significant: significance(v.verdict),
        });
    }
    out
}

fn class_finding(row: &ClassRow, threshold_pct: f64) -> Option<Finding> {
    let (w, r) = (
        row.stat(row.winner.as_deref()?)?,
        row.stat(row.runner_up.as_deref()?)?,
    );
    let o = row.versus.as_ref()?;
    let sig = significance(o.verdict);
    let cell = |k: (u64, u64)| format!("{} / {} records", format::size(k.0), format::size(k.1));
    let head = format!(
        "For {} files ({}), {}",
        row.class.name(),
        row.class.range(),
        row.op
    );
    let main = if sig == Some(true) {
        format!(
            "{head}: {} is faster, median {} vs {} for {} ({}; {})",
            w.label,
            format::rate(w.median),
            format::rate(r.median),
            r.label,
            compare::change_with_ci(o.geo_ratio, o.ci),
            evidence(o)
        )
    } else {
        format!(
            "{head}: {} against {}: {} (medians {} vs {}; {})",
            w.label,
            r.label,
            no_winner(o, threshold_pct),
            format::rate(w.median),
            format::rate(r.median),
            evidence(o)
        )
    };
    let peak_leader = if r.peak > w.peak { r } else { w };
    let other = if std::ptr::eq(peak_leader, w) { r } else { w };
    let peaks = format!(
        "; {} reaches the higher peak, {} at {} vs {} at {}",
        peak_leader.label,
        format::rate(peak_leader.peak),
        cell(peak_leader.peak_cell),
        format::rate(other.peak),
        cell(other.peak_cell)
    );
    let stability = match (w.cv, r.cv) {
        (Some(a), Some(b)) if (a - b).abs() >= 2.0 => {
            let (s, u, sv, uv) = if a < b { (w, r, a, b) } else { (r, w, b, a) };
            format!(
                ", while {} is more stable, CV {} vs {} for {}",
                s.label,
                format::pct(sv),
                format::pct(uv),
                u.label
            )
        }
        _ => String::new(),
    };
    let small = match (w.iops, r.iops) {
        (Some(a), Some(b)) => format!(
            "; at records up to 64 KiB, {} vs {} operations per second",
            format::ops(a),
            format::ops(b)
        ),
        _ => String::new(),
    };
    Some(Finding {
        topic: Topic::SizeClass,
        op: Some(row.op),
        text: format!("{main}{small}{peaks}{stability}."),
        significant: sig,
    })
}

fn cpu_finding(a: &Analysis, row: &ClassRow) -> Option<Finding> {
    let with_cpu: Vec<_> = row
        .stats
        .iter()
        .filter(|s| s.mib_per_cpu_s.is_some())
        .collect();
    if with_cpu.len() < 2 {
        return None;
    }
    let best = with_cpu.iter().max_by(|x, y| {
        x.mib_per_cpu_s
            .unwrap_or(0.0)
            .total_cmp(&y.mib_per_cpu_s.unwrap_or(0.0))
    })?;
    let worst = with_cpu.iter().min_by(|x, y| {
        x.mib_per_cpu_s
            .unwrap_or(0.0)
            .total_cmp(&y.mib_per_cpu_s.unwrap_or(0.0))
    })?;
    let (bv, wv) = (best.mib_per_cpu_s?, worst.mib_per_cpu_s?);
    if bv < wv * 1.2 {
        return None;
    }
    // Per repetition that every cell of both has (measured side by side), the mean of the
    // cells' log ratios of MiB per CPU second; tested over the repetitions, which vary
    // independently, not the cells (`by_rep`). Labels of separate runs share none.
    let Operation::Io(io) = row.op else {
        return None;
    };
    let in_class = |file: u64| SizeClass::of(file) == row.class;
    let tb = by_rep::table(&a.records, &best.label, &[io], in_class, mib_per_cpu_s);
    let tw = by_rep::table(&a.records, &worst.label, &[io], in_class, mib_per_cpu_s);
    let per_rep = by_rep::mean_log_ratio_by_rep(&tb, &tw);
    let p = (per_rep.len() >= 3)
        .then(|| stats::mean_log_t(&per_rep))
        .flatten()
        .map(|(p, _)| p);
    let sig = p.map(|p| p < compare::ALPHA);
    Some(Finding {
        topic: Topic::Cpu,
        op: Some(row.op),
        text: format!(
            "For {} files, {}: {} moves {:.0} MiB per CPU second against {:.0} for {} (CPU {} vs {}; t-test {} over {} paired repetitions{}).",
            row.class.name(),
            row.op,
            best.label,
            bv,
            wv,
            worst.label,
            best.cpu_pct.map(format::pct).unwrap_or_else(|| "–".into()),
            worst.cpu_pct.map(format::pct).unwrap_or_else(|| "–".into()),
            format::p(p),
            per_rep.len(),
            match sig {
                Some(true) => ", significant",
                Some(false) => ", not significant",
                None => ", not testable",
            }
        ),
        significant: sig,
    })
}
