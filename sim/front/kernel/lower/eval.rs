//! Constant expressions: evaluation, integer and length checks, types, typed values and buffer
//! initialisers.

use super::*;

impl Lower<'_> {
    pub(super) fn eval(&self, e: &Expr) -> R<Num> {
        use Num::*;
        Ok(match e {
            Expr::Int(v, _) => Int(*v),
            Expr::Float(v, _) => Float(*v),
            Expr::Name(n, loc) => match self.constant(n) {
                Some(v) => Int(v),
                None => {
                    let what = if self.buffers.iter().any(|b| &b.name == n) {
                        format!("buffer `{n}` has no value before the run; use it in an address (`{n}[i]`) or a check")
                    } else if self.locals.contains_key(n) {
                        format!("local array `{n}` is not a constant; use it in an address (`{n}[i]`)")
                    } else if BUILTINS.contains(&n.as_str()) {
                        format!("`{n}` is not known yet: the launch geometry may only use parameters")
                    } else {
                        let known = self
                            .consts
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .filter(|n| !BUILTINS.contains(n));
                        format!(
                            "unknown name `{n}` in a constant expression (parameters declared so far: {})",
                            listing(known)
                        )
                    };
                    return Err(self.err(*loc, what));
                }
            },
            Expr::Index(n, _, loc) => {
                return Err(self.err(
                    *loc,
                    format!("found `{n}[...]` but expected a constant: buffer contents are only known in checks"),
                ))
            }
            Expr::Fold { loc, .. } => {
                return Err(self.err(*loc, "folds (`sum(i = a .. b: ...)`) are only available in checks"))
            }
            Expr::Call(f, args, loc) => {
                let vals = args.iter().map(|a| self.eval(a)).collect::<R<Vec<_>>>()?;
                let ints = |what: &str| -> R<Vec<i64>> {
                    vals.iter()
                        .map(|v| match v {
                            Int(i) => Ok(*i),
                            Float(_) => Err(self.err(*loc, format!("{what} takes integers"))),
                        })
                        .collect()
                };
                let arity = |n: usize| -> R<()> {
                    if vals.len() == n {
                        Ok(())
                    } else {
                        Err(self.err(
                            *loc,
                            format!("found {} arguments but `{f}` takes {n}", vals.len()),
                        ))
                    }
                };
                match f.as_str() {
                    "min" | "max" => {
                        arity(2)?;
                        let pick_first = match (vals[0], vals[1]) {
                            (Int(a), Int(b)) => (a <= b) == (f == "min"),
                            (a, b) => (as_f(a) <= as_f(b)) == (f == "min"),
                        };
                        if pick_first {
                            vals[0]
                        } else {
                            vals[1]
                        }
                    }
                    "ceil_div" => {
                        arity(2)?;
                        let v = ints("ceil_div")?;
                        if v[1] <= 0 {
                            return Err(self.err(*loc, format!("ceil_div by {}: the divisor must be positive", v[1])));
                        }
                        Int(v[0].div_euclid(v[1]) + (v[0].rem_euclid(v[1]) != 0) as i64)
                    }
                    "log2" => {
                        arity(1)?;
                        let v = ints("log2")?[0];
                        if v < 1 || v & (v - 1) != 0 {
                            return Err(self.err(*loc, format!("log2({v}): the argument must be a power of two")));
                        }
                        Int(v.trailing_zeros() as i64)
                    }
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found `{f}(...)` but expected one of min, max, ceil_div, log2 in a constant expression"),
                        ))
                    }
                }
            }
            Expr::Neg(x, loc) => match self.eval(x)? {
                Int(v) => Int(v.checked_neg().ok_or_else(|| self.err(*loc, "overflows 64 bits"))?),
                Float(v) => Float(-v),
            },
            Expr::Not(x, _) => Int((self.eval(x)? == Int(0)) as i64),
            Expr::Bin(op, a, b, loc) => {
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                let ovf = || self.err(*loc, format!("`{}` overflows 64 bits", op.symbol()));
                if op.is_comparison() {
                    let (p, q) = (as_f(x), as_f(y));
                    let r = match (x, y) {
                        (Int(i), Int(j)) => match op {
                            BinOp::Eq => i == j,
                            BinOp::Ne => i != j,
                            BinOp::Lt => i < j,
                            BinOp::Le => i <= j,
                            BinOp::Gt => i > j,
                            _ => i >= j,
                        },
                        _ => match op {
                            BinOp::Eq => p == q,
                            BinOp::Ne => p != q,
                            BinOp::Lt => p < q,
                            BinOp::Le => p <= q,
                            BinOp::Gt => p > q,
                            _ => p >= q,
                        },
                    };
                    return Ok(Int(r as i64));
                }
                match (x, y) {
                    (Int(i), Int(j)) => Int(match op {
                        BinOp::Add => i.checked_add(j).ok_or_else(ovf)?,
                        BinOp::Sub => i.checked_sub(j).ok_or_else(ovf)?,
                        BinOp::Mul => i.checked_mul(j).ok_or_else(ovf)?,
                        BinOp::Div | BinOp::Rem if j == 0 => {
                            return Err(self.err(*loc, format!("`{}` by zero", op.symbol())))
                        }
                        BinOp::Div => i.checked_div(j).ok_or_else(ovf)?,
                        BinOp::Rem => i.checked_rem(j).ok_or_else(ovf)?,
                        BinOp::Shl | BinOp::Shr if !(0..64).contains(&j) => {
                            return Err(self.err(*loc, format!("shift by {j}: must be from 0 to 63")))
                        }
                        BinOp::Shl => i << j,
                        BinOp::Shr => i >> j,
                        BinOp::BitAnd => i & j,
                        BinOp::BitOr => i | j,
                        BinOp::BitXor => i ^ j,
                        BinOp::And => (i != 0 && j != 0) as i64,
                        BinOp::Or => (i != 0 || j != 0) as i64,
                        _ => unreachable!("comparisons handled above"),
                    }),
                    _ => Float(match op {
                        BinOp::Add => as_f(x) + as_f(y),
                        BinOp::Sub => as_f(x) - as_f(y),
                        BinOp::Mul => as_f(x) * as_f(y),
                        BinOp::Div => as_f(x) / as_f(y),
                        _ => {
                            return Err(self.err(
                                *loc,
                                format!("`{}` takes integers, found {} and {}", op.symbol(), x.show(), y.show()),
                            ))
                        }
                    }),
                }
            }
        })
    }

    pub(super) fn int(&self, e: &Expr, what: &str) -> R<i64> {
        match self.eval(e)? {
            Num::Int(v) => Ok(v),
            Num::Float(v) => {
                Err(self.err(e.loc(), format!("found {v} but {what} must be an integer")))
            }
        }
    }

    pub(super) fn length(&self, e: &Expr) -> R<u64> {
        let n = self.int(e, "a length")?;
        if n < 1 {
            return Err(self.err(e.loc(), format!("length {n}: must be at least 1")));
        }
        Ok(n as u64)
    }

    pub(super) fn ty(&self, (name, loc): &(String, SrcLoc)) -> R<Ty> {
        parse_ty(name).ok_or_else(|| {
            self.err(
                *loc,
                format!("found `{name}` but expected a type: u32, i32, u64, i64 or f32"),
            )
        })
    }

    /// The raw register bits of `v` as type `ty`.
    pub(super) fn typed(&self, v: Num, ty: Ty, loc: SrcLoc) -> R<u64> {
        match (ty, v) {
            (Ty::F32, Num::Float(f)) => Ok(f32_bits(f as f32)),
            (Ty::F32, Num::Int(i)) => Ok(f32_bits(i as f32)),
            (_, Num::Float(f)) => Err(self.err(
                loc,
                format!("found {f} but a {} value must be an integer", ty.name()),
            )),
            (Ty::U32 | Ty::I32, Num::Int(i)) => {
                if (i32::MIN as i64..=u32::MAX as i64).contains(&i) {
                    Ok(i as u64 & 0xFFFF_FFFF)
                } else {
                    Err(self.err(
                        loc,
                        format!("{i} does not fit 32 bits (a {} value)", ty.name()),
                    ))
                }
            }
            (_, Num::Int(i)) => Ok(i as u64),
        }
    }

    pub(super) fn init(&self, init: &InitSyn, elem: Ty, len: u64, loc: SrcLoc) -> R<Init> {
        Ok(match init {
            InitSyn::Zero => Init::Zero,
            InitSyn::Fill(e) => {
                let v = self.eval(e)?;
                Init::Fill(self.typed(v, elem, e.loc())?)
            }
            InitSyn::Iota if elem == Ty::F32 => {
                if len > 1 << 24 {
                    return Err(self.err(loc, "an f32 iota is exact only up to 2^24 elements"));
                }
                Init::Values((0..len).map(|i| f32_bits(i as f32)).collect())
            }
            InitSyn::Iota => Init::Iota,
            InitSyn::Random { seed, modulo } => {
                if elem == Ty::F32 {
                    return Err(self.err(
                        loc,
                        "random(...) fills integer buffers; use an integer element type",
                    ));
                }
                let s = self.int(seed, "a seed")?;
                let m = self.int(modulo, "a modulus")?;
                if m < 0 {
                    return Err(self.err(
                        modulo.loc(),
                        format!("random modulus {m}: must be at least 0 (0 means any value)"),
                    ));
                }
                Init::Random {
                    seed: s as u64,
                    modulo: m as u64,
                }
            }
            InitSyn::Values(vs) => {
                if vs.len() as u64 > len {
                    return Err(self.err(
                        loc,
                        format!(
                            "found {} initial values but the buffer has {len} elements",
                            vs.len()
                        ),
                    ));
                }
                let mut out = Vec::with_capacity(vs.len());
                for e in vs {
                    let v = self.eval(e)?;
                    out.push(self.typed(v, elem, e.loc())?);
                }
                Init::Values(out)
            }
        })
    }
}
