//! C tokens with `line:col`, for CUDA, OpenCL C and the OpenCL litmus dialect's thread bodies.
//!
//! Models: identifiers, integer literals (decimal, `0x`, `0b`, octal; suffixes `u`, `l`, `ll` in any
//! case and order, typed as C11 §6.4.4.1 says, with 64-bit `long` as on CUDA's LP64 hosts and in
//! OpenCL), floating literals (`1.5`, `2e-3`, `.5f`), character and string literals, the C and C++
//! punctuators, comments, and the preprocessor lines kernels use: `#define NAME tokens` (object-like
//! macros, expanded here), `#undef`, `#include` (ignored: the builtins are known without headers) and
//! `#pragma` (ignored, as compilers ignore pragmas they do not know). A block comment that starts
//! with `gpumemsim` is not a comment but the workload header (`header.rs`), returned with its place.
//!
//! Rejected by name: function-like macros and conditional compilation (`#if`, `#ifdef`, ...), which
//! would need a whole preprocessor.

use super::types::STy;
use super::CError;
use crate::ir::SrcLoc;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// An integer literal: its value and C type.
    Int(u64, STy),
    /// A floating literal; `true` when it has the `f` suffix (a `float`), else a `double` literal.
    Float(f64, bool),
    Str(String),
    Punct(&'static str),
    Eof,
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v, _) => format!("`{v}`"),
            Tok::Float(v, _) => format!("`{v}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the input".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub loc: SrcLoc,
}

/// A `/* gpumemsim ... */` block: the text after the keyword and where that text starts.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderBlock {
    pub text: String,
    pub loc: SrcLoc,
}

#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub headers: Vec<HeaderBlock>,
}

/// Longest first, so that the longest punctuator wins.
const PUNCT: &[&str] = &[
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "&=", "^=", "|=", "::", "{", "}", "(", ")", "[", "]", ";", ",", ".",
    "?", ":", "=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~",
];

/// Tokens one macro use may expand to (with nested macros), against exponential definitions.
const MAX_EXPANSION: usize = 100_000;
/// Tokens all macro uses of one file may expand to together: many uses of a macro just under
/// [`MAX_EXPANSION`] would otherwise multiply a small file into billions of tokens.
const MAX_EXPANSION_TOTAL: usize = 1_000_000;

/// Lexes `text`, whose first character is at `start` in the file (`1:1` for a whole file).
pub fn lex(text: &str, start: SrcLoc) -> Result<Lexed, CError> {
    let mut l = Lexer {
        chars: text.chars().collect(),
        i: 0,
        line: start.line,
        col: start.col,
        at_line_start: true,
        out: Lexed::default(),
        macros: HashMap::new(),
    };
    l.run()?;
    let end = SrcLoc {
        line: l.line,
        col: l.col,
    };
    let mut tokens = expand(std::mem::take(&mut l.out.tokens), &l.macros)?;
    tokens.push(Token {
        tok: Tok::Eof,
        loc: end,
    });
    Ok(Lexed {
        tokens,
        headers: l.out.headers,
    })
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    /// Only blanks since the last newline (a `#` here starts a directive).
    at_line_start: bool,
    out: Lexed,
    macros: HashMap<String, Vec<Token>>,
}

fn err(loc: SrcLoc, m: impl Into<String>) -> CError {
    CError::new(loc, m)
}

impl Lexer {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn loc(&self) -> SrcLoc {
        SrcLoc {
            line: self.line,
            col: self.col,
        }
    }

