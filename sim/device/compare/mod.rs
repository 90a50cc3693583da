//! `gpumemsim compare`: the simulator's predictions beside a measurement file.
//!
//! Each case that gave a number on the adapter is simulated with the given config (the kernel text
//! comes from the measurement file, so the simulator runs exactly what the adapter ran), starting as
//! the harness's run starts: its buffers just copied into memory, so in the L2 (`warm_l2`; `--cold-l2`
//! starts from empty caches); cycles become ns at the config's core clock. The measured side is the
//! median pass time minus the dispatch overhead (the `overhead` group's median: the simulator has no
//! launch cost). Error is signed and relative, `(simulated − measured) / measured`: positive means
//! the simulator is too slow (STYLE.md's one sign convention). Metrics: MAPE, mean signed error and Pearson r of the times, overall and per
//! group; the fitted latency slopes side by side; litmus weak-outcome rates side by side.
//!
//! Simulations run in parallel (rayon); results are collected in case order, so the output is the
//! same whatever the number of threads.
//!
//! Files (`--out`, written by `output.rs`): `comparison.md`, the cases as `comparison.csv` and as JSON records in
//! `comparison.json`, the rest (metrics, slopes, litmus rates, skipped cases) in
//! `comparison.summary.json` (schema `gpumemsim-comparison` version 2).
//!
//! Plots (PNG and SVG, through [`crate::report::plot`]): `simulated-vs-measured` (every case with a
//! kernel time above the overhead, one series per group, log axes, y = x dashed) and `contention`
//! (time per atomic against contending threads: one colour per contention benchmark and
//! returning/non-returning form, measured filled on a solid line, simulated open on a dashed one);
//! with litmus tests, `litmus` (weak-outcome rates) and one `litmus-outcomes-TEST` per test: every
//! final state of each variant, measured beside simulated, as % of instances on a log axis.

mod output;

use super::measure::{fit, overrides, OVERHEAD_GROUP};
use super::schema::{BenchResult, Measurement, Status};
use crate::config::GpuConfig;
use crate::machine::{self, RunOptions};
use crate::report::plot::PlotError;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One case side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub key: String,
    pub bench: String,
    pub group: String,
    pub case: String,
    pub params: BTreeMap<String, i64>,
    /// Median pass time on the adapter.
    pub measured_ns: f64,
    pub measured_min_ns: f64,
    pub measured_max_ns: f64,
    /// `measured_ns` minus the dispatch overhead (what the simulator is compared with).
    pub kernel_ns: f64,
    pub simulated_ns: f64,
    pub cycles: u64,
    /// `(simulated − kernel) / kernel`; `None` when the kernel time is not above the overhead.
    pub error: Option<f64>,
}

/// Error metrics over a set of rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub n: usize,
    /// Mean absolute percentage error (`None` without points).
    pub mape_percent: Option<f64>,
    /// Mean signed error, percent (positive: the simulator is too slow on average).
    pub mean_error_percent: Option<f64>,
    /// Pearson correlation of measured and simulated times (`None` below 3 points or without spread).
    pub pearson_r: Option<f64>,
}

impl Metrics {
    /// Over (measured, simulated) pairs.
    pub fn of(pairs: &[(f64, f64)]) -> Metrics {
        let errs: Vec<f64> = pairs.iter().map(|(m, s)| (s - m) / m).collect();
        let n = pairs.len();
        let mean = |v: Vec<f64>| (n > 0).then(|| 100.0 * v.iter().sum::<f64>() / n as f64);
        Metrics {
            n,
            mape_percent: mean(errs.iter().map(|e| e.abs()).collect()),
            mean_error_percent: mean(errs),
            pearson_r: pearson(pairs),
        }
    }
}

/// Pearson correlation coefficient.
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let syy: f64 = pairs.iter().map(|p| (p.1 - my).powi(2)).sum();
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// A fitted latency slope, measured and simulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlopeRow {
    pub name: String,
    pub group: String,
    pub x: String,
    pub measured_ns: f64,
    pub simulated_ns: f64,
    pub error: f64,
}

