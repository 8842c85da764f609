//! `sharebench run`: the native front end. Options name what they do; defaults give a quick,
//! useful comparison (3 repetitions of IOzone's tests 0-5 over a small matrix).

use crate::error::{CliError, CliResult};
use crate::session::{self, SessionSpec};
use clap::{Args, ValueEnum};
use sharebench_core::op::{parse_op_list, Op};
use sharebench_core::plan::{
    self, AutoReps, CachePolicy, CpuIdle, LoadParams, MetadataParams, Plan, Prealloc,
    PreallocHints, SmallfilesParams, StreamParams, Timing, Workload,
};
use sharebench_core::record::Record;
use sharebench_core::size::{parse_size, parse_size_list, BareUnit};
use sharebench_report::summary;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  sharebench run /dev/shm /var/tmp
      tmpfs against the disk: IOzone's tests 0-5, files 1m,16m,128m x records 4k,64k,1m,
      sampled until each median is known to ±3% (--reps auto)
  sharebench run -i write,read,random-read --file-sizes 64k..16m --record-sizes 4k,1m /mnt/nfs /mnt/smb
      two shares side by side, their samples interleaved, on a doubling range of files
  sharebench run --auto --max-file 64m --reps 5 /mnt/nfs
      IOzone's -a matrix up to 64 MiB files, five repetitions a cell
  sharebench run --threads 4 --file-sizes 512k --record-sizes 4k /mnt/smb
      throughput mode: four workers (children see, parent sees)
  sharebench run --workload smallfiles lab:nfs3 lab:smb
      a 1,800-file web tree copied as rsync -a does (needs `sharebench lab up`)

Then: sharebench report RESULTS_DIR --out REPORT_DIR (report.html, results.xlsx).
Without a terminal (CI logs, nohup), progress comes as a line every 10 s; set
SHAREBENCH_PROGRESS_EVERY=SECONDS for another pace, or --quiet for none.
Operations: docs/methods/operations.md; statistics: docs/methods/statistics.md.")]
pub struct RunArgs {
    /// Where the I/O goes: directories (local, tmpfs, kernel or FUSE mounts), null://,
    /// nfs://HOST/EXPORT?version=3|4.0|4.1|4.2 (&nconnect=N: N connections per open file;
    /// 4.1 and 4.2: &client=nfs-rs for the older data path), smb://USER@HOST/SHARE (the smb2
    /// client; ?client=libsmbclient for Samba's), gluster://HOST/VOLUME, or lab:NAME
    /// (`sharebench lab status` lists the lab's). Native clients reach loopback and the lab's
    /// namespaces only
    #[arg(required = true, value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Operations, comma-separated, in any order (run in IOzone's order): write, rewrite,
    /// read, reread, random-read, random-write, backward-read, record-rewrite, stride-read,
    /// fwrite, frewrite, fread, freread, random-mix, pwrite, re-pwrite, pread, re-pread,
    /// pwritev, re-pwritev, preadv, re-preadv; or `iozone` (tests 0-5) or `all`
    #[arg(short = 'i', long = "ops", value_name = "LIST", default_value = "iozone", value_parser = parse_ops)]
    pub ops: OpList,

