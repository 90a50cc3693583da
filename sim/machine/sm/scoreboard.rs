//! The register scoreboard of a warp: when each register's pending result is ready.
//!
//! An instruction issues when its source registers are ready and no result is pending for its
//! destination (so results are written in order). An ALU result is ready its class's latency after
//! issue; a memory result when the instruction completes (until then the register waits forever,
//! [`NEVER`]). A warp that found a register not ready is skipped by the schedulers until that time
//! (`blocked_until`): trying it earlier would fail the same way, with no other effect.
//!
//! Not modelled: register-file banks and operand collectors.

use super::launch::Program;
use super::NEVER;
use crate::engine::Time;
use crate::ir::{Inst, Operand, Reg};

/// Where a memory instruction's result goes.
#[derive(Debug, Clone, Copy)]
pub enum Dst {
    None,
    /// A kernel register, written with each lane's value.
    Reg(Reg),
    /// Traced destination registers: the first `n` registers of the instruction whose key
    /// (`trace::TraceInst::regs`) is `first`: timing only.
    Trace {
        first: u32,
        n: u8,
    },
}

impl Dst {
    /// The registers the result goes to.
    #[inline]
    pub fn regs(self, program: &Program) -> impl Iterator<Item = u16> + '_ {
        let (one, list): (Option<u16>, &[u16]) = match (self, program) {
            (Dst::Reg(r), _) => (Some(r), &[]),
            (Dst::Trace { first, n }, Program::Trace { kernel }) => {
                (None, kernel.regs_by_key(first, n as usize))
            }
            _ => (None, &[]),
        };
        one.into_iter().chain(list.iter().copied())
    }
}

/// Entries past which [`Scoreboard::wait`] drops the registers already ready.
const PRUNE_AT: usize = 16;

pub struct Scoreboard {
    /// The registers whose result may not be ready yet, with when it is ([`NEVER`]: when a memory
    /// result returns); every other register is ready. A short list (the results a warp has in
    /// flight), read in a cache line or two, where an array of every register's time was a cache
    /// miss on the host per check for a machine full of warps.
    waiting: Vec<(u16, Time)>,
    /// The next instruction waits for a register until this time ([`NEVER`]: until a memory result
    /// returns); 0 when not known to wait.
    pub blocked_until: Time,
    /// While `blocked_until` is [`NEVER`]: a register whose memory result the next instruction
    /// waits for. Only its result can let the instruction issue; other results returning leave
    /// the warp blocked (trying it would fail the same way).
    blocked_on: u16,
}

impl Scoreboard {
    /// A scoreboard for `regs` registers (all ready).
    pub fn new(regs: usize) -> Scoreboard {
        Scoreboard {
            waiting: Vec::with_capacity(regs.min(8)),
            blocked_until: 0,
            blocked_on: 0,
        }
    }

    /// When register `r`'s result is ready (0: it is).
    #[inline]
    fn ready_at(&self, r: u16) -> Time {
        self.waiting
            .iter()
            .find(|&&(x, _)| x == r)
            .map_or(0, |&(_, t)| t)
    }

    /// Register `r`'s result is ready at `t`.
    #[inline]
    fn set(&mut self, r: u16, t: Time) {
        match self.waiting.iter_mut().find(|(x, _)| *x == r) {
            Some(e) => e.1 = t,
            None => self.waiting.push((r, t)),
        }
    }

    /// `None` when every register in `regs` is ready at `now`, else the latest time one is ready
    /// (the warp is then blocked until it).
    #[inline]
    pub fn wait(&mut self, regs: impl Iterator<Item = u16>, now: Time) -> Option<Time> {
        if self.waiting.is_empty() {
            return None;
        }
        if self.waiting.len() > PRUNE_AT {
            // A warp that keeps issuing never reaches `next_ready`, which drops what is ready:
            // drop it here, so that the list stays short (ready and absent are the same).
            self.waiting.retain(|&(_, t)| t > now);
        }
        let (mut t, mut on) = (0, 0);
        for r in regs {
            let rt = self.ready_at(r);
            if rt > t {
                (t, on) = (rt, r);
            }
        }
        if t <= now {
            return None;
        }
        self.blocked_until = t;
        self.blocked_on = on;
        Some(t)
    }

