//! Charts: one description ([`Chart`]), rendered by plotters to PNG and to SVG.
//!
//! What it draws: line charts (one [`Series`] per swept value, optional min–max spread bars), scatter
//! charts with an optional y = x reference line (simulated against measured), grouped and stacked bar
//! charts over named categories (latency breakdowns, litmus outcome counts), and histograms. Axes carry
//! a label and a unit (not repeated when the label already names it), and are linear or logarithmic;
//! every chart with named series has a legend, beside the plot when it fits there and otherwise below
//! it, sized to its text so that it never hides data and is never cut off (a legend below adds its
//! height to the canvas). Bars carry their values when the labels fit; on a log axis bars start a
//! decade below the smallest one, so that no bar shrinks to a sliver. A chart whose every value is 0
//! says so across the plot; values a log axis cannot show are counted in a note under it.
//!
//! Files: this one holds the description and the planning (ranges, what can be shown); `ticks.rs` the
//! axis coordinates and tick text; `draw.rs` the layout and the drawing.
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
//! use gpumemsim_report::plot::{Axis, Chart, Series};
//! let chart = Chart::lines(
//!     "Atomic contention",
//!     Axis::log("contending threads", "threads"),
//!     Axis::log("cycles per atomic", "cycles"),
//!     vec![Series::new("1 address", vec![(1.0, 20.0), (32.0, 40.0), (1024.0, 900.0)])],
//! );
//! let files = chart.save(std::path::Path::new("out"), "contention")?; // out/contention.{png,svg}
//! # Ok::<(), gpumemsim_report::plot::PlotError>(())
//! ```

use super::draw::{self, Layout};
use super::svg::SvgCanvas;
pub use super::ticks::format_tick;
use super::ticks::Coord;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
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
    /// The axis caption: `label (unit)`; just the label when it already names the unit (`L2 slices`
    /// in slices, `runs (3 seeds)` in runs), and `label [unit]` when the label ends in parentheses.
    pub fn title(&self) -> String {
        let unit = self.unit.trim();
        if unit.is_empty() || names_unit(&self.label, unit) {
            self.label.clone()
        } else if self.label.trim_end().ends_with(')') {
            format!("{} [{unit}]", self.label)
        } else {
            format!("{} ({unit})", self.label)
        }
    }
}

/// Whether the words of `unit` appear, in order and together, among the words of `label`
/// (case-insensitive; words are split at anything but letters, digits and `-`).
fn names_unit(label: &str, unit: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (l, u) = (words(label), words(unit));
    !u.is_empty() && l.windows(u.len()).any(|w| w == u.as_slice())
}

/// A named line or point set. `spread`, when given, holds one `(low, high)` per point, drawn as a
/// vertical bar (e.g. the range over seeds around their mean). `mark`, when given, sets its colour
/// and marker and whether they are open (default: the series' own colour and marker, filled).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub spread: Option<Vec<(f64, f64)>>,
    pub mark: Option<Mark>,
}

