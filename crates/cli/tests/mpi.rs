//! Multi-client runs under OpenMPI's mpirun, three ranks on this machine: every rank
//! measures its own files, rank 0 writes per-rank records (with rank and host) and one
//! aggregate per measurement whose children-see is the sum of the ranks' figures; a
//! target no rank can use ends the whole run at once with one line.
#![cfg(feature = "mpi")]

mod common;
use common::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

fn mpirun(np: &str, args: &[&str]) -> std::process::Output {
    let cwd = tempfile::tempdir().unwrap();
    mpirun_in(cwd.path(), np, args)
}

/// mpirun in `cwd` (where a run without --out leaves its results).
fn mpirun_in(cwd: &std::path::Path, np: &str, args: &[&str]) -> std::process::Output {
    let status = Command::new("mpirun").arg("--version").output();
    assert!(
        status.is_ok(),
        "mpirun is missing: run scripts/install-deps.sh (openmpi-bin)"
    );
    Command::new("mpirun")
        .current_dir(cwd)
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--timeout",
            "300",
            "-np",
            np,
        ])
        .arg(env!("CARGO_BIN_EXE_sharebench"))
        .args(args)
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .unwrap()
}

#[test]
fn three_ranks_write_their_own_files_and_rank_0_sums_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let shm = shm_dir();
    let o = mpirun(
        "3",
        &[
            "run",
            "null://",
            shm.path().to_str().unwrap(),
            "-i",
            "write,read",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--reps",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o).matches("Results: ").count(),
        1,
        "only rank 0 prints: {}",
        stdout(&o)
    );
    let recs = records(&out);
    // 2 targets x 2 ops x 2 reps measurements, each 3 rank records and 1 aggregate.
    assert_eq!(recs.len(), 2 * 2 * 2 * 4, "{recs:#?}");
    for agg in recs.iter().filter(|r| r["scope"] == "aggregate") {
        let parts: Vec<&Value> = recs
            .iter()
            .filter(|r| {
                r["scope"] == "worker"
                    && r["target"] == agg["target"]
                    && r["op"] == agg["op"]
                    && r["rep"] == agg["rep"]
            })
            .collect();
        assert_eq!(parts.len(), 3);
        let mut ranks: Vec<u64> = parts.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, vec![0, 1, 2]);
        assert!(parts.iter().all(|r| r["host"].as_str().is_some()));
        let sum: f64 = parts
            .iter()
            .map(|r| r["throughput_kib_s"].as_f64().unwrap())
            .sum();
        let children = agg["throughput_kib_s"].as_f64().unwrap();
        assert!(
            (children - sum).abs() <= 1e-6 * sum,
            "aggregate {children} != sum {sum}"
        );
        assert_eq!(agg["threads"], 3);
        // The ranks' bytes (fewer than 3 files' worth where the stonewall struck).
        let bytes: u64 = parts.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
        assert_eq!(agg["bytes"].as_u64(), Some(bytes));
        assert!((1 << 20..=3 << 20).contains(&bytes), "{bytes}");
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(manifest["hosts"].as_array().map(Vec::len), Some(3));
    // Every host says how it reached each target.
    for h in manifest["hosts"].as_array().unwrap() {
        let t = h["targets"].as_array().unwrap();
        assert_eq!(t.len(), 2, "{h}");
        assert_eq!(t[1]["fs_type"], "tmpfs", "{h}");
    }
    assert_no_workdir(shm.path());
}

