//! The LSU's issue paths for global memory: a memory instruction's lanes, coalesced into one request
//! per line (`../coalescer.rs`), go to the store buffer or through the port to the L1.
//!
//! - a load forwards whole lines from the warp's own buffered stores, waits on a partial overlap
//!   (`ordering::load_beside_own_stores`), and sends the rest to the L1 at the level
//!   `ordering::load_level` names;
//! - a store enters the store buffer when `ordering::enters_store_buffer` allows it and there is
//!   room (else the warp stalls); a store over more lines than the buffer holds goes to the L1
//!   directly, after the warp's buffered stores (`ordering::bypassing_store_waits`); so does every
//!   store that may not enter; every write sent to the L1 gets a number of the SM's write frontier;
//! - an atomic waits while the warp has buffered stores to its lines
//!   (`ordering::rmw_waits_for_own_stores`), then sends one batch per line to the unit
//!   `ordering::rmw_site` names;
//! - with `stress.load_delay`, a load may be held (seeded) before its lines go to the L1; until it
//!   returns, the warp's later accesses to those lines wait (`ordering::held_load_blocks`);
//! - whatever goes to the L1 waits for room in the port (`port.rs`; unbounded by default).
//!
//! Not here: shared (local) memory, which the SM's shared-memory unit serves (`../shared.rs`), and
//! race reports, which the SM makes once an access has issued (`../access.rs`).

use super::super::coalescer::{coalesce, LineAccess};
use super::super::launch::Program;
use super::super::scoreboard::Dst;
use super::super::warp::Warp;
use super::super::{lanes, Stall};
use super::{Lsu, OpKind};
use crate::atomic::{AtomicBatch, LaneAtomic};
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::ir::*;
use crate::msg::*;
use crate::ordering::{self, Access, Covered, OwnStoreLoad, RmwSite, Rule};
use crate::pool::{LineBuf, MAX_LINE};
use crate::provenance::{AccessKind as ProvKind, ProvEvent};
use crate::store_buffer::Forward;

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
    /// The global thread id of the warp's lane 0 (lane `l` is `tid0 + l`).
    pub tid0: u64,
}

