//! Litmus tests (issue 3): the suite in `workloads/litmus/` is sound on the tiny, default (H100) and
//! stress configs at CI-sized iteration counts (the documented 10^5-iteration run is in the README);
//! the stress config shows every weak outcome the suite marks `required`; outcomes the design cannot
//! produce stay as ignored tests with the reason; both dialects report errors at file:line:col;
//! parallel runs equal serial ones; the JSON schema and `--check`; race reports for litmus tests and
//! the kernel workloads.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::litmus::{self, CheckStatus, Expect, LitmusOptions, LitmusResult, LitmusTest};
use gpumemsim::machine::{self, RaceKind, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cfg(name: &str) -> GpuConfig {
    config::load(Some(&root().join(format!("configs/{name}.toml"))), &[])
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn suite() -> Vec<LitmusTest> {
    let files = litmus::collect(&[root().join("workloads/litmus")]).expect("suite folder");
    files
        .iter()
        .map(|f| litmus::load(f).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn test_file(rel: &str) -> LitmusTest {
    litmus::load(&root().join("workloads/litmus").join(rel)).unwrap_or_else(|e| panic!("{e}"))
}

fn run(t: &LitmusTest, cfg: &GpuConfig, iterations: u64, seed: u64) -> LitmusResult {
    let opts = LitmusOptions {
        iterations,
        seed,
        ..LitmusOptions::default()
    };
    litmus::run(t, cfg, &opts).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn suite_has_at_least_60_tests_each_with_an_expectation() {
    let tests = suite();
    assert!(tests.len() >= 60, "only {} tests", tests.len());
    for t in &tests {
        assert!(
            t.expectation.is_some(),
            "{} ({}) declares no expectation",
            t.name,
            t.file
        );
    }
    let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
    for family in [
        "MP", "SB", "LB", "IRIW", "WRC", "ISA2", "2+2W", "R+", "S+", "RWC", "CoRR", "CoWW", "CoRW",
        "CoWR",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(family)),
            "no {family} test in the suite"
        );
    }
}

/// No test's forbidden witness appears, and no state the oracle forbids.
fn assert_sound(cfg: &GpuConfig, iterations: u64) {
    let mut bad = Vec::new();
    for t in suite() {
        let r = run(&t, cfg, iterations, 7);
        if r.check() == CheckStatus::ForbiddenObserved {
            bad.push(format!(
                "{} ({}): {} witnesses",
                r.name, r.file, r.witnesses
            ));
        }
        if r.unsound_no_final_state() {
            bad.push(format!(
                "{} ({}): {} iterations without a final state, the model says every execution completes",
                r.name, r.file, r.no_final_state
            ));
        }
        for o in r.forbidden_observed() {
            bad.push(format!(
                "{} ({}): state {} forbidden by the model, {} times, first in launch {} of seed 7",
                r.name,
                r.file,
                r.state_string(&o.values),
                o.count,
                o.first_launch
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "forbidden outcomes observed on {}:\n{}",
        cfg.name,
        bad.join("\n")
    );
}

#[test]
fn suite_is_sound_on_tiny() {
    assert_sound(&cfg("tiny"), 3000);
}

#[test]
fn suite_is_sound_on_the_default_h100() {
    assert_sound(&config::default_config().expect("embedded default"), 600);
}

#[test]
fn suite_is_sound_under_stress() {
    assert_sound(&cfg("stress"), 2000);
}

#[test]
fn stress_shows_every_required_weak_outcome() {
    let stress = cfg("stress");
    let mut missing = Vec::new();
    for t in suite() {
        if t.expectation.is_some_and(|e| e.required) {
            let r = run(&t, &stress, 20_000, 1);
            if r.witnesses == 0 {
                missing.push(format!("{} ({})", r.name, r.file));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "required weak outcomes never observed:\n{}",
        missing.join("\n")
    );
}

/// Allowed outcomes the stress config produces only rarely (fewer than about 1 in 1000 iterations;
/// see the README's list): they appear in long runs.
#[test]
#[ignore = "long run (10^5 iterations per test): the rare allowed outcomes of the README's list"]
fn rare_weak_outcomes_appear_in_long_stress_runs() {
    let stress = cfg("stress");
    for f in [
        "ptx/mp_fence_reader_only.litmus",
        "ptx/sb_rel_acq.litmus",
        "opencl/sb_rel_acq_dev.litmus",
    ] {
        let r = run(&test_file(f), &stress, 100_000, 1);
        assert!(r.witnesses > 0, "{f}: no witness in 10^5 iterations");
    }
}

/// An allowed outcome the modelled hardware cannot produce: kept as an ignored test whose reason is
/// the mechanism that prevents it (README, "Litmus tests").
fn assert_observed(rel: &str) {
    let r = run(&test_file(rel), &cfg("stress"), 20_000, 1);
    assert!(r.witnesses > 0, "{rel}: witness never observed");
}

#[test]
#[ignore = "design cannot produce: a release fence waits until the thread's earlier stores are acknowledged by L2, so fence.acq_rel already orders store->load like fence.sc"]
fn sb_with_acq_rel_fences_shows_store_buffering() {
    assert_observed("ptx/sb_fence_acqrel_gpu.litmus");
}

#[test]
#[ignore = "design cannot produce: L2 is the single coherence point of device-scope loads, and an acquire load completes before the next load issues, so readers cannot see two writes in different orders"]
fn iriw_with_acquire_loads_shows_disagreeing_readers() {
    assert_observed("ptx/iriw_acq.litmus");
    assert_observed("opencl/iriw_acquire.litmus");
}

#[test]
#[ignore = "design cannot produce: a device-scope release fence waits for every write the SM's shared L1 accepted (cumulativity), so a weak read that saw another warp's write early is followed only by readers that see it in L2"]
fn iriw_with_acq_rel_fences_shows_disagreeing_readers() {
    assert_observed("ptx/iriw_fence_acqrel.litmus");
}

#[test]
#[ignore = "design cannot produce: the L1 keeps per-location coherence for its SM (fills never install data older than the line, device-level reads drop the line), also for weak accesses the model leaves unordered"]
fn weak_reads_of_one_location_go_backwards() {
    assert_observed("ptx/corr_weak.litmus");
    assert_observed("ptx/corr_cta_diff.litmus");
}

/// An allowed final state (as `LitmusResult::state_string` writes it) that the stress config did
/// not show in 10^5 iterations (issue 13, "Ability"; README, "Ability").
fn assert_state_observed(rel: &str, state: &str) {
    let r = run(&test_file(rel), &cfg("stress"), 100_000, 1);
    assert!(
        r.outcomes
            .iter()
            .any(|o| r.state_string(&o.values) == state),
        "{rel}: {state} never observed"
    );
}

#[test]
#[ignore = "design cannot produce: a release fence waits until the thread's earlier stores are acknowledged by L2, so fence.acq_rel orders a store before every later store and load as fence.sc does; needs a release that orders only the writes after it (a marker in an ordered store path) instead of stalling the thread"]
fn acq_rel_fences_leave_a_store_and_a_later_access_unordered() {
    assert_observed("ptx/2p2w_fence_acqrel.litmus");
    assert_observed("ptx/r_fence_acqrel.litmus");
    assert_state_observed("ptx/rwc_fence_acqrel.litmus", "P1:r0=1; P1:r1=0; P2:r0=0;");
}

#[test]
#[ignore = "design cannot produce: an acq_rel exchange is read and written at once at L2 and its acquire side holds back the later load until it returns; needs an RMW whose write reaches other threads after the thread's later load was performed"]
fn acq_rel_exchanges_do_not_order_store_buffering() {
    assert_observed("ptx/sb_exch_acqrel.litmus");
}

#[test]
#[ignore = "design cannot produce: an acquire load holds back every later access until it returns, and a release store waits for earlier loads to return; the model allows the cycle without a release read by an acquire, but the machine would need a store made visible before an earlier (acquire) load returned"]
fn load_buffering_through_acquire_loads_or_release_stores() {
    assert_observed("ptx/lb_acq_relaxed.litmus");
    assert_observed("ptx/lb_relaxed_rel.litmus");
    assert_observed("ptx/lb_rel_acq_cta_diff.litmus");
}

#[test]
#[ignore = "not seen in 10^5 stress iterations: a cta/work_group-scope release or fence waits only for the L1 to accept earlier stores, and the L1 writes them through in order per slice, so another SM sees them out of order only when interconnect jitter reorders two slices' messages; needs an L1 that writes lines back to L2 in a seeded order (write-combining) or held write-throughs"]
fn cta_scope_releases_reach_other_sms_out_of_order() {
    for f in [
        "ptx/mp_fence_sc_cta_diff.litmus",
        "ptx/mp_fence_acqrel_cta_diff.litmus",
        "ptx/mp_rel_cta_acq_gpu_diff.litmus",
        "ptx/s_rel_acq_cta_diff.litmus",
        "ptx/wrc_cta_diff.litmus",
        "ptx/isa2_cta_diff.litmus",
        "ptx/sb_fence_sc_cta_gpu.litmus",
        "opencl/mp_fence_wg_diff.litmus",
        "opencl/mp_rel_acq_wg_diff.litmus",
    ] {
        assert_observed(f);
    }
}

#[test]
#[ignore = "not seen in 10^5 stress iterations: with a fence.sc.cta between its loads, each reader must miss one location in its L1 and hit a stale line of the other, the two readers on different SMs the other way round; L1 pre-warming with a random subset of lines rarely gives both at once; needs per-line random L1 invalidation"]
fn iriw_with_cta_fences_between_different_ctas_disagrees() {
    assert_state_observed(
        "ptx/iriw_fence_sc_cta.litmus",
        "P2:r0=1; P2:r1=0; P3:r0=1; P3:r1=0;",
    );
}

#[test]
#[ignore = "design cannot produce: a held load keeps coherence per line (`ordering::held_load_blocks`), so the later weak read of d[0] waits for the held read of d[1] in the same line; needs the rule per location (word), or a store buffer that drains words of one line apart"]
fn weak_reads_of_two_words_of_one_line_reorder() {
    assert_state_observed("ptx/mp_array_rel_acq.litmus", "P1:r0=0; P1:r1=2; P1:r2=0;");
}

#[test]
#[ignore = "design cannot produce yet: work-group-local loads and stores take their value at issue (issue 13 item 4, local memory through timed hardware)"]
fn local_memory_message_passing_is_weak() {
    assert_observed("ptx/mp_shared_relaxed.litmus");
    assert_observed("opencl/mp_local_relaxed.litmus");
}

#[test]
#[ignore = "design cannot produce: a release store waits until the thread's earlier stores are acknowledged at L2, so a thread's two stores reach L2 in program order"]
fn two_plus_two_w_with_release_stores_is_weak() {
    assert_observed("ptx/2p2w_rel.litmus");
}

#[test]
#[ignore = "design cannot produce: the gpu-scope release makes x visible in L2 before y, and the reader's gpu-scope load of x is served by L2 after its (completed) acquire of y"]
fn acquire_at_cta_scope_misses_a_gpu_scope_release() {
    assert_observed("ptx/mp_rel_gpu_acq_cta_diff.litmus");
}

/// Load buffering (issue 13, "Ability"): a load held before it is performed while the thread's
/// later independent store proceeds (`stress.load_delay`) gives the chapter's both-units-end-with-50
/// outcome (unit 0's store depends on its load, so unit 1's load must stay in flight past a load
/// round trip and two store paths) and LB's in both dialects.
#[test]
fn held_loads_give_load_buffering_under_stress() {
    let stress = cfg("stress");
    for f in [
        "chapter/relaxed_reorder_50.litmus",
        "ptx/lb_relaxed_gpu.litmus",
        "opencl/lb_relaxed.litmus",
    ] {
        let r = run(&test_file(f), &stress, 10_000, 1);
        assert!(r.witnesses > 0, "{f}: no witness in 10^4 iterations");
        assert!(r.forbidden_observed().is_empty(), "{f}");
    }
}

/// A held load keeps per-location coherence and its dependencies (`ordering::held_load_blocks`):
/// with every global load held, the coherence, dependency and synchronisation tests of the suite show
/// no state the model forbids.
#[test]
fn held_loads_keep_coherence_dependencies_and_synchronisation() {
    let held = config::load(
        Some(&root().join("configs/stress.toml")),
        &[
            "stress.load_delay_percent=100".into(),
            "stress.load_delay=400".into(),
        ],
    )
    .expect("config");
    let mut checked = 0;
    for t in suite() {
        let name = t.name.as_str();
        let pick = [
            "Co", "LB", "MP+rel", "MP+fence", "MP+addr", "MP+data", "S+", "R+",
        ];
        if !pick.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let r = run(&t, &held, 600, 3);
        checked += 1;
        if let Some(o) = r.forbidden_observed().into_iter().next() {
            panic!(
                "{} ({}): state {} forbidden by the model with every load held",
                r.name,
                r.file,
                r.state_string(&o.values)
            );
        }
    }
    assert!(checked >= 40, "only {checked} tests picked");
}

/// work_group-scope atomics of different work-groups are not morally strong: run at their SMs' L1s
/// (`stress.l1_atomics_percent`), they lose updates, as the model allows.
#[test]
fn work_group_atomics_at_the_l1_lose_updates_across_work_groups() {
    let stress = cfg("stress");
    for f in [
        "ptx/atom_add_cta_diff.litmus",
        "ptx/atom_add_gpu_cta_diff.litmus",
    ] {
        let r = run(&test_file(f), &stress, 4_000, 1);
        assert!(r.witnesses > 0, "{f}: no lost update (x=1)");
    }
}

fn syntax_error(text: &str) -> String {
    match litmus::parse(text, "t.litmus") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn ptx_syntax_errors_name_file_line_column() {
    let head = "PTX T\n{ x=0; }\n P0@cta 0,gpu 0 ;\n";
    let cases = [
        (
            format!("{head} ld.acquire r0, [x] ;\nexists (P0:r0=0)"),
            "t.litmus:4:2:",
            "scope",
        ),
        (
            // (`st.acquire` loads and is `Undef`, as herd has it: `undefined_accesses_...`.)
            format!("{head} st.acq_rel.gpu [x], 1 ;\nexists (x=0)"),
            "t.litmus:4:5:",
            "cannot be .acq_rel",
        ),
        (
            format!("{head} frob r0, [x] ;\nexists (x=0)"),
            "t.litmus:4:2:",
            "unknown instruction",
        ),
        (
            format!("{head} ld.weak r0, [x] ;\nexists (P1:r0=0)"),
            "t.litmus:5:9:",
            "no thread P1",
        ),
        (
            format!("{head} ld.weak r0, [x] ;\nexists (P0:r7=0)"),
            "t.litmus:5:12:",
            "no register r7",
        ),
        (
            format!("{head} ld.weak r0, [x]\nexists (x=0)"),
            "t.litmus:5:",
            "`;`",
        ),
        (
            format!("{head} bne r0, 1, NOWHERE ;\nexists (x=0)"),
            "t.litmus:4:2:",
            "unknown label",
        ),
        (
            "PTX T\n{ x=0 }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.weak r0, [x] ;\nexists (x=0)"
                .to_string(),
            "t.litmus:4:",
            "columns",
        ),
        (
            "SPARC T\n{ x=0; }\n".to_string(),
            "t.litmus:1:1:",
            "unknown architecture",
        ),
    ];
    for (text, at, what) in cases {
        let e = syntax_error(&text);
        assert!(
            e.starts_with(at) && e.contains(what),
            "expected {at} ... {what}, got: {e}\n{text}"
        );
    }
}

#[test]
fn opencl_syntax_errors_name_file_line_column() {
    let head = "OpenCL T\n{ x=0; }\nP0@wg 0, dev 0 (global atomic_int* x) {\n";
    // A store written acquire loads, as herd reads it: the test is undefined (C11 7.17.7.1p2), at
    // the order's place.
    let t = litmus::parse(
        &format!("{head}  atomic_store_explicit(x, 1, memory_order_acquire);\n}}\nexists (x=0)"),
        "t.litmus",
    )
    .expect("loads");
    let u = &t.threads[0].undefined;
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!((u[0].0.line, u[0].0.col), (4, 31));
    assert!(u[0].1.contains("a store written acquire"), "{}", u[0].1);
    let cases = [
        (
            format!("{head}  int r = atomic_load_explicit(x, memory_order_relaxed, memory_scope_planet);\n}}\nexists (x=0)"),
            "t.litmus:4:57:",
            "not a memory scope",
        ),
        (format!("{head}  int r = frob(x);\n}}\nexists (x=0)"), "t.litmus:4:11:", "unknown function"),
        (format!("{head}  int a[2];\n}}\nexists (x=0)"), "t.litmus:4:7:", "not supported"),
        (format!("{head}  int r = *y;\n}}\nexists (x=0)"), "t.litmus:4:12:", "unknown location y"),
        (format!("{head}  int r = *x\n}}\nexists (x=0)"), "t.litmus:5:1:", "`;`"),
        (format!("{head}  int r = *x;\n}}\nexists (0:q=1)"), "t.litmus:6:11:", "no register q"),
    ];
    for (text, at, what) in cases {
        let e = syntax_error(&text);
        assert!(
            e.starts_with(at) && e.contains(what),
            "expected {at} ... {what}, got: {e}\n{text}"
        );
    }
}

#[test]
fn parallel_runs_equal_serial_runs() {
    let stress = cfg("stress");
    for f in [
        "ptx/mp_relaxed_gpu.litmus",
        "ptx/iriw_relaxed.litmus",
        "chapter/acq_rel_chain.litmus",
    ] {
        let t = test_file(f);
        let mut opts = LitmusOptions {
            iterations: 3000,
            seed: 11,
            ..LitmusOptions::default()
        };
        let par = litmus::run(&t, &stress, &opts).expect("runs");
        opts.parallel = false;
        let ser = litmus::run(&t, &stress, &opts).expect("runs");
        assert_eq!(par.outcomes, ser.outcomes, "{f}");
        assert_eq!(par.prop_true, ser.prop_true, "{f}");
        opts.seed = 12;
        let other = litmus::run(&t, &stress, &opts).expect("runs");
        assert_eq!(other.iterations, 3000);
    }
}

fn gpumemsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-litmus-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn json_report_has_the_documented_schema() {
    let dir = out_dir("json");
    let json = dir.join("out.json");
    let st = gpumemsim()
        .args(["litmus", "--config"])
        .arg(root().join("configs/tiny.toml"))
        .arg(root().join("workloads/litmus/ptx/mp_relaxed_gpu.litmus"))
        .arg(root().join("workloads/litmus/ptx/sb_fence_sc_gpu.litmus"))
        .args(["--iterations", "500", "--brief", "--json"])
        .arg(&json)
        .status()
        .expect("runs");
    assert!(st.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("written")).expect("json");
    let tests = v.as_array().expect("an array, one object per test");
    assert_eq!(tests.len(), 2);
    for t in tests {
        for key in [
            "name",
            "file",
            "iterations",
            "quantifier",
            "prop_true",
            "outcomes",
            "condition",
            "witnesses",
            "validated",
            "expectation",
            "check",
            "config",
            "seed",
            "races",
        ] {
            assert!(t.get(key).is_some(), "no `{key}` in {t}");
        }
        assert_eq!(t["iterations"], 500);
        assert_eq!(t["quantifier"], "exists");
        let outcomes = t["outcomes"].as_array().expect("outcomes array");
        let total: u64 = outcomes
            .iter()
            .map(|o| {
                assert!(o["state"].as_str().expect("state string").contains('='));
                o["count"].as_u64().expect("count")
            })
            .sum();
        assert_eq!(total, 500, "counts add up to the iterations");
    }
    assert_eq!(tests[1]["name"], "SB+fence.sc.gpu");
    assert_eq!(tests[1]["prop_true"], 0);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn check_fails_on_a_forbidden_witness_and_on_a_missing_required_one() {
    let dir = out_dir("check");
    let expect = dir.join("expect.txt");
    let mp = root().join("workloads/litmus/ptx/mp_weak.litmus");
    let coww = root().join("workloads/litmus/ptx/coww.litmus");
    let run_check = |args: &[&Path]| {
        let mut c = gpumemsim();
        c.args([
            "litmus",
            "--check",
            "--brief",
            "--iterations",
            "2000",
            "--config",
        ])
        .arg(root().join("configs/stress.toml"));
        for a in args {
            c.arg(a);
        }
        c.output().expect("runs")
    };
    // As declared: MP's witness is allowed, CoWW's forbidden and absent.
    let o = run_check(&[&mp, &coww]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // MP declared forbidden: its witness appears, so --check fails.
    std::fs::write(&expect, "# test expectations\nMP forbidden\n").expect("write");
    let o = run_check(&[&mp, Path::new("--expect"), &expect]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("FORBIDDEN OBSERVED: MP"));
    // CoWW's (impossible) witness declared required: never appears, so --check fails.
    std::fs::write(&expect, "CoWW allowed required\n").expect("write");
    let o = run_check(&[&coww, Path::new("--expect"), &expect]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("REQUIRED MISSING:   CoWW"));
    // A malformed expectations file names its line and column.
    std::fs::write(&expect, "MP allowed\nSB sometimes\n").expect("write");
    let o = run_check(&[&mp, Path::new("--expect"), &expect]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("expect.txt:2:4:") && err.contains("sometimes"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).ok();
}

fn races(rel: &str) -> Vec<machine::RaceReport> {
    let t = test_file(rel);
    let opts = LitmusOptions {
        iterations: 512,
        seed: 3,
        races: true,
        ..LitmusOptions::default()
    };
    litmus::run(&t, &cfg("tiny"), &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .races
}

#[test]
fn litmus_races_are_reported_with_both_instructions_and_threads() {
    // Release/acquire at work_group scope between different work-groups: a scope race on the flag.
    for rel in [
        "opencl/mp_rel_acq_wg_diff.litmus",
        "ptx/mp_rel_acq_cta_diff.litmus",
    ] {
        let r = races(rel);
        assert!(r.iter().any(|x| x.kind == RaceKind::Scope), "{rel}: {r:?}");
        assert!(
            r.iter().all(|x| x.kind == RaceKind::Scope),
            "{rel}: all accesses are atomic: {r:?}"
        );
        let x = &r[0];
        assert!(x.first.location.contains(rel) && x.second.location.contains(rel));
        assert_eq!(
            [x.first.name.as_deref(), x.second.name.as_deref()],
            [Some("P0"), Some("P1")]
        );
    }
    // Weak accesses without synchronisation: data races.
    let r = races("ptx/mp_weak.litmus");
    assert!(
        !r.is_empty() && r.iter().all(|x| x.kind == RaceKind::Data),
        "{r:?}"
    );
    // Race-free tests: atomics that are morally strong, or data ordered by synchronisation.
    for rel in [
        "ptx/mp_relaxed_gpu.litmus",
        "ptx/mp_rel_acq_gpu_relaxed_x.litmus",
        "ptx/mp_rel_acq_cta_same.litmus",
        "ptx/mp_fence_acqrel_gpu.litmus",
        "ptx/mp_bar_sync.litmus",
        "ptx/latch_ptx.litmus",
        "ptx/lock_spin.litmus",
        "ptx/atom_add_two.litmus",
        "ptx/sb_fence_sc_gpu.litmus",
        "opencl/mp_plain_guarded.litmus",
        "opencl/mp_barrier.litmus",
        "opencl/cas_lock.litmus",
        "opencl/mp_fences.litmus",
        "chapter/acq_rel_chain.litmus",
        "chapter/device_latch_mp.litmus",
        "chapter/seq_cst_after.litmus",
    ] {
        let r = races(rel);
        assert!(r.is_empty(), "{rel} is race-free, reported: {r:?}");
    }
}

#[test]
fn kernel_workload_races_match_the_reference_chapters() {
    let tiny = cfg("tiny");
    let load = |name: &str, params: &[(&str, i64)]| {
        let params: Vec<(String, i64)> = params.iter().map(|&(n, v)| (n.to_string(), v)).collect();
        gpumemsim::frontend::load(&root().join(format!("workloads/{name}.kern")), &params)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let opts = RunOptions {
        races: true,
        ..RunOptions::default()
    };
    let lost = load("race_counter", &[("N", 512), ("M", 32)]);
    let r = machine::run(&tiny, &lost, &opts).expect("runs");
    assert!(
        !r.races.is_empty() && r.races.iter().all(|x| x.kind == RaceKind::Data),
        "the lost-update counter races: {:?}",
        r.races
    );
    assert!(r.races.iter().any(|x| x.first.thread != x.second.thread));
    for (name, params) in [
        ("race_counter_atomic", &[("N", 512), ("M", 32)][..]),
        ("race_counter_barrier", &[("N", 64), ("M", 8)][..]),
        ("histogram_global", &[("N", 1024), ("B", 32)][..]),
        (
            "histogram_local",
            &[("N", 1024), ("B", 32), ("GROUPS", 4)][..],
        ),
        ("reduce_atomic", &[("N", 1000), ("G", 64)][..]),
        ("device_latch", &[("GROUPS", 8), ("G", 32)][..]),
        ("spin_lock", &[("T", 48), ("G", 16)][..]),
    ] {
        let wl = load(name, params);
        let r = machine::run(&tiny, &wl, &opts).expect("runs");
        assert!(
            r.races.is_empty(),
            "{name} is race-free, reported: {:?}",
            r.races
        );
    }
    // Detection off: nothing recorded.
    let r = machine::run(&tiny, &lost, &RunOptions::default()).expect("runs");
    assert!(r.races.is_empty());
}

#[test]
fn expectations_mark_witnesses_of_the_condition() {
    // forall: the witness is a state where the proposition fails.
    let t = test_file("chapter/seq_cst_after.litmus");
    assert_eq!(t.expectation.map(|e| e.expect), Some(Expect::Forbidden));
    let r = run(&t, &cfg("tiny"), 200, 1);
    assert!(r.validated() && r.prop_true == 200 && r.witnesses == 0);
    // exists: the witness is a state where it holds.
    let r = run(
        &test_file("ptx/sb_relaxed_gpu.litmus"),
        &cfg("stress"),
        2000,
        1,
    );
    assert!(r.validated() && r.witnesses == r.prop_true && r.witnesses > 0);
}

/// work_group-scope atomics run at the L1 (`stress.l1_atomics_percent = 100`) keep their updates inside
/// one work-group: an L1 atomic's result is an overlay on a fill of its line still in flight, as a
/// store's bytes are. Without that, installing the older fill undid the result and the next atomic on
/// the line lost its update (`Atomicity+add.cta`, same CTA: x = 1 with two of seeds 1–6 at 20,000
/// iterations; once in 10^5 iterations on the shipped stress config).
#[test]
fn l1_atomics_keep_their_result_over_a_fill_in_flight() {
    let all_l1 = config::load(
        Some(&root().join("configs/stress.toml")),
        &["stress.l1_atomics_percent=100".into()],
    )
    .expect("config");
    let t = test_file("ptx/atom_add_cta_same.litmus");
    for seed in 1..=6 {
        let r = run(&t, &all_l1, 20_000, seed);
        assert!(
            r.forbidden_observed().is_empty(),
            "seed {seed}: an update was lost: {:?}",
            r.forbidden_observed()
                .iter()
                .map(|o| r.state_string(&o.values))
                .collect::<Vec<_>>()
        );
    }
}
