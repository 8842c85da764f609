//! The deterministic data pattern behind `--verify`: every 8-byte word of a file is a hash
//! of (file seed, word offset), so any read at any offset can be checked on its own and a
//! stale, shifted or foreign block is caught. Not a checksum of whole files.

/// SplitMix64 finaliser: a fast, well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of one file's pattern, from the run's seed and the file's identity.
pub fn file_seed(run_seed: u64, file_name: &str) -> u64 {
    file_name
        .bytes()
        .fold(mix(run_seed), |h, b| mix(h ^ u64::from(b)))
}

fn word(seed: u64, word_index: u64) -> [u8; 8] {
    mix(seed ^ word_index.wrapping_mul(0xD6E8_FEB8_6659_FD93)).to_le_bytes()
}

/// Fills `buf` with the pattern of the bytes at `offset..offset + buf.len()`.
pub fn fill(buf: &mut [u8], seed: u64, offset: u64) {
    let mut pos = 0usize;
    while pos < buf.len() {
        let abs = offset + pos as u64;
        let w = word(seed, abs / 8);
        let from = (abs % 8) as usize;
        let n = (8 - from).min(buf.len() - pos);
        buf[pos..pos + n].copy_from_slice(&w[from..from + n]);
        pos += n;
    }
}

/// Checks `buf` against the pattern at `offset`; returns the absolute offset of the first
/// byte that differs.
pub fn check(buf: &[u8], seed: u64, offset: u64) -> Option<u64> {
    let mut pos = 0usize;
    while pos < buf.len() {
        let abs = offset + pos as u64;
        let w = word(seed, abs / 8);
        let from = (abs % 8) as usize;
        let n = (8 - from).min(buf.len() - pos);
        if buf[pos..pos + n] != w[from..from + n] {
            let i = (0..n).find(|&i| buf[pos + i] != w[from + i]).unwrap_or(0);
            return Some(abs + i as u64);
        }
        pos += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_then_check_at_any_alignment() {
        let seed = file_seed(42, "f0");
        let mut whole = vec![0u8; 100];
        fill(&mut whole, seed, 13);
        assert_eq!(check(&whole, seed, 13), None);
        // A sub-range filled on its own matches the same bytes of the whole.
        let mut part = vec![0u8; 7];
        fill(&mut part, seed, 20);
        assert_eq!(&part[..], &whole[7..14]);
    }

    #[test]
    fn finds_the_first_wrong_byte() {
        let seed = file_seed(1, "f");
        let mut buf = vec![0u8; 4096];
        fill(&mut buf, seed, 8192);
        buf[1000] ^= 1;
        assert_eq!(check(&buf, seed, 8192), Some(8192 + 1000));
        // Data of another offset (a shifted block) is caught.
        let mut shifted = vec![0u8; 4096];
        fill(&mut shifted, seed, 4096);
        assert_eq!(check(&shifted, seed, 8192), Some(8192));
        // Zeros (a hole, or the null target) are caught.
        assert!(check(&[0u8; 64], seed, 0).is_some());
    }

    #[test]
    fn seeds_differ_per_file_and_run() {
        assert_ne!(file_seed(1, "a"), file_seed(1, "b"));
        assert_ne!(file_seed(1, "a"), file_seed(2, "a"));
    }
}
