//! A server that answers before anything is stable, as a Linux `async` export does: it
//! runs under a seccomp filter (seccompiler) that makes fsync, fdatasync, syncfs, sync and
//! sync_file_range return success without doing anything, for every thread, inherited
//! across exec. Not an LD_PRELOAD such as eatmydata: Ganesha loads its FSALs with
//! RTLD_DEEPBIND, so their fsync binds to libc's and no preload reaches it (measured: the
//! loop device counted a flush per COMMIT under eatmydata).

use anyhow::{Context, Result};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;

/// The system calls that make data stable.
const SYNC_CALLS: [i64; 5] = [
    nix::libc::SYS_fsync,
    nix::libc::SYS_fdatasync,
    nix::libc::SYS_syncfs,
    nix::libc::SYS_sync,
    nix::libc::SYS_sync_file_range,
];

/// The filter: those calls succeed at once; everything else runs.
fn filter() -> Result<BpfProgram> {
    let rules: BTreeMap<i64, Vec<seccompiler::SeccompRule>> =
        SYNC_CALLS.iter().map(|&n| (n, Vec::new())).collect();
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| anyhow::anyhow!("seccomp on {}: {e}", std::env::consts::ARCH))?;
    let f = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(0), arch)
        .context("building the no-sync filter")?;
    f.try_into().context("compiling the no-sync filter")
}

/// Runs `cmd args` in place of this process with every sync call a no-op. Returns only
/// on failure.
pub fn exec(cmd: &str, args: &[String]) -> anyhow::Error {
    let prog = match filter() {
        Ok(p) => p,
        Err(e) => return e,
    };
    if let Err(e) = seccompiler::apply_filter_all_threads(&prog) {
        return anyhow::anyhow!("cannot install the no-sync filter: {e}");
    }
    let e = std::process::Command::new(cmd).args(args).exec();
    anyhow::anyhow!("cannot run {cmd}: {e}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_compiles_for_this_machine() {
        assert!(!super::filter().unwrap().is_empty());
    }
}
