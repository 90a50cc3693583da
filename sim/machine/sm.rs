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
//!   L2 (device) / the system point (system);
//! - an acquire (load, RMW, fence) blocks every later memory operation until it completes; at device
//!   scope or wider it then invalidates the SM's L1;
//! - seq_cst is both, and waits for everything earlier to complete: all seq_cst operations are then
//!   performed at one point in time each, in program order, which gives the single total order;
//! - atomics at work_group scope or narrower run at the SM (shared-memory unit, or the L1 with
//!   `work_group_global_at = "l1"`), wider ones at the L2 slice; local-memory atomics narrow to
//!   work_group (SYCL rule); relaxed operations impose no ordering.
//!
//! Not modelled: instruction fetch and caches, register-bank conflicts, dual issue of one warp,
//! predicated execution other than branches, the carve-out between L1 and shared memory.

use super::memory::byte_mask;
use super::msg::*;
use super::store_buffer::{Forward, StoreBuffer};
use super::stress::{StressAccess, StressWarps, STRESS_WARP};
use crate::config::{GpuConfig, WarpPolicy, WorkGroupAtomicSite};
use crate::engine::{Clock, Time};
use crate::ir::*;
use crate::workload::Geometry;
use std::sync::Arc;

const NEVER: Time = Time::MAX;
/// What a warp whose live lanes all wait at a barrier waits on (for diagnoses).
pub const BARRIER_WAIT: &str = "barrier";
/// Backward branches a divergent lane group may take before the scheduler rotates to other lanes.
const SPIN_ROTATE: u32 = 16;

pub struct Warp {
    pub group_slot: usize,
    pub warp_in_group: u32,
    pub nlanes: u32,
    pub live: u64,
    at_bar: u64,
    pub pc: Vec<u32>,
    regs: Vec<u64>,
    reg_ready: Vec<Time>,
    ready_at: Time,
    loads_out: u32,
    local_out: u32,
    sb_count: u32,
    to_l1: u32,
    to_l2: u32,
    acq_pending: u32,
    spin: u32,
    rotate_from: Option<u32>,
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

    /// Lanes to run next and their PC.
    fn select(&mut self) -> Option<(u32, u64)> {
        let cand = self.live & !self.at_bar;
        if cand == 0 {
            return None;
        }
        let mut min = u32::MAX;
        let mut above: Option<u32> = None;
        let mut m = cand;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = self.pc[l];
            min = min.min(p);
            if let Some(r) = self.rotate_from {
                if p > r && above.is_none_or(|a| p < a) {
                    above = Some(p);
                }
            }
        }
        let pc = match (self.rotate_from, above) {
            (Some(_), Some(a)) => a,
            _ => min,
        };
        let mut mask = 0u64;
        let mut m = cand;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.pc[l] == pc {
                mask |= 1 << l;
            }
        }
        Some((pc, mask))
    }

    fn quiet(&self) -> bool {
        self.loads_out == 0
            && self.local_out == 0
            && self.sb_count == 0
            && self.to_l1 == 0
            && self.to_l2 == 0
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
    dst: Option<Reg>,
    ty: Ty,
    kind: OpKind,
    lanes: u64,
    addr: [u64; 64],
    vals: [u64; 64],
    parts: u32,
    /// Invalidate the L1 when this acquire completes.
    acquire: Option<Level>,
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
    /// An exited warp released its slot: a waiting work-group may fit now.
    pub slots_freed: bool,
    /// (group id, lane-local thread index, final registers) for captured threads.
    pub exits: Vec<(u64, u32, Vec<u64>)>,
}

pub struct Sm {
    pub id: u16,
    clock: Clock,
    ws: u32,
    kernel: Arc<Kernel>,
    geo: Geometry,
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
    pub groups: Vec<Option<GroupSlot>>,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_shared: u32,
    pub sb: StoreBuffer,
    ops: Pool<MemOp>,
    tick_at: Option<Time>,
    drain_at: Option<Time>,
    last_issued: Vec<usize>,
    shared_free: Time,
    pub shared_atomic: super::l2::AtomicUnit,
    pub stats: SmStats,
    pub notices: SmNotices,
    capture_groups: Arc<std::collections::HashSet<u64>>,
    params: Arc<Vec<(Reg, u64)>>,
    /// The SM's write frontier: every write the SM sends to its L1 gets the next sequence number;
    /// `wbase` is the smallest not yet acknowledged, `wacked[i]` says whether `wbase + i` is.
    wseq_next: u64,
    wbase: u64,
    wacked: std::collections::VecDeque<bool>,
    stress: Option<StressWarps>,
}

