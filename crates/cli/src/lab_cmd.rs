//! `sharebench lab up|status|down`: the lab of real servers in network namespaces.

use crate::error::{CliError, CliResult};
use clap::{Args, Subcommand};
use sharebench_core::size::BareUnit;
use sharebench_lab::{self as lab, UpOptions};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Start the lab: namespaces, backing images, Samba (with an MS-DFS root), NFS-Ganesha,
    /// GlusterFS, and FUSE mounts of Gluster and (smbnetfs) of SMB
    Up {
        /// Topology file (TOML, see docs/methods/lab.md); default: the seed's Table I
        #[arg(long, value_name = "FILE")]
        topology: Option<PathBuf>,
        /// File system of the servers' backing images (xfs, ext4, ext3, btrfs). A list
        /// holds several configurations side by side, each with its own image, shares
        /// and exports, and targets named after it: `--fs xfs,ext4` gives lab:nfs3@xfs
        /// and lab:nfs3@ext4 (lab:nfs3 is the first). An item may add +write-order
        /// and +strict-allocate, e.g. `ext3+write-order,ext3`, and +sync (every write
        /// and namespace change stable before the reply, as a Linux sync export) or
        /// +async (the NFS server answers before anything is stable, as an async
        /// export), e.g. `xfs+async,xfs+sync` (docs/methods/lab.md, "Durability")
        #[arg(long, default_value = "xfs", value_name = "FS[,FS...]")]
        fs: String,
        /// Bandwidth of every host's link, clients' and servers', both directions (tbf;
        /// delay cannot be emulated on this kernel)
        #[arg(long, default_value = "unlimited", value_parser = ["10mbit", "100mbit", "1gbit", "10gbit", "unlimited"])]
        link: String,
        /// TCP congestion control in every lab namespace. This machine's own is BBR,
        /// whose pacing stalls SMB for milliseconds at the lab's microsecond round trips
        /// (docs/methods/lab.md, "TCP congestion control"); a namespace may choose only what the
        /// kernel has loaded
        #[arg(long, default_value = "reno", value_parser = ["reno", "bbr"])]
        congestion: String,
        /// Size of each server's (sparse) backing image
        #[arg(long, default_value = "2G")]
        image_size: String,
        /// ext3/ext4 only: allocate blocks in the order they are written, as the 2007 ext3
        /// driver did (today's kernel serves ext3 with ext4's allocator; docs/methods/workloads.md)
        #[arg(long)]
        write_order: bool,
        /// Samba reserves a file's blocks as it grows (`strict allocate = yes`)
        #[arg(long)]
        strict_allocate: bool,
        /// Do not mount the SMB shares with smbnetfs (no target lab:smb-fuse)
        #[arg(long)]
        no_smb_fuse: bool,
        /// Do not start GlusterFS (no lab:gluster targets): most of lab up's time is
        /// Gluster's; a study starts it only when a step measures a Gluster target
        #[arg(long)]
        no_gluster: bool,
        /// Pin every server process to these CPUs (e.g. 1, or 2-3), and the client with
        /// `run --cpus` to others, so they do not take turns on one core
        /// (docs/methods/statistics.md says what it changed on this machine)
        #[arg(long, value_name = "LIST")]
        server_cpus: Option<String>,
        /// The latency of the disk under every backing image: host (this machine's
        /// disk as it is), hdd (a 7200 rpm disk, 13 ms a request) or ebs-magnetic (the
        /// seeds' EC2 volumes, 10 ms a request), through nbdkit's delay filter
        /// (docs/methods/lab.md, "Disk profiles")
        #[arg(long, default_value = "host", value_parser = ["host", "hdd", "ebs-magnetic"])]
        disk: String,
    },
    /// Show hosts, servers, targets and link shaping
    Status {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Stop every server and remove every namespace, mount, loop device and file the lab made
    Down,
    /// Simulate a server crash: SIGKILL every process of HOST (the lab stays up)
    Crash {
        /// A server host of the topology, e.g. replica2
        host: String,
    },
    /// Start the servers of HOST again after a crash
    Restart { host: String },
    /// Run sharebench on NP of the lab's client hosts at once, under mpirun over ssh
    /// (multi-client: every client a rank, rank 0 on the first client writes the records)
    #[command(
        after_help = "Example:\n  sharebench lab mpirun --np 3 run lab:smb -i write,read --file-sizes 64m --record-sizes 1m"
    )]
    Mpirun {
        /// How many client hosts (ranks), at most the topology's clients
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        np: u32,
        /// sharebench's arguments, e.g. run lab:smb -i write --file-sizes 64m
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run a command with every sync call a no-op (how a +async backing's NFS server runs)
    #[command(hide = true)]
    ExecWithoutSync {
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Gluster self-heal state of the replicated volume (entries still to heal per brick)
    Heal {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
}

fn fail(e: anyhow::Error) -> CliError {
    CliError::failed(format!("{e:#}"))
}

pub fn main(args: LabArgs) -> CliResult<()> {
    let mut out = crate::stdout::stdout();
    match args.command {
        LabCommand::Up {
            topology,
            fs,
            link,
            congestion,
            image_size,
            write_order,
            strict_allocate,
            no_smb_fuse,
            no_gluster,
            server_cpus,
            disk,
        } => {
            // Bad input is refused before anything is built (exit 2).
            let usage = |e: anyhow::Error| CliError::usage(format!("{e:#}"));
            let backings = lab::backing::Backing::parse_list(&fs, write_order, strict_allocate)
                .map_err(usage)?;
            if let Some(cpus) = &server_cpus {
                let list = crate::placement::parse_cpus(cpus)
                    .map_err(|e| CliError::usage(format!("--server-cpus: {e}")))?;
                crate::placement::allowed_set("--server-cpus", &list.0).map_err(CliError::usage)?;
            }
            let image_size = sharebench_core::size::parse_size(&image_size, BareUnit::Bytes)
                .map_err(|e| CliError::usage(format!("--image-size: {e}")))?;
            let state = lab::up(&UpOptions {
                topology,
                backings,
                link: link.parse().map_err(usage)?,
                congestion: congestion.parse().map_err(usage)?,
                image_size,
                smb_fuse: !no_smb_fuse,
                gluster: !no_gluster,
                server_cpus,
                disk: lab::disk::DiskProfile::named(&disk).map_err(usage)?,
            })
            .map_err(fail)?;
            let _ = writeln!(
                out,
                "lab up: {} hosts, {} servers running",
                state.topology.hosts.len(),
                state.services.len()
            );
            let targets = lab::targets(&state);
            let width = targets.iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in targets {
                let _ = writeln!(out, "  {:<width$} {}", t.name, t.url);
            }
            Ok(())
        }
        LabCommand::Status { json } => {
            let status = lab::status().map_err(fail)?;
            if json {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&status).unwrap_or_default()
                );
                return Ok(());
            }
            match status {
                Some(s) => print_status(&s, &mut out),
                None => {
                    let _ = writeln!(out, "no lab (start one with 'sharebench lab up')");
                }
            }
            Ok(())
        }
        LabCommand::Crash { host } => {
            let pids = lab::crash(&host).map_err(fail)?;
            let _ = writeln!(out, "crashed {host}: killed {} processes", pids.len());
            Ok(())
        }
        LabCommand::Restart { host } => {
            lab::restart(&host).map_err(fail)?;
            let _ = writeln!(out, "restarted the servers of {host}");
            Ok(())
        }
        LabCommand::Mpirun { np, args } => mpirun(np, &args),
        LabCommand::ExecWithoutSync { command } => {
            let (cmd, args) = command.split_first().expect("clap: required");
            Err(fail(lab::nosync::exec(cmd, args)))
        }
        LabCommand::Heal { json } => {
            let info = lab::heal_info().map_err(fail)?;
            if json {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&info).unwrap_or_default()
                );
                return Ok(());
            }
            match info {
                None => {
                    let _ = writeln!(out, "no running Gluster in the lab");
                }
                Some(h) => {
                    let _ = writeln!(out, "{}: {} entries to heal", h.volume, h.pending_entries);
                    for (brick, n) in &h.bricks {
                        let _ = writeln!(out, "  {brick}: {n}");
                    }
                }
            }
            Ok(())
        }
        LabCommand::Down => {
            let report = lab::down().map_err(fail)?;
            let _ = writeln!(out, "lab down: removed {} things", report.removed.len());
            Ok(())
        }
    }
}

