//! Sweeps: run the cross product of config parameters, workload launch parameters and seeds, in
//! parallel, resumably, optionally as one shard of many, and report it.
//!
//! | step | module |
//! |---|---|
//! | spec TOML → validated plan (fails before any run) | [`spec`] |
//! | points, ids, manifest | [`plan`] |
//! | running a shard on a rayon pool, one atomic result file per point | [`exec`] |
//! | the shard count in the plan, which shard a task runs (`--shard I`, `auto` from Slurm) | [`shard`] |
//! | done / failed / missing per shard, builds, what to resubmit (`sweep status`) | [`status`] |
//! | Slurm job array and merge job scripts, `sweep submit --slurm` | [`slurm`] |
//! | plain progress lines for logs (done / total, rate, ETA) | [`progress`] |
//! | combined `results.csv` / `results.json`, `sweep merge` | [`results`] |
//! | chart specs, checked against the plan | [`charts`], with expressions in [`expr`] |
//! | charts, data tables and headline tables from the results | [`figures`] |
//! | the report (`index.html`, `charts/`) | [`finish`] here, writing through [`crate::report`] |
//!
//! An output folder holds `sweep.json` (the manifest, with the shard count), `points/ID.json` (one
//! result per point, stamped with the simulator build), and, once every point has a result,
//! `results.csv`, `results.json`, `results.schema.json`, `charts/NAME.{png,svg}` and `index.html`; `sweep submit` adds
//! `slurm/` (the job scripts, the submissions) and `logs/`. Nothing here models hardware: a point is
//! one [`crate::machine::run`].

pub mod caption;
pub mod charts;
pub mod exec;
pub mod expr;
pub mod figures;
pub mod plan;
pub mod progress;
pub mod results;
pub mod shard;
pub mod slurm;
pub mod spec;
pub mod status;

