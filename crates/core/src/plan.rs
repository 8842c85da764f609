//! What to run: the operations, the matrix of (file size, record size) cells, threads,
//! repetitions, and the timing and cache options. A plan is plain data, built by the CLI
//! (or a study) and read by the engine; it does no I/O.

use crate::mix::Mix;
use crate::op::Op;
use crate::size::format_size;
use serde::{Deserialize, Serialize};

/// The shape of the tree the smallfiles workload copies (built by `workload::tree`), which
/// a plan needs to size its runs.
pub mod tree_shape {
    /// Files in the tree, for every seed.
    pub const FILES: u64 = 1_800;
    /// Sum of the file sizes, for every seed: 35,000,000 bytes (35 MB, 33.4 MiB).
    pub const TOTAL_BYTES: u64 = 35_000_000;
    /// Upper bound on directories (the skeleton has `dir_count()` of them).
    pub const MAX_DIRS: u64 = 200;
}

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
/// file size and `max_record`; files over `crossover` (IOzone's: [`CROSSOVER`]; `u64::MAX`
/// for none, IOzone's -z) skip records under `LARGE_RECORD`.
pub fn auto_cells(
    min_file: u64,
    max_file: u64,
    min_record: u64,
    max_record: u64,
    crossover: u64,
) -> Vec<Cell> {
    let grid = Grid {
        min_file,
        max_file,
        min_record,
        max_record,
        crossover,
        factor: 2,
    };
    grid.cells()
}

/// IOzone's auto-mode grid, its sizes growing by `factor` (IOzone's: 2, which is IOzone's
/// grid exactly). With a larger factor the largest file is still measured: the last size is
/// `max_file` whether or not the factor lands on it.
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    pub min_file: u64,
    pub max_file: u64,
    pub min_record: u64,
    pub max_record: u64,
    pub crossover: u64,
    pub factor: u64,
}

