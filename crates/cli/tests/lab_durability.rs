//! The lab's async and sync NFS exports side by side on a disk with EBS-magnetic latency
//! (nbdkit's delay filter under the loop devices): what each puts on the disk while it
//! is measured, counted from the loop devices, in every record; the small-file tree
//! copied and re-synced through them; and `lab down` ends the delay layers too. One test: two labs cannot run at once.

mod common;
use common::*;
use serde_json::Value;

const LAB: &str = "/var/tmp/sharebench-lab";

/// nbdfuse or nbdkit processes serving the lab's images.
fn delay_processes() -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (cmd.contains("nbd") && cmd.contains(LAB)).then_some(format!("{pid}: {cmd}"))
        })
        .collect()
}

#[test]
fn async_and_sync_exports_on_a_slow_disk_show_what_reaches_it() {
    require_root();
    if !nix_is_root() {
        return;
    }
    // Whatever happens below, the lab is taken down at the end.
    let _down = no_lab_before_or_after();

    // A plain backing beside an async one would silently be async too: refused.
    let o = run(&["lab", "up", "--fs", "xfs+async,xfs"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("would be async too"), "{}", stderr(&o));

    let o = run(&[
        "lab",
        "up",
        // Gluster's bricks live on the first backing: the two compared are the others.
        "--fs",
        "ext4+sync,xfs+async,xfs+sync",
        "--disk",
        "ebs-magnetic",
        "--no-smb-fuse",
        "--image-size",
        "1G",
    ]);
    assert!(o.status.success(), "lab up failed: {}", stderr(&o));
    let st = run(&["lab", "status", "--json"]);
    let status: Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(status["disk"], "ebs-magnetic", "{status}");
    assert!(!delay_processes().is_empty(), "no delay layer runs");
    for t in status["targets"].as_array().unwrap() {
        if t["name"].as_str().unwrap().starts_with("lab:nfs3@") {
            assert!(!t["disks"].as_array().unwrap().is_empty(), "{t}");
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let sync_mount = mounts
        .lines()
        .find(|l| l.contains(&format!("{LAB}/srv/replica1.2 ")))
        .expect("the sync backing is mounted");
    assert!(
        sync_mount.contains("sync")
            && sync_mount.contains("dirsync")
            && sync_mount.contains("wsync"),
        "{sync_mount}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = run(&[
        "run",
        "lab:nfs3@xfs+async",
        "lab:nfs3@xfs+sync",
        "-i",
        "write,rewrite",
        "--file-sizes",
        "256k",
        "--record-sizes",
        "64k",
        "--reps",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // (disk flushes, passes) of each measurement of a target.
    let flushes = |target: &str| -> Vec<(u64, u64)> {
        records(&out)
            .iter()
            .filter(|r| r["target"] == target)
            .map(|r| {
                assert!(r["disk_writes"].is_u64(), "no disk counts: {r}");
                let f = r["disk_flushes"].as_u64().expect("no flush count");
                (f, r["passes"].as_u64().unwrap_or(1))
            })
            .collect()
    };
    let (fast, safe) = (flushes("lab:nfs3@xfs+async"), flushes("lab:nfs3@xfs+sync"));
    assert_eq!((fast.len(), safe.len()), (4, 4));
    // The sync export makes every write stable before it answers: at least one flush per
    // pass of every measurement (6 to 13 seen). The async one makes none stable on
    // request (its server's fsync is a no-op); what reaches its disk is xfs's own log
    // writes: its log work every 30 s (fs.xfs.xfssyncd_centisecs) and, once the metadata
    // of many passes (a file created and removed in each) fills its in-memory log, a
    // push. By hand: 2 and 4 flushes in two measurements 0.2 s apart, 30 s after the
    // mount, in a run of about 1,000 passes; in 0.5-s samples of ~1,300 passes, 3 to 6
    // flushes every 7 to 30 s. So per pass the async export flushes far less than a
    // twentieth as often as the sync one's floor of one.
    assert!(
        safe.iter().all(|&(f, p)| f >= p),
        "sync (flushes, passes): {safe:?}"
    );
    let (flushed, passes) = fast
        .iter()
        .fold((0, 0), |(f, p), &(df, dp)| (f + df, p + dp));
    assert!(
        20 * flushed < passes,
        "async (flushes, passes) {fast:?} vs sync {safe:?}"
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    let opts = manifest["targets"][1]["server_mount_options"]
        .as_str()
        .unwrap_or_default();
    assert!(opts.contains("wsync"), "{manifest}");

    // The small-file tree through the native clients, as rsync copies it (a temporary
    // name, renamed into place): an unchanged re-sync finds every file's size and time
    // kept, and copies nothing again.
    let out = tmp.path().join("tree");
    let o = run(&[
        "run",
        "lab:nfs3@xfs+async",
        "lab:smb@xfs+async",
        "-w",
        "smallfiles",
        "--reps",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for r in records(&out) {
        let written = r["count"].as_u64().unwrap();
        match r["op"].as_str().unwrap() {
            "copy" => assert_eq!(written, 1800, "{r}"),
            "resync-nochange" => assert_eq!(written, 0, "{r}"),
            "resync-modified" => assert!((150..=210).contains(&written), "{r}"),
            _ => {}
        }
    }

    let o = run(&["lab", "down"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(delay_processes().is_empty(), "{:?}", delay_processes());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(LAB), "mounts left");
    assert!(!std::path::Path::new(LAB).exists(), "{LAB} left");
}
