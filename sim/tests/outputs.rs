//! The architect's daily loop through the binary: a config that builds on a preset works wherever a
//! config does (`run`, `sweep`, `compare`), and the outputs read as tables (an ignored test runs
//! pandas on them: `cargo test --test integration outputs_read_by_pandas -- --ignored`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary from the repository root; (exit status, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh folder holding a config on the tiny preset and a sweep spec that uses it.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("configs")).unwrap();
    std::fs::write(
        d.join("configs/eight-slices.toml"),
        "base = \"tiny\"\nname = \"tiny, 8 slices\"\n\n[l2]\nslices = 8\npartitions = 2\n",
    )
    .unwrap();
    let kernel = root().join("workloads/contention.kern");
    std::fs::write(
        d.join("sweep.toml"),
        format!(
            "config = \"configs/eight-slices.toml\"\nseeds = [1, 2]\n\n[params]\n\
             \"atomics.l2.ops_per_cycle\" = [1, 2]\n\n[[workload]]\nkernel = {:?}\n\
             params = {{ T = [64, 256], K = 1, RET = [0, 1] }}\n\n[[chart]]\nname = \"per-atomic\"\n\
             x = \"T\"\ny = \"kernel.cycles / T\"\nseries = [\"RET\", \"atomics.l2.ops_per_cycle\"]\n",
            kernel.display().to_string()
        ),
    )
    .unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn cycles(json: &Path) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    v["cycles"].as_u64().unwrap()
}

