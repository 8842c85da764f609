//! `nfs://host[:port]/path?version=...` targets, parsed once for both native NFS clients:
//! libnfs (`nfs.rs`: NFSv3 and NFSv4.0) and nfs-rs (`nfs41.rs`: NFSv4.1 and 4.2). The version
//! picks the client. Not: name resolution or the network rule (see `netguard`).

/// The NFS version a target asks for, which also chooses the client library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// NFSv3 through libnfs (`version=3`, the default).
    V3,
    /// NFSv4.0 through libnfs (`version=4` or `version=4.0`).
    V4_0,
    /// NFSv4.1 through nfs-rs (`version=4.1`).
    V4_1,
    /// NFSv4.2 through nfs-rs (`version=4.2`): NFSv4.1's operations, on a session of
    /// minor version 2.
    V4_2,
}

impl Version {
    /// As written in records and mount options: `3`, `4.0`, `4.1`, `4.2`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V3 => "3",
            Version::V4_0 => "4.0",
            Version::V4_1 => "4.1",
            Version::V4_2 => "4.2",
        }
    }

    /// Versions nfs-rs speaks here (the others go through libnfs).
    pub fn through_nfs_rs(self) -> bool {
        matches!(self, Version::V4_1 | Version::V4_2)
    }
}

/// A parsed `nfs://` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: Option<u16>,
    /// The export (NFSv3) or pseudo-file-system path (NFSv4.x), absolute, without a
    /// trailing `/` (`/` itself for the root).
    pub path: String,
    pub version: Version,
    /// Extra numeric arguments, validated (uid, gid, mountport, nfsport).
    pub args: Vec<(String, String)>,
    /// TCP connections per open file (`nconnect=N`: libnfs, and NFSv4.1's own data path;
    /// 1 by default), as Linux's `nconnect` mount option spreads a mount's requests over
    /// several connections.
    pub nconnect: u32,
    /// NFSv4.1/4.2 files' READs and WRITEs through nfs-rs (`client=nfs-rs`) instead of
    /// sharebench's own data path (`client=sharebench`, the default; `nfs41/wire.rs`).
    pub data_through_nfs_rs: bool,
}

/// The most connections per open file `nconnect` takes (Linux's limit too).
pub const MAX_NCONNECT: u32 = 16;

impl Target {
    /// The numeric argument `key`, when given.
    pub fn arg(&self, key: &str) -> Option<u32> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
    }
}

