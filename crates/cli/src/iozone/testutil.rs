//! Synthetic records for the unit tests of the IOzone front end.

use sharebench_core::op::Op;
use sharebench_core::record::{Record, Scope, ThroughputSummary};

/// A successful record of `op` on a (file, record) cell moving `bytes` in `seconds`.
pub fn record(
    op: Op,
    file_size: u64,
    record_size: u64,
    bytes: u64,
    seconds: f64,
    scope: Scope,
) -> Record {
    Record {
        run_id: "t".into(),
        target: "/tmp".into(),
        backend: "posix".into(),
        client: "kernel".into(),
        workload: sharebench_core::record::WorkloadKind::Iozone,
        op: op.into(),
        file_size,
        record_size,
        threads: 1,
        scope,
        bytes,
        seconds,
        throughput_kib_s: bytes as f64 / 1024.0 / seconds,
        cpu_user_s: seconds / 4.0,
        cpu_sys_s: seconds / 4.0,
        cpu_total_s: seconds / 2.0,
        cpu_util_pct: 50.0,
        started_at: "2026-01-01T00:00:00Z".into(),
        ..Default::default()
    }
}

/// An aggregate record with the given "Parent sees" figure.
pub fn aggregate(op: Op, file_size: u64, record_size: u64, parent: f64) -> Record {
    let mut r = record(op, file_size, record_size, file_size, 1.0, Scope::Aggregate);
    r.throughput = Some(ThroughputSummary {
        parent_sees_kib_s: parent,
        ..Default::default()
    });
    r
}
