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
    version = gpumemsim::version::BUILD,
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
    /// Run a parameter sweep from a spec (TOML), or one shard of it; `sweep plan|submit|status|merge`.
    Sweep(SweepArgs),
    /// Draw one chart (PNG or SVG by extension) from a sweep's output folder.
    Plot(PlotArgs),
    /// Run a workload and print a summary; exit 1 when a check fails or the run cannot complete.
    Run(RunCmd),
    /// Measure simulation speed on a fixed set of workloads (synthetic traces, kernels).
    Bench(BenchCmd),
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
    /// Run litmus tests (herd format, PTX or OpenCL dialect) on the simulated GPU.
    Litmus(LitmusArgs),
    /// The memory model's allowed final states and verdict for litmus tests (the oracle).
    Model(ModelArgs),
    /// The presets against published hardware numbers (reports/reference/): each row's signed error,
    /// MAPE per preset, a chart; exit 1 when a row or a preset's MAPE misses its tolerance.
    Validate(ValidateArgs),
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct SweepArgs {
    #[command(subcommand)]
    sub: Option<SweepCmd>,
    /// The sweep spec (TOML).
    #[arg(required = true, value_name = "SPEC")]
    spec: Option<PathBuf>,
    #[command(flatten)]
    run: SweepRunArgs,
}

/// How a sweep (or one shard of it) runs.
#[derive(Args)]
struct SweepRunArgs {
    /// Output folder (default: the spec's path without `.toml`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Record N shards in the plan (default: the plan's, else 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    shards: Option<u32>,
    /// Run one shard of the plan: I (0-based; N from the plan), I/N, or auto|slurm (I from
    /// SLURM_ARRAY_TASK_ID). Exit 0: every point of the shard done; 2: some failed; 1: could not run.
    #[arg(long, value_name = "I|I/N|auto", value_parser = shard_form)]
    shard: Option<String>,
    /// Rerun points whose stored result is an error (watchdog, runtime error, panic).
    #[arg(long)]
    retry_failed: bool,
    /// Keep stored results of another simulator build instead of refusing to resume.
    #[arg(long)]
    mix_builds: bool,
    /// Seconds between progress lines when stderr is not a terminal (Slurm logs).
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    progress_interval: u64,
}

