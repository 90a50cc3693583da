//! Types and declarations of the C subset: declaration specifiers (qualifiers, address spaces,
//! storage classes, CUDA's `__shared__`/`__global__`), base types (the scalar types, typedef names,
//! `auto`, `cuda::atomic_ref<T, scope>`), declarators with pointers, arrays and initialisers, and
//! `typedef`. Types the IR cannot hold are rejected by name (`double`, `char`, vector types).

use super::ast::*;
use super::lexer::Tok;
use super::parser::Parser;
use super::types::STy;
use super::{CError, Dialect};
use crate::ir::SrcLoc;

type R<T> = Result<T, CError>;

impl Parser {
    // ---- types ----

    /// The scalar type a single word names, with whether it is an atomic type.
    pub(crate) fn type_word(&self, w: &str) -> Option<(STy, bool)> {
        let ocl = self.dialect == Dialect::OpenCl;
        Some(match w {
            "size_t" | "uintptr_t" | "uint64_t" => (STy::U64, false),
            "ptrdiff_t" | "intptr_t" | "int64_t" => (STy::I64, false),
            "uint32_t" => (STy::U32, false),
            "int32_t" => (STy::I32, false),
            "uint" | "cl_uint" if ocl => (STy::U32, false),
            "ulong" | "cl_ulong" if ocl => (STy::U64, false),
            "atomic_int" if ocl => (STy::I32, true),
            "atomic_uint" if ocl => (STy::U32, true),
            "atomic_long" | "atomic_intptr_t" | "atomic_ptrdiff_t" if ocl => (STy::I64, true),
            "atomic_ulong" | "atomic_size_t" | "atomic_uintptr_t" if ocl => (STy::U64, true),
            "atomic_float" if ocl => (STy::F32, true),
            // atomic_flag holds 0 or 1; the flag functions use it as an atomic int.
            "atomic_flag" if ocl => (STy::I32, true),
            _ => return None,
        })
    }

    /// Does a type (a declaration or a type name) start at token `i`?
    pub(crate) fn type_starts_at(&self, i: usize) -> bool {
        let Tok::Ident(w) = self.tok_at(i) else {
            return false;
        };
        const WORDS: &[&str] = &[
            "void",
            "bool",
            "_Bool",
            "char",
            "short",
            "int",
            "long",
            "signed",
            "unsigned",
            "float",
            "double",
            "half",
            "const",
            "volatile",
            "restrict",
            "__restrict__",
            "__restrict",
            "_Atomic",
            "auto",
            "constexpr",
            "static",
            "extern",
            "register",
            "inline",
        ];
        const CUDA: &[&str] = &[
            "__shared__",
            "__constant__",
            "__managed__",
            "__device__",
            "__forceinline__",
        ];
        const OPENCL: &[&str] = &[
            "global",
            "__global",
            "local",
            "__local",
            "private",
            "__private",
            "constant",
            "__constant",
            "generic",
            "__generic",
        ];
        WORDS.contains(&w.as_str())
            || (self.dialect == Dialect::OpenCl && OPENCL.contains(&w.as_str()))
            || (self.dialect == Dialect::Cuda && CUDA.contains(&w.as_str()))
            || self.type_word(w).is_some()
            || self.typedefs.contains_key(w)
            || vector_or_unsupported_type(w).is_some()
            || self.is_template_path_at(i)
    }

    /// `cuda::atomic_ref` / `cuda::std::atomic_ref` at token `i`.
    pub(crate) fn is_template_path_at(&self, i: usize) -> bool {
        let w = |k: usize| match self.tok_at(i + k) {
            Tok::Ident(s) => s.as_str(),
            Tok::Punct(p) => p,
            _ => "",
        };
        (w(0) == "cuda" && w(1) == "::" && w(2) == "atomic_ref")
            || (w(0) == "cuda"
                && w(1) == "::"
                && w(2) == "std"
                && w(3) == "::"
                && w(4) == "atomic_ref")
    }

