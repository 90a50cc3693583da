//! The parser of the C subset: its token cursor, and the top level of a file (functions and their
//! parameters, typedefs, `extern "C"`, file-scope `__shared__` arrays and constants). Types and
//! declarations are in `parse_types.rs`, statements in `parse_stmt.rs`, expressions in
//! `parse_expr.rs`.
//!
//! One parser for both dialects: they differ only in which words are keywords (OpenCL's `global`,
//! `local`, `kernel`, `uint`, `atomic_int`, ...; CUDA's `__global__`, `__shared__`, `__device__`).
//! Constructs outside the subset are rejected by name at their place ("`struct` is not supported").

use super::ast::*;
use super::lexer::{Tok, Token};
use super::{CError, Dialect};
use crate::ir::SrcLoc;
use std::collections::HashMap;

type R<T> = Result<T, CError>;

pub struct Parser {
    pub(crate) toks: Vec<Token>,
    pub(crate) pos: usize,
    pub(crate) depth: usize,
    pub(crate) dialect: Dialect,
    pub(crate) typedefs: HashMap<String, TypeName>,
}

/// Words that are never a name: the parser rejects them by name where they would start something.
const UNSUPPORTED_WORDS: &[(&str, &str)] = &[
    ("struct", "`struct` is not supported"),
    ("class", "`class` is not supported"),
    ("union", "`union` is not supported"),
    ("enum", "`enum` is not supported"),
    ("template", "templates are not supported (write the instantiated type, e.g. `cuda::atomic_ref<int, cuda::thread_scope_device>`)"),
    ("namespace", "`namespace` is not supported"),
    ("using", "`using` is not supported"),
    ("try", "exceptions are not supported"),
    ("operator", "operator overloading is not supported"),
    ("virtual", "virtual functions are not supported"),
    ("static_assert", "`static_assert` is not supported"),
    ("_Static_assert", "`_Static_assert` is not supported"),
];

impl Parser {
    pub fn new(toks: Vec<Token>, dialect: Dialect) -> Parser {
        Parser {
            toks,
            pos: 0,
            depth: 0,
            dialect,
            typedefs: HashMap::new(),
        }
    }

    // ---- token helpers ----

