//! The two batch scripts `sweep submit --slurm` writes into a run folder, and the options they carry.
//!
//! - `slurm/array.sbatch`: a job array, task I runs shard I of the plan (`--shard slurm`: the index from
//!   `SLURM_ARRAY_TASK_ID`, the count from `sweep.json`), so that any subset of indices can be
//!   resubmitted (`sbatch --array=1,5 ...`) or requeued. Logs go to `logs/shard-I.log` in append mode:
//!   a requeued or resubmitted task adds to its log, under a header line naming the job and attempt.
//! - `slurm/merge.sbatch`: `gpumemsim sweep merge DIR`, submitted with `--dependency=afterany` on the
//!   array, so that it runs however the tasks ended and reports missing and failed points.
//!
//! Only what the user gives becomes a directive (partition, account, QOS, time, CPUs, memory, extra
//! `#SBATCH` options): anything else is the cluster's default, so a script never asks for more than the
//! node has unless told to. Every value is checked before it is written (no whitespace, quotes or
//! newlines that could change the script's meaning); paths are single-quoted.
//!
//! `reports/slurm/sweep.sbatch` in the repository is an annotated copy of what [`array_script`]
//! writes.

use crate::sweep::SweepError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The Slurm settings of a run folder's jobs. Stored in `slurm/options.json`, so that a resubmission
/// keeps them unless a flag changes one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    /// Per task: `MM`, `HH:MM:SS`, `D-HH:MM`, ...
    pub time: Option<String>,
    /// CPUs per task; the shard uses that many worker threads.
    pub cpus: Option<u32>,
    /// Memory per node: `8G`, `500M`, ...
    pub mem: Option<String>,
    /// At most this many array tasks at once (`--array=...%K`).
    pub throttle: Option<u32>,
    /// `module load` lines, in order.
    #[serde(default)]
    pub modules: Vec<String>,
    /// More `#SBATCH` options, e.g. `--constraint=avx512`.
    #[serde(default)]
    pub sbatch: Vec<String>,
    /// The gpumemsim binary the tasks run, when named (`--binary`); otherwise the one that submits.
    pub binary: Option<String>,
}

impl SlurmOptions {
    /// `self` with every option `newer` sets replaced (lists replaced when given).
    pub fn overlay(&self, newer: &SlurmOptions) -> SlurmOptions {
        fn pick<T: Clone>(new: &Option<T>, old: &Option<T>) -> Option<T> {
            new.clone().or_else(|| old.clone())
        }
        let list = |new: &Vec<String>, old: &Vec<String>| {
            if new.is_empty() {
                old.clone()
            } else {
                new.clone()
            }
        };
        SlurmOptions {
            partition: pick(&newer.partition, &self.partition),
            account: pick(&newer.account, &self.account),
            qos: pick(&newer.qos, &self.qos),
            time: pick(&newer.time, &self.time),
            cpus: pick(&newer.cpus, &self.cpus),
            mem: pick(&newer.mem, &self.mem),
            throttle: pick(&newer.throttle, &self.throttle),
            modules: list(&newer.modules, &self.modules),
            sbatch: list(&newer.sbatch, &self.sbatch),
            binary: pick(&newer.binary, &self.binary),
        }
    }

    /// Checks every value; the error names the option, the value and what is allowed.
    pub fn validate(&self) -> Result<(), SweepError> {
        let name = |c: char| c.is_ascii_alphanumeric() || "_.-,".contains(c);
        for (opt, v) in [
            ("partition", &self.partition),
            ("account", &self.account),
            ("qos", &self.qos),
        ] {
            if let Some(v) = v {
                check(
                    opt,
                    v,
                    v.chars().all(name),
                    "letters, digits and _ . - , only",
                )?;
            }
        }
        if let Some(t) = &self.time {
            check(
                "time",
                t,
                is_time(t),
                "a Slurm time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED",
            )?;
        }
        if let Some(m) = &self.mem {
            check(
                "mem",
                m,
                mem_mib(m).is_some(),
                "a size Slurm accepts: digits with an optional K, M, G or T suffix (e.g. 8G; no \
                 suffix: megabytes), at most 2^43 MiB (8 EiB)",
            )?;
        }
        if self.cpus == Some(0) {
            check("cpus", "0", false, "at least 1")?;
        }
        if self.throttle == Some(0) {
            check("throttle", "0", false, "at least 1")?;
        }
        for m in &self.modules {
            let ok = !m.is_empty()
                && m.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.+/-".contains(c));
            check(
                "module",
                m,
                ok,
                "a module name: letters, digits and _ . + / - only",
            )?;
        }
        for o in &self.sbatch {
            let plain = o.starts_with("--")
                && o.len() > 2
                && !o
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control() || "'\"\\#`$".contains(c));
            check(
                "sbatch",
                o,
                plain,
                "one long option, e.g. --constraint=avx512 (no spaces, quotes, #, $ or backslashes)",
            )?;
            let key = o.trim_start_matches('-').split('=').next().unwrap_or("");
            let managed = [
                "array",
                "output",
                "error",
                "open-mode",
                "dependency",
                "job-name",
                "requeue",
            ];
            check(
                "sbatch",
                o,
                !managed.contains(&key),
                "set by `sweep submit` itself (array indices, logs, dependency, name, requeue)",
            )?;
        }
        Ok(())
    }
}

