//! Expressions of the C subset: C's precedence and associativity (C11 §6.5), C++ casts and template
//! names where the kernels use them (`static_cast<T>(e)`, `cuda::atomic_ref<T, scope>(x)`).
//!
//! Nesting is bounded ([`MAX_DEPTH`] levels of parentheses, unary operators, conditionals,
//! right-associative assignments and operators of one binary or comma chain), so that a pathological input is an error naming its place rather
//! than a stack overflow.

use super::ast::*;
use super::lexer::Tok;
use super::parser::Parser;
use super::types::STy;
use super::CError;

/// Deepest nesting of expressions and statements together.
pub const MAX_DEPTH: usize = 256;

type R<T> = Result<T, CError>;

/// Binding strength of a binary operator (higher binds tighter), C11 §6.5.5–§6.5.14.
fn binary_of(p: &str) -> Option<(u8, Option<BinOp>)> {
    Some(match p {
        "||" => (4, None),
        "&&" => (5, None),
        "|" => (6, Some(BinOp::BitOr)),
        "^" => (7, Some(BinOp::BitXor)),
        "&" => (8, Some(BinOp::BitAnd)),
        "==" => (9, Some(BinOp::Eq)),
        "!=" => (9, Some(BinOp::Ne)),
        "<" => (10, Some(BinOp::Lt)),
        "<=" => (10, Some(BinOp::Le)),
        ">" => (10, Some(BinOp::Gt)),
        ">=" => (10, Some(BinOp::Ge)),
        "<<" => (11, Some(BinOp::Shl)),
        ">>" => (11, Some(BinOp::Shr)),
        "+" => (12, Some(BinOp::Add)),
        "-" => (12, Some(BinOp::Sub)),
        "*" => (13, Some(BinOp::Mul)),
        "/" => (13, Some(BinOp::Div)),
        "%" => (13, Some(BinOp::Rem)),
        _ => return None,
    })
}

fn compound_of(p: &str) -> Option<Option<BinOp>> {
    Some(match p {
        "=" => None,
        "+=" => Some(BinOp::Add),
        "-=" => Some(BinOp::Sub),
        "*=" => Some(BinOp::Mul),
        "/=" => Some(BinOp::Div),
        "%=" => Some(BinOp::Rem),
        "<<=" => Some(BinOp::Shl),
        ">>=" => Some(BinOp::Shr),
        "&=" => Some(BinOp::BitAnd),
        "|=" => Some(BinOp::BitOr),
        "^=" => Some(BinOp::BitXor),
        _ => return None,
    })
}

/// Template names whose `<` opens template arguments rather than a comparison.
fn is_template_name(path: &[String]) -> bool {
    matches!(
        path.last().map(String::as_str),
        Some("atomic_ref" | "static_cast" | "reinterpret_cast" | "const_cast")
    )
}

