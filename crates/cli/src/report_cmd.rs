//! `sharebench report`: loads result directories and other tools' outputs, analyses them
//! and writes report.html, results.xlsx, results.csv and verdicts.json into a new or empty
//! --out, then prints a compact summary (and, with --fail-if-slower, gates on it). Everything is read and rendered before the directory is
//! touched, so bad input leaves nothing behind. The analysis is `sharebench-report`.

use crate::error::{CliError, CliResult};
use crate::stdout::printable;
use clap::Args;
use sharebench_report::ReportRequest;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
sharebench report sharebench-results/RUN1 sharebench-results/RUN2 --out report-nfs-smb\n  \
sharebench report nfs.xls smb.xls --label NFS --label SMB --baseline NFS --out cmp\n  \
sharebench report iozone-nfs.txt fio-smb.json --out cmp\n  \
sharebench report ext4/run*.txt xfs/run*.txt --label ext4 --label ext4 ... --out cmp\n  \
sharebench report runs/ext4 runs/xfs --out cmp    a directory of runs per target\n  \
sharebench report old-export new-export --baseline old-export --out cmp --fail-if-slower 5\n  \
sharebench report dfs1 dfs2 dfs3 --out dfs-over-runs    three runs of one study\n\n\
Inputs that share a label are runs of one target: with three or more a side, the runs\n\
are the replicates of the comparison (docs/methods/statistics.md, \"Replicates\").\n\
Study directories ('sharebench study run --out DIR') are reported claim by claim; three or\n\
more runs of one study also decide what one run cannot: which target is the steadier.")]
pub struct ReportArgs {
    /// Inputs: sharebench result directories, IOzone text output (-a, -R, -t), IOzone -b
    /// workbooks (.xls, .xlsx), fio JSON (--output-format=json), or a directory of such
    /// runs (one label: the directory's name)
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Label of the input at the same position (default: the target name, or the file
    /// name). Inputs given one label are runs of one target
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Label every other target is compared with (default: the first)
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// New or empty directory for report.html, results.xlsx, results.csv and
    /// verdicts.json (every comparison as data; docs/reference/records.md)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The smallest difference, in percent, that names a winner: a significant difference
    /// below it is not called, and a ratio whose 95% interval lies within it is
    /// "equivalent" (default 5; see docs/methods/statistics.md)
    #[arg(long, value_name = "PCT", value_parser = crate::run_cmd::parse_percent)]
    pub threshold: Option<f64>,
    /// Load curves (--workload load): report the highest valid rate whose p99 latency
    /// stays under this bound, e.g. 10ms
    #[arg(long, value_name = "TIME", value_parser = parse_bound)]
    pub latency_bound: Option<f64>,
    /// A gate for CI: after writing the report, exit 3 (naming each) when any target is
    /// decided slower than the baseline by more than PCT percent in an operation over all
    /// its cells, or in a throughput-mode row: significant, and the ratio's own verdict at
    /// a threshold of PCT is "slower"
    #[arg(long, value_name = "PCT", value_parser = crate::run_cmd::parse_percent)]
    pub fail_if_slower: Option<f64>,
}

fn parse_bound(text: &str) -> Result<f64, String> {
    match crate::run_cmd::parse_seconds(text)? {
        s if s > 0.0 => Ok(s * 1e6),
        _ => Err(format!("'{text}' must be above 0")),
    }
}

pub fn main(args: ReportArgs) -> CliResult<()> {
    let studies = args
        .inputs
        .iter()
        .filter(|p| sharebench_study::is_study_dir(p))
        .count();
    if studies > 0 {
        if studies < args.inputs.len() {
            return Err(CliError::usage(
                "study directories can only be reported with other runs of the same study",
            ));
        }
        return study_report(args);
    }
    let req = ReportRequest {
        inputs: args.inputs,
        labels: args.labels,
        baseline: args.baseline,
        out: args.out,
        threshold_pct: args
            .threshold
            .unwrap_or(sharebench_report::compare::DEFAULT_THRESHOLD_PCT),
        latency_bound_us: args.latency_bound,
    };
    sharebench_report::check_out_dir(&req.out).map_err(|e| CliError::usage(e.0))?;
    let started = std::time::Instant::now();
    let (analysis, rendered) = sharebench_report::build(&req).map_err(|e| CliError::usage(e.0))?;
    let mut err = std::io::stderr();
    for w in &rendered.warnings {
        let _ = writeln!(err, "sharebench: warning: {}", printable(w));
    }
    sharebench_report::write(&req.out, &rendered).map_err(|e| CliError::failed(e.0))?;
    let mut out = crate::stdout::stdout();
    let _ = write!(out, "{}", printable(&rendered.summary));
    let _ = writeln!(
        out,
        "Report: {} ({:.1} s)",
        req.out.join("report.html").display(),
        started.elapsed().as_secs_f64()
    );
    match args.fail_if_slower {
        Some(pct) => gate(&analysis, pct),
        None => Ok(()),
    }
}

/// `--fail-if-slower PCT`: exit 3, naming each, when a target is decided slower than the
/// baseline by more than PCT (`verdicts_json::slower_than`).
fn gate(analysis: &sharebench_report::analysis::Analysis, pct: f64) -> CliResult<()> {
    let slower = sharebench_report::verdicts_json::slower_than(analysis, pct);
    if slower.is_empty() {
        return Ok(());
    }
    let mut err = std::io::stderr();
    for r in &slower {
        let (lo, hi) = r.ci.unwrap_or((r.ratio, r.ratio));
        let threads = r
            .threads
            .map(|t| format!(", {t} workers"))
            .unwrap_or_default();
        let _ = writeln!(
            err,
            "sharebench: slower: {} against {}, {}{threads}: {:+.1}% [{:+.1}%, {:+.1}%]",
            printable(&r.target),
            printable(&r.baseline),
            r.op,
            (r.ratio - 1.0) * 100.0,
            (lo - 1.0) * 100.0,
            (hi - 1.0) * 100.0
        );
    }
    Err(CliError {
        code: 3,
        message: format!(
            "{} comparison(s) decided slower than the baseline by more than {pct}% (--fail-if-slower)",
            slower.len()
        ),
    })
}

/// A study run re-reported, or several runs of one study compared claim by claim
/// (labelled by --label, else `run1`, `run2`, ...).
fn study_report(args: ReportArgs) -> CliResult<()> {
    if args.baseline.is_some() {
        return Err(CliError::usage(
            "--baseline does not apply to studies (each claim names its own sides)",
        ));
    }
    if args.fail_if_slower.is_some() {
        return Err(CliError::usage(
            "--fail-if-slower gates runs against a baseline; a study's verdicts are in its report's verdicts.json",
        ));
    }
    sharebench_report::check_out_dir(&args.out).map_err(|e| CliError::usage(e.0))?;
    let mut runs = Vec::new();
    for (i, dir) in args.inputs.iter().enumerate() {
        let label = match (args.labels.get(i), args.inputs.len()) {
            (Some(l), _) => l.clone(),
            (None, 1) => "this run".to_string(),
            (None, _) => format!("run{}", i + 1),
        };
        let ev =
            sharebench_study::RunEvidence::load(dir, args.threshold).map_err(CliError::usage)?;
        runs.push((label, ev));
    }
    let (lines, warnings) =
        sharebench_study::write_report(&runs, &args.out).map_err(CliError::usage)?;
    let mut err = std::io::stderr();
    for w in warnings {
        let _ = writeln!(err, "sharebench: warning: {}", printable(&w));
    }
    let mut out = crate::stdout::stdout();
    for l in lines {
        let _ = writeln!(out, "{}", printable(&l));
    }
    let _ = writeln!(out, "Report: {}", args.out.join("report.html").display());
    Ok(())
}
