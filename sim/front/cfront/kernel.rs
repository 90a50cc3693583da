//! A `.cu` / `.cl` file → [`Workload`]: the header evaluated (`header.rs`), the kernel chosen, its
//! parameters bound to buffers and values, and its body lowered into a [`Kernel`].
//!
//! Registers: the kernel's parameters first, in order (the launch preloads them: a buffer's base
//! address or a scalar's bits), then the variables and temporaries as the lowering declares them.
//! Local memory: the header's dynamic arrays first (in header order), then the `__shared__` /
//! `__local` arrays in declaration order, each aligned to its element size.
//!
//! Parameter binding: a pointer parameter takes the buffer of its name (or `arg NAME = BUFFER`), a
//! scalar parameter the header's `arg NAME = EXPR`, else the workload parameter of its name; OpenCL
//! `__local T *p` parameters take the header's `local p: TYPE[LEN]`.

use super::ast::{FnKind, Function, Unit};
use super::header::{self, ArgValue};
use super::lexer;
use super::lower::{Binding, Lower, Mode, RVal, Sink};
use super::parser::Parser;
use super::types::{STy, VTy};
use super::{CError, Dialect};
use crate::ir::*;
use crate::kernel::KernelError;
use crate::workload::{Param, ParamValue, Workload};
use std::collections::HashMap;

type R<T> = Result<T, CError>;

/// Collects a kernel's instructions, registers and labels.
#[derive(Default)]
pub struct KernelSink {
    pub insts: Vec<Inst>,
    pub locs: Vec<SrcLoc>,
    pub reg_names: Vec<String>,
    /// Registers declared under each source name: the next one is `name.{n + 1}`.
    declared: HashMap<String, u32>,
    labels: HashMap<String, u32>,
    fixups: Vec<(usize, String, SrcLoc)>,
    next_label: u32,
}

impl Sink for KernelSink {
    fn var_reg(&mut self, name: &str, _ty: Ty) -> Reg {
        // A C name has no `.` and a temporary's starts with `%`: `name.k` is taken only by
        // this name's own k-th declaration, so a count finds the first free one (a search of
        // every name was quadratic in the declarations).
        let k = self.declared.entry(name.to_string()).or_insert(0);
        *k += 1;
        let n = match *k {
            1 => name.to_string(),
            k => format!("{name}.{k}"),
        };
        self.reg_names.push(n);
        (self.reg_names.len() - 1) as Reg
    }

    fn temp(&mut self, _ty: Ty) -> Reg {
        let n = format!("%t{}", self.reg_names.len());
        self.reg_names.push(n);
        (self.reg_names.len() - 1) as Reg
    }

    fn emit(&mut self, inst: Inst, at: SrcLoc) {
        self.insts.push(inst);
        self.locs.push(at);
    }

    fn emitted(&self) -> usize {
        self.insts.len()
    }

    fn fresh_label(&mut self) -> String {
        self.next_label += 1;
        format!("$L{}", self.next_label)
    }

    fn define_label(&mut self, name: &str, at: SrcLoc) -> R<()> {
        if self
            .labels
            .insert(name.to_string(), self.insts.len() as u32)
            .is_some()
        {
            return Err(CError::new(at, format!("label `{name}` is defined twice")));
        }
        Ok(())
    }

    fn branch(&mut self, label: &str, cond: Option<(Reg, bool)>, at: SrcLoc) {
        self.fixups.push((self.insts.len(), label.to_string(), at));
        self.emit(Inst::Branch { target: 0, cond }, at);
    }
}

impl KernelSink {
    /// Resolves the branches.
    pub fn finish(&mut self) -> R<()> {
        for (i, label, at) in std::mem::take(&mut self.fixups) {
            let Some(&t) = self.labels.get(&label) else {
                return Err(CError::new(at, format!("unknown label `{label}`")));
            };
            if let Inst::Branch { target, .. } = &mut self.insts[i] {
                *target = t;
            }
        }
        Ok(())
    }
}

