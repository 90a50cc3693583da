//! Tokens of the kernel language, each with its `line:column` (1-based, columns count characters).
//!
//! `%` directly followed by a letter or `_` starts a register name; otherwise it is the remainder
//! operator. The language is line-oriented: a newline ends a statement, except inside `(...)` and `[...]`, where
//! newlines are skipped so that long value lists may span lines. `//` and `#` start comments; `;` at the
//! end of an instruction (a PTX habit) is accepted and ignored.
//!
//! Does not handle: string escapes other than `\"` and `\\` (strings only carry `require` messages).

use super::KernelError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A name: letters, digits and `_`, not starting with a digit.
    Ident(String),
    /// `%name`: a register, argument or special register.
    Reg(String),
    Int(i64),
    Float(f64),
    Str(String),
    /// One- or two-character punctuation: `, : ; . [ ] ( ) { } + - * / % << >> & | ^ && || ! @ = ==
    /// != < <= > >= ..`.
    Punct(&'static str),
    Newline,
    Eof,
}

impl Tok {
    /// How the token reads in an error message ("found ...").
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Reg(s) => format!("`%{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Float(v) => format!("`{v}`"),
            Tok::Str(_) => "a string".into(),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Newline => "the end of the line".into(),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

const PUNCT2: [&str; 9] = ["<<", ">>", "&&", "||", "==", "!=", "<=", ">=", ".."];
const PUNCT1: [&str; 23] = [
    ",", ":", ";", ".", "[", "]", "(", ")", "{", "}", "+", "-", "*", "/", "%", "&", "|", "^", "!",
    "@", "=", "<", ">",
];

/// Splits `text` into tokens; `file` names it in errors.
pub fn lex(text: &str, file: &str) -> Result<Vec<Token>, KernelError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    // Depth of open ( and [: newlines inside them are not statement ends.
    let mut depth = 0i32;
    let err = |line, col, message: String| KernelError::at(file, line, col, message);
    while i < chars.len() {
        let c = chars[i];
        let (l0, c0) = (line, col);
        let push = |out: &mut Vec<Token>, tok| {
            out.push(Token {
                tok,
                line: l0,
                col: c0,
            })
        };
        if c == '\n' {
            if depth == 0 {
                push(&mut out, Tok::Newline);
            }
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        let reg_start = c == '%'
            && chars
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_');
        if c.is_ascii_alphabetic() || c == '_' || reg_start {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            col += (i - start) as u32;
            if let Some(name) = word.strip_prefix('%') {
                push(&mut out, Tok::Reg(name.to_string()));
            } else {
                push(&mut out, Tok::Ident(word));
            }
            continue;
        }
        if c.is_ascii_digit() {
            let (tok, len) = number(&chars[i..]).map_err(|m| err(l0, c0, m))?;
            i += len;
            col += len as u32;
            push(&mut out, tok);
            continue;
        }
        if c == '"' {
            let mut s = String::new();
            i += 1;
            col += 1;
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(err(
                            l0,
                            c0,
                            "found an unterminated string but expected a closing `\"`".into(),
                        ))
                    }
                    Some('"') => {
                        i += 1;
                        col += 1;
                        break;
                    }
                    Some('\\') if matches!(chars.get(i + 1), Some('"') | Some('\\')) => {
                        s.push(chars[i + 1]);
                        i += 2;
                        col += 2;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                        col += 1;
                    }
                }
            }
            push(&mut out, Tok::Str(s));
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let p = PUNCT2
            .iter()
            .find(|p| **p == two)
            .or_else(|| PUNCT1.iter().find(|p| p.starts_with(c)))
            .copied();
        match p {
            Some(p) => {
                match p {
                    "(" | "[" => depth += 1,
                    ")" | "]" => depth = (depth - 1).max(0),
                    _ => {}
                }
                i += p.len();
                col += p.len() as u32;
                push(&mut out, Tok::Punct(p));
            }
            None => {
                return Err(err(
                    l0,
                    c0,
                    format!("found unexpected character {}", crate::text::shown_char(c)),
                ))
            }
        }
    }
    out.push(Token {
        tok: Tok::Newline,
        line,
        col,
    });
    out.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(out)
}

/// A decimal, `0x` hexadecimal or `0b` binary integer (with optional `_` separators), or a decimal
/// float (`1.5`, `2e-3`, `1.0f`). Returns the token and how many characters it used.
fn number(s: &[char]) -> Result<(Tok, usize), String> {
    let radix_prefix = |p: char| s.len() > 2 && s[0] == '0' && (s[1] == p);
    if radix_prefix('x') || radix_prefix('b') {
        let radix = if s[1] == 'x' { 16 } else { 2 };
        let mut n = 2;
        while n < s.len() && (s[n].is_ascii_alphanumeric() || s[n] == '_') {
            n += 1;
        }
        let digits: String = s[2..n].iter().filter(|&&c| c != '_').collect();
        // Hexadecimal literals may use all 64 bits (a raw bit pattern).
        return u64::from_str_radix(&digits, radix)
            .map(|v| (Tok::Int(v as i64), n))
            .map_err(|_| {
                format!(
                    "found `{}` but expected a base-{radix} integer that fits 64 bits",
                    s[..n].iter().collect::<String>()
                )
            });
    }
    let mut n = 0;
    while n < s.len() && (s[n].is_ascii_digit() || s[n] == '_') {
        n += 1;
    }
    let mut float = false;
    // `1..4` is a range, not a float: a fraction needs a digit after the dot.
    if n + 1 < s.len() && s[n] == '.' && s[n + 1].is_ascii_digit() {
        float = true;
        n += 1;
        while n < s.len() && s[n].is_ascii_digit() {
            n += 1;
        }
    }
    if n < s.len() && (s[n] == 'e' || s[n] == 'E') {
        let mut m = n + 1;
        if m < s.len() && (s[m] == '+' || s[m] == '-') {
            m += 1;
        }
        if m < s.len() && s[m].is_ascii_digit() {
            float = true;
            n = m;
            while n < s.len() && s[n].is_ascii_digit() {
                n += 1;
            }
        }
    }
    let text: String = s[..n].iter().filter(|&&c| c != '_').collect();
    let mut used = n;
    if float && used < s.len() && s[used] == 'f' {
        used += 1;
    }
    if used < s.len() && (s[used].is_ascii_alphanumeric() || s[used] == '_') {
        let mut m = used;
        while m < s.len() && (s[m].is_ascii_alphanumeric() || s[m] == '_') {
            m += 1;
        }
        return Err(format!(
            "found `{}` but expected a number",
            s[..m].iter().collect::<String>()
        ));
    }
    if float {
        text.parse::<f64>()
            .map(|v| (Tok::Float(v), used))
            .map_err(|_| format!("found `{text}` but expected a number"))
    } else {
        text.parse::<i64>()
            .map(|v| (Tok::Int(v), used))
            .map_err(|_| {
                format!(
                    "found `{text}` but expected an integer that fits 64 bits (at most {})",
                    i64::MAX
                )
            })
    }
}
