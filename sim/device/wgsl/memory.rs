//! Memory accesses in WGSL: element addresses with their bounds checks, reads and writes of the global and
//! local views (64-bit values as word pairs), atomic read-modify-writes and the compare-exchange loops that
//! emulate what WGSL lacks.

use super::*;

impl Gen<'_> {
    /// Emits the address computation and its checks; returns the name of the word index (`u32`).
    pub(super) fn address(
        &mut self,
        pc: usize,
        ind: &str,
        space: Space,
        addr: Address,
        w: Width,
    ) -> Result<String, TranslateError> {
        let bytes = w.bytes();
        let a = self.fresh();
        let ok = self.fresh();
        // The byte address as u32 plus whether it was representable; the simulator computes it as a
        // wrapping u64 sum, and an address that does not fit 32 bits is out of bounds on both sides.
        let base_wide = matches!(addr.base, Operand::Reg(r) if self.wide[r as usize])
            || matches!(addr.base, Operand::Imm(v) if v > u32::MAX as u64);
        let (ahi, fits) = if base_wide {
            self.need_int64(Some(pc))?;
            let a64 = self.fresh();
            let _ = writeln!(
                self.out,
                "{ind}let {a64} = {} + {}lu;",
                self.opnd(addr.base, View::U64),
                addr.offset as u64
            );
            let _ = writeln!(self.out, "{ind}let {a} = u32({a64});");
            (
                format!("u32({a64} >> 32u)"),
                format!("({a64} >> 32u) == 0lu"),
            )
        } else {
            let b = self.opnd(addr.base, View::U32);
            let off = addr.offset;
            if (0..=u32::MAX as i64).contains(&off) {
                let _ = writeln!(self.out, "{ind}let {a} = {b} + {off}u;");
                (format!("select(0u, 1u, {a} < {b})"), format!("{a} >= {b}"))
            } else if (-(u32::MAX as i64)..0).contains(&off) {
                let n = off.unsigned_abs();
                let _ = writeln!(self.out, "{ind}let {a} = {b} - {n}u;");
                (
                    format!("select(0u, 0xFFFFFFFFu, {b} < {n}u)"),
                    format!("{b} >= {n}u"),
                )
            } else {
                let _ = writeln!(self.out, "{ind}let {a} = {b} + {}u;", off as u64 as u32);
                ("0xFFFFFFFFu".into(), "false".into())
            }
        };
        let (in_range, code_space) = match space {
            Space::Global => (format!("in_global{bytes}({a})"), 0u32),
            Space::Local => {
                let lb = self.k.local_bytes;
                let c = if lb >= bytes {
                    format!("{a} <= {}u", lb - bytes)
                } else {
                    "false".into()
                };
                (c, 1)
            }
        };
        let detail = code_space << 8 | bytes;
        let _ = writeln!(self.out, "{ind}let {ok} = {fits} && {in_range};");
        let _ = writeln!(
            self.out,
            "{ind}if (!{ok}) {{ fault({}u, {pc}u, {detail}u, {a}, {ahi}); }}",
            FaultCode::OutOfBounds as u32
        );
        let _ = writeln!(
            self.out,
            "{ind}if (({a} & {}u) != 0u) {{ fault({}u, {pc}u, {detail}u, {a}, 0u); }}",
            bytes - 1,
            FaultCode::Misaligned as u32
        );
        let idx = self.fresh();
        match space {
            Space::Global => {
                let _ = writeln!(self.out, "{ind}let {idx} = ({a} - {GLOBAL_BASE}u) >> 2u;");
            }
            Space::Local => {
                let _ = writeln!(self.out, "{ind}let {idx} = {a} >> 2u;");
            }
        }
        Ok(idx)
    }

    /// A read of `w` at word index `idx` (an expression of type u32 or u64).
    pub(super) fn read(&mut self, space: Space, idx: &str, w: Width, atomic: bool) -> String {
        match (space, w) {
            (Space::Global, Width::B32) if atomic => {
                self.bindings.insert(Binding::Atomic32);
                format!("atomicLoad(&mem_a[{idx}])")
            }
            (Space::Global, Width::B64) if atomic => {
                self.bindings.insert(Binding::Atomic64);
                format!("atomicLoad(&mem_a64[{idx} >> 1u])")
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Plain);
                format!("mem[{idx}]")
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Plain);
                format!("(u64(mem[{idx}]) | (u64(mem[{idx} + 1u]) << 32u))")
            }
            (Space::Local, Width::B32) => self.lword(idx),
            (Space::Local, Width::B64) => {
                let lo = self.lword(idx);
                let hi = self.lword(&format!("{idx} + 1u"));
                format!("(u64({lo}) | (u64({hi}) << 32u))")
            }
        }
    }

    /// A local word read.
    pub(super) fn lword(&self, idx: &str) -> String {
        if self.local_atomic {
            format!("atomicLoad(&lmem[{idx}])")
        } else {
            format!("lmem[{idx}]")
        }
    }

    pub(super) fn lstore(&self, idx: &str, v: &str) -> String {
        if self.local_atomic {
            format!("atomicStore(&lmem[{idx}], {v});")
        } else {
            format!("lmem[{idx}] = {v};")
        }
    }

    pub(super) fn write(
        &mut self,
        ind: &str,
        space: Space,
        idx: &str,
        w: Width,
        atomic: bool,
        src: Operand,
    ) {
        let s = match (space, w) {
            (Space::Global, Width::B32) if atomic => {
                self.bindings.insert(Binding::Atomic32);
                format!("atomicStore(&mem_a[{idx}], {});", self.opnd(src, View::U32))
            }
            (Space::Global, Width::B64) if atomic => {
                self.bindings.insert(Binding::Atomic64);
                format!(
                    "atomicStore(&mem_a64[{idx} >> 1u], {});",
                    self.opnd(src, View::U64)
                )
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Plain);
                format!("mem[{idx}] = {};", self.opnd(src, View::U32))
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Plain);
                let v = self.opnd(src, View::U64);
                format!("mem[{idx}] = u32({v}); mem[{idx} + 1u] = u32({v} >> 32u);")
            }
            (Space::Local, Width::B32) => self.lstore(idx, &self.opnd(src, View::U32)),
            (Space::Local, Width::B64) => {
                let v = self.opnd(src, View::U64);
                format!(
                    "{} {}",
                    self.lstore(idx, &format!("u32({v})")),
                    self.lstore(&format!("{idx} + 1u"), &format!("u32({v} >> 32u)"))
                )
            }
        };
        let _ = writeln!(self.out, "{ind}if (f_code == 0u) {{ {s} }}");
    }

    /// The WGSL pointer of an atomic of width `w` at word index `idx`, and the binding it uses.
    pub(super) fn atomic_ptr(
        &mut self,
        space: Space,
        idx: &str,
        w: Width,
        signed_minmax: bool,
    ) -> String {
        match (space, w) {
            (Space::Local, _) => format!("&lmem[{idx}]"),
            (Space::Global, Width::B32) if signed_minmax => {
                self.bindings.insert(Binding::AtomicI32);
                format!("&mem_ai[{idx}]")
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Atomic32);
                format!("&mem_a[{idx}]")
            }
            (Space::Global, Width::B64) if signed_minmax => {
                self.bindings.insert(Binding::AtomicI64);
                format!("&mem_ai64[{idx} >> 1u]")
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Atomic64);
                format!("&mem_a64[{idx} >> 1u]")
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn rmw(
        &mut self,
        pc: usize,
        ind: &str,
        dst: Option<Reg>,
        op: RmwOp,
        space: Space,
        addr: Address,
        operand: Operand,
        ty: Ty,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc)?;
            if space == Space::Local {
                return Err(self.local64(pc));
            }
        }
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let minmax = matches!(op, RmwOp::Min | RmwOp::Max);
        let native_fn = match op {
            RmwOp::Add => Some("atomicAdd"),
            RmwOp::Sub => Some("atomicSub"),
            RmwOp::And => Some("atomicAnd"),
            RmwOp::Or => Some("atomicOr"),
            RmwOp::Xor => Some("atomicXor"),
            RmwOp::Exch => Some("atomicExchange"),
            RmwOp::Min => Some("atomicMin"),
            RmwOp::Max => Some("atomicMax"),
            RmwOp::Inc | RmwOp::Dec => None,
        }
        // f32 atomics and signed min/max on (u32-typed) local memory have no native WGSL form here.
        .filter(|_| ty != Ty::F32 && !(space == Space::Local && signed && minmax));
        let idx = self.address(pc, ind, space, addr, w)?;
        let uv = if w == Width::B64 {
            View::U64
        } else {
            View::U32
        };
        let (t, zero) = if w == Width::B64 {
            ("u64", "0lu")
        } else {
            ("u32", "0u")
        };
        let wrap = |e: String| match w {
            Width::B32 => Val::W32(e),
            Width::B64 => Val::W64(e),
        };
        match native_fn {
            Some(f) => {
                let sm = signed && minmax;
                let p = self.atomic_ptr(space, &idx, w, sm);
                let (v, e) = if sm {
                    let sv = if w == Width::B64 {
                        View::I64
                    } else {
                        View::I32
                    };
                    let call = format!("{f}({p}, {})", self.opnd(operand, sv));
                    let back = if w == Width::B64 { "u64" } else { "u32" };
                    (call.clone(), format!("bitcast<{back}>({call})"))
                } else {
                    let call = format!("{f}({p}, {})", self.opnd(operand, uv));
                    (call.clone(), call)
                };
                match dst {
                    Some(d) => {
                        let r = self.fresh();
                        let _ = writeln!(
                            self.out,
                            "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ {r} = {e}; }}"
                        );
                        self.assign(ind, d, wrap(r));
                    }
                    None => {
                        let _ = writeln!(self.out, "{ind}if (f_code == 0u) {{ _ = {v}; }}");
                    }
                }
            }
            None => {
                self.emulated.push(format!(
                    "{}: atomic {} on {} emulated by a compare-exchange loop",
                    self.k.where_is(pc),
                    rmw_name(op),
                    ty.name()
                ));
                let p = self.atomic_ptr(space, &idx, w, false);
                let old = self.fresh();
                let v = self.opnd(operand, uv);
                let new = rmw_expr(op, ty, &old, &v);
                let _ = writeln!(
                    self.out,
                    "{ind}var {old}: {t} = {zero}; if (f_code == 0u) {{ {old} = atomicLoad({p}); \
                     loop {{ let r = atomicCompareExchangeWeak({p}, {old}, {new}); \
                     if (r.exchanged) {{ break; }} {old} = r.old_value; }} }}"
                );
                if let Some(d) = dst {
                    self.assign(ind, d, wrap(old));
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn cas(
        &mut self,
        pc: usize,
        ind: &str,
        dst: Option<Reg>,
        space: Space,
        addr: Address,
        expected: Operand,
        desired: Operand,
        ty: Ty,
        weak: bool,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc)?;
            if space == Space::Local {
                return Err(self.local64(pc));
            }
        }
        let idx = self.address(pc, ind, space, addr, w)?;
        let uv = if w == Width::B64 {
            View::U64
        } else {
            View::U32
        };
        let p = self.atomic_ptr(space, &idx, w, false);
        let (e, d) = (self.opnd(expected, uv), self.opnd(desired, uv));
        let r = self.fresh();
        let (t, zero) = if w == Width::B64 {
            ("u64", "0lu")
        } else {
            ("u32", "0u")
        };
        if weak {
            let _ = writeln!(
                self.out,
                "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ \
                 {r} = atomicCompareExchangeWeak({p}, {e}, {d}).old_value; }}"
            );
        } else {
            // A strong compare-exchange fails only when the value differs: retry spurious failures.
            let _ = writeln!(
                self.out,
                "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ loop {{ \
                 let c = atomicCompareExchangeWeak({p}, {e}, {d}); {r} = c.old_value; \
                 if (c.exchanged || c.old_value != {e}) {{ break; }} }} }}"
            );
        }
        if let Some(dst) = dst {
            let v = match w {
                Width::B32 => Val::W32(r),
                Width::B64 => Val::W64(r),
            };
            self.assign(ind, dst, v);
        }
        Ok(())
    }
}
