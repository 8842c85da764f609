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

/// The seed's Table IV (000): six IOzone command lines, run as written but for the size
/// (`-g 2G` is `-g 4m` here, what CI affords) and the share (a tmpfs directory for the
/// UNC path). Each writes its `-b` workbook, which reads back as IOzone's (the report's
/// BIFF2 reader) with every test the line asked for; the `.xlsx` form of the first line
/// is opened by calamine (which reads only OLE workbooks, BIFF5/8, not IOzone's BIFF2).
#[test]
fn the_seeds_table_iv_command_lines_run_unchanged() {
    use sharebench_report::import::{biff, workbook};
    let lines = [
        "-a -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-smb.xls SHARE",
        "-a -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-nfs.xls SHARE",
        "-t 4 -i 0 -i 1 -i 2 -i 3 -i 4 -R -b performance-results-smb.xls SHARE",
        "-t 4 -i 0 -i 1 -i 2 -i 3 -i 4 -R -b performance-results-nfs.xls SHARE",
        "-a -+u -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-cpu-smb.xls SHARE",
        "-a -+u -i 0 -i 1 -i 2 -i 3 -i 4 -g 2G -R -b results-cpu-nfs.xls SHARE",
    ];
    let dir = shm_dir();
    let share = shm_dir();
    let run_line = |line: &str| -> std::process::Output {
        let args: Vec<String> = line
            .replace("-g 2G", "-g 4m")
            .split_whitespace()
            .map(|a| match a {
                "SHARE" => share.path().display().to_string(),
                a => a.to_string(),
            })
            .collect();
        let o = bin()
            .current_dir(dir.path())
            .arg("iozone")
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{line}: {}", stderr(&o));
        o
    };
    for line in lines {
        let o = run_line(line);
        let xls = line
            .split_whitespace()
            .find(|a| a.ends_with(".xls"))
            .unwrap();
        let bytes = std::fs::read(dir.path().join(xls)).unwrap();
        let grid = biff::read(&bytes).unwrap_or_else(|e| panic!("{xls}: {e}"));
        let imported = workbook::parse(&grid, xls).unwrap_or_else(|e| panic!("{xls}: {e}"));
        let ops: std::collections::BTreeSet<&str> =
            imported.records.iter().map(|r| r.op.name()).collect();
        // Throughput mode has no record-rewrite test: real IOzone 3.508's -t 4 with -i 4
        // prints the other seven and skips it, as sharebench does.
        let throughput_mode = line.starts_with("-t 4");
        for op in [
            "write",
            "rewrite",
            "read",
            "reread",
            "random-read",
            "random-write",
            "backward-read",
            "record-rewrite",
        ] {
            let expected = !(throughput_mode && op == "record-rewrite");
            assert_eq!(ops.contains(op), expected, "{xls}: {op} in {ops:?}");
        }
        if throughput_mode {
            assert!(
                stdout(&o).contains("Children see throughput for  4 initial writers"),
                "{}",
                stdout(&o)
            );
        }
        if line.contains("-+u") {
            assert!(stdout(&o).contains("CPU"), "{line}: no CPU figures");
        }
    }
    // The first line with an .xlsx workbook: the same cells, opened by calamine.
    run_line(&lines[0].replace("results-smb.xls", "results-smb.xlsx"));
    let xlsx = std::fs::read(dir.path().join("results-smb.xlsx")).unwrap();
    let grid = workbook::read_with_calamine(&xlsx).unwrap();
    let imported = workbook::parse(&grid, "results-smb.xlsx").unwrap();
    let biff2 = std::fs::read(dir.path().join("results-smb.xls")).unwrap();
    assert!(
        workbook::read_with_calamine(&biff2).is_err(),
        "calamine read BIFF2 after all"
    );
    let from_xls = workbook::parse(&biff::read(&biff2).unwrap(), "results-smb.xls").unwrap();
    let cells = |v: &[sharebench_core::record::Record]| -> Vec<(String, u64, u64)> {
        v.iter()
            .map(|r| (r.op.to_string(), r.file_size, r.record_size))
            .collect()
    };
    assert_eq!(cells(&imported.records), cells(&from_xls.records));
}

/// `-F` naming files in two directories (on two file systems) runs each worker in its own
/// name's directory, as IOzone does: with `-w` each file stays where its name put it, and
/// without it both directories are left as they were.
#[test]
fn f_names_in_two_directories_put_each_worker_in_its_own() {
    let (cwd, a) = (shm_dir(), shm_dir());
    let b = tempfile::tempdir_in("/var/tmp").unwrap();
    let names = [a.path().join("x"), b.path().join("y")];
    let run = |keep: bool| {
        let mut c = bin();
        c.current_dir(cwd.path()).args([
            "iozone", "-i", "0", "-i", "1", "-t", "2", "-s", "1m", "-r", "64k",
        ]);
        if keep {
            c.arg("-w");
        }
        c.arg("-F").args(&names).output().unwrap()
    };
    let o = run(true);
    assert!(o.status.success(), "{}", stderr(&o));
    // Each worker's file, in its own directory, whole.
    let files_in = |dir: &Path| -> Vec<(String, u64)> {
        let mut found = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            if e.file_name().to_string_lossy().starts_with("sharebench-") {
                for f in std::fs::read_dir(e.path()).unwrap().map(Result::unwrap) {
                    let n = f.file_name().to_string_lossy().into_owned();
                    if !n.starts_with('.') {
                        found.push((n, f.metadata().unwrap().len()));
                    }
                }
            }
        }
        found
    };
    assert_eq!(files_in(a.path()), vec![("f0".to_string(), 1 << 20)]);
    assert_eq!(files_in(b.path()), vec![("f1".to_string(), 1 << 20)]);
    // The manifest says where the second worker worked.
    let results = std::fs::read_dir(cwd.path().join("sharebench-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let run_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("run.json")).unwrap()).unwrap();
    let places = run_json["targets"][0]["places"].to_string();
    assert!(
        places.contains(&format!("worker 2: {}", b.path().display())),
        "{places}"
    );
    let mine = |d: &Path| {
        for e in std::fs::read_dir(d).unwrap().map(Result::unwrap) {
            if e.file_name().to_string_lossy().starts_with("sharebench-") {
                std::fs::remove_dir_all(e.path()).unwrap();
            }
        }
    };
    mine(a.path());
    mine(b.path());
    let o = run(false);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_no_workdir(a.path());
    assert_no_workdir(b.path());
}
