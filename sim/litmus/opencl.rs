//! The OpenCL / C dialect (herd style): one C function per thread,
//! `P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) { ... }` (`@cta 0,gpu 0` is accepted
//! too; without a placement, thread `Pi` gets work-group `i`).
//!
//! Statements: declarations of local variables (`int r0 = ...;`), assignments (`r0 = ...;`), plain
//! stores `*x = e;`, calls, `if (e) s [else s]`, `while (e) s` and blocks. Expressions: integers,
//! locals, plain loads `*x`, calls, `+ - * & | ^ == != < <= > >= && || !` with C precedence
//! (`&&`/`||` evaluate both sides: litmus conditions have no side effects to skip).
//!
//! Calls (orders `memory_order_relaxed|acquire|release|acq_rel|seq_cst`, scopes
//! `memory_scope_work_item|sub_group|work_group|device|all_svm_devices|all_devices|system`; the forms
//! without `_explicit` are seq_cst at device scope, the OpenCL 2.0 default):
//! `atomic_load[_explicit]`, `atomic_store[_explicit]`, `atomic_exchange[_explicit]`,
//! `atomic_compare_exchange_{strong,weak}[_explicit](x, &e, desired, ...)` (returns success and
//! updates `e` as C does), `atomic_fetch_{add,sub,or,xor,and,min,max}[_explicit]`,
//! `atomic_work_item_fence(flags, order, scope)`, `atomic_thread_fence(order)` (device scope),
//! `work_group_barrier(flags[, scope])` and `barrier(flags)`, flags `CLK_GLOBAL_MEM_FENCE |
//! CLK_LOCAL_MEM_FENCE`.
//!
//! A value loaded into a variable is loaded straight into its register, so that independent later
//! accesses are not held up by a copy (which would order them after the load).
//!
//! Parameters qualified `local` are work-group-local locations (their accesses become local in
//! `test.rs`), `global` ones global; without a qualifier, the init block's space (global by default).
//!
//! Not supported (an error that says so): pointers other than the
//! parameters, arrays, `for`, `do`, `break`, functions other than the ones above, `memory_order_consume`.

use super::lex::{Cursor, Tok};
use super::ptx::{failure_of, placement};
use super::test::{Location, RegInit, Thread, ThreadBuilder};
use super::LitmusError;
use crate::ir::*;

const TYPE_WORDS: &[&str] = &[
    "int",
    "unsigned",
    "uint",
    "long",
    "ulong",
    "short",
    "char",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "atomic_int",
    "atomic_uint",
    "atomic_long",
    "atomic_ulong",
    "global",
    "__global",
    "volatile",
    "const",
    "signed",
    "local",
    "__local",
    "private",
];

/// The value type named by a list of type words.
fn ty_of(words: &[String]) -> Ty {
    let has = |w: &str| words.iter().any(|x| x == w);
    let long = has("long")
        || has("ulong")
        || has("int64_t")
        || has("uint64_t")
        || has("atomic_long")
        || has("atomic_ulong");
    let unsigned = has("unsigned")
        || has("uint")
        || has("ulong")
        || has("uint32_t")
        || has("uint64_t")
        || has("atomic_uint")
        || has("atomic_ulong");
    match (long, unsigned) {
        (false, false) => Ty::I32,
        (false, true) => Ty::U32,
        (true, false) => Ty::I64,
        (true, true) => Ty::U64,
    }
}

fn is_type_word(t: Option<&Tok>) -> bool {
    matches!(t, Some(Tok::Ident(s)) if TYPE_WORDS.contains(&s.as_str()))
}

