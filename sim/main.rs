//! `gpumemsim`: the thin command-line front of the library. It parses arguments (clap derive), calls
//! the library, prints what it returns, and turns errors into a message with their whole cause chain and
//! exit status 1. Nothing here models hardware or knows a file format.
//!
//! Exit status (README "Exit status"): 0 success; 1 a failed check, a bad input file, a value the
//! config or workload refuses, a run the watchdog stopped; 2 a malformed command line (clap's usage
//! errors: an unknown flag, a missing argument, a flag value not of its form or range, such as
//! `--iterations 0` or `--param N`). Flag values are checked here by clap's value parsers so that
//! every one of them exits 2.
//!
//! Each subcommand is one variant of [`Command`] with its argument struct, and one `cmd_*` function
//! that returns the process exit code; the sweep and litmus families live in `cli/`.

/// `print!` for the CLI: a closed stdout ends the command quietly (`cli/out.rs`).
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::out::stdout(format_args!($($t)*)) };
}
/// `println!` for the CLI: a closed stdout ends the command quietly (`cli/out.rs`).
macro_rules! outln {
    () => { $crate::cli::out::stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::out::stdout(format_args!("{}\n", format_args!($($t)*))) };
}
/// `eprint!` that never panics (`cli/out.rs`).
macro_rules! err {
    ($($t:tt)*) => { $crate::cli::out::stderr(format_args!($($t)*)) };
}
/// `eprintln!` that never panics (`cli/out.rs`).
macro_rules! errln {
    ($($t:tt)*) => { $crate::cli::out::stderr(format_args!("{}\n", format_args!($($t)*))) };
}

mod cli;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use cli::litmus::*;
use cli::sweep::*;
use gpumemsim::config;
use gpumemsim::sweep;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpumemsim",
    version = gpumemsim::version::BUILD,
    about = "Cycle-level GPU memory-system simulator with scoped weak-memory semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload and print a summary; exit 1 when a check fails or the run cannot complete.
    Run(RunCmd),
    /// Run litmus tests (herd format, PTX or OpenCL dialect) on the simulated GPU.
    Litmus(LitmusArgs),
    /// The memory model's allowed final states and verdict for litmus tests (the oracle).
    Model(ModelArgs),
    /// Run a parameter sweep from a spec (TOML), or one shard of it; `sweep plan|submit|status|merge`.
    Sweep(SweepArgs),
    /// Draw one chart (PNG or SVG by extension) from a sweep's output folder.
    Plot(PlotArgs),
    /// Validate, show and document hardware configs (TOML).
    #[command(subcommand)]
    Config(ConfigCmd),
    /// The presets against published hardware numbers (reports/reference, found from any
    /// directory): each row's signed error, MAPE per preset, a chart; exit 1 when a row or a
    /// preset's MAPE misses its tolerance.
    Validate(ValidateArgs),
    /// The physical GPU through wgpu: `gpu list` (adapters), `gpu measure` (a suite on an adapter),
    /// `gpu compare` (simulated beside measured).
    #[command(subcommand)]
    Gpu(GpuCmd),
    /// Same as `gpu measure`.
    #[command(hide = true)]
    Measure(MeasureCmd),
    /// Same as `gpu compare`.
    #[command(hide = true)]
    Compare(CompareCmd),
    /// Measure simulation speed on a fixed set of workloads (synthetic traces, kernels).
    Bench(BenchCmd),
}

