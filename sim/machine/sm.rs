//! A streaming multiprocessor: resident work-groups, their warps (sub-groups), warp schedulers, SIMT
//! execution, the load/store unit with its coalescer, the store buffer, shared (local) memory with bank
//! conflicts and its atomic unit, and the memory-ordering rules of DESIGN.md's table.
//!
//! Execution: each warp keeps one PC per lane; the scheduler runs the lanes at the lowest PC (lanes that
//! diverged reconverge when their PCs meet, as with a post-dominator stack for structured code). A
//! group of lanes that keeps branching backwards while other lanes of its warp wait is rotated out
//! after a bounded number of iterations, as independent thread scheduling does, so spin loops inside a
//! warp make progress. Registers are tracked by a scoreboard: a result is ready `latency` cycles after
//! issue, a load's when its data returns. Each scheduler issues up to `issue_width` instructions per
//! cycle, greedy-then-oldest or round-robin.
//!
//! Memory ordering (per warp; a warp's lanes share the counters, which is stronger than per-thread
//! and therefore sound):
//! - plain/relaxed stores go to the store buffer (or straight to L1 without one);
//! - a release (store, RMW, fence, barrier) waits until every earlier load has returned and every
//!   earlier store has been accepted by the L1 (work_group scope and narrower) or acknowledged by
//!   L2 (device) / the system point (system); at device scope or wider it also waits until every
//!   write the SM sent to its L1 before it is acknowledged (the SM's write frontier): the L1 is shared
//!   and write-through, so the warp may have read another warp's write before it reached L2, and PTX
//!   orders writes a thread observed before its release (cumulativity);
//! - an acquire (load, RMW, fence) blocks every later memory operation until it completes; at device
//!   scope or wider it then invalidates the SM's L1;
//! - seq_cst is both, and waits for everything earlier to complete: all seq_cst operations are then
//!   performed at one point in time each, in program order, which gives the single total order;
//! - atomics at work_group scope or narrower run at the SM (shared-memory unit, or the L1 with
//!   `work_group_global_at = "l1"`), wider ones at the L2 slice; local-memory atomics narrow to
//!   work_group (SYCL rule); relaxed operations impose no ordering.
//!
//! Program source ([`Program`]): a launch runs either kernel IR (the SIMT execution above, with values)
//! or an Accel-Sim trace, where each warp replays its own recorded stream ([`Flow::Stream`]): the
//! active mask comes with each instruction, register dependencies go through the traced destination
//! and source registers, non-memory opcodes take their class's latency, and memory instructions use the
//! traced addresses and widths on the same paths as kernel accesses (coalescer, store buffer, L1, ...)
//! without values. A traced warp arrives at a barrier as a whole.
//! An exited warp keeps its slot until its memory operations have settled; captured registers are
//! read then, so loads in flight at the exit have written theirs. With `stress.stress_warps`, the SM
//! also runs memory-stress traffic (`stress.rs`); with `RunOptions::races`, it reports every access,
//! atomic read completion, fence and barrier as a race event (`races.rs`).
//!
//! Not modelled: instruction fetch and caches, register-bank conflicts, dual issue of one warp,
//! predicated execution other than branches, the carve-out between L1 and shared memory.

use super::memory::byte_mask;
use super::msg::*;
use super::ordering::{self, Access, Acquire, Before, InFlight, RmwSite, Rule};
use super::races::{self, AccessKind, RaceEvent};
use super::store_buffer::{Forward, StoreBuffer};
use super::stress::{StressAccess, StressWarps, STRESS_WARP};
use crate::config::{GpuConfig, WarpPolicy, WorkGroupAtomicSite};
use crate::engine::{Clock, Time};
use crate::ir::*;
use crate::trace::{TraceAccess, TraceKernel, TraceOp, TraceSpace, TRACE_REGS};
use crate::workload::Geometry;
use std::sync::Arc;

const NEVER: Time = Time::MAX;
/// What a warp whose live lanes all wait at a barrier waits on (for diagnoses).
pub const BARRIER_WAIT: &str = "barrier";
/// Backward branches a divergent lane group may take before the scheduler rotates to other lanes.
const SPIN_ROTATE: u32 = 16;

/// What the warps of one launch execute.
pub enum Program {
    /// Kernel IR with its launch parameters (registers preloaded in every lane).
    Kernel {
        kernel: Kernel,
        params: Vec<(Reg, u64)>,
    },
    /// A traced kernel; `block_of_group[g]` is the index in `blocks` of work-group `g` (linear id).
    Trace {
        kernel: TraceKernel,
        block_of_group: Vec<u32>,
    },
}

impl Program {
    /// `file:line[:col]` of instruction `pc` (a trace's instruction index names its file line).
    pub fn where_is(&self, pc: usize) -> String {
        match self {
            Program::Kernel { kernel, .. } => kernel.where_is(pc),
            Program::Trace { kernel, .. } => match kernel.insts.get(pc) {
                Some(i) => format!("{}:{}", kernel.file.display(), i.line),
                None => format!("{}:instruction {pc}", kernel.file.display()),
            },
        }
    }

    /// Instruction `pc` as text, for diagnostics.
    pub fn describe(&self, pc: usize) -> String {
        match self {
            Program::Kernel { kernel, .. } => kernel.disassemble(pc),
            Program::Trace { kernel, .. } => match kernel.insts.get(pc) {
                Some(i) => format!("{:?} mask {:08x}", i.op, i.mask),
                None => format!("<no instruction {pc}>"),
            },
        }
    }

    /// Bytes of work-group-local (shared) memory each group allocates.
    pub fn local_bytes(&self) -> u32 {
        match self {
            Program::Kernel { kernel, .. } => kernel.local_bytes,
            Program::Trace { kernel, .. } => kernel.shmem,
        }
    }

    /// Whether the program computes values (kernel IR) or only timing (a trace).
    pub fn has_values(&self) -> bool {
        matches!(self, Program::Kernel { .. })
    }
}

/// How a warp advances: the typed counterpart of [`Program`].
enum Flow {
    /// One PC per lane and every lane's registers; `spin`/`rotate_from` drive the forward-progress
    /// rotation of divergent spin loops.
    Simt {
        pc: Vec<u32>,
        regs: Vec<u64>,
        spin: u32,
        rotate_from: Option<u32>,
    },
    /// The warp's traced instructions `next..end` (indices into the trace kernel's instructions).
    Stream { next: u32, end: u32 },
}

impl Flow {
    /// The lanes in `mask` move past the instruction they executed.
    fn advance(&mut self, mask: u64) {
        match self {
            Flow::Simt { pc, .. } => {
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    pc[l] += 1;
                }
            }
            Flow::Stream { next, .. } => *next += 1,
        }
    }
}

/// Where a memory instruction's result goes.
#[derive(Clone, Copy)]
enum Dst {
    None,
    /// A kernel register, written with each lane's value.
    Reg(Reg),
    /// Traced destination registers (`n` from index `first` of the trace's register list): timing only.
    Trace {
        first: u32,
        n: u8,
    },
}

pub struct Warp {
    pub group_slot: usize,
    /// The work-group's id (kept for the warp's in-flight operations after its group has finished).
    group: u64,
    pub warp_in_group: u32,
    pub nlanes: u32,
    pub live: u64,
    at_bar: u64,
    flow: Flow,
    reg_ready: Vec<Time>,
    /// The next instruction waits for a register until this time (`NEVER`: until a memory result
    /// returns, which clears it); 0 when not known to wait. The schedulers skip the warp until then:
    /// trying it earlier would fail the same way, with no other effect.
    blocked_until: Time,
    /// Registers whose `reg_ready` may lie in the future at a finite time: the wake-up computation
    /// looks only at these (every other register is ready or waits for memory, `NEVER`).
    timed_regs: Vec<u16>,
    /// The barrier this warp waits at invalidates the L1 when it releases (global spaces at device
    /// scope or wider).
    bar_invalidate: bool,
    ready_at: Time,
    /// What the warp has in flight, as the ordering rules count it.
    inflight: InFlight,
    pub last_addr: Option<u64>,
    pub last_pc: u32,
    pub waiting: &'static str,
    /// Every lane has exited; the slot is kept until the warp's memory operations have settled, so
    /// that their responses never reach a warp that later reuses the slot, and captured registers
    /// hold the values of loads still in flight at the exit.
    exited: bool,
    /// SM write frontier a device-scope release waits for (see [`Sm::frontier_reached`]).
    fence_mark: Option<u64>,
}

impl Warp {
    fn full_mask(&self) -> u64 {
        if self.nlanes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.nlanes) - 1
        }
    }

    /// SIMT: the lanes to run next and their PC.
    fn select(&mut self) -> Option<(u32, u64)> {
        let cand = self.live & !self.at_bar;
        let Flow::Simt {
            pc, rotate_from, ..
        } = &self.flow
        else {
            return None;
        };
        if cand == 0 {
            return None;
        }
        let mut min = u32::MAX;
        let mut above: Option<u32> = None;
        let mut m = cand;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = pc[l];
            min = min.min(p);
            if let Some(r) = *rotate_from {
                if p > r && above.is_none_or(|a| p < a) {
                    above = Some(p);
                }
            }
        }
        let at = match (*rotate_from, above) {
            (Some(_), Some(a)) => a,
            _ => min,
        };
        let mut mask = 0u64;
        let mut m = cand;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if pc[l] == at {
                mask |= 1 << l;
            }
        }
        Some((at, mask))
    }

    /// Register `r` becomes ready at `t` (a result latency from now).
    fn ready_later(&mut self, r: usize, t: Time) {
        self.reg_ready[r] = t;
        if !self.timed_regs.contains(&(r as u16)) {
            self.timed_regs.push(r as u16);
        }
    }

    /// The earliest finite time after `now` at which a register becomes ready, dropping registers
    /// that are ready by `now` from the timed list.
    fn next_reg_ready(&mut self, now: Time) -> Time {
        let mut wake = NEVER;
        let reg_ready = &self.reg_ready;
        self.timed_regs.retain(|&r| {
            let t = reg_ready[r as usize];
            if t > now && t != NEVER {
                wake = wake.min(t);
                true
            } else {
                false
            }
        });
        wake
    }

    fn regs(&self) -> &[u64] {
        match &self.flow {
            Flow::Simt { regs, .. } => regs,
            Flow::Stream { .. } => &[],
        }
    }

    fn regs_mut(&mut self) -> &mut [u64] {
        match &mut self.flow {
            Flow::Simt { regs, .. } => regs,
            Flow::Stream { .. } => &mut [],
        }
    }

    fn quiet(&self) -> bool {
        self.inflight.quiet()
    }
}

pub struct GroupSlot {
    pub group: u64,
    /// Warps with live lanes (barrier participants).
    pub warps: Vec<u16>,
    pub live_warps: u32,
    /// Warps holding a slot: live ones plus exited ones whose memory operations are in flight.
    resident_warps: u32,
    arrived: u32,
    pub threads: u32,
    pub local: Vec<u8>,
}

