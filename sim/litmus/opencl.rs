//! The OpenCL / C dialect (herd style): one C function per thread,
//! `P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* y) { ... }` (`@cta 0,gpu 0` is accepted
//! too; without a placement, thread `Pi` gets work-group `i`).
//!
//! This file reads a thread's header (name, placement, parameters); its body is C, parsed and lowered
//! by the C front end that OpenCL C kernels use ([`crate::cfront`]), so a thread has the same
//! statements, expressions and builtins as a kernel: declarations, assignments and compound
//! assignments, `if`/`else`, `while`, `do`, `for`, `switch`, `break`, `continue`, `return`, labels and
//! `goto`, `?:`, short-circuit `&&`/`||`, pointer arithmetic (`y + r0`, `y[r0]`), the OpenCL 2.0
//! atomics (`atomic_*[_explicit]`, the forms without `_explicit` and an omitted scope being seq_cst
//! at device scope), `atomic_work_item_fence`, `atomic_thread_fence` (device scope),
//! `work_group_barrier(flags[, scope])`/`barrier(flags)` (the rule of [`gpumemsim_core::barrier`]), and
//! compare-exchange whose expected argument is a variable (`&e`) or a location or pointer (C11: on
//! failure the expected object receives the value found, with a plain store).
//!
//! A parameter `global atomic_int* x` is a pointer to location `x`; a location that is not a
//! parameter is reachable by its name too, and a register initialised to a location's address in
//! the init block (`P0:r1 = x`) is a pointer to it. The lowering keeps herd's reading of a thread
//! (`cfront::lower`, `Mode::Litmus`): statements in source order, loops tested at the top, one
//! returning instruction per atomic call (a discarded result too), a value loaded into a variable
//! loaded straight into its register, an undeclared name a register, `&x` of a location the
//! location.
//!
//! Parameters qualified `local` are work-group-local locations (their accesses become local in
//! `test.rs`), `global` ones global; without a qualifier, the init block's space (global by default).
//!
//! Not supported (an error that says so): arrays in private memory, `memory_order_consume`.

use super::lex::{Cursor, Tok};
use super::ptx::placement;
use super::test::{Location, RegInit, Thread, ThreadBuilder};
use super::LitmusError;
use crate::cfront::lower::{Binding, Lower, Mode, Sink};
use crate::cfront::types::{PtrTy, STy, VTy};
use crate::cfront::{CError, Dialect};
use crate::ir::*;
use crate::text::Located;

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
    text: &str,
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
        let mut params: Vec<(String, usize, PtrTy)> = Vec::new();
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
                let local = words.iter().any(|w| w == "local" || w == "__local");
                // `local`/`global` name the location's address space (OpenCL 2.0 s6.5); a name
                // declared in both spaces by different threads is two objects (`location_in_space`).
                let l = if local {
                    b.location_in_space(&pname, Space::Local, pat)?
                } else if words.iter().any(|w| w == "global" || w == "__global") {
                    b.location_in_space(&pname, Space::Global, pat)?
                } else {
                    b.location(&pname, nat)?
                };
                let ty_words: Vec<String> = words
                    .iter()
                    .filter(|w| !["local", "__local", "global", "__global"].contains(&w.as_str()))
                    .cloned()
                    .collect();
                let ty = if ty_words.is_empty() {
                    b.access_ty(l, None, nat)?
                } else {
                    b.access_ty(l, Some(ty_of(&ty_words)), nat)?
                };
                let has = |w: &str| words.iter().any(|x| x == w);
                let ptr = PtrTy {
                    elem: STy::of_ir(ty),
                    space: if local { Space::Local } else { Space::Global },
                    atomic: words.iter().any(|w| w.starts_with("atomic_")),
                    volatile: has("volatile"),
                };
                params.push((pname, l, ptr));
                if c.eat_punct(")") {
                    break;
                }
                c.expect_punct(",")?;
            }
        }
        let body = body_text(c, text)?;
        let thread_regs: Vec<(String, RegInit)> = reg_init
            .iter()
            .filter(|i| i.0 == name)
            .map(|i| (i.1.clone(), i.2))
            .collect();
        threads.push(lower_body(b, c.file, &body, &params, &thread_regs)?);
    }
    if threads.is_empty() {
        return Err(c.error("a thread (`P0(global atomic_int* x) { ... }`)"));
    }
    Ok(threads)
}

/// A thread body: its text (from `{` through the matching `}`) and where it starts; the cursor moves
/// past it.
struct BodyText {
    text: String,
    start: SrcLoc,
    end: SrcLoc,
}

