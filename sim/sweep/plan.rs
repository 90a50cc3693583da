//! A sweep plan: the cross product of config parameter values, workload variants and seeds, as points
//! with stable ids, plus the manifest (`sweep.json`) that describes the points without the inputs.
//!
//! A point's id is a 64-bit FNV-1a hash of everything that determines its result: the workload's label
//! and parameters, the seed, the complete validated config and the complete loaded workload (both
//! serialised). Editing the base config or a kernel file therefore gives new ids, so a rerun never
//! reuses a stale result. What the id cannot see is the simulator's own code: each point result records
//! the build that computed it ([`crate::version::BUILD`]), and resuming or merging refuses to combine
//! results of different builds unless asked.
//!
//! Order of points (and of rows in every combined output): workloads in spec order; within one,
//! config-parameter combinations, then workload-parameter combinations, then seeds, each varying
//! fastest at the right, values in the order the spec lists them.

use super::charts::ChartSpec;
use super::SweepError;
use crate::config::{self, GpuConfig};
use crate::litmus::LitmusTest;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// A parameter value: what a TOML scalar can be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    /// From a TOML scalar; arrays, tables and dates are not parameter values.
    pub fn from_toml(v: &toml::Value) -> Option<Value> {
        match v {
            toml::Value::Boolean(b) => Some(Value::Bool(*b)),
            toml::Value::Integer(i) => Some(Value::Int(*i)),
            toml::Value::Float(f) => Some(Value::Float(*f)),
            toml::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }

    /// As written in a TOML file (strings quoted), for config overrides.
    pub fn to_toml(&self) -> String {
        match self {
            Value::Bool(b) => toml::Value::Boolean(*b).to_string(),
            Value::Int(i) => toml::Value::Integer(*i).to_string(),
            Value::Float(f) => toml::Value::Float(*f).to_string(),
            Value::Str(s) => toml::Value::String(s.clone()).to_string(),
        }
    }

    /// A command-line value: a TOML scalar (`16`, `0.5`, `true`, `"x"`), else the text as a string.
    pub fn parse_cli(s: &str) -> Value {
        toml::from_str::<toml::Table>(&format!("v = {s}"))
            .ok()
            .and_then(|t| t.get("v").and_then(Value::from_toml))
            .unwrap_or_else(|| Value::Str(s.to_string()))
    }

    /// Numbers are numbers; booleans, strings are not.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// Plain text (strings unquoted), as in CSV cells and legends.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(v) => write!(f, "{}", crate::stats::fmt_num(*v)),
            Value::Str(s) => write!(f, "{s}"),
        }
    }
}

/// What a point runs.
#[derive(Debug, Clone)]
pub enum Job {
    /// A kernel launched on the machine.
    Kernel(Workload),
    /// A litmus test run for many iterations (its outcomes counted).
    Litmus(LitmusJob),
}

#[derive(Debug, Clone)]
pub struct LitmusJob {
    pub test: LitmusTest,
    /// The test file's text: what the point id hashes (the parsed test has no serial form).
    pub text: String,
    pub iterations: u64,
    /// Instances per launch (`None`: as many as the GPU holds).
    pub instances: Option<u32>,
}

impl Job {
    /// What determines the job's result. A kernel's file name is left out: it says where the file
    /// was read from (which depends on the folder the sweep started in), not what runs.
    fn digest(&self) -> u64 {
        match self {
            Job::Kernel(w) => {
                let mut w = w.clone();
                w.kernel.file.clear();
                // Serialisation of an in-memory workload cannot fail (no maps with non-string keys).
                fnv64(serde_json::to_string(&w).unwrap_or_default().as_bytes())
            }
            Job::Litmus(l) => {
                fnv64(format!("litmus|{}|{}|{:?}", l.text, l.iterations, l.instances).as_bytes())
            }
        }
    }
}

/// One loaded workload with one assignment of its launch parameters, and of the config overrides that
/// apply to this workload only (the spec's per-workload `set`).
#[derive(Debug, Clone)]
pub struct Variant {
    /// The workload's label (the spec's `name`).
    pub workload: String,
    pub params: Vec<(String, Value)>,
    /// Config key paths set for this workload only, applied after the sweep-wide parameters.
    pub set: Vec<(String, Value)>,
    pub job: Job,
}

