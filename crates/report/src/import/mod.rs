//! Importers: other tools' outputs turned into ordinary records, so the analysis never
//! needs to know where a number came from. Each importer is a pure function of the bytes
//! (no panics on any input: see the proptests) and returns records or one line saying why
//! not. Not: label assignment or file reading (see `load`).

pub mod biff;
pub mod fio;
pub mod iozone_text;
pub mod workbook;

use sharebench_core::op::{Op, IOZONE_REPORTS};
use sharebench_core::operation::Operation;
use sharebench_core::record::{Cache, Record, Scope, WorkloadKind};

/// What an importer found: records, and notes about what it skipped.
#[derive(Debug, Default, Clone)]
pub struct Imported {
    pub records: Vec<Record>,
    pub notes: Vec<String>,
}

/// A record for one imported figure: one repetition of one cell, single worker, with the
/// time implied by the throughput (IOzone prints no times) and unknown CPU (zeros).
pub fn record(
    tool: WorkloadKind,
    source: &str,
    op: Operation,
    file_size: u64,
    record_size: u64,
    kib_s: f64,
) -> Record {
    let seconds = if kib_s > 0.0 {
        file_size as f64 / 1024.0 / kib_s
    } else {
        0.0
    };
    Record {
        run_id: source.to_string(),
        target: String::new(),
        backend: tool.name().to_string(),
        client: "unknown".into(),
        workload: tool,
        op,
        file_size,
        record_size,
        threads: 1,
        scope: Scope::Single,
        bytes: file_size,
        seconds,
        throughput_kib_s: kib_s,
        cpu_user_s: 0.0,
        cpu_sys_s: 0.0,
        cpu_total_s: 0.0,
        cpu_util_pct: 0.0,
        cache: Cache::Unknown,
        started_at: String::new(),
        ..Default::default()
    }
}

/// What IOzone's figures are in: KiB/s by default, `-O` operations per second, `-N`
/// microseconds per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    KibPerSec,
    OpsPerSec,
    MicrosPerOp,
}

/// Converts figures to KiB/s using each record's record size, and fixes the implied time.
pub fn convert_units(records: &mut [Record], unit: Unit) {
    for r in records.iter_mut() {
        let rec_kib = r.record_size as f64 / 1024.0;
        let v = r.throughput_kib_s;
        let kib_s = match unit {
            Unit::KibPerSec => v,
            Unit::OpsPerSec => v * rec_kib,
            Unit::MicrosPerOp if v > 0.0 => rec_kib / (v / 1e6),
            Unit::MicrosPerOp => 0.0,
        };
        r.throughput_kib_s = kib_s;
        if kib_s > 0.0 {
            r.seconds = r.bytes as f64 / 1024.0 / kib_s;
        }
        if let Some(t) = r.throughput.as_mut() {
            t.children_see_kib_s = kib_s;
        }
    }
}

/// IOzone's report titles (text `-R` and `-b` labels, any case, without " report") and
/// throughput-report row names, to sharebench operations.
pub fn iozone_report_op(title: &str) -> Option<Op> {
    let t = title.trim().to_ascii_lowercase();
    let t = t.strip_suffix("report").unwrap_or(&t).trim();
    let listed = IOZONE_REPORTS
        .iter()
        .find(|r| r.2.eq_ignore_ascii_case(t) || r.3.eq_ignore_ascii_case(t));
    if let Some(r) = listed {
        return Some(r.1);
    }
    // Titles of other IOzone versions and of its other report forms.
    Some(match t {
        "initial write" => Op::Write,
        "rewrite" => Op::Rewrite,
        "read" => Op::Read,
        "re-read" => Op::Reread,
        "reverse read" => Op::BackwardRead,
        "mixed workload" => Op::RandomMix,
        _ => return None,
    })
}

/// A CPU report title ("Writer CPU utilization report (Zero values should be ignored)")
/// to its operation.
pub fn iozone_cpu_report_op(title: &str) -> Option<Op> {
    let lower = title.trim().to_ascii_lowercase();
    let at = lower.find(" cpu utilization report")?;
    iozone_report_op(&lower[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_title_the_iozone_command_writes_reads_back_as_its_op() {
        for (_, op, text, book) in IOZONE_REPORTS {
            assert_eq!(iozone_report_op(&format!("{text} report")), Some(op));
            assert_eq!(iozone_report_op(&format!("{book} Report")), Some(op));
        }
    }

    #[test]
    fn titles_map_to_ops() {
        assert_eq!(iozone_report_op("Writer report"), Some(Op::Write));
        assert_eq!(iozone_report_op("Re-reader Report"), Some(Op::Reread));
        assert_eq!(iozone_report_op("  Initial write "), Some(Op::Write));
        assert_eq!(iozone_report_op("Re-Fread report"), Some(Op::Freread));
        assert_eq!(iozone_report_op("Nonsense"), None);
        assert_eq!(
            iozone_cpu_report_op("Writer CPU utilization report (Zero values should be ignored)"),
            Some(Op::Write)
        );
    }
}
