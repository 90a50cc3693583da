//! Combined outputs: one row per point (parameters and every statistic) as `results.csv` and
//! `results.json` (records, schema `gpumemsim-sweep-results` version 2), with each column's unit and
//! kind in `results.schema.json`, built from the manifest and the point files; and `sweep merge`,
//! which gathers shard folders into one folder and combines it exactly as a single run would.
//!
//! Columns: `point, workload, seed`, the parameter columns (config key paths, then workload
//! parameters), `status` (`ok`, `check_failed`, `error`), `error`, `checks_failed`, `build` (the
//! simulator build that computed the row, [`crate::version::BUILD`]), then every statistic
//! as `location.metric` in order of first appearance over the rows, then reported quantities as
//! `report.NAME`, then a litmus test's final states as `outcome: P0:r0=0; P1:r0=0;` (runs that ended
//! in that state). A cell a row does not have (a parameter of another workload, statistics of a failed
//! run) is empty in CSV and absent in JSON. Units are in `results.schema.json` (`columns[].unit`).

use super::exec::{self, point_path, Outcome, PointResult, StateCount, MANIFEST};
use super::plan::{Manifest, Value, META_COLUMNS};
use super::status::{survey, Status};
use super::SweepError;
use crate::report::records;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnKind {
    /// point, workload, seed
    Meta,
    /// A swept config key path or workload parameter.
    Param,
    /// status, error, checks_failed, build
    Outcome,
    Stat,
    Report,
    /// A litmus test's final state: how many runs ended in it.
    State,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub unit: String,
    pub kind: ColumnKind,
}

/// The combined results in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    /// One per point, in plan order; aligned with `columns`.
    pub rows: Vec<Vec<Option<Value>>>,
    /// Per row, a litmus test's final states (empty for kernels), for outcome charts.
    pub states: Vec<Vec<StateCount>>,
    index: HashMap<String, usize>,
}

impl Table {
    /// Builds the table from the manifest and each point's result (same order as the manifest).
    pub fn build(m: &Manifest, results: &[PointResult]) -> Table {
        let mut columns: Vec<Column> = META_COLUMNS
            .iter()
            .map(|n| Column {
                name: n.to_string(),
                unit: String::new(),
                kind: ColumnKind::Meta,
            })
            .collect();
        columns.extend(m.columns.iter().map(|n| Column {
            name: n.clone(),
            unit: String::new(),
            kind: ColumnKind::Param,
        }));
        for n in ["status", "error", "checks_failed", "build"] {
            columns.push(Column {
                name: n.into(),
                unit: if n == "checks_failed" { "checks" } else { "" }.into(),
                kind: ColumnKind::Outcome,
            });
        }
        let mut index: HashMap<String, usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        let mut reports: Vec<String> = Vec::new();
        let mut states: Vec<String> = Vec::new();
        for r in results {
            if let Outcome::Ok {
                stats,
                reports: q,
                states: st,
                ..
            } = &r.outcome
            {
                for c in st {
                    let name = state_column(&c.state);
                    if !states.contains(&name) {
                        states.push(name);
                    }
                }
                for s in stats {
                    let name = format!("{}.{}", s.location, s.metric);
                    if !index.contains_key(&name) {
                        index.insert(name.clone(), columns.len());
                        columns.push(Column {
                            name,
                            unit: s.unit.clone(),
                            kind: ColumnKind::Stat,
                        });
                    }
                }
                for (n, _) in q {
                    let name = format!("report.{n}");
                    if !reports.contains(&name) {
                        reports.push(name);
                    }
                }
            }
        }
        for (names, kind, unit) in [
            (reports, ColumnKind::Report, ""),
            (states, ColumnKind::State, "runs"),
        ] {
            for name in names {
                if !index.contains_key(&name) {
                    index.insert(name.clone(), columns.len());
                    columns.push(Column {
                        name,
                        unit: unit.into(),
                        kind,
                    });
                }
            }
        }
        let rows = results
            .iter()
            .map(|r| {
                let mut row: Vec<Option<Value>> = vec![None; columns.len()];
                let mut set = |name: &str, v: Value| row[index[name]] = Some(v);
                set("point", Value::Str(r.point.id.clone()));
                set("workload", Value::Str(r.point.workload.clone()));
                set("seed", Value::Int(r.point.seed as i64));
                for (k, v) in &r.point.params {
                    set(k, v.clone());
                }
                set("status", Value::Str(r.outcome.status().into()));
                if let Some(b) = &r.build {
                    set("build", Value::Str(b.clone()));
                }
                match &r.outcome {
                    Outcome::Ok {
                        stats,
                        reports,
                        checks,
                        states,
                    } => {
                        for c in states {
                            set(&state_column(&c.state), Value::Int(c.count as i64));
                        }
                        set(
                            "checks_failed",
                            Value::Int(checks.iter().filter(|c| !c.passed).count() as i64),
                        );
                        for s in stats {
                            set(
                                &format!("{}.{}", s.location, s.metric),
                                Value::Float(s.value),
                            );
                        }
                        for (n, v) in reports {
                            set(&format!("report.{n}"), Value::Int(*v));
                        }
                    }
                    Outcome::Error { error } => set("error", Value::Str(error.clone())),
                }
                row
            })
            .collect();
        let states = results
            .iter()
            .map(|r| match &r.outcome {
                Outcome::Ok { states, .. } => states.clone(),
                Outcome::Error { .. } => vec![],
            })
            .collect();
        Table {
            columns,
            rows,
            states,
            index,
        }
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.index.get(name).map(|&i| &self.columns[i])
    }