/// The kernel to launch: the one named by the header, else the only one in the file.
fn choose(unit: &Unit, choice: Option<(String, SrcLoc)>, dialect: Dialect) -> R<&Function> {
    let kernels: Vec<&Function> = unit
        .functions
        .iter()
        .filter(|f| f.kind == FnKind::Kernel)
        .collect();
    let names = || {
        kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match choice {
        Some((name, at)) => kernels.iter().copied().find(|k| k.name == name).ok_or_else(|| {
            CError::new(at, format!("no kernel `{name}` in this file (kernels: {})", names()))
        }),
        None => match kernels.as_slice() {
            [k] => Ok(k),
            [] => Err(CError::new(
                SrcLoc { line: 1, col: 1 },
                format!(
                    "found no kernel: expected a {} function",
                    if dialect == Dialect::Cuda { "`__global__ void`" } else { "`__kernel void`" }
                ),
            )),
            _ => Err(CError::new(
                kernels[1].loc,
                format!("the file defines several kernels ({}): say which to launch with `kernel NAME` in the header", names()),
            )),
        },
    }
}

/// Parses and lowers a whole CUDA or OpenCL C file.
pub fn workload(
    text: &str,
    file: &str,
    dialect: Dialect,
    overrides: &[(String, i64)],
) -> Result<Workload, KernelError> {
    let cerr = |e: CError| e.in_file(file);
    let lexed = lexer::lex(text, SrcLoc { line: 1, col: 1 }).map_err(cerr)?;
    let mut parser = Parser::new(lexed.tokens, dialect);
    let unit = parser.unit().map_err(cerr)?;
    let stmts = header::statements(&lexed.headers).map_err(cerr)?;
    if stmts.is_empty() {
        return Err(cerr(CError::new(
            SrcLoc { line: 1, col: 1 },
            "no workload header: a launch needs a `/* gpumemsim ... */` comment with at least `groups` and `group_size` (see workloads/README.md)",
        )));
    }
    let kf = choose(&unit, header::kernel_choice(&stmts).map_err(cerr)?, dialect).map_err(cerr)?;
    if !matches!(kf.ret.spec.base, super::ast::BaseTy::Void) || !kf.ret.ptrs.is_empty() {
        return Err(cerr(CError::new(
            kf.loc,
            format!("kernel `{}` must return void", kf.name),
        )));
    }
    let mut ptys = Vec::new();
    for p in &kf.params {
        let t = super::lower::vty_of(&p.ty, p.loc).map_err(cerr)?;
        ptys.push((p.name.clone(), p.loc, t));
    }
    let hdr = header::evaluate(text, file, &stmts, &ptys, overrides)?;
    let mut w = hdr.workload;

    let mut sink = KernelSink::default();
    let mut l = Lower::new(&mut sink, dialect, Mode::Kernel);
    l.geometry = Some(w.geometry);
    // Workload parameters are constants of the program, typed as a C integer literal would be.
    for (name, v) in &w.parameters {
        let t = if i32::try_from(*v).is_ok() {
            STy::I32
        } else {
            STy::I64
        };
        l.bind(name, Binding::Val(RVal::int(*v as i128, t)));
    }
    for d in &unit.globals {
        l.global_decl(d).map_err(cerr)?;
    }
    // Dynamic local arrays, first in local memory.
    for (name, _, elem, len) in &hdr.locals {
        let b = elem.bytes() as u64;
        let offset = l.local_bytes.div_ceil(b) * b;
        l.local_bytes = offset + len * b;
        if l.local_bytes > u32::MAX as u64 {
            return Err(cerr(CError::new(
                kf.loc,
                "local arrays total more than 4 GiB",
            )));
        }
        l.dynamic_locals
            .push((name.clone(), offset as u32, *elem, *len));
    }
    // The kernel's parameters live in their own scope: device functions see only the file's names.
    l.push_scope();
    let assigned = super::lower::Assignments::of(&kf.body);
    let mut params = Vec::new();
    for (name, ploc, ty) in &ptys {
        let explicit = hdr.args.iter().find(|(n, ..)| n == name);
        match ty {
            VTy::Ptr(p) if p.space == Space::Local => {
                let Some(&(_, offset, elem, _)) = l.dynamic_locals.iter().find(|(n, ..)| n == name)
                else {
                    return Err(cerr(CError::new(*ploc, format!("local pointer parameter `{name}` needs its array: declare `local {name}: TYPE[LEN]` in the header"))));
                };
                if elem.bytes() != p.elem.bytes() {
                    return Err(cerr(CError::new(
                        *ploc,
                        format!(
                            "`{name}` points to `{}` but the header's local array holds `{}`",
                            p.elem.name(l.dialect),
                            elem.name(l.dialect)
                        ),
                    )));
                }
                l.bind(
                    name,
                    Binding::Val(RVal::Ptr {
                        base: Operand::Imm(offset as u64),
                        off: 0,
                        ty: *p,
                    }),
                );
            }
            VTy::Ptr(p) => {
                let buf = match explicit {
                    Some((_, _, ArgValue::Buffer(b))) => b.clone(),
                    _ => name.clone(),
                };
                let Some(b) = w.buffers.iter().find(|b| b.name == buf) else {
                    let names: Vec<&str> = w.buffers.iter().map(|b| b.name.as_str()).collect();
                    let at = explicit.map(|a| a.1).unwrap_or(*ploc);
                    return Err(cerr(CError::new(at, format!("pointer parameter `{name}` needs a buffer: declare `buffer {buf}: TYPE[LEN]` or bind it with `arg {name} = BUFFER` (buffers: {})", if names.is_empty() { "none".into() } else { names.join(", ") }))));
                };
                if b.elem.width() != p.elem.ir().width() {
                    return Err(cerr(CError::new(
                        *ploc,
                        format!(
                            "`{name}` points to `{}` but buffer `{buf}` holds {} elements",
                            p.elem.name(l.dialect),
                            b.elem.name()
                        ),
                    )));
                }
                let reg = l.sink.var_reg(name, Ty::U64);
                l.bind(name, Binding::Var { reg, ty: *ty });
                params.push(Param {
                    name: name.clone(),
                    reg,
                    value: ParamValue::BufferAddr(buf),
                });
            }
            VTy::Scalar(t) => {
                let raw = match explicit {
                    Some((_, _, ArgValue::Scalar(raw))) => *raw,
                    _ => match w.parameters.iter().find(|(n, _)| n == name) {
                        Some((_, v)) => scalar_bits(*v, *t),
                        None => {
                            return Err(cerr(CError::new(*ploc, format!("scalar parameter `{name}` has no value: give it with `arg {name} = EXPR` in the header, or declare `param {name}`"))))
                        }
                    },
                };
                let reg = l.sink.var_reg(name, t.ir());
                l.bind(name, Binding::Var { reg, ty: *ty });
                // The launch fixes the value: a parameter the kernel never assigns keeps it.
                if !t.is_float() && !assigned.any.contains(name) {
                    l.note_range(name, reg, *ty, u64::try_from(t.int_value(raw)).ok());
                }
                params.push(Param {
                    name: name.clone(),
                    reg,
                    value: ParamValue::Scalar(raw),
                });
            }
        }
    }
    if let Some((name, at, ..)) = hdr
        .args
        .iter()
        .find(|(n, ..)| !ptys.iter().any(|p| &p.0 == n))
    {
        return Err(cerr(CError::new(
            *at,
            format!("the kernel has no parameter `{name}`"),
        )));
    }
    l.add_functions(unit.functions.iter().filter(|f| f.kind == FnKind::Device));
    l.body(&kf.body, kf.end).map_err(cerr)?;
    let local_bytes = l.local_bytes;
    drop(l);
    // Falling off the end exits.
    sink.emit(Inst::Exit, kf.end);
    sink.finish().map_err(cerr)?;
    super::schedule::schedule(&mut sink.insts, &mut sink.locs);
    if sink.reg_names.len() > Reg::MAX as usize {
        return Err(cerr(CError::new(
            kf.loc,
            format!("more than {} registers", Reg::MAX),
        )));
    }
    w.kernel = Kernel {
        name: kf.name.clone(),
        file: file.to_string(),
        insts: sink.insts,
        locs: sink.locs,
        reg_names: sink.reg_names,
        local_bytes: local_bytes as u32,
        semantics: match dialect {
            Dialect::Cuda => Semantics::Ptx,
            Dialect::OpenCl => Semantics::OpenCl,
        },
    };
    w.params = params;
    Ok(w)
}

/// The register bits of workload parameter `v` as a `t` (a float parameter holds the integer's value).
fn scalar_bits(v: i64, t: STy) -> u64 {
    if t.is_float() {
        f32_bits(v as f32)
    } else {
        t.int_bits(v as i128)
    }
}
