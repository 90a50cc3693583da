//! The one-pass reader of instruction lines in the form the tracer writes them: the fields read left
//! to right straight from a block's bytes, the line's end found by reading up to it (no search for
//! the line end first, no trim, no second look at a field).
//!
//! It takes only what it reads exactly as the general reader does (`decode.rs`, on the trimmed
//! line) and hands every other line back to that reader, untouched: a line that does not start with
//! its first field's first byte (blank, leading whitespace, `#`), a separator other than spaces and
//! tabs, a line end other than `\n` or `\r\n` (a last line without one), `+` signs, `0X` prefixes,
//! counts, memory widths and register numbers of more than 3 digits, counts above 255, more than
//! 16 hex digits (leading zeros included) or 18 digits of stride or delta, a PC or mask above 32
//! bits, and any line the general reader refuses (so its error, line and message, stays the one
//! it gives). What it accepts is read to the same values: a field ends at ASCII whitespace here as
//! there, and the one optional trailing field (the immediate) is not looked into by either.

use super::decode::{InstFields, HEX};
use super::parse::OpenBlock;

/// Reads the instruction line at the start of `s` (a text that ends with `\n`; `None` otherwise): its
/// fields (registers and addresses pushed to `b`'s arenas) and the bytes the line spans with its line
/// end; `None` when the general reader must read it (the caller then drops what was pushed).
#[cfg(test)]
pub(crate) fn inst<'a>(
    s: &'a [u8],
    lineinfo: bool,
    b: &mut OpenBlock,
) -> Option<(InstFields<'a>, usize)> {
    let mut lines = Lines::new(s)?;
    let f = lines.inst(lineinfo, b)?;
    Some((f, lines.at()))
}

/// Instruction lines one after another, in a text that ends with `\n`.
pub(crate) struct Lines<'a>(Cursor<'a>);

impl<'a> Lines<'a> {
    /// `None` when `s` does not end with `\n`.
    pub(crate) fn new(s: &'a [u8]) -> Option<Lines<'a>> {
        (s.last() == Some(&b'\n')).then_some(Lines(Cursor { s, i: 0 }))
    }

    /// Where the next line starts.
    pub(crate) fn at(&self) -> usize {
        self.0.i
    }

    /// Reads the next line: its fields (registers and addresses pushed to `b`'s arenas); `None`
    /// (at the text's end, or a line for the general reader: the caller drops what was pushed) leaves
    /// the position at the line's start.
    #[inline(always)]
    pub(crate) fn inst(&mut self, lineinfo: bool, b: &mut OpenBlock) -> Option<InstFields<'a>> {
        let start = self.0.i;
        if start >= self.0.s.len() {
            return None;
        }
        let r = read(&mut self.0, lineinfo, b);
        if r.is_none() {
            self.0.i = start;
        }
        r
    }
}

