//! NFS-Ganesha (VFS FSAL) exporting a replica's `nfs-sharing` directory over NFSv3 and
//! NFSv4.0/4.1/4.2, to the lab subnet only. Every NFS user is squashed to `nobody`, the
//! account Samba maps its user to, so both protocols see the same data with one owner. It runs with its own rpcbind in a private mount
//! namespace (a tmpfs on /run), so it never touches an rpcbind of the host.

use crate::service::{start_server, Server};
use crate::state::LabState;
use crate::topology::Host;
use anyhow::Result;
use std::net::Ipv4Addr;
use std::path::PathBuf;

pub const PORT: u16 = 2049;
/// The NFSv4 pseudo path of the export.
pub const PSEUDO: &str = "/nfs-sharing";

/// The lab subnet in CIDR notation, as the servers' access rules name it.
pub fn subnet(addr: Ipv4Addr, prefix_len: u8) -> String {
    let mask = u32::MAX
        .checked_shl(32 - u32::from(prefix_len))
        .unwrap_or(0);
    format!("{}/{prefix_len}", Ipv4Addr::from(u32::from(addr) & mask))
}

/// The NFSv4 pseudo path of the Gluster replica volume's export (NFSv3 mounts its
/// path, `/`, the volume's root).
pub const GLUSTER_PSEUDO: &str = "/gluster-replica";

/// The NFSv4 pseudo path of backing number `index`'s export (`PSEUDO` on the primary).
pub fn pseudo(index: usize) -> String {
    match index {
        0 => PSEUDO.to_string(),
        i => format!("{PSEUDO}.{i}"),
    }
}

/// Starts Ganesha on `host`, exporting `nfs-sharing` of every backing (`data[i]` is
/// backing `i`'s mount point), and, when `gluster_volume` is given, that Gluster volume
/// through the Gluster FSAL (the seed's "GlusterFS+NFS"). With `skip_fsync` (a backing
/// that is `+async`) its sync calls are no-ops (`nosync`), so it answers WRITE and COMMIT
/// before anything is stable, as an `async` export does.
pub fn start(
    state: &mut LabState,
    host: &Host,
    data: &[PathBuf],
    gluster_volume: Option<&str>,
    skip_fsync: bool,
) -> Result<()> {
    let dir = state.file("ganesha");
    std::fs::create_dir_all(dir.join("recovery"))?;
    let subnet = subnet(host.address, state.topology.prefix_len);
    let mut exports = String::new();
    for (i, d) in data.iter().enumerate() {
        let path = d.join("nfs-sharing");
        std::fs::create_dir_all(&path)?;
        // Export 2 is the Gluster volume's; the backings are 1, 11, 12, ...
        let id = if i == 0 { 1 } else { 10 + i };
        exports.push_str(&format!(
            "EXPORT {{
  Export_Id = {id}; Path = {path}; Pseudo = {pseudo};
  Access_Type = None; Squash = All_Squash; Anonymous_Uid = 65534; Anonymous_Gid = 65534; SecType = sys; Protocols = 3, 4; Transports = TCP;
  CLIENT {{ Clients = {subnet}; Access_Type = RW; }}
  FSAL {{ Name = VFS; }}
}}
",
            path = path.display(),
            pseudo = pseudo(i),
        ));
    }
    let conf = dir.join("ganesha.conf");
    let log = dir.join("ganesha.log");
    // RPC_Idle_Timeout_S = 3600 (its most): by default Ganesha closes a connection idle
    // for 300 s, and a target whose connection sat idle while another target's slow
    // measurements ran (a sync export on a slow disk) lost it; libnfs is not let to
    // reconnect (see ffi::libnfs).
    // pnfs_mds = false: Ganesha 4.3 otherwise announces itself as a pNFS metadata server
    // (EXCHGID4_FLAG_USE_PNFS_MDS) although the VFS and Gluster exports hand out no
    // layouts, and an NFSv4.1 client that believes it (nfs-rs 0.11.1) sends a LAYOUTGET,
    // refused with NFS4ERR_LAYOUTUNAVAILABLE, before every READ and WRITE.
    std::fs::write(
        &conf,
        format!(
            "NFS_CORE_PARAM {{ Protocols = 3, 4; Bind_addr = {addr}; Enable_NLM = false; Enable_RQUOTA = false; RPC_Idle_Timeout_S = 3600; }}
NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {recovery}; Minor_Versions = 0, 1, 2; pnfs_mds = false; }}
NFS_KRB5 {{ Active_krb5 = false; }}
{exports}{gluster}",
            addr = host.address,
            recovery = dir.join("recovery").display(),
            gluster = gluster_volume.map(|v| gluster_export(host, v, &subnet)).unwrap_or_default(),
        ),
    )?;
    let script = dir.join("start.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh
# Run by the lab in the server's network namespace and a private mount namespace.
set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/ganesha /run/rpcbind
rpcbind -f -w &
sleep 0.5
exec {preload}ganesha.nfsd -F -f {conf} -L {log} -p /run/ganesha/ganesha.pid -N NIV_EVENT
",
            conf = conf.display(),
            log = log.display(),
            preload = if skip_fsync {
                no_sync_prefix()?
            } else {
                String::new()
            },
        ),
    )?;
    let out = dir.join("ganesha.out");
    let server = Server::script_in_private_mounts("ganesha", &script, out, log, PORT);
    start_server(state, host, server).map(|_| ())
}

/// The command line prefix that runs a server with every sync call a no-op (`nosync`):
/// this program's hidden `lab exec-without-sync`.
fn no_sync_prefix() -> Result<String> {
    let me = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find this program for +async: {e}"))?;
    Ok(format!("{} lab exec-without-sync -- ", me.display()))
}

/// An export of Gluster volume `volume` (served by glusterd on `host`) through gfapi.
fn gluster_export(host: &Host, volume: &str, subnet: &str) -> String {
    format!(
        "EXPORT {{
  Export_Id = 2; Path = \"/\"; Pseudo = {GLUSTER_PSEUDO};
  Access_Type = None; Squash = All_Squash; Anonymous_Uid = 65534; Anonymous_Gid = 65534; SecType = sys; Protocols = 3, 4; Transports = TCP;
  CLIENT {{ Clients = {subnet}; Access_Type = RW; }}
  FSAL {{ Name = GLUSTER; Hostname = \"{addr}\"; Volume = \"{volume}\"; }}
}}
",
        addr = host.address
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn subnet_of_an_address() {
        assert_eq!(
            super::subnet("10.10.0.3".parse().unwrap(), 24),
            "10.10.0.0/24"
        );
        assert_eq!(
            super::subnet("10.10.3.3".parse().unwrap(), 16),
            "10.10.0.0/16"
        );
    }
}
