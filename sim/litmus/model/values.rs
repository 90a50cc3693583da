//! The values of the integer instructions litmus tests use, on raw 64-bit register bits as the IR
//! defines them (`crate::ir`: a 32-bit type uses the low 32 bits, signed types compare and shift
//! sign-extended). The machine computes the same functions in its SM and atomic units
//! (`machine::sm::alu`, `machine::msg::apply_rmw`); the oracle cannot reach those private modules, so
//! the integer part is restated here and a unit test pins the cases litmus tests use.
//!
//! Does not model: f32 (no litmus dialect has a float type; the interpreter reports `f32` as not
//! modelled), conversions.

use crate::ir::{AluOp, CmpOp, RmwOp, Ty, Width};

pub fn mask(w: Width) -> u64 {
    match w {
        Width::B32 => 0xFFFF_FFFF,
        Width::B64 => u64::MAX,
    }
}

fn sx32(x: u64) -> i64 {
    x as u32 as i32 as i64
}

/// Two-operand integer arithmetic; `None` on division by zero (the machine stops such a run with
/// an error, so no execution continues past it).
pub fn alu(op: AluOp, ty: Ty, a: u64, b: u64) -> Option<u64> {
    Some(match ty {
        Ty::U32 => {
            let (x, y) = (a as u32, b as u32);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y),
                AluOp::Shr => x.wrapping_shr(y),
            }) as u64
        }
        Ty::I32 => {
            let (x, y) = (sx32(a) as i32, sx32(b) as i32);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y as u32),
                AluOp::Shr => x.wrapping_shr(y as u32),
            }) as u32 as u64
        }
        Ty::U64 => match op {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::Mul => a.wrapping_mul(b),
            AluOp::Div => a.checked_div(b)?,
            AluOp::Rem => a.checked_rem(b)?,
            AluOp::Min => a.min(b),
            AluOp::Max => a.max(b),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Shl => a.wrapping_shl(b as u32),
            AluOp::Shr => a.wrapping_shr(b as u32),
        },
        Ty::I64 => {
            let (x, y) = (a as i64, b as i64);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y as u32),
                AluOp::Shr => x.wrapping_shr(y as u32),
            }) as u64
        }
        Ty::F32 => return None,
    })
}

pub fn cmp(op: CmpOp, ty: Ty, a: u64, b: u64) -> bool {
    let o = match ty {
        Ty::U32 | Ty::F32 => (a as u32).cmp(&(b as u32)),
        Ty::I32 => sx32(a).cmp(&sx32(b)),
        Ty::U64 => a.cmp(&b),
        Ty::I64 => (a as i64).cmp(&(b as i64)),
    };
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
    }
}

/// The value an integer read-modify-write stores, from the value it read (`old`) and its operand.
pub fn rmw(op: RmwOp, ty: Ty, old: u64, v: u64) -> u64 {
    let m = mask(ty.width());
    let (o, v) = (old & m, v & m);
    let signed = matches!(ty, Ty::I32 | Ty::I64);
    let sx = |x: u64| if ty == Ty::I32 { sx32(x) } else { x as i64 };
    let r = match op {
        RmwOp::Add => o.wrapping_add(v),
        RmwOp::Sub => o.wrapping_sub(v),
        RmwOp::And => o & v,
        RmwOp::Or => o | v,
        RmwOp::Xor => o ^ v,
        RmwOp::Exch => v,
        RmwOp::Min if signed => {
            if sx(v) < sx(o) {
                v
            } else {
                o
            }
        }
        RmwOp::Min => o.min(v),
        RmwOp::Max if signed => {
            if sx(v) > sx(o) {
                v
            } else {
                o
            }
        }
        RmwOp::Max => o.max(v),
        // CUDA atomicInc / atomicDec.
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
    };
    r & m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_two_bit_values_wrap_and_compare_signed() {
        let m1 = (-1i64) as u64;
        assert_eq!(alu(AluOp::Add, Ty::I32, 0x7FFF_FFFF, 1), Some(0x8000_0000));
        assert!(cmp(CmpOp::Lt, Ty::I32, m1, 0));
        assert!(!cmp(CmpOp::Lt, Ty::U32, m1, 0));
        assert_eq!(alu(AluOp::Div, Ty::I32, 1, 0), None);
        assert_eq!(rmw(RmwOp::Add, Ty::I32, 0xFFFF_FFFF, 1), 0);
        assert_eq!(rmw(RmwOp::Min, Ty::I32, 1, m1), 0xFFFF_FFFF);
        assert_eq!(rmw(RmwOp::Min, Ty::U32, 1, m1), 1);
        assert_eq!(rmw(RmwOp::Inc, Ty::U32, 3, 3), 0);
        assert_eq!(rmw(RmwOp::Dec, Ty::U32, 0, 5), 5);
        assert_eq!(rmw(RmwOp::Exch, Ty::U64, 1, m1), m1);
    }
}
