//! The environment table: per label, what the manifests and records say about where and
//! how it ran (host, kernel, CPU, memory, backend, client, file system, mount options,
//! cache policy, O_DIRECT, O_SYNC, mmap, close/fsync timing, threads, tool), with the rows
//! whose values differ between labels marked, so a reader can tell why two numbers differ.
//! Not: a judgement of which difference matters.

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::{EnvRow, EnvTable};

use crate::format;
use crate::model::Source;
use sharebench_core::manifest::TargetManifest;
use sharebench_core::record::Record;

fn distinct<T: ToString>(it: impl Iterator<Item = T>) -> String {
    let mut v: Vec<String> = it.map(|x| x.to_string()).collect();
    v.sort();
    v.dedup();
    if v.is_empty() {
        "–".into()
    } else {
        v.join(", ")
    }
}

/// A multi-client run's hosts: one entry per distinct host, with the ranks on it, and
/// "DIFFER:" first when the hosts are not alike (kernel, CPU, memory).
pub fn rank_hosts(hosts: &[sharebench_core::manifest::Host]) -> Option<String> {
    if hosts.is_empty() {
        return None;
    }
    // The machine, and how it reached each target (not the working directory, which
    // is every rank's own).
    let describe = |h: &sharebench_core::manifest::Host| {
        let mut d = format!(
            "{} × {}, {}, {}",
            h.cpus,
            h.cpu_model,
            format::size(h.memory_bytes),
            h.kernel
        );
        for t in &h.targets {
            d.push_str(&format!(
                "; {} through {} on {}",
                t.name,
                t.client,
                t.fs_type.as_deref().unwrap_or("?")
            ));
            if let Some(o) = &t.mount_options {
                d.push_str(&format!(" ({o})"));
            }
        }
        d
    };
    let mut by_host: Vec<(String, String, Vec<usize>)> = Vec::new();
    for (rank, h) in hosts.iter().enumerate() {
        let d = describe(h);
        match by_host
            .iter_mut()
            .find(|(name, desc, _)| *name == h.hostname && *desc == d)
        {
            Some((_, _, ranks)) => ranks.push(rank),
            None => by_host.push((h.hostname.clone(), d, vec![rank])),
        }
    }
    let mut kinds: Vec<&String> = by_host.iter().map(|(_, d, _)| d).collect();
    kinds.sort();
    kinds.dedup();
    let list = by_host
        .iter()
        .map(|(name, d, ranks)| {
            let r: Vec<String> = ranks.iter().map(usize::to_string).collect();
            format!("{name} (ranks {}: {d})", r.join(" "))
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(if kinds.len() > 1 {
        format!("DIFFER: {list}")
    } else {
        list
    })
}

/// Whether the run kept idle CPUs polling (`run`'s default as root, `--keep-cpus-awake`).
fn idle_cpus(m: &sharebench_core::manifest::Manifest, _: &str) -> String {
    if m.plan.keep_cpus_awake {
        "kept polling".into()
    } else {
        "the kernel's choice (halting)".into()
    }
}

/// The TCP congestion control the client's network namespace used, as run.json says.
fn tcp_congestion(m: &sharebench_core::manifest::Manifest, _: &str) -> String {
    m.host.tcp_congestion.clone().unwrap_or_else(|| "–".into())
}

pub fn table(sources: &[Source], records: &[Record]) -> EnvTable {
    let labels: Vec<String> = sources.iter().map(|s| s.label.clone()).collect();
    type Getter = Box<dyn Fn(&Source, &[&Record]) -> String>;
    let m = |f: fn(&sharebench_core::manifest::Manifest, &str) -> String| -> Getter {
        Box::new(move |s: &Source, _: &[&Record]| {
            s.manifest
                .as_ref()
                .map(|m| f(m, &s.target))
                .unwrap_or_else(|| "–".into())
        })
    };
    // A field of the manifest's entry for the source's target.
    let of_target = |f: fn(&TargetManifest) -> Option<String>| -> Getter {
        Box::new(move |s: &Source, _: &[&Record]| {
            s.manifest
                .as_ref()
                .and_then(|m| m.targets.iter().find(|x| x.name == s.target))
                .and_then(f)
                .unwrap_or_else(|| "–".into())
        })
    };
    let rows: Vec<(&str, Getter)> = vec![
        (
            "source",
            Box::new(|s: &Source, _: &[&Record]| {
                format!("{} ({})", s.path.display(), s.kind.name())
            }),
        ),
        ("tool", m(|m, _| format!("{} {}", m.tool, m.tool_version))),
        ("host", m(|m, _| m.host.hostname.clone())),
        ("kernel", m(|m, _| m.host.kernel.clone())),
        (
            "CPU",
            m(|m, _| format!("{} × {}", m.host.cpus, m.host.cpu_model)),
        ),
        ("memory", m(|m, _| format::size(m.host.memory_bytes))),
        ("TCP congestion control (client)", m(tcp_congestion)),
        (
            "client hosts (MPI ranks)",
            m(|m, _| rank_hosts(&m.hosts).unwrap_or_else(|| "one client".into())),
        ),
        (
            "backend / client",
            Box::new(|_: &Source, r: &[&Record]| {
                distinct(r.iter().map(|r| format!("{} / {}", r.backend, r.client)))
            }),
        ),
        ("idle CPUs", m(idle_cpus)),
        (
            "requests in flight (iodepth)",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.iodepth))),
        ),
        ("target as given", of_target(|x| x.location.clone())),
        ("mounted from", of_target(|x| x.mount_source.clone())),
        ("file system", of_target(|x| x.fs_type.clone())),
        ("server's file system", of_target(|x| x.server_fs.clone())),
        (
            "server's mount options",
            of_target(|x| x.server_mount_options.clone()),
        ),
        ("mount point", of_target(|x| x.mount_point.clone())),
        ("mount options", of_target(|x| x.mount_options.clone())),
        (
            "cache policy",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.cache.to_string()))),
        ),
        (
            "O_DIRECT",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.direct))),
        ),
        (
            "O_SYNC",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.sync))),
        ),
        (
            "mmap",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.mmap))),
        ),
        (
            "close in timing",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.include_close))),
        ),
        (
            "fsync in timing",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.include_fsync))),
        ),
        (
            "threads",
            Box::new(|_: &Source, r: &[&Record]| distinct(r.iter().map(|r| r.threads))),
        ),
        ("repetitions", m(|m, _| m.plan.reps.to_string())),
        ("command line", m(|m, _| m.command_line.join(" "))),
        (
            "run",
            m(|m, _| format!("{} ({}), {}", m.run_id, m.outcome, m.started_at)),
        ),
    ];
    let per_source: Vec<Vec<&Record>> = sources
        .iter()
        .map(|s| records.iter().filter(|r| r.target == s.label).collect())
        .collect();
    let mut out = EnvTable {
        labels,
        rows: Vec::new(),
    };
    for (name, get) in rows {
        let values: Vec<String> = sources
            .iter()
            .zip(&per_source)
            .map(|(s, r)| get(s, r))
            .collect();
        let differs = name != "source" && values.windows(2).any(|w| w[0] != w[1]);
        out.rows.push(EnvRow {
            name: name.to_string(),
            values,
            differs,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sharebench_core::manifest::Host;

    fn host(name: &str, cpus: usize) -> Host {
        Host {
            hostname: name.into(),
            kernel: "Linux 6.1".into(),
            cpu_model: "cpu".into(),
            cpus,
            memory_bytes: 1 << 30,
            tcp_congestion: None,
            targets: Vec::new(),
        }
    }

    #[test]
    fn rank_hosts_group_ranks_and_flag_unlike_hosts() {
        let same = rank_hosts(&[host("a", 2), host("a", 2), host("b", 2)]).unwrap();
        assert!(same.starts_with("a (ranks 0 1: 2 × cpu"), "{same}");
        assert!(!same.starts_with("DIFFER"), "{same}");
        let differ = rank_hosts(&[host("a", 2), host("b", 4)]).unwrap();
        assert!(differ.starts_with("DIFFER: "), "{differ}");
        assert_eq!(rank_hosts(&[]), None);
        // Alike machines that mounted the target differently differ.
        let mounted = |opts: &str| Host {
            targets: vec![sharebench_core::manifest::TargetManifest {
                name: "/mnt/nfs".into(),
                client: "kernel-nfs".into(),
                fs_type: Some("nfs4".into()),
                mount_options: Some(opts.into()),
                ..Default::default()
            }],
            ..host("a", 2)
        };
        let differ = rank_hosts(&[mounted("rw,sync"), mounted("rw,async")]).unwrap();
        assert!(differ.starts_with("DIFFER: "), "{differ}");
        assert!(
            differ.contains("/mnt/nfs through kernel-nfs on nfs4 (rw,async)"),
            "{differ}"
        );
    }
}
