//! Emptying one file system's cache by unmounting it and mounting it again, as IOzone's -U
//! does, and only where that is proven to lose and release nothing: a whole disk file system
//! on a block device that stays attached, mounted once, with no one else's files open in it,
//! and options that a trial mount has shown to work. Everything else is refused before any
//! I/O, in one line. Not: drop_caches or fadvise (posix.rs), nor any other mount management.

use crate::mountinfo::{self, Mount};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// File systems that live on one block device and come back whole from it.
const DISK_FILE_SYSTEMS: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "vfat", "exfat", "ntfs3",
    "nilfs2", "hfsplus",
];
/// File systems whose files exist only while they are mounted.
const MEMORY_FILE_SYSTEMS: &[&str] = &["tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "shm"];
/// File systems made of other mounts or of a daemon, which an unmount ends.
const STACKED_FILE_SYSTEMS: &[&str] = &["overlay", "aufs", "unionfs", "ecryptfs", "fuse"];

/// Set while a file system is unmounted by us, so that a second Ctrl-C waits for it to come
/// back instead of leaving it unmounted.
static UNMOUNTED: AtomicBool = AtomicBool::new(false);

/// Whether a remount is under way (its file system may be unmounted right now).
pub fn in_progress() -> bool {
    UNMOUNTED.load(Ordering::SeqCst)
}

/// A file system checked safe to unmount and mount again.
#[derive(Debug, Clone)]
pub struct Remount {
    mount: Mount,
    /// The options it is mounted again with: mountinfo's, as a trial mount accepted them.
    options: String,
}

impl Remount {
    /// Checks that the file system holding `root` can be unmounted and mounted again
    /// without losing or releasing anything; the error says why not, in one line.
    pub fn check(root: &Path) -> Result<Remount, String> {
        let refuse = |why: String| {
            format!("cannot remount the file system of {}: {why}; nothing was unmounted (--cache drop empties the page cache without a remount)", root.display())
        };
        if !nix::unistd::geteuid().is_root() {
            return Err(refuse("unmounting needs root".into()));
        }
        let mounts = mountinfo::all().map_err(|e| refuse(format!("/proc/self/mountinfo: {e}")))?;
        let mount =
            mountinfo::mount_of(&mounts, root).ok_or_else(|| refuse("no mount holds it".into()))?;
        refusal(&mount, &mounts)
            .or_else(|| device_refusal(&mount))
            .or_else(|| users_of(mount.dev).map(|u| format!("{u} there")))
            .map_or(Ok(()), |why| Err(refuse(why)))?;
        let options = trial_mount(&mount).map_err(refuse)?;
        Ok(Remount { mount, options })
    }

    /// Where the file system is mounted.
    pub fn mount_point(&self) -> &str {
        &self.mount.mount_point
    }

    /// The command that mounts it again, as run and as printed when it must be run by hand.
    pub fn mount_command(&self) -> Vec<String> {
        mount_command(&self.mount, &self.options, &self.mount.mount_point)
    }

    /// Unmounts and mounts again, then checks the same file system is back. Every error is
    /// one line; when the file system could not be mounted again it says so loudly, with
    /// the exact command that restores it.
    pub fn run(&self) -> Result<(), String> {
        let mp = &self.mount.mount_point;
        nix::unistd::sync();
        UNMOUNTED.store(true, Ordering::SeqCst);
        if let Err(e) = run(&["umount".to_string(), mp.clone()]) {
            UNMOUNTED.store(false, Ordering::SeqCst);
            return Err(format!(
                "remount: {e}; {mp} is still mounted, nothing was lost"
            ));
        }
        let cmd = self.mount_command();
        // A device may be briefly busy after an unmount: three tries, a second apart.
        let mut mounted = run(&cmd);
        for _ in 0..2 {
            if mounted.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
            mounted = run(&cmd);
        }
        let back = mounted.and_then(|()| self.verify_back());
        UNMOUNTED.store(false, Ordering::SeqCst);
        back.map_err(|e| {
            format!(
                "remount: {e}; {mp} MAY BE LEFT UNMOUNTED: restore it with: {}",
                cmd.join(" ")
            )
        })
    }

    /// Whether the file system on top at the mount point is ours again.
    fn verify_back(&self) -> Result<(), String> {
        let mounts = mountinfo::all().map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let mp = &self.mount.mount_point;
        match mounts.iter().rev().find(|m| &m.mount_point == mp) {
            Some(m)
                if m.dev == self.mount.dev && m.fs_type == self.mount.fs_type && m.root == "/" =>
            {
                Ok(())
            }
            Some(m) => Err(format!(
                "{mp} holds {} {} {}:{}, not the {} {} that was unmounted",
                m.fs_type, m.source, m.dev.0, m.dev.1, self.mount.fs_type, self.mount.source
            )),
            None => Err(format!("{mp} is not mounted")),
        }
    }
}

/// Why mountinfo alone rules a remount out, if it does.
fn refusal(m: &Mount, mounts: &[Mount]) -> Option<String> {
    let (mp, ty) = (&m.mount_point, m.fs_type.as_str());
    let family = ty.split('.').next().unwrap_or(ty);
    if mp == "/" {
        return Some("it is the root file system".into());
    }
    if MEMORY_FILE_SYSTEMS.contains(&ty) {
        return Some(format!(
            "{mp} is {ty}, a memory file system: unmounting it would destroy every file in it"
        ));
    }
    if STACKED_FILE_SYSTEMS.contains(&family) {
        return Some(format!(
            "{mp} is {ty}, made of other mounts or of a daemon that an unmount would end"
        ));
    }
    if !DISK_FILE_SYSTEMS.contains(&ty) {
        return Some(format!(
            "{mp} is {ty}, not a disk file system that can be mounted again from its device"
        ));
    }
    if m.root != "/" {
        return Some(format!(
            "{mp} is a bind mount of {} of its file system, not the file system's own mount",
            m.root
        ));
    }
    if let Some(other) = mounts
        .iter()
        .find(|o| o.dev == m.dev && &o.mount_point != mp)
    {
        return Some(format!(
            "{} is also mounted at {}: unmounting {mp} would neither release it nor empty its cache",
            m.source, other.mount_point
        ));
    }
    let inside = |o: &&Mount| Path::new(&o.mount_point).starts_with(mp) && &o.mount_point != mp;
    if let Some(sub) = mounts.iter().find(inside) {
        return Some(format!("{} is mounted inside {mp}", sub.mount_point));
    }
    if mounts.iter().filter(|o| &o.mount_point == mp).count() > 1 {
        return Some(format!("{mp} has several mounts stacked on it"));
    }
    None
}

/// Why the device rules a remount out: not a block device, or a loop device that the
/// kernel detaches when the file system is unmounted (`mount -o loop`'s autoclear).
fn device_refusal(m: &Mount) -> Option<String> {
    let src = &m.source;
    match fs::metadata(src) {
        Ok(meta) if meta.file_type().is_block_device() => {}
        _ => return Some(format!("its source {src} is not a block device")),
    }
    let name = Path::new(src).file_name()?.to_string_lossy().into_owned();
    let autoclear = PathBuf::from("/sys/block")
        .join(&name)
        .join("loop/autoclear");
    match fs::read_to_string(autoclear) {
        Ok(flag) if flag.trim() == "1" => Some(format!(
            "{src} is a loop device that detaches when unmounted (mounted with -o loop); \
             attach the image with 'losetup -f --show IMAGE' and mount that device instead"
        )),
        _ => None,
    }
}

/// A process that has a file, its working directory, its root or a mapping on device
/// `dev`, described for the user; `None` when there is none.
fn users_of(dev: (u32, u32)) -> Option<String> {
    let on_dev = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| {
            let d = m.dev();
            (
                nix::sys::stat::major(d) as u32,
                nix::sys::stat::minor(d) as u32,
            ) == dev
        })
    };
    let hex = format!("{:02x}:{:02x} ", dev.0, dev.1);
    for proc_dir in fs::read_dir("/proc").ok()?.flatten() {
        let pid = proc_dir.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let base = proc_dir.path();
        let comm = fs::read_to_string(base.join("comm")).unwrap_or_default();
        let who = format!("process {pid} ({})", comm.trim());
        for (link, what) in [("cwd", "working"), ("root", "root")] {
            if on_dev(&base.join(link)) {
                return Some(format!("{who} has its {what} directory"));
            }
        }
        let fds = fs::read_dir(base.join("fd"))
            .into_iter()
            .flatten()
            .flatten();
        if fds.into_iter().any(|fd| on_dev(&fd.path())) {
            return Some(format!("{who} has a file open"));
        }
        let maps = fs::read_to_string(base.join("maps")).unwrap_or_default();
        if maps
            .lines()
            .any(|l| l.split(' ').nth(3).is_some_and(|d| format!("{d} ") == hex))
        {
            return Some(format!("{who} has a file mapped"));
        }
    }
    None
}

