//! Idle CPUs poll instead of halting while a run measures: `run`'s default where it may
//! (root), `--keep-cpus-awake` to insist, `--let-cpus-idle` to leave them be.
//!
//! Holds a CPU-latency request of 0 µs through the kernel's PM QoS device,
//! `/dev/cpu_dma_latency`, as tuned's latency-performance profile and cyclictest do: while
//! the file is open, the cpuidle governor picks only states that wake at once (polling).
//! The kernel drops the request when the file closes, also when the process dies, so
//! nothing outlives the run. On a virtual machine a halted CPU takes tens of microseconds
//! or more to wake, and a lab's clients and servers wake each other for every request
//! (docs/methods/lab.md).
//! Not: CPU frequency, or any setting that stays after the run.

use sharebench_core::plan::CpuIdle;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

/// The kernel's PM QoS CPU-latency device.
const DEVICE: &str = "/dev/cpu_dma_latency";

/// The request, held for as long as this lives.
#[derive(Debug)]
pub struct CpusAwake {
    _device: File,
}

/// What came of asking as a run's `CpuIdle` says.
#[derive(Debug)]
pub enum Asked {
    /// The request is held while this lives.
    Held(CpusAwake),
    /// Nothing was asked (`--let-cpus-idle`, IOzone's terms).
    NotAsked,
    /// Wanted where permitted, and not permitted: why, for a note once the run is known
    /// to go ahead (bad input before that gets its one line alone).
    Refused(String),
}

impl Asked {
    pub fn is_held(&self) -> bool {
        matches!(self, Asked::Held(_))
    }

    /// The note for stderr, where the request was wanted and not permitted.
    pub fn note(&self) -> Option<String> {
        match self {
            Asked::Refused(why) => Some(format!(
                "idle CPUs may halt while this run measures ({why}); --let-cpus-idle says that is meant"
            )),
            _ => None,
        }
    }
}

impl CpusAwake {
    /// Asks as `idle` says: never, always (the error, one line, says why it cannot: most
    /// often not root), or where permitted.
    pub fn as_asked(idle: CpuIdle) -> Result<Asked, String> {
        match idle {
            CpuIdle::Halt => Ok(Asked::NotAsked),
            CpuIdle::Poll => Self::hold()
                .map(Asked::Held)
                .map_err(|e| format!("--keep-cpus-awake: {e}")),
            CpuIdle::PollIfPermitted => Ok(Self::hold().map_or_else(Asked::Refused, Asked::Held)),
        }
    }

    /// Asks for 0 µs of wake-up latency; the error says why it cannot.
    pub fn hold() -> Result<Self, String> {
        let why = |e: io::Error| format!("{DEVICE}: {e}");
        let mut device = OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(DEVICE)
            .map_err(why)?;
        if !device.metadata().map_err(why)?.file_type().is_char_device() {
            return Err(format!("{DEVICE} is not the kernel's device"));
        }
        device.write_all(&0i32.to_ne_bytes()).map_err(why)?;
        Ok(CpusAwake { _device: device })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing is asked unless wanted; wanted where permitted, it is held as root and
    /// otherwise refused with a note that names the device, for after the input checks.
    #[test]
    fn asking_as_the_run_says() {
        assert!(matches!(
            CpusAwake::as_asked(CpuIdle::Halt).unwrap(),
            Asked::NotAsked
        ));
        let asked = CpusAwake::as_asked(CpuIdle::PollIfPermitted).unwrap();
        if nix::unistd::Uid::effective().is_root() {
            assert!(asked.is_held() && asked.note().is_none());
        } else {
            assert!(!asked.is_held());
            assert!(asked.note().unwrap().contains(DEVICE));
            let refused = CpusAwake::as_asked(CpuIdle::Poll).unwrap_err();
            assert!(refused.starts_with("--keep-cpus-awake: "), "{refused}");
        }
    }

    /// As root, the request is taken and, where the CPUs idle through a polling state,
    /// used: idle entries go to it while the request is held.
    #[test]
    fn the_request_is_held_while_it_lives() {
        if !nix::unistd::Uid::effective().is_root() {
            assert!(CpusAwake::hold().unwrap_err().contains(DEVICE));
            return;
        }
        let awake = CpusAwake::hold().unwrap();
        let states = "/sys/devices/system/cpu";
        let polls: Vec<String> = (0..64)
            .map(|c| format!("{states}/cpu{c}/cpuidle/state0"))
            .filter(|s| {
                std::fs::read_to_string(format!("{s}/name")).is_ok_and(|n| n.trim() == "POLL")
            })
            .collect();
        if !polls.is_empty() {
            let usage = || -> u64 {
                polls
                    .iter()
                    .map(|s| {
                        let text = std::fs::read_to_string(format!("{s}/usage")).unwrap();
                        text.trim().parse::<u64>().unwrap()
                    })
                    .sum()
            };
            let before = usage();
            // Sleep in short steps, so that a CPU idles, for at most two seconds.
            let began = std::time::Instant::now();
            while usage() == before && began.elapsed().as_secs() < 2 {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            assert!(
                usage() > before,
                "no idle entry polled while the request was held"
            );
        }
        drop(awake);
    }
}
