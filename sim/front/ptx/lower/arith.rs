//! Moves, integer and f32 arithmetic, compares, selects and conversions (PTX ISA §9.7.1-9.7.9).
//!
//! Exact lowerings into several IR instructions (each issues as one more ALU instruction than the
//! hardware's single one: timing only): `mul.wide` and `mad.wide` (operands widened first),
//! `mul.hi` of 32-bit values (a 64-bit product shifted), `mad.lo` (multiply, then add), `abs` of an
//! integer, shifts by a register amount (PTX clamps amounts of the width or more, the IR wraps
//! them), `setp.ne.f32` (ordered: `lt or gt`) and the unordered compares (negated ordered ones), compares combined with a predicate (`setp.lt.and`),
//! conversions from and to 8- and 16-bit integers (shifts), `mov.b64` packing two 32-bit halves.
//!
//! f32 arithmetic with `.rz .rm .rp .sat .ftz .approx .full .NaN`, `mad.f32` (a fused
//! multiply-add) and `cvt` with `.rni .rmi .rpi .sat .ftz` go to `math.rs` (one `Inst::Math`).
//!
//! Refused: `mul.hi` and `mad.hi` of 64-bit values, integer-to-f32 `cvt` with a directed rounding,
//! f64, f16 (see `types.rs`).

use super::types::{ir_of, one_ty, only_mods, operands, types_of, PType};
use super::{Lower, R};
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{Instr, Opnd};

fn emit_alu(l: &mut Lower, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand, at: SrcLoc) {
    l.emit(Inst::Alu { op, ty, dst, a, b }, at);
}

fn wide(ty: Ty) -> Ty {
    match ty {
        Ty::I32 => Ty::I64,
        _ => Ty::U64,
    }
}

/// A 32-bit operand widened to 64 bits by its signedness (an immediate at lowering time).
fn widen(l: &mut Lower, o: Operand, from: Ty, at: SrcLoc) -> Operand {
    match o {
        Operand::Imm(v) => Operand::Imm(eval::convert(v, from, wide(from))),
        Operand::Reg(r) => {
            let t = l.temp();
            l.emit(
                Inst::Cvt {
                    dst: t,
                    src: r,
                    from,
                    to: wide(from),
                },
                at,
            );
            Operand::Reg(t)
        }
    }
}

/// `mov.type d, a` (and `mov.b64 d, {lo, hi}`, `mov.b64 {lo, hi}, d`).
pub fn mov(l: &mut Lower, i: &Instr) -> R<()> {
    only_mods(i, &[])?;
    let ops = operands(i, 2, "`mov.type d, a`")?;
    let (ty, _) = one_ty(i)?;
    let at = i.loc;
    match (&ops[0], &ops[1]) {
        (d, Opnd::Vector(v, vat)) => {
            if ty.width() != Width::B64 || v.len() != 2 {
                return Err(CError::new(*vat, "packing a vector into a register is modelled for `mov.b64 d, {lo, hi}` (two 32-bit halves) only"));
            }
            let d = l.dst(d)?;
            let lo = l.src_op(&v[0], Ty::U32)?;
            let hi = l.src_op(&v[1], Ty::U32)?;
            let t = l.temp();
            emit_alu(l, AluOp::Shl, Ty::U64, t, hi, Operand::Imm(32), at);
            emit_alu(l, AluOp::Or, Ty::U64, d, Operand::Reg(t), lo, at);
            Ok(())
        }
        (Opnd::Vector(v, vat), s) => {
            if ty.width() != Width::B64 || v.len() != 2 {
                return Err(CError::new(*vat, "unpacking a register into a vector is modelled for `mov.b64 {lo, hi}, d` (two 32-bit halves) only"));
            }
            let s = l.src_op(s, Ty::U64)?;
            if !matches!(v[0], Opnd::Sink(_)) {
                let lo = l.dst(&v[0])?;
                emit_alu(l, AluOp::And, Ty::U64, lo, s, Operand::Imm(0xFFFF_FFFF), at);
            }
            if !matches!(v[1], Opnd::Sink(_)) {
                let hi = l.dst(&v[1])?;
                emit_alu(l, AluOp::Shr, Ty::U64, hi, s, Operand::Imm(32), at);
            }
            Ok(())
        }
        (d, s) => {
            let (src, p) = l.src(s, ty)?;
            let d = l.dst(d)?;
            l.def_prov(d, p);
            l.emit(Inst::Mov { dst: d, src }, at);
            Ok(())
        }
    }
}