fn mount_command(m: &Mount, options: &str, at: &str) -> Vec<String> {
    ["mount", "-t", &m.fs_type, "-o", options, &m.source, at]
        .map(String::from)
        .to_vec()
}

/// Mounts the device a second time, on a directory of our own, with mountinfo's options
/// (then with the per-mount options alone, for a kernel that shows options it no longer
/// takes), and unmounts it again: the file system stays mounted where it is throughout.
/// Returns the options that worked.
fn trial_mount(m: &Mount) -> Result<String, String> {
    let dir = nix::unistd::mkdtemp(&std::env::temp_dir().join("sharebench-remount-check.XXXXXX"))
        .map_err(|e| format!("cannot make a directory for a trial mount: {e}"))?;
    let at = dir.to_string_lossy().into_owned();
    let per_mount = m.options.split(';').next().unwrap_or("").to_string();
    let mut last = String::new();
    let mut worked = None;
    for options in [m.mount_options(), per_mount] {
        match run(&mount_command(m, &options, &at)) {
            Ok(()) => {
                worked = Some(run(&["umount".into(), at.clone()]).map(|()| options));
                break;
            }
            Err(e) => last = e,
        }
    }
    let _ = fs::remove_dir(&dir);
    match worked {
        Some(Ok(options)) => Ok(options),
        Some(Err(e)) => Err(format!("a trial mount at {at} could not be unmounted: {e}")),
        None => Err(format!(
            "mounting {} again with the options it has fails: {last}",
            m.source
        )),
    }
}

