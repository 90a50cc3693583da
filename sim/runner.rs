//! `gpumemsim run`: load a config and a workload, simulate, summarise, write the statistics.
//!
//! The CLI only parses arguments into [`RunArgs`] and prints what [`execute`] returns. Inputs are
//! dispatched by [`Input::of`]: a kernel-language file, or an Accel-Sim trace (its `kernelslist.g`
//! or the directory holding it), replayed for timing only. The outputs — the run as a JSON document
//! ([`RunDocument`]), the statistics as CSV and as JSON records — are written atomically
//! (`stats::write_atomic`) and only after the run completed; a run that fails (bad input, watchdog)
//! writes nothing.

use crate::config::{self, ConfigError, GpuConfig};
use crate::kernel::KernelError;
use crate::machine::{self, RunOptions, RunResult, SimError};
use crate::report::records;
use crate::stats;
use crate::trace::{self, Trace, TraceError};
use crate::workload::Workload;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(
        "--param {name}: a trace has no parameters (they belong to kernel-language workloads)"
    )]
    TraceParam { name: String },
    #[error("--param {arg}: expected NAME=INTEGER")]
    BadParam { arg: String },
    #[error(
        "--param {arg}: {value} does not fit in 64 bits (a parameter is an integer {} ..= {})",
        i64::MIN,
        i64::MAX
    )]
    ParamRange { arg: String, value: String },
    #[error("{path}: cannot write: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Everything `gpumemsim run` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    pub input: PathBuf,
    /// `None`: the embedded default config.
    pub config: Option<PathBuf>,
    pub seed: u64,
    /// Config overrides `KEY.PATH=VALUE`.
    pub sets: Vec<String>,
    /// Workload parameter overrides.
    pub params: Vec<(String, i64)>,
    /// The run as one JSON document ([`RunDocument`]).
    pub json: Option<PathBuf>,
    /// The statistics as tidy CSV rows.
    pub csv: Option<PathBuf>,
    /// The statistics as a JSON array of records (what `pandas.read_json` reads as a table).
    pub stats_json: Option<PathBuf>,
    pub races: bool,
    /// Threads simulating the run (0 or 1: one); the results do not depend on it.
    pub threads: usize,
    /// Write a Chrome trace timeline of the run here (`machine::timeline`), with its options.
    pub timeline: Option<(PathBuf, machine::timeline::TimelineOptions)>,
    /// Key statistics every this many core cycles, written as tidy CSV to the path.
    pub intervals: Option<(u64, PathBuf)>,
    /// Which compiler turns a `.cu` file into IR (`--compiler`; the library default is builtin).
    pub compiler: Option<crate::frontend::Compiler>,
}

/// What a workload path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A kernel-language file (`workloads/*.kern`).
    Kernel(PathBuf),
    /// An Accel-Sim trace: `kernelslist.g` or the directory holding it.
    Trace(PathBuf),
}

/// A loaded input.
pub enum Loaded {
    Kernel(Workload),
    Trace(Trace),
}

impl Input {
    pub fn of(path: &Path) -> Input {
        if path.is_dir() || path.file_name().is_some_and(|n| n == "kernelslist.g") {
            Input::Trace(path.to_path_buf())
        } else {
            Input::Kernel(path.to_path_buf())
        }
    }

    /// Loads the input (a trace's first pass; its blocks are read when dispatched).
    pub fn load(&self, params: &[(String, i64)], threads: usize) -> Result<Loaded, RunError> {
        self.load_with(params, threads, crate::frontend::Compiler::Builtin)
            .map(|x| x.0)
    }

    /// [`Input::load`] with the compiler for `.cu` files, and the front end that ran.
    pub fn load_with(
        &self,
        params: &[(String, i64)],
        threads: usize,
        compiler: crate::frontend::Compiler,
    ) -> Result<(Loaded, Option<crate::frontend::FrontEnd>), RunError> {
        match self {
            Input::Kernel(p) => {
                let (w, fe) = crate::frontend::load_with(p, params, compiler)?;
                Ok((Loaded::Kernel(w), Some(fe)))
            }
            Input::Trace(p) => {
                if let Some((name, _)) = params.first() {
                    return Err(RunError::TraceParam { name: name.clone() });
                }
                Ok((Loaded::Trace(trace::load_threads(p, threads)?), None))
            }
        }
    }
}

