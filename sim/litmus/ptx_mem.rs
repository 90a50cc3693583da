//! PTX memory instructions of the litmus dialect: qualifiers, types, addresses, and `ld`, `st`,
//! `atom`, `red`, as the PTX ISA (8.x) lists them:
//!
//! - `ld{.weak|.relaxed.S|.acquire.S|.volatile}{.space}{.cache}{.vN}.type d, [a]` (and Dat3M's
//!   "local value" `ld d, 5` / `ld d, r1`, which is `mov`: no access) and
//!   `st{.weak|.relaxed.S|.release.S|.volatile}{.space}{.cache}{.vN}.type [a], b`, types `.b8 .b16
//!   .b32 .b64 .b128 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .f32 .f64`;
//! - `atom{.sem}{.S}{.space}.op.type d, [a], b` (`cas`: `d, [a], b, c`) and
//!   `red{.relaxed|.release}{.S}{.space}.op.type [a], b` (also `.acquire` and `.acq_rel`, which
//!   herd's and Dat3M's tests use: the atom with that order, its result dropped), with per
//!   operation: `and or xor` on `.b32 .b64`; `cas` on `.b16 .b32 .b64 .b128`; `exch` on `.b32 .b64 .b128`; `add` on `.u32 .s32 .u64
//!   .f32 .f64` and, with `.noftz`, `.f16 .f16x2 .bf16 .bf16x2`; `inc dec` on `.u32`; `min max` on
//!   `.u32 .s32 .u64 .s64`; sem `.relaxed` (default) `.acquire .release .acq_rel`, scope default
//!   `.gpu` (the PTX rules). `plus` (Dat3M's spelling of `add`) and `sub` are accepted too.
//!
//! Fences and barriers are in `ptx_sync.rs`.
//!
//! Scopes `.cta .gpu .sys` (`.cluster` parses and needs a machine capability); spaces `.global`,
//! `.shared`/`.shared::cta` (the location is work-group-local); without a space the location's.
//! Cache operators (`.ca .cg .cs .lu .cv .wb .wt`) and eviction/prefetch hints (`.L1::...`,
//! `.L2::64B`...) are performance hints only (PTX ISA, "Cache Operators") and are ignored.
//! `.volatile` is `.relaxed.sys` (PTX ISA memory model, "volatile operations").
//!
//! What the IR cannot hold (8/16/128-bit and vector accesses, f64/f16/bf16 atomic arithmetic) is
//! recorded with the capability it needs (`capability.rs`); `ld`/`st` of `.f64` move 64-bit patterns.
//! Errors name the qualifier's own column.

use super::lex::{Cursor, Tok};
use super::test::{Capability, ThreadBuilder};
use super::LitmusError;
use crate::ir::*;

/// A PTX value type qualifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtxTy {
    B(u32),
    U(u32),
    S(u32),
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    F32,
    F64,
    Pred,
}

impl PtxTy {
    pub fn parse(s: &str) -> Option<PtxTy> {
        let bits = |t: &str| t.parse::<u32>().ok();
        Some(match s {
            "f16" => PtxTy::F16,
            "f16x2" => PtxTy::F16x2,
            "bf16" => PtxTy::Bf16,
            "bf16x2" => PtxTy::Bf16x2,
            "f32" => PtxTy::F32,
            "f64" => PtxTy::F64,
            "pred" => PtxTy::Pred,
            _ => {
                // The kind letter, then the width (a qualifier may be empty or start with any
                // character: no byte slicing).
                let k = s.chars().next()?;
                let n = bits(&s[k.len_utf8()..]).filter(|n| [8, 16, 32, 64, 128].contains(n))?;
                match (k, n) {
                    ('b', _) => PtxTy::B(n),
                    ('u', n) if n <= 64 => PtxTy::U(n),
                    ('s', n) if n <= 64 => PtxTy::S(n),
                    _ => return None,
                }
            }
        })
    }

    /// The IR type of a 32- or 64-bit integer or f32 value (`.f64` as a 64-bit pattern).
    pub fn ir(self) -> Option<Ty> {
        Some(match self {
            PtxTy::B(32) | PtxTy::U(32) => Ty::U32,
            PtxTy::S(32) => Ty::I32,
            PtxTy::B(64) | PtxTy::U(64) | PtxTy::F64 => Ty::U64,
            PtxTy::S(64) => Ty::I64,
            PtxTy::F32 => Ty::F32,
            _ => return None,
        })
    }