#[test]
fn a_config_on_a_preset_works_in_run_sweep_and_compare() {
    let d = scratch("layered");
    let cfg = d.join("configs/eight-slices.toml");
    let args = [
        "workloads/contention.kern",
        "--param",
        "T=256",
        "--param",
        "K=4",
    ];
    // run: the same cycles as the preset with the same keys set on the command line.
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    let mut run_a = vec!["run", "--config", s(&cfg), "--json", s(&a)];
    run_a.extend(args);
    let (code, out, err) = cli(&run_a);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tiny, 8 slices"), "{out}");
    let mut run_b = vec!["run", "--config", "configs/tiny.toml", "--json", s(&b)];
    run_b.extend(["--set", "l2.slices=8", "--set", "l2.partitions=2"]);
    run_b.extend(args);
    assert_eq!(cli(&run_b).0, 0);
    assert_eq!(cycles(&a), cycles(&b));
    // sweep: a spec whose config builds on a preset.
    let (code, out, err) = cli(&["sweep", s(&d.join("sweep.toml")), "--jobs", "2"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(d.join("sweep/results.json").is_file());
    // compare: the committed lavapipe measurement simulated on the layered config.
    let (code, out, err) = cli(&[
        "compare",
        "--measured",
        "reports/measured/llvmpipe-2026-11-22.json",
        "--config",
        s(&cfg),
        "--litmus-iterations",
        "50",
        "--out",
        s(&d.join("cmp")),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("cmp/comparison.summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["config"], s(&cfg));
    let _ = std::fs::remove_dir_all(&d);
}

/// Needs python3 with pandas (`pip install pandas`).
#[test]
#[ignore = "needs python3 with pandas: cargo test --test integration outputs_read_by_pandas -- --ignored"]
fn outputs_read_by_pandas() {
    let d = scratch("pandas");
    let (run_json, stats_json) = (d.join("run.json"), d.join("run.stats.json"));
    let (code, _, err) = cli(&[
        "run",
        "workloads/histogram_local.kern",
        "--json",
        s(&run_json),
        "--stats-json",
        s(&stats_json),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(cli(&["sweep", s(&d.join("sweep.toml"))]).0, 0);
    let (code, _, err) = cli(&[
        "compare",
        "--measured",
        "reports/measured/llvmpipe-2026-11-22.json",
        "--litmus-iterations",
        "50",
        "--out",
        s(&d.join("cmp")),
    ]);
    assert_eq!(code, 0, "{err}");
    let out = Command::new("python3")
        .arg(root().join("scripts/pandas-check.py"))
        .args(["--stats", s(&stats_json), "--run", s(&run_json)])
        .args(["--sweep", s(&d.join("sweep")), "--sweep"])
        .arg(root().join("reports/store-buffer"))
        .args(["--compare", s(&d.join("cmp"))])
        .output()
        .expect("python3 runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    assert!(out.status.success(), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A run says what it ran (issue 45 item 3): `--set` and `--param` on the summary's config line, in the
/// JSON document and first in every table it writes; so two runs that differ only in them give files
/// that differ there, not only in their numbers. The summary's IPC is the whole GPU's, the atomic-wait
/// note follows the slices' statistics, and `--races` says when it found nothing.
#[test]
fn a_run_records_its_overrides_in_the_summary_and_every_output() {
    let dir = scratch("overrides");
    let (json, csv, records, ivl) = (
        dir.join("r.json"),
        dir.join("r.csv"),
        dir.join("r.stats.json"),
        dir.join("r.intervals.csv"),
    );
    let (code, out, err) = cli(&[
        "run",
        "workloads/histogram_global.kern",
        "--set",
        "atomics.l2.ops_per_cycle=2",
        "--param",
        "N=2048",
        "--races",
        "--json",
        s(&json),
        "--csv",
        s(&csv),
        "--stats-json",
        s(&records),
        "--stats-interval",
        "500",
        "--interval-csv",
        s(&ivl),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("config            configs/h100.toml (embedded), seed 0; --set atomics.l2.ops_per_cycle=2 --param N=2048\n"),
        "{out}"
    );
    assert!(out.contains(" for the whole GPU (132 SMs), "), "{out}");
    assert!(
        out.contains("races             no races found: every global and local access checked"),
        "{out}"
    );
    // 64 bins on two lines: one of two slices does about half the atomic work.
    assert!(out.contains("(the busiest slice does 5"), "{out}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["version"], 3);
    assert_eq!(
        doc["overrides"]["set"],
        serde_json::json!(["atomics.l2.ops_per_cycle=2"])
    );
    assert_eq!(doc["overrides"]["param"], serde_json::json!({"N": 2048}));
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv.starts_with(
            "location,metric,value,unit\noverride,--set atomics.l2.ops_per_cycle=2,1,flag\noverride,--param N=2048,1,flag\n"
        ),
        "{csv}"
    );
    let rec: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&records).unwrap()).unwrap();
    assert_eq!(rec[1]["metric"], "--param N=2048");
    assert_eq!(rec.len(), csv.lines().count() - 1);
    let ivl = std::fs::read_to_string(&ivl).unwrap();
    assert!(
        ivl.starts_with("cycle,location,metric,value,unit\n0,override,--set atomics.l2.ops_per_cycle=2,1,flag\n"),
        "{ivl}"
    );
    // Without overrides: no override rows, and the config line ends at the seed.
    let (code, out, err) = cli(&[
        "run",
        "workloads/contention.kern",
        "--csv",
        s(&dir.join("p.csv")),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("config            configs/h100.toml (embedded), seed 0\n"),
        "{out}"
    );
    assert!(!std::fs::read_to_string(dir.join("p.csv"))
        .unwrap()
        .contains("override"));
    // One address: one slice does all of it.
    assert!(
        out.contains("(the busiest slice does 100% of the atomic work"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run --out DIR` (issue 45 item 1): every output of the run in one new folder, each the same bytes
/// as its own flag writes, the summary as printed; a run that fails leaves no folder behind, and
/// `--out` with a file flag it replaces is a usage error.
#[test]
fn run_out_writes_every_output_into_one_folder() {
    let d = scratch("run-out");
    let args = ["workloads/histogram_global.kern", "--param", "N=1024"];
    let out_dir = d.join("r");
    let mut with_out = vec!["run", "--out", s(&out_dir), "--stats-interval", "400"];
    with_out.extend(args);
    let (code, out, err) = cli(&with_out);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with(&format!(
            "wrote {}/: summary.txt, run.json, stats.csv, stats.json, intervals.csv\n",
            out_dir.display()
        )),
        "{out}"
    );
    let (json, csv, records, ivl) = (
        d.join("a.json"),
        d.join("a.csv"),
        d.join("a.stats.json"),
        d.join("a.intervals.csv"),
    );
    let mut flags = vec![
        "run",
        "--json",
        s(&json),
        "--csv",
        s(&csv),
        "--stats-json",
        s(&records),
        "--stats-interval",
        "400",
        "--interval-csv",
        s(&ivl),
    ];
    flags.extend(args);
    let (code, printed, err) = cli(&flags);
    assert_eq!(code, 0, "{err}");
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    for (mine, theirs) in [
        ("run.json", &json),
        ("stats.csv", &csv),
        ("stats.json", &records),
        ("intervals.csv", &ivl),
    ] {
        assert!(read(&out_dir.join(mine)) == read(theirs), "{mine} differs");
    }
    assert_eq!(
        String::from_utf8(read(&out_dir.join("summary.txt"))).unwrap(),
        printed
    );
    // A run that fails before writing leaves no folder of its own.
    let failed = d.join("failed");
    let (code, _, err) = cli(&["run", "no/such.kern", "--out", s(&failed)]);
    assert_eq!(code, 1, "{err}");
    assert!(!failed.exists(), "an empty folder was left behind");
    // --out takes the place of the file flags.
    let (code, _, err) = cli(&["run", args[0], "--out", s(&failed), "--json", s(&json)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--json") && err.contains("--out"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `litmus --threads N` and `gpu compare --threads N` (issue 45 item 5): the pool's size changes
/// nothing in what they print or write.
#[test]
fn litmus_and_compare_give_the_same_results_on_any_number_of_threads() {
    let d = scratch("threads");
    let litmus = |threads: &str, json: &Path| {
        let (code, out, err) = cli(&[
            "litmus",
            "workloads/litmus/ptx/mp_relaxed_gpu.litmus",
            "workloads/litmus/ptx/sb_relaxed_gpu.litmus",
            "--config",
            "configs/tiny.toml",
            "--iterations",
            "400",
            "--threads",
            threads,
            "--out",
            s(json),
        ]);
        assert_eq!(code, 0, "{err}");
        (out, std::fs::read(json).unwrap())
    };
    let one = litmus("1", &d.join("l1.json"));
    assert_eq!(one, litmus("3", &d.join("l3.json")));
    let (code, _, err) = cli(&["litmus", "x.litmus", "--threads", "2", "--serial"]);
    assert_eq!(code, 2, "--serial with --threads: {err}");
    let compare = |threads: &str, out: &Path| {
        let (code, printed, err) = cli(&[
            "gpu",
            "compare",
            "--measured",
            "reports/measured/llvmpipe-2026-11-22.json",
            "--config",
            "configs/tiny.toml",
            "--litmus-iterations",
            "50",
            "--threads",
            threads,
            "--out",
            s(out),
        ]);
        assert_eq!(code, 0, "{err}");
        let printed = printed.replace(s(out), "OUT");
        (printed, std::fs::read(out.join("comparison.csv")).unwrap())
    };
    assert_eq!(compare("1", &d.join("c1")), compare("2", &d.join("c2")));
    let _ = std::fs::remove_dir_all(&d);
}
