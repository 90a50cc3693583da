//! The measurement suite file: which kernels of `workloads/` to measure, with which parameter values.
//!
//! A suite is TOML (`workloads/measure/*.toml`): a name, default warm-up and repetitions, and a list of
//! benchmarks, each a kernel with fixed parameter overrides, swept parameters (every combination is one
//! case), linked parameters (`link = { K = "T" }`: K takes T's value in every case) and optionally the
//! parameter over which a latency slope is fitted (swept, or derived by the kernel). Kernel paths are
//! relative to the suite file's folder. The same file drives `measure` (on the adapter) and, through the
//! measurement file it produces, `compare` (on the simulator).
//!
//! An optional `[litmus]` table lists litmus test files to run on the adapter, the variants
//! (`relaxed`, `storage_barrier`) and the harness's settings (instances per dispatch, dispatches,
//! work-group size, stress).
//!
//! Unknown keys and impossible values are errors naming the key path and what is allowed.

use super::litmus::{LitmusSettings, Variant};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SuiteError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: {key} = {value}: {allowed}")]
    Invalid {
        file: String,
        key: String,
        value: String,
        allowed: String,
    },
}

/// A file the reader could not read, or whose bytes are not text, at its position (`text.rs`).
impl From<crate::text::TextError> for SuiteError {
    fn from(e: crate::text::TextError) -> Self {
        match e.located() {
            Err((file, source)) => Self::Io { file, source },
            Ok(l) => Self::Parse {
                file: l.at(),
                message: l.message,
            },
        }
    }
}

/// Most cases one suite may have.
pub const MAX_CASES: u64 = 100_000;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteSpec {
    name: String,
    #[serde(default = "default_warmup")]
    warmup: u32,
    #[serde(default = "default_reps")]
    reps: u32,
    #[serde(default)]
    bench: Vec<BenchSpec>,
    litmus: Option<LitmusSpec>,
}

/// `[litmus]`: litmus tests run on the adapter, with the GPU harness's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LitmusSpec {
    tests: Vec<String>,
    #[serde(default = "default_variants")]
    variants: Vec<Variant>,
    instances: Option<u32>,
    dispatches: Option<u32>,
    workgroup_size: Option<u32>,
    stress_ratio: Option<u32>,
    stress_iterations: Option<u32>,
    pre_stress_iterations: Option<u32>,
    seed: Option<u64>,
}

fn default_variants() -> Vec<Variant> {
    vec![Variant::Relaxed, Variant::StorageBarrier]
}

/// The litmus part of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct LitmusPart {
    /// Test files as written and resolved against the suite's folder.
    pub tests: Vec<(String, PathBuf)>,
    pub variants: Vec<Variant>,
    pub settings: LitmusSettings,
}

fn default_warmup() -> u32 {
    2
}
fn default_reps() -> u32 {
    10
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchSpec {
    name: String,
    group: String,
    kernel: String,
    #[serde(default)]
    params: BTreeMap<String, i64>,
    #[serde(default)]
    sweep: BTreeMap<String, Vec<i64>>,
    /// Parameters that take another (swept) parameter's value in every case: `{ K = "T" }`.
    #[serde(default)]
    link: BTreeMap<String, String>,
    /// Parameter (swept, or derived by the kernel from swept ones) over which to fit ns per unit.
    slope: Option<String>,
    /// Swept parameters whose values separate one fit from another (default: every swept parameter
    /// except the slope's).
    fit_by: Option<Vec<String>>,
}

/// One benchmark of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    pub name: String,
    pub group: String,
    /// The kernel path as written in the suite (relative to the suite's folder).
    pub kernel: String,
    /// The kernel path resolved against the suite's folder.
    pub kernel_path: PathBuf,
    pub params: BTreeMap<String, i64>,
    pub sweep: BTreeMap<String, Vec<i64>>,
    pub link: BTreeMap<String, String>,
    pub slope: Option<String>,
    /// Swept parameters whose values separate one slope fit from another.
    pub fit_by: Vec<String>,
}

/// One case: a benchmark with every parameter fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Index of the benchmark in [`Suite::benches`].
    pub bench: usize,
    /// `NAME=VALUE,...` of the swept parameters (empty: the benchmark has no sweep).
    pub label: String,
    /// Every override: fixed and swept.
    pub params: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub file: String,
    pub name: String,
    pub warmup: u32,
    pub reps: u32,
    pub benches: Vec<Bench>,
    pub litmus: Option<LitmusPart>,
}

