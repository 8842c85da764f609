//! Bad input: one clear line on stderr, exit 2 (1 once measuring started), no panic,
//! nothing lost.

mod common;
use common::*;

/// Asserts a single-line error that mentions `needle`, with the given exit code.
fn assert_one_line_error(args: &[&str], code: i32, needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "args {args:?}: stderr {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "args {args:?}: expected one line, got: {err}"
    );
    assert!(
        lines[0].contains(needle),
        "args {args:?}: {err:?} does not mention {needle:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn errors_point_to_the_help_of_their_subcommand() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(&["run", "--bogus", p], 2, "see 'sharebench run --help'");
    assert_one_line_error(
        &["lab", "up", "--bogus"],
        2,
        "see 'sharebench lab up --help'",
    );
    assert_one_line_error(&["--bogus"], 2, "see 'sharebench --help'");
    // The size grammar names every unit it takes.
    assert_one_line_error(&["run", "--file-sizes", "3q", p], 2, "kb or kib");
}

#[test]
fn sharebench_alone_prints_its_usage_not_an_error() {
    let o = run(&[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("Usage: sharebench <COMMAND>"), "{err}");
    assert!(err.contains("Examples:"), "{err}");
    assert!(!err.contains("error"), "{err}");
}

#[test]
fn run_help_teaches_with_examples_and_defaults() {
    let o = run(&["run", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    for needle in [
        "Examples:",
        "Default: 1m,16m,128m",
        "Default: 4k,64k,1m",
        "kb/kib",
        "sharebench report RESULTS_DIR",
        "--quiet",
    ] {
        assert!(help.contains(needle), "run --help lacks {needle:?}");
    }
}

#[test]
fn malformed_sizes() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(&["run", "--file-sizes", "12q", p], 2, "12q");
    assert_one_line_error(&["run", "--file-sizes", "-4k", p], 2, "-4k");
    assert_one_line_error(&["run", "--record-sizes", "0", p], 2, "'0'");
    assert_no_workdir(t.path());
}

#[test]
fn repetition_rules_out_of_range() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(&["run", "--reps", "0", p], 2, "neither auto nor a count");
    assert_one_line_error(&["run", "--reps", "some", p], 2, "'some'");
    assert_one_line_error(&["run", "--ci-width", "0", p], 2, "percentage above 0");
    assert_one_line_error(&["run", "--ci-width", "100%", p], 2, "below 100");
    assert_one_line_error(&["run", "--max-reps", "5", p], 2, "--max-reps");
    assert_one_line_error(&["run", "--max-cell-time", "0", p], 2, "--max-cell-time");
    assert_one_line_error(&["run", "--max-cell-time", "9", p], 2, "needs a unit");
    assert_one_line_error(&["report", "--threshold", "-1", "--out", p, p], 2, "'-1'");
    assert_one_line_error(&["run", "--cpus", "1-0", p], 2, "backwards");
    assert_one_line_error(&["run", "--iodepth", "0", p], 2, "--iodepth");
    assert_one_line_error(&["run", "--iodepth", "5000", p], 2, "--iodepth");
    assert_one_line_error(
        &["run", "--iodepth", "4", "--workload", "metadata", p],
        2,
        "--iodepth is for the IOzone matrix",
    );
    assert_one_line_error(
        &["run", "--cpus", "4095", p],
        2,
        "not one this process may use",
    );
    assert_no_workdir(t.path());
}

#[test]
fn lab_up_refuses_bad_configurations_before_building_anything() {
    // Checked before the lab is touched: no root, no state, no namespace needed.
    assert_one_line_error(
        &["lab", "up", "--fs", "zfs"],
        2,
        "unknown file system 'zfs'",
    );
    assert_one_line_error(&["lab", "up", "--fs", "xfs,xfs"], 2, "names 'xfs' twice");
    assert_one_line_error(
        &["lab", "up", "--fs", "ext4+fast"],
        2,
        "unknown option 'fast'",
    );
    assert_one_line_error(
        &["lab", "up", "--fs", "xfs+write-order"],
        2,
        "ext3 and ext4 only",
    );
    assert_one_line_error(&["lab", "up", "--server-cpus", "1-0"], 2, "backwards");
    assert_one_line_error(
        &["lab", "up", "--server-cpus", "4095"],
        2,
        "not one this process may use",
    );
}

#[test]
fn record_larger_than_file() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(
        &["run", "--file-sizes", "64k", "--record-sizes", "128k", p],
        2,
        "larger than the file size",
    );
}

