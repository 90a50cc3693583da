//! `gpumemsim bench`: simulation speed on a fixed set of workloads, so that speed-ups and regressions
//! are measured the same way every time (issue 4: the speed targets on `v70_distinct` and
//! `v70_same_i8`).
//!
//! The set: the synthetic Accel-Sim traces of the project's samples, generated in memory by
//! [`crate::trace::synth`] (byte-for-byte the sample files, so no file outside the repository is
//! needed), `v70_same_i8` once with `atomics.combine_same_address_lanes` on (the row that keeps the
//! name) and once off (`_lane_by_lane`, the presets' setting: the cost of serialising a warp's
//! same-address lanes), and kernel-language workloads from `workloads/` (embedded
//! in the binary). For each: simulated cycles, wall time of the simulation (inputs are loaded and
//! parsed before the clock starts; the load time is reported separately), warp and thread
//! instructions, events, the rates per wall second, the peak resident memory during the run, and the
//! L2 atomic units' operations and same-address wait.
//!
//! Litmus simulation rate: the litmus engineer's message-passing measure
//! ([`crate::litmus::mp_rate`], iterations per second with launches on all cores) on the tiny config,
//! reported beside the table (`--litmus-iterations 0` skips it).
//!
//! Peak memory is the process's high-water mark (`VmHWM`), reset before each workload through
//! `/proc/self/clear_refs` (Linux); elsewhere it is not reported.
//!
//! Not measured here: criterion's statistics (see `benches/`); this command takes the fastest of
//! `--repeat` runs, which is the usual estimate of a program's speed on a loaded machine.

use crate::config::{self, ConfigError, GpuConfig};
use crate::kernel::KernelError;
use crate::machine::{self, RunOptions, RunResult, SimError};
use crate::trace::synth::{kernel_text, Synth, SynthAtomics};
use crate::trace::{self, Trace, TraceCommand, TraceError};
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BenchError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("bench workload {name}: {source}")]
    Sim {
        name: String,
        #[source]
        source: SimError,
    },
    #[error(transparent)]
    Litmus(#[from] crate::litmus::LitmusError),
    #[error("--only {filter}: no bench workload matches (workloads: {names})")]
    NoMatch { filter: String, names: String },
}

/// What `gpumemsim bench` was asked to do.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// `None`: the embedded default (H100).
    pub config: Option<PathBuf>,
    pub sets: Vec<String>,
    /// Runs per workload; the fastest counts.
    pub repeat: u32,
    /// Threads simulating each run.
    pub threads: usize,
    /// Only workloads whose name contains this.
    pub only: Option<String>,
    /// Iterations of the litmus MP rate (0: not measured).
    pub litmus_iterations: u64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            config: None,
            sets: Vec::new(),
            repeat: 1,
            threads: 1,
            only: None,
            litmus_iterations: 20_000,
        }
    }
}

/// One measured workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub name: String,
    /// Config overrides this workload adds to the bench's config.
    pub sets: Vec<String>,
    pub threads: usize,
    pub cycles: u64,
    /// Seconds to load and parse the input (not part of `wall_s`).
    pub load_s: f64,
    /// Seconds of the fastest simulation run.
    pub wall_s: f64,
    /// CPU seconds (all threads of the process) of that run: on a machine other jobs share, the
    /// wall time includes waiting for a core, this does not (`None` where not measurable).
    pub cpu_s: Option<f64>,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub events: u64,
    pub warp_instructions_per_s: f64,
    pub thread_instructions_per_s: f64,
    pub cycles_per_s: f64,
    pub events_per_s: f64,
    /// Peak resident memory of the process during the runs, bytes (`None` where not measurable).
    pub peak_rss_bytes: Option<u64>,
    /// L2 atomic units: operations performed, lanes they covered, utilisation (fraction), mean
    /// queueing delay and same-address wait (L2 cycles).
    pub atomic_ops: u64,
    pub atomic_lane_ops: u64,
    pub atomic_utilisation: f64,
    pub atomic_mean_queue_delay: f64,
    pub atomic_same_address_wait: f64,
}

/// The JSON document `bench --json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub tool: String,
    pub config: String,
    pub repeat: u32,
    pub threads: usize,
    pub rows: Vec<BenchRow>,
    /// Litmus MP iterations per second on the tiny config, when measured.
    pub litmus: Option<crate::litmus::BenchRate>,
}

enum Source {
    Synth(Synth),
    Kernel {
        file: &'static str,
        text: &'static str,
        params: &'static [(&'static str, i64)],
    },
}