/// Dispatches `add`, `sub`, `mul`, `mad`, `div`, `rem`, `min`, `max`, `neg`, `abs`, `and`, `or`,
/// `xor`, `not`, `cnot`, `shl`, `shr`, `rcp`.
pub fn alu(l: &mut Lower, i: &Instr) -> R<()> {
    let (ty, pt) = one_ty(i)?;
    let float = ty == Ty::F32;
    if float && super::math::needs_math(i) {
        return super::math::float_alu(l, i);
    }
    let at = i.loc;
    let op = i.op.as_str();
    let int_mods: &[&str] = match op {
        "mul" => &["lo", "hi", "wide"],
        "mad" => &["lo", "hi", "wide"],
        _ => &[],
    };
    if float {
        only_mods(i, &["rn"])?;
    } else {
        only_mods(i, int_mods)?;
    }
    let form3 = "`d, a, b`";
    match op {
        "add" | "sub" | "min" | "max" | "and" | "or" | "xor" | "div" | "rem" => {
            if float && matches!(op, "and" | "or" | "xor" | "rem") {
                return Err(CError::new(
                    at,
                    format!("`{}`: not a PTX instruction on f32", i.spelled()),
                ));
            }
            if float && op == "div" && !i.has("rn") {
                return Err(CError::new(at, format!("`{}`: float division needs `.rn` (`.approx` and `.full` are not modelled yet)", i.spelled())));
            }
            let ops = operands(i, 3, form3)?;
            let (a, pa) = l.src(&ops[1], ty)?;
            let (b, pb) = l.src(&ops[2], ty)?;
            let d = l.dst(&ops[0])?;
            if matches!(op, "add" | "sub" | "and" | "or") {
                l.def_prov(d, super::join(pa, pb));
            }
            let aop = match op {
                "add" => AluOp::Add,
                "sub" => AluOp::Sub,
                "min" => AluOp::Min,
                "max" => AluOp::Max,
                "and" => AluOp::And,
                "or" => AluOp::Or,
                "xor" => AluOp::Xor,
                "div" => AluOp::Div,
                _ => AluOp::Rem,
            };
            emit_alu(l, aop, ty, d, a, b, at);
        }
        "mul" | "mad" => {
            let n = if op == "mul" { 3 } else { 4 };
            let ops = operands(
                i,
                n,
                if op == "mul" {
                    "`mul.mode.type d, a, b`"
                } else {
                    "`mad.mode.type d, a, b, c`"
                },
            )?;
            if float {
                let a = l.src_op(&ops[1], ty)?;
                let b = l.src_op(&ops[2], ty)?;
                let d = l.dst(&ops[0])?;
                emit_alu(l, AluOp::Mul, ty, d, a, b, at);
                return Ok(());
            }
            let mode = if i.has("wide") {
                "wide"
            } else if i.has("hi") {
                "hi"
            } else {
                "lo"
            };
            if mode == "wide" && ty.width() != Width::B32 {
                return Err(CError::new(
                    at,
                    format!("`{}`: `.wide` takes 32-bit operands", i.spelled()),
                ));
            }
            let a = l.src_op(&ops[1], ty)?;
            let b = l.src_op(&ops[2], ty)?;
            let c = if op == "mad" {
                let cty = if mode == "wide" { wide(ty) } else { ty };
                Some(l.src(&ops[3], cty)?)
            } else {
                None
            };
            let d = l.dst(&ops[0])?;
            let (prod_ty, a, b) = match mode {
                "lo" => (ty, a, b),
                // A 32-bit register holds its value zero-extended: an unsigned widening product
                // is the 64-bit product of the registers as they are.
                "wide" if ty == Ty::U32 => (Ty::U64, a, b),
                _ => {
                    if ty.width() == Width::B64 {
                        return Err(CError::new(at, format!("`{}` is not modelled yet: the high half of a 64-bit product needs 128-bit arithmetic", i.spelled())));
                    }
                    (wide(ty), widen(l, a, ty, at), widen(l, b, ty, at))
                }
            };
            let target = if mode == "hi" || c.is_some() {
                l.temp()
            } else {
                d
            };
            emit_alu(l, AluOp::Mul, prod_ty, target, a, b, at);
            let mut cur = Operand::Reg(target);
            if mode == "hi" {
                let t = if c.is_some() { l.temp() } else { d };
                emit_alu(l, AluOp::Shr, prod_ty, t, cur, Operand::Imm(32), at);
                // A 32-bit result is zero-extended.
                emit_alu(
                    l,
                    AluOp::And,
                    Ty::U64,
                    t,
                    Operand::Reg(t),
                    Operand::Imm(0xFFFF_FFFF),
                    at,
                );
                cur = Operand::Reg(t);
            }
            if let Some((c, pc)) = c {
                let sum_ty = if mode == "wide" { wide(ty) } else { ty };
                l.def_prov(d, pc);
                emit_alu(l, AluOp::Add, sum_ty, d, cur, c, at);
            }
        }
        "neg" | "abs" | "not" | "cnot" | "rcp" => {
            let ops = operands(i, 2, "`d, a`")?;
            let a = l.src_op(&ops[1], ty)?;
            let d = l.dst(&ops[0])?;
            let sign = match ty.width() {
                Width::B32 => 1u64 << 31,
                Width::B64 => 1 << 63,
            };
            match (op, float) {
                ("neg", true) => emit_alu(l, AluOp::Xor, Ty::U32, d, a, Operand::Imm(sign), at),
                ("abs", true) => emit_alu(l, AluOp::And, Ty::U32, d, a, Operand::Imm(sign - 1), at),
                ("neg", false) => emit_alu(l, AluOp::Sub, ty, d, Operand::Imm(0), a, at),
                ("abs", false) => {
                    let n = l.temp();
                    let c = l.temp();
                    emit_alu(l, AluOp::Sub, ty, n, Operand::Imm(0), a, at);
                    l.emit(
                        Inst::Cmp {
                            op: CmpOp::Lt,
                            ty,
                            dst: c,
                            a,
                            b: Operand::Imm(0),
                        },
                        at,
                    );
                    l.emit(
                        Inst::Select {
                            dst: d,
                            cond: c,
                            a: Operand::Reg(n),
                            b: a,
                        },
                        at,
                    );
                }
                ("not", _) => {
                    let ones = if pt == PType::Pred {
                        1
                    } else {
                        ty.width().mask()
                    };
                    emit_alu(l, AluOp::Xor, ty, d, a, Operand::Imm(ones), at);
                }
                ("cnot", false) => l.emit(
                    Inst::Cmp {
                        op: CmpOp::Eq,
                        ty,
                        dst: d,
                        a,
                        b: Operand::Imm(0),
                    },
                    at,
                ),
                ("rcp", true) if i.has("rn") => emit_alu(
                    l,
                    AluOp::Div,
                    Ty::F32,
                    d,
                    Operand::Imm(f32_bits(1.0)),
                    a,
                    at,
                ),
                _ => {
                    return Err(CError::new(
                        at,
                        format!("`{}` is not modelled yet", i.spelled()),
                    ))
                }
            }
        }
        "shl" | "shr" => {
            let ops = operands(i, 3, "`d, a, b`")?;
            if float {
                return Err(CError::new(
                    at,
                    format!("`{}`: shifts take integer types", i.spelled()),
                ));
            }
            let a = l.src_op(&ops[1], ty)?;
            let b = l.src_op(&ops[2], Ty::U32)?;
            let d = l.dst(&ops[0])?;
            let w = ty.width().bytes() as u64 * 8;
            let aop = if op == "shl" { AluOp::Shl } else { AluOp::Shr };
            let arith = op == "shr" && matches!(ty, Ty::I32 | Ty::I64);
            match b {
                // PTX ISA `shl`/`shr`: amounts greater than the width are clamped to it.
                Operand::Imm(k) if k >= w => {
                    if arith {
                        emit_alu(l, AluOp::Shr, ty, d, a, Operand::Imm(w - 1), at);
                    } else {
                        l.emit(
                            Inst::Mov {
                                dst: d,
                                src: Operand::Imm(0),
                            },
                            at,
                        );
                    }
                }
                Operand::Imm(_) => emit_alu(l, aop, ty, d, a, b, at),
                Operand::Reg(_) if arith => {
                    let m = l.temp();
                    emit_alu(l, AluOp::Min, Ty::U32, m, b, Operand::Imm(w - 1), at);
                    emit_alu(l, AluOp::Shr, ty, d, a, Operand::Reg(m), at);
                }
                Operand::Reg(_) => {
                    let c = l.temp();
                    let t = l.temp();
                    l.emit(
                        Inst::Cmp {
                            op: CmpOp::Lt,
                            ty: Ty::U32,
                            dst: c,
                            a: b,
                            b: Operand::Imm(w),
                        },
                        at,
                    );
                    emit_alu(l, aop, ty, t, a, b, at);
                    l.emit(
                        Inst::Select {
                            dst: d,
                            cond: c,
                            a: Operand::Reg(t),
                            b: Operand::Imm(0),
                        },
                        at,
                    );
                }
            }
        }
        _ => unreachable!("dispatched by Lower::inst"),
    }
    Ok(())
}

