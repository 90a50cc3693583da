//! Config tests: errors name the file position or the override, every key's required/optional status,
//! the presets' round trip (each preset's modelled path latencies are the machine's tests:
//! `gpumemsim-machine`'s `preset_latency_tests.rs`).

use super::*;

const TINY: &str = include_str!("../../../configs/tiny.toml");

fn err(text: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match parse_str(text, "x.toml", &o) {
        Ok(_) => panic!("accepted: {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

/// 1-based line of the first line of `text` that starts with `prefix` after the header `[table]`.
fn line_of(text: &str, table: &str, prefix: &str) -> usize {
    let mut in_table = table.is_empty();
    for (i, l) in text.lines().enumerate() {
        if l.starts_with('[') {
            in_table = l.trim() == format!("[{table}]");
        } else if in_table && l.starts_with(prefix) {
            return i + 1;
        }
    }
    panic!("{prefix} not in [{table}]");
}

fn replace_in(text: &str, table: &str, from: &str, to: &str) -> String {
    let n = line_of(text, table, from);
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                to.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let t = format!("{TINY}\n[l3\nways = 4\n");
    let e = err(&t, &[]);
    let line = TINY.lines().count() + 2;
    assert!(e.starts_with(&format!("x.toml:{line}:")), "{e}");
}

#[test]
fn unknown_keys_name_their_path_position_and_the_allowed_keys() {
    let t = replace_in(TINY, "l2", "ways", "wayz = 8");
    let e = err(&t, &[]);
    let line = line_of(TINY, "l2", "ways");
    assert_eq!(
        e,
        format!(
            "x.toml:{line}:1: unknown key `l2.wayz`; keys in [l2]: slices, hash, size_bytes, line_bytes, ways, latency, mshrs, partitions, far_latency, far_bytes_per_cycle, near_copy_lines, input_depth, write_validate, membar_ack"
        )
    );
    let e = err(&format!("{TINY}\n[l3]\nways = 4\n"), &[]);
    assert!(
        e.contains("unknown key `l3`") && e.contains("top-level keys: name, clocks"),
        "{e}"
    );
    let e = err(
        &replace_in(TINY, "sm.latency", "branch", "branch = 2\nextra = 1"),
        &[],
    );
    assert!(
        e.contains("unknown key `sm.latency.extra`; keys in [sm.latency]: int_alu"),
        "{e}"
    );
    let no_watchdog = TINY.split("\n[watchdog]").next().unwrap();
    let e = err(&format!("watchdog = 5\n{no_watchdog}"), &[]);
    assert!(
        e.starts_with("x.toml:1:1: `watchdog` must be a table with keys: max_cycles"),
        "{e}"
    );
}

#[test]
fn values_of_the_wrong_kind_or_range_point_at_the_value() {
    let line = line_of(TINY, "l2", "ways");
    let e = err(&replace_in(TINY, "l2", "ways", "ways = 0"), &[]);
    assert_eq!(
        e,
        format!("x.toml:{line}:8: l2.ways = 0: must be at least 1")
    );
    let e = err(&replace_in(TINY, "l2", "ways", "ways = \"8\""), &[]);
    assert_eq!(
        e,
        format!("x.toml:{line}:8: l2.ways = \"8\": expected integer (1 ..= 256)")
    );
    let e = err(&replace_in(TINY, "sm", "count", "count = -1"), &[]);
    assert!(e.ends_with("sm.count = -1: must be at least 1"), "{e}");
    let e = err(&replace_in(TINY, "sm", "count", "count = 99999999999"), &[]);
    assert!(e.ends_with("must be at most 4096"), "{e}");
    let e = err(
        &replace_in(TINY, "l1", "line_bytes", "line_bytes = 96"),
        &[],
    );
    assert!(e.contains("must be a power of two"), "{e}");
    // A decimal key: integers and decimals in range; nothing else, and no infinities.
    let key = "atomics.l2.same_address_cycles";
    for (v, want) in [
        ("0.1", "must be at least 0.25"),
        ("1000.5", "must be at most 1000"),
        ("inf", "must be a finite number (0.25 ..= 1000)"),
        ("\"1.5\"", "expected number (0.25 ..= 1000)"),
    ] {
        let e = err(TINY, &[&format!("{key}={v}")]);
        assert!(e.ends_with(&format!("{key} = {v}: {want}")), "{v}: {e}");
    }
    for v in ["2", "1.43"] {
        let cfg = parse_str(TINY, "x.toml", &[format!("{key}={v}")])
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(
            cfg.atomics.l2.same_address_cycles,
            v.parse::<f64>().unwrap()
        );
    }
    let e = err(&replace_in(TINY, "l2", "hash", "hash = \"mod\""), &[]);
    assert!(
        e.ends_with("l2.hash = \"mod\": must be one of: linear, xor"),
        "{e}"
    );
    let e = err(&replace_in(TINY, "sm", "warp_size", "warp_size = 128"), &[]);
    assert!(e.contains("sm.warp_size = 128: must be at most 64"), "{e}");
}

#[test]
fn cross_rule_violations_point_at_the_blamed_key() {
    let e = err(&replace_in(TINY, "l1", "ways", "ways = 3"), &[]);
    let line = line_of(TINY, "l1", "size_bytes");
    assert!(
        e.starts_with(&format!(
            "x.toml:{line}:14: l1.size_bytes = 4096: must be line 128 × ways 3"
        )),
        "{e}"
    );
}

#[test]
fn every_required_key_is_required_and_every_optional_key_defaults() {
    let base: toml::Table = toml::from_str(TINY).unwrap();
    let defaults = GpuConfig {
        stress: StressSpec::default(),
        watchdog: WatchdogSpec::default(),
        ..parse_str(TINY, "tiny", &[]).unwrap()
    };
    for key in keys::KEYS {
        let mut t = base.clone();
        let parts: Vec<&str> = key.path.split('.').collect();
        let mut cur = Some(&mut t);
        for p in &parts[..parts.len() - 1] {
            cur = cur
                .and_then(|c| c.get_mut(*p))
                .and_then(|v| v.as_table_mut());
        }
        // Keys tiny leaves out (its [stress] table) are already "removed".
        let _ = cur.and_then(|c| c.remove(parts[parts.len() - 1]));
        let text = toml::to_string(&t).unwrap();
        match (key.required, parse_str(&text, "x.toml", &[])) {
            (true, Err(e)) => assert!(
                e.to_string()
                    .contains(&format!("missing key `{}`", key.path)),
                "{e}"
            ),
            (true, Ok(_)) => panic!("{} may be omitted but is marked required", key.path),
            (false, Ok(c)) => {
                let want = validate::leaves(&defaults).unwrap();
                let got = validate::leaves(&c).unwrap();
                let v = |l: &Vec<(String, toml::Value)>| {
                    l.iter()
                        .find(|(p, _)| p == key.path)
                        .map(|(_, v)| v.clone())
                };
                assert_eq!(v(&got), v(&want), "{} takes its default", key.path);
            }
            (false, Err(e)) => panic!("optional {} is required: {e}", key.path),
        }
    }
    let t = TINY
        .split("\n[stress]")
        .next()
        .unwrap()
        .split("\n[watchdog]")
        .next()
        .unwrap();
    assert!(
        parse_str(t, "x.toml", &[]).is_ok(),
        "[stress] and [watchdog] may be left out"
    );
}

#[test]
fn overrides_are_checked_and_blamed() {
    let e = err(TINY, &["l1.ways=3"]);
    assert!(
        e.starts_with("--set l1.ways=3: l1.size_bytes = 4096: must be"),
        "{e}"
    );
    let e = err(TINY, &["l1.wayz=3"]);
    assert!(
        e.starts_with("--set l1.wayz=3: unknown key `l1.wayz`"),
        "{e}"
    );
    let e = err(TINY, &["l2.ways=0"]);
    assert_eq!(e, "--set l2.ways=0: l2.ways = 0: must be at least 1");
    let e = err(TINY, &["store_buffer.drain_order=lifo"]);
    assert!(e.contains("must be one of: fifo, per_address"), "{e}");
    let c = parse_str(
        TINY,
        "x.toml",
        &[
            "l2.hash=xor".into(),
            "l2.slices=8".into(),
            "l2.size_bytes=131072".into(),
        ],
    )
    .unwrap();
    assert_eq!(
        (c.l2.hash, c.l2.slices, c.l2.size_bytes),
        (SliceHash::Xor, 8, 131072)
    );
    // An override may set a key of a table the file leaves out.
    let no_stress = TINY.split("\n[stress]").next().unwrap();
    let c = parse_str(no_stress, "x.toml", &["stress.drain_jitter=7".into()]).unwrap();
    assert_eq!(c.stress.drain_jitter, 7);
}

#[test]
fn every_choice_name_in_the_table_deserialises() {
    for key in keys::KEYS {
        if let keys::Kind::Choice(names) = key.kind {
            for n in names {
                let set = format!("{}={n}", key.path);
                if let Err(e) = parse_str(TINY, "tiny", std::slice::from_ref(&set)) {
                    panic!("{set}: {e}");
                }
            }
        }
    }
}

#[test]
fn default_config_is_the_embedded_h100_and_presets_round_trip() {
    let d = default_config().unwrap();
    assert_eq!(d.sm.count, 132);
    assert_eq!(d, load(None, &[]).unwrap());
    for (name, text) in PRESETS {
        let c = parse_str(text, name, &[]).unwrap();
        let shown = show::render(&resolve(text, name, None, &[]).unwrap()).unwrap();
        let again = parse_str(&shown, "shown", &[]).unwrap();
        assert_eq!(
            c, again,
            "{name}: config show output reads back as the same config"
        );
    }
}

#[test]
fn every_file_in_configs_is_an_embedded_preset() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| format!("configs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".toml"))
        .collect();
    files.sort();
    let mut presets: Vec<String> = PRESETS.iter().map(|(n, _)| n.to_string()).collect();
    presets.sort();
    assert_eq!(
        files, presets,
        "add new configs to config::PRESETS so a test validates them"
    );
}

#[test]
fn unreadable_file_is_an_io_error_naming_it() {
    let e = load(Some(std::path::Path::new("/nonexistent/x.toml")), &[])
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/x.toml: cannot read"), "{e}");
}

#[test]
fn stress_chances_name_the_key_the_value_and_what_is_allowed() {
    let e = err(TINY, &["stress.issue_stall_percent=101"]);
    assert!(
        e.ends_with("stress.issue_stall_percent = 101: must be at most 100"),
        "{e}"
    );
    let e = err(TINY, &["stress.issue_stall_percent=5"]);
    assert!(
        e.contains("stress.issue_stall = 0: must be at least 1 (the longest issue stall) when stress.issue_stall_percent = 5"),
        "{e}"
    );
    let e = err(TINY, &["stress.load_delay_percent=20"]);
    assert!(
        e.contains("stress.load_delay = 0: must be at least 1 (the longest load hold) when stress.load_delay_percent = 20"),
        "{e}"
    );
    let e = err(
        TINY,
        &[
            "stress.start_skew=100",
            "stress.large_skew=50",
            "stress.large_skew_percent=30",
        ],
    );
    assert!(
        e.contains(
            "stress.large_skew = 50: must be at least 1 and at least stress.start_skew = 100"
        ),
        "{e}"
    );
    let e = err(TINY, &["stress.l1_atomics_percent=200"]);
    assert!(e.contains("stress.l1_atomics_percent = 200"), "{e}");
    // Cycles without a chance are allowed (nothing is drawn), and so is every chance with its cycles.
    let c = parse_str(
        TINY,
        "x.toml",
        &[
            "stress.issue_stall=300".into(),
            "stress.load_delay_percent=100".into(),
            "stress.load_delay=1".into(),
            "stress.large_skew=10".into(),
            "stress.large_skew_percent=100".into(),
            "stress.l1_atomics_percent=100".into(),
        ],
    )
    .unwrap();
    assert_eq!((c.stress.issue_stall_percent, c.stress.load_delay), (0, 1));
}

#[test]
fn a_stress_table_in_a_file_blames_the_line() {
    // tiny has no [stress] table: the one appended is the file's only one.
    let text = format!("{TINY}\n[stress]\nissue_stall_percent = 7\n");
    let e = err(&text, &[]);
    let line = text
        .lines()
        .position(|l| l.starts_with("issue_stall_percent"))
        .unwrap()
        + 1;
    assert!(
        e.starts_with(&format!("x.toml:{line}:")) && e.contains("stress.issue_stall = 0"),
        "{e}"
    );
}

#[test]
fn a_far_link_bandwidth_is_checked_and_means_nothing_without_two_partitions() {
    let e = err(
        TINY,
        &["l2.far_latency=10", "l2.far_bytes_per_cycle=1000001"],
    );
    assert!(
        e.contains("l2.far_bytes_per_cycle = 1000001: must be at most 1000000"),
        "{e}"
    );
    // One partition (tiny: l2.far_latency = 0) has no link: the key is accepted and ignored, so that
    // `--set l2.far_latency=0` on a split preset gives its one-partition variant.
    parse_str(TINY, "tiny", &["l2.far_bytes_per_cycle=64".into()]).unwrap();
}

#[test]
fn l2_input_depth_names_the_key_the_value_and_what_is_allowed() {
    // 0 is unbounded, and every depth of at least 1 makes progress (`machine/credit.rs`): only
    // values outside the range are refused.
    let e = err(TINY, &["l2.input_depth=-1"]);
    assert_eq!(
        e,
        "--set l2.input_depth=-1: l2.input_depth = -1: must be at least 0"
    );
    let e = err(TINY, &["l2.input_depth=65537"]);
    assert!(
        e.ends_with("l2.input_depth = 65537: must be at most 65536"),
        "{e}"
    );
    let e = err(TINY, &["l2.input_depth=true"]);
    assert!(
        e.contains("l2.input_depth = true: expected integer (0 ..= 65536)"),
        "{e}"
    );
    for ok in ["0", "1", "65536"] {
        let c = parse_str(TINY, "x.toml", &[format!("l2.input_depth={ok}")]).unwrap();
        assert_eq!(c.l2.input_depth.to_string(), ok);
    }
    // Absent, it is unbounded.
    assert_eq!(parse_str(TINY, "x.toml", &[]).unwrap().l2.input_depth, 0);
}

#[test]
fn the_sweep_digest_leaves_out_a_key_added_later_only_at_its_default() {
    let c = parse_str(TINY, "x.toml", &[]).unwrap();
    let full = serde_json::to_string(&c).unwrap();
    // The key's name is unique in the config: removing its text removes only it.
    assert_eq!(full.matches("\"input_depth\"").count(), 1, "{full}");
    let d = crate::config::digest_json(&c);
    assert_eq!(d, full.replacen(",\"input_depth\":0", "", 1));
    assert!(!d.contains("input_depth") && d.len() < full.len());
    // The rest is untouched: it parses to the same config as before.
    let back: GpuConfig = serde_json::from_str(&d).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), full);
    let set = parse_str(TINY, "x.toml", &["l2.input_depth=3".into()]).unwrap();
    let d3 = crate::config::digest_json(&set);
    assert!(d3.contains("\"input_depth\":3") && d3 != d, "{d3}");
}
