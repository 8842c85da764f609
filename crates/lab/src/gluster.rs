//! GlusterFS: one glusterd per server namespace (each with its own /var/lib/glusterd, /run
//! and log directory in a private mount namespace: glusterd always binds
//! /run/glusterd.socket, so two would collide), a single-brick volume and a replica-2
//! volume across the first two Gluster hosts (the seed's synchronous two-replica
//! technique), and a FUSE mount of each, made from a client namespace (so the traffic
//! crosses the lab network) yet visible on the host as a directory target.

use crate::net::netns_of;
use crate::proc;
use crate::service::{start_server, Server};
use crate::sh::run;
use crate::state::{LabState, Resource};
use crate::topology::Host;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const PORT: u16 = 24007;
pub const SINGLE: &str = "gv-single";
pub const REPLICA: &str = "gv-replica";

/// Starts glusterd on `host`.
pub fn start_daemon(state: &mut LabState, host: &Host) -> Result<()> {
    let dir = state.file(format!("gluster/{}", host.name));
    let lib = dir.join("lib");
    let log = dir.join("log");
    std::fs::create_dir_all(&log)?;
    std::fs::create_dir_all(&lib)?;
    // Seed the private state directory with the package's groups and hooks.
    for sub in ["groups", "hooks"] {
        let from = Path::new("/var/lib/glusterd").join(sub);
        if from.exists() {
            run(
                "cp",
                &["-a", &from.to_string_lossy(), &lib.to_string_lossy()],
            )?;
        }
    }
    let script = dir.join("start.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh
# Run by the lab in the server's network namespace and a private mount namespace.
set -e
mount --bind {lib} /var/lib/glusterd
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/gluster
mount --bind {log} /var/log/glusterfs
# No geo-replication here: with gsyncd missing glusterd skips setting it up, which runs
# gsyncd (Python) some 25 times and delays every start by about 2 s. The package's other
# files stay, behind links; only this mount namespace sees the change.
for pkg in /usr/lib/*/glusterfs /usr/libexec/glusterfs; do
    [ -e \"$pkg/gsyncd\" ] || continue
    mkdir -p /run/gluster-pkg
    mount --bind \"$pkg\" /run/gluster-pkg
    mount -t tmpfs -o mode=0755 tmpfs \"$pkg\"
    for e in /run/gluster-pkg/*; do
        [ \"${{e##*/}}\" = gsyncd ] || ln -s \"$e\" \"$pkg/\"
    done
    break
done
exec glusterd -N --log-file={log}/glusterd.log
",
            lib = lib.display(),
            log = log.display()
        ),
    )?;
    let out = dir.join("glusterd.out");
    let server =
        Server::script_in_private_mounts("glusterd", &script, out, log.join("glusterd.log"), PORT);
    start_server(state, host, server).map(|_| ())
}

/// Runs the gluster CLI inside the namespaces of the glusterd with leader `pid`.
fn gluster(pid: i32, args: &[&str]) -> Result<String> {
    let t = pid.to_string();
    let mut all = vec!["-t", &t, "-m", "-n", "gluster", "--mode=script"];
    all.extend_from_slice(args);
    run("nsenter", &all)
}