impl Grid {
    pub fn cells(&self) -> Vec<Cell> {
        let factor = self.factor.max(2);
        let mut files = Vec::new();
        let mut file_size = self.min_file;
        while file_size <= self.max_file {
            files.push(file_size);
            let Some(next) = file_size.checked_mul(factor) else {
                break;
            };
            file_size = next;
        }
        if factor > 2 && files.last().is_some_and(|&l| l < self.max_file) {
            files.push(self.max_file);
        }
        let mut cells = Vec::new();
        for file_size in files {
            let mut record_size = self.min_record;
            while record_size <= self.max_record && record_size <= file_size {
                if file_size <= self.crossover || record_size >= LARGE_RECORD {
                    cells.push(Cell {
                        file_size,
                        record_size,
                    });
                }
                let Some(next) = record_size.checked_mul(factor) else {
                    break;
                };
                record_size = next;
            }
        }
        cells
    }
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

impl From<CachePolicy> for crate::record::Cache {
    fn from(p: CachePolicy) -> Self {
        use crate::record::Cache;
        match p {
            CachePolicy::Keep => Cache::Keep,
            CachePolicy::Drop => Cache::Drop,
            CachePolicy::Remount => Cache::Remount,
            CachePolicy::Direct => Cache::Direct,
        }
    }
}

impl CachePolicy {
    pub fn name(self) -> &'static str {
        crate::record::Cache::from(self).name()
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

/// Which family of measurements a plan runs. `Iozone` is the file-size x record-size
/// matrix of `ops` and `cells`; the others ignore both and carry their own parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    #[default]
    Iozone,
    /// The Connectathon basic tests (docs/methods/workloads.md).
    Metadata(MetadataParams),
    /// A generated web-application tree copied, re-synced, modified and deleted.
    Smallfiles(SmallfilesParams),
    /// Concurrent media streams recorded and played back, with fragmentation.
    Stream(StreamParams),
    /// A mix of operations issued open-loop at stepped request rates (load points).
    Load(LoadParams),
}

impl Workload {
    /// What records of this workload carry as their `workload`.
    pub fn kind(&self) -> crate::record::WorkloadKind {
        use crate::record::WorkloadKind;
        match self {
            Workload::Iozone => WorkloadKind::Iozone,
            Workload::Metadata(_) => WorkloadKind::Metadata,
            Workload::Smallfiles(_) => WorkloadKind::Smallfiles,
            Workload::Stream(_) => WorkloadKind::Stream,
            Workload::Load(_) => WorkloadKind::Load,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// Parameters of the Connectathon basic tests; defaults are Connectathon's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataParams {
    /// test1/test2 sweep: for each count N, one directory gets N files and N directories.
    /// Empty: Connectathon's tree of `levels`, `files`, `dirs` only.
    pub counts: Vec<u64>,
    /// test1 tree: depth, files per directory, subdirectories per directory.
    pub levels: u32,
    pub files: u32,
    pub dirs: u32,
    /// test3 lookups, test4 setattr/getattr rounds, test6 readdir rounds, test7/test8
    /// rounds, test9 statfs calls (Connectathon: 250, 50, 200, 10, 20, 1500).
    pub lookups: u64,
    pub attr_rounds: u64,
    pub readdir_rounds: u64,
    pub link_rounds: u64,
    pub symlink_rounds: u64,
    pub statfs_calls: u64,
    /// test4/test7/test8 files, test6 directory entries (Connectathon: 10, 10, 10, 200).
    pub attr_files: u64,
    pub readdir_files: u64,
    /// test5 file sizes (sweep for the buffered-read cliff); Connectathon: 1 MB.
    pub file_sizes: Vec<u64>,
    /// test5 transfer size (Connectathon's BUFSZ: 8 KiB).
    pub io_size: u64,
}

impl Default for MetadataParams {
    fn default() -> Self {
        MetadataParams {
            counts: Vec::new(),
            levels: 5,
            files: 5,
            dirs: 2,
            lookups: 250,
            attr_rounds: 50,
            readdir_rounds: 200,
            link_rounds: 10,
            symlink_rounds: 20,
            statfs_calls: 1500,
            attr_files: 10,
            readdir_files: 200,
            file_sizes: vec![MIB],
            io_size: 8 * KIB,
        }
    }
}

/// Parameters of the small-file tree workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmallfilesParams {
    /// Seed of the tree (names, sizes, modes, times); counts and total bytes do not depend on it.
    pub tree_seed: u64,
    /// Per cent of files changed before the second re-sync.
    pub modify_pct: u32,
    /// Also drive the real `rsync -a` binary (directory targets only).
    pub with_rsync: bool,
}

impl Default for SmallfilesParams {
    fn default() -> Self {
        SmallfilesParams {
            tree_seed: 1,
            modify_pct: 10,
            with_rsync: false,
        }
    }
}

/// The client's pre-allocation pattern while recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PreallocHints {
    #[default]
    None,
    /// One-byte writes at a 128 KiB stride, up to 15 MiB ahead of the data (seed 002).
    Windows,
}

/// What the server side does when a write extends the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Prealloc {
    #[default]
    None,
    /// fallocate() the new range first.
    Fallocate,
    /// Write zeros over the new range first (Samba's `strict allocate`).
    ZeroFill,
}

/// Parameters of the stream workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamParams {
    /// Numbers of concurrent streams to measure, one after the other.
    pub streams: Vec<u32>,
    /// Bytes each stream records.
    pub stream_size: u64,
    /// Bytes per write/read call.
    pub io_size: u64,
    /// Bits per second per stream; `None` = unbounded.
    pub bitrate_bps: Option<u64>,
    pub hints: PreallocHints,
    pub prealloc: Prealloc,
}

impl Default for StreamParams {
    fn default() -> Self {
        StreamParams {
            streams: vec![1, 2, 4],
            stream_size: 256 * MIB,
            io_size: MIB,
            bitrate_bps: None,
            hints: PreallocHints::None,
            prealloc: Prealloc::None,
        }
    }
}

/// Parameters of the load workload: the mix, and the load points it is issued at. The
/// rates are totals over every worker (`--threads`) of every client (MPI rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadParams {
    pub mix: Mix,
    /// Requests per second of the first load point, and what each next point adds.
    pub rate_start: f64,
    pub rate_step: f64,
    /// The most load points; a target's curve ends at its first invalid one.
    pub points: u32,
    pub point_seconds: f64,
    /// Seed of the draws (files, operations, offsets); each worker derives its own.
    pub seed: u64,
}

