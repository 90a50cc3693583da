//! The tokenizer shared by both litmus dialects and the condition language.
//!
//! Produces identifiers (letters, digits, `_`, `.`, `::` between letters, and a leading `%` or `$`,
//! so that PTX mnemonics such as `ld.shared::cta.acquire.gpu` and registers such as `%r1` are one
//! token), integers (decimal or `0x`
//! hexadecimal; a minus sign is its own token), quoted strings and punctuation, each with its
//! 1-based line and column. Comments are `// ...`, `/* ... */` and herd's `(* ... *)`; their text is
//! kept because expectations (`expect: allowed`) live in comments. A herd comment must start with
//! `(*` followed by a blank, so that C's `(*x)` stays code.
//!
//! Does not handle: floating-point literals, character literals, escapes inside strings.

use super::LitmusError;
use crate::ir::SrcLoc;
use crate::text::Located;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Punct(&'static str),
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub loc: SrcLoc,
}

/// A comment and where it starts.
#[derive(Debug, Clone)]
pub struct Comment {
    pub text: String,
    pub loc: SrcLoc,
}

/// Multi-character punctuation first, so that the longest one wins.
const PUNCT: &[&str] = &[
    "/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "{", "}", "(", ")", "[", "]",
    ";", ",", "|", ":", "=", "~", "&", "*", "+", "-", "^", "<", ">", "!", "@", "/", "%",
    // C's conditional operator, for OpenCL thread bodies (re-read by the C front end).
    "?",
];

#[derive(Debug)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub comments: Vec<Comment>,
}

pub fn lex(text: &str, file: &str) -> Result<Lexed, LitmusError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut comments = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let err = |line: u32, col: u32, message: String| {
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line,
            col,
            message,
        })
    };
    // Advances over `n` characters, keeping line and column.
    macro_rules! bump {
        ($n:expr) => {
            for _ in 0..$n {
                if chars[i] == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                i += 1;
            }
        };
    }
    while i < chars.len() {
        let c = chars[i];
        let at = SrcLoc { line, col };
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            bump!(1);
        } else if c == '/' && next == Some('/') {
            let start = i + 2;
            while i < chars.len() && chars[i] != '\n' {
                bump!(1);
            }
            comments.push(Comment {
                text: chars[start..i].iter().collect(),
                loc: at,
            });
        } else if (c == '/' && next == Some('*'))
            // herd's `(* ... *)`, but not C's `(*x)`: the comment needs a blank after `(*`.
            || (c == '(' && next == Some('*') && chars.get(i + 2).is_none_or(|c| c.is_whitespace()))
        {
            let close = if c == '/' { ['*', '/'] } else { ['*', ')'] };
            bump!(2);
            let start = i;
            loop {
                if i + 1 >= chars.len() {
                    return Err(err(at.line, at.col, "unterminated comment".into()));
                }
                if chars[i] == close[0] && chars[i + 1] == close[1] {
                    break;
                }
                bump!(1);
            }
            comments.push(Comment {
                text: chars[start..i].iter().collect(),
                loc: at,
            });
            bump!(2);
        } else if c == '"' {
            bump!(1);
            let start = i;
            while i < chars.len() && chars[i] != '"' {
                bump!(1);
            }
            if i >= chars.len() {
                return Err(err(at.line, at.col, "unterminated string".into()));
            }
            tokens.push(Token {
                tok: Tok::Str(chars[start..i].iter().collect()),
                loc: at,
            });
            bump!(1);
        } else if c.is_ascii_digit() {
            let start = i;
            let hex = c == '0' && matches!(next, Some('x') | Some('X'));
            if hex {
                bump!(2);
            }
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                bump!(1);
            }
            let s: String = chars[start..i].iter().collect();
            let v = if hex {
                u64::from_str_radix(&s[2..], 16).map(|v| v as i64)
            } else {
                s.parse::<i64>()
            };
            match v {
                Ok(v) => tokens.push(Token {
                    tok: Tok::Int(v),
                    loc: at,
                }),
                Err(_) => {
                    return Err(err(
                        at.line,
                        at.col,
                        format!("`{s}` is not an integer (decimal or 0x hexadecimal, 64 bits)"),
                    ))
                }
            }
        } else if c.is_alphabetic()
            || c == '_'
            || ((c == '%' || c == '$' || c == '.') && next.is_some_and(|n| n.is_alphabetic()))
        {
            let start = i;
            bump!(1);
            loop {
                if i < chars.len()
                    && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
                {
                    bump!(1);
                } else if chars.get(i) == Some(&':')
                    && chars.get(i + 1) == Some(&':')
                    && chars.get(i + 2).is_some_and(|c| c.is_alphanumeric())
                {
                    // PTX qualifiers such as `.shared::cta` and `.L2::64B`.
                    bump!(2);
                } else {
                    break;
                }
            }
            tokens.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                loc: at,
            });
        } else if let Some(p) = PUNCT.iter().find(|p| {
            let pc: Vec<char> = p.chars().collect();
            chars.len() >= i + pc.len() && chars[i..i + pc.len()] == pc[..]
        }) {
            tokens.push(Token {
                tok: Tok::Punct(p),
                loc: at,
            });
            bump!(p.chars().count());
        } else {
            return Err(err(
                at.line,
                at.col,
                format!("unexpected character {}", crate::text::shown_char(c)),
            ));
        }
    }
    Ok(Lexed { tokens, comments })
}