/// How a PTX compare is computed from the IR's ordered compares.
#[derive(Clone, Copy)]
enum CmpPlan {
    /// One IR compare.
    Plain(CmpOp, Ty),
    /// An IR compare, negated: the unordered `ltu`..`geu` are the negations of the ordered
    /// opposite compares (true when either operand is NaN).
    Not(CmpOp, Ty),
    /// Ordered `ne` (`lt or gt`), negated for `equ`.
    OrderedNe { negate: bool },
    /// `num` (both ordered) or, negated, `nan`.
    Num { negate: bool },
}

/// The compare of `setp`/`set` (PTX ISA §9.7.3.1 "Comparison": integer, unsigned and float
/// compares, ordered and unordered).
fn cmp_plan(m: &str, ty: Ty, i: &Instr, at: SrcLoc) -> R<CmpPlan> {
    let unsigned = |t: Ty| match t {
        Ty::I32 => Ty::U32,
        Ty::I64 => Ty::U64,
        t => t,
    };
    let float = ty == Ty::F32;
    Ok(match (m, float) {
        ("eq", _) => CmpPlan::Plain(CmpOp::Eq, ty),
        ("ne", false) => CmpPlan::Plain(CmpOp::Ne, ty),
        ("ne", true) => CmpPlan::OrderedNe { negate: false },
        ("equ", true) => CmpPlan::OrderedNe { negate: true },
        ("neu", true) => CmpPlan::Plain(CmpOp::Ne, ty),
        ("lt", _) => CmpPlan::Plain(CmpOp::Lt, ty),
        ("le", _) => CmpPlan::Plain(CmpOp::Le, ty),
        ("gt", _) => CmpPlan::Plain(CmpOp::Gt, ty),
        ("ge", _) => CmpPlan::Plain(CmpOp::Ge, ty),
        ("ltu", true) => CmpPlan::Not(CmpOp::Ge, ty),
        ("leu", true) => CmpPlan::Not(CmpOp::Gt, ty),
        ("gtu", true) => CmpPlan::Not(CmpOp::Le, ty),
        ("geu", true) => CmpPlan::Not(CmpOp::Lt, ty),
        ("num", true) => CmpPlan::Num { negate: false },
        ("nan", true) => CmpPlan::Num { negate: true },
        ("lo", false) => CmpPlan::Plain(CmpOp::Lt, unsigned(ty)),
        ("ls", false) => CmpPlan::Plain(CmpOp::Le, unsigned(ty)),
        ("hi", false) => CmpPlan::Plain(CmpOp::Gt, unsigned(ty)),
        ("hs", false) => CmpPlan::Plain(CmpOp::Ge, unsigned(ty)),
        _ => {
            return Err(CError::new(
                at,
                format!("`{}`: compare `.{m}` does not take this type", i.spelled()),
            ))
        }
    })
}

