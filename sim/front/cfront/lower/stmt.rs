//! Statements: blocks and scopes, control flow lowered to labels and branches (loops tested at the
//! bottom in kernels, at the top in litmus threads), `switch`, `goto` and labels, `return`, and
//! inline `asm` reading a special register. Declarations are in `decl.rs`, conditions in
//! `cond.rs`, calls of device functions in `inline.rs`.

use super::values::{LVal, RVal};
use super::{LoopCtx, Lower, Mode, R};
use crate::cfront::ast::*;
use crate::cfront::types::STy;
use crate::cfront::Dialect;
use crate::ir::*;
use std::collections::HashMap;

impl Lower<'_> {
    pub(crate) fn stmt(&mut self, s: &Stmt) -> R<()> {
        self.check_code_size(s.loc)?;
        self.nested(s.loc, |l| l.stmt_here(s))
    }

    fn stmt_here(&mut self, s: &Stmt) -> R<()> {
        let at = s.loc;
        match &s.kind {
            StmtKind::Empty => Ok(()),
            StmtKind::Expr(e) => self.effect(e),
            StmtKind::Decl(d) => self.decl(d),
            StmtKind::Block(v) => {
                self.push_scope();
                let r = v.iter().try_for_each(|s| self.stmt(s));
                self.pop_scope();
                r
            }
            StmtKind::If(c, then, els) => {
                if let Some(t) = self.constant_truth(c)? {
                    // A constant condition (a workload parameter): only the taken branch is code.
                    return match (t, els) {
                        (true, _) => self.scoped(then),
                        (false, Some(e)) => self.scoped(e),
                        (false, None) => Ok(()),
                    };
                }
                let else_l = self.label();
                self.branch_unless(c, &else_l)?;
                self.scoped(then)?;
                if let Some(e) = els {
                    let end = self.label();
                    self.jump(&end, at);
                    self.place(&else_l, at)?;
                    self.scoped(e)?;
                    self.place(&end, at)
                } else {
                    self.place(&else_l, at)
                }
            }
            StmtKind::While(c, body) => {
                if self.mode == Mode::Kernel {
                    return self.rotated_loop(Some(c), body, None, at);
                }
                let (top, end) = (self.label(), self.label());
                self.place(&top, at)?;
                self.branch_unless(c, &end)?;
                self.loop_body(body, &end, &top)?;
                self.jump(&top, at);
                self.place(&end, at)
            }
            StmtKind::DoWhile(body, c) => {
                let (top, cont, end) = (self.label(), self.label(), self.label());
                self.place(&top, at)?;
                self.loop_body(body, &end, &cont)?;
                self.place(&cont, at)?;
                self.branch_if(c, &top)?;
                self.place(&end, at)
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.push_scope();
                let r = (|| {
                    if let Some(i) = init {
                        self.stmt(i)?;
                    }
                    if self.mode == Mode::Kernel {
                        return self.rotated_loop(cond.as_ref(), body, step.as_ref(), at);
                    }
                    let (top, cont, end) = (self.label(), self.label(), self.label());
                    self.place(&top, at)?;
                    if let Some(c) = cond {
                        self.branch_unless(c, &end)?;
                    }
                    self.loop_body(body, &end, &cont)?;
                    self.place(&cont, at)?;
                    if let Some(st) = step {
                        self.effect(st)?;
                    }
                    self.jump(&top, at);
                    self.place(&end, at)
                })();
                self.pop_scope();
                r
            }
            StmtKind::Switch(e, body) => self.switch(e, body, at),
            StmtKind::Case(_, inner) | StmtKind::Default(inner) => {
                let key = s as *const Stmt;
                let Some(l) = self.case_labels.last().and_then(|m| m.get(&key)).cloned() else {
                    return Err(self.err(at, "`case` and `default` belong inside a `switch`"));
                };
                self.place(&l, at)?;
                self.stmt(inner)
            }
            StmtKind::Break => match self.loops.last() {
                Some(l) => {
                    let b = l.brk.clone();
                    self.jump(&b, at);
                    Ok(())
                }
                None => Err(self.err(at, "`break` outside a loop or switch")),
            },
            StmtKind::Continue => match self.loops.iter().rev().find_map(|l| l.cont.clone()) {
                Some(c) => {
                    self.jump(&c, at);
                    Ok(())
                }
                None => Err(self.err(at, "`continue` outside a loop")),
            },
            StmtKind::Return(e) => self.ret(e.as_ref(), at),
            StmtKind::Goto(name) => {
                let l = self.user_label(name, Some(at));
                self.jump(&l, at);
                Ok(())
            }
            StmtKind::Label(name, inner) => {
                let l = self.user_label(name, None);
                let fc = self.fns.last_mut().expect("a function");
                if let Some((_, true, _)) = fc.labels_state.get(name) {
                    return Err(self.err(at, format!("label `{name}` is defined twice")));
                }
                fc.labels_state
                    .entry(name.clone())
                    .or_insert((l.clone(), true, at))
                    .1 = true;
                self.place(&l, at)?;
                self.stmt(inner)
            }
            StmtKind::Asm(a) => self.asm(a),
        }
    }

    /// A loop with its test at the bottom, as compilers lay loops out (one branch per iteration):
    /// `if (!c) goto end; top: body; cont: step; if (c) goto top; end:`. The condition's code
    /// appears twice; it runs as often as C says (before the first and after every iteration).
    fn rotated_loop(
        &mut self,
        c: Option<&Expr>,
        body: &Stmt,
        step: Option<&Expr>,
        at: SrcLoc,
    ) -> R<()> {
        let (top, cont, end) = (self.label(), self.label(), self.label());
        if let Some(c) = c {
            self.branch_unless(c, &end)?;
        }
        self.place(&top, at)?;
        self.loop_body(body, &end, &cont)?;
        self.place(&cont, at)?;
        if let Some(st) = step {
            self.effect(st)?;
        }
        match c {
            Some(c) => self.branch_if(c, &top)?,
            None => self.jump(&top, at),
        }
        self.place(&end, at)
    }

    /// A statement in its own scope (the branch of an `if`, a loop body).
    fn scoped(&mut self, s: &Stmt) -> R<()> {
        self.push_scope();
        let r = self.stmt(s);
        self.pop_scope();
        r
    }

    fn loop_body(&mut self, body: &Stmt, brk: &str, cont: &str) -> R<()> {
        self.loops.push(LoopCtx {
            brk: brk.to_string(),
            cont: Some(cont.to_string()),
        });
        let r = self.scoped(body);
        self.loops.pop();
        r
    }

    /// The internal name of user label `name` in the current function (`goto`: `Some(place)`).
    fn user_label(&mut self, name: &str, goto: Option<SrcLoc>) -> String {
        if let Some((l, _, _)) = self.fns.last().and_then(|f| f.labels_state.get(name)) {
            return l.clone();
        }
        let l = self.label();
        let fc = self.fns.last_mut().expect("a function");
        fc.labels_state.insert(
            name.to_string(),
            (l.clone(), false, goto.unwrap_or_default()),
        );
        l
    }

    /// Every label a `goto` of the current function names is defined.
    pub(crate) fn check_gotos(&self) -> R<()> {
        let fc = self.fns.last().expect("a function");
        let mut missing: Vec<(&String, &SrcLoc)> = fc
            .labels_state
            .iter()
            .filter(|(_, (_, defined, _))| !defined)
            .map(|(n, (_, _, at))| (n, at))
            .collect();
        missing.sort_by_key(|(_, at)| (at.line, at.col));
        match missing.first() {
            Some((n, at)) => {
                Err(self.err(**at, format!("`goto {n}`: no label `{n}` in this function")))
            }
            None => Ok(()),
        }
    }

    fn ret(&mut self, e: Option<&Expr>, at: SrcLoc) -> R<()> {
        if self.fns.len() == 1 {
            if let Some(e) = e {
                return Err(self.err(e.loc, "a kernel returns nothing (`return;`)"));
            }
            match self.mode {
                Mode::Kernel => self.emit(Inst::Exit, at),
                // A litmus thread ends by falling off its end (the harness reads its registers).
                Mode::Litmus => {
                    let end = self.fns[0].end.clone();
                    self.jump(&end, at);
                }
            }
            return Ok(());
        }
        let fc = self.fns.last().expect("a function");
        let (ret, end, name) = (fc.ret, fc.end.clone(), fc.name.clone());
        match (ret, e) {
            (Some((reg, ty)), Some(e)) => {
                let v = self.rvalue(e, Some(reg))?;
                let v = self.convert(v, ty, Some(reg), at)?;
                self.write(LVal::Var { reg, ty }, v, at)?;
            }
            (None, Some(e)) => {
                return Err(self.err(e.loc, format!("`{name}` returns void: `return;`")))
            }
            (Some(_), None) => {
                return Err(self.err(at, format!("`{name}` returns a value: `return EXPR;`")))
            }
            (None, None) => {}
        }
        self.jump(&end, at);
        Ok(())
    }

    fn switch(&mut self, e: &Expr, body: &Stmt, at: SrcLoc) -> R<()> {
        let v = self.rvalue(e, None)?;
        let RVal::Scalar { ty, .. } = v else {
            return Err(self.err(
                e.loc,
                format!(
                    "`switch` needs an integer, found {}",
                    v.describe(self.dialect)
                ),
            ));
        };
        if ty.is_float() {
            return Err(self.err(e.loc, "`switch` needs an integer, found `float`"));
        }
        let t = ty.promote();
        let x = self.operand_as(v, t, at)?;
        let mut cases: Vec<(&Stmt, Option<&Expr>)> = Vec::new();
        collect_cases(body, &mut cases);
        let end = self.label();
        let mut labels = HashMap::new();
        let mut seen: Vec<(i128, SrcLoc)> = Vec::new();
        let mut default = None;
        for (s, c) in &cases {
            let l = self.label();
            labels.insert(*s as *const Stmt, l.clone());
            match c {
                None => {
                    if default.is_some() {
                        return Err(self.err(s.loc, "a second `default` in one switch"));
                    }
                    default = Some(l);
                }
                Some(ce) => {
                    let k = self
                        .constant(ce)?
                        .and_then(|v| v.int_value())
                        .ok_or_else(|| {
                            self.err(ce.loc, "a `case` value must be an integer constant")
                        })?;
                    let kb = t.int_bits(k);
                    let k = t.int_value(kb);
                    if let Some((_, first)) = seen.iter().find(|(v, _)| *v == k) {
                        return Err(
                            self.err(ce.loc, format!("case {k} appears twice (first at {first})"))
                        );
                    }
                    seen.push((k, ce.loc));
                    let c = self.compare(CmpOp::Eq, t.ir(), x, Operand::Imm(kb), None, ce.loc)?;
                    let c = self.operand(c, at)?;
                    let r = self.reg_of(c, Ty::I32, at);
                    self.sink.branch(&l, Some((r, true)), ce.loc);
                }
            }
        }
        let fallback = default.unwrap_or_else(|| end.clone());
        self.jump(&fallback, at);
        self.case_labels.push(labels);
        self.loops.push(LoopCtx {
            brk: end.clone(),
            cont: None,
        });
        let r = self.scoped(body);
        self.loops.pop();
        self.case_labels.pop();
        r?;
        self.place(&end, at)
    }

    /// `asm("mov.u32 %0, %%laneid;" : "=r"(x))`: reading a PTX special register.
    fn asm(&mut self, a: &Asm) -> R<()> {
        if self.dialect != Dialect::Cuda {
            return Err(self.err(a.loc, "inline asm is not supported"));
        }
        let t: String = a.template.replace("%%", "%");
        let words: Vec<&str> = t
            .trim()
            .trim_end_matches(';')
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        let special = match words.as_slice() {
            ["mov.u32" | "mov.s32" | "mov.b32", "%0", reg] => match *reg {
                "%laneid" => Some(Special::Lane),
                "%warpid" => Some(Special::SubGroupId),
                "%nwarpid" => Some(Special::NumSubGroups),
                "%smid" => Some(Special::SmId),
                _ => None,
            },
            ["mov.u64" | "mov.b64", "%0", "%clock64"] => Some(Special::Clock),
            _ => None,
        };
        let (Some(which), [(_, out)]) = (special, a.outputs.as_slice()) else {
            return Err(self.err(
                a.loc,
                "inline asm is not supported, except `asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x))` reading %laneid, %warpid, %nwarpid, %smid or %clock64",
            ));
        };
        let lv = self.lvalue(out)?;
        let d = self.temp(Ty::U64);
        self.emit(Inst::ReadSpecial { dst: d, which }, a.loc);
        let from = if which == Special::Clock {
            STy::U64
        } else {
            STy::U32
        };
        let v = RVal::Scalar {
            op: Operand::Reg(d),
            ty: from,
            max: self.special_max(which),
        };
        let v = self.convert(v, Self::lval_ty(&lv), None, a.loc)?;
        self.write(lv, v, a.loc)
    }
}

/// The `case`/`default` statements of a switch body, in order (not those of nested switches).
fn collect_cases<'s>(s: &'s Stmt, out: &mut Vec<(&'s Stmt, Option<&'s Expr>)>) {
    match &s.kind {
        StmtKind::Case(e, inner) => {
            out.push((s, Some(e)));
            collect_cases(inner, out);
        }
        StmtKind::Default(inner) => {
            out.push((s, None));
            collect_cases(inner, out);
        }
        StmtKind::Block(v) => v.iter().for_each(|x| collect_cases(x, out)),
        StmtKind::If(_, a, b) => {
            collect_cases(a, out);
            if let Some(b) = b {
                collect_cases(b, out);
            }
        }
        StmtKind::While(_, b) | StmtKind::DoWhile(b, _) | StmtKind::Label(_, b) => {
            collect_cases(b, out)
        }
        StmtKind::For { body, .. } => collect_cases(body, out),
        _ => {}
    }
}
