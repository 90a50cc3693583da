//! Sweeps on a cluster (issue 17): the shard count belongs to the plan, a task runs the shard its
//! index names, a shard's exit status says whether its points are done whichever attempt ran them,
//! `sweep status` names what to resubmit, failed points rerun only when asked, results of different
//! builds never mix silently, `sweep submit --slurm` submits only what is left, and the real thing on
//! a one-node Slurm cluster (scripts/slurm-test.sh).

use gpumemsim::sweep::slurm::script::SlurmOptions;
use gpumemsim::sweep::slurm::{self, Queued, Scheduler, SubmitOptions};
use gpumemsim::sweep::{self, SweepError};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_gpumemsim");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("gpumemsim-cluster-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 5 points on the tiny GPU: four contention runs (indices 0-3) and one run the watchdog stops
/// (index 4, a failed point). With 2 shards, shard 0 = {0, 2, 4} holds the failure, shard 1 = {1, 3}.
fn spec(dir: &Path) -> PathBuf {
    let p = dir.join("spec.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"cluster\"\nconfig = {:?}\nseeds = [1]\n\
             [[workload]]\nname = \"ok\"\nkernel = {kern:?}\nparams = {{ T = 256, K = [1, 8, 32, 64] }}\n\
             [[workload]]\nname = \"stops\"\nkernel = {kern:?}\nparams = {{ T = 256 }}\n\
             set = {{ \"watchdog.max_cycles\" = 50 }}\n",
            root().join("configs/tiny.toml"),
            kern = root().join("workloads/contention.kern"),
        ),
    )
    .unwrap();
    p
}

fn gpumemsim(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(EXE);
    c.args(args).env_remove("SLURM_ARRAY_TASK_ID");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Exit code, stdout, stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    run_env(args, &[])
}

