//! Kernel instructions: the issue of a SIMT warp's next instruction (scoreboard, then the ordering
//! gate of `issue.rs`) and the execution of every instruction that is not an access — moves, special
//! registers, ALU operations, compares, selects, conversions, branches, fences, barriers, exits,
//! and warp-level exchanges (their lanes' rule: `exchange.rs`).
//! Loads, stores and atomics go to the load/store unit (`lsu/`).

use super::alu::{self, class_of, latency_of};
use super::scoreboard::scoreboard_regs;
use super::warp::Warp;
use super::{lanes, Sm, Stall};
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::ir::eval::{alu, cmp, convert};
use crate::ir::*;
use crate::ordering::{self, Access, Rule};
use crate::races::RaceEvent;

/// The value of operand `o` in lane `lane`, from a warp's registers `regs` (`regs[r * ws + lane]`).
#[inline]
fn operand(regs: &[u64], o: Operand, ws: usize, lane: usize) -> u64 {
    match o {
        Operand::Reg(r) => regs[r as usize * ws + lane],
        Operand::Imm(v) => v,
    }
}

impl Sm {
    /// Issues the instruction at the lowest PC of kernel warp `wi`.
    pub(super) fn try_issue_kernel(
        &mut self,
        wi: usize,
        kernel: &Kernel,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        let Some(w) = self.warps[wi].as_mut() else {
            return false;
        };
        if w.ready_at > now {
            return false;
        }
        let Some((pc, mask)) = w.select() else {
            return false;
        };
        let Some(inst) = kernel.insts.get(pc as usize) else {
            // Falling off the end is an exit.
            self.exit_lanes(wi, mask, ctx);
            return true;
        };
        w.last_pc = pc;
        let (regs, n) = scoreboard_regs(inst);
        if w.scoreboard.wait(regs[..n].iter().copied(), now).is_some() {
            w.set_stall(Stall::RegisterDependency);
            return false;
        }
        let access = Access::of_inst(inst, kernel.semantics);
        let rule = match access {
            Some(a) => match self.gate(wi, a, *lsu_left, now, ctx) {
                Some(r) => Some(r),
                None => return false,
            },
            None => None,
        };
        let issue = access.zip(rule);
        let ok = self.execute(wi, pc, mask, inst, issue, now, ctx);
        if ok {
            let is_mem = access.is_some_and(|a| a.is_memory());
            self.issued(wi, mask, is_mem, lsu_left, now, ctx);
        }
        ok
    }

    /// The value of operand `o` in lane `lane`.
    #[inline]
    pub(super) fn val(&self, w: &Warp, o: Operand, lane: usize) -> u64 {
        operand(w.regs(), o, self.ws as usize, lane)
    }

    #[inline]
    fn latency(&self, c: LatencyClass) -> Time {
        self.clock.cycles(latency_of(&self.lat, c))
    }

