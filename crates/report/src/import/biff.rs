//! A small reader of BIFF2 worksheets, the old binary Excel format IOzone's libbif writes
//! for `-b name.xls` (BOF, LABEL, NUMBER, INTEGER, EOF; see the IOzone spec §6). It reads
//! records by type and length, keeps the cells, skips records it does not know, and fails
//! with one line on a file that ends inside a record or has no BOF. Not: BIFF5/8 (OLE
//! compound files: `calamine` reads those) or formulas and formats.

use super::workbook::{Grid, Value};

const BOF_BIFF2: u16 = 0x0009;
const BOF_V3: u16 = 0x0209;
const BOF_V4: u16 = 0x0409;
const BOF_V5: u16 = 0x0809;
const EOF: u16 = 0x000A;
const INTEGER: u16 = 0x0002;
const NUMBER: u16 = 0x0003;
const LABEL: u16 = 0x0004;
const NUMBER_V3: u16 = 0x0203;
const LABEL_V3: u16 = 0x0204;

/// True when the bytes start with a BIFF2..4 BOF record.
pub fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 4
        && matches!(
            u16::from_le_bytes([bytes[0], bytes[1]]),
            BOF_BIFF2 | BOF_V3 | BOF_V4
        )
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Reads the cells of the first worksheet.
pub fn read(bytes: &[u8]) -> Result<Grid, String> {
    if !looks_like(bytes) {
        return Err("not a BIFF2 worksheet (no BOF record at the start)".into());
    }
    let mut grid = Grid::default();
    let mut at = 0usize;
    let mut saw_eof = false;
    while at < bytes.len() {
        let (Some(kind), Some(len)) = (u16_at(bytes, at), u16_at(bytes, at + 2)) else {
            return Err(format!(
                "workbook is truncated: a record header is cut off at byte {at}"
            ));
        };
        let body_start = at + 4;
        let body_end = body_start + usize::from(len);
        let Some(body) = bytes.get(body_start..body_end) else {
            return Err(format!(
                "workbook is truncated: record 0x{kind:04x} at byte {at} needs {len} bytes, {} left",
                bytes.len().saturating_sub(body_start)
            ));
        };
        match kind {
            EOF => {
                saw_eof = true;
                break;
            }
            NUMBER if body.len() >= 15 => {
                let (row, col) = (u16_at(body, 0).unwrap_or(0), u16_at(body, 2).unwrap_or(0));
                let mut f = [0u8; 8];
                f.copy_from_slice(&body[7..15]);
                grid.set(u32::from(row), col, Value::Number(f64::from_le_bytes(f)));
            }
            NUMBER_V3 if body.len() >= 14 => {
                let (row, col) = (u16_at(body, 0).unwrap_or(0), u16_at(body, 2).unwrap_or(0));
                let mut f = [0u8; 8];
                f.copy_from_slice(&body[6..14]);
                grid.set(u32::from(row), col, Value::Number(f64::from_le_bytes(f)));
            }
            INTEGER if body.len() >= 9 => {
                let (row, col) = (u16_at(body, 0).unwrap_or(0), u16_at(body, 2).unwrap_or(0));
                let v = u16_at(body, 7).unwrap_or(0);
                grid.set(u32::from(row), col, Value::Number(f64::from(v)));
            }
            LABEL if body.len() >= 8 => {
                let (row, col) = (u16_at(body, 0).unwrap_or(0), u16_at(body, 2).unwrap_or(0));
                let n = usize::from(body[7]);
                let text = &body[8..body.len().min(8 + n)];
                let text = text.split(|&c| c == 0).next().unwrap_or(&[]);
                grid.set(
                    u32::from(row),
                    col,
                    Value::Text(String::from_utf8_lossy(text).into_owned()),
                );
            }
            LABEL_V3 if body.len() >= 8 => {
                let (row, col) = (u16_at(body, 0).unwrap_or(0), u16_at(body, 2).unwrap_or(0));
                let n = usize::from(u16_at(body, 6).unwrap_or(0));
                let text = &body[8..body.len().min(8 + n)];
                let text = text.split(|&c| c == 0).next().unwrap_or(&[]);
                grid.set(
                    u32::from(row),
                    col,
                    Value::Text(String::from_utf8_lossy(text).into_owned()),
                );
            }
            BOF_V5 => return Err("BIFF5/8 record inside a BIFF2 sheet".into()),
            _ => {}
        }
        at = body_end;
    }
    if !saw_eof {
        return Err("workbook is truncated: no EOF record".into());
    }
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(row: u16, col: u16, text: &str) -> Vec<u8> {
        let mut v = vec![0x04, 0x00, 0x08, 0x01];
        v.extend(row.to_le_bytes());
        v.extend(col.to_le_bytes());
        v.extend([0, 0, 0, text.len() as u8]);
        let mut s = text.as_bytes().to_vec();
        s.resize(256, 0);
        v.extend(s);
        v
    }

    fn number(row: u16, col: u16, x: f64) -> Vec<u8> {
        let mut v = vec![0x03, 0x00, 0x0f, 0x00];
        v.extend(row.to_le_bytes());
        v.extend(col.to_le_bytes());
        v.extend([0, 0, 0]);
        v.extend(x.to_le_bytes());
        v
    }

    #[test]
    fn reads_libbif_records_and_rejects_truncation() {
        let mut b = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
        b.extend(label(0, 0, "iozone -a"));
        b.extend(number(1, 1, 4.0));
        b.extend([0x0a, 0, 0, 0]);
        let g = read(&b).unwrap();
        assert_eq!(g.get(0, 0), Some(&Value::Text("iozone -a".into())));
        assert_eq!(g.get(1, 1), Some(&Value::Number(4.0)));
        assert!(read(&b[..b.len() - 10]).unwrap_err().contains("truncated"));
        assert!(read(&b[..b.len() - 4]).unwrap_err().contains("no EOF"));
        assert!(read(b"hello").is_err());
    }
}
