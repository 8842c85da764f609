//! One IOzone operation over one file by one worker: open, start the clock, visit the
//! records in the operation's order with its system-call style, stop the clock (after
//! fsync and close when they are included), and report bytes, time and latencies.
//! What runs when is `matrix`'s (a cell's tests) and the engine's (cells, repetitions,
//! targets); this module only knows how one pass is done.

pub mod gate;
pub mod matrix;

use crate::backend::{
    pread_full, pwrite_all, read_full, write_all, Backend, FileHandle, OpenOptions, QueuedIo,
};
use crate::buffer::AlignedBuf;
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::latency::LatencyRecorder;
use crate::offsets::RecordOrder;
use crate::op::{Direction, Op, Order, Style};
use crate::op_clock;
use crate::pattern;
use crate::plan::{Cell, Timing};
use crate::workload::buffered::Buffered;
use std::io::{self, IoSlice, IoSliceMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Most bytes one pwritev/preadv call carries; fewer records per call for large records.
const MAX_VECTOR_BYTES: u64 = 16 << 20;

/// What one pass does.
#[derive(Debug, Clone)]
pub struct PassSpec {
    pub op: Op,
    pub cell: Cell,
    pub timing: Timing,
    /// O_DIRECT, from the timing flag or the cache policy.
    pub direct: bool,
    pub stride: u64,
    /// Seed of the random order (and the mix choice).
    pub order_seed: u64,
    /// Seed of the file's verify pattern; `None` when not verifying.
    pub verify_seed: Option<u64>,
    pub vector_records: usize,
    /// random-mix in throughput mode: this worker only reads (`Some(true)`) or only writes,
    /// as IOzone splits its children; `None` mixes record by record.
    pub mix_reader: Option<bool>,
    /// Requests kept in flight (`--iodepth`); 1 is one call at a time, IOzone's way. Already
    /// 1 for an operation that cannot queue (see [`iodepth_for`]).
    pub iodepth: usize,
}

/// The depth an operation runs at when `--iodepth` asks for `depth`: 1 for the operations
/// whose order does not allow more (`Op::queues`) and for mmap mode's page faults.
pub fn iodepth_for(op: Op, timing: &Timing, depth: u32) -> u32 {
    let mapped = timing.mmap && op.style() == Style::Cursor;
    if op.queues() && !mapped {
        depth.max(1)
    } else {
        1
    }
}

/// How workers are kept in step.
pub struct Coordination<'a> {
    /// All workers wait here after opening, so they start together.
    pub start: Option<&'a gate::StartGate>,
    /// Set by the first worker to finish; the others then note their figures (stonewalling).
    pub first_done: &'a AtomicBool,
    pub stonewall: bool,
    /// Ctrl-C.
    pub cancel: &'a AtomicBool,
}

/// What one pass measured.
pub struct PassOutcome {
    /// Bytes and seconds the throughput is computed from (at the stonewall, if it struck).
    pub bytes: u64,
    pub seconds: f64,
    /// When the clock started and stopped (for the parent's view of several workers).
    pub started: Instant,
    pub finished: Instant,
    pub stonewalled: bool,
    pub latency: LatencyRecorder,
    /// This thread's CPU during the timed interval.
    pub cpu: CpuUsage,
    /// Verify: the absolute offset of the first wrong byte.
    pub mismatch: Option<u64>,
    /// Passes this outcome sums (a sample's rounds: see the matrix module).
    pub passes: u32,
}

impl PassOutcome {
    /// Adds a later pass of the same operation: bytes, timed seconds, CPU and latencies add
    /// up; the first mismatch stays.
    pub(crate) fn absorb(&mut self, next: PassOutcome) {
        self.bytes += next.bytes;
        self.seconds += next.seconds;
        self.finished = next.finished;
        self.stonewalled |= next.stonewalled;
        self.latency.merge(&next.latency);
        self.cpu.add(&next.cpu);
        self.mismatch = self.mismatch.or(next.mismatch);
        self.passes += next.passes;
    }
}

pub use super::PassError;

/// Per-worker buffers, allocated once per cell.
pub struct WorkerBuffers {
    /// One record (or one vectored call), pattern-filled for writes when not verifying.
    pub data: AlignedBuf,
}

