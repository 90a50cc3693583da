//! Shards: how a plan is split over the tasks of a cluster job array, and how one task finds its part.
//!
//! The shard count belongs to the plan: `sweep plan SPEC --shards N` (or `sweep --shards N`, or
//! `sweep submit`) records N in the output folder's `sweep.json`, and every shard run takes N from there.
//! A task is told only its index: `--shard I`, or `--shard auto` (alias `slurm`), which reads
//! `SLURM_ARRAY_TASK_ID`. Any subset of indices can therefore be resubmitted or requeued
//! (`sbatch --array=1,5`) and each task runs exactly its own shard; the size of the array that started
//! it plays no part. `--shard I/N` is accepted where N agrees with the plan (or no plan exists yet).
//!
//! Shard I holds the points whose plan index is `I mod N` (round robin, so that the expensive points of
//! one workload spread over all shards).
//!
//! What this does not do: talk to a scheduler (that is [`super::slurm`]), or lock the folder: shard runs
//! of one plan write disjoint point files, and the plan itself is written only by unsharded commands.

use super::exec::MANIFEST;
use super::plan::{Manifest, Plan};
use super::results::read_manifest;
use super::SweepError;
use std::path::Path;
use std::str::FromStr;

/// The environment variable Slurm sets in each task of a job array.
pub const SLURM_ARRAY_TASK_ID: &str = "SLURM_ARRAY_TASK_ID";

/// Slice `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn owns(&self, point_index: usize) -> bool {
        point_index % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = SweepError;
    /// `I/N` with both given.
    fn from_str(s: &str) -> Result<Shard, SweepError> {
        match s.parse::<ShardArg>()? {
            ShardArg::Index {
                index,
                count: Some(count),
            } => Ok(Shard { index, count }),
            _ => Err(bad(
                s,
                "expected I/N, e.g. 0/8 (shards are numbered from 0)",
            )),
        }
    }
}

/// What `--shard` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    /// `I` (N from the plan) or `I/N`.
    Index { index: usize, count: Option<usize> },
    /// `auto` or `slurm`: I from `SLURM_ARRAY_TASK_ID`, N from the plan.
    Slurm,
}

fn bad(arg: &str, message: &str) -> SweepError {
    SweepError::Shard {
        arg: arg.to_string(),
        message: message.to_string(),
    }
}

impl FromStr for ShardArg {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<ShardArg, SweepError> {
        let t = s.trim();
        if t == "auto" || t == "slurm" {
            return Ok(ShardArg::Slurm);
        }
        let whole = |x: &str, what: &str| -> Result<usize, SweepError> {
            x.trim().parse().map_err(|_| {
                bad(
                    s,
                    &format!("{what} must be a whole number (expected I, I/N, auto or slurm)"),
                )
            })
        };
        let (index, count) = match t.split_once('/') {
            Some((i, n)) => (whole(i, "I")?, Some(whole(n, "N")?)),
            None => (whole(t, "I")?, None),
        };
        if count == Some(0) {
            return Err(bad(s, "N must be at least 1"));
        }
        if let Some(n) = count.filter(|&n| index >= n) {
            return Err(bad(
                s,
                &format!("I must be below N (shards are numbered 0 to {})", n - 1),
            ));
        }
        Ok(ShardArg::Index { index, count })
    }
}

impl ShardArg {
    /// The shard this task runs, given the plan's shard count. `env` looks up environment variables
    /// (`std::env::var` in the CLI).
    pub fn resolve(
        &self,
        arg: &str,
        shards: usize,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, SweepError> {
        let index = match *self {
            ShardArg::Index { index, count } => {
                if let Some(n) = count.filter(|&n| n != shards) {
                    return Err(bad(
                        arg,
                        &format!(
                            "the plan has {shards} shards, not {n} (the count belongs to the plan: \
                             use --shard {index}, or plan again with --shards {n})"
                        ),
                    ));
                }
                index
            }
            ShardArg::Slurm => {
                let v = env(SLURM_ARRAY_TASK_ID).ok_or_else(|| {
                    bad(
                        arg,
                        &format!(
                            "{SLURM_ARRAY_TASK_ID} is not set (not a task of a Slurm job array); \
                             give the index: --shard I"
                        ),
                    )
                })?;
                v.trim().parse().map_err(|_| {
                    bad(
                        arg,
                        &format!("{SLURM_ARRAY_TASK_ID}={v:?}: not a whole number"),
                    )
                })?
            }
        };
        if index >= shards {
            return Err(bad(
                arg,
                &format!(
                    "shard {index} does not exist: the plan has {shards} shard{} (0 to {}); \
                     submit the array as --array=0-{}",
                    if shards == 1 { "" } else { "s" },
                    shards - 1,
                    shards - 1
                ),
            ));
        }
        Ok(Shard {
            index,
            count: shards,
        })
    }
}

/// How an output folder's plan is to be set before running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Planning {
    /// `--shards N`: record N (a changed count replaces the recorded one, unless a shard runs).
    pub shards: Option<usize>,
    /// `--shard ...`: this run is one shard of the folder's plan.
    pub shard: Option<ShardArg>,
}

