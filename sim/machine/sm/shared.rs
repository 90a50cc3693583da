//! Shared (work-group-local) memory: banks, bank conflicts and its atomic unit.
//!
//! Models: `banks` banks of `bank_bytes` each, words interleaved over them; a warp's access takes one
//! cycle per distinct word on its most loaded bank (lanes reading the same word share it — a
//! broadcast), accesses of the SM are served one after another (the pipeline accepts the next one
//! when the previous one's bank cycles are over), and data is ready `latency` cycles after the last
//! bank cycle. Atomics go through the banks, then through the SM's atomic unit, which serialises
//! operations on one address (`atomic_unit.rs`). Values live in the work-group's slot
//! (`GroupSlot::local`). A load reads and a store writes its values when the banks serve it (its
//! first bank cycle), as global memory takes a value where the access is performed: an access that
//! waits for the banks takes its value then, not at issue. The banks serve the SM's accesses one
//! after another in issue order, so a warp's local accesses take effect in its program order (the
//! ordering core's local-memory rules rely on it: `ordering::work_group_barrier`). An atomic is
//! performed when the banks serve it too; the atomic unit (after the banks) says when its result
//! is ready.
//!
//! Not modelled: the L1/shared-memory carve-out, bank conflicts between different warps' accesses in
//! the same cycle beyond serialising them.

use super::lanes;
use super::lsu::{OpKind, WarpAccess};
use super::scoreboard::Dst;
use super::Sm;
use crate::atomic::{perform_batch, AtomicBatch, LaneAtomic, ValueStore};
use crate::atomic_unit::AtomicUnit;
use crate::config::SharedMemSpec;
use crate::ctx::Ctx;
use crate::digest::write_tracked;
use crate::engine::{Clock, Time};
use crate::ir::{AtomicOp, Scope, Space, Ty};
use crate::msg::{CoreResp, Event, Requester};

/// Counters of one SM's shared memory.
#[derive(Debug, Default)]
pub struct SharedStats {
    pub accesses: u64,
    /// Extra cycles accesses took because of bank conflicts.
    pub conflict_cycles: u64,
}

/// One SM's shared memory: its banks' timing and its atomic unit.
pub struct SharedMemory {
    clock: Clock,
    banks: u32,
    bank_bytes: u32,
    latency: u64,
    /// When the banks accept the next access.
    free: Time,
    pub atomic: AtomicUnit,
    pub stats: SharedStats,
}

/// Cycles the banks need for the lanes in `mask` accessing `addrs`: the most distinct words any one
/// bank holds (at least 1).
#[inline]
pub fn bank_cycles(addrs: &[u64; 64], mask: u64, banks: u32, bank_bytes: u32) -> u64 {
    let mut words = [0u64; 64];
    let mut n = 0;
    for l in lanes(mask) {
        words[n] = addrs[l] / bank_bytes as u64;
        n += 1;
    }
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u8; 256];
    let mut most = 1;
    let mut last = None;
    for &w in words.iter() {
        if last == Some(w) {
            continue;
        }
        last = Some(w);
        let b = (w % banks as u64) as usize;
        per_bank[b] += 1;
        most = most.max(per_bank[b] as u64);
    }
    most
}

impl SharedMemory {
    pub fn new(spec: &SharedMemSpec, clock: Clock, atomic: AtomicUnit) -> SharedMemory {
        SharedMemory {
            clock,
            banks: spec.banks,
            bank_bytes: spec.bank_bytes,
            latency: spec.latency as u64,
            free: 0,
            atomic,
            stats: SharedStats::default(),
        }
    }

    /// An access by the lanes in `mask` at `now`; returns when its data is ready.
    #[cfg(test)]
    pub fn access(&mut self, now: Time, addrs: &[u64; 64], mask: u64) -> Time {
        self.serve(now, addrs, mask).1
    }

    /// An access by the lanes in `mask` at `now`: when the banks serve it (its first bank cycle,
    /// where it is performed) and when its data is ready.
    #[inline]
    pub fn serve(&mut self, now: Time, addrs: &[u64; 64], mask: u64) -> (Time, Time) {
        let ways = bank_cycles(addrs, mask, self.banks, self.bank_bytes);
        self.stats.accesses += 1;
        self.stats.conflict_cycles += ways - 1;
        let start = self.clock.edge_at_or_after(now).max(self.free);
        self.free = start + self.clock.cycles(ways);
        (start, start + self.clock.cycles(ways - 1 + self.latency))
    }
}

