//! `gpumemsim`: the thin command-line front of the library. It parses arguments (clap derive), calls
//! the library, prints what it returns, and turns errors into a message with their whole cause chain and
//! exit status 1. Nothing here models hardware or knows a file format.
//!
//! Each subcommand is one variant of [`Command`] with its argument struct, and one `cmd_*` function
//! that returns the process exit code.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use gpumemsim::config;
use gpumemsim::sweep;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpumemsim",
    version,
    about = "Cycle-level GPU memory-system simulator with scoped weak-memory semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate, show and document hardware configs (TOML).
    #[command(subcommand)]
    Config(ConfigCmd),
    /// Run a parameter sweep from a spec (TOML), or merge shard outputs (`sweep merge DIR...`).
    Sweep(SweepArgs),
    /// Draw one chart (PNG or SVG by extension) from a sweep's output folder.
    Plot(PlotArgs),
    /// Run a workload and print a summary; exit 1 when a check fails or the run cannot complete.
    Run(RunCmd),
    /// Measure simulation speed on a fixed set of workloads (synthetic traces, kernels).
    Bench(BenchCmd),
    /// The physical GPU through wgpu (`gpu list`: the adapters and what they offer).
    #[command(subcommand)]
    Gpu(GpuCmd),
    /// Run a measurement suite on an adapter and write the measurement file (exit 1 if a case failed).
    Measure(MeasureCmd),
    /// Simulate a measurement file's suite with a config and put the predictions beside it.
    Compare(CompareCmd),
    /// Run litmus tests (herd format, PTX or OpenCL dialect) on the simulated GPU.
    Litmus(LitmusArgs),
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct SweepArgs {
    #[command(subcommand)]
    merge: Option<SweepCmd>,
    /// The sweep spec (TOML).
    #[arg(required = true, value_name = "SPEC")]
    spec: Option<PathBuf>,
    /// Output folder (default: the spec's path without `.toml`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run only slice I of N (0-based), e.g. from a Slurm job array; merge the outputs afterwards.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

#[derive(Subcommand)]
enum SweepCmd {
    /// Join shard output folders into the files a single run writes.
    Merge {
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Where to write the merged outputs (default: the first DIR).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Args)]
struct PlotArgs {
    /// A sweep output folder (holding sweep.json and points/).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Output file: .png or .svg.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: PathBuf,
    /// line, bar, stacked_bar or scatter.
    #[arg(long, default_value = "line")]
    kind: sweep::charts::ChartKind,
    /// Column on x (a parameter; an expression for scatter; none for outcomes).
    #[arg(long)]
    x: Option<String>,
    /// Expression on y, e.g. `kernel.cycles / T`.
    #[arg(long)]
    y: Option<String>,
    /// stacked_bar parts as NAME=EXPR (repeatable, bottom first).
    #[arg(long = "layer", value_name = "NAME=EXPR")]
    layers: Vec<String>,
    /// Column whose values make separate series (repeatable).
    #[arg(long)]
    series: Vec<String>,
    /// Keep rows with COL=VALUE (repeatable).
    #[arg(long = "where", value_name = "COL=VALUE")]
    filter: Vec<String>,
    #[arg(long)]
    title: Option<String>,
    #[arg(long)]
    x_label: Option<String>,
    #[arg(long)]
    x_unit: Option<String>,
    #[arg(long)]
    y_label: Option<String>,
    #[arg(long)]
    y_unit: Option<String>,
    #[arg(long)]
    x_log: bool,
    #[arg(long)]
    y_log: bool,
    /// scatter: draw y = x.
    #[arg(long)]
    identity: bool,
}

/// Draws the sweep's progress bar on stderr (hidden when stderr is not a terminal).
struct Bar(indicatif::ProgressBar);

impl sweep::exec::Progress for Bar {
    fn start(&self, to_run: usize, already_done: usize) {
        self.0.set_length(to_run as u64);
        if already_done > 0 {
            self.0.println(format!(
                "{already_done} points already done; running {to_run}"
            ));
        }
    }
    fn finished(&self, p: &sweep::plan::PointInfo, o: &sweep::exec::Outcome) {
        if let sweep::exec::Outcome::Error { error } = o {
            let first = error.lines().next().unwrap_or("");
            self.0.println(format!(
                "point {} ({} seed {}) failed: {first}",
                p.id, p.workload, p.seed
            ));
        }
        self.0.inc(1);
    }
}

fn report_finish(f: &sweep::Finished) -> ExitCode {
    println!(
        "{} runs; results: {}, report: {}",
        f.rows,
        f.index.with_file_name("results.csv").display(),
        f.index.display()
    );
    for e in &f.chart_errors {
        eprintln!("warning: {e}");
    }
    if f.failed > 0 {
        eprintln!(
            "{} runs failed or failed their checks (listed in the report)",
            f.failed
        );
    }
    ExitCode::from((f.failed > 0 || !f.chart_errors.is_empty()) as u8)
}

fn cmd_sweep(a: SweepArgs) -> Result<ExitCode> {
    if let Some(SweepCmd::Merge { dirs, out }) = a.merge {
        let out = out.unwrap_or_else(|| dirs[0].clone());
        sweep::results::merge(&dirs, &out)?;
        return Ok(report_finish(&sweep::finish(&out)?));
    }
    let spec = a.spec.context("a sweep spec is required")?;
    let shard = a.shard.as_deref().map(str::parse).transpose()?;
    let plan = sweep::spec::load(&spec)?;
    let out = a.out.unwrap_or_else(|| sweep::spec::default_out(&spec));
    let opts = sweep::exec::ExecOptions {
        jobs: a.jobs.map(usize::from),
        shard,
    };
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} points, {per_sec}, eta {eta}",
        )?
        .progress_chars("=> "),
    );
    let s = sweep::exec::execute(&plan, &out, &opts, &Bar(bar.clone()))?;
    bar.finish_and_clear();
    println!(
        "{}: {} points{}: {} ran now, {} were done{}",
        out.display(),
        s.selected,
        shard
            .map(|s: sweep::exec::Shard| format!(" in shard {}/{}", s.index, s.count))
            .unwrap_or_default(),
        s.ran,
        s.already_done,
        if s.failed > 0 {
            format!(", {} failed", s.failed)
        } else {
            String::new()
        }
    );
    if s.complete {
        Ok(report_finish(&sweep::finish(&out)?))
    } else {
        println!(
            "not every point of the sweep is done yet; after the other shards: gpumemsim sweep merge DIR..."
        );
        Ok(ExitCode::from((s.failed > 0) as u8))
    }
}

