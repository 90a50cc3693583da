//! PTX fences and barriers of the litmus dialect (PTX ISA 8.x, "membar/fence", "bar, barrier"):
//!
//! - `fence{.sc|.acq_rel}.S` (acq_rel by default), `membar.cta|gl|sys` (= `fence.sc` at cta, gpu,
//!   sys: PTX ISA, membar is a synonym of fence.sc on sm_70 and later); `.cluster` parses and needs a
//!   machine capability; proxy and restricted fences are refused;
//! - `bar{.cta}.sync a{, b}`, `barrier{.cta}.sync{.aligned} a{, b}`, `bar.arrive a, b`,
//!   `bar.red.popc.u32 d, a{, b}, {!}c`, `bar.red.{and,or}.pred p, a{, b}, {!}c` (the `barrier`
//!   forms alike), barrier id `a` 0-15 and thread count `b` immediates or registers. In the litmus
//!   dialect a count counts *litmus threads* (1 to 64: each runs in a warp of its own, as herd's
//!   GPU_PTX reads `bar.cta.sync 1, 2`); real PTX kernels keep PTX's rule (a multiple of the warp
//!   size, `kernel/lower`). `bar.arrive a` without a count arrives at a barrier of the whole CTA.
//!   Each becomes the IR's CTA barrier ([`CtaBarrier`]: id, thread count, sync, arrive or
//!   reduction; `bar.sync 0` the plain work-group barrier) and a [`NamedBarrier`] record as
//!   written. An id or count in a register is read from it where its value at the barrier is known
//!   before the run (`resolve_registers`: the initial value, or what `mov`, arithmetic or `cvt` of
//!   known values wrote, the same on every path); one whose value the run decides (loaded from
//!   memory, different on different paths) is refused by `capability.rs` with its place (the IR
//!   holds immediates). A `bar.red` reduces per instance (`per_lane`: a litmus run puts an
//!   instance in each lane).

use super::lex::{Cursor, Tok};
use super::ptx_mem::{dest, end, value, PtxTy, Quals};
use super::test::{BarrierAction, BarrierReduction, Capability, NamedBarrier, ThreadBuilder};
use super::LitmusError;
use crate::ir::*;
use crate::text::Located;

/// `fence` and `membar`.
pub fn fence(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    op: &str,
    q: &Quals,
    at: SrcLoc,
) -> Result<(), LitmusError> {
    if let Some((w, wat)) = q.words.iter().find(|(w, _)| !(op == "membar" && w == "gl")) {
        return Err(b.error(
            *wat,
            format!(
                "`.{w}`: {op} is {}",
                if op == "fence" {
                    "fence{.sc|.acq_rel}.cta|gpu|sys (proxy and restricted fences are not modelled)"
                } else {
                    "membar.cta|gl|sys"
                }
            ),
        ));
    }
    if q.space.is_some() || q.ty.is_some() || q.vector.is_some() {
        return Err(b.error(at, format!("{op} takes no state space or type")));
    }
    if let Some(cat) = q.cluster {
        end(c)?;
        b.pend(
            cat,
            Capability::Clusters,
            format!("{op} at cluster scope: the machine has no thread-block clusters"),
        );
        return Ok(());
    }
    let (ord, scope) = if op == "membar" {
        // `membar.gl` is the one level whose name is no scope name (PTX ISA: membar = fence.sc).
        let scope = match (q.scope, q.has("gl"), &q.sem) {
            (Some((s, _)), false, None) => s,
            (None, true, None) => Scope::Device,
            _ => return Err(b.error(at, "membar needs exactly one level: .cta, .gl or .sys")),
        };
        (FenceOrd::SeqCst, scope)
    } else {
        let ord = match q.sem.as_ref().map(|(s, l)| (s.as_str(), *l)) {
            Some(("sc", _)) => FenceOrd::SeqCst,
            None | Some(("acq_rel", _)) => FenceOrd::AcqRel,
            Some((s, l)) => {
                return Err(b.error(l, format!("fence cannot be .{s} (allowed: sc, acq_rel)")))
            }
        };
        let Some((scope, _)) = q.scope else {
            return Err(b.error(at, "fence needs a scope (.cta, .gpu or .sys)"));
        };
        (ord, scope)
    };
    end(c)?;
    b.emit(
        Inst::Fence {
            ord,
            scope,
            spaces: SpaceSet::BOTH,
        },
        at,
    );
    Ok(())
}

