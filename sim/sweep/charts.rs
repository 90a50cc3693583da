//! Charts of a sweep: the `[[chart]]` tables of a spec, checked against the plan before anything runs
//! (`figures.rs` turns them into [`crate::report::plot::Chart`]s and tables from the combined
//! results).
//!
//! Kinds: `line` (a parameter on x, an expression on y, one line per combination of the `series`
//! columns), `bar` (x as categories, grouped by series, or one bar per `layers` entry),
//! `stacked_bar` (x as categories, one layer per `layers` entry: a latency or time breakdown),
//! `outcomes` (a litmus workload's final states with their counts, witnesses of its condition marked;
//! runs summed, bar groups per series), `scatter` (two expressions, one point per run; with
//! `identity = true` a y = x line), and `headline`, not a drawing but a small table of `y` (a row per
//! value of `x`, a column per series) at the top of the report. `where` keeps the rows whose
//! parameters have the given value(s); `labels` names values in legends, categories and headlines;
//! `width` and `height` size the canvas.
//!
//! Rows that differ only in `seed` are averaged; the spread (min–max) is drawn as a bar. A parameter
//! that varies among the charted rows but is neither x, a series nor fixed by `where` would be averaged
//! silently, so the spec is rejected instead. Only runs with status `ok` are drawn; a run that lacks a
//! column the chart needs is left out with a warning naming its series and the column.

use super::exec::{Outcome, PointResult};
use super::expr::Expr;
use super::plan::{Manifest, PointInfo, Value};
use super::SweepError;
use crate::report::plot::{self, Scale};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    #[default]
    Line,
    Scatter,
    Bar,
    StackedBar,
    /// A litmus test's final states with their counts (witnesses of its condition marked).
    Outcomes,
    /// Not a chart: a small table of `y` (rows: the values of `x`, columns: those of `series`) that
    /// opens the report.
    Headline,
    /// Statistics over time of one run (`run --stats-interval N --interval-csv FILE`): `gpumemsim
    /// plot FILE --kind intervals` (`report/intervals.rs`); not a sweep chart.
    Intervals,
}

impl std::str::FromStr for ChartKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ChartKind, String> {
        match s {
            "line" => Ok(ChartKind::Line),
            "scatter" => Ok(ChartKind::Scatter),
            "bar" => Ok(ChartKind::Bar),
            "stacked_bar" => Ok(ChartKind::StackedBar),
            "outcomes" => Ok(ChartKind::Outcomes),
            "headline" => Ok(ChartKind::Headline),
            "intervals" => Ok(ChartKind::Intervals),
            _ => Err(format!(
                "{s}: allowed: line, bar, stacked_bar, scatter, outcomes, headline, intervals"
            )),
        }
    }
}

/// One value or a list of accepted values (for `where`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Value),
    Many(Vec<Value>),
}