    /// Executes one instruction for the lanes in `mask`; `false` if it could not issue (a stall).
    /// `issue`: the access and its rule, for an instruction that has one.
    #[allow(clippy::too_many_arguments)]
    fn execute(
        &mut self,
        wi: usize,
        pc: u32,
        mask: u64,
        inst: &Inst,
        issue: Option<(Access, Rule)>,
        now: Time,
        ctx: &mut Ctx,
    ) -> bool {
        let ws = self.ws as usize;
        let (access, rule) = match issue {
            Some((a, r)) => (Some(a), r),
            None => (None, ordering::relaxed()),
        };
        let invalidate = rule.acquire.is_some_and(|a| a.invalidate_l1);
        match *inst {
            Inst::Mov { dst, src } => {
                let lat = self.latency(LatencyClass::IntAlu);
                let w = self.warps[wi].as_mut().expect("live");
                let regs = w.regs_mut();
                for l in lanes(mask) {
                    regs[dst as usize * ws + l] = operand(regs, src, ws, l);
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::ReadSpecial { dst, which } => {
                let mut vals = [0u64; 64];
                self.specials(wi, mask, which, now, &mut vals);
                let lat = self.latency(LatencyClass::IntAlu);
                let w = self.warps[wi].as_mut().expect("live");
                let row = &mut w.regs_mut()[dst as usize * ws..];
                for l in lanes(mask) {
                    row[l] = vals[l];
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Alu { op, ty, dst, a, b } => {
                let lat = self.latency(class_of(op, ty));
                let w = self.warps[wi].as_mut().expect("live");
                let regs = w.regs_mut();
                for l in lanes(mask) {
                    let (x, y) = (operand(regs, a, ws, l), operand(regs, b, ws, l));
                    match alu(op, ty, x, y) {
                        Some(v) => regs[dst as usize * ws + l] = v,
                        None => {
                            let name = alu::op_name(op);
                            let why = if y & ty.width().mask() == 0 {
                                "integer division by zero"
                            } else {
                                "integer division overflow: the most negative value by -1"
                            };
                            let msg = format!("{why} ({name} {})", ty.name());
                            self.fail(wi, pc, l, msg);
                            return true;
                        }
                    }
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Cmp { op, ty, dst, a, b } => {
                let class = if ty.is_float() {
                    LatencyClass::FpAlu
                } else {
                    LatencyClass::IntAlu
                };
                let lat = self.latency(class);
                let w = self.warps[wi].as_mut().expect("live");
                let regs = w.regs_mut();
                for l in lanes(mask) {
                    let (x, y) = (operand(regs, a, ws, l), operand(regs, b, ws, l));
                    regs[dst as usize * ws + l] = cmp(op, ty, x, y) as u64;
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Select { dst, cond, a, b } => {
                let lat = self.latency(LatencyClass::IntAlu);
                let w = self.warps[wi].as_mut().expect("live");
                let regs = w.regs_mut();
                for l in lanes(mask) {
                    let c = regs[cond as usize * ws + l] != 0;
                    regs[dst as usize * ws + l] = operand(regs, if c { a } else { b }, ws, l);
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Cvt { dst, src, from, to } => {
                let lat = self.latency(LatencyClass::FpAlu);
                let w = self.warps[wi].as_mut().expect("live");
                for l in lanes(mask) {
                    let regs = w.regs_mut();
                    regs[dst as usize * ws + l] = convert(regs[src as usize * ws + l], from, to);
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Math {
                op,
                ty,
                mode,
                dst,
                args,
            } => {
                let lat = self.latency(alu::math_class(op));
                let w = self.warps[wi].as_mut().expect("live");
                let regs = w.regs_mut();
                for l in lanes(mask) {
                    let x = args.map(|a| operand(regs, a, ws, l));
                    regs[dst as usize * ws + l] = crate::ir::math::math(op, ty, mode, x);
                }
                w.scoreboard.ready_later(dst, now + lat);
                w.flow.advance(mask);
            }
            Inst::Compute { class } => {
                let lat = self.latency(class);
                let period = self.clock.period;
                let w = self.warps[wi].as_mut().expect("live");
                w.ready_at = w.ready_at.max(now + lat.min(period));
                w.flow.advance(mask);
            }
            Inst::Branch { target, cond } => {
                let lat = self.latency(LatencyClass::Branch);
                let w = self.warps[wi].as_mut().expect("live");
                w.branch(pc, target, mask, |regs, l| match cond {
                    None => true,
                    Some((r, nz)) => (regs[r as usize * ws + l] != 0) == nz,
                });
                w.ready_at = w.ready_at.max(now + lat);
            }
            Inst::Warp {
                op,
                ty,
                dst,
                pred,
                args,
                members,
            } => {
                let lat = self.clock.cycles(self.lat.warp_exchange() as u64);
                let ws = self.ws;
                let w = self.warps[wi].as_mut().expect("live");
                let x = super::exchange::Exchange {
                    op,
                    ty,
                    dst,
                    pred,
                    args,
                    members,
                };
                let live = w.live;
                if let Err((lane, msg)) = x.run(w.regs_mut(), ws, mask, live) {
                    self.fail(wi, pc, lane, msg);
                    return true;
                }
                w.scoreboard.ready_later(dst, now + lat);
                if let Some(p) = pred {
                    w.scoreboard.ready_later(p, now + lat);
                }
                w.flow.advance(mask);
            }
            Inst::Exit => self.exit_lanes(wi, mask, ctx),
            Inst::Fence { ord, scope, .. } => {
                if self.launch.races {
                    for l in lanes(mask) {
                        let (_, tid) = self.thread_ids(wi, l);
                        self.notices.races.push(RaceEvent::Fence {
                            tid,
                            acquire: ord.is_acquire(),
                            release: ord.is_release(),
                            seq_cst: ord == FenceOrd::SeqCst,
                            scope,
                        });
                    }
                }
                self.warps[wi].as_mut().expect("live").flow.advance(mask);
                self.lsu.acquired(invalidate, ctx);
            }
            Inst::Barrier { kind, .. } => return self.barrier(wi, mask, kind, invalidate, ctx),
            Inst::Load { .. } | Inst::Store { .. } | Inst::Rmw { .. } | Inst::Cas { .. } => {
                let a = access.expect("an access instruction has an access");
                return self.kernel_access(wi, pc, mask, inst, a, rule, now, ctx);
            }
        }
        true
    }
}