#[derive(Clone, Copy)]
enum OpKind {
    Load,
    Atomic,
    Local,
}

struct MemOp {
    warp: u16,
    dst: Dst,
    /// Bytes of each lane's loaded value (0: timing only, no values to extract).
    value_bytes: u32,
    kind: OpKind,
    lanes: u64,
    /// Each lane's address and value ([`Sm::lane_values`]); only a program with values has them.
    values: Option<u32>,
    parts: u32,
    /// The acquire side of the instruction (`ordering::Acquire`), applied when it completes.
    acquire: Option<Acquire>,
    /// Race detection: an atomic read reports its completion (space, scope, acquire).
    race_read: Option<(Space, Scope, bool)>,
}

/// The per-lane addresses and returned values of one memory instruction of a program with values.
struct LaneValues {
    addr: [u64; 64],
    vals: [u64; 64],
}

#[derive(Default)]
pub struct SmStats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub mem_insts: u64,
    pub issue_cycles: u64,
    pub fence_stall_ps: Time,
    pub sb_full_stall_ps: Time,
    pub barrier_waits: u64,
    pub shared_accesses: u64,
    pub bank_conflict_cycles: u64,
    pub forwarded_loads: u64,
}

/// What the SM tells the dispatcher after an event.
#[derive(Default)]
pub struct SmNotices {
    pub groups_done: Vec<(usize, u64)>,
    pub error: Option<(usize, String, u64, u64)>,
    pub progress: u64,
    /// (group id, lane-local thread index, final registers) for captured threads.
    pub exits: Vec<(u64, u32, Vec<u64>)>,
    /// Race detection: what happened, in order (empty unless `RunOptions::races`).
    pub races: Vec<RaceEvent>,
}

pub struct Sm {
    pub id: u16,
    clock: Clock,
    ws: u32,
    launch: Arc<Launch>,
    lat: crate::config::InstLatency,
    schedulers: u32,
    issue_width: u32,
    policy: WarpPolicy,
    lsu_per_cycle: u32,
    line_bytes: u32,
    sb_delay: u64,
    drain_jitter: u32,
    svm: bool,
    wg_atomics_l1: bool,
    shared_latency: u64,
    banks: u32,
    bank_bytes: u32,
    pub warps: Vec<Option<Warp>>,
    /// Occupied warp slots of each scheduler (slot `i` belongs to scheduler `i % schedulers`),
    /// ascending: the schedulers visit only these.
    sched_slots: Vec<Vec<u16>>,
    pub groups: Vec<Option<GroupSlot>>,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_shared: u32,
    pub sb: StoreBuffer,
    ops: Pool<MemOp>,
    lane_values: Pool<LaneValues>,
    tick_at: Option<Time>,
    drain_at: Option<Time>,
    last_issued: Vec<usize>,
    shared_free: Time,
    pub shared_atomic: super::l2::AtomicUnit,
    pub stats: SmStats,
    pub notices: SmNotices,
    /// The SM's write frontier: every write the SM sends to its L1 gets the next sequence number;
    /// `wbase` is the smallest not yet acknowledged, `wacked[i]` says whether `wbase + i` is.
    wseq_next: u64,
    wbase: u64,
    wacked: std::collections::VecDeque<bool>,
    stress: Option<StressWarps>,
    /// Scratch list of a store's lines (see [`Sm::issue_store`]).
    store_lines: Vec<(u64, u128, LineBuf)>,
}

/// One kernel launch as every SM sees it.
pub struct Launch {
    pub program: Program,
    pub geo: Geometry,
    /// Work-groups whose threads' registers are captured at exit.
    pub capture_groups: std::collections::HashSet<u64>,
    /// Report [`RaceEvent`]s (kernel programs only).
    pub races: bool,
}

impl Sm {
    /// `scratch`: the stress warps' region (base, bytes), when the config has stress warps.
    pub fn new(id: u16, cfg: &GpuConfig, launch: &Arc<Launch>, scratch: Option<(u64, u64)>) -> Sm {
        let clock = Clock::from_mhz(cfg.clocks.core_mhz);
        Sm {
            id,
            clock,
            ws: cfg.sm.warp_size,
            launch: launch.clone(),
            lat: cfg.sm.latency.clone(),
            schedulers: cfg.sm.schedulers.max(1),
            issue_width: cfg.sm.issue_width.max(1),
            policy: cfg.sm.warp_policy,
            lsu_per_cycle: cfg.sm.lsu_per_cycle.max(1),
            line_bytes: cfg.l1.line_bytes,
            sb_delay: cfg.store_buffer.drain_delay as u64,
            drain_jitter: cfg.stress.drain_jitter,
            svm: cfg.system.svm,
            wg_atomics_l1: cfg.atomics.work_group_global_at == WorkGroupAtomicSite::L1,
            shared_latency: cfg.shared_memory.latency as u64,
            banks: cfg.shared_memory.banks.max(1),
            bank_bytes: cfg.shared_memory.bank_bytes.max(1),
            warps: (0..cfg.sm.max_warps).map(|_| None).collect(),
            sched_slots: vec![Vec::new(); cfg.sm.schedulers.max(1) as usize],
            groups: (0..cfg.sm.max_groups).map(|_| None).collect(),
            used_threads: 0,
            used_warps: 0,
            used_shared: 0,
            sb: StoreBuffer::new(&cfg.store_buffer),
            ops: Pool::default(),
            lane_values: Pool::default(),
            tick_at: None,
            drain_at: None,
            last_issued: vec![0; cfg.sm.schedulers.max(1) as usize],
            shared_free: 0,
            shared_atomic: super::l2::AtomicUnit::new(
                clock,
                &cfg.atomics.sm,
                cfg.atomics.combine_same_address_lanes,
            ),
            stats: SmStats::default(),
            notices: SmNotices::default(),
            wseq_next: 0,
            wbase: 0,
            wacked: std::collections::VecDeque::new(),
            stress: scratch.map(|(base, bytes)| {
                StressWarps::new(cfg.stress.stress_warps, base, bytes, cfg.l1.line_bytes)
            }),
            store_lines: Vec::new(),
        }
    }

    /// The next launch's program (between kernels, when no warp is resident).
    pub fn set_launch(&mut self, launch: &Arc<Launch>) {
        debug_assert!(self.warps.iter().all(|w| w.is_none()));
        self.launch = launch.clone();
    }

    fn has_values(&self) -> bool {
        self.launch.program.has_values()
    }

    /// The stress warps issue what they can and sleep once no workload warp is resident.
    pub fn stress_tick(&mut self, ctx: &mut Ctx) {
        let resident = self.used_warps > 0;
        let Some(st) = self.stress.as_mut() else {
            return;
        };
        st.scheduled = false;
        if !resident {
            return;
        }
        for a in st.issue(ctx.rng) {
            let req = match a {
                StressAccess::Load { warp, line } => L1Req::Load {
                    who: Who {
                        warp: STRESS_WARP,
                        op: warp,
                    },
                    line,
                    mask: 0xF,
                    level: Level::Sm,
                },
                StressAccess::Store { line } => {
                    let seq = self.next_write_seq();
                    L1Req::Store {
                        who: Who {
                            warp: STRESS_WARP,
                            op: u32::MAX,
                        },
                        line,
                        mask: 0xF,
                        data: DataId(ctx.lines.alloc([0u8; MAX_LINE])),
                        level: Level::L2,
                        seq,
                    }
                }
            };
            ctx.q.after(0, Event::L1In(self.id, req));
        }
        let gap = 1 + ctx.rng.upto(7) as u64;
        self.wake_stress(ctx, gap);
    }

    fn wake_stress(&mut self, ctx: &mut Ctx, cycles: u64) {
        if let Some(st) = self.stress.as_mut() {
            if !st.scheduled {
                st.scheduled = true;
                let t = self.clock.edge_at_or_after(ctx.now()) + self.clock.cycles(cycles);
                ctx.q.at_or_now(t, Event::Stress(self.id));
            }
        }
    }

    /// Numbers a write the SM sends to its L1.
    fn next_write_seq(&mut self) -> u64 {
        self.wacked.push_back(false);
        self.wseq_next += 1;
        self.wseq_next - 1
    }

    fn write_acked(&mut self, seq: u64) {
        if let Some(i) = seq.checked_sub(self.wbase) {
            if let Some(a) = self.wacked.get_mut(i as usize) {
                *a = true;
            }
        }
        while self.wacked.front() == Some(&true) {
            self.wacked.pop_front();
            self.wbase += 1;
        }
    }

    /// Cumulativity of a release at device scope or wider: writes of *other* warps of this SM that
    /// the L1 accepted are visible to this warp's loads before they reach L2 (the L1 is shared and
    /// write-through), so a value this warp observed may come from one of them. PTX orders such an
    /// observed write before the release for every thread the release synchronises with (causality
    /// order goes through observation), so the release waits until every write the SM sent before
    /// it is acknowledged. The mark is taken only once the warp's own loads have returned, so no
    /// later observation can escape it.
    fn frontier_reached(&mut self, wi: usize) -> bool {
        let next = self.wseq_next;
        let w = self.warps[wi].as_mut().expect("live");
        let mark = *w.fence_mark.get_or_insert(next);
        self.wbase >= mark
    }

