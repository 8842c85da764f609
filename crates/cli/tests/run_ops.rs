//! Every operation, with --verify, on real file systems: tmpfs and a loop-mounted xfs
//! image attached with direct I/O; plus mmap mode, throughput mode and O_DIRECT.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

const ALL_OPS: [&str; 22] = [
    "write",
    "rewrite",
    "read",
    "reread",
    "random-read",
    "random-write",
    "backward-read",
    "record-rewrite",
    "stride-read",
    "fwrite",
    "frewrite",
    "fread",
    "freread",
    "random-mix",
    "pwrite",
    "re-pwrite",
    "pread",
    "re-pread",
    "pwritev",
    "re-pwritev",
    "preadv",
    "re-preadv",
];

/// Runs every op with --verify and checks each produced an ok record with sane figures.
fn every_op_verified(target: &str, extra: &[&str]) -> Vec<Value> {
    let out = shm_dir();
    let out_dir = out.path().join("r");
    let mut args = vec![
        "run",
        "-i",
        "all",
        "--verify",
        "--file-sizes",
        "256k,1m",
        "--record-sizes",
        "4k,64k",
        "--reps",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(target);
    let o = run(&args);
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        stderr(&o)
    );
    let recs = records(&out_dir);
    let ops: BTreeSet<&str> = recs.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ALL_OPS.iter().copied().collect(), "missing operations");
    for r in &recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["verify"], true);
        assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["throughput_kib_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["lat_count"].as_u64().unwrap() > 0, "{r}");
        assert!(r["lat_p50_us"].as_f64().unwrap() <= r["lat_max_us"].as_f64().unwrap());
    }
    // run.json and results.csv are there and agree with the JSONL.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(manifest["outcome"], "complete");
    assert_eq!(manifest["records"].as_u64().unwrap() as usize, recs.len());
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), recs.len() + 1);
    recs
}

#[test]
fn every_operation_verifies_on_tmpfs() {
    let target = shm_dir();
    let recs = every_op_verified(target.path().to_str().unwrap(), &[]);
    // 4 cells (256k/4k, 256k/64k, 1m/4k, 1m/64k) x 22 operations.
    assert_eq!(recs.len(), 4 * 22);
    // Bytes: every pass of every operation moves the whole file once.
    for r in &recs {
        assert_whole_file_per_pass(r);
    }
    let m = &recs[0];
    assert_eq!(m["backend"], "posix");
    assert_no_workdir(target.path());
}

#[test]
fn every_operation_verifies_in_mmap_mode() {
    let target = shm_dir();
    let recs = every_op_verified(target.path().to_str().unwrap(), &["--mmap"]);
    assert!(recs.iter().all(|r| r["mmap"] == true));
    assert_no_workdir(target.path());
}

#[test]
fn every_operation_verifies_with_three_workers() {
    let target = shm_dir();
    let recs = every_op_verified(
        target.path().to_str().unwrap(),
        &["--threads", "3", "--no-stonewall"],
    );
    let aggregates: Vec<&Value> = recs.iter().filter(|r| r["scope"] == "aggregate").collect();
    let workers = recs.iter().filter(|r| r["scope"] == "worker").count();
    assert_eq!(aggregates.len(), 4 * 22);
    assert_eq!(workers, 3 * 4 * 22);
    for a in aggregates {
        let t = &a["throughput"];
        let children = t["children_see_kib_s"].as_f64().unwrap();
        // Every worker's interval lies inside the parent's, so the parent never sees more.
        assert!(
            t["parent_sees_kib_s"].as_f64().unwrap() <= children * (1.0 + 1e-9),
            "{a}"
        );
        // Without stonewalling every worker moves its whole file.
        assert_eq!(
            a["bytes"].as_u64().unwrap(),
            3 * a["file_size"].as_u64().unwrap(),
            "{a}"
        );
        assert!(t["min_worker_kib_s"].as_f64().unwrap() <= t["avg_worker_kib_s"].as_f64().unwrap());
        assert!(t["avg_worker_kib_s"].as_f64().unwrap() <= t["max_worker_kib_s"].as_f64().unwrap());
        assert!(
            (t["avg_worker_kib_s"].as_f64().unwrap() * 3.0 - children).abs()
                < 1e-6 * children.max(1.0)
        );
    }
    assert_no_workdir(target.path());
}

#[test]
fn stonewalling_freezes_figures_when_the_first_worker_finishes() {
    let target = shm_dir();
    let out = shm_dir();
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--threads",
        "2",
        "--file-sizes",
        "8m",
        "--record-sizes",
        "4k",
        "--reps",
        "3",
        "--out",
        out.path().join("r").to_str().unwrap(),
        target.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out.path().join("r"));
    for a in recs.iter().filter(|r| r["scope"] == "aggregate") {
        let min_xfer = a["throughput"]["min_xfer_bytes"].as_u64().unwrap();
        assert!(min_xfer <= 8 << 20);
        // At least one worker finished its file: it is what set the stonewall.
        assert_eq!(
            recs.iter()
                .filter(|w| w["scope"] == "worker" && w["op"] == a["op"] && w["rep"] == a["rep"])
                .map(|w| w["bytes"].as_u64().unwrap())
                .max(),
            Some(8 << 20)
        );
        if a["stonewalled"] == true {
            assert!(min_xfer < 8 << 20, "{a}");
        }
    }
}

#[test]
fn every_operation_verifies_on_loop_mounted_xfs_with_and_without_o_direct() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let m = LoopMount::new("xfs", "512M", true);
    let recs = every_op_verified(m.path(), &["--cache", "drop"]);
    let r = &recs[0];
    assert_eq!(r["client"], "kernel");
    // The first operation of each test ran with a cold cache, and says how.
    assert!(
        recs.iter().any(|r| r["cache_purge"] == "drop_caches"),
        "no purge recorded"
    );
    let direct = every_op_verified(m.path(), &["--direct"]);
    assert!(direct.iter().all(|r| r["direct"] == true));
    // The manifest names the file system.
    assert_no_workdir(&m.dir);
}
