//! sharebench: compare the performance of file-sharing protocols and file systems.
//! This crate is the command line: argument parsing, the front ends (`run`, `iozone`,
//! `report`, `lab`) and terminal output. The measuring is in `sharebench-core`, the targets
//! in `sharebench-backends`, the analysis in `sharebench-report`, the servers in
//! `sharebench-lab`.

mod clean_cmd;
mod install_files;
mod iozone;
mod lab_cmd;
mod mixes;
#[cfg(feature = "mpi")]
mod mpi_ranks;
mod report_cmd;
mod run_cmd;
mod stdout;
mod study_cmd;

use clap::{Parser, Subcommand};
use error::CliError;
use sharebench_session::{self as session, error, placement};
use std::io::Write;

#[derive(Parser)]
#[command(
    name = "sharebench",
    version,
    about = "Compare file-sharing protocols and file systems: IOzone-class workloads, with statistics",
    long_about = "sharebench runs IOzone-class workloads (write, rewrite, read, reread, random, backward, \
record rewrite, stride, fwrite/fread, pwrite/pread, pwritev/preadv, mmap) against one or more targets and \
records every measurement as one JSON line, so nothing measured is lost.\n\n\
Targets: a directory (local disk, tmpfs, a kernel or FUSE mount of NFS, SMB or GlusterFS), or null:// \
(discards writes, reads zeros: measures the tool's own overhead).",
    after_help = "Examples:\n  \
sharebench run /dev/shm /var/tmp                       compare tmpfs with the disk\n  \
sharebench run --auto --max-file 64m -i write,read /mnt/nfs\n  \
sharebench run --threads 4 --file-sizes 512k --record-sizes 4k /mnt/smb\n  \
sharebench iozone -a -i 0 -i 1 -g 2G -R -b results.xls /mnt/nfs\n  \
sharebench study run dfs-nfs-vs-smb --scale quick      reproduce a seed (lab: root)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure a matrix of operations, file sizes and record sizes on one or more targets.
    Run(Box<run_cmd::RunArgs>),
    /// Stand up real Samba and NFS-Ganesha servers in network namespaces (root)
    Lab(lab_cmd::LabArgs),
    /// Run with IOzone's command line and print IOzone's tables (-a, -t, -R, -b, ...).
    #[command(disable_help_flag = true)]
    Iozone {
        /// IOzone arguments, e.g. -a -i 0 -i 1 -g 2G -R -b out.xls DIR
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Reproduce a seed's study end to end: lab, runs, claims checked one by one, report
    Study(study_cmd::StudyArgs),
    /// Analyse results (sharebench, IOzone, fio) and write report.html, results.xlsx, results.csv.
    Report(report_cmd::ReportArgs),
    /// Remove the working directories that killed runs left on targets
    Clean(clean_cmd::CleanArgs),
    /// Write the manual pages and shell completions into DIR (`make install` calls it)
    #[command(hide = true)]
    InstallFiles {
        #[arg(value_name = "DIR")]
        dir: std::path::PathBuf,
    },
}

