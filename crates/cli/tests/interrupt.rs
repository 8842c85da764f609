//! Ctrl-C: the run stops promptly, removes its files, keeps every record and exits 130.

mod common;
use common::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_keeps_records_removes_files_and_exits_130() {
    let target = shm_dir();
    let out = shm_dir();
    let out_dir = out.path().join("r");
    // A long run: many repetitions of a 64 MiB cell.
    let mut child = bin()
        .args([
            "run",
            "-i",
            "write,read",
            "--file-sizes",
            "64m",
            "--record-sizes",
            "4k",
            "--reps",
            "10000",
            "--out",
        ])
        .arg(&out_dir)
        .arg(target.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for a few records, then interrupt.
    let start = Instant::now();
    while records(&out_dir).len() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no records after 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let interrupted = Instant::now();
    let out_status = child.wait().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        interrupted.elapsed()
    );
    assert_eq!(out_status.code(), Some(130));
    let recs = records(&out_dir);
    assert!(recs.len() >= 3);
    assert!(recs.iter().all(|r| r["status"] == "ok"));
    let manifest = std::fs::read_to_string(out_dir.join("run.json")).unwrap();
    assert!(
        manifest.contains("\"outcome\": \"interrupted\""),
        "{manifest}"
    );
    assert_no_workdir(target.path());
}
