//! What an IOzone command line runs: the (file size, record size) slots in IOzone's order,
//! including the zero placeholder rows it stores above the crossover, the selected tests,
//! and the sharebench `Plan` built from them (IOzone's auto_test/begin/throughput_test).

use super::args::{Options, MAX_RECORD};
use crate::error::{CliError, CliResult};
use crate::run_cmd::{build_plan, CacheArg, OpList, Reps, RunArgs};
use sharebench_core::op::Op;
use sharebench_core::plan::{Cell, Plan};

/// IOzone's default file size (KB) without -a, and per child with -t.
pub const KILOBYTES: u64 = 512;
/// IOzone's default record size without -r (bytes).
pub const RECLEN: u64 = 4096;
/// Auto mode's file range (KB) and first record size (bytes).
pub const AUTO_MIN_KB: u64 = 64;
pub const AUTO_MAX_KB: u64 = 512 * 1024;
pub const AUTO_MIN_RECORD: u64 = 4096;
/// Files larger than this (KB) skip records under `LARGE_REC` unless -z.
pub const CROSSOVER_KB: u64 = 16 * 1024;
pub const LARGE_REC: u64 = 65536;
/// IOzone's stride default (records).
pub const STRIDE: u64 = 17;

/// The order of IOzone's throughput phases (throughput_test), one operation each.
pub const THROUGHPUT_PHASES: [Op; 13] = [
    Op::Write,
    Op::Rewrite,
    Op::Read,
    Op::Reread,
    Op::BackwardRead,
    Op::StrideRead,
    Op::RandomRead,
    Op::RandomMix,
    Op::RandomWrite,
    Op::Pwrite,
    Op::Pread,
    Op::Fwrite,
    Op::Fread,
];

/// One row of IOzone's report array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slot {
    /// A measured cell: the file size IOzone prints (KB) and the cell the engine runs
    /// (whole records only, as IOzone: numrecs = KB*1024/reclen).
    Cell { file_kb: u64, cell: Cell },
    /// A zero row for a record size skipped above the crossover (reports only).
    Placeholder { file_kb: u64, rec_kb: u64 },
}

impl Slot {
    pub fn file_kb(&self) -> u64 {
        match self {
            Slot::Cell { file_kb, .. } | Slot::Placeholder { file_kb, .. } => *file_kb,
        }
    }

    pub fn rec_kb(&self) -> u64 {
        match self {
            Slot::Cell { cell, .. } => cell.record_size / 1024,
            Slot::Placeholder { rec_kb, .. } => *rec_kb,
        }
    }
}

/// The slots of an auto or single run and the record sizes heading the reports (KB).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub slots: Vec<Slot>,
    pub header_kb: Vec<u64>,
}

impl Layout {
    /// The cells the engine runs, in order.
    pub fn cells(&self) -> Vec<Cell> {
        self.slots
            .iter()
            .filter_map(|s| match s {
                Slot::Cell { cell, .. } => Some(*cell),
                Slot::Placeholder { .. } => None,
            })
            .collect()
    }
}

/// Sizes from `min` to `max`, doubling (IOzone's init_file_sizes/init_record_sizes).
fn doubling(min: u64, max: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut v = min;
    while v > 0 && v <= max {
        out.push(v);
        v = v.saturating_mul(2);
        if v == u64::MAX {
            break;
        }
    }
    out
}

/// A cell of `kb` KB in records of `rec` bytes, truncated to whole records.
fn cell(kb: u64, rec: u64) -> Slot {
    let bytes = kb * 1024;
    Slot::Cell {
        file_kb: kb,
        cell: Cell {
            file_size: bytes / rec * rec,
            record_size: rec,
        },
    }
}

/// IOzone's record range after -r/-y/-q (bytes), checked like its main().
fn record_range(o: &Options, default_max: u64) -> CliResult<(u64, u64)> {
    let min = o.rec_range.0.unwrap_or(AUTO_MIN_RECORD);
    let max = o.rec_range.1.unwrap_or(default_max);
    if min > max {
        return Err(CliError::usage(format!(
            "minimum record size {} KB is greater than maximum record size {} KB",
            min / 1024,
            max / 1024
        )));
    }
    Ok((min, max))
}