impl WarpAccess<'_> {
    #[inline]
    pub fn space(&self) -> Space {
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

impl Lsu {
    /// A global load of warp `w` (kernel or trace); `value_bytes` of each lane's result go to
    /// `a.dst` (0: timing only). `race_read`: what the load reports when it completes, under race
    /// detection. `false` if it must wait (the warp's stall says for what).
    #[allow(clippy::too_many_arguments)]
    pub fn load(
        &mut self,
        w: &mut Warp,
        program: &Program,
        a: &WarpAccess,
        value_bytes: u32,
        race_read: Option<(Space, Scope, bool)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Load { ord, scope, .. } = a.access else {
            unreachable!("a load's access")
        };
        let wi = a.wi;
        let Some(lines) = self.coalesced(w, a, a.width) else {
            return false;
        };
        // The lines the store buffer forwards whole: (index in `lines`, bytes). Rare; empty
        // without a store buffer, so that a load allocates nothing.
        let mut forwarded: Vec<(usize, LineBuf)> = Vec::new();
        for (i, la) in lines.iter().enumerate() {
            let (covered, bytes) = match self.sb.forward(wi as u16, la.line, la.bytes) {
                Forward::None => (Covered::Nothing, None),
                Forward::Full(b) => (Covered::All, Some(b)),
                Forward::Partial => (Covered::Part, None),
            };
            match ordering::load_beside_own_stores(covered) {
                OwnStoreLoad::Memory => {}
                OwnStoreLoad::Forward => forwarded.push((i, bytes.expect("every byte buffered"))),
                OwnStoreLoad::Wait => {
                    w.set_stall(Stall::StoreBufferOverlap);
                    self.wake_drain(ctx, now);
                    self.lines = lines;
                    return false;
                }
            }
        }
        let to_l1 = (lines.len() - forwarded.len()) as u32;
        if to_l1 > 0 && !self.port_room(w, to_l1) {
            self.lines = lines;
            return false;
        }
        let level = ordering::load_level(ord, scope, self.svm);
        let opi = self.new_op(wi, a.dst, value_bytes, OpKind::Load, a.mask, a.addrs);
        self.ops.get_mut(opi).race_read = race_read;
        let who = Requester::Warp {
            warp: wi as u16,
            op: opi,
        };
        self.prov_issue(ctx, a, Some(opi), ProvKind::Load, None);
        // A seeded hold before the lines go to the L1 (`stress.load_delay`; drawn only when some
        // line is not forwarded).
        let hold = if to_l1 > 0 {
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
                                sm: self.sm,
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
                    ctx.q.after(self.clock.period, Event::SmIn(self.sm, r));
                }
                None => {
                    let req = L1Req::Load {
                        who,
                        line: la.line,
                        mask: la.bytes,
                        level,
                    };
                    if hold > 0 {
                        w.held.push((opi, la.line));
                    }
                    self.send(ctx, self.clock.cycles(hold), req);
                }
            }
        }
        self.started(w, program, opi, lines.len() as u32, a, OpKind::Load, 0);
        self.lines = lines;
        true
    }

    /// A global store of warp `w` (kernel or trace; a trace's values are zero and go nowhere).
    /// `false` if it must wait (store buffer full or draining first, or the port full).
    pub fn store(
        &mut self,
        w: &mut Warp,
        a: &WarpAccess,
        vals: &[u64; 64],
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Store { ord, scope, .. } = a.access else {
            unreachable!("a store's access")
        };
        let wi = a.wi;
        let Some(lines) = self.coalesced(w, a, a.width) else {
            return false;
        };
        let system = ordering::store_ack(ord, scope, self.svm) == Level::System;
        let values = self.values;
        // A store scattered over more lines than the buffer holds can never enter it: it goes to
        // the L1 directly.
        let oversize = self.sb.enabled() && !self.sb.can_hold(lines.len());
        if oversize && ordering::bypassing_store_waits(w.inflight.buffered) {
            w.set_stall(Stall::StoreLargerThanBuffer);
            self.wake_drain(ctx, now);
            self.lines = lines;
            return false;
        }
        let buffered = self.sb.enabled() && ordering::enters_store_buffer(ord) && !oversize;
        if buffered {
            if !self.sb.has_room(wi as u16, lines.iter().map(|x| x.line)) {
                w.set_stall(Stall::StoreBufferFull);
                self.stats.sb_full_stall_ps += self.clock.period;
                self.wake_drain(ctx, now);
                self.lines = lines;
                return false;
            }
            self.prov_issue(ctx, a, None, ProvKind::Store { buffered: true }, Some(vals));
            let ready = now
                + self
                    .clock
                    .cycles(self.drain.delay + ctx.rng.upto(self.drain.jitter) as u64);
            let mut added = 0;
            for la in &lines {
                let data = store_data(la, a, vals, values);
                let before = self.sb.entries.len();
                self.sb
                    .insert(now, wi as u16, la.line, la.bytes, &data, ready, system);
                added += self.sb.entries.len() - before;
            }
            w.inflight.buffered += added as u32;
            w.flow.advance(a.mask);
            self.wake_drain(ctx, ready);
            self.lines = lines;
            return true;
        }
        if !self.port_room(w, lines.len() as u32) {
            self.lines = lines;
            return false;
        }
        let level = if system { Level::System } else { Level::L2 };
        self.prov_issue(
            ctx,
            a,
            None,
            ProvKind::Store { buffered: false },
            Some(vals),
        );
        for la in &lines {
            let seq = self.frontier.number();
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
            self.send(ctx, 0, req);
        }
        w.flow.advance(a.mask);
        self.lines = lines;
        true
    }

    /// Where an atomic on `space` at `scope` is performed (`ordering::rmw_site`).
    #[inline]
    pub fn rmw_site(&self, space: Space, scope: Scope) -> RmwSite {
        ordering::rmw_site(
            space,
            ordering::space_level(space, scope, self.svm),
            self.wg_atomics_l1,
        )
    }

    /// A global atomic of warp `w` (kernel or trace) at the L1 or L2 unit `site` names
    /// ([`Lsu::rmw_site`]). `false` if it must wait for the warp's own buffered stores or the port.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(
        &mut self,
        w: &mut Warp,
        program: &Program,
        a: &WarpAccess,
        all: Vec<LaneAtomic>,
        op: AtomicOp,
        ty: Ty,
        site: RmwSite,
        race_read: Option<(Space, Scope, bool)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let wi = a.wi;
        let value_bytes = if self.values { ty.width().bytes() } else { 0 };
        // Width 0: an atomic's batch carries its lanes' addresses, not byte masks.
        let Some(lines) = self.coalesced(w, a, 0) else {
            return false;
        };
        let own = lines.iter().any(|la| self.sb.holds(wi as u16, la.line));
        if ordering::rmw_waits_for_own_stores(own) {
            w.set_stall(Stall::OwnBufferedStore);
            self.wake_drain(ctx, now);
            self.lines = lines;
            return false;
        }
        if !self.port_room(w, lines.len() as u32) {
            self.lines = lines;
            return false;
        }
        let (at_l1, level) = match site {
            RmwSite::L1 => (true, Level::Sm),
            RmwSite::L2 { level } => (false, level),
            RmwSite::SharedMemory => unreachable!("local memory is the shared-memory unit's"),
        };
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
            self.send(ctx, 0, req);
        }
        let parts = lines.len() as u32;
        let writes = if at_l1 { parts } else { 0 };
        self.started(w, program, opi, parts, a, OpKind::Atomic, writes);
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
                (a.tid0 + l as u64, a.addrs[l], v)
            })
            .collect();
        let (sm, warp) = (self.sm, a.wi as u16);
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

    /// The lines access `a` touches with `width`-byte lanes (`coalesce`), in the LSU's reused list;
    /// `None`, the list put back, if the access must wait for one of its warp's held loads.
    fn coalesced(&mut self, w: &mut Warp, a: &WarpAccess, width: u32) -> Option<Vec<LineAccess>> {
        let mut lines = std::mem::take(&mut self.lines);
        coalesce(
            a.mask,
            a.addrs,
            a.stride,
            width,
            self.line_bytes,
            &mut lines,
        );
        if waits_for_held_load(w, a, &lines) {
            self.lines = lines;
            return None;
        }
        Some(lines)
    }
}

/// Whether access `a` over `lines` must wait for one of its warp's held loads
/// (`ordering::held_load_blocks`); the warp stalls if so. Nothing to check without held loads.
#[inline]
fn waits_for_held_load(w: &mut Warp, a: &WarpAccess, lines: &[LineAccess]) -> bool {
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
