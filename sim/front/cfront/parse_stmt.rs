//! Statements of the C subset: blocks, declarations, expression statements, `if`/`else`, `while`,
//! `do`, `for`, `switch`/`case`/`default`, `break`, `continue`, `return`, `goto` and labels, and
//! `asm` (the one form that reads a special register). Nesting is bounded with expressions
//! (`parse_expr.rs`, [`super::parse_expr::MAX_DEPTH`]).

use super::ast::*;
use super::lexer::Tok;
use super::parser::Parser;
use super::CError;

type R<T> = Result<T, CError>;

impl Parser {
    // ---- statements ----

    pub fn block_body(&mut self) -> R<Vec<Stmt>> {
        let mut v = Vec::new();
        while !self.eat("}") {
            if matches!(self.peek(), Tok::Eof) {
                return Err(self.expected("`}`"));
            }
            v.push(self.stmt()?);
        }
        Ok(v)
    }

    pub fn stmt(&mut self) -> R<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    pub(crate) fn paren_expr(&mut self) -> R<Expr> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(")")?;
        Ok(e)
    }

    pub(crate) fn stmt_inner(&mut self) -> R<Stmt> {
        let loc = self.loc();
        let s = |kind| Ok(Stmt { kind, loc });
        if self.eat(";") {
            return s(StmtKind::Empty);
        }
        if self.eat("{") {
            return s(StmtKind::Block(self.block_body()?));
        }
        if let Some(e) = self.unsupported_word() {
            return Err(e);
        }
        if let Tok::Ident(w) = self.peek().clone() {
            // A label `name:` (not `name::`).
            if self.peek_at(1) == &Tok::Punct(":") && !self.type_starts_at(self.pos) {
                match w.as_str() {
                    "default" => {}
                    _ => {
                        self.pos += 2;
                        let body = if self.is_punct("}") {
                            Stmt {
                                kind: StmtKind::Empty,
                                loc: self.loc(),
                            }
                        } else {
                            self.stmt()?
                        };
                        return s(StmtKind::Label(w, Box::new(body)));
                    }
                }
            }
            match w.as_str() {
                "if" => {
                    self.pos += 1;
                    if self.is_word("constexpr") {
                        self.pos += 1;
                    }
                    let c = self.paren_expr()?;
                    let then = self.stmt()?;
                    let els = if self.eat_word("else") {
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return s(StmtKind::If(c, Box::new(then), els));
                }
                "while" => {
                    self.pos += 1;
                    let c = self.paren_expr()?;
                    return s(StmtKind::While(c, Box::new(self.stmt()?)));
                }
                "do" => {
                    self.pos += 1;
                    let body = self.stmt()?;
                    if !self.eat_word("while") {
                        return Err(self.expected("`while` after the body of `do`"));
                    }
                    let c = self.paren_expr()?;
                    self.expect(";")?;
                    return s(StmtKind::DoWhile(Box::new(body), c));
                }
                "for" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let init = if self.eat(";") {
                        None
                    } else if self.type_starts_at(self.pos) {
                        let at = self.loc();
                        let mut st = Storage::default();
                        let spec = self.type_spec(&mut st)?;
                        let d = self.declaration_rest(spec, st, at)?;
                        Some(Box::new(Stmt {
                            kind: StmtKind::Decl(d),
                            loc: at,
                        }))
                    } else {
                        let at = self.loc();
                        let e = self.expr()?;
                        if self.is_punct(":") {
                            return Err(CError::new(at, "range-based `for` is not supported"));
                        }
                        self.expect(";")?;
                        Some(Box::new(Stmt {
                            kind: StmtKind::Expr(e),
                            loc: at,
                        }))
                    };
                    let cond = if self.is_punct(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    let step = if self.is_punct(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    return s(StmtKind::For {
                        init,
                        cond,
                        step,
                        body,
                    });
                }
                "switch" => {
                    self.pos += 1;
                    let c = self.paren_expr()?;
                    return s(StmtKind::Switch(c, Box::new(self.stmt()?)));
                }
                "case" => {
                    self.pos += 1;
                    let e = self.conditional()?;
                    if self.is_punct("...") {
                        return Err(CError::new(
                            self.loc(),
                            "case ranges (`...`) are not supported",
                        ));
                    }
                    self.expect(":")?;
                    let body = if self.is_punct("}") {
                        Stmt {
                            kind: StmtKind::Empty,
                            loc: self.loc(),
                        }
                    } else {
                        self.stmt()?
                    };
                    return s(StmtKind::Case(e, Box::new(body)));
                }
                "default" => {
                    self.pos += 1;
                    self.expect(":")?;
                    let body = if self.is_punct("}") {
                        Stmt {
                            kind: StmtKind::Empty,
                            loc: self.loc(),
                        }
                    } else {
                        self.stmt()?
                    };
                    return s(StmtKind::Default(Box::new(body)));
                }
                "break" | "continue" => {
                    self.pos += 1;
                    self.expect(";")?;
                    return s(if w == "break" {
                        StmtKind::Break
                    } else {
                        StmtKind::Continue
                    });
                }
                "return" => {
                    self.pos += 1;
                    let e = if self.is_punct(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    return s(StmtKind::Return(e));
                }
                "goto" => {
                    self.pos += 1;
                    if self.is_punct("*") {
                        return Err(CError::new(loc, "computed `goto *` is not supported"));
                    }
                    let (l, _) = self.ident("a label")?;
                    self.expect(";")?;
                    return s(StmtKind::Goto(l));
                }
                "asm" | "__asm__" | "__asm" => return s(StmtKind::Asm(self.asm()?)),
                "typedef" => {
                    self.typedef()?;
                    return s(StmtKind::Empty);
                }
                _ => {}
            }
            if self.type_starts_at(self.pos) {
                // `cuda::atomic_ref<T, S>(x).op()` is an expression, `cuda::atomic_ref<T, S> r(x);`
                // and `int(x)` a declaration and a cast.
                let save = self.pos;
                let mut st = Storage::default();
                let spec = self.type_spec(&mut st)?;
                if !self.is_punct("(") {
                    return s(StmtKind::Decl(self.declaration_rest(spec, st, loc)?));
                }
                self.pos = save;
            }
        }
        let e = self.expr()?;
        self.expect(";")?;
        s(StmtKind::Expr(e))
    }

    /// `asm [volatile] ("template" [: "=r"(x), ...] [: inputs] [: clobbers]);`
    pub(crate) fn asm(&mut self) -> R<Asm> {
        let loc = self.loc();
        self.pos += 1;
        while self.eat_word("volatile") || self.eat_word("__volatile__") {}
        self.expect("(")?;
        let mut template = String::new();
        while let Tok::Str(s) = self.peek().clone() {
            self.pos += 1;
            template.push_str(&s);
        }
        let mut outputs = Vec::new();
        if self.eat(":") {
            while let Tok::Str(c) = self.peek().clone() {
                self.pos += 1;
                self.expect("(")?;
                let e = self.expr()?;
                self.expect(")")?;
                outputs.push((c, e));
                if !self.eat(",") {
                    break;
                }
            }
        }
        if self.is_punct(":") {
            return Err(CError::new(loc, "inline asm with inputs or clobbers is not supported (only `asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x))` and the other special registers)"));
        }
        self.expect(")")?;
        self.expect(";")?;
        Ok(Asm {
            template,
            outputs,
            loc,
        })
    }
}