#[derive(Subcommand)]
enum SweepCmd {
    /// Join shard output folders into the files a single run writes; with points missing, say which
    /// shards to resubmit (exit 1).
    Merge {
        /// Shard output folders of one sweep.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Where to write the merged outputs (default: the first DIR).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Combine results of different simulator builds (each row names its build).
        #[arg(long)]
        mix_builds: bool,
    },
    /// Check a spec and write the plan (sweep.json) with its shard count, running nothing.
    Plan {
        /// The sweep spec (TOML).
        #[arg(value_name = "SPEC")]
        spec: PathBuf,
        /// Output folder (default: the spec's path without `.toml`).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Shards (array tasks) to split the points into (default: the plan's, else 1).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        shards: Option<u32>,
    },
    /// Submit the sweep to a cluster scheduler: a job array (one task per shard with points left to
    /// run) and a merge job after it; scripts and logs go into the output folder.
    Submit(Box<SubmitArgs>),
    /// Points done, failed and missing per shard, the builds that computed them, what to resubmit.
    /// Exit 0: every point done; 2: points missing or failed.
    Status {
        /// Output folders of the sweep's shards (one folder when they share it).
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// As JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct SubmitArgs {
    /// The sweep spec (TOML).
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// Submit to Slurm (the only scheduler supported).
    #[arg(long, required = true)]
    slurm: bool,
    /// Output folder (default: the spec's path without `.toml`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Shards (array tasks); required for a new run, fixed by the plan afterwards.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    shards: Option<u32>,
    /// Partition (#SBATCH --partition); default: the cluster's.
    #[arg(long, value_name = "P")]
    partition: Option<String>,
    /// Account to charge (#SBATCH --account).
    #[arg(long, value_name = "A")]
    account: Option<String>,
    /// Quality of service (#SBATCH --qos).
    #[arg(long, value_name = "Q")]
    qos: Option<String>,
    /// Time limit per task (Slurm format: MM, HH:MM:SS, D-HH:MM, ...).
    #[arg(long, value_name = "T")]
    time: Option<String>,
    /// CPUs per task (worker threads of each shard).
    #[arg(long, value_name = "C")]
    cpus: Option<u32>,
    /// Memory of each task's node allocation (#SBATCH --mem), e.g. 4G.
    #[arg(long, value_name = "M")]
    mem: Option<String>,
    /// At most K array tasks at once.
    #[arg(long, value_name = "K")]
    throttle: Option<u32>,
    /// `module load NAME` in the scripts (repeatable).
    #[arg(long = "module", value_name = "NAME")]
    modules: Vec<String>,
    /// One more #SBATCH option, e.g. --sbatch=--constraint=avx512 (repeatable).
    #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
    sbatch: Vec<String>,
    /// The gpumemsim binary the tasks run (default: this one; it must be visible on the nodes).
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Also resubmit shards with failed points, rerunning those points.
    #[arg(long)]
    retry_failed: bool,
    /// Keep results of another simulator build already in the folder.
    #[arg(long)]
    mix_builds: bool,
    /// Write the plan and scripts and print the sbatch commands without running them.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Args)]
struct PlotArgs {
    /// A sweep output folder (holding sweep.json and points/); for --kind intervals, a run's
    /// --interval-csv file.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Output file: .png or .svg.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: PathBuf,
    /// line, bar, stacked_bar, scatter, outcomes, or intervals (a run's --interval-csv over time;
    /// --y LOCATION.METRIC[,...], default gpu.ipc).
    #[arg(long, default_value = "line")]
    kind: sweep::charts::ChartKind,
    /// Column on x (a parameter; an expression for scatter; none for outcomes).
    #[arg(long)]
    x: Option<String>,
    /// Expression on y, e.g. `kernel.cycles / T`.
    #[arg(long)]
    y: Option<String>,
    /// bar and stacked_bar parts as NAME=EXPR (repeatable, bottom first).
    #[arg(long = "layer", value_name = "NAME=EXPR")]
    layers: Vec<String>,
    /// Column whose values make separate series (repeatable).
    #[arg(long)]
    series: Vec<String>,
    /// Keep rows with COL=VALUE (repeatable).
    #[arg(long = "where", value_name = "COL=VALUE")]
    filter: Vec<String>,
    /// Chart title (default: made from y and x).
    #[arg(long)]
    title: Option<String>,
    /// x axis label (default: the x column).
    #[arg(long)]
    x_label: Option<String>,
    /// x axis unit (default: the column's unit).
    #[arg(long)]
    x_unit: Option<String>,
    /// y axis label (default: the y expression).
    #[arg(long)]
    y_label: Option<String>,
    /// y axis unit (default: the unit of a y that is one statistic).
    #[arg(long)]
    y_unit: Option<String>,
    /// Logarithmic x axis.
    #[arg(long)]
    x_log: bool,
    /// Logarithmic y axis.
    #[arg(long)]
    y_log: bool,
    /// scatter: draw y = x.
    #[arg(long)]
    identity: bool,
    /// Canvas width in pixels (default 900).
    #[arg(long, value_name = "PX")]
    width: Option<u32>,
    /// Canvas height in pixels (default 560; a legend below the plot adds its own height).
    #[arg(long, value_name = "PX")]
    height: Option<u32>,
}

/// Draws the sweep's progress bar on stderr (a terminal).
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
        eprintln!("error: {e}");
    }
    for w in &f.warnings {
        eprintln!("warning: {w}");
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
    match a.sub {
        Some(SweepCmd::Merge {
            dirs,
            out,
            mix_builds,
        }) => {
            let out = out.unwrap_or_else(|| dirs[0].clone());
            let (_, _, status) = sweep::results::merge(&dirs, &out, mix_builds)?;
            if !status.failed.is_empty() {
                eprint!("{status}");
            }
            Ok(report_finish(&sweep::finish(&out)?))
        }
        Some(SweepCmd::Plan { spec, out, shards }) => {
            let mut plan = sweep::spec::load(&spec)?;
            let out = out.unwrap_or_else(|| sweep::spec::default_out(&spec));
            let planning = sweep::shard::Planning {
                shards: shards.map(|n| n as usize),
                shard: None,
            };
            sweep::shard::prepare(&mut plan, &out, &planning, "", |_| None)?;
            // Slurm does not create the folder of a job's log: batch scripts write into DIR/logs.
            let logs = out.join(sweep::slurm::LOGS);
            std::fs::create_dir_all(&logs)
                .with_context(|| format!("cannot create {}", logs.display()))?;
            let m = &plan.manifest;
            let sizes = sweep::shard::sizes(m);
            println!(
                "{}: {} points in {} shard{} ({} to {} points each)",
                out.join(sweep::exec::MANIFEST).display(),
                m.points.len(),
                m.shards,
                if m.shards == 1 { "" } else { "s" },
                sizes.iter().min().unwrap_or(&0),
                sizes.iter().max().unwrap_or(&0)
            );
            println!(
                "run shard I with `gpumemsim sweep {} --out {} --shard I` (or --shard auto in a Slurm \
                 job array), or submit: `gpumemsim sweep submit {} --slurm --out {}`",
                spec.display(),
                out.display(),
                spec.display(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(SweepCmd::Submit(s)) => cmd_submit(*s),
        Some(SweepCmd::Status { dirs, json }) => {
            let (_, mut status) = sweep::status::survey(&dirs)?;
            match sweep::slurm::queued(&dirs[0], &sweep::slurm::Slurm) {
                Ok(q) => status.queued = sweep::slurm::in_flight(&q).0,
                Err(e) => status.queue_note = Some(e.to_string()),
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{status}");
            }
            let done = status.complete() && status.failed.is_empty();
            Ok(ExitCode::from(if done { 0 } else { 2 }))
        }
        None => {
            let spec = a.spec.context("a sweep spec is required")?;
            cmd_sweep_run(&spec, a.run)
        }
    }
}

fn cmd_sweep_run(spec: &std::path::Path, a: SweepRunArgs) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let shard_arg: Option<sweep::shard::ShardArg> =
        a.shard.as_deref().map(str::parse).transpose()?;
    let mut plan = sweep::spec::load(spec)?;
    let out = a.out.unwrap_or_else(|| sweep::spec::default_out(spec));
    let planning = sweep::shard::Planning {
        shards: a.shards.map(|n| n as usize),
        shard: shard_arg,
    };
    let text = a.shard.clone().unwrap_or_default();
    let shard =
        sweep::shard::prepare(&mut plan, &out, &planning, &text, |k| std::env::var(k).ok())?;
    let opts = sweep::exec::ExecOptions {
        jobs: a.jobs.map(usize::from),
        shard,
        retry_failed: a.retry_failed,
        mix_builds: a.mix_builds,
    };
    let label = match shard {
        Some(s) => format!("{}: shard {} of {}", plan.manifest.name, s.index, s.count),
        None => plan.manifest.name.clone(),
    };
    let s = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} points, {per_sec}, eta {eta}",
            )?
            .progress_chars("=> "),
        );
        let s = sweep::exec::execute(&plan, &out, &opts, &Bar(bar.clone()))?;
        bar.finish_and_clear();
        s
    } else {
        let threads = opts.jobs.unwrap_or_else(rayon::current_num_threads);
        let lines = sweep::progress::Lines::new(
            Box::new(std::io::stderr()),
            std::time::Duration::from_secs(a.progress_interval),
            label,
            threads,
        );
        let s = sweep::exec::execute(&plan, &out, &opts, &lines)?;
        lines.finish();
        s
    };
    println!(
        "{}: {} points{}: {} ran now, {} were done{}",
        out.display(),
        s.selected,
        shard
            .map(|s| format!(" in shard {} of {}", s.index, s.count))
            .unwrap_or_default(),
        s.ran,
        s.already_done,
        if s.failed_in_selection > 0 {
            format!(
                ", {} failed (rerun them with --retry-failed)",
                s.failed_in_selection
            )
        } else {
            String::new()
        }
    );
    if shard.is_some() {
        // A shard never combines: the merge job (or `sweep merge`) does, once every shard is done.
        println!(
            "shard {}; `gpumemsim sweep status {}` shows the others",
            if s.selection_done() {
                "done"
            } else {
                "has failed points"
            },
            out.display()
        );
        return Ok(ExitCode::from(if s.selection_done() { 0 } else { 2 }));
    }
    if s.complete {
        Ok(report_finish(&sweep::finish(&out)?))
    } else {
        println!(
            "not every point of the sweep is done yet; after the other shards: gpumemsim sweep merge DIR..."
        );
        Ok(ExitCode::from((s.failed > 0) as u8))
    }
}

