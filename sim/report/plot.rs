//! Charts: one description ([`Chart`]), rendered by plotters to PNG and to SVG.
//!
//! What it draws: line charts (one [`Series`] per swept value, optional min–max spread bars), scatter
//! charts with an optional y = x reference line (simulated against measured), grouped and stacked bar
//! charts over named categories (latency breakdowns, litmus outcome counts), and histograms. Axes carry
//! a label and a unit, and are linear or logarithmic; every chart with named series has a legend, drawn
//! beside the plot so that it never hides data.
//!
//! Fonts: DejaVu Sans is compiled in (`dejavu` crate) and registered with plotters' `ab_glyph` text
//! backend before the first chart, so rendering needs no system font; the SVG draws glyph outlines
//! (see [`super::svg`]), so it needs none either.
//!
//! Deliberately not here: anything about where the numbers come from (the sweep and compare commands
//! build `Chart`s), interactive output, colour maps and 3-D charts.
//!
//! # API (stable; later changes are additive)
//! ```no_run
//! use gpumemsim::report::plot::{Axis, Chart, Series};
//! let chart = Chart::lines(
//!     "Atomic contention",
//!     Axis::log("contending threads", "threads"),
//!     Axis::log("cycles per atomic", "cycles"),
//!     vec![Series::new("1 address", vec![(1.0, 20.0), (32.0, 40.0), (1024.0, 900.0)])],
//! );
//! let files = chart.save(std::path::Path::new("out"), "contention")?; // out/contention.{png,svg}
//! # Ok::<(), gpumemsim::report::plot::PlotError>(())
//! ```

use super::svg::{SvgCanvas, FAMILY};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    /// Base-10 logarithmic; values ≤ 0 cannot be placed and are left out of the chart.
    Log,
}

/// An axis: what it shows, in which unit, on which scale; the range is fitted to the data unless given.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    /// Shown in parentheses after the label; empty for dimensionless quantities.
    pub unit: String,
    pub scale: Scale,
    /// Fixed `(low, high)` instead of the fitted range.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    pub fn linear(label: impl Into<String>, unit: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            unit: unit.into(),
            scale: Scale::Linear,
            range: None,
        }
    }
    pub fn log(label: impl Into<String>, unit: impl Into<String>) -> Axis {
        Axis {
            scale: Scale::Log,
            ..Axis::linear(label, unit)
        }
    }
    pub fn with_range(mut self, low: f64, high: f64) -> Axis {
        self.range = Some((low, high));
        self
    }
    /// The axis caption: `label (unit)`.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.label.clone()
        } else {
            format!("{} ({})", self.label, self.unit)
        }
    }
}

/// A named line or point set. `spread`, when given, holds one `(low, high)` per point, drawn as a
/// vertical bar (e.g. the range over seeds around their mean).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub spread: Option<Vec<(f64, f64)>>,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            spread: None,
        }
    }
    pub fn with_spread(mut self, spread: Vec<(f64, f64)>) -> Series {
        self.spread = Some(spread);
        self
    }
}

/// One value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<f64>,
}

impl BarSeries {
    pub fn new(name: impl Into<String>, values: Vec<f64>) -> BarSeries {
        BarSeries {
            name: name.into(),
            values,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarLayout {
    /// Series side by side within each category.
    Grouped,
    /// Series on top of each other (parts of a whole, e.g. a latency breakdown).
    Stacked,
}

/// One histogram bin `[lo, hi)` with its count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub count: f64,
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Lines(Vec<Series>),
    Scatter {
        series: Vec<Series>,
        /// Draw y = x over the common range (both axes then share one range).
        identity_line: bool,
    },
    Bars {
        categories: Vec<String>,
        series: Vec<BarSeries>,
        layout: BarLayout,
    },
    Histogram(Vec<Bin>),
}

/// A complete chart description; render it with [`Chart::render`] or [`Chart::save`].
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub body: Body,
    /// Pixels (PNG) or user units (SVG).
    pub size: (u32, u32),
}

/// Output format, chosen by the caller or by a file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// `.png` or `.svg` (case-insensitive); anything else is `None`.
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "png" => Some(Format::Png),
            "svg" => Some(Format::Svg),
            _ => None,
        }
    }
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

#[derive(Debug, Error)]
pub enum PlotError {
    /// The description cannot be drawn (no data, mismatched lengths, log axis without positive values).
    #[error("chart \"{chart}\": {message}")]
    Data { chart: String, message: String },
    #[error("chart \"{chart}\": drawing failed: {message}")]
    Draw { chart: String, message: String },
    #[error("{path}: cannot write: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unknown chart format (allowed extensions: .png, .svg)")]
    Format { path: String },
}

/// The two files [`Chart::save`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedChart {
    pub png: PathBuf,
    pub svg: PathBuf,
}

/// Default canvas size, pixels.
pub const DEFAULT_SIZE: (u32, u32) = (900, 560);

impl Chart {
    fn new(title: impl Into<String>, x: Axis, y: Axis, body: Body) -> Chart {
        Chart {
            title: title.into(),
            x,
            y,
            body,
            size: DEFAULT_SIZE,
        }
    }