impl OneOrMany {
    fn values(&self) -> Vec<&Value> {
        match self {
            OneOrMany::One(v) => vec![v],
            OneOrMany::Many(vs) => vs.iter().collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub name: String,
    pub y: String,
}

fn linear() -> Scale {
    Scale::Linear
}

/// A `[[chart]]` table of a sweep spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartSpec {
    /// File stem of `charts/NAME.{png,svg}`; default `chartN`.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub kind: ChartKind,
    /// A parameter column (`line`, `bar`, `stacked_bar`) or an expression (`scatter`); none for
    /// `outcomes`.
    #[serde(default)]
    pub x: String,
    /// An expression (all kinds but `stacked_bar`).
    #[serde(default)]
    pub y: Option<String>,
    /// `stacked_bar`: the parts, bottom first; `bar`: bars side by side (instead of `y`).
    #[serde(default)]
    pub layers: Vec<Layer>,
    /// Columns whose value combinations make separate lines, bar groups or point colours.
    #[serde(default)]
    pub series: Vec<String>,
    /// Legend text per series, with `{column}` replaced by the value: `"{K} addresses"`.
    #[serde(default)]
    pub legend: Option<String>,
    #[serde(default, rename = "where")]
    pub filter: BTreeMap<String, OneOrMany>,
    #[serde(default)]
    pub x_label: Option<String>,
    #[serde(default)]
    pub x_unit: Option<String>,
    #[serde(default = "linear")]
    pub x_scale: Scale,
    #[serde(default)]
    pub y_label: Option<String>,
    #[serde(default)]
    pub y_unit: Option<String>,
    #[serde(default = "linear")]
    pub y_scale: Scale,
    /// `scatter`: draw y = x.
    #[serde(default)]
    pub identity: bool,
    /// A sentence under the chart in the report.
    #[serde(default)]
    pub caption: Option<String>,
    /// Names for values of the x and series columns in legends, categories and headline tables:
    /// `labels = { RET = { "0" = "non-returning", "1" = "returning" } }`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, BTreeMap<String, String>>,
    /// Canvas width and height in pixels (default 900 × 560); a legend below the plot adds its own
    /// height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

/// The rows behind a chart, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct DataTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The value of a pseudo or parameter column of a point.
fn point_value(p: &PointInfo, col: &str) -> Option<Value> {
    match col {
        "workload" => Some(Value::Str(p.workload.clone())),
        "seed" => Some(Value::Int(p.seed as i64)),
        _ => p.params.get(col).cloned(),
    }
}

fn is_param(m: &Manifest, col: &str) -> bool {
    col == "workload" || col == "seed" || m.columns.iter().any(|c| c == col)
}

/// Why a sweep has no `intervals` chart.
pub const INTERVALS_NOT_SWEEP: &str = "kind = \"intervals\" draws one run's --interval-csv file \
     (`gpumemsim plot FILE.csv --kind intervals --y gpu.ipc`), not a sweep's points";

impl ChartSpec {
    fn expressions(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        if self.kind == ChartKind::Scatter {
            out.push(("x", self.x.as_str()));
        }
        if let Some(y) = &self.y {
            out.push(("y", y.as_str()));
        }
        for l in &self.layers {
            out.push(("layers.y", l.y.as_str()));
        }
        out
    }

    pub(super) fn keeps(&self, p: &PointInfo) -> bool {
        self.filter.iter().all(|(k, want)| {
            point_value(p, k).is_some_and(|v| want.values().iter().any(|w| values_equal(&v, w)))
        })
    }

    /// Checks the chart against the plan's points and fills in defaults. Errors say what to change.
    pub fn validate(&mut self, index: usize, m: &Manifest) -> Result<(), String> {
        self.check_names(index, m)?;
        self.check_marks(m)
    }

    /// The first half of [`ChartSpec::validate`]: the chart's shape, expressions, parameter names and
    /// `where` values, in the order a reader meets them. (Statistic names come next, against a
    /// result: [`check_columns`].)
    pub fn check_names(&mut self, index: usize, m: &Manifest) -> Result<(), String> {
        if self.name.is_empty() {
            self.name = format!("chart{}", index + 1);
        }
        if !self
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "name = {:?}: use letters, digits, - and _ (it names the chart's files)",
                self.name
            ));
        }
        match self.kind {
            ChartKind::Intervals => return Err(INTERVALS_NOT_SWEEP.into()),
            ChartKind::Outcomes => {
                if self.y.is_some() || !self.layers.is_empty() || !self.x.is_empty() {
                    return Err("kind = \"outcomes\" takes no `x`, `y` or `layers`: it counts the final states of one litmus workload (choose it with `where`)".into());
                }
            }
            _ if self.x.is_empty() => return Err("needs `x`".into()),
            ChartKind::StackedBar => {
                if self.layers.is_empty() || self.y.is_some() {
                    return Err(
                        "kind = \"stacked_bar\" takes `layers = [{ name, y }, ...]` and no `y`"
                            .into(),
                    );
                }
                if !self.series.is_empty() {
                    return Err(
                        "kind = \"stacked_bar\" takes no `series` (each layer is one)".into(),
                    );
                }
            }
            ChartKind::Bar | ChartKind::Headline if !self.layers.is_empty() => {
                if self.y.is_some() || !self.series.is_empty() {
                    return Err("kind = \"bar\" and \"headline\" take either `y` (with `series`) or `layers` (one bar or column each), not both".into());
                }
            }
            _ => {
                if self.y.is_none() || !self.layers.is_empty() {
                    return Err("needs `y` (an expression) and no `layers` (only for kind = \"bar\", \"stacked_bar\" or \"headline\")".into());
                }
            }
        }
        if self.identity && self.kind != ChartKind::Scatter {
            return Err("identity = true is for kind = \"scatter\"".into());
        }
        for (what, v, min) in [
            ("width", self.width, plot::MIN_SIZE.0),
            ("height", self.height, plot::MIN_SIZE.1),
        ] {
            match v {
                Some(v) if !(min..=plot::MAX_SIZE).contains(&v) => {
                    return Err(format!(
                        "{what} = {v}: between {min} and {} pixels",
                        plot::MAX_SIZE
                    ))
                }
                Some(_) if self.kind == ChartKind::Headline => {
                    return Err(format!("{what}: a headline is a table, not a drawing"))
                }
                _ => {}
            }
        }
        for col in self.labels.keys() {
            if *col != self.x && !self.series.contains(col) {
                return Err(format!(
                    "labels.{col}: labels name values of `x` or of a `series` column (x = `{}`, series = {:?})",
                    self.x, self.series
                ));
            }
        }
        for (what, text) in self.expressions() {
            let e = Expr::parse(text).map_err(|e| format!("{what} = {text:?}: {e}"))?;
            for c in e.columns() {
                // Statistics are location.metric (they hold a dot) and are checked against the first
                // result; a name without a dot can only be a parameter.
                if !c.contains('.') && !is_param(m, c) {
                    return Err(format!(
                        "{what} = {text:?}: `{c}` is no parameter of this sweep (parameters: {})",
                        param_list(m)
                    ));
                }
            }
        }
        let mut named: Vec<&str> = self.series.iter().map(String::as_str).collect();
        if !matches!(self.kind, ChartKind::Scatter | ChartKind::Outcomes) {
            named.push(&self.x);
        }
        for c in named.iter().chain(
            self.filter
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .iter(),
        ) {
            if !is_param(m, c) {
                return Err(format!(
                    "`{c}` is no parameter of this sweep (parameters: {})",
                    param_list(m)
                ));
            }
        }
        for (k, want) in &self.filter {
            for w in want.values() {
                if !m
                    .points
                    .iter()
                    .any(|p| point_value(p, k).is_some_and(|v| values_equal(&v, w)))
                {
                    return Err(format!("where {k} = {w}: no point of this sweep has it"));
                }
            }
        }
        for (col, names) in &self.labels {
            for v in names.keys() {
                if !m
                    .points
                    .iter()
                    .any(|p| point_value(p, col).is_some_and(|pv| pv.to_string() == *v))
                {
                    return Err(format!(
                        "labels.{col}.{v:?}: no point of this sweep has {col} = {v}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The second half of [`ChartSpec::validate`]: the points the chart draws, and that no two runs
    /// that differ in more than their seed fall on one mark.
    pub fn check_marks(&mut self, m: &Manifest) -> Result<(), String> {
        let charted: Vec<&PointInfo> = m
            .points
            .iter()
            .filter(|p| self.keeps(p))
            .filter(|p| {
                matches!(self.kind, ChartKind::Scatter | ChartKind::Outcomes)
                    || point_value(p, &self.x).is_some()
            })
            .collect();
        if charted.is_empty() {
            return Err(format!(
                "no point of this sweep has x = `{}` and passes `where`",
                self.x
            ));
        }
        if self.kind == ChartKind::Outcomes {
            if let Some(other) = charted.iter().find(|p| p.workload != charted[0].workload) {
                return Err(format!(
                    "an outcomes chart shows one litmus workload; `where` lets through {} and {}",
                    charted[0].workload, other.workload
                ));
            }
            if self.title.is_empty() {
                self.title = format!("Final states of {}", charted[0].workload);
            }
        }
        if self.kind == ChartKind::Line {
            if let Some(p) = charted
                .iter()
                .find(|p| point_value(p, &self.x).and_then(|v| v.as_f64()).is_none())
            {
                return Err(format!(
                    "x = `{}` takes the non-numeric value {} (workload {}): use kind = \"bar\"",
                    self.x,
                    point_value(p, &self.x)
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                    p.workload
                ));
            }
        }
        if self.kind != ChartKind::Scatter {
            // Runs that land on one mark (same x, same series) are averaged: they may differ in
            // their seed only. A column fixed by the workload (K of "1 address") is no problem.
            let mut groups: Vec<(Vec<Option<Value>>, &PointInfo)> = Vec::new();
            for p in &charted {
                let key: Vec<Option<Value>> = std::iter::once(&self.x)
                    .chain(&self.series)
                    .map(|c| point_value(p, c))
                    .collect();
                match groups.iter().find(|(k, _)| *k == key) {
                    None => groups.push((key, p)),
                    Some((_, first)) => {
                        for col in
                            std::iter::once("workload").chain(m.columns.iter().map(String::as_str))
                        {
                            let (a, b) = (point_value(first, col), point_value(p, col));
                            let same = match (&a, &b) {
                                (Some(a), Some(b)) => values_equal(a, b),
                                (None, None) => true,
                                _ => false,
                            };
                            if !same {
                                let show = |v: &Option<Value>| {
                                    v.as_ref()
                                        .map(|v| v.to_string())
                                        .unwrap_or_else(|| "(none)".into())
                                };
                                return Err(format!(
                                    "`{col}` differs ({} and {}) between runs drawn as one mark \
                                     (same x and series): make it a series or fix it with `where`",
                                    show(&a),
                                    show(&b)
                                ));
                            }
                        }
                    }
                }
            }
        }
        if self.title.is_empty() {
            self.title = match (&self.y, self.kind) {
                (Some(y), _) => format!("{} vs {}", self.y_label.as_deref().unwrap_or(y), self.x),
                (None, _) => format!(
                    "{} by {}",
                    self.y_label.as_deref().unwrap_or("breakdown"),
                    self.x
                ),
            };
        }
        Ok(())
    }

    /// The statistics this chart reads (names with a dot that are not parameters).
    fn stat_columns(&self, m: &Manifest) -> Vec<String> {
        let mut out = Vec::new();
        for (_, text) in self.expressions() {
            if let Ok(e) = Expr::parse(text) {
                for c in e.columns() {
                    if c.contains('.') && !is_param(m, c) && !out.iter().any(|o: &String| o == c) {
                        out.push(c.to_string());
                    }
                }
            }
        }
        out
    }
}

fn param_list(m: &Manifest) -> String {
    let mut v: Vec<&str> = vec!["workload", "seed"];
    v.extend(m.columns.iter().map(String::as_str));
    v.join(", ")
}

/// Checks the statistics named by the charts against one completed run's statistics, and reported
/// quantities (`report.NAME`) against `reports` (every name a workload of the sweep declares), so that
/// a misspelt name fails the sweep after one point instead of at the end.
pub fn check_columns(
    m: &Manifest,
    sample: &PointResult,
    reports: &[String],
) -> Result<(), SweepError> {
    let Outcome::Ok { stats, .. } = &sample.outcome else {
        return Ok(());
    };
    let known: Vec<String> = stats
        .iter()
        .map(|s| format!("{}.{}", s.location, s.metric))
        .chain(reports.iter().map(|n| format!("report.{n}")))
        .collect();
    for c in &m.charts {
        for col in c.stat_columns(m) {
            if !known.contains(&col) {
                let loc = col.rsplit_once('.').map(|(l, _)| l).unwrap_or("");
                let near: Vec<&str> = known
                    .iter()
                    .filter(|k| k.rsplit_once('.').map(|(l, _)| l) == Some(loc))
                    .map(String::as_str)
                    .collect();
                // The key that names it: `y = "kernel.cyclez / T"`.
                let key = c
                    .expressions()
                    .into_iter()
                    .find(|(_, text)| {
                        Expr::parse(text).is_ok_and(|e| e.columns().contains(&col.as_str()))
                    })
                    .map(|(what, text)| format!(" {what} = {text:?}:"))
                    .unwrap_or_default();
                return Err(SweepError::Plan(format!(
                    "chart \"{}\":{key} no statistic is called `{col}`{}",
                    c.name,
                    if near.is_empty() {
                        " (see the columns of results.csv, e.g. kernel.cycles, l2.hit_rate)"
                            .to_string()
                    } else {
                        format!(" (at `{loc}` there are: {})", near.join(", "))
                    }
                )));
            }
        }
    }
    Ok(())
}
