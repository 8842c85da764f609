//! Backing storage of each server: an image file formatted with the chosen file system,
//! attached with `losetup --direct-io=on` (so the host page cache does not hide the
//! device) and mounted under the lab directory.

use crate::backing::{Backing, FileSystem};
use crate::disk::DiskProfile;
use crate::sh::{run, run_quiet};
use crate::state::{LabState, Resource};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// What ext4's multiblock allocator is told to treat as a "small" file (bytes) for the
/// write-order allocation: every file is then allocated in the order its blocks are
/// written, as the 2007 ext3 driver did (see docs/methods/workloads.md).
pub const WRITE_ORDER_STREAM_REQ: &str = "2000000000";

/// The name of `host`'s data for backing number `index` (0: the primary): its mount
/// point is `srv/NAME` and its image `images/NAME.img` in the lab directory.
pub fn data_name(host: &str, index: usize) -> String {
    match index {
        0 => host.to_string(),
        i => format!("{host}.{i}"),
    }
}

/// Where `host`'s data for backing number `index` is mounted.
pub fn data_dir(state: &LabState, host: &str, index: usize) -> PathBuf {
    state.file(format!("srv/{}", data_name(host, index)))
}

/// Creates, formats, attaches and mounts `host`'s image for backing number `index`;
/// returns the mount point. With `write_order` (ext3 and ext4 only), blocks are
/// allocated in write order.
pub fn create(
    state: &mut LabState,
    host: &str,
    index: usize,
    backing: &Backing,
    size: u64,
    disk: &DiskProfile,
) -> Result<PathBuf> {
    let (fs, write_order) = (backing.fs, backing.write_order);
    if write_order && !fs.is_ext() {
        bail!("the write-order allocation is for ext3 and ext4 only, not {fs}");
    }
    let name = data_name(host, index);
    let img = state.file(format!("images/{name}.img"));
    let mnt = data_dir(state, host, index);
    std::fs::create_dir_all(img.parent().unwrap_or(Path::new("/")))?;
    std::fs::create_dir_all(&mnt)?;
    state.intend(Resource::Image { path: img.clone() })?;
    let img_s = img.to_string_lossy().into_owned();
    run("truncate", &["-s", &size.to_string(), &img_s])?;
    let force = if matches!(fs, FileSystem::Xfs | FileSystem::Btrfs) {
        "-f"
    } else {
        "-F"
    };
    run(&format!("mkfs.{fs}"), &["-q", force, &img_s])
        .with_context(|| format!("formatting {name}'s image as {fs}"))?;
    // With a disk profile, the loop device attaches the image as the delay layer serves it.
    let attached = if disk.delays() {
        let file = crate::disk::serve(state, &name, &img, disk)?;
        state.intend(Resource::Image { path: file.clone() })?;
        file
    } else {
        img.clone()
    };
    let dev = run(
        "losetup",
        &[
            "-f",
            "--show",
            "--direct-io=on",
            &attached.to_string_lossy(),
        ],
    )?;
    state.intend(Resource::Mount { path: mnt.clone() })?;
    let mnt_s = mnt.to_string_lossy();
    match backing.mount_options() {
        Some(o) => run("mount", &["-o", o, &dev, &mnt_s])?,
        None => run("mount", &[&dev, &mnt_s])?,
    };
    if write_order {
        let knob = format!(
            "/sys/fs/ext4/{}/mb_stream_req",
            dev.trim_start_matches("/dev/")
        );
        std::fs::write(&knob, WRITE_ORDER_STREAM_REQ)
            .with_context(|| format!("cannot set {knob}"))?;
    }
    Ok(mnt)
}

/// The block device (its name under /sys/block, e.g. `loop3`) that holds `path`; `None`
/// for a file system without one (tmpfs, FUSE) or a partition's parent.
pub fn block_device(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev));
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let name = link.file_name()?.to_str()?.to_string();
    Path::new("/sys/block").join(&name).exists().then_some(name)
}

/// Loop devices attached to `image` now.
pub fn loop_devices(image: &Path) -> Vec<String> {
    run(
        "losetup",
        &["-j", &image.to_string_lossy(), "-O", "NAME", "-n"],
    )
    .map(|out| {
        out.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Detaches every loop device of `image`; true when none is left.
pub fn detach(image: &Path) -> bool {
    // A mount namespace that just lost its last process releases its mounts a moment later.
    for _ in 0..50 {
        for dev in loop_devices(image) {
            run_quiet("losetup", &["-d", &dev]);
        }
        if loop_devices(image).is_empty() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// True when `path` is a mount point now.
pub fn is_mounted(path: &Path) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let p = path.to_string_lossy();
    text.lines().any(|l| l.split(' ').nth(4) == Some(&p))
}

/// Unmounts `path` (lazily if it is busy); true when it is no longer mounted.
pub fn unmount(path: &Path) -> bool {
    let p = path.to_string_lossy();
    for _ in 0..3 {
        if !is_mounted(path) {
            return true;
        }
        if !run_quiet("umount", &[&p]) {
            run_quiet("umount", &["-l", &p]);
        }
    }
    !is_mounted(path)
}
