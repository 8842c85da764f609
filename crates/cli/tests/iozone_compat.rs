//! `sharebench iozone` against a real IOzone 3.414 (its outputs are fixtures of the report
//! crate, see crates/report/tests/fixtures/README.md): the same command line gives a -b
//! workbook with the very same cells (every label and number at the same row and column)
//! and the same table header, byte for byte.

mod common;
use common::*;
use std::path::Path;

const REAL: &str = "../report/tests/fixtures";

#[derive(Debug, PartialEq)]
enum Cell {
    Label(u16, u16, String),
    Number(u16, u16),
    Other(u16),
}

/// BIFF2 records as (kind, row, column[, label text]); numbers' values are not compared.
fn cells(path: &Path) -> Vec<Cell> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut i = 0;
    let u16_at = |j: usize| u16::from_le_bytes([b[j], b[j + 1]]);
    while i + 4 <= b.len() {
        let (kind, len) = (u16_at(i), u16_at(i + 2) as usize);
        let body = i + 4;
        match kind {
            4 => {
                let n = b[body + 7] as usize;
                let text = String::from_utf8_lossy(&b[body + 8..body + 8 + n]).into_owned();
                out.push(Cell::Label(u16_at(body), u16_at(body + 2), text));
            }
            3 => out.push(Cell::Number(u16_at(body), u16_at(body + 2))),
            k => out.push(Cell::Other(k)),
        }
        i = body + len;
    }
    out
}

#[test]
fn the_b_workbook_and_the_table_header_match_real_iozone() {
    let dir = shm_dir();
    let target = shm_dir();
    let ours = dir.path().join("ours.xls");
    let o = bin()
        .current_dir(dir.path())
        .args([
            "iozone", "-a", "-n", "64k", "-g", "4m", "-i", "0", "-i", "1", "-i", "2", "-R", "-b",
        ])
        .arg(&ours)
        .arg(target.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut real = cells(&Path::new(REAL).join("iozone-real-auto.xls"));
    let mut mine = cells(&ours);
    // The command line (row 0) differs by program name and paths.
    for c in [&mut real, &mut mine] {
        if let Some(Cell::Label(0, 0, text)) = c.get_mut(1) {
            *text = String::new();
        }
    }
    assert_eq!(real.len(), mine.len());
    assert_eq!(real, mine);

    let real_text = std::fs::read_to_string(Path::new(REAL).join("iozone-real-auto.txt")).unwrap();
    let header = |t: &str| -> Vec<String> {
        let lines: Vec<&str> = t.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("KB  reclen"))
            .expect("table header");
        vec![lines[at - 1].to_string(), lines[at].to_string()]
    };
    assert_eq!(header(&stdout(&o)), header(&real_text));
}
