//! What a sweep's output folders hold against its plan: per shard, the points done, failed and missing;
//! which builds computed them; which shard indices to resubmit. `gpumemsim sweep status DIR...` prints
//! it, `sweep merge` refuses to combine an incomplete or mixed-build set with it, and `sweep submit`
//! picks the shards to (re)submit from it.
//!
//! Vocabulary (per point of the plan):
//! - *done*: a result file describes the point and its run completed (status `ok` or `check_failed`:
//!   a failed check is a result, rerunning gives the same one);
//! - *failed*: a result file records an error (watchdog, runtime error, simulator panic); a rerun skips
//!   it unless `--retry-failed`;
//! - *missing*: no result yet (never run, or killed before it finished).
//!
//! What this does not do: ask the scheduler what is queued (see [`super::slurm`]).

use super::exec::{check_point, point_path, Outcome, PointResult};
use super::plan::{Manifest, PointInfo};
use super::results::read_manifest;
use super::SweepError;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A result's build, or a label for results written before builds were recorded.
pub fn build_label(b: &Option<String>) -> String {
    b.clone()
        .unwrap_or_else(|| "unrecorded (written before results carried their build)".into())
}

/// The error for resuming over results of builds other than this one (`others`, with their points).
pub fn other_builds_error(points_dir: &Path, others: &[BuildCount]) -> SweepError {
    let list: Vec<String> = others
        .iter()
        .map(|b| format!("{} by {}", b.points, build_label(&b.build)))
        .collect();
    SweepError::Output {
        path: points_dir.display().to_string(),
        message: format!(
            "holds results of another simulator build ({}); this is gpumemsim {}. Results of \
             different builds are not mixed unless asked: delete {} to recompute everything with \
             this build, use another --out, or pass --mix-builds to keep them",
            list.join(", "),
            crate::version::BUILD,
            points_dir.display()
        ),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShardCounts {
    pub index: usize,
    pub points: usize,
    pub done: usize,
    pub failed: usize,
    pub missing: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedPoint {
    pub shard: usize,
    pub point: PointInfo,
    pub error: String,
}

/// Points computed by one build.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildCount {
    /// `None`: a result written before results recorded their build.
    pub build: Option<String>,
    pub points: usize,
}

/// The same point in two folders with different results of the same build: the runs were not
/// deterministic, or their inputs differed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conflict {
    pub point: String,
    pub first: PathBuf,
    pub second: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub sweep: String,
    pub dirs: Vec<PathBuf>,
    pub points: usize,
    pub shards: Vec<ShardCounts>,
    pub builds: Vec<BuildCount>,
    /// Points whose run completed with a failed check (counted as done).
    pub checks_failed: usize,
    pub failed: Vec<FailedPoint>,
    pub conflicts: Vec<Conflict>,
    /// Point files that are there but cannot be used (damaged, or another point's result), with
    /// why; their points count as missing.
    pub damaged: Vec<String>,
    /// Shards that Slurm still has queued or running under a recorded submission (set by the caller
    /// that asked the queue, see [`super::slurm::queued`]); they are not listed for resubmission.
    pub queued: Vec<usize>,
    /// Why the queue was not asked, when it could not be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_note: Option<String>,
    /// Per plan point, the folder (index into `dirs`) whose result is used.
    #[serde(skip)]
    pub found: Vec<Option<usize>>,
}

/// Reads each folder's manifest (all must hold the same plan) and every point result.
pub fn survey(dirs: &[PathBuf]) -> Result<(Manifest, Status), SweepError> {
    let (first, rest) = dirs
        .split_first()
        .ok_or_else(|| SweepError::Plan("no output folder given".into()))?;
    let m = read_manifest(first)?;
    for d in rest {
        if !read_manifest(d)?.same_plan(&m) {
            return Err(SweepError::Output {
                path: d.join(super::exec::MANIFEST).display().to_string(),
                message: format!(
                    "holds a different sweep than {} (the spec or its inputs differ)",
                    first.join(super::exec::MANIFEST).display()
                ),
            });
        }
    }
    let n = m.shards.max(1);
    let mut shards: Vec<ShardCounts> = (0..n)
        .map(|index| ShardCounts {
            index,
            points: 0,
            done: 0,
            failed: 0,
            missing: 0,
        })
        .collect();
    let mut st = Status {
        sweep: m.name.clone(),
        dirs: dirs.to_vec(),
        points: m.points.len(),
        shards: vec![],
        builds: vec![],
        checks_failed: 0,
        failed: vec![],
        conflicts: vec![],
        damaged: vec![],
        queued: vec![],
        queue_note: None,
        found: vec![],
    };
    for (i, p) in m.points.iter().enumerate() {
        let s = &mut shards[i % n];
        s.points += 1;
        let mut found: Option<(usize, PointResult)> = None;
        for (di, d) in dirs.iter().enumerate() {
            let r = match check_point(d, p) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(why) => {
                    st.damaged.push(why);
                    continue;
                }
            };
            match &found {
                None => found = Some((di, r)),
                Some((fi, prev)) if prev.build == r.build && *prev != r => {
                    st.conflicts.push(Conflict {
                        point: p.id.clone(),
                        first: point_path(&dirs[*fi], &p.id),
                        second: point_path(d, &p.id),
                    })
                }
                Some(_) => {}
            }
        }
        st.found.push(found.as_ref().map(|(di, _)| *di));
        let Some((_, r)) = found else {
            s.missing += 1;
            continue;
        };
        match st.builds.iter_mut().find(|b| b.build == r.build) {
            Some(b) => b.points += 1,
            None => st.builds.push(BuildCount {
                build: r.build.clone(),
                points: 1,
            }),
        }
        match &r.outcome {
            Outcome::Error { error } => {
                s.failed += 1;
                st.failed.push(FailedPoint {
                    shard: i % n,
                    point: p.clone(),
                    error: error.clone(),
                });
            }
            o => {
                s.done += 1;
                st.checks_failed += (o.status() == "check_failed") as usize;
            }
        }
    }
    st.shards = shards;
    Ok((m, st))
}

