//! The record: one measurement, one JSON line in `results.jsonl`, appended and flushed as
//! soon as it is taken. Everything downstream (CSV, report, importers) speaks records only.
//! The schema is documented in `docs/reference/records.md`; bump `SCHEMA_VERSION` on any change that
//! removes or renames a field.

use crate::latency::LatencySummary;
use crate::op::Op;
use crate::operation::Operation;
use crate::safe_dir::SafeDir;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const SCHEMA_VERSION: u32 = 1;

fn one() -> u32 {
    1
}

/// Which workload took a record (`plan::Workload` without its parameters), or, for
/// imported results, which tool's matrix it came from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// The file size x record size matrix (sharebench's, or imported from IOzone).
    #[default]
    Iozone,
    Metadata,
    Smallfiles,
    Stream,
    Load,
    /// A matrix imported from fio's JSON output.
    Fio,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Iozone => "iozone",
            WorkloadKind::Metadata => "metadata",
            WorkloadKind::Smallfiles => "smallfiles",
            WorkloadKind::Stream => "stream",
            WorkloadKind::Load => "load",
            WorkloadKind::Fio => "fio",
        }
    }
}

impl std::fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The cache policy a measurement was taken under (`plan::CachePolicy`), or `unknown` for
/// imported results whose tool does not say.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    #[default]
    Keep,
    Drop,
    Remount,
    Direct,
    Unknown,
}

impl Cache {
    pub fn name(self) -> &'static str {
        match self {
            Cache::Keep => "keep",
            Cache::Drop => "drop",
            Cache::Remount => "remount",
            Cache::Direct => "direct",
            Cache::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a record describes one worker alone, one worker of several, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One worker, the only one (`threads` = 1, not throughput mode).
    Single,
    /// One worker of a throughput-mode run.
    Worker,
    /// The sum over the workers of a throughput-mode run.
    Aggregate,
}

/// Stolen CPU time, in percent of one CPU over a measurement, above which it is disturbed.
pub const DISTURBED_STEAL_PCT: f64 = 10.0;
/// Other processes' CPU time, in percent of one CPU, above which a measurement is disturbed.
pub const DISTURBED_OTHERS_PCT: f64 = 25.0;
/// What a difference of two /proc/stat readings can be off by, whatever happened: its
/// counters are in ticks of 10 ms (USER_HZ), each category rounded on its own. Stolen and
/// others' time count against the thresholds only beyond it.
pub const PROC_STAT_ROUNDING_S: f64 = 0.02;

/// Why `--reps auto` took no more samples of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepsStop {
    /// The 95% interval of every target's median was within the width asked for.
    Converged,
    /// The most samples allowed (`--max-reps`) were taken first.
    CountCap,
    /// The cell's time allowed (`--max-cell-time`) was spent first.
    TimeCap,
}

impl RepsStop {
    pub fn name(self) -> &'static str {
        match self {
            RepsStop::Converged => "converged",
            RepsStop::CountCap => "count-cap",
            RepsStop::TimeCap => "time-cap",
        }
    }
}

/// How a measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ok,
    /// An I/O error (ENOSPC, a server gone, ...): the figures cover nothing.
    Failed,
    /// Data read back did not match what was written.
    VerifyFailed,
    /// Stopped by Ctrl-C before the end.
    Interrupted,
}

/// Figures only throughput-mode aggregates carry (IOzone's -t summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputSummary {
    /// Sum of the workers' own rates (IOzone: "Children see throughput").
    pub children_see_kib_s: f64,
    /// All bytes over the wall time from the common start to the last finish ("Parent sees").
    pub parent_sees_kib_s: f64,
    pub min_worker_kib_s: f64,
    pub max_worker_kib_s: f64,
    pub avg_worker_kib_s: f64,
    /// Fewest bytes any worker moved ("Min xfer"), smaller than the file when stonewalled.
    pub min_xfer_bytes: u64,
}

