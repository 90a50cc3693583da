//! The workloads of issue 2 item 6 run on the simulated GPU: every check holds on the tiny config and on
//! the embedded default, the races, costs and diagnoses the reference chapters describe appear, and a
//! run is reproducible byte for byte. Launches are sized with parameters so that the suite stays fast.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::machine::{self, RunOptions, RunResult, SimError};
use gpumemsim::runner::{self, RunArgs};
use gpumemsim::workload::Workload;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workload_path(name: &str) -> PathBuf {
    root().join("workloads").join(format!("{name}.kern"))
}

fn tiny_with(sets: &[&str]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    config::load(Some(&root().join("configs/tiny.toml")), &sets).expect("tiny config loads")
}

fn tiny() -> GpuConfig {
    tiny_with(&[])
}

fn load(name: &str, params: &[(&str, i64)]) -> Workload {
    let params: Vec<(String, i64)> = params.iter().map(|&(n, v)| (n.to_string(), v)).collect();
    gpumemsim::frontend::load(&workload_path(name), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run_on(cfg: &GpuConfig, wl: &Workload) -> RunResult {
    machine::run(cfg, wl, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", wl.kernel.file))
}

fn assert_checks_hold(r: &RunResult, what: &str) {
    assert!(!r.checks.is_empty(), "{what}: no checks");
    for c in &r.checks {
        assert!(
            c.passed,
            "{what}: check failed: {} at {}: {:?}",
            c.text, c.location, c.detail
        );
    }
}

fn buffer(wl: &Workload, r: &RunResult, name: &str) -> Vec<u64> {
    let i = wl
        .buffers
        .iter()
        .position(|b| b.name == name)
        .unwrap_or_else(|| panic!("no buffer {name}"));
    r.buffers[i].clone()
}

/// Every workload of issue 2 item 6 (named exactly so), and the extra ones, with small parameters.
const SMALL: &[(&str, &[(&str, i64)])] = &[
    ("race_counter", &[("N", 512), ("M", 32)]),
    ("race_counter_barrier", &[("N", 64), ("M", 8)]),
    ("race_counter_atomic", &[("N", 512), ("M", 32)]),
    ("histogram_global", &[("N", 1024), ("B", 32)]),
    ("histogram_local", &[("N", 1024), ("B", 32), ("GROUPS", 4)]),
    ("reduce_atomic", &[("N", 1000), ("G", 64)]),
    ("neighbor_list", &[("N", 64), ("R", 3)]),
    ("cas_add", &[("T", 128), ("K", 2)]),
    ("float_add", &[("T", 256), ("K", 2)]),
    ("device_latch", &[("GROUPS", 8), ("G", 32)]),
    ("contention", &[("T", 512), ("K", 4), ("RET", 1)]),
    ("atomic_min", &[("N", 512)]),
    ("spin_lock", &[("T", 48), ("G", 16)]),
];

fn every_workload_passes_its_checks_on(cfg: &GpuConfig) {
    for (name, params) in SMALL {
        let wl = load(name, params);
        let r = run_on(cfg, &wl);
        assert_checks_hold(&r, name);
    }
}

#[test]
fn every_workload_passes_its_checks_on_tiny() {
    every_workload_passes_its_checks_on(&tiny());
}

#[test]
fn every_workload_passes_its_checks_on_the_default_config() {
    every_workload_passes_its_checks_on(
        &config::default_config().expect("the embedded default is valid"),
    );
}

#[test]
fn every_workload_file_parses_with_its_defaults() {
    let mut names: Vec<&str> = SMALL.iter().map(|(n, _)| *n).collect();
    names.push("device_latch_oversubscribed");
    for name in names {
        let wl = load(name, &[]);
        assert_eq!(wl.kernel.name, name, "the kernel is named after its file");
        assert!(!wl.checks.is_empty(), "{name} has checks");
    }
}

#[test]
fn race_counter_loses_updates_when_n_exceeds_m() {
    let wl = load("race_counter", &[("N", 512), ("M", 32)]);
    let r = run_on(&tiny(), &wl);
    let lost = r
        .reports
        .iter()
        .find(|(n, _)| n == "lost")
        .expect("race_counter reports lost")
        .1;
    let data = buffer(&wl, &r, "data");
    assert_eq!(lost, 512 - data.iter().sum::<u64>() as i64);
    assert!(lost > 0 && lost < 512, "lost = {lost}");
    assert_checks_hold(&r, "race_counter");
}

#[test]
fn race_counter_check_fails_when_no_update_can_be_lost() {
    // N <= M: every work-item owns its counter, nothing is lost, and the figure's claim is false.
    let wl = load("race_counter", &[("N", 32), ("M", 64)]);
    let r = run_on(&tiny(), &wl);
    assert!(r
        .checks
        .iter()
        .any(|c| !c.passed && c.text == "sum(data) < N"));
}

#[test]
fn barrier_and_atomic_race_counters_are_exact() {
    for name in ["race_counter_barrier", "race_counter_atomic"] {
        let wl = load(name, &[("N", 96), ("M", 8)]);
        let r = run_on(&tiny(), &wl);
        assert_eq!(buffer(&wl, &r, "data"), vec![12; 8], "{name}");
    }
}

#[test]
fn device_latch_completes_when_all_groups_are_resident() {
    let wl = load("device_latch", &[("GROUPS", 16), ("G", 64)]);
    let r = run_on(&tiny(), &wl);
    assert_eq!(buffer(&wl, &r, "counter"), vec![16]);
    assert!(buffer(&wl, &r, "sums").iter().all(|&s| s == 1024));
}

#[test]
fn device_latch_oversubscribed_ends_in_a_no_progress_diagnosis() {
    let cfg = tiny_with(&["watchdog.no_progress_cycles=5000"]);
    let wl = load("device_latch_oversubscribed", &[("GROUPS", 64)]);
    let e = machine::run(&cfg, &wl, &RunOptions::default()).expect_err("must not complete");
    let SimError::NoProgress { diagnosis, .. } = &e else {
        panic!("expected a no-progress diagnosis, got {e}");
    };
    // The elected warp of each resident group (tiny holds 8 groups of 256) spins on the counter ...
    let spinning: Vec<&str> = diagnosis
        .lines()
        .filter(|l| l.contains("warp 0:") && l.contains("counter[0]"))
        .collect();
    assert_eq!(spinning.len(), 8, "{diagnosis}");
    // ... at a PC in the spin loop (lines 28-30 of the file), ...
    let spin_lines = ["kern:28:", "kern:29:", "kern:30:"];
    assert!(
        spinning
            .iter()
            .all(|l| l.contains(" pc ") && spin_lines.iter().any(|s| l.contains(s))),
        "{diagnosis}"
    );
    // ... while the other warps wait at the barrier and the other groups wait for an SM.
    assert!(diagnosis.contains("wait at the barrier"), "{diagnosis}");
    // The reason: the machine's state only repeated (`sim/machine/watchdog.rs`).
    assert!(
        diagnosis.contains("the state repeats: since cycle")
            && diagnosis.contains("in states seen before"),
        "{diagnosis}"
    );
    assert!(
        diagnosis.contains("56 work-groups are waiting for an SM"),
        "{diagnosis}"
    );
}

#[test]
fn cas_add_agrees_with_native_add_and_costs_more_under_contention() {
    let cfg = tiny();
    let run = |cas: i64| {
        let wl = load("cas_add", &[("T", 256), ("K", 1), ("CAS", cas)]);
        let r = run_on(&cfg, &wl);
        assert_checks_hold(&r, "cas_add");
        let mut old = buffer(&wl, &r, "old");
        old.sort_unstable();
        (buffer(&wl, &r, "counter"), old, r.cycles)
    };
    let (cas_counter, cas_old, cas_cycles) = run(1);
    let (native_counter, native_old, native_cycles) = run(0);
    assert_eq!(cas_counter, vec![256]);
    assert_eq!(cas_counter, native_counter);
    // Every work-item saw a distinct old value: 0 .. 255 in both versions.
    assert_eq!(cas_old, (0..256).collect::<Vec<u64>>());
    assert_eq!(cas_old, native_old);
    assert!(
        cas_cycles > 2 * native_cycles,
        "CAS loop {cas_cycles} cycles vs native {native_cycles}"
    );
}

#[test]
fn float_add_is_exact_native_and_as_a_cas_loop() {
    let wl = load("float_add", &[("T", 256), ("K", 2)]);
    let native = run_on(&tiny(), &wl);
    let emulated = run_on(&tiny_with(&["atomics.float_add=\"cas_loop\""]), &wl);
    for (r, what) in [(&native, "native"), (&emulated, "cas_loop")] {
        assert_checks_hold(r, what);
        let acc: Vec<f32> = buffer(&wl, r, "acc")
            .iter()
            .map(|&b| f32::from_bits(b as u32))
            .collect();
        assert_eq!(acc, vec![64.0, 64.0], "{what}");
    }
    let ops = |r: &RunResult| r.stats.get("atomics.l2", "lane_operations").unwrap();
    assert_eq!(ops(&native), 256.0);
    // The loop retries: more atomic operations and more time than the native unit.
    assert!(ops(&emulated) > ops(&native));
    assert!(emulated.cycles > native.cycles);
}

#[test]
fn neighbor_list_is_valid_with_atomic_slots_and_with_register_counts() {
    for atomic in [1, 0] {
        let wl = load("neighbor_list", &[("N", 96), ("R", 4), ("ATOMIC", atomic)]);
        let r = run_on(&tiny(), &wl);
        assert_checks_hold(&r, &format!("neighbor_list ATOMIC={atomic}"));
        let nn = buffer(&wl, &r, "NN");
        assert_eq!(nn[0], 4);
        assert_eq!(nn[50], 8);
    }
}

#[test]
fn contention_on_one_address_costs_more_than_on_distinct_addresses() {
    // Without warp-level combining every lane's add on one address serialises in the L2 unit.
    let cfg = tiny_with(&["atomics.combine_same_address_lanes=false"]);
    let cycles = |k: i64| {
        // STRIDE 1 keeps all counters in a few lines, so that L2 misses do not blur the comparison.
        let wl = load("contention", &[("T", 1024), ("K", k), ("STRIDE", 1)]);
        let r = run_on(&cfg, &wl);
        assert_checks_hold(&r, &format!("contention K={k}"));
        r.cycles
    };
    let (one, many) = (cycles(1), cycles(1024));
    assert!(
        one > many,
        "1 address: {one} cycles, 1024 addresses: {many}"
    );
}

#[test]
fn returning_atomics_hand_out_every_old_value_once() {
    let wl = load("contention", &[("T", 300), ("K", 3), ("RET", 1)]);
    let r = run_on(&tiny(), &wl);
    assert_checks_hold(&r, "contention RET=1");
    let old = buffer(&wl, &r, "old");
    for k in 0..3 {
        let mut mine: Vec<u64> = (k..300).step_by(3).map(|i| old[i]).collect();
        mine.sort_unstable();
        assert_eq!(mine, (0..100).collect::<Vec<u64>>(), "counter {k}");
    }
}

fn run_args(name: &str, out: &Path, tag: &str) -> RunArgs {
    RunArgs {
        input: workload_path(name),
        config: Some(root().join("configs/tiny.toml")),
        seed: 7,
        sets: vec![
            "stress.interconnect_jitter=20".into(),
            "stress.drain_jitter=10".into(),
            "stress.start_skew=30".into(),
        ],
        params: vec![("N".into(), 512), ("M".into(), 16)],
        json: Some(out.join(format!("{tag}.json"))),
        csv: Some(out.join(format!("{tag}.csv"))),
        stats_json: Some(out.join(format!("{tag}.stats.json"))),
        races: false,
        threads: 1,
        ..Default::default()
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn same_inputs_and_seed_give_byte_identical_json() {
    let dir = scratch_dir("determinism");
    let a = runner::execute(&run_args("race_counter", &dir, "a")).unwrap();
    let b = runner::execute(&run_args("race_counter", &dir, "b")).unwrap();
    let ja = std::fs::read(dir.join("a.json")).unwrap();
    let jb = std::fs::read(dir.join("b.json")).unwrap();
    assert_eq!(ja, jb);
    assert_eq!(
        std::fs::read(dir.join("a.csv")).unwrap(),
        std::fs::read(dir.join("b.csv")).unwrap()
    );
    assert_eq!(a.result.cycles, b.result.cycles);
    let text = String::from_utf8(ja).unwrap();
    assert!(
        text.contains("\"parameters\"") && text.contains("\"seed\": 7"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_and_csv_carry_the_run_statistics() {
    let dir = scratch_dir("outputs");
    let out = runner::execute(&run_args("race_counter", &dir, "r")).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["schema"], "gpumemsim-run");
    assert_eq!(json["version"], 3);
    assert_eq!(json["cycles"].as_u64(), Some(out.result.cycles));
    // Parameters as an object in declaration order (schema version 2).
    let text = std::fs::read_to_string(dir.join("r.json")).unwrap();
    assert!(
        text.contains("\"parameters\": {\n    \"N\": 512,\n    \"M\": 16"),
        "{text}"
    );
    assert!(json["reports"]["lost"].as_i64().is_some(), "{text}");
    let csv = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("location,metric,value,unit"));
    assert!(csv.contains(&format!("kernel,cycles,{},cycles", out.result.cycles)));
    // The same rows as JSON records, and inside the document.
    let records: Vec<gpumemsim::stats::Stat> =
        serde_json::from_slice(&std::fs::read(dir.join("r.stats.json")).unwrap()).unwrap();
    // First the command line's overrides (three --set, two --param), then the statistics.
    let overrides = records
        .iter()
        .take_while(|r| r.location == "override")
        .count();
    assert_eq!(overrides, 5, "{records:?}");
    let records = &records[overrides..];
    assert_eq!(records.len(), out.result.stats.rows.len());
    for (a, b) in records.iter().zip(&out.result.stats.rows) {
        // serde_json reads floats to within an ulp.
        let same = (a.value - b.value).abs() <= 1e-12 * b.value.abs().max(1.0);
        assert!(a.location == b.location && a.metric == b.metric && a.unit == b.unit && same);
    }
    assert_eq!(json["stats"].as_array().map(Vec::len), Some(records.len()));
    assert!(out.summary.contains("report            lost = "));
    let _ = std::fs::remove_dir_all(&dir);
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
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

#[test]
fn run_command_exits_0_when_checks_hold_and_1_when_they_fail() {
    let (code, stdout, _) = cli(&[
        "run",
        "workloads/race_counter_atomic.kern",
        "--config",
        "configs/tiny.toml",
        "--param",
        "N=256",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("check ok") && stdout.contains("cycles"),
        "{stdout}"
    );
    let (code, stdout, stderr) = cli(&[
        "run",
        "workloads/race_counter.kern",
        "--config",
        "configs/tiny.toml",
        "--param",
        "N=32",
        "--param",
        "M=64",
    ]);
    assert_eq!(code, 1);
    assert!(stdout.contains("check FAIL"), "{stdout}");
    assert!(stderr.contains("1 of 2 checks failed"), "{stderr}");
}

#[test]
fn run_command_exits_1_with_a_located_message_on_bad_input() {
    let dir = scratch_dir("bad-input");
    let bad = dir.join("bad.kern");
    std::fs::write(
        &bad,
        "groups 1\ngroup_size 32\nkernel k {\n    ld.release.u32 %x, [%y]\n}\n",
    )
    .unwrap();
    let (code, _, stderr) = cli(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("bad.kern:4:8: found order `release` but a load takes"),
        "{stderr}"
    );
    let (code, _, stderr) = cli(&["run", "workloads/contention.kern", "--param", "Q=3"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--param Q") && stderr.contains("declared: T, K, RET, STRIDE, G"),
        "{stderr}"
    );
    let (code, _, stderr) = cli(&["run", "workloads/nonexistent.kern"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("nonexistent.kern: cannot read"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_command_prints_the_diagnosis_when_the_watchdog_stops_a_run() {
    let (code, _, stderr) = cli(&[
        "run",
        "workloads/device_latch_oversubscribed.kern",
        "--config",
        "configs/tiny.toml",
        "--set",
        "watchdog.no_progress_cycles=3000",
        "--param",
        "GROUPS=32",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no forward progress") && stderr.contains("counter[0]"),
        "{stderr}"
    );
}

#[test]
fn an_order_the_config_does_not_support_is_rejected_at_load_time_with_its_location() {
    let cfg = tiny_with(&["support.atomic_orders=[\"relaxed\", \"acquire\", \"release\"]"]);
    let wl = load("device_latch", &[("GROUPS", 2), ("G", 32)]);
    let e = machine::run(&cfg, &wl, &RunOptions::default())
        .expect_err("acq_rel is unsupported")
        .to_string();
    assert!(
        e.contains("device_latch.kern:25:5")
            && e.contains("atomic order `acq_rel` is not supported"),
        "{e}"
    );
    let cfg = tiny_with(&[
        "support.atomic_scopes=[\"work_item\", \"sub_group\", \"work_group\", \"device\"]",
    ]);
    let wl = load("race_counter_atomic", &[("N", 64)]);
    let e = machine::run(&cfg, &wl, &RunOptions::default())
        .expect_err("system scope is unsupported")
        .to_string();
    assert!(
        e.contains("race_counter_atomic.kern:18:5") && e.contains("atomic scope `system`"),
        "{e}"
    );
}

#[test]
fn cas_loop_lowering_keeps_the_branches_around_it() {
    // A loop whose body holds two f32 atomic adds (one returning): the lowering inserts a retry loop
    // for each, and the backward branch and the forward exit must still reach their instructions.
    let src = "groups 2\ngroup_size 32\nbuffer acc: f32[2]\nbuffer seen: f32[64]\n\
               kernel k {\n    reg %n, %p, %o, %i\n    mov.u32 %i, %global_id\n    mov.u32 %n, 0\n\
               top:\n    setp.ge.u32 %p, %n, 3\n    @%p bra out\n    red.add.f32 acc[0], 0.5\n\
               atom.add.f32 %o, acc[1], 0.25\n    add.u32 %n, %n, 1\n    bra top\nout:\n\
               st.f32 seen[%i], %o\n}\n\
               check acc[0] == 96\ncheck acc[1] == 48\ncheck forall i in seen: seen[i] < 48\n";
    let wl = gpumemsim::frontend::parse(src, "loop.kern", &[]).unwrap();
    let cfg = tiny_with(&["atomics.float_add=\"cas_loop\""]);
    let r = run_on(&cfg, &wl);
    assert_checks_hold(&r, "lowered loop");
    let native = run_on(&tiny(), &wl);
    assert_checks_hold(&native, "native loop");
}

#[test]
fn the_complete_examples_of_the_language_reference_run_and_pass_their_checks() {
    let text = std::fs::read_to_string(root().join("workloads/README.md")).unwrap();
    let mut examples = 0;
    for (i, block) in text.split("```kern\n").skip(1).enumerate() {
        let src = block.split("```").next().unwrap();
        let name = format!("README example {}", i + 1);
        let wl = gpumemsim::frontend::parse(src, &name, &[]).unwrap_or_else(|e| panic!("{e}"));
        let r = run_on(&tiny(), &wl);
        assert_checks_hold(&r, &name);
        examples += 1;
    }
    assert!(examples >= 2, "the reference has complete examples");
}

/// The window-synchronous parallel machine gives the same result on any number of threads: every
/// workload, on the stress config (jitter, stress warps, randomised placement) and on the default
/// H100, with race detection on, compared field by field (cycles, every statistic, final buffers,
/// races) as serialised JSON.
#[test]
fn results_do_not_depend_on_the_number_of_simulation_threads() {
    let stress = config::load(Some(&root().join("configs/stress.toml")), &[]).expect("stress");
    let h100 = config::load(None, &[]).expect("default");
    for cfg in [&stress, &h100] {
        for (name, params) in SMALL {
            let wl = load(name, params);
            let run = |threads: usize| {
                let opts = RunOptions {
                    seed: 11,
                    races: true,
                    threads,
                    ..RunOptions::default()
                };
                let r = machine::run(cfg, &wl, &opts)
                    .unwrap_or_else(|e| panic!("{name} on {}: {e}", cfg.name));
                serde_json::to_string(&r).expect("serialises")
            };
            let one = run(1);
            for threads in [2, 3] {
                assert!(
                    one == run(threads),
                    "{name} on {}: {threads} threads differ from one",
                    cfg.name
                );
            }
        }
    }
}

// The watchdog's definition of progress (issue 16 item 4, `sim/machine/watchdog.rs`): three
// terminating kernels that the old rule (no memory value changed, no lane exited) stopped as "no
// forward progress", one that never ends and must be stopped by the cycle limit, and (above) the
// oversubscribed latch, a real deadlock that must still be diagnosed as one.

fn test_workload(name: &str, params: &[(&str, i64)]) -> Workload {
    let params: Vec<(String, i64)> = params.iter().map(|&(n, v)| (n.to_string(), v)).collect();
    let path = root().join("workloads/tests").join(format!("{name}.kern"));
    gpumemsim::frontend::load(&path, &params).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn watchdog_diagnoses_many_spinning_warps_as_soon_as_the_window_allows() {
    // 1,056 resident groups' elected warps spin on the H100: each is judged by its registers, not by
    // the point of the loop body a sample falls on, so the state repeats from the first samples.
    let cfg = config::default_config().unwrap();
    let wl = load("device_latch_oversubscribed", &[]);
    match machine::run(&cfg, &wl, &RunOptions::default()) {
        Err(SimError::NoProgress { cycle, .. }) => {
            assert!(cycle < 2 * cfg.watchdog.no_progress_cycles, "{cycle}")
        }
        other => panic!("expected no progress, got {:?}", other.map(|r| r.cycles)),
    }
}

#[test]
fn watchdog_lets_a_streaming_read_finish() {
    // The old rule stopped this at cycle 100,001 of 341,940: nothing but loads for 100,000 cycles.
    let wl = test_workload("streaming_read", &[("GROUPS", 8), ("G", 256), ("PER", 256)]);
    assert_checks_hold(&run_on(&tiny(), &wl), "streaming_read");
}

#[test]
fn watchdog_lets_a_compute_only_loop_finish() {
    let cfg = config::default_config().unwrap();
    let wl = test_workload("compute_loop", &[("ITERS", 40_000)]);
    assert_checks_hold(&run_on(&cfg, &wl), "compute_loop");
}

#[test]
fn watchdog_lets_a_long_read_only_phase_after_a_latch_finish() {
    let wl = load("device_latch", &[("GROUPS", 8), ("G", 256)]);
    assert_checks_hold(&run_on(&tiny(), &wl), "device_latch GROUPS=8 G=256");
}

#[test]
fn watchdog_stops_stores_that_change_memory_forever_at_the_cycle_limit() {
    let cfg = tiny_with(&["watchdog.max_cycles=300000"]);
    let wl = test_workload("store_forever", &[]);
    match machine::run(&cfg, &wl, &RunOptions::default()) {
        Err(e @ SimError::MaxCycles { .. }) => {
            let text = e.to_string();
            assert!(text.contains("watchdog.max_cycles = 300000"), "{text}");
            assert!(
                text.contains("store_forever.kern:"),
                "the diagnosis names the loop: {text}"
            );
        }
        other => panic!(
            "expected the cycle limit, got {:?}",
            other.map(|r| r.cycles)
        ),
    }
}

/// A kernel of one work-group of two warps (tiny: 32 lanes): warp 0 runs `w0`, warp 1 runs `w1`.
fn two_warps(w0: &str, w1: &str) -> Workload {
    let src = format!(
        "groups 1\ngroup_size 64\nbuffer data: u32[4] = zero\n\nkernel k {{\n    reg %w, %v, %p\n    mov.u32 %w, %sub_group_id\n    setp.ne.u32 %p, %w, 0\n    @%p bra one\n{w0}\n    exit\none:\n{w1}\n}}\n"
    );
    gpumemsim::frontend::parse(&src, "k.kern", &[]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn kernel_named_barriers_synchronise_by_id_and_count() {
    // bar.arrive by the producer warp releases its store to the consumer waiting at barrier 1.
    let wl = two_warps(
        "    st.u32 data[0], 7\n    bar.arrive 1, 64",
        "    bar.sync 1, 64\n    ld.u32 %v, data[0]\n    st.u32 data[1], %v",
    );
    let r = run_on(&tiny(), &wl);
    assert_eq!(r.buffers[0][..2], [7, 7]);
    // Barrier 2 with a count of one warp completes for warp 1 alone while warp 0 waits at barrier
    // 3 for both warps; warp 1 then reaches barrier 3.
    let wl = two_warps(
        "    bar.sync 3\n    st.u32 data[2], 1",
        "    bar.sync 2, 32\n    bar.sync 3\n    st.u32 data[3], 1",
    );
    let r = run_on(&tiny(), &wl);
    assert_eq!(r.buffers[0][2..], [1, 1]);
}

#[test]
fn kernel_barrier_deadlock_is_diagnosed_with_its_barrier_id() {
    // Warp 0 waits at barrier 1, warp 1 at barrier 2, each for the whole work-group.
    let wl = two_warps("    bar.sync 1", "    bar.sync 2, 64");
    let e = machine::run(&tiny(), &wl, &RunOptions::default()).expect_err("deadlocks");
    let SimError::NoProgress { diagnosis, .. } = &e else {
        panic!("expected a no-progress diagnosis, got {e}");
    };
    assert!(
        diagnosis.contains("`bar.sync 1`") && diagnosis.contains("`bar.sync 2, 64`"),
        "{diagnosis}"
    );
    // With `stuck_ok` (the litmus runner) the run ends with the waiting threads instead.
    let opts = RunOptions {
        stuck_ok: true,
        ..Default::default()
    };
    let r = machine::run(&tiny(), &wl, &opts).expect("a result");
    assert_eq!(r.unfinished, (0..64).collect::<Vec<u64>>());
}

#[test]
fn kernel_barrier_divergence_follows_per_thread_arrival_with_exits_not_expected() {
    // Warp 1 exits without reaching the barrier: barrier 0 then expects warp 0 only (PTX per-thread
    // arrival counting, exited threads no longer expected), so warp 0 passes it.
    let wl = two_warps(
        "    bar.sync 0\n    st.u32 data[0], 5",
        "    st.u32 data[1], 6",
    );
    let r = run_on(&tiny(), &wl);
    assert_eq!(r.buffers[0][..2], [5, 6]);
    // A counted barrier waits for its count whatever exits: warp 0 alone never completes
    // `bar.sync 1, 64`.
    let wl = two_warps(
        "    bar.sync 1, 64\n    st.u32 data[0], 5",
        "    st.u32 data[1], 6",
    );
    let e = machine::run(&tiny(), &wl, &RunOptions::default()).expect_err("never completes");
    assert!(e.to_string().contains("`bar.sync 1, 64`"), "{e}");
    // Lanes of one warp at different barriers: an error naming the instruction.
    let src = "groups 1\ngroup_size 32\nbuffer data: u32[1] = zero\n\nkernel k {\n    reg %l, %p\n    mov.u32 %l, %laneid\n    setp.ne.u32 %p, %l, 0\n    @%p bra one\n    bar.sync 1, 32\n    exit\none:\n    bar.sync 2, 32\n}\n";
    let wl = gpumemsim::frontend::parse(src, "k.kern", &[]).expect("parses");
    let e = machine::run(&tiny(), &wl, &RunOptions::default()).expect_err("diverged lanes");
    assert!(
        e.to_string().starts_with("k.kern:") && e.to_string().contains("different barriers"),
        "{e}"
    );
}

#[test]
fn kernel_barrier_operands_are_checked() {
    for (text, what) in [
        ("bar.sync 16", "0 to 15"),
        ("bar.sync 1, 48", "multiple of the warp size"),
        ("bar.arrive 1", "expected 2"),
        ("bar.sync 1, 64, 3", "expected 2"),
    ] {
        let src = format!(
            "groups 1\ngroup_size 32\nbuffer data: u32[1] = zero\n\nkernel k {{\n    {text}\n}}\n"
        );
        let e = gpumemsim::frontend::parse(&src, "k.kern", &[])
            .expect_err(text)
            .to_string();
        assert!(
            e.starts_with("k.kern:6:") && e.contains(what),
            "{text}: {e}"
        );
    }
}

/// `run`'s progress (issue 16 item 6): the hook is told the work-groups finished, in order, up to all
/// of them, and a run with it gives exactly the result of one without.
#[test]
fn run_progress_is_told_the_work_groups_finished_and_changes_no_result() {
    use std::sync::{Arc, Mutex};
    struct Seen(Mutex<Vec<(u64, u64)>>);
    impl gpumemsim::progress::Report for Seen {
        fn update(&self, done: u64, total: u64) {
            self.0.lock().unwrap().push((done, total));
        }
    }
    let wl = load("device_latch", &[("GROUPS", 8), ("G", 64)]);
    let seen = Arc::new(Seen(Mutex::new(Vec::new())));
    let opts = RunOptions {
        progress: Some(machine::ProgressHook(seen.clone())),
        ..RunOptions::default()
    };
    let with = machine::run(&tiny(), &wl, &opts).unwrap();
    let without = machine::run(&tiny(), &wl, &RunOptions::default()).unwrap();
    assert_eq!(
        serde_json::to_string(&with).unwrap(),
        serde_json::to_string(&without).unwrap()
    );
    let s = seen.0.lock().unwrap();
    assert_eq!(s.last(), Some(&(8, 8)), "{s:?}");
    assert!(s.windows(2).all(|w| w[0].0 < w[1].0), "{s:?}");
}

/// The summary says what each surprising quantity counts (issue 18 item 4): the L2's atomic requests
/// against the atomic units' operations and lanes, mean queueing per request against the total
/// same-address wait, stalls in warp-cycles.
#[test]
fn the_summary_says_what_its_atomic_counts_and_waits_count() {
    let wl = load("histogram_local", &[]);
    let cfg = config::default_config().unwrap();
    let s = run_on(&cfg, &wl).summary(&cfg);
    for want in [
        "16 atomic requests (one per warp instruction and line)",
        "L2: 512 ops for 512 lanes (one op per lane)",
        "mean queueing 28.2 L2 cycles per request before its slice's unit starts it",
        "same-address wait 0 L2 cycles in total",
        "full-stall 0 warp-cycles",
        "347 warp-cycles stalled at releases",
    ] {
        assert!(s.contains(want), "{want:?} not in\n{s}");
    }
}

/// Special registers on a three-dimensional launch (groups 3×2×2 of 4×3×2 work-items, warps of 8 on
/// the tiny config, so warps straddle the group's rows and planes): every work-item's ids, sizes and
/// linear ids, as the OpenCL/SYCL definitions give them from its coordinates.
#[test]
fn special_registers_follow_the_work_items_coordinates_in_three_dimensions() {
    let names = [
        "global_id.x",
        "global_id.y",
        "global_id.z",
        "local_id.x",
        "local_id.y",
        "local_id.z",
        "group_id.x",
        "group_id.y",
        "group_id.z",
        "global_linear_id",
        "local_linear_id",
        "group_linear_id",
        "global_size.y",
        "local_size.z",
        "num_groups.x",
        "sub_group_id",
        "sub_group_local_id",
    ];
    let n = names.len();
    let (gs, ng) = ([4u64, 3, 2], [3u64, 2, 2]);
    let items = gs.iter().product::<u64>() * ng.iter().product::<u64>();
    let mut src = format!(
        "groups {}, {}, {}\ngroup_size {}, {}, {}\nbuffer out: u64[{}]\nkernel k {{\n    reg %g, %a, %v\n    \
         mov.u64 %g, %global_linear_id\n",
        ng[0], ng[1], ng[2], gs[0], gs[1], gs[2], items * n as u64
    );
    for (k, name) in names.iter().enumerate() {
        src += &format!(
            "    mul.u64 %a, %g, {n}\n    add.u64 %a, %a, {k}\n    mov.u64 %v, %{name}\n    \
             st.u64 out[%a], %v\n"
        );
    }
    src += "}\n";
    let wl =
        gpumemsim::frontend::parse(&src, "t.kern", &[]).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let r = run_on(&tiny(), &wl);
    let out = buffer(&wl, &r, "out");
    let ws = tiny().sm.warp_size as u64;
    let mut seen = 0;
    for group in 0..ng.iter().product::<u64>() {
        let gid = [
            group % ng[0],
            group / ng[0] % ng[1],
            group / (ng[0] * ng[1]),
        ];
        for lin in 0..gs.iter().product::<u64>() {
            let lid = [lin % gs[0], lin / gs[0] % gs[1], lin / (gs[0] * gs[1])];
            let g: Vec<u64> = (0..3).map(|d| gid[d] * gs[d] + lid[d]).collect();
            let (sx, sy) = (gs[0] * ng[0], gs[1] * ng[1]);
            let linear = g[0] + sx * (g[1] + sy * g[2]);
            let want = [
                g[0],
                g[1],
                g[2],
                lid[0],
                lid[1],
                lid[2],
                gid[0],
                gid[1],
                gid[2],
                linear,
                lin,
                group,
                sy,
                gs[2],
                ng[0],
                lin / ws,
                lin % ws,
            ];
            let got = &out[linear as usize * n..][..n];
            for k in 0..n {
                assert_eq!(
                    got[k], want[k],
                    "{} of group {gid:?} item {lid:?}",
                    names[k]
                );
            }
            seen += 1;
        }
    }
    assert_eq!(seen, items);
}
