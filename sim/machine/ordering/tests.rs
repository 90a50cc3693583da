//! Unit tests of the ordering rules, one or more per row of DESIGN.md's table and per scope rule.
//! What the machine does with a rule (an acquire holding back a later load, a release waiting for L1
//! acceptance only) is pinned end to end in `../tests.rs`.

use super::*;

const SVM: bool = true;
const NO_SVM: bool = false;

fn load(space: Space, ord: LoadOrd, scope: Scope) -> Access {
    Access::Load { space, ord, scope }
}

fn store(space: Space, ord: StoreOrd, scope: Scope) -> Access {
    Access::Store { space, ord, scope }
}

fn rmw(space: Space, ord: RmwOrd, scope: Scope) -> Access {
    Access::Rmw { space, ord, scope }
}

fn fence(ord: FenceOrd, scope: Scope) -> Access {
    Access::Fence { ord, scope }
}

/// Counters of a warp with only `f` changed.
fn inflight(f: impl FnOnce(&mut InFlight)) -> InFlight {
    let mut w = InFlight::default();
    f(&mut w);
    w
}

// ---- relaxed ------------------------------------------------------------------------------------

#[test]
fn relaxed_and_plain_accesses_order_nothing() {
    for a in [
        load(Space::Global, LoadOrd::Plain, Scope::Device),
        load(Space::Global, LoadOrd::Relaxed, Scope::Device),
        store(Space::Global, StoreOrd::Relaxed, Scope::System),
        rmw(Space::Local, RmwOrd::Relaxed, Scope::WorkGroup),
    ] {
        assert_eq!(row(&a), Row::Relaxed);
        assert_eq!(rule(&a, SVM), relaxed(), "{a:?}");
    }
    assert!(enters_store_buffer(StoreOrd::Relaxed) && enters_store_buffer(StoreOrd::Plain));
    // A plain load is served wherever the line is (the L1 may be stale), an atomic one at its scope.
    assert_eq!(load_level(LoadOrd::Plain, Scope::Device, SVM), Level::Sm);
    assert_eq!(load_level(LoadOrd::Relaxed, Scope::Device, SVM), Level::L2);
    assert_eq!(
        load_level(LoadOrd::Relaxed, Scope::WorkGroup, SVM),
        Level::Sm
    );
}

#[test]
fn a_relaxed_atomic_keeps_its_scope_under_ptx_and_ignores_it_under_opencl() {
    let k = |inst: Inst, s| Access::of_inst(&inst, s).unwrap().scope();
    let relaxed_load = |space| Inst::Load {
        dst: 0,
        space,
        addr: Address {
            base: Operand::Imm(0),
            offset: 0,
        },
        ty: Ty::U32,
        ord: LoadOrd::Relaxed,
        scope: Scope::WorkGroup,
    };
    assert_eq!(
        k(relaxed_load(Space::Global), Semantics::Ptx),
        Scope::WorkGroup
    );
    assert_eq!(
        k(relaxed_load(Space::Global), Semantics::OpenCl),
        Scope::Device
    );
    // Atomic for every thread that can reach the location: the work-group for local memory.
    assert_eq!(
        k(relaxed_load(Space::Local), Semantics::OpenCl),
        Scope::WorkGroup
    );
    assert_eq!(
        effective_scope(Space::Local, true, Scope::SubGroup, Semantics::OpenCl),
        Scope::WorkGroup
    );
    // Only relaxed atomics: an acquire keeps its scope, and so does a plain access.
    assert_eq!(
        effective_scope(Space::Global, false, Scope::WorkGroup, Semantics::OpenCl),
        Scope::WorkGroup
    );
    assert_eq!(
        effective_scope(Space::Global, true, Scope::System, Semantics::OpenCl),
        Scope::System
    );
    // So under OpenCL a relaxed work_group atomic on global memory runs at L2, never in one SM's L1.
    let a = Access::of_inst(
        &Inst::Rmw {
            dst: None,
            op: RmwOp::Add,
            space: Space::Global,
            addr: Address {
                base: Operand::Imm(0),
                offset: 0,
            },
            operand: Operand::Imm(1),
            ty: Ty::U32,
            ord: RmwOrd::Relaxed,
            scope: Scope::WorkGroup,
        },
        Semantics::OpenCl,
    )
    .unwrap();
    assert_eq!(
        rmw_site(Space::Global, a.level(SVM), true),
        RmwSite::L2 { level: Level::L2 }
    );
}