/// One measurement. Field names are the schema; see `docs/reference/records.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub schema: u32,
    pub run_id: String,
    /// The target as the user named it.
    pub target: String,
    /// Backend kind (`posix`, `null`, ...) and the client path the bytes took.
    pub backend: String,
    pub client: String,
    /// Requests the worker kept in flight (`--iodepth`; 1 in records of older versions).
    #[serde(default = "one")]
    pub iodepth: u32,
    pub workload: WorkloadKind,
    /// What was measured (or under way, in a failed record); its name in the JSON.
    pub op: Operation,
    pub file_size: u64,
    pub record_size: u64,
    pub threads: u32,
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
    /// The MPI rank (client process) of a multi-client run's worker record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// The host that rank ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub rep: u32,
    /// Bytes moved (less than threads x file size when stonewalled or failed).
    pub bytes: u64,
    pub seconds: f64,
    /// bytes / 1024 / seconds (1 KiB = 1,024 bytes, as IOzone prints).
    pub throughput_kib_s: f64,
    /// User and system CPU seconds of this process (of the worker's thread for `worker`
    /// records): the exact total split in getrusage's proportions, 0 when unknown.
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Exact CPU seconds from the CPU clock, and that over `seconds` in percent. For a
    /// FUSE-mounted target they include the FUSE daemon's CPU (`fuse_cpu_s`): client CPU
    /// is what the client machine spent, not only this process.
    pub cpu_total_s: f64,
    pub cpu_util_pct: f64,
    /// CPU seconds of the FUSE daemon that carried a FUSE-mounted target's I/O during the
    /// measurement (lab targets whose daemon the lab names), counted in `cpu_total_s`.
    /// Not on `worker` records: the daemon serves every worker at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuse_cpu_s: Option<f64>,
    /// CPU seconds the rest of the machine used meanwhile, summed over its CPUs: its busy
    /// time (/proc/stat) less this process's, the lab servers' and the FUSE daemon's; and
    /// the time the hypervisor stole for other guests. What disturbed the measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_s: Option<f64>,
    /// The wall time over which `others_cpu_s` and `steal_s` were counted: the sample's
    /// span, from its first pass's start to its last one's end (other operations' passes
    /// of the same rounds, set-up and close included), so longer than `seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_s: Option<f64>,
    /// CPU of the target's server processes during the measurement (lab servers only):
    /// seconds, and percent of the measurement's wall time (of one core).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_util_pct: Option<f64>,
    /// What reached the server's storage during the measurement (lab targets whose
    /// backing device is on this machine): completed write requests, bytes written and
    /// cache flushes of the device (`disk_io`). Not on `worker` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_writes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_flushes: Option<u64>,
    #[serde(flatten)]
    pub latency: LatencySummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<ThroughputSummary>,
    /// True when workers stopped as the first one finished (IOzone's stonewalling).
    #[serde(default)]
    pub stonewalled: bool,
    /// IOzone matrix: passes of the operation this sample holds (bytes and seconds are over
    /// all of them; see `--min-sample-time`); absent in records of older versions (1 pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u32>,
    /// `--reps auto`: set on the records of a cell's last sample, saying why sampling
    /// stopped there; absent for `--reps N` and on earlier samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps_stop: Option<RepsStop>,
    pub include_close: bool,
    pub include_fsync: bool,
    pub direct: bool,
    pub sync: bool,
    pub mmap: bool,
    /// The cache policy asked for, and what was done before this measurement.
    pub cache: Cache,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_purge: Option<String>,
    pub verify: bool,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Verify failures: the file and absolute offset of the first wrong byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatch_offset: Option<u64>,
    /// UTC start time, RFC 3339.
    pub started_at: String,
    /// Figures of the workloads beyond IOzone's (metadata, smallfiles, stream); all
    /// optional, absent from iozone records.
    #[serde(flatten)]
    pub figures: WorkloadFigures,
}

