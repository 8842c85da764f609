//! The study runner without the lab: a study file of local targets (tmpfs and a disk
//! directory) run end to end, its report and verdicts, re-reported and compared; and the
//! one-line errors for bad studies, scales and run lines.

mod common;
use common::*;

const STUDY: &str = r#"
name = "local"
title = "tmpfs against a disk directory"
seed = "none"
question = "Is tmpfs faster than the disk?"
about = "A study of local targets, for tests."
departures = ["Nothing is shared: both targets are local."]
[scales.tiny]
minutes = 1
vars = { max = "256k", shm = "SHM", disk = "DISK" }
[[steps]]
id = "m"
title = "matrix"
run = "{shm} {disk} -i write,rewrite,read --file-sizes 64k..{max} --record-sizes 4k,16k,64k --reps 3"
[[steps]]
id = "meta"
title = "metadata sweep"
run = "{shm} -w metadata --counts 20,40,80 --reps 3"
[answer]
step = "m"
a = "SHM"
b = "DISK"
[[claims]]
id = "shm-faster"
said = "tmpfs is faster"
check = { kind = "faster", step = "m", a = "SHM", b = "DISK", ops = ["write", "rewrite"] }
[[claims]]
id = "remove-beats-create"
said = "removal is faster than creation"
check = { kind = "better", step = "meta", a = "SHM", b = "SHM", op = "remove-file", op_b = "create-file", metric = "rate" }
[[claims]]
id = "shm-steadier"
said = "tmpfs varies less"
check = { kind = "steadier", step = "m", a = "SHM", b = "DISK", ops = ["write", "rewrite"] }
[[claims]]
id = "no-windows"
said = "Windows is slower"
check = { kind = "not-in-lab", why = "no Windows here" }
[[claims]]
id = "cpu"
source = "client CPU of reads"
check = { kind = "cpu-above", step = "m", targets = ["SHM"], ops = ["read"], pct = 1.0 }
"#;

fn write_study(dir: &std::path::Path, shm: &str, disk: &str) -> std::path::PathBuf {
    let p = dir.join("local.toml");
    std::fs::write(&p, STUDY.replace("SHM", shm).replace("DISK", disk)).unwrap();
    p
}

