//! The hardware description, mirroring the TOML one struct per table. Every struct denies unknown keys;
//! `validate.rs` checks the values after parsing and names the key path, the value and what is allowed.
//! Each field has one row in `keys.rs` (kind, range, unit, description); `keys.rs` says how to add a key.
//!
//! Units: latencies of SM-side parts (`sm`, `l1`, `shared_memory`, `store_buffer`, `atomics.sm`) are in
//! core cycles; `interconnect`, `l2` and `atomics.l2` in L2 cycles; `dram` in DRAM command-clock cycles;
//! `system.latency` in core cycles. The engine converts each to picoseconds with its clock domain.

use crate::ir::{MemOrder, Scope};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Human name of the modelled GPU.
    pub name: String,
    pub clocks: Clocks,
    pub sm: SmSpec,
    pub l1: L1Spec,
    pub shared_memory: SharedMemSpec,
    pub store_buffer: StoreBufferSpec,
    pub interconnect: InterconnectSpec,
    pub l2: L2Spec,
    pub atomics: AtomicsSpec,
    pub dram: DramSpec,
    pub system: SystemSpec,
    pub support: SupportSpec,
    #[serde(default)]
    pub stress: StressSpec,
    #[serde(default)]
    pub watchdog: WatchdogSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    /// SM (core) clock, MHz.
    pub core_mhz: u32,
    /// Interconnect and L2 clock, MHz.
    pub l2_mhz: u32,
    /// DRAM command clock, MHz.
    pub dram_mhz: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarpPolicy {
    /// Greedy-then-oldest: keep issuing from the last warp until it stalls.
    Gto,
    /// Loose round-robin.
    Lrr,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmSpec {
    pub count: u32,
    pub warp_size: u32,
    /// Warp schedulers per SM; warps are assigned to schedulers round-robin.
    pub schedulers: u32,
    /// Instructions one scheduler may issue per cycle.
    pub issue_width: u32,
    pub warp_policy: WarpPolicy,
    /// Occupancy limits per SM.
    pub max_groups: u32,
    pub max_warps: u32,
    pub max_threads: u32,
    pub max_shared_bytes: u32,
    /// Memory instructions the LSU accepts per cycle (per SM).
    pub lsu_per_cycle: u32,
    /// Requests the LSU's port into the L1 holds that the L1 has not taken yet (sent, or waiting in
    /// the L1's input queue for an MSHR); a full port stalls the sender. 0: unbounded.
    #[serde(default)]
    pub l1_port_depth: u32,
    pub latency: InstLatency,
}

impl SmSpec {
    /// Whether a work-group of `threads` work-items and `local_bytes` of local memory fits one empty
    /// SM (the occupancy limits); `Err` says what it needs against what the SM has.
    pub fn group_fits(&self, threads: u32, local_bytes: u32) -> Result<(), String> {
        let warps = threads.div_ceil(self.warp_size);
        if threads > self.max_threads
            || warps > self.max_warps
            || local_bytes > self.max_shared_bytes
        {
            return Err(format!(
                "a work-group of {threads} work-items ({warps} warps, {local_bytes} bytes of local \
                 memory) does not fit one SM (sm.max_threads = {}, sm.max_warps = {}, \
                 sm.max_shared_bytes = {})",
                self.max_threads, self.max_warps, self.max_shared_bytes
            ));
        }
        Ok(())
    }
}

/// Result latencies of non-memory instructions, core cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstLatency {
    pub int_alu: u32,
    pub int_mul: u32,
    pub int_div: u32,
    pub fp_alu: u32,
    pub fp_div: u32,
    pub special: u32,
    pub branch: u32,
    /// Result latency of a warp-level exchange (`shfl`, `vote`, `match`, `redux`, `activemask`);
    /// `None`: `special` (on Volta-Hopper `SHFL` and the votes are, like `MUFU`, variable-latency
    /// instructions whose result the scoreboard waits for; not calibrated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_exchange: Option<u32>,
}

