//! Helpers for the integration tests: run the real binary, make scratch directories on
//! tmpfs, and loop-mount real file system images (root only; they fail loudly otherwise).
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sharebench"))
}

/// Runs `sharebench ARGS` and returns its output.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("cannot start sharebench")
}

/// `sharebench study run STUDY --scale tiny` and `more`.
pub fn study_tiny(study: &Path, more: &[&str]) -> Output {
    bin()
        .args(["study", "run"])
        .arg(study)
        .args(["--scale", "tiny"])
        .args(more)
        .output()
        .expect("cannot start sharebench")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A scratch directory on tmpfs.
pub fn shm_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sbtest")
        .tempdir_in("/dev/shm")
        .expect("tmpfs scratch dir")
}

/// Records of a results directory, as JSON values.
pub fn records(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

/// One stream run of `targets` into `out`: one stream of `size`, `reps` repetitions, the
/// `extra` options. Asserts it succeeded; returns its records.
pub fn stream_run(
    out: &Path,
    size: &str,
    reps: &str,
    extra: &[&str],
    targets: &[&str],
) -> Vec<Value> {
    let mut args = vec![
        "run",
        "-w",
        "stream",
        "--streams",
        "1",
        "--stream-size",
        size,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-n", reps, "-o", out.to_str().unwrap()]);
    args.extend_from_slice(targets);
    let o = run(&args);
    assert!(
        o.status.success(),
        "stream {extra:?}: exit {:?}: {}",
        o.status.code(),
        stderr(&o)
    );
    records(out)
}

/// Asserts a matrix record moved its whole file in each of its passes (a sample of
/// `--min-sample-time` holds one or more).
pub fn assert_whole_file_per_pass(r: &Value) {
    let passes = r["passes"]
        .as_u64()
        .expect("a matrix record says its passes");
    assert!(passes >= 1, "{r}");
    let file = r["file_size"].as_u64().unwrap();
    assert_eq!(r["bytes"].as_u64(), Some(file * passes), "{r}");
}

/// Asserts the target holds nothing but what the test put there (no working directory left).
pub fn assert_no_workdir(target: &Path) {
    let left: Vec<String> = std::fs::read_dir(target)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sharebench-"))
        .collect();
    assert!(left.is_empty(), "working directories left behind: {left:?}");
}

pub fn require_root() {
    if nix_is_root() {
        return;
    }
    if std::env::var_os("SHAREBENCH_SKIP_ROOT_TESTS").is_some() {
        return;
    }
    panic!("this test needs root (loop devices, mounts); run as root, or set SHAREBENCH_SKIP_ROOT_TESTS=1 to skip it");
}

pub fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A file system image, formatted and mounted; unmounted and detached on drop.
pub struct LoopMount {
    pub dir: PathBuf,
    dev: Option<String>,
    _scratch: tempfile::TempDir,
}

impl LoopMount {
    /// `fs` is ext3, ext4, xfs or btrfs; `direct_io` attaches the loop device with
    /// --direct-io=on so the host page cache does not hide the device.
    pub fn new(fs: &str, size: &str, direct_io: bool) -> LoopMount {
        let scratch = tempfile::Builder::new()
            .prefix("sbloop")
            .tempdir_in("/var/tmp")
            .unwrap();
        let img = scratch.path().join("fs.img");
        let dir = scratch.path().join("mnt");
        std::fs::create_dir(&dir).unwrap();
        sh("truncate", &["-s", size, img.to_str().unwrap()]);
        match fs {
            "xfs" | "btrfs" => sh(&format!("mkfs.{fs}"), &["-q", "-f", img.to_str().unwrap()]),
            _ => sh(&format!("mkfs.{fs}"), &["-q", "-F", img.to_str().unwrap()]),
        };
        let mut args = vec!["-f", "--show"];
        if direct_io {
            args.push("--direct-io=on");
        }
        args.push(img.to_str().unwrap());
        let dev = sh("losetup", &args);
        sh("mount", &[&dev, dir.to_str().unwrap()]);
        LoopMount {
            dir,
            dev: Some(dev),
            _scratch: scratch,
        }
    }

    /// An image mounted with `mount -o loop`: its loop device detaches when it is unmounted.
    pub fn autoclear(fs: &str, size: &str) -> LoopMount {
        let mut m = LoopMount::new(fs, size, false);
        let dev = m.dev.take().unwrap();
        sh("umount", &[m.path()]);
        sh("losetup", &["-d", &dev]);
        let img = m.dir.with_file_name("fs.img");
        sh("mount", &["-o", "loop", img.to_str().unwrap(), m.path()]);
        m
    }

    pub fn path(&self) -> &str {
        self.dir.to_str().unwrap()
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        if let Some(dev) = self.dev.take() {
            let _ = Command::new("losetup").args(["-d", &dev]).status();
        }
    }
}

/// A small tmpfs mounted on a scratch directory (for ENOSPC and read-only tests).
pub struct TmpfsMount {
    pub dir: tempfile::TempDir,
}

impl TmpfsMount {
    pub fn new(options: &str) -> TmpfsMount {
        let dir = tempfile::Builder::new()
            .prefix("sbtmpfs")
            .tempdir_in("/var/tmp")
            .unwrap();
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                options,
                "tmpfs",
                dir.path().to_str().unwrap(),
            ],
        );
        TmpfsMount { dir }
    }
    pub fn path(&self) -> &str {
        self.dir.path().to_str().unwrap()
    }
}

impl Drop for TmpfsMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A lab test's start: any lab left over is taken down, and the guard returned takes
/// the test's lab down when it goes out of scope, whatever happened.
pub fn no_lab_before_or_after() -> LabDown {
    let _ = run(&["lab", "down"]);
    LabDown
}

/// Takes the lab down when dropped (see `no_lab_before_or_after`).
pub struct LabDown;

impl Drop for LabDown {
    fn drop(&mut self) {
        let _ = run(&["lab", "down"]);
    }
}

/// Lab namespaces (`sblab-*`) now on the machine.
pub fn lab_namespaces() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("sblab-"))
                .collect()
        })
        .unwrap_or_default()
}
