//! What `gpumemsim compare` writes from a [`Comparison`]: the markdown report, the one-line summary,
//! the cases as CSV and JSON records, the summary JSON (schema `gpumemsim-comparison` version 2) and
//! the charts (`simulated-vs-measured`, `contention`, `litmus`). The comparison itself (simulating
//! each case, the metrics) is in the parent module.

use super::{Comparison, LitmusRow, Metrics, Row, SlopeRow};
use crate::report::plot::{Axis, BarLayout, BarSeries, Chart, Series};
use crate::report::records;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn fmt_ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

fn fmt_err(e: Option<f64>) -> String {
    e.map(|e| format!("{:+.1}%", 100.0 * e))
        .unwrap_or_else(|| "—".into())
}

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

fn fmt_metrics(m: &Metrics) -> String {
    format!(
        "n = {}, MAPE {}, mean signed error {}, Pearson r {}",
        m.n,
        fmt_opt(m.mape_percent, |v| format!("{v:.1}%")),
        fmt_opt(m.mean_error_percent, |v| format!("{v:+.1}%")),
        fmt_opt(m.pearson_r, |v| format!("{v:.3}"))
    )
}

impl Comparison {
    /// The report as markdown: header, metrics, slopes, litmus, the full table, what was left out.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Simulated vs measured\n\nMeasured: `{}` on **{}** ({}){}.\n\nSimulated: `{}` at {} MHz{}. \
             Dispatch overhead subtracted from every measurement: {}. Error = (simulated − measured) / \
             measured: positive means the simulator is too slow.\n",
            self.measurement,
            self.adapter,
            self.measured_on,
            [
                (
                    self.cpu_adapter,
                    " — **a CPU adapter: these timings do not describe a GPU; this comparison only \
                     proves the pipeline**"
                ),
                (
                    self.partial,
                    " — **a partial measurement: the run stopped before its end; the cases below are \
                     those it finished**"
                ),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, text)| *text)
            .collect::<String>(),
            self.config,
            self.core_mhz,
            if self.warm_l2 {
                ", each case starting with its buffers in the L2 (as the harness's copy of fresh \
                 memory before each run leaves them; `--cold-l2`: empty caches)"
            } else {
                ", each case starting with empty caches (`--cold-l2`)"
            },
            fmt_ns(self.overhead_ns)
        );
        match &self.clock {
            None if self.rows.is_empty() => {}
            None => {
                let _ = writeln!(
                    s,
                    "Clock probe: none in this measurement file (written before `gpu::clock`, or not by \
                     `measure`): a case may have run at an idle clock.\n"
                );
            }
            Some(c) => {
                let _ = write!(
                    s,
                    "Clock probe (`gpu::clock`): reference {}, settled {} time{}; ",
                    fmt_ns(c.reference_ns),
                    c.settles,
                    if c.settles == 1 { "" } else { "s" }
                );
                if c.slow.is_empty() {
                    let _ = writeln!(
                        s,
                        "every case's probes ran within {:.0} % of it.\n",
                        super::super::clock::RESETTLE * 100.0
                    );
                } else {
                    let list: Vec<String> = c
                        .slow
                        .iter()
                        .map(|(k, d)| format!("`{k}` +{:.0} %", d * 100.0))
                        .collect();
                    let _ = writeln!(
                        s,
                        "{} case{} ran beside a probe more than {:.0} % slower (a lower clock, or a \
                         busy CPU adapter): {}.\n",
                        c.slow.len(),
                        if c.slow.len() == 1 { "" } else { "s" },
                        super::super::clock::RESETTLE * 100.0,
                        list.join(", ")
                    );
                }
            }
        }
        let _ = writeln!(s, "## Error metrics\n");
        let _ = writeln!(
            s,
            "| scope | n | MAPE | mean signed error | Pearson r |\n|---|---|---|---|---|"
        );
        let line = |name: &str, m: &Metrics| {
            format!(
                "| {name} | {} | {} | {} | {} |\n",
                m.n,
                fmt_opt(m.mape_percent, |v| format!("{v:.1}%")),
                fmt_opt(m.mean_error_percent, |v| format!("{v:+.1}%")),
                fmt_opt(m.pearson_r, |v| format!("{v:.3}"))
            )
        };
        s += &line("all cases", &self.overall);
        for (g, m) in &self.groups {
            s += &line(&format!("group `{g}`"), m);
        }
        s += &line("latency slopes", &self.slope_metrics);
        if !self.slopes.is_empty() {
            let _ = writeln!(
                s,
                "\n## Latency slopes (ns per unit of the swept parameter)\n\n\
                 | fit | measured | simulated | error |\n|---|---|---|---|"
            );
            for r in &self.slopes {
                let _ = writeln!(
                    s,
                    "| `{}` | {:.1} ns | {:.1} ns | {} |",
                    r.name,
                    r.measured_ns,
                    r.simulated_ns,
                    fmt_err(Some(r.error))
                );
            }
        }
        if !self.litmus.is_empty() {
            let _ = writeln!(
                s,
                "\n## Litmus weak outcomes\n\n| test | variant | shader | measured weak / instances | measured rate | simulated weak / instances | simulated rate | model allows weak |\n|---|---|---|---|---|---|---|---|"
            );
            for l in &self.litmus {
                let _ = writeln!(
                    s,
                    "| {} | {} | {}{} | {} / {} | {:.4} | {} / {} | {:.4} | {} |",
                    l.test,
                    l.variant.name(),
                    l.shader.map_or("wgsl", |p| p.name()),
                    if l.weakened.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} weakened)", l.weakened.len())
                    },
                    l.measured_weak,
                    l.measured_instances,
                    l.measured_rate(),
                    l.simulated_weak,
                    l.simulated_instances,
                    l.simulated_rate(),
                    match l.model_allows_weak {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "undecided",
                    }
                );
            }
            if self.litmus.iter().any(|l| !l.weakened.is_empty()) {
                let _ = writeln!(
                    s,
                    "\n*weakened*: the GPU ran an order or scope weaker than written (the Vulkan memory \
                     model has no seq_cst, and no scope wider than device); the measurement file lists each."
                );
            }
        }
        let _ = writeln!(
            s,
            "\n## Cases\n\n| benchmark | parameters | measured (median) | min–max | measured − overhead | simulated | cycles | error |\n|---|---|---|---|---|---|---|---|"
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} – {} | {} | {} | {} | {} |",
                r.bench,
                r.case,
                fmt_ns(r.measured_ns),
                fmt_ns(r.measured_min_ns),
                fmt_ns(r.measured_max_ns),
                fmt_ns(r.kernel_ns),
                fmt_ns(r.simulated_ns),
                r.cycles,
                fmt_err(r.error)
            );
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(s, "\n## Left out\n");
            for (k, why) in &self.skipped {
                let why: Vec<&str> = why.lines().map(str::trim).collect();
                let _ = writeln!(s, "- `{k}`: {}", why.join(" / "));
            }
        }
        s
    }

    /// The short summary the CLI prints.
    pub fn summary(&self) -> String {
        // A case whose median is at or below the dispatch overhead has no kernel time to compare.
        let compared = self.rows.iter().filter(|r| r.error.is_some()).count();
        let no_time = self.rows.len() - compared;
        let mut s = format!(
            "{compared} cases compared ({} left out{}); measured on {}{}{}, simulated with {}\n",
            self.skipped.len(),
            if no_time > 0 {
                format!(
                    ", {no_time} with a median at or below the dispatch overhead of {} ns: no \
                     kernel time to compare",
                    crate::stats::fmt_num(self.overhead_ns)
                )
            } else {
                String::new()
            },
            self.adapter,
            if self.cpu_adapter {
                " (CPU adapter: not GPU timings)"
            } else {
                ""
            },
            if self.partial {
                " (partial: the run stopped before its end)"
            } else {
                ""
            },
            self.config
        );
        s += &format!("all cases       {}\n", fmt_metrics(&self.overall));
        for (g, m) in &self.groups {
            s += &format!("{g:<15} {}\n", fmt_metrics(m));
        }
        s += &format!("latency slopes  {}\n", fmt_metrics(&self.slope_metrics));
        s
    }

    /// Tidy CSV of the rows.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "bench,group,case,measured_ns,measured_min_ns,measured_max_ns,kernel_ns,simulated_ns,cycles,error\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},\"{}\",{},{},{},{},{},{},{}",
                r.bench,
                r.group,
                r.case,
                r.measured_ns,
                r.measured_min_ns,
                r.measured_max_ns,
                r.kernel_ns,
                r.simulated_ns,
                r.cycles,
                r.error.map(|e| e.to_string()).unwrap_or_default()
            );
        }
        s
    }
}