struct Case {
    name: &'static str,
    source: Source,
    sets: &'static [&'static str],
}

const fn synth(atomics: SynthAtomics, iters: u32) -> Source {
    Source::Synth(Synth::sample(atomics, iters))
}

/// The fixed set, in the order printed.
fn cases() -> Vec<Case> {
    // Both forms named explicitly (the presets serialise lanes since the H100 measurement), so that
    // `v70_same_i8` stays the warp-combined run earlier measurements timed.
    let combine_on: &'static [&'static str] = &["atomics.combine_same_address_lanes=true"];
    let combine_off: &'static [&'static str] = &["atomics.combine_same_address_lanes=false"];
    vec![
        Case {
            name: "v70_distinct",
            source: synth(SynthAtomics::Distinct, 32),
            sets: &[],
        },
        Case {
            name: "v70_same_i8",
            source: synth(SynthAtomics::Same, 8),
            sets: combine_on,
        },
        Case {
            name: "v70_same_i8_lane_by_lane",
            source: synth(SynthAtomics::Same, 8),
            sets: combine_off,
        },
        Case {
            name: "v70_none",
            source: synth(SynthAtomics::None, 32),
            sets: &[],
        },
        Case {
            name: "histogram_global",
            source: Source::Kernel {
                file: "workloads/histogram_global.kern",
                text: include_str!("../workloads/histogram_global.kern"),
                params: &[("N", 65536)],
            },
            sets: &[],
        },
        Case {
            name: "reduce_atomic",
            source: Source::Kernel {
                file: "workloads/reduce_atomic.kern",
                text: include_str!("../workloads/reduce_atomic.kern"),
                params: &[("N", 65536)],
            },
            sets: &[],
        },
        Case {
            name: "contention",
            source: Source::Kernel {
                file: "workloads/contention.kern",
                text: include_str!("../workloads/contention.kern"),
                params: &[("T", 65536), ("K", 1)],
            },
            sets: &[],
        },
    ]
}

enum Input {
    Trace(Trace),
    Kernel(Workload),
}

fn load(case: &Case, threads: usize) -> Result<Input, BenchError> {
    Ok(match &case.source {
        Source::Synth(s) => {
            let dir = Path::new(case.name);
            let k = trace::parse_kernel_threads(
                &kernel_text(s),
                &dir.join("kernel-1.traceg"),
                threads,
            )?;
            Input::Trace(Trace {
                list: dir.join("kernelslist.g"),
                commands: vec![TraceCommand::Kernel(std::sync::Arc::new(k))],
            })
        }
        Source::Kernel { file, text, params } => {
            let params: Vec<(String, i64)> =
                params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
            Input::Kernel(crate::frontend::parse(text, file, &params)?)
        }
    })
}

fn simulate(cfg: &GpuConfig, input: &Input, opts: &RunOptions) -> Result<RunResult, SimError> {
    match input {
        Input::Trace(t) => machine::run_trace(cfg, t, opts),
        Input::Kernel(w) => machine::run(cfg, w, opts),
    }
}

