//! Decoding one instruction line of a kernel trace at the byte level: no allocation per line, the
//! opcode's classification cached by PC. The fields are those of Accel-Sim's tracer, version 3 and
//! later: `[line] PC mask ndst dst... opcode nsrc src... width [mode addresses...] [immediate]`; every
//! number is read as `str::parse` reads it (the same values and the same refusals as a reader that
//! splits the line into strings).

use super::parse::OpenBlock;
use super::*;

/// The classifications of the (opcode, memory width) pairs seen so far in a kernel: a trace repeats a
/// few dozen opcodes millions of times, and [`classify`] splits its qualifiers each time.
#[derive(Default, Clone)]
pub(crate) struct OpCache {
    /// Per opcode, its classification at each memory width seen.
    seen: std::collections::HashMap<Box<[u8]>, Widths, std::hash::BuildHasherDefault<Fnv>>,
    /// The last classification at each PC (by `pc / 16`, for PCs below 1 MiB).
    by_pc: Vec<Option<AtPc>>,
}

/// What [`classify`] returns (the operation, and whether the opcode is known), and whether it is a
/// refused texture or surface instruction ([`super::opcode::texture_or_surface`]).
type Class = (TraceOp, bool, Option<&'static str>);
/// One opcode's classifications by memory width.
type Widths = Vec<(u32, Class)>;
/// The classification last made at a PC: opcode, memory width, class.
type AtPc = (Box<[u8]>, u32, Class);

/// FNV-1a: the opcode keys are short strings, for which SipHash costs more than the lookup saves.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

impl OpCache {
    #[inline]
    fn classify(&mut self, pc: u32, opcode: &[u8], mem_width: u32) -> Class {
        // The instruction at a PC is the same on every line that names it: one byte compare
        // instead of hashing the opcode (checked, so a trace that disagrees is still read right).
        let slot = (pc / 16) as usize;
        if let Some(Some((o, w, r))) = self.by_pc.get(slot) {
            if **o == *opcode && *w == mem_width {
                return *r;
            }
        }
        self.classify_slow(slot, opcode, mem_width)
    }

    #[cold]
    fn classify_slow(&mut self, slot: usize, opcode: &[u8], mem_width: u32) -> Class {
        let list = match self.seen.get_mut(opcode) {
            Some(l) => l,
            None => self.seen.entry(opcode.into()).or_default(),
        };
        let r = match list.iter().find(|(w, _)| *w == mem_width) {
            Some((_, r)) => *r,
            None => {
                let name = std::str::from_utf8(opcode).unwrap_or("");
                let (op, known) = classify(name, mem_width);
                let r = (op, known, super::opcode::texture_or_surface(name));
                list.push((mem_width, r));
                r
            }
        };
        if slot < 1 << 16 {
            if self.by_pc.len() <= slot {
                self.by_pc.resize(slot + 1, None);
            }
            self.by_pc[slot] = Some((opcode.into(), mem_width, r));
        }
        r
    }
}

/// A token of an instruction line as text (tokens are cut at ASCII whitespace of valid UTF-8, so
/// they are valid UTF-8 themselves).
fn text(t: &[u8]) -> &str {
    std::str::from_utf8(t).unwrap_or("?")
}

/// The whitespace-separated fields of an instruction line (as `split_ascii_whitespace`).
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    #[inline(always)]
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = &self.b[self.at..];
        let s = rest.iter().position(|c| !c.is_ascii_whitespace())?;
        let len = rest[s..]
            .iter()
            .position(|c| c.is_ascii_whitespace())
            .unwrap_or(rest.len() - s);
        self.at += s + len;
        Some(&rest[s..s + len])
    }

    #[inline(always)]
    fn need(&mut self, what: &str) -> Result<&'a [u8], String> {
        match self.next() {
            Some(t) => Ok(t),
            None => Err(ends_early(what)),
        }
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.at) {
            if !c.is_ascii_whitespace() {
                break;
            }
            self.at += 1;
        }
    }

    /// Whether the field ends at `i` (a separator or the line's end).
    #[inline(always)]
    fn ends_at(&self, i: usize) -> bool {
        self.b.get(i).is_none_or(|c| c.is_ascii_whitespace())
    }

    /// The fast path of the common fields: the next field when it is 1 to `max` digits of base
    /// `radix` (hex digits read through [`HEX`]) after `skip` prefix bytes, read while scanning;
    /// `None` leaves the cursor at the field, for the general reader (and its error).
    #[inline(always)]
    fn digits_fast(&mut self, skip: usize, hex: bool, max: usize) -> Option<u64> {
        self.skip_ws();
        let start = self.at + skip;
        let mut v = 0u64;
        let mut i = start;
        while let Some(&c) = self.b.get(i) {
            let d = HEX[c as usize];
            if d > 15 || (!hex && d > 9) {
                break;
            }
            v = if hex { v << 4 } else { v * 10 } + d as u64;
            i += 1;
        }
        if i == start || i - start > max || !self.ends_at(i) {
            return None;
        }
        self.at = i;
        Some(v)
    }

    /// A hex field without prefix (PC, mask).
    #[inline(always)]
    fn hex(&mut self, what: &str) -> Result<Option<u64>, String> {
        if let Some(v) = self.digits_fast(0, true, 16) {
            return Ok(Some(v));
        }
        Ok(hex_digits(self.need(what)?))
    }

    /// A small unsigned decimal field (counts, the memory width).
    #[inline(always)]
    fn dec(&mut self, what: &str) -> Result<(Option<u64>, &'a [u8]), String> {
        self.skip_ws();
        let start = self.at;
        if let Some(v) = self.digits_fast(0, false, 18) {
            return Ok((Some(v), &self.b[start..self.at]));
        }
        let t = self.need(what)?;
        Ok((dec(t), t))
    }

    /// A register field.
    #[inline(always)]
    fn reg(&mut self, what: &str) -> Result<Option<TraceReg>, String> {
        self.skip_ws();
        let b = &self.b[self.at..];
        let (base, max, skip) = match b {
            [b'R', ..] => (0, 255, 1),
            [b'U', b'R', ..] => (264, 63, 2),
            [b'P', ..] => (256, 7, 1),
            [b'U', b'P', ..] => (328, 7, 2),
            _ => (0, 0, 0),
        };
        if skip > 0 {
            if matches!(b.get(skip), Some(b'Z' | b'T')) && self.ends_at(self.at + skip + 1) {
                self.at += skip + 1;
                return Ok(None);
            }
            let at = self.at;
            if let Some(v) = self.digits_fast(skip, false, 3) {
                if v <= max {
                    return Ok(Some(base + v as u16));
                }
                self.at = at;
            }
        }
        parse_reg(self.need(what)?)
    }

    /// An address field (`0x` and hex digits).
    #[inline(always)]
    fn addr(&mut self, what: &str) -> Result<u64, String> {
        self.skip_ws();
        if self.b[self.at..].starts_with(b"0x") {
            if let Some(v) = self.digits_fast(2, true, 16) {
                return Ok(v);
            }
        }
        let s = self.need(what)?;
        hex_bytes(s).ok_or_else(|| format!("`{}` is not a hex address", text(s)))
    }
}

