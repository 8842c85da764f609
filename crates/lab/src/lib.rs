//! sharebench-lab: stands up real file servers (Samba, NFS-Ganesha, GlusterFS) in network namespaces
//! on one Linux box, hands out targets for them, and takes everything down again, also
//! after a crash. Not: measuring (the engine does that) or protocol clients (backends).

pub mod backing;
pub mod disk;
pub mod ganesha;
pub mod gluster;
pub mod net;
pub mod nosync;
pub mod proc;
pub mod samba;
pub mod service;
pub mod sh;
pub mod smbnetfs;
pub mod ssh;
pub mod state;
pub mod storage;
pub mod topology;
pub mod traffic;

use anyhow::{bail, Context, Result};
use backing::Backing;
use serde::Serialize;
use sharebench_core::safe_dir::SafeDir;
use state::{LabState, Resource};
use std::path::PathBuf;
use std::time::Duration;
use topology::{Service, Topology};

/// What `lab up` was asked for.
#[derive(Debug, Clone)]
pub struct UpOptions {
    pub topology: Option<PathBuf>,
    /// The backings side by side, e.g. `xfs,ext4` or `ext3+write-order,ext3`
    /// (`backing::Backing`); the first is the primary.
    pub fs: String,
    pub link: String,
    /// Size of each server's image (sparse), e.g. `2G`.
    pub image_size: String,
    /// ext3/ext4: allocate blocks in write order, as the 2007 ext3 driver did (every
    /// backing).
    pub write_order: bool,
    /// Samba allocates the blocks of a file as it grows (`strict allocate = yes`; every
    /// backing).
    pub strict_allocate: bool,
    /// Mount the first replica's SMB shares with smbnetfs (FUSE), target `lab:smb-fuse`.
    pub smb_fuse: bool,
    /// CPUs every server process may run on (`taskset -c` list, e.g. `1`), so that they
    /// and the client (`run --cpus`) do not take turns on one core; `None`: anywhere.
    pub server_cpus: Option<String>,
    /// The latency of the disk under every backing image (`disk::PROFILES`): `host`
    /// (none added), `hdd`, `ebs-magnetic`.
    pub disk: String,
}

impl Default for UpOptions {
    fn default() -> Self {
        UpOptions {
            topology: None,
            fs: "xfs".into(),
            link: "unlimited".into(),
            image_size: "2G".into(),
            write_order: false,
            strict_allocate: false,
            smb_fuse: true,
            server_cpus: None,
            disk: "host".into(),
        }
    }
}

/// The marker that makes the lab directory the lab's own.
const MARKER: &str = ".sharebench-lab";

/// Tools the lab needs, with the Debian package that has each.
const TOOLS: [(&str, &str); 11] = [
    ("ip", "iproute2"),
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
    disk: &disk::DiskProfile,
) -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        bail!("the lab needs root (namespaces, loop devices, mounts)");
    }
    let missing: Vec<String> = TOOLS
        .iter()
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
        if existing.phase == "up" && all_alive(&existing) {
            bail!("a lab is already up (see 'sharebench lab status'); take it down first with 'sharebench lab down'");
        }
        bail!("a lab was left half up or its servers died; run 'sharebench lab down' first");
    }
    let backings = Backing::parse_list(&opts.fs, opts.write_order, opts.strict_allocate)?;
    let disk = disk::DiskProfile::named(&opts.disk)?;
    let shaping = net::parse_link(&opts.link)?;
    let topology = match &opts.topology {
        Some(p) => Topology::load(p)?,
        None => Topology::default_lab(),
    };
    check_prerequisites(&backings, opts.smb_fuse, disk)?;
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
        phase: "starting".into(),
        topology,
        fs: opts.fs.clone(),
        link: opts.link.clone(),
        disk: disk.name.to_string(),
        backings,
        server_cpus: opts.server_cpus.clone(),
        resources: Vec::new(),
        services: Vec::new(),
        smb_user: samba::USER.into(),
        credentials_file: dir.join("smb-password"),
    };
    state.save()?;
    match build(&mut state, opts, shaping) {
        Ok(()) => {
            state.phase = "up".into();
            state.save()?;
            Ok(state)
        }
        Err(e) => {
            let _ = down();
            Err(e.context("lab up failed; everything it created was removed"))
        }
    }
}

