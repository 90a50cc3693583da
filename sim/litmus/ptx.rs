//! The PTX dialect (herd / Dat3M style, and herdtools7's `GPU_PTX`): a table whose first row names
//! the threads with their placement (`P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`, or the names alone and a
//! scope tree after the program, `scope_tree.rs`) and whose further rows hold one instruction (or
//! label, or label and instruction) per thread, columns separated by `|`, rows ended by `;`.
//!
//! Memory instructions (`ld`, `st`, `atom`, `red`) are in `ptx_mem.rs`, fences and barriers
//! (`fence`, `membar`, `bar`, `barrier`) in `ptx_sync.rs`. Here: the table, placements, labels `L:`, predicates (`setp.cmp.type p, a, b` and
//! `@p`/`@!p` before any instruction: a predicated branch is a conditional branch, any other
//! predicated instruction is skipped by a branch around it, which is what predication means for the
//! memory model: a control dependency), `mov r, v` (`mov r, x` takes x's address), `add sub mul and
//! or xor shl shr r, a, b`, `not r, a`, `cvt.dtype.atype d, a`, `beq a, b, L`, `bne a, b, L` (and
//! Dat3M's `blt ble bgt bge`), `goto L`, `bra L`.
//!
//! A location operand is `x`, `[x]`, `[x+8]`, or `[r]`/`[r+8]` with `r` holding an address: an
//! initial address (`0:r=x`, `0:r=y[1]`) or one computed from it with `mov`, `add` and `sub`;
//! such accesses are checked at run time against the location's bounds (`test.rs`).
//! Default type `.s32`, or the location's type when it has one.

use super::capability::Capability;
use super::lex::{Cursor, Tok, Token};
use super::parse::RegInitEntry;
use super::ptx_mem::{self, dest, end, split, value, PtxTy};
use super::ptx_sync;
use super::test::{Location, Placement, Thread, ThreadBuilder};
use super::LitmusError;
use crate::ir::*;

/// One cell of the table: its tokens, where it starts, and where its separator (`|` or `;`) is.
struct Cell<'a> {
    toks: &'a [Token],
    loc: SrcLoc,
    end: SrcLoc,
}

/// Is the cursor at the start of the final condition, or of the scope tree or memory map before it
/// (`scope_tree.rs`)?
fn at_condition(c: &Cursor) -> bool {
    super::scope_tree::at_section(c)
        || super::scope_tree::at_space(c)
        || c.is_ident("exists")
        || c.is_ident("forall")
        || c.is_ident("locations")
        || c.is_ident("filter")
        || (c.is_punct("~") && matches!(c.peek_at(1), Some(Tok::Ident(s)) if s == "exists"))
}

/// Parses the thread table; the init block's registers are looked up by thread name.
pub fn parse_threads(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    reg_init: &[RegInitEntry],
) -> Result<Vec<Thread>, LitmusError> {
    // Split into rows of cells.
    let mut rows: Vec<(SrcLoc, Vec<Cell>)> = Vec::new();
    while !c.at_end() && !at_condition(c) {
        let row_loc = c.loc();
        let mut cells = Vec::new();
        let mut start = c.pos;
        let mut cell_loc = c.loc();
        loop {
            match c.peek() {
                None => return Err(c.error("`;` at the end of the table row")),
                Some(Tok::Punct("|")) | Some(Tok::Punct(";")) => {
                    cells.push(Cell {
                        toks: &c.toks[start..c.pos],
                        loc: cell_loc,
                        end: c.loc(),
                    });
                    let end = c.is_punct(";");
                    c.next();
                    start = c.pos;
                    cell_loc = c.loc();
                    if end {
                        break;
                    }
                }
                Some(_) => {
                    c.next();
                }
            }
        }
        rows.push((row_loc, cells));
    }
    let Some((_, head)) = rows.first() else {
        return Err(c.error("the thread table (`P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`)"));
    };
    if head.len() > super::test::MAX_THREADS {
        return Err(c.error_at(
            head[super::test::MAX_THREADS].loc,
            format!("more than {} threads in one test", super::test::MAX_THREADS),
        ));
    }
    // Header: thread names and placement.
    let mut names: Vec<(String, Placement, SrcLoc)> = Vec::new();
    for (i, cell) in head.iter().enumerate() {
        let mut cc = Cursor::new(cell.toks, c.file, cell.end);
        let (name, at) = cc.ident("a thread name (`P0`)")?;
        // herd's GPU_PTX tests name threads T0, T1, ...: the same threads.
        let name = match name.strip_prefix('T') {
            Some(n) if n.parse::<u32>().is_ok() => format!("P{n}"),
            _ => name,
        };
        if !name.starts_with('P') || name[1..].parse::<u32>().is_err() {
            return Err(cc.error_at(
                at,
                format!("thread names are P0, P1, ... (or T0, T1, ...); found `{name}`"),
            ));
        }
        if names.iter().any(|n| n.0 == name) {
            return Err(cc.error_at(at, format!("thread {name} is declared twice")));
        }
        let place = placement(&mut cc, i as u32)?;
        if !cc.at_end() {
            return Err(cc.error("`|` or `;` after the thread's placement"));
        }
        names.push((name, place, at));
    }
    let n = names.len();
    let mut threads = Vec::with_capacity(n);
    for (ti, (name, place, at)) in names.into_iter().enumerate() {
        let mut b = ThreadBuilder::new(c.file, locations, name.clone(), place, at);
        b.init_regs(reg_init)?;
        for (row_loc, cells) in &rows[1..] {
            if cells.len() != n {
                return Err(b.error(
                    *row_loc,
                    format!(
                        "this row has {} columns, the table has {n} threads",
                        cells.len()
                    ),
                ));
            }
            cell(&mut b, &cells[ti], c.file)?;
        }
        let mut t = b.finish()?;
        super::ptx_sync::resolve_registers(&mut t, c.file)?;
        threads.push(t);
    }
    Ok(threads)
}

