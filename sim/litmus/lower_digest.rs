//! A pin on the simulator's litmus lowering: every litmus test of `workloads/litmus/` lowered to the
//! launch workload of the fixed plan and of two seeded plans, on the default config; the text
//! (`{:#?}` of each workload, with the plan's SMs) hashed. `GPUMEMSIM_LOWERING_DUMP=FILE cargo test
//! sim_lowering_dump -- --ignored` writes the text itself.

use super::lower::{workload, Layout, Plan};
use crate::rng::SplitMix64;
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn litmus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("workloads/litmus is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            litmus_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

/// FNV-1a, 64 bits: stable across toolchains (std's hasher is not promised to be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn dump() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/litmus");
    let mut files = Vec::new();
    litmus_files(&root, &mut files);
    assert!(files.len() > 100, "{} litmus files found", files.len());
    let cfg = crate::config::default_config().expect("the default config");
    let mut out = String::new();
    for f in &files {
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        let test = match super::load(f) {
            Ok(t) => t,
            Err(e) => {
                writeln!(out, "== {name}: not loaded: {e}").unwrap();
                continue;
            }
        };
        let lay = Layout::new(&test, &cfg);
        let blocks = lay.max_blocks.min(3);
        for seed in [None, Some(1), Some(2)] {
            let mut rng = seed.map(SplitMix64::new);
            let plan = Plan::new(&test, &lay, &cfg, blocks, rng.as_mut());
            writeln!(
                out,
                "== {name} {seed:?}\n{:#?}\nsm {:?}",
                workload(&test, &lay, &plan),
                plan.group_sm
            )
            .unwrap();
        }
    }
    // The checkout's place must not change the digest: files are named from the repository root.
    out.replace(&format!("{}/", root.display()), "workloads/litmus/")
}

#[test]
#[ignore = "writes the lowering text to $GPUMEMSIM_LOWERING_DUMP"]
fn sim_lowering_dump() {
    let path = std::env::var("GPUMEMSIM_LOWERING_DUMP").expect("GPUMEMSIM_LOWERING_DUMP=FILE");
    std::fs::write(path, dump()).unwrap();
}

#[test]
fn sim_lowering_digest_is_pinned() {
    assert_eq!(
        format!("{:016x}", fnv1a(dump().as_bytes())),
        EXPECTED,
        "the simulator's litmus lowering changed (see this module's header to diff it)"
    );
}

/// The digest of main's lowering (0fb2de1), before the shared launch builder.
const EXPECTED: &str = "ef845fd44b72dbb5";
