//! Embedded fonts, and an SVG drawing backend for plotters that draws text as glyph outlines.
//!
//! Why not plotters' own `SVGBackend`: it writes `<text font-family="sans-serif">`, so what a reader sees
//! depends on the fonts of the viewing machine (none at all on a bare server, a different width
//! elsewhere, so labels collide). Here every glyph is the DejaVu Sans outline, defined once per chart in
//! `<defs>` and placed with `<use>`; the SVG needs no font and matches the PNG, which plotters rasterises
//! from the same font bytes.
//!
//! Text placement follows plotters' own bitmap text path (`DrawingBackend::draw_text` with the `ab_glyph`
//! font backend in plotters 0.3.7): the layout box is `(advance width, size / 1.24)`, the baseline lies
//! `size / 2` below the box top, the anchor shifts the box, and the rotation turns it about the anchor.
//! Each text element also carries its string as `aria-label`, so the SVG stays searchable.
//!
//! Not modelled: pixel snapping of glyphs (the PNG's glyphs sit on whole pixels, these do not), and
//! font styles other than regular and bold (every family resolves to DejaVu Sans).

use ab_glyph::{Font, FontRef, GlyphId, OutlineCurve, PxScale, ScaleFont};
use plotters_backend::{
    text_anchor::{HPos, VPos},
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle, FontTransform,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// The one font family name every chart uses; registered with plotters by [`fonts`].
pub const FAMILY: &str = "sans-serif";

/// DejaVu Sans regular and bold, parsed once, and registered with plotters under [`FAMILY`].
pub struct Fonts {
    pub regular: FontRef<'static>,
    pub bold: FontRef<'static>,
}

/// The embedded fonts; the first call also registers them with plotters, so that text drawing never
/// needs a system font (without registration plotters fails with `FontUnavailable`).
pub fn fonts() -> &'static Fonts {
    static FONTS: OnceLock<Fonts> = OnceLock::new();
    FONTS.get_or_init(|| {
        let (regular, bold) = (dejavu::sans::regular(), dejavu::sans::bold());
        // The DejaVu bytes are compiled in and known-good: a failure here is a build defect, not input.
        let parse =
            |b: &'static [u8]| FontRef::try_from_slice(b).expect("embedded DejaVu font parses");
        let fonts = Fonts {
            regular: parse(regular),
            bold: parse(bold),
        };
        let ok = plotters::style::register_font(FAMILY, FontStyle::Normal, regular).is_ok()
            && plotters::style::register_font(FAMILY, FontStyle::Bold, bold).is_ok();
        assert!(ok, "embedded DejaVu font registers with plotters");
        fonts
    })
}

impl Fonts {
    fn get(&self, style: FontStyle) -> (&FontRef<'static>, char) {
        match style {
            FontStyle::Bold => (&self.bold, 'b'),
            _ => (&self.regular, 'r'),
        }
    }
}

/// Error type of the SVG backend. Drawing into a `String` cannot fail; the type exists because plotters
/// requires one.
#[derive(Debug, thiserror::Error)]
#[error("SVG drawing failed")]
pub struct SvgError;

/// A plotters backend that accumulates an SVG document in memory; [`SvgCanvas::finish`] returns it.
pub struct SvgCanvas {
    size: (u32, u32),
    body: String,
    /// Glyph outlines used so far, by id (`r42` = regular glyph 42), as path data in font units.
    glyphs: BTreeMap<String, String>,
    title: String,
}

impl SvgCanvas {
    pub fn new(size: (u32, u32), title: &str) -> Self {
        fonts();
        SvgCanvas {
            size,
            body: String::new(),
            glyphs: BTreeMap::new(),
            title: title.to_string(),
        }
    }

    /// The complete SVG document.
    pub fn finish(self) -> String {
        let (w, h) = self.size;
        let mut s = String::with_capacity(self.body.len() + 4096);
        let _ = writeln!(
            s,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{w}" height="{h}" viewBox="0 0 {w} {h}">
<title>{}</title>"#,
            xml_escape(&self.title)
        );
        if !self.glyphs.is_empty() {
            s.push_str("<defs>\n");
            for (id, d) in &self.glyphs {
                let _ = writeln!(s, r#"<path id="{id}" d="{d}"/>"#);
            }
            s.push_str("</defs>\n");
        }
        s.push_str(&self.body);
        s.push_str("</svg>\n");
        s
    }

    /// Defines glyph `id` of `font` once, returning its element id.
    fn glyph(&mut self, font: &FontRef<'static>, tag: char, id: GlyphId) -> Option<String> {
        let key = format!("{tag}{}", id.0);
        if !self.glyphs.contains_key(&key) {
            let outline = font.outline(id)?;
            self.glyphs
                .insert(key.clone(), outline_path(&outline.curves));
        }
        Some(key)
    }
}

/// SVG path data for a glyph outline in font units (y up; the `<use>` transform flips it). ab_glyph
/// gives separate curve segments; a new sub-path starts wherever a segment does not continue the last.
fn outline_path(curves: &[OutlineCurve]) -> String {
    let mut d = String::new();
    let mut last: Option<ab_glyph::Point> = None;
    let p = |d: &mut String, pt: ab_glyph::Point| {
        let _ = write!(d, "{} {} ", pt.x.round(), pt.y.round());
    };
    for c in curves {
        let (start, end) = match c {
            OutlineCurve::Line(a, b) => (*a, *b),
            OutlineCurve::Quad(a, _, b) => (*a, *b),
            OutlineCurve::Cubic(a, _, _, b) => (*a, *b),
        };
        if last != Some(start) {
            if last.is_some() {
                d.push_str("Z ");
            }
            d.push('M');
            p(&mut d, start);
        }
        match c {
            OutlineCurve::Line(_, b) => {
                d.push('L');
                p(&mut d, *b);
            }
            OutlineCurve::Quad(_, c1, b) => {
                d.push('Q');
                p(&mut d, *c1);
                p(&mut d, *b);
            }
            OutlineCurve::Cubic(_, c1, c2, b) => {
                d.push('C');
                p(&mut d, *c1);
                p(&mut d, *c2);
                p(&mut d, *b);
            }
        }
        last = Some(end);
    }
    if last.is_some() {
        d.push('Z');
    }
    d.trim_end().to_string()
}

pub(crate) fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// Attributes of a filled shape, or of its outline.
fn shape_paint<S: BackendStyle>(s: &S, fill: bool) -> String {
    if fill {
        paint("fill", s.color())
    } else {
        format!(
            r#"fill="none" {} stroke-width="{}""#,
            paint("stroke", s.color()),
            s.stroke_width()
        )
    }
}

fn color(c: BackendColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.rgb.0, c.rgb.1, c.rgb.2)
}

