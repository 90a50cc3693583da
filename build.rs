//! Build script: the source hash that identifies a simulator build (`gpumemsim::version::BUILD`).
//!
//! A sweep's point results carry the build that computed them, so that results of different simulators
//! never mix silently. The hash is FNV-1a (64 bits) over everything compiled into the library and the
//! binary: every Rust file and crate manifest under `sim/` (the workspace's crates: core, machine, front,
//! litmus, report, device) except the integration tests (`sim/tests/`) and the Python bindings
//! (`sim/python/`, a crate of its own that depends on this one), the embedded configs
//! (`configs/*.toml`), `Cargo.toml`, `Cargo.lock` and this script, each as its path relative to the
//! package, its length and its bytes, in path order. It is therefore the same for the same source on any
//! machine and in any profile (debug and release builds of one source compute identical results), and it
//! changes with any edit of the simulator, its embedded data or its locked dependency versions. It does
//! not see the compiler version.

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files: Vec<PathBuf> = Vec::new();
    for f in ["Cargo.toml", "Cargo.lock", "build.rs"] {
        files.push(root.join(f));
        println!("cargo:rerun-if-changed={f}");
    }
    let sim = root.join("sim");
    let skip = [sim.join("tests"), sim.join("python")];
    collect(&sim, &skip, &mut files);
    // A directory given to rerun-if-changed is scanned whole: name sim/'s files and its subfolders
    // except tests/ and python/, so that editing an integration test or the bindings does not
    // rebuild the library.
    for e in read_dir(&sim) {
        if !skip.contains(&e) {
            println!("cargo:rerun-if-changed={}", rel(&root, &e));
        }
    }
    let configs = root.join("configs");
    for e in read_dir(&configs) {
        if e.extension().is_some_and(|x| x == "toml") {
            files.push(e);
        }
    }
    println!("cargo:rerun-if-changed=configs");

    let mut named: Vec<(String, PathBuf)> =
        files.into_iter().map(|f| (rel(&root, &f), f)).collect();
    named.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (name, path) in &named {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        feed(name.as_bytes());
        feed(&[0]);
        feed(&(bytes.len() as u64).to_le_bytes());
        feed(&bytes);
    }
    println!("cargo:rustc-env=GPUMEMSIM_SOURCE_HASH={h:016x}");
}

/// Every Rust file and crate manifest under `dir` (editor and hidden files left out), except under
/// `skip`.
fn collect(dir: &Path, skip: &[PathBuf], out: &mut Vec<PathBuf>) {
    for e in read_dir(dir) {
        if skip.contains(&e) {
            continue;
        }
        let hidden = e
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if e.is_dir() {
            collect(&e, skip, out);
        } else if e.extension().is_some_and(|x| x == "rs") || e.ends_with("Cargo.toml") {
            // Rust sources, and the manifests of the workspace's crates under sim/ (their
            // dependencies are part of what is compiled in).
            out.push(e);
        }
    }
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut out: Vec<PathBuf> = entries.map(|e| e.expect("readable entry").path()).collect();
    out.sort();
    out
}

/// `path` relative to the package root, with `/` separators on every platform.
fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
