//! The ordering core: every memory-ordering rule of DESIGN.md's table, in one place, one function per
//! row, each naming the clause of the model it implements. Every program source reaches it the same
//! way: a kernel instruction ([`Access::of_inst`]) or a traced SASS instruction ([`Access::of_trace`])
//! becomes one typed [`Access`], and the SM asks [`rule`] what must hold before it issues ([`Before`])
//! and what it does to later accesses ([`Acquire`]); [`rmw_site`], [`load_level`], [`store_ack`] and
//! [`enters_store_buffer`] say where an access is performed.
//!
//! The table (the level named by a scope: work_group → SM/L1, device → L2, system → system point):
//!
//! | row | function | hardware action |
//! |---|---|---|
//! | relaxed (and plain) | [`relaxed`] | none: no ordering with other accesses |
//! | release at S | [`release`] | earlier loads returned, earlier stores performed at level(S); cumulative at device scope and wider |
//! | release at device or system scope, completing | [`membar`] | with `l2.membar_ack`: a membar round trip to every L2 slice (and the system point) after the release's precondition holds |
//! | acquire at S | [`acquire`] | later accesses wait until it completes; at device/system scope the L1 is invalidated |
//! | acq_rel | [`acq_rel`] | both |
//! | seq_cst | [`seq_cst`] | acq_rel, and a seq_cst load also waits for everything earlier |
//! | work-group barrier | [`work_group_barrier`] | control barrier + acq_rel fence at its scope over the spaces named |
//! | atomic read-modify-write | [`rmw_site`] | shared-memory unit for local memory, L2 slices for device scope, configurable for work_group scope on global memory |
//! | a load held before it is performed (`stress.load_delay`) | [`held_load_blocks`] | later accesses to its lines wait until it returns; other later accesses follow their own rows |
//!
//! Scope rules ([`effective_scope`], [`level`]), in this order: an access to work-group-local memory
//! narrows to work_group; a relaxed atomic under OpenCL/SYCL semantics ignores its scope; without
//! shared virtual memory, system scope is device scope. The capability check of `prepare.rs` sees the
//! scope after the first rule only ([`checked_scope`]).
//!
//! How each guarantee is obtained (why the rules are sound): a warp's accesses to one slice travel one
//! FIFO path and a slice serves one line's requests in arrival order, so per-location coherence holds
//! without a rule here (except for a load held back before it is sent: [`held_load_blocks`]); the
//! rules below add the orderings across locations that the models require of release, acquire and
//! seq_cst operations.
//!
//! Deviations from the models (each makes the machine stronger than required, never weaker):
//! 1. Ordering state is per warp, not per thread: a release by one lane waits for the earlier accesses
//!    of every lane of its warp, and an acquire by one lane holds back every lane's later accesses.
//! 2. A release waits until earlier stores are *performed* (accepted by the L1, or acknowledged by the
//!    L2 / system point), not merely ordered before the release on the way there.
//! 3. Fences ignore their address-space flags (an OpenCL `atomic_work_item_fence` on local memory only
//!    also orders global accesses); barriers honour them.
//! 4. work_item and sub_group scope are treated as work_group scope (the SM is the narrowest level
//!    that holds shared state).
//! 5. Cumulativity waits for every write the SM sent before the release — of any warp — to be
//!    acknowledged, not only for those the releasing thread observed ([`cumulative`]); with the
//!    membar ([`membar`]), for every write the L1 took before it to reach its slice's order.
//! 6. An acquire at device scope invalidates the whole L1, not only the lines it synchronises on; an
//!    acquire blocks every later memory operation of the warp, not only later loads.
//! 7. seq_cst: every seq_cst operation waits until all earlier accesses of its warp are performed and
//!    holds back all later ones, so the seq_cst operations of all threads are performed one at a time
//!    at distinct instants, which gives one total order consistent with program order (stronger than
//!    PTX's fence-SC order and than the repaired C11 SC of Lahav et al., PLDI 2017).
//! 8. A relaxed atomic under OpenCL/SYCL semantics is performed at device scope or wider: the scope
//!    is ignored, and the device is every thread the simulator runs (the host runs none).
//! 9. A weak compare-exchange never fails spuriously.
//!
//! Not here: the value each structure returns (the parts themselves), race detection (`races.rs`,
//! which applies the same effective scopes to decide what is morally strong).

