//! Loads, stores, address conversions and atomics (PTX ISA §9.7.9 "Data movement", §9.7.13
//! "Parallel synchronization": `atom`, `red`), and module variables as buffers.
//!
//! State spaces: `.global` and `.const` are device memory (a `.const` variable is a read-only
//! buffer: served by the data caches, not a constant cache — timing only); `.shared` is the
//! work-group's local memory; `.param` reads and writes parameter registers; generic addresses are
//! placed by the provenance of the base register (a `cvta.shared` value is a shared address in the
//! window at [`SHARED_WINDOW`](super::SHARED_WINDOW), anything else global); a generic access through a
//! register whose definitions disagree is refused. `.local` (per-thread stack) is refused.
//!
//! Orders and scopes: `.weak` (or none) is a plain access; `.volatile` is `.relaxed.sys` (PTX ISA
//! §8.5 "Volatile operations"); `.relaxed`/`.acquire`/`.release` with `.cta`/`.gpu`/`.sys` (default
//! `.gpu`); `atom`/`red` without `.sem` are relaxed. The ordering core (`machine::ordering`) decides
//! what each costs and whether the configuration supports it.
//!
//! Vectors (`.v2`, `.v4`) are element accesses in order: the PTX memory model treats a vector
//! access as scalar accesses of unspecified order (PTX ISA §8.4 "Vector data-types"), so the values
//! are exact; each element issues as its own instruction (timing only).
//!
//! Cache operators: `.ca`, `.cs`, `.lu`, `.nc`, `.wb`, `.wt` and the `L1::`/`L2::` eviction hints
//! are accepted as hints (the machine applies its L1 policy; timing only); `ld.cg` and `ld.cv`
//! change which level serves a load and are refused until the machine has per-access L1 policies.
//! Sub-word (8- and 16-bit) accesses are refused: the machine has 32- and 64-bit accesses only.

use super::types::{ir_of, operands, types_of, PType};
use super::{Lower, Prov, Sym, R, SHARED_WINDOW};
use crate::cfront::CError;
use crate::ir::*;
use crate::ptx::ast::{InitVal, Instr, Opnd, StateSpace, VarDecl};
use crate::workload::{Buffer, Init};

/// Bytes of one element of a variable type.
pub fn type_bytes(t: &str) -> Option<u32> {
    PType::parse(t).map(|p| (p.bits() / 8).max(1))
}