impl WorkerBuffers {
    pub fn for_cell(cell: &Cell, vector_records: usize) -> Self {
        let per_call = records_per_vector_call(cell, vector_records);
        WorkerBuffers {
            data: AlignedBuf::filled((cell.record_size * per_call) as usize),
        }
    }
}

fn records_per_vector_call(cell: &Cell, vector_records: usize) -> u64 {
    (MAX_VECTOR_BYTES / cell.record_size).clamp(1, vector_records.max(1) as u64)
}

/// True when this record is read in a random-mix pass (about half are).
fn mix_reads(seed: u64, record: u64) -> bool {
    let mut z = seed ^ record.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (z >> 40) & 1 == 0
}

/// Writes the file of `cell` without measuring, for reads whose write was not selected.
pub fn prepare_file(
    backend: &dyn Backend,
    path: &str,
    spec: &PassSpec,
    bufs: &mut WorkerBuffers,
) -> io::Result<()> {
    let mut how = OpenOptions::create_new();
    how.direct = spec.direct;
    let mut f = backend.open(path, how)?;
    let rs = spec.cell.record_size;
    for rec in 0..spec.cell.records() {
        let off = rec * rs;
        let len = rs.min(spec.cell.file_size - off) as usize;
        let buf = &mut bufs.data.as_mut_slice()[..len];
        if let Some(seed) = spec.verify_seed {
            pattern::fill(buf, seed, off);
        }
        pwrite_all(f.as_mut(), buf, off)?;
    }
    f.fsync()?;
    f.close()
}

/// Runs one pass of `spec.op` over the file at `path`.
pub fn run_pass(
    backend: &dyn Backend,
    path: &str,
    spec: &PassSpec,
    bufs: &mut WorkerBuffers,
    coord: &Coordination,
) -> Result<PassOutcome, PassError> {
    let op = spec.op;
    let writes = op.direction() != Direction::Read;
    let mut how = if op.creates_file() {
        OpenOptions::create_new()
    } else if op.may_create_file() {
        OpenOptions {
            create: true,
            ..OpenOptions::read_write()
        }
    } else if writes {
        OpenOptions::read_write()
    } else {
        OpenOptions::read_only()
    };
    how.direct = spec.direct;
    how.sync = spec.timing.sync;
    // Open (untimed) and then meet the other workers, even when opening failed, so that no
    // worker waits forever at the barrier.
    let opened = open_for_pass(backend, path, spec, how, &mut bufs.data);
    op_clock::ready();
    if let Some(g) = coord.start {
        if !g.wait() {
            return Err(PassError::Io(io::Error::other(
                "the pass was called off: another worker could not be started",
            )));
        }
    }
    let (mut file, mut mapping) = opened?;
    let mut pass = Pass::start(spec, coord);

    let result = match (&mut mapping, op.style()) {
        (None, _) if spec.iodepth > 1 => pass.run_queued(file.as_mut()),
        (Some(m), _) => pass.run_records(
            |buf, off, reading| {
                if reading {
                    m.read_at(buf, off);
                } else {
                    m.write_at(buf, off);
                }
                Ok(buf.len())
            },
            bufs,
        ),
        (None, Style::Cursor) => {
            let sequential = op.order() == Order::Sequential;
            let f = file.as_mut();
            f.seek(0)?;
            pass.run_records(
                |buf, off, reading| {
                    if !sequential {
                        f.seek(off)?;
                    }
                    if reading {
                        read_full(f, buf)
                    } else {
                        write_all(f, buf).map(|_| buf.len())
                    }
                },
                bufs,
            )
        }
        (None, Style::Positional) => {
            let f = file.as_mut();
            pass.run_records(
                |buf, off, reading| {
                    if reading {
                        pread_full(f, buf, off)
                    } else {
                        pwrite_all(f, buf, off).map(|_| buf.len())
                    }
                },
                bufs,
            )
        }
        (None, Style::Buffered) => {
            let cap = spec.cell.record_size as usize;
            let mut b = Buffered::new(file.as_mut(), cap);
            let r = pass.run_records(
                |buf, _off, reading| {
                    if reading {
                        b.read(buf)
                    } else {
                        b.write(buf).map(|_| buf.len())
                    }
                },
                bufs,
            );
            match r {
                Ok(()) if writes => b.flush().map_err(PassError::from),
                other => other,
            }
        }
        (None, Style::Vectored) => pass.run_vectored(file.as_mut(), bufs),
    };
    result?;

    // fsync (msync in mmap mode) and close, inside the clock only when included.
    if writes && spec.timing.include_fsync {
        match &mut mapping {
            Some(m) => m.flush()?,
            None => file.fsync()?,
        }
    }
    drop(mapping);
    if spec.timing.include_close {
        file.close()?;
        pass.finish(coord);
    } else {
        pass.finish(coord);
        file.close()?;
    }
    Ok(pass.outcome())
}

