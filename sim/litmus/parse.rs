//! The parts of a litmus file both dialects share: the header line `ARCH NAME`, the optional quoted
//! comment, the init block `{ x=0; y=1; P0:r1=x; }`, the final condition, and the expectation
//! (`expect: allowed|forbidden[, required]` in any comment). The thread section in between is the
//! dialect's (`ptx.rs`, `opencl.rs`).

use super::lex::{lex, Cursor, Tok};
use super::test::{Dialect, Expect, Expectation, LitmusTest, Location, RegInit};
use super::{cond, opencl, ptx, LitmusError};
use crate::ir::{SrcLoc, Ty};

/// Parses the text of a litmus test; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<LitmusTest, LitmusError> {
    // The test name is the rest of the header line, whatever characters it uses (`2+2W`,
    // `MP+rel+acq.gpu`): it is blanked out before tokenising (columns stay the same).
    let first_len = text.find('\n').unwrap_or(text.len());
    let arch_end = text[..first_len]
        .trim_start()
        .find(char::is_whitespace)
        .map(|i| i + (first_len - text[..first_len].trim_start().len()))
        .unwrap_or(first_len);
    let blanked: String = text[..arch_end].to_string()
        + &" ".repeat(text[arch_end..first_len].chars().count())
        + &text[first_len..];
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
    let (arch, at) = c.ident("the header `PTX NAME`, `C NAME` or `OpenCL NAME`")?;
    let dialect = match arch.as_str() {
        "PTX" => Dialect::Ptx,
        "C" | "OpenCL" | "OPENCL" => Dialect::OpenCl,
        _ => {
            return Err(c.error_at(
                at,
                format!("unknown architecture `{arch}` (allowed: PTX, C, OpenCL)"),
            ))
        }
    };
    // The name is the rest of the header line, whatever characters it uses (`MP+rel+acq`).
    let header = lines.get(at.line as usize - 1).copied().unwrap_or_default();
    let name: String = header
        .chars()
        .skip(at.col as usize - 1 + arch.chars().count())
        .collect::<String>()
        .trim()
        .to_string();
    if name.is_empty() {
        return Err(c.error_at(at, "the header needs a test name after the architecture"));
    }
    while c.peek().is_some() && c.loc().line == at.line {
        c.next();
    }
    let comment = match c.peek() {
        Some(Tok::Str(s)) => {
            let s = s.clone();
            c.next();
            Some(s)
        }
        _ => None,
    };
    let mut locations: Vec<Location> = Vec::new();
    let reg_init = init_block(&mut c, &mut locations)?;
    let threads = match dialect {
        Dialect::Ptx => ptx::parse_threads(&mut c, &mut locations, &reg_init)?,
        Dialect::OpenCl => opencl::parse_threads(&mut c, &blanked, &mut locations, &reg_init)?,
    };
    for (t, r, _, rat) in &reg_init {
        if !threads.iter().any(|th| th.name == *t) {
            return Err(c.error_at(
                *rat,
                format!("{t}:{r} initialises a register of a thread the test does not have"),
            ));
        }
    }
    let cond_loc = c.loc();
    let text_of_cond = raw_from(&lines, cond_loc);
    let condition = cond::parse(&mut c, &threads, &locations, text_of_cond)?;
    let expectation = expectation(&lexed.comments, file)?;
    Ok(LitmusTest {
        name,
        file: file.to_string(),
        dialect,
        comment,
        locations,
        threads,
        condition,
        expectation,
    })
}

/// The source from `from` to the end, comments dropped and whitespace collapsed.
fn raw_from(lines: &[&str], from: SrcLoc) -> String {
    let mut s = String::new();
    for (i, l) in lines.iter().enumerate().skip(from.line as usize - 1) {
        let l: String = if i + 1 == from.line as usize {
            l.chars().skip(from.col as usize - 1).collect()
        } else {
            l.to_string()
        };
        let l = l.split("//").next().unwrap_or_default();
        s.push_str(l);
        s.push(' ');
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn type_words(c: &mut Cursor) -> Vec<String> {
    let mut w = Vec::new();
    while let Some(Tok::Ident(s)) = c.peek() {
        // A type word is followed by another word, `*` or `[` (the name comes last).
        let followed = matches!(
            c.peek_at(1),
            Some(Tok::Ident(_)) | Some(Tok::Punct("*")) | Some(Tok::Punct("["))
        );
        if !followed {
            break;
        }
        w.push(s.clone());
        c.next();
    }
    w
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

/// The init block. Returns the register initialisations (thread, register, value, where).
#[allow(clippy::type_complexity)]
fn init_block(
    c: &mut Cursor,
    locations: &mut Vec<Location>,
) -> Result<Vec<(String, String, RegInit, SrcLoc)>, LitmusError> {
    c.expect_punct("{")?;
    let mut regs: Vec<(String, String, RegInit, SrcLoc)> = Vec::new();
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
        if let Some(t) = thread {
            c.next();
            c.next();
            let (r, _) = c.ident("a register name")?;
            c.expect_punct("=")?;
            let v = match c.peek() {
                Some(Tok::Ident(name)) => {
                    let (name, nat) = (name.clone(), c.loc());
                    c.next();
                    let l = match locations.iter().position(|l| l.name == name) {
                        Some(l) => l,
                        None => {
                            locations.push(Location {
                                name,
                                init: 0,
                                ty: Ty::I32,
                                ty_given: false,
                                loc: nat,
                            });
                            locations.len() - 1
                        }
                    };
                    RegInit::Address(l)
                }
                _ => RegInit::Value(c.int("a number or a location")?.0),
            };
            if regs.iter().any(|(t2, r2, _, _)| *t2 == t && *r2 == r) {
                return Err(c.error_at(at, format!("{t}:{r} is initialised twice")));
            }
            regs.push((t, r, v, at));
        } else {
            let words = type_words(c);
            // `[x] = v`, `*x = v` and `x = v` all initialise location x.
            let bracket = c.eat_punct("[");
            if !bracket {
                c.eat_punct("*");
            }
            let (name, nat) = c.ident("a location or a register (`x=0;`, `P0:r0=0;`)")?;
            if bracket {
                c.expect_punct("]")?;
            }
            c.expect_punct("=")?;
            let (v, _) = c.int("the initial value (a number)")?;
            if locations.iter().any(|l| l.name == name) {
                return Err(c.error_at(nat, format!("location {name} is initialised twice")));
            }
            let ty = ty_of_words(&words);
            locations.push(Location {
                name,
                init: v,
                ty: ty.unwrap_or(Ty::I32),
                ty_given: ty.is_some(),
                loc: nat,
            });
        }
        if !c.eat_punct(";") && !c.is_punct("}") {
            return Err(c.error("`;` between initialisations"));
        }
    }
}

/// The expectation from the comments (at most one `expect:`).
fn expectation(
    comments: &[super::lex::Comment],
    file: &str,
) -> Result<Option<Expectation>, LitmusError> {
    let mut found: Option<Expectation> = None;
    for cm in comments {
        let Some(i) = cm.text.find("expect:") else {
            continue;
        };
        let err = |message: String| LitmusError::Syntax {
            file: file.to_string(),
            line: cm.loc.line,
            col: cm.loc.col,
            message,
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