/// A completed run.
pub struct RunOutput {
    pub config: GpuConfig,
    pub input: Loaded,
    /// The front end that turned the workload file into IR (none for a trace).
    pub front_end: Option<crate::frontend::FrontEnd>,
    pub result: RunResult,
    /// The human summary (workload, config, statistics, checks, races).
    pub summary: String,
}

impl RunOutput {
    pub fn failed_checks(&self) -> usize {
        self.result.checks.iter().filter(|c| !c.passed).count()
    }
}

/// Parses one `--param NAME=VALUE` (decimal, or hexadecimal with `0x`).
pub fn parse_param(arg: &str) -> Result<(String, i64), RunError> {
    let bad = || RunError::BadParam {
        arg: arg.to_string(),
    };
    let (name, value) = arg.split_once('=').ok_or_else(bad)?;
    let (name, value) = (name.trim(), value.trim().replace('_', ""));
    let ok_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok_name {
        return Err(bad());
    }
    let (neg, digits) = match value.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, value.as_str()),
    };
    let hex = digits.strip_prefix("0x");
    let well_formed = !digits.is_empty()
        && match hex {
            Some(h) => !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()),
            None => digits.chars().all(|c| c.is_ascii_digit()),
        };
    if !well_formed {
        return Err(bad());
    }
    let too_large = || RunError::ParamRange {
        arg: arg.to_string(),
        value: value.clone(),
    };
    // Hexadecimal takes the full 64 bits (0xffffffffffffffff is -1); decimal must fit i64.
    let v = match hex {
        Some(h) => u64::from_str_radix(h, 16).ok().map(|v| v as i64),
        None => digits
            .parse::<u64>()
            .ok()
            .filter(|&v| v <= i64::MAX as u64 || (neg && v == 1 << 63))
            .map(|v| v as i64),
    }
    .ok_or_else(too_large)?;
    Ok((name.to_string(), if neg { v.wrapping_neg() } else { v }))
}

/// Loads, runs and writes the requested outputs.
pub fn execute(args: &RunArgs) -> Result<RunOutput, RunError> {
    execute_reporting(args, None)
}

/// [`execute`], telling `progress` the work-groups finished (`RunOptions::progress`).
pub fn execute_reporting(
    args: &RunArgs,
    progress: Option<machine::ProgressHook>,
) -> Result<RunOutput, RunError> {
    let config = config::load(args.config.as_deref(), &args.sets)?;
    let config_name = args
        .config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| config::DEFAULT_NAME.to_string());
    execute_on(args, config, &config_name, progress)
}

