//! Trace replay cost against trace length: synthetic traces (`trace::synth`) of 10^5 to 10^8 thread
//! instructions written to disk, each replayed by whole `gpumemsim run` processes of one or more builds
//! (embedded H100 preset; one simulation thread unless a `--bin` is a script that adds `--threads N`,
//! its label saying so), interleaved size by size. For each build: wall time, thread
//! instructions, peak resident memory (`/usr/bin/time -f %M`; wall time is measured around the
//! process), the least-squares fit time = a + b·n
//! with its R², and the cost per thread instruction at each size; charts drawn by the tool's own chart
//! code (`report::plot`).
//!
//! ```text
//! cargo bench --bench scaling -- --bin before=/work/team/bin/gpumemsim-main \
//!     --bin after=target/release/gpumemsim --out reports/speed/scaling [--max 1e8] [--repeat 2]
//! ```
//!
//! The traces grow by their number of thread blocks (256 threads, 8 iterations of the sample traces'
//! loop with a distinct atomic each): past one wave of the GPU (132 SMs × 8 blocks) a grid takes
//! several waves, which the table counts. Wall time is the whole process's (start-up, reading the
//! trace, simulating, writing the JSON): the intercept `a` holds what does not grow with the trace.

use gpumemsim::report::plot::{Axis, Chart, Series};
use gpumemsim::trace::synth::{write_dir, Synth, SynthAtomics};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const ITERS: u32 = 8;
const BLOCK_THREADS: u32 = 256;

struct Row {
    build: String,
    blocks: u32,
    waves: u32,
    thread_insts: u64,
    wall_s: f64,
    /// User + system CPU time.
    cpu_s: f64,
    rss_kib: u64,
}

fn usage() -> ! {
    eprintln!(
        "usage: scaling --bin LABEL=PATH [--bin LABEL=PATH ...] [--out DIR] [--traces DIR] [--max N] [--repeat R]\n       scaling --replot DIR"
    );
    std::process::exit(2)
}

fn main() {
    let mut bins: Vec<(String, PathBuf)> = Vec::new();
    let mut out = PathBuf::from("reports/speed/scaling");
    let mut traces = std::env::temp_dir().join("gpumemsim-scaling-traces");
    let mut max = 1e8;
    let mut repeat = 2u32;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--bin" => {
                let v = val();
                let (l, p) = v.split_once('=').unwrap_or_else(|| usage());
                bins.push((l.to_string(), PathBuf::from(p)));
            }
            "--out" => out = PathBuf::from(val()),
            "--traces" => traces = PathBuf::from(val()),
            "--max" => max = val().parse().unwrap_or_else(|_| usage()),
            "--repeat" => repeat = val().parse().unwrap_or_else(|_| usage()),
            "--replot" => {
                // Redraw the table and charts from a previous run's `scaling.csv` (no runs).
                let dir = PathBuf::from(val());
                let (bins, rows) = read_csv(&dir.join("scaling.csv"));
                let wave = wave_size();
                report(&dir, &bins, &rows, wave);
                return;
            }
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            _ => usage(),
        }
    }
    if bins.is_empty() {
        usage();
    }
    std::fs::create_dir_all(&out).expect("output folder");
    let wave = wave_size();
    let warps = BLOCK_THREADS.div_ceil(32);
    let per_block = (warps * 32) as u64 * (4 + 7 * ITERS as u64 + 1);
    // Sizes: 1, 2 and 5 times each power of ten from 10^5 up to `max`.
    let mut sizes = Vec::new();
    let mut decade = 1e5;
    while decade <= max {
        for m in [1.0, 2.0, 5.0] {
            if m * decade <= max * 1.0001 {
                sizes.push(m * decade);
            }
        }
        decade *= 10.0;
    }
    let mut rows: Vec<Row> = Vec::new();
    for &n in &sizes {
        let blocks = ((n / per_block as f64).round() as u32).max(1);
        let dir = traces.join(format!("b{blocks}"));
        if !dir.join("kernelslist.g").exists() {
            write_dir(
                &dir,
                &Synth {
                    atomics: SynthAtomics::Distinct,
                    iters: ITERS,
                    blocks,
                    block_threads: BLOCK_THREADS,
                },
            )
            .expect("write the trace");
        }
        for (label, bin) in &bins {
            let mut best: Option<Row> = None;
            for _ in 0..repeat {
                let r = run(label, bin, &dir, blocks, blocks.div_ceil(wave));
                eprintln!(
                    "{label:>8} {blocks:>6} blocks {:>12} thread insts {:>8.4} s wall {:>7.2} s cpu {:>8} KiB",
                    r.thread_insts, r.wall_s, r.cpu_s, r.rss_kib
                );
                if best.as_ref().is_none_or(|b| r.cpu_s < b.cpu_s) {
                    best = Some(r);
                }
            }
            rows.push(best.expect("repeat ≥ 1"));
        }
    }
    report(&out, &bins, &rows, wave);
}

