//! Value checks after deserialisation, and `--set` overrides.
//!
//! Two layers: every value against its own row in `keys.rs` (kind, range, power of two), then the rules
//! that tie keys together (`cross_rules`). The cross rules are the machine's assumptions, each stated
//! where it is checked, so that a validated config can never make the machine panic, divide by zero or
//! wait forever for something the hardware cannot do.

use super::keys::{self, Key, Kind};
use super::{ConfigError, GpuConfig, StressSpec};
use crate::ir::{MemOrder, Scope};

/// A value that is not allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The key blamed (its value is shown).
    pub key: String,
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
    /// Other keys the rule involves (an override of one of them is named as the cause).
    pub related: Vec<&'static str>,
}

/// Most bytes of L1 over all SMs together.
pub const MAX_L1_TOTAL_BYTES: u64 = 2 << 30;

/// Host bytes one near copy takes at most (`machine/near_copy.rs`: a map entry and a queue entry).
pub const NEAR_COPY_BYTES: u64 = 48;

fn violation(
    key: &str,
    value: impl ToString,
    allowed: String,
    related: &[&'static str],
) -> Violation {
    Violation {
        key: key.to_string(),
        value: value.to_string(),
        allowed,
        related: related.to_vec(),
    }
}

/// Every `(path, value)` leaf of a config (sorted by name within each table).
pub fn leaves(cfg: &GpuConfig) -> Result<Vec<(String, toml::Value)>, String> {
    fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, v, out);
                }
            }
            _ => out.push((prefix.to_string(), v.clone())),
        }
    }
    let v = toml::Value::try_from(cfg).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    walk("", &v, &mut out);
    Ok(out)
}

/// Checks every value; the first violation found.
pub fn validate(cfg: &GpuConfig) -> Result<(), Violation> {
    let all = leaves(cfg).map_err(|e| violation("(config)", "", e, &[]))?;
    for (path, v) in &all {
        // A leaf without a row is a spec/table mismatch that a unit test reports; nothing to check.
        if let Some(k) = keys::find(path) {
            k.check(v)
                .map_err(|allowed| violation(path, v, allowed, &[]))?;
        }
    }
    cross_rules(cfg)
}

