//! A stdio-like buffer in front of a backend file, for IOzone's fwrite/fread tests. Like
//! glibc, a request at least as large as the buffer bypasses it when the buffer is empty.
//! Not a general-purpose BufReader/BufWriter: it speaks the backend trait.

use crate::backend::{read_full, write_all, FileHandle};
use std::io;

pub struct Buffered<'f> {
    file: &'f mut dyn FileHandle,
    buf: Vec<u8>,
    /// Write mode: bytes waiting in `buf`. Read mode: `buf[pos..filled]` is unread data.
    pos: usize,
    filled: usize,
}

impl<'f> Buffered<'f> {
    pub fn new(file: &'f mut dyn FileHandle, capacity: usize) -> Self {
        Buffered {
            file,
            buf: vec![0; capacity.max(1)],
            pos: 0,
            filled: 0,
        }
    }

    /// fwrite: buffers `data`, writing the buffer out whenever it fills.
    pub fn write(&mut self, mut data: &[u8]) -> io::Result<()> {
        let cap = self.buf.len();
        if self.filled == 0 && data.len() >= cap {
            return write_all(self.file, data);
        }
        while !data.is_empty() {
            let n = (cap - self.filled).min(data.len());
            self.buf[self.filled..self.filled + n].copy_from_slice(&data[..n]);
            self.filled += n;
            data = &data[n..];
            if self.filled == cap {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// fflush: writes out what the buffer holds.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.filled > 0 {
            write_all(self.file, &self.buf[..self.filled])?;
            self.filled = 0;
        }
        Ok(())
    }

    /// fread: fills `out` from the buffer, refilling it from the file; returns bytes read.
    pub fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < out.len() {
            if self.pos == self.filled {
                if out.len() - done >= self.buf.len() {
                    let n = read_full(self.file, &mut out[done..])?;
                    return Ok(done + n);
                }
                self.filled = read_full(self.file, &mut self.buf)?;
                self.pos = 0;
                if self.filled == 0 {
                    break;
                }
            }
            let n = (self.filled - self.pos).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            done += n;
        }
        Ok(done)
    }

    pub fn file(&mut self) -> &mut dyn FileHandle {
        self.file
    }
}