pub fn parse_threads(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    reg_init: &[(String, String, RegInit, SrcLoc)],
) -> Result<Vec<Thread>, LitmusError> {
    let mut threads: Vec<Thread> = Vec::new();
    while matches!(c.peek(), Some(Tok::Ident(s)) if s.starts_with('P') && s[1..].parse::<u32>().is_ok())
    {
        let (name, at) = c.ident("a thread")?;
        if threads.iter().any(|t| t.name == name) {
            return Err(c.error_at(at, format!("thread {name} is declared twice")));
        }
        let place = placement(c, threads.len() as u32)?;
        let mut b = ThreadBuilder::new(c.file, locations, name.clone(), place, at);
        b.init_regs(reg_init)?;
        // Parameters: the locations the thread uses.
        c.expect_punct("(")?;
        if !c.eat_punct(")") {
            loop {
                let mut words = Vec::new();
                let pat = c.loc();
                while is_type_word(c.peek()) {
                    words.push(c.ident("a type")?.0);
                }
                if !c.eat_punct("*") {
                    return Err(c.error("`*`: parameters are pointers to the test's locations"));
                }
                let (pname, nat) = c.ident("a parameter name")?;
                let l = b.location(&pname, nat)?;
                // `local`/`global` name the location's address space (OpenCL 2.0 s6.5).
                if words.iter().any(|w| w == "local" || w == "__local") {
                    b.declare_space(l, Space::Local, pat)?;
                } else if words.iter().any(|w| w == "global" || w == "__global") {
                    b.declare_space(l, Space::Global, pat)?;
                }
                let ty_words: Vec<String> = words
                    .iter()
                    .filter(|w| !["local", "__local", "global", "__global"].contains(&w.as_str()))
                    .cloned()
                    .collect();
                if !ty_words.is_empty() {
                    b.access_ty(l, Some(ty_of(&ty_words)), nat)?;
                }
                if c.eat_punct(")") {
                    break;
                }
                c.expect_punct(",")?;
            }
        }
        let mut p = Body { c: &mut *c, b };
        p.block()?;
        threads.push(p.b.finish()?);
    }
    if threads.is_empty() {
        return Err(c.error("a thread (`P0(global atomic_int* x) { ... }`)"));
    }
    Ok(threads)
}

struct Body<'c, 'a, 'b> {
    c: &'c mut Cursor<'a>,
    b: ThreadBuilder<'b>,
}