    /// File sizes: a list and/or doubling ranges, e.g. 64k,1m or 64k..512m. Units, any case,
    /// all binary: none or b = bytes, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib.
    /// Default: 1m,16m,128m
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse_sizes, conflicts_with = "auto")]
    pub file_sizes: Option<SizeList>,

    /// Record (transfer) sizes, same syntax as --file-sizes. Default: 4k,64k,1m (those up to
    /// the largest file)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, value_parser = parse_sizes)]
    pub record_sizes: Option<SizeList>,

    /// IOzone's -a matrix: files 64k..512m x records 4k..16m, doubling; files over 16m skip
    /// records under 64k (see --crossover, --all-records)
    #[arg(short = 'a', long)]
    pub auto: bool,

    /// With --auto: every record size for every file size (IOzone's -z)
    #[arg(long, requires = "auto", conflicts_with = "crossover")]
    pub all_records: bool,

    /// With --auto: files larger than SIZE skip records under 64k [default: 16m, IOzone's]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_one_size, requires = "auto")]
    pub crossover: Option<u64>,

    /// With --auto: the smallest file size (IOzone's -n)
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_one_size, requires = "auto")]
    pub min_file: Option<u64>,

    /// With --auto: sizes grow by N instead of doubling; 4 takes every other file and
    /// record size of IOzone's grid (and the largest file), about a third of its cells
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(2..=16), requires = "auto")]
    pub size_factor: u64,

    /// With --auto: the largest file size (IOzone's -g)
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = parse_one_size, requires = "auto")]
    pub max_file: Option<u64>,

    /// Workers, each on its own file, started together (throughput mode when > 1)
    #[arg(short = 't', long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: u32,

    /// Samples of every measurement, one record each, interleaved across targets: `auto`
    /// (the default for one client) samples each cell until the 95% interval of every
    /// target's median is within --ci-width (at least 6 samples, at most --max-reps, within
    /// --max-cell-time); N takes exactly N (the default of a multi-client run and of
    /// --workload load: 3). The interval is the run's own: on a shared machine a run
    /// minutes later can land further off; several runs reported under one --label show
    /// by how much
    #[arg(short = 'n', long, value_name = "auto|N", value_parser = parse_reps)]
    pub reps: Option<Reps>,

    /// With --reps auto: the half-width of the 95% interval of a median to reach, in percent
    #[arg(long, value_name = "PCT", default_value = "3", value_parser = parse_percent)]
    pub ci_width: f64,

    /// With --reps auto: the most samples of a cell
    #[arg(long, value_name = "N", default_value_t = plan::DEFAULT_MAX_REPS, value_parser = clap::value_parser!(u32).range(6..=10000))]
    pub max_reps: u32,

    /// With --reps auto: the most time one cell's samples take on one target (us, ms, s)
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = parse_seconds)]
    pub max_cell_time: f64,

    /// Least time of one sample, per operation: the cell's operations run again, a round at
    /// a time, each round on a file written anew, until their passes last this long per
    /// operation together and each one's at least half of it; the record counts every pass
    /// (with --threads, each round starts the workers together; 0 = IOzone's single pass;
    /// multi-client runs always take one). Units: us, ms, s
    #[arg(long, value_name = "TIME", default_value = DEFAULT_MIN_SAMPLE_TIME, value_parser = parse_seconds)]
    pub min_sample_time: f64,

    /// Keep the run's threads on these CPUs, e.g. 1 or 0-1 (sched_setaffinity; recorded in
    /// run.json). Default: wherever the scheduler puts them
    #[arg(long, value_name = "LIST", value_parser = crate::placement::parse_cpus)]
    pub cpus: Option<crate::placement::CpuList>,

    /// Keep idle CPUs polling instead of halting while the run measures, or refuse to run.
    /// The default does so where permitted (root) and says so where not: it holds a
    /// CPU-latency request of 0 µs (/dev/cpu_dma_latency), which the kernel drops when
    /// sharebench exits. On a virtual machine a halted CPU takes tens of microseconds or
    /// more to wake, and the lab's clients and servers wake each other for every request:
    /// in the lab, requests at depth 1 run faster with it, and on tmpfs figures repeat closer
    /// from run to run (docs/methods/lab.md, docs/methods/statistics.md; the figures:
    /// docs/measurements.md)
    #[arg(long, conflicts_with = "let_cpus_idle")]
    pub keep_cpus_awake: bool,

    /// Let idle CPUs halt as the kernel sees fit while the run measures (the machine's own
    /// behaviour, as IOzone and fio run), instead of keeping them polling
    #[arg(long)]
    pub let_cpus_idle: bool,

    /// Include close() in the timed interval (IOzone -c)
    #[arg(long)]
    pub include_close: bool,

    /// Include fsync() in the timed interval of writes (IOzone -e)
    #[arg(long)]
    pub include_fsync: bool,

    /// Open with O_DIRECT (IOzone -I); record sizes must be multiples of 4k
    #[arg(long)]
    pub direct: bool,

    /// Open with O_SYNC (IOzone -o); smallfiles: every file written stable (NFS FILE_SYNC)
    #[arg(long)]
    pub sync: bool,

    /// Native clients (nfs://, smb://, lab:nfs3, lab:smb, ...) keep a page cache of this
    /// size, as a kernel client's memory bounds its cache: reads it holds are memory copies,
    /// a file larger than it is read from the server again. Records name it (client
    /// `libnfs+cache 16 MiB`). Default: no cache (docs/methods/operations.md)
    #[arg(long, value_name = "SIZE", value_parser = parse_cache_size)]
    pub client_cache: Option<u64>,

    /// Requests each worker keeps in flight, as a kernel client's readahead and write-behind
    /// or fio's iodepth do: directories through io_uring (--direct works alongside),
    /// nfs:// (libnfs's asynchronous calls for 3 and 4.0; for 4.1 and 4.2 the session's
    /// slots on sharebench's own data path),
    /// gluster://, smb:// (the smb2 client; ?client=libsmbclient cannot), null://. 1 is one call
    /// at a time, IOzone's way. record-rewrite and the f* (stdio) operations, whose order
    /// allows no overlap, and mmap mode run at 1; records say the depth (docs/methods/operations.md).
    /// --workload load: each worker's requests go out on schedule on N lanes (threads, each
    /// with its own files), whether or not earlier ones returned, up to N in flight
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(plan::MAX_IODEPTH)))]
    pub iodepth: u32,

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

    /// No progress on stderr: neither the bar on a terminal nor, without one (CI logs,
    /// nohup), the line every 10 s
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// The plan as data, written by `study run` for the ranks of a multi-client step and
    /// used as it is in place of the options that shape one (not for people: hidden)
    #[arg(long, value_name = "FILE", hide = true)]
    pub plan_file: Option<PathBuf>,

    /// The names the records give the targets, one each, comma-separated: a study's roles,
    /// for the ranks of a multi-client step (not for people: hidden)
    #[arg(long, value_name = "NAMES", value_delimiter = ',', hide = true)]
    pub target_names: Vec<String>,

    /// Seed of the random orders and the verify pattern
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Results directory (new or empty); default ./sharebench-results/<UTC time>-<pid>/
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// What to measure: iozone (the operation x file size x record size matrix); metadata
    /// (the Connectathon basic tests); smallfiles (a ~1,800-file web tree copied as rsync -a
    /// does, re-synced, modified, deleted); stream (concurrent media streams recorded and
    /// played back, with fragmentation). See docs/methods/workloads.md
    #[arg(short = 'w', long, value_enum, default_value_t = WorkloadArg::Iozone)]
    pub workload: WorkloadArg,

    /// metadata: sweep test1/test2 over these counts (N files and N directories in one
    /// directory each step), e.g. 100,200,500,1000,5000
    #[arg(long, value_name = "LIST", value_parser = parse_counts)]
    pub counts: Option<CountList>,

    /// metadata: Connectathon's test1 tree as LEVELS,FILES,DIRS (used without --counts)
    #[arg(long, value_name = "L,F,D", default_value = "5,5,2", value_parser = parse_tree)]
    pub tree: (u32, u32, u32),

    /// smallfiles: also run the real `rsync -a` (directory targets only), side by side
    #[arg(long)]
    pub with_rsync: bool,

    /// smallfiles: per cent of files changed before the second re-sync
    #[arg(long, value_name = "PCT", default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub modify_pct: u32,

    /// stream: numbers of concurrent streams, measured one after the other
    #[arg(long, value_name = "LIST", default_value = "1,2,4", value_parser = parse_counts)]
    pub streams: CountList,

    /// stream: bytes each stream records (k/m/g = KiB/MiB/GiB)
    #[arg(long, value_name = "SIZE", default_value = "256m", value_parser = parse_one_size)]
    pub stream_size: u64,

    /// stream: bit rate per stream, e.g. 20mbit, 500kbit, 1gbit (decimal units); unbounded when absent. A paced stream must play within 4 hours
    #[arg(long, value_name = "RATE", value_parser = parse_bitrate)]
    pub bitrate: Option<u64>,

    /// stream: the client's pre-allocation pattern while recording (windows: one-byte
    /// writes at a 128 KiB stride, up to 15 MiB ahead of the data)
    #[arg(long, value_enum, default_value_t = HintsArg::None)]
    pub prealloc_hints: HintsArg,

    /// stream: the server-side mitigation when a write extends a file
    #[arg(long, value_enum, default_value_t = PreallocArg::None)]
    pub prealloc: PreallocArg,

    /// load: the mix, a shipped one by name (build, genomics, media) or a TOML file
    /// (docs/methods/workloads.md says how to write one)
    #[arg(long, value_name = "NAME|FILE")]
    pub mix: Option<String>,

    /// load: requests per second of the first load point, over every worker (--threads)
    #[arg(long, value_name = "RATE", default_value_t = 200.0)]
    pub rate_start: f64,

    /// load: what each next point adds to the rate; default: --rate-start
    #[arg(long, value_name = "RATE")]
    pub rate_step: Option<f64>,

    /// load: the most load points; a target's curve ends at its first invalid one (achieved
    /// below 99% of requested)
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub points: u32,

    /// load: how long each load point issues requests
    #[arg(long, value_name = "TIME", default_value = "2s", value_parser = parse_seconds)]
    pub point_time: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WorkloadArg {
    Iozone,
    Metadata,
    Smallfiles,
    Stream,
    Load,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum HintsArg {
    None,
    Windows,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PreallocArg {
    None,
    Fallocate,
    ZeroFill,
}

/// A parsed list of counts.
#[derive(Clone, Debug)]
pub struct CountList(pub Vec<u64>);

fn parse_counts(s: &str) -> Result<CountList, String> {
    s.split(',')
        .map(|p| {
            let p = p.trim().replace('_', "");
            p.parse::<u64>()
                .map_err(|_| format!("'{p}' is not a whole number"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(CountList)
}

fn parse_tree(s: &str) -> Result<(u32, u32, u32), String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{p}' is not a whole number"))
        })
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        &[l, f, d] if l <= 20 && f <= 100_000 && d <= 100_000 => Ok((l, f, d)),
        [_, _, _] => Err("at most 20 levels and 100000 files or dirs per directory".into()),
        _ => Err("give LEVELS,FILES,DIRS, e.g. 5,5,2".into()),
    }
}

/// A bit rate in bits per second: a number with an optional decimal unit (k, m, g) and
/// `bit`, `b`, `bps` or `bit/s`; `B` or `byte` for bytes.
pub fn parse_bitrate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a bit rate (e.g. 20mbit)"))?;
    let unit_l = unit.to_ascii_lowercase();
    let (mult, rest) = match unit_l.chars().next() {
        Some('k') => (1e3, &unit[1..]),
        Some('m') => (1e6, &unit[1..]),
        Some('g') => (1e9, &unit[1..]),
        _ => (1.0, unit),
    };
    let bytes = matches!(rest, "B" | "Bps" | "B/s" | "byte" | "bytes");
    let bits = matches!(
        rest.to_ascii_lowercase().as_str(),
        "" | "bit" | "bits" | "b" | "bps" | "bit/s"
    );
    if !bytes && !bits {
        return Err(format!(
            "'{s}': unknown bit rate unit '{unit}' (e.g. 20mbit)"
        ));
    }
    let v = n * mult * if bytes { 8.0 } else { 1.0 };
    if !(1.0..1e15).contains(&v) {
        return Err(format!("--bitrate {s} is out of range"));
    }
    Ok(v.round() as u64)
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

fn parse_cache_size(s: &str) -> Result<u64, String> {
    match parse_size(s, BareUnit::Bytes).map_err(|e| e.to_string())? {
        n if n < 64 * 1024 => Err(format!(
            "'{s}': the cache holds 64 KiB pages; give at least 64k"
        )),
        n => Ok(n),
    }
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

/// The workload and its parameters, for the workloads other than IOzone's.
fn build_workload(a: &RunArgs) -> CliResult<Workload> {
    if a.workload == WorkloadArg::Iozone {
        return Ok(Workload::Iozone);
    }
    let first_record = a.record_sizes.as_ref().map(|l| l.0.clone());
    if first_record.as_ref().is_some_and(|r| r.len() != 1) {
        return Err(CliError::usage(
            "--record-sizes takes one size with --workload metadata or stream",
        ));
    }
    let record = first_record.and_then(|r| r.first().copied());
    Ok(match a.workload {
        WorkloadArg::Iozone => Workload::Iozone,
        WorkloadArg::Metadata => {
            let d = MetadataParams::default();
            let (levels, files, dirs) = a.tree;
            Workload::Metadata(MetadataParams {
                counts: a.counts.clone().map(|c| c.0).unwrap_or_default(),
                levels,
                files,
                dirs,
                file_sizes: a
                    .file_sizes
                    .clone()
                    .map(|l| l.0)
                    .unwrap_or(d.file_sizes.clone()),
                io_size: record.unwrap_or(d.io_size),
                ..d
            })
        }
        WorkloadArg::Smallfiles => Workload::Smallfiles(SmallfilesParams {
            tree_seed: a.seed,
            modify_pct: a.modify_pct,
            with_rsync: a.with_rsync,
        }),
        WorkloadArg::Stream => Workload::Stream(StreamParams {
            streams: a
                .streams
                .0
                .iter()
                .map(|&n| u32::try_from(n).unwrap_or(u32::MAX))
                .collect(),
            stream_size: a.stream_size,
            io_size: record.unwrap_or(plan::MIB),
            bitrate_bps: a.bitrate,
            hints: match a.prealloc_hints {
                HintsArg::None => PreallocHints::None,
                HintsArg::Windows => PreallocHints::Windows,
            },
            prealloc: match a.prealloc {
                PreallocArg::None => Prealloc::None,
                PreallocArg::Fallocate => Prealloc::Fallocate,
                PreallocArg::ZeroFill => Prealloc::ZeroFill,
            },
        }),
        WorkloadArg::Load => {
            let name = a.mix.as_deref().ok_or_else(|| {
                CliError::usage(format!(
                    "--workload load needs --mix: one of {} or a TOML file",
                    crate::mixes::NAMES.join(", ")
                ))
            })?;
            Workload::Load(LoadParams {
                mix: crate::mixes::load(name)?,
                rate_start: a.rate_start,
                rate_step: a.rate_step.unwrap_or(a.rate_start),
                points: a.points,
                point_seconds: a.point_time,
                seed: a.seed,
            })
        }
    })
}

/// Options that belong to one workload only, given with another: a usage error.
fn check_workload_options(a: &RunArgs) -> CliResult<()> {
    let w = a.workload;
    let wrong =
        |opt: &str, needs: &str| Err(CliError::usage(format!("{opt} needs --workload {needs}")));
    if a.counts.is_some() && w != WorkloadArg::Metadata {
        return wrong("--counts", "metadata");
    }
    if a.with_rsync && w != WorkloadArg::Smallfiles {
        return wrong("--with-rsync", "smallfiles");
    }
    if (a.bitrate.is_some()
        || !matches!(a.prealloc_hints, HintsArg::None)
        || !matches!(a.prealloc, PreallocArg::None))
        && w != WorkloadArg::Stream
    {
        return wrong("--bitrate, --prealloc-hints and --prealloc", "stream");
    }
    if w == WorkloadArg::Load && !matches!(a.cache, CacheArg::Keep) {
        return Err(CliError::usage(
            "--cache does not apply to --workload load: its files are a working set the clients keep warm",
        ));
    }
    if w == WorkloadArg::Load && a.reps == Some(Reps::Auto) {
        return Err(CliError::usage(
            "--reps auto settles one figure; a load curve has one per point: give --reps N",
        ));
    }
    if a.mix.is_some() && w != WorkloadArg::Load {
        return wrong("--mix", "load");
    }
    if w != WorkloadArg::Iozone && (a.auto || a.mmap || a.verify) {
        return Err(CliError::usage(
            "--auto, --mmap and --verify are for --workload iozone",
        ));
    }
    if w != WorkloadArg::Iozone && (a.include_close || a.include_fsync || a.direct) {
        return Err(CliError::usage(
            "--include-close, --include-fsync and --direct are for --workload iozone (the other workloads say what each operation includes: docs/methods/workloads.md)",
        ));
    }
    if w != WorkloadArg::Iozone && matches!(a.cache, CacheArg::Remount | CacheArg::Direct) {
        return Err(CliError::usage(
            "--cache remount and direct are for --workload iozone; the other workloads take keep or drop",
        ));
    }
    if a.threads > 1 && !matches!(w, WorkloadArg::Iozone | WorkloadArg::Load) {
        return Err(CliError::usage(
            "--threads is for --workload iozone and load (streams: --streams)",
        ));
    }
    if a.with_rsync {
        if let Some(t) = a
            .targets
            .iter()
            .find(|t| t.contains("://") && !t.starts_with("file://") || t.starts_with("lab:"))
        {
            return Err(CliError::usage(format!(
                "--with-rsync needs directory targets; rsync cannot reach '{t}'"
            )));
        }
        let found = std::process::Command::new("rsync")
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Err(CliError::usage(
                "--with-rsync: the rsync binary is not installed",
            ));
        }
    }
    Ok(())
}

/// `--min-sample-time`'s default, chosen by measurement (docs/methods/statistics.md).
pub const DEFAULT_MIN_SAMPLE_TIME: &str = "100ms";

/// A time such as `50ms`, `0.2s` or `0`, in seconds.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if t == "0" {
        (t, 0.0)
    } else {
        return Err(format!("'{text}' needs a unit: us, ms or s (e.g. 50ms)"));
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(format!("'{text}' is not a time (e.g. 50ms, 0.2s, 0)")),
    }
}

