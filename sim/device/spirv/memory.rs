//! Memory accesses: element addresses with their bounds checks, pointers into the global and local views,
//! plain reads and writes, atomic read-modify-writes and the compare-exchange loops that emulate what
//! SPIR-V lacks.

use super::*;

impl Gen<'_> {
    /// The address computation and its checks (as in the WGSL translation); returns the word index.
    pub(super) fn address(
        &mut self,
        pc: usize,
        space: Space,
        addr: Address,
        w: Width,
    ) -> Result<u32, TranslateError> {
        let (u, u64_, b) = (self.ids.u32_, self.ids.u64_, self.ids.bool_);
        let bytes = w.bytes();
        let base_wide = matches!(addr.base, Operand::Reg(r) if self.wide[r as usize])
            || matches!(addr.base, Operand::Imm(v) if v > u32::MAX as u64);
        let (a, ahi, fits) = if base_wide {
            if u64_ == 0 {
                return Err(err(
                    self.k,
                    pc,
                    "needs 64-bit integers, which this adapter lacks (Int64)",
                ));
            }
            let base = self.opnd(addr.base, V::U64);
            let off = self.m.c64(addr.offset as u64);
            let a64 = self.op(u64_, Op::IAdd, &[base, off]);
            let a = self.op(u, Op::UConvert, &[a64]);
            let c32 = self.m.c64(32);
            let hi64 = self.op(u64_, Op::ShiftRightLogical, &[a64, c32]);
            let hi = self.op(u, Op::UConvert, &[hi64]);
            let z = self.c32(0);
            let fits = self.op(b, Op::IEqual, &[hi, z]);
            (a, hi, fits)
        } else {
            let base = self.opnd(addr.base, V::U32);
            let off = addr.offset;
            if (0..=u32::MAX as i64).contains(&off) {
                let c = self.c32(off as u32);
                let a = self.op(u, Op::IAdd, &[base, c]);
                let wrapped = self.op(b, Op::ULessThan, &[a, base]);
                let hi = self.bool_to_u32(wrapped);
                let fits = self.op(b, Op::LogicalNot, &[wrapped]);
                (a, hi, fits)
            } else if (-(u32::MAX as i64)..0).contains(&off) {
                let c = self.c32(off.unsigned_abs() as u32);
                let a = self.op(u, Op::ISub, &[base, c]);
                let under = self.op(b, Op::ULessThan, &[base, c]);
                let (ones, z) = (self.c32(u32::MAX), self.c32(0));
                let hi = self.op(u, Op::Select, &[under, ones, z]);
                let fits = self.op(b, Op::LogicalNot, &[under]);
                (a, hi, fits)
            } else {
                let c = self.c32(off as u64 as u32);
                let a = self.op(u, Op::IAdd, &[base, c]);
                (a, self.c32(u32::MAX), self.m.cbool(false))
            }
        };
        let (in_range, code_space) = match space {
            Space::Global => {
                let mut any = self.m.cbool(false);
                for (base, len) in self.placed.clone() {
                    if len < bytes as u64 {
                        continue;
                    }
                    let cb = self.c32(base as u32);
                    let lim = self.c32((len - bytes as u64) as u32);
                    let ge = self.op(b, Op::UGreaterThanEqual, &[a, cb]);
                    let d = self.op(u, Op::ISub, &[a, cb]);
                    let le = self.op(b, Op::ULessThanEqual, &[d, lim]);
                    let both = self.op(b, Op::LogicalAnd, &[ge, le]);
                    any = self.op(b, Op::LogicalOr, &[any, both]);
                }
                (any, 0u32)
            }
            Space::Local => {
                let lb = self.k.local_bytes;
                let c = if lb >= bytes {
                    let lim = self.c32(lb - bytes);
                    self.op(b, Op::ULessThanEqual, &[a, lim])
                } else {
                    self.m.cbool(false)
                };
                (c, 1)
            }
        };
        let detail = code_space << 8 | bytes;
        let ok = self.op(b, Op::LogicalAnd, &[fits, in_range]);
        let bad = self.op(b, Op::LogicalNot, &[ok]);
        self.call_fault(bad, FaultCode::OutOfBounds, pc as u32, detail, a, ahi);
        let mask = self.c32(bytes - 1);
        let low = self.op(u, Op::BitwiseAnd, &[a, mask]);
        let z = self.c32(0);
        let mis = self.op(b, Op::INotEqual, &[low, z]);
        self.call_fault(mis, FaultCode::Misaligned, pc as u32, detail, a, z);
        let two = self.c32(2);
        let rel = match space {
            Space::Global => {
                let gb = self.c32(GLOBAL_BASE as u32);
                self.op(u, Op::ISub, &[a, gb])
            }
            Space::Local => a,
        };
        Ok(self.op(u, Op::ShiftRightLogical, &[rel, two]))
    }

    /// A pointer to the word (or, for 64-bit atomics, the double word) at word index `idx`.
    pub(super) fn pointer(&mut self, space: Space, idx: u32, w: Width) -> u32 {
        let u = self.ids.u32_;
        let zero = self.c32(0);
        match (space, w) {
            (Space::Local, _) => {
                let p = self.m.ptr(SC::Workgroup, u);
                self.op(p, Op::AccessChain, &[self.ids.lmem, idx])
            }
            (Space::Global, Width::B32) => {
                let p = self.m.ptr(SC::StorageBuffer, u);
                self.op(p, Op::AccessChain, &[self.ids.mem, zero, idx])
            }
            (Space::Global, Width::B64) => {
                let p = self.m.ptr(SC::StorageBuffer, self.ids.u64_);
                let one = self.c32(1);
                let i = self.op(u, Op::ShiftRightLogical, &[idx, one]);
                self.op(p, Op::AccessChain, &[self.ids.mem64, zero, i])
            }
        }
    }

    pub(super) fn word_ptr(&mut self, space: Space, idx: u32) -> u32 {
        self.pointer(space, idx, Width::B32)
    }

    /// A non-atomic read; `NonPrivatePointer` puts it under the availability and visibility that
    /// releases and acquires perform.
    pub(super) fn plain_read(&mut self, space: Space, idx: u32, w: Width) -> u32 {
        let u = self.ids.u32_;
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        let p = self.word_ptr(space, idx);
        let lo = self.op(u, Op::Load, &[p, np]);
        if w == Width::B32 {
            return lo;
        }
        let one = self.c32(1);
        let i1 = self.op(u, Op::IAdd, &[idx, one]);
        let p1 = self.word_ptr(space, i1);
        let hi = self.op(u, Op::Load, &[p1, np]);
        let u64_ = self.ids.u64_;
        let lo = self.op(u64_, Op::UConvert, &[lo]);
        let hi = self.op(u64_, Op::UConvert, &[hi]);
        let c32 = self.c32(32);
        let hi = self.op(u64_, Op::ShiftLeftLogical, &[hi, c32]);
        self.op(u64_, Op::BitwiseOr, &[lo, hi])
    }

    pub(super) fn plain_write(&mut self, space: Space, idx: u32, w: Width, v: u32) {
        let u = self.ids.u32_;
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        let p = self.word_ptr(space, idx);
        if w == Width::B32 {
            self.emit(Op::Store, &[p, v, np]);
            return;
        }
        let lo = self.op(u, Op::UConvert, &[v]);
        self.emit(Op::Store, &[p, lo, np]);
        let c32 = self.c32(32);
        let hi64 = self.op(self.ids.u64_, Op::ShiftRightLogical, &[v, c32]);
        let hi = self.op(u, Op::UConvert, &[hi64]);
        let one = self.c32(1);
        let i1 = self.op(u, Op::IAdd, &[idx, one]);
        let p1 = self.word_ptr(space, i1);
        self.emit(Op::Store, &[p1, hi, np]);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn rmw(
        &mut self,
        pc: usize,
        dst: Option<Reg>,
        op: RmwOp,
        space: Space,
        addr: Address,
        operand: Operand,
        ty: Ty,
        ord: RmwOrd,
        scope: Scope,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc, space)?;
        }
        self.note_weakened(pc, "atomic", ord.order(), scope);
        let idx = self.address(pc, space, addr, w)?;
        let (v, t) = if w == Width::B64 {
            (V::U64, self.ids.u64_)
        } else {
            (V::U32, self.ids.u32_)
        };
        let x = self.opnd(operand, v);
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let native = match (ty, op) {
            (Ty::F32, _) | (_, RmwOp::Inc | RmwOp::Dec) => None,
            (_, RmwOp::Add) => Some(Op::AtomicIAdd),
            (_, RmwOp::Sub) => Some(Op::AtomicISub),
            (_, RmwOp::And) => Some(Op::AtomicAnd),
            (_, RmwOp::Or) => Some(Op::AtomicOr),
            (_, RmwOp::Xor) => Some(Op::AtomicXor),
            (_, RmwOp::Exch) => Some(Op::AtomicExchange),
            (_, RmwOp::Min) if signed => Some(Op::AtomicSMin),
            (_, RmwOp::Max) if signed => Some(Op::AtomicSMax),
            (_, RmwOp::Min) => Some(Op::AtomicUMin),
            (_, RmwOp::Max) => Some(Op::AtomicUMax),
        };
        if native.is_none() {
            self.emulated.push(format!(
                "{}: atomic {} on {} emulated by a compare-exchange loop",
                self.k.where_is(pc),
                rmw_name(op),
                ty.name()
            ));
        }
        let order = ord.order();
        let r = self.guarded(t, |g| {
            let p = g.pointer(space, idx, w);
            let sc = g.scope(scope);
            let sem = g.sem(order, SpaceSet::BOTH);
            match native {
                Some(o) => g.op(t, o, &[p, sc, sem, x]),
                None => g.cas_loop(p, t, sc, order, |g, old| g.rmw_value(op, ty, old, x)),
            }
        });
        if let Some(d) = dst {
            self.assign(d, r, w);
        }
        Ok(())
    }

    /// `old = atomic load; loop { r = cas(p, old, new(old)); if r == old break; old = r }`; returns the
    /// value the successful exchange replaced. The exchange carries `order`; the loads are relaxed.
    pub(super) fn cas_loop(
        &mut self,
        p: u32,
        t: u32,
        sc: u32,
        order: MemOrder,
        new: impl Fn(&mut Self, u32) -> u32,
    ) -> u32 {
        let bl = self.ids.bool_;
        let relaxed = self.c32(0);
        let var = {
            let f = self.f.as_mut().unwrap();
            f.var(&mut self.m, t)
        };
        let init = self.op(t, Op::AtomicLoad, &[p, sc, relaxed]);
        self.store(var, init);
        let eq = self.sem(order, SpaceSet::BOTH);
        let fail = match order {
            MemOrder::Release | MemOrder::Relaxed => MemOrder::Relaxed,
            _ => MemOrder::Acquire,
        };
        let ne = self.sem(fail, SpaceSet::BOTH);
        let (header, body, cont, merge) = (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        self.emit(Op::Branch, &[header]);
        self.label(header);
        self.emit(Op::LoopMerge, &[merge, cont, 0]);
        self.emit(Op::Branch, &[body]);
        self.label(body);
        let old = self.load(t, var);
        let nv = new(self, old);
        let r = self.op(t, Op::AtomicCompareExchange, &[p, sc, eq, ne, nv, old]);
        self.store(var, r);
        let done = self.op(bl, Op::IEqual, &[r, old]);
        self.emit(Op::BranchConditional, &[done, merge, cont]);
        self.label(cont);
        self.emit(Op::Branch, &[header]);
        self.label(merge);
        self.load(t, var)
    }

    /// The new value of an emulated read-modify-write (`ir::eval::rmw`).
    pub(super) fn rmw_value(&mut self, op: RmwOp, ty: Ty, old: u32, v: u32) -> u32 {
        let w64 = ty.width() == Width::B64;
        let (t, bl, f) = (
            if w64 { self.ids.u64_ } else { self.ids.u32_ },
            self.ids.bool_,
            self.ids.f32_,
        );
        let (one, zero) = if w64 {
            (self.m.c64(1), self.m.c64(0))
        } else {
            (self.c32(1), self.c32(0))
        };
        match (ty, op) {
            (Ty::F32, op) if !eval::float_rmw(op) => old,
            (Ty::F32, RmwOp::Exch) => v,
            (Ty::F32, op) => {
                let a = self.op(f, Op::Bitcast, &[old]);
                let b = self.op(f, Op::Bitcast, &[v]);
                let r = match op {
                    RmwOp::Add => self.op(f, Op::FAdd, &[a, b]),
                    RmwOp::Sub => self.op(f, Op::FSub, &[a, b]),
                    RmwOp::Min => self.glsl(f, GLSL_FMIN, &[a, b]),
                    _ => self.glsl(f, GLSL_FMAX, &[a, b]),
                };
                self.op(t, Op::Bitcast, &[r])
            }
            (_, RmwOp::Inc) => {
                let ge = self.op(bl, Op::UGreaterThanEqual, &[old, v]);
                let inc = self.op(t, Op::IAdd, &[old, one]);
                self.op(t, Op::Select, &[ge, zero, inc])
            }
            (_, RmwOp::Dec) => {
                let z = self.op(bl, Op::IEqual, &[old, zero]);
                let gt = self.op(bl, Op::UGreaterThan, &[old, v]);
                let wrap = self.op(bl, Op::LogicalOr, &[z, gt]);
                let dec = self.op(t, Op::ISub, &[old, one]);
                self.op(t, Op::Select, &[wrap, v, dec])
            }
            _ => unreachable!("native read-modify-writes do not loop"),
        }
    }
}
