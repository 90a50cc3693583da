//! `gpumemsim._native`: the library's jobs for Python (the package `gpumemsim` around it,
//! `python/gpumemsim/`, turns what they return into result objects and pandas DataFrames).
//!
//! Each function mirrors one CLI command and returns what that command writes, as the same text:
//! `run` the `--json` document, the `--stats-json` records and the `--csv` rows; `litmus` and `model`
//! their `--json` arrays; `sweep` the output folder with `results.json`; `validate` the
//! `results.json` of `--out`. The CLI's names, defaults and checks of arguments hold here too, so that
//! one input gives one answer whichever front end asked.
//!
//! How a call runs: the job runs on a thread of its own while the calling thread waits without the
//! GIL, waking every [`TICK`] to run Python's signal handlers (Ctrl-C, a Jupyter interrupt) and to
//! hand the progress (done, total, messages) to the Python callback. An interrupt raises
//! `KeyboardInterrupt` at once and asks the job to stop; the job stops at its next progress point (a
//! work-group finishing, a litmus launch, a sweep point, a litmus test of `model`, a preset of
//! `validate`) by unwinding with [`Cancelled`] (`resume_unwind`: no panic message), and its result is
//! dropped. A sweep keeps the points it finished (they are on disk, and a rerun resumes from them).
//!
//! What it does not do: stop inside one work-group's run or inside one oracle decision (neither has a
//! progress point), or give Python anything but text the CLI also writes, plus the human reports.
//! Errors raise `gpumemsim.Error` with the CLI's message and its `caused by:` lines.

use gpumemsim::{config, litmus, progress::Report, runner, sweep, validate};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pyo3::create_exception!(
    gpumemsim,
    Error,
    PyException,
    "A gpumemsim error: the CLI's message (file:line:col, or key, value and what is allowed)."
);

/// How often the waiting thread looks at signals and progress.
const TICK: Duration = Duration::from_millis(100);

/// The unwinding payload of a job stopped by an interrupt.
struct Cancelled;

/// What the job and the waiting thread share: progress counts, messages for the user, the stop flag.
#[derive(Default)]
struct Watch {
    done: AtomicU64,
    total: AtomicU64,
    cancel: AtomicBool,
    messages: Mutex<Vec<String>>,
}

impl Watch {
    /// Stops the job here if an interrupt asked for it.
    fn checkpoint(&self) {
        if self.cancel.load(Ordering::Relaxed) {
            std::panic::resume_unwind(Box::new(Cancelled));
        }
    }

    fn say(&self, m: String) {
        if let Ok(mut v) = self.messages.lock() {
            v.push(m);
        }
    }

    fn set(&self, done: u64, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
    }
}

impl Report for Watch {
    fn update(&self, done: u64, total: u64) {
        self.set(done, total);
        self.checkpoint();
    }
}

/// A part of the watched work that starts `base` units in (one litmus test of several).
struct Part<'a> {
    watch: &'a Watch,
    base: u64,
}

impl Report for Part<'_> {
    fn update(&self, done: u64, _total: u64) {
        self.watch.done.store(self.base + done, Ordering::Relaxed);
        self.watch.checkpoint();
    }
}

/// Sweep progress: points to run, each one finished.
struct SweepWatch(Arc<Watch>);

impl sweep::exec::Progress for SweepWatch {
    fn start(&self, to_run: usize, already_done: usize) {
        self.0.set(0, to_run as u64);
        if already_done > 0 {
            self.0.say(format!(
                "{already_done} points already done; running {to_run}"
            ));
        }
    }
    fn finished(&self, p: &sweep::plan::PointInfo, o: &sweep::exec::Outcome) {
        if let sweep::exec::Outcome::Error { error } = o {
            let first = error.lines().next().unwrap_or("");
            self.0.say(format!(
                "point {} ({} seed {}) failed: {first}",
                p.id, p.workload, p.seed
            ));
        }
        self.0.done.fetch_add(1, Ordering::Relaxed);
        // The point's result is written before this call: stopping here loses no finished point.
        self.0.checkpoint();
    }
}

/// The CLI's error text without its `error: ` prefix: the message, then one `  caused by:` line
/// per source.
fn message(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(&format!("\n  caused by: {c}"));
        cause = c.source();
    }
    s
}

fn err(e: impl std::error::Error) -> String {
    message(&e)
}