const CMPS: &[&str] = &[
    "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu",
    "geu", "num", "nan",
];
const BOOLS: &[&str] = &["and", "or", "xor"];

/// `dst = a cmp b` (0 or 1).
fn compare(l: &mut Lower, plan: CmpPlan, dst: Reg, a: Operand, b: Operand, at: SrcLoc) {
    let not = |l: &mut Lower| {
        emit_alu(
            l,
            AluOp::Xor,
            Ty::U32,
            dst,
            Operand::Reg(dst),
            Operand::Imm(1),
            at,
        )
    };
    match plan {
        CmpPlan::Plain(op, ty) => l.emit(Inst::Cmp { op, ty, dst, a, b }, at),
        CmpPlan::Not(op, ty) => {
            l.emit(Inst::Cmp { op, ty, dst, a, b }, at);
            not(l);
        }
        CmpPlan::OrderedNe { negate } => {
            let x = l.temp();
            l.emit(
                Inst::Cmp {
                    op: CmpOp::Lt,
                    ty: Ty::F32,
                    dst: x,
                    a,
                    b,
                },
                at,
            );
            l.emit(
                Inst::Cmp {
                    op: CmpOp::Gt,
                    ty: Ty::F32,
                    dst,
                    a,
                    b,
                },
                at,
            );
            emit_alu(
                l,
                AluOp::Or,
                Ty::U32,
                dst,
                Operand::Reg(dst),
                Operand::Reg(x),
                at,
            );
            if negate {
                not(l);
            }
        }
        CmpPlan::Num { negate } => {
            let x = l.temp();
            l.emit(
                Inst::Cmp {
                    op: CmpOp::Eq,
                    ty: Ty::F32,
                    dst: x,
                    a,
                    b: a,
                },
                at,
            );
            l.emit(
                Inst::Cmp {
                    op: CmpOp::Eq,
                    ty: Ty::F32,
                    dst,
                    a: b,
                    b,
                },
                at,
            );
            emit_alu(
                l,
                AluOp::And,
                Ty::U32,
                dst,
                Operand::Reg(dst),
                Operand::Reg(x),
                at,
            );
            if negate {
                not(l);
            }
        }
    }
}

