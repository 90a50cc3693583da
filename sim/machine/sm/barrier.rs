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
use crate::ir::{BarrierKind, BarrierOp, CtaBarrier, BARRIERS_PER_GROUP};
use crate::machine::ctx::Ctx;
use crate::machine::races::RaceEvent;

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

impl Barriers {
    fn state(&mut self, id: BarrierId) -> &mut BarrierState {
        &mut self.states[id.0 as usize]
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
            let st = g.barriers.state(BarrierId(bar.id));
            if st.parts.len() < ws {
                st.parts.resize(ws, 0);
                st.trues.resize(ws, 0);
            }
            for (l, p) in preds {
                st.parts[l] += 1;
                st.trues[l] += p as u32;
            }
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
        let st = g.barriers.state(BarrierId(bar.id));
        st.arrived += 1;
        if bar.threads.is_some() {
            st.threads = bar.threads;
        }
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
        let arrived = g.barriers.state(id).arrived;
        if arrived == 0 {
            return;
        }
        let expected = match g.barriers.state(id).threads {
            Some(n) => n.div_ceil(ws),
            None => live,
        };
        if arrived < expected {
            return;
        }
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
        let st = g.barriers.state(id);
        st.arrived -= expected.min(arrived);
        st.threads = None;
        let parts = std::mem::take(&mut st.parts);
        let trues = std::mem::take(&mut st.trues);
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
        let (all_parts, all_trues) = (
            parts.iter().map(|&n| n as u64).sum::<u64>(),
            trues.iter().map(|&n| n as u64).sum::<u64>(),
        );
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
                        let v = if per_lane {
                            op.result(
                                trues.get(l).copied().unwrap_or(0) as u64,
                                parts.get(l).copied().unwrap_or(0) as u64,
                            )
                        } else {
                            op.result(all_trues, all_parts)
                        };
                        w.regs_mut()[dst as usize * wsz + l] = v;
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
    use crate::ir::*;
    use crate::machine::tests::{buf, kernel, tiny, wl};
    use crate::machine::{run, RunOptions};
    use crate::workload::Init;

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
