//! Litmus tests: herd-style tests in two dialects (PTX and OpenCL/C), lowered into the kernel IR and
//! run as many instances per simulated launch on the timed machine, with outcome counting,
//! expectations and race reports.
//!
//! Flow: [`parse`] (`lex.rs`, `parse.rs`, dialects in `ptx.rs` and `opencl.rs`, condition in
//! `cond.rs`) → [`LitmusTest`] (`test.rs`) → per launch a [`crate::workload::Workload`] (`lower.rs`)
//! → [`run`] (`run.rs`: rayon over launches, counts per final state) → [`LitmusResult`], printed or
//! written as JSON by `report.rs`; `--expect` files in `expect.rs`; `--explain` (why one iteration
//! ended in its witness, from the machine's recorded access provenance) in `explain/`; the
//! simulation rate for `gpumemsim bench` in `bench.rs`.
//!
//! What a test's result means is decided by the memory model (PTX ISA "Memory Consistency Model";
//! OpenCL 2.0 / SYCL scoped C11): the oracle in [`model`] computes the states the dialect's model
//! allows, every run's observed states are judged against it (`run.rs`), and the suite's declared
//! expectations (`expect:`) are checked against it; [`generate`] writes families of tests with the
//! oracle's verdicts.
//!
//! Tests whose constructs the machine cannot run yet (named barriers, a second device, sub-word
//! widths, ...) parse, and are rejected at load time by `capability.rs` with
//! [`LitmusError::NeedsCapability`]. `--format herd` output (litmus7's layout) is `herd.rs`.
//!
//! Not modelled: sub-group placement, locations holding addresses, comparing registers with
//! addresses in conditions.

mod bench;
mod capability;
mod cond;
mod expect;
mod explain;
pub mod generate;
mod herd;
mod kernel_builder;
mod lex;
mod local;
mod lower;
#[cfg(test)]
mod lower_digest;
pub mod model;
mod opencl;
mod parse;
mod ptx;
mod ptx_mem;
mod ptx_sync;
mod report;
mod run;
mod scope_tree;
mod test;

pub use bench::{mp_rate, BenchRate, MP_TEST};
pub use capability::{check_runnable, Capability};
pub use cond::{Condition, Quantifier, Var, MAX_DEPTH};
pub use expect::{apply_expectations, load_expectations, parse_expectations, ExpectEntry};
pub use explain::{explain, parse_state, Explained, StateSpec, Target};
pub use herd::herd_report;
pub use parse::parse;
pub use report::{json_report, summary, text_report, JsonTest};
pub use run::{
    run, run_reporting, run_with_model, timeline, CheckStatus, LitmusOptions, LitmusResult, Outcome,
};
pub use test::{
    BarrierAction, Dialect, Expect, Expectation, LitmusTest, Location, NamedBarrier, Pending,
    RegInit, Thread,
};
// For the physical-GPU harness (`device::litmus`), which lays instances out its own way.
pub use kernel_builder::{
    buffer_params, final_state, location_buffers, normalise, observed_regs, relocate, thread_bases,
    width_mask, Fixup, KernelBuilder,
};

use crate::machine::SimError;
use crate::text::Located;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LitmusError {
    /// A syntax or validation error at a place in the file (the readers' one located error).
    #[error(transparent)]
    Syntax(Located),
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: no litmus tests (*.litmus) found")]
    Empty { file: String },
    #[error("{file}: {message}")]
    TooLarge { file: String, message: String },
    /// The test uses something the machine cannot run yet (`capability.rs`).
    #[error("{file}:{line}:{col}: needs machine capability `{}`: {detail}", capability.name())]
    NeedsCapability {
        file: String,
        line: u32,
        col: u32,
        capability: Capability,
        detail: String,
    },
    /// A `--state` that names no observed variable, or is not of the form `NAME=VALUE; ...`.
    #[error("--state \"{text}\": column {col}: {message}")]
    State {
        text: String,
        col: u32,
        message: String,
    },
    /// `--explain`'s recorded re-run did not repeat the run it explains (a determinism bug).
    #[error("{file}: internal error: {message}")]
    Replay { file: String, message: String },
    #[error("test {test} ({file}), launch {launch} of seed {seed}: {source}")]
    Run {
        test: String,
        file: String,
        launch: u64,
        seed: u64,
        #[source]
        source: Box<SimError>,
    },
}

/// A file the reader could not read, or whose bytes are not text, at its position (`text.rs`).
impl From<crate::text::TextError> for LitmusError {
    fn from(e: crate::text::TextError) -> Self {
        match e.located() {
            Err((file, source)) => Self::Io { file, source },
            Ok(at) => Self::Syntax(at),
        }
    }
}

/// Reads and parses one test file.
pub fn load(path: &Path) -> Result<LitmusTest, LitmusError> {
    let text = crate::text::read(path)?;
    parse(&text, &path.display().to_string())
}

/// The test files named by `paths`: files as given, folders searched (recursively) for
/// `*.litmus`, each folder's files in name order.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LitmusError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let before = out.len();
            walk(p, &mut Vec::new(), &mut out)?;
            if out.len() == before {
                return Err(LitmusError::Empty {
                    file: p.display().to_string(),
                });
            }
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Searches `dir` below the folders in `ancestors` (canonical paths): a symbolic link back to one
/// of them is a cycle and is not followed (it gave the same test again at every level, until the
/// file system refused the path).
fn walk(
    dir: &Path,
    ancestors: &mut Vec<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> Result<(), LitmusError> {
    let io = |source| LitmusError::Io {
        file: dir.display().to_string(),
        source,
    };
    let here = std::fs::canonicalize(dir).map_err(io)?;
    if ancestors.contains(&here) {
        return Ok(());
    }
    ancestors.push(here);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for e in entries {
        if e.is_dir() {
            walk(&e, ancestors, out)?;
        } else if e.extension().is_some_and(|x| x == "litmus") {
            out.push(e);
        }
    }
    ancestors.pop();
    Ok(())
}

// The lower floors' modules under the names this crate has always used for them (ARCHITECTURE.md, "The
// floors are crates").
pub(crate) use gpumemsim_core::{config, engine, ir, progress, rng, stats, text, workload};
pub(crate) use gpumemsim_front::cfront;
pub(crate) use gpumemsim_machine as machine;