/// Runs a command; the error is the command and what it printed, on one line.
fn run(args: &[String]) -> Result<(), String> {
    let out = Command::new(&args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = said.split_whitespace().collect();
    let said = said.join(" ");
    Err(format!(
        "'{}' failed: {}",
        args.join(" "),
        said.trim_end_matches('.')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 22 0:26 / /dev/shm rw - tmpfs tmpfs rw,inode64
40 22 7:0 / /mnt/f rw,relatime - xfs /dev/loop0 rw,inode64,noquota
41 22 7:1 / /mnt/e rw - ext4 /dev/loop1 rw
42 22 7:1 /sub /mnt/bind rw - ext4 /dev/loop1 rw
43 22 7:2 / /mnt/o rw - ext4 /dev/loop2 rw
44 43 0:60 / /mnt/o/inner rw - tmpfs tmpfs rw
45 22 0:61 / /mnt/ov rw - overlay overlay rw,lowerdir=/a
46 22 0:62 / /mnt/g rw - fuse.glusterfs gv0 rw
47 22 0:63 / /proc rw - proc proc rw
";

    fn why(mp: &str) -> Option<String> {
        let mounts = mountinfo::parse(SAMPLE);
        let m = mounts.iter().find(|m| m.mount_point == mp).unwrap();
        refusal(m, &mounts)
    }

    #[test]
    fn a_lone_disk_file_system_may_be_remounted() {
        assert_eq!(why("/mnt/f"), None);
    }

    #[test]
    fn memory_stacked_and_pseudo_file_systems_are_refused() {
        assert!(why("/dev/shm").unwrap().contains("destroy every file"));
        assert!(why("/mnt/ov")
            .unwrap()
            .contains("overlay, made of other mounts"));
        assert!(why("/mnt/g").unwrap().contains("daemon"));
        assert!(why("/proc").unwrap().contains("not a disk file system"));
        assert!(why("/").unwrap().contains("root file system"));
    }

    #[test]
    fn mounts_that_are_not_the_file_systems_own_are_refused() {
        assert!(why("/mnt/bind").unwrap().contains("bind mount of /sub"));
        assert!(why("/mnt/e").unwrap().contains("also mounted at /mnt/bind"));
        assert!(why("/mnt/o")
            .unwrap()
            .contains("/mnt/o/inner is mounted inside"));
    }

    #[test]
    fn the_mount_command_repeats_source_type_and_options() {
        let m = &mountinfo::parse(SAMPLE)[2];
        assert_eq!(
            mount_command(m, &m.mount_options(), "/mnt/f").join(" "),
            "mount -t xfs -o rw,relatime,inode64,noquota /dev/loop0 /mnt/f"
        );
    }

    #[test]
    fn a_process_with_its_directory_on_a_device_is_found() {
        // This test's own working directory is on some device; it must be named.
        let d = fs::metadata(".").unwrap().dev();
        let dev = (
            nix::sys::stat::major(d) as u32,
            nix::sys::stat::minor(d) as u32,
        );
        assert!(users_of(dev).is_some());
        assert_eq!(users_of((4095, 4095)), None);
    }
}
