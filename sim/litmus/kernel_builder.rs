//! The one IR builder of the litmus launch lowerings: the simulator's (`lower.rs`) and the
//! physical-GPU harness's (`gpumemsim_device::litmus`) build their launch kernels with it.
//!
//! What both share, and so lives here: registers allocated by name (the locations' base addresses
//! first, `&x`, as the launch's parameters; then each lowering's named temporaries; then every test
//! thread's registers, `P0:r0`), instructions with their source locations, the entry branches that
//! send a work-item to its test thread's code, the per-thread emission (address registers through
//! the lowering's own layout, initial registers, the thread's body moved to its place by
//! [`relocate`]), the location buffers and parameters, and the final state of one instance read back
//! from raw values ([`final_state`]). What differs stays with each lowering: which instance a
//! work-item runs and where its copies of the locations are (the simulator's `Plan`, the harness's
//! role and slot tables), stress, and how observed registers are read (the simulator captures them at
//! retirement; the harness stores them to a buffer).
//!
//! Does not model anything: it only writes IR.

use super::cond::Var;
use super::test::{Dialect, LitmusTest, Location, RegInit};
use crate::ir::*;
use crate::workload::{Buffer, Init, Param, ParamValue};

/// A branch whose target is set later ([`KernelBuilder::set_target`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct Fixup(usize);

/// A launch kernel under construction.
pub struct KernelBuilder<'t> {
    test: &'t LitmusTest,
    insts: Vec<Inst>,
    locs: Vec<SrcLoc>,
    names: Vec<String>,
    bases: Vec<Reg>,
}

/// The first register of each test thread's registers when they start at `first` (in thread order).
pub fn thread_bases(test: &LitmusTest, first: Reg) -> Vec<Reg> {
    let mut base = first;
    test.threads
        .iter()
        .map(|t| {
            let b = base;
            base += t.regs.len() as Reg;
            b
        })
        .collect()
}

