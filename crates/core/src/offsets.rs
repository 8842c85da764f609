//! The order in which an operation visits the records of a file, as record indices.
//! Random order is a seeded permutation computed on the fly (a bijective bit mixer with
//! cycle walking): every record exactly once, O(1) memory even for 2^20 records.

use crate::op::Order;

/// Yields record indices `0..records` in the given order.
#[derive(Debug, Clone)]
pub struct RecordOrder {
    order: Order,
    records: u64,
    stride: u64,
    seed: u64,
    /// How many indices were yielded so far.
    step: u64,
    /// Stride order: the current start and position.
    start: u64,
    pos: u64,
    /// Random order: the next counter value to permute, and the mask of the power-of-two domain.
    counter: u64,
    mask: u64,
}

impl RecordOrder {
    /// `stride` is in records (IOzone's -j, default 17); `seed` selects the random permutation.
    pub fn new(order: Order, records: u64, stride: u64, seed: u64) -> Self {
        let bits = 64 - records.saturating_sub(1).leading_zeros();
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        RecordOrder {
            order,
            records,
            stride: stride.max(1),
            seed,
            step: 0,
            start: 0,
            pos: 0,
            counter: 0,
            mask,
        }
    }

    /// How many indices this order yields: every record once, except `SameRecord`, which
    /// yields record 0 as many times as there are records.
    pub fn len(&self) -> u64 {
        self.records
    }

    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    fn permute(&self, x: u64) -> u64 {
        // Each step is a bijection on [0, mask]: xor with a constant, xor-shift, and
        // multiplication by an odd constant modulo a power of two.
        let bits = 64 - self.mask.leading_zeros();
        let half = (bits / 2).max(1);
        let mut v = (x ^ self.seed) & self.mask;
        for k in [
            0x9E37_79B9_7F4A_7C15u64,
            0xBF58_476D_1CE4_E5B9,
            0x94D0_49BB_1331_11EB,
        ] {
            v ^= v >> half;
            v = v.wrapping_mul(k | 1) & self.mask;
            v ^= (k >> 7) & self.mask;
        }
        v
    }
}

impl Iterator for RecordOrder {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.step >= self.records {
            return None;
        }
        self.step += 1;
        Some(match self.order {
            Order::Sequential => self.step - 1,
            Order::Backward => self.records - self.step,
            Order::SameRecord => 0,
            Order::Stride => {
                // Read a record, skip `stride - 1`; past the end, begin again one record after
                // the previous start (IOzone's stride read), so every record is read once.
                if self.pos >= self.records {
                    self.start += 1;
                    self.pos = self.start;
                }
                let r = self.pos;
                self.pos += self.stride;
                r
            }
            Order::Random => loop {
                let c = self.counter;
                self.counter += 1;
                let v = self.permute(c);
                if v < self.records {
                    break v;
                }
            },
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.records - self.step) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(order: Order, n: u64, stride: u64, seed: u64) -> Vec<u64> {
        RecordOrder::new(order, n, stride, seed).collect()
    }

    fn is_permutation(v: &[u64], n: u64) -> bool {
        let mut s = v.to_vec();
        s.sort_unstable();
        s == (0..n).collect::<Vec<_>>()
    }

    #[test]
    fn sequential_and_backward() {
        assert_eq!(collect(Order::Sequential, 4, 17, 0), vec![0, 1, 2, 3]);
        assert_eq!(collect(Order::Backward, 4, 17, 0), vec![3, 2, 1, 0]);
        assert_eq!(collect(Order::SameRecord, 3, 17, 0), vec![0, 0, 0]);
    }

    #[test]
    fn stride_reads_every_record_once_in_iozone_order() {
        assert_eq!(collect(Order::Stride, 7, 3, 0), vec![0, 3, 6, 1, 4, 2, 5]);
        for n in [1, 2, 16, 17, 100, 4096] {
            assert!(
                is_permutation(&collect(Order::Stride, n, 17, 0), n),
                "n={n}"
            );
        }
    }

    #[test]
    fn random_is_a_permutation_for_any_size_and_seed() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4096, 131_072] {
            for seed in [0u64, 1, 0xdead_beef] {
                let v = collect(Order::Random, n, 17, seed);
                assert!(is_permutation(&v, n), "n={n} seed={seed}");
            }
        }
    }

    #[test]
    fn random_is_not_sequential_and_depends_on_seed() {
        let a = collect(Order::Random, 1024, 17, 1);
        let b = collect(Order::Random, 1024, 17, 2);
        assert_ne!(a, (0..1024).collect::<Vec<_>>());
        assert_ne!(a, b);
        // Neighbours in visiting order are rarely neighbours on disk.
        let adjacent = a.windows(2).filter(|w| w[0].abs_diff(w[1]) == 1).count();
        assert!(adjacent < 50, "{adjacent} adjacent steps");
    }
}
