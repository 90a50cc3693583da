//! The measurement file: what `gpumemsim measure` writes and `gpumemsim compare` reads.
//!
//! A JSON document, versioned (`schema`, `version`), self-describing: the adapter's identity and
//! features, the date, the suite and its settings, the text of every kernel measured (so that `compare`
//! simulates exactly what ran), and per benchmark case the kernel (path and a hash of its text), the
//! parameter overrides and resolved parameters, the launch geometry, the timing summary, the checks and reported quantities, and what the translation
//! emulated. A case that failed keeps its error and has no timing: a failure is never a number.
//!
//! Compatibility rule: a reader accepts exactly [`VERSION`]; any change to the meaning of a field bumps
//! it; adding a field that older readers may ignore does not (unknown fields are ignored).
//!
//! The schema sits below its writers: the adapter's identity (`adapter.rs` fills it from wgpu) and
//! the timing summary (`dispatch.rs` measures it) are defined here.

use crate::machine::CheckOutcome;
use crate::text::Located;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// The features that matter for the measurement suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FeatureReport {
    /// Timestamps around passes (`TIMESTAMP_QUERY`): required to measure.
    pub timestamp_query: bool,
    pub timestamp_inside_passes: bool,
    pub timestamp_inside_encoders: bool,
    /// `u64`/`i64` in shaders.
    pub shader_int64: bool,
    pub int64_atomic_min_max: bool,
    pub int64_atomic_all_ops: bool,
    pub float32_atomic: bool,
    pub subgroup: bool,
    pub subgroup_barrier: bool,
    /// SPIR-V passthrough (`PASSTHROUGH_SHADERS`): the SPIR-V path with the Vulkan memory model.
    pub spirv_passthrough: bool,
    /// wgpu's cooperative-matrix feature, the one with which wgpu 30 enables the device's
    /// `vulkanMemoryModel` and `vulkanMemoryModelDeviceScope` features.
    #[serde(default)]
    pub cooperative_matrix: bool,
}

/// The limits that matter for the measurement suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LimitReport {
    pub max_invocations_per_workgroup: u32,
    pub max_workgroup_size: [u32; 3],
    pub max_workgroups_per_dimension: u32,
    pub max_workgroup_storage_bytes: u32,
    pub max_storage_buffer_binding_bytes: u64,
    pub max_buffer_bytes: u64,
    pub max_storage_buffers_per_stage: u32,
    pub subgroup_min_size: u32,
    pub subgroup_max_size: u32,
}

/// The identity of an adapter, as `gpu list` prints it and as a measurement file records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterReport {
    /// Position in the enumeration (`--adapter N`).
    pub index: usize,
    pub name: String,
    pub backend: String,
    /// `discrete_gpu`, `integrated_gpu`, `virtual_gpu`, `cpu` or `other`.
    pub device_type: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver: String,
    pub driver_info: String,
    pub features: FeatureReport,
    pub limits: LimitReport,
}

/// Timing summary of the measured repetitions, in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Every measured repetition, in order.
    pub samples_ns: Vec<f64>,
}

impl Timing {
    pub fn of(samples: Vec<f64>) -> Option<Timing> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Some(Timing {
            median_ns: median,
            min_ns: s[0],
            max_ns: s[n - 1],
            samples_ns: samples,
        })
    }
}

/// The `schema` value of every measurement file.
pub const SCHEMA: &str = "gpumemsim-measurement";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// One measurement file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub schema: String,
    pub version: u32,
    /// `gpumemsim X.Y.Z`.
    pub tool: String,
    /// UTC time the measurement started, `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: String,
    pub adapter: AdapterReport,
    /// Marked so that nobody mistakes a CPU adapter's timings for a GPU's.
    pub cpu_adapter: bool,
    pub timestamp_period_ns: f64,
    /// The suite file, as given.
    pub suite: String,
    pub suite_name: String,
    pub warmup: u32,
    pub reps: u32,
    /// Median time of an empty dispatch (one work-item that exits): the fixed cost of a timed pass,
    /// which `compare` subtracts before comparing with the simulator (which has no launch overhead).
    pub overhead_ns: Option<f64>,
    /// The text of every kernel measured, by path: `compare` simulates exactly what ran.
    pub kernels: BTreeMap<String, String>,
    pub benchmarks: Vec<BenchResult>,
    /// Slopes fitted over a swept parameter (latencies per operation).
    pub derived: Vec<Derived>,
    /// The harness settings the litmus tests ran with (`None`: the suite has no litmus tests).
    pub litmus_settings: Option<super::litmus::LitmusSettings>,
    /// The text of every litmus test run, by path.
    pub litmus_tests: BTreeMap<String, String>,
    pub litmus: Vec<LitmusResult>,
    /// The clock probe (absent in files written before it, and when the probe could not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockRecord>,
    /// Written while the run was still going (after each case and litmus variant): a file left with
    /// `partial` true is from a run stopped before its end, and holds the cases measured until then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// Whether a case gave a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Ran but faulted, failed a check, or the adapter reported an error.
    Failed,
    /// The translation rejected the kernel on this adapter.
    Untranslatable,
}

