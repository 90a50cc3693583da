//! The parts of a litmus file both dialects share, as herd7 reads them (herdtools7
//! `lib/splitter.mll` for the file structure, `lib/stateParser.mly` for the init block):
//!
//! - the header line `ARCH NAME [(texname) | rest] ["doc"] [;]` (`ARCH`: `PTX` or herdtools7's
//!   `GPU_PTX`, `C`, `OpenCL`): the name is one token of letters,
//!   digits and `_ / . - + [ ]` (`--` names the test after its file); the rest of the line is kept
//!   as the title;
//! - between the header and the init block, any number of quoted strings (the test's comment),
//!   `key = value` lines (herd's info: `Hash=...`, `Cycle=...`, kept in order) and comments;
//! - the init block `{ ... }`: locations (`x=1`, `[x]=1`, `*x=1`, `int x = 1`, `uint64_t x;`,
//!   `local int x = 0`, arrays `int y[2] = {0, 0}` or `y[2]` for zeros) and registers (`P0:r1=5`,
//!   `0:r1=x` or `0:r1=&x` for x's address, `0:r1=y[1]` for an element's address), and Dat3M's
//!   virtual aliases `y @ generic|surface|texture|constant aliases x` (a location like `x` whose test
//!   needs the memory-proxies capability);
//! - the dialect's threads (`ptx.rs`, `opencl.rs`), herd's scope tree and memory map before or after
//!   the final condition (`scope_tree.rs`), the condition (`cond.rs`), and the expectation
//!   (`expect: allowed|forbidden[, required]` in any comment).
//!
//! Sizes derived from the input are bounded before anything is allocated from them (`test.rs`:
//! threads, locations, array lengths, bytes per instance).

use super::capability::Capability;
use super::lex::{lex, Comment, Cursor, Tok};
use super::test::{
    Dialect, Expect, Expectation, LitmusTest, Location, Pending, RegInit, MAX_ARRAY_LEN,
    MAX_INSTANCE_BYTES, MAX_LOCATIONS, MAX_THREADS,
};
use super::{cond, opencl, ptx, scope_tree, LitmusError};
use crate::ir::{Space, SrcLoc, Ty};
use crate::text::Located;

/// A register initialisation of the init block: (thread name, register, value, where).
pub type RegInitEntry = (String, String, RegInit, SrcLoc);

/// Parses the text of a litmus test; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<LitmusTest, LitmusError> {
    let err = |at: SrcLoc, message: String| {
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line: at.line,
            col: at.col,
            message,
        })
    };
    let head = header(text, file)?;
    let pre = preamble(text, head.end, file)?;
    // Everything before the init block is read; blank it out (keeping lines and columns) so that
    // the tokens start at `{`.
    let blanked: String = text[..pre.init]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .chain(text[pre.init..].chars())
        .collect();
    let lexed = lex(&blanked, file)?;
    let lines: Vec<&str> = text.lines().collect();
    let end = SrcLoc {
        line: lines.len().max(1) as u32,
        col: lines
            .last()
            .map(|l| l.chars().count() as u32 + 1)
            .unwrap_or(1),
    };
    let mut c = Cursor::new(&lexed.tokens, file, end);
    let mut locations: Vec<Location> = Vec::new();
    let mut pending = Vec::new();
    let reg_init = init_block(&mut c, &mut locations, &mut pending)?;
    let mut threads = match head.dialect {
        Dialect::Ptx => ptx::parse_threads(&mut c, &mut locations, &reg_init)?,
        Dialect::OpenCl => opencl::parse_threads(&mut c, &blanked, &mut locations, &reg_init)?,
    };
    if threads.len() > MAX_THREADS {
        return Err(err(
            threads[MAX_THREADS].loc,
            format!("more than {MAX_THREADS} threads in one test"),
        ));
    }
    for (t, r, _, rat) in &reg_init {
        if !threads.iter().any(|th| th.name == *t) {
            return Err(err(
                *rat,
                format!("{t}:{r} initialises a register of a thread the test does not have"),
            ));
        }
    }
    check_sizes(&locations, &reg_init, file)?;
    // The scope tree and memory map may stand before the condition or after it.
    let mut sections = scope_tree::Sections::default();
    sections.parse(&mut c)?;
    let cond_loc = c.loc();
    let mut condition = cond::parse(&mut c, &threads, &locations, String::new())?;
    condition.text = raw_between(&lines, cond_loc, c.loc());
    sections.parse(&mut c)?;
    if !c.at_end() {
        return Err(c.error("the end of the test"));
    }
    sections.apply(&c, &mut threads, &mut locations)?;
    let mut comments = pre.comments;
    comments.extend(lexed.comments);
    let expectation = expectation(&comments, file)?;
    let mut test = LitmusTest {
        name: head.name,
        file: file.to_string(),
        dialect: head.dialect,
        title: head.title,
        comment: (!pre.strings.is_empty()).then(|| pre.strings.join("\n")),
        info: pre.info,
        locations,
        threads,
        condition,
        expectation,
        pending,
    };
    test.apply_spaces();
    Ok(test)
}

