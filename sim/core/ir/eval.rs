//! What the IR's value operations compute, on raw register bits: arithmetic, compares, conversions,
//! and the value a read-modify-write or compare-exchange stores. The one definition that the
//! simulator's SMs and atomic units, the axiomatic oracle (`litmus::model`), the C front ends'
//! constant folding and the litmus lowering use; the shader translators (`device/wgsl`, `device/spirv`)
//! emit the same semantics and take the choices that are not obvious from here ([`operand_ty`],
//! [`shift_mask`], [`divide_faults`], [`float_rmw`]), so that no two of them can drift apart.
//!
//! Registers hold 64-bit patterns: a 32-bit result is zero-extended (signed ones too), an f32 lives
//! in the low 32 bits. Integer arithmetic wraps; shifts take their amount modulo the width; an integer
//! division or remainder by zero, or of the most negative value by -1, is a fault ([`alu`] gives
//! `None`; the machine stops the run there). Conversions from integers to f32 round once to the
//! nearest (ties to even); float to integer truncates and saturates (Rust `as`), NaN converts to 0.
//!
//! Read-modify-writes (CUDA atomic functions; OpenCL C 2.0 §6.13.11.7 `atomic_fetch_key`): integer
//! operations wrap; min/max compare as the type's signedness says; `inc`/`dec` are CUDA's
//! `atomicInc`/`atomicDec`; an f32 add, sub, min, max or exchange acts on the float, the other
//! operations leave an f32 word unchanged (the front ends reject them); compare-exchange compares the
//! type's bits.

use super::{bits_f32, f32_bits, AluOp, CmpOp, RmwOp, Ty};

/// The type an operation really computes in: f32 bitwise operations and shifts act on the bits, as
/// u32 (PTX has no f32 `and`; the kernel language allows it on the raw pattern).
#[inline]
pub fn operand_ty(op: AluOp, ty: Ty) -> Ty {
    match (ty, op) {
        (Ty::F32, AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Shl | AluOp::Shr) => Ty::U32,
        _ => ty,
    }
}

/// The bits of a shift amount that count: the amount wraps at the operand's width (Rust's
/// `wrapping_shl`; PTX clamps instead, a documented difference of the kernel language).
#[inline]
pub fn shift_mask(ty: Ty) -> u32 {
    ty.width().bytes() * 8 - 1
}

/// Whether an integer division or remainder of `a` by `b` (of type `ty`) is a fault: a zero
/// divisor, and for signed types the most negative value divided by -1 (whose quotient overflows).
#[inline]
pub fn divide_faults(ty: Ty, a: u64, b: u64) -> bool {
    match ty {
        Ty::U32 => b as u32 == 0,
        Ty::U64 => b == 0,
        Ty::I32 => (b as u32 as i32) == 0 || (a as u32 as i32 == i32::MIN && b as u32 as i32 == -1),
        Ty::I64 => b == 0 || (a as i64 == i64::MIN && b as i64 == -1),
        Ty::F32 => false,
    }
}

/// Whether an f32 read-modify-write of `op` acts on the float (add, sub, min, max, exchange); the
/// others leave an f32 word unchanged (the front ends reject them).
#[inline]
pub fn float_rmw(op: RmwOp) -> bool {
    matches!(
        op,
        RmwOp::Add | RmwOp::Sub | RmwOp::Min | RmwOp::Max | RmwOp::Exch
    )
}

fn sx32(x: u64) -> i64 {
    x as u32 as i32 as i64
}

/// The integer operations on two values of one Rust integer type; `$sh`: the shift amount as u32.
/// Division and remainder return early with `None` where they fault.
macro_rules! int_alu {
    ($op:expr, $x:expr, $y:expr, $sh:expr) => {
        match $op {
            AluOp::Add => $x.wrapping_add($y),
            AluOp::Sub => $x.wrapping_sub($y),
            AluOp::Mul => $x.wrapping_mul($y),
            AluOp::Div => $x.checked_div($y)?,
            AluOp::Rem => $x.checked_rem($y)?,
            AluOp::Min => $x.min($y),
            AluOp::Max => $x.max($y),
            AluOp::And => $x & $y,
            AluOp::Or => $x | $y,
            AluOp::Xor => $x ^ $y,
            AluOp::Shl => $x.wrapping_shl($sh),
            AluOp::Shr => $x.wrapping_shr($sh),
        }
    };
}