/// Thread blocks of the traces' shape that the embedded H100 preset holds at once.
fn wave_size() -> u32 {
    let cfg = gpumemsim::config::load(None, &[]).expect("embedded preset");
    let sm = &cfg.sm;
    let warps = BLOCK_THREADS.div_ceil(32);
    let per_sm = sm
        .max_groups
        .min(sm.max_threads / BLOCK_THREADS)
        .min(sm.max_warps / warps);
    per_sm * sm.count
}

/// The builds and rows of a `scaling.csv` this program wrote.
fn read_csv(path: &Path) -> (Vec<(String, PathBuf)>, Vec<Row>) {
    let text = std::fs::read_to_string(path).expect("read scaling.csv");
    let mut bins: Vec<(String, PathBuf)> = Vec::new();
    let mut rows = Vec::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().expect("a number");
        if !bins.iter().any(|(b, _)| b == f[0]) {
            bins.push((f[0].to_string(), PathBuf::new()));
        }
        rows.push(Row {
            build: f[0].to_string(),
            blocks: num(1) as u32,
            waves: num(2) as u32,
            thread_insts: num(3) as u64,
            wall_s: num(4),
            cpu_s: num(5),
            rss_kib: (num(7) * 1024.0).round() as u64,
        });
    }
    (bins, rows)
}

/// One `gpumemsim run` of `dir`: wall time, peak memory and the thread instructions it reports.
fn run(label: &str, bin: &Path, dir: &Path, blocks: u32, waves: u32) -> Row {
    let json = std::env::temp_dir().join(format!("gpumemsim-scaling-{}.json", std::process::id()));
    let t0 = std::time::Instant::now();
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M %U %S"])
        .arg(bin)
        .arg("run")
        .arg(dir)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run /usr/bin/time");
    let wall_s = t0.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{} failed: {err}", bin.display());
    let last = err.lines().last().unwrap_or("");
    let f: Vec<&str> = last.split_whitespace().collect();
    let rss_kib: u64 = f[0].parse().expect("time's %M");
    let cpu_s: f64 =
        f[1].parse::<f64>().expect("time's %U") + f[2].parse::<f64>().expect("time's %S");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the run's JSON")).expect("JSON");
    let thread_insts = doc["stats"]
        .as_array()
        .expect("stats")
        .iter()
        .find(|r| r["location"] == "trace.kernel1" && r["metric"] == "thread_instructions")
        .and_then(|r| r["value"].as_f64())
        .expect("trace.kernel1 thread_instructions") as u64;
    Row {
        build: label.to_string(),
        blocks,
        waves,
        thread_insts,
        wall_s,
        cpu_s,
        rss_kib,
    }
}

/// Least squares y = a + b·x: (a, b, R²).
fn fit(p: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = p.len() as f64;
    let (sx, sy) = p.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = p.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = p.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let ss_res: f64 = p.iter().map(|(x, y)| (y - a - b * x).powi(2)).sum();
    let ss_tot: f64 = p.iter().map(|(_, y)| (y - my).powi(2)).sum();
    (a, b, 1.0 - ss_res / ss_tot)
}

