//! IOzone's `-b` workbook layout, read from a grid of cells whatever the file format (BIFF2
//! from `biff`, `.xlsx`/BIFF8 from `calamine`): the auto-mode blocks ("Writer Report", a
//! row of record sizes, rows of file size and values) and the throughput-mode rows
//! (children-see per number of workers). Not: parsing bytes (see `biff`).

use super::{iozone_cpu_report_op, iozone_report_op, record, Imported};
use sharebench_core::record::WorkloadKind;
use sharebench_core::record::{Record, Scope, ThroughputSummary};
use std::collections::BTreeMap;

/// One cell value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Number(f64),
}

/// Cells by (row, column).
#[derive(Debug, Clone, Default)]
pub struct Grid {
    cells: BTreeMap<(u32, u16), Value>,
}

impl Grid {
    pub fn set(&mut self, row: u32, col: u16, v: Value) {
        self.cells.insert((row, col), v);
    }

    pub fn get(&self, row: u32, col: u16) -> Option<&Value> {
        self.cells.get(&(row, col))
    }

    fn text(&self, row: u32, col: u16) -> Option<&str> {
        match self.get(row, col)? {
            Value::Text(t) => Some(t),
            Value::Number(_) => None,
        }
    }

    fn number(&self, row: u32, col: u16) -> Option<f64> {
        match self.get(row, col)? {
            Value::Number(x) => Some(*x),
            Value::Text(t) => t.trim().parse().ok(),
        }
    }

    fn last_row(&self) -> u32 {
        self.cells.keys().map(|(r, _)| *r).max().unwrap_or(0)
    }

    fn last_col(&self, row: u32) -> u16 {
        self.cells
            .range((row, 0)..=(row, u16::MAX))
            .map(|((_, c), _)| *c)
            .max()
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
}

/// The most a workbook may unpack to: its parts are XML, and an IOzone workbook's are small.
const MAX_UNPACKED_BYTES: u64 = 256 << 20;
/// The most cells a sheet may hold (an IOzone workbook holds a few thousand).
const MAX_CELLS: usize = 4_000_000;

/// Reads the first sheet of an `.xlsx` (or BIFF5/8 `.xls`) workbook with calamine. An
/// `.xlsx` is unpacked once first, bytes counted and thrown away, so that a zip bomb is
/// refused before calamine holds any of it; its cells are then read one by one, so that a
/// sheet whose one cell lies at its far corner costs one cell, not the whole rectangle.
pub fn read_with_calamine(bytes: &[u8]) -> Result<Grid, String> {
    use calamine::{Reader, Sheets};
    if bytes.starts_with(b"PK\x03\x04") {
        check_unpacked_size(bytes, MAX_UNPACKED_BYTES)?;
    } else if bytes.starts_with(&CFB_MAGIC) {
        check_biff_extent(bytes)?;
    }
    let cursor = std::io::Cursor::new(bytes.to_vec());
    let mut wb = calamine::open_workbook_auto_from_rs(cursor)
        .map_err(|e| format!("cannot read workbook: {e}"))?;
    let Some(name) = wb.sheet_names().first().cloned() else {
        return Err("workbook has no sheet".into());
    };
    if let Sheets::Xlsx(x) = &mut wb {
        return read_cells(x, &name);
    }
    let range = wb
        .worksheet_range(&name)
        .map_err(|e| format!("cannot read sheet '{name}': {e}"))?;
    let mut grid = Grid::default();
    let (r0, c0) = range.start().unwrap_or((0, 0));
    for (r, row) in range.rows().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let (row_i, col_i) = (r0 as usize + r, c0 as usize + c);
            let v = match cell {
                calamine::Data::Int(i) => Value::Number(*i as f64),
                calamine::Data::Float(f) => Value::Number(*f),
                calamine::Data::String(s) => Value::Text(s.clone()),
                _ => continue,
            };
            put(&mut grid, row_i as u64, col_i as u64, v);
        }
    }
    Ok(grid)
}

