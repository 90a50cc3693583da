//! `gpumemsim validate`: the presets against published hardware measurements.
//!
//! A reference set (`reports/reference/<preset>.toml`) lists, per preset, each published number —
//! quantity, value, unit, source (paper or data file, with table or figure) and how it was measured —
//! beside the shipped workload and parameters that reproduce the measurement in the simulator, an
//! expression that turns the run into the quantity, and the accepted deviation. `validate` runs every
//! row, prints its signed error and the mean absolute percentage error (MAPE) per preset, and draws the
//! table as a chart.
//!
//! Sign convention (STYLE.md, `report::metrics`): a positive error means the simulator is too slow —
//! a latency too long (`(sim - published) / published`), a bandwidth too low
//! (`(published - sim) / published`).
//!
//! A row's `measure` is an expression (`sweep::expr`) over the run's columns: `report.NAME` (the
//! workload's reports), `LOCATION.METRIC` (statistics such as `kernel.cycles`, `dram.bytes`),
//! `param.NAME` (the workload's resolved parameters), `cycles`, `time_ns` and `core_mhz` (the config's
//! core clock).

use crate::config::{self, GpuConfig};
use crate::machine::{self, RunOptions};
use crate::report::plot::{Axis, Chart, Series};
use crate::report::validation::{ErrorFigure, ErrorPanel, ErrorRow};
use crate::sweep::expr::Expr;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Which way is faster for a quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// A latency: smaller is faster.
    Lower,
    /// A bandwidth: larger is faster.
    Higher,
}

/// One published number and how the simulator reproduces it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// Short name, unique in its file (`l2_near_latency`).
    pub id: String,
    /// What is measured, in words.
    pub quantity: String,
    /// The published value.
    pub value: f64,
    pub unit: String,
    /// Where the number is published: paper with table or figure, or data file.
    pub source: String,
    /// How the hardware number was measured.
    pub method: String,
    /// The workload that reproduces it, relative to the reference file.
    pub workload: PathBuf,
    /// Workload parameters.
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// Config overrides for this row (`KEY=VALUE`), e.g. to place a work-group.
    #[serde(default)]
    pub set: Vec<String>,
    /// The simulated quantity, an expression over the run's columns.
    pub measure: String,
    /// Accepted relative deviation (0.1 = 10 %).
    pub tolerance: f64,
    /// `lower` (latencies) or `higher` (bandwidths) is faster.
    pub better: Better,
    /// What the simulated number rests on where the hardware number is not a measurement of the same
    /// thing (e.g. atomics), or why the row is expected to miss.
    #[serde(default)]
    pub note: Option<String>,
    /// Where a measured value lies (measured sets): the data file and the JSON object and key it
    /// was read from; `preflight` reads the file and refuses a row whose `value` differs from it.
    #[serde(default)]
    pub from: Option<Source>,
    /// `file:line:col` of the row's `id`, for messages about the row.
    #[serde(skip)]
    pub at: String,
}

/// A JSON value in a measurement file: `value = (file[where].key - less[where].key) * scale`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The data file (JSON or JSON lines), relative to the reference file.
    pub file: PathBuf,
    /// The object: every field named here has this value (e.g. `kind = "fence"`, `what = "..."`).
    #[serde(rename = "where")]
    pub select: BTreeMap<String, toml::Value>,
    /// The object's number that is (or gives) the value, e.g. `cycles_per_iteration`.
    pub key: String,
    /// Another object of the same file whose `key` is subtracted (an empty kernel's time).
    #[serde(default)]
    pub less: Option<BTreeMap<String, toml::Value>>,
    /// Factor from the file's unit to the row's (0.001: ns to us); default 1.
    #[serde(default)]
    pub scale: Option<f64>,
}

/// Which kind of numbers a reference set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Published measurements: the sets `validate` runs by default.
    #[default]
    Published,
    /// This project's own measurements of one card (`reports/measured/`): run when named with
    /// `validate --reference FILE`; every row names its file and JSON object (`from`).
    Measured,
}

/// The loaded-latency curve of a preset: one workload run at several offered loads (a parameter),
/// each point giving a latency and the bandwidth the background traffic achieved. A characterisation
/// beside the rows: where a published curve exists, `published` holds its points.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Loaded {
    /// What is measured, in words.
    pub quantity: String,
    /// The workload, relative to the reference file.
    pub workload: PathBuf,
    /// Workload parameters common to every point.
    #[serde(default)]
    pub params: BTreeMap<String, i64>,
    /// The parameter that sets the offered load, in percent of the preset's sustained bandwidth.
    pub load_param: String,
    /// Its values: one run each.
    pub loads: Vec<i64>,
    /// The probe's latency (core cycles), an expression over the run's columns.
    pub latency: String,
    /// The background traffic's achieved bandwidth (GB/s), an expression over the run's columns.
    pub bandwidth: String,
    /// The bandwidth that is 100 % on the chart (GB/s): the published sustained streaming bandwidth.
    pub peak: f64,
    /// Published points (achieved bandwidth in % of `peak`, latency in ns), with `source`; empty
    /// where none was found (then `note` says so).
    #[serde(default)]
    pub published: Vec<[f64; 2]>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

