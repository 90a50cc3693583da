//! Machine tests on hand-built IR (the kernel language has its own tests; these pin the hardware).

use super::*;
use crate::config::{parse_str, GpuConfig};
use crate::ir::*;
use crate::workload::*;

pub(crate) fn tiny() -> GpuConfig {
    parse_str(include_str!("../../configs/tiny.toml"), "tiny.toml", &[]).unwrap()
}

pub(crate) fn kernel(insts: Vec<Inst>, nregs: usize, local_bytes: u32) -> Kernel {
    let n = insts.len();
    Kernel {
        name: "t".into(),
        file: "test.kern".into(),
        insts,
        locs: (0..n)
            .map(|i| SrcLoc {
                line: i as u32 + 1,
                col: 1,
            })
            .collect(),
        reg_names: (0..nregs).map(|i| format!("r{i}")).collect(),
        local_bytes,
        semantics: Semantics::Ptx,
    }
}

pub(crate) fn buf(name: &str, len: u64, init: Init) -> Buffer {
    Buffer {
        name: name.into(),
        elem: Ty::U32,
        len,
        init,
        loc: SrcLoc::default(),
    }
}

pub(crate) fn wl(k: Kernel, groups: u32, size: u32, buffers: Vec<Buffer>) -> Workload {
    let params = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| Param {
            name: b.name.clone(),
            reg: i as Reg,
            value: ParamValue::BufferAddr(b.name.clone()),
        })
        .collect();
    Workload {
        kernel: k,
        geometry: Geometry {
            groups: [groups, 1, 1],
            group_size: [size, 1, 1],
        },
        buffers,
        params,
        checks: vec![],
        reports: vec![],
        parameters: vec![],
    }
}

const R: fn(Reg) -> Operand = Operand::Reg;
const I: fn(u64) -> Operand = Operand::Imm;

fn addr(r: Reg) -> Address {
    Address {
        base: R(r),
        offset: 0,
    }
}

/// r1 = gid; r2 = data + gid*4
fn index_prologue(base: Reg) -> Vec<Inst> {
    vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 2,
            a: R(1),
            b: I(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 2,
            a: R(2),
            b: R(base),
        },
    ]
}

#[test]
fn stores_of_every_thread_reach_memory() {
    let mut insts = index_prologue(0);
    insts.push(Inst::Alu {
        op: AluOp::Mul,
        ty: Ty::U32,
        dst: 3,
        a: R(1),
        b: I(3),
    });
    insts.push(Inst::Store {
        space: Space::Global,
        addr: addr(2),
        src: R(3),
        ty: Ty::U32,
        ord: StoreOrd::Plain,
        scope: Scope::Device,
    });
    insts.push(Inst::Exit);
    let w = wl(
        kernel(insts, 4, 0),
        8,
        64,
        vec![buf("data", 512, Init::Zero)],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    assert!(
        r.buffers[0]
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 3 * i as u64),
        "{:?}",
        &r.buffers[0][..8]
    );
    assert!(r.cycles > 0);
}

#[test]
fn loads_return_initial_values_through_l1_and_l2() {
    let mut insts = index_prologue(0);
    insts.push(Inst::Load {
        dst: 3,
        space: Space::Global,
        addr: addr(2),
        ty: Ty::U32,
        ord: LoadOrd::Plain,
        scope: Scope::Device,
    });
    insts.push(Inst::Alu {
        op: AluOp::Add,
        ty: Ty::U32,
        dst: 3,
        a: R(3),
        b: I(1),
    });
    insts.push(Inst::Store {
        space: Space::Global,
        addr: addr(2),
        src: R(3),
        ty: Ty::U32,
        ord: StoreOrd::Plain,
        scope: Scope::Device,
    });
    insts.push(Inst::Exit);
    let w = wl(
        kernel(insts, 4, 0),
        4,
        128,
        vec![buf("data", 512, Init::Iota)],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    assert!(r.buffers[0]
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as u64 + 1));
}

