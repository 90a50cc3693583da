//! `gpumemsim litmus` (run, explain, generate) and `gpumemsim model`: their arguments and what they
//! print. The tests, the runs and the model are the library's (`gpumemsim::litmus`).

use crate::*;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct LitmusArgs {
    #[command(subcommand)]
    generate: Option<LitmusCmd>,
    /// Test files, or folders searched for *.litmus.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Hardware config (TOML); default: the embedded H100 preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config value, e.g. `--set stress.drain_jitter=40` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    set: Vec<String>,
    /// Iterations per test.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    /// Seed of the runs' random sources (launch i draws from (seed, i)); default 0, as on every
    /// command.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::seed)]
    seed: u64,
    /// Write the results to this file as a JSON array, one object per test (`--json` is the
    /// older name).
    #[arg(long = "out", visible_alias = "json", value_name = "FILE.json")]
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
    /// Run launches one after another instead of on all cores (same results; `--threads 1`
    /// does the same).
    #[arg(long, conflicts_with = "threads")]
    serial: bool,
    /// Threads running launches in parallel (default: one per core); results are identical for
    /// any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
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
    /// The memory model the self-check uses (see `gpumemsim model --model`; default: `ptx` for
    /// PTX tests, `opencl-rc11` for OpenCL tests).
    #[arg(long, value_name = "MODEL", value_parser = ["ptx", "opencl-rc11", "opencl-c11"])]
    model: Option<String>,
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
pub(crate) enum LitmusCmd {
    /// Write families of tests (shapes × orders × scopes × placements) with the oracle's verdict.
    Generate(GenerateArgs),
}

#[derive(clap::ValueEnum, Clone, Copy)]
pub(crate) enum DialectArg {
    Ptx,
    Opencl,
}

#[derive(clap::Args)]
pub(crate) struct GenerateArgs {
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

pub(crate) fn cmd_generate(a: GenerateArgs) -> Result<ExitCode> {
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
    outln!(
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

pub(crate) fn cmd_litmus(mut a: LitmusArgs) -> Result<ExitCode> {
    if let Some(LitmusCmd::Generate(g)) = a.generate.take() {
        return cmd_generate(g);
    }
    crate::cli::threads::with_threads(a.threads, || run_litmus(a))
}

/// `gpumemsim litmus PATHS`, on the pool `--threads` chose.
fn run_litmus(a: LitmusArgs) -> Result<ExitCode> {
    use gpumemsim::litmus;
    let mut inputs: Vec<(&str, Option<&std::path::Path>)> = vec![
        ("the --config", a.config.as_deref()),
        ("the --expect file", a.expect.as_deref()),
    ];
    inputs.extend(a.paths.iter().map(|p| ("the test", Some(p.as_path()))));
    crate::cli::outputs::check_io(
        &[
            ("--out", a.json.as_deref(), crate::cli::outputs::Kind::File),
            (
                "--timeline",
                a.timeline.timeline.as_deref(),
                crate::cli::outputs::Kind::File,
            ),
        ],
        &inputs,
    )?;
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
        model: a.model.as_deref().and_then(litmus::model::ModelKind::parse),
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
                progress.suspend(|| errln!("{:<name_w$}  skipped: {e}", t.name));
                waiting.push(t.name.clone());
                continue;
            }
            r => r?,
        };
        progress.suspend(|| {
            if herd {
                outln!("{}", litmus::herd_report(t, &r));
            } else if a.brief {
                let verdict = if r.validated() { "Ok" } else { "No" };
                let model = match (&r.model, r.allowed_seen()) {
                    (Err(_), _) => "not modelled".to_string(),
                    (Ok(d), _) if d.race.is_some() => "racy".to_string(),
                    (_, Some((seen, all))) => format!("{seen}/{all} allowed seen"),
                    (Ok(_), None) => "bound hit".to_string(),
                };
                outln!(
                    "{:<name_w$}  {:>count_w$} of {} witnesses  {verdict}  {:?}  model: {model}",
                    r.name,
                    r.witnesses,
                    r.iterations,
                    r.check()
                );
            } else {
                let mut text = litmus::text_report(&r);
                if a.races && r.races.is_empty() {
                    // Said, so that a quiet run is not mistaken for one that did not look (issue 45).
                    text.push_str(
                        "Races: no races found (every access of every iteration checked for data races \
                         and scope races, by happens-before)\n",
                    );
                }
                outln!("{text}");
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
                err!(
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
        let text = gpumemsim::runner::litmus_json(&results, &cfg_name, a.seed, &a.set)?;
        gpumemsim::stats::write_atomic(path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    }
    let (line, failed) = litmus::summary(&results);
    let waiting = match waiting.len() {
        0 => String::new(),
        n => format!("\n{n} tests skipped: they need a machine capability (see above)"),
    };
    if herd {
        errln!("{line}{waiting}");
    } else {
        outln!("{line}{waiting}");
    }
    Ok(if a.check && failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `litmus --explain`: the first iteration of the one test that ends in its witness or `state`.
pub(crate) fn explain(
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
            out!("{text}");
            if let (Some((path, _)), Some(tl)) = (&timeline, tl) {
                gpumemsim::stats::write_atomic(path, tl.json.as_bytes())
                    .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
                err!(
                    "timeline of the explained launch: {} ({} trace events)\n{}",
                    path.display(),
                    tl.events,
                    gpumemsim::runner::timeline_truncation(&tl)
                );
            }
            ExitCode::SUCCESS
        }
        litmus::Explained::NotSeen(text) => {
            outln!("{text}");
            ExitCode::from(1)
        }
    })
}

#[derive(clap::Args)]
pub(crate) struct ModelArgs {
    /// Test files, or folders searched for *.litmus.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write the decisions to this file as a JSON array, one object per test (`--json` is the
    /// older name).
    #[arg(long = "out", visible_alias = "json", value_name = "FILE.json")]
    json: Option<PathBuf>,
    /// Loop unrolling bound: backward branches to one loop header per path (spin iterations that
    /// change nothing are not counted).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    unroll: u32,
    /// The memory model: `ptx` (PTX ISA memory consistency model), `opencl-rc11` (scoped C11 with
    /// RC11's repairs: no thin-air cycles, the repaired seq_cst and SC fences) or `opencl-c11`
    /// (the original C11-2011 rules: thin-air cycles allowed, SC fences weaker). Default: `ptx`
    /// for PTX tests, `opencl-rc11` for OpenCL tests; the output names the model used.
    #[arg(long, value_name = "MODEL", value_parser = ["ptx", "opencl-rc11", "opencl-c11"])]
    model: Option<String>,
    /// For OpenCL tests with a race (undefined behaviour, verdict `Undef`): list the states the
    /// axioms allow all the same.
    #[arg(long)]
    racy_states: bool,
    /// Print one line per test.
    #[arg(long)]
    brief: bool,
}

/// Exit 1 when a test cannot be modelled or its expectation disagrees with the model.
pub(crate) fn cmd_model(a: ModelArgs) -> Result<ExitCode> {
    use gpumemsim::litmus::{self, model};
    let inputs: Vec<(&str, Option<&std::path::Path>)> = a
        .paths
        .iter()
        .map(|p| ("the test", Some(p.as_path())))
        .collect();
    crate::cli::outputs::check_io(
        &[("--out", a.json.as_deref(), crate::cli::outputs::Kind::File)],
        &inputs,
    )?;
    let files = litmus::collect(&a.paths)?;
    let tests = files
        .iter()
        .map(|f| litmus::load(f))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = model::ModelOptions {
        unroll: a.unroll,
        model: a.model.as_deref().and_then(model::ModelKind::parse),
        racy_states: a.racy_states,
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
            outln!("{}", model::brief_line(&j));
        } else {
            outln!("{}", model::text_decision(t, &d));
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
    outln!("{line}");
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