    /// Takes the next character. Callers peek first; at the end of the input (a caller that did
    /// not) it takes nothing and returns NUL, which no rule accepts, instead of indexing past it.
    fn bump(&mut self) -> char {
        let Some(&c) = self.chars.get(self.i) else {
            return '\0';
        };
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
            self.at_line_start = true;
        } else {
            self.col += 1;
        }
        c
    }

    fn push(&mut self, tok: Tok, loc: SrcLoc) {
        self.out.tokens.push(Token { tok, loc });
        self.at_line_start = false;
    }

    fn run(&mut self) -> Result<(), CError> {
        while let Some(c) = self.peek(0) {
            let at = self.loc();
            if c == '\\' && self.peek(1) == Some('\n') {
                self.bump();
                self.bump();
                self.at_line_start = false;
            } else if c.is_whitespace() {
                self.bump();
            } else if c == '/' && self.peek(1) == Some('/') {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c == '/' && self.peek(1) == Some('*') {
                self.block_comment(at)?;
            } else if c == '#' && self.at_line_start {
                self.directive(at)?;
            } else if c.is_ascii_digit()
                || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()))
            {
                let t = self.number(at)?;
                self.push(t, at);
            } else if c.is_alphabetic() || c == '_' {
                let s = self.word();
                self.push(Tok::Ident(s), at);
            } else if c == '"' {
                let s = self.quoted('"', at)?;
                self.push(Tok::Str(s), at);
            } else if c == '\'' {
                let s = self.quoted('\'', at)?;
                let mut it = s.chars();
                match (it.next(), it.next()) {
                    (Some(ch), None) => self.push(Tok::Int(ch as u64, STy::I32), at),
                    _ => {
                        return Err(err(
                            at,
                            format!("character literal '{s}' must hold one character"),
                        ))
                    }
                }
            } else if let Some(p) = PUNCT.iter().find(|p| {
                p.chars()
                    .enumerate()
                    .all(|(k, pc)| self.peek(k) == Some(pc))
            }) {
                for _ in 0..p.len() {
                    self.bump();
                }
                self.push(Tok::Punct(p), at);
            } else {
                return Err(err(
                    at,
                    format!("unexpected character {}", crate::text::shown_char(c)),
                ));
            }
        }
        Ok(())
    }

    fn word(&mut self) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_alphanumeric() || c == '_' {
                s.push(self.bump());
            } else {
                break;
            }
        }
        s
    }

    fn block_comment(&mut self, at: SrcLoc) -> Result<(), CError> {
        self.bump();
        self.bump();
        // `/* gpumemsim` (after blanks) opens the workload header.
        let mut k = 0;
        while self.peek(k).is_some_and(|c| c == ' ' || c == '\t') {
            k += 1;
        }
        let is_header = "gpumemsim"
            .chars()
            .enumerate()
            .all(|(j, c)| self.peek(k + j) == Some(c))
            && !self
                .peek(k + 9)
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if is_header {
            for _ in 0..k + 9 {
                self.bump();
            }
            if self.peek(0) == Some(':') {
                self.bump();
            }
        }
        let text_loc = self.loc();
        let text_start = self.i;
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some('*'), Some('/')) => break,
                (Some(_), _) => {
                    self.bump();
                }
                (None, _) => return Err(err(at, "unterminated comment: expected `*/`")),
            }
        }
        if is_header {
            self.out.headers.push(HeaderBlock {
                text: self.chars[text_start..self.i].iter().collect(),
                loc: text_loc,
            });
        }
        // (A comment leaves `at_line_start` as it was: it is not a token.)
        self.bump();
        self.bump();
        Ok(())
    }

    /// The rest of a directive line (with `\` continuations) as tokens.
    fn directive_tokens(&mut self) -> Result<Vec<Token>, CError> {
        let mut toks = Vec::new();
        let saved = std::mem::take(&mut self.out.tokens);
        loop {
            match self.peek(0) {
                None | Some('\n') => break,
                Some('\\') if self.peek(1) == Some('\n') => {
                    self.bump();
                    self.bump();
                    self.at_line_start = false;
                }
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') if self.peek(1) == Some('/') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some('/') if self.peek(1) == Some('*') => {
                    let at = self.loc();
                    self.block_comment(at)?;
                }
                Some(_) => {
                    // One token, lexed by the main loop's rules.
                    let before = self.out.tokens.len();
                    let at = self.loc();
                    let c = self.peek(0).unwrap_or(' ');
                    if c.is_ascii_digit()
                        || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()))
                    {
                        let t = self.number(at)?;
                        self.push(t, at);
                    } else if c.is_alphabetic() || c == '_' {
                        let s = self.word();
                        self.push(Tok::Ident(s), at);
                    } else if c == '"' {
                        let s = self.quoted('"', at)?;
                        self.push(Tok::Str(s), at);
                    } else if let Some(p) = PUNCT.iter().find(|p| {
                        p.chars()
                            .enumerate()
                            .all(|(k, pc)| self.peek(k) == Some(pc))
                    }) {
                        for _ in 0..p.len() {
                            self.bump();
                        }
                        self.push(Tok::Punct(p), at);
                    } else if c == '#' {
                        return Err(err(at, "`#` and `##` in macros are not supported"));
                    } else {
                        return Err(err(
                            at,
                            format!("unexpected character {}", crate::text::shown_char(c)),
                        ));
                    }
                    debug_assert!(self.out.tokens.len() > before);
                }
            }
        }
        toks.append(&mut self.out.tokens);
        self.out.tokens = saved;
        Ok(toks)
    }

    fn directive(&mut self, at: SrcLoc) -> Result<(), CError> {
        self.bump(); // '#'
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        let nat = self.loc();
        let name = self.word();
        match name.as_str() {
            "" => {
                let rest = self.directive_tokens()?;
                if !rest.is_empty() {
                    return Err(err(at, "expected a preprocessor directive after `#`"));
                }
            }
            "define" => {
                let mut rest = self.directive_tokens()?;
                let Some(first) = (!rest.is_empty()).then(|| rest.remove(0)) else {
                    return Err(err(nat, "`#define` needs a macro name"));
                };
                let Tok::Ident(mname) = first.tok else {
                    return Err(err(first.loc, format!("found {} but expected a macro name", first.tok.describe())));
                };
                let fn_like = rest.first().is_some_and(|t| {
                    t.tok == Tok::Punct("(") && t.loc.line == first.loc.line
                        && t.loc.col == first.loc.col + mname.chars().count() as u32
                });
                if fn_like {
                    return Err(err(
                        first.loc,
                        format!("function-like macro `{mname}(...)` is not supported (object-like macros are: `#define {mname} value`)"),
                    ));
                }
                self.macros.insert(mname, rest);
            }
            "undef" => {
                let rest = self.directive_tokens()?;
                match rest.as_slice() {
                    [Token { tok: Tok::Ident(m), .. }] => {
                        self.macros.remove(m);
                    }
                    _ => return Err(err(nat, "`#undef` takes one macro name")),
                }
            }
            // Headers are not read: the CUDA and OpenCL builtins are known without them.
            "include" | "pragma" => {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    if self.peek(0) == Some('\\') && self.peek(1) == Some('\n') {
                        self.bump();
                    }
                    self.bump();
                }
            }
            "if" | "ifdef" | "ifndef" | "elif" | "else" | "endif" | "elifdef" | "elifndef" => {
                return Err(err(
                    at,
                    format!("`#{name}` is not supported: conditional compilation needs a preprocessor (use a workload parameter and `if`)"),
                ))
            }
            _ => {
                return Err(err(
                    at,
                    format!("`#{name}` is not supported (the front end handles #define, #undef, #include and #pragma)"),
                ));
            }
        }
        self.at_line_start = true;
        Ok(())
    }

    fn quoted(&mut self, q: char, at: SrcLoc) -> Result<String, CError> {
        self.bump();
        let mut s = String::new();
        let unterminated = || {
            err(
                at,
                if q == '"' {
                    "unterminated string literal"
                } else {
                    "unterminated character literal"
                },
            )
        };
        loop {
            match self.peek(0) {
                None | Some('\n') => return Err(unterminated()),
                Some(c) if c == q => {
                    self.bump();
                    return Ok(s);
                }
                Some('\\') => {
                    self.bump();
                    // A backslash ending the file or the line ends no escape.
                    let e = match self.peek(0) {
                        None | Some('\n') => return Err(unterminated()),
                        Some(_) => self.bump(),
                    };
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        '0' => '\0',
                        '\\' | '\'' | '"' | '%' => e,
                        _ => {
                            return Err(err(
                                at,
                                format!(
                                "escape `\\{e}` is not supported (\\n, \\t, \\0, \\\\, \\', \\\")"
                            ),
                            ))
                        }
                    });
                }
                Some(_) => s.push(self.bump()),
            }
        }
    }

    fn number(&mut self, at: SrcLoc) -> Result<Tok, CError> {
        let mut s = String::new();
        // Everything a pp-number may hold: digits, letters, `.`, `_`, and a sign after an exponent.
        while let Some(c) = self.peek(0) {
            let sign_after_exp = (c == '+' || c == '-')
                && s.chars()
                    .last()
                    .is_some_and(|p| p == 'e' || p == 'E' || p == 'p' || p == 'P')
                && !s.starts_with("0x")
                && !s.starts_with("0X");
            if c.is_alphanumeric() || c == '.' || c == '_' || c == '\'' || sign_after_exp {
                self.bump();
                if c != '\'' {
                    s.push(c);
                }
            } else {
                break;
            }
        }
        let bad = |why: &str| err(at, format!("`{s}` is not a valid number: {why}"));
        let lower = s.to_ascii_lowercase();
        let is_hex = lower.starts_with("0x");
        let is_float = !is_hex && (lower.contains('.') || lower.contains('e'));
        if is_float {
            let (body, f) = match lower.strip_suffix('f') {
                Some(b) => (b, true),
                None => (lower.as_str(), false),
            };
            if body.ends_with('l') {
                return Err(bad("long double is not supported"));
            }
            return body
                .parse::<f64>()
                .map(|v| Tok::Float(v, f))
                .map_err(|_| bad("expected digits, `.`, an exponent and an optional `f`"));
        }
        let digits_end = lower
            .find(['u', 'l'])
            .filter(|&i| !(is_hex && i < 2))
            .unwrap_or(lower.len());
        let (digits, suffix) = lower.split_at(digits_end);
        let (unsigned, longs) = match suffix {
            "" => (false, 0),
            "u" => (true, 0),
            "l" => (false, 1),
            "ul" | "lu" => (true, 1),
            "ll" => (false, 2),
            "ull" | "llu" => (true, 2),
            _ => return Err(bad("the suffix is u, l, ll or a combination")),
        };
        let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
            (16, h)
        } else if let Some(b) = digits.strip_prefix("0b") {
            (2, b)
        } else if digits.len() > 1 && digits.starts_with('0') {
            (8, &digits[1..])
        } else {
            (10, digits)
        };
        let v = u64::from_str_radix(body, radix)
            .map_err(|_| bad("digits out of range or too large for 64 bits"))?;
        // C11 §6.4.4.1: the first type of the list that holds the value (64-bit long).
        let decimal = radix == 10;
        let ty = if longs == 0 && v <= i32::MAX as u64 && !unsigned {
            STy::I32
        } else if longs == 0 && v <= u32::MAX as u64 && (unsigned || !decimal) {
            STy::U32
        } else if !unsigned && v <= i64::MAX as u64 {
            STy::I64
        } else if unsigned || !decimal {
            STy::U64
        } else {
            return Err(bad(
                "too large for a signed 64-bit integer (add a `u` suffix)",
            ));
        };
        Ok(Tok::Int(v, ty))
    }
}