/// A multi-client run's samples when not told: `--reps auto` is for one client.
const MULTI_CLIENT_REPS: u32 = 3;

/// How many samples: until the answer is clear, or exactly N.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reps {
    Auto,
    Exactly(u32),
}

fn parse_reps(text: &str) -> Result<Reps, String> {
    if text.trim() == "auto" {
        return Ok(Reps::Auto);
    }
    match text.trim().parse::<u32>() {
        Ok(n @ 1..=10000) => Ok(Reps::Exactly(n)),
        _ => Err(format!(
            "'{text}' is neither auto nor a count from 1 to 10000"
        )),
    }
}

/// A percentage, with or without `%`, above 0 and below 100.
pub(crate) fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "'{text}' is not a percentage above 0 and below 100 (e.g. 3 or 2.5%)"
        )),
    }
}

/// Repetitions of a load curve when not told.
const LOAD_REPS: u32 = 3;

/// What the run asks of idle CPUs: polling where permitted unless told.
fn cpu_idle_of(a: &RunArgs) -> CpuIdle {
    if a.keep_cpus_awake {
        CpuIdle::Poll
    } else if a.let_cpus_idle {
        CpuIdle::Halt
    } else {
        CpuIdle::PollIfPermitted
    }
}

/// The plan's sample count and `--reps auto` rule.
fn reps_of(a: &RunArgs) -> (u32, Option<AutoReps>) {
    // A load curve is many points, each its own figure: the curve is repeated a fixed
    // number of times (its points' medians), not until one figure settles.
    let default = if a.workload == WorkloadArg::Load {
        Reps::Exactly(LOAD_REPS)
    } else {
        Reps::Auto
    };
    match a.reps.unwrap_or(default) {
        Reps::Exactly(n) => (n, None),
        Reps::Auto => (
            a.max_reps,
            Some(AutoReps {
                ci_pct: a.ci_width,
                max_unit_s: a.max_cell_time,
                ..AutoReps::default()
            }),
        ),
    }
}