impl Sm {
    /// The shared-memory access of op `opi` completes at `done`.
    fn shared_done(&self, opi: u32, wi: usize, done: Time, ctx: &mut Ctx) {
        let who = Requester::Warp {
            warp: wi as u16,
            op: opi,
        };
        if let Some(r) = ctx.rec.as_deref_mut() {
            r.local(opi, ctx.q.now(), done);
        }
        ctx.q
            .at(done, Event::SmIn(self.id, CoreResp::SharedDone { who }));
    }

    /// Local load or store `opi` is performed: a load reads its lanes' values from the work-group's
    /// local memory, a store writes them.
    pub(super) fn local_perform(&mut self, opi: u32) {
        let (op, lv) = self.lsu.op_values(opi);
        let (Some(lv), w) = (lv, op.warp as usize) else {
            return;
        };
        let (mask, store, load) = (op.lanes, op.local_store as usize, op.value_bytes as usize);
        let gs = self.warps[w]
            .as_ref()
            .expect("a warp with an access in flight")
            .group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        for l in lanes(mask) {
            let o = lv.addr[l] as usize;
            if store > 0 {
                let v = lv.vals[l].to_le_bytes();
                write_tracked(&mut g.local, o, o as u64, &v[..store], &mut g.local_digest);
            } else if load > 0 {
                let mut b = [0u8; 8];
                b[..load].copy_from_slice(&g.local[o..o + load]);
                lv.vals[l] = u64::from_le_bytes(b);
            }
        }
    }

    /// Schedules local op `opi` to be performed at `start` (at once when that is now).
    fn local_at(&mut self, opi: u32, wi: usize, start: Time, now: Time, ctx: &mut Ctx) {
        if start <= now {
            self.local_perform(opi);
        } else {
            let who = Requester::Warp {
                warp: wi as u16,
                op: opi,
            };
            ctx.q
                .at(start, Event::SmIn(self.id, CoreResp::SharedPerform { who }));
        }
    }

    /// A load of local memory: values read when the banks serve it, ready when they are done.
    pub(super) fn local_load(
        &mut self,
        a: &WarpAccess,
        value_bytes: u32,
        race_read: Option<(Space, Scope, bool)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let wi = a.wi;
        let opi = self
            .lsu
            .new_op(wi, a.dst, value_bytes, OpKind::Local, a.mask, a.addrs);
        if self.launch.races {
            self.lsu.op_mut(opi).race_read = race_read;
        }
        // The value bytes read are the access width (a load's result is that wide).
        self.lsu.op_mut(opi).value_bytes = if value_bytes > 0 { a.width.min(8) } else { 0 };
        let (start, done) = self.shared.serve(now, a.addrs, a.mask);
        self.local_started(opi, a);
        self.local_at(opi, wi, start, now, ctx);
        self.shared_done(opi, wi, done, ctx);
        true
    }

    /// A store to local memory: written when the banks serve it (in issue order within the SM), done
    /// when the banks are.
    pub(super) fn local_store(
        &mut self,
        a: &WarpAccess,
        vals: &[u64; 64],
        now: Time,
        ctx: &mut Ctx,
    ) {
        let wi = a.wi;
        let (start, done) = self.shared.serve(now, a.addrs, a.mask);
        let opi = self
            .lsu
            .new_op(wi, Dst::None, 0, OpKind::Local, a.mask, a.addrs);
        self.lsu.op_mut(opi).parts = 1;
        if self.has_values() {
            self.lsu.op_mut(opi).local_store = a.width.min(8);
            for l in lanes(a.mask) {
                if let Some(v) = self.lsu.lane_val(opi, l) {
                    *v = vals[l];
                }
            }
            self.local_at(opi, wi, start, now, ctx);
        }
        let w = self.warps[wi].as_mut().expect("live");
        w.inflight.local += 1;
        w.flow.advance(a.mask);
        self.shared_done(opi, wi, done, ctx);
    }

    /// Local atomic `opi` is performed (when the banks serve it): `batch` on the work-group's local
    /// memory, each lane's result into the op's values.
    pub(super) fn local_atomic_perform(&mut self, opi: u32, batch: &mut AtomicBatch) {
        let w = self.lsu.op(opi).warp as usize;
        let gs = self.warps[w]
            .as_ref()
            .expect("a warp with an access in flight")
            .group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        perform_batch(
            batch,
            &mut LocalView {
                mem: &mut g.local,
                digest: &mut g.local_digest,
            },
        );
        for l in &batch.lanes {
            if let Some(v) = self.lsu.lane_val(opi, l.lane as usize) {
                *v = l.result;
            }
        }
    }

