//! Laying out and drawing a planned chart with plotters, on any backend (bitmap for PNG, the outline
//! SVG canvas of `svg.rs`).
//!
//! Layout: the title on top (cut with an ellipsis only when wider than the canvas); the legend beside
//! the plot when its widest entry takes at most three eighths of the width and its rows fit the
//! height, otherwise below the plot in as many columns as fit, read down each column, adding its
//! height to the canvas; label areas sized from the text they hold; category labels turned vertical
//! when one would not fit its category's share of the width. On bar charts each bar (each stack) carries its value when
//! every label fits its bar's width.
//!
//! Not here: ranges, ticks and what can be shown (`plot.rs`, `ticks.rs`).

use super::plot::{shows, BarLayout, Body, Chart, LegendEntry, Look, Mark, Plan, Scale};
use super::svg::FAMILY;
use super::ticks::format_tick;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

const GREY: RGBColor = RGBColor(90, 90, 90);
const TITLE_PX: u32 = 20;
const DESC_PX: u32 = 15;
const LABEL_PX: u32 = 13;
const LEGEND_PX: u32 = 13;
const VALUE_PX: u32 = 11;
const NOTE_PX: u32 = 12;
const EMPTY_PX: u32 = 18;
const LEGEND_ROW: u32 = 20;
/// Left of a legend entry's text: its line, marker or swatch.
const KEY_W: u32 = 44;
/// Height of the title area plotters' `titled` takes, and of the x label area without rotation.
const TITLE_H: u32 = TITLE_PX + 20;
const X_AREA: u32 = LABEL_PX + 14 + DESC_PX + 14;
/// Longest category label shown; longer ones end in an ellipsis.
const MAX_CATEGORY: usize = 48;

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum LegendPlace {
    None,
    /// A column beside the plot, this wide.
    Right {
        width: u32,
    },
    /// Rows under the plot: `columns` columns of `column_width`, this high in all.
    Below {
        height: u32,
        columns: u32,
        column_width: u32,
    },
}

/// The canvas (the chart's size, taller by a legend below the plot) and the legend's place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Layout {
    pub canvas: (u32, u32),
    pub legend: LegendPlace,
}

fn font(px: u32) -> TextStyle<'static> {
    (FAMILY, px).into_font().color(&BLACK)
}

/// Width of `s` in pixels at `px` (the embedded font's advance widths).
fn text_w(s: &str, px: u32) -> u32 {
    font(px)
        .font
        .box_size(s)
        .map(|(w, _)| w)
        .unwrap_or(s.chars().count() as u32 * px * 3 / 5)
}

/// `s`, cut with an ellipsis to at most `max_px` pixels wide.
fn fit_text(s: &str, px: u32, max_px: u32) -> String {
    if text_w(s, px) <= max_px {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut n = chars.len();
    while n > 1 {
        n -= 1;
        let t: String = chars[..n].iter().collect::<String>() + "…";
        if text_w(&t, px) <= max_px {
            return t;
        }
    }
    "…".into()
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

/// Places the legend of a chart of `size`: beside the plot if it fits there, else below it.
pub(super) fn layout(legend: &[LegendEntry], size: (u32, u32)) -> Layout {
    let (w, h) = size;
    if legend.is_empty() {
        return Layout {
            canvas: size,
            legend: LegendPlace::None,
        };
    }
    let n = legend.len() as u32;
    let widest = legend
        .iter()
        .map(|e| text_w(&e.name, LEGEND_PX))
        .max()
        .unwrap_or(0)
        + KEY_W
        + 16;
    let rows_beside = h.saturating_sub(TITLE_H + X_AREA + 36) / LEGEND_ROW;
    if widest <= w * 3 / 8 && n <= rows_beside {
        return Layout {
            canvas: size,
            legend: LegendPlace::Right { width: widest },
        };
    }
    let avail = w - 24;
    let column_width = widest.min(avail);
    let columns = (avail / column_width).clamp(1, n);
    let rows = n.div_ceil(columns);
    let height = rows * LEGEND_ROW + 16;
    Layout {
        canvas: (w, h + height),
        legend: LegendPlace::Below {
            height,
            columns,
            column_width,
        },
    }
}

/// A bar's value as its label: whole numbers as they are, others to three significant digits.
fn value_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e5 {
        format_tick(v)
    } else if v.fract() == 0.0 || a >= 100.0 {
        format!("{v:.0}")
    } else {
        let digits = (2 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// Draws marker `m.colour` (circle, square, triangle, diamond, cross — then again) at `p`, filled,
/// or as a white-filled outline when `m.open`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (i32, i32),
    m: Mark,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let i = m.colour;
    let c = colour(i);
    let styles: &[ShapeStyle] = if m.open {
        &[
            ShapeStyle::from(&WHITE).filled(),
            ShapeStyle::from(&c).stroke_width(2),
        ]
    } else {
        &[ShapeStyle::from(&c).filled()]
    };
    let (x, y) = p;
    let r = 4;
    for &st in styles {
        match (i / PALETTE.len() + i) % 5 {
            0 => area.draw(&Circle::new(p, r, st))?,
            1 => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], st))?,
            2 => {
                let v = vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)];
                outline_or_fill(area, v, st)?
            }
            3 => {
                let v = vec![
                    (x, y - r - 1),
                    (x + r + 1, y),
                    (x, y + r + 1),
                    (x - r - 1, y),
                ];
                outline_or_fill(area, v, st)?
            }
            _ => {
                // A cross has no inside: open or not, two strokes.
                let s = ShapeStyle::from(&c).stroke_width(2);
                area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))?;
                area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s))?;
            }
        }
    }
    Ok(())
}