/// A reference set: one preset's published numbers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// Preset name (`h100`): `validate --config` matches it against a config's `base` or file stem.
    pub preset: String,
    /// The preset's config file, relative to the reference file.
    pub config: PathBuf,
    /// Target MAPE over the rows (0.08 = 8 %).
    pub mape_target: f64,
    /// `published` (default) or `measured` (not run by a plain `validate` of the folder).
    #[serde(default)]
    pub kind: Kind,
    #[serde(rename = "row")]
    pub rows: Vec<Row>,
    /// What the preset's numbers that no published measurement fixes rest on (the atomic units):
    /// config key → basis.
    #[serde(default)]
    pub basis: BTreeMap<String, String>,
    /// The loaded-latency curve (optional).
    #[serde(default)]
    pub loaded: Option<Loaded>,
    #[serde(skip)]
    pub file: PathBuf,
}

#[derive(Debug)]
pub enum ValidateError {
    /// A reference file cannot be read or parsed; `at` is `file:line:col` or `file`.
    File {
        at: String,
        message: String,
    },
    Config(config::ConfigError),
    Run {
        file: String,
        row: String,
        message: String,
    },
    Io {
        path: String,
        message: String,
    },
}

impl fmt::Display for ValidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidateError::File { at, message } => write!(f, "{at}: {message}"),
            ValidateError::Config(e) => write!(f, "{e}"),
            ValidateError::Run { file, row, message } => {
                write!(f, "{file}: row `{row}`: {message}")
            }
            ValidateError::Io { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for ValidateError {}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Parses a reference set; errors name `file:line:col`.
pub fn parse(text: &str, file: &Path) -> Result<Reference, ValidateError> {
    let name = file.display().to_string();
    let mut r: Reference = toml::from_str(text).map_err(|e| {
        let at = match e.span() {
            Some(s) => {
                let (l, c) = line_col(text, s.start);
                format!("{name}:{l}:{c}")
            }
            None => name.clone(),
        };
        ValidateError::File {
            at,
            message: e.message().to_string(),
        }
    })?;
    r.file = file.to_path_buf();
    let at_row = |id: &str, what: &str| {
        // The row's `id = "..."` line, for the message.
        let needle = format!("\"{id}\"");
        let at = match text.find(&needle) {
            Some(o) => {
                let (l, c) = line_col(text, o);
                format!("{name}:{l}:{c}")
            }
            None => name.clone(),
        };
        ValidateError::File {
            at,
            message: what.to_string(),
        }
    };
    let at_key = |key: &str| match text.find(&format!("{key} =")).or_else(|| text.find(key)) {
        Some(o) => {
            let (l, c) = line_col(text, o);
            format!("{name}:{l}:{c}")
        }
        None => name.clone(),
    };
    let presets = config::layer::preset_names();
    if !presets.contains(&r.preset.as_str()) {
        return Err(ValidateError::File {
            at: at_key("preset"),
            message: format!(
                "preset `{}` is not an embedded preset; allowed: {}",
                r.preset,
                presets.join(", ")
            ),
        });
    }
    // Each row's place: the n-th `[[row]]` table header (ids are checked unique below).
    let mut headers = text.match_indices("[[row]]").map(|(o, _)| o);
    for row in &mut r.rows {
        let needle = format!("\"{}\"", row.id);
        let from = headers.next().unwrap_or(0);
        let o = text[from..].find(&needle).map_or(from, |k| from + k);
        let (l, c) = line_col(text, o);
        row.at = format!("{name}:{l}:{c}");
    }
    if !(r.mape_target > 0.0 && r.mape_target.is_finite()) {
        return Err(ValidateError::File {
            at: name,
            message: format!(
                "`mape_target` is {}; allowed: a positive fraction (0.08 = 8 %)",
                r.mape_target
            ),
        });
    }
    if r.rows.is_empty() {
        return Err(ValidateError::File {
            at: name,
            message: "no `[[row]]`: a reference set holds at least one published number".into(),
        });
    }
    let mut seen = std::collections::HashSet::new();
    for row in &r.rows {
        if !seen.insert(row.id.clone()) {
            return Err(at_row(
                &row.id,
                &format!("row id `{}` appears twice", row.id),
            ));
        }
        if !(row.value > 0.0 && row.value.is_finite()) {
            return Err(at_row(
                &row.id,
                &format!("`value` is {}; allowed: a positive number", row.value),
            ));
        }
        if !(row.tolerance > 0.0 && row.tolerance < 1.0) {
            return Err(at_row(
                &row.id,
                &format!(
                    "`tolerance` is {}; allowed: a fraction between 0 and 1 (0.1 = 10 %)",
                    row.tolerance
                ),
            ));
        }
        if let Err(e) = Expr::parse(&row.measure) {
            return Err(at_row(
                &row.id,
                &format!("`measure` `{}`: {e}", row.measure),
            ));
        }
    }
    if let Some(l) = &r.loaded {
        let at = match text.find("[loaded]") {
            Some(o) => {
                let (li, c) = line_col(text, o);
                format!("{name}:{li}:{c}")
            }
            None => name.clone(),
        };
        let bad = |message: String| ValidateError::File {
            at: at.clone(),
            message,
        };
        if l.loads.is_empty() || l.loads.iter().any(|&x| !(0..=150).contains(&x)) {
            return Err(bad(format!(
                "`loads` is {:?}; allowed: one or more percentages from 0 to 150",
                l.loads
            )));
        }
        if !(l.peak > 0.0 && l.peak.is_finite()) {
            return Err(bad(format!(
                "`peak` is {}; allowed: a positive bandwidth in GB/s",
                l.peak
            )));
        }
        for (key, e) in [("latency", &l.latency), ("bandwidth", &l.bandwidth)] {
            if let Err(err) = Expr::parse(e) {
                return Err(bad(format!("`{key}` `{e}`: {err}")));
            }
        }
    }
    Ok(r)
}

/// Checks, before any row runs, that every row's inputs load: the config with the row's `set`, the
/// workload with its `params` (and the loaded curve's). The first failure names the row's
/// `file:line:col` (issue 43: found after 15-60 s of runs, without a place).
pub fn preflight(r: &Reference, config: Option<&Path>) -> Result<(), ValidateError> {
    let dir = r.file.parent().unwrap_or(Path::new("."));
    let config_path = match config {
        Some(p) => p.to_path_buf(),
        None => dir.join(&r.config),
    };
    config::load(Some(&config_path), &[]).map_err(ValidateError::Config)?;
    let located = |at: &str, id: &str, message: String| ValidateError::File {
        at: at.to_string(),
        message: format!("row `{id}`: {message}"),
    };
    for row in &r.rows {
        if !row.set.is_empty() {
            config::load(Some(&config_path), &row.set)
                .map_err(|e| located(&row.at, &row.id, format!("`set`: {e}")))?;
        }
        let params: Vec<(String, i64)> = row.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
        crate::kernel::load(&dir.join(&row.workload), &params)
            .map_err(|e| located(&row.at, &row.id, format!("`workload`: {e}")))?;
        if let Some(src) = &row.from {
            let v = source_value(dir, src)
                .map_err(|e| located(&row.at, &row.id, format!("`from`: {e}")))?;
            if (v - row.value).abs() > 0.005 * v.abs().max(1e-9) {
                return Err(located(
                    &row.at,
                    &row.id,
                    format!(
                        "`value` is {} but {} gives {v:.4}; allowed: the file's value (0.5 % for rounding)",
                        row.value,
                        src.file.display()
                    ),
                ));
            }
        } else if r.kind == Kind::Measured {
            return Err(located(
                &row.at,
                &row.id,
                "a measured set's row names where its value lies: add `from = { file, where, key }`"
                    .into(),
            ));
        }
    }
    if let Some(l) = &r.loaded {
        let mut params: Vec<(String, i64)> =
            l.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
        params.push((l.load_param.clone(), l.loads[0]));
        crate::kernel::load(&dir.join(&l.workload), &params).map_err(|e| ValidateError::File {
            at: r.file.display().to_string(),
            message: format!("[loaded] `workload`: {e}"),
        })?;
    }
    Ok(())
}

/// Every JSON object in `text`: the lines of a JSON-lines file, or the objects anywhere inside one
/// JSON document.
pub(crate) fn json_objects(text: &str) -> Result<Vec<serde_json::Value>, String> {
    fn walk(v: serde_json::Value, out: &mut Vec<serde_json::Value>) {
        match v {
            serde_json::Value::Array(a) => a.into_iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(ref m) => {
                for x in m.values() {
                    if x.is_array() || x.is_object() {
                        walk(x.clone(), out);
                    }
                }
                out.push(v);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        walk(v, &mut out);
        return Ok(out);
    }
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        walk(v, &mut out);
    }
    Ok(out)
}

fn json_matches(o: &serde_json::Value, select: &BTreeMap<String, toml::Value>) -> bool {
    select.iter().all(|(k, want)| match (o.get(k), want) {
        (Some(serde_json::Value::String(a)), toml::Value::String(b)) => a == b,
        (Some(serde_json::Value::Number(a)), toml::Value::Integer(b)) => {
            a.as_f64() == Some(*b as f64)
        }
        (Some(serde_json::Value::Number(a)), toml::Value::Float(b)) => a.as_f64() == Some(*b),
        (Some(serde_json::Value::Bool(a)), toml::Value::Boolean(b)) => a == b,
        _ => false,
    })
}

/// The value a measured row's `from` names, read from its file (relative to `dir`).
pub fn source_value(dir: &Path, src: &Source) -> Result<f64, String> {
    let path = dir.join(&src.file);
    let text = crate::text::read(&path).map_err(|e| e.to_string())?;
    let objects = json_objects(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let find = |select: &BTreeMap<String, toml::Value>| -> Result<f64, String> {
        let hits: Vec<_> = objects.iter().filter(|o| json_matches(o, select)).collect();
        let shown = || {
            select
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match hits.as_slice() {
            [o] => o.get(&src.key).and_then(|v| v.as_f64()).ok_or_else(|| {
                format!(
                    "{}: the object with {} has no number `{}`",
                    path.display(),
                    shown(),
                    src.key
                )
            }),
            [] => Err(format!("{}: no object with {}", path.display(), shown())),
            _ => Err(format!(
                "{}: {} objects with {}; allowed: a `where` that picks one",
                path.display(),
                hits.len(),
                shown()
            )),
        }
    };
    let mut v = find(&src.select)?;
    if let Some(less) = &src.less {
        v -= find(less)?;
    }
    Ok(v * src.scale.unwrap_or(1.0))
}

/// The reference sets at `path`: the one set a file holds, or the published sets of a folder
/// (`load_dir`).
pub fn load_path(path: &Path) -> Result<Vec<Reference>, ValidateError> {
    if path.is_file() {
        Ok(vec![load(path)?])
    } else {
        load_dir(path)
    }
}

/// The default folder of reference sets, so that `validate` works from any directory:
/// `reports/reference` under the current folder, else in the source tree this binary was built
/// from, else beside the binary (`reference/` next to it, or `reports/reference` in a folder above
/// it, as in a checkout's `target/release/`). The error says where it looked.
pub fn default_dir() -> Result<PathBuf, ValidateError> {
    let mut tried = vec![PathBuf::from("reports/reference")];
    tried.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference"));
    if let Ok(exe) = std::env::current_exe() {
        if let Some(d) = exe.parent() {
            tried.push(d.join("reference"));
            tried.extend(
                d.ancestors()
                    .skip(1)
                    .take(3)
                    .map(|a| a.join("reports/reference")),
            );
        }
    }
    for d in &tried {
        if d.join(format!("{}.toml", config::DEFAULT_PRESET)).is_file() {
            return Ok(d.clone());
        }
    }
    Err(ValidateError::Io {
        path: "reports/reference".into(),
        message: format!(
            "no reference sets found; looked in {}; give the folder with --reference DIR",
            tried
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// Reads a reference set from a file.
pub fn load(file: &Path) -> Result<Reference, ValidateError> {
    let text = crate::text::read(file).map_err(|e| ValidateError::File {
        at: file.display().to_string(),
        message: e.to_string(),
    })?;
    parse(&text, file)
}

/// Every published set (`*.toml`, `kind` not `measured`) in `dir`, sorted by file name. Measured
/// sets run when named as a file (`load_path`).
pub fn load_dir(dir: &Path) -> Result<Vec<Reference>, ValidateError> {
    let rd = std::fs::read_dir(dir).map_err(|e| ValidateError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ValidateError::Io {
            path: dir.display().to_string(),
            message: "no reference set (*.toml) in this folder".into(),
        });
    }
    let all: Vec<Reference> = files.iter().map(|f| load(f)).collect::<Result<_, _>>()?;
    Ok(all
        .into_iter()
        .filter(|r| r.kind == Kind::Published)
        .collect())
}

/// One row's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RowResult {
    pub preset: String,
    pub id: String,
    pub quantity: String,
    pub unit: String,
    pub published: f64,
    pub simulated: f64,
    /// Signed relative error: positive = the simulator is too slow.
    pub error: f64,
    pub tolerance: f64,
    pub within: bool,
    pub source: String,
}

/// One point of a loaded-latency curve.
#[derive(Debug, Clone, Serialize)]
pub struct LoadedPoint {
    /// Offered load, percent of the published sustained bandwidth.
    pub offered: i64,
    /// Achieved background bandwidth, GB/s and percent of the published sustained bandwidth.
    pub bandwidth: f64,
    pub percent: f64,
    /// The probe's latency, core cycles and ns.
    pub cycles: f64,
    pub ns: f64,
}

/// One preset's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct PresetResult {
    pub preset: String,
    pub config: String,
    pub mape: f64,
    pub mape_target: f64,
    pub rows: Vec<RowResult>,
    /// The loaded-latency curve, if the set has one (not part of the MAPE).
    pub loaded: Vec<LoadedPoint>,
    /// Its published points (percent of peak, ns) and source, or the note saying none exists.
    pub loaded_published: Vec<[f64; 2]>,
    pub loaded_note: Option<String>,
}

impl PresetResult {
    pub fn passed(&self) -> bool {
        self.mape <= self.mape_target && self.rows.iter().all(|r| r.within)
    }
}

/// The reference sets `config` (a config file, `text` its contents) is checked against: those of the
/// preset it is based on (its `base`, else its file stem); an error names the sets `dir` has.
pub fn select<'a>(
    refs: &'a [Reference],
    config: &Path,
    text: &str,
    dir: &Path,
) -> Result<Vec<&'a Reference>, ValidateError> {
    let base = toml::from_str::<toml::Value>(text)
        .ok()
        .and_then(|v| v.get("base").and_then(|b| b.as_str()).map(str::to_string));
    let stem = config.file_stem().map(|s| s.to_string_lossy().to_string());
    let want = base.or(stem).unwrap_or_default();
    let found: Vec<_> = refs.iter().filter(|r| r.preset == want).collect();
    if found.is_empty() {
        let names: Vec<&str> = refs.iter().map(|r| r.preset.as_str()).collect();
        return Err(ValidateError::Io {
            path: config.display().to_string(),
            message: format!(
                "based on `{want}`, which has no reference set in {}; sets: {}",
                dir.display(),
                names.join(", ")
            ),
        });
    }
    Ok(found)
}

/// What `results.json` holds: every preset's result, pretty-printed, with a final newline.
pub fn results_json(results: &[PresetResult]) -> String {
    let mut json = serde_json::to_string_pretty(results).expect("results serialise");
    json.push('\n');
    json
}

/// Signed error of `sim` against `published`: positive = the simulator is too slow.
pub fn signed_error(published: f64, sim: f64, better: Better) -> f64 {
    match better {
        Better::Lower => (sim - published) / published,
        Better::Higher => (published - sim) / published,
    }
}

/// Runs `workload` with `params` (and config overrides `set`) and evaluates `measures` on the run.
#[allow(clippy::too_many_arguments)]
fn run_measures(
    r: &Reference,
    id: &str,
    workload: &Path,
    params: &[(String, i64)],
    set: &[String],
    base: &GpuConfig,
    config_path: &Path,
    measures: &[&str],
) -> Result<Vec<f64>, ValidateError> {
    let file = r.file.display().to_string();
    let err = |message: String| ValidateError::Run {
        file: file.clone(),
        row: id.to_string(),
        message,
    };
    let cfg = if set.is_empty() {
        base.clone()
    } else {
        config::load(Some(config_path), set).map_err(|e| err(e.to_string()))?
    };
    let dir = r.file.parent().unwrap_or(Path::new("."));
    let wpath = dir.join(workload);
    let w = crate::frontend::load(&wpath, params).map_err(|e| err(e.to_string()))?;
    let res = machine::run(&cfg, &w, &RunOptions::default()).map_err(|e| err(e.to_string()))?;
    if let Some(c) = res.checks.iter().find(|c| !c.passed) {
        return Err(err(format!(
            "the workload's check `{}` failed; its measurement is not trusted",
            c.text
        )));
    }
    let col = |name: &str| -> Option<f64> {
        if let Some(n) = name.strip_prefix("report.") {
            return res
                .reports
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| *v as f64);
        }
        if let Some(n) = name.strip_prefix("param.") {
            return w
                .parameters
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| *v as f64);
        }
        match name {
            "cycles" => return Some(res.cycles as f64),
            "time_ns" => return Some(res.time_ns),
            "core_mhz" => return Some(cfg.clocks.core_mhz as f64),
            _ => {}
        }
        let (loc, metric) = name.rsplit_once('.')?;
        res.stats
            .rows
            .iter()
            .find(|s| s.location == loc && s.metric == metric)
            .map(|s| s.value)
    };
    measures
        .iter()
        .map(|m| {
            let expr = Expr::parse(m).map_err(|e| err(e.to_string()))?;
            expr.eval(&col).ok_or_else(|| {
                err(format!(
                    "`{m}` has no value on this run (a column is missing, or a division by zero); \
                     columns: report.NAME, param.NAME, LOCATION.METRIC, cycles, time_ns, core_mhz"
                ))
            })
        })
        .collect()
}

fn run_row(
    r: &Reference,
    row: &Row,
    base: &GpuConfig,
    config_path: &Path,
) -> Result<f64, ValidateError> {
    let params: Vec<(String, i64)> = row.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let v = run_measures(
        r,
        &row.id,
        &row.workload,
        &params,
        &row.set,
        base,
        config_path,
        &[&row.measure],
    )?;
    Ok(v[0])
}

/// One point of the loaded-latency curve: (latency in core cycles, achieved bandwidth in GB/s).
fn run_loaded(
    r: &Reference,
    l: &Loaded,
    load: i64,
    base: &GpuConfig,
    config_path: &Path,
) -> Result<(f64, f64), ValidateError> {
    let mut params: Vec<(String, i64)> = l.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
    params.push((l.load_param.clone(), load));
    let id = format!("loaded {}={load}", l.load_param);
    let bw = if load == 0 { "0" } else { l.bandwidth.as_str() };
    let v = run_measures(
        r,
        &id,
        &l.workload,
        &params,
        &[],
        base,
        config_path,
        &[&l.latency, bw],
    )?;
    Ok((v[0], v[1]))
}

/// Runs one reference set, on its own preset or on `config` (a file based on it). Rows run on up to
/// `threads` threads; the results do not depend on it.
pub fn run(
    r: &Reference,
    config: Option<&Path>,
    threads: usize,
) -> Result<PresetResult, ValidateError> {
    let dir = r.file.parent().unwrap_or(Path::new("."));
    let config_path = match config {
        Some(p) => p.to_path_buf(),
        None => dir.join(&r.config),
    };
    let base = config::load(Some(&config_path), &[]).map_err(ValidateError::Config)?;
    let n = r.rows.len();
    let loads: &[i64] = r.loaded.as_ref().map_or(&[], |l| &l.loads);
    let jobs = n + loads.len();
    let mut sims: Vec<Option<Result<f64, ValidateError>>> = (0..n).map(|_| None).collect();
    let mut curve: Vec<Option<Result<(f64, f64), ValidateError>>> =
        (0..loads.len()).map(|_| None).collect();
    let threads = threads.clamp(1, jobs);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new((&mut sims, &mut curve));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                // The curve's runs are the longest: they go first.
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if k >= jobs {
                    break;
                }
                if k < loads.len() {
                    let l = r.loaded.as_ref().expect("loads come from the curve");
                    let v = run_loaded(r, l, loads[k], &base, &config_path);
                    out.lock().unwrap().1[k] = Some(v);
                } else {
                    let i = k - loads.len();
                    let v = run_row(r, &r.rows[i], &base, &config_path);
                    out.lock().unwrap().0[i] = Some(v);
                }
            });
        }
    });
    let mut loaded = Vec::new();
    if let Some(l) = &r.loaded {
        for (&offered, v) in loads.iter().zip(curve) {
            let (cycles, bandwidth) = v.expect("every point ran")?;
            loaded.push(LoadedPoint {
                offered,
                bandwidth,
                percent: 100.0 * bandwidth / l.peak,
                cycles,
                ns: 1000.0 * cycles / base.clocks.core_mhz as f64,
            });
        }
    }
    let mut rows = Vec::with_capacity(n);
    for (row, sim) in r.rows.iter().zip(sims) {
        let simulated = sim.expect("every row ran")?;
        let error = signed_error(row.value, simulated, row.better);
        rows.push(RowResult {
            preset: r.preset.clone(),
            id: row.id.clone(),
            quantity: row.quantity.clone(),
            unit: row.unit.clone(),
            published: row.value,
            simulated,
            error,
            tolerance: row.tolerance,
            within: error.abs() <= row.tolerance,
            source: row.source.clone(),
        });
    }
    let mape = rows.iter().map(|r| r.error.abs()).sum::<f64>() / rows.len() as f64;
    Ok(PresetResult {
        preset: r.preset.clone(),
        config: config_path.display().to_string(),
        mape,
        mape_target: r.mape_target,
        rows,
        loaded,
        loaded_published: r
            .loaded
            .as_ref()
            .map_or(Vec::new(), |l| l.published.clone()),
        loaded_note: r
            .loaded
            .as_ref()
            .and_then(|l| l.source.clone().or_else(|| l.note.clone())),
    })
}

