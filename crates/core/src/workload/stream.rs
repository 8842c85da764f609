//! The stream workload (seed 002): N concurrent streams record (sequential large writes,
//! unbounded or paced at a bit rate) and then play back with a cold cache. A Windows
//! client's pre-allocation hints (one-byte writes at a 128 KiB stride, up to 15 MiB ahead
//! of the data) can be reproduced, and the server-side mitigations (fallocate, zero-fill as
//! Samba's `strict allocate`) applied. After recording, the extents of every file are
//! counted through the backend's FIEMAP, when it has one.

use super::{check, WorkloadRun};
use crate::backend::{pread_full, pwrite_all, Backend, FileHandle, OpenOptions, PurgeRequest};
use crate::buffer::AlignedBuf;
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::latency::LatencyRecorder;
use crate::operation::Operation;
use crate::plan::{Prealloc, PreallocHints, StreamParams, MIB};
use crate::record::{Record, Scope};
use crate::workload::iozone::PassError;
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The Windows client's hint stride and how far ahead of the data it writes them.
pub const HINT_STRIDE: u64 = 128 * 1024;
pub const HINT_AHEAD: u64 = 15 * MIB;

/// What one stream did.
pub struct StreamOutcome {
    pub bytes: u64,
    pub seconds: f64,
    pub started: Instant,
    pub finished: Instant,
    pub latency: LatencyRecorder,
    pub cpu: CpuUsage,
    pub hint_writes: u64,
    /// A mitigation that could not be applied (e.g. fallocate on ext3).
    pub prealloc_failed: Option<String>,
}

/// Sleeps until `bytes` are due at `bps` bits/s since `t0` (no sleep when behind).
fn pace(t0: Instant, bytes: u64, bps: Option<u64>, cancel: &AtomicBool) {
    let Some(bps) = bps else { return };
    let due = t0 + Duration::from_secs_f64(bytes as f64 * 8.0 / bps as f64);
    loop {
        let now = Instant::now();
        if now >= due || check(cancel).is_err() {
            return;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(50)));
    }
}

/// The server-side handling of a write that extends the file to `end`.
struct Extender {
    mode: Prealloc,
    prepared: u64,
    zeros: Vec<u8>,
    failed: Option<String>,
}

impl Extender {
    fn extend(&mut self, f: &mut dyn FileHandle, end: u64) -> io::Result<()> {
        if end <= self.prepared || self.failed.is_some() {
            return Ok(());
        }
        match self.mode {
            Prealloc::None => {}
            Prealloc::Fallocate => {
                if let Err(e) = f.allocate(self.prepared, end - self.prepared) {
                    self.failed = Some(format!("fallocate unavailable ({e}); recorded without it"));
                }
            }
            Prealloc::ZeroFill => {
                let mut at = self.prepared;
                while at < end {
                    let n = (end - at).min(self.zeros.len() as u64) as usize;
                    pwrite_all(f, &self.zeros[..n], at)?;
                    at += n as u64;
                }
            }
        }
        self.prepared = end;
        Ok(())
    }
}

/// Records one stream: data in `io_size` writes (with hints and mitigation), fsync and
/// close inside the clock.
pub fn record_stream(
    b: &dyn Backend,
    path: &str,
    p: &StreamParams,
    start: &Barrier,
    cancel: &AtomicBool,
) -> Result<StreamOutcome, PassError> {
    let mut f = b.open(path, OpenOptions::create_new())?;
    let buf = AlignedBuf::filled(p.io_size as usize);
    let mut ext = Extender {
        mode: p.prealloc,
        prepared: 0,
        zeros: if p.prealloc == Prealloc::ZeroFill {
            vec![0u8; p.io_size.max(HINT_STRIDE) as usize]
        } else {
            Vec::new()
        },
        failed: None,
    };
    let mut latency = LatencyRecorder::new();
    let mut hint_next = HINT_STRIDE - 1;
    let mut hints = 0;
    start.wait();
    let cpu0 = CpuSnapshot::thread_now();
    let t0 = Instant::now();
    let mut done = 0u64;
    while done < p.stream_size {
        check(cancel)?;
        let n = (p.stream_size - done).min(p.io_size);
        if p.hints == PreallocHints::Windows {
            let limit = (done + n + HINT_AHEAD).min(p.stream_size);
            while hint_next < limit {
                ext.extend(f.as_mut(), hint_next + 1)?;
                pwrite_all(f.as_mut(), &[0x55], hint_next)?;
                hint_next += HINT_STRIDE;
                hints += 1;
            }
        }
        ext.extend(f.as_mut(), done + n)?;
        let t = Instant::now();
        pwrite_all(f.as_mut(), &buf.as_slice()[..n as usize], done)?;
        latency.record_ns(t.elapsed().as_nanos() as u64);
        done += n;
        pace(t0, done, p.bitrate_bps, cancel);
    }
    f.fsync()?;
    f.close()?;
    let finished = Instant::now();
    Ok(StreamOutcome {
        bytes: done,
        seconds: finished.duration_since(t0).as_secs_f64(),
        started: t0,
        finished,
        latency,
        cpu: CpuSnapshot::thread_now().since(&cpu0),
        hint_writes: hints,
        prealloc_failed: ext.failed,
    })
}