/// Two-operand arithmetic on raw register bits; `None` when [`divide_faults`].
#[inline]
pub fn alu(op: AluOp, ty: Ty, a: u64, b: u64) -> Option<u64> {
    let ty = operand_ty(op, ty);
    if matches!(op, AluOp::Div | AluOp::Rem) && divide_faults(ty, a, b) {
        return None;
    }
    Some(match ty {
        Ty::F32 => {
            let (x, y) = (bits_f32(a), bits_f32(b));
            let r = match op {
                AluOp::Add => x + y,
                AluOp::Sub => x - y,
                AluOp::Mul => x * y,
                AluOp::Div => x / y,
                AluOp::Rem => x % y,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Shl | AluOp::Shr => {
                    unreachable!("operand_ty makes f32 bit operations u32")
                }
            };
            f32_bits(r)
        }
        Ty::U32 => {
            let (x, y) = (a as u32, b as u32);
            int_alu!(op, x, y, y) as u64
        }
        Ty::I32 => {
            let (x, y) = (a as u32 as i32, b as u32 as i32);
            int_alu!(op, x, y, y as u32) as u32 as u64
        }
        Ty::U64 => int_alu!(op, a, b, b as u32),
        Ty::I64 => {
            let (x, y) = (a as i64, b as i64);
            int_alu!(op, x, y, y as u32) as u64
        }
    })
}

/// A compare on raw register bits (an unordered f32 compare — a NaN operand — holds only for `ne`).
#[inline]
pub fn cmp(op: CmpOp, ty: Ty, a: u64, b: u64) -> bool {
    use std::cmp::Ordering::*;
    let o = match ty {
        Ty::U32 => (a as u32).cmp(&(b as u32)),
        Ty::I32 => sx32(a).cmp(&sx32(b)),
        Ty::U64 => a.cmp(&b),
        Ty::I64 => (a as i64).cmp(&(b as i64)),
        Ty::F32 => match bits_f32(a).partial_cmp(&bits_f32(b)) {
            Some(o) => o,
            None => return op == CmpOp::Ne,
        },
    };
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
    }
}

/// A conversion (`cvt`) on raw register bits.
#[inline]
pub fn convert(v: u64, from: Ty, to: Ty) -> u64 {
    if to == Ty::F32 {
        // Rounded once to the nearest f32 (ties to even), as PTX `cvt.rn.f32.s64` and C do.
        let f = match from {
            Ty::U32 => (v as u32) as f32,
            Ty::I32 => (v as u32 as i32) as f32,
            Ty::U64 => v as f32,
            Ty::I64 => (v as i64) as f32,
            Ty::F32 => bits_f32(v),
        };
        return f32_bits(f);
    }
    if from == Ty::F32 {
        // Truncated toward zero, saturating at the type's range; NaN gives 0.
        let x = bits_f32(v);
        return match to {
            Ty::U32 => (x as u32) as u64,
            Ty::I32 => (x as i32) as u32 as u64,
            Ty::U64 => x as u64,
            Ty::I64 => (x as i64) as u64,
            Ty::F32 => unreachable!("handled above"),
        };
    }
    match to {
        Ty::U32 | Ty::I32 => v & 0xFFFF_FFFF,
        _ => match from {
            Ty::I32 => sx32(v) as u64,
            Ty::U32 => v & 0xFFFF_FFFF,
            _ => v,
        },
    }
}