    /// Makes work-group `group` resident and starts its warps (after `skew(i)` cycles each).
    pub fn launch(
        &mut self,
        group: u64,
        threads: u32,
        now: Time,
        mut skew: impl FnMut() -> u64,
        ctx: &mut Ctx,
    ) {
        let Some(gs) = self.groups.iter().position(|g| g.is_none()) else {
            return;
        };
        let nw = threads.div_ceil(self.ws);
        let launch = self.launch.clone();
        let ws = self.ws as usize;
        let mut slots = Vec::with_capacity(nw as usize);
        for w in 0..nw {
            let Some(ws_slot) = self.warps.iter().position(|x| x.is_none()) else {
                break;
            };
            let nl = (threads - w * self.ws).min(self.ws);
            let (flow, nregs) = match &launch.program {
                Program::Kernel { kernel, params } => {
                    let nregs = kernel.num_regs().max(1);
                    let mut regs = vec![0; nregs * ws];
                    for &(r, v) in params {
                        regs[r as usize * ws..(r as usize + 1) * ws].fill(v);
                    }
                    let flow = Flow::Simt {
                        pc: vec![0; ws],
                        regs,
                        spin: 0,
                        rotate_from: None,
                    };
                    (flow, nregs)
                }
                Program::Trace {
                    kernel,
                    block_of_group,
                } => {
                    // A warp the tracer did not list ran no instruction: an empty stream.
                    let tw = kernel.blocks[block_of_group[group as usize] as usize]
                        .warps
                        .get(w as usize);
                    let (next, end) = tw.map(|t| (t.first, t.first + t.len)).unwrap_or((0, 0));
                    (Flow::Stream { next, end }, TRACE_REGS)
                }
            };
            let mut warp = Warp {
                group_slot: gs,
                group,
                warp_in_group: w,
                nlanes: nl,
                live: 0,
                at_bar: 0,
                flow,
                reg_ready: vec![0; nregs],
                timed_regs: Vec::new(),
                blocked_until: 0,
                bar_invalidate: false,
                ready_at: now + self.clock.cycles(skew()),
                inflight: InFlight::default(),
                last_addr: None,
                last_pc: 0,
                waiting: "ready",
                exited: false,
                fence_mark: None,
            };
            warp.live = warp.full_mask();
            self.warps[ws_slot] = Some(warp);
            let list = &mut self.sched_slots[ws_slot % self.schedulers as usize];
            let at = list.partition_point(|&x| (x as usize) < ws_slot);
            list.insert(at, ws_slot as u16);
            slots.push(ws_slot as u16);
        }
        let local_bytes = launch.program.local_bytes();
        // A trace has no values: its shared memory is timed (banks) but holds nothing.
        let local = if launch.program.has_values() {
            vec![0u8; local_bytes as usize]
        } else {
            Vec::new()
        };
        self.used_threads += threads;
        self.used_warps += nw;
        self.used_shared += local_bytes;
        self.groups[gs] = Some(GroupSlot {
            group,
            live_warps: slots.len() as u32,
            resident_warps: slots.len() as u32,
            warps: slots,
            arrived: 0,
            threads,
            local,
        });
        self.wake(ctx);
        self.wake_stress(ctx, 0);
    }

    pub fn wake(&mut self, ctx: &mut Ctx) {
        let t = self.clock.edge_at_or_after(ctx.now());
        if self.tick_at.is_none_or(|x| x > t) {
            self.tick_at = Some(t);
            ctx.q.at_or_now(t, Event::SmTick(self.id));
        }
    }

    fn wake_drain(&mut self, ctx: &mut Ctx, at: Time) {
        let t = self.clock.edge_at_or_after(at.max(ctx.now()));
        if self.drain_at.is_none_or(|x| x > t) {
            self.drain_at = Some(t);
            ctx.q.at_or_now(t, Event::SbDrain(self.id));
        }
    }

    /// One store-buffer entry leaves for the L1.
    pub fn drain(&mut self, ctx: &mut Ctx) {
        if self.drain_at != Some(ctx.now()) {
            return;
        }
        self.drain_at = None;
        let now = ctx.now();
        if let Some(e) = self.sb.pop_ready(now, ctx.rng) {
            if let Some(w) = self.warps[e.warp as usize].as_mut() {
                w.inflight.buffered -= 1;
                w.inflight.to_l1 += 1;
                w.inflight.to_l2 += 1;
            }
            let seq = self.next_write_seq();
            let id = ctx.lines.alloc(e.data);
            let level = if e.system { Level::System } else { Level::L2 };
            ctx.q.after(
                0,
                Event::L1In(
                    self.id,
                    L1Req::Store {
                        who: Who {
                            warp: e.warp,
                            op: u32::MAX,
                        },
                        line: e.line,
                        mask: e.mask,
                        data: DataId(id),
                        level,
                        seq,
                    },
                ),
            );
            self.wake(ctx);
        }
        if let Some(t) = self.sb.next_ready() {
            self.wake_drain(ctx, t.max(now + self.clock.period));
        }
    }

