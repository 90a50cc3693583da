//! Sweep runner and reports (issue 6): parallel equals serial, a rerun does no work, shards merged
//! equal the whole, a run that dies midway restarts to the same results, charts are valid PNG and SVG,
//! bad specs fail before any run naming the key. Small sweeps on the tiny config; the workload is a
//! hand-built contention kernel (T threads, atomic add on K addresses).

use gpumemsim::config;
use gpumemsim::ir::*;
use gpumemsim::sweep::charts::ChartSpec;
use gpumemsim::sweep::exec::{self, ExecOptions, Shard, Silent};
use gpumemsim::sweep::plan::{BaseConfig, Job, Plan, Value, Variant};
use gpumemsim::sweep::{self, results, SweepError};
use gpumemsim::workload::*;
use std::path::{Path, PathBuf};

const TINY: &str = include_str!("../../configs/tiny.toml");

/// A fresh, empty folder under the target's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir()
        .join(format!("gpumemsim-sweep-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `T` threads in groups of 64; thread `i` adds 1 to `count[i % K]` (relaxed, device scope).
fn contention(t: u32, k: u64) -> Workload {
    let r = Operand::Reg;
    let i = Operand::Imm;
    let insts = vec![
        Inst::ReadSpecial {
            dst: 1,
            which: Special::GlobalLinearId,
        },
        Inst::Alu {
            op: AluOp::Rem,
            ty: Ty::U64,
            dst: 2,
            a: r(1),
            b: i(k),
        },
        Inst::Alu {
            op: AluOp::Shl,
            ty: Ty::U64,
            dst: 2,
            a: r(2),
            b: i(2),
        },
        Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst: 2,
            a: r(2),
            b: r(0),
        },
        Inst::Rmw {
            dst: Some(3),
            op: RmwOp::Add,
            space: Space::Global,
            addr: Address {
                base: r(2),
                offset: 0,
            },
            operand: i(1),
            ty: Ty::U32,
            ord: RmwOrd::Relaxed,
            scope: Scope::Device,
        },
        Inst::Exit,
    ];
    let n = insts.len();
    Workload {
        kernel: Kernel {
            name: "contention".into(),
            file: "contention.kern".into(),
            insts,
            locs: (0..n)
                .map(|l| SrcLoc {
                    line: l as u32 + 1,
                    col: 1,
                })
                .collect(),
            reg_names: (0..4).map(|x| format!("r{x}")).collect(),
            local_bytes: 0,
            semantics: Semantics::Ptx,
        },
        geometry: Geometry {
            groups: [t.div_ceil(64), 1, 1],
            group_size: [t.min(64), 1, 1],
        },
        buffers: vec![Buffer {
            name: "count".into(),
            elem: Ty::U32,
            len: k,
            init: Init::Zero,
            loc: SrcLoc::default(),
        }],
        params: vec![Param {
            name: "count".into(),
            reg: 0,
            value: ParamValue::BufferAddr("count".into()),
        }],
        checks: vec![Check {
            text: "sum(count) == T".into(),
            loc: SrcLoc::default(),
            lhs: Expr::Sum("count".into()),
            op: CheckOp::Eq,
            rhs: Expr::Const(t as i64),
            forall: None,
        }],
        reports: vec![],
        parameters: vec![("T".into(), t as i64), ("K".into(), k as i64)],
    }
}

fn tiny() -> BaseConfig {
    BaseConfig {
        name: "tiny".into(),
        text: TINY.to_string(),
        file: "configs/tiny.toml".into(),
        source: "configs/tiny.toml".into(),
    }
}

fn chart(toml_text: &str) -> ChartSpec {
    toml::from_str(toml_text).unwrap()
}

/// 2 slice counts × (T ∈ {64, 256}) × (K ∈ {1, 8}) × 2 seeds = 16 points, with two charts.
fn small_plan() -> Plan {
    let mut variants = Vec::new();
    for t in [64u32, 256] {
        for k in [1u64, 8] {
            variants.push(Variant {
                workload: "contention".into(),
                params: vec![
                    ("T".into(), Value::Int(t as i64)),
                    ("K".into(), Value::Int(k as i64)),
                ],
                set: vec![],
                job: Job::Kernel(contention(t, k)),
            });
        }
    }
    let mut plan = Plan::cross(
        "small",
        "test sweep",
        &[tiny()],
        &[("l2.slices".into(), vec![Value::Int(2), Value::Int(4)])],
        variants,
        &[1, 2],
    )
    .unwrap();
    let mut charts = vec![
        chart(
            r#"name = "cycles"
               x = "T"
               y = "kernel.cycles / T"
               series = ["K", "l2.slices"]
               x_scale = "log""#,
        ),
        chart(
            r#"name = "ops"
               kind = "bar"
               x = "l2.slices"
               y = "atomics.l2.operations"
               series = ["K"]
               where = { T = 256 }"#,
        ),
    ];
    for (i, c) in charts.iter_mut().enumerate() {
        c.validate(i, &plan.manifest).unwrap();
    }
    plan.manifest.charts = charts;
    plan
}

fn run_all(plan: &Plan, dir: &Path, jobs: usize) -> exec::ExecSummary {
    let opts = ExecOptions {
        jobs: Some(jobs),
        ..Default::default()
    };
    let s = exec::execute(plan, dir, &opts, &Silent).unwrap();
    assert!(s.complete);
    sweep::finish(dir).unwrap();
    s
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn parallel_sweep_writes_the_same_files_as_a_serial_one() {
    let plan = small_plan();
    let (par, ser) = (scratch("par"), scratch("ser"));
    let s = run_all(&plan, &par, 4);
    assert_eq!(
        (s.selected, s.ran, s.already_done, s.failed),
        (16, 16, 0, 0)
    );
    run_all(&plan, &ser, 1);
    for f in [
        "results.csv",
        "results.json",
        "results.schema.json",
        "sweep.json",
        "index.html",
    ] {
        assert_eq!(read(&par.join(f)), read(&ser.join(f)), "{f} differs");
    }
    // Every run passed its check (the counter holds T), and the rows are in plan order.
    let csv = String::from_utf8(read(&par.join("results.csv"))).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 17);
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        &header[..9],
        &[
            "point",
            "workload",
            "seed",
            "l2.slices",
            "T",
            "K",
            "status",
            "error",
            "checks_failed"
        ]
    );
    assert!(header.contains(&"kernel.cycles") && header.contains(&"atomics.l2.operations"));
    for (row, p) in lines[1..].iter().zip(&plan.manifest.points) {
        assert!(
            row.starts_with(&format!("{},contention,{},", p.id, p.seed)),
            "{row}"
        );
        assert!(row.contains(",ok,,0,"), "{row}");
    }
}

