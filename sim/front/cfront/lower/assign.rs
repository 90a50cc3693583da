//! Assignments and the operators with control flow or conversions: `=` and `op=`, `++`/`--`,
//! `&&`/`||` as values, `?:` (a select when both arms are plain values, else branches), casts.

use super::values::{LVal, RVal};
use super::{Binding, Lower, R};
use crate::cfront::ast::*;
use crate::cfront::types::{STy, VTy};
use crate::ir::*;

impl Lower<'_> {
    /// `x op= r` (`op` none: `x = r`). Returns the value assigned.
    pub(crate) fn assign(
        &mut self,
        op: Option<BinOp>,
        l: &Expr,
        r: &Expr,
        unused: bool,
        at: SrcLoc,
    ) -> R<RVal> {
        let lv = self.lvalue(l)?;
        let ty = Self::lval_ty(&lv);
        let hint = match lv {
            LVal::Var { reg, .. } => Some(reg),
            _ => None,
        };
        if let (LVal::Atomic(o), Some(op)) = (lv, op) {
            // atomic_ref's `+=` and friends: a seq_cst read-modify-write returning the new value.
            let v = self.rvalue(r, None)?;
            return self.atomic_compound(o, op, v, unused, at);
        }
        let v = match op {
            None => self.rvalue(r, hint)?,
            Some(op) => {
                let cur = self.read(lv, None, at)?;
                let rv = self.rvalue(r, None)?;
                // `x op= r` is `x = x op r` with `x` evaluated once (C11 §6.5.16.2).
                let h = if matches!(cur, RVal::Ptr { .. }) {
                    None
                } else {
                    hint
                };
                self.binary(op, cur, rv, h, at)?
            }
        };
        let v = self.convert(v, ty, hint, at)?;
        self.write(lv, v, at)?;
        Ok(match lv {
            LVal::Var { .. } => self.read(lv, None, at)?,
            _ => v,
        })
    }

    /// `++x`, `--x` (`pre`), `x++`, `x--`; `unused`: the value is not needed.
    pub(crate) fn increment(
        &mut self,
        x: &Expr,
        inc: bool,
        pre: bool,
        unused: bool,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let lv = self.lvalue(x)?;
        if let LVal::Atomic(o) = lv {
            let one = RVal::int(1, STy::I32);
            let op = if inc { BinOp::Add } else { BinOp::Sub };
            if pre {
                return self.atomic_compound(o, op, one, unused, at);
            }
            return self.atomic_fetch_seq_cst(o, op, one, unused, hint, at);
        }
        let ty = Self::lval_ty(&lv);
        if matches!(ty, VTy::Scalar(STy::Bool)) {
            return Err(self.err(at, "`++`/`--` on a bool is not supported"));
        }
        let cur = self.read(lv, None, at)?;
        // The old value, kept when the expression's value is the value before the update.
        let old = if !pre && !unused {
            match (lv, cur) {
                (LVal::Var { .. }, RVal::Scalar { op, ty, .. }) => {
                    let t = self.dst(hint, ty.ir());
                    self.emit(Inst::Mov { dst: t, src: op }, at);
                    Some(RVal::reg(t, ty))
                }
                (LVal::Var { .. }, RVal::Ptr { base, off, ty }) => {
                    let t = self.sink.temp(Ty::U64);
                    let t = self.ptr_into(base, off, Some(t), at);
                    Some(RVal::Ptr {
                        base: Operand::Reg(t),
                        off: 0,
                        ty,
                    })
                }
                _ => Some(cur),
            }
        } else {
            None
        };
        let one = RVal::int(1, STy::I32);
        let op = if inc { BinOp::Add } else { BinOp::Sub };
        let h = match lv {
            LVal::Var { reg, .. } => Some(reg),
            _ => None,
        };
        let new = self.binary(op, cur, one, h, at)?;
        let new = self.convert(new, ty, h, at)?;
        self.write(lv, new, at)?;
        Ok(match old {
            Some(o) => o,
            None => match lv {
                LVal::Var { .. } => self.read(lv, None, at)?,
                _ => new,
            },
        })
    }

    /// `a && b` / `a || b` as a 0/1 `int` (short-circuit, C11 §6.5.13–14).
    pub(crate) fn logical(&mut self, and: bool, a: &Expr, b: &Expr, at: SrcLoc) -> R<RVal> {
        let e = Expr::new(
            ExprKind::Logical(and, Box::new(a.clone()), Box::new(b.clone())),
            at,
        );
        if let Some(c) = self.constant_truth(&e)? {
            return Ok(RVal::int(c as i128, STy::I32));
        }
        let t = self.temp(Ty::I32);
        let end = self.label();
        self.emit(
            Inst::Mov {
                dst: t,
                src: Operand::Imm(if and { 0 } else { 1 }),
            },
            at,
        );
        if and {
            self.branch_unless(a, &end)?;
        } else {
            self.branch_if(a, &end)?;
        }
        let v = self.rvalue(b, None)?;
        self.truth_into(v, Some(t), b.loc)?;
        self.place(&end, at)?;
        Ok(RVal::Scalar {
            op: Operand::Reg(t),
            ty: STy::I32,
            max: Some(1),
        })
    }

    /// `v != 0` into `hint` (or a temporary).
    pub(crate) fn truth_into(&mut self, v: RVal, hint: Option<Reg>, at: SrcLoc) -> R<Reg> {
        let b = self.convert(v, VTy::Scalar(STy::Bool), hint, at)?;
        let op = self.operand(b, at)?;
        Ok(match (op, hint) {
            (Operand::Reg(r), Some(h)) if r == h => r,
            (_, Some(h)) => {
                self.emit(Inst::Mov { dst: h, src: op }, at);
                h
            }
            (op, None) => self.reg_of(op, Ty::U32, at),
        })
    }

    /// `c ? a : b`.
    pub(crate) fn conditional(&mut self, c: &Expr, a: &Expr, b: &Expr, at: SrcLoc) -> R<RVal> {
        if let Some(t) = self.constant_truth(c)? {
            return self.rvalue(if t { a } else { b }, None);
        }
        let (ta, tb) = (self.type_without_code(a), self.type_without_code(b));
        // Both arms are plain values: a select, as compilers emit for `selp`.
        if let (Some(x), Some(y)) = (ta, tb) {
            if let (RVal::Scalar { ty: t1, .. }, RVal::Scalar { ty: t2, .. }) = (x, y) {
                let t = STy::common(t1, t2);
                let cv = self.rvalue(c, None)?;
                let cond = self.truth_into(cv, None, at)?;
                let xa = self.operand_as(x, t, at)?;
                let yb = self.operand_as(y, t, at)?;
                let d = self.temp(t.ir());
                self.emit(
                    Inst::Select {
                        dst: d,
                        cond,
                        a: xa,
                        b: yb,
                    },
                    at,
                );
                return Ok(RVal::reg(d, t));
            }
        }
        let els = self.label();
        let end = self.label();
        self.branch_unless(c, &els)?;
        let va = self.rvalue(a, None)?;
        let ta = va
            .vty()
            .ok_or_else(|| self.err(a.loc, "a void value in `?:`"))?;
        let arm = |l: &mut Self, v: RVal, to: VTy, d: Reg| -> R<()> {
            let v = l.convert(v, to, Some(d), at)?;
            l.write(LVal::Var { reg: d, ty: to }, v, at)
        };
        let result = |l: &Self, x: VTy, y: VTy| -> R<VTy> {
            match (x, y) {
                (VTy::Scalar(p), VTy::Scalar(q)) => Ok(VTy::Scalar(STy::common(p, q))),
                (VTy::Ptr(_), VTy::Ptr(_)) => Ok(x),
                _ => Err(l.err(at, "the arms of `?:` are a pointer and a number")),
            }
        };
        let d;
        if let Some(vb) = tb {
            // The second arm's type is known without code: convert the first in place.
            let t = result(self, ta, vb.vty().expect("a value"))?;
            d = self.temp(t.ir());
            arm(self, va, t, d)?;
            self.jump(&end, at);
            self.place(&els, at)?;
            let vb = self.rvalue(b, None)?;
            arm(self, vb, t, d)?;
            self.place(&end, at)?;
            return self.read(LVal::Var { reg: d, ty: t }, None, at);
        }
        // Otherwise the first arm's conversion waits until the second arm's type is known: it is
        // placed after the second arm, and the first arm jumps to it.
        let join = self.label();
        self.jump(&join, at);
        self.place(&els, at)?;
        let vb = self.rvalue(b, None)?;
        let t = result(
            self,
            ta,
            vb.vty()
                .ok_or_else(|| self.err(b.loc, "a void value in `?:`"))?,
        )?;
        d = self.temp(t.ir());
        arm(self, vb, t, d)?;
        self.jump(&end, at);
        self.place(&join, at)?;
        arm(self, va, t, d)?;
        self.place(&end, at)?;
        self.read(LVal::Var { reg: d, ty: t }, None, at)
    }

    /// The value of `e` when it needs no instruction (a constant or a variable), without emitting.
    pub(crate) fn type_without_code(&mut self, e: &Expr) -> Option<RVal> {
        match &e.kind {
            ExprKind::Int(..) | ExprKind::Float(..) => self.rvalue(e, None).ok(),
            ExprKind::Name(p) if p.len() == 1 => match self.lookup(&p[0]) {
                Some(Binding::Var {
                    reg,
                    ty: VTy::Scalar(t),
                }) => Some(RVal::reg(*reg, *t)),
                Some(Binding::Val(v @ RVal::Scalar { .. })) => Some(*v),
                _ => None,
            },
            _ => None,
        }
    }

    pub(crate) fn cast(
        &mut self,
        t: &TypeName,
        x: &Expr,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        if t.ptrs.is_empty() && t.spec.base == BaseTy::Void {
            self.effect(x)?;
            return Ok(RVal::Void);
        }
        let v = self.rvalue(x, None)?;
        let mut to = self.vty_of(t, at)?;
        if let (VTy::Ptr(p), RVal::Ptr { ty: from, .. }) = (&mut to, v) {
            // A cast without an address space keeps the pointer's (CUDA generic pointers).
            if t.spec.space.is_none() {
                p.space = from.space;
            }
        }
        self.convert_cast(v, to, hint, at)
    }

    /// The value type a type name denotes.
    pub(crate) fn vty_of(&self, t: &TypeName, at: SrcLoc) -> R<VTy> {
        super::vty_of(t, at)
    }
}
