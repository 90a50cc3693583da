//! PTX functions → IR: names bound in nested scopes, registers allocated on first use, operands
//! read (registers, immediates, special registers, variable addresses), instructions dispatched to
//! their concept's file ([`arith`], [`memory`], [`sync`], [`control`], [`warp`]), `.func` calls
//! inlined.
//!
//! Registers: each PTX register is one IR register (64-bit raw bits; a 32-bit value zero-extended,
//! a predicate 0 or 1), allocated when first used so that `%r<1000>` costs only the registers the
//! code touches. Variables: `.shared` ones get work-group-local offsets when first used (after the
//! header's dynamic `local` arrays, which every `.extern .shared` array aliases, as in CUDA);
//! `.global`/`.const` ones become buffers of their name (the header's buffer of that name if it
//! declares one); `.param` ones are registers, one per (offset, width) slot.
//!
//! Predication: `@p bra` is a conditional branch; any other guarded instruction is lowered as a
//! branch around it (one more instruction issued than the hardware's predicated issue: a timing
//! approximation, never a change of what is computed).

pub mod arith;
pub mod control;
pub mod math;
pub mod memory;
pub mod sync;
pub mod types;
pub mod warp;

use super::ast::*;
use crate::cfront::kernel::KernelSink;
use crate::cfront::lower::Sink;
use crate::cfront::CError;
use crate::ir::*;
use crate::workload::{Buffer, Geometry, Param, ParamValue};
use std::collections::HashMap;

pub type R<T> = Result<T, CError>;

/// The most inlined calls nested in one another (a recursive `.func` is refused at this depth).
pub const MAX_INLINE_DEPTH: usize = 16;
/// The most instructions a kernel may lower to (inlining multiplies code).
pub const MAX_CODE: usize = 1 << 20;

/// Where a register's value points, as far as its definitions show (a lattice: `None` below all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prov {
    /// A global (or constant) address: a buffer's, a kernel parameter's, or loaded from memory.
    Global,
    /// A generic address in the shared window (`cvta.shared`).
    SharedGeneric,
    /// A `.shared` state-space offset (a shared variable's address, `cvta.to.shared`).
    SharedOffset,
    /// Definitions disagree: a generic access through it cannot be placed.
    Mixed,
}

fn join(a: Option<Prov>, b: Option<Prov>) -> Option<Prov> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) if x == y => Some(x),
        _ => Some(Prov::Mixed),
    }
}

/// Generic addresses of shared memory: `window + offset` (PTX ISA §6.4.1 "Generic addressing";
/// global buffers lie far below).
pub const SHARED_WINDOW: u64 = 1 << 48;

/// The declared type of a register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegTy(pub String);

#[derive(Debug, Clone)]
pub enum Sym {
    Reg(RegTy),
    /// A `.shared` variable: declaration (offset given when first used).
    Shared(usize),
    /// A `.global` / `.const` variable of the module: its index in the module's variables.
    GlobalVar(usize),
    /// A `.param` variable: its slots.
    Param(usize),
    /// A `.local` variable: refused when used.
    LocalVar,
}

#[derive(Default)]
pub struct Scope {
    pub names: HashMap<String, Sym>,
    /// `%r<N>`: prefix → (type, N).
    pub ranges: HashMap<String, (RegTy, u32)>,
    /// IR registers of this scope's PTX registers, allocated on first use.
    pub alloc: HashMap<String, Reg>,
}

/// One `.param` variable: its IR register per (byte offset, width in bytes).
#[derive(Default, Debug)]
pub struct ParamVar {
    pub slots: Vec<(i64, u32, Reg)>,
    /// An entry parameter: read-only, one slot at offset 0.
    pub entry: bool,
    pub name: String,
}

/// A function being lowered (the entry or an inlined `.func`).
pub struct Frame {
    /// Distinguishes the labels of each inlined copy.
    pub instance: u32,
    /// Where `ret` goes: `None` in the entry (it exits).
    pub ret_label: Option<String>,
    pub depth: usize,
}

