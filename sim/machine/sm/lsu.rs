//! The load/store unit: a memory instruction's lanes, coalesced into one request per line
//! (`coalescer.rs`), go to the store buffer, the L1 or the SM's shared memory (`shared.rs`); the LSU
//! keeps each instruction in flight until its last part returns (`Sm::part_done`).
//!
//! Global memory:
//! - a load forwards whole lines from the warp's own buffered stores (a partial overlap waits for the
//!   buffer to drain) and sends the rest to the L1 at the level `ordering::load_level` names;
//! - a store enters the store buffer when `ordering::enters_store_buffer` allows it and there is room
//!   (else the warp stalls; a store over more lines than the buffer holds goes to the L1 directly once
//!   the warp's buffered stores have drained), or goes to the L1 directly; every write sent to the L1
//!   gets a number of the SM's write frontier;
//! - an atomic waits until the warp has no buffered store to its lines (same-location order), then
//!   sends one batch per line to the unit `ordering::rmw_site` names;
//! - with `stress.load_delay`, a load may be held (seeded) before its lines go to the L1; until it
//!   returns, the warp's later accesses to those lines wait (`ordering::held_load_blocks`).
//!
//! The store buffer drains one entry per SM cycle once the entry's delay has passed.
//!
//! Not modelled: LSU pipeline depth beyond `lsu_per_cycle`, address-generation latency.

use super::coalescer::{coalesce, LineAccess};
use super::scoreboard::Dst;
use super::{lanes, Sm, Stall};
use crate::engine::Time;
use crate::ir::*;
use crate::machine::atomic::{AtomicBatch, LaneAtomic};
use crate::machine::domain::Ctx;
use crate::machine::msg::*;
use crate::machine::ordering::{self, Access, Acquire, RmwSite, Rule};
use crate::machine::pool::{LineBuf, MAX_LINE};
use crate::machine::provenance::{AccessKind as ProvKind, ProvEvent};
use crate::machine::races::{self, AccessKind, RaceEvent};
use crate::machine::store_buffer::Forward;

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

/// One memory instruction as a warp hands it to the LSU, from kernel IR or a trace: its lanes'
/// addresses (computed and checked), their width, where the result goes, and its ordering.
pub struct WarpAccess<'a> {
    pub wi: usize,
    pub pc: u32,
    pub mask: u64,
    pub addrs: &'a [u64; 64],
    /// When known: the active lanes are `0, 1, …` at this step from `addrs[0]` (see `coalesce`).
    pub stride: Option<u64>,
    /// Bytes per lane.
    pub width: u32,
    pub dst: Dst,
    pub access: Access,
    pub rule: Rule,
}

impl WarpAccess<'_> {
    #[inline]
    fn space(&self) -> Space {
        match self.access {
            Access::Load { space, .. }
            | Access::Store { space, .. }
            | Access::Rmw { space, .. } => space,
            Access::Fence { .. } | Access::Barrier { .. } => {
                unreachable!("only loads, stores and atomics reach the LSU")
            }
        }
    }
}