fn report(out: &Path, bins: &[(String, PathBuf)], rows: &[Row], wave: u32) {
    let mut csv = String::from(
        "build,blocks,waves,thread_instructions,wall_s,cpu_s,ns_per_thread_instruction_cpu,peak_rss_mib\n",
    );
    let mut md = String::new();
    let _ = writeln!(
        md,
        "One wave = {wave} thread blocks of {BLOCK_THREADS} threads. Times of the whole `gpumemsim run` \
         process, the repeat with the least CPU time: wall, and CPU (user + system, 10 ms resolution; \
         steadier than wall on a shared machine); ns per thread instruction = CPU / n.\n"
    );
    let (mut time_s, mut per_inst, mut mem) = (Vec::new(), Vec::new(), Vec::new());
    for (label, _) in bins {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.build == label).collect();
        let pts: Vec<(f64, f64)> = mine
            .iter()
            .map(|r| (r.thread_insts as f64, r.cpu_s))
            .collect();
        let wall: Vec<(f64, f64)> = mine
            .iter()
            .map(|r| (r.thread_insts as f64, r.wall_s))
            .collect();
        let (a, b, r2) = fit(&pts);
        let (wa, wb, wr2) = fit(&wall);
        let (ma, mb, _) = fit(&mine
            .iter()
            .map(|r| (r.thread_insts as f64, r.rss_kib as f64 / 1024.0))
            .collect::<Vec<_>>());
        let _ = writeln!(
            md,
            "**{label}**: CPU time = {a:.3} s + {:.2} ns · n, R² = {r2:.5}; wall time = {wa:.3} s + {:.2} ns · n, \
             R² = {wr2:.5}; peak memory (linear fit) = {ma:.1} MiB + {:.3} MiB per million thread instructions\n",
            b * 1e9,
            wb * 1e9,
            mb * 1e6
        );
        let _ = writeln!(
            md,
            "| thread instructions | blocks | waves | wall (s) | CPU (s) | ns / thread instruction (wall) | ns / thread instruction (CPU) | peak RSS (MiB) |"
        );
        let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in &mine {
            let ns = r.cpu_s * 1e9 / r.thread_insts as f64;
            let ns_wall = r.wall_s * 1e9 / r.thread_insts as f64;
            let mib = r.rss_kib as f64 / 1024.0;
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.4} | {:.2} | {ns_wall:.1} | {ns:.1} | {mib:.1} |",
                r.thread_insts, r.blocks, r.waves, r.wall_s, r.cpu_s
            );
            let _ = writeln!(
                csv,
                "{label},{},{},{},{:.4},{:.2},{ns:.2},{mib:.1}",
                r.blocks, r.waves, r.thread_insts, r.wall_s, r.cpu_s
            );
        }
        md.push('\n');
        time_s.push(Series::new(label.clone(), wall));
        per_inst.push(Series::new(
            label.clone(),
            mine.iter()
                .map(|r| {
                    (
                        r.thread_insts as f64,
                        r.wall_s * 1e9 / r.thread_insts as f64,
                    )
                })
                .collect(),
        ));
        mem.push(Series::new(
            label.clone(),
            mine.iter()
                .map(|r| (r.thread_insts as f64, r.rss_kib as f64 / 1024.0))
                .collect(),
        ));
    }
    let n_axis = || Axis::log("thread instructions", "");
    let charts = [
        (
            "time",
            Chart::lines(
                "Trace replay: wall time against trace length (H100 preset)",
                n_axis(),
                Axis::log("wall time", "s"),
                time_s,
            ),
        ),
        (
            "ns-per-instruction",
            Chart::lines(
                "Trace replay: wall time per thread instruction (start-up included)",
                n_axis(),
                Axis::log("wall time per thread instruction", "ns"),
                per_inst,
            ),
        ),
        (
            "memory",
            Chart::lines(
                "Trace replay: peak resident memory against trace length",
                n_axis(),
                Axis::log("peak resident memory", "MiB"),
                mem,
            ),
        ),
    ];
    for (stem, c) in charts {
        c.save(out, stem).expect("write the chart");
    }
    std::fs::write(out.join("scaling.csv"), csv).expect("write the CSV");
    std::fs::write(out.join("scaling.md"), &md).expect("write the table");
    print!("{md}");
}
