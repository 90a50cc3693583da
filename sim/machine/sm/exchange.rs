//! The SM's side of a warp-level exchange ([`Inst::Warp`]: `shfl.sync`, `vote.sync`, `match.sync`,
//! `redux.sync`, `activemask`): which lanes take part, read from the member masks the executing
//! lanes give, and the exchange itself over the warp's register file (what each lane computes is
//! the IR's, `ir::warp::exchange`). Timing is one result latency for every lane
//! (`sm.latency.warp_exchange`), charged by `exec.rs`.
//!
//! Modelled (PTX ISA §9.7.9.6 `shfl.sync`, §9.7.13.6 `vote.sync`, §9.7.13.7 `match.sync`,
//! §9.7.13.10 `redux.sync`, §9.7.13.9 `activemask`): each executing lane names the lanes it
//! exchanges with (its member mask, in a register or immediate); lanes whose masks are equal form
//! one exchange, so two half-warps with their own masks each exchange among themselves.
//! `activemask` is the lanes executing it (under this SIMT model, the lanes at the warp's PC).
//!
//! Refused at run time, with the instruction's place (the PTX ISA calls each undefined, and a GPU
//! with independent thread scheduling would instead wait for the missing lanes, which this SIMT
//! model does not do): a member mask that names a live lane not executing the instruction
//! (warp-synchronous code after a divergence, or a lane waiting at a barrier), an executing lane
//! outside its own member mask, lanes of one mask that give different masks, and warps other than
//! 32 lanes wide (PTX's lane rules are those of 32-lane warps). Lanes a mask names that are not
//! live (exited, or past the end of a partial last warp) are accepted and take no part: CUDA code
//! shuffles with the full mask in partial warps; a shuffle reading such a lane gets its register as
//! it stands (stated in `ir::warp`).

use super::lanes;
use crate::ir::warp::{exchange, LaneArgs};
use crate::ir::{Operand, Reg, Ty, WarpOp};

/// The fields of one [`Inst::Warp`](crate::ir::Inst::Warp).
pub struct Exchange {
    pub op: WarpOp,
    pub ty: Ty,
    pub dst: Reg,
    pub pred: Option<Reg>,
    pub args: [Operand; 3],
    pub members: Operand,
}

/// The PTX warp width the lane rules are written for.
const PTX_WARP: u32 = 32;