/// How a series is drawn: colour and marker shape number `colour`; `open` draws the markers as
/// outlines and the line dashed. Two series of one colour, filled and open, pair two views of one
/// case (measured and simulated) without a colour per view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub colour: usize,
    pub open: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            spread: None,
            mark: None,
        }
    }
    /// Drawn in colour and marker `colour`, filled or `open` (see [`Mark`]).
    pub fn with_mark(mut self, colour: usize, open: bool) -> Series {
        self.mark = Some(Mark { colour, open });
        self
    }
    /// How series number `i` of its chart is drawn.
    pub(super) fn mark_at(&self, i: usize) -> Mark {
        self.mark.unwrap_or(Mark {
            colour: i,
            open: false,
        })
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
    /// Pixels (PNG) or user units (SVG); a legend below the plot adds its height
    /// ([`Chart::rendered_size`]).
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

/// Smallest canvas a chart accepts.
pub const MIN_SIZE: (u32, u32) = (300, 200);

/// Largest width or height a chart accepts, pixels: a bitmap of 10,000 × 10,000 is 300 MB, and a
/// bigger one is a typing slip rather than a chart.
pub const MAX_SIZE: u32 = 10_000;

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

    /// The canvas size of the files: [`Chart::size`], taller by the legend when it goes below the plot.
    pub fn rendered_size(&self) -> Result<(u32, u32), PlotError> {
        Ok(self.plan()?.layout.canvas)
    }

    pub fn to_png(&self) -> Result<Vec<u8>, PlotError> {
        let plan = self.plan()?;
        let (w, h) = plan.layout.canvas;
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
        let mut canvas = SvgCanvas::new(plan.layout.canvas, &self.title);
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

    pub(super) fn draw_err(&self, e: impl std::fmt::Display) -> PlotError {
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
// Planning: validate the description, drop what an axis cannot show, fit ranges and ticks, lay out.

/// What `draw` needs beyond the description: fitted coordinates, the legend and the layout.
pub(super) struct Plan {
    pub x: Coord,
    pub y: Coord,
    pub legend: Vec<LegendEntry>,
    /// Category labels (bar charts).
    pub categories: Vec<String>,
    /// The canvas and where the legend goes.
    pub layout: Layout,
    /// Said across the plot: there is nothing to draw because every value is 0.
    pub empty: Option<String>,
    /// Said under the plot: values the axes cannot show.
    pub notes: Vec<String>,
}

pub(super) struct LegendEntry {
    pub name: String,
    pub look: Look,
}

#[derive(Clone, Copy)]
pub(super) enum Look {
    /// A series: its colour and marker, filled or open.
    Line(Mark),
    Swatch(usize),
    Identity,
}

fn extent(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

pub(super) fn shows(scale: Scale, v: f64) -> bool {
    v.is_finite() && (scale == Scale::Linear || v > 0.0)
}

/// The y axis of a chart whose every value is 0: 0 to 1 on a linear scale.
fn zero_axis() -> Coord {
    Coord::fit(Scale::Linear, (0.0, 1.0), Some((0.0, 1.0)), false)
}

/// "3 of 40 points": how many values an axis left out.
fn left_out(hidden: usize, of: usize, what: &str, axes: &str) -> Option<String> {
    (hidden > 0)
        .then(|| format!("{hidden} of {of} {what} with values ≤ 0 are not shown (log {axes})"))
}

impl Chart {
    fn plan(&self) -> Result<Plan, PlotError> {
        // Both renderers start here: make sure plotters knows the embedded fonts.
        super::svg::fonts();
        let (w, h) = self.size;
        if w < MIN_SIZE.0 || h < MIN_SIZE.1 {
            return Err(self.data_err(format!(
                "size {w}x{h} is too small (at least {}x{})",
                MIN_SIZE.0, MIN_SIZE.1
            )));
        }
        if w > MAX_SIZE || h > MAX_SIZE {
            return Err(self.data_err(format!(
                "size {w}x{h} is too large (at most {MAX_SIZE}x{MAX_SIZE})"
            )));
        }
        let (xs, ys) = (self.x.scale, self.y.scale);
        let visible = |p: &(f64, f64)| shows(xs, p.0) && shows(ys, p.1);
        let (x, y, legend, categories, empty, notes) = match &self.body {
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
                let all = || series.iter().flat_map(|s| s.points.iter());
                let finite: Vec<&(f64, f64)> = all()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                let pts = || all().filter(|p| visible(p));
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
                let all_zero = !finite.is_empty() && finite.iter().all(|p| p.1 == 0.0);
                let named = series.iter().filter(|s| !s.name.is_empty()).count() > 0;
                let mut legend: Vec<LegendEntry> = if named {
                    series
                        .iter()
                        .enumerate()
                        .map(|(i, s)| LegendEntry {
                            name: s.name.clone(),
                            look: Look::Line(s.mark_at(i)),
                        })
                        .collect()
                } else {
                    vec![]
                };
                let xe = extent(
                    finite
                        .iter()
                        .filter(|p| shows(xs, p.0) && (all_zero || shows(ys, p.1)))
                        .map(|p| p.0),
                )
                .ok_or_else(no_data)?;
                let mut notes = Vec::new();
                let lines = matches!(self.body, Body::Lines(_));
                let line_x = || {
                    let mut x = Coord::fit(xs, xe, self.x.range, false);
                    // A swept parameter with a few values on a log axis (25, 50, 100, 200, 400
                    // slices) reads best with a tick at each value rather than at 1-2-5 steps.
                    let mut vals: Vec<f64> = finite
                        .iter()
                        .filter(|p| shows(xs, p.0))
                        .map(|p| p.0)
                        .collect();
                    vals.sort_by(f64::total_cmp);
                    vals.dedup();
                    if lines && xs == Scale::Log && (2..=8).contains(&vals.len()) {
                        x.major = vals;
                    }
                    x
                };
                let (x, y) = if all_zero {
                    (line_x(), zero_axis())
                } else if let Body::Scatter {
                    identity_line: true,
                    ..
                } = self.body
                {
                    let ye = extent(pts().map(|p| p.1).chain(spread())).ok_or_else(no_data)?;
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
                    let ye = extent(pts().map(|p| p.1).chain(spread())).ok_or_else(no_data)?;
                    (line_x(), Coord::fit(ys, ye, self.y.range, lines))
                };
                let empty = all_zero.then(|| format!("Every value is 0 ({} points)", finite.len()));
                if !all_zero {
                    let axes = match (xs, ys) {
                        (Scale::Log, Scale::Log) => "axes",
                        _ => "axis",
                    };
                    notes.extend(left_out(
                        finite.len() - pts().count(),
                        finite.len(),
                        "points",
                        axes,
                    ));
                }
                (x, y, legend, vec![], empty, notes)
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
                let finite: Vec<f64> = series
                    .iter()
                    .flat_map(|s| s.values.iter().copied())
                    .filter(|v| v.is_finite())
                    .collect();
                let all_zero = !finite.is_empty() && finite.iter().all(|v| *v == 0.0);
                let vals: Vec<f64> = match layout {
                    BarLayout::Grouped => {
                        finite.iter().copied().filter(|v| shows(ys, *v)).collect()
                    }
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
                let y = if all_zero {
                    zero_axis()
                } else {
                    let (lo, hi) = extent(vals.into_iter())
                        .ok_or_else(|| self.data_err("no bar value the y axis can show"))?;
                    // Room above the tallest bar for its value. Bars grow from zero on a linear axis;
                    // on a log axis from a decade below the smallest, which so keeps a visible height.
                    let ye = match ys {
                        Scale::Linear => (lo.min(0.0), hi.max(0.0) * 1.08),
                        Scale::Log => (10f64.powf(lo.log10().floor() - 1.0), hi * 1.8),
                    };
                    Coord::fit(ys, ye, self.y.range, false)
                };
                let named = series.len() > 1 || !series[0].name.is_empty();
                let mut legend: Vec<LegendEntry> = if named {
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
                };
                // A stack's legend reads top down, as the stack does.
                if *layout == BarLayout::Stacked {
                    legend.reverse();
                }
                let empty = all_zero.then(|| format!("Every value is 0 ({} bars)", finite.len()));
                (
                    Coord::categories(categories.len()),
                    y,
                    legend,
                    categories.clone(),
                    empty,
                    vec![],
                )
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
                (
                    Coord::fit(xs, xe, self.x.range, false),
                    Coord::fit(ys, ye, self.y.range, false),
                    vec![],
                    vec![],
                    None,
                    vec![],
                )
            }
        };
        let layout = draw::layout(&legend, self.size);
        let (cw, ch) = layout.canvas;
        if cw as u64 * ch as u64 > MAX_SIZE as u64 * MAX_SIZE as u64 {
            return Err(self.data_err(format!(
                "a legend of {} entries below the plot makes the canvas {cw}x{ch}, more pixels \
                 than {MAX_SIZE}x{MAX_SIZE}: draw fewer series",
                legend.len()
            )));
        }
        Ok(Plan {
            x,
            y,
            legend,
            categories,
            layout,
            empty,
            notes,
        })
    }
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
