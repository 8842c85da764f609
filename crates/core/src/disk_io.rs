//! What reached a target's server storage during a measurement: the completed write and
//! flush requests of the block devices that hold its data (the lab's loop devices), read
//! from `/sys/block/DEV/stat` before and after. A flush is a cache flush the file system
//! sent to make data stable (fsync, a journal commit); a server that answers before its
//! data is stable sends fewer of them in the measured span. Writes the page cache writes
//! back later, after the span, are not counted in it. Only for devices on this machine.

use serde::{Deserialize, Serialize};

/// Completed requests of some block devices, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskIo {
    pub writes: u64,
    pub write_bytes: u64,
    pub flushes: u64,
}

impl DiskIo {
    /// The counters of `devices` (names under /sys/block, e.g. `loop3`) now; `None` when
    /// there are none, or one cannot be read (a device gone).
    pub fn now(devices: &[String]) -> Option<DiskIo> {
        if devices.is_empty() {
            return None;
        }
        let mut sum = DiskIo::default();
        for d in devices {
            let text = std::fs::read_to_string(format!("/sys/block/{d}/stat")).ok()?;
            let one = parse_stat(&text)?;
            sum.writes += one.writes;
            sum.write_bytes += one.write_bytes;
            sum.flushes += one.flushes;
        }
        Some(sum)
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &DiskIo) -> DiskIo {
        DiskIo {
            writes: self.writes.saturating_sub(earlier.writes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            flushes: self.flushes.saturating_sub(earlier.flushes),
        }
    }

    /// Adds another interval's counts (a later pass of a sample).
    pub fn add(&self, other: &DiskIo) -> DiskIo {
        DiskIo {
            writes: self.writes + other.writes,
            write_bytes: self.write_bytes + other.write_bytes,
            flushes: self.flushes + other.flushes,
        }
    }
}

/// The fields of a `/sys/block/DEV/stat` line (Documentation/block/stat.rst): write I/Os
/// are the 5th, sectors written (of 512 bytes) the 7th, flush I/Os the 16th (kernels
/// since 5.5; older ones count no flushes).
fn parse_stat(text: &str) -> Option<DiskIo> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    Some(DiskIo {
        writes: *f.get(4)?,
        write_bytes: f.get(6)? * 512,
        flushes: *f.get(15)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_flushes_of_a_stat_line() {
        let line = "     120        0     9600       40      350       12    28000      900        0     1200     1000        0        0        0        0       77       30\n";
        let d = parse_stat(line).unwrap();
        assert_eq!(
            d,
            DiskIo {
                writes: 350,
                write_bytes: 28000 * 512,
                flushes: 77
            }
        );
        // A kernel without the flush fields: not read as zero flushes.
        assert!(parse_stat("1 2 3 4 5 6 7 8 9 10 11").is_none());
        let later = DiskIo {
            writes: 360,
            write_bytes: d.write_bytes + 4096,
            flushes: 80,
        };
        assert_eq!(
            later.since(&d),
            DiskIo {
                writes: 10,
                write_bytes: 4096,
                flushes: 3
            }
        );
    }

    #[test]
    fn no_devices_or_a_missing_one_give_nothing() {
        assert_eq!(DiskIo::now(&[]), None);
        assert_eq!(DiskIo::now(&["no-such-device-here".into()]), None);
    }
}
