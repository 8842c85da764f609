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
/// Samples of 10 ms: a few rounds of all 23 operations per cell, each round verified on a
/// file written anew, without the seconds of 100 ms samples.
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
        "--min-sample-time",
        "10ms",
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
    // A sample is rounds of the whole cell: every operation of a cell has as many passes
    // as the others, and the small cells needed more than one.
    for cell in recs.chunks(22) {
        let passes = |r: &Value| r["passes"].as_u64().unwrap();
        assert!(
            cell.iter().all(|r| passes(r) == passes(&cell[0])),
            "{cell:?}"
        );
    }
    assert!(recs.iter().any(|r| r["passes"].as_u64() > Some(1)));
    let m = &recs[0];
    assert_eq!(m["backend"], "posix");
    // Without --iodepth, one request at a time, IOzone's way, and the records say so.
    assert!(recs.iter().all(|r| r["iodepth"] == 1));
    assert_no_workdir(target.path());
}

/// The operations `--iodepth` cannot overlap: one record written over itself, and stdio.
const DEPTH_ONE_OPS: [&str; 5] = ["record-rewrite", "fwrite", "frewrite", "fread", "freread"];

/// Checks each record's depth: `depth`, except for the operations that run at 1.
fn assert_depths(recs: &[Value], depth: u64) {
    for r in recs {
        let want = if DEPTH_ONE_OPS.contains(&r["op"].as_str().unwrap()) {
            1
        } else {
            depth
        };
        assert_eq!(r["iodepth"].as_u64(), Some(want), "{r}");
    }
}

