//! Every configuration key in one table: its path, value kind and range, unit, whether it may be
//! omitted, and a one-line description (the value kinds and the check of one value: `kind.rs`).
//! Validation (`validate.rs`) checks each value against its entry, the file walk (`mod.rs`) rejects keys that are not here, and the reference
//! (`gpumemsim config doc`, `docs/configs.md` "Configuration reference") is rendered from it.
//!
//! How to add a key:
//! 1. add the field to its struct in `spec.rs` (with `#[serde(default)]` on the struct if it may be
//!    omitted);
//! 2. add one [`Key`] row here, in the same position as the field, with its kind, range, unit and
//!    description (`required: false` for fields of a defaulted table);
//! 3. if it constrains or is constrained by other keys, add the rule to `validate::cross_rules`;
//! 4. give it a value, with the source of the number, in every preset under `configs/`;
//! 5. regenerate the section of `docs/configs.md`: `gpumemsim config doc --markdown`.
//!
//! Tests fail if a key is in the spec but not here (or the reverse), or if `docs/configs.md` is stale.
//!
//! Ranges are of two kinds: what the machine needs to run at all (lane masks are 64 bits, a line is
//! at most `machine::msg::MAX_LINE` = 128 bytes, ids of SMs and slices are 16-bit) and caps that keep
//! simulated time and memory far from overflow; both are stated in the error a user sees.

use std::fmt::Write as _;

pub use super::kind::Kind;

/// One configuration key.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// Dotted path, e.g. `l2.ways`.
    pub path: &'static str,
    pub kind: Kind,
    /// Unit of the value (empty for names, flags and counts whose unit is the key itself).
    pub unit: &'static str,
    /// Whether a file must give it (keys of `[stress]` and `[watchdog]` default).
    pub required: bool,
    pub doc: &'static str,
}

const ORDERS: &[&str] = &["relaxed", "acquire", "release", "acq_rel", "seq_cst"];
const SCOPES: &[&str] = &["work_item", "sub_group", "work_group", "device", "system"];

const fn req(path: &'static str, kind: Kind, unit: &'static str, doc: &'static str) -> Key {
    Key {
        path,
        kind,
        unit,
        required: true,
        doc,
    }
}

const fn opt(path: &'static str, kind: Kind, unit: &'static str, doc: &'static str) -> Key {
    Key {
        path,
        kind,
        unit,
        required: false,
        doc,
    }
}

const fn int(min: u64, max: u64) -> Kind {
    Kind::Int { min, max }
}

const fn pow2(min: u64, max: u64) -> Kind {
    Kind::Pow2 { min, max }
}

/// Cap on latencies and delays: far above any real part, far below time overflow.
const LAT: u64 = 1_000_000;
/// Cap on queue depths and MSHR counts.
const DEPTH: u64 = 65_536;

