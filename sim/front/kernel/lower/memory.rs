//! Memory instructions: loads, stores and atomics with their orders and scopes, and the lowering of their
//! addresses (buffer elements, local arrays, constant indices).

use super::*;

impl Lower<'_> {
    pub(super) fn load_store(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let is_load = i.mnemonic == "ld";
        let q = self.quals(
            i,
            Allow {
                ty: 1,
                order: true,
                scope: true,
                space: true,
                ..Allow::default()
            },
        )?;
        let ty = q.tys[0].0;
        let word = q.order.map(|o| o.0).unwrap_or(OrdWord::Plain);
        if word == OrdWord::Plain {
            if let Some((s, sloc)) = q.scope {
                return Err(self.err(
                    sloc,
                    format!(
                        "found scope `{s}` on a plain (non-atomic) access: add an order (like `.relaxed`) to make it atomic"
                    ),
                ));
            }
        }
        let bad = |what: &str, legal: &str| {
            let (o, oloc) = q.order.expect("a non-plain order was given");
            Err(self.err(
                oloc,
                format!("found order `{}` but {what} takes {legal}", o.name()),
            ))
        };
        if is_load {
            let ord = match word {
                OrdWord::Plain => LoadOrd::Plain,
                OrdWord::Relaxed => LoadOrd::Relaxed,
                OrdWord::Acquire => LoadOrd::Acquire,
                OrdWord::SeqCst => LoadOrd::SeqCst,
                OrdWord::Release | OrdWord::AcqRel => {
                    return bad(
                        "a load",
                        "plain, relaxed, acquire or seq_cst (a load cannot release)",
                    )
                }
            };
            let o = self.operands(i, 2, "`ld.ORDER.SCOPE.TYPE %dst, ADDRESS`")?;
            let dst = self.dst(&o[0])?;
            let (space, addr) = self.address(&o[1], q.space, ty)?;
            let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
            self.emit(
                Inst::Load {
                    dst,
                    space,
                    addr,
                    ty,
                    ord,
                    scope,
                },
                loc,
            );
        } else {
            let ord = match word {
                OrdWord::Plain => StoreOrd::Plain,
                OrdWord::Relaxed => StoreOrd::Relaxed,
                OrdWord::Release => StoreOrd::Release,
                OrdWord::SeqCst => StoreOrd::SeqCst,
                OrdWord::Acquire | OrdWord::AcqRel => {
                    return bad(
                        "a store",
                        "plain, relaxed, release or seq_cst (a store cannot acquire)",
                    )
                }
            };
            let o = self.operands(i, 2, "`st.ORDER.SCOPE.TYPE ADDRESS, value`")?;
            let src = self.src(&o[1], ty)?;
            let (space, addr) = self.address(&o[0], q.space, ty)?;
            let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
            self.emit(
                Inst::Store {
                    space,
                    addr,
                    src,
                    ty,
                    ord,
                    scope,
                },
                loc,
            );
        }
        Ok(())
    }

    pub(super) fn atomic(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let m = i.mnemonic.as_str();
        let returning = m == "atom";
        let q = self.quals(
            i,
            Allow {
                ty: 1,
                order: true,
                scope: true,
                space: true,
                atom_op: true,
                cas: true,
                ..Allow::default()
            },
        )?;
        let (ty, tloc) = q.tys[0];
        let Some((op, oloc)) = q.op else {
            return Err(self.err(
                loc,
                format!("`{m}` needs an operation: add, sub, and, or, xor, min, max, exch, inc, dec or cas (like `{m}.add.u32`)"),
            ));
        };
        let ord = match q.order.map(|o| o.0).unwrap_or(OrdWord::Relaxed) {
            OrdWord::Plain => {
                return Err(self.err(
                    q.order.expect("given").1,
                    "found order `plain` but atomics take relaxed, acquire, release, acq_rel or seq_cst",
                ))
            }
            OrdWord::Relaxed => RmwOrd::Relaxed,
            OrdWord::Acquire => RmwOrd::Acquire,
            OrdWord::Release => RmwOrd::Release,
            OrdWord::AcqRel => RmwOrd::AcqRel,
            OrdWord::SeqCst => RmwOrd::SeqCst,
        };
        if op != AtomOp::Cas {
            if let Some(w) = q.weak {
                return Err(self.err(
                    oloc,
                    format!(
                        "found `.{}` but only `cas` is weak or strong",
                        if w { "weak" } else { "strong" }
                    ),
                ));
            }
            if let Some((_, floc)) = q.fail {
                return Err(self.err(floc, "a failure order belongs to `cas` only"));
            }
        }
        if let AtomOp::Rmw(r) = op {
            let name = i
                .quals
                .iter()
                .find(|(_, l)| *l == oloc)
                .map(|(w, _)| w.as_str())
                .unwrap_or("?");
            let ok = match r {
                RmwOp::Add | RmwOp::Sub | RmwOp::Min | RmwOp::Max | RmwOp::Exch => true,
                RmwOp::And | RmwOp::Or | RmwOp::Xor => !ty.is_float(),
                RmwOp::Inc | RmwOp::Dec => matches!(ty, Ty::U32 | Ty::U64),
            };
            if !ok {
                let legal = if matches!(r, RmwOp::Inc | RmwOp::Dec) {
                    "u32 or u64"
                } else {
                    "an integer type"
                };
                return Err(self.err(
                    tloc,
                    format!(
                        "found type `{}` but atomic `{name}` takes {legal}",
                        ty.name()
                    ),
                ));
            }
        }
        match op {
            AtomOp::Rmw(rmw) => {
                let (dst, o) = if returning {
                    let o =
                        self.operands(i, 3, "`atom.OP.ORDER.SCOPE.TYPE %old, ADDRESS, operand`")?;
                    (Some(self.dst(&o[0])?), &o[1..])
                } else {
                    let o = self.operands(i, 2, "`red.OP.ORDER.SCOPE.TYPE ADDRESS, operand`")?;
                    (None, o)
                };
                let operand = self.src(&o[1], ty)?;
                let (space, addr) = self.address(&o[0], q.space, ty)?;
                let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
                self.emit(
                    Inst::Rmw {
                        dst,
                        op: rmw,
                        space,
                        addr,
                        operand,
                        ty,
                        ord,
                        scope,
                    },
                    loc,
                );
            }
            AtomOp::Cas => {
                if !returning {
                    return Err(self.err(
                        oloc,
                        "`red` has no cas form (a compare-exchange is useless without its result): use `atom.cas`",
                    ));
                }
                let failure = match q.fail {
                    None => match ord {
                        // C++: the failure order defaults to the success order without its release part.
                        RmwOrd::Relaxed | RmwOrd::Release => LoadOrd::Relaxed,
                        RmwOrd::Acquire | RmwOrd::AcqRel => LoadOrd::Acquire,
                        RmwOrd::SeqCst => LoadOrd::SeqCst,
                    },
                    Some((OrdWord::Relaxed, _)) => LoadOrd::Relaxed,
                    Some((OrdWord::Acquire, _)) => LoadOrd::Acquire,
                    Some((OrdWord::SeqCst, _)) => LoadOrd::SeqCst,
                    Some((o, floc)) => {
                        return Err(self.err(
                            floc,
                            format!(
                                "found failure order `{}` but a failed compare-exchange is a load: fail_relaxed, fail_acquire or fail_seq_cst",
                                o.name()
                            ),
                        ))
                    }
                };
                let o = self.operands(
                    i,
                    4,
                    "`atom.cas.ORDER.SCOPE.TYPE %old, ADDRESS, expected, desired`",
                )?;
                let dst = Some(self.dst(&o[0])?);
                let expected = self.src(&o[2], ty)?;
                let desired = self.src(&o[3], ty)?;
                let (space, addr) = self.address(&o[1], q.space, ty)?;
                let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
                self.emit(
                    Inst::Cas {
                        dst,
                        space,
                        addr,
                        expected,
                        desired,
                        ty,
                        success: ord,
                        failure,
                        scope,
                        weak: q.weak.unwrap_or(false),
                    },
                    loc,
                );
            }
        }
        Ok(())
    }

    /// A memory operand; may emit address arithmetic into the scratch register.
    pub(super) fn address(
        &mut self,
        op: &Operand,
        qspace: Option<(Space, SrcLoc)>,
        ty: Ty,
    ) -> R<(Space, Address)> {
        let check_space = |l: &Self, actual: Space, what: &str| -> R<Space> {
            match qspace {
                Some((s, sloc)) if s != actual => Err(l.err(
                    sloc,
                    format!(
                        "found `.{}` but {what} is in {} memory",
                        s.name(),
                        actual.name()
                    ),
                )),
                _ => Ok(actual),
            }
        };
        match op {
            Operand::Addr(Bracket { base, offset }, loc) => {
                let off = match offset {
                    Some(e) => self.int(e, "an address offset")?,
                    None => 0,
                };
                match base {
                    BaseSyn::Reg(name, rloc) => {
                        let r = self.read_reg(name, &None, *rloc)?;
                        let space = qspace.map(|s| s.0).unwrap_or(Space::Global);
                        Ok((
                            space,
                            Address {
                                base: ir::Operand::Reg(r),
                                offset: off,
                            },
                        ))
                    }
                    BaseSyn::Name(n, nloc) if self.constant(n).is_none() => {
                        if let Some(b) = self.buffers.iter().position(|b| &b.name == n) {
                            let space = check_space(self, Space::Global, &format!("`{n}`"))?;
                            return Ok((
                                space,
                                Address {
                                    base: ir::Operand::Reg(b as Reg),
                                    offset: off,
                                },
                            ));
                        }
                        if let Some(a) = self.locals.get(n) {
                            let space = check_space(self, Space::Local, &format!("`{n}`"))?;
                            return Ok((
                                space,
                                Address {
                                    base: ir::Operand::Imm(a.offset as u64),
                                    offset: off,
                                },
                            ));
                        }
                        Err(self.err(
                            *nloc,
                            format!("unknown name `{n}`: expected a buffer, a local array, a parameter or a register"),
                        ))
                    }
                    BaseSyn::Name(n, _) => {
                        let v = self.constant(n).expect("checked");
                        self.constant_address(v.saturating_add(off), qspace, *loc)
                    }
                    BaseSyn::None => self.constant_address(off, qspace, *loc),
                }
            }
            Operand::Indexed(name, Bracket { base, offset }, loc) => {
                let (space, esize, len, local_off, ety) =
                    if let Some(b) = self.buffers.iter().position(|b| &b.name == name) {
                        let bf = &self.buffers[b];
                        (Space::Global, bf.elem.width().bytes(), bf.len, None, bf.elem)
                    } else if let Some(a) = self.locals.get(name) {
                        (Space::Local, a.ty.width().bytes(), a.len, Some(a.offset), a.ty)
                    } else {
                        let mut locals: Vec<&str> = self.locals.keys().map(|s| s.as_str()).collect();
                        locals.sort();
                        let known = self.buffers.iter().map(|b| b.name.as_str()).chain(locals);
                        return Err(self.err(
                            *loc,
                            format!(
                                "unknown buffer or local array `{name}` (declared: {})",
                                listing(known)
                            ),
                        ));
                    };
                check_space(self, space, &format!("`{name}`"))?;
                if ety.width() != ty.width() {
                    return Err(self.err(
                        *loc,
                        format!(
                            "`{name}` holds {} elements but the access is {}: element indexing needs the same width",
                            ety.name(),
                            ty.name()
                        ),
                    ));
                }
                let eoff = match offset {
                    Some(e) => self.int(e, "an index")?,
                    None => 0,
                };
                let idx_reg = match base {
                    BaseSyn::Reg(r, rloc) => Some(self.read_reg(r, &None, *rloc)?),
                    BaseSyn::Name(n, nloc) => {
                        let v = self.constant(n).ok_or_else(|| {
                            self.err(*nloc, format!("found `{n}` but an index is a register or a constant"))
                        })?;
                        return self.constant_element(name, v.saturating_add(eoff), len, esize, local_off, space, *loc);
                    }
                    BaseSyn::None => None,
                };
                let Some(ir_) = idx_reg else {
                    return self.constant_element(name, eoff, len, esize, local_off, space, *loc);
                };
                let byte_off = eoff.saturating_mul(esize as i64);
                let s = self.scratch();
                self.emit(
                    Inst::Alu {
                        op: AluOp::Shl,
                        ty: Ty::U64,
                        dst: s,
                        a: ir::Operand::Reg(ir_),
                        b: ir::Operand::Imm(esize.trailing_zeros() as u64),
                    },
                    *loc,
                );
                let offset = match local_off {
                    Some(lo) => byte_off.saturating_add(lo as i64),
                    None => {
                        let b = self.buffers.iter().position(|b| &b.name == name).expect("found above");
                        self.emit(
                            Inst::Alu {
                                op: AluOp::Add,
                                ty: Ty::U64,
                                dst: s,
                                a: ir::Operand::Reg(s),
                                b: ir::Operand::Reg(b as Reg),
                            },
                            *loc,
                        );
                        byte_off
                    }
                };
                Ok((
                    space,
                    Address {
                        base: ir::Operand::Reg(s),
                        offset,
                    },
                ))
            }
            Operand::Reg { name, loc, .. } => Err(self.err(
                *loc,
                format!("found register `%{name}` but expected an address: `[%{name}]`, `[buffer + 8]` or `buffer[%i]`"),
            )),
            Operand::Expr(_, loc) => Err(self.err(
                *loc,
                "found a value but expected an address: `[%r]`, `[buffer + 8]` or `buffer[%i]`",
            )),
        }
    }

    pub(super) fn constant_address(
        &self,
        a: i64,
        qspace: Option<(Space, SrcLoc)>,
        loc: SrcLoc,
    ) -> R<(Space, Address)> {
        if qspace.map(|s| s.0) != Some(Space::Local) {
            return Err(self.err(
                loc,
                "found a constant address but global memory is reached through a buffer (`[data + 8]`, `data[%i]`); \
                 a constant address needs `.local`",
            ));
        }
        if a < 0 || a as u64 >= self.local_bytes.max(1) {
            return Err(self.err(
                loc,
                format!(
                    "local address {a} is outside the {} bytes of local memory",
                    self.local_bytes
                ),
            ));
        }
        Ok((
            Space::Local,
            Address {
                base: ir::Operand::Imm(a as u64),
                offset: 0,
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn constant_element(
        &self,
        name: &str,
        idx: i64,
        len: u64,
        esize: u32,
        local_off: Option<u32>,
        space: Space,
        loc: SrcLoc,
    ) -> R<(Space, Address)> {
        if idx < 0 || idx as u64 >= len {
            return Err(self.err(
                loc,
                format!("index {idx} is out of bounds for `{name}` (length {len})"),
            ));
        }
        let bytes = idx as u64 * esize as u64;
        Ok((
            space,
            match local_off {
                Some(lo) => Address {
                    base: ir::Operand::Imm(lo as u64 + bytes),
                    offset: 0,
                },
                None => {
                    let b = self
                        .buffers
                        .iter()
                        .position(|b| b.name == name)
                        .expect("known buffer");
                    Address {
                        base: ir::Operand::Reg(b as Reg),
                        offset: bytes as i64,
                    }
                }
            },
        ))
    }
}
