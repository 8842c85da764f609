//! sharebench-report: turns records into the comparison users otherwise build by hand.
//! It loads sharebench result directories and imports other tools' outputs (IOzone text and
//! `-b` workbooks, fio JSON) as ordinary records, computes per-cell statistics over
//! repetitions, compares every target against a baseline, summarises by the seed's size
//! classes, writes generated findings with their evidence, and renders `report.html`,
//! `results.xlsx`, `results.csv` and a terminal summary.
//! Not: measuring anything (see `sharebench-core`) or the command line (see the
//! `sharebench` crate's `report` subcommand).

pub mod analysis;
pub mod by_rep;
pub mod cache;
pub mod classes;
pub mod compare;
pub mod curves;
pub mod env;
pub mod findings;
pub mod format;
pub mod html;
pub mod import;
pub mod latency_html;
pub mod load;
pub mod model;
pub mod render;
pub mod results_csv;
pub mod stats;
pub mod summary;
pub mod surface;
pub mod svg;
pub mod tails;
pub mod verdicts_json;
pub mod warnings;
pub mod workloads;
pub mod xlsx;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A problem with the inputs or the output, as one line for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError(pub String);

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReportError {}

pub type Result<T> = std::result::Result<T, ReportError>;

/// What `sharebench report` was asked to do.
#[derive(Debug, Clone)]
pub struct ReportRequest {
    pub inputs: Vec<PathBuf>,
    /// Labels, in input order; inputs without one get the default.
    pub labels: Vec<String>,
    pub baseline: Option<String>,
    pub out: PathBuf,
    /// The smallest difference, in percent, that calls a winner (see `compare`).
    pub threshold_pct: f64,
    /// Load curves: the p99 bound whose highest valid rate is reported (`--latency-bound`).
    pub latency_bound_us: Option<f64>,
}

impl Default for ReportRequest {
    fn default() -> Self {
        ReportRequest {
            inputs: Vec::new(),
            labels: Vec::new(),
            baseline: None,
            out: PathBuf::new(),
            threshold_pct: compare::DEFAULT_THRESHOLD_PCT,
            latency_bound_us: None,
        }
    }
}

/// The files of a report, rendered in memory before anything is written.
pub struct Rendered {
    /// (file name, contents), one per format that makes a file (`render::ALL`).
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// The terminal summary.
    pub summary: String,
    pub warnings: Vec<String>,
}

impl Rendered {
    /// The contents of file `name` as text (empty when there is no such file, or it is
    /// not UTF-8).
    pub fn text(&self, name: &str) -> &str {
        self.files
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }
}

/// Loads, analyses and renders everything; writes nothing.
pub fn build(req: &ReportRequest) -> Result<(analysis::Analysis, Rendered)> {
    let loaded = load::load_inputs(&req.inputs, &req.labels)?;
    let mut analysis = analysis::analyse(loaded, req.baseline.as_deref(), req.threshold_pct)?;
    analysis.latency_bound_us = req.latency_bound_us;
    let mut rendered = Rendered {
        files: Vec::new(),
        summary: String::new(),
        warnings: analysis.load_warnings.clone(),
    };
    for r in render::ALL {
        let bytes = r.render(&analysis)?;
        match r.file_name() {
            Some(name) => rendered.files.push((name, bytes)),
            None => rendered.summary = String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
    Ok((analysis, rendered))
}

/// Checks that `dir` is new or empty (the rule of `run --out`): a report never writes
/// over someone else's files.
pub fn check_out_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(ReportError(format!(
                "--out {}: exists and is not a directory",
                dir.display()
            )));
        }
        let mut entries = std::fs::read_dir(dir)
            .map_err(|e| ReportError(format!("--out {}: {e}", dir.display())))?;
        if entries.next().is_some() {
            return Err(ReportError(format!(
                "--out {} already holds files; give a new or empty directory",
                dir.display()
            )));
        }
    }
    // It can be made: the nearest existing directory on the way lets us write in it (bad
    // input found now, before the inputs are read, as `run` does).
    let existing = dir
        .ancestors()
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find(|a| a.exists())
        .unwrap_or(Path::new("."));
    let writable =
        existing.is_dir() && nix::unistd::access(existing, nix::unistd::AccessFlags::W_OK).is_ok();
    if !writable {
        return Err(ReportError(format!(
            "cannot create --out {}: {} is not a directory this user can write in",
            dir.display(),
            existing.display()
        )));
    }
    Ok(())
}

/// Writes the rendered files (report.html, results.xlsx, results.csv) into a new or
/// empty `dir`.
pub fn write(dir: &Path, rendered: &Rendered) -> Result<()> {
    check_out_dir(dir)?;
    let err =
        |e: std::io::Error| ReportError(format!("cannot write in --out {}: {e}", dir.display()));
    // Held open and written by handle: nothing follows a symlink planted meanwhile.
    let out = sharebench_core::safe_dir::SafeDir::create(dir).map_err(err)?;
    let write = |name: &str, bytes: &[u8]| -> std::io::Result<()> {
        out.create_new(name, 0o644)?.write_all(bytes)
    };
    for (name, bytes) in &rendered.files {
        write(name, bytes).map_err(err)?;
    }
    Ok(())
}