    /// A response from the L1 or the SM's own units.
    pub fn receive(&mut self, r: CoreResp, ctx: &mut Ctx) {
        match r {
            CoreResp::StoreAccepted { warp: STRESS_WARP } => return,
            CoreResp::StoreAcked {
                warp: STRESS_WARP,
                seq,
            } => {
                self.write_acked(seq);
                self.wake(ctx);
                return;
            }
            CoreResp::LoadData { who, data, .. } if who.warp == STRESS_WARP => {
                ctx.lines.release(data.0);
                if let Some(st) = self.stress.as_mut() {
                    st.done(who.op);
                }
                return;
            }
            CoreResp::StoreAccepted { warp } => {
                if let Some(w) = self.warps[warp as usize].as_mut() {
                    w.inflight.to_l1 -= 1;
                }
                self.retire_if_settled(warp as usize);
            }
            CoreResp::StoreAcked { warp, seq } => {
                self.write_acked(seq);
                if let Some(w) = self.warps[warp as usize].as_mut() {
                    w.inflight.to_l2 -= 1;
                }
                self.retire_if_settled(warp as usize);
            }
            CoreResp::LoadData { who, line, data } => {
                let bytes = *ctx.lines.get(data.0);
                ctx.lines.release(data.0);
                let op = self.ops.get(who.op);
                let wb = op.value_bytes as usize;
                if let (Some(vi), true) = (op.values, wb > 0) {
                    let lv = self.lane_values.get_mut(vi);
                    let mut m = op.lanes;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let a = lv.addr[l];
                        if a & !(self.line_bytes as u64 - 1) == line {
                            let o = (a - line) as usize;
                            let mut b = [0u8; 8];
                            b[..wb].copy_from_slice(&bytes[o..o + wb]);
                            lv.vals[l] = u64::from_le_bytes(b);
                        }
                    }
                }
                self.part_done(who.op, ctx);
            }
            CoreResp::AtomicDone { who, batch } => {
                if let Some(vi) = self.ops.get(who.op).values {
                    let lv = self.lane_values.get_mut(vi);
                    for l in &ctx.batches.get(batch.0).lanes {
                        lv.vals[l.lane as usize] = l.result;
                    }
                }
                ctx.batches.release(batch.0);
                self.part_done(who.op, ctx);
            }
            CoreResp::SharedDone { who } => self.part_done(who.op, ctx),
        }
        self.wake(ctx);
    }

    fn part_done(&mut self, opi: u32, ctx: &mut Ctx) {
        let op = self.ops.get_mut(opi);
        op.parts -= 1;
        if op.parts > 0 {
            return;
        }
        let ws = self.ws as usize;
        let now = ctx.now();
        let (warp, dst, kind, acquire, lanes, values, race_read) = (
            op.warp,
            op.dst,
            op.kind,
            op.acquire,
            op.lanes,
            op.values,
            op.race_read,
        );
        if let (Some((space, scope, acq)), Some(vi)) = (race_read, values) {
            for l in crate::machine::sm::lanes(lanes) {
                let (_, tid) = self.thread_ids(warp as usize, l);
                let addr = self.lane_values.get(vi).addr[l];
                self.notices.races.push(RaceEvent::ReadDone {
                    tid,
                    space,
                    addr,
                    scope,
                    acquire: acq,
                });
            }
        }
        self.ops.release(opi);
        if let Some(vi) = values {
            self.lane_values.release(vi);
        }
        let Some(w) = self.warps[warp as usize].as_mut() else {
            return;
        };
        // A register the next instruction may wait for has its value now.
        w.blocked_until = 0;
        match dst {
            Dst::None => {}
            Dst::Reg(d) => {
                if let Some(vi) = values {
                    let vals = &self.lane_values.get(vi).vals;
                    let regs = w.regs_mut();
                    let mut m = lanes;
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        regs[d as usize * ws + l] = vals[l];
                    }
                }
                w.reg_ready[d as usize] = now;
            }
            Dst::Trace { first, n } => {
                if let Program::Trace { kernel, .. } = &self.launch.program {
                    for &r in &kernel.regs[first as usize..first as usize + n as usize] {
                        w.reg_ready[r as usize] = now;
                    }
                }
            }
        }
        match kind {
            OpKind::Local => w.inflight.local -= 1,
            OpKind::Load | OpKind::Atomic => w.inflight.loads -= 1,
        }
        if let Some(a) = acquire {
            w.inflight.acquires -= 1;
            if a.invalidate_l1 {
                ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
            }
        }
        self.retire_if_settled(warp as usize);
    }

    /// Warp schedulers: issue what can issue this cycle; sleep when nothing can.
    pub fn tick(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        if self.tick_at != Some(now) {
            return;
        }
        self.tick_at = None;
        let nslots = self.warps.len();
        let mut issued_any = false;
        let mut lsu_left = self.lsu_per_cycle;
        let ns = self.schedulers as usize;
        let launch = self.launch.clone();
        for s in 0..ns {
            for _ in 0..self.issue_width {
                // Visit this scheduler's warps cyclically from the first slot at or after `start`
                // (greedy: the last warp that issued; round-robin: the one after it).
                let start = match self.policy {
                    WarpPolicy::Gto => self.last_issued[s],
                    WarpPolicy::Lrr => self.last_issued[s] + ns,
                } % nslots;
                let mine = self.sched_slots[s].len();
                let first = self.sched_slots[s].partition_point(|&x| (x as usize) < start);
                let mut done = false;
                for k in 0..mine {
                    // `first + k` wraps at most once (first <= mine): no division per warp.
                    let j = if first + k >= mine {
                        first + k - mine
                    } else {
                        first + k
                    };
                    let i = self.sched_slots[s][j] as usize;
                    if self.warps[i]
                        .as_ref()
                        .is_some_and(|w| w.blocked_until > now || w.ready_at > now)
                    {
                        // Trying it now would fail without any effect.
                        continue;
                    }
                    if self.try_issue(i, &launch.program, now, &mut lsu_left, ctx) {
                        self.last_issued[s] = i;
                        issued_any = true;
                        done = true;
                        break;
                    }
                }
                if !done {
                    break;
                }
            }
        }
        if issued_any {
            self.stats.issue_cycles += 1;
        }
        if self.notices.error.is_some() {
            return;
        }
        // Next wake-up: next cycle if anything may issue, else the earliest timed readiness.
        let next = self.clock.edge_at_or_after(now + 1);
        let mut wake = NEVER;
        for &i in self.sched_slots.iter().flatten() {
            let Some(w) = self.warps[i as usize].as_mut() else {
                continue;
            };
            if w.live & !w.at_bar == 0 {
                continue;
            }
            if w.ready_at > now {
                wake = wake.min(w.ready_at);
            } else if issued_any {
                wake = wake.min(next);
            } else {
                wake = wake.min(w.next_reg_ready(now));
            }
            if wake <= next {
                // The tick goes at `max(wake, next)`: the other warps cannot make it earlier.
                // (The registers of the ones not visited are pruned at a later tick.)
                break;
            }
        }
        if wake != NEVER {
            let t = self.clock.edge_at_or_after(wake.max(next));
            if self.tick_at.is_none_or(|x| x > t) {
                self.tick_at = Some(t);
                ctx.q.at_or_now(t, Event::SmTick(self.id));
            }
        }
    }

    /// The ordering gate's release side (`ordering::Before`), the same for kernel and trace
    /// instructions: `false` (the warp stalls) until it holds.
    fn release_ready(&mut self, wi: usize, before: Before, now: Time, ctx: &mut Ctx) -> bool {
        let w = self.warps[wi].as_mut().expect("live");
        let own = w.inflight.satisfies(before);
        if !own {
            w.fence_mark = None;
        }
        let ok = own && (!before.cumulative() || self.frontier_reached(wi));
        if !ok {
            let w = self.warps[wi].as_mut().expect("live");
            w.waiting = "release: earlier accesses not yet performed";
            self.stats.fence_stall_ps += self.clock.period;
            if w.inflight.buffered > 0 {
                self.wake_drain(ctx, now);
            }
        }
        ok
    }

    fn try_issue(
        &mut self,
        wi: usize,
        program: &Program,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        match program {
            Program::Kernel { kernel, .. } => self.try_issue_kernel(wi, kernel, now, lsu_left, ctx),
            Program::Trace { kernel, .. } => self.try_issue_trace(wi, kernel, now, lsu_left, ctx),
        }
    }

    /// Bookkeeping of an instruction that issued.
    fn issued(&mut self, wi: usize, mask: u64, is_mem: bool, lsu_left: &mut u32, now: Time) {
        if is_mem {
            *lsu_left -= 1;
            self.stats.mem_insts += 1;
        }
        self.stats.warp_insts += 1;
        self.stats.thread_insts += mask.count_ones() as u64;
        if let Some(w) = self.warps[wi].as_mut() {
            w.ready_at = w.ready_at.max(now + self.clock.period);
            w.waiting = "ready";
            w.fence_mark = None;
        }
    }

    /// Issues the next traced instruction of warp `wi`, if its registers, ordering and the LSU allow.
    fn try_issue_trace(
        &mut self,
        wi: usize,
        tk: &TraceKernel,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(w) = self.warps[wi].as_mut() else {
            return false;
        };
        if w.ready_at > now || w.live & !w.at_bar == 0 {
            return false;
        }
        let Flow::Stream { next, end } = w.flow else {
            return false;
        };
        if next >= end {
            // The stream ended without an EXIT for these lanes: they are done.
            let live = w.live;
            self.exit_lanes(wi, live, ctx);
            return true;
        }
        let inst = &tk.insts[next as usize];
        w.last_pc = next;
        // Scoreboard: sources ready, and no pending write to a destination.
        let regs = &tk.regs
            [inst.regs as usize..inst.regs as usize + inst.ndst as usize + inst.nsrc as usize];
        if let Some(t) = regs
            .iter()
            .map(|&r| w.reg_ready[r as usize])
            .max()
            .filter(|&t| t > now)
        {
            w.waiting = "register dependency";
            w.blocked_until = t;
            return false;
        }
        // The same ordering gate as kernel instructions (`ordering.rs`).
        let access = Access::of_trace(inst.op);
        if access.is_some() && !w.inflight.acquires_done() {
            w.waiting = "earlier acquire";
            return false;
        }
        let is_mem = access.is_some_and(|a| a.is_memory());
        if is_mem && *lsu_left == 0 {
            return false;
        }
        let rule = access.map(|a| ordering::rule(&a, self.svm));
        if let Some(r) = rule {
            if !self.release_ready(wi, r.before, now, ctx) {
                return false;
            }
        }
        let w = self.warps[wi].as_mut().expect("checked above");
        let mask = inst.mask as u64 & w.live;
        let ok = match inst.op {
            TraceOp::Compute(class) => {
                let lat = self.clock.cycles(latency_of(&self.lat, class));
                let w = self.warps[wi].as_mut().expect("checked above");
                for &d in &tk.regs[inst.regs as usize..inst.regs as usize + inst.ndst as usize] {
                    w.ready_later(d as usize, now + lat);
                }
                if class == LatencyClass::Branch {
                    w.ready_at = w.ready_at.max(now + lat);
                }
                w.flow.advance(mask);
                true
            }
            TraceOp::Membar(_) => {
                w.flow.advance(mask);
                if rule
                    .and_then(|r| r.acquire)
                    .is_some_and(|a| a.invalidate_l1)
                {
                    ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
                }
                true
            }
            TraceOp::Barrier => {
                let live = w.live;
                let invalidate = rule
                    .and_then(|r| r.acquire)
                    .is_some_and(|a| a.invalidate_l1);
                self.barrier(wi, live, BarrierKind::WorkGroup, invalidate, ctx)
            }
            TraceOp::Exit => {
                // The lanes of the mask exit here; other lanes (divergent code) go on with the stream,
                // and every lane still live exits when it ends.
                w.flow.advance(mask);
                let exiting = match w.flow {
                    Flow::Stream { next, end } if next >= end => w.live,
                    _ => mask,
                };
                self.exit_lanes(wi, exiting, ctx);
                true
            }
            TraceOp::Mem(m) => {
                let (Some(a), Some(r)) = (access, rule) else {
                    unreachable!("a memory instruction has an access")
                };
                self.trace_mem(wi, next, inst, m, a, r, tk, now, ctx)
            }
        };
        if ok {
            // Counted with the traced mask, so that the statistics equal the trace's counts.
            self.issued(wi, inst.mask as u64, is_mem, lsu_left, now);
            // A trace has no loops to spin in: every instruction it issues is forward progress.
            self.notices.progress += 1;
        }
        ok
    }

    /// A traced memory instruction: its lanes' addresses and width on the modelled paths, no values.
    #[allow(clippy::too_many_arguments)]
    fn trace_mem(
        &mut self,
        wi: usize,
        pc: u32,
        inst: &crate::trace::TraceInst,
        m: crate::trace::TraceMem,
        access: Access,
        rule: Rule,
        tk: &TraceKernel,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let mask = inst.mask as u64;
        let bytes = m.width as u32;
        let mut addrs = [0u64; 64];
        for (l, a) in lanes(mask).zip(tk.lane_addrs(inst)) {
            // Shared-memory addresses are windows into the block's allocation from `shmem base_addr`.
            addrs[l] = if m.space == TraceSpace::Shared && a >= tk.shmem_base {
                a - tk.shmem_base
            } else {
                a
            };
        }
        let line = self.line_bytes as u64;
        // `line` is a power of two (validated): a mask, not a division, on this per-lane path.
        if let Some(l) = lanes(mask).find(|&l| (addrs[l] & (line - 1)) + bytes as u64 > line) {
            let msg = format!(
                "a {bytes}-byte access at {:#x} crosses a {line}-byte line (misaligned)",
                addrs[l]
            );
            self.fail(wi, pc, l, msg);
            return true;
        }
        if let Some(w) = self.warps[wi].as_mut() {
            w.last_addr = Some(addrs[mask.trailing_zeros() as usize % 64]);
        }
        let dst = Dst::Trace {
            first: inst.regs,
            n: inst.ndst,
        };
        match (m.access, access) {
            (TraceAccess::Load, Access::Load { space, ord, scope }) => self.issue_load(
                wi, pc, mask, &addrs, bytes, dst, 0, space, ord, scope, rule, now, ctx,
            ),
            (TraceAccess::Store, Access::Store { space, ord, scope }) => {
                let vals = [0u64; 64];
                self.issue_store(
                    wi, pc, mask, &addrs, &vals, bytes, space, ord, scope, now, ctx,
                )
            }
            (TraceAccess::Atomic { op, returning }, Access::Rmw { space, scope, .. }) => {
                let kind = op;
                let ty = if bytes >= 8 { Ty::U64 } else { Ty::U32 };
                let mut lanes_ = Vec::with_capacity(mask.count_ones() as usize);
                lanes_.extend(lanes(mask).map(|l| LaneAtomic {
                    lane: l as u8,
                    addr: addrs[l],
                    operand: 0,
                    expected: 0,
                    result: 0,
                }));
                let dst = if returning { dst } else { Dst::None };
                self.issue_atomic(
                    wi, None, mask, addrs, lanes_, kind, ty, dst, space, scope, rule, now, ctx,
                )
            }
            _ => unreachable!("a traced access matches its instruction"),
        }
    }

    /// Issues the instruction at the lowest PC of kernel warp `wi`.
    fn try_issue_kernel(
        &mut self,
        wi: usize,
        kernel: &Kernel,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(w) = self.warps[wi].as_mut() else {
            return false;
        };
        if w.ready_at > now {
            return false;
        }
        let Some((pc, mask)) = w.select() else {
            return false;
        };
        let Some(inst) = kernel.insts.get(pc as usize) else {
            // Falling off the end is an exit.
            self.exit_lanes(wi, mask, ctx);
            return true;
        };
        w.last_pc = pc;
        // Scoreboard: sources ready, and no pending write to the destination.
        let (regs, n) = scoreboard_regs(inst);
        let blocked = regs[..n].iter().map(|&r| w.reg_ready[r as usize]).max();
        if let Some(t) = blocked.filter(|&t| t > now) {
            w.waiting = "register dependency";
            w.blocked_until = t;
            return false;
        }
        // The ordering gate (`ordering.rs`), the same for trace instructions.
        let access = Access::of_inst(inst, kernel.semantics);
        if access.is_some() && !w.inflight.acquires_done() {
            w.waiting = "earlier acquire";
            return false;
        }
        let is_mem = access.is_some_and(|a| a.is_memory());
        if is_mem && *lsu_left == 0 {
            return false;
        }
        let issue = access.map(|a| (a, ordering::rule(&a, self.svm)));
        if let Some((_, r)) = issue {
            if !self.release_ready(wi, r.before, now, ctx) {
                return false;
            }
        }
        let ok = self.execute(wi, pc, mask, inst, issue, now, ctx);
        if ok {
            self.issued(wi, mask, is_mem, lsu_left, now);
        }
        ok
    }

    fn val(&self, w: &Warp, o: Operand, lane: usize) -> u64 {
        match o {
            Operand::Reg(r) => w.regs()[r as usize * self.ws as usize + lane],
            Operand::Imm(v) => v,
        }
    }

    fn set(&self, w: &mut Warp, r: Reg, lane: usize, v: u64) {
        w.regs_mut()[r as usize * self.ws as usize + lane] = v;
    }

    fn fail(&mut self, wi: usize, pc: u32, lane: usize, msg: String) {
        let (group, thread) = self.thread_ids(wi, lane);
        self.notices.error = Some((pc as usize, msg, thread, group));
    }

    fn thread_ids(&self, wi: usize, lane: usize) -> (u64, u64) {
        let w = self.warps[wi].as_ref().expect("live warp");
        let local = w.warp_in_group as u64 * self.ws as u64 + lane as u64;
        (
            w.group,
            w.group * self.launch.geo.group_threads() as u64 + local,
        )
    }

    fn special(&self, wi: usize, lane: usize, s: Special, now: Time) -> u64 {
        let w = self.warps[wi].as_ref().expect("live warp");
        let g = self.groups[w.group_slot].as_ref().expect("resident group");
        let gs = self.launch.geo.group_size;
        let ng = self.launch.geo.groups;
        let local_lin = w.warp_in_group as u64 * self.ws as u64 + lane as u64;
        let lid = [
            local_lin % gs[0] as u64,
            (local_lin / gs[0] as u64) % gs[1] as u64,
            local_lin / (gs[0] as u64 * gs[1] as u64),
        ];
        let gid = [
            g.group % ng[0] as u64,
            (g.group / ng[0] as u64) % ng[1] as u64,
            g.group / (ng[0] as u64 * ng[1] as u64),
        ];
        match s {
            Special::GlobalId(d) => gid[d.index()] * gs[d.index()] as u64 + lid[d.index()],
            Special::LocalId(d) => lid[d.index()],
            Special::GroupId(d) => gid[d.index()],
            Special::GlobalSize(d) => gs[d.index()] as u64 * ng[d.index()] as u64,
            Special::LocalSize(d) => gs[d.index()] as u64,
            Special::NumGroups(d) => ng[d.index()] as u64,
            Special::GlobalLinearId => {
                let gx = gid[0] * gs[0] as u64 + lid[0];
                let gy = gid[1] * gs[1] as u64 + lid[1];
                let gz = gid[2] * gs[2] as u64 + lid[2];
                let (sx, sy) = (gs[0] as u64 * ng[0] as u64, gs[1] as u64 * ng[1] as u64);
                gx + sx * (gy + sy * gz)
            }
            Special::LocalLinearId => local_lin,
            Special::GroupLinearId => g.group,
            Special::Lane => lane as u64,
            Special::SubGroupId => w.warp_in_group as u64,
            Special::SubGroupSize => self.ws as u64,
            Special::NumSubGroups => g.threads.div_ceil(self.ws) as u64,
            Special::SmId => self.id as u64,
            Special::Clock => self.clock.cycle_of(now),
        }
    }

    fn latency(&self, c: LatencyClass) -> u64 {
        latency_of(&self.lat, c)
    }

    fn advance(w: &mut Warp, mask: u64) {
        w.flow.advance(mask);
    }

    /// Executes one instruction for the lanes in `mask`; `false` if it could not issue (stall).
    fn execute(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        inst: &Inst,
        issue: Option<(Access, Rule)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let ws = self.ws as usize;
        // The effective scope and the rule of a memory instruction, fence or barrier.
        let (scope_eff, rule) = match issue {
            Some((a, r)) => (a.scope(), r),
            None => (Scope::WorkItem, ordering::relaxed()),
        };
        let invalidate = rule.acquire.is_some_and(|a| a.invalidate_l1);
        match *inst {
            Inst::Mov { dst, src } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let v = self.val(&w, src, l);
                    self.set(&mut w, dst, l, v);
                }
                w.ready_later(
                    dst as usize,
                    now + self.clock.cycles(self.latency(LatencyClass::IntAlu)),
                );
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::ReadSpecial { dst, which } => {
                let vals: Vec<(usize, u64)> = lanes(mask)
                    .map(|l| (l, self.special(wi, l, which, now)))
                    .collect();
                let lat = self.clock.cycles(self.latency(LatencyClass::IntAlu));
                let w = self.warps[wi].as_mut().expect("live");
                for (l, v) in vals {
                    w.regs_mut()[dst as usize * ws + l] = v;
                }
                w.ready_later(dst as usize, now + lat);
                Self::advance(w, mask);
            }
            Inst::Alu { op, ty, dst, a, b } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let (x, y) = (self.val(&w, a, l), self.val(&w, b, l));
                    match alu(op, ty, x, y) {
                        Some(v) => self.set(&mut w, dst, l, v),
                        None => {
                            self.warps[wi] = Some(w);
                            self.fail(
                                wi,
                                pc,
                                l,
                                format!("integer division by zero ({} {})", op_name(op), ty.name()),
                            );
                            return true;
                        }
                    }
                }
                let class = match (op, ty.is_float()) {
                    (AluOp::Div | AluOp::Rem, true) => LatencyClass::FpDiv,
                    (_, true) => LatencyClass::FpAlu,
                    (AluOp::Mul, false) => LatencyClass::IntMul,
                    (AluOp::Div | AluOp::Rem, false) => LatencyClass::IntDiv,
                    _ => LatencyClass::IntAlu,
                };
                w.ready_later(dst as usize, now + self.clock.cycles(self.latency(class)));
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::Cmp { op, ty, dst, a, b } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let (x, y) = (self.val(&w, a, l), self.val(&w, b, l));
                    self.set(&mut w, dst, l, cmp(op, ty, x, y) as u64);
                }
                let class = if ty.is_float() {
                    LatencyClass::FpAlu
                } else {
                    LatencyClass::IntAlu
                };
                w.ready_later(dst as usize, now + self.clock.cycles(self.latency(class)));
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::Select { dst, cond, a, b } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let c = w.regs()[cond as usize * ws + l] != 0;
                    let v = if c {
                        self.val(&w, a, l)
                    } else {
                        self.val(&w, b, l)
                    };
                    self.set(&mut w, dst, l, v);
                }
                w.ready_later(
                    dst as usize,
                    now + self.clock.cycles(self.latency(LatencyClass::IntAlu)),
                );
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::Cvt { dst, src, from, to } => {
                let w = self.warps[wi].as_mut().expect("live");
                for l in lanes(mask) {
                    let regs = w.regs_mut();
                    regs[dst as usize * ws + l] = convert(regs[src as usize * ws + l], from, to);
                }
                w.ready_later(
                    dst as usize,
                    now + self.clock.cycles(self.lat.fp_alu.max(1) as u64),
                );
                Self::advance(w, mask);
            }
            Inst::Compute { class } => {
                let lat = self.clock.cycles(self.latency(class));
                let w = self.warps[wi].as_mut().expect("live");
                w.ready_at = w.ready_at.max(now + lat.min(self.clock.period));
                Self::advance(w, mask);
            }
            Inst::Branch { target, cond } => {
                let lat = self.clock.cycles(self.latency(LatencyClass::Branch));
                let w = self.warps[wi].as_mut().expect("live");
                // Forward-progress rotation for lanes spinning while others of the warp wait.
                let waiting_others = w.live & !w.at_bar & !mask != 0;
                let Flow::Simt {
                    pc: pcs,
                    regs,
                    spin,
                    rotate_from,
                } = &mut w.flow
                else {
                    unreachable!("kernel instructions run on SIMT warps");
                };
                let mut taken = 0u64;
                for l in lanes(mask) {
                    let t = match cond {
                        None => true,
                        Some((r, nz)) => (regs[r as usize * ws + l] != 0) == nz,
                    };
                    if t {
                        pcs[l] = target;
                        taken |= 1 << l;
                    } else {
                        pcs[l] += 1;
                    }
                }
                if taken != 0 && target <= pc && waiting_others {
                    *spin += 1;
                    if *spin >= SPIN_ROTATE {
                        *spin = 0;
                        *rotate_from = Some(pc);
                    }
                } else if rotate_from.is_some_and(|r| pc > r) || !waiting_others {
                    *rotate_from = None;
                }
                w.ready_at = w.ready_at.max(now + lat);
            }
            Inst::Exit => {
                self.exit_lanes(wi, mask, ctx);
            }
            Inst::Fence { ord, scope, .. } => {
                if self.launch.races {
                    for l in lanes(mask) {
                        let (_, tid) = self.thread_ids(wi, l);
                        self.notices.races.push(RaceEvent::Fence {
                            tid,
                            acquire: ord.is_acquire(),
                            release: ord.is_release(),
                            seq_cst: ord == FenceOrd::SeqCst,
                            scope,
                        });
                    }
                }
                let w = self.warps[wi].as_mut().expect("live");
                Self::advance(w, mask);
                if invalidate {
                    ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
                }
            }
            Inst::Barrier { kind, .. } => return self.barrier(wi, mask, kind, invalidate, ctx),
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                ..
            } => {
                return self.load(
                    wi, pc, mask, dst, space, addr, ty, ord, scope_eff, rule, now, ctx,
                );
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                ..
            } => {
                return self.store(wi, pc, mask, space, addr, src, ty, ord, scope_eff, now, ctx);
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                ..
            } => {
                let spec = AtomicSpec {
                    kind: AtomicOp::Rmw(op),
                    dst,
                    space,
                    addr,
                    operand,
                    expected: None,
                    ty,
                    order: ord.order(),
                    scope: scope_eff,
                };
                return self.atomic(wi, pc, mask, spec, rule, now, ctx);
            }
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                ..
            } => {
                let spec = AtomicSpec {
                    kind: AtomicOp::Cas,
                    dst,
                    space,
                    addr,
                    operand: desired,
                    expected: Some(expected),
                    ty,
                    order: success.order(),
                    scope: scope_eff,
                };
                return self.atomic(wi, pc, mask, spec, rule, now, ctx);
            }
        }
        true
    }

    fn exit_lanes(&mut self, wi: usize, mask: u64, ctx: &mut Ctx) {
        let w = self.warps[wi].as_mut().expect("live");
        w.live &= !mask;
        self.notices.progress += 1;
        if w.live != 0 {
            self.maybe_release_barrier(wi, ctx);
            return;
        }
        // No lane is left: the warp leaves the group's barrier now, and its slot once its memory
        // operations have settled.
        w.exited = true;
        w.waiting = "exited; memory operations in flight";
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        g.live_warps -= 1;
        g.warps.retain(|&s| s as usize != wi);
        if g.live_warps > 0 {
            self.try_release_group(gs, ctx);
        }
        self.retire_if_settled(wi);
    }

    /// Frees the slot of an exited warp whose memory operations have all settled, and finishes its
    /// work-group when it was the last one.
    fn retire_if_settled(&mut self, wi: usize) {
        if !self.warps[wi]
            .as_ref()
            .is_some_and(|w| w.exited && w.quiet())
        {
            return;
        }
        let w = self.warps[wi].take().expect("checked");
        self.sched_slots[wi % self.schedulers as usize].retain(|&x| x as usize != wi);
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        if self.launch.capture_groups.contains(&g.group) {
            self.notices
                .exits
                .push((g.group, w.warp_in_group * self.ws, w.regs().to_vec()));
        }
        g.resident_warps -= 1;
        self.used_warps -= 1;
        if g.resident_warps == 0 {
            let g = self.groups[gs].take().expect("resident");
            self.used_threads -= g.threads;
            self.used_shared -= self.launch.program.local_bytes();
            self.notices.groups_done.push((gs, g.group));
        }
    }

    /// `invalidate`: the barrier's acquire side invalidates the L1 when it releases.
    fn barrier(
        &mut self,
        wi: usize,
        mask: u64,
        kind: BarrierKind,
        invalidate: bool,
        ctx: &mut Ctx,
    ) -> bool {
        let w = self.warps[wi].as_mut().expect("live");
        w.at_bar |= mask;
        w.waiting = "barrier";
        // Read when the work-group barrier releases.
        w.bar_invalidate = invalidate;
        match kind {
            BarrierKind::SubGroup => {
                if w.at_bar & w.live == w.live {
                    let m = w.at_bar;
                    w.at_bar = 0;
                    Self::advance(w, m);
                    if self.launch.races {
                        let tids = lanes(m).map(|l| self.thread_ids(wi, l).1).collect();
                        self.notices.races.push(RaceEvent::Barrier { tids });
                    }
                }
            }
            BarrierKind::WorkGroup => {
                self.stats.barrier_waits += 1;
                self.maybe_release_barrier(wi, ctx);
            }
        }
        true
    }

    fn maybe_release_barrier(&mut self, wi: usize, ctx: &mut Ctx) {
        let Some(w) = self.warps[wi].as_ref() else {
            return;
        };
        if w.at_bar == 0 || w.at_bar & w.live != w.live {
            return;
        }
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        g.arrived += 1;
        self.try_release_group(gs, ctx);
    }

    fn try_release_group(&mut self, gs: usize, ctx: &mut Ctx) {
        let g = self.groups[gs].as_mut().expect("resident");
        if g.arrived == 0 || g.arrived < g.live_warps {
            return;
        }
        g.arrived = 0;
        let warps = g.warps.clone();
        if self.launch.races {
            let mut tids = Vec::new();
            for &s in &warps {
                let m = self.warps[s as usize].as_ref().map_or(0, |w| w.at_bar);
                for l in lanes(m) {
                    tids.push(self.thread_ids(s as usize, l).1);
                }
            }
            self.notices.races.push(RaceEvent::Barrier { tids });
        }
        let mut invalidate = false;
        for s in warps {
            if let Some(w) = self.warps[s as usize].as_mut() {
                invalidate |= w.bar_invalidate;
                w.blocked_until = 0;
                let m = w.at_bar;
                w.at_bar = 0;
                Self::advance(w, m);
                w.waiting = "ready";
            }
        }
        self.notices.progress += 1;
        if invalidate {
            ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
        }
        self.wake(ctx);
    }

    /// Per-lane addresses, bounds-checked; `None` after reporting an error.
    fn addresses(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        space: Space,
        addr: Address,
        bytes: u32,
        ctx: &Ctx,
    ) -> Option<[u64; 64]> {
        let w = self.warps[wi].as_ref().expect("live");
        let mut out = [0u64; 64];
        let local_len = self.launch.program.local_bytes() as u64;
        for l in lanes(mask) {
            let a = self.val(w, addr.base, l).wrapping_add(addr.offset as u64);
            out[l] = a;
            let ok = match space {
                Space::Global => ctx.mem.in_bounds(a, bytes as u64),
                Space::Local => a.checked_add(bytes as u64).is_some_and(|e| e <= local_len),
            };
            if !ok || a % bytes as u64 != 0 {
                let what = if ok { "misaligned" } else { "out-of-bounds" };
                let msg = format!(
                    "{what} {} access of {bytes} bytes at address {a:#x}",
                    space.name()
                );
                self.fail(wi, pc, l, msg);
                return None;
            }
        }
        if let Some(w) = self.warps[wi].as_mut() {
            w.last_addr = Some(out[mask.trailing_zeros() as usize % 64]);
        }
        Some(out)
    }

    fn line_of(&self, a: u64) -> u64 {
        a & !(self.line_bytes as u64 - 1)
    }

    fn new_op(
        &mut self,
        warp: usize,
        dst: Dst,
        value_bytes: u32,
        kind: OpKind,
        lanes: u64,
        addr: &[u64; 64],
    ) -> u32 {
        let values = self.has_values().then(|| {
            let (i, lv) = self.lane_values.alloc_reuse(|| LaneValues {
                addr: [0; 64],
                vals: [0; 64],
            });
            lv.addr = *addr;
            lv.vals = [0; 64];
            i
        });
        self.ops.alloc(MemOp {
            warp: warp as u16,
            dst,
            value_bytes,
            kind,
            lanes,
            values,
            parts: 0,
            acquire: None,
            race_read: None,
        })
    }

    /// The value slot of lane `l` of op `opi` (a program with values).
    fn lane_val(&mut self, opi: u32, l: usize) -> Option<&mut u64> {
        let vi = self.ops.get(opi).values?;
        Some(&mut self.lane_values.get_mut(vi).vals[l])
    }

    /// Marks the destination registers of an issued memory instruction pending until it completes.
    fn pend_dst(&mut self, wi: usize, dst: Dst) {
        let w = self.warps[wi].as_mut().expect("live");
        match dst {
            Dst::None => {}
            Dst::Reg(d) => w.reg_ready[d as usize] = NEVER,
            Dst::Trace { first, n } => {
                if let Program::Trace { kernel, .. } = &self.launch.program {
                    for &r in &kernel.regs[first as usize..first as usize + n as usize] {
                        w.reg_ready[r as usize] = NEVER;
                    }
                }
            }
        }
    }

    /// Race detection: reports the accesses of one instruction, lane by lane.
    #[allow(clippy::too_many_arguments)]
    fn race_access(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        addrs: &[u64; 64],
        space: Space,
        bytes: u32,
        kind: AccessKind,
        order: Option<MemOrder>,
        scope: Scope,
    ) {
        // SYCL: an atomic on local memory narrows to work_group scope.
        let scope = if space == Space::Local {
            scope.min(Scope::WorkGroup)
        } else {
            scope
        };
        for l in lanes(mask) {
            let (_, tid) = self.thread_ids(wi, l);
            self.notices.races.push(RaceEvent::Access(races::Access {
                tid,
                pc,
                space,
                addr: addrs[l],
                bytes,
                kind,
                order,
                scope,
            }));
        }
    }

    /// Shared-memory pipeline: serialises accesses; returns when this one's data is ready.
    fn shared_access(&mut self, now: Time, addrs: &[u64; 64], mask: u64, atomic: bool) -> Time {
        // Bank conflicts: distinct words on one bank need separate cycles.
        let mut per_bank: Vec<Vec<u64>> = vec![Vec::new(); self.banks as usize];
        for l in lanes(mask) {
            let word = addrs[l] / self.bank_bytes as u64;
            let b = (word % self.banks as u64) as usize;
            if !per_bank[b].contains(&word) {
                per_bank[b].push(word);
            }
        }
        let ways = per_bank
            .iter()
            .map(|v| v.len() as u64)
            .max()
            .unwrap_or(1)
            .max(1);
        self.stats.shared_accesses += 1;
        self.stats.bank_conflict_cycles += ways - 1;
        let start = self.clock.edge_at_or_after(now).max(self.shared_free);
        self.shared_free = start + self.clock.cycles(ways);
        let _ = atomic;
        start + self.clock.cycles(ways - 1 + self.shared_latency)
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        dst: Reg,
        space: Space,
        addr: Address,
        ty: Ty,
        ord: LoadOrd,
        scope: Scope,
        rule: Rule,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let bytes = ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, space, addr, bytes, ctx) else {
            return true;
        };
        self.issue_load(
            wi,
            pc,
            mask,
            &addrs,
            bytes,
            Dst::Reg(dst),
            bytes,
            space,
            ord,
            scope,
            rule,
            now,
            ctx,
        )
    }

    /// A load of `bytes` per lane at `addrs` (kernel or trace); `value_bytes` of each lane's result
    /// go to `dst` (0: timing only). `false` if it must wait (store-buffer overlap).
    #[allow(clippy::too_many_arguments)]
    fn issue_load(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        addrs: &[u64; 64],
        bytes: u32,
        dst: Dst,
        value_bytes: u32,
        space: Space,
        ord: LoadOrd,
        scope: Scope,
        rule: Rule,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let races = self.launch.races;
        let race_read = ord.atomic_order().map(|_| (space, scope, ord.is_acquire()));
        if space == Space::Local {
            let gs = self.warps[wi].as_ref().expect("live").group_slot;
            if races {
                let o = ord.atomic_order();
                self.race_access(
                    wi,
                    pc,
                    mask,
                    addrs,
                    space,
                    bytes,
                    AccessKind::Load,
                    o,
                    scope,
                );
            }
            let opi = self.new_op(wi, dst, value_bytes, OpKind::Local, mask, addrs);
            if races {
                self.ops.get_mut(opi).race_read = race_read;
            }
            if value_bytes > 0 {
                for l in lanes(mask) {
                    let o = addrs[l] as usize;
                    let mut b = [0u8; 8];
                    let g = self.groups[gs].as_ref().expect("resident");
                    b[..bytes as usize].copy_from_slice(&g.local[o..o + bytes as usize]);
                    if let Some(v) = self.lane_val(opi, l) {
                        *v = u64::from_le_bytes(b);
                    }
                }
            }
            {
                let op = self.ops.get_mut(opi);
                op.parts = 1;
                op.acquire = rule.acquire;
            }
            let done = self.shared_access(now, addrs, mask, false);
            self.pend_dst(wi, dst);
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.local += 1;
            if rule.acquire.is_some() {
                w.inflight.acquires += 1;
            }
            Self::advance(w, mask);
            ctx.q.at_or_now(
                done,
                Event::SmIn(
                    self.id,
                    CoreResp::SharedDone {
                        who: Who {
                            warp: wi as u16,
                            op: opi,
                        },
                    },
                ),
            );
            return true;
        }
        // Group lanes by line; forward from the warp's own buffered stores.
        let mut lines_: [(u64, u128); 64] = [(0, 0); 64];
        let mut n = 0;
        for l in lanes(mask) {
            let line = self.line_of(addrs[l]);
            let m = byte_mask((addrs[l] - line) as u32, bytes);
            match lines_[..n].iter_mut().find(|(x, _)| *x == line) {
                Some(e) => e.1 |= m,
                None => {
                    lines_[n] = (line, m);
                    n += 1;
                }
            }
        }
        // The lines the store buffer forwards whole: (index in `lines_`, bytes). Rare; empty
        // without a store buffer, so that a load allocates nothing.
        let mut forwarded: Vec<(usize, LineBuf)> = Vec::new();
        for (i, &(line, m)) in lines_[..n].iter().enumerate() {
            match self.sb.forward(wi as u16, line, m) {
                Forward::None => {}
                Forward::Full(b) => forwarded.push((i, b)),
                Forward::Partial => {
                    let w = self.warps[wi].as_mut().expect("live");
                    w.waiting = "load waits for store buffer (partial overlap)";
                    self.wake_drain(ctx, now);
                    return false;
                }
            }
        }
        let level = ordering::load_level(ord, scope, self.svm);
        let opi = self.new_op(wi, dst, value_bytes, OpKind::Load, mask, addrs);
        if races {
            let o = ord.atomic_order();
            self.race_access(
                wi,
                pc,
                mask,
                addrs,
                space,
                bytes,
                AccessKind::Load,
                o,
                scope,
            );
            self.ops.get_mut(opi).race_read = race_read;
        }
        let mut parts = 0;
        for (i, &(line, m)) in lines_[..n].iter().enumerate() {
            match forwarded.iter().find(|f| f.0 == i).map(|f| f.1) {
                Some(b) => {
                    self.stats.forwarded_loads += 1;
                    let id = ctx.lines.alloc(b);
                    ctx.q.after(
                        self.clock.period,
                        Event::SmIn(
                            self.id,
                            CoreResp::LoadData {
                                who: Who {
                                    warp: wi as u16,
                                    op: opi,
                                },
                                line,
                                data: DataId(id),
                            },
                        ),
                    );
                }
                None => {
                    ctx.q.after(
                        0,
                        Event::L1In(
                            self.id,
                            L1Req::Load {
                                who: Who {
                                    warp: wi as u16,
                                    op: opi,
                                },
                                line,
                                mask: m,
                                level,
                            },
                        ),
                    );
                }
            }
            parts += 1;
        }
        let op = self.ops.get_mut(opi);
        op.parts = parts;
        op.acquire = rule.acquire;
        self.pend_dst(wi, dst);
        let w = self.warps[wi].as_mut().expect("live");
        w.inflight.loads += 1;
        if rule.acquire.is_some() {
            w.inflight.acquires += 1;
        }
        Self::advance(w, mask);
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        space: Space,
        addr: Address,
        src: Operand,
        ty: Ty,
        ord: StoreOrd,
        scope: Scope,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let bytes = ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, space, addr, bytes, ctx) else {
            return true;
        };
        let w = self.warps[wi].as_ref().expect("live");
        let mut vals = [0u64; 64];
        for l in lanes(mask) {
            vals[l] = self.val(w, src, l);
        }
        self.issue_store(
            wi, pc, mask, &addrs, &vals, bytes, space, ord, scope, now, ctx,
        )
    }

    /// A store of `bytes` per lane (kernel or trace; a trace's values are zero and go nowhere).
    /// `false` if it must wait (store buffer full or draining first).
    #[allow(clippy::too_many_arguments)]
    fn issue_store(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        addrs: &[u64; 64],
        vals: &[u64; 64],
        bytes: u32,
        space: Space,
        ord: StoreOrd,
        scope: Scope,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        // Values are at most 8 bytes; wider traced accesses carry no values.
        let vb = bytes.min(8) as usize;
        let race = |sm: &mut Sm| {
            if sm.launch.races {
                let o = ord.atomic_order();
                sm.race_access(
                    wi,
                    pc,
                    mask,
                    addrs,
                    space,
                    bytes,
                    AccessKind::Store,
                    o,
                    scope,
                );
            }
        };
        if space == Space::Local {
            race(self);
            if self.has_values() {
                let gs = self.warps[wi].as_ref().expect("live").group_slot;
                let g = self.groups[gs].as_mut().expect("resident");
                for l in lanes(mask) {
                    let o = addrs[l] as usize;
                    g.local[o..o + vb].copy_from_slice(&vals[l].to_le_bytes()[..vb]);
                }
            }
            self.notices.progress += 1;
            let done = self.shared_access(now, addrs, mask, false);
            let opi = self.new_op(wi, Dst::None, 0, OpKind::Local, mask, addrs);
            self.ops.get_mut(opi).parts = 1;
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.local += 1;
            Self::advance(w, mask);
            ctx.q.at_or_now(
                done,
                Event::SmIn(
                    self.id,
                    CoreResp::SharedDone {
                        who: Who {
                            warp: wi as u16,
                            op: opi,
                        },
                    },
                ),
            );
            return true;
        }
        // Coalesce: one line buffer per touched line (the highest lane wins on equal addresses),
        // in the SM's scratch list (kept for its capacity: a store allocates nothing).
        let mut lines_ = std::mem::take(&mut self.store_lines);
        lines_.clear();
        for l in lanes(mask) {
            let line = self.line_of(addrs[l]);
            let o = (addrs[l] - line) as usize;
            let e = match lines_.iter().position(|x| x.0 == line) {
                Some(i) => &mut lines_[i],
                None => {
                    lines_.push((line, 0, [0u8; MAX_LINE]));
                    lines_.last_mut().expect("pushed")
                }
            };
            e.1 |= byte_mask(o as u32, bytes);
            e.2[o..o + vb].copy_from_slice(&vals[l].to_le_bytes()[..vb]);
        }
        let system = ordering::store_ack(ord, scope, self.svm) == Level::System;
        // A store scattered over more lines than the buffer holds can never enter it: it goes to
        // the L1 directly, after the warp's buffered stores (same-address order).
        let oversize = self.sb.enabled() && !self.sb.can_hold(lines_.len());
        if oversize && self.warps[wi].as_ref().expect("live").inflight.buffered > 0 {
            let w = self.warps[wi].as_mut().expect("live");
            w.waiting = "store larger than the store buffer waits for it to drain";
            self.wake_drain(ctx, now);
            self.store_lines = lines_;
            return false;
        }
        let buffered = self.sb.enabled() && ordering::enters_store_buffer(ord) && !oversize;
        if buffered {
            if !self.sb.has_room(wi as u16, lines_.iter().map(|x| x.0)) {
                let w = self.warps[wi].as_mut().expect("live");
                w.waiting = "store buffer full";
                self.stats.sb_full_stall_ps += self.clock.period;
                self.wake_drain(ctx, now);
                self.store_lines = lines_;
                return false;
            }
            race(self);
            let ready = now
                + self
                    .clock
                    .cycles(self.sb_delay + ctx.rng.upto(self.drain_jitter) as u64);
            let mut added = 0;
            for (line, m, data) in &lines_ {
                let before = self.sb.entries.len();
                self.sb
                    .insert(now, wi as u16, *line, *m, data, ready, system);
                added += self.sb.entries.len() - before;
            }
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.buffered += added as u32;
            Self::advance(w, mask);
            self.wake_drain(ctx, ready);
            self.store_lines = lines_;
            return true;
        }
        let level = if system { Level::System } else { Level::L2 };
        race(self);
        for &(line, m, data) in &lines_ {
            let seq = self.next_write_seq();
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.to_l1 += 1;
            w.inflight.to_l2 += 1;
            let id = ctx.lines.alloc(data);
            ctx.q.after(
                0,
                Event::L1In(
                    self.id,
                    L1Req::Store {
                        who: Who {
                            warp: wi as u16,
                            op: u32::MAX,
                        },
                        line,
                        mask: m,
                        data: DataId(id),
                        level,
                        seq,
                    },
                ),
            );
        }
        Self::advance(self.warps[wi].as_mut().expect("live"), mask);
        self.store_lines = lines_;
        true
    }

    fn atomic(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        a: AtomicSpec,
        rule: Rule,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let bytes = a.ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, a.space, a.addr, bytes, ctx) else {
            return true;
        };
        let w = self.warps[wi].as_ref().expect("live");
        let mut all = Vec::with_capacity(mask.count_ones() as usize);
        all.extend(lanes(mask).map(|l| LaneAtomic {
            lane: l as u8,
            addr: addrs[l],
            operand: self.val(w, a.operand, l),
            expected: a.expected.map(|e| self.val(w, e, l)).unwrap_or(0),
            result: 0,
        }));
        let dst = a.dst.map(Dst::Reg).unwrap_or(Dst::None);
        let race = self.launch.races.then_some((pc, a.order));
        self.issue_atomic(
            wi, race, mask, addrs, all, a.kind, a.ty, dst, a.space, a.scope, rule, now, ctx,
        )
    }

    /// An atomic instruction's lanes (kernel or trace): at the shared-memory unit, the L1 or the L2
    /// slices by space and scope. `race`: the instruction and order to report as a race event.
    /// `false` if it must wait for the warp's own buffered stores.
    #[allow(clippy::too_many_arguments)]
    fn issue_atomic(
        &mut self,
        wi: usize,
        race: Option<(u32, MemOrder)>,
        mask: u64,
        addrs: [u64; 64],
        all: Vec<LaneAtomic>,
        kind: AtomicOp,
        ty: Ty,
        dst: Dst,
        space: Space,
        scope: Scope,
        rule: Rule,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let acquire = rule.acquire.is_some();
        let site = ordering::rmw_site(
            space,
            ordering::space_level(space, scope, self.svm),
            self.wg_atomics_l1,
        );
        let value_bytes = if self.has_values() {
            ty.width().bytes()
        } else {
            0
        };
        let bytes = ty.width().bytes();
        let race = |sm: &mut Sm| -> Option<(Space, Scope, bool)> {
            let (pc, order) = race?;
            let k = AccessKind::Rmw;
            sm.race_access(wi, pc, mask, &addrs, space, bytes, k, Some(order), scope);
            Some((space, scope, acquire))
        };
        if space == Space::Local {
            let gs = self.warps[wi].as_ref().expect("live").group_slot;
            let race_read = race(self);
            let mut batch = AtomicBatch {
                kind,
                ty,
                lanes: all,
            };
            let done = {
                let t = self.shared_access(now, &addrs, mask, true);
                self.shared_atomic.schedule(t, &batch).max(t)
            };
            if self.has_values() {
                let g = self.groups[gs].as_mut().expect("resident");
                let mut view = LocalView { mem: &mut g.local };
                perform_batch(&mut batch, &mut view);
            }
            self.notices.progress += 1;
            let opi = self.new_op(wi, dst, value_bytes, OpKind::Local, mask, &addrs);
            self.ops.get_mut(opi).race_read = race_read;
            for l in &batch.lanes {
                if let Some(v) = self.lane_val(opi, l.lane as usize) {
                    *v = l.result;
                }
            }
            let op = self.ops.get_mut(opi);
            op.parts = 1;
            op.acquire = rule.acquire;
            self.pend_dst(wi, dst);
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.local += 1;
            if acquire {
                w.inflight.acquires += 1;
            }
            Self::advance(w, mask);
            ctx.q.at_or_now(
                done,
                Event::SmIn(
                    self.id,
                    CoreResp::SharedDone {
                        who: Who {
                            warp: wi as u16,
                            op: opi,
                        },
                    },
                ),
            );
            return true;
        }
        // Same-location order with the warp's own buffered stores: they must leave first.
        // The distinct lines, in order of first lane (at most one per lane).
        let mut line_buf = [0u64; 64];
        let mut nlines = 0;
        for l in &all {
            let line = self.line_of(l.addr);
            if !line_buf[..nlines].contains(&line) {
                line_buf[nlines] = line;
                nlines += 1;
            }
        }
        let lines_ = &line_buf[..nlines];
        if lines_.iter().any(|&l| self.sb.holds(wi as u16, l)) {
            let w = self.warps[wi].as_mut().expect("live");
            w.waiting = "atomic waits for own buffered store";
            self.wake_drain(ctx, now);
            return false;
        }
        let (at_l1, lvl) = match site {
            RmwSite::L1 => (true, Level::Sm),
            RmwSite::L2 { level } => (false, level),
            RmwSite::SharedMemory => unreachable!("local memory took the path above"),
        };
        let race_read = race(self);
        let opi = self.new_op(wi, dst, value_bytes, OpKind::Atomic, mask, &addrs);
        self.ops.get_mut(opi).race_read = race_read;
        let mut parts = 0;
        let mut all = Some(all);
        for &line in lines_ {
            // One line (the common case): the instruction's lanes are the batch, without a copy.
            let ls: Vec<LaneAtomic> = match all.take_if(|_| nlines == 1) {
                Some(v) => v,
                None => all
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|l| self.line_of(l.addr) == line)
                    .collect(),
            };
            let b = ctx.batches.alloc(AtomicBatch {
                kind,
                ty,
                lanes: ls,
            });
            // Only an atomic at the L1 writes through (and is acknowledged like a store).
            let seq = if at_l1 { self.next_write_seq() } else { 0 };
            ctx.q.after(
                0,
                Event::L1In(
                    self.id,
                    L1Req::Atomic {
                        who: Who {
                            warp: wi as u16,
                            op: opi,
                        },
                        line,
                        batch: BatchId(b),
                        level: lvl,
                        at_l1,
                        seq,
                    },
                ),
            );
            parts += 1;
        }
        let op = self.ops.get_mut(opi);
        op.parts = parts;
        op.acquire = rule.acquire;
        self.pend_dst(wi, dst);
        let w = self.warps[wi].as_mut().expect("live");
        w.inflight.loads += 1;
        if at_l1 {
            w.inflight.to_l2 += parts;
        }
        if acquire {
            w.inflight.acquires += 1;
        }
        Self::advance(w, mask);
        true
    }

    /// Live warps for a no-progress diagnosis: (group, warp in group, pc, what it waits for, last address).
    pub fn stuck(&self) -> Vec<(u64, u32, u32, &'static str, Option<u64>)> {
        self.warps
            .iter()
            .flatten()
            .filter(|w| w.live != 0)
            .map(|w| {
                let g = self.groups[w.group_slot]
                    .as_ref()
                    .map(|g| g.group)
                    .unwrap_or(0);
                // `waiting` is overwritten once the barrier instruction has issued.
                let waiting = if w.at_bar != 0 && w.at_bar & w.live == w.live {
                    BARRIER_WAIT
                } else {
                    w.waiting
                };
                (g, w.warp_in_group, w.last_pc, waiting, w.last_addr)
            })
            .collect()
    }
}

