//! Synthetic sharebench result directories for the report tests: a deterministic
//! throughput model (record-size ramp, a page-cache cliff for reads past a file size,
//! per-target speed factor and noise) written as results.jsonl + run.json.
#![allow(dead_code)]

use sharebench_core::latency::LatencySummary;
use sharebench_core::manifest::{Host, Manifest, TargetManifest};
use sharebench_core::op::Op;
use sharebench_core::plan::{auto_cells, Cell, Plan, CROSSOVER};
use sharebench_core::record::{Record, Scope};
use std::io::Write;
use std::path::Path;

pub struct Target<'a> {
    pub name: &'a str,
    /// Speed factor against the model.
    pub factor: f64,
    /// Relative noise (0.02 = about 2%).
    pub noise: f64,
    pub mount_options: &'a str,
}

fn splitmix(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

pub fn all_auto_cells() -> Vec<Cell> {
    auto_cells(64 << 10, 512 << 20, 4 << 10, 16 << 20, CROSSOVER)
}

pub fn record(target: &str, op: Op, cell: Cell, rep: u32, kib_s: f64) -> Record {
    let seconds = cell.file_size as f64 / 1024.0 / kib_s;
    // A request's typical time is its record at this throughput; the tail strays from it
    // as latency percentiles do.
    let p50 = cell.record_size as f64 / 1024.0 / kib_s * 1e6;
    let latency = if !(p50.is_finite() && p50 > 0.0) {
        LatencySummary::default()
    } else {
        LatencySummary {
            lat_count: cell.file_size / cell.record_size.max(1),
            lat_mean_us: p50 * 1.1,
            lat_p50_us: p50,
            lat_p90_us: p50 * 1.3,
            lat_p99_us: p50 * 2.0,
            lat_p999_us: p50 * 4.0,
            lat_p9999_us: p50 * 8.0,
            lat_max_us: p50 * 10.0,
        }
    };
    Record {
        run_id: "synthetic".into(),
        target: target.into(),
        backend: "posix".into(),
        client: "kernel".into(),
        workload: sharebench_core::record::WorkloadKind::Iozone,
        op: op.into(),
        file_size: cell.file_size,
        record_size: cell.record_size,
        threads: 1,
        scope: Scope::Single,
        rep,
        bytes: cell.file_size,
        seconds,
        throughput_kib_s: kib_s,
        cpu_user_s: 0.3 * seconds,
        cpu_sys_s: 0.6 * seconds,
        cpu_total_s: 0.9 * seconds,
        cpu_util_pct: 90.0,
        latency,
        started_at: "2026-01-01T00:00:00Z".into(),
        ..Default::default()
    }
}

/// Model throughput (KiB/s) of a cell.
pub fn model(op: Op, cell: Cell) -> f64 {
    let rec_kib = cell.record_size as f64 / 1024.0;
    let ramp = 1.0 - (-rec_kib / 64.0).exp() * 0.7;
    let base = 3.0e6 * ramp * (1.0 + (op as u8 as f64) * 0.03);
    // Reads fall off once files pass 128 MiB (the page-cache cliff).
    if matches!(op, Op::Read | Op::Reread) && cell.file_size > (128 << 20) {
        base / 4.0
    } else {
        base
    }
}

/// Writes a result directory for one target.
pub fn write_dir(
    dir: &Path,
    t: &Target,
    ops: &[Op],
    cells: &[Cell],
    reps: u32,
    seed: u64,
) -> Vec<Record> {
    std::fs::create_dir_all(dir).unwrap();
    let mut state = seed;
    let mut recs = Vec::new();
    for &cell in cells {
        for &op in ops {
            for rep in 0..reps {
                let noise = 1.0 + t.noise * (splitmix(&mut state) * 2.0 - 1.0) * 1.7;
                recs.push(record(
                    t.name,
                    op,
                    cell,
                    rep,
                    model(op, cell) * t.factor * noise,
                ));
            }
        }
    }
    let mut f = std::fs::File::create(dir.join("results.jsonl")).unwrap();
    for r in &recs {
        writeln!(f, "{}", serde_json::to_string(r).unwrap()).unwrap();
    }
    let manifest = Manifest {
        schema: 1,
        tool: "sharebench".into(),
        tool_version: "0.1.0".into(),
        run_id: "synthetic".into(),
        command_line: vec!["sharebench".into(), "run".into(), t.name.into()],
        host: Host {
            hostname: "client".into(),
            kernel: "Linux 6.1.0 x86_64".into(),
            cpu_model: "Test CPU".into(),
            cpus: 4,
            memory_bytes: 8 << 30,
            tcp_congestion: Some("reno".into()),
            targets: Vec::new(),
        },
        hosts: Vec::new(),
        targets: vec![TargetManifest {
            name: t.name.into(),
            backend: "posix".into(),
            client: "kernel".into(),
            local_root: None,
            fs_type: Some("nfs4".into()),
            mount_point: Some(format!("/mnt/{}", t.name)),
            mount_options: Some(t.mount_options.into()),
            workdir: "x".into(),
            server_fs: None,
            server_mount_options: None,
            location: None,
            mount_source: None,
            places: Vec::new(),
        }],
        plan: Plan {
            ops: ops.to_vec(),
            cells: cells.to_vec(),
            reps,
            ..Plan::default()
        },
        started_at: "2026-01-01T00:00:00Z".into(),
        ended_at: Some("2026-01-01T01:00:00Z".into()),
        outcome: sharebench_core::manifest::RunOutcome::Complete,
        records: recs.len() as u64,
        coordination_ms: None,
        target_order: Vec::new(),
    };
    std::fs::write(
        dir.join("run.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    recs
}

/// The 13 operations of IOzone's table (tests 0-7).
pub fn thirteen_ops() -> Vec<Op> {
    Op::ALL[..13].to_vec()
}
