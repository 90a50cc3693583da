//! The one builder: every part of the GPU from a validated config, each given its own spec (its table
//! of the config) and the resources it needs — clocks, the address-to-slice map, the crossbar's
//! parameters, the units inside it — never the whole config (STYLE.md "Spec, state, wiring"; MGPUSim's
//! builders). Parts never construct their neighbours. The parts go into their simulation domains
//! (`domain.rs`): one per SM with its L1, one per memory partition.
//!
//! Each domain draws from its own seeded random stream; the dispatcher's stream orders the L1
//! pre-warming (`stress.prewarm_l1`); a stream of its own draws the run's stress variety
//! ([`RunStress`]).

use super::atomic_unit::AtomicUnit;
use super::domain::{PartDomain, SmDomain};
use super::dram::Dram;
use super::l1::{L1Resources, L1};
use super::l2::L2Slice;
use super::memory::GlobalMemory;
use super::near_copy::NearCopies;
use super::outbox::Outbox;
use super::pool::{Pool, MAX_LINE};
use super::slice_map::SliceMap;
use super::sm::{
    Launch, Lsu, LsuResources, SharedMemory, Sm, SmResources, StressWarps, WarpStress,
};
use super::store_buffer::StoreBuffer;
use super::xbar::{SinkPort, XbarSpec};
use crate::config::{GpuConfig, WorkGroupAtomicSite};
use crate::engine::{Clock, EventQueue, Time};
use crate::rng::SplitMix64;
use rayon::prelude::*;
use std::sync::Arc;

/// Random stream ids: the dispatcher's (kept from the sequential machine), then one per domain.
const DISPATCH_STREAM: u64 = 0x6770_7573;
const SM_STREAM: u64 = 0x5300_0000;
const PARTITION_STREAM: u64 = 0x5000_0000;
/// The run's own stress draws (`RunStress`); drawn only for a config that asks for them.
const RUN_STRESS_STREAM: u64 = 0x5275_6e53;

/// What the stress settings draw once per run (one litmus launch is one run), so that runs differ
/// from each other as a whole, not only instruction by instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStress {
    /// Bound of each warp's start delay, core cycles (`stress.start_skew`, or `stress.large_skew`
    /// in a `stress.large_skew_percent` share of runs).
    pub start_skew: u32,
    /// work_group-scope atomics on global memory run at the L1 (`atomics.work_group_global_at =
    /// "l1"`, or in a `stress.l1_atomics_percent` share of runs).
    pub work_group_atomics_at_l1: bool,
    /// The run's chance (%) of an issue stall per instruction, uniform in
    /// 0..=`stress.issue_stall_percent`, and of a hold per global load, uniform in
    /// 0..=`stress.load_delay_percent`: some runs barely stall, others often.
    pub issue_stall_percent: u32,
    pub load_delay_percent: u32,
}

impl RunStress {
    /// The draws of the run with `seed`; a config without per-run variety draws nothing.
    pub fn draw(cfg: &GpuConfig, seed: u64) -> RunStress {
        let s = &cfg.stress;
        let mut rng = SplitMix64::stream(seed, RUN_STRESS_STREAM);
        let mut chance = |percent: u32| percent > 0 && rng.below(100) < percent as u64;
        let large = chance(s.large_skew_percent);
        let l1 = chance(s.l1_atomics_percent);
        let issue_stall_percent = rng.upto(s.issue_stall_percent);
        let load_delay_percent = rng.upto(s.load_delay_percent);
        RunStress {
            issue_stall_percent,
            load_delay_percent,
            start_skew: if large { s.large_skew } else { s.start_skew },
            work_group_atomics_at_l1: l1
                || cfg.atomics.work_group_global_at == WorkGroupAtomicSite::L1,
        }
    }
}

/// The assembled parts, in their domains.
pub struct Machine {
    pub sms: Vec<SmDomain>,
    pub parts: Vec<PartDomain>,
    /// Slices per memory partition.
    pub slices_per_part: u16,
    /// The lookahead of parallel simulation: no crossbar message arrives sooner after it was sent.
    pub window: Time,
}

