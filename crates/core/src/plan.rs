//! What to run: the operations, the matrix of (file size, record size) cells, threads,
//! repetitions, and the timing and cache options. A plan is plain data, built by the CLI
//! (or a study) and read by the engine; it does no I/O.

use crate::op::Op;
use crate::size::format_size;
use serde::{Deserialize, Serialize};

pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// IOzone's `-a` defaults: files 64 KiB..512 MiB, records 4 KiB..16 MiB, doubling.
pub const AUTO_MIN_FILE: u64 = 64 * KIB;
pub const AUTO_MAX_FILE: u64 = 512 * MIB;
pub const AUTO_MIN_RECORD: u64 = 4 * KIB;
pub const AUTO_MAX_RECORD: u64 = 16 * MIB;
/// IOzone's CROSSOVER: files larger than this skip records under `LARGE_RECORD` unless -z.
pub const CROSSOVER: u64 = 16 * MIB;
pub const LARGE_RECORD: u64 = 64 * KIB;

/// One cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    pub file_size: u64,
    pub record_size: u64,
}

impl Cell {
    pub fn records(&self) -> u64 {
        self.file_size.div_ceil(self.record_size)
    }
}

/// The cells of IOzone's auto mode between the given bounds: file sizes double from
/// `min_file` to `max_file`, record sizes double from `min_record` up to the smaller of the
/// file size and `max_record`; files over `CROSSOVER` skip records under `LARGE_RECORD`
/// unless `all_records` (IOzone's -z).
pub fn auto_cells(
    min_file: u64,
    max_file: u64,
    min_record: u64,
    max_record: u64,
    all_records: bool,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    let mut file_size = min_file;
    while file_size <= max_file {
        let mut record_size = min_record;
        while record_size <= max_record && record_size <= file_size {
            if all_records || file_size <= CROSSOVER || record_size >= LARGE_RECORD {
                cells.push(Cell {
                    file_size,
                    record_size,
                });
            }
            record_size *= 2;
        }
        file_size *= 2;
    }
    cells
}

/// Every pair of an explicit file size list and record size list where the record fits the
/// file. A record size larger than every requested file size is an error.
pub fn explicit_cells(file_sizes: &[u64], record_sizes: &[u64]) -> Result<Vec<Cell>, String> {
    let largest = file_sizes.iter().copied().max().unwrap_or(0);
    if let Some(r) = record_sizes.iter().find(|&&r| r > largest) {
        return Err(format!(
            "record size {} is larger than the file size {}",
            format_size(*r),
            format_size(largest)
        ));
    }
    Ok(file_sizes
        .iter()
        .flat_map(|&f| {
            record_sizes
                .iter()
                .filter(move |&&r| r <= f)
                .map(move |&r| Cell {
                    file_size: f,
                    record_size: r,
                })
        })
        .collect())
}

/// How caches are handled before each cold measurement (the first of each IOzone test).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CachePolicy {
    /// Do nothing: reads may come from the page cache.
    #[default]
    Keep,
    /// drop_caches when root, else fadvise DONTNEED; the record says which.
    Drop,
    /// Remount the target's file system (IOzone -U).
    Remount,
    /// Bypass the cache with O_DIRECT.
    Direct,
}

impl CachePolicy {
    pub fn name(self) -> &'static str {
        match self {
            CachePolicy::Keep => "keep",
            CachePolicy::Drop => "drop",
            CachePolicy::Remount => "remount",
            CachePolicy::Direct => "direct",
        }
    }
}

/// What is inside the timed interval and how files are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Timing {
    /// Include close() in the time (IOzone -c).
    pub include_close: bool,
    /// Include fsync() (or msync in mmap mode) in the time (IOzone -e).
    pub include_fsync: bool,
    /// O_DIRECT (IOzone -I).
    pub direct: bool,
    /// O_SYNC (IOzone -o).
    pub sync: bool,
    /// Memory-map files instead of read/write (IOzone -B).
    pub mmap: bool,
}

/// A whole run, for every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub ops: Vec<Op>,
    pub cells: Vec<Cell>,
    /// Workers on separate files, started together (throughput mode when > 1).
    pub threads: u32,
    /// Always produce per-worker and aggregate records, even for one worker (IOzone -t 1).
    pub throughput_mode: bool,
    pub reps: u32,
    pub timing: Timing,
    pub cache: CachePolicy,
    /// Stride of stride-read, in records (IOzone -j, default 17).
    pub stride: u64,
    /// Stop all workers when the first finishes (IOzone's default; -x turns it off).
    pub stonewall: bool,
    pub verify: bool,
    /// Leave the files in place at the end (IOzone -w).
    pub keep_files: bool,
    /// Records per pwritev/preadv call.
    pub vector_records: usize,
    /// Seed of the random orders and the verify pattern.
    pub seed: u64,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            ops: Vec::new(),
            cells: Vec::new(),
            threads: 1,
            throughput_mode: false,
            reps: 3,
            timing: Timing::default(),
            cache: CachePolicy::Keep,
            stride: 17,
            stonewall: true,
            verify: false,
            keep_files: false,
            vector_records: 16,
            seed: 1,
        }
    }
}

