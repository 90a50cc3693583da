//! The sweep spec (TOML) → a validated [`Plan`]. Everything that can be wrong with a spec is found
//! here, before any run starts, and named by file and key.
//!
//! ```toml
//! name = "l2-slices"                      # report title; default: the file's stem
//! description = "What more L2 slices buy under contention."
//! config = "../configs/h100.toml"          # relative to this file, or a list of files (a `config`
//!                                          # column names each by its stem); default: embedded H100
//! seeds = [1, 2, 3]                        # default [0]
//!
//! [params]                                 # config key paths → values (a list, or one value)
//! "l2.slices" = [16, 32, 64]
//! atomics.l2.ops_per_cycle = [1, 2, 4]     # dotted keys mean the same
//!
//! [[workload]]
//! name = "contention"                      # default: the file's stem
//! kernel = "../workloads/contention.kern"  # relative to this file
//! params = { T = [1, 32, 1024], K = 1 }    # the kernel's `param`s: integers, a list or one value
//! set = { "atomics.float_add" = ["native", "cas_loop"] }   # config values for this workload only
//!
//! [[workload]]
//! litmus = "../workloads/litmus/ptx/sb_relaxed_gpu.litmus"  # a litmus test instead of a kernel
//! iterations = 4000                        # runs per point (default 10000); `instances` per launch
//!
//! [[chart]]                                # see charts.rs
//! x = "T"
//! y = "kernel.cycles / T"
//! series = ["l2.slices"]
//! ```
//!
//! Checked before running: TOML syntax and unknown keys (with line and column, from the TOML parser);
//! each config parameter value alone against the base config (unknown key path, wrong type, value out
//! of range: the config's own validation), then every combination; empty lists; workload parameters
//! (integers only); each workload loaded with each parameter combination (kernel errors carry their
//! file:line:col); the charts against the plan.

use super::charts::ChartSpec;
use super::plan::{
    combinations, BaseConfig, Job, LitmusJob, Plan, Value, Variant, CONFIG_COLUMN, META_COLUMNS,
};
use super::SweepError;
use crate::config;
use crate::progress::Progress;
use crate::workload::Workload;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: Option<String>,
    #[serde(default)]
    description: String,
    config: Option<OneOrList>,
    seeds: Option<Vec<i64>>,
    #[serde(default)]
    params: toml::Table,
    #[serde(default, rename = "workload")]
    workloads: Vec<RawWorkload>,
    #[serde(default, rename = "chart")]
    charts: Vec<ChartSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrList {
    One(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: Option<String>,
    kernel: Option<String>,
    /// A litmus test file (instead of `kernel`).
    litmus: Option<String>,
    /// Litmus: runs of the test per point.
    iterations: Option<u64>,
    /// Litmus: instances per simulated launch.
    instances: Option<u32>,
    #[serde(default)]
    params: toml::Table,
    /// Config key paths → values for this workload only.
    #[serde(default)]
    set: toml::Table,
}

/// Most points one sweep may have: the plan holds every point's parameters in memory (about a
/// kilobyte each) and in `sweep.json` (at most [`super::exec::MANIFEST_MAX_BYTES`], 1 KiB a point),
/// so a larger cross product is refused before it is made. 2^22 before issue 43, a limit whose plan
/// the reader could not read back. Documented in `docs/limits.md`.
pub const MAX_POINTS: u64 = 1 << 17;

/// Number of combinations of `lists` (saturating).
fn combos<T>(lists: &[(String, Vec<T>)]) -> u128 {
    lists
        .iter()
        .map(|(_, v)| v.len() as u128)
        .fold(1, u128::saturating_mul)
}

/// The default output folder of a spec: its path without the extension (`reports/l2.toml` →
/// `reports/l2/`).
pub fn default_out(spec: &Path) -> PathBuf {
    spec.with_extension("")
}

/// Reads and validates the spec at `path`.
pub fn load(path: &Path) -> Result<Plan, SweepError> {
    let file = path.display().to_string();
    let text = read(path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "sweep".into());
    parse(&text, &file, dir, &stem)
}

/// Reads a file the spec names (or the spec itself): `file:line:col` when it is not UTF-8.
fn read(path: &Path) -> Result<String, SweepError> {
    crate::text::read(path).map_err(|e| match e.located() {
        Err((path, source)) => SweepError::Io { path, source },
        Ok(l) => SweepError::Spec {
            file: l.at(),
            message: l.message,
        },
    })
}

/// Flattens nested tables into dotted key paths: `[params] l2.slices = [...]` and
/// `"l2.slices" = [...]` are the same parameter.
fn flatten<'a>(prefix: &str, t: &'a toml::Table, out: &mut Vec<(String, &'a toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) => flatten(&key, sub, out),
            _ => out.push((key, v)),
        }
    }
}

