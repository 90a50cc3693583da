//! IR → SPIR-V with the Vulkan memory model: every kernel and litmus launch of the repository
//! translates to a module `spirv-val` accepts (Vulkan 1.2 environment, no adapter needed), and the
//! orders and scopes land on the semantics and scopes the mapping table of `device::spirv` promises.
//!
//! `spirv-val` comes with the `spirv-tools` package (`scripts/install-deps.sh vulkan` installs it).
//! Where it is missing the validation tests print that they skip, and fail instead when
//! `GPUMEMSIM_REQUIRE_ADAPTER=1` (as CI sets it).

use gpumemsim::device::spirv::{self, scope_of, semantics_of, SpirvCaps};
use gpumemsim::device::wgsl::{Caps, Options};
use gpumemsim::ir::*;
use gpumemsim::litmus;
use std::path::Path;

/// Validates `words` with spirv-val; `false` (with a message) when the tool is missing and not
/// required.
fn validate(words: &[u32], what: &str) -> bool {
    match spirv::spirv_val(words) {
        Ok(Some(())) => true,
        Ok(None) => {
            if std::env::var("GPUMEMSIM_REQUIRE_ADAPTER").as_deref() == Ok("1") {
                panic!("{what}: spirv-val is not installed (scripts/install-deps.sh vulkan installs spirv-tools)");
            }
            eprintln!(
                "skipped spirv-val on {what}: spirv-val is not installed (apt-get install spirv-tools; \
                 GPUMEMSIM_REQUIRE_ADAPTER=1 makes this a failure)"
            );
            false
        }
        Err(e) => panic!("{what}: spirv-val rejects the module:\n{e}"),
    }
}

fn files(dir: &str, ext: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Decodes (opcode, operands) of every instruction after the header.
fn insts(words: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        assert!(
            n > 0 && i + n <= words.len(),
            "malformed instruction at word {i}"
        );
        out.push((words[i] & 0xFFFF, words[i + 1..i + n].to_vec()));
        i += n;
    }
    out
}

/// The value of each 32-bit `OpConstant` by id.
fn constants(words: &[u32]) -> std::collections::HashMap<u32, u32> {
    insts(words)
        .into_iter()
        .filter(|(op, o)| *op == ::spirv::Op::Constant as u32 && o.len() == 3)
        .map(|(_, o)| (o[1], o[2]))
        .collect()
}

#[test]
fn every_kernel_translates_to_spirv_that_spirv_val_accepts() {
    let mut n = 0;
    for p in files("workloads", "kern") {
        let wl = match gpumemsim::frontend::load(&p, &[]) {
            Ok(w) => w,
            Err(_) => continue, // kernels that need parameters are covered by the suite test
        };
        let t = match spirv::translate(&wl, SpirvCaps::ALL, Options::default()) {
            Ok(t) => t,
            // Kernels that time themselves with %clock (workloads/reference/) have no GPU
            // translation: a GPU measurement times with timestamps instead. Nor do kernels that pick
            // their lines by the SM they run on (%smid: reference/far_stream.kern), which Vulkan
            // does not expose. Any other error fails.
            Err(e)
                if e.to_string().contains("has no clock register")
                    || e.to_string().contains("has no SM id") =>
            {
                continue
            }
            Err(e) => panic!("{}: {e}", p.display()),
        };
        let words = t
            .shader
            .spirv()
            .expect("a SPIR-V translation holds a module");
        if !validate(words, &p.display().to_string()) {
            return;
        }
        n += 1;
    }
    assert!(n >= 10, "only {n} kernels loaded");
}

/// Every litmus test the GPU harness can place — relaxed, release/acquire, fences at each scope,
/// seq_cst, RMWs with every order, 64-bit atomics — becomes a valid module, in both variants.
#[test]
fn every_litmus_launch_translates_to_valid_spirv() {
    use gpumemsim::device::litmus::{launch, LitmusSettings, Variant};
    let s = LitmusSettings {
        instances: 8,
        ..LitmusSettings::default()
    };
    let mut rng = gpumemsim::rng::SplitMix64::stream(1, 0);
    let (mut ok, mut with_orders) = (0, 0);
    for p in files("workloads/litmus", "litmus") {
        let Ok(test) = litmus::load(&p) else { continue };
        for v in [Variant::Relaxed, Variant::StorageBarrier] {
            let Ok(l) = launch(&v.apply(&test), &s, &mut rng) else {
                continue;
            };
            let t = spirv::translate(&l.workload, SpirvCaps::ALL, Options::default())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let words = t.shader.spirv().unwrap().to_vec();
            if !validate(&words, &format!("{} {v:?}", p.display())) {
                return;
            }
            ok += 1;
            let ordered = l.workload.kernel.insts.iter().any(|i| match i {
                Inst::Fence { .. } => true,
                Inst::Load { ord, .. } => ord.is_acquire(),
                Inst::Store { ord, .. } => ord.is_release(),
                Inst::Rmw { ord, .. } => *ord != RmwOrd::Relaxed,
                _ => false,
            });
            with_orders += ordered as usize;
        }
    }
    assert!(
        ok >= 100 && with_orders >= 50,
        "{ok} launches, {with_orders} with orders"
    );
}

