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

mod check;
mod eval;
mod inst;
mod memory;
mod quals;

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

    // ---- checks ----
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