#[test]
fn unknown_operation_and_flag() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(&["run", "-i", "write,frobnicate", p], 2, "frobnicate");
    assert_one_line_error(&["run", "--frobnicate", p], 2, "--frobnicate");
}

#[test]
fn zero_threads() {
    let t = shm_dir();
    assert_one_line_error(
        &["run", "--threads", "0", t.path().to_str().unwrap()],
        2,
        "threads",
    );
}

#[test]
fn target_missing_or_not_a_directory() {
    assert_one_line_error(&["run", "/nonexistent/sharebench"], 2, "does not exist");
    let t = shm_dir();
    let f = t.path().join("plain-file");
    std::fs::write(&f, b"x").unwrap();
    assert_one_line_error(&["run", f.to_str().unwrap()], 2, "not a directory");
    assert_one_line_error(&["run", "ftp://host/x"], 2, "unknown scheme");
}

#[test]
fn verify_on_null_is_refused() {
    assert_one_line_error(&["run", "--verify", "null://"], 2, "discards writes");
}

#[test]
fn out_directory_holding_someone_elses_files_is_refused() {
    let t = shm_dir();
    let out = shm_dir();
    let precious = out.path().join("thesis.tex");
    std::fs::write(&precious, b"precious").unwrap();
    assert_one_line_error(
        &[
            "run",
            "--file-sizes",
            "64k",
            "--out",
            out.path().to_str().unwrap(),
            t.path().to_str().unwrap(),
        ],
        2,
        "not sharebench's",
    );
    assert_eq!(std::fs::read(&precious).unwrap(), b"precious");
    assert_no_workdir(t.path());
}

#[test]
fn read_only_target() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let ro = TmpfsMount::new("ro,size=1m");
    assert_one_line_error(&["run", ro.path()], 2, "read-only file system");
}