/// Optional fields of the metadata, smallfiles and stream workloads (see docs/reference/records.md).
/// Flattened into the record, so each is a top-level field when present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadFigures {
    /// The Connectathon basic test this operation belongs to (`test1` .. `test9`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// Operations (or files) this record counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Size of the tree: files (metadata: the swept count; smallfiles: files in the tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// Directories in the tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<u64>,
    /// `count / seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s: Option<f64>,
    /// Concurrent streams (stream workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    /// The bit rate asked for per stream, bits/s (absent: unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitrate_bps: Option<u64>,
    /// The bit rate achieved per stream (the slowest stream for aggregates), bits/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_bps: Option<f64>,
    /// Client pre-allocation pattern (`windows`) and server-side mitigation
    /// (`fallocate`, `zero-fill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc_hints: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc: Option<String>,
    /// Mean and largest number of physically contiguous extents per file (FIEMAP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extents_per_file: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extents_max: Option<u64>,
    /// Load workload: the mix, the load point (from 0), the requested rate (requests/s
    /// over every worker; `ops_per_s` is the achieved one), whether the point is valid
    /// (achieved at least 99% of requested), and the p99 latency counted from when each
    /// request was issued rather than when it was due (`lat_*` count from the schedule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_point: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_ops_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_p99_us: Option<f64>,
    /// A finding about this measurement that is not a failure (a bit rate not sustained,
    /// fragmentation unavailable, a mitigation unsupported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Record {
    /// The figure a sample is judged by: throughput where bytes move (and for streams),
    /// else operations per second (the metadata tests that move none).
    /// Disturbed by others: stolen time above 10% of one CPU, or others' CPU above 25% of
    /// one CPU, over the measurement (docs/methods/statistics.md).
    /// Both beyond /proc/stat's rounding, over the span they were counted on.
    pub fn disturbed(&self) -> bool {
        let beyond = |s: Option<f64>| s.map(|s| (s - PROC_STAT_ROUNDING_S).max(0.0));
        let share = |s: Option<f64>| self.machine_share_pct(beyond(s)).unwrap_or(0.0);
        share(self.steal_s) > DISTURBED_STEAL_PCT || share(self.others_cpu_s) > DISTURBED_OTHERS_PCT
    }

    /// `cpu_s` (stolen or others' time) in percent of one CPU over the span it was counted
    /// on (`machine_s`; `seconds` in records older than it).
    pub fn machine_share_pct(&self, cpu_s: Option<f64>) -> Option<f64> {
        let span = self.machine_s.unwrap_or(self.seconds);
        cpu_s.filter(|_| span > 0.0).map(|s| s / span * 100.0)
    }

    pub fn figure(&self) -> f64 {
        if self.bytes > 0 || self.workload == WorkloadKind::Stream {
            self.throughput_kib_s
        } else {
            self.figures.ops_per_s.unwrap_or(self.throughput_kib_s)
        }
    }

    /// Records what the rest of the machine used over this measurement (see
    /// `others_cpu_s`), from this process's CPU usage over it and the CPU of the processes
    /// measured with it (lab servers, FUSE daemon).
    pub fn set_machine(&mut self, process: &crate::cpu::CpuUsage, measured_elsewhere_s: f64) {
        if let Some(m) = process.machine {
            self.others_cpu_s = Some((m.busy_s - process.total_s - measured_elsewhere_s).max(0.0));
            self.steal_s = Some(m.steal_s);
            self.machine_s = Some(process.wall_s);
        }
    }

    /// What reached the server's storage over this measurement (see `disk_writes`).
    pub fn set_disk(&mut self, d: Option<crate::disk_io::DiskIo>) {
        self.disk_writes = d.map(|d| d.writes);
        self.disk_write_bytes = d.map(|d| d.write_bytes);
        self.disk_flushes = d.map(|d| d.flushes);
    }

    /// Counts a FUSE daemon's CPU over this measurement as client CPU (see `fuse_cpu_s`).
    pub fn add_fuse_cpu(&mut self, fuse_s: f64) {
        self.fuse_cpu_s = Some(fuse_s);
        self.cpu_total_s += fuse_s;
        self.cpu_util_pct = crate::cpu::util_pct(self.cpu_total_s, self.seconds);
    }
}

impl Default for Record {
    /// An empty single-worker measurement of this schema: no bytes, no time, status ok,
    /// cache policy `keep`. For importers and tests that fill in what they know.
    fn default() -> Self {
        Record {
            schema: SCHEMA_VERSION,
            run_id: String::new(),
            target: String::new(),
            backend: String::new(),
            client: String::new(),
            iodepth: 1,
            workload: WorkloadKind::Iozone,
            op: Operation::Io(Op::Write),
            file_size: 0,
            record_size: 0,
            threads: 1,
            scope: Scope::Single,
            worker: None,
            rank: None,
            host: None,
            rep: 0,
            bytes: 0,
            seconds: 0.0,
            throughput_kib_s: 0.0,
            cpu_user_s: 0.0,
            cpu_sys_s: 0.0,
            cpu_total_s: 0.0,
            cpu_util_pct: 0.0,
            fuse_cpu_s: None,
            server_cpu_s: None,
            server_cpu_util_pct: None,
            disk_writes: None,
            disk_write_bytes: None,
            disk_flushes: None,
            latency: LatencySummary::default(),
            throughput: None,
            stonewalled: false,
            passes: None,
            reps_stop: None,
            others_cpu_s: None,
            steal_s: None,
            machine_s: None,
            include_close: false,
            include_fsync: false,
            direct: false,
            sync: false,
            mmap: false,
            cache: Cache::Keep,
            cache_purge: None,
            verify: false,
            status: Status::Ok,
            error: None,
            mismatch_file: None,
            mismatch_offset: None,
            started_at: String::new(),
            figures: WorkloadFigures::default(),
        }
    }
}

