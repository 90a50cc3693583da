//! Conditions: branching on a condition with short-circuit `&&` and `||`, and the constant
//! conditions (workload parameters, literals) that decide a branch at compile time without code.

use super::values::RVal;
use super::{Binding, Lower, R};
use crate::cfront::ast::*;
use crate::cfront::types::{STy, VTy};
use crate::ir::*;

impl Lower<'_> {
    /// Branches to `l` when `c` is false (`&&` and `||` short-circuit).
    pub(crate) fn branch_unless(&mut self, c: &Expr, l: &str) -> R<()> {
        self.nested(c.loc, |this| this.branch_unless_here(c, l))
    }

    fn branch_unless_here(&mut self, c: &Expr, l: &str) -> R<()> {
        if let Some(t) = self.constant_truth(c)? {
            if !t {
                self.jump(l, c.loc);
            }
            return Ok(());
        }
        match &c.kind {
            ExprKind::Logical(true, a, b) => {
                self.branch_unless(a, l)?;
                self.branch_unless(b, l)
            }
            ExprKind::Logical(false, a, b) => {
                let m = self.label();
                self.branch_if(a, &m)?;
                self.branch_unless(b, l)?;
                self.place(&m, c.loc)
            }
            _ => {
                let r = self.condition_reg(c)?;
                self.sink.branch(l, Some((r, false)), c.loc);
                Ok(())
            }
        }
    }

    /// Branches to `l` when `c` is true.
    pub(crate) fn branch_if(&mut self, c: &Expr, l: &str) -> R<()> {
        self.nested(c.loc, |this| this.branch_if_here(c, l))
    }

    fn branch_if_here(&mut self, c: &Expr, l: &str) -> R<()> {
        if let Some(t) = self.constant_truth(c)? {
            if t {
                self.jump(l, c.loc);
            }
            return Ok(());
        }
        match &c.kind {
            ExprKind::Logical(false, a, b) => {
                self.branch_if(a, l)?;
                self.branch_if(b, l)
            }
            ExprKind::Logical(true, a, b) => {
                let m = self.label();
                self.branch_unless(a, &m)?;
                self.branch_if(b, l)?;
                self.place(&m, c.loc)
            }
            _ => {
                let r = self.condition_reg(c)?;
                self.sink.branch(l, Some((r, true)), c.loc);
                Ok(())
            }
        }
    }

    /// A register that is nonzero exactly when `c` is true.
    pub(crate) fn condition_reg(&mut self, c: &Expr) -> R<Reg> {
        let v = self.rvalue(c, None)?;
        match v {
            RVal::Scalar { op, ty, .. } if !ty.is_float() => Ok(self.reg_of(op, ty.ir(), c.loc)),
            RVal::Scalar { .. } | RVal::Ptr { .. } => {
                let b = self.convert(v, VTy::Scalar(STy::Bool), None, c.loc)?;
                let op = self.operand(b, c.loc)?;
                Ok(self.reg_of(op, Ty::U32, c.loc))
            }
            RVal::Void => Err(self.err(c.loc, "a void value cannot be a condition")),
        }
    }

    /// The truth of a constant condition; `None` when it needs code.
    pub(crate) fn constant_truth(&mut self, c: &Expr) -> R<Option<bool>> {
        Ok(self.constant(c)?.and_then(|v| match v {
            RVal::Scalar {
                op: Operand::Imm(b),
                ty,
                ..
            } => Some(if ty.is_float() {
                bits_f32(b) != 0.0
            } else {
                b != 0
            }),
            _ => None,
        }))
    }

    /// The value of an expression made of constants only, computed without emitting code.
    pub(crate) fn constant(&mut self, e: &Expr) -> R<Option<RVal>> {
        Ok(match &e.kind {
            ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::SizeofType(_) => {
                Some(self.rvalue(e, None)?)
            }
            ExprKind::Name(p) if p.len() == 1 => match self.lookup(&p[0]) {
                Some(Binding::Val(
                    v @ RVal::Scalar {
                        op: Operand::Imm(_),
                        ..
                    },
                )) => Some(*v),
                None => self.builtin_constant(&p[0], e.loc)?,
                _ => None,
            },
            ExprKind::Unary(UnOp::Neg | UnOp::Not | UnOp::BitNot | UnOp::Plus, x) => {
                if self.constant(x)?.is_some() {
                    Some(self.rvalue(e, None)?)
                } else {
                    None
                }
            }
            ExprKind::Binary(_, a, b) => {
                if self.constant(a)?.is_some() && self.constant(b)?.is_some() {
                    Some(self.rvalue(e, None)?)
                } else {
                    None
                }
            }
            ExprKind::Logical(and, a, b) => match self.constant_truth(a)? {
                Some(t) if t != *and => Some(RVal::int(t as i128, STy::I32)),
                Some(_) => self
                    .constant_truth(b)?
                    .map(|t| RVal::int(t as i128, STy::I32)),
                None => None,
            },
            ExprKind::Cond(c, a, b) => match self.constant_truth(c)? {
                Some(t) => self.constant(if t { a } else { b })?,
                None => None,
            },
            ExprKind::Cast(t, x)
                if t.ptrs.is_empty() && matches!(t.spec.base, BaseTy::Scalar(_)) =>
            {
                if self.constant(x)?.is_some() {
                    Some(self.rvalue(e, None)?)
                } else {
                    None
                }
            }
            // The launch sizes are constants of the workload.
            _ if self.geometry.is_some() && self.is_launch_size(e) => Some(self.rvalue(e, None)?),
            _ => None,
        })
    }

    /// `blockDim.x`, `gridDim.y`, `get_local_size(0)`, ...: values the launch fixes.
    fn is_launch_size(&self, e: &Expr) -> bool {
        use crate::cfront::Dialect;
        match (&e.kind, self.dialect) {
            (ExprKind::Member(obj, _, false), Dialect::Cuda) => {
                matches!(obj.ident(), Some(n @ ("blockDim" | "gridDim")) if self.lookup(n).is_none())
            }
            (ExprKind::Call(f, args), Dialect::OpenCl) => {
                matches!(
                    f.ident(),
                    Some(n @ ("get_local_size" | "get_enqueued_local_size" | "get_num_groups" | "get_global_size"))
                        if !self.funcs.contains_key(n) && self.lookup(n).is_none()
                ) && args.len() == 1
                    && matches!(args[0].kind, ExprKind::Int(..))
            }
            _ => false,
        }
    }
}
