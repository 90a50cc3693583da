//! Checks: host-side expressions over the final buffers lowered into `workload::Expr`.

use super::*;

impl Lower<'_> {
    /// A check expression; `folds` holds the variables of the enclosing folds, outermost first.
    pub(super) fn check_expr(
        &self,
        e: &Expr,
        forall: Option<&str>,
        folds: &mut Vec<String>,
    ) -> R<workload::Expr> {
        use workload::Expr as W;
        let b = |x: W| Box::new(x);
        Ok(match e {
            Expr::Int(v, _) => W::Const(*v),
            Expr::Float(v, _) => W::ConstF(*v),
            Expr::Name(n, loc) => {
                if let Some(d) = folds.iter().rposition(|v| v == n) {
                    W::Bound(d as u32)
                } else if forall == Some(n.as_str()) {
                    W::Var
                } else if n == "global_size" {
                    W::GlobalSize
                } else if n == "num_groups" {
                    W::NumGroups
                } else if n == "group_size" {
                    W::GroupSize
                } else if let Some(v) = self.constant(n) {
                    W::Const(v)
                } else if self.buffers.iter().any(|x| &x.name == n) {
                    return Err(self.err(
                        *loc,
                        format!(
                            "buffer `{n}` needs an index (`{n}[i]`), or use sum({n}) or len({n})"
                        ),
                    ));
                } else {
                    return Err(self.err(
                        *loc,
                        format!("unknown name `{n}` in a check: expected a parameter, a bound variable, a buffer element or global_size, num_groups, group_size"),
                    ));
                }
            }
            Expr::Index(buf, i, loc) => {
                if !self.buffers.iter().any(|x| &x.name == buf) {
                    let m = if self.locals.contains_key(buf) {
                        format!("local array `{buf}` does not outlive its work-group: checks read buffers")
                    } else {
                        self.unknown_buffer(buf)
                    };
                    return Err(self.err(*loc, m));
                }
                W::Elem {
                    buffer: buf.clone(),
                    index: b(self.check_expr(i, forall, folds)?),
                }
            }
            Expr::Call(f, args, loc) => {
                let buf_arg = |l: &Self| -> R<String> {
                    match args.as_slice() {
                        [Expr::Name(n, nloc)] => {
                            if l.buffers.iter().any(|x| &x.name == n) {
                                Ok(n.clone())
                            } else {
                                Err(l.err(*nloc, l.unknown_buffer(n)))
                            }
                        }
                        _ => Err(l.err(*loc, format!("`{f}` takes one buffer name: `{f}(data)`"))),
                    }
                };
                match (f.as_str(), args.len()) {
                    ("sum", 1) => W::Sum(buf_arg(self)?),
                    ("len", 1) => W::Len(buf_arg(self)?),
                    ("min" | "max", 2) => {
                        let x = b(self.check_expr(&args[0], forall, folds)?);
                        let y = b(self.check_expr(&args[1], forall, folds)?);
                        if f == "min" {
                            W::Min(x, y)
                        } else {
                            W::Max(x, y)
                        }
                    }
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found `{f}(...)` with {} arguments but checks offer sum(buffer), len(buffer), min(a, b), max(a, b) and folds `sum|min|max(i = a .. b: expr)`", args.len()),
                        ))
                    }
                }
            }
            Expr::Fold {
                op,
                var,
                from,
                to,
                body,
                loc,
            } => {
                let fop = match op.as_str() {
                    "sum" => FoldOp::Sum,
                    "min" => FoldOp::Min,
                    "max" => FoldOp::Max,
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found fold `{op}` but expected sum, min or max"),
                        ))
                    }
                };
                let from = b(self.check_expr(from, forall, folds)?);
                let to = b(self.check_expr(to, forall, folds)?);
                folds.push(var.clone());
                let body = self.check_expr(body, forall, folds);
                folds.pop();
                W::Fold {
                    op: fop,
                    from,
                    to,
                    body: b(body?),
                }
            }
            Expr::Neg(x, _) => W::Sub(b(W::Const(0)), b(self.check_expr(x, forall, folds)?)),
            Expr::Not(x, _) => W::Cmp(
                CheckOp::Eq,
                b(self.check_expr(x, forall, folds)?),
                b(W::Const(0)),
            ),
            Expr::Bin(op, x, y, loc) => {
                let (x, y) = (
                    b(self.check_expr(x, forall, folds)?),
                    b(self.check_expr(y, forall, folds)?),
                );
                match op {
                    BinOp::Add => W::Add(x, y),
                    BinOp::Sub => W::Sub(x, y),
                    BinOp::Mul => W::Mul(x, y),
                    BinOp::Div => W::Div(x, y),
                    BinOp::Rem => W::Rem(x, y),
                    BinOp::Shl => W::Shl(x, y),
                    o if o.is_comparison() => W::Cmp(check_op(*o), x, y),
                    o => {
                        return Err(self.err(
                            *loc,
                            format!("`{}` is not available in checks (they offer + - * / % << and comparisons)", o.symbol()),
                        ))
                    }
                }
            }
        })
    }
}
