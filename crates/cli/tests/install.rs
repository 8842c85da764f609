//! What `make install` installs besides the binary: manual pages and shell completions,
//! generated from the command line by `sharebench install-files DIR`.

mod common;
use common::*;

#[test]
fn manual_pages_and_completions_are_generated_from_the_command_line() {
    let t = shm_dir();
    let dir = t.path().join("files");
    let o = run(&["install-files", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let man = |name: &str| std::fs::read_to_string(dir.join("man1").join(name)).unwrap();
    assert!(man("sharebench.1").contains(".TH sharebench"));
    let run_page = man("sharebench-run.1");
    assert!(run_page.contains("file\\-sizes") && run_page.contains("Examples:"));
    for sub in ["lab", "iozone", "study", "report", "clean"] {
        assert!(
            dir.join(format!("man1/sharebench-{sub}.1")).is_file(),
            "{sub}"
        );
    }
    // The hidden helper has no page.
    assert!(!dir.join("man1/sharebench-install-files.1").exists());
    let bash = std::fs::read_to_string(dir.join("completions/sharebench")).unwrap();
    assert!(bash.contains("--file-sizes") && bash.contains("complete"));
    assert!(dir.join("completions/_sharebench").is_file());
    assert!(dir.join("completions/sharebench.fish").is_file());
    // Run again: the files are replaced, not refused.
    let o = run(&["install-files", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `make deb`'s script packages the binary with its pages and completions under /usr, and
/// its Depends name the libraries the binary links.
#[test]
fn the_debian_package_holds_the_binary_its_pages_and_its_libraries() {
    let t = shm_dir();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/deb.sh");
    let o = std::process::Command::new("bash")
        .arg(&script)
        .env("BIN", env!("CARGO_BIN_EXE_sharebench"))
        .env("OUT", t.path())
        .output()
        .expect("bash");
    assert!(o.status.success(), "{}", stderr(&o));
    let deb = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .expect("a .deb");
    let dpkg = |args: &[&str]| {
        let o = std::process::Command::new("dpkg-deb")
            .args(args)
            .arg(&deb)
            .output()
            .expect("dpkg-deb");
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let contents = dpkg(&["-c"]);
    for f in [
        "./usr/bin/sharebench",
        "./usr/share/man/man1/sharebench-run.1.gz",
        "./usr/share/bash-completion/completions/sharebench",
    ] {
        assert!(contents.contains(f), "{f} missing: {contents}");
    }
    let depends = stdout(
        &std::process::Command::new("dpkg-deb")
            .args(["-f"])
            .arg(&deb)
            .arg("Depends")
            .output()
            .unwrap(),
    );
    assert!(
        depends.contains("libnfs") && depends.contains("libsmbclient"),
        "{depends}"
    );
}