/// A memory order as written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mo {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl Body<'_, '_, '_> {
    fn block(&mut self) -> Result<(), LitmusError> {
        self.c.expect_punct("{")?;
        while !self.c.eat_punct("}") {
            if self.c.at_end() {
                return Err(self.c.error("`}`"));
            }
            self.stmt()?;
        }
        Ok(())
    }

    fn stmt(&mut self) -> Result<(), LitmusError> {
        let at = self.c.loc();
        if self.c.eat_punct(";") {
            return Ok(());
        }
        if self.c.is_punct("{") {
            return self.block();
        }
        if self.c.eat_ident("if") {
            self.c.expect_punct("(")?;
            let v = self.expr(None)?;
            self.c.expect_punct(")")?;
            let cond = self.as_reg(v, at);
            let else_l = self.b.fresh_label();
            self.b.branch(&else_l, Some((cond, false)), at);
            self.stmt()?;
            if self.c.eat_ident("else") {
                let end_l = self.b.fresh_label();
                self.b.branch(&end_l, None, at);
                self.b.define_label(&else_l, at)?;
                self.stmt()?;
                self.b.define_label(&end_l, at)?;
            } else {
                self.b.define_label(&else_l, at)?;
            }
            return Ok(());
        }
        if self.c.eat_ident("while") {
            let top = self.b.fresh_label();
            let end_l = self.b.fresh_label();
            self.b.define_label(&top, at)?;
            self.c.expect_punct("(")?;
            let v = self.expr(None)?;
            self.c.expect_punct(")")?;
            let cond = self.as_reg(v, at);
            self.b.branch(&end_l, Some((cond, false)), at);
            self.stmt()?;
            self.b.branch(&top, None, at);
            self.b.define_label(&end_l, at)?;
            return Ok(());
        }
        for kw in ["for", "do", "break", "continue", "return", "goto", "switch"] {
            if self.c.is_ident(kw) {
                return Err(self
                    .c
                    .error_at(at, format!("`{kw}` is not supported (use while and if)")));
            }
        }
        if is_type_word(self.c.peek()) {
            let mut words = Vec::new();
            while is_type_word(self.c.peek()) {
                words.push(self.c.ident("a type")?.0);
            }
            let ty = ty_of(&words);
            loop {
                if self.c.is_punct("*") {
                    return Err(self
                        .c
                        .error_at(self.c.loc(), "local pointers are not supported"));
                }
                let (name, nat) = self.c.ident("a variable name")?;
                if self.b.find_location(&name).is_some() {
                    return Err(self.b.error(nat, format!("{name} is already a location")));
                }
                let r = self.b.reg(&name);
                self.b.set_ty(r, ty);
                if self.c.eat_punct("=") {
                    self.assign(r, nat)?;
                }
                if !self.c.eat_punct(",") {
                    break;
                }
            }
            self.c.expect_punct(";")?;
            return Ok(());
        }
        if self.c.eat_punct("*") {
            // Plain store.
            let (l, lat) = self.location_name()?;
            self.c.expect_punct("=")?;
            let v = self.expr(None)?;
            self.c.expect_punct(";")?;
            let ty = self.b.access_ty(l, None, lat)?;
            let addr = self.addr(l);
            self.b.emit(
                Inst::Store {
                    space: Space::Global,
                    addr,
                    src: v,
                    ty,
                    ord: StoreOrd::Plain,
                    scope: Scope::Device,
                },
                at,
            );
            return Ok(());
        }
        if let (Some(Tok::Ident(name)), Some(Tok::Punct("="))) = (self.c.peek(), self.c.peek_at(1))
        {
            let name = name.clone();
            if self.b.find_location(&name).is_some() {
                return Err(self.c.error_at(
                    at,
                    format!("{name} is a location: store to it with *{name} = ... or an atomic"),
                ));
            }
            self.c.next();
            self.c.next();
            let r = self.b.reg(&name);
            self.assign(r, at)?;
            self.c.expect_punct(";")?;
            return Ok(());
        }
        // A call for its effect.
        let _ = self.expr(None)?;
        self.c.expect_punct(";")?;
        Ok(())
    }

    /// `= expr` into register `r`: loads and atomics write it directly.
    fn assign(&mut self, r: Reg, at: SrcLoc) -> Result<(), LitmusError> {
        let v = self.expr(Some(r))?;
        if v != Operand::Reg(r) {
            self.b.emit(Inst::Mov { dst: r, src: v }, at);
        }
        Ok(())
    }

    fn as_reg(&mut self, v: Operand, at: SrcLoc) -> Reg {
        match v {
            Operand::Reg(r) => r,
            Operand::Imm(_) => {
                let t = self.b.temp();
                self.b.emit(Inst::Mov { dst: t, src: v }, at);
                t
            }
        }
    }

    fn addr(&mut self, l: usize) -> Address {
        Address {
            base: Operand::Reg(self.b.addr_reg(l)),
            offset: 0,
        }
    }

    fn location_name(&mut self) -> Result<(usize, SrcLoc), LitmusError> {
        let (name, at) = self.c.ident("a location")?;
        match self.b.find_location(&name) {
            Some(l) => Ok((l, at)),
            None => Err(self.b.error(
                at,
                format!("unknown location {name} (declare it as a parameter or in the init block)"),
            )),
        }
    }

    /// Expression; `dst` is where the caller wants the value (a hint that loads and calls honour).
    fn expr(&mut self, dst: Option<Reg>) -> Result<Operand, LitmusError> {
        self.binary(0, dst)
    }

    fn binary(&mut self, level: usize, dst: Option<Reg>) -> Result<Operand, LitmusError> {
        // Precedence levels, loosest first.
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", "<=", ">", ">="],
            &["+", "-"],
            &["*"],
        ];
        if level == LEVELS.len() {
            return self.unary(dst);
        }
        let mut a = self.binary(level + 1, dst)?;
        loop {
            let Some(op) = LEVELS[level].iter().find(|o| self.c.is_punct(o)) else {
                return Ok(a);
            };
            let at = self.c.loc();
            self.c.next();
            let b = self.binary(level + 1, None)?;
            let t = self.b.temp();
            let ty = Ty::I64;
            let inst = match *op {
                "||" | "&&" => {
                    // Both sides as truth values, then and/or.
                    let x = self.truth(a, at);
                    let y = self.truth(b, at);
                    Inst::Alu {
                        op: if *op == "||" { AluOp::Or } else { AluOp::And },
                        ty,
                        dst: t,
                        a: Operand::Reg(x),
                        b: Operand::Reg(y),
                    }
                }
                "|" | "^" | "&" | "+" | "-" | "*" => Inst::Alu {
                    op: match *op {
                        "|" => AluOp::Or,
                        "^" => AluOp::Xor,
                        "&" => AluOp::And,
                        "+" => AluOp::Add,
                        "-" => AluOp::Sub,
                        _ => AluOp::Mul,
                    },
                    ty,
                    dst: t,
                    a,
                    b,
                },
                _ => Inst::Cmp {
                    op: match *op {
                        "==" => CmpOp::Eq,
                        "!=" => CmpOp::Ne,
                        "<" => CmpOp::Lt,
                        "<=" => CmpOp::Le,
                        ">" => CmpOp::Gt,
                        _ => CmpOp::Ge,
                    },
                    ty: Ty::I32,
                    dst: t,
                    a,
                    b,
                },
            };
            self.b.emit(inst, at);
            a = Operand::Reg(t);
        }
    }

    /// `v != 0` as 0/1 in a register.
    fn truth(&mut self, v: Operand, at: SrcLoc) -> Reg {
        let t = self.b.temp();
        self.b.emit(
            Inst::Cmp {
                op: CmpOp::Ne,
                ty: Ty::I64,
                dst: t,
                a: v,
                b: Operand::Imm(0),
            },
            at,
        );
        t
    }

    fn unary(&mut self, dst: Option<Reg>) -> Result<Operand, LitmusError> {
        let at = self.c.loc();
        if self.c.eat_punct("!") {
            let v = self.unary(None)?;
            let t = self.b.temp();
            self.b.emit(
                Inst::Cmp {
                    op: CmpOp::Eq,
                    ty: Ty::I64,
                    dst: t,
                    a: v,
                    b: Operand::Imm(0),
                },
                at,
            );
            return Ok(Operand::Reg(t));
        }
        if self.c.is_punct("-") {
            if let Some(Tok::Int(_)) = self.c.peek_at(1) {
                return Ok(Operand::Imm(self.c.int("a number")?.0 as u64));
            }
            self.c.next();
            let v = self.unary(None)?;
            let t = self.b.temp();
            self.b.emit(
                Inst::Alu {
                    op: AluOp::Sub,
                    ty: Ty::I64,
                    dst: t,
                    a: Operand::Imm(0),
                    b: v,
                },
                at,
            );
            return Ok(Operand::Reg(t));
        }
        if self.c.eat_punct("(") {
            let v = self.expr(dst)?;
            self.c.expect_punct(")")?;
            return Ok(v);
        }
        if self.c.eat_punct("*") {
            // Plain load.
            let (l, lat) = self.location_name()?;
            let ty = self.b.access_ty(l, None, lat)?;
            let d = dst.unwrap_or_else(|| self.b.temp());
            self.b.set_ty(d, ty);
            let addr = self.addr(l);
            self.b.emit(
                Inst::Load {
                    dst: d,
                    space: Space::Global,
                    addr,
                    ty,
                    ord: LoadOrd::Plain,
                    scope: Scope::Device,
                },
                at,
            );
            return Ok(Operand::Reg(d));
        }
        match self.c.peek() {
            Some(Tok::Int(v)) => {
                let v = *v;
                self.c.next();
                Ok(Operand::Imm(v as u64))
            }
            Some(Tok::Ident(name)) => {
                let name = name.clone();
                self.c.next();
                if self.c.is_punct("(") {
                    return self.call(&name, at, dst);
                }
                if self.b.find_location(&name).is_some() && self.b.t.reg_named(&name).is_none() {
                    return Err(self.b.error(
                        at,
                        format!("{name} is a location: read it with *{name} or an atomic load"),
                    ));
                }
                Ok(Operand::Reg(self.b.reg(&name)))
            }
            _ => Err(self.c.error("an expression")),
        }
    }

    fn mo(&mut self) -> Result<(Mo, SrcLoc), LitmusError> {
        let (w, at) = self.c.ident("a memory order (memory_order_...)")?;
        let m = match w.as_str() {
            "memory_order_relaxed" => Mo::Relaxed,
            "memory_order_acquire" => Mo::Acquire,
            "memory_order_release" => Mo::Release,
            "memory_order_acq_rel" => Mo::AcqRel,
            "memory_order_seq_cst" => Mo::SeqCst,
            "memory_order_consume" => {
                return Err(self.b.error(at, "memory_order_consume is not supported (use memory_order_acquire)"))
            }
            _ => {
                return Err(self.b.error(
                    at,
                    format!("`{w}` is not a memory order (memory_order_relaxed, _acquire, _release, _acq_rel, _seq_cst)"),
                ))
            }
        };
        Ok((m, at))
    }

    fn scope(&mut self) -> Result<Scope, LitmusError> {
        let (w, at) = self.c.ident("a memory scope (memory_scope_...)")?;
        w.strip_prefix("memory_scope_")
            .and_then(Scope::parse)
            .ok_or_else(|| {
                self.b.error(
                    at,
                    format!("`{w}` is not a memory scope (memory_scope_work_item, _sub_group, _work_group, _device, _all_svm_devices)"),
                )
            })
    }

    /// `, scope` if present, else device (OpenCL 2.0's default).
    fn opt_scope(&mut self) -> Result<Scope, LitmusError> {
        if self.c.eat_punct(",") {
            self.scope()
        } else {
            Ok(Scope::Device)
        }
    }

    fn flags(&mut self) -> Result<SpaceSet, LitmusError> {
        let mut s = SpaceSet::NONE;
        loop {
            let (w, at) = self
                .c
                .ident("fence flags (CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE)")?;
            match w.as_str() {
                "CLK_GLOBAL_MEM_FENCE" => s.global = true,
                "CLK_LOCAL_MEM_FENCE" => s.local = true,
                _ => {
                    return Err(self.b.error(
                        at,
                        format!(
                            "`{w}` is not a fence flag (CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE)"
                        ),
                    ))
                }
            }
            if !self.c.eat_punct("|") {
                return Ok(s);
            }
        }
    }

    /// The atomic object argument: `x` or `&x`.
    fn object(&mut self) -> Result<(usize, SrcLoc), LitmusError> {
        self.c.eat_punct("&");
        self.location_name()
    }

    fn call(&mut self, name: &str, at: SrcLoc, dst: Option<Reg>) -> Result<Operand, LitmusError> {
        self.c.expect_punct("(")?;
        let explicit = name.ends_with("_explicit");
        let base = name.strip_suffix("_explicit").unwrap_or(name);
        let out = match base {
            "atomic_load" => {
                let (l, lat) = self.object()?;
                let (ord, scope) = if explicit {
                    self.c.expect_punct(",")?;
                    let (m, mat) = self.mo()?;
                    let ord = match m {
                        Mo::Relaxed => LoadOrd::Relaxed,
                        Mo::Acquire => LoadOrd::Acquire,
                        Mo::SeqCst => LoadOrd::SeqCst,
                        _ => return Err(self.b.error(mat, "a load cannot be release or acq_rel")),
                    };
                    (ord, self.opt_scope()?)
                } else {
                    (LoadOrd::SeqCst, Scope::Device)
                };
                let ty = self.b.access_ty(l, None, lat)?;
                let d = dst.unwrap_or_else(|| self.b.temp());
                self.b.set_ty(d, ty);
                let addr = self.addr(l);
                self.b.emit(
                    Inst::Load {
                        dst: d,
                        space: Space::Global,
                        addr,
                        ty,
                        ord,
                        scope,
                    },
                    at,
                );
                Operand::Reg(d)
            }
            "atomic_store" => {
                let (l, lat) = self.object()?;
                self.c.expect_punct(",")?;
                let v = self.expr(None)?;
                let (ord, scope) = if explicit {
                    self.c.expect_punct(",")?;
                    let (m, mat) = self.mo()?;
                    let ord = match m {
                        Mo::Relaxed => StoreOrd::Relaxed,
                        Mo::Release => StoreOrd::Release,
                        Mo::SeqCst => StoreOrd::SeqCst,
                        _ => return Err(self.b.error(mat, "a store cannot be acquire or acq_rel")),
                    };
                    (ord, self.opt_scope()?)
                } else {
                    (StoreOrd::SeqCst, Scope::Device)
                };
                let ty = self.b.access_ty(l, None, lat)?;
                let addr = self.addr(l);
                self.b.emit(
                    Inst::Store {
                        space: Space::Global,
                        addr,
                        src: v,
                        ty,
                        ord,
                        scope,
                    },
                    at,
                );
                Operand::Imm(0)
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                let (l, lat) = self.object()?;
                self.c.expect_punct(",")?;
                if !self.c.eat_punct("&") {
                    return Err(self.c.error("`&` and the variable holding the expected value"));
                }
                let (ename, eat) = self.c.ident("the expected-value variable")?;
                let Some(e) = self.b.t.reg_named(&ename) else {
                    return Err(self.b.error(eat, format!("{ename} is not a declared variable")));
                };
                self.c.expect_punct(",")?;
                let desired = self.expr(None)?;
                let (success, failure, scope) = if explicit {
                    self.c.expect_punct(",")?;
                    let (s, _) = self.mo()?;
                    self.c.expect_punct(",")?;
                    let (f, fat) = self.mo()?;
                    let success = rmw_ord(s);
                    let failure = match f {
                        Mo::Relaxed => LoadOrd::Relaxed,
                        Mo::Acquire => LoadOrd::Acquire,
                        Mo::SeqCst => LoadOrd::SeqCst,
                        _ => return Err(self.b.error(fat, "the failure order cannot be release or acq_rel")),
                    };
                    (success, failure, self.opt_scope()?)
                } else {
                    (RmwOrd::SeqCst, failure_of(RmwOrd::SeqCst), Scope::Device)
                };
                let ty = self.b.access_ty(l, None, lat)?;
                let old = self.b.temp();
                self.b.set_ty(old, ty);
                let addr = self.addr(l);
                self.b.emit(
                    Inst::Cas {
                        dst: Some(old),
                        space: Space::Global,
                        addr,
                        expected: Operand::Reg(e),
                        desired,
                        ty,
                        success,
                        failure,
                        scope,
                        weak: base.ends_with("weak"),
                    },
                    at,
                );
                let ok = dst.unwrap_or_else(|| self.b.temp());
                self.b.emit(
                    Inst::Cmp {
                        op: CmpOp::Eq,
                        ty,
                        dst: ok,
                        a: Operand::Reg(old),
                        b: Operand::Reg(e),
                    },
                    at,
                );
                // C: on failure the expected variable receives the current value (on success they
                // are equal anyway).
                self.b.emit(
                    Inst::Mov {
                        dst: e,
                        src: Operand::Reg(old),
                    },
                    at,
                );
                Operand::Reg(ok)
            }
            "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub" | "atomic_fetch_or"
            | "atomic_fetch_xor" | "atomic_fetch_and" | "atomic_fetch_min" | "atomic_fetch_max" => {
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
                let (l, lat) = self.object()?;
                self.c.expect_punct(",")?;
                let v = self.expr(None)?;
                let (ord, scope) = if explicit {
                    self.c.expect_punct(",")?;
                    let (m, _) = self.mo()?;
                    (rmw_ord(m), self.opt_scope()?)
                } else {
                    (RmwOrd::SeqCst, Scope::Device)
                };
                let ty = self.b.access_ty(l, None, lat)?;
                let d = dst.unwrap_or_else(|| self.b.temp());
                self.b.set_ty(d, ty);
                let addr = self.addr(l);
                self.b.emit(
                    Inst::Rmw {
                        dst: Some(d),
                        op,
                        space: Space::Global,
                        addr,
                        operand: v,
                        ty,
                        ord,
                        scope,
                    },
                    at,
                );
                Operand::Reg(d)
            }
            "atomic_work_item_fence" | "atomic_thread_fence" => {
                let spaces = if base == "atomic_work_item_fence" {
                    let s = self.flags()?;
                    self.c.expect_punct(",")?;
                    s
                } else {
                    SpaceSet::BOTH
                };
                let (m, mat) = self.mo()?;
                let ord = match m {
                    Mo::Acquire => FenceOrd::Acquire,
                    Mo::Release => FenceOrd::Release,
                    Mo::AcqRel => FenceOrd::AcqRel,
                    Mo::SeqCst => FenceOrd::SeqCst,
                    Mo::Relaxed => return Err(self.b.error(mat, "a relaxed fence orders nothing")),
                };
                let scope = if base == "atomic_work_item_fence" {
                    self.c.expect_punct(",")?;
                    self.scope()?
                } else {
                    Scope::Device
                };
                self.b.emit(Inst::Fence { ord, scope, spaces }, at);
                Operand::Imm(0)
            }
            "work_group_barrier" | "barrier" => {
                let spaces = self.flags()?;
                let scope = if base == "work_group_barrier" && self.c.eat_punct(",") {
                    self.scope()?
                } else {
                    Scope::WorkGroup
                };
                self.b.emit(
                    Inst::Barrier {
                        kind: BarrierKind::WorkGroup,
                        spaces,
                        scope,
                    },
                    at,
                );
                Operand::Imm(0)
            }
            _ => {
                return Err(self.b.error(
                    at,
                    format!("unknown function `{name}` (atomic_load/store/exchange/compare_exchange_strong/fetch_add/... [_explicit], atomic_work_item_fence, work_group_barrier)"),
                ))
            }
        };
        self.c.expect_punct(")")?;
        Ok(out)
    }
}

fn rmw_ord(m: Mo) -> RmwOrd {
    match m {
        Mo::Relaxed => RmwOrd::Relaxed,
        Mo::Acquire => RmwOrd::Acquire,
        Mo::Release => RmwOrd::Release,
        Mo::AcqRel => RmwOrd::AcqRel,
        Mo::SeqCst => RmwOrd::SeqCst,
    }
}
