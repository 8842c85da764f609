//! The -b workbook: a sheet of labels and numbers at (row, column), written either as
//! IOzone's own BIFF2 `.xls` (libbif: BOF, fixed 268-byte LABELs, 19-byte NUMBERs, EOF,
//! byte for byte) or, for a name ending in `.xlsx`, as a modern workbook with the same cells.

use std::io;
use std::path::Path;

/// One cell value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Label(String),
    Number(f64),
}

/// One cell, in the order IOzone emits it.
#[derive(Debug, Clone, PartialEq)]
pub struct SheetCell {
    pub row: u32,
    pub col: u16,
    pub value: Value,
}

/// The cells of the one worksheet, in emission order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sheet {
    pub cells: Vec<SheetCell>,
}

impl Sheet {
    pub fn label(&mut self, row: u32, col: u16, text: &str) {
        self.cells.push(SheetCell {
            row,
            col,
            value: Value::Label(text.to_string()),
        });
    }

    pub fn number(&mut self, row: u32, col: u16, v: f64) {
        self.cells.push(SheetCell {
            row,
            col,
            value: Value::Number(v),
        });
    }
}

/// BIFF2 BOF: type 9, length 4, Excel version 2, worksheet (0x10).
pub fn biff_bof() -> [u8; 8] {
    [0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00]
}

/// BIFF2 EOF.
pub fn biff_eof() -> [u8; 4] {
    [0x0a, 0x00, 0x00, 0x00]
}

/// Row and column as libbif writes them: the low 16 bits, little-endian.
fn row_col(row: u32, col: u16) -> [u8; 4] {
    let r = (row & 0xffff) as u16;
    let [r0, r1] = r.to_le_bytes();
    let [c0, c1] = col.to_le_bytes();
    [r0, r1, c0, c1]
}

/// BIFF2 NUMBER: type 3, length 15, row, column, 3 attribute bytes, IEEE double (19 bytes).
pub fn biff_number(row: u32, col: u16, v: f64) -> [u8; 19] {
    let mut out = [0u8; 19];
    out[..4].copy_from_slice(&[0x03, 0x00, 0x0f, 0x00]);
    out[4..8].copy_from_slice(&row_col(row, col));
    out[11..].copy_from_slice(&v.to_le_bytes());
    out
}

/// BIFF2 LABEL as libbif writes it: type 4, declared length 264, row, column, 3 attribute
/// bytes, the length byte (strlen truncated to 8 bits), then a fixed 256-byte NUL-padded
/// text (268 bytes in all). Text over 255 bytes is cut at 254, as libbif does.
pub fn biff_label(row: u32, col: u16, text: &str) -> [u8; 268] {
    let mut out = [0u8; 268];
    out[..4].copy_from_slice(&[0x04, 0x00, 0x08, 0x01]);
    out[4..8].copy_from_slice(&row_col(row, col));
    let bytes = text.as_bytes();
    // C strlen stops at a NUL.
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    out[11] = (len & 0xff) as u8;
    let kept = if len > 255 { 254 } else { len };
    out[12..12 + kept].copy_from_slice(&bytes[..kept]);
    out
}

/// The whole BIFF2 file for a sheet.
pub fn biff_bytes(sheet: &Sheet) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + sheet.cells.len() * 19);
    out.extend_from_slice(&biff_bof());
    for c in &sheet.cells {
        match &c.value {
            Value::Label(t) => out.extend_from_slice(&biff_label(c.row, c.col, t)),
            Value::Number(v) => out.extend_from_slice(&biff_number(c.row, c.col, *v)),
        }
    }
    out.extend_from_slice(&biff_eof());
    out
}

/// Writes the sheet to `path`: `.xlsx` (any case) as a modern workbook, anything else as
/// IOzone's BIFF2.
pub fn write(path: &Path, sheet: &Sheet) -> io::Result<()> {
    let is_xlsx = path
        .extension()
        .map(|e| e.to_string_lossy().eq_ignore_ascii_case("xlsx"))
        .unwrap_or(false);
    let bytes = if is_xlsx {
        xlsx_bytes(sheet)?
    } else {
        biff_bytes(sheet)
    };
    // Replaces the file as IOzone does, but never writes through a symlink of that name.
    let (dir, name) = sharebench_core::safe_dir::parent_and_name(path)?;
    dir.replace(&name, &bytes, 0o644)
}

