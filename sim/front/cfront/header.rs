//! The workload header of a `.cu` / `.cl` file: a block comment that starts with `gpumemsim`,
//! holding the kernel language's declarations one per line — `param`, `require`, `groups`,
//! `group_size`, `buffer`, `check`, `report`, with exactly their `.kern` meaning — and three
//! statements that connect them to the C kernel:
//!
//! ```text
//! /* gpumemsim
//! param N = 1024
//! groups ceil_div(N, 64)
//! group_size 64
//! buffer data: i32[N] = zero          // binds the kernel's pointer parameter `data`
//! arg cutoff = (R + 0.5) * (R + 0.5)  // a scalar parameter's value (default: the param of its name)
//! arg d_x = x                         // a pointer parameter bound to a buffer of another name
//! local tile: u32[G]                  // the size of `extern __shared__ T tile[]` / `__local T *tile`
//! kernel find_neighbor_atomic         // which kernel to launch when the file defines several
//! check sum(data) == N
//! */
//! ```
//!
//! A comment, so that the file still compiles with nvcc or an OpenCL compiler unchanged. The
//! kernel-language statements are parsed by the kernel language itself (`kernel::parse_kern`), at
//! their own line and column, so that every rule and error message is the same as in a `.kern`
//! file; the values of `arg` and `local` are evaluated the same way.

use super::types::{STy, VTy};
use super::CError;
use crate::ir::SrcLoc;
use crate::kernel::KernelError;
use crate::text::Located;
use crate::workload::{ParamValue, Workload};

/// One header statement: its first word and where it is, and its text (lines with their starts).
#[derive(Debug, Clone)]
pub struct HStmt {
    pub word: String,
    pub loc: SrcLoc,
    pub lines: Vec<(SrcLoc, String)>,
}

/// What the header gives the C kernel.
#[derive(Debug)]
pub struct Header {
    /// The kernel-language part, lowered: geometry, buffers, checks, reports, resolved parameters.
    pub workload: Workload,
    /// Kernel parameters bound explicitly: name, place, value.
    pub args: Vec<(String, SrcLoc, ArgValue)>,
    /// Dynamic local arrays: name, place, element type, length.
    pub locals: Vec<(String, SrcLoc, STy, u64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    Buffer(String),
    /// Raw register bits of the parameter's type.
    Scalar(u64),
}

const KERN_WORDS: [&str; 7] = [
    "param",
    "require",
    "groups",
    "group_size",
    "buffer",
    "check",
    "report",
];
const ALL_WORDS: &str =
    "param, require, groups, group_size, buffer, local, arg, kernel, check, report";

/// Splits the header blocks into statements: a statement starts on a line where no bracket is
/// open, and continues while one is.
pub fn statements(blocks: &[super::lexer::HeaderBlock]) -> Result<Vec<HStmt>, CError> {
    let mut out: Vec<HStmt> = Vec::new();
    for b in blocks {
        let mut depth = 0i64;
        for (i, raw) in b.text.split('\n').enumerate() {
            let line = b.loc.line + i as u32;
            let col0 = if i == 0 { b.loc.col } else { 1 };
            // The code part of the line (comments are `//` and `#`, as in .kern files).
            let code_end = [raw.find("//"), raw.find('#')]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(raw.len());
            let code = &raw[..code_end];
            let start = SrcLoc { line, col: col0 };
            if depth > 0 {
                if let Some(last) = out.last_mut() {
                    last.lines.push((start, raw.to_string()));
                }
            } else if !code.trim().is_empty() {
                let lead = code.chars().take_while(|c| c.is_whitespace()).count();
                let word: String = code
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let wloc = SrcLoc {
                    line,
                    col: col0 + lead as u32,
                };
                if word.is_empty() {
                    return Err(CError::new(
                        wloc,
                        format!("expected a header statement ({ALL_WORDS})"),
                    ));
                }
                out.push(HStmt {
                    word,
                    loc: wloc,
                    lines: vec![(start, raw.to_string())],
                });
            }
            for c in code.chars() {
                match c {
                    '(' | '[' => depth += 1,
                    ')' | ']' => depth -= 1,
                    _ => {}
                }
            }
        }
    }
    for s in &out {
        if !KERN_WORDS.contains(&s.word.as_str())
            && !["local", "arg", "kernel"].contains(&s.word.as_str())
        {
            let hint = match s.word.as_str() {
                "reg" => ": registers are the C variables",
                _ => "",
            };
            return Err(CError::new(
                s.loc,
                format!(
                    "found `{}` but expected a header statement ({ALL_WORDS}){hint}",
                    s.word
                ),
            ));
        }
    }
    Ok(out)
}

/// The kernel named by a `kernel NAME` statement, if any.
pub fn kernel_choice(stmts: &[HStmt]) -> Result<Option<(String, SrcLoc)>, CError> {
    let mut found: Option<(String, SrcLoc)> = None;
    for s in stmts.iter().filter(|s| s.word == "kernel") {
        let mut c = Cur::new(s);
        c.word("kernel")?;
        let (name, at) = c.ident("the kernel's name")?;
        c.end()?;
        if let Some((_, first)) = &found {
            return Err(CError::new(
                s.loc,
                format!("`kernel` is given twice (first at {first})"),
            ));
        }
        found = Some((name, at));
    }
    Ok(found)
}

/// Characters of one statement with their places.
struct Cur {
    chars: Vec<(SrcLoc, char)>,
    i: usize,
    end: SrcLoc,
}

impl Cur {
    fn new(s: &HStmt) -> Cur {
        let mut chars = Vec::new();
        for (start, text) in &s.lines {
            let code_end = [text.find("//"), text.find('#')]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(text.len());
            for (k, c) in text[..code_end].chars().enumerate() {
                chars.push((
                    SrcLoc {
                        line: start.line,
                        col: start.col + k as u32,
                    },
                    c,
                ));
            }
            chars.push((
                SrcLoc {
                    line: start.line,
                    col: start.col + text.chars().count() as u32,
                },
                '\n',
            ));
        }
        let end = chars.last().map(|x| x.0).unwrap_or(s.loc);
        Cur { chars, i: 0, end }
    }

