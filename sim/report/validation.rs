//! The validation figure: signed errors of simulated against published numbers, one panel per
//! preset, each row a marker on a fixed ±limit axis (default ±25 %) over a shaded band of that row's
//! accepted tolerance.
//!
//! What it draws: a horizontal line per row (the row's id on the left, its signed error printed on
//! the right), the tolerance band `[-tolerance, +tolerance]` behind it, a filled circle when the error
//! is within the tolerance and an open one when it is not; an error past the axis is drawn as a
//! triangle at the edge pointing outwards, and its value is printed, so no row is hidden by the fixed
//! axis. A dashed line marks 0 (exact). The sign convention is the caller's (`validate`: positive = the
//! simulator is too slow); the axis caption says it.
//!
//! Not here: where the numbers come from (`gpumemsim::validate` builds the panels), other chart kinds
//! (`plot`). Same fonts and outputs as [`super::plot`]: PNG and an outline SVG, written atomically.

use super::plot::{Format, PlotError, SavedChart};
use super::svg::{SvgCanvas, FAMILY};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One row: its label, its signed relative error and its accepted tolerance (fractions: 0.1 = 10 %).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorRow {
    pub label: String,
    pub error: f64,
    pub tolerance: f64,
}

/// One panel: a titled group of rows (a preset and its MAPE).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorPanel {
    pub title: String,
    pub rows: Vec<ErrorRow>,
}

/// The figure: panels stacked top to bottom, one shared axis range.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorFigure {
    pub title: String,
    /// The x axis caption (says the sign convention).
    pub axis: String,
    /// Half-width of the axis, in percent.
    pub limit: f64,
    pub panels: Vec<ErrorPanel>,
    pub width: u32,
}

const TITLE_PX: u32 = 20;
const PANEL_PX: u32 = 15;
const LABEL_PX: u32 = 13;
const ROW_H: u32 = 30;
const PANEL_HEAD: u32 = 34;
const AXIS_H: u32 = 56;
const TOP: u32 = 44;
const LEFT: u32 = 230;
const RIGHT: u32 = 150;
const BAND: RGBColor = RGBColor(200, 225, 245);
const INSIDE: RGBColor = RGBColor(0, 114, 178);
const OUTSIDE: RGBColor = RGBColor(213, 94, 0);
const GRID: RGBColor = RGBColor(225, 225, 225);

fn font(px: u32) -> TextStyle<'static> {
    (FAMILY, px).into_font().color(&BLACK)
}

impl ErrorFigure {
    /// A figure on a ±25 % axis, 1100 pixels wide.
    pub fn new(title: impl Into<String>, axis: impl Into<String>, panels: Vec<ErrorPanel>) -> Self {
        ErrorFigure {
            title: title.into(),
            axis: axis.into(),
            limit: 25.0,
            panels,
            width: 1100,
        }
    }

    /// The canvas: the title, each panel's head and rows, the axis under the last panel.
    pub fn size(&self) -> (u32, u32) {
        let rows: u32 = self.panels.iter().map(|p| p.rows.len() as u32).sum();
        let h = TOP + self.panels.len() as u32 * PANEL_HEAD + rows * ROW_H + AXIS_H + 40;
        (self.width, h)
    }

    fn check(&self) -> Result<(), PlotError> {
        let err = |m: String| PlotError::Data {
            chart: self.title.clone(),
            message: m,
        };
        if self.panels.iter().all(|p| p.rows.is_empty()) {
            return Err(err("no rows to draw".into()));
        }
        if !(self.limit.is_finite() && self.limit > 0.0) {
            return Err(err(format!(
                "axis limit {} is not a positive number",
                self.limit
            )));
        }
        for p in &self.panels {
            for r in &p.rows {
                if !r.tolerance.is_finite() || r.tolerance < 0.0 {
                    return Err(err(format!(
                        "row {}: tolerance {} is not a non-negative number",
                        r.label, r.tolerance
                    )));
                }
            }
        }
        Ok(())
    }