impl Sm {
    /// A kernel load, store, read-modify-write or compare-exchange: its lanes' addresses and operand
    /// values, then the LSU. `false` if it must wait.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn kernel_access(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        inst: &Inst,
        access: Access,
        rule: Rule,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let (space, addr, ty) = match *inst {
            Inst::Load {
                space, addr, ty, ..
            }
            | Inst::Store {
                space, addr, ty, ..
            }
            | Inst::Rmw {
                space, addr, ty, ..
            }
            | Inst::Cas {
                space, addr, ty, ..
            } => (space, addr, ty),
            _ => unreachable!("only accesses reach the LSU"),
        };
        let width = ty.width().bytes();
        let Some(addrs) = self.addresses(wi, pc, mask, space, addr, width, ctx) else {
            return true;
        };
        let mut a = WarpAccess {
            wi,
            pc,
            mask,
            addrs: &addrs,
            stride: None,
            width,
            dst: Dst::None,
            access,
            rule,
        };
        let w = self.warps[wi].as_ref().expect("live");
        match *inst {
            Inst::Load { dst, .. } => {
                a.dst = Dst::Reg(dst);
                self.issue_load(&a, width, now, ctx)
            }
            Inst::Store { src, .. } => {
                let mut vals = [0u64; 64];
                for l in lanes(mask) {
                    vals[l] = self.val(w, src, l);
                }
                self.issue_store(&a, &vals, now, ctx)
            }
            Inst::Rmw {
                dst, operand, op, ..
            } => {
                let all = self.lane_atomics(w, &addrs, mask, operand, None);
                a.dst = dst.map(Dst::Reg).unwrap_or(Dst::None);
                self.issue_atomic(&a, all, AtomicOp::Rmw(op), ty, now, ctx)
            }
            Inst::Cas {
                dst,
                expected,
                desired,
                ..
            } => {
                let all = self.lane_atomics(w, &addrs, mask, desired, Some(expected));
                a.dst = dst.map(Dst::Reg).unwrap_or(Dst::None);
                self.issue_atomic(&a, all, AtomicOp::Cas, ty, now, ctx)
            }
            _ => unreachable!("only accesses reach the LSU"),
        }
    }

    /// Each lane's part of an atomic: its address, operand (the desired value of a compare-exchange)
    /// and expected value.
    fn lane_atomics(
        &self,
        w: &super::Warp,
        addrs: &[u64; 64],
        mask: u64,
        operand: Operand,
        expected: Option<Operand>,
    ) -> Vec<LaneAtomic> {
        let mut all = Vec::with_capacity(mask.count_ones() as usize);
        all.extend(lanes(mask).map(|l| LaneAtomic {
            lane: l as u8,
            addr: addrs[l],
            operand: self.val(w, operand, l),
            expected: expected.map(|e| self.val(w, e, l)).unwrap_or(0),
            result: 0,
        }));
        all
    }

    /// Per-lane addresses, bounds-checked; `None` after reporting an error.
    #[allow(clippy::too_many_arguments)]
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

    /// A new instruction in flight (its lanes' addresses kept when the program has values).
    #[inline]
    pub(super) fn new_op(
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
            local_store: 0,
        })
    }

    /// The value slot of lane `l` of op `opi` (a program with values).
    #[inline]
    pub(super) fn lane_val(&mut self, opi: u32, l: usize) -> Option<&mut u64> {
        let vi = self.ops.get(opi).values?;
        Some(&mut self.lane_values.get_mut(vi).vals[l])
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

    /// Marks the destination registers of an issued memory instruction pending until it completes.
    #[inline]
    pub(super) fn pend_dst(&mut self, wi: usize, dst: Dst) {
        let w = self.warps[wi].as_mut().expect("live");
        w.scoreboard.pending(dst.regs(&self.launch.program));
    }

    /// Race detection: reports the accesses of one instruction, lane by lane (the scope is the
    /// effective one: `ordering::effective_scope`).
    pub(super) fn race_access(
        &mut self,
        a: &WarpAccess,
        kind: AccessKind,
        order: Option<MemOrder>,
    ) {
        let space = a.space();
        let scope = a.access.scope();
        for l in lanes(a.mask) {
            let (_, tid) = self.thread_ids(a.wi, l);
            self.notices.races.push(RaceEvent::Access(races::Access {
                tid,
                pc: a.pc,
                space,
                addr: a.addrs[l],
                bytes: a.width,
                kind,
                order,
                scope,
            }));
        }
    }

    /// A load (kernel or trace); `value_bytes` of each lane's result go to `a.dst` (0: timing only).
    /// `false` if it must wait (store-buffer overlap).
    pub(super) fn issue_load(
        &mut self,
        a: &WarpAccess,
        value_bytes: u32,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Load { space, ord, scope } = a.access else {
            unreachable!("a load's access")
        };
        let race_read = ord.atomic_order().map(|_| (space, scope, ord.is_acquire()));
        if space == Space::Local {
            if self.launch.races {
                self.race_access(a, AccessKind::Load, ord.atomic_order());
            }
            return self.local_load(a, value_bytes, race_read, now, ctx);
        }
        let wi = a.wi;
        let Some(lines) = self.coalesced(a, a.width) else {
            return false;
        };
        // The lines the store buffer forwards whole: (index in `lines`, bytes). Rare; empty
        // without a store buffer, so that a load allocates nothing.
        let mut forwarded: Vec<(usize, LineBuf)> = Vec::new();
        for (i, la) in lines.iter().enumerate() {
            match self.sb.forward(wi as u16, la.line, la.bytes) {
                Forward::None => {}
                Forward::Full(b) => forwarded.push((i, b)),
                Forward::Partial => {
                    let w = self.warps[wi].as_mut().expect("live");
                    w.set_stall(Stall::StoreBufferOverlap);
                    self.wake_drain(ctx, now);
                    self.lines = lines;
                    return false;
                }
            }
        }
        let level = ordering::load_level(ord, scope, self.svm);
        let opi = self.new_op(wi, a.dst, value_bytes, OpKind::Load, a.mask, a.addrs);
        if self.launch.races {
            // Reported only now: a load that waits for the store buffer is issued again later.
            self.race_access(a, AccessKind::Load, ord.atomic_order());
            self.ops.get_mut(opi).race_read = race_read;
        }
        let who = Requester::Warp {
            warp: wi as u16,
            op: opi,
        };
        self.prov_issue(ctx, a, Some(opi), ProvKind::Load, None);
        // A seeded hold before the lines go to the L1 (`stress.load_delay`; drawn only when some
        // line is not forwarded).
        let hold = if forwarded.len() < lines.len() {
            self.warp_stress.load_hold(ctx.rng)
        } else {
            0
        };
        for (i, la) in lines.iter().enumerate() {
            match forwarded.iter().find(|f| f.0 == i).map(|f| f.1) {
                Some(b) => {
                    self.stats.forwarded_loads += 1;
                    if let Some(p) = ctx.prov.as_deref_mut() {
                        let line = la.line;
                        p.push(
                            now,
                            ProvEvent::Forward {
                                sm: self.id,
                                op: opi,
                                line,
                            },
                        );
                    }
                    let id = ctx.lines.alloc(b);
                    let data = DataId(id);
                    let r = CoreResp::LoadData {
                        who,
                        line: la.line,
                        data,
                    };
                    ctx.q.after(self.clock.period, Event::SmIn(self.id, r));
                }
                None => {
                    let req = L1Req::Load {
                        who,
                        line: la.line,
                        mask: la.bytes,
                        level,
                    };
                    if hold > 0 {
                        let w = self.warps[wi].as_mut().expect("live");
                        w.held.push((opi, la.line));
                    }
                    ctx.q
                        .after(self.clock.cycles(hold), Event::L1In(self.id, req));
                }
            }
        }
        self.started(opi, lines.len() as u32, a, OpKind::Load, 0);
        self.lines = lines;
        true
    }

    /// Bookkeeping of an instruction that went out in `parts` parts: its acquire side, its pending
    /// destination, the warp's in-flight counters (`l1_writes`: write-throughs of L1 atomics), the
    /// warp moves on.
    #[inline]
    pub(super) fn started(
        &mut self,
        opi: u32,
        parts: u32,
        a: &WarpAccess,
        kind: OpKind,
        l1_writes: u32,
    ) {
        let op = self.ops.get_mut(opi);
        op.parts = parts;
        op.acquire = a.rule.acquire;
        self.pend_dst(a.wi, a.dst);
        let w = self.warps[a.wi].as_mut().expect("live");
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

    /// A store (kernel or trace; a trace's values are zero and go nowhere). `false` if it must wait
    /// (store buffer full or draining first).
    pub(super) fn issue_store(
        &mut self,
        a: &WarpAccess,
        vals: &[u64; 64],
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Store { space, ord, scope } = a.access else {
            unreachable!("a store's access")
        };
        let race = |sm: &mut Sm| {
            if sm.launch.races {
                sm.race_access(a, AccessKind::Store, ord.atomic_order());
            }
        };
        if space == Space::Local {
            race(self);
            self.local_store(a, vals, now, ctx);
            return true;
        }
        let wi = a.wi;
        let Some(lines) = self.coalesced(a, a.width) else {
            return false;
        };
        let system = ordering::store_ack(ord, scope, self.svm) == Level::System;
        let values = self.has_values();
        // A store scattered over more lines than the buffer holds can never enter it: it goes to
        // the L1 directly, after the warp's buffered stores (same-address order).
        let oversize = self.sb.enabled() && !self.sb.can_hold(lines.len());
        let buffered_before = self.warps[wi].as_ref().expect("live").inflight.buffered;
        if oversize && buffered_before > 0 {
            let w = self.warps[wi].as_mut().expect("live");
            w.set_stall(Stall::StoreLargerThanBuffer);
            self.wake_drain(ctx, now);
            self.lines = lines;
            return false;
        }
        let buffered = self.sb.enabled() && ordering::enters_store_buffer(ord) && !oversize;
        if buffered {
            if !self.sb.has_room(wi as u16, lines.iter().map(|x| x.line)) {
                let w = self.warps[wi].as_mut().expect("live");
                w.set_stall(Stall::StoreBufferFull);
                self.stats.sb_full_stall_ps += self.clock.period;
                self.wake_drain(ctx, now);
                self.lines = lines;
                return false;
            }
            race(self);
            self.prov_issue(ctx, a, None, ProvKind::Store { buffered: true }, Some(vals));
            let ready = now
                + self
                    .clock
                    .cycles(self.sb_delay + ctx.rng.upto(self.drain_jitter) as u64);
            let mut added = 0;
            for la in &lines {
                let data = store_data(la, a, vals, values);
                let before = self.sb.entries.len();
                self.sb
                    .insert(now, wi as u16, la.line, la.bytes, &data, ready, system);
                added += self.sb.entries.len() - before;
            }
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.buffered += added as u32;
            w.flow.advance(a.mask);
            self.wake_drain(ctx, ready);
            self.lines = lines;
            return true;
        }
        let level = if system { Level::System } else { Level::L2 };
        race(self);
        self.prov_issue(
            ctx,
            a,
            None,
            ProvKind::Store { buffered: false },
            Some(vals),
        );
        for la in &lines {
            let seq = self.frontier.number();
            let w = self.warps[wi].as_mut().expect("live");
            w.inflight.to_l1 += 1;
            w.inflight.to_l2 += 1;
            let id = ctx.lines.alloc(store_data(la, a, vals, values));
            let req = L1Req::Store {
                who: Requester::Drain { warp: wi as u16 },
                line: la.line,
                mask: la.bytes,
                data: DataId(id),
                level,
                seq,
            };
            ctx.q.after(0, Event::L1In(self.id, req));
        }
        self.warps[wi].as_mut().expect("live").flow.advance(a.mask);
        self.lines = lines;
        true
    }

    /// An atomic instruction's lanes (kernel or trace), at the unit `ordering::rmw_site` names.
    /// `false` if it must wait for the warp's own buffered stores.
    pub(super) fn issue_atomic(
        &mut self,
        a: &WarpAccess,
        all: Vec<LaneAtomic>,
        op: AtomicOp,
        ty: Ty,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Rmw { space, ord, scope } = a.access else {
            unreachable!("an atomic's access")
        };
        let acquire = a.rule.acquire.is_some();
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
        let race = |sm: &mut Sm| -> Option<(Space, Scope, bool)> {
            if !sm.launch.races {
                return None;
            }
            sm.race_access(a, AccessKind::Rmw, Some(ord.order()));
            Some((space, scope, acquire))
        };
        if site == RmwSite::SharedMemory {
            let race_read = race(self);
            self.local_atomic(a, all, op, ty, value_bytes, race_read, now, ctx);
            return true;
        }
        let wi = a.wi;
        // Width 0: an atomic's batch carries its lanes' addresses, not byte masks.
        let Some(lines) = self.coalesced(a, 0) else {
            return false;
        };
        // Same-location order with the warp's own buffered stores: they must leave first.
        if lines.iter().any(|la| self.sb.holds(wi as u16, la.line)) {
            let w = self.warps[wi].as_mut().expect("live");
            w.set_stall(Stall::OwnBufferedStore);
            self.wake_drain(ctx, now);
            self.lines = lines;
            return false;
        }
        let (at_l1, level) = match site {
            RmwSite::L1 => (true, Level::Sm),
            RmwSite::L2 { level } => (false, level),
            RmwSite::SharedMemory => unreachable!("local memory took the path above"),
        };
        let race_read = race(self);
        let opi = self.new_op(wi, a.dst, value_bytes, OpKind::Atomic, a.mask, a.addrs);
        self.ops.get_mut(opi).race_read = race_read;
        let who = Requester::Warp {
            warp: wi as u16,
            op: opi,
        };
        self.prov_issue(ctx, a, Some(opi), ProvKind::Rmw, None);
        let single = lines.len() == 1;
        let mut all = Some(all);
        for la in &lines {
            // One line (the common case): the instruction's lanes are the batch, without a copy.
            let ls: Vec<LaneAtomic> = match all.take_if(|_| single) {
                Some(v) => v,
                None => all
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|l| la.lanes & (1 << l.lane) != 0)
                    .collect(),
            };
            let b = ctx.batches.alloc(AtomicBatch { op, ty, lanes: ls });
            // Only an atomic at the L1 writes through (and is acknowledged like a store).
            let seq = if at_l1 { self.frontier.number() } else { 0 };
            let req = L1Req::Atomic {
                who,
                line: la.line,
                batch: BatchId(b),
                level,
                at_l1,
                seq,
            };
            ctx.q.after(0, Event::L1In(self.id, req));
        }
        let parts = lines.len() as u32;
        self.started(opi, parts, a, OpKind::Atomic, if at_l1 { parts } else { 0 });
        self.lines = lines;
        true
    }

    /// Provenance (when recorded): an issued global access, each lane's thread, address and stored
    /// value.
    fn prov_issue(
        &self,
        ctx: &mut Ctx,
        a: &WarpAccess,
        op: Option<u32>,
        kind: ProvKind,
        vals: Option<&[u64; 64]>,
    ) {
        let Some(p) = ctx.prov.as_deref_mut() else {
            return;
        };
        let lanes = lanes(a.mask)
            .map(|l| {
                let v = vals.map_or(0, |v| v[l]);
                (self.thread_ids(a.wi, l).1, a.addrs[l], v)
            })
            .collect();
        let (sm, warp) = (self.id, a.wi as u16);
        p.push(
            ctx.q.now(),
            ProvEvent::Issue {
                sm,
                warp,
                op,
                kind,
                lanes,
            },
        );
    }

    /// The lines access `a` touches with `width`-byte lanes (`coalesce`), in the SM's reused list;
    /// `None`, the list put back, if the access must wait for one of its warp's held loads.
    fn coalesced(&mut self, a: &WarpAccess, width: u32) -> Option<Vec<LineAccess>> {
        let mut lines = std::mem::take(&mut self.lines);
        coalesce(
            a.mask,
            a.addrs,
            a.stride,
            width,
            self.line_bytes,
            &mut lines,
        );
        if self.waits_for_held_load(a, &lines) {
            self.lines = lines;
            return None;
        }
        Some(lines)
    }

    /// Whether access `a` over `lines` must wait for one of its warp's held loads
    /// (`ordering::held_load_blocks`); it stalls if so. Nothing to check without held loads.
    #[inline]
    fn waits_for_held_load(&mut self, a: &WarpAccess, lines: &[LineAccess]) -> bool {
        let w = self.warps[a.wi].as_mut().expect("live");
        if w.held.is_empty() {
            return false;
        }
        let same = lines
            .iter()
            .any(|la| w.held.iter().any(|&(_, line)| line == la.line));
        let wait = ordering::held_load_blocks(&a.access, same);
        if wait {
            w.set_stall(Stall::HeldLoad);
        }
        wait
    }

    /// Asks the store buffer to drain at `at` (or the next edge at which no entry has left yet),
    /// unless it is due earlier.
    pub(super) fn wake_drain(&mut self, ctx: &mut Ctx, at: Time) {
        let t = self
            .clock
            .free_edge_at_or_after(at.max(ctx.now()), self.drained_at);
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
            debug_assert_ne!(self.drained_at, Some(now), "one entry leaves per cycle");
            self.drained_at = Some(now);
            if let Some(w) = self.warps[e.warp as usize].as_mut() {
                w.inflight.buffered -= 1;
                w.inflight.to_l1 += 1;
                w.inflight.to_l2 += 1;
            }
            let seq = self.frontier.number();
            if let Some(p) = ctx.prov.as_deref_mut() {
                let (sm, warp, line, mask) = (self.id, e.warp, e.line, e.mask);
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
            ctx.q.after(0, Event::L1In(self.id, req));
            self.wake(ctx);
        }
        if let Some(t) = self.sb.next_ready() {
            self.wake_drain(ctx, t.max(now + self.clock.period));
        }
    }
}

/// The bytes a store writes into one line, lane by lane (a later lane wins on the same bytes).
/// Without values (trace replay, `values` false) the line is zeros.
fn store_data(la: &LineAccess, a: &WarpAccess, vals: &[u64; 64], values: bool) -> LineBuf {
    // Values are at most 8 bytes; wider traced accesses carry no values.
    let vb = a.width.min(8) as usize;
    let mut data = [0u8; MAX_LINE];
    if !values {
        return data;
    }
    for l in lanes(la.lanes) {
        let o = (a.addrs[l] - la.line) as usize;
        data[o..o + vb].copy_from_slice(&vals[l].to_le_bytes()[..vb]);
    }
    data
}