/// Appends records to `results.jsonl`, one flushed line each.
pub struct RecordWriter {
    path: PathBuf,
    file: File,
    count: u64,
    /// Bytes of whole lines written: a failed write is cut back to here.
    whole: u64,
}

impl RecordWriter {
    /// Starts a new file `name` in `dir` (never one that exists).
    pub fn create(dir: &SafeDir, name: &str) -> io::Result<Self> {
        Ok(RecordWriter {
            path: dir.path().join(name),
            file: dir.create_new(name, 0o644)?,
            count: 0,
            whole: 0,
        })
    }

    /// Writes one record and flushes it to the kernel before returning. A write that fails
    /// part-way (a full disk) is cut back, so the file never ends in half a line.
    pub fn append(&mut self, record: &Record) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        if let Err(e) = self.file.write_all(&line).and_then(|()| self.file.flush()) {
            let _ = self.file.set_len(self.whole);
            let _ = self.file.seek(SeekFrom::Start(self.whole));
            return Err(e);
        }
        self.whole += line.len() as u64;
        self.count += 1;
        Ok(())
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Records read back from a `results.jsonl`, with a note for each line that could not be
/// read (a line cut off by a crash is expected at the end).
#[derive(Debug)]
pub struct LoadedRecords {
    pub records: Vec<Record>,
    pub bad_lines: Vec<String>,
}

/// Reads a records file; anything but a regular file (a device, a FIFO) is refused.
pub fn read_jsonl(path: &Path) -> io::Result<LoadedRecords> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    read_jsonl_from(File::open(path)?, path)
}

/// The longest line a records file may hold: a record is a few KiB; a longer line is not
/// one, and reading it whole would take memory without bound.
pub const MAX_LINE_BYTES: usize = 1 << 20;

impl Record {
    /// Why a measured matrix record could not have been written by a measurement (a
    /// record of no size gives operations per second without bound), or `None`.
    pub fn implausible(&self) -> Option<&'static str> {
        let matrix = matches!(self.workload, WorkloadKind::Iozone | WorkloadKind::Fio);
        (matrix && self.status == Status::Ok && (self.record_size == 0 || self.file_size == 0))
            .then_some("a measured matrix record with record_size or file_size 0")
    }
}