fn body_text(c: &mut Cursor, text: &str) -> Result<BodyText, LitmusError> {
    if !c.is_punct("{") {
        return Err(c.error("`{` (the thread's body)"));
    }
    let start = c.loc();
    let mut depth = 0usize;
    loop {
        match c.next().map(|t| (&t.tok, t.loc)) {
            Some((Tok::Punct("{"), _)) => depth += 1,
            Some((Tok::Punct("}"), at)) => {
                depth -= 1;
                if depth == 0 {
                    let (s, e) = (byte_at(text, start), byte_at(text, at) + 1);
                    return Ok(BodyText {
                        text: text[s..e].to_string(),
                        start,
                        end: at,
                    });
                }
            }
            Some(_) => {}
            None => {
                return Err(c.error_at(start, "this thread's body is never closed: expected `}`"))
            }
        }
    }
}

/// The byte offset of a 1-based line and (character) column.
fn byte_at(text: &str, at: SrcLoc) -> usize {
    let mut off = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == at.line as usize {
            return off
                + line
                    .char_indices()
                    .nth(at.col as usize - 1)
                    .map(|(b, _)| b)
                    .unwrap_or(line.len());
        }
        off += line.len();
    }
    text.len()
}

/// Lowers a thread's body with the C front end into its builder's IR.
fn lower_body(
    mut b: ThreadBuilder,
    file: &str,
    body: &BodyText,
    params: &[(String, usize, PtrTy)],
    regs: &[(String, RegInit)],
) -> Result<Thread, LitmusError> {
    let err = |e: CError| {
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line: e.loc.line,
            col: e.loc.col,
            message: e.message,
        })
    };
    let lexed = crate::cfront::lexer::lex(&body.text, body.start).map_err(err)?;
    let mut p = crate::cfront::parser::Parser::new(lexed.tokens, Dialect::OpenCl);
    p.expect("{").map_err(err)?;
    let stmts = p.block_body().map_err(err)?;
    // Registers the init block sets: numbers, or pointers to a location.
    let inits: Vec<(String, Reg, VTy)> = regs
        .iter()
        .map(|(r, init)| {
            let ty = match *init {
                RegInit::Address(loc) | RegInit::Element { loc, .. } => VTy::Ptr(PtrTy {
                    elem: STy::of_ir(b.locations[loc].ty),
                    space: Space::Global,
                    atomic: false,
                    volatile: false,
                }),
                RegInit::Value(_) => VTy::Scalar(STy::I32),
            };
            (r.clone(), b.reg(r), ty)
        })
        .collect();
    let mut sink = ThreadSink { b: &mut b };
    let mut l = Lower::new(&mut sink, Dialect::OpenCl, Mode::Litmus);
    for (r, reg, ty) in inits {
        l.bind(&r, Binding::Var { reg, ty });
    }
    for (name, index, ty) in params {
        l.bind(
            name,
            Binding::Location {
                index: *index,
                ty: *ty,
            },
        );
    }
    l.body(&stmts, body.end).map_err(err)?;
    drop(l);
    b.finish()
}

/// Lowered code goes into the thread's builder: variables are the registers of their names.
struct ThreadSink<'t, 'a> {
    b: &'t mut ThreadBuilder<'a>,
}

impl Sink for ThreadSink<'_, '_> {
    fn var_reg(&mut self, name: &str, ty: Ty) -> Reg {
        let r = self.b.reg(name);
        self.b.set_ty(r, ty);
        r
    }

    fn temp(&mut self, ty: Ty) -> Reg {
        let r = self.b.temp();
        self.b.set_ty(r, ty);
        r
    }

    fn emit(&mut self, inst: Inst, at: SrcLoc) {
        self.b.emit(inst, at);
    }

    fn emitted(&self) -> usize {
        self.b.t.insts.len()
    }

    fn fresh_label(&mut self) -> String {
        self.b.fresh_label()
    }

    fn define_label(&mut self, name: &str, at: SrcLoc) -> Result<(), CError> {
        self.b.define_label(name, at).map_err(|e| match e {
            LitmusError::Syntax(Located { message, .. }) => CError::new(at, message),
            other => CError::new(at, other.to_string()),
        })
    }

    fn branch(&mut self, label: &str, cond: Option<(Reg, bool)>, at: SrcLoc) {
        self.b.branch(label, cond, at);
    }

    fn location_addr(&mut self, l: usize) -> Reg {
        self.b.addr_reg(l)
    }

    fn undefined(&mut self, what: &str, at: SrcLoc) -> bool {
        self.b.t.undefined.push((at, what.to_string()));
        true
    }

    fn location(&mut self, name: &str) -> Option<(usize, Ty)> {
        self.b
            .find_location(name)
            .map(|l| (l, self.b.locations[l].ty))
    }
}