/// Weak-outcome rates of one litmus test variant, measured and simulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LitmusRow {
    pub test: String,
    pub variant: super::litmus::Variant,
    pub measured_instances: u64,
    pub measured_weak: u64,
    pub simulated_instances: u64,
    pub simulated_weak: u64,
    /// The shader path the measurement ran through (absent in older measurement files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<super::schema::ShaderPath>,
    /// Orders or scopes the GPU ran weaker than written (seq_cst as acq_rel on SPIR-V): the measured
    /// and simulated columns then test different orders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
    /// Whether the memory model allows a weak outcome of the variant (`None`: the model did not
    /// decide it).
    #[serde(default)]
    pub model_allows_weak: Option<bool>,
    /// Every final state with its count on each side, sorted by state (absent in comparisons
    /// written before there were outcome charts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<StateCounts>,
}

/// One final state of a litmus variant: how many instances ended in it, measured and simulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateCounts {
    /// `P1:r0=1; P1:r1=0;`, as the measurement file and the simulator's report write it.
    pub state: String,
    /// Whether it is the condition's witness (the weak outcome).
    pub weak: bool,
    pub measured: u64,
    pub simulated: u64,
}

/// The states of both sides merged by their text (a state one side never reached counts 0 there).
fn state_counts(
    measured: &[super::schema::OutcomeCount],
    simulated: &gpumemsim_litmus::LitmusResult,
) -> Vec<StateCounts> {
    let mut states: Vec<StateCounts> = measured
        .iter()
        .map(|o| StateCounts {
            state: o.outcome.clone(),
            weak: o.weak,
            measured: o.count,
            simulated: 0,
        })
        .collect();
    for o in &simulated.outcomes {
        let state = simulated.state_string(&o.values);
        match states.iter_mut().find(|s| s.state == state) {
            Some(s) => s.simulated += o.count,
            None => states.push(StateCounts {
                state,
                weak: o.witness,
                measured: 0,
                simulated: o.count,
            }),
        }
    }
    states.sort_by(|a, b| a.state.cmp(&b.state));
    states
}

impl LitmusRow {
    pub fn measured_rate(&self) -> f64 {
        self.measured_weak as f64 / self.measured_instances.max(1) as f64
    }
    pub fn simulated_rate(&self) -> f64 {
        self.simulated_weak as f64 / self.simulated_instances.max(1) as f64
    }
}

/// Everything `compare` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub measurement: String,
    pub adapter: String,
    pub cpu_adapter: bool,
    /// The measurement file is from a run stopped before its end (`Measurement::partial`).
    #[serde(default)]
    pub partial: bool,
    pub measured_on: String,
    pub config: String,
    pub core_mhz: u32,
    /// The cases started with their buffers in the L2 (`CompareOptions::warm_l2`).
    #[serde(default)]
    pub warm_l2: bool,
    pub overhead_ns: f64,
    pub rows: Vec<Row>,
    /// Cases left out, with the reason.
    pub skipped: Vec<(String, String)>,
    pub overall: Metrics,
    pub groups: BTreeMap<String, Metrics>,
    pub slopes: Vec<SlopeRow>,
    pub slope_metrics: Metrics,
    pub litmus: Vec<LitmusRow>,
    /// What the clock probe saw (`None`: the file has no probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockSummary>,
}

/// The clock probe of a measurement (`device::clock`): its reference time, how often the clock was
/// settled, and the cases whose probe ran more than `device::clock::RESETTLE` slower than the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockSummary {
    pub reference_ns: f64,
    pub settles: usize,
    /// `bench[case]` and how much slower its slower probe ran (0.1: 10 %).
    pub slow: Vec<(String, f64)>,
}

impl ClockSummary {
    pub fn of(m: &Measurement) -> Option<ClockSummary> {
        let c = m.clock.as_ref()?;
        Some(ClockSummary {
            reference_ns: c.reference_ns,
            settles: c.settles.len(),
            slow: m
                .benchmarks
                .iter()
                .filter_map(|b| Some((b.key(), b.clock?.slowdown())))
                .filter(|&(_, d)| d > super::clock::RESETTLE)
                .collect(),
        })
    }
}

/// The config a measured case is simulated with: the cycle limit raised to what the case needs.
///
/// The case ran to completion on the adapter, so it terminates; a long chase through DRAM may still
/// exceed `max_cycles`. So: the cycle limit is the larger of the config's and 100 times the measured
/// time at the config's clock. The no-progress rule is left as configured: a read-only kernel is
/// progress by its changing registers (`machine/watchdog.rs`).
fn cycle_limit_for(cfg: &GpuConfig, b: &BenchResult) -> GpuConfig {
    let mut c = cfg.clone();
    let measured = b.timing.as_ref().map(|t| t.median_ns).unwrap_or(0.0);
    let cycles = (100.0 * measured * cfg.clocks.core_mhz as f64 / 1000.0) as u64;
    c.watchdog.max_cycles = c.watchdog.max_cycles.max(cycles);
    c
}