/// The start of an OLE compound file, which holds a BIFF5/8 `.xls`'s workbook stream.
const CFB_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// Refuses a BIFF5/8 workbook whose sheets span more than [`MAX_CELLS`] cells, before
/// calamine reads it: calamine builds each sheet as one dense rectangle from its first to
/// its last cell, so two cells at opposite corners (A1 and IV65536) would cost 16.7
/// million. The workbook stream's cell records are scanned for each sheet's corners.
fn check_biff_extent(bytes: &[u8]) -> Result<(), String> {
    let mut cf = cfb::CompoundFile::open(std::io::Cursor::new(bytes))
        .map_err(|e| format!("cannot read workbook: {e}"))?;
    let name = ["/Workbook", "/Book"]
        .into_iter()
        .find(|n| cf.exists(n))
        .ok_or("cannot read workbook: no Workbook stream")?;
    let mut stream = Vec::new();
    std::io::Read::read_to_end(
        &mut cf
            .open_stream(name)
            .map_err(|e| format!("cannot read workbook: {e}"))?,
        &mut stream,
    )
    .map_err(|e| format!("cannot read workbook: {e}"))?;
    let cells = biff_sheet_extents(&stream).into_iter().max().unwrap_or(0);
    if cells > MAX_CELLS as u64 {
        return Err(format!(
            "a sheet spans {cells} cells from its first to its last; an IOzone workbook holds a few thousand"
        ));
    }
    Ok(())
}

/// For each BOF..EOF substream of a BIFF5/8 workbook stream, the cells of the rectangle
/// from its first to its last cell record (what calamine would allocate).
fn biff_sheet_extents(stream: &[u8]) -> Vec<u64> {
    // Cell records (MS-XLS 2.4): row and column lead their data; MULRK and MULBLANK end
    // with their last column.
    const CELLS: [u16; 9] = [
        0x0006, 0x0201, 0x0203, 0x0204, 0x0205, 0x027E, 0x00FD, 0x00D6, 0x0406,
    ];
    const MULTI: [u16; 2] = [0x00BD, 0x00BE];
    let mut out = Vec::new();
    let mut bounds: Option<(u32, u32, u32, u32)> = None;
    let mut at = 0usize;
    let u16_at = |b: &[u8], i: usize| b.get(i..i + 2).map(|x| u16::from_le_bytes([x[0], x[1]]));
    while let (Some(kind), Some(len)) = (u16_at(stream, at), u16_at(stream, at + 2)) {
        let data = stream.get(at + 4..at + 4 + len as usize).unwrap_or(&[]);
        at += 4 + len as usize;
        let cell = match kind {
            k if CELLS.contains(&k) => u16_at(data, 0).zip(u16_at(data, 2)).map(|(r, c)| (r, c, c)),
            k if MULTI.contains(&k) && data.len() >= 6 => u16_at(data, 0)
                .zip(u16_at(data, 2))
                .zip(u16_at(data, data.len() - 2))
                .map(|((r, c0), c1)| (r, c0, c1)),
            0x0809 => {
                bounds = None;
                None
            }
            0x000A => {
                if let Some((r0, r1, c0, c1)) = bounds.take() {
                    out.push(u64::from(r1 - r0 + 1) * u64::from(c1 - c0 + 1));
                }
                None
            }
            _ => None,
        };
        if let Some((r, c0, c1)) = cell {
            let (r, c0, c1) = (u32::from(r), u32::from(c0), u32::from(c1.max(c0)));
            bounds = Some(match bounds {
                None => (r, r, c0, c1),
                Some((a, b, c, d)) => (a.min(r), b.max(r), c.min(c0), d.max(c1)),
            });
        }
    }
    if let Some((r0, r1, c0, c1)) = bounds {
        out.push(u64::from(r1 - r0 + 1) * u64::from(c1 - c0 + 1));
    }
    out
}

