//! What [`Inst::Math`](super::Inst::Math) computes: PTX's bit operations (PTX ISA §9.7.1, §9.7.7:
//! `popc`, `clz`, `brev`, `bfe`, `bfi`, `bfind`, `prmt`, `lop3`, `shf`, `dp4a`) and the
//! floating-point instructions with a rounding mode, `.sat`, `.ftz` or a function (§9.7.3).
//!
//! Rounding: an f32 result is computed exactly or as a double-precision value rounded to odd
//! (enough bits for one correct rounding to f32 afterwards: 53 ≥ 24 + 2), then rounded to f32 by
//! the mode, so `.rn .rz .rm .rp` are the IEEE 754 roundings of the exact result, `fma` rounded
//! once. The `.approx` functions (`rsqrt`, `ex2`, `lg2`, `sin`, `cos`, `tanh`, and `.approx`
//! `sqrt`/`rcp`/`div`) are computed in double precision and rounded to nearest: within the error
//! the ISA states, not the bits a GPU's approximation gives. A NaN result is the canonical NaN
//! `0x7FFFFFFF` (PTX ISA: "NaN results are canonical"). `.ftz` flushes subnormal inputs and
//! results to a zero of the same sign; `.sat` clamps to [0, 1] with NaN to +0.
//!
//! f32 is the only floating-point type here (the IR has no f64 value yet); a float operation of
//! another type computes on the f32 of its low bits (the front ends only build f32 ones).

use super::{bits_f32, f32_bits, Ty};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Rounding of a floating-point result (PTX ISA §9.7.3 "Rounding modifiers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Round {
    /// To nearest, ties to even (`.rn`, `.rni`).
    #[default]
    Nearest,
    /// Toward zero (`.rz`, `.rzi`).
    Zero,
    /// Toward minus infinity (`.rm`, `.rmi`).
    Down,
    /// Toward plus infinity (`.rp`, `.rpi`).
    Up,
}

/// The modifiers of a floating-point [`Inst::Math`](super::Inst::Math): rounding, `.sat` (clamp to [0, 1], NaN to 0)
/// and `.ftz` (subnormal inputs and results flushed to a zero of the same sign).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FloatMode {
    pub round: Round,
    pub sat: bool,
    pub ftz: bool,
}

/// How `prmt` picks its bytes (PTX ISA `prmt`): the general form or one of the six modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrmtMode {
    /// Each nibble of the selector picks a byte (bit 3: replicate its sign).
    Generic,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// The operations of [`Inst::Math`](super::Inst::Math): PTX's bit operations and the floating-point instructions
/// that need more than the two-operand [`AluOp`] (a third operand, a rounding mode, `.sat`,
/// `.ftz`, or a function). What each computes is `ir::eval::math`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MathOp {
    /// Population count of `a` (result u32).
    Popc,
    /// Leading zeros of `a` (result u32).
    Clz,
    /// Bit reversal of `a`.
    Brev,
    /// Bit-field extract: `a`, position `b`, length `c` (sign-extended for signed types).
    Bfe,
    /// Bit-field insert: `a` into `b` at position `c`, length `d`.
    Bfi,
    /// Position of the most significant non-sign bit (`shift_amt`: as a left-shift amount);
    /// `0xFFFFFFFF` when there is none.
    Bfind {
        shift_amt: bool,
    },
    /// Byte permute of `{b, a}` by selector `c`.
    Prmt(PrmtMode),
    /// Three-input logic `a`, `b`, `c` by the truth table `lut`.
    Lop3 {
        lut: u8,
    },
    /// Funnel shift of `{b, a}` by `c` (32-bit): left or right, amount wrapped or clamped.
    Shf {
        left: bool,
        clamp: bool,
    },
    /// Four-way byte dot product of `a` and `b` accumulated into `c`, bytes signed as given.
    Dp4a {
        a_signed: bool,
        b_signed: bool,
    },
    /// Floating-point add, sub, mul, div with a rounding mode, `.sat`, `.ftz`.
    FAdd,
    FSub,
    FMul,
    FDiv,
    /// Fused multiply-add `a * b + c`, rounded once.
    Fma,
    /// Square root, correctly rounded.
    Sqrt,
    /// Reciprocal, correctly rounded.
    Rcp,
    /// `.approx` functions: computed in double precision and rounded to nearest (within the error
    /// bounds the ISA states; not bit-identical to a GPU's approximation).
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    /// `min`/`max` (`nan`: a NaN operand gives NaN; otherwise the other operand); -0 < +0.
    FMin {
        nan: bool,
    },
    FMax {
        nan: bool,
    },
    FAbs,
    FNeg,
    /// `copysign d, a, b`: `b` with the sign of `a`.
    Copysign,
    /// Rounds to an integral value in the same float type (`cvt.rni.f32.f32`).
    RoundInt,
}

