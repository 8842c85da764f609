//! Starting one server of the lab: spawn it in its host's network namespace, wait until its
//! TCP port answers (seen from a client's namespace, as clients will see it), and record it
//! as a service for `lab status` and server CPU. Not: what a server's configuration says
//! (see `samba`, `ganesha`, `gluster`).

use crate::net::{netns_of, wait_for_port};
use crate::proc;
use crate::state::{LabState, ServiceInfo};
use crate::topology::Host;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A server to start.
pub struct Server<'a> {
    /// Short name (`samba`, `ganesha`, `glusterd`).
    pub name: &'a str,
    pub cmd: &'a str,
    pub args: Vec<String>,
    /// Where its stdout and stderr go.
    pub out: PathBuf,
    /// Its own log, shown by `lab status` (may be `out`).
    pub log: PathBuf,
    pub port: u16,
    pub timeout: Duration,
}

impl<'a> Server<'a> {
    /// A server run by a shell script in a private mount namespace (a tmpfs on /run,
    /// bind-mounted state), for daemons that insist on fixed paths.
    pub fn script_in_private_mounts(
        name: &'a str,
        script: &Path,
        out: PathBuf,
        log: PathBuf,
        port: u16,
    ) -> Self {
        let args = ["--mount", "--propagation", "private", "sh"]
            .iter()
            .map(|s| s.to_string())
            .chain(std::iter::once(script.display().to_string()))
            .collect();
        Server {
            name,
            cmd: "unshare",
            args,
            out,
            log,
            port,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Starts `server` on `host`, waits until it answers, records it; returns its PID.
pub fn start_server(state: &mut LabState, host: &Host, server: Server) -> Result<i32> {
    let args: Vec<&str> = server.args.iter().map(String::as_str).collect();
    let label = format!("{}@{}", server.name, host.name);
    let pid = proc::spawn(
        state,
        &label,
        &netns_of(&host.name),
        (server.cmd, &args),
        state.server_cpus.clone().as_deref(),
        &server.out,
    )?;
    let client = state
        .topology
        .clients()
        .next()
        .map(|c| netns_of(&c.name))
        .unwrap_or_default();
    wait_for_port(&client, host.address, server.port, server.timeout).with_context(|| {
        format!(
            "{label} did not start; see {} and {}",
            server.out.display(),
            server.log.display()
        )
    })?;
    state.services.push(ServiceInfo {
        name: server.name.into(),
        host: host.name.clone(),
        address: host.address.to_string(),
        port: server.port,
        pid,
        log: server.log,
    });
    state.save()?;
    Ok(pid)
}