/// Bounds of the load points: every loop against a server is bounded in count and time.
pub const MAX_LOAD_POINTS: u32 = 100;
pub const MAX_POINT_SECONDS: f64 = 600.0;
pub const MAX_LOAD_RATE: f64 = 10_000_000.0;
/// The most lanes (threads with a request in flight) of one client, over all its workers.
pub const MAX_LOAD_LANES: u64 = 1024;
/// The most memory the lanes' buffers of one client may take.
pub const MAX_LOAD_BUFFERS: u64 = 4 << 30;
/// Fewest requests per worker at a point's rate: fewer cannot give a rate within 1%.
pub const MIN_REQUESTS_PER_WORKER: f64 = 100.0;

impl LoadParams {
    /// The requested rate of load point `i` (from 0).
    pub fn rate(&self, i: u32) -> f64 {
        self.rate_start + self.rate_step * f64::from(i)
    }

    /// Checks the points against `workers` in total, each with `depth` lanes; the error is
    /// one line for the user.
    pub fn validate(&self, workers: u32, depth: u32) -> Result<(), String> {
        let lanes = u64::from(workers) * u64::from(depth);
        if lanes > MAX_LOAD_LANES {
            return Err(format!(
                "--threads x --iodepth is {lanes} lanes, each a thread with its own files: at most {MAX_LOAD_LANES}"
            ));
        }
        let memory = lanes.saturating_mul(self.mix.lane_buffer());
        if memory > MAX_LOAD_BUFFERS {
            return Err(format!(
                "--threads x --iodepth is {lanes} lanes, each with a buffer of {}: {} in all, more than the {} allowed",
                crate::size::format_size(self.mix.lane_buffer()),
                crate::size::format_size(memory),
                crate::size::format_size(MAX_LOAD_BUFFERS)
            ));
        }
        self.mix
            .validate()
            .map_err(|e| format!("mix {}: {e}", self.mix.name))?;
        if !(1..=MAX_LOAD_POINTS).contains(&self.points) {
            return Err(format!("--points must be from 1 to {MAX_LOAD_POINTS}"));
        }
        if !(self.point_seconds > 0.0 && self.point_seconds <= MAX_POINT_SECONDS) {
            return Err(format!(
                "--point-time must be above 0 and at most {MAX_POINT_SECONDS} s"
            ));
        }
        let last = self.rate(self.points - 1);
        if !(self.rate_start > 0.0 && self.rate_step >= 0.0 && last <= MAX_LOAD_RATE) {
            return Err(format!(
                "--rate-start must be above 0, --rate-step at least 0, and no point above {MAX_LOAD_RATE} requests/s"
            ));
        }
        let per_worker = self.rate_start * self.point_seconds / f64::from(workers.max(1));
        if per_worker < MIN_REQUESTS_PER_WORKER {
            return Err(format!(
                "the first load point gives each of {workers} workers {per_worker:.0} requests; at least {MIN_REQUESTS_PER_WORKER:.0} are needed to tell its rate within 1%: raise --rate-start or --point-time"
            ));
        }
        Ok(())
    }

    /// Inodes and bytes the files of `lanes` lanes need at once: each lane's set, and as
    /// many again that `create` makes (then it makes the oldest again).
    pub fn needs(&self, lanes: u32) -> (u64, u64) {
        let per_lane = 2 * u64::from(self.mix.files) + 16;
        let inodes = per_lane * u64::from(lanes);
        (
            inodes,
            inodes.saturating_mul(self.mix.largest_file() + 4096),
        )
    }
}

/// What a run asks of idle CPUs while it measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuIdle {
    /// They halt as the kernel sees fit (`--let-cpus-idle`; IOzone's terms).
    #[default]
    Halt,
    /// They poll; a run that cannot ask for it is refused (`--keep-cpus-awake`).
    Poll,
    /// They poll where this process may ask for it (root), and halt otherwise, with a
    /// note (`run`'s default).
    PollIfPermitted,
}