fn cmd_submit(a: SubmitArgs) -> Result<ExitCode> {
    debug_assert!(a.slurm, "clap requires --slurm");
    let mut plan = sweep::spec::load(&a.spec)?;
    let out = a.out.unwrap_or_else(|| sweep::spec::default_out(&a.spec));
    let exe = std::env::current_exe().context("cannot find this gpumemsim binary's path")?;
    let opts = sweep::slurm::SubmitOptions {
        shards: a.shards.map(|n| n as usize),
        slurm: sweep::slurm::script::SlurmOptions {
            partition: a.partition,
            account: a.account,
            qos: a.qos,
            time: a.time,
            cpus: a.cpus,
            mem: a.mem,
            throttle: a.throttle,
            modules: a.modules,
            sbatch: a.sbatch,
            binary: a.binary.map(|b| b.display().to_string()),
        },
        retry_failed: a.retry_failed,
        mix_builds: a.mix_builds,
        dry_run: a.dry_run,
    };
    let s = sweep::slurm::submit(&mut plan, &a.spec, &out, &exe, &opts, &sweep::slurm::Slurm)?;
    print!("{s}");
    Ok(ExitCode::SUCCESS)
}

fn cmd_plot(a: PlotArgs) -> Result<ExitCode> {
    if a.kind == sweep::charts::ChartKind::Intervals {
        let file = a.dir.display().to_string();
        let text = std::fs::read_to_string(&a.dir)
            .map_err(|e| anyhow::anyhow!("{file}: cannot read: {e}"))?;
        let ys: Vec<String> =
            a.y.as_deref()
                .unwrap_or("gpu.ipc")
                .split(',')
                .map(|s| s.trim().to_string())
                .collect();
        let chart = gpumemsim::report::intervals::chart(&text, &file, &ys, a.title.as_deref())
            .map_err(|e| anyhow::anyhow!(e))?;
        let (w, h) = gpumemsim::report::plot::DEFAULT_SIZE;
        chart
            .with_size(a.width.unwrap_or(w), a.height.unwrap_or(h))
            .save_as(&a.out)?;
        println!("{}", a.out.display());
        return Ok(ExitCode::SUCCESS);
    }
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
        labels: Default::default(),
        width: a.width,
        height: a.height,
    };
    for w in sweep::plot(&a.dir, chart, &a.out)? {
        eprintln!("warning: {w}");
    }
    println!("{}", a.out.display());
    Ok(ExitCode::SUCCESS)
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
        /// Config file (default: the embedded H100 preset).
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
        /// Override one key, e.g. `--set l2.slices=8` (repeatable; checked like the file).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
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
            let resolved = config::load_resolved(file.as_deref(), &set)?;
            print!("{}", config::show::render(&resolved)?);
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
    /// Sample the key statistics every N core cycles (written by --interval-csv).
    #[arg(long, value_name = "N", requires = "interval_csv", value_parser = clap::value_parser!(u64).range(1..))]
    stats_interval: Option<u64>,
    /// Write the --stats-interval samples as tidy CSV `cycle,location,metric,value,unit`.
    #[arg(long, value_name = "FILE", requires = "stats_interval")]
    interval_csv: Option<PathBuf>,
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

