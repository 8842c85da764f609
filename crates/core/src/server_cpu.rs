//! CPU used during a measurement by processes other than sharebench, read from /proc: a
//! target's servers, and the FUSE daemon of a FUSE-mounted target (client CPU that is not
//! this process's). Servers are named by network namespace (every process inside the lab's
//! server hosts: smbd and its per-client children, Ganesha, rpcbind, glusterd and its brick
//! daemons) or by process group, a FUSE daemon by PID. Per process it counts user, system and reaped-children time, so a
//! child born and gone within the interval still counts (through its parent). Resolution
//! is the kernel's clock tick (10 ms at CLK_TCK = 100). For a server elsewhere (a study's
//! role on the user's own server) the set is instead the user's command that prints that
//! server's CPU seconds so far (`--hook server-cpu`), run before and after each
//! measurement; a reading it cannot give leaves the measurement without server CPU.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;

/// Which processes are a target's servers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSet {
    /// Inodes of network namespaces (as `/proc/PID/ns/net` shows them).
    pub net_namespaces: Vec<u64>,
    /// Process group ids.
    pub groups: Vec<i32>,
    /// Single processes (a FUSE client daemon, say).
    #[serde(default)]
    pub pids: Vec<i32>,
    /// Or, for a server elsewhere, the user's command that prints its CPU seconds so far
    /// (`sh -c`, at most `probe::LIMIT` a reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl ProcessSet {
    pub fn is_empty(&self) -> bool {
        self.net_namespaces.is_empty()
            && self.groups.is_empty()
            && self.pids.is_empty()
            && self.command.is_none()
    }

    /// A server elsewhere, read by the user's `command`.
    pub fn of_command(command: &str) -> ProcessSet {
        ProcessSet {
            command: Some(command.to_string()),
            ..ProcessSet::default()
        }
    }

    /// Whether the set's CPU is this machine's, which the machine's own accounting
    /// (`Record::set_machine`) then takes as spent elsewhere than in other programs.
    pub fn is_local(&self) -> bool {
        self.command.is_none()
    }

    /// A reading `s` as this machine's accounting takes it: none of a server elsewhere.
    pub fn on_this_machine(&self, s: f64) -> f64 {
        if self.is_local() {
            s
        } else {
            0.0
        }
    }

    /// The set of the given processes.
    pub fn of_pids(pids: &[i32]) -> ProcessSet {
        ProcessSet {
            pids: pids.to_vec(),
            ..ProcessSet::default()
        }
    }

    /// The processes in the set now, by PID: reading their CPU then takes a read of each
    /// one's /proc/PID/stat, not a walk of /proc (for measurements a millisecond long). A
    /// process that starts later is not in it; one that ends counts no more.
    pub fn members_now(&self) -> ProcessSet {
        if self.net_namespaces.is_empty() && self.groups.is_empty() || self.command.is_some() {
            return self.clone();
        }
        let pids: Vec<i32> = members(self).map(|(pid, _)| pid).collect();
        ProcessSet::of_pids(&pids)
    }

    /// The set of every process in the named network namespaces (`/run/netns/NAME`).
    pub fn of_namespaces<'a>(names: impl IntoIterator<Item = &'a str>) -> ProcessSet {
        let net_namespaces = names
            .into_iter()
            .filter_map(|n| {
                std::fs::metadata(format!("/run/netns/{n}"))
                    .ok()
                    .map(|m| m.ino())
            })
            .collect();
        ProcessSet {
            net_namespaces,
            ..ProcessSet::default()
        }
    }
}

/// Clock ticks per second (CLK_TCK); 100 on every Linux this runs on.
fn ticks_per_second() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map(|t| t as f64)
        .unwrap_or(100.0)
}

/// (process group, utime + stime + cutime + cstime in ticks) of one process.
fn sample_one(pid: &str) -> Option<(i32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    // After the command name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14).
    let pgrp = rest.get(2)?.parse().ok()?;
    let ticks = (11..=14)
        .map(|i| rest.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
        .sum();
    Some((pgrp, ticks))
}

fn net_namespace(pid: &str) -> Option<u64> {
    std::fs::read_link(format!("/proc/{pid}/ns/net"))
        .ok()?
        .to_str()?
        .strip_prefix("net:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Total CPU seconds so far of every process in `set`; NaN when its `command` gave no
/// reading.
pub fn cpu_seconds(set: &ProcessSet) -> f64 {
    if let Some(command) = &set.command {
        return crate::probe::number(command);
    }
    if set.is_empty() {
        return 0.0;
    }
    if set.net_namespaces.is_empty() && set.groups.is_empty() {
        let ticks: u64 = set
            .pids
            .iter()
            .filter_map(|p| sample_one(&p.to_string()))
            .map(|(_, t)| t)
            .sum();
        return ticks as f64 / ticks_per_second();
    }
    members(set).map(|(_, ticks)| ticks).sum::<u64>() as f64 / ticks_per_second()
}

/// The CPU seconds between two readings (never below 0); `None` when either is unknown.
pub fn used(now: f64, then: f64) -> Option<f64> {
    (now.is_finite() && then.is_finite()).then(|| (now - then).max(0.0))
}

/// (PID, CPU ticks) of every process in `set`, from a walk of /proc.
fn members(set: &ProcessSet) -> impl Iterator<Item = (i32, u64)> + '_ {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(move |e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let name = pid.to_string();
            let (pgrp, ticks) = sample_one(&name)?;
            let member = set.groups.contains(&pgrp)
                || set.pids.contains(&pid)
                || (!set.net_namespaces.is_empty()
                    && net_namespace(&name).is_some_and(|ns| set.net_namespaces.contains(&ns)));
            member.then_some((pid, ticks))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_child_group_shows_cpu() {
        // A shell in its own process group that spins for a while.
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .process_group(0)
            .spawn()
            .unwrap();
        let set = ProcessSet {
            groups: vec![child.id() as i32],
            ..ProcessSet::default()
        };
        let by_pid = ProcessSet::of_pids(&[child.id() as i32]);
        assert_eq!(set.members_now(), by_pid, "the group's one member");
        let (before, before_pid) = (cpu_seconds(&set), cpu_seconds(&by_pid));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let (during, during_pid) = (cpu_seconds(&set), cpu_seconds(&by_pid));
        child.kill().ok();
        child.wait().ok();
        assert!(during > before, "before {before}, during {during}");
        assert!(
            during_pid > before_pid,
            "by pid: {before_pid}, then {during_pid}"
        );
        assert_eq!(cpu_seconds(&ProcessSet::default()), 0.0);
    }

    #[test]
    fn a_command_reads_a_server_elsewhere_or_gives_nothing() {
        let set = ProcessSet::of_command("echo 12.5 s");
        assert!(!set.is_empty() && !set.is_local());
        assert_eq!(set.members_now(), set);
        assert_eq!(cpu_seconds(&set), 12.5);
        for bad in ["false", "echo twelve", "echo -1", "echo 3; exit 1"] {
            assert!(cpu_seconds(&ProcessSet::of_command(bad)).is_nan(), "{bad}");
        }
        assert_eq!(used(3.0, 1.0), Some(2.0));
        assert_eq!(used(1.0, 3.0), Some(0.0));
        assert_eq!(used(f64::NAN, 1.0), None);
    }
}