#[test]
fn a_local_study_runs_and_reports_every_claim_from_its_records() {
    let tmp = tempfile::tempdir().unwrap();
    let shm = shm_dir();
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let (shm_p, disk_p) = (shm.path().to_str().unwrap(), disk.path().to_str().unwrap());
    let study = write_study(tmp.path(), shm_p, disk_p);
    let out = tmp.path().join("run");
    let o = study_tiny(&study, &["--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Report: "), "{text}");
    assert!(text.contains("of the seed's 4 claims"), "{text}");
    // Which is steadier: the run's figure, never a verdict from one run.
    let line = text.lines().find(|l| l.contains("shm-steadier:")).unwrap();
    assert!(
        line.contains("inconclusive")
            && line.contains("jackknife over 3 repetitions")
            && line.contains("one run does not decide"),
        "{line}"
    );
    assert!(
        text.contains("not tested    no-windows: no Windows here"),
        "{text}"
    );
    // The verdict is computed: whichever it is, it comes with the run's numbers.
    let line = text.lines().find(|l| l.contains("shm-faster:")).unwrap();
    assert!(
        ["agrees", "disagrees", "inconclusive"]
            .iter()
            .any(|v| line.contains(v))
            && line.contains("over write/rewrite: t-test over 3 paired repetitions"),
        "{line}"
    );
    let html = std::fs::read_to_string(out.join("report/report.html")).unwrap();
    for needle in [
        "id=\"question\"",
        "id=\"answer\"",
        "id=\"claim-shm-faster\"",
        "id=\"claim-remove-beats-create\"",
        "id=\"figure-cpu\"",
        "Nothing is shared",
        "href=\"m/report.html\"",
    ] {
        assert!(html.contains(needle), "no {needle} in the study report");
    }
    assert!(out.join("report/m/report.html").exists());
    assert!(out.join("steps/meta/results.jsonl").exists());
    // The verdicts as data beside the report, each step's comparisons beside its own.
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report/verdicts.json")).unwrap()).unwrap();
    assert_eq!(
        (v["study"].as_str(), v["version"].as_u64()),
        (Some("local"), Some(1))
    );
    let claims = v["runs"][0]["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 5, "{v}");
    let c = claims.iter().find(|c| c["id"] == "shm-faster").unwrap();
    assert_eq!(c["check"]["kind"], "faster");
    assert!(
        ["agrees", "disagrees", "inconclusive"].contains(&c["verdict"].as_str().unwrap()),
        "{c}"
    );
    assert!(out.join("report/m/verdicts.json").exists());

    // Re-reported, and compared with itself under two labels.
    let again = tmp.path().join("again");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Re-reported at another threshold: the claim is judged against it.
    let wide = tmp.path().join("wide");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "--threshold",
        "50",
        "--out",
        wide.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = text.lines().find(|l| l.contains("shm-faster:")).unwrap();
    assert!(line.contains("50%"), "{line}");
    let cmp = tmp.path().join("cmp");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        out.to_str().unwrap(),
        "--label",
        "a",
        "--label",
        "b",
        "--out",
        cmp.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(cmp.join("report.html")).unwrap();
    assert!(html.contains("this run found (a)") && html.contains("this run found (b)"));
    // Over the runs, one run given twice is one replicate, not two.
    assert!(html.contains("over the runs"), "no over-the-runs column");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cmp.join("verdicts.json")).unwrap()).unwrap();
    let over = &v["over_runs"][0];
    assert_eq!(over["id"], "shm-steadier", "{v}");
    assert_eq!(over["verdict"], "inconclusive", "{v}");
    let found = over["found"].as_str().unwrap();
    assert!(
        found.contains("over 1 of 1 runs") && found.contains("three runs"),
        "{found}"
    );
    // A run that took its targets as listed (as every run before 2026-11-30 did, with no
    // target_order in run.json) is left out of the figure over the runs, and said to be.
    let old = tmp.path().join("old");
    let cp = std::process::Command::new("cp")
        .args(["-a", out.to_str().unwrap(), old.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(cp.success());
    let edit = |path: std::path::PathBuf, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        f(&mut v);
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    };
    edit(old.join("steps/m/run.json"), &|v| {
        assert!(v["target_order"].is_array(), "{v}");
        v.as_object_mut().unwrap().remove("target_order");
    });
    edit(old.join("study.json"), &|v| {
        v["started_at"] = "2026-11-29T10:00:00+00:00".into();
    });
    let mixed = tmp.path().join("with-old");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        old.to_str().unwrap(),
        "--out",
        mixed.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(mixed.join("verdicts.json")).unwrap()).unwrap();
    let found = v["over_runs"][0]["found"].as_str().unwrap();
    assert!(
        found.contains("over 1 of 1 runs") && found.contains("1 run(s) left out"),
        "{found}"
    );
    // The runs it counts are dated: the span of their starts.
    assert!(
        found.contains("the runs started 20") && found.contains(" UTC"),
        "{found}"
    );
    // A study directory mixed with plain results is refused in one line.
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        out.join("steps/m").to_str().unwrap(),
        "--out",
        tmp.path().join("mixed").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn bad_studies_scales_and_run_lines_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let study = write_study(tmp.path(), "/dev/shm", "/var/tmp");
    let s = study.to_str().unwrap();
    let bad_line = tmp.path().join("bad.toml");
    std::fs::write(
        &bad_line,
        STUDY
            .replace("--reps 3\"\n[[steps]]", "--reps 3 --bogus\"\n[[steps]]")
            .replace("SHM", "/dev/shm")
            .replace("DISK", "/var/tmp"),
    )
    .unwrap();
    let verdict = tmp.path().join("verdict.toml");
    std::fs::write(
        &verdict,
        STUDY.replace("said = \"tmpfs is faster\"", "verdict = \"agrees\""),
    )
    .unwrap();
    for (args, want) in [
        (
            vec!["study", "run", "no-such-study"],
            "unknown study 'no-such-study'",
        ),
        (
            vec!["study", "run", s, "--scale", "huge"],
            "no scale 'huge'",
        ),
        (
            vec![
                "study",
                "run",
                bad_line.to_str().unwrap(),
                "--scale",
                "tiny",
            ],
            "step m: ",
        ),
        (vec!["study", "run", verdict.to_str().unwrap()], "verdict"),
        (vec!["study", "run", s, "--resume"], "--out"),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
    }
    let o = run(&["study", "list"]);
    assert!(o.status.success());
    for name in [
        "dfs-nfs-vs-smb",
        "nfs-server-configs",
        "media-prealloc",
        "small-files",
        "nfs-connectathon",
    ] {
        assert!(stdout(&o).contains(name), "study list lacks {name}");
    }
}

