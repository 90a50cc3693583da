//! The SM's view of ALU instructions: the latency class of each operation and its result latency.
//! What the operations compute is the IR's (`crate::ir::eval`), shared with the oracle, the front
//! ends and the shader translators.

use crate::config::InstLatency;
use crate::ir::{AluOp, LatencyClass, MathOp, Ty};

/// The latency class of an ALU operation.
#[inline]
pub fn class_of(op: AluOp, ty: Ty) -> LatencyClass {
    match (op, ty.is_float()) {
        (AluOp::Div | AluOp::Rem, true) => LatencyClass::FpDiv,
        (_, true) => LatencyClass::FpAlu,
        (AluOp::Mul, false) => LatencyClass::IntMul,
        (AluOp::Div | AluOp::Rem, false) => LatencyClass::IntDiv,
        _ => LatencyClass::IntAlu,
    }
}

/// The latency class of a [`MathOp`]: logic, funnel shifts, byte permutes, bit fields and the
/// sign/abs/min/max/round of a float on the integer or float ALU; bit counting and reversal and the
/// byte dot product on the multiply pipe (Volta-Hopper issue `POPC`/`FLO`/`BREV` there, `IDP4A` on
/// the `IMAD` pipe); rounded float arithmetic and `fma` on the float ALU; correctly rounded
/// division, reciprocal and square root as a float division (a subroutine on hardware); the
/// `.approx` functions on the special-function unit (`MUFU`).
#[inline]
pub fn math_class(op: MathOp) -> LatencyClass {
    match op {
        MathOp::Lop3 { .. } | MathOp::Shf { .. } | MathOp::Prmt(_) | MathOp::Bfe | MathOp::Bfi => {
            LatencyClass::IntAlu
        }
        MathOp::Popc | MathOp::Clz | MathOp::Brev | MathOp::Bfind { .. } | MathOp::Dp4a { .. } => {
            LatencyClass::IntMul
        }
        MathOp::FAdd
        | MathOp::FSub
        | MathOp::FMul
        | MathOp::Fma
        | MathOp::FMin { .. }
        | MathOp::FMax { .. }
        | MathOp::FAbs
        | MathOp::FNeg
        | MathOp::Copysign
        | MathOp::RoundInt => LatencyClass::FpAlu,
        MathOp::FDiv | MathOp::Sqrt | MathOp::Rcp => LatencyClass::FpDiv,
        MathOp::Rsqrt | MathOp::Ex2 | MathOp::Lg2 | MathOp::Sin | MathOp::Cos | MathOp::Tanh => {
            LatencyClass::Special
        }
    }
}

/// Result latency of an instruction class, core cycles (validated: at least 1).
#[inline]
pub fn latency_of(l: &InstLatency, c: LatencyClass) -> u64 {
    (match c {
        LatencyClass::IntAlu => l.int_alu,
        LatencyClass::IntMul => l.int_mul,
        LatencyClass::IntDiv => l.int_div,
        LatencyClass::FpAlu => l.fp_alu,
        LatencyClass::FpDiv => l.fp_div,
        LatencyClass::Special => l.special,
        LatencyClass::Branch => l.branch,
    }) as u64
}

/// The name of an operation that can fault, for the runtime error.
pub fn op_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Div => "div",
        AluOp::Rem => "rem",
        _ => "alu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_classes() {
        assert_eq!(class_of(AluOp::Div, Ty::F32), LatencyClass::FpDiv);
        assert_eq!(class_of(AluOp::Mul, Ty::I64), LatencyClass::IntMul);
        assert_eq!(class_of(AluOp::Rem, Ty::U32), LatencyClass::IntDiv);
        assert_eq!(class_of(AluOp::Shl, Ty::U32), LatencyClass::IntAlu);
    }

    #[test]
    fn math_latency_classes() {
        assert_eq!(math_class(MathOp::Lop3 { lut: 0x96 }), LatencyClass::IntAlu);
        assert_eq!(math_class(MathOp::Popc), LatencyClass::IntMul);
        assert_eq!(math_class(MathOp::Fma), LatencyClass::FpAlu);
        assert_eq!(math_class(MathOp::Sqrt), LatencyClass::FpDiv);
        assert_eq!(math_class(MathOp::Sin), LatencyClass::Special);
    }
}