/// The buffer that holds module variable `v` (its initialiser as the elements).
pub fn buffer_of(v: &VarDecl, at: SrcLoc) -> R<Buffer> {
    let pt = PType::parse(&v.ty)
        .ok_or_else(|| CError::new(v.ty_loc, format!("`.{}`: not a variable type", v.ty)))?;
    let n = match v.array {
        None => 1,
        Some(Some(n)) => n,
        Some(None) => {
            return Err(CError::new(
                at,
                format!("`{}` has no size: module arrays need a length", v.name),
            ))
        }
    }
    .checked_mul(v.vector as u64)
    .filter(|&n| n <= 1 << 32)
    .ok_or_else(|| CError::new(v.loc, format!("`{}`: more than 2^32 elements", v.name)))?;
    let (elem, per_word) = match pt {
        PType::F32 => (Ty::F32, 1),
        PType::Int { bits: 32, signed } => (if signed { Ty::I32 } else { Ty::U32 }, 1),
        PType::Int { bits: 64, signed } => (if signed { Ty::I64 } else { Ty::U64 }, 1),
        PType::Int { bits: 8, .. } => (Ty::U32, 4),
        PType::Int { bits: 16, .. } => (Ty::U32, 2),
        PType::F64 => {
            return Err(super::f64_refused(
                v.ty_loc,
                &format!("variable `{}`", v.name),
            ))
        }
        _ => {
            return Err(CError::new(
                v.ty_loc,
                format!("variable `{}` of type .{}: not modelled yet", v.name, v.ty),
            ))
        }
    };
    if n % per_word != 0 {
        return Err(CError::new(v.loc, format!("variable `{}` of {n} .{} elements: sizes that are not whole 32-bit words are not modelled yet", v.name, v.ty)));
    }
    let init = match &v.init {
        None => Init::Zero,
        Some(vals) => {
            let bits = pt.bits();
            let mut raw = Vec::new();
            for x in vals {
                raw.push(match (x, elem) {
                    (InitVal::Int(i), _) => {
                        (*i as u64)
                            & if bits == 64 {
                                u64::MAX
                            } else {
                                (1u64 << bits) - 1
                            }
                    }
                    (InitVal::Float(f), Ty::F32) => f32_bits(*f as f32),
                    (InitVal::F32Bits(b), Ty::F32) => *b as u64,
                    (InitVal::Symbol(s), _) => {
                        return Err(CError::new(
                            v.loc,
                            format!(
                            "`{}`: an initialiser holding the address of `{s}` is not modelled yet",
                            v.name
                        ),
                        ))
                    }
                    _ => {
                        return Err(CError::new(
                            v.loc,
                            format!("`{}`: initialiser value does not fit .{}", v.name, v.ty),
                        ))
                    }
                });
            }
            if raw.len() as u64 > n {
                return Err(CError::new(
                    v.loc,
                    format!("`{}`: {} initialisers for {n} elements", v.name, raw.len()),
                ));
            }
            if per_word > 1 {
                let mut words = vec![0u64; (n / per_word) as usize];
                for (k, b) in raw.iter().enumerate() {
                    words[k / per_word as usize] |= b << ((k as u64 % per_word) * bits as u64);
                }
                Init::Values(words)
            } else {
                Init::Values(raw)
            }
        }
    };
    Ok(Buffer {
        name: v.name.clone(),
        elem,
        len: n / per_word,
        init,
        loc: v.loc,
    })
}

const SEMS: &[&str] = &[
    "weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "mmio", "sc",
];
const SCOPES: &[&str] = &["cta", "gpu", "sys", "cluster"];
const SPACES: &[&str] = &[
    "global",
    "shared",
    "shared::cta",
    "shared::cluster",
    "const",
    "param",
    "param::entry",
    "param::func",
    "local",
];
const HINTS: &[&str] = &[
    "ca",
    "cs",
    "lu",
    "nc",
    "wb",
    "wt",
    "L1::evict_normal",
    "L1::evict_unchanged",
    "L1::evict_first",
    "L1::evict_last",
    "L1::no_allocate",
    "L2::evict_normal",
    "L2::evict_first",
    "L2::evict_last",
    "L2::64B",
    "L2::128B",
    "L2::256B",
    "uni",
    "noftz",
];

/// The memory modifiers of an instruction, sorted out.
struct MemMods<'i> {
    sem: Option<(&'i str, SrcLoc)>,
    scope: Scope,
    space: Option<&'i str>,
    vector: u32,
    op: Option<(&'i str, SrcLoc)>,
}

fn mem_mods<'i>(i: &'i Instr, ops: &[&str]) -> R<MemMods<'i>> {
    let mut m = MemMods {
        sem: None,
        scope: Scope::Device,
        space: None,
        vector: 1,
        op: None,
    };
    for (x, at) in &i.mods {
        let x = x.as_str();
        if PType::parse(x).is_some() {
            continue;
        }
        if SEMS.contains(&x) {
            if x == "mmio" || x == "sc" {
                return Err(CError::new(
                    *at,
                    format!("`{}`: `.{x}` is not modelled yet", i.spelled()),
                ));
            }
            m.sem = Some((x, *at));
        } else if SCOPES.contains(&x) {
            m.scope = match x {
                "cta" => Scope::WorkGroup,
                "gpu" => Scope::Device,
                "sys" => Scope::System,
                _ => return Err(CError::new(*at, format!("`{}`: the `.cluster` scope is not modelled yet (the machine has no thread-block clusters)", i.spelled()))),
            };
        } else if SPACES.contains(&x) {
            if x == "shared::cluster" {
                return Err(CError::new(
                    *at,
                    format!(
                        "`{}`: distributed shared memory (`.shared::cluster`) is not modelled yet",
                        i.spelled()
                    ),
                ));
            }
            m.space = Some(x);
        } else if x == "v2" || x == "v4" || x == "v8" {
            m.vector = x[1..].parse().expect("v2/v4/v8");
        } else if ops.contains(&x) {
            m.op = Some((x, *at));
        } else if HINTS.contains(&x) {
        } else {
            let why = match x {
                "cg" | "cv" => "which cache level serves the access is not a per-access choice in the machine yet",
                "L2::cache_hint" => "cache policies (`createpolicy`) are not modelled yet",
                _ => "not modelled yet",
            };
            return Err(CError::new(
                *at,
                format!("`{}`: `.{x}`: {why}", i.spelled()),
            ));
        }
    }
    Ok(m)
}

