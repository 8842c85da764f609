//! Idle CPUs poll instead of halting while a run measures: `run`'s default where it may
//! (root), `--keep-cpus-awake` to insist, `--let-cpus-idle` to leave them be.
//!
//! Holds a CPU-latency request of 0 µs through the kernel's PM QoS device,
//! `/dev/cpu_dma_latency`, as tuned's latency-performance profile and cyclictest do: while
//! the file is open, the cpuidle governor picks only states that wake at once (polling).
//! The kernel drops the request when the file closes, also when the process dies, so
//! nothing outlives the run. On a virtual machine a halted CPU takes tens of microseconds
//! or more to wake, and a lab's clients and servers wake each other for every request
//! (docs/lab.md).
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

impl CpusAwake {
    /// Holds the request as `idle` asks: never, always (the error, one line, says why it
    /// cannot: most often not root), or where permitted, with a note on stderr where not.
    pub fn as_asked(idle: CpuIdle) -> Result<Option<Self>, String> {
        match idle {
            CpuIdle::Halt => Ok(None),
            CpuIdle::Poll => Self::hold()
                .map(Some)
                .map_err(|e| format!("--keep-cpus-awake: {e}")),
            CpuIdle::PollIfPermitted => Ok(Self::hold()
                .map_err(|e| {
                    eprintln!(
                        "sharebench: note: idle CPUs may halt while this run measures ({e}); \
                         --let-cpus-idle says that is meant"
                    )
                })
                .ok()),
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
