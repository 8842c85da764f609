//! `sharebench install-files DIR` (hidden; `make install` calls it): the manual pages and
//! shell completions generated from the command line itself, so they never drift from
//! it. Writes `DIR/man1/sharebench.1` and one page per subcommand (`sharebench-run.1`,
//! ...), and `DIR/completions/` for bash (`sharebench`), zsh (`_sharebench`) and fish
//! (`sharebench.fish`). Files are replaced whole, never written through a symlink. Not:
//! where they go (the Makefile's `install` knows Debian's places).

use crate::error::{CliError, CliResult};
use clap::Command;
use clap_complete::Shell;
use sharebench_core::safe_dir::SafeDir;
use std::path::Path;

/// Renders every file into `dir`; returns how many were written.
pub fn write_all(cmd: Command, dir: &Path) -> CliResult<usize> {
    let fail = |what: &str, e: std::io::Error| CliError::failed(format!("{what}: {e}"));
    let root = SafeDir::create(dir).map_err(|e| fail(&dir.display().to_string(), e))?;
    let man = root.subdir("man1").map_err(|e| fail("man1", e))?;
    let mut written = 0;
    let mut pages = vec![("sharebench".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("sharebench-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in pages {
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut bytes)
            .map_err(|e| fail(&name, e))?;
        let file = format!("{name}.1");
        man.replace(&file, &bytes, 0o644)
            .map_err(|e| fail(&file, e))?;
        written += 1;
    }
    let completions = root
        .subdir("completions")
        .map_err(|e| fail("completions", e))?;
    for (shell, file) in [
        (Shell::Bash, "sharebench"),
        (Shell::Zsh, "_sharebench"),
        (Shell::Fish, "sharebench.fish"),
    ] {
        let mut bytes = Vec::new();
        clap_complete::generate(shell, &mut cmd.clone(), "sharebench", &mut bytes);
        completions
            .replace(file, &bytes, 0o644)
            .map_err(|e| fail(file, e))?;
        written += 1;
    }
    Ok(written)
}
