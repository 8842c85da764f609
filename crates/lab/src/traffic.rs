//! What crosses the lab wire: the byte counters of a host's interface, and an rsync daemon
//! on a server host, so delta transfers (rsync's algorithm, the Linux counterpart of DFS
//! Replication's Remote Differential Compression) can be measured against full copies.
//! Not: the measurement procedure (the `study` command's replication-traffic action).

use crate::net::netns_of;
use crate::service::{start_server, Server};
use crate::sh::run;
use crate::state::LabState;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// TCP port of the lab's rsync daemons.
pub const RSYNC_PORT: u16 = 873;
/// The module every lab rsync daemon serves.
pub const RSYNC_MODULE: &str = "sb";

/// Bytes received plus sent on `host`'s lab interface (eth0 in its namespace).
pub fn wire_bytes(host: &str) -> Result<u64> {
    let out = run(
        "ip",
        &["-n", &netns_of(host), "-j", "-s", "link", "show", "eth0"],
    )?;
    let v: serde_json::Value =
        serde_json::from_str(&out).with_context(|| format!("ip -j -s link of {host}"))?;
    let stats = &v[0]["stats64"];
    let (rx, tx) = (stats["rx"]["bytes"].as_u64(), stats["tx"]["bytes"].as_u64());
    match (rx, tx) {
        (Some(r), Some(t)) => Ok(r + t),
        _ => bail!("no byte counters for eth0 of {host}"),
    }
}

/// Starts an rsync daemon on server `host` serving `rsync://ADDRESS/sb/`, a directory on
/// the host's backing image; the lab stops it on `down`. Returns the module's URL and its
/// directory as seen from this machine.
pub fn start_rsync(host: &str) -> Result<(String, PathBuf)> {
    let mut state = LabState::load()?.context("no lab is up")?;
    let h = state.host(host)?;
    let url = format!("rsync://{}/{RSYNC_MODULE}/", h.address);
    let dir = state.file(format!("srv/{host}/rsync"));
    if state
        .services
        .iter()
        .any(|s| s.name == "rsyncd" && s.host == host)
    {
        return Ok((url, dir));
    }
    std::fs::create_dir_all(&dir)?;
    let conf = state.file(format!("rsync/{host}.conf"));
    std::fs::create_dir_all(conf.parent().expect("a file in a directory"))?;
    std::fs::write(
        &conf,
        format!(
            "use chroot = no\nuid = root\ngid = root\npid file = {pid}\n[{RSYNC_MODULE}]\n  path = {path}\n  read only = false\n  hosts allow = {net}\n",
            pid = state.file(format!("rsync/{host}.pid")).display(),
            path = dir.display(),
            net = crate::ganesha::subnet(h.address, state.topology.prefix_len),
        ),
    )?;
    let log = state.file(format!("rsync/{host}.log"));
    let args = vec![
        "--daemon".to_string(),
        "--no-detach".into(),
        format!("--config={}", conf.display()),
        format!("--address={}", h.address),
        format!("--port={RSYNC_PORT}"),
        format!("--log-file={}", log.display()),
    ];
    let out = state.file(format!("rsync/{host}.out"));
    start_server(
        &mut state,
        &h,
        Server {
            name: "rsyncd",
            cmd: "rsync",
            args,
            out,
            log,
            port: RSYNC_PORT,
            timeout: Duration::from_secs(20),
        },
    )?;
    Ok((url, dir))
}
