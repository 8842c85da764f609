//! Progress with ETA on stderr, in bytes (or load points): a bar on a terminal; without
//! one (CI logs, nohup), a plain line every `LINE_EVERY`; nothing with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a line is printed when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct Progress {
    bar: Option<ProgressBar>,
    lines: Option<Mutex<Lines>>,
}

/// Progress told in lines.
struct Lines {
    points: bool,
    total: u64,
    done: u64,
    started: Instant,
    last: Instant,
}

fn mins_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Lines {
    fn line(&self, what: &str) -> String {
        let elapsed = self.started.elapsed();
        let share = self.done as f64 / self.total.max(1) as f64;
        let left = if share > 0.0 {
            format!(
                ", about {} left",
                mins_secs(elapsed.mul_f64((1.0 - share).max(0.0) / share))
            )
        } else {
            String::new()
        };
        format!(
            "sharebench: {:.0}% of {} in {}{left}: {what}",
            share * 100.0,
            if self.points {
                format!("{} load points", self.total)
            } else {
                sharebench_report::format::size(self.total)
            },
            mins_secs(elapsed)
        )
    }
}

impl Progress {
    /// Progress over `total_bytes` (load points when `points`); `quiet` says nothing.
    pub fn new(total_bytes: u64, points: bool, quiet: bool) -> Self {
        if quiet {
            return Progress {
                bar: None,
                lines: None,
            };
        }
        if !std::io::stderr().is_terminal() {
            let now = Instant::now();
            return Progress {
                bar: None,
                lines: Some(Mutex::new(Lines {
                    points,
                    total: total_bytes,
                    done: 0,
                    started: now,
                    last: now,
                })),
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(if points {
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} load points ETA {eta} {msg}"
            } else {
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ETA {eta} {msg}"
            })
            .expect("static template")
            .progress_chars("=> "),
        );
        Progress {
            bar: Some(bar),
            lines: None,
        }
    }

    /// Moves the bar on; past its end (`--reps auto` sampling beyond its least samples),
    /// the end moves with it.
    pub fn advance(&self, bytes: u64, what: &str) {
        if let Some(lines) = &self.lines {
            if let Ok(mut l) = lines.lock() {
                l.done += bytes;
                l.total = l.total.max(l.done);
                if l.last.elapsed() >= LINE_EVERY {
                    l.last = Instant::now();
                    let _ = writeln!(std::io::stderr(), "{}", l.line(what));
                }
            }
        }
        if let Some(b) = &self.bar {
            let end = b.position() + bytes;
            if b.length().is_some_and(|len| end > len) {
                b.set_length(end);
            }
            b.inc(bytes);
            b.set_message(what.to_string());
        }
    }

    /// Prints a line above the bar (or plainly to stderr).
    pub fn println(&self, line: &str) {
        let say = || {
            let _ = writeln!(std::io::stderr(), "{line}");
        };
        match &self.bar {
            Some(b) => b.suspend(say),
            None => say(),
        }
    }

    /// Runs `f` (which prints) with the bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_how_far_how_long_and_how_much_is_left() {
        let l = Lines {
            points: false,
            total: 4 << 30,
            done: 1 << 30,
            started: Instant::now() - Duration::from_secs(30),
            last: Instant::now(),
        };
        let line = l.line("write 16m/4k");
        assert!(
            line.starts_with("sharebench: 25% of 4 GiB in 30s, about 1m30s left: write 16m/4k"),
            "{line}"
        );
    }
}
