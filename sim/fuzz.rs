//! Fuzzing entry points: every reader of user input, fed arbitrary bytes. Each [`Target`] decodes the
//! bytes as a file would be read ([`crate::text::decode`]) and parses them the way the CLI does; the
//! only requirement is that it returns (an error is fine) without panicking, aborting, overflowing the
//! stack or allocating without bound.
//!
//! Two drivers call [`run`]:
//! - `fuzz/` (cargo-fuzz, libFuzzer, coverage-guided) for long runs: `fuzz/README.md`;
//! - the integration test `fuzz_smoke` (`sim/tests/fuzz.rs`), in CI: the inputs in `fuzz/regressions/`
//!   (every crash found, kept), then seeded mutations of the repository's own inputs for a fixed
//!   number of rounds per target — a few seconds in all.
//!
//! Not fuzzed here: running the machine on what parses (a fuzzed kernel that loops runs until the
//! watchdog's cycle limit, minutes per input); files the tool writes and reads back (a sweep's
//! manifest and points, a Slurm job list: serde JSON of its own making). A new reader gets a
//! [`Target`] variant, a line in [`Target::ALL`] and `fuzz/fuzz_targets/NAME.rs` (a copy of
//! `kernel.rs` with the name changed), and seeds under `fuzz/seeds/NAME/` or in [`Target::seed_dirs`].

use std::path::Path;

/// One reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Hardware config TOML (`config::parse_str`).
    Config,
    /// Kernel language (`kernel::parse`: lexer, syntax, lowering), then the load-time checks against
    /// the tiny config (`machine::prepare`).
    Kernel,
    /// CUDA kernels (`kernel::parse` of a `.cu` file: the C front end, `cfront`), then the load-time
    /// checks against the tiny config.
    Cuda,
    /// OpenCL C kernels (`frontend::parse` of a `.cl` file), then the load-time checks.
    OpenCl,
    /// PTX (`frontend::parse` of a `.ptx` file: the PTX front end, `ptx`), then the load-time checks.
    Ptx,
    /// Litmus tests, both dialects (`litmus::parse`, then the oracle, `litmus::model::decide`), and
    /// `--expect` files (`litmus::parse_expectations`).
    Litmus,
    /// One Accel-Sim kernel trace (`trace::parse_kernel`).
    Trace,
    /// Sweep specs (`sweep::spec::parse`, files resolved in an empty folder) and chart expressions.
    SweepSpec,
    /// Measurement files (`device::schema::Measurement::parse`), measurement suites, and the JSON or
    /// JSON-lines files of the CUDA backend that a measured reference set reads its values from
    /// (`validate::json_objects`).
    Measurement,
    /// Reference sets of `gpumemsim validate` (`validate::parse`).
    Reference,
    /// Flag values, one per line: `--set KEY=VALUE` (applied to the tiny preset), `--param`,
    /// `--timeline-window`, `--shard`, `plot --where`; and the whole input as the CSV of
    /// `plot --kind intervals`.
    CliValues,
    /// What the NVRTC path reads besides the PTX front end (`ptx::nvrtc`): NVRTC's error log (its
    /// first `FILE(LINE): error`), the PTX's `.loc` lines that map diagnostics back to `.cu` places,
    /// and a `.cu` file's `/* gpumemsim ... */` header, `__global__` signatures and prepared source.
    /// No compiler runs.
    /// (Last, so that the other targets keep their mutation streams.)
    Nvrtc,
}

impl Target {
    pub const ALL: [Target; 12] = [
        Target::Config,
        Target::Kernel,
        Target::Cuda,
        Target::OpenCl,
        Target::Ptx,
        Target::Nvrtc,
        Target::Litmus,
        Target::Trace,
        Target::SweepSpec,
        Target::Measurement,
        Target::Reference,
        Target::CliValues,
    ];

