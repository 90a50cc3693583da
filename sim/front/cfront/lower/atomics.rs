//! The atomic operations both dialects lower to: loads, stores, read-modify-writes,
//! compare-exchange with C11's "on failure, `expected` receives the current value", and fences —
//! each with the order legal for it (C11 §7.17.7, §7.17.4; SYCL fig. 19-10: a load never releases,
//! a store never acquires, a failure order is a load order) and its scope.
//!
//! Scope rule (OpenCL 2.0 §3.3.5; SYCL 2020 §3.8.3.2): an atomic on work-group-local memory is at
//! most work_group scope — [`narrow`] applies it, as the kernel language's default does.

use super::values::{LVal, RVal};
use super::{AtomicObj, Lower, Mode, R};
use crate::cfront::ast::BinOp;
use crate::cfront::types::{STy, VTy};
use crate::cfront::Dialect;
use crate::ir::*;

/// A memory order as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mo {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl Mo {
    pub fn name(self) -> &'static str {
        match self {
            Mo::Relaxed => "relaxed",
            Mo::Acquire => "acquire",
            Mo::Release => "release",
            Mo::AcqRel => "acq_rel",
            Mo::SeqCst => "seq_cst",
        }
    }
}

/// An atomic on local memory is at most work_group scope.
pub(crate) fn narrow(space: Space, scope: Scope) -> Scope {
    if space == Space::Local {
        scope.min(Scope::WorkGroup)
    } else {
        scope
    }
}

/// A compare-exchange's orders (success, failure) and whether it is the weak form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CasOrd {
    pub success: RmwOrd,
    pub failure: LoadOrd,
    pub weak: bool,
}

impl CasOrd {
    /// CUDA's atomicCAS and OpenCL 1.x's atomic_cmpxchg.
    pub const RELAXED: CasOrd = CasOrd {
        success: RmwOrd::Relaxed,
        failure: LoadOrd::Relaxed,
        weak: false,
    };
}

/// Where a compare-exchange's expected value lives (C11: `expected` is a pointer; C++: a reference).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expected {
    /// A variable in a register.
    Var(Reg, STy),
    /// An object in memory, read before and written on failure with plain accesses.
    Mem(LVal),
}