/// [`execute_reporting`] on a config the caller loaded (`args.config` and `args.sets` are not read),
/// named `config_name` in the summary and the JSON document: an embedded preset by name (the Python
/// package's `config="a100"`).
pub fn execute_on(
    args: &RunArgs,
    config: GpuConfig,
    config_name: &str,
    progress: Option<machine::ProgressHook>,
) -> Result<RunOutput, RunError> {
    let compiler = args.compiler.unwrap_or(crate::frontend::Compiler::Builtin);
    let (input, front_end) =
        Input::of(&args.input).load_with(&args.params, args.threads, compiler)?;
    if let Loaded::Trace(t) = &input {
        // Before the run, so that a block too large for this config names its `-block dim` line.
        for k in t.kernels() {
            k.check_fits(&config.sm)?;
        }
    }
    let opts = RunOptions {
        seed: args.seed,
        races: args.races,
        threads: args.threads,
        timeline: args.timeline.as_ref().map(|t| t.1.clone()),
        stats_interval: args.intervals.as_ref().map(|i| i.0),
        progress,
        ..Default::default()
    };
    let result = match &input {
        Loaded::Kernel(w) => machine::run(&config, w, &opts)?,
        Loaded::Trace(t) => machine::run_trace(&config, t, &opts)?,
    };
    let input_name = args.input.display().to_string();
    let overrides = Overrides::of(args);
    let rows = if args.csv.is_some() || args.stats_json.is_some() {
        stat_rows(args, &result)
    } else {
        Vec::new()
    };
    if let Some(path) = &args.json {
        let text = document_text(&result, config_name, args, &input, front_end.as_ref());
        write(path, text.as_bytes())?;
    }
    if let Some(path) = &args.csv {
        let table = stats::Stats { rows: rows.clone() };
        write(path, table.to_csv().as_bytes())?;
    }
    if let Some(path) = &args.stats_json {
        write(path, records::of_rows(&rows).as_bytes())?;
    }
    if let (Some((_, path)), Some(i)) = (&args.intervals, &result.intervals) {
        // The overrides first, at cycle 0 (no counter has that location, so sums are unchanged).
        let merged = merge_intervals(i, MAX_INTERVALS);
        let csv = merged.as_ref().unwrap_or(i).to_csv();
        let (header, body) = csv.split_once('\n').unwrap_or((csv.as_str(), ""));
        let mut text = format!("{header}\n");
        for r in overrides.rows() {
            let _ = writeln!(
                text,
                "0,{},{},1,{}",
                r.location,
                stats::csv_field(&r.metric),
                r.unit
            );
        }
        text.push_str(body);
        write(path, text.as_bytes())?;
    }
    let mut summary = summary(&config, config_name, &input, &input_name, args, &result);
    if let Some(fe) = &front_end {
        // After the workload line: which compiler turned the file into IR.
        let at = summary.find('\n').map_or(summary.len(), |i| i + 1);
        summary.insert_str(at, &format!("compiler          {}\n", fe.describe()));
    }
    if let (Some(every), Some(i)) = (args.intervals.as_ref().map(|i| i.0), &result.intervals) {
        if let Some(m) = merge_intervals(i, MAX_INTERVALS) {
            let _ = writeln!(
                summary,
                "intervals         {} of {every} cycles; the CSV merges each {} into one: {} \
                 intervals of {} cycles (a CSV holds at most {MAX_INTERVALS})",
                interval_count(i),
                m.every / every,
                interval_count(&m),
                m.every
            );
        }
    }
    if let (Some((path, _)), Some(t)) = (&args.timeline, &result.timeline) {
        write(path, t.json.as_bytes())?;
        summary.push_str(&timeline_line(path, t));
    }
    Ok(RunOutput {
        config,
        input,
        front_end,
        result,
        summary,
    })
}

/// The most intervals an `--interval-csv` holds: a run with more (`--stats-interval 1` on a long
/// run) has each run of `k` consecutive intervals merged into one, `k` the smallest that fits, so
/// that the file stays within what `plot --kind intervals` reads (`text::MAX_BYTES`; 18 rows an
/// interval of at most about 110 bytes each: under 16 MiB). The run's summary says so.
pub const MAX_INTERVALS: usize = 1 << 13;

/// How many intervals (distinct end cycles) `i` holds.
fn interval_count(i: &machine::interval::Intervals) -> usize {
    let mut n = 0;
    let mut last = None;
    for r in &i.rows {
        if last != Some(r.cycle) {
            n += 1;
            last = Some(r.cycle);
        }
    }
    n
}

