//! The `intervals` chart: a run's statistics over time, from the tidy CSV that `run --stats-interval N
//! --interval-csv FILE` writes (`cycle,location,metric,value,unit`; `machine/interval.rs`). One line
//! per chosen statistic (`LOCATION.METRIC`, e.g. `gpu.ipc`, `l2.atomics`), the interval's end cycle
//! on x. Statistics of different units do not share a chart (the error says which units).
//!
//! Not here: reading a sweep (the other kinds), smoothing, second y axes.

use super::plot::{Axis, Chart, Series};

/// One parsed row.
struct Row<'a> {
    cycle: f64,
    key: String,
    value: f64,
    unit: &'a str,
}

/// The chart of statistics `ys` (each `LOCATION.METRIC`) from the CSV text of `file`.
pub fn chart(text: &str, file: &str, ys: &[String], title: Option<&str>) -> Result<Chart, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == "cycle,location,metric,value,unit" => {}
        _ => {
            return Err(format!(
            "{file}:1:1: expected the header cycle,location,metric,value,unit (a file written by \
                 run --stats-interval N --interval-csv FILE)"
        ))
        }
    }
    let mut rows = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let bad = |col: usize, what: &str| {
            let at = f[..col.min(f.len())]
                .iter()
                .map(|s| s.len() + 1)
                .sum::<usize>()
                + 1;
            format!("{file}:{}:{at}: {what}", i + 1)
        };
        if f.len() != 5 {
            return Err(bad(0, &format!("expected 5 fields, found {}", f.len())));
        }
        let cycle: f64 = f[0]
            .parse()
            .map_err(|_| bad(0, "cycle: expected a number"))?;
        let value: f64 = f[3]
            .parse()
            .map_err(|_| bad(3, "value: expected a number"))?;
        rows.push(Row {
            cycle,
            key: format!("{}.{}", f[1], f[2]),
            value,
            unit: f[4],
        });
    }
    if ys.is_empty() {
        return Err("--y: name at least one statistic as LOCATION.METRIC, e.g. gpu.ipc".into());
    }
    let mut series = Vec::new();
    let mut unit: Option<&str> = None;
    for y in ys {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.key == y)
            .map(|r| (r.cycle, r.value))
            .collect();
        if pts.is_empty() {
            let mut known: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
            known.sort();
            known.dedup();
            return Err(format!(
                "--y {y}: {file} has no such statistic; it has: {}",
                known.join(", ")
            ));
        }
        let u = rows
            .iter()
            .find(|r| &r.key == y)
            .map(|r| r.unit)
            .unwrap_or("");
        match unit {
            Some(prev) if prev != u => {
                return Err(format!(
                    "--y {y}: its unit is {u:?}, the chart's is {prev:?}; draw statistics of different units in separate charts"
                ))
            }
            _ => unit = Some(u),
        }
        series.push(Series::new(y.clone(), pts));
    }
    // The first interval's end: the overrides' rows (`override.…`, at cycle 0) are not an interval.
    let every = rows
        .iter()
        .find(|r| r.cycle > 0.0)
        .map(|r| r.cycle)
        .unwrap_or(0.0);
    let title = title
        .map(str::to_string)
        .unwrap_or_else(|| format!("{} per {every} cycles", ys.join(", ")));
    let y_label = if ys.len() == 1 {
        ys[0].clone()
    } else {
        "value".into()
    };
    Ok(Chart::lines(
        title,
        Axis::linear("cycle (end of interval)", "cycles"),
        Axis::linear(y_label, unit.unwrap_or("")),
        series,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "cycle,location,metric,value,unit\n\
        100,gpu,ipc,1.5,warp instructions/cycle\n\
        100,l2,atomics,4,requests\n\
        200,gpu,ipc,0.5,warp instructions/cycle\n\
        200,l2,atomics,0,requests\n";

    #[test]
    fn intervals_chart_draws_the_chosen_statistic_over_cycles() {
        let c = chart(CSV, "f.csv", &["gpu.ipc".into()], None).unwrap();
        let png = c.render(crate::plot::Format::Png).unwrap();
        assert!(png.len() > 1000);
    }

    #[test]
    fn intervals_chart_refuses_unknown_statistics_and_mixed_units() {
        let e = chart(CSV, "f.csv", &["l2.reads".into()], None).unwrap_err();
        assert!(
            e.contains("no such statistic") && e.contains("gpu.ipc, l2.atomics"),
            "{e}"
        );
        let e = chart(CSV, "f.csv", &["gpu.ipc".into(), "l2.atomics".into()], None).unwrap_err();
        assert!(e.contains("different units"), "{e}");
        let e = chart("cycle,x\n", "f.csv", &["gpu.ipc".into()], None).unwrap_err();
        assert!(e.starts_with("f.csv:1:1:"), "{e}");
        let e = chart(
            "cycle,location,metric,value,unit\n1,a,b,zz,u\n",
            "f.csv",
            &["a.b".into()],
            None,
        )
        .unwrap_err();
        assert!(e.starts_with("f.csv:2:"), "{e}");
    }
}
