//! An instruction's qualifiers (types, order, scope, space, comparison, operation) checked against what its
//! mnemonic allows, and its operand count.

use super::*;

impl Lower<'_> {
    pub(super) fn quals(&self, i: &InstSyn, a: Allow) -> R<Quals> {
        let mut q = Quals::default();
        let m = &i.mnemonic;
        for (w, loc) in &i.quals {
            let dup = |what: &str| {
                Err(self.err(*loc, format!("found `.{w}` but `{m}` already has {what}")))
            };
            if a.ty > 0 {
                if let Some(t) = parse_ty(w) {
                    if q.tys.len() as u8 == a.ty {
                        return dup("its type");
                    }
                    q.tys.push((t, *loc));
                    continue;
                }
            }
            if a.cas && (w == "weak" || w == "strong") {
                if q.weak.is_some() {
                    return dup("a strength");
                }
                q.weak = Some(w == "weak");
                continue;
            }
            if a.cas {
                if let Some(o) = w.strip_prefix("fail_").and_then(OrdWord::parse) {
                    if q.fail.is_some() {
                        return dup("a failure order");
                    }
                    q.fail = Some((o, *loc));
                    continue;
                }
            }
            if a.order {
                if let Some(o) = OrdWord::parse(w) {
                    if q.order.is_some() {
                        return dup("an order");
                    }
                    q.order = Some((o, *loc));
                    continue;
                }
            }
            if a.space || a.spaces {
                let sp = match w.as_str() {
                    "global" => Some(Space::Global),
                    "local" | "shared" => Some(Space::Local),
                    _ => None,
                };
                if let Some(sp) = sp {
                    if a.spaces {
                        match sp {
                            Space::Global => q.spaces.global = true,
                            Space::Local => q.spaces.local = true,
                        }
                    } else {
                        if q.space.is_some() {
                            return dup("a memory space");
                        }
                        q.space = Some((sp, *loc));
                    }
                    continue;
                }
            }
            if a.scope {
                if let Some(s) = Scope::parse(w) {
                    if q.scope.is_some() {
                        return dup("a scope");
                    }
                    q.scope = Some((s, *loc));
                    continue;
                }
            }
            if a.cmp {
                let c = match w.as_str() {
                    "eq" => Some(CmpOp::Eq),
                    "ne" => Some(CmpOp::Ne),
                    "lt" => Some(CmpOp::Lt),
                    "le" => Some(CmpOp::Le),
                    "gt" => Some(CmpOp::Gt),
                    "ge" => Some(CmpOp::Ge),
                    _ => None,
                };
                if let Some(c) = c {
                    if q.cmp.is_some() {
                        return dup("a comparison");
                    }
                    q.cmp = Some(c);
                    continue;
                }
            }
            if a.atom_op {
                let o = match w.as_str() {
                    "add" => Some(AtomOp::Rmw(RmwOp::Add)),
                    "sub" => Some(AtomOp::Rmw(RmwOp::Sub)),
                    "and" => Some(AtomOp::Rmw(RmwOp::And)),
                    "or" => Some(AtomOp::Rmw(RmwOp::Or)),
                    "xor" => Some(AtomOp::Rmw(RmwOp::Xor)),
                    "min" => Some(AtomOp::Rmw(RmwOp::Min)),
                    "max" => Some(AtomOp::Rmw(RmwOp::Max)),
                    "exch" => Some(AtomOp::Rmw(RmwOp::Exch)),
                    "inc" => Some(AtomOp::Rmw(RmwOp::Inc)),
                    "dec" => Some(AtomOp::Rmw(RmwOp::Dec)),
                    "cas" => Some(AtomOp::Cas),
                    _ => None,
                };
                if let Some(o) = o {
                    if q.op.is_some() {
                        return dup("an operation");
                    }
                    q.op = Some((o, *loc));
                    continue;
                }
            }
            let mut expected = Vec::new();
            if a.ty > 0 {
                expected.push("a type (u32, i32, u64, i64, f32)");
            }
            if a.cmp {
                expected.push("a comparison (eq, ne, lt, le, gt, ge)");
            }
            if a.atom_op {
                expected
                    .push("an operation (add, sub, and, or, xor, min, max, exch, inc, dec, cas)");
            }
            if a.order {
                expected.push("an order (plain, relaxed, acquire, release, acq_rel, seq_cst)");
            }
            if a.scope {
                expected.push(
                    "a scope (work_item, sub_group, work_group, device, system or cta, gpu, sys)",
                );
            }
            if a.space || a.spaces {
                expected.push("a memory space (global, local)");
            }
            if a.cas {
                expected.push("a compare-exchange flag (weak, strong, fail_relaxed, fail_acquire, fail_seq_cst)");
            }
            return Err(self.err(
                *loc,
                if expected.is_empty() {
                    format!("found `.{w}` but `{m}` takes no qualifiers")
                } else {
                    format!("found `.{w}` but `{m}` takes {}", expected.join(", "))
                },
            ));
        }
        if (a.ty as usize) > q.tys.len() {
            return Err(self.err(
                i.loc,
                format!(
                    "`{m}` needs {} (like `{m}{}`)",
                    if a.ty == 2 {
                        "a destination and a source type"
                    } else {
                        "a type: u32, i32, u64, i64 or f32"
                    },
                    if a.ty == 2 { ".f32.u32" } else { ".u32" }
                ),
            ));
        }
        Ok(q)
    }

    pub(super) fn operands<'o>(&self, i: &'o InstSyn, n: usize, form: &str) -> R<&'o [Operand]> {
        if i.operands.len() != n {
            let at = i.operands.get(n).map(|o| o.loc()).unwrap_or(i.loc);
            return Err(self.err(
                at,
                format!(
                    "found {} operand{} but expected {n}: {form}",
                    i.operands.len(),
                    if i.operands.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(&i.operands)
    }
}
