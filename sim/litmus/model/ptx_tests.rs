//! The PTX model's verdicts on the classic shapes, against the published ones: the litmus tests of
//! the PTX ISA's "Memory Consistency Model" chapter (§"Axioms", ISA 6.0 and later; cited by
//! subsection) and of Lustig, Sahasrabuddhe, Giroux, ASPLOS 2019 (§3, §4: the scoped tests the paper
//! runs through its Alloy model; cited by section).

use super::{decide, Decision, ModelOptions};
use crate::parse;
use crate::LitmusTest;

pub fn run(src: &str) -> (LitmusTest, Decision) {
    let t = parse(src, "test.litmus").unwrap_or_else(|e| panic!("{e}"));
    let d = decide(&t, &ModelOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    (t, d)
}

/// Is the condition's witness allowed?
pub fn witness(src: &str) -> bool {
    let (t, d) = run(src);
    assert!(!d.bound_hit, "{}: bound hit", t.name);
    d.witness_allowed(&t.condition).expect("decided")
}

fn ptx(threads: &[&str], rows: &[&[&str]], cond: &str) -> String {
    let mut s = String::from("PTX T\n{ x=0; y=0; z=0; }\n");
    s += &threads.join(" | ");
    s += " ;\n";
    for r in rows {
        s += &r.join(" | ");
        s += " ;\n";
    }
    s + cond + "\n"
}

const DIFF2: &[&str] = &["P0@cta 0,gpu 0", "P1@cta 1,gpu 0"];
const SAME2: &[&str] = &["P0@cta 0,gpu 0", "P1@cta 0,gpu 0"];

fn mp(w: &str, r: &str, threads: &[&str]) -> bool {
    let (wd, wf) = (format!("st.{w} [x], 1"), format!("st.{w} [y], 1"));
    let (rf, rd) = (format!("ld.{r} r0, [y]"), format!("ld.{r} r1, [x]"));
    witness(&ptx(
        threads,
        &[&[&wd, &rf], &[&wf, &rd]],
        "exists (P1:r0=1 /\\ P1:r1=0)",
    ))
}

#[test]
fn message_passing() {
    // ISA §"Causality", litmus test "Message Passing": weak data, release/acquire flag at sys
    // scope: the reader that sees the flag sees the data.
    let src = ptx(
        DIFF2,
        &[
            &["st.weak [x], 1", "ld.acquire.sys r0, [y]"],
            &["st.release.sys [y], 1", "ld.weak r1, [x]"],
        ],
        "exists (P1:r0=1 /\\ P1:r1=0)",
    );
    assert!(!witness(&src));
    // Relaxed accesses do not synchronise (ASPLOS'19 §3.2: observation alone is not causality).
    assert!(mp("relaxed.gpu", "relaxed.gpu", DIFF2));
    assert!(mp("weak", "weak", DIFF2));
    // Release/acquire at cta scope across CTAs are not morally strong (ASPLOS'19 §3.1, scopes):
    // no synchronisation; within one CTA they are.
    let rel_acq = |s: &str, th| {
        let src = ptx(
            th,
            &[
                &["st.weak [x], 1", &format!("ld.acquire.{s} r0, [y]")],
                &[&format!("st.release.{s} [y], 1"), "ld.weak r1, [x]"],
            ],
            "exists (P1:r0=1 /\\ P1:r1=0)",
        );
        witness(&src)
    };
    assert!(rel_acq("cta", DIFF2));
    assert!(!rel_acq("cta", SAME2));
    assert!(!rel_acq("gpu", DIFF2));
    // Fences: fence.acq_rel on both sides (release and acquire patterns, ISA §"Release and
    // Acquire Patterns"); one side alone does not.
    let fenced = |f0: &str, f1: &str| {
        let src = ptx(
            DIFF2,
            &[
                &["st.weak [x], 1", "ld.relaxed.gpu r0, [y]"],
                &[f0, f1],
                &["st.relaxed.gpu [y], 1", "ld.weak r1, [x]"],
            ],
            "exists (P1:r0=1 /\\ P1:r1=0)",
        );
        witness(&src)
    };
    assert!(!fenced("fence.acq_rel.gpu", "fence.acq_rel.gpu"));
    assert!(!fenced("fence.sc.gpu", "fence.sc.gpu"));
    assert!(fenced("fence.acq_rel.gpu", ""));
    assert!(fenced("", "fence.acq_rel.gpu"));
    assert!(fenced("fence.acq_rel.cta", "fence.acq_rel.cta"));
}

#[test]
fn store_buffering_needs_fence_sc() {
    // ISA §"Causality", litmus test "Store Buffering": fence.sc between the store and the load in
    // both threads forbids both loads reading 0; fence.acq_rel does not (ASPLOS'19 §3.3).
    let sb = |f: &str| {
        witness(&ptx(
            DIFF2,
            &[
                &["st.relaxed.gpu [x], 1", "st.relaxed.gpu [y], 1"],
                &[f, f],
                &["ld.relaxed.gpu r0, [y]", "ld.relaxed.gpu r0, [x]"],
            ],
            "exists (P0:r0=0 /\\ P1:r0=0)",
        ))
    };
    assert!(sb(""));
    assert!(sb("fence.acq_rel.gpu"));
    assert!(!sb("fence.sc.gpu"));
    assert!(sb("fence.sc.cta"));
}

#[test]
fn iriw_with_fence_sc_is_forbidden() {
    // ISA §"Causality", litmus test "IRIW": with fence.sc between the readers' loads the readers
    // agree on the order of the writes; with acquire loads only they need not (ASPLOS'19 §3.3: PTX
    // is not multi-copy atomic).
    let iriw = |l: &str, f: &str| {
        let src = format!(
            "PTX IRIW\n{{ x=0; y=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;\n\
             st.relaxed.gpu [x], 1 | ld.{l} r0, [x] | st.relaxed.gpu [y], 1 | ld.{l} r0, [y] ;\n\
             | {f} | | {f} ;\n\
             | ld.{l} r1, [y] | | ld.{l} r1, [x] ;\n\
             exists (P1:r0=1 /\\ P1:r1=0 /\\ P3:r0=1 /\\ P3:r1=0)\n"
        );
        witness(&src)
    };
    assert!(iriw("relaxed.gpu", ""));
    assert!(iriw("acquire.gpu", ""));
    assert!(iriw("relaxed.gpu", "fence.acq_rel.gpu"));
    assert!(!iriw("relaxed.gpu", "fence.sc.gpu"));
}

#[test]
fn sc_per_location() {
    // ISA §"Sequential Consistency Per Location", litmus test "CoRR": morally strong reads of one
    // location do not go backwards; weak ones racing with a weak write may (no coherence
    // guarantee without moral strength).
    let corr = |w: &str, r: &str| {
        witness(&ptx(
            DIFF2,
            &[
                &[&format!("st.{w} [x], 1"), &format!("ld.{r} r0, [x]")],
                &["", &format!("ld.{r} r1, [x]")],
            ],
            "exists (P1:r0=1 /\\ P1:r1=0)",
        ))
    };
    assert!(!corr("relaxed.gpu", "relaxed.gpu"));
    assert!(corr("weak", "weak"));
    assert!(corr("relaxed.cta", "relaxed.cta"));
    // CoWW and CoWR within a thread hold for every access (program order is causality order).
    assert!(!witness("PTX CoWW\n{ x=0; }\n P0@cta 0,gpu 0 ;\n st.weak [x], 1 ;\n st.weak [x], 2 ;\nexists (x=1)\n"));
}

#[test]
fn atomicity_needs_moral_strength() {
    // ISA §"Atomicity", Litmus Test 1: two atom.sys.inc end with x == 2; Litmus Test 2: atom.cta
    // and atom.gpu in different CTAs may end with x == 1.
    let inc = |s0: &str, s1: &str| {
        let (t, d) = run(&format!(
            "PTX inc\n{{ x=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n atom.{s0}.inc.u32 r0, [x], 100 | atom.{s1}.inc.u32 r0, [x], 100 ;\nexists (x=1)\n"
        ));
        d.witness_allowed(&t.condition).expect("decided")
    };
    assert!(!inc("sys", "sys"));
    assert!(inc("cta", "gpu"));
}

#[test]
fn no_thin_air() {
    // ISA §"No Thin Air", litmus test "Load Buffering with true dependencies": forbidden; without
    // dependencies load buffering is allowed (ASPLOS'19 §3.4).
    let lb_data = "PTX LB+data\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n\
        ld.relaxed.gpu r0, [x] | ld.relaxed.gpu r0, [y] ;\n st.relaxed.gpu [y], r0 | st.relaxed.gpu [x], r0 ;\n\
        exists (P0:r0=1 /\\ P1:r0=1)\n";
    assert!(!witness(lb_data));
    let lb_ctrl = "PTX LB+ctrl\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n\
        ld.relaxed.gpu r0, [x] | ld.relaxed.gpu r0, [y] ;\n bne r0, 1, L0 | bne r0, 1, L1 ;\n\
        st.relaxed.gpu [y], 1 | st.relaxed.gpu [x], 1 ;\n L0: | L1: ;\nexists (P0:r0=1 /\\ P1:r0=1)\n";
    assert!(!witness(lb_ctrl));
    let lb = "PTX LB\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n\
        ld.relaxed.gpu r0, [x] | ld.relaxed.gpu r0, [y] ;\n st.relaxed.gpu [y], 1 | st.relaxed.gpu [x], 1 ;\n\
        exists (P0:r0=1 /\\ P1:r0=1)\n";
    assert!(witness(lb));
}

#[test]
fn release_sequences_and_cumulativity() {
    // WRC with release/acquire is forbidden, ISA2 with release/acquire chains is forbidden
    // (causality order is transitive through synchronisation, ASPLOS'19 §3.2); without
    // synchronisation both are allowed.
    let wrc = |w: &str, r: &str| {
        witness(&format!(
            "PTX WRC\n{{ x=0; y=0; }}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n\
             st.relaxed.gpu [x], 1 | ld.relaxed.gpu r0, [x] | ld.{r} r0, [y] ;\n\
             | st.{w} [y], 1 | ld.relaxed.gpu r1, [x] ;\n\
             exists (P1:r0=1 /\\ P2:r0=1 /\\ P2:r1=0)\n"
        ))
    };
    assert!(wrc("relaxed.gpu", "relaxed.gpu"));
    assert!(!wrc("release.gpu", "acquire.gpu"));
    // A release sequence through an RMW of another thread still synchronises.
    let rs = "PTX MP+rmw\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n\
        st.weak [x], 1 | atom.relaxed.gpu.add r0, [y], 1 | ld.acquire.gpu r0, [y] ;\n\
        st.release.gpu [y], 1 | | ld.weak r1, [x] ;\n\
        exists (P1:r0=1 /\\ P2:r0=2 /\\ P2:r1=0)\n";
    assert!(!witness(rs));
}

#[test]
fn bar_sync_synchronises_a_cta() {
    // ISA §"Memory synchronization" rule 2: bar.sync operations of one barrier synchronize.
    let src = "PTX MP+bar\n{ x=0; }\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak [x], 1 | bar.sync 0 ;\n\
        bar.sync 0 | ld.weak r0, [x] ;\nexists (P1:r0=0)\n";
    assert!(!witness(src));
}

#[test]
fn spin_loops_need_no_bound() {
    // A spin loop on an acquire load: the redundant iterations are not enumerated, so the result
    // is exact.
    let src =
        "PTX spin\n{ x=0; y=0; }\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n st.weak [x], 1 | L: ;\n\
        st.release.gpu [y], 1 | ld.acquire.gpu r0, [y] ;\n | bne r0, 1, L ;\n | ld.weak r1, [x] ;\n\
        exists (P1:r1=0)\n";
    let (t, d) = run(src);
    assert!(!d.bound_hit);
    assert_eq!(d.witness_allowed(&t.condition), Some(false));
    assert_eq!(d.allowed.len(), 1);
}