/// Replaces uses of object-like macros by their tokens (recursively, a macro never inside itself);
/// the expanded tokens take the place of the use.
fn expand(tokens: Vec<Token>, macros: &HashMap<String, Vec<Token>>) -> Result<Vec<Token>, CError> {
    if macros.is_empty() {
        return Ok(tokens);
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut total = MAX_EXPANSION_TOTAL;
    for t in tokens {
        let loc = t.loc;
        let mut budget = MAX_EXPANSION;
        expand_one(t, macros, &mut Vec::new(), &mut out, &mut budget)?;
        total = total.checked_sub(MAX_EXPANSION - budget).ok_or_else(|| {
            err(
                loc,
                format!(
                    "macros expand to more than {MAX_EXPANSION_TOTAL} tokens in this file \
                     (the most one file may expand to)"
                ),
            )
        })?;
    }
    Ok(out)
}

fn expand_one(
    t: Token,
    macros: &HashMap<String, Vec<Token>>,
    active: &mut Vec<String>,
    out: &mut Vec<Token>,
    budget: &mut usize,
) -> Result<(), CError> {
    let name = match &t.tok {
        Tok::Ident(n) if macros.contains_key(n) && !active.contains(n) => n.clone(),
        _ => {
            out.push(t);
            return Ok(());
        }
    };
    if active.len() > 64 {
        return Err(err(
            t.loc,
            format!("macro `{name}` expands more than 64 levels deep"),
        ));
    }
    active.push(name.clone());
    for b in &macros[&name] {
        if *budget == 0 {
            return Err(err(
                t.loc,
                format!("macro `{name}` expands to more than {MAX_EXPANSION} tokens"),
            ));
        }
        *budget -= 1;
        let bt = Token {
            tok: b.tok.clone(),
            loc: t.loc,
        };
        expand_one(bt, macros, active, out, budget)?;
    }
    active.pop();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s, SrcLoc { line: 1, col: 1 })
            .unwrap()
            .tokens
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn literals_are_typed_as_c11_says() {
        assert_eq!(
            toks("1 1u 0xFFFFFFFF 4294967296 1ull 2.5f .5 1e3 'a'"),
            vec![
                Tok::Int(1, STy::I32),
                Tok::Int(1, STy::U32),
                Tok::Int(0xFFFF_FFFF, STy::U32),
                Tok::Int(1 << 32, STy::I64),
                Tok::Int(1, STy::U64),
                Tok::Float(2.5, true),
                Tok::Float(0.5, false),
                Tok::Float(1000.0, false),
                Tok::Int(97, STy::I32),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn object_macros_expand_and_headers_are_kept() {
        let l = lex(
            "#include <cuda.h>\n#define MN (2 + R)\n/* gpumemsim\nparam R = 3 */ x[MN] <<= 1;",
            SrcLoc { line: 1, col: 1 },
        )
        .unwrap();
        let t: Vec<Tok> = l.tokens.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(t[2], Tok::Punct("("));
        assert_eq!(t[5], Tok::Ident("R".into()));
        assert!(t.contains(&Tok::Punct("<<=")));
        assert_eq!(l.headers.len(), 1);
        assert_eq!(l.headers[0].loc, SrcLoc { line: 3, col: 13 });
        assert!(l.headers[0].text.contains("param R = 3"));
    }

    #[test]
    fn unsupported_preprocessing_is_named() {
        let e = lex("\n  #ifdef X\n", SrcLoc { line: 1, col: 1 }).unwrap_err();
        assert_eq!(e.loc, SrcLoc { line: 2, col: 3 });
        assert!(
            e.message.contains("`#ifdef` is not supported"),
            "{}",
            e.message
        );
        let e = lex("#define F(x) x\n", SrcLoc { line: 1, col: 1 }).unwrap_err();
        assert!(e.message.contains("function-like macro"), "{}", e.message);
        let e = lex(
            "#define A A A\n#define B A A A A\nB",
            SrcLoc { line: 1, col: 1 },
        );
        assert!(e.is_ok(), "a macro is not expanded inside itself");
    }

    #[test]
    fn a_literal_cut_after_its_backslash_is_unterminated() {
        for (src, what) in [
            ("x = \"a\\", "string"),
            ("'\\", "character"),
            ("\"\\\nx\"", "string"),
        ] {
            let e = lex(src, SrcLoc { line: 1, col: 1 }).unwrap_err();
            assert_eq!(e.message, format!("unterminated {what} literal"), "{src:?}");
        }
    }

    #[test]
    fn the_tokens_all_macro_uses_expand_to_are_bounded() {
        // D is 10,000 tokens, well under one use's bound; 200 uses of it are 2 million.
        let defs = "#define A x x x x x x x x x x\n#define B A A A A A A A A A A\n\
                    #define C B B B B B B B B B B\n#define D C C C C C C C C C C\n";
        let e = lex(
            &format!("{defs}{}", "D ".repeat(200)),
            SrcLoc { line: 1, col: 1 },
        )
        .unwrap_err();
        assert!(e.message.contains("in this file"), "{}", e.message);
        assert_eq!(e.loc.line, 5);
        assert!(lex(
            &format!("{defs}{}", "D ".repeat(50)),
            SrcLoc { line: 1, col: 1 }
        )
        .is_ok());
    }
}