/// `comparison.summary.json` (schema [`records::COMPARISON`]): everything of a comparison but its
/// cases, which `comparison.json` holds as records.
#[derive(Serialize)]
struct SummaryDoc<'a> {
    schema: &'static str,
    version: u32,
    measurement: &'a str,
    adapter: &'a str,
    cpu_adapter: bool,
    measured_on: &'a str,
    config: &'a str,
    core_mhz: u32,
    overhead_ns: f64,
    /// Rows of `comparison.json`.
    cases: usize,
    skipped: Vec<Skipped<'a>>,
    overall: Metrics,
    groups: &'a BTreeMap<String, Metrics>,
    slopes: &'a [SlopeRow],
    slope_metrics: Metrics,
    litmus: &'a [LitmusRow],
}

#[derive(Serialize)]
struct Skipped<'a> {
    case: &'a str,
    reason: &'a str,
}

impl Comparison {
    /// `comparison.json`: one record per case (the rows of `comparison.csv`, with each case's key
    /// and parameters), which `pandas.read_json` reads as it is.
    pub fn cases_json(&self) -> String {
        records::of_rows(&self.rows)
    }

    /// `comparison.summary.json`: the schema's name and version, what was compared, the metrics, the
    /// latency slopes, the litmus rates and the cases left out.
    pub fn summary_json(&self) -> String {
        let doc = SummaryDoc {
            schema: records::COMPARISON.schema,
            version: records::COMPARISON.version,
            measurement: &self.measurement,
            adapter: &self.adapter,
            cpu_adapter: self.cpu_adapter,
            measured_on: &self.measured_on,
            config: &self.config,
            core_mhz: self.core_mhz,
            overhead_ns: self.overhead_ns,
            cases: self.rows.len(),
            skipped: self
                .skipped
                .iter()
                .map(|(case, reason)| Skipped { case, reason })
                .collect(),
            overall: self.overall,
            groups: &self.groups,
            slopes: &self.slopes,
            slope_metrics: self.slope_metrics,
            litmus: &self.litmus,
        };
        serde_json::to_string_pretty(&doc).expect("a comparison summary serialises") + "\n"
    }
}

