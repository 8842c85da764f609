//! `--cache remount` and `sharebench iozone -U`: a remount keeps every file and leaves the
//! file system mounted; wherever unmounting would lose or release anything, it is refused
//! in one line, with exit 2, before any I/O. As root, on loop images and tmpfs.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// A file of the user's on the file system, which must outlive every test.
fn plant_precious(mount: &Path) -> std::path::PathBuf {
    let p = mount.join("precious");
    std::fs::write(&p, "precious\n").unwrap();
    p
}

/// The mountinfo line of the top mount at `mount_point`, if any.
fn mountinfo_of(mount_point: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let field = format!(" {} ", mount_point.display());
    text.lines()
        .rev()
        .find(|l| l.contains(&field))
        .map(String::from)
}

/// `sharebench run --cache remount` on `target`, results to `out`.
fn run_remount(target: &Path, out: &Path) -> Output {
    run(&[
        "run",
        "-i",
        "write,read",
        "--cache",
        "remount",
        "--file-sizes",
        "64k",
        "--record-sizes",
        "4k",
        "--reps",
        "1",
        "--out",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ])
}

/// Asserts a refusal: exit 2, one line naming `why`, no results directory, the precious
/// file intact and the mount as it was.
fn assert_refused(o: &Output, why: &str, out: &Path, precious: &Path, mounted: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains(why), "expected '{why}' in: {err}");
    assert!(err.contains("nothing was unmounted"), "{err}");
    assert!(!out.exists(), "a refused run made {}", out.display());
    assert_eq!(std::fs::read_to_string(precious).unwrap(), "precious\n");
    let mount_point = Path::new(mounted);
    assert!(mountinfo_of(mount_point).is_some(), "{mounted} not mounted");
}

#[test]
fn remount_keeps_a_loop_images_xfs_mounted_and_its_files() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let m = LoopMount::new("xfs", "320M", true);
    let precious = plant_precious(&m.dir);
    let before = mountinfo_of(&m.dir).unwrap();
    let target = m.dir.join("d");
    std::fs::create_dir(&target).unwrap();
    let scratch = shm_dir();
    let out = scratch.path().join("r");
    let o = run(&[
        "run",
        "-i",
        "write,read,random-read",
        "--verify",
        "--cache",
        "remount",
        "--threads",
        "2",
        "--file-sizes",
        "4m",
        "--record-sizes",
        "64k",
        "--reps",
        "2",
        "--out",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The first operation of each test (write, read, random-read) follows a remount, once
    // for both workers; every record says so.
    let purged = records(&out)
        .iter()
        .filter(|r| r["cache_purge"] == "remount")
        .count();
    assert_eq!(
        purged,
        2 * 3 * 3,
        "records after a remount (2 reps x 3 tests x 3)"
    );
    // The same file system is mounted again in the same place, the user's file intact.
    let after = mountinfo_of(&m.dir).expect("not mounted again");
    let device_type_source = |l: &str| {
        let f: Vec<&str> = l.split(' ').collect();
        let post = l.split(" - ").nth(1).unwrap().to_string();
        (f[2].to_string(), post)
    };
    assert_eq!(device_type_source(&after), device_type_source(&before));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert_no_workdir(&target);
}

#[test]
fn remount_is_refused_where_unmounting_would_lose_or_release_anything() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let scratch = shm_dir();
    let out = scratch.path().join("r");

    // A memory file system: unmounting destroys it.
    let t = TmpfsMount::new("size=64m");
    let precious = plant_precious(t.dir.path());
    let target = t.dir.path().join("d");
    std::fs::create_dir(&target).unwrap();
    let o = run_remount(&target, &out);
    assert_refused(&o, "tmpfs, a memory file system", &out, &precious, t.path());

    // A loop device that detaches when unmounted (mount -o loop).
    let auto = LoopMount::autoclear("ext4", "64M");
    let precious = plant_precious(&auto.dir);
    let o = run_remount(&auto.dir, &out);
    assert_refused(&o, "detaches when unmounted", &out, &precious, auto.path());

    // A file system another process has a file open in.
    let m = LoopMount::new("ext4", "64M", false);
    let precious = plant_precious(&m.dir);
    let mut holder = Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&precious).unwrap())
        .spawn()
        .unwrap();
    let o = run_remount(&m.dir, &out);
    let _ = holder.kill();
    let _ = holder.wait();
    let who = format!("process {} (sleep) has a file open", holder.id());
    assert_refused(&o, &who, &out, &precious, m.path());

    // A bind mount of part of a file system, and the file system it is part of: neither
    // is the file system's own, lone mount.
    let part = m.dir.join("part");
    std::fs::create_dir(&part).unwrap();
    let bind = scratch.path().join("bind");
    std::fs::create_dir(&bind).unwrap();
    let bound = Command::new("mount")
        .args(["--bind", part.to_str().unwrap(), bind.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(bound.success());
    let o = run_remount(&bind, &out);
    let also = run_remount(&m.dir, &out);
    Command::new("umount").arg(&bind).status().unwrap();
    assert_refused(&o, "is a bind mount of /part", &out, &precious, m.path());
    let why = format!("is also mounted at {}", bind.display());
    assert_refused(&also, &why, &out, &precious, m.path());

    // IOzone's -U naming another mount than the target's.
    let o = run(&[
        "iozone",
        "-s",
        "64",
        "-r",
        "4",
        "-i",
        "0",
        "-U",
        "/",
        m.path(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("-U /: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("not on that mount"), "{}", stderr(&o));
    assert!(mountinfo_of(&m.dir).is_some());
}

#[test]
fn a_remount_that_fails_mid_run_stops_the_run_and_keeps_its_records() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let m = LoopMount::new("ext4", "128M", false);
    let precious = plant_precious(&m.dir);
    let scratch = shm_dir();
    let out = scratch.path().join("r");
    let child = bin()
        .args(["run", "-i", "write,read", "--cache", "remount"])
        .args([
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--reps",
            "200",
        ])
        .args(["--out", out.to_str().unwrap(), m.path()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run has measured something, another process opens a file there: the next
    // unmount is refused by the kernel (busy), and the run must stop at once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while records(&out).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no record in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The file is missing for the instant its file system is unmounted: try again then.
    let file = loop {
        match std::fs::File::open(&precious) {
            Ok(f) => break f,
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Err(e) => panic!("{e}"),
        }
    };
    let mut holder = Command::new("sleep").arg("60").stdin(file).spawn().unwrap();
    let o = child.wait_with_output().unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("run stopped"), "{err}");
    assert!(err.contains("is still mounted, nothing was lost"), "{err}");
    let kept = records(&out).len();
    assert!((1..400).contains(&kept), "{kept} records kept");
    let manifest = std::fs::read_to_string(out.join("run.json")).unwrap();
    assert!(manifest.contains("\"outcome\": \"failed\""), "{manifest}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert!(mountinfo_of(&m.dir).is_some());
}