#[cold]
fn ends_early(what: &str) -> String {
    format!("instruction line ends early: expected {what}")
}

/// Decimal digits without sign, as `str::parse` of an unsigned type reads them after its sign.
#[inline]
fn digits(d: &[u8]) -> Option<u64> {
    if d.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in d {
        let x = c.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(x as u64)?;
    }
    Some(v)
}

/// An unsigned decimal as `str::parse::<u64>` reads it (an optional `+`).
#[inline]
fn dec(t: &[u8]) -> Option<u64> {
    digits(t.strip_prefix(b"+").unwrap_or(t))
}

/// A signed decimal as `str::parse::<i64>` reads it.
fn dec_i64(t: &[u8]) -> Option<i64> {
    match t {
        [b'-', rest @ ..] => {
            let v = digits(rest)?;
            if v <= 1 << 63 {
                Some((v as i64).wrapping_neg())
            } else {
                None
            }
        }
        _ => i64::try_from(dec(t)?).ok(),
    }
}

/// A hex number without prefix (PCs, masks): the digits, at most 16 significant ones.
#[inline]
fn hex_digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let s = if s.len() > 16 {
        let z = s.iter().position(|&c| c != b'0').unwrap_or(s.len());
        match &s[z..] {
            [] => return Some(0),
            t if t.len() > 16 => return None,
            t => t,
        }
    } else {
        s
    };
    let mut v = 0u64;
    for &c in s {
        let d = HEX[c as usize];
        if d > 15 {
            return None;
        }
        v = v << 4 | d as u64;
    }
    Some(v)
}

