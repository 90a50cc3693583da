//! Running a plan: the points of one shard, in parallel on a rayon pool, one result file per point.
//!
//! Guarantees, and how they hold:
//! - *Identical to a serial run*: a point's result depends only on its config, job and seed (the machine
//!   is deterministic); results are files named by point id, and every combined output is built from
//!   them in plan order, never in completion order.
//! - *Resumable, and killed midway loses nothing written*: each result is written with
//!   [`crate::stats::write_atomic`] (temporary file + rename), so a point file is either whole or absent;
//!   a rerun skips every point whose file exists and describes the same point.
//! - *Builds never mix silently*: every result records the simulator build that computed it
//!   ([`crate::version::BUILD`]); resuming over results of another build is refused unless asked
//!   (`mix_builds`).
//! - *Shards*: a run may take one shard of the plan ([`super::shard`]); its summary says whether every
//!   point of the shard has a result and how many failed, whichever attempt ran them.
//!
//! A point is a kernel run on the machine or a litmus test run for its iterations (outcomes counted).
//! A run that fails (simulation error, watchdog) is a result too: it is recorded with its message so
//! that a rerun does not repeat it, and shows in the outputs with status `error`. A panic inside the
//! simulator is caught and recorded the same way (it is a simulator bug, named as such).

use super::plan::{Job, Plan, PointInfo};
pub use super::shard::Shard;
use super::status::{other_builds_error, BuildCount};
use super::SweepError;
use crate::litmus;
use crate::machine::{self, CheckOutcome};
use crate::stats::Stat;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Worker threads; `None`: one per core.
    pub jobs: Option<usize>,
    pub shard: Option<Shard>,
    /// Rerun points whose stored result is an error (`--retry-failed`).
    pub retry_failed: bool,
    /// Keep stored results of other simulator builds instead of refusing to resume (`--mix-builds`).
    pub mix_builds: bool,
}

/// What one point produced: the file `points/ID.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub point: PointInfo,
    /// The simulator that computed it ([`crate::version::BUILD`]); `None` in results written before
    /// builds were recorded.
    #[serde(default)]
    pub build: Option<String>,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The run completed (its checks may still have failed).
    Ok {
        stats: Vec<Stat>,
        reports: Vec<(String, i64)>,
        checks: Vec<CheckOutcome>,
        /// A litmus test's final states with their counts (empty for a kernel).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        states: Vec<StateCount>,
    },
    /// The run stopped with an error.
    Error { error: String },
}

impl Outcome {
    /// `ok`, `check_failed` or `error`.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Ok { checks, .. } if checks.iter().all(|c| c.passed) => "ok",
            Outcome::Ok { .. } => "check_failed",
            Outcome::Error { .. } => "error",
        }
    }
}

/// One final state of a litmus test and how often it was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateCount {
    /// `P0:r0=0; P1:r0=0;`
    pub state: String,
    pub count: u64,
    /// A witness of the test's condition (the outcome the test asks about).
    pub witness: bool,
}

/// Told about progress; the CLI draws a bar with it. Called from worker threads.
pub trait Progress: Sync {
    /// Before the first point runs: how many will run, how many were already done.
    fn start(&self, to_run: usize, already_done: usize);
    fn finished(&self, point: &PointInfo, outcome: &Outcome);
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: usize, _: usize) {}
    fn finished(&self, _: &PointInfo, _: &Outcome) {}
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecSummary {
    /// Points of this shard (all points without `--shard`).
    pub selected: usize,
    /// Of those, already done before this run.
    pub already_done: usize,
    /// Run now.
    pub ran: usize,
    /// Run now and failed (status `error`).
    pub failed: usize,
    /// Points of the selection whose result is an error, whichever run computed them (a failed point
    /// is rerun only with `retry_failed`).
    pub failed_in_selection: usize,
    /// Every point of the plan, in any shard, has its result in the output folder.
    pub complete: bool,
}

impl ExecSummary {
    /// Every selected point has a result and none is an error: what a shard's exit status reports.
    pub fn selection_done(&self) -> bool {
        self.failed_in_selection == 0
    }
}

