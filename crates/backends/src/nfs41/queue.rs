//! `--iodepth` over NFSv4.1: READs and WRITEs on one open file kept in flight together on
//! the target's session. nfs-rs is asynchronous and its session has many slots, so a
//! queue is a set of futures (each owning a handle on the client), polled together while
//! the caller waits for the next completion: a request goes on the wire the first time the
//! queue is polled after it was submitted. A request longer than the negotiated rsize or
//! wsize is sent as consecutive chunks inside its future.
//! Not: ordering (replies complete in any order) or a cache.

use super::{io_error, Client, Nfs41File, CALL_TIMEOUT};
use bytes::Bytes;
use nfs_rs::WriteOutcome;
use sharebench_core::backend::{IoQueue, QueuedIo};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a finished request brings back.
enum Done {
    Read(Vec<u8>),
    Wrote(usize, Vec<WriteOutcome>),
}

type Pending = Pin<Box<dyn Future<Output = nfs_rs::Result<Done>> + Send>>;

/// Up to `depth` requests on one file in flight on the session.
pub(super) struct Nfs41Queue<'f> {
    file: &'f mut Nfs41File,
    slots: Vec<Vec<u8>>,
    flight: crate::inflight::Flight<Pending>,
}

impl<'f> Nfs41Queue<'f> {
    pub(super) fn new(file: &'f mut Nfs41File, depth: usize, slot_len: usize) -> Self {
        Nfs41Queue {
            file,
            slots: vec![vec![0xA5; slot_len]; depth],
            flight: (0..depth).map(|_| None).collect(),
        }
    }
}

/// Reads `len` bytes at `offset` in READs of at most `max`; stops early at end of file.
async fn read_chunks(
    c: Arc<Client>,
    fh: Bytes,
    offset: u64,
    len: usize,
    max: usize,
) -> nfs_rs::Result<Done> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let n = (len - out.len()).min(max);
        let got = c
            .mount
            .read(fh.clone(), offset + out.len() as u64, n as u32)
            .await?;
        let short = got.len() < n;
        out.extend_from_slice(&got[..got.len().min(n)]);
        if short {
            break;
        }
    }
    Ok(Done::Read(out))
}

/// Writes `data` at `offset` in WRITEs of at most `max`.
async fn write_chunks(
    c: Arc<Client>,
    fh: Bytes,
    offset: u64,
    data: Bytes,
    max: usize,
) -> nfs_rs::Result<Done> {
    let (mut done, mut acks) = (0, Vec::new());
    while done < data.len() {
        let n = (data.len() - done).min(max);
        let w = c
            .mount
            .write(fh.clone(), offset + done as u64, data.slice(done..done + n))
            .await?;
        let wrote = (w.count as usize).min(n);
        acks.push(w);
        done += wrote;
        if wrote < n {
            break;
        }
    }
    Ok(Done::Wrote(done, acks))
}

impl IoQueue for Nfs41Queue<'_> {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buf(&mut self, slot: usize) -> &mut [u8] {
        &mut self.slots[slot]
    }

    fn submit(&mut self, io: QueuedIo) -> io::Result<()> {
        let (c, fh) = (self.file.client.clone(), self.file.fh.clone());
        let fut: Pending = if io.write {
            let data = Bytes::copy_from_slice(&self.slots[io.slot][..io.len]);
            Box::pin(write_chunks(c, fh, io.offset, data, self.file.write_max))
        } else {
            Box::pin(read_chunks(c, fh, io.offset, io.len, self.file.read_max))
        };
        self.flight[io.slot] = Some((io.write, fut));
        Ok(())
    }

    fn complete(&mut self) -> io::Result<(usize, io::Result<usize>)> {
        if self.flight.iter().all(Option::is_none) {
            return Err(io::Error::other(format!(
                "{}: no request in flight",
                self.file.client.label
            )));
        }
        let client = self.file.client.clone();
        let flight = &mut self.flight;
        client.busy.fetch_add(1, Ordering::SeqCst);
        let next = crate::inflight::wait_next(&client.rt, flight, CALL_TIMEOUT, client.label);
        client
            .last_ms
            .store(client.born.elapsed().as_millis() as u64, Ordering::SeqCst);
        client.busy.fetch_sub(1, Ordering::SeqCst);
        let (slot, write, out) = next?;
        let op = if write { "write" } else { "read" };
        let res = match out {
            Err(e) => Err(io_error(client.label, op, &self.file.path, e)),
            Ok(Done::Read(data)) => {
                self.slots[slot][..data.len()].copy_from_slice(&data);
                Ok(data.len())
            }
            Ok(Done::Wrote(n, acks)) => {
                acks.into_iter().for_each(|w| self.file.remember(w));
                if self.file.sync {
                    self.file.commit().map(|_| n)
                } else {
                    Ok(n)
                }
            }
        };
        Ok((slot, res))
    }
}

impl Drop for Nfs41Queue<'_> {
    /// Requests still in flight are waited for (each bounded by the call timeout), so
    /// the file's state is settled before it is used or closed.
    fn drop(&mut self) {
        while self.flight.iter().any(Option::is_some) {
            if self.complete().is_err() {
                break;
            }
        }
    }
}