    /// The capability an access of this type needs, if the IR cannot hold it.
    fn access_need(self) -> Option<Capability> {
        match self {
            PtxTy::B(8 | 16) | PtxTy::U(8 | 16) | PtxTy::S(8 | 16) => {
                Some(Capability::SubWordAccess)
            }
            PtxTy::B(128) => Some(Capability::WideAccess),
            _ => None,
        }
    }
}

/// The qualifiers of a mnemonic, classified; each with its own column.
#[derive(Default)]
pub struct Quals {
    pub sem: Option<(String, SrcLoc)>,
    pub scope: Option<(Scope, SrcLoc)>,
    /// `.cluster` scope (no machine has clusters).
    pub cluster: Option<SrcLoc>,
    /// `.global` (Some(Global)), `.shared`/`.shared::cta` (Some(Local)).
    pub space: Option<(Space, SrcLoc)>,
    pub ty: Option<(PtxTy, SrcLoc)>,
    pub vector: Option<(u32, SrcLoc)>,
    /// Words the instruction interprets itself (operations, `sync`, `aligned`, compare ops, ...).
    pub words: Vec<(String, SrcLoc)>,
}

impl Quals {
    pub fn has(&self, w: &str) -> bool {
        self.words.iter().any(|(x, _)| x == w)
    }

    /// The first word not in `allowed`, as an error.
    pub fn only(&self, b: &ThreadBuilder, op: &str, allowed: &[&str]) -> Result<(), LitmusError> {
        match self
            .words
            .iter()
            .find(|(w, _)| !allowed.contains(&w.as_str()))
        {
            Some((w, at)) => Err(b.error(*at, format!("unknown qualifier `.{w}` for {op}"))),
            None => Ok(()),
        }
    }
}

const SEMS: &[&str] = &[
    "weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio",
];
/// Performance hints that do not change what an access means.
fn is_hint(p: &str) -> bool {
    ["ca", "cg", "cs", "lu", "cv", "wb", "wt"].contains(&p)
        || p.starts_with("L1::")
        || (p.starts_with("L2::") && p != "L2::cache_hint")
        || p.starts_with("level::")
}

/// Splits a mnemonic into opcode and classified qualifiers.
pub fn split(b: &ThreadBuilder, m: &str, at: SrcLoc) -> Result<(String, Quals), LitmusError> {
    let mut parts = m.split('.');
    let op = parts.next().unwrap_or_default().to_string();
    let mut q = Quals::default();
    let mut col = at.col + op.chars().count() as u32 + 1;
    for p in parts {
        let ploc = SrcLoc { line: at.line, col };
        col += p.chars().count() as u32 + 1;
        let twice = |what: &str| Err(b.error(ploc, format!("second {what} qualifier `.{p}`")));
        if SEMS.contains(&p) {
            if q.sem.is_some() {
                return twice("memory-order");
            }
            q.sem = Some((p.to_string(), ploc));
        } else if let Some(s) = match p {
            "cta" => Some(Scope::WorkGroup),
            "gpu" => Some(Scope::Device),
            "sys" => Some(Scope::System),
            _ => None,
        } {
            if q.scope.is_some() || q.cluster.is_some() {
                return twice("scope");
            }
            q.scope = Some((s, ploc));
        } else if p == "cluster" {
            if q.scope.is_some() || q.cluster.is_some() {
                return twice("scope");
            }
            q.cluster = Some(ploc);
        } else if let Some(s) = match p {
            "global" => Some(Space::Global),
            "shared" | "shared::cta" => Some(Space::Local),
            _ => None,
        } {
            if q.space.is_some() {
                return twice("state-space");
            }
            q.space = Some((s, ploc));
        } else if matches!(p, "local" | "const" | "param" | "shared::cluster" | "tex") {
            return Err(b.error(
                ploc,
                format!(
                    "`.{p}` memory is not a litmus location (locations are .global or .shared)"
                ),
            ));
        } else if let Some(t) = PtxTy::parse(p) {
            if q.ty.is_some() {
                return twice("type");
            }
            q.ty = Some((t, ploc));
        } else if let Some(n) = p.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()) {
            if ![2, 4, 8].contains(&n) || q.vector.is_some() {
                return Err(b.error(ploc, format!("`.{p}`: vectors are .v2, .v4 or .v8")));
            }
            q.vector = Some((n, ploc));
        } else if !is_hint(p) {
            q.words.push((p.to_string(), ploc));
        }
    }
    Ok((op, q))
}

