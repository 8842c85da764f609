//! Running the system tools the lab drives (ip, tc, losetup, mkfs, mount, smbpasswd, ...),
//! with errors that name the command and carry its stderr. Not for long-running servers
//! (see `proc`).

use anyhow::{bail, Context, Result};
use std::process::Command;

/// Runs `cmd args...` and returns its stdout; fails with the command and its stderr.
pub fn run(cmd: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {cmd} (is it installed?)"))?;
    if !out.status.success() {
        bail!(
            "{} {}: {}",
            cmd,
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs a command inside the network namespace `netns` (and only its network namespace:
/// mounts stay visible, unlike `ip netns exec`).
pub fn run_in(netns: &str, cmd: &str, args: &[&str]) -> Result<String> {
    let net = format!("--net=/run/netns/{netns}");
    let mut all = vec![net.as_str(), "--", cmd];
    all.extend_from_slice(args);
    run("nsenter", &all)
}

/// Runs a command whose failure is expected when the thing is already gone.
pub fn run_quiet(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
