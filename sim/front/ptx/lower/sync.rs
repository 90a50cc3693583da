//! Barriers and fences (PTX ISA §9.7.13.4 `bar`/`barrier`, §9.7.13.3 `bar.warp.sync`, §9.7.13.4
//! `membar`/`fence`), and `nanosleep`.
//!
//! `bar.sync 0` with no thread count is the work-group barrier (`__syncthreads`, as the C front end
//! lowers it); other ids and counts, `bar.arrive` and `bar.red` are the machine's named CTA
//! barriers; `.aligned` is accepted (it promises that every thread of a warp executes the barrier,
//! which the machine does not rely on). `bar.warp.sync` with the full mask is the sub-group barrier;
//! a partial mask is refused. `membar.cta|gl|sys` is `fence.sc` at that scope (PTX ISA: membar
//! is a synonym of `fence.sc`); `fence.proxy`, `fence.mbarrier_init` and the cluster scope are
//! refused. `nanosleep` only delays the thread: it issues as one special-function instruction (a
//! timing approximation: the machine does not sleep for the requested time).

use super::types::only_mods;
use super::{Lower, R};
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{Instr, Opnd};

fn const_u32(l: &mut Lower, o: &Opnd, what: &str) -> R<u32> {
    match l.src_op(o, Ty::U32)? {
        Operand::Imm(v) => Ok(v as u32),
        Operand::Reg(_) => Err(CError::new(
            o.loc(),
            format!("{what} in a register is not modelled yet: give an immediate"),
        )),
    }
}

pub fn barrier(l: &mut Lower, i: &Instr) -> R<()> {
    let at = i.loc;
    let words: Vec<&str> = i
        .mods
        .iter()
        .map(|(m, _)| m.as_str())
        .filter(|m| *m != "aligned" && *m != "cta")
        .collect();
    if i.op == "bar" && words.first() == Some(&"warp") {
        only_mods(i, &["warp", "sync"])?;
        let [mask] = i.operands.as_slice() else {
            return Err(CError::new(at, "`bar.warp.sync membermask`"));
        };
        match l.src_op(mask, Ty::U32)? {
            Operand::Imm(0xFFFF_FFFF) => {}
            _ => return Err(CError::new(mask.loc(), "`bar.warp.sync` with a mask other than 0xffffffff is not modelled yet (the machine's sub-group barrier is the whole warp)")),
        }
        l.emit(
            Inst::Barrier {
                kind: BarrierKind::SubGroup,
                spaces: SpaceSet::BOTH,
                scope: Scope::SubGroup,
            },
            at,
        );
        return Ok(());
    }
    let (op, red) = match words.as_slice() {
        ["sync"] | [] => (BarrierOp::Sync, None),
        ["arrive"] => (BarrierOp::Arrive, None),
        ["red", r, t] => (BarrierOp::Sync, Some((*r, *t))),
        _ => {
            return Err(CError::new(
                at,
                format!(
                    "`{}`: expected `bar.sync`, `bar.arrive`, `bar.red` or `bar.warp.sync`",
                    i.spelled()
                ),
            ))
        }
    };
    let mut ops: &[Opnd] = &i.operands;
    let mut dst = None;
    if let Some((r, t)) = red {
        let ok = matches!((r, t), ("popc", "u32") | ("and", "pred") | ("or", "pred"));
        if !ok {
            return Err(CError::new(
                at,
                format!(
                    "`{}`: expected `bar.red.popc.u32`, `bar.red.and.pred` or `bar.red.or.pred`",
                    i.spelled()
                ),
            ));
        }
        let Some((d, rest)) = ops.split_first() else {
            return Err(CError::new(at, "`bar.red` needs a destination"));
        };
        dst = Some(l.dst(d)?);
        ops = rest;
    }
    let pred = if red.is_some() {
        let Some((p, rest)) = ops.split_last() else {
            return Err(CError::new(at, "`bar.red` needs a predicate"));
        };
        ops = rest;
        Some(match p {
            Opnd::Not(inner, _) => (l.src_reg(inner, Ty::U32)?, true),
            p => (l.src_reg(p, Ty::U32)?, false),
        })
    } else {
        None
    };
    if ops.is_empty() || ops.len() > 2 || (op == BarrierOp::Arrive && ops.len() != 2) {
        return Err(CError::new(at, format!("`{}`: expected a barrier id and an optional thread count (`bar.arrive` needs both)", i.spelled())));
    }
    let id = const_u32(l, &ops[0], "a barrier id")?;
    if id >= BARRIERS_PER_GROUP as u32 {
        return Err(CError::new(
            ops[0].loc(),
            format!("found barrier id {id} but expected 0 to 15 (16 barriers per CTA)"),
        ));
    }
    let threads = match ops.get(1) {
        None => None,
        Some(o) => {
            let n = const_u32(l, o, "a thread count")?;
            if n == 0 || n % 32 != 0 {
                return Err(CError::new(o.loc(), format!("found thread count {n} but expected a positive multiple of the warp size (32)")));
            }
            Some(n)
        }
    };
    let op = match (red, dst, pred) {
        (Some((r, _)), Some(dst), Some((pred, negated))) => BarrierOp::Reduce {
            op: match r {
                "popc" => BarrierReduce::Popc,
                "and" => BarrierReduce::And,
                _ => BarrierReduce::Or,
            },
            dst,
            pred,
            negated,
            per_lane: false,
        },
        _ => op,
    };
    let kind = if id == 0 && threads.is_none() && op == BarrierOp::Sync {
        BarrierKind::WorkGroup
    } else {
        BarrierKind::Named(CtaBarrier {
            id: id as u8,
            threads,
            op,
        })
    };
    l.emit(
        Inst::Barrier {
            kind,
            spaces: SpaceSet::BOTH,
            scope: Scope::WorkGroup,
        },
        at,
    );
    Ok(())
}

