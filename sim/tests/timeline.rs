//! Issue 18 items 1, 2 and 5: the timeline (`--timeline`) is a valid Chrome trace whose spans nest per
//! track, recording changes no result, the window and the event limit bound it; the interval
//! statistics (`--stats-interval`) add up to the run's totals.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::litmus::{self, LitmusOptions};
use gpumemsim::machine::timeline::{Timeline, TimelineOptions};
use gpumemsim::machine::{self, RunOptions, RunResult};
use gpumemsim::workload::Workload;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cfg(name: &str) -> GpuConfig {
    config::load(Some(&root().join(format!("configs/{name}.toml"))), &[]).expect("config loads")
}

fn load(name: &str) -> Workload {
    gpumemsim::frontend::load(&root().join(format!("workloads/{name}.kern")), &[])
        .expect("workload loads")
}

fn run(cfg: &GpuConfig, wl: &Workload, opts: RunOptions) -> RunResult {
    machine::run(cfg, wl, &opts).expect("the run completes")
}

fn recorded(cfg: &GpuConfig, wl: &Workload, t: TimelineOptions, threads: usize) -> RunResult {
    run(
        cfg,
        wl,
        RunOptions {
            timeline: Some(t),
            threads,
            ..Default::default()
        },
    )
}

/// Checks the Chrome trace event format: the fields every event needs, `X` with a duration, `b`/`e`
/// balanced per async track and properly nested (an `e` closes the innermost open span of its
/// track, with the same name), `X` spans of one thread nested or disjoint, events in time order.
/// Returns the events.
fn valid_trace(t: &Timeline) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&t.json).expect("the timeline is JSON");
    let evs = doc["traceEvents"].as_array().expect("traceEvents").clone();
    assert_eq!(evs.len(), t.events);
    let mut open: HashMap<(String, String), Vec<String>> = HashMap::new();
    let mut x_end: HashMap<(u64, u64), Vec<f64>> = HashMap::new();
    let mut last_ts = 0.0f64;
    for e in &evs {
        for f in ["ph", "ts", "pid", "tid", "name"] {
            assert!(e.get(f).is_some(), "event without {f}: {e}");
        }
        let ph = e["ph"].as_str().unwrap();
        let ts = e["ts"].as_f64().expect("numeric ts");
        assert!(ts >= 0.0);
        if ph != "M" {
            assert!(ts >= last_ts, "events out of time order at {e}");
            last_ts = ts;
        }
        let name = e["name"].as_str().unwrap().to_string();
        match ph {
            "M" | "C" => {}
            "X" => {
                let dur = e["dur"].as_f64().expect("an X event has dur");
                assert!(dur > 0.0, "{e}");
                let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
                let stack = x_end.entry(key).or_default();
                while stack.last().is_some_and(|&end| end <= ts) {
                    stack.pop();
                }
                if let Some(&outer) = stack.last() {
                    assert!(
                        ts + dur <= outer + 1e-9,
                        "X span overlaps its neighbour: {e}"
                    );
                }
                stack.push(ts + dur);
            }
            "b" | "e" => {
                let key = (
                    e["cat"].as_str().expect("async cat").to_string(),
                    e["id"].as_str().expect("async id").to_string(),
                );
                let stack = open.entry(key).or_default();
                if ph == "b" {
                    stack.push(name);
                } else {
                    let top = stack.pop();
                    assert_eq!(top.as_deref(), Some(name.as_str()), "e without its b: {e}");
                }
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    for (k, s) in open {
        assert!(s.is_empty(), "unclosed spans on {k:?}: {s:?}");
    }
    evs
}

fn names(evs: &[Value]) -> Vec<String> {
    evs.iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn timeline_is_a_valid_chrome_trace_with_warps_requests_and_counters() {
    let (c, wl) = (cfg("h100"), load("histogram_local"));
    let r = recorded(&c, &wl, TimelineOptions::default(), 1);
    let t = r.timeline.as_ref().expect("a timeline");
    assert_eq!(t.truncated_at, None);
    let evs = valid_trace(t);
    let n = names(&evs);
    for want in [
        "issue",
        "barrier",
        "local memory",
        "DRAM",
        "atomic unit",
        "crossbar → SM",
        "outstanding requests",
        "DRAM bandwidth",
    ] {
        assert!(n.iter().any(|x| x == want), "no {want:?} in the timeline");
    }
    assert!(n.iter().any(|x| x.starts_with("L2 slice ")));
    assert!(n.iter().any(|x| x.starts_with("atomic queue slice ")));
    // Every span lies within the run. Counters may be sampled after it: the run ends when the last
    // warp exits, and a fire-and-forget reduction (`red`) it issued may still be on its way to the
    // L2 (the counters of outstanding requests and atomic queues then show it draining).
    let end = r.cycles as f64;
    assert!(evs
        .iter()
        .filter(|e| e["ph"] != "C")
        .all(|e| e["ts"].as_f64().unwrap() <= end + 1.0));
}

/// A system-scope release waits for the system point's acknowledgement, and the timeline shows it
/// (the histogram's relaxed system-scope adds are served by the L2 and never reach it).
#[test]
fn a_system_scope_release_shows_the_system_point() {
    let dir = std::env::temp_dir().join(format!("gpumemsim-timeline-sys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let k = dir.join("release_sys.kern");
    std::fs::write(
        &k,
        "groups 1\ngroup_size 32\nbuffer flag: u32[32] = zero\n\
         kernel release_sys {\n    reg %i\n    mov.u32 %i, %local_id\n\
         \x20   st.release.system.u32 flag[%i], 1\n    exit\n}\n\
         check forall i in flag: flag[i] == 1\n",
    )
    .unwrap();
    let wl = gpumemsim::frontend::load(&k, &[]).expect("workload loads");
    let r = recorded(&cfg("h100"), &wl, TimelineOptions::default(), 1);
    let evs = valid_trace(r.timeline.as_ref().expect("a timeline"));
    let n = names(&evs);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        n.iter().any(|x| x == "system point"),
        "no \"system point\" in {n:?}"
    );
}

#[test]
fn recording_changes_no_result_and_the_timeline_does_not_depend_on_threads() {
    let (c, wl) = (cfg("h100"), load("histogram_local"));
    let plain = run(&c, &wl, RunOptions::default());
    let one = recorded(&c, &wl, TimelineOptions::default(), 1);
    let two = recorded(&c, &wl, TimelineOptions::default(), 2);
    for r in [&one, &two] {
        assert_eq!(r.cycles, plain.cycles);
        assert_eq!(r.stats, plain.stats);
        assert_eq!(r.buffers, plain.buffers);
        assert_eq!(r.checks, plain.checks);
    }
    assert_eq!(
        serde_json::to_string(&plain.report("c", "w", 0)).unwrap(),
        serde_json::to_string(&one.report("c", "w", 0)).unwrap()
    );
    assert_eq!(one.timeline, two.timeline);
    assert!(plain.timeline.is_none() && plain.intervals.is_none());
}

#[test]
fn a_store_shows_its_time_in_the_store_buffer_on_the_stress_config() {
    let c = cfg("stress");
    let test = litmus::load(&root().join("workloads/litmus/ptx/mp_relaxed_gpu.litmus")).unwrap();
    let opts = LitmusOptions {
        iterations: 64,
        parallel: false,
        ..Default::default()
    };
    let (t, range) = litmus::timeline(&test, &c, &opts, 3, &TimelineOptions::default()).unwrap();
    assert!(range.contains(&3));
    let evs = valid_trace(&t);
    let n = names(&evs);
    assert!(
        n.iter().any(|x| x == "store buffer"),
        "no store-buffer span"
    );
    assert!(n.iter().any(|x| x == "write-through"));
    assert!(n.iter().any(|x| x.starts_with("store buffer entries SM")));
    let e = litmus::timeline(&test, &c, &opts, 64, &TimelineOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("--timeline-iteration 64: the run has 64 iterations"),
        "{e}"
    );
}

#[test]
fn timeline_window_keeps_only_the_cycles_asked_for() {
    let (c, wl) = (cfg("h100"), load("histogram_local"));
    let all = recorded(&c, &wl, TimelineOptions::default(), 1);
    let w = TimelineOptions {
        window: Some((1000, 2000)),
        ..Default::default()
    };
    let part = recorded(&c, &wl, w, 1);
    assert_eq!(part.stats, all.stats);
    let (ta, tp) = (all.timeline.unwrap(), part.timeline.unwrap());
    let evs = valid_trace(&tp);
    assert!(tp.events < ta.events);
    let timed: Vec<&Value> = evs.iter().filter(|e| e["ph"] != "M").collect();
    assert!(!timed.is_empty());
    for e in timed {
        let ts = e["ts"].as_f64().unwrap();
        let end = ts + e.get("dur").and_then(Value::as_f64).unwrap_or(0.0);
        assert!((1000.0..=2000.0).contains(&ts) && end <= 2000.0, "{e}");
    }
    // A window after the run: only the names of processes.
    let late = recorded(
        &c,
        &wl,
        TimelineOptions {
            window: Some((10_000_000, 20_000_000)),
            ..Default::default()
        },
        1,
    );
    let evs = valid_trace(late.timeline.as_ref().unwrap());
    assert!(evs.iter().all(|e| e["ph"] == "M"));
}

#[test]
fn timeline_limit_bounds_the_events_and_says_where_it_stopped() {
    let (c, wl) = (cfg("h100"), load("histogram_local"));
    let t = TimelineOptions {
        limit: 500,
        ..Default::default()
    };
    let r = recorded(&c, &wl, t.clone(), 1);
    let r2 = recorded(&c, &wl, t, 2);
    let tl = r.timeline.unwrap();
    assert_eq!(
        Some(&tl),
        r2.timeline.as_ref(),
        "the cut does not depend on threads"
    );
    let evs = valid_trace(&tl);
    let timed = evs.iter().filter(|e| e["ph"] != "M").count();
    assert!(timed <= 500 && timed > 300, "{timed} events");
    let cut = tl.truncated_at.expect("the limit was reached");
    assert!(cut > 0 && cut < r.cycles);
    let doc: Value = serde_json::from_str(&tl.json).unwrap();
    assert_eq!(doc["otherData"]["truncated_at_cycle"].as_u64(), Some(cut));
}

#[test]
fn interval_statistics_add_up_to_the_run_totals() {
    let (c, wl) = (cfg("h100"), load("histogram_local"));
    let plain = run(&c, &wl, RunOptions::default());
    let r = run(
        &c,
        &wl,
        RunOptions {
            stats_interval: Some(250),
            ..Default::default()
        },
    );
    assert_eq!(r.stats, plain.stats, "sampling changes nothing");
    let iv = r.intervals.expect("intervals");
    let cycles: Vec<u64> = iv.rows.iter().map(|x| x.cycle).collect();
    assert_eq!(cycles.first(), Some(&250));
    assert_eq!(cycles.last(), Some(&r.cycles));
    assert!(cycles.windows(2).all(|w| w[0] <= w[1]));
    let sum = |loc: &str, m: &str| -> f64 {
        iv.rows
            .iter()
            .filter(|x| x.location == loc && x.metric == m)
            .map(|x| x.value)
            .sum()
    };
    for (loc, m) in [
        ("gpu", "warp_instructions"),
        ("gpu", "thread_instructions"),
        ("gpu", "memory_instructions"),
        ("l1", "loads"),
        ("l2", "reads"),
        ("l2", "writes"),
        ("l2", "atomics"),
        ("l2", "misses"),
        ("atomics.l2", "operations"),
        ("atomics.sm", "shared_ops"),
        ("atomics.sm", "l1_ops"),
        ("store_buffer", "drained"),
        ("interconnect", "messages"),
        ("dram", "bytes"),
    ] {
        let total = r
            .stats
            .get(loc, m)
            .unwrap_or_else(|| panic!("no {loc}.{m}"));
        assert_eq!(sum(loc, m), total, "{loc}.{m}");
    }
    let hits: f64 = r
        .stats
        .rows
        .iter()
        .filter(|x| x.location.ends_with(".l1") && x.metric == "hits")
        .map(|x| x.value)
        .sum();
    assert_eq!(sum("l1", "load_hits"), hits);
    assert!(sum("gpu", "warp_instructions") > 0.0);
    let csv = iv.to_csv();
    assert!(csv.starts_with("cycle,location,metric,value,unit\n250,gpu,warp_instructions,"));
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-timeline-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn run_cli_writes_the_timeline_and_intervals_and_plots_them() {
    let d = tmp("cli");
    let k = root().join("workloads/histogram_local.kern");
    let out = bin()
        .arg("run")
        .arg(&k)
        .args(["--config", "configs/tiny.toml", "--stats-interval", "100"])
        .arg("--interval-csv")
        .arg(d.join("iv.csv"))
        .arg("--timeline")
        .arg(d.join("t.json"))
        .args(["--timeline-limit", "300"])
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("t.json: "), "{stdout}");
    assert!(
        stdout.contains("reached --timeline-limit 300 events"),
        "{stdout}"
    );
    let files: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    let mut files = files;
    files.sort();
    assert_eq!(files, ["iv.csv", "t.json"], "no temporary file is left");
    let _: Value = serde_json::from_slice(&std::fs::read(d.join("t.json")).unwrap()).unwrap();
    let png = d.join("ipc.png");
    let out = bin()
        .arg("plot")
        .arg(d.join("iv.csv"))
        .args(["--kind", "intervals", "--y", "gpu.ipc", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn bad_timeline_options_are_refused_with_the_option_named() {
    let k = root().join("workloads/histogram_local.kern");
    for (args, want) in [
        (
            vec!["--timeline", "x.json", "--timeline-window", "50..10"],
            "--timeline-window",
        ),
        (vec!["--timeline-window", "1..10"], "--timeline"),
        (vec!["--stats-interval", "100"], "--interval-csv"),
        (
            vec!["--stats-interval", "0", "--interval-csv", "x.csv"],
            "--stats-interval",
        ),
    ] {
        let out = bin().arg("run").arg(&k).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let out = bin()
        .args([
            "plot",
            "/nonexistent/iv.csv",
            "--kind",
            "intervals",
            "-o",
            "x.png",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/iv.csv: cannot read"));
}