/// Plays one stream back: sequential `io_size` reads, paced like the recording.
pub fn play_stream(
    b: &dyn Backend,
    path: &str,
    p: &StreamParams,
    start: &Barrier,
    cancel: &AtomicBool,
) -> Result<StreamOutcome, PassError> {
    let mut f = b.open(path, OpenOptions::read_only())?;
    let mut buf = AlignedBuf::new(p.io_size as usize);
    let mut latency = LatencyRecorder::new();
    start.wait();
    let cpu0 = CpuSnapshot::thread_now();
    let t0 = Instant::now();
    let mut done = 0u64;
    while done < p.stream_size {
        check(cancel)?;
        let t = Instant::now();
        let n = pread_full(f.as_mut(), buf.as_mut_slice(), done)?;
        latency.record_ns(t.elapsed().as_nanos() as u64);
        if n == 0 {
            if b.stores_data() {
                return Err(PassError::Io(io::Error::other(format!(
                    "{path}: ended at {done} of {} bytes",
                    p.stream_size
                ))));
            }
            break;
        }
        done += n as u64;
        pace(t0, done, p.bitrate_bps, cancel);
    }
    f.close()?;
    let finished = Instant::now();
    Ok(StreamOutcome {
        bytes: done,
        seconds: finished.duration_since(t0).as_secs_f64(),
        started: t0,
        finished,
        latency,
        cpu: CpuSnapshot::thread_now().since(&cpu0),
        hint_writes: 0,
        prealloc_failed: None,
    })
}

type StreamFn = fn(
    &dyn Backend,
    &str,
    &StreamParams,
    &Barrier,
    &AtomicBool,
) -> Result<StreamOutcome, PassError>;

/// Runs one stream function on every file at once.
fn together(
    w: &mut WorkloadRun,
    files: &[String],
    p: &StreamParams,
    f: StreamFn,
) -> Result<(Vec<StreamOutcome>, super::SpanEnd), PassError> {
    w.start_together()?;
    let b = w.backend();
    let cancel = w.cancel;
    crate::thread_room::check(files.len()).map_err(|e| PassError::Io(std::io::Error::other(e)))?;
    let barrier = Barrier::new(files.len() + 1);
    let (results, end) = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .map(|path| {
                let barrier = &barrier;
                s.spawn(move || f(b, path, p, barrier, cancel))
            })
            .collect();
        let span = w.span();
        barrier.wait();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(PassError::Io(io::Error::other("stream thread panicked")))
                })
            })
            .collect();
        (results, w.finish(span))
    });
    let outcomes = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((outcomes, end))
}

fn bps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

