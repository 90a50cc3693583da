//! Barriers: the control part of a work-group or sub-group barrier (who waits, when it releases). Its
//! memory-ordering part is the ordering core's barrier row (`ordering::work_group_barrier`): the
//! release side is checked before the barrier instruction issues, the acquire side (an L1
//! invalidation at device scope) takes effect when the barrier releases.
//!
//! A warp's lanes arrive at a barrier as they execute it; a warp has arrived when all its live lanes
//! have. The sub-group barrier releases a warp when its live lanes have all arrived. A barrier of the
//! work-group releases when every expected warp has arrived: today the one work-group barrier
//! ([`BarrierId::WORK_GROUP`], PTX barrier 0, `__syncthreads`) expects every warp of the group that
//! still has live lanes. Lanes and warps that exit stop being expected, so an exit never blocks the
//! others (CUDA semantics). A barrier that can never complete is not released: the watchdog diagnoses
//! it (`gpu.rs`).
//!
//! Named barriers (PTX `bar.sync a{, b}`, `bar.arrive`, `bar.red`: 16 per CTA, optional thread counts)
//! fit this shape: a [`BarrierId`] per barrier, each [`BarrierState`] with its own expected count,
//! and an arrive-only wait that does not hold the warp.
//!
//! Not modelled: barrier latency beyond the issue of the barrier instruction.

use super::{lanes, Sm, Stall};
use crate::ir::BarrierKind;
use crate::machine::domain::Ctx;
use crate::machine::msg::{Event, L1Req};
use crate::machine::races::RaceEvent;

/// One of a work-group's barriers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierId(pub u8);

impl BarrierId {
    /// The work-group barrier (PTX barrier 0).
    pub const WORK_GROUP: BarrierId = BarrierId(0);
}

/// What the lanes of a warp that are at a barrier wait at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierWait {
    /// A barrier of the work-group; `invalidate`: its acquire side invalidates the L1 on release.
    Group { id: BarrierId, invalidate: bool },
    /// The sub-group barrier: the warp's own live lanes.
    SubGroup,
}

/// The state of one barrier of a work-group.
#[derive(Debug, Clone, Copy, Default)]
pub struct BarrierState {
    /// Warps that have arrived.
    arrived: u32,
}

/// The barriers of a resident work-group.
#[derive(Debug, Clone, Default)]
pub struct Barriers {
    states: [BarrierState; 1],
}

impl Barriers {
    fn state(&mut self, id: BarrierId) -> &mut BarrierState {
        &mut self.states[id.0 as usize]
    }
}

impl Sm {
    /// Lanes `mask` of warp `wi` arrive at a barrier of `kind`; `invalidate`: the barrier's acquire
    /// side invalidates the L1 when it releases. The instruction always issues.
    pub(super) fn barrier(
        &mut self,
        wi: usize,
        mask: u64,
        kind: BarrierKind,
        invalidate: bool,
        ctx: &mut Ctx,
    ) -> bool {
        let w = self.warps[wi].as_mut().expect("live");
        w.at_bar |= mask;
        w.set_stall(Stall::Barrier);
        match kind {
            BarrierKind::SubGroup => {
                w.bar = Some(BarrierWait::SubGroup);
                self.release_sub_group(wi);
            }
            BarrierKind::WorkGroup => {
                w.bar = Some(BarrierWait::Group {
                    id: BarrierId::WORK_GROUP,
                    invalidate,
                });
                self.stats.barrier_waits += 1;
                self.warp_arrives(wi, ctx);
            }
        }
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

    /// Warp `wi` has arrived at its group barrier once all its live lanes are there.
    fn warp_arrives(&mut self, wi: usize, ctx: &mut Ctx) {
        if !self.all_lanes_arrived(wi) {
            return;
        }
        let w = self.warps[wi].as_ref().expect("live");
        let Some(BarrierWait::Group { id, .. }) = w.bar else {
            return;
        };
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        g.barriers.state(id).arrived += 1;
        self.try_release_group(gs, ctx);
    }

    /// Releases the group's work-group barrier once every expected warp has arrived (also after a
    /// warp exited and is no longer expected).
    pub(super) fn try_release_group(&mut self, gs: usize, ctx: &mut Ctx) {
        let g = self.groups[gs].as_mut().expect("resident");
        let expected = g.live_warps;
        let state = g.barriers.state(BarrierId::WORK_GROUP);
        if state.arrived == 0 || state.arrived < expected {
            return;
        }
        state.arrived = 0;
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
                if let Some(BarrierWait::Group { invalidate: i, .. }) = w.bar {
                    invalidate |= i;
                }
                w.scoreboard.unblock();
                let m = w.at_bar;
                w.at_bar = 0;
                w.bar = None;
                w.flow.advance(m);
                w.set_stall(Stall::Ready);
            }
        }
        if invalidate {
            ctx.q.after(0, Event::L1In(self.id, L1Req::InvalidateAll));
        }
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