impl<'t> KernelBuilder<'t> {
    /// A kernel whose registers `0..locations` hold the locations' buffer addresses.
    pub fn new(test: &'t LitmusTest) -> KernelBuilder<'t> {
        KernelBuilder {
            test,
            insts: Vec::new(),
            locs: Vec::new(),
            names: test
                .locations
                .iter()
                .map(|l| format!("&{}", l.name))
                .collect(),
            bases: Vec::new(),
        }
    }

    /// The register holding location `l`'s buffer address.
    pub fn location(&self, l: usize) -> Reg {
        l as Reg
    }

    /// A new register named `name`.
    pub fn reg(&mut self, name: &str) -> Reg {
        debug_assert!(
            self.bases.is_empty(),
            "temporaries come before the threads' registers"
        );
        self.names.push(name.to_string());
        (self.names.len() - 1) as Reg
    }

    /// Allocates every test thread's registers (after everything allocated so far); their bases.
    pub fn thread_regs(&mut self) -> Vec<Reg> {
        self.bases = thread_bases(self.test, self.names.len() as Reg);
        for t in &self.test.threads {
            self.names
                .extend(t.regs.iter().map(|r| format!("{}:{}", t.name, r.name)));
        }
        self.bases.clone()
    }

    /// Index of the next instruction.
    pub fn here(&self) -> u32 {
        self.insts.len() as u32
    }

    pub fn push(&mut self, at: SrcLoc, inst: Inst) {
        self.insts.push(inst);
        self.locs.push(at);
    }

    pub fn alu(&mut self, at: SrcLoc, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) {
        self.push(at, Inst::Alu { op, ty, dst, a, b });
    }

    /// `dst = src · factor` (64-bit): a shift for a power of two, a multiplication otherwise.
    pub fn scale(&mut self, at: SrcLoc, dst: Reg, src: Reg, factor: u64) {
        if factor.is_power_of_two() {
            let shift = factor.trailing_zeros() as u64;
            self.alu(
                at,
                AluOp::Shl,
                Ty::U64,
                dst,
                Operand::Reg(src),
                Operand::Imm(shift),
            );
        } else {
            self.alu(
                at,
                AluOp::Mul,
                Ty::U64,
                dst,
                Operand::Reg(src),
                Operand::Imm(factor),
            );
        }
    }

    /// `dst = a == b` of type `ty`.
    pub fn eq(&mut self, at: SrcLoc, ty: Ty, dst: Reg, a: Reg, b: u64) {
        self.push(
            at,
            Inst::Cmp {
                op: CmpOp::Eq,
                ty,
                dst,
                a: Operand::Reg(a),
                b: Operand::Imm(b),
            },
        );
    }

    /// A branch taken when `cond` is non-zero, its target set later.
    pub fn branch_if(&mut self, at: SrcLoc, cond: Reg) -> Fixup {
        let f = Fixup(self.insts.len());
        self.push(
            at,
            Inst::Branch {
                target: 0,
                cond: Some((cond, true)),
            },
        );
        f
    }

    pub fn set_target(&mut self, f: Fixup, to: u32) {
        match &mut self.insts[f.0] {
            Inst::Branch { target, .. } => *target = to,
            other => unreachable!("a fixup names a branch, not {other:?}"),
        }
    }

    /// Per test thread `i`: `flag = key == key_of(i)` (of type `ty`) and a branch to the thread's
    /// entry when it holds; the entries are set with [`Self::set_target`].
    pub fn thread_entries(
        &mut self,
        ty: Ty,
        flag: Reg,
        key: Reg,
        key_of: impl Fn(usize) -> u64,
    ) -> Vec<Fixup> {
        let test = self.test;
        test.threads
            .iter()
            .enumerate()
            .map(|(i, t)| {
                self.eq(t.loc, ty, flag, key, key_of(i));
                self.branch_if(t.loc, flag)
            })
            .collect()
    }

    /// Thread `i`'s address registers, each written by `address(builder, at, location, register)`.
    pub fn addresses(&mut self, i: usize, mut address: impl FnMut(&mut Self, SrcLoc, usize, Reg)) {
        let t = &self.test.threads[i];
        for &(l, reg) in &t.addr_regs {
            address(self, t.loc, l, self.bases[i] + reg);
        }
    }

    /// Thread `i`'s initial registers: values, location addresses, element addresses (after its
    /// address registers are written).
    pub fn reg_inits(&mut self, i: usize) {
        let test = self.test;
        let t = &test.threads[i];
        let base = self.bases[i];
        let imm = Operand::Imm;
        for &(reg, init) in &t.reg_init {
            let addr_reg = |l: usize| {
                // The parser gives every location a register is initialised to an address register.
                let ar = t.addr_regs.iter().find(|(x, _)| *x == l).map(|&(_, ar)| ar);
                base + ar.expect("address register of an initialised pointer")
            };
            let dst = base + reg;
            match init {
                RegInit::Value(v) => self.push(
                    t.loc,
                    Inst::Mov {
                        dst,
                        src: imm(v as u64),
                    },
                ),
                RegInit::Address(l) => self.push(
                    t.loc,
                    Inst::Mov {
                        dst,
                        src: Operand::Reg(addr_reg(l)),
                    },
                ),
                RegInit::Element { loc, index } => {
                    let off = index as u64 * test.locations[loc].ty.width().bytes() as u64;
                    self.alu(
                        t.loc,
                        AluOp::Add,
                        Ty::U64,
                        dst,
                        Operand::Reg(addr_reg(loc)),
                        imm(off),
                    );
                }
            }
        }
    }

    /// Thread `i`'s body, moved to its registers and place; each instruction passes through `map`.
    /// With `exit_to_end` an `exit` becomes a branch past the body (to an epilogue).
    pub fn body(&mut self, i: usize, exit_to_end: bool, map: impl Fn(Inst) -> Inst) {
        let t = &self.test.threads[i];
        let (base, off) = (self.bases[i], self.here());
        let end = off + t.insts.len() as u32;
        for (inst, &at) in t.insts.iter().zip(&t.locs) {
            let moved = match inst {
                Inst::Exit if exit_to_end => Inst::Branch {
                    target: end,
                    cond: None,
                },
                _ => map(relocate(inst, base, off)),
            };
            self.push(at, moved);
        }
    }

    /// The kernel, with `local_bytes` of local memory per work-group.
    pub fn finish(self, local_bytes: u32) -> Kernel {
        debug_assert_eq!(self.insts.len(), self.locs.len());
        Kernel {
            name: self.test.name.clone(),
            file: self.test.file.clone(),
            insts: self.insts,
            locs: self.locs,
            reg_names: self.names,
            local_bytes,
            semantics: match self.test.dialect {
                Dialect::Ptx => Semantics::Ptx,
                Dialect::OpenCl => Semantics::OpenCl,
            },
        }
    }
}

/// One buffer per location, `len[l]` elements each, every copy holding the location's initial
/// elements in order.
pub fn location_buffers(test: &LitmusTest, len: impl IntoIterator<Item = u64>) -> Vec<Buffer> {
    test.locations
        .iter()
        .zip(len)
        .map(|(l, len)| Buffer {
            name: l.name.clone(),
            elem: l.ty,
            len,
            init: init_of(l, len),
            loc: l.loc,
        })
        .collect()
}

/// Buffer `j`'s address as parameter register `j`.
pub fn buffer_params<'a>(buffers: impl IntoIterator<Item = &'a Buffer>) -> Vec<Param> {
    buffers
        .into_iter()
        .enumerate()
        .map(|(j, b)| Param {
            name: b.name.clone(),
            reg: j as Reg,
            value: ParamValue::BufferAddr(b.name.clone()),
        })
        .collect()
}