    pub(crate) fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].tok
    }

    pub(crate) fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }

    pub(crate) fn tok_at(&self, i: usize) -> &Tok {
        &self.toks[i.min(self.toks.len() - 1)].tok
    }

    pub(crate) fn loc(&self) -> SrcLoc {
        self.toks[self.pos.min(self.toks.len() - 1)].loc
    }

    pub(crate) fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    pub(crate) fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == w)
    }

    pub(crate) fn eat(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn expected(&self, what: &str) -> CError {
        CError::new(
            self.loc(),
            format!("found {} but expected {what}", self.peek().describe()),
        )
    }

    pub fn expect(&mut self, p: &'static str) -> R<SrcLoc> {
        let loc = self.loc();
        if self.eat(p) {
            Ok(loc)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    pub(crate) fn ident(&mut self, what: &str) -> R<(String, SrcLoc)> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.pos += 1;
                Ok((s, loc))
            }
            _ => Err(self.expected(what)),
        }
    }

    /// Replaces the `>>` at the cursor by two `>` (C++11 template argument lists).
    pub(crate) fn split_shift(&mut self) {
        let t = self.toks[self.pos].clone();
        let second = Token {
            tok: Tok::Punct(">"),
            loc: SrcLoc {
                line: t.loc.line,
                col: t.loc.col + 1,
            },
        };
        self.toks[self.pos].tok = Tok::Punct(">");
        self.toks.insert(self.pos + 1, second);
    }

    pub(crate) fn unsupported_word(&self) -> Option<CError> {
        let Tok::Ident(w) = self.peek() else {
            return None;
        };
        UNSUPPORTED_WORDS
            .iter()
            .find(|(k, _)| k == w)
            .map(|(_, m)| CError::new(self.loc(), *m))
    }

    pub(crate) fn skip_attributes(&mut self) -> R<()> {
        loop {
            if self.is_word("__attribute__")
                || self.is_word("__launch_bounds__")
                || self.is_word("__declspec")
            {
                self.pos += 1;
                self.expect("(")?;
                self.skip_balanced(")")?;
            } else if self.is_punct("[") && matches!(self.peek_at(1), Tok::Punct("[")) {
                self.pos += 2;
                self.skip_balanced("]")?;
                self.expect("]")?;
            } else {
                return Ok(());
            }
        }
    }

    /// Skips to the `close` matching an already consumed opener (consumed too).
    pub(crate) fn skip_balanced(&mut self, close: &str) -> R<()> {
        let start = self.loc();
        let mut depth = 1usize;
        loop {
            match self.peek() {
                Tok::Eof => {
                    return Err(CError::new(start, format!("unclosed: expected `{close}`")))
                }
                Tok::Punct("(" | "[" | "{") => depth += 1,
                Tok::Punct(")" | "]" | "}") => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    // ---- the file ----

    /// Parses a whole file.
    pub fn unit(&mut self) -> R<Unit> {
        let mut unit = Unit::default();
        loop {
            self.skip_attributes()?;
            let loc = self.loc();
            if matches!(self.peek(), Tok::Eof) {
                return Ok(unit);
            }
            if self.eat(";") {
                continue;
            }
            if let Some(e) = self.unsupported_word() {
                return Err(e);
            }
            if self.is_word("typedef") {
                self.typedef()?;
                continue;
            }
            // `extern "C"` and `extern "C" { ... }`.
            if self.is_word("extern") && matches!(self.peek_at(1), Tok::Str(_)) {
                self.pos += 2;
                if self.eat("{") {
                    let inner = self.unit_until_brace()?;
                    unit.functions.extend(inner.functions);
                    unit.globals.extend(inner.globals);
                }
                continue;
            }
            let mut storage = Storage::default();
            let spec = self.type_spec(&mut storage)?;
            self.skip_attributes()?;
            let kind = if storage.kernel {
                FnKind::Kernel
            } else {
                FnKind::Device
            };
            // A function: `T name(`.
            let save = self.pos;
            let (ptrs, reference) = self.pointers()?;
            if let (Tok::Ident(name), Tok::Punct("(")) =
                (self.peek().clone(), self.peek_at(1).clone())
            {
                let nloc = self.loc();
                self.pos += 2;
                let params = self.params()?;
                self.skip_attributes()?;
                if self.eat(";") {
                    continue; // a prototype
                }
                if !self.is_punct("{") {
                    return Err(self.expected("`{` (the function's body) or `;`"));
                }
                self.pos += 1;
                let body = self.block_body()?;
                let end = self.toks[self.pos - 1].loc;
                unit.functions.push(Function {
                    kind,
                    ret: TypeName {
                        spec,
                        ptrs,
                        reference,
                    },
                    name,
                    loc: nloc,
                    params,
                    body,
                    end,
                });
                continue;
            }
            if kind == FnKind::Kernel {
                return Err(CError::new(loc, "a kernel qualifier needs a function"));
            }
            self.pos = save;
            unit.globals
                .push(self.declaration_rest(spec, storage, loc)?);
        }
    }

    fn unit_until_brace(&mut self) -> R<Unit> {
        // Collect the tokens up to the matching `}` and parse them as a unit of their own.
        let start = self.pos;
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek() {
                Tok::Eof => return Err(self.expected("`}` closing `extern \"C\" {`")),
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        let mut toks: Vec<Token> = self.toks[start..self.pos - 1].to_vec();
        toks.push(Token {
            tok: Tok::Eof,
            loc: self.toks[self.pos - 1].loc,
        });
        let mut inner = Parser::new(toks, self.dialect);
        inner.typedefs = self.typedefs.clone();
        let u = inner.unit()?;
        self.typedefs = inner.typedefs;
        Ok(u)
    }

    fn params(&mut self) -> R<Vec<ParamDecl>> {
        let mut v = Vec::new();
        if self.eat(")") {
            return Ok(v);
        }
        if self.is_word("void") && self.peek_at(1) == &Tok::Punct(")") {
            self.pos += 2;
            return Ok(v);
        }
        loop {
            let loc = self.loc();
            if self.is_punct("...") {
                return Err(CError::new(loc, "variadic functions are not supported"));
            }
            let mut st = Storage::default();
            let spec = self.type_spec(&mut st)?;
            let (mut ptrs, reference) = self.pointers()?;
            let (name, nloc) = self.ident("a parameter name")?;
            // `T name[]` is a pointer.
            while self.eat("[") {
                if !self.eat("]") {
                    self.expr()?;
                    self.expect("]")?;
                }
                ptrs.push(PtrQual::default());
            }
            self.skip_attributes()?;
            if self.is_punct("=") {
                return Err(CError::new(
                    self.loc(),
                    "default arguments are not supported",
                ));
            }
            v.push(ParamDecl {
                ty: TypeName {
                    spec,
                    ptrs,
                    reference,
                },
                name,
                loc: nloc,
            });
            if self.eat(")") {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }
}
