//! Shared (work-group-local) memory: banks, bank conflicts and its atomic unit.
//!
//! Models: `banks` banks of `bank_bytes` each, words interleaved over them; a warp's access takes one
//! cycle per distinct word on its most loaded bank (lanes reading the same word share it — a
//! broadcast), accesses of the SM are served one after another (the pipeline accepts the next one
//! when the previous one's bank cycles are over), and data is ready `latency` cycles after the last
//! bank cycle. Atomics go through the banks, then through the SM's atomic unit, which serialises
//! operations on one address (`atomic_unit.rs`). Values live in the work-group's slot
//! (`GroupSlot::local`) and are read and written when the access issues, so a warp's local accesses
//! take effect in its program order; the timing says when the warp gets the result.
//!
//! Not modelled: the L1/shared-memory carve-out, bank conflicts between different warps' accesses in
//! the same cycle beyond serialising them.

use super::lanes;
use super::lsu::{OpKind, WarpAccess};
use super::scoreboard::Dst;
use super::Sm;
use crate::config::SharedMemSpec;
use crate::engine::{Clock, Time};
use crate::ir::{AtomicOp, Scope, Space, Ty};
use crate::machine::atomic::{perform_batch, AtomicBatch, LaneAtomic, ValueStore};
use crate::machine::atomic_unit::AtomicUnit;
use crate::machine::domain::Ctx;
use crate::machine::msg::{CoreResp, Event, Requester};
use crate::machine::watchdog::write_tracked;

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
    #[inline]
    pub fn access(&mut self, now: Time, addrs: &[u64; 64], mask: u64) -> Time {
        let ways = bank_cycles(addrs, mask, self.banks, self.bank_bytes);
        self.stats.accesses += 1;
        self.stats.conflict_cycles += ways - 1;
        let start = self.clock.edge_at_or_after(now).max(self.free);
        self.free = start + self.clock.cycles(ways);
        start + self.clock.cycles(ways - 1 + self.latency)
    }
}

impl Sm {
    /// The shared-memory access of op `opi` completes at `done`.
    fn shared_done(&self, opi: u32, wi: usize, done: Time, ctx: &mut Ctx) {
        let who = Requester::Warp {
            warp: wi as u16,
            op: opi,
        };
        ctx.q
            .at_or_now(done, Event::SmIn(self.id, CoreResp::SharedDone { who }));
    }

    /// A load of local memory: values read now, ready when the banks are done.
    pub(super) fn local_load(
        &mut self,
        a: &WarpAccess,
        value_bytes: u32,
        race_read: Option<(Space, Scope, bool)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let wi = a.wi;
        let gs = self.warps[wi].as_ref().expect("live").group_slot;
        let opi = self.new_op(wi, a.dst, value_bytes, OpKind::Local, a.mask, a.addrs);
        if self.launch.races {
            self.ops.get_mut(opi).race_read = race_read;
        }
        if value_bytes > 0 {
            let bytes = a.width as usize;
            for l in lanes(a.mask) {
                let o = a.addrs[l] as usize;
                let mut b = [0u8; 8];
                let g = self.groups[gs].as_ref().expect("resident");
                b[..bytes].copy_from_slice(&g.local[o..o + bytes]);
                if let Some(v) = self.lane_val(opi, l) {
                    *v = u64::from_le_bytes(b);
                }
            }
        }
        let done = self.shared.access(now, a.addrs, a.mask);
        self.started(opi, 1, a, OpKind::Local, 0);
        self.shared_done(opi, wi, done, ctx);
        true
    }

    /// A store to local memory: written now (program order within the group), done when the banks
    /// are.
    pub(super) fn local_store(
        &mut self,
        a: &WarpAccess,
        vals: &[u64; 64],
        now: Time,
        ctx: &mut Ctx,
    ) {
        let wi = a.wi;
        if self.has_values() {
            let vb = a.width.min(8) as usize;
            let gs = self.warps[wi].as_ref().expect("live").group_slot;
            let g = self.groups[gs].as_mut().expect("resident");
            for l in lanes(a.mask) {
                let o = a.addrs[l] as usize;
                let v = vals[l].to_le_bytes();
                write_tracked(&mut g.local, o, o as u64, &v[..vb], &mut g.local_digest);
            }
        }
        let done = self.shared.access(now, a.addrs, a.mask);
        let opi = self.new_op(wi, Dst::None, 0, OpKind::Local, a.mask, a.addrs);
        self.ops.get_mut(opi).parts = 1;
        let w = self.warps[wi].as_mut().expect("live");
        w.inflight.local += 1;
        w.flow.advance(a.mask);
        self.shared_done(opi, wi, done, ctx);
    }

    /// An atomic on local memory: through the banks and the SM's atomic unit, performed now.
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
        let gs = self.warps[wi].as_ref().expect("live").group_slot;
        let mut batch = AtomicBatch { op, ty, lanes: all };
        let done = {
            let t = self.shared.access(now, a.addrs, a.mask);
            self.shared.atomic.schedule(t, &batch).max(t)
        };
        if self.has_values() {
            let g = self.groups[gs].as_mut().expect("resident");
            perform_batch(
                &mut batch,
                &mut LocalView {
                    mem: &mut g.local,
                    digest: &mut g.local_digest,
                },
            );
        }
        let opi = self.new_op(wi, a.dst, value_bytes, OpKind::Local, a.mask, a.addrs);
        self.ops.get_mut(opi).race_read = race_read;
        for l in &batch.lanes {
            if let Some(v) = self.lane_val(opi, l.lane as usize) {
                *v = l.result;
            }
        }
        self.started(opi, 1, a, OpKind::Local, 0);
        self.shared_done(opi, wi, done, ctx);
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
