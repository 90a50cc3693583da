//! The PTX dialect (herd / Dat3M style): a table whose first row names the threads with their
//! placement (`P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;`) and whose further rows hold one instruction (or
//! label) per thread, columns separated by `|`, rows ended by `;`.
//!
//! Instructions, with qualifiers in any order (`ld.global.acquire.gpu.u32` = `ld.acquire.gpu`):
//! - `ld[.weak|.relaxed.S|.acquire.S|.volatile][.type] r, LOC` and `st[.weak|.relaxed.S|.release.S|
//!   .volatile][.type] LOC, v`, scope S ∈ `cta`, `gpu`, `sys` (required for relaxed, acquire and
//!   release; `volatile` is relaxed at `sys`, the PTX rule);
//! - `atom[.sem][.S].op[.type] r, LOC, a` (`cas`: `r, LOC, expected, new`) and `red[.sem][.S].op LOC, a`
//!   with op ∈ `add`/`plus`, `sub`, `exch`, `cas`, `and`, `or`, `xor`, `min`, `max`, `inc`, `dec`;
//!   sem ∈ `relaxed` (default), `acquire`, `release`, `acq_rel`; scope default `gpu` (PTX rule);
//! - `fence.sc.S`, `fence.acq_rel.S`, `membar.cta|gl|sys` (= `fence.sc` at `cta|gpu|sys`, as in PTX
//!   ISA 6.0+), `bar.sync [id]` / `bar.cta.sync [id]` / `barrier.sync [id]` (work-group barrier: acq_rel
//!   at work_group scope on both address spaces);
//! - `mov r, v`, `add|sub|mul|and|or|xor r, a, b`, labels `L:`, `beq a, b, L`, `bne a, b, L`,
//!   `goto L` / `bra L`.
//!
//! LOC is a location `x`, `[x]`, or `[r]` with `r` initialised to a location's address (`0:r=x`).
//! Types: `.s32` (the default), `.u32`, `.b32`, `.s64`, `.u64`, `.b64`.
//!
//! Not supported (an error that says so): `.shared` locations, barriers with a thread count,
//! predicates (`@p`), `.cluster` scope.

use super::lex::{show, Cursor, Tok, Token};
use super::test::{Location, RegInit, Thread, ThreadBuilder};
use super::LitmusError;
use crate::ir::*;

/// One cell of the table: its tokens and where it starts.
struct Cell<'a> {
    toks: &'a [Token],
    loc: SrcLoc,
}

/// Is the cursor at the start of the final condition?
fn at_condition(c: &Cursor) -> bool {
    c.is_ident("exists")
        || c.is_ident("forall")
        || c.is_ident("locations")
        || c.is_ident("filter")
        || (c.is_punct("~") && matches!(c.peek_at(1), Some(Tok::Ident(s)) if s == "exists"))
}

/// Parses the thread table; `reg_init[i]` are the initial registers of the init block for thread
/// name `Pi` (looked up by name).
pub fn parse_threads(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    reg_init: &[(String, String, RegInit, SrcLoc)],
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
    // Header: thread names and placement.
    let mut names: Vec<(String, u32, SrcLoc)> = Vec::new();
    for (i, cell) in head.iter().enumerate() {
        let mut cc = Cursor::new(cell.toks, c.file, cell.loc);
        let (name, at) = cc.ident("a thread name (`P0`)")?;
        if !name.starts_with('P') || name[1..].parse::<u32>().is_err() {
            return Err(cc.error_at(at, format!("thread names are P0, P1, ...; found `{name}`")));
        }
        if names.iter().any(|n| n.0 == name) {
            return Err(cc.error_at(at, format!("thread {name} is declared twice")));
        }
        let cta = placement(&mut cc, i as u32)?;
        if !cc.at_end() {
            return Err(cc.error("`|` or `;` after the thread's placement"));
        }
        names.push((name, cta, at));
    }
    let n = names.len();
    let mut threads = Vec::with_capacity(n);
    for (ti, (name, cta, at)) in names.into_iter().enumerate() {
        let mut b = ThreadBuilder::new(c.file, locations, name.clone(), cta, at);
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
            instruction(&mut b, &cells[ti], c.file)?;
        }
        threads.push(b.finish()?);
    }
    Ok(threads)
}

