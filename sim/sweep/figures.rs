//! A sweep's figures from its combined results: each `[[chart]]` as a [`Chart`] with the data table
//! behind it, and each `kind = "headline"` as a small table that opens the report.
//!
//! Rows that land on one mark (same x and series) are averaged over seeds, with the min–max spread
//! kept. A run that lacks a column the chart's expressions need (a statistic or reported quantity only
//! some workloads have) cannot be drawn: it is left out with a warning that names the series and the
//! column, never silently. Only runs with status `ok` are drawn.
//!
//! Not here: checking a chart spec against the plan (`charts.rs`), writing files (`mod.rs`).

use super::charts::{ChartKind, ChartSpec, DataTable};
use super::expr::Expr;
use super::plan::{Manifest, Value};
use super::results::Table;
use super::SweepError;
use crate::report::plot::{self, Axis, BarLayout, BarSeries, Chart, Series};
use std::collections::BTreeMap;

/// A chart built from the results.
pub struct Built {
    pub chart: Chart,
    pub data: DataTable,
    /// Series or runs left out because a column they need is missing, each naming both.
    pub warnings: Vec<String>,
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

/// Four significant digits (whole numbers from 1000 up): what a headline cell shows.
fn significant(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 || a == 0.0 {
        0
    } else {
        (3 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Runs of one series key: how many there were, how many could be drawn, and the columns the others
/// lacked.
#[derive(Default)]
struct Coverage {
    runs: usize,
    drawn: usize,
    missing: Vec<String>,
}

/// What the builders share: the spec, the chosen rows and how values are shown.
struct Ctx<'a> {
    spec: &'a ChartSpec,
    table: &'a Table,
    /// Rows with status `ok` that pass `where`, in plan order.
    rows: Vec<usize>,
}

impl Ctx<'_> {
    fn err(&self, message: String) -> SweepError {
        SweepError::Plan(format!("chart \"{}\": {message}", self.spec.name))
    }

    fn parse(&self, t: &str) -> Result<Expr, SweepError> {
        Expr::parse(t).map_err(|e| self.err(format!("{t:?}: {e}")))
    }

    fn num(&self, r: usize) -> impl Fn(&str) -> Option<f64> + '_ {
        move |c: &str| self.table.get(r, c).and_then(Value::as_f64)
    }

    /// A value of `col` as shown: its label, or its text.
    fn label(&self, col: &str, v: &str) -> String {
        self.spec
            .labels
            .get(col)
            .and_then(|l| l.get(v))
            .cloned()
            .unwrap_or_else(|| v.to_string())
    }

    fn series_of(&self, r: usize) -> Vec<String> {
        self.spec
            .series
            .iter()
            .map(|c| {
                self.table
                    .get(r, c)
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// A series' legend text: the `legend` template, or `col=value` pairs (labels and workload names
    /// alone).
    fn series_name(&self, key: &[String]) -> String {
        let spec = self.spec;
        match &spec.legend {
            Some(t) => spec.series.iter().zip(key).fold(t.clone(), |acc, (c, v)| {
                acc.replace(&format!("{{{c}}}"), &self.label(c, v))
            }),
            None => spec
                .series
                .iter()
                .zip(key)
                // A column the run does not have (a parameter of another workload) names nothing.
                .filter(|(_, v)| !v.is_empty())
                .map(|(c, v)| {
                    if c == "workload" || spec.labels.get(c).is_some_and(|l| l.contains_key(v)) {
                        self.label(c, v)
                    } else {
                        format!("{c}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The columns of `exprs` that row `r` lacks.
    fn lacks(&self, exprs: &[&Expr], r: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in exprs {
            for c in e.columns() {
                if self.table.get(r, c).is_none() && !out.iter().any(|o| o == c) {
                    out.push(c.to_string());
                }
            }
        }
        out
    }

    /// One warning per series that lost runs to missing columns.
    fn warnings(&self, keys: &[Vec<String>], cover: &[Coverage]) -> Vec<String> {
        let mut out = Vec::new();
        for (key, c) in keys.iter().zip(cover) {
            if c.drawn == c.runs {
                continue;
            }
            let name = self.series_name(key);
            let name = if name.is_empty() {
                "the chart's only series".to_string()
            } else {
                format!("series \"{name}\"")
            };
            let cols = c
                .missing
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(format!(
                "chart \"{}\": {name} {}: {} of its {} runs have no {cols}",
                self.spec.name,
                if c.drawn == 0 {
                    "left out"
                } else {
                    "incomplete"
                },
                c.runs - c.drawn,
                c.runs
            ));
        }
        out
    }

    fn unit_of(&self, text: &str, given: &Option<String>) -> String {
        given.clone().unwrap_or_else(|| {
            Expr::parse(text)
                .ok()
                .and_then(|e| {
                    e.as_column()
                        .and_then(|c| self.table.column(c))
                        .map(|c| c.unit.clone())
                })
                .unwrap_or_default()
        })
    }

    fn axes(&self) -> (Axis, Axis) {
        let spec = self.spec;
        let x = Axis {
            label: spec.x_label.clone().unwrap_or_else(|| spec.x.clone()),
            unit: self.unit_of(&spec.x, &spec.x_unit),
            scale: spec.x_scale,
            range: None,
        };
        let y_text = spec.y.clone().unwrap_or_default();
        let y = Axis {
            label: spec.y_label.clone().unwrap_or_else(|| y_text.clone()),
            unit: self.unit_of(&y_text, &spec.y_unit),
            scale: spec.y_scale,
            range: None,
        };
        (x, y)
    }

    /// (x value, series key, layer) → values over the chosen rows, for bars and headlines; with the
    /// categories and keys in first-appearance order and each key's coverage.
    #[allow(clippy::type_complexity)]
    fn cells(
        &self,
        layers: &[(String, Expr)],
    ) -> (
        Vec<String>,
        Vec<Vec<String>>,
        BTreeMap<(usize, usize, usize), Vec<f64>>,
        Vec<Coverage>,
    ) {
        let mut cats: Vec<String> = Vec::new();
        let mut keys: Vec<Vec<String>> = Vec::new();
        let mut cover: Vec<Coverage> = Vec::new();
        let mut cells: BTreeMap<(usize, usize, usize), Vec<f64>> = BTreeMap::new();
        let exprs: Vec<&Expr> = layers.iter().map(|(_, e)| e).collect();
        for &r in &self.rows {
            let Some(xv) = self.table.get(r, &self.spec.x) else {
                continue;
            };
            let k = position(&mut keys, self.series_of(r));
            if cover.len() <= k {
                cover.push(Coverage::default());
            }
            cover[k].runs += 1;
            let vals: Vec<Option<f64>> = exprs.iter().map(|e| e.eval(&self.num(r))).collect();
            if vals.iter().any(Option::is_none) {
                for c in self.lacks(&exprs, r) {
                    if !cover[k].missing.contains(&c) {
                        cover[k].missing.push(c);
                    }
                }
                continue;
            }
            cover[k].drawn += 1;
            let c = position(&mut cats, xv.to_string());
            for (li, v) in vals.into_iter().enumerate() {
                cells.entry((c, k, li)).or_default().extend(v);
            }
        }
        (cats, keys, cells, cover)
    }
}

/// Builds the chart and its data table from the combined results.
pub fn build(spec: &ChartSpec, m: &Manifest, table: &Table) -> Result<Built, SweepError> {
    let ctx = Ctx {
        spec,
        table,
        rows: (0..table.rows.len())
            .filter(|&r| {
                table.get(r, "status") == Some(&Value::Str("ok".into())) && spec.keeps(&m.points[r])
            })
            .collect(),
    };
    let mut built = match spec.kind {
        ChartKind::Outcomes => outcomes(&ctx, m)?,
        ChartKind::Line | ChartKind::Scatter => lines(&ctx)?,
        ChartKind::Bar | ChartKind::StackedBar => bars(&ctx)?,
        ChartKind::Intervals => return Err(ctx.err(super::charts::INTERVALS_NOT_SWEEP.into())),
        ChartKind::Headline => {
            return Err(ctx.err(
                "kind = \"headline\" is a table at the top of the report, not a drawing".into(),
            ))
        }
    };
    let (w, h) = plot::DEFAULT_SIZE;
    built.chart = built
        .chart
        .with_size(spec.width.unwrap_or(w), spec.height.unwrap_or(h));
    Ok(built)
}

/// Final states over the chosen runs (seeds summed), one bar group per series.
fn outcomes(ctx: &Ctx, m: &Manifest) -> Result<Built, SweepError> {
    let (spec, table) = (ctx.spec, ctx.table);
    let (x_axis, y_axis) = ctx.axes();
    let rows: Vec<usize> = (0..table.rows.len())
        .filter(|&r| spec.keeps(&m.points[r]) && !table.states[r].is_empty())
        .collect();
    if rows.is_empty() {
        return Err(ctx.err("no litmus results among the chosen runs".into()));
    }
    let mut states: Vec<(String, bool)> = Vec::new();
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut counts: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for &r in &rows {
        let k = position(&mut keys, ctx.series_of(r));
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
    let mut header: Vec<String> = vec!["final state".into()];
    header.extend(spec.series.iter().cloned());
    header.extend(["witness".to_string(), "runs".to_string()]);
    let mut data = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        for (i, (st, w)) in states.iter().enumerate() {
            let mut row = vec![st.clone()];
            row.extend(key.iter().cloned());
            row.extend([if *w { "yes" } else { "no" }.to_string(), fmt(count(k, i))]);
            data.push(row);
        }
    }
    let chart = if spec.series.is_empty() {
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
                    ctx.series_name(key),
                    (0..states.len()).map(|i| count(k, i)).collect(),
                )
            })
            .collect();
        Chart::bars(&spec.title, x_axis, y_axis, cats, bars, BarLayout::Grouped)
    };
    Ok(Built {
        chart,
        data: DataTable { header, rows: data },
        warnings: vec![],
    })
}

/// Lines (runs at one x averaged) and scatter plots (every run a point).
fn lines(ctx: &Ctx) -> Result<Built, SweepError> {
    let spec = ctx.spec;
    let (x_axis, y_axis) = ctx.axes();
    let y = ctx.parse(spec.y.as_deref().unwrap_or_default())?;
    let x = ctx.parse(&spec.x)?;
    // series key → x → values
    let mut keys: Vec<Vec<String>> = Vec::new();
    let mut groups: Vec<Vec<(f64, Vec<f64>)>> = Vec::new();
    let mut cover: Vec<Coverage> = Vec::new();
    for &r in &ctx.rows {
        let k = position(&mut keys, ctx.series_of(r));
        if groups.len() <= k {
            groups.push(Vec::new());
            cover.push(Coverage::default());
        }
        cover[k].runs += 1;
        let (Some(xv), Some(yv)) = (x.eval(&ctx.num(r)), y.eval(&ctx.num(r))) else {
            for c in ctx.lacks(&[&x, &y], r) {
                if !cover[k].missing.contains(&c) {
                    cover[k].missing.push(c);
                }
            }
            continue;
        };
        cover[k].drawn += 1;
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
    let mut header: Vec<String> = spec.series.clone();
    header.extend([
        x_axis.label.clone(),
        format!("{} (mean)", y_axis.label),
        "min".into(),
        "max".into(),
        "runs".into(),
    ]);
    let mut data = Vec::new();
    let mut series = Vec::new();
    for (key, g) in keys.iter().zip(&groups) {
        if g.is_empty() {
            continue; // named by a warning
        }
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
        let s = Series::new(ctx.series_name(key), pts);
        let varies = spread.iter().any(|(lo, hi)| lo != hi);
        series.push(if varies && spec.kind == ChartKind::Line {
            s.with_spread(spread)
        } else {
            s
        });
    }
    let chart = if spec.kind == ChartKind::Line {
        Chart::lines(&spec.title, x_axis, y_axis, series)
    } else {
        Chart::scatter(&spec.title, x_axis, y_axis, series, spec.identity)
    };
    Ok(Built {
        chart,
        data: DataTable { header, rows: data },
        warnings: ctx.warnings(&keys, &cover),
    })
}

/// The layers of a bar or headline: `layers`, or `y` alone.
fn layers(ctx: &Ctx) -> Result<Vec<(String, Expr)>, SweepError> {
    let spec = ctx.spec;
    if spec.layers.is_empty() {
        Ok(vec![(
            String::new(),
            ctx.parse(spec.y.as_deref().unwrap_or_default())?,
        )])
    } else {
        spec.layers
            .iter()
            .map(|l| Ok((l.name.clone(), ctx.parse(&l.y)?)))
            .collect()
    }
}

fn mean_of(cells: &BTreeMap<(usize, usize, usize), Vec<f64>>, at: (usize, usize, usize)) -> f64 {
    cells.get(&at).map(|v| summarise(v).0).unwrap_or(f64::NAN)
}

/// Bars: x as categories, grouped by series, or stacked layers.
fn bars(ctx: &Ctx) -> Result<Built, SweepError> {
    let spec = ctx.spec;
    let (x_axis, y_axis) = ctx.axes();
    let layers = layers(ctx)?;
    let (cats, keys, cells, cover) = ctx.cells(&layers);
    let mean = |c: usize, k: usize, li: usize| mean_of(&cells, (c, k, li));
    let mut header: Vec<String> = vec![x_axis.label.clone()];
    header.extend(spec.series.iter().cloned());
    let bars: Vec<BarSeries> = if spec.layers.is_empty() {
        header.push(format!("{} (mean)", y_axis.label));
        (0..keys.len())
            .filter(|&k| cover[k].drawn > 0)
            .map(|k| {
                BarSeries::new(
                    ctx.series_name(&keys[k]),
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
    let mut data = Vec::new();
    for (c, cat) in cats.iter().enumerate() {
        for (k, key) in keys.iter().enumerate() {
            if cover[k].drawn == 0 {
                continue;
            }
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
    let shown: Vec<String> = cats.iter().map(|c| ctx.label(&spec.x, c)).collect();
    if bars.is_empty() || cats.is_empty() {
        let w = ctx.warnings(&keys, &cover);
        return Err(ctx.err(format!(
            "no run has every column the chart needs{}",
            w.first().map(|w| format!(" ({w})")).unwrap_or_default()
        )));
    }
    Ok(Built {
        chart: Chart::bars(&spec.title, x_axis, y_axis, shown, bars, layout),
        data: DataTable { header, rows: data },
        warnings: ctx.warnings(&keys, &cover),
    })
}

/// A headline table: `y` averaged over seeds, one row per value of `x`, one column per series, the
/// unit in the caption; and warnings for runs left out.
pub fn headline(
    spec: &ChartSpec,
    m: &Manifest,
    table: &Table,
) -> Result<(String, DataTable, Vec<String>), SweepError> {
    let ctx = Ctx {
        spec,
        table,
        rows: (0..table.rows.len())
            .filter(|&r| {
                table.get(r, "status") == Some(&Value::Str("ok".into())) && spec.keeps(&m.points[r])
            })
            .collect(),
    };
    let (x_axis, y_axis) = ctx.axes();
    let layers = layers(&ctx)?;
    let (cats, keys, cells, cover) = ctx.cells(&layers);
    // Columns: one per layer, or one per series key that has runs.
    let columns: Vec<(usize, usize, String)> = if spec.layers.is_empty() {
        (0..keys.len())
            .filter(|&k| cover[k].drawn > 0)
            .map(|k| {
                let name = ctx.series_name(&keys[k]);
                (
                    k,
                    0,
                    if name.is_empty() {
                        y_axis.label.clone()
                    } else {
                        name
                    },
                )
            })
            .collect()
    } else {
        layers
            .iter()
            .enumerate()
            .map(|(li, (n, _))| (0, li, n.clone()))
            .collect()
    };
    let mut header = vec![x_axis.label.clone()];
    header.extend(columns.iter().map(|(_, _, n)| n.clone()));
    let rows = cats
        .iter()
        .enumerate()
        .map(|(c, cat)| {
            let mut row = vec![ctx.label(&spec.x, cat)];
            row.extend(
                columns
                    .iter()
                    .map(|&(k, li, _)| significant(mean_of(&cells, (c, k, li)))),
            );
            row
        })
        .collect();
    let caption = Axis {
        label: spec.title.clone(),
        ..y_axis
    }
    .title();
    Ok((
        caption,
        DataTable { header, rows },
        ctx.warnings(&keys, &cover),
    ))
}

#[cfg(test)]
mod tests {
    use super::{fmt, significant};

    #[test]
    fn table_numbers_keep_four_decimals_at_most() {
        assert_eq!(fmt(1.0), "1");
        assert_eq!(fmt(0.123456), "0.1235");
        assert_eq!(fmt(1234.6), "1235");
        assert_eq!(significant(56.2578), "56.26");
        assert_eq!(significant(0.376612), "0.3766");
        assert_eq!(significant(1805.6), "1806");
        assert_eq!(significant(3.0), "3");
        assert_eq!(fmt(f64::NAN), "");
    }
}
