//! The ordering rows on the running machine: what an acquire, a release and the scope rules do to a
//! warp's accesses, timed with the `clock` special register (a read of it issues right after the
//! instruction before it, and the warp issues in program order).

use crate::config::GpuConfig;
use crate::ir::*;
use crate::tests::{buf, kernel, tiny, wl};
use crate::workload::{Init, Workload};
use crate::{run, RunOptions, RunResult};

const R: fn(Reg) -> Operand = Operand::Reg;

fn at(r: Reg) -> Address {
    Address {
        base: R(r),
        offset: 0,
    }
}

/// One warp; buffers `x` (r0) and `y` (r1); `body` ends by reading the clock into r4, captured.
fn timed(body: Vec<Inst>) -> Workload {
    let mut insts = body;
    insts.push(Inst::ReadSpecial {
        dst: 4,
        which: Special::Clock,
    });
    let k = kernel(insts, 5, 0);
    wl(
        k,
        1,
        32,
        vec![buf("x", 32, Init::Iota), buf("y", 32, Init::Zero)],
    )
}

fn run_captured(cfg: &GpuConfig, w: &Workload) -> (u64, RunResult) {
    let opts = RunOptions {
        capture: vec![(0, 4)],
        ..RunOptions::default()
    };
    let r = run(cfg, w, &opts).expect("runs");
    (r.captured[0], r)
}

fn load(dst: Reg, base: Reg, ord: LoadOrd, scope: Scope) -> Inst {
    Inst::Load {
        dst,
        space: Space::Global,
        addr: at(base),
        ty: Ty::U32,
        ord,
        scope,
    }
}

fn store(base: Reg, ord: StoreOrd, scope: Scope) -> Inst {
    Inst::Store {
        space: Space::Global,
        addr: at(base),
        src: Operand::Imm(1),
        ty: Ty::U32,
        ord,
        scope,
    }
}

#[test]
fn an_acquire_at_device_scope_holds_back_a_later_load_and_invalidates_the_l1() {
    let cfg = tiny();
    let first = |ord, scope| {
        let w = timed(vec![
            load(2, 0, ord, scope),
            load(3, 1, LoadOrd::Plain, Scope::Device),
        ]);
        run_captured(&cfg, &w)
    };
    let (relaxed, r) = first(LoadOrd::Relaxed, Scope::Device);
    assert_eq!(r.stats.get("l1", "invalidations"), Some(0.0));
    let (acquire, a) = first(LoadOrd::Acquire, Scope::Device);
    assert_eq!(a.stats.get("l1", "invalidations"), Some(1.0));
    // The acquire's round trip to L2 (crossbar both ways, the slice, a DRAM miss) comes before the
    // plain load may issue.
    assert!(
        acquire >= relaxed + 60,
        "acquire: clock {acquire}, relaxed: {relaxed}"
    );
    let (_, wg) = first(LoadOrd::Acquire, Scope::WorkGroup);
    assert_eq!(
        wg.stats.get("l1", "invalidations"),
        Some(0.0),
        "at work_group scope the L1 is the level: nothing to invalidate"
    );
}

#[test]
fn a_release_at_work_group_scope_waits_for_l1_acceptance_only() {
    let cfg = tiny();
    let release = |scope| {
        let w = timed(vec![
            store(0, StoreOrd::Plain, Scope::Device),
            store(1, StoreOrd::Release, scope),
        ]);
        run_captured(&cfg, &w).0
    };
    let (wg, dev) = (release(Scope::WorkGroup), release(Scope::Device));
    // Both wait for the plain store to leave the store buffer; only the device-scope release waits
    // for its acknowledgement from L2.
    assert!(dev >= wg + 40, "device: clock {dev}, work_group: {wg}");
    assert!(
        wg < 40,
        "work_group: clock {wg} (the drain delay and the L1, no L2 round trip)"
    );
}

#[test]
fn a_local_memory_atomic_at_system_scope_runs_on_a_device_that_supports_only_work_group_scope() {
    let mut cfg = tiny();
    cfg.support.atomic_scopes = vec![Scope::WorkItem, Scope::SubGroup, Scope::WorkGroup];
    let atom = |space, addr| Inst::Rmw {
        dst: None,
        op: RmwOp::Add,
        space,
        addr,
        operand: Operand::Imm(1),
        ty: Ty::U32,
        ord: RmwOrd::Relaxed,
        scope: Scope::System,
    };
    let zero = Address {
        base: Operand::Imm(0),
        offset: 0,
    };
    let local = wl(kernel(vec![atom(Space::Local, zero)], 2, 4), 1, 32, vec![]);
    run(&cfg, &local, &RunOptions::default()).expect("local memory narrows to work_group first");
    let global = kernel(vec![atom(Space::Global, at(0))], 2, 0);
    let w = wl(global, 1, 32, vec![buf("x", 32, Init::Zero)]);
    let e = run(&cfg, &w, &RunOptions::default())
        .expect_err("system scope on global memory is unsupported")
        .to_string();
    assert!(
        e.contains("test.kern:1:1") && e.contains("atomic scope `system`"),
        "{e}"
    );
}

#[test]
fn under_opencl_semantics_a_relaxed_work_group_load_reads_l2_not_a_stale_l1() {
    // Under OpenCL semantics the relaxed work_group load is atomic for every thread: it is served by
    // L2 (a load that bypasses the L1); under PTX semantics it keeps its scope and the L1 serves it.
    let cfg = tiny();
    let w = |semantics| {
        let mut k = kernel(vec![load(2, 0, LoadOrd::Relaxed, Scope::WorkGroup)], 3, 0);
        k.semantics = semantics;
        wl(k, 1, 32, vec![buf("x", 32, Init::Iota)])
    };
    let bypass = |s| {
        run(&cfg, &w(s), &RunOptions::default())
            .unwrap()
            .stats
            .get("l1", "bypass_loads")
            .unwrap()
    };
    assert_eq!(bypass(Semantics::Ptx), 0.0);
    assert_eq!(bypass(Semantics::OpenCl), 1.0);
}