/// `lab status` as text: the lab, its hosts, servers, Gluster's heal and targets.
fn print_status(s: &lab::Status, out: &mut dyn Write) {
    let _ = writeln!(
        out,
        "lab {} in {} (fs {}, disk {}, every link {}, TCP {})",
        s.phase,
        s.directory.display(),
        s.fs,
        s.disk,
        s.link,
        s.congestion
    );
    let _ = writeln!(out, "delay: {}", s.delay_emulation);
    if let Some(cpus) = &s.server_cpus {
        let _ = writeln!(out, "servers pinned to CPUs {cpus}");
    }
    let _ = writeln!(out, "\nhosts:");
    for h in &s.hosts {
        let _ = writeln!(
            out,
            "  {:<10} {:<7} {:<15} netns {}",
            h.name, h.role, h.address, h.netns
        );
    }
    let _ = writeln!(out, "\nservers:");
    for v in &s.services {
        let state = if v.running { "running" } else { "DEAD" };
        let _ = writeln!(
            out,
            "  {:<8} on {:<10} {:<18} pid {:<8} {state}  log {}",
            v.name,
            v.host,
            v.endpoint,
            v.pid,
            v.log.display()
        );
    }
    if let Some(h) = &s.heal {
        let _ = writeln!(
            out,
            "\ngluster {}: {} entries to heal",
            h.volume, h.pending_entries
        );
    }
    let _ = writeln!(
        out,
        "\ntargets (user {}, password in {}):",
        s.smb_user,
        s.credentials_file.display()
    );
    for t in &s.targets {
        let via = if !t.client_netns.is_empty() {
            format!("client in {}", t.client_netns)
        } else if !t.client_pids.is_empty() {
            let pids: Vec<String> = t.client_pids.iter().map(|p| p.to_string()).collect();
            format!(
                "FUSE mount, its client (pid {}) in a lab namespace",
                pids.join(", ")
            )
        } else {
            "a directory on this machine".to_string()
        };
        let _ = writeln!(out, "  {:<20} {}  ({via})", t.name, t.url);
    }
}

