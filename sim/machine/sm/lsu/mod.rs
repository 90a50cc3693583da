//! The load/store unit (memory pipeline) of one SM: it issues a warp's global loads, stores and
//! atomics and completes them. It owns the store buffer and its drain clock, the pools of memory
//! instructions in flight (with their lanes' addresses and values), the SM's write frontier and the
//! port into the L1.
//!
//! Interface (every other part of the SM goes through these):
//! - to a warp: [`Lsu::load`], [`Lsu::store`], [`Lsu::atomic`] issue one instruction ([`WarpAccess`])
//!   for global memory, `false` when it must wait (the warp's stall says why); the SM's shared memory
//!   (`../shared.rs`) uses the same pools for its accesses ([`Lsu::new_op`], [`Lsu::started`]);
//! - results back: [`Lsu::load_data`], [`Lsu::atomic_data`], then [`Lsu::part_done`] for each part
//!   (line) that completed and [`Lsu::complete`] once the last has — the warp's registers, scoreboard,
//!   in-flight counters and the acquire's effect; [`Lsu::store_accepted`], [`Lsu::store_acked`] for
//!   writes;
//! - to the L1: every request through [`L1Port`] (`port.rs`), bounded by `sm.l1_port_depth`;
//! - the drain: [`Lsu::wake_drain`] and [`Lsu::drain`], one entry per SM cycle once its delay passed.
//!
//! What an access must wait for, where it is performed and what the store buffer may do are the
//! ordering core's decisions (`../../ordering`): [`ordering::load_level`],
//! [`ordering::enters_store_buffer`], [`ordering::rmw_site`], the same-location rules
//! ([`ordering::load_beside_own_stores`], [`ordering::bypassing_store_waits`],
//! [`ordering::rmw_waits_for_own_stores`], [`ordering::held_load_blocks`]) and the acquire's effect
//! ([`ordering::acquire_effect`]).
//!
//! Issue paths (`issue.rs`): a load forwards whole lines from the warp's own buffered stores and sends
//! the rest to the L1; a store enters the store buffer when the ordering core allows it and there is
//! room, or goes to the L1 directly; an atomic sends one batch per line to the unit
//! `ordering::rmw_site` names. With `stress.load_delay`, a load may be held (seeded) before its lines
//! go to the L1. Every write sent to the L1 gets a number of the write frontier (`frontier.rs`).
//!
//! Not modelled: LSU pipeline depth beyond `sm.lsu_per_cycle`, address-generation latency, the port's
//! own latency.

mod frontier;
mod issue;
mod port;
#[cfg(test)]
mod tests;

pub use frontier::WriteFrontier;
pub use issue::WarpAccess;
pub use port::L1Port;

use super::coalescer::LineAccess;
use super::launch::Program;
use super::scoreboard::Dst;
use super::stress::WarpStress;
use super::warp::{Flow, Warp};
use super::{lanes, Stall};
use crate::ctx::Ctx;
use crate::engine::{Clock, Time};
use crate::ir::{Scope, Space};
use crate::msg::*;
use crate::ordering::{self, Acquire};
use crate::pool::{LineBuf, Pool};
use crate::provenance::ProvEvent;
use crate::races::RaceEvent;
use crate::store_buffer::StoreBuffer;

/// Which counter of the warp an instruction in flight holds.
#[derive(Debug, Clone, Copy)]
pub enum OpKind {
    Load,
    Atomic,
    Local,
}

/// A memory instruction in flight.
#[derive(Debug, Clone, Copy)]
pub struct MemOp {
    pub warp: u16,
    pub dst: Dst,
    /// Bytes of each lane's loaded value (0: timing only, no values to extract).
    pub value_bytes: u32,
    pub kind: OpKind,
    pub lanes: u64,
    /// Each lane's address and value ([`LaneValues`]); only a program with values has them.
    pub values: Option<u32>,
    /// Parts (lines) not yet completed.
    pub parts: u32,
    /// The acquire side of the instruction (`ordering::Acquire`), applied when it completes.
    pub acquire: Option<Acquire>,
    /// Race detection: an atomic read reports its completion (space, scope, acquire).
    pub race_read: Option<(Space, Scope, bool)>,
    /// A local store performed by the banks later: the bytes each lane writes (its value in
    /// `values`); 0 otherwise.
    pub local_store: u32,
}

