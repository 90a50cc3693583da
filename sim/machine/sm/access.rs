//! A warp's memory instruction on its way to the unit that serves it: a kernel instruction's lanes'
//! addresses (bounds- and alignment-checked) and operand values, then global memory to the LSU
//! (`lsu/`) and local memory to the shared-memory unit (`shared.rs`), with the race reports of what
//! issued (`../races/`). The same for traced instructions (`trace_issue.rs`), which bring their own
//! addresses.

use super::lsu::WarpAccess;
use super::scoreboard::Dst;
use super::{lanes, Sm};
use crate::atomic::LaneAtomic;
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::ir::*;
use crate::ordering::{Access, RmwSite, Rule};
use crate::races::{self, AccessKind, RaceEvent};

impl Sm {
    /// A kernel load, store, read-modify-write or compare-exchange: its lanes' addresses and operand
    /// values, then the unit that serves it. `false` if it must wait.
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
            tid0: self.tid0(wi),
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
            self.notices.races.push(RaceEvent::Access(races::Access {
                tid: a.tid0 + l as u64,
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
    /// `false` if it must wait.
    #[inline(always)]
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
        let races = self.launch.races;
        if space == Space::Local {
            if races {
                self.race_access(a, AccessKind::Load, ord.atomic_order());
            }
            return self.local_load(a, value_bytes, race_read, now, ctx);
        }
        let w = self.warps[a.wi].as_mut().expect("live");
        let read = race_read.filter(|_| races);
        let ok = self
            .lsu
            .load(w, &self.launch.program, a, value_bytes, read, now, ctx);
        // Reported only once issued: a load that waits is issued again later.
        if ok && races {
            self.race_access(a, AccessKind::Load, ord.atomic_order());
        }
        ok
    }

    /// A store (kernel or trace; a trace's values are zero and go nowhere). `false` if it must wait.
    #[inline(always)]
    pub(super) fn issue_store(
        &mut self,
        a: &WarpAccess,
        vals: &[u64; 64],
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let Access::Store { space, ord, .. } = a.access else {
            unreachable!("a store's access")
        };
        let ok = if space == Space::Local {
            self.local_store(a, vals, now, ctx);
            true
        } else {
            let w = self.warps[a.wi].as_mut().expect("live");
            self.lsu.store(w, a, vals, now, ctx)
        };
        if ok && self.launch.races {
            self.race_access(a, AccessKind::Store, ord.atomic_order());
        }
        ok
    }

    /// An atomic instruction's lanes (kernel or trace), at the unit `ordering::rmw_site` names.
    /// `false` if it must wait.
    #[inline(always)]
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
        let site = self.lsu.rmw_site(space, scope);
        let races = self.launch.races;
        let race_read = races.then_some((space, scope, acquire));
        let ok = if site == RmwSite::SharedMemory {
            let value_bytes = if self.has_values() {
                ty.width().bytes()
            } else {
                0
            };
            self.local_atomic(a, all, op, ty, value_bytes, race_read, now, ctx);
            true
        } else {
            let w = self.warps[a.wi].as_mut().expect("live");
            let program = &self.launch.program;
            self.lsu
                .atomic(w, program, a, all, op, ty, site, race_read, now, ctx)
        };
        if ok && races {
            self.race_access(a, AccessKind::Rmw, Some(ord.order()));
        }
        ok
    }
}
