//! The targets a running lab offers (`lab:nfs3`, `lab:smb@ext4`, ...): the URL, client
//! namespace, environment, server path, client processes and disks of each, and `resolve`,
//! which hands the session what it needs for one name. Not: starting or stopping
//! anything (`lifecycle`).

use crate::lifecycle::gluster_export_of;
use crate::state::{LabState, Phase, Resource};
use crate::topology::{Host, Service};
use crate::{ganesha, gluster, net, proc, samba, smbnetfs, storage};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::PathBuf;

/// A lab target resolved for the engine: the URL, the namespace to run the client in,
/// and environment the backend reads (the SMB password file).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// The network namespace of every server host: replication and referrals make more
    /// than one work for one target, so server CPU counts them all.
    #[serde(skip)]
    pub server_netns: Vec<String>,
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

/// The targets whose client runs inside sharebench, in the first client's namespace:
/// SMB, NFS and Gluster's native clients, for every backing.
fn native_targets(state: &LabState, client: &Host) -> Vec<LabTarget> {
    let t = &state.topology;
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
            ..Default::default()
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
                // The same share through libsmbclient, the client to compare against.
                add(
                    &format!("smb-libsmbclient{at}"),
                    format!(
                        "smb://{}@{}/{share}/?client=libsmbclient",
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
            // NFSv4.1 (sessions) and NFSv4.2, through the nfs-rs client.
            for (name, version) in [("nfs4", "4.1"), ("nfs42", "4.2")] {
                add(
                    &format!("{name}{at}"),
                    format!(
                        "nfs://{}{}/?version={version}",
                        g.address,
                        ganesha::pseudo(b)
                    ),
                    &g.name,
                );
            }
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
    out
}

/// The targets that are directories on this machine: Gluster's FUSE mounts, SMB through
/// smbnetfs, and the backing images themselves.
fn local_targets(state: &LabState, client: &Host) -> Vec<LabTarget> {
    let t = &state.topology;
    let mut out = Vec::new();
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
                    server: g.name.clone(),
                    client_pids: recorded_pids(state, &gluster::process_name(volume)),
                    ..Default::default()
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
                server: r.name.clone(),
                client_pids: recorded_pids(state, &smbnetfs::process_name(client)),
                ..Default::default()
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
                server: r.name.clone(),
                ..Default::default()
            });
        }
    }
    out
}

/// Every target the running lab offers, natively reached ones first.
pub fn targets(state: &LabState) -> Vec<LabTarget> {
    let Some(client) = state.topology.clients().next() else {
        return Vec::new();
    };
    let mut out = native_targets(state, client);
    out.extend(local_targets(state, client));
    let servers: Vec<String> = state
        .topology
        .servers()
        .map(|h| net::netns_of(&h.name))
        .collect();
    for target in &mut out {
        target.server_path = server_path(state, target);
        target.disks = disks_of(state, target);
        target.server_netns = servers.clone();
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
        "nfs3" | "nfs4" | "nfs42" => data.join("nfs-sharing"),
        n if n.starts_with("smb") => data.join("smb-sharing"),
        _ => return None,
    })
}

/// Resolves `lab:NAME` against the running lab. `lab:NAME?ARGS` is the same target with
/// the native client's URL arguments added (`lab:nfs3?nconnect=4`,
/// `lab:smb?client=libsmbclient`), under that longer name.
pub fn resolve(name: &str) -> Result<LabTarget> {
    let state = LabState::load()?.context("no lab is up; start one with 'sharebench lab up'")?;
    if state.phase != Phase::Up {
        bail!(
            "the lab is not up (phase '{}'); run 'sharebench lab down' and 'sharebench lab up'",
            state.phase
        );
    }
    find(&targets(&state), name)
}

/// `name` (with any `?ARGS`) among the lab's targets.
fn find(all: &[LabTarget], name: &str) -> Result<LabTarget> {
    let (base, args) = match name.split_once('?') {
        Some((base, args)) => (base, Some(args)),
        None => (name, None),
    };
    let mut t = all
        .iter()
        .find(|t| t.name == base)
        .cloned()
        .with_context(|| {
            format!(
                "unknown lab target '{base}' (known: {})",
                all.iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    if let Some(args) = args {
        if !t.url.contains("://") || args.is_empty() {
            bail!("lab target '{base}' takes no '?' arguments here: only a native client's URL does (nfs://, smb://, gluster://)");
        }
        let join = if t.url.contains('?') { '&' } else { '?' };
        t.url = format!("{}{join}{args}", t.url);
        t.name = name.to_string();
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backing::Backing;
    use crate::topology::Topology;

    fn state_with(resources: Vec<Resource>) -> LabState {
        LabState {
            version: 1,
            phase: Phase::Up,
            topology: Topology::default_lab(),
            server_cpus: None,
            fs: "xfs".into(),
            link: crate::net::Link::Mbit100,
            congestion: crate::net::Congestion::Reno,
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
        // A native target takes its client's URL arguments; a directory takes none.
        let nc = find(&all, "lab:nfs3?nconnect=4").unwrap();
        assert_eq!(nc.name, "lab:nfs3?nconnect=4");
        assert_eq!(nc.url, format!("{}&nconnect=4", get("lab:nfs3").url));
        let lib = find(&all, "lab:smb?client=libsmbclient").unwrap();
        assert_eq!(
            lib.url,
            format!("{}?client=libsmbclient", get("lab:smb").url)
        );
        assert!(find(&all, "lab:disk?x=1").is_err());
        assert!(find(&all, "lab:nfs3?").is_err());
        assert!(format!("{:#}", find(&all, "lab:nope?x=1").unwrap_err())
            .contains("unknown lab target 'lab:nope'"));
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
        assert!(get(&format!("lab:nfs42@{second}"))
            .url
            .contains("/nfs-sharing.1/?version=4.2"));
        assert!(get(&format!("lab:smb2@{second}"))
            .url
            .ends_with("10.10.0.4/smb-sharing.1/"));
        // libsmbclient reaches the first replica's share of each backing.
        assert!(get(&format!("lab:smb-libsmbclient@{second}"))
            .url
            .ends_with("10.10.0.3/smb-sharing.1/?client=libsmbclient"));
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

    /// The session counts server CPU in every server's namespace, from the target alone.
    #[test]
    fn every_target_names_every_servers_namespace() {
        let state = state_with(Vec::new());
        let servers: Vec<String> = state
            .topology
            .servers()
            .map(|h| net::netns_of(&h.name))
            .collect();
        assert!(servers.len() >= 3, "{servers:?}");
        for t in targets(&state) {
            assert_eq!(t.server_netns, servers, "{}", t.name);
        }
    }
}
