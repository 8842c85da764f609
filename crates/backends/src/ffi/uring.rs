//! `--iodepth` on a directory: requests on one open file kept in flight through io_uring
//! (the `io-uring` crate's safe ring, whose only unsafe step is handing the kernel a
//! buffer). The queue owns its buffers, 4 KiB aligned so `--direct` works alongside, and
//! never frees one the kernel may still write: a slot is reused only after its completion,
//! and dropping the queue first waits for every request in flight.
//! A wait for a completion first watches the ring for a few microseconds, then sleeps in
//! the kernel ([`Spin`]).
//! Not: registered buffers or files, polling modes (SQPOLL, IOPOLL): plain submissions, as
//! fio's io_uring engine does by default.

use io_uring::{opcode, squeue, types, IoUring};
use sharebench_core::backend::{IoQueue, QueuedIo};
use sharebench_core::buffer::AlignedBuf;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::unix::io::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// Checks that the kernel gives this process a ring of `depth` entries; the error is one
/// line for the user.
pub fn probe(depth: u32) -> Result<(), String> {
    IoUring::new(depth.next_power_of_two())
        .map(drop)
        .map_err(|e| format!("the kernel refused io_uring ({e}); check sysctl kernel.io_uring_disabled, or run with --iodepth 1"))
}

/// A ring of `entries` for one thread, set up as fio's io_uring engine does where the
/// kernel allows (6.1 and later): completions are handled when this thread waits for them
/// (`DEFER_TASKRUN`, `SINGLE_ISSUER`), not by interrupting it as each one arrives, and the
/// ring's flags say when some are waiting to be handled (`TASKRUN_FLAG`, which [`Spin`]
/// watches); a plain ring on older kernels.
fn ring(entries: u32) -> io::Result<IoUring> {
    IoUring::builder()
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
}

/// How a queue waits for its next completion: by watching the ring for up to [`Spin::LIMIT`]
/// before it sleeps in the kernel (spin, then sleep). A sleeping thread must be woken by
/// the thread that completed the request, and on these virtual machines a wake-up costs
/// tens of microseconds: 4 KiB reads of tmpfs at depth 8, each done by an io_uring worker
/// thread in a few microseconds, ran at 0.6x fio's rate when every wait slept, and at
/// 1.6-4x with the watch (docs/methods/operations.md). Where requests take longer than
/// the watch (a disk), watching would only burn CPU, so each watch that sees nothing halves
/// how often the next waits watch (down to one in 64), and one that sees a completion
/// restores it. The CPU spent watching is the client's and is counted as such.
#[derive(Debug, Default)]
struct Spin {
    /// Consecutive watches that saw nothing (at most [`Spin::MAX_MISSES`]).
    misses: u32,
    /// Waits since the last watch.
    waits: u32,
}

impl Spin {
    const LIMIT: Duration = Duration::from_micros(20);
    const MAX_MISSES: u32 = 6;

    /// Whether this wait should watch first: every wait while watches see completions,
    /// one in 2^misses otherwise.
    fn should_watch(&mut self) -> bool {
        self.waits += 1;
        if self.waits >= 1 << self.misses {
            self.waits = 0;
            true
        } else {
            false
        }
    }

    fn saw(&mut self, completion: bool) {
        self.misses = if completion {
            0
        } else {
            (self.misses + 1).min(Self::MAX_MISSES)
        };
    }
}

/// Up to `depth` requests on one file in flight through one ring.
pub struct UringQueue<'f> {
    ring: IoUring,
    fd: RawFd,
    /// The file is borrowed for as long as the queue lives, so its descriptor stays open.
    _file: PhantomData<&'f mut File>,
    slots: Vec<AlignedBuf>,
    /// Each slot's iovecs for a vectored request; like the buffers, alive until completion.
    iovecs: Vec<Vec<libc::iovec>>,
    in_flight: usize,
    ready: VecDeque<(usize, io::Result<usize>)>,
    spin: Spin,
}

// SAFETY: the iovecs' raw pointers point into `slots`, which the queue owns and which move
// with it; nothing in the queue is shared with another thread.
unsafe impl Send for UringQueue<'_> {}

impl<'f> UringQueue<'f> {
    pub fn new(file: &'f mut File, depth: usize, slot_len: usize) -> io::Result<Self> {
        let entries = u32::try_from(depth.max(1).next_power_of_two())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "queue too deep"))?;
        Ok(UringQueue {
            ring: ring(entries)?,
            fd: file.as_raw_fd(),
            _file: PhantomData,
            slots: (0..depth).map(|_| AlignedBuf::filled(slot_len)).collect(),
            iovecs: vec![Vec::new(); depth],
            in_flight: 0,
            ready: VecDeque::new(),
            spin: Spin::default(),
        })
    }

    /// Submits what is queued and waits for at least `want` completions, retrying when a
    /// signal interrupts the wait; moves every completion that arrived to `ready`.
    fn reap(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        for cqe in self.ring.completion() {
            self.in_flight -= 1;
            let res = cqe.result();
            let out = if res < 0 {
                Err(io::Error::from_raw_os_error(-res))
            } else {
                Ok(res as usize)
            };
            self.ready.push_back((cqe.user_data() as usize, out));
        }
        Ok(())
    }

    /// Waits until at least one completion has arrived: watching the ring first when
    /// [`Spin`] says so, then asleep in the kernel.
    fn wait_one(&mut self) -> io::Result<()> {
        if self.spin.should_watch() {
            let start = Instant::now();
            while start.elapsed() < Spin::LIMIT {
                // With DEFER_TASKRUN a completion waits in the kernel (the flag) until an
                // enter with GETEVENTS collects it (io-uring 0.7.16's `submit` adds that
                // flag when the task-run flag is up); on a plain ring it is already in
                // the queue. A flag that is up with nothing to collect is no completion.
                if self.ring.submission().taskrun() || !self.ring.completion().is_empty() {
                    self.reap(0)?;
                    if !self.ready.is_empty() {
                        self.spin.saw(true);
                        return Ok(());
                    }
                }
                std::hint::spin_loop();
            }
            self.spin.saw(false);
        }
        self.reap(1)
    }
}

