//! Disk profiles: the latency of a real disk under the servers' backing images. This
//! machine's virtual disk answers a write in a fraction of a millisecond, so a server
//! that makes data stable costs little here, while the seeds' servers waited milliseconds
//! for each stable write. With a profile other than `host`, each image is served by
//! nbdkit with its delay filter (every read and write request waits the profile's
//! latency), exposed as a file by nbdfuse, and that file is what the loop device
//! attaches (docs/methods/lab.md, "Disk profiles"). Not: the images themselves (`storage`).

use crate::proc;
use crate::state::{LabState, Resource};
use anyhow::{bail, Context, Result};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A disk's latency per request, and where the figure comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskProfile {
    pub name: &'static str,
    /// Added to every read and write request, milliseconds; 0: none (no layer at all).
    pub read_ms: u32,
    pub write_ms: u32,
    pub source: &'static str,
}

/// The profiles `lab up --disk` knows, the default first.
/// No SSD: the delay filter counts whole milliseconds, ten times an SSD's latency.
pub const PROFILES: [DiskProfile; 3] = [
    DiskProfile {
        name: "host",
        read_ms: 0,
        write_ms: 0,
        source: "this machine's disk as it is",
    },
    DiskProfile {
        name: "hdd",
        read_ms: 13,
        write_ms: 13,
        source: "a 7200 rpm disk: average seek about 8.5 ms plus half a turn, 4.2 ms",
    },
    DiskProfile {
        name: "ebs-magnetic",
        read_ms: 10,
        write_ms: 10,
        source: "Amazon EBS magnetic (standard) volumes, the seeds' EC2 storage: about 100 IOPS on average (Amazon EBS volume types, previous generation), 10 ms a request one at a time",
    },
];

impl DiskProfile {
    /// The profile called `name`, or an error naming the known ones.
    pub fn named(name: &str) -> Result<&'static DiskProfile> {
        PROFILES.iter().find(|p| p.name == name).with_context(|| {
            format!(
                "unknown disk profile '{name}' (known: {})",
                PROFILES.map(|p| p.name).join(", ")
            )
        })
    }

    /// Whether the images need the delay layer.
    pub fn delays(&self) -> bool {
        self.read_ms > 0 || self.write_ms > 0
    }
}

/// Where the delayed view of image `name` is mounted (a FUSE mount holding one file).
fn mount_dir(state: &LabState, name: &str) -> PathBuf {
    state.file(format!("disks/{name}"))
}

/// Serves `image` with `profile`'s latency and returns the file to attach instead of it.
/// nbdfuse runs nbdkit as its child; both are one process group, recorded so that `lab
/// down` unmounts the file (after the loop device on it is gone) and ends them.
pub fn serve(
    state: &mut LabState,
    name: &str,
    image: &Path,
    profile: &DiskProfile,
) -> Result<PathBuf> {
    let dir = mount_dir(state, name);
    std::fs::create_dir_all(&dir)?;
    let pidfile = state.file(format!("disks/{name}.pid"));
    let log = state.file(format!("disks/{name}.log"));
    let out = std::fs::File::create(&log)?;
    let file = dir.join("disk");
    let child = Command::new("nbdfuse")
        .arg("-P")
        .arg(&pidfile)
        .arg(&file)
        .args(["--command", "nbdkit", "-s", "--exit-with-parent"])
        .args(["--filter=delay", "file"])
        .arg(image)
        .arg(format!("delay-read={}ms", profile.read_ms))
        .arg(format!("delay-write={}ms", profile.write_ms))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0)
        .spawn()
        .context("cannot start nbdfuse (Debian: libnbd-bin, nbdkit)")?;
    let pid = child.id() as i32;
    std::mem::forget(child);
    state.intend(Resource::DelayedDisk {
        mount: dir.clone(),
        pid,
        start_time: proc::start_time(pid).unwrap_or(0),
    })?;
    // nbdfuse writes its pid file once it serves the file.
    let t = Instant::now();
    while !(pidfile.exists() && file.exists()) {
        if t.elapsed() > Duration::from_secs(15) {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            bail!(
                "nbdfuse did not serve {} within 15 s: {}",
                image.display(),
                said.trim()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(file)
}

/// Ends a delay layer: unmounts its file (which ends nbdfuse and its nbdkit), then
/// signals the group if it is still there. True when nothing is left mounted.
pub fn stop(mount: &Path, pid: i32, start_time: u64) -> bool {
    let unmounted = crate::storage::unmount(mount);
    let t = Instant::now();
    while proc::is_alive(pid, start_time) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    proc::stop_group(pid, start_time, Duration::from_secs(5));
    unmounted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_by_name() {
        assert!(!DiskProfile::named("host").unwrap().delays());
        assert_eq!(DiskProfile::named("ebs-magnetic").unwrap().write_ms, 10);
        let e = DiskProfile::named("floppy").unwrap_err().to_string();
        assert!(e.contains("known: host, hdd, ebs-magnetic"), "{e}");
    }
}
