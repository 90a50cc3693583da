//! The CUDA and OpenCL C front ends (issue 19): the reference chapters' programs pass the checks of
//! their `.kern` counterparts at similar cycle counts; C's semantics hold on the machine (conversions,
//! division, shifts, short-circuit, switch, goto, inlining, pointers, local memory, atomics); every
//! atomic and fence reaches the IR with the documented order and scope; unsupported constructs are
//! named at `file:line:col`; nesting and non-UTF-8 input are errors, not crashes; the WGSL translation
//! takes C kernels like any other; and the OpenCL litmus dialect gains the C statements.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::device::wgsl::{self, Caps, Options};
use gpumemsim::ir::*;
use gpumemsim::litmus::{self, LitmusOptions};
use gpumemsim::machine::{self, RunOptions, RunResult, SimError};
use gpumemsim::workload::Workload;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tiny() -> GpuConfig {
    config::load(Some(&root().join("configs/tiny.toml")), &[]).expect("tiny config")
}

fn params(p: &[(&str, i64)]) -> Vec<(String, i64)> {
    p.iter().map(|&(n, v)| (n.to_string(), v)).collect()
}

fn load(path: &Path, p: &[(&str, i64)]) -> Workload {
    gpumemsim::frontend::load(path, &params(p)).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(src: &str, file: &str) -> Workload {
    gpumemsim::frontend::parse(src, file, &[]).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn run(cfg: &GpuConfig, wl: &Workload) -> RunResult {
    machine::run(cfg, wl, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", wl.kernel.file))
}

fn assert_checks_hold(r: &RunResult, what: &str) {
    assert!(!r.checks.is_empty(), "{what}: no checks");
    for c in &r.checks {
        assert!(
            c.passed,
            "{what}: check failed: {} at {}: {:?}",
            c.text, c.location, c.detail
        );
    }
}

fn err(src: &str, file: &str) -> String {
    match gpumemsim::frontend::parse(src, file, &[]) {
        Ok(_) => panic!("{file} should not load:\n{src}"),
        Err(e) => e.to_string(),
    }
}

/// Parameter overrides.
type Params = &'static [(&'static str, i64)];

/// Each chapter program, its `.kern` counterpart, the parameters both run with here, and the
/// counterpart's extra parameters.
const CHAPTERS: &[(&str, &str, Params, Params)] = &[
    (
        "race_counter.cl",
        "race_counter",
        &[("N", 512), ("M", 32)],
        &[],
    ),
    (
        "race_counter_barrier.cl",
        "race_counter_barrier",
        &[("N", 64), ("M", 8)],
        &[],
    ),
    (
        "race_counter_atomic.cu",
        "race_counter_atomic",
        &[("N", 512), ("M", 32)],
        &[],
    ),
    (
        "histogram_local.cu",
        "histogram_local",
        &[("N", 1024), ("B", 32), ("GROUPS", 4)],
        &[],
    ),
    (
        "device_latch.cu",
        "device_latch",
        &[("GROUPS", 8), ("G", 32)],
        &[],
    ),
    ("float_add.cu", "float_add", &[("T", 256), ("K", 2)], &[]),
    ("atomic_min.cl", "atomic_min", &[("N", 512)], &[]),
    (
        "reduce_atomic.cu",
        "reduce_atomic",
        &[("N", 1000), ("G", 64)],
        &[],
    ),
    ("cas_add.cu", "cas_add", &[("T", 128), ("K", 2)], &[]),
    (
        "neighbor_list_atomic.cu",
        "neighbor_list",
        &[("N", 64), ("R", 3)],
        &[("ATOMIC", 1)],
    ),
    (
        "neighbor_list_no_atomic.cu",
        "neighbor_list",
        &[("N", 64), ("R", 3)],
        &[("ATOMIC", 0)],
    ),
];

fn chapter(name: &str) -> PathBuf {
    root().join("workloads/chapters").join(name)
}

#[test]
fn chapter_programs_pass_their_checks_at_cycles_near_their_kern_counterparts() {
    let cfg = tiny();
    let mut files: Vec<String> = std::fs::read_dir(root().join("workloads/chapters"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu") || n.ends_with(".cl"))
        .collect();
    files.sort();
    let listed: Vec<&str> = CHAPTERS.iter().map(|c| c.0).collect();
    assert_eq!(
        files.len(),
        listed.len(),
        "every chapter program is tested: {files:?}"
    );
    for (c, k, p, extra) in CHAPTERS {
        let cw = load(&chapter(c), p);
        let kp: Vec<(&str, i64)> = p.iter().chain(extra.iter()).copied().collect();
        let kw = load(&root().join(format!("workloads/{k}.kern")), &kp);
        let (cr, kr) = (run(&cfg, &cw), run(&cfg, &kw));
        assert_checks_hold(&cr, c);
        assert_checks_hold(&kr, k);
        assert_eq!(
            cr.checks.len(),
            kr.checks.len(),
            "{c}: the same checks as {k}.kern"
        );
        let ratio = cr.cycles as f64 / kr.cycles as f64;
        assert!(
            (0.75..=1.33).contains(&ratio),
            "{c}: {} cycles against {} for {k}.kern",
            cr.cycles,
            kr.cycles
        );
    }
}

#[test]
fn the_cuda_latch_deadlocks_when_oversubscribed_like_the_kern_one() {
    let cfg = config::load(
        Some(&root().join("configs/tiny.toml")),
        &["watchdog.no_progress_cycles=5000".to_string()],
    )
    .unwrap();
    let wl = load(&chapter("device_latch.cu"), &[("GROUPS", 64), ("G", 256)]);
    let e = machine::run(&cfg, &wl, &RunOptions::default()).expect_err("must not complete");
    let SimError::NoProgress { diagnosis, .. } = &e else {
        panic!("expected a no-progress diagnosis, got {e}");
    };
    assert!(diagnosis.contains("device_latch.cu:"), "{diagnosis}");
}

#[test]
fn a_constant_division_that_faults_is_left_to_run_time_and_named_for_what_it_is() {
    // Folding uses the machine's semantics (`ir::eval`): the most negative int divided by -1
    // overflows, so it is not folded to a value; the machine stops the run there and says why.
    let src = "/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer data: i32[32] = zero\n*/\n\
               __global__ void k(int *data)\n{\n    data[threadIdx.x] = (-2147483647 - 1) / -1;\n}\n";
    let wl = parse(src, "divmin.cu");
    let cfg = config::load(None, &[]).unwrap();
    let e = machine::run(&cfg, &wl, &RunOptions::default()).expect_err("the division faults");
    let SimError::Runtime {
        location, message, ..
    } = &e
    else {
        panic!("expected a runtime error, got {e}");
    };
    assert!(location.starts_with("divmin.cu:8:"), "{location}");
    assert!(
        message.contains("overflow: the most negative value by -1"),
        "{message}"
    );
}

#[test]
fn constant_conversions_give_what_the_machine_computes_at_run_time() {
    // Each conversion twice: folded from a constant, and by the machine's `cvt` on a loaded value.
    // Out of range (undefined in C) both saturate; in range both truncate toward zero.
    let src = r#"
/* gpumemsim
groups 1
group_size 1
buffer f: f32[4] = zero
buffer big: i64[1] = zero
buffer out: i32[8] = zero
buffer uout: u32[8] = zero
buffer fout: f32[2] = zero
check out[0] == out[1]
check out[0] == -2
check uout[0] == uout[1]
check uout[0] == 0
check out[2] == out[3]
check out[2] == 2147483647
check uout[2] == uout[3]
check uout[2] == 4294967295
check out[4] == out[5]
check out[4] == 0
check fout[0] == fout[1]
*/
__global__ void k(float *f, long long *big, int *out, unsigned *uout, float *fout)
{
    f[0] = -2.7f;
    f[1] = 3.0e10f;
    f[2] = 0.0f / 0.0f;
    big[0] = 9007199254740993LL;
    float a = f[0];
    float b = f[1];
    float n = f[2];
    long long g = big[0];
    out[0] = (int)-2.7f;
    out[1] = (int)a;
    uout[0] = (unsigned)-2.7f;
    uout[1] = (unsigned)a;
    out[2] = (int)3.0e10f;
    out[3] = (int)b;
    uout[2] = (unsigned)3.0e10f;
    uout[3] = (unsigned)b;
    out[4] = (int)(0.0f / 0.0f);
    out[5] = (int)n;
    fout[0] = (float)9007199254740993LL;
    fout[1] = (float)g;
}
"#;
    let wl = parse(src, "cvt.cu");
    let cfg = config::load(None, &[]).unwrap();
    assert_checks_hold(&run(&cfg, &wl), "cvt.cu");
}

/// A CUDA kernel that computes each of `cases` twice into `out` (of C type `out_ty`, buffer type
/// `out_buf`): from constants (folded by the front end) and from the same values loaded from
/// buffers `va`/`vb` of C type `ty` (computed by the machine), with a check that the two agree.
/// Each case is `(expression over a and b, a, b)`.
fn fold_or_run(
    ty: &str,
    buf: &str,
    out_ty: &str,
    out_buf: &str,
    cases: &[(String, &str, &str)],
) -> String {
    let n = cases.len();
    let mut src = format!(
        "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer va: {buf}[{n}] = zero\nbuffer vb: {buf}[{n}] = zero\n\
         buffer out: {out_buf}[{}] = zero\n",
        2 * n
    );
    for i in 0..n {
        src += &format!("check out[{}] == out[{}]\n", 2 * i, 2 * i + 1);
    }
    src += &format!("*/\n__global__ void k({ty} *va, {ty} *vb, {out_ty} *out)\n{{\n");
    for (i, (_, a, b)) in cases.iter().enumerate() {
        src += &format!("    va[{i}] = {a}; vb[{i}] = {b};\n");
    }
    for (i, (e, a, b)) in cases.iter().enumerate() {
        let folded = e
            .replace('a', &format!("({a})"))
            .replace('b', &format!("({b})"));
        let run = e.replace('a', "x").replace('b', "y");
        src += &format!(
            "    {{ {ty} x = va[{i}]; {ty} y = vb[{i}]; out[{}] = ({out_ty})({folded}); \
             out[{}] = ({out_ty})({run}); }}\n",
            2 * i,
            2 * i + 1
        );
    }
    src + "}\n"
}

#[test]
fn constants_fold_to_what_the_machine_computes_from_the_same_values() {
    // Every binary operator on each integer type's edge values and on floats, and every conversion
    // between the types: the front end folds the constant form, the machine computes the loaded
    // one (`ir::eval` for both). Left out: divisions that fault (they stop the run) and NaN results.
    let cfg = config::load(None, &[]).unwrap();
    let types: [(&str, &str, &[&str]); 5] = [
        (
            "int",
            "i32",
            &[
                "0",
                "1",
                "-1",
                "7",
                "-7",
                "2147483647",
                "-2147483647 - 1",
                "31",
                "33",
            ],
        ),
        (
            "unsigned",
            "u32",
            &["0u", "1u", "4294967295u", "7u", "31u", "33u", "2147483648u"],
        ),
        (
            "long long",
            "i64",
            &[
                "0LL",
                "-1LL",
                "7LL",
                "-7LL",
                "9223372036854775807LL",
                "-9223372036854775807LL - 1",
                "63LL",
                "65LL",
            ],
        ),
        (
            "unsigned long long",
            "u64",
            &[
                "0ull",
                "1ull",
                "18446744073709551615ull",
                "7ull",
                "63ull",
                "65ull",
            ],
        ),
        (
            "float",
            "f32",
            &["0.0f", "1.5f", "-2.25f", "3.0e10f", "-0.0f", "7.0f"],
        ),
    ];
    let ops = [
        "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "<=", "==", "!=", ">", ">=",
    ];
    for (ty, buf, vals) in types {
        let float = ty == "float";
        let is_zero = |v: &str| v.trim_start_matches('-').starts_with('0') && !v.contains('.');
        let is_min = |v: &str| v.contains(" - 1");
        let mut cases = Vec::new();
        for op in ops {
            if float && matches!(op, "%" | "<<" | ">>" | "&" | "|" | "^") {
                continue;
            }
            for (a, b) in vals.iter().flat_map(|a| vals.iter().map(move |b| (*a, *b))) {
                let faults = matches!(op, "/" | "%")
                    && !float
                    && (is_zero(b) || (is_min(a) && b.starts_with("-1")));
                // A constant count below 0 or not below the width is refused (the next test).
                let width = if ty.contains("long long") { 64 } else { 32 };
                let count = b.trim_end_matches(['u', 'l', 'L']).parse::<u128>().ok();
                let negative_shift = matches!(op, "<<" | ">>")
                    && (b.starts_with('-') || count.is_some_and(|c| c >= width));
                let zero_f = |v: &str| v.trim_start_matches('-').starts_with("0.0");
                let nan = float && op == "/" && zero_f(a) && zero_f(b);
                if !faults && !negative_shift && !nan {
                    cases.push((format!("a {op} b"), a, b));
                }
            }
        }
        let (out_ty, out_buf) = if float {
            ("float", "f32")
        } else {
            ("long long", "i64")
        };
        let src = fold_or_run(ty, buf, out_ty, out_buf, &cases);
        assert_checks_hold(&run(&cfg, &parse(&src, &format!("fold-{ty}.cu"))), ty);
        // Conversions to every type.
        for (to, to_buf, _) in types {
            let cases: Vec<_> = vals.iter().map(|&a| ("a".to_string(), a, "0")).collect();
            let src = fold_or_run(ty, buf, to, to_buf, &cases);
            assert_checks_hold(
                &run(&cfg, &parse(&src, &format!("convert-{ty}-{to}.cu"))),
                &format!("{ty} to {to}"),
            );
        }
    }
}

#[test]
fn constants_and_shift_counts_that_do_not_fit_their_c_type_are_refused_at_their_place() {
    let kernel = |body: &str| {
        format!(
            "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer out: i64[4] = zero\n*/\n\
             __global__ void k(long long *out)\n{{\n    int x = (int)out[0];\n{body}\n}}\n"
        )
    };
    for (body, says) in [
        (
            "    int y = 5000000000;",
            "the constant 5000000000 does not fit `int` (32 bits)",
        ),
        (
            "    out[1] = x << 32;",
            "shift count 32 is outside 0 ..= 31 for `int`",
        ),
        (
            "    out[1] = x >> -1;",
            "shift count -1 is outside 0 ..= 31 for `int`",
        ),
        (
            "    out[1] = 1LL << 64;",
            "shift count 64 is outside 0 ..= 63 for `long long`",
        ),
    ] {
        let e = err(&kernel(body), "fit.cu");
        assert!(
            e.starts_with("fit.cu:9:") && e.contains(says),
            "{body}: {e}"
        );
    }
    // What C defines stays accepted: -1 into unsigned, an explicit truncating cast, a count of 31.
    for body in [
        "    unsigned u = -1; out[1] = u;",
        "    out[1] = (int)5000000000LL;",
        "    out[1] = x << 31;",
        "    int h = 0xffffffff; out[1] = h;",
    ] {
        parse(&kernel(body), "fit.cu");
    }
    let cl = "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer out: i32[4] = zero\n*/\n\
              __kernel void k(__global int *out)\n{\n    out[0] = out[1] << 40;\n}\n";
    // OpenCL C defines the count modulo the width (§6.3.j), as the machine computes it.
    parse(cl, "fit.cl");
    let e = err(&cl.replace("out[1] << 40", "5000000000"), "fit.cl");
    assert!(
        e.starts_with("fit.cl:8:") && e.contains("does not fit `int`"),
        "{e}"
    );
}

const SEMANTICS_CU: &str = r#"
/* gpumemsim
groups 1
group_size 1
buffer out: i32[32] = zero
buffer big: i64[4] = zero
buffer f: f32[4] = zero
buffer arr: i32[8] = iota
local dyn: i32[4]
check out[0] == -3
check out[1] == -1
check out[2] == -4
check out[3] == 2147483647
check out[4] == 1
check out[5] == 0
check out[6] == 7
check out[7] == -7
check out[8] == 10
check out[9] == 0
check out[10] == 31
check out[11] == 16
check out[12] == 3
check out[13] == 6
check out[14] == 9
check out[15] == 3
check out[16] == 13
check out[17] == 5
check out[18] == 42
check out[19] == 0
check out[20] == 1
check out[21] == 3
check out[22] == 7
check out[23] == 4
check out[24] == 12
check out[25] == -5
check out[26] == 2
check out[27] == 1
check out[28] == 2
check out[29] == 28
check out[30] == 7
check out[31] == 5
check big[0] == 8589934592
check big[1] == -1
check big[2] == 4294967295
check big[3] == 6
check f[0] == 2.5
check f[1] == -0.5
check f[2] == 3
*/
#define FIVE 5
const int K = 3;
typedef unsigned int uint_t;

__device__ int classify(int v) {
    if (v < 0) return -1;
    if (v == 0) return 0;
    int r = 0;
    while (v > 0) { r += v; v -= 4; }
    return r;                         // classify(5) = 5 + 1 = 6, plus 3 below
}

__device__ void bump(int *p, int by) { *p += by; }

__global__ void semantics(int *out, long long *big, float *f, int *arr)
{
    __shared__ int s[4];
    extern __shared__ int dyn[];
    int m = -7;
    out[0] = m / 2;
    out[1] = m % 2;
    out[2] = m >> 1;
    out[3] = 0xFFFFFFFFu >> 1;
    out[4] = (unsigned)-1 > 5u;
    out[5] = -1 < 5u;
    out[6] = (int)7.9f;
    out[7] = (int)-7.9f;
    int t = threadIdx.x;
    out[8] = t == 0 ? 10 : 20;
    int i = -1;
    out[9] = (i >= 0 && arr[i] > 0) ? 1 : 0;
    int acc = 0;
    switch (t + 1) {
    case 1: acc += 1;
    case 2: acc += 10;
    default: acc += 20; break;
    case 3: acc += 100;
    }
    out[10] = acc;
    int sum = 0;
    for (int j = 0; j < 100; j++) {
        if (j % 2) continue;
        if (j > 6) break;
        sum += j;                     // 0 + 2 + 4 + 6
    }
    out[11] = sum + 4;
    int n = 0;
    do { n++; } while (n < 3);
    out[12] = n;
    int g = 0;
again:
    g += 2;
    if (g < 6) goto again;
    out[13] = g;
    out[14] = classify(5) + K;
    int *p = arr + 5;
    int *q = &arr[2];
    out[15] = p - q;
    int x = 5;
    int y = x++ + ++x;                // 5 + 7
    out[16] = y + 1;
    uint_t u = 5;
    out[17] = u;
    s[t] = 40;
    s[t] += 2;
    __syncthreads();
    out[18] = s[0];
    dyn[3] = 0;
    out[19] = dyn[3];
    out[20] = min(3, 1);
    out[21] = max(-3, 3);
    out[22] = abs(-7);
    bump(&out[23], 4);
    cuda::atomic_ref<int, cuda::thread_scope_device> r(out[24]);
    r.store(10, cuda::memory_order_relaxed);
    int e = 11;
    bool ok = r.compare_exchange_strong(e, 12);   // fails: e becomes 10
    if (!ok && e == 10) r.compare_exchange_strong(e, 12);
    out[25] = -FIVE;
    unsigned w = 0;
    w = atomicInc(&((unsigned *)out)[26], 1);    // 0 -> 1 (wraps at 1 next time)
    atomicInc((unsigned *)&out[26], 1);          // 1 -> 0
    out[26] += 2;
    out[27] = atomicCAS(&out[27], 0, 5) == 0 && out[27] == 5;
    int neg = arr[0] - 2;             // -2, known only at run time: a negative index
    int *mid = &arr[4];
    out[28] = mid[neg];
    int acc2 = 0;
    for (int j = 0; j < 8; j++)       // a counter that only grows: no sign extension needed
        acc2 += arr[j];
    out[29] = acc2;
    int *sp = s + 1;                  // a pointer into shared memory, passed to a device function
    sp[1] = 7;
    out[30] = s[2];
    bump(&s[3], 5);
    out[31] = s[3];
    big[0] = 1ll << 33;
    big[1] = (long long)(int)-1;
    big[2] = (long long)(unsigned)-1;
    long long z = 2;
    z *= 3;
    big[3] = z;
    f[0] = 5 / 2.0f;
    f[1] = -(0.5f);
    f[2] = (float)K;
}
"#;

#[test]
fn c_semantics_hold_on_the_machine() {
    let wl = parse(SEMANTICS_CU, "semantics.cu");
    let r = run(&tiny(), &wl);
    assert_checks_hold(&r, "semantics.cu");
}

const SEMANTICS_CL: &str = r#"
/* gpumemsim
param G = 64
groups 2
group_size G
buffer hist: u32[4] = zero
buffer total: i32[1] = zero
buffer flag: i32[2] = zero
buffer old: i32[1] = zero
buffer ex: i32[2] = [7, 0]
local tile: u32[G]
check hist[0] == 2 * G
check total[0] == 2 * G * (G - 1)
check flag[0] == 1
check old[0] == 0
check ex[1] == 1
*/
__kernel void cl_semantics(__global uint *hist, __global int *total, __global atomic_int *flag,
                           __global int *old, __global atomic_int *ex, __local uint *tile)
{
    __local atomic_uint counts[4];
    size_t lid = get_local_id(0);
    if (lid < 4) atomic_init(&counts[lid], 0u);
    tile[lid] = (uint)lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&counts[0], 1u, memory_order_relaxed, memory_scope_work_group);
    atomic_add(total, (int)tile[(lid + 1) % G] * 2 - (int)tile[(lid + 1) % G]);
    atomic_add(total, tile[lid]);
    atomic_sub(total, tile[(lid + 1) % G]);
    atomic_add(total, tile[(lid + 1) % G]);
    work_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_scope_device);
    if (lid == 0) {
        atomic_fetch_add((volatile __global atomic_uint *)&hist[0], atomic_load(&counts[0]));
        if (get_group_id(0) == 0) {
            int e = 7;
            int f = 99;
            // A failing exchange writes the value found into the expected object in memory.
            atomic_compare_exchange_strong(&ex[0], &e, 8);
            atomic_compare_exchange_strong(&ex[1], &flag[1], 1);
            *old = atomic_flag_test_and_set((volatile __global atomic_flag *)&flag[0]);
            (void)f;
        }
    }
}
"#;

#[test]
fn opencl_semantics_hold_on_the_machine() {
    let wl = parse(SEMANTICS_CL, "semantics.cl");
    let r = run(&tiny(), &wl);
    assert_checks_hold(&r, "semantics.cl");
}

fn insts(src: &str, file: &str) -> Vec<Inst> {
    parse(src, file).kernel.insts
}

fn memory_ops(v: &[Inst]) -> Vec<String> {
    v.iter()
        .filter_map(|i| match i {
            Inst::Load {
                ord, scope, space, ..
            } => Some(format!("ld {ord:?} {scope} {}", space.name())),
            Inst::Store {
                ord, scope, space, ..
            } => Some(format!("st {ord:?} {scope} {}", space.name())),
            Inst::Rmw {
                dst,
                op,
                ord,
                scope,
                space,
                ..
            } => Some(format!(
                "{} {op:?} {ord:?} {scope} {}",
                if dst.is_some() { "atom" } else { "red" },
                space.name()
            )),
            Inst::Cas {
                success,
                failure,
                scope,
                space,
                ..
            } => Some(format!(
                "cas {success:?}/{failure:?} {scope} {}",
                space.name()
            )),
            Inst::Fence { ord, scope, spaces } => Some(format!(
                "fence {ord:?} {scope} l{} g{}",
                spaces.local as u8, spaces.global as u8
            )),
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } => Some(format!(
                "bar {kind:?} {scope} l{} g{}",
                spaces.local as u8, spaces.global as u8
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn cuda_atomics_and_fences_reach_the_ir_with_their_documented_orders_and_scopes() {
    let src = r#"/* gpumemsim
groups 1
group_size 32
buffer d: u32[4]
buffer q: u64[1]
*/
__global__ void k(unsigned *d, unsigned long long *q) {
    __shared__ unsigned s[4];
    atomicAdd(&d[0], 1u);
    unsigned o = atomicAdd_block(&d[0], 1u);
    atomicMax_system(&d[1], o);
    atomicAdd(&s[0], 1u);
    atomicCAS(&d[2], 0u, 1u);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> c(*q);
    c.fetch_add(1, cuda::memory_order_acq_rel);
    o = c.load(cuda::memory_order_acquire);
    c.store(0, cuda::memory_order_release);
    c++;
    cuda::atomic_ref<unsigned, cuda::thread_scope_block>(d[3]).exchange(2u, cuda::memory_order_relaxed);
    __threadfence_block();
    __threadfence();
    __threadfence_system();
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_block);
    cuda::atomic_thread_fence(cuda::memory_order_relaxed, cuda::thread_scope_block);
    __syncthreads();
    __syncwarp();
    volatile unsigned *v = d;
    v[0] = o;
}"#;
    assert_eq!(
        memory_ops(&insts(src, "k.cu")),
        vec![
            "red Add Relaxed device global",
            "atom Add Relaxed work_group global",
            "red Max Relaxed system global",
            "red Add Relaxed work_group local",
            "cas Relaxed/Relaxed device global",
            "red Add AcqRel device global",
            "ld Acquire device global",
            "st Release device global",
            "red Add SeqCst device global",
            "red Exch Relaxed work_group global",
            "fence SeqCst work_group l1 g1",
            "fence SeqCst device l1 g1",
            "fence SeqCst system l1 g1",
            "fence Acquire work_group l1 g1",
            "bar WorkGroup work_group l1 g1",
            "bar SubGroup sub_group l1 g1",
            "st Relaxed system global",
        ]
    );
}

#[test]
fn opencl_atomics_fences_and_barriers_reach_the_ir_with_their_documented_orders_and_scopes() {
    let src = r#"/* gpumemsim
groups 1
group_size 32
buffer a: i32[4]
*/
__kernel void k(__global atomic_int *a, __global int *p) {
    __local atomic_int l[1];
    atomic_fetch_add(&a[0], 1);
    int o = atomic_fetch_add_explicit(&a[0], 1, memory_order_acq_rel);
    atomic_store_explicit(&a[1], o, memory_order_release, memory_scope_all_svm_devices);
    o = atomic_load_explicit(&l[0], memory_order_acquire, memory_scope_device);
    atomic_compare_exchange_weak_explicit(&a[2], &o, 3, memory_order_acq_rel, memory_order_acquire, memory_scope_work_group);
    atomic_inc(p);
    atomic_cmpxchg(p, 1, 2);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
    barrier(CLK_LOCAL_MEM_FENCE);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
    work_group_barrier(0);
}"#;
    let src = src.replace("buffer a: i32[4]", "buffer a: i32[4]\nbuffer p: i32[1]");
    assert_eq!(
        memory_ops(&insts(&src, "k.cl")),
        vec![
            "red Add SeqCst device global",
            "atom Add AcqRel device global",
            "st Release system global",
            "ld Acquire work_group local",
            "cas AcqRel/Acquire work_group global",
            "red Add Relaxed device global",
            "cas Relaxed/Relaxed device global",
            "fence AcqRel work_group l0 g1",
            "fence Acquire work_group l1 g0",
            "fence SeqCst device l1 g1",
            "bar WorkGroup work_group l1 g0",
            "bar WorkGroup device l0 g1",
            "bar WorkGroup work_group l0 g0",
        ]
    );
}

const HEAD: &str = "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer d: i32[4]\n*/\n";

/// Each `(body, file, line:col, text)`: the body after [`HEAD`] is refused with an error at that
/// place containing that text.
fn errors_at(cases: &[(&str, &str, &str, &str)]) {
    for (body, file, at, what) in cases {
        let e = err(&format!("{HEAD}{body}"), file);
        let want = format!("{file}:{at}:");
        assert!(
            e.starts_with(&want) && e.contains(what),
            "expected {want} ... {what}, got: {e}"
        );
    }
}

#[test]
fn unsupported_constructs_are_named_at_their_place() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("__global__ void k(int *d) { struct S { int a; } s; }", "k.cu", "6:29", "`struct` is not supported"),
        ("template <typename T> __global__ void k(T *d) {}", "k.cu", "6:1", "templates are not supported"),
        ("__global__ void k(int *d) { double x = 1; }", "k.cu", "6:29", "`double` is not supported"),
        ("__global__ void k(int *d) { int a[4]; }", "k.cu", "6:33", "private memory is not supported"),
        ("__global__ void k(int *d) { printf(\"%d\", 1); }", "k.cu", "6:29", "`printf` is not supported"),
        ("__global__ void k(int *d) { d[0] = __shfl_sync(0xffffffff, 1, 0); }", "k.cu", "6:36", "warp-level"),
        ("__global__ void k(int *d) { int x = 1; int *p = &x; }", "k.cu", "6:49", "variables live in registers"),
        ("#ifdef X\n#endif\n__global__ void k(int *d) {}", "k.cu", "6:1", "`#ifdef` is not supported"),
        ("#define F(x) x\n__global__ void k(int *d) {}", "k.cu", "6:9", "function-like macro"),
        ("__global__ void k(int *d) { int x = frob(1); }", "k.cu", "6:37", "unknown function `frob`"),
        ("__kernel void k(__global int *d) { float4 v; }", "k.cl", "6:36", "vector type `float4`"),
        ("__kernel void k(__global atomic_int *d) { atomic_store_explicit(d, 1, memory_order_acquire); }", "k.cl", "6:71", "a store cannot be acquire"),
        ("__kernel void k(__global int *d) { atomic_fetch_add(d, 1); }", "k.cl", "6:53", "pointer to an atomic type"),
        ("__kernel void k(__global int *d) { barrier(CLK_LOCAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE); }", "k.cl", "6:44", "CLK_IMAGE_MEM_FENCE"),
        ("__global__ void k(int *d) { int x = ; }", "k.cu", "6:37", "expected an expression"),
        ("__device__ int f(int x) { return f(x); }\n__global__ void k(int *d) { d[0] = f(1); }", "k.cu", "6:34", "recursive call"),
        ("__global__ void k(int *d) { goto nowhere; }", "k.cu", "6:29", "no label `nowhere`"),
    ];
    errors_at(cases);
}

#[test]
fn pointers_convert_implicitly_only_to_the_same_type_and_messages_spell_the_dialects_types() {
    // Implicit conversions a C11 or C++ compiler rejects (GCC 14 and Clang by default), each with
    // the types as the file's own dialect writes them.
    let cases: &[(&str, &str, &str, &str)] = &[
        ("__global__ void k(int *d) { unsigned int *q = d; q[0] = 1; }", "k.cu", "6:47", "cannot convert `int*` to `unsigned int*` without a cast"),
        ("__global__ void k(int *d) { long long a = d; }", "k.cu", "6:43", "cannot convert `int*` to `long long` without a cast"),
        ("__global__ void k(volatile int *d) { int *q = d; q[0] = 1; }", "k.cu", "6:47", "cannot convert `volatile int*` to `int*`"),
        ("__device__ void f(unsigned long long *p) { p[0] = 1; }\n__global__ void k(int *d) { f(d); }", "k.cu", "7:31", "cannot convert `int*` to `unsigned long long*`"),
        ("__kernel void k(__global int *d) { __global uint *q = d; q[0] = 1; }", "k.cl", "6:55", "cannot convert `global int*` to `global uint*` without a cast"),
        ("__kernel void k(__global int *d) { long a = d; }", "k.cl", "6:45", "cannot convert `global int*` to `long` without a cast"),
        ("__kernel void k(__global int *d) { __global atomic_int *a = d; }", "k.cl", "6:61", "to `global atomic_int*`"),
        ("__kernel void k(__global int *d) { __global ulong *q = 0; switch (q) { default: break; } }", "k.cl", "6:67", "found `global ulong*`"),
        ("__kernel void k(__global int *d) { __local bool a[4]; }", "k.cl", "6:36", "elements are int, uint, long, ulong, float"),
        ("__global__ void k(int *d) { __shared__ bool a[4]; }", "k.cu", "6:29", "elements are int, unsigned int, long long, unsigned long long, float"),
    ];
    errors_at(cases);
    // The same conversions written as casts load, and a pointer still tests as a condition.
    for (body, file) in [
        ("__global__ void k(int *d) { unsigned int *q = (unsigned int *)d; q[0] = 1; long long a = (long long)d; if (d) { d[1] = 2; } }", "k.cu"),
        ("__global__ void k(int *d) { volatile int *v = d; v[0] = 1; }", "k.cu"),
        ("__kernel void k(__global int *d) { __global uint *q = (__global uint *)d; q[0] = 1u; long a = (long)d; if (d) { d[1] = 2; } }", "k.cl"),
        ("__kernel void k(__global int *d) { __global atomic_int *a = (__global atomic_int *)d; atomic_store(a, 1); }", "k.cl"),
    ] {
        gpumemsim::frontend::parse(&format!("{HEAD}{body}"), file, &[])
            .unwrap_or_else(|e| panic!("{file} should load: {e}\n{body}"));
    }
}

#[test]
fn header_errors_point_into_the_comment() {
    let k = "\n__global__ void k(int *d, float c) { d[0] = (int)c; }";
    let cases: &[(&str, &str, &str)] = &[
        (
            "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer d: q32[4]\narg c = 1\n*/",
            "4:11",
            "expected a type",
        ),
        (
            "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer d: i32[4]\narg c = 1 + Z\n*/",
            "5:13",
            "unknown name `Z`",
        ),
        (
            "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer d: i32[4]\n*/",
            "6:33",
            "scalar parameter `c` has no value",
        ),
        (
            "/* gpumemsim\ngroups 1\ngroup_size 1\narg c = 1\n*/",
            "6:24",
            "pointer parameter `d` needs a buffer",
        ),
        (
            "/* gpumemsim\ngroup_size 1\nbuffer d: i32[4]\narg c = 1\n*/",
            "2:1",
            "launch geometry is missing",
        ),
        (
            "/* gpumemsim\ngroups 1\ngroup_size 1\nreg %x\n*/",
            "4:1",
            "registers are the C variables",
        ),
        ("/* no header */", "1:1", "no workload header"),
    ];
    for (h, at, what) in cases {
        let e = err(&format!("{h}{k}"), "h.cu");
        assert!(
            e.starts_with(&format!("h.cu:{at}")) && e.contains(what),
            "expected h.cu:{at} ... {what}, got: {e}"
        );
    }
}

#[test]
fn deep_nesting_is_an_error_naming_its_place_not_a_stack_overflow() {
    let deep = |open: &str, close: &str, n: usize| format!("{}{}", open.repeat(n), close.repeat(n));
    let exprs = format!(
        "{HEAD}__global__ void k(int *d) {{ d[0] = {}; }}",
        deep("(", ")", 100_000).replacen(")", "1)", 1)
    );
    let e = err(&exprs, "deep.cu");
    assert!(
        e.starts_with("deep.cu:6:") && e.contains("nested more than"),
        "{e}"
    );
    let blocks = format!(
        "{HEAD}__kernel void k(__global int *d) {{ {} }}",
        deep("{", "}", 5_000)
    );
    let e = err(&blocks, "deep.cl");
    assert!(
        e.starts_with("deep.cl:6:") && e.contains("nested more than"),
        "{e}"
    );
    let ifs = format!(
        "{HEAD}__global__ void k(int *d) {{ {} d[0] = 1; }}",
        "if (d) ".repeat(5_000)
    );
    let e = err(&ifs, "ifs.cu");
    assert!(e.contains("nested more than"), "{e}");
    let unary = format!(
        "{HEAD}__global__ void k(int *d) {{ d[0] = {}1; }}",
        "-~".repeat(50_000)
    );
    assert!(err(&unary, "u.cu").contains("nested more than"));
    let body = format!(
        "OpenCL T\n{{ x=0; }}\nP0 (global atomic_int* x) {{ {} }}\nexists (x=0)",
        deep("{", "}", 5_000)
    );
    let e = litmus::parse(&body, "t.litmus")
        .expect_err("too deep")
        .to_string();
    assert!(
        e.starts_with("t.litmus:3:") && e.contains("nested more than"),
        "{e}"
    );
}

#[test]
fn input_that_is_not_utf8_names_the_first_bad_byte() {
    let dir = std::env::temp_dir().join(format!("gpumemsim-cfront-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.cu");
    let mut bytes = HEAD.as_bytes().to_vec();
    bytes.extend_from_slice(b"__global__ void k(int *d) {\n    d[0] = 1; // caf\xE9\n}\n");
    std::fs::write(&p, &bytes).unwrap();
    let e = gpumemsim::frontend::load(&p, &[])
        .expect_err("not UTF-8")
        .to_string();
    assert!(e.contains("bad.cu:7:21: not UTF-8 text: byte 0xe9"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn kernel_parameters_bind_to_buffers_args_and_workload_parameters() {
    let src = r#"/* gpumemsim
param N = 3
groups 1
group_size 4
buffer values: u32[4] = zero
arg out = values
arg scale = N * 2
kernel second
check forall i in values: values[i] == i * 6 + 3
*/
__global__ void first(unsigned *out) {}
__global__ void second(unsigned *out, unsigned scale, int N) {
    out[threadIdx.x] = threadIdx.x * scale + N;
}"#;
    let wl = parse(src, "bind.cu");
    assert_eq!(wl.kernel.name, "second");
    assert_eq!(wl.parameters, vec![("N".to_string(), 3)]);
    assert_checks_hold(&run(&tiny(), &wl), "bind.cu");
    let wl = gpumemsim::frontend::parse(src, "bind.cu", &params(&[("N", 5)])).unwrap();
    let r = run(&tiny(), &wl);
    assert!(
        r.checks.iter().any(|c| !c.passed),
        "--param N=5 changes scale and N"
    );
}

#[test]
fn one_barrier_rule_for_the_kernel_language_opencl_kernels_and_litmus_threads() {
    let kern = "groups 1\ngroup_size 1\nkernel k {\n    barrier.local.device\n}\n";
    let e1 = gpumemsim::frontend::parse(kern, "b.kern", &[])
        .unwrap_err()
        .to_string();
    let cl = format!("{HEAD}__kernel void k(__global int *d) {{ work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_device); }}");
    let e2 = err(&cl, "b.cl");
    let lit = "OpenCL B\n{ x=0; }\nP0 (global atomic_int* x) {\n  work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_device);\n}\nexists (x=0)";
    let e3 = litmus::parse(lit, "b.litmus").unwrap_err().to_string();
    let msg = gpumemsim::barrier::BarrierRuleError::LocalOnlyWiderScope(Scope::Device).to_string();
    for (e, at) in [
        (&e1, "b.kern:4:19:"),
        (&e2, "b.cl:6:76:"),
        (&e3, "b.litmus:4:43:"),
    ] {
        assert!(e.starts_with(at) && e.ends_with(&msg), "{e}");
    }
    // Global memory at device scope, or both spaces, is allowed everywhere.
    let ok = format!("{HEAD}__kernel void k(__global int *d) {{ work_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, memory_scope_device); }}");
    parse(&ok, "ok.cl");
}

#[test]
fn c_kernels_translate_to_wgsl_or_are_rejected_for_the_orders_wgsl_lacks() {
    let (mut ok, mut rejected) = (0, 0);
    for (c, ..) in CHAPTERS {
        let wl = load(&chapter(c), &[]);
        match wgsl::translate(&wl, Caps::ALL, Options::default()) {
            Ok(t) => {
                wgsl::validate(t.shader.wgsl().unwrap()).unwrap_or_else(|e| panic!("{c}: {e}"));
                ok += 1;
            }
            Err(e) => {
                assert!(
                    e.location.contains(c) && e.message.contains("WGSL atomics are relaxed only"),
                    "{c}: {e}"
                );
                rejected += 1;
            }
        }
    }
    // device_latch (acq_rel, acquire) and atomic_min (seq_cst, as the chapter writes it).
    assert_eq!(rejected, 2, "{ok} translated");
}

#[test]
fn the_readme_examples_run_and_pass_their_checks() {
    let text = std::fs::read_to_string(root().join("workloads/README.md")).unwrap();
    let mut n = 0;
    for ext in ["cu", "cl"] {
        for block in text.split(&format!("```{ext}\n")).skip(1) {
            let src = block.split("```").next().unwrap();
            let wl = parse(src, &format!("README.{ext}"));
            assert_checks_hold(&run(&tiny(), &wl), &format!("README {ext} example"));
            n += 1;
        }
    }
    assert!(n >= 2, "a CUDA and an OpenCL example");
}

#[test]
fn the_measurement_suite_takes_c_kernels_like_kern_ones() {
    let toml = r#"
name = "c"
[[bench]]
name = "atomic_counter"
group = "contention"
kernel = "race_counter_atomic.cu"
sweep = { N = [256, 512] }
"#;
    let suite =
        gpumemsim::device::suite::Suite::parse(toml, "c.toml", &root().join("workloads/chapters"))
            .unwrap_or_else(|e| panic!("{e}"));
    let loaded = gpumemsim::device::measure::load(suite).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.cases.len(), 2);
    for (case, wl) in &loaded.cases {
        assert!(
            wl.kernel.file.ends_with("race_counter_atomic.cu"),
            "{}",
            wl.kernel.file
        );
        assert_eq!(Some(&wl.parameters[0].1), case.params.get("N"));
        wgsl::translate(wl, Caps::ALL, Options::default()).unwrap_or_else(|e| panic!("{e}"));
    }
}

fn litmus_outcomes(src: &str) -> Vec<(Vec<String>, Vec<i64>)> {
    let t = litmus::parse(src, "t.litmus").unwrap_or_else(|e| panic!("{e}\n{src}"));
    let opts = LitmusOptions {
        iterations: 200,
        seed: 3,
        ..LitmusOptions::default()
    };
    let r = litmus::run(&t, &tiny(), &opts).unwrap_or_else(|e| panic!("{e}"));
    r.outcomes
        .iter()
        .map(|o| (r.vars.clone(), o.values.clone()))
        .collect()
}

#[test]
fn opencl_litmus_threads_have_the_c_statements_and_c11_compare_exchange() {
    // Loops, labels and goto, `?:`, compound assignment, pointer arithmetic on a location.
    let src = "OpenCL Stmts\n{ x=0; y=0; P0:r9=x; }\nP0 (global atomic_int* x, global int* y) {\n  int s = 0;\n  for (int i = 0; i < 4; i++) { if (i == 2) continue; s += i; }\n  int n = 0;\nagain:\n  n++;\n  if (n < 3) goto again;\n  int t = n > 2 ? 10 : 20;\n  *(y + 0) = s;\n  y[0] += 1;\n  atomic_store_explicit(r9, t, memory_order_relaxed, memory_scope_device);\n  int u = *y;\n}\nexists (0:s=4 /\\ 0:n=3 /\\ 0:t=10 /\\ 0:u=5 /\\ x=10 /\\ y=5)";
    let outs = litmus_outcomes(src);
    assert_eq!(outs.len(), 1, "{outs:?}");
    let t = litmus::parse(src, "t.litmus").unwrap();
    let opts = LitmusOptions {
        iterations: 100,
        seed: 3,
        ..LitmusOptions::default()
    };
    let r = litmus::run(&t, &tiny(), &opts).unwrap();
    assert_eq!(r.witnesses, 100, "{:?}", r.outcomes);

    // C11: a failing compare-exchange whose expected argument is a location writes the value found
    // there; a succeeding one leaves it.
    let cas = "OpenCL CAS-loc\n{ x=5; e=3; y=1; f=1; }\nP0 (global atomic_int* x, global int* e, global atomic_int* y, global int* f) {\n  int ok = atomic_compare_exchange_strong_explicit(x, e, 7, memory_order_relaxed, memory_order_relaxed, memory_scope_device);\n  int ok2 = atomic_compare_exchange_strong(y, f, 2);\n}\nforall (0:ok=0 /\\ e=5 /\\ x=5 /\\ 0:ok2=1 /\\ f=1 /\\ y=2)";
    let t = litmus::parse(cas, "t.litmus").unwrap();
    let r = litmus::run(&t, &tiny(), &opts).unwrap();
    assert_eq!(r.prop_true, 100, "{:?} {:?}", r.vars, r.outcomes);
}

/// Every prefix of every chapter program, and copies with one character replaced, load or fail with
/// an error at a place: never a panic.
#[test]
fn truncated_and_mutated_programs_are_errors_not_panics() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let swaps = [
        '{', '}', '(', ')', ';', '*', '&', '[', ']', '0', 'x', '"', '\'', '#', '/', '<', '>', ':',
    ];
    for (c, ..) in CHAPTERS {
        let text = std::fs::read_to_string(chapter(c)).unwrap();
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(17).collect();
        for &cut in &cuts {
            if let Err(e) = gpumemsim::frontend::parse(&text[..cut], c, &[]) {
                assert!(e.to_string().starts_with(&format!("{c}:")), "{e}");
            }
        }
        let chars: Vec<char> = text.chars().collect();
        for _ in 0..150 {
            let mut m = chars.clone();
            let i = (next() % m.len() as u64) as usize;
            m[i] = swaps[(next() % swaps.len() as u64) as usize];
            let s: String = m.into_iter().collect();
            if let Err(e) = gpumemsim::frontend::parse(&s, c, &[]) {
                assert!(e.to_string().starts_with(&format!("{c}:")), "{e}");
            }
        }
    }
}

/// C operand values of each integer type: edges of the type and of the other types.
const C_VALUES: [(&str, &[&str]); 4] = [
    ("int", &["-1", "7", "2147483647", "(-2147483647 - 1)"]),
    ("unsigned", &["1u", "4294967295u", "2147483648u"]),
    (
        "long long",
        &["-1LL", "-7LL", "4294967296LL", "9223372036854775807LL"],
    ),
    (
        "unsigned long long",
        &["1ull", "18446744073709551615ull", "4294967296ull"],
    ),
];

/// One C statement on `x` (of type `tx`, value `a`) and `y` (type `ty`, value `b`) that sets the
/// `long long r`.
struct CCase {
    tx: &'static str,
    a: &'static str,
    ty: &'static str,
    b: &'static str,
    stmt: String,
}

/// Statements whose result C defines (with `-fwrapv`'s wrapping signed arithmetic, which the
/// machine also has): binary operators, compound assignments and conditional expressions between
/// two different integer types (the usual arithmetic conversions; operations within one type are
/// `constants_fold_to_what_the_machine_computes_from_the_same_values`'s), shifts by in-range
/// amounts, unary operators.
fn c_cases() -> Vec<CCase> {
    let negative = |v: &str| v.starts_with('-') || v.starts_with("(-");
    let mut cases = Vec::new();
    let mut add = |tx, a, ty, b, stmt: String| cases.push(CCase { tx, a, ty, b, stmt });
    let binary = [
        "+", "-", "*", "/", "%", "&", "|", "^", "<", "<=", "==", "!=", ">", ">=",
    ];
    for (tx, xs) in C_VALUES {
        for (ty, ys) in C_VALUES.into_iter().filter(|&(t, _)| t != tx) {
            for (&a, &b) in xs.iter().flat_map(|a| ys.iter().map(move |b| (a, b))) {
                for op in binary {
                    add(tx, a, ty, b, format!("r = x {op} y;"));
                }
                for op in ["+=", "-=", "*=", "^="] {
                    add(tx, a, ty, b, format!("x {op} y; r = x;"));
                }
                add(tx, a, ty, b, "r = (x > 0) ? x : y;".into());
            }
        }
        for &a in xs {
            // Amounts below the promoted left operand's width; no negative left operand of `<<`.
            for b in ["0", "1", "5", "31"] {
                add(tx, a, "int", b, "r = x >> y;".into());
                if !negative(a) {
                    add(tx, a, "int", b, "r = x << y;".into());
                }
            }
            for u in ["-x", "~x", "!x", "x++", "x--", "++x", "--x"] {
                add(tx, a, "int", "0", format!("r = {u};"));
            }
        }
    }
    cases
}

/// What a C program whose `main` runs `body` prints, word by word, compiled by the host's C compiler
/// (`CC`, else `cc`: the one Rust links with) with `-fwrapv`; `name` names its scratch folder.
fn host_c(name: &str, body: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("gpumemsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = format!("#include <stdio.h>\nint main(void) {{\n{body}  return 0;\n}}\n");
    std::fs::write(dir.join("ref.c"), src).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .args(["-O0", "-fwrapv", "-w", "-o"])
        .arg(dir.join("ref"))
        .arg(dir.join("ref.c"))
        .status()
        .unwrap_or_else(|e| panic!("the host C compiler `{cc}` (set CC) did not start: {e}"));
    assert!(status.success(), "`{cc}` failed on the reference program");
    let out = std::process::Command::new(dir.join("ref"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn integer_to_float_conversions_round_once_as_the_host_c_compiler_does() {
    // Values with more significant bits than an f32 holds, among them one where rounding through
    // f64 first would land on a midpoint and round the other way.
    let values: [(&str, &str, &str); 8] = [
        ("long long", "i64", "1152921573326323713LL"),
        ("long long", "i64", "-1152921573326323713LL"),
        ("unsigned long long", "u64", "1152921573326323713ull"),
        ("long long", "i64", "9007199254740993LL"),
        ("unsigned long long", "u64", "18446744073709551615ull"),
        ("int", "i32", "16777217"),
        ("unsigned", "u32", "4294967295u"),
        ("long long", "i64", "9223372036854775807LL"),
    ];
    let body: String = values
        .iter()
        .map(|(t, _, v)| format!("  {{ {t} x = {v}; printf(\"%.17g\\n\", (double)(float)x); }}\n"))
        .collect();
    let want = host_c("cfloat", &body);
    let mut src = String::from("/* gpumemsim\ngroups 1\ngroup_size 1\n");
    src += &format!("buffer out: f32[{}] = zero\n", 2 * values.len());
    for (i, (_, b, _)) in values.iter().enumerate() {
        src += &format!("buffer v{i}: {b}[1] = zero\n");
    }
    for (i, w) in want.iter().enumerate() {
        src += &format!(
            "check out[{}] == {w}\ncheck out[{}] == {w}\n",
            2 * i,
            2 * i + 1
        );
    }
    let params: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, (t, _, _))| format!("{t} *v{i}"))
        .collect();
    src += &format!(
        "*/\n__global__ void k(float *out, {})\n{{\n",
        params.join(", ")
    );
    for (i, (t, _, v)) in values.iter().enumerate() {
        src += &format!(
            "  v{i}[0] = {v};\n  {{ {t} x = v{i}[0]; out[{}] = (float)x; out[{}] = (float){v}; }}\n",
            2 * i,
            2 * i + 1
        );
    }
    src += "}\n";
    let cfg = config::load(None, &[]).unwrap();
    assert_checks_hold(&run(&cfg, &parse(&src, "int-to-float.cu")), "int to float");
}

#[test]
fn c_integer_arithmetic_agrees_with_the_host_c_compiler() {
    // The reference: the same statements compiled by the host's C compiler (the one Rust links
    // with) with -fwrapv. Each statement runs twice on the machine: on values loaded from buffers
    // (the machine computes) and on constants (the front end folds).
    let cases = c_cases();
    let body: String = cases
        .iter()
        .map(|k| {
            format!(
                "  {{ long long r; {} x = {}; {} y = {}; (void)y; {} printf(\"%lld\\n\", r); }}\n",
                k.tx, k.a, k.ty, k.b, k.stmt
            )
        })
        .collect();
    let want: Vec<String> = host_c("cref", &body)
        .into_iter()
        .map(|v| match v.as_str() {
            "-9223372036854775808" => "-9223372036854775807 - 1".to_string(),
            _ => v,
        })
        .collect();
    assert_eq!(want.len(), cases.len());
    let buf = |t: &str| t.replace(' ', "_");
    let n = cases.len();
    let mut src = format!(
        "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer out: i64[{}] = zero\n",
        2 * n
    );
    for (t, b) in [
        ("int", "i32"),
        ("unsigned", "u32"),
        ("long long", "i64"),
        ("unsigned long long", "u64"),
    ] {
        src += &format!("buffer v_{}: {b}[{}] = zero\n", buf(t), 2 * n);
    }
    for (i, w) in want.iter().enumerate() {
        src += &format!(
            "check out[{}] == {w}\ncheck out[{}] == {w}\n",
            2 * i,
            2 * i + 1
        );
    }
    src += "*/\n__global__ void k(long long *out, int *v_int, unsigned *v_unsigned, \
            long long *v_long_long, unsigned long long *v_unsigned_long_long)\n{\n";
    for (i, k) in cases.iter().enumerate() {
        src += &format!(
            "  v_{}[{}] = {}; v_{}[{}] = {};\n",
            buf(k.tx),
            2 * i,
            k.a,
            buf(k.ty),
            2 * i + 1,
            k.b
        );
    }
    for (i, k) in cases.iter().enumerate() {
        let (x, y) = (buf(k.tx), buf(k.ty));
        src += &format!(
            "  {{ long long r; {} x = v_{x}[{}]; {} y = v_{y}[{}]; {} out[{}] = r; }}\n\
             \x20 {{ long long r; {} x = {}; {} y = {}; {} out[{}] = r; }}\n",
            k.tx,
            2 * i,
            k.ty,
            2 * i + 1,
            k.stmt,
            2 * i,
            k.tx,
            k.a,
            k.ty,
            k.b,
            k.stmt,
            2 * i + 1
        );
    }
    src += "}\n";
    let cfg = config::load(None, &[]).unwrap();
    let r = run(&cfg, &parse(&src, "c-reference.cu"));
    let failed: Vec<String> = r
        .checks
        .iter()
        .filter(|c| !c.passed)
        .take(10)
        .map(|c| {
            let i = c
                .text
                .split(['[', ']'])
                .nth(1)
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(0)
                / 2;
            let k = &cases[i.min(n - 1)];
            format!(
                "{} x = {}; {} y = {}; {} — {}: {:?}",
                k.tx, k.a, k.ty, k.b, k.stmt, c.text, c.detail
            )
        })
        .collect();
    assert!(failed.is_empty(), "{} cases:\n{}", n, failed.join("\n"));
}

#[test]
fn float_arithmetic_agrees_with_the_host_c_compiler_bit_for_bit() {
    // IEEE single precision: every operator on zeros of both signs, a denormal, the largest
    // magnitudes, infinities and inexact values; the result's bits compared
    // (`__float_as_uint`), computed by the machine and folded from constants.
    let vals = [
        "0.0f",
        "-0.0f",
        "1.5f",
        "-2.25f",
        "3.0e38f",
        "1.0e-40f",
        "0.1f",
        "(1.0f / 0.0f)",
        "(-1.0f / 0.0f)",
    ];
    let ops = ["+", "-", "*", "/", "<", "<=", "==", "!=", ">", ">="];
    let mut cases: Vec<(&str, &str, &str)> = Vec::new();
    for op in ops {
        for a in vals {
            for b in vals {
                cases.push((a, b, op));
            }
        }
    }
    let body: String = cases
        .iter()
        .map(|(a, b, op)| {
            format!(
                "  {{ float x = {a}; float y = {b}; float r = (float)(x {op} y); \
                 unsigned u; memcpy(&u, &r, 4); printf(\"%u\\n\", u); }}\n"
            )
        })
        .collect();
    let want = host_c("cfloatops", &format!("#include <string.h>\n{body}"));
    let n = cases.len();
    let mut src = format!(
        "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer va: f32[{n}] = zero\nbuffer vb: f32[{n}] = zero\n\
         buffer out: u32[{}] = zero\n",
        2 * n
    );
    for (i, w) in want.iter().enumerate() {
        src += &format!(
            "check out[{}] == {w}\ncheck out[{}] == {w}\n",
            2 * i,
            2 * i + 1
        );
    }
    src += "*/\n__global__ void k(float *va, float *vb, unsigned *out)\n{\n";
    for (i, (a, b, _)) in cases.iter().enumerate() {
        src += &format!("  va[{i}] = {a}; vb[{i}] = {b};\n");
    }
    for (i, (a, b, op)) in cases.iter().enumerate() {
        src += &format!(
            "  {{ float x = va[{i}]; float y = vb[{i}]; out[{}] = __float_as_uint((float)(x {op} y)); \
             out[{}] = __float_as_uint((float)({a} {op} {b})); }}\n",
            2 * i,
            2 * i + 1
        );
    }
    src += "}\n";
    let cfg = config::load(None, &[]).unwrap();
    assert_checks_hold(&run(&cfg, &parse(&src, "float-ops.cu")), "float operators");
}

#[test]
fn bit_reinterpretations_read_the_same_bits_as_another_type() {
    let cu = r#"
/* gpumemsim
groups 1
group_size 1
buffer out: u32[4] = zero
buffer fo: f32[2] = zero
check out[0] == 1069547520
check out[1] == 3217031168
check fo[0] == 1.5
check fo[1] == -2
*/
__global__ void k(unsigned *out, float *fo)
{
    float f = fo[0] + 1.5f;
    out[0] = __float_as_uint(f);
    out[1] = __float_as_int(-1.5f);
    fo[0] = __uint_as_float(out[0]);
    fo[1] = __int_as_float(-1073741824);
}
"#;
    let cfg = config::load(None, &[]).unwrap();
    assert_checks_hold(&run(&cfg, &parse(cu, "bits.cu")), "bits.cu");
    let cl = r#"
/* gpumemsim
groups 1
group_size 1
buffer out: u32[4] = zero
buffer fo: f32[2] = zero
check out[0] == 1069547520
check fo[0] == 1.5
check out[1] == 1
*/
__kernel void k(__global uint *out, __global float *fo)
{
    float f = fo[1] + 1.5f;
    out[0] = as_uint(f);
    fo[0] = as_float(out[0]);
    long l = -5;
    out[1] = as_ulong(l) == 18446744073709551611ul;
}
"#;
    assert_checks_hold(&run(&cfg, &parse(cl, "bits.cl")), "bits.cl");
    let e = err(
        "/* gpumemsim\ngroups 1\ngroup_size 1\nbuffer out: u32[1] = zero\n*/\n\
         __kernel void k(__global uint *out)\n{\n    long l = 5;\n    out[0] = as_uint(l);\n}\n",
        "bad.cl",
    );
    assert!(
        e.contains("bad.cl:9:22: `as_uint` reads the bits of a 4-byte value"),
        "{e}"
    );
}