/// The per-lane addresses and returned values of one memory instruction of a program with values.
pub struct LaneValues {
    pub addr: [u64; 64],
    pub vals: [u64; 64],
}

/// Counters of the LSU.
#[derive(Default)]
pub struct LsuStats {
    pub sb_full_stall_ps: Time,
    pub forwarded_loads: u64,
    /// Time warps waited for room in the L1 port (0 with an unbounded port).
    pub l1_port_stall_ps: Time,
}

/// The store buffer's drain clock: when the next entry may leave.
#[derive(Debug, Default)]
struct DrainClock {
    /// Minimum and seeded extra core cycles a store stays in the store buffer.
    delay: u64,
    jitter: u32,
    /// The drain event due, if any.
    at: Option<Time>,
    /// The cycle (clock edge) an entry last left the store buffer: one leaves per cycle, so a drain
    /// asked for in that cycle waits for the next one.
    drained_at: Option<Time>,
}

/// What the builder hands an LSU: its SM's clock and line, the values of other tables it depends on,
/// and its store buffer.
pub struct LsuResources {
    pub sm: u16,
    pub clock: Clock,
    /// L1 line size: the coalescer's unit.
    pub line_bytes: u32,
    /// Shared virtual memory (system scope is device scope without it).
    pub svm: bool,
    /// work_group-scope atomics on global memory run in the L1 (`atomics.work_group_global_at`).
    pub work_group_atomics_at_l1: bool,
    /// Held loads of the workload's warps (`stress.load_delay`).
    pub warp_stress: WarpStress,
    pub store_buffer: StoreBuffer,
    /// Minimum and seeded extra core cycles a store stays in the store buffer.
    pub drain_delay: u64,
    pub drain_jitter: u32,
    /// `sm.l1_port_depth` (0: unbounded).
    pub l1_port_depth: u32,
    /// Whether the program has values (kernel IR) or only addresses (a trace).
    pub values: bool,
}

pub struct Lsu {
    sm: u16,
    clock: Clock,
    line_bytes: u32,
    svm: bool,
    wg_atomics_l1: bool,
    warp_stress: WarpStress,
    values: bool,
    pub sb: StoreBuffer,
    drain: DrainClock,
    ops: Pool<MemOp>,
    lane_values: Pool<LaneValues>,
    pub(super) frontier: WriteFrontier,
    pub(crate) l1: L1Port,
    /// Scratch list of the lines of one instruction (kept for its capacity: issuing allocates
    /// nothing).
    lines: Vec<LineAccess>,
    pub stats: LsuStats,
}

impl Lsu {
    pub fn new(res: LsuResources) -> Lsu {
        Lsu {
            sm: res.sm,
            clock: res.clock,
            line_bytes: res.line_bytes,
            svm: res.svm,
            wg_atomics_l1: res.work_group_atomics_at_l1,
            warp_stress: res.warp_stress,
            values: res.values,
            sb: res.store_buffer,
            drain: DrainClock {
                delay: res.drain_delay,
                jitter: res.drain_jitter,
                at: None,
                drained_at: None,
            },
            ops: Pool::default(),
            lane_values: Pool::default(),
            frontier: WriteFrontier::default(),
            l1: L1Port::new(res.l1_port_depth),
            lines: Vec::new(),
            stats: LsuStats::default(),
        }
    }

    /// The next launch's program has values (kernel IR) or not (a trace).
    pub(super) fn set_values(&mut self, values: bool) {
        self.values = values;
    }