/// `@cta N, gpu M` (or `@wg N, dev M`); without it, thread `i` gets work-group `i`.
pub fn placement(cc: &mut Cursor, default_cta: u32) -> Result<u32, LitmusError> {
    let mut cta = default_cta;
    if cc.eat_punct("@") {
        loop {
            let (key, kat) = cc.ident("`cta`, `wg`, `gpu` or `dev`")?;
            let (v, vat) = cc.int("a number")?;
            let v = u32::try_from(v)
                .map_err(|_| cc.error_at(vat, "placement numbers are 0, 1, ..."))?;
            match key.as_str() {
                "cta" | "wg" => cta = v,
                "gpu" | "dev" => {
                    if v != 0 {
                        return Err(cc.error_at(
                            vat,
                            "only one GPU is modelled: every thread must be on gpu/dev 0",
                        ));
                    }
                }
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
    Ok(cta)
}

#[derive(Default)]
struct Quals {
    sem: Option<(String, SrcLoc)>,
    scope: Option<Scope>,
    ty: Option<Ty>,
    op: Option<(String, SrcLoc)>,
    other: Vec<(String, SrcLoc)>,
}

fn scope_of(s: &str) -> Option<Scope> {
    match s {
        "cta" => Some(Scope::WorkGroup),
        "gpu" => Some(Scope::Device),
        "sys" => Some(Scope::System),
        _ => None,
    }
}

fn ty_of(s: &str) -> Option<Ty> {
    match s {
        "s32" => Some(Ty::I32),
        "u32" | "b32" => Some(Ty::U32),
        "s64" => Some(Ty::I64),
        "u64" | "b64" => Some(Ty::U64),
        _ => None,
    }
}

const SEMS: &[&str] = &[
    "weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile",
];
const OPS: &[&str] = &[
    "add", "plus", "sub", "exch", "cas", "and", "or", "xor", "min", "max", "inc", "dec",
];

/// Splits a mnemonic into opcode and classified qualifiers (each with its own column).
fn split(b: &ThreadBuilder, m: &str, at: SrcLoc) -> Result<(String, Quals), LitmusError> {
    let mut parts = m.split('.');
    let op = parts.next().unwrap_or_default().to_string();
    let mut q = Quals::default();
    let mut col = at.col + op.chars().count() as u32 + 1;
    for p in parts {
        let ploc = SrcLoc { line: at.line, col };
        col += p.chars().count() as u32 + 1;
        if SEMS.contains(&p) {
            if q.sem.is_some() {
                return Err(b.error(ploc, format!("second memory-order qualifier `.{p}`")));
            }
            q.sem = Some((p.to_string(), ploc));
        } else if let Some(s) = scope_of(p) {
            if q.scope.is_some() {
                return Err(b.error(ploc, format!("second scope qualifier `.{p}`")));
            }
            q.scope = Some(s);
        } else if let Some(t) = ty_of(p) {
            q.ty = Some(t);
        } else if OPS.contains(&p) && (op == "atom" || op == "red") {
            q.op = Some((p.to_string(), ploc));
        } else if p == "global" {
        } else if p == "shared" {
            return Err(b.error(
                ploc,
                "`.shared` locations are not supported in litmus tests (locations are global memory)",
            ));
        } else {
            q.other.push((p.to_string(), ploc));
        }
    }
    Ok((op, q))
}

fn reject_other(b: &ThreadBuilder, q: &Quals, op: &str, allowed: &str) -> Result<(), LitmusError> {
    if let Some((p, at)) = q.other.first() {
        return Err(b.error(
            *at,
            format!("unknown qualifier `.{p}` for {op} ({allowed})"),
        ));
    }
    Ok(())
}

/// One table cell: empty, a label, a label and an instruction, or an instruction.
fn instruction(b: &mut ThreadBuilder, cell: &Cell, file: &str) -> Result<(), LitmusError> {
    let mut c = Cursor::new(cell.toks, file, cell.loc);
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
    if c.is_punct("@") {
        return Err(c.error_at(
            c.loc(),
            "predicated instructions (`@p`) are not supported; use beq/bne",
        ));
    }
    let (m, at) = c.ident("an instruction")?;
    let (op, q) = split(b, &m, at)?;
    match op.as_str() {
        "ld" => {
            reject_other(b, &q, "ld", "weak, relaxed, acquire, volatile, cta, gpu, sys, global, a type")?;
            let (ord, scope) = load_sem(b, &q, at)?;
            let (dst, _) = c.ident("a destination register")?;
            c.expect_punct(",")?;
            let (addr, l, aat) = address(b, &mut c)?;
            end(&c)?;
            let ty = mem_ty(b, l, q.ty, aat)?;
            let dst = b.reg(&dst);
            b.set_ty(dst, ty);
            b.emit(
                Inst::Load {
                    dst,
                    space: Space::Global,
                    addr,
                    ty,
                    ord,
                    scope,
                },
                at,
            );
        }
        "st" => {
            reject_other(b, &q, "st", "weak, relaxed, release, volatile, cta, gpu, sys, global, a type")?;
            let (ord, scope) = store_sem(b, &q, at)?;
            let (addr, l, aat) = address(b, &mut c)?;
            c.expect_punct(",")?;
            let src = value(b, &mut c)?;
            end(&c)?;
            let ty = mem_ty(b, l, q.ty, aat)?;
            b.emit(
                Inst::Store {
                    space: Space::Global,
                    addr,
                    src,
                    ty,
                    ord,
                    scope,
                },
                at,
            );
        }
        "atom" | "red" => {
            reject_other(b, &q, &op, "relaxed, acquire, release, acq_rel, cta, gpu, sys, global, the operation, a type")?;
            let ord = rmw_sem(b, &q, at)?;
            let scope = q.scope.unwrap_or(Scope::Device);
            let Some((rop, oat)) = &q.op else {
                return Err(b.error(at, format!("{op} needs an operation (.add, .exch, .cas, ...)")));
            };
            let dst = if op == "atom" {
                let (d, _) = c.ident("a destination register")?;
                c.expect_punct(",")?;
                Some(d)
            } else {
                None
            };
            let (addr, l, aat) = address(b, &mut c)?;
            c.expect_punct(",")?;
            let a = value(b, &mut c)?;
            let ty = mem_ty(b, l, q.ty, aat)?;
            let dst = dst.map(|d| {
                let r = b.reg(&d);
                b.set_ty(r, ty);
                r
            });
            if rop == "cas" {
                if op == "red" {
                    return Err(b.error(*oat, "red has no .cas (use atom.cas)"));
                }
                c.expect_punct(",")?;
                let desired = value(b, &mut c)?;
                end(&c)?;
                b.emit(
                    Inst::Cas {
                        dst,
                        space: Space::Global,
                        addr,
                        expected: a,
                        desired,
                        ty,
                        success: ord,
                        failure: failure_of(ord),
                        scope,
                        weak: false,
                    },
                    at,
                );
            } else {
                end(&c)?;
                let rop = match rop.as_str() {
                    "add" | "plus" => RmwOp::Add,
                    "sub" => RmwOp::Sub,
                    "exch" => RmwOp::Exch,
                    "and" => RmwOp::And,
                    "or" => RmwOp::Or,
                    "xor" => RmwOp::Xor,
                    "min" => RmwOp::Min,
                    "max" => RmwOp::Max,
                    "inc" => RmwOp::Inc,
                    _ => RmwOp::Dec,
                };
                b.emit(
                    Inst::Rmw {
                        dst,
                        op: rop,
                        space: Space::Global,
                        addr,
                        operand: a,
                        ty,
                        ord,
                        scope,
                    },
                    at,
                );
            }
        }
        "fence" => {
            reject_other(b, &q, "fence", "sc or acq_rel, and cta, gpu or sys")?;
            let ord = match q.sem.as_ref().map(|s| s.0.as_str()) {
                Some("sc") => FenceOrd::SeqCst,
                Some("acq_rel") => FenceOrd::AcqRel,
                _ => return Err(b.error(at, "fence needs .sc or .acq_rel")),
            };
            let Some(scope) = q.scope else {
                return Err(b.error(at, "fence needs a scope (.cta, .gpu or .sys)"));
            };
            end(&c)?;
            b.emit(
                Inst::Fence {
                    ord,
                    scope,
                    spaces: SpaceSet::BOTH,
                },
                at,
            );
        }
        "membar" => {
            // `membar.gl` is the one level whose name is no scope name.
            let scope = match (q.scope, q.other.as_slice()) {
                (Some(s), []) => s,
                (None, [(g, _)]) if g == "gl" => Scope::Device,
                _ => return Err(b.error(at, "membar needs exactly one level: .cta, .gl or .sys")),
            };
            end(&c)?;
            b.emit(
                Inst::Fence {
                    ord: FenceOrd::SeqCst,
                    scope,
                    spaces: SpaceSet::BOTH,
                },
                at,
            );
        }
        "bar" | "barrier" => {
            let ok = q.other.iter().any(|(p, _)| p == "sync")
                && q
                    .other
                    .iter()
                    .all(|(p, _)| p == "sync" || p == "aligned")
                && q.scope.is_none_or(|s| s == Scope::WorkGroup)
                && q.sem.is_none();
            if !ok {
                return Err(b.error(at, "the barrier is `bar.sync`, `bar.cta.sync` or `barrier.sync`"));
            }
            if !c.at_end() {
                // The barrier number is accepted and ignored: the machine has one barrier per
                // work-group, and a litmus test's threads of one cta all take part in it.
                c.int("a barrier number")?;
                if c.is_punct(",") {
                    return Err(c.error_at(c.loc(), "barriers with a thread count are not supported"));
                }
            }
            end(&c)?;
            b.emit(
                Inst::Barrier {
                    kind: BarrierKind::WorkGroup,
                    spaces: SpaceSet::BOTH,
                    scope: Scope::WorkGroup,
                },
                at,
            );
        }
        "mov" => {
            reject_other(b, &q, "mov", "a type")?;
            let (dst, _) = c.ident("a destination register")?;
            c.expect_punct(",")?;
            let src = value(b, &mut c)?;
            end(&c)?;
            let dst = b.reg(&dst);
            b.set_ty(dst, q.ty.unwrap_or(Ty::I32));
            b.emit(Inst::Mov { dst, src }, at);
        }
        "add" | "sub" | "mul" | "and" | "or" | "xor" => {
            reject_other(b, &q, &op, "a type")?;
            let (dst, _) = c.ident("a destination register")?;
            c.expect_punct(",")?;
            let a = value(b, &mut c)?;
            c.expect_punct(",")?;
            let bb = value(b, &mut c)?;
            end(&c)?;
            let ty = q.ty.unwrap_or(Ty::I32);
            let dst = b.reg(&dst);
            b.set_ty(dst, ty);
            let aop = match op.as_str() {
                "add" => AluOp::Add,
                "sub" => AluOp::Sub,
                "mul" => AluOp::Mul,
                "and" => AluOp::And,
                "or" => AluOp::Or,
                _ => AluOp::Xor,
            };
            b.emit(
                Inst::Alu {
                    op: aop,
                    ty,
                    dst,
                    a,
                    b: bb,
                },
                at,
            );
        }
        "beq" | "bne" => {
            // A register nothing has written holds 0 (herd's default).
            let (r, _) = c.ident("a register")?;
            let r = b.reg(&r);
            c.expect_punct(",")?;
            let v = value(b, &mut c)?;
            c.expect_punct(",")?;
            let (label, _) = c.ident("a label")?;
            end(&c)?;
            let t = b.temp();
            let ty = b.t.regs[r as usize].ty;
            b.emit(
                Inst::Cmp {
                    op: CmpOp::Eq,
                    ty,
                    dst: t,
                    a: Operand::Reg(r),
                    b: v,
                },
                at,
            );
            b.branch(&label, Some((t, op == "beq")), at);
        }
        "goto" | "bra" => {
            let (label, _) = c.ident("a label")?;
            end(&c)?;
            b.branch(&label, None, at);
        }
        _ => {
            return Err(b.error(
                at,
                format!(
                    "unknown instruction `{op}` (allowed: ld, st, atom, red, fence, membar, bar, mov, add, sub, mul, and, or, xor, beq, bne, goto)"
                ),
            ))
        }
    }
    Ok(())
}

fn end(c: &Cursor) -> Result<(), LitmusError> {
    if c.at_end() {
        Ok(())
    } else {
        Err(c.error_at(
            c.loc(),
            format!(
                "unexpected `{}` after the instruction",
                show(c.peek().expect("not at end"))
            ),
        ))
    }
}

fn sem_name(q: &Quals) -> Option<(&str, SrcLoc)> {
    q.sem.as_ref().map(|(s, l)| (s.as_str(), *l))
}

fn need_scope(b: &ThreadBuilder, q: &Quals, at: SrcLoc) -> Result<Scope, LitmusError> {
    q.scope
        .ok_or_else(|| b.error(at, "this memory order needs a scope (.cta, .gpu or .sys)"))
}

fn load_sem(b: &ThreadBuilder, q: &Quals, at: SrcLoc) -> Result<(LoadOrd, Scope), LitmusError> {
    Ok(match sem_name(q) {
        None | Some(("weak", _)) => (LoadOrd::Plain, q.scope.unwrap_or(Scope::Device)),
        Some(("relaxed", _)) => (LoadOrd::Relaxed, need_scope(b, q, at)?),
        Some(("acquire", _)) => (LoadOrd::Acquire, need_scope(b, q, at)?),
        Some(("volatile", _)) => (LoadOrd::Relaxed, Scope::System),
        Some((s, l)) => {
            return Err(b.error(
                l,
                format!("a load cannot be .{s} (allowed: weak, relaxed, acquire, volatile)"),
            ))
        }
    })
}

fn store_sem(b: &ThreadBuilder, q: &Quals, at: SrcLoc) -> Result<(StoreOrd, Scope), LitmusError> {
    Ok(match sem_name(q) {
        None | Some(("weak", _)) => (StoreOrd::Plain, q.scope.unwrap_or(Scope::Device)),
        Some(("relaxed", _)) => (StoreOrd::Relaxed, need_scope(b, q, at)?),
        Some(("release", _)) => (StoreOrd::Release, need_scope(b, q, at)?),
        Some(("volatile", _)) => (StoreOrd::Relaxed, Scope::System),
        Some((s, l)) => {
            return Err(b.error(
                l,
                format!("a store cannot be .{s} (allowed: weak, relaxed, release, volatile)"),
            ))
        }
    })
}

fn rmw_sem(b: &ThreadBuilder, q: &Quals, _at: SrcLoc) -> Result<RmwOrd, LitmusError> {
    Ok(match sem_name(q) {
        None | Some(("relaxed", _)) => RmwOrd::Relaxed,
        Some(("acquire", _)) => RmwOrd::Acquire,
        Some(("release", _)) => RmwOrd::Release,
        Some(("acq_rel", _)) => RmwOrd::AcqRel,
        Some((s, l)) => {
            return Err(b.error(
                l,
                format!("an atomic cannot be .{s} (allowed: relaxed, acquire, release, acq_rel)"),
            ))
        }
    })
}

/// The failure order of a compare-and-swap: its success order without the release part.
pub fn failure_of(ord: RmwOrd) -> LoadOrd {
    match ord {
        RmwOrd::Relaxed | RmwOrd::Release => LoadOrd::Relaxed,
        RmwOrd::Acquire | RmwOrd::AcqRel => LoadOrd::Acquire,
        RmwOrd::SeqCst => LoadOrd::SeqCst,
    }
}

/// The access type: the instruction's, checked against the location's width.
fn mem_ty(
    b: &mut ThreadBuilder,
    l: Option<usize>,
    ty: Option<Ty>,
    at: SrcLoc,
) -> Result<Ty, LitmusError> {
    match l {
        Some(l) => b.access_ty(l, ty, at),
        None => Ok(ty.unwrap_or(Ty::I32)),
    }
}

/// `x`, `[x]` or `[r]`: the address and, for a named location, its index.
fn address(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
) -> Result<(Address, Option<usize>, SrcLoc), LitmusError> {
    let at = c.loc();
    let bracket = c.eat_punct("[");
    let (name, nat) = c.ident("a location (`x` or `[x]`)")?;
    if bracket {
        if c.is_punct("+") {
            return Err(c.error_at(c.loc(), "address offsets are not supported"));
        }
        c.expect_punct("]")?;
    }
    let reg_addr = b.t.reg_named(&name).filter(|&r| {
        b.t.reg_init
            .iter()
            .any(|(x, i)| *x == r && matches!(i, RegInit::Address(_)))
    });
    if let Some(r) = reg_addr {
        return Ok((
            Address {
                base: Operand::Reg(r),
                offset: 0,
            },
            None,
            at,
        ));
    }
    if b.t.reg_named(&name).is_some() && b.find_location(&name).is_none() {
        return Err(b.error(
            nat,
            format!("{name} is a register; a register used as an address must be initialised to a location (`P0:{name}=x`)"),
        ));
    }
    let l = b.location(&name, nat);
    let r = b.addr_reg(l);
    Ok((
        Address {
            base: Operand::Reg(r),
            offset: 0,
        },
        Some(l),
        at,
    ))
}

/// A register or an integer.
fn value(b: &mut ThreadBuilder, c: &mut Cursor) -> Result<Operand, LitmusError> {
    match c.peek() {
        Some(Tok::Int(_)) | Some(Tok::Punct("-")) => Ok(Operand::Imm(c.int("a number")?.0 as u64)),
        Some(Tok::Ident(name)) => {
            let at = c.loc();
            c.next();
            match b.t.reg_named(name) {
                Some(r) => Ok(Operand::Reg(r)),
                None if b.find_location(name).is_some() => Err(b.error(
                    at,
                    format!("{name} is a location; values are registers or numbers"),
                )),
                // A register read before any write holds 0 (herd's default).
                None => Ok(Operand::Reg(b.reg(name))),
            }
        }
        _ => Err(c.error("a register or a number")),
    }
}