struct AtomicSpec {
    kind: AtomicOp,
    dst: Option<Reg>,
    space: Space,
    addr: Address,
    operand: Operand,
    expected: Option<Operand>,
    ty: Ty,
    /// The whole order (race reports name it; the release part is enforced before issue).
    order: MemOrder,
    scope: Scope,
}

struct LocalView<'a> {
    mem: &'a mut Vec<u8>,
}

impl ValueStore for LocalView<'_> {
    fn read(&self, addr: u64, len: u32) -> u64 {
        let o = addr as usize;
        let mut b = [0u8; 8];
        b[..len as usize].copy_from_slice(&self.mem[o..o + len as usize]);
        u64::from_le_bytes(b)
    }
    fn write(&mut self, addr: u64, len: u32, v: u64) {
        let o = addr as usize;
        self.mem[o..o + len as usize].copy_from_slice(&v.to_le_bytes()[..len as usize]);
    }
}

/// The registers an instruction's scoreboard check reads: its register sources and its destination
/// (no pending write to it may be outstanding).
fn scoreboard_regs(inst: &Inst) -> ([Reg; 4], usize) {
    let mut out = [0; 4];
    let mut n = 0;
    let mut reg = |r: Reg| {
        out[n] = r;
        n += 1;
    };
    let op = |o: Operand, reg: &mut dyn FnMut(Reg)| {
        if let Operand::Reg(r) = o {
            reg(r);
        }
    };
    match *inst {
        Inst::Mov { dst, src } => {
            op(src, &mut reg);
            reg(dst);
        }
        Inst::ReadSpecial { dst, .. } => reg(dst),
        Inst::Alu { dst, a, b, .. } | Inst::Cmp { dst, a, b, .. } => {
            op(a, &mut reg);
            op(b, &mut reg);
            reg(dst);
        }
        Inst::Select { dst, cond, a, b } => {
            reg(cond);
            op(a, &mut reg);
            op(b, &mut reg);
            reg(dst);
        }
        Inst::Cvt { dst, src, .. } => {
            reg(src);
            reg(dst);
        }
        Inst::Branch { cond, .. } => {
            if let Some((r, _)) = cond {
                reg(r);
            }
        }
        Inst::Load { dst, addr, .. } => {
            op(addr.base, &mut reg);
            reg(dst);
        }
        Inst::Store { addr, src, .. } => {
            op(addr.base, &mut reg);
            op(src, &mut reg);
        }
        Inst::Rmw {
            dst, addr, operand, ..
        } => {
            op(addr.base, &mut reg);
            op(operand, &mut reg);
            if let Some(d) = dst {
                reg(d);
            }
        }
        Inst::Cas {
            dst,
            addr,
            expected,
            desired,
            ..
        } => {
            op(addr.base, &mut reg);
            op(expected, &mut reg);
            op(desired, &mut reg);
            if let Some(d) = dst {
                reg(d);
            }
        }
        Inst::Fence { .. } | Inst::Barrier { .. } | Inst::Compute { .. } | Inst::Exit => {}
    }
    (out, n)
}

