//! Expressions: names, operators, assignments, increments, `&&`/`||`/`?:`, casts, `sizeof`,
//! indexing and dereference, and calls (builtins of the dialect, `__device__` functions inlined,
//! `cuda::atomic_ref` members).

use super::values::{LVal, RVal};
use super::{Binding, Lower, Mode, R};
use crate::cfront::ast::*;
use crate::cfront::types::{PtrTy, STy, VTy};
use crate::cfront::Dialect;
use crate::ir::*;

impl Lower<'_> {
    /// The value of `e`; `hint` is a register the value may be computed into.
    pub(crate) fn rvalue(&mut self, e: &Expr, hint: Option<Reg>) -> R<RVal> {
        self.nested(e.loc, |l| l.rvalue_here(e, hint))
    }

    fn rvalue_here(&mut self, e: &Expr, hint: Option<Reg>) -> R<RVal> {
        let at = e.loc;
        match &e.kind {
            ExprKind::Int(v, t) => Ok(RVal::int(*v as i128, *t)),
            ExprKind::Float(v, _) => Ok(RVal::Scalar {
                // No `double` in the IR: a double literal is rounded to float (documented).
                op: Operand::Imm(f32_bits(*v as f32)),
                ty: STy::F32,
                max: None,
            }),
            ExprKind::Str(_) => Err(self.err(at, "string literals are not supported")),
            ExprKind::Name(path) => self.name_value(path, hint, at),
            ExprKind::Template(path, _) => Err(self.err(
                at,
                format!("`{}<...>` needs an argument: `(x)`", path.join("::")),
            )),
            ExprKind::Unary(op, x) => self.unary(*op, x, hint, at),
            ExprKind::PreInc(inc, x) => self.increment(x, *inc, true, false, hint, at),
            ExprKind::PostInc(inc, x) => self.increment(x, *inc, false, false, hint, at),
            ExprKind::Binary(op, a, b) => {
                let x = self.rvalue(a, None)?;
                let y = self.rvalue(b, None)?;
                self.binary(*op, x, y, hint, at)
            }
            ExprKind::Logical(and, a, b) => self.logical(*and, a, b, at),
            ExprKind::Assign(op, l, r) => self.assign(*op, l, r, false, at),
            ExprKind::Cond(c, a, b) => self.conditional(c, a, b, at),
            ExprKind::Comma(a, b) => {
                self.effect(a)?;
                self.rvalue(b, hint)
            }
            ExprKind::Call(f, args) => self.call(f, args, hint, false, at),
            ExprKind::Index(..) | ExprKind::Member(..) => {
                if let Some(v) = self.builtin_member(e, hint)? {
                    return Ok(v);
                }
                let lv = self.lvalue(e)?;
                self.read(lv, hint, at)
            }
            ExprKind::Cast(t, x) => self.cast(t, x, hint, at),
            ExprKind::SizeofType(t) => {
                let ty = self.vty_of(t, at)?;
                Ok(RVal::int(size_of(ty) as i128, STy::U64))
            }
            ExprKind::SizeofExpr(x) => {
                let n = self.sizeof_expr(x)?;
                Ok(RVal::int(n as i128, STy::U64))
            }
        }
    }

    /// Evaluates `e` for its effects only (an expression statement, a `for` step).
    pub(crate) fn effect(&mut self, e: &Expr) -> R<()> {
        let at = e.loc;
        match &e.kind {
            ExprKind::Call(f, args) => self.call(f, args, None, true, at).map(|_| ()),
            ExprKind::Comma(a, b) => {
                self.effect(a)?;
                self.effect(b)
            }
            ExprKind::PostInc(inc, x) | ExprKind::PreInc(inc, x) => {
                self.increment(x, *inc, true, true, None, at).map(|_| ())
            }
            ExprKind::Assign(op, l, r) => self.assign(*op, l, r, true, at).map(|_| ()),
            ExprKind::Cast(t, x) if t.ptrs.is_empty() && t.spec.base == BaseTy::Void => {
                self.effect(x)
            }
            _ => self.rvalue(e, None).map(|_| ()),
        }
    }

    fn name_value(&mut self, path: &[String], hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        if path.len() == 1 {
            let name = &path[0];
            if let Some(b) = self.lookup(name).cloned() {
                return self.binding_value(&b, hint, at);
            }
            if let Some(v) = self.builtin_constant(name, at)? {
                return Ok(v);
            }
            if name == "warpSize" && self.dialect == Dialect::Cuda {
                return Ok(self.special(Special::SubGroupSize, STy::I32, hint, at));
            }
            if let Some(b) = self.litmus_location(name) {
                return self.binding_value(&b, hint, at);
            }
            if self.mode == Mode::Litmus {
                // herd: a name never declared is a register (initially 0 or set by the init block).
                let r = self.sink.var_reg(name, Ty::I32);
                self.bind_outermost(
                    name,
                    Binding::Var {
                        reg: r,
                        ty: VTy::Scalar(STy::I32),
                    },
                );
                return Ok(RVal::reg(r, STy::I32));
            }
            if self.funcs.contains_key(name) {
                return Err(self.err(at, format!("`{name}` is a function: call it")));
            }
            return Err(self.err(at, format!("unknown name `{name}`")));
        }
        let joined = path.join("::");
        if joined.contains("memory_order") || joined.contains("thread_scope") {
            return Err(self.err(
                at,
                format!("`{joined}` is only an argument of an atomic operation or fence"),
            ));
        }
        Err(self.err(at, format!("unknown name `{joined}`")))
    }

    /// A litmus location reached by its name (not a parameter of the thread), bound on first use.
    fn litmus_location(&mut self, name: &str) -> Option<Binding> {
        if self.mode != Mode::Litmus {
            return None;
        }
        let (index, ty) = self.sink.location(name)?;
        let b = Binding::Location {
            index,
            ty: PtrTy {
                elem: STy::of_ir(ty),
                space: Space::Global,
                atomic: false,
                volatile: false,
            },
        };
        self.bind_outermost(name, b.clone());
        Some(b)
    }

    pub(crate) fn bind_outermost(&mut self, name: &str, b: Binding) {
        self.scopes[0].push((name.to_string(), b));
    }

    pub(crate) fn binding_value(&mut self, b: &Binding, hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        Ok(match *b {
            Binding::Var { reg, ty } => self.read(LVal::Var { reg, ty }, hint, at)?,
            Binding::Val(v) => v,
            Binding::Array {
                offset,
                elem,
                atomic,
                ..
            } => RVal::Ptr {
                base: Operand::Imm(offset as u64),
                off: 0,
                ty: PtrTy {
                    elem,
                    space: Space::Local,
                    atomic,
                    volatile: false,
                },
            },
            Binding::AtomicRef(o) => self.read(LVal::Atomic(o), hint, at)?,
            Binding::Location { index, ty } => RVal::Ptr {
                base: Operand::Reg(self.sink.location_addr(index)),
                off: 0,
                ty,
            },
        })
    }

    /// The object `e` designates.
    pub(crate) fn lvalue(&mut self, e: &Expr) -> R<LVal> {
        self.nested(e.loc, |l| l.lvalue_here(e))
    }

    fn lvalue_here(&mut self, e: &Expr) -> R<LVal> {
        let at = e.loc;
        match &e.kind {
            ExprKind::Name(p) if p.len() == 1 => {
                let name = &p[0];
                match self.lookup(name).cloned() {
                    Some(Binding::Var { reg, ty }) => Ok(LVal::Var { reg, ty }),
                    Some(Binding::AtomicRef(o)) => Ok(LVal::Atomic(o)),
                    Some(Binding::Val(_)) => Err(self.err(at, format!("`{name}` is a constant (a workload parameter or a read-only value) and cannot be assigned"))),
                    Some(Binding::Array { .. }) => Err(self.err(at, format!("array `{name}` cannot be assigned; assign its elements"))),
                    Some(Binding::Location { .. }) => Err(self.err(at, format!("{name} is a location: store to it with *{name} = ... or an atomic"))),
                    None if self.mode == Mode::Litmus => {
                        let r = self.sink.var_reg(name, Ty::I32);
                        self.bind_outermost(name, Binding::Var { reg: r, ty: VTy::Scalar(STy::I32) });
                        Ok(LVal::Var { reg: r, ty: VTy::Scalar(STy::I32) })
                    }
                    None => Err(self.err(at, format!("unknown name `{name}`"))),
                }
            }
            ExprKind::Unary(UnOp::Deref, p) => {
                let v = self.pointer_operand(p)?;
                self.deref(v, at)
            }
            ExprKind::Index(a, i) => {
                let (pv, iv) = {
                    let x = self.pointer_or_value(a)?;
                    let y = self.rvalue(i, None)?;
                    match (x, y) {
                        (RVal::Scalar { .. }, RVal::Ptr { .. }) => (y, x), // `i[a]`
                        _ => (x, y),
                    }
                };
                if !matches!(pv, RVal::Ptr { .. }) {
                    return Err(self.err(at, format!("indexing needs a pointer or an array, found {}", pv.describe(self.dialect))));
                }
                let p = self.ptr_add(pv, iv, false, None, at)?;
                self.deref(p, at)
            }
            ExprKind::Member(..) => Err(self.err(at, "member access is not supported (there are no structs); threadIdx.x and the like are values")),
            ExprKind::Call(..) if self.is_atomic_ref_expr(e) => {
                let o = self.atomic_obj(e)?;
                Ok(LVal::Atomic(o))
            }
            _ => Err(self.err(at, "this expression is not an object that can be assigned")),
        }
    }

    /// A pointer operand of `*`, indexing or an atomic function: in the litmus dialect a name that is
    /// neither a variable nor a location is an unknown location.
    pub(crate) fn pointer_operand(&mut self, p: &Expr) -> R<RVal> {
        let v = self.pointer_or_value(p)?;
        if !matches!(v, RVal::Ptr { .. }) {
            return Err(self.err(
                p.loc,
                format!("expected a pointer, found {}", v.describe(self.dialect)),
            ));
        }
        Ok(v)
    }

    fn pointer_or_value(&mut self, p: &Expr) -> R<RVal> {
        if self.mode == Mode::Litmus {
            if let Some(n) = p.ident() {
                if self.lookup(n).is_none() && self.litmus_location(n).is_none() {
                    return Err(self.err(
                        p.loc,
                        format!("unknown location {n} (not a parameter of this thread)"),
                    ));
                }
            }
        }
        self.rvalue(p, None)
    }

    pub(crate) fn deref(&mut self, p: RVal, at: SrcLoc) -> R<LVal> {
        let RVal::Ptr { base, off, ty } = p else {
            return Err(self.err(
                at,
                format!("`*` needs a pointer, found {}", p.describe(self.dialect)),
            ));
        };
        if let Operand::Imm(0) = base {
            if off == 0 && ty.space == Space::Global {
                return Err(self.err(at, "dereferencing the null pointer"));
            }
        }
        Ok(LVal::Mem {
            addr: self.address_of_ptr(base, off),
            space: ty.space,
            ty: ty.elem,
            volatile: ty.volatile,
            atomic: ty.atomic,
        })
    }

    fn unary(&mut self, op: UnOp, x: &Expr, hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        match op {
            UnOp::Deref => {
                let lv = self.lvalue(&Expr::new(ExprKind::Unary(op, Box::new(x.clone())), at))?;
                self.read(lv, hint, at)
            }
            UnOp::AddrOf => self.address_of(x, at),
            UnOp::Plus => {
                let v = self.rvalue(x, hint)?;
                match v {
                    RVal::Scalar { ty, .. } => self.convert(v, VTy::Scalar(ty.promote()), hint, at),
                    _ => Err(self.err(
                        at,
                        format!(
                            "unary `+` takes a number, found {}",
                            v.describe(self.dialect)
                        ),
                    )),
                }
            }
            UnOp::Neg | UnOp::BitNot => {
                let v = self.rvalue(x, None)?;
                let RVal::Scalar { ty, .. } = v else {
                    return Err(self.err(
                        at,
                        format!(
                            "this operator takes a number, found {}",
                            v.describe(self.dialect)
                        ),
                    ));
                };
                let t = ty.promote();
                let a = self.operand_as(v, t, at)?;
                if op == UnOp::BitNot {
                    if t.is_float() {
                        return Err(self.err(at, "`~` takes an integer, found `float`"));
                    }
                    let ones = Operand::Imm(t.int_bits(-1));
                    let d = self.arith(AluOp::Xor, t, a, ones, hint, at);
                    return Ok(RVal::Scalar {
                        op: d,
                        ty: t,
                        max: None,
                    });
                }
                let z = Operand::Imm(if t.is_float() { f32_bits(0.0) } else { 0 });
                let neg = if t.is_float() {
                    // -x is x * -1 (0 - x would turn -0.0 into +0.0).
                    self.arith(AluOp::Mul, t, a, Operand::Imm(f32_bits(-1.0)), hint, at)
                } else {
                    self.arith(AluOp::Sub, t, z, a, hint, at)
                };
                Ok(RVal::Scalar {
                    op: neg,
                    ty: t,
                    max: None,
                })
            }
            UnOp::Not => {
                let v = self.rvalue(x, None)?;
                match v {
                    RVal::Scalar { ty, op, .. } => {
                        let z = Operand::Imm(if ty.is_float() { f32_bits(0.0) } else { 0 });
                        self.compare(CmpOp::Eq, ty.ir(), op, z, hint, at)
                    }
                    RVal::Ptr { .. } => {
                        let a = self.operand(v, at)?;
                        self.compare(CmpOp::Eq, Ty::U64, a, Operand::Imm(0), hint, at)
                    }
                    RVal::Void => Err(self.err(at, "`!` of a void value")),
                }
            }
        }
    }

    fn address_of(&mut self, x: &Expr, at: SrcLoc) -> R<RVal> {
        if let Some(n) = x.ident() {
            if self.lookup(n).is_none() {
                self.litmus_location(n);
            }
            match self.lookup(n).cloned() {
                // herd: `&x` of a location parameter is the location.
                Some(Binding::Location { index, ty }) if self.mode == Mode::Litmus => {
                    let r = self.sink.location_addr(index);
                    return Ok(RVal::Ptr { base: Operand::Reg(r), off: 0, ty });
                }
                Some(b @ Binding::Array { .. }) => return self.binding_value(&b, None, at),
                Some(Binding::Var { .. }) | Some(Binding::Val(_)) => {
                    return Err(self.err(at, format!("taking the address of variable `{n}` is not supported: variables live in registers")))
                }
                None if self.mode == Mode::Litmus => {
                    return Err(self.err(x.loc, format!("unknown location {n} (not a parameter of this thread)")))
                }
                _ => {}
            }
        }
        match self.lvalue(x)? {
            LVal::Mem {
                addr,
                space,
                ty,
                volatile,
                atomic,
            } => {
                let ptr = PtrTy {
                    elem: ty,
                    space,
                    atomic,
                    volatile,
                };
                Ok(RVal::Ptr {
                    base: addr.base,
                    off: addr.offset,
                    ty: ptr,
                })
            }
            LVal::Atomic(o) => Ok(RVal::Ptr {
                base: o.addr.base,
                off: o.addr.offset,
                ty: PtrTy {
                    elem: o.elem,
                    space: o.space,
                    atomic: false,
                    volatile: false,
                },
            }),
            LVal::Var { .. } => Err(self.err(
                at,
                "taking the address of a variable is not supported: variables live in registers",
            )),
        }
    }

    fn sizeof_expr(&mut self, x: &Expr) -> R<u64> {
        if let Some(n) = x.ident() {
            match self.lookup(n) {
                Some(Binding::Array { elem, len, .. }) => return Ok(len * elem.bytes() as u64),
                Some(Binding::Var { ty, .. }) => return Ok(size_of(*ty)),
                Some(Binding::Val(v)) => {
                    if let Some(t) = v.vty() {
                        return Ok(size_of(t));
                    }
                }
                _ => {}
            }
        }
        if let ExprKind::Index(a, _) | ExprKind::Unary(UnOp::Deref, a) = &x.kind {
            if let Some(n) = a.ident() {
                match self.lookup(n) {
                    Some(Binding::Array { elem, .. }) => return Ok(elem.bytes() as u64),
                    Some(Binding::Var {
                        ty: VTy::Ptr(p), ..
                    }) => return Ok(p.elem.bytes() as u64),
                    _ => {}
                }
            }
        }
        Err(self.err(x.loc, "sizeof of this expression is not supported (use sizeof(TYPE) or sizeof of a variable or array)"))
    }
}

pub(crate) fn size_of(t: VTy) -> u64 {
    match t {
        VTy::Scalar(STy::Bool) => 1,
        VTy::Scalar(s) => s.bytes() as u64,
        VTy::Ptr(_) => 8,
    }
}