/// The value a read-modify-write `op` with operand `v` stores over `old` (raw bits of `ty`).
pub fn rmw(op: RmwOp, ty: Ty, old: u64, v: u64) -> u64 {
    let mask = ty.width().mask();
    let (o, v) = (old & mask, v & mask);
    let r = if ty == Ty::F32 {
        let (a, b) = (bits_f32(o), bits_f32(v));
        match op {
            _ if !float_rmw(op) => o,
            RmwOp::Add => f32_bits(a + b),
            RmwOp::Sub => f32_bits(a - b),
            RmwOp::Min => f32_bits(a.min(b)),
            RmwOp::Max => f32_bits(a.max(b)),
            RmwOp::Exch => v,
            _ => unreachable!("float_rmw lists the f32 operations"),
        }
    } else {
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let sx = |x: u64| if ty == Ty::I32 { sx32(x) } else { x as i64 };
        match op {
            RmwOp::Add => o.wrapping_add(v),
            RmwOp::Sub => o.wrapping_sub(v),
            RmwOp::And => o & v,
            RmwOp::Or => o | v,
            RmwOp::Xor => o ^ v,
            RmwOp::Exch => v,
            RmwOp::Min => {
                if (signed && sx(v) < sx(o)) || (!signed && v < o) {
                    v
                } else {
                    o
                }
            }
            RmwOp::Max => {
                if (signed && sx(v) > sx(o)) || (!signed && v > o) {
                    v
                } else {
                    o
                }
            }
            RmwOp::Inc => {
                if o >= v {
                    0
                } else {
                    o + 1
                }
            }
            RmwOp::Dec => {
                if o == 0 || o > v {
                    v
                } else {
                    o - 1
                }
            }
        }
    };
    r & mask
}

