//! `litmus --explain` (issue 18 items 3 and 5): the explanation of an MP witness on the stress config
//! can name a stale L1 line, of an SB witness the store buffer; the explained iteration ends in the
//! witness (or the `--state` given), its loads' values agree with the provenance derived for them;
//! a bad `--state` is a located error; recording provenance does not change a run.

use gpumemsim::config;
use gpumemsim::machine::{self, RunOptions};
use std::path::Path;
use std::process::{Command, Output};

fn gpumemsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `--explain` of a PTX test on the stress config with `seed`; the output (status checked: 0).
fn explain(test: &str, seed: u64, extra: &[&str]) -> String {
    let path = format!("workloads/litmus/ptx/{test}.litmus");
    let seed = seed.to_string();
    let mut args = vec![
        "litmus",
        &path,
        "--config",
        "configs/stress.toml",
        "--iterations",
        "3000",
        "--seed",
        &seed,
        "--explain",
    ];
    args.extend_from_slice(extra);
    let out = gpumemsim(&args);
    let s = text(&out.stdout);
    assert!(
        out.status.success(),
        "{test} seed {seed}: {s}{}",
        text(&out.stderr)
    );
    s
}

/// The `final state` line's `NAME=VALUE;` items.
fn final_state(s: &str) -> Vec<String> {
    let line = s
        .lines()
        .find(|l| l.starts_with("final state"))
        .expect("a final state line");
    let body = line["final state".len()..]
        .split("(the recorded")
        .next()
        .unwrap();
    body.split_whitespace().map(|x| x.to_string()).collect()
}

/// What every explanation must hold: the final state is `want`, the recorded re-run repeated it,
/// every load's source agrees with the value it returned, and the "why" has a stale read and a
/// reordering.
fn check_explanation(s: &str, want: &[&str]) {
    assert_eq!(final_state(s), want, "{s}");
    assert!(s.contains("ends in the same state"), "{s}");
    assert!(!s.contains("provenance disagrees"), "{s}");
    assert!(!s.contains("unrecorded"), "{s}");
    assert!(
        s.lines().any(|l| l.trim_start().starts_with("stale: ")),
        "{s}"
    );
    assert!(
        s.lines().any(|l| l.trim_start().starts_with("needed: ")),
        "{s}"
    );
}

#[test]
fn mp_witness_explanations_end_in_the_witness_and_one_names_a_stale_l1_line() {
    let mut stale_l1 = 0;
    for seed in 1..=6 {
        let s = explain("mp_weak", seed, &[]);
        check_explanation(&s, &["P1:r0=1;", "P1:r1=0;"]);
        // The load of y read P0's store; the load of x the initial value.
        assert!(
            s.contains("load  y -> 1") && s.contains("its value: P0's store"),
            "{s}"
        );
        assert!(
            s.contains("load  x -> 0") && s.contains("its value: the initial value"),
            "{s}"
        );
        if s.lines()
            .any(|l| l.contains("stale: P1's load of x") && l.contains("a stale L1 line"))
        {
            stale_l1 += 1;
            assert!(s.contains("load→load reordering in P1"), "{s}");
        }
    }
    assert!(
        stale_l1 > 0,
        "no MP witness of seeds 1..=6 was explained by a stale L1 line"
    );
}

#[test]
fn sb_witness_explanations_end_in_the_witness_and_one_names_the_store_buffer() {
    let mut in_buffer = 0;
    for seed in 1..=4 {
        let s = explain("sb_weak_diff", seed, &[]);
        check_explanation(&s, &["P0:r0=0;", "P1:r0=0;"]);
        assert!(s.contains("store→load reordering in P"), "{s}");
        if s.contains("was still in its store buffer (drained at cycle") {
            in_buffer += 1;
        }
    }
    assert!(
        in_buffer > 0,
        "no SB witness of seeds 1..=4 named the store buffer"
    );
}

#[test]
fn explain_state_takes_the_tests_syntax_and_herds() {
    // A state that is not the witness: the load of y saw the flag and x too.
    for state in ["P1:r0=1; P1:r1=1", "1:r0=1 /\\ 1:r1=1"] {
        let s = explain("mp_weak", 1, &["--state", state]);
        assert_eq!(final_state(&s), ["P1:r0=1;", "P1:r1=1;"], "{s}");
        assert!(s.contains("the state `"), "{s}");
        assert!(!s.contains("provenance disagrees"), "{s}");
    }
}

#[test]
fn bad_explain_state_is_a_located_error() {
    let cases: [(&str, &str); 5] = [
        ("P1:r0=1; P1:r9=0", "column 10: `P1:r9` is not observed"),
        ("P1:r0", "column 1: expected NAME=VALUE"),
        ("P1:r0=one", "column 7: `one` is not an integer"),
        ("7:r0=1", "column 1: thread 7 does not exist"),
        ("P1:r0=1; P1:r0=0", "column 10: `P1:r0` is given twice"),
    ];
    for (state, want) in cases {
        let out = gpumemsim(&[
            "litmus",
            "workloads/litmus/ptx/mp_weak.litmus",
            "--iterations",
            "10",
            "--explain",
            "--state",
            state,
        ]);
        assert_eq!(out.status.code(), Some(1), "{state}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("--state \"{state}\"")),
            "{state}: {err}"
        );
        assert!(err.contains(want), "{state}: {err}");
    }
    // --state without --explain is a usage error.
    let out = gpumemsim(&[
        "litmus",
        "workloads/litmus/ptx/mp_weak.litmus",
        "--state",
        "P1:r0=1",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn explain_says_when_no_iteration_ends_in_the_witness() {
    // Release/acquire forbids the MP witness.
    let out = gpumemsim(&[
        "litmus",
        "workloads/litmus/ptx/mp_rel_acq_gpu.litmus",
        "--config",
        "configs/stress.toml",
        "--iterations",
        "200",
        "--explain",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(
        s.contains("no iteration of 200 (seed 0) ended in the witness"),
        "{s}"
    );
}

#[test]
fn recording_provenance_does_not_change_a_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = config::load(Some(&root.join("configs/stress.toml")), &[]).expect("config");
    let wl = gpumemsim::frontend::load(&root.join("workloads/histogram_local.kern"), &[])
        .expect("workload");
    let run = |provenance| {
        machine::run(
            &cfg,
            &wl,
            &RunOptions {
                seed: 3,
                provenance,
                ..Default::default()
            },
        )
        .expect("runs")
    };
    let (off, on) = (run(false), run(true));
    assert!(off.provenance.is_none());
    assert!(on.provenance.as_ref().is_some_and(|e| !e.is_empty()));
    assert_eq!(off.cycles, on.cycles);
    assert_eq!(off.buffers, on.buffers);
    assert_eq!(off.stats.rows, on.stats.rows);
}
