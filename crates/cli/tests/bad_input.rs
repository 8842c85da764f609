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
fn malformed_sizes() {
    let t = shm_dir();
    let p = t.path().to_str().unwrap();
    assert_one_line_error(&["run", "--file-sizes", "12q", p], 2, "12q");
    assert_one_line_error(&["run", "--file-sizes", "-4k", p], 2, "-4k");
    assert_one_line_error(&["run", "--record-sizes", "0", p], 2, "'0'");
    assert_no_workdir(t.path());
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
    // 3 MiB of space: the 1 MiB cells succeed, the 8 MiB cell hits ENOSPC.
    let small = TmpfsMount::new("size=3m");
    let out = shm_dir();
    let out_dir = out.path().join("r");
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--file-sizes",
        "1m,8m",
        "--record-sizes",
        "64k",
        "--reps",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
        small.path(),
    ]);
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
