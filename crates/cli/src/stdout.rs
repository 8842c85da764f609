//! Standard output that remembers its first failed write (a full disk, a closed pipe), so
//! a command ends with an error instead of exit 0 after losing what it printed. Not: stderr,
//! whose failures nobody could be told of.

use std::io::{self, Write};
use std::sync::OnceLock;

static FAILED: OnceLock<String> = OnceLock::new();

/// Standard output, every write checked.
pub struct Stdout;

pub fn stdout() -> Stdout {
    Stdout
}

/// The first write to standard output that failed, if one did.
pub fn failure() -> Option<&'static str> {
    FAILED.get().map(String::as_str)
}

fn noted<T>(r: io::Result<T>) -> io::Result<T> {
    if let Err(e) = &r {
        let _ = FAILED.set(e.to_string());
    }
    r
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        noted(io::stdout().write(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        noted(io::stdout().flush())
    }
}
