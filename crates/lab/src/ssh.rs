//! The lab's client hosts as MPI hosts: one sshd per client namespace, on its lab address
//! only, with a host key and a client key generated per lab (in the lab directory, mode
//! 0600), so `mpirun` started in the first client's namespace reaches the others the way
//! it reaches real machines. Not: MPI itself (`sharebench lab mpirun` runs it).

use crate::net::netns_of;
use crate::service::{start_server, Server};
use crate::sh::run;
use crate::state::LabState;
use crate::topology::Host;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Where the lab's ssh keys and configuration live.
pub fn dir(state: &LabState) -> PathBuf {
    state.file("ssh")
}

/// The private key `mpirun` logs in with.
pub fn client_key(state: &LabState) -> PathBuf {
    dir(state).join("id_ed25519")
}

/// Whether sshd is installed (the lab then offers its clients as MPI hosts).
pub fn available() -> bool {
    std::path::Path::new("/usr/sbin/sshd").exists()
}

/// Generates the lab's keys (once) and starts an sshd on every client.
pub fn start_all(state: &mut LabState) -> Result<()> {
    let d = dir(state);
    std::fs::create_dir_all(&d)?;
    let host_key = d.join("host_ed25519");
    let key = client_key(state);
    for k in [&host_key, &key] {
        if !k.exists() {
            run(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-C",
                    "sharebench-lab",
                    "-f",
                    &k.to_string_lossy(),
                ],
            )
            .context("generating the lab's ssh keys")?;
        }
    }
    let public = std::fs::read_to_string(key.with_extension("pub"))?;
    let authorized = d.join("authorized_keys");
    std::fs::write(&authorized, public)?;
    std::fs::create_dir_all("/run/sshd")?;
    let clients: Vec<Host> = state.topology.clients().cloned().collect();
    for h in &clients {
        let conf = d.join(format!("sshd-{}.conf", h.name));
        std::fs::write(
            &conf,
            format!(
                "ListenAddress {addr}\nPort 22\nHostKey {hk}\nAuthorizedKeysFile {ak}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\nAllowUsers root\n",
                addr = h.address,
                hk = host_key.display(),
                ak = authorized.display(),
            ),
        )?;
        let log = d.join(format!("sshd-{}.log", h.name));
        start_server(
            state,
            h,
            Server {
                name: "sshd",
                cmd: "/usr/sbin/sshd",
                args: vec![
                    "-D".into(),
                    "-e".into(),
                    "-f".into(),
                    conf.display().to_string(),
                ],
                out: log.clone(),
                log,
                port: 22,
                timeout: Duration::from_secs(20),
            },
        )?;
    }
    Ok(())
}

/// ssh as mpirun uses it: the lab's key, no prompts, no host-key memory, 5 s to connect.
fn ssh_command(state: &LabState) -> Vec<String> {
    let key = client_key(state).display().to_string();
    [
        "ssh",
        "-i",
        &key,
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=5",
        "-o",
        "LogLevel=ERROR",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// Checks that the first `np` client hosts answer ssh from the first client, as mpirun
/// will reach them, so a missing host ends `lab mpirun` in seconds with one line naming it
/// rather than with mpirun's own report.
pub fn check_hosts(state: &LabState, np: u32) -> Result<()> {
    let clients: Vec<&Host> = state.topology.clients().collect();
    let Some(first) = clients.first() else {
        anyhow::bail!("the lab has no client hosts");
    };
    let netns = format!("--net=/run/netns/{}", netns_of(&first.name));
    for h in clients.iter().take(np as usize) {
        let mut argv = vec!["nsenter".to_string(), netns.clone(), "--".into()];
        argv.extend(ssh_command(state));
        argv.extend([format!("root@{}", h.address), "true".into()]);
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", argv[0]))?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("no reason given");
            anyhow::bail!(
                "client host {} ({}) cannot be reached over ssh: {}",
                h.name,
                h.address,
                why.trim()
            );
        }
    }
    Ok(())
}

/// The `mpirun` command line that runs `program args` on `np` of the lab's clients, as
/// argv; run it inside the first client's namespace.
pub fn mpirun_argv(
    state: &LabState,
    np: u32,
    program: &str,
    args: &[String],
) -> Result<Vec<String>> {
    let clients: Vec<&Host> = state.topology.clients().collect();
    let hostfile = dir(state).join("hostfile");
    // Only the hosts the ranks use: mpirun starts a daemon on every host of the file.
    let text: String = clients
        .iter()
        .take(np as usize)
        .map(|h| format!("{} slots=1\n", h.address))
        .collect();
    std::fs::write(&hostfile, text)?;
    let agent = ssh_command(state).join(" ");
    let mut argv: Vec<String> = vec![
        "nsenter".into(),
        format!("--net=/run/netns/{}", netns_of(&clients[0].name)),
        "--".into(),
        "mpirun".into(),
        "--allow-run-as-root".into(),
        "--hostfile".into(),
        hostfile.display().to_string(),
        "-np".into(),
        np.to_string(),
        "--mca".into(),
        "plm_rsh_agent".into(),
        agent,
        "--mca".into(),
        "btl".into(),
        "tcp,self".into(),
        "--mca".into(),
        "btl_tcp_if_include".into(),
        "eth0".into(),
        "--mca".into(),
        "oob_tcp_if_include".into(),
        "eth0".into(),
        // No topology in shared memory at an address each daemon guesses free (OpenMPI
        // 4.1's rtc/hwloc): an orted once segfaulted writing it there. Each rank reads
        // the topology itself instead.
        "--mca".into(),
        "rtc_hwloc_vmhole".into(),
        "none".into(),
        program.into(),
    ];
    argv.extend(args.iter().cloned());
    Ok(argv)
}