struct Header {
    dialect: Dialect,
    name: String,
    title: Option<String>,
    /// Byte offset where the preamble starts.
    end: usize,
}

/// Characters of a herd test name (`lib/splitter.mll`, `testname`).
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_/.-+[]".contains(c)
}

fn header(text: &str, file: &str) -> Result<Header, LitmusError> {
    let err = |line: u32, col: usize, message: String| {
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line,
            col: col as u32,
            message,
        })
    };
    // The header is the first line that is not blank.
    let mut start = 0;
    let mut line_no = 1u32;
    for l in text.split_inclusive('\n') {
        if !l.trim().is_empty() {
            break;
        }
        start += l.len();
        line_no += 1;
    }
    let line_end = text[start..]
        .find('\n')
        .map(|i| start + i)
        .unwrap_or(text.len());
    let line = &text[start..line_end];
    let indent = line.len() - line.trim_start().len();
    let arch: String = line[indent..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let dialect = match arch.as_str() {
        // herdtools7 names the architecture of its GPU PTX tests `GPU_PTX` (`lib/GPU_PTXBase.ml`).
        "PTX" | "GPU_PTX" => Dialect::Ptx,
        "C" | "OpenCL" | "OPENCL" => Dialect::OpenCl,
        "" => {
            return Err(err(
                line_no,
                indent + 1,
                "expected the header `PTX NAME`, `GPU_PTX NAME`, `C NAME` or `OpenCL NAME`".into(),
            ))
        }
        _ => {
            return Err(err(
                line_no,
                indent + 1,
                format!("unknown architecture `{arch}` (allowed: PTX, GPU_PTX, C, OpenCL)"),
            ))
        }
    };
    let after_arch = indent + arch.len();
    let rest = &line[after_arch..];
    let name_at = after_arch + (rest.len() - rest.trim_start().len());
    let name: String = line[name_at..]
        .chars()
        .take_while(|&c| name_char(c))
        .collect();
    if name.is_empty() || name_at == after_arch {
        return Err(err(
            line_no,
            line[..name_at].chars().count() + 1,
            "the header needs a test name after the architecture (letters, digits, `_ / . - + [ ]`)"
                .into(),
        ));
    }
    let name = if name == "--" {
        std::path::Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or(name)
    } else {
        name
    };
    // The rest of the line is the title, up to an init block that starts on the same line; a quoted
    // string there is the doc string, read by the preamble.
    let tail_start = name_at
        + line[name_at..]
            .chars()
            .take_while(|&c| name_char(c))
            .map(char::len_utf8)
            .sum::<usize>();
    let tail = &line[tail_start..];
    let stop = tail.find(['{', '"']).unwrap_or(tail.len());
    let title = tail[..stop].trim().trim_end_matches(';').trim();
    Ok(Header {
        dialect,
        name,
        title: (!title.is_empty()).then(|| title.to_string()),
        end: start + tail_start + stop,
    })
}