/// Sets `plan.manifest.shards` and writes the manifest into `out` when it is new or changed, and returns
/// the shard to run (`None`: every point).
///
/// A shard run never rewrites the plan: it requires the folder's plan to be the spec's (other shards
/// may be running from it), and takes the shard count from it. Unsharded commands (`sweep`,
/// `sweep plan`) replace a plan that differs, keeping its shard count unless `--shards` is given.
pub fn write_manifest(
    plan: &mut Plan,
    out: &Path,
    planning: &Planning,
    arg_text: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Shard>, SweepError> {
    if planning.shards == Some(0) {
        return Err(SweepError::Plan("--shards 0: at least 1".into()));
    }
    let existing = if out.join(MANIFEST).is_file() {
        Some(read_manifest(out)?)
    } else {
        None
    };
    let same = existing
        .as_ref()
        .filter(|m| m.same_plan(&plan.manifest))
        .cloned();
    let Some(arg) = planning.shard else {
        plan.manifest.shards = planning
            .shards
            .or(existing.as_ref().map(|m| m.shards))
            .unwrap_or(1);
        if existing.as_ref() != Some(&plan.manifest) {
            super::exec::write_manifest(out, &plan.manifest)?;
        }
        return Ok(None);
    };
    let shards = match (&existing, &same) {
        (Some(m), Some(_)) => {
            if let Some(n) = planning.shards.filter(|&n| n != m.shards) {
                return Err(SweepError::Plan(format!(
                    "--shards {n}: the plan in {} has {} shards and shard runs may be using it; \
                     change the count with `gpumemsim sweep plan SPEC --out {} --shards {n}` when \
                     none runs",
                    out.join(MANIFEST).display(),
                    m.shards,
                    out.display()
                )));
            }
            m.shards
        }
        (Some(_), None) => return Err(changed_plan(out)),
        (None, _) => match (planning.shards, arg) {
            (Some(n), _) => n,
            (None, ShardArg::Index { count: Some(n), .. }) => n,
            _ => {
                return Err(bad(
                    arg_text,
                    &format!(
                        "{} holds no plan to take the shard count from; plan first: \
                         `gpumemsim sweep plan SPEC --out {} --shards N` (`sweep submit` does it)",
                        out.display(),
                        out.display()
                    ),
                ))
            }
        },
    };
    let shard = arg.resolve(arg_text, shards, env)?;
    plan.manifest.shards = shards;
    if existing.is_none() {
        super::exec::write_manifest(out, &plan.manifest)?;
    }
    Ok(Some(shard))
}

/// Makes `out` hold the plan `m` before points run: written when the folder has none; for an unsharded
/// run, replaced when it differs. A shard run never replaces a plan (other shards may be running from
/// it): a different plan or shard count there is an error.
pub fn ensure_plan(m: &Manifest, out: &Path, sharded: bool) -> Result<(), SweepError> {
    let existing = if out.join(MANIFEST).is_file() {
        Some(read_manifest(out)?)
    } else {
        None
    };
    match existing {
        Some(e) if e == *m => Ok(()),
        Some(e) if sharded && e.same_plan(m) => Err(SweepError::Output {
            path: out.join(MANIFEST).display().to_string(),
            message: format!(
                "the plan has {} shards, this run is one of {}",
                e.shards, m.shards
            ),
        }),
        Some(_) if sharded => Err(changed_plan(out)),
        _ => super::exec::write_manifest(out, m),
    }
}

fn changed_plan(out: &Path) -> SweepError {
    SweepError::Output {
        path: out.join(MANIFEST).display().to_string(),
        message: "holds a different plan than the spec gives now (the spec, its inputs or the \
                  simulator changed since it was planned); a shard never replaces the plan other \
                  shards run from: plan again (`gpumemsim sweep plan`) when no shard runs, or use \
                  another --out"
            .into(),
    }
}

/// Points per shard: `counts[i]` for shard i.
pub fn sizes(m: &Manifest) -> Vec<usize> {
    let n = m.shards.max(1);
    (0..n).map(|i| (m.points.len() + n - 1 - i) / n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_arguments_parse_and_name_what_is_wrong() {
        assert_eq!(
            "3".parse::<ShardArg>().unwrap(),
            ShardArg::Index {
                index: 3,
                count: None
            }
        );
        assert_eq!("auto".parse::<ShardArg>().unwrap(), ShardArg::Slurm);
        assert_eq!("slurm".parse::<ShardArg>().unwrap(), ShardArg::Slurm);
        for (arg, want) in [
            ("4/4", "below N"),
            ("1/0", "at least 1"),
            ("x", "whole number"),
            ("1/y", "N must be"),
        ] {
            let e = arg.parse::<ShardArg>().unwrap_err().to_string();
            assert!(e.contains(want) && e.contains(arg), "{arg}: {e}");
        }
    }

    #[test]
    fn the_index_comes_from_slurm_and_the_count_from_the_plan() {
        let env = |id: Option<&'static str>| {
            move |k: &str| {
                (k == SLURM_ARRAY_TASK_ID)
                    .then_some(id)
                    .flatten()
                    .map(String::from)
            }
        };
        let s = ShardArg::Slurm.resolve("auto", 4, env(Some("2"))).unwrap();
        assert_eq!(s, Shard { index: 2, count: 4 });
        // Resubmitting index 1 alone is still shard 1 of 4.
        let s = ShardArg::Slurm.resolve("auto", 4, env(Some("1"))).unwrap();
        assert_eq!(s, Shard { index: 1, count: 4 });
        let e = ShardArg::Slurm
            .resolve("auto", 4, env(Some("4")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shard 4 does not exist") && e.contains("--array=0-3"),
            "{e}"
        );
        let e = ShardArg::Slurm
            .resolve("auto", 4, env(None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("SLURM_ARRAY_TASK_ID is not set"), "{e}");
        let e = ShardArg::Slurm
            .resolve("auto", 4, env(Some("x1")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a whole number"), "{e}");
        let e = "1/2"
            .parse::<ShardArg>()
            .unwrap()
            .resolve("1/2", 4, env(None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the plan has 4 shards, not 2"), "{e}");
    }
}