mod same_location;

pub use same_location::{
    acquire_effect, bypassing_store_waits, load_beside_own_stores, rmw_waits_for_own_stores,
    Covered, OwnStoreLoad,
};

use super::msg::Level;
use crate::ir::*;
use crate::trace::{TraceAccess, TraceOp, TraceSpace};

/// What a memory instruction, fence or barrier asks of the ordering rules: the one description that
/// kernel instructions and traced instructions both become. Scopes are effective scopes
/// ([`effective_scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Load {
        space: Space,
        ord: LoadOrd,
        scope: Scope,
    },
    Store {
        space: Space,
        ord: StoreOrd,
        scope: Scope,
    },
    /// A read-modify-write or compare-exchange (ordered by its success order).
    Rmw {
        space: Space,
        ord: RmwOrd,
        scope: Scope,
    },
    Fence {
        ord: FenceOrd,
        scope: Scope,
    },
    Barrier {
        kind: BarrierKind,
        spaces: SpaceSet,
        scope: Scope,
    },
}

impl Access {
    /// The access of a kernel instruction under the program's `semantics` (`None` for an instruction
    /// that touches no memory and orders nothing).
    #[inline]
    pub fn of_inst(inst: &Inst, semantics: Semantics) -> Option<Access> {
        let eff = |space, order: Option<MemOrder>, scope| {
            effective_scope(space, order == Some(MemOrder::Relaxed), scope, semantics)
        };
        Some(match *inst {
            Inst::Load {
                space, ord, scope, ..
            } => Access::Load {
                space,
                ord,
                scope: eff(space, ord.atomic_order(), scope),
            },
            Inst::Store {
                space, ord, scope, ..
            } => Access::Store {
                space,
                ord,
                scope: eff(space, ord.atomic_order(), scope),
            },
            Inst::Rmw {
                space, ord, scope, ..
            } => Access::Rmw {
                space,
                ord,
                scope: eff(space, Some(ord.order()), scope),
            },
            Inst::Cas {
                space,
                success,
                scope,
                ..
            } => Access::Rmw {
                space,
                ord: success,
                scope: eff(space, Some(success.order()), scope),
            },
            Inst::Fence { ord, scope, .. } => Access::Fence { ord, scope },
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } => Access::Barrier {
                kind,
                spaces,
                scope,
            },
            _ => return None,
        })
    }

    /// The access of a traced SASS instruction (PTX semantics). Unqualified loads and stores are weak
    /// (plain), `.STRONG.GPU`/`.STRONG.SYS` ones relaxed at that scope; atomics are relaxed;
    /// `MEMBAR.CTA/.GPU/.SYS` is a seq_cst fence at its scope (`fence.sc`, PTX ISA §9.7.12.4
    /// "membar/fence": `membar.level` is a synonym of `fence.sc.scope`); `BAR` is the work-group barrier
    /// over both spaces (`bar.sync`, PTX ISA §9.7.12.1: it orders the memory accesses of the
    /// participating threads like a CTA-scope acq_rel fence).
    #[inline]
    pub fn of_trace(op: TraceOp) -> Option<Access> {
        Some(match op {
            TraceOp::Mem(m) => {
                let space = match m.space {
                    TraceSpace::Shared => Space::Local,
                    // Local memory (LDL/STL) is cached like global memory.
                    TraceSpace::Global | TraceSpace::Local => Space::Global,
                };
                let strong = m.strong.is_some();
                let scope = effective_scope(
                    space,
                    strong,
                    m.strong.unwrap_or(Scope::Device),
                    Semantics::Ptx,
                );
                match m.access {
                    TraceAccess::Load => Access::Load {
                        space,
                        ord: if strong {
                            LoadOrd::Relaxed
                        } else {
                            LoadOrd::Plain
                        },
                        scope,
                    },
                    TraceAccess::Store => Access::Store {
                        space,
                        ord: if strong {
                            StoreOrd::Relaxed
                        } else {
                            StoreOrd::Plain
                        },
                        scope,
                    },
                    TraceAccess::Atomic { .. } => Access::Rmw {
                        space,
                        ord: RmwOrd::Relaxed,
                        scope,
                    },
                }
            }
            TraceOp::Membar(scope) => Access::Fence {
                ord: FenceOrd::SeqCst,
                scope,
            },
            TraceOp::Barrier => Access::Barrier {
                kind: BarrierKind::WorkGroup,
                spaces: SpaceSet::BOTH,
                scope: Scope::WorkGroup,
            },
            TraceOp::Compute(_) | TraceOp::Exit => return None,
        })
    }

    /// A load, store or read-modify-write (which go through the load/store unit).
    #[inline]
    pub fn is_memory(&self) -> bool {
        matches!(
            self,
            Access::Load { .. } | Access::Store { .. } | Access::Rmw { .. }
        )
    }

    /// The effective scope.
    #[inline]
    pub fn scope(&self) -> Scope {
        match *self {
            Access::Load { scope, .. }
            | Access::Store { scope, .. }
            | Access::Rmw { scope, .. }
            | Access::Fence { scope, .. }
            | Access::Barrier { scope, .. } => scope,
        }
    }

    /// The level the access's scope names (an access to local memory: the SM).
    #[inline]
    pub fn level(&self, svm: bool) -> Level {
        match *self {
            Access::Load { space, scope, .. }
            | Access::Store { space, scope, .. }
            | Access::Rmw { space, scope, .. } => space_level(space, scope, svm),
            Access::Fence { scope, .. } | Access::Barrier { scope, .. } => level(scope, svm),
        }
    }
}

