//! Expressions: precedence climbing over the binary operators (Rust's precedence, `BinOp::of`),
//! unary operators and primaries, every level of nesting counted against `MAX_NESTING`.

use super::tree::{BinOp, Expr};
use super::{Parser, MAX_NESTING, R};
use crate::ir::SrcLoc;
use crate::kernel::lexer::Tok;

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> R<Expr> {
        let lhs = self.unary()?;
        self.climb(lhs, 0)
    }

    /// Precedence climbing: extends `lhs` with operators binding tighter than `min`. Each operator
    /// applied deepens the tree by one, counted against [`MAX_NESTING`] until the chain ends.
    pub(super) fn climb(&mut self, lhs: Expr, min: u8) -> R<Expr> {
        let outer = self.depth;
        let e = self.climb_chain(lhs, min);
        self.depth = outer;
        e
    }

    pub(super) fn climb_chain(&mut self, mut lhs: Expr, min: u8) -> R<Expr> {
        loop {
            let loc = self.loc();
            // `N %M` lexes as `N` followed by register `%M`: read it as a remainder.
            if let Tok::Reg(name) = self.peek().clone() {
                if 9 > min {
                    self.pos += 1;
                    let rhs = self.climb(Expr::Name(name, loc), 9)?;
                    lhs = Expr::Bin(BinOp::Rem, Box::new(lhs), Box::new(rhs), loc);
                    self.deeper(loc)?;
                    continue;
                }
            }
            let Some((prec, op)) = (match self.peek() {
                Tok::Punct(p) => BinOp::of(p),
                _ => None,
            }) else {
                return Ok(lhs);
            };
            if prec <= min {
                return Ok(lhs);
            }
            self.pos += 1;
            let first = self.unary()?;
            let rhs = self.climb(first, prec)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs), loc);
            self.deeper(loc)?;
        }
    }

    /// One more level of nesting; bounded, so that a pathological file is an error rather than a
    /// stack overflow.
    pub(super) fn deeper(&mut self, loc: SrcLoc) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err(
                loc,
                format!(
                    "expression nested more than {MAX_NESTING} levels deep (parentheses, unary \
                     operators and each operator of a chain count)"
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn unary(&mut self) -> R<Expr> {
        let loc = self.loc();
        let outer = self.depth;
        self.deeper(loc)?;
        let e = self.unary_inner(loc);
        self.depth = outer;
        e
    }

    pub(super) fn unary_inner(&mut self, loc: SrcLoc) -> R<Expr> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?), loc));
        }
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?), loc));
        }
        self.primary()
    }

    pub(super) fn primary(&mut self) -> R<Expr> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Int(v) => {
                self.pos += 1;
                Ok(Expr::Int(v, loc))
            }
            Tok::Float(v) => {
                self.pos += 1;
                Ok(Expr::Float(v, loc))
            }
            Tok::Punct("(") => {
                self.pos += 1;
                let e = self.expr()?;
                self.punct(")")?;
                Ok(e)
            }
            Tok::Ident(name) => {
                self.pos += 1;
                if self.eat("[") {
                    let i = self.expr()?;
                    self.punct("]")?;
                    return Ok(Expr::Index(name, Box::new(i), loc));
                }
                if !self.eat("(") {
                    return Ok(Expr::Name(name, loc));
                }
                // A fold `sum(i = 0 .. n: body)` or a call `f(a, b)`.
                if let (Tok::Ident(var), Some(Tok::Punct("="))) =
                    (self.peek().clone(), self.peek_at(1))
                {
                    self.pos += 2;
                    let from = self.expr()?;
                    self.punct("..")?;
                    let to = self.expr()?;
                    self.punct(":")?;
                    let body = self.expr()?;
                    self.punct(")")?;
                    return Ok(Expr::Fold {
                        op: name,
                        var,
                        from: Box::new(from),
                        to: Box::new(to),
                        body: Box::new(body),
                        loc,
                    });
                }
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        self.punct(",")?;
                    }
                }
                Ok(Expr::Call(name, args, loc))
            }
            Tok::Reg(r) => Err(self.err(
                loc,
                format!(
                    "found register `%{r}` but expected a constant expression (registers have no value before the run)"
                ),
            )),
            _ => Err(self.expected("an expression (a number, a name or `(`)")),
        }
    }
}
