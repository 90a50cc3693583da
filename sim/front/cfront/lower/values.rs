//! Values and objects of the lowering: rvalues (an operand with its C type, or a pointer as a base and
//! a constant byte offset), lvalues (a variable's register, a memory object, an atomic object), the
//! conversions of C11 §6.3 between them, and the arithmetic operators with constant folding.

use super::{AtomicObj, Lower, R};
use crate::cfront::ast::BinOp;
use crate::cfront::types::{PtrTy, STy, VTy};
use crate::cfront::Dialect;
use crate::ir::eval;
use crate::ir::*;

/// A computed value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RVal {
    /// A scalar; `max`: the value is known to lie in `0 ..= max` (ids, sizes, constants, and what
    /// arithmetic on them keeps in range), so that widening and narrowing it may need no
    /// instruction.
    Scalar {
        op: Operand,
        ty: STy,
        max: Option<u64>,
    },
    /// A pointer: `base + off` bytes.
    Ptr {
        base: Operand,
        off: i64,
        ty: PtrTy,
    },
    Void,
}

impl RVal {
    pub fn int(v: i128, ty: STy) -> RVal {
        let bits = ty.int_bits(v);
        RVal::Scalar {
            op: Operand::Imm(bits),
            ty,
            max: u64::try_from(v).ok(),
        }
    }

    pub fn reg(r: Reg, ty: STy) -> RVal {
        RVal::Scalar {
            op: Operand::Reg(r),
            ty,
            max: None,
        }
    }

    /// The upper bound of a scalar known to be non-negative.
    pub fn max(&self) -> Option<u64> {
        match *self {
            RVal::Scalar { max, .. } => max,
            _ => None,
        }
    }

    /// The constant bits and type of a constant scalar.
    pub fn constant(&self) -> Option<(u64, STy)> {
        match *self {
            RVal::Scalar {
                op: Operand::Imm(b),
                ty,
                ..
            } => Some((b, ty)),
            _ => None,
        }
    }

    /// The integer value of an integer constant.
    pub fn int_value(&self) -> Option<i128> {
        match self.constant() {
            Some((b, t)) if !t.is_float() => Some(t.int_value(b)),
            _ => None,
        }
    }

    pub fn vty(&self) -> Option<VTy> {
        match *self {
            RVal::Scalar { ty, .. } => Some(VTy::Scalar(ty)),
            RVal::Ptr { ty, .. } => Some(VTy::Ptr(ty)),
            RVal::Void => None,
        }
    }

    /// The value's type as dialect `d` writes it, quoted, for messages.
    pub fn describe(&self, d: Dialect) -> String {
        self.vty()
            .map(|t| format!("`{}`", t.describe(d)))
            .unwrap_or_else(|| "a void value".into())
    }
}

/// An object that can be read and written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LVal {
    /// A variable in a register.
    Var { reg: Reg, ty: VTy },
    /// A non-atomic object in memory (`volatile`: see [`Lower::plain_order`]).
    Mem {
        addr: Address,
        space: Space,
        ty: STy,
        volatile: bool,
        atomic: bool,
    },
    /// The object of a `cuda::atomic_ref`: plain reads and writes of it are seq_cst atomics.
    Atomic(AtomicObj),
}

