//! What `lab status` shows: the lab's phase and options, hosts, services (alive or not),
//! targets and Gluster's self-heal. Not: changing anything.

use crate::faults::{heal_info, HealInfo};
use crate::state::{LabState, Phase, Resource};
use crate::targets::{targets, LabTarget};
use crate::{net, proc, sh};
use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;

/// What `lab status` shows.
#[derive(Debug, Serialize)]
pub struct Status {
    pub phase: Phase,
    pub directory: PathBuf,
    pub fs: String,
    pub link: crate::net::Link,
    /// TCP congestion control in every namespace (`lab up --congestion`).
    pub congestion: crate::net::Congestion,
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
        phase: state.phase,
        directory: LabState::dir(),
        fs: state.fs.clone(),
        link: state.link,
        congestion: state.congestion,
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
