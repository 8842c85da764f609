//! One lane of a load worker: a thread with one request in flight at a time, its own
//! files, and what each request of a mix does to them, through the backend trait. A worker
//! is `--iodepth` lanes on one schedule (depth 1: a worker is a lane). The lane makes its
//! files and opens them before the first load point (not timed) and keeps them open for
//! reads and writes, as a share's clients keep their working files open; opening is
//! measured by `open-close`. Not: when requests are issued (`schedule`).

use crate::backend::{pread_full, pwrite_all, Backend, FileHandle, OpenOptions};
use crate::buffer::AlignedBuf;
use crate::mix::{pick, Mix, MixOp, OpKind, Weighted, SETUP_CHUNK};
use std::collections::VecDeque;
use std::io;

/// A file of the lane's set, open for reads and writes (`None` once closed).
struct LoadFile {
    path: String,
    size: u64,
    handle: Option<Box<dyn FileHandle>>,
}

/// Where a sequential reader or writer is: file and offset.
#[derive(Default, Clone, Copy)]
struct Cursor {
    file: usize,
    offset: u64,
}

/// One lane's files, cursors and random draws.
pub struct Lane {
    dir: String,
    files: Vec<LoadFile>,
    /// Files `create` made, oldest first (what `delete` removes).
    created: VecDeque<String>,
    made: u64,
    reader: Cursor,
    writer: Cursor,
    buf: AlignedBuf,
    rng: fastrand::Rng,
    /// Every write stable before it returns (O_SYNC, `--sync`).
    sync: bool,
}

/// What one request did: the operation (a `delete` with nothing to delete is a `create`)
/// and the bytes it moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub kind: OpKind,
    pub bytes: u64,
}

fn draw(list: &[Weighted], rng: &mut fastrand::Rng) -> u64 {
    let total: u64 = list.iter().map(|w| u64::from(w.weight)).sum();
    list[pick(list.iter().map(|w| w.weight), rng.u64(0..total))].size
}

impl Lane {
    /// Makes directory `dir` and the mix's files in it (sizes drawn with `seed`); `sync`:
    /// the requests' writes are O_SYNC.
    pub fn make(b: &dyn Backend, dir: &str, mix: &Mix, seed: u64, sync: bool) -> io::Result<Lane> {
        let mut w = Lane {
            dir: dir.to_string(),
            files: Vec::new(),
            created: VecDeque::new(),
            made: 0,
            reader: Cursor::default(),
            writer: Cursor::default(),
            buf: AlignedBuf::filled(mix.lane_buffer() as usize),
            rng: fastrand::Rng::with_seed(seed),
            sync,
        };
        b.mkdir(dir)?;
        for i in 0..mix.files {
            let size = draw(&mix.file_sizes, &mut w.rng);
            let path = format!("{dir}/f{i}");
            // The set's first writing is setup, never O_SYNC.
            w.write_new(b, &path, size, SETUP_CHUNK, false)?;
            w.files.push(LoadFile {
                path,
                size,
                handle: None,
            });
        }
        let how = OpenOptions {
            sync,
            ..OpenOptions::read_write()
        };
        for f in &mut w.files {
            f.handle = Some(b.open(&f.path, how)?);
        }
        Ok(w)
    }

    /// Makes `path` anew, `size` bytes written `chunk` at a time (`sync`: O_SYNC).
    fn write_new(
        &mut self,
        b: &dyn Backend,
        path: &str,
        size: u64,
        chunk: u64,
        sync: bool,
    ) -> io::Result<()> {
        let how = OpenOptions {
            sync,
            ..OpenOptions::create_new()
        };
        let mut f = b.open(path, how)?;
        let mut at = 0;
        while at < size {
            let n = (size - at).min(chunk) as usize;
            pwrite_all(f.as_mut(), &self.buf.as_slice()[..n], at)?;
            at += n as u64;
        }
        f.close()
    }