pub const MANIFEST: &str = "sweep.json";
pub const POINTS: &str = "points";

pub fn point_path(out: &Path, id: &str) -> PathBuf {
    out.join(POINTS).join(format!("{id}.json"))
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SweepError + '_ {
    move |source| SweepError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The result stored for `info`, if its file exists, parses and describes this very point. A file
/// that does not parse cannot come from this tool's atomic writes; it is treated as absent (rerun).
pub fn read_point(out: &Path, info: &PointInfo) -> Option<PointResult> {
    check_point(out, info).ok().flatten()
}

/// The stored result of `info` in `out`: `Ok(None)` when there is no file, `Err(why)` when a file
/// is there but is damaged (not UTF-8, not JSON of a point result) or holds another point's result
/// (a file copied or renamed into place), so that `sweep status` names it instead of counting it
/// as missing.
pub fn check_point(out: &Path, info: &PointInfo) -> Result<Option<PointResult>, String> {
    let path = point_path(out, &info.id);
    if !path.exists() {
        return Ok(None);
    }
    let text = crate::text::read(&path).map_err(|e| e.to_string())?;
    let r: PointResult = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a point result of this gpumemsim version: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if r.point != *info {
        return Err(format!(
            "{}: holds the result of point {} ({} seed {}), not of point {} ({} seed {}): a file \
             swapped or copied from another sweep",
            path.display(),
            r.point.id,
            r.point.workload,
            r.point.seed,
            info.id,
            info.workload,
            info.seed
        ));
    }
    Ok(Some(r))
}

/// Runs one point of the plan.
pub fn run_point(plan: &Plan, index: usize) -> PointResult {
    let info = &plan.manifest.points[index];
    let (cfg, job) = &plan.runs[index];
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match job.as_ref() {
        Job::Kernel(w) => {
            let opts = machine::RunOptions {
                seed: info.seed,
                ..Default::default()
            };
            match machine::run(cfg, w, &opts) {
                Ok(r) => Outcome::Ok {
                    stats: r.stats.rows,
                    reports: r.reports,
                    checks: r.checks,
                    states: vec![],
                },
                Err(e) => Outcome::Error {
                    error: e.to_string(),
                },
            }
        }
        Job::Litmus(l) => {
            let opts = litmus::LitmusOptions {
                iterations: l.iterations,
                seed: info.seed,
                races: false,
                instances: l.instances,
                // Launches spread over the cores the sweep leaves idle; the counts do not depend on it.
                parallel: true,
            };
            match litmus::run(&l.test, cfg, &opts) {
                Ok(r) => litmus_outcome(&r),
                Err(e) => Outcome::Error {
                    error: e.to_string(),
                },
            }
        }
    }))
    .unwrap_or_else(|p| Outcome::Error {
        error: format!(
            "simulator panicked (a bug; please report it with this point): {}",
            p.downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("no message")
        ),
    });
    PointResult {
        point: info.clone(),
        build: Some(crate::version::BUILD.to_string()),
        outcome,
    }
}

/// A litmus result as a point's outcome: statistics at location `litmus`, one check when the test
/// declares its witness forbidden (observing it is a soundness bug), and the states with their counts.
/// A required witness that never appeared is a statistic, not a failure: a sweep that shrinks the
/// store buffer expects exactly that.
fn litmus_outcome(r: &litmus::LitmusResult) -> Outcome {
    let mut s = crate::stats::Stats::default();
    let n = r.iterations.max(1) as f64;
    s.push("litmus", "iterations", r.iterations as f64, "runs");
    s.push("litmus", "launches", r.launches as f64, "launches");
    s.push("litmus", "witnesses", r.witnesses as f64, "runs");
    s.push("litmus", "witness_rate", r.witnesses as f64 / n, "fraction");
    s.push("litmus", "prop_true", r.prop_true as f64, "runs");
    s.push("litmus", "states", r.outcomes.len() as f64, "states");
    let required_missing = r.check() == litmus::CheckStatus::RequiredMissing;
    s.push(
        "litmus",
        "required_missing",
        required_missing as u8 as f64,
        "flag",
    );
    let checks = match r.expectation {
        Some(e) if e.expect == litmus::Expect::Forbidden => vec![CheckOutcome {
            text: format!("forbidden witness of `{}` never observed", r.condition),
            location: r.file.clone(),
            passed: r.witnesses == 0,
            detail: (r.witnesses > 0).then(|| format!("observed in {} runs", r.witnesses)),
        }],
        _ => vec![],
    };
    Outcome::Ok {
        stats: s.rows,
        reports: vec![],
        checks,
        states: r
            .outcomes
            .iter()
            .map(|o| StateCount {
                state: r.state_string(&o.values),
                count: o.count,
                witness: o.witness,
            })
            .collect(),
    }
}