type Opened = (
    Box<dyn FileHandle>,
    Option<Box<dyn crate::backend::Mapping>>,
);

/// Opens the file for a pass (a new one for creating operations) and maps it in mmap mode.
/// IOzone's read test reads record 0 once, untimed, before the clock starts.
fn open_for_pass(
    backend: &dyn Backend,
    path: &str,
    spec: &PassSpec,
    how: OpenOptions,
    scratch: &mut AlignedBuf,
) -> io::Result<Opened> {
    let op = spec.op;
    if op.creates_file() {
        match backend.unlink(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let mut file = backend.open(path, how)?;
    let mmap = spec.timing.mmap && op.style() == Style::Cursor;
    if mmap && op.creates_file() {
        file.set_len(spec.cell.file_size)?;
    }
    let writable = op.direction() != Direction::Read;
    let mapping = if mmap {
        Some(file.map(spec.cell.file_size, writable)?)
    } else {
        None
    };
    if matches!(op, Op::Read | Op::Reread) && mapping.is_none() {
        let len = spec.cell.record_size.min(spec.cell.file_size) as usize;
        read_full(file.as_mut(), &mut scratch.as_mut_slice()[..len])?;
        file.seek(0)?;
    }
    Ok((file, mapping))
}

/// The clock, counters and checks of one pass in progress.
struct Pass<'a> {
    spec: &'a PassSpec,
    coord: &'a Coordination<'a>,
    started: Instant,
    cpu_start: CpuSnapshot,
    latency: LatencyRecorder,
    /// Where the next call's latency starts: the previous call's end, or later when work
    /// that is not bookkeeping (a pattern fill, a check, a snapshot) ran in between.
    mark: op_clock::Tick,
    bytes: u64,
    /// Figures noted at the stonewall: (bytes, when).
    snapshot: Option<(u64, Instant, CpuSnapshot)>,
    finished: Option<(Instant, CpuSnapshot)>,
    mismatch: Option<u64>,
}

impl<'a> Pass<'a> {
    fn start(spec: &'a PassSpec, coord: &'a Coordination<'a>) -> Self {
        Pass {
            spec,
            coord,
            cpu_start: CpuSnapshot::thread_now(),
            started: Instant::now(),
            latency: LatencyRecorder::new(),
            mark: op_clock::now(),
            bytes: 0,
            snapshot: None,
            finished: None,
            mismatch: None,
        }
    }

    /// Checked before each call: Ctrl-C ends the pass. At the stonewall (another worker has
    /// finished) the figures are frozen; a reader stops there (`Ok(false)`), a writer goes on
    /// uncounted so the file is complete for the next operation, as IOzone does.
    #[inline]
    fn check_flags(&mut self, writes: bool) -> Result<bool, PassError> {
        if self.coord.cancel.load(Ordering::Relaxed) {
            return Err(PassError::Interrupted);
        }
        if self.coord.stonewall
            && self.snapshot.is_none()
            && self.coord.first_done.load(Ordering::Relaxed)
        {
            self.snapshot = Some((self.bytes, Instant::now(), CpuSnapshot::thread_now()));
            self.mark = op_clock::now();
            return Ok(writes);
        }
        Ok(true)
    }

    /// Visits every record in the operation's order, calling `io(buf, offset, reading)`.
    /// One clock reading a call: a call's latency runs from the previous call's end to its
    /// own, so it includes the loop's few nanoseconds of bookkeeping but never a pattern
    /// fill, a verification or a snapshot (each of those moves the mark past itself).
    fn run_records<F>(&mut self, mut io: F, bufs: &mut WorkerBuffers) -> Result<(), PassError>
    where
        F: FnMut(&mut [u8], u64, bool) -> io::Result<usize>,
    {
        let cell = self.spec.cell;
        let rs = cell.record_size;
        let order = RecordOrder::new(
            self.spec.op.order(),
            cell.records(),
            self.spec.stride,
            self.spec.order_seed,
        );
        let mixed = self.spec.op.direction() == Direction::Mixed && self.spec.mix_reader.is_none();
        let reads_only =
            self.spec.op.direction() == Direction::Read || self.spec.mix_reader == Some(true);
        let writes = !reads_only;
        self.mark = op_clock::now();
        for rec in order {
            if !self.check_flags(writes)? {
                break;
            }
            let off = rec * rs;
            let len = rs.min(cell.file_size - off) as usize;
            let buf = &mut bufs.data.as_mut_slice()[..len];
            let reading = reads_only || (mixed && mix_reads(self.spec.order_seed, rec));
            if !reading {
                if let Some(seed) = self.spec.verify_seed {
                    pattern::fill(buf, seed, off);
                    self.mark = op_clock::now();
                }
            }
            let n = io(buf, off, reading)?;
            let end = op_clock::now();
            self.latency.record_ns(self.mark.ns_until(end));
            self.mark = end;
            if n < len {
                return Err(short_read(off + n as u64, cell.file_size).into());
            }
            if reading && self.spec.verify_seed.is_some() {
                if self.verify(buf, off) {
                    return Ok(());
                }
                self.mark = op_clock::now();
            }
            self.bytes += len as u64;
        }
        Ok(())
    }

    /// Every record (or vectored call) through a queue of `spec.iodepth` requests in flight:
    /// a freed slot is refilled at once, in the operation's order; each request's latency
    /// runs from its submission to its completion. Completion order is the target's, so a
    /// read is verified, and its bytes counted, when it completes.
    fn run_queued(&mut self, f: &mut dyn FileHandle) -> Result<(), PassError> {
        let cell = self.spec.cell;
        let rs = cell.record_size;
        let vectored = self.spec.op.style() == Style::Vectored;
        let per_call = if vectored {
            records_per_vector_call(&cell, self.spec.vector_records)
        } else {
            1
        };
        let depth = self.spec.iodepth;
        let mut q = f.queue(depth, (rs * per_call) as usize)?;
        let mixed = self.spec.op.direction() == Direction::Mixed && self.spec.mix_reader.is_none();
        let reads_only =
            self.spec.op.direction() == Direction::Read || self.spec.mix_reader == Some(true);
        let mut order = RecordOrder::new(
            self.spec.op.order(),
            cell.records(),
            self.spec.stride,
            self.spec.order_seed,
        );
        let seed = self.spec.order_seed;
        let mut next_call = 0u64;
        // The next request: (offset, length, reading), or None at the end of the file.
        let mut next = || -> Option<(u64, usize, bool)> {
            if vectored {
                let off = next_call * rs * per_call;
                next_call += 1;
                (off < cell.file_size).then(|| {
                    (
                        off,
                        (rs * per_call).min(cell.file_size - off) as usize,
                        !mixed && reads_only,
                    )
                })
            } else {
                let rec = order.next()?;
                let off = rec * rs;
                let reading = reads_only || (mixed && mix_reads(seed, rec));
                Some((off, rs.min(cell.file_size - off) as usize, reading))
            }
        };
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut flight: Vec<(u64, usize, bool, op_clock::Tick)> =
            vec![(0, 0, false, op_clock::now()); depth];
        let mut ended = false;
        loop {
            while !ended && !free.is_empty() {
                if !self.check_flags(!reads_only)? {
                    ended = true;
                    break;
                }
                let Some((off, len, reading)) = next() else {
                    ended = true;
                    break;
                };
                let slot = free.pop().expect("a free slot");
                if !reading {
                    if let Some(seed) = self.spec.verify_seed {
                        pattern::fill(&mut q.buf(slot)[..len], seed, off);
                    }
                }
                flight[slot] = (off, len, reading, op_clock::now());
                q.submit(QueuedIo {
                    slot,
                    write: !reading,
                    offset: off,
                    len,
                    piece: if vectored { rs as usize } else { len },
                })?;
            }
            if free.len() == depth {
                return Ok(());
            }
            let (slot, done) = q.complete()?;
            let (off, len, reading, issued) = flight[slot];
            self.latency.record_ns(issued.ns_since());
            let n = done?;
            if n < len {
                return Err(if reading {
                    short_read(off + n as u64, cell.file_size)
                } else {
                    io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!("short write at offset {off}"),
                    )
                }
                .into());
            }
            if reading && self.verify(&q.buf(slot)[..len], off) {
                return Ok(());
            }
            self.bytes += len as u64;
            free.push(slot);
        }
    }

    /// Sequential preadv/pwritev, several records per call, each call timed from its own
    /// start (its fill and its vector are made before).
    fn run_vectored(
        &mut self,
        f: &mut dyn FileHandle,
        bufs: &mut WorkerBuffers,
    ) -> Result<(), PassError> {
        let cell = self.spec.cell;
        let rs = cell.record_size;
        let per_call = records_per_vector_call(&cell, self.spec.vector_records);
        let reading = self.spec.op.direction() == Direction::Read;
        let mut off = 0;
        while off < cell.file_size {
            if !self.check_flags(!reading)? {
                break;
            }
            let len = (rs * per_call).min(cell.file_size - off) as usize;
            let data = &mut bufs.data.as_mut_slice()[..len];
            // The fill and the vector are made before the clock starts.
            let n = if reading {
                let mut iov: Vec<IoSliceMut> =
                    data.chunks_mut(rs as usize).map(IoSliceMut::new).collect();
                let t0 = op_clock::now();
                let n = f.preadv(&mut iov, off)?;
                self.latency.record_ns(t0.ns_since());
                n
            } else {
                if let Some(seed) = self.spec.verify_seed {
                    pattern::fill(data, seed, off);
                }
                let iov: Vec<IoSlice> = data.chunks(rs as usize).map(IoSlice::new).collect();
                let t0 = op_clock::now();
                let n = f.pwritev(&iov, off)?;
                self.latency.record_ns(t0.ns_since());
                n
            };
            if n < len {
                return Err(if reading {
                    short_read(off + n as u64, cell.file_size)
                } else {
                    io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!("short pwritev at offset {off}"),
                    )
                }
                .into());
            }
            if reading && self.verify(data, off) {
                return Ok(());
            }
            self.bytes += len as u64;
            off += len as u64;
        }
        Ok(())
    }

    /// Checks read data; true (and the pass stops) at the first wrong byte.
    fn verify(&mut self, buf: &[u8], off: u64) -> bool {
        if let Some(seed) = self.spec.verify_seed {
            if let Some(bad) = pattern::check(buf, seed, off) {
                self.mismatch = Some(bad);
                return true;
            }
        }
        false
    }

    fn finish(&mut self, coord: &Coordination) {
        self.finished = Some((Instant::now(), CpuSnapshot::thread_now()));
        coord.first_done.store(true, Ordering::Relaxed);
    }

    fn outcome(self) -> PassOutcome {
        let (finished, cpu_end) = self
            .finished
            .unwrap_or_else(|| (Instant::now(), CpuSnapshot::thread_now()));
        let (bytes, until, cpu_until, stonewalled) = match self.snapshot {
            // A writer went on uncounted; a reader stopped there, short of the file's end.
            Some((b, t, c)) if b < self.bytes || b < self.spec.cell.file_size => (b, t, c, true),
            _ => (self.bytes, finished, cpu_end, false),
        };
        PassOutcome {
            bytes,
            seconds: until.duration_since(self.started).as_secs_f64(),
            started: self.started,
            finished,
            stonewalled,
            latency: self.latency,
            cpu: cpu_until.since(&self.cpu_start),
            mismatch: self.mismatch,
            passes: 1,
        }
    }
}