fn cmd_run(c: RunCmd) -> Result<ExitCode> {
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
        },
        Some(hook),
    );
    progress.finish();
    let out = out?;
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
    /// Run a measurement suite on an adapter and write the measurement file (exit 1 if a case failed).
    Measure(MeasureCmd),
    /// Simulate a measurement file's suite with a config and put the predictions beside it.
    Compare(CompareCmd),
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
    shader: gpumemsim::gpu::adapter::ShaderChoice,
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
            shader: c.shader,
            ..Default::default()
        },
    };
    let bar = gpumemsim::progress::Progress::new("measure", "cases", 0);
    let out = measure::run(&args, &mut |p| {
        bar.suspend(|| println!("{}", measure::progress_line(&p)));
        match p {
            measure::Progress::Opened {
                adapter: a, items, ..
            } => {
                bar.set_total(items as u64);
                if a.is_cpu() {
                    bar.println(&format!(
                        "warning: {}: {}",
                        a.name,
                        gpumemsim::gpu::adapter::CPU_WARNING
                    ));
                }
            }
            _ => bar.inc(1),
        }
    })?;
    bar.finish();
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
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Seed of the simulations.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Iterations of each litmus test variant in the simulator.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
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
    // Left-out cases on the terminal too, not only in comparison.md.
    for (key, why) in &cmp.skipped {
        eprintln!("left out: {key}: {why}");
    }
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct LitmusArgs {
    #[command(subcommand)]
    generate: Option<LitmusCmd>,
    /// Test files, or folders searched for *.litmus.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Hardware config (default: the embedded H100 preset).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. `--set stress.drain_jitter=40` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Iterations per test.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// Seed of the runs' random sources (launch i draws from (seed, i)).
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
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    instances: Option<u32>,
    /// Run launches one after another instead of on all cores (same results).
    #[arg(long)]
    serial: bool,
    /// Print one line per test instead of its states.
    #[arg(long)]
    brief: bool,
    /// Output layout: `text` (the report above), or `herd` (litmus7's log layout, which herdtools'
    /// mcompare7 and msort7 read; the closing summary then goes to standard error).
    #[arg(long, default_value = "text", value_parser = ["text", "herd"])]
    format: String,
    /// The oracle's loop unrolling bound (see `gpumemsim model`).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    unroll: u32,
    /// Explain the first iteration that ends in the condition's witness (or in `--state`): each
    /// thread's accesses with the cycles they issued and completed, the structure that served them,
    /// when each store became visible at L1 and L2, and the reordering the outcome needed. One test
    /// only; exit status 1 when no iteration ends in it.
    #[arg(long, conflicts_with_all = ["json", "brief", "format", "check", "timeline_iteration"])]
    explain: bool,
    /// With --explain: the final state to explain instead of the witness, in the test's syntax:
    /// "P1:r0=1; P1:r1=0" (or herd's "1:r0=1; 1:r1=0"); variables the test's condition observes.
    #[arg(long, requires = "explain", value_name = "STATE")]
    state: Option<String>,
    #[command(flatten)]
    timeline: TimelineArgs,
    /// With --timeline: the iteration whose launch the timeline shows (one file per test:
    /// FILE.json for one test, FILE.TEST.json for several).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "timeline")]
    timeline_iteration: u64,
}

