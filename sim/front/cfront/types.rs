//! The C types the front ends know, and C's conversion rules between them.
//!
//! Models: the scalar types the IR can hold (`bool`, 32- and 64-bit signed and unsigned integers,
//! `float`), pointers to them with their address space and qualifiers, and the usual arithmetic
//! conversions of C11 §6.3.1.8 (integer promotion, then the common real type).
//!
//! Does not model: 8- and 16-bit integers, `double`, `half`, vector types, structs, pointers to
//! pointers — the IR has no such values; the parser rejects them by name.
//!
//! Register representation (the lowering keeps it): a 32-bit value sits zero-extended in its 64-bit
//! register, which is how the machine writes 32-bit ALU results and loads; `bool` is 0 or 1.

use super::Dialect;
use crate::ir::{Space, Ty};

/// A scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum STy {
    Bool,
    I32,
    U32,
    I64,
    U64,
    F32,
}

impl STy {
    /// The IR type a value of this type is computed with (`bool` as a 32-bit unsigned 0 or 1).
    pub fn ir(self) -> Ty {
        match self {
            STy::Bool | STy::U32 => Ty::U32,
            STy::I32 => Ty::I32,
            STy::I64 => Ty::I64,
            STy::U64 => Ty::U64,
            STy::F32 => Ty::F32,
        }
    }

    pub fn of_ir(t: Ty) -> STy {
        match t {
            Ty::U32 => STy::U32,
            Ty::I32 => STy::I32,
            Ty::U64 => STy::U64,
            Ty::I64 => STy::I64,
            Ty::F32 => STy::F32,
        }
    }

    pub fn is_float(self) -> bool {
        self == STy::F32
    }

    pub fn is_signed(self) -> bool {
        matches!(self, STy::I32 | STy::I64 | STy::F32)
    }

    pub fn is_64(self) -> bool {
        matches!(self, STy::I64 | STy::U64)
    }

    /// Bytes the type takes in memory.
    pub fn bytes(self) -> u32 {
        match self {
            STy::I64 | STy::U64 => 8,
            _ => 4,
        }
    }

    /// The spelling in dialect `d`, for messages: OpenCL C's `uint`, `long`, `ulong` (OpenCL C 2.0
    /// §6.1.1, where `long` is 64 bits), CUDA's `unsigned int`, `long long`, `unsigned long long`.
    pub fn name(self, d: Dialect) -> &'static str {
        match (self, d) {
            (STy::Bool, _) => "bool",
            (STy::I32, _) => "int",
            (STy::F32, _) => "float",
            (STy::U32, Dialect::Cuda) => "unsigned int",
            (STy::I64, Dialect::Cuda) => "long long",
            (STy::U64, Dialect::Cuda) => "unsigned long long",
            (STy::U32, Dialect::OpenCl) => "uint",
            (STy::I64, Dialect::OpenCl) => "long",
            (STy::U64, Dialect::OpenCl) => "ulong",
        }
    }

    /// Integer promotion (C11 §6.3.1.1): `bool` becomes `int`.
    pub fn promote(self) -> STy {
        match self {
            STy::Bool => STy::I32,
            t => t,
        }
    }

    /// The common real type of two operands (C11 §6.3.1.8, the usual arithmetic conversions).
    pub fn common(a: STy, b: STy) -> STy {
        let (a, b) = (a.promote(), b.promote());
        if a == STy::F32 || b == STy::F32 {
            return STy::F32;
        }
        if a == b {
            return a;
        }
        let rank = |t: STy| t.is_64() as u8;
        if a.is_signed() == b.is_signed() {
            return if rank(a) >= rank(b) { a } else { b };
        }
        let (s, u) = if a.is_signed() { (a, b) } else { (b, a) };
        if rank(u) >= rank(s) {
            u
        } else {
            // A signed type of greater rank represents every value of the unsigned one (64 > 32 bits).
            s
        }
    }

    /// Raw register bits of the integer `v` converted to this type (C's modular conversion).
    pub fn int_bits(self, v: i128) -> u64 {
        match self {
            STy::Bool => (v != 0) as u64,
            STy::I32 | STy::U32 => (v as u64) & 0xFFFF_FFFF,
            STy::I64 | STy::U64 => v as u64,
            STy::F32 => crate::ir::f32_bits(v as f32),
        }
    }

    /// The integer value of raw bits of this (integer) type.
    pub fn int_value(self, bits: u64) -> i128 {
        match self {
            STy::Bool | STy::U32 => (bits & 0xFFFF_FFFF) as i128,
            STy::I32 => bits as u32 as i32 as i128,
            STy::I64 => bits as i64 as i128,
            STy::U64 => bits as i128,
            STy::F32 => crate::ir::bits_f32(bits) as i128,
        }
    }
}

/// What a pointer points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PtrTy {
    pub elem: STy,
    pub space: Space,
    /// The pointee has an atomic type (`atomic_int`, `_Atomic int`).
    pub atomic: bool,
    pub volatile: bool,
}

impl PtrTy {
    /// The pointer type as dialect `d` writes it, for messages: OpenCL C names the address space
    /// (`global atomic_int*`, `local uint*`); CUDA's pointers are generic, so a pointer into shared
    /// memory says so after the type (`int* (into __shared__ memory)`).
    pub fn describe(&self, d: Dialect) -> String {
        let volatile = if self.volatile { "volatile " } else { "" };
        match d {
            Dialect::OpenCl => {
                let space = match self.space {
                    Space::Global => "global",
                    Space::Local => "local",
                };
                let elem = if self.atomic {
                    match self.elem {
                        STy::I32 => "atomic_int",
                        STy::U32 => "atomic_uint",
                        STy::I64 => "atomic_long",
                        STy::U64 => "atomic_ulong",
                        _ => "atomic_float",
                    }
                } else {
                    self.elem.name(d)
                };
                format!("{volatile}{space} {elem}*")
            }
            Dialect::Cuda => {
                let atomic = if self.atomic { "_Atomic " } else { "" };
                let space = match self.space {
                    Space::Global => "",
                    Space::Local => " (into __shared__ memory)",
                };
                format!("{volatile}{atomic}{}*{space}", self.elem.name(d))
            }
        }
    }
}

/// The type of a value the lowering computes with: a scalar or a pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VTy {
    Scalar(STy),
    Ptr(PtrTy),
}

impl VTy {
    /// The IR type a register of this type is read as (pointers are 64-bit addresses).
    pub fn ir(self) -> Ty {
        match self {
            VTy::Scalar(s) => s.ir(),
            VTy::Ptr(_) => Ty::U64,
        }
    }

    /// The type as dialect `d` writes it, for messages.
    pub fn describe(&self, d: Dialect) -> String {
        match self {
            VTy::Scalar(s) => s.name(d).to_string(),
            VTy::Ptr(p) => p.describe(d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions_follow_c11() {
        assert_eq!(STy::common(STy::I32, STy::U32), STy::U32);
        assert_eq!(STy::common(STy::I64, STy::U32), STy::I64);
        assert_eq!(STy::common(STy::I32, STy::U64), STy::U64);
        assert_eq!(STy::common(STy::Bool, STy::Bool), STy::I32);
        assert_eq!(STy::common(STy::U64, STy::F32), STy::F32);
        assert_eq!(STy::I32.int_bits(-1), 0xFFFF_FFFF);
        assert_eq!(STy::I32.int_value(0xFFFF_FFFF), -1);
    }
}
