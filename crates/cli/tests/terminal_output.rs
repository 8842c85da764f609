//! What a run says on the way and at its end when nobody watches a terminal (CI logs,
//! nohup): progress lines on stderr (every 10 s, or SHAREBENCH_PROGRESS_EVERY), none with
//! --quiet, a bad pace refused; where the results
//! are and what to do next; where --keep-files left the files.

mod common;
use common::*;

/// A run of about 3 s (three samples of at least 1 s) on a tmpfs directory, output piped
/// as in a CI log, with a progress line asked for every second
/// (`SHAREBENCH_PROGRESS_EVERY`, 10 s when not set).
fn three_seconds(extra: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let t = shm_dir();
    let out = t.path().join("r");
    let mut args = vec![
        "run",
        "-i",
        "write",
        "--file-sizes",
        "1m",
        "--record-sizes",
        "64k",
        "--reps",
        "3",
        "--min-sample-time",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let target = t.path().join("target");
    std::fs::create_dir(&target).unwrap();
    args.push(target.to_str().unwrap());
    let o = bin()
        .env("SHAREBENCH_PROGRESS_EVERY", "1")
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (o, t)
}

#[test]
fn without_a_terminal_progress_comes_as_lines() {
    let (o, t) = three_seconds(&["--keep-files"]);
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("% of ")).collect();
    assert!(!lines.is_empty(), "no progress line in: {err}");
    assert!(
        lines[0].starts_with("sharebench: ")
            && lines[0].contains(" left: ")
            && lines[0].ends_with("write 1m/64k"),
        "{err}"
    );
    // --keep-files says where the files are, and they are there.
    let kept = err
        .lines()
        .find_map(|l| {
            l.split_once("the files are in ")
                .map(|(_, p)| p.to_string())
        })
        .unwrap_or_else(|| panic!("--keep-files did not say where: {err}"));
    assert!(std::path::Path::new(&kept).is_dir(), "{kept}");
    assert!(kept.starts_with(t.path().to_str().unwrap()), "{kept}");
    let out = stdout(&o);
    assert!(out.contains("Next: sharebench report "), "{out}");
    assert!(out.contains("rep CV%: "), "{out}");
}

#[test]
fn quiet_says_nothing_on_the_way() {
    let (o, _t) = three_seconds(&["--quiet"]);
    let err = stderr(&o);
    assert!(!err.contains("% of "), "{err}");
}

#[test]
fn a_bad_pace_of_progress_lines_is_one_line_before_anything_runs() {
    let t = shm_dir();
    for bad in ["0", "ten", "1.5", "99999"] {
        let o = bin()
            .env("SHAREBENCH_PROGRESS_EVERY", bad)
            .args(["run", "-i", "write", "--file-sizes", "64k", "--reps", "1"])
            .arg(t.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("SHAREBENCH_PROGRESS_EVERY"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_dir(t.path()).unwrap().count(),
            0,
            "{bad}: something ran"
        );
    }
}

/// A target name read back from an input's records cannot drive the terminal: escape
/// sequences in it are shown as escapes in `report`'s summary, never sent raw.
#[test]
fn control_characters_from_inputs_never_reach_the_terminal_raw() {
    let t = shm_dir();
    let target = t.path().join("t\u{1b}]0;owned\u{7}\u{1b}[2J");
    std::fs::create_dir(&target).unwrap();
    let out = t.path().join("r");
    let o = run(&[
        "run",
        "-i",
        "write",
        "--file-sizes",
        "64k",
        "--reps",
        "3",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        target.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        t.path().join("rep").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (said, err) = (stdout(&o), stderr(&o));
    assert!(said.contains("\\u{1b}]0;owned"), "{said}");
    for text in [&said, &err] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
    }
}
