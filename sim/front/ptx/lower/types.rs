//! PTX fundamental types (PTX ISA §5.2.2) and the IR type each one computes in.
//!
//! Modelled: `.u32 .s32 .b32 .u64 .s64 .b64 .f32 .pred` (a predicate is 0 or 1 in a register).
//! Refused, naming what is missing: `.f64` (the IR has no f64 type), `.f16 .f16x2 .bf16 .bf16x2
//! .tf32 .e4m3 .e5m2` (no half types), and 8- and 16-bit integers in arithmetic (the machine has
//! 32- and 64-bit values and accesses only; conversions to and from them are lowered exactly).

use super::R;
use crate::cfront::CError;
use crate::ir::{SrcLoc, Ty};
use crate::ptx::ast::Instr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PType {
    /// `.uN` / `.sN` / `.bN` (a bit type is unsigned where a signedness matters).
    Int {
        bits: u32,
        signed: bool,
    },
    F32,
    F64,
    /// A half or narrower float type.
    Half,
    Pred,
}

impl PType {
    pub fn parse(s: &str) -> Option<PType> {
        Some(match s {
            "u8" => PType::Int {
                bits: 8,
                signed: false,
            },
            "u16" => PType::Int {
                bits: 16,
                signed: false,
            },
            "u32" => PType::Int {
                bits: 32,
                signed: false,
            },
            "u64" => PType::Int {
                bits: 64,
                signed: false,
            },
            "s8" => PType::Int {
                bits: 8,
                signed: true,
            },
            "s16" => PType::Int {
                bits: 16,
                signed: true,
            },
            "s32" => PType::Int {
                bits: 32,
                signed: true,
            },
            "s64" => PType::Int {
                bits: 64,
                signed: true,
            },
            "b8" => PType::Int {
                bits: 8,
                signed: false,
            },
            "b16" => PType::Int {
                bits: 16,
                signed: false,
            },
            "b32" => PType::Int {
                bits: 32,
                signed: false,
            },
            "b64" => PType::Int {
                bits: 64,
                signed: false,
            },
            "b128" => PType::Int {
                bits: 128,
                signed: false,
            },
            "f32" => PType::F32,
            "f64" => PType::F64,
            "f16" | "f16x2" | "bf16" | "bf16x2" | "tf32" | "e4m3" | "e5m2" | "e4m3x2"
            | "e5m2x2" => PType::Half,
            "pred" => PType::Pred,
            _ => return None,
        })
    }

    pub fn bits(self) -> u32 {
        match self {
            PType::Int { bits, .. } => bits,
            PType::F32 | PType::Pred => 32,
            PType::F64 => 64,
            PType::Half => 16,
        }
    }

    pub fn signed(self) -> bool {
        matches!(self, PType::Int { signed: true, .. })
    }
}

/// The type modifiers of an instruction, in order, with their names and places.
pub fn types_of(i: &Instr) -> Vec<(PType, &str, SrcLoc)> {
    i.mods
        .iter()
        .filter_map(|(m, at)| PType::parse(m).map(|t| (t, m.as_str(), *at)))
        .collect()
}

/// The IR type a PTX type computes in, or the refusal.
pub fn ir_of(t: PType, name: &str, at: SrcLoc, i: &Instr) -> R<Ty> {
    Ok(match t {
        PType::Int { bits: 32, signed } => if signed { Ty::I32 } else { Ty::U32 },
        PType::Int { bits: 64, signed } => if signed { Ty::I64 } else { Ty::U64 },
        PType::Pred => Ty::U32,
        PType::F32 => Ty::F32,
        PType::F64 => return Err(super::f64_refused(at, &format!("`{}`", i.spelled()))),
        PType::Half => return Err(CError::new(at, format!("`{}`: .{name} is not modelled yet (the IR has no half-precision types)", i.spelled()))),
        PType::Int { .. } => return Err(CError::new(at, format!("`{}`: .{name} is not modelled yet (the machine computes and accesses 32- and 64-bit values only)", i.spelled()))),
    })
}

/// The one type of an instruction (`add.s32`), as an IR type.
pub fn one_ty(i: &Instr) -> R<(Ty, PType)> {
    match types_of(i).as_slice() {
        [(t, n, at)] => Ok((ir_of(*t, n, *at, i)?, *t)),
        [] => Err(CError::new(
            i.loc,
            format!("`{}` needs a type (.u32, .s32, .f32, ...)", i.spelled()),
        )),
        _ => Err(CError::new(
            i.loc,
            format!("`{}` has several types: expected one", i.spelled()),
        )),
    }
}

/// The operands of an instruction, which must be `n`.
pub fn operands<'i>(i: &'i Instr, n: usize, form: &str) -> R<&'i [crate::ptx::ast::Opnd]> {
    if i.operands.len() != n {
        return Err(CError::new(
            i.loc,
            format!("`{}` takes {n} operands: {form}", i.spelled()),
        ));
    }
    Ok(&i.operands)
}

/// Refuses every modifier outside `allowed` (types are always allowed), naming it.
pub fn only_mods(i: &Instr, allowed: &[&str]) -> R<()> {
    for (m, at) in &i.mods {
        if PType::parse(m).is_some() || allowed.contains(&m.as_str()) {
            continue;
        }
        let why = match m.as_str() {
            "ftz" => "flushing subnormals to zero is not modelled yet",
            "sat" | "satfinite" => "saturation is not modelled yet",
            "rz" | "rm" | "rp" | "rzi" | "rmi" | "rpi" | "rni" => "this rounding mode is not modelled yet (the IR rounds to nearest even and truncates float-to-integer)",
            "approx" | "full" => "approximate division and reciprocals are not modelled yet (the IR divides exactly rounded)",
            "cc" => "carry chains (`.cc`) are not modelled yet",
            _ => "this modifier is not modelled yet",
        };
        return Err(CError::new(
            *at,
            format!("`{}`: `.{m}`: {why}", i.spelled()),
        ));
    }
    Ok(())
}
