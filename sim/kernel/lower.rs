//! Statements → [`Workload`]: parameters resolved (defaults, then the caller's overrides), constant
//! expressions evaluated, names bound, every instruction checked (operand kinds, types, orders legal for
//! the operation) and lowered into [`crate::ir::Inst`], checks lowered into [`workload::Expr`].
//!
//! Register numbering: one launch-parameter register per buffer (its base address) in declaration
//! order, then the scalar arguments, then the declared registers, then one scratch register for
//! element addresses (`data[%i]` lowers to `shl` + `add` into it, as a compiler would).
//!
//! Orders follow the C++/SYCL rules for which order an operation may take (SYCL fig. 19-10: a load is
//! never release, a store never acquire; read-modify-writes and fences take any order but relaxed for a
//! fence; a compare-exchange's failure order is a load order). Scope defaults: device for global memory,
//! work_group for local memory and barriers (PTX's default `.gpu` for atomics and `.cta` for bar.sync).

use super::syntax::{BaseSyn, BinOp, Bracket, Expr, InitSyn, InstSyn, Operand, Stmt, StmtKind};
use super::KernelError;
use crate::ir::{self, *};
use crate::workload::{
    self, Buffer, CheckOp, FoldOp, Geometry, Init, LaunchLimit, Param, ParamValue, Quantity,
    Workload,
};
use std::collections::HashMap;

type R<T> = Result<T, KernelError>;

/// Largest total of buffer bytes a workload may declare (the simulator holds them in memory).
const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// A constant value: integers stay exact, floats appear only where written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn show(self) -> String {
        match self {
            Num::Int(v) => v.to_string(),
            Num::Float(v) => format!("{v}"),
        }
    }
}

struct LocalArr {
    offset: u32,
    ty: Ty,
    len: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum RegKind {
    Declared,
    Arg,
}

struct Lower<'a> {
    file: &'a str,
    /// Parameters and (once the geometry is known) the built-in launch constants.
    consts: Vec<(String, i64)>,
    buffers: Vec<Buffer>,
    locals: HashMap<String, LocalArr>,
    local_bytes: u64,
    regs: HashMap<String, (Reg, RegKind)>,
    reg_names: Vec<String>,
    scratch: Option<Reg>,
    insts: Vec<Inst>,
    locs: Vec<SrcLoc>,
    labels: HashMap<String, (u32, SrcLoc)>,
    fixups: Vec<(usize, String, SrcLoc)>,
}

const BUILTINS: [&str; 3] = ["global_size", "num_groups", "group_size"];

pub fn lower(stmts: &[Stmt], file: &str, overrides: &[(String, i64)]) -> R<Workload> {
    let mut l = Lower {
        file,
        consts: Vec::new(),
        buffers: Vec::new(),
        locals: HashMap::new(),
        local_bytes: 0,
        regs: HashMap::new(),
        reg_names: Vec::new(),
        scratch: None,
        insts: Vec::new(),
        locs: Vec::new(),
        labels: HashMap::new(),
        fixups: Vec::new(),
    };
    let (parameters, param_locs) = l.parameters(stmts, overrides)?;
    let (name, kloc, geometry) = l.geometry(stmts)?;
    l.requirements(stmts)?;
    let params = l.declarations(stmts, &param_locs)?;
    l.body(stmts, kloc)?;
    let (checks, reports) = l.checks(stmts)?;
    Ok(Workload {
        kernel: Kernel {
            name,
            file: file.to_string(),
            insts: l.insts,
            locs: l.locs,
            reg_names: l.reg_names,
            local_bytes: l.local_bytes as u32,
            // The kernel language is PTX-flavoured: relaxed operations keep their scope.
            semantics: Semantics::Ptx,
        },
        geometry,
        buffers: l.buffers,
        params,
        checks,
        reports,
        parameters,
    })
}