/// The media study's Windows claim, untestable in the lab, is decided once the user maps
/// the two servers; the lab's steps (alternating ones included) say once each that they
/// were not run, and so do the claims on them.
#[test]
fn the_media_studys_windows_claim_is_decided_on_mapped_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let shm = shm_dir();
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let namespaces = lab_namespaces();
    let out = tmp.path().join("media");
    // The servers' CPU through the user's hook: here this machine's, from /proc/stat
    // (user, nice and system ticks at 100 a second), each reading's role logged.
    let asked = tmp.path().join("asked");
    let hook = format!(
        "echo $SHAREBENCH_ROLE >> {}; awk '/^cpu /{{print ($2+$3+$4)/100}}' /proc/stat",
        asked.display()
    );
    let o = run(&[
        "study",
        "run",
        "media-prealloc",
        "--scale",
        "tiny",
        "--target",
        &format!("windows-server={}", shm.path().display()),
        "--target",
        &format!("linux-server={}", disk.path().display()),
        "--hook",
        &format!("server-cpu={hook}"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&out.join("steps/windows-vs-linux"));
    assert!(
        recs.iter()
            .all(|r| r["server_cpu_s"].as_f64().is_some_and(|s| s >= 0.0)),
        "{recs:?}"
    );
    let asked = std::fs::read_to_string(&asked).unwrap();
    for role in ["windows-server", "linux-server"] {
        assert!(asked.lines().any(|l| l == role), "{asked}");
    }
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.contains(" ext3-slower-than-windows: "))
        .unwrap_or_else(|| panic!("no Windows claim: {text}"));
    assert!(
        ["agrees", "disagrees", "inconclusive"]
            .iter()
            .any(|v| line.trim_start().starts_with(v)),
        "{line}"
    );
    for step in ["hints", "plain", "hints-on-a-disk"] {
        let said = format!("step {step}: not run: map --target ext3-2007=");
        assert_eq!(text.matches(&said).count(), 1, "{step}: {text}");
    }
    let claim = text
        .lines()
        .find(|l| l.contains(" fragmentation-slows-playback: "))
        .unwrap();
    assert!(claim.contains("step plain not run"), "{claim}");
    assert_eq!(
        lab_namespaces(),
        namespaces,
        "a mapped study made a namespace"
    );
}

/// Two steps that cannot share a run (here, two local directories each in a run of its
/// own) alternate block by block: A1 B1 A2 B2 A3 B3, each block a run directory of its
/// own, and the claim across them is tested over the blocks.
#[test]
fn steps_that_alternate_run_in_turns_and_are_compared_by_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let shm = shm_dir();
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let study = r#"
name = "turns"
title = "T"
seed = "none"
question = "Q?"
about = "A"
[scales.tiny]
minutes = 1
vars = {}
[[steps]]
id = "on-shm"
title = "tmpfs"
run = "SHM -i write,read --file-sizes 256k --record-sizes 64k --reps 2"
alternate = "dirs"
[[steps]]
id = "on-disk"
title = "disk"
run = "DISK -i write,read --file-sizes 256k --record-sizes 64k --reps 2"
alternate = "dirs"
[[claims]]
id = "shm-reads-faster"
said = "tmpfs reads faster"
check = { kind = "better", step = "*", a = "SHM@on-shm", b = "DISK@on-disk", op = "read", metric = "throughput" }
"#
    .replace("SHM", shm.path().to_str().unwrap())
    .replace("DISK", disk.path().to_str().unwrap());
    let file = tmp.path().join("turns.toml");
    std::fs::write(&file, study).unwrap();
    let out = tmp.path().join("run");
    let o = run(&[
        "study",
        "run",
        file.to_str().unwrap(),
        "--scale",
        "tiny",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("on-disk (block 3 of 3)"), "{text}");
    // The blocks ran in turns: their start times alternate between the steps.
    let mut starts = Vec::new();
    for n in 1..=3 {
        for step in ["on-shm", "on-disk"] {
            let run_json = out.join(format!("steps/{step}/block-{n}/run.json"));
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&run_json).unwrap()).unwrap();
            starts.push((v["started_at"].as_str().unwrap().to_string(), step, n));
        }
    }
    let mut by_time = starts.clone();
    by_time.sort();
    assert_eq!(by_time, starts, "blocks did not run in turns");
    let st: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("study.json")).unwrap()).unwrap();
    for step in st["steps"].as_array().unwrap() {
        assert_eq!(step["status"], "complete", "{step}");
        assert_eq!(step["blocks_done"], 3, "{step}");
    }
    // The claim is tested over the blocks, not called off as two separate runs.
    let line = text
        .lines()
        .find(|l| l.contains("shm-reads-faster:"))
        .unwrap();
    assert!(
        line.contains("over 3 alternating blocks") && !line.contains("separate runs"),
        "{line}"
    );
    // Each step's report shows its blocks.
    let html = std::fs::read_to_string(out.join("report/on-shm/report.html")).unwrap();
    assert!(
        html.contains("block 3"),
        "the step report does not show its blocks"
    );
}