    /// Register `r` becomes ready at `t` (a result latency from now).
    #[inline]
    pub fn ready_later(&mut self, r: u16, t: Time) {
        self.set(r, t);
    }

    /// The result for `regs` comes from memory: they wait until it returns.
    #[inline]
    pub fn pending(&mut self, regs: impl Iterator<Item = u16>) {
        for r in regs {
            self.set(r, NEVER);
        }
    }

    /// A memory result arrived: `regs` are ready (at `now`, which no later check precedes). A warp
    /// blocked on one of them is tried again; one blocked until a time, or on another memory
    /// result, stays blocked.
    #[inline]
    pub fn written(&mut self, regs: impl Iterator<Item = u16>, _now: Time) {
        for r in regs {
            if self.blocked_until == NEVER && r == self.blocked_on {
                self.unblock();
            }
            if let Some(i) = self.waiting.iter().position(|&(x, _)| x == r) {
                self.waiting.swap_remove(i);
            }
        }
    }

    /// The warp may be tried again (its blocking register may have become ready).
    #[inline]
    pub fn unblock(&mut self) {
        self.blocked_until = 0;
    }

    /// [`Scoreboard::next_ready`] without dropping anything (a check's view).
    pub fn earliest_after(&self, now: Time) -> Time {
        self.waiting
            .iter()
            .map(|&(_, t)| t)
            .filter(|&t| t > now && t != NEVER)
            .min()
            .unwrap_or(NEVER)
    }

    /// The earliest finite time after `now` at which a register becomes ready, dropping the
    /// registers that are ready by `now`.
    #[inline]
    pub fn next_ready(&mut self, now: Time) -> Time {
        // One pass: [`Scoreboard::earliest_after`] over the registers it keeps (the schedulers'
        // debug check compares the two at every tick).
        let mut wake = NEVER;
        self.waiting.retain(|&(_, t)| {
            if t > now && t != NEVER {
                wake = wake.min(t);
            }
            t > now
        });
        wake
    }
}

