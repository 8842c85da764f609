//! The lab network: one namespace per host, all joined by a bridge that lives in a
//! namespace of its own (`sblab-lan`), so the host has no route to lab addresses and no
//! lab packet can leave the machine. Link shaping with tbf (this kernel has no netem:
//! bandwidth can be limited, delay cannot).

use crate::sh::{run, run_in, run_quiet};
use crate::state::{LabState, Resource, PREFIX};
use crate::topology::{Host, Role};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub const LAN: &str = "sblab-lan";
const BRIDGE: &str = "br0";

/// The namespace of a lab host.
pub fn netns_of(host: &str) -> String {
    format!("{PREFIX}{host}")
}

/// The veth end that plugs `host` into the bridge (in the LAN namespace).
fn port_of(host: &str) -> String {
    format!("sbl-{host}")
}

fn add_netns(state: &mut LabState, name: &str) -> Result<()> {
    state.intend(Resource::Netns {
        name: name.to_string(),
    })?;
    run("ip", &["netns", "add", name])?;
    run_in(name, "ip", &["link", "set", "lo", "up"])?;
    let cc = state.congestion.name();
    run_in(
        name,
        "sysctl",
        &["-qw", &format!("net.ipv4.tcp_congestion_control={cc}")],
    )
    .with_context(|| format!("setting TCP congestion control {cc} in {name}"))?;
    Ok(())
}

/// Creates the LAN namespace and its bridge.
pub fn create_lan(state: &mut LabState) -> Result<()> {
    add_netns(state, LAN)?;
    run("ip", &["-n", LAN, "link", "add", BRIDGE, "type", "bridge"])?;
    run("ip", &["-n", LAN, "link", "set", BRIDGE, "up"])?;
    Ok(())
}

/// Creates a host's namespace, plugs it into the bridge and gives it its address.
pub fn add_host(state: &mut LabState, host: &Host, prefix_len: u8) -> Result<()> {
    let ns = netns_of(&host.name);
    let port = port_of(&host.name);
    add_netns(state, &ns)?;
    state.intend(Resource::Link { name: port.clone() })?;
    run(
        "ip",
        &[
            "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", &ns,
        ],
    )?;
    run("ip", &["link", "set", &port, "netns", LAN])?;
    run(
        "ip",
        &["-n", LAN, "link", "set", &port, "master", BRIDGE, "up"],
    )?;
    run_in(
        &ns,
        "ip",
        &[
            "addr",
            "add",
            &format!("{}/{prefix_len}", host.address),
            "dev",
            "eth0",
        ],
    )?;
    run_in(&ns, "ip", &["link", "set", "eth0", "up"])?;
    Ok(())
}

/// The bandwidth of every host's link (`lab up --link`), named as `tc` spells the rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Link {
    #[serde(rename = "10mbit")]
    Mbit10,
    #[serde(rename = "100mbit")]
    Mbit100,
    #[serde(rename = "1gbit")]
    Gbit1,
    #[serde(rename = "10gbit")]
    Gbit10,
    /// Not shaped: as fast as the veth pairs go.
    #[default]
    #[serde(rename = "unlimited")]
    Unlimited,
}

impl Link {
    pub const ALL: [Link; 5] = [
        Link::Mbit10,
        Link::Mbit100,
        Link::Gbit1,
        Link::Gbit10,
        Link::Unlimited,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Link::Mbit10 => "10mbit",
            Link::Mbit100 => "100mbit",
            Link::Gbit1 => "1gbit",
            Link::Gbit10 => "10gbit",
            Link::Unlimited => "unlimited",
        }
    }

    /// Bits per second, or `None` for unlimited.
    pub fn bits(self) -> Option<u64> {
        match self {
            Link::Mbit10 => Some(10_000_000),
            Link::Mbit100 => Some(100_000_000),
            Link::Gbit1 => Some(1_000_000_000),
            Link::Gbit10 => Some(10_000_000_000),
            Link::Unlimited => None,
        }
    }
}

impl std::str::FromStr for Link {
    type Err = anyhow::Error;
    fn from_str(text: &str) -> Result<Link> {
        match Link::ALL.into_iter().find(|l| l.name() == text) {
            Some(l) => Ok(l),
            None => bail!("unknown --link '{text}' (10mbit, 100mbit, 1gbit, 10gbit or unlimited)"),
        }
    }
}

impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The TCP congestion control of every lab namespace (`lab up --congestion`). A new
/// namespace takes the machine's, and on this one that is BBR, whose pacing stalls SMB
/// for 2-4 ms at the veths' microsecond round trips (docs/methods/lab.md, "TCP congestion
/// control"); a namespace may choose only what the kernel has loaded, here reno or bbr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Congestion {
    /// Loss-based, no pacing: what the lab uses unless asked.
    #[default]
    Reno,
    Bbr,
}

impl Congestion {
    pub const ALL: [Congestion; 2] = [Congestion::Reno, Congestion::Bbr];

