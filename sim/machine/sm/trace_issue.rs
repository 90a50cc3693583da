//! Traced instructions (Accel-Sim SASS traces, timing only): a warp replays its recorded stream. Each
//! instruction waits for its traced source and destination registers (`scoreboard.rs`), passes the
//! same ordering gate as a kernel instruction (`issue.rs`, with the access `ordering::Access::of_trace`
//! gives it), and then: a compute instruction makes its destinations ready after its class's latency;
//! a memory instruction takes the traced lanes' addresses and width through the load/store unit
//! without values; `MEMBAR` is a seq_cst fence and `BAR` the work-group barrier (a traced warp arrives
//! as a whole); `EXIT` ends the lanes of its mask. Every instruction issued is forward progress (a trace
//! has no loops to spin in).

use super::alu::latency_of;
use super::lsu::WarpAccess;
use super::scoreboard::Dst;
use super::warp::Flow;
use super::TraceLaunch;
use super::{lanes, Sm, Stall};
use crate::atomic::LaneAtomic;
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::ir::{BarrierKind, LatencyClass, Ty};
use crate::ordering::{Access, Rule};
use crate::trace::{LaneAddrs, TraceAccess, TraceBlock, TraceInst, TraceMem, TraceOp, TraceSpace};

/// A traced store's data: traces carry no values (one array for all, not zeroed per store).
static NO_VALUES: [u64; 64] = [0; 64];

impl Sm {
    /// Issues the next traced instruction of warp `wi`, if its registers, ordering and the LSU allow.
    pub(super) fn try_issue_trace(
        &mut self,
        wi: usize,
        tl: &TraceLaunch,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(w) = self.warps[wi].as_mut() else {
            return false;
        };
        if w.ready_at > now || w.runnable() == 0 {
            return false;
        }
        let Flow::Stream { next, end } = w.flow else {
            return false;
        };
        if next >= end {
            // The stream ended without an EXIT for these lanes: they are done.
            let live = w.live;
            self.exit_lanes(wi, live, ctx);
            return true;
        }
        let tk = tl.block(w.group_slot);
        let inst = tk.inst(next);
        w.last_pc = next;
        let regs = tk.regs_of(inst);
        if w.scoreboard.wait(regs.iter().copied(), now).is_some() {
            w.set_stall(Stall::RegisterDependency);
            return false;
        }
        let access = Access::of_trace(inst.op);
        let rule = match access {
            Some(a) => match self.gate(wi, a, *lsu_left, now, ctx) {
                Some(r) => Some(r),
                None => return false,
            },
            None => None,
        };
        let invalidate = rule
            .and_then(|r| r.acquire)
            .is_some_and(|a| a.invalidate_l1);
        let w = self.warps[wi].as_mut().expect("checked above");
        let mask = inst.mask as u64 & w.live;
        let ok = match (inst.op, access.zip(rule)) {
            (TraceOp::Compute(class), _) => {
                let lat = self.clock.cycles(latency_of(&self.lat, class));
                for &d in tk.dsts(inst) {
                    w.scoreboard.ready_later(d, now + lat);
                }
                if class == LatencyClass::Branch {
                    w.ready_at = w.ready_at.max(now + lat);
                }
                w.flow.advance(mask);
                true
            }
            (TraceOp::Membar(_), _) => {
                w.flow.advance(mask);
                self.lsu.acquired(invalidate, ctx);
                true
            }
            (TraceOp::Barrier, _) => {
                let live = w.live;
                self.barrier(wi, live, BarrierKind::WorkGroup, invalidate, ctx)
            }
            (TraceOp::Exit, _) => {
                // The lanes of the mask exit here; other lanes (divergent code) go on with the stream,
                // and every lane still live exits when it ends.
                w.flow.advance(mask);
                let exiting = match w.flow {
                    Flow::Stream { next, end } if next >= end => w.live,
                    _ => mask,
                };
                self.exit_lanes(wi, exiting, ctx);
                true
            }
            (TraceOp::Mem(m), Some((a, r))) => {
                self.trace_mem(wi, next, inst, m, a, r, tk, now, ctx)
            }
            (TraceOp::Mem(_), None) => unreachable!("a traced memory instruction has an access"),
        };
        if ok {
            // Counted with the traced mask, so that the statistics equal the trace's counts.
            let is_mem = matches!(inst.op, TraceOp::Mem(_));
            self.issued(wi, inst.mask as u64, is_mem, lsu_left, now, ctx);
            self.notices.progress += 1;
            // The warp reads its next instruction when it is next tried: with hundreds of warps'
            // streams interleaved on the host, a cache miss unless asked for now.
            if let Some(Flow::Stream { next, end }) = self.warps[wi].as_ref().map(|w| &w.flow) {
                tk.prefetch_after(inst, *next, *end);
            }
        }
        ok
    }