/// `@cta N, gpu M` (also `wg`, `dev`); without it, thread `i` gets work-group `i` of device 0.
pub fn placement(cc: &mut Cursor, default_cta: u32) -> Result<Placement, LitmusError> {
    let mut p = Placement {
        cta: default_cta,
        device: 0,
        placed: false,
    };
    if cc.eat_punct("@") {
        p.placed = true;
        loop {
            let (key, kat) = cc.ident("`cta`, `wg`, `gpu` or `dev`")?;
            let (v, vat) = cc.int("a number")?;
            let v = u32::try_from(v)
                .map_err(|_| cc.error_at(vat, "placement numbers are 0, 1, ..."))?;
            match key.as_str() {
                "cta" | "wg" => p.cta = v,
                "gpu" | "dev" => p.device = v,
                "sg" | "warp" => return Err(cc.error_at(
                    kat,
                    "sub-group placement is not supported: each litmus thread runs in its own warp",
                )),
                _ => {
                    return Err(cc.error_at(
                        kat,
                        format!("unknown placement `{key}` (allowed: cta, wg, gpu, dev)"),
                    ))
                }
            }
            if !cc.eat_punct(",") {
                break;
            }
        }
    }
    Ok(p)
}

/// One table cell: empty, a label, a label and an instruction, or an instruction.
fn cell(b: &mut ThreadBuilder, cell: &Cell, file: &str) -> Result<(), LitmusError> {
    let mut c = Cursor::new(cell.toks, file, cell.end);
    if c.at_end() {
        return Ok(());
    }
    if let (Some(Tok::Ident(l)), Some(Tok::Punct(":"))) = (c.peek(), c.peek_at(1)) {
        let at = c.loc();
        b.define_label(l, at)?;
        c.next();
        c.next();
        if c.at_end() {
            return Ok(());
        }
    }
    // `@p` / `@!p`: predication.
    if c.eat_punct("@") {
        let negated = c.eat_punct("!");
        let (p, pat) = c.ident("a predicate register after `@`")?;
        let Some(pred) = b.t.reg_named(&p) else {
            return Err(b.error(pat, format!("predicate {p} is not set before (setp)")));
        };
        if matches!(c.peek(), Some(Tok::Ident(m)) if m == "bra" || m.starts_with("bra.")) {
            let (_, at) = c.ident("bra")?;
            let (label, _) = c.ident("a label")?;
            end(&c)?;
            b.branch(&label, Some((pred, !negated)), at);
            return Ok(());
        }
        // Skip the instruction when the predicate does not hold.
        let skip = b.fresh_label();
        b.branch(&skip, Some((pred, negated)), pat);
        instruction(b, &mut c)?;
        return b.define_label(&skip, pat);
    }
    instruction(b, &mut c)
}