/// A polygon filled, or its closed outline for a stroke style (plotters' `Polygon` always fills).
fn outline_or_fill<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    mut v: Vec<(i32, i32)>,
    st: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if st.filled {
        area.draw(&Polygon::new(v, st))
    } else {
        v.push(v[0]);
        area.draw(&PathElement::new(v, st))
    }
}

pub(super) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One bar in data coordinates, with the value its label shows (stacks: the top one, with the total).
struct Bar {
    x: (f64, f64),
    y: (f64, f64),
    colour: usize,
    label: Option<f64>,
}

impl Chart {
    /// The bars of a bar chart, bottom first within each stack.
    fn bar_shapes(
        &self,
        plan: &Plan,
        series: &[super::plot::BarSeries],
        layout: BarLayout,
    ) -> Vec<Bar> {
        let n = series.len() as f64;
        let base = match self.y.scale {
            Scale::Linear => 0.0,
            Scale::Log => plan.y.lo,
        };
        let mut out = Vec::new();
        for k in 0..plan.categories.len() {
            let mut top = base;
            let mut last: Option<usize> = None;
            for (i, s) in series.iter().enumerate() {
                let v = s.values[k];
                match layout {
                    BarLayout::Grouped => {
                        let bw = 0.8 / n;
                        let x0 = k as f64 + 0.1 + bw * i as f64;
                        out.push(Bar {
                            x: (x0, x0 + bw),
                            y: (base, if shows(self.y.scale, v) { v } else { base }),
                            colour: i,
                            label: v.is_finite().then_some(v),
                        });
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
                        out.push(Bar {
                            x: (k as f64 + 0.15, k as f64 + 0.85),
                            y: (y0, top),
                            colour: i,
                            label: None,
                        });
                        last = Some(out.len() - 1);
                    }
                }
            }
            if let Some(l) = last {
                let total: f64 = series
                    .iter()
                    .map(|s| s.values[k])
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .sum();
                out[l].label = Some(total);
            }
        }
        out
    }

    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        plan: &Plan,
    ) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let (w, _) = plan.layout.canvas;
        let title_style = TextStyle::from((FAMILY, TITLE_PX, FontStyle::Bold).into_font());
        let title = fit_text(&self.title, TITLE_PX, w - 20);
        let body = root.titled(&title, title_style)?;
        let body_h = body.dim_in_pixel().1;
        let (plot_area, legend_area) = match plan.layout.legend {
            LegendPlace::None => (body, None),
            LegendPlace::Right { width } => {
                let (p, l) = body.split_horizontally(w - width);
                (p, Some(l))
            }
            LegendPlace::Below { height, .. } => {
                let (p, l) = body.split_vertically(body_h - height);
                (p, Some(l))
            }
        };
        let legend_w = match plan.layout.legend {
            LegendPlace::Right { width } => width,
            _ => 0,
        };
        let plot_h = plot_area.dim_in_pixel().1;

        // Label areas sized from the tick text they hold.
        let y_tick_w = plan
            .y
            .major
            .iter()
            .map(|v| text_w(&format_tick(*v), LABEL_PX))
            .max()
            .unwrap_or(0);
        let is_bars = !plan.categories.is_empty();
        let cats: Vec<String> = plan
            .categories
            .iter()
            .map(|c| shorten_to(c, MAX_CATEGORY))
            .collect();
        let cat_w: Vec<u32> = cats.iter().map(|t| text_w(t, LABEL_PX)).collect();
        let plot_w = (w - legend_w).saturating_sub(y_tick_w + 60);
        // Category labels turn vertical when one would not fit its category's share of the width
        // (then they do not all fit side by side either).
        let slot = plot_w / cat_w.len().max(1) as u32;
        let rotate = is_bars && cat_w.iter().any(|tw| tw + 12 > slot);
        let x_area = if rotate {
            cat_w.iter().copied().max().unwrap_or(0) + 16 + DESC_PX + 16
        } else {
            X_AREA
        };
        let x_area = x_area.min(plot_h / 2);
        let notes_h = plan.notes.len() as u32 * (NOTE_PX + 6);

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .margin_bottom(12 + notes_h)
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
        match &self.body {
            Body::Lines(series) | Body::Scatter { series, .. } => {
                let lines = matches!(self.body, Body::Lines(_));
                if let Body::Scatter {
                    identity_line: true,
                    ..
                } = self.body
                {
                    let (lo, hi) = (plan.x.lo.max(plan.y.lo), plan.x.hi.min(plan.y.hi));
                    dashed(root, pixel(lo, lo), pixel(hi, hi), &GREY)?;
                }
                for (i, s) in series.iter().enumerate() {
                    let mark = s.mark_at(i);
                    let c = colour(mark.colour);
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
                                root.draw(&PathElement::new(vec![a, b], st))?;
                                for e in [a, b] {
                                    root.draw(&PathElement::new(
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
                        if mark.open {
                            for w in sorted.windows(2) {
                                dashed(root, pixel(w[0].0, w[0].1), pixel(w[1].0, w[1].1), &c)?;
                            }
                        } else {
                            area.draw(&PathElement::new(
                                sorted,
                                ShapeStyle::from(&c).stroke_width(2),
                            ))?;
                        }
                    }
                    for (_, (x, y)) in pts {
                        draw_marker(root, pixel(x, y), mark)?;
                    }
                }
            }
            Body::Bars { series, layout, .. } => {
                let bars = self.bar_shapes(plan, series, *layout);
                for b in &bars {
                    if b.y.1 > b.y.0 {
                        let r = [(b.x.0, b.y.0), (b.x.1, b.y.1)];
                        area.draw(&Rectangle::new(
                            r,
                            ShapeStyle::from(&colour(b.colour)).filled(),
                        ))?;
                        area.draw(&Rectangle::new(r, WHITE.stroke_width(1)))?;
                    }
                }
                // Values above the bars, when every one fits its bar's width.
                let labels: Vec<(&Bar, String)> = bars
                    .iter()
                    .filter_map(|b| b.label.map(|v| (b, value_label(v))))
                    .collect();
                let fits = labels.iter().all(|(b, t)| {
                    let (x0, x1) = (pixel(b.x.0, b.y.1).0, pixel(b.x.1, b.y.1).0);
                    text_w(t, VALUE_PX) + 2 <= (x1 - x0).unsigned_abs()
                });
                if fits && plan.empty.is_none() {
                    let style = font(VALUE_PX).pos(Pos::new(HPos::Center, VPos::Bottom));
                    for (b, t) in &labels {
                        let (x0, y) = pixel(b.x.0, b.y.1);
                        let x1 = pixel(b.x.1, b.y.1).0;
                        root.draw_text(t, &style, ((x0 + x1) / 2, y - 2))?;
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
                        let r = [(b.lo, base), (b.hi, b.count)];
                        area.draw(&Rectangle::new(r, ShapeStyle::from(&colour(0)).filled()))?;
                        area.draw(&Rectangle::new(r, WHITE.stroke_width(1)))?;
                    }
                }
            }
        }

        // Nothing to draw: say why, across the plot.
        if let Some(text) = &plan.empty {
            let (x0, x1) = (plan.x.lo, plan.x.hi);
            let (y0, y1) = (plan.y.lo, plan.y.hi);
            let centre = |a: f64, b: f64, s: Scale| match s {
                Scale::Log => (a.ln() + b.ln()) / 2.0,
                Scale::Linear => (a + b) / 2.0,
            };
            let (cx, cy) = (centre(x0, x1, plan.x.scale), centre(y0, y1, plan.y.scale));
            let (cx, cy) = match (plan.x.scale, plan.y.scale) {
                (Scale::Log, _) => (cx.exp(), cy),
                _ => (cx, cy),
            };
            let style = TextStyle::from((FAMILY, EMPTY_PX, FontStyle::Bold).into_font())
                .color(&GREY)
                .pos(Pos::new(HPos::Center, VPos::Center));
            root.draw_text(text, &style, pixel(cx, cy))?;
        }
        // Notes under the plot area, left-aligned with it.
        if !plan.notes.is_empty() {
            let (left, _) = pixel(plan.x.lo, plan.y.lo);
            let (_, pa_bottom) = plot_area.get_base_pixel();
            let style = font(NOTE_PX)
                .color(&GREY)
                .pos(Pos::new(HPos::Left, VPos::Bottom));
            let bottom = pa_bottom + plot_area.dim_in_pixel().1 as i32 - 6;
            for (i, n) in plan.notes.iter().rev().enumerate() {
                let y = bottom - i as i32 * (NOTE_PX + 6) as i32;
                root.draw_text(n, &style, (left, y))?;
            }
        }

        if let Some(legend_area) = legend_area {
            self.draw_legend(&legend_area, plan)?;
        }
        Ok(())
    }

    /// The legend: beside the plot, top-aligned with it; below it, column by column.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        plan: &Plan,
    ) -> DrawResult<DB> {
        let (columns, column_w, top) = match plan.layout.legend {
            LegendPlace::Right { width } => (1, width, 24),
            LegendPlace::Below {
                columns,
                column_width,
                ..
            } => (columns, column_width, 8 + LEGEND_ROW as i32 / 2),
            LegendPlace::None => return Ok(()),
        };
        let rows = (plan.legend.len() as u32).div_ceil(columns);
        // Below the plot, the block of columns is centred under the canvas.
        let left = match plan.layout.legend {
            LegendPlace::Below { .. } => {
                (area.dim_in_pixel().0.saturating_sub(columns * column_w) / 2) as i32
            }
            _ => 0,
        };
        for (k, e) in plan.legend.iter().enumerate() {
            let (c, r) = (k as u32 / rows, k as u32 % rows);
            let x = left + (c * column_w) as i32;
            let y = top + (r * LEGEND_ROW) as i32;
            match e.look {
                Look::Line(m) => {
                    if matches!(self.body, Body::Lines(_)) {
                        let (a, b) = ((x + 8, y), (x + 36, y));
                        if m.open {
                            dashed(area, a, b, &colour(m.colour))?;
                        } else {
                            area.draw(&PathElement::new(
                                vec![a, b],
                                ShapeStyle::from(&colour(m.colour)).stroke_width(2),
                            ))?;
                        }
                    }
                    draw_marker(area, (x + 22, y), m)?;
                }
                Look::Swatch(i) => {
                    area.draw(&Rectangle::new(
                        [(x + 12, y - 6), (x + 32, y + 6)],
                        ShapeStyle::from(&colour(i)).filled(),
                    ))?;
                }
                Look::Identity => dashed(area, (x + 8, y), (x + 36, y), &GREY)?,
            }
            let text = fit_text(&e.name, LEGEND_PX, column_w.saturating_sub(KEY_W + 4));
            area.draw_text(
                &text,
                &font(LEGEND_PX).pos(Pos::new(HPos::Left, VPos::Center)),
                (x + KEY_W as i32, y),
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
    fn bar_values_read_as_whole_numbers_or_three_digits() {
        let got: Vec<String> = [0.0, 38.0, 12345.0, 1805.6, 35.41, 0.3766, 0.04, 250000.0]
            .iter()
            .map(|v| value_label(*v))
            .collect();
        assert_eq!(
            got,
            ["0", "38", "12345", "1806", "35.4", "0.377", "0.04", "250k"]
        );
    }

    #[test]
    fn text_is_cut_only_when_wider_than_allowed() {
        assert_eq!(fit_text("short", 13, 500), "short");
        let cut = fit_text(&"long legend entry ".repeat(10), 13, 200);
        assert!(cut.ends_with('…') && text_w(&cut, 13) <= 200, "{cut}");
    }
}
