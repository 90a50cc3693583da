//! One instruction: arithmetic, control flow, fences and special registers (`inst`), and barriers with
//! their scope and fence flags.

use super::*;

impl Lower<'_> {
    pub(super) fn inst(&mut self, i: &InstSyn) -> R<()> {
        let m = i.mnemonic.as_str();
        let loc = i.loc;
        if i.pred.is_some() && m != "bra" {
            return Err(self.err(
                loc,
                format!("only `bra` can be predicated, not `{m}`: branch around the instruction instead"),
            ));
        }
        let ty1 = Allow {
            ty: 1,
            ..Allow::default()
        };
        let alu = match m {
            "add" => Some(AluOp::Add),
            "sub" => Some(AluOp::Sub),
            "mul" => Some(AluOp::Mul),
            "div" => Some(AluOp::Div),
            "rem" => Some(AluOp::Rem),
            "min" => Some(AluOp::Min),
            "max" => Some(AluOp::Max),
            "and" => Some(AluOp::And),
            "or" => Some(AluOp::Or),
            "xor" => Some(AluOp::Xor),
            "shl" => Some(AluOp::Shl),
            "shr" => Some(AluOp::Shr),
            _ => None,
        };
        if let Some(op) = alu {
            let q = self.quals(i, ty1)?;
            let ty = q.tys[0].0;
            if ty.is_float()
                && matches!(
                    op,
                    AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Shl | AluOp::Shr
                )
            {
                return Err(self.err(
                    q.tys[0].1,
                    format!("`{m}` is a bit operation: use an integer type, not f32"),
                ));
            }
            let o = self.operands(i, 3, &format!("`{m}.{} %dst, a, b`", ty.name()))?;
            let inst = Inst::Alu {
                op,
                ty,
                dst: self.dst(&o[0])?,
                a: self.src(&o[1], ty)?,
                b: self.src(&o[2], ty)?,
            };
            self.emit(inst, loc);
            return Ok(());
        }
        match m {
            "neg" | "not" => {
                let q = self.quals(i, ty1)?;
                let (ty, tloc) = q.tys[0];
                let o = self.operands(i, 2, &format!("`{m}.{} %dst, a`", ty.name()))?;
                let (dst, a) = (self.dst(&o[0])?, self.src(&o[1], ty)?);
                let all = if ty.width() == Width::B32 {
                    0xFFFF_FFFF
                } else {
                    u64::MAX
                };
                let inst = match (m, ty.is_float()) {
                    ("not", true) => {
                        return Err(self.err(tloc, "`not` is a bit operation: use an integer type"))
                    }
                    ("not", false) => Inst::Alu {
                        op: AluOp::Xor,
                        ty,
                        dst,
                        a,
                        b: ir::Operand::Imm(all),
                    },
                    // -x as x * -1 keeps the sign of zero right.
                    (_, true) => Inst::Alu {
                        op: AluOp::Mul,
                        ty,
                        dst,
                        a,
                        b: ir::Operand::Imm(f32_bits(-1.0)),
                    },
                    (_, false) => Inst::Alu {
                        op: AluOp::Sub,
                        ty,
                        dst,
                        a: ir::Operand::Imm(0),
                        b: a,
                    },
                };
                self.emit(inst, loc);
            }
            "mov" => {
                let q = self.quals(i, ty1)?;
                let ty = q.tys[0].0;
                let o = self.operands(i, 2, &format!("`mov.{} %dst, source`", ty.name()))?;
                let dst = self.dst(&o[0])?;
                if let Operand::Reg { name, dim, loc: rl } = &o[1] {
                    if !self.regs.contains_key(name) {
                        let d = match dim.as_deref() {
                            None => None,
                            Some("x") => Some(Dim::X),
                            Some("y") => Some(Dim::Y),
                            Some("z") => Some(Dim::Z),
                            Some(other) => {
                                return Err(self.err(
                                    *rl,
                                    format!("found dimension `.{other}` but expected .x, .y or .z"),
                                ))
                            }
                        };
                        let which = special(name, d).ok_or_else(|| {
                            if d.is_some() && is_special(name) {
                                self.err(*rl, format!("special register `%{name}` has no dimensions"))
                            } else {
                                self.unknown_reg(name, *rl)
                            }
                        })?;
                        self.emit(Inst::ReadSpecial { dst, which }, loc);
                        return Ok(());
                    }
                }
                let src = self.src(&o[1], ty)?;
                self.emit(Inst::Mov { dst, src }, loc);
            }
            "setp" => {
                let q = self.quals(
                    i,
                    Allow {
                        ty: 1,
                        cmp: true,
                        ..Allow::default()
                    },
                )?;
                let ty = q.tys[0].0;
                let Some(op) = q.cmp else {
                    return Err(self.err(
                        loc,
                        "`setp` needs a comparison: eq, ne, lt, le, gt or ge (like `setp.lt.u32`)",
                    ));
                };
                let o = self.operands(i, 3, "`setp.CMP.TYPE %p, a, b`")?;
                let inst = Inst::Cmp {
                    op,
                    ty,
                    dst: self.dst(&o[0])?,
                    a: self.src(&o[1], ty)?,
                    b: self.src(&o[2], ty)?,
                };
                self.emit(inst, loc);
            }
            "selp" => {
                let q = self.quals(i, ty1)?;
                let ty = q.tys[0].0;
                let o = self.operands(i, 4, "`selp.TYPE %dst, a, b, %p` (a when %p is non-zero)")?;
                let inst = Inst::Select {
                    dst: self.dst(&o[0])?,
                    a: self.src(&o[1], ty)?,
                    b: self.src(&o[2], ty)?,
                    cond: self.src_reg(&o[3])?,
                };
                self.emit(inst, loc);
            }
            "cvt" => {
                let q = self.quals(
                    i,
                    Allow {
                        ty: 2,
                        ..Allow::default()
                    },
                )?;
                let (to, from) = (q.tys[0].0, q.tys[1].0);
                let o = self.operands(i, 2, "`cvt.TO.FROM %dst, %src`")?;
                let inst = Inst::Cvt {
                    dst: self.dst(&o[0])?,
                    src: self.src_reg(&o[1])?,
                    from,
                    to,
                };
                self.emit(inst, loc);
            }
            "bra" => {
                self.quals(i, Allow::default())?;
                let o = self.operands(i, 1, "`bra LABEL`")?;
                let (label, lloc) = match &o[0] {
                    Operand::Expr(Expr::Name(n, l), _) => (n.clone(), *l),
                    other => {
                        return Err(self.err(
                            other.loc(),
                            format!("found {} but expected a label", describe(other)),
                        ))
                    }
                };
                let cond = match &i.pred {
                    None => None,
                    Some((r, nz, ploc)) => Some((self.read_reg(r, &None, *ploc)?, *nz)),
                };
                self.fixups.push((self.insts.len(), label, lloc));
                self.emit(Inst::Branch { target: 0, cond }, loc);
            }
            "exit" | "ret" => {
                self.quals(i, Allow::default())?;
                self.operands(i, 0, &format!("`{m}` takes no operands"))?;
                self.emit(Inst::Exit, loc);
            }
            "ld" | "st" => self.load_store(i)?,
            "atom" | "red" => self.atomic(i)?,
            "fence" => {
                let q = self.quals(
                    i,
                    Allow {
                        order: true,
                        scope: true,
                        spaces: true,
                        ..Allow::default()
                    },
                )?;
                self.operands(i, 0, "`fence.ORDER.SCOPE` takes no operands")?;
                let ord = match q.order {
                    Some((OrdWord::Acquire, _)) => FenceOrd::Acquire,
                    Some((OrdWord::Release, _)) => FenceOrd::Release,
                    Some((OrdWord::AcqRel, _)) => FenceOrd::AcqRel,
                    Some((OrdWord::SeqCst, _)) => FenceOrd::SeqCst,
                    Some((o, oloc)) => {
                        return Err(self.err(
                            oloc,
                            format!(
                                "found order `{}` but a fence takes acquire, release, acq_rel or seq_cst (a {} fence orders nothing)",
                                o.name(),
                                o.name()
                            ),
                        ))
                    }
                    None => {
                        return Err(self.err(
                            loc,
                            "`fence` needs an order: acquire, release, acq_rel or seq_cst (like `fence.acq_rel.device`)",
                        ))
                    }
                };
                let spaces = if q.spaces == SpaceSet::NONE {
                    SpaceSet::BOTH
                } else {
                    q.spaces
                };
                let scope = q.scope.map(|s| s.0).unwrap_or(Scope::Device);
                self.emit(Inst::Fence { ord, scope, spaces }, loc);
            }
            "barrier" | "bar" | "sub_group_barrier" => self.barrier(i)?,
            _ => {
                return Err(self.err(
                    loc,
                    format!(
                        "found `{m}` but expected an instruction: add sub mul div rem min max and or xor shl shr neg not \
                         mov setp selp cvt bra exit ld st atom red fence barrier sub_group_barrier"
                    ),
                ))
            }
        }
        Ok(())
    }

    pub(super) fn barrier(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let m = i.mnemonic.as_str();
        if m == "bar" {
            // PTX spellings: bar.sync{ a{, b}} and bar.arrive a, b (work-group barriers 0-15 with an
            // optional thread count), bar.warp.sync (sub-group).
            let words: Vec<&str> = i.quals.iter().map(|(w, _)| w.as_str()).collect();
            let (kind, scope) = match words.as_slice() {
                ["sync"] | ["cta", "sync"] | ["arrive"] | ["cta", "arrive"] => {
                    let arrive = words.last() == Some(&"arrive");
                    let form = if arrive {
                        "`bar.arrive a, b`: a barrier id 0-15 and a thread count"
                    } else {
                        "`bar.sync`, `bar.sync a` or `bar.sync a, b`: a barrier id 0-15 and a thread count"
                    };
                    if i.operands.len() > 2 || (arrive && i.operands.len() != 2) {
                        self.operands(i, 2, form)?;
                    }
                    let id = match i.operands.first() {
                        None => 0,
                        Some(o) => {
                            let v = self.const_int(o, form)?;
                            if !(0..i64::from(BARRIERS_PER_GROUP)).contains(&v) {
                                return Err(self.err(
                                    o.loc(),
                                    format!("found barrier id {v} but expected 0 to 15 (16 barriers per work-group)"),
                                ));
                            }
                            v as u8
                        }
                    };
                    let threads = match i.operands.get(1) {
                        None => None,
                        Some(o) => {
                            let v = self.const_int(o, form)?;
                            if v <= 0 || v % 32 != 0 || v > i64::from(u32::MAX) {
                                return Err(self.err(
                                    o.loc(),
                                    format!("found thread count {v} but expected a positive multiple of the warp size (32)"),
                                ));
                            }
                            Some(v as u32)
                        }
                    };
                    let kind = if id == 0 && threads.is_none() && !arrive {
                        BarrierKind::WorkGroup
                    } else {
                        BarrierKind::Named(CtaBarrier {
                            id,
                            threads,
                            op: if arrive { BarrierOp::Arrive } else { BarrierOp::Sync },
                        })
                    };
                    (kind, Scope::WorkGroup)
                }
                ["warp", "sync"] => {
                    self.operands(i, 0, "`bar.warp.sync` takes no operands")?;
                    (BarrierKind::SubGroup, Scope::SubGroup)
                }
                _ => return Err(self.err(
                    loc,
                    "found `bar` with other qualifiers but expected `bar.sync`, `bar.arrive` or `bar.warp.sync`",
                )),
            };
            self.emit(
                Inst::Barrier {
                    kind,
                    spaces: SpaceSet::BOTH,
                    scope,
                },
                loc,
            );
            return Ok(());
        }
        let wg = m == "barrier";
        let q = self.quals(
            i,
            Allow {
                spaces: true,
                scope: wg,
                ..Allow::default()
            },
        )?;
        self.operands(i, 0, &format!("`{m}` takes no operands"))?;
        let spaces = if q.spaces == SpaceSet::NONE {
            SpaceSet::BOTH
        } else {
            q.spaces
        };
        if wg {
            // OpenCL 2.0 `work_group_barrier(flags, scope)`: the rule every front end shares.
            let (scope, sloc) = q.scope.unwrap_or((Scope::WorkGroup, loc));
            let inst = crate::barrier::work_group_barrier(spaces, scope)
                .map_err(|e| self.err(sloc, e.to_string()))?;
            self.emit(inst, loc);
            return Ok(());
        }
        self.emit(
            Inst::Barrier {
                kind: BarrierKind::SubGroup,
                spaces,
                scope: Scope::SubGroup,
            },
            loc,
        );
        Ok(())
    }
}