/// The first sheet of an `.xlsx`, cell by cell; at most [`MAX_CELLS`] cells.
fn read_cells<RS: std::io::Read + std::io::Seek>(
    x: &mut calamine::Xlsx<RS>,
    name: &str,
) -> Result<Grid, String> {
    let mut cells = x
        .worksheet_cells_reader(name)
        .map_err(|e| format!("cannot read sheet '{name}': {e}"))?;
    let mut grid = Grid::default();
    let mut n = 0usize;
    while let Some(cell) = cells
        .next_cell()
        .map_err(|e| format!("cannot read sheet '{name}': {e}"))?
    {
        n += 1;
        if n > MAX_CELLS {
            return Err(format!(
                "sheet '{name}' holds more than {MAX_CELLS} cells; an IOzone workbook holds a few thousand"
            ));
        }
        let (row, col) = cell.get_position();
        if let Some(v) = value_of(cell.get_value().clone()) {
            put(&mut grid, u64::from(row), u64::from(col), v);
        }
    }
    Ok(grid)
}

/// A cell's value as the importer uses it: numbers and text; nothing else.
fn value_of(cell: calamine::DataRef<'_>) -> Option<Value> {
    use calamine::DataRef;
    match cell {
        DataRef::Int(i) => Some(Value::Number(i as f64)),
        DataRef::Float(f) => Some(Value::Number(f)),
        DataRef::String(s) => Some(Value::Text(s)),
        DataRef::SharedString(s) => Some(Value::Text(s.to_string())),
        _ => None,
    }
}

fn put(grid: &mut Grid, row: u64, col: u64, v: Value) {
    if let (Ok(row), Ok(col)) = (u32::try_from(row), u16::try_from(col)) {
        grid.set(row, col, v);
    }
}

/// Refuses a zip whose entries unpack to more than `limit` bytes in all, by unpacking
/// them (what the headers declare may lie) into nothing, stopping at the limit.
fn check_unpacked_size(bytes: &[u8], limit: u64) -> Result<(), String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("cannot read workbook: {e}"))?;
    let mut total = 0u64;
    for i in 0..zip.len() {
        let entry = zip
            .by_index(i)
            .map_err(|e| format!("cannot read workbook: {e}"))?;
        let mut capped = std::io::Read::take(entry, limit - total + 1);
        total += std::io::copy(&mut capped, &mut std::io::sink())
            .map_err(|e| format!("cannot read workbook: {e}"))?;
        if total > limit {
            return Err(format!(
                "the workbook unpacks to more than {} MiB (a zip bomb?); an IOzone workbook unpacks to a few hundred KiB",
                limit >> 20
            ));
        }
    }
    Ok(())
}

/// The records of an IOzone `-b` sheet; an error when the sheet has none.
pub fn parse(grid: &Grid, source: &str) -> Result<Imported, String> {
    let mut out = Imported::default();
    let command = grid.text(0, 0).unwrap_or("").to_string();
    let throughput = (0..=grid.last_row().min(8))
        .filter_map(|r| grid.text(r, 0))
        .any(|t| t.trim_start().starts_with("Throughput report"));
    let mut records = if throughput {
        parse_throughput(grid, &command, source)
    } else {
        parse_auto(grid, source)
    };
    let unit = (0..=grid.last_row().min(8))
        .filter_map(|r| grid.text(r, 0))
        .find(|t| t.starts_with("Output is in"))
        .unwrap_or("");
    if unit.contains("ops/sec") {
        super::convert_units(&mut records, super::Unit::OpsPerSec);
        out.notes.push(format!(
            "{source}: operations per second converted to KiB/s"
        ));
    } else if unit.contains("microseconds") {
        super::convert_units(&mut records, super::Unit::MicrosPerOp);
        out.notes.push(format!(
            "{source}: microseconds per operation converted to KiB/s"
        ));
    }
    super::iozone_text::number_repetitions(&mut records);
    if records.is_empty() {
        return Err("no IOzone report found in the workbook".into());
    }
    out.records = records;
    Ok(out)
}