/// A barrier id or thread count: an immediate or a register.
fn bar_operand(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    what: &str,
) -> Result<(Operand, SrcLoc), LitmusError> {
    let at = c.loc();
    let v = value(b, c).map_err(|_| c.error(what))?;
    Ok((v, at))
}

/// `bar` and `barrier` (see the module header).
pub fn barrier(
    b: &mut ThreadBuilder,
    c: &mut Cursor,
    op: &str,
    q: &Quals,
    at: SrcLoc,
) -> Result<(), LitmusError> {
    if q.has("warp") {
        return Err(b.error(at, "bar.warp.sync synchronises lanes of one warp; litmus threads are one per warp (no sub-group placement)"));
    }
    let aligned = op == "bar" || q.has("aligned");
    let kind = ["sync", "arrive", "red"]
        .into_iter()
        .find(|k| q.has(k))
        .ok_or_else(|| b.error(at, format!("{op} needs .sync, .arrive or .red")))?;
    let red = if kind == "red" {
        let r = ["popc", "and", "or"]
            .into_iter()
            .find(|k| q.has(k))
            .ok_or_else(|| b.error(at, format!("{op}.red needs .popc, .and or .or")))?;
        Some(r)
    } else {
        None
    };
    let mut allowed = vec!["sync", "arrive", "red", "aligned"];
    if let Some(r) = red {
        allowed.push(r);
    }
    q.only(b, op, &allowed)?;
    if q.has("aligned") && op == "bar" {
        return Err(b.error(at, "bar is already aligned; `.aligned` goes with barrier"));
    }
    if let Some((s, sat)) = q.scope {
        if s != Scope::WorkGroup {
            return Err(b.error(sat, format!("{op} takes only the .cta scope")));
        }
    }
    if q.sem.is_some() || q.space.is_some() || q.cluster.is_some() {
        return Err(b.error(
            at,
            format!("{op} takes no memory order, space or cluster scope"),
        ));
    }
    match (red, q.ty) {
        (Some("popc"), Some((PtxTy::U(32), _)))
        | (Some("and" | "or"), Some((PtxTy::Pred, _)))
        | (None, None) => {}
        (Some(r), _) => {
            return Err(b.error(
                at,
                format!(
                    "{op}.red.{r} needs the type {}",
                    if r == "popc" { ".u32" } else { ".pred" }
                ),
            ))
        }
        (None, Some((_, tat))) => return Err(b.error(tat, format!("{op}.{kind} takes no type"))),
    }
    let dst = if red.is_some() {
        let d = dest(b, c)?;
        c.expect_punct(",")?;
        b.set_ty(d, Ty::U32);
        Some(d)
    } else {
        None
    };
    let (id, iat) = bar_operand(b, c, "a barrier id (0-15)")?;
    if let Operand::Imm(v) = id {
        if v > 15 {
            return Err(b.error(
                iat,
                format!("barrier ids are 0 to 15 (PTX has 16 per CTA), found {v}"),
            ));
        }
    }
    let mut threads = None;
    if c.is_punct(",") && (kind != "red" || matches!(c.peek_at(2), Some(Tok::Punct(",")))) {
        c.next();
        let (n, nat) = bar_operand(b, c, "a thread count")?;
        if let Operand::Imm(v) = n {
            check_count(b, v, nat)?;
        }
        threads = Some(n);
    }
    let action = match red {
        None if kind == "sync" => BarrierAction::Sync,
        None => BarrierAction::Arrive,
        Some(r) => {
            c.expect_punct(",")?;
            let negated = c.eat_punct("!");
            let (p, _) = c.ident("a predicate register")?;
            let pred = b.reg(&p);
            BarrierAction::Reduce {
                op: match r {
                    "popc" => BarrierReduction::Popc,
                    "and" => BarrierReduction::And,
                    _ => BarrierReduction::Or,
                },
                dst: dst.expect("reductions have a destination"),
                pred,
                negated,
            }
        }
    };
    end(c)?;
    let nb = NamedBarrier {
        at,
        id,
        threads,
        action,
        aligned,
    };
    // Immediate ids and counts become the IR's CTA barrier; a register operand keeps the plain
    // work-group barrier in its place until `resolve_registers` reads the register, or
    // `capability.rs` refuses the test.
    let kind = ir_kind(&nb).unwrap_or(BarrierKind::WorkGroup);
    b.t.barriers.push(nb);
    b.emit(
        Inst::Barrier {
            kind,
            spaces: SpaceSet::BOTH,
            scope: Scope::WorkGroup,
        },
        at,
    );
    Ok(())
}