impl Lower<'_> {
    /// The order and scope of a plain access. CUDA's `volatile` is PTX's `ld.volatile`/
    /// `st.volatile`, which the PTX memory model treats as relaxed at system scope (PTX ISA, Memory
    /// Consistency Model: "volatile operations ... relaxed ... .sys"); OpenCL's `volatile` only
    /// stops compiler caching and stays a plain access.
    fn plain_order(&self, volatile: bool) -> (bool, Scope) {
        if volatile && self.dialect == Dialect::Cuda {
            (true, Scope::System)
        } else {
            (false, Scope::Device)
        }
    }

    /// Reads an lvalue.
    pub(crate) fn read(&mut self, lv: LVal, hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        Ok(match lv {
            LVal::Var { reg, ty } => match ty {
                VTy::Scalar(t) => RVal::Scalar {
                    op: Operand::Reg(reg),
                    ty: t,
                    max: self.var_bounds.get(&reg).copied(),
                },
                VTy::Ptr(p) => RVal::Ptr {
                    base: Operand::Reg(reg),
                    off: 0,
                    ty: p,
                },
            },
            LVal::Mem {
                addr,
                space,
                ty,
                volatile,
                ..
            } => {
                let (relaxed, scope) = self.plain_order(volatile);
                let d = self.dst(hint, ty.ir());
                self.emit(
                    Inst::Load {
                        dst: d,
                        space,
                        addr,
                        ty: ty.ir(),
                        ord: if relaxed {
                            LoadOrd::Relaxed
                        } else {
                            LoadOrd::Plain
                        },
                        scope: if space == Space::Local && relaxed {
                            Scope::WorkGroup
                        } else {
                            scope
                        },
                    },
                    at,
                );
                RVal::reg(d, ty)
            }
            LVal::Atomic(o) => {
                let d = self.dst(hint, o.elem.ir());
                self.emit(
                    Inst::Load {
                        dst: d,
                        space: o.space,
                        addr: o.addr,
                        ty: o.elem.ir(),
                        ord: LoadOrd::SeqCst,
                        scope: o.scope,
                    },
                    at,
                );
                RVal::reg(d, o.elem)
            }
        })
    }

    /// Writes `v` (already of the lvalue's type) to an lvalue.
    pub(crate) fn write(&mut self, lv: LVal, v: RVal, at: SrcLoc) -> R<()> {
        match lv {
            LVal::Var { reg, .. } => match v {
                RVal::Scalar { op, .. } => {
                    if op != Operand::Reg(reg) {
                        self.emit(Inst::Mov { dst: reg, src: op }, at);
                    }
                }
                RVal::Ptr { base, off, .. } => {
                    self.ptr_into(base, off, Some(reg), at);
                }
                RVal::Void => return Err(self.err(at, "a void value cannot be assigned")),
            },
            LVal::Mem {
                addr,
                space,
                ty,
                volatile,
                ..
            } => {
                let src = self.operand(v, at)?;
                let (relaxed, scope) = self.plain_order(volatile);
                self.emit(
                    Inst::Store {
                        space,
                        addr,
                        src,
                        ty: ty.ir(),
                        ord: if relaxed {
                            StoreOrd::Relaxed
                        } else {
                            StoreOrd::Plain
                        },
                        scope: if space == Space::Local && relaxed {
                            Scope::WorkGroup
                        } else {
                            scope
                        },
                    },
                    at,
                );
            }
            LVal::Atomic(o) => {
                let src = self.operand(v, at)?;
                self.emit(
                    Inst::Store {
                        space: o.space,
                        addr: o.addr,
                        src,
                        ty: o.elem.ir(),
                        ord: StoreOrd::SeqCst,
                        scope: o.scope,
                    },
                    at,
                );
            }
        }
        Ok(())
    }

    /// The type an lvalue holds.
    pub(crate) fn lval_ty(lv: &LVal) -> VTy {
        match *lv {
            LVal::Var { ty, .. } => ty,
            LVal::Mem { ty, .. } => VTy::Scalar(ty),
            LVal::Atomic(o) => VTy::Scalar(o.elem),
        }
    }

    /// A value as an operand (a pointer's address computed into a register).
    pub(crate) fn operand(&mut self, v: RVal, at: SrcLoc) -> R<Operand> {
        match v {
            RVal::Scalar { op, .. } => Ok(op),
            RVal::Ptr { base, off, .. } => Ok(self.ptr_operand(base, off, None, at)),
            RVal::Void => Err(self.err(at, "a void value has no value")),
        }
    }

    /// `base + off` as an operand (folded when `base` is a constant).
    fn ptr_operand(&mut self, base: Operand, off: i64, hint: Option<Reg>, at: SrcLoc) -> Operand {
        match base {
            Operand::Imm(b) if hint.is_none() => Operand::Imm(b.wrapping_add(off as u64)),
            _ => Operand::Reg(self.ptr_into(base, off, hint, at)),
        }
    }

    /// `base + off` computed into `hint` (or a temporary); no instruction when it is already there.
    pub(crate) fn ptr_into(
        &mut self,
        base: Operand,
        off: i64,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> Reg {
        if off == 0 {
            if let Operand::Reg(r) = base {
                if hint.is_none_or(|h| h == r) {
                    return r;
                }
            }
        }
        let d = self.dst(hint, Ty::U64);
        match base {
            Operand::Imm(b) => self.emit(
                Inst::Mov {
                    dst: d,
                    src: Operand::Imm(b.wrapping_add(off as u64)),
                },
                at,
            ),
            Operand::Reg(_) if off == 0 => self.emit(Inst::Mov { dst: d, src: base }, at),
            Operand::Reg(_) => self.emit(
                Inst::Alu {
                    op: AluOp::Add,
                    ty: Ty::U64,
                    dst: d,
                    a: base,
                    b: Operand::Imm(off as u64),
                },
                at,
            ),
        }
        d
    }

    /// The address a pointer value points at.
    pub(crate) fn address_of_ptr(&self, base: Operand, off: i64) -> Address {
        match base {
            Operand::Imm(b) => Address {
                base: Operand::Imm(b.wrapping_add(off as u64)),
                offset: 0,
            },
            Operand::Reg(_) => Address { base, offset: off },
        }
    }

    /// C's implicit conversion of `v` to `to` (assignment, initialisation, argument passing, the
    /// arms of `?:`): a pointer converts only to a pointer to the same type, the same atomicity and
    /// (CUDA, C++ [conv.qual]) without dropping `volatile`, and to an integer only through a cast (C11
    /// §6.5.16.1's constraints; C++ [conv.ptr]; GCC 14 and Clang reject both by default).
    pub(crate) fn convert(&mut self, v: RVal, to: VTy, hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        let d = self.dialect;
        match (v, to) {
            (RVal::Ptr { ty, .. }, VTy::Ptr(p))
                if ty.space == p.space
                    && (ty.elem != p.elem
                        || ty.atomic != p.atomic
                        || (d == Dialect::Cuda && ty.volatile && !p.volatile)) =>
            {
                return Err(self.err(
                    at,
                    format!(
                        "cannot convert `{}` to `{}` without a cast",
                        ty.describe(d),
                        p.describe(d)
                    ),
                ))
            }
            (RVal::Ptr { ty, .. }, VTy::Scalar(t)) if t != STy::Bool => {
                return Err(self.err(
                    at,
                    format!(
                        "cannot convert `{}` to `{}` without a cast",
                        ty.describe(d),
                        t.name(d)
                    ),
                ))
            }
            _ => {}
        }
        // An integer constant converted implicitly must fit the target's bits (as a signed or an
        // unsigned value: `unsigned u = -1;` is C's idiom and fits); one that does not is refused,
        // where a C compiler only warns (-Woverflow) and the program computes with a truncated
        // value. A cast says the truncation is meant.
        if let (Some(n), VTy::Scalar(t)) = (v.int_value(), to) {
            if t != STy::Bool && !t.is_float() {
                let bits = t.bytes() * 8;
                if n < -(1i128 << (bits - 1)) || n >= 1i128 << bits {
                    return Err(self.err(
                        at,
                        format!(
                            "the constant {n} does not fit `{}` ({bits} bits); write a cast if the \
                             truncation is meant",
                            t.name(d)
                        ),
                    ));
                }
            }
        }
        self.convert_cast(v, to, hint, at)
    }

    /// C's explicit conversion (a cast) of `v` to `to`: also between pointer types and from a
    /// pointer to a 64-bit integer.
    pub(crate) fn convert_cast(
        &mut self,
        v: RVal,
        to: VTy,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        match (v, to) {
            (RVal::Scalar { op, ty, max }, VTy::Scalar(t)) => {
                self.convert_scalar(op, ty, max, t, hint, at)
            }
            (RVal::Ptr { base, off, ty }, VTy::Ptr(p)) => {
                if ty.space != p.space {
                    return Err(self.err(
                        at,
                        format!(
                            "cannot convert a pointer to {} memory into a pointer to {} memory",
                            ty.space.name(),
                            p.space.name()
                        ),
                    ));
                }
                Ok(RVal::Ptr { base, off, ty: p })
            }
            (RVal::Scalar { op, ty, .. }, VTy::Ptr(p)) => match op {
                Operand::Imm(0) if !ty.is_float() => Ok(RVal::Ptr {
                    base: Operand::Imm(0),
                    off: 0,
                    ty: p,
                }),
                _ => Err(self.err(
                    at,
                    format!(
                        "cannot convert `{}` into a pointer (only the null pointer constant 0 is)",
                        ty.name(self.dialect)
                    ),
                )),
            },
            (RVal::Ptr { base, off, .. }, VTy::Scalar(t)) => match t {
                STy::Bool => {
                    let a = self.ptr_operand(base, off, None, at);
                    self.compare(CmpOp::Ne, Ty::U64, a, Operand::Imm(0), hint, at)
                }
                STy::U64 | STy::I64 => {
                    let a = self.ptr_operand(base, off, hint, at);
                    Ok(RVal::Scalar {
                        op: a,
                        ty: t,
                        max: None,
                    })
                }
                _ => Err(self.err(
                    at,
                    format!(
                        "cannot convert a pointer into `{}` (addresses are 64 bits)",
                        t.name(self.dialect)
                    ),
                )),
            },
            (RVal::Void, _) => Err(self.err(at, "a void value cannot be converted")),
        }
    }

    fn convert_scalar(
        &mut self,
        op: Operand,
        from: STy,
        max: Option<u64>,
        to: STy,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        if from == to {
            return Ok(RVal::Scalar { op, ty: to, max });
        }
        // A value in 0 .. 2^31 has the same bits in every integer type: widening or narrowing it is
        // free.
        let small = max.is_some_and(|m| m < 1 << 31);
        if let Operand::Imm(b) = op {
            if to == STy::Bool {
                let nonzero = if from.is_float() {
                    bits_f32(b) != 0.0
                } else {
                    from.int_value(b) != 0
                };
                return Ok(RVal::int(nonzero as i128, to));
            }
            if from.is_float() || to.is_float() {
                // As the machine's `cvt` computes it at run time (`ir::eval::convert`): float to
                // integer truncates toward zero and saturates where C leaves it undefined (NaN: 0).
                let bits = eval::convert(b, from.ir(), to.ir());
                if to.is_float() {
                    return Ok(RVal::Scalar {
                        op: Operand::Imm(bits),
                        ty: to,
                        max: None,
                    });
                }
                return Ok(RVal::int(to.int_value(bits), to));
            }
            return Ok(RVal::int(from.int_value(b), to));
        }
        if to == STy::Bool {
            return self.compare(CmpOp::Ne, from.ir(), op, zero(from), hint, at);
        }
        let r = match op {
            Operand::Reg(r) => r,
            Operand::Imm(_) => unreachable!("constants are folded above"),
        };
        let cvt = |l: &mut Self, from: Ty, to: Ty| {
            let d = l.dst(hint, to);
            l.emit(
                Inst::Cvt {
                    dst: d,
                    src: r,
                    from,
                    to,
                },
                at,
            );
            RVal::reg(d, STy::of_ir(to))
        };
        if from.is_float() || to.is_float() {
            let v = cvt(self, from.ir(), to.ir());
            return Ok(retype(v, to));
        }
        let widen = !from.is_64() && to.is_64();
        let narrow = from.is_64() && !to.is_64();
        if widen && from == STy::I32 && !small {
            // A signed 32-bit value sits zero-extended in its register: sign-extend it.
            return Ok(retype(cvt(self, Ty::I32, Ty::I64), to));
        }
        if narrow && !small {
            return Ok(retype(cvt(self, from.ir(), to.ir()), to));
        }
        // Same width (or zero-extension of an unsigned or small value): the bits are the value.
        let max = max.filter(|&m| m <= limit(to));
        Ok(RVal::Scalar { op, ty: to, max })
    }

    /// `a op b` into a 0/1 `int`.
    pub(crate) fn compare(
        &mut self,
        op: CmpOp,
        ty: Ty,
        a: Operand,
        b: Operand,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        if let (Operand::Imm(x), Operand::Imm(y)) = (a, b) {
            return Ok(RVal::int(eval::cmp(op, ty, x, y) as i128, STy::I32));
        }
        let d = self.dst(hint, Ty::I32);
        self.emit(
            Inst::Cmp {
                op,
                ty,
                dst: d,
                a,
                b,
            },
            at,
        );
        Ok(RVal::Scalar {
            op: Operand::Reg(d),
            ty: STy::I32,
            max: Some(1),
        })
    }

    /// A binary arithmetic, bitwise or comparison operator on two values (C11 §6.5.5–§6.5.10).
    pub(crate) fn binary(
        &mut self,
        op: BinOp,
        a: RVal,
        b: RVal,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        // Pointer arithmetic and comparisons.
        match (a, b) {
            (RVal::Ptr { .. }, RVal::Scalar { .. }) if matches!(op, BinOp::Add | BinOp::Sub) => {
                return self.ptr_add(a, b, op == BinOp::Sub, hint, at)
            }
            (RVal::Scalar { .. }, RVal::Ptr { .. }) if op == BinOp::Add => {
                return self.ptr_add(b, a, false, hint, at)
            }
            (
                RVal::Ptr {
                    base: b1,
                    off: o1,
                    ty: t1,
                },
                RVal::Ptr {
                    base: b2,
                    off: o2,
                    ty: t2,
                },
            ) => {
                let x = self.ptr_operand(b1, o1, None, at);
                let y = self.ptr_operand(b2, o2, None, at);
                if op == BinOp::Sub {
                    if t1.elem.bytes() != t2.elem.bytes() {
                        return Err(self.err(at, "subtracting pointers to different types"));
                    }
                    let d = self.arith(AluOp::Sub, STy::I64, x, y, None, at);
                    let sh = Operand::Imm(t1.elem.bytes().trailing_zeros() as u64);
                    let d = self.arith(AluOp::Shr, STy::I64, d, sh, hint, at);
                    return Ok(RVal::Scalar {
                        op: d,
                        ty: STy::I64,
                        max: None,
                    });
                }
                if let Some(c) = cmp_of(op) {
                    return self.compare(c, Ty::U64, x, y, hint, at);
                }
                return Err(self.err(
                    at,
                    format!("`{}` does not apply to two pointers", op.symbol()),
                ));
            }
            (RVal::Ptr { base, off, .. }, RVal::Scalar { .. })
            | (RVal::Scalar { .. }, RVal::Ptr { base, off, .. })
                if cmp_of(op).is_some() =>
            {
                // Comparison with the null pointer constant.
                let s = if matches!(a, RVal::Ptr { .. }) { b } else { a };
                if s.int_value() != Some(0) {
                    return Err(self.err(at, "a pointer compares only with a pointer or 0"));
                }
                let x = self.ptr_operand(base, off, None, at);
                let (l, r) = if matches!(a, RVal::Ptr { .. }) {
                    (x, Operand::Imm(0))
                } else {
                    (Operand::Imm(0), x)
                };
                return self.compare(cmp_of(op).expect("checked"), Ty::U64, l, r, hint, at);
            }
            (RVal::Ptr { .. }, _) | (_, RVal::Ptr { .. }) => {
                return Err(self.err(at, format!("`{}` does not apply to a pointer", op.symbol())))
            }
            (RVal::Void, _) | (_, RVal::Void) => {
                return Err(self.err(at, "a void value in an expression"))
            }
            _ => {}
        }
        let (RVal::Scalar { ty: ta, .. }, RVal::Scalar { ty: tb, .. }) = (a, b) else {
            unreachable!("scalars")
        };
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            if ta.is_float() || tb.is_float() {
                return Err(self.err(at, format!("`{}` takes integers", op.symbol())));
            }
            let t = ta.promote();
            // C11 §6.5.7p3 (CUDA C++ alike): a count below 0 or not below the promoted width is
            // undefined; PTX's `shl` gives 0 past the width where the IR masks the count, so a
            // constant one is refused rather than simulated as something else. OpenCL C §6.3.j
            // defines the count modulo the width, which is what the IR computes: accepted there.
            let b_count = if self.dialect == Dialect::Cuda {
                b.int_value()
            } else {
                None
            };
            if let Some(n) = b_count {
                let bits = t.bytes() * 8;
                if n < 0 || n >= bits as i128 {
                    return Err(self.err(
                        at,
                        format!(
                            "shift count {n} is outside 0 ..= {} for `{}` (undefined in C)",
                            bits - 1,
                            t.name(self.dialect)
                        ),
                    ));
                }
            }
            let xv = self.convert(a, VTy::Scalar(t), None, at)?;
            let yv = self.convert(b, VTy::Scalar(t), None, at)?;
            let (x, y) = (self.operand(xv, at)?, self.operand(yv, at)?);
            let alu = if op == BinOp::Shl {
                AluOp::Shl
            } else {
                AluOp::Shr
            };
            let max = range(alu, t, xv.max(), yv.max(), y);
            let d = self.arith(alu, t, x, y, hint, at);
            return Ok(RVal::Scalar { op: d, ty: t, max });
        }
        let t = STy::common(ta, tb);
        let xv = self.convert(a, VTy::Scalar(t), None, at)?;
        let yv = self.convert(b, VTy::Scalar(t), None, at)?;
        let (x, y) = (self.operand(xv, at)?, self.operand(yv, at)?);
        if let Some(c) = cmp_of(op) {
            return self.compare(c, t.ir(), x, y, hint, at);
        }
        if t.is_float()
            && matches!(
                op,
                BinOp::Rem | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor
            )
        {
            return Err(self.err(
                at,
                format!(
                    "`{}` takes integers, found `float` (use fmodf for a remainder)",
                    op.symbol()
                ),
            ));
        }
        let alu = match op {
            BinOp::Add => AluOp::Add,
            BinOp::Sub => AluOp::Sub,
            BinOp::Mul => AluOp::Mul,
            BinOp::Div => AluOp::Div,
            BinOp::Rem => AluOp::Rem,
            BinOp::BitAnd => AluOp::And,
            BinOp::BitOr => AluOp::Or,
            _ => AluOp::Xor,
        };
        if matches!(alu, AluOp::Div | AluOp::Rem) && !t.is_float() && y == Operand::Imm(0) {
            return Err(self.err(at, format!("`{}` by zero", op.symbol())));
        }
        let max = range(alu, t, xv.max(), yv.max(), y);
        let d = self.arith(alu, t, x, y, hint, at);
        Ok(RVal::Scalar { op: d, ty: t, max })
    }

    /// `v` converted to `t`, as an operand.
    pub(crate) fn operand_as(&mut self, v: RVal, t: STy, at: SrcLoc) -> R<Operand> {
        let c = self.convert(v, VTy::Scalar(t), None, at)?;
        self.operand(c, at)
    }

    /// One ALU instruction (folded when both operands are constants).
    pub(crate) fn arith(
        &mut self,
        op: AluOp,
        t: STy,
        a: Operand,
        b: Operand,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> Operand {
        if let (Operand::Imm(x), Operand::Imm(y)) = (a, b) {
            // Folded with the machine's semantics; a division that faults is left to run time,
            // where the machine stops the run as it would without folding.
            if let Some(v) = eval::alu(op, t.ir(), x, y) {
                return Operand::Imm(v);
            }
        }
        let d = self.dst(hint, t.ir());
        self.emit(
            Inst::Alu {
                op,
                ty: t.ir(),
                dst: d,
                a,
                b,
            },
            at,
        );
        Operand::Reg(d)
    }

    /// `p ± i` (C11 §6.5.6: scaled by the element size).
    pub(crate) fn ptr_add(
        &mut self,
        p: RVal,
        i: RVal,
        neg: bool,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let RVal::Ptr { base, off, ty } = p else {
            unreachable!("a pointer")
        };
        let RVal::Scalar { ty: it, .. } = i else {
            unreachable!("a scalar")
        };
        if it.is_float() {
            return Err(self.err(at, "a pointer offset must be an integer, found `float`"));
        }
        let size = ty.elem.bytes() as i128;
        if let Some(k) = i.int_value() {
            let d = if neg { -k * size } else { k * size };
            let r = RVal::Ptr {
                base,
                off: off.wrapping_add(d as i64),
                ty,
            };
            return Ok(match hint {
                Some(h) => {
                    self.ptr_into(base, off.wrapping_add(d as i64), Some(h), at);
                    RVal::Ptr {
                        base: Operand::Reg(h),
                        off: 0,
                        ty,
                    }
                }
                None => r,
            });
        }
        let shift = Operand::Imm(ty.elem.bytes().trailing_zeros() as u64);
        let scaled = if ty.space == Space::Local {
            // Local addresses are 32-bit offsets.
            let x = self.operand_as(i, STy::U32, at)?;
            self.arith(AluOp::Shl, STy::U32, x, shift, None, at)
        } else {
            let wide = if it.is_signed() { STy::I64 } else { STy::U64 };
            let x = self.operand_as(i, wide, at)?;
            self.arith(AluOp::Shl, STy::U64, x, shift, None, at)
        };
        let combine = if neg { AluOp::Sub } else { AluOp::Add };
        match base {
            // A constant base (a local array) folds into the offset.
            Operand::Imm(b) if !neg && hint.is_none() => Ok(RVal::Ptr {
                base: scaled,
                off: off.wrapping_add(b as i64),
                ty,
            }),
            _ => {
                let t = if ty.space == Space::Local {
                    STy::U32
                } else {
                    STy::U64
                };
                let d = self.arith(combine, t, base, scaled, hint, at);
                Ok(RVal::Ptr { base: d, off, ty })
            }
        }
    }
}