/// A buffer of `total` elements for location `l`: every copy holds the initial elements in order
/// (copies start at multiples of the location's length, so element `i` is element `i mod n_L`).
fn init_of(l: &Location, total: u64) -> Init {
    let mask = width_mask(l.ty);
    if l.elems.iter().all(|&v| v == l.init) {
        return Init::Fill(l.init as u64 & mask);
    }
    Init::Values(
        (0..total)
            .map(|i| l.elems[(i % l.len as u64) as usize] as u64 & mask)
            .collect(),
    )
}

pub fn width_mask(ty: Ty) -> u64 {
    match ty.width() {
        Width::B32 => 0xFFFF_FFFF,
        Width::B64 => u64::MAX,
    }
}

/// A final raw value as the signed or unsigned number of its type.
pub fn normalise(raw: u64, ty: Ty) -> i64 {
    match ty {
        Ty::I32 => raw as u32 as i32 as i64,
        Ty::U32 | Ty::F32 => (raw & 0xFFFF_FFFF) as i64,
        Ty::I64 | Ty::U64 => raw as i64,
    }
}

/// The observed registers of the condition in its order: (index into the observed list, thread,
/// register).
pub fn observed_regs(test: &LitmusTest) -> Vec<(usize, usize, Reg)> {
    test.condition
        .observed
        .iter()
        .enumerate()
        .filter_map(|(j, v)| match *v {
            Var::Reg { thread, reg } => Some((j, thread, reg)),
            Var::Loc(_) | Var::Elem { .. } => None,
        })
        .collect()
}

/// One instance's final state, in the condition's order: `reg(n, thread, reg)` gives the raw value
/// of the `n`-th observed register, `elem(location, element)` a location's raw element.
pub fn final_state(
    test: &LitmusTest,
    mut reg: impl FnMut(usize, usize, Reg) -> u64,
    elem: impl Fn(usize, u32) -> u64,
) -> Vec<i64> {
    let mut n = 0;
    test.condition
        .observed
        .iter()
        .map(|v| match *v {
            Var::Reg { thread, reg: r } => {
                let raw = reg(n, thread, r);
                n += 1;
                normalise(raw, test.threads[thread].regs[r as usize].ty)
            }
            Var::Loc(l) => normalise(elem(l, 0), test.locations[l].ty),
            Var::Elem { loc, index } => normalise(elem(loc, index), test.locations[loc].ty),
        })
        .collect()
}