struct Preamble {
    info: Vec<(String, String)>,
    strings: Vec<String>,
    comments: Vec<Comment>,
    /// Byte offset of the init block's `{`.
    init: usize,
}

/// From the end of the header to the init block: quoted strings, `key = value` lines, comments.
fn preamble(text: &str, from: usize, file: &str) -> Result<Preamble, LitmusError> {
    let mut p = Preamble {
        info: Vec::new(),
        strings: Vec::new(),
        comments: Vec::new(),
        init: 0,
    };
    // Line and column of byte offset `i`.
    let at = |i: usize| {
        let before = &text[..i];
        let line = before.matches('\n').count() as u32 + 1;
        let col = before[before.rfind('\n').map(|j| j + 1).unwrap_or(0)..]
            .chars()
            .count() as u32
            + 1;
        SrcLoc { line, col }
    };
    let err = |i: usize, message: &str| {
        let a = at(i);
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line: a.line,
            col: a.col,
            message: message.to_string(),
        })
    };
    let b = text.as_bytes();
    let mut i = from;
    // Whether only blanks precede `i` on its line (a `key = value` line starts a line).
    let mut line_start = false;
    while i < b.len() {
        let c = b[i];
        let rest = &text[i..];
        if c == b'\n' {
            line_start = true;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'{' {
            p.init = i;
            return Ok(p);
        } else if rest.starts_with("(*") || rest.starts_with("/*") {
            let close = if c == b'(' { "*)" } else { "*/" };
            let Some(j) = rest[2..].find(close) else {
                return Err(err(i, "unterminated comment"));
            };
            p.comments.push(Comment {
                text: rest[2..2 + j].to_string(),
                loc: at(i),
            });
            i += 2 + j + 2;
        } else if rest.starts_with("//") {
            let j = rest.find('\n').unwrap_or(rest.len());
            p.comments.push(Comment {
                text: rest[2..j].to_string(),
                loc: at(i),
            });
            i += j;
        } else if c == b'"' {
            let Some(j) = rest[1..].find('"') else {
                return Err(err(i, "unterminated string"));
            };
            p.strings.push(rest[1..1 + j].to_string());
            i += j + 2;
            line_start = false;
        } else if line_start && c.is_ascii_alphabetic() {
            // herd's info line: `name = value` to the end of the line.
            let key_len = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || "_/.-".contains(ch)))
                .unwrap_or(rest.len());
            let after = rest[key_len..].trim_start_matches([' ', '\t', '\r']);
            if !after.starts_with('=') {
                return Err(err(
                    i,
                    "expected a quoted string, a `key = value` line, a comment or the init block `{`",
                ));
            }
            let eol = rest.find('\n').unwrap_or(rest.len());
            let value = rest[rest.len() - after.len() + 1..eol].trim();
            p.info
                .push((rest[..key_len].to_string(), value.to_string()));
            i += eol;
        } else {
            return Err(err(
                i,
                "expected a quoted string, a `key = value` line, a comment or the init block `{`",
            ));
        }
    }
    Err(err(text.len(), "expected the init block `{ ... }`"))
}