    /// A table of these columns and rows (no litmus states), for tests of what reads tables.
    #[cfg(test)]
    pub(crate) fn from_parts(columns: Vec<Column>, rows: Vec<Vec<Option<Value>>>) -> Table {
        let index = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        Table {
            states: vec![vec![]; rows.len()],
            columns,
            rows,
            index,
        }
    }

    /// The cell of `row` in column `name`.
    pub fn get(&self, row: usize, name: &str) -> Option<&Value> {
        self.index
            .get(name)
            .and_then(|&i| self.rows[row][i].as_ref())
    }

    pub fn to_csv(&self) -> String {
        let mut s = String::new();
        let header: Vec<String> = self
            .columns
            .iter()
            .map(|c| crate::stats::csv_field(&c.name))
            .collect();
        let _ = writeln!(s, "{}", header.join(","));
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|v| {
                    v.as_ref()
                        .map(|v| crate::stats::csv_field(&v.to_string()))
                        .unwrap_or_default()
                })
                .collect();
            let _ = writeln!(s, "{}", cells.join(","));
        }
        s
    }

    /// `results.json`: one record per run, `{"point": ..., "kernel.cycles": ..., ...}`, keys in column
    /// order, a cell the run does not have left out (`pandas.read_json` reads it as it is).
    pub fn to_records(&self) -> String {
        let cell = |v: &Value| match v {
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            // Non-finite statistics have no JSON number: null.
            Value::Float(f) => records::number(*f),
            Value::Str(s) => serde_json::Value::String(s.clone()),
        };
        let rows: Vec<records::Record> = self
            .rows
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| (c.name.clone(), v.as_ref().map(cell)))
                    .collect()
            })
            .collect();
        records::to_json(&rows)
    }

    /// `results.schema.json`: the schema's name and version, the sweep's name, and every column of
    /// `results.csv` and `results.json` in order with its unit and kind, one column per line.
    pub fn schema_json(&self, sweep: &str) -> String {
        let s = records::SWEEP_RESULTS;
        let mut out = String::from("{\n");
        let _ = writeln!(out, "\"schema\": {},", compact(&s.schema));
        let _ = writeln!(out, "\"version\": {},", s.version);
        let _ = writeln!(out, "\"sweep\": {},", compact(&sweep));
        let _ = writeln!(out, "\"columns\": [");
        for (i, c) in self.columns.iter().enumerate() {
            let sep = if i + 1 < self.columns.len() { "," } else { "" };
            let _ = writeln!(out, "  {}{sep}", compact(c));
        }
        out.push_str("]\n}\n");
        out
    }
}

/// Compact JSON of plain data (which cannot fail to serialise).
fn compact<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The column of a litmus final state: `outcome: P0:r0=0; P1:r0=0;`.
fn state_column(state: &str) -> String {
    format!("outcome: {state}")
}

pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_JSON: &str = "results.json";

/// The largest `results.json` (and `results.csv`) a sweep writes, and what its readers read back
/// (`plot` on a folder shipped without its point files): a combined table past it is refused
/// before any of the three files is written, naming its size and the limit (fewer points, or
/// split the sweep).
pub const RESULTS_MAX_BYTES: u64 = 256 << 20;
pub const RESULTS_SCHEMA: &str = "results.schema.json";