use crate::report::html::{Figure, HtmlTable, Report, Section};
use crate::report::plot::PlotError;
use results::ColumnKind;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SweepError {
    /// The spec is wrong; the message names the key.
    #[error("{file}: {message}")]
    Spec { file: String, message: String },
    /// The plan cannot be made or run as asked.
    #[error("{0}")]
    Plan(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// An output folder does not hold what it should (missing points, another sweep's files).
    #[error("{path}: {message}")]
    Output { path: String, message: String },
    #[error("--shard {arg}: {message}")]
    Shard { arg: String, message: String },
    /// A scheduler command failed or cannot run (`sbatch`, `squeue`).
    #[error("`{command}`: {message}")]
    Scheduler { command: String, message: String },
    /// A `sweep submit` option is wrong.
    #[error("--{option} {value:?}: {message}")]
    Option {
        option: String,
        value: String,
        message: String,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// What [`finish`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub rows: usize,
    /// Runs with status `error` or `check_failed`.
    pub failed: usize,
    pub charts: Vec<PathBuf>,
    /// Charts that could not be drawn, with the reason (also shown in the report).
    pub chart_errors: Vec<String>,
    /// Series or runs a chart left out for a missing column, naming both (also in the report).
    pub warnings: Vec<String>,
    pub index: PathBuf,
}

/// Draws one chart from a complete output folder into `out` (`.png` or `.svg`), after checking it
/// against the sweep like a spec's `[[chart]]`, in the order a reader meets its parts: names and
/// expressions, then statistic names, then the marks. Returns the warnings (series left out).
pub fn plot(
    dir: &Path,
    mut chart: charts::ChartSpec,
    out: &Path,
) -> Result<Vec<String>, SweepError> {
    let m = results::read_manifest(dir)?;
    let bad = |e: String| SweepError::Plan(format!("chart: {e}"));
    chart.check_names(0, &m).map_err(bad)?;
    let res = match results::load_results(dir, &m) {
        Ok(res) => res,
        // A finished folder shipped without its point files (reports/*/): its combined table.
        Err(e) => match results::load_table_results(dir, &m) {
            Some(_) if chart.kind == charts::ChartKind::Outcomes => {
                return Err(SweepError::Output {
                    path: dir.join("points").display().to_string(),
                    message: "an outcomes chart needs the point files (results.json does not say \
                              which final states are witnesses); rerun the sweep into a fresh folder \
                              and plot from there"
                        .to_string(),
                })
            }
            Some(res) => res,
            None => return Err(e),
        },
    };
    let table = results::Table::build(&m, &res);
    let reports: Vec<String> = table
        .columns
        .iter()
        .filter(|c| c.kind == ColumnKind::Report)
        .map(|c| c.name.trim_start_matches("report.").to_string())
        .collect();
    let mut with_chart = m.clone();
    with_chart.charts = vec![chart.clone()];
    if let Some(sample) = res
        .iter()
        .find(|r| matches!(r.outcome, exec::Outcome::Ok { .. }))
    {
        charts::check_columns(&with_chart, sample, &reports)?;
    }
    chart.check_marks(&m).map_err(bad)?;
    let built = figures::build(&chart, &m, &table)?;
    built.chart.save_as(out)?;
    Ok(built.warnings)
}

/// A chart's caption with its fields filled from the results (`caption.rs`); a field that cannot be
/// filled is said in the report instead of the caption, and counted with the chart errors.
fn filled_caption(
    spec: &charts::ChartSpec,
    table: &results::Table,
    errors: &mut Vec<String>,
) -> Option<String> {
    let text = spec.caption.as_ref()?;
    Some(match caption::fill(text, table) {
        Ok(t) => t,
        Err(e) => {
            let e = format!("chart \"{}\": {e}", spec.name);
            errors.push(e.clone());
            format!("The caption could not be filled: {e}")
        }
    })
}

/// Combines a complete output folder: `results.csv`, `results.json`, the charts and `index.html`.
pub fn finish(dir: &Path) -> Result<Finished, SweepError> {
    let (m, table) = results::combine(dir)?;
    let chart_dir = dir.join("charts");
    std::fs::create_dir_all(&chart_dir).map_err(exec::io_err(&chart_dir))?;
    // Charts of an earlier version of the spec would outlive their `[[chart]]`: the folder is the
    // report's own, so drawings no chart of this sweep names are removed.
    let entries = std::fs::read_dir(&chart_dir).map_err(exec::io_err(&chart_dir))?;
    for e in entries.flatten() {
        let p = e.path();
        let drawing = p.extension().is_some_and(|x| x == "png" || x == "svg");
        let stem = p.file_stem().map(|s| s.to_string_lossy().to_string());
        if drawing && !m.charts.iter().any(|c| Some(&c.name) == stem.as_ref()) {
            std::fs::remove_file(&p).map_err(exec::io_err(&p))?;
        }
    }

    let failed_rows: Vec<usize> = (0..table.rows.len())
        .filter(|&r| {
            table
                .get(r, "status")
                .is_some_and(|s| s.to_string() != "ok")
        })
        .collect();

    let mut sections = Vec::new();
    let mut files = Vec::new();
    let mut chart_errors = Vec::new();
    let mut warnings = Vec::new();
    let mut headline = Section {
        heading: "At a glance".into(),
        ..Default::default()
    };
    for spec in m
        .charts
        .iter()
        .filter(|c| c.kind == charts::ChartKind::Headline)
    {
        match figures::headline(spec, &m, &table) {
            Ok((caption, data, w)) => {
                headline.tables.push(HtmlTable {
                    caption,
                    header: data.header,
                    rows: data.rows,
                });
                headline
                    .text
                    .extend(filled_caption(spec, &table, &mut chart_errors));
                headline
                    .text
                    .extend(w.iter().map(|w| format!("Left out: {w}")));
                warnings.extend(w);
            }
            Err(e) => {
                headline
                    .text
                    .push(format!("This headline could not be made: {e}"));
                chart_errors.push(e.to_string());
            }
        }
    }
    for spec in m
        .charts
        .iter()
        .filter(|c| c.kind != charts::ChartKind::Headline)
    {
        let mut section = Section {
            heading: spec.title.clone(),
            ..Default::default()
        };
        match figures::build(spec, &m, &table).and_then(|built| {
            let saved = built.chart.save(&chart_dir, &spec.name)?;
            Ok((built, saved))
        }) {
            Ok((built, saved)) => {
                files.push(saved.png.clone());
                files.push(saved.svg.clone());
                section.figure = Some(Figure {
                    svg: format!("charts/{}.svg", spec.name),
                    png: format!("charts/{}.png", spec.name),
                    alt: built.chart.title.clone(),
                });
                section
                    .text
                    .extend(filled_caption(spec, &table, &mut chart_errors));
                section
                    .text
                    .extend(built.warnings.iter().map(|w| format!("Left out: {w}")));
                warnings.extend(built.warnings);
                section.tables.push(HtmlTable {
                    caption:
                        "Data behind the chart (mean over seeds; min and max where seeds differ)"
                            .into(),
                    header: built.data.header,
                    rows: built.data.rows,
                });
                section.collapsed = true;
            }
            Err(e) => {
                section
                    .text
                    .push(format!("This chart could not be drawn: {e}"));
                chart_errors.push(e.to_string());
            }
        }
        sections.push(section);
    }

    // The runs table: parameters, outcome, cycles and the statistics the charts read (all columns are in
    // results.csv).
    let mut shown: Vec<String> = table
        .columns
        .iter()
        .filter(|c| {
            matches!(
                c.kind,
                ColumnKind::Meta | ColumnKind::Param | ColumnKind::Outcome
            )
        })
        .filter(|c| c.name != "error")
        .map(|c| c.name.clone())
        .collect();
    let mut wanted = vec!["kernel.cycles".to_string()];
    for c in &m.charts {
        for text in
            c.y.iter()
                .chain(c.layers.iter().map(|l| &l.y))
                .chain(std::iter::once(&c.x))
        {
            if let Ok(e) = expr::Expr::parse(text) {
                wanted.extend(e.columns().into_iter().map(String::from));
            }
        }
    }
    for w in wanted {
        if table.column(&w).is_some() && !shown.contains(&w) {
            shown.push(w);
        }
    }
    let header: Vec<String> = shown
        .iter()
        .map(|n| match table.column(n) {
            Some(c) if !c.unit.is_empty() => format!("{n} ({})", c.unit),
            _ => n.clone(),
        })
        .collect();
    let cell = |r: usize, n: &str| table.get(r, n).map(|v| v.to_string()).unwrap_or_default();
    let rows: Vec<Vec<String>> = (0..table.rows.len())
        .map(|r| shown.iter().map(|n| cell(r, n)).collect())
        .collect();
    sections.push(Section {
        heading: format!("Runs ({})", table.rows.len()),
        text: vec![format!(
            "One row per run; every statistic ({} columns) is in results.csv and results.json, \
             with the units in results.schema.json.",
            table.columns.len()
        )],
        tables: vec![HtmlTable {
            caption: String::new(),
            header,
            rows,
        }],
        collapsed: table.rows.len() > 40,
        ..Default::default()
    });
    if !failed_rows.is_empty() {
        sections.push(Section {
            heading: format!("Runs that failed ({})", failed_rows.len()),
            tables: vec![HtmlTable {
                caption: String::new(),
                header: vec![
                    "point".into(),
                    "workload".into(),
                    "seed".into(),
                    "status".into(),
                    "error".into(),
                ],
                rows: failed_rows
                    .iter()
                    .map(|&r| {
                        ["point", "workload", "seed", "status", "error"]
                            .iter()
                            .map(|n| cell(r, n))
                            .collect()
                    })
                    .collect(),
            }],
            ..Default::default()
        });
    }

    let mut facts = vec![
        ("Config".to_string(), m.configs.join(", ")),
        (
            "Runs".to_string(),
            format!(
                "{} ({} each: {})",
                m.points.len(),
                if m.seeds.len() == 1 {
                    "one seed".to_string()
                } else {
                    format!("{} seeds", m.seeds.len())
                },
                m.seeds
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    ];
    let mut workloads: Vec<&str> = Vec::new();
    for p in &m.points {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    facts.push(("Workloads".into(), workloads.join(", ")));
    for c in &m.columns {
        let mut vals: Vec<String> = Vec::new();
        for p in &m.points {
            if let Some(v) = p.params.get(c) {
                let s = v.to_string();
                if !vals.contains(&s) {
                    vals.push(s);
                }
            }
        }
        facts.push((c.clone(), vals.join(", ")));
    }
    if !failed_rows.is_empty() {
        facts.push(("Failed runs".into(), failed_rows.len().to_string()));
    }
    let mut builds: Vec<String> = Vec::new();
    for r in 0..table.rows.len() {
        let b = cell(r, "build");
        if !b.is_empty() && !builds.contains(&b) {
            builds.push(b);
        }
    }
    facts.push((
        "Simulator".into(),
        format!("gpumemsim {}", builds.join(", gpumemsim ")),
    ));

    let report = Report {
        title: m.name.clone(),
        intro: if m.description.is_empty() {
            vec![]
        } else {
            vec![m.description.clone()]
        },
        headline: (!headline.tables.is_empty() || !headline.text.is_empty()).then_some(headline),
        facts,
        files: vec![
            (
                results::RESULTS_CSV.into(),
                "one row per run, every statistic".into(),
            ),
            (
                results::RESULTS_JSON.into(),
                "the same rows as JSON records".into(),
            ),
            (
                results::RESULTS_SCHEMA.into(),
                "each column's unit and kind".into(),
            ),
            (
                exec::MANIFEST.into(),
                "the plan: every point and chart".into(),
            ),
        ],
        sections,
    };
    let index = report
        .write(dir)
        .map_err(exec::io_err(&dir.join("index.html")))?;
    Ok(Finished {
        rows: table.rows.len(),
        failed: failed_rows.len(),
        charts: files,
        chart_errors,
        warnings,
        index,
    })
}
