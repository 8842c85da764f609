//! The lab's lifecycle: `up` (prerequisites, the lab directory, images, namespaces,
//! servers; everything undone if a step fails) and `down` (every process, mount, loop
//! device, namespace and file the lab recorded, also after a crash). Not: what targets
//! the lab offers (`targets`) or how it is doing (`status`).

use crate::backing::{self, Backing};
use crate::state::{self, LabState, Phase, Resource};
use crate::topology::{Service, Topology};
use crate::{disk, ganesha, gluster, net, proc, samba, sh, smbnetfs, ssh, storage, topology};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use sharebench_core::safe_dir::SafeDir;
use std::path::PathBuf;
use std::time::Duration;

/// What `lab up` was asked for, parsed: `Backing::parse_list` for `--fs`, `Link` for
/// `--link`, `DiskProfile::named` for `--disk`.
#[derive(Debug, Clone)]
pub struct UpOptions {
    pub topology: Option<PathBuf>,
    /// The backings side by side, e.g. from `xfs,ext4` or `ext3+write-order,ext3`; the
    /// first is the primary.
    pub backings: Vec<Backing>,
    pub link: net::Link,
    /// TCP congestion control in every namespace.
    pub congestion: net::Congestion,
    /// Bytes of each server's (sparse) image.
    pub image_size: u64,
    /// Mount the first replica's SMB shares with smbnetfs (FUSE), target `lab:smb-fuse`.
    pub smb_fuse: bool,
    /// Start GlusterFS (its daemons, volumes and FUSE mounts: the `lab:gluster*` targets),
    /// most of `lab up`'s time; without it the topology's hosts serve the rest.
    pub gluster: bool,
    /// CPUs every server process may run on (`taskset -c` list, e.g. `1`), so that they
    /// and the client (`run --cpus`) do not take turns on one core; `None`: anywhere.
    pub server_cpus: Option<String>,
    /// The latency of the disk under every backing image: `host` (none added), `hdd`,
    /// `ebs-magnetic`.
    pub disk: &'static disk::DiskProfile,
}

/// `lab up`'s default image size: 2 GiB.
pub const DEFAULT_IMAGE_SIZE: u64 = 2 << 30;

impl Default for UpOptions {
    fn default() -> Self {
        UpOptions {
            topology: None,
            backings: Backing::parse_list("xfs", false, false).expect("a valid backing"),
            link: net::Link::Unlimited,
            congestion: net::Congestion::Reno,
            image_size: DEFAULT_IMAGE_SIZE,
            smb_fuse: true,
            gluster: true,
            server_cpus: None,
            disk: &disk::PROFILES[0],
        }
    }
}

/// The marker that makes the lab directory the lab's own.
const MARKER: &str = ".sharebench-lab";

/// How long `down` lets the servers stop on SIGTERM (all at once) before SIGKILL. Samba,
/// glusterd and sshd exit within 0.2 s; Ganesha spends 4-10 s tearing down its Gluster
/// exports (gfapi's teardown), which nothing needs: the lab's data is about to be removed.
const SERVER_GRACE: Duration = Duration::from_millis(500);

/// Tools the lab needs, with the Debian package that has each.
const TOOLS: [(&str, &str); 12] = [
    ("ip", "iproute2"),
    ("sysctl", "procps"),
    ("tc", "iproute2"),
    ("nsenter", "util-linux"),
    ("unshare", "util-linux"),
    ("losetup", "mount"),
    ("smbd", "samba"),
    ("smbpasswd", "samba-common-bin"),
    ("ganesha.nfsd", "nfs-ganesha nfs-ganesha-vfs"),
    ("rpcbind", "rpcbind"),
    ("glusterd", "glusterfs-server"),
    ("glusterfs", "glusterfs-client"),
];

fn check_prerequisites(
    backings: &[Backing],
    smb_fuse: bool,
    gluster: bool,
    disk: &disk::DiskProfile,
) -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!("the lab needs root (namespaces, loop devices, mounts)");
    }
    let missing: Vec<String> = TOOLS
        .iter()
        .filter(|(t, _)| gluster || !t.starts_with("gluster"))
        .map(|(t, p)| (t.to_string(), p.to_string()))
        .chain(
            backings
                .iter()
                .map(|b| (format!("mkfs.{}", b.fs), format!("the {} tools", b.fs))),
        )
        .chain(smb_fuse.then(|| {
            (
                "smbnetfs".to_string(),
                "smbnetfs, or lab up --no-smb-fuse".into(),
            )
        }))
        .chain(disk.delays().then(|| {
            (
                "nbdfuse".to_string(),
                format!("libnbd-bin and nbdkit, for --disk {}", disk.name),
            )
        }))
        .filter(|(t, _)| !sh::run_quiet("sh", &["-c", &format!("command -v {t}")]))
        .map(|(t, p)| format!("{t} ({p})"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "missing: {}; run scripts/install-deps.sh",
            missing.join(", ")
        );
    }
    Ok(())
}

