//! Faults a study injects into a running lab, and what they need: the servers' PIDs (for
//! server CPU), a host's crash (SIGKILL of everything in its namespace) and restart, and
//! the replicated volume's self-heal state. Not: bringing the lab up or down.

use crate::lifecycle::{any_async, data_dirs, gluster_export_of, processes_in_namespaces};
use crate::state::LabState;
use crate::topology::{self, Service};
use crate::{ganesha, gluster, net, proc, samba};
use anyhow::{bail, Context, Result};
use serde::Serialize;

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
    for s in restart_order(&h.services) {
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

/// The order `restart` starts a host's services in: Ganesha last, as `lab up` starts it,
/// because its Gluster export fetches the volume's layout from this host's glusterd when
/// it starts (started first, it waited on a glusterd not yet there, and once did not
/// answer within a minute).
fn restart_order(services: &[Service]) -> impl Iterator<Item = &Service> {
    let ganesha = |s: &&Service| **s == Service::Ganesha;
    let others = services.iter().filter(move |s| !ganesha(s));
    others.chain(services.iter().filter(ganesha))
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

    #[test]
    fn ganesha_restarts_after_the_glusterd_its_export_reads() {
        let listed = [Service::Samba, Service::Ganesha, Service::Gluster];
        let order: Vec<_> = restart_order(&listed).copied().collect();
        assert_eq!(
            order,
            [Service::Samba, Service::Gluster, Service::Ganesha],
            "every service once, Ganesha last"
        );
        let without: Vec<_> = restart_order(&[Service::DfsRoot]).copied().collect();
        assert_eq!(without, [Service::DfsRoot]);
    }
}