/// The level an access to `space` at `scope` is ordered at: the SM for local memory (it lives there),
/// else the level of the scope.
#[inline]
pub fn space_level(space: Space, scope: Scope, svm: bool) -> Level {
    match space {
        Space::Local => Level::Sm,
        Space::Global => level(scope, svm),
    }
}

/// The level a scope names (DESIGN.md's table: work_group → SM/L1, device → L2, system → system
/// point). Without shared virtual memory, system scope is device scope: SYCL 2020 §3.8.3.2 ("if the
/// device does not support USM, memory_scope::system is equivalent to memory_scope::device"; the SYCL
/// reference chapter, 19.2.2). Deviation 4: work_item and sub_group name the SM too.
#[inline]
pub fn level(scope: Scope, svm: bool) -> Level {
    match scope {
        Scope::WorkItem | Scope::SubGroup | Scope::WorkGroup => Level::Sm,
        Scope::Device => Level::L2,
        Scope::System if svm => Level::System,
        Scope::System => Level::L2,
    }
}

/// The scope an access is performed and ordered at.
/// 1. Local memory narrows to work_group: it is visible only to the work-items of one work-group
///    (SYCL 2020 §3.8.3.2; the SYCL reference chapter, 19.2.2: "any scope wider than work_group is
///    narrowed"). PTX has no wider sharing of `.shared` either.
/// 2. A relaxed atomic ignores its scope under OpenCL/SYCL semantics (SYCL 2020 §3.8.3.2; OpenCL C 2.0
///    §6.13.11.4 "memory scope"): it is atomic for every thread that can access the location — the
///    work-group for local memory, every simulated thread (device scope, deviation 8) for global
///    memory. Under PTX semantics the scope of a relaxed operation is kept: it decides whether two
///    accesses are morally strong (PTX ISA §8.7).
///
/// `relaxed`: the access is a relaxed atomic (plain accesses keep their scope: it means nothing).
#[inline]
pub fn effective_scope(space: Space, relaxed: bool, scope: Scope, semantics: Semantics) -> Scope {
    let narrowed = checked_scope(space, scope);
    match (relaxed, semantics, space) {
        (true, Semantics::OpenCl, Space::Local) => Scope::WorkGroup,
        (true, Semantics::OpenCl, Space::Global) => narrowed.max(Scope::Device),
        _ => narrowed,
    }
}

/// The scope the capability check (`prepare.rs`, SYCL's `atomic_memory_scope_capabilities`) sees:
/// after local memory's narrowing to work_group, which the device applies before it could reject the
/// scope — a local-memory atomic written at system scope runs on a device that supports only
/// work_group scope.
#[inline]
pub fn checked_scope(space: Space, scope: Scope) -> Scope {
    match space {
        Space::Local => scope.min(Scope::WorkGroup),
        Space::Global => scope,
    }
}

