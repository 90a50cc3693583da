//! The physical-GPU backend: IR → WGSL translation (validated by naga, no adapter needed), rejection of
//! what WGSL cannot express, and — on an adapter (lavapipe in CI) — differential runs against the
//! simulator, faults, barriers and timing.
//!
//! Adapter tests skip with a message where no adapter exists, unless `GPUMEMSIM_REQUIRE_ADAPTER=1`
//! (CI sets it), in which case a missing adapter fails them. [`adapter_or_skip`] is the one place
//! that decides.

use gpumemsim::config::{parse_str, GpuConfig};
use gpumemsim::device::wgsl::{self, Caps, Options};
use gpumemsim::device::{Device, DeviceError};
use gpumemsim::ir::*;
use gpumemsim::machine::{self, RunOptions};
use gpumemsim::workload::*;

/// The adapter for a test, or `None` (with a skip message) where there is none and
/// `GPUMEMSIM_REQUIRE_ADAPTER` is not `1`.
pub fn adapter_or_skip(test: &str) -> Option<Device> {
    let required = std::env::var("GPUMEMSIM_REQUIRE_ADAPTER").as_deref() == Ok("1");
    match Device::open(None) {
        Ok(g) => Some(g),
        Err(DeviceError::NoAdapter) if !required => {
            eprintln!(
                "skipped {test}: no adapter ({}); set GPUMEMSIM_REQUIRE_ADAPTER=1 to make this a failure",
                gpumemsim::device::adapter::INSTALL_HINT
            );
            None
        }
        Err(e) => panic!("{test}: no usable adapter: {e}"),
    }
}

pub fn tiny() -> GpuConfig {
    parse_str(include_str!("../../configs/tiny.toml"), "tiny.toml", &[]).unwrap()
}

const R: fn(Reg) -> Operand = Operand::Reg;
const I: fn(u64) -> Operand = Operand::Imm;

pub fn at(base: Reg, offset: i64) -> Address {
    Address {
        base: R(base),
        offset,
    }
}

