//! The user's commands for what the lab does itself on a study of their own servers
//! (`study run --hook NAME=COMMAND`): `failover` takes a replica down mid-run (the lab
//! kills its processes) and `restore` brings it back and returns once it has caught up
//! (the lab restarts it and waits for the heal). Each runs through `sh -c`, in a process
//! group of its own, bounded in time, its output kept beside the step's directory.
//! `server-cpu` prints a mapped server's CPU seconds so far, read before and after each
//! measurement as the lab reads its servers' (`sharebench_core::server_cpu`);
//! `replica-bytes` prints the bytes the replica link has carried and `replica-sync` waits
//! until the replicas agree, for the replication traffic the lab reads off its own wire
//! (`replication_hooks`). Not:
//! deciding when a hook runs (the runner does), nor the lab's own actions (`actions`).

use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The hooks a study may ask for, with what each must do.
pub const KNOWN: [(&str, &str); 5] = [
    (
        "failover",
        "takes a replica of the mapped system down mid-run (as the lab kills replica2)",
    ),
    (
        "restore",
        "brings it back, and returns once the replicas are in sync again (its time is the recovery figure)",
    ),
    (
        SERVER_CPU,
        "prints the CPU seconds the mapped role's server has used so far (SHAREBENCH_ROLE names the role); run before and after each measurement, at most 10 s each",
    ),
    (
        REPLICA_BYTES,
        "prints the bytes the link between the replicas has carried so far (a counter of the replica's interface, say); read before and after each replication, at most 10 s each",
    ),
    (
        REPLICA_SYNC,
        "returns once the replicas hold the same data again (DFS Replication's backlog empty, say); the replication traffic step waits on it, at most 300 s each time",
    ),
];

/// The hook that reads the replica link's byte counter.
pub const REPLICA_BYTES: &str = "replica-bytes";
/// The hook that waits until the replicas are in sync.
pub const REPLICA_SYNC: &str = "replica-sync";

/// The hook that reads a mapped server's CPU.
pub const SERVER_CPU: &str = "server-cpu";

/// Per role of a step, the `server-cpu` hook to read its server by, for a role the user
/// mapped (the lab's own servers are read from /proc), told which role it reads.
pub fn server_cpu(mapping: &crate::roles::Mapping, roles: &[String]) -> Vec<Option<String>> {
    let hook = mapping.hooks.get(SERVER_CPU);
    roles
        .iter()
        .map(|role| {
            let command = hook.filter(|_| mapping.roles.contains_key(role))?;
            Some(format!(
                "SHAREBENCH_ROLE={role}; export SHAREBENCH_ROLE; {command}"
            ))
        })
        .collect()
}

/// How long a hook may run before it is ended (its process group killed).
pub const LIMIT: Duration = Duration::from_secs(300);

/// Checks a hook's name; the error lists the known ones.
pub fn check_name(name: &str) -> Result<(), String> {
    if KNOWN.iter().any(|(n, _)| *n == name) {
        return Ok(());
    }
    let known: Vec<String> = KNOWN
        .iter()
        .map(|(n, what)| format!("{n} ({what})"))
        .collect();
    Err(format!(
        "--hook {name}: no such hook (known: {})",
        known.join("; ")
    ))
}

/// Runs hook `name`'s `command` through `sh -c`, its output (stdout and stderr) into
/// `log`, ended after `limit`. Returns the seconds it took; an error when it could not
/// start, exited non-zero or ran out of time.
pub fn run(name: &str, command: &str, log: &Path, limit: Duration) -> Result<f64, String> {
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .mode(0o644)
        .open(log)
        .map_err(|e| format!("hook {name}: cannot write {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| format!("hook {name}: {e}"))?;
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("hook {name}: cannot start sh: {e}"))?;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(start.elapsed().as_secs_f64()),
            Ok(Some(status)) => {
                return Err(format!(
                    "hook {name} ended with {status} (its output: {})",
                    log.display()
                ))
            }
            Ok(None) if start.elapsed() > limit => {
                // The group is this hook's own: its shell and whatever it started.
                let group = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                return Err(format!(
                    "hook {name} did not end within {} s and was ended (its output: {})",
                    limit.as_secs(),
                    log.display()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("hook {name}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_runs_its_command_and_keeps_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("h.log");
        let s = run("failover", "echo down; echo oops >&2", &log, LIMIT).unwrap();
        assert!(s < 10.0);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "down\noops\n");
        let e = run("restore", "exit 3", &log, LIMIT).unwrap_err();
        assert!(e.contains("hook restore ended with exit status: 3"), "{e}");
    }

    #[test]
    fn a_hook_that_overruns_is_ended_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("h.log");
        let pid_file = dir.path().join("pid");
        let cmd = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
        let t = Instant::now();
        let e = run("restore", &cmd, &log, Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("did not end within"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
        // The sleep it started went with it.
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let pid = nix::unistd::Pid::from_raw(pid);
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            nix::sys::signal::kill(pid, None).is_err()
        });
        assert!(gone, "the hook's sleep outlived it");
    }

    #[test]
    fn a_hook_log_is_not_written_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let log = dir.path().join("h.log");
        std::os::unix::fs::symlink(&victim, &log).unwrap();
        assert!(run("failover", "echo x", &log, LIMIT).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(check_name("failover").is_ok());
        assert!(check_name("reboot")
            .unwrap_err()
            .contains("known: failover"));
    }
}