fn check(option: &str, value: &str, ok: bool, allowed: &str) -> Result<(), SweepError> {
    if ok {
        Ok(())
    } else {
        Err(SweepError::Option {
            option: option.into(),
            value: value.into(),
            message: format!("must be {allowed}"),
        })
    }
}

/// Slurm's time formats (sbatch(1), `--time`).
fn is_time(t: &str) -> bool {
    if t == "UNLIMITED" || t == "INFINITE" {
        return true;
    }
    let nums = |s: &str, max: usize| {
        let parts: Vec<&str> = s.split(':').collect();
        parts.len() <= max
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    match t.split_once('-') {
        Some((d, rest)) => !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()) && nums(rest, 3),
        None => nums(t, 3),
    }
}

/// What the scripts need besides the options.
#[derive(Debug, Clone)]
pub struct ScriptContext<'a> {
    /// The sweep's name (for the job name).
    pub sweep: &'a str,
    /// The spec, absolute.
    pub spec: &'a Path,
    /// The run folder, absolute.
    pub dir: &'a Path,
    /// The gpumemsim binary, absolute.
    pub binary: &'a Path,
    pub shards: usize,
}

/// `'text'` for the shell.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A job name from the sweep's name: letters, digits, `.`, `_` and `-`, at most 48 characters.
pub fn job_name(sweep: &str) -> String {
    let mut s: String = sweep
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let s = s.trim_matches('-');
    format!("gpumemsim-{}", &s[..s.len().min(38)])
}

/// A path that can go into a `#SBATCH` directive and a shell word unchanged.
/// `--mem` in MiB, as Slurm reads it (`str_to_mbytes`: digits and one optional K/M/G/T suffix,
/// default megabytes; the count is a 64-bit integer of MiB), or `None` for what sbatch would refuse:
/// no digits, a second suffix, a fraction, or a size that overflows (`99999999999999999999G`).
pub fn mem_mib(m: &str) -> Option<u64> {
    let digits = m.trim_end_matches(|c: char| "KMGTkmgt".contains(c));
    if digits.is_empty()
        || !digits.chars().all(|c| c.is_ascii_digit())
        || m.len() - digits.len() > 1
    {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let mib = match m[digits.len()..].to_ascii_uppercase().as_str() {
        "K" => n.div_ceil(1024),
        "" | "M" => n,
        "G" => n.checked_mul(1 << 10)?,
        "T" => n.checked_mul(1 << 20)?,
        _ => return None,
    };
    (mib <= 1 << 43).then_some(mib)
}

pub fn check_path(what: &str, p: &Path) -> Result<String, SweepError> {
    let s = p.to_str().unwrap_or("");
    let ok = !s.is_empty()
        && !s
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "%'\"\\$`#".contains(c));
    if ok {
        Ok(s.to_string())
    } else {
        Err(SweepError::Option {
            option: what.into(),
            value: p.display().to_string(),
            message: "must be a path without spaces, quotes, %, #, $ or backslashes (it goes into \
                      #SBATCH directives, where % starts a file-name pattern)"
                .into(),
        })
    }
}

fn directives(o: &SlurmOptions, cpus: bool) -> String {
    let mut s = String::new();
    let mut line = |k: &str, v: &str| s.push_str(&format!("#SBATCH --{k}={v}\n"));
    if let Some(v) = &o.partition {
        line("partition", v);
    }
    if let Some(v) = &o.account {
        line("account", v);
    }
    if let Some(v) = &o.qos {
        line("qos", v);
    }
    if let Some(v) = &o.time {
        line("time", v);
    }
    if let Some(v) = o.cpus.filter(|_| cpus) {
        line("cpus-per-task", &v.to_string());
    }
    if let Some(v) = &o.mem {
        line("mem", v);
    }
    for x in &o.sbatch {
        s.push_str(&format!("#SBATCH {x}\n"));
    }
    s
}