impl Comparison {
    /// The charts of the comparison (none when no case has a point to draw).
    pub fn charts(&self) -> Vec<(String, Chart)> {
        let mut charts = Vec::new();
        let mut by_group: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
        for r in self.rows.iter().filter(|r| r.error.is_some()) {
            by_group
                .entry(&r.group)
                .or_default()
                .push((r.kernel_ns, r.simulated_ns));
        }
        // Cases measured at or below the dispatch overhead have no kernel time to draw: the x axis
        // says how many.
        let not_drawn = |rows: &mut dyn Iterator<Item = &Row>, what: &str| match rows
            .filter(|r| r.error.is_none())
            .count()
        {
            0 => what.to_string(),
            1 => format!("{what} (1 measured case not above the dispatch overhead: not drawn)"),
            n => format!("{what} ({n} measured cases not above the dispatch overhead: not drawn)"),
        };
        if !by_group.is_empty() {
            let series = by_group
                .into_iter()
                .map(|(g, pts)| Series::new(g, pts))
                .collect();
            let title = if self.cpu_adapter {
                format!(
                    "Simulated vs measured ({}: a CPU adapter, not GPU timings)",
                    self.adapter
                )
            } else {
                format!("Simulated vs measured ({})", self.adapter)
            };
            charts.push((
                "simulated-vs-measured".to_string(),
                Chart::scatter(
                    title,
                    Axis::log(
                        not_drawn(&mut self.rows.iter(), "measured kernel time"),
                        "ns",
                    ),
                    Axis::log(format!("simulated on {}", self.config), "ns"),
                    series,
                    true,
                ),
            ));
        }
        // Contention: ns per atomic (kernel time / T) against T, per benchmark and form.
        let mut curves: BTreeMap<(String, &str), (Vec<(f64, f64)>, Vec<(f64, f64)>)> =
            BTreeMap::new();
        for r in self.rows.iter().filter(|r| r.group == "contention") {
            let (Some(&t), Some(&ret)) = (r.params.get("T"), r.params.get("RET")) else {
                continue;
            };
            let form = if ret != 0 {
                "returning"
            } else {
                "non-returning"
            };
            let e = curves.entry((r.bench.clone(), form)).or_default();
            if r.error.is_some() {
                e.0.push((t as f64, r.kernel_ns / t as f64));
            }
            e.1.push((t as f64, r.simulated_ns / t as f64));
        }
        // One colour per benchmark and form: measured filled on a solid line, simulated open on a
        // dashed one, so that each case's two curves read as a pair.
        let mut series = Vec::new();
        for (k, ((bench, form), (measured, simulated))) in curves.into_iter().enumerate() {
            let name = bench.trim_start_matches("contention_").replace('_', " ");
            if !measured.is_empty() {
                series.push(
                    Series::new(format!("{name}, {form}: measured"), measured).with_mark(k, false),
                );
            }
            series.push(
                Series::new(format!("{name}, {form}: simulated"), simulated).with_mark(k, true),
            );
        }
        if !series.is_empty() {
            let threads = not_drawn(
                &mut self.rows.iter().filter(|r| r.group == "contention"),
                "contending threads T",
            );
            charts.push((
                "contention".to_string(),
                Chart::lines(
                    "Atomic add: time per operation against contending threads",
                    Axis::log(threads, "threads"),
                    Axis::log("kernel time / T", "ns"),
                    series,
                ),
            ));
        }
        if !self.litmus.is_empty() {
            let categories = self
                .litmus
                .iter()
                .map(|l| format!("{} {}", l.test, l.variant.name()))
                .collect();
            let pct = |f: fn(&LitmusRow) -> f64| self.litmus.iter().map(|l| 100.0 * f(l)).collect();
            charts.push((
                "litmus".to_string(),
                Chart::bars(
                    "Litmus weak outcomes: measured against simulated",
                    Axis::linear("test and variant", ""),
                    Axis::linear("weak outcomes", "% of instances"),
                    categories,
                    vec![
                        BarSeries::new("measured", pct(LitmusRow::measured_rate)),
                        BarSeries::new("simulated", pct(LitmusRow::simulated_rate)),
                    ],
                    BarLayout::Grouped,
                )
                // Room for every test's label: about 24 pixels a category.
                .with_size((24 * self.litmus.len() as u32 + 200).max(900), 640),
            ));
        }
        charts.extend(self.outcome_charts());
        charts
    }

