//! The report's workload sections (metadata, smallfiles, stream) on synthetic records,
//! mixed with an IOzone matrix: the sections appear, the IOzone matrices leave the workload
//! records out.

mod common;
use common::*;
use sharebench_core::op::Op;
use sharebench_core::plan::Cell;
use sharebench_core::record::{Record, Scope, WorkloadKind};
use sharebench_report::{build, ReportRequest};
use std::io::Write;

fn wl(target: &str, workload: WorkloadKind, op: &str, rep: u32) -> Record {
    let mut r = record(
        target,
        Op::Write,
        Cell {
            file_size: 0,
            record_size: 0,
        },
        rep,
        0.0,
    );
    r.workload = workload;
    r.op = op.parse().unwrap();
    r.throughput_kib_s = 0.0;
    r.bytes = 0;
    r.seconds = 0.1;
    r.cpu_user_s = 0.01;
    r.cpu_sys_s = 0.02;
    r.cpu_total_s = 0.03;
    r
}

fn workload_records(target: &str, factor: f64) -> Vec<Record> {
    let mut v = Vec::new();
    for rep in 0..3 {
        for n in [100u64, 1000, 5000] {
            for op in ["create-file", "create-dir", "remove-file", "remove-dir"] {
                let mut r = wl(target, WorkloadKind::Metadata, op, rep);
                r.figures.test = Some(
                    if op.starts_with("create") {
                        "test1"
                    } else {
                        "test2"
                    }
                    .into(),
                );
                r.figures.files = Some(n);
                r.figures.dirs = Some(n);
                r.figures.count = Some(n);
                r.figures.ops_per_s = Some(factor * 1e4 * (n as f64).ln());
                v.push(r);
            }
        }
        for size in [1u64 << 20, 64 << 20] {
            for op in ["read-buffered", "read-uncached"] {
                let mut r = wl(target, WorkloadKind::Metadata, op, rep);
                r.figures.test = Some("test5".into());
                r.file_size = size;
                r.bytes = size;
                r.throughput_kib_s = if op == "read-buffered" && size < (64 << 20) {
                    4e6
                } else {
                    1e6
                } * factor;
                v.push(r);
            }
        }
        for phase in ["copy", "rsync-copy", "resync-nochange", "delete"] {
            let mut r = wl(target, WorkloadKind::Smallfiles, phase, rep);
            r.seconds = 0.3 / factor;
            r.bytes = 35_000_000;
            r.throughput_kib_s = 35_000_000.0 / 1024.0 / r.seconds;
            r.cpu_util_pct = 40.0;
            r.figures.ops_per_s = Some(1800.0 / r.seconds);
            v.push(r);
        }
        for op in ["record", "playback"] {
            let mut r = wl(target, WorkloadKind::Stream, op, rep);
            r.scope = Scope::Single;
            r.throughput_kib_s = 500_000.0 * factor;
            r.bytes = 128 << 20;
            r.figures.streams = Some(1);
            r.figures.prealloc_hints = Some("windows".into());
            r.figures.extents_per_file = Some(if factor < 1.0 { 2049.0 } else { 1.0 });
            r.figures.achieved_bps = Some(4e9);
            v.push(r);
        }
    }
    v
}

#[test]
fn workload_sections_render_next_to_the_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let cells = [Cell {
        file_size: 1 << 20,
        record_size: 4096,
    }];
    let mut inputs = Vec::new();
    for (name, factor) in [("ext3", 0.7), ("xfs", 1.0)] {
        let t = Target {
            name,
            factor,
            noise: 0.02,
            mount_options: "rw",
        };
        let dir = tmp.path().join(name);
        write_dir(&dir, &t, &[Op::Write, Op::Read], &cells, 3, 7);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("results.jsonl"))
            .unwrap();
        for r in workload_records(name, factor) {
            writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
        }
        inputs.push(dir);
    }
    let (a, rendered) = build(&ReportRequest {
        inputs,
        labels: Vec::new(),
        baseline: None,
        out: tmp.path().join("out"),
        ..Default::default()
    })
    .unwrap();
    // The matrices hold only the IOzone operations.
    let ops: Vec<&str> = a.ops.iter().map(|o| o.op.name()).collect();
    assert_eq!(ops, ["write", "read"]);
    let h = rendered.text("report.html");
    for needle in [
        "id=\"metadata\"",
        "create-file rate vs count",
        "test5b read throughput vs file size",
        "id=\"smallfiles\"",
        "rsync-copy",
        "id=\"stream\"",
        "2049",
        "playback throughput vs streams",
    ] {
        assert!(h.contains(needle), "report lacks {needle}");
    }
}

#[test]
fn a_run_of_only_workload_records_still_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    let t = Target {
        name: "tmpfs",
        factor: 1.0,
        noise: 0.0,
        mount_options: "rw",
    };
    write_dir(&dir, &t, &[], &[], 1, 1);
    let mut f = std::fs::File::create(dir.join("results.jsonl")).unwrap();
    for r in workload_records("tmpfs", 1.0)
        .into_iter()
        .chain(workload_records("nfs", 0.5))
        .filter(|r| r.workload == WorkloadKind::Metadata && r.bytes == 0)
    {
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
    let (_, rendered) = build(&ReportRequest {
        inputs: vec![dir],
        labels: Vec::new(),
        baseline: None,
        out: tmp.path().join("out"),
        ..Default::default()
    })
    .unwrap();
    let h = rendered.text("report.html");
    assert!(h.contains("remove-dir rate vs count"));
    // Two targets with no matrix cell: the answer points to the workload's section
    // instead of calling them one target.
    assert!(!h.contains("Only one target"), "{h}");
    assert!(h.contains("No cell of the file size x record size matrix in common"));
}
