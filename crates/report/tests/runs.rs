//! Several runs of one target as its repetitions (IOzone has none of its own, so its
//! users run each configuration N times): real IOzone 3.508 outputs, five runs of a tmpfs
//! file and five of an ext4 file, run in turns (fixtures/runs/, see its README).

use sharebench_report::compare::{Replicates, Verdict};
use sharebench_report::{build, ReportRequest};
use std::path::PathBuf;

fn runs(dir: &str) -> Vec<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(dir);
    (1..=5).map(|i| d.join(format!("run{i}.txt"))).collect()
}

fn request(inputs: Vec<PathBuf>, labels: &[&str]) -> ReportRequest {
    ReportRequest {
        inputs,
        labels: labels.iter().map(|s| s.to_string()).collect(),
        out: PathBuf::from("/nonexistent"),
        ..Default::default()
    }
}

#[test]
fn inputs_sharing_a_label_are_its_runs_and_the_runs_are_the_replicates() {
    let inputs: Vec<PathBuf> = runs("shm").into_iter().chain(runs("disk")).collect();
    let labels = ["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"];
    let (a, r) = build(&request(inputs, &labels)).unwrap();
    assert_eq!(a.labels, ["a", "b"]);
    assert_eq!(a.ops.len(), 4, "write, rewrite, read, reread");
    for op in &a.ops {
        for (label, cells) in &op.cells {
            assert_eq!(cells.len(), 25, "{label} {}", op.op);
            for (k, c) in cells {
                assert_eq!(c.values.len(), 5, "{label} {} {k:?}", op.op);
                assert_eq!(c.by_run.len(), 5, "one value per run");
            }
        }
    }
    // Each side's runs are its own: compared unpaired, five runs against five.
    for row in &a.classes {
        let v = row.versus.as_ref().unwrap();
        assert_eq!(v.replicates, Replicates::Runs(5, 5), "{}", row.op);
        assert!(v.p.is_some() && v.ci.is_some());
    }
    // ext4's page cache beat tmpfs in these runs (as sharebench measured it here too):
    // every operation's verdict is a winner.
    let rewrite = a.classes.iter().find(|r| r.op.name() == "rewrite").unwrap();
    assert_eq!(rewrite.winner.as_deref(), Some("b"));
    assert_eq!(rewrite.versus.as_ref().unwrap().verdict, Verdict::Faster);
    assert!(
        r.text("report.html")
            .contains("Welch&#39;s t over 5 and 5 runs")
            || r.text("report.html")
                .contains("Welch's t over 5 and 5 runs")
    );
}

#[test]
fn a_directory_of_runs_is_a_label_and_the_a_a_check_calls_nothing() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    // Ten runs of one tmpfs file, in turns, split in two directories: A against A.
    let (a, _) = build(&request(
        vec![fixtures.join("aa/a"), fixtures.join("aa/b")],
        &[],
    ))
    .unwrap();
    assert_eq!(a.labels, ["a", "b"]);
    for row in &a.classes {
        let v = row.versus.as_ref().unwrap();
        assert_eq!(v.replicates, Replicates::Runs(5, 5));
        assert!(
            !v.verdict.decided_winner(),
            "A/A called {} a winner: {v:?}",
            row.op
        );
    }
    // The same directories under labels of the user's.
    let (a, _) = build(&request(
        vec![fixtures.join("shm"), fixtures.join("disk")],
        &["tmpfs", "ext4"],
    ))
    .unwrap();
    assert_eq!(a.labels, ["tmpfs", "ext4"]);
}

#[test]
fn one_file_given_twice_is_refused() {
    let one = runs("shm").remove(0);
    let Err(e) = build(&request(vec![one.clone(), one], &["a", "a"])) else {
        panic!("one file given twice was taken as two runs");
    };
    assert!(e.0.contains("is given twice"), "{}", e.0);
}