fn xlsx_bytes(sheet: &Sheet) -> io::Result<Vec<u8>> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let ws = book.add_worksheet();
    for c in &sheet.cells {
        let done = match &c.value {
            Value::Label(t) => ws.write_string(c.row, c.col, t.as_str()).map(|_| ()),
            Value::Number(v) => ws.write_number(c.row, c.col, *v).map(|_| ()),
        };
        done.map_err(io::Error::other)?;
    }
    book.save_to_buffer().map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny BIFF2 reader for the round trip: BOF, LABEL, NUMBER, EOF only.
    fn read_biff(bytes: &[u8]) -> Result<Sheet, String> {
        let mut sheet = Sheet::default();
        let mut at = 0;
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        if bytes.len() < 8 || bytes[..8] != biff_bof() {
            return Err("no BOF".into());
        }
        at += 8;
        loop {
            if at + 4 > bytes.len() {
                return Err("no EOF".into());
            }
            let (kind, len) = (u16_at(at), usize::from(u16_at(at + 2)));
            match kind {
                0x0a => {
                    return if at + 4 == bytes.len() {
                        Ok(sheet)
                    } else {
                        Err("data after EOF".into())
                    }
                }
                0x03 => {
                    let (row, col) = (u32::from(u16_at(at + 4)), u16_at(at + 6));
                    let mut v = [0u8; 8];
                    v.copy_from_slice(&bytes[at + 11..at + 19]);
                    sheet.number(row, col, f64::from_le_bytes(v));
                    at += 4 + len;
                }
                0x04 => {
                    let (row, col) = (u32::from(u16_at(at + 4)), u16_at(at + 6));
                    let n = usize::from(bytes[at + 11]);
                    let text = &bytes[at + 12..at + 12 + n];
                    let end = text.iter().position(|&b| b == 0).unwrap_or(n);
                    sheet.label(row, col, &String::from_utf8_lossy(&text[..end]));
                    // libbif writes the whole struct: 268 bytes, though it declares 264.
                    at += 268;
                }
                other => return Err(format!("unexpected record {other:#x}")),
            }
        }
    }

    #[test]
    fn records_are_byte_exact() {
        assert_eq!(biff_bof(), [9, 0, 4, 0, 2, 0, 0x10, 0]);
        assert_eq!(biff_eof(), [0x0a, 0, 0, 0]);
        let n = biff_number(2, 3, 1.0);
        assert_eq!(n[..11], [3, 0, 0x0f, 0, 2, 0, 3, 0, 0, 0, 0]);
        assert_eq!(n[11..], [0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
        let n = biff_number(0x1234, 0x0102, -2.5);
        assert_eq!(n[4..8], [0x34, 0x12, 0x02, 0x01]);
        assert_eq!(n[11..], (-2.5f64).to_le_bytes());
        let l = biff_label(1, 0, "Writer Report");
        assert_eq!(l.len(), 268);
        assert_eq!(l[..12], [4, 0, 8, 1, 1, 0, 0, 0, 0, 0, 0, 13]);
        assert_eq!(&l[12..25], b"Writer Report");
        assert!(l[25..].iter().all(|&b| b == 0));
    }

    #[test]
    fn long_labels_are_cut_like_libbif() {
        let long = "x".repeat(300);
        let l = biff_label(0, 0, &long);
        assert_eq!(l[11], (300 & 0xff) as u8);
        assert!(l[12..12 + 254].iter().all(|&b| b == b'x'));
        assert!(l[12 + 254..].iter().all(|&b| b == 0));
        let l = biff_label(0, 0, &"y".repeat(255));
        assert_eq!(l[11], 255);
        assert_eq!(l[12 + 254], b'y');
        assert_eq!(l[267], 0, "str_array[255] is written as 0");
    }

    #[test]
    fn biff_round_trip() {
        let mut s = Sheet::default();
        s.label(0, 0, "sharebench iozone -a -b x.xls ");
        s.label(1, 0, " ");
        s.label(
            2,
            0,
            "The top row is records sizes, the left column is file sizes",
        );
        s.label(3, 0, "Writer Report");
        s.number(4, 1, 4.0);
        s.number(5, 0, 64.0);
        s.number(5, 1, 123456.0);
        s.number(70000, 2, 0.5); // rows wrap at 16 bits, as in libbif
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.xls");
        write(&path, &s).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 8 + 4 * 268 + 4 * 19 + 4);
        let back = read_biff(&bytes).unwrap();
        let mut expected = s.clone();
        expected.cells[7].row = 70000 & 0xffff;
        assert_eq!(back, expected);
    }

    #[test]
    fn xlsx_is_written_for_xlsx_names() {
        let mut s = Sheet::default();
        s.label(0, 0, "Writer Report");
        s.number(1, 1, 4.0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.XLSX");
        write(&path, &s).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..2], b"PK", "a zip container");
    }
}