/// What must hold before an access issues: the release side of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Nothing: the access may issue at once.
    Nothing,
    /// The warp's earlier loads (global and local) have returned.
    LoadsReturned,
    /// Earlier loads have returned and earlier stores are performed at `level`; `cumulative`: also
    /// every write the SM sent before (see [`cumulative`]).
    Performed { level: Level, cumulative: bool },
}

/// The acquire side of a row: later accesses of the warp are not served before the acquire completes
/// (an access: when its value returns; a fence: at once, its [`Before`] having waited for the earlier
/// loads; a barrier: when it releases), and then the SM's L1 is invalidated if `invalidate_l1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acquire {
    pub level: Level,
    pub invalidate_l1: bool,
}

/// What one access's row asks of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub before: Before,
    pub acquire: Option<Acquire>,
}

/// The rows of DESIGN.md's table (the RMW row, where an atomic is performed, is [`rmw_site`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Relaxed,
    Release,
    Acquire,
    AcqRel,
    SeqCst,
    /// A work-group barrier (a sub-group barrier follows the same rule at its scope).
    Barrier,
}

/// The row an access falls under (plain accesses fall under relaxed: they have no ordering either).
#[inline]
pub fn row(a: &Access) -> Row {
    match *a {
        Access::Load { ord, .. } => match ord {
            LoadOrd::Plain | LoadOrd::Relaxed => Row::Relaxed,
            LoadOrd::Acquire => Row::Acquire,
            LoadOrd::SeqCst => Row::SeqCst,
        },
        Access::Store { ord, .. } => match ord {
            StoreOrd::Plain | StoreOrd::Relaxed => Row::Relaxed,
            StoreOrd::Release => Row::Release,
            StoreOrd::SeqCst => Row::SeqCst,
        },
        Access::Rmw { ord, .. } => match ord {
            RmwOrd::Relaxed => Row::Relaxed,
            RmwOrd::Acquire => Row::Acquire,
            RmwOrd::Release => Row::Release,
            RmwOrd::AcqRel => Row::AcqRel,
            RmwOrd::SeqCst => Row::SeqCst,
        },
        Access::Fence { ord, .. } => match ord {
            FenceOrd::Acquire => Row::Acquire,
            FenceOrd::Release => Row::Release,
            FenceOrd::AcqRel => Row::AcqRel,
            FenceOrd::SeqCst => Row::SeqCst,
        },
        Access::Barrier { .. } => Row::Barrier,
    }
}

/// The rule of an access: one arm per row of the table.
#[inline]
pub fn rule(a: &Access, svm: bool) -> Rule {
    let level = a.level(svm);
    match row(a) {
        Row::Relaxed => relaxed(),
        Row::Release => release(level),
        Row::Acquire => acquire(a, level),
        Row::AcqRel => acq_rel(a, level),
        Row::SeqCst => seq_cst(a, level),
        Row::Barrier => match *a {
            Access::Barrier { kind, spaces, .. } if !kind.waits() => barrier_arrive(spaces, level),
            Access::Barrier { spaces, .. } => work_group_barrier(spaces, level),
            _ => unreachable!("only a barrier falls under the barrier row"),
        },
    }
}

/// Row "relaxed atomic": an atomic on the location, no ordering with other accesses (PTX ISA §8.4
/// "operation types": `.relaxed`; OpenCL C 2.0 §6.13.11.3 / C11 7.17.3: `memory_order_relaxed`
/// imposes no ordering). Its scope matters only through [`effective_scope`].
#[inline]
pub fn relaxed() -> Rule {
    Rule {
        before: Before::Nothing,
        acquire: None,
    }
}

/// Row "release at scope S": before the release becomes visible, every earlier access of the thread
/// is performed at level(S) — PTX ISA §8.8 "release pattern" and §8.9.5 "causality order" (a release
/// orders all earlier memory operations of the thread, for every thread in its scope); OpenCL C 2.0
/// §6.13.11.3 / OpenCL 2.0 API §3.3.4 "memory_order_release". Earlier loads must have returned: a
/// value read after the release would otherwise be ordered before it (load→store order).
#[inline]
pub fn release(level: Level) -> Rule {
    Rule {
        before: Before::Performed {
            level,
            cumulative: cumulative(level),
        },
        acquire: None,
    }
}

