//! results.xlsx: a "size classes" sheet, a "comparison" sheet (every cell of every target
//! against the baseline, with p and q), a "latency" sheet (every cell's ops/s, latency
//! percentiles, jitter, CV and p99 against the baseline), a "throughput mode" sheet when
//! there is one, and
//! one sheet per operation and target with IOzone's matrix (file sizes down, record sizes
//! across, median KiB/s). Numbers are written as numbers. Not: charts.

use crate::model::Analysis;
use crate::tails;
use crate::{ReportError, Result};
use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};
use std::collections::BTreeSet;

fn xerr(e: XlsxError) -> ReportError {
    ReportError(format!("cannot build results.xlsx: {e}"))
}

/// A sheet name Excel accepts (31 characters, none of []:*?/\), unique in `used`.
fn sheet_name(want: &str, used: &mut BTreeSet<String>) -> String {
    let clean: String = want
        .chars()
        .map(|c| if "[]:*?/\\'".contains(c) { '_' } else { c })
        .collect();
    let clean = clean.trim_matches('_').to_string();
    let base: String = clean.chars().take(31).collect();
    let mut name = if base.is_empty() {
        "sheet".to_string()
    } else {
        base
    };
    let mut n = 2;
    while used.contains(&name.to_lowercase()) {
        let suffix = format!("~{n}");
        name = clean.chars().take(31 - suffix.len()).collect::<String>() + &suffix;
        n += 1;
    }
    used.insert(name.to_lowercase());
    name
}

fn write_row(ws: &mut Worksheet, row: u32, items: &[&str], bold: &Format) -> Result<()> {
    for (c, t) in items.iter().enumerate() {
        ws.write_string_with_format(row, c as u16, *t, bold)
            .map_err(xerr)?;
    }
    Ok(())
}

fn num(ws: &mut Worksheet, row: u32, col: u16, v: Option<f64>) -> Result<()> {
    if let Some(v) = v.filter(|v| v.is_finite()) {
        ws.write_number(row, col, v).map_err(xerr)?;
    }
    Ok(())
}

/// Every cell with its operations per second, latency percentiles, jitter, CV and p99
/// against the baseline's.
fn latency_sheet(
    wb: &mut Workbook,
    a: &Analysis,
    bold: &Format,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    if !a.ops.iter().any(|op| {
        op.cells
            .values()
            .any(|c| c.values().any(|c| c.tail.is_some()))
    }) {
        return Ok(());
    }
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("latency", used)).map_err(xerr)?;
    let mut head = vec![
        "operation",
        "target",
        "file bytes",
        "record bytes",
        "median KiB/s",
        "ops/s",
    ];
    let pct: Vec<String> = tails::PERCENTILES
        .iter()
        .map(|p| format!("{p} µs"))
        .collect();
    head.extend(pct.iter().map(String::as_str));
    head.extend([
        "p99/p50",
        "throughput CV %",
        "p99 ratio vs baseline",
        "p99 verdict",
    ]);
    write_row(ws, 0, &head, bold)?;
    let mut row = 1u32;
    for op in &a.ops {
        for (label, cells) in &op.cells {
            for (k, c) in cells {
                ws.write_string(row, 0, op.op.name()).map_err(xerr)?;
                ws.write_string(row, 1, label).map_err(xerr)?;
                num(ws, row, 2, Some(k.0 as f64))?;
                num(ws, row, 3, Some(k.1 as f64))?;
                num(ws, row, 4, Some(c.median))?;
                num(ws, row, 5, Some(tails::iops(c.median, k.1)))?;
                let t = c.tail.as_ref();
                for i in 0..tails::PERCENTILES.len() {
                    num(ws, row, 6 + i as u16, t.and_then(|t| t.percentiles[i]))?;
                }
                num(ws, row, 12, t.map(|t| t.jitter))?;
                num(ws, row, 13, c.cv)?;
                let vs = op.p99_vs_baseline.get(label).and_then(|m| m.get(k));
                num(ws, row, 14, vs.map(|c| c.ratio))?;
                if let Some(vs) = vs {
                    ws.write_string(row, 15, vs.verdict.describe_lower_is_better())
                        .map_err(xerr)?;
                }
                row += 1;
            }
        }
    }
    Ok(())
}

