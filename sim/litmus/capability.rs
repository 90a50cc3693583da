//! What the machine can run: PTX barriers as written, constructs the IR or the machine cannot
//! express yet, and the load-time check that rejects a test needing them ([`check_runnable`]), with
//! the construct's `file:line:column` and the missing capability, instead of running it with
//! semantics it does not have.
//!
//! What the machine runs today: the 16 barriers of a work-group (PTX `bar.sync`/`bar.arrive`/`bar.red`
//! with ids and thread counts known before the run, OpenCL `work_group_barrier` = barrier 0); the barriers
//! without a thread count reached the same number of times by every thread of the work-group on
//! every path (the machine stops expecting a thread that exits, PTX's model as the oracle reads it
//! would wait for it: tests where that could differ are refused); a barrier that is never completed
//! is a "no final state" execution (`run.rs`); 32- and 64-bit accesses; one device (all threads on the same `gpu`/`dev`
//! number, whichever it is). A work-group-local location used by threads of several work-groups
//! has a copy in each (OpenCL 2.0 s3.3.1: local memory is shared by the work-items of one
//! work-group), each starting at the initial value; the final state names the copy of the first
//! thread's work-group. One that no thread uses keeps its initial value.
//!
//! Sources: PTX ISA 8.x, "Parallel Synchronization and Communication Instructions: bar, barrier"
//! (16 barriers per CTA, ids 0-15, optional thread count — in a litmus test a count of litmus
//! threads, `ptx_sync.rs` — `arrive` and `red` forms) and "ld", "st", "atom", "red" (types and
//! vector forms).

use super::test::{LitmusTest, Thread};
use super::LitmusError;
use crate::ir::{BarrierKind, Inst, Operand, Reg, Space, SrcLoc};

/// What a PTX barrier instruction does besides arriving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierAction {
    /// `bar.sync` / `barrier.sync`: arrive and wait.
    Sync,
    /// `bar.arrive`: arrive without waiting (a producer's side).
    Arrive,
    /// `bar.red.{popc,and,or}`: arrive, wait, and combine a predicate over the participants into
    /// `dst` (a count for `popc`, a predicate for `and`/`or`).
    Reduce {
        op: BarrierReduction,
        dst: Reg,
        pred: Reg,
        negated: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierReduction {
    Popc,
    And,
    Or,
}

/// A PTX barrier as written (`bar.sync 1, 64`): PTX has 16 barriers per CTA (ids 0-15), each with
/// an optional thread count (in a litmus test, of litmus threads); `barrier.*` without `.aligned` allows
/// threads of a warp to arrive from different places. The IR holds a work-group barrier at its
/// place; this record keeps what the IR cannot say yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedBarrier {
    pub at: SrcLoc,
    /// Barrier id (immediate or register).
    pub id: Operand,
    /// Threads that must arrive (`None`: every thread of the CTA).
    pub threads: Option<Operand>,
    pub action: BarrierAction,
    /// `bar.*` and `barrier.*.aligned`: every thread of a warp executes the same barrier.
    pub aligned: bool,
}

impl NamedBarrier {
    /// Barrier 0 of the whole CTA with arrive-and-wait: the work-group barrier the machine runs.
    pub fn is_work_group_barrier(&self) -> bool {
        self.action == BarrierAction::Sync && self.id == Operand::Imm(0) && self.threads.is_none()
    }
}

/// A mechanism the machine (or the IR) lacks, needed by a construct the parser accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// A barrier id or thread count in a register whose value the run decides (the IR's barriers
    /// hold immediates; a register whose value is known before the run is read, `ptx_sync.rs`).
    BarrierRegister,
    /// Threads of one work-group reaching its barriers without a thread count a different (or
    /// data-dependent) number of times: the machine stops expecting a thread that exited, the
    /// oracle's PTX model waits for it.
    BarrierDivergence,
    /// Threads on more than one device (`gpu 1`, `dev 1`).
    SecondDevice,
    /// 8- and 16-bit accesses.
    SubWordAccess,
    /// 128-bit accesses.
    WideAccess,
    /// Vector accesses (`.v2`, `.v4`).
    VectorAccess,
    /// Atomic arithmetic on f64, f16, bf16 or packed halves.
    FloatAtomics,
    /// Thread-block clusters (`.cluster` scope).
    Clusters,
    /// Memory proxies: virtual aliases (`y @ generic aliases x`), surfaces, textures and constant
    /// memory reaching one location (`sust`, `suld`, `tld`, Dat3M's `cold`), and the proxy fences
    /// that order them (`fence.proxy.*`).
    Proxies,
}

