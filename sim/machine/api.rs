//! What callers (CLI, litmus runner, sweeps, compare) give a run and get back.

use crate::stats::Stats;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Per-run options beyond the config and the workload.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Start with the workload's buffers in the L2, written (dirty), as a harness's copy of fresh
    /// memory just before the launch leaves them (`gpu measure` copies every run's initial memory on
    /// the GPU; `compare` simulates so); a footprint past the L2 keeps its last lines. False: every
    /// cache starts empty.
    pub warm_l2: bool,
    /// Detect data races and scope races.
    pub races: bool,
    /// Explicit placement: `group_sm[g]` is the SM of work-group `g` (linear id). Groups not listed are
    /// dispatched normally. Used by the litmus runner.
    pub group_sm: Option<Vec<u32>>,
    /// Registers to read back after the run: (global linear thread id, register).
    pub capture: Vec<(u64, crate::ir::Reg)>,
    /// Skip the workload's checks (the litmus runner evaluates its own condition).
    pub skip_checks: bool,
    /// Threads simulating the run (0 or 1: this thread only). The results do not depend on it.
    pub threads: usize,
    /// Record access provenance (`provenance.rs`) into [`RunResult::provenance`]; the run itself
    /// is the same.
    pub provenance: bool,
    /// Record a timeline (`timeline/`); `None`: nothing is recorded.
    pub timeline: Option<super::timeline::TimelineOptions>,
    /// Sample the key counters every this many core cycles (`interval.rs`).
    pub stats_interval: Option<u64>,
    /// A run that cannot finish ends with its live threads in [`RunResult::unfinished`] instead of
    /// a no-progress or cycle-limit error (the litmus runner's "no final state"), and
    /// [`RunResult::unfinished_why`] says why: every live thread waits at a barrier that can never
    /// complete, or the watchdog stopped threads still running (a loop that does not end).
    pub stuck_ok: bool,
    /// Told the work-groups finished of the running launch's whenever that count changes (checked
    /// once per synchronisation window: `None` costs one branch per window). Never changes results.
    pub progress: Option<ProgressHook>,
}

/// Where a run reports its progress ([`RunOptions::progress`]), e.g. a [`crate::progress::Progress`].
#[derive(Clone)]
pub struct ProgressHook(pub std::sync::Arc<dyn crate::progress::Report + Send>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
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

pub use super::races::{RaceAccess, RaceKind, RaceReport};

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
    /// With `RunOptions::provenance`: every domain's events, in time order (ties: SMs, then
    /// partitions, each in the order recorded).
    #[serde(skip)]
    pub provenance: Option<Vec<(crate::engine::Time, super::provenance::ProvEvent)>>,
    /// The recorded timeline (`RunOptions::timeline`).
    #[serde(skip)]
    pub timeline: Option<super::timeline::Timeline>,
    /// The interval statistics (`RunOptions::stats_interval`).
    #[serde(skip)]
    pub intervals: Option<super::interval::Intervals>,
    /// With `RunOptions::stuck_ok`: the global thread ids that never finished, sorted; empty
    /// otherwise.
    pub unfinished: Vec<u64>,
    /// Why `unfinished` is not empty (`None` when it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished_why: Option<Unfinished>,
}

/// Why a run with `RunOptions::stuck_ok` ended with threads that never finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unfinished {
    /// Every live thread waits at a barrier that can never complete (a deadlock).
    AtBarriers,
    /// The watchdog stopped the run with threads still running: no progress for
    /// `watchdog.no_progress_cycles` (a loop whose state repeats), or `watchdog.max_cycles`
    /// reached.
    Stopped,
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

/// The JSON document `run --json` writes: everything needed to compare runs, in a stable order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub tool: String,
    pub config: String,
    pub workload: String,
    pub seed: u64,
    /// The workload's named parameters as resolved for this run (filled by the caller that knows them).
    #[serde(default)]
    pub parameters: Vec<(String, i64)>,
    pub cycles: u64,
    pub time_ns: f64,
    pub checks: Vec<CheckOutcome>,
    pub reports: Vec<(String, i64)>,
    pub races: Vec<RaceReport>,
    pub stats: Vec<crate::stats::Stat>,
}

impl RunResult {
    pub fn report(&self, config: &str, workload: &str, seed: u64) -> RunReport {
        RunReport {
            tool: format!("gpumemsim {}", env!("CARGO_PKG_VERSION")),
            config: config.to_string(),
            workload: workload.to_string(),
            seed,
            parameters: Vec::new(),
            cycles: self.cycles,
            time_ns: self.time_ns,
            checks: self.checks.clone(),
            reports: self.reports.clone(),
            races: self.races.clone(),
            stats: self.stats.rows.clone(),
        }
    }

