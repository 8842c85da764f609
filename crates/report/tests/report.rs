//! The report end to end on synthetic result directories: size and time at full scale,
//! reproducibility, significance where the data has it and only there, partial matrices,
//! cut-off lines and bad input.

mod common;
use common::*;
use sharebench_core::op::Op;
use sharebench_core::plan::Cell;
use sharebench_report::{build, write, ReportRequest};
use std::path::PathBuf;

fn req(inputs: Vec<PathBuf>, labels: &[&str], out: PathBuf) -> ReportRequest {
    ReportRequest {
        inputs,
        labels: labels.iter().map(|s| s.to_string()).collect(),
        baseline: None,
        out,
        ..Default::default()
    }
}

/// Three targets x 13 operations x the 126 cells of --auto x 3 repetitions. The project
/// checks timing with benchmarks, so this asserts the size and prints the time.
#[test]
fn full_auto_matrix_three_targets_size_and_time() {
    let tmp = tempfile::tempdir().unwrap();
    let cells = all_auto_cells();
    assert_eq!(cells.len(), 126);
    let ops = thirteen_ops();
    let targets = [
        Target {
            name: "nfs",
            factor: 1.0,
            noise: 0.03,
            mount_options: "rw,vers=4.2,rsize=1048576",
        },
        Target {
            name: "smb",
            factor: 1.15,
            noise: 0.08,
            mount_options: "rw,vers=3.1.1,cache=strict",
        },
        Target {
            name: "local",
            factor: 1.0,
            noise: 0.02,
            mount_options: "rw,relatime",
        },
    ];
    let mut inputs = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let d = tmp.path().join(t.name);
        write_dir(&d, t, &ops, &cells, 3, 11 + i as u64);
        inputs.push(d);
    }
    let out = tmp.path().join("report");
    let started = std::time::Instant::now();
    let (a, r) = build(&req(inputs, &[], out.clone())).unwrap();
    write(&out, &r).unwrap();
    let secs = started.elapsed().as_secs_f64();
    let html = std::fs::metadata(out.join("report.html")).unwrap().len();
    println!("full --auto matrix, 3 targets x 13 ops x 126 cells x 3 reps: {secs:.2} s, report.html {html} bytes");
    // Six charts of 126 cells per target and operation (throughput, its 2D view and
    // ratio map, p50, p99 and the p99 ratio map): about 8 MiB at this, the largest matrix.
    assert!(html < 10 << 20, "report.html is {html} bytes");
    assert!(out.join("results.xlsx").is_file() && out.join("results.csv").is_file());
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 13 * 126 * 3);
    // smb is 15% faster everywhere with repetitions: significant per operation.
    let smb_write = a
        .findings
        .iter()
        .find(|f| {
            f.op.map(|o| o.name()) == Some("write")
                && f.text.starts_with("write: smb is faster than nfs")
        })
        .expect("smb faster finding");
    assert_eq!(smb_write.significant, Some(true));
    // local is the same model as nfs: no winner, the two are equivalent within 5%.
    let local = a
        .findings
        .iter()
        .find(|f| f.op.map(|o| o.name()) == Some("write") && f.text.contains("local against nfs"))
        .expect("local vs nfs finding");
    assert_eq!(local.significant, Some(false), "{}", local.text);
    assert!(
        local.text.contains("equivalent within ±5%"),
        "{}",
        local.text
    );
    // The read cliff past 128 MiB is flagged against the manifest's RAM.
    assert!(a
        .cache_flags
        .iter()
        .any(|c| c.op.name() == "read" && c.to_file == 256 << 20 && c.ram_bytes == Some(8 << 30)));
    // The environment table marks the mount options as differing.
    assert!(a
        .env
        .rows
        .iter()
        .any(|r| r.name == "mount options" && r.differs));
    // And says how the client's TCP sent (the manifests say reno).
    assert!(a.env.rows.iter().any(
        |r| r.name == "TCP congestion control (client)" && r.values.iter().all(|v| v == "reno")
    ));
    assert!(r.summary.contains("write"));
    // Latency, IOPS and consistency are shown, not only recorded.
    for needle in [
        "Latency heatmaps: p50 and p99",
        "p99 latency against the baseline",
        "Percentiles of chosen cells",
        "p99.99",
        "ops/s (≤ 64 KiB records)",
        "id=\"consistency\"",
    ] {
        assert!(
            r.text("report.html").contains(needle),
            "report.html lacks {needle:?}"
        );
    }
    assert!(
        r.summary.contains("ops/s") && r.summary.contains("p99"),
        "{}",
        r.summary
    );
    // smb is 15% faster, so its requests take 1/1.15 of nfs's: a shorter tail, called.
    let tail = a
        .findings
        .iter()
        .find(|f| {
            f.op.map(|o| o.name()) == Some("write")
                && f.text
                    .starts_with("write: nfs's p99 latency is longer than smb's")
        })
        .unwrap_or_else(|| {
            panic!(
                "no p99 finding: {:#?}",
                a.findings
                    .iter()
                    .filter(|f| f.op.map(|o| o.name()) == Some("write"))
                    .map(|f| &f.text)
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(tail.significant, Some(true), "{}", tail.text);
    // local is nfs's model: its tail is equivalent.
    assert!(a
        .findings
        .iter()
        .any(|f| f.op.map(|o| o.name()) == Some("write")
            && f.text
                .starts_with("write: p99 latency of local against nfs: equivalent")));
    // IOPS where records are small, in the size classes and their finding.
    let small = a
        .classes
        .iter()
        .find(|c| c.op.name() == "write" && c.stats.iter().all(|s| s.iops.is_some()))
        .expect("a class with small records");
    assert!(small.stats.iter().all(|s| s.p99_us.is_some()));
    assert!(a
        .findings
        .iter()
        .any(|f| f.text.contains("operations per second")));
    // The steadier target is named from the CVs the consistency table shows.
    let steady = a
        .findings
        .iter()
        .find(|f| f.op.map(|o| o.name()) == Some("write") && f.text.contains("is the steadier"))
        .expect("a consistency finding");
    assert!(
        steady.text.starts_with("write: local is the steadier"),
        "{}",
        steady.text
    );
    assert_eq!(steady.significant, None);
}

#[test]
fn reports_are_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let cells: Vec<Cell> = all_auto_cells()
        .into_iter()
        .filter(|c| c.file_size <= 1 << 20)
        .collect();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.05,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        3,
        1,
    );
    write_dir(
        &b,
        &Target {
            name: "b",
            factor: 1.3,
            noise: 0.05,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        3,
        2,
    );
    let one = build(&req(vec![a.clone(), b.clone()], &[], tmp.path().join("o")))
        .unwrap()
        .1
        .text("report.html")
        .to_string();
    let two = build(&req(vec![a, b], &[], tmp.path().join("o")))
        .unwrap()
        .1
        .text("report.html")
        .to_string();
    assert_eq!(one, two);
}

#[test]
fn partly_overlapping_matrices_show_missing_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let all = all_auto_cells();
    let small: Vec<Cell> = all
        .iter()
        .copied()
        .filter(|c| c.file_size <= 1 << 20)
        .collect();
    let mid: Vec<Cell> = all
        .iter()
        .copied()
        .filter(|c| c.file_size >= 256 << 10 && c.file_size <= 4 << 20)
        .collect();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Read],
        &small,
        3,
        1,
    );
    write_dir(
        &b,
        &Target {
            name: "b",
            factor: 2.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Read],
        &mid,
        3,
        2,
    );
    let (an, r) = build(&req(vec![a, b], &[], tmp.path().join("o"))).unwrap();
    let op = &an.ops[0];
    let common = small.iter().filter(|c| mid.contains(c)).count();
    assert_eq!(op.vs_baseline["b"].len(), common);
    assert!(r.text("report.html").contains("missing for this input"));
    assert!(r.text("report.html").contains("missing on one side"));
}