/// `inst` of a thread moved into the launch kernel: its registers up by `base`, its branch targets up
/// by `off`.
pub fn relocate(inst: &Inst, base: Reg, off: u32) -> Inst {
    let rr = |x: Reg| x + base;
    let ro = |o: Operand| match o {
        Operand::Reg(x) => Operand::Reg(x + base),
        i => i,
    };
    let ra = |a: Address| Address {
        base: ro(a.base),
        offset: a.offset,
    };
    match *inst {
        Inst::Mov { dst, src } => Inst::Mov {
            dst: rr(dst),
            src: ro(src),
        },
        Inst::ReadSpecial { dst, which } => Inst::ReadSpecial {
            dst: rr(dst),
            which,
        },
        Inst::Alu { op, ty, dst, a, b } => Inst::Alu {
            op,
            ty,
            dst: rr(dst),
            a: ro(a),
            b: ro(b),
        },
        Inst::Cmp { op, ty, dst, a, b } => Inst::Cmp {
            op,
            ty,
            dst: rr(dst),
            a: ro(a),
            b: ro(b),
        },
        Inst::Select { dst, cond, a, b } => Inst::Select {
            dst: rr(dst),
            cond: rr(cond),
            a: ro(a),
            b: ro(b),
        },
        Inst::Cvt { dst, src, from, to } => Inst::Cvt {
            dst: rr(dst),
            src: rr(src),
            from,
            to,
        },
        Inst::Branch { target, cond } => Inst::Branch {
            target: target + off,
            cond: cond.map(|(c, nz)| (rr(c), nz)),
        },
        Inst::Load {
            dst,
            space,
            addr,
            ty,
            ord,
            scope,
        } => Inst::Load {
            dst: rr(dst),
            space,
            addr: ra(addr),
            ty,
            ord,
            scope,
        },
        Inst::Store {
            space,
            addr,
            src,
            ty,
            ord,
            scope,
        } => Inst::Store {
            space,
            addr: ra(addr),
            src: ro(src),
            ty,
            ord,
            scope,
        },
        Inst::Rmw {
            dst,
            op,
            space,
            addr,
            operand,
            ty,
            ord,
            scope,
        } => Inst::Rmw {
            dst: dst.map(rr),
            op,
            space,
            addr: ra(addr),
            operand: ro(operand),
            ty,
            ord,
            scope,
        },
        Inst::Cas {
            dst,
            space,
            addr,
            expected,
            desired,
            ty,
            success,
            failure,
            scope,
            weak,
        } => Inst::Cas {
            dst: dst.map(rr),
            space,
            addr: ra(addr),
            expected: ro(expected),
            desired: ro(desired),
            ty,
            success,
            failure,
            scope,
            weak,
        },
        Inst::Barrier {
            kind: BarrierKind::Named(mut b),
            spaces,
            scope,
        } => {
            if let BarrierOp::Reduce { dst, pred, .. } = &mut b.op {
                *dst = rr(*dst);
                *pred = rr(*pred);
            }
            Inst::Barrier {
                kind: BarrierKind::Named(b),
                spaces,
                scope,
            }
        }
        ref other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    const MP_BRA: &str = r#"PTX MP+bra
{ x=0; y=0; 1:r5=x; }
 P0@cta 0,gpu 0        | P1@cta 1,gpu 0         ;
 st.weak [x], 1        | ld.acquire.gpu r0, [y] ;
 st.release.gpu [y], 1 | setp.ne.s32 p, r0, 1   ;
                       | @p bra END             ;
                       | ld.weak r1, [x]        ;
                       | END:                   ;
exists (1:r0=1 /\ 1:r1=0)
"#;

    fn mp() -> LitmusTest {
        parse(MP_BRA, "mp.litmus").expect("the test parses")
    }

    #[test]
    fn registers_are_named_locations_then_temporaries_then_threads() {
        let test = mp();
        let mut b = KernelBuilder::new(&test);
        assert_eq!((b.location(0), b.location(1)), (0, 1));
        let t = b.reg("$t");
        assert_eq!(t, 2);
        let bases = b.thread_regs();
        assert_eq!(bases, thread_bases(&test, 3));
        assert_eq!(bases[1], 3 + test.threads[0].regs.len() as Reg);
        let k = b.finish(0);
        assert_eq!(&k.reg_names[..3], &["&x", "&y", "$t"]);
        assert!(
            k.reg_names[bases[1] as usize].starts_with("P1:"),
            "{:?}",
            k.reg_names
        );
        assert_eq!(
            k.reg_names.len(),
            3 + test.threads.iter().map(|t| t.regs.len()).sum::<usize>()
        );
    }

    #[test]
    fn entries_branch_to_the_targets_set_later() {
        let test = mp();
        let mut b = KernelBuilder::new(&test);
        let (flag, key) = (b.reg("$c"), b.reg("$key"));
        b.thread_regs();
        let entries = b.thread_entries(Ty::U32, flag, key, |i| 10 + i as u64);
        b.push(SrcLoc::default(), Inst::Exit);
        b.set_target(entries[0], 7);
        b.set_target(entries[1], 9);
        let k = b.finish(0);
        assert_eq!(k.insts.len(), 5);
        assert!(
            matches!(k.insts[0], Inst::Cmp { op: CmpOp::Eq, ty: Ty::U32, dst, b: Operand::Imm(10), .. } if dst == flag)
        );
        assert!(
            matches!(k.insts[1], Inst::Branch { target: 7, cond: Some((c, true)) } if c == flag)
        );
        assert!(matches!(k.insts[3], Inst::Branch { target: 9, .. }));
    }

    #[test]
    fn a_body_is_moved_to_its_registers_and_place_and_its_exits_can_go_past_it() {
        let test = mp();
        let p1 = &test.threads[1];
        let branch_at = p1
            .insts
            .iter()
            .position(|i| matches!(i, Inst::Branch { .. }))
            .unwrap();
        let Inst::Branch { target: old, .. } = p1.insts[branch_at] else {
            unreachable!()
        };
        for exit_to_end in [false, true] {
            let mut b = KernelBuilder::new(&test);
            let bases = b.thread_regs();
            b.push(SrcLoc::default(), Inst::Exit);
            b.body(1, exit_to_end, |i| i);
            let k = b.finish(0);
            assert_eq!(k.insts.len(), 1 + p1.insts.len());
            let Inst::Branch {
                target,
                cond: Some((c, _)),
            } = k.insts[1 + branch_at]
            else {
                panic!("{:?}", k.insts[1 + branch_at])
            };
            assert_eq!(target, old + 1, "branch targets move with the body");
            assert!(c >= bases[1], "registers move to the thread's");
            let exits = k.insts[1..]
                .iter()
                .filter(|i| matches!(i, Inst::Exit))
                .count();
            let to_end = k.insts[1..]
                .iter()
                .filter(|i| matches!(i, Inst::Branch { target, cond: None } if *target == k.insts.len() as u32))
                .count();
            let body_exits = p1.insts.iter().filter(|i| matches!(i, Inst::Exit)).count();
            if exit_to_end {
                assert_eq!((exits, to_end), (0, body_exits));
            } else {
                assert_eq!(exits, body_exits);
            }
        }
    }

    #[test]
    fn initial_registers_take_values_and_address_registers() {
        let test = mp();
        let mut b = KernelBuilder::new(&test);
        let bases = b.thread_regs();
        b.addresses(1, |b, at, l, dst| {
            b.push(
                at,
                Inst::Mov {
                    dst,
                    src: Operand::Reg(b.location(l)),
                },
            )
        });
        let addrs = b.here() as usize;
        b.reg_inits(1);
        let k = b.finish(0);
        assert_eq!(addrs, test.threads[1].addr_regs.len());
        let (r5, _) = test.threads[1].reg_init[0];
        let ar = test.threads[1]
            .addr_regs
            .iter()
            .find(|(l, _)| *l == 0)
            .unwrap()
            .1;
        assert!(
            matches!(k.insts[addrs], Inst::Mov { dst, src: Operand::Reg(s) }
            if dst == bases[1] + r5 && s == bases[1] + ar)
        );
    }

    #[test]
    fn buffers_params_and_final_states_follow_the_locations() {
        let test = mp();
        let bufs = location_buffers(&test, [4, 8]);
        assert_eq!(
            bufs.iter()
                .map(|b| (b.name.as_str(), b.len))
                .collect::<Vec<_>>(),
            [("x", 4), ("y", 8)]
        );
        assert!(matches!(bufs[0].init, Init::Fill(0)));
        let params = buffer_params(&bufs);
        assert_eq!(params.iter().map(|p| p.reg).collect::<Vec<_>>(), [0, 1]);
        let obs = observed_regs(&test);
        assert_eq!(obs.len(), 2);
        // Raw values as the hardware leaves them: a 32-bit register's upper half is dropped.
        let state = final_state(&test, |n, _, _| [0xFFFF_FFFF_0000_0001, 0][n], |_, _| 5);
        assert_eq!(state, [1, 0]);
        assert_eq!(normalise(0xFFFF_FFFF, Ty::I32), -1);
        assert_eq!(width_mask(Ty::U64), u64::MAX);
    }
}