fn write_point(out: &Path, r: &PointResult) -> Result<(), SweepError> {
    let path = point_path(out, &r.point.id);
    let text = serde_json::to_string(r).map_err(|e| SweepError::Output {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    crate::stats::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))
}

/// The most bytes `sweep.json` may hold: what [`super::results::read_manifest`] reads and what
/// [`write_manifest`] refuses to exceed, so that the tool reads back every plan it writes (issue 43:
/// a plan inside the point limit wrote 170 MB that the 32 MiB text reader refused). With
/// [`super::spec::MAX_POINTS`] points this leaves 1 KiB per point, more than a point with a dozen
/// parameters takes; a plan of longer points is refused before anything is written. Documented in
/// `docs/limits.md`.
pub const MANIFEST_MAX_BYTES: u64 = 128 << 20;

/// Writes the manifest into `out` (creating the folder); a manifest already there is replaced. A
/// manifest larger than [`MANIFEST_MAX_BYTES`] is refused before the folder or the file is made.
pub fn write_manifest(out: &Path, plan_manifest: &super::plan::Manifest) -> Result<(), SweepError> {
    write_manifest_limited(out, plan_manifest, MANIFEST_MAX_BYTES)
}

fn write_manifest_limited(
    out: &Path,
    plan_manifest: &super::plan::Manifest,
    limit: u64,
) -> Result<(), SweepError> {
    let path = out.join(MANIFEST);
    let text = serde_json::to_string_pretty(plan_manifest).map_err(|e| SweepError::Output {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    if text.len() as u64 > limit {
        return Err(SweepError::Output {
            path: path.display().to_string(),
            message: format!(
                "the plan of {} points takes {} bytes, more than the {limit} a sweep.json may hold                  (and be read back); split the spec into several, or shorten its parameter values",
                plan_manifest.points.len(),
                text.len()
            ),
        });
    }
    let points = out.join(POINTS);
    std::fs::create_dir_all(&points).map_err(io_err(&points))?;
    crate::stats::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))
}