#[test]
fn target_that_fills_up_keeps_earlier_records_and_fails() {
    require_root();
    if !nix_is_root() {
        return;
    }
    // 10 MiB of space, enough for the plan's largest file when the run starts; then
    // something else takes 6 MiB of it while the 1 MiB cells run (2 s each), so the 8 MiB
    // cell hits ENOSPC.
    let small = TmpfsMount::new("size=10m");
    let out = shm_dir();
    let out_dir = out.path().join("r");
    let child = bin()
        .args(["run", "-i", "write,read", "--file-sizes", "1m,8m"])
        .args([
            "--record-sizes",
            "64k",
            "--reps",
            "1",
            "--min-sample-time",
            "2s",
        ])
        .args(["--out", out_dir.to_str().unwrap(), small.path()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_dir(small.path())
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("sharebench-"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::write(small.dir.path().join("filler"), vec![1u8; 6 << 20]).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("failed") && err.to_lowercase().contains("space"),
        "{err}"
    );
    let recs = records(&out_dir);
    let ok = recs.iter().filter(|r| r["status"] == "ok").count();
    let failed: Vec<_> = recs.iter().filter(|r| r["status"] == "failed").collect();
    assert_eq!(ok, 2, "the 1 MiB write and read stay recorded");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["file_size"], 8 << 20);
    let manifest = std::fs::read_to_string(out_dir.join("run.json")).unwrap();
    assert!(manifest.contains("\"outcome\": \"failed\""));
    assert_no_workdir(small.dir.path());
}

#[test]
fn report_reads_no_input_without_bound() {
    let t = shm_dir();
    let out = t.path().join("rep");
    let out = out.to_str().unwrap();
    // A device never ends: refused before a byte is read (this took the OOM killer).
    assert_one_line_error(
        &["report", "/dev/zero", "--out", out],
        2,
        "not a regular file",
    );
    // A file far larger than any real output: refused by its size (sparse: no memory).
    let huge = t.path().join("huge.txt");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    assert_one_line_error(
        &["report", huge.to_str().unwrap(), "--out", out],
        2,
        "larger than 256 MiB",
    );
    // A records file whose line never ends: refused at 1 MiB, not read whole.
    let dir = t.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::fs::File::create(dir.join("results.jsonl"))
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    assert_one_line_error(
        &["report", dir.to_str().unwrap(), "--out", out],
        2,
        "longer than 1 MiB",
    );
    assert!(!std::path::Path::new(out).exists());
    // An --out that cannot be made is bad input for report as for run: exit 2.
    assert_one_line_error(
        &["report", "/dev/zero", "--out", "/dev/null/rep"],
        2,
        "cannot create --out /dev/null/rep: /dev/null is not a directory",
    );
    assert_one_line_error(
        &["run", "--out", "/dev/null/rep", "null://"],
        2,
        "cannot create --out /dev/null/rep",
    );
}

#[test]
fn a_target_given_twice_is_refused() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    let slash = format!("{p}/");
    assert_one_line_error(&["run", p, p], 2, "is given twice");
    assert_one_line_error(&["run", p, &slash], 2, "are the same");
    assert_one_line_error(&["run", "null://", "null://"], 2, "is given twice");
    assert_no_workdir(t.path());
    // The same directory through a bind mount is the same inode: one target.
    if nix_is_root() {
        let view = shm_dir();
        let ok = std::process::Command::new("mount")
            .args(["--bind", p, view.path().to_str().unwrap()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount --bind");
        let o = run(&[
            "run",
            "-i",
            "write",
            "--file-sizes",
            "64k",
            p,
            view.path().to_str().unwrap(),
        ]);
        let _ = std::process::Command::new("umount")
            .arg(view.path())
            .status();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("are the same (one directory"),
            "{}",
            stderr(&o)
        );
        assert_no_workdir(t.path());
    }
}

#[test]
fn output_lost_to_a_full_device_fails_the_command_and_help_works_everywhere() {
    let t = shm_dir();
    let out = t.path().join("r");
    let o = bin()
        .args([
            "run",
            "-i",
            "write",
            "--file-sizes",
            "64k",
            "--reps",
            "3",
            "--out",
        ])
        .arg(&out)
        .arg("null://")
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot write to standard output"),
        "{}",
        stderr(&o)
    );
    assert!(
        !records(&out).is_empty(),
        "the records are kept all the same"
    );
    for args in [
        &["iozone", "--help"][..],
        &["iozone", "-h"],
        &["clean", "--help"],
    ] {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("sharebench") || stdout(&o).contains("Usage"),
            "{args:?}"
        );
    }
}

