//! What callers (CLI, litmus runner, sweeps, compare) give a run and get back.

use crate::stats::Stats;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Per-run options beyond the config and the workload.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Detect data races and scope races.
    pub races: bool,
    /// Explicit placement: `group_sm[g]` is the SM of work-group `g` (linear id). Groups not listed are
    /// dispatched normally. Used by the litmus runner.
    pub group_sm: Option<Vec<u32>>,
    /// Registers to read back after the run: (global linear thread id, register).
    pub capture: Vec<(u64, crate::ir::Reg)>,
    /// Skip the workload's checks (the litmus runner evaluates its own condition).
    pub skip_checks: bool,
}

/// Outcome of one end-of-run check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    pub text: String,
    pub location: String,
    pub passed: bool,
    /// For a failed check: the first failing index and both sides' values.
    pub detail: Option<String>,
}

/// A race found by `--races`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceReport {
    /// `data` or `scope`.
    pub kind: String,
    pub address: u64,
    /// Both accesses: `file:line:col (thread t, group g)` and what they were.
    pub first: String,
    pub second: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Core cycles from launch to the last warp's exit and the memory system's drain.
    pub cycles: u64,
    /// Wall time at the config's core clock, ns.
    pub time_ns: f64,
    pub stats: Stats,
    pub checks: Vec<CheckOutcome>,
    /// Reported quantities (`report NAME = expr`).
    pub reports: Vec<(String, i64)>,
    pub races: Vec<RaceReport>,
    /// Values of `RunOptions::capture`, same order.
    pub captured: Vec<u64>,
    /// Final contents of each buffer (raw element values), same order as the workload's buffers.
    pub buffers: Vec<Vec<u64>>,
}

impl RunResult {
    pub fn all_checks_pass(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// Why a run did not complete.
#[derive(Debug, Error)]
pub enum SimError {
    /// An instruction did something the program may not (out-of-bounds address, misaligned access).
    #[error("{location}: {message} (thread {thread}, work-group {group})")]
    Runtime {
        location: String,
        message: String,
        thread: u64,
        group: u64,
    },
    /// The workload cannot run on this config (does not fit an SM, unsupported order or scope).
    #[error("{location}: {message}")]
    Unsupported { location: String, message: String },
    /// The watchdog stopped a run that made no forward progress.
    #[error("no forward progress for {window} cycles (stopped at cycle {cycle}):\n{diagnosis}")]
    NoProgress {
        cycle: u64,
        window: u64,
        diagnosis: String,
    },
    /// The watchdog's cycle limit.
    #[error("run exceeded watchdog.max_cycles = {limit} (at cycle {cycle}):\n{diagnosis}")]
    MaxCycles {
        cycle: u64,
        limit: u64,
        diagnosis: String,
    },
}