/// A cursor over tokens with error helpers that name `file:line:col`.
pub struct Cursor<'a> {
    pub toks: &'a [Token],
    pub pos: usize,
    pub file: &'a str,
    /// Where the input ends (for "unexpected end of file").
    pub end: SrcLoc,
}

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Token], file: &'a str, end: SrcLoc) -> Self {
        Cursor {
            toks,
            pos: 0,
            file,
            end,
        }
    }

    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    pub fn peek_at(&self, k: usize) -> Option<&'a Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    /// Location of the next token (or of the end of input).
    pub fn loc(&self) -> SrcLoc {
        self.toks.get(self.pos).map(|t| t.loc).unwrap_or(self.end)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn next(&mut self) -> Option<&'a Token> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    pub fn error_at(&self, loc: SrcLoc, message: impl Into<String>) -> LitmusError {
        LitmusError::Syntax(Located {
            file: self.file.to_string(),
            line: loc.line,
            col: loc.col,
            message: message.into(),
        })
    }

    /// An error at the next token, describing what was found there.
    pub fn error(&self, expected: &str) -> LitmusError {
        let found = match self.peek() {
            None => "end of file".to_string(),
            Some(t) => format!("`{}`", show(t)),
        };
        self.error_at(self.loc(), format!("expected {expected}, found {found}"))
    }

    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    pub fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if q == s)
    }

    pub fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn eat_ident(&mut self, s: &str) -> bool {
        if self.is_ident(s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect_punct(&mut self, p: &str) -> Result<SrcLoc, LitmusError> {
        let loc = self.loc();
        if self.eat_punct(p) {
            Ok(loc)
        } else {
            Err(self.error(&format!("`{p}`")))
        }
    }

    pub fn ident(&mut self, what: &str) -> Result<(String, SrcLoc), LitmusError> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let loc = self.loc();
                self.pos += 1;
                Ok((s.clone(), loc))
            }
            _ => Err(self.error(what)),
        }
    }

    /// An integer literal with an optional leading minus sign.
    pub fn int(&mut self, what: &str) -> Result<(i64, SrcLoc), LitmusError> {
        let loc = self.loc();
        let neg = self.eat_punct("-");
        match self.peek() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok((if neg { v.wrapping_neg() } else { *v }, loc))
            }
            _ => Err(self.error(what)),
        }
    }
}

pub fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => s.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Punct(p) => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_line_and_column_and_comments_are_kept() {
        let l = lex("PTX MP\n(* expect: allowed *)\n ld.acquire.gpu r0, [x] ; // tail\n~exists (1:r0=-1 /\\ x=0x10)", "t")
            .unwrap();
        let t: Vec<&Tok> = l.tokens.iter().map(|t| &t.tok).collect();
        assert_eq!(t[0], &Tok::Ident("PTX".into()));
        assert_eq!(t[2], &Tok::Ident("ld.acquire.gpu".into()));
        assert_eq!(l.tokens[2].loc, SrcLoc { line: 3, col: 2 });
        assert!(t.contains(&&Tok::Punct("/\\")) && t.contains(&&Tok::Int(16)));
        assert_eq!(l.comments.len(), 2);
        assert!(l.comments[0].text.contains("expect: allowed"));
    }

    #[test]
    fn bad_character_and_unterminated_comment_are_located() {
        let e = lex("PTX A\n  #", "f.litmus").unwrap_err().to_string();
        assert!(e.starts_with("f.litmus:2:3:"), "{e}");
        let e = lex("PTX A\n (* open", "f.litmus").unwrap_err().to_string();
        assert!(
            e.starts_with("f.litmus:2:2:") && e.contains("unterminated"),
            "{e}"
        );
    }
}
