//! The report's output formats behind one interface, as hyperfine's `export` module keeps
//! its formats: each renders the whole analysis into bytes, one file of code per format
//! (`html`, `xlsx`, `results_csv`, `verdicts_json`, and `summary` for the terminal). Not: statistics (a
//! renderer computes none; `analysis` and its modules do) or writing files (`crate::write`).

use crate::analysis::Analysis;
use crate::{html, results_csv, summary, verdicts_json, xlsx, ReportError, Result};

/// One output format of a report.
pub trait Renderer {
    /// The file it becomes in a report directory; `None`: the terminal.
    fn file_name(&self) -> Option<&'static str>;
    /// The whole output, from the analysis alone.
    fn render(&self, a: &Analysis) -> Result<Vec<u8>>;
}

/// report.html: the answer, heatmaps, latency, statistics and findings.
pub struct Html;
/// results.xlsx: size classes, every cell compared, the records.
pub struct Xlsx;
/// results.csv: the records, one row each.
pub struct Csv;
/// verdicts.json: every comparison decided, as data for CI.
pub struct Verdicts;
/// The lines `sharebench report` prints.
pub struct Terminal;

impl Renderer for Html {
    fn file_name(&self) -> Option<&'static str> {
        Some("report.html")
    }
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        Ok(html::render(a).into_bytes())
    }
}

impl Renderer for Xlsx {
    fn file_name(&self) -> Option<&'static str> {
        Some("results.xlsx")
    }
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        xlsx::render(a)
    }
}

impl Renderer for Csv {
    fn file_name(&self) -> Option<&'static str> {
        Some("results.csv")
    }
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        results_csv::render(&a.records)
            .map_err(|e| ReportError(format!("cannot build results.csv: {e}")))
    }
}

impl Renderer for Verdicts {
    fn file_name(&self) -> Option<&'static str> {
        Some("verdicts.json")
    }
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        verdicts_json::render(a)
    }
}

impl Renderer for Terminal {
    fn file_name(&self) -> Option<&'static str> {
        None
    }
    fn render(&self, a: &Analysis) -> Result<Vec<u8>> {
        Ok(summary::render(a).into_bytes())
    }
}

/// Every format of a report.
pub const ALL: [&dyn Renderer; 5] = [&Html, &Xlsx, &Csv, &Verdicts, &Terminal];