impl RunArgs {
    /// Every option at its default and no target: for a front end that sets the options
    /// it has itself (`iozone`) and hands them to `build_plan`.
    pub fn defaults() -> RunArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Line {
            #[command(flatten)]
            args: RunArgs,
        }
        let line = Line::try_parse_from(["run", "null://"]).expect("run's defaults parse");
        RunArgs {
            targets: Vec::new(),
            ..line.args
        }
    }
}

/// Builds the plan the options describe: the one place run arguments become a plan, for
/// `run`, every study step's run line and the `iozone` front end.
pub fn build_plan(a: &RunArgs) -> CliResult<Plan> {
    let (reps, auto_reps) = reps_of(a);
    check_workload_options(a)?;
    let workload = build_workload(a)?;
    let iozone = workload == Workload::Iozone;
    let plan = Plan {
        cells: if iozone { iozone_cells(a)? } else { Vec::new() },
        ops: if iozone { a.ops.0.clone() } else { Vec::new() },
        workload,
        threads: a.threads,
        throughput_mode: iozone && a.threads > 1,
        reps,
        auto_reps,
        cpus: a.cpus.as_ref().map(|c| c.0.clone()),
        cpu_idle: cpu_idle_of(a),
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
        min_sample_s: if iozone {
            a.min_sample_time
        } else {
            Plan::default().min_sample_s
        },
        client_cache: a.client_cache,
        iodepth: a.iodepth,
        ..Plan::default()
    };
    plan.validate().map_err(CliError::usage)?;
    Ok(plan)
}