    /// The name of its cargo-fuzz target and of its folder in `fuzz/regressions/`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Config => "config",
            Target::Kernel => "kernel",
            Target::Cuda => "cuda",
            Target::OpenCl => "opencl",
            Target::Ptx => "ptx",
            Target::Nvrtc => "nvrtc",
            Target::Litmus => "litmus",
            Target::Trace => "trace",
            Target::SweepSpec => "sweep_spec",
            Target::Measurement => "measurement",
            Target::Reference => "reference",
            Target::CliValues => "cli_values",
        }
    }

    /// Repository folders (relative to its root) whose files of these extensions seed the target.
    pub fn seed_dirs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Target::Config => &[("configs", "toml")],
            Target::Kernel => &[
                ("workloads", "kern"),
                ("workloads/measure", "kern"),
                ("reports/kernels", "kern"),
            ],
            Target::Cuda => &[("workloads/chapters", "cu"), ("fuzz/seeds/cuda", "cu")],
            Target::OpenCl => &[("workloads/chapters", "cl"), ("fuzz/seeds/opencl", "cl")],
            Target::Ptx => &[("workloads/ptx", "ptx")],
            Target::Nvrtc => &[
                ("workloads/chapters", "cu"),
                ("workloads/quickstart", "cu"),
                ("fuzz/seeds/nvrtc", "txt"),
                ("fuzz/seeds/nvrtc", "ptx"),
            ],
            Target::Litmus => &[
                ("workloads/litmus/ptx", "litmus"),
                ("workloads/litmus/opencl", "litmus"),
                ("workloads/litmus/chapter", "litmus"),
                ("workloads/litmus-needs", "litmus"),
                ("fuzz/seeds/litmus", "litmus"),
                ("fuzz/seeds/litmus", "expect"),
            ],
            Target::Trace => &[("fuzz/seeds/trace", "traceg")],
            Target::SweepSpec => &[("reports", "toml")],
            Target::Measurement => &[
                ("reports/measured", "json"),
                (
                    "reports/measured/nvidia-h100-80gb-hbm3-2026-11-27/cuda",
                    "jsonl",
                ),
                ("workloads/measure", "toml"),
            ],
            Target::Reference => &[("reports/reference", "toml")],
            Target::CliValues => &[("fuzz/seeds/cli_values", "txt")],
        }
    }
}

/// Feeds `data` to `target`'s reader. Returns whether it was accepted (for statistics); never panics
/// on any input unless the reader has a bug.
pub fn run(target: Target, data: &[u8]) -> bool {
    let Ok(text) = crate::text::decode(data.to_vec(), "fuzz") else {
        return false;
    };
    match target {
        Target::Config => crate::config::parse_str(&text, "fuzz.toml", &[]).is_ok(),
        Target::Kernel => workload(&text, "fuzz.kern"),
        Target::Cuda => workload(&text, "fuzz.cu"),
        Target::OpenCl => workload(&text, "fuzz.cl"),
        Target::Ptx => workload(&text, "fuzz.ptx"),
        Target::Nvrtc => nvrtc(&text),
        Target::Litmus => {
            // A test that parses goes to the oracle too (every `litmus` run asks it), with small
            // bounds so that each input stays quick.
            let test = crate::litmus::parse(&text, "fuzz.litmus").inspect(|t| {
                let small = crate::litmus::model::ModelOptions {
                    unroll: 2,
                    max_candidates: 20_000,
                    max_orders: 20_000,
                    ..Default::default()
                };
                let _ = crate::litmus::model::decide(t, &small);
            });
            let expect = crate::litmus::parse_expectations(&text, "fuzz.expect").is_ok();
            test.is_ok() || expect
        }
        Target::Trace => crate::trace::parse_kernel(&text, Path::new("fuzz.traceg")).is_ok(),
        Target::SweepSpec => {
            // Relative paths resolve in a folder that holds nothing.
            let dir = Path::new("/nonexistent-gpumemsim-fuzz");
            let spec = crate::sweep::spec::parse(&text, "fuzz.toml", dir, "fuzz").is_ok();
            let expr = crate::sweep::expr::Expr::parse(&text)
                .map(|e| e.eval(&|c: &str| Some(c.len() as f64)))
                .is_ok();
            spec || expr
        }
        Target::Measurement => {
            let m = crate::device::schema::Measurement::parse(&text, "fuzz.json").is_ok();
            let dir = Path::new("/nonexistent-gpumemsim-fuzz");
            let s = crate::device::suite::Suite::parse(&text, "fuzz.toml", dir)
                .map(|s| s.cases().len())
                .is_ok();
            let j = crate::validate::json_objects(&text).is_ok();
            m || s || j
        }
        Target::Reference => crate::validate::parse(&text, Path::new("fuzz.toml")).is_ok(),
        Target::CliValues => cli_values(&text),
    }
}

/// A workload file named `file` (its extension picks the front end), lowered and checked against
/// the tiny config as `gpumemsim run` does before it simulates.
fn workload(text: &str, file: &str) -> bool {
    match crate::frontend::parse(text, file, &[]) {
        Ok(wl) => match tiny() {
            Some((cfg, _)) => crate::machine::prepare::prepare(cfg, &wl).is_ok(),
            None => true,
        },
        Err(_) => false,
    }
}

/// `text` as each thing the NVRTC path reads: a compile log, the PTX NVRTC made (its `.loc` lines),
/// and the `.cu` file (header, parameters, signatures, the source handed to NVRTC).
fn nvrtc(text: &str) -> bool {
    use crate::ptx::nvrtc;
    let logged = nvrtc::log_error(text).is_some();
    let placed = nvrtc::cu_places(text).iter().any(Option::is_some);
    let blocks = nvrtc::header_blocks(text);
    let signed = !nvrtc::signatures(text).is_empty();
    let header = nvrtc::header_parameters(text, "fuzz.cu", &blocks, &[])
        .map(|p| nvrtc::prepare(text, "fuzz.cu", &p))
        .is_ok();
    logged || placed || signed || header
}