// ---- release at S -------------------------------------------------------------------------------

#[test]
fn a_release_waits_for_earlier_accesses_performed_at_its_scope_level() {
    let wg = rule(
        &store(Space::Global, StoreOrd::Release, Scope::WorkGroup),
        SVM,
    );
    assert_eq!(
        wg,
        Rule {
            before: Before::Performed {
                level: Level::Sm,
                cumulative: false
            },
            acquire: None
        }
    );
    // At work_group scope, a store accepted by the L1 is performed: its L2 acknowledgement may lag.
    let accepted = inflight(|w| w.to_l2 = 1);
    assert!(accepted.satisfies(wg.before));
    for not_yet in [
        inflight(|w| w.to_l1 = 1),
        inflight(|w| w.buffered = 1),
        inflight(|w| w.loads = 1),
        inflight(|w| w.local = 1),
    ] {
        assert!(!not_yet.satisfies(wg.before), "{not_yet:?}");
    }
    // At device scope it must be acknowledged by L2, and the release is cumulative.
    let dev = rule(&store(Space::Global, StoreOrd::Release, Scope::Device), SVM);
    assert!(!accepted.satisfies(dev.before) && dev.before.cumulative());
    assert!(!enters_store_buffer(StoreOrd::Release));
    // A release fence and a release RMW follow the same row.
    assert_eq!(rule(&fence(FenceOrd::Release, Scope::Device), SVM), dev);
    assert_eq!(
        rule(&rmw(Space::Global, RmwOrd::Release, Scope::Device), SVM),
        dev
    );
}

#[test]
fn cumulativity_applies_at_device_scope_and_wider_only() {
    assert!(!cumulative(Level::Sm));
    assert!(cumulative(Level::L2) && cumulative(Level::System));
    // On local memory the level is the SM whatever the scope written.
    let local = rule(&store(Space::Local, StoreOrd::Release, Scope::System), SVM);
    assert!(!local.before.cumulative());
}

// ---- acquire at S -------------------------------------------------------------------------------

#[test]
fn an_acquire_holds_back_later_accesses_and_at_device_scope_invalidates_the_l1() {
    let dev = rule(&load(Space::Global, LoadOrd::Acquire, Scope::Device), SVM);
    assert_eq!(
        dev.before,
        Before::Nothing,
        "an acquire load waits for nothing earlier"
    );
    assert_eq!(
        dev.acquire,
        Some(Acquire {
            level: Level::L2,
            invalidate_l1: true
        })
    );
    let wg = rule(
        &load(Space::Global, LoadOrd::Acquire, Scope::WorkGroup),
        SVM,
    );
    assert_eq!(
        wg.acquire,
        Some(Acquire {
            level: Level::Sm,
            invalidate_l1: false
        }),
        "the L1 is the work-group's level: nothing to invalidate"
    );
    // While it is outstanding, later accesses wait.
    assert!(!inflight(|w| w.acquires = 1).acquires_done());
    assert!(InFlight::default().acquires_done());
    // An acquire fence makes earlier loads act as the acquire: it waits for them, not for stores.
    let f = rule(&fence(FenceOrd::Acquire, Scope::Device), SVM);
    assert_eq!(f.before, Before::LoadsReturned);
    assert!(inflight(|w| w.to_l2 = 3).satisfies(f.before));
    assert!(!inflight(|w| w.loads = 1).satisfies(f.before));
    assert!(f.acquire.is_some_and(|a| a.invalidate_l1));
}