    pub fn render(&self, format: Format) -> Result<Vec<u8>, PlotError> {
        self.check()?;
        super::svg::fonts();
        let (w, h) = self.size();
        let derr = |e: String| PlotError::Draw {
            chart: self.title.clone(),
            message: e,
        };
        match format {
            Format::Png => {
                let mut rgb = vec![0u8; w as usize * h as usize * 3];
                {
                    let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                    self.draw(&root).map_err(derr)?;
                    root.present().map_err(|e| derr(e.to_string()))?;
                }
                let mut out = Vec::new();
                let mut enc = png::Encoder::new(&mut out, w, h);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_compression(png::Compression::Best);
                enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
                enc.write_header()
                    .and_then(|mut wr| wr.write_image_data(&rgb))
                    .map_err(|e| derr(e.to_string()))?;
                Ok(out)
            }
            Format::Svg => {
                let mut canvas = SvgCanvas::new((w, h), &self.title);
                {
                    let root = (&mut canvas).into_drawing_area();
                    self.draw(&root).map_err(derr)?;
                    root.present().map_err(|e| derr(e.to_string()))?;
                }
                Ok(canvas.finish().into_bytes())
            }
        }
    }

    /// Writes `dir/stem.png` and `dir/stem.svg`, each atomically.
    pub fn save(&self, dir: &Path, stem: &str) -> Result<SavedChart, PlotError> {
        let saved = SavedChart {
            png: dir.join(format!("{stem}.png")),
            svg: dir.join(format!("{stem}.svg")),
        };
        for (path, format) in [(&saved.png, Format::Png), (&saved.svg, Format::Svg)] {
            let bytes = self.render(format)?;
            crate::stats::write_atomic(path, &bytes).map_err(|source| PlotError::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(saved)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (w, h) = self.size();
        root.draw(&Text::new(
            self.title.clone(),
            (w as i32 / 2, 12),
            font(TITLE_PX).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(e)?;
        let (x0, x1) = (LEFT as i32, (w - RIGHT) as i32);
        let lim = self.limit;
        let px =
            |v: f64| -> i32 { x0 + ((v + lim) / (2.0 * lim) * (x1 - x0) as f64).round() as i32 };
        let ticks: Vec<f64> = {
            let step = if lim <= 10.0 {
                2.5
            } else if lim <= 30.0 {
                5.0
            } else {
                10.0
            };
            let n = (lim / step).floor() as i64;
            (-n..=n).map(|k| k as f64 * step).collect()
        };
        let mut y = TOP as i32;
        for panel in &self.panels {
            root.draw(&Text::new(
                panel.title.clone(),
                (x0, y + 10),
                (FAMILY, PANEL_PX, FontStyle::Bold)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Top)),
            ))
            .map_err(e)?;
            y += PANEL_HEAD as i32;
            let top = y;
            let bottom = y + (panel.rows.len() as u32 * ROW_H) as i32;
            for t in &ticks {
                let c = if *t == 0.0 {
                    RGBColor(120, 120, 120)
                } else {
                    GRID
                };
                root.draw(&PathElement::new(vec![(px(*t), top), (px(*t), bottom)], c))
                    .map_err(e)?;
            }
            for r in &panel.rows {
                let cy = y + ROW_H as i32 / 2;
                let tol = 100.0 * r.tolerance;
                let (b0, b1) = (px((-tol).max(-lim)), px(tol.min(lim)));
                root.draw(&Rectangle::new(
                    [(b0, y + 4), (b1, y + ROW_H as i32 - 4)],
                    BAND.filled(),
                ))
                .map_err(e)?;
                root.draw(&Text::new(
                    r.label.clone(),
                    (x0 - 10, cy),
                    font(LABEL_PX).pos(Pos::new(HPos::Right, VPos::Center)),
                ))
                .map_err(e)?;
                let v = 100.0 * r.error;
                let within = r.error.abs() <= r.tolerance;
                let colour = if within { INSIDE } else { OUTSIDE };
                if !v.is_finite() {
                    root.draw(&Text::new(
                        "no value".to_string(),
                        (x1 + 10, cy),
                        font(LABEL_PX).pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(e)?;
                } else if v.abs() > lim {
                    let edge = px(lim * v.signum());
                    let d = if v > 0.0 { 1 } else { -1 };
                    root.draw(&Polygon::new(
                        vec![
                            (edge + 7 * d, cy),
                            (edge - 5 * d, cy - 7),
                            (edge - 5 * d, cy + 7),
                        ],
                        colour.filled(),
                    ))
                    .map_err(e)?;
                } else if within {
                    root.draw(&Circle::new((px(v), cy), 6, colour.filled()))
                        .map_err(e)?;
                } else {
                    root.draw(&Circle::new((px(v), cy), 6, colour.stroke_width(2)))
                        .map_err(e)?;
                }
                if v.is_finite() {
                    root.draw(&Text::new(
                        format!("{v:+.1} % (±{tol:.0} %)"),
                        (x1 + 10, cy),
                        font(LABEL_PX)
                            .color(&colour)
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    ))
                    .map_err(e)?;
                }
                y += ROW_H as i32;
            }
            root.draw(&Rectangle::new(
                [(x0, top), (x1, bottom)],
                BLACK.stroke_width(1),
            ))
            .map_err(e)?;
        }
        for t in &ticks {
            root.draw(&PathElement::new(vec![(px(*t), y), (px(*t), y + 5)], BLACK))
                .map_err(e)?;
            root.draw(&Text::new(
                format!("{t:+}").replace("+0", "0"),
                (px(*t), y + 8),
                font(LABEL_PX).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(e)?;
        }
        root.draw(&Text::new(
            format!("{} (%)", self.axis),
            ((x0 + x1) / 2, y + 30),
            font(PANEL_PX).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(e)?;
        // The key, under the axis caption: what the marks and the band mean.
        let ky = h as i32 - 18;
        let mut kx = x0;
        root.draw(&Rectangle::new(
            [(kx, ky - 6), (kx + 24, ky + 6)],
            BAND.filled(),
        ))
        .map_err(e)?;
        kx += 30;
        for (mark, text) in [
            (0, "the row's tolerance"),
            (1, "within tolerance"),
            (2, "outside tolerance"),
            (3, "past the axis (value printed)"),
        ] {
            match mark {
                1 => root
                    .draw(&Circle::new((kx + 6, ky), 6, INSIDE.filled()))
                    .map_err(e)?,
                2 => root
                    .draw(&Circle::new((kx + 6, ky), 6, OUTSIDE.stroke_width(2)))
                    .map_err(e)?,
                3 => root
                    .draw(&Polygon::new(
                        vec![(kx + 13, ky), (kx + 1, ky - 7), (kx + 1, ky + 7)],
                        OUTSIDE.filled(),
                    ))
                    .map_err(e)?,
                _ => {}
            }
            if mark > 0 {
                kx += 20;
            }
            root.draw(&Text::new(
                text.to_string(),
                (kx, ky),
                font(LABEL_PX).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(e)?;
            kx += text.chars().count() as i32 * 7 + 30;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(error: f64) -> ErrorFigure {
        ErrorFigure::new(
            "t",
            "signed error",
            vec![ErrorPanel {
                title: "p".into(),
                rows: vec![
                    ErrorRow {
                        label: "a".into(),
                        error,
                        tolerance: 0.1,
                    },
                    ErrorRow {
                        label: "b".into(),
                        error: -0.02,
                        tolerance: 0.05,
                    },
                ],
            }],
        )
    }

    #[test]
    fn renders_png_and_svg_with_rows_past_the_axis() {
        for err in [0.03, 0.4, -0.9, f64::NAN] {
            let f = fig(err);
            let png = f.render(Format::Png).unwrap();
            assert_eq!(&png[1..4], b"PNG");
            let svg = String::from_utf8(f.render(Format::Svg).unwrap()).unwrap();
            assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        }
    }

    #[test]
    fn height_grows_with_rows_and_panels() {
        let one = fig(0.0);
        let mut two = fig(0.0);
        two.panels.push(two.panels[0].clone());
        assert_eq!(
            two.size().1 - one.size().1,
            PANEL_HEAD + 2 * ROW_H,
            "a second panel of two rows adds its head and two rows"
        );
    }

    #[test]
    fn refuses_nothing_to_draw_and_bad_tolerance() {
        let mut f = fig(0.0);
        f.panels[0].rows[0].tolerance = -1.0;
        assert!(f
            .render(Format::Png)
            .unwrap_err()
            .to_string()
            .contains("tolerance"));
        let empty = ErrorFigure::new("t", "x", vec![]);
        assert!(empty
            .render(Format::Png)
            .unwrap_err()
            .to_string()
            .contains("no rows"));
    }
}
