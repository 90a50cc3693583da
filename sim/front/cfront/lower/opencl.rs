//! OpenCL C's builtins: work-item functions, the OpenCL 2.0 atomics (`atomic_*` and
//! `atomic_*_explicit`), the OpenCL 1.x atomics (`atomic_add`, `atom_*`), fences, barriers, `min`/
//! `max`. The same functions serve kernels and the OpenCL litmus dialect's threads.
//!
//! Orders and scopes (OpenCL C 2.0 §6.13.11): an atomic function without `_explicit` is seq_cst at
//! device scope (`memory_scope_device`), and so is an `_explicit` one whose scope is left out;
//! `memory_scope_all_svm_devices` (and OpenCL 3.0's `memory_scope_all_devices`) is system scope;
//! `atomic_work_item_fence(flags, order, scope)` orders the spaces its flags name;
//! `mem_fence`/`read_mem_fence`/`write_mem_fence(flags)` are acq_rel/acquire/release fences at
//! work_group scope (§6.13.11.x, the OpenCL 1.x fences). The 1.x atomics (`atomic_add`,
//! `atomic_inc`, `atomic_cmpxchg`, `atom_*`, ...) are relaxed, at device scope on global memory and
//! work_group scope on local memory. `barrier(flags)` is `work_group_barrier(flags)`; its rule is
//! [`crate::barrier::work_group_barrier`]. The C11 spellings `atomic_thread_fence(order)` (device
//! scope) and `atomic_flag_*` are accepted too.
//!
//! Not supported (named): `memory_order_consume` (not in OpenCL 2.0), image fences, atomics on
//! `atomic_float` other than load, store, exchange and compare-exchange, work-group collective
//! functions, async copies, `printf`.

use super::atomics::{CasOrd, Mo};
use super::values::RVal;
use super::{Lower, Mode, R};
use crate::cfront::ast::{Expr, ExprKind};
use crate::cfront::types::STy;
use crate::ir::*;

