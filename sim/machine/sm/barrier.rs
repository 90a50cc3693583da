//! Barriers: the control part of a work-group or sub-group barrier (who waits, when it releases). Its
//! memory-ordering part is the ordering core's barrier row (`ordering::work_group_barrier`,
//! `ordering::barrier_arrive`): the release side is checked before the barrier instruction issues,
//! the acquire side (an L1 invalidation at device scope) takes effect when the barrier releases.
//!
//! A warp's lanes arrive at a barrier as they execute it; a warp has arrived when all its live lanes
//! have. The sub-group barrier releases a warp when its live lanes have all arrived. A work-group has
//! 16 barriers (PTX ISA, "bar, barrier": ids 0-15, [`BARRIERS_PER_GROUP`]); barriers with different
//! ids never synchronise with each other. The plain work-group barrier (`__syncthreads`, OpenCL
//! `work_group_barrier`, PTX `bar.sync 0`) is barrier 0 without a thread count. A barrier without a
//! thread count completes when every warp of the group that still has live lanes has arrived; one
//! with a thread count `b` when `ceil(b / warp size)` warps have arrived (PTX counts whole warps:
//! `b` is a multiple of the warp size). Lanes and warps that exit stop being expected by barriers
//! without a count, so an exit never blocks the others (CUDA semantics; PTX per-thread arrival
//! counting with exited threads no longer expected); a counted barrier waits for its count whatever
//! exits. `bar.arrive` counts the warp's arrival and does not wait (the warp's lanes that got there
//! first wait only for the warp's other live lanes). `bar.red` records each arriving lane's predicate
//! and writes the reduction into every participating lane when the barrier completes. Lanes of one
//! warp waiting at barriers with different ids or operations are a runtime error naming the
//! instruction (`.aligned` PTX barriers require the warp's threads to execute the same barrier).
//! A barrier that can never complete is not released: the watchdog diagnoses it (`gpu/`), the
//! barrier named by its instruction (`bar.sync 1, 64`).
//!
//! Not modelled: barrier latency beyond the issue of the barrier instruction; with `--races`, the
//! release of `bar.arrive` (its warp is not among the threads the barrier joins).

use super::{lanes, Sm, Stall};
use crate::ctx::Ctx;
use crate::ir::{BarrierKind, BarrierOp, BarrierReduce, CtaBarrier, BARRIERS_PER_GROUP};
use crate::races::RaceEvent;

/// One of a work-group's barriers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierId(pub u8);

/// The plain work-group barrier as a CTA barrier: barrier 0, every thread, arrive and wait.
const WORK_GROUP_BARRIER: CtaBarrier = CtaBarrier {
    id: 0,
    threads: None,
    op: BarrierOp::Sync,
};

/// What the lanes of a warp that are at a barrier wait at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierWait {
    /// A barrier of the work-group; `invalidate`: its acquire side invalidates the L1 on release.
    Group { bar: CtaBarrier, invalidate: bool },
    /// The sub-group barrier: the warp's own live lanes.
    SubGroup,
}

/// The state of one barrier of a work-group.
#[derive(Debug, Clone, Default)]
pub struct BarrierState {
    /// Warps that have arrived in the current generation.
    arrived: u32,
    /// The thread count the arriving instructions gave (PTX requires the participants to give the
    /// same one); `None`: every warp of the group with live lanes.
    threads: Option<u32>,
    /// `bar.red`, per lane: participating lanes and those whose predicate was true.
    parts: Vec<u32>,
    trues: Vec<u32>,
}

/// The barriers of a resident work-group.
#[derive(Debug, Clone, Default)]
pub struct Barriers {
    states: [BarrierState; BARRIERS_PER_GROUP as usize],
}

/// A released barrier's `bar.red` tallies, per lane: participating lanes and true predicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reduction {
    parts: Vec<u32>,
    trues: Vec<u32>,
}

impl Reduction {
    /// What `op` writes into lane `l`: per lane (`per_lane`, lane `l` of the participating warps) or
    /// over every participating thread.
    pub fn value(&self, op: BarrierReduce, per_lane: bool, l: usize) -> u64 {
        if per_lane {
            op.result(
                self.trues.get(l).copied().unwrap_or(0) as u64,
                self.parts.get(l).copied().unwrap_or(0) as u64,
            )
        } else {
            op.result(
                self.trues.iter().map(|&n| n as u64).sum::<u64>(),
                self.parts.iter().map(|&n| n as u64).sum::<u64>(),
            )
        }
    }
}