/// A list of scalars, or one scalar; `what` names the key in errors.
fn values(what: &str, v: &toml::Value) -> Result<Vec<Value>, String> {
    let items: Vec<&toml::Value> = match v {
        toml::Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    if items.is_empty() {
        return Err(format!(
            "{what} = []: an empty list (give at least one value)"
        ));
    }
    let mut out: Vec<Value> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let val = Value::from_toml(item).ok_or_else(|| {
            format!("{what}[{i}] = {item}: must be a number, a boolean or a string")
        })?;
        if out.contains(&val) {
            return Err(format!("{what}[{i}] = {item}: listed twice"));
        }
        out.push(val);
    }
    Ok(out)
}

/// For a relative path that does not resolve: that it was taken relative to the spec's folder, not
/// the current one (issue 43).
fn relative_note(given: &Path, resolved: &Path, dir: &Path) -> String {
    if given.is_relative() && !resolved.exists() {
        format!(
            " (a relative path in a spec is relative to the spec's folder, {}{})",
            if dir.as_os_str().is_empty() { "." } else { "" },
            dir.display()
        )
    } else {
        String::new()
    }
}

/// Parses a spec held in memory; relative paths in it are resolved against `dir`.
pub fn parse(text: &str, file: &str, dir: &Path, stem: &str) -> Result<Plan, SweepError> {
    let err = |message: String| SweepError::Spec {
        file: file.to_string(),
        message,
    };
    let raw: RawSpec =
        toml::from_str(text).map_err(|e| err(e.to_string().trim_end().to_string()))?;

    let bases: Vec<BaseConfig> = match &raw.config {
        None => vec![BaseConfig::embedded()],
        Some(c) => {
            let files: Vec<&String> = match c {
                OneOrList::One(f) => vec![f],
                OneOrList::List(l) if l.is_empty() => {
                    return Err(err(
                        "config = []: an empty list (give at least one file)".into()
                    ))
                }
                OneOrList::List(l) => l.iter().collect(),
            };
            let mut out: Vec<BaseConfig> = Vec::new();
            for (i, f) in files.iter().enumerate() {
                let path = dir.join(f);
                let at = if files.len() > 1 {
                    format!("config[{i}]")
                } else {
                    "config".into()
                };
                let text = read(&path).map_err(|e| {
                    err(format!(
                        "{at} = {f:?}: {e}{}",
                        relative_note(Path::new(f.as_str()), &path, dir)
                    ))
                })?;
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| f.to_string());
                if out.iter().any(|b| b.name == name) {
                    return Err(err(format!(
                        "{at} = {f:?}: another config is also called {name:?} (configs are named by file stem)"
                    )));
                }
                out.push(BaseConfig {
                    name,
                    text,
                    file: path.display().to_string(),
                    source: f.to_string(),
                });
            }
            out
        }
    };
    // Each base config alone must be valid before any parameter is blamed.
    for b in &bases {
        config::parse_str(&b.text, &b.file, &[]).map_err(|e| err(format!("config: {e}")))?;
    }
    // Each value on each base, with the keys that take a single value applied too (a fixed key may
    // be what makes the swept values valid, e.g. `l2.partitions` dividing every `l2.slices`): the
    // error names the spec key and the config's own complaint.
    let config_values = |at: &str,
                         t: &toml::Table|
     -> Result<Vec<(String, Vec<Value>)>, SweepError> {
        let mut flat = Vec::new();
        flatten("", t, &mut flat);
        let mut out: Vec<(String, Vec<Value>)> = Vec::new();
        for (key, v) in flat {
            if key == CONFIG_COLUMN {
                return Err(err(format!(
                    "{at}.{key}: `config` names the base config files, not a key"
                )));
            }
            let vals = values(&format!("{at}.{key}"), v).map_err(&err)?;
            out.push((key, vals));
        }
        let fixed: Vec<(&str, String)> = out
            .iter()
            .filter(|(_, vals)| vals.len() == 1)
            .map(|(k, vals)| (k.as_str(), format!("{k}={}", vals[0].to_toml())))
            .collect();
        for (key, vals) in &out {
            for (i, val) in vals.iter().enumerate() {
                let mut sets: Vec<String> = fixed
                    .iter()
                    .filter(|(k, _)| k != key)
                    .map(|(_, s)| s.clone())
                    .collect();
                sets.push(format!("{key}={}", val.to_toml()));
                for b in &bases {
                    config::parse_str(&b.text, &b.file, &sets)
                        .map_err(|e| err(format!("{at}.{key}[{i}] = {}: {e}", val.to_toml())))?;
                }
            }
        }
        Ok(out)
    };
    let config_params = config_values("params", &raw.params)?;

    let seeds: Vec<u64> = match &raw.seeds {
        None => vec![0],
        Some(s) if s.is_empty() => {
            return Err(err(
                "seeds = []: an empty list (give at least one seed)".into()
            ))
        }
        Some(s) => {
            let mut out: Vec<u64> = Vec::new();
            for (i, &v) in s.iter().enumerate() {
                let u = u64::try_from(v)
                    .map_err(|_| err(format!("seeds[{i}] = {v}: seeds are 0 or more")))?;
                if out.contains(&u) {
                    return Err(err(format!("seeds[{i}] = {v}: listed twice")));
                }
                out.push(u);
            }
            out
        }
    };

    if raw.workloads.is_empty() {
        return Err(err("no [[workload]]: a sweep needs at least one".into()));
    }
    // Points per workload variant, and the bound on the whole plan, checked before any list of
    // combinations is made.
    let per_variant = bases.len() as u128 * combos(&config_params) * seeds.len() as u128;
    let mut planned: u128 = 0;
    let mut bound = |at: &str, variants: u128| -> Result<(), SweepError> {
        planned = planned.saturating_add(variants.saturating_mul(per_variant));
        if planned > MAX_POINTS as u128 {
            return Err(err(format!(
                "{at}: the sweep reaches {planned} points (base configs × [params] × workload \
                 params × set × seeds): at most {MAX_POINTS}; split it into several specs"
            )));
        }
        Ok(())
    };
    let loads: u128 = raw
        .workloads
        .iter()
        .filter(|w| w.kernel.is_some())
        .map(|w| {
            w.params
                .values()
                .map(|v| v.as_array().map_or(1, |a| a.len() as u128))
                .fold(1u128, u128::saturating_mul)
        })
        .fold(0u128, u128::saturating_add);
    let kernels = Progress::new(
        "sweep plan",
        "kernel loads",
        loads.min(u64::MAX as u128) as u64,
    );
    let mut variants = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (wi, w) in raw.workloads.iter().enumerate() {
        let at = format!("workload[{wi}]");
        let (file, is_litmus) = match (&w.kernel, &w.litmus) {
            (Some(k), None) => (k, false),
            (None, Some(l)) => (l, true),
            _ => {
                return Err(err(format!(
                    "{at}: needs one of `kernel = \"file.kern\"` or `litmus = \"file.litmus\"`"
                )))
            }
        };
        if !is_litmus && (w.iterations.is_some() || w.instances.is_some()) {
            return Err(err(format!(
                "{at}: `iterations` and `instances` are for litmus workloads"
            )));
        }
        let path = dir.join(file);
        if !path.exists() {
            return Err(err(format!(
                "{at}: {} does not exist{}",
                path.display(),
                relative_note(Path::new(file), &path, dir)
            )));
        }
        let name = w.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| format!("workload{wi}"))
        });
        if names.contains(&name) {
            return Err(err(format!(
                "{at}: name {name:?} is used twice (give each workload its own `name`)"
            )));
        }
        names.push(name.clone());
        let at = format!("workload {name:?}");
        let mut params: Vec<(String, Vec<i64>)> = Vec::new();
        for (k, v) in &w.params {
            if k.contains('.')
                || META_COLUMNS.contains(&k.as_str())
                || k == "status"
                || k == CONFIG_COLUMN
            {
                return Err(err(format!(
                    "{at}: params.{k}: not a kernel parameter name (letters, digits and _; not point, workload, seed, status)"
                )));
            }
            let vals = values(&format!("{at}: params.{k}"), v).map_err(&err)?;
            let ints = vals
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Int(n) => Ok(*n),
                    bad => Err(err(format!(
                        "{at}: params.{k}[{i}] = {}: must be an integer (kernel parameters are integers)",
                        bad.to_toml()
                    ))),
                })
                .collect::<Result<Vec<i64>, SweepError>>()?;
            params.push((k.clone(), ints));
        }
        let set = config_values(&format!("{at}: set"), &w.set)?;
        bound(&at, combos(&params).saturating_mul(combos(&set)))?;
        if is_litmus {
            if !params.is_empty() {
                return Err(err(format!(
                    "{at}: params: a litmus test has no parameters (vary the config with [params] or `set`)"
                )));
            }
            let iterations = w.iterations.unwrap_or(10_000);
            if iterations == 0 {
                return Err(err(format!("{at}: iterations = 0: at least 1")));
            }
            if w.instances == Some(0) {
                return Err(err(format!("{at}: instances = 0: at least 1")));
            }
            let text = read(&path).map_err(|e| err(format!("{at}: litmus = {file:?}: {e}")))?;
            let test = crate::litmus::parse(&text, &path.display().to_string())
                .map_err(|e| err(format!("{at}: {e}")))?;
            for s in combinations(&set) {
                variants.push(Variant {
                    workload: name.clone(),
                    params: vec![],
                    set: s,
                    job: Job::Litmus(LitmusJob {
                        test: test.clone(),
                        text: text.clone(),
                        iterations,
                        instances: w.instances,
                    }),
                });
            }
            continue;
        }
        if let Some((k, _)) = set
            .iter()
            .find(|(k, _)| config_params.iter().any(|(c, _)| c == k))
        {
            return Err(err(format!(
                "{at}: set.{k}: already swept by [params] (set a key in one place)"
            )));
        }
        let set_combos = combinations(&set);
        for ints in combinations(&params) {
            kernels.inc(1);
            let wl = load_kernel(&path, &ints).map_err(|e| {
                let set: Vec<String> = ints.iter().map(|(k, v)| format!("{k}={v}")).collect();
                err(format!(
                    "{at}{}: {e}",
                    if set.is_empty() {
                        String::new()
                    } else {
                        format!(" with {}", set.join(", "))
                    }
                ))
            })?;
            for s in &set_combos {
                variants.push(Variant {
                    workload: name.clone(),
                    params: ints
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::Int(*v)))
                        .collect(),
                    set: s.clone(),
                    job: Job::Kernel(wl.clone()),
                });
            }
        }
    }

    kernels.finish();
    let name = raw.name.clone().unwrap_or_else(|| stem.to_string());
    let points = Progress::new("sweep plan", "points", planned as u64);
    let mut plan = Plan::cross_reporting(
        &name,
        &raw.description,
        &bases,
        &config_params,
        variants,
        &seeds,
        &points,
    )
    .map_err(|e| err(e.to_string()))?;
    points.finish();
    let mut charts = raw.charts;
    for (i, c) in charts.iter_mut().enumerate() {
        c.validate(i, &plan.manifest).map_err(|e| {
            err(format!(
                "chart[{i}]{}: {e}",
                if c.name.is_empty() {
                    String::new()
                } else {
                    format!(" ({:?})", c.name)
                }
            ))
        })?;
    }
    for (i, c) in charts.iter().enumerate() {
        if charts[..i].iter().any(|o| o.name == c.name) {
            return Err(err(format!("chart[{i}]: name {:?} is used twice", c.name)));
        }
    }
    plan.manifest.charts = charts;
    probe_chart_columns(&plan).map_err(|e| err(e.to_string()))?;
    Ok(plan)
}