    /// Sends `req` to the L1 `delay` from now, through the port (whose room the caller asked for,
    /// unless it is a request that is never refused).
    #[inline]
    fn send(&mut self, ctx: &mut Ctx, delay: Time, req: L1Req) {
        self.l1.sent();
        ctx.q.after(delay, Event::L1In(self.sm, req));
    }

    /// An acquire of the SM took effect (`invalidate_l1`: its [`Acquire::invalidate_l1`]): what it
    /// asks of the L1 ([`ordering::acquire_effect`]).
    #[inline]
    pub(super) fn acquired(&mut self, invalidate_l1: bool, ctx: &mut Ctx) {
        if let Some(req) = ordering::acquire_effect(invalidate_l1) {
            self.send(ctx, 0, req);
        }
    }

    /// Sends the membar of warp `warp`'s release to the L1 (`ordering::membar`; `system`: at system
    /// level) if the port has room; `false` if not (the warp stalls for the port).
    #[inline]
    pub(super) fn membar(&mut self, w: &mut Warp, warp: u16, system: bool, ctx: &mut Ctx) -> bool {
        if !self.port_room(w, 1) {
            return false;
        }
        self.send(ctx, 0, L1Req::Membar { warp, system });
        true
    }

    /// A memory-stress request (never refused: `port.rs`).
    #[inline]
    pub(super) fn send_stress(&mut self, ctx: &mut Ctx, req: L1Req) {
        self.send(ctx, 0, req);
    }

    /// Whether the port has room for `n` requests; if not, warp `w` stalls for it.
    #[inline]
    fn port_room(&mut self, w: &mut Warp, n: u32) -> bool {
        if self.l1.can_send(n) {
            return true;
        }
        w.set_stall(Stall::L1PortFull);
        self.stats.l1_port_stall_ps += self.clock.period;
        false
    }

    /// A new instruction in flight (its lanes' addresses kept when the program has values).
    #[inline(always)]
    pub(super) fn new_op(
        &mut self,
        warp: usize,
        dst: Dst,
        value_bytes: u32,
        kind: OpKind,
        lanes: u64,
        addr: &[u64; 64],
    ) -> u32 {
        let values = self.values.then(|| {
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
            local_store: 0,
        })
    }

    /// Instruction `opi` in flight.
    #[inline]
    pub(super) fn op(&self, opi: u32) -> &MemOp {
        self.ops.get(opi)
    }

    #[inline]
    pub(super) fn op_mut(&mut self, opi: u32) -> &mut MemOp {
        self.ops.get_mut(opi)
    }

    /// The lanes' addresses and values of `opi` (a program with values), with the op.
    #[inline]
    pub(super) fn op_values(&mut self, opi: u32) -> (&MemOp, Option<&mut LaneValues>) {
        let op = self.ops.get(opi);
        let lv = op.values.map(|vi| self.lane_values.get_mut(vi));
        (op, lv)
    }

    /// The value slot of lane `l` of op `opi` (a program with values).
    #[inline]
    pub(super) fn lane_val(&mut self, opi: u32, l: usize) -> Option<&mut u64> {
        let vi = self.ops.get(opi).values?;
        Some(&mut self.lane_values.get_mut(vi).vals[l])
    }

