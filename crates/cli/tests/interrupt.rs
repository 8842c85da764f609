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

/// Starts a long run on `target` with results in `out`, and waits for its first record.
fn start_long_run(target: &std::path::Path, out: &std::path::Path) -> std::process::Child {
    let mut child = bin()
        .args([
            "run",
            "-i",
            "write,read",
            "--file-sizes",
            "16m",
            "--record-sizes",
            "64k",
        ])
        .args(["--reps", "10000", "--out"])
        .arg(out)
        .arg(target)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while records(out).is_empty() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended early: {status}");
        }
        assert!(Instant::now() < deadline, "no record in 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn what_a_killed_run_leaves_is_named_and_clean_removes_it() {
    let target = shm_dir();
    let out = shm_dir();
    let first = out.path().join("first");
    let mut child = start_long_run(target.path(), &first);
    child.kill().unwrap(); // SIGKILL: no clean-up at all
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(left.len(), 1, "the killed run's working directory");
    let manifest = std::fs::read_to_string(first.join("run.json")).unwrap();
    assert!(manifest.contains("\"outcome\": \"running\""));

    // The next run on that target says so, in one line, with the command.
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
        .arg(out.path().join("second"))
        .arg(target.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let says = format!("remove with: sharebench clean {}", target.path().display());
    let err = stderr(&o);
    assert_eq!(
        err.lines().filter(|l| l.contains(&says)).count(),
        1,
        "{err}"
    );

    // clean leaves a running sharebench's directory, removes the killed one's, and marks
    // the killed run's manifest.
    let third = out.path().join("third");
    let running = start_long_run(target.path(), &third);
    let o = run(&["clean", target.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.contains("is a running sharebench's"), "{said}");
    assert!(said.contains("marked abandoned"), "{said}");
    let manifest = std::fs::read_to_string(first.join("run.json")).unwrap();
    assert!(
        manifest.contains("\"outcome\": \"abandoned\""),
        "{manifest}"
    );
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(left.len(), 1, "only the running run's directory is left");
    // A second Ctrl-C (more than a second after the first: a signal sent to the process
    // group arrives twice at once) names what it leaves behind.
    let pid = nix::unistd::Pid::from_raw(running.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
    let o = running.wait_with_output().unwrap();
    let err = stderr(&o);
    if err.contains("interrupted again") {
        assert!(err.contains("may be left behind: "), "{err}");
        assert!(err.contains("remove with: sharebench clean"), "{err}");
    }
    let o = run(&["clean", target.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// coreutils' `timeout` signals the run and then its whole process group: the two signals
/// are one interrupt, so the run cleans up as after one Ctrl-C.
#[test]
fn a_run_under_timeout_cleans_up_and_says_interrupted() {
    let target = shm_dir();
    let scratch = shm_dir();
    let out = scratch.path().join("r");
    let o = std::process::Command::new("timeout")
        .arg("2")
        .arg(env!("CARGO_BIN_EXE_sharebench"))
        .args([
            "run",
            "-i",
            "write,read",
            "--file-sizes",
            "4m",
            "--record-sizes",
            "4k",
        ])
        .args(["--reps", "10000", "--quiet", "--out", out.to_str().unwrap()])
        .arg(target.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(124),
        "timeout's own code: {}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("interrupted again"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "nothing left on the target"
    );
    let manifest = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(
        manifest.contains("\"outcome\": \"interrupted\""),
        "{manifest}"
    );
    assert!(out.join("results.csv").exists());
}