// ---- acq_rel, seq_cst ---------------------------------------------------------------------------

#[test]
fn acq_rel_is_both_sides() {
    let a = rmw(Space::Global, RmwOrd::AcqRel, Scope::Device);
    assert_eq!(row(&a), Row::AcqRel);
    let r = rule(&a, SVM);
    assert_eq!(r.before, release(Level::L2).before);
    assert_eq!(r.acquire, acquire(&a, Level::L2).acquire);
    let f = rule(&fence(FenceOrd::AcqRel, Scope::WorkGroup), SVM);
    assert_eq!(
        f.before,
        Before::Performed {
            level: Level::Sm,
            cumulative: false
        }
    );
}

#[test]
fn seq_cst_waits_for_everything_earlier_and_a_seq_cst_store_reads_nothing() {
    let l = rule(&load(Space::Global, LoadOrd::SeqCst, Scope::Device), SVM);
    assert_eq!(
        l.before,
        release(Level::L2).before,
        "a seq_cst load waits like a release"
    );
    assert!(l.acquire.is_some());
    let s = rule(&store(Space::Global, StoreOrd::SeqCst, Scope::Device), SVM);
    assert_eq!((s.before, s.acquire), (release(Level::L2).before, None));
    assert!(!enters_store_buffer(StoreOrd::SeqCst));
    let f = rule(&fence(FenceOrd::SeqCst, Scope::System), SVM);
    assert_eq!(
        f.before,
        Before::Performed {
            level: Level::System,
            cumulative: true
        }
    );
}

// ---- work-group barrier -------------------------------------------------------------------------

#[test]
fn a_barrier_is_an_acq_rel_fence_over_the_spaces_it_names() {
    let both = Access::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces: SpaceSet::BOTH,
        scope: Scope::WorkGroup,
    };
    let r = rule(&both, SVM);
    assert_eq!(
        r.before,
        Before::Performed {
            level: Level::Sm,
            cumulative: false
        }
    );
    assert_eq!(r.acquire.map(|a| a.invalidate_l1), Some(false));
    let dev = Access::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces: SpaceSet::GLOBAL,
        scope: Scope::Device,
    };
    assert!(rule(&dev, SVM).acquire.is_some_and(|a| a.invalidate_l1));
    assert!(rule(&dev, SVM).before.cumulative());
    let local = Access::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces: SpaceSet::LOCAL,
        scope: Scope::WorkGroup,
    };
    assert_eq!(
        rule(&local, SVM),
        Rule {
            before: Before::LoadsReturned,
            acquire: None
        }
    );
}

// ---- a held load ---------------------------------------------------------------------------------

#[test]
fn a_held_load_is_passed_only_by_accesses_to_other_locations() {
    let later = [
        load(Space::Global, LoadOrd::Plain, Scope::Device),
        load(Space::Global, LoadOrd::Relaxed, Scope::Device),
        store(Space::Global, StoreOrd::Relaxed, Scope::Device),
        store(Space::Global, StoreOrd::Plain, Scope::Device),
        rmw(Space::Global, RmwOrd::Relaxed, Scope::Device),
    ];
    for a in later {
        assert!(
            held_load_blocks(&a, true),
            "coherence: {a:?} to its line waits"
        );
        assert!(!held_load_blocks(&a, false), "{a:?} elsewhere passes");
    }
    for a in [
        fence(FenceOrd::AcqRel, Scope::Device),
        fence(FenceOrd::Acquire, Scope::WorkGroup),
    ] {
        assert!(held_load_blocks(&a, false), "{a:?} waits");
    }
    // What passes by this rule is still held back by its own row: a release waits for the held
    // load, counted among the warp's loads not yet returned.
    let held = inflight(|w| w.loads = 1);
    let rel = store(Space::Global, StoreOrd::Release, Scope::Device);
    assert!(!held.satisfies(rule(&rel, SVM).before));
    assert!(held.satisfies(rule(&later[2], SVM).before));
}