pub fn kernel(insts: Vec<Inst>, nregs: usize, local_bytes: u32) -> Kernel {
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

/// A 1-D workload whose buffers' addresses are preloaded into registers 0, 1, … in order.
pub fn workload(
    k: Kernel,
    groups: u32,
    size: u32,
    buffers: Vec<(&str, Ty, u64, Init)>,
) -> Workload {
    let buffers: Vec<Buffer> = buffers
        .into_iter()
        .map(|(name, elem, len, init)| Buffer {
            name: name.into(),
            elem,
            len,
            init,
            loc: SrcLoc::default(),
        })
        .collect();
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

/// `dst = base + 4 * gid` (u64 address arithmetic, as front ends emit it); gid in `gid_reg`.
pub fn index(dst: Reg, base: Reg, gid_reg: Reg, shift: u64) -> Vec<Inst> {
    vec![
        Inst::ReadSpecial {
            dst: gid_reg,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst,
            a: R(gid_reg),
            b: I(shift),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst,
            a: R(dst),
            b: R(base),
        },
    ]
}

pub fn load(dst: Reg, space: Space, addr: Address, ty: Ty) -> Inst {
    Inst::Load {
        dst,
        space,
        addr,
        ty,
        ord: LoadOrd::Plain,
        scope: Scope::Device,
    }
}

pub fn store(space: Space, addr: Address, src: Operand, ty: Ty) -> Inst {
    Inst::Store {
        space,
        addr,
        src,
        ty,
        ord: StoreOrd::Plain,
        scope: Scope::Device,
    }
}

pub fn rmw(dst: Option<Reg>, op: RmwOp, space: Space, addr: Address, v: Operand, ty: Ty) -> Inst {
    Inst::Rmw {
        dst,
        op,
        space,
        addr,
        operand: v,
        ty,
        ord: RmwOrd::Relaxed,
        scope: Scope::Device,
    }
}

fn wg_barrier(spaces: SpaceSet) -> Inst {
    Inst::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces,
        scope: Scope::WorkGroup,
    }
}

fn alu(op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) -> Inst {
    Inst::Alu { op, ty, dst, a, b }
}

/// Every ALU operation on every type, plus compares, selects and conversions: thread i reads
/// `a[i]`, `b[i]` and writes one result per operation into `out[i * per + j]` (raw 64-bit bits).
fn arithmetic_workload(threads: u32) -> (Workload, usize) {
    use AluOp::*;
    // r0 = a, r1 = b, r2 = out; r3 gid; r4 &a[i]; r5 &b[i]; r6 x; r7 y; r8 &out[i*per]; r9 result
    let mut insts = index(4, 0, 3, 3);
    insts.extend(index(5, 1, 3, 3));
    insts.push(load(6, Space::Global, at(4, 0), Ty::U64));
    insts.push(load(7, Space::Global, at(5, 0), Ty::U64));
    // Keep divisors non-zero and away from MIN / -1.
    insts.push(alu(Or, Ty::U64, 7, R(7), I(1)));
    insts.push(alu(And, Ty::U64, 7, R(7), I(0x7FFF_FFFF_7FFF_FFFF)));
    let mut ops: Vec<Inst> = Vec::new();
    for ty in [Ty::U32, Ty::I32, Ty::U64, Ty::I64] {
        for op in [Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor, Shl, Shr] {
            ops.push(alu(op, ty, 9, R(6), R(7)));
        }
        for op in [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
        ] {
            ops.push(Inst::Cmp {
                op,
                ty,
                dst: 9,
                a: R(6),
                b: R(7),
            });
        }
    }
    // Immediates, negative offsets of i32, selects.
    ops.push(alu(Add, Ty::I32, 9, R(6), I((-7i64) as u64)));
    ops.push(alu(Shr, Ty::I32, 9, R(6), I(3)));
    ops.push(alu(Shr, Ty::I64, 9, R(6), I(61)));
    ops.push(Inst::Select {
        dst: 9,
        cond: 6,
        a: R(7),
        b: I(5),
    });
    // Conversions from every type to every type; f32 from small integers so that results are exact.
    for from in [Ty::U32, Ty::I32, Ty::U64, Ty::I64] {
        for to in [Ty::U32, Ty::I32, Ty::U64, Ty::I64] {
            ops.push(Inst::Cvt {
                dst: 9,
                src: 6,
                from,
                to,
            });
        }
    }
    // f32 edge values to every integer type (saturating at the type's range, NaN 0: the range's
    // top is no f32, so the translators select it).
    let edges = [
        3.0e10f32,
        -3.0e10,
        2147483648.0,
        4294967296.0,
        1.0e20,
        f32::NAN,
        f32::INFINITY,
        -2.7,
    ];
    // Result j of thread i at out[j * threads + i], so that a warp's stores coalesce.
    let per = ops.len() + 6 + 4 * edges.len();
    let slot = |j: usize| 8 * (j as i64) * threads as i64;
    insts.extend(index(8, 2, 3, 3));
    for (j, op) in ops.into_iter().enumerate() {
        insts.push(op);
        insts.push(store(Space::Global, at(8, slot(j)), R(9), Ty::U64));
    }
    // f32: small integers converted, then add/sub/mul/min/max and back.
    let j0 = per - 6 - 4 * edges.len();
    insts.push(alu(And, Ty::U32, 10, R(6), I(0xFFFF)));
    insts.push(alu(And, Ty::U32, 11, R(7), I(0xFF)));
    insts.push(Inst::Cvt {
        dst: 10,
        src: 10,
        from: Ty::U32,
        to: Ty::F32,
    });
    insts.push(Inst::Cvt {
        dst: 11,
        src: 11,
        from: Ty::I32,
        to: Ty::F32,
    });
    for (j, op) in [Add, Sub, Mul, Min, Max].into_iter().enumerate() {
        insts.push(alu(op, Ty::F32, 9, R(10), R(11)));
        insts.push(store(Space::Global, at(8, slot(j0 + j)), R(9), Ty::U64));
    }
    insts.push(Inst::Cvt {
        dst: 9,
        src: 10,
        from: Ty::F32,
        to: Ty::I32,
    });
    insts.push(store(Space::Global, at(8, slot(j0 + 5)), R(9), Ty::U64));
    let mut j = j0 + 6;
    for e in edges {
        for to in [Ty::U32, Ty::I32, Ty::U64, Ty::I64] {
            insts.push(alu(Or, Ty::U64, 9, I(e.to_bits() as u64), I(0)));
            insts.push(Inst::Cvt {
                dst: 9,
                src: 9,
                from: Ty::F32,
                to,
            });
            insts.push(store(Space::Global, at(8, slot(j)), R(9), Ty::U64));
            j += 1;
        }
    }
    insts.push(Inst::Exit);
    let n = threads as u64;
    let w = workload(
        kernel(insts, 12, 0),
        threads / 32,
        32,
        vec![
            ("a", Ty::U64, n, Init::Random { seed: 1, modulo: 0 }),
            ("b", Ty::U64, n, Init::Random { seed: 2, modulo: 0 }),
            ("out", Ty::U64, n * per as u64, Init::Zero),
        ],
    );
    (w, per)
}

/// Work-group reduction through local memory with barriers, then one global atomic per group.
fn local_reduction_workload(groups: u32, size: u32) -> Workload {
    use AluOp::*;
    // r0 = data, r1 = total; r2 gid; r3 &data[i]; r4 v; r5 lid; r6 local addr; r7 stride; r8 partner
    let mut insts = index(3, 0, 2, 2);
    insts.push(load(4, Space::Global, at(3, 0), Ty::U32));
    insts.push(Inst::ReadSpecial {
        dst: 5,
        which: Special::LocalLinearId,
    });
    insts.push(alu(Shl, Ty::U32, 6, R(5), I(2)));
    insts.push(store(Space::Local, at(6, 0), R(4), Ty::U32));
    insts.push(wg_barrier(SpaceSet::LOCAL));
    insts.push(Inst::Mov {
        dst: 7,
        src: I(size as u64 / 2),
    });
    // loop (pc = 10): if lid < stride { local[lid] += local[lid + stride] }; barrier; stride >>= 1
    let top = insts.len() as u32;
    insts.push(Inst::Cmp {
        op: CmpOp::Lt,
        ty: Ty::U32,
        dst: 8,
        a: R(5),
        b: R(7),
    });
    let skip_at = insts.len();
    insts.push(Inst::Branch {
        target: 0,
        cond: Some((8, false)),
    });
    insts.push(alu(Add, Ty::U32, 8, R(5), R(7)));
    insts.push(alu(Shl, Ty::U32, 8, R(8), I(2)));
    insts.push(load(9, Space::Local, at(8, 0), Ty::U32));
    insts.push(load(4, Space::Local, at(6, 0), Ty::U32));
    insts.push(alu(Add, Ty::U32, 4, R(4), R(9)));
    insts.push(store(Space::Local, at(6, 0), R(4), Ty::U32));
    let after = insts.len() as u32;
    insts[skip_at] = Inst::Branch {
        target: after,
        cond: Some((8, false)),
    };
    insts.push(wg_barrier(SpaceSet::LOCAL));
    insts.push(alu(Shr, Ty::U32, 7, R(7), I(1)));
    insts.push(Inst::Branch {
        target: top,
        cond: Some((7, true)),
    });
    // lid == 0: atomic add of local[0] into total
    let exit_at = insts.len() as u32 + 4;
    insts.push(Inst::Branch {
        target: exit_at,
        cond: Some((5, true)),
    });
    insts.push(load(4, Space::Local, at(6, 0), Ty::U32));
    insts.push(rmw(
        None,
        RmwOp::Add,
        Space::Global,
        at(1, 0),
        R(4),
        Ty::U32,
    ));
    insts.push(Inst::Exit);
    insts.push(Inst::Exit);
    let n = (groups * size) as u64;
    let mut w = workload(
        kernel(insts, 10, size * 4),
        groups,
        size,
        vec![
            ("data", Ty::U32, n, Init::Iota),
            ("total", Ty::U32, 1, Init::Zero),
        ],
    );
    w.checks.push(Check {
        text: "total[0] == n(n-1)/2".into(),
        loc: SrcLoc { line: 99, col: 1 },
        lhs: Expr::Elem {
            buffer: "total".into(),
            index: Box::new(Expr::Const(0)),
        },
        op: CheckOp::Eq,
        rhs: Expr::Const((n * (n - 1) / 2) as i64),
        forall: None,
    });
    w
}

/// Every atomic operation on one counter per operation, by every thread, native and emulated.
fn atomics_workload(groups: u32, size: u32) -> Workload {
    // r0 = c32, r1 = c64, r2 = ci32; r3 gid; r4 results
    let mut insts = vec![Inst::ReadSpecial {
        dst: 3,
        which: Special::GlobalLinearId,
    }];
    let ops32 = [
        RmwOp::Add,
        RmwOp::Sub,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
        RmwOp::Min,
        RmwOp::Max,
        RmwOp::Inc,
        RmwOp::Dec,
    ];
    for (j, op) in ops32.iter().enumerate() {
        insts.push(rmw(
            None,
            *op,
            Space::Global,
            at(0, 4 * j as i64),
            R(3),
            Ty::U32,
        ));
        insts.push(rmw(
            None,
            *op,
            Space::Global,
            at(1, 8 * j as i64),
            R(3),
            Ty::U64,
        ));
    }
    insts.push(rmw(
        None,
        RmwOp::Min,
        Space::Global,
        at(2, 0),
        R(3),
        Ty::I32,
    ));
    insts.push(rmw(
        None,
        RmwOp::Max,
        Space::Global,
        at(2, 4),
        R(3),
        Ty::I32,
    ));
    insts.push(Inst::Cvt {
        dst: 4,
        src: 3,
        from: Ty::U32,
        to: Ty::F32,
    });
    insts.push(rmw(
        None,
        RmwOp::Add,
        Space::Global,
        at(2, 8),
        R(4),
        Ty::F32,
    ));
    insts.push(Inst::Exit);
    workload(
        kernel(insts, 5, 0),
        groups,
        size,
        vec![
            ("c32", Ty::U32, 9, Init::Fill(1000)),
            ("c64", Ty::U64, 9, Init::Fill(1000)),
            ("ci32", Ty::I32, 3, Init::Values(vec![0, 0, 0])),
        ],
    )
}

fn translates(w: &Workload) -> wgsl::Translation {
    let t = wgsl::translate(w, Caps::ALL, Options::default()).unwrap();
    if let Err(e) = wgsl::validate(t.shader.wgsl().unwrap()) {
        panic!(
            "naga rejects the translation:\n{e}\n{}",
            t.shader.wgsl().unwrap()
        );
    }
    t
}

#[test]
fn translation_of_arithmetic_barriers_and_atomics_is_valid_wgsl() {
    let t = translates(&arithmetic_workload(64).0);
    assert!(t.needs.int64, "64-bit registers need SHADER_INT64");
    let t = translates(&local_reduction_workload(2, 64));
    assert!(t.shader.wgsl().unwrap().contains("workgroupUniformLoad"));
    assert!(!t.needs.int64 || t.shader.wgsl().unwrap().contains("u64"));
    let t = translates(&atomics_workload(2, 64));
    let emulated = t.emulated.join("\n");
    for what in ["inc on u32", "dec on u32", "inc on u64", "add on f32"] {
        assert!(emulated.contains(what), "{what} not listed in {emulated}");
    }
    assert!(
        !emulated.contains("add on u32") && !emulated.contains("min on i32"),
        "native atomics listed as emulated: {emulated}"
    );
}

#[test]
fn registers_holding_32_bit_values_stay_32_bit() {
    // A kernel with only 32-bit arithmetic and addresses needs no 64-bit integers.
    let insts = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalLinearId,
        },
        alu(AluOp::Shl, Ty::U32, 2, R(1), I(2)),
        alu(AluOp::Add, Ty::U32, 2, R(2), R(0)),
        store(Space::Global, at(2, 0), R(1), Ty::U32),
        Inst::Exit,
    ];
    let w = workload(
        kernel(insts, 3, 0),
        1,
        32,
        vec![("d", Ty::U32, 32, Init::Zero)],
    );
    let t = translates(&w);
    assert!(!t.needs.int64, "{}", t.shader.wgsl().unwrap());
    assert!(
        !t.shader.wgsl().unwrap().contains("u64"),
        "{}",
        t.shader.wgsl().unwrap()
    );
}