fn main() {
    // Before any allocation that matters: a client's first pass must not pay for fresh pages
    // the later ones reuse (crates/backends/src/ffi/malloc.rs).
    sharebench_backends::ffi::malloc::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = write!(crate::stdout::stdout(), "{e}");
                    std::process::exit(0);
                }
                // `sharebench` or `sharebench lab` alone: what there is to do, not an error.
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                | ErrorKind::MissingSubcommand => {
                    let _ = write!(std::io::stderr(), "{}", e.render());
                    std::process::exit(2);
                }
                _ => {
                    // clap's message, first line only: one clear line on stderr, and the
                    // help of the subcommand it is about.
                    let text = e.to_string();
                    let first = first_line(&text);
                    let args: Vec<String> = std::env::args().skip(1).collect();
                    say(&format!(
                        "sharebench: error: {first} (see '{} --help')",
                        subcommand_path(&args)
                    ));
                    std::process::exit(2);
                }
            }
        }
    };
    // A bad pace of progress lines is refused before anything runs.
    if let Err(e) = sharebench_session::progress::line_every() {
        say(&format!("sharebench: error: {e}"));
        std::process::exit(2);
    }
    let result: Result<(), CliError> = match cli.command {
        Command::Run(args) => with_ranks(|c| run_cmd::main(*args, c)),
        Command::Iozone { args } => with_ranks(|c| iozone::main(&args, c)),
        Command::Report(args) => report_cmd::main(args),
        Command::Lab(args) => lab_cmd::main(args),
        Command::Study(args) => study_cmd::main(args),
        Command::Clean(args) => clean_cmd::main(args),
        Command::InstallFiles { dir } => {
            use clap::CommandFactory;
            install_files::write_all(Cli::command(), &dir).map(|n| {
                let _ = writeln!(
                    crate::stdout::stdout(),
                    "{n} files (manual pages, completions) in {}",
                    dir.display()
                );
            })
        }
    };
    // Output lost to a full disk or a closed pipe is a failure, even of a good run.
    let _ = std::io::Write::flush(&mut stdout::stdout());
    let result = match (result, stdout::failure()) {
        (Ok(()), Some(why)) => Err(CliError::failed(format!(
            "cannot write to standard output: {why}"
        ))),
        (result, _) => result,
    };
    if let Err(e) = result {
        // Under mpirun every rank ends with the same error: rank 0 says it.
        let other_rank = ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"]
            .iter()
            .find_map(|v| std::env::var(v).ok())
            .is_some_and(|r| r != "0");
        if other_rank {
            // mpirun ends the whole job at the first non-zero exit: give rank 0 the time
            // to say why before this rank's exit cuts it off.
            std::thread::sleep(std::time::Duration::from_secs(1));
        } else {
            say(&format!("sharebench: error: {}", e.message));
        }
        std::process::exit(e.code);
    }
}

/// "sharebench lab up": the program and the subcommands that `args` name, in order, as
/// far as they are subcommands.
fn subcommand_path(args: &[String]) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["sharebench".to_string()];
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let Some(sub) = cmd.find_subcommand(a).cloned() else {
            break;
        };
        path.push(a.clone());
        cmd = sub;
    }
    path.join(" ")
}

/// Runs `f` as one client, or, when mpirun started this process, as one rank of many
/// (ranks other than 0 print nothing on stdout: rank 0 speaks for the run).
#[cfg(feature = "mpi")]
fn with_ranks(
    f: impl FnOnce(Option<&dyn session::Cluster>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    if !mpi_ranks::launched_by_mpirun() {
        return f(None);
    }
    let ranks = mpi_ranks::MpiRanks::init()
        .ok_or_else(|| CliError::failed("mpirun started sharebench, but MPI did not initialise"))?;
    if sharebench_core::ranks::Ranks::rank(&ranks) != 0 {
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            let _ = nix::unistd::dup2_stdout(null);
        }
    }
    f(Some(&ranks))
}

#[cfg(not(feature = "mpi"))]
fn with_ranks(
    f: impl FnOnce(Option<&dyn session::Cluster>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let launched = ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if launched {
        return Err(CliError::usage(
            "started by mpirun, but this sharebench was built without MPI (cargo feature 'mpi'); every rank would measure alone",
        ));
    }
    f(None)
}

/// clap's message as one line: its first line, and when that ends with a colon (missing
/// arguments), the indented lines it introduces.
fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let mut line = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    if line.ends_with(':') {
        let items: Vec<&str> = lines
            .take_while(|l| l.starts_with(' '))
            .map(str::trim)
            .collect();
        line = format!("{} {}", line, items.join(", "));
    }
    line
}

/// One line on stderr; a closed stderr is ignored rather than a panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{}", stdout::printable(line));
}
