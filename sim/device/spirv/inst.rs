//! One basic block and its instructions: control flow, fences, barriers, atomics and loads/stores
//! dispatched to `memory.rs`, special registers and ALU operations with the simulator's arithmetic.

use super::*;

impl Gen<'_> {
    pub(super) fn block(
        &mut self,
        b: usize,
        start: usize,
        end: usize,
    ) -> Result<u32, TranslateError> {
        let u = self.ids.u32_;
        let (f, _) = Func::new(&mut self.m, u, &[]);
        let id = f.id;
        self.m.name(id, &format!("block{b}"));
        self.f = Some(f);
        let mut ret = None;
        for pc in start..end {
            let inst = self.k.insts[pc].clone();
            if let Some(r) = self.inst(pc, &inst)? {
                ret = Some(r);
            }
        }
        let next = match ret {
            Some(r) => r,
            None => self.target(end as u32),
        };
        self.emit(Op::ReturnValue, &[next]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
        Ok(id)
    }

    /// Emits one instruction; returns the successor block id for branches, exits and barriers.
    pub(super) fn inst(&mut self, pc: usize, inst: &Inst) -> Result<Option<u32>, TranslateError> {
        let (u, u64_, f, b) = (self.ids.u32_, self.ids.u64_, self.ids.f32_, self.ids.bool_);
        match *inst {
            Inst::Mov { dst, src } => {
                if self.wide[dst as usize] {
                    let v = self.opnd(src, V::U64);
                    self.assign(dst, v, Width::B64);
                } else {
                    let v = self.opnd(src, V::U32);
                    self.assign(dst, v, Width::B32);
                }
            }
            Inst::ReadSpecial { dst, which } => {
                let v = self.special(pc, which)?;
                self.assign(dst, v, Width::B32);
            }
            Inst::Alu { op, ty, dst, a, b } => self.alu(pc, op, ty, dst, a, b),
            Inst::Cmp {
                op,
                ty,
                dst,
                a,
                b: bb,
            } => {
                let v = view(ty);
                let (x, y) = (self.opnd(a, v), self.opnd(bb, v));
                let signed = matches!(ty, Ty::I32 | Ty::I64);
                let o = match (op, ty.is_float(), signed) {
                    (CmpOp::Eq, true, _) => Op::FOrdEqual,
                    (CmpOp::Ne, true, _) => Op::FUnordNotEqual,
                    (CmpOp::Lt, true, _) => Op::FOrdLessThan,
                    (CmpOp::Le, true, _) => Op::FOrdLessThanEqual,
                    (CmpOp::Gt, true, _) => Op::FOrdGreaterThan,
                    (CmpOp::Ge, true, _) => Op::FOrdGreaterThanEqual,
                    (CmpOp::Eq, false, _) => Op::IEqual,
                    (CmpOp::Ne, false, _) => Op::INotEqual,
                    (CmpOp::Lt, false, false) => Op::ULessThan,
                    (CmpOp::Le, false, false) => Op::ULessThanEqual,
                    (CmpOp::Gt, false, false) => Op::UGreaterThan,
                    (CmpOp::Ge, false, false) => Op::UGreaterThanEqual,
                    (CmpOp::Lt, false, true) => Op::SLessThan,
                    (CmpOp::Le, false, true) => Op::SLessThanEqual,
                    (CmpOp::Gt, false, true) => Op::SGreaterThan,
                    (CmpOp::Ge, false, true) => Op::SGreaterThanEqual,
                };
                let c = self.op(b, o, &[x, y]);
                let r = self.bool_to_u32(c);
                self.assign(dst, r, Width::B32);
            }
            Inst::Select {
                dst,
                cond,
                a,
                b: bb,
            } => {
                let c = self.nonzero(cond);
                let (v, t, w) = if self.wide[dst as usize] {
                    (V::U64, u64_, Width::B64)
                } else {
                    (V::U32, u, Width::B32)
                };
                let (x, y) = (self.opnd(a, v), self.opnd(bb, v));
                let r = self.op(t, Op::Select, &[c, x, y]);
                self.assign(dst, r, w);
            }
            Inst::Cvt { dst, src, from, to } => {
                let s = Operand::Reg(src);
                let (v, w) = match (from, to) {
                    (Ty::F32, Ty::F32) => (self.opnd(s, V::U32), Width::B32),
                    (_, Ty::F32) => {
                        let x = self.opnd(s, view(from));
                        let o = if matches!(from, Ty::I32 | Ty::I64) {
                            Op::ConvertSToF
                        } else {
                            Op::ConvertUToF
                        };
                        let fl = self.op(f, o, &[x]);
                        (self.op(u, Op::Bitcast, &[fl]), Width::B32)
                    }
                    (Ty::F32, to) => {
                        // As the simulator converts (`ir::eval::convert`): truncated toward zero,
                        // saturating at the target's range, NaN 0. The range's top is no f32, so a
                        // value at or above it is selected to the type's largest.
                        let x = self.opnd(s, V::F32);
                        let (lo, hi, top, max) = match to {
                            Ty::U32 => (0.0f32, 4294967040.0f32, 4294967296.0f32, u32::MAX as u64),
                            Ty::I32 => (-2147483648.0, 2147483520.0, 2147483648.0, i32::MAX as u64),
                            Ty::U64 => (
                                0.0,
                                18446742974197923840.0,
                                18446744073709551616.0,
                                u64::MAX,
                            ),
                            _ => (
                                -9223372036854775808.0,
                                9223371487098961920.0,
                                9223372036854775808.0,
                                i64::MAX as u64,
                            ),
                        };
                        let bl = self.ids.bool_;
                        let top = self.m.cf32(top);
                        let over = self.op(bl, Op::FOrdGreaterThanEqual, &[x, top]);
                        let nan = self.op(bl, Op::IsNan, &[x]);
                        let (lo, hi) = (self.m.cf32(lo), self.m.cf32(hi));
                        let y = self.glsl(f, GLSL_FMAX, &[x, lo]);
                        let y = self.glsl(f, GLSL_FMIN, &[y, hi]);
                        let (t, v, w) = match to {
                            Ty::U32 => (u, self.op(u, Op::ConvertFToU, &[y]), Width::B32),
                            Ty::U64 => (u64_, self.op(u64_, Op::ConvertFToU, &[y]), Width::B64),
                            Ty::I32 => {
                                let i = self.m.ty(Type::I32);
                                let c = self.op(i, Op::ConvertFToS, &[y]);
                                (u, self.op(u, Op::Bitcast, &[c]), Width::B32)
                            }
                            _ => {
                                let i = self.m.ty(Type::I64);
                                let c = self.op(i, Op::ConvertFToS, &[y]);
                                (u64_, self.op(u64_, Op::Bitcast, &[c]), Width::B64)
                            }
                        };
                        let (max, zero) = if w == Width::B64 {
                            (self.m.c64(max), self.m.c64(0))
                        } else {
                            (self.c32(max as u32), self.c32(0))
                        };
                        let v = self.op(t, Op::Select, &[over, max, v]);
                        (self.op(t, Op::Select, &[nan, zero, v]), w)
                    }
                    (_, Ty::U32 | Ty::I32) => (self.opnd(s, V::U32), Width::B32),
                    (Ty::I32, _) => {
                        let x = self.opnd(s, V::U32);
                        (self.op(u64_, Op::SConvert, &[x]), Width::B64)
                    }
                    (Ty::U32, _) => {
                        // Zero-extended from the low 32 bits (the register may hold more).
                        let x = self.opnd(s, V::U32);
                        (self.op(u64_, Op::UConvert, &[x]), Width::B64)
                    }
                    (_, _) => (self.opnd(s, V::U64), Width::B64),
                };
                self.assign(dst, v, w);
            }
            Inst::Branch { target, cond } => {
                let t = self.target(target);
                return Ok(Some(match cond {
                    None => t,
                    Some((r, nz)) => {
                        let c = self.nonzero(r);
                        let fall = self.target(pc as u32 + 1);
                        if nz {
                            self.op(u, Op::Select, &[c, t, fall])
                        } else {
                            self.op(u, Op::Select, &[c, fall, t])
                        }
                    }
                }));
            }
            Inst::Exit => return Ok(Some(self.c32(u32::MAX))),
            Inst::Barrier { kind, .. } => {
                if kind == BarrierKind::SubGroup {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group barriers are not translated to SPIR-V (they must be reached in \
                         uniform control flow, which the translation cannot promise)",
                    ));
                }
                let t = self.m.cbool(true);
                self.store(self.ids.at_barrier, t);
                return Ok(Some(self.target(pc as u32 + 1)));
            }
            Inst::Fence { ord, scope, spaces } => {
                if scope == Scope::WorkItem {
                    return Err(err(
                        self.k,
                        pc,
                        "a fence at work_item scope orders nothing Vulkan can express",
                    ));
                }
                self.note_weakened(pc, "fence", ord.order(), scope);
                // A fence that names no space orders both.
                let sp = if spaces == SpaceSet::NONE {
                    SpaceSet::BOTH
                } else {
                    spaces
                };
                let (sc, sem) = (self.scope(scope), self.sem(ord.order(), sp));
                self.guarded(0, |g| {
                    g.emit(Op::MemoryBarrier, &[sc, sem]);
                    0
                });
            }
            Inst::Math { op, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!("the bit or floating-point operation {op:?} is not translated to SPIR-V yet"),
                ));
            }
            Inst::Warp { op, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!("the warp-level exchange {op:?} is not translated to SPIR-V yet"),
                ));
            }
            Inst::Compute { .. } => {
                return Err(err(
                    self.k,
                    pc,
                    "a timing-only trace instruction has no SPIR-V equivalent",
                ));
            }
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                scope,
            } => {
                let w = ty.width();
                let order = ord.atomic_order();
                if let Some(o) = order {
                    self.note_weakened(pc, "load", o, scope);
                    if w == Width::B64 {
                        self.need_int64_atomics(pc, space)?;
                    }
                }
                let idx = self.address(pc, space, addr, w)?;
                let t = if w == Width::B64 { u64_ } else { u };
                let v = self.guarded(t, |g| match order {
                    Some(o) => {
                        let p = g.pointer(space, idx, w);
                        // A load cannot release: seq_cst is an acquire.
                        let o = if o == MemOrder::SeqCst {
                            MemOrder::Acquire
                        } else {
                            o
                        };
                        let (sc, sem) = (g.scope(scope), g.sem(o, SpaceSet::BOTH));
                        g.op(t, Op::AtomicLoad, &[p, sc, sem])
                    }
                    None => g.plain_read(space, idx, w),
                });
                self.assign(dst, v, w);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                scope,
            } => {
                let w = ty.width();
                let order = ord.atomic_order();
                if let Some(o) = order {
                    self.note_weakened(pc, "store", o, scope);
                    if w == Width::B64 {
                        self.need_int64_atomics(pc, space)?;
                    }
                }
                let idx = self.address(pc, space, addr, w)?;
                let v = self.opnd(src, if w == Width::B64 { V::U64 } else { V::U32 });
                self.guarded(0, |g| {
                    match order {
                        Some(o) => {
                            let p = g.pointer(space, idx, w);
                            // A store cannot acquire: seq_cst is a release.
                            let o = if o == MemOrder::SeqCst {
                                MemOrder::Release
                            } else {
                                o
                            };
                            let (sc, sem) = (g.scope(scope), g.sem(o, SpaceSet::BOTH));
                            g.emit(Op::AtomicStore, &[p, sc, sem, v]);
                        }
                        None => g.plain_write(space, idx, w, v),
                    }
                    0
                });
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                scope,
            } => self.rmw(pc, dst, op, space, addr, operand, ty, ord, scope)?,
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
                ..
            } => {
                let w = ty.width();
                if w == Width::B64 {
                    self.need_int64_atomics(pc, space)?;
                }
                self.note_weakened(pc, "compare-exchange", success.order(), scope);
                let idx = self.address(pc, space, addr, w)?;
                let v = if w == Width::B64 { V::U64 } else { V::U32 };
                let t = if w == Width::B64 { u64_ } else { u };
                let (e, d) = (self.opnd(expected, v), self.opnd(desired, v));
                let fail = failure.atomic_order().unwrap_or(MemOrder::Relaxed);
                // The failure order never releases (SPIR-V: Unequal is not a release).
                let fail = match fail {
                    MemOrder::SeqCst | MemOrder::AcqRel => MemOrder::Acquire,
                    MemOrder::Release => MemOrder::Relaxed,
                    o => o,
                };
                let r = self.guarded(t, |g| {
                    let p = g.pointer(space, idx, w);
                    let sc = g.scope(scope);
                    let eq = g.sem(success.order(), SpaceSet::BOTH);
                    let ne = g.sem(fail, SpaceSet::BOTH);
                    g.op(t, Op::AtomicCompareExchange, &[p, sc, eq, ne, d, e])
                });
                if let Some(dst) = dst {
                    self.assign(dst, r, w);
                }
            }
        }
        Ok(None)
    }

    pub(super) fn need_int64_atomics(
        &mut self,
        pc: usize,
        space: Space,
    ) -> Result<(), TranslateError> {
        if !self.caps.base.int64_atomics || self.ids.u64_ == 0 {
            return Err(err(
                self.k,
                pc,
                "64-bit atomics are not available on this adapter (Int64Atomics)",
            ));
        }
        if space == Space::Local {
            return Err(err(
                self.k,
                pc,
                "64-bit atomics on local memory are not translated (local memory is one array of \
                 32-bit words)",
            ));
        }
        self.needs.int64_atomics = true;
        Ok(())
    }

    pub(super) fn special(&mut self, pc: usize, s: Special) -> Result<u32, TranslateError> {
        let u = self.ids.u32_;
        let v3 = self.m.ty(Type::V3U32);
        let comp = |g: &mut Self, var: u32, d: Dim| {
            let v = g.load(v3, var);
            g.op(u, Op::CompositeExtract, &[v, d.index() as u32])
        };
        let gs = self.group_size;
        Ok(match s {
            Special::GlobalId(d) => comp(self, self.ids.gid, d),
            Special::LocalId(d) => comp(self, self.ids.lid, d),
            Special::GroupId(d) => comp(self, self.ids.wid, d),
            Special::NumGroups(d) => comp(self, self.ids.nwg, d),
            Special::LocalSize(d) => self.c32(gs[d.index()]),
            Special::GlobalSize(d) => {
                let n = comp(self, self.ids.nwg, d);
                let c = self.c32(gs[d.index()]);
                self.op(u, Op::IMul, &[n, c])
            }
            Special::GlobalLinearId => {
                let g = self.load(v3, self.ids.gid);
                let n = self.load(v3, self.ids.nwg);
                let gx = self.op(u, Op::CompositeExtract, &[g, 0]);
                let gy = self.op(u, Op::CompositeExtract, &[g, 1]);
                let gz = self.op(u, Op::CompositeExtract, &[g, 2]);
                let nx = self.op(u, Op::CompositeExtract, &[n, 0]);
                let ny = self.op(u, Op::CompositeExtract, &[n, 1]);
                let (sx, sy) = (self.c32(gs[0]), self.c32(gs[1]));
                // gx + nx*sx*(gy + ny*sy*gz)
                let a = self.op(u, Op::IMul, &[ny, sy]);
                let a = self.op(u, Op::IMul, &[a, gz]);
                let a = self.op(u, Op::IAdd, &[gy, a]);
                let w = self.op(u, Op::IMul, &[nx, sx]);
                let a = self.op(u, Op::IMul, &[w, a]);
                self.op(u, Op::IAdd, &[gx, a])
            }
            Special::LocalLinearId => self.load(u, self.ids.lidx),
            Special::GroupLinearId => self.load(u, self.ids.cur_group),
            Special::Lane | Special::SubGroupId | Special::SubGroupSize | Special::NumSubGroups => {
                if !self.caps.base.subgroups {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group registers need sub-group support, which this adapter lacks",
                    ));
                }
                self.needs.subgroups = true;
                let i = match s {
                    Special::Lane => 0,
                    Special::SubGroupSize => 1,
                    Special::SubGroupId => 2,
                    _ => 3,
                };
                self.load(u, self.ids.sg[i])
            }
            Special::SmId => return Err(err(self.k, pc, "the SPIR-V translation has no SM id")),
            Special::Clock => {
                return Err(err(
                    self.k,
                    pc,
                    "the SPIR-V translation has no clock register",
                ))
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn alu(&mut self, pc: usize, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) {
        let ty = eval::operand_ty(op, ty);
        let v = view(ty);
        let (u, u64_, f, bl) = (self.ids.u32_, self.ids.u64_, self.ids.f32_, self.ids.bool_);
        let t = match v {
            V::U32 => u,
            V::U64 => u64_,
            V::F32 => f,
        };
        let (x, mut y) = (self.opnd(a, v), self.opnd(b, v));
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let w64 = ty.width() == Width::B64;
        let (zero, one) = if w64 {
            (self.m.c64(0), self.m.c64(1))
        } else {
            (self.c32(0), self.c32(1))
        };
        let shift = |g: &mut Self| {
            let bits = eval::shift_mask(ty) as u64;
            let m = if w64 {
                g.m.c64(bits)
            } else {
                g.c32(bits as u32)
            };
            g.op(t, Op::BitwiseAnd, &[y, m])
        };
        let r = match op {
            AluOp::Add if ty.is_float() => self.op(t, Op::FAdd, &[x, y]),
            AluOp::Sub if ty.is_float() => self.op(t, Op::FSub, &[x, y]),
            AluOp::Mul if ty.is_float() => self.op(t, Op::FMul, &[x, y]),
            AluOp::Div if ty.is_float() => self.op(t, Op::FDiv, &[x, y]),
            AluOp::Rem if ty.is_float() => self.op(t, Op::FRem, &[x, y]),
            AluOp::Min if ty.is_float() => self.glsl(t, GLSL_FMIN, &[x, y]),
            AluOp::Max if ty.is_float() => self.glsl(t, GLSL_FMAX, &[x, y]),
            AluOp::Add => self.op(t, Op::IAdd, &[x, y]),
            AluOp::Sub => self.op(t, Op::ISub, &[x, y]),
            AluOp::Mul => self.op(t, Op::IMul, &[x, y]),
            AluOp::Div | AluOp::Rem => {
                // The simulator's faults (`eval::divide_faults`); the divisor is replaced by 1 when
                // faulting so that the division itself is defined.
                let mut bad = self.op(bl, Op::IEqual, &[y, zero]);
                if signed {
                    let min = if w64 {
                        self.m.c64(i64::MIN as u64)
                    } else {
                        self.c32(i32::MIN as u32)
                    };
                    let m1 = if w64 {
                        self.m.c64(u64::MAX)
                    } else {
                        self.c32(u32::MAX)
                    };
                    let a_min = self.op(bl, Op::IEqual, &[x, min]);
                    let b_m1 = self.op(bl, Op::IEqual, &[y, m1]);
                    let ovf = self.op(bl, Op::LogicalAnd, &[a_min, b_m1]);
                    bad = self.op(bl, Op::LogicalOr, &[bad, ovf]);
                }
                let z = self.c32(0);
                self.call_fault(bad, FaultCode::DivByZero, pc as u32, 0, z, z);
                y = self.op(t, Op::Select, &[bad, one, y]);
                let o = match (op, signed) {
                    (AluOp::Div, false) => Op::UDiv,
                    (AluOp::Div, true) => Op::SDiv,
                    (_, false) => Op::UMod,
                    (_, true) => Op::SRem,
                };
                self.op(t, o, &[x, y])
            }
            AluOp::Min => self.glsl(t, if signed { GLSL_SMIN } else { GLSL_UMIN }, &[x, y]),
            AluOp::Max => self.glsl(t, if signed { GLSL_SMAX } else { GLSL_UMAX }, &[x, y]),
            AluOp::And => self.op(t, Op::BitwiseAnd, &[x, y]),
            AluOp::Or => self.op(t, Op::BitwiseOr, &[x, y]),
            AluOp::Xor => self.op(t, Op::BitwiseXor, &[x, y]),
            AluOp::Shl => {
                let s = shift(self);
                self.op(t, Op::ShiftLeftLogical, &[x, s])
            }
            AluOp::Shr => {
                let s = shift(self);
                let o = if signed {
                    Op::ShiftRightArithmetic
                } else {
                    Op::ShiftRightLogical
                };
                self.op(t, o, &[x, s])
            }
        };
        let (r, w) = match v {
            V::F32 => (self.op(u, Op::Bitcast, &[r]), Width::B32),
            V::U32 => (r, Width::B32),
            V::U64 => (r, Width::B64),
        };
        self.assign(dst, r, w);
    }
}
