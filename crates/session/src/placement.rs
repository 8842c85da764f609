//! `--cpus`: which CPUs the run's threads may use. Set on the calling thread before the
//! workers start, so they inherit it. Not: the lab servers' placement (`lab up --server-cpus`).

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// CPU numbers, sorted and without repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuList(pub Vec<usize>);

/// Parses "0", "0,1" or "0-3,6".
pub fn parse_cpus(text: &str) -> Result<CpuList, String> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{part}' is not a CPU number or range (e.g. 0,1 or 0-3)"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{part}': the range runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(CpuList(cpus))
}

/// Restricts the calling thread (and the threads it starts) to `cpus`, each of which must
/// be one this process may use now.
pub fn pin(cpus: &[usize]) -> Result<(), String> {
    let set = allowed_set("--cpus", cpus)?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| format!("--cpus: {e}"))
}

/// `cpus` as a CPU set, when every one of them is a CPU this process may use now; the
/// error names `option`.
pub fn allowed_set(option: &str, cpus: &[usize]) -> Result<CpuSet, String> {
    let allowed = sched_getaffinity(Pid::from_raw(0)).map_err(|e| format!("{option}: {e}"))?;
    let mut set = CpuSet::new();
    for &c in cpus {
        if !allowed.is_set(c).unwrap_or(false) {
            return Err(format!(
                "{option}: CPU {c} is not one this process may use (allowed: {})",
                list(&allowed)
            ));
        }
        set.set(c).map_err(|e| format!("{option}: CPU {c}: {e}"))?;
    }
    Ok(set)
}

fn list(set: &CpuSet) -> String {
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_cpus("1,0-2, 5"), Ok(CpuList(vec![0, 1, 2, 5])));
        assert!(parse_cpus("3-1").unwrap_err().contains("backwards"));
        assert!(parse_cpus("x").unwrap_err().contains("'x'"));
        assert!(pin(&[100_000]).is_err());
    }
}