impl Status {
    pub fn done(&self) -> usize {
        self.shards.iter().map(|s| s.done).sum()
    }
    pub fn missing(&self) -> usize {
        self.shards.iter().map(|s| s.missing).sum()
    }
    /// Every point has a result (done or failed).
    pub fn complete(&self) -> bool {
        self.missing() == 0
    }
    /// Shards with points that have no result.
    pub fn incomplete_shards(&self) -> Vec<usize> {
        self.shards
            .iter()
            .filter(|s| s.missing > 0)
            .map(|s| s.index)
            .collect()
    }
    /// Shards holding failed points (rerun with `--retry-failed`).
    pub fn failed_shards(&self) -> Vec<usize> {
        self.shards
            .iter()
            .filter(|s| s.failed > 0)
            .map(|s| s.index)
            .collect()
    }
    /// Results of more than one build.
    pub fn mixed_builds(&self) -> bool {
        self.builds.len() > 1
    }

    /// The error `sweep merge` gives for results of several builds.
    pub fn mixed_builds_error(&self) -> SweepError {
        let list: Vec<String> = self
            .builds
            .iter()
            .map(|b| format!("{} ({} points)", build_label(&b.build), b.points))
            .collect();
        SweepError::Output {
            path: self.dirs[0].display().to_string(),
            message: format!(
                "results of different simulator builds: {}; they are not combined unless asked \
                 (--mix-builds; results.csv then names each row's build). To recompute with one \
                 build, delete the points of the others and run their shards again",
                list.join(", ")
            ),
        }
    }
}