/// A litmus barrier's thread count counts litmus threads (each runs in a warp of its own, herd's
/// GPU_PTX reading of `bar.cta.sync 1, 2`): at least one. Real PTX kernels keep PTX's rule (a
/// multiple of the warp size, `kernel/lower`).
fn check_count(b: &ThreadBuilder, v: u64, at: SrcLoc) -> Result<(), LitmusError> {
    if v == 0 || v > super::test::MAX_THREADS as u64 {
        return Err(b.error(
            at,
            format!(
                "a litmus barrier's thread count counts litmus threads (1 to {}), found {v}",
                super::test::MAX_THREADS
            ),
        ));
    }
    Ok(())
}

/// The IR's barrier for `nb` when its id and count are immediates (`None`: one is a register).
fn ir_kind(nb: &NamedBarrier) -> Option<BarrierKind> {
    let imm = |o: Operand| match o {
        Operand::Imm(v) => Some(v),
        Operand::Reg(_) => None,
    };
    let id = imm(nb.id)?;
    let threads = match nb.threads {
        None => None,
        Some(t) => Some(imm(t)? as u32),
    };
    if id == 0 && threads.is_none() && nb.action == BarrierAction::Sync {
        return Some(BarrierKind::WorkGroup);
    }
    Some(BarrierKind::Named(CtaBarrier {
        id: id as u8,
        threads,
        op: match nb.action {
            BarrierAction::Sync => BarrierOp::Sync,
            BarrierAction::Arrive => BarrierOp::Arrive,
            BarrierAction::Reduce {
                op,
                dst,
                pred,
                negated,
            } => BarrierOp::Reduce {
                op: match op {
                    BarrierReduction::Popc => BarrierReduce::Popc,
                    BarrierReduction::And => BarrierReduce::And,
                    BarrierReduction::Or => BarrierReduce::Or,
                },
                dst,
                pred,
                negated,
                // Litmus tests run one instance per lane.
                per_lane: true,
            },
        },
    }))
}

/// Barrier ids and thread counts held in registers (`bar.cta.sync 1, r2`), read from the register
/// where its value at the barrier is known before the run (`known_at`): the initial value (the init
/// block's `P0:r2=2`, else 0) or what `mov`, arithmetic and conversions of known values wrote, the
/// same on every path that reaches the barrier. A register whose value depends on the run (loaded
/// from memory, different on different paths) stays a register operand, which `capability.rs`
/// refuses with its place (the IR's barriers hold immediates).
pub fn resolve_registers(t: &mut super::test::Thread, file: &str) -> Result<(), LitmusError> {
    if !t.barriers.iter().any(|nb| {
        [Some(nb.id), nb.threads]
            .iter()
            .flatten()
            .any(|o| matches!(o, Operand::Reg(_)))
    }) {
        return Ok(());
    }
    let known = known_at(t);
    for k in 0..t.barriers.len() {
        let nb = t.barriers[k].clone();
        let at = t
            .insts
            .iter()
            .zip(&t.locs)
            .position(|(i, l)| *l == nb.at && matches!(i, Inst::Barrier { .. }))
            .expect("every barrier record has its instruction");
        let value = |o: Operand| -> Result<Option<Operand>, LitmusError> {
            let Operand::Reg(r) = o else { return Ok(None) };
            match known[at][r as usize] {
                Known::Const(v) => Ok(Some(Operand::Imm(v))),
                Known::Address => Err(LitmusError::Syntax(Located {
                    file: file.to_string(),
                    line: nb.at.line,
                    col: nb.at.col,
                    message: format!(
                        "register {} holds an address, not a barrier id or thread count",
                        t.regs[r as usize].name
                    ),
                })),
                Known::Unreached | Known::Varies => Ok(None),
            }
        };
        let id = value(nb.id)?;
        let threads = match nb.threads {
            Some(o) => value(o)?,
            None => None,
        };
        if id.is_none() && threads.is_none() {
            continue;
        }
        let err = |message: String| {
            LitmusError::Syntax(Located {
                file: file.to_string(),
                line: nb.at.line,
                col: nb.at.col,
                message,
            })
        };
        let mut resolved = nb.clone();
        if let Some(Operand::Imm(v)) = id {
            if v > 15 {
                return Err(err(format!(
                    "the barrier id register holds {}; barrier ids are 0 to 15 (PTX has 16 per CTA)",
                    v as i64
                )));
            }
            resolved.id = Operand::Imm(v);
        }
        if let Some(Operand::Imm(v)) = threads {
            if v == 0 || v > super::test::MAX_THREADS as u64 {
                return Err(err(format!(
                    "the thread count register holds {}; a litmus barrier's thread count counts \
                     litmus threads (1 to {})",
                    v as i64,
                    super::test::MAX_THREADS
                )));
            }
            resolved.threads = Some(Operand::Imm(v));
        }
        if let Some(kind) = ir_kind(&resolved) {
            if let Inst::Barrier { kind: k, .. } = &mut t.insts[at] {
                *k = kind;
            }
        }
        t.barriers[k] = resolved;
    }
    Ok(())
}

