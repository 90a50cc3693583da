//! Statistics as tidy rows `location, metric, value, unit` (one schema for JSON and CSV), collected by
//! each part at the end of a run.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// The part: `gpu`, `sm3`, `sm3.l1`, `l2.slice7`, `dram.ch2`, `kernel`, ...
    pub location: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub rows: Vec<Stat>,
}

impl Stats {
    pub fn push(&mut self, location: impl Into<String>, metric: &str, value: f64, unit: &str) {
        self.rows.push(Stat {
            location: location.into(),
            metric: metric.to_string(),
            value,
            unit: unit.to_string(),
        });
    }

    /// The value of `metric` at `location`, if recorded.
    pub fn get(&self, location: &str, metric: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.location == location && r.metric == metric)
            .map(|r| r.value)
    }

    /// Tidy CSV with a header line; fields containing commas or quotes are quoted.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("location,metric,value,unit\n");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},{},{}",
                csv_field(&r.location),
                csv_field(&r.metric),
                fmt_num(r.value),
                csv_field(&r.unit)
            );
        }
        s
    }
}

/// Integers print without a fractional part, so that outputs are stable and readable.
pub fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a newline.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `contents` to `path` atomically: a temporary file in the same folder, then a rename, so that
/// no reader ever sees a half-written output.
pub fn write_atomic(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
