//! PTX bit operations and the floating-point instructions beyond the IR's two-operand ALU (PTX ISA
//! §9.7.1 integer, §9.7.3 floating-point), lowered to one [`Inst::Math`] each: `popc`, `clz`,
//! `brev`, `bfe`, `bfi`, `bfind{.shiftamt}`, `prmt{.mode}`, `lop3`, `shf.{l,r}.{wrap,clamp}`,
//! `dp4a`, `fma`/`mad` on f32, `sqrt`, `rsqrt`, `rcp`, `ex2`, `lg2`, `sin`, `cos`, `tanh`,
//! `copysign`, and f32 `add sub mul div min max abs neg` with `.rz .rm .rp`, `.sat`, `.ftz`,
//! `.approx`/`.full`, `.NaN` (what each computes: `ir/math.rs`).
//!
//! Refused, naming what is missing: the predicate-output `lop3.BoolOp`, `dp2a`, `fns`, `szext`,
//! `testp`, `.xorsign.abs`, `.relu`, packed and half types, f64 (see `types.rs`).

use super::types::{one_ty, only_mods, operands, types_of, PType};
use super::{Lower, R};
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{Instr, Opnd};

/// The float modifiers of `i`: a rounding (`int_round`: the `.rni`-style integer roundings of
/// `cvt`), `.sat`, `.ftz`.
pub fn float_mode(i: &Instr) -> FloatMode {
    let round = if i.has("rz") || i.has("rzi") {
        Round::Zero
    } else if i.has("rm") || i.has("rmi") {
        Round::Down
    } else if i.has("rp") || i.has("rpi") {
        Round::Up
    } else {
        Round::Nearest
    };
    FloatMode {
        round,
        sat: i.has("sat"),
        ftz: i.has("ftz"),
    }
}

const ROUNDS: &[&str] = &["rn", "rz", "rm", "rp"];

/// Whether an f32 `add sub mul mad div min max abs neg rcp` needs [`Inst::Math`] (a modifier the
/// two-operand ALU does not have); the plain forms stay on the ALU.
pub fn needs_math(i: &Instr) -> bool {
    i.op == "mad"
        || (i.op == "rcp" && !(i.has("rn") && i.mods.len() == 2))
        || ["rz", "rm", "rp", "ftz", "sat", "approx", "full", "NaN"]
            .iter()
            .any(|m| i.has(m))
}

fn emit(l: &mut Lower, op: MathOp, ty: Ty, mode: FloatMode, dst: Reg, a: &[Operand], at: SrcLoc) {
    let mut args = [Operand::Imm(0); 4];
    args[..a.len()].copy_from_slice(a);
    l.emit(
        Inst::Math {
            op,
            ty,
            mode,
            dst,
            args,
        },
        at,
    );
}

/// `op d, a{, b{, c{, e}}}`: a destination and `n` sources of type `ty`.
fn dst_srcs(l: &mut Lower, i: &Instr, n: usize, tys: &[Ty], form: &str) -> R<(Reg, Vec<Operand>)> {
    let ops = operands(i, n + 1, form)?;
    let mut srcs = Vec::with_capacity(n);
    for (k, o) in ops[1..].iter().enumerate() {
        srcs.push(l.src_op(o, tys[k.min(tys.len() - 1)])?);
    }
    let d = l.dst(&ops[0])?;
    Ok((d, srcs))
}

fn int_only(i: &Instr, ty: Ty) -> R<()> {
    if ty.is_float() {
        return Err(CError::new(
            i.loc,
            format!("`{}`: a bit operation takes integer types", i.spelled()),
        ));
    }
    Ok(())
}

/// f32 `add sub mul mad div min max abs neg rcp` with the modifiers of [`needs_math`].
pub fn float_alu(l: &mut Lower, i: &Instr) -> R<()> {
    let at = i.loc;
    let (ty, _) = one_ty(i)?;
    let op = i.op.as_str();
    let allowed: Vec<&str> = match op {
        "add" | "sub" | "mul" => [ROUNDS, &["ftz", "sat"]].concat(),
        "mad" => [ROUNDS, &["ftz", "sat"]].concat(),
        "div" => [ROUNDS, &["ftz", "approx", "full"]].concat(),
        "rcp" => [ROUNDS, &["ftz", "approx"]].concat(),
        "min" | "max" => vec!["ftz", "NaN"],
        "abs" | "neg" => vec!["ftz"],
        _ => vec![],
    };
    only_mods(i, &allowed)?;
    if op == "rcp" && !i.has("approx") && !ROUNDS.iter().any(|r| i.has(r)) {
        return Err(CError::new(
            at,
            format!(
                "`{}` needs a rounding (`.rn`, ...) or `.approx`",
                i.spelled()
            ),
        ));
    }
    let mode = float_mode(i);
    let (mop, n) = match op {
        "add" => (MathOp::FAdd, 2),
        "sub" => (MathOp::FSub, 2),
        "mul" => (MathOp::FMul, 2),
        "mad" => (MathOp::Fma, 3),
        "div" => (MathOp::FDiv, 2),
        "rcp" => (MathOp::Rcp, 1),
        "min" => (MathOp::FMin { nan: i.has("NaN") }, 2),
        "max" => (MathOp::FMax { nan: i.has("NaN") }, 2),
        "abs" => (MathOp::FAbs, 1),
        "neg" => (MathOp::FNeg, 1),
        _ => {
            return Err(CError::new(
                at,
                format!("`{}` is not modelled yet", i.spelled()),
            ))
        }
    };
    let (d, srcs) = dst_srcs(l, i, n, &[ty], "`d, a, ...`")?;
    emit(l, mop, ty, mode, d, &srcs, at);
    Ok(())
}

