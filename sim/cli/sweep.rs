//! `gpumemsim sweep` (run, plan, status, submit) and `gpumemsim plot`: their arguments and what they
//! print. The sweep itself is the library's (`gpumemsim::sweep`).

use crate::*;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct SweepArgs {
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
pub(crate) struct SweepRunArgs {
    /// Output folder (default: the spec's path without `.toml`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Threads running points in parallel (default: one per core; `--jobs`/`-j` is the older name).
    #[arg(long = "threads", visible_alias = "jobs", short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
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
pub(crate) enum SweepCmd {
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
pub(crate) struct SubmitArgs {
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
pub(crate) struct PlotArgs {
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
pub(crate) struct Bar(indicatif::ProgressBar);

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

pub(crate) fn report_finish(f: &sweep::Finished) -> ExitCode {
    outln!(
        "{} runs; results: {}, report: {}",
        f.rows,
        f.index.with_file_name("results.csv").display(),
        f.index.display()
    );
    for e in &f.chart_errors {
        errln!("error: {e}");
    }
    for w in &f.warnings {
        errln!("warning: {w}");
    }
    if f.failed > 0 {
        errln!(
            "{} runs failed or failed their checks (listed in the report)",
            f.failed
        );
    }
    ExitCode::from((f.failed > 0 || !f.chart_errors.is_empty()) as u8)
}

pub(crate) fn cmd_sweep(a: SweepArgs) -> Result<ExitCode> {
    match a.sub {
        Some(SweepCmd::Merge {
            dirs,
            out,
            mix_builds,
        }) => {
            let out = out.unwrap_or_else(|| dirs[0].clone());
            let (_, _, status) = sweep::results::merge(&dirs, &out, mix_builds)?;
            if !status.failed.is_empty() {
                err!("{status}");
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
            sweep::shard::write_manifest(&mut plan, &out, &planning, "", |_| None)?;
            // Slurm does not create the folder of a job's log: batch scripts write into DIR/logs.
            let logs = out.join(sweep::slurm::LOGS);
            std::fs::create_dir_all(&logs)
                .with_context(|| format!("cannot create {}", logs.display()))?;
            let m = &plan.manifest;
            let sizes = sweep::shard::sizes(m);
            outln!(
                "{}: {} points in {} shard{} ({} to {} points each)",
                out.join(sweep::exec::MANIFEST).display(),
                m.points.len(),
                m.shards,
                if m.shards == 1 { "" } else { "s" },
                sizes.iter().min().unwrap_or(&0),
                sizes.iter().max().unwrap_or(&0)
            );
            outln!(
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
                outln!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                out!("{status}");
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

pub(crate) fn cmd_sweep_run(spec: &std::path::Path, a: SweepRunArgs) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let shard_arg: Option<sweep::shard::ShardArg> =
        a.shard.as_deref().map(str::parse).transpose()?;
    let out = a.out.unwrap_or_else(|| sweep::spec::default_out(spec));
    crate::cli::outputs::check(&[("--out", Some(&out), crate::cli::outputs::Kind::Folder)])?;
    let mut plan = sweep::spec::load(spec)?;
    let planning = sweep::shard::Planning {
        shards: a.shards.map(|n| n as usize),
        shard: shard_arg,
    };
    let text = a.shard.clone().unwrap_or_default();
    let shard =
        sweep::shard::write_manifest(&mut plan, &out, &planning, &text, |k| std::env::var(k).ok())?;
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
    outln!(
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
        outln!(
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
        outln!(
            "not every point of the sweep is done yet; after the other shards: gpumemsim sweep merge DIR..."
        );
        Ok(ExitCode::from((s.failed > 0) as u8))
    }
}

pub(crate) fn cmd_submit(a: SubmitArgs) -> Result<ExitCode> {
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
    out!("{s}");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_plot(a: PlotArgs) -> Result<ExitCode> {
    crate::cli::outputs::check_io(
        &[("--out", Some(&a.out), crate::cli::outputs::Kind::File)],
        &[("the input", Some(&a.dir))],
    )?;
    if a.kind == sweep::charts::ChartKind::Intervals {
        let file = a.dir.display().to_string();
        // The shared reader: a non-UTF-8 byte is named at its line:column, a size is bounded.
        let text = gpumemsim::text::read(&a.dir)?;
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
        outln!("{}", a.out.display());
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
        errln!("warning: {w}");
    }
    outln!("{}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
