//! Progress with ETA on a terminal (stderr), in bytes; nothing at all when not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(total_bytes: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ETA {eta} {msg}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        Progress { bar: Some(bar) }
    }

    /// Moves the bar on; past its end (`--reps auto` sampling beyond its least samples),
    /// the end moves with it.
    pub fn advance(&self, bytes: u64, what: &str) {
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
