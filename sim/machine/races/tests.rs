//! Race detection: vector clocks, data and scope races, synchronisation through releases, fences,
//! barriers and seq_cst order, and the bounds.

use super::*;

fn acc(tid: u64, pc: u32, kind: AccessKind, order: Option<MemOrder>, scope: Scope) -> RaceEvent {
    RaceEvent::Access(Access {
        tid,
        pc,
        space: Space::Global,
        addr: 0x1000,
        bytes: 4,
        kind,
        order,
        scope,
    })
}

fn flag(tid: u64, pc: u32, kind: AccessKind, order: MemOrder, scope: Scope) -> RaceEvent {
    RaceEvent::Access(Access {
        tid,
        pc,
        space: Space::Global,
        addr: 0x2000,
        bytes: 4,
        kind,
        order: Some(order),
        scope,
    })
}

fn kinds(d: &RaceDetector) -> Vec<RaceKind> {
    d.found.iter().map(|f| f.0).collect()
}

#[test]
fn vector_clock_join_is_pointwise_max() {
    let mut a = Vc::default();
    a.set(3, 2);
    a.set(1, 5);
    let mut b = Vc::default();
    b.set(1, 4);
    b.set(7, 1);
    a.join(&b);
    assert_eq!(a.0, vec![(1, 5), (3, 2), (7, 1)]);
}

/// `n` threads, each in its own work-group, release-add to one counter and then acquire it (a
/// device-wide latch): every thread's clock comes to name the others.
fn latch(d: &mut RaceDetector, n: u64) {
    for t in 0..n {
        let tid = t * 32;
        d.apply(flag(
            tid,
            1,
            AccessKind::Rmw,
            MemOrder::AcqRel,
            Scope::Device,
        ));
        d.apply(flag(
            tid,
            2,
            AccessKind::Load,
            MemOrder::Acquire,
            Scope::Device,
        ));
        d.apply(RaceEvent::ReadDone {
            tid,
            space: Space::Global,
            addr: 0x2000,
            scope: Scope::Device,
            acquire: true,
        });
    }
}

#[test]
fn detection_stops_with_a_reason_when_clocks_outgrow_their_budget() {
    // Within the budgets: nothing to say (checked after every event here).
    let mut d = RaceDetector::new(32, 32);
    d.count_every = 0;
    latch(&mut d, 64);
    assert_eq!(d.over_budget(), None);
    // The same latch over a budget of entries: quadratic growth crosses it.
    let mut d = RaceDetector::new(32, 32);
    d.count_every = 0;
    d.max_entries = 1000;
    latch(&mut d, 64);
    let why = d.over_budget().expect("over the entry budget");
    assert!(why.contains("entries, over the limit of 1000"), "{why}");
    // And over a budget of join work: the detector stops working and says so.
    let mut d = RaceDetector::new(32, 32);
    d.max_work = 500;
    latch(&mut d, 64);
    let (work, entries) = (d.work, d.entries());
    let why = d.over_budget().expect("over the work budget");
    assert!(why.contains("visited more than 500 entries"), "{why}");
    latch(&mut d, 64);
    assert_eq!((d.work, d.entries()), (work, entries), "stopped");
}

#[test]
fn unsynchronised_plain_accesses_are_a_data_race() {
    // Threads 0 and 40 (different work-groups of 32 threads).
    let mut d = RaceDetector::new(32, 32);
    d.apply(acc(0, 1, AccessKind::Store, None, Scope::Device));
    d.apply(acc(40, 2, AccessKind::Load, None, Scope::Device));
    assert_eq!(kinds(&d), vec![RaceKind::Data]);
}

#[test]
fn release_acquire_at_device_scope_orders_plain_accesses() {
    let mut d = RaceDetector::new(32, 32);
    d.apply(acc(0, 1, AccessKind::Store, None, Scope::Device));
    d.apply(flag(
        0,
        2,
        AccessKind::Store,
        MemOrder::Release,
        Scope::Device,
    ));
    d.apply(flag(
        40,
        3,
        AccessKind::Load,
        MemOrder::Acquire,
        Scope::Device,
    ));
    d.apply(RaceEvent::ReadDone {
        tid: 40,
        space: Space::Global,
        addr: 0x2000,
        scope: Scope::Device,
        acquire: true,
    });
    d.apply(acc(40, 4, AccessKind::Load, None, Scope::Device));
    assert!(d.found.is_empty(), "{:?}", kinds(&d));
}

#[test]
fn work_group_scope_between_work_groups_is_a_scope_race_and_no_synchronisation() {
    let mut d = RaceDetector::new(32, 32);
    d.apply(acc(0, 1, AccessKind::Store, None, Scope::Device));
    d.apply(flag(
        0,
        2,
        AccessKind::Store,
        MemOrder::Release,
        Scope::WorkGroup,
    ));
    d.apply(flag(
        40,
        3,
        AccessKind::Load,
        MemOrder::Acquire,
        Scope::WorkGroup,
    ));
    d.apply(RaceEvent::ReadDone {
        tid: 40,
        space: Space::Global,
        addr: 0x2000,
        scope: Scope::WorkGroup,
        acquire: true,
    });
    d.apply(acc(40, 4, AccessKind::Load, None, Scope::Device));
    assert_eq!(kinds(&d), vec![RaceKind::Scope, RaceKind::Data]);
}

#[test]
fn device_scope_atomics_never_race_and_barriers_order_a_work_group() {
    let mut d = RaceDetector::new(32, 32);
    for t in [0, 40, 70] {
        d.apply(acc(
            t,
            1,
            AccessKind::Rmw,
            Some(MemOrder::Relaxed),
            Scope::Device,
        ));
    }
    assert!(d.found.is_empty());
    let mut d = RaceDetector::new(64, 32);
    d.apply(acc(3, 1, AccessKind::Store, None, Scope::Device));
    d.apply(RaceEvent::Barrier {
        tids: (0..64).collect(),
    });
    d.apply(acc(40, 2, AccessKind::Load, None, Scope::Device));
    assert!(d.found.is_empty(), "threads 3 and 40 share the barrier");
    d.apply(acc(70, 3, AccessKind::Load, None, Scope::Device));
    assert_eq!(
        kinds(&d),
        vec![RaceKind::Data],
        "thread 70 is in another group"
    );
}

#[test]
fn fences_synchronise_relaxed_accesses() {
    let mut d = RaceDetector::new(32, 32);
    d.apply(acc(0, 1, AccessKind::Store, None, Scope::Device));
    d.apply(RaceEvent::Fence {
        tid: 0,
        acquire: true,
        release: true,
        seq_cst: false,
        scope: Scope::Device,
    });
    d.apply(flag(
        0,
        2,
        AccessKind::Store,
        MemOrder::Relaxed,
        Scope::Device,
    ));
    d.apply(flag(
        40,
        3,
        AccessKind::Load,
        MemOrder::Relaxed,
        Scope::Device,
    ));
    d.apply(RaceEvent::ReadDone {
        tid: 40,
        space: Space::Global,
        addr: 0x2000,
        scope: Scope::Device,
        acquire: false,
    });
    d.apply(RaceEvent::Fence {
        tid: 40,
        acquire: true,
        release: true,
        seq_cst: false,
        scope: Scope::Device,
    });
    d.apply(acc(40, 4, AccessKind::Load, None, Scope::Device));
    assert!(d.found.is_empty(), "{:?}", kinds(&d));
}
