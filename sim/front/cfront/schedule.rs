//! Instruction scheduling of a lowered kernel, as a compiler does it before the hardware sees the
//! code: within each basic block, every instruction moves up to just after the last instruction it
//! depends on, so that independent loads issue back to back instead of each waiting for the use of
//! the one before (an in-order SM stalls at the first use of a value still in flight).
//!
//! What may move: register-only instructions (moves, arithmetic except division and remainder,
//! compares, selects, conversions, id reads) past anything but a clock read; plain (non-atomic)
//! loads past register-only instructions (loads keep their order among themselves). What never moves, and what nothing
//! moves past in memory: stores, atomics, fences, barriers, atomic loads, clock reads, branches and
//! exits (and nothing passes a warp-level exchange) — so the order of every access that synchronises, and of every store, is the source
//! order, and a plain load never passes a store (C11 §5.1.2.4 allows reordering plain loads of a
//! data-race-free program; a racy program keeps its loads on the same side of every store).
//!
//! Kernels only: a litmus thread is run exactly as written.

use crate::ir::*;

/// What an instruction is, for scheduling.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads and writes registers only.
    Pure,
    /// A plain load.
    PlainLoad,
    /// Stays where it is, and is a wall for memory.
    Fixed,
}

fn kind(i: &Inst) -> Kind {
    match i {
        Inst::Mov { .. } | Inst::Cmp { .. } | Inst::Select { .. } | Inst::Cvt { .. } => Kind::Pure,
        Inst::ReadSpecial { which, .. } if *which != Special::Clock => Kind::Pure,
        Inst::Alu { op, .. } if !matches!(op, AluOp::Div | AluOp::Rem) => Kind::Pure,
        Inst::Load {
            ord: LoadOrd::Plain,
            ..
        } => Kind::PlainLoad,
        _ => Kind::Fixed,
    }
}

fn op_reg(o: &Operand) -> Option<Reg> {
    match o {
        Operand::Reg(r) => Some(*r),
        Operand::Imm(_) => None,
    }
}

/// The registers an instruction reads and the one it writes.
type RegUse = (Vec<Reg>, Option<Reg>);

fn regs(i: &Inst) -> RegUse {
    let mut rd = Vec::new();
    let mut add = |o: &Operand| rd.extend(op_reg(o));
    let wr = match i {
        Inst::Mov { dst, src } => {
            add(src);
            Some(*dst)
        }
        Inst::ReadSpecial { dst, .. } => Some(*dst),
        Inst::Alu { dst, a, b, .. } | Inst::Cmp { dst, a, b, .. } => {
            add(a);
            add(b);
            Some(*dst)
        }
        Inst::Math { dst, args, .. } => {
            args.iter().for_each(&mut add);
            Some(*dst)
        }
        Inst::Select { dst, cond, a, b } => {
            add(a);
            add(b);
            rd.push(*cond);
            Some(*dst)
        }
        Inst::Cvt { dst, src, .. } => {
            rd.push(*src);
            Some(*dst)
        }
        Inst::Load { dst, addr, .. } => {
            add(&addr.base);
            Some(*dst)
        }
        Inst::Store { addr, src, .. } => {
            add(&addr.base);
            add(src);
            None
        }
        Inst::Rmw {
            dst, addr, operand, ..
        } => {
            add(&addr.base);
            add(operand);
            *dst
        }
        Inst::Cas {
            dst,
            addr,
            expected,
            desired,
            ..
        } => {
            add(&addr.base);
            add(expected);
            add(desired);
            *dst
        }
        Inst::Branch { cond, .. } => {
            rd.extend(cond.map(|c| c.0));
            None
        }
        Inst::Barrier {
            kind:
                BarrierKind::Named(CtaBarrier {
                    op: BarrierOp::Reduce { dst, pred, .. },
                    ..
                }),
            ..
        } => {
            rd.push(*pred);
            Some(*dst)
        }
        Inst::Warp {
            dst, args, members, ..
        } => {
            args.iter().for_each(&mut add);
            add(members);
            Some(*dst)
        }
        Inst::Fence { .. } | Inst::Barrier { .. } | Inst::Compute { .. } | Inst::Exit => None,
    };
    (rd, wr)
}

