//! Calls of `__device__` functions (and OpenCL helper functions), inlined: arguments bound to the
//! parameters (a parameter the body never assigns is the argument's value itself, one that it
//! assigns gets a register), the body lowered with only the file's names and the parameters in
//! scope, `return` a write of the result and a branch to the end. Recursion is an error.

use super::values::{LVal, RVal};
use super::FnCtx;
use super::{Binding, Lower, R};
use crate::cfront::ast::*;
use crate::cfront::types::VTy;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

impl Lower<'_> {
    /// Lowers a call of `f` in place: arguments bound to its parameters, its body, its result.
    pub(crate) fn inline_call(&mut self, f: &Function, args: &[Expr], at: SrcLoc) -> R<RVal> {
        if f.kind == FnKind::Kernel {
            return Err(self.err(
                at,
                format!(
                    "`{}` is a kernel: kernels are not called from device code",
                    f.name
                ),
            ));
        }
        if self.fns.iter().any(|c| c.name == f.name) {
            return Err(self.err(at, format!("recursive call of `{}`: device functions are inlined, so recursion is not supported", f.name)));
        }
        if args.len() != f.params.len() {
            return Err(self.err(
                at,
                format!(
                    "`{}` takes {} arguments, found {}",
                    f.name,
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        let assigned = Assignments::of(&f.body);
        let mut bound = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            let v = self.rvalue(a, None)?;
            let mut ty = self.vty_of(&p.ty, p.loc)?;
            if let (VTy::Ptr(pt), RVal::Ptr { ty: from, .. }) = (&mut ty, v) {
                // A pointer parameter without an address space is generic (CUDA; OpenCL 2.0):
                // it points where its argument points.
                if p.ty.spec.space.is_none() {
                    pt.space = from.space;
                }
            }
            let v = self.convert(v, ty, None, a.loc)?;
            if assigned.any.contains(&p.name) {
                let r = self.sink.var_reg(&p.name, ty.ir());
                self.write(LVal::Var { reg: r, ty }, v, a.loc)?;
                bound.push((p.name.clone(), Binding::Var { reg: r, ty }));
            } else {
                bound.push((p.name.clone(), Binding::Val(v)));
            }
        }
        let ret = match &f.ret.spec.base {
            BaseTy::Void if f.ret.ptrs.is_empty() => None,
            _ => {
                let t = self.vty_of(&f.ret, f.loc)?;
                Some((self.temp(t.ir()), t))
            }
        };
        let end = self.label();
        // The callee sees the file's names and its parameters, not the caller's variables.
        let globals = self.scopes[0].clone();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![globals, bound]);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_cases = std::mem::take(&mut self.case_labels);
        self.fns.push(FnCtx {
            name: f.name.clone(),
            ret,
            end: end.clone(),
            labels_state: HashMap::new(),
            assigned,
        });
        let r = f
            .body
            .iter()
            .try_for_each(|s| self.stmt(s))
            .and_then(|_| self.check_gotos());
        self.fns.pop();
        self.scopes = saved_scopes;
        self.loops = saved_loops;
        self.case_labels = saved_cases;
        r?;
        self.place(&end, f.end)?;
        Ok(match ret {
            Some((reg, ty)) => self.read(LVal::Var { reg, ty }, None, at)?,
            None => RVal::Void,
        })
    }
}

/// Which names a function body assigns to after their declaration: `any` by any means (`=`,
/// `op=`, `++`, `--`, `&`, asm outputs), `other` by anything but an increment (`++`, `+= C` with a
/// non-negative constant C). A variable in neither set keeps its initial value; one only
/// incremented never decreases (signed overflow is undefined in C, as compilers assume).
#[derive(Debug, Default, Clone)]
pub struct Assignments {
    pub any: HashSet<String>,
    pub other: HashSet<String>,
}

impl Assignments {
    pub fn of(body: &[Stmt]) -> Assignments {
        let mut a = Assignments::default();
        body.iter().for_each(|s| a.stmt(s));
        a
    }

    fn target(&mut self, x: &Expr, increment: bool) {
        if let Some(n) = x.ident() {
            self.any.insert(n.to_string());
            if !increment {
                self.other.insert(n.to_string());
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Assign(op, l, r) => {
                let nonneg_constant = matches!(r.kind, ExprKind::Int(..));
                self.target(l, *op == Some(BinOp::Add) && nonneg_constant);
                self.expr(l);
                self.expr(r);
            }
            ExprKind::PreInc(inc, x) | ExprKind::PostInc(inc, x) => {
                self.target(x, *inc);
                self.expr(x);
            }
            ExprKind::Unary(UnOp::AddrOf, x) => {
                self.target(x, false);
                self.expr(x);
            }
            ExprKind::Unary(_, x)
            | ExprKind::Cast(_, x)
            | ExprKind::SizeofExpr(x)
            | ExprKind::Member(x, _, _) => self.expr(x),
            ExprKind::Binary(_, a, b)
            | ExprKind::Logical(_, a, b)
            | ExprKind::Comma(a, b)
            | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Cond(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            ExprKind::Call(f, args) => {
                self.expr(f);
                args.iter().for_each(|a| self.expr(a));
            }
            _ => {}
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Switch(e, b) | StmtKind::Case(e, b) => {
                self.expr(e);
                self.stmt(b);
            }
            StmtKind::Decl(d) => {
                for x in &d.decls {
                    match &x.init {
                        Some(Init::Expr(e)) => self.expr(e),
                        Some(Init::List(v, _)) | Some(Init::Ctor(v, _)) => {
                            v.iter().for_each(|e| self.expr(e))
                        }
                        None => {}
                    }
                }
            }
            StmtKind::Block(v) => v.iter().for_each(|s| self.stmt(s)),
            StmtKind::If(c, a, b) => {
                self.expr(c);
                self.stmt(a);
                if let Some(b) = b {
                    self.stmt(b);
                }
            }
            StmtKind::While(c, b) | StmtKind::DoWhile(b, c) => {
                self.expr(c);
                self.stmt(b);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    self.stmt(i);
                }
                if let Some(c) = cond {
                    self.expr(c);
                }
                if let Some(st) = step {
                    self.expr(st);
                }
                self.stmt(body);
            }
            StmtKind::Default(b) | StmtKind::Label(_, b) => self.stmt(b),
            StmtKind::Asm(a) => a.outputs.iter().for_each(|(_, e)| self.target(e, false)),
            _ => {}
        }
    }
}