fn run_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let o = gpumemsim(args, env);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_planned_sweep_runs_by_shard_index_and_merges_to_the_single_machine_results() {
    let d = scratch("plan");
    let spec = spec(&d);
    let out = d.join("run");
    let (code, said, err) = run(&["sweep", "plan", s(&spec), "--out", s(&out), "--shards", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        said.contains("5 points in 2 shards (2 to 3 points each)"),
        "{said}"
    );
    assert!(
        out.join("logs").is_dir(),
        "plan makes the folder Slurm writes logs into"
    );
    let m = sweep::results::read_manifest(&out).unwrap();
    assert_eq!((m.shards, m.points.len()), (2, 5));

    // The count comes from the plan; an index beyond it, or another count, is refused.
    let shard = |arg: &str, env: &[(&str, &str)]| {
        run_env(&["sweep", s(&spec), "--out", s(&out), "--shard", arg], env)
    };
    let (code, _, err) = shard("1/3", &[]);
    assert!(
        code == 1 && err.contains("the plan has 2 shards, not 3"),
        "{err}"
    );
    let (code, _, err) = shard("2", &[]);
    assert!(code == 1 && err.contains("shard 2 does not exist"), "{err}");
    let (code, _, err) = shard("auto", &[]);
    assert!(
        code == 1 && err.contains("SLURM_ARRAY_TASK_ID is not set"),
        "{err}"
    );

    // Array task 1 alone (as `sbatch --array=1` starts it): exactly shard 1 of 2, never combined.
    let (code, said, err) = shard("auto", &[("SLURM_ARRAY_TASK_ID", "1")]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(
        said.contains("2 points in shard 1 of 2: 2 ran now, 0 were done"),
        "{said}"
    );
    assert!(
        err.contains("2/2 points done (100%, 2 now), 0 failed"),
        "progress lines in a log: {err}"
    );
    assert!(!out.join("results.csv").exists());

    // A damaged point file and one swapped with another point's are named, not counted as missing
    // in silence.
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let (a, b) = (read(&files[0]), read(&files[1]));
    std::fs::write(&files[0], b"{\"truncated\": ").unwrap();
    std::fs::write(&files[1], &a).unwrap();
    let (code, said, _) = run(&["sweep", "status", s(&out)]);
    assert_eq!(code, 2);
    let damaged: Vec<&str> = said.lines().filter(|l| l.starts_with("damaged")).collect();
    assert_eq!(damaged.len(), 2, "{said}");
    assert!(
        said.contains("not a point result of this gpumemsim version"),
        "{said}"
    );
    assert!(
        said.contains("a file swapped or copied from another sweep"),
        "{said}"
    );
    std::fs::write(&files[0], &a).unwrap();
    std::fs::write(&files[1], &b).unwrap();

    let (code, said, _) = run(&["sweep", "status", s(&out)]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("     0       3       0       0       3"),
        "{said}"
    );
    assert!(
        said.contains("     1       2       2       0       0"),
        "{said}"
    );
    assert!(
        said.contains("to resubmit (missing points): shard 0:"),
        "{said}"
    );
    let (code, _, err) = run(&["sweep", "merge", s(&out)]);
    assert!(
        code == 1 && err.contains("3 of 5 points have no result yet"),
        "{err}"
    );
    assert!(
        err.contains("shard 0:") && !out.join("results.csv").exists(),
        "{err}"
    );

    // Shard 0 holds the point the watchdog stops: exit 2, on every attempt.
    let (code, said, _) = shard("0", &[]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("3 ran now, 0 were done, 1 failed (rerun them with --retry-failed)"),
        "{said}"
    );
    let (code, said, _) = shard("0", &[]);
    assert_eq!(
        code, 2,
        "a later attempt that runs nothing still reports the failed point: {said}"
    );
    assert!(said.contains("0 ran now, 3 were done, 1 failed"), "{said}");
    let (code, said, _) = run(&["sweep", "status", s(&out)]);
    assert_eq!(code, 2);
    assert!(
        said.contains("failed: point") && said.contains("stops seed 1"),
        "{said}"
    );
    assert!(
        said.contains("to rerun the failed points: shard 0 with --retry-failed"),
        "{said}"
    );
    let retry = run_env(
        &[
            "sweep",
            s(&spec),
            "--out",
            s(&out),
            "--shard",
            "0",
            "--retry-failed",
        ],
        &[],
    );
    assert_eq!(retry.0, 2);
    assert!(
        retry.1.contains("1 ran now, 2 were done, 1 failed"),
        "{}",
        retry.1
    );

    // Every point ran, one failed: status exits 2 and its last line says why.
    let (code, said, _) = run(&["sweep", "status", s(&out)]);
    assert_eq!(code, 2, "{said}");
    let last = said.lines().last().unwrap_or("");
    assert!(
        last.contains("every point ran, but 1 point failed")
            && !said.contains("every point has a result"),
        "{said}"
    );

    // Every point has a result: merge combines (exit 1: a run failed), as a single run does.
    let (code, _, err) = run(&["sweep", "merge", s(&out)]);
    assert_eq!(code, 1, "{err}");
    let single = d.join("single");
    let (code, _, _) = run(&["sweep", s(&spec), "--out", s(&single)]);
    assert_eq!(code, 1);
    for f in ["results.csv", "results.json", "index.html"] {
        assert_eq!(read(&out.join(f)), read(&single.join(f)), "{f} differs");
    }
    let csv = String::from_utf8(read(&out.join("results.csv"))).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",checks_failed,build,"),
        "{csv}"
    );
    assert!(
        csv.contains(gpumemsim::version::BUILD),
        "every row names its build"
    );
}

/// Rewrites the build recorded in one point file (`None`: as a result written before builds were
/// recorded).
fn restamp(dir: &Path, build: Option<&str>) -> PathBuf {
    let p = std::fs::read_dir(dir.join("points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .min()
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&read(&p)).unwrap();
    match build {
        Some(b) => v["build"] = b.into(),
        None => {
            v.as_object_mut().unwrap().remove("build");
        }
    }
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

#[test]
fn results_of_another_build_are_not_mixed_unless_asked() {
    let (code, said, _) = run(&["--version"]);
    assert!(
        code == 0 && said.contains(gpumemsim::version::BUILD),
        "{said}"
    );
    let d = scratch("builds");
    let spec = spec(&d);
    let out = d.join("run");
    assert_eq!(run(&["sweep", s(&spec), "--out", s(&out)]).0, 1);
    let other = "0.0.1+00000000deadbeef";
    restamp(&out, Some(other));

    let (code, _, err) = run(&["sweep", s(&spec), "--out", s(&out)]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "holds results of another simulator build (1 by {other})"
        )),
        "{err}"
    );
    assert!(err.contains("--mix-builds"), "{err}");
    let (code, _, err) = run(&["sweep", "merge", s(&out)]);
    assert!(
        code == 1 && err.contains("results of different simulator builds"),
        "{err}"
    );
    let (_, said, _) = run(&["sweep", "status", s(&out)]);
    assert!(
        said.contains(&format!("computed by gpumemsim {other}: 1 points")),
        "{said}"
    );
    assert!(said.contains("warning: results of 2 builds"), "{said}");

    // Asked: the run keeps the other build's point, merge combines, each row names its build.
    let (code, said, _) = run(&["sweep", s(&spec), "--out", s(&out), "--mix-builds"]);
    assert!(said.contains("0 ran now, 5 were done"), "{said}");
    assert_eq!(code, 1, "a point failed");
    let (_, _, err) = run(&["sweep", "merge", s(&out), "--mix-builds"]);
    assert!(!err.contains("different simulator builds"), "{err}");
    let csv = String::from_utf8(read(&out.join("results.csv"))).unwrap();
    assert!(
        csv.contains(other) && csv.contains(gpumemsim::version::BUILD),
        "{csv}"
    );
    let html = String::from_utf8(read(&out.join("index.html"))).unwrap();
    assert!(html.contains(other), "the report names both builds");

    // A result from before builds were recorded counts as another build too.
    restamp(&out, None);
    let (code, _, err) = run(&["sweep", s(&spec), "--out", s(&out)]);
    assert!(code == 1 && err.contains("unrecorded"), "{err}");

    // Following the error's advice — the results folder deleted, the plan kept — recomputes all.
    std::fs::remove_dir_all(out.join("points")).unwrap();
    let (_, said, err) = run(&["sweep", s(&spec), "--out", s(&out)]);
    assert!(said.contains("5 ran now, 0 were done"), "{said}{err}");
    let csv = String::from_utf8(read(&out.join("results.csv"))).unwrap();
    assert!(!csv.contains(other), "{csv}");
}

