//! The whole machine's CPU time around a measurement, from /proc/stat: the time its CPUs
//! were busy and the time the hypervisor gave to other guests (steal), so a record can say
//! how much of the machine others took while it ran. Not: this process's CPU (see `cpu`)
//! or the lab servers' (see `server_cpu`).

use std::io::Read;

/// Ticks of the aggregate `cpu` line of /proc/stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineTicks {
    /// user + nice + system + irq + softirq (guest time is counted in user).
    busy: u64,
    steal: u64,
}

/// The machine's CPU seconds between two readings, summed over its CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineTime {
    pub busy_s: f64,
    pub steal_s: f64,
}

impl MachineTicks {
    /// Reads /proc/stat; `None` where it cannot be read or parsed (not Linux).
    pub fn now() -> Option<MachineTicks> {
        let mut text = String::new();
        std::fs::File::open("/proc/stat")
            .ok()?
            .take(4096)
            .read_to_string(&mut text)
            .ok()?;
        parse(text.lines().next()?)
    }

    pub fn since(&self, earlier: &MachineTicks) -> MachineTime {
        let hz = ticks_per_second();
        MachineTime {
            busy_s: self.busy.saturating_sub(earlier.busy) as f64 / hz,
            steal_s: self.steal.saturating_sub(earlier.steal) as f64 / hz,
        }
    }
}

/// USER_HZ, the unit of /proc/stat (100 on every Linux this runs on).
fn ticks_per_second() -> f64 {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(hz)) if hz > 0 => hz as f64,
        _ => 100.0,
    }
}

/// `cpu  user nice system idle iowait irq softirq steal [guest guest_nice]`.
fn parse(line: &str) -> Option<MachineTicks> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
    let [user, nice, system, _idle, _iowait, irq, softirq, steal, ..] = v[..] else {
        return None;
    };
    Some(MachineTicks {
        busy: user + nice + system + irq + softirq,
        steal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_line_is_parsed_and_differenced() {
        let a = parse("cpu  100 5 50 9000 20 3 2 7 0 0").unwrap();
        let b = parse("cpu  160 5 70 9100 20 3 2 17 0 0").unwrap();
        assert_eq!(a.busy, 160);
        let t = b.since(&a);
        let hz = ticks_per_second();
        assert!((t.busy_s - 80.0 / hz).abs() < 1e-12 && (t.steal_s - 10.0 / hz).abs() < 1e-12);
        assert_eq!(parse("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(parse("cpu 1 2 3"), None);
    }

    #[test]
    fn this_machine_can_be_read() {
        let a = MachineTicks::now().expect("/proc/stat");
        let b = MachineTicks::now().unwrap();
        assert!(b.busy >= a.busy && b.steal >= a.steal);
    }
}