fn cross_rules(c: &GpuConfig) -> Result<(), Violation> {
    // Lane masks are u64 and the warp slots bound the threads a group may bring.
    let slots = c.sm.max_warps as u64 * c.sm.warp_size as u64;
    if c.sm.max_threads as u64 > slots {
        return Err(violation(
            "sm.max_threads",
            c.sm.max_threads,
            format!(
                "must be at most sm.max_warps × sm.warp_size = {} × {} = {slots}",
                c.sm.max_warps, c.sm.warp_size
            ),
            &["sm.max_warps", "sm.warp_size"],
        ));
    }
    // The near copies take about NEAR_COPY_BYTES of host memory each once made, bounded like the L1s.
    let nc = c.l2.near_copy_lines as u64;
    if nc * NEAR_COPY_BYTES * c.sm.count as u64 > MAX_L1_TOTAL_BYTES {
        return Err(violation(
            "l2.near_copy_lines",
            nc,
            format!(
                "the near copies of all {} SMs take up to {NEAR_COPY_BYTES} bytes each: at most {} \
                 lines per SM",
                c.sm.count,
                MAX_L1_TOTAL_BYTES / NEAR_COPY_BYTES / c.sm.count as u64
            ),
            &["sm.count"],
        ));
    }
    // The tag array indexes sets with a mask: their number must be a power of two.
    geometry(
        "l1.size_bytes",
        c.l1.size_bytes as u64,
        1,
        c.l1.line_bytes,
        c.l1.ways,
        &["l1.line_bytes", "l1.ways"],
    )?;
    if c.l1.sector_bytes > c.l1.line_bytes {
        return Err(violation(
            "l1.sector_bytes",
            c.l1.sector_bytes,
            format!("must be at most l1.line_bytes = {}", c.l1.line_bytes),
            &["l1.line_bytes"],
        ));
    }
    // The L1 keeps sector valid bits in a u32 and fills all sectors with `(1 << n) - 1`.
    if c.l1.line_bytes / c.l1.sector_bytes > 16 {
        return Err(violation(
            "l1.sector_bytes",
            c.l1.sector_bytes,
            format!(
                "a line holds at most 16 sectors: must be at least l1.line_bytes / 16 = {}",
                c.l1.line_bytes / 16
            ),
            &["l1.line_bytes"],
        ));
    }
    // Requests carry L1 line addresses to the slices, which cache and fill whole L2 lines.
    if c.l2.line_bytes != c.l1.line_bytes {
        return Err(violation(
            "l2.line_bytes",
            c.l2.line_bytes,
            format!("must equal l1.line_bytes = {}", c.l1.line_bytes),
            &["l1.line_bytes"],
        ));
    }
    l2_geometry(c)?;
    if c.dram.banks % c.dram.bank_groups.max(1) != 0 {
        return Err(violation(
            "dram.bank_groups",
            c.dram.bank_groups,
            format!("must divide dram.banks = {}", c.dram.banks),
            &["dram.banks"],
        ));
    }
    if c.dram.row_bytes % c.l2.line_bytes != 0 {
        return Err(violation(
            "dram.row_bytes",
            c.dram.row_bytes,
            format!(
                "must be a multiple of l2.line_bytes = {} (rows hold whole lines)",
                c.l2.line_bytes
            ),
            &["l2.line_bytes"],
        ));
    }
    // Every L1 holds its lines in the simulator's memory: 4096 SMs of 16 MiB each asked for 64 GiB
    // and ended in the kernel's OOM killer. The bound is 60 times an H100's L1 capacity.
    let l1_total = c.sm.count as u64 * c.l1.size_bytes as u64;
    if l1_total > MAX_L1_TOTAL_BYTES {
        return Err(violation(
            "l1.size_bytes",
            c.l1.size_bytes,
            format!(
                "sm.count × l1.size_bytes = {} × {} = {l1_total} bytes: at most {MAX_L1_TOTAL_BYTES} \
                 (the simulator holds every L1's lines)",
                c.sm.count, c.l1.size_bytes
            ),
            &["sm.count"],
        ));
    }
    // A memory partition is a whole group of slices with whole DRAM channels behind it.
    if c.l2.slices % c.l2.partitions != 0 || c.dram.channels % c.l2.partitions != 0 {
        return Err(violation(
            "l2.partitions",
            c.l2.partitions,
            format!(
                "must divide both l2.slices = {} and dram.channels = {}",
                c.l2.slices, c.dram.channels
            ),
            &["l2.slices", "dram.channels"],
        ));
    }
    // The least a device offers: SYCL 2020 §4.6.4.2 (`atomic_memory_order_capabilities`,
    // `atomic_memory_scope_capabilities`: relaxed, work_group) and OpenCL 3.0 §4.2
    // (`CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, whose minimum every OpenCL 2.0 device exceeds).
    orders(
        "support.atomic_orders",
        &c.support.atomic_orders,
        &[MemOrder::Relaxed],
        "every device supports relaxed atomics (SYCL 2020 §4.6.4.2)",
    )?;
    // Fences: SYCL 2020 §4.6.4.2 `atomic_fence_order_capabilities` (acquire, release, acq_rel; OpenCL
    // 2.0 §6.13.11 `atomic_work_item_fence` takes all three). Its relaxed "has no effect" (SYCL 2020
    // §4.15.1), and no front end here can write a relaxed fence, so listing it promises nothing.
    orders(
        "support.fence_orders",
        &c.support.fence_orders,
        &[MemOrder::Acquire, MemOrder::Release, MemOrder::AcqRel],
        "every device's fences support acquire, release and acq_rel (SYCL 2020 §4.6.4.2)",
    )?;
    if c.support.fence_orders.contains(&MemOrder::Relaxed) {
        return Err(violation(
            "support.fence_orders",
            order_list(&c.support.fence_orders),
            "must not list relaxed: a relaxed fence orders nothing (SYCL 2020 §4.15.1) and no \
             kernel front end can write one (`fence.relaxed` is refused)"
                .into(),
            &[],
        ));
    }
    scopes("support.atomic_scopes", &c.support.atomic_scopes)?;
    scopes("support.fence_scopes", &c.support.fence_scopes)?;
    stress_rules(&c.stress)
}