/// A base config every point starts from, and where it came from.
#[derive(Debug, Clone)]
pub struct BaseConfig {
    /// Short label (the file's stem); the `config` column when a sweep has several.
    pub name: String,
    pub text: String,
    /// The file as read (from the current folder); names it in errors.
    pub file: String,
    /// The file as the spec names it (relative to the spec): what the manifest and report show, the
    /// same from whichever folder the sweep is started.
    pub source: String,
}

impl BaseConfig {
    /// The embedded default (H100 preset).
    pub fn embedded() -> BaseConfig {
        BaseConfig {
            name: "h100".into(),
            text: config::DEFAULT_TOML.to_string(),
            file: config::DEFAULT_NAME.to_string(),
            source: config::DEFAULT_NAME.to_string(),
        }
    }
}

/// A point as the outputs describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointInfo {
    /// 16 hex digits; the result file is `points/ID.json`.
    pub id: String,
    pub workload: String,
    pub seed: u64,
    /// Config key paths and workload parameters of this point.
    pub params: BTreeMap<String, Value>,
}

/// Everything about a sweep except the loaded inputs: what `sweep.json` holds and what `sweep merge`
/// needs to combine shard outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    /// The base configs: `name: file as the spec gives it`, for the report.
    pub configs: Vec<String>,
    /// Parameter columns in output order: config key paths, then workload parameters.
    pub columns: Vec<String>,
    pub seeds: Vec<u64>,
    pub points: Vec<PointInfo>,
    pub charts: Vec<ChartSpec>,
    /// Shards the plan is split into (`sweep plan --shards N`): shard I holds the points whose index
    /// is I mod N. See [`super::shard`].
    #[serde(default = "one_shard")]
    pub shards: usize,
}

fn one_shard() -> usize {
    1
}

impl Manifest {
    /// The same points and charts, whatever the shard count.
    pub fn same_plan(&self, other: &Manifest) -> bool {
        let mut o = other.clone();
        o.shards = self.shards;
        *self == o
    }
}

/// A runnable sweep: the manifest plus each point's config and job.
#[derive(Debug, Clone)]
pub struct Plan {
    pub manifest: Manifest,
    /// Aligned with `manifest.points`.
    pub runs: Vec<(Arc<GpuConfig>, Arc<Job>)>,
}

/// Names of the columns every output row has before the parameters.
pub const META_COLUMNS: [&str; 3] = ["point", "workload", "seed"];

/// The parameter column naming the base config, present when a sweep has several.
pub const CONFIG_COLUMN: &str = "config";

impl Plan {
    /// The cross product: base configs × sweep-wide `config_params` (TOML key paths with their values)
    /// × `variants` (grouped by workload) × seeds. Every config that results is validated; an error
    /// names the base and the assignment that made it.
    pub fn cross(
        name: &str,
        description: &str,
        bases: &[BaseConfig],
        config_params: &[(String, Vec<Value>)],
        variants: Vec<Variant>,
        seeds: &[u64],
    ) -> Result<Plan, SweepError> {
        let quiet = crate::progress::Progress::hidden();
        Plan::cross_reporting(
            name,
            description,
            bases,
            config_params,
            variants,
            seeds,
            &quiet,
        )
    }