#[derive(Subcommand)]
enum LitmusCmd {
    /// Write families of tests (shapes × orders × scopes × placements) with the oracle's verdict.
    Generate(GenerateArgs),
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum DialectArg {
    Ptx,
    Opencl,
}

#[derive(clap::Args)]
struct GenerateArgs {
    /// The tests' dialect (the model that gives their verdicts).
    #[arg(long)]
    dialect: DialectArg,
    /// Output folder (created).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Comma-separated shapes (default: all): MP,SB,LB,S,R,2+2W,CoRR,CoWR,CoRW,WRC,ISA2,RWC,W+RWC,3.SB,3.LB,4.SB,IRIW.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// Comma-separated orders (default: all of the dialect): weak,relaxed,rel-acq,rel,acq,sc,fence-acqrel,fence-sc.
    #[arg(long, value_delimiter = ',')]
    orders: Vec<String>,
    /// Comma-separated scopes (default: all): cta|work_group, gpu|device, sys|all_svm_devices.
    #[arg(long, value_delimiter = ',')]
    scopes: Vec<String>,
    /// Comma-separated placements (default: all): diff, same, pairs.
    #[arg(long, value_delimiter = ',')]
    placements: Vec<String>,
}

fn cmd_generate(a: GenerateArgs) -> Result<ExitCode> {
    use gpumemsim::litmus::{generate, Dialect};
    let r = generate::generate(&generate::GenOptions {
        dialect: match a.dialect {
            DialectArg::Ptx => Dialect::Ptx,
            DialectArg::Opencl => Dialect::OpenCl,
        },
        shapes: a.shapes,
        orders: a.orders,
        scopes: a.scopes,
        placements: a.placements,
        out: a.out.clone(),
    })?;
    println!(
        "wrote {} tests to {} ({} shapes × {} orders × {} scopes × {} placements): witness allowed in {}, forbidden in {}; left out {} racy and {} duplicate variants",
        r.written,
        a.out.display(),
        r.shapes,
        r.orders,
        r.scopes,
        r.placements,
        r.allowed,
        r.forbidden,
        r.racy,
        r.duplicates
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_litmus(a: LitmusArgs) -> Result<ExitCode> {
    use gpumemsim::litmus;
    if let Some(LitmusCmd::Generate(g)) = a.generate {
        return cmd_generate(g);
    }
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
    if a.explain {
        return explain(&tests, &cfg, &opts, a.state.as_deref(), a.timeline.get());
    }
    // --brief: columns wide enough for the longest test name and count.
    let name_w = tests
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    let count_w = a.iterations.to_string().len();
    let herd = a.format == "herd";
    let model_opts = litmus::model::ModelOptions {
        unroll: a.unroll,
        ..Default::default()
    };
    let mut results = Vec::new();
    let mut waiting = Vec::new();
    let progress = gpumemsim::progress::Progress::new(
        "litmus",
        "iterations",
        tests.len() as u64 * a.iterations,
    );
    for (k, t) in tests.iter().enumerate() {
        // A test needing a mechanism the machine lacks is reported and skipped, not a failure.
        let r = match litmus::run_with_model(
            t,
            &cfg,
            &opts,
            &model_opts,
            &progress.part(k as u64 * a.iterations),
        ) {
            Err(e @ litmus::LitmusError::NeedsCapability { .. }) => {
                progress.suspend(|| eprintln!("{:<name_w$}  skipped: {e}", t.name));
                waiting.push(t.name.clone());
                continue;
            }
            r => r?,
        };
        progress.suspend(|| {
            if herd {
                println!("{}", litmus::herd_report(t, &r));
            } else if a.brief {
                let verdict = if r.validated() { "Ok" } else { "No" };
                let model = match (&r.model, r.allowed_seen()) {
                    (Err(_), _) => "not modelled".to_string(),
                    (Ok(d), _) if d.race.is_some() => "racy".to_string(),
                    (_, Some((seen, all))) => format!("{seen}/{all} allowed seen"),
                    (Ok(_), None) => "bound hit".to_string(),
                };
                println!(
                    "{:<name_w$}  {:>count_w$} of {} witnesses  {verdict}  {:?}  model: {model}",
                    r.name,
                    r.witnesses,
                    r.iterations,
                    r.check()
                );
            } else {
                println!("{}", litmus::text_report(&r));
            }
        });
        if let Some((path, topts)) = a.timeline.get() {
            let path = if tests.len() == 1 {
                path
            } else {
                path.with_extension(format!("{}.json", t.name.replace(['/', ' '], "_")))
            };
            let (tl, range) = litmus::timeline(t, &cfg, &opts, a.timeline_iteration, &topts)?;
            gpumemsim::stats::write_atomic(&path, tl.json.as_bytes())
                .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
            let warn = gpumemsim::runner::timeline_truncation(&tl);
            progress.suspend(|| {
                eprint!(
                    "{}: timeline {} ({} trace events) of the launch that ran iterations {}..{} (iteration {} among them)\n{warn}",
                    t.name,
                    path.display(),
                    tl.events,
                    range.start,
                    range.end,
                    a.timeline_iteration
                )
            });
        }
        results.push(r);
    }
    progress.finish();
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
    let waiting = match waiting.len() {
        0 => String::new(),
        n => format!("\n{n} tests skipped: they need a machine capability (see above)"),
    };
    if herd {
        eprintln!("{line}{waiting}");
    } else {
        println!("{line}{waiting}");
    }
    Ok(if a.check && failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `litmus --explain`: the first iteration of the one test that ends in its witness or `state`.
fn explain(
    tests: &[gpumemsim::litmus::LitmusTest],
    cfg: &gpumemsim::config::GpuConfig,
    opts: &gpumemsim::litmus::LitmusOptions,
    state: Option<&str>,
    timeline: Option<(PathBuf, gpumemsim::machine::timeline::TimelineOptions)>,
) -> Result<ExitCode> {
    use gpumemsim::litmus;
    let [t] = tests else {
        anyhow::bail!(
            "--explain explains one test; the paths name {} tests",
            tests.len()
        );
    };
    let target = match state {
        Some(s) => litmus::Target::State(litmus::parse_state(s, t)?),
        None => litmus::Target::Witness,
    };
    let progress = gpumemsim::progress::Progress::new("litmus", "iterations", opts.iterations);
    let topts = timeline.as_ref().map(|(_, o)| o);
    let r = litmus::explain(t, cfg, opts, &target, topts, &progress)?;
    progress.finish();
    Ok(match r {
        litmus::Explained::Found(text, tl) => {
            print!("{text}");
            if let (Some((path, _)), Some(tl)) = (&timeline, tl) {
                gpumemsim::stats::write_atomic(path, tl.json.as_bytes())
                    .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
                eprint!(
                    "timeline of the explained launch: {} ({} trace events)\n{}",
                    path.display(),
                    tl.events,
                    gpumemsim::runner::timeline_truncation(&tl)
                );
            }
            ExitCode::SUCCESS
        }
        litmus::Explained::NotSeen(text) => {
            println!("{text}");
            ExitCode::from(1)
        }
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

#[derive(clap::Args)]
struct ModelArgs {
    /// Test files, or folders searched for *.litmus.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write the decisions as a JSON array (one object per test).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Loop unrolling bound: backward branches to one loop header per path (spin iterations that
    /// change nothing are not counted).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    unroll: u32,
    /// Print one line per test.
    #[arg(long)]
    brief: bool,
}

/// Exit 1 when a test cannot be modelled or its expectation disagrees with the model.
fn cmd_model(a: ModelArgs) -> Result<ExitCode> {
    use gpumemsim::litmus::{self, model};
    let files = litmus::collect(&a.paths)?;
    let tests = files
        .iter()
        .map(|f| litmus::load(f))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = model::ModelOptions {
        unroll: a.unroll,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let mut docs = Vec::new();
    let mut slowest = (0.0f64, String::new());
    for t in &tests {
        let t0 = std::time::Instant::now();
        let d = model::decide(t, &opts);
        let dt = t0.elapsed().as_secs_f64();
        if dt > slowest.0 {
            slowest = (dt, t.name.clone());
        }
        let j = model::json_decision(t, &d);
        if a.brief {
            println!("{}", model::brief_line(&j));
        } else {
            println!("{}", model::text_decision(t, &d));
        }
        docs.push(j);
    }
    let secs = start.elapsed().as_secs_f64();
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&docs)?;
        gpumemsim::stats::write_atomic(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    let (line, failed) = model::summary(&docs, secs, &slowest.1, slowest.0);
    println!("{line}");
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Args)]
struct ValidateArgs {
    /// A config to validate instead of the presets: checked against the reference set of the preset
    /// it is based on (its `base`, else its file stem).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Folder of reference sets (one `*.toml` per preset).
    #[arg(long, default_value = "reports/reference")]
    reference: PathBuf,
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
    let refs = validate::load_dir(&a.reference)?;
    let selected: Vec<&validate::Reference> = match &a.config {
        None => refs.iter().collect(),
        Some(c) => {
            let text = gpumemsim::text::read(c)?;
            let base = toml::from_str::<toml::Value>(&text)
                .ok()
                .and_then(|v| v.get("base").and_then(|b| b.as_str()).map(str::to_string));
            let stem = c.file_stem().map(|s| s.to_string_lossy().to_string());
            let want = base.or(stem).unwrap_or_default();
            let found: Vec<_> = refs.iter().filter(|r| r.preset == want).collect();
            if found.is_empty() {
                let names: Vec<&str> = refs.iter().map(|r| r.preset.as_str()).collect();
                anyhow::bail!(
                    "{}: based on `{want}`, which has no reference set in {}; sets: {}",
                    c.display(),
                    a.reference.display(),
                    names.join(", ")
                );
            }
            found
        }
    };
    let mut results = Vec::new();
    for r in selected {
        let p = validate::run(r, a.config.as_deref(), a.threads as usize)?;
        print!("{}", validate::table(&p));
        results.push(p);
    }
    if let Some(out) = &a.out {
        validate::write(out, &results)?;
        println!(
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