/// Auto mode (-a, or several -s or -r): IOzone's auto_test().
pub fn auto_layout(o: &Options) -> CliResult<Layout> {
    let (s_count, r_count) = (o.file_sizes.len(), o.record_sizes.len());
    // Several -s or -r clear sflag/rflag and set NOCROSSflag.
    let (sflag, rflag) = (s_count == 1, r_count == 1);
    let no_cross = o.no_cross || s_count > 1 || r_count > 1;
    let crossover = !rflag && !sflag && o.min_record.is_none() && o.max_record.is_none();

    let mut min_file = o.file_sizes.first().copied().unwrap_or(AUTO_MIN_KB);
    let mut max_file = o.file_sizes.last().copied().unwrap_or(AUTO_MAX_KB);
    if let Some(g) = o.max_file {
        max_file = g;
    }
    if let Some(n) = o.min_file {
        min_file = n;
    }
    let (min_rec, max_rec) = record_range(o, MAX_RECORD)?;
    if min_rec > min_file * 1024 {
        return Err(CliError::usage(format!(
            "record length {min_rec} is greater than filesize {min_file} KB (give a larger -n)"
        )));
    }
    // IOzone sets xover = max_file_size (the last -s of a list): no file passes it when the
    // list ascends. sharebench runs exactly the listed sizes in any order.
    let xover = if no_cross { u64::MAX } else { CROSSOVER_KB };
    let files = if s_count > 1 {
        o.file_sizes.clone()
    } else {
        doubling(min_file, max_file)
    };
    let first_records = if r_count > 1 {
        o.record_sizes.clone()
    } else {
        doubling(min_rec, max_rec)
    };

    let mut records = first_records.clone();
    let mut slots = Vec::new();
    for &kb in &files {
        if crossover && kb > xover {
            records = doubling(LARGE_REC, max_rec);
            // Zero rows for the record sizes skipped, so report columns stay aligned.
            let mut mult = min_rec / 1024;
            let mut count = LARGE_REC;
            while count != min_rec && count > 0 && mult <= kb * 1024 {
                slots.push(Slot::Placeholder {
                    file_kb: kb,
                    rec_kb: mult,
                });
                mult *= 2;
                count >>= 1;
            }
        }
        for &rec in &records {
            if rec > kb * 1024 {
                break;
            }
            slots.push(cell(kb, rec));
        }
    }
    let header_kb = first_records
        .iter()
        .take_while(|&&r| r <= max_rec)
        .map(|r| r / 1024)
        .collect();
    Ok(Layout { slots, header_kb })
}

/// One cell without -a: IOzone's begin(kilobytes64, reclen).
pub fn single_layout(o: &Options) -> CliResult<Layout> {
    let kb = o.file_sizes.last().copied().unwrap_or(KILOBYTES);
    let rec = o.record_sizes.last().copied().unwrap_or(RECLEN);
    check_fits(kb, rec)?;
    // The report header: min..max record, where max = min unless -r was given.
    let min = o.rec_range.0.unwrap_or(AUTO_MIN_RECORD);
    let max = if o.record_sizes.is_empty() {
        min
    } else {
        o.rec_range.1.unwrap_or(min)
    };
    if min > max {
        return Err(CliError::usage(format!(
            "minimum record size {} KB is greater than maximum record size {} KB",
            min / 1024,
            max / 1024
        )));
    }
    Ok(Layout {
        slots: vec![cell(kb, rec)],
        header_kb: doubling(min, max).iter().map(|r| r / 1024).collect(),
    })
}

/// The per-child file (KB) and record (bytes) of throughput mode.
pub fn throughput_cell(o: &Options) -> CliResult<(u64, Cell)> {
    let kb = o.file_sizes.last().copied().unwrap_or(KILOBYTES);
    let rec = o.record_sizes.last().copied().unwrap_or(RECLEN);
    check_fits(kb, rec)?;
    Ok((
        kb,
        Cell {
            file_size: kb * 1024 / rec * rec,
            record_size: rec,
        },
    ))
}