impl Exchange {
    /// Runs the exchange for the executing lanes `mask` of a warp with live lanes `live`, over its
    /// registers `regs` (`regs[r * ws + lane]`). `Err`: a lane and why the exchange is refused.
    pub fn run(
        &self,
        regs: &mut [u64],
        ws: u32,
        mask: u64,
        live: u64,
    ) -> Result<(), (usize, String)> {
        let first = mask.trailing_zeros() as usize;
        if ws != PTX_WARP {
            return Err((
                first,
                format!(
                    "a warp-level exchange needs 32-lane warps (PTX's lane rules); this \
                     configuration's warp size is {ws}"
                ),
            ));
        }
        let w = ws as usize;
        let read = |regs: &[u64], o: Operand, l: usize| match o {
            Operand::Reg(r) => regs[r as usize * w + l],
            Operand::Imm(v) => v,
        };
        let lane_bits = (1u64 << ws) - 1;
        let mut member = [0u64; 64];
        let active = matches!(self.op, WarpOp::ActiveMask);
        for l in lanes(mask) {
            if active {
                member[l] = mask;
                continue;
            }
            member[l] = read(regs, self.members, l) & lane_bits;
            let m = member[l];
            if m >> l & 1 == 0 {
                return Err((
                    l,
                    format!(
                        "{}: lane {l} is not in its own member mask {m:#010x} (undefined in PTX)",
                        self.name()
                    ),
                ));
            }
            let missing = m & live & !mask;
            if missing != 0 {
                let k = missing.trailing_zeros();
                return Err((
                    l,
                    format!(
                        "{}: member mask {m:#010x} names lane {k}, which is live but not executing \
                         this instruction (diverged, or waiting at a barrier): a warp-synchronous \
                         exchange after a divergence is not modelled (the lanes taking part were \
                         {mask:#010x})",
                        self.name()
                    ),
                ));
            }
        }
        let mut a = [0u64; 64];
        let mut b = [0u64; 64];
        let mut c = [0u64; 64];
        for l in 0..w {
            a[l] = read(regs, self.args[0], l);
            b[l] = read(regs, self.args[1], l);
            c[l] = read(regs, self.args[2], l);
        }
        let x = LaneArgs {
            a: &a,
            b: &b,
            c: &c,
        };
        let mut dst = [0u64; 64];
        let mut pred = [0u64; 64];
        let mut left = mask;
        while left != 0 {
            let l = left.trailing_zeros() as usize;
            let m = member[l];
            let part = m & mask;
            if let Some(k) = lanes(part).find(|&k| member[k] != m) {
                return Err((
                    k,
                    format!(
                        "{}: lane {l} gives member mask {m:#010x} but lane {k} in it gives {:#010x} \
                         (undefined in PTX)",
                        self.name(),
                        member[k]
                    ),
                ));
            }
            exchange(self.op, self.ty, part, ws, &x, &mut dst, &mut pred);
            left &= !part;
        }
        for l in lanes(mask) {
            regs[self.dst as usize * w + l] = dst[l];
            if let Some(p) = self.pred {
                regs[p as usize * w + l] = pred[l];
            }
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        match self.op {
            WarpOp::Shfl(_) => "shfl.sync",
            WarpOp::Vote(_) => "vote.sync",
            WarpOp::MatchAny | WarpOp::MatchAll => "match.sync",
            WarpOp::Redux(_) => "redux.sync",
            WarpOp::ActiveMask => "activemask",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ReduxOp, ShflMode, VoteMode};

    const WS: usize = 32;
    const FULL: u64 = 0xFFFF_FFFF;

    /// Registers: r0 = 100 + lane, r1 = the member mask each lane gives, r2/r3 results.
    fn regs(masks: impl Fn(usize) -> u64) -> Vec<u64> {
        let mut r = vec![0u64; 4 * WS];
        for l in 0..WS {
            r[l] = 100 + l as u64;
            r[WS + l] = masks(l);
        }
        r
    }

    fn shfl_down(d: u64) -> Exchange {
        Exchange {
            op: WarpOp::Shfl(ShflMode::Down),
            ty: Ty::U32,
            dst: 2,
            pred: Some(3),
            args: [Operand::Reg(0), Operand::Imm(d), Operand::Imm(0x1F)],
            members: Operand::Reg(1),
        }
    }

    #[test]
    fn a_full_warp_shuffles_and_every_lane_gets_its_source_and_range() {
        let mut r = regs(|_| FULL);
        shfl_down(1).run(&mut r, 32, FULL, FULL).unwrap();
        assert_eq!(r[2 * WS], 101);
        assert_eq!((r[2 * WS + 30], r[3 * WS + 30]), (131, 1));
        assert_eq!(
            (r[2 * WS + 31], r[3 * WS + 31]),
            (131, 0),
            "out of range: own value"
        );
    }

    #[test]
    fn lanes_past_a_partial_warp_may_be_named_and_take_no_part() {
        let live = (1u64 << 20) - 1;
        let mut r = regs(|_| FULL);
        let x = Exchange {
            op: WarpOp::Vote(VoteMode::Ballot),
            ty: Ty::U32,
            dst: 2,
            pred: None,
            args: [Operand::Imm(1), Operand::Imm(0), Operand::Imm(0)],
            members: Operand::Imm(FULL),
        };
        x.run(&mut r, 32, live, live).unwrap();
        assert_eq!(r[2 * WS + 5], live, "only the live lanes vote");
    }

    #[test]
    fn a_mask_naming_a_diverged_live_lane_is_refused() {
        let mut r = regs(|_| FULL);
        let (lane, msg) = shfl_down(1).run(&mut r, 32, 0xFFFF, FULL).unwrap_err();
        assert_eq!(lane, 0);
        assert!(
            msg.contains("names lane 16, which is live but not executing"),
            "{msg}"
        );
        assert_eq!(r[2 * WS], 0, "nothing written");
    }

    #[test]
    fn half_warps_with_their_own_masks_exchange_among_themselves() {
        let lo = 0xFFFFu64;
        let mut r = regs(|l| if l < 16 { lo } else { lo << 16 });
        let x = Exchange {
            op: WarpOp::Redux(ReduxOp::Max),
            ty: Ty::U32,
            dst: 2,
            pred: None,
            args: [Operand::Reg(0), Operand::Imm(0), Operand::Imm(0)],
            members: Operand::Reg(1),
        };
        x.run(&mut r, 32, FULL, FULL).unwrap();
        assert_eq!((r[2 * WS], r[2 * WS + 16]), (115, 131));
    }

    #[test]
    fn inconsistent_masks_and_a_lane_outside_its_own_mask_are_refused() {
        let mut r = regs(|l| if l == 3 { 0xF0 } else { FULL });
        let (lane, msg) = shfl_down(1).run(&mut r, 32, FULL, FULL).unwrap_err();
        assert_eq!(lane, 3);
        assert!(msg.contains("not in its own member mask"), "{msg}");
        let mut r = regs(|l| if l == 3 { 0x0F } else { FULL });
        let (_, msg) = shfl_down(1).run(&mut r, 32, FULL, FULL).unwrap_err();
        assert!(msg.contains("gives member mask"), "{msg}");
    }

    #[test]
    fn activemask_is_the_executing_lanes_and_other_warp_widths_are_refused() {
        let mut r = regs(|_| 0);
        let x = Exchange {
            op: WarpOp::ActiveMask,
            ty: Ty::U32,
            dst: 2,
            pred: None,
            args: [Operand::Imm(0); 3],
            members: Operand::Imm(0),
        };
        x.run(&mut r, 32, 0b1010, FULL).unwrap();
        assert_eq!((r[2 * WS + 1], r[2 * WS + 3]), (0b1010, 0b1010));
        let mut r = vec![0u64; 4 * 64];
        let (_, msg) = x.run(&mut r, 64, 1, u64::MAX).unwrap_err();
        assert!(msg.contains("warp size is 64"), "{msg}");
    }
}
