//! Everyday CUDA kernels as users write them (`workloads/user/`, issue 39), compiled by NVRTC and
//! run by the PTX front end on the H100 preset: each one that runs passes its checks, each one
//! that does not is refused at a `.cu` `file:line:col` saying what is not modelled yet — and the
//! two lists below are exact, so a kernel that starts running (or stops) shows here.
//!
//! NVRTC must be present where `CI=true` or `GPUMEMSIM_REQUIRE_NVRTC=1` (the test fails instead of
//! skipping); elsewhere it skips with a message.

use gpumemsim::config;
use gpumemsim::frontend::{self, Compiler};
use gpumemsim::machine::{self, RunOptions};
use gpumemsim::ptx::nvrtc::Nvrtc;
use std::path::Path;

/// Kernels that run through NVRTC and pass their checks.
const RUN: &[&str] = &[
    "cg_reduce",
    "constant_table",
    "histogram256",
    "match_redux",
    "scan",
    "spin_lock",
    "template_scalar",
    "transpose",
    "tree_reduce",
    "vector_loads",
    "vote",
    "warp_reduce",
];

/// Kernels refused, with a word of the refusal (what is not modelled).
const REFUSED: &[(&str, &str)] = &[
    ("bytes_shorts", "8-bit accesses"),
    ("double_math", "f64"),
    ("flag_atomic_ref", "bar.warp.sync"),
    ("half_math", "f16"),
    ("template_struct", "by-value structure"),
];

fn required() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
        || std::env::var("GPUMEMSIM_REQUIRE_NVRTC").as_deref() == Ok("1")
}

#[test]
fn user_kernels_run_and_pass_their_checks_or_are_refused_at_their_place() {
    if let Err(e) = Nvrtc::get() {
        assert!(!required(), "CI=true or GPUMEMSIM_REQUIRE_NVRTC=1 but {e}");
        eprintln!("user kernels: skipped: {e}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("workloads/user");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut listed: Vec<String> = RUN
        .iter()
        .map(|s| s.to_string())
        .chain(REFUSED.iter().map(|(s, _)| s.to_string()))
        .collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "every kernel of workloads/user/ is listed once"
    );
    let h100 = config::load(Some(&root.join("configs/h100.toml")), &[]).expect("config");
    for name in RUN {
        let p = dir.join(format!("{name}.cu"));
        let (w, fe) =
            frontend::load_with(&p, &[], Compiler::Nvrtc).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fe.name(), "nvrtc");
        let r = machine::run(&h100, &w, &RunOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!r.checks.is_empty(), "{name}: no checks");
        for c in &r.checks {
            assert!(
                c.passed,
                "{name}: {} at {}: {:?}",
                c.text, c.location, c.detail
            );
        }
    }
    for (name, what) in REFUSED {
        let p = dir.join(format!("{name}.cu"));
        let e = match frontend::load_with(&p, &[], Compiler::Nvrtc) {
            Ok(_) => panic!("{name} now loads: move it to RUN"),
            Err(e) => e.to_string(),
        };
        // A refusal found by the PTX front end in NVRTC's output is placed in that PTX (the
        // `.cu` file named, with "(NVRTC PTX)"); one found while compiling, at the `.cu` line.
        let place = format!("workloads/user/{name}.cu:");
        let in_ptx = format!("workloads/user/{name}.cu (NVRTC PTX):");
        assert!(
            e.contains(&place) || e.contains(&in_ptx),
            "{name}: no place in {e}"
        );
        assert!(
            e.contains(what) && e.contains("not modelled yet"),
            "{name}: {e}"
        );
    }
}

const DIVERGED: &str = "/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer d: u32[32] = zero\nparams d\ncheck forall i in d: d[i] == 2 * i - (i > 0)\n*/\n\
.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{\n\
.reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
mov.u32 %r5, %lanemask_lt;\npopc.b32 %r6, %r5;\n\
shfl.sync.up.b32 %r2|%p1, %r1, 1, 0, -1;\nadd.s32 %r2, %r2, %r6;\n\
setp.lt.u32 %p2, %r1, 16;\n@%p2 bra SKIP;\n\
shfl.sync.down.b32 %r2, %r1, 1, 31, -1;\nSKIP:\n\
mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd3, %rd2, %rd3;\nst.global.u32 [%rd3], %r2;\nret;\n}\n";

#[test]
fn a_shuffle_whose_mask_names_a_diverged_lane_is_refused_at_its_place() {
    let h100 = config::default_config().unwrap();
    // Converged: lane l gets lane l-1's id (lane 0 its own) plus the lanes below it.
    let ok = DIVERGED.replace("@%p2 bra SKIP;", "bra SKIP;");
    let w = frontend::parse(&ok, "up.ptx", &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = machine::run(&h100, &w, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.checks.iter().all(|c| c.passed), "{:?}", r.checks);
    let w = frontend::parse(DIVERGED, "div.ptx", &[]).unwrap_or_else(|e| panic!("{e}"));
    let e = machine::run(&h100, &w, &RunOptions::default())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("div.ptx:25:1") && e.contains("live but not executing"),
        "{e}"
    );
}