#[test]
fn a_named_barrier_orders_as_the_work_group_barrier_and_bar_arrive_only_releases() {
    let named = |op| Access::Barrier {
        kind: BarrierKind::Named(CtaBarrier {
            id: 3,
            threads: Some(64),
            op,
        }),
        spaces: SpaceSet::BOTH,
        scope: Scope::WorkGroup,
    };
    let plain = Access::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces: SpaceSet::BOTH,
        scope: Scope::WorkGroup,
    };
    assert_eq!(rule(&named(BarrierOp::Sync), SVM), rule(&plain, SVM));
    let arrive = rule(&named(BarrierOp::Arrive), SVM);
    assert_eq!(arrive.before, rule(&plain, SVM).before);
    assert_eq!(
        arrive.acquire, None,
        "bar.arrive does not wait: nothing to acquire"
    );
}

// ---- atomic read-modify-write site --------------------------------------------------------------

#[test]
fn an_rmw_runs_at_the_unit_that_owns_its_scope() {
    assert_eq!(
        rmw_site(Space::Local, Level::Sm, false),
        RmwSite::SharedMemory
    );
    assert_eq!(
        rmw_site(Space::Local, Level::L2, true),
        RmwSite::SharedMemory
    );
    assert_eq!(rmw_site(Space::Global, Level::Sm, true), RmwSite::L1);
    assert_eq!(
        rmw_site(Space::Global, Level::Sm, false),
        RmwSite::L2 { level: Level::L2 }
    );
    assert_eq!(
        rmw_site(Space::Global, Level::L2, true),
        RmwSite::L2 { level: Level::L2 }
    );
    assert_eq!(
        rmw_site(Space::Global, Level::System, true),
        RmwSite::L2 {
            level: Level::System
        }
    );
}

// ---- scope rules --------------------------------------------------------------------------------

#[test]
fn local_memory_narrows_to_work_group_before_the_capability_check() {
    assert_eq!(checked_scope(Space::Local, Scope::System), Scope::WorkGroup);
    assert_eq!(
        checked_scope(Space::Local, Scope::SubGroup),
        Scope::SubGroup
    );
    assert_eq!(checked_scope(Space::Global, Scope::System), Scope::System);
    assert_eq!(
        effective_scope(Space::Local, false, Scope::Device, Semantics::Ptx),
        Scope::WorkGroup
    );
    assert_eq!(
        store(Space::Local, StoreOrd::Release, Scope::Device).level(SVM),
        Level::Sm
    );
}

#[test]
fn system_scope_is_device_scope_without_shared_virtual_memory() {
    assert_eq!(level(Scope::System, SVM), Level::System);
    assert_eq!(level(Scope::System, NO_SVM), Level::L2);
    assert_eq!(level(Scope::Device, SVM), Level::L2);
    for s in [Scope::WorkItem, Scope::SubGroup, Scope::WorkGroup] {
        assert_eq!(level(s, SVM), Level::Sm, "{s}");
    }
    assert_eq!(
        store_ack(StoreOrd::Relaxed, Scope::System, SVM),
        Level::System
    );
    assert_eq!(
        store_ack(StoreOrd::Relaxed, Scope::System, NO_SVM),
        Level::L2
    );
    assert_eq!(
        store_ack(StoreOrd::Plain, Scope::System, SVM),
        Level::L2,
        "a plain store is never required at the system point"
    );
}

// ---- one gate for kernels and traces ------------------------------------------------------------

