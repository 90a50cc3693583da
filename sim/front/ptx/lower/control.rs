//! Branches, calls and returns (PTX ISA §9.7.12 "Control flow").
//!
//! `bra` (and `bra.uni`) to a label of the function; `call` to a `.func` of the module is inlined:
//! the callee's body is lowered in a fresh scope that sees the module's names only, its `.param`s
//! bound to the caller's argument and return variables (or registers, in the old register-passing
//! form), its labels renamed per copy, `ret` a branch to the end of the copy. Inlining costs no
//! call or return instructions (the hardware's call overhead is not modelled: timing only).
//! Refused: indirect calls and branches (through a register or `.calltargets`), calls to functions
//! without a body (`vprintf`, `malloc`, `__assertfail`: the machine has no host services), and
//! recursion deeper than [`MAX_INLINE_DEPTH`](super::MAX_INLINE_DEPTH).

use super::{label_name, Frame, Lower, Sym, R};
use crate::cfront::lower::Sink;
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{Instr, Opnd};

pub fn branch(l: &mut Lower, i: &Instr, f: &Frame, cond: Option<(Reg, bool)>) -> R<()> {
    let [Opnd::Name(target, _)] = i.operands.as_slice() else {
        return Err(CError::new(
            i.loc,
            "`bra LABEL`: indirect branches are not modelled yet",
        ));
    };
    l.sink.branch(&label_name(target, f), cond, i.loc);
    Ok(())
}

pub fn ret(l: &mut Lower, i: &Instr, f: &Frame) -> R<()> {
    match &f.ret_label {
        None => l.emit(Inst::Exit, i.loc),
        Some(lab) => l.sink.branch(lab, None, i.loc),
    }
    Ok(())
}

/// An argument or return of a call: a `.param` variable of the caller.
fn param_of(l: &mut Lower, o: &Opnd) -> R<usize> {
    if let Opnd::Name(n, _) = o {
        if let Some(Sym::Param(p)) = l.var(n) {
            return Ok(p);
        }
    }
    Err(CError::new(o.loc(), "a call's arguments and results are `.param` variables (the register-passing form is not modelled yet)"))
}

pub fn call(l: &mut Lower, i: &Instr, f: &Frame) -> R<()> {
    let at = i.loc;
    // call{.uni} (rets), fname, (args)  |  call (rets), fname  |  call fname, (args)  |  call fname
    let ops = &i.operands;
    let (rets, rest): (&[Opnd], &[Opnd]) = match ops.first() {
        Some(Opnd::List(r, _)) => (r, &ops[1..]),
        _ => (&[], &ops[..]),
    };
    let (fname, fat, args): (&str, SrcLoc, &[Opnd]) = match rest {
        [Opnd::Name(n, nat)] => (n, *nat, &[]),
        [Opnd::Name(n, nat), Opnd::List(a, _)] => (n, *nat, a),
        [Opnd::Name(n, nat), Opnd::List(a, _), _] => (n, *nat, a),
        _ => return Err(CError::new(at, "expected `call (rets), function, (args)`")),
    };
    let module = l.module;
    let Some(callee) = module.funcs.iter().find(|g| g.name == fname && !g.entry) else {
        return Err(CError::new(
            fat,
            format!("no `.func {fname}` in this module"),
        ));
    };
    let Some(body) = callee.body.as_ref().or_else(|| {
        module
            .funcs
            .iter()
            .find(|g| g.name == fname && g.body.is_some())
            .and_then(|g| g.body.as_ref())
    }) else {
        return Err(CError::new(fat, format!("`{fname}` has no body in this module (an external function such as vprintf or malloc): calls to host services are not modelled")));
    };
    if f.depth + 1 > super::MAX_INLINE_DEPTH {
        return Err(CError::new(
            at,
            format!(
                "calls nested deeper than {} (recursion is not modelled: functions are inlined)",
                super::MAX_INLINE_DEPTH
            ),
        ));
    }
    if args.len() != callee.params.len() || rets.len() != callee.rets.len() {
        return Err(CError::new(
            at,
            format!(
                "`{fname}` takes {} arguments and {} results; the call passes {} and {}",
                callee.params.len(),
                callee.rets.len(),
                args.len(),
                rets.len()
            ),
        ));
    }
    let mut bound = Vec::new();
    for (a, p) in args.iter().zip(&callee.params) {
        bound.push((p.name.clone(), param_of(l, a)?));
    }
    for (r, p) in rets.iter().zip(&callee.rets) {
        bound.push((p.name.clone(), param_of(l, r)?));
    }
    // The callee sees the module scope and its parameters only.
    let saved = l.scopes.split_off(1);
    let mut s = super::Scope::default();
    for (name, p) in bound {
        s.names.insert(name, Sym::Param(p));
    }
    l.scopes.push(s);
    l.next_instance += 1;
    let end = l.sink.fresh_label();
    let frame = Frame {
        instance: l.next_instance,
        ret_label: Some(end.clone()),
        depth: f.depth + 1,
    };
    let r = l.body(body, &frame);
    l.scopes.truncate(1);
    l.scopes.extend(saved);
    r?;
    l.sink.define_label(&end, callee.end)
}