impl Lower<'_> {
    /// A load's order; `release` and `acq_rel` (C11 7.17.7.2p2: shall not) load in a litmus
    /// thread, whose test is then undefined, and run as their load part.
    pub(crate) fn load_ord(&mut self, m: Mo, at: SrcLoc) -> R<LoadOrd> {
        Ok(match m {
            Mo::Relaxed => LoadOrd::Relaxed,
            Mo::Acquire => LoadOrd::Acquire,
            Mo::SeqCst => LoadOrd::SeqCst,
            _ if self.sink.undefined(&format!("a load written {} (C11 7.17.7.2p2: the order shall not be release nor acq_rel)", m.name()), at) => {
                if m == Mo::AcqRel { LoadOrd::Acquire } else { LoadOrd::Relaxed }
            }
            _ => {
                return Err(self.err(
                    at,
                    format!(
                        "a load cannot be {} (a load cannot release): relaxed, acquire or seq_cst",
                        m.name()
                    ),
                ))
            }
        })
    }

    /// A store's order; `acquire` and `acq_rel` (C11 7.17.7.1p2: shall not) load in a litmus
    /// thread, whose test is then undefined, and run as their store part.
    pub(crate) fn store_ord(&mut self, m: Mo, at: SrcLoc) -> R<StoreOrd> {
        Ok(match m {
            Mo::Relaxed => StoreOrd::Relaxed,
            Mo::Release => StoreOrd::Release,
            Mo::SeqCst => StoreOrd::SeqCst,
            _ if self.sink.undefined(&format!("a store written {} (C11 7.17.7.1p2: the order shall not be acquire nor acq_rel)", m.name()), at) => {
                if m == Mo::AcqRel { StoreOrd::Release } else { StoreOrd::Relaxed }
            }
            _ => {
                return Err(self.err(
                    at,
                    format!(
                    "a store cannot be {} (a store cannot acquire): relaxed, release or seq_cst",
                    m.name()
                ),
                ))
            }
        })
    }

    pub(crate) fn rmw_ord(m: Mo) -> RmwOrd {
        match m {
            Mo::Relaxed => RmwOrd::Relaxed,
            Mo::Acquire => RmwOrd::Acquire,
            Mo::Release => RmwOrd::Release,
            Mo::AcqRel => RmwOrd::AcqRel,
            Mo::SeqCst => RmwOrd::SeqCst,
        }
    }

    /// A compare-exchange's failure order (C11 §7.17.7.4p2: neither release nor acq_rel). A litmus
    /// thread loads one and its test is undefined (the failed read runs as the order's load part).
    pub(crate) fn failure_ord(&mut self, m: Mo, at: SrcLoc) -> R<LoadOrd> {
        match m {
            Mo::Release | Mo::AcqRel => {
                let what = format!("a compare-exchange failure order written {} (C11 7.17.7.4p2: the failure argument shall not be release nor acq_rel)", m.name());
                if self.sink.undefined(&what, at) {
                    return Ok(if m == Mo::AcqRel {
                        LoadOrd::Acquire
                    } else {
                        LoadOrd::Relaxed
                    });
                }
                Err(self.err(at, format!("the failure order cannot be {} (it is a load's order: relaxed, acquire or seq_cst)", m.name())))
            }
            _ => self.load_ord(m, at),
        }
    }

    /// A fence. A relaxed fence has no effect (C11 §7.17.4.1; OpenCL 2.0 atomic_work_item_fence),
    /// so it emits nothing.
    pub(crate) fn fence(&mut self, m: Mo, scope: Scope, spaces: SpaceSet, at: SrcLoc) {
        let ord = match m {
            Mo::Relaxed => return,
            Mo::Acquire => FenceOrd::Acquire,
            Mo::Release => FenceOrd::Release,
            Mo::AcqRel => FenceOrd::AcqRel,
            Mo::SeqCst => FenceOrd::SeqCst,
        };
        self.emit(Inst::Fence { ord, scope, spaces }, at);
    }

    /// The atomic object a pointer argument points at.
    pub(crate) fn object_of(&mut self, p: RVal, scope: Scope, at: SrcLoc) -> R<AtomicObj> {
        let RVal::Ptr { base, off, ty } = p else {
            return Err(self.err(
                at,
                format!(
                    "expected a pointer to the atomic object, found {}",
                    p.describe(self.dialect)
                ),
            ));
        };
        if ty.elem == STy::Bool {
            return Err(self.err(at, "atomics on bool are not supported"));
        }
        Ok(AtomicObj {
            addr: self.address_of_ptr(base, off),
            space: ty.space,
            elem: ty.elem,
            scope: narrow(ty.space, scope),
        })
    }

    pub(crate) fn atomic_load(
        &mut self,
        o: AtomicObj,
        ord: LoadOrd,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> RVal {
        let d = self.dst(hint, o.elem.ir());
        self.emit(
            Inst::Load {
                dst: d,
                space: o.space,
                addr: o.addr,
                ty: o.elem.ir(),
                ord,
                scope: o.scope,
            },
            at,
        );
        RVal::reg(d, o.elem)
    }

    pub(crate) fn atomic_store(
        &mut self,
        o: AtomicObj,
        v: RVal,
        ord: StoreOrd,
        at: SrcLoc,
    ) -> R<()> {
        let src = self.operand_as(v, o.elem, at)?;
        self.emit(
            Inst::Store {
                space: o.space,
                addr: o.addr,
                src,
                ty: o.elem.ir(),
                ord,
                scope: o.scope,
            },
            at,
        );
        Ok(())
    }

    /// Which operations a type allows: integers all; floats add and sub (CUDA only) and exchange.
    fn check_rmw_type(&self, op: RmwOp, t: STy, at: SrcLoc) -> R<()> {
        let ok = match op {
            _ if !t.is_float() => !matches!(op, RmwOp::Inc | RmwOp::Dec) || t == STy::U32,
            RmwOp::Exch => true,
            RmwOp::Add | RmwOp::Sub => self.dialect == Dialect::Cuda,
            _ => false,
        };
        if ok {
            return Ok(());
        }
        Err(self.err(
            at,
            match (op, self.dialect) {
                (RmwOp::Inc | RmwOp::Dec, _) => format!(
                    "atomicInc/atomicDec take `unsigned int`, found `{}`",
                    t.name(self.dialect)
                ),
                (_, Dialect::OpenCl) => {
                    "OpenCL 2.0's atomic_float has load, store, exchange and compare-exchange only"
                        .into()
                }
                _ => format!(
                    "this atomic operation takes an integer, found `{}`",
                    t.name(self.dialect)
                ),
            },
        ))
    }

    /// A read-modify-write; returns the old value, or nothing when `unused` in a kernel (the
    /// non-returning form, as compilers emit PTX `red` for a discarded result). A litmus thread
    /// keeps one returning instruction per call, as written.
    pub(crate) fn atomic_rmw(
        &mut self,
        o: AtomicObj,
        (op, ord): (RmwOp, RmwOrd),
        v: RVal,
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<RVal> {
        self.check_rmw_type(op, o.elem, at)?;
        let operand = self.operand_as(v, o.elem, at)?;
        let dst = if unused && self.mode == Mode::Kernel {
            None
        } else {
            Some(self.dst(hint, o.elem.ir()))
        };
        self.emit(
            Inst::Rmw {
                dst,
                op,
                space: o.space,
                addr: o.addr,
                operand,
                ty: o.elem.ir(),
                ord,
                scope: o.scope,
            },
            at,
        );
        Ok(match dst {
            Some(d) => RVal::reg(d, o.elem),
            None => RVal::Void,
        })
    }

    /// A compare-exchange returning the old value (CUDA's atomicCAS).
    pub(crate) fn atomic_cas(
        &mut self,
        o: AtomicObj,
        expected: Operand,
        desired: RVal,
        ord: CasOrd,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<Reg> {
        let desired = self.operand_as(desired, o.elem, at)?;
        let old = self.dst(hint, o.elem.ir());
        self.emit(
            Inst::Cas {
                dst: Some(old),
                space: o.space,
                addr: o.addr,
                expected,
                desired,
                ty: o.elem.ir(),
                success: ord.success,
                failure: ord.failure,
                scope: o.scope,
                weak: ord.weak,
            },
            at,
        );
        Ok(old)
    }

    /// C11 `atomic_compare_exchange_*` and C++ `compare_exchange_*`: returns whether it succeeded; on
    /// failure the expected object receives the value found (on success they are equal anyway, so
    /// a variable is simply overwritten; an object in memory is written only on failure).
    pub(crate) fn compare_exchange(
        &mut self,
        o: AtomicObj,
        expected: Expected,
        desired: RVal,
        ord: CasOrd,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let ty = o.elem.ir();
        match expected {
            Expected::Var(e, et) => {
                if et.bytes() != o.elem.bytes() {
                    return Err(self.err(
                        at,
                        format!(
                            "the expected value is `{}` but the object is `{}`",
                            et.name(self.dialect),
                            o.elem.name(self.dialect)
                        ),
                    ));
                }
                let old = self.temp(ty);
                let old = self.atomic_cas(o, Operand::Reg(e), desired, ord, Some(old), at)?;
                let ok = self.dst(hint, Ty::I32);
                self.emit(
                    Inst::Cmp {
                        op: CmpOp::Eq,
                        ty,
                        dst: ok,
                        a: Operand::Reg(old),
                        b: Operand::Reg(e),
                    },
                    at,
                );
                self.emit(
                    Inst::Mov {
                        dst: e,
                        src: Operand::Reg(old),
                    },
                    at,
                );
                Ok(RVal::Scalar {
                    op: Operand::Reg(ok),
                    ty: STy::Bool,
                    max: Some(1),
                })
            }
            Expected::Mem(lv) => {
                let VTy::Scalar(et) = Self::lval_ty(&lv) else {
                    return Err(self.err(at, "the expected value must be a number"));
                };
                if et.bytes() != o.elem.bytes() {
                    return Err(self.err(
                        at,
                        format!(
                            "the expected value is `{}` but the object is `{}`",
                            et.name(self.dialect),
                            o.elem.name(self.dialect)
                        ),
                    ));
                }
                let e = self.read(lv, None, at)?;
                let e = self.operand(e, at)?;
                let old = self.atomic_cas(o, e, desired, ord, None, at)?;
                let ok = self.dst(hint, Ty::I32);
                self.emit(
                    Inst::Cmp {
                        op: CmpOp::Eq,
                        ty,
                        dst: ok,
                        a: Operand::Reg(old),
                        b: e,
                    },
                    at,
                );
                let done = self.label();
                self.sink.branch(&done, Some((ok, true)), at);
                self.write(lv, RVal::reg(old, et), at)?;
                self.place(&done, at)?;
                Ok(RVal::Scalar {
                    op: Operand::Reg(ok),
                    ty: STy::Bool,
                    max: Some(1),
                })
            }
        }
    }

    /// The expected object of a compare-exchange: `&var` (a variable), a pointer (memory), or, for
    /// C++'s reference form, an lvalue.
    pub(crate) fn expected_of(
        &mut self,
        e: &crate::cfront::ast::Expr,
        by_reference: bool,
    ) -> R<Expected> {
        use crate::cfront::ast::{ExprKind, UnOp};
        let target = match (&e.kind, by_reference) {
            (ExprKind::Unary(UnOp::AddrOf, x), false) => Some(&**x),
            (_, true) => Some(e),
            _ => None,
        };
        if let Some(x) = target {
            if let Some(n) = x.ident() {
                if let Some(super::Binding::Var {
                    reg,
                    ty: VTy::Scalar(t),
                }) = self.lookup(n).cloned()
                {
                    return Ok(Expected::Var(reg, t));
                }
                if self.mode == Mode::Litmus && self.lookup(n).is_none() {
                    return Err(self.err(x.loc, format!("{n} is not a declared variable")));
                }
            }
            if by_reference {
                return Ok(Expected::Mem(self.lvalue(x)?));
            }
        }
        // A pointer: the expected object is in memory.
        let p = self.pointer_operand(e)?;
        Ok(Expected::Mem(self.deref(p, e.loc)?))
    }

    /// atomic_ref's `op=`, `++x`, `--x`: a seq_cst read-modify-write whose value is the new value.
    pub(crate) fn atomic_compound(
        &mut self,
        o: AtomicObj,
        op: BinOp,
        v: RVal,
        unused: bool,
        at: SrcLoc,
    ) -> R<RVal> {
        let rop = rmw_of(op)
            .ok_or_else(|| self.err(at, format!("atomic_ref has no `{}=`", op.symbol())))?;
        let v = self.convert(v, VTy::Scalar(o.elem), None, at)?;
        let old = self.atomic_rmw(o, (rop, RmwOrd::SeqCst), v, None, unused, at)?;
        if unused {
            return Ok(RVal::Void);
        }
        self.binary(op, old, v, None, at)
    }

    /// atomic_ref's `x++`, `x--`: a seq_cst read-modify-write whose value is the old value.
    pub(crate) fn atomic_fetch_seq_cst(
        &mut self,
        o: AtomicObj,
        op: BinOp,
        v: RVal,
        unused: bool,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let rop = rmw_of(op).expect("add or sub");
        self.atomic_rmw(o, (rop, RmwOrd::SeqCst), v, hint, unused, at)
    }
}

fn rmw_of(op: BinOp) -> Option<RmwOp> {
    Some(match op {
        BinOp::Add => RmwOp::Add,
        BinOp::Sub => RmwOp::Sub,
        BinOp::BitAnd => RmwOp::And,
        BinOp::BitOr => RmwOp::Or,
        BinOp::BitXor => RmwOp::Xor,
        _ => return None,
    })
}
