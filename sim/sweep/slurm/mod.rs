//! `gpumemsim sweep submit SPEC --slurm`: a sweep as a Slurm job array plus a merge job.
//!
//! Submitting plans the run folder (the shard count goes into `sweep.json`), writes the two batch
//! scripts ([`script`]) into `DIR/slurm/`, and submits, with `sbatch`, the array for the shards that
//! still have points to run, then the merge job with `--dependency=afterany` on it. What it submitted
//! is appended to `DIR/slurm/jobs.tsv`. Submitting again is how a run is finished after a failure:
//! only shards with missing points (and, with `--retry-failed`, shards with failed points) are
//! submitted, shards that are still queued or running under an earlier submission (asked of `squeue`)
//! are left to it, and the new merge job waits for those too. The Slurm options of the first
//! submission are kept (`slurm/options.json`) unless a flag changes one.
//!
//! What it does not do: watch the jobs (`sweep status` reads the folder), cancel anything, or talk to a
//! scheduler other than Slurm. The scheduler is reached through [`Scheduler`], so that tests can run
//! the whole logic without Slurm.

pub mod script;

use super::plan::Plan;
use super::shard::{self, Planning};
use super::status::{self, ranges, shards_named, survey};
use super::SweepError;
use script::{ScriptContext, SlurmOptions};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const SCRIPT_DIR: &str = "slurm";
pub const ARRAY_SCRIPT: &str = "array.sbatch";
pub const MERGE_SCRIPT: &str = "merge.sbatch";
pub const OPTIONS: &str = "options.json";
pub const JOBS: &str = "jobs.tsv";
pub const LOGS: &str = "logs";

/// An array task of an earlier submission that Slurm still has (pending, running, requeued).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub job: String,
    /// The array index; `None` for a job that is not an array (a merge job).
    pub index: Option<usize>,
}

/// The scheduler's commands.
pub trait Scheduler {
    /// Runs `sbatch ARGS` and returns the job id it prints (`--parsable`).
    fn sbatch(&self, args: &[String]) -> Result<String, SweepError>;
    /// The current user's queued jobs and array tasks whose job id is in `jobs` or whose batch
    /// script is one of `scripts` (absolute paths: jobs submitted by hand with the folder's scripts).
    fn queued(&self, jobs: &[String], scripts: &[String]) -> Result<Vec<Queued>, SweepError>;
}

/// The `sbatch` and `squeue` on `PATH`.
pub struct Slurm;

