//! The coalescer: the lanes of one memory instruction become one request per line they touch, written
//! once for loads, stores and atomics.
//!
//! Each line appears once, in the order of the first lane that touches it (lanes in ascending order),
//! with the bytes the instruction touches in it and the lanes that touch them. A load sends one read
//! per line with those bytes, a store one write per line (its data assembled lane by lane, so that the
//! highest lane wins when several write the same bytes, as on hardware), an atomic one batch per line.
//!
//! Not modelled: sector-granular splitting inside the L1 (the L1 fills only the sectors a request's
//! bytes touch, see `l1.rs`), 128-bit vector accesses spanning lines (the trace loader rejects them).

use crate::machine::memory::byte_mask;

/// The part of one instruction that falls in one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAccess {
    /// Line address.
    pub line: u64,
    /// The bytes of the line the instruction touches.
    pub bytes: u128,
    /// The lanes that touch it.
    pub lanes: u64,
}

/// The lines the lanes in `mask` touch with `width`-byte accesses at `addrs`, into `out` (cleared
/// first). `line_bytes` is a power of two and no access crosses a line (both checked before).
/// `width` 0 leaves the byte masks empty: an atomic's batch carries its lanes' addresses instead.
#[inline]
pub fn coalesce(
    mask: u64,
    addrs: &[u64; 64],
    width: u32,
    line_bytes: u32,
    out: &mut Vec<LineAccess>,
) {
    out.clear();
    let offset_mask = line_bytes as u64 - 1;
    let width_bytes = byte_mask(0, width);
    // The entry of the previous lane: neighbouring lanes usually share a line.
    let mut last = 0;
    // The highest line so far: a lane above it starts a new entry without a search (lanes in
    // ascending address order, the common case, never search).
    let mut highest: Option<u64> = None;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let line = addrs[l] & !offset_mask;
        let bytes = if width == 0 {
            0
        } else {
            width_bytes << (addrs[l] & offset_mask)
        };
        let at = match out.get(last) {
            Some(x) if x.line == line => Some(last),
            _ if highest.is_none_or(|h| line > h) => None,
            _ => out.iter().position(|x| x.line == line),
        };
        match at {
            Some(i) => {
                let e = &mut out[i];
                e.bytes |= bytes;
                e.lanes |= 1 << l;
                last = i;
            }
            None => {
                highest = Some(highest.map_or(line, |h| h.max(line)));
                last = out.len();
                out.push(LineAccess {
                    line,
                    bytes,
                    lanes: 1 << l,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(f: impl Fn(u64) -> u64) -> [u64; 64] {
        std::array::from_fn(|l| f(l as u64))
    }

    #[test]
    fn thirty_two_consecutive_words_are_one_line() {
        let mut out = Vec::new();
        coalesce(
            u32::MAX as u64,
            &addrs(|l| 0x1000 + 4 * l),
            4,
            128,
            &mut out,
        );
        assert_eq!(
            out,
            [LineAccess {
                line: 0x1000,
                bytes: u128::MAX,
                lanes: u32::MAX as u64
            }]
        );
    }

    #[test]
    fn a_stride_of_a_line_gives_one_request_per_lane_in_lane_order() {
        let mut out = Vec::new();
        coalesce(
            0b1011,
            &addrs(|l| 0x1000 + 128 * (3 - l.min(3))),
            4,
            128,
            &mut out,
        );
        let lines: Vec<u64> = out.iter().map(|x| x.line).collect();
        assert_eq!(
            lines,
            [0x1180, 0x1100, 0x1000],
            "first lane first; lane 2 inactive"
        );
        assert!(out
            .iter()
            .all(|x| x.bytes == 0xF && x.lanes.count_ones() == 1));
    }

    #[test]
    fn lanes_on_one_address_share_their_bytes_and_widths_set_the_mask() {
        let mut out = Vec::new();
        coalesce(0b111, &addrs(|l| 0x2008 + 64 * (l / 2)), 8, 128, &mut out);
        assert_eq!(
            out,
            [LineAccess {
                line: 0x2000,
                bytes: (0xFF << 8) | (0xFF << 72),
                lanes: 0b111
            }]
        );
    }
}
