//! Generated findings: sentences in the style of the seed study ("for medium files A
//! reaches higher peaks, 4.80 vs 4.60 GB/s at 16 MiB / 1 MiB records, while B is more
//! stable, CV 4% vs 11%"), each built from the analysis and carrying its numbers and its
//! significance. A sentence is only written when its numbers exist; differences that are
//! not significant are said to be so. Not: warnings about data quality (see `warnings`).

use crate::analysis::Analysis;
use crate::classes::ClassRow;
use crate::compare::{self, Overall};
use crate::format;
use crate::stats;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topic {
    /// The answer per operation over all cells.
    Overall,
    SizeClass,
    Cpu,
    Cache,
    ThroughputMode,
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub topic: Topic,
    pub op: String,
    pub text: String,
    /// `Some(true)` significant, `Some(false)` tested and not, `None` not testable.
    pub significant: Option<bool>,
}

fn evidence(o: &Overall) -> String {
    let p = match o.p {
        Some(_) => format!(
            "Wilcoxon signed-rank {} over {} cells",
            format::p(o.p),
            o.cells
        ),
        None => format!("{} cell(s), too few for a signed-rank test", o.cells),
    };
    if o.testable > 0 {
        format!(
            "{p}; {} cells significantly faster, {} slower, {} without significant difference",
            o.faster,
            o.slower,
            o.testable - o.faster - o.slower
        )
    } else {
        format!(
            "{p}; cells not testable (fewer than {} repetitions)",
            compare::MIN_REPS
        )
    }
}

fn significance(o: &Overall) -> Option<bool> {
    if o.significant() {
        Some(true)
    } else if o.p.is_some() || o.testable > 0 {
        Some(false)
    } else {
        None
    }
}

pub fn generate(a: &Analysis) -> Vec<Finding> {
    let mut out = Vec::new();
    // The answer: each label against the baseline, per operation.
    for op in &a.ops {
        for (label, cells) in &op.vs_baseline {
            let o = compare::overall(cells.values());
            if o.cells == 0 {
                continue;
            }
            let sig = significance(&o);
            let text = if sig == Some(true) {
                let (faster, slower, r) = if o.geo_ratio >= 1.0 {
                    (label.as_str(), a.baseline.as_str(), o.geo_ratio)
                } else {
                    (a.baseline.as_str(), label.as_str(), 1.0 / o.geo_ratio)
                };
                format!(
                    "{}: {faster} is faster than {slower} by {} (geometric mean of per-cell ratios; {}).",
                    op.op,
                    format::change(r),
                    evidence(&o)
                )
            } else {
                format!(
                    "{}: no significant overall difference between {label} and {} ({} for {label}; {}).",
                    op.op,
                    a.baseline,
                    format::change(o.geo_ratio),
                    evidence(&o)
                )
            };
            out.push(Finding {
                topic: Topic::Overall,
                op: op.op.clone(),
                text,
                significant: sig,
            });
        }
    }
    for row in &a.classes {
        if let Some(f) = class_finding(row) {
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
            op: c.op.clone(),
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
    for t in &a.throughput {
        let Some((ratio, p)) = t.vs_baseline else {
            continue;
        };
        let sig = p.map(|p| p < compare::ALPHA);
        let verdict = match sig {
            Some(true) => "significant",
            Some(false) => "not significant",
            None => "not testable, fewer than 3 repetitions a side",
        };
        out.push(Finding {
            topic: Topic::ThroughputMode,
            op: t.op.clone(),
            text: format!(
                "{} with {} workers ({} files, {} records): {} children see {} against {} for {} ({}; Welch {}, {verdict}).",
                t.op,
                t.threads,
                format::size(t.file_size),
                format::size(t.record_size),
                t.label,
                format::rate(t.children.median),
                format::rate(t.children.median / ratio),
                a.baseline,
                format::change(ratio),
                format::p(p)
            ),
            significant: sig,
        });
    }
    out
}

fn class_finding(row: &ClassRow) -> Option<Finding> {
    let (w, r) = (
        row.stat(row.winner.as_deref()?)?,
        row.stat(row.runner_up.as_deref()?)?,
    );
    let o = row.versus.as_ref()?;
    let sig = significance(o);
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
            format::change(o.geo_ratio),
            evidence(o)
        )
    } else {
        format!(
            "{head}: no significant difference between {} and {} (medians {} vs {}; {})",
            w.label,
            r.label,
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
    Some(Finding {
        topic: Topic::SizeClass,
        op: row.op.clone(),
        text: format!("{main}{peaks}{stability}."),
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
    // Paired over the cells both have: log ratio of MiB per CPU second.
    let op = a.ops.iter().find(|o| o.op == row.op)?;
    let (bc, wc) = (op.cells.get(&best.label)?, op.cells.get(&worst.label)?);
    let diffs: Vec<f64> = bc
        .iter()
        .filter(|(k, _)| crate::classes::SizeClass::of(k.0) == row.class)
        .filter_map(|(k, c)| Some((c.mib_per_cpu_s? / wc.get(k)?.mib_per_cpu_s?).ln()))
        .filter(|d| d.is_finite())
        .collect();
    let p = if diffs.len() >= 2 {
        stats::signed_rank_p(&diffs)
    } else {
        None
    };
    let sig = p.map(|p| p < compare::ALPHA);
    Some(Finding {
        topic: Topic::Cpu,
        op: row.op.clone(),
        text: format!(
            "For {} files, {}: {} moves {:.0} MiB per CPU second against {:.0} for {} (CPU {} vs {}; Wilcoxon signed-rank {} over {} cells{}).",
            row.class.name(),
            row.op,
            best.label,
            bv,
            wv,
            worst.label,
            best.cpu_pct.map(format::pct).unwrap_or_else(|| "–".into()),
            worst.cpu_pct.map(format::pct).unwrap_or_else(|| "–".into()),
            format::p(p),
            diffs.len(),
            match sig {
                Some(true) => ", significant",
                Some(false) => ", not significant",
                None => ", not testable",
            }
        ),
        significant: sig,
    })
}
