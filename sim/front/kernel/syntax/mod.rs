//! The statements of a kernel file as written: declarations, the kernel block with its labels and
//! instructions, checks. Names are not resolved here and no value is computed; `lower/` does both.
//! The tree's types are in `tree.rs`, expressions are parsed in `expr.rs`, statements here.
//!
//! Grammar (one statement per line; `[..]` optional, `{..}` repeated):
//! ```text
//! param NAME = EXPR                     require EXPR [, "message"]
//! groups EXPR [, EXPR [, EXPR]]         group_size EXPR [, EXPR [, EXPR]]
//! buffer NAME : TYPE [ EXPR ] [= INIT]  local NAME : TYPE [ EXPR ]
//! arg %NAME : TYPE = EXPR               reg %NAME {, %NAME}      (%r<4> declares %r0..%r3)
//! check [forall VAR in BUFFER :] EXPR   report NAME = EXPR
//! kernel NAME {  ...labels, instructions, reg, local...  }
//! [@[!]%p] MNEMONIC{.QUALIFIER} [OPERAND {, OPERAND}] [;]
//! ```
//! Expressions use Rust's precedence: `* / %`, then `+ -`, then `<< >>`, `&`, `^`, `|`, comparisons,
//! `&&`, `||`.

use super::lexer::{Tok, Token};
use super::KernelError;
use crate::ir::SrcLoc;

mod expr;
mod tree;

pub use tree::*;

/// Statements that only appear outside the kernel block.
const DECLARATIONS: [&str; 9] = [
    "param",
    "require",
    "groups",
    "group_size",
    "buffer",
    "arg",
    "check",
    "report",
    "kernel",
];

/// Deepest nesting in one expression: parentheses, unary operators and the operators of a chain
/// (`1 + 2 + 3` nests its additions), so that every tree the parser builds is at most this deep and
/// the recursive passes over it (lowering, evaluation, drop) stay far from the stack's end.
const MAX_NESTING: usize = 256;

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    file: &'a str,
    lines: Vec<&'a str>,
}

type R<T> = Result<T, KernelError>;