    /// [`Plan::cross`], telling `progress` how many of the points are made (a plan of 10^6 points
    /// with as many configs to validate takes minutes).
    pub fn cross_reporting(
        name: &str,
        description: &str,
        bases: &[BaseConfig],
        config_params: &[(String, Vec<Value>)],
        variants: Vec<Variant>,
        seeds: &[u64],
        progress: &dyn crate::progress::Report,
    ) -> Result<Plan, SweepError> {
        if bases.is_empty() {
            return Err(SweepError::Plan("a sweep needs a base config".into()));
        }
        if variants.is_empty() {
            return Err(SweepError::Plan(
                "a sweep needs at least one workload".into(),
            ));
        }
        if seeds.is_empty() {
            return Err(SweepError::Plan("a sweep needs at least one seed".into()));
        }
        let many = bases.len() > 1;
        let combos = combinations(config_params);

        let mut columns: Vec<String> = Vec::new();
        let mut add = |k: &String| {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        };
        if many {
            add(&CONFIG_COLUMN.to_string());
        }
        config_params.iter().for_each(|(k, _)| add(k));
        variants
            .iter()
            .flat_map(|v| &v.set)
            .for_each(|(k, _)| add(k));
        variants
            .iter()
            .flat_map(|v| &v.params)
            .for_each(|(k, _)| add(k));

        let mut names: Vec<&str> = Vec::new();
        for v in &variants {
            if !names.contains(&v.workload.as_str()) {
                names.push(&v.workload);
            }
        }
        let jobs: Vec<(Arc<Job>, u64)> = variants
            .iter()
            .map(|v| (Arc::new(v.job.clone()), v.job.digest()))
            .collect();
        // One validated config per (base, overrides), shared by every point that uses it.
        let mut configs: HashMap<(usize, Vec<String>), (Arc<GpuConfig>, u64)> = HashMap::new();

        let total = (bases.len() * combos.len() * variants.len() * seeds.len()) as u64;
        let mut points = Vec::new();
        let mut runs = Vec::new();
        for name in names {
            for (bi, base) in bases.iter().enumerate() {
                for combo in &combos {
                    for (v, (job, jdig)) in variants.iter().zip(&jobs) {
                        if v.workload != name {
                            continue;
                        }
                        let assigned: Vec<&(String, Value)> = combo.iter().chain(&v.set).collect();
                        let overrides: Vec<String> = assigned
                            .iter()
                            .map(|(k, v)| format!("{k}={}", v.to_toml()))
                            .collect();
                        let key = (bi, overrides);
                        if !configs.contains_key(&key) {
                            let cfg =
                                config::parse_str(&base.text, &base.file, &key.1).map_err(|e| {
                                    SweepError::Plan(format!(
                                        "config {}{}: {e}",
                                        base.name,
                                        if key.1.is_empty() {
                                            String::new()
                                        } else {
                                            format!(" with {}", key.1.join(", "))
                                        }
                                    ))
                                })?;
                            let digest = fnv64(config::digest_json(&cfg).as_bytes());
                            configs.insert(key.clone(), (Arc::new(cfg), digest));
                        }
                        let (cfg, cdig) = &configs[&key];
                        for &seed in seeds {
                            let mut params: BTreeMap<String, Value> = assigned
                                .iter()
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .chain(v.params.iter().cloned())
                                .collect();
                            if many {
                                params.insert(CONFIG_COLUMN.into(), Value::Str(base.name.clone()));
                            }
                            let label: Vec<String> = params
                                .iter()
                                .map(|(k, v)| format!("{k}={}", v.to_toml()))
                                .collect();
                            let key = format!(
                                "{name}|{}|seed={seed}|config={cdig:016x}|job={jdig:016x}",
                                label.join(",")
                            );
                            points.push(PointInfo {
                                id: format!("{:016x}", fnv64(key.as_bytes())),
                                workload: name.to_string(),
                                seed,
                                params,
                            });
                            runs.push((cfg.clone(), job.clone()));
                            if points.len() % 1024 == 0 {
                                progress.update(points.len() as u64, total);
                            }
                        }
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for p in &points {
            if !seen.insert(&p.id) {
                return Err(SweepError::Plan(format!(
                    "two points are the same run (workload {}, seed {}): list each value once",
                    p.workload, p.seed
                )));
            }
        }
        progress.update(points.len() as u64, total);
        Ok(Plan {
            manifest: Manifest {
                name: name.to_string(),
                description: description.to_string(),
                configs: bases
                    .iter()
                    .map(|b| format!("{}: {}", b.name, b.source))
                    .collect(),
                columns,
                seeds: seeds.to_vec(),
                points,
                charts: vec![],
                shards: 1,
            },
            runs,
        })
    }
}

impl Plan {
    /// Names of the quantities the workloads report (`report NAME = ...`), each once.
    pub fn report_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, job) in &self.runs {
            let Job::Kernel(w) = job.as_ref() else {
                continue;
            };
            for q in &w.reports {
                if !out.contains(&q.name) {
                    out.push(q.name.clone());
                }
            }
        }
        out
    }
}

/// Every combination of the listed values, the last key varying fastest.
pub fn combinations<T: Clone>(params: &[(String, Vec<T>)]) -> Vec<Vec<(String, T)>> {
    let mut out: Vec<Vec<(String, T)>> = vec![vec![]];
    for (k, vals) in params {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                vals.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// 64-bit FNV-1a: stable across platforms and releases, unlike `std`'s hasher.
pub fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