/// The state space and address an address operand names.
fn address(l: &mut Lower, o: &Opnd, space: Option<&str>, i: &Instr) -> R<(Space, Address)> {
    let Opnd::Addr { base, offset, loc } = o else {
        return Err(CError::new(o.loc(), "expected an address `[...]`"));
    };
    let explicit = match space {
        Some("global") | Some("const") => Some(Space::Global),
        Some("shared") | Some("shared::cta") => Some(Space::Local),
        Some("local") => return Err(super::local_refused(i.loc)),
        Some(_) => unreachable!("param is read by the caller"),
        None => None,
    };
    let Some(name) = base else {
        return Ok((
            explicit.unwrap_or(Space::Global),
            Address {
                base: Operand::Imm(*offset as u64),
                offset: 0,
            },
        ));
    };
    match l.var(name) {
        Some(Sym::Shared(k)) => {
            if explicit == Some(Space::Global) {
                return Err(CError::new(
                    *loc,
                    format!(
                        "`{name}` is a .shared variable, accessed as .{}",
                        space.unwrap_or("global")
                    ),
                ));
            }
            let off = l.shared_offset(k, *loc)?;
            Ok((
                Space::Local,
                Address {
                    base: Operand::Imm((off as i64 + offset) as u64),
                    offset: 0,
                },
            ))
        }
        Some(Sym::GlobalVar(k)) => {
            if explicit == Some(Space::Local) {
                return Err(CError::new(
                    *loc,
                    format!(
                        "`{name}` is a .{} variable, accessed as .shared",
                        l.module.vars[k].space.name()
                    ),
                ));
            }
            let r = l.global_reg(k, *loc)?;
            Ok((
                Space::Global,
                Address {
                    base: Operand::Reg(r),
                    offset: *offset,
                },
            ))
        }
        Some(Sym::LocalVar) => Err(super::local_refused(*loc)),
        Some(Sym::Param(_)) => Err(CError::new(
            *loc,
            format!("`{name}` is a parameter: read it with `ld.param`"),
        )),
        Some(Sym::Reg(_)) | None => {
            let (r, _) = l.reg(name, *loc)?;
            let prov = l.prov_of(Operand::Reg(r));
            match explicit {
                Some(s) => Ok((s, Address { base: Operand::Reg(r), offset: *offset })),
                None => match prov {
                    None | Some(Prov::Global) => Ok((Space::Global, Address { base: Operand::Reg(r), offset: *offset })),
                    Some(Prov::SharedGeneric) => Ok((Space::Local, Address { base: Operand::Reg(r), offset: *offset - SHARED_WINDOW as i64 })),
                    Some(Prov::SharedOffset) => Err(CError::new(*loc, format!("`{name}` holds a .shared offset, used as a generic address: convert it with `cvta.shared`"))),
                    Some(Prov::Mixed) => Err(CError::new(*loc, format!("generic address `{name}` may point to shared or to global memory (its definitions disagree): resolving a generic address at run time is not modelled yet"))),
                },
            }
        }
    }
}

