//! One reading of a user's command that prints a number: a server's CPU seconds so far
//! (`--hook server-cpu`), the bytes a replica link has carried (`--hook replica-bytes`).
//! The command runs through `sh -c` in a process group of its own, bounded by `LIMIT`
//! (past it the group is killed); a reading it cannot give is NaN, never 0. Not: what the
//! number means (the callers), nor hooks that change a system (`sharebench_study::hooks`).

/// The longest a reading may take; past it the command's process group is ended and the
/// reading is unknown.
pub const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One reading of the user's `command`: the first word it prints, a number of seconds;
/// NaN when it fails, prints no such number or overruns `LIMIT`.
pub fn number(command: &str) -> f64 {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let Ok(mut child) = std::process::Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
    else {
        return f64::NAN;
    };
    let started = std::time::Instant::now();
    let done = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.success(),
            Ok(None) if started.elapsed() < LIMIT => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            _ => {
                // Its whole group, by the PID this process started it as.
                let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                break false;
            }
        }
    };
    let mut text = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = out.take(4096).read_to_string(&mut text);
    }
    match text.split_whitespace().next().map(str::parse::<f64>) {
        Some(Ok(s)) if done && s.is_finite() && s >= 0.0 => s,
        _ => f64::NAN,
    }
}