/// `i` with each `k` consecutive intervals merged into one (the last group may hold fewer), `k` the
/// smallest for at most `max` intervals; `None` when `i` already fits. A merged interval ends at its
/// group's last cycle; a counter is the group's sum (so a counter's rows still add up to the run's
/// total), a rate (`gpu.ipc`, `dram.bandwidth`) the mean weighted by each interval's cycles (the
/// group's instructions per cycle, bytes per time), a level (`store_buffer.entries`) the value at
/// the group's end.
pub fn merge_intervals(
    i: &machine::interval::Intervals,
    max: usize,
) -> Option<machine::interval::Intervals> {
    use machine::interval::{IntervalRow, Intervals};
    let n = interval_count(i);
    if n <= max {
        return None;
    }
    let k = n.div_ceil(max.max(1));
    // Rows grouped by interval, in order.
    let mut groups: Vec<&[IntervalRow]> = Vec::with_capacity(n);
    let mut start = 0;
    for j in 1..=i.rows.len() {
        if j == i.rows.len() || i.rows[j].cycle != i.rows[start].cycle {
            groups.push(&i.rows[start..j]);
            start = j;
        }
    }
    let is_rate = |r: &IntervalRow| {
        matches!(
            (r.location, r.metric),
            ("gpu", "ipc") | ("dram", "bandwidth")
        )
    };
    let is_level = |r: &IntervalRow| (r.location, r.metric) == ("store_buffer", "entries");
    let mut rows = Vec::with_capacity(i.rows.len() / k + 32);
    let mut prev_end = 0u64;
    for chunk in groups.chunks(k) {
        let end = chunk[chunk.len() - 1][0].cycle;
        let span = end.saturating_sub(prev_end);
        // Every interval of a run has the same rows in the same order (`interval::Sampler`).
        let mut merged: Vec<IntervalRow> = chunk[0]
            .iter()
            .map(|r| IntervalRow {
                cycle: end,
                value: 0.0,
                ..r.clone()
            })
            .collect();
        let mut at = prev_end;
        for g in chunk {
            let s = g[0].cycle.saturating_sub(at) as f64;
            at = g[0].cycle;
            for (m, r) in merged.iter_mut().zip(g.iter()) {
                if is_level(r) {
                    m.value = r.value;
                } else if is_rate(r) {
                    m.value += if span > 0 {
                        r.value * s / span as f64
                    } else {
                        0.0
                    };
                } else {
                    m.value += r.value;
                }
            }
        }
        rows.extend(merged);
        prev_end = end;
    }
    Some(Intervals {
        every: i.every * k as u64,
        rows,
    })
}

/// The summary's line about a written timeline (and its truncation, if the limit was reached).
pub fn timeline_line(path: &Path, t: &machine::timeline::Timeline) -> String {
    format!(
        "timeline          {}: {} trace events\n{}",
        path.display(),
        t.events,
        timeline_truncation(t)
    )
}

/// The warning for a timeline that reached its event limit (empty if it did not).
pub fn timeline_truncation(t: &machine::timeline::Timeline) -> String {
    let mut s = String::new();
    if let Some(c) = t.truncated_at {
        let _ = writeln!(
            s,
            "warning: the timeline reached --timeline-limit {} events: it holds what starts before cycle {c}; \
             raise --timeline-limit or pick a stretch with --timeline-window A..B",
            t.limit
        );
    }
    s
}

/// What `run --json` writes (schema [`records::RUN`], `docs/run.md` "Outputs and their schemas"): the run's
/// inputs, its result and every statistic. Version 2 added `schema` and `version`, and writes
/// `parameters` and `reports` as objects `{"NAME": value}` in declaration order (version 1: arrays of
/// `[name, value]` pairs); every other key is as in version 1.
#[derive(Debug, Serialize)]
pub struct RunDocument<'a> {
    pub schema: &'static str,
    pub version: u32,
    pub tool: String,
    /// The config file, or the embedded default's name.
    pub config: &'a str,
    pub workload: &'a str,
    /// The front end that compiled the workload (`kern`, `ptx`, `builtin`, `nvrtc`); absent for traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiler: Option<&'static str>,
    pub seed: u64,
    /// What the command line changed: `--set KEY=VALUE` and `--param NAME=VALUE`, as given (version 3).
    pub overrides: Overrides<'a>,
    /// The workload's parameters as resolved for this run (none for a trace).
    #[serde(serialize_with = "ordered_map")]
    pub parameters: &'a [(String, i64)],
    pub cycles: u64,
    pub time_ns: f64,
    pub checks: &'a [machine::CheckOutcome],
    /// Reported quantities (`report NAME = expr`).
    #[serde(serialize_with = "ordered_map")]
    pub reports: &'a [(String, i64)],
    pub races: &'a [machine::RaceReport],
    /// Tidy rows `{location, metric, value, unit}`.
    pub stats: &'a [stats::Stat],
}