/// A stress chance needs something to happen when it is drawn.
fn stress_rules(s: &StressSpec) -> Result<(), Violation> {
    for (chance, chance_key, cycles, key, what) in [
        (
            s.issue_stall_percent,
            "stress.issue_stall_percent",
            s.issue_stall,
            "stress.issue_stall",
            "the longest issue stall",
        ),
        (
            s.load_delay_percent,
            "stress.load_delay_percent",
            s.load_delay,
            "stress.load_delay",
            "the longest load hold",
        ),
    ] {
        if chance > 0 && cycles == 0 {
            return Err(violation(
                key,
                cycles,
                format!("must be at least 1 ({what}) when {chance_key} = {chance}"),
                &[chance_key],
            ));
        }
    }
    if s.large_skew_percent > 0 && (s.large_skew == 0 || s.large_skew < s.start_skew) {
        return Err(violation(
            "stress.large_skew",
            s.large_skew,
            format!(
                "must be at least 1 and at least stress.start_skew = {} when \
                 stress.large_skew_percent = {} (the large skew of a run)",
                s.start_skew, s.large_skew_percent
            ),
            &["stress.start_skew", "stress.large_skew_percent"],
        ));
    }
    Ok(())
}

fn order_list(list: &[MemOrder]) -> String {
    let names: Vec<&str> = list.iter().map(|o| o.name()).collect();
    format!("[{}]", names.join(", "))
}

