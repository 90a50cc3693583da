//! The command line as documented: `gpu measure` and `gpu compare` under `gpu`, no Vulkan loader
//! noise on stderr, `litmus --brief` columns aligned for long test names.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpumemsim(args: &[&str], env_remove: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpumemsim"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for v in env_remove {
        c.env_remove(v);
    }
    c.output().expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn measure_and_compare_are_gpu_subcommands() {
    let dir = std::env::temp_dir().join(format!("gpumemsim-cli-{}", std::process::id()));
    let out = gpumemsim(
        &[
            "gpu",
            "compare",
            "--measured",
            "reports/measured/llvmpipe-2026-11-22.json",
            "--config",
            "configs/tiny.toml",
            "--litmus-iterations",
            "20",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(PathBuf::from(&dir).join("comparison.json").is_file());
    let _ = std::fs::remove_dir_all(&dir);
    let help = gpumemsim(&["gpu", "measure", "--help"], &[]);
    assert!(help.status.success());
    assert!(text(&help.stdout).contains("--reps"));
    // The top-level spellings still work, hidden from the overview.
    assert!(gpumemsim(&["measure", "--help"], &[]).status.success());
    let overview = text(&gpumemsim(&["--help"], &[]).stdout);
    assert!(overview.contains("gpu measure") && !overview.contains("\n  measure "));
}

#[test]
fn the_vulkan_loader_says_nothing_without_a_runtime_dir() {
    // Whether or not an adapter exists here, the loader's complaint must not reach the user.
    let out = gpumemsim(&["gpu", "list"], &["XDG_RUNTIME_DIR"]);
    let err = text(&out.stderr);
    assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
}

#[test]
fn brief_litmus_columns_line_up_for_long_names() {
    let out = gpumemsim(
        &[
            "litmus",
            "workloads/litmus/ptx/mp_relaxed_gpu.litmus",
            "workloads/litmus/ptx/corr_gpu_then_weak.litmus",
            "--config",
            "configs/tiny.toml",
            "--iterations",
            "50",
            "--brief",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let cols: Vec<usize> = stdout
        .lines()
        .filter(|l| l.contains(" witnesses "))
        .map(|l| l.find(" of ").unwrap())
        .collect();
    assert_eq!(cols.len(), 2, "{stdout}");
    assert_eq!(cols[0], cols[1], "{stdout}");
}

/// `validate` finds its reference sets from any directory (issue 45): run from `/`, it lists them.
#[test]
fn validate_finds_the_reference_sets_from_any_directory() {
    let dir = std::env::temp_dir().join(format!("gpumemsim-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("mine.toml");
    std::fs::write(&cfg, "base = \"nosuch\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(["validate", "--config", cfg.to_str().unwrap()])
        .current_dir("/")
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("based on `nosuch`, which has no reference set in")
            && err.contains("sets: a100, h100, v100"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
