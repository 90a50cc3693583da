//! `gpumemsim config check|show|doc` as a user runs them: exit status, where messages go, and that a
//! bad file is an error naming file, line and column (never a panic).

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpumemsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpumemsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the gpumemsim binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A config file in a fresh temporary folder, removed on drop.
struct TempConfig(PathBuf);

impl TempConfig {
    fn new(name: &str, contents: &str) -> TempConfig {
        let dir = std::env::temp_dir().join(format!(
            "gpumemsim-config-cli-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        TempConfig(path)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

#[test]
fn config_check_accepts_every_preset() {
    let files = [
        "configs/h100.toml",
        "configs/a100.toml",
        "configs/v100.toml",
        "configs/tiny.toml",
    ];
    let mut args = vec!["config", "check"];
    args.extend(files);
    let out = gpumemsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for f in files {
        assert!(stdout.contains(&format!("{f}: ok\n")), "{stdout}");
    }
}

#[test]
fn config_check_reports_each_bad_file_with_its_position_and_exits_1() {
    let tiny = include_str!("../../configs/tiny.toml");
    let zero_ways = TempConfig::new("zero.toml", &tiny.replace("ways = 8", "ways = 0"));
    let line = tiny.lines().position(|l| l == "ways = 8").unwrap() + 1;
    let syntax = TempConfig::new("syntax.toml", &format!("{tiny}\n[l2\n"));
    let out = gpumemsim(&[
        "config",
        "check",
        "configs/tiny.toml",
        zero_ways.path(),
        syntax.path(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("configs/tiny.toml: ok"),
        "the good file is still checked"
    );
    assert!(
        stderr.contains(&format!(
            "{}:{line}:8: l2.ways = 0: must be at least 1",
            zero_ways.path()
        )),
        "{stderr}"
    );
    let syntax_line = tiny.lines().count() + 2;
    assert!(
        stderr.contains(&format!("{}:{syntax_line}:", syntax.path())),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn config_show_prints_the_resolved_config_with_overrides() {
    let out = gpumemsim(&[
        "config",
        "show",
        "configs/tiny.toml",
        "--set",
        "l2.hash=xor",
        "--set",
        "sm.count=8",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown: toml::Table = toml::from_str(&text(&out.stdout)).expect("show prints TOML");
    assert_eq!(shown["l2"]["hash"].as_str(), Some("xor"));
    assert_eq!(shown["sm"]["count"].as_integer(), Some(8));
    // Without a file: the embedded H100 default.
    let out = gpumemsim(&["config", "show"]);
    assert!(text(&out.stdout).contains("name = \"NVIDIA H100 SXM5 80GB\""));
}

#[test]
fn config_show_rejects_a_bad_override_naming_it() {
    let out = gpumemsim(&["config", "show", "--set", "l2.slices=3"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: --set l2.slices=3: l2.size_bytes = 52428800: must be"),
        "{stderr}"
    );
    let out = gpumemsim(&["config", "show", "--set", "l2.wayz=4"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown key `l2.wayz`; keys in [l2]:"));
}

#[test]
fn config_doc_lists_every_key() {
    let out = gpumemsim(&["config", "doc", "--markdown"]);
    assert!(out.status.success());
    let md = text(&out.stdout);
    for key in [
        "`name`",
        "`l2.ways`",
        "`dram.controller_latency`",
        "`watchdog.no_progress_cycles`",
    ] {
        assert!(md.contains(&format!("| {key} |")), "{key} missing");
    }
    let out = gpumemsim(&["config", "doc"]);
    assert!(text(&out.stdout).contains("l1.latency = 28 [core cycles]"));
}