#[derive(Subcommand)]
enum ConfigCmd {
    /// Validate config files: prints `FILE: ok` or the error for each; exit 1 if any is invalid.
    Check {
        /// Config files (TOML; each may build on a preset with `base = "h100"`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Print the resolved config as TOML, each value with its origin (preset, file:line:col, --set,
    /// default).
    Show {
        /// Config file (TOML); default: the embedded H100 preset.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// Override one key, e.g. `--set l2.slices=8` (repeatable; checked like the file).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
        set: Vec<String>,
    },
    /// Print every key with its type, unit, allowed values, default and description.
    Doc {
        /// As the markdown table of docs/configs.md's configuration reference.
        #[arg(long)]
        markdown: bool,
    },
}

fn cmd_config(c: ConfigCmd) -> Result<ExitCode> {
    match c {
        ConfigCmd::Check { files } => {
            let mut failed = false;
            for f in &files {
                match config::load(Some(f), &[]) {
                    Ok(_) => outln!("{}: ok", f.display()),
                    Err(e) => {
                        failed = true;
                        errln!("{e}");
                    }
                }
            }
            Ok(ExitCode::from(failed as u8))
        }
        ConfigCmd::Show { file, set } => {
            let resolved = config::load_resolved(file.as_deref(), &set)?;
            out!("{}", config::show::render(&resolved)?);
            Ok(ExitCode::SUCCESS)
        }
        ConfigCmd::Doc { markdown } => {
            let cfg = config::default_config()?;
            let out = if markdown {
                config::doc::markdown(&cfg, config::DEFAULT_NAME)?
            } else {
                config::doc::text(&cfg)?
            };
            out!("{out}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("interval_file").args(["interval_csv", "out"]).multiple(true)))]
struct RunCmd {
    /// The compiler for `.cu` files: nvrtc (NVIDIA's runtime compiler → PTX), builtin (the C subset
    /// front end), auto (NVRTC when found).
    #[arg(long, default_value = "auto", value_parser = parse_compiler)]
    compiler: gpumemsim::frontend::Compiler,
    /// Workload file (`workloads/*.kern`, or CUDA `.cu` / OpenCL C `.cl`), or an Accel-Sim trace: its
    /// `kernelslist.g` or the directory holding it (replayed for timing only).
    kernel: PathBuf,
    /// Hardware config (TOML); default: the embedded H100 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Seed of the run's random source (default 0, as on every command).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = seed)]
    seed: u64,
    /// Override a config value, e.g. `--set l2.slices=8` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Override a workload parameter, e.g. `--param N=4096` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = gpumemsim::runner::parse_param)]
    param: Vec<(String, i64)>,
    /// Write the run as one JSON document: inputs, checks, races and every statistic.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the statistics as tidy CSV rows `location,metric,value,unit`.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the statistics as a JSON array of records {location, metric, value, unit}
    /// (`pandas.read_json` reads it as a table).
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// Detect data races and scope races.
    #[arg(long)]
    races: bool,
    /// Threads simulating the run (the SMs and memory partitions in parallel); results are
    /// identical for any number.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    #[command(flatten)]
    timeline: TimelineArgs,
    /// Sample the key statistics every N core cycles (written by --interval-csv, or into --out).
    #[arg(long, value_name = "N", requires = "interval_file", value_parser = clap::value_parser!(u64).range(1..))]
    stats_interval: Option<u64>,
    /// Write the --stats-interval samples as tidy CSV `cycle,location,metric,value,unit` (at most
    /// 8192 intervals: past that, consecutive intervals are merged, and the summary says so).
    #[arg(long, value_name = "FILE", requires = "stats_interval")]
    interval_csv: Option<PathBuf>,
    /// Folder (created if missing) for every output of the run: summary.txt (what the run prints),
    /// run.json (as --json), stats.csv (--csv), stats.json (--stats-json), and with
    /// --stats-interval N intervals.csv; files of these names there are replaced. A --timeline
    /// FILE is written where it names.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "csv", "stats_json", "interval_csv"])]
    out: Option<PathBuf>,
}

/// The files `run --out DIR` writes: the summary, then what `--json`, `--csv`, `--stats-json` and
/// `--interval-csv` would.
const RUN_OUT_FILES: [&str; 5] = [
    "summary.txt",
    "run.json",
    "stats.csv",
    "stats.json",
    "intervals.csv",
];

impl RunCmd {
    /// With `--out DIR`: every output flag pointed into DIR (the interval samples only when
    /// --stats-interval asks for them); the folder and the names of the files the run writes there.
    fn fill_out(&mut self) -> Option<(PathBuf, Vec<&'static str>)> {
        let dir = self.out.clone()?;
        let [_, json, csv, stats, intervals] = RUN_OUT_FILES;
        self.json = Some(dir.join(json));
        self.csv = Some(dir.join(csv));
        self.stats_json = Some(dir.join(stats));
        let mut names = RUN_OUT_FILES[..4].to_vec();
        if self.stats_interval.is_some() {
            self.interval_csv = Some(dir.join(intervals));
            names.push(intervals);
        }
        Some((dir, names))
    }
}

/// `--timeline` and its bounds (run and litmus).
#[derive(Args)]
struct TimelineArgs {
    /// Write a timeline of the run as a Chrome trace (open it in ui.perfetto.dev or
    /// chrome://tracing): warps, memory requests through each part, counters.
    #[arg(long, value_name = "FILE.json")]
    timeline: Option<PathBuf>,
    /// Record only core cycles A..B (either side may be left out: 5000.., ..2000).
    #[arg(long, value_name = "A..B", requires = "timeline", value_parser = gpumemsim::machine::timeline::parse_window)]
    timeline_window: Option<(u64, u64)>,
    /// The most trace events the file holds; past it the file keeps what starts before the first
    /// event dropped, and the run says so.
    #[arg(long, value_name = "N", requires = "timeline", default_value_t = gpumemsim::machine::timeline::DEFAULT_LIMIT as u64, value_parser = clap::value_parser!(u64).range(1..))]
    timeline_limit: u64,
}

impl TimelineArgs {
    fn get(&self) -> Option<(PathBuf, gpumemsim::machine::timeline::TimelineOptions)> {
        let path = self.timeline.clone()?;
        Some((
            path,
            gpumemsim::machine::timeline::TimelineOptions {
                window: self.timeline_window,
                limit: self.timeline_limit as usize,
            },
        ))
    }
}

fn parse_compiler(s: &str) -> std::result::Result<gpumemsim::frontend::Compiler, String> {
    gpumemsim::frontend::Compiler::parse(s)
        .ok_or_else(|| format!("`{s}`: expected nvrtc, builtin or auto"))
}

fn cmd_run(mut c: RunCmd) -> Result<ExitCode> {
    use cli::outputs::{check, check_io, Kind::File, Kind::Folder};
    check(&[("--out", c.out.as_deref(), Folder)])?;
    let out_dir = c.fill_out();
    // A folder this run made is removed again if the run fails before writing into it.
    let made = match &out_dir {
        Some((dir, _)) if !dir.exists() => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
            Some(dir.clone())
        }
        _ => None,
    };
    check_io(
        &[
            ("--json", c.json.as_deref(), File),
            ("--csv", c.csv.as_deref(), File),
            ("--stats-json", c.stats_json.as_deref(), File),
            ("--timeline", c.timeline.timeline.as_deref(), File),
            ("--interval-csv", c.interval_csv.as_deref(), File),
        ],
        &[
            ("the kernel", Some(&c.kernel)),
            ("the --config", c.config.as_deref()),
        ],
    )?;
    let label = if c.races { "run --races" } else { "run" };
    let progress = std::sync::Arc::new(gpumemsim::progress::Progress::new(label, "work-groups", 0));
    let hook = gpumemsim::machine::ProgressHook(progress.clone());
    let out = gpumemsim::runner::execute_reporting(
        &gpumemsim::runner::RunArgs {
            input: c.kernel,
            config: c.config,
            seed: c.seed,
            sets: c.set,
            params: c.param,
            json: c.json,
            csv: c.csv,
            stats_json: c.stats_json,
            races: c.races,
            threads: c.threads as usize,
            timeline: c.timeline.get(),
            intervals: c.stats_interval.zip(c.interval_csv),
            compiler: Some(c.compiler),
        },
        Some(hook),
    );
    progress.finish();
    if let (Err(_), Some(dir)) = (&out, &made) {
        let _ = std::fs::remove_dir(dir);
    }
    let out = out?;
    out!("{}", out.summary);
    if let Some((dir, names)) = &out_dir {
        let path = dir.join(RUN_OUT_FILES[0]);
        gpumemsim::stats::write_atomic(&path, out.summary.as_bytes())
            .with_context(|| format!("{}: cannot write", path.display()))?;
        outln!("wrote {}/: {}", dir.display(), names.join(", "));
    }
    let failed = out.failed_checks();
    if failed > 0 {
        errln!(
            "error: {failed} of {} checks failed",
            out.result.checks.len()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
struct BenchCmd {
    /// Hardware config (TOML); default: the embedded H100 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value for every workload (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Runs per workload; the fastest counts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Threads simulating each run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// Only the workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Iterations of the litmus MP rate (tiny config, all cores); 0 skips it (as on every
    /// command).
    #[arg(long, default_value_t = 20_000)]
    litmus_iterations: u64,
    /// Write the rows as JSON to this file (`--json` is the older name).
    #[arg(long = "out", visible_alias = "json", value_name = "FILE.json")]
    json: Option<PathBuf>,
}

fn cmd_bench(c: BenchCmd) -> Result<ExitCode> {
    use gpumemsim::bench;
    cli::outputs::check_io(
        &[("--out", c.json.as_deref(), cli::outputs::Kind::File)],
        &[("the --config", c.config.as_deref())],
    )?;
    let opts = bench::BenchOptions {
        config: c.config.clone(),
        sets: c.set,
        repeat: c.repeat,
        threads: c.threads as usize,
        only: c.only,
        litmus_iterations: c.litmus_iterations,
    };
    outln!("{}", bench::table_header());
    let rows = bench::run(&opts, |r| outln!("{}", bench::table_line(r)))?;
    let litmus = bench::litmus_rate(&opts)?;
    if let Some(l) = &litmus {
        outln!(
            "litmus {} on {}: {} iterations in {:.3} s, {:.0} iterations/s",
            l.test,
            l.config,
            l.iterations,
            l.seconds,
            l.iterations_per_second
        );
    }
    if let Some(path) = c.json {
        let report = bench::BenchReport {
            tool: format!("gpumemsim {}", env!("CARGO_PKG_VERSION")),
            config: c
                .config
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| config::DEFAULT_NAME.to_string()),
            repeat: opts.repeat,
            threads: opts.threads,
            rows,
            litmus,
        };
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        gpumemsim::stats::write_atomic(&path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
enum GpuCmd {
    /// List the adapters: name, backend, device type, driver, timestamp/atomic/subgroup features, limits.
    List,
    /// Run a measurement suite on an adapter and write the measurement file (exit 1 if a case failed).
    Measure(MeasureCmd),
    /// Simulate a measurement file's suite with a config and put the predictions beside it.
    Compare(CompareCmd),
    /// Write the shader a workload (.kern, .cu, .cl, .ptx) or litmus test becomes, without an adapter.
    Emit(cli::gpu::EmitCmd),
}

/// Without a usable `XDG_RUNTIME_DIR` the Vulkan loader's window-system probes print
/// "error: XDG_RUNTIME_DIR is invalid or not set" on every adapter query; a private one (mode 0700,
/// per user, under the temporary folder) keeps stderr for our own messages.
#[cfg(unix)]
fn quiet_vulkan_loader() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let usable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o077 == 0)
    };
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| usable(std::path::Path::new(&d))) {
        return;
    }
    // The owner of the temporary folder's entries we create is us: name the folder by our uid.
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("gpumemsim-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let ours = std::fs::metadata(&dir).is_ok_and(|m| m.uid() == uid);
    if ours && usable(&dir) {
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
}

#[cfg(not(unix))]
fn quiet_vulkan_loader() {}

fn cmd_gpu(c: GpuCmd) -> Result<ExitCode> {
    quiet_vulkan_loader();
    match c {
        GpuCmd::Measure(m) => cmd_measure(m),
        GpuCmd::Compare(m) => cmd_compare(m),
        GpuCmd::Emit(e) => cli::gpu::cmd_emit(e),
        GpuCmd::List => {
            let adapters = gpumemsim::device::adapter::list()?;
            for a in &adapters {
                // A CPU adapter's description ends in a warning line.
                out!("{}", a.describe());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Args)]
struct MeasureCmd {
    /// Suite file (TOML).
    #[arg(default_value = "workloads/measure/suite.toml")]
    suite: PathBuf,
    /// Adapter index from `gpumemsim gpu list`.
    #[arg(long)]
    adapter: Option<usize>,
    /// Timed repetitions per case (default: the suite's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    reps: Option<u32>,
    /// Untimed warm-up runs per case (default: the suite's).
    #[arg(long)]
    warmup: Option<u32>,
    /// Measurement file to write, or an existing folder (then named `<device>-<date>.json`).
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
    /// Shader path: SPIR-V with the Vulkan memory model where the adapter has SPIR-V passthrough
    /// (auto), or one of them; the file records which ran per case.
    #[arg(long, value_enum, default_value_t)]
    shader: gpumemsim::device::adapter::ShaderChoice,
}

fn cmd_measure(c: MeasureCmd) -> Result<ExitCode> {
    use gpumemsim::device::measure;
    cli::outputs::check_io(
        &[("--out", Some(&c.out), cli::outputs::Kind::FileOrFolder)],
        &[("the suite", Some(&c.suite))],
    )?;
    let args = measure::MeasureArgs {
        suite: c.suite,
        adapter: c.adapter,
        out: c.out,
        opts: measure::MeasureOptions {
            warmup: c.warmup,
            reps: c.reps,
            shader: c.shader,
            ..Default::default()
        },
    };
    let bar = gpumemsim::progress::Progress::new("measure", "cases", 0);
    let out = measure::run(&args, &mut |p| {
        bar.suspend(|| outln!("{}", measure::progress_line(&p)));
        match p {
            measure::Progress::Opened {
                adapter: a, items, ..
            } => {
                bar.set_total(items as u64);
                if a.is_cpu() {
                    bar.println(&format!(
                        "warning: {}: {}",
                        a.name,
                        gpumemsim::device::adapter::CPU_WARNING
                    ));
                }
            }
            measure::Progress::Case(_) | measure::Progress::Litmus(_) => bar.inc(1),
            measure::Progress::Settled(_) | measure::Progress::NoProbe(_) => {}
        }
    })?;
    bar.finish();
    let m = &out.measurement;
    outln!("wrote {}", out.written.display());
    if out.failed() > 0 {
        errln!(
            "error: {} of {} cases and litmus tests gave no result (recorded with their errors in {})",
            out.failed(),
            m.benchmarks.len() + m.litmus.len(),
            out.written.display()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
struct CompareCmd {
    /// Measurement file written by `gpumemsim measure`.
    #[arg(long, value_name = "FILE.json")]
    measured: PathBuf,
    /// Hardware config (TOML); default: the embedded H100 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. `--set l2.slices=8` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Seed of the simulations (default 0, as on every command).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = seed)]
    seed: u64,
    /// Iterations of each litmus test variant in the simulator; 0 skips the litmus tests (as on
    /// every command).
    #[arg(long, default_value_t = 2000)]
    litmus_iterations: u64,
    /// Simulate every case from empty caches (default: the buffers start in the L2, as the
    /// measurement harness's copy of fresh memory before each run leaves them)
    #[arg(long)]
    cold_l2: bool,
    /// Folder for comparison.{md,csv,json} and the plots (PNG and SVG).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Threads simulating the cases in parallel (default: one per core); results are identical
    /// for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
}

fn cmd_compare(c: CompareCmd) -> Result<ExitCode> {
    cli::outputs::check(&[("--out", c.out.as_deref(), cli::outputs::Kind::Folder)])?;
    let args = gpumemsim::device::compare::CompareArgs {
        measured: c.measured,
        config: c.config,
        sets: c.set,
        opts: gpumemsim::device::compare::CompareOptions {
            seed: c.seed,
            litmus_iterations: c.litmus_iterations,
            warm_l2: !c.cold_l2,
        },
        out: c.out,
    };
    let (cmp, written) =
        cli::threads::with_threads(c.threads, || Ok(gpumemsim::device::compare::run(&args)?))?;
    out!("{}", cmp.summary());
    // Left-out cases on the terminal too, not only in comparison.md.
    for (key, why) in &cmp.skipped {
        errln!("left out: {key}: {why}");
    }
    for p in written {
        outln!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `--seed`: an unsigned 64-bit integer. A negative one is refused as a value (clap's own message
/// would suggest `-- -1`, which means something else here).
fn seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| {
        format!(
            "a seed is an integer 0 ..= {}{}",
            u64::MAX,
            if s.trim_start().starts_with('-') {
                " (not negative)"
            } else {
                ""
            }
        )
    })
}

/// `--shard`: the form only (whether the index fits the plan is the plan's to say).
fn shard_form(s: &str) -> Result<String, String> {
    s.parse::<sweep::shard::ShardArg>()
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

/// `--set KEY=VALUE`: the form only (what the value means is the config's to say).
fn key_value(s: &str) -> Result<String, String> {
    match s.split_once('=') {
        Some((k, _)) if !k.trim().is_empty() => Ok(s.to_string()),
        _ => Err("expected KEY=VALUE, e.g. l2.slices=8".into()),
    }
}

#[derive(Args)]
struct ValidateArgs {
    /// A config to validate instead of the presets: checked against the reference set of the preset
    /// it is based on (its `base`, else its file stem).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Folder of reference sets (one `*.toml` per preset; its published sets run), or one set's file
    /// (e.g. the measured reports/reference/h100-measured.toml); default: `reports/reference` here,
    /// else in the source tree the binary was built from, else beside the binary.
    #[arg(long, value_name = "DIR|FILE")]
    reference: Option<PathBuf>,
    /// Write results.csv, results.json and the chart (validate.png, validate.svg) here; with a
    /// loaded-latency curve also loaded.csv and loaded.png / loaded.svg.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Threads running the rows of a preset; results are identical for any number.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
}

fn cmd_validate(a: ValidateArgs) -> Result<ExitCode> {
    use gpumemsim::validate;
    cli::outputs::check(&[("--out", a.out.as_deref(), cli::outputs::Kind::Folder)])?;
    let reference = match &a.reference {
        Some(d) => d.clone(),
        None => validate::default_dir()?,
    };
    let refs = validate::load_path(&reference)?;
    let selected: Vec<&validate::Reference> = match &a.config {
        None => refs.iter().collect(),
        Some(c) => validate::select(&refs, c, &gpumemsim::text::read(c)?, &reference)?,
    };
    // Every row's inputs load before the first row runs (a bad one is named at its line).
    for r in &selected {
        validate::preflight(r, a.config.as_deref())?;
    }
    let mut results = Vec::new();
    for r in selected {
        let p = validate::run(r, a.config.as_deref(), a.threads as usize)?;
        out!("{}", validate::table(&p));
        results.push(p);
    }
    if let Some(out) = &a.out {
        validate::write(out, &results)?;
        outln!(
            "wrote {}/results.csv, results.json, validate.png, validate.svg (and loaded.csv, loaded.png, loaded.svg with a curve)",
            out.display()
        );
    }
    Ok(if results.iter().all(|p| p.passed()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn main() -> ExitCode {
    cli::heap::huge_pages();
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {
        Command::Config(c) => cmd_config(c),
        Command::Run(c) => cmd_run(c),
        Command::Bench(c) => cmd_bench(c),
        Command::Gpu(c) => cmd_gpu(c),
        Command::Measure(c) => {
            quiet_vulkan_loader();
            cmd_measure(c)
        }
        Command::Compare(c) => cmd_compare(c),
        Command::Litmus(a) => cmd_litmus(a),
        Command::Model(a) => cmd_model(a),
        Command::Sweep(a) => cmd_sweep(a),
        Command::Plot(a) => cmd_plot(a),
        Command::Validate(a) => cmd_validate(a),
    };
    cli::out::flush();
    match result {
        Ok(code) => code,
        Err(e) => {
            errln!("error: {e}");
            for cause in e.chain().skip(1) {
                errln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of every subcommand says what it is for in `--help`.
    #[test]
    fn every_flag_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let builtin = matches!(a.get_id().as_str(), "help" | "version");
                if !builtin && a.get_help().is_none() {
                    missing.push(format!("{path} {}", a.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    missing.push(format!("{path} {} (the subcommand)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "gpumemsim", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
        Cli::command().debug_assert();
    }
}