#[test]
fn the_table_carries_each_runs_own_statistics() {
    // Each row holds its own run's numbers: every thread's add reached an L2 atomic unit, and with
    // same-address lanes combined (tiny.toml), one address needs fewer unit operations than eight.
    let plan = small_plan();
    let dir = scratch("order");
    run_all(&plan, &dir, 2);
    let (m, t) = results::combine(&dir).unwrap();
    assert_eq!(m.points.len(), t.rows.len());
    let num = |r: usize, c: &str| t.get(r, c).and_then(Value::as_f64).unwrap();
    for r in 0..t.rows.len() {
        assert_eq!(num(r, "atomics.l2.lane_operations"), num(r, "T"), "row {r}");
    }
    let ops = |k: i64| -> f64 {
        (0..t.rows.len())
            .filter(|&r| t.get(r, "K") == Some(&Value::Int(k)))
            .map(|r| num(r, "atomics.l2.operations"))
            .sum()
    };
    assert!(ops(1) < ops(8), "{} vs {}", ops(1), ops(8));
    // results.json: the same rows as records; results.schema.json: the columns with their units.
    let rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(&read(&dir.join("results.json"))).unwrap();
    let schema: serde_json::Value =
        serde_json::from_slice(&read(&dir.join("results.schema.json"))).unwrap();
    assert_eq!(schema["schema"], "gpumemsim-sweep-results");
    assert_eq!(schema["version"], 2);
    let cols = schema["columns"].as_array().unwrap();
    assert_eq!((cols.len(), rows.len()), (t.columns.len(), t.rows.len()));
    let at = cols
        .iter()
        .position(|c| c["name"] == "kernel.cycles")
        .unwrap();
    assert_eq!(cols[at]["unit"], "cycles");
    let text = String::from_utf8(read(&dir.join("results.json"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!((lines[0], lines[lines.len() - 1]), ("[", "]"));
    for (r, row) in rows.iter().enumerate() {
        assert_eq!(
            row["kernel.cycles"].as_f64(),
            t.get(r, "kernel.cycles").and_then(Value::as_f64)
        );
        // One record per line, keys in column order; the error column, empty for runs that passed,
        // is left out.
        assert!(!row.contains_key("error"));
        let line = lines[r + 1];
        let at: Vec<usize> = cols
            .iter()
            .filter_map(|c| c["name"].as_str())
            .filter(|n| row.contains_key(*n))
            .map(|n| line.find(&format!("\"{n}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
    }
}

#[test]
fn a_rerun_of_a_complete_sweep_runs_nothing() {
    let plan = small_plan();
    let dir = scratch("rerun");
    run_all(&plan, &dir, 2);
    let stamp = |d: &Path| -> Vec<(PathBuf, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(d.join("points"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.path(), e.metadata().unwrap().modified().unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = stamp(&dir);
    let s = exec::execute(&plan, &dir, &ExecOptions::default(), &Silent).unwrap();
    assert_eq!((s.ran, s.already_done, s.complete), (0, 16, true));
    assert_eq!(stamp(&dir), before, "no point file was rewritten");
}

#[test]
fn shards_merged_equal_the_whole_sweep() {
    let plan = small_plan();
    let whole = scratch("whole");
    run_all(&plan, &whole, 2);
    let mut dirs = Vec::new();
    let mut total = 0;
    for i in 0..3 {
        let d = scratch(&format!("shard{i}"));
        let opts = ExecOptions {
            jobs: Some(2),
            shard: Some(Shard { index: i, count: 3 }),
            ..Default::default()
        };
        let s = exec::execute(&plan, &d, &opts, &Silent).unwrap();
        assert!(!s.complete, "one shard alone is not the whole sweep");
        total += s.ran;
        dirs.push(d);
    }
    assert_eq!(total, 16, "the shards partition the points");
    let merged = scratch("merged");
    results::merge(&dirs, &merged, false).unwrap();
    sweep::finish(&merged).unwrap();
    for f in ["results.csv", "results.json", "index.html"] {
        assert_eq!(read(&merged.join(f)), read(&whole.join(f)), "{f} differs");
    }
    // A missing shard is named, not silently dropped.
    let partial = scratch("partial");
    let e = results::merge(&dirs[..2], &partial, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("have no result yet"), "{e}");
}

/// Stops the process's sweep after `n` points by panicking in the progress callback, as a kill would
/// stop it: whatever was written stays, nothing else is.
struct DieAfter(std::sync::atomic::AtomicUsize, usize);

impl exec::Progress for DieAfter {
    fn start(&self, _: usize, _: usize) {}
    fn finished(&self, _: &gpumemsim::sweep::plan::PointInfo, _: &exec::Outcome) {
        if self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= self.1 {
            panic!("killed");
        }
    }
}

#[test]
fn a_sweep_that_dies_midway_restarts_to_the_same_results() {
    let plan = small_plan();
    let whole = scratch("clean");
    run_all(&plan, &whole, 2);
    let dir = scratch("killed");
    let opts = ExecOptions {
        jobs: Some(2),
        ..Default::default()
    };
    let died = std::panic::catch_unwind(|| {
        exec::execute(&plan, &dir, &opts, &DieAfter(Default::default(), 5))
    });
    assert!(died.is_err());
    // What a kill during a write leaves behind: a temporary file, never a partial result.
    std::fs::write(
        dir.join("points").join(".deadbeef.json.tmp4242"),
        b"{\"point\":",
    )
    .unwrap();
    let written = std::fs::read_dir(dir.join("points"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    // The points already running on other workers finish and write their results before the
    // panic reaches the caller (rayon does not cancel them), so with fast points every result may
    // be there: a kill at any moment, the last one included.
    assert!(written >= 5, "{written} results written before dying");
    if written < 16 {
        assert!(
            results::combine(&dir).is_err(),
            "an incomplete sweep is not combined"
        );
    }
    let s = exec::execute(&plan, &dir, &opts, &Silent).unwrap();
    assert_eq!(s.ran + s.already_done, 16);
    assert_eq!(s.already_done, written);
    sweep::finish(&dir).unwrap();
    for f in ["results.csv", "results.json"] {
        assert_eq!(read(&dir.join(f)), read(&whole.join(f)), "{f} differs");
    }
}

#[test]
fn report_charts_are_valid_png_and_svg_and_the_page_shows_them() {
    let plan = small_plan();
    let dir = scratch("charts");
    run_all(&plan, &dir, 2);
    let html = String::from_utf8(read(&dir.join("index.html"))).unwrap();
    for name in ["cycles", "ops"] {
        let png_bytes = read(&dir.join(format!("charts/{name}.png")));
        let info = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .unwrap()
            .info()
            .clone();
        assert!(info.width >= 400 && info.height >= 300);
        let svg = String::from_utf8(read(&dir.join(format!("charts/{name}.svg")))).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        // Legends name the series: K=1 and K=8 appear as text (glyph groups carry their string).
        let labels: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.attribute("aria-label"))
            .collect();
        assert!(
            labels.iter().any(|l| l.contains("K=1")),
            "{name}: {labels:?}"
        );
        assert!(
            labels.iter().any(|l| l.contains("K=8")),
            "{name}: {labels:?}"
        );
        assert!(html.contains(&format!("src=\"charts/{name}.svg\"")));
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
}

#[test]
fn charts_that_would_average_over_a_parameter_are_rejected() {
    let plan = small_plan();
    let mut c = chart(
        r#"x = "T"
           y = "kernel.cycles"
           series = ["K"]"#,
    );
    let e = c.validate(0, &plan.manifest).unwrap_err();
    assert!(e.contains("`l2.slices` differs (2 and 4)"), "{e}");
    let mut typo = chart(
        r#"x = "TT"
           y = "kernel.cycles""#,
    );
    let e = typo.validate(0, &plan.manifest).unwrap_err();
    assert!(e.contains("`TT` is no parameter"), "{e}");
    let mut bad_expr = chart(
        r#"x = "T"
           y = "kernel.cycles /"
           series = ["K", "l2.slices"]"#,
    );
    let e = bad_expr.validate(0, &plan.manifest).unwrap_err();
    assert!(e.contains("column 16"), "{e}");
}

#[test]
fn a_misspelt_statistic_stops_the_sweep_after_one_point() {
    let mut plan = small_plan();
    plan.manifest.charts[0].y = Some("kernel.cycle / T".into());
    let dir = scratch("typo");
    let e = exec::execute(&plan, &dir, &ExecOptions::default(), &Silent).unwrap_err();
    assert!(matches!(e, SweepError::Plan(_)));
    let msg = e.to_string();
    assert!(
        msg.contains("`kernel.cycle`") && msg.contains("kernel.cycles"),
        "{msg}"
    );
    let written = std::fs::read_dir(dir.join("points")).unwrap().count();
    assert_eq!(written, 1);
}

#[test]
fn shard_arguments_are_checked() {
    assert_eq!(
        "2/8".parse::<Shard>().unwrap(),
        Shard { index: 2, count: 8 }
    );
    for (arg, want) in [
        ("8/8", "below N"),
        ("1/0", "at least 1"),
        ("x/2", "whole number"),
        ("3", "expected I/N"),
    ] {
        let e = arg.parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains(want) && e.contains(arg), "{arg}: {e}");
    }
}

/// Writes a spec file (and nothing it refers to) into a fresh folder.
fn spec_file(name: &str, text: &str) -> PathBuf {
    let d = scratch(name);
    std::fs::write(d.join("tiny.toml"), TINY).unwrap();
    let p = d.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_specs_fail_before_any_run_naming_the_key() {
    let top = "config = \"tiny.toml\"\n";
    let head = "[[workload]]\nkernel = \"missing.kern\"\n";
    let cases = [
        ("[params]\n\"l2.slicez\" = [2, 4]\n", "params.l2.slicez[0]"),
        (
            "[params]\nl2.slices = []\n",
            "params.l2.slices = []: an empty list",
        ),
        (
            "[params]\nl2.slices = [2, \"four\"]\n",
            "params.l2.slices[1] = \"four\"",
        ),
        ("[params]\nl2.slices = [2, 2]\n", "listed twice"),
        ("seeds = [-1]\n", "seeds[0] = -1"),
        ("seeds = []\n", "seeds = []"),
        ("sedes = [1]\n", "unknown field `sedes`"),
        ("[params]\nl2.slices = [[1]]\n", "params.l2.slices[0] = [1]"),
    ];
    for (extra, want) in cases {
        let p = spec_file("bad", &format!("{top}{extra}{head}"));
        let e = sweep::spec::load(&p).unwrap_err().to_string();
        assert!(e.contains(want), "{extra:?}: {e}");
        assert!(
            e.starts_with(&p.display().to_string()),
            "names the file: {e}"
        );
        assert!(!sweep::spec::default_out(&p).exists(), "nothing written");
    }
    // Config errors reach the user through the config's own messages.
    let p = spec_file("bad", &format!("{top}[params]\nl2.slices = [0]\n{head}"));
    let e = sweep::spec::load(&p).unwrap_err().to_string();
    assert!(
        e.contains("params.l2.slices[0] = 0") && e.contains("l2.slices"),
        "{e}"
    );
    assert!(config::parse_str(TINY, "tiny", &["l2.slices=0".into()]).is_err());
    // A key with one value applies while the others are checked: tiny has 2 partitions, which do
    // not divide 1 slice; with `l2.partitions = 1` fixed, every slice count is valid.
    let p = spec_file("bad", &format!("{top}[params]\nl2.slices = [1, 2]\n{head}"));
    let e = sweep::spec::load(&p).unwrap_err().to_string();
    assert!(e.contains("params.l2.slices[0] = 1"), "{e}");
    let p = spec_file(
        "fixed",
        &format!("{top}[params]\nl2.partitions = 1\nl2.slices = [1, 2]\n{head}"),
    );
    // (This spec's workload file is missing on purpose: that is the next thing checked, so the error
    // is about it, not about any parameter.)
    let e = sweep::spec::load(&p).unwrap_err().to_string();
    assert!(e.contains("missing.kern") && !e.contains("params."), "{e}");
}

/// The real thing: the `gpumemsim` binary is killed (SIGKILL) in the middle of a sweep, and a rerun
/// completes it with the results of an uninterrupted run, running only what was missing.
#[test]
fn a_killed_sweep_process_restarts_to_the_same_results() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = scratch("kill");
    let spec = d.join("kill.toml");
    // Jitter makes each seed a different run; 40 points of about 0.1 s each.
    std::fs::write(
        &spec,
        format!(
            "config = {:?}\nseeds = [{}]\n[params]\n\"stress.interconnect_jitter\" = 4\n\
             [[workload]]\nkernel = {:?}\nparams = {{ T = 65536, K = [1, 8] }}\n",
            root.join("configs/tiny.toml"),
            (1..=20)
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            root.join("workloads/contention.kern"),
        ),
    )
    .unwrap();
    let exe = env!("CARGO_BIN_EXE_gpumemsim");
    let sweep = |out: &Path| {
        std::process::Command::new(exe)
            .arg("sweep")
            .arg(&spec)
            .arg("--out")
            .arg(out)
            .args(["--jobs", "2"])
            .output()
            .unwrap()
    };
    let (clean, killed) = (d.join("clean"), d.join("killed"));
    let whole = sweep(&clean);
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );

    let mut child = std::process::Command::new(exe)
        .arg("sweep")
        .arg(&spec)
        .arg("--out")
        .arg(&killed)
        .args(["--jobs", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let results = |dir: &Path| -> usize {
        std::fs::read_dir(dir.join("points"))
            .map(|it| {
                it.filter(|e| {
                    let p = e.as_ref().unwrap().path();
                    p.extension().is_some_and(|x| x == "json")
                        && !p.file_name().unwrap().to_string_lossy().starts_with('.')
                })
                .count()
            })
            .unwrap_or(0)
    };
    let start = std::time::Instant::now();
    while results(&killed) < 4 && start.elapsed() < std::time::Duration::from_secs(120) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let written = results(&killed);
    assert!(
        (4..40).contains(&written) && !killed.join("results.csv").exists(),
        "killed after {written} of 40 points"
    );

    let rerun = sweep(&killed);
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    let said = String::from_utf8_lossy(&rerun.stdout);
    assert!(
        said.contains(&format!("{} ran now, {written} were done", 40 - written)),
        "{said}"
    );
    for f in ["results.csv", "results.json"] {
        assert_eq!(read(&killed.join(f)), read(&clean.join(f)), "{f} differs");
    }
}

/// Shards started from different folders (or through different spellings of the spec's path) plan
/// the same points, so that `sweep merge` accepts them and reruns find their results.
#[test]
fn the_plan_does_not_depend_on_the_folder_the_sweep_starts_from() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = scratch("cwd");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("tiny.toml"), TINY).unwrap();
    std::fs::copy(root.join("workloads/contention.kern"), d.join("c.kern")).unwrap();
    let spec = d.join("s.toml");
    std::fs::write(
        &spec,
        "config = \"tiny.toml\"\n[[workload]]\nkernel = \"c.kern\"\nparams = { T = [64, 128] }\n",
    )
    .unwrap();
    let a = sweep::spec::load(&spec).unwrap();
    let b = sweep::spec::load(&d.join("sub").join("..").join(".").join("s.toml")).unwrap();
    assert_eq!(a.manifest, b.manifest);
    assert_eq!(a.manifest.configs, vec!["tiny: tiny.toml".to_string()]);
}

/// A litmus workload in a sweep: its weak-outcome rate becomes a statistic, its final states columns
/// and an outcomes chart, and a forbidden test observed weak would fail its check.
#[test]
fn litmus_workloads_sweep_their_weak_outcome_rate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = scratch("litmus");
    let spec = d.join("sb.toml");
    std::fs::write(
        &spec,
        format!(
            "config = {:?}\n[params]\n\"store_buffer.entries\" = [0, 32]\n\
             \"stress.interconnect_jitter\" = 0\n\"stress.drain_jitter\" = 80\n\
             \"stress.start_skew\" = 150\n\"stress.randomise_placement\" = true\n\
             [[workload]]\nname = \"SB\"\nlitmus = {:?}\niterations = 2000\n\
             [[workload]]\nname = \"MP+rel/acq\"\nlitmus = {:?}\niterations = 2000\n\
             [[chart]]\nname = \"rate\"\nkind = \"bar\"\nx = \"store_buffer.entries\"\n\
             y = \"litmus.witness_rate\"\nseries = [\"workload\"]\n\
             [[chart]]\nname = \"states\"\nkind = \"outcomes\"\nseries = [\"store_buffer.entries\"]\n\
             where = {{ workload = \"SB\" }}\n",
            root.join("configs/tiny.toml"),
            root.join("workloads/litmus/ptx/sb_relaxed_gpu.litmus"),
            root.join("workloads/litmus/ptx/mp_rel_acq_gpu.litmus"),
        ),
    )
    .unwrap();
    let plan = sweep::spec::load(&spec).unwrap();
    let out = d.join("out");
    run_all(&plan, &out, 2);
    let (_, t) = results::combine(&out).unwrap();
    let rate = |w: &str, e: i64| -> f64 {
        let r = (0..t.rows.len())
            .find(|&r| {
                t.get(r, "workload") == Some(&Value::Str(w.into()))
                    && t.get(r, "store_buffer.entries") == Some(&Value::Int(e))
            })
            .unwrap();
        assert_eq!(
            t.get(r, "status"),
            Some(&Value::Str("ok".into())),
            "{w} {e}"
        );
        t.get(r, "litmus.witness_rate")
            .and_then(Value::as_f64)
            .unwrap()
    };
    // No buffer and no interconnect jitter (the other source of store→load reordering: a store and a
    // later load to another slice race through the crossbar), no store buffering; a big buffer shows
    // it. The forbidden outcome never appears.
    assert_eq!(rate("SB", 0), 0.0);
    assert!(rate("SB", 32) > 0.0);
    assert_eq!(rate("MP+rel/acq", 32), 0.0);
    let weak = t
        .column("outcome: P0:r0=0; P1:r0=0;")
        .expect("a column per final state");
    assert_eq!(weak.unit, "runs");
    let svg = String::from_utf8(read(&out.join("charts/states.svg"))).unwrap();
    assert!(
        svg.contains("aria-label=\"P0:r0=0; P1:r0=0; *\""),
        "the witness is marked"
    );
    // Two workloads in one outcomes chart are refused before anything runs.
    let mut both = chart("kind = \"outcomes\"");
    let e = both.validate(0, &plan.manifest).unwrap_err();
    assert!(e.contains("one litmus workload"), "{e}");
}
