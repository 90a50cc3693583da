//! Register liveness and loop headers of one litmus thread's code, for the interpreter's spin-loop
//! reduction (`interp.rs`): an iteration that ends at its loop header with no write or barrier and
//! with every *live* register as it was at the start (value and dependencies) can be left out of an
//! execution without changing its outcome, so such paths are not enumerated again.
//!
//! Liveness is the classic backward data-flow fixpoint over the thread's control-flow graph; at the
//! end of the thread the registers the final condition reads are live.

use crate::ir::{Address, Inst, Operand, Reg};

/// Registers as a bit set (one bit per register).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegSet(Vec<u64>);

impl RegSet {
    pub fn new(n: usize) -> RegSet {
        RegSet(vec![0; n.div_ceil(64)])
    }
    pub fn insert(&mut self, r: Reg) {
        self.0[r as usize / 64] |= 1 << (r % 64);
    }
    pub fn remove(&mut self, r: Reg) {
        self.0[r as usize / 64] &= !(1 << (r % 64));
    }
    #[cfg(test)]
    pub fn contains(&self, r: Reg) -> bool {
        self.0[r as usize / 64] >> (r % 64) & 1 == 1
    }
    fn union_with(&mut self, o: &RegSet) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }
    pub fn iter(&self) -> impl Iterator<Item = Reg> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| (w * 64 + b) as Reg)
        })
    }
}

/// The successors of instruction `pc` (`len` = the end of the thread).
pub fn successors(insts: &[Inst], pc: usize) -> Vec<usize> {
    match insts[pc] {
        Inst::Exit => vec![],
        Inst::Branch { target, cond: None } => vec![target as usize],
        Inst::Branch {
            target,
            cond: Some(_),
        } => vec![pc + 1, target as usize],
        _ => vec![pc + 1],
    }
}

fn operand(o: Operand, out: &mut Vec<Reg>) {
    if let Operand::Reg(r) = o {
        out.push(r);
    }
}

fn address(a: Address, out: &mut Vec<Reg>) {
    operand(a.base, out);
}

/// Registers an instruction reads and the one it writes.
pub fn uses_defs(inst: &Inst) -> (Vec<Reg>, Option<Reg>) {
    let mut u = Vec::new();
    let d = match *inst {
        Inst::Mov { dst, src } => {
            operand(src, &mut u);
            Some(dst)
        }
        Inst::ReadSpecial { dst, .. } => Some(dst),
        Inst::Alu { dst, a, b, .. } | Inst::Cmp { dst, a, b, .. } => {
            operand(a, &mut u);
            operand(b, &mut u);
            Some(dst)
        }
        Inst::Math { dst, args, .. } => {
            for a in args {
                operand(a, &mut u);
            }
            Some(dst)
        }
        Inst::Select { dst, cond, a, b } => {
            u.push(cond);
            operand(a, &mut u);
            operand(b, &mut u);
            Some(dst)
        }
        Inst::Cvt { dst, src, .. } => {
            u.push(src);
            Some(dst)
        }
        Inst::Branch { cond, .. } => {
            if let Some((r, _)) = cond {
                u.push(r);
            }
            None
        }
        Inst::Load { dst, addr, .. } => {
            address(addr, &mut u);
            Some(dst)
        }
        Inst::Store { addr, src, .. } => {
            address(addr, &mut u);
            operand(src, &mut u);
            None
        }
        Inst::Rmw {
            dst,
            addr,
            operand: o,
            ..
        } => {
            address(addr, &mut u);
            operand(o, &mut u);
            dst
        }
        Inst::Cas {
            dst,
            addr,
            expected,
            desired,
            ..
        } => {
            address(addr, &mut u);
            operand(expected, &mut u);
            operand(desired, &mut u);
            dst
        }
        Inst::Barrier {
            kind:
                crate::ir::BarrierKind::Named(crate::ir::CtaBarrier {
                    op: crate::ir::BarrierOp::Reduce { dst, pred, .. },
                    ..
                }),
            ..
        } => {
            u.push(pred);
            Some(dst)
        }
        Inst::Warp {
            dst, args, members, ..
        } => {
            for a in args {
                operand(a, &mut u);
            }
            operand(members, &mut u);
            Some(dst)
        }
        Inst::Fence { .. } | Inst::Barrier { .. } | Inst::Compute { .. } | Inst::Exit => None,
    };
    (u, d)
}

/// The registers live on entry to each instruction (index `len`: the end of the thread, where
/// `at_exit` are live). An `Exit` also has `at_exit` live.
pub fn live_in(insts: &[Inst], nregs: usize, at_exit: &RegSet) -> Vec<RegSet> {
    let n = insts.len();
    let mut live = vec![RegSet::new(nregs); n + 1];
    live[n] = at_exit.clone();
    let ud: Vec<_> = insts.iter().map(uses_defs).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let mut out = RegSet::new(nregs);
            if matches!(insts[pc], Inst::Exit) {
                out.union_with(at_exit);
            }
            for s in successors(insts, pc) {
                out.union_with(&live[s.min(n)]);
            }
            let (uses, def) = &ud[pc];
            if let Some(d) = def {
                out.remove(*d);
            }
            for &r in uses {
                out.insert(r);
            }
            changed |= live[pc].union_with(&out);
        }
    }
    live
}

/// Targets of backward branches (loop headers), as a flag per instruction.
pub fn loop_headers(insts: &[Inst]) -> Vec<bool> {
    let mut h = vec![false; insts.len() + 1];
    for (pc, i) in insts.iter().enumerate() {
        if let Inst::Branch { target, .. } = *i {
            if target as usize <= pc {
                h[target as usize] = true;
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::*;

    #[test]
    fn a_spin_loop_register_is_dead_at_the_header() {
        // L: r1 = ld [r0]; t = (r1 == 0); @t bra L; r2 = r1
        let addr = Address {
            base: Operand::Reg(0),
            offset: 0,
        };
        let insts = vec![
            Inst::Load {
                dst: 1,
                space: Space::Global,
                addr,
                ty: Ty::I32,
                ord: LoadOrd::Acquire,
                scope: Scope::Device,
            },
            Inst::Cmp {
                op: CmpOp::Eq,
                ty: Ty::I32,
                dst: 3,
                a: Operand::Reg(1),
                b: Operand::Imm(0),
            },
            Inst::Branch {
                target: 0,
                cond: Some((3, true)),
            },
            Inst::Mov {
                dst: 2,
                src: Operand::Reg(1),
            },
        ];
        let mut exit = RegSet::new(4);
        exit.insert(2);
        let live = live_in(&insts, 4, &exit);
        assert!(live[0].contains(0));
        assert!(!live[0].contains(1) && !live[0].contains(3));
        assert!(live[3].contains(1));
        assert_eq!(loop_headers(&insts), vec![true, false, false, false, false]);
    }
}