impl Barriers {
    fn state(&mut self, id: BarrierId) -> &mut BarrierState {
        &mut self.states[id.0 as usize]
    }

    /// `bar.red`: lanes `(lane, predicate)` of a warp of `ws` lanes arrive at barrier `id`.
    pub fn record_reduce(
        &mut self,
        id: BarrierId,
        ws: usize,
        preds: impl IntoIterator<Item = (usize, bool)>,
    ) {
        let st = self.state(id);
        if st.parts.len() < ws {
            st.parts.resize(ws, 0);
            st.trues.resize(ws, 0);
        }
        for (l, p) in preds {
            st.parts[l] += 1;
            st.trues[l] += p as u32;
        }
    }

    /// A whole warp has arrived at barrier `id`; `threads`: the count its instruction gave.
    pub fn arrive(&mut self, id: BarrierId, threads: Option<u32>) {
        let st = self.state(id);
        st.arrived += 1;
        if threads.is_some() {
            st.threads = threads;
        }
    }

    /// The warps barrier `id` completes with, if enough have arrived: its thread count in whole
    /// warps of `ws` lanes, or `live` (the group's warps with live lanes) without a count. `None`
    /// while no warp or too few have arrived.
    pub fn complete(&mut self, id: BarrierId, live: u32, ws: u32) -> Option<u32> {
        let st = self.state(id);
        if st.arrived == 0 {
            return None;
        }
        let expected = match st.threads {
            Some(n) => n.div_ceil(ws),
            None => live,
        };
        (st.arrived >= expected).then_some(expected)
    }

    /// Releases barrier `id` with `expected` warps: the next generation starts with the arrivals
    /// beyond them, without a thread count; the reduction tallies go to the caller.
    pub fn release(&mut self, id: BarrierId, expected: u32) -> Reduction {
        let st = self.state(id);
        st.arrived -= expected.min(st.arrived);
        st.threads = None;
        Reduction {
            parts: std::mem::take(&mut st.parts),
            trues: std::mem::take(&mut st.trues),
        }
    }

    /// Warps arrived at barrier `id` in its current generation.
    #[cfg(test)]
    pub fn arrived(&self, id: BarrierId) -> u32 {
        self.states[id.0 as usize].arrived
    }
}

impl Sm {
    /// Lanes `mask` of warp `wi` arrive at a barrier of `kind`; `invalidate`: the barrier's acquire
    /// side invalidates the L1 when it releases. The instruction issues unless the warp's lanes
    /// would wait at two different barriers (a runtime error).
    pub(super) fn barrier(
        &mut self,
        wi: usize,
        mask: u64,
        kind: BarrierKind,
        invalidate: bool,
        ctx: &mut Ctx,
    ) -> bool {
        let bar = match kind {
            BarrierKind::SubGroup => {
                let w = self.warps[wi].as_mut().expect("live");
                w.at_bar |= mask;
                w.set_stall(Stall::Barrier);
                w.bar = Some(BarrierWait::SubGroup);
                self.release_sub_group(wi);
                return true;
            }
            BarrierKind::WorkGroup => WORK_GROUP_BARRIER,
            BarrierKind::Named(b) => b,
        };
        let ws = self.ws as usize;
        let w = self.warps[wi].as_ref().expect("live");
        if let Some(other) = w
            .bar
            .filter(|b| *b != BarrierWait::Group { bar, invalidate })
        {
            let pc = match &w.flow {
                super::warp::Flow::Simt { pc, .. } => pc[mask.trailing_zeros() as usize],
                super::warp::Flow::Stream { next, .. } => *next,
            };
            let lane = mask.trailing_zeros() as usize;
            self.fail(
                wi,
                pc,
                lane,
                format!(
                    "lanes of one warp wait at different barriers ({other:?} and {bar:?}); a warp's threads \
                     execute the same barrier (PTX `.aligned`)"
                ),
            );
            return false;
        }
        if let BarrierOp::Reduce { pred, negated, .. } = bar.op {
            let gs = w.group_slot;
            let preds: Vec<(usize, bool)> = lanes(mask)
                .map(|l| (l, (w.regs()[pred as usize * ws + l] != 0) != negated))
                .collect();
            let g = self.groups[gs].as_mut().expect("resident");
            g.barriers.record_reduce(BarrierId(bar.id), ws, preds);
        }
        let w = self.warps[wi].as_mut().expect("live");
        w.at_bar |= mask;
        w.set_stall(Stall::Barrier);
        w.bar = Some(BarrierWait::Group { bar, invalidate });
        self.stats.barrier_waits += 1;
        self.warp_arrives(wi, ctx);
        true
    }

