//! Captions filled from the results (issue 45 item 2): a chart's `caption` may hold fields
//! `{EXPR @ COLUMN=VALUE, ...}` (a value with a comma in double quotes), each replaced by EXPR (the chart expressions' grammar: columns,
//! numbers, `+ - * /`, parentheses) evaluated on the runs whose columns have those values, averaged
//! over their seeds. So a sentence such as "1.77 µs at 50 slices" is computed from the sweep it
//! describes and cannot go stale.
//!
//! The runs a field selects must differ in nothing but the seed; a field that selects none, or runs
//! that differ in a swept column, is an error naming the field and what to add. Numbers print
//! whole when they are whole, else with three significant digits. Text without `{` is unchanged; a
//! literal brace is written `{{` or `}}`.
//!
//! Not here: formats or units per field (write the conversion in EXPR: `{kernel.time / 1000 @ ...} µs`).

use super::expr::Expr;
use super::plan::Value;
use super::results::{ColumnKind, Table};

/// `caption` with every field filled from `table`; the error names the field and why.
pub fn fill(caption: &str, table: &Table) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = caption;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let brace = &rest[i..i + 1];
        if rest[i + 1..].starts_with(brace) {
            out.push_str(brace);
            rest = &rest[i + 2..];
            continue;
        }
        if brace == "}" {
            return Err(format!(
                "an unmatched `}}` after \"{}\" (a literal brace is `}}}}`)",
                &rest[..i]
            ));
        }
        let Some(end) = rest[i..].find('}') else {
            return Err(format!(
                "field `{}` has no closing `}}`",
                rest[i..].trim_end()
            ));
        };
        let field = &rest[i + 1..i + end];
        let v = value(field, table).map_err(|e| format!("caption field `{{{field}}}`: {e}"))?;
        out.push_str(&number(v));
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// One field's value: the mean of EXPR over the runs it selects.
fn value(field: &str, table: &Table) -> Result<f64, String> {
    let (expr, selection) = field
        .split_once('@')
        .ok_or("expected `EXPR @ COLUMN=VALUE, ...` (the runs to take EXPR from)")?;
    let expr = Expr::parse(expr.trim()).map_err(|e| format!("`{}`: {e}", expr.trim()))?;
    if let Some(c) = expr
        .columns()
        .into_iter()
        .find(|c| table.column(c).is_none())
    {
        return Err(format!("no column is called `{c}`"));
    }
    let mut wanted: Vec<(&str, Value)> = Vec::new();
    for pair in pairs(selection).into_iter().filter(|p| !p.is_empty()) {
        let (col, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("`{pair}`: expected COLUMN=VALUE"))?;
        let col = col.trim();
        if table.column(col).is_none() {
            return Err(format!("no column is called `{col}`"));
        }
        wanted.push((col, Value::parse_cli(v.trim())));
    }
    let same = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a.to_string() == b.to_string(),
    };
    let rows: Vec<usize> = (0..table.rows.len())
        .filter(|&r| {
            wanted
                .iter()
                .all(|(c, v)| table.get(r, c).is_some_and(|got| same(got, v)))
        })
        .collect();
    if rows.is_empty() {
        return Err("no run has these values".into());
    }
    // The runs may differ only in their seed: any other swept column must be named.
    let varying: Vec<&str> = table
        .columns
        .iter()
        .filter(|c| c.kind == ColumnKind::Param || c.name == "workload")
        .map(|c| c.name.as_str())
        .filter(|c| {
            let shown = |r: usize| table.get(r, c).map(|v| v.to_string());
            rows.iter().any(|&r| shown(r) != shown(rows[0]))
        })
        .collect();
    if !varying.is_empty() {
        return Err(format!(
            "{} runs match, differing in {}: name {} too",
            rows.len(),
            varying.join(", "),
            if varying.len() == 1 { "it" } else { "them" }
        ));
    }
    let mut sum = 0.0;
    for &r in &rows {
        let col = |c: &str| table.get(r, c).and_then(Value::as_f64);
        sum += expr.eval(&col).ok_or_else(|| {
            format!(
                "run {} has no value for it (a column missing or not a number, or a division by 0)",
                table
                    .get(r, "point")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| r.to_string())
            )
        })?;
    }
    Ok(sum / rows.len() as f64)
}

/// `a=1, w="x, y"` split at the commas outside double quotes, each part trimmed.
fn pairs(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// Whole numbers whole, others with three significant digits.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::results::Column;

    fn table() -> Table {
        let col = |name: &str, kind| Column {
            name: name.into(),
            unit: String::new(),
            kind,
        };
        let row = |w: &str, slices: i64, seed: i64, time: f64| {
            vec![
                Some(Value::Str(w.into())),
                Some(Value::Int(seed)),
                Some(Value::Int(slices)),
                Some(Value::Float(time)),
            ]
        };
        Table::from_parts(
            vec![
                col("workload", ColumnKind::Meta),
                col("seed", ColumnKind::Meta),
                col("l2.slices", ColumnKind::Param),
                col("kernel.time", ColumnKind::Stat),
            ],
            vec![
                row("hist", 50, 0, 1770.0),
                row("hist", 50, 1, 1774.0),
                row("hist", 400, 0, 1840.0),
                row("other, 2", 50, 0, 99.0),
            ],
        )
    }

    #[test]
    fn fields_are_filled_from_the_runs_they_select_averaged_over_seeds() {
        let t = table();
        assert_eq!(
            fill(
                "{kernel.time / 1000 @ workload=hist, l2.slices=50} µs at 50 slices, \
                 {kernel.time/1000 @ workload=hist, l2.slices=400} at 400; {{x}} {kernel.time @ workload=\"other, 2\"}",
                &t
            )
            .unwrap(),
            "1.77 µs at 50 slices, 1.84 at 400; {x} 99"
        );
        assert_eq!(fill("no fields", &t).unwrap(), "no fields");
    }

    #[test]
    fn a_field_that_selects_no_run_or_several_cases_names_what_is_missing() {
        let t = table();
        let e = |c: &str| fill(c, &t).unwrap_err();
        assert_eq!(
            e("at {kernel.time @ workload=hist}"),
            "caption field `{kernel.time @ workload=hist}`: 3 runs match, differing in l2.slices: name it too"
        );
        assert_eq!(
            e("{kernel.time @ workload=hist, l2.slices=3}"),
            "caption field `{kernel.time @ workload=hist, l2.slices=3}`: no run has these values"
        );
        assert!(e("{kernel.time @ slices=3}").contains("no column is called `slices`"));
        assert!(e("{kernel.time}").contains("expected `EXPR @ COLUMN=VALUE, ...`"));
        assert!(
            e("{kernel.tim @ workload=\"other, 2\"}").contains("no column is called `kernel.tim`")
        );
        assert!(e("{kernel.time / 0 @ workload=\"other, 2\"}").contains("run 3 has no value"));
        assert!(e("open {kernel.time @ workload=hist").contains("no closing"));
        assert!(e("a } b").contains("unmatched"));
    }
}