/// The registers an instruction's scoreboard check reads: its register sources and its destination
/// (no pending write to it may be outstanding).
#[inline]
pub fn scoreboard_regs(inst: &Inst) -> ([Reg; 6], usize) {
    let mut out = [0; 6];
    let mut n = 0;
    let mut reg = |r: Reg| {
        out[n] = r;
        n += 1;
    };
    let op = |o: Operand, reg: &mut dyn FnMut(Reg)| {
        if let Operand::Reg(r) = o {
            reg(r);
        }
    };
    match *inst {
        Inst::Mov { dst, src } => {
            op(src, &mut reg);
            reg(dst);
        }
        Inst::ReadSpecial { dst, .. } => reg(dst),
        Inst::Alu { dst, a, b, .. } | Inst::Cmp { dst, a, b, .. } => {
            op(a, &mut reg);
            op(b, &mut reg);
            reg(dst);
        }
        Inst::Math { dst, args, .. } => {
            for a in args {
                op(a, &mut reg);
            }
            reg(dst);
        }
        Inst::Select { dst, cond, a, b } => {
            reg(cond);
            op(a, &mut reg);
            op(b, &mut reg);
            reg(dst);
        }
        Inst::Cvt { dst, src, .. } => {
            reg(src);
            reg(dst);
        }
        Inst::Branch { cond, .. } => {
            if let Some((r, _)) = cond {
                reg(r);
            }
        }
        Inst::Load { dst, addr, .. } => {
            op(addr.base, &mut reg);
            reg(dst);
        }
        Inst::Store { addr, src, .. } => {
            op(addr.base, &mut reg);
            op(src, &mut reg);
        }
        Inst::Rmw {
            dst, addr, operand, ..
        } => {
            op(addr.base, &mut reg);
            op(operand, &mut reg);
            if let Some(d) = dst {
                reg(d);
            }
        }
        Inst::Cas {
            dst,
            addr,
            expected,
            desired,
            ..
        } => {
            op(addr.base, &mut reg);
            op(expected, &mut reg);
            op(desired, &mut reg);
            if let Some(d) = dst {
                reg(d);
            }
        }
        Inst::Barrier {
            kind:
                crate::ir::BarrierKind::Named(crate::ir::CtaBarrier {
                    op: crate::ir::BarrierOp::Reduce { dst, pred, .. },
                    ..
                }),
            ..
        } => {
            reg(pred);
            reg(dst);
        }
        Inst::Warp {
            dst,
            pred,
            args,
            members,
            ..
        } => {
            for a in args {
                op(a, &mut reg);
            }
            op(members, &mut reg);
            reg(dst);
            if let Some(p) = pred {
                reg(p);
            }
        }
        Inst::Fence { .. } | Inst::Barrier { .. } | Inst::Compute { .. } | Inst::Exit => {}
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AluOp, Ty};

    #[test]
    fn a_result_blocks_its_readers_until_its_latency_has_passed() {
        let mut s = Scoreboard::new(4);
        s.ready_later(1, 100);
        assert_eq!(
            s.wait([0u16].into_iter(), 50),
            None,
            "r0 has no pending result"
        );
        assert_eq!(s.wait([0u16, 1].into_iter(), 50), Some(100));
        assert_eq!(s.blocked_until, 100);
        assert_eq!(s.wait([1u16].into_iter(), 100), None, "ready at 100");
        assert_eq!(s.next_ready(50), 100);
        assert_eq!(s.next_ready(100), NEVER, "ready by now: no longer timed");
    }

    #[test]
    fn only_the_awaited_memory_result_unblocks_the_warp() {
        let mut s = Scoreboard::new(4);
        s.pending([1u16, 2].into_iter());
        s.ready_later(3, 100);
        assert_eq!(s.wait([2u16, 3].into_iter(), 50), Some(NEVER));
        s.written([1u16].into_iter(), 60);
        assert_eq!(s.blocked_until, NEVER, "r1 is not what the warp waits for");
        s.written([2u16].into_iter(), 70);
        assert_eq!(s.blocked_until, 0, "r2 is: the warp is tried again");
        assert_eq!(s.wait([2u16, 3].into_iter(), 70), Some(100));
        s.written([1u16].into_iter(), 80);
        assert_eq!(s.blocked_until, 100, "a timed block stays until its time");
    }

    #[test]
    fn a_memory_result_blocks_until_written_and_unblocks_the_warp() {
        let mut s = Scoreboard::new(4);
        s.pending([2u16].into_iter());
        assert_eq!(s.wait([2u16].into_iter(), 1_000_000), Some(NEVER));
        assert_eq!(
            s.next_ready(0),
            NEVER,
            "no timed wake-up: the response wakes the SM"
        );
        s.written([2u16].into_iter(), 500);
        assert_eq!(s.blocked_until, 0);
        assert_eq!(s.wait([2u16].into_iter(), 500), None);
    }

    #[test]
    fn a_long_run_of_results_keeps_the_list_short_and_the_answers_the_same() {
        let mut s = Scoreboard::new(64);
        // Results for 40 registers, each ready 4 after its issue, one issue per 1 time unit.
        for r in 0..40u16 {
            let now = r as Time;
            assert_eq!(
                s.wait([r.saturating_sub(1)].into_iter(), now),
                Some(now + 3).filter(|_| r > 0)
            );
            s.ready_later(r, now + 4);
        }
        assert!(
            s.waiting.len() <= PRUNE_AT + 1,
            "{} entries",
            s.waiting.len()
        );
        assert_eq!(s.wait([39u16].into_iter(), 42), Some(43));
        assert_eq!(s.wait([10u16].into_iter(), 42), None, "long ready");
        assert_eq!(s.wait([38u16].into_iter(), 42), None, "ready at 42");
    }

    #[test]
    fn an_instruction_waits_for_its_sources_and_its_destination() {
        let add = Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U32,
            dst: 3,
            a: Operand::Reg(1),
            b: Operand::Imm(7),
        };
        let (regs, n) = scoreboard_regs(&add);
        assert_eq!(&regs[..n], &[1, 3]);
    }
}