/// `module load` lines (after a shebang that starts a login shell, where `module` is defined).
fn modules(o: &SlurmOptions) -> String {
    o.modules
        .iter()
        .map(|m| format!("module load {m}\n"))
        .collect()
}

fn shebang(o: &SlurmOptions) -> &'static str {
    if o.modules.is_empty() {
        "#!/bin/bash"
    } else {
        // A login shell defines `module` (Lmod, Environment Modules) on clusters that have it.
        "#!/bin/bash -l"
    }
}

/// The job array script: task I runs shard I. Extra arguments (`sbatch ... array.sbatch ARGS`) reach
/// gpumemsim, e.g. `--retry-failed`.
pub fn array_script(o: &SlurmOptions, c: &ScriptContext) -> String {
    let dir = c.dir.display();
    format!(
        "{shebang}
# Shards of the gpumemsim sweep {sweep:?}: array task I runs shard I of the {n} in
# {dir}/sweep.json, into {dir}/points/.
# Written by `gpumemsim sweep submit` (gpumemsim {build}); reports/slurm/sweep.sbatch in the gpumemsim
# repository explains each line. `gpumemsim sweep status {dir}` says what is missing.
# Resubmit or requeue any indices (extra arguments reach gpumemsim, e.g. --retry-failed):
#   sbatch --array=1,5 {dir}/slurm/array.sbatch
#
#SBATCH --job-name={name}
#SBATCH --output={dir}/logs/shard-%a.log
#SBATCH --open-mode=append
#SBATCH --requeue
{directives}
set -eo pipefail
{modules}set -u
echo \"== shard ${{SLURM_ARRAY_TASK_ID}} of {n}: job ${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}} (id ${{SLURM_JOB_ID}}), restart ${{SLURM_RESTART_COUNT:-0}}, on $(hostname) at $(date '+%F %T %Z')\"
exec {bin} sweep {spec} --out {qdir} --shard slurm ${{SLURM_CPUS_PER_TASK:+--jobs \"$SLURM_CPUS_PER_TASK\"}} \"$@\"
",
        shebang = shebang(o),
        sweep = c.sweep,
        n = c.shards,
        build = crate::version::BUILD,
        name = job_name(c.sweep),
        directives = directives(o, true),
        modules = modules(o),
        bin = quote(&c.binary.display().to_string()),
        spec = quote(&c.spec.display().to_string()),
        qdir = quote(&dir.to_string()),
    )
}

/// The merge job: runs after the array however its tasks ended (`afterany`), combines the results or
/// says which shards to resubmit.
pub fn merge_script(o: &SlurmOptions, c: &ScriptContext) -> String {
    let dir = c.dir.display();
    format!(
        "{shebang}
# Merge of the gpumemsim sweep {sweep:?} in {dir}: submitted with --dependency=afterany on the
# shard array, so it runs however the tasks ended. With every point done it writes results.csv,
# results.json, the charts and index.html; otherwise it lists the missing and failed points and the
# shard indices to resubmit, and exits 1.
# Written by `gpumemsim sweep submit` (gpumemsim {build}).
#
#SBATCH --job-name={name}-merge
#SBATCH --output={dir}/logs/merge.log
#SBATCH --open-mode=append
{directives}
set -eo pipefail
{modules}set -u
echo \"== merge: job ${{SLURM_JOB_ID}}, on $(hostname) at $(date '+%F %T %Z')\"
exec {bin} sweep merge {qdir} \"$@\"
",
        shebang = shebang(o),
        sweep = c.sweep,
        build = crate::version::BUILD,
        name = job_name(c.sweep),
        directives = directives(o, false),
        modules = modules(o),
        bin = quote(&c.binary.display().to_string()),
        qdir = quote(&dir.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> SlurmOptions {
        SlurmOptions {
            partition: Some("cpu".into()),
            account: Some("proj42".into()),
            time: Some("1-02:00:00".into()),
            cpus: Some(4),
            mem: Some("8G".into()),
            modules: vec!["gcc/12.2".into()],
            sbatch: vec!["--constraint=avx512".into()],
            ..Default::default()
        }
    }

    #[test]
    fn memory_sizes_are_read_as_slurm_reads_them() {
        assert_eq!(mem_mib("8G"), Some(8192));
        assert_eq!(mem_mib("4096"), Some(4096));
        assert_eq!(mem_mib("1500k"), Some(2));
        assert_eq!(mem_mib("0"), Some(0), "0: all of the node's memory");
        for bad in [
            "",
            "G",
            "8GB",
            "1.5G",
            "-1G",
            "9223372036854775807T",
            "99999999999999999999",
        ] {
            assert_eq!(mem_mib(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_are_checked_naming_the_option_and_what_is_allowed() {
        opts().validate().unwrap();
        let bad = [
            (
                SlurmOptions {
                    partition: Some("a b".into()),
                    ..opts()
                },
                "--partition \"a b\"",
            ),
            (
                SlurmOptions {
                    time: Some("2h".into()),
                    ..opts()
                },
                "--time \"2h\": must be a Slurm time",
            ),
            (
                SlurmOptions {
                    mem: Some("8GB".into()),
                    ..opts()
                },
                "--mem \"8GB\"",
            ),
            (
                SlurmOptions {
                    mem: Some("99999999999999999999G".into()),
                    ..opts()
                },
                "--mem \"99999999999999999999G\": must be a size Slurm accepts",
            ),
            (
                SlurmOptions {
                    cpus: Some(0),
                    ..opts()
                },
                "--cpus \"0\": must be at least 1",
            ),
            (
                SlurmOptions {
                    modules: vec!["x;rm".into()],
                    ..opts()
                },
                "--module \"x;rm\"",
            ),
            (
                SlurmOptions {
                    sbatch: vec!["--array=1".into()],
                    ..opts()
                },
                "set by `sweep submit`",
            ),
            (
                SlurmOptions {
                    sbatch: vec!["-p x".into()],
                    ..opts()
                },
                "one long option",
            ),
        ];
        for (o, want) in bad {
            let e = o.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
        for t in [
            "30",
            "30:00",
            "2:00:00",
            "1-0",
            "1-2:30",
            "1-2:30:00",
            "UNLIMITED",
        ] {
            assert!(is_time(t), "{t}");
        }
        for t in ["", "1-", "a", "1:2:3:4", "-1"] {
            assert!(!is_time(t), "{t}");
        }
    }

    #[test]
    fn a_resubmission_keeps_the_options_it_does_not_change() {
        let new = SlurmOptions {
            time: Some("30".into()),
            ..Default::default()
        };
        let o = opts().overlay(&new);
        assert_eq!(o.time.as_deref(), Some("30"));
        assert_eq!(o.partition.as_deref(), Some("cpu"));
        assert_eq!(o.modules, vec!["gcc/12.2".to_string()]);
    }

    #[test]
    fn scripts_carry_exactly_the_given_directives_and_run_the_shard_from_slurm() {
        let c = ScriptContext {
            sweep: "L2 slices & atomics",
            spec: Path::new("/home/u/l2.toml"),
            dir: Path::new("/scratch/u/l2"),
            binary: Path::new("/home/u/gpumemsim/target/release/gpumemsim"),
            shards: 16,
        };
        let a = array_script(&opts(), &c);
        for want in [
            "#!/bin/bash -l\n",
            "#SBATCH --job-name=gpumemsim-L2-slices-atomics\n",
            "#SBATCH --output=/scratch/u/l2/logs/shard-%a.log\n#SBATCH --open-mode=append\n",
            "#SBATCH --partition=cpu\n#SBATCH --account=proj42\n#SBATCH --time=1-02:00:00\n",
            "#SBATCH --cpus-per-task=4\n#SBATCH --mem=8G\n#SBATCH --constraint=avx512\n",
            "module load gcc/12.2\n",
            "exec '/home/u/gpumemsim/target/release/gpumemsim' sweep '/home/u/l2.toml' --out '/scratch/u/l2' --shard slurm",
        ] {
            assert!(a.contains(want), "{want}\n---\n{a}");
        }
        let m = merge_script(&opts(), &c);
        assert!(
            m.contains(
                "exec '/home/u/gpumemsim/target/release/gpumemsim' sweep merge '/scratch/u/l2'"
            ),
            "{m}"
        );
        assert!(
            !m.contains("cpus-per-task")
                && m.contains("#SBATCH --output=/scratch/u/l2/logs/merge.log"),
            "{m}"
        );
        // Nothing the user did not ask for.
        let bare = array_script(&SlurmOptions::default(), &c);
        assert!(
            !bare.contains("--partition")
                && !bare.contains("--mem")
                && !bare.contains("--cpus-per-task")
        );
        assert!(bare.starts_with("#!/bin/bash\n"));
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert!(check_path("out", Path::new("/a b")).is_err());
        assert!(check_path("out", Path::new("/a%b")).is_err());
    }
}