fn cmd_plot(a: PlotArgs) -> Result<ExitCode> {
    let split = |s: &str, what: &str| -> Result<(String, String)> {
        s.split_once('=')
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .ok_or_else(|| anyhow::anyhow!("{what} {s}: expected NAME=VALUE"))
    };
    let mut filter = std::collections::BTreeMap::new();
    for f in &a.filter {
        let (k, v) = split(f, "--where")?;
        filter.insert(
            k,
            sweep::charts::OneOrMany::One(sweep::plan::Value::parse_cli(&v)),
        );
    }
    let layers = a
        .layers
        .iter()
        .map(|l| split(l, "--layer").map(|(name, y)| sweep::charts::Layer { name, y }))
        .collect::<Result<Vec<_>>>()?;
    let scale = |log: bool| {
        if log {
            gpumemsim::report::plot::Scale::Log
        } else {
            gpumemsim::report::plot::Scale::Linear
        }
    };
    let chart = sweep::charts::ChartSpec {
        name: "plot".into(),
        title: a.title.unwrap_or_default(),
        kind: a.kind,
        x: a.x.unwrap_or_default(),
        y: a.y,
        layers,
        series: a.series,
        legend: None,
        filter,
        x_label: a.x_label,
        x_unit: a.x_unit,
        x_scale: scale(a.x_log),
        y_label: a.y_label,
        y_unit: a.y_unit,
        y_scale: scale(a.y_log),
        identity: a.identity,
        caption: None,
    };
    sweep::plot(&a.dir, chart, &a.out)?;
    println!("{}", a.out.display());
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
enum ConfigCmd {
    /// Validate config files: prints `FILE: ok` or the error for each; exit 1 if any is invalid.
    Check {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Print the resolved config as TOML (without FILE: the embedded H100 default).
    Show {
        file: Option<PathBuf>,
        /// Override one key, e.g. `--set l2.slices=8` (repeatable; checked like the file).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Print every key with its type, unit, allowed values, default and description.
    Doc {
        /// As the markdown table of README.md's configuration reference.
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
                    Ok(_) => println!("{}: ok", f.display()),
                    Err(e) => {
                        failed = true;
                        eprintln!("{e}");
                    }
                }
            }
            Ok(ExitCode::from(failed as u8))
        }
        ConfigCmd::Show { file, set } => {
            let cfg = config::load(file.as_deref(), &set)?;
            print!("{}", config::to_toml(&cfg)?);
            Ok(ExitCode::SUCCESS)
        }
        ConfigCmd::Doc { markdown } => {
            let cfg = config::default_config()?;
            let out = if markdown {
                config::doc::markdown(&cfg, config::DEFAULT_NAME)?
            } else {
                config::doc::text(&cfg)?
            };
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Args)]
struct RunCmd {
    /// Workload file (`workloads/*.kern`, or CUDA `.cu` / OpenCL C `.cl`), or an Accel-Sim trace: its
    /// `kernelslist.g` or the directory holding it (replayed for timing only).
    kernel: PathBuf,
    /// Hardware config (TOML); default: the embedded preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Seed of the run's random source.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Override a config value, e.g. `--set l2.slices=8` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Override a workload parameter, e.g. `--param N=4096` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    param: Vec<String>,
    /// Write the full statistics as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the statistics as tidy CSV rows `location,metric,value,unit`.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Detect data races and scope races.
    #[arg(long)]
    races: bool,
    /// Threads simulating the run (the SMs and memory partitions in parallel); results are
    /// identical for any number.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
}

fn cmd_run(c: RunCmd) -> Result<ExitCode> {
    let params = c
        .param
        .iter()
        .map(|p| gpumemsim::runner::parse_param(p))
        .collect::<Result<Vec<_>, _>>()?;
    let out = gpumemsim::runner::execute(&gpumemsim::runner::RunArgs {
        input: c.kernel,
        config: c.config,
        seed: c.seed,
        sets: c.set,
        params,
        json: c.json,
        csv: c.csv,
        races: c.races,
        threads: c.threads as usize,
    })?;
    print!("{}", out.summary);
    let failed = out.failed_checks();
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} checks failed",
            out.result.checks.len()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
struct BenchCmd {
    /// Hardware config (TOML); default: the embedded preset (H100).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value for every workload (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Runs per workload; the fastest counts.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Threads simulating each run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// Only the workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Iterations of the litmus MP rate (tiny config, all cores); 0 skips it.
    #[arg(long, default_value_t = 20_000)]
    litmus_iterations: u64,
    /// Write the rows as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn cmd_bench(c: BenchCmd) -> Result<ExitCode> {
    use gpumemsim::bench;
    let opts = bench::BenchOptions {
        config: c.config.clone(),
        sets: c.set,
        repeat: c.repeat,
        threads: c.threads as usize,
        only: c.only,
        litmus_iterations: c.litmus_iterations,
    };
    println!("{}", bench::table_header());
    let rows = bench::run(&opts, |r| println!("{}", bench::table_line(r)))?;
    let litmus = bench::litmus_rate(&opts)?;
    if let Some(l) = &litmus {
        println!(
            "litmus {} on {}: {} iterations in {:.3} s, {:.0} iterations/s",
            l.test, l.config, l.iterations, l.seconds, l.iterations_per_second
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
}

fn cmd_gpu(c: GpuCmd) -> Result<ExitCode> {
    match c {
        GpuCmd::List => {
            let adapters = gpumemsim::gpu::adapter::list()?;
            for a in &adapters {
                // A CPU adapter's description ends in a warning line.
                print!("{}", a.describe());
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
    #[arg(long)]
    reps: Option<u32>,
    /// Untimed warm-up runs per case (default: the suite's).
    #[arg(long)]
    warmup: Option<u32>,
    /// Measurement file to write, or an existing folder (then named `<device>-<date>.json`).
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

fn cmd_measure(c: MeasureCmd) -> Result<ExitCode> {
    use gpumemsim::gpu::measure;
    let args = measure::MeasureArgs {
        suite: c.suite,
        adapter: c.adapter,
        out: c.out,
        opts: measure::MeasureOptions {
            warmup: c.warmup,
            reps: c.reps,
            ..Default::default()
        },
    };
    let out = measure::run(&args, &mut |p| {
        println!("{}", measure::progress_line(&p));
        if let measure::Progress::Opened(a) = p {
            if a.is_cpu() {
                eprintln!(
                    "warning: {}: {}",
                    a.name,
                    gpumemsim::gpu::adapter::CPU_WARNING
                );
            }
        }
    })?;
    let m = &out.measurement;
    println!("wrote {}", out.written.display());
    if out.failed() > 0 {
        eprintln!(
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
    /// Hardware config (TOML); default: the embedded preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. `--set l2.slices=8` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the simulations.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Iterations of each litmus test variant in the simulator.
    #[arg(long, default_value_t = 2000)]
    litmus_iterations: u64,
    /// Folder for comparison.{md,csv,json} and the plots (PNG and SVG).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn cmd_compare(c: CompareCmd) -> Result<ExitCode> {
    let (cmp, written) = gpumemsim::gpu::compare::run(&gpumemsim::gpu::compare::CompareArgs {
        measured: c.measured,
        config: c.config,
        sets: c.set,
        opts: gpumemsim::gpu::compare::CompareOptions {
            seed: c.seed,
            litmus_iterations: c.litmus_iterations,
        },
        out: c.out,
    })?;
    print!("{}", cmp.summary());
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
struct LitmusArgs {
    /// Test files, or folders searched for *.litmus.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Hardware config (default: the embedded H100 preset).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. `--set stress.drain_jitter=40` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Iterations per test.
    #[arg(long, default_value_t = 10_000)]
    iterations: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the results as a JSON array (one object per test).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Report data races and scope races.
    #[arg(long)]
    races: bool,
    /// Expectations file (`TEST allowed|forbidden [required]` per line), overriding the tests' own.
    #[arg(long, value_name = "FILE")]
    expect: Option<PathBuf>,
    /// Exit with status 1 when a forbidden witness was observed or a required one never appeared.
    #[arg(long)]
    check: bool,
    /// Instances per simulated launch (default: as many as the GPU holds at once).
    #[arg(long)]
    instances: Option<u32>,
    /// Run launches one after another instead of on all cores (same results).
    #[arg(long)]
    serial: bool,
    /// Print one line per test instead of its states.
    #[arg(long)]
    brief: bool,
}

fn cmd_litmus(a: LitmusArgs) -> Result<ExitCode> {
    use gpumemsim::litmus;
    let cfg = gpumemsim::config::load(a.config.as_deref(), &a.set)?;
    let cfg_name = a
        .config
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| gpumemsim::config::DEFAULT_NAME.to_string());
    let files = litmus::collect(&a.paths)?;
    let mut tests = files
        .iter()
        .map(|f| litmus::load(f))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(e) = &a.expect {
        litmus::apply_expectations(&mut tests, &litmus::load_expectations(e)?);
    }
    let opts = litmus::LitmusOptions {
        iterations: a.iterations,
        seed: a.seed,
        races: a.races,
        instances: a.instances,
        parallel: !a.serial,
    };
    let mut results = Vec::new();
    for t in &tests {
        let r = litmus::run(t, &cfg, &opts)?;
        if a.brief {
            let verdict = if r.validated() { "Ok" } else { "No" };
            println!(
                "{:<28} {:>9} of {} witnesses  {verdict}  {:?}",
                r.name,
                r.witnesses,
                r.iterations,
                r.check()
            );
        } else {
            println!("{}", litmus::text_report(&r));
        }
        results.push(r);
    }
    if let Some(path) = &a.json {
        let docs: Vec<_> = results
            .iter()
            .map(|r| litmus::json_report(r, &cfg_name, a.seed))
            .collect();
        let text = serde_json::to_string_pretty(&docs)?;
        gpumemsim::stats::write_atomic(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    let (line, failed) = litmus::summary(&results);
    println!("{line}");
    Ok(if a.check && failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<ExitCode> = match cli.command {
        Command::Config(c) => cmd_config(c),
        Command::Run(c) => cmd_run(c),
        Command::Bench(c) => cmd_bench(c),
        Command::Gpu(c) => cmd_gpu(c),
        Command::Measure(c) => cmd_measure(c),
        Command::Compare(c) => cmd_compare(c),
        Command::Litmus(a) => cmd_litmus(a),
        Command::Sweep(a) => cmd_sweep(a),
        Command::Plot(a) => cmd_plot(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}
