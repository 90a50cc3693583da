//! Bad input never crashes and is never accepted (issue 16): each class of hostile input the issue
//! found, as the library and the command line meet it — an error naming the place, or (for flags) the
//! usage exit status 2; never a panic, an abort or a run that starts on nonsense.

use gpumemsim::config;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn gpumemsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the gpumemsim binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temporary folder, removed on drop.
struct Temp(PathBuf);

impl Temp {
    fn new(name: &str) -> Temp {
        let dir = std::env::temp_dir().join(format!("gpumemsim-bad-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Temp(dir)
    }
    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const KERNEL: &str =
    "groups 1\ngroup_size 32\nbuffer b: u32[32] = zero\nkernel k {\n    reg %i\n    \
                      mov.u32 %i, %global_id\n    st.u32 b[%i], 1\n}\ncheck sum(b) == 32\n";

fn kernel_error(text: &str) -> String {
    gpumemsim::frontend::parse(text, "k.kern", &[])
        .unwrap_err()
        .to_string()
}

#[test]
fn launch_sizes_are_bounded_at_their_line_before_anything_is_allocated() {
    // Aborted on a 34 GB allocation in the dispatcher.
    let e = kernel_error(&KERNEL.replace("groups 1", "groups 4294967295"));
    assert!(e.starts_with("k.kern:1:1: groups 4294967295"), "{e}");
    assert!(e.contains("at most 16777216"), "{e}");
    let e = kernel_error(&KERNEL.replace("group_size 32", "group_size 65536, 65536"));
    assert!(e.starts_with("k.kern:2:1: group_size"), "{e}");
    assert!(e.contains("at most 65536"), "{e}");
    // At the limits, the file loads.
    gpumemsim::frontend::parse(
        &KERNEL.replace("groups 1", "groups 4096, 4096"),
        "k.kern",
        &[],
    )
    .unwrap();
}

#[test]
fn deep_and_long_kernel_expressions_are_errors_not_stack_overflows() {
    let chain = vec!["1"; 200_000].join("+");
    for (what, groups) in [
        ("a 200k chain", chain),
        (
            "100k parentheses",
            format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000)),
        ),
        ("100k minus signs", format!("{}1", "-".repeat(100_000))),
    ] {
        let e = kernel_error(&KERNEL.replace("groups 1", &format!("groups {groups}")));
        assert!(
            e.contains("nested more than 256 levels deep"),
            "{what}: {e}"
        );
    }
    // 200 terms still add up.
    let sum = vec!["1"; 200].join(" + ");
    let wl = gpumemsim::frontend::parse(
        &KERNEL.replace("groups 1", &format!("param N = {sum}\ngroups N / 200")),
        "k.kern",
        &[],
    )
    .unwrap();
    assert_eq!(wl.parameters, vec![("N".to_string(), 200)]);
}

#[test]
fn every_reader_names_the_line_and_column_of_a_non_utf8_byte() {
    let t = Temp::new("utf8");
    let kern = t.file(
        "k.kern",
        bytes_replace(KERNEL.as_bytes(), b"kernel k", b"kernel \xffk"),
    );
    let e = gpumemsim(&["run", &kern]);
    assert_eq!(e.status.code(), Some(1));
    assert!(
        stderr(&e).contains("k.kern:4:8: not UTF-8 text: byte 0xff"),
        "{}",
        stderr(&e)
    );

    let cfg = t.file("c.toml", b"name = \"x\"\n[sm]\ncount = 1\xfe\n");
    let e = config::load(Some(Path::new(&cfg)), &[])
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("c.toml:3:10: not UTF-8 text: byte 0xfe starts no valid UTF-8 character (save the file as UTF-8)"), "{e}");

    let lit = t.file("t.litmus", b"PTX T\n{ x=0; }\n P0 \xc3;\n");
    let e = gpumemsim::litmus::load(Path::new(&lit))
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.litmus:3:5: not UTF-8"), "{e}");

    let spec = t.file("s.toml", b"name = \"s\"\n\n  \x80\n");
    let e = gpumemsim::sweep::spec::load(Path::new(&spec))
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.toml:3:3: not UTF-8"), "{e}");

