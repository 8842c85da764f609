//! The lab against real servers: up, reachable only inside its namespaces, authenticated,
//! shaped; down leaves nothing behind, also after `lab up` was killed with SIGKILL half-way.
//! One test of phases in sequence, sharing one lab: two labs cannot run at once.

mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LAB: &str = "/var/tmp/sharebench-lab";

fn lab(args: &[&str]) -> std::process::Output {
    let mut all = vec!["lab"];
    all.extend_from_slice(args);
    run(&all)
}

fn sh(cmd: &str) -> (bool, String) {
    let o = Command::new("sh").args(["-c", cmd]).output().unwrap();
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Asserts no namespace, link, loop device, mount, process or directory of the lab is left.
fn assert_nothing_left(server_pids: &[i64]) {
    let (_, ns) = sh("ip netns list");
    assert!(!ns.contains("sblab-"), "namespaces left: {ns}");
    let (_, links) = sh("ip -o link");
    assert!(!links.contains("sbl-"), "links left: {links}");
    let (_, loops) = sh("losetup -a");
    assert!(!loops.contains(LAB), "loop devices left: {loops}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(LAB), "mounts left");
    for pid in server_pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        assert!(
            stat.is_empty() || state == Some('Z'),
            "server {pid} still runs: {stat}"
        );
    }
    assert!(!std::path::Path::new(LAB).exists(), "{LAB} left");
}

/// The lab's NFS-Ganesha: the one ganesha.nfsd in replica1's network namespace.
fn lab_ganesha() -> nix::unistd::Pid {
    let replica1 = std::fs::metadata("/run/netns/sblab-replica1").unwrap();
    let ganesha: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid: &i32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "ganesha.nfsd")
                && std::fs::metadata(format!("/proc/{pid}/ns/net")).is_ok_and(|m| {
                    std::os::unix::fs::MetadataExt::ino(&m)
                        == std::os::unix::fs::MetadataExt::ino(&replica1)
                })
        })
        .collect();
    assert_eq!(ganesha.len(), 1, "{ganesha:?}");
    nix::unistd::Pid::from_raw(ganesha[0])
}