/// Result latency of an instruction class, core cycles.
fn latency_of(l: &crate::config::InstLatency, c: LatencyClass) -> u64 {
    match c {
        LatencyClass::IntAlu => l.int_alu,
        LatencyClass::IntMul => l.int_mul,
        LatencyClass::IntDiv => l.int_div,
        LatencyClass::FpAlu => l.fp_alu,
        LatencyClass::FpDiv => l.fp_div,
        LatencyClass::Special => l.special,
        LatencyClass::Branch => l.branch,
    }
    .max(1) as u64
}

/// Iterates the set bits of a lane mask.
pub fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

fn op_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Div => "div",
        AluOp::Rem => "rem",
        _ => "alu",
    }
}

fn sx32(x: u64) -> i64 {
    x as u32 as i32 as i64
}

/// Two-operand arithmetic on raw register bits; `None` on integer division by zero.
pub fn alu(op: AluOp, ty: Ty, a: u64, b: u64) -> Option<u64> {
    let m32 = |x: u64| x & 0xFFFF_FFFF;
    Some(match ty {
        Ty::F32 => {
            let (x, y) = (bits_f32(a), bits_f32(b));
            let r = match op {
                AluOp::Add => x + y,
                AluOp::Sub => x - y,
                AluOp::Mul => x * y,
                AluOp::Div => x / y,
                AluOp::Rem => x % y,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                _ => return Some(alu(op, Ty::U32, a, b)?),
            };
            f32_bits(r)
        }
        Ty::U32 => {
            let (x, y) = (m32(a) as u32, m32(b) as u32);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y),
                AluOp::Shr => x.wrapping_shr(y),
            }) as u64
        }
        Ty::I32 => {
            let (x, y) = (sx32(a) as i32, sx32(b) as i32);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y as u32),
                AluOp::Shr => x.wrapping_shr(y as u32),
            }) as u32 as u64
        }
        Ty::U64 => match op {
            AluOp::Add => a.wrapping_add(b),
            AluOp::Sub => a.wrapping_sub(b),
            AluOp::Mul => a.wrapping_mul(b),
            AluOp::Div => a.checked_div(b)?,
            AluOp::Rem => a.checked_rem(b)?,
            AluOp::Min => a.min(b),
            AluOp::Max => a.max(b),
            AluOp::And => a & b,
            AluOp::Or => a | b,
            AluOp::Xor => a ^ b,
            AluOp::Shl => a.wrapping_shl(b as u32),
            AluOp::Shr => a.wrapping_shr(b as u32),
        },
        Ty::I64 => {
            let (x, y) = (a as i64, b as i64);
            (match op {
                AluOp::Add => x.wrapping_add(y),
                AluOp::Sub => x.wrapping_sub(y),
                AluOp::Mul => x.wrapping_mul(y),
                AluOp::Div => x.checked_div(y)?,
                AluOp::Rem => x.checked_rem(y)?,
                AluOp::Min => x.min(y),
                AluOp::Max => x.max(y),
                AluOp::And => x & y,
                AluOp::Or => x | y,
                AluOp::Xor => x ^ y,
                AluOp::Shl => x.wrapping_shl(y as u32),
                AluOp::Shr => x.wrapping_shr(y as u32),
            }) as u64
        }
    })
}

