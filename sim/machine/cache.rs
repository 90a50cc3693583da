//! A set-associative tag array with LRU replacement, shared by the L1 and the L2 slices. It holds tags
//! and per-line state only; the owning cache decides what a line's state means (valid sectors, dirty).
//!
//! Also the hash map the caches key by line address ([`AddrMap`]).
//!
//! Not modelled: replacement policies other than LRU; tag-lookup energy.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for addresses (keys that are already well spread in their low bits after a multiply):
/// the default SipHash costs more than the atomic unit's whole bookkeeping.
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let x = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// A map keyed by address.
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// Where a line lives in the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Way(pub u32);

#[derive(Debug, Clone)]
pub struct TagArray {
    sets: u32,
    ways: u32,
    line_shift: u32,
    /// Bits of the set index (`sets` is a power of two) when the index is hashed, 0 when it is the line
    /// index's low bits.
    fold_bits: u32,
    /// With a hashed index: the lines of one slice are every `stride`-th line on average (the slices
    /// of a hashed L2), so the index hashes `line index / stride`, the line's place in its slice,
    /// computed as a multiply by `stride_inv` (`reciprocal`: no division on every access).
    stride_inv: u64,
    /// Each way's line address with its lowest bit set (line addresses are aligned, so the bit is
    /// free); 0: invalid. An empty array is all zeros, which the allocator hands out untouched: a
    /// large L2 costs memory only for the sets a run uses.
    tags: Vec<u64>,
    lru: Vec<u64>,
    stamp: u64,
}

const INVALID: u64 = 0;

/// `ceil(2^64 / d)` for `d` > 1 (0 for `d` = 1): with it `div_by(n, _)` is `n / d` for every
/// `n < 2^64 / d` (the error of the rounded reciprocal, times `n`, stays under `1 / d`) — every line
/// index below `2^64 / d` (2^57 for 128 slices; simulated addresses stay far below).
fn reciprocal(d: u64) -> u64 {
    if d <= 1 {
        0
    } else {
        u64::MAX / d + 1
    }
}

#[inline]
fn div_by(n: u64, inv: u64) -> u64 {
    if inv == 0 {
        n
    } else {
        ((n as u128 * inv as u128) >> 64) as u64
    }
}

/// The stored form of a valid line's tag.
#[inline]
fn tag(line: u64) -> u64 {
    debug_assert!(line & 1 == 0, "a line address is aligned");
    line | 1
}

impl TagArray {
    /// `sets` must be a power of two (validated by the config). `hashed`: `Some(slices)`: the set index
    /// is the XOR of every `log2(sets)`-bit field of `line index / slices` (as hashed L2s index their
    /// sets), so that lines a power of two apart spread over all sets and a slice's share of a
    /// contiguous range over all of its sets; `None`: the line index's low bits.
    pub fn new(sets: u32, ways: u32, line_bytes: u32, hashed: Option<u32>) -> TagArray {
        let n = (sets * ways) as usize;
        TagArray {
            sets,
            ways,
            line_shift: line_bytes.trailing_zeros(),
            fold_bits: if hashed.is_some() {
                sets.trailing_zeros()
            } else {
                0
            },
            stride_inv: reciprocal(hashed.unwrap_or(1).max(1) as u64),
            tags: vec![INVALID; n],
            lru: vec![0; n],
            stamp: 0,
        }
    }

    pub fn capacity_lines(&self) -> usize {
        self.tags.len()
    }

    #[inline]
    fn set_of(&self, line: u64) -> u32 {
        let mut i = line >> self.line_shift;
        if self.fold_bits != 0 {
            i = div_by(i, self.stride_inv);
            let mut h = 0;
            while i != 0 {
                h ^= i;
                i >>= self.fold_bits;
            }
            i = h;
        }
        (i as u32) & (self.sets - 1)
    }

    /// Finds `line` (a line-aligned address) and marks it most recently used.
    #[inline]
    pub fn lookup(&mut self, line: u64) -> Option<Way> {
        let w = self.probe(line)?;
        self.stamp += 1;
        self.lru[w.0 as usize] = self.stamp;
        Some(w)
    }

    /// A hint that `line`'s set will be looked up soon (`engine::prefetch`).
    #[inline]
    pub fn prefetch(&self, line: u64) {
        let base = (self.set_of(line) * self.ways) as usize;
        // The set's first and last tags: both of its cache lines when it spans two.
        for t in [base, base + self.ways as usize - 1] {
            if let Some(t) = self.tags.get(t) {
                crate::engine::prefetch(t);
            }
        }
    }

    /// Finds `line` without touching LRU state.
    #[inline]
    pub fn probe(&self, line: u64) -> Option<Way> {
        let base = self.set_of(line) * self.ways;
        let t = tag(line);
        // The set's tags as one slice: one bounds check, not one per way.
        let set = &self.tags[base as usize..(base + self.ways) as usize];
        set.iter()
            .position(|&x| x == t)
            .map(|i| Way(base + i as u32))
    }