/// The table as text: one line per row, then the preset's MAPE.
pub fn table(p: &PresetResult) -> String {
    let mut s = format!("{} ({})\n", p.preset, p.config);
    s.push_str(&format!(
        "  {:<20} {:>11} {:>11} {:<7} {:>8} {:>6}  {}\n",
        "row", "published", "simulated", "unit", "error", "tol", ""
    ));
    for r in &p.rows {
        s.push_str(&format!(
            "  {:<20} {:>11.1} {:>11.1} {:<7} {:>+7.1}% {:>5.0}%  {}\n",
            r.id,
            r.published,
            r.simulated,
            r.unit,
            100.0 * r.error,
            100.0 * r.tolerance,
            if r.within { "ok" } else { "MISS" }
        ));
    }
    let worst = p.rows.iter().map(|r| r.error.abs()).fold(0.0f64, f64::max);
    s.push_str(&format!(
        "  MAPE {:.1}% (target {:.0}%), worst row {:.1}%: {}\n",
        100.0 * p.mape,
        100.0 * p.mape_target,
        100.0 * worst,
        if p.passed() { "ok" } else { "MISS" }
    ));
    if !p.loaded.is_empty() {
        s.push_str("  loaded latency (DRAM probe beside streaming warps; not in the MAPE)\n");
        s.push_str(&format!(
            "  {:>8} {:>12} {:>9} {:>10} {:>8}\n",
            "offered", "achieved", "of peak", "latency", ""
        ));
        for l in &p.loaded {
            s.push_str(&format!(
                "  {:>7}% {:>7.0} GB/s {:>8.1}% {:>6.0} cyc {:>5.0} ns\n",
                l.offered, l.bandwidth, l.percent, l.cycles, l.ns
            ));
        }
        if p.loaded_published.is_empty() {
            s.push_str("  (no published loaded-latency curve: a characterisation)\n");
        }
    }
    s
}