#[test]
fn a_trace_membar_is_the_kernel_language_fence_sc_and_gets_the_same_rule() {
    let kernel = Access::of_inst(
        &Inst::Fence {
            ord: FenceOrd::SeqCst,
            scope: Scope::Device,
            spaces: SpaceSet::BOTH,
        },
        Semantics::Ptx,
    );
    let trace = Access::of_trace(TraceOp::Membar(Scope::Device));
    assert_eq!(kernel, trace);
    // Including cumulativity: a MEMBAR.GPU waits for the SM's write frontier.
    assert!(rule(&trace.unwrap(), SVM).before.cumulative());
    let bar = Access::of_trace(TraceOp::Barrier).unwrap();
    let syncthreads = Access::of_inst(
        &Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::BOTH,
            scope: Scope::WorkGroup,
        },
        Semantics::Ptx,
    );
    assert_eq!(Some(bar), syncthreads);
    assert_eq!(
        Access::of_trace(TraceOp::Compute(LatencyClass::IntAlu)),
        None
    );
}

#[test]
fn traced_accesses_are_weak_unless_strong_and_atomics_are_relaxed() {
    use crate::trace::{TraceMem, TraceSpace};
    let mem = |access, strong, space| {
        Access::of_trace(TraceOp::Mem(TraceMem {
            space,
            access,
            width: 4,
            strong,
        }))
        .unwrap()
    };
    assert_eq!(
        mem(TraceAccess::Load, None, TraceSpace::Global),
        load(Space::Global, LoadOrd::Plain, Scope::Device)
    );
    assert_eq!(
        mem(TraceAccess::Store, Some(Scope::System), TraceSpace::Local),
        store(Space::Global, StoreOrd::Relaxed, Scope::System),
        "local memory (LDL/STL) is cached like global memory"
    );
    let atom = TraceAccess::Atomic {
        op: AtomicOp::Cas,
        returning: true,
    };
    assert_eq!(
        mem(atom, Some(Scope::Device), TraceSpace::Shared),
        rmw(Space::Local, RmwOrd::Relaxed, Scope::WorkGroup)
    );
}

// ---- membar -------------------------------------------------------------------------------------

#[test]
fn a_membar_completes_exactly_the_cumulative_releases_at_device_or_system_level() {
    // Every release-side row at device or system scope: the membar's level is the scope's.
    for (scope, svm, level) in [
        (Scope::Device, SVM, Level::L2),
        (Scope::System, SVM, Level::System),
        (Scope::System, NO_SVM, Level::L2),
    ] {
        for a in [
            fence(FenceOrd::Release, scope),
            fence(FenceOrd::AcqRel, scope),
            fence(FenceOrd::SeqCst, scope),
            store(Space::Global, StoreOrd::Release, scope),
            store(Space::Global, StoreOrd::SeqCst, scope),
            rmw(Space::Global, RmwOrd::AcqRel, scope),
            load(Space::Global, LoadOrd::SeqCst, scope),
        ] {
            assert_eq!(membar(rule(&a, svm).before), Some(level), "{a:?}");
        }
    }
    // No membar: work_group scope and local memory (the SM is the level), acquires (no release
    // side beyond loads returned) and relaxed accesses.
    for a in [
        fence(FenceOrd::AcqRel, Scope::WorkGroup),
        fence(FenceOrd::SeqCst, Scope::SubGroup),
        store(Space::Local, StoreOrd::Release, Scope::Device),
        fence(FenceOrd::Acquire, Scope::Device),
        load(Space::Global, LoadOrd::Acquire, Scope::System),
        rmw(Space::Global, RmwOrd::Relaxed, Scope::Device),
    ] {
        assert_eq!(membar(rule(&a, SVM).before), None, "{a:?}");
    }
}

#[test]
fn a_membar_is_sent_once_loads_returned_and_stores_reached_the_l1() {
    assert!(InFlight::default().sent());
    // Stores on their way to the L2 do not hold the membar back: its tokens follow them.
    assert!(inflight(|w| w.to_l2 = 3).sent());
    for w in [
        inflight(|w| w.loads = 1),
        inflight(|w| w.local = 1),
        inflight(|w| w.buffered = 1),
        inflight(|w| w.to_l1 = 1),
    ] {
        assert!(!w.sent(), "{w:?}");
    }
}
