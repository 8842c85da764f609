//! Every shipped study, run end to end at its tiny scale against the real lab: the report
//! has every section and a line for every claim, each step's records are on disk, and the
//! lab is gone afterwards. Then Ctrl-C in the middle of a study, a report of what was
//! measured, `--resume`, re-reporting and comparing two runs. One test, in sequence: the
//! studies share the one lab.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn state(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap()
}

/// The report of `dir` has the study's sections, and one row per claim with a verdict.
fn check_report(report: &Path, study: &str) {
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    for section in [
        "id=\"question\"",
        "id=\"answer\"",
        "id=\"claims\"",
        "id=\"departures\"",
        "id=\"evidence\"",
    ] {
        assert!(
            html.contains(section),
            "{study}: no {section} in the report"
        );
    }
    let text = std::fs::read_to_string(format!(
        "{}/../../studies/{study}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let spec: toml::Value = toml::from_str(&text).unwrap();
    for claim in spec["claims"].as_array().unwrap() {
        let id = claim["id"].as_str().unwrap();
        let row = if claim.get("said").is_some() {
            format!("id=\"claim-{id}\"")
        } else {
            format!("id=\"figure-{id}\"")
        };
        let at = html
            .find(&row)
            .unwrap_or_else(|| panic!("{study}: no line for claim {id}"));
        let line = &html[at..at + html[at..].find("</tr>").unwrap()];
        assert!(
            [
                "agrees",
                "disagrees",
                "inconclusive",
                "not tested",
                "measured"
            ]
            .iter()
            .any(|v| line.contains(&format!(">{v}<"))),
            "{study}: claim {id} has no verdict: {line}"
        );
    }
}

fn run_study(name: &str, out: &Path) -> std::process::Output {
    let t = Instant::now();
    let o = run(&[
        "study",
        "run",
        name,
        "--scale",
        "tiny",
        "--out",
        out.to_str().unwrap(),
    ]);
    eprintln!(
        "study {name} (tiny): {:.0} s, exit {:?}\n{}",
        t.elapsed().as_secs_f64(),
        o.status.code(),
        stdout(&o)
    );
    o
}

#[test]
fn every_study_runs_reports_resumes_and_leaves_no_lab() {
    require_root();
    if !nix_is_root() {
        return;
    }
    // Whatever happens below, the lab is taken down at the end.
    let _down = no_lab_before_or_after();
    let tmp = tempfile::tempdir().unwrap();

    for name in [
        "dfs-nfs-vs-smb",
        "nfs-server-configs",
        "media-prealloc",
        "small-files",
        "nfs-connectathon",
    ] {
        let out = tmp.path().join(name);
        let o = run_study(name, &out);
        assert!(
            o.status.success(),
            "study {name} failed: {}\n{}",
            stderr(&o),
            std::fs::read_to_string(out.join("study.json")).unwrap_or_default()
        );
        assert!(stdout(&o).contains("Report: "), "{}", stdout(&o));
        // GlusterFS only for the studies that measure it.
        let gluster = ["dfs-nfs-vs-smb", "small-files"].contains(&name);
        assert_eq!(
            !stdout(&o).contains("--no-gluster"),
            gluster,
            "{name}: {}",
            stdout(&o)
        );
        let st = state(&out);
        assert_eq!(st["outcome"], "complete", "{st}");
        for step in st["steps"].as_array().unwrap() {
            // Only a step of a role the lab cannot play (a Windows server) is not run.
            if step["status"] == "not-run" {
                assert!(
                    step["error"].as_str().unwrap().contains("--target"),
                    "{step}"
                );
                continue;
            }
            assert_eq!(step["status"], "complete", "{step}");
            let dir = out.join("steps").join(step["id"].as_str().unwrap());
            // A step that alternates has a run directory per block.
            let is_run =
                dir.join("results.jsonl").exists() || dir.join("block-1/results.jsonl").exists();
            let has_figures = st["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["step"] == step["id"]);
            assert!(is_run || has_figures, "step {step} left nothing");
        }
        check_report(&out.join("report"), name);
        assert!(lab_namespaces().is_empty(), "study {name} left the lab up");
    }

    // The main study's figures are real: failover kept every byte, and rsync's delta
    // moved far less than a full copy.
    let dfs = state(&tmp.path().join("dfs-nfs-vs-smb"));
    let figure = |name: &str| {
        dfs["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name}: {dfs}"))["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(figure("verify-failures"), 0.0);
    assert!(figure("measurements-ok") > 0.0);
    assert!(
        figure("rsync-delta") < 0.5 * figure("full-copy"),
        "delta {} vs full {}",
        figure("rsync-delta"),
        figure("full-copy")
    );
    assert!(
        figure("full-copy") >= 0.9 * 16.0,
        "a 16 MiB file crossed the wire"
    );

    // Re-report, and two runs compared claim by claim.
    let again = tmp.path().join("again");
    let o = run(&[
        "report",
        tmp.path().join("small-files").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_report(&again, "small-files");

    // Ctrl-C in the middle: records and a report stay, the lab goes, --resume finishes.
    let out = tmp.path().join("interrupted");
    let child = bin()
        .args([
            "study",
            "run",
            "nfs-server-configs",
            "--scale",
            "tiny",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = out.join("steps/configs/results.jsonl");
    let start = Instant::now();
    while std::fs::read_to_string(&first)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 200
    {
        assert!(
            start.elapsed() < Duration::from_secs(240),
            "the study took no records"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
    assert_eq!(state(&out)["outcome"], "interrupted");
    assert!(out.join("report/report.html").exists());
    assert!(lab_namespaces().is_empty(), "Ctrl-C left the lab up");
    let kept = std::fs::read_to_string(&first).unwrap().lines().count();

    let o = run(&[
        "study",
        "run",
        "nfs-server-configs",
        "--scale",
        "tiny",
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert!(o.status.success(), "resume failed: {}", stderr(&o));
    assert!(
        stdout(&o).contains("carried over"),
        "nothing carried over from {kept} records: {}",
        stdout(&o)
    );
    assert!(out.join("steps/configs.attempt-1/results.jsonl").exists());
    // The resumed step holds the carried tests and the rest: the whole matrix.
    let all = std::fs::read_to_string(out.join("steps/configs/results.jsonl"))
        .unwrap()
        .lines()
        .count();
    let first_run = std::fs::read_to_string(
        tmp.path()
            .join("nfs-server-configs/steps/configs/results.jsonl"),
    )
    .unwrap()
    .lines()
    .count();
    assert_eq!(
        all, first_run,
        "a resumed matrix has every measurement once"
    );
    assert_eq!(state(&out)["outcome"], "complete");
    check_report(&out.join("report-2"), "nfs-server-configs");

    let cmp = tmp.path().join("cmp");
    let o = run(&[
        "report",
        tmp.path().join("nfs-server-configs").to_str().unwrap(),
        out.to_str().unwrap(),
        "--label",
        "first",
        "--label",
        "resumed",
        "--out",
        cmp.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(cmp.join("report.html")).unwrap();
    assert!(html.contains("this run found (first)") && html.contains("this run found (resumed)"));
}