impl IoQueue for UringQueue<'_> {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        self.slots[slot].as_mut_slice()
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        let fd = types::Fd(self.fd);
        let buf = &mut self.slots[io.slot].as_mut_slice()[..io.len];
        let entry: squeue::Entry = if io.piece < io.len {
            let iov = &mut self.iovecs[io.slot];
            iov.clear();
            iov.extend(buf.chunks_mut(io.piece.max(1)).map(|c| libc::iovec {
                iov_base: c.as_mut_ptr().cast(),
                iov_len: c.len(),
            }));
            if io.write {
                opcode::Writev::new(fd, iov.as_ptr(), iov.len() as u32)
                    .offset(io.offset)
                    .build()
            } else {
                opcode::Readv::new(fd, iov.as_ptr(), iov.len() as u32)
                    .offset(io.offset)
                    .build()
            }
        } else if io.write {
            opcode::Write::new(fd, buf.as_ptr(), io.len as u32)
                .offset(io.offset)
                .build()
        } else {
            opcode::Read::new(fd, buf.as_mut_ptr(), io.len as u32)
                .offset(io.offset)
                .build()
        };
        let entry = entry.user_data(io.slot as u64);
        if self.ring.submission().is_full() {
            self.ring.submit()?;
        }
        // SAFETY: the entry points at this slot's buffer (and iovecs), owned by the queue.
        // The caller submits only free slots, a slot is free again only once its
        // completion has been handed out, and Drop waits for every request in flight
        // before the buffers go (or leaks them): the memory outlives the request.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.in_flight += 1;
        Ok(())
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        // Requests queued since the last wait go to the kernel now, before the caller
        // handles completions already in hand, so the device is kept `depth` deep (fio
        // submits each request as it is queued, too).
        if !self.ring.submission().is_empty() {
            self.reap(0)?;
        }
        loop {
            if let Some(done) = self.ready.pop_front() {
                return Ok(done);
            }
            if self.in_flight == 0 {
                return Err(io::Error::other("io_uring: no request in flight"));
            }
            self.wait_one()?;
        }
    }
}

impl Drop for UringQueue<'_> {
    fn drop(&mut self) {
        while self.in_flight > 0 {
            if self.reap(self.in_flight).is_err() {
                // The kernel may still write into the buffers: they must never be freed.
                std::mem::forget(std::mem::take(&mut self.slots));
                std::mem::forget(std::mem::take(&mut self.iovecs));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_and_writes_land_where_asked_whatever_the_completion_order() {
        if probe(8).is_err() {
            eprintln!("io_uring refused here: nothing to test");
            return;
        }
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![0u8; 64 << 10]).unwrap();
        let mut q = UringQueue::new(&mut f, 8, 8192).unwrap();
        for slot in 0..8 {
            q.buf(slot).fill(slot as u8 + 1);
            let piece = if slot % 2 == 0 { 8192 } else { 4096 };
            q.submit(QueuedIo {
                slot,
                write: true,
                offset: (7 - slot as u64) * 8192,
                len: 8192,
                piece,
            })
            .unwrap();
        }
        let mut done: Vec<usize> = (0..8).map(|_| q.complete().unwrap().0).collect();
        done.sort();
        assert_eq!(done, (0..8).collect::<Vec<_>>());
        for slot in 0..8 {
            q.submit(QueuedIo {
                slot,
                write: false,
                offset: slot as u64 * 8192,
                len: 8192,
                piece: 8192,
            })
            .unwrap();
        }
        for _ in 0..8 {
            let (slot, n) = q.complete().unwrap();
            assert_eq!(n.unwrap(), 8192);
            assert!(
                q.buf(slot).iter().all(|&b| b == 8 - slot as u8),
                "slot {slot}"
            );
        }
        assert!(q.complete().is_err(), "nothing left in flight");
    }

    #[test]
    fn watches_back_off_while_they_see_nothing_and_return_when_they_do() {
        let mut spin = Spin::default();
        assert!(spin.should_watch(), "the first wait watches");
        for _ in 0..10 {
            spin.saw(false);
        }
        let watched = (0..128).filter(|_| spin.should_watch()).count();
        assert_eq!(watched, 2, "one wait in 64 after many empty watches");
        spin.saw(true);
        assert!(
            (0..4).all(|_| spin.should_watch()),
            "every wait watches again"
        );
    }
}
