//! Standard output that remembers its first failed write (a full disk, a closed pipe), so
//! a command ends with an error instead of exit 0 after losing what it printed; and text
//! from inputs made safe for a terminal. Not: stderr, whose failures nobody could be told of.

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

/// `text` with every control character but newline and tab shown as a `\u{..}` escape: a
/// target name or label read from an input file cannot move the cursor, retitle the
/// terminal or hide what follows (CSI and OSC sequences start with ESC).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        assert_eq!(printable("plain\tname\n"), "plain\tname\n");
        assert_eq!(
            printable("a\u{1b}]0;owned\u{7}b\u{9b}2J"),
            "a\\u{1b}]0;owned\\u{7}b\\u{9b}2J"
        );
    }
}
