//! Warp-level data exchange (PTX ISA §9.7.9.6 `shfl.sync`, §9.7.13.6 `vote.sync`, §9.7.13.7
//! `match.sync`, §9.7.13.10 `redux.sync`, §9.7.13.9 `activemask`) → [`Inst::Warp`], one IR
//! instruction each; and the lane-mask special registers `%lanemask_eq/lt/le/gt/ge`, computed
//! from `%laneid`.
//!
//! Modelled: `shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask`;
//! `vote.sync.{all,any,uni}.pred d, {!}a, membermask` and `vote.sync.ballot.b32 d, {!}a,
//! membermask`; `match.{any,all}.sync.{b32,b64} d{|p}, a, membermask`;
//! `redux.sync.{add,min,max}.{u32,s32}` and `redux.sync.{and,or,xor}.b32 d, a, membermask`;
//! `activemask.b32 d`. The machine refuses at run time a member mask naming a live lane that is
//! not executing the instruction (`machine::sm::exchange`).
//!
//! Refused: the pre-Volta forms without `.sync` (`shfl.down.b32`, `vote.any.pred`: PTX ISA 6.0
//! deprecates them and sm_70 needs `.sync`), `redux.sync` on `.f32` and with `.abs`/`.NaN`
//! (sm_100a), `vote.sync.ballot` of a type other than `.b32`.

use super::types::only_mods;
use super::{Lower, R};
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{Instr, Opnd};

/// The destination and optional predicate destination of `d{|p}`.
fn dsts(l: &mut Lower, o: &Opnd, pred_ok: bool, i: &Instr) -> R<(Reg, Option<Reg>)> {
    match o {
        Opnd::Pair(d, p, at) => {
            if !pred_ok {
                return Err(CError::new(
                    *at,
                    format!("`{}` has one destination, not `d|p`", i.spelled()),
                ));
            }
            Ok((l.dst(d)?, Some(l.dst(p)?)))
        }
        o => Ok((l.dst(o)?, None)),
    }
}

/// A predicate source `{!}p` as a register holding 0 or 1.
fn pred_src(l: &mut Lower, o: &Opnd) -> R<Operand> {
    match o {
        Opnd::Not(inner, at) => {
            let p = l.src_op(inner, Ty::U32)?;
            let t = l.temp();
            l.emit(
                Inst::Alu {
                    op: AluOp::Xor,
                    ty: Ty::U32,
                    dst: t,
                    a: p,
                    b: Operand::Imm(1),
                },
                *at,
            );
            Ok(Operand::Reg(t))
        }
        o => l.src_op(o, Ty::U32),
    }
}

fn form(i: &Instr, n: usize, f: &str) -> R<()> {
    if i.operands.len() != n {
        return Err(CError::new(
            i.loc,
            format!("`{}` takes {n} operands: {f}", i.spelled()),
        ));
    }
    Ok(())
}

