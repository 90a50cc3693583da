//! The SM's view of ALU instructions: the latency class of each operation and its result latency.
//! What the operations compute is the IR's (`crate::ir::eval`), shared with the oracle, the front
//! ends and the shader translators.

use crate::config::InstLatency;
use crate::ir::{AluOp, LatencyClass, Ty};

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
}