/// `fill`/`stroke` attributes, with opacity only when not opaque.
fn paint(attr: &str, c: BackendColor) -> String {
    if c.alpha >= 1.0 {
        format!(r#"{attr}="{}""#, color(c))
    } else {
        format!(r#"{attr}="{}" {attr}-opacity="{:.3}""#, color(c), c.alpha)
    }
}

type R = Result<(), DrawingErrorKind<SvgError>>;

/// Implemented on `&mut SvgCanvas` so that the canvas outlives the plotters drawing area that borrows it.
impl DrawingBackend for &mut SvgCanvas {
    type ErrorType = SvgError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(&mut self) -> R {
        Ok(())
    }
    fn present(&mut self) -> R {
        Ok(())
    }

    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> R {
        if c.alpha > 0.0 {
            let _ = writeln!(
                self.body,
                r#"<rect x="{}" y="{}" width="1" height="1" {}/>"#,
                p.0,
                p.1,
                paint("fill", c)
            );
        }
        Ok(())
    }

    fn draw_line<S: BackendStyle>(&mut self, a: BackendCoord, b: BackendCoord, s: &S) -> R {
        if s.color().alpha > 0.0 {
            let _ = writeln!(
                self.body,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" {} stroke-width="{}"/>"#,
                a.0,
                a.1,
                b.0,
                b.1,
                paint("stroke", s.color()),
                s.stroke_width()
            );
        }
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        ul: BackendCoord,
        br: BackendCoord,
        s: &S,
        fill: bool,
    ) -> R {
        if s.color().alpha > 0.0 {
            let look = shape_paint(s, fill);
            let _ = writeln!(
                self.body,
                r#"<rect x="{}" y="{}" width="{}" height="{}" {look}/>"#,
                ul.0,
                ul.1,
                br.0 - ul.0,
                br.1 - ul.1
            );
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        s: &S,
    ) -> R {
        if s.color().alpha > 0.0 {
            let pts = points(path);
            let _ = writeln!(
                self.body,
                r#"<polyline points="{pts}" fill="none" {} stroke-width="{}" stroke-linejoin="round"/>"#,
                paint("stroke", s.color()),
                s.stroke_width()
            );
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        c: BackendCoord,
        radius: u32,
        s: &S,
        fill: bool,
    ) -> R {
        if s.color().alpha > 0.0 {
            let look = shape_paint(s, fill);
            let _ = writeln!(
                self.body,
                r#"<circle cx="{}" cy="{}" r="{radius}" {look}/>"#,
                c.0, c.1
            );
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        s: &S,
    ) -> R {
        if s.color().alpha > 0.0 {
            let _ = writeln!(
                self.body,
                r#"<polygon points="{}" {}/>"#,
                points(vert),
                paint("fill", s.color())
            );
        }
        Ok(())
    }

    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> R {
        let c = style.color();
        if c.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        } - min_x;
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        } - min_y;
        let rotate = match style.transform() {
            FontTransform::None => "",
            FontTransform::Rotate90 => " rotate(90)",
            FontTransform::Rotate180 => " rotate(180)",
            FontTransform::Rotate270 => " rotate(270)",
        };
        let (font, tag) = fonts().get(style.style());
        let size = style.size() as f32;
        let scaled = font.as_scaled(PxScale::from(size));
        let k = scaled.h_scale_factor();
        let baseline = dy as f32 + size / 2.0;
        let mut uses = String::new();
        let mut x_shift = 0f32;
        let mut prev: Option<GlyphId> = None;
        for ch in text.chars() {
            let id = scaled.glyph_id(ch);
            if let Some(p) = prev {
                x_shift += scaled.kern(p, id);
            }
            prev = Some(id);
            if let Some(gid) = self.glyph(font, tag, id) {
                let x = dx as f32 + x_shift;
                let _ = write!(
                    uses,
                    r##"<use xlink:href="#{gid}" transform="matrix({k:.5} 0 0 {:.5} {x:.2} {baseline:.2})"/>"##,
                    -k
                );
            }
            x_shift += scaled.h_advance(id);
        }
        let _ = writeln!(
            self.body,
            r#"<g aria-label="{}" transform="translate({} {}){rotate}" {}>{uses}</g>"#,
            xml_escape(text),
            pos.0,
            pos.1,
            paint("fill", c)
        );
        Ok(())
    }
}

fn points<I: IntoIterator<Item = BackendCoord>>(pts: I) -> String {
    let mut s = String::new();
    for (x, y) in pts {
        let _ = write!(s, "{x},{y} ");
    }
    s.trim_end().to_string()
}