/// The loaded-latency chart: latency (ns) against achieved background bandwidth (% of the
/// published sustained bandwidth), one line per preset, published points where they exist.
pub fn loaded_chart(results: &[PresetResult]) -> Option<Chart> {
    let mut series = Vec::new();
    for p in results.iter().filter(|p| !p.loaded.is_empty()) {
        series.push(Series::new(
            format!("{} (simulated)", p.preset),
            p.loaded.iter().map(|l| (l.percent, l.ns)).collect(),
        ));
        if !p.loaded_published.is_empty() {
            series.push(Series::new(
                format!("{} (published)", p.preset),
                p.loaded_published.iter().map(|x| (x[0], x[1])).collect(),
            ));
        }
    }
    if series.is_empty() {
        return None;
    }
    Some(
        Chart::lines(
            "Loaded DRAM latency: a pointer-chase probe while the other SMs stream",
            Axis::linear(
                "background bandwidth achieved, of the published sustained streaming bandwidth",
                "%",
            ),
            Axis::linear("probe latency per dependent load", "ns"),
            series,
        )
        .with_size(1100, 650),
    )
}

/// The chart: per preset a panel, per row its signed error on a ±25 % axis over the row's tolerance
/// band (`report::validation`).
pub fn chart(results: &[PresetResult]) -> ErrorFigure {
    let panels = results
        .iter()
        .map(|p| ErrorPanel {
            title: format!(
                "{}: MAPE {:.1} % (target {:.0} %)",
                p.preset,
                100.0 * p.mape,
                100.0 * p.mape_target
            ),
            rows: p
                .rows
                .iter()
                .map(|r| ErrorRow {
                    label: r.id.clone(),
                    error: r.error,
                    tolerance: r.tolerance,
                })
                .collect(),
        })
        .collect();
    ErrorFigure::new(
        "Simulated against the reference (published or measured): signed error per row, shaded = the row's tolerance",
        "signed error: right of 0 = simulator too slow, left = too fast",
        panels,
    )
}