    /// A line chart: one line with markers per series.
    pub fn lines(title: impl Into<String>, x: Axis, y: Axis, series: Vec<Series>) -> Chart {
        Chart::new(title, x, y, Body::Lines(series))
    }

    /// A scatter chart; with `identity_line`, a dashed y = x line over the shared range of both axes.
    pub fn scatter(
        title: impl Into<String>,
        x: Axis,
        y: Axis,
        series: Vec<Series>,
        identity_line: bool,
    ) -> Chart {
        Chart::new(
            title,
            x,
            y,
            Body::Scatter {
                series,
                identity_line,
            },
        )
    }

    /// Bars over named categories; `x` only supplies the axis caption.
    pub fn bars(
        title: impl Into<String>,
        x: Axis,
        y: Axis,
        categories: Vec<String>,
        series: Vec<BarSeries>,
        layout: BarLayout,
    ) -> Chart {
        Chart::new(
            title,
            x,
            y,
            Body::Bars {
                categories,
                series,
                layout,
            },
        )
    }

    /// A histogram of `values` in `bins` equal-width bins (equal in log space on a log `x` axis); the
    /// y axis counts values. Non-finite values (and non-positive ones on a log axis) are left out.
    pub fn histogram(
        title: impl Into<String>,
        x: Axis,
        values: &[f64],
        bins: usize,
    ) -> Result<Chart, PlotError> {
        let title = title.into();
        let log = x.scale == Scale::Log;
        let used: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let err = |m: &str| PlotError::Data {
            chart: title.clone(),
            message: m.to_string(),
        };
        if bins == 0 {
            return Err(err("a histogram needs at least one bin"));
        }
        let (lo, hi) = extent(used.iter().copied()).ok_or_else(|| err("no values to count"))?;
        let t = |v: f64| if log { v.ln() } else { v };
        let u = |v: f64| if log { v.exp() } else { v };
        let (tl, th) = if lo == hi {
            (t(lo) - 0.5, t(hi) + 0.5)
        } else {
            (t(lo), t(hi))
        };
        let w = (th - tl) / bins as f64;
        let mut out: Vec<Bin> = (0..bins)
            .map(|i| Bin {
                lo: u(tl + w * i as f64),
                hi: u(tl + w * (i + 1) as f64),
                count: 0.0,
            })
            .collect();
        for v in used {
            let i = (((t(v) - tl) / w) as usize).min(bins - 1);
            out[i].count += 1.0;
        }
        Ok(Chart::new(
            title,
            x,
            Axis::linear("count", ""),
            Body::Histogram(out),
        ))
    }

    pub fn with_size(mut self, width: u32, height: u32) -> Chart {
        self.size = (width, height);
        self
    }

    /// Renders to `format`: PNG bytes, or an SVG document as UTF-8 bytes.
    pub fn render(&self, format: Format) -> Result<Vec<u8>, PlotError> {
        match format {
            Format::Png => self.to_png(),
            Format::Svg => self.to_svg().map(String::into_bytes),
        }
    }