/// The table, in the order of `spec.rs` (and of the TOML files).
pub static KEYS: &[Key] = &[
    req("name", Kind::Text, "", "Human name of the modelled GPU."),
    req(
        "clocks.core_mhz",
        int(1, 100_000),
        "MHz",
        "SM (core) clock; latencies of SM-side parts count its cycles.",
    ),
    req(
        "clocks.l2_mhz",
        int(1, 100_000),
        "MHz",
        "Interconnect and L2 clock; `interconnect`, `l2` and `atomics.l2` count its cycles.",
    ),
    req(
        "clocks.dram_mhz",
        int(1, 100_000),
        "MHz",
        "DRAM command clock (the memory clock `nvidia-smi` reports; data moves on both edges).",
    ),
    req(
        "sm.count",
        int(1, 4096),
        "SMs",
        "Streaming multiprocessors.",
    ),
    req(
        "sm.warp_size",
        pow2(1, 64),
        "lanes",
        "Lanes of a warp (sub-group); lane masks are 64 bits wide.",
    ),
    req(
        "sm.schedulers",
        int(1, 64),
        "schedulers",
        "Warp schedulers per SM; warps are assigned to them round-robin.",
    ),
    req(
        "sm.issue_width",
        int(1, 16),
        "instructions/cycle",
        "Instructions one scheduler may issue per cycle.",
    ),
    req(
        "sm.warp_policy",
        Kind::Choice(&["gto", "lrr"]),
        "",
        "Warp scheduling: greedy-then-oldest or loose round-robin.",
    ),
    req(
        "sm.max_groups",
        int(1, 1024),
        "work-groups",
        "Resident work-groups per SM (occupancy limit).",
    ),
    req(
        "sm.max_warps",
        int(1, 1024),
        "warps",
        "Resident warps per SM (occupancy limit).",
    ),
    req(
        "sm.max_threads",
        int(1, 65_536),
        "work-items",
        "Resident work-items per SM; at most max_warps × warp_size.",
    ),
    req(
        "sm.max_shared_bytes",
        int(0, 1 << 24),
        "bytes",
        "Local (shared) memory per SM available to resident work-groups.",
    ),
    req(
        "sm.lsu_per_cycle",
        int(1, 64),
        "instructions/cycle",
        "Memory instructions the load/store unit of an SM accepts per cycle.",
    ),
    opt(
        "sm.l1_port_depth",
        int(0, 1 << 16),
        "requests",
        "Depth of the load/store unit's port into its L1: requests sent that the L1 has not taken yet (in flight, or queued in the L1 for want of an MSHR). A warp whose lines do not fit stalls (\"the L1's input port is full\"), the store buffer holds its next entry, and both try again when the L1 takes one; L1 invalidations and memory-stress traffic count but are never refused. 0: unbounded (the default, until calibrated).",
    ),
    req(
        "sm.latency.int_alu",
        int(1, LAT),
        "core cycles",
        "Result latency of integer add, logic, shift, compare, move.",
    ),
    req(
        "sm.latency.int_mul",
        int(1, LAT),
        "core cycles",
        "Result latency of integer multiply.",
    ),
    req(
        "sm.latency.int_div",
        int(1, LAT),
        "core cycles",
        "Result latency of integer divide and remainder.",
    ),
    req(
        "sm.latency.fp_alu",
        int(1, LAT),
        "core cycles",
        "Result latency of f32 add, multiply, compare, conversion.",
    ),
    req(
        "sm.latency.fp_div",
        int(1, LAT),
        "core cycles",
        "Result latency of f32 divide.",
    ),
    req(
        "sm.latency.special",
        int(1, LAT),
        "core cycles",
        "Result latency of special-function (transcendental) instructions.",
    ),
    req(
        "sm.latency.branch",
        int(1, LAT),
        "core cycles",
        "Cycles before a warp issues again after a branch.",
    ),
    opt(
        "sm.latency.warp_exchange",
        int(1, LAT),
        "core cycles",
        "Result latency of a warp-level exchange between lanes (shfl.sync, vote.sync, match.sync, redux.sync, activemask). Omitted: sm.latency.special (like the special-function unit's, a variable-latency result the scoreboard waits for; not calibrated).",
    ),
    req(
        "l1.size_bytes",
        int(1, 1 << 24),
        "bytes",
        "L1 data capacity per SM; size / line_bytes / ways sets, a power of two; all SMs' L1s together at most 2 GiB.",
    ),
    req(
        "l1.line_bytes",
        pow2(8, 128),
        "bytes",
        "L1 line; equal to l2.line_bytes.",
    ),
    req(
        "l1.sector_bytes",
        pow2(4, 128),
        "bytes",
        "L1 sector (unit of fills); at most 16 sectors per line.",
    ),
    req("l1.ways", int(1, 256), "ways", "L1 associativity."),
    req(
        "l1.mshrs",
        int(1, DEPTH),
        "MSHRs",
        "Outstanding L1 line misses; a miss beyond them waits.",
    ),
    req(
        "l1.latency",
        int(1, LAT),
        "core cycles",
        "L1 hit latency, also the tag check every request pays before leaving for L2.",
    ),
    req(
        "l1.write_policy",
        Kind::Choice(&["write_through_no_allocate", "write_through_allocate"]),
        "",
        "Whether a store that misses allocates the line (both write through to L2).",
    ),
    req(
        "shared_memory.banks",
        int(1, 256),
        "banks",
        "Banks of local (shared) memory.",
    ),
    req(
        "shared_memory.bank_bytes",
        pow2(1, 64),
        "bytes",
        "Width of one bank.",
    ),
    req(
        "shared_memory.latency",
        int(1, LAT),
        "core cycles",
        "Latency of a conflict-free local-memory access.",
    ),
    req(
        "store_buffer.entries",
        int(0, 4096),
        "entries",
        "Store-buffer entries (one per warp-store per line); 0 disables it.",
    ),
    req(
        "store_buffer.placement",
        Kind::Choice(&["per_warp", "per_sm"]),
        "",
        "Whether `entries` is each warp's capacity or shared by the SM.",
    ),
    req(
        "store_buffer.drain_order",
        Kind::Choice(&["fifo", "per_address"]),
        "",
        "Program order, or ordered per line only (different lines leave in seeded order).",
    ),
    req(
        "store_buffer.drain_delay",
        int(0, LAT),
        "core cycles",
        "Minimum time an entry stays before it may drain.",
    ),
    req(
        "interconnect.latency",
        int(0, LAT),
        "L2 cycles",
        "One-way latency between an SM and an L2 slice.",
    ),
    req(
        "interconnect.bytes_per_cycle",
        int(1, DEPTH),
        "bytes/L2 cycle",
        "Bandwidth of each SM port and each slice port.",
    ),
    req(
        "interconnect.queue_depth",
        int(1, DEPTH),
        "messages",
        "Messages one source port may have in flight before the sender waits.",
    ),
    req(
        "l2.slices",
        int(1, 4096),
        "slices",
        "Address-sliced L2 banks, each the coherence point of its addresses.",
    ),
    req(
        "l2.hash",
        Kind::Choice(&["linear", "xor"]),
        "",
        "Line-to-slice mapping: line index mod slices (and the set within a slice from the index's low bits), or an XOR fold of higher index bits (and the set from an XOR fold of the line's place in its slice, so that power-of-two strides spread over all sets).",
    ),
    req(
        "l2.size_bytes",
        int(1, 1 << 30),
        "bytes",
        "Total L2 capacity; per slice size / slices / line_bytes / ways sets, a power of two.",
    ),
    req(
        "l2.line_bytes",
        pow2(8, 128),
        "bytes",
        "L2 line, also the DRAM transfer unit; equal to l1.line_bytes.",
    ),
    req("l2.ways", int(1, 256), "ways", "L2 associativity."),
    req(
        "l2.latency",
        int(1, LAT),
        "L2 cycles",
        "Slice hit latency, from the slice accepting a request to its response leaving.",
    ),
    req(
        "l2.mshrs",
        int(1, DEPTH),
        "MSHRs",
        "Outstanding misses per slice; beyond them the slice stops accepting requests.",
    ),
    req(
        "l2.partitions",
        int(1, 4096),
        "partitions",
        "Memory partitions: consecutive slices with the DRAM channels behind them (a memory controller); divides l2.slices and dram.channels.",
    ),
    opt(
        "l2.far_latency",
        int(0, LAT),
        "L2 cycles",
        "Two L2 partitions (A100, H100): extra one-way latency between an SM and a slice of the other partition (SMs and slices split in halves by index); 0: one partition.",
    ),
    opt(
        "l2.far_bytes_per_cycle",
        int(0, 1_000_000),
        "bytes per L2 cycle",
        "Two L2 partitions: bytes the inter-partition link carries per L2 cycle in each direction, message headers included (several messages share a cycle; a message that finds the cycles from its arrival full waits, first come first served); 0: unlimited, the link adds only l2.far_latency; ignored when l2.far_latency = 0. Not published for any GPU: the presets' value is an assumption (configs/h100.toml).",
    ),
    opt(
        "l2.near_copy_lines",
        int(0, 1 << 22),
        "lines per SM",
        "Two L2 partitions: per SM, how many far lines' copies its partition keeps for it (the oldest replaced first): a read of a far line read before, its copy still held, takes the near path both ways (no l2.far_latency, no link); writes and atomics go to the home slice and drop the SM's copy; timing only (the value is read at the home slice). 0: every far read crosses. Ignored when l2.far_latency = 0.",
    ),
    opt(
        "l2.input_depth",
        int(0, DEPTH),
        "requests per SM and slice",
        "Credits each SM holds for each slice's input queue: requests it sent to the slice whose credit has not come back (on the way, waiting in the slice's input, or the credit on its way back: interconnect.latency + 1 L2 cycles, plus l2.far_latency from a slice of the other partition). A request without a credit waits in its L1, behind any other for that slice, until one returns; a credit returns when its request leaves the slice's input. Every value of at least 1 makes progress. 0: unbounded (the default, until calibrated).",
    ),
    opt(
        "l2.write_validate",
        Kind::Bool,
        "",
        "Write-validate (NVIDIA's sectored L2 with byte masks; Accel-Sim's lazy fetch-on-read L2): a write miss allocates the line without a DRAM read whatever bytes it covers, and a read or atomic that needs bytes no write has made valid fetches the line then; false: a write miss that covers only part of the line fetches it first.",
    ),
    opt(
        "l2.membar_ack",
        int(0, LAT),
        "L2 cycles",
        "The membar of a cumulative release (fence.sc/fence.acq_rel/membar and release operations at .gpu or .sys scope; OpenCL/SYCL release at device or system scope): once the release's earlier accesses are performed, its SM sends a token to every L2 slice, behind everything it sent before; a slice answers after this many L2 cycles once the token leaves its input, and the release completes when every slice has answered (at system scope with system.svm, plus system.latency). Omitted: no membar round trip, the release completes when its earlier accesses are performed.",
    ),
    req(
        "atomics.combine_same_address_lanes",
        Kind::Bool,
        "",
        "Whether one warp's lanes on one address are one atomic-unit operation (a compiler's warp aggregation); false: one operation per lane, serialised on the address, as the H100's L2 measured (the NVIDIA presets).",
    ),
    req(
        "atomics.work_group_global_at",
        Kind::Choice(&["l1", "l2"]),
        "",
        "Where work_group-scope atomics on global memory execute.",
    ),
    req(
        "atomics.float_add",
        Kind::Choice(&["native", "cas_loop"]),
        "",
        "f32 atomic add done by the unit, or lowered to a compare-exchange loop.",
    ),
    req(
        "atomics.l2.latency",
        int(1, LAT),
        "L2 cycles",
        "ALU latency of one operation in a slice's atomic unit.",
    ),
    req(
        "atomics.l2.ops_per_cycle",
        int(1, 64),
        "operations/L2 cycle",
        "Operations a slice's unit starts per cycle (one address: one per cycle).",
    ),
    opt(
        "atomics.l2.same_address_cycles",
        Kind::Decimal {
            min: 0.25,
            max: 1000.0,
        },
        "L2 cycles per operation",
        "Interval between two operations on one address in a slice's unit (read-modify-write with forwarding); 1 if absent. Other addresses are not held up (atomics.l2.ops_per_cycle).",
    ),
    req(
        "atomics.l2.queue_depth",
        int(1, DEPTH),
        "operations",
        "Operations waiting in a slice's unit before it pushes back.",
    ),
    req(
        "atomics.sm.latency",
        int(1, LAT),
        "core cycles",
        "ALU latency of one operation in an SM's atomic unit (local memory, L1).",
    ),
    req(
        "atomics.sm.ops_per_cycle",
        int(1, 64),
        "operations/core cycle",
        "Operations an SM's unit starts per cycle.",
    ),
    opt(
        "atomics.sm.same_address_cycles",
        Kind::Decimal {
            min: 0.25,
            max: 1000.0,
        },
        "core cycles per operation",
        "Interval between two operations on one address in an SM's unit; 1 if absent.",
    ),
    req(
        "atomics.sm.queue_depth",
        int(1, DEPTH),
        "operations",
        "Operations waiting in an SM's unit before it pushes back.",
    ),
    req(
        "dram.channels",
        int(1, 4096),
        "channels",
        "Independent DRAM channels; lines interleave over them.",
    ),
    req(
        "dram.banks",
        int(1, 1024),
        "banks",
        "Banks per channel, each with one open row.",
    ),
    req(
        "dram.row_bytes",
        int(8, 1 << 20),
        "bytes",
        "Row (page) size of a bank; a multiple of l2.line_bytes.",
    ),
    req(
        "dram.t_rcd",
        int(1, 10_000),
        "DRAM cycles",
        "Activate to column command.",
    ),
    req(
        "dram.t_cas",
        int(1, 10_000),
        "DRAM cycles",
        "Column command to data.",
    ),
    req(
        "dram.t_rp",
        int(1, 10_000),
        "DRAM cycles",
        "Precharge (closing the open row of a bank).",
    ),
    req(
        "dram.bytes_per_cycle",
        int(1, 4096),
        "bytes/DRAM cycle",
        "Data one channel moves per DRAM cycle.",
    ),
    req(
        "dram.queue_depth",
        int(1, DEPTH),
        "requests",
        "Requests one channel holds; beyond them a request waits.",
    ),
    req(
        "dram.controller_latency",
        int(0, LAT),
        "DRAM cycles",
        "Fixed latency of the memory controller, PHY and on-die path, added to every DRAM access.",
    ),
    opt(
        "dram.bank_groups",
        int(1, 64),
        "groups",
        "Bank groups per channel (banks assigned round-robin); divides dram.banks. Default 1 (none).",
    ),
    opt(
        "dram.t_ccd_l",
        int(0, 10_000),
        "DRAM cycles",
        "Least distance between two bursts from the same bank group (tCCD_L); default 0 (a burst).",
    ),
    opt(
        "dram.t_wtr",
        int(0, 10_000),
        "DRAM cycles",
        "Write-to-read turnaround on a channel's data bus; default 0.",
    ),
    opt(
        "dram.t_rtw",
        int(0, 10_000),
        "DRAM cycles",
        "Read-to-write turnaround on a channel's data bus; default 0.",
    ),
    opt(
        "dram.frfcfs_cap",
        int(0, 1_000_000),
        "requests",
        "FR-FCFS scheduling: requests waiting for a busy bank are served open-row hits first; the oldest may be overtaken at most this many times (bounded starvation). Default 0: first-come first-served, each access booked at its arrival.",
    ),
    req(
        "system.latency",
        int(0, LAT),
        "core cycles",
        "Extra round trip to the host-visible coherence point, added to the acknowledgement of a system-level write (what a system-scope release waits for) and, with l2.membar_ack, to the answer of a system-scope membar; system-scope loads and atomics of device memory are served by the L2 like device-scope ones.",
    ),
    req(
        "system.svm",
        Kind::Bool,
        "",
        "Shared virtual memory; without it system scope is device scope.",
    ),
    req(
        "support.atomic_orders",
        Kind::Set(ORDERS),
        "",
        "Memory orders atomics support; must include relaxed (the SYCL 2020 minimum).",
    ),
    req(
        "support.atomic_scopes",
        Kind::Set(SCOPES),
        "",
        "Scopes atomics support: at least work_group (the SYCL 2020 minimum); a supported scope implies every narrower one.",
    ),
    req(
        "support.fence_orders",
        Kind::Set(ORDERS),
        "",
        "Memory orders fences support: at least acquire, release and acq_rel (the SYCL 2020 minimum); never relaxed (a relaxed fence orders nothing).",
    ),
    req(
        "support.fence_scopes",
        Kind::Set(SCOPES),
        "",
        "Scopes fences support: at least work_group (the SYCL 2020 minimum); a supported scope implies every narrower one.",
    ),
    opt(
        "stress.interconnect_jitter",
        int(0, LAT),
        "L2 cycles",
        "Seeded extra 0..=N cycles on each interconnect message (FIFO per path kept).",
    ),
    opt(
        "stress.drain_jitter",
        int(0, LAT),
        "core cycles",
        "Seeded extra 0..=N cycles before a store-buffer entry may drain.",
    ),
    opt(
        "stress.start_skew",
        int(0, LAT),
        "core cycles",
        "Seeded 0..=N cycles of start delay per warp.",
    ),
    opt(
        "stress.stress_warps",
        int(0, 1024),
        "warps",
        "Memory-stress pseudo-warps per SM loading and storing a scratch region while workload warps are resident.",
    ),
    opt(
        "stress.prewarm_l1",
        Kind::Bool,
        "",
        "Fill every L1 with the initial memory before the run, each L1 in its own seeded order (a random subset of lines when the buffers exceed it: stale lines for later readers).",
    ),
    opt(
        "stress.randomise_placement",
        Kind::Bool,
        "",
        "Litmus runner: seeded random lanes, SMs and location interleaving per launch instead of the fixed layout.",
    ),
    opt(
        "stress.large_skew",
        int(0, LAT),
        "core cycles",
        "Start skew of a run drawn large (see `large_skew_percent`): warps' start delays are seeded 0..=N cycles instead of 0..=`start_skew`, so that threads often run almost one after another.",
    ),
    opt(
        "stress.large_skew_percent",
        int(0, 100),
        "% of runs",
        "Chance per run (each litmus launch is one) that its start skew is `large_skew`; needs `large_skew` ≥ `start_skew` and > 0 when not 0.",
    ),
    opt(
        "stress.issue_stall",
        int(0, LAT),
        "core cycles",
        "Longest seeded issue stall: a stalled warp issues nothing for 1..=N further cycles after an instruction.",
    ),
    opt(
        "stress.issue_stall_percent",
        int(0, 100),
        "% of instructions (most)",
        "Most chance per issued warp instruction of an issue stall: each run draws its chance uniformly from 0..=N %; needs `issue_stall` ≥ 1 when not 0.",
    ),
    opt(
        "stress.load_delay",
        int(0, LAT),
        "core cycles",
        "Longest seeded hold of a global load before it is sent to the L1 (a replay queue); later independent accesses proceed, later accesses to its lines wait (`ordering::held_load_blocks`).",
    ),
    opt(
        "stress.load_delay_percent",
        int(0, 100),
        "% of loads (most)",
        "Most chance per global load instruction of being held 1..=`load_delay` cycles: each run draws its chance uniformly from 0..=N %; needs `load_delay` ≥ 1 when not 0.",
    ),
    opt(
        "stress.l1_atomics_percent",
        int(0, 100),
        "% of runs",
        "Chance per run that work_group-scope atomics on global memory run at the L1, as with `atomics.work_group_global_at = \"l1\"`.",
    ),
    opt(
        "watchdog.max_cycles",
        int(1, 1_000_000_000_000),
        "core cycles",
        "A run that reaches this cycle stops with a diagnosis.",
    ),
    opt(
        "watchdog.no_progress_cycles",
        int(1, 1_000_000_000_000),
        "core cycles",
        "A run whose machine state has only repeated for this many cycles stops with a no-progress diagnosis.",
    ),
];