/// The IOzone matrix's cells: `--auto`'s, or the listed file and record sizes.
fn iozone_cells(a: &RunArgs) -> CliResult<Vec<plan::Cell>> {
    if a.auto {
        let (min_rec, max_rec) = match &a.record_sizes {
            Some(SizeList(r)) => (r[0], *r.last().unwrap_or(&r[0])),
            None => (plan::AUTO_MIN_RECORD, plan::AUTO_MAX_RECORD),
        };
        let min_file = a.min_file.unwrap_or(plan::AUTO_MIN_FILE);
        let max_file = a.max_file.unwrap_or(plan::AUTO_MAX_FILE);
        if min_file > max_file {
            return Err(CliError::usage("--min-file is larger than --max-file"));
        }
        let grid = plan::Grid {
            min_file,
            max_file,
            min_record: min_rec,
            max_record: max_rec,
            crossover: match (a.all_records, a.crossover) {
                (true, _) => u64::MAX,
                (false, c) => c.unwrap_or(plan::CROSSOVER),
            },
            factor: a.size_factor,
        };
        return Ok(grid.cells());
    }
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
    plan::explicit_cells(&files, &records).map_err(CliError::usage)
}

/// The options of a run on several clients: `--reps auto` decides from every rank's
/// figures, which only rank 0 sees, so a count not given is a fixed one.
pub fn for_several_clients(args: &mut RunArgs) {
    if args.reps.is_none() {
        args.reps = Some(Reps::Exactly(MULTI_CLIENT_REPS));
    }
}