/// A whole run, for every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The workload; `ops` and `cells` are IOzone's and empty for the others.
    #[serde(default)]
    pub workload: Workload,
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
    /// IOzone matrix, one client: the least time a sample lasts per operation, in seconds:
    /// the cell's operations run again, in rounds, each on a file written anew, until their
    /// passes last this long per operation together and each one's half of it
    /// (docs/methods/operations.md); 0 is IOzone's single pass.
    #[serde(default)]
    pub min_sample_s: f64,
    /// `--reps auto`: sample each unit until its medians are known well enough, with
    /// `reps` as the most samples; `None` is exactly `reps` samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_reps: Option<AutoReps>,
    /// The CPUs the run's threads are kept on (`--cpus`); `None`: wherever the scheduler
    /// puts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// Whether idle CPUs are to poll instead of halting while the run measures (a
    /// CPU-latency request of 0 µs held open; docs/methods/lab.md says why). What happened is
    /// `keep_cpus_awake`; this, the asking, is not recorded.
    #[serde(skip)]
    pub cpu_idle: CpuIdle,
    /// Recorded: idle CPUs polled instead of halting while the run measured (the request
    /// `cpu_idle` asked for was held).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_cpus_awake: bool,
    /// Tests already measured by an earlier, interrupted attempt (a study's `--resume`):
    /// (repetition, target name, cell index; `usize::MAX` for the non-matrix workloads).
    /// The engine skips them; their records are carried over by the caller.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub done: std::collections::BTreeSet<(u32, String, usize)>,
    /// The native clients keep a page cache of this many bytes (`--client-cache`), as a
    /// kernel client's memory bounds it; `None`: they cache nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cache: Option<u64>,
    /// IOzone matrix: requests each worker keeps in flight (`--iodepth`); 1 is one call at a
    /// time, IOzone's way. Operations whose order does not allow more run at 1 and say so.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub iodepth: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The deepest queue `--iodepth` takes (io_uring's rings hold up to 32,768 entries; a
/// kernel NFS client keeps at most 65,536 slots per connection).
pub const MAX_IODEPTH: u32 = 4096;

/// When `--reps auto` stops sampling a unit (a cell of the matrix, or a whole test): when
/// on every target the 95% interval of every operation's median is within `ci_pct` of the
/// median (after at least `min` samples), or when the unit has taken `max_unit_s` seconds
/// per target. `Plan::reps` is the most samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AutoReps {
    pub min: u32,
    /// Half-width of the interval, percent of the median.
    pub ci_pct: f64,
    pub max_unit_s: f64,
}

impl Default for AutoReps {
    /// Six samples (the fewest with a 95% interval), ±3%, a minute per cell and target.
    fn default() -> Self {
        AutoReps {
            min: crate::median::MIN_SAMPLES_FOR_CI as u32,
            ci_pct: 3.0,
            max_unit_s: 60.0,
        }
    }
}

/// The most samples `--reps auto` takes of a unit unless told (`--max-reps`).
pub const DEFAULT_MAX_REPS: u32 = 30;

/// The longest `min_sample_s` taken: a minute per sample is already a long run.
pub const MAX_MIN_SAMPLE_S: f64 = 60.0;

/// The `Plan::done` index of a non-matrix workload's test (one per repetition and target).
pub const WHOLE_TEST: usize = usize::MAX;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            workload: Workload::Iozone,
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
            min_sample_s: 0.0,
            auto_reps: None,
            cpus: None,
            cpu_idle: CpuIdle::Halt,
            keep_cpus_awake: false,
            done: Default::default(),
            client_cache: None,
            iodepth: 1,
        }
    }
}