#[test]
fn orders_and_scopes_map_onto_the_vulkan_memory_model() {
    use ::spirv::MemorySemantics as M;
    use ::spirv::Scope as S;
    let both = SpaceSet::BOTH;
    let storage = M::UNIFORM_MEMORY | M::WORKGROUP_MEMORY;
    assert_eq!(semantics_of(MemOrder::Relaxed, both), M::RELAXED);
    assert_eq!(
        semantics_of(MemOrder::Acquire, both),
        M::ACQUIRE | M::MAKE_VISIBLE | storage
    );
    assert_eq!(
        semantics_of(MemOrder::Release, both),
        M::RELEASE | M::MAKE_AVAILABLE | storage
    );
    for o in [MemOrder::AcqRel, MemOrder::SeqCst] {
        assert_eq!(
            semantics_of(o, both),
            M::ACQUIRE_RELEASE | M::MAKE_AVAILABLE | M::MAKE_VISIBLE | storage
        );
    }
    assert_eq!(
        semantics_of(MemOrder::Release, SpaceSet::LOCAL),
        M::RELEASE | M::MAKE_AVAILABLE | M::WORKGROUP_MEMORY
    );
    assert_eq!(
        semantics_of(MemOrder::Acquire, SpaceSet::GLOBAL),
        M::ACQUIRE | M::MAKE_VISIBLE | M::UNIFORM_MEMORY
    );
    assert_eq!(scope_of(Scope::WorkGroup, true), S::Workgroup);
    assert_eq!(scope_of(Scope::SubGroup, true), S::Subgroup);
    assert_eq!(scope_of(Scope::Device, true), S::Device);
    assert_eq!(scope_of(Scope::Device, false), S::QueueFamily);
    assert_eq!(scope_of(Scope::System, true), S::Device);
    assert_eq!(scope_of(Scope::System, false), S::QueueFamily);
}

/// The message-passing test with release/acquire: the module declares the Vulkan memory model, the
/// flag's store is a release and its load an acquire at the test's scope, and the data accesses are
/// non-private (so that the release and acquire order them).
#[test]
fn release_acquire_message_passing_carries_its_semantics() {
    use ::spirv::{MemorySemantics as M, Op};
    let test = litmus::load(Path::new("workloads/litmus/ptx/mp_rel_acq_gpu.litmus")).unwrap();
    let s = gpumemsim::device::litmus::LitmusSettings {
        instances: 4,
        ..Default::default()
    };
    let mut rng = gpumemsim::rng::SplitMix64::stream(1, 0);
    let l = gpumemsim::device::litmus::launch(&test, &s, &mut rng).unwrap();
    for (device_scope, scope) in [
        (true, ::spirv::Scope::Device),
        (false, ::spirv::Scope::QueueFamily),
    ] {
        let caps = SpirvCaps {
            base: Caps::ALL,
            device_scope,
        };
        let t = spirv::translate(&l.workload, caps, Options::default()).unwrap();
        let w = t.shader.spirv().unwrap().to_vec();
        let c = constants(&w);
        let is = insts(&w);
        assert!(is.iter().any(|(op, o)| *op == Op::MemoryModel as u32
            && o == &[0, ::spirv::MemoryModel::Vulkan as u32]));
        let has_cap = |cap: ::spirv::Capability| {
            is.iter()
                .any(|(op, o)| *op == Op::Capability as u32 && o[0] == cap as u32)
        };
        assert!(has_cap(::spirv::Capability::VulkanMemoryModel));
        assert_eq!(
            has_cap(::spirv::Capability::VulkanMemoryModelDeviceScope),
            device_scope
        );
        let release =
            (M::RELEASE | M::MAKE_AVAILABLE | M::UNIFORM_MEMORY | M::WORKGROUP_MEMORY).bits();
        let acquire =
            (M::ACQUIRE | M::MAKE_VISIBLE | M::UNIFORM_MEMORY | M::WORKGROUP_MEMORY).bits();
        let stores: Vec<(u32, u32)> = is
            .iter()
            .filter(|(op, _)| *op == Op::AtomicStore as u32)
            .map(|(_, o)| (c[&o[1]], c[&o[2]]))
            .collect();
        let loads: Vec<(u32, u32)> = is
            .iter()
            .filter(|(op, _)| *op == Op::AtomicLoad as u32)
            .map(|(_, o)| (c[&o[3]], c[&o[4]]))
            .collect();
        assert!(stores.contains(&(scope as u32, release)), "{stores:?}");
        assert!(loads.contains(&(scope as u32, acquire)), "{loads:?}");
        let np = ::spirv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        // Every plain access to memory is non-private.
        for (op, o) in &is {
            if *op == Op::Store as u32 && o.len() == 3 {
                assert_eq!(o[2], np);
            }
        }
        if !validate(&w, "mp_rel_acq_gpu") {
            return;
        }
    }
}