/// The registers of a (possibly vector) data operand; `None` for `_` elements.
fn elements(o: &Opnd, n: u32, i: &Instr) -> R<Vec<Option<Opnd>>> {
    match o {
        Opnd::Vector(v, at) => {
            if v.len() != n as usize {
                return Err(CError::new(
                    *at,
                    format!(
                        "`{}` moves {n} elements but the vector has {}",
                        i.spelled(),
                        v.len()
                    ),
                ));
            }
            Ok(v.iter()
                .map(|e| (!matches!(e, Opnd::Sink(_))).then(|| e.clone()))
                .collect())
        }
        _ if n > 1 => Err(CError::new(
            o.loc(),
            format!("`{}` needs a vector `{{a, b, ...}}`", i.spelled()),
        )),
        o => Ok(vec![Some(o.clone())]),
    }
}

/// `ld`, `ldu` and `st` in every modelled space, order and width.
pub fn ld_st(l: &mut Lower, i: &Instr) -> R<()> {
    let store = i.op == "st";
    let m = mem_mods(i, &[])?;
    let tys = types_of(i);
    let [(pt, tn, tat)] = tys.as_slice() else {
        return Err(CError::new(
            i.loc,
            format!("`{}` needs one type", i.spelled()),
        ));
    };
    if pt.bits() < 32 && *pt != PType::Pred {
        return Err(CError::new(*tat, format!("`{}`: {}-bit accesses are not modelled yet (the machine has 32- and 64-bit accesses only)", i.spelled(), pt.bits())));
    }
    if pt.bits() == 128 {
        return Err(CError::new(
            *tat,
            format!(
                "`{}`: 128-bit scalar accesses are not modelled yet",
                i.spelled()
            ),
        ));
    }
    let ty = ir_of(*pt, tn, *tat, i)?;
    if store && i.has("cg") {
        // (mem_mods refused it for loads; a store's `.cg` only says where it allocates.)
    }
    let ops = operands(i, 2, if store { "`st [a], b`" } else { "`ld d, [a]`" })?;
    let (addr_o, data_o) = if store {
        (&ops[0], &ops[1])
    } else {
        (&ops[1], &ops[0])
    };
    let elems = elements(data_o, m.vector, i)?;
    let w = ty.width().bytes() as i64;
    let at = i.loc;
    if matches!(
        m.space,
        Some("param") | Some("param::entry") | Some("param::func")
    ) {
        let Opnd::Addr {
            base: Some(name),
            offset,
            loc,
        } = addr_o
        else {
            return Err(CError::new(
                addr_o.loc(),
                "expected a parameter `[name]` or `[name+offset]`",
            ));
        };
        let Some(Sym::Param(p)) = l.var(name) else {
            return Err(CError::new(*loc, format!("`{name}` is not a parameter")));
        };
        for (k, e) in elems.iter().enumerate() {
            let Some(e) = e else { continue };
            let slot = l.param_slot(p, offset + k as i64 * w, w as u32, *loc, store)?;
            if store {
                let (src, pv) = l.src(e, ty)?;
                l.def_prov(slot, pv);
                l.emit(Inst::Mov { dst: slot, src }, at);
            } else {
                let d = l.dst(e)?;
                let pv = l.prov_of(Operand::Reg(slot));
                l.def_prov(d, pv);
                l.emit(
                    Inst::Mov {
                        dst: d,
                        src: Operand::Reg(slot),
                    },
                    at,
                );
            }
        }
        return Ok(());
    }
    if i.op == "ldu" && m.space.is_some_and(|s| s != "global") {
        return Err(CError::new(at, "`ldu` reads global memory only"));
    }
    if store && m.space == Some("const") {
        return Err(CError::new(at, "`.const` memory is read-only"));
    }
    let (space, addr) = address(l, addr_o, m.space, i)?;
    let default_scope = if space == Space::Local {
        Scope::WorkGroup
    } else {
        Scope::Device
    };
    let sem = m.sem.map(|s| s.0);
    let scope = match sem {
        None | Some("weak") => default_scope,
        Some("volatile") => Scope::System,
        _ => m.scope,
    };
    for (k, e) in elems.iter().enumerate() {
        let Some(e) = e else { continue };
        let a = Address {
            base: addr.base,
            offset: addr.offset + k as i64 * w,
        };
        if store {
            let ord = match sem {
                None | Some("weak") => StoreOrd::Plain,
                Some("volatile") | Some("relaxed") => StoreOrd::Relaxed,
                Some("release") => StoreOrd::Release,
                Some(s) => {
                    return Err(CError::new(
                        m.sem.expect("some").1,
                        format!("`{}`: a store cannot be `.{s}`", i.spelled()),
                    ))
                }
            };
            let src = l.src_op(e, ty)?;
            l.emit(
                Inst::Store {
                    space,
                    addr: a,
                    src,
                    ty,
                    ord,
                    scope,
                },
                at,
            );
        } else {
            let ord = match sem {
                None | Some("weak") => LoadOrd::Plain,
                Some("volatile") | Some("relaxed") => LoadOrd::Relaxed,
                Some("acquire") => LoadOrd::Acquire,
                Some(s) => {
                    return Err(CError::new(
                        m.sem.expect("some").1,
                        format!("`{}`: a load cannot be `.{s}`", i.spelled()),
                    ))
                }
            };
            let d = l.dst(e)?;
            // A pointer loaded from memory is a global address (generic shared pointers are not
            // stored by the code compilers emit for the modelled kernels).
            if ty.width() == Width::B64 {
                l.def_prov(d, Some(Prov::Global));
            }
            l.emit(
                Inst::Load {
                    dst: d,
                    space,
                    addr: a,
                    ty,
                    ord,
                    scope,
                },
                at,
            );
        }
    }
    Ok(())
}

