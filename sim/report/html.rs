//! The HTML report: one `index.html` per report folder that shows the charts and the tables.
//!
//! Readable offline: the page has no scripts, no web fonts and no network addresses; its style sheet is
//! inline, and charts are `<img>` elements pointing at the SVG files beside it (with a link to the PNG),
//! so the folder can be copied or opened from disk as it is. Every text is HTML-escaped.
//!
//! Not here: deciding what goes into a report (the sweep and compare commands do), and interactivity.

use super::svg::xml_escape as escape;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A table with a caption; cells are text, right-aligned when they read as numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HtmlTable {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A chart's files, relative to the report folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub svg: String,
    pub png: String,
    /// Alternative text (the chart's title).
    pub alt: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub heading: String,
    pub text: Vec<String>,
    pub figure: Option<Figure>,
    pub tables: Vec<HtmlTable>,
    /// Collapsed by default (large tables).
    pub collapsed: bool,
}

/// A report page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub title: String,
    /// Paragraphs under the title.
    pub intro: Vec<String>,
    /// The headline tables, right under the intro (before the facts).
    pub headline: Option<Section>,
    /// Facts shown as a definition list (what was run, with which tool).
    pub facts: Vec<(String, String)>,
    /// Files offered for download: (relative path, description).
    pub files: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#222;line-height:1.45}h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2.2em;\
border-bottom:1px solid #ddd}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}\
dt{font-weight:bold}dd{margin:0}figure{margin:1em 0}figure img{max-width:100%;height:auto;\
border:1px solid #eee}figcaption{font-size:.9em;color:#555}table{border-collapse:collapse;margin:.8em 0;\
font-size:.85em}caption{text-align:left;font-weight:bold;padding:.3em 0;white-space:nowrap}th,td{border:1px solid #ddd;\
padding:.2em .5em}th{background:#f4f4f4;position:sticky;top:0}td.n{text-align:right;\
font-variant-numeric:tabular-nums}.wide{overflow-x:auto;max-height:36em}code{background:#f4f4f4;\
padding:0 .2em}";

fn numeric(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok()
}

impl HtmlTable {
    fn write(&self, o: &mut String) {
        o.push_str("<div class=\"wide\"><table>\n");
        if !self.caption.is_empty() {
            let _ = writeln!(o, "<caption>{}</caption>", escape(&self.caption));
        }
        o.push_str("<thead><tr>");
        for h in &self.header {
            let _ = write!(o, "<th>{}</th>", escape(h));
        }
        o.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            o.push_str("<tr>");
            for c in r {
                if numeric(c) {
                    let _ = write!(o, "<td class=\"n\">{}</td>", escape(c));
                } else {
                    let _ = write!(o, "<td>{}</td>", escape(c));
                }
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</tbody></table></div>\n");
    }
}

impl Section {
    fn write(&self, o: &mut String) {
        let _ = writeln!(o, "<h2>{}</h2>", escape(&self.heading));
        if let Some(f) = &self.figure {
            let _ = writeln!(
                o,
                "<figure><a href=\"{}\"><img src=\"{}\" alt=\"{}\"></a>\
                 <figcaption>Files: <a href=\"{}\">PNG</a>, <a href=\"{}\">SVG</a></figcaption></figure>",
                escape(&f.svg),
                escape(&f.svg),
                escape(&f.alt),
                escape(&f.png),
                escape(&f.svg)
            );
        }
        for p in &self.text {
            let _ = writeln!(o, "<p>{}</p>", escape(p));
        }
        if self.collapsed && !self.tables.is_empty() {
            let _ = writeln!(
                o,
                "<details><summary>Table ({} rows)</summary>",
                self.tables.iter().map(|t| t.rows.len()).sum::<usize>()
            );
        }
        for t in &self.tables {
            t.write(o);
        }
        if self.collapsed && !self.tables.is_empty() {
            o.push_str("</details>\n");
        }
    }
}

impl Report {
    pub fn to_html(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>",
            escape(&self.title),
            escape(&self.title)
        );
        for p in &self.intro {
            let _ = writeln!(o, "<p>{}</p>", escape(p));
        }
        if let Some(h) = &self.headline {
            h.write(&mut o);
        }
        if !self.facts.is_empty() {
            o.push_str("<dl>\n");
            for (k, v) in &self.facts {
                let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
            }
            o.push_str("</dl>\n");
        }
        if !self.files.is_empty() {
            o.push_str("<p>Data: ");
            let links: Vec<String> = self
                .files
                .iter()
                .map(|(f, d)| {
                    format!(
                        "<a href=\"{}\">{}</a> ({})",
                        escape(f),
                        escape(f),
                        escape(d)
                    )
                })
                .collect();
            o.push_str(&links.join(", "));
            o.push_str("</p>\n");
        }
        for s in &self.sections {
            s.write(&mut o);
        }
        o.push_str("</body>\n</html>\n");
        o
    }

    /// Writes `dir/index.html` atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join("index.html");
        crate::stats::write_atomic(&path, self.to_html().as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_escaped_and_has_no_network_assets() {
        let r = Report {
            title: "a <b> & c".into(),
            intro: vec!["x < y".into()],
            headline: None,
            facts: vec![("k".into(), "\"v\"".into())],
            files: vec![("results.csv".into(), "all rows".into())],
            sections: vec![Section {
                heading: "h".into(),
                text: vec![],
                figure: Some(Figure {
                    svg: "charts/c.svg".into(),
                    png: "charts/c.png".into(),
                    alt: "t".into(),
                }),
                tables: vec![HtmlTable {
                    caption: "c".into(),
                    header: vec!["n".into(), "s".into()],
                    rows: vec![vec!["1.5".into(), "<x>".into()]],
                }],
                collapsed: false,
            }],
        };
        let h = r.to_html();
        assert!(h.contains("<h1>a &lt;b&gt; &amp; c</h1>"));
        assert!(h.contains("<td class=\"n\">1.5</td><td>&lt;x&gt;</td>"));
        assert!(h.contains("<img src=\"charts/c.svg\""));
        for remote in ["http://", "https://", "<script", "@import"] {
            assert!(!h.contains(remote), "{remote}");
        }
    }
}