    /// A traced memory instruction: its lanes' addresses and width on the modelled paths, no values.
    #[allow(clippy::too_many_arguments)]
    fn trace_mem(
        &mut self,
        wi: usize,
        pc: u32,
        inst: &TraceInst,
        m: TraceMem,
        access: Access,
        rule: Rule,
        tk: &TraceBlock,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let mask = inst.mask as u64;
        let width = m.width as u32;
        let mut addrs = [0u64; 64];
        let line = self.line_bytes as u64;
        // One pass: each lane's address, and the lanes whose access crosses a line (`line` is a
        // power of two, validated: a mask, not a division, on this per-lane path).
        let (shared, base) = (m.space == TraceSpace::Shared, tk.shmem_base);
        let mut crossing = 0u64;
        // The lanes' step, when they are 0, 1, … at one (global addresses: shared ones may have
        // been moved by the base).
        let mut step = None;
        // Shared-memory addresses are windows into the block's allocation from `shmem base_addr`.
        let rebase = |a: u64| if shared && a >= base { a - base } else { a };
        let mut put = |l: usize, a: u64| {
            let a = rebase(a);
            addrs[l] = a;
            crossing |= (((a & (line - 1)) + width as u64 > line) as u64) << l;
        };
        match tk.lane_addrs(inst) {
            // Lanes 0, 1, … all active at a stride (a compressed address list, the common case):
            // lane `l` at `next + l * stride`, without walking the mask.
            LaneAddrs::Strided { next, stride, left } if mask & mask.wrapping_add(1) == 0 => {
                let w = width as u64;
                let offsets = next | stride | if shared { base } else { 0 };
                if w.is_power_of_two() && w <= line && offsets & (w - 1) == 0 {
                    // Every address is a multiple of the width, which divides the line: no lane
                    // crosses one, and the addresses need no test.
                    for (l, a) in addrs.iter_mut().enumerate().take(left as usize) {
                        *a = rebase(next.wrapping_add(stride.wrapping_mul(l as u64)));
                    }
                    step = (!shared).then_some(stride);
                } else {
                    for l in 0..left as usize {
                        put(l, next.wrapping_add(stride.wrapping_mul(l as u64)));
                    }
                }
            }
            listed => {
                for (l, a) in lanes(mask).zip(listed) {
                    put(l, a);
                }
            }
        }
        if crossing != 0 {
            let l = crossing.trailing_zeros() as usize;
            let msg = format!(
                "a {width}-byte access at {:#x} crosses a {line}-byte line (misaligned)",
                addrs[l]
            );
            self.fail(wi, pc, l, msg);
            return true;
        }
        if let Some(w) = self.warps[wi].as_mut() {
            w.last_addr = Some(addrs[mask.trailing_zeros() as usize % 64]);
        }
        let mut a = WarpAccess {
            wi,
            pc,
            mask,
            addrs: &addrs,
            stride: step,
            width,
            dst: Dst::Trace {
                first: inst.regs,
                n: inst.ndst,
            },
            access,
            rule,
            tid0: self.tid0(wi),
        };
        match m.access {
            TraceAccess::Load => self.issue_load(&a, 0, now, ctx),
            TraceAccess::Store => self.issue_store(&a, &NO_VALUES, now, ctx),
            TraceAccess::Atomic { op, returning } => {
                let ty = if width >= 8 { Ty::U64 } else { Ty::U32 };
                let mut all = Vec::with_capacity(mask.count_ones() as usize);
                all.extend(lanes(mask).map(|l| LaneAtomic {
                    lane: l as u8,
                    addr: addrs[l],
                    operand: 0,
                    expected: 0,
                    result: 0,
                }));
                if !returning {
                    a.dst = Dst::None;
                }
                self.issue_atomic(&a, all, op, ty, now, ctx)
            }
        }
    }
}