/// The value a compare-exchange stores over `old`: `desired` when `old` equals `expected` in the
/// type's bits, else `old` unchanged (raw bits of `ty`).
#[inline]
pub fn cas(ty: Ty, old: u64, expected: u64, desired: u64) -> u64 {
    let m = ty.width().mask();
    if old & m == expected & m {
        desired & m
    } else {
        old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_32_bit_results_are_zero_extended() {
        assert_eq!(alu(AluOp::Add, Ty::U32, 0xFFFF_FFFF, 1), Some(0));
        assert_eq!(alu(AluOp::Add, Ty::I32, 0x7FFF_FFFF, 1), Some(0x8000_0000));
        assert_eq!(alu(AluOp::Sub, Ty::I32, 0, 1), Some(0xFFFF_FFFF));
        assert_eq!(alu(AluOp::Mul, Ty::U64, u64::MAX, 2), Some(u64::MAX - 1));
        assert_eq!(
            alu(AluOp::Min, Ty::I32, (-3i32) as u32 as u64, 2),
            Some(0xFFFF_FFFD)
        );
        assert_eq!(alu(AluOp::Min, Ty::U32, (-3i32) as u32 as u64, 2), Some(2));
        assert_eq!(
            alu(AluOp::Shr, Ty::I64, (-8i64) as u64, 1),
            Some((-4i64) as u64)
        );
        assert_eq!(alu(AluOp::Shr, Ty::U64, u64::MAX, 63), Some(1));
        // The high bits of a 32-bit operand do not count.
        assert_eq!(alu(AluOp::Add, Ty::U32, 0xAB_0000_0001, 1), Some(2));
    }

    #[test]
    fn division_by_zero_and_signed_overflow_fault() {
        assert_eq!(alu(AluOp::Div, Ty::U32, 7, 0), None);
        assert_eq!(alu(AluOp::Rem, Ty::I64, 7, 0), None);
        assert_eq!(
            alu(AluOp::Div, Ty::I32, i32::MIN as u32 as u64, u32::MAX as u64),
            None
        );
        assert!(divide_faults(Ty::I64, i64::MIN as u64, u64::MAX));
        assert_eq!(
            alu(AluOp::Div, Ty::I32, (-7i32) as u32 as u64, 2),
            Some((-3i32) as u32 as u64)
        );
        assert_eq!(
            alu(AluOp::Div, Ty::F32, f32_bits(1.0), f32_bits(0.0)),
            Some(f32_bits(f32::INFINITY))
        );
    }

    #[test]
    fn shifts_wrap_at_the_width_and_f32_bit_operations_act_on_the_bits() {
        assert_eq!(alu(AluOp::Shl, Ty::U32, 1, 33), Some(2));
        assert_eq!(alu(AluOp::Shl, Ty::U64, 1, 65), Some(2));
        assert_eq!(shift_mask(Ty::U32), 31);
        assert_eq!(shift_mask(Ty::I64), 63);
        let bits = f32_bits(-1.5);
        assert_eq!(
            alu(AluOp::And, Ty::F32, bits, 0x7FFF_FFFF),
            Some(f32_bits(1.5))
        );
        assert_eq!(operand_ty(AluOp::Add, Ty::F32), Ty::F32);
    }

    #[test]
    fn compares_and_conversions() {
        assert!(cmp(CmpOp::Lt, Ty::I32, (-1i32) as u32 as u64, 0));
        assert!(!cmp(CmpOp::Lt, Ty::U32, (-1i32) as u32 as u64, 0));
        let nan = f32_bits(f32::NAN);
        assert!(cmp(CmpOp::Ne, Ty::F32, nan, nan) && !cmp(CmpOp::Eq, Ty::F32, nan, nan));
        assert_eq!(
            convert((-2i32) as u32 as u64, Ty::I32, Ty::I64),
            (-2i64) as u64
        );
        assert_eq!(
            convert((-2i32) as u32 as u64, Ty::U32, Ty::U64),
            0xFFFF_FFFE
        );
        assert_eq!(
            convert(f32_bits(-2.7), Ty::F32, Ty::I32),
            (-2i32) as u32 as u64
        );
        assert_eq!(convert(7, Ty::U32, Ty::F32), f32_bits(7.0));
        // One rounding: 2^60 + 2^36 + 1 is above the midpoint between two f32 neighbours, so it
        // rounds up; through f64 (which drops the 1) it would land on the midpoint and round to even.
        let x = (1u64 << 60) + (1 << 36) + 1;
        assert_eq!(
            convert(x, Ty::I64, Ty::F32),
            f32_bits(((1u64 << 60) + (1 << 37)) as f32)
        );
        assert_eq!(convert(x, Ty::U64, Ty::F32), convert(x, Ty::I64, Ty::F32));
        assert_eq!(convert(f32_bits(f32::NAN), Ty::F32, Ty::U64), 0);
        assert_eq!(
            convert(f32_bits(-1.0e20), Ty::F32, Ty::I64),
            i64::MIN as u64
        );
    }

    #[test]
    fn read_modify_writes_wrap_compare_by_signedness_and_act_on_floats() {
        let m1 = (-1i64) as u64;
        assert_eq!(rmw(RmwOp::Add, Ty::I32, 0xFFFF_FFFF, 1), 0);
        assert_eq!(rmw(RmwOp::Min, Ty::I32, 1, m1), 0xFFFF_FFFF);
        assert_eq!(rmw(RmwOp::Min, Ty::U32, 1, m1), 1);
        assert_eq!(rmw(RmwOp::Max, Ty::I64, 1, m1), 1);
        assert_eq!(rmw(RmwOp::Inc, Ty::U32, 3, 3), 0);
        assert_eq!(rmw(RmwOp::Inc, Ty::U32, 2, 3), 3);
        assert_eq!(rmw(RmwOp::Dec, Ty::U32, 0, 5), 5);
        assert_eq!(rmw(RmwOp::Dec, Ty::U32, 4, 5), 3);
        assert_eq!(rmw(RmwOp::Exch, Ty::U64, 1, m1), m1);
        assert_eq!(
            rmw(RmwOp::Add, Ty::F32, f32_bits(1.5), f32_bits(2.0)),
            f32_bits(3.5)
        );
        // An integer-only operation leaves an f32 word as it was.
        assert_eq!(rmw(RmwOp::And, Ty::F32, f32_bits(1.5), 0), f32_bits(1.5));
        assert_eq!(cas(Ty::U32, 0x1_0000_0005, 5, 0xFF_0000_0009), 9);
        assert_eq!(cas(Ty::U64, 5, 6, 9), 5);
    }
}
