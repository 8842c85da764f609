//! The open-loop schedule of one load worker at one load point: request k is due at
//! `start + (k + phase) / rate`, for exactly `round(rate x seconds)` requests. The worker's
//! lanes (`--iodepth`) share it: each takes the next request when it is free, so a request
//! is issued when due whether or not earlier ones returned, as long as a lane is free, and
//! as soon as one is free when all are busy. Its latency is counted from when it was due: a
//! stall shows in every request it held up (wrk2's correction for coordinated omission),
//! not only in the one that met it. A worker still behind at the point's end goes on with
//! its overdue requests (a short backlog clears in a moment on a target that keeps up), but
//! not past twice the point's time: the rest are dropped, and the point falls short of its
//! rate. Not: what a request does (`lane`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a worker may take, in point times, to issue a point's requests.
pub const OVERRUN: f64 = 2.0;

/// The due times of one worker's requests at one load point, handed out to its lanes.
#[derive(Debug)]
pub struct Schedule {
    start: Instant,
    end: Instant,
    interval_s: f64,
    phase: f64,
    /// The next request not yet handed out.
    next: AtomicU64,
    count: u64,
}

impl Schedule {
    /// `rate` requests per second for `seconds` from `start`; `phase` in 0..1 shifts this
    /// worker's requests inside the interval so that workers do not issue in lockstep.
    pub fn new(start: Instant, rate: f64, seconds: f64, phase: f64) -> Schedule {
        let count = (rate * seconds).round().max(0.0) as u64;
        Schedule {
            start,
            end: start + Duration::from_secs_f64(seconds * OVERRUN),
            interval_s: if rate > 0.0 { 1.0 / rate } else { 0.0 },
            phase: phase.clamp(0.0, 0.999),
            next: AtomicU64::new(0),
            count,
        }
    }

    pub fn start(&self) -> Instant {
        self.start
    }

    /// The requests this schedule holds.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Hands out the next request: its due time; `None` when all were handed out, or when
    /// `now` is past `OVERRUN` point times (the rest are dropped: see `dropped`).
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        if now >= self.end {
            return None;
        }
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        (k < self.count).then(|| {
            self.start + Duration::from_secs_f64((k as f64 + self.phase) * self.interval_s)
        })
    }

    /// Requests never handed out because the worker ran out of time.
    pub fn dropped(&self) -> u64 {
        self.count - self.next.load(Ordering::Relaxed).min(self.count)
    }
}

/// Asks the kernel to wake this thread on time: its default timer slack (50 us) would add
/// itself to every request's latency as counted from the schedule.
pub fn precise_timers() {
    let _ = nix::sys::prctl::set_timerslack(1);
}

/// Sleeps until `due` (at once when it has passed), in steps short enough to notice Ctrl-C;
/// false when cancelled.
pub fn wait_until(due: Instant, cancel: &AtomicBool) -> bool {
    loop {
        if cancel.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(50)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_rate_times_seconds_requests_evenly_spaced() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 100.0, 2.0, 0.5);
        assert_eq!(s.count(), 200);
        let dues: Vec<Instant> = std::iter::from_fn(|| s.next_due(t0)).collect();
        assert_eq!(dues.len(), 200);
        assert_eq!(dues[0] - t0, Duration::from_millis(5));
        let gap = dues[1] - dues[0];
        assert!((gap.as_secs_f64() - 0.01).abs() < 1e-6, "{gap:?}");
        assert!(dues[199] < t0 + Duration::from_secs(2));
        assert_eq!(s.dropped(), 0);
    }

    #[test]
    fn overdue_requests_go_on_after_the_end_but_not_past_twice_its_time() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 10.0, 1.0, 0.0);
        assert!(s.next_due(t0).is_some());
        assert!(s.next_due(t0 + Duration::from_millis(1500)).is_some());
        assert!(s.next_due(t0 + Duration::from_secs(2)).is_none());
        assert_eq!(s.dropped(), 8);
    }

    #[test]
    fn wait_until_returns_on_time_or_on_cancel() {
        precise_timers();
        let cancel = AtomicBool::new(false);
        let due = Instant::now() + Duration::from_millis(20);
        assert!(wait_until(due, &cancel));
        assert!(Instant::now() >= due);
        cancel.store(true, Ordering::Relaxed);
        assert!(!wait_until(
            Instant::now() + Duration::from_secs(60),
            &cancel
        ));
    }
}
