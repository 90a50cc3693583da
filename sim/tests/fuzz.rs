//! The fuzzing smoke run of CI: every reader of user input (`gpumemsim::fuzz::Target`) on every input
//! kept in `fuzz/regressions/` (each a crash once found), then on seeded mutations of the
//! repository's own inputs. The long, coverage-guided runs use cargo-fuzz (`fuzz/README.md`).
//!
//! A reader that panics fails the test with the target, the round and the input's first bytes; one
//! that overflows its stack aborts the test binary (rerun the target under cargo-fuzz to get the input).

use gpumemsim::fuzz::{mutate, run, Target};
use gpumemsim::rng::SplitMix64;
use std::path::{Path, PathBuf};

/// Mutated inputs per target in CI (a few seconds each in the dev profile). A longer run without
/// cargo-fuzz: `GPUMEMSIM_FUZZ_ROUNDS=200000 GPUMEMSIM_FUZZ_SEED=7 cargo test --release --test
/// integration fuzz_smoke -- --nocapture` (fuzz/README.md).
const ROUNDS: usize = 1500;

/// `GPUMEMSIM_FUZZ_ROUNDS` and `GPUMEMSIM_FUZZ_SEED` (the mutation stream), or CI's defaults.
fn rounds_and_seed() -> (usize, u64) {
    let get = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    (
        get("GPUMEMSIM_FUZZ_ROUNDS").map_or(ROUNDS, |n| n as usize),
        get("GPUMEMSIM_FUZZ_SEED").unwrap_or(16),
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)));
    out.sort();
    out
}

/// Runs `target` on `data` on a thread with the main thread's stack size, so that a panic names the
/// input instead of ending the test without it.
fn check(target: Target, data: &[u8], what: &str) {
    let d = data.to_vec();
    let r = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || run(target, &d))
        .expect("a thread starts")
        .join();
    if r.is_err() {
        let shown = String::from_utf8_lossy(&data[..data.len().min(300)]);
        panic!(
            "fuzz target {} panicked on {what} ({} bytes, starting {shown:?})",
            target.name(),
            data.len()
        );
    }
}

#[test]
fn fuzz_regressions_stay_fixed() {
    for t in Target::ALL {
        for f in files(&root().join("fuzz/regressions").join(t.name()), None) {
            let data = std::fs::read(&f).unwrap();
            check(t, &data, &f.display().to_string());
        }
    }
}

#[test]
fn fuzz_smoke_mutations_of_the_repository_inputs() {
    // A long run may name its targets (`GPUMEMSIM_FUZZ_TARGETS=litmus,kernel`) and keep each input in a
    // file before it is read (`GPUMEMSIM_FUZZ_SAVE=FILE`), so that a stack overflow, which aborts the
    // process without a report, leaves the input that caused it.
    let only = std::env::var("GPUMEMSIM_FUZZ_TARGETS").ok();
    let save = std::env::var_os("GPUMEMSIM_FUZZ_SAVE");
    for t in Target::ALL {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|n| n == t.name()))
        {
            continue;
        }
        let seeds: Vec<Vec<u8>> = t
            .seed_dirs()
            .iter()
            .flat_map(|(dir, ext)| files(&root().join(dir), Some(ext)))
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        assert!(!seeds.is_empty(), "{}: no seed inputs", t.name());
        let mut accepted = 0;
        for s in &seeds {
            accepted += run(t, s) as usize;
        }
        // A spec's seeds name files that the fuzzing folder does not hold: refused, by design.
        if t != Target::SweepSpec {
            assert!(accepted > 0, "{}: no seed input is accepted", t.name());
        }
        let (rounds, seed) = rounds_and_seed();
        let mut rng = SplitMix64::stream(seed, t as u64);
        let started = std::time::Instant::now();
        let mut input = seeds[0].clone();
        for round in 0..rounds {
            // Mostly stack mutations on the last input; every 8th round a fresh seed.
            if round % 8 == 0 {
                input = seeds[rng.below(seeds.len() as u64) as usize].clone();
            }
            let other = &seeds[rng.below(seeds.len() as u64) as usize];
            input = mutate(&input, other, &mut rng);
            if input.len() > 1 << 20 {
                input.truncate(1 << 20);
            }
            if let Some(f) = &save {
                std::fs::write(f, &input).unwrap();
            }
            check(t, &input, &format!("round {round}"));
        }
        println!(
            "fuzz {}: {rounds} mutated inputs (seed {seed}) in {:.1} s",
            t.name(),
            started.elapsed().as_secs_f64()
        );
    }
}

/// Every target can be run long: it has its cargo-fuzz file and `[[bin]]`, the README's list names
/// it, and `scripts/fuzz.sh` seeds and runs it (the PTX target was missing from both).
#[test]
fn fuzz_every_target_has_its_cargo_fuzz_binary_and_its_long_run() {
    let read = |p: &str| std::fs::read_to_string(root().join(p)).unwrap();
    let (cargo, readme, script) = (
        read("fuzz/Cargo.toml"),
        read("fuzz/README.md"),
        read("scripts/fuzz.sh"),
    );
    let listed = readme
        .split("Targets: ")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .unwrap_or("");
    let looped = script
        .lines()
        .find(|l| l.starts_with("for t in "))
        .unwrap_or("");
    let mut missing = Vec::new();
    for t in Target::ALL {
        let n = t.name();
        if !root().join(format!("fuzz/fuzz_targets/{n}.rs")).is_file() {
            missing.push(format!("fuzz/fuzz_targets/{n}.rs"));
        }
        if !cargo.contains(&format!("name = \"{n}\"\npath = \"fuzz_targets/{n}.rs\"")) {
            missing.push(format!("{n} in fuzz/Cargo.toml"));
        }
        if !listed.contains(&format!("`{n}`")) {
            missing.push(format!("{n} in fuzz/README.md's Targets"));
        }
        if !looped
            .split_whitespace()
            .any(|w| w == n || w == format!("{n};"))
        {
            missing.push(format!("{n} in scripts/fuzz.sh's loop"));
        }
        if !script.contains(&format!("seed {n} ")) {
            missing.push(format!("{n}'s seeds in scripts/fuzz.sh"));
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