/// `a, b, c`, or `none`.
fn listing<'s>(names: impl IntoIterator<Item = &'s str>) -> String {
    let v: Vec<&str> = names.into_iter().collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

type Params = (Vec<(String, i64)>, HashMap<String, SrcLoc>);

impl Lower<'_> {
    /// Parameters in order (a default may use the parameters declared before it), with overrides.
    fn parameters(&mut self, stmts: &[Stmt], overrides: &[(String, i64)]) -> R<Params> {
        let mut parameters: Vec<(String, i64)> = Vec::new();
        let mut locs: HashMap<String, SrcLoc> = HashMap::new();
        for s in stmts {
            let StmtKind::Param { name, value } = &s.kind else {
                continue;
            };
            if let Some(first) = locs.get(name) {
                return Err(self.err(
                    s.loc,
                    format!("parameter `{name}` is declared twice (first at {first})"),
                ));
            }
            if BUILTINS.contains(&name.as_str()) {
                return Err(self.err(
                    s.loc,
                    format!(
                        "`{name}` is a built-in launch constant and cannot be a parameter name"
                    ),
                ));
            }
            let v = match overrides.iter().rev().find(|(n, _)| n == name) {
                Some(&(_, v)) => v,
                None => self.int(value, "a parameter's value")?,
            };
            locs.insert(name.clone(), s.loc);
            parameters.push((name.clone(), v));
            self.consts.push((name.clone(), v));
        }
        if let Some((name, _)) = overrides.iter().find(|(n, _)| !locs.contains_key(n)) {
            return Err(KernelError::UnknownParam {
                file: self.file.to_string(),
                name: name.clone(),
                declared: listing(parameters.iter().map(|(n, _)| n.as_str())),
            });
        }
        Ok((parameters, locs))
    }

    /// The kernel's name and place, and the launch geometry; defines the built-in launch constants.
    fn geometry(&mut self, stmts: &[Stmt]) -> R<(String, SrcLoc, Geometry)> {
        let mut kernel: Option<(String, SrcLoc)> = None;
        let mut groups: Option<([u32; 3], SrcLoc)> = None;
        let mut group_size: Option<([u32; 3], SrcLoc)> = None;
        for s in stmts {
            let (dims, what, slot) = match &s.kind {
                StmtKind::Kernel { name } => {
                    if let Some((_, first)) = &kernel {
                        return Err(self.err(
                            s.loc,
                            format!("a second kernel block (the first is at {first}); a file holds one kernel"),
                        ));
                    }
                    kernel = Some((name.clone(), s.loc));
                    continue;
                }
                StmtKind::Groups(d) => (d, "groups", &mut groups),
                StmtKind::GroupSize(d) => (d, "group_size", &mut group_size),
                _ => continue,
            };
            if slot.is_some() {
                return Err(self.err(s.loc, format!("`{what}` is given twice")));
            }
            let mut v = [1u32; 3];
            for (i, e) in dims.iter().enumerate() {
                let n = self.int(e, "a launch dimension")?;
                if n < 1 || n > u32::MAX as i64 {
                    return Err(self.err(
                        e.loc(),
                        format!("{what} dimension {i} = {n}: must be from 1 to {}", u32::MAX),
                    ));
                }
                v[i] = n as u32;
            }
            *slot = Some((v, s.loc));
        }
        let Some((name, kloc)) = kernel else {
            return Err(self.err(
                SrcLoc { line: 1, col: 1 },
                "found no kernel: expected a block `kernel NAME { ... }`",
            ));
        };
        let (Some((groups, groups_at)), Some((group_size, size_at))) = (groups, group_size) else {
            return Err(self.err(
                kloc,
                "the launch geometry is missing: expected `groups N` and `group_size M` declarations",
            ));
        };
        match workload::check_launch(groups, group_size) {
            Ok(()) => {}
            Err(LaunchLimit::Groups(m)) => return Err(self.err(groups_at, format!("groups {m}"))),
            Err(LaunchLimit::GroupSize(m)) => {
                return Err(self.err(size_at, format!("group_size: {m}")))
            }
        }
        let geometry = Geometry { groups, group_size };
        let ng = geometry.num_groups();
        let gt = geometry.group_threads() as u64;
        self.consts.push(("global_size".into(), (ng * gt) as i64));
        self.consts.push(("num_groups".into(), ng as i64));
        self.consts.push(("group_size".into(), gt as i64));
        Ok((name, kloc, geometry))
    }

    fn requirements(&self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            let StmtKind::Require { cond, message } = &s.kind else {
                continue;
            };
            if self.eval(cond)? != Num::Int(0) {
                continue;
            }
            let values: Vec<String> = names_in(cond)
                .into_iter()
                .filter_map(|n| self.constant(&n).map(|v| format!("{n} = {v}")))
                .collect();
            let values = if values.is_empty() {
                String::new()
            } else {
                format!(" ({})", values.join(", "))
            };
            let message = message
                .as_ref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            return Err(self.err(s.loc, format!("requirement does not hold{values}{message}")));
        }
        Ok(())
    }

    /// Buffers, local arrays, launch arguments and registers; returns the launch parameters.
    fn declarations(
        &mut self,
        stmts: &[Stmt],
        param_locs: &HashMap<String, SrcLoc>,
    ) -> R<Vec<Param>> {
        // Buffers, local arrays and parameters share one name space.
        let mut names = param_locs.clone();
        let claim = |l: &Self, names: &mut HashMap<String, SrcLoc>, name: &str, loc: SrcLoc| {
            if BUILTINS.contains(&name) {
                return Err(l.err(loc, format!("`{name}` is a built-in launch constant")));
            }
            match names.insert(name.to_string(), loc) {
                Some(first) => Err(l.err(
                    loc,
                    format!("the name `{name}` is already declared at {first}"),
                )),
                None => Ok(()),
            }
        };
        let mut total_bytes = 0u64;
        for s in stmts {
            match &s.kind {
                StmtKind::Buffer {
                    name,
                    ty,
                    len,
                    init,
                } => {
                    claim(self, &mut names, name, s.loc)?;
                    let elem = self.ty(ty)?;
                    let n = self.length(len)?;
                    total_bytes =
                        total_bytes.saturating_add(n.saturating_mul(elem.width().bytes() as u64));
                    if total_bytes > MAX_BUFFER_BYTES {
                        return Err(self.err(
                            s.loc,
                            format!("buffers total more than {MAX_BUFFER_BYTES} bytes (here `{name}` with {n} elements)"),
                        ));
                    }
                    let init = self.init(init, elem, n, s.loc)?;
                    self.reg_names.push(name.clone());
                    self.buffers.push(Buffer {
                        name: name.clone(),
                        elem,
                        len: n,
                        init,
                        loc: s.loc,
                    });
                }
                StmtKind::Local { name, ty, len } => {
                    claim(self, &mut names, name, s.loc)?;
                    let t = self.ty(ty)?;
                    let n = self.length(len)?;
                    let b = t.width().bytes() as u64;
                    let offset = self.local_bytes.div_ceil(b) * b;
                    self.local_bytes = offset + n.saturating_mul(b);
                    if self.local_bytes > u32::MAX as u64 {
                        return Err(self.err(s.loc, "local arrays total more than 4 GiB"));
                    }
                    self.locals.insert(
                        name.clone(),
                        LocalArr {
                            offset: offset as u32,
                            ty: t,
                            len: n,
                        },
                    );
                }
                _ => {}
            }
        }
        // Buffer registers come first: register i holds buffer i's address.
        let mut params: Vec<Param> = self
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| Param {
                name: b.name.clone(),
                reg: i as Reg,
                value: ParamValue::BufferAddr(b.name.clone()),
            })
            .collect();
        for s in stmts {
            match &s.kind {
                StmtKind::Arg { name, ty, value } => {
                    let t = self.ty(ty)?;
                    let v = self.eval(value)?;
                    let raw = self.typed(v, t, value.loc())?;
                    let r = self.new_reg(name, RegKind::Arg, s.loc)?;
                    params.push(Param {
                        name: format!("%{name}"),
                        reg: r,
                        value: ParamValue::Scalar(raw),
                    });
                }
                StmtKind::Reg(list) => {
                    for (name, loc) in list {
                        self.new_reg(name, RegKind::Declared, *loc)?;
                    }
                }
                _ => {}
            }
        }
        Ok(params)
    }

    /// The kernel block's labels and instructions, then the branch targets.
    fn body(&mut self, stmts: &[Stmt], kloc: SrcLoc) -> R<()> {
        let mut end = kloc;
        for s in stmts {
            match &s.kind {
                StmtKind::EndKernel => end = s.loc,
                StmtKind::Label(name) => {
                    if let Some((_, first)) = self.labels.get(name) {
                        return Err(self.err(
                            s.loc,
                            format!("label `{name}` is defined twice (first at {first})"),
                        ));
                    }
                    self.labels
                        .insert(name.clone(), (self.insts.len() as u32, s.loc));
                }
                StmtKind::Inst(i) => self.inst(i)?,
                _ => {}
            }
        }
        // Falling off the end exits; the explicit instruction gives trailing labels a target.
        self.emit(Inst::Exit, end);
        for (at, name, loc) in std::mem::take(&mut self.fixups) {
            let Some(&(pc, _)) = self.labels.get(&name) else {
                let mut known: Vec<&str> = self.labels.keys().map(|s| s.as_str()).collect();
                known.sort();
                return Err(self.err(
                    loc,
                    format!("unknown label `{name}` (labels: {})", listing(known)),
                ));
            };
            if let Inst::Branch { target, .. } = &mut self.insts[at] {
                *target = pc;
            }
        }
        if self.reg_names.len() > Reg::MAX as usize {
            return Err(self.err(kloc, format!("more than {} registers", Reg::MAX)));
        }
        Ok(())
    }

    fn checks(&self, stmts: &[Stmt]) -> R<(Vec<workload::Check>, Vec<Quantity>)> {
        let mut checks = Vec::new();
        let mut reports: Vec<Quantity> = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Check { forall, expr, text } => {
                    let Expr::Bin(op, lhs, rhs, _) = expr else {
                        return Err(self.not_a_comparison(s.loc));
                    };
                    if !op.is_comparison() {
                        return Err(self.not_a_comparison(s.loc));
                    }
                    if let Some((_, b, bloc)) = forall {
                        if !self.buffers.iter().any(|x| &x.name == b) {
                            return Err(self.err(*bloc, self.unknown_buffer(b)));
                        }
                    }
                    let var = forall.as_ref().map(|(v, _, _)| v.as_str());
                    checks.push(workload::Check {
                        text: text.clone(),
                        loc: s.loc,
                        lhs: self.check_expr(lhs, var, &mut Vec::new())?,
                        op: check_op(*op),
                        rhs: self.check_expr(rhs, var, &mut Vec::new())?,
                        forall: forall.as_ref().map(|(_, b, _)| b.clone()),
                    });
                }
                StmtKind::Report { name, expr } => {
                    if reports.iter().any(|q| &q.name == name) {
                        return Err(self.err(s.loc, format!("quantity `{name}` is reported twice")));
                    }
                    reports.push(Quantity {
                        name: name.clone(),
                        loc: s.loc,
                        expr: self.check_expr(expr, None, &mut Vec::new())?,
                    });
                }
                _ => {}
            }
        }
        Ok((checks, reports))
    }

    fn not_a_comparison(&self, loc: SrcLoc) -> KernelError {
        self.err(
            loc,
            "a check compares two values: expected `==`, `!=`, `<`, `<=`, `>` or `>=` at its top level",
        )
    }
}

fn check_op(op: BinOp) -> CheckOp {
    match op {
        BinOp::Eq => CheckOp::Eq,
        BinOp::Ne => CheckOp::Ne,
        BinOp::Lt => CheckOp::Lt,
        BinOp::Le => CheckOp::Le,
        BinOp::Gt => CheckOp::Gt,
        _ => CheckOp::Ge,
    }
}