/// The L2 as a copy of `ranges` (base, bytes) into memory just before the launch leaves it: every line
/// written (dirty) in address order, a later line evicting an earlier one where a set is full, as the
/// copy's own writes would; nothing is written back (the copy's time is before the launch). With near
/// copies, each SM's partition holds the copied lines' last ones too (`NearCopies::warm`).
pub fn warm_l2(cfg: &GpuConfig, m: &mut Machine, ranges: &[(u64, u64)]) {
    let map = SliceMap::new(&cfg.l2);
    let lb = cfg.l2.line_bytes as u64;
    let spp = m.slices_per_part as usize;
    for &(base, bytes) in ranges {
        let mut line = base / lb * lb;
        while line < base + bytes {
            let s = map.slice_of(line) as usize;
            m.parts[s / spp].slices[s % spp].preload(line);
            line += lb;
        }
    }
    for d in &mut m.sms {
        if let Some(n) = &mut d.l1.near {
            n.warm(ranges, lb);
        }
    }
}

/// The crossbar's parameters.
pub fn xbar(cfg: &GpuConfig) -> XbarSpec {
    let l2_clock = Clock::from_mhz(cfg.clocks.l2_mhz);
    XbarSpec::new(&cfg.interconnect, l2_clock, cfg.stress.interconnect_jitter).with_far(
        cfg.l2.far_latency,
        cfg.sm.count,
        cfg.l2.slices,
    )
}

/// An atomic unit of the SM side (shared memory, L1) in the core clock.
fn sm_atomic_unit(cfg: &GpuConfig) -> AtomicUnit {
    let clock = Clock::from_mhz(cfg.clocks.core_mhz);
    AtomicUnit::new(
        clock,
        &cfg.atomics.sm,
        cfg.atomics.combine_same_address_lanes,
    )
}

/// SM `id`; `scratch`: the stress warps' region (base, bytes), when the config has stress warps;
/// `run`: the run's stress draws.
pub fn sm(
    cfg: &GpuConfig,
    id: u16,
    launch: &Arc<Launch>,
    scratch: Option<(u64, u64)>,
    run: RunStress,
) -> Sm {
    let clock = Clock::from_mhz(cfg.clocks.core_mhz);
    let warp_stress = WarpStress::new(&cfg.stress, run.issue_stall_percent, run.load_delay_percent);
    let lsu = Lsu::new(LsuResources {
        sm: id,
        clock,
        line_bytes: cfg.l1.line_bytes,
        svm: cfg.system.svm,
        work_group_atomics_at_l1: run.work_group_atomics_at_l1,
        warp_stress,
        store_buffer: StoreBuffer::new(&cfg.store_buffer),
        drain_delay: cfg.store_buffer.drain_delay as u64,
        drain_jitter: cfg.stress.drain_jitter,
        l1_port_depth: cfg.sm.l1_port_depth,
        values: launch.program.has_values(),
    });
    let res = SmResources {
        clock,
        line_bytes: cfg.l1.line_bytes,
        svm: cfg.system.svm,
        membar: cfg.l2.membar_ack.is_some(),
        warp_stress,
        lsu,
        shared: SharedMemory::new(&cfg.shared_memory, clock, sm_atomic_unit(cfg)),
        stress: scratch.map(|(base, bytes)| {
            StressWarps::new(cfg.stress.stress_warps, base, bytes, cfg.l1.line_bytes)
        }),
    };
    Sm::new(id, &cfg.sm, launch, res)
}

/// The L1 of SM `id`; `values`: whether the run has values.
pub fn l1(cfg: &GpuConfig, id: u16, values: bool) -> L1 {
    let res = L1Resources {
        clock: Clock::from_mhz(cfg.clocks.core_mhz),
        system_latency: cfg.system.latency as u64,
        slices: SliceMap::new(&cfg.l2),
        xbar: xbar(cfg),
        atomic: sm_atomic_unit(cfg),
        values,
        near_copies: (cfg.l2.far_latency > 0 && cfg.l2.near_copy_lines > 0)
            .then(|| NearCopies::new(cfg.l2.near_copy_lines)),
        input_depth: cfg.l2.input_depth,
    };
    L1::new(id, &cfg.l1, res)
}

/// L2 slice `id`.
pub fn slice(cfg: &GpuConfig, id: u16) -> L2Slice {
    let clock = Clock::from_mhz(cfg.clocks.l2_mhz);
    let unit = AtomicUnit::new(
        clock,
        &cfg.atomics.l2,
        cfg.atomics.combine_same_address_lanes,
    );
    L2Slice::new(id, &cfg.l2, clock, unit, xbar(cfg), cfg.sm.count as usize)
}

/// The DRAM channels of one memory partition.
pub fn dram(cfg: &GpuConfig) -> Dram {
    let clock = Clock::from_mhz(cfg.clocks.dram_mhz);
    Dram::partition(&cfg.dram, clock, cfg.l2.line_bytes, cfg.l2.partitions)
}

