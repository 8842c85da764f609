//! The SMB shares as a FUSE file system (smbnetfs), so that path-based tools (rsync, cp,
//! fio's posix engines) run against them too. smbnetfs runs in a client namespace (its SMB
//! traffic crosses the lab network) yet its mount is visible on the host, like the Gluster
//! FUSE mounts. Its configuration directory lives in the lab directory: an smb.conf that
//! forces SMB 3 with signing required, and the lab user's credentials in a 0600 file,
//! never on a command line. Not: the SMB servers (see `samba`).

use crate::net::netns_of;
use crate::proc;
use crate::state::{LabState, Resource};
use crate::topology::Host;
use anyhow::{bail, Context, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The share of the first replica that `lab:smb-fuse` reaches through the mount.
pub const SHARE: &str = "smb-sharing";

/// The name of the smbnetfs process run in `client`'s namespace, as the lab state records
/// it (`lab down` stops it by that record; `lab:smb-fuse` lists it as its client).
pub fn process_name(client: &Host) -> String {
    format!("smbnetfs@{}", client.name)
}

/// Where the shares appear on the host: `MOUNT/ADDRESS/SHARE/`.
pub fn mount_point() -> PathBuf {
    LabState::dir().join("mnt").join("smbnetfs")
}

/// The directory of `share` on `server` inside the mount.
pub fn share_path(server: &Host, share: &str) -> PathBuf {
    mount_point().join(server.address.to_string()).join(share)
}

/// smbnetfs's HOME: it and libsmbclient read their configuration from `HOME/.smb/`.
fn home(state: &LabState) -> PathBuf {
    state.file("smbnetfs")
}

/// Writes `text` to a new file that is 0600 from its first byte.
fn write_private(path: &Path, text: &str) -> Result<()> {
    let (dir, name) = sharebench_core::safe_dir::parent_and_name(path)?;
    dir.replace(&name, text.as_bytes(), 0o600)
        .with_context(|| format!("cannot create {}", path.display()))
}

/// smbnetfs.conf: no browsing of a network neighbourhood (the lab has no NetBIOS), the
/// child process of a share kept for the lab's life (it carries the share's I/O, and its
/// PID is a client PID of the target), no names hidden by the "stat workaround" (it hides
/// `.git`, `HEAD`, `.directory` and `Desktop.ini` near the top of a share by default),
/// and the credentials from a file of their own.
fn smbnetfs_conf() -> String {
    "# Written by 'sharebench lab up'.
smb_query_browsers \"false\"
listen_timeout 86400
config_update_period 0
stat_workaround_enable_default_entries \"false\"
stat_workaround_depth 0
use_libsecret \"false\"
include \"smbnetfs.auth\"
"
    .to_string()
}

/// libsmbclient's smb.conf for smbnetfs: SMB 3 only, signing required.
fn smb_conf() -> String {
    "# Written by 'sharebench lab up': libsmbclient's configuration for smbnetfs.
[global]
  client min protocol = SMB3_00
  client max protocol = SMB3_11
  client signing = required
"
    .to_string()
}

/// Mounts smbnetfs at `mount_point()`, run in `client`'s namespace, logged in as the lab
/// user, and checks it: a file written through the mount must appear in `replica`'s share
/// directory. Returns the mount point.
pub fn mount(
    state: &mut LabState,
    client: &Host,
    replica: &Host,
    user: &str,
    password: &str,
) -> Result<PathBuf> {
    let home = home(state);
    let conf_dir = home.join(".smb");
    std::fs::create_dir_all(&conf_dir)?;
    // smbnetfs refuses (and silently falls back to guest) when its configuration is
    // readable by others.
    std::fs::set_permissions(&conf_dir, std::fs::Permissions::from_mode(0o700))?;
    write_private(&conf_dir.join("smbnetfs.conf"), &smbnetfs_conf())?;
    write_private(&conf_dir.join("smb.conf"), &smb_conf())?;
    write_private(
        &conf_dir.join("smbnetfs.auth"),
        &format!("auth \"{user}\" \"{password}\"\n"),
    )?;
    let mnt = mount_point();
    std::fs::create_dir_all(&mnt)?;
    state.intend(Resource::Mount { path: mnt.clone() })?;
    let log = home.join("smbnetfs.log");
    let args = [
        format!("HOME={}", home.display()),
        "smbnetfs".into(),
        "-f".into(),
        "-o".into(),
        // Without big writes the kernel sends 4 KiB writes (LAB-NOTES: about 14 MB/s).
        format!(
            "big_writes,max_write=131072,max_read=131072,log_file={}",
            log.display()
        ),
        mnt.display().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = home.join("smbnetfs.out");
    proc::spawn(
        state,
        &process_name(client),
        &netns_of(&client.name),
        ("env", &args),
        None,
        &out,
    )?;
    let start = Instant::now();
    while !crate::storage::is_mounted(&mnt) {
        if start.elapsed() > Duration::from_secs(20) {
            bail!(
                "the smbnetfs mount did not appear; see {} and {}",
                out.display(),
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check(state, replica).with_context(|| {
        format!(
            "the smbnetfs mount does not work; see {} and {}",
            out.display(),
            log.display()
        )
    })?;
    Ok(mnt)
}

/// A file written through the mount is visible, with the same bytes, in the server's
/// share directory, and removing it through the mount removes it there.
fn check(state: &LabState, replica: &Host) -> Result<()> {
    let name = format!(".sharebench-lab-probe-{}", std::process::id());
    let through = share_path(replica, SHARE).join(&name);
    let on_server = state.file(format!("srv/{}/{SHARE}/{name}", replica.name));
    let text = format!("written through smbnetfs by sharebench lab up ({name})\n");
    // The first access connects and logs in; give it a few tries.
    let start = Instant::now();
    loop {
        match std::fs::write(&through, &text) {
            Ok(()) => break,
            Err(e) if start.elapsed() > Duration::from_secs(20) => {
                return Err(e).with_context(|| format!("cannot write {}", through.display()))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(300)),
        }
    }
    let seen = std::fs::read_to_string(&on_server)
        .with_context(|| format!("{} did not reach the server", through.display()))?;
    if seen != text {
        bail!("{} holds other bytes on the server", on_server.display());
    }
    // smbnetfs closes its SMB handle after the file's release reaches it, so an unlink
    // right behind the write can meet the still-open file (EBUSY) on a slow link.
    let start = Instant::now();
    loop {
        match std::fs::remove_file(&through) {
            Ok(()) => break,
            Err(e)
                if e.kind() == std::io::ErrorKind::ResourceBusy
                    && start.elapsed() < Duration::from_secs(10) =>
            {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot remove {}", through.display()))
            }
        }
    }
    if on_server.exists() {
        bail!(
            "{} was removed through the mount but stays on the server",
            name
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_forces_smb3_with_signing_and_hides_no_names() {
        let c = smb_conf();
        assert!(c.contains("client min protocol = SMB3_00"));
        assert!(c.contains("client max protocol = SMB3_11"));
        assert!(c.contains("client signing = required"));
        let s = smbnetfs_conf();
        assert!(s.contains("include \"smbnetfs.auth\""));
        assert!(s.contains("stat_workaround_enable_default_entries \"false\""));
        assert!(s.contains("smb_query_browsers \"false\""));
    }

    #[test]
    fn private_files_are_0600_from_the_start() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("auth");
        write_private(&p, "x").unwrap();
        write_private(&p, "y").unwrap();
        let m = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(m & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "y");
    }
}