/// The one type modifier among `allowed`.
fn ty_of(i: &Instr, allowed: &[(&str, Ty)]) -> R<Ty> {
    let found: Vec<_> = i
        .mods
        .iter()
        .filter_map(|(m, at)| super::types::PType::parse(m).map(|_| (m.as_str(), *at)))
        .collect();
    match found.as_slice() {
        [(m, at)] => allowed
            .iter()
            .find(|(n, _)| n == m)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                CError::new(
                    *at,
                    format!(
                        "`{}`: `.{m}` is not modelled yet (expected {})",
                        i.spelled(),
                        allowed
                            .iter()
                            .map(|(n, _)| format!(".{n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            }),
        _ => Err(CError::new(
            i.loc,
            format!(
                "`{}` needs one type ({})",
                i.spelled(),
                allowed
                    .iter()
                    .map(|(n, _)| format!(".{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

fn needs_sync(i: &Instr) -> R<()> {
    if i.has("sync") {
        return Ok(());
    }
    Err(CError::new(
        i.loc,
        format!(
            "`{}` without `.sync` is not modelled yet (deprecated since PTX ISA 6.0; sm_70 and later \
             need the `.sync` form with a member mask)",
            i.spelled()
        ),
    ))
}

/// One of `shfl`, `vote`, `match`, `redux`, `activemask`.
pub fn inst(l: &mut Lower, i: &Instr) -> R<()> {
    let at = i.loc;
    let mode = |names: &[&str]| -> Option<String> {
        i.mods
            .iter()
            .map(|(m, _)| m.as_str())
            .find(|m| names.contains(m))
            .map(str::to_string)
    };
    let (op, ty, nargs, pred_ok) = match i.op.as_str() {
        "activemask" => {
            only_mods(i, &[])?;
            ty_of(i, &[("b32", Ty::U32)])?;
            form(i, 1, "d")?;
            let dst = l.dst(&i.operands[0])?;
            l.emit(
                Inst::Warp {
                    op: WarpOp::ActiveMask,
                    ty: Ty::U32,
                    dst,
                    pred: None,
                    args: [Operand::Imm(0); 3],
                    members: Operand::Imm(0),
                },
                at,
            );
            return Ok(());
        }
        "shfl" => {
            only_mods(i, &["sync", "up", "down", "bfly", "idx"])?;
            needs_sync(i)?;
            let m = match mode(&["up", "down", "bfly", "idx"]).as_deref() {
                Some("up") => ShflMode::Up,
                Some("down") => ShflMode::Down,
                Some("bfly") => ShflMode::Bfly,
                Some("idx") => ShflMode::Idx,
                _ => {
                    return Err(CError::new(
                        at,
                        "`shfl.sync` needs a mode: .up, .down, .bfly or .idx",
                    ))
                }
            };
            let ty = ty_of(i, &[("b32", Ty::U32)])?;
            form(i, 5, "d{|p}, a, b, c, membermask")?;
            (WarpOp::Shfl(m), ty, 3, true)
        }
        "vote" => {
            only_mods(i, &["sync", "all", "any", "uni", "ballot"])?;
            needs_sync(i)?;
            let (m, ty) = match mode(&["all", "any", "uni", "ballot"]).as_deref() {
                Some("all") => (VoteMode::All, ty_of(i, &[("pred", Ty::U32)])?),
                Some("any") => (VoteMode::Any, ty_of(i, &[("pred", Ty::U32)])?),
                Some("uni") => (VoteMode::Uni, ty_of(i, &[("pred", Ty::U32)])?),
                Some("ballot") => (VoteMode::Ballot, ty_of(i, &[("b32", Ty::U32)])?),
                _ => {
                    return Err(CError::new(
                        at,
                        "`vote.sync` needs a mode: .all, .any, .uni or .ballot",
                    ))
                }
            };
            form(i, 3, "d, {!}a, membermask")?;
            (WarpOp::Vote(m), ty, 1, false)
        }
        "match" => {
            only_mods(i, &["sync", "any", "all"])?;
            needs_sync(i)?;
            let (op, pred_ok) = match mode(&["any", "all"]).as_deref() {
                Some("any") => (WarpOp::MatchAny, false),
                Some("all") => (WarpOp::MatchAll, true),
                _ => return Err(CError::new(at, "`match.sync` needs a mode: .any or .all")),
            };
            let ty = ty_of(i, &[("b32", Ty::U32), ("b64", Ty::U64)])?;
            form(i, 3, "d{|p}, a, membermask")?;
            (op, ty, 1, pred_ok)
        }
        "redux" => {
            only_mods(i, &["sync", "add", "min", "max", "and", "or", "xor"])?;
            needs_sync(i)?;
            let r = match mode(&["add", "min", "max", "and", "or", "xor"]).as_deref() {
                Some("add") => ReduxOp::Add,
                Some("min") => ReduxOp::Min,
                Some("max") => ReduxOp::Max,
                Some("and") => ReduxOp::And,
                Some("or") => ReduxOp::Or,
                Some("xor") => ReduxOp::Xor,
                _ => {
                    return Err(CError::new(
                        at,
                        "`redux.sync` needs an operation: .add, .min, .max, .and, .or or .xor",
                    ))
                }
            };
            let ty = match r {
                ReduxOp::Add | ReduxOp::Min | ReduxOp::Max => {
                    ty_of(i, &[("u32", Ty::U32), ("s32", Ty::I32)])?
                }
                _ => ty_of(i, &[("b32", Ty::U32)])?,
            };
            form(i, 3, "d, a, membermask")?;
            (WarpOp::Redux(r), ty, 1, false)
        }
        _ => unreachable!("dispatched by name"),
    };
    // Sources before destinations: `d` may be one of them.
    let mut args = [Operand::Imm(0); 3];
    for (k, a) in args.iter_mut().enumerate().take(nargs) {
        let o = &i.operands[1 + k];
        *a = if matches!(op, WarpOp::Vote(_)) {
            pred_src(l, o)?
        } else if k == 0 {
            l.src_op(o, ty)?
        } else {
            l.src_op(o, Ty::U32)?
        };
    }
    let members = l.src_op(&i.operands[1 + nargs], Ty::U32)?;
    let (dst, pred) = dsts(l, &i.operands[0], pred_ok, i)?;
    l.emit(
        Inst::Warp {
            op,
            ty,
            dst,
            pred,
            args,
            members,
        },
        at,
    );
    Ok(())
}

/// `%lanemask_eq/lt/le/gt/ge` (PTX ISA §10.14-10.18): the lanes below, at or above this one,
/// from `%laneid` (two to four IR instructions).
pub fn lanemask(l: &mut Lower, which: &str, at: SrcLoc) -> Operand {
    let lane = l.temp();
    l.emit(
        Inst::ReadSpecial {
            dst: lane,
            which: Special::Lane,
        },
        at,
    );
    let bit = l.temp();
    // eq: 1 << lane; le: (2 << lane) - 1; lt: (1 << lane) - 1; ge: ~lt; gt: ~le (32 bits).
    let (shifted, minus, invert) = match which {
        "%lanemask_eq" => (1, false, false),
        "%lanemask_lt" => (1, true, false),
        "%lanemask_le" => (2, true, false),
        "%lanemask_ge" => (1, true, true),
        _ => (2, true, true),
    };
    l.emit(
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: bit,
            a: Operand::Imm(shifted),
            b: Operand::Reg(lane),
        },
        at,
    );
    if minus {
        l.emit(
            Inst::Alu {
                op: AluOp::Sub,
                ty: Ty::U64,
                dst: bit,
                a: Operand::Reg(bit),
                b: Operand::Imm(1),
            },
            at,
        );
    }
    if invert {
        l.emit(
            Inst::Alu {
                op: AluOp::Xor,
                ty: Ty::U32,
                dst: bit,
                a: Operand::Reg(bit),
                b: Operand::Imm(0xFFFF_FFFF),
            },
            at,
        );
    }
    Operand::Reg(bit)
}
