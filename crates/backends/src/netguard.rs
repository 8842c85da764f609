//! The project's network rule for native clients: traffic goes only to loopback, or to
//! anything when the process runs in a network namespace other than the host's (the lab
//! starts its clients inside namespaces it made). Host names are looked up in /etc/hosts
//! only, never through DNS, unless in such a namespace. Not: firewalling; this is a check
//! before connecting, and the checked address is what the client library is given.

use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::os::unix::fs::MetadataExt;

/// Prefix of the network namespaces the lab creates (`sharebench_lab::state::PREFIX`).
pub const LAB_NETNS_PREFIX: &str = "sblab-";

/// The lab namespace (`sblab-*`) the calling thread runs in, if any.
pub fn lab_netns() -> Option<String> {
    let ns = |p: &std::path::Path| std::fs::metadata(p).map(|m| (m.dev(), m.ino())).ok();
    // The thread's own namespace: a study runs each step in a thread that entered the
    // lab client's namespace while the main thread stays on the host.
    let me = ns(std::path::Path::new("/proc/thread-self/ns/net"))?;
    std::fs::read_dir("/run/netns")
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(LAB_NETNS_PREFIX)
        })
        .find(|e| ns(&e.path()) == Some(me))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// True when the calling thread runs in a network namespace the project created: one of the
/// lab's `/run/netns/sblab-*`, or (when PID 1's can be read) any namespace but the
/// host's. After entering a namespace, /proc/1/ns/net is often unreadable (EACCES), so
/// the lab's own namespaces are what counts.
pub fn in_private_netns() -> bool {
    if lab_netns().is_some() {
        return true;
    }
    let ns = |p: &str| std::fs::metadata(p).map(|m| (m.dev(), m.ino())).ok();
    match (ns("/proc/thread-self/ns/net"), ns("/proc/1/ns/net")) {
        (Some(me), Some(host)) => me != host,
        _ => false,
    }
}

/// Addresses of `name` in /etc/hosts.
fn etc_hosts(name: &str) -> Vec<IpAddr> {
    let text = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let l = l.split('#').next().unwrap_or("");
            let mut words = l.split_whitespace();
            let addr: IpAddr = words.next()?.parse().ok()?;
            words.any(|w| w.eq_ignore_ascii_case(name)).then_some(addr)
        })
        .collect()
}

/// Resolves the host of `target` (shown in errors) to the one address to connect to,
/// preferring IPv4, and refuses it unless the rule above allows it. Errors are one line.
pub fn resolve_allowed(host: &str, target: &str) -> Result<IpAddr, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.is_empty() {
        return Err(format!("target '{target}': no host"));
    }
    let private_ns = in_private_netns();
    let addrs: Vec<IpAddr> = if let Ok(ip) = bare.parse::<IpAddr>() {
        vec![ip]
    } else if bare.eq_ignore_ascii_case("localhost") {
        vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
    } else {
        let listed = etc_hosts(bare);
        if !listed.is_empty() {
            listed
        } else if private_ns {
            (bare, 0)
                .to_socket_addrs()
                .map_err(|e| format!("target '{target}': cannot resolve '{bare}': {e}"))?
                .map(|a| a.ip())
                .collect()
        } else {
            return Err(format!(
                "target '{target}': refused: '{bare}' is not an address or an /etc/hosts name (sharebench does not use DNS outside a lab network namespace)"
            ));
        }
    };
    if !private_ns {
        if let Some(bad) = addrs.iter().find(|a| !a.is_loopback()) {
            let what = if bare == bad.to_string() {
                bare.to_string()
            } else {
                format!("{bare} ({bad})")
            };
            return Err(format!(
                "target '{target}': refused: {what} is not a loopback address (native clients talk only to loopback, or run inside a lab network namespace)"
            ));
        }
    }
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("target '{target}': '{bare}' has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_allowed_and_others_are_refused_on_the_host() {
        if in_private_netns() {
            return;
        }
        assert_eq!(
            resolve_allowed("127.0.0.1", "t").unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert_eq!(
            resolve_allowed("localhost", "t").unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert!(resolve_allowed("[::1]", "t").unwrap().is_loopback());
        let e = resolve_allowed("192.0.2.7", "nfs://192.0.2.7/x").unwrap_err();
        assert!(e.contains("refused") && e.contains("not a loopback"), "{e}");
        let e = resolve_allowed("files.example.com", "t").unwrap_err();
        assert!(e.contains("refused") && e.contains("DNS"), "{e}");
    }
}