/// Parses the token stream of a whole file.
pub fn parse(toks: Vec<Token>, text: &str, file: &str) -> R<Vec<Stmt>> {
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
        file,
        lines: text.lines().collect(),
    };
    let mut out = Vec::new();
    // Location of the open `kernel NAME {`, while inside the block.
    let mut open: Option<SrcLoc> = None;
    loop {
        while p.peek() == &Tok::Newline {
            p.pos += 1;
        }
        if p.peek() == &Tok::Eof {
            break;
        }
        let loc = p.loc();
        if open.is_some() && p.peek() == &Tok::Punct("}") {
            p.pos += 1;
            open = None;
            out.push(Stmt {
                kind: StmtKind::EndKernel,
                loc,
            });
            p.end_of_line()?;
            continue;
        }
        let word = match p.peek() {
            Tok::Ident(w) => Some(w.clone()),
            _ => None,
        };
        let inside = open.is_some();
        let stmt = match (word.as_deref(), inside) {
            (Some("reg"), _) => {
                p.pos += 1;
                StmtKind::Reg(p.reg_list()?)
            }
            (Some("local"), _) => {
                p.pos += 1;
                let (name, _) = p.ident("a local array name")?;
                p.punct(":")?;
                let ty = p.ident("a type (u32, i32, u64, i64, f32)")?;
                p.punct("[")?;
                let len = p.expr()?;
                p.punct("]")?;
                StmtKind::Local { name, ty, len }
            }
            (Some(_), false) => p.declaration()?,
            (Some(w), true) if DECLARATIONS.contains(&w) => {
                return Err(p.err(
                    loc,
                    format!("`{w}` declarations go outside the kernel block (only labels, instructions, reg and local are inside)"),
                ))
            }
            (_, true) => {
                // A label `name:` (possibly followed by an instruction on the same line).
                if let (Tok::Ident(name), Some(Tok::Punct(":"))) = (p.peek(), p.peek_at(1)) {
                    let name = name.clone();
                    p.pos += 2;
                    out.push(Stmt {
                        kind: StmtKind::Label(name),
                        loc,
                    });
                    if matches!(p.peek(), Tok::Newline) {
                        continue;
                    }
                }
                StmtKind::Inst(p.instruction()?)
            }
            (None, false) => {
                return Err(p.expected(
                    "a declaration (param, require, groups, group_size, buffer, local, arg, reg, check, report, kernel)",
                ))
            }
        };
        if let StmtKind::Kernel { .. } = stmt {
            p.punct("{")?;
            open = Some(loc);
        }
        out.push(Stmt { kind: stmt, loc });
        p.end_of_line()?;
    }
    if let Some(l) = open {
        return Err(KernelError::at(
            file,
            l.line,
            l.col,
            "the kernel block opened here is never closed: expected `}` before the end of the file",
        ));
    }
    Ok(out)
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn loc(&self) -> SrcLoc {
        let t = &self.toks[self.pos];
        SrcLoc {
            line: t.line,
            col: t.col,
        }
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn err(&self, loc: SrcLoc, message: impl Into<String>) -> KernelError {
        KernelError::at(self.file, loc.line, loc.col, message)
    }

    /// "found X but expected Y" at the current token.
    fn expected(&self, what: &str) -> KernelError {
        self.err(
            self.loc(),
            format!("found {} but expected {what}", self.peek().describe()),
        )
    }

    fn punct(&mut self, p: &'static str) -> R<()> {
        if self.peek() == &Tok::Punct(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn eat(&mut self, p: &'static str) -> bool {
        if self.peek() == &Tok::Punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self, what: &str) -> R<(String, SrcLoc)> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.pos += 1;
                Ok((s, loc))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn keyword(&mut self, k: &str) -> R<()> {
        match self.peek() {
            Tok::Ident(s) if s == k => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.expected(&format!("`{k}`"))),
        }
    }

    fn end_of_line(&mut self) -> R<()> {
        self.eat(";");
        match self.peek() {
            Tok::Newline => {
                self.pos += 1;
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.expected("the end of the line")),
        }
    }

    fn reg_list(&mut self) -> R<Vec<(String, SrcLoc)>> {
        let mut regs = Vec::new();
        loop {
            let loc = self.loc();
            let name = match self.peek().clone() {
                Tok::Reg(n) => {
                    self.pos += 1;
                    n
                }
                _ => return Err(self.expected("a register name like `%i`")),
            };
            if self.peek() == &Tok::Punct("<") {
                // PTX range declaration: %r<4> is %r0 .. %r3.
                self.pos += 1;
                let nloc = self.loc();
                let n = match self.next().tok {
                    Tok::Int(n) if (1..=4096).contains(&n) => n,
                    t => {
                        return Err(self.err(
                            nloc,
                            format!(
                                "found {} but expected a register count from 1 to 4096",
                                t.describe()
                            ),
                        ))
                    }
                };
                self.punct(">")?;
                for i in 0..n {
                    regs.push((format!("{name}{i}"), loc));
                }
            } else {
                regs.push((name, loc));
            }
            if !self.eat(",") {
                return Ok(regs);
            }
        }
    }

    fn dims(&mut self) -> R<Vec<Expr>> {
        let mut v = vec![self.expr()?];
        while self.eat(",") {
            if v.len() == 3 {
                return Err(self.err(
                    self.loc(),
                    "found a fourth dimension but a launch has at most three (x, y, z)",
                ));
            }
            v.push(self.expr()?);
        }
        Ok(v)
    }

    fn declaration(&mut self) -> R<StmtKind> {
        let (word, wloc) = self.ident("a declaration")?;
        Ok(match word.as_str() {
            "param" => {
                let (name, _) = self.ident("a parameter name")?;
                self.punct("=")?;
                StmtKind::Param {
                    name,
                    value: self.expr()?,
                }
            }
            "require" => {
                let cond = self.expr()?;
                let message = if self.eat(",") {
                    match self.peek().clone() {
                        Tok::Str(s) => {
                            self.pos += 1;
                            Some(s)
                        }
                        _ => return Err(self.expected("a message string")),
                    }
                } else {
                    None
                };
                StmtKind::Require { cond, message }
            }
            "groups" => StmtKind::Groups(self.dims()?),
            "group_size" => StmtKind::GroupSize(self.dims()?),
            "buffer" => {
                let (name, _) = self.ident("a buffer name")?;
                self.punct(":")?;
                let ty = self.ident("an element type (u32, i32, u64, i64, f32)")?;
                self.punct("[")?;
                let len = self.expr()?;
                self.punct("]")?;
                let init = if self.eat("=") {
                    self.init()?
                } else {
                    InitSyn::Zero
                };
                StmtKind::Buffer {
                    name,
                    ty,
                    len,
                    init,
                }
            }
            "arg" => {
                let name = match self.peek().clone() {
                    Tok::Reg(n) => {
                        self.pos += 1;
                        n
                    }
                    _ => return Err(self.expected("an argument register like `%k`")),
                };
                self.punct(":")?;
                let ty = self.ident("a type (u32, i32, u64, i64, f32)")?;
                self.punct("=")?;
                StmtKind::Arg {
                    name,
                    ty,
                    value: self.expr()?,
                }
            }
            "check" => {
                let start = self.loc();
                let forall = match self.peek() {
                    Tok::Ident(w) if w == "forall" => {
                        self.pos += 1;
                        let (var, _) = self.ident("a variable name")?;
                        self.keyword("in")?;
                        let (buf, bloc) = self.ident("a buffer name")?;
                        self.punct(":")?;
                        Some((var, buf, bloc))
                    }
                    _ => None,
                };
                let expr = self.expr()?;
                StmtKind::Check {
                    forall,
                    expr,
                    text: self.source_text(start),
                }
            }
            "report" => {
                let (name, _) = self.ident("a quantity name")?;
                self.punct("=")?;
                StmtKind::Report {
                    name,
                    expr: self.expr()?,
                }
            }
            "kernel" => {
                let (name, _) = self.ident("the kernel's name")?;
                StmtKind::Kernel { name }
            }
            _ => {
                return Err(self.err(
                    wloc,
                    format!(
                        "found `{word}` but expected a declaration (param, require, groups, group_size, buffer, \
                         local, arg, reg, check, report, kernel); instructions go inside `kernel NAME {{ ... }}`"
                    ),
                ))
            }
        })
    }

    /// The rest of the source line from `start`, without a trailing comment: a check's text.
    fn source_text(&self, start: SrcLoc) -> String {
        let line = self
            .lines
            .get(start.line as usize - 1)
            .copied()
            .unwrap_or("");
        let rest: String = line.chars().skip(start.col as usize - 1).collect();
        let cut = [rest.find("//"), rest.find('#')]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(rest.len());
        rest[..cut].trim().trim_end_matches(';').trim().to_string()
    }

    fn init(&mut self) -> R<InitSyn> {
        if self.eat("[") {
            let mut v = Vec::new();
            if !self.eat("]") {
                loop {
                    v.push(self.expr()?);
                    if self.eat("]") {
                        break;
                    }
                    self.punct(",")?;
                }
            }
            return Ok(InitSyn::Values(v));
        }
        if let Tok::Ident(w) = self.peek().clone() {
            match w.as_str() {
                "zero" => {
                    self.pos += 1;
                    return Ok(InitSyn::Zero);
                }
                "iota" => {
                    self.pos += 1;
                    return Ok(InitSyn::Iota);
                }
                "fill" | "random" if self.peek_at(1) == Some(&Tok::Punct("(")) => {
                    self.pos += 2;
                    let a = self.expr()?;
                    let init = if w == "fill" {
                        InitSyn::Fill(a)
                    } else {
                        self.punct(",")?;
                        InitSyn::Random {
                            seed: a,
                            modulo: self.expr()?,
                        }
                    };
                    self.punct(")")?;
                    return Ok(init);
                }
                _ => {}
            }
        }
        // A bare constant expression fills every element.
        Ok(InitSyn::Fill(self.expr()?))
    }

    fn instruction(&mut self) -> R<InstSyn> {
        let loc = self.loc();
        let pred = if self.eat("@") {
            let neg = self.eat("!");
            let ploc = self.loc();
            match self.next().tok {
                Tok::Reg(r) => Some((r, !neg, ploc)),
                t => {
                    return Err(self.err(
                        ploc,
                        format!(
                            "found {} but expected a predicate register after `@` (like `@%p` or `@!%p`)",
                            t.describe()
                        ),
                    ))
                }
            }
        } else {
            None
        };
        let (mnemonic, _) = self.ident("an instruction mnemonic (add, ld, st, atom, bra, ...)")?;
        let mut quals = Vec::new();
        while self.peek() == &Tok::Punct(".") {
            self.pos += 1;
            let qloc = self.loc();
            match self.next().tok {
                Tok::Ident(q) => quals.push((q, qloc)),
                t => {
                    return Err(self.err(
                        qloc,
                        format!(
                            "found {} but expected a qualifier after `.` (an order, scope, space, type or operation)",
                            t.describe()
                        ),
                    ))
                }
            }
        }
        let mut operands = Vec::new();
        if !matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Punct(";")) {
            loop {
                operands.push(self.operand()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        Ok(InstSyn {
            pred,
            mnemonic,
            quals,
            operands,
            loc,
        })
    }

    fn operand(&mut self) -> R<Operand> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Reg(name) => {
                self.pos += 1;
                let dim = if self.peek() == &Tok::Punct(".") {
                    self.pos += 1;
                    Some(self.ident("a dimension (x, y or z)")?.0)
                } else {
                    None
                };
                Ok(Operand::Reg { name, dim, loc })
            }
            Tok::Punct("[") => {
                self.pos += 1;
                let b = self.bracket()?;
                Ok(Operand::Addr(b, loc))
            }
            Tok::Ident(name) if self.peek_at(1) == Some(&Tok::Punct("[")) => {
                self.pos += 2;
                let b = self.bracket()?;
                Ok(Operand::Indexed(name, b, loc))
            }
            _ => Ok(Operand::Expr(self.expr()?, loc)),
        }
    }

    /// The inside of `[ ... ]` up to and including `]`.
    fn bracket(&mut self) -> R<Bracket> {
        let loc = self.loc();
        let simple_name_follows = |p: &Parser| {
            matches!(
                p.peek_at(1),
                Some(Tok::Punct("+")) | Some(Tok::Punct("-")) | Some(Tok::Punct("]"))
            )
        };
        let base = match self.peek().clone() {
            Tok::Reg(r) => {
                self.pos += 1;
                BaseSyn::Reg(r, loc)
            }
            Tok::Ident(n) if simple_name_follows(self) => {
                self.pos += 1;
                BaseSyn::Name(n, loc)
            }
            _ => BaseSyn::None,
        };
        let offset = match base {
            BaseSyn::None => Some(self.expr()?),
            _ if matches!(self.peek(), Tok::Punct("+") | Tok::Punct("-")) => {
                let at = self.loc();
                Some(self.climb(Expr::Int(0, at), 0)?)
            }
            _ => None,
        };
        self.punct("]")?;
        Ok(Bracket { base, offset })
    }
}