fn instruction(b: &mut ThreadBuilder, c: &mut Cursor) -> Result<(), LitmusError> {
    let (m, at) = c.ident("an instruction")?;
    if m == "cvt" || m.starts_with("cvt.") {
        // Two types (destination, source): not the one-type qualifiers `split` reads.
        return cvt(b, c, &m, at);
    }
    let (op, q) = split(b, &m, at)?;
    // Proxy fences, and accesses through the surface, texture and constant proxies (Dat3M's `cold`
    // is a constant load): the machine and the model have the generic proxy only.
    let other_proxy = matches!(
        op.as_str(),
        "suld" | "sust" | "sured" | "suatom" | "tld" | "tld4" | "tex" | "cold"
    ) || (matches!(op.as_str(), "fence" | "membar") && q.has("proxy"));
    if other_proxy {
        return ptx_mem::pending_operands(
            b,
            c,
            (
                at,
                Capability::Proxies,
                format!("{m}: the machine and the model have the generic proxy only"),
            ),
        );
    }
    match op.as_str() {
        "ld" | "st" => ptx_mem::load_store(b, c, &op, &q, at),
        "atom" | "red" => ptx_mem::atomic(b, c, &op, &q, at),
        "fence" | "membar" => ptx_sync::fence(b, c, &op, &q, at),
        "bar" | "barrier" => ptx_sync::barrier(b, c, &op, &q, at),
        "mov" => {
            plain(b, &q, &op, &[])?;
            let dst = dest(b, c)?;
            c.expect_punct(",")?;
            // `mov r, x` takes the address of location x.
            if let Some(Tok::Ident(name)) = c.peek() {
                if b.t.reg_named(name).is_none() {
                    if let Some(l) = b.find_location(name) {
                        c.next();
                        end(c)?;
                        let a = b.addr_reg(l);
                        b.set_ty(dst, Ty::U64);
                        b.emit(Inst::Mov { dst, src: Operand::Reg(a) }, at);
                        b.set_pointer(dst, Some(l));
                        return Ok(());
                    }
                }
            }
            let src = value(b, c)?;
            end(c)?;
            b.set_ty(dst, ty_of(&q).unwrap_or(Ty::I32));
            b.emit(Inst::Mov { dst, src }, at);
            // A copy of an address is an address.
            if let Operand::Reg(s) = src {
                let l = b.pointer_into(s);
                b.set_pointer(dst, l);
                if l.is_some() {
                    b.set_ty(dst, Ty::U64);
                }
            }
            Ok(())
        }
        "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "shr" | "rem" | "div" => {
            plain(b, &q, &op, &["lo"])?;
            let (dname, _) = c.ident("a destination register")?;
            c.expect_punct(",")?;
            let a = value(b, c)?;
            c.expect_punct(",")?;
            let bb = value(b, c)?;
            end(c)?;
            let ty = ty_of(&q).unwrap_or(Ty::I32);
            let aop = match op.as_str() {
                "add" => AluOp::Add,
                "sub" => AluOp::Sub,
                "mul" => AluOp::Mul,
                "and" => AluOp::And,
                "or" => AluOp::Or,
                "xor" => AluOp::Xor,
                "shl" => AluOp::Shl,
                "shr" => AluOp::Shr,
                "rem" => AluOp::Rem,
                _ => AluOp::Div,
            };
            // Address arithmetic: an address plus or minus an offset is an address into the same
            // location (checked when used).
            let ptr = |o: Operand| match o {
                Operand::Reg(r) => b.pointer_into(r),
                Operand::Imm(_) => None,
            };
            let derived = match (aop, ptr(a), ptr(bb)) {
                (AluOp::Add, Some(l), None) | (AluOp::Add, None, Some(l)) => Some(l),
                (AluOp::Sub, Some(l), None) => Some(l),
                _ => None,
            };
            let dst = b.reg(&dname);
            let ty = if derived.is_some() { Ty::U64 } else { ty };
            b.set_ty(dst, ty);
            b.set_pointer(dst, derived);
            b.emit(Inst::Alu { op: aop, ty, dst, a, b: bb }, at);
            Ok(())
        }
        "not" => {
            plain(b, &q, &op, &[])?;
            let dst = dest(b, c)?;
            c.expect_punct(",")?;
            let a = value(b, c)?;
            end(c)?;
            let ty = ty_of(&q).unwrap_or(Ty::I32);
            b.set_ty(dst, ty);
            b.emit(
                Inst::Alu {
                    op: AluOp::Xor,
                    ty,
                    dst,
                    a,
                    b: Operand::Imm(u64::MAX),
                },
                at,
            );
            Ok(())
        }
        "setp" => setp(b, c, &q, at),
        // `beq a, b, L` and `bne`, and Dat3M's `blt ble bgt bge` (signed for signed registers):
        // either operand a register or a number.
        "beq" | "bne" | "blt" | "ble" | "bgt" | "bge" => {
            plain(b, &q, &op, &[])?;
            // A register nothing has written holds 0 (herd's default).
            let x = value(b, c)?;
            c.expect_punct(",")?;
            let y = value(b, c)?;
            c.expect_punct(",")?;
            let (label, _) = c.ident("a label")?;
            end(c)?;
            let t = b.temp();
            let ty = [x, y]
                .into_iter()
                .find_map(|o| match o {
                    Operand::Reg(r) => Some(b.t.regs[r as usize].ty),
                    Operand::Imm(_) => None,
                })
                .unwrap_or(Ty::I32);
            let (cmp, taken) = match op.as_str() {
                "beq" => (CmpOp::Eq, true),
                "bne" => (CmpOp::Eq, false),
                "blt" => (CmpOp::Lt, true),
                "ble" => (CmpOp::Le, true),
                "bgt" => (CmpOp::Gt, true),
                _ => (CmpOp::Ge, true),
            };
            b.emit(
                Inst::Cmp {
                    op: cmp,
                    ty,
                    dst: t,
                    a: x,
                    b: y,
                },
                at,
            );
            b.branch(&label, Some((t, taken)), at);
            Ok(())
        }
        "goto" | "bra" => {
            plain(b, &q, &op, &["uni"])?;
            let (label, _) = c.ident("a label")?;
            end(c)?;
            b.branch(&label, None, at);
            Ok(())
        }
        _ => Err(b.error(
            at,
            format!(
                "unknown instruction `{op}` (allowed: ld, st, atom, red, fence, membar, bar, barrier, mov, cvt, add, sub, mul, div, rem, and, or, xor, not, shl, shr, setp, beq, bne, blt, ble, bgt, bge, bra, goto)"
            ),
        )),
    }
}

