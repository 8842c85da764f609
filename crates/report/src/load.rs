//! Inputs to labelled datasets: a sharebench result directory (results.jsonl + run.json,
//! one dataset per target), or a file recognised by its content (IOzone text, a BIFF2
//! `-b` workbook, `.xlsx`/BIFF8 via calamine, fio JSON). Every record's `target` becomes
//! its dataset's label. Not: statistics (see `analysis`).

use crate::import::{self, Imported};
use crate::{ReportError, Result};
use sharebench_core::manifest::Manifest;
use sharebench_core::record::{read_jsonl, Record};
use std::io::Read;
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
/// or the file's stem). Inputs that share a label are runs of one target: their records
/// make one dataset, each input's repetitions numbered after the last one's (see
/// `merge_runs`). A directory that is not a result directory holds runs: every result
/// directory and file in it, under its label (or the directory's name). Fails on an
/// unknown or empty input.
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
    let mut seen = std::collections::BTreeSet::new();
    for path in inputs {
        let same = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !seen.insert(same) {
            return Err(ReportError(format!(
                "{} is given twice; inputs that share a --label are runs of one target, each run once",
                path.display()
            )));
        }
    }
    let mut loaded = Loaded::default();
    for (i, path) in inputs.iter().enumerate() {
        let label = labels.get(i).map(|s| s.trim().to_string());
        if label.as_deref() == Some("") {
            return Err(ReportError("--label cannot be empty".into()));
        }
        load_one(path, label, &mut loaded)?;
    }
    for d in &mut loaded.datasets {
        let warnings = drop_implausible(&mut d.records, &d.source);
        loaded.warnings.extend(warnings);
    }
    loaded.datasets = merge_runs(std::mem::take(&mut loaded.datasets));
    Ok(loaded)
}

/// Datasets that share a label, merged into one in the order they came: every input a
/// run of that target (IOzone's users run each configuration several times). Each
/// input's repetitions are renumbered after the previous input's, and the records keep
/// their run ids, so the analysis can take the runs as replicates.
fn merge_runs(datasets: Vec<Dataset>) -> Vec<Dataset> {
    let mut out: Vec<Dataset> = Vec::new();
    for mut d in datasets {
        let Some(into) = out.iter_mut().find(|o| o.label == d.label) else {
            out.push(d);
            continue;
        };
        let offset = into.records.iter().map(|r| r.rep + 1).max().unwrap_or(0);
        for r in d.records.iter_mut() {
            r.rep += offset;
        }
        into.records.append(&mut d.records);
        into.target = format!("{}; {}", into.target, d.target);
    }
    out
}

/// The fastest throughput believed, in KiB/s (about an exabyte per second): a figure above
/// it, or one that is not a number, is a damaged or invented record, not a measurement.
const MAX_PLAUSIBLE_KIB_S: f64 = 1e15;

/// Removes records whose figures cannot be measurements (not finite, negative, or above
/// `MAX_PLAUSIBLE_KIB_S`), so that no chart or table shows NaN or infinity; one warning each.
fn drop_implausible(records: &mut Vec<Record>, source: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    records.retain(|r| {
        let t = r.throughput_kib_s;
        let ok = t.is_finite() && (0.0..=MAX_PLAUSIBLE_KIB_S).contains(&t) && r.seconds.is_finite();
        if !ok {
            warnings.push(format!(
                "{}: skipped a record with an implausible figure ({} {}/{}: {t:.3e} KiB/s over {} s)",
                source.display(),
                r.op,
                r.file_size,
                r.record_size,
                r.seconds
            ));
        }
        ok
    });
    warnings
}

