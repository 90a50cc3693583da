//! PTX text → [`Module`]: module directives (`.version`, `.target`, `.address_size 64`, `.file`,
//! `.globl`, linkage `.visible`/`.extern`/`.weak`/`.common`), variables in every state space with
//! alignment, vectors, arrays and initialisers, `.entry` and `.func` with `.param` lists and the
//! performance directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.noreturn`,
//! `.pragma`, all accepted and ignored: they bound resources, never change what a kernel computes),
//! and function bodies (`.reg` with `%r<N>` ranges, nested `{ }` scopes, labels, guarded
//! instructions, `.loc` debug lines skipped).
//!
//! Skipped: `.section` blocks (DWARF debug information). Refused: `.address_size 32`, `.alias`
//! and `.branchtargets`/`.calltargets` (indirect branches and calls).

use super::ast::*;
use super::lexer::{Tok, Token};
use crate::cfront::CError;
use crate::ir::SrcLoc;

type R<T> = Result<T, CError>;

pub struct Parser {
    toks: Vec<Token>,
    i: usize,
}

/// Deepest nesting of `{ }` blocks and of operand lists, against a stack overflow on hostile input.
const MAX_DEPTH: usize = 64;

impl Parser {
    pub fn new(toks: Vec<Token>) -> Parser {
        Parser { toks, i: 0 }
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.i].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }
    fn loc(&self) -> SrcLoc {
        self.toks[self.i].loc
    }
    fn next(&mut self) -> Token {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn err<T>(&self, what: &str) -> R<T> {
        Err(CError::new(
            self.loc(),
            format!("found {} but expected {what}", self.peek().describe()),
        ))
    }
    fn punct(&mut self, c: char) -> R<()> {
        if *self.peek() == Tok::Punct(c) {
            self.next();
            Ok(())
        } else {
            self.err(&format!("`{c}`"))
        }
    }
    fn eat(&mut self, c: char) -> bool {
        if *self.peek() == Tok::Punct(c) {
            self.next();
            true
        } else {
            false
        }
    }
    fn ident(&mut self, what: &str) -> R<(String, SrcLoc)> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let l = self.loc();
                self.next();
                Ok((s, l))
            }
            _ => self.err(what),
        }
    }
    fn int(&mut self, what: &str) -> R<u64> {
        match *self.peek() {
            Tok::Int(v) => {
                self.next();
                Ok(v)
            }
            _ => self.err(what),
        }
    }

    /// Skips the tokens of the line the current token is on.
    fn skip_line(&mut self, line: u32) {
        while self.loc().line == line && *self.peek() != Tok::Eof {
            self.next();
        }
    }

    pub fn module(&mut self) -> R<Module> {
        let mut m = Module::default();
        let mut is_extern = false;
        loop {
            let at = self.loc();
            match self.peek().clone() {
                Tok::Eof => return Ok(m),
                Tok::Dot(d) => match d.as_str() {
                    "version" | "target" | "file" | "globl" => {
                        self.next();
                        self.skip_line(at.line);
                    }
                    "address_size" => {
                        self.next();
                        let v = self.int("the address size (64)")?;
                        if v != 64 {
                            return Err(CError::new(at, format!("`.address_size {v}`: only 64-bit addresses are modelled")));
                        }
                    }
                    "pragma" => {
                        self.next();
                        self.skip_line(at.line);
                    }
                    "visible" | "weak" | "common" => {
                        self.next();
                    }
                    "extern" => {
                        self.next();
                        is_extern = true;
                    }
                    "entry" | "func" => {
                        let f = self.function()?;
                        m.funcs.push(f);
                        is_extern = false;
                    }
                    "global" | "const" | "shared" | "local" => {
                        let mut vs = self.var_decl(is_extern)?;
                        m.vars.append(&mut vs);
                        is_extern = false;
                    }
                    "section" => {
                        // DWARF debug information (`-lineinfo`, `-G`): nothing a kernel computes.
                        self.next();
                        while !matches!(self.peek(), Tok::Punct('{') | Tok::Eof) {
                            self.next();
                        }
                        let mut depth = 0usize;
                        loop {
                            match self.next().tok {
                                Tok::Punct('{') => depth += 1,
                                Tok::Punct('}') => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                Tok::Eof => return Err(CError::new(at, "unterminated `.section`: expected `}`")),
                                _ => {}
                            }
                        }
                    }
                    other => {
                        return Err(CError::new(at, format!("found `.{other}` but expected a module directive (.version, .target, .address_size, .entry, .func, .global, .const, .shared)")))
                    }
                },
                _ => return self.err("a module directive (.version, .target, .entry, .func, .global, ...)"),
            }
        }
    }

    fn param_decl(&mut self) -> R<ParamDecl> {
        let loc = self.loc();
        match self.peek() {
            Tok::Dot(d) if d == "param" || d == "reg" => {
                self.next();
            }
            _ => return self.err("`.param`"),
        }
        let mut ty: Option<String> = None;
        let mut ptr = false;
        while let Tok::Dot(d) = self.peek().clone() {
            self.next();
            match d.as_str() {
                "align" => {
                    self.int("an alignment")?;
                }
                "ptr" => ptr = true,
                "global" | "shared" | "const" | "local" => {}
                t => ty = Some(t.to_string()),
            }
        }
        let Some(ty) = ty else {
            return Err(CError::new(
                loc,
                "a parameter needs a type (.u32, .u64, .b8, ...)",
            ));
        };
        let (name, nloc) = self.ident("a parameter name")?;
        let array = if self.eat('[') {
            let n = self.int("an array length")?;
            self.punct(']')?;
            Some(n)
        } else {
            None
        };
        Ok(ParamDecl {
            name,
            ty,
            array,
            ptr,
            loc: nloc,
        })
    }

    fn param_list(&mut self) -> R<Vec<ParamDecl>> {
        self.punct('(')?;
        let mut ps = Vec::new();
        if self.eat(')') {
            return Ok(ps);
        }
        loop {
            ps.push(self.param_decl()?);
            if self.eat(')') {
                return Ok(ps);
            }
            self.punct(',')?;
        }
    }

    fn function(&mut self) -> R<Func> {
        let loc = self.loc();
        let entry = matches!(self.next().tok, Tok::Dot(d) if d == "entry");
        let rets = if !entry && *self.peek() == Tok::Punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        let (name, _) = self.ident("the function's name")?;
        let params = if *self.peek() == Tok::Punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        // Performance-tuning directives bound resources only.
        while let Tok::Dot(d) = self.peek().clone() {
            let l = self.loc();
            match d.as_str() {
                "maxntid" | "reqntid" | "minnctapersm" | "maxnctapersm" | "maxnreg"
                | "noreturn" | "pragma" | "explicitcluster" | "reqnctapercluster"
                | "maxclusterrank" => {
                    self.next();
                    while matches!(self.peek(), Tok::Int(_) | Tok::Str(_) | Tok::Punct(',')) {
                        self.next();
                    }
                    self.eat(';');
                }
                other => {
                    return Err(CError::new(
                        l,
                        format!("found `.{other}` but expected the function body `{{`"),
                    ))
                }
            }
        }
        let (body, end) = if self.eat(';') {
            (None, self.loc())
        } else {
            self.punct('{')?;
            let (b, end) = self.block_body(1)?;
            (Some(b), end)
        };
        Ok(Func {
            name,
            entry,
            params,
            rets,
            body,
            loc,
            end,
        })
    }

    /// Statements up to the closing `}` (consumed); returns them and the place of the `}`.
    fn block_body(&mut self, depth: usize) -> R<(Vec<Stmt>, SrcLoc)> {
        if depth > MAX_DEPTH {
            return Err(CError::new(
                self.loc(),
                format!("blocks nested deeper than {MAX_DEPTH}"),
            ));
        }
        let mut out = Vec::new();
        loop {
            let at = self.loc();
            match self.peek().clone() {
                Tok::Punct('}') => {
                    self.next();
                    return Ok((out, at));
                }
                Tok::Punct('{') => {
                    self.next();
                    let (b, _) = self.block_body(depth + 1)?;
                    out.push(Stmt::Block(b, at));
                }
                Tok::Eof => return self.err("`}` closing the function body"),
                Tok::Dot(d) => match d.as_str() {
                    "reg" => out.push(self.reg_decl()?),
                    "shared" | "local" | "param" | "global" | "const" => {
                        for v in self.var_decl(false)? {
                            out.push(Stmt::Var(v));
                        }
                    }
                    "loc" | "pragma" => {
                        self.next();
                        self.skip_line(at.line);
                    }
                    other => {
                        return Err(CError::new(at, format!("found `.{other}` but expected an instruction, a label or a declaration (.reg, .shared, .local, .param)")))
                    }
                },
                Tok::Ident(name) if *self.peek_at(1) == Tok::Punct(':') => {
                    self.next();
                    self.next();
                    out.push(Stmt::Label(name, at));
                }
                Tok::Punct('@') | Tok::Ident(_) => out.push(Stmt::Inst(self.instr()?)),
                _ => return self.err("an instruction, a label or a declaration"),
            }
        }
    }

    fn reg_decl(&mut self) -> R<Stmt> {
        let loc = self.loc();
        self.next();
        let mut ty = None;
        while let Tok::Dot(d) = self.peek().clone() {
            let l = self.loc();
            self.next();
            if d.starts_with('v') && d[1..].parse::<u32>().is_ok() {
                return Err(CError::new(l, format!("`.reg .{d}` (vector registers) is not modelled yet: declare scalar registers")));
            }
            ty = Some(d);
        }
        let Some(ty) = ty else {
            return Err(CError::new(
                loc,
                "`.reg` needs a type (.b32, .u64, .f32, .pred, ...)",
            ));
        };
        let mut names = Vec::new();
        loop {
            let (n, l) = self.ident("a register name")?;
            let range = if self.eat('<') {
                let k = self.int("a register count")?;
                self.punct('>')?;
                if k > u16::MAX as u64 {
                    return Err(CError::new(
                        l,
                        format!("`{n}<{k}>`: at most {} registers", u16::MAX),
                    ));
                }
                Some(k as u32)
            } else {
                None
            };
            names.push((n, range, l));
            if !self.eat(',') {
                break;
            }
        }
        self.punct(';')?;
        Ok(Stmt::Reg { ty, names, loc })
    }

    fn var_decl(&mut self, mut is_extern: bool) -> R<Vec<VarDecl>> {
        let loc = self.loc();
        let space = match self.next().tok {
            Tok::Dot(d) => match d.as_str() {
                "global" => StateSpace::Global,
                "const" => StateSpace::Const,
                "shared" => StateSpace::Shared,
                "local" => StateSpace::Local,
                _ => StateSpace::Param,
            },
            _ => unreachable!("called at a state space"),
        };
        let mut align = None;
        let mut vector = 1;
        let mut ty = None;
        let mut ty_loc = loc;
        while let Tok::Dot(d) = self.peek().clone() {
            let l = self.loc();
            self.next();
            match d.as_str() {
                "align" => align = Some(self.int("an alignment")?),
                "extern" => is_extern = true,
                "v2" => vector = 2,
                "v4" => vector = 4,
                "v8" => vector = 8,
                "ptr" | "global" | "shared" => {}
                t => {
                    ty = Some(t.to_string());
                    ty_loc = l;
                }
            }
        }
        let Some(ty) = ty else {
            return Err(CError::new(
                loc,
                "a variable needs a type (.u32, .b8, .f32, ...)",
            ));
        };
        let mut out = Vec::new();
        loop {
            let (name, nloc) = self.ident("a variable name")?;
            let mut array: Option<Option<u64>> = None;
            while self.eat('[') {
                if self.eat(']') {
                    array = Some(None);
                    continue;
                }
                let n = self.int("an array length")?;
                self.punct(']')?;
                array = Some(Some(match array {
                    Some(Some(m)) => m
                        .checked_mul(n)
                        .ok_or_else(|| CError::new(nloc, "array too large"))?,
                    _ => n,
                }));
            }
            let init = if self.eat('=') {
                let mut vals = Vec::new();
                self.init_vals(&mut vals, 0)?;
                Some(vals)
            } else {
                None
            };
            out.push(VarDecl {
                space,
                name,
                ty: ty.clone(),
                ty_loc,
                align,
                array,
                vector,
                init,
                is_extern,
                loc: nloc,
            });
            if !self.eat(',') {
                break;
            }
        }
        self.punct(';')?;
        Ok(out)
    }

    fn init_vals(&mut self, out: &mut Vec<InitVal>, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return Err(CError::new(self.loc(), "initialiser nested too deep"));
        }
        if self.eat('{') {
            loop {
                self.init_vals(out, depth + 1)?;
                if self.eat('}') {
                    return Ok(());
                }
                self.punct(',')?;
            }
        }
        let neg = self.eat('-');
        let v = match self.next().tok {
            Tok::Int(v) => InitVal::Int(if neg { -(v as i128) } else { v as i128 }),
            Tok::Float(f) => InitVal::Float(if neg { -f } else { f }),
            Tok::F32Bits(b) if !neg => InitVal::F32Bits(b),
            Tok::F64Bits(b) if !neg => InitVal::F64Bits(b),
            Tok::Ident(s) if !neg => {
                // `generic(x)`
                if self.eat('(') {
                    let (n, _) = self.ident("a variable name")?;
                    self.punct(')')?;
                    InitVal::Symbol(n)
                } else {
                    InitVal::Symbol(s)
                }
            }
            _ => {
                self.i -= 1;
                return self.err("an initialiser value");
            }
        };
        out.push(v);
        Ok(())
    }

    /// An instruction; its place is its opcode's (a guard comes before it).
    fn instr(&mut self) -> R<Instr> {
        let guard = if self.eat('@') {
            let neg = self.eat('!');
            let (p, l) = self.ident("a predicate register after `@`")?;
            Some((p, neg, l))
        } else {
            None
        };
        let (op, oloc) = self.ident("an instruction")?;
        let mut mods = Vec::new();
        while let Tok::Dot(d) = self.peek().clone() {
            mods.push((d, self.loc()));
            self.next();
        }
        let mut operands = Vec::new();
        if !self.eat(';') {
            loop {
                operands.push(self.operand(0)?);
                if self.eat(';') {
                    break;
                }
                self.punct(',')?;
            }
        }
        Ok(Instr {
            guard,
            op,
            mods,
            operands,
            loc: oloc,
        })
    }

    fn operand(&mut self, depth: usize) -> R<Opnd> {
        if depth > MAX_DEPTH {
            return Err(CError::new(self.loc(), "operands nested too deep"));
        }
        let at = self.loc();
        match self.peek().clone() {
            Tok::Punct('[') => {
                self.next();
                let mut base = None;
                let mut offset: i64 = 0;
                match self.peek().clone() {
                    Tok::Ident(s) => {
                        self.next();
                        base = Some(s);
                    }
                    Tok::Int(_) | Tok::Punct('-') => offset = self.signed_int()?,
                    _ => {
                        return self
                            .err("an address: `[reg]`, `[reg+offset]`, `[variable]` or `[offset]`")
                    }
                }
                if base.is_some() {
                    if self.eat('+') {
                        offset = self.signed_int()?;
                    } else if self.eat('-') {
                        offset = -self.signed_int()?;
                    }
                }
                self.punct(']')?;
                Ok(Opnd::Addr {
                    base,
                    offset,
                    loc: at,
                })
            }
            Tok::Punct('{') => {
                self.next();
                let mut v = Vec::new();
                loop {
                    v.push(self.operand(depth + 1)?);
                    if self.eat('}') {
                        return Ok(Opnd::Vector(v, at));
                    }
                    self.punct(',')?;
                }
            }
            Tok::Punct('(') => {
                self.next();
                let mut v = Vec::new();
                if self.eat(')') {
                    return Ok(Opnd::List(v, at));
                }
                loop {
                    v.push(self.operand(depth + 1)?);
                    if self.eat(')') {
                        return Ok(Opnd::List(v, at));
                    }
                    self.punct(',')?;
                }
            }
            Tok::Punct('!') => {
                self.next();
                Ok(Opnd::Not(Box::new(self.operand(depth + 1)?), at))
            }
            Tok::Punct('-') => {
                self.next();
                match self.next().tok {
                    Tok::Int(v) => Ok(Opnd::Int(-(v as i128), at)),
                    Tok::Float(f) => Ok(Opnd::Float(-f, at)),
                    _ => {
                        self.i -= 1;
                        self.err("a number after `-`")
                    }
                }
            }
            Tok::Int(v) => {
                self.next();
                Ok(Opnd::Int(v as i128, at))
            }
            Tok::Float(f) => {
                self.next();
                Ok(Opnd::Float(f, at))
            }
            Tok::F32Bits(b) => {
                self.next();
                Ok(Opnd::F32Bits(b, at))
            }
            Tok::F64Bits(b) => {
                self.next();
                Ok(Opnd::F64Bits(b, at))
            }
            Tok::Ident(s) => {
                self.next();
                if s == "_" {
                    return Ok(Opnd::Sink(at));
                }
                let mut name = s;
                // `%tid.x`: a special register's component.
                if name.starts_with('%') {
                    if let Tok::Dot(d) = self.peek().clone() {
                        if matches!(d.as_str(), "x" | "y" | "z" | "w") {
                            self.next();
                            name = format!("{name}.{d}");
                        }
                    }
                }
                let first = Opnd::Name(name, at);
                if self.eat('|') {
                    let second = self.operand(depth + 1)?;
                    return Ok(Opnd::Pair(Box::new(first), Box::new(second), at));
                }
                Ok(first)
            }
            _ => self.err("an operand"),
        }
    }

    fn signed_int(&mut self) -> R<i64> {
        let neg = self.eat('-');
        let at = self.loc();
        let v = self.int("an integer offset")?;
        let v = i64::try_from(v).map_err(|_| CError::new(at, "offset out of range"))?;
        Ok(if neg { -v } else { v })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(s: &str) -> Module {
        let l = super::super::lexer::lex(s).unwrap();
        Parser::new(l.tokens)
            .module()
            .unwrap_or_else(|e| panic!("{}: {}", e.loc, e.message))
    }

    #[test]
    fn entry_with_params_regs_labels_and_guards() {
        let m = module(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .global .align 4 .u32 counter = 7;\n\
             .visible .entry k(\n .param .u64 k_param_0,\n .param .u32 k_param_1\n)\n.maxntid 256, 1, 1\n{\n\
             .reg .pred %p<2>;\n .reg .b32 %r<4>;\n .shared .align 4 .b8 tile[128];\n\
             mov.u32 %r1, %tid.x;\n setp.ge.u32 %p1, %r1, 4;\n @%p1 bra $L__BB0_2;\n\
             st.shared.u32 [tile+4], %r1;\n$L__BB0_2:\n ret;\n}\n",
        );
        assert_eq!(m.vars.len(), 1);
        assert_eq!(m.vars[0].init, Some(vec![InitVal::Int(7)]));
        let f = &m.funcs[0];
        assert!(f.entry);
        assert_eq!(f.params.len(), 2);
        let body = f.body.as_ref().unwrap();
        assert!(matches!(&body[0], Stmt::Reg { names, .. } if names[0].1 == Some(2)));
        assert!(matches!(&body[2], Stmt::Var(v) if v.array == Some(Some(128))));
        let Stmt::Inst(mov) = &body[3] else { panic!() };
        assert_eq!(
            mov.operands[1],
            Opnd::Name("%tid.x".into(), SrcLoc { line: 14, col: 14 })
        );
        let Stmt::Inst(bra) = &body[5] else { panic!() };
        assert_eq!(
            bra.guard.as_ref().map(|g| (g.0.as_str(), g.1)),
            Some(("%p1", false))
        );
        assert_eq!(bra.loc, SrcLoc { line: 16, col: 7 });
        let Stmt::Inst(st) = &body[6] else { panic!() };
        assert!(
            matches!(&st.operands[0], Opnd::Addr { base: Some(b), offset: 4, .. } if b == "tile")
        );
        assert!(matches!(&body[7], Stmt::Label(l, _) if l == "$L__BB0_2"));
    }

    #[test]
    fn func_with_return_and_call_block() {
        let m = module(
            ".func (.param .b32 r) f(.param .b32 a)\n{ .reg .b32 %r<2>; ld.param.b32 %r1, [a]; st.param.b32 [r], %r1; ret; }\n\
             .entry k() { .reg .b32 %r<3>;\n { .param .b32 p0; st.param.b32 [p0], 1; .param .b32 q;\n call.uni (q), f, (p0); ld.param.b32 %r1, [q]; }\n ret; }",
        );
        assert_eq!(m.funcs[0].rets.len(), 1);
        let Stmt::Block(b, _) = &m.funcs[1].body.as_ref().unwrap()[1] else {
            panic!()
        };
        let Stmt::Inst(call) = &b[3] else { panic!() };
        assert_eq!(call.op, "call");
        assert!(matches!(&call.operands[0], Opnd::List(v, _) if v.len() == 1));
        assert!(matches!(&call.operands[2], Opnd::List(v, _) if v.len() == 1));
    }

    #[test]
    fn errors_name_the_place() {
        let l =
            super::super::lexer::lex(".version 8.0\n.entry k() {\n  add.u32 %r1, , 2;\n}").unwrap();
        let e = Parser::new(l.tokens).module().unwrap_err();
        assert_eq!(e.loc, SrcLoc { line: 3, col: 16 });
        assert!(e.message.contains("expected an operand"), "{}", e.message);
        let l = super::super::lexer::lex(".address_size 32").unwrap();
        assert!(Parser::new(l.tokens)
            .module()
            .unwrap_err()
            .message
            .contains("64-bit"));
    }
}