impl Capability {
    pub fn name(self) -> &'static str {
        match self {
            Capability::BarrierRegister => "barrier operands in registers",
            Capability::BarrierDivergence => "divergent barriers",
            Capability::SecondDevice => "a second device",
            Capability::SubWordAccess => "8- and 16-bit accesses",
            Capability::WideAccess => "128-bit accesses",
            Capability::VectorAccess => "vector accesses",
            Capability::FloatAtomics => "f64/f16/bf16 atomics",
            Capability::Clusters => "thread-block clusters",
            Capability::Proxies => "memory proxies",
        }
    }
}

/// A construct the parser accepted that the machine cannot run yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub at: SrcLoc,
    pub capability: Capability,
    /// What the construct is, for the error message.
    pub detail: String,
}

fn needs(test: &LitmusTest, p: &Pending) -> LitmusError {
    LitmusError::NeedsCapability {
        file: test.file.clone(),
        line: p.at.line,
        col: p.at.col,
        capability: p.capability,
        detail: p.detail.clone(),
    }
}

/// The first construct of `test` the machine cannot run, as an error; `Ok` when it can run all.
pub fn check_runnable(test: &LitmusTest) -> Result<(), LitmusError> {
    if let Some(p) = test.pending.first() {
        return Err(needs(test, p));
    }
    for t in &test.threads {
        if let Some(p) = t.pending.first() {
            return Err(needs(test, p));
        }
        for b in &t.barriers {
            if let Some(p) = barrier_need(t, b) {
                return Err(needs(test, &p));
            }
        }
    }
    if let Some(first) = test.threads.first() {
        if let Some(t) = test.threads.iter().find(|t| t.device != first.device) {
            return Err(needs(
                test,
                &Pending {
                    at: t.loc,
                    capability: Capability::SecondDevice,
                    detail: format!(
                        "{} runs on device {} and {} on device {}; the machine models one GPU",
                        first.name, first.device, t.name, t.device
                    ),
                },
            ));
        }
    }
    barrier_divergence(test)
}

/// What a barrier of thread `t` needs beyond what the machine runs: an id or a thread count in a
/// register.
fn barrier_need(t: &Thread, b: &NamedBarrier) -> Option<Pending> {
    let reg = [Some(b.id), b.threads]
        .into_iter()
        .flatten()
        .find(|o| matches!(o, Operand::Reg(_)))?;
    Some(Pending {
        at: b.at,
        capability: Capability::BarrierRegister,
        detail: format!(
            "barrier {} {}, whose value the run decides (loaded, or different on different paths): the machine's barriers take ids and thread counts known before the run",
            if reg == b.id { "id" } else { "thread count" },
            show(t, reg)
        ),
    })
}

/// An operand as the test wrote it: a number, or a register by its name.
fn show(t: &Thread, o: Operand) -> String {
    match o {
        Operand::Imm(v) => v.to_string(),
        Operand::Reg(r) => match t.regs.get(r as usize) {
            Some(info) => format!("in register {}", info.name),
            None => format!("in register %{r}"),
        },
    }
}

/// A barrier of the work-group without a thread count (it expects every thread of the group).
fn uncounted_barrier(i: &Inst) -> bool {
    match i {
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            ..
        } => true,
        Inst::Barrier {
            kind: BarrierKind::Named(b),
            ..
        } => b.threads.is_none(),
        _ => false,
    }
}