#[test]
fn single_repetitions_are_not_testable() {
    let tmp = tempfile::tempdir().unwrap();
    let cells: Vec<Cell> = all_auto_cells()
        .into_iter()
        .filter(|c| c.file_size <= 256 << 10)
        .collect();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        1,
        1,
    );
    write_dir(
        &b,
        &Target {
            name: "b",
            factor: 2.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        1,
        2,
    );
    let (an, r) = build(&req(vec![a, b], &[], tmp.path().join("o"))).unwrap();
    assert!(an.ops[0].vs_baseline["b"].values().all(|c| c.p.is_none()));
    assert!(an
        .warnings
        .iter()
        .any(|w| w.text.contains("one repetition")));
    assert!(r.text("report.html").contains("not testable"));
}

#[test]
fn a_cut_off_last_line_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let cells: Vec<Cell> = all_auto_cells().into_iter().take(3).collect();
    let a = tmp.path().join("a");
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        3,
        1,
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(a.join("results.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"schema\":1,\"run_id\":\"syn").unwrap();
    let (an, r) = build(&req(vec![a], &[], tmp.path().join("o"))).unwrap();
    assert_eq!(an.records.len(), 9);
    assert!(r.warnings.iter().any(|w| w.contains("cut off")));
}

#[test]
fn bad_inputs_are_one_line_errors_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cells: Vec<Cell> = all_auto_cells().into_iter().take(2).collect();
    let a = tmp.path().join("a");
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.02,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        3,
        1,
    );
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let unknown = tmp.path().join("notes.txt");
    std::fs::write(&unknown, "hello world\n").unwrap();
    let out = tmp.path().join("o");
    let cases: Vec<(ReportRequest, &str)> = vec![
        (req(vec![], &[], out.clone()), "no input"),
        (req(vec![empty], &[], out.clone()), "empty"),
        (req(vec![unknown], &[], out.clone()), "unknown input"),
        (req(vec![tmp.path().join("nope")], &[], out.clone()), "nope"),
        (
            req(vec![a.clone(), a.clone()], &[], out.clone()),
            "is given twice",
        ),
        (req(vec![a.clone()], &["x", "y"], out.clone()), "--label"),
        (
            ReportRequest {
                baseline: Some("zz".into()),
                ..req(vec![a.clone()], &[], out.clone())
            },
            "--baseline 'zz'",
        ),
    ];
    for (r, needle) in cases {
        let e = build(&r)
            .err()
            .unwrap_or_else(|| panic!("{needle}: no error"))
            .0;
        assert!(e.contains(needle), "{e:?} lacks {needle:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
    assert!(!out.exists());
    // An --out holding someone else's files is refused and left as it was.
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.docx"), "mine").unwrap();
    let (_, r) = build(&req(vec![a], &[], out.clone())).unwrap();
    let e = write(&out, &r).unwrap_err().0;
    assert!(e.contains("already holds files"), "{e}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}