/// What WGSL cannot express is rejected, naming the instruction's line.
#[test]
fn orders_fences_and_wide_barriers_are_rejected_with_their_location() {
    let cases: Vec<(Inst, &str)> = vec![
        (
            Inst::Load {
                dst: 1,
                space: Space::Global,
                addr: at(0, 0),
                ty: Ty::U32,
                ord: LoadOrd::Acquire,
                scope: Scope::Device,
            },
            "acquire",
        ),
        (
            Inst::Store {
                space: Space::Global,
                addr: at(0, 0),
                src: I(1),
                ty: Ty::U32,
                ord: StoreOrd::Release,
                scope: Scope::Device,
            },
            "release",
        ),
        (
            Inst::Rmw {
                dst: None,
                op: RmwOp::Add,
                space: Space::Global,
                addr: at(0, 0),
                operand: I(1),
                ty: Ty::U32,
                ord: RmwOrd::AcqRel,
                scope: Scope::Device,
            },
            "acq_rel",
        ),
        (
            Inst::Fence {
                ord: FenceOrd::SeqCst,
                scope: Scope::Device,
                spaces: SpaceSet::GLOBAL,
            },
            "no fences",
        ),
        (
            Inst::Barrier {
                kind: BarrierKind::WorkGroup,
                spaces: SpaceSet::GLOBAL,
                scope: Scope::Device,
            },
            "device scope",
        ),
        (
            Inst::ReadSpecial {
                dst: 1,
                which: Special::Clock,
            },
            "clock",
        ),
    ];
    for (inst, what) in cases {
        let insts = vec![Inst::Mov { dst: 1, src: I(0) }, inst.clone(), Inst::Exit];
        let w = workload(
            kernel(insts, 2, 0),
            1,
            32,
            vec![("d", Ty::U32, 4, Init::Zero)],
        );
        let e = wgsl::translate(&w, Caps::ALL, Options::default()).unwrap_err();
        assert_eq!(e.location, "test.kern:2:1", "{inst:?}");
        assert!(e.message.contains(what), "{inst:?}: {}", e.message);
    }
    // 64-bit values need SHADER_INT64: rejected on an adapter without it.
    let (w, _) = arithmetic_workload(32);
    let e = wgsl::translate(&w, Caps::default(), Options::default()).unwrap_err();
    assert!(e.message.contains("SHADER_INT64"), "{e}");
    assert!(e.location.starts_with("test.kern:"), "{e}");
}