/// `sharebench run`; under mpirun, `cluster` is every rank of the run (rank 0 prints).
pub fn main(mut args: RunArgs, cluster: Option<&dyn session::Cluster>) -> CliResult<()> {
    if cluster.is_some() {
        for_several_clients(&mut args);
    }
    let plan = match &args.plan_file {
        Some(file) => sharebench_core::plan_file::read(file)
            .map_err(|e| CliError::usage(format!("--plan-file {e}")))?,
        None => build_plan(&args)?,
    };
    let spec = SessionSpec {
        plan: &plan,
        targets: &args.targets,
        names: &args.target_names,
        out: args.out.clone(),
        command_line: std::env::args().collect(),
        carried: Vec::new(),
        cluster,
        remount_at: None,
        worker_dirs: &[],
        server_cpu: &[],
        quiet: args.quiet,
    };
    let result = session::execute(spec, &mut |_| {})?;
    if !result.writes {
        return match session::outcome_error(&result) {
            Some(e) => Err(e),
            None => Ok(()),
        };
    }
    let mut out = crate::stdout::stdout();
    summary::run::print(plan.workload.kind(), &result.records, &mut out);
    if let Some(rule) = plan.auto_reps {
        let _ = writeln!(out, "{}", sampling_line(&result.records, &rule, plan.reps));
    }
    // A closed stdout (`| head`) must not turn a finished run into a panic.
    let _ = writeln!(out, "Results: {}", result.out_dir.display());
    let _ = writeln!(
        out,
        "Next: sharebench report {} --out REPORT_DIR   (report.html: the answer, heatmaps, latency, statistics)",
        result.out_dir.display()
    );
    match session::outcome_error(&result) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What `--reps auto` did, in one line: how many units settled and why.
fn sampling_line(records: &[Record], rule: &AutoReps, max_reps: u32) -> String {
    use sharebench_core::record::{RepsStop, WorkloadKind};
    // A unit is a cell of the matrix, or the whole test of the other workloads.
    let mut units: BTreeMap<(u64, u64), (RepsStop, u32)> = BTreeMap::new();
    for r in records {
        if let Some(stop) = r.reps_stop {
            let key = match r.workload {
                WorkloadKind::Iozone => (r.file_size, r.record_size),
                _ => (0, 0),
            };
            units.insert(key, (stop, r.rep + 1));
        }
    }
    let count = |s: RepsStop| units.values().filter(|(x, _)| *x == s).count();
    let samples: Vec<u32> = units.values().map(|(_, n)| *n).collect();
    format!(
        "Samples (--reps auto): {} units, {}-{} samples each; {} within ±{}% (95% interval of \
         the median), {} stopped at {} samples, {} at {} s a target{}",
        units.len(),
        samples.iter().min().unwrap_or(&0),
        samples.iter().max().unwrap_or(&0),
        count(RepsStop::Converged),
        rule.ci_pct,
        count(RepsStop::CountCap),
        max_reps,
        count(RepsStop::TimeCap),
        rule.max_unit_s,
        capped_need(records, rule.ci_pct),
    )
}

/// What the width would take at the capped units' spread, the most any target needs
/// (`sampling::capped_reach`); empty when no capped unit has an interval.
fn capped_need(records: &[Record], width: f64) -> String {
    let targets: BTreeSet<&str> = records.iter().map(|r| r.target.as_str()).collect();
    let worst = targets
        .iter()
        .filter_map(|t| {
            let mine: Vec<&Record> = records.iter().filter(|r| r.target == *t).collect();
            sharebench_core::sampling::capped_reach(&mine, width)
        })
        .max_by(|a, b| a.samples.0.total_cmp(&b.samples.0));
    match worst {
        Some(r) => format!(
            "; at their spread ±{width}% takes about {:.0} samples a unit ({:.0} for the most \
             spread: --max-reps, --max-cell-time)",
            r.samples.0, r.samples.1
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{build_plan, parse_bitrate, parse_seconds, RunArgs};
    use clap::Parser;
    use sharebench_core::plan::{CachePolicy, Workload};

    fn args(line: &str) -> RunArgs {
        #[derive(Parser)]
        struct Line {
            #[command(flatten)]
            args: RunArgs,
        }
        Line::try_parse_from(std::iter::once("run").chain(line.split_whitespace()))
            .unwrap()
            .args
    }

    #[test]
    fn one_plan_for_every_workload_and_no_option_silently_dropped() {
        let p = build_plan(&args("null:// --cache drop --threads 2 --file-sizes 1m")).unwrap();
        assert_eq!(p.workload, Workload::Iozone);
        assert!(p.throughput_mode && !p.cells.is_empty());
        assert_eq!(p.cache, CachePolicy::Drop);
        let p = build_plan(&args("null:// --cache remount")).unwrap();
        assert_eq!(p.cache, CachePolicy::Remount);
        let m = build_plan(&args("null:// -w metadata --cache drop")).unwrap();
        assert_eq!(m.cache, CachePolicy::Drop);
        assert!(m.cells.is_empty() && m.ops.is_empty() && !m.throughput_mode);
        for line in [
            "null:// -w metadata --cache remount",
            "null:// -w stream --cache direct",
            "null:// -w smallfiles --direct",
            "null:// -w metadata --include-close",
        ] {
            let e = build_plan(&args(line)).unwrap_err();
            assert!(
                e.message.contains("--workload iozone"),
                "{line}: {}",
                e.message
            );
        }
    }

    #[test]
    fn sample_times_take_a_unit() {
        assert_eq!(parse_seconds("50ms"), Ok(0.05));
        assert_eq!(parse_seconds("0.2s"), Ok(0.2));
        assert_eq!(parse_seconds("250us"), Ok(0.00025));
        assert_eq!(parse_seconds("0"), Ok(0.0));
        assert!(parse_seconds("5").unwrap_err().contains("needs a unit"));
        assert!(parse_seconds("-1s").is_err() && parse_seconds("fast").is_err());
    }

    #[test]
    fn bit_rates() {
        assert_eq!(parse_bitrate("20mbit"), Ok(20_000_000));
        assert_eq!(parse_bitrate("20Mbit"), Ok(20_000_000));
        assert_eq!(parse_bitrate("1.5gbit"), Ok(1_500_000_000));
        assert_eq!(parse_bitrate("500k"), Ok(500_000));
        assert_eq!(parse_bitrate("2MB"), Ok(16_000_000));
        assert_eq!(parse_bitrate("64000"), Ok(64_000));
        assert!(parse_bitrate("0").is_err());
        assert!(parse_bitrate("fast").is_err());
        assert!(parse_bitrate("20parsecs").is_err());
    }
}