pub fn end(c: &Cursor) -> Result<(), LitmusError> {
    match c.peek() {
        None => Ok(()),
        Some(t) => Err(c.error_at(
            c.loc(),
            format!("unexpected `{}` after the instruction", super::lex::show(t)),
        )),
    }
}

/// A register or an integer (`-1`, `0x10`).
pub fn value(b: &mut ThreadBuilder, c: &mut Cursor) -> Result<Operand, LitmusError> {
    match c.peek() {
        Some(Tok::Int(_)) | Some(Tok::Punct("-")) => Ok(Operand::Imm(c.int("a number")?.0 as u64)),
        Some(Tok::Ident(name)) => {
            let at = c.loc();
            c.next();
            match b.t.reg_named(name) {
                Some(r) => Ok(Operand::Reg(r)),
                None if b.find_location(name).is_some() => Err(b.error(
                    at,
                    format!("{name} is a location; values are registers or numbers (`mov r, {name}` takes its address)"),
                )),
                // A register read before any write holds 0 (herd's default).
                None => Ok(Operand::Reg(b.reg(name))),
            }
        }
        _ => Err(c.error("a register or a number")),
    }
}

/// A destination register, its derivation from a location cleared (a new value).
pub fn dest(b: &mut ThreadBuilder, c: &mut Cursor) -> Result<Reg, LitmusError> {
    let (d, _) = c.ident("a destination register")?;
    let r = b.reg(&d);
    b.set_pointer(r, None);
    Ok(r)
}

/// An address operand `x`, `[x]`, `[x+8]`, `[r]`, `[r-4]` for an access of type `want` (or of
/// the location's type): the address, the location it goes to and the access type (checked against
/// the location's width, which a first typed access sets).
pub fn address(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    want: Option<Ty>,
) -> Result<(Address, usize, Ty), LitmusError> {
    let at = c.loc();
    let bracket = c.eat_punct("[");
    let (name, nat) = c.ident("a location (`x`, `[x]`, `[x+4]`) or an address register (`[r]`)")?;
    let mut offset = 0i64;
    if bracket {
        if c.is_punct("+") || c.is_punct("-") {
            let neg = c.is_punct("-");
            c.next();
            match c.peek() {
                Some(Tok::Int(v)) => {
                    offset = if neg { v.wrapping_neg() } else { *v };
                    c.next();
                }
                _ => {
                    return Err(c.error_at(
                        c.loc(),
                        "PTX addresses are [reg], [reg+imm], [var] or [var+imm]: add registers with `add` first",
                    ))
                }
            }
        }
        c.expect_punct("]")?;
    }
    let reg = b.t.reg_named(&name);
    if let Some(l) = reg.and_then(|r| b.pointer_into(r)) {
        let ty = b.access_ty(l, want, at)?;
        let r = reg.expect("a register");
        return Ok((
            b.checked_address(r, offset, l, ty.width().bytes(), at),
            l,
            ty,
        ));
    }
    if reg.is_some() && b.find_location(&name).is_none() {
        return Err(b.error(
            nat,
            format!("register {name} is used as an address but holds no location's address (initialise it, `P0:{name}=x`, or compute it from one with mov/add/sub)"),
        ));
    }
    let l = b.location(&name, nat)?;
    let ty = b.access_ty(l, want, at)?;
    Ok((b.static_address(l, offset, ty.width().bytes(), nat)?, l, ty))
}

/// What `ld`/`st`/`atom`/`red` need before the IR can hold them: a vector, a width the IR lacks,
/// or cluster scope. Returns the capability and a description.
fn unsupported_access(q: &Quals, op: &str) -> Option<(SrcLoc, Capability, String)> {
    if let Some((n, at)) = q.vector {
        return Some((
            at,
            Capability::VectorAccess,
            format!("{op}.v{n} moves {n} values at once"),
        ));
    }
    if let Some(at) = q.cluster {
        return Some((
            at,
            Capability::Clusters,
            format!("{op} at cluster scope: the machine has no thread-block clusters"),
        ));
    }
    let (t, at) = q.ty?;
    t.access_need()
        .map(|cap| (at, cap, format!("{op} of {} bits", ty_bits(t))))
}

