//! Constant folding with the machine's semantics: wrapping integer arithmetic of the operation's
//! width and signedness, f32 floats, ordered float compares (NaN only `!=`). Division by zero is
//! not folded: the machine stops the run there, as it would without folding.

use crate::cfront::types::STy;
use crate::ir::*;

/// Raw bits as a signed or unsigned integer, or a float, of IR type `t`.
fn num(t: Ty, x: u64) -> Num {
    match t {
        Ty::F32 => Num::F(bits_f32(x) as f64),
        Ty::I32 => Num::I(x as u32 as i32 as i128),
        Ty::U32 => Num::I((x & 0xFFFF_FFFF) as i128),
        Ty::I64 => Num::I(x as i64 as i128),
        Ty::U64 => Num::I(x as i128),
    }
}

pub(crate) fn fold_cmp(op: CmpOp, t: Ty, x: u64, y: u64) -> bool {
    use std::cmp::Ordering;
    let o = match (num(t, x), num(t, y)) {
        (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
        (Num::F(a), Num::F(b)) => a.partial_cmp(&b),
        _ => None,
    };
    match o {
        None => op == CmpOp::Ne,
        Some(o) => match op {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        },
    }
}

/// Constant folding with the machine's semantics (wrapping integers, f32 floats); `None` where
/// the machine would stop the run (division by zero), which then happens at run time.
pub(crate) fn fold_alu(op: AluOp, t: Ty, x: u64, y: u64) -> Option<u64> {
    let st = STy::of_ir(t);
    match (num(t, x), num(t, y)) {
        (Num::F(a), Num::F(b)) => {
            let (a, b) = (a as f32, b as f32);
            let r = match op {
                AluOp::Add => a + b,
                AluOp::Sub => a - b,
                AluOp::Mul => a * b,
                AluOp::Div => a / b,
                AluOp::Rem => a % b,
                AluOp::Min => a.min(b),
                AluOp::Max => a.max(b),
                _ => return None,
            };
            Some(f32_bits(r))
        }
        (Num::I(a), Num::I(b)) => {
            let bits = if t.width() == Width::B32 { 32 } else { 64 };
            let r = match op {
                AluOp::Add => a + b,
                AluOp::Sub => a - b,
                AluOp::Mul => a.wrapping_mul(b),
                AluOp::Div if b == 0 => return None,
                AluOp::Rem if b == 0 => return None,
                AluOp::Div => a / b,
                AluOp::Rem => a % b,
                AluOp::Min => a.min(b),
                AluOp::Max => a.max(b),
                AluOp::And => a & b,
                AluOp::Or => a | b,
                AluOp::Xor => a ^ b,
                AluOp::Shl => return Some(st.int_bits(a << (b as u32 % bits))),
                AluOp::Shr => {
                    let s = b as u32 % bits;
                    return Some(st.int_bits(a >> s));
                }
            };
            Some(st.int_bits(r))
        }
        _ => None,
    }
}

enum Num {
    I(i128),
    F(f64),
}