/// Row "acquire at scope S": no later access of the thread is served from a level below level(S):
/// later accesses wait for the acquire to complete, and at device or system scope the SM's L1 — which
/// may hold values older than those the acquire synchronised with — is invalidated (PTX ISA §8.8
/// "acquire pattern"; OpenCL 2.0 API §3.3.4 "memory_order_acquire"). An acquire *fence* makes the
/// earlier loads act as the acquire (PTX ISA §8.8: "fence.acquire" pattern; OpenCL C 2.0 §6.13.11.5
/// "atomic_work_item_fence"), so it waits for them.
#[inline]
pub fn acquire(a: &Access, level: Level) -> Rule {
    let before = match a {
        Access::Fence { .. } => Before::LoadsReturned,
        _ => Before::Nothing,
    };
    Rule {
        before,
        acquire: Some(Acquire {
            level,
            invalidate_l1: level >= Level::L2,
        }),
    }
}

/// Row "acq_rel": both (PTX ISA §8.4 `.acq_rel`; OpenCL 2.0 API §3.3.4 "memory_order_acq_rel").
#[inline]
pub fn acq_rel(a: &Access, level: Level) -> Rule {
    Rule {
        before: release(level).before,
        acquire: acquire(a, level).acquire,
    }
}

/// Row "seq_cst": acq_rel, plus one total order over all seq_cst operations of the scope (PTX ISA
/// §8.9.3 "fence-SC order"; OpenCL 2.0 API §3.3.4 "memory_order_seq_cst"; C11 7.17.3 ¶6, repaired by
/// Lahav et al., PLDI 2017). Every seq_cst operation waits until everything earlier of its warp is
/// performed — a seq_cst load too, which has no release side otherwise — and holds back everything
/// later (an access until it completes), so seq_cst operations are performed one at a time, in
/// program order (deviation 7). A seq_cst store has no acquire side: it reads nothing.
#[inline]
pub fn seq_cst(a: &Access, level: Level) -> Rule {
    let acquire = match a {
        Access::Store { .. } => None,
        _ => acquire(a, level).acquire,
    };
    Rule {
        before: release(level).before,
        acquire,
    }
}

/// Row "work-group barrier": a control barrier plus an acq_rel fence at the barrier's scope over the
/// address spaces it names (OpenCL C 2.0 §6.13.8 `work_group_barrier(flags, scope)`; CUDA
/// `__syncthreads` / PTX ISA §9.7.12.1 `bar.sync`: both spaces at CTA scope; SYCL 2020 §4.15.1 group
/// barrier). On local memory alone, only the warp's own shared-memory and load traffic must be done:
/// the shared-memory banks serve accesses in issue order. The acquire side takes effect when the
/// barrier releases.
#[inline]
pub fn work_group_barrier(spaces: SpaceSet, level: Level) -> Rule {
    if spaces.global {
        Rule {
            before: release(level).before,
            acquire: Some(Acquire {
                level,
                invalidate_l1: level >= Level::L2,
            }),
        }
    } else {
        Rule {
            before: Before::LoadsReturned,
            acquire: None,
        }
    }
}

/// Row "work-group barrier", `bar.arrive`: the release side only (PTX ISA §9.7.12.1 `bar.arrive`
/// "does not cause any waiting by the executing threads"; memory model §8.9.5 "memory
/// synchronization": a `bar.arrive` synchronizes with the `bar.sync`/`bar.red` of the same barrier
/// that complete its generation, so its earlier accesses are ordered before their later ones). It
/// waits to take part in nothing, so it has no acquire side.
#[inline]
pub fn barrier_arrive(spaces: SpaceSet, level: Level) -> Rule {
    Rule {
        acquire: None,
        ..work_group_barrier(spaces, level)
    }
}

/// Cumulativity of a release at device scope or wider (PTX ISA §8.9.5 "causality order": a write
/// that the releasing thread *observed* is ordered before the release for every thread it
/// synchronises with; OpenCL's happens-before is transitive likewise). Writes of other warps of the SM
/// that the L1 accepted are visible to this warp's loads before they reach L2 (the L1 is shared and
/// write-through), so the release waits until every write the SM sent before it is acknowledged — the
/// SM's write frontier (`sm/lsu/frontier.rs`, deviation 5). At work_group scope the L1 is the level: every
/// write it accepted is already visible to the whole work-group.
#[inline]
pub fn cumulative(level: Level) -> bool {
    level >= Level::L2
}