/// The bit operations and float functions dispatched by name.
pub fn inst(l: &mut Lower, i: &Instr) -> R<()> {
    let at = i.loc;
    let op = i.op.as_str();
    let plain = FloatMode::default();
    match op {
        "popc" | "clz" | "brev" => {
            only_mods(i, &[])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let mop = match op {
                "popc" => MathOp::Popc,
                "clz" => MathOp::Clz,
                _ => MathOp::Brev,
            };
            let (d, s) = dst_srcs(l, i, 1, &[ty], "`d, a`")?;
            emit(l, mop, ty, plain, d, &s, at);
        }
        "bfind" => {
            only_mods(i, &["shiftamt"])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let (d, s) = dst_srcs(l, i, 1, &[ty], "`d, a`")?;
            let mop = MathOp::Bfind {
                shift_amt: i.has("shiftamt"),
            };
            emit(l, mop, ty, plain, d, &s, at);
        }
        "bfe" => {
            only_mods(i, &[])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let (d, s) = dst_srcs(l, i, 3, &[ty, Ty::U32], "`bfe.type d, a, pos, len`")?;
            emit(l, MathOp::Bfe, ty, plain, d, &s, at);
        }
        "bfi" => {
            only_mods(i, &[])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let (d, s) = dst_srcs(l, i, 4, &[ty, ty, Ty::U32], "`bfi.type d, a, b, pos, len`")?;
            emit(l, MathOp::Bfi, ty, plain, d, &s, at);
        }
        "prmt" => {
            let modes = ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"];
            only_mods(i, &modes)?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let mode = match modes.iter().find(|m| i.has(m)) {
                None => PrmtMode::Generic,
                Some(&"f4e") => PrmtMode::F4e,
                Some(&"b4e") => PrmtMode::B4e,
                Some(&"rc8") => PrmtMode::Rc8,
                Some(&"ecl") => PrmtMode::Ecl,
                Some(&"ecr") => PrmtMode::Ecr,
                Some(_) => PrmtMode::Rc16,
            };
            let (d, s) = dst_srcs(l, i, 3, &[Ty::U32], "`prmt.b32 d, a, b, c`")?;
            emit(l, MathOp::Prmt(mode), Ty::U32, plain, d, &s, at);
        }
        "lop3" => {
            if i.operands.len() != 5 || ["and", "or", "xor"].iter().any(|m| i.has(m)) {
                return Err(CError::new(at, format!("`{}` takes 5 operands: `lop3.b32 d, a, b, c, immLut` (the predicate-output form `lop3.BoolOp` is not modelled yet)", i.spelled())));
            }
            only_mods(i, &[])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            let lut = match &i.operands[4] {
                Opnd::Int(v, _) if (0..=255).contains(v) => *v as u8,
                o => {
                    return Err(CError::new(
                        o.loc(),
                        "`lop3`: the truth table must be an immediate 0-255",
                    ))
                }
            };
            let ops = &i.operands;
            let s = [
                l.src_op(&ops[1], ty)?,
                l.src_op(&ops[2], ty)?,
                l.src_op(&ops[3], ty)?,
            ];
            let d = l.dst(&ops[0])?;
            emit(l, MathOp::Lop3 { lut }, ty, plain, d, &s, at);
        }
        "shf" => {
            only_mods(i, &["l", "r", "wrap", "clamp"])?;
            let (ty, _) = one_ty(i)?;
            int_only(i, ty)?;
            if ty.width() != Width::B32
                || i.has("l") == i.has("r")
                || i.has("wrap") == i.has("clamp")
            {
                return Err(CError::new(
                    at,
                    format!(
                        "`{}`: expected `shf.{{l,r}}.{{wrap,clamp}}.b32`",
                        i.spelled()
                    ),
                ));
            }
            let (d, s) = dst_srcs(l, i, 3, &[Ty::U32], "`shf.l.wrap.b32 d, a, b, c`")?;
            let mop = MathOp::Shf {
                left: i.has("l"),
                clamp: i.has("clamp"),
            };
            emit(l, mop, Ty::U32, plain, d, &s, at);
        }
        "dp4a" => {
            only_mods(i, &[])?;
            let tys = types_of(i);
            let signed = |t: &PType| t.signed();
            let [(ta, _, _), (tb, _, _)] = tys.as_slice() else {
                return Err(CError::new(
                    at,
                    format!("`{}`: expected `dp4a.atype.btype`", i.spelled()),
                ));
            };
            if ta.bits() != 32
                || tb.bits() != 32
                || !matches!(ta, PType::Int { .. })
                || !matches!(tb, PType::Int { .. })
            {
                return Err(CError::new(
                    at,
                    format!(
                        "`{}`: `dp4a` takes `.u32`/`.s32` operand types",
                        i.spelled()
                    ),
                ));
            }
            let mop = MathOp::Dp4a {
                a_signed: signed(ta),
                b_signed: signed(tb),
            };
            let (d, s) = dst_srcs(l, i, 3, &[Ty::U32], "`dp4a.atype.btype d, a, b, c`")?;
            emit(l, mop, Ty::U32, plain, d, &s, at);
        }
        "fma" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "copysign" => {
            let allowed: Vec<&str> = match op {
                "fma" => [ROUNDS, &["ftz", "sat"]].concat(),
                "sqrt" => [ROUNDS, &["ftz", "approx"]].concat(),
                "copysign" => vec![],
                _ => vec!["approx", "ftz"],
            };
            only_mods(i, &allowed)?;
            let (ty, _) = one_ty(i)?;
            if ty != Ty::F32 {
                return Err(CError::new(
                    at,
                    format!("`{}`: takes `.f32` (f64 is not modelled yet)", i.spelled()),
                ));
            }
            let needs_round = matches!(op, "fma") || (op == "sqrt" && !i.has("approx"));
            if needs_round && !ROUNDS.iter().any(|r| i.has(r)) {
                return Err(CError::new(
                    at,
                    format!(
                        "`{}` needs a rounding (`.rn`, `.rz`, `.rm`, `.rp`)",
                        i.spelled()
                    ),
                ));
            }
            if matches!(op, "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh") && !i.has("approx") {
                return Err(CError::new(
                    at,
                    format!(
                        "`{}` needs `.approx` (the only form PTX defines for f32)",
                        i.spelled()
                    ),
                ));
            }
            let (mop, n) = match op {
                "fma" => (MathOp::Fma, 3),
                "sqrt" => (MathOp::Sqrt, 1),
                "rsqrt" => (MathOp::Rsqrt, 1),
                "ex2" => (MathOp::Ex2, 1),
                "lg2" => (MathOp::Lg2, 1),
                "sin" => (MathOp::Sin, 1),
                "cos" => (MathOp::Cos, 1),
                "tanh" => (MathOp::Tanh, 1),
                _ => (MathOp::Copysign, 2),
            };
            let (d, s) = dst_srcs(l, i, n, &[ty], "`d, a, ...`")?;
            emit(l, mop, ty, float_mode(i), d, &s, at);
        }
        _ => unreachable!("dispatched by Lower::inst"),
    }
    Ok(())
}

/// `cvt` between f32 values (`.rni .rzi .rmi .rpi` round to an integral value; `.sat`, `.ftz`), or
/// from f32 to an integer with an integer rounding other than `.rzi` (rounded, then truncated —
/// exact, since the value is integral).
pub fn cvt_rounded(l: &mut Lower, i: &Instr, src: Reg, dst: Reg, to: Ty) -> R<()> {
    let at = i.loc;
    let mode = float_mode(i);
    let int_round = ["rni", "rzi", "rmi", "rpi"].iter().any(|m| i.has(m));
    let f = if to == Ty::F32 { dst } else { l.temp() };
    if int_round {
        emit(
            l,
            MathOp::RoundInt,
            Ty::F32,
            mode,
            f,
            &[Operand::Reg(src)],
            at,
        );
    } else {
        // Exact: only `.sat`/`.ftz` act.
        emit(
            l,
            MathOp::FMul,
            Ty::F32,
            mode,
            f,
            &[Operand::Reg(src), Operand::Imm(f32_bits(1.0))],
            at,
        );
    }
    if to != Ty::F32 {
        l.emit(
            Inst::Cvt {
                dst,
                src: f,
                from: Ty::F32,
                to,
            },
            at,
        );
    }
    Ok(())
}