/// Fences at each scope become `OpMemoryBarrier` with that scope; seq_cst is listed as run as
/// acq_rel, which is all the Vulkan memory model offers.
#[test]
fn fences_become_memory_barriers_at_their_scope_and_seq_cst_is_listed() {
    use ::spirv::Op;
    for (file, scope) in [
        (
            "workloads/litmus/ptx/sb_fence_sc_gpu.litmus",
            ::spirv::Scope::Device,
        ),
        (
            "workloads/litmus/ptx/sb_fence_sc_cta_same.litmus",
            ::spirv::Scope::Workgroup,
        ),
    ] {
        let Ok(test) = litmus::load(Path::new(file)) else {
            panic!("{file} is missing");
        };
        let mut rng = gpumemsim::rng::SplitMix64::stream(1, 0);
        let l = gpumemsim::device::litmus::launch(&test, &Default::default(), &mut rng).unwrap();
        let t = spirv::translate(&l.workload, SpirvCaps::ALL, Options::default()).unwrap();
        let w = t.shader.spirv().unwrap().to_vec();
        let c = constants(&w);
        let barriers: Vec<u32> = insts(&w)
            .iter()
            .filter(|(op, _)| *op == Op::MemoryBarrier as u32)
            .map(|(_, o)| c[&o[0]])
            .collect();
        assert!(
            !barriers.is_empty() && barriers.iter().all(|&s| s == scope as u32),
            "{file}: {barriers:?}"
        );
        assert!(
            t.emulated
                .iter()
                .any(|e| e.contains("seq_cst fence run as acq_rel")),
            "{file}: {:?}",
            t.emulated
        );
        validate(&w, file);
    }
}

#[test]
fn what_vulkan_cannot_express_is_rejected_with_its_location() {
    let src = "groups 1\ngroup_size 32\nbuffer out: u32[32] = zero\nkernel k {\n    reg %t, %i\n    mov.u32 %i, %global_id\n    mov.u32 %t, %clock\n    st.u32 out[%i], %t\n}\n";
    let wl = gpumemsim::frontend::parse(src, "clk.kern", &[]).unwrap_or_else(|e| panic!("{e}"));
    let e = spirv::translate(&wl, SpirvCaps::ALL, Options::default()).unwrap_err();
    assert!(e.location.starts_with("clk.kern:7:"), "{e}");
    assert!(e.message.contains("clock"), "{e}");
    // 64-bit atomics without Int64Atomics.
    let test = litmus::load(Path::new("workloads/litmus/ptx/atom_add_u64.litmus")).unwrap();
    let mut rng = gpumemsim::rng::SplitMix64::stream(1, 0);
    let l = gpumemsim::device::litmus::launch(&test, &Default::default(), &mut rng).unwrap();
    let caps = SpirvCaps {
        base: Caps {
            int64: true,
            int64_atomics: false,
            subgroups: false,
        },
        device_scope: true,
    };
    let e = spirv::translate(&l.workload, caps, Options::default()).unwrap_err();
    assert!(e.message.contains("Int64Atomics"), "{e}");
    assert!(e.location.contains("atom_add_u64.litmus:"), "{e}");
}