fn build(state: &mut LabState, opts: &UpOptions, shaping: Option<(String, u64)>) -> Result<()> {
    net::create_lan(state)?;
    let topo = state.topology.clone();
    for h in &topo.hosts {
        net::add_host(state, h, topo.prefix_len)?;
    }
    if let Some((rate, bits)) = shaping {
        net::shape_links(state, &rate, bits)?;
    }
    let password = samba::new_password()?;
    samba::write_credentials(state, &password)?;
    let disk = disk::DiskProfile::named(&opts.disk)?;
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
                &opts.image_size,
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
fn any_async(state: &LabState) -> bool {
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
fn data_dirs(state: &LabState, h: &topology::Host) -> Vec<PathBuf> {
    (0..backings_of(state, h))
        .map(|i| storage::data_dir(state, &h.name, i))
        .collect()
}

/// The Gluster volume Ganesha on `g` exports through the Gluster FSAL: the replicated
/// volume, when `g` is one of its Gluster hosts.
fn gluster_export_of(t: &Topology, g: &topology::Host) -> Option<&'static str> {
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
fn processes_in_namespaces(names: &[String]) -> Vec<i32> {
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
    if state.as_ref().is_none_or(|s| s.phase != "up") {
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
    // 1. Servers, newest first, by their recorded process groups.
    for r in resources.iter().rev() {
        if let Resource::Process {
            name,
            pid,
            start_time,
        } = r
        {
            proc::stop_group(*pid, *start_time, Duration::from_secs(10));
            report.removed.push(format!("process {name} (pid {pid})"));
        }
    }
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
    // 3. Mounts, loop devices, namespaces and links.
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
    // 4. The lab directory, only if it is the lab's and nothing is mounted below it.
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
    if !report.problems.is_empty() {
        bail!(
            "lab down left something behind: {}",
            report.problems.join("; ")
        );
    }
    Ok(report)
}

/// A lab target resolved for the engine: the URL, the namespace to run the client in,
/// and environment the backend reads (the SMB password file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabTarget {
    pub name: String,
    pub url: String,
    pub client_netns: String,
    pub env: Vec<(String, String)>,
    pub server: String,
    /// Where the server keeps this target's files on this machine (a share's directory
    /// on its backing image, or the first brick of a Gluster volume), for measurements
    /// only the server side can make (extents). `None` where it is ambiguous (DFS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_path: Option<PathBuf>,
    /// The client-side processes that carry this target's I/O: the FUSE daemon of a
    /// FUSE-mounted target; their CPU is client CPU. The lab's own records of the
    /// processes it started (leader of the process group first, then the live children
    /// it forked: smbnetfs forks one per share it has open, and that child speaks SMB),
    /// read when the targets are listed. Empty for the native clients, which run inside
    /// sharebench itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_pids: Vec<i32>,
    /// The lab's block devices that hold this target's files (loop devices, names under
    /// /sys/block), whose writes and flushes each record counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<String>,
}

/// The live processes of the lab's recorded process named `name` (see
/// `LabTarget::client_pids`); empty when it is not running.
fn recorded_pids(state: &LabState, name: &str) -> Vec<i32> {
    state
        .resources
        .iter()
        .filter_map(|r| match r {
            Resource::Process {
                name: n,
                pid,
                start_time,
            } if n == name => Some(proc::live_group(*pid, *start_time)),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Every target the running lab offers.
pub fn targets(state: &LabState) -> Vec<LabTarget> {
    let t = &state.topology;
    let Some(client) = t.clients().next() else {
        return Vec::new();
    };
    let netns = net::netns_of(&client.name);
    let env = vec![(
        "SHAREBENCH_SMB_PASSWORD_FILE".to_string(),
        state.credentials_file.display().to_string(),
    )];
    let mut out = Vec::new();
    let mut add = |name: &str, url: String, server: &str| {
        out.push(LabTarget {
            name: format!("lab:{name}"),
            url,
            client_netns: netns.clone(),
            env: env.clone(),
            server: server.into(),
            server_path: None,
            disks: Vec::new(),
            client_pids: Vec::new(),
        })
    };
    // Every backing's shares and exports.
    for (b, at) in backing_suffixes(state) {
        for (i, r) in t.replicas().enumerate() {
            let suffix = if i == 0 {
                String::new()
            } else {
                (i + 1).to_string()
            };
            let share = samba::share_name("smb-sharing", b);
            add(
                &format!("smb{suffix}{at}"),
                format!("smb://{}@{}/{share}/", state.smb_user, r.address),
                &r.name,
            );
            if i == 0 {
                // The same share through the pure-Rust client (the smb2 crate).
                add(
                    &format!("smb-rs{at}"),
                    format!(
                        "smb://{}@{}/{share}/?client=smb2",
                        state.smb_user, r.address
                    ),
                    &r.name,
                );
            }
        }
        if let Some(g) = t.host_with(Service::Ganesha) {
            let real = storage::data_dir(state, &g.name, b).join("nfs-sharing");
            add(
                &format!("nfs3{at}"),
                format!("nfs://{}{}/?version=3", g.address, real.display()),
                &g.name,
            );
            // NFSv4.1 (sessions), through the nfs-rs client.
            add(
                &format!("nfs4{at}"),
                format!("nfs://{}{}/?version=4.1", g.address, ganesha::pseudo(b)),
                &g.name,
            );
        }
    }
    if let Some(g) = t.host_with(Service::Ganesha) {
        if gluster_export_of(t, g).is_some() {
            let url = format!("nfs://{}/?version=3", g.address);
            add("gluster-nfs3", url, &g.name);
        }
    }
    // The Gluster volumes without FUSE: libgfapi from the client's namespace.
    if let Some(g) = t.gluster_hosts().first() {
        for (name, volume) in [
            ("gluster-gfapi", gluster::SINGLE),
            ("gluster-replica-gfapi", gluster::REPLICA),
        ] {
            if state.resources.contains(&Resource::Mount {
                path: gluster::mount_point(volume),
            }) {
                add(name, format!("gluster://{}/{volume}", g.address), &g.name);
            }
        }
    }
    if let Some(d) = t.host_with(Service::DfsRoot) {
        add(
            "dfs-smb",
            format!("smb://{}@{}/dfs/smb-sharing/", state.smb_user, d.address),
            &d.name,
        );
    }
    if let Some(g) = t.gluster_hosts().first() {
        for (name, volume) in [
            ("gluster", gluster::SINGLE),
            ("gluster-replica", gluster::REPLICA),
        ] {
            let mnt = gluster::mount_point(volume);
            if state
                .resources
                .contains(&Resource::Mount { path: mnt.clone() })
            {
                out.push(LabTarget {
                    name: format!("lab:{name}"),
                    url: mnt.display().to_string(),
                    client_netns: String::new(),
                    env: Vec::new(),
                    server: g.name.clone(),
                    server_path: None,
                    disks: Vec::new(),
                    client_pids: recorded_pids(state, &gluster::process_name(volume)),
                });
            }
        }
    }
    // The first replica's share through smbnetfs (FUSE), run in the first client's
    // namespace: a directory on this machine.
    if let Some(r) = t.replicas().next() {
        if state.resources.contains(&Resource::Mount {
            path: smbnetfs::mount_point(),
        }) {
            out.push(LabTarget {
                name: "lab:smb-fuse".into(),
                url: smbnetfs::share_path(r, smbnetfs::SHARE)
                    .display()
                    .to_string(),
                client_netns: String::new(),
                env: Vec::new(),
                server: r.name.clone(),
                server_path: None,
                disks: Vec::new(),
                client_pids: recorded_pids(state, &smbnetfs::process_name(client)),
            });
        }
    }
    // The first replica's backing images, written directly on this machine: the
    // seed's "direct disk" baseline, on the file systems the lab was brought up with.
    if let Some(r) = t.replicas().next() {
        for (b, at) in backing_suffixes(state) {
            out.push(LabTarget {
                name: format!("lab:disk{at}"),
                url: storage::data_dir(state, &r.name, b).display().to_string(),
                client_netns: String::new(),
                env: Vec::new(),
                server: r.name.clone(),
                server_path: None,
                disks: Vec::new(),
                client_pids: Vec::new(),
            });
        }
    }
    for target in &mut out {
        target.server_path = server_path(state, target);
        target.disks = disks_of(state, target);
    }
    out
}

/// The lab's block devices that hold `target`'s files on the server side: the backing
/// image's loop device; both replicas' for the replicated Gluster volume.
fn disks_of(state: &LabState, target: &LabTarget) -> Vec<String> {
    let mut paths: Vec<PathBuf> = target.server_path.iter().cloned().collect();
    if target.name.starts_with("lab:disk") {
        paths.push(PathBuf::from(&target.url));
    }
    if matches!(
        target.name.as_str(),
        "lab:gluster-replica" | "lab:gluster-nfs3" | "lab:gluster-replica-gfapi"
    ) {
        paths = state
            .topology
            .gluster_hosts()
            .iter()
            .map(|h| state.file(format!("srv/{}/bricks/{}", h.name, gluster::REPLICA)))
            .collect();
    }
    let mut disks: Vec<String> = paths
        .iter()
        .filter_map(|p| storage::block_device(p))
        .filter(|d| d.starts_with("loop"))
        .collect();
    disks.dedup();
    disks
}

/// The target-name suffix of each backing, with its number: `""` for the primary, and
/// `@NAME` for every backing (the primary too) when there are several.
fn backing_suffixes(state: &LabState) -> Vec<(usize, String)> {
    let qualified = state.backings.len() > 1;
    let mut out = vec![(0, String::new())];
    if qualified {
        out.extend(
            state
                .backings
                .iter()
                .enumerate()
                .map(|(b, backing)| (b, format!("@{}", backing.name()))),
        );
    }
    out
}

/// The directory on this machine that holds `target`'s files on its server.
fn server_path(state: &LabState, target: &LabTarget) -> Option<PathBuf> {
    let brick = |volume: &str| state.file(format!("srv/{}/bricks/{volume}", target.server));
    let name = target.name.strip_prefix("lab:")?;
    let (name, b) = match name.split_once('@') {
        Some((n, backing)) => (n, state.backings.iter().position(|x| x.name() == backing)?),
        None => (name, 0),
    };
    let data = storage::data_dir(state, &target.server, b);
    Some(match name {
        "gluster" | "gluster-gfapi" => brick(gluster::SINGLE),
        "gluster-replica" | "gluster-nfs3" | "gluster-replica-gfapi" => brick(gluster::REPLICA),
        "nfs3" | "nfs4" => data.join("nfs-sharing"),
        n if n.starts_with("smb") => data.join("smb-sharing"),
        _ => return None,
    })
}

/// Resolves `lab:NAME` against the running lab.
pub fn resolve(name: &str) -> Result<LabTarget> {
    let state = LabState::load()?.context("no lab is up; start one with 'sharebench lab up'")?;
    if state.phase != "up" {
        bail!(
            "the lab is not up (phase '{}'); run 'sharebench lab down' and 'sharebench lab up'",
            state.phase
        );
    }
    let all = targets(&state);
    all.iter()
        .find(|t| t.name == name)
        .cloned()
        .with_context(|| {
            format!(
                "unknown lab target '{name}' (known: {})",
                all.iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// What `lab status` shows.
#[derive(Debug, Serialize)]
pub struct Status {
    pub phase: String,
    pub directory: PathBuf,
    pub fs: String,
    pub link: String,
    /// The disk profile under the backing images (`lab up --disk`).
    pub disk: String,
    /// CPUs the servers are pinned to (`lab up --server-cpus`), if they are.
    pub server_cpus: Option<String>,
    /// Delay cannot be emulated here: this kernel has no netem.
    pub delay_emulation: String,
    pub hosts: Vec<HostStatus>,
    pub services: Vec<ServiceStatus>,
    pub targets: Vec<LabTarget>,
    pub smb_user: String,
    pub credentials_file: PathBuf,
    /// Gluster self-heal of the replicated volume, when Gluster runs.
    pub heal: Option<HealInfo>,
}

#[derive(Debug, Serialize)]
pub struct HostStatus {
    pub name: String,
    pub role: String,
    pub address: String,
    pub netns: String,
}

#[derive(Debug, Serialize)]
pub struct ServiceStatus {
    pub name: String,
    pub host: String,
    pub endpoint: String,
    pub pid: i32,
    pub running: bool,
    pub log: PathBuf,
}

fn netem_available() -> bool {
    std::fs::read_to_string("/proc/config.gz").is_ok()
        && sh::run_quiet(
            "sh",
            &[
                "-c",
                "zcat /proc/config.gz | grep -q '^CONFIG_NET_SCH_NETEM=[ym]'",
            ],
        )
}

/// The lab as it is now; `None` when no lab exists.
pub fn status() -> Result<Option<Status>> {
    let Some(state) = LabState::load()? else {
        return Ok(None);
    };
    let alive = |pid: i32| {
        state.resources.iter().any(|r| matches!(r, Resource::Process { pid: p, start_time, .. } if *p == pid && proc::is_alive(pid, *start_time)))
    };
    Ok(Some(Status {
        phase: state.phase.clone(),
        directory: LabState::dir(),
        fs: state.fs.clone(),
        link: state.link.clone(),
        disk: state.disk.clone(),
        server_cpus: state.server_cpus.clone(),
        delay_emulation: if netem_available() {
            "available (netem)".into()
        } else {
            "not available: this kernel has no netem, so link delay cannot be emulated; only bandwidth is shaped (tbf)".into()
        },
        hosts: state
            .topology
            .hosts
            .iter()
            .map(|h| HostStatus {
                name: h.name.clone(),
                role: format!("{:?}", h.role).to_lowercase(),
                address: h.address.to_string(),
                netns: net::netns_of(&h.name),
            })
            .collect(),
        services: state
            .services
            .iter()
            .map(|s| ServiceStatus {
                name: s.name.clone(),
                host: s.host.clone(),
                endpoint: format!("{}:{}", s.address, s.port),
                pid: s.pid,
                running: alive(s.pid),
                log: s.log.clone(),
            })
            .collect(),
        targets: targets(&state),
        smb_user: state.smb_user.clone(),
        credentials_file: state.credentials_file.clone(),
        heal: heal_info().ok().flatten(),
    }))
}

/// PIDs of every process of the lab's servers (all members of their process groups), for
/// server-side CPU accounting.
pub fn server_pids(state: &LabState, host: Option<&str>) -> Vec<i32> {
    state
        .services
        .iter()
        .filter(|s| host.is_none_or(|h| h == s.host))
        .flat_map(|s| proc::group_members(s.pid))
        .collect()
}

/// Simulates a server crash: SIGKILL to every process in `host`'s namespace. The lab
/// stays up; `restart` brings the host's servers back. Returns the PIDs killed.
pub fn crash(host: &str) -> Result<Vec<i32>> {
    let state = LabState::load()?.context("no lab is up")?;
    let h = state.host(host)?;
    if h.role != topology::Role::Server {
        bail!("'{host}' is a client; only servers can be crashed");
    }
    let pids = processes_in_namespaces(&[net::netns_of(host)]);
    for &pid in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    Ok(pids)
}

/// Starts `host`'s servers again after a crash (its image stays mounted: only processes died).
pub fn restart(host: &str) -> Result<()> {
    let mut state = LabState::load()?.context("no lab is up")?;
    let h = state.host(host)?;
    if !processes_in_namespaces(&[net::netns_of(host)]).is_empty() {
        bail!("'{host}' still has running processes; crash it first or leave it be");
    }
    let password = std::fs::read_to_string(&state.credentials_file)?
        .trim()
        .to_string();
    let replicas: Vec<_> = state.topology.replicas().cloned().collect();
    let data = data_dirs(&state, &h);
    state.services.retain(|s| s.host != host);
    for s in &h.services {
        match s {
            Service::Samba => samba::start_replica(&mut state, &h, &data, &password)?,
            Service::DfsRoot => samba::start_dfs_root(&mut state, &h, &replicas, &password)?,
            Service::Ganesha => {
                let volume = gluster_export_of(&state.topology, &h);
                let skip_fsync = any_async(&state);
                ganesha::start(&mut state, &h, &data, volume, skip_fsync)?
            }
            Service::Gluster => gluster::start_daemon(&mut state, &h)?,
        }
    }
    state.save()
}

/// Self-heal state of the replicated Gluster volume: entries still to heal, per brick.
#[derive(Debug, Clone, Serialize)]
pub struct HealInfo {
    pub volume: String,
    pub pending_entries: u64,
    pub bricks: Vec<(String, String)>,
}

/// Asks a running glusterd for the heal state of `gv-replica`; `None` without Gluster.
pub fn heal_info() -> Result<Option<HealInfo>> {
    let Some(state) = LabState::load()? else {
        return Ok(None);
    };
    let Some(glusterd) = state.services.iter().find(|s| {
        s.name == "glusterd" && processes_in_namespaces(&[net::netns_of(&s.host)]).contains(&s.pid)
    }) else {
        return Ok(None);
    };
    gluster::heal_info(glusterd.pid, gluster::REPLICA).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with(resources: Vec<Resource>) -> LabState {
        LabState {
            version: 1,
            phase: "up".into(),
            topology: Topology::default_lab(),
            server_cpus: None,
            fs: "xfs".into(),
            link: "100mbit".into(),
            disk: "host".into(),
            backings: Backing::parse_list("xfs", false, false).unwrap(),
            resources,
            services: Vec::new(),
            smb_user: samba::USER.into(),
            credentials_file: PathBuf::from("/nonexistent/smb-password"),
        }
    }

    #[test]
    fn backings_side_by_side_are_targets_of_their_own() {
        let mut state = state_with(Vec::new());
        let one: Vec<String> = targets(&state).into_iter().map(|t| t.name).collect();
        assert!(one.contains(&"lab:nfs3".to_string()), "{one:?}");
        assert!(!one.iter().any(|n| n.contains('@')), "{one:?}");
        state.backings = Backing::parse_list("xfs,ext3+write-order", false, false).unwrap();
        let all = targets(&state);
        let get = |n: &str| {
            all.iter()
                .find(|t| t.name == n)
                .unwrap_or_else(|| panic!("no {n}"))
        };
        // The primary is also reachable by its qualified name, at the same place.
        assert_eq!(get("lab:nfs3").url, get("lab:nfs3@xfs").url);
        assert_eq!(get("lab:smb").url, get("lab:smb@xfs").url);
        let second = "ext3+write-order";
        assert!(
            get(&format!("lab:nfs3@{second}"))
                .url
                .contains("/srv/replica1.1/nfs-sharing/"),
            "{:?}",
            get(&format!("lab:nfs3@{second}"))
        );
        assert!(get(&format!("lab:nfs4@{second}"))
            .url
            .contains("/nfs-sharing.1/?version=4.1"));
        assert!(get(&format!("lab:smb2@{second}"))
            .url
            .ends_with("10.10.0.4/smb-sharing.1/"));
        // The pure-Rust SMB client reaches the first replica's share of each backing.
        assert!(get(&format!("lab:smb-rs@{second}"))
            .url
            .ends_with("10.10.0.3/smb-sharing.1/?client=smb2"));
        assert_eq!(
            get(&format!("lab:smb@{second}")).server_path,
            Some(state.file("srv/replica1.1/smb-sharing"))
        );
        assert_eq!(
            get(&format!("lab:disk@{second}")).url,
            state.file("srv/replica1.1").display().to_string()
        );
        // Gluster and DFS stay on the primary: no qualified names for them.
        assert!(!all.iter().any(|t| t.name.starts_with("lab:dfs-smb@")));
    }

    #[test]
    fn fuse_targets_list_their_live_client_processes() {
        let me = std::process::id() as i32;
        let start = proc::start_time(me).unwrap();
        let client = Topology::default_lab().clients().next().unwrap().clone();
        let state = state_with(vec![
            Resource::Mount {
                path: gluster::mount_point(gluster::SINGLE),
            },
            Resource::Process {
                name: gluster::process_name(gluster::SINGLE),
                pid: me,
                start_time: start,
            },
            // Recorded, but the PID now belongs to another process: not listed.
            Resource::Mount {
                path: gluster::mount_point(gluster::REPLICA),
            },
            Resource::Process {
                name: gluster::process_name(gluster::REPLICA),
                pid: me,
                start_time: start + 1,
            },
            Resource::Mount {
                path: smbnetfs::mount_point(),
            },
            Resource::Process {
                name: smbnetfs::process_name(&client),
                pid: me,
                start_time: start,
            },
        ]);
        let all = targets(&state);
        let get = |n: &str| all.iter().find(|t| t.name == n).unwrap();
        assert_eq!(get("lab:gluster").client_pids.first(), Some(&me));
        assert!(get("lab:gluster-replica").client_pids.is_empty());
        let fuse = get("lab:smb-fuse");
        assert_eq!(fuse.client_pids.first(), Some(&me));
        assert_eq!(
            fuse.url,
            smbnetfs::mount_point()
                .join("10.10.0.3/smb-sharing")
                .display()
                .to_string()
        );
        assert_eq!(fuse.server, "replica1");
        assert!(fuse.client_netns.is_empty());
        assert_eq!(
            fuse.server_path,
            Some(state.file("srv/replica1/smb-sharing"))
        );
        for native in ["lab:smb", "lab:nfs3", "lab:disk"] {
            assert!(get(native).client_pids.is_empty(), "{native}");
        }
        let json = serde_json::to_value(get("lab:smb")).unwrap();
        assert!(json.get("client_pids").is_none(), "{json}");
        let json = serde_json::to_value(get("lab:gluster")).unwrap();
        assert_eq!(json["client_pids"][0], me, "{json}");
    }

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

    #[test]
    fn no_fuse_targets_without_their_mounts() {
        let names: Vec<String> = targets(&state_with(Vec::new()))
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert!(!names
            .iter()
            .any(|n| n == "lab:smb-fuse" || n == "lab:gluster"));
        assert!(names.iter().any(|n| n == "lab:smb"));
    }
}