/// Counts one finished simulation when dropped (whichever way the simulation ended).
struct Counted<'a>(&'a crate::progress::Progress);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.inc(1);
    }
}

/// Settings of the simulated side.
#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    pub seed: u64,
    /// Iterations of each litmus test variant in the simulator.
    pub litmus_iterations: u64,
    /// Cases start with their buffers in the L2 (`RunOptions::warm_l2`), as `measure`'s copy of the
    /// initial memory just before each run leaves them on the GPU (false: empty caches).
    pub warm_l2: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            seed: 0,
            litmus_iterations: 2000,
            warm_l2: true,
        }
    }
}

/// Simulates every case of `m` that gave a number, with `cfg` (named `config` in the output).
pub fn compare(
    m: &Measurement,
    file: &str,
    cfg: &GpuConfig,
    config: &str,
    opts: &CompareOptions,
) -> Comparison {
    compare_reporting(
        m,
        file,
        cfg,
        config,
        opts,
        &crate::progress::Progress::hidden(),
    )
}

/// [`compare`], counting finished simulations (cases, then litmus variants) on `progress`.
pub fn compare_reporting(
    m: &Measurement,
    file: &str,
    cfg: &GpuConfig,
    config: &str,
    opts: &CompareOptions,
    progress: &crate::progress::Progress,
) -> Comparison {
    let seed = opts.seed;
    let overhead = m.overhead_ns.unwrap_or(0.0);
    let ok: Vec<&BenchResult> = m
        .benchmarks
        .iter()
        .filter(|b| b.status == Status::Ok && b.group != OVERHEAD_GROUP)
        .collect();
    // `--litmus-iterations 0` skips the litmus tests, as on every command.
    let run_litmus =
        |l: &&crate::schema::LitmusResult| l.status == Status::Ok && opts.litmus_iterations > 0;
    let litmus_ok = m.litmus.iter().filter(run_litmus).count();
    progress.set_total((ok.len() + litmus_ok) as u64);
    let sims: Vec<Result<(u64, f64), String>> =
        ok.par_iter()
            .map(|b| {
                let _counted = Counted(progress);
                let text = m.kernels.get(&b.kernel).ok_or_else(|| {
                    format!("kernel {} missing from the measurement file", b.kernel)
                })?;
                let wl = crate::frontend::parse(text, &b.kernel, &overrides(&b.params))
                    .map_err(|e| e.to_string())?;
                let opts = RunOptions {
                    seed,
                    warm_l2: opts.warm_l2,
                    ..RunOptions::default()
                };
                let cfg = cycle_limit_for(cfg, b);
                let r = machine::run(&cfg, &wl, &opts).map_err(|e| {
                    let e = e.to_string();
                    format!("simulation failed: {}", e.lines().next().unwrap_or(&e))
                })?;
                if let Some(c) = r.checks.iter().find(|c| !c.passed) {
                    return Err(format!("check `{}` failed in the simulator", c.text));
                }
                Ok((r.cycles, r.time_ns))
            })
            .collect();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for b in &m.benchmarks {
        if b.status != Status::Ok {
            skipped.push((
                b.key(),
                format!("no measurement: {}", b.error.clone().unwrap_or_default()),
            ));
        }
    }
    for (b, sim) in ok.iter().zip(sims) {
        let t = b.timing.as_ref().expect("status ok has a timing");
        match sim {
            Err(e) => skipped.push((b.key(), e)),
            Ok((cycles, sim_ns)) => {
                let kernel_ns = (t.median_ns - overhead).max(0.0);
                rows.push(Row {
                    key: b.key(),
                    bench: b.bench.clone(),
                    group: b.group.clone(),
                    case: b.case.clone(),
                    params: b.params.clone(),
                    measured_ns: t.median_ns,
                    measured_min_ns: t.min_ns,
                    measured_max_ns: t.max_ns,
                    kernel_ns,
                    simulated_ns: sim_ns,
                    cycles,
                    error: (kernel_ns > 0.0).then(|| (sim_ns - kernel_ns) / kernel_ns),
                })
            }
        }
    }
    let pairs = |rs: &mut dyn Iterator<Item = &Row>| -> Vec<(f64, f64)> {
        rs.filter(|r| r.error.is_some())
            .map(|r| (r.kernel_ns, r.simulated_ns))
            .collect()
    };
    let overall = Metrics::of(&pairs(&mut rows.iter()));
    let mut groups = BTreeMap::new();
    for g in rows
        .iter()
        .map(|r| r.group.clone())
        .collect::<std::collections::BTreeSet<_>>()
    {
        groups.insert(
            g.clone(),
            Metrics::of(&pairs(&mut rows.iter().filter(|r| r.group == g))),
        );
    }
    // Slopes: the simulated times of the same cases, fitted over the same parameter.
    let by_key: BTreeMap<&str, &Row> = rows.iter().map(|r| (r.key.as_str(), r)).collect();
    let resolved: BTreeMap<String, &BTreeMap<String, i64>> = m
        .benchmarks
        .iter()
        .map(|b| (b.key(), &b.resolved))
        .collect();
    let mut slopes = Vec::new();
    for d in &m.derived {
        let points: Option<Vec<(f64, f64)>> = d
            .cases
            .iter()
            .map(|k| {
                let r = by_key.get(k.as_str())?;
                let x = *resolved.get(k)?.get(&d.x)?;
                Some((x as f64, r.simulated_ns))
            })
            .collect();
        match points.as_deref().and_then(fit) {
            Some((s, _, _)) => slopes.push(SlopeRow {
                name: d.name.clone(),
                group: d.group.clone(),
                x: d.x.clone(),
                measured_ns: d.slope_ns,
                simulated_ns: s,
                error: (s - d.slope_ns) / d.slope_ns,
            }),
            None => skipped.push((
                d.name.clone(),
                "slope: not every case of the fit was simulated".into(),
            )),
        }
    }
    let slope_metrics = Metrics::of(
        &slopes
            .iter()
            .filter(|s| s.measured_ns > 0.0)
            .map(|s| (s.measured_ns, s.simulated_ns))
            .collect::<Vec<_>>(),
    );
    let mut litmus = Vec::new();
    for l in m.litmus.iter().filter(run_litmus) {
        let key = format!("litmus {} ({})", l.test, l.variant.name());
        let text = &m.litmus_tests[&l.file];
        let opts = gpumemsim_litmus::LitmusOptions {
            iterations: opts.litmus_iterations,
            seed: seed.wrapping_add(1),
            ..Default::default()
        };
        let _counted = Counted(progress);
        let sim = match gpumemsim_litmus::parse(text, &l.file) {
            Ok(t) => {
                let tv = l.variant.apply(&t);
                gpumemsim_litmus::run(&tv, cfg, &opts)
                    .map(|r| {
                        let allows = r
                            .model
                            .as_ref()
                            .ok()
                            .filter(|d| d.race.is_none() && !d.bound_hit)
                            .map(|d| d.allowed.iter().any(|s| tv.condition.witness(s)));
                        (r, allows)
                    })
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        match sim {
            Ok((r, model_allows_weak)) => litmus.push(LitmusRow {
                states: state_counts(&l.outcomes, &r),
                test: l.test.clone(),
                variant: l.variant,
                measured_instances: l.instances,
                measured_weak: l.outcomes.iter().filter(|o| o.weak).map(|o| o.count).sum(),
                simulated_instances: r.iterations,
                simulated_weak: r.witnesses,
                shader: l.shader,
                weakened: l.weakened.clone(),
                model_allows_weak,
            }),
            Err(e) => skipped.push((key, format!("simulation failed: {e}"))),
        }
    }
    Comparison {
        measurement: file.to_string(),
        adapter: m.adapter.name.clone(),
        cpu_adapter: m.cpu_adapter,
        partial: m.partial,
        measured_on: m.date.clone(),
        config: config.to_string(),
        core_mhz: cfg.clocks.core_mhz,
        warm_l2: opts.warm_l2,
        overhead_ns: overhead,
        rows,
        skipped,
        overall,
        groups,
        slopes,
        slope_metrics,
        litmus,
        clock: ClockSummary::of(m),
    }
}

/// Everything `gpumemsim compare` was asked to do.
#[derive(Debug, Clone)]
pub struct CompareArgs {
    pub measured: std::path::PathBuf,
    /// `None`: the embedded default config.
    pub config: Option<std::path::PathBuf>,
    pub sets: Vec<String>,
    pub opts: CompareOptions,
    /// Folder for `comparison.{md,csv,json}`, `comparison.summary.json` and the plots; `None` writes
    /// nothing.
    pub out: Option<std::path::PathBuf>,
}

/// Why `gpumemsim compare` stopped.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Schema(#[from] super::schema::SchemaError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{path}: cannot write: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// The `compare` command: read the measurement file and the config, simulate, write the outputs.
pub fn run(args: &CompareArgs) -> Result<(Comparison, Vec<std::path::PathBuf>), CompareError> {
    let m = Measurement::load(&args.measured)?;
    let cfg = crate::config::load(args.config.as_deref(), &args.sets)?;
    let config = match &args.config {
        Some(p) => p.display().to_string(),
        None => crate::config::DEFAULT_NAME.to_string(),
    };
    let progress = crate::progress::Progress::new("compare", "simulations", 0);
    let c = compare_reporting(
        &m,
        &args.measured.display().to_string(),
        &cfg,
        &config,
        &args.opts,
        &progress,
    );
    progress.finish();
    let mut written = Vec::new();
    if let Some(dir) = &args.out {
        let write = |name: &str, bytes: &[u8]| -> Result<std::path::PathBuf, CompareError> {
            let p = dir.join(name);
            std::fs::create_dir_all(dir)
                .and_then(|_| crate::stats::write_atomic(&p, bytes))
                .map_err(|source| CompareError::Write {
                    path: p.display().to_string(),
                    source,
                })?;
            Ok(p)
        };
        written.push(write("comparison.md", c.markdown().as_bytes())?);
        written.push(write("comparison.csv", c.csv().as_bytes())?);
        written.push(write("comparison.json", c.cases_json().as_bytes())?);
        written.push(write(
            "comparison.summary.json",
            c.summary_json().as_bytes(),
        )?);
        for (stem, chart) in c.charts() {
            let saved = chart.save(dir, &stem)?;
            written.push(saved.png);
            written.push(saved.svg);
        }
    }
    Ok((c, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_follow_the_sign_convention() {
        // Simulator 10% too slow on one case, 10% too fast on the other.
        let m = Metrics::of(&[(100.0, 110.0), (200.0, 180.0)]);
        assert!((m.mape_percent.unwrap() - 10.0).abs() < 1e-9);
        assert!(m.mean_error_percent.unwrap().abs() < 1e-9);
        assert_eq!(Metrics::of(&[]).mape_percent, None);
        assert_eq!(m.pearson_r, None, "two points give no r");
        let r = pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 6.5)]).unwrap();
        assert!(r > 0.99 && r <= 1.0);
        assert_eq!(pearson(&[(1.0, 2.0), (1.0, 2.0), (1.0, 2.0)]), None);
    }

    /// One outcome chart per test, its categories each variant's states (the witness starred),
    /// measured beside simulated as % of each side's instances.
    #[test]
    fn litmus_outcome_charts_put_measured_beside_simulated_per_test() {
        use super::super::litmus::Variant;
        use crate::report::plot::Body;
        let st = |state: &str, weak, measured, simulated| StateCounts {
            state: state.into(),
            weak,
            measured,
            simulated,
        };
        let row = |test: &str, variant, states| LitmusRow {
            test: test.into(),
            variant,
            measured_instances: 1000,
            measured_weak: 0,
            simulated_instances: 500,
            simulated_weak: 0,
            shader: None,
            weakened: vec![],
            model_allows_weak: None,
            states,
        };
        let c = Comparison {
            measurement: "litmus.json".into(),
            adapter: "a GPU".into(),
            cpu_adapter: false,
            partial: false,
            measured_on: String::new(),
            config: "h100".into(),
            core_mhz: 1980,
            warm_l2: true,
            overhead_ns: 0.0,
            rows: vec![],
            skipped: vec![],
            overall: Metrics::of(&[]),
            groups: BTreeMap::new(),
            slopes: vec![],
            slope_metrics: Metrics::of(&[]),
            litmus: vec![
                row(
                    "MP+relaxed.gpu",
                    Variant::Relaxed,
                    vec![
                        st("P1:r0=0; P1:r1=0;", false, 990, 250),
                        st("P1:r0=1; P1:r1=0;", true, 10, 0),
                    ],
                ),
                row("SB", Variant::Relaxed, vec![st("P0:r0=0;", true, 0, 500)]),
                row(
                    "MP+relaxed.gpu",
                    Variant::SeqCst,
                    vec![st("P1:r0=1; P1:r1=1;", false, 1000, 500)],
                ),
            ],
            clock: None,
        };
        let charts = c.charts();
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "litmus",
                "litmus-outcomes-MP_relaxed_gpu",
                "litmus-outcomes-SB"
            ]
        );
        let Body::Bars {
            categories, series, ..
        } = &charts[1].1.body
        else {
            panic!("bars")
        };
        assert_eq!(
            categories,
            &[
                format!("{}: P1:r0=0 P1:r1=0", Variant::Relaxed.name()),
                format!("{}: * P1:r0=1 P1:r1=0", Variant::Relaxed.name()),
                format!("{}: P1:r0=1 P1:r1=1", Variant::SeqCst.name()),
            ]
        );
        let values: Vec<(&str, &[f64])> = series
            .iter()
            .map(|s| (s.name.as_str(), s.values.as_slice()))
            .collect();
        assert_eq!(
            values,
            [
                ("measured on a GPU", &[99.0, 1.0, 100.0][..]),
                ("simulated on h100", &[50.0, 0.0, 100.0][..])
            ]
        );
    }

    #[test]
    fn charts_say_how_many_cases_they_do_not_draw() {
        let row = |t: i64, kernel_ns: f64| Row {
            key: format!("contention[T={t}]"),
            bench: "contention".into(),
            group: "contention".into(),
            case: format!("T={t}"),
            params: BTreeMap::from([("T".to_string(), t), ("RET".to_string(), 0)]),
            measured_ns: kernel_ns + 50.0,
            measured_min_ns: kernel_ns + 50.0,
            measured_max_ns: kernel_ns + 50.0,
            kernel_ns,
            simulated_ns: 500.0,
            cycles: 1000,
            error: (kernel_ns > 0.0).then(|| (500.0 - kernel_ns) / kernel_ns),
        };
        let c = Comparison {
            measurement: "m.json".into(),
            adapter: "a GPU".into(),
            cpu_adapter: false,
            partial: false,
            measured_on: String::new(),
            config: "h100".into(),
            core_mhz: 1980,
            warm_l2: true,
            overhead_ns: 50.0,
            rows: vec![row(1, 400.0), row(64, 0.0), row(256, 0.0)],
            skipped: vec![],
            overall: Metrics::of(&[]),
            groups: BTreeMap::new(),
            slopes: vec![],
            slope_metrics: Metrics::of(&[]),
            litmus: vec![],
            clock: None,
        };
        let md = c.markdown();
        assert!(
            md.contains("Clock probe: none in this measurement file"),
            "{md}"
        );
        let c = Comparison {
            clock: Some(ClockSummary {
                reference_ns: 1.136e6,
                settles: 3,
                slow: vec![("contention[T=1]".into(), 4.73)],
            }),
            ..c
        };
        let md = c.markdown();
        assert!(
            md.contains(
                "Clock probe (`gpu::clock`): reference 1.136 ms, settled 3 times; 1 case ran beside a \
                 probe more than 5 % slower (a lower clock, or a busy CPU adapter): \
                 `contention[T=1]` +473 %."
            ),
            "{md}"
        );
        let charts = c.charts();
        let x = |name: &str| {
            let (_, chart) = charts.iter().find(|(n, _)| *n == name).expect(name);
            chart.x.title()
        };
        let note = "(2 measured cases not above the dispatch overhead: not drawn)";
        assert_eq!(
            x("simulated-vs-measured"),
            format!("measured kernel time {note} [ns]")
        );
        assert_eq!(x("contention"), format!("contending threads T {note}"));
        // Measured and simulated of one case: one colour, filled against open.
        let (_, contention) = charts.iter().find(|(n, _)| *n == "contention").unwrap();
        let crate::report::plot::Body::Lines(series) = &contention.body else {
            panic!("the contention chart draws lines")
        };
        let mark = |colour, open| Some(crate::report::plot::Mark { colour, open });
        let marks: Vec<_> = series.iter().map(|s| (s.name.as_str(), s.mark)).collect();
        assert_eq!(
            marks,
            [
                ("contention, non-returning: measured", mark(0, false)),
                ("contention, non-returning: simulated", mark(0, true)),
            ]
        );
    }
}