fn ty_bits(t: PtxTy) -> u32 {
    match t {
        PtxTy::B(n) | PtxTy::U(n) | PtxTy::S(n) => n,
        PtxTy::F16 | PtxTy::Bf16 => 16,
        PtxTy::F16x2 | PtxTy::Bf16x2 | PtxTy::F32 => 32,
        PtxTy::F64 => 64,
        PtxTy::Pred => 1,
    }
}

/// Parses the operands of an instruction the machine cannot run, creating its registers and
/// locations so that the test stays whole (conditions may name them), and records the need.
pub fn pending_operands(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    need: (SrcLoc, Capability, String),
) -> Result<(), LitmusError> {
    while let Some(t) = c.peek() {
        let at = c.loc();
        match t {
            Tok::Ident(name) => {
                let name = name.clone();
                c.next();
                if b.t.reg_named(&name).is_none() && b.find_location(&name).is_none() {
                    if c.is_punct("]") || c.is_punct("+") {
                        b.location(&name, at)?;
                    } else {
                        b.reg(&name);
                    }
                }
            }
            _ => {
                c.next();
            }
        }
    }
    b.pend(need.0, need.1, need.2);
    Ok(())
}

/// The scope a strong access must name (`.cluster` stands in as gpu until it is rejected).
fn need_scope(b: &ThreadBuilder, q: &Quals, at: SrcLoc) -> Result<Scope, LitmusError> {
    match (q.scope, q.cluster) {
        (Some((s, _)), _) => Ok(s),
        (None, Some(_)) => Ok(Scope::Device),
        (None, None) => Err(b.error(at, "this memory order needs a scope (.cta, .gpu or .sys)")),
    }
}

fn declare(b: &mut ThreadBuilder, q: &Quals, l: usize) -> Result<(), LitmusError> {
    match q.space {
        Some((s, at)) => b.declare_space(l, s, at),
        None => Ok(()),
    }
}

