//! PTX tokens with `line:col` (PTX ISA 8.x, §4 "Syntax"): identifiers (`%r12`, `$L__BB0_3`,
//! `_Z6kernelPi`), dotted words (`.reg`, `.u32`, `.L2::cache_hint`), integer literals (decimal, `0x`,
//! `0b`, octal, optional `U`), floating literals (decimal `1.5`, exact-bits `0f3F800000` and
//! `0d3FF0000000000000`), strings, punctuation, and comments (`//`, `/* */`). A block comment that starts
//! with `gpumemsim` is the workload header, returned with its place as for `.cu` files.
//!
//! Not lexed: the preprocessor (`#include`, `#define`; `ptxas` runs one, compilers never emit it) — a
//! `#` is an error naming it.

use crate::cfront::lexer::HeaderBlock;
use crate::cfront::CError;
use crate::ir::SrcLoc;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier, including `%`-names (registers, special registers) and `$`-labels.
    Ident(String),
    /// A dotted word without its dot: `.u32` is `Dot("u32")`.
    Dot(String),
    /// An integer literal's value (negation is the parser's `-`).
    Int(u64),
    /// A decimal floating literal.
    Float(f64),
    /// `0fXXXXXXXX`: the exact bits of an f32.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the exact bits of an f64.
    F64Bits(u64),
    Str(String),
    Punct(char),
    Eof,
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Dot(s) => format!("`.{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Float(v) => format!("`{v}`"),
            Tok::F32Bits(v) => format!("`0f{v:08X}`"),
            Tok::F64Bits(v) => format!("`0d{v:016X}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub loc: SrcLoc,
}

#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub headers: Vec<HeaderBlock>,
}

const PUNCT: &str = "{}()[];,+-!@|<>=:";

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%'
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Lexes a whole PTX file.
pub fn lex(text: &str) -> Result<Lexed, CError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Lexed::default();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let bump = |i: &mut usize, line: &mut u32, col: &mut u32| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        let at = SrcLoc { line, col };
        if c.is_whitespace() {
            bump(&mut i, &mut line, &mut col);
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                bump(&mut i, &mut line, &mut col);
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            bump(&mut i, &mut line, &mut col);
            bump(&mut i, &mut line, &mut col);
            // `/* gpumemsim` (blanks allowed before the word) opens a header block.
            let mut k = i;
            while k < chars.len() && (chars[k] == ' ' || chars[k] == '\t') {
                k += 1;
            }
            let word: String = chars[k..].iter().take(9).collect();
            let is_header =
                word == "gpumemsim" && !chars.get(k + 9).is_some_and(|&c| ident_char(c));
            if is_header {
                while i < k + 9 {
                    bump(&mut i, &mut line, &mut col);
                }
                if chars.get(i) == Some(&':') {
                    bump(&mut i, &mut line, &mut col);
                }
            }
            let text_loc = SrcLoc { line, col };
            let start = i;
            loop {
                if i + 1 < chars.len() && chars[i] == '*' && chars[i + 1] == '/' {
                    break;
                }
                if i >= chars.len() {
                    return Err(CError::new(at, "unterminated comment: expected `*/`"));
                }
                bump(&mut i, &mut line, &mut col);
            }
            if is_header {
                out.headers.push(HeaderBlock {
                    text: chars[start..i].iter().collect(),
                    loc: text_loc,
                });
            }
            bump(&mut i, &mut line, &mut col);
            bump(&mut i, &mut line, &mut col);
            continue;
        }
        let tok = if ident_start(c) {
            let s = i;
            bump(&mut i, &mut line, &mut col);
            while i < chars.len() && ident_char(chars[i]) {
                bump(&mut i, &mut line, &mut col);
            }
            Tok::Ident(chars[s..i].iter().collect())
        } else if c == '.'
            && chars
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_')
        {
            bump(&mut i, &mut line, &mut col);
            let s = i;
            // `.L1::evict_last`: a qualifier may hold `::`.
            while i < chars.len()
                && (ident_char(chars[i])
                    || (chars[i] == ':' && chars.get(i + 1) == Some(&':'))
                    || (chars[i] == ':' && i > s && chars[i - 1] == ':'))
            {
                bump(&mut i, &mut line, &mut col);
            }
            Tok::Dot(chars[s..i].iter().collect())
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()))
        {
            let s = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                // An exponent's sign belongs to the literal.
                bump(&mut i, &mut line, &mut col);
                if i < chars.len()
                    && (chars[i] == '-' || chars[i] == '+')
                    && matches!(chars[i - 1], 'e' | 'E')
                    && !chars[s..i].iter().any(|c| matches!(c, 'x' | 'X'))
                {
                    bump(&mut i, &mut line, &mut col);
                }
            }
            let lit: String = chars[s..i].iter().collect();
            number(&lit).ok_or_else(|| {
                CError::new(at, format!("found `{lit}` but expected a number (decimal, 0x hex, 0b binary, octal, 1.5, 0f3F800000 or 0d3FF0000000000000)"))
            })?
        } else if c == '"' {
            bump(&mut i, &mut line, &mut col);
            let s = i;
            while i < chars.len() && chars[i] != '"' && chars[i] != '\n' {
                bump(&mut i, &mut line, &mut col);
            }
            if chars.get(i) != Some(&'"') {
                return Err(CError::new(at, "unterminated string: expected `\"`"));
            }
            let v: String = chars[s..i].iter().collect();
            bump(&mut i, &mut line, &mut col);
            Tok::Str(v)
        } else if PUNCT.contains(c) {
            bump(&mut i, &mut line, &mut col);
            Tok::Punct(c)
        } else if c == '#' {
            return Err(CError::new(at, "found `#`: the PTX preprocessor (#include, #define) is not supported; compilers never emit it"));
        } else {
            return Err(CError::new(
                at,
                format!("found `{c}` but expected a PTX token"),
            ));
        };
        out.tokens.push(Token { tok, loc: at });
    }
    out.tokens.push(Token {
        tok: Tok::Eof,
        loc: SrcLoc { line, col },
    });
    Ok(out)
}