pub fn render(a: &Analysis) -> Result<Vec<u8>> {
    let mut wb = Workbook::new();
    let bold = Format::new().set_bold();
    let mut used = BTreeSet::new();
    classes_sheet(&mut wb, a, &bold, &mut used)?;
    comparison_sheet(&mut wb, a, &bold, &mut used)?;
    latency_sheet(&mut wb, a, &bold, &mut used)?;
    throughput_sheet(&mut wb, a, &bold, &mut used)?;
    matrix_sheets(&mut wb, a, &bold, &mut used)?;
    wb.save_to_buffer().map_err(xerr)
}

/// Per operation, size class and target: median, peak, CV, CPU, IOPS, p99, the winner.
fn classes_sheet(
    wb: &mut Workbook,
    a: &Analysis,
    bold: &Format,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("size classes", used))
        .map_err(xerr)?;
    write_row(
        ws,
        0,
        &[
            "operation",
            "class",
            "target",
            "cells",
            "median KiB/s",
            "peak KiB/s",
            "peak file bytes",
            "peak record bytes",
            "CV % (median over cells)",
            "CPU %",
            "MiB per CPU s",
            "winner",
            "runner-up",
            "margin %",
            "p (paired repetitions)",
            "significant",
            "ops/s (records up to 64 KiB)",
            "p99 latency µs (median over cells)",
        ],
        bold,
    )?;
    let mut row = 1u32;
    for r in &a.classes {
        for s in &r.stats {
            ws.write_string(row, 0, r.op.name()).map_err(xerr)?;
            ws.write_string(row, 1, format!("{} ({})", r.class.name(), r.class.range()))
                .map_err(xerr)?;
            ws.write_string(row, 2, &s.label).map_err(xerr)?;
            ws.write_number(row, 3, s.cells as f64).map_err(xerr)?;
            num(ws, row, 4, Some(s.median))?;
            num(ws, row, 5, Some(s.peak))?;
            num(ws, row, 6, Some(s.peak_cell.0 as f64))?;
            num(ws, row, 7, Some(s.peak_cell.1 as f64))?;
            num(ws, row, 8, s.cv)?;
            num(ws, row, 9, s.cpu_pct)?;
            num(ws, row, 10, s.mib_per_cpu_s)?;
            ws.write_string(row, 11, r.winner.clone().unwrap_or_default())
                .map_err(xerr)?;
            ws.write_string(row, 12, r.runner_up.clone().unwrap_or_default())
                .map_err(xerr)?;
            num(ws, row, 13, r.margin_pct())?;
            num(ws, row, 14, r.versus.as_ref().and_then(|v| v.p))?;
            if r.versus.is_some() {
                ws.write_boolean(row, 15, r.winner_called()).map_err(xerr)?;
            }
            num(ws, row, 16, s.iops)?;
            num(ws, row, 17, s.p99_us)?;
            row += 1;
        }
    }

    Ok(())
}

/// Every cell of every target against the baseline, with p and q.
fn comparison_sheet(
    wb: &mut Workbook,
    a: &Analysis,
    bold: &Format,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("comparison", used)).map_err(xerr)?;
    write_row(
        ws,
        0,
        &[
            "operation",
            "target",
            "baseline",
            "file bytes",
            "record bytes",
            "target median KiB/s",
            "baseline median KiB/s",
            "ratio",
            "Welch p (log)",
            "BH q",
            "Mann-Whitney p",
            "verdict",
        ],
        bold,
    )?;
    let mut row = 1u32;
    for op in &a.ops {
        for (label, comps) in &op.vs_baseline {
            for (k, c) in comps {
                ws.write_string(row, 0, op.op.name()).map_err(xerr)?;
                ws.write_string(row, 1, label).map_err(xerr)?;
                ws.write_string(row, 2, &a.baseline).map_err(xerr)?;
                num(ws, row, 3, Some(k.0 as f64))?;
                num(ws, row, 4, Some(k.1 as f64))?;
                num(
                    ws,
                    row,
                    5,
                    op.cells.get(label).and_then(|m| m.get(k)).map(|s| s.median),
                )?;
                num(
                    ws,
                    row,
                    6,
                    op.cells
                        .get(&a.baseline)
                        .and_then(|m| m.get(k))
                        .map(|s| s.median),
                )?;
                num(ws, row, 7, Some(c.ratio))?;
                num(ws, row, 8, c.p)?;
                num(ws, row, 9, c.q)?;
                num(ws, row, 10, c.p_mwu)?;
                ws.write_string(row, 11, c.verdict.describe())
                    .map_err(xerr)?;
                row += 1;
            }
        }
    }

    Ok(())
}