/// Whether instruction `a` (later in the block) depends on `b` through a register.
fn depends(a: &RegUse, b: &RegUse) -> bool {
    let (ra, wa) = a;
    let (rb, wb) = b;
    wb.is_some_and(|w| ra.contains(&w)) || wa.is_some_and(|w| rb.contains(&w) || Some(w) == *wb)
}

/// Schedules `insts` (and their `locs`) block by block; branch targets stay valid because only the
/// order inside a block changes.
pub fn schedule(insts: &mut Vec<Inst>, locs: &mut Vec<SrcLoc>) {
    let n = insts.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    for (i, inst) in insts.iter().enumerate() {
        match inst {
            Inst::Branch { target, .. } => {
                leader[(*target as usize).min(n)] = true;
                leader[i + 1] = true;
            }
            Inst::Exit => leader[i + 1] = true,
            _ => {}
        }
    }
    let info: Vec<(Kind, RegUse)> = insts.iter().map(|i| (kind(i), regs(i))).collect();
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        if leader[i] {
            start = order.len();
        }
        let (k, r) = &info[i];
        let mut p = order.len();
        if *k != Kind::Fixed {
            while p > start {
                let j = order[p - 1];
                let (kj, rj) = &info[j];
                // Loads keep their source order; a pure instruction passes anything but a clock read.
                let passable = match (k, kj) {
                    (Kind::PlainLoad, Kind::Pure) => true,
                    (Kind::PlainLoad, _) => false,
                    // A warp exchange writes two registers (`regs` records one): nothing passes it.
                    (_, Kind::Fixed) => !matches!(
                        insts[j],
                        Inst::ReadSpecial {
                            which: Special::Clock,
                            ..
                        } | Inst::Warp { .. }
                    ),
                    _ => true,
                };
                if !passable || depends(r, rj) {
                    break;
                }
                p -= 1;
            }
        }
        order.insert(p, i);
    }
    let old_insts = std::mem::take(insts);
    let old_locs = std::mem::take(locs);
    let mut slots: Vec<Option<(Inst, SrcLoc)>> =
        old_insts.into_iter().zip(old_locs).map(Some).collect();
    for i in order {
        let (inst, loc) = slots[i].take().expect("each instruction once");
        insts.push(inst);
        locs.push(loc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_loads_issue_before_the_first_use_and_stores_stay_in_order() {
        let ld = |dst, base| Inst::Load {
            dst,
            space: Space::Global,
            addr: Address {
                base: Operand::Reg(base),
                offset: 0,
            },
            ty: Ty::F32,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
        };
        let sub = |dst, a| Inst::Alu {
            op: AluOp::Sub,
            ty: Ty::F32,
            dst,
            a: Operand::Reg(a),
            b: Operand::Imm(0),
        };
        let add = |dst, a| Inst::Alu {
            op: AluOp::Add,
            ty: Ty::U64,
            dst,
            a: Operand::Reg(a),
            b: Operand::Imm(4),
        };
        let st = |base, src| Inst::Store {
            space: Space::Global,
            addr: Address {
                base: Operand::Reg(base),
                offset: 0,
            },
            src: Operand::Reg(src),
            ty: Ty::F32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        };
        // ld r1,[r0]; sub r2,r1; add r3,r0; ld r4,[r3]; st [r0],r2; ld r5,[r3]
        let mut v = vec![ld(1, 0), sub(2, 1), add(3, 0), ld(4, 3), st(0, 2), ld(5, 3)];
        let mut l = vec![SrcLoc::default(); v.len()];
        schedule(&mut v, &mut l);
        // The address add and the second load move above the use of the first load; the load
        // after the store stays after it.
        assert_eq!(
            v,
            vec![add(3, 0), ld(1, 0), ld(4, 3), sub(2, 1), st(0, 2), ld(5, 3)]
        );
    }
}