/// The entry for a dotted path.
pub fn find(path: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.path == path)
}

/// Whether `path` names a table (a proper prefix of some key); `""` is the root.
pub fn is_table(path: &str) -> bool {
    path.is_empty()
        || KEYS.iter().any(|k| {
            k.path.len() > path.len()
                && k.path.starts_with(path)
                && k.path.as_bytes()[path.len()] == b'.'
        })
}

/// The names allowed directly under table `path` (`""`: the root), in table order.
pub fn children(path: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in KEYS {
        let rest = if path.is_empty() {
            Some(k.path)
        } else {
            k.path.strip_prefix(path).and_then(|r| r.strip_prefix('.'))
        };
        if let Some(rest) = rest {
            let name = rest.split('.').next().unwrap_or(rest);
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// "a, b, c" of the keys allowed under table `path`, for unknown-key messages.
pub fn describe_children(path: &str) -> String {
    let mut s = String::new();
    for (i, c) in children(path).iter().enumerate() {
        let _ = write!(s, "{}{c}", if i > 0 { ", " } else { "" });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_tables_never_keys() {
        for (i, k) in KEYS.iter().enumerate() {
            assert!(
                KEYS[i + 1..].iter().all(|o| o.path != k.path),
                "{} twice",
                k.path
            );
            assert!(!is_table(k.path), "{} is both a key and a table", k.path);
        }
    }

    #[test]
    fn children_list_the_next_level_only() {
        assert_eq!(
            children("atomics"),
            vec![
                "combine_same_address_lanes",
                "work_group_global_at",
                "float_add",
                "l2",
                "sm"
            ]
        );
        assert!(children("").contains(&"clocks") && children("").contains(&"name"));
        assert!(is_table("sm.latency") && !is_table("sm.lat") && !is_table("l2.ways"));
    }

    #[test]
    fn check_states_ranges_kinds_and_set_rules() {
        let ways = find("l2.ways").unwrap();
        assert_eq!(
            ways.check(&toml::Value::Integer(0)).unwrap_err(),
            "must be at least 1"
        );
        assert!(ways.check(&toml::Value::Integer(-3)).is_err());
        assert!(ways
            .check(&toml::Value::String("4".into()))
            .unwrap_err()
            .starts_with("expected integer"));
        let line = find("l1.line_bytes").unwrap();
        assert!(line
            .check(&toml::Value::Integer(96))
            .unwrap_err()
            .contains("power of two"));
        assert!(line
            .check(&toml::Value::Integer(256))
            .unwrap_err()
            .contains("at most 128"));
        let hash = find("l2.hash").unwrap();
        assert!(hash.check(&toml::Value::String("xor".into())).is_ok());
        assert!(hash
            .check(&toml::Value::String("mod".into()))
            .unwrap_err()
            .contains("linear, xor"));
        let orders = find("support.atomic_orders").unwrap();
        let list = |v: &[&str]| {
            toml::Value::Array(
                v.iter()
                    .map(|s| toml::Value::String(s.to_string()))
                    .collect(),
            )
        };
        assert!(orders.check(&list(&["relaxed"])).is_ok());
        assert!(orders.check(&list(&[])).is_err());
        assert!(orders
            .check(&list(&["relaxed", "relaxed"]))
            .unwrap_err()
            .contains("twice"));
        assert!(orders
            .check(&list(&["consume"]))
            .unwrap_err()
            .contains("not one of"));
    }
}