/// A kernel that does nothing: what the chart probe runs.
const PROBE_KERNEL: &str = "groups 1\ngroup_size 1\nkernel probe {\n    exit\n}\n";

/// Checks the statistics the charts name before any point runs, against a probe: the first point's
/// config with a job of the same kind shrunk to nothing (one work-item that exits; one iteration of
/// the litmus test). The names of a run's statistics depend on the kind of job, not on the kernel,
/// its sizes or the config's values.
fn probe_chart_columns(plan: &Plan) -> Result<(), SweepError> {
    let (Some((cfg, job)), Some(first)) = (plan.runs.first(), plan.manifest.points.first()) else {
        return Ok(());
    };
    if plan.manifest.charts.is_empty() {
        return Ok(());
    }
    let probe_job = match job.as_ref() {
        Job::Kernel(_) => Job::Kernel(
            crate::kernel::parse(PROBE_KERNEL, "(chart probe)", &[])
                .map_err(|e| SweepError::Plan(format!("chart probe: {e}")))?,
        ),
        Job::Litmus(l) => Job::Litmus(LitmusJob {
            iterations: 1,
            instances: Some(1),
            ..l.clone()
        }),
    };
    let m = &plan.manifest;
    let probe = Plan {
        manifest: super::plan::Manifest {
            name: m.name.clone(),
            description: String::new(),
            configs: vec![],
            columns: m.columns.clone(),
            seeds: vec![first.seed],
            points: vec![first.clone()],
            charts: vec![],
            shards: 1,
        },
        runs: vec![(cfg.clone(), std::sync::Arc::new(probe_job))],
    };
    let sample = super::exec::run_point(&probe, 0);
    super::charts::check_columns(m, &sample, &plan.report_names())
}

/// Loads a kernel file with its launch parameters (errors carry the kernel's file:line:col).
fn load_kernel(path: &Path, params: &[(String, i64)]) -> Result<Workload, String> {
    crate::frontend::load(path, params).map_err(|e| e.to_string())
}