    /// An atomic on local memory: through the banks and the SM's atomic unit, performed when the
    /// banks serve it, its result ready when the atomic unit is done.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn local_atomic(
        &mut self,
        a: &WarpAccess,
        all: Vec<LaneAtomic>,
        op: AtomicOp,
        ty: Ty,
        value_bytes: u32,
        race_read: Option<(Space, Scope, bool)>,
        now: Time,
        ctx: &mut Ctx,
    ) {
        let wi = a.wi;
        let mut batch = AtomicBatch { op, ty, lanes: all };
        let (start, done) = {
            let (start, t) = self.shared.serve(now, a.addrs, a.mask);
            (start, self.shared.atomic.schedule(t, &batch).max(t))
        };
        let opi = self
            .lsu
            .new_op(wi, a.dst, value_bytes, OpKind::Local, a.mask, a.addrs);
        self.lsu.op_mut(opi).race_read = race_read;
        if self.has_values() {
            if start <= now {
                self.local_atomic_perform(opi, &mut batch);
            } else {
                let b = ctx.batches.alloc(batch);
                let who = Requester::Warp {
                    warp: wi as u16,
                    op: opi,
                };
                ctx.q.at(
                    start,
                    Event::SmIn(
                        self.id,
                        CoreResp::SharedAtomic {
                            who,
                            batch: crate::msg::BatchId(b),
                        },
                    ),
                );
            }
        }
        self.local_started(opi, a);
        self.shared_done(opi, wi, done, ctx);
    }

    /// A local load or atomic `opi` went to the banks in one part (`Lsu::started`).
    fn local_started(&mut self, opi: u32, a: &WarpAccess) {
        let w = self.warps[a.wi].as_mut().expect("live");
        let program = &self.launch.program;
        self.lsu.started(w, program, opi, 1, a, OpKind::Local, 0);
    }
}

/// A work-group's local memory as the value store of its atomics.
struct LocalView<'a> {
    mem: &'a mut Vec<u8>,
    digest: &'a mut u64,
}

impl ValueStore for LocalView<'_> {
    fn read(&self, addr: u64, len: u32) -> u64 {
        let o = addr as usize;
        let mut b = [0u8; 8];
        b[..len as usize].copy_from_slice(&self.mem[o..o + len as usize]);
        u64::from_le_bytes(b)
    }
    fn write(&mut self, addr: u64, len: u32, v: u64) {
        let b = v.to_le_bytes();
        write_tracked(
            self.mem,
            addr as usize,
            addr,
            &b[..len as usize],
            self.digest,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(f: impl Fn(u64) -> u64) -> [u64; 64] {
        std::array::from_fn(|l| f(l as u64))
    }

    const WARP: u64 = u32::MAX as u64;

    #[test]
    fn consecutive_words_take_one_cycle_and_a_bank_stride_serialises() {
        assert_eq!(bank_cycles(&addrs(|l| 4 * l), WARP, 32, 4), 1);
        assert_eq!(
            bank_cycles(&addrs(|l| 8 * l), WARP, 32, 4),
            2,
            "stride 2: two-way"
        );
        assert_eq!(
            bank_cycles(&addrs(|l| 128 * l), WARP, 32, 4),
            32,
            "every lane on bank 0"
        );
    }

    #[test]
    fn lanes_reading_one_word_are_a_broadcast() {
        assert_eq!(bank_cycles(&addrs(|_| 64), WARP, 32, 4), 1);
        // Two words on one bank, each read by half the lanes: two cycles.
        assert_eq!(bank_cycles(&addrs(|l| 128 * (l % 2)), WARP, 32, 4), 2);
        assert_eq!(
            bank_cycles(&addrs(|l| 4 * l), 0, 32, 4),
            1,
            "no lane: one cycle"
        );
    }

    #[test]
    fn accesses_are_served_one_after_another() {
        let clock = Clock::from_mhz(1000);
        let spec = SharedMemSpec {
            banks: 32,
            bank_bytes: 4,
            latency: 20,
        };
        let unit_spec = crate::config::AtomicUnitSpec {
            latency: 4,
            ops_per_cycle: 1,
            queue_depth: 8,
            same_address_cycles: 1.0,
        };
        let mut m = SharedMemory::new(&spec, clock, AtomicUnit::new(clock, &unit_spec, false));
        let conflict = addrs(|l| 128 * l);
        let first = m.access(0, &conflict, WARP);
        assert_eq!(first, clock.cycles(31 + 20));
        // The next access starts when the 32 bank cycles are over.
        let second = m.access(0, &addrs(|l| 4 * l), WARP);
        assert_eq!(second, clock.cycles(32 + 20));
        assert_eq!((m.stats.accesses, m.stats.conflict_cycles), (2, 31));
    }
}