/// The shader paths `gpu` runs: WGSL, and SPIR-V where it takes SPIR-V passthrough.
fn paths(gpu: &Device) -> &'static [gpumemsim::device::schema::ShaderPath] {
    use gpumemsim::device::schema::ShaderPath;
    if gpu.passthrough {
        &[ShaderPath::Wgsl, ShaderPath::Spirv]
    } else {
        &[ShaderPath::Wgsl]
    }
}

fn sim(w: &Workload) -> machine::RunResult {
    machine::run(&tiny(), w, &RunOptions::default()).expect("simulates")
}

/// The same workload gives the same final memory on the simulator and on the adapter.
#[test]
fn arithmetic_on_the_adapter_matches_the_simulator_bit_for_bit() {
    let Some(gpu) = adapter_or_skip("arithmetic_on_the_adapter_matches_the_simulator_bit_for_bit")
    else {
        return;
    };
    let (w, _) = arithmetic_workload(64);
    let expect = sim(&w);
    // Both translators: WGSL, and SPIR-V where the adapter takes it.
    for &path in paths(&gpu) {
        let p = gpu.compile_with(&w, Options::default(), path).unwrap();
        let (got, _) = p.run_checked().unwrap();
        let out = 2;
        let mut diffs = Vec::new();
        for (i, (g, e)) in got.buffers[out]
            .iter()
            .zip(&expect.buffers[out])
            .enumerate()
        {
            if g != e {
                diffs.push(format!(
                    "op {} thread {}: gpu {g:#x} sim {e:#x}",
                    i / 64,
                    i % 64
                ));
            }
        }
        assert!(
            diffs.is_empty(),
            "{path:?}: {} differences:\n{}",
            diffs.len(),
            diffs[..diffs.len().min(20)].join("\n")
        );
        assert_eq!(got.buffers[0], expect.buffers[0]);
    }
}

#[test]
fn barriers_and_local_memory_reduce_correctly_on_the_adapter() {
    let Some(gpu) = adapter_or_skip("barriers_and_local_memory_reduce_correctly_on_the_adapter")
    else {
        return;
    };
    let w = local_reduction_workload(8, 64);
    assert!(sim(&w).all_checks_pass());
    for &path in paths(&gpu) {
        let p = gpu.compile_with(&w, Options::default(), path).unwrap();
        let (got, checks) = p.run_checked().unwrap();
        assert!(checks.iter().all(|c| c.passed), "{path:?}");
        assert_eq!(got.buffers[1][0], 511 * 512 / 2, "{path:?}");
    }
}

#[test]
fn atomics_native_and_emulated_agree_with_the_simulator() {
    let Some(gpu) = adapter_or_skip("atomics_native_and_emulated_agree_with_the_simulator") else {
        return;
    };
    let w = atomics_workload(4, 64);
    let expect = sim(&w);
    for &path in paths(&gpu) {
        let p = gpu.compile_with(&w, Options::default(), path).unwrap();
        let (got, _) = p.run_checked().unwrap();
        // Add, sub, and, or, xor, min, max commute; inc and dec do not, so only their bounds are
        // pinned.
        for j in 0..7 {
            assert_eq!(
                got.buffers[0][j], expect.buffers[0][j],
                "{path:?}: u32 op {j}"
            );
            assert_eq!(
                got.buffers[1][j], expect.buffers[1][j],
                "{path:?}: u64 op {j}"
            );
        }
        assert_eq!(
            got.buffers[2], expect.buffers[2],
            "{path:?}: i32 min/max, f32 add"
        );
    }
}

#[test]
fn out_of_bounds_access_is_a_fault_naming_the_instruction() {
    let Some(gpu) = adapter_or_skip("out_of_bounds_access_is_a_fault_naming_the_instruction")
    else {
        return;
    };
    let mut insts = index(2, 0, 1, 2);
    insts.push(store(Space::Global, at(2, 0), I(7), Ty::U32));
    insts.push(Inst::Exit);
    // 64 threads, 40 elements: threads 40.. write out of bounds.
    let w = workload(
        kernel(insts, 3, 0),
        2,
        32,
        vec![("d", Ty::U32, 40, Init::Zero)],
    );
    let sim_err = machine::run(&tiny(), &w, &RunOptions::default()).unwrap_err();
    assert!(sim_err
        .to_string()
        .contains("out-of-bounds global access of 4 bytes"));
    for &path in paths(&gpu) {
        let p = gpu.compile_with(&w, Options::default(), path).unwrap();
        let e = p.run_once().unwrap_err().to_string();
        assert!(
            e.starts_with("test.kern:4:1: out-of-bounds global access of 4 bytes"),
            "{path:?}: {e}"
        );
        assert!(e.contains("24 faulting work-items"), "{path:?}: {e}");
    }
}

#[test]
fn a_loop_that_never_ends_hits_the_step_limit_instead_of_hanging() {
    let Some(gpu) =
        adapter_or_skip("a_loop_that_never_ends_hits_the_step_limit_instead_of_hanging")
    else {
        return;
    };
    let insts = vec![
        load(1, Space::Global, at(0, 0), Ty::U32),
        Inst::Branch {
            target: 0,
            cond: Some((1, false)),
        },
        Inst::Exit,
    ];
    let w = workload(
        kernel(insts, 2, 0),
        1,
        32,
        vec![("flag", Ty::U32, 1, Init::Zero)],
    );
    for &path in paths(&gpu) {
        let p = gpu
            .compile_with(&w, Options { max_steps: 10_000 }, path)
            .unwrap();
        let e = p.run_once().unwrap_err().to_string();
        assert!(
            e.contains("exceeded 10000 basic-block steps"),
            "{path:?}: {e}"
        );
    }
}