    /// Some lanes of warp `wi` exited: the ones left may all be at its barrier now.
    pub(super) fn lanes_left_barrier(&mut self, wi: usize, ctx: &mut Ctx) {
        match self.warps[wi].as_ref().and_then(|w| w.bar) {
            Some(BarrierWait::SubGroup) => self.release_sub_group(wi),
            Some(BarrierWait::Group { .. }) => self.warp_arrives(wi, ctx),
            None => {}
        }
    }

    /// Whether every live lane of warp `wi` is at its barrier.
    fn all_lanes_arrived(&self, wi: usize) -> bool {
        self.warps[wi]
            .as_ref()
            .is_some_and(|w| w.at_bar != 0 && w.at_bar & w.live == w.live)
    }

    /// Releases warp `wi` from the sub-group barrier once all its live lanes are there.
    fn release_sub_group(&mut self, wi: usize) {
        if !self.all_lanes_arrived(wi) {
            return;
        }
        let w = self.warps[wi].as_mut().expect("live");
        let m = w.at_bar;
        w.at_bar = 0;
        w.bar = None;
        w.flow.advance(m);
        if self.launch.races {
            let tids = lanes(m).map(|l| self.thread_ids(wi, l).1).collect();
            self.notices.races.push(RaceEvent::Barrier { tids });
        }
    }

    /// Warp `wi` has arrived at its group barrier once all its live lanes are there; an arriving
    /// warp (`bar.arrive`) goes on at once.
    fn warp_arrives(&mut self, wi: usize, ctx: &mut Ctx) {
        if !self.all_lanes_arrived(wi) {
            return;
        }
        let w = self.warps[wi].as_mut().expect("live");
        let Some(BarrierWait::Group { bar, .. }) = w.bar else {
            return;
        };
        let gs = w.group_slot;
        if bar.op == BarrierOp::Arrive {
            let m = w.at_bar;
            w.at_bar = 0;
            w.bar = None;
            w.flow.advance(m);
            w.set_stall(Stall::Ready);
            self.notices.progress += 1;
        }
        let g = self.groups[gs].as_mut().expect("resident");
        g.barriers.arrive(BarrierId(bar.id), bar.threads);
        self.try_release(gs, BarrierId(bar.id), ctx);
    }

    /// After a warp of group `gs` exited: barriers without a thread count expect one warp fewer.
    pub(super) fn try_release_group(&mut self, gs: usize, ctx: &mut Ctx) {
        for id in 0..BARRIERS_PER_GROUP {
            self.try_release(gs, BarrierId(id), ctx);
        }
    }