    /// Installs `line`, returning its way and the line it evicted (if a valid one was replaced).
    /// `pinned` ways (e.g. with fills in flight) are skipped; `None` if every way is pinned.
    pub fn insert(
        &mut self,
        line: u64,
        pinned: impl Fn(Way) -> bool,
    ) -> Option<(Way, Option<u64>)> {
        let base = self.set_of(line) * self.ways;
        let mut victim: Option<u32> = None;
        for w in base..base + self.ways {
            let wi = w as usize;
            if pinned(Way(w)) {
                continue;
            }
            if self.tags[wi] == INVALID {
                victim = Some(w);
                break;
            }
            if victim.is_none_or(|v| self.lru[wi] < self.lru[v as usize]) {
                victim = Some(w);
            }
        }
        let w = victim?;
        let wi = w as usize;
        let evicted = (self.tags[wi] != INVALID).then_some(self.tags[wi] & !1);
        self.tags[wi] = tag(line);
        self.stamp += 1;
        self.lru[wi] = self.stamp;
        Some((Way(w), evicted))
    }

    pub fn invalidate(&mut self, way: Way) {
        self.tags[way.0 as usize] = INVALID;
    }

    pub fn invalidate_all(&mut self) {
        self.tags.fill(INVALID);
    }

    pub fn line_at(&self, way: Way) -> Option<u64> {
        let t = self.tags[way.0 as usize];
        (t != INVALID).then_some(t & !1)
    }

    /// Invalidates every line with a byte in `[start, end)` and calls `dropped` with its way (the
    /// owning cache clears its state for it). A line is tested by its last byte, so that the address
    /// space's last line (whose end would be 2^64) is found too.
    pub fn invalidate_range(&mut self, start: u64, end: u64, mut dropped: impl FnMut(Way)) {
        let last = (1u64 << self.line_shift) - 1;
        for w in 0..self.tags.len() {
            let way = Way(w as u32);
            if let Some(line) = self.line_at(way) {
                if line < end && line + last >= start {
                    self.tags[w] = INVALID;
                    dropped(way);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn division_by_the_reciprocal_is_exact_for_line_indices() {
        let mut rng = crate::rng::SplitMix64::new(7);
        for d in [1u64, 2, 3, 7, 40, 80, 100, 128] {
            let inv = reciprocal(d);
            for n in (0..10_000u64).chain((0..10_000).map(|_| rng.below(1 << 57))) {
                assert_eq!(div_by(n, inv), n / d, "{n} / {d}");
            }
            let top = u64::MAX / d;
            assert_eq!(div_by(top, inv), top / d, "{top} / {d}");
        }
    }

    /// One slice's share of a chase 4 KiB apart (32 lines; the slice gets every 100th line): with the
    /// low bits as the index they fall into a few sets and evict each other; hashed, they stay.
    #[test]
    fn a_hashed_index_keeps_a_power_of_two_stride_that_fits() {
        let kept = |hashed: Option<u32>| {
            let mut t = TagArray::new(256, 16, 128, hashed);
            let lines: Vec<u64> = (0..2048u64).map(|k| k * 32 * 100 * 128).collect();
            for &l in &lines {
                t.insert(l, |_| false);
            }
            lines.iter().filter(|&&l| t.probe(l).is_some()).count()
        };
        assert!(kept(None) <= 16 * 8, "{}", kept(None));
        assert!(kept(Some(100)) >= 1800, "{}", kept(Some(100)));
    }

    use super::*;

    #[test]
    fn lru_evicts_least_recently_used() {
        let mut t = TagArray::new(1, 2, 128, None);
        t.insert(0, |_| false);
        t.insert(128, |_| false);
        t.lookup(0);
        let (_, ev) = t.insert(256, |_| false).unwrap();
        assert_eq!(ev, Some(128));
        assert!(t.probe(0).is_some() && t.probe(256).is_some() && t.probe(128).is_none());
    }

    #[test]
    fn pinned_ways_are_not_victims() {
        let mut t = TagArray::new(1, 2, 128, None);
        let (w0, _) = t.insert(0, |_| false).unwrap();
        t.insert(128, |_| false);
        let (_, ev) = t.insert(256, |w| w == w0).unwrap();
        assert_eq!(ev, Some(128));
        assert!(t.insert(384, |_| true).is_none());
    }

    #[test]
    fn sets_are_indexed_by_line_address() {
        let mut t = TagArray::new(4, 1, 128, None);
        for i in 0..4 {
            assert_eq!(t.insert(i * 128, |_| false).unwrap().1, None);
        }
        assert_eq!(t.insert(4 * 128, |_| false).unwrap().1, Some(0));
    }
}