    fn blanks(&mut self) {
        while self
            .chars
            .get(self.i)
            .is_some_and(|(_, c)| c.is_whitespace())
        {
            self.i += 1;
        }
    }

    fn loc(&self) -> SrcLoc {
        self.chars.get(self.i).map(|x| x.0).unwrap_or(self.end)
    }

    fn ident(&mut self, what: &str) -> Result<(String, SrcLoc), CError> {
        self.blanks();
        let at = self.loc();
        let mut s = String::new();
        while let Some(&(_, c)) = self.chars.get(self.i) {
            if c.is_alphanumeric() || c == '_' {
                s.push(c);
                self.i += 1;
            } else {
                break;
            }
        }
        if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(CError::new(at, format!("expected {what}")));
        }
        Ok((s, at))
    }

    fn word(&mut self, w: &str) -> Result<(), CError> {
        let (got, at) = self.ident(&format!("`{w}`"))?;
        if got != w {
            return Err(CError::new(at, format!("found `{got}` but expected `{w}`")));
        }
        Ok(())
    }

    fn punct(&mut self, p: char) -> Result<(), CError> {
        self.blanks();
        match self.chars.get(self.i) {
            Some(&(_, c)) if c == p => {
                self.i += 1;
                Ok(())
            }
            Some(&(at, c)) => Err(CError::new(at, format!("found `{c}` but expected `{p}`"))),
            None => Err(CError::new(self.end, format!("expected `{p}`"))),
        }
    }

    /// The rest up to `stop` at bracket depth 0 (or the end), as (start, text lines).
    fn rest(&mut self, stop: Option<char>) -> (SrcLoc, Vec<(SrcLoc, String)>) {
        self.blanks();
        let start = self.loc();
        let mut lines: Vec<(SrcLoc, String)> = Vec::new();
        let mut depth = 0;
        while let Some(&(at, c)) = self.chars.get(self.i) {
            if depth == 0 && Some(c) == stop {
                break;
            }
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            self.i += 1;
            if c == '\n' {
                continue;
            }
            match lines.last_mut() {
                Some((l, s)) if l.line == at.line => s.push(c),
                _ => lines.push((at, c.to_string())),
            }
        }
        (start, lines)
    }