    /// Releases barrier `id` of group `gs` once the warps it expects have arrived: its thread count
    /// in whole warps, or every warp of the group with live lanes (also after a warp exited and is
    /// no longer expected). The warps that arrived and wait there go on; a `bar.red` writes its
    /// result into each of their lanes.
    fn try_release(&mut self, gs: usize, id: BarrierId, ctx: &mut Ctx) {
        let ws = self.ws;
        let g = self.groups[gs].as_mut().expect("resident");
        let live = g.live_warps;
        let Some(expected) = g.barriers.complete(id, live, ws) else {
            return;
        };
        let warps = g.warps.clone();
        let waiting: Vec<usize> = warps
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| {
                matches!(
                    self.warps[s].as_ref().and_then(|w| w.bar),
                    Some(BarrierWait::Group { bar, .. }) if bar.id == id.0
                ) && self.all_lanes_arrived(s)
            })
            .collect();
        let g = self.groups[gs].as_mut().expect("resident");
        let red = g.barriers.release(id, expected);
        if self.launch.races {
            let mut tids = Vec::new();
            for &s in &waiting {
                let m = self.warps[s].as_ref().map_or(0, |w| w.at_bar);
                for l in lanes(m) {
                    tids.push(self.thread_ids(s, l).1);
                }
            }
            self.notices.races.push(RaceEvent::Barrier { tids });
        }
        let wsz = ws as usize;
        let mut invalidate = false;
        for s in waiting {
            if let Some(w) = self.warps[s].as_mut() {
                let Some(BarrierWait::Group { bar, invalidate: i }) = w.bar else {
                    continue;
                };
                invalidate |= i;
                let m = w.at_bar;
                if let BarrierOp::Reduce {
                    op, dst, per_lane, ..
                } = bar.op
                {
                    for l in lanes(m) {
                        w.regs_mut()[dst as usize * wsz + l] = red.value(op, per_lane, l);
                    }
                }
                w.scoreboard.unblock();
                w.at_bar = 0;
                w.bar = None;
                w.flow.advance(m);
                w.set_stall(Stall::Ready);
                self.gates.set(s, Some(w));
            }
        }
        self.lsu.acquired(invalidate, ctx);
        self.wake(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::{BarrierId, Barriers};
    use crate::ir::*;
    use crate::tests::{buf, kernel, tiny, wl};
    use crate::workload::Init;
    use crate::{run, RunOptions};

    #[test]
    fn a_barrier_without_a_count_completes_with_every_live_warp() {
        let mut b = Barriers::default();
        let id = BarrierId(0);
        assert_eq!(b.complete(id, 3, 32), None, "nobody arrived");
        b.arrive(id, None);
        b.arrive(id, None);
        assert_eq!(b.complete(id, 3, 32), None, "2 of 3 warps");
        // A warp exited: 2 live warps now complete it.
        assert_eq!(b.complete(id, 2, 32), Some(2));
        b.arrive(id, None);
        assert_eq!(b.complete(id, 3, 32), Some(3));
        b.release(id, 3);
        assert_eq!(b.arrived(id), 0);
        assert_eq!(b.complete(id, 3, 32), None, "a new generation");
    }

    #[test]
    fn a_counted_barrier_waits_for_its_count_in_whole_warps_and_keeps_later_arrivals() {
        let mut b = Barriers::default();
        let id = BarrierId(3);
        // bar.sync 3, 64 with 32-lane warps: 2 warps, whatever the group's live warps.
        b.arrive(id, Some(64));
        assert_eq!(b.complete(id, 1, 32), None, "a count waits whatever exits");
        b.arrive(id, Some(64));
        b.arrive(id, Some(64));
        assert_eq!(b.complete(id, 8, 32), Some(2));
        b.release(id, 2);
        // The third arrival belongs to the next generation, which has no count until one arrives.
        assert_eq!(b.arrived(id), 1);
        assert_eq!(b.complete(id, 1, 32), Some(1));
        // 33 threads round up to 2 warps of 32.
        let mut c = Barriers::default();
        c.arrive(id, Some(33));
        assert_eq!(c.complete(id, 4, 32), None);
        c.arrive(id, Some(33));
        assert_eq!(c.complete(id, 4, 32), Some(2));
    }

    #[test]
    fn barriers_with_different_ids_never_join() {
        let mut b = Barriers::default();
        b.arrive(BarrierId(0), None);
        b.arrive(BarrierId(1), None);
        assert_eq!(b.complete(BarrierId(0), 2, 32), None);
        assert_eq!(b.complete(BarrierId(1), 2, 32), None);
        assert_eq!(b.complete(BarrierId(2), 2, 32), None);
        b.arrive(BarrierId(1), None);
        assert_eq!(b.complete(BarrierId(1), 2, 32), Some(2));
        assert_eq!(b.complete(BarrierId(0), 2, 32), None);
    }

    #[test]
    fn a_reduction_tallies_per_lane_and_over_all_threads_then_resets() {
        let mut b = Barriers::default();
        let id = BarrierId(0);
        // Two warps of 4 lanes: lane 0 true in both, lane 1 true in one, lanes 2-3 false, lane 3
        // absent from the second warp.
        b.record_reduce(id, 4, [(0, true), (1, true), (2, false), (3, false)]);
        b.record_reduce(id, 4, [(0, true), (1, false), (2, false)]);
        b.arrive(id, None);
        b.arrive(id, None);
        assert_eq!(b.complete(id, 2, 4), Some(2));
        let r = b.release(id, 2);
        let per_lane = |op| (0..4).map(|l| r.value(op, true, l)).collect::<Vec<_>>();
        assert_eq!(per_lane(BarrierReduce::Popc), [2, 1, 0, 0]);
        assert_eq!(per_lane(BarrierReduce::And), [1, 0, 0, 0]);
        assert_eq!(per_lane(BarrierReduce::Or), [1, 1, 0, 0]);
        // Over every participant: 3 of 7 true.
        assert_eq!(r.value(BarrierReduce::Popc, false, 2), 3);
        assert_eq!(r.value(BarrierReduce::And, false, 0), 0);
        assert_eq!(r.value(BarrierReduce::Or, false, 3), 1);
        // A lane nobody brought: the reduction of nothing (popc 0, and 1, or 0).
        assert_eq!(r.value(BarrierReduce::Popc, true, 9), 0);
        assert_eq!(r.value(BarrierReduce::And, true, 9), 1);
        // The tallies went with the release.
        b.arrive(id, None);
        assert_eq!(b.release(id, 1).value(BarrierReduce::Popc, false, 0), 0);
    }

    #[test]
    fn lanes_exiting_complete_a_sub_group_barrier_not_the_work_group_barrier() {
        // Warp 0: lanes 16.. exit while lanes ..16 wait at a sub-group barrier; those then store x and
        // arrive at the work-group barrier. Warp 1 waits there first, then copies x into y. The exits
        // complete warp 0's sub-group barrier only: warp 1 must not pass the work-group barrier
        // before warp 0's store.
        let r = |x| Operand::Reg(x);
        let at = |x| Address {
            base: Operand::Reg(x),
            offset: 0,
        };
        let bar = |kind| Inst::Barrier {
            kind,
            spaces: SpaceSet::BOTH,
            scope: Scope::WorkGroup,
        };
        let insts = vec![
            Inst::ReadSpecial {
                dst: 2,
                which: Special::SubGroupId,
            },
            Inst::Cmp {
                op: CmpOp::Ne,
                ty: Ty::U32,
                dst: 3,
                a: r(2),
                b: Operand::Imm(0),
            },
            Inst::Branch {
                target: 10,
                cond: Some((3, true)),
            },
            Inst::ReadSpecial {
                dst: 4,
                which: Special::Lane,
            },
            Inst::Cmp {
                op: CmpOp::Ge,
                ty: Ty::U32,
                dst: 5,
                a: r(4),
                b: Operand::Imm(16),
            },
            Inst::Branch {
                target: 9,
                cond: Some((5, true)),
            },
            bar(BarrierKind::SubGroup),
            Inst::Store {
                space: Space::Global,
                addr: at(0),
                src: Operand::Imm(1),
                ty: Ty::U32,
                ord: StoreOrd::Plain,
                scope: Scope::Device,
            },
            bar(BarrierKind::WorkGroup),
            Inst::Exit,
            bar(BarrierKind::WorkGroup),
            Inst::Load {
                dst: 6,
                space: Space::Global,
                addr: at(0),
                ty: Ty::U32,
                ord: LoadOrd::Plain,
                scope: Scope::Device,
            },
            Inst::Store {
                space: Space::Global,
                addr: at(1),
                src: r(6),
                ty: Ty::U32,
                ord: StoreOrd::Plain,
                scope: Scope::Device,
            },
            Inst::Exit,
        ];
        let w = wl(
            kernel(insts, 7, 0),
            1,
            64,
            vec![buf("x", 1, Init::Zero), buf("y", 1, Init::Zero)],
        );
        let res = run(&tiny(), &w, &RunOptions::default()).expect("completes");
        assert_eq!(
            res.buffers[1],
            [1],
            "warp 1 passed the barrier before warp 0's store"
        );
    }
}