/// The IR type of an arithmetic instruction's type qualifier.
fn ty_of(q: &ptx_mem::Quals) -> Option<Ty> {
    q.ty.and_then(|(t, _)| t.ir())
}

/// Arithmetic takes a 32/64-bit integer or f32 type and the listed words, nothing else.
fn plain(
    b: &ThreadBuilder,
    q: &ptx_mem::Quals,
    op: &str,
    words: &[&str],
) -> Result<(), LitmusError> {
    q.only(b, op, words)?;
    if let Some((_, at)) = q.sem.as_ref().map(|(s, l)| (s, *l)) {
        return Err(b.error(at, format!("{op} takes no memory order")));
    }
    if let Some((t, at)) = q.ty {
        if t.ir().is_none() {
            return Err(b.error(
                at,
                format!(
                    "{op}.{}: arithmetic types are .b32 .u32 .s32 .b64 .u64 .s64 .f32",
                    ptx_mem::ptx_ty_name(t)
                ),
            ));
        }
    }
    Ok(())
}

/// `cvt{.rnd}.dtype.atype d, a` (PTX ISA, "cvt"): between the 32- and 64-bit integer types
/// (narrowing keeps the low bits, widening extends by the source's signedness) and to and from
/// `.f32`, with the machine's roundings: to nearest even into f32 (`.rn`, also when no rounding is
/// written), toward zero out of it (`.rzi`, saturating; NaN gives 0). Other roundings, `.sat`,
/// `.ftz`, and f16/f64/8- and 16-bit types are refused with the word that is not modelled.
fn cvt(b: &mut ThreadBuilder, c: &mut Cursor, m: &str, at: SrcLoc) -> Result<(), LitmusError> {
    let mut types: Vec<Ty> = Vec::new();
    let mut round: Option<&str> = None;
    for w in m.split('.').skip(1) {
        let ty = PtxTy::parse(w)
            .filter(|t| *t != PtxTy::F64)
            .and_then(|t| t.ir());
        match (w, ty) {
            ("rn" | "rz" | "rm" | "rp" | "rni" | "rzi" | "rmi" | "rpi", _) if round.is_none() => {
                round = Some(w)
            }
            (_, Some(t)) if types.len() < 2 => types.push(t),
            _ => {
                return Err(b.error(
                    at,
                    format!(
                        "`.{w}` in {m}: cvt takes .dtype.atype among .b32 .u32 .s32 .b64 .u64 .s64 \
                         .f32, with .rn into f32 or .rzi out of it (other roundings, .sat and \
                         .ftz are not modelled)"
                    ),
                ))
            }
        }
    }
    let [to, from] = types[..] else {
        return Err(b.error(
            at,
            format!("{m}: cvt needs two types, .dtype.atype (cvt.s64.s32)"),
        ));
    };
    // The rounding each modelled conversion has (`None`: integer to integer, no rounding word).
    let modelled = match (from == Ty::F32, to == Ty::F32) {
        (false, false) => Some(None),
        (false, true) => Some(Some("rn")),
        (true, false) => Some(Some("rzi")),
        (true, true) => None,
    };
    if !modelled.is_some_and(|r| round.is_none() || round == r) {
        return Err(b.error(
            at,
            format!(
                "{m}: the modelled conversions are integer to integer, .rn into f32 and .rzi out of it"
            ),
        ));
    }
    let (dname, _) = c.ident("a destination register")?;
    c.expect_punct(",")?;
    let Operand::Reg(src) = value(b, c)? else {
        return Err(b.error(at, format!("{m} converts a register, not a number")));
    };
    end(c)?;
    // An address converted between 64-bit types is still the address (a 32-bit one is not).
    let ptr = b
        .pointer_into(src)
        .filter(|_| from.width() == Width::B64 && to.width() == Width::B64);
    let dst = b.reg(&dname);
    b.set_ty(dst, to);
    b.set_pointer(dst, ptr);
    b.emit(Inst::Cvt { dst, src, from, to }, at);
    Ok(())
}