/// Brings the lab up. If any step fails, everything already created is taken down again.
pub fn up(opts: &UpOptions) -> Result<LabState> {
    if let Some(existing) = LabState::load()? {
        if existing.phase == Phase::Up && all_alive(&existing) {
            bail!("a lab is already up (see 'sharebench lab status'); take it down first with 'sharebench lab down'");
        }
        bail!("a lab was left half up or its servers died; run 'sharebench lab down' first");
    }
    let backings = opts.backings.clone();
    let disk = opts.disk;
    let mut topology = match &opts.topology {
        Some(p) => Topology::load(p)?,
        None => Topology::default_lab(),
    };
    if !opts.gluster {
        topology.drop_service(Service::Gluster);
    }
    check_prerequisites(&backings, opts.smb_fuse, opts.gluster, disk)?;
    if let Some(cpus) = &opts.server_cpus {
        // taskset itself judges the list against the CPUs this machine lets us use.
        if !sh::run_quiet("taskset", &["-c", cpus, "true"]) {
            bail!("--server-cpus '{cpus}': not a list of CPUs this machine lets the lab use (e.g. 1 or 0-1; see nproc)");
        }
    }

    let dir = LabState::dir();
    // The lab keeps its state and credentials here: a directory anyone else could change
    // (a planted /var/tmp/sharebench-lab) is refused, and the marker is never followed.
    let lab_dir =
        SafeDir::create(&dir).with_context(|| format!("lab directory {}", dir.display()))?;
    if !lab_dir.is_empty()? && !lab_dir.contains(MARKER) {
        bail!(
            "{} exists and is not the lab's; refusing to use it",
            dir.display()
        );
    }
    lab_dir.replace(MARKER, b"sharebench lab directory\n", 0o644)?;
    let mut state = LabState {
        version: 1,
        phase: Phase::Starting,
        topology,
        fs: backings
            .iter()
            .map(Backing::name)
            .collect::<Vec<_>>()
            .join(","),
        link: opts.link,
        congestion: opts.congestion,
        disk: disk.name.to_string(),
        backings,
        server_cpus: opts.server_cpus.clone(),
        resources: Vec::new(),
        services: Vec::new(),
        smb_user: samba::USER.into(),
        credentials_file: dir.join("smb-password"),
    };
    state.save()?;
    match build(&mut state, opts) {
        Ok(()) => {
            state.phase = Phase::Up;
            state.save()?;
            Ok(state)
        }
        Err(e) => {
            let _ = down();
            Err(e.context("lab up failed; everything it created was removed"))
        }
    }
}

fn build(state: &mut LabState, opts: &UpOptions) -> Result<()> {
    net::create_lan(state)?;
    let topo = state.topology.clone();
    for h in &topo.hosts {
        net::add_host(state, h, topo.prefix_len)?;
    }
    net::shape_links(state, opts.link)?;
    let password = samba::new_password()?;
    samba::write_credentials(state, &password)?;
    let disk = opts.disk;
    let replicas: Vec<_> = topo.replicas().cloned().collect();
    for h in topo.servers() {
        let mut data = Vec::new();
        for i in 0..backings_of(state, h) {
            let b = state.backings[i].clone();
            data.push(storage::create(
                state,
                &h.name,
                i,
                &b,
                opts.image_size,
                disk,
            )?);
        }
        for s in &h.services {
            match (s, data.first()) {
                (Service::Samba, Some(_)) => samba::start_replica(state, h, &data, &password)?,
                // Ganesha starts after the Gluster volumes it may export.
                (Service::Ganesha, _) => {}
                (Service::DfsRoot, _) => samba::start_dfs_root(state, h, &replicas, &password)?,
                (Service::Gluster, Some(_)) => gluster::start_daemon(state, h)?,
                _ => {}
            }
        }
    }
    let gluster_hosts = topo.gluster_hosts();
    if let (Some(first), Some(client)) = (gluster_hosts.first(), topo.clients().next()) {
        for volume in gluster::create_volumes(state, &gluster_hosts)? {
            gluster::mount(state, client, first, volume)?;
        }
    }
    // The first replica's SMB shares as a FUSE file system, for path-based tools.
    if let (true, Some(replica), Some(client)) =
        (opts.smb_fuse, replicas.first(), topo.clients().next())
    {
        let user = state.smb_user.clone();
        smbnetfs::mount(state, client, replica, &user, &password)?;
    }
    if let Some(g) = topo.host_with(Service::Ganesha).cloned() {
        let data = data_dirs(state, &g);
        let skip_fsync = any_async(state);
        ganesha::start(state, &g, &data, gluster_export_of(&topo, &g), skip_fsync)?;
    }
    // The clients as MPI hosts (`lab mpirun`), where sshd is installed.
    if ssh::available() {
        ssh::start_all(state)?;
    }
    Ok(())
}