/// How a cumulative release at device or system scope completes with `l2.membar_ack` set: by a membar
/// (PTX ISA §9.7.12.4 "membar/fence": `fence.sc` and `fence.acq_rel` at `.gpu`/`.sys` — and
/// `membar.gl`/`.sys`, their synonyms — guarantee that the thread's prior memory accesses are
/// performed for every thread of the scope; a release operation acts as such a fence followed by the
/// access, §8.8 "release pattern"). Once the warp's earlier loads have returned and its earlier stores
/// have reached the L1 ([`InFlight::sent`]), the SM sends a membar token to every L2 slice, and the
/// release completes when every slice — and at system level the system point — has answered. Why
/// this is [`release`] and [`cumulative`] at once: the L1 sends the tokens after every request it
/// took before (each path to a slice is FIFO, credits included), so a write of any warp of the SM
/// that the L1 accepted before — all this warp can have observed from the L1 — arrives at its slice
/// ahead of the token; the slice answers the token when it leaves its input, after those writes
/// joined the line's arrival order, which is the order every later access to the line is served in
/// (a write merged behind an outstanding fill is performed before any later access to its line).
/// So the answers take the place of the store acknowledgements and of the write frontier. The cost is
/// what the release costs on hardware whose membar waits for the memory system (the H100 measured 686
/// cycles for `st.relaxed.gpu; fence.acq_rel.gpu`, against 296 for an L2 round trip). `Some(level)`:
/// the membar's level; `None`: no membar (a release at work_group scope, whose level is the L1).
#[inline]
pub fn membar(before: Before) -> Option<Level> {
    match before {
        Before::Performed {
            level,
            cumulative: true,
        } if level >= Level::L2 => Some(level),
        _ => None,
    }
}

/// Where a load is served: a plain load wherever the line is found (the L1 may be stale); an atomic
/// load at the level its scope names (device or system: bypassing the L1), because an atomic must
/// read the coherence order of every thread in its scope (PTX ISA §8.10.1 "coherence"; §8.7 "morally
/// strong"). A local-memory load is served by the shared memory (not by this function).
#[inline]
pub fn load_level(ord: LoadOrd, scope: Scope, svm: bool) -> Level {
    match ord {
        LoadOrd::Plain => Level::Sm,
        _ => level(scope, svm),
    }
}

/// The level whose acknowledgement performs a store: the system point for an atomic store at system
/// scope on a device with shared virtual memory, the L2 otherwise (a plain store never needs the
/// system point: only an atomic is required to be visible outside the device).
#[inline]
pub fn store_ack(ord: StoreOrd, scope: Scope, svm: bool) -> Level {
    match ord {
        StoreOrd::Plain => Level::L2,
        _ if level(scope, svm) == Level::System => Level::System,
        _ => Level::L2,
    }
}

/// Whether a store may wait in the store buffer: plain and relaxed stores may; a release (or seq_cst)
/// store may not — it must become visible after every earlier store, which a per-address drain could
/// reorder it before, so it waits for the buffer to drain ([`release`]) and goes straight to the L1.
#[inline]
pub fn enters_store_buffer(ord: StoreOrd) -> bool {
    !ord.is_release()
}

/// A global load held back before it is sent to the L1 (`stress.load_delay`: it waits in a replay
/// queue, as behind a miss), while later instructions of its warp go on: whether a later access must
/// wait until the held load has returned. `same_location`: the later access touches a line the held
/// load reads.
///
/// - Same location: it waits. Per-location coherence (PTX ISA §8.10.1 "coherence"; C11 7.17.3
///   ¶16–¶19, "read-read", "read-write" coherence, which OpenCL C 2.0 §6.13.11 adopts): a later read
///   must not read a value coherence-earlier than the held read's, and a later write must not be
///   read by it. The FIFO path that gives this to loads sent at issue does not hold for a held one.
/// - A fence or barrier: it waits (its row's [`Before`] includes the held load, counted among the
///   warp's loads not yet returned: [`InFlight::loads`]), as does every release, acq_rel and seq_cst
///   access (row "release": earlier loads returned).
/// - Every other later access — relaxed and plain loads, stores and atomics to other locations —
///   may be performed first: relaxed accesses impose no order (PTX ISA §8.4 `.relaxed`, §8.9
///   "program order" orders them only through the causality order of synchronising operations; C11
///   7.17.3 `memory_order_relaxed`), which is what gives the load-buffering shape its allowed weak
///   outcome. What stays ordered is ordered elsewhere: an access whose address or value depends on
///   the held load waits for its register (the scoreboard), a branch on it waits likewise (so does
///   everything after the branch), and a held acquire load holds back every later access (row
///   "acquire").
#[inline]
pub fn held_load_blocks(later: &Access, same_location: bool) -> bool {
    same_location || !later.is_memory()
}

