//! sharebench: compare the performance of file-sharing protocols and file systems.
//! This crate is the command line: argument parsing, the front ends (`run`, `iozone`,
//! `report`, `lab`) and terminal output. The measuring is in `sharebench-core`, the targets
//! in `sharebench-backends`, the analysis in `sharebench-report`, the servers in
//! `sharebench-lab`.

mod error;
mod iozone;
mod lab_cmd;
mod progress;
mod report_cmd;
mod run_cmd;
mod session;
mod summary;

use clap::{Parser, Subcommand};
use error::CliError;
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
sharebench iozone -a -i 0 -i 1 -g 2G -R -b results.xls /mnt/nfs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure a matrix of operations, file sizes and record sizes on one or more targets.
    Run(run_cmd::RunArgs),
    /// Stand up real Samba and NFS-Ganesha servers in network namespaces (root)
    Lab(lab_cmd::LabArgs),
    /// Run with IOzone's command line and print IOzone's tables (-a, -t, -R, -b, ...).
    #[command(disable_help_flag = true)]
    Iozone {
        /// IOzone arguments, e.g. -a -i 0 -i 1 -g 2G -R -b out.xls DIR
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Analyse results (sharebench, IOzone, fio) and write report.html, results.xlsx, results.csv.
    Report(report_cmd::ReportArgs),
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = write!(std::io::stdout(), "{e}");
                    std::process::exit(0);
                }
                _ => {
                    // clap's message, first line only: one clear line on stderr.
                    let text = e.to_string();
                    let first = text
                        .lines()
                        .next()
                        .unwrap_or("invalid arguments")
                        .trim_start_matches("error: ");
                    say(&format!(
                        "sharebench: error: {first} (see 'sharebench --help')"
                    ));
                    std::process::exit(2);
                }
            }
        }
    };
    let result: Result<(), CliError> = match cli.command {
        Command::Run(args) => run_cmd::main(args),
        Command::Iozone { args } => iozone::main(&args),
        Command::Report(args) => report_cmd::main(args),
        Command::Lab(args) => lab_cmd::main(args),
    };
    if let Err(e) = result {
        say(&format!("sharebench: error: {}", e.message));
        std::process::exit(e.code);
    }
}

/// One line on stderr; a closed stderr is ignored rather than a panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