/// `ld` and `st`.
pub fn load_store(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    op: &str,
    q: &Quals,
    at: SrcLoc,
) -> Result<(), LitmusError> {
    let load = op == "ld";
    if let Some((w, wat)) = q.words.first() {
        let msg = match w.as_str() {
            "nc" => "ld.global.nc reads through the non-coherent texture path, which is not for data written while the kernel runs".to_string(),
            "L2::cache_hint" => "cache-policy operands (.L2::cache_hint) are not supported".to_string(),
            _ => format!("unknown qualifier `.{w}` for {op}"),
        };
        return Err(b.error(*wat, msg));
    }
    if let Some((t, tat)) = q.ty {
        if matches!(
            t,
            PtxTy::F16 | PtxTy::F16x2 | PtxTy::Bf16 | PtxTy::Bf16x2 | PtxTy::Pred
        ) {
            return Err(b.error(
                tat,
                format!(
                    "{op} has no .{} type (PTX ISA: use .b16 or .b32 for halves)",
                    ptx_ty_name(t)
                ),
            ));
        }
    }
    let (ord_l, ord_s, scope) = match q.sem.as_ref().map(|(s, l)| (s.as_str(), *l)) {
        None | Some(("weak", _)) => (
            LoadOrd::Plain,
            StoreOrd::Plain,
            q.scope.map(|s| s.0).unwrap_or(Scope::Device),
        ),
        Some(("relaxed", _)) => (LoadOrd::Relaxed, StoreOrd::Relaxed, need_scope(b, q, at)?),
        Some(("acquire", _)) if load => (LoadOrd::Acquire, StoreOrd::Plain, need_scope(b, q, at)?),
        Some(("release", _)) if !load => (LoadOrd::Plain, StoreOrd::Release, need_scope(b, q, at)?),
        Some(("volatile", _)) => {
            if let Some((_, sat)) = q.scope {
                return Err(b.error(
                    sat,
                    format!("{op}.volatile takes no scope (it is relaxed at sys scope)"),
                ));
            }
            (LoadOrd::Relaxed, StoreOrd::Relaxed, Scope::System)
        }
        Some(("mmio", l)) => return Err(b.error(l, "memory-mapped I/O (.mmio) is not modelled")),
        // A load written .release or a store written .acquire: the PTX ISA has no such access;
        // herd's GPU_PTX front end accepts it and its model flags the program undefined. It loads,
        // runs relaxed, and the oracle reports `Undef`.
        Some((s @ ("release" | "acquire"), l)) => {
            b.t.undefined.push((
                l,
                format!(
                    "{} written .{s} (the PTX ISA has no {} .{s}; herd marks the program undefined)",
                    if load { "a load" } else { "a store" },
                    if load { "ld" } else { "st" }
                ),
            ));
            (LoadOrd::Relaxed, StoreOrd::Relaxed, need_scope(b, q, at)?)
        }
        Some((s, l)) => {
            let allowed = if load {
                "weak, relaxed, acquire, volatile"
            } else {
                "weak, relaxed, release, volatile"
            };
            return Err(b.error(
                l,
                format!(
                    "{} cannot be .{s} (allowed: {allowed})",
                    if load { "a load" } else { "a store" }
                ),
            ));
        }
    };
    if let Some(need) = unsupported_access(q, op) {
        return pending_operands(b, c, need);
    }
    let want = q.ty.and_then(|(t, _)| t.ir());
    if load {
        let dst = dest(b, c)?;
        c.expect_punct(",")?;
        // Dat3M's "local value" (`ld r0, 1`, `ld r0, r1`; `ld.weak r0, 1` in tests translated from
        // Memalloy): no memory access, the register takes the number or the other register's
        // value, as `mov` does. A bare name is a register only when the thread already has it and
        // no location has that name (a first-used name stays a location, declared by its use).
        let weak = q.sem.as_ref().is_none_or(|(s, _)| s == "weak");
        if weak && q.scope.is_none() && q.space.is_none() {
            let local = match c.peek() {
                Some(Tok::Int(_)) | Some(Tok::Punct("-")) => true,
                Some(Tok::Ident(n)) => b.t.reg_named(n).is_some() && b.find_location(n).is_none(),
                _ => false,
            };
            if local {
                let src = value(b, c)?;
                end(c)?;
                let ty = match src {
                    Operand::Reg(r) => b.t.regs[r as usize].ty,
                    Operand::Imm(_) => want.unwrap_or(Ty::I32),
                };
                b.set_ty(dst, ty);
                b.emit(Inst::Mov { dst, src }, at);
                return Ok(());
            }
        }
        let (addr, l, ty) = address(b, c, want)?;
        end(c)?;
        declare(b, q, l)?;
        b.set_ty(dst, ty);
        b.emit(
            Inst::Load {
                dst,
                space: Space::Global,
                addr,
                ty,
                ord: ord_l,
                scope,
            },
            at,
        );
    } else {
        let (addr, l, ty) = address(b, c, want)?;
        c.expect_punct(",")?;
        let src = value(b, c)?;
        end(c)?;
        declare(b, q, l)?;
        b.emit(
            Inst::Store {
                space: Space::Global,
                addr,
                src,
                ty,
                ord: ord_s,
                scope,
            },
            at,
        );
    }
    Ok(())
}

pub fn ptx_ty_name(t: PtxTy) -> String {
    match t {
        PtxTy::B(n) => format!("b{n}"),
        PtxTy::U(n) => format!("u{n}"),
        PtxTy::S(n) => format!("s{n}"),
        PtxTy::F16 => "f16".into(),
        PtxTy::F16x2 => "f16x2".into(),
        PtxTy::Bf16 => "bf16".into(),
        PtxTy::Bf16x2 => "bf16x2".into(),
        PtxTy::F32 => "f32".into(),
        PtxTy::F64 => "f64".into(),
        PtxTy::Pred => "pred".into(),
    }
}

/// The types PTX allows for an atomic operation, as written in the ISA's table.
fn atom_types(op: &str) -> &'static [&'static str] {
    match op {
        "and" | "or" | "xor" => &["b32", "b64"],
        "cas" => &["b16", "b32", "b64", "b128"],
        "exch" => &["b32", "b64", "b128"],
        "add" | "plus" | "sub" | "minus" => &[
            "u32", "s32", "u64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2",
        ],
        "inc" | "dec" => &["u32"],
        "min" | "max" => &["u32", "s32", "u64", "s64"],
        _ => &[],
    }
}