    fn end(&mut self) -> Result<(), CError> {
        self.blanks();
        self.eat(';');
        self.blanks();
        match self.chars.get(self.i) {
            None => Ok(()),
            Some(&(at, c)) => Err(CError::new(
                at,
                format!("found `{c}` but expected the end of the statement"),
            )),
        }
    }

    fn eat(&mut self, p: char) -> bool {
        if self.chars.get(self.i).is_some_and(|x| x.1 == p) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

/// The kern type name of a scalar parameter.
fn kern_ty(t: STy) -> &'static str {
    match t {
        STy::I32 => "i32",
        STy::U32 | STy::Bool => "u32",
        STy::I64 => "i64",
        STy::U64 => "u64",
        STy::F32 => "f32",
    }
}

/// A line of the generated kernel-language text that stands for a place in the C file.
struct Mapped {
    synth_line: u32,
    orig: SrcLoc,
    synth_col: u32,
}

/// Lowers the header with the kernel language; `params` are the launched kernel's parameters
/// (their types decide how an `arg` value is read).
pub fn evaluate(
    text: &str,
    file: &str,
    stmts: &[HStmt],
    params: &[(String, SrcLoc, VTy)],
    overrides: &[(String, i64)],
) -> Result<Header, KernelError> {
    let cerr = |e: CError| e.in_file(file);
    let nlines = text.split('\n').count();
    let mut synth: Vec<Vec<char>> = vec![Vec::new(); nlines];
    let put = |synth: &mut Vec<Vec<char>>, at: SrcLoc, s: &str| {
        let row = &mut synth[at.line as usize - 1];
        for (col, c) in (at.col as usize - 1..).zip(s.chars()) {
            while row.len() <= col {
                row.push(' ');
            }
            row[col] = c;
        }
    };
    let mut appended: Vec<String> = Vec::new();
    let mut mapped: Vec<Mapped> = Vec::new();
    let mut args = Vec::new();
    let mut locals: Vec<(String, SrcLoc, String)> = Vec::new();
    let first = nlines as u32 + 1;
    let append = |appended: &mut Vec<String>,
                  mapped: &mut Vec<Mapped>,
                  prefix: String,
                  expr: &(SrcLoc, Vec<(SrcLoc, String)>)| {
        let (start, lines) = expr;
        for (k, (at, s)) in lines.iter().enumerate() {
            let line = if k == 0 {
                format!("{prefix}{s}")
            } else {
                s.clone()
            };
            let synth_col = if k == 0 {
                prefix.chars().count() as u32 + 1
            } else {
                1
            };
            mapped.push(Mapped {
                synth_line: first + appended.len() as u32,
                orig: if k == 0 { *start } else { *at },
                synth_col,
            });
            appended.push(line);
        }
    };
    for s in stmts {
        if KERN_WORDS.contains(&s.word.as_str()) {
            for (at, l) in &s.lines {
                put(&mut synth, *at, l);
            }
            continue;
        }
        let mut c = Cur::new(s);
        match s.word.as_str() {
            "kernel" => {}
            "arg" => {
                c.word("arg").map_err(cerr)?;
                let (name, at) = c.ident("a kernel parameter's name").map_err(cerr)?;
                c.punct('=').map_err(cerr)?;
                let Some((_, _, ty)) = params.iter().find(|(n, ..)| *n == name) else {
                    let names: Vec<&str> = params.iter().map(|p| p.0.as_str()).collect();
                    return Err(cerr(CError::new(
                        at,
                        format!(
                            "the kernel has no parameter `{name}` (parameters: {})",
                            names.join(", ")
                        ),
                    )));
                };
                if args
                    .iter()
                    .any(|(n, ..): &(String, SrcLoc, ArgValue)| *n == name)
                {
                    return Err(cerr(CError::new(
                        at,
                        format!("`arg {name}` is given twice"),
                    )));
                }
                let expr = c.rest(None);
                match ty {
                    VTy::Ptr(_) => {
                        let text: Vec<&str> = expr.1.iter().map(|l| l.1.as_str()).collect();
                        let buf = text
                            .join(" ")
                            .trim()
                            .trim_end_matches(';')
                            .trim()
                            .to_string();
                        if buf.is_empty() || !buf.chars().all(|c| c.is_alphanumeric() || c == '_') {
                            return Err(cerr(CError::new(
                                expr.0,
                                format!("`{name}` is a pointer: its value is a buffer's name"),
                            )));
                        }
                        args.push((name, at, ArgValue::Buffer(buf)));
                    }
                    VTy::Scalar(t) => {
                        append(
                            &mut appended,
                            &mut mapped,
                            format!("arg %__arg_{name}: {} = ", kern_ty(*t)),
                            &expr,
                        );
                        args.push((name, at, ArgValue::Scalar(0)));
                    }
                }
            }
            "local" => {
                c.word("local").map_err(cerr)?;
                let (name, at) = c.ident("a local array's name").map_err(cerr)?;
                c.punct(':').map_err(cerr)?;
                let (ty, tat) = c
                    .ident("an element type (u32, i32, u64, i64, f32)")
                    .map_err(cerr)?;
                c.punct('[').map_err(cerr)?;
                let len = c.rest(Some(']'));
                c.punct(']').map_err(cerr)?;
                c.end().map_err(cerr)?;
                if locals.iter().any(|(n, ..)| *n == name) {
                    return Err(cerr(CError::new(
                        at,
                        format!("local array `{name}` is declared twice"),
                    )));
                }
                append(
                    &mut appended,
                    &mut mapped,
                    format!("arg %__local_{name}: i64 = "),
                    &len,
                );
                locals.push((name, tat, ty));
            }
            _ => unreachable!("statements() accepts only known words"),
        }
    }
    appended.push("kernel __c_front {".into());
    appended.push("}".into());
    let mut kern: String = synth
        .iter()
        .map(|r| r.iter().collect::<String>() + "\n")
        .collect();
    for a in &appended {
        kern.push_str(a);
        kern.push('\n');
    }
    let header_loc = stmts
        .first()
        .map(|s| s.loc)
        .unwrap_or(SrcLoc { line: 1, col: 1 });
    let mut w = crate::kernel::parse_kern(&kern, file, overrides).map_err(|e| match e {
        KernelError::At(Located {
            file,
            line,
            col,
            message,
        }) if line >= first => {
            let (line, col) = match mapped.iter().find(|m| m.synth_line == line) {
                Some(m) => (
                    m.orig.line,
                    (m.orig.col as i64 + col as i64 - m.synth_col as i64).max(1) as u32,
                ),
                None => (header_loc.line, header_loc.col),
            };
            KernelError::At(Located {
                file,
                line,
                col,
                message,
            })
        }
        other => other,
    })?;
    let value = |w: &Workload, key: &str| {
        w.params
            .iter()
            .find(|p| p.name == key)
            .and_then(|p| match p.value {
                ParamValue::Scalar(v) => Some(v),
                _ => None,
            })
    };
    for (name, _, v) in args.iter_mut() {
        if let ArgValue::Scalar(raw) = v {
            *raw = value(&w, &format!("%__arg_{name}")).expect("the arg was evaluated");
        }
    }
    let mut out_locals = Vec::new();
    for (name, at, ty) in locals {
        let n = value(&w, &format!("%__local_{name}")).expect("the length was evaluated") as i64;
        let elem = match ty.as_str() {
            "u32" | "b32" => STy::U32,
            "i32" | "s32" => STy::I32,
            "u64" | "b64" => STy::U64,
            "i64" | "s64" => STy::I64,
            "f32" => STy::F32,
            _ => {
                return Err(cerr(CError::new(
                    at,
                    format!("found `{ty}` but expected a type: u32, i32, u64, i64 or f32"),
                )))
            }
        };
        if n < 1 {
            return Err(cerr(CError::new(
                at,
                format!("local array `{name}` of length {n}: must be at least 1"),
            )));
        }
        out_locals.push((name, at, elem, n as u64));
    }
    w.params.clear();
    Ok(Header {
        workload: w,
        args,
        locals: out_locals,
    })
}
