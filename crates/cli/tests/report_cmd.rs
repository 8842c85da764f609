//! `sharebench report` end to end through the binary: a real run is reported, IOzone's
//! text and -b workbook of the same run import to the same numbers, and bad input is one
//! line on stderr, exit 2, nothing written.

mod common;
use common::*;
use std::path::Path;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn assert_one_line_error(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "args {args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "args {args:?}: {err}");
    assert!(lines[0].contains(needle), "{err:?} lacks {needle:?}");
}

#[test]
fn a_real_run_is_reported() {
    let t = shm_dir();
    let res = t.path().join("res");
    let o = run(&[
        "run",
        "--reps",
        "3",
        // Samples of 10 ms: what is reported, not how well, is under test here.
        "--min-sample-time",
        "10ms",
        "--file-sizes",
        "64k..256k",
        "--record-sizes",
        "4k..64k",
        "-i",
        "write,read",
        "null://",
        "--out",
        res.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        res.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["report.html", "results.xlsx", "results.csv"] {
        assert!(rep.join(f).is_file(), "{f} missing");
    }
    assert!(stdout(&o).contains("Winners by operation"));
    assert!(
        !stdout(&o).contains("Across "),
        "one run has no spread across runs: {}",
        stdout(&o)
    );
}

/// A directory of IOzone runs is one target of several runs: the report says how far its
/// cells' medians moved from one run to the next (what a run's own interval cannot show).
#[test]
fn several_runs_of_a_target_show_their_spread_across_runs() {
    let t = shm_dir();
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        &fixture("runs/aa/a"),
        &fixture("runs/aa/b"),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for label in ["a", "b"] {
        let line = out
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "Across 5 runs of {label}, a cell's median varied by "
                ))
            })
            .unwrap_or_else(|| panic!("no spread line for {label}: {out}"));
        assert!(line.contains("median over 100 cells"), "{line}");
    }
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(html.contains("CV across separate runs (median)"));
}

#[test]
fn iozone_text_and_workbook_of_one_run_agree() {
    let t = shm_dir();
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let xls = t.path().join("r.xls");
    // In the scratch directory: the IOzone front end keeps its records in ./sharebench-results.
    let o = bin()
        .current_dir(t.path())
        .args([
            "iozone",
            "-a",
            "-n",
            "64k",
            "-g",
            "256k",
            "-i",
            "0",
            "-i",
            "1",
            "-R",
            "-b",
            xls.to_str().unwrap(),
            target.to_str().unwrap(),
        ])
        .output()
        .expect("cannot start sharebench");
    assert!(o.status.success(), "{}", stderr(&o));
    let txt = t.path().join("r.txt");
    std::fs::write(&txt, stdout(&o)).unwrap();
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        txt.to_str().unwrap(),
        xls.to_str().unwrap(),
        "--label",
        "text",
        "--label",
        "xls",
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(rep.join("results.csv")).unwrap();
    let mut text = Vec::new();
    let mut xls_rows = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let key = (
            f[5].to_string(),
            f[6].to_string(),
            f[7].to_string(),
            f[14].to_string(),
        );
        match f[1] {
            "text" => text.push(key),
            "xls" => xls_rows.push(key),
            other => panic!("label {other}"),
        }
    }
    assert!(!text.is_empty());
    assert_eq!(text, xls_rows);
}

#[test]
fn bad_input_is_one_line() {
    let t = shm_dir();
    let out = t.path().join("out");
    let o = out.to_str().unwrap();
    let empty = t.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let junk = t.path().join("junk.bin");
    std::fs::write(&junk, [0u8, 1, 2, 3, 250, 251]).unwrap();
    let truncated = t.path().join("cut.xls");
    std::fs::write(
        &truncated,
        [
            0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00, 0x03, 0x00, 0x0f, 0x00, 1, 2,
        ],
    )
    .unwrap();
    assert_one_line_error(&["report", empty.to_str().unwrap(), "--out", o], "empty");
    assert_one_line_error(
        &["report", junk.to_str().unwrap(), "--out", o],
        "unknown input",
    );
    assert_one_line_error(
        &["report", truncated.to_str().unwrap(), "--out", o],
        "truncated",
    );
    let f = fixture("iozone-R-excerpt.txt");
    assert_one_line_error(&["report", &f, &f, "--out", o], "is given twice");
    assert_one_line_error(
        &["report", &f, "--baseline", "nfs", "--out", o],
        "--baseline",
    );
    assert!(!out.exists());
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    assert_one_line_error(&["report", &f, "--out", o], "already holds files");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}