/// Value of each hex digit byte; 255 for any other byte.
pub(crate) const HEX: [u8; 256] = {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// A hex number with or without `0x`.
pub(crate) fn parse_hex(s: &str) -> Option<u64> {
    hex_bytes(s.as_bytes())
}

#[inline]
fn hex_bytes(s: &[u8]) -> Option<u64> {
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .unwrap_or(s);
    hex_digits(s)
}

#[cold]
fn parse_reg(tok: &[u8]) -> Result<Option<TraceReg>, String> {
    let (base, max, n) = match tok {
        [b'U', b'R', n @ ..] => (264, 63, n),
        [b'U', b'P', n @ ..] => (328, 7, n),
        [b'R', n @ ..] => (0, 255, n),
        [b'P', n @ ..] => (256, 7, n),
        _ => {
            return Err(format!(
                "`{}` is not a register (R, P, UR or UP)",
                text(tok)
            ))
        }
    };
    match n {
        // RZ, PT, URZ, UPT: constant registers, no dependency.
        b"Z" | b"T" => Ok(None),
        n => match dec(n) {
            Some(v) if v <= max => Ok(Some(base + v as u16)),
            _ => Err(format!(
                "`{}` is not a register (R, P, UR or UP)",
                text(tok)
            )),
        },
    }
}

/// The field that starts at or after byte `at` of `l` (for an error message).
fn token_at(l: &[u8], at: usize) -> &[u8] {
    Fields { b: l, at }.next().unwrap_or_default()
}

/// An instruction line's fields, as [`parse_inst`] or the one-pass reader (`scan.rs`) reads them;
/// its registers and addresses are in the block's arenas already, from `regs_at` and `addrs_at`.
pub(crate) struct InstFields<'a> {
    pub(crate) pc: u32,
    pub(crate) mask: u32,
    pub(crate) opcode: &'a [u8],
    pub(crate) mem_width: u32,
    pub(crate) nd: u8,
    pub(crate) ns: u8,
    pub(crate) strided: bool,
    pub(crate) regs_at: u32,
    pub(crate) addrs_at: u32,
}

/// Parses one instruction line (trimmed) into block `b`'s arenas: the general reader, for every
/// form the format allows and with the error for every line it does not.
pub(crate) fn parse_inst(
    l: &[u8],
    lineinfo: bool,
    lineno: u32,
    b: &mut OpenBlock,
    ops: &mut OpCache,
) -> Result<(), InstError> {
    let f = fields(l, lineinfo, b)?;
    // Where the opcode starts in `l` (it is a slice of it).
    let at = f.opcode.as_ptr() as usize - l.as_ptr() as usize;
    let opcode = f.opcode;
    push_inst(f, lineno, b, ops).map_err(|kind| InstError {
        at: Some(at),
        message: format!(
            "`{}` is a {kind} instruction: the texture and surface path is not modelled \
             (a trace run models global, local and shared memory only)",
            text(opcode)
        ),
    })
}

/// Why an instruction line was refused, and where in the (trimmed) line: the byte offset of the
/// field it is about, when it is about one.
#[derive(Debug)]
pub(crate) struct InstError {
    pub(crate) at: Option<usize>,
    pub(crate) message: String,
}

impl From<String> for InstError {
    fn from(message: String) -> InstError {
        InstError { at: None, message }
    }
}