/// `size` split over `parts` slices of `line`-byte lines in `ways` ways: a whole, power-of-two number of
/// sets per part. The message offers the nearest sizes that fit.
fn geometry(
    key: &str,
    size: u64,
    parts: u32,
    line: u32,
    ways: u32,
    related: &[&'static str],
) -> Result<(), Violation> {
    let unit = parts as u64 * line as u64 * ways as u64;
    if fits(size, unit) {
        return Ok(());
    }
    let (below, above) = nearest_sizes(size, unit);
    Err(violation(
        key,
        size,
        format!(
            "{}; e.g. {below} or {above}",
            geometry_rule(size, parts, line, ways)
        ),
        related,
    ))
}

/// Whether `size` is `unit` × a power of two.
fn fits(size: u64, unit: u64) -> bool {
    size % unit == 0 && (size / unit).is_power_of_two()
}

/// The sizes that fit nearest below (or the smallest) and above `size`.
fn nearest_sizes(size: u64, unit: u64) -> (u64, u64) {
    let sets = prev_pow2((size / unit).max(1));
    (unit * sets, unit * sets * 2)
}

/// What [`geometry`] requires, with what `size` gives.
fn geometry_rule(size: u64, parts: u32, line: u32, ways: u32) -> String {
    let unit = parts as u64 * line as u64 * ways as u64;
    let per = if parts > 1 {
        format!(" × slices {parts}")
    } else {
        String::new()
    };
    format!(
        "must be line {line} × ways {ways}{per} × a power-of-two number of sets (it gives {:.2} sets)",
        size as f64 / unit as f64
    )
}

/// The L2's geometry (issue 45 item 7): a refusal offers each change of one key that makes the
/// config valid — the nearest `l2.size_bytes` for the slices given (only when they are a multiple of
/// `l2.partitions`, which the next rule requires), and the nearest `l2.slices` (multiples of the
/// partitions) for the size given.
fn l2_geometry(c: &GpuConfig) -> Result<(), Violation> {
    let l2 = &c.l2;
    let set_bytes = l2.line_bytes as u64 * l2.ways as u64;
    if fits(l2.size_bytes, l2.slices as u64 * set_bytes) {
        return Ok(());
    }
    let partitions = l2.partitions as u64;
    let mut fixes = Vec::new();
    if l2.slices as u64 % partitions == 0 {
        let (a, b) = nearest_sizes(l2.size_bytes, l2.slices as u64 * set_bytes);
        fixes.push(format!("l2.size_bytes = {a} or {b}"));
    }
    let slices_fit = |s: &u64| s % partitions == 0 && fits(l2.size_bytes, s * set_bytes);
    let max = match keys::find("l2.slices").map(|k| k.kind) {
        Some(Kind::Int { max, .. }) => max,
        _ => l2.slices as u64,
    };
    let now = l2.slices as u64;
    let near: Vec<String> = [
        (1..now).rev().find(slices_fit),
        (now + 1..=max).find(slices_fit),
    ]
    .into_iter()
    .flatten()
    .map(|s| s.to_string())
    .collect();
    if !near.is_empty() {
        fixes.push(format!(
            "l2.slices = {} (keeping l2.size_bytes = {})",
            near.join(" or "),
            l2.size_bytes
        ));
    }
    let fixes = if fixes.is_empty() {
        format!(
            "no change of one key fixes it (l2.slices must also be a multiple of l2.partitions = {partitions})"
        )
    } else {
        format!("one key fixes it: {}", fixes.join(", or "))
    };
    Err(violation(
        "l2.size_bytes",
        l2.size_bytes,
        format!(
            "{}; {fixes}",
            geometry_rule(l2.size_bytes, l2.slices, l2.line_bytes, l2.ways)
        ),
        &["l2.slices", "l2.line_bytes", "l2.ways"],
    ))
}

fn prev_pow2(x: u64) -> u64 {
    1u64 << (63 - x.leading_zeros())
}

/// An order list: the `required` orders (`why` says whose minimum), and acq_rel and seq_cst only
/// with what they are made of.
fn orders(key: &str, list: &[MemOrder], required: &[MemOrder], why: &str) -> Result<(), Violation> {
    let has = |o: MemOrder| list.contains(&o);
    let shown = || order_list(list);
    if let Some(missing) = required.iter().find(|o| !has(**o)) {
        return Err(violation(
            key,
            shown(),
            format!("must include {} ({why})", missing.name()),
            &[],
        ));
    }
    // acq_rel is acquire and release together; seq_cst is acq_rel plus a total order.
    if has(MemOrder::AcqRel) && !(has(MemOrder::Acquire) && has(MemOrder::Release)) {
        return Err(violation(
            key,
            shown(),
            "acq_rel needs acquire and release".into(),
            &[],
        ));
    }
    if has(MemOrder::SeqCst) && !has(MemOrder::AcqRel) {
        return Err(violation(key, shown(), "seq_cst needs acq_rel".into(), &[]));
    }
    Ok(())
}

fn scopes(key: &str, list: &[Scope]) -> Result<(), Violation> {
    // A scope includes every narrower one, so supporting it means supporting them.
    if let Some(widest) = list.iter().max() {
        if let Some(missing) = Scope::ALL.iter().find(|s| *s < widest && !list.contains(s)) {
            let names: Vec<&str> = list.iter().map(|s| s.name()).collect();
            return Err(violation(
                key,
                format!("[{}]", names.join(", ")),
                format!("{widest} is listed, so the narrower {missing} must be too"),
                &[],
            ));
        }
    }
    // SYCL 2020 §4.6.4.2: `atomic_memory_scope_capabilities` and `atomic_fence_scope_capabilities`
    // include at least work_group (OpenCL 3.0 §4.2: CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP).
    if !list.contains(&Scope::WorkGroup) {
        let names: Vec<&str> = list.iter().map(|s| s.name()).collect();
        return Err(violation(
            key,
            format!("[{}]", names.join(", ")),
            "must include work_group (and so work_item and sub_group): every device supports \
             work_group scope (SYCL 2020 §4.6.4.2)"
                .into(),
            &[],
        ));
    }
    Ok(())
}

/// Applies one `KEY.PATH=VALUE` override to the TOML tree; returns the key path it set.
pub fn apply_override(table: &mut toml::Table, arg: &str) -> Result<&'static str, ConfigError> {
    let fail = |message: String| ConfigError::Override {
        arg: arg.to_string(),
        message,
    };
    let (path, raw) = arg
        .split_once('=')
        .ok_or_else(|| fail("expected KEY=VALUE, e.g. l2.slices=8".into()))?;
    let (path, raw) = (path.trim(), raw.trim());
    if keys::is_table(path) {
        return Err(fail(format!(
            "`{path}` is a table, not a key; keys in [{path}]: {}",
            keys::describe_children(path)
        )));
    }
    let key = keys::find(path).ok_or_else(|| fail(unknown_key_message(path)))?;
    let value = parse_override_value(key, raw);
    key.check(&value)
        .map_err(|allowed| fail(format!("{path} = {value}: {allowed}")))?;
    let mut cur = table;
    let parts: Vec<&str> = key.path.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        let entry = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            // The file walk has already rejected a non-table here; kept as an error, not a panic.
            other => {
                return Err(fail(format!(
                    "`{p}` in the file is {}, not a table",
                    other.type_str()
                )))
            }
        };
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(key.path)
}