#[test]
fn report_says_which_records_it_cannot_believe() {
    let t = shm_dir();
    let good = t.path().join("good");
    let o = bin()
        .args([
            "run",
            "-i",
            "write",
            "--file-sizes",
            "64k",
            "--record-sizes",
            "4k,16k",
            // A few records are all this needs; --reps auto on null:// runs to its cap.
            "--reps",
            "3",
        ])
        .arg("--out")
        .arg(&good)
        .arg("null://")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(good.join("results.jsonl")).unwrap();
    let first = text.lines().next().unwrap();
    let with = |figure: &str| {
        let v: serde_json::Value = serde_json::from_str(first).unwrap();
        let mut v = v.as_object().unwrap().clone();
        v.insert(
            "throughput_kib_s".into(),
            serde_json::from_str(figure).unwrap(),
        );
        serde_json::to_string(&v).unwrap()
    };
    // Only lines of the wrong type: the error says why, not "input is empty".
    let wrong = t.path().join("wrong");
    std::fs::create_dir(&wrong).unwrap();
    std::fs::write(wrong.join("results.jsonl"), with("\"fast\"") + "\n").unwrap();
    let out = t.path().join("r1");
    let out = out.to_str().unwrap();
    assert_one_line_error(
        &["report", wrong.to_str().unwrap(), "--out", out],
        2,
        "invalid type: string \"fast\"",
    );
    // An implausible figure is left out with a warning; the report shows no NaN or inf.
    let huge = t.path().join("huge");
    std::fs::create_dir(&huge).unwrap();
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(
        huge.join("results.jsonl"),
        with("1e300") + "\n" + &rest.join("\n"),
    )
    .unwrap();
    let out = t.path().join("r2");
    let o = run(&[
        "report",
        huge.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("implausible figure"), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("NaN") && !html.contains("inf "),
        "NaN or inf in the report"
    );
    // Decimal commas: a hint, not just "no results".
    let txt = t.path().join("comma.txt");
    std::fs::write(
        &txt,
        "\tOutput is in Kbytes/sec\n  KB  reclen   write rewrite\n  64       4  1234,5  2345,6\n",
    )
    .unwrap();
    let out = t.path().join("r3");
    assert_one_line_error(
        &[
            "report",
            txt.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        2,
        "decimal commas",
    );
}

#[test]
fn a_password_file_must_be_a_small_private_regular_file() {
    use std::os::unix::fs::PermissionsExt;
    let t = shm_dir();
    let pw = t.path().join("pw");
    std::fs::write(&pw, "secret\n").unwrap();
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Nothing listens on port 1 of loopback: a run that gets past the password fails to
    // connect.
    let run_with_file = |file: &std::path::Path| {
        let started = std::time::Instant::now();
        let o = bin()
            .args(["run", "-i", "write", "--file-sizes", "64k"])
            .arg("smb://user@127.0.0.1:1/share")
            .env_remove("SHAREBENCH_SMB_PASSWORD")
            .env("SHAREBENCH_SMB_PASSWORD_FILE", file)
            .output()
            .unwrap();
        assert!(
            started.elapsed().as_secs() < 5,
            "took {:?}",
            started.elapsed()
        );
        o
    };
    let refused = |file: &std::path::Path, why: &str| {
        let o = run_with_file(file);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{file:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(why), "{file:?}: {err}");
        assert!(
            !err.contains("secret"),
            "the password is never shown: {err}"
        );
    };
    refused(&pw, "can be read by others (mode 0644)");
    refused(std::path::Path::new("/dev/zero"), "is not a regular file");
    let fifo = t.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    refused(&fifo, "is not a regular file");
    let empty = t.path().join("empty");
    std::fs::write(&empty, "").unwrap();
    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o600)).unwrap();
    refused(&empty, "is empty");
    let big = t.path().join("big");
    std::fs::write(&big, vec![b'x'; 5000]).unwrap();
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o600)).unwrap();
    refused(&big, "is 5000 bytes");

    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run_with_file(&pw);
    let err = stderr(&o);
    assert!(!o.status.success());
    assert!(!err.contains("SHAREBENCH_SMB_PASSWORD_FILE"), "{err}");
}

/// Results on a disk that fills up: the run ends with one line, run.json says `failed`
/// (written over itself when no new file fits), results.jsonl holds whole lines only, and
/// nothing is left on the target.
#[test]
fn results_on_a_full_disk_end_failed_with_whole_lines() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let small = TmpfsMount::new("size=48k");
    let out = std::path::Path::new(small.path()).join("r");
    let target = shm_dir();
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--file-sizes",
        "64k,128k,256k,512k,1m",
        "--record-sizes",
        "4k,8k,16k,32k,64k",
        "--reps",
        "10",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        target.path().to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(manifest["outcome"], "failed");
    let jsonl = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(jsonl.ends_with('\n'), "a cut last line");
    assert!(!records(&out).is_empty());
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// Worker threads that cannot all be started (address space capped): the cell fails with
/// one reason, those started are released, and the run ends `failed` without a panic or a
/// hang (it once waited forever at the start barrier).
#[test]
fn workers_that_cannot_be_started_fail_the_run_without_a_hang() {
    let target = shm_dir();
    let out = target.path().join("r");
    let dir = target.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000; exec timeout 120 \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_sharebench"))
        .args([
            "run",
            "-i",
            "write",
            "--file-sizes",
            "64k",
            "--threads",
            "1024",
        ])
        .args(["--reps", "1", "--quiet", "--out", out.to_str().unwrap()])
        .arg(&dir)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot start worker thread"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let manifest = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(manifest.contains("\"outcome\": \"failed\""), "{manifest}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}
