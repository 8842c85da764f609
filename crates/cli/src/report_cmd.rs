//! `sharebench report`: loads result directories and other tools' outputs, analyses them
//! and writes report.html, results.xlsx and results.csv into a new or empty --out, then
//! prints a compact summary. Everything is read and rendered before the directory is
//! touched, so bad input leaves nothing behind. The analysis is `sharebench-report`.

use crate::error::{CliError, CliResult};
use clap::Args;
use sharebench_report::ReportRequest;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
sharebench report sharebench-results/RUN1 sharebench-results/RUN2 --out report-nfs-smb\n  \
sharebench report nfs.xls smb.xls --label NFS --label SMB --baseline NFS --out cmp\n  \
sharebench report iozone-nfs.txt fio-smb.json --out cmp")]
pub struct ReportArgs {
    /// Inputs: sharebench result directories, IOzone text output (-a, -R, -t), IOzone -b
    /// workbooks (.xls, .xlsx) or fio JSON (--output-format=json)
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Label of the input at the same position (default: the target name, or the file name)
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Label every other target is compared with (default: the first)
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// New or empty directory for report.html, results.xlsx and results.csv
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn main(args: ReportArgs) -> CliResult<()> {
    let req = ReportRequest {
        inputs: args.inputs,
        labels: args.labels,
        baseline: args.baseline,
        out: args.out,
    };
    sharebench_report::check_out_dir(&req.out).map_err(|e| CliError::usage(e.0))?;
    let started = std::time::Instant::now();
    let (analysis, rendered) = sharebench_report::build(&req).map_err(|e| CliError::usage(e.0))?;
    let mut err = std::io::stderr();
    for w in &rendered.warnings {
        let _ = writeln!(err, "sharebench: warning: {w}");
    }
    sharebench_report::write(&req.out, &analysis, &rendered).map_err(|e| CliError::failed(e.0))?;
    let mut out = std::io::stdout();
    let _ = write!(out, "{}", rendered.summary);
    let _ = writeln!(
        out,
        "Report: {} ({:.1} s)",
        req.out.join("report.html").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