/// Each of the first lines of `text` as the value of every flag that parses one (the first few
/// `KEY=VALUE` lines also as `--set`, each a whole config resolution), and the whole text as an
/// intervals CSV.
fn cli_values(text: &str) -> bool {
    let mut accepted = false;
    let mut sets = 0;
    for line in text.lines().take(64) {
        accepted |= crate::machine::timeline::parse_window(line).is_ok();
        accepted |= crate::runner::parse_param(line).is_ok();
        accepted |= line.parse::<crate::sweep::shard::ShardArg>().is_ok();
        if let Some((_, v)) = line.split_once('=') {
            let _ = crate::sweep::plan::Value::parse_cli(v.trim());
            if let Some((_, (name, toml))) = tiny().filter(|_| sets < 8) {
                sets += 1;
                accepted |= crate::config::parse_str(toml, name, &[line.to_string()]).is_ok();
            }
        }
    }
    let ys = ["gpu.ipc".to_string(), "l2.atomics".to_string()];
    accepted | crate::report::intervals::chart(text, "fuzz.csv", &ys, None).is_ok()
}
/// The tiny preset, parsed once, with its file name and text.
type Preset = (&'static str, &'static str);
fn tiny() -> Option<(&'static crate::config::GpuConfig, Preset)> {
    static TINY: std::sync::OnceLock<Option<(crate::config::GpuConfig, Preset)>> =
        std::sync::OnceLock::new();
    TINY.get_or_init(|| {
        let &(name, toml) = crate::config::PRESETS
            .iter()
            .find(|(name, _)| name.ends_with("tiny.toml"))?;
        let cfg = crate::config::parse_str(toml, name, &[]).ok()?;
        Some((cfg, (name, toml)))
    })
    .as_ref()
    .map(|(cfg, p)| (cfg, *p))
}

/// Tokens that nest or chain in some reader, repeated by [`mutate`] to reach depth limits.
const DEEP: &[&str] = &[
    "(", "[", "{", "-", "~", "!", "+1", "*2", " /\\ x=1", " && 1", "a=[", "{a=",
];
/// Numbers at the edges of what readers accept.
const EDGES: &[&str] = &[
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "65536",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "nan",
    "1979-05-27T07:32:00Z",
];

/// One mutation of `input` (or a splice with `other`), chosen by `rng`: a byte changed, bytes
/// inserted or deleted, a range repeated, a nesting token repeated hundreds to thousands of times, a
/// number replaced by an edge value, a splice, a truncation.
pub fn mutate(input: &[u8], other: &[u8], rng: &mut crate::rng::SplitMix64) -> Vec<u8> {
    let mut v = input.to_vec();
    let at = |rng: &mut crate::rng::SplitMix64, len: usize| rng.below(len as u64 + 1) as usize;
    match rng.below(8) {
        0 if !v.is_empty() => {
            let i = at(rng, v.len() - 1);
            v[i] = rng.next_u64() as u8;
        }
        1 => {
            let i = at(rng, v.len());
            let n = 1 + rng.below(8) as usize;
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            v.splice(i..i, bytes);
        }
        2 if !v.is_empty() => {
            let i = at(rng, v.len() - 1);
            let n = (1 + rng.below(64) as usize).min(v.len() - i);
            v.drain(i..i + n);
        }
        3 if !v.is_empty() => {
            let i = at(rng, v.len() - 1);
            let n = (1 + rng.below(32) as usize).min(v.len() - i);
            let piece = v[i..i + n].to_vec();
            let times = 1 + rng.below(200) as usize;
            v.splice(i..i, piece.repeat(times));
        }
        4 => {
            let tok = DEEP[rng.below(DEEP.len() as u64) as usize];
            let times = 100 + rng.below(20_000) as usize;
            let i = at(rng, v.len());
            v.splice(i..i, tok.repeat(times).into_bytes());
        }
        5 => {
            // The next run of digits becomes an edge value.
            let start = at(rng, v.len());
            if let Some(d) = v[start..].iter().position(u8::is_ascii_digit) {
                let i = start + d;
                let n = v[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                let edge = EDGES[rng.below(EDGES.len() as u64) as usize];
                v.splice(i..i + n, edge.bytes());
            }
        }
        6 => {
            let i = at(rng, v.len());
            let j = at(rng, other.len());
            v.truncate(i);
            v.extend_from_slice(&other[j..]);
        }
        _ => {
            let i = at(rng, v.len());
            v.truncate(i);
        }
    }
    v
}
