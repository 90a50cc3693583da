//! The PTX front end and `.cu` through NVRTC (issue 39): PTX workloads pass exact checks on the
//! machine; what is not modelled is refused at `file:line:col` with "not modelled yet"; module
//! variables become buffers only when used; entries are chosen by their C++ names; with NVRTC, every
//! chapter `.cu` program passes the same checks both ways at cycles within 15 % (one explained
//! exception), parameters do not collide with NVIDIA's headers, errors show `.cu` lines, and a
//! compile is cached per source and options. NVRTC tests skip with a message where NVRTC is missing,
//! unless `GPUMEMSIM_REQUIRE_NVRTC=1` (CI), where they fail.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::frontend::{self, Compiler, FrontEnd};
use gpumemsim::machine::{self, RunOptions, RunResult};
use gpumemsim::ptx::nvrtc::{self, Nvrtc};
use gpumemsim::workload::Workload;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cfg(name: &str) -> GpuConfig {
    config::load(Some(&root().join(format!("configs/{name}.toml"))), &[]).expect("config")
}

fn run(c: &GpuConfig, w: &Workload) -> RunResult {
    machine::run(c, w, &RunOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", w.kernel.file))
}

fn assert_checks(r: &RunResult, what: &str) {
    assert!(!r.checks.is_empty(), "{what}: no checks");
    for c in &r.checks {
        assert!(
            c.passed,
            "{what}: {} at {}: {:?}",
            c.text, c.location, c.detail
        );
    }
}

fn err(src: &str) -> String {
    match frontend::parse(src, "t.ptx", &[]) {
        Ok(_) => panic!("should not load:\n{src}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = "/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer out: u32[32] = zero\nparams out\n*/\n.version 8.0\n.target sm_90\n.address_size 64\n";

/// A kernel with one parameter `out` (bound by `params`) and `body` after the usual preamble.
fn kernel(body: &str) -> String {
    format!("{HEAD}.visible .entry k(.param .u64 k_param_0)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<10>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n.reg .b64 %rd<10>;\n.reg .b16 %rs<4>;\nld.param.u64 %rd1, [k_param_0];\n{body}\nret;\n}}\n")
}

#[test]
fn ptx_workloads_pass_their_exact_checks() {
    for name in ["semantics", "histogram_local"] {
        let w = frontend::load(&root().join(format!("workloads/ptx/{name}.ptx")), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        for c in ["tiny", "h100"] {
            assert_checks(&run(&cfg(c), &w), &format!("{name} on {c}"));
        }
    }
}

#[test]
fn what_is_not_modelled_is_refused_at_its_place() {
    // (body line, column of the refused token, words the message holds)
    let cases: &[(&str, u32, &[&str])] = &[
        ("add.f64 %fd1, %fd2, %fd3;", 4, &["f64", "not modelled yet"]),
        (
            "shfl.bfly.b32 %r1, %r2, 1, 31;",
            1,
            &["shfl", "without `.sync`", "not modelled yet"],
        ),
        (
            "ld.global.u8 %rs1, [%rd1];",
            10,
            &["8-bit", "not modelled yet"],
        ),
        (
            "testp.finite.f32 %p1, %f1;",
            1,
            &["floating-point function", "not modelled yet"],
        ),
        (
            "dp2a.lo.u32.u32 %r1, %r2, %r3, %r4;",
            1,
            &["bit operation", "not modelled yet"],
        ),
        (
            "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x96, %p2;",
            1,
            &["lop3.BoolOp", "not modelled yet"],
        ),
        ("cvt.rz.f32.s32 %f1, %r1;", 1, &["rn", "round-to-nearest"]),
        ("trap;", 1, &["not modelled yet"]),
        (
            "ld.global.cg.u32 %r1, [%rd1];",
            10,
            &[".cg", "not a per-access choice"],
        ),
        (
            "mov.u32 %r1, %globaltimer_lo;",
            14,
            &["globaltimer", "not modelled yet"],
        ),
    ];
    // The body starts on this line of the file.
    let first = kernel("")
        .lines()
        .position(|l| l.starts_with("ld.param"))
        .unwrap() as u32
        + 2;
    for (body, col, words) in cases {
        let e = err(&kernel(body));
        assert!(
            e.starts_with(&format!("t.ptx:{first}:{col}:")),
            "{body}: {e}"
        );
        for w in *words {
            assert!(e.contains(w), "{body}: `{w}` missing in: {e}");
        }
    }
    // A generic address whose definitions disagree (shared on one path, global on the other).
    let e = err(&kernel(".shared .b32 s[1];\nmov.u64 %rd2, s;\ncvta.shared.u64 %rd3, %rd2;\nmov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 0;\nselp.b64 %rd4, %rd3, %rd1, %p1;\nld.u32 %r2, [%rd4];"));
    assert!(e.contains("may point to shared or to global memory"), "{e}");
    // .local state space.
    let e = err(&kernel(
        ".local .align 4 .b8 __local_depot[8];\nmov.u64 %rd2, __local_depot;",
    ));
    assert!(
        e.contains("`.local` state space") && e.contains("not modelled yet"),
        "{e}"
    );
}

#[test]
fn module_variables_are_buffers_when_used_and_ignored_otherwise() {
    let mut unused = String::new();
    for i in 0..1000 {
        unused.push_str(&format!(".global .align 1 .b8 _ZN2cg7unused{i}E[1];\n"));
    }
    let src = format!(
        "/* gpumemsim\ngroups 2\ngroup_size 32\nbuffer out: u32[1] = zero\nbuffer counter: u32[1] = [5]\nparams out\ncheck counter[0] == 64 + 5\ncheck out[0] == 20\n*/\n.version 8.0\n.target sm_90\n.address_size 64\n{unused}.global .align 4 .u32 counter = 5;\n.global .align 4 .u32 table[2] = {{10, 20}};\n\
         .visible .entry k(.param .u64 k_param_0)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nmov.u64 %rd1, counter;\natom.global.add.u32 %r1, [%rd1], 1;\nld.param.u64 %rd2, [k_param_0];\nld.global.u32 %r2, [table+4];\nst.global.u32 [%rd2], %r2;\nret;\n}}\n"
    );
    let w = frontend::parse(&src, "v.ptx", &[]).unwrap_or_else(|e| panic!("{e}"));
    // `counter` is the header's buffer (its initial value replaces the variable's); `table` is
    // the variable's own, initialiser and all.
    let names: Vec<&str> = w.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["out", "counter", "table"]);
    assert_checks(&run(&cfg("tiny"), &w), "module variables");
}

#[test]
fn entries_are_chosen_by_their_cxx_names_and_parameters_by_position() {
    let body = ".reg .b32 %r<3>;\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [P_param_0];\nld.param.u32 %r1, [P_param_1];\ncvta.to.global.u64 %rd1, %rd1;\nst.global.u32 [%rd1], %r1;\nret;\n";
    let two = |hdr: &str| {
        format!(
            "/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer dst: u32[1] = zero\nparam n = 41\n{hdr}check dst[0] == 41\n*/\n.version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry _Z5storePji(.param .u64 _Z5storePji_param_0, .param .u32 _Z5storePji_param_1)\n{{\n{}}}\n\
             .visible .entry _Z5otherPji(.param .u64 _Z5otherPji_param_0, .param .u32 _Z5otherPji_param_1)\n{{\n{}}}\n",
            body.replace("P_", "_Z5storePji_"),
            body.replace("P_", "_Z5otherPji_")
        )
    };
    let w = frontend::parse(&two("kernel store\nparams dst, n\n"), "e.ptx", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.kernel.name, "store", "a kernel is named by its C name");
    assert_checks(&run(&cfg("tiny"), &w), "store");
    let e = frontend::parse(&two("params dst, n\n"), "e.ptx", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("several entries") && e.contains("kernel NAME"),
        "{e}"
    );
    let e = frontend::parse(&two("kernel store\nparams dst\n"), "e.ptx", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`params` names 1 parameters but `_Z5storePji` has 2"),
        "{e}"
    );
}

#[test]
fn the_kernel_language_loader_refuses_other_languages_by_name() {
    let e = gpumemsim::kernel::parse("x", "k.ptx", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("frontend::load"), "{e}");
}

/// NVRTC, or `None` with a message (a failure where `GPUMEMSIM_REQUIRE_NVRTC=1`).
fn nvrtc_or_skip(test: &str) -> Option<&'static Nvrtc> {
    match Nvrtc::get() {
        Ok(n) => Some(n),
        Err(e) => {
            assert!(
                std::env::var("GPUMEMSIM_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "GPUMEMSIM_REQUIRE_NVRTC=1 but {e}"
            );
            eprintln!("{test}: skipped: {e}");
            None
        }
    }
}

fn load_cu(path: &Path, c: Compiler) -> (Workload, FrontEnd) {
    frontend::load_with(path, &[], c).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn chapter_programs_pass_the_same_checks_both_ways_at_similar_cycles() {
    if nvrtc_or_skip("chapter cross-check").is_none() {
        return;
    }
    let h100 = cfg("h100");
    let mut table = String::new();
    let mut files: Vec<_> = std::fs::read_dir(root().join("workloads/chapters"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let (wb, fb) = load_cu(&p, Compiler::Builtin);
        let (wn, fnv) = load_cu(&p, Compiler::Nvrtc);
        assert_eq!(fb.name(), "builtin");
        assert_eq!(fnv.name(), "nvrtc");
        let (rb, rn) = (run(&h100, &wb), run(&h100, &wn));
        assert_checks(&rb, &format!("{name} builtin"));
        assert_checks(&rn, &format!("{name} nvrtc"));
        let (ib, inv) = (
            rb.stats.get("gpu", "warp_instructions").unwrap(),
            rn.stats.get("gpu", "warp_instructions").unwrap(),
        );
        let diff = rn.cycles as f64 / rb.cycles as f64 - 1.0;
        table.push_str(&format!(
            "{name}: builtin {} cycles, nvrtc {} ({:+.1} %)\n",
            rb.cycles,
            rn.cycles,
            diff * 100.0
        ));
        if name == "device_latch.cu" {
            // NVRTC unrolls the 1024-load sum after the latch four times (the loads of one
            // iteration issue back to back): fewer instructions, fewer cycles. Explained, kept.
            assert!(
                inv < ib,
                "{name}: nvrtc {inv:?} vs builtin {ib:?} instructions"
            );
            assert!(rn.cycles < rb.cycles, "{table}");
        } else {
            assert!(
                diff.abs() <= 0.15,
                "{name} differs by more than 15 %:\n{table}"
            );
        }
    }
    eprintln!("{table}");
}

const COLLIDE: &str = "/* gpumemsim\nparam T = 32\nparam N = 64\ngroups 2\ngroup_size T\nbuffer data: u32[N] = zero\ncheck forall i in data: data[i] == 2 * i + T\n*/\n\
#include <cooperative_groups.h>\n#include <cuda/atomic>\nnamespace cg = cooperative_groups;\n\ntemplate <typename T>\n__device__ T twice(T x) { return x + x; }\n\n\
__global__ void fill(unsigned *data)\n{\n    cg::thread_block b = cg::this_thread_block();\n    unsigned i = blockIdx.x * blockDim.x + b.thread_rank();\n    if (i < N) data[i] = twice<unsigned>(i) + T;\n}\n";

#[test]
fn nvrtc_parameters_do_not_collide_with_nvidias_headers() {
    if nvrtc_or_skip("parameter collision").is_none() {
        return;
    }
    let (w, fe) = frontend::parse_with(COLLIDE, "collide.cu", &[], Compiler::Nvrtc)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(fe, FrontEnd::Nvrtc { .. }));
    assert_eq!(w.kernel.file, "collide.cu");
    assert_checks(&run(&cfg("tiny"), &w), "collide.cu");
}

#[test]
fn nvrtc_errors_show_the_cu_line_and_compiles_are_cached() {
    if nvrtc_or_skip("errors and cache").is_none() {
        return;
    }
    let bad = COLLIDE.replace("data[i] = twice", "data[i] = undefined_name + twice");
    let line = bad
        .lines()
        .position(|l| l.contains("undefined_name"))
        .unwrap()
        + 1;
    let e = frontend::parse_with(&bad, "bad.cu", &[], Compiler::Nvrtc)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("bad.cu:{line}:")), "{e}");
    assert!(e.contains("undefined_name"), "{e}");
    // A refused PTX instruction is reported at the .cu line it came from.
    let f64 = "/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer d: u32[32] = zero\n*/\n__global__ void k(unsigned *d)\n{\n    unsigned v = threadIdx.x;\n    v = (unsigned)((double)v * 1.5);\n    d[threadIdx.x] = v;\n}\n";
    let e = frontend::parse_with(f64, "f64.cu", &[], Compiler::Nvrtc)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("f64.cu:9:") && e.contains("f64") && e.contains("not modelled yet"),
        "{e}"
    );
    let text = COLLIDE.replace("fill", "fill_cached");
    assert_eq!(nvrtc::compiles("c.cu"), 0);
    for _ in 0..3 {
        frontend::parse_with(&text, "c.cu", &[], Compiler::Nvrtc).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        nvrtc::compiles("c.cu"),
        1,
        "one source and options: one compile"
    );
    let params = [("N".to_string(), 32)];
    frontend::parse_with(&text, "c.cu", &params, Compiler::Nvrtc).unwrap_or_else(|e| panic!("{e}"));
    frontend::parse_with(&text, "c.cu", &params, Compiler::Nvrtc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        nvrtc::compiles("c.cu"),
        2,
        "a second variant: one more compile"
    );
}

/// One result per output word, written by thread 0: (PTX computing `%r9`, the exact u32 bits).
const MATH_CASES: &[(&str, u32)] = &[
    ("mov.b32 %r2, 0xF0F0;\npopc.b32 %r9, %r2;", 8),
    ("mov.b32 %r2, 0x10000;\nclz.b32 %r9, %r2;", 15),
    ("mov.b64 %rd2, 1;\nclz.b64 %r9, %rd2;", 63),
    ("brev.b32 %r9, 1;", 0x8000_0000),
    ("mov.b32 %r2, 0xABCD1234;\nbfe.u32 %r9, %r2, 8, 8;", 0x12),
    ("mov.b32 %r2, 0xF000;\nbfe.s32 %r9, %r2, 12, 4;", 0xFFFF_FFFF),
    ("mov.b32 %r2, 0xFFFF0000;\nmov.b32 %r3, 4;\nbfi.b32 %r9, 15, %r2, %r3, 8;", 0xFFFF_00F0),
    ("bfind.u32 %r9, 16;", 4),
    ("bfind.shiftamt.u32 %r9, 16;", 27),
    ("mov.b32 %r2, 0x33221100;\nmov.b32 %r3, 0x77665544;\nprmt.b32 %r9, %r2, %r3, 0x0123;", 0x0011_2233),
    ("mov.b32 %r2, 0x33221100;\nmov.b32 %r3, 0x77665544;\nprmt.b32.ecl %r9, %r2, %r3, 1;", 0x3322_1111),
    ("mov.b32 %r2, 0xF0;\nmov.b32 %r3, 0xCC;\nlop3.b32 %r9, %r2, %r3, 0xAA, 0x96;", 0x96),
    ("mov.b32 %r2, 0x80000000;\nshf.l.wrap.b32 %r9, %r2, 1, 1;", 3),
    ("mov.b32 %r2, 1;\nshf.r.clamp.b32 %r9, 0, %r2, 40;", 1),
    ("mov.b32 %r2, 0xFF020304;\ndp4a.s32.s32 %r9, %r2, 0x01010101, 10;", 18),
    ("dp4a.u32.u32 %r9, 0xFF020304, 0x01010101, 10;", 10 + 0xFF + 9),
    // (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 fused; 0 with a separate multiply.
    ("mov.b32 %f1, 0f3F800800;\nfma.rn.f32 %f2, %f1, %f1, 0fBF801000;\nmov.b32 %r9, %f2;", 0x3380_0000),
    ("mov.b32 %f1, 0f3F800800;\nmul.rn.f32 %f2, %f1, %f1;\nadd.rn.f32 %f2, %f2, 0fBF801000;\nmov.b32 %r9, %f2;", 0),
    ("mad.rn.f32 %f2, 0f40000000, 0f40400000, 0f3F800000;\nmov.b32 %r9, %f2;", 0x40E0_0000),
    ("sqrt.rn.f32 %f2, 0f40800000;\nmov.b32 %r9, %f2;", 0x4000_0000),
    ("add.rp.f32 %f2, 0f3F800000, 0f30800000;\nmov.b32 %r9, %f2;", 0x3F80_0001),
    ("add.rm.f32 %f2, 0f3F800000, 0f30800000;\nmov.b32 %r9, %f2;", 0x3F80_0000),
    ("div.rz.f32 %f2, 0f3F800000, 0f40400000;\nmov.b32 %r9, %f2;", 0x3EAA_AAAA),
    ("div.rp.f32 %f2, 0f3F800000, 0f40400000;\nmov.b32 %r9, %f2;", 0x3EAA_AAAB),
    ("add.sat.f32 %f2, 0f3F400000, 0f3F000000;\nmov.b32 %r9, %f2;", 0x3F80_0000),
    ("mul.ftz.f32 %f2, 0f00000001, 0f3F800000;\nmov.b32 %r9, %f2;", 0),
    ("ex2.approx.f32 %f2, 0f40400000;\nmov.b32 %r9, %f2;", 0x4100_0000),
    ("lg2.approx.ftz.f32 %f2, 0f3E000000;\nmov.b32 %r9, %f2;", 0xC040_0000),
    ("rsqrt.approx.f32 %f2, 0f3E800000;\nmov.b32 %r9, %f2;", 0x4000_0000),
    ("rcp.approx.ftz.f32 %f2, 0f40800000;\nmov.b32 %r9, %f2;", 0x3E80_0000),
    ("div.full.f32 %f2, 0f40C00000, 0f40000000;\nmov.b32 %r9, %f2;", 0x4040_0000),
    ("min.NaN.f32 %f2, 0f7FC00000, 0f40000000;\nmov.b32 %r9, %f2;", 0x7FFF_FFFF),
    ("max.f32 %f2, 0fC0400000, 0f40000000;\nmov.b32 %r9, %f2;", 0x4000_0000),
    ("copysign.f32 %f2, 0fBF800000, 0f40200000;\nmov.b32 %r9, %f2;", 0xC020_0000),
    ("abs.ftz.f32 %f2, 0fC0200000;\nmov.b32 %r9, %f2;", 0x4020_0000),
    ("cvt.rni.s32.f32 %r9, 0f40200000;", 2),
    ("cvt.rmi.s32.f32 %r9, 0fC0200000;", (-3i32) as u32),
    ("cvt.rpi.f32.f32 %f2, 0f40060000;\nmov.b32 %r9, %f2;", 0x4040_0000),
    ("cvt.sat.f32.f32 %f2, 0f40060000;\nmov.b32 %r9, %f2;", 0x3F80_0000),
];

#[test]
fn bit_operations_and_float_functions_compute_as_ptx_defines() {
    let n = MATH_CASES.len();
    let mut body = String::from("mov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n@%p1 bra DONE;\n");
    let mut checks = String::new();
    for (k, (code, want)) in MATH_CASES.iter().enumerate() {
        body.push_str(&format!("{code}\nst.global.u32 [%rd1+{}], %r9;\n", 4 * k));
        checks.push_str(&format!("check out[{k}] == {want}\n"));
    }
    body.push_str("DONE:\n");
    let src = kernel(&body).replace(
        "buffer out: u32[32] = zero\n",
        &format!(
            "buffer out: u32[{n}] = [{}]\n{checks}",
            vec!["7"; n].join(", ")
        ),
    );
    let w = frontend::parse(&src, "math.ptx", &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&cfg("tiny"), &w);
    assert_eq!(r.checks.len(), n);
    for (c, (code, want)) in r.checks.iter().zip(MATH_CASES) {
        assert!(c.passed, "{code} should give {want:#x}: {:?}", c.detail);
    }
}
