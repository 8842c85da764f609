//! Progress with ETA on stderr, in bytes (or load points): a bar on a terminal; without
//! one (CI logs, nohup), a plain line every 10 s (`SHAREBENCH_PROGRESS_EVERY` seconds);
//! nothing with `--quiet`.
//! A run goes round by round (repetitions outermost), and within a round its bytes do not
//! stand for its time: small files and records take the time, large files the bytes. So no
//! time left is guessed before the first round is done; after it, whole rounds set the pace.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a line is printed when stderr is not a terminal, unless `EVERY_VAR` says.
const LINE_EVERY: Duration = Duration::from_secs(10);

/// The environment variable that sets the seconds between progress lines.
pub const EVERY_VAR: &str = "SHAREBENCH_PROGRESS_EVERY";

/// The time between progress lines: `EVERY_VAR`'s whole seconds (1 to 3600), or 10 s when
/// it is not set; an error names a bad value (checked before a run starts).
pub fn line_every() -> Result<Duration, String> {
    let Some(text) = std::env::var_os(EVERY_VAR) else {
        return Ok(LINE_EVERY);
    };
    let text = text.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(s) if (1..=3600).contains(&s) => Ok(Duration::from_secs(s)),
        _ => Err(format!(
            "{EVERY_VAR}='{text}': give the seconds between progress lines, a whole number from 1 to 3600"
        )),
    }
}

pub struct Progress {
    bar: Option<ProgressBar>,
    lines: Option<Mutex<Lines>>,
    points: bool,
    /// The bytes of one round (0: the ETA is shown from the start).
    round: u64,
}

/// The bar's look: with an ETA, or (in the first round) saying it is the first round.
fn bar_style(points: bool, eta: bool) -> ProgressStyle {
    let template = match (points, eta) {
        (true, _) => {
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} load points ETA {eta} {msg}"
        }
        (false, true) => {
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ETA {eta} {msg}"
        }
        (false, false) => {
            "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} first round {msg}"
        }
    };
    ProgressStyle::with_template(template)
        .expect("static template")
        .progress_chars("=> ")
}

/// Progress told in lines.
struct Lines {
    points: bool,
    /// What the plan asked for; `--reps auto` may sample past it where cells are unsettled.
    total: u64,
    /// The bytes of one round: until they are done, no time left is guessed.
    round: u64,
    done: u64,
    started: Instant,
    last: Instant,
    every: Duration,
}

fn mins_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A size rounded for a progress line ("63.0 GiB", "1548 MiB"), where `format::size`
/// would spell out an exact but unreadable "66042688 KiB".
fn rough(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.0} KiB", b as f64 / 1024.0),
    }
}

impl Lines {
    fn line(&self, what: &str) -> String {
        let elapsed = self.started.elapsed();
        if !self.points && self.done > self.total {
            // No time left can be told: how many more samples the cells want is unknown.
            return format!(
                "sharebench: the planned {} done in {}, {} more for cells not settled yet (--reps auto): {what}",
                rough(self.total),
                mins_secs(elapsed),
                rough(self.done - self.total)
            );
        }
        let share = self.done as f64 / self.total.max(1) as f64;
        let left = if self.done < self.round {
            ", first round".to_string()
        } else if share > 0.0 {
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
                rough(self.total)
            },
            mins_secs(elapsed)
        )
    }
}

impl Progress {
    /// Progress over `total_bytes` (load points when `points`) in `rounds` rounds of equal
    /// bytes; `quiet` says nothing.
    pub fn new(total_bytes: u64, rounds: u32, points: bool, quiet: bool) -> Self {
        // Load points take their set time each, so their count is their time from the start;
        // a run of one round has no other round to learn its pace from.
        let round = if points || rounds <= 1 {
            0
        } else {
            total_bytes / u64::from(rounds)
        };
        if quiet {
            return Progress {
                bar: None,
                lines: None,
                points,
                round,
            };
        }
        if !std::io::stderr().is_terminal() {
            let now = Instant::now();
            return Progress {
                bar: None,
                points,
                round,
                lines: Some(Mutex::new(Lines {
                    points,
                    total: total_bytes,
                    round,
                    done: 0,
                    started: now,
                    last: now,
                    every: line_every().unwrap_or(LINE_EVERY),
                })),
            };
        }
        let bar = ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr());
        bar.set_style(bar_style(points, round == 0));
        Progress {
            bar: Some(bar),
            lines: None,
            points,
            round,
        }
    }

    /// Moves the bar on; past its end (`--reps auto` sampling beyond its least samples),
    /// the end moves with it.
    pub fn advance(&self, bytes: u64, what: &str) {
        if let Some(lines) = &self.lines {
            if let Ok(mut l) = lines.lock() {
                l.done += bytes;
                if l.last.elapsed() >= l.every {
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
            // The first round done: from now on the bar can tell the time left.
            if self.round > 0 && b.position() < self.round && end >= self.round {
                b.set_style(bar_style(self.points, true));
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
        let mut l = Lines {
            points: false,
            total: 4 << 30,
            round: 1 << 30,
            done: 1 << 30,
            started: Instant::now() - Duration::from_secs(30),
            last: Instant::now(),
            every: LINE_EVERY,
        };
        let line = l.line("write 16m/4k");
        assert!(
            line.starts_with("sharebench: 25% of 4.0 GiB in 30s, about 1m30s left: write 16m/4k"),
            "{line}"
        );
        // Inside the first round the bytes do not tell the time: no guess.
        l.done = (1 << 30) - 1;
        let line = l.line("write 64k/4k");
        assert!(line.contains("in 30s, first round: write 64k/4k"), "{line}");
        // Past the plan (--reps auto sampling unsettled cells): no percentage, no guess.
        l.done = (4 << 30) + (300 << 20);
        let line = l.line("read 1m/4k");
        assert_eq!(
            line,
            "sharebench: the planned 4.0 GiB done in 30s, 300 MiB more for cells not settled yet (--reps auto): read 1m/4k"
        );
    }
}