/// Reads the line at `c` (which lies before the text's last byte) and moves past its line end.
#[inline(always)]
fn read<'a>(c: &mut Cursor<'a>, lineinfo: bool, b: &mut OpenBlock) -> Option<InstFields<'a>> {
    if lineinfo {
        // The source line number: any field (it is not read); a visible ASCII byte first, so that
        // the line has no leading whitespace to trim.
        if !c.peek().is_ascii_graphic() {
            return None;
        }
        c.token();
        c.sep()?;
    }
    let pc = u32::try_from(c.hex()?).ok()?;
    c.sep()?;
    let mask = u32::try_from(c.hex()?).ok()?;
    c.sep()?;
    let ndst = c.dec3()?;
    if ndst > 255 {
        return None;
    }
    let regs_at = b.regs.len() as u32;
    let mut nd = 0u8;
    for _ in 0..ndst {
        c.sep()?;
        if let Some(r) = c.reg()? {
            b.regs.push(r);
            nd += 1;
        }
    }
    c.sep()?;
    if !c.peek().is_ascii_uppercase() {
        return None;
    }
    let opcode = c.token();
    c.sep()?;
    let nsrc = c.dec3()?;
    if nsrc > 255 {
        return None;
    }
    let mut ns = 0u8;
    for _ in 0..nsrc {
        c.sep()?;
        if let Some(r) = c.reg()? {
            b.regs.push(r);
            ns += 1;
        }
    }
    c.sep()?;
    let mem_width = c.dec3()? as u32;
    let addrs_at = b.addrs.len() as u32;
    let mut strided = false;
    let active = mask.count_ones();
    if mem_width > 0 && active > 0 {
        c.sep()?;
        let mode = c.peek();
        if !matches!(mode, b'0'..=b'2') {
            return None;
        }
        c.i += 1;
        c.sep()?;
        match mode {
            b'0' => {
                b.addrs.push(c.addr()?);
                for _ in 1..active {
                    c.sep()?;
                    b.addrs.push(c.addr()?);
                }
            }
            b'1' => {
                let base = c.addr()?;
                b.addrs.push(base);
                c.sep()?;
                let stride = c.signed()?;
                // Out of 0 ..= 2^64 - 1: the slow path names it.
                u64::try_from(base as i128 + stride as i128 * (active as i128 - 1)).ok()?;
                b.addrs.push(stride as u64);
                strided = true;
            }
            _ => {
                // b'2' (checked above).
                let mut a = c.addr()?;
                b.addrs.push(a);
                for _ in 1..active {
                    c.sep()?;
                    a = a.checked_add_signed(c.signed()?)?;
                    b.addrs.push(a);
                }
            }
        }
    }
    c.i = c.end()?;
    Some(InstFields {
        pc,
        mask,
        opcode,
        mem_width,
        nd,
        ns,
        strided,
        regs_at,
        addrs_at,
    })
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The hex digits at the start of the 8 bytes `w` (the first in the lowest byte, as
/// `u64::from_le_bytes` reads them): how many (0 to 8), and their value. Each byte is classified
/// and converted at once: a byte is a digit when its 7 low bits lie in `0-9`, `A-F` or `a-f` (the
/// sums below carry into bit 7 of that byte exactly when a bound is passed, never into the next
/// byte) and its high bit is clear.
#[inline(always)]
pub(crate) fn hex8(w: u64) -> (usize, u64) {
    let x = w & !HIGH;
    let digit = (x + ONES * (0x80 - b'0' as u64)) & !(x + ONES * (0x7f - b'9' as u64));
    let lower = x | (ONES * 0x20);
    let letter = (lower + ONES * (0x80 - b'a' as u64)) & !(lower + ONES * (0x7f - b'f' as u64));
    let is_hex = (digit | letter) & !w & HIGH;
    let n = ((!is_hex & HIGH).trailing_zeros() / 8) as usize;
    if n == 0 {
        return (0, 0);
    }
    // Each byte's value ('a'/'A' have bit 6 set: 1 + 9), the n digits moved to the low bytes with the
    // last one lowest, then the nibbles packed pairwise.
    let vals = (w & (ONES * 0x0f)) + ((w >> 6) & ONES) * 9;
    let v = (vals << (8 * (8 - n))).swap_bytes();
    let v = (v | v >> 4) & 0x00ff_00ff_00ff_00ff;
    let v = (v | v >> 8) & 0x0000_ffff_0000_ffff;
    let v = (v | v >> 16) & 0x0000_0000_ffff_ffff;
    (n, v)
}

/// A position in a text that ends with `\n` ([`Lines::new`]), at or before its last byte.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    fn peek(&self) -> u8 {
        self.at(self.i)
    }

    /// The byte at `i`, at or before the line's `\n`.
    #[inline(always)]
    fn at(&self, i: usize) -> u8 {
        // `s` ends with `\n` (`Lines::new`), a line is read only from a start before the text's end
        // (`Lines::inst`), and the cursor never reads past the first `\n` at or after the line's
        // start (every step forward is over bytes just read as something else), so `i` is in
        // bounds; were it not, a line end is what it reads (the line goes to the general reader),
        // never a panic. Checked (no `unsafe`): about a tenth of the reading's cost.
        debug_assert!(i < self.s.len());
        self.s.get(i).copied().unwrap_or(b'\n')
    }

    /// One or more spaces or tabs (a field follows).
    #[inline(always)]
    fn sep(&mut self) -> Option<()> {
        let c = self.peek();
        if c == b' ' {
            self.i += 1;
            // The common case: one space, then a visible byte (every blank is at most b' ').
            if self.peek() > b' ' {
                return Some(());
            }
        } else if c != b'\t' {
            return None;
        }
        while matches!(self.peek(), b' ' | b'\t') {
            self.i += 1;
        }
        Some(())
    }

    /// The bytes up to the next ASCII whitespace.
    #[inline(always)]
    fn token(&mut self) -> &'a [u8] {
        let start = self.i;
        loop {
            let c = self.peek();
            // ASCII whitespace is at most b' '.
            if c <= b' ' && c.is_ascii_whitespace() {
                break;
            }
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    /// 1 to 16 hex digits: the first 8 read as one word where the text has them.
    #[inline(always)]
    fn hex(&mut self) -> Option<u64> {
        let start = self.i;
        let mut v = 0u64;
        if let Some(w) = self.s.get(start..start + 8) {
            let (n, x) = hex8(u64::from_le_bytes(w.try_into().ok()?));
            self.i += n;
            if n < 8 {
                return (n > 0).then_some(x);
            }
            v = x;
        }
        loop {
            let d = HEX[self.peek() as usize];
            if d > 15 {
                break;
            }
            v = v << 4 | d as u64;
            self.i += 1;
        }
        ((self.i - start).wrapping_sub(1) < 16).then_some(v)
    }

    /// 1 to `max` (at most 18) decimal digits.
    #[inline(always)]
    fn dec(&mut self, max: usize) -> Option<u64> {
        let start = self.i;
        let mut v = 0u64;
        loop {
            let d = self.peek().wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            self.i += 1;
        }
        ((self.i - start).wrapping_sub(1) < max).then_some(v)
    }

    /// A stride or delta: an optional `-` and 1 to 18 digits (below 2^63).
    #[inline(always)]
    fn signed(&mut self) -> Option<i64> {
        let neg = self.peek() == b'-';
        self.i += neg as usize;
        let v = self.dec(18)? as i64;
        Some(if neg { -v } else { v })
    }

    /// 1 to 3 decimal digits (counts, register numbers), read without a loop.
    #[inline(always)]
    fn dec3(&mut self) -> Option<u64> {
        let digit = |c: u8| {
            let d = c.wrapping_sub(b'0');
            (d <= 9).then_some(d as u64)
        };
        let d0 = digit(self.peek())?;
        let Some(d1) = digit(self.at(self.i + 1)) else {
            self.i += 1;
            return Some(d0);
        };
        let Some(d2) = digit(self.at(self.i + 2)) else {
            self.i += 2;
            return Some(d0 * 10 + d1);
        };
        if self.at(self.i + 3).is_ascii_digit() {
            return None;
        }
        self.i += 3;
        Some(d0 * 100 + d1 * 10 + d2)
    }

    /// `0x` and 1 to 16 hex digits.
    #[inline(always)]
    fn addr(&mut self) -> Option<u64> {
        if self.peek() != b'0' || self.at(self.i + 1) != b'x' {
            return None;
        }
        self.i += 2;
        self.hex()
    }

    /// A register: `Rn` (n up to 255), `URn` (63), `Pn`, `UPn` (7) with 1 to 3 digits, or a constant
    /// (`RZ`, `URZ`, `PT`, `UPT`: `Some(None)`); the field's end is checked by what follows.
    #[inline(always)]
    fn reg(&mut self) -> Option<Option<u16>> {
        let (base, max, skip) = match self.peek() {
            b'R' => (0, 255, 1),
            b'P' => (256, 7, 1),
            b'U' => match self.at(self.i + 1) {
                b'R' => (264, 63, 2),
                b'P' => (328, 7, 2),
                _ => return None,
            },
            _ => return None,
        };
        self.i += skip;
        if matches!(self.peek(), b'Z' | b'T') {
            self.i += 1;
            return Some(None);
        }
        let v = self.dec3()?;
        (v <= max).then_some(Some(base + v as u16))
    }

    /// After the last field: the optional immediate, then the line's end; the bytes read.
    #[inline(always)]
    fn end(&mut self) -> Option<usize> {
        if let Some(n) = self.line_end() {
            return Some(n);
        }
        self.sep()?;
        if let Some(n) = self.line_end() {
            return Some(n);
        }
        if self.token().is_empty() {
            return None;
        }
        while matches!(self.peek(), b' ' | b'\t') {
            self.i += 1;
        }
        self.line_end()
    }

    /// The bytes up to and with the line end at the cursor (`\n` or `\r\n`).
    #[inline(always)]
    fn line_end(&self) -> Option<usize> {
        match self.peek() {
            b'\n' => Some(self.i + 1),
            b'\r' if self.at(self.i + 1) == b'\n' => Some(self.i + 2),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