/// Reads the fields of line `l` (its registers and addresses into `b`'s arenas).
fn fields<'a>(l: &'a [u8], lineinfo: bool, b: &mut OpenBlock) -> Result<InstFields<'a>, String> {
    let mut t = Fields { b: l, at: 0 };
    if lineinfo {
        t.need("a source line number")?;
    }
    let at = t.at;
    let pc = t
        .hex("the PC")?
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{}` is not a hex PC", text(token_at(l, at))))?;
    let at = t.at;
    let mask = t
        .hex("the active mask")?
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{}` is not a hex mask", text(token_at(l, at))))?;
    let count = |(v, s): (Option<u64>, &[u8]), what: &str| {
        v.and_then(|v| u8::try_from(v).ok())
            .ok_or_else(|| format!("`{}` is not a {what} count", text(s)))
    };
    let ndst = count(t.dec("the destination count")?, "destination")?;
    let regs_at = b.regs.len() as u32;
    let mut nd = 0u8;
    for _ in 0..ndst {
        if let Some(r) = t.reg("a destination register")? {
            b.regs.push(r);
            nd += 1;
        }
    }
    let opcode = t.need("the opcode")?;
    if !opcode[0].is_ascii_uppercase() {
        return Err(format!("`{}` is not an opcode", text(opcode)));
    }
    let nsrc = count(t.dec("the source count")?, "source")?;
    let mut ns = 0u8;
    for _ in 0..nsrc {
        if let Some(r) = t.reg("a source register")? {
            b.regs.push(r);
            ns += 1;
        }
    }
    let (w, w_s) = t.dec("the memory width")?;
    let mem_width: u32 = w
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{}` is not a memory width", text(w_s)))?;
    let addrs_at = b.addrs.len() as u32;
    let mut strided = false;
    let active = mask.count_ones() as usize;
    if mem_width > 0 && active > 0 {
        let mode = t.need("the address mode (0, 1 or 2)")?;
        let dec = |s: &[u8]| {
            dec_i64(s).ok_or_else(|| format!("`{}` is not a decimal stride or delta", text(s)))
        };
        match mode {
            b"0" => {
                for _ in 0..active {
                    let a = t.addr("one address per active lane")?;
                    b.addrs.push(a);
                }
            }
            b"1" => {
                // Kept compressed: the most common form, 2 words instead of one per lane.
                let base = t.addr("the base address")?;
                let stride = dec(t.need("the stride")?)?;
                // The last active lane's address must stay in 0 ..= 2^64 - 1 (issue 43: wrapped).
                let last = base as i128 + stride as i128 * (active as i128 - 1);
                if u64::try_from(last).is_err() {
                    return Err(format!(
                        "base address 0x{base:x} with stride {stride} over {active} active lanes \
                         reaches {}, outside 0 ..= 2^64 - 1",
                        if last < 0 {
                            format!("-0x{:x}", -last)
                        } else {
                            format!("0x{last:x}")
                        }
                    ));
                }
                b.addrs.push(base);
                b.addrs.push(stride as u64);
                strided = true;
            }
            b"2" => {
                let mut a = t.addr("the base address")?;
                b.addrs.push(a);
                for _ in 1..active {
                    let d = dec(t.need("one delta per further active lane")?)?;
                    a = a.checked_add_signed(d).ok_or_else(|| {
                        format!(
                            "address 0x{a:x} plus delta {d} is outside 0 ..= 2^64 - 1 (addresses \
                             do not wrap)"
                        )
                    })?;
                    b.addrs.push(a);
                }
            }
            m => return Err(format!("address mode `{}`: expected 0, 1 or 2", text(m))),
        }
    }
    // An optional immediate may follow; anything more is a malformed line.
    if t.next().is_some() && t.next().is_some() {
        return Err(format!(
            "unexpected fields at the end of the instruction line (the address list is longer than the \
             {active} active lanes of mask {mask:08x}?)"
        ));
    }
    Ok(InstFields {
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

/// Adds the instruction whose fields are `f` (line `lineno`) to block `b`; a texture or surface
/// instruction is refused (`Err("texture")` or `Err("surface")`), leaving `b` as it was but for the
/// arenas the caller truncates.
#[inline(always)]
pub(crate) fn push_inst(
    f: InstFields,
    lineno: u32,
    b: &mut OpenBlock,
    ops: &mut OpCache,
) -> Result<(), &'static str> {
    let InstFields {
        pc,
        mask,
        opcode,
        mem_width,
        nd,
        ns,
        strided,
        regs_at,
        addrs_at,
    } = f;
    let (mut op, known, refused) = ops.classify(pc, opcode, mem_width);
    if let Some(kind) = refused {
        return Err(kind);
    }
    let active = mask.count_ones();
    b.threads += active as u64;
    if !known {
        let name = text(opcode);
        match b.unknown.iter_mut().find(|u| u.0 == name) {
            Some(u) => u.1 += 1,
            None => b.unknown.push((name.to_string(), 1)),
        }
    }
    if matches!(op, TraceOp::Mem(_)) && (mem_width == 0 || active == 0) {
        // No lane touched memory (predicated off): only the issue slot is spent.
        op = TraceOp::Compute(LatencyClass::IntAlu);
    }
    b.insts.push(TraceInst {
        pc,
        mask,
        op,
        regs: b.first + b.insts.len() as u32,
        reg_at: regs_at,
        ndst: nd,
        nsrc: ns,
        strided,
        addrs: addrs_at,
        line: lineno,
    });
    Ok(())
}