/// Runs `job` on its own thread; waits without the GIL, running signal handlers and `progress`
/// (called as `progress(done, total, messages)`) every [`TICK`].
fn blocking<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<PyObject>,
    job: impl FnOnce(&Arc<Watch>) -> Result<T, String> + Send + 'static,
) -> PyResult<T> {
    let watch = Arc::new(Watch::default());
    let (tx, mut rx) = std::sync::mpsc::channel();
    let w = watch.clone();
    std::thread::Builder::new()
        .name("gpumemsim".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| job(&w)));
            let _ = tx.send(r);
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    let mut shown = (u64::MAX, u64::MAX);
    let mut tell = |py: Python<'_>| -> PyResult<()> {
        let Some(cb) = &progress else { return Ok(()) };
        let now = (
            watch.done.load(Ordering::Relaxed),
            watch.total.load(Ordering::Relaxed),
        );
        let lines: Vec<String> = watch
            .messages
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default();
        if now != shown || !lines.is_empty() {
            shown = now;
            cb.call1(py, (now.0, now.1, lines))?;
        }
        Ok(())
    };
    loop {
        // The receiver goes into the GIL-free closure and comes back (it is Send, not Sync).
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(TICK), rx));
        rx = back;
        match got {
            Ok(Ok(r)) => {
                tell(py)?;
                return r.map_err(Error::new_err);
            }
            Ok(Err(p)) => {
                if p.is::<Cancelled>() {
                    return Err(PyKeyboardInterrupt::new_err("interrupted"));
                }
                let what = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return Err(PyRuntimeError::new_err(format!(
                    "gpumemsim panicked (a bug; please report it with the inputs): {what}"
                )));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the gpumemsim job ended without a result",
                ));
            }
        }
        let stop = py.check_signals().and_then(|_| tell(py));
        if let Err(e) = stop {
            watch.cancel.store(true, Ordering::Relaxed);
            return Err(e);
        }
    }
}

/// A config named by the caller: `None` or `"h100"` the embedded default (what the CLI runs without
/// `--config`), another preset's name (`a100`, `v100`, `tiny`, `stress`) that embedded preset, anything
/// else a file.
enum Source {
    Default,
    Preset(String, &'static str),
    File(PathBuf),
}

impl Source {
    fn of(config: Option<&str>) -> Result<Source, String> {
        let Some(c) = config else {
            return Ok(Source::Default);
        };
        // As a config's `base`: a name has no path separator and no `.toml`.
        let is_name = !c.contains(['/', '\\']) && !c.ends_with(".toml");
        if !is_name {
            return Ok(Source::File(PathBuf::from(c)));
        }
        if c == config::DEFAULT_PRESET {
            return Ok(Source::Default);
        }
        let file = format!("configs/{c}.toml");
        match config::PRESETS.iter().find(|(f, _)| *f == file) {
            Some((_, text)) => Ok(Source::Preset(c.to_string(), text)),
            None => Err(format!(
                "config {c:?}: no such preset; presets: {} (or give a file's path)",
                preset_names().join(", ")
            )),
        }
    }

    /// The name the CLI's outputs give this config.
    fn name(&self) -> String {
        match self {
            Source::Default => config::DEFAULT_NAME.to_string(),
            Source::Preset(n, _) => format!("configs/{n}.toml (embedded)"),
            Source::File(p) => p.display().to_string(),
        }
    }