fn check_fits(kb: u64, rec: u64) -> CliResult<()> {
    if rec > kb * 1024 {
        return Err(CliError::usage(format!(
            "record size {} KB is larger than the file size {kb} KB",
            rec / 1024
        )));
    }
    Ok(())
}

/// Which of IOzone's tests a run includes (-i, -E).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    /// Some -i was given (IOzone's include_tflag).
    pub listed: bool,
    pub tests: [bool; 13],
    /// -E: tests 9-12 exist in auto and single mode (as an IOzone built with preadv).
    pub extended: bool,
}

impl Selection {
    pub fn new(o: &Options) -> Self {
        let mut tests = [false; 13];
        for &t in &o.tests {
            tests[usize::from(t)] = true;
        }
        Selection {
            listed: !o.tests.is_empty(),
            tests,
            extended: o.extended,
        }
    }

    /// How many tests begin() considers: 0-8, or 0-12 with -E.
    pub fn num_tests(&self) -> u8 {
        if self.extended {
            13
        } else {
            9
        }
    }

    /// True when test `t` is selected (all are without -i).
    pub fn runs(&self, t: u8) -> bool {
        !self.listed || self.tests.get(usize::from(t)).copied().unwrap_or(false)
    }

    /// Auto and single mode: the operations, in IOzone's order (test 8 is a no-op there).
    pub fn auto_ops(&self) -> Vec<Op> {
        (0..self.num_tests())
            .filter(|&t| t != 8 && self.runs(t))
            .flat_map(|t| Op::for_iozone_test(t).unwrap_or_default())
            .collect()
    }

    /// Throughput mode: IOzone's phases that are selected (no record rewrite, pwritev, preadv).
    pub fn throughput_ops(&self) -> Vec<Op> {
        THROUGHPUT_PHASES
            .into_iter()
            .filter(|op| self.runs(op.iozone_test()))
            .collect()
    }

    /// Notes for tests listed with -i that IOzone would not run in this mode.
    pub fn ignored(&self, throughput: bool) -> Vec<String> {
        let listed = |t: usize| self.listed && self.tests[t];
        let mut notes = Vec::new();
        if throughput {
            if listed(4) {
                notes.push(
                    "-i 4: IOzone has no record-rewrite phase in throughput mode; skipped"
                        .to_string(),
                );
            }
            if listed(11) || listed(12) {
                notes.push(
                    "-i 11/12: IOzone has no pwritev/preadv phase in throughput mode; skipped"
                        .to_string(),
                );
            }
        } else {
            if listed(8) {
                notes.push(
                    "-i 8: the random mix runs only in throughput mode (-t), as in IOzone"
                        .to_string(),
                );
            }
            if !self.extended && (9..=12).any(listed) {
                notes.push("-i 9..12: pwrite/pread/pwritev/preadv need -E outside throughput mode, as in IOzone; skipped".to_string());
            }
        }
        notes
    }
}

