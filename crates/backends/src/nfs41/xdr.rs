//! XDR (RFC 4506) as the wire client (`wire.rs`) needs it: big-endian 32- and 64-bit
//! words, opaques padded to four bytes. An encoder appending to a buffer and a decoder
//! reading a received reply, where every read past the end is an error, never a panic.
//! Not: a general XDR library (no unions or arrays of its own; callers spell them out).

use std::io;

/// Appends XDR items to a buffer.
pub(super) struct Enc<'b>(pub(super) &'b mut Vec<u8>);

impl Enc<'_> {
    pub(super) fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub(super) fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// Fixed-length opaque (no length word), padded.
    pub(super) fn fixed(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self.pad(b.len())
    }

    /// Variable-length opaque or string: length, bytes, padding.
    pub(super) fn opaque(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.fixed(b)
    }

    fn pad(&mut self, len: usize) -> &mut Self {
        self.0.extend_from_slice(&[0; 3][..pad_of(len)]);
        self
    }
}

/// The padding after `len` bytes of opaque data.
pub(super) fn pad_of(len: usize) -> usize {
    (4 - len % 4) % 4
}

/// Reads XDR items from a received reply.
pub(super) struct Dec<'b> {
    buf: &'b [u8],
    at: usize,
}

fn short() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "reply ends early (malformed XDR)",
    )
}

impl<'b> Dec<'b> {
    pub(super) fn new(buf: &'b [u8]) -> Self {
        Dec { buf, at: 0 }
    }

    /// Bytes read so far.
    pub(super) fn pos(&self) -> usize {
        self.at
    }

    fn take(&mut self, n: usize) -> io::Result<&'b [u8]> {
        let end = self.at.checked_add(n).ok_or_else(short)?;
        let b = self.buf.get(self.at..end).ok_or_else(short)?;
        self.at = end;
        Ok(b)
    }

    pub(super) fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(super) fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from(self.u32()?) << 32 | u64::from(self.u32()?))
    }

    pub(super) fn bool(&mut self) -> io::Result<bool> {
        Ok(self.u32()? != 0)
    }

    /// Fixed-length opaque, padded.
    pub(super) fn fixed(&mut self, n: usize) -> io::Result<&'b [u8]> {
        let b = self.take(n)?;
        self.take(pad_of(n))?;
        Ok(b)
    }

    /// Variable-length opaque or string.
    pub(super) fn opaque(&mut self) -> io::Result<&'b [u8]> {
        let n = self.u32()? as usize;
        self.fixed(n)
    }

    /// Skips `n` 32-bit words.
    pub(super) fn skip_words(&mut self, n: usize) -> io::Result<()> {
        self.take(n.checked_mul(4).ok_or_else(short)?).map(|_| ())
    }

    /// Skips a bitmap4 (a counted array of words).
    pub(super) fn skip_bitmap(&mut self) -> io::Result<()> {
        let n = self.u32()? as usize;
        self.skip_words(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opaques_are_padded_and_read_back() {
        let mut buf = Vec::new();
        Enc(&mut buf)
            .u32(7)
            .opaque(b"abcde")
            .u64(1 << 40 | 3)
            .fixed(&[9; 2]);
        assert_eq!(buf.len(), 4 + 4 + 8 + 8 + 4);
        let mut d = Dec::new(&buf);
        assert_eq!(d.u32().unwrap(), 7);
        assert_eq!(d.opaque().unwrap(), b"abcde");
        assert_eq!(d.u64().unwrap(), 1 << 40 | 3);
        assert_eq!(d.fixed(2).unwrap(), &[9, 9]);
        assert_eq!(d.pos(), buf.len());
    }

    #[test]
    fn reading_past_the_end_is_an_error() {
        let mut buf = Vec::new();
        Enc(&mut buf).u32(100);
        let mut d = Dec::new(&buf);
        assert_eq!(d.opaque().unwrap_err().kind(), io::ErrorKind::InvalidData);
        let mut d = Dec::new(&buf[..2]);
        assert!(d.u32().is_err());
        let mut d = Dec::new(&buf);
        assert!(d.skip_words(usize::MAX).is_err());
    }
}
