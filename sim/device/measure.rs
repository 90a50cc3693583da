//! `gpumemsim measure`: a suite run on an adapter, producing the measurement file.
//!
//! Every kernel of the suite is read and every case lowered before anything runs, so that a bad suite
//! fails at once with its location. Then each case is translated, compiled and measured (warm-up, R
//! timed repetitions, every run checked). A case that cannot be translated, faults, fails a check or
//! trips a wgpu error is recorded as such with its error and no timing. Latency slopes are fitted over
//! the parameter the suite names (least squares over the cases' median times). The clock probe
//! (`device::clock`) settles the GPU's clock before the first case and brackets every case.

use super::adapter::Device;
use super::clock::{ClockProbe, Settle};
use super::schema::{
    text_hash, utc_now, BenchResult, ClockRecord, Derived, LitmusResult, Measurement, ShaderPath,
    Status, SCHEMA, VERSION,
};
use super::suite::{Case, Suite, SuiteError};
use super::{wgsl, DeviceError};
use crate::kernel::KernelError;
use crate::workload::Workload;
use std::collections::BTreeMap;
use std::path::PathBuf;
use thiserror::Error;

/// The group whose median is the fixed cost of a timed dispatch.
pub const OVERHEAD_GROUP: &str = "overhead";

#[derive(Debug, Error)]
pub enum MeasureError {
    #[error(transparent)]
    Suite(#[from] SuiteError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Litmus(Box<gpumemsim_litmus::LitmusError>),
}

/// Settings of one `measure` run; `None` takes the suite's value.
#[derive(Debug, Clone, Copy)]
pub struct MeasureOptions {
    pub warmup: Option<u32>,
    pub reps: Option<u32>,
    pub max_steps: u32,
    /// WGSL, SPIR-V, or SPIR-V where the adapter has passthrough (`--shader`).
    pub shader: super::adapter::ShaderChoice,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        MeasureOptions {
            warmup: None,
            reps: None,
            max_steps: wgsl::Options::default().max_steps,
            shader: Default::default(),
        }
    }
}

/// A suite with every kernel read and every case lowered.
pub struct Loaded {
    pub suite: Suite,
    /// Kernel text by path (as the measurement file records it).
    pub kernels: BTreeMap<String, String>,
    pub cases: Vec<(Case, Workload)>,
    /// Litmus test text by path, and the parsed tests in suite order.
    pub litmus_tests: BTreeMap<String, String>,
    pub litmus: Vec<gpumemsim_litmus::LitmusTest>,
}