impl Parser {
    pub(crate) fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(CError::new(
                self.loc(),
                format!("nested more than {MAX_DEPTH} levels deep (expressions and statements together)"),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A full expression, commas included.
    pub fn expr(&mut self) -> R<Expr> {
        let mut e = self.assign()?;
        let mut chain = 0;
        while self.is_punct(",") {
            let loc = e.loc;
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(CError::new(
                    self.loc(),
                    format!("more than {MAX_DEPTH} comma operators in one expression"),
                ));
            }
            self.pos += 1;
            let r = self.assign()?;
            e = Expr::new(ExprKind::Comma(Box::new(e), Box::new(r)), loc);
        }
        Ok(e)
    }

    /// An assignment expression (a function argument, an initialiser).
    pub fn assign(&mut self) -> R<Expr> {
        self.enter()?;
        let r = self.assign_inner();
        self.leave();
        r
    }

    fn assign_inner(&mut self) -> R<Expr> {
        let lhs = self.conditional()?;
        if let Tok::Punct(p) = self.peek() {
            if let Some(op) = compound_of(p) {
                let loc = lhs.loc;
                self.pos += 1;
                let rhs = self.assign()?;
                return Ok(Expr::new(
                    ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)),
                    loc,
                ));
            }
        }
        Ok(lhs)
    }

    pub(crate) fn conditional(&mut self) -> R<Expr> {
        let first = self.unary()?;
        let c = self.climb(first, 0)?;
        if !self.is_punct("?") {
            return Ok(c);
        }
        let loc = c.loc;
        self.pos += 1;
        let a = self.expr()?;
        self.expect(":")?;
        self.enter()?;
        let b = self.conditional();
        self.leave();
        Ok(Expr::new(
            ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b?)),
            loc,
        ))
    }

    /// Precedence climbing over the binary operators binding tighter than `min`.
    ///
    /// Each operator applied in the loop deepens the (left-leaning) tree that later passes walk
    /// recursively, so a chain counts toward [`MAX_DEPTH`] like nesting does (`1+1+…+1` 15,000 long
    /// overflowed the stack after parsing).
    fn climb(&mut self, mut lhs: Expr, min: u8) -> R<Expr> {
        let mut chain = 0;
        loop {
            let Tok::Punct(p) = *self.peek() else {
                return Ok(lhs);
            };
            let Some((prec, op)) = binary_of(p) else {
                return Ok(lhs);
            };
            if prec <= min {
                return Ok(lhs);
            }
            // A binary expression is located where it starts (its left operand).
            let loc = lhs.loc;
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(CError::new(
                    self.loc(),
                    format!(
                        "an expression chained or nested more than {MAX_DEPTH} levels deep \
                         (operators of one chain count as levels)"
                    ),
                ));
            }
            self.pos += 1;
            let first = self.unary()?;
            let rhs = self.climb(first, prec)?;
            lhs = match op {
                Some(op) => Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), loc),
                None => Expr::new(
                    ExprKind::Logical(p == "&&", Box::new(lhs), Box::new(rhs)),
                    loc,
                ),
            };
        }
    }

    pub fn unary(&mut self) -> R<Expr> {
        self.enter()?;
        let r = self.unary_inner();
        self.leave();
        r
    }

    fn unary_inner(&mut self) -> R<Expr> {
        let loc = self.loc();
        let un = |op: UnOp, e: Expr| Expr::new(ExprKind::Unary(op, Box::new(e)), loc);
        if let Tok::Punct(p) = self.peek() {
            let op = match *p {
                "-" => Some(UnOp::Neg),
                "+" => Some(UnOp::Plus),
                "!" => Some(UnOp::Not),
                "~" => Some(UnOp::BitNot),
                "*" => Some(UnOp::Deref),
                "&" => Some(UnOp::AddrOf),
                _ => None,
            };
            if let Some(op) = op {
                self.pos += 1;
                let e = self.unary()?;
                return Ok(un(op, e));
            }
            if *p == "++" || *p == "--" {
                let inc = *p == "++";
                self.pos += 1;
                let e = self.unary()?;
                return Ok(Expr::new(ExprKind::PreInc(inc, Box::new(e)), loc));
            }
            if *p == "&&" {
                return Err(CError::new(
                    loc,
                    "`&&` on a label (a GNU extension) is not supported",
                ));
            }
            // A cast `(T) e`.
            if *p == "(" && self.type_starts_at(self.pos + 1) {
                self.pos += 1;
                let t = self.type_name()?;
                self.expect(")")?;
                if self.is_punct("{") {
                    return Err(CError::new(
                        loc,
                        "compound literals `(T){...}` are not supported",
                    ));
                }
                let e = self.unary()?;
                return Ok(Expr::new(ExprKind::Cast(Box::new(t), Box::new(e)), loc));
            }
        }
        if self.is_word("sizeof") {
            self.pos += 1;
            if self.is_punct("(") && self.type_starts_at(self.pos + 1) {
                self.pos += 1;
                let t = self.type_name()?;
                self.expect(")")?;
                return Ok(Expr::new(ExprKind::SizeofType(Box::new(t)), loc));
            }
            let e = self.unary()?;
            return Ok(Expr::new(ExprKind::SizeofExpr(Box::new(e)), loc));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        loop {
            // A call, index or member is located where its expression starts (`f(`, `a[`).
            let loc = e.loc;
            match self.peek() {
                Tok::Punct("[") => {
                    self.pos += 1;
                    let i = self.expr()?;
                    self.expect("]")?;
                    e = Expr::new(ExprKind::Index(Box::new(e), Box::new(i)), loc);
                }
                Tok::Punct("(") => {
                    self.pos += 1;
                    let args = self.args(")")?;
                    e = Expr::new(ExprKind::Call(Box::new(e), args), loc);
                }
                Tok::Punct(p @ ("." | "->")) => {
                    let arrow = *p == "->";
                    self.pos += 1;
                    let (m, _) = self.ident("a member name")?;
                    e = Expr::new(ExprKind::Member(Box::new(e), m, arrow), loc);
                }
                Tok::Punct(p @ ("++" | "--")) => {
                    let inc = *p == "++";
                    self.pos += 1;
                    e = Expr::new(ExprKind::PostInc(inc, Box::new(e)), loc);
                }
                _ => return Ok(e),
            }
        }
    }

    /// Comma-separated assignment expressions up to `close` (consumed).
    pub(crate) fn args(&mut self, close: &'static str) -> R<Vec<Expr>> {
        let mut args = Vec::new();
        if self.eat(close) {
            return Ok(args);
        }
        loop {
            args.push(self.assign()?);
            if self.eat(close) {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }

    /// `a::b::c` starting at the current identifier.
    pub(crate) fn path(&mut self) -> R<Vec<String>> {
        let mut p = Vec::new();
        if self.eat("::") {
            // A leading `::` names the global namespace.
        }
        loop {
            let (w, _) = self.ident("a name")?;
            p.push(w);
            if self.is_punct("::") && matches!(self.peek_at(1), Tok::Ident(_)) {
                self.pos += 1;
            } else {
                return Ok(p);
            }
        }
    }

    /// `< arg, ... >` after a template name (a `>>` closes two levels, as in C++11).
    pub(crate) fn template_args(&mut self) -> R<Vec<TemplateArg>> {
        self.expect("<")?;
        let mut args = Vec::new();
        loop {
            if self.type_starts_at(self.pos) {
                args.push(TemplateArg::Type(self.type_name()?));
            } else {
                // A non-type argument: no `>` at its top level (C++'s rule).
                let first = self.unary()?;
                args.push(TemplateArg::Expr(self.climb(first, 10)?));
            }
            if self.eat(",") {
                continue;
            }
            if self.is_punct(">>") {
                // Split `>>` into two `>`: this one closes, the next one stays.
                self.split_shift();
                self.pos += 1;
                return Ok(args);
            }
            self.expect(">")?;
            return Ok(args);
        }
    }

    fn primary(&mut self) -> R<Expr> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Int(v, t) => {
                self.pos += 1;
                Ok(Expr::new(ExprKind::Int(v, t), loc))
            }
            Tok::Float(v, f) => {
                self.pos += 1;
                Ok(Expr::new(ExprKind::Float(v, f), loc))
            }
            Tok::Str(s) => {
                self.pos += 1;
                let mut s = s;
                while let Tok::Str(more) = self.peek().clone() {
                    self.pos += 1;
                    s.push_str(&more);
                }
                Ok(Expr::new(ExprKind::Str(s), loc))
            }
            Tok::Punct("(") => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => Err(CError::new(loc, "lambdas are not supported")),
            Tok::Ident(w) => {
                match w.as_str() {
                    "true" | "false" => {
                        self.pos += 1;
                        return Ok(Expr::new(
                            ExprKind::Int((w == "true") as u64, STy::Bool),
                            loc,
                        ));
                    }
                    "nullptr" | "NULL" => {
                        self.pos += 1;
                        return Ok(Expr::new(ExprKind::Int(0, STy::I32), loc));
                    }
                    "new" | "delete" | "throw" | "this" | "typeid" | "alignof" | "_Alignof"
                    | "_Generic" | "co_await" | "decltype" => {
                        return Err(CError::new(loc, format!("`{w}` is not supported")))
                    }
                    _ => {}
                }
                // A functional cast `float(x)` / `unsigned(x)`.
                if self.type_starts_at(self.pos) && !self.is_template_path_at(self.pos) {
                    let t = self.type_name()?;
                    if !self.is_punct("(") {
                        return Err(self.expected(
                            "`(` after a type in an expression (a functional cast `int(x)`)",
                        ));
                    }
                    self.pos += 1;
                    let e = self.expr()?;
                    self.expect(")")?;
                    return Ok(Expr::new(ExprKind::Cast(Box::new(t), Box::new(e)), loc));
                }
                let path = self.path()?;
                if is_template_name(&path) && self.is_punct("<") {
                    let args = self.template_args()?;
                    return Ok(Expr::new(ExprKind::Template(path, args), loc));
                }
                Ok(Expr::new(ExprKind::Name(path), loc))
            }
            Tok::Punct("::") => {
                let path = self.path()?;
                Ok(Expr::new(ExprKind::Name(path), loc))
            }
            _ => Err(self.expected("an expression")),
        }
    }
}