/// `cvta{.to}.space.u64 d, a`: generic ↔ state-space addresses.
pub fn cvta(l: &mut Lower, i: &Instr) -> R<()> {
    let to = i.has("to");
    let space = i
        .mods
        .iter()
        .map(|m| m.0.as_str())
        .find(|m| SPACES.contains(m));
    let ops = operands(i, 2, "`cvta.space.u64 d, a`")?;
    let tys = types_of(i);
    if !matches!(tys.as_slice(), [(PType::Int { bits: 64, .. }, ..)]) {
        return Err(CError::new(
            i.loc,
            format!(
                "`{}`: 32-bit generic addresses are not modelled (`.address_size 64`)",
                i.spelled()
            ),
        ));
    }
    let (a, pa) = l.src(&ops[1], Ty::U64)?;
    let d = l.dst(&ops[0])?;
    let at = i.loc;
    match space {
        Some("global") | Some("const") => {
            l.def_prov(d, Some(Prov::Global));
            let _ = pa;
            l.emit(Inst::Mov { dst: d, src: a }, at);
        }
        Some("shared") | Some("shared::cta") => {
            let (op, p) = if to {
                (AluOp::Sub, Prov::SharedOffset)
            } else {
                (AluOp::Add, Prov::SharedGeneric)
            };
            l.def_prov(d, Some(p));
            match a {
                Operand::Imm(v) => {
                    let v = if to {
                        v.wrapping_sub(SHARED_WINDOW)
                    } else {
                        v + SHARED_WINDOW
                    };
                    l.emit(
                        Inst::Mov {
                            dst: d,
                            src: Operand::Imm(v),
                        },
                        at,
                    );
                }
                a => l.emit(
                    Inst::Alu {
                        op,
                        ty: Ty::U64,
                        dst: d,
                        a,
                        b: Operand::Imm(SHARED_WINDOW),
                    },
                    at,
                ),
            }
        }
        Some("local") => return Err(super::local_refused(at)),
        _ => {
            return Err(CError::new(
                at,
                format!(
                    "`{}`: converting this space is not modelled yet",
                    i.spelled()
                ),
            ))
        }
    }
    Ok(())
}

const ATOM_OPS: &[&str] = &[
    "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
];