impl InstLatency {
    /// The result latency of a warp-level exchange, core cycles.
    pub fn warp_exchange(&self) -> u32 {
        self.warp_exchange.unwrap_or(self.special)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L1WritePolicy {
    /// Stores update a present line and are forwarded to L2; misses do not allocate.
    WriteThroughNoAllocate,
    /// Stores update or allocate the line and are forwarded to L2.
    WriteThroughAllocate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Spec {
    pub size_bytes: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub ways: u32,
    pub mshrs: u32,
    /// Hit latency, core cycles.
    pub latency: u32,
    pub write_policy: L1WritePolicy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedMemSpec {
    pub banks: u32,
    pub bank_bytes: u32,
    /// Latency of a conflict-free access, core cycles.
    pub latency: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SbPlacement {
    PerWarp,
    PerSm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainOrder {
    /// Entries leave in program order.
    Fifo,
    /// Entries to the same address leave in order; different addresses in any (seeded) order.
    PerAddress,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreBufferSpec {
    /// Entries (one per coalesced line-store); 0 disables the buffer (stores go straight to L1).
    pub entries: u32,
    pub placement: SbPlacement,
    pub drain_order: DrainOrder,
    /// Minimum cycles an entry stays before it may drain, core cycles.
    pub drain_delay: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectSpec {
    /// One-way latency SM ↔ L2 slice, L2 cycles.
    pub latency: u32,
    /// Bytes per L2 cycle per port (each SM port and each slice port).
    pub bytes_per_cycle: u32,
    /// Messages one source port may have in flight before the sender must wait.
    pub queue_depth: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SliceHash {
    /// `slice = line_index mod slices`.
    Linear,
    /// XOR-fold of the line index's higher bits into the slice bits, and into the set index within the
    /// slice (spreads strided patterns over slices and sets).
    Xor,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Spec {
    pub slices: u32,
    pub hash: SliceHash,
    /// Total capacity over all slices.
    pub size_bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    /// Hit latency, L2 cycles.
    pub latency: u32,
    /// Outstanding misses per slice.
    pub mshrs: u32,
    /// Memory partitions: groups of `slices / partitions` consecutive slices with the
    /// `dram.channels / partitions` DRAM channels behind them.
    pub partitions: u32,
    /// Extra one-way latency between an SM and a slice of the other L2 partition, L2 cycles (0: one
    /// partition).
    #[serde(default)]
    pub far_latency: u32,
    /// Bytes per L2 cycle the inter-partition link carries in each direction, headers included
    /// (0: unlimited, the link is a latency only).
    #[serde(default)]
    pub far_bytes_per_cycle: u32,
    /// Write-validate: a write miss allocates the line without reading DRAM whatever bytes it
    /// covers, the slice keeps which bytes are valid, and a read or atomic that needs an invalid
    /// byte fetches the line then (false: a partial write miss fetches the line first).
    #[serde(default)]
    pub write_validate: bool,
    /// Per SM, far lines whose copy its L2 partition holds for it (`machine/near_copy.rs`; 0: none,
    /// every read of a far line crosses). Ignored with one partition.
    #[serde(default)]
    pub near_copy_lines: u32,
    /// Per SM and slice, requests the SM may have sent to the slice whose credit has not come back
    /// (in flight, waiting in the slice's input, or the credit on its way back; `machine/credit.rs`).
    /// 0: unbounded.
    #[serde(default)]
    pub input_depth: u32,
    /// L2 cycles a slice takes to answer a membar token once the token leaves its input
    /// (`machine/ordering`, `membar`): a cumulative release at device or system scope completes only
    /// when every slice has answered (and, at system level, after the system point's round trip).
    /// `None`: no membar round trip; the release completes when its precondition holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membar_ack: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkGroupAtomicSite {
    /// work_group-scope atomics on global memory run in the SM's L1 atomic unit.
    L1,
    /// ... or at the L2 slice like device scope.
    L2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloatAtomicAdd {
    /// The atomic unit adds f32 natively.
    Native,
    /// f32 add is lowered to a compare-exchange retry loop at load time.
    CasLoop,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicUnitSpec {
    /// ALU latency of one operation, in the unit's clock.
    pub latency: u32,
    /// Operations started per cycle (different addresses pipeline; one address serialises).
    pub ops_per_cycle: u32,
    /// Operations waiting before the unit pushes back.
    pub queue_depth: u32,
    /// Cycles one address is busy per operation (read-modify-write with forwarding): the interval
    /// between two operations on one address. Optional, 1 by default.
    #[serde(default = "one_cycle")]
    pub same_address_cycles: f64,
}

fn one_cycle() -> f64 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicsSpec {
    /// Whether one warp's lanes on the same address are combined into one operation.
    pub combine_same_address_lanes: bool,
    pub work_group_global_at: WorkGroupAtomicSite,
    pub float_add: FloatAtomicAdd,
    /// Units in each L2 slice (L2 cycles).
    pub l2: AtomicUnitSpec,
    /// Unit of each SM for shared memory and L1-resident atomics (core cycles).
    pub sm: AtomicUnitSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    pub channels: u32,
    pub banks: u32,
    pub row_bytes: u32,
    /// Activate to read/write, DRAM cycles.
    pub t_rcd: u32,
    /// Column access latency, DRAM cycles.
    pub t_cas: u32,
    /// Precharge, DRAM cycles.
    pub t_rp: u32,
    /// Data bytes one channel moves per DRAM cycle.
    pub bytes_per_cycle: u32,
    /// Requests one channel queues.
    pub queue_depth: u32,
    /// Fixed latency of the memory controller, PHY and on-die path, added to every access, DRAM cycles.
    pub controller_latency: u32,
    /// Bank groups per channel (banks are assigned round-robin); 1: none.
    #[serde(default = "one")]
    pub bank_groups: u32,
    /// Least distance between two bursts from one bank group, DRAM cycles (0: a burst).
    #[serde(default)]
    pub t_ccd_l: u32,
    /// Write-to-read turnaround on a channel's bus, DRAM cycles.
    #[serde(default)]
    pub t_wtr: u32,
    /// Read-to-write turnaround on a channel's bus, DRAM cycles.
    #[serde(default)]
    pub t_rtw: u32,
    /// FR-FCFS: a bank with requests waiting serves a row hit before older row misses, each request
    /// overtaken at most this many times (bounded starvation); 0: first-come first-served (booked at
    /// arrival).
    #[serde(default)]
    pub frfcfs_cap: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    /// Extra round-trip latency of the system coherence point, core cycles, paid by the
    /// acknowledgement of a system-level write (loads and atomics of device memory are served by
    /// the L2).
    pub latency: u32,
    /// Shared virtual memory: without it, system scope is device scope (SYCL/OpenCL rule).
    pub svm: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupportSpec {
    /// Orders atomics support (SYCL `atomic_memory_order_capabilities`).
    pub atomic_orders: Vec<MemOrder>,
    pub atomic_scopes: Vec<Scope>,
    pub fence_orders: Vec<MemOrder>,
    pub fence_scopes: Vec<Scope>,
}

/// Seeded randomness that exposes weak behaviour (issue 3); all zero = deterministic fixed timing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StressSpec {
    /// Extra 0..=N L2 cycles on each interconnect message (per path, FIFO kept per source/destination pair).
    pub interconnect_jitter: u32,
    /// Extra 0..=N core cycles before a store-buffer entry may drain.
    pub drain_jitter: u32,
    /// Extra 0..=N core cycles of start skew per warp.
    pub start_skew: u32,
    /// Warps per SM that issue random traffic to a scratch region while the workload runs.
    pub stress_warps: u32,
    /// Fill the L1s with the initial memory before the run (stale lines for later readers).
    pub prewarm_l1: bool,
    /// Litmus runner: draw each launch's thread placement (lanes, SMs) and the interleaving of
    /// instances' locations at random (seeded) instead of the fixed layout.
    pub randomise_placement: bool,
    /// Per run (litmus launch): with chance `large_skew_percent` %, warps' start delays are drawn
    /// from 0..=`large_skew` instead of 0..=`start_skew` core cycles.
    pub large_skew: u32,
    pub large_skew_percent: u32,
    /// Per issued warp instruction: with the run's chance (uniform in 0..=`issue_stall_percent`
    /// %), the warp issues nothing for 1..=`issue_stall` further core cycles.
    pub issue_stall: u32,
    pub issue_stall_percent: u32,
    /// Per global load instruction: with the run's chance (uniform in 0..=`load_delay_percent` %),
    /// it is held 1..=`load_delay` core cycles before it is sent to the L1 (`ordering::held_load_blocks` says what may pass it).
    pub load_delay: u32,
    pub load_delay_percent: u32,
    /// Per run: with chance `l1_atomics_percent` %, work_group-scope atomics on global memory run
    /// at the L1 (as with `atomics.work_group_global_at = "l1"`).
    pub l1_atomics_percent: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchdogSpec {
    /// A run that reaches this many core cycles stops with a diagnosis.
    pub max_cycles: u64,
    /// Core cycles without forward progress (no memory value changed, no warp finished, no barrier
    /// released, no work-group dispatched) after which the run stops with a no-progress diagnosis.
    pub no_progress_cycles: u64,
}

impl Default for WatchdogSpec {
    fn default() -> Self {
        WatchdogSpec {
            max_cycles: 50_000_000,
            no_progress_cycles: 200_000,
        }
    }
}