/// The canonical NaN of an f32 result.
pub const CANONICAL_NAN_F32: u32 = 0x7FFF_FFFF;

/// The result of `op` on raw register bits `a` (and `b`, `c`, `d` where it takes them).
pub fn math(op: MathOp, ty: Ty, mode: FloatMode, x: [u64; 4]) -> u64 {
    let [a, b, c, d] = x;
    let wide = ty.width() == super::Width::B64;
    let bits = if wide { 64 } else { 32 };
    let mask = ty.width().mask();
    let signed = matches!(ty, Ty::I32 | Ty::I64);
    match op {
        MathOp::Popc => (a & mask).count_ones() as u64,
        MathOp::Clz => {
            if wide {
                a.leading_zeros() as u64
            } else {
                (a as u32).leading_zeros() as u64
            }
        }
        MathOp::Brev => {
            if wide {
                a.reverse_bits()
            } else {
                (a as u32).reverse_bits() as u64
            }
        }
        MathOp::Bfe => bfe(a & mask, b, c, bits, signed) & mask,
        MathOp::Bfi => bfi(a & mask, b & mask, c, d, bits) & mask,
        MathOp::Bfind { shift_amt } => {
            // Signed: the most significant bit that differs from the sign.
            let v = if signed && (a >> (bits - 1)) & 1 == 1 {
                !a & mask
            } else {
                a & mask
            };
            if v == 0 {
                0xFFFF_FFFF
            } else {
                let msb = 63 - v.leading_zeros() as u64;
                if shift_amt {
                    (bits as u64 - 1) - msb
                } else {
                    msb
                }
            }
        }
        MathOp::Prmt(m) => prmt(m, a as u32, b as u32, c as u32) as u64,
        MathOp::Lop3 { lut } => {
            let (a, b, c) = (a & mask, b & mask, c & mask);
            let mut r = 0u64;
            for i in 0..8u8 {
                if lut >> i & 1 == 1 {
                    let pa = if i & 4 != 0 { a } else { !a };
                    let pb = if i & 2 != 0 { b } else { !b };
                    let pc = if i & 1 != 0 { c } else { !c };
                    r |= pa & pb & pc;
                }
            }
            r & mask
        }
        MathOp::Shf { left, clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 31
            };
            let v = ((b as u32 as u64) << 32) | a as u32 as u64;
            if left {
                ((v << n) >> 32) as u32 as u64
            } else {
                (v >> n) as u32 as u64
            }
        }
        MathOp::Dp4a { a_signed, b_signed } => {
            let byte = |v: u64, i: u32, s: bool| -> i64 {
                let x = (v >> (8 * i)) as u8;
                if s {
                    x as i8 as i64
                } else {
                    x as i64
                }
            };
            let mut acc = c as u32 as i64;
            for i in 0..4 {
                acc = acc.wrapping_add(byte(a, i, a_signed) * byte(b, i, b_signed));
            }
            acc as u32 as u64
        }
        _ => f32_bits_out(float(op, mode, [a, b, c].map(|v| in_f32(v, mode.ftz)))),
    }
}

fn bfe(a: u64, b: u64, c: u64, bits: u32, signed: bool) -> u64 {
    let msb = bits - 1;
    let pos = (b & 0xFF) as u32;
    let len = (c & 0xFF) as u32;
    let bit = |i: u32| (a >> i) & 1;
    let sbit = if !signed || len == 0 {
        0
    } else {
        bit((pos + len - 1).min(msb))
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d |= v << i;
    }
    d
}