impl Plan {
    /// Checks what a plan needs before any I/O; the message is one line for the user.
    pub fn validate(&self) -> Result<(), String> {
        if self.reps == 0 {
            return Err("--reps must be at least 1".into());
        }
        if let Some(a) = &self.auto_reps {
            if !(a.ci_pct > 0.0 && a.ci_pct < 100.0) {
                return Err(format!(
                    "--ci-width must be above 0% and below 100%, not {}%",
                    a.ci_pct
                ));
            }
            if !(a.max_unit_s > 0.0 && a.max_unit_s.is_finite()) {
                return Err("--max-cell-time must be above 0".into());
            }
            if self.reps < a.min {
                return Err(format!(
                    "--max-reps {} is below the {} samples --reps auto takes first",
                    self.reps, a.min
                ));
            }
        }
        if !(1..=MAX_IODEPTH).contains(&self.iodepth) {
            return Err(format!(
                "--iodepth must be from 1 to {MAX_IODEPTH}, not {}",
                self.iodepth
            ));
        }
        if self.iodepth > 1 && !matches!(self.workload, Workload::Iozone | Workload::Load(_)) {
            return Err(format!(
                "--iodepth is for the IOzone matrix and the load workload, not --workload {}",
                self.workload.name()
            ));
        }
        match &self.workload {
            Workload::Iozone => {}
            Workload::Metadata(m) => return m.validate(),
            Workload::Smallfiles(s) => return s.validate(),
            Workload::Stream(s) => return s.validate(),
            Workload::Load(l) => return l.validate(self.threads, self.iodepth),
        }
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
        if !(0.0..=MAX_MIN_SAMPLE_S).contains(&self.min_sample_s) {
            return Err(format!(
                "--min-sample-time must be between 0 and {MAX_MIN_SAMPLE_S} s"
            ));
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

    /// The memory the IOzone matrix's buffers take at once: each worker's largest record
    /// for every request it keeps in flight (`--threads` x `--iodepth` x record size). Zero
    /// for the other workloads, which bound their own.
    pub fn buffer_bytes(&self) -> u64 {
        if !matches!(self.workload, Workload::Iozone) {
            return 0;
        }
        let largest = self.cells.iter().map(|c| c.record_size).max().unwrap_or(0);
        largest
            .saturating_mul(u64::from(self.threads.max(1)))
            .saturating_mul(u64::from(self.iodepth.max(1)))
    }

    /// Inodes and bytes a target must have free for this plan's workload at once (for the
    /// IOzone matrix, its largest file for each worker); `None` when nothing is planned.
    pub fn needs(&self) -> Option<(u64, u64)> {
        Some(match &self.workload {
            Workload::Iozone => {
                let largest = self.cells.iter().map(|c| c.file_size).max()?;
                let workers = u64::from(self.threads.max(1));
                (workers + 2, largest.saturating_mul(workers))
            }
            Workload::Metadata(m) => m.needs(),
            Workload::Smallfiles(s) => s.needs(),
            Workload::Stream(s) => s.needs(),
            Workload::Load(l) => l.needs(self.threads.saturating_mul(self.iodepth)),
        })
    }

    /// True when O_DIRECT is in effect, by flag or by cache policy.
    pub fn direct(&self) -> bool {
        self.timing.direct || self.cache == CachePolicy::Direct
    }

    /// What progress counts: load points for the load workload (whose bytes depend on
    /// how fast the target is), bytes for the others.
    pub fn progress_in_points(&self) -> bool {
        matches!(self.workload, Workload::Load(_))
    }

    /// Bytes the plan moves per target and repetition, for progress and ETA (load points
    /// for the load workload: see `progress_in_points`).
    pub fn bytes_per_pass(&self) -> u64 {
        match &self.workload {
            Workload::Iozone => {}
            Workload::Metadata(m) => {
                // test5 writes and reads each size three times; the rest moves no data.
                return m.file_sizes.iter().sum::<u64>() * 3;
            }
            Workload::Smallfiles(s) => {
                let tree = tree_shape::TOTAL_BYTES;
                return tree * if s.with_rsync { 4 } else { 2 };
            }
            Workload::Stream(s) => {
                let streams: u64 = s.streams.iter().map(|&n| u64::from(n)).sum();
                return streams * s.stream_size * 2;
            }
            Workload::Load(l) => return u64::from(l.points),
        }
        let per_cell: u64 = self.cells.iter().map(|c| c.file_size).sum();
        per_cell * self.ops.len() as u64 * u64::from(self.threads)
    }
}

/// The largest count a metadata sweep accepts (files and directories each).
pub const MAX_COUNT: u64 = 10_000_000;

impl MetadataParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.counts.contains(&0) {
            return Err("--counts must be at least 1 (files and directories per step)".into());
        }
        if let Some(c) = self.counts.iter().find(|&&c| c > MAX_COUNT) {
            return Err(format!("--counts {c} is more than {MAX_COUNT}"));
        }
        if self.levels == 0 || self.files == 0 && self.dirs == 0 {
            return Err("the test1 tree is empty (levels, files and dirs must not be 0)".into());
        }
        if self.file_sizes.is_empty() || self.file_sizes.contains(&0) {
            return Err("--file-sizes must be at least 1 byte for the metadata workload".into());
        }
        if self.io_size == 0 || !self.io_size.is_multiple_of(4096) {
            return Err("the test5 transfer size must be a multiple of 4 KiB".into());
        }
        if self.readdir_rounds > self.readdir_files {
            // cthon04's test6 removes a file after each pass: no more passes than files.
            return Err(format!(
                "test6 reads its directory {} times but holds {} files; at most one pass per file",
                self.readdir_rounds, self.readdir_files
            ));
        }
        Ok(())
    }