/// Stands in for `sbatch` and `squeue`: job ids from 100 up, a queue the test sets.
#[derive(Default)]
struct FakeSlurm {
    calls: RefCell<Vec<Vec<String>>>,
    queue: RefCell<Vec<Queued>>,
}

impl Scheduler for FakeSlurm {
    fn sbatch(&self, args: &[String]) -> Result<String, SweepError> {
        let mut c = self.calls.borrow_mut();
        c.push(args.to_vec());
        Ok((99 + c.len()).to_string())
    }
    fn queued(&self, jobs: &[String], _: &[String]) -> Result<Vec<Queued>, SweepError> {
        Ok(self
            .queue
            .borrow()
            .iter()
            .filter(|q| jobs.contains(&q.job))
            .cloned()
            .collect())
    }
}

/// A scheduler that refuses every submission.
struct DownSlurm;

impl Scheduler for DownSlurm {
    fn sbatch(&self, _: &[String]) -> Result<String, SweepError> {
        Err(SweepError::Plan(
            "sbatch: error: Batch job submission failed".into(),
        ))
    }
    fn queued(&self, _: &[String], _: &[String]) -> Result<Vec<Queued>, SweepError> {
        Ok(vec![])
    }
}

#[test]
fn submit_refuses_a_binary_it_cannot_start_and_a_failed_submission_leaves_no_plan() {
    let d = scratch("submit-refused");
    let spec = spec(&d);
    let out = d.join("run");
    let opts = SubmitOptions {
        shards: Some(2),
        ..Default::default()
    };
    let submit = |binary: &Path, sched: &dyn Scheduler| {
        let mut plan = sweep::spec::load(&spec).unwrap();
        slurm::submit(&mut plan, &spec, &out, binary, &opts, sched)
    };
    let e = submit(&d.join("no-such-gpumemsim"), &FakeSlurm::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no-such-gpumemsim") && e.contains("cannot be found"),
        "{e}"
    );
    let e = submit(&spec, &FakeSlurm::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not executable"), "{e}");
    assert!(!out.join("sweep.json").exists(), "refused before planning");
    let e = submit(Path::new(EXE), &DownSlurm).unwrap_err().to_string();
    assert!(e.contains("Batch job submission failed"), "{e}");
    assert!(
        !out.join("sweep.json").exists() && !out.join("slurm").exists(),
        "a submission that queued nothing leaves no plan and no scripts"
    );
}

#[test]
fn submit_writes_the_scripts_and_submits_only_shards_left_to_run() {
    let d = scratch("submit");
    let spec = spec(&d);
    let out = d.join("run");
    let fake = FakeSlurm::default();
    let submit = |opts: &SubmitOptions| {
        let mut plan = sweep::spec::load(&spec).unwrap();
        slurm::submit(&mut plan, &spec, &out, Path::new(EXE), opts, &fake)
    };
    let e = submit(&SubmitOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains("--shards N"),
        "a new run needs a shard count: {e}"
    );

    let first = SubmitOptions {
        shards: Some(3),
        slurm: SlurmOptions {
            partition: Some("cpu".into()),
            cpus: Some(2),
            throttle: Some(2),
            ..Default::default()
        },
        ..Default::default()
    };
    // A dry run writes the plan and scripts and submits nothing.
    let dry = submit(&SubmitOptions {
        dry_run: true,
        ..first.clone()
    })
    .unwrap();
    assert!(fake.calls.borrow().is_empty());
    assert_eq!(dry.commands.len(), 2);
    assert!(
        dry.commands[1]
            .0
            .contains("--dependency=afterany:ARRAY_JOB_ID"),
        "{:?}",
        dry.commands
    );
    let array = std::fs::read_to_string(out.join("slurm/array.sbatch")).unwrap();
    assert!(
        array.contains("#SBATCH --partition=cpu\n") && array.contains("--shard slurm"),
        "{array}"
    );

    let sub = submit(&first).unwrap();
    assert_eq!(
        (sub.shards, sub.indices.clone(), sub.points_to_run),
        (3, vec![0, 1, 2], 5)
    );
    let script = out.join("slurm/array.sbatch").display().to_string();
    let merge = out.join("slurm/merge.sbatch").display().to_string();
    assert_eq!(
        fake.calls.borrow().clone(),
        vec![
            vec!["--array=0-2%2".to_string(), script.clone()],
            vec!["--dependency=afterany:100".to_string(), merge.clone()],
        ]
    );
    let jobs = std::fs::read_to_string(out.join("slurm/jobs.tsv")).unwrap();
    assert!(
        jobs.contains("\tarray\t100\t0-2\n") && jobs.contains("\tmerge\t101\tafterany:100\n"),
        "{jobs}"
    );

    // Shard 2 ran; shard 0 still runs (task 100_0 in the queue); shard 1 was killed.
    let (code, _, _) = run(&["sweep", s(&spec), "--out", s(&out), "--shard", "2"]);
    assert_eq!(code, 0);
    *fake.queue.borrow_mut() = vec![Queued {
        job: "100".into(),
        index: Some(0),
    }];
    let e = submit(&SubmitOptions {
        shards: Some(4),
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("still queued or running"),
        "no new plan under queued jobs: {e}"
    );
    // Nothing queued: still, --shards never re-splits the plan behind the user's back, dry or not.
    let queue = std::mem::take(&mut *fake.queue.borrow_mut());
    let plan_before = read(&out.join("sweep.json"));
    for dry_run in [true, false] {
        let e = submit(&SubmitOptions {
            shards: Some(4),
            dry_run,
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("the plan has 3 shards, --shards 4 would re-split it"),
            "{e}"
        );
        assert_eq!(read(&out.join("sweep.json")), plan_before);
    }
    *fake.queue.borrow_mut() = queue;
    let again = submit(&SubmitOptions::default()).unwrap();
    assert_eq!(
        (again.indices.clone(), again.in_flight.clone()),
        (vec![1], vec![0])
    );
    assert_eq!(
        fake.calls.borrow()[2..].to_vec(),
        vec![
            vec!["--array=1%2".to_string(), script.clone()],
            vec!["--dependency=afterany:102:100".to_string(), merge.clone()],
        ],
        "the new merge waits for the old array's running task too"
    );
    let array = std::fs::read_to_string(out.join("slurm/array.sbatch")).unwrap();
    assert!(
        array.contains("#SBATCH --partition=cpu\n#SBATCH --cpus-per-task=2\n"),
        "options kept: {array}"
    );

    // Everything but the failed point done: nothing to submit, unless asked to retry it.
    fake.queue.borrow_mut().clear();
    for i in ["0", "1"] {
        run(&["sweep", s(&spec), "--out", s(&out), "--shard", i]);
    }
    let done = submit(&SubmitOptions::default()).unwrap();
    assert!(done.indices.is_empty() && done.commands.is_empty());
    let retry = submit(&SubmitOptions {
        retry_failed: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!((retry.indices.clone(), retry.points_to_run), (vec![1], 1));
    assert_eq!(
        fake.calls.borrow()[4],
        vec![
            "--array=1%2".to_string(),
            script,
            "--retry-failed".to_string()
        ]
    );
}

/// The annotated examples in reports/slurm/ show what `submit` writes: the same directives, the same
/// shard invocation; all of them are valid bash.
#[test]
fn the_shipped_example_scripts_match_what_submit_writes() {
    let d = scratch("examples");
    let spec = spec(&d);
    let out = d.join("run");
    let mut plan = sweep::spec::load(&spec).unwrap();
    let opts = SubmitOptions {
        shards: Some(2),
        dry_run: true,
        slurm: SlurmOptions {
            partition: Some("p".into()),
            account: Some("a".into()),
            time: Some("10".into()),
            cpus: Some(2),
            mem: Some("1G".into()),
            modules: vec!["m".into()],
            ..Default::default()
        },
        ..Default::default()
    };
    slurm::submit(
        &mut plan,
        &spec,
        &out,
        Path::new(EXE),
        &opts,
        &FakeSlurm::default(),
    )
    .unwrap();
    for (written, example) in [
        ("array.sbatch", "sweep.sbatch"),
        ("merge.sbatch", "merge.sbatch"),
    ] {
        let w = std::fs::read_to_string(out.join("slurm").join(written)).unwrap();
        let e = std::fs::read_to_string(root().join("reports/slurm").join(example)).unwrap();
        for line in w.lines().filter(|l| l.starts_with("#SBATCH --")) {
            let key = line.split('=').next().unwrap();
            assert!(
                e.lines()
                    .any(|l| l.trim_start_matches('#').starts_with(&key[1..])),
                "{example} does not show `{key}`"
            );
        }
        for word in ["set -eo pipefail", "set -u", "module load", "\"$@\""] {
            assert!(
                w.contains(word) && e.contains(word),
                "{written}/{example}: {word}"
            );
        }
        for f in [
            out.join("slurm").join(written),
            root().join("reports/slurm").join(example),
        ] {
            let ok = Command::new("bash").arg("-n").arg(&f).status().unwrap();
            assert!(ok.success(), "{} is not valid bash", f.display());
        }
    }
    let w = std::fs::read_to_string(out.join("slurm/array.sbatch")).unwrap();
    let e = std::fs::read_to_string(root().join("reports/slurm/sweep.sbatch")).unwrap();
    let shard = "--shard slurm ${SLURM_CPUS_PER_TASK:+--jobs \"$SLURM_CPUS_PER_TASK\"} \"$@\"";
    assert!(w.contains(shard) && e.contains(shard));
}

/// The real-Slurm test: scripts/slurm-test.sh starts a one-node cluster on localhost, submits a sweep
/// with `sweep submit`, kills a task, resubmits it, waits for the merge job and compares with a
/// single-machine sweep byte for byte. It runs where Slurm is installed (scripts/test.sh installs it)
/// and the test may start daemons (root or password-less sudo); `GPUMEMSIM_REQUIRE_SLURM=1` (set by
/// .ci/run) makes it run, installing Slurm, and makes "cannot run here" a failure.
#[test]
fn a_sweep_on_a_one_node_slurm_cluster_merges_to_the_single_machine_results() {
    let required = std::env::var("GPUMEMSIM_REQUIRE_SLURM").is_ok_and(|v| v == "1");
    let installed = ["slurmctld", "slurmd", "sbatch", "munged"].iter().all(|c| {
        Command::new("sh")
            .args([
                "-c",
                &format!("PATH=\"$PATH:/usr/sbin:/sbin\" command -v {c}"),
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !required && !installed {
        eprintln!("skipped: Slurm is not installed (scripts/test.sh installs it; GPUMEMSIM_REQUIRE_SLURM=1 requires it)");
        return;
    }
    let o = Command::new(root().join("scripts/slurm-test.sh"))
        .arg(EXE)
        .env_remove("SLURM_CONF")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    match o.status.code() {
        Some(0) => assert!(text.contains("PASSED"), "{text}"),
        Some(77) if !required => eprintln!("skipped: {text}"),
        _ => panic!("scripts/slurm-test.sh failed ({}):\n{text}", o.status),
    }
}

/// `plot` of a folder with a damaged point file names the file and why, where it said "1 of 5 points
/// have no result yet" (issue 43 item 7: damaged files are not counted as missing).
#[test]
fn plot_names_a_damaged_point_file_instead_of_counting_it_missing() {
    let d = scratch("plot-damaged");
    let out = d.join("run");
    let (code, said, err) = run(&["sweep", s(&spec(&d)), "--out", s(&out)]);
    assert_eq!(code, 1, "the watchdog point fails: {said}{err}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    std::fs::write(&files[0], b"{\"truncated\": ").unwrap();
    // Without the combined table, the point files are all there is to plot from.
    std::fs::remove_file(out.join("results.json")).unwrap();
    let png = d.join("k.png");
    let (code, _, err) = run(&[
        "plot",
        s(&out),
        "--kind",
        "line",
        "--x",
        "K",
        "--y",
        "gpu.ipc",
        "--out",
        s(&png),
    ]);
    assert_eq!(code, 1, "{err}");
    let name = files[0].display().to_string();
    assert!(
        err.contains("1 of 5 point files are damaged") && err.contains(&name),
        "{err}"
    );
    assert!(!err.contains("no result yet"), "{err}");
    assert!(!png.exists());
}