/// Throughput-mode rows, when there are any.
fn throughput_sheet(
    wb: &mut Workbook,
    a: &Analysis,
    bold: &Format,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    if !a.throughput.is_empty() {
        let ws = wb.add_worksheet();
        ws.set_name(sheet_name("throughput mode", used))
            .map_err(xerr)?;
        write_row(
            ws,
            0,
            &[
                "operation",
                "workers",
                "file bytes",
                "record bytes",
                "target",
                "reps",
                "children see KiB/s",
                "parent sees KiB/s",
                "min worker KiB/s",
                "max worker KiB/s",
                "avg worker KiB/s",
                "CV %",
                "ratio vs baseline (geometric means)",
                "95% low",
                "95% high",
                "p (paired t or Welch)",
            ],
            bold,
        )?;
        for (i, t) in a.throughput.iter().enumerate() {
            let row = i as u32 + 1;
            ws.write_string(row, 0, t.op.name()).map_err(xerr)?;
            num(ws, row, 1, Some(f64::from(t.threads)))?;
            num(ws, row, 2, Some(t.file_size as f64))?;
            num(ws, row, 3, Some(t.record_size as f64))?;
            ws.write_string(row, 4, &t.label).map_err(xerr)?;
            num(ws, row, 5, Some(t.reps as f64))?;
            num(ws, row, 6, Some(t.children.median))?;
            num(ws, row, 7, Some(t.parent_sees))?;
            num(ws, row, 8, Some(t.min_worker))?;
            num(ws, row, 9, Some(t.max_worker))?;
            num(ws, row, 10, Some(t.avg_worker))?;
            num(ws, row, 11, t.children.cv)?;
            num(ws, row, 12, t.vs_baseline.map(|v| v.ratio()))?;
            num(ws, row, 13, t.vs_baseline.and_then(|v| v.ci).map(|c| c.0))?;
            num(ws, row, 14, t.vs_baseline.and_then(|v| v.ci).map(|c| c.1))?;
            num(ws, row, 15, t.vs_baseline.and_then(|v| v.p))?;
        }
    }

    Ok(())
}

/// One sheet per operation and target with IOzone's matrix.
fn matrix_sheets(
    wb: &mut Workbook,
    a: &Analysis,
    bold: &Format,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    for op in &a.ops {
        for label in &a.labels {
            let Some(cells) = op.cells.get(label) else {
                continue;
            };
            let ws = wb.add_worksheet();
            ws.set_name(sheet_name(&format!("{} {}", op.op, label), used))
                .map_err(xerr)?;
            ws.write_string_with_format(
                0,
                0,
                format!(
                    "{} — {} (median KiB/s; top row record size KB, left column file size KB)",
                    op.op, label
                ),
                bold,
            )
            .map_err(xerr)?;
            let files = op.file_sizes();
            let recs = op.record_sizes();
            for (j, r) in recs.iter().enumerate() {
                ws.write_number_with_format(1, j as u16 + 1, (*r / 1024) as f64, bold)
                    .map_err(xerr)?;
            }
            for (i, f) in files.iter().enumerate() {
                let row = i as u32 + 2;
                ws.write_number_with_format(row, 0, (*f / 1024) as f64, bold)
                    .map_err(xerr)?;
                for (j, r) in recs.iter().enumerate() {
                    num(
                        ws,
                        row,
                        j as u16 + 1,
                        cells.get(&(*f, *r)).map(|s| s.median),
                    )?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheet_names_are_valid_and_unique() {
        let mut used = BTreeSet::new();
        assert_eq!(sheet_name("write /dev/shm", &mut used), "write _dev_shm");
        let long = "random-read a-very-long-target-name-indeed";
        let a = sheet_name(long, &mut used);
        let b = sheet_name(long, &mut used);
        assert!(a.chars().count() <= 31 && b.chars().count() <= 31 && a != b);
    }
}
