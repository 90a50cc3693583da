//! A PTX module + a workload header → [`Workload`]: the header evaluated exactly as for `.cu`
//! files (`cfront::header`), the entry chosen, its `.param`s bound to buffers and values, the
//! body lowered ([`super::lower`]).
//!
//! Choosing the entry: the header's `kernel NAME` matches the entry's PTX name or the C++ name in
//! it (`kernel histogram` picks `_Z9histogramPjS_i`, `kernel reduce` a `_Z6reduceILi256EEvPfS0_`
//! instance); without it, the module's only `.entry`.
//!
//! Binding parameters: each parameter has a *C name* — the name in the `.cu` signature (when the PTX
//! was compiled from a `.cu` file), else the header's `params a, b, n` (PTX-only, by position),
//! else its PTX name. A parameter is a pointer when a buffer of its C name exists (or `arg NAME =
//! BUFFER` names one; or it carries `.ptr`): the launch gives it the buffer's address. Otherwise it
//! is a scalar of its `.param` type: the header's `arg NAME = EXPR`, else the workload parameter
//! of its name. Module variables that the kernel never touches are ignored (a file that includes
//! `<cooperative_groups.h>` declares about a thousand).

use super::ast::{Func, Module};
use super::lexer;
use super::lower::{Frame, Lower, ParamVar, Prov, Scope, Sym};
use super::parser::Parser;
use crate::cfront::header::{self, ArgValue, HStmt};
use crate::cfront::lexer::HeaderBlock;
use crate::cfront::lower::Sink;
use crate::cfront::types::{PtrTy, STy, VTy};
use crate::cfront::CError;
use crate::ir::*;
use crate::kernel::KernelError;
use crate::workload::{Param, ParamValue, Workload};
use std::collections::HashMap;

/// Where the workload header comes from when it is not in the PTX file itself.
pub struct HeaderSource<'a> {
    /// The file holding the header (a `.cu` file) and its text.
    pub file: &'a str,
    pub text: &'a str,
    pub blocks: Vec<HeaderBlock>,
    /// C parameter names per kernel (C name of the kernel → names in order).
    pub signatures: HashMap<String, Vec<String>>,
}

/// The C++ name inside an Itanium-mangled one (`_Z9histogramPjS_i` → `histogram`,
/// `_ZN2ns1kEv` → `k`); a name that is not mangled is itself.
pub fn base_name(m: &str) -> String {
    let Some(rest) = m.strip_prefix("_Z") else {
        return m.to_string();
    };
    let b = rest.as_bytes();
    let mut i = 0;
    let nested = b.first() == Some(&b'N');
    if nested {
        i += 1;
    }
    let mut last = None;
    loop {
        let s = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let Ok(n) = rest[s..i].parse::<usize>() else {
            break;
        };
        if i + n > b.len() {
            break;
        }
        last = Some(&rest[i..i + n]);
        i += n;
        if !nested {
            break;
        }
    }
    last.map(str::to_string).unwrap_or_else(|| m.to_string())
}

/// Takes the PTX-only `params a, b, c` statement out of the header blocks (its line blanked, so
/// that places stay right): the names and where the statement was.
fn take_params(blocks: &mut [HeaderBlock]) -> Result<Option<(Vec<String>, SrcLoc)>, CError> {
    let mut found = None;
    for b in blocks.iter_mut() {
        let mut out = String::new();
        for (k, line) in b.text.split('\n').enumerate() {
            if k > 0 {
                out.push('\n');
            }
            let t = line.trim_start();
            let is_params = t
                .strip_prefix("params")
                .is_some_and(|r| r.starts_with(char::is_whitespace));
            if !is_params {
                out.push_str(line);
                continue;
            }
            let at = SrcLoc {
                line: b.loc.line + k as u32,
                col: if k == 0 { b.loc.col } else { 1 } + (line.len() - t.len()) as u32,
            };
            if found.is_some() {
                return Err(CError::new(at, "`params` is given twice"));
            }
            let code = t["params".len()..].split("//").next().unwrap_or("");
            let names: Vec<String> = code
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if let Some(bad) = names
                .iter()
                .find(|n| !n.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                return Err(CError::new(at, format!("`params`: `{bad}` is not a name")));
            }
            found = Some((names, at));
            out.push_str(&" ".repeat(line.chars().count()));
        }
        b.text = out;
    }
    Ok(found)
}