pub fn read_manifest(dir: &Path) -> Result<Manifest, SweepError> {
    let path = dir.join(MANIFEST);
    let text = crate::text::read_up_to(&path, exec::MANIFEST_MAX_BYTES).map_err(|e| {
        match e.located() {
            Err((_, source)) => SweepError::Output {
                path: path.display().to_string(),
                message: format!(
                    "cannot read ({source}); is {} a sweep output folder?",
                    dir.display()
                ),
            },
            Ok(l) => SweepError::Output {
                path: l.at(),
                message: l.message,
            },
        }
    })?;
    serde_json::from_str(&text).map_err(|e| SweepError::Output {
        path: path.display().to_string(),
        message: format!("not a sweep manifest of this gpumemsim version: {e}"),
    })
}

/// Reads every point's result from `dir`; all must be present. A damaged point file, or one that
/// holds another point's result, is named (with why), not counted among the missing.
pub fn load_results(dir: &Path, m: &Manifest) -> Result<Vec<PointResult>, SweepError> {
    let mut out = Vec::with_capacity(m.points.len());
    let mut missing = Vec::new();
    let mut damaged = Vec::new();
    for p in &m.points {
        match exec::check_point(dir, p) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => missing.push(p),
            Err(why) => damaged.push(why),
        }
    }
    if let Some(first) = damaged.first() {
        return Err(SweepError::Output {
            path: dir.display().to_string(),
            message: format!(
                "{} of {} point files are damaged (first: {first}); delete {} to rerun {} \
                 (`gpumemsim sweep status {}` lists them)",
                damaged.len(),
                m.points.len(),
                if damaged.len() == 1 { "it" } else { "them" },
                if damaged.len() == 1 {
                    "the point"
                } else {
                    "the points"
                },
                dir.display()
            ),
        });
    }
    if let Some(first) = missing.first() {
        return Err(SweepError::Output {
            path: dir.display().to_string(),
            message: format!(
                "{} of {} points have no result yet (first: {} {} seed {}); run the remaining \
                 shards, or merge the folders that hold them",
                missing.len(),
                m.points.len(),
                first.workload,
                describe(first),
                first.seed
            ),
        });
    }
    Ok(out)
}

/// The results of a finished folder read back from its `results.json` and `results.schema.json`,
/// for a folder shipped without its `points/` (the repository's `reports/*/`): one result per
/// manifest point, or `None` when the table does not hold every point. What the table does not
/// keep stays out: each failed check is known by its count only, and a final state does not say
/// whether it is a witness (an `outcomes` chart needs the point files; `plot` says so).
pub fn load_table_results(dir: &Path, m: &Manifest) -> Option<Vec<PointResult>> {
    #[derive(Deserialize)]
    struct SchemaDoc {
        columns: Vec<Column>,
    }
    let read = |name: &str| crate::text::read_up_to(&dir.join(name), RESULTS_MAX_BYTES).ok();
    let schema: SchemaDoc = serde_json::from_str(&read(RESULTS_SCHEMA)?).ok()?;
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(&read(RESULTS_JSON)?).ok()?;
    let by_id: HashMap<&str, &serde_json::Map<String, serde_json::Value>> = rows
        .iter()
        .filter_map(|r| Some((r.get("point")?.as_str()?, r)))
        .collect();
    let mut out = Vec::with_capacity(m.points.len());
    for p in &m.points {
        let row = by_id.get(p.id.as_str())?;
        let text = |k: &str| row.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let outcome = if text("status").as_deref() == Some("error") {
            Outcome::Error {
                error: text("error").unwrap_or_default(),
            }
        } else {
            let mut stats = Vec::new();
            let mut reports = Vec::new();
            let mut states = Vec::new();
            for c in &schema.columns {
                let Some(v) = row.get(&c.name) else { continue };
                match c.kind {
                    ColumnKind::Stat => {
                        let (location, metric) = c.name.rsplit_once('.')?;
                        stats.push(crate::stats::Stat {
                            location: location.to_string(),
                            metric: metric.to_string(),
                            value: v.as_f64()?,
                            unit: c.unit.clone(),
                        });
                    }
                    ColumnKind::Report => {
                        reports.push((c.name.strip_prefix("report.")?.to_string(), v.as_i64()?));
                    }
                    ColumnKind::State => states.push(StateCount {
                        state: c.name.strip_prefix("outcome: ")?.to_string(),
                        count: v.as_u64()?,
                        witness: false,
                    }),
                    _ => {}
                }
            }
            let failed = row
                .get("checks_failed")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let checks = (0..failed)
                .map(|_| crate::machine::CheckOutcome {
                    text: "a check (results.json keeps the count of failed checks only)"
                        .to_string(),
                    location: String::new(),
                    passed: false,
                    detail: None,
                })
                .collect();
            Outcome::Ok {
                stats,
                reports,
                checks,
                states,
            }
        };
        out.push(PointResult {
            point: p.clone(),
            build: text("build"),
            outcome,
        });
    }
    Some(out)
}

