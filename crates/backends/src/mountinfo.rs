//! Which mount holds a path, from /proc/self/mountinfo: file system type, mount point and
//! options, for the manifest, to tell a kernel mount from a FUSE one, and for the safety
//! checks of a remount.

use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The device number (major, minor) of the mounted file system: what `st_dev` of every
    /// file in it says.
    pub dev: (u32, u32),
    /// The directory of the file system that is mounted here: `/` for a whole file system,
    /// another path for a bind mount of part of it.
    pub root: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount options, then the super block's options.
    pub options: String,
}

impl Mount {
    /// Options to mount it again: the per-mount options, then the super block's, without
    /// repeats (`rw`/`ro` appear in both).
    pub fn mount_options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for o in self.options.split([';', ',']).filter(|o| !o.is_empty()) {
            if !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.join(",")
    }
}

/// Undoes mountinfo's octal escapes (`\040` is a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push(u8::from_str_radix(&s[i + 1..i + 4], 8).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text into mounts, in file order.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (pre, post) = line.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            let (major, minor) = pre.get(2)?.split_once(':')?;
            Some(Mount {
                dev: (major.parse().ok()?, minor.parse().ok()?),
                root: unescape(pre.get(3)?),
                mount_point: unescape(pre.get(4)?),
                fs_type: post.first()?.to_string(),
                source: unescape(post.get(1).unwrap_or(&"")),
                options: format!("{};{}", pre.get(5)?, post.get(2).unwrap_or(&"")),
            })
        })
        .collect()
}

/// The mount holding `path` (which should be canonical): the longest mount point that is a
/// path prefix of it, the last one listed when mounts are stacked.
pub fn mount_of(mounts: &[Mount], path: &Path) -> Option<Mount> {
    mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| (m.mount_point.len(), 0))
        .and_then(|best| {
            mounts
                .iter()
                .rev()
                .find(|m| m.mount_point == best.mount_point)
        })
        .cloned()
}

/// Every mount this process sees, in file order.
pub fn all() -> std::io::Result<Vec<Mount>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/mountinfo")?))
}

/// The mount holding `path` on this machine.
pub fn lookup(path: &Path) -> Option<Mount> {
    mount_of(&all().ok()?, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
30 22 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64
40 22 7:0 / /mnt/my\\040disk rw,noatime - xfs /dev/loop0 rw,attr2
41 22 0:50 / /mnt/g rw - fuse.glusterfs gv0 rw,user_id=0
42 22 0:51 / /mnt/g rw - tmpfs tmpfs rw
";

    #[test]
    fn finds_the_longest_prefix_and_the_top_of_a_stack() {
        let m = parse(SAMPLE);
        assert_eq!(
            mount_of(&m, Path::new("/dev/shm/x")).unwrap().fs_type,
            "tmpfs"
        );
        assert_eq!(mount_of(&m, Path::new("/home")).unwrap().fs_type, "ext4");
        let disk = mount_of(&m, Path::new("/mnt/my disk/a")).unwrap();
        assert_eq!(disk.fs_type, "xfs");
        assert!(disk.options.contains("noatime"));
        assert_eq!(disk.mount_options(), "rw,noatime,attr2");
        assert_eq!((disk.dev, disk.root.as_str()), ((7, 0), "/"));
        // /mnt/g was mounted twice: the later mount hides the earlier.
        assert_eq!(mount_of(&m, Path::new("/mnt/g")).unwrap().fs_type, "tmpfs");
        // A sibling with a common string prefix is not a path prefix.
        assert_eq!(
            mount_of(&m, Path::new("/dev/shmx")).unwrap().fs_type,
            "ext4"
        );
    }
}
