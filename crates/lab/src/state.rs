//! The lab's memory: `state.json` in the lab directory, an intent log of every resource,
//! written *before* the resource is created, so that `lab down` can remove everything even
//! after `lab up` was killed half-way. Nothing else decides what the lab owns.

use crate::backing::Backing;
use crate::topology::Topology;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the lab lives: images, configurations, logs, credentials, state.
pub const LAB_DIR: &str = "/var/tmp/sharebench-lab";
/// Prefix of every network namespace and host-side link the lab creates.
pub const PREFIX: &str = "sblab-";

/// One thing the lab created (or was about to create) and must undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Resource {
    /// A network namespace (/run/netns/NAME); deleting it removes its links too.
    Netns { name: String },
    /// A veth end in the host namespace, before it moves into a namespace.
    Link { name: String },
    /// An image file; every loop device attached to it is detached on down.
    Image { path: PathBuf },
    /// A mount point.
    Mount { path: PathBuf },
    /// A server's process group, led by `pid` (started at `start_time`, in clock ticks
    /// after boot, so a reused PID is never signalled).
    Process {
        name: String,
        pid: i32,
        start_time: u64,
    },
    /// A disk profile's delay layer (`disk`): nbdfuse and its nbdkit, led by `pid`,
    /// serving an image as a file in the FUSE mount `mount`. Ended after the loop device
    /// on that file is detached.
    DelayedDisk {
        mount: PathBuf,
        pid: i32,
        start_time: u64,
    },
}

/// A running server as `lab status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceInfo {
    pub name: String,
    pub host: String,
    pub address: String,
    pub port: u16,
    pub pid: i32,
    pub log: PathBuf,
}

/// Where `lab up` is: a lab left `Starting` was interrupted half-way (`lab down` cleans it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// `lab up` is running (or died while it ran).
    Starting,
    /// Every server answered.
    Up,
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Starting => "starting",
            Phase::Up => "up",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    pub version: u32,
    pub phase: Phase,
    pub topology: Topology,
    /// The backings' names, comma-separated, e.g. `xfs,ext4` (`lab up --fs`).
    pub fs: String,
    pub link: crate::net::Link,
    /// TCP congestion control in every namespace (`lab up --congestion`).
    #[serde(default)]
    pub congestion: crate::net::Congestion,
    /// The disk profile under the backing images (`lab up --disk`).
    #[serde(default = "host_disk")]
    pub disk: String,
    /// The server configurations side by side, the primary first (`backing`).
    pub backings: Vec<Backing>,
    /// CPUs the servers are pinned to (`lab up --server-cpus`), a `taskset -c` list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
    pub resources: Vec<Resource>,
    pub services: Vec<ServiceInfo>,
    /// User name of the SMB shares; the password is in `credentials_file` (mode 0600).
    pub smb_user: String,
    pub credentials_file: PathBuf,
}

impl LabState {
    /// The topology's host called `name`, or an error naming it.
    pub fn host(&self, name: &str) -> Result<crate::topology::Host> {
        self.topology
            .hosts
            .iter()
            .find(|h| h.name == name)
            .cloned()
            .with_context(|| format!("no host '{name}' in the lab"))
    }

    pub fn dir() -> PathBuf {
        PathBuf::from(std::env::var_os("SHAREBENCH_LAB_DIR").unwrap_or_else(|| LAB_DIR.into()))
    }

    pub fn path() -> PathBuf {
        Self::dir().join("state.json")
    }

    /// The saved state, if a lab exists.
    pub fn load() -> Result<Option<LabState>> {
        let p = Self::path();
        match std::fs::read_to_string(&p) {
            Ok(text) => Ok(Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("{} is damaged", p.display()))?,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
        }
    }

    /// Writes the state atomically (rename), so a crash never leaves half a file.
    pub fn save(&self) -> Result<()> {
        let p = Self::path();
        let text = serde_json::to_string_pretty(self)?;
        sharebench_core::safe_dir::SafeDir::open(&Self::dir())
            .and_then(|d| d.replace("state.json", text.as_bytes(), 0o644))
            .with_context(|| format!("cannot write {}", p.display()))
    }

    /// Records a resource before it is created.
    pub fn intend(&mut self, r: Resource) -> Result<()> {
        if !self.resources.contains(&r) {
            self.resources.push(r);
        }
        self.save()
    }

    pub fn file(&self, rel: impl AsRef<Path>) -> PathBuf {
        Self::dir().join(rel)
    }
}

fn host_disk() -> String {
    "host".into()
}
