//! `sharebench run`: the native front end. Options name what they do; defaults give a quick,
//! useful comparison (3 repetitions of IOzone's tests 0-5 over a small matrix).

use crate::error::{CliError, CliResult};
use crate::session::{self, SessionSpec};
use crate::summary;
use clap::{Args, ValueEnum};
use sharebench_core::op::{parse_op_list, Op};
use sharebench_core::plan::{self, CachePolicy, Plan, Timing};
use sharebench_core::size::{parse_size, parse_size_list, BareUnit};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Where the I/O goes: directories (local, tmpfs, kernel or FUSE mounts) or null://
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Operations, comma-separated, in any order (run in IOzone's order): write, rewrite,
    /// read, reread, random-read, random-write, backward-read, record-rewrite, stride-read,
    /// fwrite, frewrite, fread, freread, random-mix, pwrite, re-pwrite, pread, re-pread,
    /// pwritev, re-pwritev, preadv, re-preadv; or `iozone` (tests 0-5) or `all`
    #[arg(short = 'i', long = "ops", value_name = "LIST", default_value = "iozone", value_parser = parse_ops)]
    pub ops: OpList,

    /// File sizes: a list and/or doubling ranges, e.g. 64k,1m or 64k..512m (k/m/g = KiB/MiB/GiB)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse_sizes, conflicts_with = "auto")]
    pub file_sizes: Option<SizeList>,

    /// Record (transfer) sizes, same syntax as --file-sizes
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse_sizes)]
    pub record_sizes: Option<SizeList>,

    /// IOzone's -a matrix: files 64k..512m x records 4k..16m, doubling; files over 16m skip
    /// records under 64k (see --all-records)
    #[arg(short = 'a', long)]
    pub auto: bool,

    /// With --auto: every record size for every file size (IOzone's -z)
    #[arg(long, requires = "auto")]
    pub all_records: bool,

    /// With --auto: the smallest file size (IOzone's -n)
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_one_size, requires = "auto")]
    pub min_file: Option<u64>,

    /// With --auto: the largest file size (IOzone's -g)
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_one_size, requires = "auto")]
    pub max_file: Option<u64>,

    /// Workers, each on its own file, started together (throughput mode when > 1)
    #[arg(short = 't', long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: u32,

    /// Repetitions of every measurement, one record each (interleaved across targets)
    #[arg(short = 'n', long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub reps: u32,

    /// Include close() in the timed interval (IOzone -c)
    #[arg(long)]
    pub include_close: bool,

    /// Include fsync() in the timed interval of writes (IOzone -e)
    #[arg(long)]
    pub include_fsync: bool,

    /// Open with O_DIRECT (IOzone -I); record sizes must be multiples of 4k
    #[arg(long)]
    pub direct: bool,

    /// Open with O_SYNC (IOzone -o)
    #[arg(long)]
    pub sync: bool,

    /// Memory-map files instead of read()/write() for the cursor-style operations (IOzone -B)
    #[arg(long)]
    pub mmap: bool,

    /// Cache handling before the first operation of each test: keep; drop (drop_caches as
    /// root, else fadvise DONTNEED, recorded per measurement); remount (IOzone -U); direct (O_DIRECT)
    #[arg(long, value_enum, default_value_t = CacheArg::Keep)]
    pub cache: CacheArg,

    /// Stride of stride-read, in records (IOzone -j)
    #[arg(long, value_name = "RECORDS", default_value_t = 17, value_parser = clap::value_parser!(u64).range(1..))]
    pub stride: u64,

    /// Let every worker finish instead of freezing figures when the first finishes (IOzone -x)
    #[arg(long)]
    pub no_stonewall: bool,

    /// Write a pattern derived from file, offset and run; check every read; a mismatch fails the run
    #[arg(long)]
    pub verify: bool,

    /// Leave the test files and working directory in place (IOzone -w)
    #[arg(long)]
    pub keep_files: bool,

    /// Seed of the random orders and the verify pattern
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Results directory (new or empty); default ./sharebench-results/<UTC time>-<pid>/
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CacheArg {
    Keep,
    Drop,
    Remount,
    Direct,
}