/// Parses `spec`. Errors are one line for the user.
pub fn parse(spec: &str) -> Result<Target, String> {
    let bad = |why: &str| format!("target '{spec}': {why}");
    let rest = spec
        .strip_prefix("nfs://")
        .ok_or_else(|| bad("not an nfs:// URL"))?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, p) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        (h.to_string(), p.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .map_err(|_| bad(&format!("bad port '{p}'")))
        })
        .transpose()?;
    if host.is_empty() {
        return Err(bad("no host (nfs://HOST/EXPORT?version=3)"));
    }
    // `/` itself is an export path (Ganesha's Gluster FSAL exports a volume's root as `/`).
    let trimmed = match path.trim_end_matches('/') {
        "" if path.is_empty() => return Err(bad("no export path (nfs://HOST/EXPORT?version=3)")),
        "" => "/",
        p => p,
    };
    let mut t = Target {
        host,
        port,
        path: trimmed.to_string(),
        version: Version::V3,
        args: Vec::new(),
        nconnect: 1,
        data_through_nfs_rs: false,
    };
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        match k {
            "version" => {
                t.version = match v {
                    "3" => Version::V3,
                    "4" | "4.0" => Version::V4_0,
                    "4.1" => Version::V4_1,
                    "4.2" => Version::V4_2,
                    _ => {
                        return Err(bad(&format!(
                            "unknown NFS version '{v}' (3, 4 or 4.0, 4.1, 4.2)"
                        )))
                    }
                }
            }
            "uid" | "gid" | "mountport" | "nfsport" => {
                v.parse::<u32>()
                    .map_err(|_| bad(&format!("'{k}' needs a number, not '{v}'")))?;
                if k == "nfsport" && t.port.is_some() {
                    return Err(bad("give the NFS port either as host:port or as nfsport="));
                }
                if t.args.iter().any(|(seen, _)| seen == k) {
                    return Err(bad(&format!("'{k}' is given twice")));
                }
                t.args.push((k.to_string(), v.to_string()));
            }
            "nconnect" => {
                t.nconnect = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_NCONNECT).contains(n))
                    .ok_or_else(|| {
                        bad(&format!(
                            "nconnect takes 1 to {MAX_NCONNECT} connections, not '{v}'"
                        ))
                    })?;
            }
            "client" => {
                t.data_through_nfs_rs = match v {
                    "nfs-rs" => true,
                    "sharebench" => false,
                    _ => {
                        return Err(bad(&format!(
                            "client is 'sharebench' or 'nfs-rs' (NFSv4.1 and 4.2), not '{v}'"
                        )))
                    }
                }
            }
            _ => {
                return Err(bad(&format!(
                "unknown argument '{k}' (known: version, uid, gid, nfsport, mountport, nconnect, client)"
            )))
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        let t = parse("nfs://127.0.0.1/srv/export/?version=3").unwrap();
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.path, "/srv/export");
        assert_eq!(t.version, Version::V3);
        let t = parse("nfs://localhost:2050/pseudo/dir?version=4&uid=0&gid=0").unwrap();
        assert_eq!(t.port, Some(2050));
        assert_eq!(t.version, Version::V4_0);
        assert_eq!(t.arg("uid"), Some(0));
        assert_eq!(t.arg("mountport"), None);
        assert_eq!(
            parse("nfs://h/x?version=4.0").unwrap().version,
            Version::V4_0
        );
        assert_eq!(parse("nfs://h/x").unwrap().version, Version::V3);
        assert_eq!(parse("nfs://h/?version=3").unwrap().path, "/");
        assert_eq!(parse("nfs://h/x").unwrap().nconnect, 1);
        assert_eq!(parse("nfs://h/x?nconnect=4").unwrap().nconnect, 4);
        assert!(!parse("nfs://h/x?version=4.1").unwrap().data_through_nfs_rs);
        assert!(
            parse("nfs://h/x?version=4.1&client=nfs-rs")
                .unwrap()
                .data_through_nfs_rs
        );
    }

    #[test]
    fn parses_nfs41_targets() {
        let t = parse("nfs://10.10.0.3/nfs-sharing/?version=4.1").unwrap();
        assert_eq!(t.version, Version::V4_1);
        assert_eq!(t.version.name(), "4.1");
        assert_eq!(t.host, "10.10.0.3");
        assert_eq!(t.port, None);
        assert_eq!(t.path, "/nfs-sharing");
        let t = parse("nfs://[::1]:2049/a/b?uid=65534&version=4.1&gid=65534").unwrap();
        assert_eq!(t.version, Version::V4_1);
        assert_eq!((t.host.as_str(), t.port), ("::1", Some(2049)));
        assert_eq!((t.arg("uid"), t.arg("gid")), (Some(65534), Some(65534)));
        assert_eq!(
            parse("nfs://h/?version=4.1").unwrap().path,
            "/",
            "the pseudo root"
        );
        // The last version given wins, as for any repeated key of a query.
        assert_eq!(
            parse("nfs://h/x?version=3&version=4.1").unwrap().version,
            Version::V4_1
        );
        let t = parse("nfs://h/x?version=4.2").unwrap();
        assert_eq!((t.version, t.version.name()), (Version::V4_2, "4.2"));
        assert!(t.version.through_nfs_rs() && Version::V4_1.through_nfs_rs());
        assert!(!Version::V3.through_nfs_rs() && !Version::V4_0.through_nfs_rs());
    }

    #[test]
    fn refuses_bad_targets_with_one_line() {
        for (spec, needle) in [
            ("nfs://127.0.0.1", "no export path"),
            ("nfs:///x", "no host"),
            ("nfs://h:99999/x", "bad port"),
            ("nfs://h/x?version=4.10", "unknown NFS version '4.10'"),
            ("nfs://h/x?version=41", "unknown NFS version"),
            ("nfs://h/x?version=4.1&readahead=1", "unknown argument"),
            ("nfs://h/x?version=4.1&uid=root", "needs a number"),
            ("nfs://h:1/x?nfsport=2", "either"),
            ("nfs://h/x?uid=1&uid=2", "twice"),
            ("nfs://h/x?nconnect=0", "1 to 16"),
            ("nfs://h/x?nconnect=17", "1 to 16"),
            (
                "nfs://h/x?version=4.1&client=libnfs",
                "'sharebench' or 'nfs-rs'",
            ),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