/// The source from `from` up to `to` (exclusive), comments dropped and whitespace collapsed.
fn raw_between(lines: &[&str], from: SrcLoc, to: SrcLoc) -> String {
    let mut s = String::new();
    let last = (to.line as usize).min(lines.len());
    for (i, l) in lines
        .iter()
        .enumerate()
        .take(last)
        .skip(from.line as usize - 1)
    {
        let mut l: String = l.chars().collect();
        if i + 1 == to.line as usize {
            l = l.chars().take(to.col as usize - 1).collect();
        }
        if i + 1 == from.line as usize {
            l = l.chars().skip(from.col as usize - 1).collect();
        }
        let l = l.split("//").next().unwrap_or_default();
        s.push_str(l);
        s.push(' ');
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words before a location's name in the init block (`local uint64_t x`, `int y[2]`, `int *p`).
fn type_words(c: &mut Cursor) -> Vec<(String, SrcLoc)> {
    let mut w = Vec::new();
    while let Some(Tok::Ident(s)) = c.peek() {
        // A type word is followed by another word, `*`, or `[` and a name (`int [x]`); in `y[2]`
        // the word is the name.
        let followed = match c.peek_at(1) {
            Some(Tok::Ident(_)) | Some(Tok::Punct("*")) => true,
            Some(Tok::Punct("[")) => matches!(c.peek_at(2), Some(Tok::Ident(_))),
            _ => false,
        };
        if !followed {
            break;
        }
        w.push((s.clone(), c.loc()));
        c.next();
    }
    w
}

/// The address space named among type words, and the remaining words.
fn space_of_words(words: &[(String, SrcLoc)]) -> (Option<Space>, Vec<String>) {
    let mut space = None;
    let mut rest = Vec::new();
    for (w, _) in words {
        match w.as_str() {
            "local" | "__local" | "shared" | "__shared__" => space = Some(Space::Local),
            "global" | "__global" => space = Some(Space::Global),
            _ => rest.push(w.clone()),
        }
    }
    (space, rest)
}

fn ty_of_words(words: &[String]) -> Option<Ty> {
    if words.is_empty() {
        return None;
    }
    let j = words.join(" ");
    let long = ["long", "int64", "uint64", "64"]
        .iter()
        .any(|k| j.contains(k));
    let unsigned = ["unsigned", "uint", "ulong", "u32", "u64"]
        .iter()
        .any(|k| j.contains(k));
    Some(match (long, unsigned) {
        (false, false) => Ty::I32,
        (false, true) => Ty::U32,
        (true, false) => Ty::I64,
        (true, true) => Ty::U64,
    })
}

/// A location referenced before its declaration exists as a default global scalar; its
/// declaration then replaces it. `declared` marks the ones the init block declared.
fn declare(
    c: &Cursor,
    locations: &mut Vec<Location>,
    declared: &mut Vec<bool>,
    loc: Location,
) -> Result<(), LitmusError> {
    match locations.iter().position(|l| l.name == loc.name) {
        Some(i) if declared[i] => Err(c.error_at(
            loc.loc,
            format!("location {} is initialised twice", loc.name),
        )),
        Some(i) => {
            locations[i] = loc;
            declared[i] = true;
            Ok(())
        }
        None if locations.len() >= MAX_LOCATIONS => Err(c.error_at(
            loc.loc,
            format!("more than {MAX_LOCATIONS} locations in one test"),
        )),
        None => {
            locations.push(loc);
            declared.push(true);
            Ok(())
        }
    }
}

/// The location called `name`, created as a default global scalar when new.
fn referenced(
    c: &Cursor,
    locations: &mut Vec<Location>,
    declared: &mut Vec<bool>,
    name: String,
    at: SrcLoc,
) -> Result<usize, LitmusError> {
    if let Some(i) = locations.iter().position(|l| l.name == name) {
        return Ok(i);
    }
    if locations.len() >= MAX_LOCATIONS {
        return Err(c.error_at(
            at,
            format!("more than {MAX_LOCATIONS} locations in one test"),
        ));
    }
    locations.push(Location::scalar(name, 0, None, at));
    declared.push(false);
    Ok(locations.len() - 1)
}

/// A register's initial value: a number, `x` / `&x` (x's address), `y[i]` / `&y[i]` (the address
/// of element i).
fn reg_value(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    declared: &mut Vec<bool>,
) -> Result<RegInit, LitmusError> {
    let amp = c.eat_punct("&");
    match c.peek() {
        Some(Tok::Ident(name)) => {
            let (name, nat) = (name.clone(), c.loc());
            c.next();
            let l = referenced(c, locations, declared, name, nat)?;
            if c.eat_punct("[") {
                let (i, iat) = c.int("an element index")?;
                c.expect_punct("]")?;
                let index = u32::try_from(i)
                    .ok()
                    .filter(|&i| (i as u64) < MAX_ARRAY_LEN)
                    .ok_or_else(|| c.error_at(iat, "element indices are 0, 1, ..."))?;
                Ok(RegInit::Element { loc: l, index })
            } else {
                Ok(RegInit::Address(l))
            }
        }
        _ if amp => Err(c.error("a location after `&`")),
        _ => Ok(RegInit::Value(c.int("a number or a location")?.0)),
    }
}

/// Register types of herd's GPU_PTX `N:.reg .TYPE r` declarations.
const REG_DECL_TYPES: &[&str] = &[
    ".s32", ".u32", ".b32", ".s64", ".u64", ".b64", ".pred", ".f32",
];

/// The init block. Returns the register initialisations.
fn init_block(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    pending: &mut Vec<Pending>,
) -> Result<Vec<RegInitEntry>, LitmusError> {
    c.expect_punct("{")?;
    let mut regs: Vec<RegInitEntry> = Vec::new();
    let mut declared: Vec<bool> = Vec::new();
    loop {
        if c.eat_punct("}") {
            return Ok(regs);
        }
        if c.eat_punct(";") {
            continue;
        }
        let at = c.loc();
        // A register: `P0:r1 = v` or `0:r1 = v`.
        let thread = match (c.peek(), c.peek_at(1)) {
            (Some(Tok::Int(n)), Some(Tok::Punct(":"))) => Some(format!("P{n}")),
            (Some(Tok::Ident(s)), Some(Tok::Punct(":"))) => Some(s.clone()),
            _ => None,
        };
        if matches!(
            (c.peek(), c.peek_at(1)),
            (Some(Tok::Ident(_)), Some(Tok::Punct("@")))
        ) {
            proxy_alias(c, locations, &mut declared, pending)?;
        } else if let Some(t) = thread {
            c.next();
            c.next();
            // herd's GPU_PTX declarations: `0:.reg .s32 r0;` declares, `0:.reg .b64 r1 = x;`
            // declares and initialises.
            if matches!(c.peek(), Some(Tok::Ident(s)) if s == ".reg") {
                c.next();
                let (ty, tat) = c.ident("a register type (`.s32`, `.b64`, ...)")?;
                if !REG_DECL_TYPES.contains(&ty.as_str()) {
                    return Err(c.error_at(
                        tat,
                        format!(
                            "unknown register type `{ty}` (allowed: {})",
                            REG_DECL_TYPES.join(" ")
                        ),
                    ));
                }
                if !c.is_punct("=") && matches!(c.peek(), Some(Tok::Ident(_))) {
                    let (r, _) = c.ident("a register name")?;
                    if !c.eat_punct("=") {
                        // A declaration alone: the register starts at 0, its width set by the
                        // instructions that use it, as for every register of the dialect.
                        if !c.eat_punct(";") && !c.is_punct("}") {
                            return Err(c.error("`;` or `= value` after the register"));
                        }
                        continue;
                    }
                    let v = reg_value(c, locations, &mut declared)?;
                    if regs.iter().any(|(t2, r2, _, _)| *t2 == t && *r2 == r) {
                        return Err(c.error_at(at, format!("{t}:{r} is initialised twice")));
                    }
                    regs.push((t, r, v, at));
                    if !c.eat_punct(";") && !c.is_punct("}") {
                        return Err(c.error("`;` between initialisations"));
                    }
                    continue;
                }
                return Err(c.error("a register name after the type"));
            }
            let (r, _) = c.ident("a register name")?;
            c.expect_punct("=")?;
            let v = reg_value(c, locations, &mut declared)?;
            if regs.iter().any(|(t2, r2, _, _)| *t2 == t && *r2 == r) {
                return Err(c.error_at(at, format!("{t}:{r} is initialised twice")));
            }
            regs.push((t, r, v, at));
        } else {
            location_init(c, locations, &mut declared)?;
        }
        if !c.eat_punct(";") && !c.is_punct("}") {
            return Err(c.error("`;` between initialisations"));
        }
    }
}

/// A virtual alias through a proxy, as Dat3M's PTX tests declare it: `y @ generic aliases x;`
/// (also `surface`, `texture`, `constant`): the machine and the oracle have one proxy, so the test
/// needs a capability. `y` is declared like `x` so that the threads parse.
fn proxy_alias(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    declared: &mut Vec<bool>,
    pending: &mut Vec<Pending>,
) -> Result<(), LitmusError> {
    let (name, at) = c.ident("an alias name")?;
    c.expect_punct("@")?;
    let (proxy, pat) = c.ident("a proxy (generic, surface, texture, constant)")?;
    if !matches!(
        proxy.as_str(),
        "generic" | "surface" | "texture" | "constant"
    ) {
        return Err(c.error_at(
            pat,
            format!("unknown proxy `{proxy}` (allowed: generic, surface, texture, constant)"),
        ));
    }
    let (word, wat) = c.ident("`aliases`")?;
    if word != "aliases" {
        return Err(c.error_at(wat, format!("expected `aliases`, found `{word}`")));
    }
    let (target, tat) = c.ident("the aliased location")?;
    let Some(t) = locations.iter().position(|l| l.name == target) else {
        return Err(c.error_at(
            tat,
            format!("{target} is not a location declared before this line"),
        ));
    };
    let mut alias = locations[t].clone();
    alias.name = name.clone();
    alias.loc = at;
    declare(c, locations, declared, alias)?;
    pending.push(Pending {
        at,
        capability: Capability::Proxies,
        detail: format!("{name} aliases {target} through the {proxy} proxy: the machine and the model have one proxy (the generic one) and no virtual aliases"),
    });
    Ok(())
}

/// One location of the init block.
fn location_init(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
    declared: &mut Vec<bool>,
) -> Result<(), LitmusError> {
    let words = type_words(c);
    let (space, words) = space_of_words(&words);
    let ty = ty_of_words(&words);
    // `[x] = v`, `*x = v` and `x = v` all initialise location x.
    let bracket = c.eat_punct("[");
    let star = !bracket && c.eat_punct("*");
    let (name, nat) = c.ident("a location or a register (`x=0;`, `P0:r0=0;`)")?;
    if bracket {
        c.expect_punct("]")?;
    }
    // `y[n]`: an array of n elements.
    let mut len = None;
    if !bracket && !star && c.is_punct("[") {
        c.next();
        let (n, lat) = c.int("the array's number of elements")?;
        c.expect_punct("]")?;
        if n < 1 || n as u64 > MAX_ARRAY_LEN {
            return Err(c.error_at(
                lat,
                format!("an array has 1 to {MAX_ARRAY_LEN} elements (found {n})"),
            ));
        }
        len = Some(n as u32);
    }
    let mut elems = vec![0i64; len.unwrap_or(1) as usize];
    if c.eat_punct("=") {
        if let Some(n) = len {
            c.expect_punct("{")?;
            let mut vals = Vec::new();
            while !c.eat_punct("}") {
                let (v, vat) = c.int("an element's initial value (a number)")?;
                if vals.len() == n as usize {
                    return Err(c.error_at(
                        vat,
                        format!("{name} has {n} elements; more initial values are given"),
                    ));
                }
                vals.push(v);
                if !c.eat_punct(",") && !c.is_punct("}") {
                    return Err(c.error("`,` or `}`"));
                }
            }
            if vals.len() != n as usize {
                return Err(c.error_at(
                    nat,
                    format!(
                        "{name} has {n} elements but {} initial values (herd requires all of them)",
                        vals.len()
                    ),
                ));
            }
            elems = vals;
        } else if let Some(Tok::Ident(_)) | Some(Tok::Punct("&")) = c.peek() {
            return Err(c.error_at(
                c.loc(),
                format!("{name} would hold an address: locations holding addresses are not supported (initialise a register instead: `P0:r1={name}`)"),
            ));
        } else {
            elems[0] = c.int("the initial value (a number)")?.0;
        }
    }
    let mut loc = Location::scalar(name, elems[0], ty, nat);
    loc.elems = elems;
    loc.len = len.unwrap_or(1);
    loc.array = len.is_some();
    if let Some(s) = space {
        loc.space = s;
        loc.space_given = true;
    }
    declare(c, locations, declared, loc)
}

/// Element addresses name existing elements; one instance's locations stay within
/// [`MAX_INSTANCE_BYTES`].
fn check_sizes(
    locations: &[Location],
    reg_init: &[RegInitEntry],
    file: &str,
) -> Result<(), LitmusError> {
    let err = |at: SrcLoc, message: String| {
        LitmusError::Syntax(Located {
            file: file.to_string(),
            line: at.line,
            col: at.col,
            message,
        })
    };
    for (t, r, init, at) in reg_init {
        if let RegInit::Element { loc, index } = *init {
            let l = &locations[loc];
            if !l.array || index >= l.len {
                return Err(err(
                    *at,
                    format!(
                        "{t}:{r} = {}[{index}]: {} has no element {index} (declare it as an array, `int {}[N]`)",
                        l.name, l.name, l.name
                    ),
                ));
            }
        }
    }
    let total: u64 = locations.iter().map(Location::bytes).sum();
    if total > MAX_INSTANCE_BYTES {
        return Err(err(
            locations[0].loc,
            format!(
                "the test's locations take {total} bytes per instance; at most {MAX_INSTANCE_BYTES} are allowed"
            ),
        ));
    }
    Ok(())
}

/// The expectation from the comments (at most one `expect:`).
fn expectation(comments: &[Comment], file: &str) -> Result<Option<Expectation>, LitmusError> {
    let mut found: Option<Expectation> = None;
    for cm in comments {
        let Some(i) = cm.text.find("expect:") else {
            continue;
        };
        let err = |message: String| {
            LitmusError::Syntax(Located {
                file: file.to_string(),
                line: cm.loc.line,
                col: cm.loc.col,
                message,
            })
        };
        if found.is_some() {
            return Err(err("a second `expect:` comment".into()));
        }
        found = Some(parse_expectation(&cm.text[i + "expect:".len()..]).map_err(err)?);
    }
    Ok(found)
}

/// `allowed`, `forbidden`, optionally `, required` (also used by `--expect` files).
pub fn parse_expectation(words: &str) -> Result<Expectation, String> {
    let mut expect = None;
    let mut required = false;
    for w in words
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
    {
        match w {
            "allowed" | "forbidden" if expect.is_some() => {
                return Err("an expectation is either allowed or forbidden".into())
            }
            "allowed" => expect = Some(Expect::Allowed),
            "forbidden" => expect = Some(Expect::Forbidden),
            "required" => required = true,
            _ => {
                return Err(format!(
                    "`{w}` in an expectation (allowed: `allowed`, `forbidden`, `required`)"
                ))
            }
        }
    }
    match (expect, required) {
        (None, _) => Err("an expectation needs `allowed` or `forbidden`".into()),
        (Some(Expect::Forbidden), true) => {
            Err("`required` goes with `allowed` (a forbidden witness must never appear)".into())
        }
        (Some(expect), required) => Ok(Expectation { expect, required }),
    }
}