/// Runs the bench set; `progress` is called with each row as it completes.
pub fn run(
    opts: &BenchOptions,
    mut progress: impl FnMut(&BenchRow),
) -> Result<Vec<BenchRow>, BenchError> {
    let all = cases();
    let chosen: Vec<&Case> = all
        .iter()
        .filter(|c| {
            opts.only
                .as_ref()
                .is_none_or(|f| c.name.contains(f.as_str()))
        })
        .collect();
    if chosen.is_empty() {
        return Err(BenchError::NoMatch {
            filter: opts.only.clone().unwrap_or_default(),
            names: all.iter().map(|c| c.name).collect::<Vec<_>>().join(", "),
        });
    }
    let mut rows = Vec::new();
    for case in chosen {
        let mut sets = opts.sets.clone();
        sets.extend(case.sets.iter().map(|s| s.to_string()));
        let cfg = config::load(opts.config.as_deref(), &sets)?;
        let t0 = Instant::now();
        let input = load(case, opts.threads)?;
        let load_s = t0.elapsed().as_secs_f64();
        // The workloads' end-of-run checks are not simulation (and some are quadratic).
        let run_opts = RunOptions {
            skip_checks: true,
            threads: opts.threads,
            ..Default::default()
        };
        reset_peak_rss();
        let mut best: Option<(f64, Option<f64>, RunResult)> = None;
        for _ in 0..opts.repeat.max(1) {
            let cpu0 = process_cpu_s();
            let t = Instant::now();
            let r = simulate(&cfg, &input, &run_opts).map_err(|source| BenchError::Sim {
                name: case.name.to_string(),
                source,
            })?;
            let wall = t.elapsed().as_secs_f64();
            let cpu = process_cpu_s().zip(cpu0).map(|(b, a)| b - a);
            if best.as_ref().is_none_or(|(b, _, _)| wall < *b) {
                best = Some((wall, cpu, r));
            }
        }
        let (wall_s, cpu_s, r) = best.expect("at least one run");
        let g = |loc: &str, m: &str| r.stats.get(loc, m).unwrap_or(0.0);
        let per_s = |x: f64| x / wall_s.max(1e-9);
        let (warp, thread, events) = (
            g("gpu", "warp_instructions") as u64,
            g("gpu", "thread_instructions") as u64,
            g("kernel", "events") as u64,
        );
        let row = BenchRow {
            name: case.name.to_string(),
            sets: case.sets.iter().map(|s| s.to_string()).collect(),
            threads: opts.threads,
            cycles: r.cycles,
            load_s,
            wall_s,
            cpu_s,
            warp_instructions: warp,
            thread_instructions: thread,
            events,
            warp_instructions_per_s: per_s(warp as f64),
            thread_instructions_per_s: per_s(thread as f64),
            cycles_per_s: per_s(r.cycles as f64),
            events_per_s: per_s(events as f64),
            peak_rss_bytes: peak_rss(),
            atomic_ops: g("atomics.l2", "operations") as u64,
            atomic_lane_ops: g("atomics.l2", "lane_operations") as u64,
            atomic_utilisation: g("atomics.l2", "utilisation"),
            atomic_mean_queue_delay: g("atomics.l2", "mean_queue_delay"),
            atomic_same_address_wait: g("atomics.l2", "same_address_wait"),
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// The litmus message-passing rate on the tiny config (embedded), if asked for.
pub fn litmus_rate(opts: &BenchOptions) -> Result<Option<crate::litmus::BenchRate>, BenchError> {
    if opts.litmus_iterations == 0 {
        return Ok(None);
    }
    let cfg = config::parse_str(
        include_str!("../configs/tiny.toml"),
        "configs/tiny.toml",
        &[],
    )?;
    Ok(Some(crate::litmus::mp_rate(
        &cfg,
        opts.litmus_iterations,
        1,
    )?))
}

/// The table `gpumemsim bench` prints: a header, then one line per row.
pub fn table_header() -> String {
    format!(
        "{:<26} {:>9} {:>8} {:>8} {:>8} {:>11} {:>11} {:>11} {:>11} {:>8} {:>10} {:>8} {:>8}",
        "workload",
        "cycles",
        "load s",
        "sim s",
        "cpu s",
        "warp-inst/s",
        "thr-inst/s",
        "cycles/s",
        "events/s",
        "peak MB",
        "atomic ops",
        "atom util",
        "atom q"
    )
}

pub fn table_line(r: &BenchRow) -> String {
    let si = |x: f64| {
        if x >= 1e9 {
            format!("{:.2} G", x / 1e9)
        } else if x >= 1e6 {
            format!("{:.2} M", x / 1e6)
        } else if x >= 1e3 {
            format!("{:.1} K", x / 1e3)
        } else {
            format!("{x:.0}")
        }
    };
    format!(
        "{:<26} {:>9} {:>8.3} {:>8.3} {:>8} {:>11} {:>11} {:>11} {:>11} {:>8} {:>10} {:>7.1}% {:>8.1}",
        r.name,
        r.cycles,
        r.load_s,
        r.wall_s,
        r.cpu_s
            .map(|c| format!("{c:.3}"))
            .unwrap_or_else(|| "-".into()),
        si(r.warp_instructions_per_s),
        si(r.thread_instructions_per_s),
        si(r.cycles_per_s),
        si(r.events_per_s),
        r.peak_rss_bytes
            .map(|b| format!("{:.0}", b as f64 / (1 << 20) as f64))
            .unwrap_or_else(|| "-".into()),
        r.atomic_ops,
        100.0 * r.atomic_utilisation,
        r.atomic_mean_queue_delay
    )
}

/// CPU time of every thread of the process so far, seconds (Linux: `/proc/self/task/*/schedstat`,
/// whose first field is nanoseconds on a CPU).
fn process_cpu_s() -> Option<f64> {
    let mut ns = 0u64;
    for t in std::fs::read_dir("/proc/self/task").ok()? {
        let s = std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok()?;
        ns += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 * 1e-9)
}

/// Resets the process's peak resident set size (Linux: `5` into `/proc/self/clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The process's peak resident set size since the last reset, bytes.
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