fn run(program: &str, args: &[String]) -> Result<String, SweepError> {
    let line = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| SweepError::Scheduler {
            command: line.clone(),
            message: if e.kind() == std::io::ErrorKind::NotFound {
                format!("{program} is not on PATH (not a Slurm login node?)")
            } else {
                e.to_string()
            },
        })?;
    if !out.status.success() {
        return Err(SweepError::Scheduler {
            command: line,
            message: format!(
                "{} ({})",
                String::from_utf8_lossy(&out.stderr).trim(),
                out.status
            ),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

impl Scheduler for Slurm {
    fn sbatch(&self, args: &[String]) -> Result<String, SweepError> {
        let mut all = vec!["--parsable".to_string()];
        all.extend_from_slice(args);
        let out = run("sbatch", &all)?;
        // `--parsable` prints `ID` or `ID;CLUSTER`.
        let id = out.trim().split(';').next().unwrap_or("").to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(SweepError::Scheduler {
                command: format!("sbatch {}", all.join(" ")),
                message: format!("printed {:?}, not a job id", out.trim()),
            });
        }
        Ok(id)
    }

    fn queued(&self, jobs: &[String], scripts: &[String]) -> Result<Vec<Queued>, SweepError> {
        if jobs.is_empty() && scripts.is_empty() {
            return Ok(vec![]);
        }
        // One line per array task (--array): the array's job id, the task's index (N/A for
        // others) and the batch script (%o, the command), by which a job submitted by hand is known.
        let args: Vec<String> = ["--me", "--noheader", "--array", "--format=%F|%K|%o"]
            .map(String::from)
            .to_vec();
        let out = run("squeue", &args)?;
        let ours = |script: &str| {
            let script = script.trim();
            let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
            scripts
                .iter()
                .any(|s| s == script || canon(s) == canon(script))
        };
        Ok(out
            .lines()
            .filter_map(|l| {
                let mut f = l.trim().splitn(3, '|');
                Some((f.next()?, f.next()?, f.next().unwrap_or("")))
            })
            .filter(|(job, _, script)| jobs.iter().any(|j| j == job) || ours(script))
            .map(|(job, index, _)| Queued {
                job: job.to_string(),
                index: index.trim().parse().ok(),
            })
            .collect())
    }
}

/// What `submit` was asked.
#[derive(Debug, Clone, Default)]
pub struct SubmitOptions {
    /// `--shards N` (required when the folder has no plan yet).
    pub shards: Option<usize>,
    /// Options given now; the folder's earlier ones fill the rest.
    pub slurm: SlurmOptions,
    pub retry_failed: bool,
    pub mix_builds: bool,
    pub dry_run: bool,
}

/// What `submit` did (or would do with `dry_run`); its `Display` is what the CLI prints.
#[derive(Debug, Clone, Default)]
pub struct Submission {
    pub dir: PathBuf,
    pub points: usize,
    pub shards: usize,
    pub dry_run: bool,
    /// Shards submitted now.
    pub indices: Vec<usize>,
    /// Shards left to earlier submissions still in the queue, with their jobs.
    pub in_flight: Vec<usize>,
    pub in_flight_jobs: Vec<String>,
    /// Points of the submitted shards that will run.
    pub points_to_run: usize,
    /// Each `sbatch` command line, with the job id it returned (`None` in a dry run).
    pub commands: Vec<(String, Option<String>)>,
    pub array_script: PathBuf,
    pub merge_script: PathBuf,
    /// Said before the rest (a dry run that could not ask the queue).
    pub warnings: Vec<String>,
}

impl fmt::Display for Submission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = self.dir.display();
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        writeln!(
            f,
            "{dir}: {} points in {} shards; scripts {} and {}",
            self.points,
            self.shards,
            self.array_script.display(),
            self.merge_script.display()
        )?;
        if !self.in_flight.is_empty() {
            writeln!(
                f,
                "{} still queued or running (jobs {}): left to them",
                shards_named(&self.in_flight),
                self.in_flight_jobs.join(", ")
            )?;
        }
        if self.indices.is_empty() {
            if self.in_flight.is_empty() {
                writeln!(
                    f,
                    "every point has a result: nothing to submit (`gpumemsim sweep merge {dir}` or \
                     `sbatch {}` combines them)",
                    self.merge_script.display()
                )?;
            }
            return Ok(());
        }
        writeln!(
            f,
            "{} ({} points to run){}:",
            shards_named(&self.indices),
            self.points_to_run,
            if self.dry_run {
                ", dry run: not submitted"
            } else {
                ""
            }
        )?;
        for (cmd, id) in &self.commands {
            match id {
                Some(id) => writeln!(f, "{cmd}\n  -> job {id}")?,
                None => writeln!(f, "{cmd}")?,
            }
        }
        writeln!(
            f,
            "logs: {}/; progress: gpumemsim sweep status {dir}",
            self.dir.join(LOGS).display()
        )
    }
}

/// One line of `slurm/jobs.tsv`: `unix time, kind (array|merge), job id, detail`.
fn record(dir: &Path, kind: &str, job: &str, detail: &str) -> Result<(), SweepError> {
    use std::io::Write;
    let path = dir.join(SCRIPT_DIR).join(JOBS);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(super::exec::io_err(&path))?;
    writeln!(f, "{now}\t{kind}\t{job}\t{detail}").map_err(super::exec::io_err(&path))
}

/// Job ids of the earlier submissions recorded in `dir`, as (kind, id).
pub fn recorded_jobs(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join(SCRIPT_DIR).join(JOBS))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() >= 3).then(|| (f[1].to_string(), f[2].to_string()))
        })
        .collect()
}

/// The jobs and array tasks of `dir`'s recorded submissions that Slurm still has.
pub fn queued(dir: &Path, sched: &dyn Scheduler) -> Result<Vec<Queued>, SweepError> {
    let jobs: Vec<String> = recorded_jobs(dir).into_iter().map(|(_, j)| j).collect();
    // The folder's scripts, for jobs submitted by hand (`sbatch --array=3 DIR/slurm/array.sbatch`),
    // which `jobs.tsv` does not list.
    let scripts: Vec<String> = [ARRAY_SCRIPT, MERGE_SCRIPT]
        .iter()
        .map(|s| dir.join(SCRIPT_DIR).join(s))
        .filter(|p| p.is_file())
        .filter_map(|p| absolute(&p).ok())
        .map(|p| p.display().to_string())
        .collect();
    if jobs.is_empty() && scripts.is_empty() {
        return Ok(vec![]);
    }
    sched.queued(&jobs, &scripts)
}

/// The shard indices of queued array tasks, and their array jobs, each sorted once.
pub fn in_flight(queued: &[Queued]) -> (Vec<usize>, Vec<String>) {
    let mut shards: Vec<usize> = queued.iter().filter_map(|q| q.index).collect();
    shards.sort();
    shards.dedup();
    let mut jobs: Vec<String> = queued
        .iter()
        .filter(|q| q.index.is_some())
        .map(|q| q.job.clone())
        .collect();
    jobs.sort();
    jobs.dedup();
    (shards, jobs)
}