#[test]
fn a_target_no_rank_can_use_ends_the_run_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let o = mpirun(
        "3",
        &[
            "run",
            "/nonexistent/sharebench-target",
            "--file-sizes",
            "1m",
            "--out",
            tmp.path().join("out").to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
    let e = stderr(&o);
    assert!(e.contains("rank 0 on "), "{e}");
    assert!(e.contains("/nonexistent/sharebench-target"), "{e}");
}

#[test]
fn iozone_throughput_mode_under_mpirun_counts_every_ranks_workers() {
    let shm = shm_dir();
    let o = mpirun(
        "2",
        &[
            "iozone",
            "-t",
            "2",
            "-s",
            "1m",
            "-r",
            "64k",
            "-i",
            "0",
            shm.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(
        text.matches("Children see throughput for  4 initial writers")
            .count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("iozone test complete.").count(), 1, "{text}");
    assert_no_workdir(shm.path());
}

/// The stonewall strikes across ranks: in each measurement the first rank to finish stops
/// the others, which record fewer bytes than the file holds and say they were stonewalled;
/// with --no-stonewall every rank moves the whole file. Several measurements in a row
/// also show that no stonewall message is left over for the next one (a leftover would
/// stop the next measurement at its start, or hang the run; mpirun's timeout ends that).
#[test]
fn the_first_rank_to_finish_stonewalls_the_others() {
    let file = 1u64 << 30;
    let run = |extra: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut args = vec![
            "run",
            "null://",
            "-i",
            "write,read",
            "--file-sizes",
            "1g",
            "--record-sizes",
            "4k",
            "--reps",
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = mpirun("3", &args);
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        records(&out)
            .into_iter()
            .filter(|r| r["scope"] == "worker")
            .collect::<Vec<Value>>()
    };
    let workers = run(&[]);
    assert_eq!(workers.len(), 2 * 3 * 3, "{workers:#?}");
    let mut struck = 0;
    for r in &workers {
        let bytes = r["bytes"].as_u64().unwrap();
        if r["stonewalled"] == true {
            assert!(bytes < file, "a stonewalled rank moved the whole file: {r}");
            struck += 1;
        } else {
            assert_eq!(bytes, file, "{r}");
        }
    }
    // Three ranks on two cores never finish within half a millisecond of each other
    // in all six measurements.
    assert!(struck > 0, "no rank was ever stonewalled: {workers:#?}");
    for r in run(&["--no-stonewall"]) {
        assert_eq!(r["stonewalled"], false, "{r}");
        assert_eq!(r["bytes"].as_u64().unwrap(), file, "{r}");
    }
}

/// The metadata and stream workloads under mpirun: every rank runs the same tests on its
/// own files, each test starting on all ranks together; rank 0 writes one worker record
/// per rank and an aggregate whose counts and rates are the ranks' sums (mdtest's way).
#[test]
fn metadata_and_stream_workloads_add_up_across_ranks() {
    let shm = shm_dir();
    for (workload, extra) in [
        ("metadata", &["--counts", "40", "--file-sizes", "64k"][..]),
        (
            "stream",
            &[
                "--streams",
                "2",
                "--stream-size",
                "2m",
                "--bitrate",
                "1gbit",
            ][..],
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut args = vec![
            "run",
            "-w",
            workload,
            "-n",
            "1",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(shm.path().to_str().unwrap());
        let o = mpirun("3", &args);
        assert!(o.status.success(), "{workload}: {}", stderr(&o));
        let recs = records(&out);
        let aggs: Vec<&Value> = recs.iter().filter(|r| r["scope"] == "aggregate").collect();
        assert!(!aggs.is_empty(), "{workload}: no aggregate");
        assert!(recs.iter().all(|r| r["status"] == "ok"), "{workload}");
        for agg in aggs {
            // The records just before an aggregate are its workers, numbered across ranks.
            let at = recs.iter().position(|r| std::ptr::eq(r, agg)).unwrap();
            let n = agg["threads"].as_u64().unwrap() as usize;
            let workers = &recs[at - n..at];
            let ranks: std::collections::BTreeSet<u64> = workers
                .iter()
                .map(|r| r["rank"].as_u64().unwrap())
                .collect();
            assert_eq!(ranks.len(), 3, "{workload}: {agg}");
            assert!(
                workers.iter().all(|r| r["op"] == agg["op"]),
                "{workload}: {agg}"
            );
            let sum = |key: &str| -> f64 { workers.iter().filter_map(|r| r[key].as_f64()).sum() };
            // A stream rank's own aggregate is its bytes over its wall time, not the sum
            // of its streams' rates: the cross-rank one adds those up, not the streams'.
            let keys: &[&str] = if workload == "stream" {
                &["bytes", "count"]
            } else {
                &["bytes", "count", "ops_per_s", "throughput_kib_s"]
            };
            for &key in keys {
                if let Some(a) = agg[key].as_f64() {
                    assert!(
                        (a - sum(key)).abs() <= 1e-6 * a.max(1.0),
                        "{workload} {key}: {agg}"
                    );
                }
            }
        }
        if workload == "metadata" {
            let creates = recs
                .iter()
                .find(|r| r["scope"] == "aggregate" && r["op"] == "create-file")
                .unwrap();
            assert_eq!(creates["count"], 120, "{creates}");
            assert_eq!(creates["threads"], 3);
        }
    }
    assert_no_workdir(shm.path());
}

/// A study's multi-client step on the user's own client machines (`study run --hostfile`):
/// mpirun starts one rank per slot of their hostfile (here three on this machine), every
/// rank with the same mapping of roles to targets, and the claim is read from their sums.
#[test]
fn a_study_runs_its_multi_client_step_on_the_users_hostfile() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (shm_dir(), tempfile::tempdir_in("/var/tmp").unwrap());
    let study = tmp.path().join("clients.toml");
    std::fs::write(
        &study,
        r#"
name = "clients"
title = "Three clients"
seed = "none"
question = "Which is faster from three clients?"
about = "For tests."
[roles.a]
about = "server a"
maps_to = "a directory"
[roles.b]
about = "server b"
maps_to = "a directory"
[scales.tiny]
minutes = 1
vars = {}
[[steps]]
id = "three"
title = "three clients at once"
targets = ["a", "b"]
clients = 3
run = "-i write,read --file-sizes 1m --record-sizes 64k"
[[claims]]
id = "b-faster"
said = "b is faster from three clients"
check = { kind = "faster", step = "three", a = "b", b = "a", ops = ["write", "read"], threads = 3 }
"#,
    )
    .unwrap();
    let hosts = tmp.path().join("hosts");
    let out = tmp.path().join("run");
    let study_run = |hostfile: &str| {
        study_tiny(
            &study,
            &[
                "--target",
                &format!("a={}", a.path().display()),
                "--target",
                &format!("b={}", b.path().display()),
                "--hostfile",
                hostfile,
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    // Two slots for a step of three clients: not run, and said why.
    std::fs::write(&hosts, "localhost slots=2\n").unwrap();
    let o = study_run(hosts.to_str().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("holds 2 slots"), "{}", stdout(&o));
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::write(&hosts, "localhost slots=3\n").unwrap();
    let o = study_run(hosts.to_str().unwrap());
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out.join("steps/three"));
    for role in ["a", "b"] {
        let ranks: std::collections::BTreeSet<u64> = recs
            .iter()
            .filter(|r| r["target"] == role && r["scope"] == "worker")
            .filter_map(|r| r["rank"].as_u64())
            .collect();
        assert_eq!(ranks.len(), 3, "{role}: ranks {ranks:?}");
    }
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains("b-faster:"))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(line.contains("3 workers, children-see"), "{}", stdout(&o));
    let o = study_tiny(
        &study,
        &[
            "--target",
            &format!("a={}", a.path().display()),
            "--hostfile",
            "/no/such/hosts",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--hostfile /no/such/hosts"),
        "{}",
        stderr(&o)
    );
}
