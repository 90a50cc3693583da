//! Reports that read well, through the binary: the page opens with the headline table, a series a
//! chart cannot draw (a column only other workloads have) is a warning that names it, `plot` checks
//! its arguments in the order a reader meets them and takes a canvas size.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

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

/// Throughput (contention.kern) and latency (atomic_latency.kern, which reports `mean_latency`) on the
/// tiny preset, with a headline and a chart that asks every workload for the latency.
fn sweep(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-reports-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let k = |p: &str| format!("{:?}", root().join(p).display().to_string());
    let spec = format!(
        r#"name = "Report test"
config = {tiny}
seeds = [1, 2]

[[workload]]
name = "throughput"
kernel = {contention}
params = {{ T = [64, 256], K = 1, RET = [0, 1] }}

[[workload]]
name = "latency"
kernel = {latency}
params = {{ T = [64, 256], K = 1 }}

[[chart]]
name = "per-atomic"
kind = "headline"
title = "Cycles per atomic at T = 256"
x = "workload"
y = "kernel.cycles / T"
y_unit = "core cycles"
series = ["RET"]
labels = {{ RET = {{ "0" = "non-returning", "1" = "returning" }} }}
where = {{ T = 256, workload = "throughput" }}

[[chart]]
name = "latency"
x = "T"
y = "report.mean_latency"
series = ["workload", "RET"]
"#,
        tiny = k("configs/tiny.toml"),
        contention = k("workloads/contention.kern"),
        latency = k("reports/kernels/atomic_latency.kern"),
    );
    std::fs::write(d.join("spec.toml"), spec).unwrap();
    let (code, out, err) = cli(&["sweep", d.join("spec.toml").to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // The throughput series have no mean_latency: each is named, with the column.
    for ret in [0, 1] {
        let w = format!(
            "warning: chart \"latency\": series \"throughput, RET={ret}\" left out: 4 of its 4 runs have no `report.mean_latency`"
        );
        assert!(err.contains(&w), "{err}");
    }
    d
}

fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    let be = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    (be(16), be(20))
}

#[test]
fn a_report_opens_with_its_headline_and_names_what_a_chart_left_out() {
    let d = sweep("headline");
    let html = std::fs::read_to_string(d.join("spec/index.html")).unwrap();
    let glance = html.find("<h2>At a glance</h2>").expect("headline section");
    assert!(glance < html.find("<dl>").unwrap(), "before the facts");
    assert!(glance < html.find("<img").unwrap(), "before the charts");
    assert!(html.contains(
        "<caption>Cycles per atomic at T = 256 (core cycles)</caption>\n<thead><tr><th>workload</th><th>non-returning</th><th>returning</th></tr>"
    ), "{html}");
    assert!(
        html.contains("<td>throughput</td><td class=\"n\">"),
        "{html}"
    );
    assert!(
        html.contains("Left out: chart &quot;latency&quot;: series"),
        "{html}"
    );
    // No drawing for the headline.
    assert!(!d.join("spec/charts/per-atomic.png").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn plot_checks_names_before_marks_and_takes_a_canvas_size() {
    let d = sweep("plot");
    let dir = d.join("spec");
    let out = d.join("p.png");
    let (dir, out) = (dir.to_str().unwrap(), out.to_str().unwrap());
    // A misspelt statistic is named, although the chart would also average over RET.
    let (code, _, err) = cli(&[
        "plot",
        dir,
        "--x",
        "T",
        "--y",
        "kernel.cyclez",
        "--series",
        "workload",
        "-o",
        out,
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no statistic is called `kernel.cyclez`"),
        "{err}"
    );
    let (code, _, err) = cli(&[
        "plot",
        dir,
        "--x",
        "T",
        "--y",
        "kernel.cycles",
        "--series",
        "workload",
        "-o",
        out,
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("`RET` differs"), "{err}");
    let (code, _, err) = cli(&[
        "plot",
        dir,
        "--x",
        "T",
        "--y",
        "kernel.cycles / T",
        "--series",
        "workload",
        "--series",
        "RET",
        "--width",
        "1200",
        "--height",
        "400",
        "-o",
        out,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(png_size(Path::new(out)), (1200, 400));
    let (code, _, err) = cli(&[
        "plot",
        dir,
        "--x",
        "T",
        "--y",
        "kernel.cycles / T",
        "--series",
        "workload",
        "--series",
        "RET",
        "--width",
        "50",
        "-o",
        out,
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("width = 50: between 300 and 10000 pixels"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