fn parse_auto(grid: &Grid, source: &str) -> Vec<Record> {
    let mut perf = Vec::new();
    let mut cpu: BTreeMap<(sharebench_core::op::Op, u64, u64), f64> = BTreeMap::new();
    let last = grid.last_row();
    let mut r = 0u32;
    while r <= last {
        let Some(title) = grid.text(r, 0) else {
            r += 1;
            continue;
        };
        let (op, is_cpu) = match (iozone_cpu_report_op(title), iozone_report_op(title)) {
            (Some(op), _) => (op, true),
            (None, Some(op)) if title.trim().to_ascii_lowercase().ends_with("report") => {
                (op, false)
            }
            _ => {
                r += 1;
                continue;
            }
        };
        let header = r + 1;
        let recs: Vec<(u16, f64)> = (1..=grid.last_col(header))
            .filter_map(|c| grid.number(header, c).map(|v| (c, v)))
            .collect();
        r = header + 1;
        while r <= last {
            let Some(kb) = grid.number(r, 0) else { break };
            for &(c, rec_kb) in &recs {
                let Some(v) = grid.number(r, c) else { continue };
                if v > 0.0 && kb > 0.0 && rec_kb > 0.0 && kb.is_finite() && rec_kb.is_finite() {
                    let (f, rs) = ((kb * 1024.0) as u64, (rec_kb * 1024.0) as u64);
                    if is_cpu {
                        cpu.insert((op, f, rs), v);
                    } else {
                        perf.push(record(WorkloadKind::Iozone, source, op.into(), f, rs, v));
                    }
                }
            }
            r += 1;
        }
    }
    for p in perf.iter_mut() {
        if let Some(&pct) =
            p.op.io()
                .and_then(|op| cpu.get(&(op, p.file_size, p.record_size)))
        {
            p.cpu_util_pct = pct;
            p.cpu_total_s = pct / 100.0 * p.seconds;
        }
    }
    perf
}

/// Worker counts of the runs of a throughput command line: each `-t N`, or `-l A -u B`.
fn thread_counts(command: &str) -> Vec<u32> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut ts = Vec::new();
    let (mut lo, mut hi) = (None, None);
    for (i, w) in words.iter().enumerate() {
        let val = |flag: &str| -> Option<u32> {
            if *w == flag {
                words.get(i + 1)?.parse().ok()
            } else {
                w.strip_prefix(flag)?.parse().ok()
            }
        };
        if let Some(n) = val("-t") {
            ts.push(n);
        }
        if let Some(n) = val("-l") {
            lo = Some(n);
        }
        if let Some(n) = val("-u") {
            hi = Some(n);
        }
    }
    if let (Some(l), Some(h)) = (lo, hi) {
        if h >= l && h - l < 1024 {
            return (l..=h).collect();
        }
    }
    ts
}

/// `-s` of a command line in KiB (IOzone's default unit), or 512.
fn file_kb(command: &str) -> u64 {
    let words: Vec<&str> = command.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let v = if *w == "-s" {
            words.get(i + 1).copied()
        } else {
            w.strip_prefix("-s")
        };
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            if let Ok(b) =
                sharebench_core::size::parse_size(v, sharebench_core::size::BareUnit::KiB)
            {
                return b / 1024;
            }
        }
    }
    512
}