    /// Declaration specifiers: qualifiers and one base type, in any order.
    pub(crate) fn type_spec(&mut self, storage: &mut Storage) -> R<TypeSpec> {
        let loc = self.loc();
        let mut spec = TypeSpec {
            base: BaseTy::Void,
            konst: false,
            volatile: false,
            atomic: false,
            space: None,
            loc,
        };
        let (mut signed, mut unsigned, mut longs, mut int_word) = (false, false, 0u8, false);
        let mut base: Option<BaseTy> = None;
        loop {
            let at = self.loc();
            let Tok::Ident(w) = self.peek().clone() else {
                break;
            };
            let ocl = self.dialect == Dialect::OpenCl;
            let space = |s| Some((s, at));
            match w.as_str() {
                "__attribute__" | "__launch_bounds__" | "__declspec" => {
                    self.skip_attributes()?;
                    continue;
                }
                "const" | "constexpr" => spec.konst = true,
                "volatile" => spec.volatile = true,
                "restrict" | "__restrict__" | "__restrict" | "register" | "inline"
                | "__inline__" | "__forceinline__" | "__noinline__" => {}
                "_Atomic" => spec.atomic = true,
                "static" => storage.static_ = true,
                "extern" => storage.extern_ = true,
                "__shared__" if !ocl => storage.shared = true,
                "__global__" if !ocl => storage.kernel = true,
                "__kernel" | "kernel" if ocl => storage.kernel = true,
                "__device__" | "__host__" if !ocl => {}
                "__constant__" | "__managed__" if !ocl => {
                    return Err(CError::new(at, format!("`{w}` memory is not supported (declare a buffer in the workload header and pass it as a parameter)")))
                }
                "global" | "__global" if ocl => spec.space = space(AddrSpace::Global),
                "local" | "__local" if ocl => spec.space = space(AddrSpace::Local),
                "private" | "__private" if ocl => spec.space = space(AddrSpace::Private),
                "constant" | "__constant" if ocl => spec.space = space(AddrSpace::Constant),
                "generic" | "__generic" if ocl => {}
                "signed" => signed = true,
                "unsigned" => unsigned = true,
                "long" => longs += 1,
                "int" => int_word = true,
                "short" | "char" => {
                    return Err(CError::new(at, format!("`{w}` is not supported: the simulator's values are 32 or 64 bits (use int)")))
                }
                "double" => {
                    return Err(CError::new(at, "`double` is not supported: the IR has 32-bit floats only (use float)"))
                }
                "half" => return Err(CError::new(at, "`half` is not supported (use float)")),
                "void" | "bool" | "_Bool" | "float" | "auto" if base.is_none() => {
                    base = Some(match w.as_str() {
                        "void" => BaseTy::Void,
                        "float" => BaseTy::Scalar(STy::F32),
                        "auto" => BaseTy::Auto,
                        _ => BaseTy::Scalar(STy::Bool),
                    });
                }
                _ if base.is_none() && !signed && !unsigned && longs == 0 && !int_word => {
                    if let Some((t, atomic)) = self.type_word(&w) {
                        base = Some(BaseTy::Scalar(t));
                        spec.atomic |= atomic;
                    } else if let Some(t) = self.typedefs.get(&w).cloned() {
                        if !t.ptrs.is_empty() {
                            return Err(CError::new(at, format!("typedef `{w}` names a pointer type; pointer typedefs are not supported")));
                        }
                        base = Some(t.spec.base.clone());
                        spec.konst |= t.spec.konst;
                        spec.volatile |= t.spec.volatile;
                        spec.atomic |= t.spec.atomic;
                        if spec.space.is_none() {
                            spec.space = t.spec.space;
                        }
                    } else if let Some(m) = vector_or_unsupported_type(&w) {
                        return Err(CError::new(at, m));
                    } else if self.is_template_path_at(self.pos) {
                        base = Some(self.atomic_ref_type()?);
                        continue;
                    } else {
                        break;
                    }
                }
                _ => break,
            }
            self.pos += 1;
        }
        let integer = signed || unsigned || longs > 0 || int_word;
        spec.base = match (base, integer) {
            (Some(b), false) => b,
            (None, true) => {
                if longs > 2 {
                    return Err(CError::new(loc, "`long long long` is not a type"));
                }
                // CUDA's hosts are LP64 and OpenCL's `long` is 64 bits: `long` is 64-bit in both.
                BaseTy::Scalar(match (unsigned, longs > 0) {
                    (false, false) => STy::I32,
                    (true, false) => STy::U32,
                    (false, true) => STy::I64,
                    (true, true) => STy::U64,
                })
            }
            (Some(_), true) => return Err(CError::new(loc, "two base types in one declaration")),
            (None, false) => return Err(self.expected("a type")),
        };
        Ok(spec)
    }

    /// `cuda::atomic_ref<T[, cuda::thread_scope_X]>` (also `cuda::std::atomic_ref<T>`).
    pub(crate) fn atomic_ref_type(&mut self) -> R<BaseTy> {
        let at = self.loc();
        let path = self.path()?;
        let mut args = self.template_args()?.into_iter();
        let elem = match args.next() {
            Some(TemplateArg::Type(t)) => t,
            _ => {
                return Err(CError::new(
                    at,
                    "`atomic_ref` takes a type as its first template argument",
                ))
            }
        };
        let scope = match args.next() {
            None => None,
            Some(TemplateArg::Expr(Expr { kind: ExprKind::Name(p), loc })) => Some((p, loc)),
            Some(_) => {
                return Err(CError::new(at, "the second template argument of `atomic_ref` is a scope (cuda::thread_scope_block, _device, _system)"))
            }
        };
        if args.next().is_some() {
            return Err(CError::new(
                at,
                format!("`{}` takes at most two template arguments", path.join("::")),
            ));
        }
        if path.iter().any(|p| p == "std") && scope.is_some() {
            return Err(CError::new(
                at,
                "`cuda::std::atomic_ref` takes no scope (use cuda::atomic_ref<T, scope>)",
            ));
        }
        Ok(BaseTy::AtomicRef {
            elem: Box::new(elem),
            scope,
        })
    }

