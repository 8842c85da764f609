//! Server processes: started detached (their own process group, so Ctrl-C of `lab up`
//! leaves them be), in a host's network namespace, output to a log file; stopped by
//! process group after checking the leader's start time, so a reused PID is never hit.

use crate::state::{LabState, Resource};
use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The start time of `pid` in clock ticks after boot (field 22 of /proc/PID/stat).
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// The command name of `pid` (/proc/PID/comm).
pub fn comm(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim_end().to_string())
}

/// The command line of `pid`, its arguments joined by spaces.
pub fn cmdline(pid: i32) -> Option<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
}

/// The process group of `pid` (field 5 of /proc/PID/stat).
fn pgrp(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(2)?.parse().ok()
}

/// Every live process in process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    groups_members(&[pgid])
}

/// The processes of any of the groups `pgids`, in one pass over /proc.
fn groups_members(pgids: &[i32]) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&pid| pgrp(pid).is_some_and(|g| pgids.contains(&g)))
                .collect()
        })
        .unwrap_or_default()
}

/// The live processes of the group led by (`pid`, `start`): the leader first, then the
/// children it forked that still run (zombies left out). Empty when the leader is gone or
/// its PID now belongs to another process.
pub fn live_group(pid: i32, start: u64) -> Vec<i32> {
    if !is_alive(pid, start) {
        return Vec::new();
    }
    let mut others: Vec<i32> = group_members(pid)
        .into_iter()
        .filter(|&m| m != pid && !is_zombie(m))
        .collect();
    others.sort_unstable();
    std::iter::once(pid).chain(others).collect()
}

/// Starts `cmd args` in namespace `netns` as a new process group, logging to `log`, and
/// records it in the state; with `cpus` (a `taskset -c` list) pinned to those CPUs.
pub fn spawn(
    state: &mut LabState,
    name: &str,
    netns: &str,
    (cmd, args): (&str, &[&str]),
    cpus: Option<&str>,
    log: &Path,
) -> Result<i32> {
    let out =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    // Pinned servers: taskset sets the affinity and execs nsenter, which execs the
    // server; every process and thread it starts inherits the affinity, and the PID
    // recorded is the server's own.
    let mut command = match cpus {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.args(["-c", cpus, "nsenter"]);
            c
        }
        None => Command::new("nsenter"),
    };
    let child = command
        .arg(format!("--net=/run/netns/{netns}"))
        .arg("--")
        .arg(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {cmd}"))?;
    let pid = child.id() as i32;
    // The child is not waited for: it outlives this process and is reaped by init.
    std::mem::forget(child);
    let start = start_time(pid).unwrap_or(0);
    state.intend(Resource::Process {
        name: name.to_string(),
        pid,
        start_time: start,
    })?;
    Ok(pid)
}

/// True when the process that was started as (`pid`, `start`) still runs.
pub fn is_alive(pid: i32, start: u64) -> bool {
    start_time(pid) == Some(start) && !is_zombie(pid)
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
        .unwrap_or(true)
}

/// Stops the process group led by (`pid`, `start`): SIGTERM, then SIGKILL after `grace`.
/// Members are found by group id, so children a server forked stop too. A group whose
/// leader is gone or is another process (reused PID) is signalled only through members
/// that still carry the recorded group id.
pub fn stop_group(pid: i32, start: u64, grace: Duration) {
    stop_groups(&[(pid, start)], grace);
}

/// `stop_group` for several groups at once: all get SIGTERM together and share one
/// `grace`, so a slow one (Ganesha's teardown) does not add to the others' time.
pub fn stop_groups(groups: &[(i32, u64)], grace: Duration) {
    let ours: Vec<i32> = groups
        .iter()
        .filter(|&&(pid, start)| {
            let leader_ok = start_time(pid).map(|s| s == start).unwrap_or(true);
            // A reused PID that leads its own group is not ours.
            leader_ok || pgrp(pid) != Some(pid)
        })
        .map(|&(pid, _)| pid)
        .collect();
    let members = || groups_members(&ours);
    let signal_all = |sig: Signal| {
        for m in members() {
            let _ = kill(Pid::from_raw(m), sig);
        }
    };
    signal_all(Signal::SIGTERM);
    let t = Instant::now();
    while t.elapsed() < grace {
        if members().iter().all(|&m| is_zombie(m)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    signal_all(Signal::SIGKILL);
}

/// Stops individual processes: SIGTERM, then SIGKILL after `grace`, until `remaining()`
/// (the caller's view of who is left) is empty or only zombies. True when none is left.
pub fn stop_pids(pids: &[i32], grace: Duration, remaining: impl Fn() -> Vec<i32>) -> bool {
    let gone = |left: &[i32]| left.iter().all(|&p| is_zombie(p));
    for &p in pids {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
    }
    let t = Instant::now();
    while t.elapsed() < grace {
        if gone(&remaining()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for p in remaining() {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        if gone(&remaining()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// A shell in a process group of its own, with a `sleep` child; both ignore SIGTERM
    /// when `deaf` (an ignored signal stays ignored across exec).
    fn group(deaf: bool) -> std::process::Child {
        let script = if deaf {
            "trap '' TERM; sleep 30"
        } else {
            "sleep 30"
        };
        Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .expect("sh")
    }

    #[test]
    fn groups_stop_together_and_a_reused_pid_is_left_alone() {
        let (mut deaf, mut plain, mut other) = (group(true), group(false), group(false));
        // Let each shell start its sleep and set its trap.
        std::thread::sleep(Duration::from_millis(200));
        let id = |c: &std::process::Child| c.id() as i32;
        let start = |c: &std::process::Child| start_time(id(c)).expect("start time");
        // `other` is recorded with a start time that is not its own: a reused PID.
        stop_groups(
            &[
                (id(&deaf), start(&deaf)),
                (id(&plain), start(&plain)),
                (id(&other), start(&other) + 1),
            ],
            Duration::from_millis(300),
        );
        assert_eq!(deaf.wait().unwrap().signal(), Some(Signal::SIGKILL as i32));
        assert_eq!(plain.wait().unwrap().signal(), Some(Signal::SIGTERM as i32));
        assert_eq!(
            other.try_wait().unwrap(),
            None,
            "a reused PID was signalled"
        );
        for m in group_members(id(&other)) {
            let _ = kill(Pid::from_raw(m), Signal::SIGKILL);
        }
        other.wait().unwrap();
        // The sleeps of the two stopped groups are gone too.
        for g in [id(&deaf), id(&plain)] {
            assert!(
                group_members(g).iter().all(|&m| is_zombie(m)),
                "group {g} left"
            );
        }
    }
}