/// The bare names an expression mentions, in order, without repeats.
fn names_in(e: &Expr) -> Vec<String> {
    fn walk(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Name(n, _) => {
                if !out.contains(n) {
                    out.push(n.clone())
                }
            }
            Expr::Int(..) | Expr::Float(..) => {}
            Expr::Index(_, i, _) => walk(i, out),
            Expr::Call(_, a, _) => a.iter().for_each(|x| walk(x, out)),
            Expr::Fold { from, to, body, .. } => {
                walk(from, out);
                walk(to, out);
                walk(body, out);
            }
            Expr::Neg(x, _) | Expr::Not(x, _) => walk(x, out),
            Expr::Bin(_, a, b, _) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

/// Which qualifiers a mnemonic takes.
#[derive(Clone, Copy, Default)]
struct Allow {
    ty: u8,
    order: bool,
    scope: bool,
    space: bool,
    spaces: bool,
    cmp: bool,
    atom_op: bool,
    cas: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OrdWord {
    Plain,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl OrdWord {
    fn parse(s: &str) -> Option<OrdWord> {
        Some(match s {
            "plain" | "weak" => OrdWord::Plain,
            "relaxed" => OrdWord::Relaxed,
            "acquire" => OrdWord::Acquire,
            "release" => OrdWord::Release,
            "acq_rel" => OrdWord::AcqRel,
            "seq_cst" | "sc" => OrdWord::SeqCst,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            OrdWord::Plain => "plain",
            OrdWord::Relaxed => "relaxed",
            OrdWord::Acquire => "acquire",
            OrdWord::Release => "release",
            OrdWord::AcqRel => "acq_rel",
            OrdWord::SeqCst => "seq_cst",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtomOp {
    Rmw(RmwOp),
    Cas,
}

#[derive(Default)]
struct Quals {
    tys: Vec<(Ty, SrcLoc)>,
    order: Option<(OrdWord, SrcLoc)>,
    scope: Option<(Scope, SrcLoc)>,
    space: Option<(Space, SrcLoc)>,
    spaces: SpaceSet,
    cmp: Option<CmpOp>,
    op: Option<(AtomOp, SrcLoc)>,
    weak: Option<bool>,
    fail: Option<(OrdWord, SrcLoc)>,
}

fn parse_ty(s: &str) -> Option<Ty> {
    Some(match s {
        "u32" | "b32" => Ty::U32,
        "i32" | "s32" => Ty::I32,
        "u64" | "b64" => Ty::U64,
        "i64" | "s64" => Ty::I64,
        "f32" => Ty::F32,
        _ => return None,
    })
}

/// Special registers: the OpenCL/SYCL names and the PTX names; the first six take `.x/.y/.z`.
fn special(name: &str, dim: Option<Dim>) -> Option<Special> {
    let d = dim.unwrap_or(Dim::X);
    let s = match name {
        "global_id" => Special::GlobalId(d),
        "local_id" | "tid" => Special::LocalId(d),
        "group_id" | "ctaid" => Special::GroupId(d),
        "global_size" => Special::GlobalSize(d),
        "local_size" | "ntid" => Special::LocalSize(d),
        "num_groups" | "nctaid" => Special::NumGroups(d),
        _ if dim.is_some() => return None,
        "global_linear_id" => Special::GlobalLinearId,
        "local_linear_id" => Special::LocalLinearId,
        "group_linear_id" => Special::GroupLinearId,
        "sub_group_local_id" | "laneid" => Special::Lane,
        "sub_group_id" | "warpid" => Special::SubGroupId,
        "sub_group_size" | "warp_size" => Special::SubGroupSize,
        "num_sub_groups" | "nwarpid" => Special::NumSubGroups,
        "sm_id" | "smid" => Special::SmId,
        "clock" | "clock64" => Special::Clock,
        _ => return None,
    };
    Some(s)
}

fn is_special(name: &str) -> bool {
    special(name, None).is_some()
}

impl Lower<'_> {
    fn err(&self, loc: SrcLoc, m: impl Into<String>) -> KernelError {
        KernelError::at(self.file, loc.line, loc.col, m)
    }

    fn constant(&self, name: &str) -> Option<i64> {
        self.consts
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    fn unknown_buffer(&self, name: &str) -> String {
        format!(
            "unknown buffer `{name}` (buffers: {})",
            listing(self.buffers.iter().map(|b| b.name.as_str()))
        )
    }

    // ---- constant expressions ----

    fn eval(&self, e: &Expr) -> R<Num> {
        use Num::*;
        Ok(match e {
            Expr::Int(v, _) => Int(*v),
            Expr::Float(v, _) => Float(*v),
            Expr::Name(n, loc) => match self.constant(n) {
                Some(v) => Int(v),
                None => {
                    let what = if self.buffers.iter().any(|b| &b.name == n) {
                        format!("buffer `{n}` has no value before the run; use it in an address (`{n}[i]`) or a check")
                    } else if self.locals.contains_key(n) {
                        format!("local array `{n}` is not a constant; use it in an address (`{n}[i]`)")
                    } else if BUILTINS.contains(&n.as_str()) {
                        format!("`{n}` is not known yet: the launch geometry may only use parameters")
                    } else {
                        let known = self
                            .consts
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .filter(|n| !BUILTINS.contains(n));
                        format!(
                            "unknown name `{n}` in a constant expression (parameters declared so far: {})",
                            listing(known)
                        )
                    };
                    return Err(self.err(*loc, what));
                }
            },
            Expr::Index(n, _, loc) => {
                return Err(self.err(
                    *loc,
                    format!("found `{n}[...]` but expected a constant: buffer contents are only known in checks"),
                ))
            }
            Expr::Fold { loc, .. } => {
                return Err(self.err(*loc, "folds (`sum(i = a .. b: ...)`) are only available in checks"))
            }
            Expr::Call(f, args, loc) => {
                let vals = args.iter().map(|a| self.eval(a)).collect::<R<Vec<_>>>()?;
                let ints = |what: &str| -> R<Vec<i64>> {
                    vals.iter()
                        .map(|v| match v {
                            Int(i) => Ok(*i),
                            Float(_) => Err(self.err(*loc, format!("{what} takes integers"))),
                        })
                        .collect()
                };
                let arity = |n: usize| -> R<()> {
                    if vals.len() == n {
                        Ok(())
                    } else {
                        Err(self.err(
                            *loc,
                            format!("found {} arguments but `{f}` takes {n}", vals.len()),
                        ))
                    }
                };
                match f.as_str() {
                    "min" | "max" => {
                        arity(2)?;
                        let pick_first = match (vals[0], vals[1]) {
                            (Int(a), Int(b)) => (a <= b) == (f == "min"),
                            (a, b) => (as_f(a) <= as_f(b)) == (f == "min"),
                        };
                        if pick_first {
                            vals[0]
                        } else {
                            vals[1]
                        }
                    }
                    "ceil_div" => {
                        arity(2)?;
                        let v = ints("ceil_div")?;
                        if v[1] <= 0 {
                            return Err(self.err(*loc, format!("ceil_div by {}: the divisor must be positive", v[1])));
                        }
                        Int(v[0].div_euclid(v[1]) + (v[0].rem_euclid(v[1]) != 0) as i64)
                    }
                    "log2" => {
                        arity(1)?;
                        let v = ints("log2")?[0];
                        if v < 1 || v & (v - 1) != 0 {
                            return Err(self.err(*loc, format!("log2({v}): the argument must be a power of two")));
                        }
                        Int(v.trailing_zeros() as i64)
                    }
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found `{f}(...)` but expected one of min, max, ceil_div, log2 in a constant expression"),
                        ))
                    }
                }
            }
            Expr::Neg(x, loc) => match self.eval(x)? {
                Int(v) => Int(v.checked_neg().ok_or_else(|| self.err(*loc, "overflows 64 bits"))?),
                Float(v) => Float(-v),
            },
            Expr::Not(x, _) => Int((self.eval(x)? == Int(0)) as i64),
            Expr::Bin(op, a, b, loc) => {
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                let ovf = || self.err(*loc, format!("`{}` overflows 64 bits", op.symbol()));
                if op.is_comparison() {
                    let (p, q) = (as_f(x), as_f(y));
                    let r = match (x, y) {
                        (Int(i), Int(j)) => match op {
                            BinOp::Eq => i == j,
                            BinOp::Ne => i != j,
                            BinOp::Lt => i < j,
                            BinOp::Le => i <= j,
                            BinOp::Gt => i > j,
                            _ => i >= j,
                        },
                        _ => match op {
                            BinOp::Eq => p == q,
                            BinOp::Ne => p != q,
                            BinOp::Lt => p < q,
                            BinOp::Le => p <= q,
                            BinOp::Gt => p > q,
                            _ => p >= q,
                        },
                    };
                    return Ok(Int(r as i64));
                }
                match (x, y) {
                    (Int(i), Int(j)) => Int(match op {
                        BinOp::Add => i.checked_add(j).ok_or_else(ovf)?,
                        BinOp::Sub => i.checked_sub(j).ok_or_else(ovf)?,
                        BinOp::Mul => i.checked_mul(j).ok_or_else(ovf)?,
                        BinOp::Div | BinOp::Rem if j == 0 => {
                            return Err(self.err(*loc, format!("`{}` by zero", op.symbol())))
                        }
                        BinOp::Div => i.checked_div(j).ok_or_else(ovf)?,
                        BinOp::Rem => i.checked_rem(j).ok_or_else(ovf)?,
                        BinOp::Shl | BinOp::Shr if !(0..64).contains(&j) => {
                            return Err(self.err(*loc, format!("shift by {j}: must be from 0 to 63")))
                        }
                        BinOp::Shl => i << j,
                        BinOp::Shr => i >> j,
                        BinOp::BitAnd => i & j,
                        BinOp::BitOr => i | j,
                        BinOp::BitXor => i ^ j,
                        BinOp::And => (i != 0 && j != 0) as i64,
                        BinOp::Or => (i != 0 || j != 0) as i64,
                        _ => unreachable!("comparisons handled above"),
                    }),
                    _ => Float(match op {
                        BinOp::Add => as_f(x) + as_f(y),
                        BinOp::Sub => as_f(x) - as_f(y),
                        BinOp::Mul => as_f(x) * as_f(y),
                        BinOp::Div => as_f(x) / as_f(y),
                        _ => {
                            return Err(self.err(
                                *loc,
                                format!("`{}` takes integers, found {} and {}", op.symbol(), x.show(), y.show()),
                            ))
                        }
                    }),
                }
            }
        })
    }

    fn int(&self, e: &Expr, what: &str) -> R<i64> {
        match self.eval(e)? {
            Num::Int(v) => Ok(v),
            Num::Float(v) => {
                Err(self.err(e.loc(), format!("found {v} but {what} must be an integer")))
            }
        }
    }

    fn length(&self, e: &Expr) -> R<u64> {
        let n = self.int(e, "a length")?;
        if n < 1 {
            return Err(self.err(e.loc(), format!("length {n}: must be at least 1")));
        }
        Ok(n as u64)
    }

    fn ty(&self, (name, loc): &(String, SrcLoc)) -> R<Ty> {
        parse_ty(name).ok_or_else(|| {
            self.err(
                *loc,
                format!("found `{name}` but expected a type: u32, i32, u64, i64 or f32"),
            )
        })
    }

    /// The raw register bits of `v` as type `ty`.
    fn typed(&self, v: Num, ty: Ty, loc: SrcLoc) -> R<u64> {
        match (ty, v) {
            (Ty::F32, Num::Float(f)) => Ok(f32_bits(f as f32)),
            (Ty::F32, Num::Int(i)) => Ok(f32_bits(i as f32)),
            (_, Num::Float(f)) => Err(self.err(
                loc,
                format!("found {f} but a {} value must be an integer", ty.name()),
            )),
            (Ty::U32 | Ty::I32, Num::Int(i)) => {
                if (i32::MIN as i64..=u32::MAX as i64).contains(&i) {
                    Ok(i as u64 & 0xFFFF_FFFF)
                } else {
                    Err(self.err(
                        loc,
                        format!("{i} does not fit 32 bits (a {} value)", ty.name()),
                    ))
                }
            }
            (_, Num::Int(i)) => Ok(i as u64),
        }
    }

    fn init(&self, init: &InitSyn, elem: Ty, len: u64, loc: SrcLoc) -> R<Init> {
        Ok(match init {
            InitSyn::Zero => Init::Zero,
            InitSyn::Fill(e) => {
                let v = self.eval(e)?;
                Init::Fill(self.typed(v, elem, e.loc())?)
            }
            InitSyn::Iota if elem == Ty::F32 => {
                if len > 1 << 24 {
                    return Err(self.err(loc, "an f32 iota is exact only up to 2^24 elements"));
                }
                Init::Values((0..len).map(|i| f32_bits(i as f32)).collect())
            }
            InitSyn::Iota => Init::Iota,
            InitSyn::Random { seed, modulo } => {
                if elem == Ty::F32 {
                    return Err(self.err(
                        loc,
                        "random(...) fills integer buffers; use an integer element type",
                    ));
                }
                let s = self.int(seed, "a seed")?;
                let m = self.int(modulo, "a modulus")?;
                if m < 0 {
                    return Err(self.err(
                        modulo.loc(),
                        format!("random modulus {m}: must be at least 0 (0 means any value)"),
                    ));
                }
                Init::Random {
                    seed: s as u64,
                    modulo: m as u64,
                }
            }
            InitSyn::Values(vs) => {
                if vs.len() as u64 > len {
                    return Err(self.err(
                        loc,
                        format!(
                            "found {} initial values but the buffer has {len} elements",
                            vs.len()
                        ),
                    ));
                }
                let mut out = Vec::with_capacity(vs.len());
                for e in vs {
                    let v = self.eval(e)?;
                    out.push(self.typed(v, elem, e.loc())?);
                }
                Init::Values(out)
            }
        })
    }

    // ---- registers ----

    fn new_reg(&mut self, name: &str, kind: RegKind, loc: SrcLoc) -> R<Reg> {
        if is_special(name) {
            return Err(self.err(
                loc,
                format!("`%{name}` is a special register and cannot be declared"),
            ));
        }
        if self.regs.contains_key(name) {
            return Err(self.err(loc, format!("register `%{name}` is declared twice")));
        }
        let r = self.reg_names.len() as Reg;
        self.reg_names.push(format!("%{name}"));
        self.regs.insert(name.to_string(), (r, kind));
        Ok(r)
    }

    fn scratch(&mut self) -> Reg {
        *self.scratch.get_or_insert_with(|| {
            self.reg_names.push("%%addr".into());
            (self.reg_names.len() - 1) as Reg
        })
    }

    fn unknown_reg(&self, name: &str, loc: SrcLoc) -> KernelError {
        self.err(
            loc,
            format!("unknown register `%{name}`: declare it with `reg %{name}` (or `arg %{name}: TYPE = VALUE`)"),
        )
    }

    /// A register read as a source.
    fn read_reg(&self, name: &str, dim: &Option<String>, loc: SrcLoc) -> R<Reg> {
        if let Some((r, _)) = self.regs.get(name) {
            if dim.is_some() {
                return Err(self.err(loc, format!("register `%{name}` has no dimensions")));
            }
            return Ok(*r);
        }
        if is_special(name) {
            return Err(self.err(
                loc,
                format!("special register `%{name}` can only be read by `mov` (e.g. `mov.u32 %i, %{name}`)"),
            ));
        }
        Err(self.unknown_reg(name, loc))
    }

    fn dst(&self, op: &Operand) -> R<Reg> {
        match op {
            Operand::Reg { name, dim, loc } => match self.regs.get(name) {
                Some((_, RegKind::Arg)) => Err(self.err(
                    *loc,
                    format!("argument `%{name}` is read-only: copy it into a register with `mov`"),
                )),
                Some((r, RegKind::Declared)) if dim.is_none() => Ok(*r),
                Some(_) => Err(self.err(*loc, format!("register `%{name}` has no dimensions"))),
                None if is_special(name) => {
                    Err(self.err(*loc, format!("special register `%{name}` is read-only")))
                }
                None => Err(self.unknown_reg(name, *loc)),
            },
            _ => Err(self.err(
                op.loc(),
                format!("found {} but expected a destination register", describe(op)),
            )),
        }
    }

    /// A source operand of type `ty`: a register, a buffer's address, a local array's offset or a
    /// constant.
    fn src(&self, op: &Operand, ty: Ty) -> R<ir::Operand> {
        match op {
            Operand::Reg { name, dim, loc } => Ok(ir::Operand::Reg(self.read_reg(name, dim, *loc)?)),
            Operand::Expr(Expr::Name(n, loc), _) if self.constant(n).is_none() => {
                if let Some(i) = self.buffers.iter().position(|b| &b.name == n) {
                    if ty.width() != Width::B64 || ty.is_float() {
                        return Err(self.err(
                            *loc,
                            format!("buffer `{n}` is a 64-bit address: use a u64 operation"),
                        ));
                    }
                    return Ok(ir::Operand::Reg(i as Reg));
                }
                if let Some(a) = self.locals.get(n) {
                    return Ok(ir::Operand::Imm(a.offset as u64));
                }
                Err(self.err(*loc, format!("unknown name `{n}`: expected a register, a buffer, a local array or a parameter")))
            }
            Operand::Expr(e, loc) => {
                let v = self.eval(e)?;
                Ok(ir::Operand::Imm(self.typed(v, ty, *loc)?))
            }
            Operand::Addr(_, loc) | Operand::Indexed(_, _, loc) => Err(self.err(
                *loc,
                "found a memory operand but expected a register or a constant (only ld, st, atom and red access memory)",
            )),
        }
    }

    /// An integer constant operand (a barrier id or thread count).
    fn const_int(&self, op: &Operand, form: &str) -> R<i64> {
        match op {
            Operand::Expr(e, loc) => match self.eval(e)? {
                Num::Int(v) => Ok(v),
                Num::Float(_) => Err(self.err(
                    *loc,
                    format!("found a float but expected an integer: {form}"),
                )),
            },
            _ => Err(self.err(
                op.loc(),
                format!("found {} but expected a constant: {form}", describe(op)),
            )),
        }
    }

    fn src_reg(&self, op: &Operand) -> R<Reg> {
        match op {
            Operand::Reg { name, dim, loc } => self.read_reg(name, dim, *loc),
            _ => Err(self.err(
                op.loc(),
                format!("found {} but expected a register", describe(op)),
            )),
        }
    }

    // ---- instructions ----

    fn emit(&mut self, i: Inst, loc: SrcLoc) {
        self.insts.push(i);
        self.locs.push(loc);
    }

    fn quals(&self, i: &InstSyn, a: Allow) -> R<Quals> {
        let mut q = Quals::default();
        let m = &i.mnemonic;
        for (w, loc) in &i.quals {
            let dup = |what: &str| {
                Err(self.err(*loc, format!("found `.{w}` but `{m}` already has {what}")))
            };
            if a.ty > 0 {
                if let Some(t) = parse_ty(w) {
                    if q.tys.len() as u8 == a.ty {
                        return dup("its type");
                    }
                    q.tys.push((t, *loc));
                    continue;
                }
            }
            if a.cas && (w == "weak" || w == "strong") {
                if q.weak.is_some() {
                    return dup("a strength");
                }
                q.weak = Some(w == "weak");
                continue;
            }
            if a.cas {
                if let Some(o) = w.strip_prefix("fail_").and_then(OrdWord::parse) {
                    if q.fail.is_some() {
                        return dup("a failure order");
                    }
                    q.fail = Some((o, *loc));
                    continue;
                }
            }
            if a.order {
                if let Some(o) = OrdWord::parse(w) {
                    if q.order.is_some() {
                        return dup("an order");
                    }
                    q.order = Some((o, *loc));
                    continue;
                }
            }
            if a.space || a.spaces {
                let sp = match w.as_str() {
                    "global" => Some(Space::Global),
                    "local" | "shared" => Some(Space::Local),
                    _ => None,
                };
                if let Some(sp) = sp {
                    if a.spaces {
                        match sp {
                            Space::Global => q.spaces.global = true,
                            Space::Local => q.spaces.local = true,
                        }
                    } else {
                        if q.space.is_some() {
                            return dup("a memory space");
                        }
                        q.space = Some((sp, *loc));
                    }
                    continue;
                }
            }
            if a.scope {
                if let Some(s) = Scope::parse(w) {
                    if q.scope.is_some() {
                        return dup("a scope");
                    }
                    q.scope = Some((s, *loc));
                    continue;
                }
            }
            if a.cmp {
                let c = match w.as_str() {
                    "eq" => Some(CmpOp::Eq),
                    "ne" => Some(CmpOp::Ne),
                    "lt" => Some(CmpOp::Lt),
                    "le" => Some(CmpOp::Le),
                    "gt" => Some(CmpOp::Gt),
                    "ge" => Some(CmpOp::Ge),
                    _ => None,
                };
                if let Some(c) = c {
                    if q.cmp.is_some() {
                        return dup("a comparison");
                    }
                    q.cmp = Some(c);
                    continue;
                }
            }
            if a.atom_op {
                let o = match w.as_str() {
                    "add" => Some(AtomOp::Rmw(RmwOp::Add)),
                    "sub" => Some(AtomOp::Rmw(RmwOp::Sub)),
                    "and" => Some(AtomOp::Rmw(RmwOp::And)),
                    "or" => Some(AtomOp::Rmw(RmwOp::Or)),
                    "xor" => Some(AtomOp::Rmw(RmwOp::Xor)),
                    "min" => Some(AtomOp::Rmw(RmwOp::Min)),
                    "max" => Some(AtomOp::Rmw(RmwOp::Max)),
                    "exch" => Some(AtomOp::Rmw(RmwOp::Exch)),
                    "inc" => Some(AtomOp::Rmw(RmwOp::Inc)),
                    "dec" => Some(AtomOp::Rmw(RmwOp::Dec)),
                    "cas" => Some(AtomOp::Cas),
                    _ => None,
                };
                if let Some(o) = o {
                    if q.op.is_some() {
                        return dup("an operation");
                    }
                    q.op = Some((o, *loc));
                    continue;
                }
            }
            let mut expected = Vec::new();
            if a.ty > 0 {
                expected.push("a type (u32, i32, u64, i64, f32)");
            }
            if a.cmp {
                expected.push("a comparison (eq, ne, lt, le, gt, ge)");
            }
            if a.atom_op {
                expected
                    .push("an operation (add, sub, and, or, xor, min, max, exch, inc, dec, cas)");
            }
            if a.order {
                expected.push("an order (plain, relaxed, acquire, release, acq_rel, seq_cst)");
            }
            if a.scope {
                expected.push(
                    "a scope (work_item, sub_group, work_group, device, system or cta, gpu, sys)",
                );
            }
            if a.space || a.spaces {
                expected.push("a memory space (global, local)");
            }
            if a.cas {
                expected.push("a compare-exchange flag (weak, strong, fail_relaxed, fail_acquire, fail_seq_cst)");
            }
            return Err(self.err(
                *loc,
                if expected.is_empty() {
                    format!("found `.{w}` but `{m}` takes no qualifiers")
                } else {
                    format!("found `.{w}` but `{m}` takes {}", expected.join(", "))
                },
            ));
        }
        if (a.ty as usize) > q.tys.len() {
            return Err(self.err(
                i.loc,
                format!(
                    "`{m}` needs {} (like `{m}{}`)",
                    if a.ty == 2 {
                        "a destination and a source type"
                    } else {
                        "a type: u32, i32, u64, i64 or f32"
                    },
                    if a.ty == 2 { ".f32.u32" } else { ".u32" }
                ),
            ));
        }
        Ok(q)
    }

    fn operands<'o>(&self, i: &'o InstSyn, n: usize, form: &str) -> R<&'o [Operand]> {
        if i.operands.len() != n {
            let at = i.operands.get(n).map(|o| o.loc()).unwrap_or(i.loc);
            return Err(self.err(
                at,
                format!(
                    "found {} operand{} but expected {n}: {form}",
                    i.operands.len(),
                    if i.operands.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(&i.operands)
    }

    fn inst(&mut self, i: &InstSyn) -> R<()> {
        let m = i.mnemonic.as_str();
        let loc = i.loc;
        if i.pred.is_some() && m != "bra" {
            return Err(self.err(
                loc,
                format!("only `bra` can be predicated, not `{m}`: branch around the instruction instead"),
            ));
        }
        let ty1 = Allow {
            ty: 1,
            ..Allow::default()
        };
        let alu = match m {
            "add" => Some(AluOp::Add),
            "sub" => Some(AluOp::Sub),
            "mul" => Some(AluOp::Mul),
            "div" => Some(AluOp::Div),
            "rem" => Some(AluOp::Rem),
            "min" => Some(AluOp::Min),
            "max" => Some(AluOp::Max),
            "and" => Some(AluOp::And),
            "or" => Some(AluOp::Or),
            "xor" => Some(AluOp::Xor),
            "shl" => Some(AluOp::Shl),
            "shr" => Some(AluOp::Shr),
            _ => None,
        };
        if let Some(op) = alu {
            let q = self.quals(i, ty1)?;
            let ty = q.tys[0].0;
            if ty.is_float()
                && matches!(
                    op,
                    AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Shl | AluOp::Shr
                )
            {
                return Err(self.err(
                    q.tys[0].1,
                    format!("`{m}` is a bit operation: use an integer type, not f32"),
                ));
            }
            let o = self.operands(i, 3, &format!("`{m}.{} %dst, a, b`", ty.name()))?;
            let inst = Inst::Alu {
                op,
                ty,
                dst: self.dst(&o[0])?,
                a: self.src(&o[1], ty)?,
                b: self.src(&o[2], ty)?,
            };
            self.emit(inst, loc);
            return Ok(());
        }
        match m {
            "neg" | "not" => {
                let q = self.quals(i, ty1)?;
                let (ty, tloc) = q.tys[0];
                let o = self.operands(i, 2, &format!("`{m}.{} %dst, a`", ty.name()))?;
                let (dst, a) = (self.dst(&o[0])?, self.src(&o[1], ty)?);
                let all = if ty.width() == Width::B32 {
                    0xFFFF_FFFF
                } else {
                    u64::MAX
                };
                let inst = match (m, ty.is_float()) {
                    ("not", true) => {
                        return Err(self.err(tloc, "`not` is a bit operation: use an integer type"))
                    }
                    ("not", false) => Inst::Alu {
                        op: AluOp::Xor,
                        ty,
                        dst,
                        a,
                        b: ir::Operand::Imm(all),
                    },
                    // -x as x * -1 keeps the sign of zero right.
                    (_, true) => Inst::Alu {
                        op: AluOp::Mul,
                        ty,
                        dst,
                        a,
                        b: ir::Operand::Imm(f32_bits(-1.0)),
                    },
                    (_, false) => Inst::Alu {
                        op: AluOp::Sub,
                        ty,
                        dst,
                        a: ir::Operand::Imm(0),
                        b: a,
                    },
                };
                self.emit(inst, loc);
            }
            "mov" => {
                let q = self.quals(i, ty1)?;
                let ty = q.tys[0].0;
                let o = self.operands(i, 2, &format!("`mov.{} %dst, source`", ty.name()))?;
                let dst = self.dst(&o[0])?;
                if let Operand::Reg { name, dim, loc: rl } = &o[1] {
                    if !self.regs.contains_key(name) {
                        let d = match dim.as_deref() {
                            None => None,
                            Some("x") => Some(Dim::X),
                            Some("y") => Some(Dim::Y),
                            Some("z") => Some(Dim::Z),
                            Some(other) => {
                                return Err(self.err(
                                    *rl,
                                    format!("found dimension `.{other}` but expected .x, .y or .z"),
                                ))
                            }
                        };
                        let which = special(name, d).ok_or_else(|| {
                            if d.is_some() && is_special(name) {
                                self.err(*rl, format!("special register `%{name}` has no dimensions"))
                            } else {
                                self.unknown_reg(name, *rl)
                            }
                        })?;
                        self.emit(Inst::ReadSpecial { dst, which }, loc);
                        return Ok(());
                    }
                }
                let src = self.src(&o[1], ty)?;
                self.emit(Inst::Mov { dst, src }, loc);
            }
            "setp" => {
                let q = self.quals(
                    i,
                    Allow {
                        ty: 1,
                        cmp: true,
                        ..Allow::default()
                    },
                )?;
                let ty = q.tys[0].0;
                let Some(op) = q.cmp else {
                    return Err(self.err(
                        loc,
                        "`setp` needs a comparison: eq, ne, lt, le, gt or ge (like `setp.lt.u32`)",
                    ));
                };
                let o = self.operands(i, 3, "`setp.CMP.TYPE %p, a, b`")?;
                let inst = Inst::Cmp {
                    op,
                    ty,
                    dst: self.dst(&o[0])?,
                    a: self.src(&o[1], ty)?,
                    b: self.src(&o[2], ty)?,
                };
                self.emit(inst, loc);
            }
            "selp" => {
                let q = self.quals(i, ty1)?;
                let ty = q.tys[0].0;
                let o = self.operands(i, 4, "`selp.TYPE %dst, a, b, %p` (a when %p is non-zero)")?;
                let inst = Inst::Select {
                    dst: self.dst(&o[0])?,
                    a: self.src(&o[1], ty)?,
                    b: self.src(&o[2], ty)?,
                    cond: self.src_reg(&o[3])?,
                };
                self.emit(inst, loc);
            }
            "cvt" => {
                let q = self.quals(
                    i,
                    Allow {
                        ty: 2,
                        ..Allow::default()
                    },
                )?;
                let (to, from) = (q.tys[0].0, q.tys[1].0);
                let o = self.operands(i, 2, "`cvt.TO.FROM %dst, %src`")?;
                let inst = Inst::Cvt {
                    dst: self.dst(&o[0])?,
                    src: self.src_reg(&o[1])?,
                    from,
                    to,
                };
                self.emit(inst, loc);
            }
            "bra" => {
                self.quals(i, Allow::default())?;
                let o = self.operands(i, 1, "`bra LABEL`")?;
                let (label, lloc) = match &o[0] {
                    Operand::Expr(Expr::Name(n, l), _) => (n.clone(), *l),
                    other => {
                        return Err(self.err(
                            other.loc(),
                            format!("found {} but expected a label", describe(other)),
                        ))
                    }
                };
                let cond = match &i.pred {
                    None => None,
                    Some((r, nz, ploc)) => Some((self.read_reg(r, &None, *ploc)?, *nz)),
                };
                self.fixups.push((self.insts.len(), label, lloc));
                self.emit(Inst::Branch { target: 0, cond }, loc);
            }
            "exit" | "ret" => {
                self.quals(i, Allow::default())?;
                self.operands(i, 0, &format!("`{m}` takes no operands"))?;
                self.emit(Inst::Exit, loc);
            }
            "ld" | "st" => self.load_store(i)?,
            "atom" | "red" => self.atomic(i)?,
            "fence" => {
                let q = self.quals(
                    i,
                    Allow {
                        order: true,
                        scope: true,
                        spaces: true,
                        ..Allow::default()
                    },
                )?;
                self.operands(i, 0, "`fence.ORDER.SCOPE` takes no operands")?;
                let ord = match q.order {
                    Some((OrdWord::Acquire, _)) => FenceOrd::Acquire,
                    Some((OrdWord::Release, _)) => FenceOrd::Release,
                    Some((OrdWord::AcqRel, _)) => FenceOrd::AcqRel,
                    Some((OrdWord::SeqCst, _)) => FenceOrd::SeqCst,
                    Some((o, oloc)) => {
                        return Err(self.err(
                            oloc,
                            format!(
                                "found order `{}` but a fence takes acquire, release, acq_rel or seq_cst (a {} fence orders nothing)",
                                o.name(),
                                o.name()
                            ),
                        ))
                    }
                    None => {
                        return Err(self.err(
                            loc,
                            "`fence` needs an order: acquire, release, acq_rel or seq_cst (like `fence.acq_rel.device`)",
                        ))
                    }
                };
                let spaces = if q.spaces == SpaceSet::NONE {
                    SpaceSet::BOTH
                } else {
                    q.spaces
                };
                let scope = q.scope.map(|s| s.0).unwrap_or(Scope::Device);
                self.emit(Inst::Fence { ord, scope, spaces }, loc);
            }
            "barrier" | "bar" | "sub_group_barrier" => self.barrier(i)?,
            _ => {
                return Err(self.err(
                    loc,
                    format!(
                        "found `{m}` but expected an instruction: add sub mul div rem min max and or xor shl shr neg not \
                         mov setp selp cvt bra exit ld st atom red fence barrier sub_group_barrier"
                    ),
                ))
            }
        }
        Ok(())
    }

    fn barrier(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let m = i.mnemonic.as_str();
        if m == "bar" {
            // PTX spellings: bar.sync{ a{, b}} and bar.arrive a, b (work-group barriers 0-15 with an
            // optional thread count), bar.warp.sync (sub-group).
            let words: Vec<&str> = i.quals.iter().map(|(w, _)| w.as_str()).collect();
            let (kind, scope) = match words.as_slice() {
                ["sync"] | ["cta", "sync"] | ["arrive"] | ["cta", "arrive"] => {
                    let arrive = words.last() == Some(&"arrive");
                    let form = if arrive {
                        "`bar.arrive a, b`: a barrier id 0-15 and a thread count"
                    } else {
                        "`bar.sync`, `bar.sync a` or `bar.sync a, b`: a barrier id 0-15 and a thread count"
                    };
                    if i.operands.len() > 2 || (arrive && i.operands.len() != 2) {
                        self.operands(i, 2, form)?;
                    }
                    let id = match i.operands.first() {
                        None => 0,
                        Some(o) => {
                            let v = self.const_int(o, form)?;
                            if !(0..i64::from(BARRIERS_PER_GROUP)).contains(&v) {
                                return Err(self.err(
                                    o.loc(),
                                    format!("found barrier id {v} but expected 0 to 15 (16 barriers per work-group)"),
                                ));
                            }
                            v as u8
                        }
                    };
                    let threads = match i.operands.get(1) {
                        None => None,
                        Some(o) => {
                            let v = self.const_int(o, form)?;
                            if v <= 0 || v % 32 != 0 || v > i64::from(u32::MAX) {
                                return Err(self.err(
                                    o.loc(),
                                    format!("found thread count {v} but expected a positive multiple of the warp size (32)"),
                                ));
                            }
                            Some(v as u32)
                        }
                    };
                    let kind = if id == 0 && threads.is_none() && !arrive {
                        BarrierKind::WorkGroup
                    } else {
                        BarrierKind::Named(CtaBarrier {
                            id,
                            threads,
                            op: if arrive { BarrierOp::Arrive } else { BarrierOp::Sync },
                        })
                    };
                    (kind, Scope::WorkGroup)
                }
                ["warp", "sync"] => {
                    self.operands(i, 0, "`bar.warp.sync` takes no operands")?;
                    (BarrierKind::SubGroup, Scope::SubGroup)
                }
                _ => return Err(self.err(
                    loc,
                    "found `bar` with other qualifiers but expected `bar.sync`, `bar.arrive` or `bar.warp.sync`",
                )),
            };
            self.emit(
                Inst::Barrier {
                    kind,
                    spaces: SpaceSet::BOTH,
                    scope,
                },
                loc,
            );
            return Ok(());
        }
        let wg = m == "barrier";
        let q = self.quals(
            i,
            Allow {
                spaces: true,
                scope: wg,
                ..Allow::default()
            },
        )?;
        self.operands(i, 0, &format!("`{m}` takes no operands"))?;
        let spaces = if q.spaces == SpaceSet::NONE {
            SpaceSet::BOTH
        } else {
            q.spaces
        };
        if wg {
            // OpenCL 2.0 `work_group_barrier(flags, scope)`: the rule every front end shares.
            let (scope, sloc) = q.scope.unwrap_or((Scope::WorkGroup, loc));
            let inst = crate::barrier::work_group_barrier(spaces, scope)
                .map_err(|e| self.err(sloc, e.to_string()))?;
            self.emit(inst, loc);
            return Ok(());
        }
        self.emit(
            Inst::Barrier {
                kind: BarrierKind::SubGroup,
                spaces,
                scope: Scope::SubGroup,
            },
            loc,
        );
        Ok(())
    }

    fn load_store(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let is_load = i.mnemonic == "ld";
        let q = self.quals(
            i,
            Allow {
                ty: 1,
                order: true,
                scope: true,
                space: true,
                ..Allow::default()
            },
        )?;
        let ty = q.tys[0].0;
        let word = q.order.map(|o| o.0).unwrap_or(OrdWord::Plain);
        if word == OrdWord::Plain {
            if let Some((s, sloc)) = q.scope {
                return Err(self.err(
                    sloc,
                    format!(
                        "found scope `{s}` on a plain (non-atomic) access: add an order (like `.relaxed`) to make it atomic"
                    ),
                ));
            }
        }
        let bad = |what: &str, legal: &str| {
            let (o, oloc) = q.order.expect("a non-plain order was given");
            Err(self.err(
                oloc,
                format!("found order `{}` but {what} takes {legal}", o.name()),
            ))
        };
        if is_load {
            let ord = match word {
                OrdWord::Plain => LoadOrd::Plain,
                OrdWord::Relaxed => LoadOrd::Relaxed,
                OrdWord::Acquire => LoadOrd::Acquire,
                OrdWord::SeqCst => LoadOrd::SeqCst,
                OrdWord::Release | OrdWord::AcqRel => {
                    return bad(
                        "a load",
                        "plain, relaxed, acquire or seq_cst (a load cannot release)",
                    )
                }
            };
            let o = self.operands(i, 2, "`ld.ORDER.SCOPE.TYPE %dst, ADDRESS`")?;
            let dst = self.dst(&o[0])?;
            let (space, addr) = self.address(&o[1], q.space, ty)?;
            let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
            self.emit(
                Inst::Load {
                    dst,
                    space,
                    addr,
                    ty,
                    ord,
                    scope,
                },
                loc,
            );
        } else {
            let ord = match word {
                OrdWord::Plain => StoreOrd::Plain,
                OrdWord::Relaxed => StoreOrd::Relaxed,
                OrdWord::Release => StoreOrd::Release,
                OrdWord::SeqCst => StoreOrd::SeqCst,
                OrdWord::Acquire | OrdWord::AcqRel => {
                    return bad(
                        "a store",
                        "plain, relaxed, release or seq_cst (a store cannot acquire)",
                    )
                }
            };
            let o = self.operands(i, 2, "`st.ORDER.SCOPE.TYPE ADDRESS, value`")?;
            let src = self.src(&o[1], ty)?;
            let (space, addr) = self.address(&o[0], q.space, ty)?;
            let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
            self.emit(
                Inst::Store {
                    space,
                    addr,
                    src,
                    ty,
                    ord,
                    scope,
                },
                loc,
            );
        }
        Ok(())
    }

    fn atomic(&mut self, i: &InstSyn) -> R<()> {
        let loc = i.loc;
        let m = i.mnemonic.as_str();
        let returning = m == "atom";
        let q = self.quals(
            i,
            Allow {
                ty: 1,
                order: true,
                scope: true,
                space: true,
                atom_op: true,
                cas: true,
                ..Allow::default()
            },
        )?;
        let (ty, tloc) = q.tys[0];
        let Some((op, oloc)) = q.op else {
            return Err(self.err(
                loc,
                format!("`{m}` needs an operation: add, sub, and, or, xor, min, max, exch, inc, dec or cas (like `{m}.add.u32`)"),
            ));
        };
        let ord = match q.order.map(|o| o.0).unwrap_or(OrdWord::Relaxed) {
            OrdWord::Plain => {
                return Err(self.err(
                    q.order.expect("given").1,
                    "found order `plain` but atomics take relaxed, acquire, release, acq_rel or seq_cst",
                ))
            }
            OrdWord::Relaxed => RmwOrd::Relaxed,
            OrdWord::Acquire => RmwOrd::Acquire,
            OrdWord::Release => RmwOrd::Release,
            OrdWord::AcqRel => RmwOrd::AcqRel,
            OrdWord::SeqCst => RmwOrd::SeqCst,
        };
        if op != AtomOp::Cas {
            if let Some(w) = q.weak {
                return Err(self.err(
                    oloc,
                    format!(
                        "found `.{}` but only `cas` is weak or strong",
                        if w { "weak" } else { "strong" }
                    ),
                ));
            }
            if let Some((_, floc)) = q.fail {
                return Err(self.err(floc, "a failure order belongs to `cas` only"));
            }
        }
        if let AtomOp::Rmw(r) = op {
            let name = i
                .quals
                .iter()
                .find(|(_, l)| *l == oloc)
                .map(|(w, _)| w.as_str())
                .unwrap_or("?");
            let ok = match r {
                RmwOp::Add | RmwOp::Sub | RmwOp::Min | RmwOp::Max | RmwOp::Exch => true,
                RmwOp::And | RmwOp::Or | RmwOp::Xor => !ty.is_float(),
                RmwOp::Inc | RmwOp::Dec => matches!(ty, Ty::U32 | Ty::U64),
            };
            if !ok {
                let legal = if matches!(r, RmwOp::Inc | RmwOp::Dec) {
                    "u32 or u64"
                } else {
                    "an integer type"
                };
                return Err(self.err(
                    tloc,
                    format!(
                        "found type `{}` but atomic `{name}` takes {legal}",
                        ty.name()
                    ),
                ));
            }
        }
        match op {
            AtomOp::Rmw(rmw) => {
                let (dst, o) = if returning {
                    let o =
                        self.operands(i, 3, "`atom.OP.ORDER.SCOPE.TYPE %old, ADDRESS, operand`")?;
                    (Some(self.dst(&o[0])?), &o[1..])
                } else {
                    let o = self.operands(i, 2, "`red.OP.ORDER.SCOPE.TYPE ADDRESS, operand`")?;
                    (None, o)
                };
                let operand = self.src(&o[1], ty)?;
                let (space, addr) = self.address(&o[0], q.space, ty)?;
                let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
                self.emit(
                    Inst::Rmw {
                        dst,
                        op: rmw,
                        space,
                        addr,
                        operand,
                        ty,
                        ord,
                        scope,
                    },
                    loc,
                );
            }
            AtomOp::Cas => {
                if !returning {
                    return Err(self.err(
                        oloc,
                        "`red` has no cas form (a compare-exchange is useless without its result): use `atom.cas`",
                    ));
                }
                let failure = match q.fail {
                    None => match ord {
                        // C++: the failure order defaults to the success order without its release part.
                        RmwOrd::Relaxed | RmwOrd::Release => LoadOrd::Relaxed,
                        RmwOrd::Acquire | RmwOrd::AcqRel => LoadOrd::Acquire,
                        RmwOrd::SeqCst => LoadOrd::SeqCst,
                    },
                    Some((OrdWord::Relaxed, _)) => LoadOrd::Relaxed,
                    Some((OrdWord::Acquire, _)) => LoadOrd::Acquire,
                    Some((OrdWord::SeqCst, _)) => LoadOrd::SeqCst,
                    Some((o, floc)) => {
                        return Err(self.err(
                            floc,
                            format!(
                                "found failure order `{}` but a failed compare-exchange is a load: fail_relaxed, fail_acquire or fail_seq_cst",
                                o.name()
                            ),
                        ))
                    }
                };
                let o = self.operands(
                    i,
                    4,
                    "`atom.cas.ORDER.SCOPE.TYPE %old, ADDRESS, expected, desired`",
                )?;
                let dst = Some(self.dst(&o[0])?);
                let expected = self.src(&o[2], ty)?;
                let desired = self.src(&o[3], ty)?;
                let (space, addr) = self.address(&o[1], q.space, ty)?;
                let scope = q.scope.map(|s| s.0).unwrap_or(default_scope(space));
                self.emit(
                    Inst::Cas {
                        dst,
                        space,
                        addr,
                        expected,
                        desired,
                        ty,
                        success: ord,
                        failure,
                        scope,
                        weak: q.weak.unwrap_or(false),
                    },
                    loc,
                );
            }
        }
        Ok(())
    }

    /// A memory operand; may emit address arithmetic into the scratch register.
    fn address(
        &mut self,
        op: &Operand,
        qspace: Option<(Space, SrcLoc)>,
        ty: Ty,
    ) -> R<(Space, Address)> {
        let check_space = |l: &Self, actual: Space, what: &str| -> R<Space> {
            match qspace {
                Some((s, sloc)) if s != actual => Err(l.err(
                    sloc,
                    format!(
                        "found `.{}` but {what} is in {} memory",
                        s.name(),
                        actual.name()
                    ),
                )),
                _ => Ok(actual),
            }
        };
        match op {
            Operand::Addr(Bracket { base, offset }, loc) => {
                let off = match offset {
                    Some(e) => self.int(e, "an address offset")?,
                    None => 0,
                };
                match base {
                    BaseSyn::Reg(name, rloc) => {
                        let r = self.read_reg(name, &None, *rloc)?;
                        let space = qspace.map(|s| s.0).unwrap_or(Space::Global);
                        Ok((
                            space,
                            Address {
                                base: ir::Operand::Reg(r),
                                offset: off,
                            },
                        ))
                    }
                    BaseSyn::Name(n, nloc) if self.constant(n).is_none() => {
                        if let Some(b) = self.buffers.iter().position(|b| &b.name == n) {
                            let space = check_space(self, Space::Global, &format!("`{n}`"))?;
                            return Ok((
                                space,
                                Address {
                                    base: ir::Operand::Reg(b as Reg),
                                    offset: off,
                                },
                            ));
                        }
                        if let Some(a) = self.locals.get(n) {
                            let space = check_space(self, Space::Local, &format!("`{n}`"))?;
                            return Ok((
                                space,
                                Address {
                                    base: ir::Operand::Imm(a.offset as u64),
                                    offset: off,
                                },
                            ));
                        }
                        Err(self.err(
                            *nloc,
                            format!("unknown name `{n}`: expected a buffer, a local array, a parameter or a register"),
                        ))
                    }
                    BaseSyn::Name(n, _) => {
                        let v = self.constant(n).expect("checked");
                        self.constant_address(v.saturating_add(off), qspace, *loc)
                    }
                    BaseSyn::None => self.constant_address(off, qspace, *loc),
                }
            }
            Operand::Indexed(name, Bracket { base, offset }, loc) => {
                let (space, esize, len, local_off, ety) =
                    if let Some(b) = self.buffers.iter().position(|b| &b.name == name) {
                        let bf = &self.buffers[b];
                        (Space::Global, bf.elem.width().bytes(), bf.len, None, bf.elem)
                    } else if let Some(a) = self.locals.get(name) {
                        (Space::Local, a.ty.width().bytes(), a.len, Some(a.offset), a.ty)
                    } else {
                        let mut locals: Vec<&str> = self.locals.keys().map(|s| s.as_str()).collect();
                        locals.sort();
                        let known = self.buffers.iter().map(|b| b.name.as_str()).chain(locals);
                        return Err(self.err(
                            *loc,
                            format!(
                                "unknown buffer or local array `{name}` (declared: {})",
                                listing(known)
                            ),
                        ));
                    };
                check_space(self, space, &format!("`{name}`"))?;
                if ety.width() != ty.width() {
                    return Err(self.err(
                        *loc,
                        format!(
                            "`{name}` holds {} elements but the access is {}: element indexing needs the same width",
                            ety.name(),
                            ty.name()
                        ),
                    ));
                }
                let eoff = match offset {
                    Some(e) => self.int(e, "an index")?,
                    None => 0,
                };
                let idx_reg = match base {
                    BaseSyn::Reg(r, rloc) => Some(self.read_reg(r, &None, *rloc)?),
                    BaseSyn::Name(n, nloc) => {
                        let v = self.constant(n).ok_or_else(|| {
                            self.err(*nloc, format!("found `{n}` but an index is a register or a constant"))
                        })?;
                        return self.constant_element(name, v.saturating_add(eoff), len, esize, local_off, space, *loc);
                    }
                    BaseSyn::None => None,
                };
                let Some(ir_) = idx_reg else {
                    return self.constant_element(name, eoff, len, esize, local_off, space, *loc);
                };
                let byte_off = eoff.saturating_mul(esize as i64);
                let s = self.scratch();
                self.emit(
                    Inst::Alu {
                        op: AluOp::Shl,
                        ty: Ty::U64,
                        dst: s,
                        a: ir::Operand::Reg(ir_),
                        b: ir::Operand::Imm(esize.trailing_zeros() as u64),
                    },
                    *loc,
                );
                let offset = match local_off {
                    Some(lo) => byte_off.saturating_add(lo as i64),
                    None => {
                        let b = self.buffers.iter().position(|b| &b.name == name).expect("found above");
                        self.emit(
                            Inst::Alu {
                                op: AluOp::Add,
                                ty: Ty::U64,
                                dst: s,
                                a: ir::Operand::Reg(s),
                                b: ir::Operand::Reg(b as Reg),
                            },
                            *loc,
                        );
                        byte_off
                    }
                };
                Ok((
                    space,
                    Address {
                        base: ir::Operand::Reg(s),
                        offset,
                    },
                ))
            }
            Operand::Reg { name, loc, .. } => Err(self.err(
                *loc,
                format!("found register `%{name}` but expected an address: `[%{name}]`, `[buffer + 8]` or `buffer[%i]`"),
            )),
            Operand::Expr(_, loc) => Err(self.err(
                *loc,
                "found a value but expected an address: `[%r]`, `[buffer + 8]` or `buffer[%i]`",
            )),
        }
    }

    fn constant_address(
        &self,
        a: i64,
        qspace: Option<(Space, SrcLoc)>,
        loc: SrcLoc,
    ) -> R<(Space, Address)> {
        if qspace.map(|s| s.0) != Some(Space::Local) {
            return Err(self.err(
                loc,
                "found a constant address but global memory is reached through a buffer (`[data + 8]`, `data[%i]`); \
                 a constant address needs `.local`",
            ));
        }
        if a < 0 || a as u64 >= self.local_bytes.max(1) {
            return Err(self.err(
                loc,
                format!(
                    "local address {a} is outside the {} bytes of local memory",
                    self.local_bytes
                ),
            ));
        }
        Ok((
            Space::Local,
            Address {
                base: ir::Operand::Imm(a as u64),
                offset: 0,
            },
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn constant_element(
        &self,
        name: &str,
        idx: i64,
        len: u64,
        esize: u32,
        local_off: Option<u32>,
        space: Space,
        loc: SrcLoc,
    ) -> R<(Space, Address)> {
        if idx < 0 || idx as u64 >= len {
            return Err(self.err(
                loc,
                format!("index {idx} is out of bounds for `{name}` (length {len})"),
            ));
        }
        let bytes = idx as u64 * esize as u64;
        Ok((
            space,
            match local_off {
                Some(lo) => Address {
                    base: ir::Operand::Imm(lo as u64 + bytes),
                    offset: 0,
                },
                None => {
                    let b = self
                        .buffers
                        .iter()
                        .position(|b| b.name == name)
                        .expect("known buffer");
                    Address {
                        base: ir::Operand::Reg(b as Reg),
                        offset: bytes as i64,
                    }
                }
            },
        ))
    }

    // ---- checks ----

    /// A check expression; `folds` holds the variables of the enclosing folds, outermost first.
    fn check_expr(
        &self,
        e: &Expr,
        forall: Option<&str>,
        folds: &mut Vec<String>,
    ) -> R<workload::Expr> {
        use workload::Expr as W;
        let b = |x: W| Box::new(x);
        Ok(match e {
            Expr::Int(v, _) => W::Const(*v),
            Expr::Float(v, _) => W::ConstF(*v),
            Expr::Name(n, loc) => {
                if let Some(d) = folds.iter().rposition(|v| v == n) {
                    W::Bound(d as u32)
                } else if forall == Some(n.as_str()) {
                    W::Var
                } else if n == "global_size" {
                    W::GlobalSize
                } else if n == "num_groups" {
                    W::NumGroups
                } else if n == "group_size" {
                    W::GroupSize
                } else if let Some(v) = self.constant(n) {
                    W::Const(v)
                } else if self.buffers.iter().any(|x| &x.name == n) {
                    return Err(self.err(
                        *loc,
                        format!(
                            "buffer `{n}` needs an index (`{n}[i]`), or use sum({n}) or len({n})"
                        ),
                    ));
                } else {
                    return Err(self.err(
                        *loc,
                        format!("unknown name `{n}` in a check: expected a parameter, a bound variable, a buffer element or global_size, num_groups, group_size"),
                    ));
                }
            }
            Expr::Index(buf, i, loc) => {
                if !self.buffers.iter().any(|x| &x.name == buf) {
                    let m = if self.locals.contains_key(buf) {
                        format!("local array `{buf}` does not outlive its work-group: checks read buffers")
                    } else {
                        self.unknown_buffer(buf)
                    };
                    return Err(self.err(*loc, m));
                }
                W::Elem {
                    buffer: buf.clone(),
                    index: b(self.check_expr(i, forall, folds)?),
                }
            }
            Expr::Call(f, args, loc) => {
                let buf_arg = |l: &Self| -> R<String> {
                    match args.as_slice() {
                        [Expr::Name(n, nloc)] => {
                            if l.buffers.iter().any(|x| &x.name == n) {
                                Ok(n.clone())
                            } else {
                                Err(l.err(*nloc, l.unknown_buffer(n)))
                            }
                        }
                        _ => Err(l.err(*loc, format!("`{f}` takes one buffer name: `{f}(data)`"))),
                    }
                };
                match (f.as_str(), args.len()) {
                    ("sum", 1) => W::Sum(buf_arg(self)?),
                    ("len", 1) => W::Len(buf_arg(self)?),
                    ("min" | "max", 2) => {
                        let x = b(self.check_expr(&args[0], forall, folds)?);
                        let y = b(self.check_expr(&args[1], forall, folds)?);
                        if f == "min" {
                            W::Min(x, y)
                        } else {
                            W::Max(x, y)
                        }
                    }
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found `{f}(...)` with {} arguments but checks offer sum(buffer), len(buffer), min(a, b), max(a, b) and folds `sum|min|max(i = a .. b: expr)`", args.len()),
                        ))
                    }
                }
            }
            Expr::Fold {
                op,
                var,
                from,
                to,
                body,
                loc,
            } => {
                let fop = match op.as_str() {
                    "sum" => FoldOp::Sum,
                    "min" => FoldOp::Min,
                    "max" => FoldOp::Max,
                    _ => {
                        return Err(self.err(
                            *loc,
                            format!("found fold `{op}` but expected sum, min or max"),
                        ))
                    }
                };
                let from = b(self.check_expr(from, forall, folds)?);
                let to = b(self.check_expr(to, forall, folds)?);
                folds.push(var.clone());
                let body = self.check_expr(body, forall, folds);
                folds.pop();
                W::Fold {
                    op: fop,
                    from,
                    to,
                    body: b(body?),
                }
            }
            Expr::Neg(x, _) => W::Sub(b(W::Const(0)), b(self.check_expr(x, forall, folds)?)),
            Expr::Not(x, _) => W::Cmp(
                CheckOp::Eq,
                b(self.check_expr(x, forall, folds)?),
                b(W::Const(0)),
            ),
            Expr::Bin(op, x, y, loc) => {
                let (x, y) = (
                    b(self.check_expr(x, forall, folds)?),
                    b(self.check_expr(y, forall, folds)?),
                );
                match op {
                    BinOp::Add => W::Add(x, y),
                    BinOp::Sub => W::Sub(x, y),
                    BinOp::Mul => W::Mul(x, y),
                    BinOp::Div => W::Div(x, y),
                    BinOp::Rem => W::Rem(x, y),
                    BinOp::Shl => W::Shl(x, y),
                    o if o.is_comparison() => W::Cmp(check_op(*o), x, y),
                    o => {
                        return Err(self.err(
                            *loc,
                            format!("`{}` is not available in checks (they offer + - * / % << and comparisons)", o.symbol()),
                        ))
                    }
                }
            }
        })
    }
}

fn as_f(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn default_scope(space: Space) -> Scope {
    match space {
        Space::Global => Scope::Device,
        Space::Local => Scope::WorkGroup,
    }
}

fn describe(op: &Operand) -> String {
    match op {
        Operand::Reg { name, .. } => format!("register `%{name}`"),
        Operand::Addr(..) | Operand::Indexed(..) => "a memory operand".into(),
        Operand::Expr(Expr::Name(n, _), _) => format!("`{n}`"),
        Operand::Expr(..) => "a constant".into(),
    }
}