/// Where an atomic read-modify-write is performed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmwSite {
    /// The SM's shared-memory atomic unit (local memory).
    SharedMemory,
    /// The SM's L1 atomic unit (work_group scope on global memory with
    /// `atomics.work_group_global_at = "l1"`); its result is written through to L2.
    L1,
    /// The atomic unit of the line's L2 slice; `level` is where the response comes from.
    L2 { level: Level },
}

/// Row "atomic read-modify-write": executed by the atomic unit that owns the scope — the shared-memory
/// unit for local memory, the L2 slices for device scope (the point of coherence of every SM), and
/// for work_group scope on global memory the L1's unit or the slice's, as configured (every
/// work-item of a work-group shares the SM's L1). PTX ISA §8.10.3 "atomicity" holds for every thread
/// in the scope.
#[inline]
pub fn rmw_site(space: Space, level: Level, work_group_at_l1: bool) -> RmwSite {
    match (space, level) {
        (Space::Local, _) => RmwSite::SharedMemory,
        (Space::Global, Level::Sm) if work_group_at_l1 => RmwSite::L1,
        (Space::Global, Level::Sm) => RmwSite::L2 { level: Level::L2 },
        (Space::Global, level) => RmwSite::L2 { level },
    }
}

/// What a warp has in flight, as the ordering rules count it (deviation 1: per warp).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Global loads and atomics whose values have not returned.
    pub loads: u32,
    /// Shared-memory accesses not yet done.
    pub local: u32,
    /// Stores waiting in the store buffer.
    pub buffered: u32,
    /// Stores sent to the L1, not yet accepted by it.
    pub to_l1: u32,
    /// Stores (and L1 atomics' write-throughs) not yet acknowledged by the L2 or the system point.
    pub to_l2: u32,
    /// Acquires not yet completed.
    pub acquires: u32,
}

impl InFlight {
    /// Later accesses may issue: no earlier acquire is outstanding ([`acquire`]).
    #[inline]
    pub fn acquires_done(&self) -> bool {
        self.acquires == 0
    }

    /// Whether the part of `before` that depends on the warp's own accesses holds (the cumulative
    /// part depends on the SM's write frontier, which the SM checks).
    #[inline]
    pub fn satisfies(&self, before: Before) -> bool {
        match before {
            Before::Nothing => true,
            Before::LoadsReturned => self.loads == 0 && self.local == 0,
            Before::Performed { level, .. } => self.performed(level),
        }
    }

    /// Earlier loads returned and earlier stores taken by the L1 (none buffered or on the way to it):
    /// what a release waits for before it sends its membar ([`membar`]).
    #[inline]
    pub fn sent(&self) -> bool {
        self.loads == 0 && self.local == 0 && self.buffered == 0 && self.to_l1 == 0
    }

    /// Earlier loads returned and earlier stores performed at `level`.
    #[inline]
    pub fn performed(&self, level: Level) -> bool {
        self.loads == 0
            && self.local == 0
            && self.buffered == 0
            && self.to_l1 == 0
            && (level == Level::Sm || self.to_l2 == 0)
    }

    /// Nothing in flight at all (an exited warp may give up its slot).
    #[inline]
    pub fn quiet(&self) -> bool {
        self.loads == 0
            && self.local == 0
            && self.buffered == 0
            && self.to_l1 == 0
            && self.to_l2 == 0
    }
}

impl Before {
    /// Whether the precondition includes the SM's write frontier.
    #[inline]
    pub fn cumulative(self) -> bool {
        matches!(
            self,
            Before::Performed {
                cumulative: true,
                ..
            }
        )
    }
}

#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod tests;