/// The compare and optional predicate combination shared by `setp` and `set`: the result (0/1)
/// in a register, and the negated result combined the same way (for `p|q`).
fn compare_combined(l: &mut Lower, i: &Instr, src_ty: Ty, want_neg: bool) -> R<(Reg, Option<Reg>)> {
    let at = i.loc;
    let (cm, cat) = i
        .mods
        .iter()
        .find(|(m, _)| CMPS.contains(&m.as_str()))
        .ok_or_else(|| {
            CError::new(
                at,
                format!("`{}` needs a compare (.eq, .lt, ...)", i.spelled()),
            )
        })?;
    let boolop = i
        .mods
        .iter()
        .find(|(m, _)| BOOLS.contains(&m.as_str()))
        .map(|(m, _)| m.as_str());
    let plan = cmp_plan(cm, src_ty, i, *cat)?;
    let n = if boolop.is_some() { 4 } else { 3 };
    let ops = operands(
        i,
        n,
        if boolop.is_some() {
            "`d, a, b, c`"
        } else {
            "`d, a, b`"
        },
    )?;
    let a = l.src_op(&ops[1], src_ty)?;
    let b = l.src_op(&ops[2], src_ty)?;
    let t = l.temp();
    compare(l, plan, t, a, b, at);
    let Some(bop) = boolop else {
        let q = if want_neg {
            let q = l.temp();
            emit_alu(
                l,
                AluOp::Xor,
                Ty::U32,
                q,
                Operand::Reg(t),
                Operand::Imm(1),
                at,
            );
            Some(q)
        } else {
            None
        };
        return Ok((t, q));
    };
    let (c, neg_c) = match &ops[3] {
        Opnd::Not(inner, _) => (l.src_op(inner, Ty::U32)?, true),
        o => (l.src_op(o, Ty::U32)?, false),
    };
    let c = if neg_c {
        let x = l.temp();
        emit_alu(l, AluOp::Xor, Ty::U32, x, c, Operand::Imm(1), at);
        Operand::Reg(x)
    } else {
        c
    };
    let aop = match bop {
        "and" => AluOp::And,
        "or" => AluOp::Or,
        _ => AluOp::Xor,
    };
    let r = l.temp();
    emit_alu(l, aop, Ty::U32, r, Operand::Reg(t), c, at);
    let q = if want_neg {
        let nt = l.temp();
        emit_alu(
            l,
            AluOp::Xor,
            Ty::U32,
            nt,
            Operand::Reg(t),
            Operand::Imm(1),
            at,
        );
        let q = l.temp();
        emit_alu(l, aop, Ty::U32, q, Operand::Reg(nt), c, at);
        Some(q)
    } else {
        None
    };
    Ok((r, q))
}