/// What the loader knows of a register's value before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// No path reaches the instruction.
    Unreached,
    /// The same value on every path.
    Const(u64),
    /// A location's address from the init block.
    Address,
    /// A value the run decides: loaded, or different on different paths.
    Varies,
}

impl Known {
    fn join(self, o: Known) -> Known {
        match (self, o) {
            (Known::Unreached, x) | (x, Known::Unreached) => x,
            (a, b) if a == b => a,
            _ => Known::Varies,
        }
    }
}

/// Per instruction, what is known of every register before it executes: a forward data flow over
/// the thread's branches (a predicated instruction is a branch around it), from the initial values,
/// through `mov`, the integer and f32 arithmetic of `ir::eval` and `cvt` of known values; every
/// other write (a load's, a read-modify-write's, a barrier reduction's) makes the register vary.
fn known_at(t: &super::test::Thread) -> Vec<Vec<Known>> {
    use super::test::RegInit;
    let n = t.insts.len();
    let nregs = t.regs.len();
    let mut entry = vec![Known::Const(0); nregs];
    for &(r, init) in &t.reg_init {
        entry[r as usize] = match init {
            RegInit::Value(v) => Known::Const(v as u64),
            RegInit::Address(_) | RegInit::Element { .. } => Known::Address,
        };
    }
    let mut state = vec![vec![Known::Unreached; nregs]; n + 1];
    state[0] = entry;
    let mut work: Vec<usize> = vec![0];
    while let Some(i) = work.pop() {
        if i >= n {
            continue;
        }
        let mut s = state[i].clone();
        let get = |s: &[Known], o: Operand| match o {
            Operand::Imm(v) => Known::Const(v),
            Operand::Reg(r) => s[r as usize],
        };
        match t.insts[i] {
            Inst::Mov { dst, src } => s[dst as usize] = get(&s, src),
            Inst::Alu { op, ty, dst, a, b } => {
                s[dst as usize] = match (get(&s, a), get(&s, b)) {
                    (Known::Const(x), Known::Const(y)) => crate::ir::eval::alu(op, ty, x, y)
                        .map(Known::Const)
                        .unwrap_or(Known::Varies),
                    _ => Known::Varies,
                }
            }
            Inst::Cvt { dst, src, from, to } => {
                s[dst as usize] = match s[src as usize] {
                    Known::Const(v) => Known::Const(crate::ir::eval::convert(v, from, to)),
                    _ => Known::Varies,
                }
            }
            ref other => {
                if let Some(d) = super::model::uses_defs(other).1 {
                    s[d as usize] = Known::Varies;
                }
            }
        }
        // A reduction whose id is still a register has the plain barrier in its place.
        for nb in t.barriers.iter().filter(|nb| nb.at == t.locs[i]) {
            if let BarrierAction::Reduce { dst, .. } = nb.action {
                s[dst as usize] = Known::Varies;
            }
        }
        for j in super::model::successors(&t.insts, i) {
            let j = j.min(n);
            let joined: Vec<Known> = state[j].iter().zip(&s).map(|(&a, &b)| a.join(b)).collect();
            if joined != state[j] {
                state[j] = joined;
                work.push(j);
            }
        }
    }
    state
}
