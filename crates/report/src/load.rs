//! Inputs to labelled datasets: a sharebench result directory (results.jsonl + run.json,
//! one dataset per target), or a file recognised by its content (IOzone text, a BIFF2
//! `-b` workbook, `.xlsx`/BIFF8 via calamine, fio JSON). Every record's `target` becomes
//! its dataset's label. Not: statistics (see `analysis`).

use crate::import::{self, Imported};
use crate::{ReportError, Result};
use sharebench_core::manifest::Manifest;
use sharebench_core::record::{read_jsonl, Record};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where a dataset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sharebench,
    IozoneText,
    IozoneWorkbook,
    Fio,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sharebench => "sharebench",
            Kind::IozoneText => "IOzone text",
            Kind::IozoneWorkbook => "IOzone workbook",
            Kind::Fio => "fio JSON",
        }
    }
}

/// One labelled set of records (one target of one input).
#[derive(Debug, Clone)]
pub struct Dataset {
    pub label: String,
    pub source: PathBuf,
    pub kind: Kind,
    /// The target's name in the source (sharebench), or the file name.
    pub target: String,
    pub manifest: Option<Manifest>,
    pub records: Vec<Record>,
}

/// All inputs, loaded, with the warnings met on the way (cut-off lines, conversions).
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub datasets: Vec<Dataset>,
    pub warnings: Vec<String>,
}

/// Loads every input and gives it its label (`labels[i]` for input i, else the target name
/// or the file's stem). Fails on an unknown or empty input, or two datasets with one label.
pub fn load_inputs(inputs: &[PathBuf], labels: &[String]) -> Result<Loaded> {
    if inputs.is_empty() {
        return Err(ReportError("no input given".into()));
    }
    if labels.len() > inputs.len() {
        return Err(ReportError(format!(
            "{} --label given for {} input(s); give at most one per input",
            labels.len(),
            inputs.len()
        )));
    }
    let mut loaded = Loaded::default();
    for (i, path) in inputs.iter().enumerate() {
        let label = labels.get(i).map(|s| s.trim().to_string());
        if label.as_deref() == Some("") {
            return Err(ReportError("--label cannot be empty".into()));
        }
        load_one(path, label, &mut loaded)?;
    }
    let mut seen = BTreeSet::new();
    for d in &loaded.datasets {
        if !seen.insert(d.label.clone()) {
            return Err(ReportError(format!(
                "two inputs have the label '{}'; give each a distinct --label",
                d.label
            )));
        }
    }
    Ok(loaded)
}

fn load_one(path: &Path, label: Option<String>, loaded: &mut Loaded) -> Result<()> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    if meta.is_dir() {
        let jsonl = path.join("results.jsonl");
        if !jsonl.is_file() {
            return Err(ReportError(format!(
                "{shown}: not a sharebench result directory (no results.jsonl)"
            )));
        }
        return load_sharebench(&jsonl, label, loaded);
    }
    if path.file_name().is_some_and(|n| n == "results.jsonl") {
        return load_sharebench(path, label, loaded);
    }
    let bytes = std::fs::read(path).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ReportError(format!("{shown}: input is empty")));
    }
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string());
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.clone());
    let (kind, result): (Kind, std::result::Result<Imported, String>) = if import::biff::looks_like(
        &bytes,
    ) {
        (
            Kind::IozoneWorkbook,
            import::biff::read(&bytes).and_then(|g| import::workbook::parse(&g, &source)),
        )
    } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        (
            Kind::IozoneWorkbook,
            import::workbook::read_with_calamine(&bytes)
                .and_then(|g| import::workbook::parse(&g, &source)),
        )
    } else {
        let text = String::from_utf8_lossy(&bytes);
        if import::fio::json_part(&text).is_some() {
            (Kind::Fio, import::fio::parse(&text, &source))
        } else if import::iozone_text::looks_like(&text) {
            (Kind::IozoneText, import::iozone_text::parse(&text, &source))
        } else if text.trim_start().starts_with("{\"schema\"") {
            return Err(ReportError(format!(
                "{shown}: looks like sharebench records; give its result directory or a file named results.jsonl"
            )));
        } else {
            return Err(ReportError(format!(
                "{shown}: unknown input (not a sharebench result directory, IOzone output, IOzone workbook or fio JSON)"
            )));
        }
    };
    let imported = result.map_err(|e| ReportError(format!("{shown}: {e}")))?;
    loaded.warnings.extend(imported.notes);
    let label = label.unwrap_or(stem);
    let mut records = imported.records;
    for r in records.iter_mut() {
        r.target = label.clone();
    }
    loaded.datasets.push(Dataset {
        label,
        source: path.to_path_buf(),
        kind,
        target: source,
        manifest: None,
        records,
    });
    Ok(())
}

fn load_sharebench(jsonl: &Path, label: Option<String>, loaded: &mut Loaded) -> Result<()> {
    let shown = jsonl.display();
    let read = read_jsonl(jsonl).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    for bad in &read.bad_lines {
        loaded.warnings.push(format!(
            "skipped a line that cannot be read (cut off?): {bad}"
        ));
    }
    if read.records.is_empty() {
        return Err(ReportError(format!("{shown}: no records (input is empty)")));
    }
    let dir = jsonl.parent().unwrap_or(Path::new("."));
    let manifest: Option<Manifest> = std::fs::read(dir.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if manifest.is_none() {
        loaded.warnings.push(format!(
            "{}: no readable run.json; the environment table will be thin",
            dir.display()
        ));
    }
    // Targets in the order they first appear.
    let mut targets: Vec<String> = Vec::new();
    for r in &read.records {
        if !targets.contains(&r.target) {
            targets.push(r.target.clone());
        }
    }
    for t in &targets {
        let name = match (&label, targets.len()) {
            (Some(l), 1) => l.clone(),
            (Some(l), _) => format!("{l}:{t}"),
            (None, _) => t.clone(),
        };
        let mut records: Vec<Record> = read
            .records
            .iter()
            .filter(|r| &r.target == t)
            .cloned()
            .collect();
        for r in records.iter_mut() {
            r.target = name.clone();
        }
        loaded.datasets.push(Dataset {
            label: name,
            source: dir.to_path_buf(),
            kind: Kind::Sharebench,
            target: t.clone(),
            manifest: manifest.clone(),
            records,
        });
    }
    Ok(())
}
