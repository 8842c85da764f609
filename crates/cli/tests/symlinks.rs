//! Results are written without following symlinks planted by others: a results directory
//! swapped mid-run for one of symlinks changes nothing outside it, and a results parent that
//! someone else may change is refused. As root, where the race was found.

mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// A root-owned 0600 file that must never change.
fn victim(dir: &Path, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, "root's secret\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

#[test]
fn a_results_directory_swapped_for_symlinks_mid_run_writes_nothing_through_them() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let scratch = shm_dir();
    let victims = scratch.path().join("victims");
    std::fs::create_dir(&victims).unwrap();
    let names = [
        ".sharebench-results",
        "run.json",
        "results.jsonl",
        "results.csv",
    ];
    let targets: Vec<_> = names.iter().map(|n| victim(&victims, n)).collect();
    let out = scratch.path().join("run");
    let child = bin()
        .args([
            "run",
            "-i",
            "write,read",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "4k",
        ])
        .args(["--reps", "3000", "--min-sample-time", "0"])
        .args(["--out", out.to_str().unwrap(), "null://"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // As soon as the run has begun, its directory is moved away and replaced by one whose
    // every file is a symlink to a victim (what a user who can write in the parent does).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out.join("results.jsonl").exists() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(1));
    }
    let moved = scratch.path().join("moved");
    std::fs::rename(&out, &moved).unwrap();
    let jsonl = std::fs::read_to_string(moved.join("results.jsonl")).unwrap();
    let before_swap = jsonl.matches('\n').count();
    std::fs::create_dir(&out).unwrap();
    for (n, t) in names.iter().zip(&targets) {
        std::os::unix::fs::symlink(t, out.join(n)).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(before_swap < 2 * 3000, "the swap came after the run's end");
    for t in &targets {
        assert_eq!(
            std::fs::read_to_string(t).unwrap(),
            "root's secret\n",
            "{t:?}"
        );
    }
    // The run wrote all of its results into the directory it made, wherever that went.
    let recs = records(&moved);
    assert_eq!(recs.len(), 2 * 3000, "records in the moved directory");
    let csv = std::fs::read_to_string(moved.join("results.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + 2 * 3000,
        "CSV rows in the moved directory"
    );
    let manifest = std::fs::read_to_string(moved.join("run.json")).unwrap();
    assert!(manifest.contains("\"outcome\": \"complete\""));
}

#[test]
fn a_results_parent_others_may_change_is_refused() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let scratch = shm_dir();
    // Writable by everyone without the sticky bit: anyone could swap what is made there.
    let open = scratch.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run_into(&open.join("r"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writable by everyone"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);
    assert!(!open.join("r").exists());

    // In a sticky, world-writable directory (as /tmp): another user's directory or symlink
    // named as the results are refused, not used.
    let sticky = scratch.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = sticky.join("sharebench-results");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(4242), Some(4242)).unwrap();
    let o = run_into(&theirs.join("r"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("owned by user 4242"), "{}", stderr(&o));
    std::fs::remove_dir(&theirs).unwrap();

    let evil = scratch.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::os::unix::fs::symlink(&evil, &theirs).unwrap();
    nix::unistd::fchownat(
        nix::fcntl::AT_FDCWD,
        &theirs,
        Some(nix::unistd::Uid::from_raw(4242)),
        None,
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .unwrap();
    let o = run_into(&theirs.join("r"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("symlink of user 4242"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_dir(&evil).unwrap().next().is_none());
}

/// `run ... --out DIR null://`, for the refusals above.
fn run_into(out: &Path) -> std::process::Output {
    let out = out.to_str().unwrap();
    run(&[
        "run",
        "-i",
        "write",
        "--file-sizes",
        "64k",
        "--out",
        out,
        "null://",
    ])
}

/// The attack on a shared target (scripts/shared-target-attack.py): an unprivileged user
/// swaps each new working directory in a 0777 target for one of symlinks to a root-owned
/// file, or for a symlink to a root-owned directory, while root runs. Nothing of root's
/// changes, and no run it interfered with says `complete`. `BAR=1` gives the full bar (ten
/// tries of 30 s); the suite runs one short try.
#[test]
fn another_users_swaps_in_a_shared_target_change_nothing_of_roots() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let (tries, seconds) = if std::env::var_os("BAR").is_some() {
        ("10", "30")
    } else {
        ("1", "6")
    };
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/shared-target-attack.py"
    );
    let o = std::process::Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_sharebench"))
        .args(["--tries", tries, "--seconds", seconds])
        .output()
        .unwrap();
    let said = stdout(&o);
    assert!(o.status.success(), "{said}{}", stderr(&o));
    // The attacker did get at the runs (else the test shows nothing).
    let swapped: usize = said
        .lines()
        .filter_map(|l| {
            l.split(" working directories swapped")
                .next()?
                .rsplit(' ')
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert!(swapped > 0, "{said}");
}

/// A target others may write in without the sticky bit: a run is warned; rsync, which
/// reaches its destination by path, is refused there.
#[test]
fn a_target_open_to_others_is_warned_of_and_refused_to_rsync() {
    use std::os::unix::fs::PermissionsExt;
    let t = shm_dir();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let p = t.path().to_str().unwrap();
    let o = run(&[
        "run",
        "-i",
        "write",
        "--file-sizes",
        "64k",
        "--reps",
        "1",
        p,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("has no sticky bit"), "{}", stderr(&o));
    let o = run(&["run", "-w", "smallfiles", "--with-rsync", p]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--with-rsync: rsync writes by path"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}