/// The sharebench plan for these options (one throughput run when `threads` is set).
pub fn plan(o: &Options, ops: Vec<Op>, cells: Vec<Cell>, threads: Option<u32>) -> CliResult<Plan> {
    let mut a = RunArgs::defaults();
    a.ops = OpList(ops);
    a.threads = threads.unwrap_or(1);
    // IOzone times each test once per cell, with no shortest sample, and lets CPUs idle.
    a.reps = Some(Reps::Exactly(1));
    a.min_sample_time = 0.0;
    a.let_cpus_idle = true;
    a.include_close = o.include_close;
    a.include_fsync = o.include_fsync;
    a.direct = o.direct;
    a.sync = o.sync;
    a.cache = if o.remount.is_some() {
        CacheArg::Remount
    } else {
        CacheArg::Keep
    };
    a.stride = o.stride.unwrap_or(STRIDE);
    a.no_stonewall = o.no_stonewall;
    a.keep_files = o.keep_files;
    let mut plan = build_plan(&a)?;
    // IOzone's layout gives the cells (above the crossover it skips small records, in its
    // own order), and its -t 1 is throughput mode too.
    plan.cells = cells;
    plan.throughput_mode = threads.is_some();
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::super::args::parse;
    use super::*;
    use sharebench_core::plan::{auto_cells, CachePolicy, CROSSOVER, KIB, MIB};

    fn opts(line: &str) -> Options {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&args).unwrap_or_else(|e| panic!("{line}: {}", e.message))
    }

    fn auto(line: &str) -> Layout {
        auto_layout(&opts(line)).unwrap_or_else(|e| panic!("{line}: {}", e.message))
    }

    #[test]
    fn a_gives_126_cells_like_auto_cells() {
        let l = auto("-a");
        let cells = l.cells();
        assert_eq!(cells.len(), 126);
        assert_eq!(
            cells,
            auto_cells(64 * KIB, 512 * MIB, 4 * KIB, 16 * MIB, CROSSOVER)
        );
        // Four zero rows (4, 8, 16, 32 KB) for each of the five files over 16 MB.
        let placeholders: Vec<&Slot> = l
            .slots
            .iter()
            .filter(|s| matches!(s, Slot::Placeholder { .. }))
            .collect();
        assert_eq!(placeholders.len(), 20);
        assert_eq!(
            placeholders[0],
            &Slot::Placeholder {
                file_kb: 32768,
                rec_kb: 4
            }
        );
        assert_eq!(
            placeholders[3],
            &Slot::Placeholder {
                file_kb: 32768,
                rec_kb: 32
            }
        );
        // The placeholders come right before the file's first real cell.
        let i = l.slots.iter().position(|s| s.file_kb() == 32768).unwrap();
        assert_eq!(l.slots[i + 4].rec_kb(), 64);
        assert_eq!(
            l.header_kb,
            vec![4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
        );
    }

    #[test]
    fn z_keeps_small_records() {
        let l = auto("-a -z");
        assert_eq!(l.cells().len(), 81 + 13 * 5);
        assert!(l.cells().len() > 126);
        assert!(l.slots.iter().all(|s| matches!(s, Slot::Cell { .. })));
    }

    #[test]
    fn n_and_g_set_the_file_range() {
        let l = auto("-a -n 1m -g 2g");
        let cells = l.cells();
        assert_eq!(cells.first().unwrap().file_size, MIB);
        assert_eq!(cells.last().unwrap().file_size, 2 * 1024 * MIB);
        assert_eq!(
            cells,
            auto_cells(MIB, 2048 * MIB, 4 * KIB, 16 * MIB, CROSSOVER)
        );
        // -g 2G alone: 64 KB .. 2 GB.
        let files: Vec<u64> = auto("-a -g 2G")
            .cells()
            .iter()
            .map(|c| c.file_size)
            .collect();
        assert_eq!(files.first(), Some(&(64 * KIB)));
        assert_eq!(files.last(), Some(&(2048 * MIB)));
    }

    #[test]
    fn one_s_or_r_with_a() {
        // One -s: that size, every record up to it, no crossover.
        let l = auto("-a -s 64m");
        assert_eq!(l.cells().len(), 13);
        assert_eq!(
            l.cells()[0],
            Cell {
                file_size: 64 * MIB,
                record_size: 4 * KIB
            }
        );
        // One -r: every file of at least that size.
        let l = auto("-a -r 64k -n 64k -g 1m");
        assert_eq!(l.cells().len(), 5);
        assert!(l.cells().iter().all(|c| c.record_size == 64 * KIB));
        assert!(auto_layout(&opts("-a -r 128k"))
            .unwrap_err()
            .message
            .contains("greater than filesize"));
    }

    #[test]
    fn lists_of_s_and_r_run_exactly_those() {
        let l = auto("-s 1m -s 64k -r 4k -r 64k");
        let cells = l.cells();
        assert_eq!(
            cells,
            vec![
                Cell {
                    file_size: MIB,
                    record_size: 4 * KIB
                },
                Cell {
                    file_size: MIB,
                    record_size: 64 * KIB
                },
                Cell {
                    file_size: 64 * KIB,
                    record_size: 4 * KIB
                },
                Cell {
                    file_size: 64 * KIB,
                    record_size: 64 * KIB
                },
            ]
        );
        assert_eq!(l.header_kb, vec![4, 64]);
    }

    #[test]
    fn y_and_q_disable_the_crossover() {
        let l = auto("-a -y 8k -q 64k -n 32m -g 32m");
        assert_eq!(l.cells().len(), 4);
        assert_eq!(l.header_kb, vec![8, 16, 32, 64]);
    }

    #[test]
    fn single_cell_defaults() {
        let l = single_layout(&opts("-i 0")).unwrap();
        assert_eq!(
            l.cells(),
            vec![Cell {
                file_size: 512 * KIB,
                record_size: 4 * KIB
            }]
        );
        assert_eq!(l.header_kb, vec![4]);
        let l = single_layout(&opts("-s 100k -r 64k")).unwrap();
        // Whole records only, but the printed size stays 100 KB.
        assert_eq!(
            l.slots,
            vec![Slot::Cell {
                file_kb: 100,
                cell: Cell {
                    file_size: 64 * KIB,
                    record_size: 64 * KIB
                }
            }]
        );
        assert!(single_layout(&opts("-s 4k -r 64k")).is_err());
    }

    #[test]
    fn tests_to_ops() {
        let all = Selection::new(&opts("-a"));
        let ops = all.auto_ops();
        assert_eq!(ops.first(), Some(&Op::Write));
        assert_eq!(ops.last(), Some(&Op::Freread));
        assert!(!ops.contains(&Op::RandomMix) && !ops.contains(&Op::Pwrite));
        let e = Selection::new(&opts("-a -E"));
        assert!(e.auto_ops().contains(&Op::RePreadv));
        let some = Selection::new(&opts("-a -i 1 -i 0 -i 8 -i 9"));
        assert_eq!(
            some.auto_ops(),
            vec![Op::Write, Op::Rewrite, Op::Read, Op::Reread]
        );
        assert_eq!(some.ignored(false).len(), 2);
        // Throughput: IOzone's phase order, no record rewrite.
        let t = Selection::new(&opts("-t 2 -i 0 -i 1 -i 2 -i 3 -i 4"));
        assert_eq!(
            t.throughput_ops(),
            vec![
                Op::Write,
                Op::Rewrite,
                Op::Read,
                Op::Reread,
                Op::BackwardRead,
                Op::RandomRead,
                Op::RandomWrite
            ]
        );
        assert_eq!(Selection::new(&opts("-t 2")).throughput_ops().len(), 13);
    }

    #[test]
    fn plan_follows_the_flags() {
        let o = opts("-t 4 -c -e -I -o -x -w -j 5 -s 1m -r 64k");
        let (_, c) = throughput_cell(&o).unwrap();
        let p = plan(&o, vec![Op::Write], vec![c], Some(4)).unwrap();
        assert!(p.throughput_mode && p.threads == 4 && p.reps == 1);
        assert!(
            p.timing.include_close && p.timing.include_fsync && p.timing.direct && p.timing.sync
        );
        assert!(!p.stonewall && p.keep_files && p.stride == 5);
        // What run's defaults would change: IOzone times each cell once, CPUs left idle.
        assert!(p.auto_reps.is_none() && p.min_sample_s == 0.0);
        assert_eq!(p.cpu_idle, sharebench_core::plan::CpuIdle::Halt);
        assert_eq!(p.cache, CachePolicy::Keep);
        assert_eq!(
            p.cells,
            vec![Cell {
                file_size: MIB,
                record_size: 64 * KIB
            }]
        );
        let o = opts("-a -U /mnt");
        let p = plan(&o, vec![Op::Write], vec![], None).unwrap();
        assert_eq!(p.cache, CachePolicy::Remount);
        assert!(!p.throughput_mode && p.threads == 1 && p.stonewall && p.stride == 17);
        assert!(p.validate().is_err(), "no cells");
    }
}
