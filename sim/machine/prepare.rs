//! Load-time preparation of a workload for one config, run at the start of every [`super::run`] so
//! that every front end (kernel language, litmus dialects, traces) gets it:
//!
//! 1. Capability check (SYCL's `atomic_memory_order_capabilities` / `atomic_fence_scope_capabilities`,
//!    DESIGN.md "Scope rules"): an atomic whose order or scope, or a fence or barrier whose order or scope,
//!    is not in the config's `[support]` table is rejected with the instruction's `file:line:col`.
//!    Orders are checked as written; an atomic's scope after local memory's narrowing to work_group
//!    (`ordering::checked_scope`: a local-memory atomic written at system scope runs on a device that
//!    supports only work_group scope) but before system scope falls back to device scope without SVM,
//!    as a compiler for the device would see them. A barrier is checked as an acq_rel fence at its
//!    scope when it orders any memory.
//! 2. With `atomics.float_add = "cas_loop"`, every f32 atomic add (and sub, an add of the negation) is
//!    lowered into the compare-exchange retry loop SYCL implementations use when the hardware has no
//!    float atomic add (SYCL chapter 19.2.5.2):
//!    ```text
//!        ld.relaxed.SCOPE  old, [a]
//!    L:  add.f32           new, old, v
//!        atom.cas.ORD.SCOPE seen, [a], old, new     (failure order relaxed: it retries)
//!        setp.ne.u32       p, seen, old             (bit compare: -0.0 and NaN must not loop forever)
//!        mov               old, seen
//!        @p bra L
//!        mov               dst, old                 (returning form only)
//!    ```
//!    The loop uses four scratch registers appended to the kernel; branch targets are renumbered.
//!    Other f32 atomics (min, max, exchange) stay native.

use super::api::SimError;
use super::ordering::checked_scope;
use crate::config::{FloatAtomicAdd, GpuConfig};
use crate::ir::*;
use crate::workload::Workload;
use std::borrow::Cow;

/// Checks `wl` against `cfg` and applies config-dependent lowering; borrows when nothing changes.
pub fn prepare<'w>(cfg: &GpuConfig, wl: &'w Workload) -> Result<Cow<'w, Workload>, SimError> {
    check_support(cfg, &wl.kernel)?;
    if cfg.atomics.float_add == FloatAtomicAdd::CasLoop && wl.kernel.insts.iter().any(is_float_add)
    {
        let mut w = wl.clone();
        w.kernel = lower_float_add(&wl.kernel);
        return Ok(Cow::Owned(w));
    }
    Ok(Cow::Borrowed(wl))
}

fn names<T: Copy>(list: &[T], name: impl Fn(T) -> &'static str) -> String {
    list.iter().map(|&x| name(x)).collect::<Vec<_>>().join(", ")
}