#[test]
fn timestamps_time_every_repetition() {
    let Some(gpu) = adapter_or_skip("timestamps_time_every_repetition") else {
        return;
    };
    let w = local_reduction_workload(4, 64);
    let p = gpu.compile(&w, Options::default()).unwrap();
    let (t, _) = p.measure(1, 5).unwrap();
    assert_eq!(t.samples_ns.len(), 5);
    assert!(
        t.min_ns > 0.0 && t.min_ns <= t.median_ns && t.median_ns <= t.max_ns,
        "{t:?}"
    );
}

fn gpumemsim(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_gpumemsim"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the gpumemsim binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh temporary folder, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("gpumemsim-gpu-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn join(&self, f: &str) -> std::path::PathBuf {
        self.0.join(f)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every case of both suites lowers, translates to WGSL that naga accepts, and needs no emulation
/// (so that what is timed is the native operation).
#[test]
fn every_suite_case_translates_to_valid_wgsl_without_emulation() {
    use gpumemsim::device::{measure, suite::Suite};
    for file in ["workloads/measure/suite.toml", "workloads/measure/ci.toml"] {
        let loaded = measure::load(Suite::load(std::path::Path::new(file)).unwrap()).unwrap();
        assert!(loaded.cases.len() >= 10, "{file}");
        for (case, wl) in &loaded.cases {
            let what = format!(
                "{file}: {} [{}]",
                loaded.suite.benches[case.bench].name, case.label
            );
            let t = wgsl::translate(wl, Caps::ALL, Options::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            if let Err(e) = wgsl::validate(t.shader.wgsl().unwrap()) {
                panic!("{what}: naga rejects the translation:\n{e}");
            }
            assert!(t.emulated.is_empty(), "{what}: {:?}", t.emulated);
        }
        // The litmus tests: one dispatch of each variant.
        if let Some(part) = &loaded.suite.litmus {
            let mut rng = gpumemsim::rng::SplitMix64::stream(1, 0);
            for test in &loaded.litmus {
                for v in &part.variants {
                    let l =
                        gpumemsim::device::litmus::launch(&v.apply(test), &part.settings, &mut rng)
                            .unwrap();
                    let t = wgsl::translate(&l.workload, Caps::ALL, Options::default())
                        .unwrap_or_else(|e| panic!("{file}: {}: {e}", test.name));
                    if let Err(e) = wgsl::validate(t.shader.wgsl().unwrap()) {
                        panic!("{file}: {} {v:?}: naga rejects:\n{e}", test.name);
                    }
                }
            }
        }
    }
}

#[test]
fn the_ci_suite_measures_round_trips_and_compares() {
    use gpumemsim::device::schema::{Measurement, Status};
    use gpumemsim::device::{compare, measure, suite::Suite};
    let Some(gpu) = adapter_or_skip("the_ci_suite_measures_round_trips_and_compares") else {
        return;
    };
    let loaded =
        measure::load(Suite::load(std::path::Path::new("workloads/measure/ci.toml")).unwrap())
            .unwrap();
    let opts = measure::MeasureOptions {
        warmup: Some(0),
        reps: Some(2),
        ..Default::default()
    };
    let (mut seen, mut settled) = (0, 0);
    // Checkpoints: one after every case and litmus variant, each partial and holding what came before.
    let mut checkpoints: Vec<(usize, usize, bool)> = Vec::new();
    let mut third: Option<String> = None;
    let m = measure::measure_with(
        &gpu,
        &loaded,
        &opts,
        gpumemsim::device::schema::ShaderPath::Wgsl,
        &mut |p| match p {
            measure::Progress::Settled(_) => settled += 1,
            _ => seen += 1,
        },
        Some(&mut |m| {
            checkpoints.push((m.benchmarks.len(), m.litmus.len(), m.partial));
            if checkpoints.len() == 3 {
                third = Some(m.to_json());
            }
        }),
    );
    assert_eq!(
        seen,
        loaded.cases.len() + 14,
        "one progress report per case and litmus variant"
    );
    assert_eq!(checkpoints.len(), seen);
    assert!(checkpoints.iter().all(|c| c.2) && !m.partial);
    assert_eq!(checkpoints[2], (3, 0, true));
    assert_eq!(checkpoints.last().unwrap().1, 14);
    // A checkpoint is a valid measurement file that says it is partial.
    let f = std::env::temp_dir().join(format!("gpumemsim-partial-{}.json", std::process::id()));
    std::fs::write(&f, third.unwrap()).unwrap();
    let p = gpumemsim::device::schema::Measurement::load(&f).unwrap();
    let _ = std::fs::remove_file(&f);
    assert!(p.partial && p.benchmarks.len() == 3);
    // The clock settled once before the cases (a CPU adapter does not settle again).
    assert_eq!(settled, 1);
    assert_eq!(m.clock.as_ref().map(|c| c.settles.len()), Some(1));
    for b in &m.benchmarks {
        assert_eq!(b.status, Status::Ok, "{}: {:?}", b.key(), b.error);
        let t = b.timing.as_ref().unwrap();
        assert_eq!(t.samples_ns.len(), 2, "{}", b.key());
        assert!(b.checks.iter().all(|c| c.passed), "{}", b.key());
    }
    assert!(
        m.cpu_adapter,
        "lavapipe is a CPU adapter and must be marked as one"
    );
    assert!(m.overhead_ns.is_some_and(|o| o > 0.0));
    let fits: Vec<&str> = m.derived.iter().map(|d| d.name.as_str()).collect();
    assert!(fits.contains(&"atomic_chain:L"), "{fits:?}");
    assert!(fits.contains(&"chase:L[FOOT=65536]"), "{fits:?}");
    // The file round-trips exactly.
    let back = Measurement::parse(&m.to_json(), "m.json").unwrap();
    assert_eq!(back, m);
    // compare simulates every case that gave a number (the overhead case is subtracted, not compared).
    let c = compare::compare(&m, "m.json", &tiny(), "tiny.toml", &Default::default());
    assert!(c.skipped.is_empty(), "{:?}", c.skipped);
    assert_eq!(c.rows.len(), m.benchmarks.len() - 1);
    assert_eq!(c.slopes.len(), m.derived.len());
    assert!(c.rows.iter().all(|r| r.simulated_ns > 0.0 && r.cycles > 0));
    for r in &c.rows {
        if let Some(e) = r.error {
            let want = (r.simulated_ns - r.kernel_ns) / r.kernel_ns;
            assert!(
                (e - want).abs() < 1e-12,
                "positive error means the simulator is too slow"
            );
        }
    }
    assert_eq!(
        c.overall.n,
        c.rows.iter().filter(|r| r.error.is_some()).count()
    );
    assert!(c.markdown().contains("a CPU adapter"));
    // Litmus: every test and variant ran, counts sum to the instances, and compare simulated each.
    assert_eq!(m.litmus.len(), 14);
    for l in &m.litmus {
        assert_eq!(
            l.status,
            Status::Ok,
            "{} {:?}: {:?}",
            l.test,
            l.variant,
            l.error
        );
        assert_eq!(l.outcomes.iter().map(|o| o.count).sum::<u64>(), l.instances);
        assert_eq!(l.instances, 256);
    }
    assert_eq!(c.litmus.len(), 14);
    assert!(c.litmus.iter().all(|l| l.simulated_instances == 2000));
    // The same comparison again gives the same numbers (simulations run in parallel).
    assert_eq!(
        compare::compare(&m, "m.json", &tiny(), "tiny.toml", &Default::default()),
        c
    );
}

/// A measurement file that is not one, or is inconsistent, is an error naming the file and the fault.
#[test]
fn bad_measurement_files_are_clear_errors() {
    use gpumemsim::device::schema::Measurement;
    // Every committed measurement file parses; the lavapipe one is the specimen to break.
    let mut lavapipe = None;
    for e in std::fs::read_dir("reports/measured").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let m = Measurement::load(&p).unwrap_or_else(|e| panic!("{e}"));
            if m.cpu_adapter
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("llvmpipe-")
            {
                lavapipe = Some(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let good = lavapipe.expect("a lavapipe measurement is committed under reports/measured/");
    let good = good.as_str();
    let cases: Vec<(String, &str)> = vec![
        (good[..good.len() / 2].to_string(), "m.json:"),
        (
            good.replacen("gpumemsim-measurement", "something-else", 1),
            "schema",
        ),
        (
            good.replacen("\"version\": 1", "\"version\": 99", 1),
            "version = 99",
        ),
        (
            good.replacen("\"kernel_hash\": \"", "\"kernel_hash\": \"0", 1),
            "kernel_hash",
        ),
        (
            good.replacen("\"status\": \"ok\"", "\"status\": \"failed\"", 1),
            "a failed case has an error and no timing",
        ),
        ("{}".to_string(), "schema"),
        ("not json".to_string(), "m.json:1:"),
    ];
    for (text, want) in cases {
        let e = Measurement::parse(&text, "m.json").unwrap_err().to_string();
        assert!(e.starts_with("m.json"), "{e}");
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn gpu_list_without_an_adapter_says_how_to_get_one() {
    // No DX12 on Linux: the instance sees no adapter at all.
    let out = gpumemsim(&["gpu", "list"], &[("WGPU_BACKEND", "dx12")]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("no adapter found") && err.contains("mesa-vulkan-drivers"),
        "{err}"
    );
}

#[test]
fn gpu_list_describes_the_adapter_and_warns_about_a_cpu_one() {
    if adapter_or_skip("gpu_list_describes_the_adapter_and_warns_about_a_cpu_one").is_none() {
        return;
    }
    let out = gpumemsim(&["gpu", "list"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for want in [
        "[0] ",
        "timestamps: query",
        "64-bit all ops",
        "subgroups:",
        "work-groups: up to",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
    if s.contains(" cpu,") {
        assert!(s.contains("timings do not describe a GPU"), "{s}");
    }
}

#[test]
fn measure_and_compare_from_the_command_line() {
    let Some(_) = adapter_or_skip("measure_and_compare_from_the_command_line") else {
        return;
    };
    let dir = TempDir::new("cli");
    let file = dir.join("m.json");
    let out = gpumemsim(
        &[
            "measure",
            "workloads/measure/ci.toml",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--out",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("atomic_chain[L=32]"));
    let cmp = dir.join("cmp");
    let out = gpumemsim(
        &[
            "compare",
            "--measured",
            file.to_str().unwrap(),
            "--config",
            "configs/tiny.toml",
            "--out",
            cmp.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("MAPE"));
    for f in [
        "comparison.md",
        "comparison.csv",
        "comparison.json",
        "comparison.summary.json",
    ] {
        assert!(cmp.join(f).is_file(), "{f}");
    }
    // The cases as records (one per row of the CSV), the rest in the versioned summary.
    let cases: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(cmp.join("comparison.json")).unwrap()).unwrap();
    let csv_rows = std::fs::read_to_string(cmp.join("comparison.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(cases.len(), csv_rows);
    assert!(cases.iter().all(|c| c["simulated_ns"].is_number()));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cmp.join("comparison.summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["schema"], "gpumemsim-comparison");
    assert_eq!(summary["version"], 2);
    assert_eq!(summary["cases"].as_u64(), Some(cases.len() as u64));
    // The simulated-side contention curves are drawn whatever the adapter measured; both formats.
    let png = std::fs::read(cmp.join("contention.png")).expect("contention.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let svg = std::fs::read_to_string(cmp.join("contention.svg")).expect("contention.svg");
    assert!(
        svg.contains("<svg") && svg.contains("simulated"),
        "an SVG with the curves"
    );
    // A suite with an error stops before anything runs, naming the file.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\n[[bench]]\nname = \"a\"\ngroup = \"g\"\nkernel = \"nope.kern\"\n",
    )
    .unwrap();
    let out = gpumemsim(
        &[
            "measure",
            bad.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("nope.kern: cannot read"),
        "{}",
        text(&out.stderr)
    );
}

/// Every workload of `workloads/` either translates and passes its own checks on the adapter, or is
/// rejected because it needs an order WGSL lacks (acquire/release), naming the instruction.
#[test]
fn every_workload_runs_on_the_adapter_or_is_rejected_for_its_orders() {
    let gpu = adapter_or_skip("every_workload_runs_on_the_adapter_or_is_rejected_for_its_orders");
    let mut files: Vec<_> = std::fs::read_dir("workloads")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "kern"))
        .collect();
    files.sort();
    let (mut ran, mut rejected) = (0, 0);
    for p in files {
        let name = p.display().to_string();
        let w = gpumemsim::frontend::load(&p, &[]).unwrap();
        match wgsl::translate(&w, Caps::ALL, Options::default()) {
            Err(e) => {
                assert!(e.location.starts_with(&format!("{name}:")), "{e}");
                assert!(e.message.contains("WGSL atomics are relaxed only"), "{e}");
                rejected += 1;
            }
            Ok(_) => {
                // race_counter's check asserts that updates were lost, which needs truly concurrent
                // work-groups; a CPU adapter runs them one after another.
                let Some(g) = &gpu else { continue };
                if name.ends_with("/race_counter.kern") && g.report.is_cpu() {
                    continue;
                }
                let prepared = g.compile(&w, Options::default()).unwrap();
                prepared
                    .run_checked()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                ran += 1;
            }
        }
    }
    assert!(
        rejected >= 2,
        "spin_lock and device_latch use acquire/release"
    );
    assert!(gpu.is_none() || ran >= 10, "{ran}");
}

fn litmus_test(path: &str) -> gpumemsim::litmus::LitmusTest {
    gpumemsim::litmus::load(std::path::Path::new(path)).unwrap()
}

fn small_litmus() -> gpumemsim::device::litmus::LitmusSettings {
    gpumemsim::device::litmus::LitmusSettings {
        instances: 96,
        dispatches: 2,
        workgroup_size: 32,
        stress_ratio: 1,
        stress_iterations: 16,
        pre_stress_iterations: 4,
        seed: 7,
    }
}

/// The barrier variant puts one barrier between consecutive memory operations and keeps every branch
/// pointing at the instruction it pointed at.
#[test]
fn the_barrier_variant_separates_memory_operations_and_keeps_branches() {
    use gpumemsim::device::litmus::with_barriers;
    for f in [
        "workloads/litmus/ptx/mp_relaxed_gpu.litmus",
        "workloads/litmus/ptx/lock_spin.litmus",
    ] {
        let t = litmus_test(f);
        let b = with_barriers(&t);
        for (old, new) in t.threads.iter().zip(&b.threads) {
            let mems = old.insts.iter().filter(|i| i.mem_space().is_some()).count();
            let bars = new
                .insts
                .iter()
                .filter(|i| matches!(i, Inst::Barrier { .. }))
                .count();
            assert_eq!(bars, mems.saturating_sub(1), "{f} {}", old.name);
            // Without the barriers, the new code is the old code (targets mapped back).
            let kept: Vec<usize> = (0..new.insts.len())
                .filter(|&i| !matches!(new.insts[i], Inst::Barrier { .. }))
                .collect();
            for (oi, &ni) in kept.iter().enumerate() {
                match (&old.insts[oi], &new.insts[ni]) {
                    (Inst::Branch { target: a, .. }, Inst::Branch { target: b, .. }) => {
                        let back = kept
                            .iter()
                            .position(|&k| k == *b as usize)
                            .unwrap_or(old.insts.len());
                        assert_eq!(back, *a as usize, "{f}: branch at {oi}");
                    }
                    (x, y) => assert_eq!(x, y),
                }
            }
        }
    }
}

/// Every (instance, thread) runs exactly once per dispatch; threads of one instance in different
/// ctas are in different work-groups, threads in one cta in the same one; location slots are a
/// permutation.
#[test]
fn litmus_placement_covers_every_instance_and_keeps_ctas_apart() {
    use gpumemsim::device::litmus::launch;
    let mut rng = gpumemsim::rng::SplitMix64::stream(3, 0);
    for f in [
        "workloads/litmus/ptx/mp_relaxed_gpu.litmus",
        "workloads/litmus/ptx/mp_relaxed_cta_same.litmus",
    ] {
        let t = litmus_test(f);
        let s = small_litmus();
        let l = launch(&t, &s, &mut rng).unwrap();
        let nt = t.threads.len() as u64;
        let role = match &l.workload.buffers[t.locations.len()].init {
            Init::Values(v) => v.clone(),
            other => panic!("{other:?}"),
        };
        let w = s.workgroup_size as u64;
        let mut seen = std::collections::HashMap::new();
        for (slot, &r) in role.iter().enumerate() {
            if r < u32::MAX as u64 - 1 {
                assert!(
                    seen.insert(r, slot as u64 / w).is_none(),
                    "{f}: role {r} twice"
                );
            }
        }
        assert_eq!(seen.len() as u64, l.instances * nt, "{f}");
        for k in 0..l.instances {
            for a in 0..nt {
                for b in 0..nt {
                    let (ga, gb) = (seen[&(k * nt + a)], seen[&(k * nt + b)]);
                    let same_cta = t.threads[a as usize].cta == t.threads[b as usize].cta;
                    assert_eq!(ga == gb, same_cta, "{f}: instance {k} threads {a} {b}");
                }
            }
        }
        for perm in &l.slot {
            let mut p = perm.clone();
            p.sort();
            assert_eq!(p, (0..l.instances).collect::<Vec<_>>());
        }
    }
}

#[test]
fn litmus_outcomes_on_the_adapter_sum_to_the_instances_run() {
    use gpumemsim::device::litmus::{self, Variant};
    let Some(gpu) = adapter_or_skip("litmus_outcomes_on_the_adapter_sum_to_the_instances_run")
    else {
        return;
    };
    let s = small_litmus();
    for f in [
        "workloads/litmus/ptx/mp_relaxed_gpu.litmus",
        "workloads/litmus/ptx/2p2w_relaxed.litmus",
    ] {
        let t = litmus_test(f);
        for v in [Variant::Relaxed, Variant::StorageBarrier] {
            let tv = v.apply(&t);
            let c = litmus::run(&gpu, &tv, &s).unwrap();
            assert_eq!(c.instances, 96 * 2);
            assert_eq!(c.states.values().sum::<u64>(), c.instances, "{f} {v:?}");
            // Every state is a possible final state of the test: registers and locations hold values
            // the test writes or the initial ones.
            for state in c.states.keys() {
                assert!(
                    state.iter().all(|&x| (0..=2).contains(&x)),
                    "{f}: {state:?}"
                );
            }
            let r = litmus::result(&tv, v, Ok(c));
            assert_eq!(r.outcomes.iter().map(|o| o.count).sum::<u64>(), r.instances);
        }
    }
    // A test with release/acquire is not translatable, and says where.
    let t = litmus_test("workloads/litmus/ptx/mp_rel_acq_gpu.litmus");
    let r = litmus::result(&t, Variant::Relaxed, litmus::run(&gpu, &t, &s));
    assert_eq!(r.status, gpumemsim::device::schema::Status::Untranslatable);
    assert!(r
        .error
        .unwrap()
        .starts_with("workloads/litmus/ptx/mp_rel_acq_gpu.litmus:"));
}

/// The device campaign (`scripts/device-campaign.sh`, issue 22) runs whole on the CI's adapter
/// (lavapipe there: timings meaningless, the harness proven): every step exits 0 and the campaign folder
/// holds the measurement files, both comparisons and the README that lists the steps.
#[test]
fn the_device_campaign_runs_on_the_adapter_and_writes_its_folder() {
    if adapter_or_skip("the_device_campaign_runs_on_the_adapter_and_writes_its_folder").is_none() {
        return;
    }
    let out = TempDir::new("campaign");
    let o = std::process::Command::new("bash")
        .arg("scripts/device-campaign.sh")
        .arg(env!("CARGO_BIN_EXE_gpumemsim"))
        .arg(&out.0)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bash runs the campaign script");
    assert!(
        o.status.success(),
        "campaign failed ({:?}):\n{}\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
    let dirs: Vec<_> = std::fs::read_dir(&out.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    let [dir] = &dirs[..] else {
        panic!("expected one campaign folder, found {dirs:?}");
    };
    for f in [
        "README.md",
        "gpu-list.txt",
        "measured.json",
        "litmus.json",
        "compare/comparison.md",
        "compare-litmus/comparison.md",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for step in ["gpu list", "measure", "litmus", "compare", "compare litmus"] {
        assert!(
            readme.contains(&format!("| {step} | 0 |")),
            "step {step} did not exit 0:\n{readme}"
        );
    }
    // The clock probe settled before the cases and bracketed every case (device::clock); a litmus-only
    // suite needs none.
    let m = gpumemsim::device::schema::Measurement::load(&dir.join("measured.json")).unwrap();
    let clock = m.clock.as_ref().expect("a clock record");
    assert!(!clock.settles.is_empty() && clock.reference_ns > 0.0);
    for b in &m.benchmarks {
        let c = b
            .clock
            .unwrap_or_else(|| panic!("{} has no clock check", b.key()));
        assert!(c.before_ns > 0.0 && c.after_ns > 0.0, "{c:?}");
    }
    let l = gpumemsim::device::schema::Measurement::load(&dir.join("litmus.json")).unwrap();
    assert!(l.clock.is_none());
    let md = std::fs::read_to_string(dir.join("compare/comparison.md")).unwrap();
    assert!(md.contains("Clock probe (`gpu::clock`): reference"), "{md}");
    assert!(readme.contains("CUDA ground truth: not run ("), "{readme}");
}

/// A kernel of 70,000 loop iterations: it completes on a GPU; llvmpipe ends every shader loop after
/// 65,535 iterations, which must be an error naming that, never a silently wrong result.
#[test]
fn a_loop_the_driver_cuts_short_is_an_error_not_a_wrong_result() {
    let Some(gpu) = adapter_or_skip("a_loop_the_driver_cuts_short_is_an_error_not_a_wrong_result")
    else {
        return;
    };
    // r1 = counter; loop: r1 += 1; r2 = r1 < N; branch back while r2; out[0] = r1.
    let n = 70_000u64;
    let insts = vec![
        alu(AluOp::Add, Ty::U32, 1, I(0), I(0)),
        alu(AluOp::Add, Ty::U32, 1, R(1), I(1)),
        Inst::Cmp {
            op: CmpOp::Lt,
            ty: Ty::U32,
            dst: 2,
            a: R(1),
            b: I(n),
        },
        Inst::Branch {
            target: 1,
            cond: Some((2, true)),
        },
        store(Space::Global, at(0, 0), R(1), Ty::U32),
        Inst::Exit,
    ];
    let w = workload(
        kernel(insts, 3, 0),
        1,
        1,
        vec![("out", Ty::U32, 1, Init::Zero)],
    );
    assert_eq!(sim(&w).buffers[0][0], n);
    let cuts = gpu.report.name.contains("llvmpipe");
    for &path in paths(&gpu) {
        let p = gpu.compile_with(&w, Options::default(), path).unwrap();
        match p.run_once() {
            Ok(out) => {
                assert!(!cuts, "{path:?}: llvmpipe ran 70,000 iterations");
                assert_eq!(out.buffers[0][0], n, "{path:?}");
            }
            Err(e) => {
                let e = e.to_string();
                assert!(cuts, "{path:?}: {e}");
                assert!(
                    e.contains("the device stopped running the kernel here before it finished"),
                    "{path:?}: {e}"
                );
            }
        }
    }
}
