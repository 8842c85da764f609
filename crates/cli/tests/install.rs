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