impl Plan {
    /// Checks what a plan needs before any I/O; the message is one line for the user.
    pub fn validate(&self) -> Result<(), String> {
        if self.ops.is_empty() {
            return Err("no operation selected".into());
        }
        if self.cells.is_empty() {
            return Err("the file size x record size matrix is empty".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.reps == 0 {
            return Err("--reps must be at least 1".into());
        }
        if self.stride == 0 {
            return Err("the stride must be at least 1 record".into());
        }
        if self.timing.direct || self.cache == CachePolicy::Direct {
            if let Some(c) = self.cells.iter().find(|c| c.record_size % 4096 != 0) {
                return Err(format!(
                    "O_DIRECT needs record sizes that are multiples of 4 KiB, not {}",
                    format_size(c.record_size)
                ));
            }
        }
        Ok(())
    }

    /// True when O_DIRECT is in effect, by flag or by cache policy.
    pub fn direct(&self) -> bool {
        self.timing.direct || self.cache == CachePolicy::Direct
    }

    /// Bytes the plan moves per target and repetition, for progress and ETA.
    pub fn bytes_per_pass(&self) -> u64 {
        let per_cell: u64 = self.cells.iter().map(|c| c.file_size).sum();
        per_cell * self.ops.len() as u64 * u64::from(self.threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_cells_match_iozone_a() {
        let cells = auto_cells(
            AUTO_MIN_FILE,
            AUTO_MAX_FILE,
            AUTO_MIN_RECORD,
            AUTO_MAX_RECORD,
            false,
        );
        // 64k: 4k..64k (5); 128k: 6; 256k: 7; 512k: 8; 1m: 9; 2m: 10; 4m: 11; 8m: 12; 16m: 13;
        // 32m..512m: 64k..16m (9 each, 5 sizes).
        assert_eq!(cells.len(), 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 9 * 5);
        assert_eq!(
            cells[0],
            Cell {
                file_size: 64 * KIB,
                record_size: 4 * KIB
            }
        );
        assert!(cells.contains(&Cell {
            file_size: 16 * MIB,
            record_size: 4 * KIB
        }));
        assert!(!cells.contains(&Cell {
            file_size: 32 * MIB,
            record_size: 32 * KIB
        }));
        assert!(cells.contains(&Cell {
            file_size: 32 * MIB,
            record_size: 64 * KIB
        }));
        assert_eq!(
            cells.last(),
            Some(&Cell {
                file_size: 512 * MIB,
                record_size: 16 * MIB
            })
        );
    }

    #[test]
    fn auto_cells_with_z_keep_small_records() {
        let cells = auto_cells(
            AUTO_MIN_FILE,
            AUTO_MAX_FILE,
            AUTO_MIN_RECORD,
            AUTO_MAX_RECORD,
            true,
        );
        assert!(cells.contains(&Cell {
            file_size: 512 * MIB,
            record_size: 4 * KIB
        }));
        assert_eq!(cells.len(), 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 * 6);
    }

    #[test]
    fn auto_cells_respect_n_and_g() {
        let cells = auto_cells(MIB, 2 * GIB, AUTO_MIN_RECORD, AUTO_MAX_RECORD, false);
        assert_eq!(cells.first().unwrap().file_size, MIB);
        assert_eq!(cells.last().unwrap().file_size, 2 * GIB);
    }

    #[test]
    fn explicit_cells_skip_records_larger_than_a_file() {
        let cells = explicit_cells(&[64 * KIB, MIB], &[4 * KIB, 128 * KIB]).unwrap();
        assert_eq!(cells.len(), 3);
        assert!(explicit_cells(&[64 * KIB], &[128 * KIB])
            .unwrap_err()
            .contains("larger"));
    }

    #[test]
    fn validate_catches_bad_plans() {
        let mut p = Plan {
            ops: vec![Op::Write],
            cells: vec![Cell {
                file_size: MIB,
                record_size: 4 * KIB,
            }],
            ..Plan::default()
        };
        assert!(p.validate().is_ok());
        p.threads = 0;
        assert!(p.validate().is_err());
        p.threads = 1;
        p.timing.direct = true;
        p.cells[0].record_size = 1000;
        assert!(p.validate().unwrap_err().contains("4 KiB"));
    }
}