/// The names the header declares buffers for, and the `arg NAME = VALUE` pairs.
fn header_names(stmts: &[HStmt]) -> (Vec<String>, Vec<(String, String)>) {
    let word_after = |s: &HStmt| -> Vec<String> {
        let text = &s.lines[0].1;
        let t = text.trim_start();
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut bufs = Vec::new();
    let mut args = Vec::new();
    for s in stmts {
        let w = word_after(s);
        match s.word.as_str() {
            "buffer" if w.len() > 1 => bufs.push(w[1].clone()),
            "arg" if w.len() > 2 => {
                let text = s
                    .lines
                    .iter()
                    .map(|l| l.1.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let value = text
                    .split_once('=')
                    .map(|x| x.1.trim().trim_end_matches(';').trim().to_string())
                    .unwrap_or_default();
                args.push((w[1].clone(), value));
            }
            _ => {}
        }
    }
    (bufs, args)
}

fn scalar_ty(t: &str) -> Option<STy> {
    Some(match t {
        "u32" | "b32" => STy::U32,
        "s32" => STy::I32,
        "u64" | "b64" => STy::U64,
        "s64" => STy::I64,
        "f32" => STy::F32,
        _ => return None,
    })
}

/// Parses, binds and lowers a PTX workload. `file` names the PTX in errors; `src` is the header's
/// own file when it is not in the PTX (a `.cu` file compiled by NVRTC).
pub fn workload(
    text: &str,
    file: &str,
    overrides: &[(String, i64)],
    src: Option<HeaderSource>,
) -> Result<Workload, KernelError> {
    let perr = |e: CError| e.in_file(file);
    let lexed = lexer::lex(text).map_err(perr)?;
    let module = Parser::new(lexed.tokens).module().map_err(perr)?;
    let (hfile, htext, mut blocks, signatures) = match src {
        Some(s) => (
            s.file.to_string(),
            s.text.to_string(),
            s.blocks,
            s.signatures,
        ),
        None => (
            file.to_string(),
            text.to_string(),
            lexed.headers,
            HashMap::new(),
        ),
    };
    let herr = |e: CError| e.in_file(&hfile);
    let params_stmt = take_params(&mut blocks).map_err(herr)?;
    let stmts = header::statements(&blocks).map_err(herr)?;
    if stmts.is_empty() {
        return Err(herr(CError::new(
            SrcLoc { line: 1, col: 1 },
            "no workload header: a launch needs a `/* gpumemsim ... */` comment with at least `groups` and `group_size` (see docs/ptx.md)",
        )));
    }
    let choice = header::kernel_choice(&stmts).map_err(herr)?;
    let entries: Vec<&Func> = module
        .funcs
        .iter()
        .filter(|f| f.entry && f.body.is_some())
        .collect();
    let names = || {
        entries
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let entry = match &choice {
        Some((n, at)) => entries
            .iter()
            .copied()
            .find(|f| f.name == *n)
            .or_else(|| {
                let by_base: Vec<&Func> = entries.iter().copied().filter(|f| base_name(&f.name) == *n).collect();
                (by_base.len() == 1).then(|| by_base[0])
            })
            .ok_or_else(|| herr(CError::new(*at, format!("no entry `{n}` in the PTX (entries: {}); several instances of one template need the PTX name", names()))))?,
        None => match entries.as_slice() {
            [f] => *f,
            [] => return Err(perr(CError::new(SrcLoc { line: 1, col: 1 }, "found no `.entry` with a body"))),
            _ => return Err(herr(CError::new(stmts[0].loc, format!("the module has several entries ({}): say which to launch with `kernel NAME` in the header", names())))),
        },
    };
    // The C name of each parameter.
    let cnames: Vec<String> = match (signatures.get(&base_name(&entry.name)), &params_stmt) {
        (_, Some((names, at))) => {
            if names.len() != entry.params.len() {
                return Err(herr(CError::new(
                    *at,
                    format!(
                        "`params` names {} parameters but `{}` has {}",
                        names.len(),
                        entry.name,
                        entry.params.len()
                    ),
                )));
            }
            names.clone()
        }
        (Some(sig), None) if sig.len() == entry.params.len() => sig.clone(),
        _ => entry.params.iter().map(|p| p.name.clone()).collect(),
    };
    let (bufs, arg_pairs) = header_names(&stmts);
    let mut ptys = Vec::new();
    for (p, cn) in entry.params.iter().zip(&cnames) {
        let explicit = arg_pairs.iter().find(|(n, _)| n == cn).map(|x| x.1.clone());
        let is_ptr =
            p.ptr || bufs.contains(cn) || explicit.as_ref().is_some_and(|v| bufs.contains(v));
        if p.array.is_some() {
            return Err(perr(CError::new(
                p.loc,
                format!(
                    "parameter `{}`: by-value structure and array parameters are not modelled yet",
                    p.name
                ),
            )));
        }
        let t = if is_ptr {
            if !matches!(p.ty.as_str(), "u64" | "b64" | "s64") {
                return Err(perr(CError::new(
                    p.loc,
                    format!(
                        "parameter `{}` is bound to a buffer but is a .{} (addresses are 64-bit)",
                        p.name, p.ty
                    ),
                )));
            }
            VTy::Ptr(PtrTy {
                elem: STy::U32,
                space: Space::Global,
                atomic: false,
                volatile: false,
            })
        } else {
            VTy::Scalar(scalar_ty(&p.ty).ok_or_else(|| perr(CError::new(p.loc, format!("parameter `{}` of type .{}: not modelled yet (scalar parameters are 32- or 64-bit integers or f32)", p.name, p.ty))))?)
        };
        ptys.push((cn.clone(), p.loc, t));
    }
    let hdr = header::evaluate(&htext, &hfile, &stmts, &ptys, overrides)?;
    let mut w = hdr.workload;
    if let Some((name, at, _)) = hdr.args.iter().find(|(n, ..)| !cnames.contains(n)) {
        return Err(herr(CError::new(
            *at,
            format!(
                "the kernel has no parameter `{name}` (parameters: {})",
                cnames.join(", ")
            ),
        )));
    }

    // Lowering, repeated until the provenance of generic addresses is stable (each pass sees the
    // definitions of the previous one, so a loop's back edge is seen too).
    let pass = |prov_in: HashMap<Reg, Prov>| -> Result<Lower, KernelError> {
        let mut l = Lower::new(&module, w.geometry, w.buffers.clone());
        l.prov_in = prov_in;
        for (name, _, _, len) in &hdr.locals {
            l.dynamic_names.push(name.clone());
            let bytes = hdr
                .locals
                .iter()
                .find(|x| x.0 == *name)
                .map(|x| (x.2.bytes() as u64).saturating_mul(*len))
                .unwrap_or(0);
            l.dynamic_bytes = l.dynamic_bytes.max(bytes.min(u32::MAX as u64) as u32);
        }
        let mut scope = Scope::default();
        for ((p, (cn, ploc, t)), _) in entry.params.iter().zip(&ptys).zip(0..) {
            let explicit = hdr.args.iter().find(|(n, ..)| n == cn);
            let reg = l.sink.var_reg(cn, Ty::U64);
            let width = if matches!(p.ty.as_str(), "u64" | "b64" | "s64") {
                8
            } else {
                4
            };
            l.params.push(ParamVar {
                slots: vec![(0, width, reg)],
                entry: true,
                name: p.name.clone(),
            });
            scope
                .names
                .insert(p.name.clone(), Sym::Param(l.params.len() - 1));
            let value = match t {
                VTy::Ptr(_) => {
                    let buf = match explicit {
                        Some((_, _, ArgValue::Buffer(b))) => b.clone(),
                        _ => cn.clone(),
                    };
                    if !w.buffers.iter().any(|b| b.name == buf) {
                        return Err(herr(CError::new(explicit.map(|a| a.1).unwrap_or(*ploc), format!("parameter `{cn}` needs buffer `{buf}`"))));
                    }
                    l.prov.insert(reg, Prov::Global);
                    ParamValue::BufferAddr(buf)
                }
                VTy::Scalar(st) => ParamValue::Scalar(match explicit {
                    Some((_, _, ArgValue::Scalar(raw))) => *raw,
                    _ => match w.parameters.iter().find(|(n, _)| n == cn) {
                        Some((_, v)) if st.is_float() => f32_bits(*v as f32),
                        Some((_, v)) => st.int_bits(*v as i128),
                        None => return Err(herr(CError::new(stmts[0].loc, format!("scalar parameter `{cn}` (`{}`) has no value: give it with `arg {cn} = EXPR` in the header, or declare `param {cn}`", p.name)))),
                    },
                }),
            };
            l.launch.push(Param {
                name: cn.clone(),
                reg,
                value,
            });
        }
        l.scopes.push(scope);
        let body = entry.body.as_ref().expect("entries with bodies");
        l.body(
            body,
            &Frame {
                instance: 0,
                ret_label: None,
                depth: 0,
            },
        )
        .map_err(perr)?;
        l.emit(Inst::Exit, entry.end);
        Ok(l)
    };
    let mut prov = HashMap::new();
    let mut l = pass(prov.clone())?;
    for _ in 0..4 {
        let next: HashMap<Reg, Prov> = l.prov.clone();
        if next == prov {
            break;
        }
        prov = next;
        l = pass(prov.clone())?;
    }
    l.sink.finish().map_err(perr)?;
    // PTX is not what the SM runs: ptxas schedules it into SASS. The C front end's scheduler does
    // what ptxas does first (independent loads hoisted above the uses of earlier ones, within
    // basic blocks; no access that synchronises ever moves).
    crate::cfront::schedule::schedule(&mut l.sink.insts, &mut l.sink.locs);
    if l.sink.reg_names.len() > Reg::MAX as usize {
        return Err(perr(CError::new(
            entry.loc,
            format!("more than {} registers", Reg::MAX),
        )));
    }
    let local_bytes = l.local_bytes.max(l.dynamic_bytes as u64);
    w.buffers = l.buffers;
    w.params = l.launch;
    w.kernel = Kernel {
        name: base_name(&entry.name),
        file: file.to_string(),
        insts: l.sink.insts,
        locs: l.sink.locs,
        reg_names: l.sink.reg_names,
        local_bytes: local_bytes as u32,
        semantics: Semantics::Ptx,
    };
    let _: &Module = &module;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names_of_mangled_entries() {
        assert_eq!(base_name("_Z9histogramPjS_i"), "histogram");
        assert_eq!(base_name("_Z6reduceILi256EEvPfS0_"), "reduce");
        assert_eq!(base_name("_ZN2ns6kernelEPi"), "kernel");
        assert_eq!(base_name("plain"), "plain");
    }
}