pub fn fence(l: &mut Lower, i: &Instr) -> R<()> {
    let at = i.loc;
    if !i.operands.is_empty() {
        return Err(CError::new(
            at,
            format!("`{}` takes no operands", i.spelled()),
        ));
    }
    let words: Vec<&str> = i.mods.iter().map(|(m, _)| m.as_str()).collect();
    let scope = |w: &str| match w {
        "cta" => Ok(Scope::WorkGroup),
        "gpu" | "gl" => Ok(Scope::Device),
        "sys" => Ok(Scope::System),
        _ => Err(CError::new(
            at,
            format!("`{}`: scope `.{w}` is not modelled yet", i.spelled()),
        )),
    };
    let (ord, s) = match (i.op.as_str(), words.as_slice()) {
        ("membar", [s]) => (FenceOrd::SeqCst, scope(s)?),
        ("fence", ["sc", s]) => (FenceOrd::SeqCst, scope(s)?),
        ("fence", ["acq_rel", s]) => (FenceOrd::AcqRel, scope(s)?),
        ("fence", [s]) if matches!(*s, "cta" | "gpu" | "sys") => (FenceOrd::AcqRel, scope(s)?),
        _ => return Err(CError::new(at, format!("`{}` is not modelled yet (modelled: fence.sc/.acq_rel with .cta/.gpu/.sys, membar.cta/.gl/.sys)", i.spelled()))),
    };
    l.emit(
        Inst::Fence {
            ord,
            scope: s,
            spaces: SpaceSet::BOTH,
        },
        at,
    );
    Ok(())
}

pub fn nanosleep(l: &mut Lower, i: &Instr) -> R<()> {
    only_mods(i, &[])?;
    if i.operands.len() != 1 {
        return Err(CError::new(i.loc, "`nanosleep.u32 t`"));
    }
    l.src_op(&i.operands[0], Ty::U32)?;
    l.emit(
        Inst::Compute {
            class: LatencyClass::Special,
        },
        i.loc,
    );
    Ok(())
}
