//! A pin on the harness's lowering: every litmus test of `workloads/litmus/`, in every variant, lowered
//! to its first dispatch (small settings, with and without pre-stress) and translated to WGSL and
//! SPIR-V; the whole text hashed. A change to the lowering or a translator that changes any program
//! changes the digest. `GPUMEMSIM_DEVICE_LOWERING_DUMP=FILE cargo test lowering_dump -- --ignored` writes
//! the text itself, to diff what changed.

use super::{launch, LitmusSettings, Variant};
use crate::emit::{emit, Lang};
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
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The text of every lowering: the workload (`{:#?}`), its WGSL and its SPIR-V's digest, or why not.
fn dump() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/litmus");
    let mut files = Vec::new();
    litmus_files(&root, &mut files);
    assert!(files.len() > 100, "{} litmus files found", files.len());
    let mut out = String::new();
    for f in &files {
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        let test = match gpumemsim_litmus::load(f) {
            Ok(t) => t,
            Err(e) => {
                writeln!(out, "== {name}: not loaded: {e}").unwrap();
                continue;
            }
        };
        for v in Variant::ALL {
            // Pre-stress changes only the prologue: once is enough.
            let pres: &[u32] = if v == Variant::Relaxed { &[0, 3] } else { &[0] };
            for &pre in pres {
                let s = LitmusSettings {
                    instances: 24,
                    workgroup_size: 16,
                    stress_iterations: 5,
                    pre_stress_iterations: pre,
                    seed: 7,
                    ..Default::default()
                };
                writeln!(out, "== {name} {} pre={pre}", v.name()).unwrap();
                let mut rng = SplitMix64::stream(s.seed, 0x6c69_746d);
                match launch(&v.apply(&test), &s, &mut rng) {
                    Err(e) => writeln!(out, "not launched: {e}").unwrap(),
                    Ok(l) => {
                        writeln!(
                            out,
                            "{:#?}\nslot {:?}\nobserved {:?}",
                            l.workload, l.slot, l.observed_regs
                        )
                        .unwrap();
                        match emit(&l.workload, Lang::Wgsl) {
                            Ok(b) => out.push_str(&String::from_utf8_lossy(&b)),
                            Err(e) => writeln!(out, "no WGSL: {e}").unwrap(),
                        }
                        match emit(&l.workload, Lang::Spirv) {
                            Ok(b) => writeln!(out, "SPIR-V {} bytes, {:016x}", b.len(), fnv1a(&b))
                                .unwrap(),
                            Err(e) => writeln!(out, "no SPIR-V: {e}").unwrap(),
                        }
                    }
                }
            }
        }
    }
    // The checkout's place must not change the digest: files are named from the repository root.
    out.replace(&format!("{}/", root.display()), "workloads/litmus/")
}

#[test]
#[ignore = "writes the lowering text to $GPUMEMSIM_DEVICE_LOWERING_DUMP"]
fn lowering_dump() {
    let path = std::env::var("GPUMEMSIM_DEVICE_LOWERING_DUMP")
        .expect("GPUMEMSIM_DEVICE_LOWERING_DUMP=FILE");
    std::fs::write(path, dump()).unwrap();
}

#[test]
fn lowering_digest_is_pinned() {
    let text = dump();
    assert_eq!(
        format!("{:016x}", fnv1a(text.as_bytes())),
        EXPECTED,
        "the harness's generated programs changed (see this module's header to diff them)"
    );
}

/// The digest of main's lowering (0fb2de1), before the shared launch builder.
const EXPECTED: &str = "3613721ad12c9eb5";