fn describe(p: &super::plan::PointInfo) -> String {
    p.params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes `results.csv`, `results.json` and `results.schema.json` into `dir` from its manifest and
/// point files, and returns the table (for the report).
pub fn combine(dir: &Path) -> Result<(Manifest, Table), SweepError> {
    let m = read_manifest(dir)?;
    let results = load_results(dir, &m)?;
    let table = Table::build(&m, &results);
    let files = [
        (RESULTS_CSV, table.to_csv()),
        (RESULTS_JSON, table.to_records()),
        (RESULTS_SCHEMA, table.schema_json(&m.name)),
    ];
    within_limit(dir, &files, RESULTS_MAX_BYTES)?;
    for (name, text) in files {
        let path = dir.join(name);
        crate::stats::write_atomic(&path, text.as_bytes()).map_err(exec::io_err(&path))?;
    }
    Ok((m, table))
}

/// Each combined file within `limit` bytes, checked before any is written.
fn within_limit(dir: &Path, files: &[(&str, String)], limit: u64) -> Result<(), SweepError> {
    for (name, text) in files {
        if text.len() as u64 > limit {
            return Err(SweepError::Output {
                path: dir.join(name).display().to_string(),
                message: format!(
                    "would be {} bytes, over the limit of {limit} bytes that its readers read \
                     back (`RESULTS_MAX_BYTES`); nothing was combined: run fewer points, or split \
                     the sweep into several specs",
                    text.len()
                ),
            });
        }
    }
    Ok(())
}

/// Gathers the point files of shard folders `dirs` into `out` (which may be one of them) and combines
/// them there, returning what [`super::status::survey`] found too. All folders must hold the same
/// sweep; nothing is written unless every point has a result, and results of several simulator builds
/// are refused unless `mix_builds` (the first folder's result of a point is then used). A point found
/// in two folders with different results of one build is an error (the runs were not deterministic, or
/// their inputs differed).
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    mix_builds: bool,
) -> Result<(Manifest, Table, Status), SweepError> {
    let (m, st) = survey(dirs)?;
    if let Some(c) = st.conflicts.first() {
        return Err(SweepError::Output {
            path: c.second.display().to_string(),
            message: format!(
                "differs from {} for the same point (same build)",
                c.first.display()
            ),
        });
    }
    if !st.complete() {
        return Err(SweepError::Output {
            path: dirs[0].display().to_string(),
            message: format!(
                "{} of {} points have no result yet, so nothing was combined\n{st}",
                st.missing(),
                st.points
            ),
        });
    }
    if st.mixed_builds() && !mix_builds {
        return Err(st.mixed_builds_error());
    }
    let mut m_out = m.clone();
    if let Ok(existing) = read_manifest(out) {
        // Merging into a shard folder keeps the plan's shard count as it is there.
        m_out.shards = existing.shards;
    }
    if read_manifest(out).ok().as_ref() != Some(&m_out) {
        exec::write_manifest(out, &m_out)?;
    }
    for (p, found) in m.points.iter().zip(&st.found) {
        let Some(src) = found.map(|d| &dirs[d]) else {
            continue; // not reached: the survey found every point
        };
        let (from, to) = (point_path(src, &p.id), point_path(out, &p.id));
        if from != to {
            let bytes = std::fs::read(&from).map_err(exec::io_err(&from))?;
            crate::stats::write_atomic(&to, &bytes).map_err(exec::io_err(&to))?;
        }
    }
    let (m, table) = combine(out)?;
    Ok((m, table, st))
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    /// A combined file past the limit is refused before anything is written, naming the file, its
    /// size and the limit; within it, nothing is said.
    #[test]
    fn a_results_table_past_its_readers_limit_is_refused_before_writing() {
        let d = Path::new("/no/such/sweep");
        let files = [
            (RESULTS_CSV, "a".repeat(10)),
            (RESULTS_JSON, "b".repeat(11)),
        ];
        within_limit(d, &files, 11).unwrap();
        let e = within_limit(d, &files, 10).unwrap_err().to_string();
        assert!(
            e.contains("results.json") && e.contains("would be 11 bytes, over the limit of 10"),
            "{e}"
        );
    }
}