/// `read_jsonl` of an open file; `path` names it in messages. Memory grows with the
/// records read, not with the bytes: a line over `MAX_LINE_BYTES` stops the reading.
pub fn read_jsonl_from(file: File, path: &Path) -> io::Result<LoadedRecords> {
    let mut reader = BufReader::new(file);
    let mut out = LoadedRecords {
        records: Vec::new(),
        bad_lines: Vec::new(),
    };
    let mut line = Vec::new();
    for i in 1.. {
        line.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        if reader.by_ref().take(limit).read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "line {i} is longer than {} MiB: not sharebench records",
                    MAX_LINE_BYTES >> 20
                ),
            ));
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(&text).map_err(|e| e.to_string()) {
            Ok(r) => match r.implausible() {
                None => out.records.push(r),
                Some(why) => out.bad_lines.push(format!("{}:{i}: {why}", path.display())),
            },
            Err(e) => out.bad_lines.push(format!("{}:{i}: {e}", path.display())),
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) fn sample_record() -> Record {
    Record {
        run_id: "r1".into(),
        target: "/tmp".into(),
        backend: "posix".into(),
        client: "kernel".into(),
        workload: WorkloadKind::Iozone,
        op: Op::Write.into(),
        file_size: 1 << 20,
        record_size: 4096,
        threads: 1,
        scope: Scope::Single,
        bytes: 1 << 20,
        seconds: 0.5,
        throughput_kib_s: 2048.0,
        cpu_user_s: 0.1,
        cpu_sys_s: 0.2,
        cpu_total_s: 0.3,
        cpu_util_pct: 60.0,
        started_at: "2026-01-01T00:00:00Z".into(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_matrix_record_of_no_size_is_implausible() {
        let mut r = Record {
            workload: WorkloadKind::Iozone,
            status: Status::Ok,
            file_size: 65536,
            record_size: 4096,
            ..Default::default()
        };
        assert_eq!(r.implausible(), None);
        r.record_size = 0;
        assert!(r.implausible().is_some(), "ops/s without bound");
        r.status = Status::Failed;
        assert_eq!(r.implausible(), None, "a failed record may name no cell");
        r.workload = WorkloadKind::Metadata;
        r.status = Status::Ok;
        assert_eq!(r.implausible(), None, "metadata has no records");
    }
    use std::fs::OpenOptions;

    /// The flag judges the machine over the span it was counted on and only beyond
    /// /proc/stat's rounding: one CPU busy beside a sample is caught, a tick is not.
    #[test]
    fn disturbed_is_judged_over_the_span_beyond_rounding() {
        let r = |seconds: f64, span: Option<f64>, others: f64, steal: f64| Record {
            seconds,
            machine_s: span,
            others_cpu_s: Some(others),
            steal_s: Some(steal),
            ..sample_record()
        };
        // Two ticks of rounding over a 10 ms sample: 200% of a CPU taken at face value.
        assert!(!r(0.01, Some(0.013), 0.02, 0.0).disturbed());
        // One busy CPU over a 130 ms span of a 100 ms sample.
        let busy = r(0.1, Some(0.13), 0.13, 0.0);
        assert!(busy.disturbed());
        assert_eq!(busy.machine_share_pct(busy.others_cpu_s), Some(100.0));
        // 30 ms of others over 130 ms: 23% before rounding, 8% beyond it.
        assert!(!r(0.1, Some(0.13), 0.03, 0.0).disturbed());
        // Steal: 10 ms beyond rounding over 100 ms is 10%, not above it; 20 ms is.
        assert!(!r(0.1, Some(0.1), 0.0, 0.03).disturbed());
        assert!(r(0.1, Some(0.1), 0.0, 0.04).disturbed());
        // Records older than `machine_s` are judged over `seconds`.
        assert!(r(0.1, None, 0.05, 0.0).disturbed());
        assert!(!r(0.0, None, 1.0, 1.0).disturbed());
    }

    #[test]
    fn workload_and_cache_keep_their_json_names() {
        use WorkloadKind as W;
        for w in [
            W::Iozone,
            W::Metadata,
            W::Smallfiles,
            W::Stream,
            W::Load,
            W::Fio,
        ] {
            let json = serde_json::to_string(&w).unwrap();
            assert_eq!(json, format!("\"{w}\""));
            assert_eq!(serde_json::from_str::<W>(&json).unwrap(), w);
        }
        for c in [
            Cache::Keep,
            Cache::Drop,
            Cache::Remount,
            Cache::Direct,
            Cache::Unknown,
        ] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<Cache>(&json).unwrap(), c);
        }
        // The plan's names are the records' names.
        for p in [
            crate::plan::CachePolicy::Keep,
            crate::plan::CachePolicy::Drop,
            crate::plan::CachePolicy::Remount,
            crate::plan::CachePolicy::Direct,
        ] {
            assert_eq!(Cache::from(p).name(), p.name());
        }
        // What the importers write loads back; a name no version wrote is refused.
        let mut v = serde_json::to_value(sample_record()).unwrap();
        v["workload"] = "fio".into();
        v["cache"] = "unknown".into();
        let r: Record = serde_json::from_value(v).unwrap();
        assert_eq!((r.workload, r.cache), (W::Fio, Cache::Unknown));
        v = serde_json::to_value(sample_record()).unwrap();
        v["workload"] = "tarball".into();
        assert!(serde_json::from_value::<Record>(v).is_err());
    }

    #[test]
    fn jsonl_round_trips_and_survives_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let mut w =
            RecordWriter::create(&SafeDir::open(dir.path()).unwrap(), "results.jsonl").unwrap();
        let r = sample_record();
        w.append(&r).unwrap();
        w.append(&r).unwrap();
        drop(w);
        // Simulate a crash in the middle of the third line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"schema\":1,\"run_id\":\"r").unwrap();
        let loaded = read_jsonl(&path).unwrap();
        assert_eq!(loaded.records, vec![r.clone(), r]);
        assert_eq!(loaded.bad_lines.len(), 1);
    }

    #[test]
    fn a_line_without_end_is_refused_not_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        std::fs::write(&path, vec![b'x'; MAX_LINE_BYTES + 10]).unwrap();
        let e = read_jsonl(&path).unwrap_err().to_string();
        assert!(e.contains("line 1 is longer than 1 MiB"), "{e}");
        let e = read_jsonl(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
