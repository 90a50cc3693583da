//! Catalogue shapes that load (issue 47 item 5), each checked on the oracle and the machine: herd's
//! `filter` clause, a name local in one OpenCL thread and global in another, a work-group-local
//! counter used by threads of two work-groups, and scope trees with extra parentheses around a list
//! of nodes.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::litmus::{self, LitmusOptions, LitmusResult, LitmusTest};
use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn stress() -> GpuConfig {
    config::load(Some(&root().join("configs/stress.toml")), &[]).expect("stress preset")
}

fn suite_file(rel: &str) -> LitmusTest {
    litmus::load(&root().join("workloads/litmus").join(rel)).unwrap_or_else(|e| panic!("{e}"))
}

fn run(t: &LitmusTest, iterations: u64) -> LitmusResult {
    let opts = LitmusOptions {
        iterations,
        seed: 5,
        ..LitmusOptions::default()
    };
    litmus::run(t, &stress(), &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// The oracle's allowed states, as the run's `name=value;` strings.
fn allowed(r: &LitmusResult) -> BTreeSet<String> {
    let d = r.model.as_ref().expect("decided");
    d.allowed.iter().map(|s| r.state_string(s)).collect()
}

fn observed(r: &LitmusResult) -> BTreeSet<String> {
    r.outcomes
        .iter()
        .map(|o| r.state_string(&o.values))
        .collect()
}

fn error(text: &str) -> String {
    match litmus::parse(text, "t.litmus") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn filter_discards_states_before_the_condition() {
    let t = suite_file("ptx/mp_filter_forall.litmus");
    let r = run(&t, 1000);
    // Only the states with P1:r0=1 are kept, by the oracle and by the run.
    assert_eq!(
        allowed(&r),
        BTreeSet::from(["P1:r0=1; P1:r1=2;".to_string()])
    );
    assert!(observed(&r).is_subset(&allowed(&r)), "{:?}", observed(&r));
    let kept: u64 = r.outcomes.iter().map(|o| o.count).sum();
    assert_eq!(kept + r.filtered + r.no_final_state, r.iterations);
    assert!(
        r.filtered > 0,
        "stress shows P1 reading the flag before it is set"
    );
    assert_eq!(r.expectation_agrees, Some(true));
    // Without the filter (whose variable P1:r0 is then not observed) the stale x is a witness of
    // the same forall.
    let text = std::fs::read_to_string(root().join("workloads/litmus/ptx/mp_filter_forall.litmus"))
        .expect("read");
    let unfiltered =
        litmus::parse(&text.replace("filter (1:r0=1)\n", ""), "t.litmus").expect("parses");
    let d = litmus::run(
        &unfiltered,
        &stress(),
        &LitmusOptions {
            iterations: 1,
            ..Default::default()
        },
    )
    .expect("runs");
    assert!(allowed(&d).contains("P1:r1=0;"), "{:?}", allowed(&d));
    // The filter's variables are observed like the condition's; a filter after the condition is an
    // error at its position.
    let sb = suite_file("opencl/sb_filter_one_side.litmus");
    assert_eq!(sb.condition.observed.len(), 2);
    let e = error("PTX F\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists (0:r0=0)\nfilter (0:r0=0)");
    assert!(
        e.starts_with("t.litmus:6:1:") && e.contains("before the final condition"),
        "{e}"
    );
}

#[test]
fn a_name_local_in_one_thread_and_global_in_another_is_two_objects() {
    let t = suite_file("opencl/mp_local_here_global_there.litmus");
    let names: Vec<&str> = t.locations.iter().map(|l| l.name.as_str()).collect();
    assert!(
        names.contains(&"x") && names.contains(&"x (global)"),
        "{names:?}"
    );
    let r = run(&t, 400);
    // P1's global x is never written; the final x is P0's (local) object.
    assert_eq!(allowed(&r), BTreeSet::from(["P1:r1=0; x=3;".to_string()]));
    assert_eq!(observed(&r), allowed(&r));
    // The same name twice in one space is still one object (OpenCL, both global).
    let one = litmus::parse(
        "OpenCL G\n{ x=0; }\nP0@wg 0, dev 0 (global atomic_int* x) {\n  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);\n}\nP1@wg 1, dev 0 (global atomic_int* x) {\n  int r0 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device);\n}\nexists (1:r0=1)",
        "t.litmus",
    )
    .expect("parses");
    assert_eq!(one.locations.len(), 1);
}

#[test]
fn a_local_counter_has_a_copy_per_work_group() {
    let r = run(&suite_file("opencl/local_counter_three_items.litmus"), 400);
    let want = BTreeSet::from([
        "P2:r0=5; c=7; P0:r0=5; P1:r0=6;".to_string(),
        "P2:r0=5; c=7; P0:r0=6; P1:r0=5;".to_string(),
    ]);
    assert_eq!(allowed(&r), want);
    assert!(
        observed(&r).is_subset(&want) && !observed(&r).is_empty(),
        "{:?}",
        observed(&r)
    );
}

#[test]
fn parentheses_around_a_list_of_nodes_group_them() {
    let t = suite_file("ptx/mp_fence_cta_grouped_tree.litmus");
    let cta: Vec<u32> = t.threads.iter().map(|t| t.cta).collect();
    assert!(cta[0] == cta[1] && cta[1] != cta[2], "{cta:?}");
    let r = run(&t, 400);
    assert_eq!(r.expectation_agrees, Some(true));
    assert_eq!(r.witnesses, 0);
    // A level inside a group still nests below its parent's level.
    let e = error(
        "PTX T\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nscopes: (cta ((device P0)))\nexists (0:r0=0)",
    );
    assert!(
        e.starts_with("t.litmus:5:14:") && e.contains("a device level inside a cta level"),
        "{e}"
    );
}