/// The overrides of a case, as the kernel front end takes them.
pub fn overrides(params: &BTreeMap<String, i64>) -> Vec<(String, i64)> {
    params.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// Reads the suite's kernels and lowers every case.
pub fn load(suite: Suite) -> Result<Loaded, MeasureError> {
    let mut kernels = BTreeMap::new();
    for b in &suite.benches {
        let path = b.kernel_path.display().to_string();
        if let std::collections::btree_map::Entry::Vacant(e) = kernels.entry(path.clone()) {
            let text = crate::text::read(&b.kernel_path).map_err(KernelError::from)?;
            e.insert(text);
        }
    }
    let mut cases = Vec::new();
    for c in suite.cases() {
        let path = suite.benches[c.bench].kernel_path.display().to_string();
        let wl = crate::frontend::parse(&kernels[&path], &path, &overrides(&c.params))?;
        cases.push((c, wl));
    }
    let mut litmus_tests = BTreeMap::new();
    let mut litmus = Vec::new();
    for (_, path) in suite.litmus.iter().flat_map(|l| &l.tests) {
        let file = path.display().to_string();
        let text = crate::text::read(path)
            .map_err(|e| MeasureError::Litmus(Box::new(gpumemsim_litmus::LitmusError::from(e))))?;
        litmus.push(
            gpumemsim_litmus::parse(&text, &file).map_err(|e| MeasureError::Litmus(Box::new(e)))?,
        );
        litmus_tests.insert(file, text);
    }
    Ok(Loaded {
        suite,
        kernels,
        cases,
        litmus_tests,
        litmus,
    })
}

/// Runs every case and litmus test on `gpu`; `progress` sees each result as it is made. The shader path
/// is `path` for every case; a litmus variant that needs orders WGSL lacks (release/acquire, fences,
/// seq_cst) is untranslatable on WGSL.
pub fn measure(
    gpu: &Device,
    loaded: &Loaded,
    opts: &MeasureOptions,
    path: ShaderPath,
    progress: &mut dyn FnMut(Progress),
) -> Measurement {
    measure_with(gpu, loaded, opts, path, progress, None)
}

/// [`measure`], handing `checkpoint` the measurement so far (`partial`) after every case and litmus
/// variant, so that a run stopped from outside (a lent machine's time limit) leaves what it measured.
pub fn measure_with(
    gpu: &Device,
    loaded: &Loaded,
    opts: &MeasureOptions,
    path: ShaderPath,
    progress: &mut dyn FnMut(Progress),
    mut checkpoint: Option<&mut dyn FnMut(&Measurement)>,
) -> Measurement {
    let date = utc_now();
    let suite = &loaded.suite;
    let warmup = opts.warmup.unwrap_or(suite.warmup);
    let reps = opts.reps.unwrap_or(suite.reps).max(1);
    let snapshot = |benchmarks: &[BenchResult],
                    litmus: &[LitmusResult],
                    probe: Option<&ClockProbe>,
                    partial: bool| {
        assemble(
            gpu,
            loaded,
            &date,
            (warmup, reps),
            benchmarks,
            litmus,
            probe,
            partial,
        )
    };
    let mut benchmarks = Vec::new();
    // The clock settles before the first case; a probe that cannot run leaves the cases unprobed.
    // Litmus tests count outcomes, not time: a suite of litmus tests alone needs no probe.
    let mut probe = if loaded.cases.is_empty() {
        None
    } else {
        match ClockProbe::start(gpu, path) {
            Ok(p) => {
                progress(Progress::Settled(p.settles[0]));
                Some(p)
            }
            Err(e) => {
                progress(Progress::NoProbe(&e));
                None
            }
        }
    };
    for (case, wl) in &loaded.cases {
        let b = &suite.benches[case.bench];
        let kernel = b.kernel_path.display().to_string();
        let mut r = BenchResult {
            bench: b.name.clone(),
            group: b.group.clone(),
            case: case.label.clone(),
            kernel_hash: text_hash(&loaded.kernels[&kernel]),
            kernel,
            params: case.params.clone(),
            resolved: wl.parameters.iter().cloned().collect(),
            groups: wl.geometry.groups,
            group_size: wl.geometry.group_size,
            status: Status::Ok,
            error: None,
            timing: None,
            checks: vec![],
            reports: vec![],
            emulated: vec![],
            shader: Some(path),
            clock: None,
        };
        let wopts = wgsl::Options {
            max_steps: opts.max_steps,
        };
        match gpu.compile_with(wl, wopts, path) {
            Err(e) => {
                r.status = match e {
                    DeviceError::Translate(_) => Status::Untranslatable,
                    _ => Status::Failed,
                };
                r.error = Some(e.to_string());
            }
            Ok(p) => {
                r.emulated = p.translation.emulated.clone();
                let settles = probe.as_ref().map_or(0, |c| c.settles.len());
                let measured = match probe.as_mut().map(|c| c.around(|| p.measure(warmup, reps))) {
                    None => p.measure(warmup, reps),
                    Some(Ok((m, check))) => {
                        r.clock = Some(check);
                        m
                    }
                    Some(Err(e)) => Err(e),
                };
                for &s in probe.iter().flat_map(|c| &c.settles[settles..]) {
                    progress(Progress::Settled(s));
                }
                match measured {
                    Ok((timing, out)) => {
                        let (checks, reports) = crate::machine::checks::evaluate(wl, &out.buffers);
                        r.timing = Some(timing);
                        r.checks = checks;
                        r.reports = reports;
                    }
                    Err(e) => {
                        r.status = Status::Failed;
                        r.error = Some(e.to_string());
                    }
                }
            }
        }
        progress(Progress::Case(&r));
        benchmarks.push(r);
        if let Some(c) = checkpoint.as_mut() {
            c(&snapshot(&benchmarks, &[], probe.as_ref(), true));
        }
    }
    let mut litmus = Vec::new();
    if let Some(part) = &suite.litmus {
        for test in &loaded.litmus {
            for &v in &part.variants {
                let t = v.apply(test);
                let mut r = super::litmus::result(
                    &t,
                    v,
                    super::litmus::run_with(gpu, &t, &part.settings, path),
                );
                r.shader = Some(path);
                progress(Progress::Litmus(&r));
                litmus.push(r);
                if let Some(c) = checkpoint.as_mut() {
                    c(&snapshot(&benchmarks, &litmus, probe.as_ref(), true));
                }
            }
        }
    }
    snapshot(&benchmarks, &litmus, probe.as_ref(), false)
}

/// The measurement file of what was measured; `partial`: the run has not finished.
#[allow(clippy::too_many_arguments)]
fn assemble(
    gpu: &Device,
    loaded: &Loaded,
    date: &str,
    (warmup, reps): (u32, u32),
    benchmarks: &[BenchResult],
    litmus: &[LitmusResult],
    probe: Option<&ClockProbe>,
    partial: bool,
) -> Measurement {
    let suite = &loaded.suite;
    let overhead_ns = benchmarks
        .iter()
        .find(|b| b.group == OVERHEAD_GROUP && b.status == Status::Ok)
        .and_then(|b| b.timing.as_ref())
        .map(|t| t.median_ns);
    let derived = derive(suite, benchmarks);
    let clock = probe.map(|p| ClockRecord {
        kernel: super::clock::PROBE.to_string(),
        reference_ns: p.reference_ns(),
        settles: p.settles.clone(),
    });
    Measurement {
        schema: SCHEMA.to_string(),
        version: VERSION,
        tool: format!("gpumemsim {}", env!("CARGO_PKG_VERSION")),
        date: date.to_string(),
        cpu_adapter: gpu.report.is_cpu(),
        adapter: gpu.report.clone(),
        timestamp_period_ns: gpu.timestamp_period_ns.unwrap_or(0.0),
        suite: suite.file.clone(),
        suite_name: suite.name.clone(),
        warmup,
        reps,
        overhead_ns,
        kernels: loaded.kernels.clone(),
        benchmarks: benchmarks.to_vec(),
        derived,
        litmus_settings: suite.litmus.as_ref().map(|l| l.settings),
        litmus_tests: loaded.litmus_tests.clone(),
        litmus: litmus.to_vec(),
        clock,
        partial,
    }
}

/// Least-squares line through `points`: (slope, intercept, r²); `None` with fewer than two distinct x.
pub fn fit(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    if points.len() < 2 || sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 {
        1.0
    } else {
        sxy * sxy / (sxx * syy)
    };
    Some((slope, my - slope * mx, r2))
}

/// The slope fits of a suite over measured cases: one per benchmark with a slope and per combination
/// of its `fit_by` values, over the cases that gave a number.
pub fn derive(suite: &Suite, results: &[BenchResult]) -> Vec<Derived> {
    let mut out = Vec::new();
    for b in &suite.benches {
        let Some(x) = &b.slope else { continue };
        // Cases of this benchmark grouped by their fit_by values, in suite order.
        let mut groups: Vec<(String, Vec<&BenchResult>)> = Vec::new();
        for r in results.iter().filter(|r| r.bench == b.name) {
            let key = b
                .fit_by
                .iter()
                .map(|p| format!("{p}={}", r.params.get(p).copied().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",");
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        for (key, rs) in groups {
            let ok: Vec<&BenchResult> = rs
                .into_iter()
                .filter(|r| r.status == Status::Ok && r.resolved.contains_key(x))
                .collect();
            let points: Vec<(f64, f64)> = ok
                .iter()
                .filter_map(|r| Some((r.resolved[x] as f64, r.timing.as_ref()?.median_ns)))
                .collect();
            if let Some((slope, intercept, r2)) = fit(&points) {
                out.push(Derived {
                    name: if key.is_empty() {
                        format!("{}:{x}", b.name)
                    } else {
                        format!("{}:{x}[{key}]", b.name)
                    },
                    bench: b.name.clone(),
                    group: b.group.clone(),
                    x: x.clone(),
                    cases: ok.iter().map(|r| r.key()).collect(),
                    slope_ns: slope,
                    intercept_ns: intercept,
                    r2,
                });
            }
        }
    }
    out
}

/// Everything `gpumemsim measure` was asked to do.
#[derive(Debug, Clone)]
pub struct MeasureArgs {
    pub suite: PathBuf,
    pub adapter: Option<usize>,
    /// A file, or an existing folder (the file is then named `<device>-<date>.json` in it).
    pub out: PathBuf,
    pub opts: MeasureOptions,
}

/// What a `measure` run produced.
pub struct MeasureOutcome {
    pub measurement: Measurement,
    pub written: PathBuf,
}

impl MeasureOutcome {
    /// Cases and litmus tests that gave no result.
    pub fn failed(&self) -> usize {
        let m = &self.measurement;
        m.benchmarks
            .iter()
            .filter(|b| b.status != Status::Ok)
            .count()
            + m.litmus.iter().filter(|l| l.status != Status::Ok).count()
    }
}

/// Why `gpumemsim measure` stopped before writing a file.
#[derive(Debug, Error)]
pub enum MeasureRunError {
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{path}: cannot write: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What `measure` reports while it works.
pub enum Progress<'a> {
    /// The adapter is open (before the first case); `items` cases and litmus variants follow.
    Opened {
        adapter: &'a super::AdapterReport,
        items: usize,
        /// The shader path every case takes.
        shader: ShaderPath,
    },
    /// A case was measured (or failed).
    Case(&'a BenchResult),
    /// A litmus test variant ran (or failed).
    Litmus(&'a super::schema::LitmusResult),
    /// The clock probe settled (before the first case, or again before a case whose probe ran slow).
    Settled(Settle),
    /// The clock probe could not run: the cases are measured without it.
    NoProbe(&'a DeviceError),
}

/// The `measure` command: load the suite (all of it, before anything runs), open the adapter,
/// measure, write the file atomically.
pub fn run(
    args: &MeasureArgs,
    progress: &mut dyn FnMut(Progress),
) -> Result<MeasureOutcome, MeasureRunError> {
    let loaded = load(Suite::load(&args.suite).map_err(MeasureError::from)?)?;
    let gpu = Device::open(args.adapter)?;
    let variants = loaded.suite.litmus.as_ref().map_or(0, |l| l.variants.len());
    let path = gpu.shader_path(args.opts.shader)?;
    progress(Progress::Opened {
        adapter: &gpu.report,
        items: loaded.cases.len() + loaded.litmus.len() * variants,
        shader: path,
    });
    if gpu.timestamp_period_ns.is_none() {
        return Err(DeviceError::NoTimestamps {
            adapter: gpu.report.name.clone(),
        }
        .into());
    }
    let out_path = |date: &str| {
        if args.out.is_dir() {
            args.out
                .join(format!("{}-{}.json", gpu.report.slug(), &date[..10]))
        } else {
            args.out.clone()
        }
    };
    // After every case the file holds what was measured so far (`partial`), replaced atomically, so a
    // run stopped from outside leaves its cases; a write that fails here is retried at the end.
    let mut checkpoint = |m: &Measurement| {
        let _ = crate::stats::write_atomic(&out_path(&m.date), m.to_json().as_bytes());
    };
    let m = measure_with(
        &gpu,
        &loaded,
        &args.opts,
        path,
        progress,
        Some(&mut checkpoint),
    );
    let path = out_path(&m.date);
    crate::stats::write_atomic(&path, m.to_json().as_bytes()).map_err(|source| {
        MeasureRunError::Write {
            path: path.display().to_string(),
            source,
        }
    })?;
    Ok(MeasureOutcome {
        measurement: m,
        written: path,
    })
}

/// One progress line: `bench[case]  median (min … max)`, a litmus test's weak outcomes, or the failure.
pub fn progress_line(p: &Progress) -> String {
    let r = match p {
        Progress::Opened {
            adapter: a,
            items,
            shader,
        } => {
            return format!(
                "measuring on [{}] {} through {}: {items} cases and litmus variants",
                a.index,
                a.name,
                shader.name()
            )
        }
        Progress::Case(r) => r,
        Progress::Settled(s) => {
            return format!(
                "clock probe {} at {:.1} µs after {} runs ({:.0} ms busy)",
                if s.stable {
                    "settled"
                } else {
                    "did not settle; last"
                },
                s.probe_ns / 1e3,
                s.runs,
                s.busy_ns / 1e6
            )
        }
        Progress::NoProbe(e) => return format!("clock probe cannot run, cases unprobed: {e}"),
        Progress::Litmus(l) => {
            let weak: u64 = l.outcomes.iter().filter(|o| o.weak).map(|o| o.count).sum();
            return match &l.error {
                Some(e) => format!(
                    "litmus {} ({}): {:?}: {e}",
                    l.test,
                    l.variant.name(),
                    l.status
                ),
                None => format!(
                    "litmus {:<28} {:<16} {weak} weak of {} instances ({} states){}",
                    l.test,
                    l.variant.name(),
                    l.instances,
                    l.outcomes.len(),
                    if l.weakened.is_empty() {
                        String::new()
                    } else {
                        format!("  [{} weakened]", l.weakened.len())
                    }
                ),
            };
        }
    };
    match (&r.timing, &r.error) {
        (Some(t), _) => format!(
            "{:<40} {:>12.0} ns  ({:.0} … {:.0}){}",
            r.key(),
            t.median_ns,
            t.min_ns,
            t.max_ns,
            if r.emulated.is_empty() {
                String::new()
            } else {
                format!("  [{} emulated]", r.emulated.len())
            }
        ),
        (None, Some(e)) => format!("{:<40} {:?}: {e}", r.key(), r.status),
        (None, None) => format!("{:<40} {:?}", r.key(), r.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_a_line_and_refuses_a_point() {
        let (s, i, r2) = fit(&[(1.0, 12.0), (2.0, 22.0), (4.0, 42.0)]).unwrap();
        assert!((s - 10.0).abs() < 1e-9 && (i - 2.0).abs() < 1e-9 && (r2 - 1.0).abs() < 1e-9);
        assert!(fit(&[(1.0, 1.0)]).is_none());
        assert!(fit(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
