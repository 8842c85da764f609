//! The workloads beyond IOzone's matrix, end to end through the binary: metadata
//! (Connectathon basic tests and the count sweep), smallfiles (with and without the real
//! rsync), stream (fragmentation on loop-mounted ext3 and xfs), and their bad input.

mod common;
use common::*;
use serde_json::Value;

fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

fn f(r: &Value, k: &str) -> f64 {
    r[k].as_f64().unwrap_or(f64::NAN)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
fn metadata_sweep_and_every_basic_test_on_tmpfs() {
    let t = shm_dir();
    let out = t.path().join("out");
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let o = run(&[
        "run",
        "-w",
        "metadata",
        "-n",
        "2",
        "--counts",
        "10,100,300",
        "--file-sizes",
        "64k,2m",
        "-o",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    ok(&o);
    let recs = records(&out);
    assert!(recs
        .iter()
        .all(|r| r["workload"] == "metadata" && r["status"] == "ok"));
    // The sweep: every count has create and remove rates for files and directories.
    for op in ["create-file", "create-dir", "remove-file", "remove-dir"] {
        for n in [10, 100, 300] {
            let hits: Vec<&Value> = recs
                .iter()
                .filter(|r| r["op"] == op && r["files"] == n)
                .collect();
            assert_eq!(hits.len(), 2, "{op} n={n}");
            assert!(hits
                .iter()
                .all(|r| r["count"] == n && f(r, "ops_per_s") > 0.0));
            assert!(hits.iter().all(|r| r["lat_count"] == n));
        }
    }
    for (test, op) in [
        ("test3", "lookup"),
        ("test4", "setattr"),
        ("test4", "getattr"),
        ("test5", "write-large"),
        ("test5", "read-buffered"),
        ("test5", "read-uncached"),
        ("test6", "readdir"),
        ("test6", "unlink"),
        ("test7", "rename"),
        ("test7", "getattr"),
        ("test7", "link"),
        ("test8", "symlink"),
        ("test8", "getattr"),
        ("test8", "readlink"),
        ("test9", "statfs"),
    ] {
        assert!(
            recs.iter().any(|r| r["test"] == test && r["op"] == op),
            "no {test} {op}"
        );
    }
    // Each test but test5 has a whole-test record over its wall time. The wall covers at
    // least the summed call times, so its rate never exceeds the fastest operation type's.
    for test in [
        "test1", "test2", "test3", "test4", "test6", "test7", "test8", "test9",
    ] {
        let wholes: Vec<&Value> = recs
            .iter()
            .filter(|r| r["test"] == test && r["op"] == "whole-test")
            .collect();
        assert!(!wholes.is_empty(), "no whole-test record for {test}");
        for w in wholes {
            let parts = recs.iter().filter(|r| {
                r["test"] == test
                    && r["op"] != "whole-test"
                    && r["rep"] == w["rep"]
                    && r["started_at"] == w["started_at"]
            });
            let fastest = parts.map(|r| f(r, "ops_per_s")).fold(0.0, f64::max);
            assert!(
                f(w, "ops_per_s") > 0.0 && f(w, "ops_per_s") <= fastest * (1.0 + 1e-9),
                "{test}: {w}"
            );
        }
    }
    assert!(!recs
        .iter()
        .any(|r| r["test"] == "test5" && r["op"] == "whole-test"));
    // test6 as cthon04 runs it: the directory shrinks by one file a pass, each pass
    // followed by the removal of one file (200 passes over 200 files by default).
    let test6 = |op: &str| {
        recs.iter()
            .filter(|r| r["test"] == "test6" && r["op"] == op)
            .map(|r| r["count"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert!(!test6("readdir").is_empty());
    assert_eq!(test6("readdir"), test6("unlink"));
    // test7's five stats per rename and link, cthon04's.
    let count = |test: &str, op: &str| {
        recs.iter()
            .find(|r| r["test"] == test && r["op"] == op)
            .map(|r| r["count"].as_u64().unwrap())
            .unwrap()
    };
    assert_eq!(count("test7", "getattr"), 5 * count("test7", "rename"));
    let reads: Vec<&Value> = recs.iter().filter(|r| r["op"] == "read-uncached").collect();
    assert_eq!(reads.len(), 4);
    assert!(reads
        .iter()
        .all(|r| r["cache_purge"].is_string() && r["bytes"] == r["file_size"]));
    assert_no_workdir(&target);
    assert!(stdout(&o).contains("test1 create-file n=300"));
}

#[test]
fn smallfiles_phases_with_and_without_rsync_on_tmpfs() {
    let t = shm_dir();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let out = t.path().join("plain");
    let o = run(&[
        "run",
        "-w",
        "smallfiles",
        "-n",
        "1",
        "-o",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    ok(&o);
    let recs = records(&out);
    let ops: Vec<&str> = recs.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(
        ops,
        ["copy", "resync-nochange", "resync-modified", "delete"]
    );
    let copy = &recs[0];
    assert_eq!(copy["bytes"], 35_000_000);
    assert_eq!(copy["count"], 1800);
    assert!(f(copy, "cpu_total_s") > 0.0 && f(copy, "ops_per_s") > 0.0);
    assert_eq!(recs[1]["count"], 0, "an unchanged re-sync writes nothing");
    let modified = recs[2]["count"].as_u64().unwrap();
    assert!((150..=210).contains(&modified), "{modified}");
    assert_no_workdir(&target);

    let out = t.path().join("rsync");
    let o = run(&[
        "run",
        "-w",
        "smallfiles",
        "--with-rsync",
        "-n",
        "1",
        "-o",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    ok(&o);
    let recs = records(&out);
    let ops: Vec<&str> = recs.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(
        ops,
        [
            "copy",
            "rsync-copy",
            "resync-nochange",
            "rsync-resync-nochange",
            "resync-modified",
            "rsync-resync-modified",
            "delete",
            "rsync-delete"
        ]
    );
    // rsync's own CPU is counted (a child process).
    assert!(f(&recs[1], "cpu_total_s") > 0.0);
    assert_no_workdir(&target);
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("sharebench-src-")
        })
        .filter(|e| {
            let run = recs[0]["run_id"].as_str().unwrap().to_string();
            e.file_name().to_string_lossy().contains(&run)
        })
        .collect();
    assert!(left.is_empty(), "rsync source left behind");
}

#[test]
fn stream_at_a_bit_rate_and_without_fiemap_on_tmpfs() {
    let t = shm_dir();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let out = t.path().join("out");
    let o = run(&[
        "run",
        "-w",
        "stream",
        "--streams",
        "1,2",
        "--stream-size",
        "4m",
        "--bitrate",
        "200mbit",
        "--prealloc-hints",
        "windows",
        "--prealloc",
        "zero-fill",
        "-n",
        "1",
        "-o",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    ok(&o);
    let recs = records(&out);
    let aggs: Vec<&Value> = recs.iter().filter(|r| r["scope"] != "worker").collect();
    assert_eq!(aggs.len(), 4);
    for r in &aggs {
        assert_eq!(r["bitrate_bps"], 200_000_000);
        assert!(f(r, "achieved_bps") > 150e6, "{r}");
        // tmpfs has no FIEMAP: marked unavailable, the rest ran.
        assert!(r["extents_per_file"].is_null());
        assert!(
            r["note"]
                .as_str()
                .unwrap()
                .contains("fragmentation unavailable"),
            "{r}"
        );
        assert_eq!(r["prealloc_hints"], "windows");
        assert_eq!(r["prealloc"], "zero-fill");
    }
    assert_no_workdir(&target);

    // A bit rate that cannot be sustained is a finding, not a failure.
    let out = t.path().join("fast");
    let recs = stream_run(
        &out,
        "64m",
        "1",
        &["--bitrate", "900gbit"],
        &[target.to_str().unwrap()],
    );
    assert!(recs[0]["note"]
        .as_str()
        .unwrap()
        .contains("bit rate not sustained"));
}

#[test]
fn bad_workload_input_is_one_line_and_exit_2() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    for (args, needle) in [
        (
            vec!["run", "-w", "metadata", "--counts", "0", p],
            "at least 1",
        ),
        (vec!["run", "-w", "metadata", "--counts", "10,x", p], "'x'"),
        (
            vec!["run", "-w", "stream", "--streams", "0", p],
            "at least 1",
        ),
        (vec!["run", "-w", "stream", "--bitrate", "fast", p], "fast"),
        (vec!["run", "--counts", "10", p], "--workload metadata"),
        (
            vec!["run", "-w", "smallfiles", "--with-rsync", "null://"],
            "directory targets",
        ),
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_no_workdir(t.path());
}

#[test]
fn counts_too_large_for_free_inodes_are_refused_up_front() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let small = TmpfsMount::new("size=8m,nr_inodes=500");
    let o = run(&[
        "run",
        "-w",
        "metadata",
        "--counts",
        "100,1000",
        small.path(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("free inodes"), "{err}");
    let o = run(&[
        "run",
        "-w",
        "stream",
        "--stream-size",
        "64m",
        "--streams",
        "1",
        small.path(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    assert_no_workdir(small.dir.path());
}

/// Records of target `t` and operation `op`.
fn ext<'a>(recs: &'a [Value], t: &str, op: &str) -> Vec<&'a Value> {
    recs.iter()
        .filter(|r| r["target"] == t && r["op"] == op)
        .collect()
}

/// Extents per file of the target's streams, the median over the run's repetitions: once
/// in many CI runs one repetition on xfs came out in 244 extents instead of 1 (not seen again
/// in dozens of runs, with or without sync and drop_caches in a loop beside it), and the
/// claim is about the allocator's policy, not one repetition.
fn extents(recs: &[Value], t: &str) -> f64 {
    let per_rep: Vec<f64> = ext(recs, t, "record")
        .iter()
        .map(|r| f(r, "extents_per_file"))
        .collect();
    eprintln!("{t}: extents per repetition {per_rep:?}");
    assert!(per_rep.len() >= 3, "{t}: {} repetitions", per_rep.len());
    median(per_rep)
}

/// The /sys/fs/ext4/DEV directory of the file system mounted at `dir`.
fn ext4_sysfs(dir: &str) -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let dev = mounts
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(dir))
        .and_then(|l| l.split_whitespace().next())
        .unwrap();
    format!("/sys/fs/ext4/{}", dev.trim_start_matches("/dev/"))
}

/// Records and plays back one stream with the Windows hints on each target; returns the
/// aggregate records per target.
fn hinted_streams(targets: &[&str], out: &std::path::Path) -> Vec<Value> {
    stream_run(out, "128m", "3", &["--prealloc-hints", "windows"], targets)
}

#[test]
fn windows_hints_fragment_ext3_not_xfs_on_direct_io_loop_devices() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let ext3 = LoopMount::new("ext3", "1G", true);
    let xfs = LoopMount::new("xfs", "1G", true);
    let scratch = tempfile::tempdir().unwrap();

    // Today's kernel serves ext3 with ext4's multiblock allocator, whose per-inode
    // preallocation places blocks by file offset: the hints cost a handful of extents.
    let recs = hinted_streams(&[ext3.path(), xfs.path()], &scratch.path().join("default"));
    let (e3, ex) = (extents(&recs, ext3.path()), extents(&recs, xfs.path()));
    eprintln!("default allocator: ext3 {e3} extents, xfs {ex}");
    assert!(ex <= 4.0, "xfs: {ex} extents");

    // 2007's ext3 allocated blocks in the order they were written. ext4's allocator does
    // that for "small" files (the locality-group preallocation): raising mb_stream_req
    // makes every file small, and the seed's fragmentation appears.
    let knob = format!("{}/mb_stream_req", ext4_sysfs(ext3.path()));
    std::fs::write(&knob, "2000000000").unwrap();
    let recs = hinted_streams(
        &[ext3.path(), xfs.path()],
        &scratch.path().join("write-order"),
    );
    let (e3, ex) = (extents(&recs, ext3.path()), extents(&recs, xfs.path()));
    let play = |t: &str| {
        median(
            ext(&recs, t, "playback")
                .iter()
                .map(|r| f(r, "throughput_kib_s"))
                .collect(),
        )
    };
    let (p3, px) = (play(ext3.path()), play(xfs.path()));
    eprintln!("write-order allocator: ext3 {e3} extents, xfs {ex}; playback ext3 {p3:.0} KiB/s, xfs {px:.0} KiB/s");
    // One hint block per 128 KiB splits the data: about two extents per 128 KiB.
    assert!(
        e3 >= 500.0 && e3 >= 20.0 * ex.max(1.0),
        "ext3 {e3}, xfs {ex}"
    );
    // Whether the fragments slow playback is a timing, which one run on a shared machine
    // cannot decide (it failed once while builds ran): the media-prealloc study decides
    // it over alternating blocks (claim fragmentation-slows-playback). Here: the extents.
    assert!(recs.iter().all(|r| r["status"] == "ok"));
    assert_no_workdir(&ext3.dir);
    assert_no_workdir(&xfs.dir);
}

#[test]
fn metadata_and_smallfiles_on_loop_mounted_ext3_and_xfs() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let ext3 = LoopMount::new("ext3", "512M", true);
    let xfs = LoopMount::new("xfs", "512M", true);
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("m");
    let o = run(&[
        "run",
        "-w",
        "metadata",
        "-n",
        "1",
        "--counts",
        "100,1000",
        "--file-sizes",
        "8m",
        "-o",
        out.to_str().unwrap(),
        ext3.path(),
        xfs.path(),
    ]);
    ok(&o);
    let recs = records(&out);
    for t in [ext3.path(), xfs.path()] {
        let cold = recs
            .iter()
            .find(|r| r["target"] == t && r["op"] == "read-uncached")
            .unwrap();
        assert_eq!(cold["cache_purge"], "drop_caches");
    }
    let out = scratch.path().join("s");
    let o = run(&[
        "run",
        "-w",
        "smallfiles",
        "--with-rsync",
        "-n",
        "1",
        "-o",
        out.to_str().unwrap(),
        ext3.path(),
        xfs.path(),
    ]);
    ok(&o);
    assert_eq!(records(&out).len(), 16);
    assert_no_workdir(&ext3.dir);
    assert_no_workdir(&xfs.dir);
}

/// The load workload on tmpfs: ten load points stepping the rate, each valid and within 1%
/// of its rate at these low loads, one record per point; bad mixes are one line.
#[test]
fn load_points_on_tmpfs_keep_their_rate() {
    let t = shm_dir();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("load");
    let o = run(&[
        "run",
        "-w",
        "load",
        "--mix",
        "build",
        "-t",
        "2",
        "--iodepth",
        "2",
        "--rate-start",
        "400",
        "--rate-step",
        "400",
        "--points",
        "10",
        "--point-time",
        "1s",
        "-n",
        "1",
        "-o",
        out.to_str().unwrap(),
        t.path().to_str().unwrap(),
    ]);
    ok(&o);
    let recs = records(&out);
    let points: Vec<&Value> = recs.iter().filter(|r| r["op"] == "load").collect();
    assert_eq!(points.len(), 10, "{}", stdout(&o));
    for (i, r) in points.iter().enumerate() {
        let (asked, done) = (f(r, "requested_ops_s"), f(r, "ops_per_s"));
        assert!((asked - 400.0 * (i + 1) as f64).abs() < 1.0, "{r}");
        assert!(
            (done / asked - 1.0).abs() <= 0.01,
            "point {i}: {done} of {asked}: {r}"
        );
        assert_eq!(r["valid"], true, "{r}");
        assert_eq!(r["mix"], "build");
        assert_eq!(
            (&r["threads"], &r["iodepth"]),
            (&2.into(), &2.into()),
            "{r}"
        );
        assert!(f(r, "lat_p99_us") >= f(r, "lat_p50_us"), "{r}");
        assert!(f(r, "cpu_total_s") > 0.0 && f(r, "bytes") > 0.0, "{r}");
    }
    assert!(stdout(&o).contains("load mix build"), "{}", stdout(&o));
    assert_no_workdir(t.path());

    let bad = scratch.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\nabout = \"y\"\nfiles = 1\nfile_sizes = [{ size = \"4k\", weight = 1 }]\n[[op]]\nkind = \"teleport\"\nweight = 1\n").unwrap();
    for (args, says) in [
        (vec!["--mix", bad.to_str().unwrap()], "teleport"),
        (vec![], "needs --mix"),
        (vec!["--mix", "build", "--rate-start", "10"], "at least 100"),
        (
            vec!["--mix", "build", "-t", "64", "--iodepth", "32"],
            "at most 1024",
        ),
    ] {
        let mut a = vec!["run", "-w", "load"];
        a.extend(args);
        a.push(t.path().to_str().unwrap());
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
}
