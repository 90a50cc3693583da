//! One basic block and its instructions in WGSL: control flow, fences and barriers, loads, stores and
//! atomics (through `memory.rs`), special registers and ALU operations with the simulator's arithmetic, and
//! the refusals with their `file:line:col`.

use super::*;

impl Gen<'_> {
    pub(super) fn block(&mut self, start: usize, end: usize) -> Result<(), TranslateError> {
        let ind = "  ";
        for pc in start..end {
            let inst = &self.k.insts[pc];
            if uses_64(inst) {
                self.need_int64(Some(pc))?;
            }
            self.inst(pc, inst, ind)?;
        }
        // Exits, barriers and branches name their successors; anything else falls through into the
        // next block (or off the end, which exits as in the simulator).
        if !matches!(
            self.k.insts[end - 1],
            Inst::Exit | Inst::Barrier { .. } | Inst::Branch { .. }
        ) {
            let next = self.target(end as u32);
            let _ = writeln!(self.out, "{ind}return {next};");
        }
        Ok(())
    }

    /// The block id (or `DONE`) that continues at instruction `t`.
    pub(super) fn target(&self, t: u32) -> String {
        match self.block_of.get(&(t as usize)) {
            Some(b) => format!("{b}u"),
            None => "DONE".to_string(),
        }
    }

    pub(super) fn inst(&mut self, pc: usize, inst: &Inst, ind: &str) -> Result<(), TranslateError> {
        match *inst {
            Inst::Mov { dst, src } => {
                let v = if self.wide[dst as usize] {
                    Val::W64(self.opnd(src, View::U64))
                } else {
                    Val::W32(self.opnd(src, View::U32))
                };
                self.assign(ind, dst, v);
            }
            Inst::ReadSpecial { dst, which } => {
                let e = self.special(pc, which)?;
                self.assign(ind, dst, Val::W32(e));
            }
            Inst::Alu { op, ty, dst, a, b } => self.alu(pc, ind, op, ty, dst, a, b),
            Inst::Cmp { op, ty, dst, a, b } => {
                let v = view_of(ty);
                let o = op.symbol();
                let e = format!(
                    "select(0u, 1u, {} {o} {})",
                    self.opnd(a, v),
                    self.opnd(b, v)
                );
                self.assign(ind, dst, Val::W32(e));
            }
            Inst::Select { dst, cond, a, b } => {
                let c = self.opnd(
                    Operand::Reg(cond),
                    if self.wide[cond as usize] {
                        View::U64
                    } else {
                        View::U32
                    },
                );
                let zero = if self.wide[cond as usize] {
                    "0lu"
                } else {
                    "0u"
                };
                let v = if self.wide[dst as usize] {
                    Val::W64(format!(
                        "select({}, {}, {c} != {zero})",
                        self.opnd(b, View::U64),
                        self.opnd(a, View::U64)
                    ))
                } else {
                    Val::W32(format!(
                        "select({}, {}, {c} != {zero})",
                        self.opnd(b, View::U32),
                        self.opnd(a, View::U32)
                    ))
                };
                self.assign(ind, dst, v);
            }
            Inst::Cvt { dst, src, from, to } => {
                let s = Operand::Reg(src);
                let v = match (from, to) {
                    (Ty::F32, Ty::F32) => Val::W32(self.opnd(s, View::U32)),
                    (_, Ty::F32) => Val::W32(format!(
                        "bitcast<u32>(f32({}))",
                        self.opnd(s, view_of(from))
                    )),
                    (Ty::F32, to) => {
                        // As the simulator converts (`ir::eval::convert`): WGSL clamps below the
                        // type's largest value (no f32 holds it), so a value at or above the range's
                        // top is selected to it; NaN (found by its bits: WGSL may assume no NaN
                        // in float comparisons) gives 0.
                        let x = self.opnd(s, View::F32);
                        let nan = format!("((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)");
                        let (conv, top, max, zero) = match to {
                            Ty::U32 => ("u32", "4294967296.0f", "4294967295u", "0u"),
                            Ty::I32 => ("i32", "2147483648.0f", "2147483647i", "0i"),
                            Ty::U64 => (
                                "u64",
                                "18446744073709551616.0f",
                                "18446744073709551615lu",
                                "0lu",
                            ),
                            _ => (
                                "i64",
                                "9223372036854775808.0f",
                                "9223372036854775807li",
                                "0li",
                            ),
                        };
                        let v = format!(
                            "select(select({conv}({x}), {max}, {x} >= {top}), {zero}, {nan})"
                        );
                        match to {
                            Ty::U32 => Val::W32(v),
                            Ty::I32 => Val::W32(format!("bitcast<u32>({v})")),
                            Ty::U64 => Val::W64(v),
                            _ => Val::W64(format!("bitcast<u64>({v})")),
                        }
                    }
                    (_, Ty::U32 | Ty::I32) => Val::W32(self.opnd(s, View::U32)),
                    (Ty::I32, _) => {
                        Val::W64(format!("bitcast<u64>(i64({}))", self.opnd(s, View::I32)))
                    }
                    (Ty::U32, _) => Val::W64(format!("u64({})", self.opnd(s, View::U32))),
                    (_, _) => Val::W64(self.opnd(s, View::U64)),
                };
                self.assign(ind, dst, v);
            }
            Inst::Branch { target, cond } => {
                let t = self.target(target);
                match cond {
                    None => {
                        let _ = writeln!(self.out, "{ind}return {t};");
                    }
                    Some((r, nz)) => {
                        let (c, zero) = if self.wide[r as usize] {
                            (self.opnd(Operand::Reg(r), View::U64), "0lu")
                        } else {
                            (self.opnd(Operand::Reg(r), View::U32), "0u")
                        };
                        let o = if nz { "!=" } else { "==" };
                        let f = self.target(pc as u32 + 1);
                        let _ = writeln!(self.out, "{ind}return select({f}, {t}, {c} {o} {zero});");
                    }
                }
            }
            Inst::Exit => {
                let _ = writeln!(self.out, "{ind}return DONE;");
            }
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } => {
                if let BarrierKind::Named(b) = kind {
                    if b != (CtaBarrier {
                        id: 0,
                        threads: None,
                        op: BarrierOp::Sync,
                    }) {
                        return Err(err(
                            self.k,
                            pc,
                            "PTX named barriers, thread counts, bar.arrive and bar.red are not translated \
                             to WGSL (it has one work-group barrier)",
                        ));
                    }
                }
                if kind == BarrierKind::SubGroup {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group barriers are not translated to WGSL (they must be reached in \
                         uniform control flow, which the translation cannot promise)",
                    ));
                }
                if scope > Scope::WorkGroup && spaces.global {
                    return Err(err(
                        self.k,
                        pc,
                        format!(
                            "a barrier that orders global memory at {scope} scope: WGSL's \
                             storageBarrier orders memory within the work-group only"
                        ),
                    ));
                }
                let next = self.target(pc as u32 + 1);
                let _ = writeln!(self.out, "{ind}at_barrier = true;\n{ind}return {next};");
            }
            Inst::Fence { ord, scope, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!(
                        "fence.{} at {scope} scope: WGSL has no fences (only relaxed atomics and \
                         barriers); it needs SPIR-V with the Vulkan memory model",
                        ord.order().name()
                    ),
                ));
            }
            Inst::Math { op, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!(
                        "the bit or floating-point operation {op:?} is not translated to WGSL yet"
                    ),
                ));
            }
            Inst::Warp { op, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!("the warp-level exchange {op:?} is not translated to WGSL yet"),
                ));
            }
            Inst::Compute { .. } => {
                return Err(err(
                    self.k,
                    pc,
                    "a timing-only trace instruction has no WGSL equivalent",
                ));
            }
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                ..
            } => {
                if let Some(o) = ord.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "load", o));
                }
                let atomic = ord != LoadOrd::Plain;
                let w = ty.width();
                if atomic && w == Width::B64 {
                    self.need_int64_atomics(pc)?;
                    if space == Space::Local {
                        return Err(self.local64(pc));
                    }
                }
                let idx = self.address(pc, ind, space, addr, w)?;
                let e = self.read(space, &idx, w, atomic);
                let v = match w {
                    Width::B32 => Val::W32(e),
                    Width::B64 => Val::W64(e),
                };
                self.assign(ind, dst, v);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                ..
            } => {
                if let Some(o) = ord.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "store", o));
                }
                let atomic = ord != StoreOrd::Plain;
                let w = ty.width();
                if atomic && w == Width::B64 {
                    self.need_int64_atomics(pc)?;
                    if space == Space::Local {
                        return Err(self.local64(pc));
                    }
                }
                let idx = self.address(pc, ind, space, addr, w)?;
                self.write(ind, space, &idx, w, atomic, src);
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                ..
            } => {
                if ord != RmwOrd::Relaxed {
                    return Err(self.order_err(pc, "atomic", ord.order()));
                }
                self.rmw(pc, ind, dst, op, space, addr, operand, ty)?;
            }
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                failure,
                weak,
                ..
            } => {
                if success != RmwOrd::Relaxed {
                    return Err(self.order_err(pc, "compare-exchange", success.order()));
                }
                if let Some(o) = failure.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "compare-exchange failure", o));
                }
                self.cas(pc, ind, dst, space, addr, expected, desired, ty, weak)?;
            }
        }
        Ok(())
    }

    pub(super) fn order_err(&self, pc: usize, what: &str, o: MemOrder) -> TranslateError {
        err(
            self.k,
            pc,
            format!(
                "{} {what}: WGSL atomics are relaxed only; {} ordering needs SPIR-V with the Vulkan \
                 memory model",
                o.name(),
                o.name()
            ),
        )
    }

    pub(super) fn local64(&self, pc: usize) -> TranslateError {
        err(
            self.k,
            pc,
            "64-bit atomics on local memory are not translated (local memory is one array of 32-bit \
             words)",
        )
    }

    pub(super) fn special(&mut self, pc: usize, s: Special) -> Result<String, TranslateError> {
        let d = |d: Dim| ["x", "y", "z"][d.index()];
        Ok(match s {
            Special::GlobalId(x) => format!("p_gid.{}", d(x)),
            Special::LocalId(x) => format!("p_lid.{}", d(x)),
            Special::GroupId(x) => format!("p_wid.{}", d(x)),
            Special::GlobalSize(x) => format!("(p_nwg.{0} * WG_SIZE.{0})", d(x)),
            Special::LocalSize(x) => format!("WG_SIZE.{}", d(x)),
            Special::NumGroups(x) => format!("p_nwg.{}", d(x)),
            Special::GlobalLinearId => {
                "(p_gid.x + p_nwg.x * WG_SIZE.x * (p_gid.y + p_nwg.y * WG_SIZE.y * p_gid.z))".into()
            }
            Special::LocalLinearId => "p_lidx".into(),
            Special::GroupLinearId => "cur_group".into(),
            Special::Lane | Special::SubGroupId | Special::SubGroupSize | Special::NumSubGroups => {
                if !self.caps.subgroups {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group registers need the SUBGROUP feature, which this adapter lacks",
                    ));
                }
                self.needs.subgroups = true;
                self.uses_subgroup = true;
                match s {
                    Special::Lane => "p_sg_lane",
                    Special::SubGroupSize => "p_sg_size",
                    Special::SubGroupId => "p_sg_id",
                    _ => "p_sg_count",
                }
                .into()
            }
            Special::SmId => {
                return Err(err(self.k, pc, "WGSL has no register for the SM id"));
            }
            Special::Clock => {
                return Err(err(self.k, pc, "WGSL has no clock register"));
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn alu(
        &mut self,
        pc: usize,
        ind: &str,
        op: AluOp,
        ty: Ty,
        dst: Reg,
        a: Operand,
        b: Operand,
    ) {
        // The simulator's semantics (`ir::eval`): f32 bit operations act on the bits.
        let ty = eval::operand_ty(op, ty);
        let v = view_of(ty);
        let (x, y) = (self.opnd(a, v), self.opnd(b, v));
        // Shift amounts wrap at the width, as in the simulator (`eval::shift_mask`).
        let bits = eval::shift_mask(ty);
        let shift = match ty {
            Ty::U64 | Ty::I64 => format!("u32({} & {bits}lu)", self.opnd(b, View::U64)),
            _ => format!("({} & {bits}u)", self.opnd(b, View::U32)),
        };
        let e = match op {
            AluOp::Add => format!("{x} + {y}"),
            AluOp::Sub => format!("{x} - {y}"),
            AluOp::Mul => format!("{x} * {y}"),
            AluOp::Div | AluOp::Rem if ty.is_float() => {
                let o = if op == AluOp::Div { "/" } else { "%" };
                format!("{x} {o} {y}")
            }
            AluOp::Div | AluOp::Rem => {
                // The simulator's faults (`eval::divide_faults`): zero divisor, and MIN / -1 for
                // signed types.
                let (zero, min, m1) = match ty {
                    Ty::U32 => ("0u", None, ""),
                    Ty::U64 => ("0lu", None, ""),
                    Ty::I32 => ("0i", Some("-2147483647i - 1i"), "-1i"),
                    _ => ("0li", Some("-9223372036854775807li - 1li"), "-1li"),
                };
                let bad = match min {
                    None => format!("{y} == {zero}"),
                    Some(min) => format!("{y} == {zero} || ({x} == {min} && {y} == {m1})"),
                };
                let _ = writeln!(
                    self.out,
                    "{ind}if ({bad}) {{ fault({}u, {pc}u, 0u, 0u, 0u); }}",
                    FaultCode::DivByZero as u32
                );
                let o = if op == AluOp::Div { "/" } else { "%" };
                format!("{x} {o} {y}")
            }
            AluOp::Min => format!("min({x}, {y})"),
            AluOp::Max => format!("max({x}, {y})"),
            AluOp::And => format!("{x} & {y}"),
            AluOp::Or => format!("{x} | {y}"),
            AluOp::Xor => format!("{x} ^ {y}"),
            AluOp::Shl => format!("{x} << {shift}"),
            AluOp::Shr => format!("{x} >> {shift}"),
        };
        let v = match ty {
            Ty::U32 => Val::W32(e),
            Ty::I32 => Val::W32(format!("bitcast<u32>({e})")),
            Ty::F32 => Val::W32(format!("bitcast<u32>({e})")),
            Ty::U64 => Val::W64(e),
            Ty::I64 => Val::W64(format!("bitcast<u64>({e})")),
        };
        self.assign(ind, dst, v);
    }
}
