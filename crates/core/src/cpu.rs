//! CPU time of this process or thread, so each measurement can say what it cost, as
//! IOzone's -+u does. The total comes from the CPU clocks (CLOCK_*_CPUTIME_ID), exact to
//! the nanosecond; getrusage only splits it into user and system, because its own figures
//! are brought up to date at scheduler ticks and read 0 for a 1 ms measurement.
//! Server-side CPU is the lab's.

use crate::machine::{MachineTicks, MachineTime};
use nix::sys::resource::{getrusage, UsageWho};
use nix::time::{clock_gettime, ClockId};
use std::time::Instant;

/// A point in time with the CPU seconds used so far.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    wall: Instant,
    total_s: f64,
    user_s: f64,
    sys_s: f64,
    /// The whole machine's ticks, for the process-wide snapshot only.
    machine: Option<MachineTicks>,
}

/// CPU used between two snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUsage {
    /// User and system time: the exact total split in getrusage's proportions (both 0
    /// when getrusage saw no tick, i.e. the split is unknown).
    pub user_s: f64,
    pub sys_s: f64,
    /// Exact CPU time.
    pub total_s: f64,
    pub wall_s: f64,
    /// The whole machine's busy and stolen CPU time meanwhile (process-wide snapshots on
    /// Linux only).
    pub machine: Option<MachineTime>,
}

impl CpuUsage {
    /// CPU / wall time, in percent; over 100 when several threads are busy.
    pub fn util_pct(&self) -> f64 {
        util_pct(self.total_s, self.wall_s)
    }

    /// Adds another interval's usage (a later pass of a sample); the machine's time stays
    /// known only when both intervals know it.
    pub fn add(&mut self, other: &CpuUsage) {
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.total_s += other.total_s;
        self.wall_s += other.wall_s;
        self.machine = self.machine.zip(other.machine).map(|(a, b)| MachineTime {
            busy_s: a.busy_s + b.busy_s,
            steal_s: a.steal_s + b.steal_s,
        });
    }
}

/// CPU seconds over `seconds` of wall time, in percent (0 for an empty interval).
pub fn util_pct(cpu_s: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        cpu_s / seconds * 100.0
    } else {
        0.0
    }
}

impl CpuSnapshot {
    /// CPU of the whole process (every thread).
    pub fn now() -> Self {
        CpuSnapshot {
            machine: MachineTicks::now(),
            ..Self::of(UsageWho::RUSAGE_SELF, ClockId::CLOCK_PROCESS_CPUTIME_ID)
        }
    }

    /// CPU of the calling thread only (one worker of several).
    pub fn thread_now() -> Self {
        Self::of(UsageWho::RUSAGE_THREAD, ClockId::CLOCK_THREAD_CPUTIME_ID)
    }

    fn of(who: UsageWho, clock: ClockId) -> Self {
        let (user_s, sys_s) = match getrusage(who) {
            Ok(u) => (tv_secs(u.user_time()), tv_secs(u.system_time())),
            Err(_) => (0.0, 0.0),
        };
        let total_s = clock_gettime(clock)
            .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
            .unwrap_or(user_s + sys_s);
        CpuSnapshot {
            wall: Instant::now(),
            total_s,
            user_s,
            sys_s,
            machine: None,
        }
    }

    pub fn since(&self, earlier: &CpuSnapshot) -> CpuUsage {
        let total_s = (self.total_s - earlier.total_s).max(0.0);
        let ru_user = (self.user_s - earlier.user_s).max(0.0);
        let ru_sys = (self.sys_s - earlier.sys_s).max(0.0);
        let ru = ru_user + ru_sys;
        let (user_s, sys_s) = if ru > 0.0 {
            (total_s * ru_user / ru, total_s * ru_sys / ru)
        } else {
            (0.0, 0.0)
        };
        CpuUsage {
            user_s,
            sys_s,
            total_s,
            wall_s: self.wall.duration_since(earlier.wall).as_secs_f64(),
            machine: match (self.machine, earlier.machine) {
                (Some(now), Some(then)) => Some(now.since(&then)),
                _ => None,
            },
        }
    }
}

fn tv_secs(tv: nix::sys::time::TimeVal) -> f64 {
    tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_spin_is_measured_exactly() {
        // Spin until this thread has used 2 ms of CPU (however long that takes on a busy
        // machine): the CPU clock sees it, though no scheduler tick may have passed.
        let a = CpuSnapshot::thread_now();
        let mut x = 0u64;
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let u = loop {
            for _ in 0..10_000 {
                x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
            }
            let u = CpuSnapshot::thread_now().since(&a);
            if u.total_s >= 0.002 || Instant::now() > deadline {
                break u;
            }
        };
        std::hint::black_box(x);
        assert!(u.total_s >= 0.002, "{u:?}");
        // CPU time of one thread never exceeds its wall time.
        assert!(u.total_s <= u.wall_s + 1e-4, "{u:?}");
        assert!(u.util_pct() > 0.0 && u.util_pct() <= 101.0, "{u:?}");
    }

    #[test]
    fn sleeping_costs_no_cpu() {
        // The thread's clock: other tests run in this process at the same time.
        let a = CpuSnapshot::thread_now();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let u = CpuSnapshot::thread_now().since(&a);
        assert!(u.util_pct() < 50.0, "{u:?}");
    }
}