pub struct SmParams {
    pub params: Arc<Vec<(Reg, u64)>>,
    pub kernel: Arc<Kernel>,
    pub geo: Geometry,
    pub capture_groups: Arc<std::collections::HashSet<u64>>,
    /// Scratch region (base, bytes) of the stress warps, when the config has any.
    pub scratch: Option<(u64, u64)>,
}

fn level_of(scope: Scope, svm: bool) -> Level {
    match scope {
        Scope::WorkItem | Scope::SubGroup | Scope::WorkGroup => Level::Sm,
        Scope::Device => Level::L2,
        Scope::System if svm => Level::System,
        Scope::System => Level::L2,
    }
}

impl Sm {
    pub fn new(id: u16, cfg: &GpuConfig, p: &SmParams) -> Sm {
        let clock = Clock::from_mhz(cfg.clocks.core_mhz);
        Sm {
            id,
            clock,
            ws: cfg.sm.warp_size,
            kernel: p.kernel.clone(),
            geo: p.geo,
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
            groups: (0..cfg.sm.max_groups).map(|_| None).collect(),
            used_threads: 0,
            used_warps: 0,
            used_shared: 0,
            sb: StoreBuffer::new(&cfg.store_buffer),
            ops: Pool::default(),
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
            capture_groups: p.capture_groups.clone(),
            params: p.params.clone(),
            wseq_next: 0,
            wbase: 0,
            wacked: std::collections::VecDeque::new(),
            stress: p.scratch.map(|(base, bytes)| {
                StressWarps::new(cfg.stress.stress_warps, base, bytes, cfg.l1.line_bytes)
            }),
        }
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

    /// Whether a group of `threads` threads, `warps` warps and `shared` bytes fits now.
    pub fn fits(&self, threads: u32, warps: u32, shared: u32, cfg: &GpuConfig) -> bool {
        self.groups.iter().any(|g| g.is_none())
            && self.used_warps + warps <= cfg.sm.max_warps
            && self.used_threads + threads <= cfg.sm.max_threads
            && self.used_shared + shared <= cfg.sm.max_shared_bytes
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
        let nregs = self.kernel.num_regs().max(1);
        let mut slots = Vec::with_capacity(nw as usize);
        for w in 0..nw {
            let Some(ws_slot) = self.warps.iter().position(|x| x.is_none()) else {
                break;
            };
            let nl = (threads - w * self.ws).min(self.ws);
            let mut warp = Warp {
                group_slot: gs,
                warp_in_group: w,
                nlanes: nl,
                live: 0,
                at_bar: 0,
                pc: vec![0; self.ws as usize],
                regs: vec![0; nregs * self.ws as usize],
                reg_ready: vec![0; nregs],
                ready_at: now + self.clock.cycles(skew()),
                loads_out: 0,
                local_out: 0,
                sb_count: 0,
                to_l1: 0,
                to_l2: 0,
                acq_pending: 0,
                spin: 0,
                rotate_from: None,
                last_addr: None,
                last_pc: 0,
                waiting: "ready",
                exited: false,
                fence_mark: None,
            };
            warp.live = warp.full_mask();
            for &(r, v) in self.params.iter() {
                for l in 0..self.ws as usize {
                    warp.regs[r as usize * self.ws as usize + l] = v;
                }
            }
            self.warps[ws_slot] = Some(warp);
            slots.push(ws_slot as u16);
        }
        let local = vec![0u8; self.kernel.local_bytes as usize];
        self.used_threads += threads;
        self.used_warps += nw;
        self.used_shared += self.kernel.local_bytes;
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
                w.sb_count -= 1;
                w.to_l1 += 1;
                w.to_l2 += 1;
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
                    w.to_l1 -= 1;
                }
                self.retire_if_settled(warp as usize);
            }
            CoreResp::StoreAcked { warp, seq } => {
                self.write_acked(seq);
                if let Some(w) = self.warps[warp as usize].as_mut() {
                    w.to_l2 -= 1;
                }
                self.retire_if_settled(warp as usize);
            }
            CoreResp::LoadData { who, line, data } => {
                let bytes = *ctx.lines.get(data.0);
                ctx.lines.release(data.0);
                let op = self.ops.get_mut(who.op);
                let wb = op.ty.width().bytes();
                let mut m = op.lanes;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = op.addr[l];
                    if a & !(self.line_bytes as u64 - 1) == line {
                        let o = (a - line) as usize;
                        let mut b = [0u8; 8];
                        b[..wb as usize].copy_from_slice(&bytes[o..o + wb as usize]);
                        op.vals[l] = u64::from_le_bytes(b);
                    }
                }
                self.part_done(who.op, ctx);
            }
            CoreResp::AtomicDone { who, batch } => {
                let b = ctx.batches.get(batch.0);
                let op = self.ops.get_mut(who.op);
                for l in &b.lanes {
                    op.vals[l.lane as usize] = l.result;
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
        let (warp, dst, kind, acquire, lanes) = (op.warp, op.dst, op.kind, op.acquire, op.lanes);
        let vals = op.vals;
        self.ops.release(opi);
        let Some(w) = self.warps[warp as usize].as_mut() else {
            return;
        };
        if let Some(d) = dst {
            let mut m = lanes;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                w.regs[d as usize * ws + l] = vals[l];
            }
            w.reg_ready[d as usize] = now;
        }
        match kind {
            OpKind::Local => w.local_out -= 1,
            OpKind::Load | OpKind::Atomic => w.loads_out -= 1,
        }
        if let Some(level) = acquire {
            w.acq_pending -= 1;
            if level >= Level::L2 {
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
        for s in 0..self.schedulers as usize {
            for _ in 0..self.issue_width {
                let start = match self.policy {
                    WarpPolicy::Gto => self.last_issued[s],
                    WarpPolicy::Lrr => self.last_issued[s] + self.schedulers as usize,
                };
                let mut done = false;
                let mut k = 0;
                while k < nslots {
                    let i = (start + k) % nslots;
                    k += 1;
                    if i % self.schedulers as usize != s {
                        continue;
                    }
                    if self.try_issue(i, now, &mut lsu_left, ctx) {
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
        for w in self.warps.iter().flatten() {
            if w.live & !w.at_bar == 0 {
                continue;
            }
            if w.ready_at > now {
                wake = wake.min(w.ready_at);
            } else if issued_any {
                wake = wake.min(next);
            } else {
                for &t in &w.reg_ready {
                    if t > now && t != NEVER {
                        wake = wake.min(t);
                    }
                }
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

    fn reg_ok(w: &Warp, r: Reg, now: Time) -> bool {
        w.reg_ready[r as usize] <= now
    }

    fn op_ok(w: &Warp, o: Operand, now: Time) -> bool {
        match o {
            Operand::Reg(r) => Self::reg_ok(w, r, now),
            Operand::Imm(_) => true,
        }
    }

    /// Whether the earlier stores of `w` are done at `level` and its loads have returned.
    fn released(w: &Warp, level: Level) -> bool {
        w.loads_out == 0
            && w.local_out == 0
            && w.sb_count == 0
            && w.to_l1 == 0
            && (level == Level::Sm || w.to_l2 == 0)
    }

    fn try_issue(&mut self, wi: usize, now: Time, lsu_left: &mut u32, ctx: &mut Ctx) -> bool {
        let kernel = self.kernel.clone();
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
        let deps_ok = match inst {
            Inst::Mov { dst, src } => Self::op_ok(w, *src, now) && Self::reg_ok(w, *dst, now),
            Inst::ReadSpecial { dst, .. } => Self::reg_ok(w, *dst, now),
            Inst::Alu { dst, a, b, .. } | Inst::Cmp { dst, a, b, .. } => {
                Self::op_ok(w, *a, now) && Self::op_ok(w, *b, now) && Self::reg_ok(w, *dst, now)
            }
            Inst::Select { dst, cond, a, b } => {
                Self::reg_ok(w, *cond, now)
                    && Self::op_ok(w, *a, now)
                    && Self::op_ok(w, *b, now)
                    && Self::reg_ok(w, *dst, now)
            }
            Inst::Cvt { dst, src, .. } => Self::reg_ok(w, *src, now) && Self::reg_ok(w, *dst, now),
            Inst::Branch { cond, .. } => cond.is_none_or(|(r, _)| Self::reg_ok(w, r, now)),
            Inst::Load { dst, addr, .. } => {
                Self::op_ok(w, addr.base, now) && Self::reg_ok(w, *dst, now)
            }
            Inst::Store { addr, src, .. } => {
                Self::op_ok(w, addr.base, now) && Self::op_ok(w, *src, now)
            }
            Inst::Rmw {
                dst, addr, operand, ..
            } => {
                Self::op_ok(w, addr.base, now)
                    && Self::op_ok(w, *operand, now)
                    && dst.is_none_or(|d| Self::reg_ok(w, d, now))
            }
            Inst::Cas {
                dst,
                addr,
                expected,
                desired,
                ..
            } => {
                Self::op_ok(w, addr.base, now)
                    && Self::op_ok(w, *expected, now)
                    && Self::op_ok(w, *desired, now)
                    && dst.is_none_or(|d| Self::reg_ok(w, d, now))
            }
            Inst::Fence { .. } | Inst::Barrier { .. } | Inst::Compute { .. } | Inst::Exit => true,
        };
        if !deps_ok {
            w.waiting = "register dependency";
            return false;
        }
        let is_mem = matches!(
            inst,
            Inst::Load { .. } | Inst::Store { .. } | Inst::Rmw { .. } | Inst::Cas { .. }
        );
        if (is_mem || matches!(inst, Inst::Fence { .. } | Inst::Barrier { .. }))
            && w.acq_pending > 0
        {
            w.waiting = "earlier acquire";
            return false;
        }
        if is_mem && *lsu_left == 0 {
            return false;
        }
        // Ordering preconditions (DESIGN.md table).
        let svm = self.svm;
        let need_release: Option<Level> = match inst {
            Inst::Store {
                ord, scope, space, ..
            } if ord.is_release() => Some(self.eff_level(*space, *scope, svm)),
            Inst::Load {
                ord: LoadOrd::SeqCst,
                scope,
                space,
                ..
            } => Some(self.eff_level(*space, *scope, svm)),
            Inst::Rmw {
                ord, scope, space, ..
            } if ord.is_release() => Some(self.eff_level(*space, *scope, svm)),
            Inst::Cas {
                success,
                scope,
                space,
                ..
            } if success.is_release() => Some(self.eff_level(*space, *scope, svm)),
            Inst::Fence { ord, scope, .. } => Some(if ord.is_release() {
                level_of(*scope, svm)
            } else {
                Level::Sm
            }),
            Inst::Barrier { spaces, scope, .. } => Some(if spaces.global {
                level_of(*scope, svm)
            } else {
                Level::Sm
            }),
            _ => None,
        };
        let w = self.warps[wi].as_mut().expect("checked above");
        if let Some(level) = need_release {
            let (own, cumulative) = match inst {
                // An acquire-only fence orders earlier loads before later accesses.
                Inst::Fence {
                    ord: FenceOrd::Acquire,
                    ..
                } => (w.loads_out == 0 && w.local_out == 0, false),
                Inst::Barrier { spaces, .. } if !spaces.global => {
                    (w.local_out == 0 && w.loads_out == 0, false)
                }
                _ => (Self::released(w, level), level >= Level::L2),
            };
            if !own {
                w.fence_mark = None;
            }
            let ok = own && (!cumulative || self.frontier_reached(wi));
            let w = self.warps[wi].as_mut().expect("checked above");
            if !ok {
                w.waiting = "release: earlier accesses not yet performed";
                self.stats.fence_stall_ps += self.clock.period;
                if w.sb_count > 0 {
                    let t = now;
                    self.wake_drain(ctx, t);
                }
                return false;
            }
        }
        let ok = self.execute(wi, pc, mask, inst, now, ctx);
        if ok {
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
        ok
    }

    fn eff_level(&self, space: Space, scope: Scope, svm: bool) -> Level {
        match space {
            // SYCL: an atomic on local memory narrows to work_group scope.
            Space::Local => Level::Sm,
            Space::Global => level_of(scope, svm),
        }
    }

    fn val(&self, w: &Warp, o: Operand, lane: usize) -> u64 {
        match o {
            Operand::Reg(r) => w.regs[r as usize * self.ws as usize + lane],
            Operand::Imm(v) => v,
        }
    }

    fn set(&self, w: &mut Warp, r: Reg, lane: usize, v: u64) {
        w.regs[r as usize * self.ws as usize + lane] = v;
    }

    fn fail(&mut self, wi: usize, pc: u32, lane: usize, msg: String) {
        let (group, thread) = self.thread_ids(wi, lane);
        self.notices.error = Some((pc as usize, msg, thread, group));
    }

    fn thread_ids(&self, wi: usize, lane: usize) -> (u64, u64) {
        let w = self.warps[wi].as_ref().expect("live warp");
        let g = self.groups[w.group_slot].as_ref().expect("resident group");
        let local = w.warp_in_group as u64 * self.ws as u64 + lane as u64;
        (g.group, g.group * self.geo.group_threads() as u64 + local)
    }

    fn special(&self, wi: usize, lane: usize, s: Special, now: Time) -> u64 {
        let w = self.warps[wi].as_ref().expect("live warp");
        let g = self.groups[w.group_slot].as_ref().expect("resident group");
        let gs = self.geo.group_size;
        let ng = self.geo.groups;
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
        let l = &self.lat;
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

    fn advance(w: &mut Warp, mask: u64) {
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            w.pc[l] += 1;
        }
    }

    /// Executes one instruction for the lanes in `mask`; `false` if it could not issue (stall).
    fn execute(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        inst: &Inst,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let ws = self.ws as usize;
        match *inst {
            Inst::Mov { dst, src } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let v = self.val(&w, src, l);
                    self.set(&mut w, dst, l, v);
                }
                w.reg_ready[dst as usize] =
                    now + self.clock.cycles(self.latency(LatencyClass::IntAlu));
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
                    w.regs[dst as usize * ws + l] = v;
                }
                w.reg_ready[dst as usize] = now + lat;
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
                w.reg_ready[dst as usize] = now + self.clock.cycles(self.latency(class));
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
                w.reg_ready[dst as usize] = now + self.clock.cycles(self.latency(class));
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::Select { dst, cond, a, b } => {
                let mut w = self.warps[wi].take().expect("live");
                for l in lanes(mask) {
                    let c = w.regs[cond as usize * ws + l] != 0;
                    let v = if c {
                        self.val(&w, a, l)
                    } else {
                        self.val(&w, b, l)
                    };
                    self.set(&mut w, dst, l, v);
                }
                w.reg_ready[dst as usize] =
                    now + self.clock.cycles(self.latency(LatencyClass::IntAlu));
                Self::advance(&mut w, mask);
                self.warps[wi] = Some(w);
            }
            Inst::Cvt { dst, src, from, to } => {
                let w = self.warps[wi].as_mut().expect("live");
                for l in lanes(mask) {
                    let v = w.regs[src as usize * ws + l];
                    w.regs[dst as usize * ws + l] = convert(v, from, to);
                }
                w.reg_ready[dst as usize] = now + self.clock.cycles(self.lat.fp_alu.max(1) as u64);
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
                let mut taken = 0u64;
                for l in lanes(mask) {
                    let t = match cond {
                        None => true,
                        Some((r, nz)) => (w.regs[r as usize * ws + l] != 0) == nz,
                    };
                    if t {
                        w.pc[l] = target;
                        taken |= 1 << l;
                    } else {
                        w.pc[l] += 1;
                    }
                }
                // Forward-progress rotation for lanes spinning while others of the warp wait.
                let waiting_others = w.live & !w.at_bar & !mask != 0;
                if taken != 0 && target <= pc && waiting_others {
                    w.spin += 1;
                    if w.spin >= SPIN_ROTATE {
                        w.spin = 0;
                        w.rotate_from = Some(pc);
                    }
                } else if w.rotate_from.is_some_and(|r| pc > r) || !waiting_others {
                    w.rotate_from = None;
                }
                w.ready_at = w.ready_at.max(now + lat);
            }
            Inst::Exit => {
                self.exit_lanes(wi, mask, ctx);
            }
            Inst::Fence { ord, scope, .. } => {
                let w = self.warps[wi].as_mut().expect("live");
                Self::advance(w, mask);
                if ord.is_acquire() && level_of(scope, self.svm) >= Level::L2 {
                    ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
                }
            }
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } => return self.barrier(wi, mask, kind, spaces, scope, ctx),
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                scope,
            } => {
                return self.load(wi, pc, mask, dst, space, addr, ty, ord, scope, now, ctx);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                scope,
            } => {
                return self.store(wi, pc, mask, space, addr, src, ty, ord, scope, now, ctx);
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                scope,
            } => {
                let spec = AtomicSpec {
                    kind: AtomicKind::Rmw(op),
                    dst,
                    space,
                    addr,
                    operand,
                    expected: None,
                    ty,
                    acquire: ord.is_acquire(),
                    scope,
                };
                return self.atomic(wi, pc, mask, spec, now, ctx);
            }
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                scope,
                ..
            } => {
                let spec = AtomicSpec {
                    kind: AtomicKind::Cas,
                    dst,
                    space,
                    addr,
                    operand: desired,
                    expected: Some(expected),
                    ty,
                    acquire: success.is_acquire(),
                    scope,
                };
                return self.atomic(wi, pc, mask, spec, now, ctx);
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
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        if self.capture_groups.contains(&g.group) {
            self.notices
                .exits
                .push((g.group, w.warp_in_group * self.ws, w.regs));
        }
        g.resident_warps -= 1;
        self.used_warps -= 1;
        if g.resident_warps == 0 {
            let g = self.groups[gs].take().expect("resident");
            self.used_threads -= g.threads;
            self.used_shared -= self.kernel.local_bytes;
            self.notices.groups_done.push((gs, g.group));
        }
    }

    fn barrier(
        &mut self,
        wi: usize,
        mask: u64,
        kind: BarrierKind,
        spaces: SpaceSet,
        scope: Scope,
        ctx: &mut Ctx,
    ) -> bool {
        let w = self.warps[wi].as_mut().expect("live");
        w.at_bar |= mask;
        w.waiting = "barrier";
        let _ = (spaces, scope);
        match kind {
            BarrierKind::SubGroup => {
                if w.at_bar & w.live == w.live {
                    let m = w.at_bar;
                    w.at_bar = 0;
                    Self::advance(w, m);
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
        let mut invalidate = false;
        for s in warps {
            if let Some(w) = self.warps[s as usize].as_mut() {
                let pc = w.pc[w.at_bar.trailing_zeros() as usize % 64];
                if let Some(Inst::Barrier { spaces, scope, .. }) =
                    self.kernel.insts.get(pc as usize)
                {
                    invalidate |= spaces.global && level_of(*scope, self.svm) >= Level::L2;
                }
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
        let local_len = self.kernel.local_bytes as u64;
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
        dst: Option<Reg>,
        ty: Ty,
        kind: OpKind,
        lanes: u64,
        addr: [u64; 64],
    ) -> u32 {
        self.ops.alloc(MemOp {
            warp: warp as u16,
            dst,
            ty,
            kind,
            lanes,
            addr,
            vals: [0; 64],
            parts: 0,
            acquire: None,
        })
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
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let bytes = ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, space, addr, bytes, ctx) else {
            return true;
        };
        if space == Space::Local {
            let gs = self.warps[wi].as_ref().expect("live").group_slot;
            let opi = self.new_op(wi, Some(dst), ty, OpKind::Local, mask, addrs);
            {
                let g = self.groups[gs].as_ref().expect("resident");
                let op = self.ops.get_mut(opi);
                for l in lanes(mask) {
                    let o = addrs[l] as usize;
                    let mut b = [0u8; 8];
                    b[..bytes as usize].copy_from_slice(&g.local[o..o + bytes as usize]);
                    op.vals[l] = u64::from_le_bytes(b);
                }
                op.parts = 1;
                if ord.is_acquire() {
                    op.acquire = Some(Level::Sm);
                }
            }
            let done = self.shared_access(now, &addrs, mask, false);
            let w = self.warps[wi].as_mut().expect("live");
            w.local_out += 1;
            if ord.is_acquire() {
                w.acq_pending += 1;
            }
            w.reg_ready[dst as usize] = NEVER;
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
        let mut forwarded: [Option<LineBuf>; 64] = [None; 64];
        for (i, &(line, m)) in lines_[..n].iter().enumerate() {
            match self.sb.forward(wi as u16, line, m) {
                Forward::None => {}
                Forward::Full(b) => forwarded[i] = Some(b),
                Forward::Partial => {
                    let w = self.warps[wi].as_mut().expect("live");
                    w.waiting = "load waits for store buffer (partial overlap)";
                    self.wake_drain(ctx, now);
                    return false;
                }
            }
        }
        let level = match ord {
            LoadOrd::Plain => Level::Sm,
            _ => level_of(scope, self.svm),
        };
        let opi = self.new_op(wi, Some(dst), ty, OpKind::Load, mask, addrs);
        let mut parts = 0;
        for (i, &(line, m)) in lines_[..n].iter().enumerate() {
            match forwarded[i] {
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
        if ord.is_acquire() {
            op.acquire = Some(level);
        }
        let w = self.warps[wi].as_mut().expect("live");
        w.loads_out += 1;
        if ord.is_acquire() {
            w.acq_pending += 1;
        }
        w.reg_ready[dst as usize] = NEVER;
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
        let vals: Vec<(usize, u64)> = lanes(mask).map(|l| (l, self.val(w, src, l))).collect();
        if space == Space::Local {
            let gs = w.group_slot;
            let g = self.groups[gs].as_mut().expect("resident");
            for &(l, v) in &vals {
                let o = addrs[l] as usize;
                g.local[o..o + bytes as usize].copy_from_slice(&v.to_le_bytes()[..bytes as usize]);
            }
            self.notices.progress += 1;
            let done = self.shared_access(now, &addrs, mask, false);
            let opi = self.new_op(wi, None, ty, OpKind::Local, mask, addrs);
            self.ops.get_mut(opi).parts = 1;
            let w = self.warps[wi].as_mut().expect("live");
            w.local_out += 1;
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
        // Coalesce: one line buffer per touched line (the highest lane wins on equal addresses).
        let mut lines_: Vec<(u64, u128, LineBuf)> = Vec::with_capacity(4);
        for &(l, v) in &vals {
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
            e.2[o..o + bytes as usize].copy_from_slice(&v.to_le_bytes()[..bytes as usize]);
        }
        let system = scope == Scope::System && self.svm && ord != StoreOrd::Plain;
        // A store scattered over more lines than the buffer holds can never enter it: it goes to
        // the L1 directly, after the warp's buffered stores (same-address order).
        let oversize = self.sb.enabled() && !self.sb.can_hold(lines_.len());
        if oversize && self.warps[wi].as_ref().expect("live").sb_count > 0 {
            let w = self.warps[wi].as_mut().expect("live");
            w.waiting = "store larger than the store buffer waits for it to drain";
            self.wake_drain(ctx, now);
            return false;
        }
        let buffered = self.sb.enabled() && !ord.is_release() && !oversize;
        if buffered {
            let ls: Vec<u64> = lines_.iter().map(|x| x.0).collect();
            if !self.sb.has_room(wi as u16, &ls) {
                let w = self.warps[wi].as_mut().expect("live");
                w.waiting = "store buffer full";
                self.stats.sb_full_stall_ps += self.clock.period;
                self.wake_drain(ctx, now);
                return false;
            }
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
            w.sb_count += added as u32;
            Self::advance(w, mask);
            self.wake_drain(ctx, ready);
            return true;
        }
        let level = if system { Level::System } else { Level::L2 };
        for (line, m, data) in lines_ {
            let seq = self.next_write_seq();
            let w = self.warps[wi].as_mut().expect("live");
            w.to_l1 += 1;
            w.to_l2 += 1;
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
        true
    }

    fn atomic(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        a: AtomicSpec,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let bytes = a.ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, a.space, a.addr, bytes, ctx) else {
            return true;
        };
        let w = self.warps[wi].as_ref().expect("live");
        let mk_lanes = |sm: &Sm, w: &Warp| -> Vec<LaneAtomic> {
            lanes(mask)
                .map(|l| LaneAtomic {
                    lane: l as u8,
                    addr: addrs[l],
                    operand: sm.val(w, a.operand, l),
                    expected: a.expected.map(|e| sm.val(w, e, l)).unwrap_or(0),
                    result: 0,
                })
                .collect()
        };
        let all = mk_lanes(self, w);
        let level = self.eff_level(a.space, a.scope, self.svm);
        if a.space == Space::Local {
            let gs = w.group_slot;
            let mut batch = AtomicBatch {
                kind: a.kind,
                ty: a.ty,
                lanes: all,
            };
            let done = {
                let t = self.shared_access(now, &addrs, mask, true);
                self.shared_atomic.schedule(t, &batch).max(t)
            };
            let g = self.groups[gs].as_mut().expect("resident");
            let mut view = LocalView { mem: &mut g.local };
            perform_batch(&mut batch, &mut view);
            self.notices.progress += 1;
            let opi = self.new_op(wi, a.dst, a.ty, OpKind::Local, mask, addrs);
            let op = self.ops.get_mut(opi);
            for l in &batch.lanes {
                op.vals[l.lane as usize] = l.result;
            }
            op.parts = 1;
            if a.acquire {
                op.acquire = Some(Level::Sm);
            }
            let w = self.warps[wi].as_mut().expect("live");
            w.local_out += 1;
            if a.acquire {
                w.acq_pending += 1;
            }
            if let Some(d) = a.dst {
                w.reg_ready[d as usize] = NEVER;
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
        let lines_: Vec<u64> = {
            let mut v: Vec<u64> = Vec::new();
            for l in &all {
                let line = self.line_of(l.addr);
                if !v.contains(&line) {
                    v.push(line);
                }
            }
            v
        };
        if lines_.iter().any(|&l| self.sb.holds(wi as u16, l)) {
            let w = self.warps[wi].as_mut().expect("live");
            w.waiting = "atomic waits for own buffered store";
            self.wake_drain(ctx, now);
            return false;
        }
        let at_l1 = level == Level::Sm && self.wg_atomics_l1;
        let opi = self.new_op(wi, a.dst, a.ty, OpKind::Atomic, mask, addrs);
        let mut parts = 0;
        for &line in &lines_ {
            let ls: Vec<LaneAtomic> = all
                .iter()
                .copied()
                .filter(|l| self.line_of(l.addr) == line)
                .collect();
            let b = ctx.batches.alloc(AtomicBatch {
                kind: a.kind,
                ty: a.ty,
                lanes: ls,
            });
            let lvl = if level == Level::Sm && !at_l1 {
                Level::L2
            } else {
                level
            };
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
        if a.acquire {
            op.acquire = Some(level);
        }
        let w = self.warps[wi].as_mut().expect("live");
        w.loads_out += 1;
        if at_l1 {
            w.to_l2 += parts;
        }
        if a.acquire {
            w.acq_pending += 1;
        }
        if let Some(d) = a.dst {
            w.reg_ready[d as usize] = NEVER;
        }
        Self::advance(w, mask);
        true
    }

    pub fn idle(&self) -> bool {
        self.warps.iter().all(|w| w.is_none()) && self.sb.entries.is_empty()
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

    /// Whether every in-flight operation of resident warps is settled (for end-of-run checks).
    pub fn quiet(&self) -> bool {
        self.warps.iter().flatten().all(|w| w.quiet())
    }
}

struct AtomicSpec {
    kind: AtomicKind,
    dst: Option<Reg>,
    space: Space,
    addr: Address,
    operand: Operand,
    expected: Option<Operand>,
    ty: Ty,
    acquire: bool,
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