/// The largest non-negative value of type `t`.
pub(crate) fn limit(t: STy) -> u64 {
    match t {
        STy::Bool => 1,
        STy::I32 => i32::MAX as u64,
        STy::U32 => u32::MAX as u64,
        STy::I64 => i64::MAX as u64,
        STy::U64 => u64::MAX,
        STy::F32 => 0,
    }
}

/// The range `0 ..= max` of `a op b` from its operands' ranges, when it stays within the
/// non-negative values of `t` (so the operation cannot wrap); `b` is the second operand itself
/// (a constant divisor or shift).
fn range(op: AluOp, t: STy, a: Option<u64>, b: Option<u64>, bop: Operand) -> Option<u64> {
    if t.is_float() {
        return None;
    }
    // The second operand's value, when it is a (non-negative) constant.
    let k = match bop {
        Operand::Imm(_) => b,
        Operand::Reg(_) => None,
    };
    let r = match op {
        AluOp::Add => a?.checked_add(b?)?,
        AluOp::Mul => a?.checked_mul(b?)?,
        AluOp::Div => a? / k.filter(|&k| k > 0)?,
        AluOp::Rem => a?.min(k.filter(|&k| k > 0)? - 1),
        AluOp::Shr => a? >> k.filter(|&k| k < 64)?,
        AluOp::And => match (a, b) {
            (Some(x), Some(y)) => x.min(y),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => return None,
        },
        AluOp::Or | AluOp::Xor => a?.max(b?).checked_add(1)?.checked_next_power_of_two()? - 1,
        AluOp::Min => a?.min(b?),
        AluOp::Max => a?.max(b?),
        AluOp::Sub | AluOp::Shl => return None,
    };
    (r <= limit(t)).then_some(r)
}

fn retype(v: RVal, t: STy) -> RVal {
    match v {
        RVal::Scalar { op, max, .. } => RVal::Scalar {
            op,
            ty: t,
            max: max.filter(|&m| m <= limit(t)),
        },
        other => other,
    }
}

fn zero(t: STy) -> Operand {
    Operand::Imm(if t.is_float() { f32_bits(0.0) } else { 0 })
}

fn cmp_of(op: BinOp) -> Option<CmpOp> {
    Some(match op {
        BinOp::Eq => CmpOp::Eq,
        BinOp::Ne => CmpOp::Ne,
        BinOp::Lt => CmpOp::Lt,
        BinOp::Le => CmpOp::Le,
        BinOp::Gt => CmpOp::Gt,
        BinOp::Ge => CmpOp::Ge,
        _ => return None,
    })
}