/// `atom` and `red`.
pub fn atomic(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    op: &str,
    q: &Quals,
    at: SrcLoc,
) -> Result<(), LitmusError> {
    const OPS: &[&str] = &[
        "and", "or", "xor", "cas", "exch", "add", "plus", "sub", "minus", "inc", "dec", "min",
        "max",
    ];
    let mut rop: Option<(&str, SrcLoc)> = None;
    let mut noftz = false;
    for (w, wat) in &q.words {
        if let Some(o) = OPS.iter().find(|o| **o == w.as_str()) {
            if rop.is_some() {
                return Err(b.error(*wat, format!("second operation `.{w}`")));
            }
            rop = Some((o, *wat));
        } else if w == "noftz" {
            noftz = true;
        } else if w == "L2::cache_hint" {
            return Err(b.error(
                *wat,
                "cache-policy operands (.L2::cache_hint) are not supported",
            ));
        } else {
            return Err(b.error(*wat, format!("unknown qualifier `.{w}` for {op}")));
        }
    }
    let Some((rop, oat)) = rop else {
        return Err(b.error(at, format!("{op} needs an operation (.add, .exch, .cas, .and, .or, .xor, .min, .max, .inc, .dec)")));
    };
    if op == "red" && matches!(rop, "cas" | "exch") {
        return Err(b.error(oat, format!("red has no .{rop} (use atom.{rop})")));
    }
    // `red.acquire` and `red.acq_rel` are not in the PTX ISA (red is relaxed or release), but
    // herd's and Dat3M's PTX tests write them: read as the `atom` with the same order whose result
    // goes to a scratch register, so that the acquire waits for the value as an atom's does.
    let ord = match q.sem.as_ref().map(|(s, l)| (s.as_str(), *l)) {
        None | Some(("relaxed", _)) => RmwOrd::Relaxed,
        Some(("release", _)) => RmwOrd::Release,
        Some(("acquire", _)) => RmwOrd::Acquire,
        Some(("acq_rel", _)) => RmwOrd::AcqRel,
        Some((s, l)) => {
            return Err(b.error(
                l,
                format!("{op} cannot be .{s} (allowed: relaxed, acquire, release, acq_rel)"),
            ));
        }
    };
    let scope = q.scope.map(|s| s.0).unwrap_or(Scope::Device);
    if let Some((t, tat)) = q.ty {
        let name = ptx_ty_name(t);
        let allowed = atom_types(rop);
        if !allowed.contains(&name.as_str()) {
            return Err(b.error(
                tat,
                format!(
                    "{op}.{rop} takes {} (PTX ISA), not .{name}",
                    allowed
                        .iter()
                        .map(|t| format!(".{t}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ));
        }
        let half = matches!(t, PtxTy::F16 | PtxTy::F16x2 | PtxTy::Bf16 | PtxTy::Bf16x2);
        if half != noftz {
            return Err(b.error(
                tat,
                if half {
                    format!("{op}.add on .{name} needs .noftz")
                } else {
                    ".noftz goes with .f16, .f16x2, .bf16, .bf16x2".to_string()
                },
            ));
        }
        if half || t == PtxTy::F64 {
            return pending_operands(
                b,
                c,
                (
                    tat,
                    Capability::FloatAtomics,
                    format!("{op}.{rop}.{name}: atomic arithmetic on .{name}"),
                ),
            );
        }
    }
    if let Some(need) = unsupported_access(q, op) {
        return pending_operands(b, c, need);
    }
    let want = q.ty.and_then(|(t, _)| t.ir());
    let dst = if op == "atom" {
        let d = dest(b, c)?;
        c.expect_punct(",")?;
        Some(d)
    } else if matches!(ord, RmwOrd::Acquire | RmwOrd::AcqRel) {
        Some(b.temp())
    } else {
        None
    };
    let (addr, l, ty) = address(b, c, want)?;
    c.expect_punct(",")?;
    let a = value(b, c)?;
    declare(b, q, l)?;
    if let Some(d) = dst {
        b.set_ty(d, ty);
    }
    if rop == "cas" {
        c.expect_punct(",")?;
        let desired = value(b, c)?;
        end(c)?;
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
        return Ok(());
    }
    end(c)?;
    let rop = match rop {
        "add" | "plus" => RmwOp::Add,
        "sub" | "minus" => RmwOp::Sub,
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
    Ok(())
}

/// The failure order of a compare-and-swap: its success order without the release part.
pub fn failure_of(ord: RmwOrd) -> LoadOrd {
    match ord {
        RmwOrd::Relaxed | RmwOrd::Release => LoadOrd::Relaxed,
        RmwOrd::Acquire | RmwOrd::AcqRel => LoadOrd::Acquire,
        RmwOrd::SeqCst => LoadOrd::SeqCst,
    }
}