/// The value of a numeric literal (PTX ISA §4.5 "Constants").
fn number(lit: &str) -> Option<Tok> {
    let l = lit.strip_suffix('U').unwrap_or(lit);
    let lower = l.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0f") {
        return (h.len() == 8).then(|| u32::from_str_radix(h, 16).ok().map(Tok::F32Bits))?;
    }
    if let Some(h) = lower.strip_prefix("0d") {
        return (h.len() == 16).then(|| u64::from_str_radix(h, 16).ok().map(Tok::F64Bits))?;
    }
    if let Some(h) = lower.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok().map(Tok::Int);
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return u64::from_str_radix(b, 2).ok().map(Tok::Int);
    }
    if lower.contains('.') || lower.contains('e') {
        return lit.parse::<f64>().ok().map(Tok::Float);
    }
    if lower.len() > 1 && lower.starts_with('0') {
        return u64::from_str_radix(&lower[1..], 8).ok().map(Tok::Int);
    }
    lower.parse::<u64>().ok().map(Tok::Int)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().tokens.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn instruction_tokens_and_literals() {
        assert_eq!(
            toks("@!%p1 ld.global.v2.u32 {%r1, %r2}, [%rd3+-8]; // c"),
            vec![
                Tok::Punct('@'),
                Tok::Punct('!'),
                Tok::Ident("%p1".into()),
                Tok::Ident("ld".into()),
                Tok::Dot("global".into()),
                Tok::Dot("v2".into()),
                Tok::Dot("u32".into()),
                Tok::Punct('{'),
                Tok::Ident("%r1".into()),
                Tok::Punct(','),
                Tok::Ident("%r2".into()),
                Tok::Punct('}'),
                Tok::Punct(','),
                Tok::Punct('['),
                Tok::Ident("%rd3".into()),
                Tok::Punct('+'),
                Tok::Punct('-'),
                Tok::Int(8),
                Tok::Punct(']'),
                Tok::Punct(';'),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("0f3F800000 0x10 010 0b11 1.5 0d3FF0000000000000 $L__BB0_2 .L1::evict_last"),
            vec![
                Tok::F32Bits(0x3F80_0000),
                Tok::Int(16),
                Tok::Int(8),
                Tok::Int(3),
                Tok::Float(1.5),
                Tok::F64Bits(0x3FF0_0000_0000_0000),
                Tok::Ident("$L__BB0_2".into()),
                Tok::Dot("L1::evict_last".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn header_block_and_errors_have_places() {
        let l = lex("/* gpumemsim\ngroups 1\n*/\n.version 8.0").unwrap();
        assert_eq!(l.headers.len(), 1);
        assert_eq!(l.headers[0].text, "\ngroups 1\n");
        assert_eq!(l.tokens[0].loc, SrcLoc { line: 4, col: 1 });
        let e = lex("\n  #include <x>").unwrap_err();
        assert_eq!(e.loc, SrcLoc { line: 2, col: 3 });
        assert!(lex("0f123").is_err());
    }
}