/// Writes `results.csv`, `results.json` and `validate.png` / `validate.svg` into `out`.
pub fn write(out: &Path, results: &[PresetResult]) -> Result<(), ValidateError> {
    let io = |p: &Path, e: String| ValidateError::Io {
        path: p.display().to_string(),
        message: e,
    };
    std::fs::create_dir_all(out).map_err(|e| io(out, e.to_string()))?;
    let mut csv =
        String::from("preset,id,quantity,unit,published,simulated,error,tolerance,within,source\n");
    for p in results {
        for r in &p.rows {
            csv.push_str(&format!(
                "{},{},\"{}\",{},{},{:.3},{:.5},{},{},\"{}\"\n",
                r.preset,
                r.id,
                r.quantity.replace('"', "'"),
                r.unit,
                r.published,
                r.simulated,
                r.error,
                r.tolerance,
                r.within,
                r.source.replace('"', "'")
            ));
        }
    }
    let p = out.join("results.csv");
    crate::stats::write_atomic(&p, csv.as_bytes()).map_err(|e| io(&p, e.to_string()))?;
    let p = out.join("results.json");
    crate::stats::write_atomic(&p, results_json(results).as_bytes())
        .map_err(|e| io(&p, e.to_string()))?;
    chart(results)
        .save(out, "validate")
        .map_err(|e| io(out, e.to_string()))?;
    if let Some(c) = loaded_chart(results) {
        let mut csv = String::from(
            "preset,offered_percent,achieved_gbs,achieved_percent,latency_cycles,latency_ns\n",
        );
        for p in results {
            for l in &p.loaded {
                csv.push_str(&format!(
                    "{},{},{:.1},{:.2},{:.1},{:.1}\n",
                    p.preset, l.offered, l.bandwidth, l.percent, l.cycles, l.ns
                ));
            }
        }
        let p = out.join("loaded.csv");
        crate::stats::write_atomic(&p, csv.as_bytes()).map_err(|e| io(&p, e.to_string()))?;
        c.save(out, "loaded").map_err(|e| io(out, e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"
preset = "tiny"
config = "../../configs/tiny.toml"
mape_target = 0.08

[[row]]
id = "l1"
quantity = "L1 hit latency"
value = 30.0
unit = "cycles"
source = "s"
method = "m"
workload = "../../workloads/reference/chase.kern"
params = { N = 16 }
measure = "report.l1_hit"
tolerance = 0.5
better = "lower"
"#;

    #[test]
    fn sign_convention_positive_means_too_slow() {
        assert!(signed_error(100.0, 120.0, Better::Lower) > 0.0);
        assert!(signed_error(100.0, 80.0, Better::Higher) > 0.0);
        assert!(signed_error(100.0, 120.0, Better::Higher) < 0.0);
    }

    #[test]
    fn bad_values_name_file_line_and_what_is_allowed() {
        let f = Path::new("ref.toml");
        let e = parse(&ROW.replace("tolerance = 0.5", "tolerance = 5"), f).unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("ref.toml:7:"), "{m}");
        assert!(m.contains("between 0 and 1"), "{m}");
        let e = parse(&ROW.replace("better = \"lower\"", "better = \"up\""), f).unwrap_err();
        assert!(e.to_string().starts_with("ref.toml:17:"), "{e}");
        let e = parse(&ROW.replace("report.l1_hit", "report.(l1"), f).unwrap_err();
        assert!(e.to_string().contains("measure"), "{e}");
        let e = parse(&format!("{ROW}\nbogus = 1\n"), f).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }

    /// The shipped presets meet their reference sets (2-4 min in a release build, loaded curves included:
    /// `cargo test --release --lib presets_meet -- --ignored`).
    #[test]
    #[ignore]
    fn presets_meet_their_reference_sets() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
        for r in load_dir(&dir).unwrap() {
            let p = run(&r, None, 2).unwrap();
            assert!(p.passed(), "{}", table(&p));
        }
    }

    #[test]
    fn an_unknown_preset_or_a_row_that_cannot_load_is_refused_at_its_line_before_any_run() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
        let f = dir.join("x.toml");
        let e = parse(&ROW.replace("\"tiny\"", "\"h200\""), &f)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.toml:2:1: preset `h200` is not an embedded preset"),
            "{e}"
        );
        assert!(e.contains("allowed: h100"), "{e}");
        let second = ROW[ROW.find("[[row]]").unwrap()..].replace("\"l1\"", "\"l2\"");
        let two = format!("{ROW}{second}");
        preflight(&parse(&two, &f).unwrap(), None).unwrap();
        // The second row's workload does not exist: named at the second row's id line.
        let k = two.rfind("chase.kern").unwrap();
        let broken = format!(
            "{}missing.kern{}",
            &two[..k],
            &two[k + "chase.kern".len()..]
        );
        let e = preflight(&parse(&broken, &f).unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.toml:19:6: row `l2`: `workload`:"), "{e}");
        assert!(e.contains("missing.kern"), "{e}");
        let r = parse(
            &ROW.replace(
                "params = { N = 16 }",
                "params = { N = 16 }\nset = [\"l1.ways=0\"]",
            ),
            &f,
        )
        .unwrap();
        let e = preflight(&r, None).unwrap_err().to_string();
        assert!(
            e.contains("x.toml:7:6: row `l1`: `set`:") && e.contains("l1.ways"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_loaded_curve_names_its_table_and_what_is_allowed() {
        let f = Path::new("ref.toml");
        let curve = "\n[loaded]\nquantity = \"q\"\nworkload = \"w.kern\"\nload_param = \"LOAD\"\n\
                     loads = [0, 200]\nlatency = \"report.dram\"\nbandwidth = \"1\"\npeak = 10.0\n";
        let e = parse(&format!("{ROW}{curve}"), f).unwrap_err().to_string();
        assert!(e.starts_with("ref.toml:19:1:"), "{e}");
        assert!(e.contains("0 to 150"), "{e}");
        let e = parse(
            &format!(
                "{ROW}{}",
                curve.replace("[0, 200]", "[0]").replace("10.0", "-1.0")
            ),
            f,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`peak`"), "{e}");
        assert!(parse(&format!("{ROW}{}", curve.replace("[0, 200]", "[0, 50]")), f).is_ok());
    }

    /// Every row of the measured set names its file and object, and its value is the file's.
    #[test]
    fn measured_rows_are_what_their_files_say() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
        let file = dir.join("h100-measured.toml");
        let r = load(&file).unwrap();
        assert_eq!(r.kind, Kind::Measured);
        assert!(r.rows.len() >= 15, "{} rows", r.rows.len());
        for row in &r.rows {
            let src = row.from.as_ref().expect("every measured row has `from`");
            let v = source_value(&dir, src).unwrap();
            assert!(
                (v - row.value).abs() <= 0.005 * v.abs(),
                "{}: {} vs file {v}",
                row.id,
                row.value
            );
        }
        // The fence row reads exactly the file's number; the contention row subtracts the empty kernel.
        let get = |id: &str| r.rows.iter().find(|x| x.id == id).unwrap();
        assert_eq!(
            source_value(&dir, get("fence_sc_sys").from.as_ref().unwrap()).unwrap(),
            1382.54
        );
        let c = source_value(&dir, get("contention_32_lines").from.as_ref().unwrap()).unwrap();
        assert!((c - (12832.0 - 7136.0) / 1000.0).abs() < 1e-9, "{c}");
        preflight(&r, None).unwrap();
        // A value that is not the file's is refused at its row, before any run.
        let text = crate::text::read(&file).unwrap();
        let bad = parse(
            &text.replacen("value = 1382.54", "value = 1300.0", 1),
            &file,
        )
        .unwrap();
        let e = preflight(&bad, None).unwrap_err().to_string();
        assert!(e.contains("row `fence_sc_sys`: `value` is 1300 but"), "{e}");
        let k = "what = \"st.release.gpu\"";
        assert!(text.contains(k));
        let bad = parse(&text.replacen(k, "what = \"st.nope\"", 1), &file).unwrap();
        let e = preflight(&bad, None).unwrap_err().to_string();
        assert!(
            e.contains("row `release_gpu`: `from`:") && e.contains("no object with"),
            "{e}"
        );
        // The folder's default run holds the published sets only; the file runs when named.
        let sets = load_dir(&dir).unwrap();
        assert!(sets.iter().all(|s| s.kind == Kind::Published));
        assert!(!sets.iter().any(|s| s.file == file));
        let named = load_path(&file).unwrap();
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].kind, Kind::Measured);
    }

    #[test]
    fn a_row_runs_and_is_compared() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference");
        let r = parse(ROW, &dir.join("x.toml")).unwrap();
        let p = run(&r, None, 1).unwrap();
        assert_eq!(p.rows.len(), 1);
        let row = &p.rows[0];
        assert!(row.simulated > 0.0);
        assert!((row.error - (row.simulated - 30.0) / 30.0).abs() < 1e-12);
        assert!(table(&p).contains("MAPE"));
    }
}