impl Suite {
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let file = path.display().to_string();
        let text = crate::text::read(path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Suite::parse(&text, &file, dir)
    }

    /// Parses a suite's text; kernel paths resolve against `dir`.
    pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Suite, SuiteError> {
        let spec: SuiteSpec = toml::from_str(text).map_err(|e| SuiteError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        let invalid = |key: String, value: String, allowed: &str| SuiteError::Invalid {
            file: file.to_string(),
            key,
            value,
            allowed: allowed.to_string(),
        };
        if spec.reps == 0 {
            return Err(invalid("reps".into(), "0".into(), "must be at least 1"));
        }
        if spec.bench.is_empty() && spec.litmus.is_none() {
            return Err(invalid(
                "bench".into(),
                "[]".into(),
                "a suite needs at least one [[bench]] or a [litmus] table",
            ));
        }
        let litmus = match spec.litmus {
            None => None,
            Some(l) => {
                let d = LitmusSettings::default();
                let settings = LitmusSettings {
                    instances: l.instances.unwrap_or(d.instances),
                    dispatches: l.dispatches.unwrap_or(d.dispatches),
                    workgroup_size: l.workgroup_size.unwrap_or(d.workgroup_size),
                    stress_ratio: l.stress_ratio.unwrap_or(d.stress_ratio),
                    stress_iterations: l.stress_iterations.unwrap_or(d.stress_iterations),
                    pre_stress_iterations: l
                        .pre_stress_iterations
                        .unwrap_or(d.pre_stress_iterations),
                    seed: l.seed.unwrap_or(d.seed),
                };
                for (key, v) in [
                    ("instances", settings.instances),
                    ("dispatches", settings.dispatches),
                    ("workgroup_size", settings.workgroup_size),
                ] {
                    if v == 0 {
                        return Err(invalid(
                            format!("litmus.{key}"),
                            "0".into(),
                            "must be at least 1",
                        ));
                    }
                }
                if l.tests.is_empty() || l.variants.is_empty() {
                    return Err(invalid(
                        "litmus.tests".into(),
                        "[]".into(),
                        "needs at least one test and one variant",
                    ));
                }
                Some(LitmusPart {
                    tests: l.tests.iter().map(|t| (t.clone(), dir.join(t))).collect(),
                    variants: l.variants,
                    settings,
                })
            }
        };
        let mut names = std::collections::HashSet::new();
        let mut benches = Vec::new();
        let mut cases: u128 = 0;
        for (i, b) in spec.bench.into_iter().enumerate() {
            let key = |k: &str| format!("bench[{i}].{k}");
            // Bounded before `cases()` makes the cross product.
            cases = cases.saturating_add(
                b.sweep
                    .values()
                    .map(|v| v.len() as u128)
                    .fold(1, u128::saturating_mul),
            );
            if cases > MAX_CASES as u128 {
                return Err(invalid(
                    key("sweep"),
                    format!("{cases} cases so far"),
                    &format!("a suite has at most {MAX_CASES} cases (each is a dispatch to time)"),
                ));
            }
            if b.name.is_empty() || !names.insert(b.name.clone()) {
                return Err(invalid(
                    key("name"),
                    format!("{:?}", b.name),
                    "must be non-empty and unique in the suite",
                ));
            }
            if b.group.is_empty() {
                return Err(invalid(key("group"), "\"\"".into(), "must be non-empty"));
            }
            for (p, vals) in &b.sweep {
                if vals.is_empty() {
                    return Err(invalid(
                        key(&format!("sweep.{p}")),
                        "[]".into(),
                        "a swept parameter needs at least one value",
                    ));
                }
                if b.params.contains_key(p) {
                    return Err(invalid(
                        key(&format!("sweep.{p}")),
                        format!("{vals:?}"),
                        "a parameter is either fixed (params) or swept, not both",
                    ));
                }
            }
            for (p, from) in &b.link {
                if !b.sweep.contains_key(from)
                    || b.params.contains_key(p)
                    || b.sweep.contains_key(p)
                {
                    return Err(invalid(
                        key(&format!("link.{p}")),
                        format!("{from:?}"),
                        "must name a swept parameter, for a parameter neither fixed nor swept",
                    ));
                }
            }
            if let Some(s) = &b.slope {
                if s.is_empty() || b.params.contains_key(s) || b.link.contains_key(s) {
                    return Err(invalid(
                        key("slope"),
                        format!("{s:?}"),
                        "must name a parameter that varies: swept, or derived by the kernel from \
                         swept ones",
                    ));
                }
                if let Some(f) = b
                    .fit_by
                    .iter()
                    .flatten()
                    .find(|f| !b.sweep.contains_key(*f))
                {
                    return Err(invalid(
                        key("fit_by"),
                        format!("{f:?}"),
                        "must list swept parameters",
                    ));
                }
                if b.sweep.get(s).is_some_and(|v| v.len() < 2) {
                    return Err(invalid(
                        key("slope"),
                        format!("{s:?}"),
                        "a slope needs at least two values of its parameter",
                    ));
                }
            }
            if b.slope.is_none() && b.fit_by.is_some() {
                return Err(invalid(
                    key("fit_by"),
                    format!("{:?}", b.fit_by),
                    "only means something with a slope",
                ));
            }
            benches.push(Bench {
                kernel_path: dir.join(&b.kernel),
                name: b.name,
                group: b.group,
                kernel: b.kernel,
                fit_by: b.fit_by.unwrap_or_else(|| {
                    b.sweep
                        .keys()
                        .filter(|k| Some(*k) != b.slope.as_ref())
                        .cloned()
                        .collect()
                }),
                params: b.params,
                sweep: b.sweep,
                link: b.link,
                slope: b.slope,
            });
        }
        Ok(Suite {
            file: file.to_string(),
            name: spec.name,
            warmup: spec.warmup,
            reps: spec.reps,
            benches,
            litmus,
        })
    }

    /// Every case of every benchmark, in suite order; swept parameters vary last-name-fastest.
    pub fn cases(&self) -> Vec<Case> {
        let mut out = Vec::new();
        for (bi, b) in self.benches.iter().enumerate() {
            let mut combos: Vec<Vec<(String, i64)>> = vec![vec![]];
            for (p, vals) in &b.sweep {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        vals.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push((p.clone(), *v));
                            c
                        })
                    })
                    .collect();
            }
            for c in combos {
                let mut params = b.params.clone();
                params.extend(c.iter().cloned());
                for (p, from) in &b.link {
                    params.insert(p.clone(), params[from]);
                }
                out.push(Case {
                    bench: bi,
                    label: c
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(","),
                    params,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
name = "t"
reps = 3
[[bench]]
name = "chain"
group = "atomic_latency"
kernel = "k.kern"
params = { T = 1 }
sweep = { L = [8, 16], W = [1, 2] }
link = { M = "W" }
slope = "L"
"#;

    #[test]
    fn sweeps_expand_to_every_combination() {
        let s = Suite::parse(OK, "s.toml", Path::new("w")).unwrap();
        assert_eq!(s.reps, 3);
        assert_eq!(s.warmup, 2);
        assert_eq!(s.benches[0].kernel_path, Path::new("w/k.kern"));
        let labels: Vec<String> = s.cases().into_iter().map(|c| c.label).collect();
        assert_eq!(labels, ["L=8,W=1", "L=8,W=2", "L=16,W=1", "L=16,W=2"]);
        assert_eq!(s.cases()[3].params.get("T"), Some(&1));
        assert_eq!(s.cases()[3].params.get("M"), Some(&2), "M follows W");
    }

    #[test]
    fn bad_suites_name_the_key() {
        let cases = [
            (
                OK.replace("slope = \"L\"", "slope = \"T\""),
                "bench[0].slope",
            ),
            (OK.replace("reps = 3", "reps = 0"), "reps = 0"),
            (OK.replace("M = \"W\"", "M = \"Q\""), "bench[0].link.M"),
            (OK.replace("L = [8, 16]", "L = []"), "bench[0].sweep.L"),
            (OK.replace("T = 1", "W = 1"), "bench[0].sweep.W"),
            (OK.replace("group", "grp"), "unknown field"),
        ];
        for (text, want) in cases {
            let e = Suite::parse(&text, "s.toml", Path::new("."))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("s.toml"), "{e}");
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