fn counter_kernel(ord: RmwOrd, combine: bool, threads: u32) -> (Workload, GpuConfig) {
    let insts = vec![
        Inst::Rmw {
            dst: Some(1),
            op: RmwOp::Add,
            space: Space::Global,
            addr: addr(0),
            operand: I(1),
            ty: Ty::U32,
            ord,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let mut cfg = tiny();
    cfg.atomics.combine_same_address_lanes = combine;
    (
        wl(
            kernel(insts, 2, 0),
            threads / 64,
            64,
            vec![buf("count", 1, Init::Zero)],
        ),
        cfg,
    )
}

#[test]
fn atomic_adds_are_exact_and_combining_is_cheaper() {
    let (w, cfg) = counter_kernel(RmwOrd::Relaxed, true, 1024);
    let fast = run(&cfg, &w, &RunOptions::default()).unwrap();
    assert_eq!(fast.buffers[0][0], 1024);
    let (w, cfg) = counter_kernel(RmwOrd::Relaxed, false, 1024);
    let slow = run(&cfg, &w, &RunOptions::default()).unwrap();
    assert_eq!(slow.buffers[0][0], 1024);
    assert!(
        slow.cycles > fast.cycles,
        "serialised lanes {} vs combined {}",
        slow.cycles,
        fast.cycles
    );
}

#[test]
fn atomic_returns_distinct_old_values() {
    // Each thread stores the value its fetch-add returned at data[old]: a permutation of 0..N.
    let insts = vec![
        Inst::Rmw {
            dst: Some(2),
            op: RmwOp::Add,
            space: Space::Global,
            addr: addr(0),
            operand: I(1),
            ty: Ty::U32,
            ord: RmwOrd::Relaxed,
            scope: Scope::Device,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 3,
            a: R(2),
            b: I(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 3,
            a: R(3),
            b: R(1),
        },
        Inst::Store {
            space: Space::Global,
            addr: addr(3),
            src: I(1),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let w = wl(
        kernel(insts, 4, 0),
        4,
        96,
        vec![buf("count", 1, Init::Zero), buf("slots", 384, Init::Zero)],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    assert_eq!(r.buffers[0][0], 384);
    assert!(r.buffers[1].iter().all(|&v| v == 1));
}

#[test]
fn same_seed_same_result_and_jitter_changes_timing() {
    let mut insts = index_prologue(0);
    insts.push(Inst::Store {
        space: Space::Global,
        addr: addr(2),
        src: R(1),
        ty: Ty::U32,
        ord: StoreOrd::Plain,
        scope: Scope::Device,
    });
    insts.push(Inst::Load {
        dst: 3,
        space: Space::Global,
        addr: Address {
            base: R(2),
            offset: 4,
        },
        ty: Ty::U32,
        ord: LoadOrd::Relaxed,
        scope: Scope::Device,
    });
    insts.push(Inst::Exit);
    let w = wl(
        kernel(insts, 4, 0),
        4,
        64,
        vec![buf("data", 512, Init::Zero)],
    );
    let mut cfg = tiny();
    cfg.stress.interconnect_jitter = 20;
    let a = run(
        &cfg,
        &w,
        &RunOptions {
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    let b = run(
        &cfg,
        &w,
        &RunOptions {
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&a.stats).unwrap(),
        serde_json::to_string(&b.stats).unwrap()
    );
    let c = run(
        &cfg,
        &w,
        &RunOptions {
            seed: 6,
            ..Default::default()
        },
    )
    .unwrap();
    assert_ne!(a.cycles, 0);
    let _ = c;
}

#[test]
fn out_of_bounds_access_is_an_error_naming_the_instruction() {
    let insts = vec![
        Inst::Store {
            space: Space::Global,
            addr: Address {
                base: R(0),
                offset: 4096,
            },
            src: I(1),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let w = wl(kernel(insts, 1, 0), 1, 32, vec![buf("data", 4, Init::Zero)]);
    let e = run(&tiny(), &w, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("test.kern:1:1") && e.contains("out-of-bounds"),
        "{e}"
    );
}

#[test]
fn spinning_on_a_flag_nobody_sets_is_diagnosed_not_hung() {
    // loop: r1 = ld.relaxed.device flag; if r1 == 0 goto loop
    let insts = vec![
        Inst::Load {
            dst: 1,
            space: Space::Global,
            addr: addr(0),
            ty: Ty::U32,
            ord: LoadOrd::Relaxed,
            scope: Scope::Device,
        },
        Inst::Branch {
            target: 0,
            cond: Some((1, false)),
        },
        Inst::Exit,
    ];
    let w = wl(kernel(insts, 2, 0), 2, 32, vec![buf("flag", 1, Init::Zero)]);
    let mut cfg = tiny();
    cfg.watchdog.no_progress_cycles = 5000;
    let e = run(&cfg, &w, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no forward progress") && e.contains("flag[0]") && e.contains("test.kern:2:1"),
        "{e}"
    );
}

#[test]
fn barrier_orders_local_memory_between_warps() {
    // Each thread writes local[lid] = lid; barrier; reads local[(lid+32) % 64] and stores to global.
    let insts = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::LocalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U32,
            dst: 2,
            a: R(1),
            b: I(2),
        },
        Inst::Store {
            space: Space::Local,
            addr: addr(2),
            src: R(1),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::WorkGroup,
        },
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::BOTH,
            scope: Scope::WorkGroup,
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U32,
            dst: 3,
            a: R(1),
            b: I(32),
        },
        Inst::Alu {
            op: AluOp::Rem,
            ty: Ty::U32,
            dst: 3,
            a: R(3),
            b: I(64),
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U32,
            dst: 3,
            a: R(3),
            b: I(2),
        },
        Inst::Load {
            dst: 3,
            space: Space::Local,
            addr: addr(3),
            ty: Ty::U32,
            ord: LoadOrd::Plain,
            scope: Scope::WorkGroup,
        },
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 2,
            a: R(1),
            b: I(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 2,
            a: R(2),
            b: R(0),
        },
        Inst::Store {
            space: Space::Global,
            addr: addr(2),
            src: R(3),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let w = wl(
        kernel(insts, 4, 256),
        3,
        64,
        vec![buf("out", 192, Init::Zero)],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    for (i, &v) in r.buffers[0].iter().enumerate() {
        assert_eq!(v, ((i % 64 + 32) % 64) as u64, "thread {i}");
    }
}

/// MP: writer `st x=1; st y=1`, reader `r3 = ld y; r4 = ld x`, N instances in one launch, writer and
/// reader in different work-groups (different SMs). Returns how often (r3, r4) == (1, 0).
fn mp_weak_count(
    cfg: &GpuConfig,
    st_y: StoreOrd,
    ld_y: LoadOrd,
    fence: bool,
    n: u32,
    seed: u64,
) -> u32 {
    let mut insts = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GroupLinearId,
        },
        Inst::Alu {
            op: AluOp::Shr,
            ty: Ty::U64,
            dst: 2,
            a: R(1),
            b: I(1),
        }, // instance
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 3,
            a: R(2),
            b: I(8),
        }, // 256 bytes per instance
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 3,
            a: R(3),
            b: R(0),
        }, // &x; &y = +128
        Inst::Alu {
            op: AluOp::And,
            ty: Ty::U64,
            dst: 4,
            a: R(1),
            b: I(1),
        }, // role
        Inst::Branch {
            target: 9,
            cond: Some((4, true)),
        },
        // writer (pc 6)
        Inst::Store {
            space: Space::Global,
            addr: addr(3),
            src: I(1),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Store {
            space: Space::Global,
            addr: Address {
                base: R(3),
                offset: 128,
            },
            src: I(1),
            ty: Ty::U32,
            ord: st_y,
            scope: Scope::Device,
        },
        Inst::Exit,
        // reader (pc 9)
        Inst::Load {
            dst: 5,
            space: Space::Global,
            addr: Address {
                base: R(3),
                offset: 128,
            },
            ty: Ty::U32,
            ord: ld_y,
            scope: Scope::Device,
        },
    ];
    if fence {
        insts.push(Inst::Fence {
            ord: FenceOrd::AcqRel,
            scope: Scope::Device,
            spaces: SpaceSet::GLOBAL,
        });
    }
    insts.extend([
        Inst::Load {
            dst: 6,
            space: Space::Global,
            addr: addr(3),
            ty: Ty::U32,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 7,
            a: R(2),
            b: I(3),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 7,
            a: R(7),
            b: R(8),
        },
        Inst::Store {
            space: Space::Global,
            addr: addr(7),
            src: R(5),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Store {
            space: Space::Global,
            addr: Address {
                base: R(7),
                offset: 4,
            },
            src: R(6),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ]);
    let mut k = kernel(insts, 9, 0);
    k.reg_names[8] = "out".into();
    let mut w = wl(
        k,
        2 * n,
        1,
        vec![
            buf("mem", n as u64 * 64, Init::Zero),
            buf("out", 2 * n as u64, Init::Zero),
        ],
    );
    w.params = vec![
        Param {
            name: "mem".into(),
            reg: 0,
            value: ParamValue::BufferAddr("mem".into()),
        },
        Param {
            name: "out".into(),
            reg: 8,
            value: ParamValue::BufferAddr("out".into()),
        },
    ];
    let r = run(
        cfg,
        &w,
        &RunOptions {
            seed,
            ..Default::default()
        },
    )
    .unwrap();
    (0..n as usize)
        .filter(|&i| r.buffers[1][2 * i] == 1 && r.buffers[1][2 * i + 1] == 0)
        .count() as u32
}

pub(crate) fn stressed() -> GpuConfig {
    let mut c = tiny();
    c.stress.interconnect_jitter = 40;
    c.stress.drain_jitter = 40;
    c.stress.start_skew = 60;
    c.stress.prewarm_l1 = true;
    c.store_buffer.drain_delay = 10;
    c
}

#[test]
fn mp_release_acquire_never_shows_the_forbidden_outcome() {
    for cfg in [tiny(), stressed()] {
        for seed in 0..20 {
            assert_eq!(
                mp_weak_count(&cfg, StoreOrd::Release, LoadOrd::Acquire, false, 16, seed),
                0,
                "seed {seed}"
            );
            assert_eq!(
                mp_weak_count(&cfg, StoreOrd::Release, LoadOrd::Relaxed, true, 16, seed),
                0,
                "fence, seed {seed}"
            );
        }
    }
}

#[test]
fn mp_relaxed_shows_weak_outcome_under_stress() {
    let cfg = stressed();
    let weak: u32 = (0..20)
        .map(|s| mp_weak_count(&cfg, StoreOrd::Relaxed, LoadOrd::Relaxed, false, 16, s))
        .sum();
    assert!(weak > 0, "relaxed MP never weak under stress");
}

#[test]
fn warps_exiting_with_atomics_in_flight_do_not_disturb_later_warps_in_their_slot() {
    // Each thread loads 1 and adds it with a non-returning atomic, then exits; 8x more groups than
    // fit, so warp slots are reused while the previous warp's atomics are still on their way and the
    // new warp waits for its own load.
    let insts = vec![
        Inst::Load {
            dst: 2,
            space: Space::Global,
            addr: addr(1),
            ty: Ty::U32,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Rmw {
            dst: None,
            op: RmwOp::Add,
            space: Space::Global,
            addr: addr(0),
            operand: R(2),
            ty: Ty::U32,
            ord: RmwOrd::Relaxed,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let w = wl(
        kernel(insts, 3, 0),
        64,
        256,
        vec![buf("count", 1, Init::Zero), buf("one", 1, Init::Fill(1))],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    assert_eq!(r.buffers[0][0], 64 * 256);
}

#[test]
fn run_rejects_an_invalid_config_built_in_code() {
    let mut cfg = tiny();
    cfg.l2.ways = 3;
    let w = wl(kernel(vec![Inst::Exit], 1, 0), 1, 32, vec![]);
    let e = run(&cfg, &w, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("config \"tiny test GPU\": l2.size_bytes = 65536: must be"),
        "{e}"
    );
}

#[test]
fn a_store_scattered_over_more_lines_than_the_store_buffer_holds_completes() {
    // Each lane stores to its own 128-byte line: 32 lines per warp-store, the buffer holds 8.
    let insts = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 2,
            a: R(1),
            b: I(7),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 2,
            a: R(2),
            b: R(0),
        },
        Inst::Store {
            space: Space::Global,
            addr: addr(2),
            src: I(5),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Store {
            space: Space::Global,
            addr: Address {
                base: R(2),
                offset: 4,
            },
            src: R(1),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let w = wl(
        kernel(insts, 3, 0),
        2,
        64,
        vec![buf("data", 128 * 32, Init::Zero)],
    );
    let r = run(&tiny(), &w, &RunOptions::default()).unwrap();
    for t in 0..128usize {
        assert_eq!(r.buffers[0][t * 32], 5);
        assert_eq!(r.buffers[0][t * 32 + 1], t as u64);
    }
}

/// A scattered load and store (32 lines per warp) and an atomic count, over 4 groups of 64: each
/// thread `t` stores `t` into word 0 of line `t` of `data`, and `count` ends at 256.
fn scattered_store_and_count() -> Workload {
    let insts = vec![
        Inst::ReadSpecial {
            dst: 2,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 3,
            a: R(2),
            b: I(7),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 3,
            a: R(3),
            b: R(0),
        },
        // A load of the line first: 32 misses per warp, more than the L1's MSHRs, so requests
        // queue in the L1 and fill the port.
        Inst::Load {
            dst: 4,
            space: Space::Global,
            addr: Address {
                base: R(3),
                offset: 4,
            },
            ty: Ty::U32,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Store {
            space: Space::Global,
            addr: addr(3),
            src: R(2),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Rmw {
            dst: None,
            op: RmwOp::Add,
            space: Space::Global,
            addr: addr(1),
            operand: I(1),
            ty: Ty::U32,
            ord: RmwOrd::Relaxed,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    wl(
        kernel(insts, 5, 0),
        4,
        64,
        vec![
            buf("data", 128 * 64, Init::Zero),
            buf("count", 1, Init::Zero),
        ],
    )
}

/// What [`scattered_store_and_count`] must compute.
fn assert_scattered_store_and_count(r: &RunResult) {
    for t in 0..256usize {
        assert_eq!(r.buffers[0][t * 32], t as u64);
    }
    assert_eq!(r.buffers[1][0], 256);
}

#[test]
fn a_bounded_l1_port_pushes_back_without_changing_what_the_kernel_computes() {
    // 32 lines per warp, wider than the port: with a port of 4 requests the warps wait for room,
    // and every value is the same.
    let w = scattered_store_and_count();
    let mut free = tiny();
    free.l1.mshrs = 2;
    let mut bounded = free.clone();
    bounded.sm.l1_port_depth = 4;
    let free = run(&free, &w, &RunOptions::default()).unwrap();
    let tight = run(&bounded, &w, &RunOptions::default()).unwrap();
    for r in [&free, &tight] {
        assert_scattered_store_and_count(r);
    }
    let stall = |r: &RunResult| r.stats.get("sm", "l1_port_stall");
    assert_eq!(stall(&free), None, "an unbounded port reports no stall");
    assert!(
        stall(&tight).unwrap() > 0.0,
        "the warps waited for the port"
    );
    assert!(tight.cycles >= free.cycles);
}

#[test]
fn l2_input_credits_push_back_without_changing_what_the_kernel_computes() {
    // 32 lines per warp spread over the slices: with one or two credits per SM and slice the L1s
    // wait for credits, and every value is the same; credits that never run out change nothing.
    let w = scattered_store_and_count();
    let with = |depth: u32, threads: usize| {
        let mut c = tiny();
        c.l2.input_depth = depth;
        let opts = RunOptions {
            threads,
            ..RunOptions::default()
        };
        run(&c, &w, &opts).unwrap()
    };
    let stat = |r: &RunResult, m: &str| r.stats.get("l2", m);
    let free = with(0, 1);
    assert_scattered_store_and_count(&free);
    assert!(!free.summary(&tiny()).contains("L2 input"));
    for m in [
        "input_credit_waits",
        "input_credit_wait",
        "input_credits_max_in_use",
        "input_max_queued",
    ] {
        assert_eq!(stat(&free, m), None, "an unbounded input reports no {m}");
    }
    // As many credits as the run ever needs: the bound never binds, and the cycles, values and
    // statistics of the unbounded machine are kept (the credits' own events aside).
    let ample = with(DEPTH_NEVER_REACHED, 1);
    assert_scattered_store_and_count(&ample);
    assert_eq!(ample.cycles, free.cycles);
    assert_eq!(stat(&ample, "input_credit_waits"), Some(0.0));
    assert_eq!(stat(&ample, "misses"), stat(&free, "misses"));
    let mut waited = Vec::new();
    for depth in [1u32, 2] {
        let tight = with(depth, 1);
        assert_scattered_store_and_count(&tight);
        let waits = stat(&tight, "input_credit_waits").unwrap();
        assert!(waits > 0.0, "depth {depth}: the L1s waited for credits");
        assert!(stat(&tight, "input_credit_wait").unwrap() > 0.0);
        let in_use = stat(&tight, "input_credits_max_in_use").unwrap();
        assert!(
            in_use >= 1.0 && in_use <= depth as f64,
            "depth {depth}: {in_use} credits in use"
        );
        let mut c = tiny();
        c.l2.input_depth = depth;
        let line = format!(
            "L2 input          {depth} credits per SM and slice: {waits:.0} requests waited"
        );
        assert!(tight.summary(&c).contains(&line), "{}", tight.summary(&c));
        // The same run on two threads: the credits cross between domains at the barrier, in one
        // order whatever the threads.
        let two = with(depth, 2);
        assert_eq!(two.cycles, tight.cycles);
        assert_eq!(two.stats, tight.stats, "depth {depth}: one thread or two");
        waited.push(waits);
    }
    assert!(
        waited[0] >= waited[1],
        "fewer credits, more waits: {waited:?}"
    );
}

/// Credits per SM and slice that [`scattered_store_and_count`] never runs out of (it sends fewer
/// requests than this in all).
const DEPTH_NEVER_REACHED: u32 = 4096;

/// One work-item: `n` relaxed stores at device scope to distinct lines, each followed by an acq_rel
/// fence at `scope`.
fn store_fence_loop(scope: Scope, n: u64) -> Workload {
    let mut insts = Vec::new();
    for i in 0..n {
        insts.push(Inst::Store {
            space: Space::Global,
            addr: Address {
                base: R(0),
                offset: i as i64 * 128,
            },
            src: I(i),
            ty: Ty::U32,
            ord: StoreOrd::Relaxed,
            scope: Scope::Device,
        });
        insts.push(Inst::Fence {
            ord: FenceOrd::AcqRel,
            scope,
            spaces: SpaceSet::BOTH,
        });
    }
    insts.push(Inst::Exit);
    wl(
        kernel(insts, 1, 0),
        1,
        1,
        vec![buf("data", 32 * n, Init::Zero)],
    )
}

#[test]
fn a_device_or_system_release_waits_for_every_slice_to_answer_its_membar() {
    const N: u64 = 8;
    let with = |scope: Scope, ack: Option<u32>, svm: bool, threads: usize| {
        let mut c = tiny();
        c.l2.membar_ack = ack;
        c.system.svm = svm;
        let opts = RunOptions {
            threads,
            ..RunOptions::default()
        };
        run(&c, &store_fence_loop(scope, N), &opts).unwrap()
    };
    // tiny: the core and L2 clocks are equal, so L2 cycles are core cycles.
    let c = tiny();
    assert_eq!(c.clocks.core_mhz, c.clocks.l2_mhz);
    let base = with(Scope::Device, None, false, 1);
    let zero = with(Scope::Device, Some(0), false, 1);
    let slow = with(Scope::Device, Some(100), false, 1);
    let slower = with(Scope::Device, Some(200), false, 1);
    // Each fence's membar is answered 100 L2 cycles later by every slice: 100 cycles a fence. (From
    // 0, less: an answer at once shares the response port with the store's acknowledgement.)
    assert_eq!(
        slower.cycles - slow.cycles,
        N * 100,
        "{} {}",
        slower.cycles,
        slow.cycles
    );
    assert!(slow.cycles > zero.cycles, "{} {}", slow.cycles, zero.cycles);
    // Even answered at once, each membar is a round trip over the interconnect.
    let trip = 2 * c.interconnect.latency as u64;
    assert!(zero.cycles >= N * trip, "{} {}", zero.cycles, N * trip);
    // A work-group fence has no membar: its level is the L1.
    let wg = |ack| with(Scope::WorkGroup, ack, false, 1).cycles;
    assert_eq!(wg(None), wg(Some(100)));
    // At system scope with shared virtual memory, the system point's round trip after the slices';
    // without it, system scope is device scope.
    let sys = with(Scope::System, Some(100), true, 1);
    // (To the cycle edge: within a cycle a fence.)
    let extra = sys.cycles - slow.cycles;
    let want = N * c.system.latency as u64;
    assert!(
        (want - N..=want).contains(&extra),
        "{extra} cycles more at system scope, not {want}"
    );
    assert_eq!(with(Scope::System, Some(100), false, 1).cycles, slow.cycles);
    // Two threads: the tokens and answers cross domains in one order.
    let two = with(Scope::Device, Some(100), false, 2);
    assert_eq!((two.cycles, &two.stats), (slow.cycles, &slow.stats));
    // What the kernel stored is stored, whatever the membar.
    for r in [&base, &slow, &sys] {
        assert_eq!(r.stats.get("l2", "writes"), Some(N as f64));
    }
}