fn check_support(cfg: &GpuConfig, k: &Kernel) -> Result<(), SimError> {
    let s = &cfg.support;
    for (pc, inst) in k.insts.iter().enumerate() {
        let fail = |message: String| SimError::Unsupported {
            location: k.where_is(pc),
            message,
        };
        let atomic = |ord: MemOrder, scope: Scope| -> Result<(), SimError> {
            if !s.atomic_orders.contains(&ord) {
                return Err(fail(format!(
                    "atomic order `{}` is not supported by this GPU (support.atomic_orders = [{}])",
                    ord.name(),
                    names(&s.atomic_orders, MemOrder::name)
                )));
            }
            if !s.atomic_scopes.contains(&scope) {
                return Err(fail(format!(
                    "atomic scope `{scope}` is not supported by this GPU (support.atomic_scopes = [{}])",
                    names(&s.atomic_scopes, Scope::name)
                )));
            }
            Ok(())
        };
        let fence = |what: &str, ord: MemOrder, scope: Scope| -> Result<(), SimError> {
            if !s.fence_orders.contains(&ord) {
                return Err(fail(format!(
                    "{what} order `{}` is not supported by this GPU (support.fence_orders = [{}])",
                    ord.name(),
                    names(&s.fence_orders, MemOrder::name)
                )));
            }
            if !s.fence_scopes.contains(&scope) {
                return Err(fail(format!(
                    "{what} scope `{scope}` is not supported by this GPU (support.fence_scopes = [{}])",
                    names(&s.fence_scopes, Scope::name)
                )));
            }
            Ok(())
        };
        match *inst {
            Inst::Load {
                ord, scope, space, ..
            } => {
                if let Some(o) = ord.atomic_order() {
                    atomic(o, checked_scope(space, scope))?;
                }
            }
            Inst::Store {
                ord, scope, space, ..
            } => {
                if let Some(o) = ord.atomic_order() {
                    atomic(o, checked_scope(space, scope))?;
                }
            }
            Inst::Rmw {
                ord, scope, space, ..
            } => atomic(ord.order(), checked_scope(space, scope))?,
            Inst::Cas {
                success,
                failure,
                scope,
                space,
                ..
            } => {
                let scope = checked_scope(space, scope);
                atomic(success.order(), scope)?;
                if let Some(f) = failure.atomic_order() {
                    atomic(f, scope)?;
                }
            }
            Inst::Fence { ord, scope, .. } => fence("fence", ord.order(), scope)?,
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } if kind.is_work_group() && spaces != SpaceSet::NONE => {
                fence("barrier", MemOrder::AcqRel, scope)?
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_float_add(i: &Inst) -> bool {
    matches!(
        i,
        Inst::Rmw {
            op: RmwOp::Add | RmwOp::Sub,
            ty: Ty::F32,
            ..
        }
    )
}

fn lower_float_add(k: &Kernel) -> Kernel {
    let mut reg_names = k.reg_names.clone();
    let mut scratch = |name: &str| {
        reg_names.push(name.to_string());
        (reg_names.len() - 1) as Reg
    };
    let (old, new, seen, retry) = (
        scratch("%%cas_old"),
        scratch("%%cas_new"),
        scratch("%%cas_seen"),
        scratch("%%cas_retry"),
    );
    // New position of every old instruction, for branch targets.
    let mut start = Vec::with_capacity(k.insts.len() + 1);
    let mut n = 0u32;
    for i in &k.insts {
        start.push(n);
        n += match i {
            Inst::Rmw { dst, .. } if is_float_add(i) => 6 + dst.is_some() as u32,
            _ => 1,
        };
    }
    let end = n;
    let remap = |t: u32| {
        start
            .get(t as usize)
            .copied()
            .unwrap_or_else(|| end + (t - k.insts.len() as u32))
    };
    let mut insts = Vec::with_capacity(end as usize);
    let mut locs = Vec::with_capacity(end as usize);
    for (pc, i) in k.insts.iter().enumerate() {
        let loc = k.locs.get(pc).copied().unwrap_or_default();
        match *i {
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                scope,
            } if is_float_add(i) => {
                let head = start[pc] + 1;
                let alu = if op == RmwOp::Add {
                    AluOp::Add
                } else {
                    AluOp::Sub
                };
                let mut seq = vec![
                    Inst::Load {
                        dst: old,
                        space,
                        addr,
                        ty,
                        ord: LoadOrd::Relaxed,
                        scope,
                    },
                    Inst::Alu {
                        op: alu,
                        ty,
                        dst: new,
                        a: Operand::Reg(old),
                        b: operand,
                    },
                    Inst::Cas {
                        dst: Some(seen),
                        space,
                        addr,
                        expected: Operand::Reg(old),
                        desired: Operand::Reg(new),
                        ty,
                        success: ord,
                        failure: LoadOrd::Relaxed,
                        scope,
                        weak: false,
                    },
                    Inst::Cmp {
                        op: CmpOp::Ne,
                        ty: Ty::U32,
                        dst: retry,
                        a: Operand::Reg(seen),
                        b: Operand::Reg(old),
                    },
                    Inst::Mov {
                        dst: old,
                        src: Operand::Reg(seen),
                    },
                    Inst::Branch {
                        target: head,
                        cond: Some((retry, true)),
                    },
                ];
                if let Some(d) = dst {
                    seq.push(Inst::Mov {
                        dst: d,
                        src: Operand::Reg(old),
                    });
                }
                locs.extend(std::iter::repeat_n(loc, seq.len()));
                insts.extend(seq);
            }
            Inst::Branch { target, cond } => {
                insts.push(Inst::Branch {
                    target: remap(target),
                    cond,
                });
                locs.push(loc);
            }
            _ => {
                insts.push(i.clone());
                locs.push(loc);
            }
        }
    }
    Kernel {
        name: k.name.clone(),
        file: k.file.clone(),
        insts,
        locs,
        reg_names,
        local_bytes: k.local_bytes,
        semantics: k.semantics,
    }
}