/// A parsed `--ops` list (a newtype so clap takes it as one value).
#[derive(Clone, Debug)]
pub struct OpList(pub Vec<Op>);

/// A parsed size list.
#[derive(Clone, Debug)]
pub struct SizeList(pub Vec<u64>);

fn parse_ops(s: &str) -> Result<OpList, String> {
    parse_op_list(s).map(OpList)
}

fn parse_sizes(s: &str) -> Result<SizeList, String> {
    parse_size_list(s, BareUnit::Bytes)
        .map(SizeList)
        .map_err(|e| e.to_string())
}

fn parse_one_size(s: &str) -> Result<u64, String> {
    parse_size(s, BareUnit::Bytes).map_err(|e| e.to_string())
}

/// The matrix when none is asked for: quick, yet small, medium and large-ish files.
const DEFAULT_FILE_SIZES: [u64; 3] = [plan::MIB, 16 * plan::MIB, 128 * plan::MIB];
const DEFAULT_RECORD_SIZES: [u64; 3] = [4 * plan::KIB, 64 * plan::KIB, plan::MIB];

/// Builds the plan the options describe.
pub fn build_plan(a: &RunArgs) -> CliResult<Plan> {
    let cells = if a.auto {
        let (min_rec, max_rec) = match &a.record_sizes {
            Some(SizeList(r)) => (r[0], *r.last().unwrap_or(&r[0])),
            None => (plan::AUTO_MIN_RECORD, plan::AUTO_MAX_RECORD),
        };
        let min_file = a.min_file.unwrap_or(plan::AUTO_MIN_FILE);
        let max_file = a.max_file.unwrap_or(plan::AUTO_MAX_FILE);
        if min_file > max_file {
            return Err(CliError::usage("--min-file is larger than --max-file"));
        }
        plan::auto_cells(min_file, max_file, min_rec, max_rec, a.all_records)
    } else {
        let files = a
            .file_sizes
            .clone()
            .map(|l| l.0)
            .unwrap_or_else(|| DEFAULT_FILE_SIZES.to_vec());
        let records = a.record_sizes.clone().map(|l| l.0).unwrap_or_else(|| {
            let largest = files.iter().copied().max().unwrap_or(0);
            DEFAULT_RECORD_SIZES
                .iter()
                .copied()
                .filter(|&r| r <= largest)
                .collect()
        });
        plan::explicit_cells(&files, &records).map_err(CliError::usage)?
    };
    let plan = Plan {
        ops: a.ops.0.clone(),
        cells,
        threads: a.threads,
        throughput_mode: a.threads > 1,
        reps: a.reps,
        timing: Timing {
            include_close: a.include_close,
            include_fsync: a.include_fsync,
            direct: a.direct,
            sync: a.sync,
            mmap: a.mmap,
        },
        cache: match a.cache {
            CacheArg::Keep => CachePolicy::Keep,
            CacheArg::Drop => CachePolicy::Drop,
            CacheArg::Remount => CachePolicy::Remount,
            CacheArg::Direct => CachePolicy::Direct,
        },
        stride: a.stride,
        stonewall: !a.no_stonewall,
        verify: a.verify,
        keep_files: a.keep_files,
        seed: a.seed,
        ..Plan::default()
    };
    plan.validate().map_err(CliError::usage)?;
    Ok(plan)
}

pub fn main(args: RunArgs) -> CliResult<()> {
    let plan = build_plan(&args)?;
    let spec = SessionSpec {
        plan: &plan,
        targets: &args.targets,
        out: args.out.clone(),
        command_line: std::env::args().collect(),
    };
    let result = session::execute(spec, &mut |_| {})?;
    let mut out = std::io::stdout().lock();
    summary::print(&result.records, &mut out);
    // A closed stdout (`| head`) must not turn a finished run into a panic.
    let _ = writeln!(out, "Results: {}", result.out_dir.display());
    match session::outcome_error(&result) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