    /// Files and directories test1 makes for a tree of `levels`, `files`, `dirs`.
    pub fn tree_counts(levels: u32, files: u64, dirs: u64) -> (u64, u64) {
        let (mut f, mut d, mut width) = (0u64, 0u64, 1u64);
        for _ in 0..levels {
            f = f.saturating_add(width.saturating_mul(files));
            width = width.saturating_mul(dirs);
            d = d.saturating_add(width);
        }
        (f, d)
    }

    /// Inodes and bytes the largest step needs at once, for the up-front space check.
    pub fn needs(&self) -> (u64, u64) {
        let (tf, td) = Self::tree_counts(self.levels, u64::from(self.files), u64::from(self.dirs));
        let sweep = self.counts.iter().copied().max().unwrap_or(0) * 2;
        let inodes = (tf + td)
            .max(sweep)
            .max(self.readdir_files)
            .max(self.attr_files * 2)
            + 16;
        let bytes = self.file_sizes.iter().copied().max().unwrap_or(0) + inodes * 4096;
        (inodes, bytes)
    }
}

impl SmallfilesParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.modify_pct > 100 {
            return Err("--modify-pct must be between 0 and 100".into());
        }
        Ok(())
    }

    /// Inodes and bytes the tree needs (twice with rsync: both copies exist at once).
    pub fn needs(&self) -> (u64, u64) {
        let copies = if self.with_rsync { 2 } else { 1 };
        let inodes = (tree_shape::FILES + tree_shape::MAX_DIRS) * copies;
        // Each file takes at least one block.
        let bytes = (tree_shape::TOTAL_BYTES + tree_shape::FILES * 4096) * copies;
        (inodes, bytes)
    }
}

/// The longest a stream paced by `--bitrate` may take to play (a run is bounded in time).
pub const MAX_PACED_STREAM_S: f64 = 4.0 * 3600.0;