/// Which shader language a case ran through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShaderPath {
    /// WGSL, compiled by wgpu (relaxed atomics and work-group barriers only).
    Wgsl,
    /// SPIR-V with the Vulkan memory model, passed through to the driver (`device::spirv`).
    Spirv,
}

impl ShaderPath {
    pub fn name(self) -> &'static str {
        match self {
            ShaderPath::Wgsl => "wgsl",
            ShaderPath::Spirv => "spirv",
        }
    }
}

/// One benchmark case: a kernel with one set of parameter values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Benchmark name in the suite.
    pub bench: String,
    /// Group for per-group error metrics: `atomic_latency`, `contention`, `load_latency`, ...
    pub group: String,
    /// `NAME=VALUE,...` of the swept parameters (unique within the benchmark).
    pub case: String,
    pub kernel: String,
    /// FNV-1a 64 of the kernel's text, hex.
    pub kernel_hash: String,
    /// Every parameter override given to the kernel (fixed, swept and linked).
    pub params: BTreeMap<String, i64>,
    /// Every parameter of the kernel as resolved for this case (defaults and derived ones included).
    pub resolved: BTreeMap<String, i64>,
    pub groups: [u32; 3],
    pub group_size: [u32; 3],
    pub status: Status,
    pub error: Option<String>,
    pub timing: Option<Timing>,
    pub checks: Vec<CheckOutcome>,
    pub reports: Vec<(String, i64)>,
    /// Instructions the translation emulated (compare-exchange loops) or ran with a weaker order or
    /// narrower scope than written (seq_cst and system scope on SPIR-V).
    pub emulated: Vec<String>,
    /// The shader path that ran (absent in files written before there were two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<ShaderPath>,
    /// The clock probe's times around the case (`device::clock`; absent in files written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockCheck>,
}

/// The clock probe (`device::clock`) just before and just after one case, beside the reference (the
/// fastest settled probe time): a probe slower than the reference means the case may have run at a
/// lower clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockCheck {
    pub before_ns: f64,
    pub after_ns: f64,
    pub reference_ns: f64,
    /// The probe before the case was more than `device::clock::RESETTLE` slower than the reference, and
    /// the clock was settled again before the case ran.
    pub resettled: bool,
}

impl ClockCheck {
    /// How much slower than the reference the slower of the two probes ran (0.0: as fast).
    pub fn slowdown(&self) -> f64 {
        self.before_ns.max(self.after_ns) / self.reference_ns - 1.0
    }
}

/// What the clock probe did during a measurement (`device::clock`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockRecord {
    /// The probe kernel's text.
    pub kernel: String,
    /// Every settling, in order: the first before any case, the others before a case whose probe ran
    /// slow.
    pub settles: Vec<super::clock::Settle>,
    /// The fastest settled probe time, ns.
    pub reference_ns: f64,
}

impl BenchResult {
    /// The stable key `bench[case]`.
    pub fn key(&self) -> String {
        format!("{}[{}]", self.bench, self.case)
    }
}

/// A slope fitted over a swept parameter: ns per unit of `x` (e.g. per dependent atomic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// `bench:x` plus the fixed values of the other swept parameters.
    pub name: String,
    pub bench: String,
    pub group: String,
    pub x: String,
    /// The cases (keys) the fit used.
    pub cases: Vec<String>,
    pub slope_ns: f64,
    pub intercept_ns: f64,
    /// Coefficient of determination of the fit.
    pub r2: f64,
}

/// Outcome counts of one litmus test variant on the adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LitmusResult {
    pub test: String,
    pub file: String,
    pub variant: super::litmus::Variant,
    pub status: Status,
    pub error: Option<String>,
    /// Instances run in total (dispatches × instances per dispatch).
    pub instances: u64,
    pub outcomes: Vec<OutcomeCount>,
    /// The shader path that ran (absent in files written before there were two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shader: Option<ShaderPath>,
    /// Orders and scopes the translation weakened (seq_cst run as acq_rel, system scope as device).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeCount {
    /// `P0:r0=1; P1:r1=0`-style rendering of the final registers and memory the test observes.
    pub outcome: String,
    pub count: u64,
    /// Whether the outcome satisfies the test's `exists` condition (the weak outcome).
    pub weak: bool,
}