    pub fn name(self) -> &'static str {
        match self {
            Congestion::Reno => "reno",
            Congestion::Bbr => "bbr",
        }
    }
}

impl std::str::FromStr for Congestion {
    type Err = anyhow::Error;
    fn from_str(text: &str) -> Result<Congestion> {
        match Congestion::ALL.into_iter().find(|c| c.name() == text) {
            Some(c) => Ok(c),
            None => bail!("unknown --congestion '{text}' (reno or bbr)"),
        }
    }
}

impl std::fmt::Display for Congestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The tbf burst for a link of `bits` per second: 2 ms at the rate, at least 16 KiB
/// (LAB-NOTES: 256 KiB at 1 Gbit/s gave 952 Mbit/s).
fn burst_bytes(bits: u64) -> u64 {
    (bits / 8 / 500).max(16 * 1024)
}

/// Limits both directions of every host's link, clients' and servers', to `rate` with
/// tbf: on the bridge port (toward the host) and on the host's eth0 (from it). N clients
/// working against one server therefore share that server's link, as on a real network,
/// and traffic between servers (Gluster replication, DFS referrals) crosses two shaped
/// links like any other.
pub fn shape_links(state: &LabState, link: Link) -> Result<()> {
    let Some(bits) = link.bits() else {
        return Ok(());
    };
    let rate = link.name();
    let burst = burst_bytes(bits).to_string();
    let tbf = |dev: &str| -> Vec<String> {
        [
            "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", &burst,
            "latency", "50ms",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for h in &state.topology.hosts {
        let role = match h.role {
            Role::Client => "client",
            Role::Server => "server",
        };
        let port = port_of(&h.name);
        let toward: Vec<String> = ["-n", LAN]
            .iter()
            .map(|s| s.to_string())
            .chain(tbf(&port))
            .collect();
        let toward: Vec<&str> = toward.iter().map(String::as_str).collect();
        run("tc", &toward).with_context(|| format!("shaping the link toward {role} {}", h.name))?;
        let from = tbf("eth0");
        let from: Vec<&str> = from.iter().map(String::as_str).collect();
        run_in(&netns_of(&h.name), "tc", &from)
            .with_context(|| format!("shaping the link from {role} {}", h.name))?;
    }
    Ok(())
}

/// Removes a namespace if it exists.
pub fn delete_netns(name: &str) -> bool {
    run_quiet("ip", &["netns", "del", name])
}

/// Removes a host-side link if it exists.
pub fn delete_link(name: &str) -> bool {
    run_quiet("ip", &["link", "del", name])
}

/// Namespaces with the lab's prefix that exist now (for clean-up after a lost state).
pub fn lab_namespaces() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `f` on a thread that has joined namespace `netns` (only that thread moves).
pub fn in_netns<T: Send>(netns: &str, f: impl FnOnce() -> T + Send) -> Result<T> {
    let path = format!("/run/netns/{netns}");
    std::thread::scope(|s| {
        s.spawn(|| -> Result<T> {
            let fd = std::fs::File::open(&path)
                .with_context(|| format!("namespace {netns} does not exist"))?;
            nix::sched::setns(&fd, nix::sched::CloneFlags::CLONE_NEWNET)
                .with_context(|| format!("cannot enter {netns}"))?;
            Ok(f())
        })
        .join()
        .map_err(|_| anyhow::anyhow!("thread in {netns} panicked"))?
    })
}

/// Waits until `addr:port` accepts TCP connections, seen from namespace `from`.
pub fn wait_for_port(from: &str, addr: Ipv4Addr, port: u16, timeout: Duration) -> Result<()> {
    let target = SocketAddr::from((addr, port));
    in_netns(from, || {
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&target, Duration::from_millis(300)).is_ok() {
                return Ok(());
            }
            if start.elapsed() > timeout {
                bail!("{target} did not answer within {} s", timeout.as_secs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_rates() {
        assert_eq!("unlimited".parse::<Link>().unwrap().bits(), None);
        assert_eq!("100mbit".parse::<Link>().unwrap().bits(), Some(100_000_000));
        assert!("3mbit".parse::<Link>().is_err());
        // The state file and `lab status --json` keep the names `--link` takes.
        for l in Link::ALL {
            assert_eq!(serde_json::to_string(&l).unwrap(), format!("\"{l}\""));
        }
    }

    #[test]
    fn burst_is_two_milliseconds_at_the_rate() {
        assert_eq!(burst_bytes(100_000_000), 25_000);
        assert_eq!(burst_bytes(1_000_000_000), 250_000);
        assert_eq!(burst_bytes(10_000_000), 16 * 1024);
    }

    #[test]
    fn names_fit_in_interface_names() {
        assert!(port_of("abcdefghij").len() <= 15);
        assert!(netns_of("abcdefghij").starts_with(PREFIX));
    }
}