/// Retries a gluster command that fails while the pool settles, for up to `timeout`.
fn gluster_retry(pid: i32, args: &[&str], timeout: Duration) -> Result<String> {
    let start = Instant::now();
    loop {
        match gluster(pid, args) {
            Ok(out) => return Ok(out),
            Err(e) if start.elapsed() > timeout => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
}

fn brick(state: &LabState, host: &Host, volume: &str) -> Result<(String, PathBuf)> {
    let path = state.file(format!("srv/{}/bricks/{volume}", host.name));
    std::fs::create_dir_all(&path)?;
    Ok((format!("{}:{}", host.address, path.display()), path))
}

/// Joins the Gluster hosts into one pool and creates and starts the volumes: `gv-single`
/// on the first host, and `gv-replica` (replica 2) on the first two.
pub fn create_volumes(state: &mut LabState, hosts: &[Host]) -> Result<Vec<&'static str>> {
    let Some(first) = hosts.first() else {
        return Ok(Vec::new());
    };
    let pid = state
        .services
        .iter()
        .find(|s| s.name == "glusterd" && s.host == first.name)
        .map(|s| s.pid)
        .context("glusterd of the first Gluster host is not running")?;
    for h in &hosts[1..] {
        gluster_retry(
            pid,
            &["peer", "probe", &h.address.to_string()],
            Duration::from_secs(30),
        )?;
    }
    // Wait until every peer is in the cluster, not only connected: a volume created while
    // a peer is still joining never reaches it, and starting the volume then fails there
    // ("Pre Validation failed on PEER. Volume ... does not exist").
    let start = Instant::now();
    loop {
        let out = gluster(pid, &["peer", "status"])?;
        let joined = (out.lines())
            .filter(|l| l.contains("State: Peer in Cluster (Connected)"))
            .count();
        if joined + 1 >= hosts.len() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            bail!("gluster peers did not connect: {out}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut volumes = vec![];
    let (b, _) = brick(state, first, SINGLE)?;
    gluster_retry(
        pid,
        &["volume", "create", SINGLE, &b],
        Duration::from_secs(30),
    )?;
    gluster_retry(pid, &["volume", "start", SINGLE], Duration::from_secs(30))?;
    volumes.push(SINGLE);
    if hosts.len() >= 2 {
        let (b1, _) = brick(state, &hosts[0], REPLICA)?;
        let (b2, _) = brick(state, &hosts[1], REPLICA)?;
        gluster_retry(
            pid,
            &["volume", "create", REPLICA, "replica", "2", &b1, &b2],
            Duration::from_secs(30),
        )?;
        gluster_retry(pid, &["volume", "start", REPLICA], Duration::from_secs(30))?;
        volumes.push(REPLICA);
    }
    Ok(volumes)
}

/// The mount point of a volume's FUSE mount on the host.
pub fn mount_point(volume: &str) -> PathBuf {
    LabState::dir().join("mnt").join(volume)
}

/// The name of the FUSE client process of `volume`, as the lab state records it.
pub fn process_name(volume: &str) -> String {
    format!("glusterfs-fuse@{volume}")
}

/// Mounts `volume` with the FUSE client, run in namespace `client` against `server`.
pub fn mount(state: &mut LabState, client: &Host, server: &Host, volume: &str) -> Result<PathBuf> {
    let mnt = mount_point(volume);
    std::fs::create_dir_all(&mnt)?;
    let log = state.file(format!("gluster/client-{volume}.log"));
    state.intend(Resource::Mount { path: mnt.clone() })?;
    let server_addr = server.address.to_string();
    let mnt_s = mnt.to_string_lossy().into_owned();
    let log_s = log.to_string_lossy().into_owned();
    let args = [
        "-N",
        &format!("--volfile-server={server_addr}"),
        &format!("--volfile-id={volume}"),
        &format!("--log-file={log_s}"),
        &mnt_s,
    ]
    .map(|s| s.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = state.file(format!("gluster/client-{volume}.out"));
    proc::spawn(
        state,
        &process_name(volume),
        &netns_of(&client.name),
        ("glusterfs", &args),
        None,
        &out,
    )?;
    let start = Instant::now();
    while !crate::storage::is_mounted(&mnt) {
        if start.elapsed() > Duration::from_secs(30) {
            bail!(
                "the FUSE mount of {volume} did not appear; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // The mount answers once the client has its volume graph.
    let start = Instant::now();
    while std::fs::read_dir(&mnt).is_err() {
        if start.elapsed() > Duration::from_secs(30) {
            bail!(
                "the FUSE mount of {volume} does not answer; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // Writable for every client identity: NFS through the Gluster FSAL squashes to nobody.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&mnt, std::fs::Permissions::from_mode(0o1777))?;
    Ok(mnt)
}

/// `gluster volume heal VOLUME info`: entries pending per brick ("-" when a brick is down).
pub fn heal_info(glusterd_pid: i32, volume: &str) -> Result<crate::HealInfo> {
    let out = gluster(glusterd_pid, &["volume", "heal", volume, "info"])?;
    let mut bricks = Vec::new();
    let mut current = String::new();
    let mut pending = 0;
    for line in out.lines() {
        if let Some(b) = line.strip_prefix("Brick ") {
            current = b.trim().to_string();
        } else if let Some(n) = line.strip_prefix("Number of entries:") {
            let n = n.trim();
            pending += n.parse::<u64>().unwrap_or(0);
            bricks.push((current.clone(), n.to_string()));
        }
    }
    Ok(crate::HealInfo {
        volume: volume.to_string(),
        pending_entries: pending,
        bricks,
    })
}
