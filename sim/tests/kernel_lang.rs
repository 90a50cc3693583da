//! The kernel language front end: what a file lowers into, how parameters resolve, and every class of
//! error with the `file:line:column` it names.

use gpumemsim::ir::*;
use gpumemsim::kernel::KernelError;
use gpumemsim::workload::{CheckOp, Expr, FoldOp, Init, ParamValue, Workload};

const HEAD: &str = "groups 2\ngroup_size 64\nbuffer data: u32[128]\n";

fn parse(src: &str) -> Workload {
    gpumemsim::frontend::parse(src, "t.kern", &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// A kernel body wrapped in a minimal file (the body starts on line 5).
fn body(b: &str) -> String {
    format!("{HEAD}kernel k {{\n{b}\n}}\n")
}

/// Parses `src` expecting an error at `line:col` whose message contains `what`.
fn err_at(src: &str, line: u32, col: u32, what: &str) {
    let e = match gpumemsim::frontend::parse(src, "t.kern", &[]) {
        Ok(_) => panic!("expected an error at {line}:{col} ({what}) in:\n{src}"),
        Err(e) => e.to_string(),
    };
    let at = format!("t.kern:{line}:{col}: ");
    assert!(e.starts_with(&at), "expected `{at}...`, got `{e}`");
    assert!(e.contains(what), "expected `{what}` in `{e}`");
}

#[test]
fn a_small_kernel_lowers_into_the_ir() {
    let w = parse(&body(
        "    reg %i, %v\n    mov.u32 %i, %global_id\n    ld.u32 %v, data[%i]\n    add.u32 %v, %v, 1\n    st.u32 data[%i], %v",
    ));
    let k = &w.kernel;
    assert_eq!(k.name, "k");
    assert_eq!(k.file, "t.kern");
    // Registers: the buffer's address, the declared ones, the scratch register for data[%i].
    assert_eq!(k.reg_names, ["data", "%i", "%v", "%%addr"]);
    let s = 3;
    let expected = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalId(Dim::X),
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: s,
            a: Operand::Reg(1),
            b: Operand::Imm(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: s,
            a: Operand::Reg(s),
            b: Operand::Reg(0),
        },
        Inst::Load {
            dst: 2,
            space: Space::Global,
            addr: Address {
                base: Operand::Reg(s),
                offset: 0,
            },
            ty: Ty::U32,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U32,
            dst: 2,
            a: Operand::Reg(2),
            b: Operand::Imm(1),
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: s,
            a: Operand::Reg(1),
            b: Operand::Imm(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: s,
            a: Operand::Reg(s),
            b: Operand::Reg(0),
        },
        Inst::Store {
            space: Space::Global,
            addr: Address {
                base: Operand::Reg(s),
                offset: 0,
            },
            src: Operand::Reg(2),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    assert_eq!(k.insts, expected);
    // Address arithmetic carries the location of the access it serves.
    let lines: Vec<u32> = k.locs.iter().map(|l| l.line).collect();
    assert_eq!(lines, [6, 7, 7, 7, 8, 9, 9, 9, 10]);
    assert_eq!(k.locs[3].col, 5);
    assert_eq!(w.geometry.groups, [2, 1, 1]);
    assert_eq!(w.geometry.group_size, [64, 1, 1]);
    assert_eq!(w.params.len(), 1);
    assert_eq!(w.params[0].value, ParamValue::BufferAddr("data".into()));
}

#[test]
fn constant_indices_and_local_arrays_need_no_address_arithmetic() {
    let w = parse(&format!(
        "{HEAD}local a: u32[4]\nlocal b: u64[2]\nkernel k {{\n reg %x\n ld.u32 %x, data[3]\n st.u64 b[1], 7\n ld.u32 %x, [data + 8]\n ld.local.u32 %x, [%x + 4]\n}}\n"
    ));
    let k = &w.kernel;
    // b is 8-aligned after 16 bytes of a.
    assert_eq!(k.local_bytes, 32);
    assert_eq!(k.reg_names, ["data", "%x"]);
    assert!(matches!(
        k.insts[0],
        Inst::Load {
            addr: Address {
                base: Operand::Reg(0),
                offset: 12
            },
            space: Space::Global,
            ..
        }
    ));
    assert!(matches!(
        k.insts[1],
        Inst::Store {
            addr: Address {
                base: Operand::Imm(24),
                offset: 0
            },
            space: Space::Local,
            scope: Scope::WorkGroup,
            src: Operand::Imm(7),
            ty: Ty::U64,
            ..
        }
    ));
    assert!(matches!(
        k.insts[2],
        Inst::Load {
            addr: Address {
                base: Operand::Reg(0),
                offset: 8
            },
            ..
        }
    ));
    assert!(matches!(
        k.insts[3],
        Inst::Load {
            addr: Address {
                base: Operand::Reg(1),
                offset: 4
            },
            space: Space::Local,
            ..
        }
    ));
}

#[test]
fn orders_scopes_and_aliases_reach_the_ir() {
    let w = parse(&body(
        "    reg %a, %b\n\
         ld.acquire.gpu.u32 %a, data[0]\n\
         st.release.cta.u32 data[1], %a\n\
         ld.sc.sys.u32 %a, data[2]\n\
         atom.exch.acq_rel.all_svm_devices.u32 %a, data[3], 5\n\
         red.max.seq_cst.wg.i32 data[4], -3\n\
         atom.cas.weak.release.fail_relaxed.u32 %b, data[5], %a, 1\n\
         atom.cas.acq_rel.u32 %b, data[5], %a, 1\n\
         fence.sc.work_item.global\n\
         barrier.local\n\
         barrier.global.device\n\
         bar.sync\n\
         sub_group_barrier\n\
         bar.warp.sync",
    ));
    let i = &w.kernel.insts;
    assert!(matches!(
        i[0],
        Inst::Load {
            ord: LoadOrd::Acquire,
            scope: Scope::Device,
            ..
        }
    ));
    assert!(matches!(
        i[1],
        Inst::Store {
            ord: StoreOrd::Release,
            scope: Scope::WorkGroup,
            ..
        }
    ));
    assert!(matches!(
        i[2],
        Inst::Load {
            ord: LoadOrd::SeqCst,
            scope: Scope::System,
            ..
        }
    ));
    assert!(matches!(
        i[3],
        Inst::Rmw {
            op: RmwOp::Exch,
            ord: RmwOrd::AcqRel,
            scope: Scope::System,
            dst: Some(1),
            ..
        }
    ));
    assert!(matches!(
        i[4],
        Inst::Rmw {
            op: RmwOp::Max,
            ord: RmwOrd::SeqCst,
            scope: Scope::WorkGroup,
            dst: None,
            ty: Ty::I32,
            operand: Operand::Imm(0xFFFF_FFFD),
            ..
        }
    ));
    assert!(matches!(
        i[5],
        Inst::Cas {
            weak: true,
            success: RmwOrd::Release,
            failure: LoadOrd::Relaxed,
            ..
        }
    ));
    // The failure order defaults to the success order without its release part.
    assert!(matches!(
        i[6],
        Inst::Cas {
            weak: false,
            success: RmwOrd::AcqRel,
            failure: LoadOrd::Acquire,
            ..
        }
    ));
    assert!(matches!(
        i[7],
        Inst::Fence {
            ord: FenceOrd::SeqCst,
            scope: Scope::WorkItem,
            spaces: SpaceSet::GLOBAL
        }
    ));
    assert!(matches!(
        i[8],
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::LOCAL,
            scope: Scope::WorkGroup
        }
    ));
    assert!(matches!(
        i[9],
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::GLOBAL,
            scope: Scope::Device
        }
    ));
    assert!(matches!(
        i[10],
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::BOTH,
            ..
        }
    ));
    assert!(matches!(
        i[11],
        Inst::Barrier {
            kind: BarrierKind::SubGroup,
            ..
        }
    ));
    assert!(matches!(
        i[12],
        Inst::Barrier {
            kind: BarrierKind::SubGroup,
            ..
        }
    ));
}

#[test]
fn arithmetic_compare_select_convert_and_floats() {
    let w = parse(&body(
        "    reg %a, %b, %p\n\
         mul.f32 %a, %a, 1.5\n\
         add.f32 %a, %a, 2\n\
         neg.f32 %b, %a\n\
         not.u32 %b, %b\n\
         setp.le.i64 %p, %a, -1\n\
         selp.u32 %a, %a, 7, %p\n\
         cvt.f32.i32 %a, %b\n\
         shr.u64 %a, %a, 3 * 2",
    ));
    let i = &w.kernel.insts;
    assert!(
        matches!(i[0], Inst::Alu { op: AluOp::Mul, ty: Ty::F32, b: Operand::Imm(b), .. } if b == f32_bits(1.5))
    );
    assert!(matches!(i[1], Inst::Alu { b: Operand::Imm(b), .. } if b == f32_bits(2.0)));
    assert!(
        matches!(i[2], Inst::Alu { op: AluOp::Mul, b: Operand::Imm(b), .. } if b == f32_bits(-1.0))
    );
    assert!(matches!(
        i[3],
        Inst::Alu {
            op: AluOp::Xor,
            b: Operand::Imm(0xFFFF_FFFF),
            ..
        }
    ));
    assert!(matches!(
        i[4],
        Inst::Cmp {
            op: CmpOp::Le,
            ty: Ty::I64,
            b: Operand::Imm(u64::MAX),
            ..
        }
    ));
    assert!(matches!(
        i[5],
        Inst::Select {
            dst: 1,
            cond: 3,
            a: Operand::Reg(1),
            b: Operand::Imm(7)
        }
    ));
    assert!(matches!(
        i[6],
        Inst::Cvt {
            from: Ty::I32,
            to: Ty::F32,
            ..
        }
    ));
    assert!(matches!(
        i[7],
        Inst::Alu {
            op: AluOp::Shr,
            b: Operand::Imm(6),
            ..
        }
    ));
}

#[test]
fn labels_resolve_to_instructions_including_a_trailing_label() {
    let w = parse(&body(
        "    reg %i, %p\nloop: add.u32 %i, %i, 1\n    setp.lt.u32 %p, %i, 10\n    @%p bra loop\n    @!%p bra end\n    bra loop\nend:",
    ));
    let i = &w.kernel.insts;
    assert_eq!(
        i[2],
        Inst::Branch {
            target: 0,
            cond: Some((2, true))
        }
    );
    assert_eq!(
        i[3],
        Inst::Branch {
            target: 5,
            cond: Some((2, false))
        }
    );
    assert_eq!(
        i[4],
        Inst::Branch {
            target: 0,
            cond: None
        }
    );
    assert_eq!(i[5], Inst::Exit);
    assert_eq!(i.len(), 6);
}

#[test]
fn parameters_default_override_and_feed_everything() {
    let src = "param N = 100\nparam G = N / 2   # derived from N\nrequire N % G == 0\n\
               groups N / G\ngroup_size G\nbuffer d: u32[N] = fill(N + 1)\nbuffer v: i32[3] = [1, -2, N]\n\
               arg %n: u32 = N * 2\nkernel k {\n reg %x\n add.u32 %x, %n, N\n}\n\
               check d[N - 1] == N + 1\nreport twice = 2 * N\n";
    let w = parse(src);
    assert_eq!(w.parameters, vec![("N".into(), 100), ("G".into(), 50)]);
    assert_eq!(w.geometry.groups[0], 2);
    let w = gpumemsim::frontend::parse(src, "t.kern", &[("N".into(), 40)]).unwrap();
    assert_eq!(w.parameters, vec![("N".into(), 40), ("G".into(), 20)]);
    assert_eq!(w.geometry.group_size[0], 20);
    assert_eq!(w.buffers[0].len, 40);
    assert_eq!(w.buffers[0].init, Init::Fill(41));
    assert_eq!(w.buffers[1].init, Init::Values(vec![1, 0xFFFF_FFFE, 40]));
    assert_eq!(w.params[2].name, "%n");
    assert_eq!(w.params[2].value, ParamValue::Scalar(80));
    assert!(matches!(
        w.kernel.insts[0],
        Inst::Alu {
            a: Operand::Reg(2),
            b: Operand::Imm(40),
            ..
        }
    ));
    assert_eq!(
        w.checks[0].lhs,
        Expr::Elem {
            buffer: "d".into(),
            index: Box::new(Expr::Sub(
                Box::new(Expr::Const(40)),
                Box::new(Expr::Const(1))
            ))
        }
    );
    assert_eq!(w.reports[0].name, "twice");
    // An override wins over a derived default.
    let w =
        gpumemsim::frontend::parse(src, "t.kern", &[("N".into(), 40), ("G".into(), 8)]).unwrap();
    assert_eq!(w.geometry.groups[0], 5);
}

#[test]
fn overriding_an_undeclared_parameter_names_it_and_lists_the_declared_ones() {
    let src = format!("param A = 1\nparam B = 2\n{}", body(""));
    let e = gpumemsim::frontend::parse(&src, "t.kern", &[("C".into(), 3)]).unwrap_err();
    assert!(matches!(e, KernelError::UnknownParam { .. }));
    let e = e.to_string();
    assert!(e.contains("`C`") && e.contains("declared: A, B"), "{e}");
}

#[test]
fn checks_lower_foralls_folds_and_builtins() {
    let w = parse(&format!(
        "{}check forall i in data: data[i] == sum(j = 0 .. i: j) + global_size\ncheck max(k = 0 .. len(data): data[k] != 0) <= 1\n",
        body("")
    ));
    let c = &w.checks[0];
    assert_eq!(c.forall.as_deref(), Some("data"));
    assert_eq!(c.op, CheckOp::Eq);
    assert_eq!(
        c.rhs,
        Expr::Add(
            Box::new(Expr::Fold {
                op: FoldOp::Sum,
                from: Box::new(Expr::Const(0)),
                to: Box::new(Expr::Var),
                body: Box::new(Expr::Bound(0)),
            }),
            Box::new(Expr::GlobalSize)
        )
    );
    assert_eq!(
        c.text,
        "forall i in data: data[i] == sum(j = 0 .. i: j) + global_size"
    );
    assert!(matches!(
        w.checks[1].lhs,
        Expr::Fold {
            op: FoldOp::Max,
            ..
        }
    ));
}

#[test]
fn buffer_initialisers() {
    let w = parse(&format!(
        "{}buffer a: f32[3] = iota\nbuffer b: u64[4] = random(5, 10)\nbuffer c: f32[2] = 0.25\nbuffer e: i64[2] = -1\n",
        body("")
    ));
    assert_eq!(
        w.buffers[1].init,
        Init::Values(vec![f32_bits(0.0), f32_bits(1.0), f32_bits(2.0)])
    );
    assert_eq!(
        w.buffers[2].init,
        Init::Random {
            seed: 5,
            modulo: 10
        }
    );
    assert!((0..4).all(|i| w.buffers[2].initial(i) < 10));
    assert_eq!(w.buffers[3].init, Init::Fill(f32_bits(0.25)));
    assert_eq!(w.buffers[4].init, Init::Fill(u64::MAX));
}

// ---- errors: every class, with its line:column ----

#[test]
fn lexical_errors() {
    err_at(
        &body("    add.u32 %a, %a, $"),
        5,
        21,
        "unexpected character `$`",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %a, 12abc"),
        6,
        21,
        "expected a number",
    );
    err_at(
        "param S = 1\nrequire S == 1, \"open\n",
        2,
        17,
        "unterminated string",
    );
}

#[test]
fn syntax_errors() {
    err_at("buffer d u32[4]\n", 1, 10, "found `u32` but expected `:`");
    err_at(
        "add.u32 %a, %a, 1\n",
        1,
        1,
        "instructions go inside `kernel NAME { ... }`",
    );
    err_at(
        &format!("{HEAD}kernel k {{\n    buffer x: u32[2]\n}}\n"),
        5,
        5,
        "`buffer` declarations go outside the kernel block",
    );
    err_at(
        &format!("{HEAD}kernel k {{\n    exit\n"),
        4,
        1,
        "never closed",
    );
    err_at(
        &body("    reg %a\n    ld.u32 %a, [data + ]"),
        6,
        24,
        "expected an expression",
    );
    err_at(
        &body("    exit exit"),
        5,
        10,
        "found 1 operand but expected 0",
    );
    err_at("groups 1, 1, 1, 1\n", 1, 17, "at most three");
    err_at(
        &body("    .reg %a"),
        5,
        5,
        "expected an instruction mnemonic",
    );
}

#[test]
fn unknown_names_are_errors() {
    err_at(
        &body("    add.u32 %a, %a, 1"),
        5,
        13,
        "unknown register `%a`",
    );
    err_at(
        &body("    reg %a\n    bra nowhere"),
        6,
        9,
        "unknown label `nowhere`",
    );
    err_at(
        &body("    reg %a\n    ld.u32 %a, nodata[0]"),
        6,
        16,
        "unknown buffer or local array `nodata`",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %a, Q"),
        6,
        21,
        "unknown name `Q`",
    );
    err_at(
        &format!("{}check nodata[0] == 1\n", body("")),
        7,
        7,
        "unknown buffer `nodata`",
    );
    err_at(
        &format!("{}check forall i in nodata: 1 == 1\n", body("")),
        7,
        19,
        "unknown buffer `nodata`",
    );
    err_at(
        &body("    reg %a\n    mov.u32 %a, %bogus"),
        6,
        17,
        "unknown register `%bogus`",
    );
    err_at(
        &body("    reg %a\n    foo.u32 %a"),
        6,
        5,
        "found `foo` but expected an instruction",
    );
    err_at("groups N\n", 1, 8, "unknown name `N`");
}

#[test]
fn duplicates_are_errors() {
    err_at(
        &body("    reg %a\nl: exit\nl: exit"),
        7,
        1,
        "label `l` is defined twice (first at 6:1)",
    );
    err_at(
        &body("    reg %a, %a"),
        5,
        13,
        "register `%a` is declared twice",
    );
    err_at(
        &format!(
            "{HEAD}buffer data: u32[4]\n{}",
            body("").split_at(HEAD.len()).1
        ),
        4,
        1,
        "already declared at 3:1",
    );
    err_at(
        "param N = 1\nparam N = 2\n",
        2,
        1,
        "declared twice (first at 1:1)",
    );
    err_at(
        &format!("{HEAD}groups 3\n"),
        4,
        1,
        "`groups` is given twice",
    );
    err_at(&body("    reg %global_id"), 5, 9, "special register");
}

#[test]
fn wrong_operand_kinds_are_errors() {
    err_at(
        &body("    reg %a\n    add.u32 5, %a, 1"),
        6,
        13,
        "found a constant but expected a destination register",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, data[0], 1"),
        6,
        17,
        "found a memory operand",
    );
    err_at(
        &body("    reg %a\n    ld.u32 %a, %a"),
        6,
        16,
        "found register `%a` but expected an address",
    );
    err_at(
        &body("    reg %a\n    st.u32 5, %a"),
        6,
        12,
        "found a value but expected an address",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %global_id, 1"),
        6,
        17,
        "can only be read by `mov`",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %a"),
        6,
        5,
        "found 2 operands but expected 3",
    );
    err_at(
        &body("    reg %a\n    cvt.f32.u32 %a, 3"),
        6,
        21,
        "found a constant but expected a register",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, data, 1"),
        6,
        17,
        "64-bit address",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %a, 1.5"),
        6,
        21,
        "found 1.5 but a u32 value must be an integer",
    );
    err_at(
        &body("    reg %a\n    add.u32 %a, %a, 5000000000"),
        6,
        21,
        "does not fit 32 bits",
    );
    err_at(
        &format!("arg %k: u32 = 1\n{}", body("    mov.u32 %k, 1")),
        6,
        13,
        "argument `%k` is read-only",
    );
    err_at(
        &body("    reg %a\n    mov.u32 %global_id, %a"),
        6,
        13,
        "is read-only",
    );
    err_at(
        &body("    reg %p\n    @%p exit"),
        6,
        5,
        "only `bra` can be predicated",
    );
    err_at(
        &body("    reg %a\n    ld.global.u32 %a, [7]"),
        6,
        23,
        "a constant address needs `.local`",
    );
}

#[test]
fn orders_illegal_for_the_operation_are_errors() {
    err_at(
        &body("    reg %a\n    ld.release.u32 %a, data[0]"),
        6,
        8,
        "found order `release` but a load takes plain, relaxed, acquire or seq_cst",
    );
    err_at(
        &body("    reg %a\n    ld.acq_rel.u32 %a, data[0]"),
        6,
        8,
        "a load takes",
    );
    err_at(
        &body("    st.acquire.u32 data[0], 1"),
        5,
        8,
        "a store takes plain, relaxed, release or seq_cst",
    );
    err_at(
        &body("    red.add.plain.u32 data[0], 1"),
        5,
        13,
        "atomics take relaxed",
    );
    err_at(
        &body("    fence.relaxed.device"),
        5,
        11,
        "a fence takes acquire, release, acq_rel or seq_cst",
    );
    err_at(&body("    fence.device"), 5, 5, "`fence` needs an order");
    err_at(
        &body("    reg %a\n    atom.cas.acq_rel.fail_release.u32 %a, data[0], 0, 1"),
        6,
        22,
        "failure order `release`",
    );
    err_at(
        &body("    reg %a\n    ld.device.u32 %a, data[0]"),
        6,
        8,
        "plain (non-atomic) access",
    );
    err_at(
        &body("    reg %a\n    ld.relaxed.acquire.u32 %a, data[0]"),
        6,
        16,
        "already has an order",
    );
    err_at(
        &body("    barrier.sub_group"),
        5,
        13,
        "a work-group barrier's scope is work_group, device or system",
    );
    err_at(
        &body("    barrier.local.device"),
        5,
        19,
        "local memory only is work_group scope",
    );
    err_at(
        &body("    reg %a\n    atom.add.weak.u32 %a, data[0], 1"),
        6,
        10,
        "only `cas` is weak or strong",
    );
    err_at(
        &body("    red.cas.u32 data[0], 1, 2"),
        5,
        9,
        "`red` has no cas form",
    );
}

#[test]
fn types_illegal_for_the_operation_are_errors() {
    err_at(
        &body("    reg %a\n    and.f32 %a, %a, %a"),
        6,
        9,
        "bit operation",
    );
    err_at(
        &body("    reg %a\n    atom.inc.i32 %a, data[0], 1"),
        6,
        14,
        "atomic `inc` takes u32 or u64",
    );
    err_at(
        &format!("buffer f: f32[2]\n{}", body("    red.xor.f32 f[0], 1")),
        6,
        13,
        "atomic `xor` takes an integer type",
    );
    err_at(
        &body("    reg %a\n    ld.u64 %a, data[1]"),
        6,
        16,
        "holds u32 elements but the access is u64",
    );
    err_at(
        &body("    reg %a\n    add %a, %a, 1"),
        6,
        5,
        "`add` needs a type",
    );
    err_at(
        &body("    reg %a\n    add.u33 %a, %a, 1"),
        6,
        9,
        "found `.u33` but `add` takes a type",
    );
    err_at(
        &body("    reg %p\n    setp.u32 %p, 1, 2"),
        6,
        5,
        "needs a comparison",
    );
}

#[test]
fn bad_sizes_and_geometry_are_errors() {
    err_at(
        "groups 0\ngroup_size 4\nkernel k {\n}\n",
        1,
        8,
        "groups dimension 0 = 0: must be from 1",
    );
    err_at(
        "groups 1\ngroup_size 4\nbuffer d: u32[0]\nkernel k {\n}\n",
        3,
        15,
        "length 0: must be at least 1",
    );
    err_at(
        "param N = -4\ngroups 1\ngroup_size 4\nlocal d: u32[N]\nkernel k {\n}\n",
        4,
        14,
        "length -4",
    );
    err_at(
        "groups 1\ngroup_size 4\nbuffer d: u32[2] = [1, 2, 3]\nkernel k {\n}\n",
        3,
        1,
        "found 3 initial values but the buffer has 2",
    );
    err_at(
        "groups 1\ngroup_size 4\nbuffer d: u8[2]\nkernel k {\n}\n",
        3,
        11,
        "found `u8` but expected a type",
    );
    err_at(
        "groups 1\ngroup_size 4\nbuffer d: u32[1 << 40]\nkernel k {\n}\n",
        3,
        1,
        "more than 1073741824 bytes",
    );
    err_at(
        "groups 1\nkernel k {\n}\n",
        2,
        1,
        "launch geometry is missing",
    );
    err_at("groups 1\ngroup_size 1\n", 1, 1, "found no kernel");
    err_at(
        &format!(
            "param G = 48\nrequire G & (G - 1) == 0, \"G must be a power of two\"\n{}",
            body("")
        ),
        2,
        1,
        "requirement does not hold (G = 48): G must be a power of two",
    );
    err_at("param A = 7 / (3 - 3)\n", 1, 13, "by zero");
    err_at("param A = 2.5\n", 1, 11, "must be an integer");
    err_at(
        &body("    reg %a\n    ld.u32 %a, data[128]"),
        6,
        16,
        "index 128 is out of bounds for `data` (length 128)",
    );
}

#[test]
fn check_errors() {
    err_at(
        &format!("{}check data[0] + 1\n", body("")),
        7,
        1,
        "a check compares two values",
    );
    err_at(
        &format!("{}local l: u32[2]\ncheck l[0] == 1\n", body("")),
        8,
        7,
        "does not outlive",
    );
    err_at(
        &format!("{}check data == 1\n", body("")),
        7,
        7,
        "needs an index",
    );
    err_at(
        &format!("{}check prod(i = 0 .. 2: i) == 1\n", body("")),
        7,
        7,
        "found fold `prod`",
    );
    err_at(
        &format!("{}check data[0] & 1 == 1\n", body("")),
        7,
        15,
        "not available in checks",
    );
}