/// A shipped study run on the user's own targets: the seed's Windows-vs-Linux step with
/// both roles mapped to directories on two file systems, no lab stood up. The seed's three
/// claims that the lab cannot test get verdicts, the lab's step says why it did not run,
/// the page names whose systems were measured, and a resume keeps the mapping.
#[test]
fn a_study_runs_on_the_users_own_targets_in_the_roles_they_map() {
    let tmp = tempfile::tempdir().unwrap();
    let shm = shm_dir();
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let (win, lin) = (shm.path().to_str().unwrap(), disk.path().to_str().unwrap());
    let o = run(&["study", "roles", "nfs-server-configs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for role in ["  windows-server\n", "  linux-server\n"] {
        assert!(stdout(&o).contains(role), "{}", stdout(&o));
    }
    let namespaces = lab_namespaces();
    let targets = tmp.path().join("targets.toml");
    std::fs::write(
        &targets,
        format!("[roles.windows-server]\ntarget = \"{win}\"\ndescription = \"tmpfs standing in for Windows\"\n"),
    )
    .unwrap();
    let out = tmp.path().join("mine");
    let o = run(&[
        "study",
        "run",
        "nfs-server-configs",
        "--scale",
        "tiny",
        "--targets",
        targets.to_str().unwrap(),
        "--target",
        &format!("linux-server={lin}"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(!text.contains("lab up"), "{text}");
    assert!(
        text.contains("step configs: not run: map --target v3-xfs=..."),
        "{text}"
    );
    for claim in [
        "linux-outperforms-windows",
        "windows-read-dips",
        "windows-random-write-small-records",
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {claim}: ")))
            .unwrap_or_else(|| panic!("no {claim}: {text}"));
        assert!(
            ["agrees", "disagrees", "inconclusive"]
                .iter()
                .any(|v| line.trim_start().starts_with(v)),
            "{line}"
        );
    }
    // The headline is the mapped servers' comparison, the lab's step not being run.
    let headline = text
        .lines()
        .take_while(|l| !l.starts_with("Claims:"))
        .last()
        .unwrap_or_default();
    assert!(
        headline.contains("linux-server") && headline.contains("windows-server"),
        "no headline on the two servers: {text}"
    );
    assert_eq!(
        lab_namespaces(),
        namespaces,
        "a study of mapped roles made a namespace"
    );
    let html = std::fs::read_to_string(out.join("report/report.html")).unwrap();
    for needle in [
        "Whose systems",
        win,
        lin,
        "tmpfs standing in for Windows",
        "not run",
        "mounted from",
    ] {
        assert!(html.contains(needle), "no {needle} in the study page");
    }
    // Records go by role, the manifest keeps where each role was.
    let recs = records(&out.join("steps/windows-vs-linux"));
    assert!(recs
        .iter()
        .all(|r| r["target"] == "linux-server" || r["target"] == "windows-server"));
    let manifest = std::fs::read_to_string(out.join("steps/windows-vs-linux/run.json")).unwrap();
    assert!(
        manifest.contains(&format!("\"location\": \"{win}\"")),
        "{manifest}"
    );

    // A resume keeps the run's own mapping, and refuses another.
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
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("windows-vs-linux already done, kept"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "study",
        "run",
        "nfs-server-configs",
        "--scale",
        "tiny",
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--target",
        &format!("windows-server={lin}"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("other --target mappings"),
        "{}",
        stderr(&o)
    );
}

/// A mapping that cannot be run is refused in one line, exit 2, before anything runs.
#[test]
fn bad_mappings_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = tmp.path().join("never");
    let o = out.to_str().unwrap();
    for (mapping, want) in [
        ("--target=macos-server=/tmp", "no role 'macos-server'"),
        ("--target=windows-server=/no/such/dir", "does not exist"),
        (
            &format!("--target=windows-server={}", file.display()) as &str,
            "not a directory",
        ),
        ("--target=windows-server", "ROLE=TARGET"),
        ("--with-lab", "map a role"),
        ("--hook=reboot=true", "no such hook (known: failover"),
        ("--hook=failover=true", "map a role"),
        ("--hook=failover", "NAME=COMMAND"),
    ] {
        let r = run(&[
            "study",
            "run",
            "nfs-server-configs",
            "--scale",
            "tiny",
            mapping,
            "--out",
            o,
        ]);
        assert_eq!(r.status.code(), Some(2), "{mapping}: {}", stderr(&r));
        let e = stderr(&r);
        assert_eq!(e.lines().count(), 1, "{mapping}: {e}");
        assert!(e.contains(want), "{mapping}: {e}");
        assert!(!out.exists(), "{mapping}: the study directory was made");
    }
}

/// Two roles that cannot be mounted at once (`--switch`): the step runs one role at a
/// time after the user's command, in alternating blocks, and the claim is decided over the
/// blocks, never over one run each.
#[test]
fn switched_roles_run_one_at_a_time_in_alternating_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let shm = shm_dir();
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let study = tmp.path().join("switched.toml");
    std::fs::write(
        &study,
        r#"
name = "switched"
title = "Two servers behind one mount point"
seed = "none"
question = "Which is faster?"
about = "For tests."
[roles.old]
about = "the old server"
maps_to = "a directory"
[roles.new]
about = "the new server"
maps_to = "a directory"
[scales.tiny]
minutes = 1
vars = {}
[[steps]]
id = "m"
title = "matrix"
targets = ["old", "new"]
run = "-i write,read --file-sizes 256k --record-sizes 64k --reps 3"
[[claims]]
id = "new-faster"
said = "the new server is faster"
check = { kind = "faster", step = "m", a = "new", b = "old", ops = ["write", "read"] }
"#,
    )
    .unwrap();
    let counter = tmp.path().join("switches");
    let out = tmp.path().join("run");
    let c = counter.display();
    let o = study_tiny(
        &study,
        &[
            "--target",
            &format!("old={}", shm.path().display()),
            "--target",
            &format!("new={}", disk.path().display()),
            "--switch",
            &format!("old=echo old >> {c}"),
            "--switch",
            &format!("new=echo new >> {c}"),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // A, B, A, B, A, B: each switch before each of its blocks.
    assert_eq!(
        std::fs::read_to_string(&counter).unwrap(),
        "old\nnew\nold\nnew\nold\nnew\n"
    );
    for n in 1..=3 {
        for role in ["old", "new"] {
            let run_dir = out.join(format!("steps/m/block-{n}/{role}"));
            assert!(
                run_dir.join("results.jsonl").is_file(),
                "{}",
                run_dir.display()
            );
        }
    }
    let text = stdout(&o);
    let line = text.lines().find(|l| l.contains("new-faster:")).unwrap();
    assert!(line.contains("over 3 paired repetitions"), "{line}");
    assert!(out.join("report/m/report.html").is_file());
    // A switch is for a mapped role only.
    let o = study_tiny(
        &study,
        &[
            "--target",
            &format!("old={}", shm.path().display()),
            "--switch",
            "new=true",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--switch new: map the role first"),
        "{}",
        stderr(&o)
    );
}