/// Slurm's array syntax for indices: `0-3,5,7-9`.
pub fn ranges(indices: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", indices[i], indices[j])
        } else {
            indices[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// `shard 1` or `shards 0-3,5`.
pub fn shards_named(indices: &[usize]) -> String {
    format!(
        "shard{} {}",
        if indices.len() == 1 { "" } else { "s" },
        ranges(indices)
    )
}

/// Shards listed one per row up to this many; beyond it only the incomplete ones.
const ROWS: usize = 32;

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = &self.dirs[0];
        let n = self.shards.len();
        writeln!(
            f,
            "sweep {:?} in {}: {} points in {n} shard{}",
            self.sweep,
            self.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            self.points,
            if n == 1 { "" } else { "s" }
        )?;
        writeln!(
            f,
            "{:>6} {:>7} {:>7} {:>7} {:>7}",
            "shard", "points", "done", "failed", "missing"
        )?;
        let rows: Vec<&ShardCounts> = self
            .shards
            .iter()
            .filter(|s| n <= ROWS || s.missing > 0 || s.failed > 0)
            .collect();
        for s in rows.iter().take(ROWS) {
            writeln!(
                f,
                "{:>6} {:>7} {:>7} {:>7} {:>7}",
                s.index, s.points, s.done, s.failed, s.missing
            )?;
        }
        if rows.len() > ROWS {
            writeln!(
                f,
                "{:>6} ({} more incomplete shards)",
                "...",
                rows.len() - ROWS
            )?;
        } else if n > ROWS {
            writeln!(
                f,
                "{:>6} (the other {} shards are complete)",
                "...",
                n - rows.len()
            )?;
        }
        writeln!(
            f,
            "{:>6} {:>7} {:>7} {:>7} {:>7}",
            "all",
            self.points,
            self.done(),
            self.failed.len(),
            self.missing()
        )?;
        if self.checks_failed > 0 {
            writeln!(
                f,
                "{} done points failed their checks (a result, listed in the report)",
                self.checks_failed
            )?;
        }
        for b in &self.builds {
            writeln!(
                f,
                "computed by gpumemsim {}: {} points",
                build_label(&b.build),
                b.points
            )?;
        }
        if self.mixed_builds() {
            writeln!(
                f,
                "warning: results of {} builds; `sweep merge` refuses them unless --mix-builds",
                self.builds.len()
            )?;
        }
        for d in self.damaged.iter().take(10) {
            writeln!(
                f,
                "damaged (counted as missing; delete it to rerun the point): {d}"
            )?;
        }
        if self.damaged.len() > 10 {
            writeln!(f, "damaged: ... {} more", self.damaged.len() - 10)?;
        }
        for c in &self.conflicts {
            writeln!(
                f,
                "conflict: {} and {} hold different results of one build for point {}",
                c.first.display(),
                c.second.display(),
                c.point
            )?;
        }
        for p in self.failed.iter().take(10) {
            writeln!(
                f,
                "failed: point {} (shard {}, {} seed {}): {}",
                p.point.id,
                p.shard,
                p.point.workload,
                p.point.seed,
                p.error.lines().next().unwrap_or("")
            )?;
        }
        if self.failed.len() > 10 {
            writeln!(f, "failed: ... {} more", self.failed.len() - 10)?;
        }
        if !self.queued.is_empty() {
            writeln!(
                f,
                "queued or running (Slurm): {}",
                shards_named(&self.queued)
            )?;
        }
        if let Some(note) = &self.queue_note {
            writeln!(f, "queue not asked: {note}")?;
        }
        let script = dir
            .join(super::slurm::SCRIPT_DIR)
            .join(super::slurm::ARRAY_SCRIPT);
        let missing: Vec<usize> = self
            .incomplete_shards()
            .into_iter()
            .filter(|s| !self.queued.contains(s))
            .collect();
        if !missing.is_empty() {
            let list = ranges(&missing);
            write!(
                f,
                "to resubmit (missing points): {}: ",
                shards_named(&missing)
            )?;
            if script.is_file() {
                let merge = dir
                    .join(super::slurm::SCRIPT_DIR)
                    .join(super::slurm::MERGE_SCRIPT);
                writeln!(
                    f,
                    "`gpumemsim sweep submit SPEC --slurm --out {}` (submits them and a merge job \
                     after them), or by hand: `sbatch --parsable --array={list} {}`, then the merge \
                     after it: `sbatch --dependency=afterany:JOBID {}` with the JOBID it printed",
                    dir.display(),
                    script.display(),
                    merge.display()
                )?;
            } else {
                writeln!(
                    f,
                    "`gpumemsim sweep SPEC --out {} --shard I` for each",
                    dir.display()
                )?;
            }
        }
        let failed = self.failed_shards();
        if !failed.is_empty() {
            writeln!(
                f,
                "to rerun the failed points: {} with --retry-failed{}",
                shards_named(&failed),
                if script.is_file() {
                    format!(
                        " (`sbatch --array={} {} --retry-failed`)",
                        ranges(&failed),
                        script.display()
                    )
                } else {
                    String::new()
                }
            )?;
        }
        if self.complete() && !failed.is_empty() {
            // Exit status 2: say why on the last line, never "every point has a result" alone.
            let n = self.failed.len();
            writeln!(
                f,
                "every point ran, but {n} point{} failed: not done until they are rerun \
                 (--retry-failed)",
                if n == 1 { "" } else { "s" }
            )?;
        } else if self.complete() {
            let combined = dir.join(super::results::RESULTS_CSV).is_file();
            let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
            writeln!(
                f,
                "every point has a result{}",
                if combined {
                    String::new()
                } else {
                    format!("; combine them: `gpumemsim sweep merge {}`", dirs.join(" "))
                }
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn indices_print_as_slurm_array_ranges() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[0, 1, 2, 3, 5, 7, 8, 9]), "0-3,5,7-9");
        assert_eq!(ranges(&[1, 3]), "1,3");
    }
}
