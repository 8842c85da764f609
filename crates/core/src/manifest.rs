//! The run manifest (`run.json`): what was run, where, on what machine, with which options,
//! so a reader can tell why two numbers differ. Written at the start and again at the end.

use crate::backend::TargetInfo;
use crate::plan::Plan;
use serde::{Deserialize, Serialize};

/// Facts about the client machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    /// The TCP congestion control of the network namespace the client ran in (a lab
    /// client's, for lab targets), as /proc/sys/net/ipv4/tcp_congestion_control says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_congestion: Option<String>,
    /// In `Manifest::hosts` (multi-client runs): how this host reached each target, its
    /// file system and mount options as this host saw them. Empty in `Manifest::host`,
    /// whose targets are `Manifest::targets`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetManifest>,
}

impl Host {
    pub fn probe() -> Host {
        let uts = nix::sys::utsname::uname().ok();
        let s = |f: Option<&std::ffi::OsStr>| {
            f.map(|x| x.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Host {
            hostname: s(uts.as_ref().map(|u| u.nodename())),
            kernel: format!(
                "{} {} {}",
                s(uts.as_ref().map(|u| u.sysname())),
                s(uts.as_ref().map(|u| u.release())),
                s(uts.as_ref().map(|u| u.machine()))
            ),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| {
                    l.strip_prefix("model name")
                        .and_then(|r| r.split_once(':'))
                        .map(|(_, v)| v.trim().to_string())
                })
                .unwrap_or_default(),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_bytes: meminfo_bytes(&meminfo, "MemTotal").unwrap_or(0),
            tcp_congestion: std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
                .ok()
                .map(|s| s.trim().to_string()),
            targets: Vec::new(),
        }
    }
}

/// One target as the manifest describes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetManifest {
    pub name: String,
    pub backend: String,
    pub client: String,
    pub local_root: Option<String>,
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_options: Option<String>,
    pub workdir: String,
    /// The file system the server keeps this target's files on (lab targets), e.g. `ext4`
    /// for `lab:nfs3@ext4`: the configuration a comparison is about, as found, not as named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_fs: Option<String>,
    /// The options the server's file system is mounted with, as found (`sync,dirsync`
    /// on a lab backing that is `+sync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_mount_options: Option<String>,
    /// The target as given, where the records name it otherwise (a study's role,
    /// `linux-server`, played by `/mnt/linux`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// What is mounted where a directory target lives (`server:/export`, `//server/share`,
    /// a device): whose system was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_source: Option<String>,
    /// Other directories the workers' files went to (IOzone's `-F` naming several
    /// directories): each as `worker N: DIR/sharebench-...` (its working directory there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<String>,
}

impl TargetManifest {
    pub fn new(name: &str, info: TargetInfo, workdir: &str) -> Self {
        TargetManifest {
            name: name.to_string(),
            backend: info.backend,
            client: info.client,
            local_root: info.local_root,
            fs_type: info.fs_type,
            mount_point: info.mount_point,
            mount_options: info.mount_options,
            workdir: workdir.to_string(),
            server_fs: None,
            server_mount_options: None,
            location: None,
            mount_source: None,
            places: Vec::new(),
        }
    }
}

/// How a run (or a study run) ended, as its manifest says: `running` until it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOutcome {
    Running,
    Complete,
    Interrupted,
    Failed,
    /// Marked by `sharebench clean`: its process is gone and it never ended.
    Abandoned,
}

impl std::fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunOutcome::Running => "running",
            RunOutcome::Complete => "complete",
            RunOutcome::Interrupted => "interrupted",
            RunOutcome::Failed => "failed",
            RunOutcome::Abandoned => "abandoned",
        })
    }
}

/// `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub schema: u32,
    pub tool: String,
    pub tool_version: String,
    pub run_id: String,
    pub command_line: Vec<String>,
    pub host: Host,
    /// Every rank's host of a multi-client run, in rank order (empty for one client).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<Host>,
    pub targets: Vec<TargetManifest>,
    pub plan: Plan,
    pub started_at: String,
    #[serde(default)]
    pub ended_at: Option<String>,
    pub outcome: RunOutcome,
    #[serde(default)]
    pub records: u64,
    /// Multi-client runs: mean milliseconds per measurement spent in the start barrier
    /// and the gather of records (rank 0's view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_ms: Option<f64>,
    /// The order the run took its targets in, as indices into `targets` (which lists them
    /// as given): set up in this order, the first of them first in the engine's turns. The
    /// list shuffled by a number drawn from the run id, since of two identical
    /// targets the one taken first measured as the less steady. Empty for one target, and
    /// in runs before 2026-11-30, which took them as listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_order: Vec<usize>,
}

/// A field of /proc/meminfo's text (`MemTotal`, `MemAvailable`), in bytes.
pub fn meminfo_bytes(meminfo: &str, field: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}
