//! Declarations: variables in registers (a `const` with a constant initial value is a constant),
//! `auto`, `cuda::atomic_ref` variables, work-group-local arrays (`__shared__`, `__local`, and
//! `extern __shared__` sized by the workload header), and file-scope constants and arrays.

use super::values::{LVal, RVal};
use super::{Binding, Lower, Mode, R};
use crate::cfront::ast::*;
use crate::cfront::types::{STy, VTy};
use crate::ir::Reg;

impl Lower<'_> {
    /// Records the range a kernel variable keeps wherever it is read: its initial value's when the
    /// function never assigns it again, non-negative when it is only incremented (signed overflow
    /// being undefined, as compilers assume).
    pub(crate) fn note_range(&mut self, name: &str, r: Reg, ty: VTy, init_max: Option<u64>) {
        let (VTy::Scalar(t), Some(m), Mode::Kernel) = (ty, init_max, self.mode) else {
            return;
        };
        if t.is_float() {
            return;
        }
        let assigned = &self.fns.last().expect("a function").assigned;
        if !assigned.any.contains(name) {
            self.var_bounds.insert(r, m);
        } else if !assigned.other.contains(name) {
            self.var_bounds.insert(r, super::values::limit(t));
        }
    }

    /// A file-scope declaration: `__shared__` arrays and constants (`const int K = 4;`).
    pub(crate) fn global_decl(&mut self, d: &Decl) -> R<()> {
        if d.storage.shared || matches!(d.spec.space, Some((AddrSpace::Local, _))) {
            return self.local_arrays(d);
        }
        if d.spec.konst
            && d.decls
                .iter()
                .all(|x| x.ptrs.is_empty() && x.array.is_empty())
        {
            for x in &d.decls {
                let init = match &x.init {
                    Some(Init::Expr(e)) => Some(e),
                    Some(Init::Ctor(a, _)) | Some(Init::List(a, _)) if a.len() == 1 => Some(&a[0]),
                    _ => None,
                };
                let v = match init {
                    Some(e) => self.constant(e)?,
                    None => None,
                };
                let Some(v) = v else {
                    return Err(self.err(
                        x.loc,
                        format!(
                            "file-scope constant `{}` needs a constant initial value",
                            x.name
                        ),
                    ));
                };
                let tn = TypeName {
                    spec: d.spec.clone(),
                    ptrs: Vec::new(),
                    reference: false,
                };
                let ty = self.vty_of(&tn, x.loc)?;
                let v = self.convert(v, ty, None, x.loc)?;
                self.bind(&x.name, Binding::Val(v));
            }
            return Ok(());
        }
        Err(self.err(d.loc, "global variables are not supported: declare a buffer in the workload header and pass it as a kernel parameter (file-scope `const` constants and `__shared__` arrays are supported)"))
    }

    pub(crate) fn decl(&mut self, d: &Decl) -> R<()> {
        let local = d.storage.shared || matches!(d.spec.space, Some((AddrSpace::Local, _)));
        if local {
            return self.local_arrays(d);
        }
        if let Some((AddrSpace::Global | AddrSpace::Constant, l)) = d.spec.space {
            if d.decls.iter().all(|x| x.ptrs.is_empty()) {
                return Err(self.err(l, "global and constant variables are not supported: declare a buffer in the workload header and pass it as a kernel parameter"));
            }
        }
        if d.storage.static_ && !d.spec.konst {
            return Err(self.err(
                d.loc,
                "static variables are not supported (every variable is per work-item)",
            ));
        }
        if d.storage.extern_ {
            return Err(self.err(
                d.loc,
                "`extern` variables are not supported here (`extern __shared__` arrays are)",
            ));
        }
        for x in &d.decls {
            self.declarator(&d.spec, x)?;
        }
        Ok(())
    }

    pub(crate) fn declarator(&mut self, spec: &TypeSpec, x: &Declarator) -> R<()> {
        let at = x.loc;
        if x.reference {
            return Err(self.err(
                at,
                "references are not supported (variables live in registers)",
            ));
        }
        if !x.array.is_empty() {
            return Err(self.err(at, format!("array `{}` in private memory is not supported (registers cannot be indexed): use __shared__ / __local memory or a buffer", x.name)));
        }
        if let BaseTy::AtomicRef { elem, scope } = &spec.base {
            if !x.ptrs.is_empty() {
                return Err(self.err(at, "pointers to atomic_ref are not supported"));
            }
            let (et, sc) =
                self.atomic_ref_params(
                    &["cuda".to_string(), "atomic_ref".to_string()],
                    &[TemplateArg::Type((**elem).clone())]
                        .into_iter()
                        .chain(scope.iter().map(|(p, l)| {
                            TemplateArg::Expr(Expr::new(ExprKind::Name(p.clone()), *l))
                        }))
                        .collect::<Vec<_>>(),
                    spec.loc,
                )?;
            let obj = match &x.init {
                Some(Init::Ctor(args, _)) | Some(Init::List(args, _)) if args.len() == 1 => {
                    self.bind_atomic_ref(&args[0], et, sc, Some(&x.name), at)?
                }
                _ => {
                    return Err(self.err(
                        at,
                        format!(
                            "atomic_ref `{}` needs the object it refers to: `{}(x)`",
                            x.name, x.name
                        ),
                    ))
                }
            };
            self.bind(&x.name, Binding::AtomicRef(obj));
            return Ok(());
        }
        let tn = TypeName {
            spec: spec.clone(),
            ptrs: x.ptrs.clone(),
            reference: false,
        };
        let init = match &x.init {
            None => None,
            Some(Init::Expr(e)) => Some(e),
            Some(Init::Ctor(a, l)) | Some(Init::List(a, l)) => match a.as_slice() {
                [e] => Some(e),
                _ => {
                    return Err(self.err(
                        *l,
                        format!("`{}` is a scalar: it takes one initial value", x.name),
                    ))
                }
            },
        };
        let ty = if spec.base == BaseTy::Auto {
            let Some(e) = init else {
                return Err(self.err(at, "`auto` needs an initialiser"));
            };
            if !x.ptrs.is_empty() {
                return Err(self.err(at, "`auto *` is not supported (write `auto`)"));
            }
            let v = self.rvalue(e, None)?;
            let t = v
                .vty()
                .ok_or_else(|| self.err(e.loc, "`auto` of a void value"))?;
            let r = self.sink.var_reg(&x.name, t.ir());
            self.write(LVal::Var { reg: r, ty: t }, v, at)?;
            self.note_range(&x.name, r, t, v.max());
            self.bind(&x.name, Binding::Var { reg: r, ty: t });
            return Ok(());
        } else {
            let mut t = self.vty_of(&tn, at)?;
            if let (VTy::Ptr(p), None) = (&mut t, spec.space) {
                // A pointer without an address space points where its initial value points.
                if let Some(e) = init {
                    if let Some(RVal::Ptr { ty: from, .. }) = self.peek_pointer(e) {
                        p.space = from.space;
                    }
                }
            }
            t
        };
        // A `const` initialised with a constant is a constant (as a compiler folds it).
        if spec.konst && x.ptrs.is_empty() {
            if let Some(e) = init {
                if let Some(v) = self.constant(e)? {
                    let v = self.convert(v, ty, None, at)?;
                    self.bind(&x.name, Binding::Val(v));
                    return Ok(());
                }
            }
        }
        let r = self.sink.var_reg(&x.name, ty.ir());
        if let Some(e) = init {
            let v = self.rvalue(e, Some(r))?;
            let v = self.convert(v, ty, Some(r), e.loc)?;
            self.write(LVal::Var { reg: r, ty }, v, at)?;
            self.note_range(&x.name, r, ty, v.max());
        }
        self.bind(&x.name, Binding::Var { reg: r, ty });
        Ok(())
    }

    /// The address space of a pointer-valued expression, when it names one without code.
    pub(crate) fn peek_pointer(&mut self, e: &Expr) -> Option<RVal> {
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Unary(UnOp::AddrOf, x) | ExprKind::Index(x, _) => cur = x,
                ExprKind::Binary(BinOp::Add | BinOp::Sub, a, _) => cur = a,
                ExprKind::Name(p) if p.len() == 1 => {
                    return match self.lookup(&p[0]).cloned() {
                        Some(
                            b @ (Binding::Var {
                                ty: VTy::Ptr(_), ..
                            }
                            | Binding::Array { .. }
                            | Binding::Val(RVal::Ptr { .. })),
                        ) => self.binding_value(&b, None, e.loc).ok(),
                        Some(Binding::AtomicRef(o)) => Some(RVal::Ptr {
                            base: o.addr.base,
                            off: 0,
                            ty: crate::cfront::types::PtrTy {
                                elem: o.elem,
                                space: o.space,
                                atomic: false,
                                volatile: false,
                            },
                        }),
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
    }

    /// `__shared__ T name[N];` / `__local T name[N];` (static sizes) and `extern __shared__ T name[];`
    /// (its size from the workload header).
    pub(crate) fn local_arrays(&mut self, d: &Decl) -> R<()> {
        if self.mode == Mode::Litmus {
            return Err(self.err(
                d.loc,
                "local arrays are not supported in litmus threads (declare local locations)",
            ));
        }
        let elem = match &d.spec.base {
            BaseTy::Scalar(s) if *s != STy::Bool => *s,
            _ => {
                let names: Vec<&str> = [STy::I32, STy::U32, STy::I64, STy::U64, STy::F32]
                    .iter()
                    .map(|t| t.name(self.dialect))
                    .collect();
                return Err(self.err(
                    d.spec.loc,
                    format!("a local array's elements are {}", names.join(", ")),
                ));
            }
        };
        for x in &d.decls {
            if !x.ptrs.is_empty() {
                return Err(self.err(
                    x.loc,
                    "local pointers are not supported as local-memory objects (declare an array)",
                ));
            }
            if x.init.is_some() {
                return Err(self.err(
                    x.loc,
                    "local memory cannot be initialised in its declaration (zero it in the kernel)",
                ));
            }
            let key = (
                self.fns.last().map(|f| f.name.clone()).unwrap_or_default(),
                x.name.clone(),
            );
            let binding = if d.storage.extern_ {
                let Some(&(_, offset, hdr, len)) =
                    self.dynamic_locals.iter().find(|(n, ..)| *n == x.name)
                else {
                    return Err(self.err(x.loc, format!("`extern __shared__ {}[]` needs its size: declare `local {}: TYPE[LEN]` in the workload header", x.name, x.name)));
                };
                if hdr.bytes() != elem.bytes() {
                    return Err(self.err(
                        x.loc,
                        format!(
                            "`{}` is declared `{}` here and `{}` in the workload header",
                            x.name,
                            elem.name(self.dialect),
                            hdr.name(self.dialect)
                        ),
                    ));
                }
                Binding::Array {
                    offset,
                    elem,
                    len,
                    atomic: d.spec.atomic,
                }
            } else if let Some(b) = self.shared_allocs.get(&key) {
                b.clone()
            } else {
                let len = match x.array.as_slice() {
                    [Some(n)] => self
                        .constant(n)?
                        .and_then(|v| v.int_value())
                        .ok_or_else(|| self.err(n.loc, "a local array's length must be a constant (a number or a workload parameter)"))?,
                    [None] => return Err(self.err(x.loc, "a local array needs its length (or `extern __shared__` for a dynamic one)")),
                    [] => return Err(self.err(x.loc, format!("`{}`: local memory holds arrays here; declare `{}[1]`", x.name, x.name))),
                    _ => return Err(self.err(x.loc, "multi-dimensional arrays are not supported")),
                };
                if len < 1 {
                    return Err(self.err(x.loc, format!("length {len}: must be at least 1")));
                }
                let b = elem.bytes() as u64;
                let offset = self.local_bytes.div_ceil(b) * b;
                self.local_bytes = offset.saturating_add((len as u64).saturating_mul(b));
                if self.local_bytes > u32::MAX as u64 {
                    return Err(self.err(x.loc, "local arrays total more than 4 GiB"));
                }
                let bind = Binding::Array {
                    offset: offset as u32,
                    elem,
                    len: len as u64,
                    atomic: d.spec.atomic,
                };
                self.shared_allocs.insert(key, bind.clone());
                bind
            };
            self.bind(&x.name, binding);
        }
        Ok(())
    }
}