    /// Picks the next request's operation by the mix's weights.
    pub fn pick<'m>(&mut self, mix: &'m Mix) -> &'m MixOp {
        let total: u64 = mix.ops.iter().map(|o| u64::from(o.weight)).sum();
        &mix.ops[pick(mix.ops.iter().map(|o| o.weight), self.rng.u64(0..total))]
    }

    /// A uniform draw in 0..1 (its worker's phase in the schedule).
    pub fn fraction(&mut self) -> f64 {
        self.rng.f64()
    }

    /// Does one request of `op`.
    pub fn issue(&mut self, b: &dyn Backend, mix: &Mix, op: &MixOp) -> io::Result<Done> {
        let transfer = if op.kind.transfers() {
            draw(mix.transfers_of(op), &mut self.rng)
        } else {
            0
        };
        let done = |kind, bytes| Ok(Done { kind, bytes });
        match op.kind {
            OpKind::ReadSeq | OpKind::WriteSeq => {
                let write = op.kind == OpKind::WriteSeq;
                let mut c = if write { self.writer } else { self.reader };
                if c.offset >= self.files[c.file].size {
                    c = Cursor {
                        file: self.rng.usize(0..self.files.len()),
                        offset: 0,
                    };
                }
                let n = transfer.min(self.files[c.file].size - c.offset);
                self.transfer(c.file, c.offset, n, write)?;
                c.offset += n;
                if write {
                    self.writer = c;
                } else {
                    self.reader = c;
                }
                done(op.kind, n)
            }
            OpKind::ReadRandom | OpKind::WriteRandom => {
                let file = self.rng.usize(0..self.files.len());
                let size = self.files[file].size;
                let n = transfer.min(size);
                let offset = self.rng.u64(0..=(size - n) / n) * n;
                self.transfer(file, offset, n, op.kind == OpKind::WriteRandom)?;
                done(op.kind, n)
            }
            OpKind::Create => self.create(b, mix, transfer),
            OpKind::Delete => match self.created.pop_front() {
                Some(path) => {
                    b.unlink(&path)?;
                    done(OpKind::Delete, 0)
                }
                None if mix.transfer_sizes.is_empty() => self.create(b, mix, SETUP_CHUNK),
                None => {
                    let t = draw(&mix.transfer_sizes, &mut self.rng);
                    self.create(b, mix, t)
                }
            },
            OpKind::Stat => {
                let file = self.rng.usize(0..self.files.len());
                b.stat(&self.files[file].path)?;
                done(OpKind::Stat, 0)
            }
            OpKind::Readdir => {
                b.readdir(&self.dir)?;
                done(OpKind::Readdir, 0)
            }
            OpKind::OpenClose => {
                let file = self.rng.usize(0..self.files.len());
                b.open(&self.files[file].path, OpenOptions::read_only())?
                    .close()?;
                done(OpKind::OpenClose, 0)
            }
        }
    }

    fn create(&mut self, b: &dyn Backend, mix: &Mix, transfer: u64) -> io::Result<Done> {
        let size = draw(&mix.file_sizes, &mut self.rng);
        // Space stays bounded: once creates outnumber the set, the oldest is made again.
        let path = match self.created.len() >= self.files.len() {
            true => self.created.pop_front().expect("the set is not empty"),
            false => {
                self.made += 1;
                format!("{}/c{}", self.dir, self.made - 1)
            }
        };
        self.write_new(b, &path, size, transfer, self.sync)?;
        self.created.push_back(path);
        Ok(Done {
            kind: OpKind::Create,
            bytes: size,
        })
    }

    fn transfer(&mut self, file: usize, offset: u64, n: u64, write: bool) -> io::Result<()> {
        let f = &mut self.files[file];
        let Some(h) = f.handle.as_mut() else {
            return Err(io::Error::other(format!("{}: already closed", f.path)));
        };
        let h = h.as_mut();
        let buf = &mut self.buf.as_mut_slice()[..n as usize];
        if write {
            pwrite_all(h, buf, offset)
        } else {
            let got = pread_full(h, buf, offset)?;
            if got as u64 != n {
                return Err(io::Error::other(format!(
                    "{}: read {got} of {n} bytes at {offset}: the file is shorter than the load workload made it",
                    f.path
                )));
            }
            Ok(())
        }
    }

    /// Closes the open files (reporting what a close reports).
    pub fn close(&mut self) -> io::Result<()> {
        for f in &mut self.files {
            if let Some(h) = f.handle.take() {
                h.close()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::LogFs;

    fn mix(ops: &str) -> Mix {
        serde_json::from_str(&format!(
            r#"{{"name": "t", "about": "t", "files": 3,
            "file_sizes": [{{"size": "64k", "weight": 1}}],
            "transfer_sizes": [{{"size": "16k", "weight": 1}}], "op": [{ops}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn sequential_reads_walk_a_file_then_move_on() {
        let fs = LogFs::default();
        let m = mix(r#"{"kind": "read-seq", "weight": 1}"#);
        let mut w = Lane::make(&fs, "d", &m, 1, false).unwrap();
        fs.take();
        let bytes: u64 = (0..8)
            .map(|_| w.issue(&fs, &m, &m.ops[0]).unwrap().bytes)
            .sum();
        assert_eq!(bytes, 8 * 16384);
        // The files were opened before the first request, and stay open.
        let opens = fs.take().iter().filter(|l| l.starts_with("open")).count();
        assert_eq!(opens, 0);
        w.close().unwrap();
    }

    #[test]
    fn delete_removes_what_create_made_and_creates_when_there_is_none() {
        let fs = LogFs::default();
        let m = mix(r#"{"kind": "create", "weight": 1}, {"kind": "delete", "weight": 1}"#);
        let mut w = Lane::make(&fs, "d", &m, 1, false).unwrap();
        let (create, delete) = (&m.ops[0], &m.ops[1]);
        assert_eq!(w.issue(&fs, &m, delete).unwrap().kind, OpKind::Create);
        assert_eq!(w.issue(&fs, &m, create).unwrap().bytes, 65536);
        fs.take();
        assert_eq!(w.issue(&fs, &m, delete).unwrap().kind, OpKind::Delete);
        assert_eq!(w.issue(&fs, &m, delete).unwrap().kind, OpKind::Delete);
        assert!(fs.take().iter().filter(|l| l.starts_with("unlink")).count() == 2);
    }
}
