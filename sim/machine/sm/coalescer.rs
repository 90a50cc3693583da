//! The coalescer: the lanes of one memory instruction become one request per line they touch, written
//! once for loads, stores and atomics.
//!
//! Each line appears once, in the order of the first lane that touches it (lanes in ascending order),
//! with the bytes the instruction touches in it and the lanes that touch them. A load sends one read
//! per line with those bytes, a store one write per line (its data assembled lane by lane, so that the
//! highest lane wins when several write the same bytes, as on hardware), an atomic one batch per line.
//!
//! Not modelled: sector-granular splitting inside the L1 (the L1 fills only the sectors a request's
//! bytes touch, see `../l1/`), 128-bit vector accesses spanning lines (the trace loader rejects them).

use crate::memory::byte_mask;

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
/// `stride`, when the caller knows it: the active lanes are `0, 1, …` and lane `l`'s address is
/// `addrs[0] + l * stride` (wrapping), so a run's length follows from where it starts (a traced
/// access with a compressed address list) instead of from comparing addresses.
#[inline]
pub fn coalesce(
    mask: u64,
    addrs: &[u64; 64],
    stride: Option<u64>,
    width: u32,
    line_bytes: u32,
    out: &mut Vec<LineAccess>,
) {
    debug_assert!(
        stride.is_none_or(|s| mask & mask.wrapping_add(1) == 0
            && (0..64 - mask.leading_zeros() as usize)
                .all(|l| addrs[l] == addrs[0].wrapping_add(s.wrapping_mul(l as u64)))),
        "a stride describes lanes 0, 1, … at a constant step"
    );
    out.clear();
    let offset_mask = line_bytes as u64 - 1;
    // The entry of the previous run: neighbouring lanes usually share a line.
    let mut last = 0;
    // The highest line so far: a run above it starts a new entry without a search (lanes in
    // ascending address order, the common case, never search).
    let mut highest: Option<u64> = None;
    let w = width as u64;
    let mut m = mask;
    while m != 0 {
        // A run: lane `l` and the active lanes right after it whose addresses follow on at
        // `width`-byte steps inside the same line (a coalesced access: one lane at a time, but
        // one byte mask and one entry lookup per run). Its bytes are those its lanes touch.
        let l = m.trailing_zeros() as usize;
        let a0 = addrs[l];
        let line = a0 & !offset_mask;
        let off0 = a0 & offset_mask;
        let mut n = 1;
        let in_a_row = (!(m >> l)).trailing_zeros() as usize;
        match (line_bytes as u64 - off0).checked_div(w) {
            Some(fit) => {
                // At most the active lanes in a row from `l`, and the accesses that fit in the
                // line from `off0` (at least one: no access crosses a line), so every address
                // formed lies inside the line: no overflow at the top of the address space.
                let most = in_a_row.min(fit as usize);
                if stride == Some(w) {
                    // Every lane after `l` follows on at `w` bytes: the run is all that fits.
                    n = most;
                }
                while n < most && addrs[l + n] == a0 + n as u64 * w {
                    n += 1;
                }
            }
            // Width 0 (an atomic's lanes, no byte masks): the active lanes in a row in the same
            // line, whatever their addresses there (the entry is the one they would share lane by
            // lane).
            None => {
                match stride {
                    // Lanes at a step of at most a line: those below the line's end (no address
                    // formed here wraps: each lies inside the line).
                    Some(s) if s <= line_bytes as u64 => {
                        let room = line_bytes as u64 - off0;
                        let here = room
                            .checked_div(s)
                            .map_or(64, |q| q + (room % s != 0) as u64);
                        n = in_a_row.min(here as usize);
                    }
                    _ => {
                        while n < in_a_row && addrs[l + n] & !offset_mask == line {
                            n += 1;
                        }
                    }
                }
            }
        }
        let run = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << l
        };
        m &= !run;
        let bytes = if width == 0 {
            0
        } else {
            byte_mask(off0 as u32, n as u32 * width)
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
                e.lanes |= run;
                last = i;
            }
            None => {
                highest = Some(highest.map_or(line, |h| h.max(line)));
                last = out.len();
                out.push(LineAccess {
                    line,
                    bytes,
                    lanes: run,
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
            None,
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
            None,
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
        coalesce(
            0b111,
            &addrs(|l| 0x2008 + 64 * (l / 2)),
            None,
            8,
            128,
            &mut out,
        );
        assert_eq!(
            out,
            [LineAccess {
                line: 0x2000,
                bytes: (0xFF << 8) | (0xFF << 72),
                lanes: 0b111
            }]
        );
    }

    /// The lane-by-lane coalescer the run-based one must equal.
    fn by_lanes(mask: u64, addrs: &[u64; 64], width: u32, line_bytes: u32) -> Vec<LineAccess> {
        let mut out: Vec<LineAccess> = Vec::new();
        for l in (0..64).filter(|l| mask >> l & 1 == 1) {
            let line = addrs[l] & !(line_bytes as u64 - 1);
            let bytes = if width == 0 {
                0
            } else {
                byte_mask(0, width) << (addrs[l] & (line_bytes as u64 - 1))
            };
            match out.iter_mut().find(|x| x.line == line) {
                Some(e) => {
                    e.bytes |= bytes;
                    e.lanes |= 1 << l;
                }
                None => out.push(LineAccess {
                    line,
                    bytes,
                    lanes: 1 << l,
                }),
            }
        }
        out
    }

    #[test]
    fn runs_of_consecutive_lanes_coalesce_as_lane_by_lane() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut out = Vec::new();
        for case in 0..20_000 {
            let width = [0u32, 1, 2, 4, 8, 16][case % 6];
            let line_bytes = [32u32, 64, 128][case / 6 % 3];
            let w = width.max(1) as u64;
            let base = 0x4000 + (rng.next_u64() % 512) / w * w;
            let stride = [0i64, w as i64, w as i64, -(w as i64), 2 * w as i64, 128]
                [rng.next_u64() as usize % 6];
            // Some cases at the top of the address space (a run must not overflow there).
            let base = if case % 7 == 0 {
                base.wrapping_neg() & !(w - 1)
            } else {
                base
            };
            let mut addrs: [u64; 64] =
                std::array::from_fn(|l| base.wrapping_add_signed(stride * l as i64));
            // Some lanes elsewhere, some lanes off, sometimes all 64 lanes.
            for _ in 0..rng.next_u64() % 4 {
                let l = rng.next_u64() as usize % 64;
                addrs[l] = 0x4000 + (rng.next_u64() % 1024) / w * w;
            }
            for a in addrs.iter_mut() {
                // No access crosses a line (the caller checked).
                let off = *a % line_bytes as u64;
                if off + width as u64 > line_bytes as u64 {
                    *a -= off;
                }
            }
            let mask = match case % 4 {
                0 => u64::MAX,
                1 => u32::MAX as u64,
                _ => rng.next_u64(),
            };
            coalesce(mask, &addrs, None, width, line_bytes, &mut out);
            let want = by_lanes(mask, &addrs, width, line_bytes);
            assert_eq!(out, want, "case {case}");
            // Lanes 0, 1, … at the stride, told: the same lines.
            let k = rng.next_u64() as usize % 65;
            let lanes0 = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
            let strided: [u64; 64] =
                std::array::from_fn(|l| base.wrapping_add_signed(stride * l as i64));
            let crosses =
                (0..k).any(|l| strided[l] % line_bytes as u64 + width as u64 > line_bytes as u64);
            if !crosses {
                coalesce(
                    lanes0,
                    &strided,
                    Some(stride as u64),
                    width,
                    line_bytes,
                    &mut out,
                );
                assert_eq!(
                    out,
                    by_lanes(lanes0, &strided, width, line_bytes),
                    "case {case}, stride {stride} told"
                );
            }
        }
    }
}
