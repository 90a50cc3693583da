//! The address-to-slice map: which L2 slice owns a line, and so which memory partition holds its
//! values. The builder hands it to every part that routes by address (each L1, the partition split).
//!
//! Models: `linear` (`slice = line index mod slices`) or `xor` (the line index's higher digits in base
//! `slices` folded into the slice bits, which spreads power-of-two strides over every slice).
//!
//! Not modelled: the undocumented hash functions of real GPUs.

use crate::config::{L2Spec, SliceHash};

#[derive(Debug, Clone, Copy)]
pub struct SliceMap {
    line_bytes: u32,
    slices: u32,
    hash: SliceHash,
}

impl SliceMap {
    pub fn new(l2: &L2Spec) -> SliceMap {
        SliceMap {
            line_bytes: l2.line_bytes,
            slices: l2.slices,
            hash: l2.hash,
        }
    }

    pub fn slices(&self) -> u32 {
        self.slices
    }

    /// The slice that owns `line` (a line address).
    #[inline]
    pub fn slice_of(&self, line: u64) -> u16 {
        let idx = line >> self.line_bytes.trailing_zeros();
        let s = self.slices as u64;
        (match self.hash {
            SliceHash::Linear => idx % s,
            SliceHash::Xor => {
                // Base `slices` digits; a single slice still needs a base above 1 to terminate.
                let mut x = idx;
                let mut h = 0u64;
                while x != 0 {
                    h ^= x;
                    x /= s.max(2);
                }
                h % s
            }
        }) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(slices: u32, hash: SliceHash) -> SliceMap {
        SliceMap {
            line_bytes: 128,
            slices,
            hash,
        }
    }

    #[test]
    fn linear_interleaves_lines_and_xor_spreads_a_slice_sized_stride() {
        let lin = map(8, SliceHash::Linear);
        let l: Vec<u16> = (0..8).map(|i| lin.slice_of(i * 128)).collect();
        assert_eq!(l, [0, 1, 2, 3, 4, 5, 6, 7]);
        // A stride of 8 lines hits one slice linearly, all of them with the XOR hash.
        let strided: Vec<u64> = (0..8).map(|i| i * 8 * 128).collect();
        assert!(strided.iter().all(|&a| lin.slice_of(a) == 0));
        let xor = map(8, SliceHash::Xor);
        let mut hit: Vec<u16> = strided.iter().map(|&a| xor.slice_of(a)).collect();
        hit.sort();
        hit.dedup();
        assert_eq!(hit.len(), 8);
        assert_eq!(map(1, SliceHash::Xor).slice_of(12345 * 128), 0);
    }
}
