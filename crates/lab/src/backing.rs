//! A server configuration the lab can hold beside others: the file system of a backing
//! image and how it allocates, and how Samba allocates on it. `lab up --fs xfs,ext4`
//! brings up one image (and one set of shares and exports) per backing, so one run
//! measures `lab:nfs3@xfs` and `lab:nfs3@ext4` side by side, interleaved, instead of in
//! two labs one after the other (docs/methods/lab.md). Not: creating the images (`storage`).

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The file system of a backing image (`mkfs.NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileSystem {
    Xfs,
    Ext4,
    Ext3,
    Btrfs,
}

impl FileSystem {
    pub const ALL: [FileSystem; 4] = [
        FileSystem::Xfs,
        FileSystem::Ext4,
        FileSystem::Ext3,
        FileSystem::Btrfs,
    ];

    /// The name `--fs`, `mkfs.` and targets use.
    pub fn name(self) -> &'static str {
        match self {
            FileSystem::Xfs => "xfs",
            FileSystem::Ext4 => "ext4",
            FileSystem::Ext3 => "ext3",
            FileSystem::Btrfs => "btrfs",
        }
    }

    /// ext3 and ext4, whose allocator can follow write order (`+write-order`).
    pub fn is_ext(self) -> bool {
        matches!(self, FileSystem::Ext3 | FileSystem::Ext4)
    }

    fn named(name: &str) -> Option<FileSystem> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for FileSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When the servers make what a client wrote on a backing stable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// When the client asks: an NFS COMMIT or FILE_SYNC write, an SMB flush (the servers'
    /// own behaviour).
    #[default]
    OnRequest,
    /// `+sync`: every write and every namespace change (create, rename, remove, set
    /// attributes) stable before the reply, as a Linux `sync` export makes them: the
    /// backing is mounted `sync,dirsync` (and `wsync` on xfs).
    Sync,
    /// `+async`: the NFS server answers WRITE and COMMIT before anything is stable, as a
    /// Linux `async` export does: Ganesha's sync calls are no-ops (`nosync`). Samba is
    /// not changed.
    Async,
}

/// One backing: `FS[+write-order][+strict-allocate][+sync|+async]`, e.g. `ext3+write-order`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backing {
    pub fs: FileSystem,
    /// ext3/ext4: blocks allocated in the order they are written (the 2007 ext3 driver).
    #[serde(default)]
    pub write_order: bool,
    /// Samba's `strict allocate = yes` on this backing's shares.
    #[serde(default)]
    pub strict_allocate: bool,
    #[serde(default)]
    pub durability: Durability,
}

impl Backing {
    /// The name targets carry after `@`: the spec it was given with, e.g. `ext3+write-order`.
    pub fn name(&self) -> String {
        let mut n = self.fs.name().to_string();
        if self.write_order {
            n.push_str("+write-order");
        }
        if self.strict_allocate {
            n.push_str("+strict-allocate");
        }
        match self.durability {
            Durability::OnRequest => {}
            Durability::Sync => n.push_str("+sync"),
            Durability::Async => n.push_str("+async"),
        }
        n
    }

    /// The options the backing is mounted with (`mount -o`), if any.
    pub fn mount_options(&self) -> Option<&'static str> {
        match (self.durability, self.fs) {
            (Durability::Sync, FileSystem::Xfs) => Some("sync,dirsync,wsync"),
            (Durability::Sync, _) => Some("sync,dirsync"),
            _ => None,
        }
    }

    /// Parses `FS[+write-order][+strict-allocate]`; `parse_list` checks the combination.
    fn parse(spec: &str) -> Result<Backing> {
        let mut parts = spec.trim().split('+');
        let given = parts.next().unwrap_or_default();
        let Some(fs) = FileSystem::named(given) else {
            bail!("unknown file system '{given}' in --fs '{spec}' (xfs, ext4, ext3 or btrfs)");
        };
        let mut b = Backing {
            fs,
            write_order: false,
            strict_allocate: false,
            durability: Durability::OnRequest,
        };
        for p in parts {
            match p {
                "write-order" => b.write_order = true,
                "strict-allocate" => b.strict_allocate = true,
                "sync" | "async" if b.durability != Durability::OnRequest => {
                    bail!("--fs '{spec}': give +sync or +async, not both")
                }
                "sync" => b.durability = Durability::Sync,
                "async" => b.durability = Durability::Async,
                _ => {
                    bail!("unknown option '{p}' in --fs '{spec}' (write-order, strict-allocate, sync or async)")
                }
            }
        }
        Ok(b)
    }

    /// Parses a comma-separated list; `write_order` and `strict_allocate` (the flags of
    /// `lab up`) apply to every backing. The first is the primary: the unqualified targets
    /// (`lab:nfs3`), the DFS links and the Gluster bricks live on it.
    pub fn parse_list(
        specs: &str,
        write_order: bool,
        strict_allocate: bool,
    ) -> Result<Vec<Backing>> {
        let mut out: Vec<Backing> = Vec::new();
        for spec in specs.split(',') {
            let mut b = Backing::parse(spec)?;
            b.write_order |= write_order;
            b.strict_allocate |= strict_allocate;
            if b.write_order && !b.fs.is_ext() {
                bail!("write-order is for ext3 and ext4 only, not {}", b.fs);
            }
            if out.iter().any(|o| o.name() == b.name()) {
                bail!("--fs names '{}' twice", b.name());
            }
            out.push(b);
        }
        // One NFS server serves every backing: without its fsync, a backing that is
        // neither +sync nor +async would silently become async too.
        if out.iter().any(|b| b.durability == Durability::Async) {
            if let Some(plain) = out.iter().find(|b| b.durability == Durability::OnRequest) {
                bail!(
                    "--fs: with an +async backing the NFS server skips every fsync, so '{}' would be async too; give it +sync or +async",
                    plain.name()
                );
            }
        }
        if out.len() > MAX_BACKINGS {
            bail!(
                "--fs names {} backings; the lab holds at most {MAX_BACKINGS}",
                out.len()
            );
        }
        Ok(out)
    }
}

/// At most this many backings side by side (each is an image and a loop device per server).
pub const MAX_BACKINGS: usize = 6;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_with_options() {
        let l = Backing::parse_list(
            "xfs,ext3+write-order,ext3+write-order+strict-allocate",
            false,
            false,
        )
        .unwrap();
        let names: Vec<String> = l.iter().map(Backing::name).collect();
        assert_eq!(
            names,
            [
                "xfs",
                "ext3+write-order",
                "ext3+write-order+strict-allocate"
            ]
        );
        assert!(l[2].strict_allocate && l[2].write_order && !l[0].write_order);
        let all = Backing::parse_list("ext4,ext3", true, true).unwrap();
        assert!(all.iter().all(|b| b.write_order && b.strict_allocate));
    }

    #[test]
    fn durability_options() {
        let l = Backing::parse_list("xfs+async,xfs+sync,ext4+sync", false, false).unwrap();
        let names: Vec<String> = l.iter().map(Backing::name).collect();
        assert_eq!(names, ["xfs+async", "xfs+sync", "ext4+sync"]);
        assert_eq!(l[0].mount_options(), None);
        assert_eq!(l[1].mount_options(), Some("sync,dirsync,wsync"));
        assert_eq!(l[2].mount_options(), Some("sync,dirsync"));
        let e = Backing::parse_list("xfs+async,ext4", false, false).unwrap_err();
        assert!(e.to_string().contains("'ext4' would be async too"), "{e}");
        assert!(Backing::parse_list("xfs+sync+async", false, false).is_err());
    }

    #[test]
    fn refuses_bad_lists() {
        for bad in ["zfs", "xfs,xfs", "xfs+write-order", "ext4+fast", "", "xfs,"] {
            assert!(Backing::parse_list(bad, false, false).is_err(), "{bad}");
        }
        assert!(Backing::parse_list("xfs", true, false).is_err());
    }
}