/// Several clients need this binary built with MPI (each rank must know it is one of
/// many); without it every rank would run alone and write over the others' records.
pub fn require_mpi() -> CliResult<()> {
    if cfg!(feature = "mpi") {
        return Ok(());
    }
    Err(CliError::usage(
        "several clients need a sharebench built with MPI: make build (or cargo build --release --features sharebench/mpi)",
    ))
}

/// `lab mpirun`: sharebench on `np` client hosts of the lab, mpirun started in the first
/// client's namespace and reaching the others over ssh on the lab network.
fn mpirun(np: u32, args: &[String]) -> CliResult<()> {
    require_mpi()?;
    let state = sharebench_lab::state::LabState::load()
        .map_err(fail)?
        .filter(|s| s.phase == sharebench_lab::state::Phase::Up)
        .ok_or_else(|| CliError::usage("no lab is up; start one with 'sharebench lab up'"))?;
    let clients = state.topology.clients().count() as u32;
    if np > clients {
        return Err(CliError::usage(format!(
            "--np {np}: the lab has {clients} client hosts"
        )));
    }
    if !state.services.iter().any(|s| s.name == "sshd") {
        return Err(CliError::usage(
            "the lab's clients run no sshd (install openssh-server: scripts/install-deps.sh, then lab down and up)",
        ));
    }
    sharebench_lab::ssh::check_hosts(&state, np).map_err(|e| CliError::failed(format!("{e:#}")))?;
    let me = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find this program: {e}")))?;
    let argv =
        sharebench_lab::ssh::mpirun_argv(&state, np, &me.to_string_lossy(), args).map_err(fail)?;
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .status()
        .map_err(|e| CliError::failed(format!("cannot run mpirun (install openmpi-bin): {e}")))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(c) => Err(CliError {
            code: c,
            message: format!("lab mpirun: the run ended with exit code {c}"),
        }),
        None => Err(CliError::failed(
            "lab mpirun: mpirun was killed by a signal",
        )),
    }
}
