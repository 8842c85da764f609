//! The clock of per-request latencies: the CPU's time-stamp counter where it is invariant,
//! read through `quanta`, which calibrates it against the monotonic clock and falls back to
//! that clock where the counter cannot be trusted. A reading costs about half an
//! `Instant::now()`; at 4 KiB tmpfs reads, around a microsecond each, every reading a call
//! takes is about 1% of the figure, so the record loop takes one a call
//! (docs/methods/statistics.md, "Against IOzone at 4 KiB"). Not for throughput or sample
//! lengths, which `Instant` times: a calibration error can bend a latency by a fraction of
//! a percent, never a figure.

use std::sync::LazyLock;

static CLOCK: LazyLock<quanta::Clock> = LazyLock::new(quanta::Clock::new);

/// A reading of the clock, for `ns_since` and `ns_until`.
#[derive(Debug, Clone, Copy)]
pub struct Tick(u64);

/// Reads the clock (calibrating it at the first reading of the process: call `ready` before
/// anything is timed).
#[inline]
pub fn now() -> Tick {
    Tick(CLOCK.raw())
}

/// Calibrates the clock now, outside any timed interval.
pub fn ready() {
    LazyLock::force(&CLOCK);
}

impl Tick {
    /// Nanoseconds from this reading until now.
    #[inline]
    pub fn ns_since(self) -> u64 {
        self.ns_until(now())
    }

    /// Nanoseconds from this reading until a later one (0 if `later` is not later).
    #[inline]
    pub fn ns_until(self, later: Tick) -> u64 {
        CLOCK.delta_as_nanos(self.0, later.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn agrees_with_the_monotonic_clock() {
        ready();
        let (t, i) = (now(), Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        let (ns, want) = (t.ns_since(), i.elapsed().as_nanos() as f64);
        // The two readings of each pair are a few nanoseconds apart.
        assert!(
            (ns as f64 / want - 1.0).abs() < 0.01,
            "{ns} ns against {want}"
        );
    }
}