    /// The human summary `gpumemsim run` prints.
    pub fn summary(&self, cfg: &crate::config::GpuConfig) -> String {
        use std::fmt::Write as _;
        let g = |loc: &str, m: &str| self.stats.get(loc, m).unwrap_or(0.0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} — {} cycles, {:.1} µs at {} MHz",
            cfg.name,
            self.cycles,
            self.time_ns / 1000.0,
            cfg.clocks.core_mhz
        );
        let _ = writeln!(
            s,
            "instructions      {:.0} warp ({:.0} thread), IPC {:.2}, {:.0} memory",
            g("gpu", "warp_instructions"),
            g("gpu", "thread_instructions"),
            g("gpu", "ipc"),
            g("gpu", "memory_instructions")
        );
        let _ = writeln!(
            s,
            "L1                {:.0} loads, hit rate {:.1}%, {:.0} bypassed to L2, {:.0} invalidations",
            g("l1", "loads"),
            100.0 * g("l1", "hit_rate"),
            g("l1", "bypass_loads"),
            g("l1", "invalidations")
        );
        // Each quantity says what it counts (issue 18 item 4): requests are per warp instruction and
        // line, operations per lane (or per address when lanes combine), waits are means or totals.
        let _ = writeln!(
            s,
            "L2                {:.0} reads, {:.0} writes, {:.0} atomic requests (one per warp instruction and line), \
             hit rate {:.1}%",
            g("l2", "reads"),
            g("l2", "writes"),
            g("l2", "atomics"),
            100.0 * g("l2", "hit_rate")
        );
        // Only with a bounded slice input (`l2.input_depth` > 0): an unbounded one never waits.
        if cfg.l2.input_depth > 0 {
            let _ = writeln!(
                s,
                "L2 input          {} credits per SM and slice: {:.0} requests waited for one, {:.0} L2 cycles \
                 in total; at most {:.0} in use, {:.0} requests queued at one slice",
                cfg.l2.input_depth,
                g("l2", "input_credit_waits"),
                g("l2", "input_credit_wait"),
                g("l2", "input_credits_max_in_use"),
                g("l2", "input_max_queued")
            );
        }
        let _ = writeln!(
            s,
            "atomic units      L2: {:.0} ops for {:.0} lanes ({}), utilisation {:.1}% (busiest slice {:.1}%); \
             SM: {:.0} shared + {:.0} L1 ops",
            g("atomics.l2", "operations"),
            g("atomics.l2", "lane_operations"),
            if cfg.atomics.combine_same_address_lanes {
                "a warp's lanes on one address are one op"
            } else {
                "one op per lane"
            },
            100.0 * g("atomics.l2", "utilisation"),
            100.0 * g("atomics.l2", "busiest_slice_utilisation"),
            g("atomics.sm", "shared_ops"),
            g("atomics.sm", "l1_ops")
        );
        let _ = writeln!(
            s,
            "atomic waits      mean queueing {:.1} L2 cycles per request before its slice's unit starts it (one hot \
             address queues here); same-address wait {:.0} L2 cycles in total (inside the unit, behind an earlier op \
             to the address)",
            g("atomics.l2", "mean_queue_delay"),
            g("atomics.l2", "same_address_wait"),
        );
        let _ = writeln!(
            s,
            "store buffer      mean occupancy {:.2} entries/SM, max {:.0}, full-stall {:.0} warp-cycles, {:.0} forwarded loads",
            g("store_buffer", "mean_occupancy"),
            g("store_buffer", "max_occupancy"),
            g("store_buffer", "store_buffer_full_stall"),
            g("store_buffer", "forwarded_loads")
        );
        let _ = writeln!(
            s,
            "fences/barriers   {:.0} warp-cycles stalled at releases (waiting for earlier accesses); shared memory: \
             {:.0} extra cycles of bank conflicts",
            g("sm", "fence_stall"),
            g("sm", "bank_conflict")
        );
        let _ = writeln!(
            s,
            "DRAM              {:.0} B, {:.1} GB/s, bus utilisation {:.1}%, row hits {:.0} / misses {:.0}",
            g("dram", "bytes"),
            g("dram", "bandwidth"),
            100.0 * g("dram", "bus_utilisation"),
            g("dram", "row_hits"),
            g("dram", "row_misses")
        );
        for (name, v) in &self.reports {
            let _ = writeln!(s, "report            {name} = {v}");
        }
        for c in &self.checks {
            let mark = if c.passed { "ok  " } else { "FAIL" };
            let _ = writeln!(
                s,
                "check {mark}        {} ({}){}",
                c.text,
                c.location,
                c.detail
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            );
        }
        for r in &self.races {
            let _ = writeln!(s, "{r}");
        }
        s
    }
}