/// `atom` and `red`.
pub fn atom(l: &mut Lower, i: &Instr) -> R<()> {
    let red = i.op == "red";
    let m = mem_mods(i, ATOM_OPS)?;
    if m.vector > 1 {
        return Err(CError::new(
            i.loc,
            format!("`{}`: vector atomics are not modelled yet", i.spelled()),
        ));
    }
    let Some((op, op_at)) = m.op else {
        return Err(CError::new(
            i.loc,
            format!(
                "`{}` needs an operation (.add, .cas, .exch, ...)",
                i.spelled()
            ),
        ));
    };
    let tys = types_of(i);
    let [(pt, tn, tat)] = tys.as_slice() else {
        return Err(CError::new(
            i.loc,
            format!("`{}` needs one type", i.spelled()),
        ));
    };
    let ty = ir_of(*pt, tn, *tat, i)?;
    let float_ok = matches!(op, "add" | "exch" | "min" | "max");
    if ty == Ty::F32 && !float_ok {
        return Err(CError::new(
            op_at,
            format!("`{}`: .{op} does not take f32", i.spelled()),
        ));
    }
    if red && matches!(op, "cas" | "exch") {
        return Err(CError::new(
            op_at,
            format!("`red` has no .{op}: use `atom`"),
        ));
    }
    let ord = match m.sem.map(|s| s.0) {
        None | Some("relaxed") => RmwOrd::Relaxed,
        Some("acquire") => RmwOrd::Acquire,
        Some("release") => RmwOrd::Release,
        Some("acq_rel") => RmwOrd::AcqRel,
        Some(s) => {
            return Err(CError::new(
                m.sem.expect("some").1,
                format!("`{}`: an atomic cannot be `.{s}`", i.spelled()),
            ))
        }
    };
    if matches!(
        m.space,
        Some("const") | Some("param") | Some("param::entry") | Some("param::func")
    ) {
        return Err(CError::new(
            i.loc,
            format!("`{}`: atomics act on global or shared memory", i.spelled()),
        ));
    }
    let n = match (red, op) {
        (true, _) => 2,
        (false, "cas") => 4,
        _ => 3,
    };
    let ops = operands(
        i,
        n,
        if red {
            "`red [a], b`"
        } else if op == "cas" {
            "`atom.cas d, [a], b, c`"
        } else {
            "`atom d, [a], b`"
        },
    )?;
    let addr_o = if red { &ops[0] } else { &ops[1] };
    let (space, addr) = address(l, addr_o, m.space, i)?;
    let at = i.loc;
    let scope = m.scope;
    if op == "cas" {
        let expected = l.src_op(&ops[2], ty)?;
        let desired = l.src_op(&ops[3], ty)?;
        let d = l.dst(&ops[0])?;
        let failure = match ord {
            RmwOrd::Acquire | RmwOrd::AcqRel => LoadOrd::Acquire,
            RmwOrd::SeqCst => LoadOrd::SeqCst,
            _ => LoadOrd::Relaxed,
        };
        l.emit(
            Inst::Cas {
                dst: Some(d),
                space,
                addr,
                expected,
                desired,
                ty,
                success: ord,
                failure,
                scope,
                weak: false,
            },
            at,
        );
        return Ok(());
    }
    let rop = match op {
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        "exch" => RmwOp::Exch,
        "add" => RmwOp::Add,
        "inc" => RmwOp::Inc,
        "dec" => RmwOp::Dec,
        "min" => RmwOp::Min,
        _ => RmwOp::Max,
    };
    if matches!(rop, RmwOp::Inc | RmwOp::Dec) && ty != Ty::U32 {
        return Err(CError::new(
            *tat,
            format!("`{}`: .{op} takes .u32", i.spelled()),
        ));
    }
    let operand = l.src_op(if red { &ops[1] } else { &ops[2] }, ty)?;
    let dst = if red { None } else { Some(l.dst(&ops[0])?) };
    l.emit(
        Inst::Rmw {
            dst,
            op: rop,
            space,
            addr,
            operand,
            ty,
            ord,
            scope,
        },
        at,
    );
    Ok(())
}

/// Whether a module variable is in a state space that becomes a buffer.
pub fn is_buffer_space(s: StateSpace) -> bool {
    matches!(s, StateSpace::Global | StateSpace::Const)
}