impl StreamParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.streams.is_empty() || self.streams.contains(&0) {
            return Err("--streams must be at least 1".into());
        }
        if let Some(n) = self.streams.iter().find(|&&n| n > 1024) {
            return Err(format!("--streams {n} is more than 1024"));
        }
        if self.stream_size == 0 {
            return Err("--stream-size must be at least 1 byte".into());
        }
        if self.io_size == 0 || self.io_size > 256 * MIB {
            return Err("--record-sizes for streams must be between 1 byte and 256 MiB".into());
        }
        if self.bitrate_bps == Some(0) {
            return Err("--bitrate must be more than 0".into());
        }
        if let Some(bps) = self.bitrate_bps {
            let seconds = self.stream_size as f64 * 8.0 / bps as f64;
            if seconds > MAX_PACED_STREAM_S {
                return Err(format!(
                    "--bitrate {bps} bit/s plays a stream of {} in {:.0} hours; a paced stream must play within {:.0} hours (raise --bitrate or lower --stream-size)",
                    format_size(self.stream_size),
                    seconds / 3600.0,
                    MAX_PACED_STREAM_S / 3600.0
                ));
            }
        }
        Ok(())
    }

    /// Inodes and bytes the largest step needs at once.
    pub fn needs(&self) -> (u64, u64) {
        let n = u64::from(self.streams.iter().copied().max().unwrap_or(1));
        (n + 4, n.saturating_mul(self.stream_size + MIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_stream_must_play_within_its_bound() {
        let mut p = StreamParams {
            stream_size: 256 * MIB,
            bitrate_bps: Some(20_000_000),
            ..Default::default()
        };
        assert!(
            p.validate().is_ok(),
            "HD video: 256 MiB in under two minutes"
        );
        p.bitrate_bps = Some(1);
        let e = p.validate().unwrap_err();
        assert!(e.contains("must play within 4 hours"), "{e}");
    }

    #[test]
    fn auto_cells_match_iozone_a() {
        let cells = auto_cells(
            AUTO_MIN_FILE,
            AUTO_MAX_FILE,
            AUTO_MIN_RECORD,
            AUTO_MAX_RECORD,
            CROSSOVER,
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
            u64::MAX,
        );
        assert!(cells.contains(&Cell {
            file_size: 512 * MIB,
            record_size: 4 * KIB
        }));
        assert_eq!(cells.len(), 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 * 6);
    }

    #[test]
    fn a_larger_factor_takes_every_other_size_and_keeps_the_largest_file() {
        let grid = Grid {
            min_file: 64 * KIB,
            max_file: 32 * MIB,
            min_record: AUTO_MIN_RECORD,
            max_record: AUTO_MAX_RECORD,
            crossover: CROSSOVER,
            factor: 4,
        };
        let cells = grid.cells();
        let files: std::collections::BTreeSet<u64> = cells.iter().map(|c| c.file_size).collect();
        assert_eq!(
            files.into_iter().collect::<Vec<_>>(),
            [64 * KIB, 256 * KIB, MIB, 4 * MIB, 16 * MIB, 32 * MIB]
        );
        let of = |f: u64| -> Vec<u64> {
            cells
                .iter()
                .filter(|c| c.file_size == f)
                .map(|c| c.record_size >> 10)
                .collect()
        };
        assert_eq!(of(64 * KIB), [4, 16, 64]);
        assert_eq!(of(16 * MIB), [4, 16, 64, 256, 1024, 4096, 16384]);
        // Over the crossover, no records under 64 KiB.
        assert_eq!(of(32 * MIB), [64, 256, 1024, 4096, 16384]);
        assert_eq!(cells.len(), 30);
        // The quick main job's: files over 8 MiB without records under 64 KiB.
        let lower = Grid {
            crossover: 8 * MIB,
            ..grid
        };
        assert_eq!(lower.cells().len(), 28);
        // Factor 2 is IOzone's grid: doubling, and a largest file off the doubling is not
        // added (IOzone -a -n 64k -g 100m ends at 64 MiB).
        let odd = Grid {
            max_file: 100 * MIB,
            factor: 2,
            ..grid
        };
        assert_eq!(
            odd.cells().iter().map(|c| c.file_size).max(),
            Some(64 * MIB)
        );
        let huge = Grid {
            max_file: u64::MAX,
            max_record: u64::MAX,
            min_file: u64::MAX / 2,
            ..grid
        };
        assert!(
            huge.cells().len() < 100,
            "sizes stop where they would overflow"
        );
        let doubling = Grid { factor: 2, ..grid }.cells();
        assert_eq!(
            doubling,
            auto_cells(
                64 * KIB,
                32 * MIB,
                AUTO_MIN_RECORD,
                AUTO_MAX_RECORD,
                CROSSOVER
            )
        );
        assert_eq!(doubling.len(), 90);
    }

    #[test]
    fn a_lower_crossover_skips_small_records_of_smaller_files() {
        let cells = auto_cells(
            AUTO_MIN_FILE,
            32 * MIB,
            AUTO_MIN_RECORD,
            AUTO_MAX_RECORD,
            4 * MIB,
        );
        assert!(cells.contains(&Cell {
            file_size: 4 * MIB,
            record_size: 4 * KIB
        }));
        assert!(!cells.contains(&Cell {
            file_size: 8 * MIB,
            record_size: 32 * KIB
        }));
        // 64k..4m as before (5..11 records), then 8m, 16m and 32m from 64k: 8, 9 and 9.
        assert_eq!(cells.len(), 5 + 6 + 7 + 8 + 9 + 10 + 11 + 8 + 9 + 9);
    }

    #[test]
    fn auto_cells_respect_n_and_g() {
        let cells = auto_cells(MIB, 2 * GIB, AUTO_MIN_RECORD, AUTO_MAX_RECORD, CROSSOVER);
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