fn parse_throughput(grid: &Grid, command: &str, source: &str) -> Vec<Record> {
    let threads = thread_counts(command);
    let fkb = file_kb(command);
    let mut out = Vec::new();
    let mut rec_kb = 4u64;
    let mut in_cpu = false;
    // The records of each throughput row, by column; CPU rows attach to them by position,
    // because IOzone labels its CPU rows by a fixed list, not by the phases that ran.
    let mut rows: Vec<Vec<(u16, usize)>> = Vec::new();
    let mut cpu_row = 0;
    for r in 0..=grid.last_row() {
        let Some(t) = grid.text(r, 0) else { continue };
        if let Some(rest) = t.trim().strip_prefix("Record size = ") {
            rec_kb = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(rec_kb);
            continue;
        }
        if t.starts_with("CPU utilization report") {
            in_cpu = true;
            continue;
        }
        if in_cpu {
            let cells: Vec<(u16, f64)> = (2..=grid.last_col(r))
                .filter_map(|c| grid.number(r, c).map(|v| (c, v)))
                .collect();
            if cells.is_empty()
                || t.trim().starts_with("Record size")
                || t.starts_with("Output is in")
            {
                continue;
            }
            for (c, pct) in cells {
                let found = rows
                    .get(cpu_row)
                    .and_then(|cols| cols.iter().find(|(col, _)| *col == c));
                if let Some(&(_, idx)) = found {
                    let rec: &mut Record = &mut out[idx];
                    rec.cpu_util_pct = pct;
                    rec.cpu_total_s = pct / 100.0 * rec.seconds;
                }
            }
            cpu_row += 1;
            continue;
        }
        let Some(op) = iozone_report_op(t) else {
            continue;
        };
        let mut cols = Vec::new();
        for c in 2..=grid.last_col(r) {
            let Some(v) = grid.number(r, c).filter(|v| *v > 0.0) else {
                continue;
            };
            let n = threads.get(usize::from(c - 2)).copied().unwrap_or(0);
            let mut rec = record(
                WorkloadKind::Iozone,
                source,
                op.into(),
                fkb * 1024,
                rec_kb * 1024,
                v,
            );
            rec.scope = Scope::Aggregate;
            rec.threads = n;
            rec.bytes = rec.file_size.saturating_mul(u64::from(n.max(1)));
            rec.seconds = rec.bytes as f64 / 1024.0 / v;
            rec.throughput = Some(ThroughputSummary {
                children_see_kib_s: v,
                ..Default::default()
            });
            cols.push((c, out.len()));
            out.push(rec);
        }
        rows.push(cols);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A BIFF8 record.
    fn record(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut r = kind.to_le_bytes().to_vec();
        r.extend((data.len() as u16).to_le_bytes());
        r.extend(data);
        r
    }

    /// A NUMBER record at (row, col).
    fn number(row: u16, col: u16) -> Vec<u8> {
        let mut d = row.to_le_bytes().to_vec();
        d.extend(col.to_le_bytes());
        d.extend([0, 0]);
        d.extend(1.5f64.to_le_bytes());
        record(0x0203, &d)
    }

    /// An `.xls`: a compound file whose Workbook stream is `stream`.
    fn xls(stream: &[u8]) -> Vec<u8> {
        let mut cf = cfb::CompoundFile::create(std::io::Cursor::new(Vec::new())).unwrap();
        cf.create_stream("/Workbook")
            .unwrap()
            .write_all(stream)
            .unwrap();
        cf.flush().unwrap();
        cf.into_inner().into_inner()
    }

    #[test]
    fn a_biff8_sheet_spanning_millions_of_cells_is_refused_before_calamine() {
        let bof = record(0x0809, &[0, 6, 0x10, 0, 0, 0, 0, 0]);
        let eof = record(0x000A, &[]);
        // Two cells at opposite corners: calamine would allocate the 16.7 million between.
        let corners = [bof.clone(), number(0, 0), number(65535, 255), eof.clone()].concat();
        assert_eq!(biff_sheet_extents(&corners), vec![65536 * 256]);
        let e = read_with_calamine(&xls(&corners)).unwrap_err();
        assert!(e.contains("spans 16777216 cells"), "{e}");
        // A MULRK's last column counts, and each sheet is its own rectangle.
        let mut mulrk = 2u16.to_le_bytes().to_vec();
        mulrk.extend(1u16.to_le_bytes());
        mulrk.extend([0u8; 12]);
        mulrk.extend(9u16.to_le_bytes());
        let two = [
            bof.clone(),
            number(0, 0),
            record(0x00BD, &mulrk),
            eof.clone(),
            bof,
            number(5, 5),
            eof,
        ]
        .concat();
        assert_eq!(biff_sheet_extents(&two), vec![3 * 10, 1]);
        assert!(check_biff_extent(&xls(&two)).is_ok());
    }

    /// A minimal .xlsx whose one sheet is `sheet` (the XML of xl/worksheets/sheet1.xml).
    fn xlsx(sheet: &[u8]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let parts: [(&str, &[u8]); 5] = [
            ("[Content_Types].xml", br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#),
            ("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#),
            ("xl/workbook.xml", br#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#),
            ("xl/_rels/workbook.xml.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#),
            ("xl/worksheets/sheet1.xml", sheet),
        ];
        for (name, bytes) in parts {
            zip.start_file(name, opts).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    const SHEET_START: &str = r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#;

    /// One cell at the far corner of the largest sheet: read as one cell, not as the
    /// 17 billion of the rectangle from A1 (which once aborted `report`).
    #[test]
    fn a_cell_at_the_far_corner_costs_one_cell() {
        let sheet = format!(
            r#"{SHEET_START}<dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1"><v>7</v></c></row><row r="1048576"><c r="XFD1048576"><v>42</v></c></row></sheetData></worksheet>"#
        );
        let grid = read_with_calamine(&xlsx(sheet.as_bytes())).unwrap();
        assert_eq!(grid.number(0, 0), Some(7.0));
        assert_eq!(grid.number(1_048_575, 16_383), Some(42.0));
        assert_eq!(grid.cells.len(), 2);
    }

    /// A zip bomb: a few hundred KiB that unpack to more than the limit, refused while
    /// counted, before calamine holds any of it.
    #[test]
    fn a_workbook_that_unpacks_past_the_limit_is_refused() {
        let mut sheet = SHEET_START.as_bytes().to_vec();
        sheet.resize(sheet.len() + (MAX_UNPACKED_BYTES as usize) + 1024, b' ');
        sheet.extend_from_slice(b"<sheetData/></worksheet>");
        let bomb = xlsx(&sheet);
        assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
        let e = read_with_calamine(&bomb).unwrap_err();
        assert!(e.contains("unpacks to more than 256 MiB"), "{e}");
    }

    #[test]
    fn auto_layout_blocks() {
        let mut g = Grid::default();
        g.set(0, 0, Value::Text("iozone -a -b x.xls ".into()));
        g.set(
            2,
            0,
            Value::Text("The top row is records sizes, the left column is file sizes".into()),
        );
        g.set(3, 0, Value::Text("Writer Report".into()));
        g.set(4, 1, Value::Number(4.0));
        g.set(4, 2, Value::Number(8.0));
        g.set(5, 0, Value::Number(64.0));
        g.set(5, 1, Value::Number(1000.0));
        g.set(5, 2, Value::Number(2000.0));
        g.set(6, 0, Value::Text("Re-writer Report".into()));
        g.set(7, 1, Value::Number(4.0));
        g.set(8, 0, Value::Number(64.0));
        g.set(8, 1, Value::Number(3000.0));
        let r = parse(&g, "x").unwrap().records;
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[1].op.name(), r[1].record_size, r[1].throughput_kib_s),
            ("write", 8192, 2000.0)
        );
        assert_eq!(r[2].op.name(), "rewrite");
    }

    #[test]
    fn throughput_layout_rows() {
        let mut g = Grid::default();
        g.set(0, 0, Value::Text("iozone -t 4 -s 1m -i 0 -b x.xls ".into()));
        g.set(
            1,
            0,
            Value::Text(
                "Throughput report Y-axis is type of test X-axis is number of processes".into(),
            ),
        );
        g.set(2, 0, Value::Text("Record size = 4 Kbytes".into()));
        g.set(3, 0, Value::Text("Output is in Kbytes/sec".into()));
        g.set(4, 0, Value::Text("  Initial write ".into()));
        g.set(4, 2, Value::Number(812345.67));
        let r = parse(&g, "x").unwrap().records;
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].threads, r[0].file_size, r[0].record_size),
            (4, 1 << 20, 4096)
        );
        assert_eq!(r[0].scope, Scope::Aggregate);
    }
}