/// Whether a backing is `+async`: the NFS server then skips every fsync.
pub(crate) fn any_async(state: &LabState) -> bool {
    state
        .backings
        .iter()
        .any(|b| b.durability == backing::Durability::Async)
}

/// How many backing images `h` has: none without data services, the primary only for
/// Gluster's bricks, every backing where it serves shares or exports.
fn backings_of(state: &LabState, h: &topology::Host) -> usize {
    let has = |wanted: &[Service]| h.services.iter().any(|s| wanted.contains(s));
    if has(&[Service::Samba, Service::Ganesha]) {
        state.backings.len()
    } else if has(&[Service::Gluster]) {
        1
    } else {
        0
    }
}

/// Mount points of `h`'s backing images, the primary first.
pub(crate) fn data_dirs(state: &LabState, h: &topology::Host) -> Vec<PathBuf> {
    (0..backings_of(state, h))
        .map(|i| storage::data_dir(state, &h.name, i))
        .collect()
}

/// The Gluster volume Ganesha on `g` exports through the Gluster FSAL: the replicated
/// volume, when `g` is one of its Gluster hosts.
pub(crate) fn gluster_export_of(t: &Topology, g: &topology::Host) -> Option<&'static str> {
    let hosts = t.gluster_hosts();
    (hosts.len() >= 2 && g.services.contains(&Service::Gluster)).then_some(gluster::REPLICA)
}

fn all_alive(state: &LabState) -> bool {
    state.resources.iter().all(|r| match r {
        Resource::Process {
            pid, start_time, ..
        } => proc::is_alive(*pid, *start_time),
        _ => true,
    })
}

/// What `lab down` removed, and what it could not.
#[derive(Debug, Default, Serialize)]
pub struct DownReport {
    pub removed: Vec<String>,
    pub problems: Vec<String>,
}

/// Processes living in one of the lab's network namespaces: started by the lab (a server
/// whose PID was not yet recorded when `lab up` died, or a client a test left behind).
fn processes_in_lab_namespaces() -> Vec<i32> {
    processes_in_namespaces(&net::lab_namespaces())
}