fn bfi(a: u64, b: u64, c: u64, d: u64, bits: u32) -> u64 {
    let msb = bits - 1;
    let pos = (c & 0xFF) as u32;
    let len = (d & 0xFF) as u32;
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

fn prmt(m: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    let src = ((b as u64) << 32) | a as u64;
    let byte = |i: u32| (src >> (8 * (i & 7))) as u8;
    let s = c & 3;
    let pick = |i: u32| -> u8 {
        match m {
            PrmtMode::Generic => {
                let sel = (c >> (4 * i)) & 0xF;
                let v = byte(sel & 7);
                if sel & 8 != 0 {
                    if v & 0x80 != 0 {
                        0xFF
                    } else {
                        0
                    }
                } else {
                    v
                }
            }
            PrmtMode::F4e => byte(s + i),
            PrmtMode::B4e => byte((s + 8 - i) & 7),
            PrmtMode::Rc8 => byte(s),
            PrmtMode::Ecl => byte(i.max(s)),
            PrmtMode::Ecr => byte(i.min(s)),
            PrmtMode::Rc16 => byte((s & 1) * 2 + (i & 1)),
        }
    };
    (0..4).fold(0u32, |r, i| r | (pick(i) as u32) << (8 * i))
}

/// An f32 operand, flushed when `.ftz` says so.
fn in_f32(v: u64, ftz: bool) -> f32 {
    let x = bits_f32(v);
    if ftz && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn f32_bits_out(x: f32) -> u64 {
    if x.is_nan() {
        CANONICAL_NAN_F32 as u64
    } else {
        f32_bits(x)
    }
}

/// The next double after `x` toward plus (`up`) or minus infinity.
fn step(x: f64, up: bool) -> f64 {
    if x.is_nan() || x.is_infinite() {
        return x;
    }
    if x == 0.0 {
        let t = f64::from_bits(1);
        return if up { t } else { -t };
    }
    let b = x.to_bits();
    let away = (x > 0.0) == up;
    f64::from_bits(if away { b + 1 } else { b - 1 })
}

/// The sign of `exact - x` from an error term (0 when exact).
fn sign(e: f64) -> Ordering {
    e.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// Rounds the exact value `x + (sign of the error err)` to f32 by `round`: first to a double
/// rounded to odd, then once to f32.
fn to_f32(x: f64, err: Ordering, round: Round) -> f32 {
    let mut x = x;
    if err != Ordering::Equal && x.is_finite() && x.to_bits() & 1 == 0 {
        x = step(x, err == Ordering::Greater);
    }
    let r = x as f32;
    if x.is_nan() || r as f64 == x {
        return r;
    }
    let next = |r: f32, up: bool| -> f32 {
        if r.is_infinite() {
            // Overflow rounded away from the mode's direction: the largest finite value.
            return f32::MAX.copysign(r);
        }
        let b = r.to_bits();
        if r == 0.0 {
            let t = f32::from_bits(1);
            return if up { t } else { -t };
        }
        let away = (r > 0.0) == up;
        f32::from_bits(if away { b + 1 } else { b - 1 })
    };
    match round {
        Round::Nearest => r,
        Round::Zero if (r as f64).abs() > x.abs() => next(r, r < 0.0),
        Round::Down if (r as f64) > x => next(r, false),
        Round::Up if (r as f64) < x => next(r, true),
        _ => r,
    }
}

/// Two-sum: the rounded sum and the sign of its error.
fn two_sum(a: f64, b: f64) -> (f64, Ordering) {
    let s = a + b;
    if !s.is_finite() {
        return (s, Ordering::Equal);
    }
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, sign(e))
}

fn quotient(a: f64, b: f64) -> (f64, Ordering) {
    let q = a / b;
    if !q.is_finite() || q == 0.0 || !a.is_finite() || !b.is_finite() {
        return (q, Ordering::Equal);
    }
    let r = (-q).mul_add(b, a);
    let e = if b < 0.0 { -r } else { r };
    (q, sign(e))
}

fn fmin(a: f32, b: f32, nan: bool, max: bool) -> f32 {
    if a.is_nan() || b.is_nan() {
        return if nan || (a.is_nan() && b.is_nan()) {
            f32::NAN
        } else if a.is_nan() {
            b
        } else {
            a
        };
    }
    if a == 0.0 && b == 0.0 {
        // -0 orders below +0.
        let neg = a.is_sign_negative();
        return if (neg == b.is_sign_negative()) || (neg != max) {
            a
        } else {
            b
        };
    }
    if (a < b) != max {
        a
    } else {
        b
    }
}

fn float(op: MathOp, m: FloatMode, x: [f32; 3]) -> f32 {
    let [a, b, c] = x.map(|v| v as f64);
    let rn = |v: f64| v as f32;
    let r = match op {
        MathOp::FAdd => {
            let (s, e) = two_sum(a, b);
            to_f32(s, e, m.round)
        }
        MathOp::FSub => {
            let (s, e) = two_sum(a, -b);
            to_f32(s, e, m.round)
        }
        // The product of two f32 is exact in f64.
        MathOp::FMul => to_f32(a * b, Ordering::Equal, m.round),
        MathOp::FDiv => {
            let (q, e) = quotient(a, b);
            to_f32(q, e, m.round)
        }
        MathOp::Rcp => {
            let (q, e) = quotient(1.0, a);
            to_f32(q, e, m.round)
        }
        MathOp::Fma => {
            let (s, e) = two_sum(a * b, c);
            to_f32(s, e, m.round)
        }
        MathOp::Sqrt => {
            let s = a.sqrt();
            let e = if s.is_finite() && s > 0.0 {
                sign((-s).mul_add(s, a))
            } else {
                Ordering::Equal
            };
            to_f32(s, e, m.round)
        }
        MathOp::Rsqrt => rn(1.0 / a.sqrt()),
        MathOp::Ex2 => rn(a.exp2()),
        MathOp::Lg2 => rn(a.log2()),
        MathOp::Sin => rn(a.sin()),
        MathOp::Cos => rn(a.cos()),
        MathOp::Tanh => rn(a.tanh()),
        MathOp::FMin { nan } => fmin(x[0], x[1], nan, false),
        MathOp::FMax { nan } => fmin(x[0], x[1], nan, true),
        MathOp::FAbs => x[0].abs(),
        MathOp::FNeg => -x[0],
        MathOp::Copysign => x[1].copysign(x[0]),
        MathOp::RoundInt => match m.round {
            Round::Nearest => x[0].round_ties_even(),
            Round::Zero => x[0].trunc(),
            Round::Down => x[0].floor(),
            Round::Up => x[0].ceil(),
        },
        _ => unreachable!("math() handles the integer operations"),
    };
    let r = if m.ftz && r.is_subnormal() {
        0.0f32.copysign(r)
    } else {
        r
    };
    if m.sat {
        if r.is_nan() {
            0.0
        } else {
            r.clamp(0.0, 1.0)
        }
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(op: MathOp, ty: Ty, a: u64, b: u64, c: u64, d: u64) -> u64 {
        math(op, ty, FloatMode::default(), [a, b, c, d])
    }
    fn f(op: MathOp, round: Round, x: [f32; 3]) -> f32 {
        let mode = FloatMode {
            round,
            ..Default::default()
        };
        bits_f32(math(
            op,
            Ty::F32,
            mode,
            [x[0], x[1], x[2], 0.0].map(f32_bits),
        ))
    }

    #[test]
    fn bit_counts_and_reversal() {
        assert_eq!(m(MathOp::Popc, Ty::U32, 0xFFFF_FFFF_0000_00F0, 0, 0, 0), 4);
        assert_eq!(m(MathOp::Popc, Ty::U64, u64::MAX, 0, 0, 0), 64);
        assert_eq!(m(MathOp::Clz, Ty::U32, 1, 0, 0, 0), 31);
        assert_eq!(m(MathOp::Clz, Ty::U32, 0, 0, 0, 0), 32);
        assert_eq!(m(MathOp::Clz, Ty::U64, 1, 0, 0, 0), 63);
        assert_eq!(m(MathOp::Brev, Ty::U32, 1, 0, 0, 0), 0x8000_0000);
        assert_eq!(
            m(MathOp::Brev, Ty::U64, 0b110, 0, 0, 0),
            0x6000_0000_0000_0000
        );
        let bf = |v: u64, ty, s| m(MathOp::Bfind { shift_amt: s }, ty, v, 0, 0, 0);
        assert_eq!(bf(0x10, Ty::U32, false), 4);
        assert_eq!(bf(0x10, Ty::U32, true), 27);
        assert_eq!(bf(0, Ty::U32, false), 0xFFFF_FFFF);
        // Signed: -1 has no non-sign bit; -16 = ...1110000: bit 3 is the last one that is not sign.
        assert_eq!(bf(0xFFFF_FFFF, Ty::I32, false), 0xFFFF_FFFF);
        assert_eq!(bf((-16i32) as u32 as u64, Ty::I32, false), 3);
    }

    #[test]
    fn bit_field_extract_and_insert_follow_the_isa_pseudocode() {
        assert_eq!(m(MathOp::Bfe, Ty::U32, 0xABCD_1234, 8, 8, 0), 0x12);
        // Signed: the top extracted bit is replicated.
        assert_eq!(m(MathOp::Bfe, Ty::I32, 0x0000_F000, 12, 4, 0), 0xFFFF_FFFF);
        assert_eq!(m(MathOp::Bfe, Ty::I32, 0x0000_7000, 12, 4, 0), 7);
        // Length 0 gives 0; a field past the msb takes the bits there are (sign = bit 31).
        assert_eq!(m(MathOp::Bfe, Ty::I32, 0xFFFF_FFFF, 4, 0, 0), 0);
        assert_eq!(m(MathOp::Bfe, Ty::I32, 0x8000_0000, 28, 8, 0), 0xFFFF_FFF8);
        assert_eq!(m(MathOp::Bfe, Ty::U32, 0x8000_0000, 28, 8, 0), 8);
        assert_eq!(m(MathOp::Bfi, Ty::U32, 0xF, 0xFFFF_0000, 4, 8), 0xFFFF_00F0);
        assert_eq!(m(MathOp::Bfi, Ty::U32, 0xFF, 0, 28, 8), 0xF000_0000);
        assert_eq!(m(MathOp::Bfi, Ty::U64, 1, 0, 63, 1), 1 << 63);
    }

    #[test]
    fn byte_permute_in_every_mode() {
        let (a, b) = (0x3322_1100u64, 0x7766_5544u64);
        let p = |mode, c| m(MathOp::Prmt(mode), Ty::U32, a, b, c, 0);
        assert_eq!(p(PrmtMode::Generic, 0x3210), 0x3322_1100);
        assert_eq!(p(PrmtMode::Generic, 0x7654), 0x7766_5544);
        assert_eq!(p(PrmtMode::Generic, 0x0123), 0x0011_2233);
        // Bit 3 of a selector replicates the byte's sign: 0x77 is positive, 0x80 would be 0xFF.
        assert_eq!(
            m(MathOp::Prmt(PrmtMode::Generic), Ty::U32, 0x80, 0, 0x8888, 0),
            0xFFFF_FFFF
        );
        assert_eq!(p(PrmtMode::F4e, 1), 0x4433_2211);
        assert_eq!(p(PrmtMode::B4e, 0), 0x5566_7700);
        assert_eq!(p(PrmtMode::Rc8, 2), 0x2222_2222);
        assert_eq!(p(PrmtMode::Ecl, 1), 0x3322_1111);
        assert_eq!(p(PrmtMode::Ecr, 2), 0x2222_1100);
        assert_eq!(p(PrmtMode::Rc16, 1), 0x3322_3322);
    }

    #[test]
    fn three_input_logic_funnel_shifts_and_dot_products() {
        let lop = |lut, a, b, c| m(MathOp::Lop3 { lut }, Ty::U32, a, b, c, 0);
        // The ISA's constants: a = 0xF0, b = 0xCC, c = 0xAA make the table itself.
        assert_eq!(lop(0x80, 0xF0, 0xCC, 0xAA), 0x80);
        assert_eq!(lop(0x96, 0xF0, 0xCC, 0xAA), 0xF0 ^ 0xCC ^ 0xAA);
        assert_eq!(lop(0xFE, 0x1, 0x2, 0x4), 0x7);
        let shf = |left, clamp, a, b, c| m(MathOp::Shf { left, clamp }, Ty::U32, a, b, c, 0);
        assert_eq!(shf(true, false, 0x8000_0000, 0x1, 1), 0x3);
        assert_eq!(shf(false, false, 0x0, 0x1, 1), 0x8000_0000);
        assert_eq!(
            shf(false, false, 0x0, 0x1, 33),
            0x8000_0000,
            "wrap: 33 is 1"
        );
        assert_eq!(shf(false, true, 0x0, 0x1, 40), 0x1, "clamp: 32 takes b");
        let dp = |s| {
            m(
                MathOp::Dp4a {
                    a_signed: s,
                    b_signed: s,
                },
                Ty::U32,
                0xFF02_0304,
                0x0101_0101,
                10,
                0,
            )
        };
        assert_eq!(dp(false), 10 + 0xFF + 2 + 3 + 4);
        assert_eq!(dp(true), 10 - 1 + 2 + 3 + 4);
    }

    #[test]
    fn directed_rounding_is_the_ieee_rounding_of_the_exact_result() {
        let one_third_dn = f(MathOp::FDiv, Round::Down, [1.0, 3.0, 0.0]);
        let one_third_up = f(MathOp::FDiv, Round::Up, [1.0, 3.0, 0.0]);
        assert_eq!(one_third_up.to_bits(), one_third_dn.to_bits() + 1);
        assert_eq!(
            f(MathOp::FDiv, Round::Nearest, [1.0, 3.0, 0.0]),
            1.0f32 / 3.0
        );
        assert_eq!(
            f(MathOp::FDiv, Round::Zero, [-1.0, 3.0, 0.0]),
            -one_third_dn
        );
        // 1 + 2^-30 is between 1 and its successor: rp goes up, rn/rz/rm stay at 1.
        let tiny = 2f32.powi(-30);
        assert_eq!(
            f(MathOp::FAdd, Round::Up, [1.0, tiny, 0.0]),
            1.0 + f32::EPSILON
        );
        assert_eq!(f(MathOp::FAdd, Round::Nearest, [1.0, tiny, 0.0]), 1.0);
        assert_eq!(
            f(MathOp::FSub, Round::Down, [1.0, tiny, 0.0]),
            1.0 - f32::EPSILON / 2.0
        );
        assert_eq!(
            f(MathOp::FSub, Round::Zero, [1.0, tiny, 0.0]),
            1.0 - f32::EPSILON / 2.0
        );
        // Overflow: rz gives the largest finite value, rn infinity.
        assert_eq!(f(MathOp::FMul, Round::Zero, [f32::MAX, 2.0, 0.0]), f32::MAX);
        assert_eq!(
            f(MathOp::FMul, Round::Nearest, [f32::MAX, 2.0, 0.0]),
            f32::INFINITY
        );
        assert_eq!(
            f(MathOp::Sqrt, Round::Nearest, [2.0, 0.0, 0.0]),
            2f32.sqrt()
        );
        let s_up = f(MathOp::Sqrt, Round::Up, [2.0, 0.0, 0.0]);
        let s_dn = f(MathOp::Sqrt, Round::Down, [2.0, 0.0, 0.0]);
        assert_eq!(s_up.to_bits(), s_dn.to_bits() + 1);
        assert_eq!(
            f(MathOp::Sqrt, Round::Up, [4.0, 0.0, 0.0]),
            2.0,
            "exact stays exact"
        );
        assert_eq!(f(MathOp::Rcp, Round::Nearest, [4.0, 0.0, 0.0]), 0.25);
    }

    #[test]
    fn fused_multiply_add_rounds_once() {
        // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: a separate multiply rounds away the 2^-24 term and the
        // add of -1 - 2^-11 gives 0; the fused one keeps it.
        let x = 1.0 + 2f32.powi(-12);
        let c = -(1.0 + 2f32.powi(-11));
        assert_eq!(x * x + c, 0.0);
        assert_eq!(f(MathOp::Fma, Round::Nearest, [x, x, c]), 2f32.powi(-24));
        assert_eq!(f(MathOp::Fma, Round::Nearest, [2.0, 3.0, 1.0]), 7.0);
    }

    #[test]
    fn sat_ftz_min_max_sign_and_functions() {
        let sat = FloatMode {
            sat: true,
            ..Default::default()
        };
        let ftz = FloatMode {
            ftz: true,
            ..Default::default()
        };
        let g = |op, mode, a: f32, b: f32| {
            bits_f32(math(op, Ty::F32, mode, [f32_bits(a), f32_bits(b), 0, 0]))
        };
        assert_eq!(g(MathOp::FAdd, sat, 0.75, 0.5), 1.0);
        assert_eq!(g(MathOp::FAdd, sat, -0.75, 0.5), 0.0);
        assert_eq!(
            g(MathOp::FMul, sat, f32::INFINITY, 0.0),
            0.0,
            "NaN saturates to 0"
        );
        let sub = f32::from_bits(1);
        assert_eq!(g(MathOp::FMul, ftz, sub, 1.0).to_bits(), 0);
        assert_eq!(g(MathOp::FMul, FloatMode::default(), sub, 1.0), sub);
        assert_eq!(
            g(MathOp::FMul, ftz, -sub, 1.0).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(
            g(
                MathOp::FMin { nan: false },
                FloatMode::default(),
                f32::NAN,
                2.0
            ),
            2.0
        );
        assert_eq!(
            math(
                MathOp::FMin { nan: true },
                Ty::F32,
                FloatMode::default(),
                [f32_bits(f32::NAN), f32_bits(2.0), 0, 0]
            ),
            CANONICAL_NAN_F32 as u64
        );
        assert_eq!(
            g(MathOp::FMin { nan: false }, FloatMode::default(), 0.0, -0.0).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(
            g(MathOp::FMax { nan: false }, FloatMode::default(), -0.0, 0.0).to_bits(),
            0
        );
        assert_eq!(
            g(MathOp::FMax { nan: false }, FloatMode::default(), -3.0, 2.0),
            2.0
        );
        assert_eq!(g(MathOp::Copysign, FloatMode::default(), -1.0, 2.5), -2.5);
        assert_eq!(g(MathOp::FAbs, FloatMode::default(), -2.5, 0.0), 2.5);
        assert_eq!(g(MathOp::FNeg, FloatMode::default(), 2.5, 0.0), -2.5);
        assert_eq!(g(MathOp::Ex2, FloatMode::default(), 3.0, 0.0), 8.0);
        assert_eq!(g(MathOp::Lg2, FloatMode::default(), 0.125, 0.0), -3.0);
        assert_eq!(g(MathOp::Rsqrt, FloatMode::default(), 0.25, 0.0), 2.0);
        assert_eq!(g(MathOp::Sin, FloatMode::default(), 0.0, 0.0), 0.0);
        assert_eq!(g(MathOp::Cos, FloatMode::default(), 0.0, 0.0), 1.0);
        let r = |round, v| {
            bits_f32(math(
                MathOp::RoundInt,
                Ty::F32,
                FloatMode {
                    round,
                    ..Default::default()
                },
                [f32_bits(v), 0, 0, 0],
            ))
        };
        assert_eq!(r(Round::Nearest, 2.5), 2.0);
        assert_eq!(r(Round::Nearest, -3.5), -4.0);
        assert_eq!(r(Round::Zero, -2.7), -2.0);
        assert_eq!(r(Round::Down, -2.1), -3.0);
        assert_eq!(r(Round::Up, 2.1), 3.0);
    }
}