/// A TOML value; for names, the bare word too (`--set l2.hash=xor`).
fn parse_override_value(key: &Key, raw: &str) -> toml::Value {
    let parsed = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"));
    match (key.kind, parsed) {
        (Kind::Text | Kind::Choice(_), Some(v @ toml::Value::String(_))) => v,
        (Kind::Text | Kind::Choice(_), _) => toml::Value::String(raw.to_string()),
        (_, Some(v)) => v,
        (_, None) => toml::Value::String(raw.to_string()),
    }
}

/// "unknown key `x.y`; ..." with the keys allowed at the deepest known table.
pub fn unknown_key_message(path: &str) -> String {
    let mut table = path;
    loop {
        table = table.rsplit_once('.').map(|(t, _)| t).unwrap_or("");
        if keys::is_table(table) {
            break;
        }
    }
    let what = if table.is_empty() {
        "top-level keys".to_string()
    } else {
        format!("keys in [{table}]")
    };
    let similar: Vec<&str> = keys::KEYS
        .iter()
        .map(|k| k.path)
        .filter(|k| {
            let last = |s: &str| s.rsplit('.').next().unwrap_or("").to_string();
            last(k) == last(path)
        })
        .collect();
    let hint = if similar.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", similar.join(" or "))
    };
    format!(
        "unknown key `{path}`{hint}; {what}: {}",
        keys::describe_children(table)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;

    fn tiny() -> GpuConfig {
        parse_str(include_str!("../../../configs/tiny.toml"), "tiny.toml", &[]).unwrap()
    }

    fn blamed(c: &GpuConfig) -> String {
        validate(c).unwrap_err().key
    }

    #[test]
    fn presets_and_tiny_are_valid() {
        for (name, text) in super::super::PRESETS {
            if let Err(e) = parse_str(text, name, &[]) {
                panic!("{e}");
            }
        }
    }

    /// A slice count or a size the L2 cannot hold is refused with both one-key fixes: the nearest
    /// sizes for the slices given, and the nearest slice counts (multiples of the partitions) for the
    /// size given; and each fix offered is accepted.
    #[test]
    fn l2_geometry_refusal_offers_one_key_fixes_that_work() {
        let h100 = || parse_str(super::super::DEFAULT_TOML, "h100", &[]).unwrap();
        let mut c = h100();
        c.l2.slices = 64;
        let v = validate(&c).unwrap_err();
        assert_eq!(v.key, "l2.size_bytes");
        // 64 slices are not a multiple of the 10 partitions: no size fits them, two slice
        // counts fit the size.
        assert!(
            v.allowed.ends_with(
                "(it gives 400.00 sets); one key fixes it: l2.slices = 50 or 100 (keeping \
                 l2.size_bytes = 52428800)"
            ),
            "{}",
            v.allowed
        );
        let mut c = h100();
        c.l2.slices = 120;
        let v = validate(&c).unwrap_err();
        assert!(
            v.allowed.ends_with(
                "one key fixes it: l2.size_bytes = 31457280 or 62914560, or l2.slices = 100 or \
                 200 (keeping l2.size_bytes = 52428800)"
            ),
            "{}",
            v.allowed
        );
        for (size, slices) in [
            (31457280, 120),
            (62914560, 120),
            (52428800, 50),
            (52428800, 200),
        ] {
            let mut c = h100();
            (c.l2.size_bytes, c.l2.slices) = (size, slices);
            assert!(validate(&c).is_ok(), "{size} bytes over {slices} slices");
        }
        // 32 MiB over 100 slices: only power-of-two slice counts fit it, none a multiple of the
        // 10 partitions; the sizes for 100 slices do.
        let mut c = h100();
        c.l2.size_bytes = 32 << 20;
        let v = validate(&c).unwrap_err();
        assert!(
            v.allowed
                .ends_with("one key fixes it: l2.size_bytes = 26214400 or 52428800"),
            "{}",
            v.allowed
        );
    }

    #[test]
    fn each_cross_rule_names_its_key() {
        let mut c = tiny();
        c.sm.max_threads = c.sm.max_warps * c.sm.warp_size + 1;
        assert_eq!(blamed(&c), "sm.max_threads");
        let mut c = tiny();
        c.l1.ways = 3;
        assert_eq!(blamed(&c), "l1.size_bytes");
        let mut c = tiny();
        c.l1.sector_bytes = 4;
        let v = validate(&c).unwrap_err();
        assert_eq!(v.key, "l1.sector_bytes");
        assert!(v.allowed.contains("16 sectors"), "{}", v.allowed);
        let mut c = tiny();
        c.l1.sector_bytes = c.l1.line_bytes * 2;
        c.l1.line_bytes = 64;
        c.l2.line_bytes = 64;
        assert_eq!(blamed(&c), "l1.sector_bytes");
        let mut c = tiny();
        c.l2.line_bytes = 64;
        assert_eq!(blamed(&c), "l2.line_bytes");
        let mut c = tiny();
        c.l2.size_bytes += 128;
        assert_eq!(blamed(&c), "l2.size_bytes");
        let mut c = tiny();
        c.l2.slices = 3;
        assert_eq!(blamed(&c), "l2.size_bytes");
        let mut c = tiny();
        c.store_buffer.entries = 0;
        assert!(validate(&c).is_ok(), "0 disables the buffer");
        let mut c = tiny();
        c.dram.row_bytes = 2000;
        assert_eq!(blamed(&c), "dram.row_bytes");
    }

    #[test]
    fn the_l1s_together_are_bounded() {
        let mut c = tiny();
        c.sm.count = 4096;
        c.l1.size_bytes = 16 << 20;
        let v = validate(&c).unwrap_err();
        assert_eq!(
            (v.key.as_str(), v.related.as_slice()),
            ("l1.size_bytes", &["sm.count"][..])
        );
        assert!(v.allowed.contains("at most 2147483648"), "{}", v.allowed);
        c.l1.size_bytes = 512 << 10;
        assert!(validate(&c).is_ok(), "{:?}", validate(&c));
    }

    #[test]
    fn support_lists_must_be_consistent() {
        let mut c = tiny();
        c.support.atomic_orders = vec![MemOrder::Acquire];
        assert!(validate(&c).unwrap_err().allowed.contains("relaxed"));
        let mut c = tiny();
        c.support.fence_orders = vec![MemOrder::AcqRel, MemOrder::Acquire];
        assert!(validate(&c)
            .unwrap_err()
            .allowed
            .contains("must include release"));
        let mut c = tiny();
        c.support.atomic_orders = vec![MemOrder::Relaxed, MemOrder::AcqRel];
        assert!(validate(&c)
            .unwrap_err()
            .allowed
            .contains("acq_rel needs acquire and release"));
        // Below the SYCL 2020 / OpenCL minimums, or promising a fence no front end can write.
        let mut c = tiny();
        c.support.atomic_scopes = vec![Scope::WorkItem, Scope::SubGroup];
        let v = validate(&c).unwrap_err();
        assert_eq!(v.key, "support.atomic_scopes");
        assert!(
            v.allowed.contains("must include work_group"),
            "{}",
            v.allowed
        );
        let mut c = tiny();
        c.support.fence_scopes = vec![Scope::WorkItem];
        assert_eq!(validate(&c).unwrap_err().key, "support.fence_scopes");
        let mut c = tiny();
        c.support.fence_orders = vec![MemOrder::SeqCst];
        assert!(validate(&c)
            .unwrap_err()
            .allowed
            .contains("must include acquire"));
        let mut c = tiny();
        c.support.fence_orders.push(MemOrder::Relaxed);
        let v = validate(&c).unwrap_err();
        assert_eq!(v.key, "support.fence_orders");
        assert!(v.allowed.contains("must not list relaxed"), "{}", v.allowed);
        let mut c = tiny();
        c.support.atomic_orders = vec![MemOrder::Relaxed, MemOrder::SeqCst];
        assert!(validate(&c)
            .unwrap_err()
            .allowed
            .contains("seq_cst needs acq_rel"));
        let mut c = tiny();
        c.support.atomic_scopes = vec![Scope::WorkItem, Scope::Device];
        let v = validate(&c).unwrap_err();
        assert_eq!(v.key, "support.atomic_scopes");
        assert!(v.allowed.contains("sub_group"), "{}", v.allowed);
        let mut c = tiny();
        c.support.fence_scopes = vec![];
        assert!(validate(&c)
            .unwrap_err()
            .allowed
            .contains("must not be empty"));
    }

    #[test]
    fn geometry_error_suggests_valid_sizes() {
        let mut c = tiny();
        c.l1.size_bytes = 3 * 4096;
        let v = validate(&c).unwrap_err();
        assert!(v.allowed.contains("e.g. 8192 or 16384"), "{}", v.allowed);
    }

    #[test]
    fn overrides_reject_unknown_paths_and_wrong_types() {
        let mut t = toml::Table::new();
        let e = apply_override(&mut t, "l2.wayz=4").unwrap_err().to_string();
        assert!(
            e.contains("unknown key `l2.wayz`") && e.contains("keys in [l2]: slices, hash"),
            "{e}"
        );
        let e = apply_override(&mut t, "l3.ways=4").unwrap_err().to_string();
        assert!(e.contains("did you mean l1.ways or l2.ways"), "{e}");
        let e = apply_override(&mut t, "l2.ways=many")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected integer"), "{e}");
        let e = apply_override(&mut t, "l2=4").unwrap_err().to_string();
        assert!(e.contains("`l2` is a table") && e.contains("ways"), "{e}");
        let e = apply_override(&mut t, "l2.ways").unwrap_err().to_string();
        assert!(e.contains("expected KEY=VALUE"), "{e}");
        assert!(t.is_empty(), "failed overrides change nothing");
        assert_eq!(apply_override(&mut t, "l2.hash=xor").unwrap(), "l2.hash");
        assert_eq!(apply_override(&mut t, "name=my gpu").unwrap(), "name");
        assert_eq!(
            apply_override(&mut t, "support.fence_scopes=[\"work_item\"]").unwrap(),
            "support.fence_scopes"
        );
        assert_eq!(t["l2"]["hash"].as_str(), Some("xor"));
        assert_eq!(t["name"].as_str(), Some("my gpu"));
    }
}