/// `setp.cmp{.bool}.type p{|q}, a, b{, {!}c}`.
pub fn setp(l: &mut Lower, i: &Instr) -> R<()> {
    only_mods(i, &[CMPS, BOOLS].concat())?;
    let (ty, _) = one_ty(i)?;
    let Some(first) = i.operands.first() else {
        return Err(CError::new(i.loc, "`setp` needs a destination predicate"));
    };
    let (p, q) = match first {
        Opnd::Pair(p, q, _) => (p.as_ref().clone(), Some(q.as_ref().clone())),
        o => (o.clone(), None),
    };
    let (r, nr) = compare_combined(l, i, ty, q.is_some())?;
    let pd = l.dst(&p)?;
    l.emit(
        Inst::Mov {
            dst: pd,
            src: Operand::Reg(r),
        },
        i.loc,
    );
    if let (Some(q), Some(nr)) = (q, nr) {
        let qd = l.dst(&q)?;
        l.emit(
            Inst::Mov {
                dst: qd,
                src: Operand::Reg(nr),
            },
            i.loc,
        );
    }
    Ok(())
}

/// `set.cmp{.bool}.dtype.stype d, a, b{, c}`: all ones (integers) or 1.0 (f32) where it holds.
pub fn set(l: &mut Lower, i: &Instr) -> R<()> {
    only_mods(i, &[CMPS, BOOLS].concat())?;
    let tys = types_of(i);
    let [(dt, dn, dat), (st, sn, sat)] = tys.as_slice() else {
        return Err(CError::new(
            i.loc,
            format!("`{}` needs a destination and a source type", i.spelled()),
        ));
    };
    let dty = ir_of(*dt, dn, *dat, i)?;
    let sty = ir_of(*st, sn, *sat, i)?;
    let (r, _) = compare_combined(l, i, sty, false)?;
    let d = l.dst(&i.operands[0])?;
    let yes = match dty {
        Ty::F32 => f32_bits(1.0),
        t => t.width().mask(),
    };
    l.emit(
        Inst::Select {
            dst: d,
            cond: r,
            a: Operand::Imm(yes),
            b: Operand::Imm(0),
        },
        i.loc,
    );
    Ok(())
}

/// `selp.type d, a, b, c`: `c ? a : b`.
pub fn selp(l: &mut Lower, i: &Instr) -> R<()> {
    only_mods(i, &[])?;
    let (ty, _) = one_ty(i)?;
    let ops = operands(i, 4, "`selp.type d, a, b, p`")?;
    let (a, pa) = l.src(&ops[1], ty)?;
    let (b, pb) = l.src(&ops[2], ty)?;
    let c = l.src_reg(&ops[3], Ty::U32)?;
    let d = l.dst(&ops[0])?;
    l.def_prov(d, super::join(pa, pb));
    l.emit(
        Inst::Select {
            dst: d,
            cond: c,
            a,
            b,
        },
        i.loc,
    );
    Ok(())
}