impl<'a> RunDocument<'a> {
    pub fn new(
        r: &'a RunResult,
        config: &'a str,
        workload: &'a str,
        seed: u64,
        parameters: &'a [(String, i64)],
    ) -> RunDocument<'a> {
        RunDocument {
            schema: records::RUN.schema,
            version: records::RUN.version,
            tool: format!("gpumemsim {}", env!("CARGO_PKG_VERSION")),
            config,
            workload,
            compiler: None,
            seed,
            overrides: Overrides::default(),
            parameters,
            cycles: r.cycles,
            time_ns: r.time_ns,
            checks: &r.checks,
            reports: &r.reports,
            races: &r.races,
            stats: &r.stats.rows,
        }
    }
}

/// The text `run --json` writes: the [`RunDocument`] of a run, pretty-printed, with a final newline.
pub fn document_text(
    r: &RunResult,
    config: &str,
    args: &RunArgs,
    input: &Loaded,
    front_end: Option<&crate::frontend::FrontEnd>,
) -> String {
    let parameters = match input {
        Loaded::Kernel(w) => w.parameters.as_slice(),
        Loaded::Trace(_) => &[],
    };
    let workload = args.input.display().to_string();
    let mut doc = RunDocument::new(r, config, &workload, args.seed, parameters);
    doc.compiler = front_end.map(|f| f.name());
    doc.overrides = Overrides::of(args);
    let mut text = serde_json::to_string_pretty(&doc).expect("a run document always serialises");
    text.push('\n');
    text
}

/// The statistics rows `--csv` and `--stats-json` write: the command line's overrides first, then the
/// run's statistics.
pub fn stat_rows(args: &RunArgs, r: &RunResult) -> Vec<stats::Stat> {
    let mut rows = Overrides::of(args).rows();
    rows.extend(r.stats.rows.iter().cloned());
    rows
}

/// The `--json` array of `gpumemsim litmus` (and the Python binding's `json`): each test's report
/// with the command line's `--set` overrides, as a run's JSON records them (`overrides`).
pub fn litmus_json(
    results: &[crate::litmus::LitmusResult],
    config_name: &str,
    seed: u64,
    sets: &[String],
) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Doc<'a> {
        #[serde(flatten)]
        test: crate::litmus::JsonTest,
        overrides: Overrides<'a>,
    }
    let docs: Vec<Doc> = results
        .iter()
        .map(|r| Doc {
            test: crate::litmus::json_report(r, config_name, seed),
            overrides: Overrides {
                set: sets,
                param: &[],
            },
        })
        .collect();
    serde_json::to_string_pretty(&docs)
}

/// The command line's overrides of a run, recorded in every output so that runs that differ only in
/// them can be told apart (issue 45 item 3).
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct Overrides<'a> {
    /// `--set KEY=VALUE`, in command-line order, as given.
    pub set: &'a [String],
    /// `--param NAME=VALUE`, in command-line order.
    #[serde(serialize_with = "ordered_map")]
    pub param: &'a [(String, i64)],
}