/// On the adapter (lavapipe in CI): the CI suite runs through SPIR-V with every case's checks passing
/// (the differential test of the translation against the workloads' own checks), and each case says
/// which path ran.
#[test]
fn the_ci_suite_runs_through_spirv_on_the_adapter() {
    use gpumemsim::device::schema::{ShaderPath, Status};
    use gpumemsim::device::{measure, suite::Suite};
    let Some(gpu) = crate::gpu::adapter_or_skip("the_ci_suite_runs_through_spirv_on_the_adapter")
    else {
        return;
    };
    if !gpu.passthrough {
        assert!(
            std::env::var("GPUMEMSIM_REQUIRE_ADAPTER").as_deref() != Ok("1"),
            "{} has no SPIR-V passthrough",
            gpu.report.name
        );
        eprintln!("skipped: {} has no SPIR-V passthrough", gpu.report.name);
        return;
    }
    let loaded =
        measure::load(Suite::load(Path::new("workloads/measure/ci.toml")).unwrap()).unwrap();
    let opts = measure::MeasureOptions {
        warmup: Some(0),
        reps: Some(1),
        ..Default::default()
    };
    let m = measure::measure(&gpu, &loaded, &opts, ShaderPath::Spirv, &mut |_| {});
    for b in &m.benchmarks {
        assert_eq!(b.status, Status::Ok, "{}: {:?}", b.key(), b.error);
        assert_eq!(b.shader, Some(ShaderPath::Spirv));
        assert!(b.checks.iter().all(|c| c.passed), "{}", b.key());
    }
    for l in &m.litmus {
        assert_eq!(
            l.status,
            Status::Ok,
            "{} {:?}: {:?}",
            l.test,
            l.variant,
            l.error
        );
        assert_eq!(l.shader, Some(ShaderPath::Spirv));
    }
}

/// On the adapter: the scoped variants run through SPIR-V, every instance lands in exactly one state,
/// seq_cst lists what it weakened, and message passing with release/acquire never shows its weak
/// outcome (which the Vulkan memory model forbids as the PTX one does).
#[test]
fn scoped_litmus_variants_run_through_spirv_on_the_adapter() {
    use gpumemsim::device::litmus::{self as gl, LitmusSettings, Variant};
    use gpumemsim::device::schema::ShaderPath;
    let Some(gpu) =
        crate::gpu::adapter_or_skip("scoped_litmus_variants_run_through_spirv_on_the_adapter")
    else {
        return;
    };
    if !gpu.passthrough {
        assert!(std::env::var("GPUMEMSIM_REQUIRE_ADAPTER").as_deref() != Ok("1"));
        return;
    }
    let s = LitmusSettings {
        instances: 96,
        dispatches: 2,
        workgroup_size: 32,
        stress_ratio: 1,
        stress_iterations: 16,
        pre_stress_iterations: 4,
        seed: 3,
    };
    let mp = litmus::load(Path::new("workloads/litmus/ptx/mp_relaxed_gpu.litmus")).unwrap();
    for v in Variant::ALL {
        let t = v.apply(&mp);
        let c =
            gl::run_with(&gpu, &t, &s, ShaderPath::Spirv).unwrap_or_else(|e| panic!("{v:?}: {e}"));
        assert_eq!(c.instances, 96 * 2);
        assert_eq!(c.states.values().sum::<u64>(), c.instances, "{v:?}");
        assert_eq!(
            c.weakened.iter().any(|w| w.contains("seq_cst")),
            v == Variant::SeqCst,
            "{v:?}: {:?}",
            c.weakened
        );
        if matches!(
            v,
            Variant::ReleaseAcquire | Variant::FenceAcqRel | Variant::SeqCst
        ) {
            let weak: u64 = c
                .states
                .iter()
                .filter(|(st, _)| t.condition.witness(st))
                .map(|(_, n)| n)
                .sum();
            assert_eq!(
                weak, 0,
                "{v:?}: message passing with release/acquire showed its weak outcome"
            );
        }
    }
    // Through WGSL the scoped variants are untranslatable, and say where.
    let t = Variant::ReleaseAcquire.apply(&mp);
    match gl::run_with(&gpu, &t, &s, ShaderPath::Wgsl) {
        Err(e) => assert!(e.to_string().contains("mp_relaxed_gpu.litmus:")),
        Ok(_) => panic!("WGSL ran release/acquire"),
    }
}