/// Why a measurement file cannot be used.
#[derive(Debug, Error)]
pub enum SchemaError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, or not text: `file:line:col: not a measurement file: ...`.
    #[error(transparent)]
    Json(Located),
    #[error("{file}: schema = {found:?}: must be {SCHEMA:?}")]
    Schema { file: String, found: String },
    #[error("{file}: version = {found}: this build reads version {VERSION}")]
    Version { file: String, found: u32 },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// A file the reader could not read, or whose bytes are not text, at its position (`text.rs`).
impl From<crate::text::TextError> for SchemaError {
    fn from(e: crate::text::TextError) -> Self {
        match e.located() {
            Err((file, source)) => Self::Io { file, source },
            Ok(l) => Self::Json(Located {
                message: format!("not a measurement file: {}", l.message),
                ..l
            }),
        }
    }
}

impl Measurement {
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("measurements serialise");
        s.push('\n');
        s
    }

    /// Parses and checks a measurement file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Measurement, SchemaError> {
        // Schema and version first, so that a file from another version says so instead of failing on
        // a field it renamed.
        #[derive(Deserialize)]
        struct Head {
            schema: Option<String>,
            version: Option<u32>,
        }
        let json_err = |e: serde_json::Error| {
            SchemaError::Json(Located::new(
                file,
                u32::try_from(e.line()).unwrap_or(u32::MAX),
                u32::try_from(e.column()).unwrap_or(u32::MAX),
                format!("not a measurement file: {e}"),
            ))
        };
        let head: Head = serde_json::from_str(text).map_err(json_err)?;
        let schema = head.schema.unwrap_or_default();
        if schema != SCHEMA {
            return Err(SchemaError::Schema {
                file: file.to_string(),
                found: schema,
            });
        }
        let version = head.version.unwrap_or(0);
        if version != VERSION {
            return Err(SchemaError::Version {
                file: file.to_string(),
                found: version,
            });
        }
        let m: Measurement = serde_json::from_str(text).map_err(json_err)?;
        m.check(file)?;
        Ok(m)
    }

    /// Reads and checks a measurement file.
    pub fn load(path: &Path) -> Result<Measurement, SchemaError> {
        let text = crate::text::read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The invariants a reader relies on.
    fn check(&self, file: &str) -> Result<(), SchemaError> {
        let bad = |message: String| SchemaError::Invalid {
            file: file.to_string(),
            message,
        };
        let finite_at_least = |what: &str, v: f64, min: f64, strict: bool| {
            if !v.is_finite() || v < min || (strict && v == min) {
                return Err(bad(format!(
                    "{what} = {v}: must be a finite number {} {min}",
                    if strict { ">" } else { ">=" }
                )));
            }
            Ok(())
        };
        finite_at_least("timestamp_period_ns", self.timestamp_period_ns, 0.0, true)?;
        if let Some(o) = self.overhead_ns {
            finite_at_least("overhead_ns", o, 0.0, false)?;
        }
        if self.reps == 0 {
            return Err(bad("reps = 0: at least 1 timed repetition".into()));
        }
        // The clock probe's times: `compare` divides by the reference.
        if let Some(c) = &self.clock {
            finite_at_least("clock.reference_ns", c.reference_ns, 0.0, true)?;
            for (i, st) in c.settles.iter().enumerate() {
                finite_at_least(
                    &format!("clock.settles[{i}].probe_ns"),
                    st.probe_ns,
                    0.0,
                    true,
                )?;
                finite_at_least(
                    &format!("clock.settles[{i}].busy_ns"),
                    st.busy_ns,
                    0.0,
                    false,
                )?;
            }
        }
        let mut keys = std::collections::HashSet::new();
        for (i, b) in self.benchmarks.iter().enumerate() {
            let at = format!("benchmarks[{i}] ({})", b.key());
            if let Some(c) = &b.clock {
                for (what, v) in [
                    ("before_ns", c.before_ns),
                    ("after_ns", c.after_ns),
                    ("reference_ns", c.reference_ns),
                ] {
                    finite_at_least(&format!("{at}.clock.{what}"), v, 0.0, true)?;
                }
            }
            match self.kernels.get(&b.kernel) {
                None => {
                    return Err(bad(format!(
                        "{at}: kernel {} is not in `kernels`",
                        b.kernel
                    )))
                }
                Some(text) if text_hash(text) != b.kernel_hash => {
                    return Err(bad(format!(
                        "{at}: kernel_hash {} does not match the text of {} in `kernels`",
                        b.kernel_hash, b.kernel
                    )))
                }
                Some(_) => {}
            }
            if !keys.insert(b.key()) {
                return Err(bad(format!("{at}: duplicate case")));
            }
            match (b.status, &b.timing, &b.error) {
                (Status::Ok, Some(t), None) => {
                    let lo = t.samples_ns.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = t
                        .samples_ns
                        .iter()
                        .copied()
                        .fold(f64::NEG_INFINITY, f64::max);
                    if t.samples_ns.is_empty()
                        || t.samples_ns.iter().any(|x| !x.is_finite() || *x < 0.0)
                        || t.min_ns != lo
                        || t.max_ns != hi
                        || !(t.min_ns <= t.median_ns && t.median_ns <= t.max_ns)
                    {
                        return Err(bad(format!(
                            "{at}: timing (min_ns = {}, median_ns = {}, max_ns = {}, {} samples): \
                             must have finite non-negative samples, min_ns and max_ns their least \
                             and greatest, min <= median <= max",
                            t.min_ns,
                            t.median_ns,
                            t.max_ns,
                            t.samples_ns.len()
                        )));
                    }
                    if let Some(c) = b.checks.iter().find(|c| !c.passed) {
                        return Err(bad(format!(
                            "{at}: status ok with failed check `{}`",
                            c.text
                        )));
                    }
                }
                (Status::Ok, _, _) => {
                    return Err(bad(format!("{at}: status ok needs a timing and no error")))
                }
                (_, None, Some(_)) => {}
                (_, _, _) => {
                    return Err(bad(format!(
                        "{at}: a failed case has an error and no timing"
                    )))
                }
            }
        }
        if self.benchmarks.is_empty() && self.litmus.is_empty() {
            return Err(bad(
                "`benchmarks` and `litmus` are both empty: the file holds nothing to compare"
                    .into(),
            ));
        }
        for (i, d) in self.derived.iter().enumerate() {
            // A slope is fitted over at least two cases, each one of this file's.
            if d.cases.len() < 2 {
                return Err(bad(format!(
                    "derived[{i}] ({}): a slope over {} case{}: at least 2",
                    d.name,
                    d.cases.len(),
                    if d.cases.len() == 1 { "" } else { "s" }
                )));
            }
            if let Some(k) = d.cases.iter().find(|k| !keys.contains(*k)) {
                return Err(bad(format!(
                    "derived[{i}] ({}): case `{k}` is not one of `benchmarks`",
                    d.name
                )));
            }
            for (what, v) in [
                ("slope_ns", d.slope_ns),
                ("intercept_ns", d.intercept_ns),
                ("r2", d.r2),
            ] {
                if !v.is_finite() {
                    return Err(bad(format!(
                        "derived[{i}] ({}): {what} = {v}: must be a finite number",
                        d.name
                    )));
                }
            }
        }
        for (i, l) in self.litmus.iter().enumerate() {
            if !self.litmus_tests.contains_key(&l.file) {
                return Err(bad(format!(
                    "litmus[{i}] ({}): test file {} is not in `litmus_tests`",
                    l.test, l.file
                )));
            }
            // Each outcome names threads of its test (`P3:r0=1` in a two-thread test is not one).
            if let Ok(t) = gpumemsim_litmus::parse(&self.litmus_tests[&l.file], &l.file) {
                for o in &l.outcomes {
                    if let Some(p) = outcome_threads(&o.outcome).find(|&p| p >= t.threads.len()) {
                        return Err(bad(format!(
                            "litmus[{i}] ({}): outcome `{}` names thread P{p}, but the test has {} \
                             (P0..P{})",
                            l.test,
                            o.outcome,
                            t.threads.len(),
                            t.threads.len().saturating_sub(1)
                        )));
                    }
                }
            }
            let sum: u64 = l.outcomes.iter().map(|o| o.count).sum();
            if l.status == Status::Ok && sum != l.instances {
                return Err(bad(format!(
                    "litmus[{i}] ({} {}): outcome counts sum to {sum}, not the {} instances run",
                    l.test,
                    l.variant.name(),
                    l.instances
                )));
            }
        }
        Ok(())
    }
}

/// The thread indices an outcome's `Pn:reg=value` terms name (memory terms name none).
fn outcome_threads(outcome: &str) -> impl Iterator<Item = usize> + '_ {
    outcome.split(';').filter_map(|term| {
        let term = term.trim();
        let (who, _) = term.split_once(':')?;
        who.strip_prefix('P')?.parse::<usize>().ok()
    })
}

/// FNV-1a 64 of a text, hex: a change detector for kernels (not a cryptographic hash).
pub fn text_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (civil-from-days, proleptic Gregorian).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    utc_from_unix(secs)
}

pub fn utc_from_unix(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_render_in_utc() {
        assert_eq!(utc_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_from_unix(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn text_hash_is_fnv1a() {
        assert_eq!(text_hash(""), "cbf29ce484222325");
        assert_eq!(text_hash("a"), "af63dc4c8601ec8c");
    }
}