/// `cvt{.rnd}.dtype.atype d, a`.
pub fn cvt(l: &mut Lower, i: &Instr) -> R<()> {
    let tys = types_of(i);
    let [(dt, dn, dat), (st, sn, sat)] = tys.as_slice() else {
        return Err(CError::new(
            i.loc,
            format!("`{}` needs a destination and a source type", i.spelled()),
        ));
    };
    let at = i.loc;
    let ops = operands(i, 2, "`cvt.dtype.atype d, a`")?;
    match (*dt, *st) {
        (
            PType::Int {
                bits: db,
                signed: ds,
            },
            PType::Int {
                bits: sb,
                signed: ss,
            },
        ) => {
            only_mods(i, &[])?;
            if db > 64 || sb > 64 {
                return Err(CError::new(
                    at,
                    format!("`{}`: 128-bit integers are not modelled yet", i.spelled()),
                ));
            }
            let (src, p) = l.src(&ops[1], if sb == 64 { Ty::U64 } else { Ty::U32 })?;
            let d = l.dst(&ops[0])?;
            l.def_prov(d, p);
            // The value: truncated to the narrower width, extended by the source's signedness
            // (PTX ISA `cvt`, integer conversions), then held zero-extended from 32 bits.
            let k = db.min(sb);
            let signed = if db > sb { ss } else { ds };
            let sty = |bits: u32, s: bool| match (bits, s) {
                (32, false) => Ty::U32,
                (32, true) => Ty::I32,
                (_, false) => Ty::U64,
                (_, true) => Ty::I64,
            };
            if k >= 32 {
                let from = sty(k, signed);
                let to = sty(db, ds);
                match src {
                    Operand::Reg(r) => l.emit(
                        Inst::Cvt {
                            dst: d,
                            src: r,
                            from,
                            to,
                        },
                        at,
                    ),
                    Operand::Imm(v) => l.emit(
                        Inst::Mov {
                            dst: d,
                            src: Operand::Imm(eval::convert(v, from, to)),
                        },
                        at,
                    ),
                }
            } else {
                let sh = 64 - k as u64;
                let t = l.temp();
                emit_alu(l, AluOp::Shl, Ty::U64, t, src, Operand::Imm(sh), at);
                emit_alu(
                    l,
                    AluOp::Shr,
                    if signed { Ty::I64 } else { Ty::U64 },
                    d,
                    Operand::Reg(t),
                    Operand::Imm(sh),
                    at,
                );
                if db <= 32 {
                    emit_alu(
                        l,
                        AluOp::And,
                        Ty::U64,
                        d,
                        Operand::Reg(d),
                        Operand::Imm(0xFFFF_FFFF),
                        at,
                    );
                }
            }
            Ok(())
        }
        (PType::F32, PType::F32) => {
            only_mods(i, &["rni", "rzi", "rmi", "rpi", "sat", "ftz"])?;
            let s = l.src_reg(&ops[1], Ty::F32)?;
            let d = l.dst(&ops[0])?;
            super::math::cvt_rounded(l, i, s, d, Ty::F32)
        }
        (PType::Int { .. }, PType::F32)
            if ["rni", "rmi", "rpi", "sat", "ftz"].iter().any(|m| i.has(m)) =>
        {
            only_mods(i, &["rni", "rzi", "rmi", "rpi", "sat", "ftz"])?;
            if !["rni", "rzi", "rmi", "rpi"].iter().any(|m| i.has(m)) {
                return Err(CError::new(at, format!("`{}`: a float-to-integer conversion needs an integer rounding (`.rni`, `.rzi`, `.rmi`, `.rpi`)", i.spelled())));
            }
            let to = ir_of(*dt, dn, *dat, i)?;
            let s = l.src_reg(&ops[1], Ty::F32)?;
            let d = l.dst(&ops[0])?;
            // Every float-to-integer `cvt` saturates and converts NaN to 0 (the IR's `Cvt`).
            super::math::cvt_rounded(l, i, s, d, to)
        }
        (PType::F32, PType::Int { .. }) | (PType::Int { .. }, PType::F32) => {
            let int_to_float = *dt == PType::F32;
            // Integer → f32 rounds to nearest even; f32 → integer truncates and saturates,
            // NaN → 0 (PTX ISA `cvt`; the IR's conversion, ir/eval.rs).
            let need = if int_to_float { "rn" } else { "rzi" };
            if !i.has(need) {
                return Err(CError::new(
                    at,
                    format!(
                        "`{}`: modelled with `.{need}` only (the IR's {})",
                        i.spelled(),
                        if int_to_float {
                            "round-to-nearest"
                        } else {
                            "truncation"
                        }
                    ),
                ));
            }
            only_mods(i, &[need])?;
            let from = ir_of(*st, sn, *sat, i)?;
            let to = ir_of(*dt, dn, *dat, i)?;
            let s = l.src_reg(&ops[1], from)?;
            let d = l.dst(&ops[0])?;
            l.emit(
                Inst::Cvt {
                    dst: d,
                    src: s,
                    from,
                    to,
                },
                at,
            );
            Ok(())
        }
        _ => {
            ir_of(*st, sn, *sat, i)?;
            ir_of(*dt, dn, *dat, i)?;
            Err(CError::new(
                at,
                format!("`{}` is not modelled yet", i.spelled()),
            ))
        }
    }
}