    fn resolve(&self, sets: &[String]) -> Result<config::Resolved, String> {
        match self {
            Source::Default => config::load_resolved(None, sets),
            Source::File(p) => config::load_resolved(Some(p), sets),
            Source::Preset(n, text) => config::resolve(text, &self.name(), Some(n), sets),
        }
        .map_err(err)
    }
}

fn preset_names() -> Vec<String> {
    config::PRESETS
        .iter()
        .map(|(f, _)| {
            f.trim_start_matches("configs/")
                .trim_end_matches(".toml")
                .to_string()
        })
        .collect()
}

fn dict<'py>(py: Python<'py>, items: Vec<(&str, PyObject)>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn obj<'py>(py: Python<'py>, v: impl IntoPyObject<'py>) -> PyObject {
    use pyo3::IntoPyObjectExt;
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

/// `gpumemsim run`: returns `json` (the `--json` document), `stats_json` (`--stats-json`), `csv`
/// (`--csv`), `summary` (what the CLI prints) and `failed_checks`.
#[pyfunction]
#[pyo3(signature = (workload, config=None, sets=vec![], params=vec![], seed=0, threads=1, races=false, progress=None))]
#[allow(clippy::too_many_arguments)]
#[pyo3(name = "run")]
fn run_job<'py>(
    py: Python<'py>,
    workload: PathBuf,
    config: Option<String>,
    sets: Vec<String>,
    params: Vec<(String, i64)>,
    seed: u64,
    threads: usize,
    races: bool,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if !(1..=1024).contains(&threads) {
        return Err(PyValueError::new_err(format!(
            "threads={threads}: must be 1 to 1024 (the CLI's --threads)"
        )));
    }
    let out = blocking(py, progress, move |w| {
        let source = Source::of(config.as_deref())?;
        let name = source.name();
        let cfg = source.resolve(&sets)?.config;
        let args = runner::RunArgs {
            input: workload.clone(),
            seed,
            sets,
            params,
            races,
            threads,
            ..Default::default()
        };
        let hook = gpumemsim::machine::ProgressHook(w.clone());
        let out = runner::execute_on(&args, cfg, &name, Some(hook)).map_err(err)?;
        let json = runner::document_text(
            &out.result,
            &name,
            &args,
            &out.input,
            out.front_end.as_ref(),
        );
        let rows = runner::stat_rows(&args, &out.result);
        let stats_json = gpumemsim::report::records::of_rows(&rows);
        let csv = gpumemsim::stats::Stats { rows }.to_csv();
        Ok((
            json,
            stats_json,
            csv,
            out.summary.clone(),
            out.failed_checks(),
        ))
    })?;
    dict(
        py,
        vec![
            ("json", obj(py, out.0)),
            ("stats_json", obj(py, out.1)),
            ("csv", obj(py, out.2)),
            ("summary", obj(py, out.3)),
            ("failed_checks", obj(py, out.4)),
        ],
    )
}