    /// Bookkeeping of an instruction that went out in `parts` parts: its acquire side, its pending
    /// destination, the warp's in-flight counters (`l1_writes`: write-throughs of L1 atomics), the
    /// warp moves on.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn started(
        &mut self,
        w: &mut Warp,
        program: &Program,
        opi: u32,
        parts: u32,
        a: &WarpAccess,
        kind: OpKind,
        l1_writes: u32,
    ) {
        let op = self.ops.get_mut(opi);
        op.parts = parts;
        op.acquire = a.rule.acquire;
        w.scoreboard.pending(a.dst.regs(program));
        match kind {
            OpKind::Local => w.inflight.local += 1,
            OpKind::Load | OpKind::Atomic => w.inflight.loads += 1,
        }
        w.inflight.to_l2 += l1_writes;
        if a.rule.acquire.is_some() {
            w.inflight.acquires += 1;
        }
        w.flow.advance(a.mask);
    }

    /// The data of `line` for op `opi` arrived: each lane whose address is in it takes its value.
    pub(super) fn load_data(&mut self, opi: u32, line: u64, bytes: &LineBuf) {
        let op = self.ops.get(opi);
        let wb = op.value_bytes as usize;
        let (Some(vi), true) = (op.values, wb > 0) else {
            return;
        };
        let lv = self.lane_values.get_mut(vi);
        for l in lanes(op.lanes) {
            let a = lv.addr[l];
            if a & !(self.line_bytes as u64 - 1) == line {
                let o = (a - line) as usize;
                let mut b = [0u8; 8];
                b[..wb].copy_from_slice(&bytes[o..o + wb]);
                lv.vals[l] = u64::from_le_bytes(b);
            }
        }
    }

    /// The results of an atomic batch of op `opi` arrived: each of its lanes takes its value.
    pub(super) fn atomic_data(&mut self, opi: u32, batch: &crate::atomic::AtomicBatch) {
        if let Some(vi) = self.ops.get(opi).values {
            let lv = self.lane_values.get_mut(vi);
            for l in &batch.lanes {
                lv.vals[l.lane as usize] = l.result;
            }
        }
    }

    /// One part (line) of op `opi` completed: whether it was the last (then [`Lsu::complete`]).
    #[inline]
    pub(super) fn part_done(&mut self, opi: u32) -> bool {
        let op = self.ops.get_mut(opi);
        op.parts -= 1;
        op.parts == 0
    }

    /// Completes op `opi` (its last part done): its warp `w` (`None` if it has gone; `tid0`: the
    /// global id of its lane 0) gets its destination registers, its acquire side takes effect
    /// (`ordering::Acquire`), and an atomic read reports itself to race detection. Whether the warp
    /// was there to take it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn complete(
        &mut self,
        opi: u32,
        w: Option<&mut Warp>,
        tid0: u64,
        ws: usize,
        program: &Program,
        races: &mut Vec<RaceEvent>,
        ctx: &mut Ctx,
    ) -> bool {
        let now = ctx.now();
        let MemOp {
            dst,
            kind,
            acquire,
            lanes: mask,
            values,
            race_read,
            ..
        } = *self.ops.get(opi);
        // (A warp that has exited has no thread ids left to name.)
        if let (Some(p), Some(vi), true) = (ctx.prov.as_deref_mut(), values, w.is_some()) {
            let lv = self.lane_values.get(vi);
            let vals = lanes(mask).map(|l| (tid0 + l as u64, lv.vals[l])).collect();
            p.push(
                now,
                ProvEvent::Done {
                    sm: self.sm,
                    op: opi,
                    vals,
                },
            );
        }
        if let (Some((space, scope, acq)), Some(vi)) = (race_read, values) {
            for l in lanes(mask) {
                let addr = self.lane_values.get(vi).addr[l];
                races.push(RaceEvent::ReadDone {
                    tid: tid0 + l as u64,
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
        let Some(w) = w else {
            return false;
        };
        if !w.held.is_empty() {
            w.held.retain(|&(op, _)| op != opi);
        }
        if let (Dst::Reg(d), Some(vi)) = (dst, values) {
            let vals = &self.lane_values.get(vi).vals;
            let regs = w.regs_mut();
            for l in lanes(mask) {
                regs[d as usize * ws + l] = vals[l];
            }
        }
        w.scoreboard.written(dst.regs(program), now);
        // A traced warp that waited on memory reads its next instruction when next tried: its
        // line has usually left the host's caches meanwhile.
        if let (Program::Trace { kernel }, Flow::Stream { next, .. }) = (program, &w.flow) {
            kernel.block(w.group_slot).prefetch_inst(*next);
        }
        match kind {
            OpKind::Local => w.inflight.local -= 1,
            OpKind::Load | OpKind::Atomic => w.inflight.loads -= 1,
        }
        if let Some(a) = acquire {
            w.inflight.acquires -= 1;
            self.acquired(a.invalidate_l1, ctx);
        }
        true
    }

    /// The L1 accepted a write of `w`'s (sent directly or drained).
    #[inline]
    pub(super) fn store_accepted(&mut self, w: Option<&mut Warp>) {
        if let Some(w) = w {
            w.inflight.to_l1 -= 1;
        }
    }

    /// The L2 (or the system point) acknowledged write `seq`, of warp `w` if any (`None`: stress
    /// traffic, or a warp that has gone).
    #[inline]
    pub(super) fn store_acked(&mut self, seq: u64, w: Option<&mut Warp>) {
        self.frontier.acked(seq);
        if let Some(w) = w {
            w.inflight.to_l2 -= 1;
        }
    }

    /// Asks the store buffer to drain at `at` (or the next edge at which no entry has left yet),
    /// unless it is due earlier.
    pub(super) fn wake_drain(&mut self, ctx: &mut Ctx, at: Time) {
        let now = ctx.now();
        let t = self
            .clock
            .free_edge_at_or_after(at.max(now), self.drain.drained_at);
        if self.drain.at.is_none_or(|x| x > t) {
            self.drain.at = Some(t);
            ctx.q.at(t, Event::SbDrain(self.sm));
        }
    }

    /// The drain event: one store-buffer entry whose delay has passed leaves for the L1, if the
    /// port has room, and the next drain is asked for. Whether an entry left (the warps' schedulers
    /// then look again: a stalled store may fit now). `warps`: the SM's warp slots, whose in-flight
    /// counters follow the entry.
    pub(super) fn drain(&mut self, warps: &mut [Option<Warp>], ctx: &mut Ctx) -> bool {
        if self.drain.at != Some(ctx.now()) {
            return false;
        }
        self.drain.at = None;
        let now = ctx.now();
        if !self.l1.can_send(1) {
            // Woken when the L1 takes a request (`Sm::l1_took`).
            return false;
        }
        let Some(e) = self.sb.pop_ready(now, ctx.rng) else {
            self.rearm_drain(ctx);
            return false;
        };
        debug_assert_ne!(
            self.drain.drained_at,
            Some(now),
            "one entry leaves per cycle"
        );
        self.drain.drained_at = Some(now);
        if let Some(w) = warps[e.warp as usize].as_mut() {
            w.inflight.buffered -= 1;
            w.inflight.to_l1 += 1;
            w.inflight.to_l2 += 1;
        }
        let seq = self.frontier.number();
        if let Some(p) = ctx.prov.as_deref_mut() {
            let (sm, warp, line, mask) = (self.sm, e.warp, e.line, e.mask);
            p.push(
                now,
                ProvEvent::SbDrain {
                    sm,
                    warp,
                    line,
                    mask,
                },
            );
        }
        if let Some(r) = ctx.rec.as_deref_mut() {
            r.store_drained(seq, e.line, e.since, now);
        }
        let id = ctx.lines.alloc(e.data);
        let level = if e.system { Level::System } else { Level::L2 };
        let req = L1Req::Store {
            who: Requester::Drain { warp: e.warp },
            line: e.line,
            mask: e.mask,
            data: DataId(id),
            level,
            seq,
        };
        self.send(ctx, 0, req);
        true
    }

    /// After a drain event: the next one, when an entry will be ready.
    pub(super) fn rearm_drain(&mut self, ctx: &mut Ctx) {
        if let Some(t) = self.sb.next_ready() {
            let now = ctx.now();
            self.wake_drain(ctx, t.max(now + self.clock.period));
        }
    }
}
