//! Samba servers: on each replica the shares `smb-sharing` and `nfs-sharing` (SMB 3.1.1
//! only, signing mandatory, no guest), and on the namespace server an MS-DFS root `dfs`
//! whose links point at the replicas' shares, like the seed's `\\ukb.ed\dfs`.
//! One user per lab; its password is generated and kept in a 0600 file, never printed.

use crate::service::{start_server, Server};
use crate::state::LabState;
use crate::topology::Host;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const PORT: u16 = 445;
/// The user clients log in as; Samba maps it to the Unix account `nobody`, so the lab
/// creates no Unix user.
pub const USER: &str = "sharebench";
const UNIX_USER: &str = "nobody";

/// A random password of 24 letters and digits, from /dev/urandom.
pub fn new_password() -> Result<String> {
    use std::io::Read;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect())
}

/// Writes the password file (just the password) and an smbclient `-A` file, both 0600.
pub fn write_credentials(state: &LabState, password: &str) -> Result<()> {
    // 0600 from the first byte, and never written through a symlink.
    let write_private = |path: &Path, text: String| -> Result<()> {
        let (dir, name) = sharebench_core::safe_dir::parent_and_name(path)?;
        dir.replace(&name, text.as_bytes(), 0o600)?;
        Ok(())
    };
    write_private(&state.credentials_file, format!("{password}\n"))?;
    write_private(
        &state.file("smbclient.auth"),
        format!("username = {USER}\npassword = {password}\n"),
    )
}

fn conf(dir: &Path, host: &Host, prefix_len: u8, shares: &str) -> String {
    let d = dir.display();
    format!(
        "[global]
  server role = standalone server
  interfaces = {addr}/{prefix_len}
  bind interfaces only = yes
  disable netbios = yes
  smb ports = {PORT}
  server min protocol = SMB3_11
  server signing = mandatory
  map to guest = Never
  restrict anonymous = 2
  username map = {d}/users.map
  host msdfs = yes
  lock directory = {d}/lock
  state directory = {d}/state
  cache directory = {d}/cache
  private dir = {d}/private
  pid directory = {d}/pid
  ncalrpc dir = {d}/ncalrpc
  log file = {d}/log.smbd
  passdb backend = tdbsam:{d}/private/passdb.tdb
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
{shares}",
        addr = host.address
    )
}

/// A share of `path`. Samba follows no symlink in it (`follow symlinks = no`): every SMB
/// user is squashed to one Unix user here, so another user's link in the tool's working
/// directory would otherwise be followed by smbd for both SMB clients.
fn share(name: &str, path: &Path, extra: &str) -> String {
    format!("[{name}]\n  path = {}\n  read only = no\n  guest ok = no\n  valid users = {UNIX_USER}\n  follow symlinks = no\n{extra}", path.display())
}

/// The name of share `base` (`smb-sharing`, `nfs-sharing`) on backing number `index`:
/// `base` itself on the primary, `base.INDEX` on the others.
pub fn share_name(base: &str, index: usize) -> String {
    match index {
        0 => base.to_string(),
        i => format!("{base}.{i}"),
    }
}

/// Starts the replica Samba of `host`, serving the two shares from each backing's image
/// (`data[i]` is backing `i`'s mount point).
pub fn start_replica(
    state: &mut LabState,
    host: &Host,
    data: &[PathBuf],
    password: &str,
) -> Result<()> {
    let mut shares = String::new();
    for (i, (dir, backing)) in data.iter().zip(state.backings.clone()).enumerate() {
        for base in ["smb-sharing", "nfs-sharing"] {
            let p = dir.join(base);
            std::fs::create_dir_all(&p)?;
            // Both protocols create files as `nobody` (Samba's user map, Ganesha's squash).
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777))?;
            // strict allocate: a write past the end first fills the gap (fallocate, else
            // zeros), the server-side answer to Windows' pre-allocation writes (seed 002).
            // Samba does that on its synchronous write path only, so asynchronous writes
            // are turned off with it.
            let extra = if backing.strict_allocate {
                "  strict allocate = yes\n  aio write size = 0\n"
            } else {
                ""
            };
            shares.push_str(&share(&share_name(base, i), &p, extra));
        }
    }
    start(state, host, &shares, password)
}

/// Starts the namespace server: the DFS root `dfs` with one link per share, each pointing
/// at that share on every replica.
pub fn start_dfs_root(
    state: &mut LabState,
    host: &Host,
    replicas: &[Host],
    password: &str,
) -> Result<()> {
    let root = state.file(format!("samba/{}/dfs-root", host.name));
    std::fs::create_dir_all(&root)?;
    for name in ["smb-sharing", "nfs-sharing"] {
        let mut target = String::from("msdfs:");
        for (i, r) in replicas.iter().enumerate() {
            if i > 0 {
                target.push(',');
            }
            let _ = write!(target, "{}\\{name}", r.address);
        }
        let link = root.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)?;
    }
    let shares = share("dfs", &root, "  msdfs root = yes\n");
    start(state, host, &shares, password)
}

fn start(state: &mut LabState, host: &Host, shares: &str, password: &str) -> Result<()> {
    let dir = state.file(format!("samba/{}", host.name));
    for sub in ["lock", "state", "cache", "private", "pid", "ncalrpc"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(dir.join("users.map"), format!("{UNIX_USER} = {USER}\n"))?;
    let conf_path: PathBuf = dir.join("smb.conf");
    std::fs::write(
        &conf_path,
        conf(&dir, host, state.topology.prefix_len, shares),
    )?;
    let conf_s = conf_path.to_string_lossy().into_owned();
    // smbpasswd reads the password twice from stdin; it never appears on a command line.
    add_user(&conf_s, password).with_context(|| format!("adding the SMB user on {}", host.name))?;
    let out = dir.join("smbd.out");
    let args = [
        "--foreground",
        "--no-process-group",
        "--debug-stdout",
        "-d",
        "1",
        "-s",
        &conf_s,
    ];
    let server = Server {
        name: "samba",
        cmd: "smbd",
        args: args.iter().map(|s| s.to_string()).collect(),
        out: out.clone(),
        log: out,
        port: PORT,
        timeout: Duration::from_secs(30),
    };
    start_server(state, host, server).map(|_| ())
}

fn add_user(conf: &str, password: &str) -> Result<()> {
    use std::io::Write;
    let mut child = std::process::Command::new("smbpasswd")
        .args(["-c", conf, "-s", "-a", UNIX_USER])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .context("cannot run smbpasswd (is samba installed?)")?;
    child
        .stdin
        .take()
        .context("smbpasswd stdin")?
        .write_all(format!("{password}\n{password}\n").as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        anyhow::bail!("smbpasswd: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}
