//! Charts of a sweep: the `[[chart]]` tables of a spec, checked against the plan before anything runs,
//! and turned into [`crate::report::plot::Chart`]s plus the data table behind each, from the combined
//! results.
//!
//! Kinds: `line` (a parameter on x, an expression on y, one line per combination of the `series`
//! columns), `bar` (x as categories, grouped by series, or one bar per `layers` entry),
//! `stacked_bar` (x as categories, one layer per `layers` entry: a latency or time breakdown),
//! `outcomes` (a litmus workload's final states with their counts, witnesses of its condition marked;
//! runs summed, bar groups per series), `scatter` (two expressions, one point per run; with
//! `identity = true` a y = x line). `where` keeps the rows whose parameters have the given value(s).
//!
//! Rows that differ only in `seed` are averaged; the spread (min–max) is drawn as a bar. A parameter
//! that varies among the charted rows but is neither x, a series nor fixed by `where` would be averaged
//! silently, so the spec is rejected instead. Only runs with status `ok` are drawn.

use super::exec::{Outcome, PointResult};
use super::expr::Expr;
use super::plan::{Manifest, PointInfo, Value};
use super::results::Table;
use super::SweepError;
use crate::report::plot::{self, Axis, BarLayout, BarSeries, Chart, Scale, Series};
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
            _ => Err(format!(
                "{s}: allowed: line, bar, stacked_bar, scatter, outcomes"
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

    fn keeps(&self, p: &PointInfo) -> bool {
        self.filter.iter().all(|(k, want)| {
            point_value(p, k).is_some_and(|v| want.values().iter().any(|w| values_equal(&v, w)))
        })
    }

    /// Checks the chart against the plan's points and fills in defaults. Errors say what to change.
    pub fn validate(&mut self, index: usize, m: &Manifest) -> Result<(), String> {
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
            ChartKind::Bar if !self.layers.is_empty() => {
                if self.y.is_some() || !self.series.is_empty() {
                    return Err("kind = \"bar\" takes either `y` (with `series`) or `layers` (one bar each), not both".into());
                }
            }
            _ => {
                if self.y.is_none() || !self.layers.is_empty() {
                    return Err("needs `y` (an expression) and no `layers` (only for kind = \"bar\" or \"stacked_bar\")".into());
                }
            }
        }
        if self.identity && self.kind != ChartKind::Scatter {
            return Err("identity = true is for kind = \"scatter\"".into());
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

/// Mean, min and max of a group of values.
fn summarise(vals: &[f64]) -> (f64, f64, f64) {
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<f64>() / n;
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, lo, hi)
}

/// Keeps first-appearance order.
fn position<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
    match v.iter().position(|e| *e == x) {
        Some(i) => i,
        None => {
            v.push(x);
            v.len() - 1
        }
    }
}

/// Builds the chart and its data table from the combined results.
pub fn build(
    spec: &ChartSpec,
    m: &Manifest,
    table: &Table,
) -> Result<(Chart, DataTable), SweepError> {
    let err = |message: String| SweepError::Plan(format!("chart \"{}\": {message}", spec.name));
    let parse = |t: &str| Expr::parse(t).map_err(|e| err(format!("{t:?}: {e}")));
    let num = |row: usize| move |c: &str| table.get(row, c).and_then(Value::as_f64);
    let rows: Vec<usize> = (0..table.rows.len())
        .filter(|&r| {
            table.get(r, "status") == Some(&Value::Str("ok".into())) && spec.keeps(&m.points[r])
        })
        .collect();
    let series_of = |r: usize| -> Vec<String> {
        spec.series
            .iter()
            .map(|c| table.get(r, c).map(|v| v.to_string()).unwrap_or_default())
            .collect()
    };
    let series_name = |key: &[String]| -> String {
        match &spec.legend {
            Some(t) => spec
                .series
                .iter()
                .zip(key)
                .fold(t.clone(), |acc, (c, v)| acc.replace(&format!("{{{c}}}"), v)),
            None => spec
                .series
                .iter()
                .zip(key)
                .map(|(c, v)| {
                    if c == "workload" {
                        v.clone()
                    } else {
                        format!("{c}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    };
    let unit_of = |text: &str, given: &Option<String>| -> String {
        given.clone().unwrap_or_else(|| {
            Expr::parse(text)
                .ok()
                .and_then(|e| {
                    e.as_column()
                        .and_then(|c| table.column(c))
                        .map(|c| c.unit.clone())
                })
                .unwrap_or_default()
        })
    };
    let x_axis = Axis {
        label: spec.x_label.clone().unwrap_or_else(|| spec.x.clone()),
        unit: unit_of(&spec.x, &spec.x_unit),
        scale: spec.x_scale,
        range: None,
    };
    let y_text = spec.y.clone().unwrap_or_default();
    let y_axis = Axis {
        label: spec.y_label.clone().unwrap_or_else(|| y_text.clone()),
        unit: unit_of(&y_text, &spec.y_unit),
        scale: spec.y_scale,
        range: None,
    };
    let mut header: Vec<String> = spec.series.clone();
    let mut data = Vec::new();

    let chart = match spec.kind {
        ChartKind::Outcomes => {
            // Final states over the chosen runs (seeds summed), one bar group per series.
            let rows: Vec<usize> = (0..table.rows.len())
                .filter(|&r| spec.keeps(&m.points[r]) && !table.states[r].is_empty())
                .collect();
            if rows.is_empty() {
                return Err(err("no litmus results among the chosen runs".into()));
            }
            let mut states: Vec<(String, bool)> = Vec::new();
            let mut keys: Vec<Vec<String>> = Vec::new();
            let mut counts: BTreeMap<(usize, usize), f64> = BTreeMap::new();
            for &r in &rows {
                let k = position(&mut keys, series_of(r));
                for c in &table.states[r] {
                    let i = position(&mut states, (c.state.clone(), c.witness));
                    *counts.entry((k, i)).or_default() += c.count as f64;
                }
            }
            let count = |k: usize, i: usize| counts.get(&(k, i)).copied().unwrap_or(0.0);
            let y_axis = Axis {
                label: spec.y_label.clone().unwrap_or_else(|| "runs".into()),
                unit: spec.y_unit.clone().unwrap_or_default(),
                ..y_axis
            };
            let x_axis = Axis {
                label: spec
                    .x_label
                    .clone()
                    .unwrap_or_else(|| "final state (* witness of the condition)".into()),
                ..x_axis
            };
            let cats: Vec<String> = states
                .iter()
                .map(|(s, w)| if *w { format!("{s} *") } else { s.clone() })
                .collect();
            header.insert(0, "final state".into());
            header.extend(["witness".to_string(), "runs".to_string()]);
            for (k, key) in keys.iter().enumerate() {
                for (i, (st, w)) in states.iter().enumerate() {
                    let mut row = vec![st.clone()];
                    row.extend(key.iter().cloned());
                    row.extend([if *w { "yes" } else { "no" }.to_string(), fmt(count(k, i))]);
                    data.push(row);
                }
            }
            if spec.series.is_empty() {
                let layer = |witness: bool, name: &str| {
                    BarSeries::new(
                        name,
                        states
                            .iter()
                            .enumerate()
                            .map(|(i, (_, w))| if *w == witness { count(0, i) } else { 0.0 })
                            .collect(),
                    )
                };
                Chart::bars(
                    &spec.title,
                    x_axis,
                    y_axis,
                    cats,
                    vec![
                        layer(false, "other states"),
                        layer(true, "witness of the condition"),
                    ],
                    BarLayout::Stacked,
                )
            } else {
                let bars = keys
                    .iter()
                    .enumerate()
                    .map(|(k, key)| {
                        BarSeries::new(
                            series_name(key),
                            (0..states.len()).map(|i| count(k, i)).collect(),
                        )
                    })
                    .collect();
                Chart::bars(&spec.title, x_axis, y_axis, cats, bars, BarLayout::Grouped)
            }
        }
        ChartKind::Line | ChartKind::Scatter => {
            let y = parse(&y_text)?;
            let x = parse(&spec.x)?;
            // series key → x → values
            let mut keys: Vec<Vec<String>> = Vec::new();
            let mut groups: Vec<Vec<(f64, Vec<f64>)>> = Vec::new();
            for &r in &rows {
                let (Some(xv), Some(yv)) = (x.eval(&num(r)), y.eval(&num(r))) else {
                    continue;
                };
                let k = position(&mut keys, series_of(r));
                if groups.len() <= k {
                    groups.push(Vec::new());
                }
                let g = &mut groups[k];
                // A scatter keeps every run; a line averages the runs at one x (seeds).
                match g
                    .iter_mut()
                    .find(|(gx, _)| spec.kind == ChartKind::Line && *gx == xv)
                {
                    Some((_, ys)) => ys.push(yv),
                    None => g.push((xv, vec![yv])),
                }
            }
            header.extend([
                x_axis.label.clone(),
                format!("{} (mean)", y_axis.label),
                "min".into(),
                "max".into(),
                "runs".into(),
            ]);
            let mut series = Vec::new();
            for (key, g) in keys.iter().zip(&groups) {
                let mut pts = Vec::new();
                let mut spread = Vec::new();
                for (xv, ys) in g {
                    let (mean, lo, hi) = summarise(ys);
                    pts.push((*xv, mean));
                    spread.push((lo, hi));
                    let mut row = key.clone();
                    row.extend([
                        plot::format_tick(*xv),
                        fmt(mean),
                        fmt(lo),
                        fmt(hi),
                        ys.len().to_string(),
                    ]);
                    data.push(row);
                }
                let s = Series::new(series_name(key), pts);
                let varies = spread.iter().any(|(lo, hi)| lo != hi);
                series.push(if varies && spec.kind == ChartKind::Line {
                    s.with_spread(spread)
                } else {
                    s
                });
            }
            if spec.kind == ChartKind::Line {
                Chart::lines(&spec.title, x_axis, y_axis, series)
            } else {
                Chart::scatter(&spec.title, x_axis, y_axis, series, spec.identity)
            }
        }
        ChartKind::Bar | ChartKind::StackedBar => {
            let layers: Vec<(String, Expr)> = if spec.layers.is_empty() {
                vec![(String::new(), parse(&y_text)?)]
            } else {
                spec.layers
                    .iter()
                    .map(|l| Ok((l.name.clone(), parse(&l.y)?)))
                    .collect::<Result<_, SweepError>>()?
            };
            let mut cats: Vec<String> = Vec::new();
            let mut keys: Vec<Vec<String>> = Vec::new();
            // (category, series key, layer) → values
            let mut cells: BTreeMap<(usize, usize, usize), Vec<f64>> = BTreeMap::new();
            for &r in &rows {
                let Some(xv) = table.get(r, &spec.x) else {
                    continue;
                };
                let c = position(&mut cats, xv.to_string());
                let k = position(&mut keys, series_of(r));
                for (li, (_, e)) in layers.iter().enumerate() {
                    if let Some(v) = e.eval(&num(r)) {
                        cells.entry((c, k, li)).or_default().push(v);
                    }
                }
            }
            let mean = |c: usize, k: usize, li: usize| {
                cells
                    .get(&(c, k, li))
                    .map(|v| summarise(v).0)
                    .unwrap_or(f64::NAN)
            };
            header.insert(0, x_axis.label.clone());
            let bars: Vec<BarSeries> = if spec.layers.is_empty() {
                header.push(format!("{} (mean)", y_axis.label));
                (0..keys.len())
                    .map(|k| {
                        BarSeries::new(
                            series_name(&keys[k]),
                            (0..cats.len()).map(|c| mean(c, k, 0)).collect(),
                        )
                    })
                    .collect()
            } else {
                header.extend(layers.iter().map(|(n, _)| n.clone()));
                layers
                    .iter()
                    .enumerate()
                    .map(|(li, (n, _))| {
                        BarSeries::new(n.clone(), (0..cats.len()).map(|c| mean(c, 0, li)).collect())
                    })
                    .collect()
            };
            for (c, cat) in cats.iter().enumerate() {
                for (k, key) in keys.iter().enumerate() {
                    let mut row = vec![cat.clone()];
                    row.extend(key.iter().cloned());
                    row.extend((0..layers.len()).map(|li| fmt(mean(c, k, li))));
                    data.push(row);
                }
            }
            let layout = if spec.kind == ChartKind::Bar {
                BarLayout::Grouped
            } else {
                BarLayout::Stacked
            };
            Chart::bars(&spec.title, x_axis, y_axis, cats, bars, layout)
        }
    };
    Ok((chart, DataTable { header, rows: data }))
}

fn fmt(v: f64) -> String {
    if !v.is_finite() {
        String::new()
    } else if v.fract() == 0.0 || v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{:.4}", v)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}