/// The largest file imported: IOzone's and fio's outputs are kilobytes to a few
/// megabytes; a quarter of a gigabyte is no such output, and is not read into memory.
const MAX_INPUT_BYTES: u64 = 256 << 20;
/// The largest run.json read (a manifest is a few kilobytes).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// Reads a regular file of at most `limit` bytes (checked before and while reading).
fn read_input(path: &Path, meta: &std::fs::Metadata, limit: u64) -> Result<Vec<u8>> {
    let shown = path.display();
    let too_big = || {
        ReportError(format!(
            "{shown}: larger than {} MiB, far above any IOzone, fio or sharebench output; not read",
            limit >> 20
        ))
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReportError(format!("{shown}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

fn load_one(path: &Path, label: Option<String>, loaded: &mut Loaded) -> Result<()> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(ReportError(format!(
            "{shown}: not a regular file or a directory"
        )));
    }
    if meta.is_dir() {
        let jsonl = path.join("results.jsonl");
        if !jsonl.is_file() {
            return load_runs_dir(path, label, loaded);
        }
        return load_sharebench(&jsonl, label, loaded);
    }
    if path.file_name().is_some_and(|n| n == "results.jsonl") {
        return load_sharebench(path, label, loaded);
    }
    let bytes = read_input(path, &meta, MAX_INPUT_BYTES)?;
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
    // Each file is a run of its own: two files of one name in two directories are not
    // one run, so the run is the path, not the name.
    let run = path.display().to_string();
    for r in records.iter_mut() {
        r.target = label.clone();
        r.run_id = run.clone();
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

/// A directory of runs: every result directory and every file in it (hidden ones
/// left out), in name order, under `label`, else (for files) the directory's name.
fn load_runs_dir(dir: &Path, label: Option<String>, loaded: &mut Loaded) -> Result<()> {
    let shown = dir.display();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ReportError(format!("{shown}: {e}")))?
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_file() || p.join("results.jsonl").is_file())
        .collect();
    entries.sort();
    if entries.is_empty() {
        return Err(ReportError(format!(
            "{shown}: not a sharebench result directory (no results.jsonl), and no results or files in it"
        )));
    }
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string());
    for p in entries {
        if p.is_dir() {
            load_sharebench(&p.join("results.jsonl"), label.clone(), loaded)?;
        } else {
            load_one(
                &p,
                Some(label.clone().unwrap_or_else(|| dir_name.clone())),
                loaded,
            )?;
        }
    }
    Ok(())
}

fn load_sharebench(jsonl: &Path, label: Option<String>, loaded: &mut Loaded) -> Result<()> {
    let shown = jsonl.display();
    let read = read_jsonl(jsonl).map_err(|e| ReportError(format!("{shown}: {e}")))?;
    for bad in &read.bad_lines {
        loaded.warnings.push(format!(
            "skipped a line that is not a record (cut off, or not what a run writes): {bad}"
        ));
    }
    if read.records.is_empty() {
        return Err(ReportError(match read.bad_lines.first() {
            None => format!("{shown}: no records (input is empty)"),
            Some(first) => format!(
                "{shown}: none of its lines is a record ({} cannot be read; first: {first})",
                read.bad_lines.len()
            ),
        }));
    }
    let dir = jsonl.parent().unwrap_or(Path::new("."));
    let run_json = dir.join("run.json");
    let manifest: Option<Manifest> = std::fs::metadata(&run_json)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|m| read_input(&run_json, &m, MAX_MANIFEST_BYTES).ok())
        .and_then(|b| serde_json::from_slice(&b).ok());
    if manifest.is_none() {
        loaded.warnings.push(format!(
            "{}: no readable run.json; the environment table will be thin",
            dir.display()
        ));
    }
    // Targets as the run lists them (the first is the baseline), whatever order it took
    // them in; without a run.json, in the order they first appear.
    let mut targets: Vec<String> = Vec::new();
    for r in &read.records {
        if !targets.contains(&r.target) {
            targets.push(r.target.clone());
        }
    }
    if let Some(m) = &manifest {
        let listed = |t: &String| m.targets.iter().position(|l| &l.name == t);
        targets.sort_by_key(|t| listed(t).unwrap_or(usize::MAX));
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
