//! The scoped C11 (OpenCL 2.0) model's verdicts on the classic shapes, against the published ones:
//! Batty, Donaldson, Wickerson, POPL 2016 (§2 the C11 SC examples, §6 OpenCL: scopes, inclusion,
//! heterogeneous races, barriers) and Lahav et al., RC11, PLDI 2017 (§2: the examples that motivate
//! the repaired seq_cst). Cited by section.

use super::ptx_tests::{run, witness};
use super::RaceKind;

const REL: &str = "memory_order_release";
const ACQ: &str = "memory_order_acquire";
const RLX: &str = "memory_order_relaxed";
const SC: &str = "memory_order_seq_cst";

fn store(l: &str, v: u32, o: &str, s: &str) -> String {
    format!("atomic_store_explicit({l}, {v}, {o}, memory_scope_{s});")
}
fn load(r: &str, l: &str, o: &str, s: &str) -> String {
    format!("int {r} = atomic_load_explicit({l}, {o}, memory_scope_{s});")
}

/// A test from thread bodies; threads `Pi` in work-group `groups[i]`.
fn cl(groups: &[u32], bodies: &[String], cond: &str) -> String {
    let mut s = String::from("OpenCL T\n{ x=0; y=0; }\n");
    for (i, (g, b)) in groups.iter().zip(bodies).enumerate() {
        s += &format!(
            "P{i}@wg {g}, dev 0 (global atomic_int* x, global atomic_int* y) {{\n{b}\n}}\n"
        );
    }
    s + cond + "\n"
}

fn mp(wo: &str, ro: &str, s: &str, groups: &[u32]) -> String {
    cl(
        groups,
        &[
            format!("*x = 1; {}", store("y", 1, wo, s)),
            format!(
                "{} int r1 = 0; if (r0 == 1) {{ r1 = *x; }} else {{ r1 = 1; }}",
                load("r0", "y", ro, s)
            ),
        ],
        "exists (1:r0=1 /\\ 1:r1=0)",
    )
}

#[test]
fn message_passing_with_release_acquire() {
    // C11 MP: release/acquire synchronise, plain data guarded by the flag is race-free and the
    // stale value is forbidden (POPL'16 §2).
    assert!(!witness(&mp(REL, ACQ, "device", &[0, 1])));
    // Same shape at work_group scope within one work-group: inclusive, forbidden.
    assert!(!witness(&mp(REL, ACQ, "work_group", &[0, 0])));
    // Relaxed flag: the guarded plain read races with the write (undefined).
    let (t, d) = run(&mp(RLX, RLX, "device", &[0, 1]));
    assert_eq!(
        d.race.as_ref().map(|r| r.kind),
        Some(RaceKind::Data),
        "{}",
        t.name
    );
    // work_group scope across work-groups: the flag accesses are not inclusive, a heterogeneous
    // (scope) race (POPL'16 §6, "inclusive scopes").
    let (_, d) = run(&mp(REL, ACQ, "work_group", &[0, 1]));
    assert_eq!(d.race.as_ref().map(|r| r.kind), Some(RaceKind::Scope));
}

fn sb(o_w: &str, o_r: &str, fence: &str) -> String {
    cl(
        &[0, 1],
        &[
            format!(
                "{} {fence} {}",
                store("x", 1, o_w, "device"),
                load("r0", "y", o_r, "device")
            ),
            format!(
                "{} {fence} {}",
                store("y", 1, o_w, "device"),
                load("r0", "x", o_r, "device")
            ),
        ],
        "exists (0:r0=0 /\\ 1:r0=0)",
    )
}

#[test]
fn store_buffering_is_forbidden_only_with_seq_cst() {
    // RC11 §2 (SB): seq_cst accesses forbid both loads reading 0; release/acquire allow it; seq_cst
    // fences between relaxed accesses forbid it (RC11 §3, psc_F).
    assert!(!witness(&sb(SC, SC, "")));
    assert!(witness(&sb(REL, ACQ, "")));
    assert!(witness(&sb(RLX, RLX, "")));
    let f =
        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);";
    assert!(!witness(&sb(RLX, RLX, f)));
    let f =
        "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);";
    assert!(witness(&sb(RLX, RLX, f)));
}

#[test]
fn seq_cst_at_work_group_scope_across_groups_races() {
    // POPL'16 §6: SC atomics whose scopes do not include each other are a heterogeneous race.
    let src = cl(
        &[0, 1],
        &[
            format!(
                "{} {}",
                store("x", 1, SC, "work_group"),
                load("r0", "y", SC, "work_group")
            ),
            format!(
                "{} {}",
                store("y", 1, SC, "work_group"),
                load("r0", "x", SC, "work_group")
            ),
        ],
        "exists (0:r0=0 /\\ 1:r0=0)",
    );
    let (_, d) = run(&src);
    assert_eq!(d.race.map(|r| r.kind), Some(RaceKind::Scope));
}