    /// One chart per litmus test: each variant's final states, measured beside simulated.
    fn outcome_charts(&self) -> Vec<(String, Chart)> {
        let mut tests: Vec<&str> = Vec::new();
        for l in &self.litmus {
            if !tests.contains(&l.test.as_str()) {
                tests.push(&l.test);
            }
        }
        let mut charts = Vec::new();
        for test in tests {
            let rows: Vec<&LitmusRow> = self.litmus.iter().filter(|l| l.test == test).collect();
            let mut categories = Vec::new();
            let (mut measured, mut simulated) = (Vec::new(), Vec::new());
            for l in &rows {
                for st in &l.states {
                    let mark = if st.weak { "* " } else { "" };
                    let state = st.state.trim_end_matches(';').replace(';', "");
                    categories.push(format!("{}: {mark}{state}", l.variant.name()));
                    let pct = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
                    measured.push(pct(st.measured, l.measured_instances));
                    simulated.push(pct(st.simulated, l.simulated_instances));
                }
            }
            if categories.is_empty() {
                continue;
            }
            let n = categories.len() as u32;
            let slug: String = test
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            charts.push((
                format!("litmus-outcomes-{slug}"),
                Chart::bars(
                    format!("{test}: final states, measured beside simulated"),
                    Axis::linear(
                        "variant: final state (* = the condition's witness; no bar: 0 instances)",
                        "",
                    ),
                    Axis::log("instances", "%"),
                    categories,
                    vec![
                        BarSeries::new(format!("measured on {}", self.adapter), measured),
                        BarSeries::new(format!("simulated on {}", self.config), simulated),
                    ],
                    BarLayout::Grouped,
                )
                // Two bars a category, each about 12 pixels wide.
                .with_size((28 * n + 240).max(900), 700),
            ));
        }
        charts
    }
}