fn absolute(p: &Path) -> Result<PathBuf, SweepError> {
    std::path::absolute(p).map_err(super::exec::io_err(p))
}

/// Plans `out` from `plan`, writes the scripts and submits what is left to run (see the module header).
/// `binary`: the gpumemsim the tasks run when the options name none (the running executable).
pub fn submit(
    plan: &mut Plan,
    spec: &Path,
    out: &Path,
    binary: &Path,
    opts: &SubmitOptions,
    sched: &dyn Scheduler,
) -> Result<Submission, SweepError> {
    let dir = absolute(out)?;
    script::check_path("out", &dir)?;
    let spec = absolute(spec)?;
    let spec_s = script::check_path("spec", &spec)?;
    let options_path = dir.join(SCRIPT_DIR).join(OPTIONS);
    let stored: SlurmOptions = match std::fs::read_to_string(&options_path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| SweepError::Output {
            path: options_path.display().to_string(),
            message: format!("not the Slurm options `sweep submit` writes: {e}"),
        })?,
        Err(_) => SlurmOptions::default(),
    };
    let o = stored.overlay(&opts.slurm);
    o.validate()?;
    let binary = absolute(Path::new(
        o.binary.as_deref().map(Path::new).unwrap_or(binary),
    ))?;
    script::check_path("binary", &binary)?;
    check_executable(&binary)?;

    // Earlier submissions still queued: their shards are left to them, and the plan must not change
    // under them.
    let mut warnings = Vec::new();
    let queued = match queued(&dir, sched) {
        Ok(q) => q,
        Err(e) if opts.dry_run => {
            warnings.push(format!(
                "cannot ask the queue ({e}); a dry run assumes nothing is queued"
            ));
            vec![]
        }
        Err(e) => return Err(e),
    };
    let (in_flight, in_flight_jobs) = in_flight(&queued);

    let existing = super::results::read_manifest(&dir).ok();
    let shards = match (&existing, opts.shards) {
        (Some(m), None) if m.same_plan(&plan.manifest) => m.shards,
        (_, Some(n)) => n,
        (_, None) => {
            return Err(SweepError::Plan(format!(
                "{}: no plan of this spec yet: say how many array tasks with --shards N",
                dir.display()
            )))
        }
    };
    if !queued.is_empty() {
        let m = existing.as_ref();
        let changes = m.is_none_or(|m| !m.same_plan(&plan.manifest) || m.shards != shards);
        if changes {
            let ids: Vec<&str> = queued.iter().map(|q| q.job.as_str()).collect();
            return Err(SweepError::Plan(format!(
                "{}: jobs {} of an earlier submission are still queued or running with the plan in \
                 sweep.json, which this submission would change (the spec, its inputs or --shards \
                 differ); wait for them or scancel them first",
                dir.display(),
                ids.join(", ")
            )));
        }
    }
    // A plan already there is never re-split by a submission (dry or not): its results, its logs
    // and any job still to come count on its shards.
    if let Some(m) = existing
        .as_ref()
        .filter(|m| m.same_plan(&plan.manifest) && m.shards != shards)
    {
        return Err(SweepError::Plan(format!(
            "{}: the plan has {} shards, --shards {shards} would re-split it; re-split it on \
             purpose with `gpumemsim sweep plan {} --out {} --shards {shards}` (no shard may be \
             running), or leave --shards out",
            dir.display(),
            m.shards,
            spec_s,
            dir.display()
        )));
    }
    let manifest_path = dir.join(super::exec::MANIFEST);
    let had_plan = manifest_path.is_file();
    let had_scripts = dir.join(SCRIPT_DIR).is_dir();
    let result = (|| {
        shard::write_manifest(
            plan,
            &dir,
            &Planning {
                shards: Some(shards),
                shard: None,
            },
            "",
            |_| None,
        )?;

        let (_, st) = survey(std::slice::from_ref(&dir))?;
        let others: Vec<status::BuildCount> = st
            .builds
            .iter()
            .filter(|b| b.build.as_deref() != Some(crate::version::BUILD))
            .cloned()
            .collect();
        if !others.is_empty() && !opts.mix_builds {
            return Err(status::other_builds_error(
                &dir.join(super::exec::POINTS),
                &others,
            ));
        }
        let mut wanted = st.incomplete_shards();
        if opts.retry_failed {
            wanted.extend(st.failed_shards());
            wanted.sort();
            wanted.dedup();
        }
        let indices: Vec<usize> = wanted
            .iter()
            .copied()
            .filter(|i| !in_flight.contains(i))
            .collect();
        let points_to_run = indices
            .iter()
            .map(|&i| {
                let s = &st.shards[i];
                s.missing + if opts.retry_failed { s.failed } else { 0 }
            })
            .sum();

        let scripts = dir.join(SCRIPT_DIR);
        let logs = dir.join(LOGS);
        for d in [&scripts, &logs] {
            std::fs::create_dir_all(d).map_err(super::exec::io_err(d))?;
        }
        let ctx = ScriptContext {
            sweep: &plan.manifest.name,
            spec: Path::new(&spec_s),
            dir: &dir,
            binary: &binary,
            shards,
        };
        let array_script = scripts.join(ARRAY_SCRIPT);
        let merge_script = scripts.join(MERGE_SCRIPT);
        // The binary is kept only when named (--binary): otherwise each submission runs its own.
        let options_text = serde_json::to_string_pretty(&o).unwrap_or_default();
        for (path, text) in [
            (&array_script, script::array_script(&o, &ctx)),
            (&merge_script, script::merge_script(&o, &ctx)),
            (&options_path, options_text),
        ] {
            crate::stats::write_atomic(path, text.as_bytes()).map_err(super::exec::io_err(path))?;
        }

        let mut sub = Submission {
            dir: dir.clone(),
            points: plan.manifest.points.len(),
            shards,
            dry_run: opts.dry_run,
            indices: indices.clone(),
            in_flight,
            in_flight_jobs: in_flight_jobs.clone(),
            points_to_run,
            commands: vec![],
            array_script: array_script.clone(),
            merge_script: merge_script.clone(),
            warnings,
        };
        if indices.is_empty() {
            return Ok(sub);
        }
        let mut gpumemsim_args: Vec<String> = Vec::new();
        if opts.retry_failed {
            gpumemsim_args.push("--retry-failed".into());
        }
        if opts.mix_builds {
            gpumemsim_args.push("--mix-builds".into());
        }
        let mut array_args = vec![format!(
            "--array={}{}",
            ranges(&indices),
            o.throttle.map(|k| format!("%{k}")).unwrap_or_default()
        )];
        array_args.push(array_script.display().to_string());
        array_args.extend(gpumemsim_args.iter().cloned());
        let line = |args: &[String]| format!("sbatch --parsable {}", args.join(" "));
        let array_job = if opts.dry_run {
            sub.commands.push((line(&array_args), None));
            "ARRAY_JOB_ID".to_string()
        } else {
            let id = sched.sbatch(&array_args)?;
            record(&dir, "array", &id, &ranges(&indices))?;
            sub.commands.push((line(&array_args), Some(id.clone())));
            id
        };
        let mut after = vec![array_job];
        after.extend(in_flight_jobs);
        let mut merge_args = vec![format!("--dependency=afterany:{}", after.join(":"))];
        merge_args.push(merge_script.display().to_string());
        if opts.mix_builds {
            merge_args.push("--mix-builds".into());
        }
        if opts.dry_run {
            sub.commands.push((line(&merge_args), None));
        } else {
            let id = sched.sbatch(&merge_args).map_err(|e| {
                SweepError::Plan(format!(
            "the array job {} is queued, but its merge job was not: {e}; submit it by hand: `{}`",
            after[0],
            line(&merge_args)
        ))
            })?;
            record(&dir, "merge", &id, &format!("afterany:{}", after.join(":")))?;
            sub.commands.push((line(&merge_args), Some(id)));
        }
        Ok(sub)
    })();
    // A submission that failed before any job was queued leaves no plan or scripts it made.
    let queued_any =
        std::fs::read_to_string(dir.join(SCRIPT_DIR).join(JOBS)).is_ok_and(|t| !t.is_empty());
    if result.is_err() && !queued_any {
        if !had_plan {
            let _ = std::fs::remove_file(&manifest_path);
        }
        if !had_scripts {
            let _ = std::fs::remove_dir_all(dir.join(SCRIPT_DIR));
        }
    }
    result
}

/// `--binary` (or this one) must be an executable file: a task that cannot start it fails on the
/// node, minutes later, with the reason in a log.
fn check_executable(binary: &Path) -> Result<(), SweepError> {
    let bad = |message: &str| SweepError::Option {
        option: "binary".into(),
        value: binary.display().to_string(),
        message: message.into(),
    };
    let m = std::fs::metadata(binary).map_err(|e| bad(&format!("cannot be found: {e}")))?;
    if !m.is_file() {
        return Err(bad("is not a file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if m.permissions().mode() & 0o111 == 0 {
            return Err(bad("is not executable (chmod +x)"));
        }
    }
    Ok(())
}