/// Everything the lowering of one kernel needs.
pub struct Lower<'m> {
    pub module: &'m Module,
    pub sink: KernelSink,
    pub scopes: Vec<Scope>,
    pub params: Vec<ParamVar>,
    /// Shared variables declared (module or function level): declaration and offset once used.
    pub shared: Vec<(VarDecl, Option<u32>)>,
    /// Dynamic shared arrays (`.extern .shared x[]`) take offset 0: the header's `local` arrays.
    pub dynamic_bytes: u32,
    pub dynamic_names: Vec<String>,
    pub local_bytes: u64,
    /// Module `.global`/`.const` variables used: index → address register.
    pub global_regs: HashMap<usize, Reg>,
    /// Buffers the workload has (from the header), to which used module variables are added.
    pub buffers: Vec<Buffer>,
    /// Launch parameters (registers preloaded by the launch).
    pub launch: Vec<Param>,
    pub geometry: Geometry,
    /// Provenance of the previous pass and of this one.
    pub prov_in: HashMap<Reg, Prov>,
    pub prov: HashMap<Reg, Prov>,
    pub next_instance: u32,
}

impl<'m> Lower<'m> {
    pub fn new(module: &'m Module, geometry: Geometry, buffers: Vec<Buffer>) -> Lower<'m> {
        let mut module_scope = Scope::default();
        let mut shared = Vec::new();
        for (i, v) in module.vars.iter().enumerate() {
            let sym = match v.space {
                StateSpace::Shared => {
                    shared.push((v.clone(), None));
                    Sym::Shared(shared.len() - 1)
                }
                StateSpace::Local => Sym::LocalVar,
                _ => Sym::GlobalVar(i),
            };
            module_scope.names.insert(v.name.clone(), sym);
        }
        Lower {
            module,
            sink: KernelSink::default(),
            scopes: vec![module_scope],
            params: Vec::new(),
            shared,
            dynamic_bytes: 0,
            dynamic_names: Vec::new(),
            local_bytes: 0,
            global_regs: HashMap::new(),
            buffers,
            launch: Vec::new(),
            geometry,
            prov_in: HashMap::new(),
            prov: HashMap::new(),
            next_instance: 0,
        }
    }

    pub fn emit(&mut self, i: Inst, at: SrcLoc) {
        self.sink.emit(i, at);
    }

    pub fn temp(&mut self) -> Reg {
        self.sink.temp(Ty::U64)
    }

    // ---- provenance ----

    pub fn prov_of(&self, o: Operand) -> Option<Prov> {
        match o {
            Operand::Reg(r) => join(self.prov_in.get(&r).copied(), self.prov.get(&r).copied()),
            Operand::Imm(_) => None,
        }
    }

    /// Records that `dst` takes `p` (joined with what its other definitions give).
    pub fn def_prov(&mut self, dst: Reg, p: Option<Prov>) {
        if let Some(p) = p {
            let old = self.prov.get(&dst).copied();
            if let Some(j) = join(old, Some(p)) {
                self.prov.insert(dst, j);
            }
        }
    }

    // ---- names ----

    fn lookup(&self, name: &str) -> Option<(usize, Sym)> {
        for (k, s) in self.scopes.iter().enumerate().rev() {
            if let Some(sym) = s.names.get(name) {
                return Some((k, sym.clone()));
            }
            // `%r12` from `%r<13>`.
            let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 && digits < name.len() {
                let (prefix, n) = name.split_at(name.len() - digits);
                if let Some((ty, count)) = s.ranges.get(prefix) {
                    if n.parse::<u32>().is_ok_and(|n| n < *count)
                        && (n == "0" || !n.starts_with('0'))
                    {
                        return Some((k, Sym::Reg(ty.clone())));
                    }
                }
            }
        }
        None
    }

    /// The IR register of a PTX register name, and its declared type.
    pub fn reg(&mut self, name: &str, at: SrcLoc) -> R<(Reg, RegTy)> {
        match self.lookup(name) {
            Some((k, Sym::Reg(ty))) => {
                if let Some(&r) = self.scopes[k].alloc.get(name) {
                    return Ok((r, ty));
                }
                let r = self.sink.var_reg(name, Ty::U64);
                self.scopes[k].alloc.insert(name.to_string(), r);
                Ok((r, ty))
            }
            Some(_) => Err(CError::new(
                at,
                format!("`{name}` is a variable, not a register"),
            )),
            None => Err(CError::new(
                at,
                format!("unknown register `{name}`: declare it with `.reg`"),
            )),
        }
    }

    pub fn declare(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Reg { ty, names, .. } => {
                let scope = self.scopes.last_mut().expect("a scope");
                for (n, range, _) in names {
                    match range {
                        Some(k) => {
                            scope.ranges.insert(n.clone(), (RegTy(ty.clone()), *k));
                        }
                        None => {
                            scope.names.insert(n.clone(), Sym::Reg(RegTy(ty.clone())));
                        }
                    }
                }
                Ok(())
            }
            Stmt::Var(v) => {
                let sym = match v.space {
                    StateSpace::Shared => {
                        self.shared.push((v.clone(), None));
                        Sym::Shared(self.shared.len() - 1)
                    }
                    StateSpace::Param => {
                        self.params.push(ParamVar {
                            name: v.name.clone(),
                            ..ParamVar::default()
                        });
                        Sym::Param(self.params.len() - 1)
                    }
                    StateSpace::Local => Sym::LocalVar,
                    StateSpace::Global | StateSpace::Const => {
                        return Err(CError::new(v.loc, format!("a `.{}` variable inside a function is not modelled yet: declare it at module level", v.space.name())))
                    }
                };
                self.scopes
                    .last_mut()
                    .expect("a scope")
                    .names
                    .insert(v.name.clone(), sym);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The name's symbol if it is a variable (not a register).
    pub fn var(&self, name: &str) -> Option<Sym> {
        match self.lookup(name) {
            Some((_, Sym::Reg(_))) | None => None,
            Some((_, s)) => Some(s),
        }
    }

    /// The work-group-local offset of shared variable `i`, placed on first use.
    pub fn shared_offset(&mut self, i: usize, at: SrcLoc) -> R<u32> {
        if let Some(o) = self.shared[i].1 {
            return Ok(o);
        }
        let v = self.shared[i].0.clone();
        if v.array == Some(None) || v.is_extern {
            if !self.dynamic_names.contains(&v.name) {
                return Err(CError::new(at, format!("`{}` is a dynamic shared array (`.extern .shared {}[]`): give its size with `local {}: TYPE[LEN]` in the header", v.name, v.name, v.name)));
            }
            self.shared[i].1 = Some(0);
            return Ok(0);
        }
        let elem = memory::type_bytes(&v.ty)
            .ok_or_else(|| CError::new(v.ty_loc, format!("`.{}`: not a variable type", v.ty)))?;
        let bytes = (elem as u64 * v.vector as u64)
            .checked_mul(v.array.flatten().unwrap_or(1))
            .filter(|&b| b <= u32::MAX as u64)
            .ok_or_else(|| CError::new(v.loc, format!("`{}`: more than 4 GiB", v.name)))?;
        let align = v.align.unwrap_or(elem as u64 * v.vector as u64).max(1);
        let base = self.local_bytes.max(self.dynamic_bytes as u64);
        let off = base.div_ceil(align) * align;
        self.local_bytes = off + bytes;
        if self.local_bytes > u32::MAX as u64 {
            return Err(CError::new(v.loc, "shared variables total more than 4 GiB"));
        }
        self.shared[i].1 = Some(off as u32);
        Ok(off as u32)
    }

    // ---- operands ----

    /// A source operand as an IR operand of type `ty` (immediates as the type's bits), and its
    /// provenance.
    pub fn src(&mut self, o: &Opnd, ty: Ty) -> R<(Operand, Option<Prov>)> {
        match o {
            Opnd::Name(n, at) => {
                if n.starts_with('%') && self.lookup(n).is_none() {
                    if let Some(op) = self.special(n, *at)? {
                        return Ok((op, None));
                    }
                }
                if n == "WARP_SZ" {
                    let r = self.temp();
                    self.emit(
                        Inst::ReadSpecial {
                            dst: r,
                            which: Special::SubGroupSize,
                        },
                        *at,
                    );
                    return Ok((Operand::Reg(r), None));
                }
                match self.var(n) {
                    Some(Sym::Shared(i)) => {
                        let off = self.shared_offset(i, *at)?;
                        Ok((Operand::Imm(off as u64), Some(Prov::SharedOffset)))
                    }
                    Some(Sym::GlobalVar(i)) => {
                        let r = self.global_reg(i, *at)?;
                        Ok((Operand::Reg(r), Some(Prov::Global)))
                    }
                    Some(Sym::Param(_)) => Err(CError::new(*at, format!("taking the address of parameter `{n}` is not modelled yet: read it with `ld.param`"))),
                    Some(Sym::LocalVar) => Err(local_refused(*at)),
                    _ => {
                        let (r, _) = self.reg(n, *at)?;
                        Ok((Operand::Reg(r), self.prov_of(Operand::Reg(r))))
                    }
                }
            }
            Opnd::Int(v, at) => Ok((Operand::Imm(imm_bits(*v, ty, *at)?), None)),
            Opnd::Float(f, at) => match ty {
                Ty::F32 => Ok((Operand::Imm(f32_bits(*f as f32)), None)),
                _ => Err(CError::new(
                    *at,
                    format!("a floating literal in a `.{}` instruction", ty.name()),
                )),
            },
            Opnd::F32Bits(b, _) => Ok((Operand::Imm(*b as u64), None)),
            Opnd::F64Bits(_, at) => Err(f64_refused(*at, "a `0d` (f64) literal")),
            other => Err(CError::new(
                other.loc(),
                "expected a register or an immediate",
            )),
        }
    }

    pub fn src_op(&mut self, o: &Opnd, ty: Ty) -> R<Operand> {
        Ok(self.src(o, ty)?.0)
    }

    /// A source that must be in a register (an immediate is moved into a temporary).
    pub fn src_reg(&mut self, o: &Opnd, ty: Ty) -> R<Reg> {
        match self.src_op(o, ty)? {
            Operand::Reg(r) => Ok(r),
            imm => {
                let t = self.temp();
                self.emit(Inst::Mov { dst: t, src: imm }, o.loc());
                Ok(t)
            }
        }
    }

    /// A destination register (`_` gives a temporary nobody reads).
    pub fn dst(&mut self, o: &Opnd) -> R<Reg> {
        match o {
            Opnd::Name(n, at) => {
                if n.starts_with('%') && self.lookup(n).is_none() && is_special(n) {
                    return Err(CError::new(
                        *at,
                        format!("`{n}` is a special register: it cannot be written"),
                    ));
                }
                Ok(self.reg(n, *at)?.0)
            }
            Opnd::Sink(_) => Ok(self.temp()),
            other => Err(CError::new(other.loc(), "expected a destination register")),
        }
    }

    /// A special register read (`None`: not a special register's name).
    fn special(&mut self, n: &str, at: SrcLoc) -> R<Option<Operand>> {
        let (base, comp) = match n.split_once('.') {
            Some((b, c)) => (b, Some(c)),
            None => (n, None),
        };
        let dim = |c: Option<&str>| -> R<Dim> {
            match c {
                Some("x") => Ok(Dim::X),
                Some("y") => Ok(Dim::Y),
                Some("z") => Ok(Dim::Z),
                _ => Err(CError::new(
                    at,
                    format!("`{n}`: expected a component .x, .y or .z"),
                )),
            }
        };
        let g = self.geometry;
        let which = match base {
            "%tid" => Special::LocalId(dim(comp)?),
            "%ctaid" => Special::GroupId(dim(comp)?),
            // The launch fixes the sizes: constants, as the C front ends fold them.
            "%ntid" => return Ok(Some(Operand::Imm(g.group_size[dim(comp)?.index()] as u64))),
            "%nctaid" => return Ok(Some(Operand::Imm(g.groups[dim(comp)?.index()] as u64))),
            "%laneid" => Special::Lane,
            "%warpid" => Special::SubGroupId,
            "%nwarpid" => Special::NumSubGroups,
            "%smid" => Special::SmId,
            "%clock64" => Special::Clock,
            "%lanemask_eq" | "%lanemask_le" | "%lanemask_lt" | "%lanemask_ge" | "%lanemask_gt" => {
                return Ok(Some(warp::lanemask(self, base, at)));
            }
            "%clock" => {
                let r = self.temp();
                self.emit(
                    Inst::ReadSpecial {
                        dst: r,
                        which: Special::Clock,
                    },
                    at,
                );
                self.emit(
                    Inst::Alu {
                        op: AluOp::And,
                        ty: Ty::U64,
                        dst: r,
                        a: Operand::Reg(r),
                        b: Operand::Imm(0xFFFF_FFFF),
                    },
                    at,
                );
                return Ok(Some(Operand::Reg(r)));
            }
            _ if is_special(n) => {
                return Err(CError::new(
                    at,
                    format!(
                        "special register `{n}` is not modelled yet{}",
                        match base {
                            "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi" =>
                                ": the machine has no nanosecond timer",
                            _ => "",
                        }
                    ),
                ))
            }
            _ => return Ok(None),
        };
        let r = self.temp();
        self.emit(Inst::ReadSpecial { dst: r, which }, at);
        Ok(Some(Operand::Reg(r)))
    }

    /// The address register of module variable `i` (its buffer created on first use).
    pub fn global_reg(&mut self, i: usize, at: SrcLoc) -> R<Reg> {
        if let Some(&r) = self.global_regs.get(&i) {
            return Ok(r);
        }
        let v = &self.module.vars[i];
        if !self.buffers.iter().any(|b| b.name == v.name) {
            let b = memory::buffer_of(v, at)?;
            self.buffers.push(b);
        }
        let r = self.sink.var_reg(&v.name, Ty::U64);
        self.launch.push(Param {
            name: v.name.clone(),
            reg: r,
            value: ParamValue::BufferAddr(v.name.clone()),
        });
        self.prov.insert(r, Prov::Global);
        self.global_regs.insert(i, r);
        Ok(r)
    }

    /// The register of a `.param` slot, created on first use.
    pub fn param_slot(
        &mut self,
        p: usize,
        offset: i64,
        width: u32,
        at: SrcLoc,
        write: bool,
    ) -> R<Reg> {
        let pv = &self.params[p];
        if let Some(&(_, w, r)) = pv.slots.iter().find(|s| s.0 == offset) {
            if w != width {
                return Err(CError::new(at, format!("parameter `{}` at offset {offset} is accessed as {} and as {} bytes: reinterpreting a parameter's bytes is not modelled yet", pv.name, w, width)));
            }
            return Ok(r);
        }
        if pv.entry {
            return Err(CError::new(at, format!("kernel parameter `{}` read at byte offset {offset}: by-value structure parameters are not modelled yet", pv.name)));
        }
        if pv
            .slots
            .iter()
            .any(|s| s.0 < offset + width as i64 && offset < s.0 + s.1 as i64)
        {
            return Err(CError::new(
                at,
                format!(
                    "parameter `{}`: overlapping accesses of different widths are not modelled yet",
                    pv.name
                ),
            ));
        }
        let _ = write;
        let name = format!("{}+{offset}", pv.name);
        let r = self.sink.var_reg(&name, Ty::U64);
        self.params[p].slots.push((offset, width, r));
        Ok(r)
    }

    // ---- statements ----

    /// Lowers a function body in a new scope.
    pub fn body(&mut self, stmts: &[Stmt], f: &Frame) -> R<()> {
        self.scopes.push(Scope::default());
        for s in stmts {
            self.declare(s)?;
        }
        for s in stmts {
            if self.sink.insts.len() > MAX_CODE {
                return Err(CError::new(
                    f_loc(s),
                    format!("the kernel lowers to more than {MAX_CODE} instructions"),
                ));
            }
            match s {
                Stmt::Reg { .. } | Stmt::Var(_) => {}
                Stmt::Label(l, at) => {
                    let name = label_name(l, f);
                    self.sink.define_label(&name, *at)?;
                }
                Stmt::Block(b, _) => self.body(b, f)?,
                Stmt::Inst(i) => self.guarded(i, f)?,
            }
        }
        self.scopes.pop();
        Ok(())
    }

    fn guarded(&mut self, i: &Instr, f: &Frame) -> R<()> {
        let Some((p, neg, gat)) = &i.guard else {
            return self.inst(i, f);
        };
        let (pr, _) = self.reg(p, *gat)?;
        if i.op == "bra" {
            return control::branch(self, i, f, Some((pr, !*neg)));
        }
        // Skip the instruction where the guard is false.
        let skip = self.sink.fresh_label();
        self.sink.branch(&skip, Some((pr, *neg)), i.loc);
        self.inst(i, f)?;
        self.sink.define_label(&skip, i.loc)
    }

    fn inst(&mut self, i: &Instr, f: &Frame) -> R<()> {
        match i.op.as_str() {
            "mov" => arith::mov(self, i),
            "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "neg" | "abs"
            | "and" | "or" | "xor" | "not" | "shl" | "shr" | "rcp" | "cnot" => arith::alu(self, i),
            "popc" | "clz" | "brev" | "bfe" | "bfi" | "bfind" | "prmt" | "lop3" | "shf"
            | "dp4a" | "fma" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh"
            | "copysign" => math::inst(self, i),
            "setp" => arith::setp(self, i),
            "selp" => arith::selp(self, i),
            "set" => arith::set(self, i),
            "cvt" => arith::cvt(self, i),
            "ld" | "st" | "ldu" => memory::ld_st(self, i),
            "cvta" => memory::cvta(self, i),
            "atom" | "red" => memory::atom(self, i),
            "prefetch" | "prefetchu" => Ok(()),
            "bar" | "barrier" => sync::barrier(self, i),
            "shfl" | "vote" | "match" | "redux" | "activemask" => warp::inst(self, i),
            "fence" | "membar" => sync::fence(self, i),
            "nanosleep" => sync::nanosleep(self, i),
            "bra" => control::branch(self, i, f, None),
            "call" => control::call(self, i, f),
            "ret" => control::ret(self, i, f),
            "exit" => {
                self.emit(Inst::Exit, i.loc);
                Ok(())
            }
            op => Err(refusal(i, op)),
        }
    }
}

/// The refusal of an instruction outside the modelled set, saying what the machine would need.
fn refusal(i: &Instr, op: &str) -> CError {
    let why = match op {
        "fns" | "dp2a" | "szext" => "this bit operation is not in the IR yet",
        "testp" => "this floating-point function is not in the IR yet",
        "trap" | "brkpt" => "the machine cannot abort a kernel yet",
        "cp" | "mma" | "wmma" | "ldmatrix" | "stmatrix" | "mbarrier" | "cp.async" | "tex"
        | "tld4" | "suld" | "sust" | "txq" | "suq" | "isspacep" | "getctarank" | "elect"
        | "griddepcontrol" | "stackrestore" | "stacksave" | "alloca" | "applypriority"
        | "discard" | "createpolicy" | "multimem" | "tensormap" | "setmaxnreg" | "wgmma"
        | "tcgen05" | "pmevent" | "addc" | "subc" | "mul24" | "mad24" | "sad" | "madc" | "slct"
        | "vabsdiff" | "vadd" | "vsub" | "vmad" | "vmin" | "vmax" | "vset" | "vshl" | "vshr" => {
            "the machine has no model of it"
        }
        _ => "",
    };
    CError::new(
        i.loc,
        if why.is_empty() {
            format!(
                "`{}`: not a PTX instruction this front end knows (not modelled yet)",
                i.spelled()
            )
        } else {
            format!("`{}` is not modelled yet: {why}", i.spelled())
        },
    )
}

fn f_loc(s: &Stmt) -> SrcLoc {
    match s {
        Stmt::Reg { loc, .. } => *loc,
        Stmt::Var(v) => v.loc,
        Stmt::Label(_, l) | Stmt::Block(_, l) => *l,
        Stmt::Inst(i) => i.loc,
    }
}

pub fn label_name(l: &str, f: &Frame) -> String {
    format!("{l}@{}", f.instance)
}

pub fn is_special(n: &str) -> bool {
    let base = n.split('.').next().unwrap_or(n);
    matches!(
        base,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%laneid"
            | "%warpid"
            | "%nwarpid"
            | "%smid"
            | "%nsmid"
            | "%gridid"
            | "%clock"
            | "%clock64"
            | "%clock_hi"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%aggr_smem_size"
            | "%is_explicit_cluster"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
            | "%reserved_smem_offset_0"
            | "%reserved_smem_offset_1"
            | "%current_graph_exec"
    ) || base.starts_with("%envreg")
        || base.starts_with("%pm")
}

/// An integer literal as the bits of `ty` (an f32 instruction reads it as the float of its value).
pub fn imm_bits(v: i128, ty: Ty, at: SrcLoc) -> R<u64> {
    let fits = match ty {
        Ty::U32 | Ty::I32 => (-(1i128 << 31)..(1i128 << 32)).contains(&v),
        Ty::U64 | Ty::I64 => (-(1i128 << 63)..(1i128 << 64)).contains(&v),
        Ty::F32 => return Ok(f32_bits(v as f32)),
    };
    if !fits {
        return Err(CError::new(
            at,
            format!("literal {v} does not fit a .{}", ty.name()),
        ));
    }
    Ok((v as u64) & ty.width().mask())
}

pub fn local_refused(at: SrcLoc) -> CError {
    CError::new(at, "the `.local` state space (per-thread stack memory: local arrays, spills) is not modelled yet: the machine has no per-thread memory; compile with optimisation so that locals live in registers")
}

pub fn f64_refused(at: SrcLoc, what: &str) -> CError {
    CError::new(
        at,
        format!("{what}: f64 is not modelled yet (the IR has no f64 type)"),
    )
}
