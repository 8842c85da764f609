//! report.html in a real browser (Debian's chromium, headless): it loads without any
//! console error, shows the answer, and a screenshot is left for a person to read
//! (printed path). Without chromium the test fails under CI and is skipped elsewhere.

mod common;
use common::*;
use sharebench_core::op::Op;
use sharebench_core::plan::Cell;
use sharebench_report::{build, write, ReportRequest};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Runs headless chromium on `page` with `extra` arguments; returns (stdout, stderr).
fn run_chromium(bin: &Path, page: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("cannot start chromium");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn report_opens_in_chromium_without_console_errors() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (scripts/install-deps.sh installs it)"
        );
        eprintln!("skipped: chromium is not installed");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The detector itself: a page with a script error must be caught.
    let bad = tmp.path().join("bad.html");
    std::fs::write(
        &bad,
        "<html><body><script>notDefined();</script></body></html>",
    )
    .unwrap();
    let (_, err) = run_chromium(&bin, &bad, &["--dump-dom"]);
    assert!(
        !console_errors(&err).is_empty(),
        "the console check sees nothing: {err}"
    );

    let cells: Vec<Cell> = all_auto_cells()
        .into_iter()
        .filter(|c| c.file_size <= 16 << 20)
        .collect();
    let ops = [Op::Write, Op::Rewrite, Op::Read, Op::Reread];
    let (nfs, smb) = (tmp.path().join("nfs"), tmp.path().join("smb"));
    write_dir(
        &nfs,
        &Target {
            name: "nfs",
            factor: 1.0,
            noise: 0.03,
            mount_options: "vers=4.2",
        },
        &ops,
        &cells,
        3,
        5,
    );
    write_dir(
        &smb,
        &Target {
            name: "smb",
            factor: 1.1,
            noise: 0.09,
            mount_options: "vers=3.1.1",
        },
        &ops,
        &cells,
        3,
        6,
    );
    let out = tmp.path().join("report");
    let req = ReportRequest {
        inputs: vec![nfs, smb],
        labels: vec![],
        baseline: None,
        out: out.clone(),
        ..Default::default()
    };
    let (_, r) = build(&req).unwrap();
    write(&out, &r).unwrap();
    let page = out.join("report.html");

    let (dom, err) = run_chromium(&bin, &page, &["--dump-dom"]);
    assert!(
        console_errors(&err).is_empty(),
        "console errors: {:?}",
        console_errors(&err)
    );
    assert!(
        dom.contains("The answer") && dom.contains("<svg"),
        "page did not render"
    );
    for needle in [
        "Latency heatmaps",
        "Percentiles of chosen cells",
        "Consistency",
    ] {
        assert!(dom.contains(needle), "the rendered page lacks {needle:?}");
    }

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let (_, err) = run_chromium(
        &bin,
        &page,
        &[
            "--window-size=1300,1800",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(
        console_errors(&err).is_empty(),
        "console errors: {:?}",
        console_errors(&err)
    );
    let png = std::fs::read(&shot).expect("no screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot looks empty"
    );
    println!("screenshot: {}", shot.display());
}

#[test]
fn report_html_is_self_contained() {
    let tmp = tempfile::tempdir().unwrap();
    let cells: Vec<Cell> = all_auto_cells().into_iter().take(10).collect();
    let a = tmp.path().join("a");
    write_dir(
        &a,
        &Target {
            name: "a",
            factor: 1.0,
            noise: 0.03,
            mount_options: "x",
        },
        &[Op::Write],
        &cells,
        3,
        5,
    );
    let req = ReportRequest {
        inputs: vec![a],
        labels: vec![],
        baseline: None,
        out: tmp.path().join("o"),
        ..Default::default()
    };
    let html = build(&req).unwrap().1.text("report.html").to_string();
    for needle in [
        "<script src",
        "<link",
        "http://",
        "https://",
        "@import",
        "url(",
    ] {
        // The SVG namespace is an identifier, not a fetch.
        let n = html.matches(needle).count()
            - if needle == "http://" {
                html.matches("http://www.w3.org/2000/svg").count()
            } else {
                0
            };
        assert_eq!(n, 0, "report.html refers to an external resource: {needle}");
    }
}

/// The 3D surface view, expanded, on a page of its own (the report's head and CSS, one
/// operation's `<details class=surf>` opened): no console error, and a screenshot for a
/// person to read (printed path).
#[test]
fn surface_view_opens_in_chromium_and_is_screenshotted() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (scripts/install-deps.sh installs it)"
        );
        eprintln!("skipped: chromium is not installed");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cells = all_auto_cells();
    let ops = [Op::Write, Op::Read];
    let (nfs, smb) = (tmp.path().join("nfs"), tmp.path().join("smb"));
    for (dir, t, seed) in [
        (
            &nfs,
            Target {
                name: "nfs",
                factor: 1.0,
                noise: 0.03,
                mount_options: "vers=4.2",
            },
            5,
        ),
        (
            &smb,
            Target {
                name: "smb",
                factor: 1.1,
                noise: 0.09,
                mount_options: "vers=3.1.1",
            },
            6,
        ),
    ] {
        // smb lacks a block of cells: it must show as a gap in its surface.
        let cells: Vec<Cell> = cells
            .iter()
            .copied()
            .filter(|c| {
                t.name == "nfs"
                    || !((1 << 20..=4 << 20).contains(&c.file_size)
                        && (16 << 10..=64 << 10).contains(&c.record_size))
            })
            .collect();
        write_dir(dir, &t, &ops, &cells, 3, seed);
    }
    let req = ReportRequest {
        inputs: vec![nfs, smb],
        labels: vec![],
        baseline: None,
        out: tmp.path().join("report"),
        ..Default::default()
    };
    let html = build(&req).unwrap().1.text("report.html").to_string();
    let head = &html[..html.find("<main>").expect("no <main>") + "<main>".len()];
    let block = html
        .match_indices("<details class=surf>")
        .map(|(i, _)| &html[i..i + html[i..].find("</details>").unwrap() + "</details>".len()])
        .find(|b| b.contains("— read</text>"))
        .expect("no 3D surface view for read");
    assert_eq!(block.matches("<svg").count(), 2, "one surface per target");
    let (nfs_svg, smb_svg) = block.split_at(block.rfind("<svg").unwrap());
    assert!(
        smb_svg.matches("<title>").count() < nfs_svg.matches("<title>").count(),
        "smb's missing cells are gaps"
    );
    assert!(block.contains("<title>file × record: KiB/s\n64k × 4k: "));
    let page = tmp.path().join("surface.html");
    std::fs::write(
        &page,
        format!(
            "{head}{}</main></body></html>",
            block.replacen("<details class=surf>", "<details class=surf open>", 1)
        ),
    )
    .unwrap();
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("surface-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    let (_, err) = run_chromium(
        &bin,
        &page,
        &[
            "--window-size=1300,620",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(
        console_errors(&err).is_empty(),
        "console errors: {:?}",
        console_errors(&err)
    );
    let png = std::fs::read(&shot).expect("no screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot looks empty"
    );
    println!("screenshot: {}", shot.display());
}
