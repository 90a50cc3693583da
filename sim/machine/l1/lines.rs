//! The bytes an L1 holds: the line array (none in a timing-only run), sector copies, and a line as
//! the value store of the L1 atomic unit.

use crate::atomic::ValueStore;
use crate::pool::{LineBuf, MAX_LINE};

/// The bytes of the array's lines. A run without values (trace replay) keeps none: every way reads
/// and writes one scratch line, so that a timing-only L1 neither allocates nor touches the megabytes
/// of a full data array.
pub(super) struct LineStore {
    lines: Vec<LineBuf>,
    /// `usize::MAX` with values, 0 without: the index mask of a way's line.
    mask: usize,
}

impl LineStore {
    pub(super) fn new(ways: usize, values: bool) -> LineStore {
        LineStore {
            lines: vec![[0u8; MAX_LINE]; if values { ways } else { 1 }],
            mask: if values { usize::MAX } else { 0 },
        }
    }

    /// Whether the lines hold values.
    pub(super) fn values(&self) -> bool {
        self.mask != 0
    }
}

impl std::ops::Index<usize> for LineStore {
    type Output = LineBuf;
    fn index(&self, way: usize) -> &LineBuf {
        &self.lines[way & self.mask]
    }
}

impl std::ops::IndexMut<usize> for LineStore {
    fn index_mut(&mut self, way: usize) -> &mut LineBuf {
        &mut self.lines[way & self.mask]
    }
}

/// Copies the bytes of the sectors set in `sectors` (of `sector_bytes` each) from `src` to `dst`.
pub(super) fn copy_sectors(dst: &mut LineBuf, src: &LineBuf, sectors: u32, sector_bytes: usize) {
    let mut m = sectors;
    while m != 0 {
        let s = m.trailing_zeros() as usize;
        m &= m - 1;
        let r = s * sector_bytes..(s + 1) * sector_bytes;
        dst[r.clone()].copy_from_slice(&src[r]);
    }
}

/// An L1 line as a value store for the L1 atomic unit; records which bytes changed.
pub(super) struct LineView<'a> {
    pub(super) base: u64,
    pub(super) bytes: &'a mut LineBuf,
    pub(super) mask: u128,
}

impl ValueStore for LineView<'_> {
    fn read(&self, addr: u64, len: u32) -> u64 {
        let o = (addr - self.base) as usize;
        let mut b = [0u8; 8];
        b[..len as usize].copy_from_slice(&self.bytes[o..o + len as usize]);
        u64::from_le_bytes(b)
    }
    fn write(&mut self, addr: u64, len: u32, v: u64) {
        let o = (addr - self.base) as usize;
        self.bytes[o..o + len as usize].copy_from_slice(&v.to_le_bytes()[..len as usize]);
        self.mask |= crate::memory::byte_mask(o as u32, len);
    }
}
