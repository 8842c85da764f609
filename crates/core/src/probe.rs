//! One reading of a user's command that prints a number: a server's CPU seconds so far
//! (`--hook server-cpu`), the bytes a replica link has carried (`--hook replica-bytes`).
//! The command runs through `sh -c` in a process group of its own, bounded by `LIMIT`
//! (past it the group is killed); a reading it cannot give is NaN, never 0. Not: what the
//! number means (the callers), nor hooks that change a system (`sharebench_study::hooks`).

/// The longest a reading may take; past it the command's process group is ended and the
/// reading is unknown.
pub const LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// One reading of the user's `command`: the first word it prints, a number not below 0;
/// NaN when it fails, prints no such number or overruns `LIMIT`.
pub fn number(command: &str) -> f64 {
    number_within(command, LIMIT)
}

fn number_within(command: &str, limit: std::time::Duration) -> f64 {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
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
    let started = Instant::now();
    // Its whole group, by the PID this process started it as.
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let end_group = || {
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    };
    // Read as it runs, so that neither a full pipe nor a process of its own that keeps
    // the pipe open can hold the reading past `LIMIT`.
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = out.take(4096).read_to_string(&mut text);
            let _ = tx.send(text);
        });
    }
    let done = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.success(),
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(1));
            }
            _ => {
                end_group();
                let _ = child.wait();
                break false;
            }
        }
    };
    let left = limit.saturating_sub(started.elapsed());
    let text = match rx.recv_timeout(left.max(Duration::from_millis(100))) {
        Ok(text) => text,
        Err(_) => {
            // What still holds the pipe is of its group (the group is not empty, so its id
            // is still this command's).
            end_group();
            rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default()
        }
    };
    match text.split_whitespace().next().map(str::parse::<f64>) {
        Some(Ok(s)) if done && s.is_finite() && s >= 0.0 => s,
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_bounded_even_when_the_command_leaves_its_pipe_open() {
        assert_eq!(number("echo 42"), 42.0);
        let t = std::time::Instant::now();
        // The shell exits at once; what it left in the background keeps its output open.
        let limit = std::time::Duration::from_millis(300);
        let n = number_within("echo 7; sleep 30 &", limit);
        assert!(t.elapsed() < limit + std::time::Duration::from_secs(3));
        assert!(n.is_nan() || n == 7.0, "{n}");
    }
}