/// Processes whose network namespace is one of `names`.
pub(crate) fn processes_in_namespaces(names: &[String]) -> Vec<i32> {
    use std::os::unix::fs::MetadataExt;
    let inodes: Vec<u64> = names
        .iter()
        .filter_map(|n| {
            std::fs::metadata(format!("/run/netns/{n}"))
                .ok()
                .map(|m| m.ino())
        })
        .collect();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read_link(format!("/proc/{pid}/ns/net"))
                        .ok()
                        .and_then(|l| {
                            l.to_str()?
                                .strip_prefix("net:[")?
                                .strip_suffix(']')?
                                .parse::<u64>()
                                .ok()
                        })
                        .is_some_and(|ino| inodes.contains(&ino))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The tools `lab up` runs itself (not servers), by command name.
fn is_helper_tool(comm: &str) -> bool {
    comm.starts_with("mkfs")
        || comm.starts_with("mke2fs")
        || [
            "mount",
            "umount",
            "losetup",
            "truncate",
            "cp",
            "ip",
            "tc",
            "smbpasswd",
            "ssh-keygen",
        ]
        .contains(&comm)
}

/// Lab helper tools running now, outside the lab's namespaces: a tool of `is_helper_tool`
/// whose command line names the lab directory, a lab namespace or a lab link.
fn lab_helpers() -> Vec<i32> {
    let dir = LabState::dir().display().to_string();
    let me = std::process::id() as i32;
    let in_lab = processes_in_lab_namespaces();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&pid| pid != me && !in_lab.contains(&pid))
                .filter(|&pid| proc::comm(pid).is_some_and(|c| is_helper_tool(&c)))
                .filter(|&pid| {
                    proc::cmdline(pid).is_some_and(|c| {
                        c.contains(&dir) || c.contains(state::PREFIX) || c.contains("sbl-")
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Waits up to `limit` for the lab's helper tools to end; returns how many there were.
fn wait_for_helpers(limit: Duration) -> usize {
    let first = lab_helpers();
    let t = std::time::Instant::now();
    while !lab_helpers().is_empty() && t.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(100));
    }
    first.len()
}

/// Takes the lab down: every process, mount, loop device, namespace and file it created.
/// Safe to run twice, and after a crash of `lab up`.
pub fn down() -> Result<DownReport> {
    let mut report = DownReport::default();
    let state = LabState::load().unwrap_or(None);
    let resources = state
        .as_ref()
        .map(|s| s.resources.clone())
        .unwrap_or_default();
    // A `lab up` killed half-way may leave a tool it ran still at work (a `mount` of an
    // image, a `losetup`, an `ip link add`): its result would appear after the clean-up
    // below looked, and stay. Let such helpers finish first.
    if state.as_ref().is_none_or(|s| s.phase != Phase::Up) {
        let waited = wait_for_helpers(Duration::from_secs(30));
        if waited > 0 {
            report.removed.push(format!(
                "waited for {waited} tools of an interrupted lab up"
            ));
        }
    }
    // 0. Client mounts first, while their FUSE processes still answer.
    for r in resources.iter().rev() {
        if let Resource::Mount { path } = r {
            if path.starts_with(LabState::dir().join("mnt")) && storage::is_mounted(path) {
                storage::unmount(path);
            }
        }
    }
    // 1. Servers, all at once, by their recorded process groups.
    let mut servers = Vec::new();
    for r in resources.iter().rev() {
        if let Resource::Process {
            name,
            pid,
            start_time,
        } = r
        {
            servers.push((*pid, *start_time));
            report.removed.push(format!("process {name} (pid {pid})"));
        }
    }
    proc::stop_groups(&servers, SERVER_GRACE);
    // 2. Anything else still inside the lab's namespaces (brick daemons, a restarted
    //    server's helpers): each PID is signalled itself, and the namespaces must be empty
    //    before unmounting, since a live process may hold a copy of a mount in a private
    //    mount namespace and keep its loop device busy.
    let strays = processes_in_lab_namespaces();
    for &pid in &strays {
        report
            .removed
            .push(format!("process {pid} left in a lab namespace"));
    }
    if !proc::stop_pids(&strays, Duration::from_secs(5), processes_in_lab_namespaces) {
        report
            .problems
            .push("processes in lab namespaces survived SIGKILL".into());
    }
    // 3. Mounts, loop devices, namespaces and links; 4. the lab directory.
    release_mounts_and_network(&resources, &mut report);
    remove_lab_dir(&mut report)?;
    if !report.problems.is_empty() {
        bail!(
            "lab down left something behind: {}",
            report.problems.join("; ")
        );
    }
    Ok(report)
}

/// `down`'s third step: the lab's mounts, loop devices, delay layers, links and
/// namespaces, newest first.
fn release_mounts_and_network(resources: &[Resource], report: &mut DownReport) {
    for r in resources.iter().rev() {
        match r {
            Resource::Mount { path } if storage::is_mounted(path) => {
                if storage::unmount(path) {
                    report.removed.push(format!("mount {}", path.display()));
                } else {
                    report
                        .problems
                        .push(format!("cannot unmount {}", path.display()));
                }
            }
            Resource::Image { path } if !storage::detach(path) => {
                report.problems.push(format!(
                    "cannot detach the loop device of {}",
                    path.display()
                ));
            }
            Resource::Link { name } if net::delete_link(name) => {
                report.removed.push(format!("link {name}"))
            }
            Resource::DelayedDisk {
                mount,
                pid,
                start_time,
            } => {
                if disk::stop(mount, *pid, *start_time) {
                    report
                        .removed
                        .push(format!("disk delay layer {}", mount.display()));
                } else {
                    report
                        .problems
                        .push(format!("cannot unmount {}", mount.display()));
                }
            }
            _ => {}
        }
    }
    for ns in net::lab_namespaces() {
        if net::delete_netns(&ns) {
            report.removed.push(format!("namespace {ns}"));
        } else {
            report
                .problems
                .push(format!("cannot delete namespace {ns}"));
        }
    }
}

/// `down`'s last step: the lab directory, only if it is the lab's (its marker), nothing is
/// mounted below it and nothing else was left behind.
fn remove_lab_dir(report: &mut DownReport) -> Result<()> {
    let dir = LabState::dir();
    if dir.join(MARKER).exists() {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let prefix = format!("{}/", dir.display());
        if mounts
            .lines()
            .any(|l| l.split(' ').nth(4).is_some_and(|m| m.starts_with(&prefix)))
        {
            report.problems.push(format!(
                "something is still mounted under {}; not removing it",
                dir.display()
            ));
        } else if report.problems.is_empty() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
            report.removed.push(format!("directory {}", dir.display()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_are_the_tools_lab_up_runs_not_servers() {
        for t in [
            "mount",
            "losetup",
            "mkfs.xfs",
            "mkfs.ext4",
            "mke2fs",
            "ip",
            "tc",
        ] {
            assert!(is_helper_tool(t), "{t}");
        }
        for t in [
            "smbd",
            "glusterfs",
            "smbnetfs",
            "sharebench",
            "ganesha.nfsd",
        ] {
            assert!(!is_helper_tool(t), "{t}");
        }
    }
}