pub fn cmp(op: CmpOp, ty: Ty, a: u64, b: u64) -> bool {
    use std::cmp::Ordering::*;
    let o = match ty {
        Ty::U32 => (a as u32).cmp(&(b as u32)),
        Ty::I32 => sx32(a).cmp(&sx32(b)),
        Ty::U64 => a.cmp(&b),
        Ty::I64 => (a as i64).cmp(&(b as i64)),
        Ty::F32 => match bits_f32(a).partial_cmp(&bits_f32(b)) {
            Some(o) => o,
            // Unordered (NaN): only != holds.
            None => return op == CmpOp::Ne,
        },
    };
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
    }
}

pub fn convert(v: u64, from: Ty, to: Ty) -> u64 {
    let x: f64 = match from {
        Ty::U32 => (v as u32) as f64,
        Ty::I32 => sx32(v) as f64,
        Ty::U64 => v as f64,
        Ty::I64 => (v as i64) as f64,
        Ty::F32 => bits_f32(v) as f64,
    };
    match (from.is_float(), to) {
        (_, Ty::F32) => f32_bits(x as f32),
        (true, Ty::U32) => (x as u32) as u64,
        (true, Ty::I32) => (x as i32) as u32 as u64,
        (true, Ty::U64) => x as u64,
        (true, Ty::I64) => (x as i64) as u64,
        (false, Ty::U32) => v & 0xFFFF_FFFF,
        (false, Ty::I32) => v & 0xFFFF_FFFF,
        (false, Ty::U64) => {
            if from == Ty::I32 {
                sx32(v) as u64
            } else if from == Ty::U32 {
                v & 0xFFFF_FFFF
            } else {
                v
            }
        }
        (false, Ty::I64) => {
            if from == Ty::I32 {
                sx32(v) as u64
            } else if from == Ty::U32 {
                v & 0xFFFF_FFFF
            } else {
                v
            }
        }
    }
}