/// `setp.cmp.type p, a, b`.
fn setp(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    q: &ptx_mem::Quals,
    at: SrcLoc,
) -> Result<(), LitmusError> {
    let Some((t, tat)) = q.ty else {
        return Err(b.error(at, "setp needs a type (setp.eq.s32 p, a, b)"));
    };
    let Some(ty) = t.ir().filter(|_| t != PtxTy::F64) else {
        return Err(b.error(tat, "setp types are .b32 .u32 .s32 .b64 .u64 .s64 .f32"));
    };
    let mut cmp = None;
    for (w, wat) in &q.words {
        let (op, unsigned) = match w.as_str() {
            "eq" => (CmpOp::Eq, false),
            "ne" => (CmpOp::Ne, false),
            "lt" => (CmpOp::Lt, false),
            "le" => (CmpOp::Le, false),
            "gt" => (CmpOp::Gt, false),
            "ge" => (CmpOp::Ge, false),
            "lo" => (CmpOp::Lt, true),
            "ls" => (CmpOp::Le, true),
            "hi" => (CmpOp::Gt, true),
            "hs" => (CmpOp::Ge, true),
            "ftz" => continue,
            _ => {
                return Err(b.error(
                    *wat,
                    format!("`.{w}`: setp compares with eq ne lt le gt ge lo ls hi hs (no boolean combination)"),
                ))
            }
        };
        if cmp.is_some() {
            return Err(b.error(*wat, "setp takes one comparison"));
        }
        cmp = Some((op, unsigned));
    }
    let Some((op, unsigned)) = cmp else {
        return Err(b.error(at, "setp needs a comparison (.eq, .ne, .lt, ...)"));
    };
    // `lo`, `ls`, `hi`, `hs` compare unsigned whatever the type says.
    let ty = match (unsigned, ty) {
        (true, Ty::I32) => Ty::U32,
        (true, Ty::I64) => Ty::U64,
        (_, t) => t,
    };
    let dst = dest(b, c)?;
    if c.is_punct("|") {
        return Err(c.error_at(c.loc(), "setp with two destinations (p|q) is not supported"));
    }
    c.expect_punct(",")?;
    let a = value(b, c)?;
    c.expect_punct(",")?;
    let bb = value(b, c)?;
    end(c)?;
    b.set_ty(dst, Ty::U32);
    b.emit(
        Inst::Cmp {
            op,
            ty,
            dst,
            a,
            b: bb,
        },
        at,
    );
    Ok(())
}
