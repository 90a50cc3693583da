//! Tables as JSON arrays of records: `[{"col": value, ...}, ...]`, one record per line, keys in column
//! order. That is the layout `pandas.read_json(path)` reads as a table as it is (its default orient
//! for a list), and what `jq '.[]'` or `json.load` give row by row.
//!
//! Also the names and versions of every JSON schema the tool writes ([`Schema`]), so that a reader can
//! check what it holds; README "Outputs and their schemas" documents each.

use serde::Serialize;
use std::fmt::Write as _;

/// A versioned JSON layout. Documents carry `"schema"` and `"version"` keys; tables of records (which
/// cannot) have theirs in the companion document that describes their columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Schema {
    pub schema: &'static str,
    pub version: u32,
}

/// `run --json`: one run as a document (v1 had no `schema`/`version` keys and wrote `parameters` and
/// `reports` as `[name, value]` pairs; v3 added `overrides`, the `--set` and `--param` flags).
pub const RUN: Schema = Schema {
    schema: "gpumemsim-run",
    version: 3,
};

/// `run --stats-json`: the statistics as records `{location, metric, value, unit}` (the CSV's rows).
pub const STATS: Schema = Schema {
    schema: "gpumemsim-stats",
    version: 1,
};

/// A sweep's `results.json` (records, one per run) described by `results.schema.json` (v1 was one
/// document: `{sweep, columns, rows: [[cell, ...]]}`).
pub const SWEEP_RESULTS: Schema = Schema {
    schema: "gpumemsim-sweep-results",
    version: 2,
};

/// `compare`'s `comparison.json` (records, one per case) and `comparison.summary.json` (v1 was one
/// document holding both, without `schema`/`version`).
pub const COMPARISON: Schema = Schema {
    schema: "gpumemsim-comparison",
    version: 2,
};

/// One record: `(column, value)` in column order; `None` leaves the key out.
pub type Record = Vec<(String, Option<serde_json::Value>)>;

/// `[\n{...},\n{...}\n]\n`: each record on its own line, keys in the given order, absent cells left out.
pub fn to_json(records: &[Record]) -> String {
    let mut s = String::from("[\n");
    for (i, r) in records.iter().enumerate() {
        s.push('{');
        let mut first = true;
        for (k, v) in r {
            let Some(v) = v else { continue };
            if !first {
                s.push(',');
            }
            first = false;
            let _ = write!(s, "{}:{}", json_string(k), v);
        }
        s.push('}');
        if i + 1 < records.len() {
            s.push(',');
        }
        s.push('\n');
    }
    s.push_str("]\n");
    s
}

/// Records of any serialisable rows (structs serialise as objects, fields in declaration order).
pub fn of_rows<T: Serialize>(rows: &[T]) -> String {
    let mut s = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        s.push_str(&serde_json::to_string(r).unwrap_or_else(|_| "null".into()));
        if i + 1 < rows.len() {
            s.push(',');
        }
        s.push('\n');
    }
    s.push_str("]\n");
    s
}

/// A finite number, or `null` (JSON has no NaN or infinity).
pub fn number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_column_order_and_leave_absent_cells_out() {
        let rows: Vec<Record> = vec![
            vec![
                ("z".into(), Some(1.into())),
                ("a".into(), Some("x\"y".into())),
            ],
            vec![("z".into(), Some(number(f64::NAN))), ("a".into(), None)],
        ];
        assert_eq!(
            to_json(&rows),
            "[\n{\"z\":1,\"a\":\"x\\\"y\"},\n{\"z\":null}\n]\n"
        );
        let back: Vec<serde_json::Value> = serde_json::from_str(&to_json(&rows)).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(to_json(&[]), "[\n]\n");
    }
}