    /// `*`s with their qualifiers, and a C++ `&`.
    pub(crate) fn pointers(&mut self) -> R<(Vec<PtrQual>, bool)> {
        let mut ptrs = Vec::new();
        while self.eat("*") {
            let mut q = PtrQual::default();
            loop {
                if self.eat_word("const") {
                    q.konst = true;
                } else if self.eat_word("volatile") {
                    q.volatile = true;
                } else if self.eat_word("restrict")
                    || self.eat_word("__restrict__")
                    || self.eat_word("__restrict")
                {
                } else {
                    break;
                }
            }
            ptrs.push(q);
        }
        let reference = self.eat("&");
        if self.is_punct("&&") {
            return Err(CError::new(
                self.loc(),
                "rvalue references are not supported",
            ));
        }
        Ok((ptrs, reference))
    }

    /// A type name (casts, template arguments, sizeof).
    pub(crate) fn type_name(&mut self) -> R<TypeName> {
        let mut st = Storage::default();
        let spec = self.type_spec(&mut st)?;
        let (ptrs, reference) = self.pointers()?;
        Ok(TypeName {
            spec,
            ptrs,
            reference,
        })
    }

    // ---- declarations ----

    pub(crate) fn declarator(&mut self) -> R<Declarator> {
        let (ptrs, reference) = self.pointers()?;
        if self.is_punct("(") {
            return Err(CError::new(
                self.loc(),
                "function pointers and parenthesised declarators are not supported",
            ));
        }
        let (name, loc) = self.ident("a name")?;
        let mut array = Vec::new();
        while self.eat("[") {
            if self.eat("]") {
                array.push(None);
            } else {
                array.push(Some(self.expr()?));
                self.expect("]")?;
            }
        }
        self.skip_attributes()?;
        let init = if self.eat("=") {
            if self.is_punct("{") {
                let at = self.loc();
                self.pos += 1;
                Some(Init::List(self.args("}")?, at))
            } else {
                Some(Init::Expr(self.assign()?))
            }
        } else if self.is_punct("(") || self.is_punct("{") {
            let at = self.loc();
            let close = if self.is_punct("(") { ")" } else { "}" };
            self.pos += 1;
            Some(Init::Ctor(self.args(close)?, at))
        } else {
            None
        };
        Ok(Declarator {
            name,
            loc,
            ptrs,
            reference,
            array,
            init,
        })
    }

    /// A declaration after its specifiers, through the `;`.
    pub(crate) fn declaration_rest(
        &mut self,
        spec: TypeSpec,
        storage: Storage,
        loc: SrcLoc,
    ) -> R<Decl> {
        let mut decls = vec![self.declarator()?];
        while self.eat(",") {
            decls.push(self.declarator()?);
        }
        self.expect(";")?;
        Ok(Decl {
            spec,
            storage,
            decls,
            loc,
        })
    }

    pub(crate) fn typedef(&mut self) -> R<()> {
        self.pos += 1;
        let t = self.type_name()?;
        let (name, at) = self.ident("the typedef's name")?;
        if self.is_punct("[") {
            return Err(CError::new(at, "array typedefs are not supported"));
        }
        self.expect(";")?;
        self.typedefs.insert(name, t);
        Ok(())
    }
}

/// Vector, image and other types the IR cannot hold, with the message naming them.
fn vector_or_unsupported_type(w: &str) -> Option<String> {
    const BASES: &[&str] = &[
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double",
        "half",
    ];
    let digits = w.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let base = &w[..w.len() - digits.len()];
    if !digits.is_empty() && BASES.contains(&base) && matches!(digits, "2" | "3" | "4" | "8" | "16")
    {
        return Some(format!("vector type `{w}` is not supported (use scalars)"));
    }
    Some(match w {
        "uchar" | "ushort" => {
            format!("`{w}` is not supported: the simulator's values are 32 or 64 bits")
        }
        "image1d_t"
        | "image2d_t"
        | "image3d_t"
        | "sampler_t"
        | "texture"
        | "cudaTextureObject_t"
        | "cudaSurfaceObject_t" => format!("`{w}`: images and textures are not supported"),
        "dim3" => "`dim3` is not supported (read threadIdx.x etc. directly)".into(),
        "atomic_double" => "`atomic_double` is not supported: the IR has 32-bit floats only".into(),
        "event_t" | "queue_t" | "clk_event_t" | "ndrange_t" | "reserve_id_t" | "pipe" => {
            format!("`{w}` is not supported")
        }
        _ => return None,
    })
}
