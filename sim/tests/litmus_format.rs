//! Litmus front end (issue 13, items 2 and 5; issue 16): herd's file structure, placements on several
//! devices, work-group-local and array locations, address arithmetic, the PTX qualifiers and
//! operations, named barriers parsed and refused until the machine models them, bounded sizes and
//! condition nesting, and `--format herd` output as litmus7 prints it.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::ir::{Inst, Operand, RmwOrd, Space};
use gpumemsim::litmus::model::Judgement;
use gpumemsim::litmus::{
    self, BarrierAction, Capability, LitmusError, LitmusOptions, LitmusResult, LitmusTest,
};
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tiny() -> GpuConfig {
    config::load(Some(&root().join("configs/tiny.toml")), &[]).expect("tiny config")
}

fn parse(text: &str) -> LitmusTest {
    litmus::parse(text, "t.litmus").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn error(text: &str) -> String {
    match litmus::parse(text, "t.litmus") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// `text` is refused with an error at `t.litmus:{at}` (line:col:) containing `what`.
fn error_at(text: &str, at: &str, what: &str) {
    let e = error(text);
    assert!(
        e.starts_with(&format!("t.litmus:{at}")) && e.contains(what),
        "{text}: {e}"
    );
}

fn run(t: &LitmusTest, iterations: u64) -> Result<LitmusResult, LitmusError> {
    let opts = LitmusOptions {
        iterations,
        seed: 3,
        ..LitmusOptions::default()
    };
    litmus::run(t, &tiny(), &opts)
}

/// The states of a run as `name=value;` strings.
fn states(r: &LitmusResult) -> Vec<String> {
    r.outcomes
        .iter()
        .map(|o| r.state_string(&o.values))
        .collect()
}

#[test]
fn herd_file_structure_is_read_as_herd_reads_it() {
    let t = parse(
        "PTX MP+po (a title) \"doc\"\n\"second string\"\nCycle=Rfe PodRR Fre PodWW\n  Relax = Rfe\n(* expect: allowed *)\n\"third\nover two lines\"\n{ x=0; y=0; }\n P0 | P1 ;\n st.weak [x], 1 | ld.weak r0, [y] ;\nexists (1:r0=0)",
    );
    assert_eq!(t.name, "MP+po");
    assert_eq!(t.title.as_deref(), Some("(a title)"));
    assert_eq!(
        t.comment.as_deref(),
        Some("doc\nsecond string\nthird\nover two lines")
    );
    assert_eq!(
        t.info,
        vec![
            ("Cycle".to_string(), "Rfe PodRR Fre PodWW".to_string()),
            ("Relax".to_string(), "Rfe".to_string())
        ]
    );
    assert!(t.expectation.is_some());
    // `--` names the test after its file.
    let t = litmus::parse(
        "PTX --\n{ }\n P0 ;\n st.weak [x], 1 ;\nexists (x=1)",
        "dir/SB+x.litmus",
    )
    .expect("parses");
    assert_eq!(t.name, "SB+x");
    let e = error("PTX A\nstray words\n{ }\n P0 ;\n st.weak [x], 1 ;\nexists (x=1)");
    assert!(
        e.starts_with("t.litmus:2:1:") && e.contains("key = value"),
        "{e}"
    );
    let e = error("PTX A\n\"open\n{ }");
    assert!(
        e.starts_with("t.litmus:2:1:") && e.contains("unterminated"),
        "{e}"
    );
}

#[test]
fn placements_keep_devices_and_one_other_device_runs() {
    let t = parse("PTX A\n{ }\n P0@cta 3,gpu 1 | P1@wg 0, dev 1 ;\n st.weak [x], 1 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    assert_eq!((t.threads[0].cta, t.threads[0].device), (3, 1));
    assert_eq!((t.threads[1].cta, t.threads[1].device), (0, 1));
    run(&t, 64).expect("all threads on device 1: one GPU");
    let t = parse("PTX A\n{ }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 2 ;\n st.weak [x], 1 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    match run(&t, 64) {
        Err(LitmusError::NeedsCapability {
            capability,
            line,
            col,
            ..
        }) => assert_eq!((capability, line, col), (Capability::SecondDevice, 3, 19)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn arrays_and_address_arithmetic_reach_the_right_elements() {
    let t = parse(
        "PTX A\n{ int y[3] = {5, 6, 7}; 0:r2 = y[1]; 1:r5 = &y; }\n P0 | P1 ;\n st.weak [r2+4], 9 | add.u64 r6, r5, 4 ;\n st.weak [y], 1 | ld.weak r0, [r6] ;\n | ld.weak r1, [y+8] ;\nexists (y[0]=1 /\\ y[1]=6 /\\ y[2]=9 /\\ 1:r0=6)",
    );
    assert!(t.locations[0].array && t.locations[0].len == 3);
    let r = run(&t, 128).expect("runs");
    for s in states(&r) {
        assert!(
            s.contains("y[0]=1;") && s.contains("y[1]=6;") && s.contains("y[2]=9;"),
            "{s}"
        );
        assert!(s.contains("P1:r0=6;"), "{s}");
    }
    // A computed address that leaves the array stops the run at that access.
    let t = parse("PTX A\n{ int y[2] = {0, 0}; 0:r5 = y; }\n P0 ;\n add.u64 r6, r5, 8 ;\n ld.weak r0, [r6] ;\nexists (0:r0=0)");
    let e = run(&t, 32).expect_err("out of bounds").to_string();
    assert!(
        e.contains("t.litmus:5:2:") && e.contains("out-of-bounds"),
        "{e}"
    );
    // Static offsets are checked at parse time; registers need an address to be used as one.
    let e = error("PTX A\n{ int y[2] = {0, 0}; }\n P0 ;\n ld.weak r0, [y+8] ;\nexists (0:r0=0)");
    assert!(
        e.starts_with("t.litmus:4:15:") && e.contains("outside y"),
        "{e}"
    );
    let e = error("PTX A\n{ x=0; }\n P0 ;\n mov r9, 4 ;\n ld.weak r0, [r9] ;\nexists (0:r0=0)");
    assert!(
        e.starts_with("t.litmus:5:15:") && e.contains("holds no location's address"),
        "{e}"
    );
    let e = error("PTX A\n{ int y[2] = {0, 0}; }\n P0 ;\n ld.weak r0, [y] ;\nexists (y=0)");
    assert!(e.starts_with("t.litmus:5:9:") && e.contains("y[0]"), "{e}");
    let e = error("PTX A\n{ int y[2] = {0, 0, 1}; }\n P0 ;\n ld.weak r0, [y] ;\nexists (0:r0=0)");
    assert!(e.contains("more initial values"), "{e}");
}

#[test]
fn local_locations_live_in_their_work_group() {
    let t = parse(
        "OpenCL L\n{ int d = 3; }\nP0@wg 0, dev 0 (local atomic_int* x, local int* d) {\n  atomic_store_explicit(x, 1, memory_order_release, memory_scope_work_group);\n}\nP1@wg 0, dev 0 (local atomic_int* x, local int* d) {\n  int r0 = atomic_load_explicit(x, memory_order_acquire, memory_scope_work_group);\n  int r1 = *d;\n}\nexists (x=1 /\\ 1:r1=3)",
    );
    let x = t.location_named("x").expect("x");
    assert_eq!(t.locations[x].space, Space::Local);
    for th in &t.threads {
        for i in &th.insts {
            if let Some(s) = i.mem_space() {
                assert_eq!(s, Space::Local, "{i:?}");
            }
        }
    }
    let r = run(&t, 128).expect("runs");
    // Final values are read back and the initial value of d is seen.
    assert_eq!(r.witnesses, 128, "{:?}", states(&r));
    // Two CTAs: each has its own copy of x, so P1 reads 0 (its copy), on the machine and in the
    // oracle.
    let r = run(
        &parse("PTX A\n{ shared int x=0; }\n P0@cta 0 | P1@cta 1 ;\n st.shared.weak [x], 1 | ld.shared.weak r0, [x] ;\nexists (1:r0=0)"),
        8,
    )
    .expect("two work-groups, two copies");
    assert_eq!((r.witnesses, states(&r)), (8, vec!["P1:r0=0;".to_string()]));
    assert_eq!(r.model.as_ref().expect("decided").allowed, [vec![0]]);
    let e = error("PTX A\n{ x=0; }\n P0 | P1 ;\n st.shared.weak [x], 1 | ld.global.weak r0, [x] ;\nexists (1:r0=0)");
    assert!(
        e.starts_with("t.litmus:4:29:") && e.contains("global memory here but local"),
        "{e}"
    );
}

#[test]
fn ptx_operations_take_the_types_the_isa_lists() {
    let mut ok = Vec::new();
    for (op, tys) in [
        ("and", "b32 b64"),
        ("or", "b32 b64"),
        ("xor", "b32 b64"),
        ("exch", "b32 b64"),
        ("add", "u32 s32 u64 f32"),
        ("inc", "u32"),
        ("dec", "u32"),
        ("min", "u32 s32 u64 s64"),
        ("max", "u32 s32 u64 s64"),
    ] {
        for ty in tys.split(' ') {
            let wide = ty.ends_with("64");
            let red = if op == "exch" {
                String::new()
            } else {
                format!(" red.release.cta.{op}.{ty} [x], 1 ;\n")
            };
            ok.push(format!(
                "PTX A\n{{ {} x=0; }}\n P0 ;\n atom.acq_rel.sys.global.{op}.{ty} r0, [x], 1 ;\n{red}exists (0:r0=0)",
                if wide { "uint64_t" } else { "" }
            ));
        }
    }
    ok.push("PTX A\n{ }\n P0 ;\n atom.cas.b64 r0, [x], 1, 2 ;\nexists (0:r0=0)".into());
    ok.push("PTX A\n{ }\n P0 ;\n ld.relaxed.sys.shared::cta.L1::evict_last.u32 r0, [x] ;\n st.volatile.shared.wt.s32 [x], 1 ;\n ld.global.lu.weak.f64 r1, [y] ;\nexists (0:r0=0)".into());
    for text in &ok {
        let t = parse(text);
        assert!(t.threads[0].pending.is_empty(), "{text}");
    }
    // `red.acquire` and `red.acq_rel` (herd's and Dat3M's tests; not in the PTX ISA) are the atom
    // with that order and a scratch result, so that the acquire waits for the value; red.release
    // stays a reduction without a result.
    for (sem, ord, result) in [
        ("acquire", RmwOrd::Acquire, true),
        ("acq_rel", RmwOrd::AcqRel, true),
        ("release", RmwOrd::Release, false),
    ] {
        let t = parse(&format!(
            "PTX A\n{{ x=0; }}\n P0 ;\n red.{sem}.gpu.add.u32 [x], 1 ;\nexists (x=1)"
        ));
        let rmw = t.threads[0]
            .insts
            .iter()
            .find_map(|i| match i {
                Inst::Rmw { dst, ord, .. } => Some((dst.is_some(), *ord)),
                _ => None,
            })
            .expect("an rmw");
        assert_eq!(rmw, (result, ord), "red.{sem}");
    }
    for (text, at, what) in [
        ("atom.inc.s32 r0, [x], 1", "4:11:", ".u32 (PTX ISA)"),
        ("atom.and.u32 r0, [x], 1", "4:11:", ".b32 .b64"),
        ("red.cas.b32 [x], 1", "4:6:", "red has no .cas"),
        (
            "red.sc.gpu.add [x], 1",
            "4:6:",
            "red cannot be .sc (allowed: relaxed, acquire, release, acq_rel)",
        ),
        ("atom.add.f16 r0, [x], 1", "4:11:", "needs .noftz"),
        ("ld.volatile.gpu r0, [x]", "4:14:", "takes no scope"),
        ("ld.global.nc.u32 r0, [x]", "4:12:", "non-coherent"),
        ("ld.local.u32 r0, [x]", "4:5:", "not a litmus location"),
        ("ld.f16 r0, [x]", "4:5:", "no .f16 type"),
        ("ld.relaxed.gpu.gpu r0, [x]", "4:17:", "second scope"),
    ] {
        error_at(
            &format!("PTX A\n{{ }}\n P0 ;\n {text} ;\nexists (x=0)"),
            at,
            what,
        );
    }
    for (text, cap) in [
        ("st.weak.b8 [x], 1", Capability::SubWordAccess),
        ("ld.relaxed.gpu.s16 r0, [x]", Capability::SubWordAccess),
        ("ld.weak.b128 r0, [x]", Capability::WideAccess),
        (
            "ld.weak.v4.u32 {r0, r1, r2, r3}, [x]",
            Capability::VectorAccess,
        ),
        ("atom.add.f64 r0, [x], 1", Capability::FloatAtomics),
        ("atom.add.noftz.bf16x2 r0, [x], 1", Capability::FloatAtomics),
        ("atom.cas.b16 r0, [x], 1, 2", Capability::SubWordAccess),
        ("fence.sc.cluster", Capability::Clusters),
        ("fence.proxy.alias", Capability::Proxies),
        ("membar.proxy.alias", Capability::Proxies),
        ("sust.weak x, 2", Capability::Proxies),
        ("suld.weak r1, x", Capability::Proxies),
        ("tld.weak r1, x", Capability::Proxies),
        ("cold.weak r1, x", Capability::Proxies),
    ] {
        let t = parse(&format!(
            "PTX A\n{{ x=0; }}\n P0 ;\n {text} ;\nexists (x=0)"
        ));
        match litmus::check_runnable(&t) {
            Err(LitmusError::NeedsCapability {
                capability, line, ..
            }) => {
                assert_eq!((capability, line), (cap, 4), "{text}")
            }
            other => panic!("{text}: {other:?}"),
        }
        // The oracle refuses it too: the IR holds no instruction for it.
        let e = litmus::model::decide(&t, &litmus::model::ModelOptions::default())
            .expect_err("not modelled");
        assert!(e.to_string().contains("not modelled"), "{text}: {e}");
    }
    // A virtual alias of the init block (Dat3M's `y @ PROXY aliases x`): the alias parses as a
    // location like its target, and the test needs the capability at the alias's line.
    for proxy in ["generic", "surface", "texture", "constant"] {
        let t = parse(&format!(
            "PTX A\n{{ x=0;\n y @ {proxy} aliases x; }}\n P0 ;\n st.weak x, 1 ;\n ld.weak r0, y ;\nexists (0:r0=0)"
        ));
        match litmus::check_runnable(&t) {
            Err(LitmusError::NeedsCapability {
                capability,
                line,
                col,
                ..
            }) => assert_eq!(
                (capability, line, col),
                (Capability::Proxies, 3, 2),
                "{proxy}"
            ),
            other => panic!("{proxy}: {other:?}"),
        }
        assert!(litmus::model::decide(&t, &litmus::model::ModelOptions::default()).is_err());
    }
    for (text, at, what) in [
        ("y @ global aliases x;", "3:6:", "unknown proxy `global`"),
        ("y @ generic alias x;", "3:14:", "expected `aliases`"),
        (
            "y @ generic aliases z;",
            "3:22:",
            "z is not a location declared before",
        ),
    ] {
        error_at(
            &format!("PTX A\n{{ x=0;\n {text} }}\n P0 ;\n ld.weak r0, y ;\nexists (0:r0=0)"),
            at,
            what,
        );
    }
}

#[test]
fn local_memory_used_by_two_work_groups_is_a_copy_in_each() {
    // OpenCL 2.0 s3.3.1: each work-group has its own local memory. P1 reads its work-group's copy
    // of x, which P0 never writes: 0 whatever P1 reads from y, on the machine and in the oracle;
    // the final state names the copy of P0's work-group (the first user), which P0 sets to 1.
    let t = parse("C MP_local\n{ [x]=0; [y]=0; }\nP0@wg 0, dev 0 (local int* x, global atomic_int* y) {\n *x = 1;\n atomic_store_explicit(y, 1, memory_order_release);\n}\nP1@wg 1, dev 0 (local int* x, global atomic_int* y) {\n int r1 = atomic_load_explicit(y, memory_order_acquire);\n int r2 = *x;\n}\nexists (1:r1=1 /\\ 1:r2=0 /\\ x=1)");
    litmus::check_runnable(&t).expect("runs");
    let d = litmus::model::decide(&t, &litmus::model::ModelOptions::default()).expect("decides");
    assert!(d.race.is_none(), "the copies do not race: {:?}", d.race);
    assert_eq!(d.allowed, [vec![0, 0, 1], vec![1, 0, 1]]);
    let r = run(&t, 256).expect("runs");
    assert!(r.forbidden_observed().is_empty(), "{:?}", states(&r));
    assert!(
        states(&r)
            .iter()
            .all(|s| s.contains("P1:r2=0;") && s.contains("x=1;")),
        "{:?}",
        states(&r)
    );
    // A non-zero initial value starts every copy.
    let t = parse("C L2\n{ [x]=5; }\nP0@wg 0, dev 0 (local int* x) {\n *x = 1;\n}\nP1@wg 1, dev 0 (local int* x) {\n int r2 = *x;\n}\nexists (1:r2=5 /\\ x=1)");
    let d = litmus::model::decide(&t, &litmus::model::ModelOptions::default()).expect("decides");
    assert_eq!(d.allowed, [vec![5, 1]]);
    let r = run(&t, 64).expect("runs");
    assert_eq!(states(&r), ["P1:r2=5; x=1;"]);
}

#[test]
fn dat3m_local_values_branches_and_ordered_conditions() {
    // Dat3M's tests translated from Memalloy write `ld r0, 1` (and `ld.weak r0, 1`) for a register
    // taking a number: no access, as `mov`.
    let t = parse("PTX A\n{ x=0; y=0; }\n P0 ;\n ld r0, 5 ;\n ld.weak r1, 7 ;\n ld r2, r1 ;\n st.weak x, r0 ;\n st.weak y, r2 ;\nexists (x=5 /\\ y=7)");
    assert!(!t.threads[0]
        .insts
        .iter()
        .any(|i| matches!(i, Inst::Load { .. })));
    let r = run(&t, 32).expect("runs");
    assert_eq!(r.witnesses, 32, "{:?}", states(&r));
    // Dat3M's branches on either operand, signed: blt ble bgt bge.
    for (cond, taken) in [
        ("blt r0, 0", true),
        ("ble 0, r0", false),
        ("bgt r0, -2", true),
        ("bge -1, r0", true),
    ] {
        let t = parse(&format!("PTX A\n{{ x=0; }}\n P0 ;\n ld r0, -1 ;\n {cond}, LC01 ;\n st.weak x, 1 ;\n LC01: ;\nexists (x=0)"));
        let r = run(&t, 8).expect("runs");
        assert_eq!(r.witnesses == 8, taken, "{cond}: {:?}", states(&r));
    }
    // Dat3M's `minus` is `sub`.
    let t = parse(
        "PTX A\n{ x=5; }\n P0 ;\n atom.acq_rel.sys.minus r0, x, 1 ;\nexists (x=4 /\\ 0:r0=5)",
    );
    assert_eq!(run(&t, 8).expect("runs").witnesses, 8);
    // Dat3M's ordered comparisons in conditions, on values as numbers of their type.
    for (cond, holds) in [
        ("P0:r0 < 0", true),
        ("P0:r0 >= 0", false),
        ("x > 0 /\\ 2 >= x", true),
        ("0 > x", false),
        ("P0:r1 > 5", true),
        ("P0:r1 <= 4294967294", false),
    ] {
        let t = parse(&format!("PTX A\n{{ x=0; uint32_t y=0; }}\n P0 ;\n ld r0, -1 ;\n st.weak x, 1 ;\n st.weak.u32 y, -1 ;\n ld.weak.u32 r1, y ;\nexists ({cond})"));
        let r = run(&t, 8).expect("runs");
        assert_eq!(r.witnesses == 8, holds, "{cond}: {:?}", states(&r));
    }
    // With an order, a scope or a space it is a load, whose operand must be a location.
    let e = error("PTX A\n{ x=0; }\n P0 ;\n ld.relaxed.gpu r0, 5 ;\nexists (x=0)");
    assert!(
        e.starts_with("t.litmus:4:21:") && e.contains("expected a location"),
        "{e}"
    );
}

#[test]
fn predicates_skip_instructions_and_branch() {
    let t = parse("PTX P\n{ x=0; y=0; }\n P0 ;\n setp.lo.s32 p, -1, 1 ;\n @p st.weak [x], 1 ;\n @!p st.weak [y], 1 ;\n setp.lt.s32 q, -1, 1 ;\n @q bra L ;\n st.weak [x], 2 ;\n L: ;\nexists (x=0 /\\ y=1)");
    let r = run(&t, 64).expect("runs");
    // -1 is not below 1 unsigned, but is below 1 signed: x stays 0, y is 1, the branch skips x=2.
    assert_eq!(r.witnesses, 64, "{:?}", states(&r));
}

#[test]
fn named_barriers_are_parsed_with_id_and_count_registers_read_where_known_and_refused_where_the_run_decides(
) {
    // Counts count litmus threads; registers the thread never writes are read from the init block.
    let t = parse("PTX B\n{ 1:r1=1; 1:r2=2; }\n P0 | P1 ;\n bar.sync 0 | barrier.cta.sync.aligned 0 ;\n bar.cta.sync 3, 2 | barrier.sync r1, r2 ;\n bar.arrive 2, 1 | barrier.arrive.aligned 1, 3 ;\n bar.red.popc.u32 r0, 1, !p | barrier.red.or.pred q, 0, 2, p ;\nexists (0:r0=0)");
    let b = &t.threads[0].barriers;
    assert_eq!(b.len(), 4);
    assert!(b[0].is_work_group_barrier() && b[0].aligned);
    assert_eq!(
        (b[1].id, b[1].threads),
        (Operand::Imm(3), Some(Operand::Imm(2)))
    );
    assert_eq!(b[2].action, BarrierAction::Arrive);
    assert!(matches!(
        b[3].action,
        BarrierAction::Reduce { negated: true, .. }
    ));
    let b = &t.threads[1].barriers;
    assert!(!b[0].aligned || b[0].is_work_group_barrier());
    assert_eq!(
        (b[1].id, b[1].threads),
        (Operand::Imm(1), Some(Operand::Imm(2))),
        "read from the registers' initial values"
    );
    assert!(t.threads[1].insts.iter().any(|i| matches!(
        i,
        Inst::Barrier {
            kind: gpumemsim::ir::BarrierKind::Named(gpumemsim::ir::CtaBarrier {
                id: 1,
                threads: Some(2),
                ..
            }),
            ..
        }
    )));
    assert!(
        matches!(b[3].action, BarrierAction::Reduce { negated: false, .. })
            && b[3].threads == Some(Operand::Imm(2))
    );
    // Each is one IR barrier at its place.
    let n = t.threads[0]
        .insts
        .iter()
        .filter(|i| matches!(i, Inst::Barrier { .. }))
        .count();
    assert_eq!(n, 4);
    // Ids and counts in registers whose value the run decides (loaded from memory here, a
    // path-dependent value below) are refused; immediates run.
    for (set, text, cap) in [
        (
            "ld.weak r1, [x]",
            "bar.sync r1",
            Capability::BarrierRegister,
        ),
        (
            "ld.weak r1, [x]",
            "bar.sync 0, r1",
            Capability::BarrierRegister,
        ),
        (
            "ld.relaxed.gpu r1, [x]",
            "bar.arrive r1, 2",
            Capability::BarrierRegister,
        ),
    ] {
        let t = parse(&format!(
            "PTX A\n{{ x=0; }}\n P0 | P1 ;\n {set} | bar.sync 0 ;\n {text} | ;\nexists (x=0)"
        ));
        match run(&t, 8) {
            Err(LitmusError::NeedsCapability {
                capability,
                line,
                col,
                ..
            }) => {
                assert_eq!((capability, line, col), (cap, 5, 2), "{text}")
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    // Registers the thread writes with values known before the run (`mov`, arithmetic, on every
    // path alike) are read at the barrier; a value that differs between paths is not.
    let t = parse("PTX C\n{ x=0; 0:r9=4; }\n P0 | P1 ;\n mov.u32 r3, 1 | bar.sync 1, 2 ;\n add.u32 r4, r3, 1 | ;\n setp.eq.u32 p, r9, 4 | ;\n @p bra L | ;\n sub.u32 r5, r9, 1 | ;\n L: bar.sync r3, r4 | ;\n bar.arrive r3, r5 | ;\nexists (x=0)");
    let b = &t.threads[0].barriers;
    assert_eq!(
        (b[0].id, b[0].threads),
        (Operand::Imm(1), Some(Operand::Imm(2))),
        "r3 = 1 and r4 = r3 + 1 on every path"
    );
    assert!(
        matches!(b[1].threads, Some(Operand::Reg(_))),
        "r5 is 3 on one path and 0 on the other: {:?}",
        b[1].threads
    );
    for (text, at, what) in [
        ("bar.sync 16", "4:11:", "0 to 15"),
        (
            "bar.sync 0, 0",
            "4:14:",
            "counts litmus threads (1 to 64), found 0",
        ),
        (
            "bar.sync 0, 65",
            "4:14:",
            "counts litmus threads (1 to 64), found 65",
        ),
        ("bar.sync r1", "4:2:", "the barrier id register holds 16"),
        (
            "bar.sync 1, r2",
            "4:2:",
            "the thread count register holds 0",
        ),
        ("bar.red.popc.u32 r0, 0", "4:25:", "`,`"),
        ("bar.warp.sync 1", "4:2:", "one per warp"),
    ] {
        error_at(
            &format!("PTX A\n{{ x=0; 0:r1=16; }}\n P0 ;\n {text} ;\nexists (x=0)"),
            at,
            what,
        );
    }
}

#[test]
fn named_barriers_synchronise_by_id_and_count_and_deadlocks_have_no_final_state() {
    // Barrier 1 with a count of two threads orders P0's store before P1's load; P2 takes no part.
    let t = parse("PTX A\n{ x=0; y=0; }\n P0@cta 0 | P1@cta 0 | P2@cta 0 ;\n st.weak [x], 1 | bar.sync 1, 2 | st.weak [y], 1 ;\n bar.sync 1, 2 | ld.weak r0, [x] | ld.weak r0, [y] ;\nexists (1:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert_eq!(states(&r), ["P1:r0=1;"]);
    assert_eq!(r.no_final_state, 0);
    // Different ids never meet: each thread's barrier completes alone (count 1) and P1 may read 0.
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.sync 2, 1 ;\n bar.sync 1, 1 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert!(r.forbidden_observed().is_empty() && r.no_final_state == 0);
    let d = r.model.as_ref().expect("decided");
    assert_eq!(d.allowed.len(), 2);
    // Threads at different barriers: every iteration ends without a final state, no witness, no
    // error; the model agrees that executions deadlock.
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.sync 2 ;\n bar.sync 1 | ld.weak r0, [x] ;\nexists (1:r0=0 \\/ 1:r0=1)");
    let r = run(&t, 100).expect("a deadlock is a result");
    assert!(r.outcomes.is_empty());
    assert_eq!((r.no_final_state, r.witnesses, r.prop_true), (100, 0, 0));
    let d = r.model.as_ref().expect("decided");
    assert!(d.deadlock && d.allowed.is_empty());
    assert!(!r.unsound_no_final_state());
    assert_eq!(
        r.check(),
        gpumemsim::litmus::CheckStatus::Unchecked,
        "no expectation declared, nothing unsound"
    );
    // bar.arrive then bar.sync: the arrival releases P0's store to P1.
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.sync 1, 2 ;\n bar.arrive 1, 2 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert_eq!(states(&r), ["P1:r0=1;"]);
    // `bar.arrive a` without a count (as catalogues write it) expects the whole CTA.
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.sync 1 ;\n bar.arrive 1 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert_eq!(states(&r), ["P1:r0=1;"]);
    assert_eq!(r.model.as_ref().expect("decided").allowed, [vec![1]]);
    // A count held in a register the thread never writes is read from the init block.
    let t = parse("PTX A\n{ x=0; 0:r2=2; 1:r2=2; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.cta.sync 1, r2 ;\n bar.arrive 1, r2 | ld.weak r0, [x] ;\nexists (1:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert_eq!(states(&r), ["P1:r0=1;"]);
    assert_eq!(r.model.as_ref().expect("decided").allowed, [vec![1]]);
    // A count of one thread: P1's barrier completes alone, so P1 may read 0 (the catalogues'
    // `bar.cta.sync 1, 1`).
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n st.weak [x], 1 | bar.cta.sync 1, 1 ;\n  | ld.weak r0, [x] ;\nexists (1:r0=0)");
    let r = run(&t, 64).expect("runs");
    assert_eq!(
        r.model.as_ref().expect("decided").allowed,
        [vec![0], vec![1]]
    );
    // bar.red.popc per instance: two of three predicates true.
    let t = parse("PTX A\n{ }\n P0@cta 0 | P1@cta 0 | P2@cta 0 ;\n setp.eq.s32 p, r9, 0 | setp.eq.s32 p, r9, 0 | setp.ne.s32 p, r9, 0 ;\n bar.red.popc.u32 r0, 3, p | bar.red.popc.u32 r0, 3, p | bar.red.popc.u32 r0, 3, p ;\nforall (0:r0=2)");
    let r = run(&t, 256).expect("runs");
    assert_eq!(states(&r), ["P0:r0=2;"]);
    // The oracle gives every participant the reduction of its generation: 2 only.
    let d = r.model.as_ref().expect("decided");
    assert_eq!(d.allowed, [vec![2]]);
}

#[test]
fn loops_that_never_end_have_no_final_state_and_the_model_does_not_judge_them() {
    // P0 waits for a value no thread writes: every iteration spins until the watchdog stops its
    // launch. That is a result (no final state, stopped), not an error; the model decides finite
    // executions only, so it neither allows nor forbids it.
    let t = parse("PTX Spin\n{ x=0; y=0; }\n P0@cta 0 | P1@cta 1 ;\n L: | st.relaxed.gpu [y], 1 ;\n ld.relaxed.gpu r0, [x] | ;\n beq r0, 0, L | ;\nexists (0:r0=1)");
    let r = run(&t, 64).expect("a loop that never ends is a result");
    assert!(r.outcomes.is_empty());
    assert_eq!(
        (r.no_final_state, r.no_final_state_stopped, r.witnesses),
        (64, 64, 0)
    );
    assert!(r.has_loop);
    assert_eq!(r.no_final_state_judgement(), Some(Judgement::Unknown));
    assert_eq!(r.check(), gpumemsim::litmus::CheckStatus::Unchecked);
    // Had no thread a loop, straight-line code that did not end would be the simulator's fault.
    let mut straight = r.clone();
    straight.has_loop = false;
    assert!(straight.unsound_no_final_state());
    assert_eq!(straight.check(), gpumemsim::litmus::CheckStatus::Unsound);
    // A spin loop that may or may not end: P0 leaves only while x is still 0, so once P1's store
    // is visible it spins for ever. Finished iterations read 0, the others have no final state.
    let t = parse("PTX Spin2\n{ x=0; }\n P0@cta 0 | P1@cta 1 ;\n L: | st.relaxed.gpu [x], 1 ;\n ld.relaxed.gpu r0, [x] | ;\n bne r0, 0, L | ;\nexists (0:r0=0)");
    let r = run(&t, 256).expect("runs");
    assert!(
        states(&r).iter().all(|s| s == "P0:r0=0;"),
        "{:?}",
        states(&r)
    );
    assert_eq!(r.no_final_state, r.no_final_state_stopped);
    assert_eq!(r.finals() + r.no_final_state, 256);
    assert!(r.forbidden_observed().is_empty());
    assert_ne!(r.check(), gpumemsim::litmus::CheckStatus::Unsound);
}

#[test]
fn barriers_reached_unequally_are_refused() {
    for (body, line) in [
        // P1 never reaches the barrier.
        ("bar.sync 0 | st.weak [x], 1 ;\n", 3),
        // P0 reaches it on one path only.
        ("bne r0, 0, L | bar.sync 0 ;\n bar.sync 0 | ;\n L: | ;\n", 5),
        // A barrier in a loop.
        ("L: | bar.sync 0 ;\n bar.sync 0 | ;\n bne r0, 0, L | ;\n", 5),
    ] {
        let t = parse(&format!(
            "PTX A\n{{ x=0; }}\n P0@cta 0 | P1@cta 0 ;\n {body}exists (x=0)"
        ));
        match run(&t, 8) {
            Err(LitmusError::NeedsCapability {
                capability,
                line: l,
                ..
            }) => {
                assert_eq!(capability, Capability::BarrierDivergence, "{body}");
                assert!(l >= 3 && l <= line, "{body}: line {l}");
            }
            other => panic!("{body}: {other:?}"),
        }
    }
    // Equal counts on every path run.
    let t = parse("PTX A\n{ x=0; }\n P0@cta 0 | P1@cta 0 ;\n bne r0, 0, L | bar.sync 0 ;\n st.weak [x], 1 | ;\n L: | ;\n bar.sync 0 | ;\nexists (x=0)");
    run(&t, 8).expect("one barrier on every path of both threads");
}

#[test]
fn sizes_from_the_input_are_bounded() {
    let e = error("PTX A\n{ int y[1000000000]; }\n P0 ;\n ld.weak r0, [y] ;\nexists (0:r0=0)");
    assert!(
        e.starts_with("t.litmus:2:9:") && e.contains("1 to 4096"),
        "{e}"
    );
    let e = error("PTX A\n{ uint64_t a[4096]; uint64_t b[4096]; uint64_t c[4096]; }\n P0 ;\n ld.weak r0, [a] ;\nexists (0:r0=0)");
    assert!(e.contains("bytes per instance"), "{e}");
    let cols = (0..65)
        .map(|i| format!("P{i}"))
        .collect::<Vec<_>>()
        .join(" | ");
    let e = error(&format!("PTX A\n{{ }}\n {cols} ;\nexists (x=0)"));
    assert!(e.contains("more than 64 threads"), "{e}");
    let locs: String = (0..300).map(|i| format!("x{i}=0; ")).collect();
    let e = error(&format!("PTX A\n{{ {locs}}}\n P0 ;\nexists (x0=0)"));
    assert!(e.contains("more than 256 locations"), "{e}");
}

/// Deep nesting is refused with an error, long chains parse into shallow trees; run on a small
/// stack so that any recursion proportional to the input would overflow.
#[test]
fn deep_or_long_conditions_do_not_overflow_the_stack() {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let head = "PTX A\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists ";
            for deep in [
                format!("{}x=0{}", "(".repeat(100_000), ")".repeat(100_000)),
                format!("({}x=0)", "~".repeat(100_000)),
                format!("({}x=0)", "not ".repeat(100_000)),
            ] {
                let e = error(&format!("{head}{deep}"));
                assert!(
                    e.starts_with("t.litmus:5:") && e.contains("more than 200 deep"),
                    "{e}"
                );
            }
            let chain = vec!["x=0"; 200_000].join(" /\\ ");
            let t = parse(&format!("{head}({chain} \\/ {chain})"));
            assert!(t.condition.witness(&[0]) && !t.condition.witness(&[1]));
            let nested = format!("{}x=0{}", "(".repeat(150), ")".repeat(150));
            parse(&format!("{head}{nested}"));
        })
        .expect("thread")
        .join()
        .expect("no stack overflow");
}

#[test]
fn conditions_read_herd_meanings() {
    let t = parse("PTX A\n{ x=0; int y[2]={1,2}; }\n P0 ;\n ld.weak r0, [x] ;\nlocations [y[1];]\nexists ([x]=0 /\\ *x=0 /\\ y[0]=1 => 0:r0=0)");
    assert_eq!(t.condition.observed.len(), 4);
    let e = error("PTX A\n{ x=0; y=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists (0:r0=y)");
    assert!(
        e.starts_with("t.litmus:5:14:") && e.contains("address of y"),
        "{e}"
    );
    // herd's filter stands before the condition (issue 47); after it, an error at its position.
    let e = error("PTX A\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists (x=0) filter (x=0)");
    assert!(
        e.starts_with("t.litmus:5:14:") && e.contains("before the final condition"),
        "{e}"
    );
    let e = error("PTX A\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists (x=0) with (x=0)");
    assert!(e.contains("not supported"), "{e}");
}

#[test]
fn tests_waiting_for_machine_capabilities_name_them() {
    let files = litmus::collect(&[root().join("workloads/litmus-needs")]).expect("folder");
    assert!(files.len() >= 9, "{} tests", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let needs = text
            .lines()
            .find_map(|l| l.split("needs:").nth(1))
            .unwrap_or_else(|| panic!("{}: no `needs:` comment", f.display()));
        let t = litmus::load(&f).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.expectation.is_some(), "{}", f.display());
        match litmus::check_runnable(&t) {
            Err(LitmusError::NeedsCapability { capability, .. }) => assert!(
                needs.contains(capability.name()),
                "{}: needs `{}`, comment says {needs}",
                f.display(),
                capability.name()
            ),
            other => panic!(
                "{}: {other:?} (if the machine has the capability now, move the test to workloads/litmus/)",
                f.display()
            ),
        }
        // The oracle refuses what the IR could not hold (a verdict would be about another program)
        // and agrees with the expectation where it decides (threads on two devices).
        let expect = t.expectation.expect("declared").expect;
        match litmus::model::decide(&t, &litmus::model::ModelOptions::default()) {
            Err(litmus::model::ModelError::NotModelled { .. }) => assert!(
                t.threads.iter().any(|th| !th.pending.is_empty()),
                "{}: not modelled, yet nothing pending",
                f.display()
            ),
            Ok(d) => assert_eq!(
                d.agrees(&t.condition, expect),
                Some(true),
                "{}: the model disagrees with the expectation",
                f.display()
            ),
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
}

#[test]
fn herd_format_prints_litmus7_logs() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args([
            "litmus",
            "--format",
            "herd",
            "--iterations",
            "64",
            "--config",
        ])
        .arg(root().join("configs/tiny.toml"))
        .arg(root().join("workloads/litmus/ptx/mp_rel_acq_gpu.litmus"))
        .arg(root().join("workloads/litmus-needs/mp_v2.litmus"))
        .arg(root().join("workloads/litmus/ptx/named_barrier_deadlock.litmus"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "Test MP+rel+acq.gpu Allowed");
    assert!(
        lines[1].starts_with("Histogram (") && lines[1].ends_with(" states)"),
        "{stdout}"
    );
    let n: usize = lines[1]["Histogram (".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut total = 0u64;
    for l in &lines[2..2 + n] {
        let (count, rest) = l.split_at(l.find(['*', ':']).expect("marker"));
        total += count.trim().parse::<u64>().expect("count");
        assert!(rest.starts_with(":>1:r0=") && rest.ends_with(';'), "{l}");
    }
    assert_eq!(total, 64);
    assert_eq!(
        &lines[2 + n..2 + n + 4],
        ["No", "", "Witnesses", "Positive: 0, Negative: 64"]
    );
    assert_eq!(
        lines[2 + n + 4],
        "Condition exists (1:r0=1 /\\ 1:r1=0) is NOT validated"
    );
    assert_eq!(lines[2 + n + 5], "Observation MP+rel+acq.gpu Never 0 64");
    // The deadlock has no final state: herd prints no state and counts none.
    let dl = &lines[2 + n + 7..];
    assert_eq!(lines[2 + n + 6], "", "{stdout}");
    assert_eq!(
        &dl[..6],
        [
            "Test Deadlock+bar.sync1+bar.sync2 Allowed",
            "Histogram (0 states)",
            "No",
            "",
            "Witnesses",
            "Positive: 0, Negative: 0"
        ],
        "{stdout}"
    );
    // The test needing vector accesses is reported on standard error, not in the log.
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    assert!(
        stderr.contains("needs machine capability `vector accesses`"),
        "{stderr}"
    );
    assert!(!stdout.contains("MP+rel+acq.v2"), "{stdout}");
}

/// herdtools7's GPU tests (`GPU_PTX`, and OpenCL with a scope tree): registers holding addresses,
/// cache operators, `membar` levels, and the placement sections after the program.
const GPU_PTX_MP: &str = "GPU_PTX MP+membar.gls\n\"PodWW Rfe PodRR Fre\"\n{\n0:r1=x; 0:r3=y;\n1:r1=y; 1:r3=x;\n}\n P0                 | P1                 ;\n mov.s32 r0, 1      | ld.cg.s32 r0, [r1] ;\n st.cg.s32 [r1], r0 | membar.gl          ;\n membar.gl          | ld.cg.s32 r2, [r3] ;\n mov.s32 r2, 1      |                    ;\n st.cg.s32 [r3], r2 |                    ;\n\nscopeTree\n(device (kernel (cta (warp P0)) (cta (warp P1))))\nx: global, y: global\nexists\n(1:r0=1 /\\ 1:r2=0)\n";

fn allowed(t: &LitmusTest) -> Vec<Vec<i64>> {
    litmus::model::decide(t, &litmus::model::ModelOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .allowed
}

fn places(t: &LitmusTest) -> Vec<(u32, u32)> {
    t.threads.iter().map(|th| (th.device, th.cta)).collect()
}

#[test]
fn herd_gpu_ptx_tests_load_with_their_scope_tree_and_memory_map() {
    let t = parse(GPU_PTX_MP);
    assert_eq!(places(&t), [(0, 0), (0, 1)]);
    assert_eq!(t.condition.text, "exists (1:r0=1 /\\ 1:r2=0)");
    assert_eq!(
        allowed(&t),
        [[0, 0], [0, 1], [1, 1]],
        "membar.gl is fence.sc.gpu"
    );
    let r = run(&t, 200).expect("runs");
    assert_eq!(r.witnesses, 0, "{:?}", states(&r));
    // Without the fences the weak state is allowed.
    let weak = GPU_PTX_MP
        .replace(" membar.gl          ;", "                    ;")
        .replace(" membar.gl          |", "                    |");
    assert!(allowed(&parse(&weak)).contains(&vec![1, 0]));
    // litmus7's logs print the tree after the condition; `scopes:` and a bare tree read the same.
    let after = GPU_PTX_MP.replace(
        "scopeTree\n(device (kernel (cta (warp P0)) (cta (warp P1))))\nx: global, y: global\nexists\n(1:r0=1 /\\ 1:r2=0)\n",
        "exists (1:r0=1 /\\ 1:r2=0)\n(device (kernel (cta (warp P0) (warp P1))))\nx:global; y:global\n",
    );
    let t = parse(&after);
    assert_eq!(places(&t), [(0, 0), (0, 0)], "two warps of one CTA");
    assert_eq!(t.condition.text, "exists (1:r0=1 /\\ 1:r2=0)");
    let tree =
        |tree: &str| GPU_PTX_MP.replace("(device (kernel (cta (warp P0)) (cta (warp P1))))", tree);
    for (text, want) in [
        ("(device (cta P0)) (device (cta P1))", [(0, 0), (1, 1)]),
        ("(device P0 P1)", [(0, 0), (0, 1)]),
        ("(device (warp P1) (cta P0))", [(0, 1), (0, 0)]),
        (
            "(system (gpu (block (thread P0) (thread P1))))",
            [(0, 0), (0, 0)],
        ),
    ] {
        assert_eq!(places(&parse(&tree(text))), want, "{text}");
    }
    let t = parse(&GPU_PTX_MP.replace("scopeTree", "scopes:"));
    assert_eq!(places(&t), [(0, 0), (0, 1)]);
    // A memory map alone, after a table whose header places the threads.
    let t = parse(
        "PTX S\n{ 0:r1=x; 1:r1=x; }\n P0@cta 0 | P1@cta 0 ;\n st.weak.s32 [r1], 1 | ld.weak.s32 r0, [r1] ;\nx: shared\nexists (1:r0=0)",
    );
    assert_eq!(
        t.locations[t.location_named("x").expect("x")].space,
        Space::Local
    );
    // A shared location in the memory map is work-group-local, and runs in one work-group.
    let t = parse(
        "GPU_PTX CoRR+shared\n{0:r1=x; 1:r1=x; 1:r3=x;}\n P0                 | P1                 ;\n mov.s32 r0, 1      | ld.cg.s32 r0, [r1] ;\n st.cg.s32 [r1], r0 | ld.cg.s32 r2, [r3] ;\nexists (1:r0=1 /\\ 1:r2=0)\n(device (kernel (cta (warp P0) (warp P1))))\nx:shared\n",
    );
    let x = t.location_named("x").expect("x");
    assert_eq!(t.locations[x].space, Space::Local);
    assert!(t.threads[1]
        .insts
        .iter()
        .all(|i| i.mem_space() != Some(Space::Global)));
    run(&t, 64).expect("one work-group shares x");
    // OpenCL threads without a placement, placed by the tree.
    let t = parse(
        "OpenCL MP\n{ [x]=0; [y]=0; }\nP0 (global atomic_int* x, global atomic_int* y) {\n  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);\n  atomic_store_explicit(y, 1, memory_order_release, memory_scope_work_group);\n}\nP1 (global atomic_int* x, global atomic_int* y) {\n  int r0 = atomic_load_explicit(y, memory_order_acquire, memory_scope_work_group);\n  int r1 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device);\n}\nscopeTree (device (work_group P0 P1))\nexists (1:r0=1 /\\ 1:r1=0)",
    );
    assert_eq!(places(&t), [(0, 0), (0, 0)]);
    assert_eq!(
        allowed(&t),
        [[0, 0], [0, 1], [1, 1]],
        "one work-group: the pair synchronises"
    );
    // herd's OpenCL tests pass every location to every thread, so a local one may be used by none:
    // it keeps its initial value, in the oracle and in the machine; a labelled barrier.
    let t = parse(
        "OpenCL MP+barrier\n{ [x]=0; [y]=5; }\nP0 (global int* x, local int* y) {\n  *x = 1;\n  b1: barrier(CLK_GLOBAL_MEM_FENCE);\n}\nP1 (global int* x, local int* y) {\n  b1: barrier(CLK_GLOBAL_MEM_FENCE);\n  int r0 = *x;\n}\nscopeTree (device (work_group P0 P1))\nexists (1:r0=1 /\\ y=5)",
    );
    assert_eq!(allowed(&t), [[1, 5]]);
    let r = run(&t, 32).expect("runs");
    assert_eq!(r.witnesses, 32, "{:?}", states(&r));
}

#[test]
fn scope_trees_and_memory_maps_that_do_not_fit_the_test_are_refused_where_they_are_wrong() {
    let tree =
        |tree: &str| GPU_PTX_MP.replace("(device (kernel (cta (warp P0)) (cta (warp P1))))", tree);
    error_at(
        &tree("(device (cta (warp P0) (cta P1)))"),
        "15:24:",
        "a cta level inside a cta level",
    );
    error_at(
        &tree("(device (cta P0) (cta P0 P1))"),
        "15:23:",
        "places P0 twice",
    );
    error_at(
        &tree("(device (cta P0))"),
        "14:1:",
        "does not place thread P1",
    );
    error_at(
        &tree("(device (lane P0) (cta P1))"),
        "15:10:",
        "unknown scope level `lane`",
    );
    error_at(
        &tree("(device (cta P0) (cta P7))"),
        "15:23:",
        "no thread P7",
    );
    error_at(&tree("(device (cta P0 x))"), "15:17:", "a thread (`P0`)");
    error_at(
        &GPU_PTX_MP.replace(
            "scopeTree\n(device",
            "scopeTree\n(device (cta P0 P1))\n(device",
        ),
        "16:28:",
        "places P0 twice",
    );
    error_at(
        &GPU_PTX_MP.replace("x: global, y: global", "x: global, z: shared"),
        "16:12:",
        "z is not a location",
    );
    error_at(
        &GPU_PTX_MP.replace("x: global, y: global", "x: global, x: shared"),
        "16:12:",
        "names x twice",
    );
    error_at(
        &GPU_PTX_MP.replace("P1                 ;\n", "P1@cta 1,gpu 0     ;\n"),
        "15:44:",
        "placed by its header",
    );
    error_at(
        &GPU_PTX_MP
            .replace("x: global, y: global", "x: shared")
            .replace("ld.cg.s32 r2, [r3]", "ld.global.cg.s32 r2, [r3]"),
        "16:1:",
        "local memory in the memory map but global",
    );
    let deep = GPU_PTX_MP.replace(
        "(device (kernel (cta (warp P0)) (cta (warp P1))))",
        &format!("{} P0 P1 {}", "(device ".repeat(40), ")".repeat(40)),
    );
    error_at(&deep, "15:65:", "deeper than 8");
    error_at(
        &format!("{GPU_PTX_MP}(device (cta P0 P1))\n"),
        "19:1:",
        "a second scope tree",
    );
    error_at(
        &format!("{GPU_PTX_MP}junk\n"),
        "19:1:",
        "the end of the test",
    );
}

#[test]
fn cvt_converts_as_the_machine_does() {
    let t = parse(
        "GPU_PTX cvt\n{ x=-1; 0:r1=x; }\n P0 ;\n ld.cg.s32 r0, [r1] ;\n cvt.s64.s32 r2, r0 ;\n cvt.u64.u32 r3, r0 ;\n cvt.u32.s64 r4, r2 ;\n cvt.rn.f32.s32 r5, r0 ;\n cvt.rzi.s32.f32 r6, r5 ;\nexists (0:r2=-1 /\\ 0:r3=4294967295 /\\ 0:r4=4294967295 /\\ 0:r6=-1)\nscopeTree (device (cta P0))",
    );
    assert_eq!(allowed(&t), [[-1, 4294967295, 4294967295, -1]]);
    let r = run(&t, 4).expect("runs");
    assert_eq!(r.witnesses, 4, "{:?}", states(&r));
    let cvt =
        |inst: &str| format!("PTX c\n{{ }}\n P0 ;\n mov.s32 r0, 1 ;\n {inst} ;\nexists (0:r0=1)");
    error_at(&cvt("cvt.s32 r1, r0"), "5:2:", "needs two types");
    error_at(
        &cvt("cvt.rm.f32.s32 r1, r0"),
        "5:2:",
        "the modelled conversions",
    );
    error_at(&cvt("cvt.sat.s32.f32 r1, r0"), "5:2:", "`.sat`");
    error_at(&cvt("cvt.f16.f32 r1, r0"), "5:2:", "`.f16`");
    error_at(&cvt("cvt.s64.s32 r1, 5"), "5:2:", "converts a register");
    error_at(
        &cvt("cvt.rn.f32.f32 r1, r0"),
        "5:2:",
        "the modelled conversions",
    );
    error_at(
        &cvt("cvt.rn.s32.s64 r1, r0"),
        "5:2:",
        "the modelled conversions",
    );
    // An address stays one through 64-bit conversions only.
    let addr = |inst: &str| {
        format!("PTX a\n{{ x=3; 0:r1=x; }}\n P0 ;\n {inst} ;\n ld.s32 r0, [r2] ;\nexists (0:r0=3)")
    };
    assert_eq!(allowed(&parse(&addr("cvt.u64.s64 r2, r1"))), [[3]]);
    error_at(
        &addr("cvt.u32.u64 r2, r1"),
        "5:14:",
        "holds no location's address",
    );
}

#[test]
fn herds_gpu_ptx_layout_loads_reg_declarations_thread_names_and_scope_trees() {
    // `N:.reg .TYPE r` declares, `= x` initialises to x's address; threads T0, T1 are P0, P1.
    let t = parse("GPU_PTX A\n{\n0:.reg .s32 r0;\n0:.reg .b64 r1 = x;\n1:.reg .b64 r1 = x;\n1:.reg .s32 r2;\n}\n T0 | T1 ;\n mov.s32 r0, 1 | ld.relaxed.gpu.s32 r2, [r1] ;\n st.relaxed.gpu.s32 [r1], r0 | ;\nScopeTree (grid (cta (warp T0)) (cta (warp T1)))\nx: global\nexists (1:r2=1)");
    assert_eq!(
        t.threads
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["P0", "P1"]
    );
    assert_ne!(t.threads[0].cta, t.threads[1].cta, "the tree's two CTAs");
    let x = t.location_named("x").expect("x declared by its use");
    assert!(t.threads[1]
        .reg_init
        .iter()
        .any(|&(_, i)| i == gpumemsim::litmus::RegInit::Address(x)));
    let r = run(&t, 64).expect("runs");
    assert!(r.forbidden_observed().is_empty());
    assert_eq!(
        r.model.as_ref().expect("decided").allowed,
        [vec![0], vec![1]]
    );
    error_at(
        "PTX A\n{ 0:.reg .f16 r0; }\n P0 ;\n mov r0, 1 ;\nexists (0:r0=1)",
        "2:10:",
        "unknown register type `.f16`",
    );
    // A scope tree in doubled parentheses is the tree itself.
    let t = parse("PTX A\n{ x=0; }\n P0 | P1 ;\n st.relaxed.gpu [x], 1 | ld.relaxed.gpu r0, [x] ;\nscopes: ((device (cta P0 P1)))\nexists (1:r0=1)");
    assert_eq!(t.threads[0].cta, t.threads[1].cta);
    // A store written .acquire and a load written .release load (herd marks them undefined).
    let t = parse("PTX A\n{ x=0; }\n P0 | P1 ;\n st.acquire.gpu [x], 1 | ld.release.gpu r0, [x] ;\nexists (1:r0=1)");
    assert_eq!(t.threads[0].undefined.len(), 1);
    assert!(t.threads[1].undefined[0]
        .1
        .contains("a load written .release"));
}
