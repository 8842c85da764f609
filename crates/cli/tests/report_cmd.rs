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
/// verdicts.json carries every comparison as data, and --fail-if-slower gates on it: a
/// tmpfs directory against null:// (which moves no data), measured side by side.
#[test]
fn verdicts_are_data_and_a_slower_target_fails_the_gate() {
    let t = shm_dir();
    let dir = t.path().join("tmpfs");
    std::fs::create_dir(&dir).unwrap();
    let res = t.path().join("res");
    let o = run(&[
        "run",
        dir.to_str().unwrap(),
        "null://",
        "-i",
        "write,read",
        "--file-sizes",
        "1m",
        "--record-sizes",
        "64k",
        "--reps",
        "5",
        "--min-sample-time",
        "10ms",
        "--out",
        res.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = |baseline: &str, out: &str| {
        let rep = t.path().join(out);
        let o = run(&[
            "report",
            res.to_str().unwrap(),
            "--baseline",
            baseline,
            "--out",
            rep.to_str().unwrap(),
            "--fail-if-slower",
            "5",
        ]);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(rep.join("verdicts.json")).unwrap()).unwrap();
        (o, json)
    };
    // null:// against the directory: faster, so the gate passes.
    let (o, json) = report(dir.to_str().unwrap(), "rep-dir");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json["version"], 1);
    let ops: Vec<&serde_json::Value> = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["scope"] == "operation")
        .collect();
    assert_eq!(ops.len(), 2, "{json}");
    for c in &ops {
        assert_eq!(c["target"], "null://");
        assert!(c["ratio"].as_f64().unwrap() > 1.05, "{c}");
        assert!(c["ci"][0].as_f64().unwrap() <= c["ratio"].as_f64().unwrap());
        assert_eq!(c["verdict"], "faster", "{c}");
    }
    assert!(json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["scope"] == "cell" && c["file_size"] == 1 << 20));
    // The directory against null://: slower by far more than 5%, exit 3 naming each.
    let (o, json) = report("null://", "rep-null");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("slower:") && err.contains("write"), "{err}");
    assert!(err.contains("--fail-if-slower"), "{err}");
    assert_eq!(json["baseline"], "null://");
    // The report is written either way.
    assert!(t.path().join("rep-null/report.html").is_file());
}

/// Two separate runs: every comparison is a row of one table, and the caveat they share
/// (one block of time a side, never called) is said once, not in every sentence.
#[test]
fn separate_runs_are_one_table_with_the_caveat_said_once() {
    let t = shm_dir();
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let mut outs = Vec::new();
    for i in 0..2 {
        let res = t.path().join(format!("r{i}"));
        let o = run(&[
            "run",
            dir.to_str().unwrap(),
            "-i",
            "write,read",
            "--file-sizes",
            "64k,1m",
            "--record-sizes",
            "64k",
            "--reps",
            "3",
            "--min-sample-time",
            "10ms",
            "--out",
            res.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        outs.push(res);
    }
    let rep = t.path().join("rep");
    let o = run(&[
        "report",
        outs[0].to_str().unwrap(),
        outs[1].to_str().unwrap(),
        "--label",
        "one",
        "--label",
        "two",
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(
        html.contains("Every comparison with the baseline"),
        "no table"
    );
    assert_eq!(
        html.matches("a difference may be the runs").count(),
        1,
        "the caveat once"
    );
    // Two operations, each over all its cells and in two size classes.
    assert_eq!(html.matches(">separate runs</td>").count(), 6);
    // The terminal: one line per operation against the baseline, the caveat once.
    let text = stdout(&o);
    assert!(text.contains("Against the baseline one"), "{text}");
    assert_eq!(
        text.matches("one block of time a side").count(),
        1,
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("write") && l.contains("two") && l.contains("inconclusive")),
        "{text}"
    );
}

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