/// Fewest and most work-group barriers (those without a thread count) a thread executes from its start to its end, over its
/// paths; `Err(at)` when a barrier sits in a loop (its count depends on data). Branches backwards
/// (loops) without a barrier inside are ignored: leaving such a loop continues a forward path.
fn barrier_counts(t: &Thread) -> Result<Option<(u32, u32)>, SrcLoc> {
    let n = t.insts.len();
    let is_barrier = |i: usize| uncounted_barrier(&t.insts[i]);
    for (i, inst) in t.insts.iter().enumerate() {
        if let Inst::Branch { target, .. } = *inst {
            let target = target as usize;
            if target <= i {
                if let Some(b) = (target..=i).find(|&j| is_barrier(j)) {
                    return Err(t.locs[b]);
                }
            }
        }
    }
    // counts[i]: (min, max) barriers from instruction i to the end; None: no forward path ends.
    let mut counts: Vec<Option<(u32, u32)>> = vec![None; n + 1];
    counts[n] = Some((0, 0));
    for i in (0..n).rev() {
        let mut succ: Vec<usize> = Vec::new();
        match t.insts[i] {
            Inst::Exit => {
                counts[i] = Some((0, 0));
                continue;
            }
            Inst::Branch { target, cond } => {
                if (target as usize) > i {
                    succ.push((target as usize).min(n));
                }
                if cond.is_some() {
                    succ.push(i + 1);
                }
            }
            _ => succ.push(i + 1),
        }
        let own = is_barrier(i) as u32;
        counts[i] = succ
            .iter()
            .filter_map(|&s| counts[s])
            .fold(None, |acc: Option<(u32, u32)>, (lo, hi)| {
                Some(match acc {
                    None => (lo, hi),
                    Some((a, b)) => (a.min(lo), b.max(hi)),
                })
            })
            .map(|(lo, hi)| (lo + own, hi + own));
    }
    Ok(counts[0])
}

/// Every thread of a work-group must reach its barrier equally often on every path.
fn barrier_divergence(test: &LitmusTest) -> Result<(), LitmusError> {
    let diverge = |at: SrcLoc, detail: String| {
        needs(
            test,
            &Pending {
                at,
                capability: Capability::BarrierDivergence,
                detail,
            },
        )
    };
    let mut per_group: Vec<((u32, u32), &Thread, u32)> = Vec::new();
    for t in &test.threads {
        let first_barrier = t
            .insts
            .iter()
            .position(uncounted_barrier)
            .map(|i| t.locs[i]);
        let count = match barrier_counts(t) {
            Err(at) => {
                return Err(diverge(
                    at,
                    format!(
                        "{} reaches this barrier inside a loop, a data-dependent number of times",
                        t.name
                    ),
                ))
            }
            Ok(None) if first_barrier.is_some() => {
                return Err(diverge(
                    t.loc,
                    format!(
                        "{} never reaches its end, so its barriers may never complete",
                        t.name
                    ),
                ))
            }
            Ok(None) => 0,
            Ok(Some((lo, hi))) if lo != hi => {
                return Err(diverge(
                    first_barrier.unwrap_or(t.loc),
                    format!(
                    "{} reaches the work-group barrier {lo} or {hi} times depending on its path",
                    t.name
                ),
                ))
            }
            Ok(Some((lo, _))) => lo,
        };
        let group = (t.device, t.cta);
        if let Some((_, other, n)) = per_group.iter().find(|(g, _, _)| *g == group) {
            if *n != count {
                return Err(diverge(
                    first_barrier.unwrap_or(t.loc),
                    format!(
                        "{} reaches the barrier of its work-group {count} times and {} {n} times: the barrier could never complete",
                        t.name, other.name
                    ),
                ));
            }
        } else {
            per_group.push((group, t, count));
        }
    }
    Ok(())
}

/// The thread that owns each work-group-local location's home copy (the first thread that uses it:
/// the copy the initial and final states name), `None` for global locations.
pub fn local_owners(test: &LitmusTest) -> Vec<Option<usize>> {
    let mut owner = vec![None; test.locations.len()];
    for ti in 0..test.threads.len() {
        for (_, l) in test.accesses(ti) {
            if test.locations[l].space == Space::Local && owner[l].is_none() {
                owner[l] = Some(ti);
            }
        }
    }
    owner
}