impl Lower<'_> {
    /// A `memory_order_*` argument.
    pub(crate) fn ocl_order(&self, e: &Expr) -> R<Mo> {
        let w = e.ident().unwrap_or("");
        Ok(match w {
            "memory_order_relaxed" => Mo::Relaxed,
            "memory_order_acquire" => Mo::Acquire,
            "memory_order_release" => Mo::Release,
            "memory_order_acq_rel" => Mo::AcqRel,
            "memory_order_seq_cst" => Mo::SeqCst,
            "memory_order_consume" => return Err(self.err(e.loc, "memory_order_consume is not supported (use memory_order_acquire)")),
            _ => {
                return Err(self.err(
                    e.loc,
                    format!("`{}` is not a memory order (memory_order_relaxed, _acquire, _release, _acq_rel, _seq_cst)", describe(e)),
                ))
            }
        })
    }

    /// A `memory_scope_*` argument.
    pub(crate) fn ocl_scope(&self, e: &Expr) -> R<Scope> {
        let w = e.ident().unwrap_or("");
        w.strip_prefix("memory_scope_").and_then(Scope::parse).ok_or_else(|| {
            self.err(
                e.loc,
                format!("`{}` is not a memory scope (memory_scope_work_item, _sub_group, _work_group, _device, _all_svm_devices)", describe(e)),
            )
        })
    }

    /// Fence flags: a constant of `CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE` (or 0).
    pub(crate) fn ocl_flags(&mut self, e: &Expr) -> R<SpaceSet> {
        let bad = |l: &Self| {
            l.err(
                e.loc,
                "expected fence flags: CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE or both with `|`",
            )
        };
        let Some(v) = self.constant(e)?.and_then(|v| v.int_value()) else {
            return Err(bad(self));
        };
        if v & 4 != 0 {
            return Err(self.err(
                e.loc,
                "CLK_IMAGE_MEM_FENCE is not supported (images are not modelled)",
            ));
        }
        if !(0..=3).contains(&v) {
            return Err(bad(self));
        }
        Ok(SpaceSet {
            local: v & 1 != 0,
            global: v & 2 != 0,
        })
    }

    /// A constant dimension argument 0, 1 or 2.
    fn dim_arg(&mut self, key: &str, args: &[Expr], at: SrcLoc) -> R<Dim> {
        let [d] = args else {
            return Err(self.err(
                at,
                format!("`{key}` takes one argument (the dimension 0, 1 or 2)"),
            ));
        };
        match self.constant(d)?.and_then(|v| v.int_value()) {
            Some(0) => Ok(Dim::X),
            Some(1) => Ok(Dim::Y),
            Some(2) => Ok(Dim::Z),
            _ => Err(self.err(
                d.loc,
                format!("`{key}` takes a constant dimension 0, 1 or 2"),
            )),
        }
    }

    fn no_args(&self, key: &str, args: &[Expr], at: SrcLoc) -> R<()> {
        if args.is_empty() {
            Ok(())
        } else {
            Err(self.err(at, format!("`{key}` takes no arguments")))
        }
    }

    /// An OpenCL builtin function; `None` when `key` is not one.
    pub(crate) fn opencl_call(
        &mut self,
        key: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        let size_t = STy::U64;
        let v = match key {
            "get_global_id" => {
                let d = self.dim_arg(key, args, at)?;
                self.special(Special::GlobalId(d), size_t, hint, at)
            }
            "get_local_id" => {
                let d = self.dim_arg(key, args, at)?;
                self.special(Special::LocalId(d), size_t, hint, at)
            }
            "get_group_id" => {
                let d = self.dim_arg(key, args, at)?;
                self.special(Special::GroupId(d), size_t, hint, at)
            }
            "get_global_size" => {
                let d = self.dim_arg(key, args, at)?;
                self.launch_size(Special::GlobalSize(d), size_t, hint, at)
            }
            "get_local_size" | "get_enqueued_local_size" => {
                let d = self.dim_arg(key, args, at)?;
                self.launch_size(Special::LocalSize(d), size_t, hint, at)
            }
            "get_num_groups" => {
                let d = self.dim_arg(key, args, at)?;
                self.launch_size(Special::NumGroups(d), size_t, hint, at)
            }
            "get_global_offset" => {
                self.dim_arg(key, args, at)?;
                RVal::int(0, size_t)
            }
            "get_work_dim" => {
                self.no_args(key, args, at)?;
                let dims = match self.geometry {
                    Some(g) if g.groups[2] > 1 || g.group_size[2] > 1 => 3,
                    Some(g) if g.groups[1] > 1 || g.group_size[1] > 1 => 2,
                    _ => 1,
                };
                RVal::int(dims, STy::U32)
            }
            "get_global_linear_id"
            | "get_local_linear_id"
            | "get_sub_group_id"
            | "get_sub_group_local_id"
            | "get_sub_group_size"
            | "get_max_sub_group_size"
            | "get_num_sub_groups" => {
                self.no_args(key, args, at)?;
                let (which, ty) = match key {
                    "get_global_linear_id" => (Special::GlobalLinearId, size_t),
                    "get_local_linear_id" => (Special::LocalLinearId, size_t),
                    "get_sub_group_id" => (Special::SubGroupId, STy::U32),
                    "get_sub_group_local_id" => (Special::Lane, STy::U32),
                    "get_num_sub_groups" => (Special::NumSubGroups, STy::U32),
                    _ => (Special::SubGroupSize, STy::U32),
                };
                self.special(which, ty, hint, at)
            }
            "barrier" | "work_group_barrier" => {
                if args.is_empty() || args.len() > 2 || (key == "barrier" && args.len() == 2) {
                    return Err(self.err(
                        at,
                        format!(
                            "`{key}` takes the fence flags{}",
                            if key == "barrier" {
                                ""
                            } else {
                                " and optionally a scope"
                            }
                        ),
                    ));
                }
                let spaces = self.ocl_flags(&args[0])?;
                let (scope, sloc) = match args.get(1) {
                    Some(s) => (self.ocl_scope(s)?, s.loc),
                    None => (Scope::WorkGroup, at),
                };
                let inst = crate::barrier::work_group_barrier(spaces, scope)
                    .map_err(|e| self.err(sloc, e.to_string()))?;
                self.emit(inst, at);
                RVal::Void
            }
            "sub_group_barrier" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(self.err(
                        at,
                        "`sub_group_barrier` takes the fence flags and optionally a scope",
                    ));
                }
                let spaces = self.ocl_flags(&args[0])?;
                if let Some(s) = args.get(1) {
                    let sc = self.ocl_scope(s)?;
                    if sc != Scope::SubGroup && sc != Scope::WorkGroup {
                        return Err(self.err(
                            s.loc,
                            "a sub-group barrier's scope is sub_group or work_group",
                        ));
                    }
                }
                self.emit(
                    Inst::Barrier {
                        kind: BarrierKind::SubGroup,
                        spaces,
                        scope: Scope::SubGroup,
                    },
                    at,
                );
                RVal::Void
            }
            "mem_fence" | "read_mem_fence" | "write_mem_fence" => {
                let [f] = args else {
                    return Err(self.err(at, format!("`{key}` takes the fence flags")));
                };
                let spaces = self.ocl_flags(f)?;
                let m = match key {
                    "mem_fence" => Mo::AcqRel,
                    "read_mem_fence" => Mo::Acquire,
                    _ => Mo::Release,
                };
                self.fence(m, Scope::WorkGroup, spaces, at);
                RVal::Void
            }
            "atomic_work_item_fence" => {
                let [f, o, s] = args else {
                    return Err(self.err(
                        at,
                        "`atomic_work_item_fence` takes flags, an order and a scope",
                    ));
                };
                let spaces = self.ocl_flags(f)?;
                let m = self.ocl_order(o)?;
                let scope = self.ocl_scope(s)?;
                self.fence(m, scope, spaces, at);
                RVal::Void
            }
            "atomic_thread_fence" => {
                let [o] = args else {
                    return Err(self.err(at, "`atomic_thread_fence` takes an order (device scope)"));
                };
                let m = self.ocl_order(o)?;
                self.fence(m, Scope::Device, SpaceSet::BOTH, at);
                RVal::Void
            }
            "min" | "max" | "fmin" | "fmax" => {
                let [a, b] = args else {
                    return Err(self.err(at, format!("`{key}` takes two arguments")));
                };
                let f = match key {
                    "fmin" => "fminf",
                    "fmax" => "fmaxf",
                    k => k,
                };
                return self.cuda_call(f, &[a.clone(), b.clone()], hint, unused, at);
            }
            "abs" | "fabs" => {
                let [a] = args else {
                    return Err(self.err(at, format!("`{key}` takes one argument")));
                };
                self.abs(a, hint, at)?
            }
            "as_int" | "as_uint" | "as_float" | "as_long" | "as_ulong" => {
                // OpenCL C 2.0 §6.2.4.2: the operand's bits read as the type, of the same size (no
                // instruction: a register holds raw bits).
                let [a] = args else {
                    return Err(self.err(at, format!("`{key}` takes one argument")));
                };
                let to = match key {
                    "as_int" => STy::I32,
                    "as_uint" => STy::U32,
                    "as_float" => STy::F32,
                    "as_long" => STy::I64,
                    _ => STy::U64,
                };
                let x = self.rvalue(a, None)?;
                let RVal::Scalar { op, ty, .. } = x else {
                    return Err(self.err(a.loc, format!("`{key}` takes a number")));
                };
                if ty == STy::Bool || ty.is_64() != to.is_64() {
                    let bytes = if to.is_64() { 8 } else { 4 };
                    return Err(self.err(
                        a.loc,
                        format!(
                            "`{key}` reads the bits of a {bytes}-byte value; found `{}`",
                            ty.name(self.dialect)
                        ),
                    ));
                }
                RVal::Scalar {
                    op,
                    ty: to,
                    max: None,
                }
            }
            _ => return self.ocl_atomic(key, args, hint, unused, at),
        };
        Ok(Some(v))
    }

    /// The pointer to an atomic object (OpenCL 2.0 atomics take `volatile A *`).
    fn ocl_object(
        &mut self,
        key: &str,
        e: &Expr,
        scope: Scope,
        need_atomic: bool,
    ) -> R<super::AtomicObj> {
        let p = self.pointer_operand(e)?;
        if let RVal::Ptr { ty, .. } = p {
            // The litmus dialect accepts plain-typed locations, as herd's C tests sometimes declare.
            if need_atomic && !ty.atomic && self.mode == Mode::Kernel {
                return Err(self.err(
                    e.loc,
                    format!("`{key}` takes a pointer to an atomic type (atomic_int, atomic_uint, atomic_long, atomic_ulong, atomic_float); found `{}`: cast it, e.g. `(volatile __global atomic_int *)p`", ty.describe(self.dialect)),
                ));
            }
            if !need_atomic && ty.atomic && self.mode == Mode::Kernel {
                return Err(self.err(
                    e.loc,
                    format!(
                        "`{key}` (OpenCL 1.x) takes a pointer to int or uint, found `{}`",
                        ty.describe(self.dialect)
                    ),
                ));
            }
        }
        self.object_of(p, scope, e.loc)
    }

    /// `atomic_*[_explicit]`, `atomic_flag_*` and the OpenCL 1.x atomics.
    fn ocl_atomic(
        &mut self,
        key: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        if let Some(v) = self.ocl1_atomic(key, args, hint, unused, at)? {
            return Ok(Some(v));
        }
        let explicit = key.ends_with("_explicit");
        let base = key.strip_suffix("_explicit").unwrap_or(key);
        // (value arguments before the orders, orders, whether the object is atomic)
        let (values, orders) = match base {
            "atomic_init" => (1, 0),
            "atomic_load" | "atomic_flag_test_and_set" | "atomic_flag_clear" => (0, 1),
            "atomic_store" | "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub"
            | "atomic_fetch_or" | "atomic_fetch_xor" | "atomic_fetch_and" | "atomic_fetch_min"
            | "atomic_fetch_max" => (1, 1),
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => (2, 2),
            _ => return Ok(None),
        };
        if base == "atomic_init" && explicit {
            return Ok(None);
        }
        let fixed = 1 + values;
        let max = if explicit { fixed + orders + 1 } else { fixed };
        let min = if explicit { fixed + orders } else { fixed };
        if args.len() < min || args.len() > max {
            let form = if explicit {
                format!("{min} or {max}")
            } else {
                fixed.to_string()
            };
            return Err(self.err(
                at,
                format!("`{key}` takes {form} arguments, found {}", args.len()),
            ));
        }
        let scope = if explicit && args.len() == max {
            self.ocl_scope(&args[max - 1])?
        } else {
            Scope::Device
        };
        let orders: Vec<Mo> = if explicit {
            args[fixed..fixed + orders]
                .iter()
                .map(|e| self.ocl_order(e))
                .collect::<R<_>>()?
        } else {
            vec![Mo::SeqCst; orders]
        };
        let o = self.ocl_object(key, &args[0], scope, true)?;
        let oloc = |i: usize| args.get(fixed + i).map(|e| e.loc).unwrap_or(at);
        let v = match base {
            "atomic_init" => {
                // Initialisation is a plain store (C11 §7.17.2.2: not atomic).
                let v = self.rvalue(&args[1], None)?;
                let src = self.operand_as(v, o.elem, at)?;
                self.emit(
                    Inst::Store {
                        space: o.space,
                        addr: o.addr,
                        src,
                        ty: o.elem.ir(),
                        ord: StoreOrd::Plain,
                        scope: Scope::Device,
                    },
                    at,
                );
                RVal::Void
            }
            "atomic_load" => {
                let ord = self.load_ord(orders[0], oloc(0))?;
                self.atomic_load(o, ord, hint, at)
            }
            "atomic_store" | "atomic_flag_clear" => {
                let ord = self.store_ord(orders[0], oloc(0))?;
                let v = if base == "atomic_flag_clear" {
                    RVal::int(0, STy::I32)
                } else {
                    self.rvalue(&args[1], None)?
                };
                self.atomic_store(o, v, ord, at)?;
                RVal::Void
            }
            "atomic_flag_test_and_set" => {
                let old = self.atomic_rmw(
                    o,
                    (RmwOp::Exch, Self::rmw_ord(orders[0])),
                    RVal::int(1, STy::I32),
                    None,
                    false,
                    at,
                )?;
                let old = self.operand(old, at)?;
                self.compare(CmpOp::Ne, o.elem.ir(), old, Operand::Imm(0), hint, at)?
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                let expected = self.expected_of(&args[1], false)?;
                let desired = self.rvalue(&args[2], None)?;
                let s = Self::rmw_ord(orders[0]);
                let f = match orders.get(1) {
                    Some(&m) if explicit => self.failure_ord(m, oloc(1))?,
                    _ => LoadOrd::SeqCst,
                };
                self.compare_exchange(
                    o,
                    expected,
                    desired,
                    CasOrd {
                        success: s,
                        failure: f,
                        weak: base.ends_with("weak"),
                    },
                    hint,
                    at,
                )?
            }
            _ => {
                let op = match base {
                    "atomic_exchange" => RmwOp::Exch,
                    "atomic_fetch_add" => RmwOp::Add,
                    "atomic_fetch_sub" => RmwOp::Sub,
                    "atomic_fetch_or" => RmwOp::Or,
                    "atomic_fetch_xor" => RmwOp::Xor,
                    "atomic_fetch_and" => RmwOp::And,
                    "atomic_fetch_min" => RmwOp::Min,
                    _ => RmwOp::Max,
                };
                let v = self.rvalue(&args[1], None)?;
                self.atomic_rmw(o, (op, Self::rmw_ord(orders[0])), v, hint, unused, at)?
            }
        };
        Ok(Some(v))
    }

    /// OpenCL 1.x: `atomic_add(p, v)`, `atomic_inc(p)`, `atomic_cmpxchg(p, cmp, v)`, ... and the
    /// `atom_*` spellings; relaxed.
    fn ocl1_atomic(
        &mut self,
        key: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        let Some(base) = key
            .strip_prefix("atomic_")
            .or_else(|| key.strip_prefix("atom_"))
        else {
            return Ok(None);
        };
        let (op, n) = match base {
            "add" => (Some(RmwOp::Add), 2),
            "sub" => (Some(RmwOp::Sub), 2),
            "xchg" => (Some(RmwOp::Exch), 2),
            "min" => (Some(RmwOp::Min), 2),
            "max" => (Some(RmwOp::Max), 2),
            "and" => (Some(RmwOp::And), 2),
            "or" => (Some(RmwOp::Or), 2),
            "xor" => (Some(RmwOp::Xor), 2),
            "inc" => (Some(RmwOp::Add), 1),
            "dec" => (Some(RmwOp::Sub), 1),
            "cmpxchg" => (None, 3),
            _ => return Ok(None),
        };
        if args.len() != n {
            return Err(self.err(
                at,
                format!("`{key}` takes {n} arguments, found {}", args.len()),
            ));
        }
        let o = self.ocl_object(key, &args[0], Scope::Device, false)?;
        let Some(op) = op else {
            let cmp = self.rvalue(&args[1], None)?;
            let cmp = self.operand_as(cmp, o.elem, args[1].loc)?;
            let val = self.rvalue(&args[2], None)?;
            let old = self.atomic_cas(o, cmp, val, CasOrd::RELAXED, hint, at)?;
            return Ok(Some(RVal::reg(old, o.elem)));
        };
        if o.elem.is_float() && op != RmwOp::Exch {
            return Err(self.err(
                at,
                format!("`{key}` takes int or uint (only atomic_xchg takes float)"),
            ));
        }
        // atomic_inc/atomic_dec add or subtract 1 and return the old value (not CUDA's wrapping inc).
        let v = if n == 1 {
            RVal::int(1, STy::I32)
        } else {
            self.rvalue(&args[1], None)?
        };
        let r = self.atomic_rmw(o, (op, RmwOrd::Relaxed), v, hint, unused, at)?;
        Ok(Some(r))
    }
}

fn describe(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(p) => p.join("::"),
        _ => "this expression".into(),
    }
}

/// OpenCL functions known but outside the subset, with the reason.
pub(crate) fn unsupported_builtin(key: &str) -> Option<String> {
    if key.starts_with("work_group_")
        || (key.starts_with("sub_group_") && key != "sub_group_barrier")
    {
        return Some(format!(
            "`{key}`: work-group and sub-group collective functions are not supported"
        ));
    }
    if key.starts_with("vload") || key.starts_with("vstore") {
        return Some(format!(
            "`{key}`: vector loads and stores are not supported"
        ));
    }
    if key.starts_with("read_image") || key.starts_with("write_image") {
        return Some(format!("`{key}`: images are not supported"));
    }
    Some(match key {
        "async_work_group_copy"
        | "async_work_group_strided_copy"
        | "wait_group_events"
        | "prefetch" => format!("`{key}`: async copies are not supported"),
        "enqueue_kernel" | "get_default_queue" => {
            format!("`{key}`: device-side enqueue is not supported")
        }
        _ => return None,
    })
}
