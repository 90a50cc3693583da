//! Calls: the dialect's builtins, inlined device functions, C++ casts, and `cuda::atomic_ref`
//! objects (named, or temporaries `cuda::atomic_ref<T, S>(x)`) with their members.

use super::values::{LVal, RVal};
use super::{AtomicObj, Binding, Lower, Mode, R};
use crate::cfront::ast::*;
use crate::cfront::types::{STy, VTy};
use crate::cfront::Dialect;
use crate::ir::*;

impl Lower<'_> {
    /// Builtin values written as members: `threadIdx.x` and the like.
    pub(crate) fn builtin_member(&mut self, e: &Expr, hint: Option<Reg>) -> R<Option<RVal>> {
        let ExprKind::Member(obj, m, false) = &e.kind else {
            return Ok(None);
        };
        let Some(name) = obj.ident() else {
            return Ok(None);
        };
        if self.lookup(name).is_some() || self.dialect != Dialect::Cuda {
            return Ok(None);
        }
        self.cuda_member(name, m, hint, e.loc)
    }

    /// A call: a builtin, an inlined function, or a member of an atomic_ref.
    pub(crate) fn call(
        &mut self,
        f: &Expr,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<RVal> {
        match &f.kind {
            ExprKind::Name(path) => {
                let key = path.join("::");
                if path.len() == 1 {
                    if let Some(b) = self.lookup(&key) {
                        let what = match b {
                            Binding::Location { .. } => "a location",
                            _ => "a variable",
                        };
                        return Err(self.err(f.loc, format!("`{key}` is {what}, not a function")));
                    }
                    if let Some(func) = self.funcs.get(&key).copied() {
                        return self.inline_call(func, args, at);
                    }
                }
                let r = match self.dialect {
                    Dialect::Cuda => self.cuda_call(&key, args, hint, unused, at)?,
                    Dialect::OpenCl => self.opencl_call(&key, args, hint, unused, at)?,
                };
                r.ok_or_else(|| self.unknown_function(&key, f.loc))
            }
            ExprKind::Member(obj, m, false) => {
                self.atomic_ref_method(obj, m, args, hint, unused, at)
            }
            ExprKind::Template(path, targs) => self.template_call(path, targs, args, hint, at),
            ExprKind::Member(_, _, true) => {
                Err(self.err(at, "`->` is not supported (there are no structs)"))
            }
            _ => Err(self.err(
                f.loc,
                "only named functions can be called (no function pointers)",
            )),
        }
    }

    pub(crate) fn unknown_function(&self, key: &str, at: SrcLoc) -> crate::cfront::CError {
        if let Some(m) = super::cuda::unsupported_builtin(key)
            .or_else(|| super::opencl::unsupported_builtin(key))
        {
            return self.err(at, m);
        }
        let hint = match self.dialect {
            Dialect::Cuda => "the CUDA subset's functions are listed in workloads/README.md (atomicAdd, __syncthreads, cuda::atomic_ref, ...)",
            Dialect::OpenCl if self.mode == Mode::Litmus => "atomic_load/store/exchange/compare_exchange_strong/fetch_add/... [_explicit], atomic_work_item_fence, work_group_barrier",
            Dialect::OpenCl => "the OpenCL subset's functions are listed in workloads/README.md (get_global_id, atomic_fetch_add_explicit, barrier, ...)",
        };
        self.err(at, format!("unknown function `{key}` ({hint})"))
    }

    /// `static_cast<T>(x)` and the like, and `cuda::atomic_ref<T, S>(x)` used as a value.
    pub(crate) fn template_call(
        &mut self,
        path: &[String],
        targs: &[TemplateArg],
        args: &[Expr],
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let last = path.last().map(String::as_str).unwrap_or("");
        match last {
            "static_cast" | "reinterpret_cast" | "const_cast" => {
                let [TemplateArg::Type(t)] = targs else {
                    return Err(self.err(at, format!("`{last}` takes one type")));
                };
                let [x] = args else {
                    return Err(self.err(at, format!("`{last}<T>(x)` takes one argument")));
                };
                self.cast(t, x, hint, at)
            }
            _ => {
                let e = Expr::new(
                    ExprKind::Call(
                        Box::new(Expr::new(
                            ExprKind::Template(path.to_vec(), targs.to_vec()),
                            at,
                        )),
                        args.to_vec(),
                    ),
                    at,
                );
                let o = self.atomic_obj(&e)?;
                self.read(LVal::Atomic(o), hint, at)
            }
        }
    }

    /// Whether register `r` belongs to a variable in scope (rather than holding a temporary).
    pub(crate) fn is_var_reg(&self, r: Reg) -> bool {
        self.scopes
            .iter()
            .flatten()
            .any(|(_, b)| matches!(b, Binding::Var { reg, .. } if *reg == r))
    }

    /// Whether `e` is a `cuda::atomic_ref` object (a variable or a temporary).
    pub(crate) fn is_atomic_ref_expr(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(p) if p.len() == 1 => {
                matches!(self.lookup(&p[0]), Some(Binding::AtomicRef(_)))
            }
            ExprKind::Call(f, _) => {
                matches!(&f.kind, ExprKind::Template(p, _) if p.last().is_some_and(|x| x == "atomic_ref"))
            }
            _ => false,
        }
    }

    /// The atomic object of an atomic_ref variable or temporary `cuda::atomic_ref<T, S>(x)`.
    pub(crate) fn atomic_obj(&mut self, e: &Expr) -> R<AtomicObj> {
        match &e.kind {
            ExprKind::Name(p) if p.len() == 1 => match self.lookup(&p[0]) {
                Some(Binding::AtomicRef(o)) => Ok(*o),
                _ => Err(self.err(e.loc, format!("`{}` is not an atomic_ref", p[0]))),
            },
            ExprKind::Call(f, args) => {
                let ExprKind::Template(path, targs) = &f.kind else {
                    return Err(self.err(e.loc, "expected an atomic_ref"));
                };
                let [x] = args.as_slice() else {
                    return Err(self.err(e.loc, "`atomic_ref<T, S>(x)` takes one object"));
                };
                let (elem, scope) = self.atomic_ref_params(path, targs, e.loc)?;
                self.bind_atomic_ref(x, elem, scope, None, e.loc)
            }
            _ => Err(self.err(e.loc, "expected an atomic_ref")),
        }
    }

    /// The atomic object an atomic_ref of `elem` at `scope` refers to; `keep`: the name of the
    /// atomic_ref variable being declared.
    pub(crate) fn bind_atomic_ref(
        &mut self,
        x: &Expr,
        elem: STy,
        scope: Scope,
        keep: Option<&str>,
        at: SrcLoc,
    ) -> R<AtomicObj> {
        let LVal::Mem {
            addr, space, ty, ..
        } = self.lvalue(x)?
        else {
            return Err(self.err(x.loc, "an atomic_ref refers to an object in memory (an element of a buffer or shared array)"));
        };
        if ty.bytes() != elem.bytes() || ty.is_float() != elem.is_float() {
            return Err(self.err(
                at,
                format!(
                    "atomic_ref<{}> of an object of type `{}`",
                    elem.name(self.dialect),
                    ty.name(self.dialect)
                ),
            ));
        }
        // A named atomic_ref keeps its object even if a variable its address came from changes
        // later: such an address is copied into a register of its own.
        let addr = match (keep, addr.base) {
            (Some(name), Operand::Reg(b)) if self.is_var_reg(b) => {
                let r = self.sink.var_reg(name, Ty::U64);
                let b = self.ptr_into(addr.base, addr.offset, Some(r), at);
                Address {
                    base: Operand::Reg(b),
                    offset: 0,
                }
            }
            _ => addr,
        };
        Ok(AtomicObj {
            addr,
            space,
            elem,
            scope: super::atomics::narrow(space, scope),
        })
    }

    /// The element type and scope of `cuda::atomic_ref<T, S>` template arguments.
    pub(crate) fn atomic_ref_params(
        &self,
        path: &[String],
        targs: &[TemplateArg],
        at: SrcLoc,
    ) -> R<(STy, Scope)> {
        let cuda = matches!(path, [a, b] if a == "cuda" && b == "atomic_ref")
            || matches!(path, [a, b, c] if a == "cuda" && b == "std" && c == "atomic_ref");
        if !cuda || self.dialect != Dialect::Cuda {
            return Err(self.err(
                at,
                format!("`{}` is not supported: write CUDA's cuda::atomic_ref<T, cuda::thread_scope_S> (or, in OpenCL C, the atomic functions)", path.join("::")),
            ));
        }
        let elem = match targs.first() {
            Some(TemplateArg::Type(t)) => match self.vty_of(t, at)? {
                VTy::Scalar(s) if s != STy::Bool => s,
                _ => return Err(self.err(
                    at,
                    "atomic_ref's type is int, unsigned, long long, unsigned long long or float",
                )),
            },
            _ => return Err(self.err(at, "atomic_ref's first template argument is a type")),
        };
        let scope = match targs.get(1) {
            None => Scope::System,
            Some(TemplateArg::Expr(Expr {
                kind: ExprKind::Name(p),
                loc,
            })) => self.cuda_thread_scope(p, *loc)?,
            Some(_) => {
                return Err(self.err(
                    at,
                    "atomic_ref's second template argument is a cuda::thread_scope",
                ))
            }
        };
        if path.iter().any(|p| p == "std") && targs.len() > 1 {
            return Err(self.err(
                at,
                "cuda::std::atomic_ref takes no scope (use cuda::atomic_ref<T, scope>)",
            ));
        }
        Ok((elem, scope))
    }
}
