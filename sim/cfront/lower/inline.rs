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
use std::collections::HashMap;

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
        let assigned = assigned_names(&f.body);
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
            if assigned.contains(&p.name.as_str()) {
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

/// Names a function body assigns to (`=`, `op=`, `++`, `--`, `&`): its parameters that need a
/// register of their own.
fn assigned_names(body: &[Stmt]) -> Vec<&str> {
    fn expr<'e>(e: &'e Expr, out: &mut Vec<&'e str>) {
        let target = |x: &'e Expr, out: &mut Vec<&'e str>| {
            if let Some(n) = x.ident() {
                out.push(n);
            }
        };
        match &e.kind {
            ExprKind::Assign(_, l, r) => {
                target(l, out);
                expr(l, out);
                expr(r, out);
            }
            ExprKind::PreInc(_, x) | ExprKind::PostInc(_, x) | ExprKind::Unary(UnOp::AddrOf, x) => {
                target(x, out);
                expr(x, out);
            }
            ExprKind::Unary(_, x)
            | ExprKind::Cast(_, x)
            | ExprKind::SizeofExpr(x)
            | ExprKind::Member(x, _, _) => expr(x, out),
            ExprKind::Binary(_, a, b)
            | ExprKind::Logical(_, a, b)
            | ExprKind::Comma(a, b)
            | ExprKind::Index(a, b) => {
                expr(a, out);
                expr(b, out);
            }
            ExprKind::Cond(a, b, c) => {
                expr(a, out);
                expr(b, out);
                expr(c, out);
            }
            ExprKind::Call(f, args) => {
                expr(f, out);
                args.iter().for_each(|a| expr(a, out));
            }
            _ => {}
        }
    }
    fn stmt<'e>(s: &'e Stmt, out: &mut Vec<&'e str>) {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Switch(e, _) | StmtKind::Case(e, _) => {
                expr(e, out);
                if let StmtKind::Switch(_, b) | StmtKind::Case(_, b) = &s.kind {
                    stmt(b, out);
                }
            }
            StmtKind::Return(Some(e)) => expr(e, out),
            StmtKind::Decl(d) => {
                for x in &d.decls {
                    match &x.init {
                        Some(Init::Expr(e)) => expr(e, out),
                        Some(Init::List(v, _)) | Some(Init::Ctor(v, _)) => {
                            v.iter().for_each(|e| expr(e, out))
                        }
                        None => {}
                    }
                }
            }
            StmtKind::Block(v) => v.iter().for_each(|s| stmt(s, out)),
            StmtKind::If(c, a, b) => {
                expr(c, out);
                stmt(a, out);
                if let Some(b) = b {
                    stmt(b, out);
                }
            }
            StmtKind::While(c, b) | StmtKind::DoWhile(b, c) => {
                expr(c, out);
                stmt(b, out);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(i) = init {
                    stmt(i, out);
                }
                if let Some(c) = cond {
                    expr(c, out);
                }
                if let Some(s) = step {
                    expr(s, out);
                }
                stmt(body, out);
            }
            StmtKind::Default(b) | StmtKind::Label(_, b) => stmt(b, out),
            StmtKind::Asm(a) => a.outputs.iter().for_each(|(_, e)| {
                if let Some(n) = e.ident() {
                    out.push(n);
                }
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    body.iter().for_each(|s| stmt(s, &mut out));
    out
}