impl<'a> Overrides<'a> {
    /// The overrides a run's arguments give.
    pub fn of(args: &'a RunArgs) -> Overrides<'a> {
        Overrides {
            set: &args.sets,
            param: &args.params,
        }
    }

    /// `; --set K=V --param N=V` for the summary's config line (empty without overrides).
    pub fn summary_suffix(&self) -> String {
        let flags = self.flags();
        if flags.is_empty() {
            String::new()
        } else {
            format!("; {}", flags.join(" "))
        }
    }

    /// Each override as its command-line flag, `--set KEY=VALUE` then `--param NAME=VALUE`.
    pub fn flags(&self) -> Vec<String> {
        let sets = self.set.iter().map(|s| format!("--set {}", s.trim()));
        let params = self.param.iter().map(|(n, v)| format!("--param {n}={v}"));
        sets.chain(params).collect()
    }

    /// The overrides as statistics rows (`override`, the flag, 1, `flag`), first in `--csv` and
    /// `--stats-json`: tidy rows whose values stay numbers.
    pub fn rows(&self) -> Vec<stats::Stat> {
        self.flags()
            .into_iter()
            .map(|f| stats::Stat {
                location: "override".to_string(),
                metric: f,
                value: 1.0,
                unit: "flag".to_string(),
            })
            .collect()
    }
}

/// `[(name, value)]` as a JSON object, keys in the given order.
fn ordered_map<S: serde::Serializer>(pairs: &&[(String, i64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    stats::write_atomic(path, bytes).map_err(|source| RunError::Write {
        path: path.display().to_string(),
        source,
    })
}

fn dims(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

fn summary(
    cfg: &GpuConfig,
    config_name: &str,
    loaded: &Loaded,
    input: &str,
    args: &RunArgs,
    r: &RunResult,
) -> String {
    let mut s = String::new();
    let wl = match loaded {
        Loaded::Kernel(wl) => wl,
        Loaded::Trace(t) => {
            for k in t.kernels() {
                let (warp, thread) = k.instruction_counts();
                let _ = writeln!(
                    s,
                    "trace kernel {:<5} {} ({}): {} blocks × {} threads, {warp} warp / {thread} thread instructions",
                    k.id,
                    k.name,
                    k.file.display(),
                    dims(k.grid),
                    dims(k.block)
                );
                for (op, n) in &k.unknown_opcodes() {
                    let _ = writeln!(
                        s,
                        "  unknown opcode    {op}: {n} instructions timed as integer ALU"
                    );
                }
            }
            let _ = writeln!(
                s,
                "config            {config_name}, seed {}{}; timing only (a trace carries no values)",
                args.seed,
                overrides_of(args).summary_suffix()
            );
            s.push_str(&stats_summary(cfg, args, r));
            return s;
        }
    };
    let g = wl.geometry;
    let _ = writeln!(
        s,
        "workload          {} ({input}): {} work-groups × {} work-items{}",
        wl.kernel.name,
        dims(g.groups),
        dims(g.group_size),
        if wl.parameters.is_empty() {
            String::new()
        } else {
            format!(
                "; {}",
                wl.parameters
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
    );
    let _ = writeln!(
        s,
        "config            {config_name}, seed {}{}",
        args.seed,
        overrides_of(args).summary_suffix()
    );
    s.push_str(&stats_summary(cfg, args, r));
    s
}

fn overrides_of(args: &RunArgs) -> Overrides<'_> {
    Overrides {
        set: &args.sets,
        param: &args.params,
    }
}

/// The machine's summary ([`RunResult::summary`]) with the lines whose wording depends on the run
/// decided here from the statistics (issue 45 item 3): IPC is for the whole GPU; the atomic-wait line
/// says where the queueing is only as far as the per-slice statistics show it; `--races` says what it
/// checked when it found nothing.
fn stats_summary(cfg: &GpuConfig, args: &RunArgs, r: &RunResult) -> String {
    let g = |loc: &str, m: &str| r.stats.get(loc, m).unwrap_or(0.0);
    let mut s = String::new();
    for line in r.summary(cfg).lines() {
        if line.starts_with("instructions      ") {
            let _ = writeln!(
                s,
                "instructions      {:.0} warp ({:.0} thread), IPC {:.2} for the whole GPU ({} SMs), {:.0} memory",
                g("gpu", "warp_instructions"),
                g("gpu", "thread_instructions"),
                g("gpu", "ipc"),
                cfg.sm.count,
                g("gpu", "memory_instructions")
            );
        } else if line.starts_with("atomic waits      ") {
            let _ = writeln!(
                s,
                "atomic waits      mean queueing {:.1} L2 cycles per request before its slice's unit starts it{}; \
                 same-address wait {:.0} L2 cycles in total (inside the unit, behind an earlier op to the address)",
                g("atomics.l2", "mean_queue_delay"),
                where_atomics_queue(
                    g("atomics.l2", "mean_queue_delay"),
                    g("atomics.l2", "utilisation"),
                    g("atomics.l2", "busiest_slice_utilisation"),
                    cfg.l2.slices,
                ),
                g("atomics.l2", "same_address_wait"),
            );
        } else {
            s.push_str(line);
            s.push('\n');
        }
    }
    if args.races {
        if r.races.is_empty() {
            s.push_str(
                "races             no races found: every global and local access checked for data races \
                 (a plain access unordered with a conflicting one) and scope races (conflicting atomics \
                 whose scopes do not include each other's thread), by happens-before with vector clocks\n",
            );
        } else {
            let _ = writeln!(
                s,
                "races             {} found (each pair of instructions once, listed above)",
                r.races.len()
            );
        }
    }
    s
}

/// The note after the mean queueing: the busiest slice's share of all the L2 atomic units' busy
/// time, which says whether the queueing is at one slice (hot addresses of few lines) or spread.
/// Empty when nothing queued. `utilisation` is the mean over `slices` slices.
fn where_atomics_queue(mean_queue: f64, utilisation: f64, busiest: f64, slices: u32) -> String {
    let total = utilisation * f64::from(slices.max(1));
    if mean_queue < 0.05 || total <= 0.0 {
        return String::new();
    }
    let share = (busiest / total).min(1.0);
    if slices > 1 && share >= 0.5 {
        format!(
            " (the busiest slice does {:.0}% of the atomic work: its hot addresses queue here)",
            100.0 * share
        )
    } else {
        format!(
            " (spread over the slices: the busiest does {:.0}% of the atomic work)",
            100.0 * share
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::interval::{IntervalRow, Intervals};

    /// 3 rows an interval (a counter, a rate, a level) of uneven spans.
    fn intervals(n: u64) -> Intervals {
        let mut rows = Vec::new();
        let mut cycle = 0;
        for j in 0..n {
            let span = 1 + j % 3;
            cycle += span;
            let count = (j * 7 % 11) as f64;
            for (metric, value) in [
                ("warp_instructions", count),
                ("ipc", count / span as f64),
                ("entries", j as f64),
            ] {
                rows.push(IntervalRow {
                    cycle,
                    location: if metric == "entries" {
                        "store_buffer"
                    } else {
                        "gpu"
                    },
                    metric,
                    value,
                    unit: "u",
                });
            }
        }
        Intervals { every: 1, rows }
    }

    /// Merged intervals keep a counter's total, the run's end cycle, the rate over each merged
    /// interval and the level at its end; a run that fits is left alone.
    #[test]
    fn an_interval_csv_past_its_limit_merges_intervals_keeping_totals_rates_and_levels() {
        let i = intervals(1000);
        assert!(merge_intervals(&i, 1000).is_none());
        let m = merge_intervals(&i, 300).unwrap();
        assert_eq!(interval_count(&m), 250, "k = 4, the smallest that fits");
        assert_eq!(m.every, 4);
        let total = |x: &Intervals, metric: &str| -> f64 {
            x.rows
                .iter()
                .filter(|r| r.metric == metric)
                .map(|r| r.value)
                .sum()
        };
        assert_eq!(
            total(&m, "warp_instructions"),
            total(&i, "warp_instructions")
        );
        assert_eq!(m.rows.last().unwrap().cycle, i.rows.last().unwrap().cycle);
        // The first merged interval: intervals 0..4 of spans 1, 2, 3, 1.
        let first: Vec<f64> = m.rows[..3].iter().map(|r| r.value).collect();
        let counts: f64 = (0..4).map(|j| (j * 7 % 11) as f64).sum();
        assert_eq!(m.rows[0].cycle, 7);
        assert_eq!(first[0], counts);
        assert!((first[1] - counts / 7.0).abs() < 1e-12, "{first:?}");
        assert_eq!(first[2], 3.0, "the level at the group's end");
        // 1001 intervals into at most 500: k = 3, the last group holding the rest.
        let m = merge_intervals(&intervals(1001), 500).unwrap();
        assert_eq!(interval_count(&m), 334);
    }

    /// At the limit, an interval CSV of the longest rows fits what `plot` reads.
    #[test]
    fn the_interval_limit_fits_the_text_reader() {
        let row = IntervalRow {
            cycle: u64::MAX,
            location: "interconnect",
            metric: "thread_instructions",
            value: 1.234_567_890_123_456_7e18 + 0.5,
            unit: "warp instructions/cycle",
        };
        let i = Intervals {
            every: 1,
            rows: vec![row; 18],
        };
        let bytes = i.to_csv().len() * MAX_INTERVALS;
        assert!((bytes as u64) < crate::text::MAX_BYTES / 2, "{bytes}");
    }
}