/// Runs the points of `opts.shard` that have no result in `out` yet (and, with `retry_failed`, those
/// whose result is an error). The plan is written into `out` first (see [`super::shard::ensure_plan`]).
/// Before the parallel part, one point's statistics (a stored one, or the first pending point, run
/// alone) are checked against the charts' column names, so that a misspelt statistic stops the sweep
/// within one point.
pub fn execute(
    plan: &Plan,
    out: &Path,
    opts: &ExecOptions,
    progress: &dyn Progress,
) -> Result<ExecSummary, SweepError> {
    let mut manifest = plan.manifest.clone();
    if let Some(s) = opts.shard {
        manifest.shards = s.count;
    }
    super::shard::ensure_plan(&manifest, out, opts.shard.is_some())?;
    // A plan kept from before may have lost its results folder (deleted to recompute them).
    let dir = out.join(POINTS);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let points = &plan.manifest.points;
    let selected: Vec<usize> = (0..points.len())
        .filter(|&i| opts.shard.is_none_or(|s| s.owns(i)))
        .collect();
    let mut sample: Option<PointResult> = None;
    let mut pending = Vec::new();
    let mut kept_failed = 0;
    let mut other_builds: Vec<BuildCount> = Vec::new();
    for &i in &selected {
        let Some(r) = read_point(out, &points[i]) else {
            pending.push(i);
            continue;
        };
        if matches!(r.outcome, Outcome::Error { .. }) {
            if opts.retry_failed {
                pending.push(i);
                continue;
            }
            kept_failed += 1;
        }
        if r.build.as_deref() != Some(crate::version::BUILD) {
            match other_builds.iter_mut().find(|b| b.build == r.build) {
                Some(b) => b.points += 1,
                None => other_builds.push(BuildCount {
                    build: r.build.clone(),
                    points: 1,
                }),
            }
        }
        if sample.is_none() {
            sample = Some(r);
        }
    }
    if !other_builds.is_empty() && !opts.mix_builds {
        return Err(other_builds_error(&out.join(POINTS), &other_builds));
    }
    let already_done = selected.len() - pending.len();
    progress.start(pending.len(), already_done);

    let pool = crate::host::pool(opts.jobs.unwrap_or(0))
        .build()
        .map_err(|e| SweepError::Plan(format!("cannot start worker threads: {e}")))?;
    let run_one = |i: usize| -> Result<bool, SweepError> {
        let r = run_point(plan, i);
        write_point(out, &r)?;
        progress.finished(&r.point, &r.outcome);
        Ok(matches!(r.outcome, Outcome::Error { .. }))
    };

    let mut failed = 0;
    let mut rest: &[usize] = &pending;
    if !plan.manifest.charts.is_empty() {
        if sample.is_none() {
            if let Some((&first, tail)) = pending.split_first() {
                failed += pool.install(|| run_one(first))? as usize;
                sample = read_point(out, &points[first]);
                rest = tail;
            }
        }
        if let Some(s) = &sample {
            super::charts::check_columns(&plan.manifest, s, &plan.report_names())?;
        }
    }
    let flags: Vec<bool> = pool.install(|| {
        rest.par_iter()
            .map(|&i| run_one(i))
            .collect::<Result<Vec<bool>, SweepError>>()
    })?;
    failed += flags.iter().filter(|f| **f).count();
    let complete = points.iter().all(|p| point_path(out, &p.id).is_file());
    Ok(ExecSummary {
        selected: selected.len(),
        already_done,
        ran: pending.len(),
        failed,
        failed_in_selection: kept_failed + failed,
        complete,
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan::{Manifest, PointInfo, Value};
    use super::*;

    fn manifest(points: usize, params: usize) -> Manifest {
        Manifest {
            name: "big".into(),
            description: String::new(),
            configs: vec!["h100: configs/h100.toml".into()],
            columns: (0..params).map(|k| format!("stress.param_{k}")).collect(),
            seeds: vec![0],
            points: (0..points)
                .map(|i| PointInfo {
                    id: format!("{:016x}", (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                    workload: "contention".into(),
                    seed: i as u64,
                    params: (0..params)
                        .map(|k| {
                            (
                                format!("stress.param_{k}"),
                                Value::Int(i as i64 * 1_000_003 + 1_000_000_000_000),
                            )
                        })
                        .collect(),
                })
                .collect(),
            charts: Vec::new(),
            shards: 1,
        }
    }

    /// The point limit and the manifest limit agree: a plan of MAX_POINTS points with eight
    /// parameters (more than any shipped spec) fits what the reader reads back.
    #[test]
    fn a_plan_at_the_point_limit_fits_the_manifest_reader() {
        let m = manifest(super::super::spec::MAX_POINTS as usize, 8);
        let bytes = serde_json::to_string_pretty(&m).unwrap().len() as u64;
        assert!(bytes < MANIFEST_MAX_BYTES, "{bytes} bytes");
    }

    /// A plan over the byte limit is refused before anything is written: no folder, no file.
    #[test]
    fn a_plan_too_large_to_read_back_is_refused_and_leaves_nothing() {
        let out = std::env::temp_dir().join(format!("gpumemsim-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let m = manifest(100, 2);
        let e = write_manifest_limited(&out, &m, 4096)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the plan of 100 points takes") && e.contains("more than the 4096"),
            "{e}"
        );
        assert!(!out.exists(), "nothing written");
        write_manifest_limited(&out, &m, MANIFEST_MAX_BYTES).unwrap();
        assert_eq!(super::super::results::read_manifest(&out).unwrap(), m);
        let _ = std::fs::remove_dir_all(&out);
    }
}