/// Extents per file: (mean, max), or why they are unavailable. A client that cannot ask
/// (NFS, SMB) is answered from the server's view of the same files, when there is one.
fn fragmentation(
    b: &dyn Backend,
    server_view: Option<&dyn Backend>,
    files: &[String],
) -> Result<(f64, u64, bool), String> {
    let mut counts = Vec::new();
    let mut via_server = false;
    for f in files {
        let n = match (b.extents(f), server_view) {
            (Ok(n), _) => Ok(n),
            (Err(e), Some(v)) if e.kind() == std::io::ErrorKind::Unsupported => {
                via_server = true;
                v.extents(f)
            }
            (Err(e), _) => Err(e),
        };
        match n {
            Ok(n) => counts.push(n),
            Err(e) => return Err(format!("fragmentation unavailable: {e}")),
        }
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    Ok((
        counts.iter().sum::<u64>() as f64 / counts.len().max(1) as f64,
        max,
        via_server,
    ))
}

/// Runs every stream count once (one repetition on one target) and emits the records.
pub fn run(w: &mut WorkloadRun, p: &StreamParams) -> Result<(), PassError> {
    let base = w.target.workdir.file(&format!("stream-r{}", w.rep));
    w.phase = Operation::Setup;
    w.backend().mkdir(&base)?;
    for &n in &p.streams {
        let files: Vec<String> = (0..n).map(|i| format!("{base}/s{n}-{i}.mpg")).collect();
        w.phase = Operation::Record;
        check(w.cancel)?;
        let (rec, end) = together(w, &files, p, record_stream)?;
        let frag = fragmentation(w.backend(), w.target.server_view.as_deref(), &files);
        emit(w, Operation::Record, p, n, &rec, &end, &frag)?;
        w.progress(p.stream_size * u64::from(n), &format!("record x{n}"));

        // A cold cache for playback.
        w.phase = Operation::Playback;
        let mut purge = None;
        for f in &files {
            match w.backend().purge_cache(f, PurgeRequest::Drop) {
                Ok(how) => {
                    purge = Some(how.name().to_string());
                    if how == crate::backend::Purge::DropCaches {
                        break;
                    }
                }
                Err(e) => {
                    purge = Some(format!("failed: {e}"));
                    break;
                }
            }
        }
        // A network target's server keeps the files in its own page cache: where the
        // server's copy is on this machine (the lab), it is purged too, so playback reads
        // the disk and its fragmentation, as the seed's did.
        if let Some(server) = w.target.server_view.as_deref() {
            let mut how = None;
            for f in &files {
                match server.purge_cache(f, PurgeRequest::Drop) {
                    Ok(h) => {
                        how = Some(h.name().to_string());
                        if h == crate::backend::Purge::DropCaches {
                            break;
                        }
                    }
                    Err(e) => {
                        how = Some(format!("failed: {e}"));
                        break;
                    }
                }
            }
            if let Some(h) = how {
                purge = Some(match purge {
                    Some(c) => format!("{c}; server: {h}"),
                    None => format!("server: {h}"),
                });
            }
        }
        check(w.cancel)?;
        let (play, end) = together(w, &files, p, play_stream)?;
        emit_with(w, Operation::Playback, p, n, &play, &end, &frag, purge)?;
        w.progress(p.stream_size * u64::from(n), &format!("playback x{n}"));
        w.phase = Operation::Cleanup;
        for f in &files {
            w.backend().unlink(f)?;
        }
    }
    w.backend().rmdir(&base)?;
    Ok(())
}

fn emit(
    w: &mut WorkloadRun,
    op: Operation,
    p: &StreamParams,
    n: u32,
    outs: &[StreamOutcome],
    end: &super::SpanEnd,
    frag: &Result<(f64, u64, bool), String>,
) -> Result<(), PassError> {
    emit_with(w, op, p, n, outs, end, frag, None)
}

/// The aggregate of several streams: bytes over the time from the first start to the last
/// end, the worst stream's bit rate, every stream's latencies.
fn fill_aggregate(
    w: &WorkloadRun,
    mut agg: Record,
    outs: &[StreamOutcome],
    end: &super::SpanEnd,
    latency: &LatencyRecorder,
    worst: f64,
) -> Record {
    let released = outs.iter().map(|o| o.started).min();
    let last = outs.iter().map(|o| o.finished).max();
    let seconds = match (released, last) {
        (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
        _ => end.seconds,
    };
    let bytes: u64 = outs.iter().map(|o| o.bytes).sum();
    agg.bytes = bytes;
    let span = super::SpanEnd {
        started_at: end.started_at.clone(),
        seconds,
        cpu: end.cpu,
        server_s: end.server_s,
        fuse_s: end.fuse_s,
        disk: end.disk,
    };
    w.close_span(&mut agg, &span);
    agg.throughput_kib_s = if seconds > 0.0 {
        bytes as f64 / 1024.0 / seconds
    } else {
        0.0
    };
    agg.latency = latency.summary();
    agg.figures.achieved_bps = Some(worst);
    agg
}

#[allow(clippy::too_many_arguments)]
fn emit_with(
    w: &mut WorkloadRun,
    op: Operation,
    p: &StreamParams,
    n: u32,
    outs: &[StreamOutcome],
    end: &super::SpanEnd,
    frag: &Result<(f64, u64, bool), String>,
    purge: Option<String>,
) -> Result<(), PassError> {
    let base = |w: &WorkloadRun, scope: Scope| {
        let mut r = w.record(op, &end.started_at);
        r.scope = scope;
        r.threads = n;
        r.file_size = p.stream_size;
        r.record_size = p.io_size;
        r.include_fsync = op == Operation::Record;
        r.cache_purge = purge.clone();
        let g = &mut r.figures;
        g.streams = Some(n);
        g.bitrate_bps = p.bitrate_bps;
        g.prealloc_hints = (p.hints != PreallocHints::None).then(|| "windows".to_string());
        g.prealloc = match p.prealloc {
            Prealloc::None => None,
            Prealloc::Fallocate => Some("fallocate".into()),
            Prealloc::ZeroFill => Some("zero-fill".into()),
        };
        r
    };
    let mut notes: Vec<String> = Vec::new();
    if let Some(f) = outs.iter().find_map(|o| o.prealloc_failed.clone()) {
        notes.push(f);
    }
    let mut worst = f64::INFINITY;
    let mut latency = LatencyRecorder::new();
    let mut records = Vec::new();
    for (i, o) in outs.iter().enumerate() {
        let mut r = base(w, if n == 1 { Scope::Single } else { Scope::Worker });
        if n > 1 {
            r.worker = Some(i as u32);
        }
        r.bytes = o.bytes;
        r.seconds = o.seconds;
        r.throughput_kib_s = if o.seconds > 0.0 {
            o.bytes as f64 / 1024.0 / o.seconds
        } else {
            0.0
        };
        super::set_cpu(&mut r, &o.cpu, o.seconds);
        r.latency = o.latency.summary();
        let achieved = bps(o.bytes, o.seconds);
        r.figures.achieved_bps = Some(achieved);
        worst = worst.min(achieved);
        latency.merge(&o.latency);
        records.push(r);
    }
    if let Some(want) = p.bitrate_bps {
        if worst < want as f64 * 0.98 {
            notes.push(format!(
                "bit rate not sustained: the slowest stream achieved {:.1} of {:.1} Mbit/s",
                worst / 1e6,
                want as f64 / 1e6
            ));
        }
    }
    let frag_note = match frag {
        Ok((_, _, true)) => Some("extents measured on the server's backing file".to_string()),
        Ok(_) => None,
        Err(e) => Some(e.clone()),
    };
    if n > 1 {
        let agg = base(w, Scope::Aggregate);
        records.push(fill_aggregate(w, agg, outs, end, &latency, worst));
    } else if let Some(r) = records.first_mut() {
        if !w.target.servers.is_empty() && end.server_s.is_finite() {
            r.server_cpu_s = Some(end.server_s);
            r.server_cpu_util_pct = Some(crate::cpu::util_pct(end.server_s, r.seconds));
        }
        if !w.target.fuse.is_empty() {
            r.add_fuse_cpu(end.fuse_s);
        }
        r.set_disk(end.disk);
    }
    if let Some(fnote) = &frag_note {
        notes.push(fnote.clone());
    }
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    for r in &mut records {
        if r.scope != Scope::Worker {
            if let Ok((mean, max, _)) = frag {
                r.figures.extents_per_file = Some(*mean);
                r.figures.extents_max = Some(*max);
            }
            r.figures.note = note.clone();
        }
        if op == Operation::Record && r.scope != Scope::Worker {
            r.figures.count = Some(outs.iter().map(|o| o.hint_writes).sum());
        }
    }
    for r in &records {
        w.emit(r)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LogFs;

    #[test]
    fn windows_hints_run_15_mib_ahead_at_128_kib() {
        let fs = LogFs::default();
        let p = StreamParams {
            streams: vec![1],
            stream_size: 32 * MIB,
            io_size: MIB,
            hints: PreallocHints::Windows,
            ..StreamParams::default()
        };
        let barrier = Barrier::new(1);
        let o = record_stream(&fs, "s", &p, &barrier, &AtomicBool::new(false)).unwrap();
        // One hint per 128 KiB of the file.
        assert_eq!(o.hint_writes, 32 * MIB / HINT_STRIDE);
        assert_eq!(o.bytes, 32 * MIB);
    }

    #[test]
    fn pacing_holds_the_bit_rate() {
        let fs = LogFs::default();
        let p = StreamParams {
            streams: vec![1],
            stream_size: MIB,
            io_size: 256 * 1024,
            bitrate_bps: Some(80 * 1024 * 1024),
            ..StreamParams::default()
        };
        let barrier = Barrier::new(1);
        let o = record_stream(&fs, "s", &p, &barrier, &AtomicBool::new(false)).unwrap();
        // 1 MiB at 80 Mibit/s: 0.1 s.
        assert!(o.seconds >= 0.099 && o.seconds < 0.5, "{}", o.seconds);
    }
}