/// The load workload on lab targets: curves that step until a point is invalid,
/// and a server paused for 100 ms (SIGSTOP of the lab's own Ganesha, every second of a
/// point) that shows in p99 counted from the schedule but hardly from when requests were
/// issued.
fn load_curves_and_a_stall() {
    let scratch = shm_dir();
    // Both curves in one run, taking turns point by point. Where they go invalid is the
    // machine's: over the 100 Mbit/s link near 2,000 requests/s on one machine of this kind,
    // near 950-1,550 on another, and at 450-500 in CI (2026-11-28). So the test asks for a
    // curve (two valid points or more, then an invalid one), not for a number of steps, and
    // starts low: 100 and 350 fit under CI's knee; steps of 250 reach this machine's in
    // about 9 points a curve, each of 1.5 s (150 requests at the first, so that one late
    // request is not already 1%).
    let curves = |attempt: u32| {
        let out = scratch.path().join(format!("curves-{attempt}"));
        let o = run(&[
            "run",
            "-w",
            "load",
            "--mix",
            "build",
            "--rate-start",
            "100",
            "--rate-step",
            "250",
            "--points",
            "40",
            "--point-time",
            "1.5s",
            "-n",
            "1",
            "-o",
            out.to_str().unwrap(),
            "lab:nfs3",
            "lab:smb",
        ]);
        assert!(o.status.success(), "load: {}", stderr(&o));
        records(&out)
    };
    // A stall of a second at the lightest point ends a curve before it starts (seen once,
    // in CI right after the build: lab:nfs3's p99 1.7 s at 200 requests/s, against 3-45
    // ms in every other run). Then the curves are measured once more, and only once; the
    // stalled record is printed with its machine and server CPU figures.
    let lightest_invalid = |recs: &[serde_json::Value]| {
        recs.iter()
            .filter(|r| r["op"] == "load" && r["load_point"] == 0 && r["valid"] != true)
            .inspect(|r| eprintln!("lightest point invalid, measuring again: {r}"))
            .count()
            > 0
    };
    let mut recs = curves(1);
    if lightest_invalid(&recs) {
        recs = curves(2);
    }
    for t in ["lab:nfs3", "lab:smb"] {
        let points: Vec<&serde_json::Value> = recs
            .iter()
            .filter(|r| r["op"] == "load" && r["target"] == t)
            .collect();
        for r in &points {
            eprintln!(
                "{t} point {}: asked {} done {} p99 {} us, {}",
                r["load_point"], r["requested_ops_s"], r["ops_per_s"], r["lat_p99_us"], r["note"]
            );
        }
        assert!(points.len() >= 3, "{t}: {} load points", points.len());
        let first = points[0];
        let kept =
            first["ops_per_s"].as_f64().unwrap() / first["requested_ops_s"].as_f64().unwrap();
        assert!((kept - 1.0).abs() <= 0.01, "{t} first point: {first}");
        assert_eq!(first["valid"], true, "{first}");
        let last = points.last().unwrap();
        assert_eq!(
            last["valid"],
            false,
            "{t}: no invalid point in {} points",
            points.len()
        );
        assert!(
            points[..points.len() - 1]
                .iter()
                .all(|p| p["valid"] == true),
            "{t}: the curve went on past an invalid point"
        );
        assert!(first["server_cpu_s"].as_f64().is_some(), "{first}");
    }

    let out = scratch.path().join("stall");
    let child = bin()
        .args([
            "run",
            "-w",
            "load",
            "--mix",
            "build",
            "--rate-start",
            "400",
            "--points",
            "1",
            "--point-time",
            "4s",
            "-n",
            "1",
            "-q",
            "-o",
            out.to_str().unwrap(),
            "lab:nfs3",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ganesha = lab_ganesha();
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(900));
        nix::sys::signal::kill(ganesha, nix::sys::signal::Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        nix::sys::signal::kill(ganesha, nix::sys::signal::Signal::SIGCONT).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = records(&out)
        .into_iter()
        .find(|r| r["op"] == "load")
        .unwrap();
    let (due, issued) = (
        r["lat_p99_us"].as_f64().unwrap(),
        r["service_p99_us"].as_f64().unwrap(),
    );
    eprintln!("stalled point: p99 from the schedule {due} us, from issue {issued} us");
    assert!(due >= 30_000.0, "the stalls do not show in p99: {r}");
    assert!(due >= 3.0 * issued, "{r}");
}

#[test]
fn lab_up_serves_authenticated_shares_in_namespaces_and_down_removes_everything() {
    require_root();
    if !nix_is_root() {
        return;
    }
    // Whatever happens below, the lab is taken down at the end.
    let _down = no_lab_before_or_after();
    // The phases share one lab, in this order: some leave state the next ones use (the
    // file SMB put, the replica restarted).
    let up = timed("up", up_with_shaped_links);
    timed("smb-nfs", smb_and_nfs_share_one_backing);
    timed("smbnetfs", smbnetfs_is_private_signed_and_path_tools_work);
    timed("gluster", gluster_replicates_survives_a_crash_and_heals);
    timed("native", native_clients_check_every_byte_on_every_target);
    timed("swapped", swapped_working_directories_are_never_followed);
    timed("nfs-swapped", nfs_names_go_by_the_handles_the_tool_holds);
    timed(
        "smb-pinned",
        another_smb_client_cannot_move_the_working_directory,
    );
    timed("queued", queued_clients_keep_four_requests_in_flight);
    timed("nfs4", nfs4_matrix_through_both_data_paths);
    timed(
        "fragmentation",
        network_targets_report_the_servers_fragmentation,
    );
    timed("load", load_curves_and_a_stall);
    timed("smb-callers", smb_holds_a_connection_per_caller);
    timed("killed-server", a_killed_server_gives_up_its_target_only);
    timed("isolated", isolated_from_the_host_and_shaped);
    #[cfg(feature = "mpi")]
    timed("mpi", || mpi_clients_share_the_servers_link(&up));
    timed("down", || down_leaves_nothing(&up));
    timed("killed-up", killed_lab_up_is_cleaned_by_down);
    timed("no-gluster", up_without_gluster);
}

/// `lab up --no-gluster`: the other servers and their targets, no glusterd, no Gluster
/// target, and down leaves nothing.
fn up_without_gluster() {
    let o = lab(&["up", "--no-gluster", "--no-smb-fuse", "--image-size", "1G"]);
    assert!(o.status.success(), "lab up --no-gluster: {}", stderr(&o));
    let st = lab(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    // The "name" of each entry of one of status's lists.
    let names = |list: &str| -> Vec<String> {
        status[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect()
    };
    let services = names("services");
    assert!(!services.iter().any(|s| s.contains("gluster")), "{status}");
    assert!(services.iter().any(|s| s == "ganesha"), "{status}");
    let targets = names("targets");
    assert!(
        !targets.iter().any(|t| t.contains("gluster")),
        "{targets:?}"
    );
    for t in ["lab:smb", "lab:nfs3", "lab:nfs4", "lab:dfs-smb", "lab:disk"] {
        assert!(targets.iter().any(|n| n == t), "no {t} in {targets:?}");
    }
    let pids: Vec<i64> = status["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pid"].as_i64().unwrap())
        .collect();
    let d = lab(&["down"]);
    assert!(d.status.success(), "{}", stderr(&d));
    assert_nothing_left(&pids);
}

/// Runs one phase and says how long it took (seen with `--nocapture`: where the suite's
/// time goes).
fn timed<T>(phase: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    eprintln!("lab phase {phase}: {:.1} s", start.elapsed().as_secs_f64());
    out
}

/// What the phases need of the lab that `up_with_shaped_links` started.
struct Lab {
    /// `lab status --json`, right after up.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    status: serde_json::Value,
    /// Every server and FUSE client process the lab started (none may outlive `down`).
    pids: Vec<i64>,
}

/// The smbclient credentials file `lab up` writes (private to root).
fn smb_auth() -> String {
    format!("{LAB}/smbclient.auth")
}

/// Up over 100 Mbit/s links: a second up is refused, status names every service and
/// target, FUSE targets name their daemons, the SMB password stays private.
fn up_with_shaped_links() -> Lab {
    // Up, with shaped client links.
    let o = lab(&["up", "--link", "100mbit", "--image-size", "1G"]);
    assert!(o.status.success(), "lab up failed: {}", stderr(&o));
    let again = lab(&["up"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already up"), "{}", stderr(&again));

    let st = lab(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let services = status["services"].as_array().unwrap();
    // Samba x3, glusterd x2, Ganesha, and an sshd per client (the MPI hosts).
    assert_eq!(services.len(), 9, "{status}");
    assert_eq!(
        services.iter().filter(|s| s["name"] == "sshd").count(),
        3,
        "{status}"
    );
    assert!(services.iter().all(|s| s["running"] == true));
    let mut pids: Vec<i64> = services
        .iter()
        .map(|s| s["pid"].as_i64().unwrap())
        .collect();
    let targets: Vec<&str> = status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "lab:smb",
            "lab:smb-libsmbclient",
            "lab:smb2",
            "lab:nfs3",
            "lab:nfs4",
            "lab:nfs42",
            "lab:gluster-nfs3",
            "lab:gluster-gfapi",
            "lab:gluster-replica-gfapi",
            "lab:dfs-smb",
            "lab:gluster",
            "lab:gluster-replica",
            "lab:smb-fuse",
            "lab:disk"
        ]
    );
    // FUSE targets name the client processes that carry their I/O (their CPU is client
    // CPU): the FUSE daemon, alive, serving that mount. Native clients run in sharebench.
    for t in status["targets"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let client_pids: Vec<i64> = t["client_pids"]
            .as_array()
            .map(|a| a.iter().map(|p| p.as_i64().unwrap()).collect())
            .unwrap_or_default();
        if !["lab:gluster", "lab:gluster-replica", "lab:smb-fuse"].contains(&name) {
            assert!(client_pids.is_empty(), "{t}");
            continue;
        }
        assert!(!client_pids.is_empty(), "no client PID: {t}");
        let mount = if name == "lab:smb-fuse" {
            format!("{LAB}/mnt/smbnetfs")
        } else {
            t["url"].as_str().unwrap().to_string()
        };
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", client_pids[0]))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        assert!(cmdline.contains(&mount), "{name}: {cmdline}");
        pids.extend(client_pids);
    }
    assert!(status["delay_emulation"]
        .as_str()
        .unwrap()
        .contains("netem"));
    assert_eq!(status["congestion"], "reno", "{status}");

    // The password is private and never printed.
    let pw = std::fs::read_to_string(format!("{LAB}/smb-password"))
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(
        std::fs::metadata(format!("{LAB}/smb-password"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert!(!stdout(&st).contains(&pw) && !stdout(&o).contains(&pw));
    Lab { status, pids }
}

/// SMB: authenticated write and read from a client namespace; no guest; DFS referral.
fn smb_and_nfs_share_one_backing() {
    let auth = smb_auth();
    let (ok, out) = sh(&format!(
        "head -c 2000000 /dev/urandom > /tmp/sblab-src && ip netns exec sblab-pc1 smbclient //10.10.0.3/smb-sharing -A {auth} -m SMB3 -c 'put /tmp/sblab-src f; get f /tmp/sblab-back' && cmp /tmp/sblab-src /tmp/sblab-back"
    ));
    assert!(ok, "smb put/get: {out}");
    let (ok, out) =
        sh("ip netns exec sblab-pc1 smbclient //10.10.0.3/smb-sharing -N -m SMB3 -c ls");
    assert!(!ok && out.contains("ACCESS_DENIED"), "guest got in: {out}");
    let (ok, out) = sh(&format!("ip netns exec sblab-pc1 smbclient //10.10.0.2/dfs -A {auth} -m SMB3 -c 'cd smb-sharing; ls'"));
    assert!(ok && out.contains(" f "), "dfs link: {out}");
    // NFSv3 writes data that SMB reads back (same backing data, one owner).
    let (ok, out) = sh(&format!(
        "ip netns exec sblab-pc1 nfs-cp /tmp/sblab-src 'nfs://10.10.0.3{LAB}/srv/replica1/nfs-sharing/n?version=3' && ip netns exec sblab-pc1 smbclient //10.10.0.3/nfs-sharing -A {auth} -m SMB3 -c 'get n /tmp/sblab-back2' && cmp /tmp/sblab-src /tmp/sblab-back2"
    ));
    assert!(ok, "nfs write, smb read: {out}");
}

/// SMB through smbnetfs (FUSE, run in pc1's namespace, visible here): its credentials
/// are private, it speaks SMB 3.1.1 with signing, and path-based tools work on it.
fn smbnetfs_is_private_signed_and_path_tools_work() {
    let smbnetfs = format!("{LAB}/smbnetfs/.smb");
    for f in ["smbnetfs.auth", "smbnetfs.conf", "smb.conf"] {
        let mode = std::fs::metadata(format!("{smbnetfs}/{f}"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    let fuse_share = format!("{LAB}/mnt/smbnetfs/10.10.0.3/smb-sharing");
    assert!(
        std::fs::read(format!("{fuse_share}/f")).ok() == std::fs::read("/tmp/sblab-src").ok(),
        "the file put over SMB is not seen through smbnetfs"
    );
    let (ok, out) = sh(&format!(
        "rm -rf /tmp/sblab-tree && mkdir -p /tmp/sblab-tree/a/b && for i in 1 2 3 4 5 6 7 8; do head -c $((i * 5000)) /dev/urandom > /tmp/sblab-tree/a/f$i; cp /tmp/sblab-tree/a/f$i /tmp/sblab-tree/a/b/g$i; done && echo x > /tmp/sblab-tree/HEAD && rsync -a /tmp/sblab-tree/ {fuse_share}/tree/ && diff -r /tmp/sblab-tree {LAB}/srv/replica1/smb-sharing/tree && rsync -a {fuse_share}/tree/ /tmp/sblab-tree-back/ && diff -r /tmp/sblab-tree /tmp/sblab-tree-back"
    ));
    assert!(ok, "rsync through smbnetfs: {out}");
    let _ = sh("rm -rf /tmp/sblab-tree /tmp/sblab-tree-back");
    let (_, out) = sh(&format!(
        "smbstatus -s {LAB}/samba/replica1/smb.conf -b 2>&1"
    ));
    assert!(
        out.lines()
            .any(|l| l.contains("10.10.0.10") && l.contains("SMB3_11") && l.contains("GMAC")),
        "smbnetfs session not SMB 3.1.1 with signing: {out}"
    );
}

/// Gluster: a verified run through the FUSE mount of the replica-2 volume; both bricks
/// hold the same bytes; the records carry the servers' CPU.
fn gluster_replicates_survives_a_crash_and_heals() {
    let out = shm_dir();
    let out_dir = out.path().join("r");
    let o = run(&[
        "run",
        "-i",
        "write,read",
        "--verify",
        "--keep-files",
        "--file-sizes",
        "8m",
        "--record-sizes",
        "1m",
        "--reps",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
        "lab:gluster-replica",
    ]);
    assert!(o.status.success(), "gluster run: {}", stderr(&o));
    let recs = records(&out_dir);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r["client"], "fuse");
        assert!(r["server_cpu_s"].as_f64().is_some(), "no server CPU: {r}");
    }
    assert!(
        recs[0]["server_cpu_s"].as_f64().unwrap() > 0.0,
        "replicated write cost the servers nothing: {}",
        recs[0]
    );
    // The glusterfs FUSE daemon's CPU is client CPU: recorded apart and in the total.
    let fuse_s = recs[0]["fuse_cpu_s"].as_f64().unwrap_or(0.0);
    assert!(
        fuse_s > 0.0,
        "the FUSE daemon's CPU is missing: {}",
        recs[0]
    );
    assert!(
        recs[0]["cpu_total_s"].as_f64().unwrap() >= fuse_s,
        "{}",
        recs[0]
    );
    let (ok, out) = sh(&format!(
        "cd {LAB}/srv && f=$(find replica1/bricks/gv-replica -name f0 -not -path '*/.glusterfs/*') && test -n \"$f\" && cmp \"$f\" \"replica2/${{f#replica1/}}\""
    ));
    assert!(ok, "replicas differ: {out}");

    // GlusterFS through NFS (Ganesha's Gluster FSAL): an NFSv3 write lands on both bricks.
    let (ok, out) = sh(&format!(
        "ip netns exec sblab-pc1 nfs-cp /tmp/sblab-src 'nfs://10.10.0.3//viansfs?version=3' && cmp /tmp/sblab-src {LAB}/srv/replica1/bricks/gv-replica/viansfs && cmp /tmp/sblab-src {LAB}/srv/replica2/bricks/gv-replica/viansfs"
    ));
    assert!(ok, "gluster through nfs: {out}");

    // Fault: replica2 crashes during a verified write run. The run completes through the
    // surviving replica with every byte checked; after replica2 returns, the heal finishes
    // and both bricks hold the same data.
    let out2 = shm_dir();
    let out_dir2 = out2.path().join("r");
    let run_child = bin()
        .args([
            "run",
            "-i",
            "write,read",
            "--verify",
            "--keep-files",
            "--file-sizes",
            "16m",
            "--record-sizes",
            "1m",
            "--reps",
            "4",
            "--out",
        ])
        .arg(&out_dir2)
        .arg("lab:gluster-replica")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while records(&out_dir2).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no record after 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let c = lab(&["crash", "replica2"]);
    assert!(
        c.status.success() && stdout(&c).contains("killed"),
        "{}",
        stderr(&c)
    );
    let st = run_child.wait_with_output().unwrap();
    assert!(
        st.status.success(),
        "run with a crashed replica failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let recs = records(&out_dir2);
    assert_eq!(recs.len(), 8);
    assert!(recs
        .iter()
        .all(|r| r["status"] == "ok" && r["verify"] == true));
    let r = lab(&["restart", "replica2"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let t = Instant::now();
    loop {
        let h = lab(&["heal", "--json"]);
        let info: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap_or_default();
        let healed = info["pending_entries"] == 0
            && info["bricks"]
                .as_array()
                .is_some_and(|b| b.iter().all(|x| x[1] == "0"));
        if healed {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(90),
            "heal did not finish: {info}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(stdout(&lab(&["status"])).contains("0 entries to heal"));
    let (ok, out) = sh(&format!(
        "cd {LAB}/srv && for f in $(find replica1/bricks/gv-replica -name f0 -not -path '*/.glusterfs/*'); do cmp \"$f\" \"replica2/${{f#replica1/}}\" || exit 1; done"
    ));
    assert!(ok, "replicas differ after heal: {out}");
}

/// The native clients against every lab target, with every byte checked and the
/// servers' CPU recorded.
fn native_clients_check_every_byte_on_every_target() {
    let out3 = shm_dir();
    let out_dir3 = out3.path().join("r");
    let targets = [
        "lab:smb",
        "lab:smb-libsmbclient",
        "lab:smb2",
        "lab:nfs3",
        "lab:nfs4",
        "lab:nfs42",
        "lab:dfs-smb",
        "lab:gluster-nfs3",
        "lab:gluster",
        "lab:gluster-gfapi",
        "lab:smb-fuse",
    ];
    let mut args = vec![
        "run",
        "-i",
        "write,read,random-read",
        "--verify",
        "--file-sizes",
        "2m",
        "--record-sizes",
        "64k",
        "--reps",
        "1",
        "--out",
        out_dir3.to_str().unwrap(),
    ];
    args.extend(targets);
    let o = run(&args);
    assert!(o.status.success(), "native clients: {}", stderr(&o));
    let recs = records(&out_dir3);
    assert_eq!(recs.len(), 3 * targets.len());
    for r in &recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["server_cpu_s"].as_f64().is_some(), "{r}");
    }
    let client = |t: &str| recs.iter().find(|r| r["target"] == t).unwrap()["client"].clone();
    // SMB is the smb2 crate's client, also through the DFS root, whose referral it follows
    // to replica1's share (the run's manifest says where); libsmbclient on request.
    assert_eq!(client("lab:smb"), "smb2-rs");
    assert_eq!(client("lab:dfs-smb"), "smb2-rs");
    assert_eq!(client("lab:smb-libsmbclient"), "libsmbclient");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir3.join("run.json")).unwrap()).unwrap();
    // As read in the client's namespace, where the run took place.
    assert_eq!(manifest["host"]["tcp_congestion"], "reno", "{manifest}");
    let dfs = manifest_target(&out_dir3, "lab:dfs-smb");
    assert!(
        dfs["mount_options"]
            .as_str()
            .unwrap()
            .ends_with("dfs-referral=\\\\10.10.0.3:445\\smb-sharing"),
        "{dfs}"
    );
    assert_eq!(client("lab:nfs3"), "libnfs-nfs3");
    assert_eq!(client("lab:nfs4"), "sharebench-nfs4.1");
    assert_eq!(client("lab:nfs42"), "sharebench-nfs4.2");
    assert_eq!(client("lab:gluster"), "fuse");
    assert_eq!(client("lab:gluster-gfapi"), "gfapi");
    assert_eq!(client("lab:smb-fuse"), "fuse");
    // The FUSE targets' records carry their daemon's CPU; the native clients' do not.
    for r in &recs {
        let fuse = ["lab:gluster", "lab:smb-fuse"].contains(&r["target"].as_str().unwrap());
        assert_eq!(r["fuse_cpu_s"].as_f64().is_some(), fuse, "{r}");
    }
}

/// The smb2 client holds one connection per caller, not per open file: a load run of 4
/// workers, each holding its 200 files open, is 4 clients to Samba (plus the run's own
/// calls), as 4 machines' clients would be; one per file made 800 (and 800 smbds).
fn smb_holds_a_connection_per_caller() {
    // Connections Samba's namespace accepted (its servers' only other callers are the
    // lab's own, which keep theirs).
    let accepted = || {
        let (ok, out) =
            sh("ip netns exec sblab-replica1 awk '/^Tcp:/ { getline; print $7 }' /proc/net/snmp");
        assert!(ok, "{out}");
        out.trim().parse::<u64>().unwrap()
    };
    let scratch = shm_dir();
    let before = accepted();
    let o = run(&[
        "run",
        "-w",
        "load",
        "--mix",
        "build",
        "--threads",
        "4",
        "--rate-start",
        "400",
        "--points",
        "1",
        "--point-time",
        "1s",
        "-n",
        "1",
        "-o",
        scratch.path().join("r").to_str().unwrap(),
        "lab:smb",
    ]);
    assert!(o.status.success(), "load: {}", stderr(&o));
    let opened = accepted() - before;
    assert!(
        (4..=20).contains(&opened),
        "{opened} connections for 4 workers holding 800 files"
    );
    let info = manifest_target(&scratch.path().join("r"), "lab:smb");
    assert!(
        info["mount_options"]
            .as_str()
            .unwrap()
            .contains("connection-per-caller"),
        "{info}"
    );
}

/// Another user of a share swaps the run's working directory, as soon as it appears, for
/// a symlink to their directory (with a file of theirs named as the tool's) or for a
/// directory of theirs holding `f0 ->` a path outside the volume (which a Gluster brick
/// would create, as root, if a create followed it). The native clients never write
/// through either: the victim file keeps its data, nothing appears outside, and the run
/// ends `failed`. Gluster's swap goes through its FUSE mount (another client); Samba's on
/// its share's directory (smbd sees it at once).
fn swapped_working_directories_are_never_followed() {
    let cases = [
        ("lab:gluster-gfapi", format!("{LAB}/mnt/gv-single")),
        ("lab:smb", format!("{LAB}/srv/replica1/smb-sharing")),
        (
            "lab:smb-libsmbclient",
            format!("{LAB}/srv/replica1/smb-sharing"),
        ),
    ];
    let scratch = shm_dir();
    for (target, share) in &cases {
        for dangling in [true, false] {
            // Between the swap's two renames the name is missing, and a run that looked
            // then stops on that before any swap is there to see (seen on Gluster's FUSE
            // mount, whose renames are slow): the test's window, not the tool's. Such a
            // run is checked for harm like any other, and the swap made again.
            let seen = (0..3).any(|_| swap_under_a_run(target, share, dangling, scratch.path()));
            assert!(
                seen,
                "{target}, dangling {dangling}: three runs in the swap's window"
            );
        }
    }
}

/// One swap of `target`'s working directory under a run (see above); whether the run
/// saw it, as it must unless it stopped in the swap's window.
fn swap_under_a_run(target: &str, share: &str, dangling: bool, scratch: &std::path::Path) -> bool {
    let share = std::path::Path::new(share);
    let victims = share.join("victims");
    std::fs::create_dir_all(&victims).unwrap();
    std::fs::write(victims.join("f0"), "theirs\n").unwrap();
    let outside = scratch.join("outside");
    let out = scratch.join("r");
    let _ = std::fs::remove_dir_all(&out);
    let child = write_read_in_background(target, ("1m", "64k"), "100", &out);
    let swapped = share.join(marked_workdir(share, target));
    // What replaces it is made aside and renamed into place at once.
    let staged = share.join("staged");
    if dangling {
        std::fs::create_dir(&staged).unwrap();
        std::os::unix::fs::symlink(&outside, staged.join("f0")).unwrap();
    } else {
        std::os::unix::fs::symlink(&victims, &staged).unwrap();
    }
    std::fs::rename(&swapped, swapped.with_extension("moved")).unwrap();
    std::fs::rename(&staged, &swapped).unwrap();
    let o = child.wait_with_output().unwrap();
    let what = format!("{target}, dangling {dangling}: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{what}");
    let seen = stderr(&o).contains("another user has changed");
    assert!(
        seen || stderr(&o).contains("No such file or directory"),
        "{what}"
    );
    assert_eq!(manifest_outcome(&out), "failed", "{what}");
    assert_eq!(
        std::fs::read_to_string(victims.join("f0")).unwrap(),
        "theirs\n",
        "{what}"
    );
    assert!(!outside.exists(), "{what}");
    // What the test made, and the run's own directory it moved.
    for p in [swapped.with_extension("moved"), victims] {
        std::fs::remove_dir_all(p).unwrap();
    }
    if dangling {
        std::fs::remove_dir_all(&swapped).unwrap();
    } else {
        std::fs::remove_file(&swapped).unwrap();
    }
    seen
}

/// NFSv3 and NFSv4.0 through libnfs, with the swap made by another NFS client (a swap made
/// on Ganesha's disk stays hidden behind its cache): the tool's directory renamed away and a
/// symlink to the other client's directory put in its place, then a directory of theirs.
/// Both clients are squashed to one user, so the victim is writable by the tool: only
/// going by handle keeps it.
fn nfs_names_go_by_the_handles_the_tool_holds() {
    // NFSv4.0's writes are at most 3 KiB in libnfs 4.0.
    for (url, target, file, record) in [
        (LAB_NFS3, "lab:nfs3", "1m", "64k"),
        (LAB_NFS40, "lab:nfs4?version=4", "256k", "2k"),
    ] {
        // Both clients on a thread in a client's namespace, where the lab's servers are.
        sharebench_lab::net::in_netns("sblab-pc1", || nfs_swap_by_another_client(url)).unwrap();
        a_run_swapped_by_another_client(url, target, file, record);
    }
}

/// A run of the tool whose directory the other client swaps for a symlink mid-run.
fn a_run_swapped_by_another_client(url: &str, target: &str, file: &str, record: &str) {
    let share = std::path::Path::new(LAB).join("srv/replica1/nfs-sharing");
    let scratch = shm_dir();
    let out = scratch.path().join("r");
    let child = write_read_in_background(target, (file, record), "100", &out);
    let swapped = sharebench_lab::net::in_netns("sblab-pc1", || swap_once_marked(url)).unwrap();
    let o = child.wait_with_output().unwrap();
    let what = format!("{target}, {swapped}: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{what}");
    assert!(stderr(&o).contains("another user has changed"), "{what}");
    assert_eq!(manifest_outcome(&out), "failed", "{what}");
    let victim = share.join("victims/f0");
    assert_eq!(
        std::fs::read_to_string(victim).unwrap(),
        "theirs\n",
        "{what}"
    );
    std::fs::remove_file(share.join(&swapped)).unwrap();
    for d in [format!("{swapped}.moved"), "victims".into()] {
        std::fs::remove_dir_all(share.join(d)).unwrap();
    }
}

/// The other client: a file of theirs, then, once the tool's run has marked its directory,
/// that directory renamed away and a symlink to theirs put in its place. Its name.
fn swap_once_marked(url: &str) -> String {
    use sharebench_backends::nfs::NfsBackend;
    use sharebench_core::backend::{write_all, Backend, OpenOptions};
    let theirs = NfsBackend::new(url).unwrap();
    theirs.mkdir("victims").unwrap();
    let mut f = theirs
        .open("victims/f0", OpenOptions::create_new())
        .unwrap();
    write_all(f.as_mut(), b"theirs\n").unwrap();
    f.close().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no working directory appeared");
        let names = theirs.readdir("").unwrap();
        let found = names.iter().map(|e| &e.name).find(|n| {
            n.starts_with("sharebench-")
                && n.ends_with("-t0")
                && theirs.stat(&format!("{n}/.sharebench-workdir")).is_ok()
        });
        if let Some(name) = found {
            theirs.rename(name, &format!("{name}.moved")).unwrap();
            theirs.symlink("victims", name).unwrap();
            return name.clone();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `sharebench run -i write,read` of one (file, record) size, `reps` times without a
/// shortest sample, on `target` into `out`: started, not waited for, its stderr kept (for
/// the phases that change its working directory under it).
fn write_read_in_background(
    target: &str,
    (file, record): (&str, &str),
    reps: &str,
    out: &std::path::Path,
) -> std::process::Child {
    bin()
        .args(["run", "-i", "write,read", "--file-sizes", file])
        .args(["--record-sizes", record, "--reps", reps])
        .args(["--min-sample-time", "0", "--out"])
        .arg(out)
        .arg(target)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The name of a run's working directory in `share` (on the server's disk), once the run
/// has marked it as its own and begun measuring; at most a minute.
fn marked_workdir(share: &std::path::Path, target: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "{target}: no working directory appeared"
        );
        let found = std::fs::read_dir(share).unwrap().find_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            let marked = share.join(&n).join(".sharebench-workdir").exists();
            (n.starts_with("sharebench-") && n.ends_with("-t0") && marked).then_some(n)
        });
        if let Some(n) = found {
            return n;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The outcome a run's manifest gives.
fn manifest_outcome(out: &std::path::Path) -> String {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).unwrap()).unwrap();
    m["outcome"].as_str().unwrap_or_default().to_string()
}

/// Both SMB clients hold their working directory open without FILE_SHARE_DELETE (the
/// smb2 client itself, libsmbclient through a connection of the smb2 client), so another
/// SMB client's rename of it (the first step of a swap) fails with a sharing violation, and
/// the run goes on and ends in its own directory.
fn another_smb_client_cannot_move_the_working_directory() {
    for target in ["lab:smb", "lab:smb?client=libsmbclient"] {
        another_smb_client_cannot_move(target);
    }
}

fn another_smb_client_cannot_move(target: &str) {
    let share = std::path::Path::new(LAB).join("srv/replica1/smb-sharing");
    let scratch = shm_dir();
    let out = scratch.path().join("r");
    let child = write_read_in_background(target, ("1m", "64k"), "30", &out);
    let name = marked_workdir(&share, target);
    let (_, said) = sh(&format!(
        "ip netns exec sblab-pc1 smbclient //10.10.0.3/smb-sharing -A {} -m SMB3 -c 'rename {name} {name}.moved'",
        smb_auth()
    ));
    let o = child.wait_with_output().unwrap();
    assert!(said.contains("NT_STATUS_SHARING_VIOLATION"), "{said}");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(manifest_outcome(&out), "complete");
    assert!(!share.join(format!("{name}.moved")).exists(), "{said}");
    assert!(
        !share.join(&name).exists(),
        "the run removes its own directory"
    );
}

/// lab:nfs3's URL, reached from a client's namespace.
const LAB_NFS3: &str = "nfs://10.10.0.3/var/tmp/sharebench-lab/srv/replica1/nfs-sharing/?version=3";
/// The same export through NFSv4.0 (its pseudo path).
const LAB_NFS40: &str = "nfs://10.10.0.3/nfs-sharing/?version=4";

fn nfs_swap_by_another_client(url: &str) {
    use sharebench_backends::nfs::NfsBackend;
    use sharebench_core::backend::{names_tampering, read_full, write_all, Backend, OpenOptions};
    let ours = NfsBackend::new(url).unwrap();
    let theirs = NfsBackend::new(url).unwrap();
    let put = |b: &NfsBackend, path: &str, text: &str| {
        let mut f = b.open(path, OpenOptions::create_new()).unwrap();
        write_all(f.as_mut(), text.as_bytes()).unwrap();
        f.close().unwrap();
    };
    let text_of = |path: &str| {
        let mut f = theirs.open(path, OpenOptions::read_only()).unwrap();
        let mut buf = vec![0u8; 64];
        let n = read_full(f.as_mut(), &mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    // What the test makes, on the server's disk (also left by a run that failed).
    let share = std::path::Path::new(LAB).join("srv/replica1/nfs-sharing");
    let clear = || {
        for d in ["victims", "sb-t0", "sb-t0.moved"] {
            let p = share.join(d);
            if p.is_symlink() {
                std::fs::remove_file(p).unwrap();
            } else if p.exists() {
                std::fs::remove_dir_all(p).unwrap();
            }
        }
    };
    clear();
    theirs.mkdir("victims").unwrap();
    put(&theirs, "victims/f0", "theirs\n");
    ours.mkdir("sb-t0").unwrap();
    put(&ours, "sb-t0/f0", "ours\n");

    // A symlink to their directory in place of the tool's.
    theirs.rename("sb-t0", "sb-t0.moved").unwrap();
    theirs.symlink("victims", "sb-t0").unwrap();
    ours.unlink("sb-t0/f0").unwrap();
    assert_eq!(text_of("victims/f0"), "theirs\n");
    assert!(
        theirs.stat("sb-t0.moved/f0").is_err(),
        "the tool's own f0 is gone"
    );
    let e = ours
        .open("sb-t0/f0", OpenOptions::create_new())
        .err()
        .unwrap();
    assert!(names_tampering(&e.to_string()), "{e}");
    assert_eq!(text_of("victims/f0"), "theirs\n");

    // A directory of theirs, holding a file of theirs under the tool's name.
    theirs.unlink("sb-t0").unwrap();
    theirs.mkdir("sb-t0").unwrap();
    put(&theirs, "sb-t0/f0", "theirs too\n");
    for how in [OpenOptions::create_new(), OpenOptions::read_write()] {
        let e = ours.open("sb-t0/f0", how).err().unwrap();
        assert!(names_tampering(&e.to_string()), "{how:?}: {e}");
    }
    let e = ours.rmdir("sb-t0").err().unwrap();
    assert!(names_tampering(&e.to_string()), "{e}");
    assert_eq!(text_of("sb-t0/f0"), "theirs too\n");
    assert_eq!(text_of("victims/f0"), "theirs\n");

    clear();
}

/// Four requests in flight on the clients that keep a queue (libnfs, NFSv4.1's data path,
/// also spread over two connections, gfapi, smb2 through the DFS root), every byte checked;
/// SMB through libsmbclient is refused before any I/O.
fn queued_clients_keep_four_requests_in_flight() {
    let out_q = shm_dir();
    let queued = [
        "lab:nfs3",
        "lab:nfs4",
        "lab:nfs4?nconnect=2",
        "lab:gluster-gfapi",
        "lab:dfs-smb",
    ];
    let q_dir = out_q.path().join("q");
    let mut q_args = vec![
        "run",
        "-i",
        "write,read,random-read,pwritev,preadv",
        "--verify",
        "--iodepth",
        "4",
        "--file-sizes",
        "2m",
        "--record-sizes",
        "64k",
        "--reps",
        "1",
        "--out",
        q_dir.to_str().unwrap(),
    ];
    q_args.extend(queued);
    let o = run(&q_args);
    assert!(o.status.success(), "--iodepth 4: {}", stderr(&o));
    let recs = records(&q_dir);
    assert_eq!(recs.len(), 5 * queued.len());
    assert!(recs
        .iter()
        .all(|r| r["status"] == "ok" && r["iodepth"] == 4));
    let two = manifest_target(&q_dir, "lab:nfs4?nconnect=2");
    assert!(
        two["mount_options"]
            .as_str()
            .unwrap()
            .contains(",nconnect=2,data:2-connections"),
        "{two}"
    );
    let o = run(&["run", "--iodepth", "4", "lab:smb-libsmbclient"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("libsmbclient client waits for each reply"));
}

/// NFSv4.1: a small matrix with every byte checked, writes of every size (libnfs's NFSv4.0
/// refused those over 3 KiB), cursor and positional I/O, fsync inside the clock; through
/// sharebench's own data path (a connection and session per caller) and through nfs-rs
/// (`client=nfs-rs`, one session). The lab's Ganesha announces no pNFS, so nfs-rs sends no
/// LAYOUTGET.
fn nfs4_matrix_through_both_data_paths() {
    let out6 = shm_dir();
    let out_dir6 = out6.path().join("r");
    let targets = [
        (
            "lab:nfs4",
            "sharebench-nfs4.1",
            "data:connection-and-session-per-caller",
        ),
        (
            "lab:nfs4?client=nfs-rs",
            "nfs-rs-nfs4.1",
            "one-session-per-target",
        ),
    ];
    let o = run(&[
        "run",
        "-i",
        "write,rewrite,read,random-read,random-write,pwrite,pread",
        "--verify",
        "--include-fsync",
        "--file-sizes",
        "64k,1m",
        "--record-sizes",
        "4k,64k",
        "--reps",
        "1",
        "--out",
        out_dir6.to_str().unwrap(),
        targets[0].0,
        targets[1].0,
    ]);
    assert!(o.status.success(), "lab:nfs4: {}", stderr(&o));
    let recs = records(&out_dir6);
    assert_eq!(recs.len(), 7 * 4 * 2);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir6.join("run.json")).unwrap()).unwrap();
    for (i, (target, client, layout)) in targets.iter().enumerate() {
        for r in recs.iter().filter(|r| r["target"] == *target) {
            assert_eq!(r["status"], "ok", "{r}");
            assert_eq!(r["verify"], true, "{r}");
            assert_eq!(r["client"], *client, "{r}");
            assert_eq!(r["backend"], "nfs", "{r}");
            assert!(r["server_cpu_s"].as_f64().is_some(), "{r}");
        }
        let t = &manifest["targets"][i];
        assert_eq!(t["fs_type"], "nfs4.1", "{t}");
        let opts = t["mount_options"].as_str().unwrap();
        assert!(
            opts.starts_with("vers=4.1,") && opts.contains("slots=") && opts.contains(layout),
            "{opts}"
        );
        assert!(!opts.contains("pnfs-mds-announced"), "{opts}");
    }
}

/// Fragmentation of network targets: the clients cannot ask for extents, the server's
/// backing file answers, and the record says so.
fn network_targets_report_the_servers_fragmentation() {
    let out5 = shm_dir();
    let hints = ["--prealloc-hints", "windows"];
    let targets = ["lab:smb", "lab:nfs3"];
    for rec in stream_records(&out5.path().join("r"), "8m", &hints, &targets) {
        assert!(
            rec["extents_per_file"].as_f64().is_some_and(|e| e >= 1.0),
            "{rec}"
        );
        assert!(
            rec["note"]
                .as_str()
                .unwrap_or("")
                .contains("server's backing file"),
            "{rec}"
        );
    }
    // fallocate over NFS is NFSv4.2's ALLOCATE: the lab's xfs reserves the range; NFSv4.1
    // has no such operation, and the record says so in one line.
    let out6 = shm_dir();
    let prealloc = ["--prealloc", "fallocate"];
    let recs = stream_records(
        &out6.path().join("a"),
        "4m",
        &prealloc,
        &["lab:nfs42", "lab:nfs4"],
    );
    let note = |i: usize| recs[i]["note"].as_str().unwrap_or("").to_string();
    assert!(!note(0).contains("fallocate unavailable"), "{recs:?}");
    assert!(note(1).contains("NFSv4.2's ALLOCATE"), "{recs:?}");
}

/// A server killed during a run: a clear error for its target, the other target runs to
/// the end, every record stays; at depth 1 and with eight requests in flight.
fn a_killed_server_gives_up_its_target_only() {
    let out4 = shm_dir();
    let out_dir4 = out4.path().join("r");
    let child = run_until_first_record(&out_dir4, &[], &["lab:smb2", "lab:nfs3"]);
    assert!(lab(&["crash", "replica2"]).status.success());
    assert_gave_up(child, &out_dir4, &["lab:smb2"], "lab:nfs3");
    assert!(lab(&["restart", "replica2"]).status.success());

    // The same with NFS-Ganesha alone killed (kill -9 of ganesha.nfsd on replica1) while
    // each queued client keeps eight requests in flight: both NFS clients (libnfs and
    // nfs-rs) give up with a clear line, the SMB target of the same server runs on.
    let out5 = shm_dir();
    let out_dir5 = out5.path().join("r");
    let child = run_until_first_record(
        &out_dir5,
        &["--iodepth", "8"],
        &["lab:nfs3", "lab:nfs4", "lab:smb"],
    );
    nix::sys::signal::kill(lab_ganesha(), nix::sys::signal::Signal::SIGKILL).unwrap();
    assert_gave_up(child, &out_dir5, &["lab:nfs3", "lab:nfs4"], "lab:smb");
    // Back as it was: the rest of replica1 goes down and the lab starts it again.
    assert!(lab(&["crash", "replica1"]).status.success());
    std::thread::sleep(Duration::from_millis(500));
    let r = lab(&["restart", "replica1"]);
    assert!(r.status.success(), "{}", stderr(&r));
    // Its Gluster export too: Ganesha reads the volume from replica1's glusterd as it starts.
    let (ok, out) = sh(&format!(
        "ip netns exec sblab-pc1 nfs-cp /tmp/sblab-src 'nfs://10.10.0.3//restarted?version=3' && cmp /tmp/sblab-src {LAB}/srv/replica1/bricks/gv-replica/restarted"
    ));
    assert!(ok, "gluster through nfs after replica1's restart: {out}");
}

/// Nothing of the lab listens in the host's namespace, the host has no route into it, and
/// every host's link is shaped.
fn isolated_from_the_host_and_shaped() {
    let (_, listen) = sh("ss -ltn");
    assert!(
        !listen.contains("10.10.0."),
        "lab address in host namespace: {listen}"
    );
    let (_, route) = sh("ip route show 10.10.0.0/24");
    assert!(route.trim().is_empty(), "host has a lab route: {route}");

    // Shaping: 20 MB over a 100 Mbit/s link takes at least 1.3 s (12.5 MB/s at most).
    let auth = smb_auth();
    let t = Instant::now();
    let (ok, out) = sh(&format!(
        "head -c 20000000 /dev/zero > /tmp/sblab-20m && ip netns exec sblab-pc1 smbclient //10.10.0.3/smb-sharing -A {auth} -m SMB3 -c 'put /tmp/sblab-20m big'"
    ));
    assert!(ok, "{out}");
    assert!(
        t.elapsed() >= Duration::from_millis(1300),
        "20 MB in {:?}: link not shaped",
        t.elapsed()
    );
    let _ = sh("rm -f /tmp/sblab-src /tmp/sblab-back /tmp/sblab-back2 /tmp/sblab-20m");
    // Every host's link is shaped, servers' too, in both directions, and every host
    // sends with reno, not the machine's BBR (whose pacing stalls SMB here).
    for host in ["dfs-ns", "replica1", "replica2", "pc1", "pc2", "pc3"] {
        let (ok, cc) = sh(&format!(
            "ip netns exec sblab-{host} sysctl -n net.ipv4.tcp_congestion_control"
        ));
        assert!(ok && cc.trim() == "reno", "{host}: {cc}");
        for cmd in [
            format!("tc -n sblab-lan qdisc show dev sbl-{host}"),
            format!("tc -n sblab-{host} qdisc show dev eth0"),
        ] {
            let (ok, out) = sh(&cmd);
            assert!(
                ok && out.contains("tbf") && out.contains("100Mbit"),
                "{cmd}: {out}"
            );
        }
    }
}

/// Three clients at once: each lab client host is an MPI rank (mpirun over ssh on the
/// lab network), each on its own 100 Mbit/s link, all against one server whose link is
/// shaped too: together they get that one link, not three.
#[cfg(feature = "mpi")]
fn mpi_clients_share_the_servers_link(up: &Lab) {
    let services = up.status["services"].as_array().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mpi");
    let o = lab(&[
        "mpirun",
        "--np",
        "3",
        "run",
        "lab:nfs3",
        "-i",
        "write,read",
        "--file-sizes",
        "8m",
        "--record-sizes",
        "1m",
        "--reps",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "lab mpirun: {}{}",
        stdout(&o),
        stderr(&o)
    );
    let recs = records(&dir);
    let mut hosts: Vec<String> = recs
        .iter()
        .filter(|r| r["scope"] == "worker")
        .map(|r| r["host"].as_str().unwrap().to_string())
        .collect();
    hosts.sort();
    hosts.dedup();
    assert_eq!(hosts.len(), 3, "{hosts:?}");
    for (h, ns) in hosts.iter().zip(["sblab-pc1", "sblab-pc2", "sblab-pc3"]) {
        assert!(h.ends_with(ns), "{h}");
    }
    // 100 Mbit/s is 12,207 KiB/s (11.92 MiB/s); tbf's burst (25 kB) lets a transfer
    // run a little over it, never 5 % over.
    let link_kib = 100e6 / 8.0 / 1024.0;
    for op in ["write", "read"] {
        let workers: Vec<f64> = recs
            .iter()
            .filter(|r| r["scope"] == "worker" && r["op"] == op)
            .map(|r| r["throughput_kib_s"].as_f64().unwrap())
            .collect();
        assert_eq!(workers.len(), 3, "{op}: {recs:?}");
        for kib in &workers {
            assert!(
                *kib <= 1.05 * link_kib,
                "{op}: one client above the link: {kib} KiB/s"
            );
        }
        let agg = recs
            .iter()
            .find(|r| r["scope"] == "aggregate" && r["op"] == op)
            .unwrap();
        // All bytes over the time from the first client's start to the last one's end.
        let parent = agg["throughput"]["parent_sees_kib_s"].as_f64().unwrap();
        assert!(
            parent <= 1.05 * link_kib,
            "{op}: 3 clients together above the server's link: {parent} KiB/s (workers {workers:?})"
        );
        assert!(
            parent > 0.6 * link_kib,
            "{op}: 3 clients together got little of the server's link: {parent} KiB/s (workers {workers:?})"
        );
        // Each client's own rate over its own time: their sum may pass the link when
        // the share is unfair (at most 1 + 1/2 + 1/3 of it), never 3 links' worth.
        let sum: f64 = workers.iter().sum();
        assert!(
            sum < 2.0 * link_kib,
            "{op}: the clients' rates add up to {sum} KiB/s: the server link is not shaped"
        );
        eprintln!(
            "lab mpirun, 3 clients, lab:nfs3 over 100mbit, {op}: clients {:?} MiB/s, together {:.2} MiB/s (sum {:.2})",
            workers.iter().map(|k| (k / 1024.0 * 100.0).round() / 100.0).collect::<Vec<_>>(),
            parent / 1024.0,
            sum / 1024.0
        );
    }

    // A client host that does not answer: `lab mpirun` ends within seconds, in one
    // line naming it (the lab started that sshd; the test stops it by its PID).
    let sshd3 = services
        .iter()
        .find(|s| s["name"] == "sshd" && s["host"] == "pc3")
        .unwrap()["pid"]
        .as_i64()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(sshd3 as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let o = lab(&[
        "mpirun",
        "--np",
        "3",
        "run",
        "lab:nfs3",
        "--file-sizes",
        "1m",
    ]);
    assert!(!o.status.success());
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("client host pc3 (") && e.contains("ssh"), "{e}");
    // Two hosts that answer are still enough for two ranks.
    let o = lab(&[
        "mpirun",
        "--np",
        "2",
        "run",
        "null://",
        "--file-sizes",
        "1m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Down removes everything the lab made; a second down has nothing to do.
fn down_leaves_nothing(up: &Lab) {
    let d = lab(&["down"]);
    assert!(d.status.success(), "{}", stderr(&d));
    assert_nothing_left(&up.pids);
    let d2 = lab(&["down"]);
    assert!(d2.status.success(), "second down: {}", stderr(&d2));
}

/// SIGKILL half-way through `lab up`, at several points, then down cleans up.
fn killed_lab_up_is_cleaned_by_down() {
    for delay_ms in [150u64, 500, 900] {
        let mut child = bin()
            .args(["lab", "up", "--image-size", "1G"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let d = lab(&["down"]);
        assert!(
            d.status.success(),
            "down after SIGKILL at {delay_ms} ms: {}",
            stderr(&d)
        );
        assert_nothing_left(&[]);
    }
    // ... and once right after the smbnetfs mount was recorded, while it is being made.
    let mut child = bin()
        .args(["lab", "up", "--image-size", "1G"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !std::fs::read_to_string(format!("{LAB}/state.json"))
        .unwrap_or_default()
        .contains("mnt/smbnetfs")
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "lab up never reached the smbnetfs mount"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    let d = lab(&["down"]);
    assert!(
        d.status.success(),
        "down after SIGKILL at the smbnetfs mount: {}",
        stderr(&d)
    );
    assert_nothing_left(&[]);
}

/// Starts `run` of 4 write/read repetitions of 16 MiB on `targets` (with `extra` options),
/// and returns once its first record is on disk (a fault injected then strikes mid-run).
fn run_until_first_record(
    out_dir: &std::path::Path,
    extra: &[&str],
    targets: &[&str],
) -> std::process::Child {
    let child = bin()
        .args(["run", "-i", "write,read", "--file-sizes", "4m"])
        .args(["--record-sizes", "1m", "--reps", "4"])
        .args(extra)
        .arg("--out")
        .arg(out_dir)
        .args(targets)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while records(out_dir).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no record after 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// The run manifest's entry for target `name` of the run in `out_dir`.
fn manifest_target(out_dir: &std::path::Path, name: &str) -> serde_json::Value {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("run.json")).unwrap()).unwrap();
    manifest["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name} in {manifest}"))
        .clone()
}

/// One stream run (one stream of `size`, one repetition, the `extra` options) of `targets`
/// into `out_dir`: its "record" row per target, in the order of `targets`.
fn stream_records(
    out_dir: &std::path::Path,
    size: &str,
    extra: &[&str],
    targets: &[&str],
) -> Vec<serde_json::Value> {
    let recs = stream_run(out_dir, size, "1", extra, targets);
    targets
        .iter()
        .map(|t| {
            recs.iter()
                .find(|r| r["target"] == *t && r["op"] == "record")
                .unwrap_or_else(|| panic!("no record row for {t}: {recs:?}"))
                .clone()
        })
        .collect()
}

/// The run of `run_until_first_record` after the server of the `dead` targets was killed:
/// it exits 1, says in one line per target that it gave each up, keeps a failed record
/// (a target whose failure came in removing its work files has none: that is not a
/// measurement), and `alive` ran all 8 measurements.
fn assert_gave_up(
    child: std::process::Child,
    out_dir: &std::path::Path,
    dead: &[&str],
    alive: &str,
) {
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    for dead in dead {
        let gave_up = format!("{dead}: giving up on this target");
        assert_eq!(err.matches(&gave_up).count(), 1, "{err}");
    }
    let recs = records(out_dir);
    let count = |target: &str, status: &str| {
        recs.iter()
            .filter(|r| r["target"] == target && r["status"] == status)
            .count()
    };
    assert_eq!(count(alive, "ok"), 8, "{recs:?}");
    let failed: usize = dead.iter().map(|d| count(d, "failed")).sum();
    assert!(failed > 0, "{recs:?}");
}