    pub fn to_png(&self) -> Result<Vec<u8>, PlotError> {
        let plan = self.plan()?;
        let (w, h) = self.size;
        let mut rgb = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            self.draw(&root, &plan).map_err(|e| self.draw_err(e))?;
            root.present().map_err(|e| self.draw_err(e))?;
        }
        let mut png_bytes = Vec::new();
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Charts are mostly flat colour: the best zlib level with adaptive filtering halves the files.
        enc.set_compression(png::Compression::Best);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        enc.write_header()
            .and_then(|mut wr| wr.write_image_data(&rgb))
            .map_err(|e| self.draw_err(e))?;
        Ok(png_bytes)
    }

    pub fn to_svg(&self) -> Result<String, PlotError> {
        let plan = self.plan()?;
        let mut canvas = SvgCanvas::new(self.size, &self.title);
        {
            let root = (&mut canvas).into_drawing_area();
            self.draw(&root, &plan).map_err(|e| self.draw_err(e))?;
            root.present().map_err(|e| self.draw_err(e))?;
        }
        Ok(canvas.finish())
    }

    /// Writes `dir/stem.png` and `dir/stem.svg`, each atomically.
    pub fn save(&self, dir: &Path, stem: &str) -> Result<SavedChart, PlotError> {
        let saved = SavedChart {
            png: dir.join(format!("{stem}.png")),
            svg: dir.join(format!("{stem}.svg")),
        };
        self.save_as(&saved.png)?;
        self.save_as(&saved.svg)?;
        Ok(saved)
    }

    /// Writes one file atomically, in the format its extension names.
    pub fn save_as(&self, path: &Path) -> Result<(), PlotError> {
        let format = Format::from_path(path).ok_or_else(|| PlotError::Format {
            path: path.display().to_string(),
        })?;
        let bytes = self.render(format)?;
        crate::stats::write_atomic(path, &bytes).map_err(|source| PlotError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    fn draw_err(&self, e: impl std::fmt::Display) -> PlotError {
        PlotError::Draw {
            chart: self.title.clone(),
            message: e.to_string(),
        }
    }

    fn data_err(&self, message: impl Into<String>) -> PlotError {
        PlotError::Data {
            chart: self.title.clone(),
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Planning: validate the description, drop what an axis cannot show, fit ranges and ticks.

/// What `draw` needs beyond the description: fitted coordinates and the legend.
struct Plan {
    x: Coord,
    y: Coord,
    legend: Vec<LegendEntry>,
    /// Category labels (bar charts).
    categories: Vec<String>,
}

struct LegendEntry {
    name: String,
    look: Look,
}

#[derive(Clone, Copy)]
enum Look {
    /// Series `i`: colour and marker `i`.
    Line(usize),
    Swatch(usize),
    Identity,
}

fn extent(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

fn shows(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

impl Chart {
    fn plan(&self) -> Result<Plan, PlotError> {
        // Both renderers start here: make sure plotters knows the embedded fonts.
        super::svg::fonts();
        let (w, h) = self.size;
        if w < 200 || h < 150 {
            return Err(self.data_err(format!("size {w}x{h} is too small (at least 200x150)")));
        }
        let (xs, ys) = (self.x.scale, self.y.scale);
        let visible = |p: &(f64, f64)| shows(xs, p.0) && shows(ys, p.1);
        match &self.body {
            Body::Lines(series)
            | Body::Scatter {
                series,
                identity_line: _,
            } => {
                for s in series {
                    if let Some(sp) = &s.spread {
                        if sp.len() != s.points.len() {
                            return Err(self.data_err(format!(
                                "series \"{}\": {} spreads for {} points",
                                s.name,
                                sp.len(),
                                s.points.len()
                            )));
                        }
                    }
                }
                let pts = || {
                    series
                        .iter()
                        .flat_map(|s| s.points.iter())
                        .filter(|p| visible(p))
                };
                let spread = || {
                    series
                        .iter()
                        .filter_map(|s| s.spread.as_ref())
                        .flat_map(|sp| {
                            sp.iter()
                                .flat_map(|&(a, b)| [a, b])
                                .filter(|v| shows(ys, *v))
                        })
                };
                let no_data = || {
                    self.data_err(match (xs, ys) {
                        (Scale::Linear, Scale::Linear) => "no finite points to draw".to_string(),
                        _ => "no finite points with positive values on the log axes".to_string(),
                    })
                };
                let xe = extent(pts().map(|p| p.0)).ok_or_else(no_data)?;
                let ye = extent(pts().map(|p| p.1).chain(spread())).ok_or_else(no_data)?;
                let named = series.iter().filter(|s| !s.name.is_empty()).count() > 0;
                let mut legend: Vec<LegendEntry> = if named {
                    series
                        .iter()
                        .enumerate()
                        .map(|(i, s)| LegendEntry {
                            name: s.name.clone(),
                            look: Look::Line(i),
                        })
                        .collect()
                } else {
                    vec![]
                };
                let (x, y) = if let Body::Scatter {
                    identity_line: true,
                    ..
                } = self.body
                {
                    if xs != ys {
                        return Err(self.data_err("a y = x line needs the same scale on both axes"));
                    }
                    legend.push(LegendEntry {
                        name: "y = x".into(),
                        look: Look::Identity,
                    });
                    let both = (xe.0.min(ye.0), xe.1.max(ye.1));
                    let r = self.x.range.or(self.y.range);
                    (
                        Coord::fit(xs, both, r, false),
                        Coord::fit(ys, both, r, false),
                    )
                } else {
                    let lines = matches!(self.body, Body::Lines(_));
                    let mut x = Coord::fit(xs, xe, self.x.range, false);
                    // A swept parameter with a few values on a log axis (25, 50, 100, 200, 400
                    // slices) reads best with a tick at each value rather than at 1-2-5 steps.
                    let mut vals: Vec<f64> = pts().map(|p| p.0).collect();
                    vals.sort_by(f64::total_cmp);
                    vals.dedup();
                    if lines && xs == Scale::Log && (2..=8).contains(&vals.len()) {
                        x.major = vals;
                    }
                    (x, Coord::fit(ys, ye, self.y.range, lines))
                };
                Ok(Plan {
                    x,
                    y,
                    legend,
                    categories: vec![],
                })
            }
            Body::Bars {
                categories,
                series,
                layout,
            } => {
                if categories.is_empty() || series.is_empty() {
                    return Err(self.data_err("a bar chart needs categories and series"));
                }
                for s in series {
                    if s.values.len() != categories.len() {
                        return Err(self.data_err(format!(
                            "series \"{}\" has {} values for {} categories",
                            s.name,
                            s.values.len(),
                            categories.len()
                        )));
                    }
                }
                let vals: Vec<f64> = match layout {
                    BarLayout::Grouped => series
                        .iter()
                        .flat_map(|s| s.values.iter().copied())
                        .filter(|v| shows(ys, *v))
                        .collect(),
                    BarLayout::Stacked => (0..categories.len())
                        .map(|i| {
                            series
                                .iter()
                                .map(|s| s.values[i])
                                .filter(|v| v.is_finite() && *v > 0.0)
                                .sum()
                        })
                        .filter(|v| shows(ys, *v))
                        .collect(),
                };
                let ye = extent(vals.into_iter())
                    .ok_or_else(|| self.data_err("no bar value the y axis can show"))?;
                // Bars grow from zero on a linear axis, so zero is always in range.
                let ye = match ys {
                    Scale::Linear => (ye.0.min(0.0), ye.1.max(0.0)),
                    Scale::Log => ye,
                };
                let named = series.len() > 1 || !series[0].name.is_empty();
                Ok(Plan {
                    x: Coord::categories(categories.len()),
                    y: Coord::fit(ys, ye, self.y.range, false),
                    legend: if named {
                        series
                            .iter()
                            .enumerate()
                            .map(|(i, s)| LegendEntry {
                                name: s.name.clone(),
                                look: Look::Swatch(i),
                            })
                            .collect()
                    } else {
                        vec![]
                    },
                    categories: categories.clone(),
                })
            }
            Body::Histogram(bins) => {
                let edges = bins
                    .iter()
                    .flat_map(|b| [b.lo, b.hi])
                    .filter(|v| shows(xs, *v));
                let xe = extent(edges).ok_or_else(|| self.data_err("no bins to draw"))?;
                let counts = bins.iter().map(|b| b.count).filter(|v| shows(ys, *v));
                let ye = extent(counts)
                    .map(|(lo, hi)| match ys {
                        Scale::Linear => (lo.min(0.0), hi),
                        Scale::Log => (lo, hi),
                    })
                    .ok_or_else(|| self.data_err("no count the y axis can show"))?;
                Ok(Plan {
                    x: Coord::fit(xs, xe, self.x.range, false),
                    y: Coord::fit(ys, ye, self.y.range, false),
                    legend: vec![],
                    categories: vec![],
                })
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// Coordinates with our own ticks: decades (and 2, 5 multiples over short spans) on log axes, 1-2-5
// steps on linear axes, category centres on bar charts.

#[derive(Clone)]
struct Coord {
    scale: Scale,
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Coord {
    fn categories(n: usize) -> Coord {
        Coord {
            scale: Scale::Linear,
            lo: 0.0,
            hi: n as f64,
            major: (0..n).map(|i| i as f64 + 0.5).collect(),
            minor: vec![],
        }
    }

    /// Fits a range around `(lo, hi)` (the data extent) or uses `fixed`. `zero_if_near` pulls a linear
    /// range of non-negative data down to zero when the data start below half their maximum, so that
    /// curves over a wide range are not magnified into a false slope.
    fn fit(
        scale: Scale,
        (lo, hi): (f64, f64),
        fixed: Option<(f64, f64)>,
        zero_if_near: bool,
    ) -> Coord {
        match scale {
            Scale::Linear => {
                let (mut lo, mut hi) = fixed.unwrap_or((lo, hi));
                if fixed.is_none() {
                    if zero_if_near && lo > 0.0 && lo <= 0.5 * hi {
                        lo = 0.0;
                    }
                    if lo == hi {
                        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                        lo -= d;
                        hi += d;
                    }
                    let pad = 0.03 * (hi - lo);
                    lo = if lo == 0.0 { 0.0 } else { lo - pad };
                    hi = if hi == 0.0 { 0.0 } else { hi + pad };
                }
                if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
                    hi = lo + 1.0;
                }
                let step = nice_step((hi - lo) / 6.0);
                if fixed.is_none() {
                    lo = (lo / step).floor() * step;
                    hi = (hi / step).ceil() * step;
                }
                let first = (lo / step).ceil() as i64;
                let last = (hi / step).floor() as i64;
                let major: Vec<f64> = (first..=last).map(|k| snap(k as f64 * step)).collect();
                let minor: Vec<f64> = (2 * first - 1..=2 * last + 1)
                    .map(|k| k as f64 * step / 2.0)
                    .filter(|v| *v >= lo && *v <= hi)
                    .collect();
                Coord {
                    scale,
                    lo,
                    hi,
                    major,
                    minor,
                }
            }
            Scale::Log => {
                let (mut lo, mut hi) = fixed.filter(|(a, b)| *a > 0.0 && b > a).unwrap_or((lo, hi));
                if fixed.is_none() {
                    // Snap outwards to 1, 2 or 5 times a power of ten: whole decades over wide ranges,
                    // without a decade of empty space around a narrow one.
                    let steps = |v: f64| {
                        let d = 10f64.powf(v.log10().floor());
                        [d, 2.0 * d, 5.0 * d, 10.0 * d]
                    };
                    lo = steps(lo)
                        .into_iter()
                        .rfind(|s| *s <= lo * (1.0 + 1e-9))
                        .unwrap_or(lo);
                    hi = steps(hi)
                        .into_iter()
                        .find(|s| *s >= hi * (1.0 - 1e-9))
                        .unwrap_or(hi);
                    if hi <= lo {
                        let both = steps(lo);
                        lo = if both[0] < lo { both[0] } else { lo / 2.0 };
                        hi = lo * 10.0;
                    }
                }
                let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
                let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
                let decades: Vec<f64> = (d0..=d1).map(|d| 10f64.powi(d)).filter(within).collect();
                let mult = |ms: &[f64]| -> Vec<f64> {
                    (d0..=d1)
                        .flat_map(|d| ms.iter().map(move |m| m * 10f64.powi(d)))
                        .filter(within)
                        .collect()
                };
                // Thin decades over very wide ranges; add 2 and 5 when only one or two decades show.
                let major = if decades.len() > 12 {
                    let k = decades.len().div_ceil(10);
                    decades.iter().copied().step_by(k).collect()
                } else if decades.len() <= 2 {
                    mult(&[1.0, 2.0, 5.0])
                } else {
                    decades
                };
                let minor = if (d1 - d0) <= 12 {
                    mult(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
                } else {
                    vec![]
                };
                Coord {
                    scale,
                    lo,
                    hi,
                    major,
                    minor,
                }
            }
        }
    }

    fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        }
    }
}

/// The 1, 2, 2.5 or 5 times a power of ten nearest to `raw` (a sixth of the span): five to eight ticks.
fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .min_by(|a, b| (raw / a).ln().abs().total_cmp(&(raw / b).ln().abs()))
        .unwrap_or(p)
}

/// Removes binary noise from k·step (0.30000000000000004 → 0.3).
fn snap(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 12 - v.abs().log10().floor() as i32;
    let f = 10f64.powi(digits.clamp(0, 300));
    (v * f).round() / f
}

impl Ranged for Coord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = self.fraction(*v);
        // Values far outside the range (or on a log axis, ≤ 0) are pinned just outside the plot.
        let f = if f.is_finite() {
            f.clamp(-0.5, 1.5)
        } else {
            -0.5
        };
        limit.0 + ((limit.1 - limit.0) as f64 * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.max_num_points() == 0 {
            return vec![];
        }
        match hint.weight() {
            KeyPointWeight::Bold => self.major.clone(),
            KeyPointWeight::Any => {
                let mut all: Vec<f64> = self.major.iter().chain(&self.minor).copied().collect();
                all.sort_by(f64::total_cmp);
                all.dedup();
                all
            }
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Compact tick text: `0`, `0.25`, `12`, `1500`, `65.5k`, `1.2M`, `1e-05`.
pub fn format_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e4 {
        let (d, s) = if a >= 1e12 {
            (1e12, "T")
        } else if a >= 1e9 {
            (1e9, "G")
        } else if a >= 1e6 {
            (1e6, "M")
        } else {
            (1e3, "k")
        };
        format!("{}{s}", trim(&format!("{:.2}", v / d)))
    } else if a >= 1e-3 {
        trim(&format!("{v:.3}"))
    } else {
        format!("{v:.0e}")
    }
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

// ---------------------------------------------------------------------------------------------------
// Drawing.

/// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), then a few more.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(110, 60, 160),
    RGBColor(0, 0, 0),
    RGBColor(150, 75, 0),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const TITLE_PX: u32 = 20;
const DESC_PX: u32 = 15;
const LABEL_PX: u32 = 13;
const LEGEND_PX: u32 = 13;
const LEGEND_ROW: i32 = 20;
/// Longest legend or category text shown; longer ones end in an ellipsis.
const MAX_TEXT: usize = 48;

fn font(px: u32) -> TextStyle<'static> {
    (FAMILY, px).into_font().color(&BLACK)
}

/// `s`, cut to `max` characters with an ellipsis.
fn shorten_to(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    } else {
        s.to_string()
    }
}

fn shorten(s: &str) -> String {
    shorten_to(s, MAX_TEXT)
}

/// Draws marker `i` (circle, square, triangle, diamond, cross — then again) at `p`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (i32, i32),
    i: usize,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = colour(i);
    let fill = ShapeStyle::from(&c).filled();
    let (x, y) = p;
    let r = 4;
    match (i / PALETTE.len() + i) % 5 {
        0 => area.draw(&Circle::new(p, r, fill)),
        1 => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], fill)),
        2 => area.draw(&Polygon::new(
            vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
            fill,
        )),
        3 => area.draw(&Polygon::new(
            vec![
                (x, y - r - 1),
                (x + r + 1, y),
                (x, y + r + 1),
                (x - r - 1, y),
            ],
            fill,
        )),
        _ => {
            let s = ShapeStyle::from(&c).stroke_width(2);
            area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))?;
            area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s))
        }
    }
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

impl Chart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        plan: &Plan,
    ) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let (w, h) = self.size;
        let title_style = TextStyle::from((FAMILY, TITLE_PX, FontStyle::Bold).into_font());
        let body = root.titled(&shorten_to(&self.title, 90), title_style)?;

        // Legend beside the plot: as wide as its longest entry, at most a third of the chart.
        let legend_w = if plan.legend.is_empty() {
            0
        } else {
            let widest = plan
                .legend
                .iter()
                .map(|e| root.estimate_text_size(&shorten(&e.name), &font(LEGEND_PX)))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|(tw, _)| tw)
                .max()
                .unwrap_or(0);
            (widest + 60).min(w / 3)
        };
        let (plot_area, legend_area) = body.split_horizontally(w - legend_w);

        // Label areas sized from the tick text they hold.
        let y_ticks: Vec<String> = plan.y.major.iter().map(|v| format_tick(*v)).collect();
        let y_tick_w = y_ticks
            .iter()
            .map(|t| root.estimate_text_size(t, &font(LABEL_PX)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|(tw, _)| tw)
            .max()
            .unwrap_or(0);
        let is_bars = !plan.categories.is_empty();
        let cats: Vec<String> = plan.categories.iter().map(|c| shorten(c)).collect();
        let cat_w = cats
            .iter()
            .map(|t| root.estimate_text_size(t, &font(LABEL_PX)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|(tw, _)| tw)
            .collect::<Vec<_>>();
        let plot_w = (w - legend_w).saturating_sub(y_tick_w + 60);
        // Category labels turn vertical when side by side they would not fit.
        let rotate = is_bars && cat_w.iter().map(|tw| tw + 12).sum::<u32>() > plot_w;
        let x_area = if rotate {
            cat_w.iter().copied().max().unwrap_or(0) + 16 + DESC_PX + 16
        } else {
            LABEL_PX + 14 + DESC_PX + 14
        };
        let x_area = x_area.min(h / 2);

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            // Room for the last x tick's text when no legend sits to the right.
            .margin_right(if legend_w == 0 { 28 } else { 12 })
            .x_label_area_size(x_area)
            .y_label_area_size(y_tick_w + 14 + DESC_PX + 14)
            .build_cartesian_2d(plan.x.clone(), plan.y.clone())?;

        let cat_fmt = |v: &f64| {
            let i = (v - 0.5).round();
            if rotate || i < 0.0 {
                String::new()
            } else {
                cats.get(i as usize).cloned().unwrap_or_default()
            }
        };
        let num_fmt = |v: &f64| format_tick(*v);
        {
            let mut mesh = chart.configure_mesh();
            mesh.x_desc(self.x.title())
                .y_desc(self.y.title())
                .label_style(font(LABEL_PX))
                .axis_desc_style(font(DESC_PX))
                .light_line_style(RGBColor(238, 238, 238))
                .bold_line_style(RGBColor(200, 200, 200))
                .x_labels(plan.x.major.len().max(1) + 1)
                .y_labels(plan.y.major.len().max(1) + 1)
                .y_label_formatter(&num_fmt);
            if is_bars {
                mesh.disable_x_mesh().x_label_formatter(&cat_fmt);
            } else {
                mesh.x_label_formatter(&num_fmt);
            }
            mesh.draw()?;
        }

        if rotate {
            // Read bottom to top, ending at the tick.
            let style = font(LABEL_PX)
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Right, VPos::Center));
            let y0 = plan.y.lo;
            for (i, c) in cats.iter().enumerate() {
                let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y0));
                root.draw_text(c, &style, (px, py + 8))?;
            }
        }

        let area = chart.plotting_area();
        let pixel = |x: f64, y: f64| chart.backend_coord(&(x, y));
        let root_area = root;
        match &self.body {
            Body::Lines(series) | Body::Scatter { series, .. } => {
                let lines = matches!(self.body, Body::Lines(_));
                if let Body::Scatter {
                    identity_line: true,
                    ..
                } = self.body
                {
                    let (lo, hi) = (plan.x.lo.max(plan.y.lo), plan.x.hi.min(plan.y.hi));
                    let (a, b) = (pixel(lo, lo), pixel(hi, hi));
                    dashed(root_area, a, b, &RGBColor(90, 90, 90))?;
                }
                for (i, s) in series.iter().enumerate() {
                    let c = colour(i);
                    let pts: Vec<(usize, (f64, f64))> = s
                        .points
                        .iter()
                        .copied()
                        .enumerate()
                        .filter(|(_, p)| shows(self.x.scale, p.0) && shows(self.y.scale, p.1))
                        .collect();
                    if let Some(spread) = &s.spread {
                        for &(k, (x, _)) in &pts {
                            let (lo, hi) = spread[k];
                            if shows(self.y.scale, lo) && shows(self.y.scale, hi) {
                                let (a, b) = (pixel(x, lo), pixel(x, hi));
                                let st = ShapeStyle::from(&c.mix(0.7)).stroke_width(1);
                                root_area.draw(&PathElement::new(vec![a, b], st))?;
                                for e in [a, b] {
                                    root_area.draw(&PathElement::new(
                                        vec![(e.0 - 3, e.1), (e.0 + 3, e.1)],
                                        st,
                                    ))?;
                                }
                            }
                        }
                    }
                    if lines {
                        let mut sorted: Vec<(f64, f64)> = pts.iter().map(|(_, p)| *p).collect();
                        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
                        area.draw(&PathElement::new(
                            sorted,
                            ShapeStyle::from(&c).stroke_width(2),
                        ))?;
                    }
                    for (_, (x, y)) in pts {
                        draw_marker(root_area, pixel(x, y), i)?;
                    }
                }
            }
            Body::Bars { series, layout, .. } => {
                let n = series.len() as f64;
                let base = match self.y.scale {
                    Scale::Linear => 0.0,
                    Scale::Log => plan.y.lo,
                };
                for k in 0..plan.categories.len() {
                    let mut top = base;
                    for (i, s) in series.iter().enumerate() {
                        let v = s.values[k];
                        let (x0, x1, y0, y1) = match layout {
                            BarLayout::Grouped => {
                                let bw = 0.8 / n;
                                let x0 = k as f64 + 0.1 + bw * i as f64;
                                (x0, x0 + bw, base, v)
                            }
                            BarLayout::Stacked => {
                                if !(v.is_finite() && v > 0.0) {
                                    continue;
                                }
                                let y0 = top;
                                top = if self.y.scale == Scale::Log && y0 == base {
                                    v
                                } else {
                                    y0 + v
                                };
                                (k as f64 + 0.15, k as f64 + 0.85, y0, top)
                            }
                        };
                        if !shows(self.y.scale, y1) {
                            continue;
                        }
                        area.draw(&Rectangle::new(
                            [(x0, y0), (x1, y1)],
                            ShapeStyle::from(&colour(i)).filled(),
                        ))?;
                        area.draw(&Rectangle::new([(x0, y0), (x1, y1)], WHITE.stroke_width(1)))?;
                    }
                }
            }
            Body::Histogram(bins) => {
                let base = match self.y.scale {
                    Scale::Linear => 0.0,
                    Scale::Log => plan.y.lo,
                };
                for b in bins {
                    if shows(self.x.scale, b.lo) && shows(self.y.scale, b.count) {
                        area.draw(&Rectangle::new(
                            [(b.lo, base), (b.hi, b.count)],
                            ShapeStyle::from(&colour(0)).filled(),
                        ))?;
                        area.draw(&Rectangle::new(
                            [(b.lo, base), (b.hi, b.count)],
                            WHITE.stroke_width(1),
                        ))?;
                    }
                }
            }
        }

        // The legend, top-aligned with the plot.
        for (r, e) in plan.legend.iter().enumerate() {
            let y = 24 + r as i32 * LEGEND_ROW;
            match e.look {
                Look::Line(i) => {
                    if matches!(self.body, Body::Lines(_)) {
                        legend_area.draw(&PathElement::new(
                            vec![(8, y), (36, y)],
                            ShapeStyle::from(&colour(i)).stroke_width(2),
                        ))?;
                    }
                    draw_marker(&legend_area, (22, y), i)?;
                }
                Look::Swatch(i) => {
                    legend_area.draw(&Rectangle::new(
                        [(12, y - 6), (32, y + 6)],
                        ShapeStyle::from(&colour(i)).filled(),
                    ))?;
                }
                Look::Identity => dashed(&legend_area, (8, y), (36, y), &RGBColor(90, 90, 90))?,
            }
            legend_area.draw_text(
                &shorten(&e.name),
                &font(LEGEND_PX).pos(Pos::new(HPos::Left, VPos::Center)),
                (44, y),
            )?;
        }
        Ok(())
    }
}