#[test]
fn iriw_and_rwc() {
    // IRIW with seq_cst loads and stores is forbidden, with acquire loads allowed (POPL'16 §2).
    let iriw = |w: &str, r: &str| {
        let src = format!(
            "OpenCL IRIW\n{{ x=0; y=0; }}\n\
             P0@wg 0, dev 0 (global atomic_int* x) {{ {} }}\n\
             P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* y) {{ {} {} }}\n\
             P2@wg 2, dev 0 (global atomic_int* y) {{ {} }}\n\
             P3@wg 3, dev 0 (global atomic_int* x, global atomic_int* y) {{ {} {} }}\n\
             exists (1:r0=1 /\\ 1:r1=0 /\\ 3:r0=1 /\\ 3:r1=0)\n",
            store("x", 1, w, "device"),
            load("r0", "x", r, "device"),
            load("r1", "y", r, "device"),
            store("y", 1, w, "device"),
            load("r0", "y", r, "device"),
            load("r1", "x", r, "device"),
        );
        witness(&src)
    };
    assert!(!iriw(SC, SC));
    assert!(iriw(REL, ACQ));
}

#[test]
fn load_buffering_with_relaxed_atomics_is_allowed() {
    // C11 and OpenCL 2.0 allow LB with relaxed atomics (no out-of-thin-air with dependencies);
    // RC11's stronger po ∪ rf acyclicity is not adopted (module header, deviation 1).
    let lb = cl(
        &[0, 1],
        &[
            format!(
                "{} {}",
                load("r0", "x", RLX, "device"),
                store("y", 1, RLX, "device")
            ),
            format!(
                "{} {}",
                load("r0", "y", RLX, "device"),
                store("x", 1, RLX, "device")
            ),
        ],
        "exists (0:r0=1 /\\ 1:r0=1)",
    );
    assert!(witness(&lb));
}

#[test]
fn coherence_and_atomicity() {
    // CoRR with relaxed atomics is forbidden (C11 coherence, RC11 §3: irreflexive(hb ; eco?)).
    let corr = cl(
        &[0, 1],
        &[
            store("x", 1, RLX, "device"),
            format!(
                "{} {}",
                load("r0", "x", RLX, "device"),
                load("r1", "x", RLX, "device")
            ),
        ],
        "exists (1:r0=1 /\\ 1:r1=0)",
    );
    assert!(!witness(&corr));
    // Two fetch_adds always sum (RMW atomicity).
    let add = "OpenCL add\n{ x=0; }\n\
        P0@wg 0, dev 0 (global atomic_int* x) { atomic_fetch_add_explicit(x, 1, memory_order_relaxed, memory_scope_device); }\n\
        P1@wg 1, dev 0 (global atomic_int* x) { atomic_fetch_add_explicit(x, 1, memory_order_relaxed, memory_scope_device); }\n\
        exists (x=1)\n";
    assert!(!witness(add));
}

#[test]
fn work_group_barrier_orders_plain_accesses_in_one_group() {
    // POPL'16 §6: a work-group barrier synchronises the work-items of one group for the regions in
    // its flags; with the local flag only, global plain accesses race.
    let mk = |flags: &str| {
        format!(
            "OpenCL MP+bar\n{{ x=0; }}\n\
             P0@wg 0, dev 0 (global int* x) {{ *x = 1; work_group_barrier({flags}); }}\n\
             P1@wg 0, dev 0 (global int* x) {{ work_group_barrier({flags}); int r0 = *x; }}\n\
             exists (1:r0=0)\n"
        )
    };
    assert!(!witness(&mk("CLK_GLOBAL_MEM_FENCE")));
    let (_, d) = run(&mk("CLK_LOCAL_MEM_FENCE"));
    assert_eq!(d.race.map(|r| r.kind), Some(RaceKind::Data));
    // A barrier only one work-item reaches is barrier divergence.
    let div = "OpenCL div\n{ x=0; }\n\
        P0@wg 0, dev 0 (global atomic_int* x) { int r0 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device); if (r0 == 0) { work_group_barrier(CLK_GLOBAL_MEM_FENCE); } }\n\
        P1@wg 0, dev 0 (global atomic_int* x) { atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device); work_group_barrier(CLK_GLOBAL_MEM_FENCE); }\n\
        exists (0:r0=0)\n";
    let (_, d) = run(div);
    assert_eq!(d.race.map(|r| r.kind), Some(RaceKind::BarrierDivergence));
}

#[test]
fn a_cas_lock_protects_a_plain_counter() {
    // The spin loop is reduced (no bound hit) and the critical sections are race-free.
    let src = "OpenCL lock\n{ l=0; d=0; }\n\
        P0@wg 0, dev 0 (global atomic_int* l, global int* d) { int e = 0; while (!atomic_compare_exchange_strong_explicit(l, &e, 1, memory_order_acquire, memory_order_relaxed, memory_scope_device)) { e = 0; } int r0 = *d; *d = r0 + 1; atomic_store_explicit(l, 0, memory_order_release, memory_scope_device); }\n\
        P1@wg 1, dev 0 (global atomic_int* l, global int* d) { int e = 0; while (!atomic_compare_exchange_strong_explicit(l, &e, 1, memory_order_acquire, memory_order_relaxed, memory_scope_device)) { e = 0; } int r0 = *d; *d = r0 + 1; atomic_store_explicit(l, 0, memory_order_release, memory_scope_device); }\n\
        exists (d != 2)\n";
    let (t, d) = run(src);
    assert!(d.race.is_none(), "{:?}", d.race);
    assert!(!d.bound_hit);
    assert_eq!(d.witness_allowed(&t.condition), Some(false));
}