/// Every part from `cfg` in its domain. `mem` holds the initial values (pre-warmed into the L1s if
/// the config asks) and is then split among the partitions. `parallel`: the domains are built on the
/// current thread pool side by side (each from its own seed and spec, so they are the same parts;
/// most of the time is the host's first touch of their memory).
pub fn build(
    cfg: &GpuConfig,
    mem: GlobalMemory,
    launch: &Arc<Launch>,
    seed: u64,
    parallel: bool,
) -> Machine {
    let scratch = mem
        .placed
        .iter()
        .find(|p| p.name == "<scratch>")
        .map(|p| (p.base, p.bytes));
    let nsm = cfg.sm.count as usize;
    let nparts = cfg.l2.partitions as usize;
    let spp = cfg.l2.slices as usize / nparts;
    let mut rng = SplitMix64::stream(seed, DISPATCH_STREAM);
    let run = RunStress::draw(cfg, seed);
    let values = mem.has_values();
    let mut l1s = map_each(vec![(); nsm], parallel, |(i, ())| l1(cfg, i as u16, values));
    if cfg.stress.prewarm_l1 {
        prewarm(cfg, &mem, &mut l1s, &mut rng);
    }
    let map = SliceMap::new(&cfg.l2);
    let (bounds, shards) = mem.split(cfg.l2.line_bytes, nparts, |line| {
        map.slice_of(line) as usize / spp
    });
    let make_sm = |(i, l1): (usize, L1)| SmDomain {
        sm: sm(cfg, i as u16, launch, scratch, run),
        l1,
        q: EventQueue::new(),
        lines: Pool::default(),
        batches: Pool::default(),
        mem: GlobalMemory {
            backing: bounds.backing.clone(),
            placed: bounds.placed.clone(),
            changes: 0,
            digest: 0,
        },
        out: Outbox::default(),
        rng: SplitMix64::stream(seed, SM_STREAM + i as u64),
        sink: SinkPort::new(cfg.l2.slices as usize),
        inbox: Default::default(),
        notices: Vec::new(),
        progress: 0,
        halted: false,
        group_threads: 0,
        group_warps: 0,
        start_skew: run.start_skew,
        prov: None,
        rec: None,
    };
    let sms = map_each(l1s, parallel, make_sm);
    let make_part = |(p, mem): (usize, GlobalMemory)| PartDomain {
        first: (p * spp) as u16,
        slices: (p * spp..(p + 1) * spp)
            .map(|i| slice(cfg, i as u16))
            .collect(),
        dram: dram(cfg),
        q: EventQueue::new(),
        lines: Pool::default(),
        batches: Pool::default(),
        mem,
        out: Outbox::default(),
        rng: SplitMix64::stream(seed, PARTITION_STREAM + p as u64),
        sinks: vec![SinkPort::new(nsm); spp],
        inbox: Default::default(),
        prov: None,
        rec: None,
    };
    let parts = map_each(shards, parallel, make_part);
    Machine {
        sms,
        parts,
        slices_per_part: spp as u16,
        window: xbar(cfg).min_transit(),
    }
}

/// `f` on every item with its index, in order; on the current thread pool side by side when
/// `parallel`.
fn map_each<T: Send, U: Send>(
    items: Vec<T>,
    parallel: bool,
    f: impl Fn((usize, T)) -> U + Sync + Send,
) -> Vec<U> {
    if parallel {
        items.into_par_iter().enumerate().map(f).collect()
    } else {
        items.into_iter().enumerate().map(f).collect()
    }
}

/// `stress.prewarm_l1`: each L1 starts holding the initial values of the workload's lines, in a
/// seeded order of its own, so that (when the buffers exceed the L1) every SM keeps a different
/// random subset: some later reads hit stale lines, others miss and see fresh values. The stress
/// warps' scratch region is not pre-warmed (it would push the workload's lines out).
fn prewarm(cfg: &GpuConfig, mem: &GlobalMemory, l1s: &mut [L1], rng: &mut SplitMix64) {
    let lb = cfg.l1.line_bytes as u64;
    let mut lines: Vec<u64> = Vec::new();
    for p in mem.placed.iter().filter(|p| p.name != "<scratch>") {
        let mut line = p.base & !(lb - 1);
        while line < p.base + p.bytes {
            lines.push(line);
            line += lb;
        }
    }
    for l1 in l1s {
        for i in (1..lines.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            lines.swap(i, j);
        }
        for &line in &lines {
            let mut buf = [0u8; MAX_LINE];
            mem.read_line(line, lb as u32, &mut buf);
            l1.prewarm(line, &buf);
        }
    }
}
