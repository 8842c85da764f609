//! Record buffers aligned to 4 KiB, as O_DIRECT needs, without unsafe code: a Vec with
//! slack, used from its first aligned byte.

pub const ALIGN: usize = 4096;

pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes whose first byte is 4 KiB aligned.
    pub fn new(len: usize) -> Self {
        let raw = vec![0u8; len + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN);
        AlignedBuf { raw, start, len }
    }

    /// A buffer filled with a fixed non-zero pattern, so writes are not of zero pages.
    pub fn filled(len: usize) -> Self {
        let mut b = Self::new(len);
        for (i, x) in b.as_mut_slice().iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(31).wrapping_add(0xA5);
        }
        b
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_aligned_and_sized() {
        for len in [0usize, 1, 4096, 1 << 20] {
            let b = AlignedBuf::new(len);
            assert_eq!(b.as_slice().len(), len);
            assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        }
        assert!(AlignedBuf::filled(64).as_slice().iter().any(|&x| x != 0));
    }
}