fn short_read(at: u64, expected: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("file ended at byte {at}, expected {expected} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::IoQueue;

    /// A file in memory whose queue answers last-in first-out, so completions come back
    /// out of order, and which counts the most requests it ever held.
    struct MemFile {
        data: Vec<u8>,
        most_in_flight: usize,
    }

    struct MemQueue<'a> {
        file: &'a mut MemFile,
        slots: Vec<Vec<u8>>,
        pending: Vec<QueuedIo>,
    }

    impl IoQueue for MemQueue<'_> {
        fn depth(&self) -> usize {
            self.slots.len()
        }
        fn buf(&mut self, slot: usize) -> &mut [u8] {
            &mut self.slots[slot]
        }
        fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
            assert!(
                self.pending.iter().all(|p| p.slot != io.slot),
                "slot in use"
            );
            self.pending.push(io);
            self.file.most_in_flight = self.file.most_in_flight.max(self.pending.len());
            Ok(())
        }
        fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
            let io = self.pending.pop().expect("a request in flight");
            let (at, n) = (io.offset as usize, io.len);
            if self.file.data.len() < at + n {
                self.file.data.resize(at + n, 0);
            }
            if io.write {
                self.file.data[at..at + n].copy_from_slice(&self.slots[io.slot][..n]);
            } else {
                self.slots[io.slot][..n].copy_from_slice(&self.file.data[at..at + n]);
            }
            Ok((io.slot, Ok(n)))
        }
    }

    impl FileHandle for MemFile {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            unreachable!()
        }
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            unreachable!()
        }
        fn seek(&mut self, _: u64) -> io::Result<()> {
            unreachable!()
        }
        fn pread(&mut self, _: &mut [u8], _: u64) -> io::Result<usize> {
            unreachable!()
        }
        fn pwrite(&mut self, _: &[u8], _: u64) -> io::Result<usize> {
            unreachable!()
        }
        fn fsync(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn set_len(&mut self, _: u64) -> io::Result<()> {
            Ok(())
        }
        fn queue(&mut self, depth: usize, slot_len: usize) -> io::Result<Box<dyn IoQueue + '_>> {
            Ok(Box::new(MemQueue {
                file: self,
                slots: vec![vec![0; slot_len]; depth],
                pending: Vec::new(),
            }))
        }
        fn close(self: Box<Self>) -> io::Result<()> {
            Ok(())
        }
    }

    fn spec(op: Op, iodepth: usize) -> PassSpec {
        PassSpec {
            op,
            cell: Cell {
                file_size: 100 << 10,
                record_size: 4 << 10,
            },
            timing: Timing::default(),
            direct: false,
            stride: 17,
            order_seed: 7,
            verify_seed: Some(42),
            vector_records: 4,
            mix_reader: None,
            iodepth,
        }
    }

    fn queued_pass(f: &mut MemFile, spec: &PassSpec) -> PassOutcome {
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let coord = Coordination {
            start: None,
            first_done: &stop,
            stonewall: false,
            cancel: &cancel,
        };
        let mut pass = Pass::start(spec, &coord);
        pass.run_queued(f).expect("queued pass");
        pass.finish(&coord);
        pass.outcome()
    }

    #[test]
    fn a_queued_pass_moves_every_record_once_with_depth_requests_in_flight() {
        let mut f = MemFile {
            data: Vec::new(),
            most_in_flight: 0,
        };
        let w = queued_pass(&mut f, &spec(Op::RandomWrite, 8));
        assert_eq!((w.bytes, w.latency.summary().lat_count), (100 << 10, 25));
        assert_eq!(f.most_in_flight, 8);
        // Answered out of order, the data still lands where it belongs: every read
        // order verifies against the pattern, vectored calls too.
        for op in [
            Op::Read,
            Op::RandomRead,
            Op::BackwardRead,
            Op::StrideRead,
            Op::Preadv,
        ] {
            let r = queued_pass(&mut f, &spec(op, 3));
            assert_eq!((r.bytes, r.mismatch), (100 << 10, None), "{op}");
        }
        let v = queued_pass(&mut f, &spec(Op::Preadv, 3));
        assert_eq!(v.latency.summary().lat_count, 7, "25 records in calls of 4");
        f.data[50_000] ^= 1;
        let bad = queued_pass(&mut f, &spec(Op::RandomRead, 4));
        assert_eq!(bad.mismatch, Some(50_000));
    }

    #[test]
    fn iodepth_applies_where_the_order_allows_it() {
        let plain = Timing::default();
        let mapped = Timing {
            mmap: true,
            ..Timing::default()
        };
        assert_eq!(iodepth_for(Op::RandomRead, &plain, 16), 16);
        assert_eq!(iodepth_for(Op::RecordRewrite, &plain, 16), 1);
        assert_eq!(iodepth_for(Op::Fread, &plain, 16), 1);
        assert_eq!(iodepth_for(Op::Read, &mapped, 16), 1);
        assert_eq!(iodepth_for(Op::Pread, &mapped, 16), 16);
    }
}