#[test]
fn every_operation_verifies_with_eight_requests_in_flight() {
    let target = shm_dir();
    let recs = every_op_verified(target.path().to_str().unwrap(), &["--iodepth", "8"]);
    assert_eq!(recs.len(), 4 * 22);
    assert_depths(&recs, 8);
    for r in &recs {
        assert_whole_file_per_pass(r);
    }
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
    // A sample of throughput mode is rounds too: some cells took more than one.
    assert!(aggregates.iter().any(|a| a["passes"].as_u64() > Some(1)));
    for a in aggregates {
        let t = &a["throughput"];
        let children = t["children_see_kib_s"].as_f64().unwrap();
        // Every worker's interval lies inside the parent's, so the parent never sees more.
        assert!(
            t["parent_sees_kib_s"].as_f64().unwrap() <= children * (1.0 + 1e-9),
            "{a}"
        );
        // Without stonewalling every worker moves its whole file in every round.
        let passes = a["passes"].as_u64().unwrap();
        assert_eq!(
            a["bytes"].as_u64().unwrap(),
            3 * a["file_size"].as_u64().unwrap() * passes,
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
        // One pass per sample: which worker stops the others may change from round to round.
        "--min-sample-time",
        "0",
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
    // io_uring with O_DIRECT: aligned slots, every operation verified.
    let deep = every_op_verified(m.path(), &["--direct", "--iodepth", "4"]);
    assert!(deep.iter().all(|r| r["direct"] == true));
    assert_depths(&deep, 4);
    // The manifest names the file system.
    assert_no_workdir(&m.dir);
}

/// `--reps auto` on two tmpfs directories: each cell is sampled at least six times and at
/// most --max-reps, every target alike, and the last round of each cell says why it
/// stopped; a cell's time cap stops it after its first round.
#[test]
fn reps_auto_samples_each_cell_until_it_is_known_or_capped() {
    let t = shm_dir();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = t.path().join("r");
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--file-sizes",
        "256k,1m",
        "--record-sizes",
        "64k",
        "--min-sample-time",
        "5ms",
        "--max-reps",
        "9",
        "--out",
        out.to_str().unwrap(),
        a,
        b,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Samples (--reps auto): 2 units"),
        "{}",
        stdout(&o)
    );
    // Taken in an order drawn for the run, listed as given.
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let order = &run_json["target_order"];
    assert!(
        *order == serde_json::json!([0, 1]) || *order == serde_json::json!([1, 0]),
        "{run_json}"
    );
    assert_eq!(run_json["targets"][0]["name"], a, "{run_json}");
    assert_eq!(run_json["targets"][1]["name"], b, "{run_json}");
    let recs = records(&out);
    for size in [256 << 10, 1 << 20] {
        let cell: Vec<&Value> = recs.iter().filter(|r| r["file_size"] == size).collect();
        let last = cell
            .iter()
            .map(|r| r["rep"].as_u64().unwrap())
            .max()
            .unwrap();
        assert!((5..=8).contains(&last), "6 to 9 samples, not {}", last + 1);
        assert_eq!(
            cell.len() as u64,
            (last + 1) * 2 * 2,
            "every round on both targets"
        );
        for r in &cell {
            let stop = r["reps_stop"].as_str();
            if r["rep"] == last && last < 8 {
                assert_eq!(stop, Some("converged"), "{r}");
            } else if r["rep"] == last {
                // The ninth round may settle it, or the cap does.
                assert!(matches!(stop, Some("converged" | "count-cap")), "{r}");
            } else {
                assert_eq!(stop, None, "{r}");
            }
        }
    }

    let out = t.path().join("capped");
    let o = run(&[
        "run",
        "-i",
        "write",
        "--file-sizes",
        "1m",
        "--max-cell-time",
        "1us",
        "--out",
        out.to_str().unwrap(),
        a,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The 1 MiB file's three default record sizes: one round each, stopped by the cap.
    let recs = records(&out);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert_eq!(
            (r["rep"].as_u64(), r["reps_stop"].as_str()),
            (Some(0), Some("time-cap"))
        );
    }
    // The report says so.
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        "--out",
        rep.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(
        html.contains("0 of 3 units used all their repetitions and 3 their time"),
        "no cap warning"
    );

    // A width no sample count reaches: six rounds, the count cap, and the line says how
    // many the width would take at the spread seen.
    let out = t.path().join("narrow");
    let o = run(&[
        "run",
        "-i",
        "write",
        "--file-sizes",
        "256k",
        "--record-sizes",
        "64k",
        "--min-sample-time",
        "1ms",
        "--max-reps",
        "6",
        "--ci-width",
        "0.001",
        "--out",
        out.to_str().unwrap(),
        a,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o);
    assert!(
        line.contains("1 stopped at 6 samples") && line.contains("±0.001% takes about"),
        "{line}"
    );
}

/// Samples taken beside two busy loops of another process record the CPU those took and
/// count as disturbed; the report says so.
#[test]
fn others_cpu_time_is_recorded_and_flags_disturbed_samples() {
    let t = shm_dir();
    let target = t.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = t.path().join("r");
    let mut hogs: Vec<std::process::Child> = (0..2)
        .map(|_| {
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--file-sizes",
        "1m",
        "--record-sizes",
        "64k",
        "--reps",
        "3",
        "--out",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    for h in &mut hogs {
        let _ = h.kill();
        let _ = h.wait();
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out);
    // Counted over each sample's span, which holds its passes and more.
    let span = |r: &serde_json::Value| r["machine_s"].as_f64().unwrap();
    assert!(recs
        .iter()
        .all(|r| span(r) >= r["seconds"].as_f64().unwrap()));
    let busy = recs
        .iter()
        .filter(|r| r["others_cpu_s"].as_f64().unwrap() > 0.25 * span(r))
        .count();
    assert!(
        busy * 2 > recs.len(),
        "{busy} of {} samples saw the loops",
        recs.len()
    );
    assert!(recs.iter().all(|r| r["steal_s"].as_f64().is_some()));
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        "--out",
        rep.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(
        html.contains("other guests (steal) or other processes took CPU time"),
        "no warning"
    );
}

/// One 64 KiB write to null:// with the `extra` options: what the run printed, and its
/// run.json when it wrote one.
fn null_write_with(extra: &[&str]) -> (std::process::Output, Option<Value>) {
    let t = shm_dir();
    let out = t.path().join("r");
    let out_arg = out.to_str().unwrap();
    let mut args = vec!["run", "-i", "write", "--file-sizes", "64k", "--reps", "1"];
    args.extend_from_slice(extra);
    args.extend(["--out", out_arg, "null://"]);
    let o = run(&args);
    let manifest = std::fs::read_to_string(out.join("run.json"))
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    (o, manifest)
}

/// `--cpus 0`: the run keeps to CPU 0 and run.json says so.
#[test]
fn cpus_are_recorded_in_the_plan() {
    let (o, run) = null_write_with(&["--cpus", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = run.unwrap();
    assert_eq!(run["plan"]["cpus"], serde_json::json!([0]), "{run}");
}

/// By default idle CPUs poll where the run may ask for it (root) and the plan says so;
/// where it may not, the run goes on with a one-line note. `--let-cpus-idle` asks nothing
/// and says nothing; with `--keep-cpus-awake` too it is refused in one line.
#[test]
fn idle_cpus_poll_by_default_where_permitted() {
    let (o, run) = null_write_with(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let awake = run.unwrap()["plan"].get("keep_cpus_awake").cloned();
    let note = stderr(&o)
        .lines()
        .filter(|l| l.contains("note: idle CPUs may halt"))
        .count();
    if nix_is_root() {
        assert_eq!(awake, Some(serde_json::json!(true)));
        assert_eq!(note, 0, "{}", stderr(&o));
    } else {
        assert_eq!(awake, None);
        assert_eq!(note, 1, "{}", stderr(&o));
    }

    let (o, run) = null_write_with(&["--let-cpus-idle"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("idle CPUs"), "{}", stderr(&o));
    let run = run.unwrap();
    assert!(run["plan"].get("keep_cpus_awake").is_none(), "{run}");

    let (o, run) = null_write_with(&["--let-cpus-idle", "--keep-cpus-awake"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(run.is_none());
    assert!(stderr(&o).contains("--let-cpus-idle"), "{}", stderr(&o));
}

/// --keep-cpus-awake holds its request for the run and says so in the plan; without root
/// it is refused in one line before anything runs.
#[test]
fn keeping_cpus_awake_is_recorded_in_the_plan() {
    let (o, run) = null_write_with(&["--keep-cpus-awake"]);
    if !nix_is_root() {
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(
            err.lines().count() == 1 && err.contains("/dev/cpu_dma_latency"),
            "{err}"
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let run = run.unwrap();
    assert_eq!(run["plan"]["keep_cpus_awake"], true, "{run}");
}