/// A dashed line in pixel coordinates of `area`.
fn dashed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    c: &RGBColor,
) -> DrawResult<DB> {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len = (dx * dx + dy * dy).sqrt();
    let (dash, gap) = (8.0, 5.0);
    let mut t = 0.0;
    while t < len {
        let e = (t + dash).min(len);
        let p = |s: f64| {
            (
                a.0 + (dx * s / len).round() as i32,
                a.1 + (dy * s / len).round() as i32,
            )
        };
        area.draw(&PathElement::new(
            vec![p(t), p(e)],
            ShapeStyle::from(c).stroke_width(2),
        ))?;
        t = e + gap;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_ticks_are_decades_inside_the_range() {
        let c = Coord::fit(Scale::Log, (1.0, 65536.0), None, false);
        assert_eq!((c.lo, c.hi), (1.0, 100000.0));
        assert_eq!(c.major, vec![1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]);
        let short = Coord::fit(Scale::Log, (64.0, 256.0), None, false);
        assert_eq!((short.lo, short.hi), (50.0, 500.0));
        assert_eq!(short.major, vec![50.0, 100.0, 200.0, 500.0]);
    }

    #[test]
    fn linear_axis_ticks_are_one_two_five_steps() {
        let c = Coord::fit(Scale::Linear, (0.0, 0.9), None, false);
        assert_eq!(c.major.first(), Some(&0.0));
        let steps: Vec<f64> = c.major.windows(2).map(|w| snap(w[1] - w[0])).collect();
        assert!(steps.iter().all(|s| *s == steps[0]));
        assert!([0.1, 0.2, 0.25, 0.5].contains(&steps[0]), "{steps:?}");
        assert!(c.hi >= 0.9);
    }

    #[test]
    fn tick_text_is_compact() {
        let got: Vec<String> = [0.0, 0.25, 12.0, 1500.0, 65536.0, 1.2e6, 1e-5]
            .iter()
            .map(|v| format_tick(*v))
            .collect();
        assert_eq!(got, ["0", "0.25", "12", "1500", "65.54k", "1.2M", "1e-5"]);
    }

    #[test]
    fn mismatched_bar_lengths_are_a_data_error() {
        let c = Chart::bars(
            "b",
            Axis::linear("x", ""),
            Axis::linear("y", ""),
            vec!["a".into(), "b".into()],
            vec![BarSeries::new("s", vec![1.0])],
            BarLayout::Grouped,
        );
        assert!(matches!(c.to_svg(), Err(PlotError::Data { .. })));
    }

    #[test]
    fn log_axis_without_positive_values_is_a_data_error() {
        let c = Chart::lines(
            "l",
            Axis::log("x", ""),
            Axis::log("y", ""),
            vec![Series::new("s", vec![(0.0, 1.0), (-1.0, 2.0)])],
        );
        let e = c.to_png().unwrap_err().to_string();
        assert!(e.contains("positive"), "{e}");
    }

    /// Every chart kind, as the sweep and compare commands use them.
    pub(crate) fn gallery() -> Vec<(&'static str, Chart)> {
        let threads: Vec<f64> = (0..=16).map(|k| 2f64.powi(k)).collect();
        let curve = |k: f64, c: f64| -> Vec<(f64, f64)> {
            threads
                .iter()
                .map(|&t| (t, c + (t / k).max(1.0) * 4.0))
                .collect()
        };
        vec![
            (
                "lines_log",
                Chart::lines(
                    "Atomic contention: cycles per atomic",
                    Axis::log("contending threads", "threads"),
                    Axis::log("cycles per atomic", "cycles"),
                    vec![
                        Series::new("1 address", curve(1.0, 300.0)),
                        Series::new("32 addresses", curve(32.0, 300.0)),
                        Series::new("T addresses", curve(1e9, 300.0)).with_spread(
                            curve(1e9, 300.0)
                                .iter()
                                .map(|p| (p.1 * 0.9, p.1 * 1.1))
                                .collect(),
                        ),
                    ],
                ),
            ),
            (
                "scatter_identity",
                Chart::scatter(
                    "Simulated vs measured",
                    Axis::log("measured", "ns"),
                    Axis::log("simulated", "ns"),
                    vec![
                        Series::new(
                            "contention",
                            vec![(100.0, 120.0), (1000.0, 900.0), (20000.0, 25000.0)],
                        ),
                        Series::new("histogram", vec![(300.0, 310.0), (5000.0, 4000.0)]),
                    ],
                    true,
                ),
            ),
            (
                "stacked",
                Chart::bars(
                    "Load latency breakdown",
                    Axis::linear("configuration", ""),
                    Axis::linear("mean latency", "cycles"),
                    vec![
                        "l2.slices=16".into(),
                        "l2.slices=32".into(),
                        "l2.slices=64".into(),
                    ],
                    vec![
                        BarSeries::new("L1", vec![20.0, 20.0, 20.0]),
                        BarSeries::new("interconnect", vec![40.0, 35.0, 30.0]),
                        BarSeries::new("L2", vec![150.0, 120.0, 100.0]),
                        BarSeries::new("DRAM", vec![300.0, 300.0, 290.0]),
                    ],
                    BarLayout::Stacked,
                ),
            ),
            (
                "outcomes",
                Chart::bars(
                    "MP outcomes (1000 runs)",
                    Axis::linear("outcome", ""),
                    Axis::log("count", "runs"),
                    (0..12)
                        .map(|i| format!("r0={} r1={} r2={}", i % 2, i / 2 % 2, i / 4))
                        .collect(),
                    vec![
                        BarSeries::new(
                            "allowed",
                            (0..12)
                                .map(|i| if i == 1 { 0.0 } else { 100.0 + i as f64 })
                                .collect(),
                        ),
                        BarSeries::new(
                            "forbidden",
                            (0..12).map(|i| if i == 1 { 3.0 } else { 0.0 }).collect(),
                        ),
                    ],
                    BarLayout::Stacked,
                ),
            ),
            (
                "grouped",
                Chart::bars(
                    "Throughput by slices",
                    Axis::linear("L2 slices", "slices"),
                    Axis::linear("throughput", "atomics/cycle"),
                    vec!["16".into(), "32".into(), "64".into()],
                    vec![
                        BarSeries::new("native", vec![1.0, 1.9, 3.5]),
                        BarSeries::new("CAS loop", vec![0.3, 0.5, 0.8]),
                    ],
                    BarLayout::Grouped,
                ),
            ),
            (
                "histogram",
                Chart::histogram(
                    "Latency distribution",
                    Axis::linear("latency", "cycles"),
                    &(0..500)
                        .map(|i| 200.0 + ((i * 37) % 101) as f64 * (i % 7) as f64)
                        .collect::<Vec<_>>(),
                    20,
                )
                .unwrap(),
            ),
        ]
    }

    #[test]
    fn every_chart_kind_renders_to_valid_png_and_svg() {
        let dir = std::env::var_os("GPUMEMSIM_PLOT_GALLERY").map(std::path::PathBuf::from);
        for (stem, chart) in gallery() {
            let png_bytes = chart.to_png().unwrap();
            let mut reader = png::Decoder::new(std::io::Cursor::new(&png_bytes[..]))
                .read_info()
                .unwrap();
            let mut buf = vec![0; reader.output_buffer_size()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!((info.width, info.height), chart.size, "{stem}");
            // Something besides the white background was drawn, text included.
            assert!(buf.iter().filter(|&&b| b < 128).count() > 2000, "{stem}");
            let svg_text = chart.to_svg().unwrap();
            let doc = roxmltree::Document::parse(&svg_text).unwrap();
            assert_eq!(doc.root_element().tag_name().name(), "svg", "{stem}");
            // Text is outlines, labelled: the title and both axis captions are there, no <text>.
            let labels: Vec<&str> = doc
                .descendants()
                .filter_map(|n| n.attribute("aria-label"))
                .collect();
            for want in [chart.title.as_str(), &chart.x.title(), &chart.y.title()] {
                assert!(labels.contains(&want), "{stem}: {want} not in {labels:?}");
            }
            assert!(!doc.descendants().any(|n| n.has_tag_name("text")), "{stem}");
            if let Some(d) = &dir {
                chart.save(d, stem).unwrap();
            }
        }
    }
}