/// `gpumemsim litmus`: returns `json` (the `--json` array), `reports` (each test's text report),
/// `skipped` ([name, why] of tests that need a machine capability), `summary` and `failed`.
#[pyfunction]
#[pyo3(signature = (paths, config=None, sets=vec![], iterations=10_000, seed=0, races=false, expect=None, instances=None, serial=false, unroll=4, progress=None))]
#[allow(clippy::too_many_arguments)]
#[pyo3(name = "litmus")]
fn litmus_job<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    config: Option<String>,
    sets: Vec<String>,
    iterations: u64,
    seed: u64,
    races: bool,
    expect: Option<PathBuf>,
    instances: Option<u32>,
    serial: bool,
    unroll: u32,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if iterations == 0 {
        return Err(PyValueError::new_err("iterations=0: must be at least 1"));
    }
    if instances == Some(0) {
        return Err(PyValueError::new_err("instances=0: must be at least 1"));
    }
    if !(1..=64).contains(&unroll) {
        return Err(PyValueError::new_err(format!(
            "unroll={unroll}: must be 1 to 64"
        )));
    }
    if paths.is_empty() {
        return Err(PyValueError::new_err(
            "paths: give at least one test file or folder",
        ));
    }
    let out = blocking(py, progress, move |w| {
        let source = Source::of(config.as_deref())?;
        let name = source.name();
        let cfg = source.resolve(&sets)?.config;
        let files = litmus::collect(&paths).map_err(err)?;
        let mut tests = files
            .iter()
            .map(|f| litmus::load(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        if let Some(e) = &expect {
            litmus::apply_expectations(&mut tests, &litmus::load_expectations(e).map_err(err)?);
        }
        let opts = litmus::LitmusOptions {
            iterations,
            seed,
            races,
            instances,
            parallel: !serial,
        };
        let model_opts = litmus::model::ModelOptions {
            unroll,
            ..Default::default()
        };
        w.set(0, tests.len() as u64 * iterations);
        let (mut results, mut reports, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
        for (k, t) in tests.iter().enumerate() {
            let part = Part {
                watch: w,
                base: k as u64 * iterations,
            };
            match litmus::run_with_model(t, &cfg, &opts, &model_opts, &part) {
                Err(e @ litmus::LitmusError::NeedsCapability { .. }) => {
                    skipped.push((t.name.clone(), e.to_string()));
                }
                r => {
                    let r = r.map_err(err)?;
                    reports.push(litmus::text_report(&r));
                    results.push(r);
                }
            }
        }
        let json = gpumemsim::runner::litmus_json(&results, &name, seed, &sets).map_err(err)?;
        let (summary, failed) = litmus::summary(&results);
        Ok((json, reports, skipped, summary, failed))
    })?;
    dict(
        py,
        vec![
            ("json", obj(py, out.0)),
            ("reports", obj(py, out.1)),
            ("skipped", obj(py, out.2)),
            ("summary", obj(py, out.3)),
            ("failed", obj(py, out.4)),
        ],
    )
}

/// `gpumemsim model`: returns `json` (the `--json` array) and `reports` (each test's text).
#[pyfunction]
#[pyo3(signature = (paths, unroll=4, progress=None))]
#[pyo3(name = "model")]
fn model_job<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    unroll: u32,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if !(1..=64).contains(&unroll) {
        return Err(PyValueError::new_err(format!(
            "unroll={unroll}: must be 1 to 64"
        )));
    }
    if paths.is_empty() {
        return Err(PyValueError::new_err(
            "paths: give at least one test file or folder",
        ));
    }
    let out = blocking(py, progress, move |w| {
        let files = litmus::collect(&paths).map_err(err)?;
        let tests = files
            .iter()
            .map(|f| litmus::load(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        let opts = litmus::model::ModelOptions {
            unroll,
            ..Default::default()
        };
        w.set(0, tests.len() as u64);
        let (mut docs, mut reports) = (Vec::new(), Vec::new());
        for (k, t) in tests.iter().enumerate() {
            let d = litmus::model::decide(t, &opts);
            reports.push(litmus::model::text_decision(t, &d));
            docs.push(litmus::model::json_decision(t, &d));
            w.update(k as u64 + 1, tests.len() as u64);
        }
        let json = serde_json::to_string_pretty(&docs).map_err(err)?;
        Ok((json, reports))
    })?;
    dict(
        py,
        vec![("json", obj(py, out.0)), ("reports", obj(py, out.1))],
    )
}

/// `gpumemsim sweep SPEC` (`spec` a file) or a spec given as JSON text (`spec_json`, a dict's
/// `json.dumps`; relative paths in it from `base_dir`). Writes the output folder as the CLI does and
/// returns `out`, `rows`, `failed`, `ran`, `already_done`, `warnings` and `chart_errors`.
#[pyfunction]
#[pyo3(signature = (spec=None, spec_json=None, base_dir=None, out=None, jobs=None, retry_failed=false, mix_builds=false, progress=None))]
#[allow(clippy::too_many_arguments)]
fn sweep_run<'py>(
    py: Python<'py>,
    spec: Option<PathBuf>,
    spec_json: Option<String>,
    base_dir: Option<PathBuf>,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    retry_failed: bool,
    mix_builds: bool,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if jobs == Some(0) {
        return Err(PyValueError::new_err("jobs=0: must be at least 1"));
    }
    let r = blocking(py, progress, move |w| {
        let (plan, out) = match (&spec, &spec_json) {
            (Some(path), None) => {
                let plan = sweep::spec::load(path).map_err(err)?;
                let out = out.unwrap_or_else(|| sweep::spec::default_out(path));
                (plan, out)
            }
            (None, Some(json)) => {
                let value: toml::Value =
                    serde_json::from_str(json).map_err(|e| format!("sweep spec (a dict): {e}"))?;
                let text = toml::to_string(&value)
                    .map_err(|e| format!("sweep spec (a dict): not expressible as TOML: {e}"))?;
                let dir = base_dir.unwrap_or_else(|| PathBuf::from("."));
                let plan =
                    sweep::spec::parse(&text, "sweep spec (a dict)", &dir, "sweep").map_err(err)?;
                let out = out.ok_or("a sweep given as a dict needs `out`, its output folder")?;
                (plan, out)
            }
            _ => return Err("give a sweep spec's path or a dict, not both".to_string()),
        };
        let opts = sweep::exec::ExecOptions {
            jobs,
            shard: None,
            retry_failed,
            mix_builds,
        };
        let s = sweep::exec::execute(&plan, &out, &opts, &SweepWatch(w.clone())).map_err(err)?;
        if !s.complete {
            return Err(format!(
                "{}: not every point of the sweep is done (other shards?); `gpumemsim sweep merge` joins them",
                out.display()
            ));
        }
        let f = sweep::finish(&out).map_err(err)?;
        Ok((out, f, s.ran, s.already_done))
    })?;
    let (out, f, ran, already) = r;
    dict(
        py,
        vec![
            ("out", obj(py, out.display().to_string())),
            ("rows", obj(py, f.rows)),
            ("failed", obj(py, f.failed)),
            ("ran", obj(py, ran)),
            ("already_done", obj(py, already)),
            ("warnings", obj(py, f.warnings.clone())),
            (
                "chart_errors",
                obj(
                    py,
                    f.chart_errors
                        .iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>(),
                ),
            ),
        ],
    )
}

/// `gpumemsim validate`: returns `json` (the `results.json` that `--out` writes), `tables` (the
/// printed table of each preset) and `passed`; with `out`, writes that folder as the CLI does.
#[pyfunction]
#[pyo3(signature = (config=None, reference=PathBuf::from("reports/reference"), out=None, threads=2, progress=None))]
fn validate_run<'py>(
    py: Python<'py>,
    config: Option<PathBuf>,
    reference: PathBuf,
    out: Option<PathBuf>,
    threads: usize,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if !(1..=1024).contains(&threads) {
        return Err(PyValueError::new_err(format!(
            "threads={threads}: must be 1 to 1024"
        )));
    }
    let r = blocking(py, progress, move |w| {
        let refs = validate::load_dir(&reference).map_err(err)?;
        let selected: Vec<&validate::Reference> = match &config {
            None => refs.iter().collect(),
            Some(c) => {
                let text = gpumemsim::text::read(c).map_err(err)?;
                validate::select(&refs, c, &text, &reference).map_err(err)?
            }
        };
        w.set(0, selected.len() as u64);
        let mut results = Vec::new();
        let mut tables = Vec::new();
        for (k, r) in selected.into_iter().enumerate() {
            let p = validate::run(r, config.as_deref(), threads).map_err(err)?;
            tables.push(validate::table(&p));
            results.push(p);
            w.update(k as u64 + 1, w.total.load(Ordering::Relaxed));
        }
        if let Some(out) = &out {
            validate::write(out, &results).map_err(err)?;
        }
        let json = validate::results_json(&results);
        let passed = results.iter().all(|p| p.passed());
        Ok((json, tables, passed))
    })?;
    dict(
        py,
        vec![
            ("json", obj(py, r.0)),
            ("tables", obj(py, r.1)),
            ("passed", obj(py, r.2)),
        ],
    )
}

/// `gpumemsim config show [FILE] --set ...`: the resolved config as TOML with each value's origin.
#[pyfunction]
#[pyo3(signature = (config=None, sets=vec![]))]
fn config_show(config: Option<String>, sets: Vec<String>) -> PyResult<String> {
    let r = Source::of(config.as_deref())
        .and_then(|s| s.resolve(&sets))
        .map_err(Error::new_err)?;
    config::show::render(&r).map_err(|e| Error::new_err(err(e)))
}

/// The resolved config (a preset's name or a file, with `sets`) as JSON: every key with its value.
#[pyfunction]
#[pyo3(signature = (config=None, sets=vec![]))]
fn config_json(config: Option<String>, sets: Vec<String>) -> PyResult<String> {
    let r = Source::of(config.as_deref())
        .and_then(|s| s.resolve(&sets))
        .map_err(Error::new_err)?;
    serde_json::to_string(&r.config).map_err(|e| Error::new_err(err(e)))
}

/// `gpumemsim config check FILE...`: per file, `None` (valid) or the error the CLI prints.
#[pyfunction]
fn config_check(files: Vec<PathBuf>) -> Vec<(String, Option<String>)> {
    files
        .iter()
        .map(|f| {
            (
                f.display().to_string(),
                // As the CLI prints it: the message alone.
                config::load(Some(f), &[]).err().map(|e| e.to_string()),
            )
        })
        .collect()
}

/// `gpumemsim config doc [--markdown]`.
#[pyfunction]
#[pyo3(signature = (markdown=false))]
fn config_doc(markdown: bool) -> PyResult<String> {
    let cfg = config::default_config().map_err(|e| Error::new_err(err(e)))?;
    if markdown {
        config::doc::markdown(&cfg, config::DEFAULT_NAME)
    } else {
        config::doc::text(&cfg)
    }
    .map_err(|e| Error::new_err(err(e)))
}

/// The embedded presets' names.
#[pyfunction]
fn presets() -> Vec<String> {
    preset_names()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("BUILD", gpumemsim::version::BUILD)?;
    for f in [
        wrap_pyfunction!(run_job, m)?,
        wrap_pyfunction!(litmus_job, m)?,
        wrap_pyfunction!(model_job, m)?,
        wrap_pyfunction!(sweep_run, m)?,
        wrap_pyfunction!(validate_run, m)?,
        wrap_pyfunction!(config_show, m)?,
        wrap_pyfunction!(config_json, m)?,
        wrap_pyfunction!(config_check, m)?,
        wrap_pyfunction!(config_doc, m)?,
        wrap_pyfunction!(presets, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