    let m = t.file("m.json", b"{\"schema\": \"\xff\"}");
    let e = gpumemsim::device::schema::Measurement::load(Path::new(&m))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.json:1:13: not a measurement file: not UTF-8"),
        "{e}"
    );

    let trace = std::fs::read_to_string(root().join("fuzz/seeds/trace/tiny.traceg")).unwrap();
    t.file("kernelslist.g", "kernel-1.traceg\n");
    t.file(
        "kernel-1.traceg",
        bytes_replace(trace.as_bytes(), b"IADD3", b"IA\xffDD3"),
    );
    let e = trace_error(&t.0);
    assert!(e.contains("kernel-1.traceg:29:22: not UTF-8"), "{e}");
}

/// `data` with the first `from` replaced by `to`.
fn bytes_replace(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let i = data
        .windows(from.len())
        .position(|w| w == from)
        .expect("the text to replace");
    [&data[..i], to, &data[i + from.len()..]].concat()
}

fn trace_error(dir: &Path) -> String {
    gpumemsim::trace::load(dir).unwrap_err().to_string()
}

#[test]
fn config_values_of_the_wrong_kind_and_support_below_the_minimums_are_refused() {
    let tiny = std::fs::read_to_string(root().join("configs/tiny.toml")).unwrap();
    let dated = tiny.replacen("name = \"tiny test GPU\"", "name = 1979-05-27T07:32:00Z", 1);
    let e = config::parse_str(&dated, "d.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("d.toml:5:8: name = 1979-05-27T07:32:00Z: expected a string"),
        "{e}"
    );
    for (from, to, key, want) in [
        (
            "atomic_scopes = [\"work_item\", \"sub_group\", \"work_group\", \"device\", \"system\"]",
            "atomic_scopes = [\"work_item\", \"sub_group\"]",
            "support.atomic_scopes",
            "must include work_group",
        ),
        (
            "fence_orders = [\"acquire\", \"release\", \"acq_rel\", \"seq_cst\"]",
            "fence_orders = [\"seq_cst\", \"acq_rel\", \"acquire\"]",
            "support.fence_orders",
            "must include release",
        ),
        (
            "fence_orders = [\"acquire\", \"release\", \"acq_rel\", \"seq_cst\"]",
            "fence_orders = [\"relaxed\", \"acquire\", \"release\", \"acq_rel\", \"seq_cst\"]",
            "support.fence_orders",
            "must not list relaxed",
        ),
    ] {
        assert!(tiny.contains(from), "{from}");
        let e = config::parse_str(&tiny.replacen(from, to, 1), "s.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains(want), "{want}: {e}");
        assert!(e.starts_with("s.toml:10"), "names the line: {e}");
    }
}

#[test]
fn traces_with_a_block_twice_or_blocks_too_large_are_errors_at_their_line() {
    let t = Temp::new("trace");
    let trace = std::fs::read_to_string(root().join("fuzz/seeds/trace/tiny.traceg")).unwrap();
    let block = &trace[trace.find("#BEGIN_TB").unwrap()..];
    t.file("kernelslist.g", "kernel-1.traceg\n");
    let dir = t.0.display().to_string();
    t.file(
        "kernel-1.traceg",
        trace.replace("-grid dim = (1,1,1)", "-grid dim = (2,1,1)") + "\n" + block,
    );
    let e = trace_error(&t.0);
    assert!(
        e.ends_with("kernel-1.traceg:41: thread block 0,0,0 appears twice (first at line 20)"),
        "{e}"
    );
    // Overflowed a multiplication (a panic) before.
    t.file(
        "kernel-1.traceg",
        trace.replace("-block dim = (32,1,1)", "-block dim = (65536,65536,1)"),
    );
    let e = trace_error(&t.0);
    assert!(
        e.contains("kernel-1.traceg:4: `-block dim`") && e.contains("at most 65536"),
        "{e}"
    );
    t.file(
        "kernel-1.traceg",
        trace.replace(
            "-grid dim = (1,1,1)",
            "-grid dim = (4294967295,4294967295,4294967295)",
        ),
    );
    assert!(trace_error(&t.0).contains("kernel-1.traceg:3: `-grid dim`"));
    // Too large for this config: the run names the `-block dim` line.
    t.file(
        "kernel-1.traceg",
        trace.replace("-block dim = (32,1,1)", "-block dim = (4096,1,1)"),
    );
    let out = gpumemsim(&["run", &dir, "--config", "configs/tiny.toml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("kernel-1.traceg:4: -block dim = (4096,1,1), -shmem = 0: a work-group of 4096 work-items"), "{}", stderr(&out));
}

#[test]
fn trace_addresses_that_leave_64_bits_and_repeated_launch_keys_are_refused_at_their_line() {
    let t = Temp::new("trace-wrap");
    let trace = std::fs::read_to_string(root().join("fuzz/seeds/trace/tiny.traceg")).unwrap();
    t.file("kernelslist.g", "kernel-1.traceg\n");
    let load = "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f0000000000 4";
    for (line, says) in [
        // Stride 1 over 32 lanes from 2^64 - 8: the last lane wrapped past 2^64.
        (
            "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0xfffffffffffffff8 4",
            "outside 0 ..= 2^64 - 1",
        ),
        (
            "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x10 -4",
            "reaches -0x6c, outside 0 ..= 2^64 - 1",
        ),
        // Deltas below 0.
        (
            "0040 00000003 1 R4 LDG.E 1 R2 4 2 0x4 -8",
            "address 0x4 plus delta -8 is outside 0 ..= 2^64 - 1",
        ),
    ] {
        t.file("kernel-1.traceg", trace.replace(load, line));
        // Blocks are decoded when dispatched: the run names the line.
        let o = gpumemsim(&[
            "run",
            t.0.to_str().unwrap(),
            "--config",
            "configs/tiny.toml",
        ]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{line}: {e}");
        assert!(
            e.contains("kernel-1.traceg:28:") && e.contains(says),
            "{line}: {e}"
        );
    }
    // A second `-grid dim` was reported as a truncated trace.
    t.file(
        "kernel-1.traceg",
        trace.replace(
            "-grid dim = (1,1,1)",
            "-grid dim = (1,1,1)\n-grid dim = (2,1,1)",
        ),
    );
    let e = trace_error(&t.0);
    assert!(
        e.contains("kernel-1.traceg:4: `-grid dim` appears twice (first at line 3)"),
        "{e}"
    );
}

#[test]
fn sweep_chart_errors_name_the_spec_and_the_chart_key_before_any_point_runs() {
    let t = Temp::new("sweep");
    let kern = root()
        .join("workloads/contention.kern")
        .display()
        .to_string();
    let tiny = root().join("configs/tiny.toml").display().to_string();
    let spec = |y: &str| {
        format!(
            "config = {tiny:?}\n[[workload]]\nkernel = {kern:?}\nparams = {{ T = [32, 64], G = 32 }}\n\
             [[chart]]\nname = \"cyc\"\nx = \"T\"\ny = {y:?}\n"
        )
    };
    let deep = format!("{}T{}", "(".repeat(20_000), ")".repeat(20_000));
    for (y, want) in [
        (deep.as_str(), "chart[0] (\"cyc\"): y = "),
        (
            "kernel.cyclez / T",
            "chart \"cyc\": y = \"kernel.cyclez / T\": no statistic is called `kernel.cyclez`",
        ),
    ] {
        let path = t.file("s.toml", spec(y));
        let out = gpumemsim(&["sweep", &path]);
        assert_eq!(out.status.code(), Some(1));
        let e = stderr(&out);
        assert!(
            e.contains(&format!("{path}: ")) && e.contains(want),
            "{want}: {e}"
        );
        assert!(!t.0.join("s/points").exists(), "no point ran");
    }
    // Sizes: a cross product past the bound is refused before it is made.
    let seeds: Vec<String> = (0..3000).map(|s| s.to_string()).collect();
    let path = t.file(
        "big.toml",
        format!(
            "config = {tiny:?}\nseeds = [{}]\n[params]\n\"stress.start_skew\" = [{}]\n\
             [[workload]]\nkernel = {kern:?}\nparams = {{ T = [{}] }}\n",
            seeds.join(","),
            seeds[..1000].join(","),
            seeds[1..3].join(",")
        ),
    );
    let e = gpumemsim::sweep::spec::load(Path::new(&path))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the sweep reaches 6000000 points") && e.contains("at most 131072"),
        "{e}"
    );
}

#[test]
fn flag_errors_exit_2_and_input_errors_exit_1() {
    for args in [
        &["litmus", "workloads/litmus/ptx", "--iterations", "0"][..],
        &["litmus", "workloads/litmus/ptx", "--instances", "0"],
        &["run", "workloads/contention.kern", "--param", "T"],
        &["run", "workloads/contention.kern", "--set", "l2.slices"],
        &[
            "compare",
            "--measured",
            "m.json",
            "--litmus-iterations",
            "-1",
        ],
        &["bench", "--repeat", "0"],
        &["run", "workloads/contention.kern", "--seed", "-1"],
        &["litmus", "workloads/litmus/ptx", "--seed", "-1"],
        &["sweep", "reports/l2-slices.toml", "--shard", "3/x"],
        &["run"],
        &["run", "--no-such-flag", "x"],
    ] {
        let out = gpumemsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    // The form is right; the workload or config refuses the value: an input error.
    for args in [
        &["run", "workloads/contention.kern", "--param", "NOPE=1"][..],
        &["run", "workloads/contention.kern", "--set", "l2.slices=0"],
        &["run", "no/such/file.kern"],
    ] {
        let out = gpumemsim(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    }
    // The messages say what is wrong with the value (clap's tip "use `-- -1`" was wrong here).
    let e = stderr(&gpumemsim(&[
        "run",
        "workloads/contention.kern",
        "--seed",
        "-1",
    ]));
    assert!(
        e.contains("a seed is an integer 0 ..= 18446744073709551615 (not negative)")
            && !e.contains("-- -1"),
        "{e}"
    );
    let e = stderr(&gpumemsim(&[
        "run",
        "workloads/contention.kern",
        "--param",
        "T=99999999999999999999",
    ]));
    assert!(
        e.contains("99999999999999999999 does not fit in 64 bits"),
        "{e}"
    );
    let e = stderr(&gpumemsim(&[
        "run",
        "workloads/contention.kern",
        "--param",
        "T=12x",
    ]));
    assert!(e.contains("expected NAME=INTEGER"), "{e}");
}

#[test]
fn two_outputs_on_one_path_or_an_unwritable_one_stop_the_run_before_it_starts() {
    let t = Temp::new("outputs");
    let json = t.0.join("run.json").display().to_string();
    let same = t.0.join(".").join("run.json").display().to_string();
    let tiny = ["--config", "configs/tiny.toml", "--param", "T=64"];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "workloads/contention.kern"];
        a.extend_from_slice(&tiny);
        a.extend_from_slice(extra);
        gpumemsim(&a)
    };
    for (extra, says) in [
        (
            vec!["--json", json.as_str(), "--timeline", same.as_str()],
            "--json writes the same file",
        ),
        (
            vec!["--csv", json.as_str(), "--json", json.as_str()],
            "run.json: --json writes the same file",
        ),
        (
            vec![
                "--json",
                json.as_str(),
                "--timeline",
                "/no/such/folder/t.json",
            ],
            "--timeline /no/such/folder/t.json: the folder /no/such/folder does not exist",
        ),
        (
            vec!["--json", json.as_str(), "--csv", t.0.to_str().unwrap()],
            "is a folder",
        ),
    ] {
        let o = run(&extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
        assert!(
            !t.0.join("run.json").exists(),
            "{extra:?}: nothing written before the check"
        );
    }
    let o = gpumemsim(&[
        "model",
        "workloads/litmus/ptx/2p2w_rel.litmus",
        "--out",
        "/no/such/m.json",
    ]);
    assert!(
        o.status.code() == Some(1) && stderr(&o).contains("--out /no/such/m.json"),
        "{}",
        stderr(&o)
    );
    // The old name still works.
    let m = t.0.join("m.json").display().to_string();
    let o = gpumemsim(&[
        "model",
        "workloads/litmus/ptx/2p2w_rel.litmus",
        "--json",
        &m,
    ]);
    assert!(
        o.status.success() && Path::new(&m).is_file(),
        "{}",
        stderr(&o)
    );
}

#[test]
fn measurement_files_naming_missing_cases_or_threads_or_holding_nothing_are_refused() {
    use gpumemsim::device::schema::Measurement;
    let path = root().join("reports/measured/llvmpipe-2026-11-22.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let parse = |v: &serde_json::Value| {
        Measurement::parse(&v.to_string(), "m.json")
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    parse(&v).unwrap();
    if let Some(d) = v["derived"].as_array_mut().and_then(|d| d.first_mut()) {
        let mut bad = d.clone();
        bad["cases"][0] = "no such case".into();
        let mut w = v.clone();
        w["derived"][0] = bad;
        let e = parse(&w).unwrap_err();
        assert!(
            e.contains("case `no such case` is not one of `benchmarks`"),
            "{e}"
        );
        let mut w = v.clone();
        w["derived"][0]["cases"] = serde_json::json!([]);
        assert!(parse(&w)
            .unwrap_err()
            .contains("a slope over 0 cases: at least 2"));
    }
    if let Some(o) = v["litmus"][0]["outcomes"][0]["outcome"].as_str() {
        let mut w = v.clone();
        w["litmus"][0]["outcomes"][0]["outcome"] = format!("P9:r0=1; {o}").into();
        let e = parse(&w).unwrap_err();
        assert!(e.contains("names thread P9, but the test has"), "{e}");
    }
    v["benchmarks"] = serde_json::json!([]);
    v["litmus"] = serde_json::json!([]);
    v["derived"] = serde_json::json!([]);
    let e = parse(&v).unwrap_err();
    assert!(e.contains("the file holds nothing to compare"), "{e}");
}

#[test]
fn measurements_with_bad_timings_are_refused_and_unparsable_kernels_left_out_on_the_terminal() {
    use gpumemsim::device::schema::{text_hash, Measurement};
    let path = root().join("reports/measured/llvmpipe-2026-11-22.json");
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // The error a measurement file with `v` as its text is refused with.
    let refused = |v: &serde_json::Value, file: &str| {
        Measurement::parse(&v.to_string(), file)
            .unwrap_err()
            .to_string()
    };
    let mut neg = good.clone();
    neg["benchmarks"][1]["timing"]["min_ns"] = serde_json::json!(-5.0);
    let e = refused(&neg, "m.json");
    assert!(
        e.contains("benchmarks[1]") && e.contains("min_ns = -5"),
        "{e}"
    );
    let mut neg = good.clone();
    neg["overhead_ns"] = serde_json::json!(-1.0);
    let e = refused(&neg, "m.json");
    assert!(e.contains("overhead_ns = -1"), "{e}");
    // The clock probe's times (`compare` divides by the reference): the H100 campaign's file has them.
    let h100 = root().join("reports/measured/nvidia-h100-80gb-hbm3-2026-11-27/measured.json");
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&h100).unwrap()).unwrap();
    Measurement::parse(&h.to_string(), "h.json").unwrap();
    let mut bad = h.clone();
    bad["benchmarks"][1]["clock"]["after_ns"] = serde_json::json!(-1.0);
    let e = refused(&bad, "h.json");
    assert!(
        e.contains("benchmarks[1]")
            && e.contains("clock.after_ns = -1: must be a finite number > 0"),
        "{e}"
    );
    let mut bad = h.clone();
    bad["clock"]["reference_ns"] = serde_json::json!(0.0);
    let e = refused(&bad, "h.json");
    assert!(e.contains("clock.reference_ns = 0"), "{e}");

    // A kernel text that no longer parses: compare leaves its cases out and says so on stderr.
    let mut m: Measurement = Measurement::parse(&good.to_string(), "m.json").unwrap();
    let broken = m.benchmarks[1].kernel.clone();
    m.benchmarks
        .retain(|b| b.kernel == broken || b.group == "overhead");
    m.derived.clear();
    m.litmus.clear();
    let text = format!("{}\nbogus line here\n", m.kernels[&broken]);
    for b in m.benchmarks.iter_mut().filter(|b| b.kernel == broken) {
        b.kernel_hash = text_hash(&text);
    }
    m.kernels.insert(broken.clone(), text);
    let t = Temp::new("compare");
    let file = t.file("m.json", m.to_json());
    let out = gpumemsim(&[
        "compare",
        "--measured",
        &file,
        "--config",
        "configs/tiny.toml",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let e = stderr(&out);
    let left: Vec<&str> = e.lines().filter(|l| l.starts_with("left out: ")).collect();
    let cases = m.benchmarks.iter().filter(|b| b.kernel == broken).count();
    assert!(cases > 0);
    assert_eq!(left.len(), cases, "{e}");
    assert!(
        left.iter().all(|l| l.contains(&format!("{broken}:"))),
        "{e}"
    );
}

#[test]
fn c_kernels_charts_and_config_bases_are_read_and_sized_like_every_input() {
    let t = Temp::new("cfront");
    // A `.cu` that is an endless device read `/dev/zero`: aborted on the allocation (the C front
    // end read its files without the bound of every other reader).
    #[cfg(unix)]
    {
        let zero = t.0.join("zero.cu");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = gpumemsim(&["run", &zero.display().to_string()]);
        assert_eq!(e.status.code(), Some(1), "{}", stderr(&e));
        assert!(
            stderr(&e).contains("zero.cu: cannot read: more than"),
            "{}",
            stderr(&e)
        );
    }
    // A NUL byte is named by its code point, not printed raw.
    let nul = t.file(
        "nul.cl",
        "__kernel void k(__global int *d) {\0 d[0] = 1; }\n",
    );
    let e = gpumemsim(&["run", &nul]);
    assert_eq!(e.status.code(), Some(1));
    assert!(
        stderr(&e).contains("nul.cl:1:35: unexpected character U+0000"),
        "{}",
        stderr(&e)
    );
    // `plot --kind intervals` took any canvas size: 100,000 x 100,000 aborted on the bitmap.
    let csv = t.file(
        "i.csv",
        "cycle,location,metric,value,unit\n100,gpu,ipc,1.5,instructions/cycle\n",
    );
    let png = t.0.join("i.png").display().to_string();
    let e = gpumemsim(&[
        "plot",
        "--kind",
        "intervals",
        &csv,
        "--width",
        "100000",
        "--height",
        "100000",
        "-o",
        &png,
    ]);
    assert_eq!(e.status.code(), Some(1), "{}", stderr(&e));
    assert!(
        stderr(&e).contains("size 100000x100000 is too large"),
        "{}",
        stderr(&e)
    );
    assert!(!Path::new(&png).exists());
    // A folder of litmus tests with a symbolic link back up: each test once, not once per level.
    #[cfg(unix)]
    {
        let sub = t.0.join("suite/sub");
        std::fs::create_dir_all(&sub).unwrap();
        let test = root().join("workloads/litmus/opencl/2p2w_relaxed_dev.litmus");
        std::fs::copy(test, sub.join("t.litmus")).unwrap();
        std::os::unix::fs::symlink("..", sub.join("up")).unwrap();
        let found = gpumemsim::litmus::collect(&[t.0.join("suite")]).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
    }
    // A config's base file is read like the config: a bad byte named at its line and column.
    t.file("base.toml", b"name = \"b\"\n\xff\n");
    let child = t.file("child.toml", "base = \"./base.toml\"\n");
    let e = config::load(Some(Path::new(&child)), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("base.toml:2:1: not UTF-8 text: byte 0xff"),
        "{e}"
    );
}

/// Runs gpumemsim with its stdout a pipe whose reading end is already closed (the state `| head`
/// leaves once it has its lines), so that the first write meets `EPIPE` whatever the timing.
fn with_closed_stdout(args: &[&str]) -> Output {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `pipe` fills two fresh descriptors; the reading one is closed at once and the writing
    // one is owned by the `File` handed to the child.
    let write = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0, "pipe");
        libc::close(fds[0]);
        std::fs::File::from_raw_fd(fds[1])
    };
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(args)
        .current_dir(root())
        .stdout(std::process::Stdio::from(write))
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("the gpumemsim binary runs")
}

#[test]
fn a_closed_stdout_ends_every_kind_of_command_quietly() {
    // Panicked with "failed printing to stdout: Broken pipe" (exit 101).
    let t = Temp::new("epipe");
    let spec = t.file(
        "s.toml",
        format!(
            "name = \"s\"\nconfig = {:?}\nseeds = [1]\n[[workload]]\nname = \"c\"\nkernel = {:?}\n\
             params = {{ T = 64 }}\n",
            root().join("configs/tiny.toml"),
            root().join("workloads/contention.kern")
        ),
    );
    let dir = t.0.join("s").display().to_string();
    let planned = gpumemsim(&["sweep", "plan", &spec, "--out", &dir]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let commands: [&[&str]; 8] = [
        &["config", "doc"],
        &["gpu", "emit", "workloads/contention.kern"],
        &[
            "run",
            "workloads/contention.kern",
            "--config",
            "configs/tiny.toml",
            "--param",
            "T=64",
            "--json",
            "/dev/stdout",
        ],
        &["config", "show"],
        &["model", "workloads/litmus/ptx", "--brief"],
        &[
            "litmus",
            "workloads/litmus/ptx/2p2w_rel.litmus",
            "--brief",
            "--iterations",
            "20",
        ],
        &["sweep", "status", &dir, "--json"],
        &[
            "run",
            "workloads/contention.kern",
            "--config",
            "configs/tiny.toml",
            "--param",
            "T=64",
        ],
    ];
    for args in commands {
        let o = with_closed_stdout(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}

/// Nothing outside the tests prints with `print!`/`println!`/`eprint!`/`eprintln!`: they panic on a
/// closed stream ("failed printing to stderr", exit 101) where the CLI's `out!`/`errln!` (and the
/// library's own writers) end quietly. A progress line on stderr piped into `head` panicked so.
#[test]
fn no_printing_macro_outside_the_tests_can_panic_on_a_closed_stream() {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "tests" {
                    walk(&p, found);
                }
                continue;
            }
            if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // The file's own test module, and what follows it, is test code.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (i, l) in code.lines().enumerate() {
                let l = l.trim_start();
                if l.starts_with("//") {
                    continue;
                }
                for m in ["println!(", "print!(", "eprintln!(", "eprint!("] {
                    let bare = l.match_indices(m).any(|(at, _)| {
                        !l[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                    });
                    if bare {
                        found.push(format!("{}:{}: {l}", p.display(), i + 1));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(&root().join("sim"), &mut found);
    assert!(found.is_empty(), "{found:#?}");
}

/// `--json /dev/stdout` writes the JSON to standard output and leaves `/dev/stdout` as it was: the
/// atomic write renamed a temporary file over it (as root: the device link replaced by a file; as
/// a user: refused, since `/dev` is not writable).
#[test]
fn an_output_that_is_a_device_is_written_in_place() {
    let before = std::fs::symlink_metadata("/dev/stdout").map(|m| m.file_type());
    let o = gpumemsim(&[
        "run",
        "workloads/contention.kern",
        "--config",
        "configs/tiny.toml",
        "--param",
        "T=64",
        "--json",
        "/dev/stdout",
        "--csv",
        "/dev/null",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"schema\""), "{out}");
    let after = std::fs::symlink_metadata("/dev/stdout").map(|m| m.file_type());
    assert_eq!(format!("{before:?}"), format!("{after:?}"));
    assert!(std::fs::metadata("/dev/null").is_ok_and(|m| !m.is_file()));
}

/// `--json /dev/stdout` with standard output redirected to a file: the summary and the JSON both
/// land in that file (a rename through `/dev/stdout` replaced the file the shell had opened, so the
/// summary went to an unlinked inode).
#[test]
fn an_output_to_dev_stdout_redirected_to_a_file_keeps_both() {
    let t = Temp::new("stdout-file");
    let file = t.0.join("out.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args([
            "run",
            "workloads/contention.kern",
            "--config",
            "configs/tiny.toml",
            "--param",
            "T=64",
            "--json",
            "/dev/stdout",
        ])
        .current_dir(root())
        .stdout(std::fs::File::create(&file).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("\"schema\"") && text.contains("cycles"),
        "{text}"
    );
}
