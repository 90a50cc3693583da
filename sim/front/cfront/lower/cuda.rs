//! CUDA's builtins: the thread-index variables, `warpSize`, `clock64()`, the atomic functions,
//! `cuda::atomic_ref` and its members, fences and barriers, `min`/`max`.
//!
//! Orders and scopes (CUDA C++ Programming Guide, "Atomic Functions" and "Memory Fence Functions";
//! libcu++ `cuda::atomic_ref`, `cuda::atomic_thread_fence`):
//! - `atomicOp(p, v)` is a relaxed read-modify-write at device scope (PTX `atom` without `.sem`
//!   is `.relaxed`, without scope `.gpu`); `atomicOp_block` at work_group (block) scope,
//!   `atomicOp_system` at system scope; on shared memory the scope is at most block.
//! - `cuda::atomic_ref<T, cuda::thread_scope_S>`: S = thread → work_item, block → work_group,
//!   device → device, system → system (also the default, as for `cuda::std::atomic_ref`); its
//!   operations take `cuda::memory_order_*` (default seq_cst); `++`, `+=`, assignment and reading
//!   are seq_cst. `memory_order_consume` is treated as acquire, as every C++ compiler does.
//! - `__threadfence_block()`, `__threadfence()`, `__threadfence_system()` are seq_cst fences at
//!   block, device and system scope (the guide: equivalent to `cuda::atomic_thread_fence(
//!   cuda::memory_order_seq_cst, cuda::thread_scope_*)`).
//! - `__syncthreads()` is a work-group barrier ordering both spaces at work_group scope;
//!   `__syncwarp()` a sub-group barrier (only the full mask).
//!
//! Not supported (named in the error): warp shuffles and votes, `__syncthreads_count/and/or`,
//! `atomicAdd` on `double`, `printf`, math functions without an IR operation.

use super::atomics::{CasOrd, Mo};
use super::values::RVal;
use super::{AtomicObj, Lower, R};
use crate::cfront::ast::Expr;
use crate::cfront::types::STy;
use crate::ir::*;

impl Lower<'_> {
    /// `threadIdx.x` and the like; `None` for other members.
    pub(crate) fn cuda_member(
        &mut self,
        obj: &str,
        m: &str,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        let d = match m {
            "x" => Dim::X,
            "y" => Dim::Y,
            "z" => Dim::Z,
            _ => {
                return match obj {
                    "threadIdx" | "blockIdx" | "blockDim" | "gridDim" => {
                        Err(self.err(at, format!("`{obj}` has members x, y and z")))
                    }
                    _ => Ok(None),
                }
            }
        };
        let v = match obj {
            "threadIdx" => self.special(Special::LocalId(d), STy::U32, hint, at),
            "blockIdx" => self.special(Special::GroupId(d), STy::U32, hint, at),
            "blockDim" => self.launch_size(Special::LocalSize(d), STy::U32, hint, at),
            "gridDim" => self.launch_size(Special::NumGroups(d), STy::U32, hint, at),
            _ => return Ok(None),
        };
        Ok(Some(v))
    }

    /// A special register read (ids fit 31 bits).
    pub(crate) fn special(
        &mut self,
        which: Special,
        ty: STy,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> RVal {
        let d = self.dst(hint, ty.ir());
        self.emit(Inst::ReadSpecial { dst: d, which }, at);
        RVal::Scalar {
            op: Operand::Reg(d),
            ty,
            max: self.special_max(which),
        }
    }

    /// The largest value a special register can hold, when the launch and the config's limits say
    /// (warps are at most 64 lanes, GPUs at most 4096 SMs).
    pub(crate) fn special_max(&self, which: Special) -> Option<u64> {
        let g = self.geometry?;
        let gs = |d: Dim| g.group_size[d.index()] as u64;
        let ng = |d: Dim| g.groups[d.index()] as u64;
        let threads = g.group_threads() as u64;
        Some(match which {
            Special::LocalId(d) => gs(d) - 1,
            Special::GroupId(d) => ng(d) - 1,
            Special::GlobalId(d) => gs(d) * ng(d) - 1,
            Special::LocalSize(d) => gs(d),
            Special::NumGroups(d) => ng(d),
            Special::GlobalSize(d) => gs(d) * ng(d),
            Special::GlobalLinearId => threads * g.num_groups() - 1,
            Special::LocalLinearId => threads - 1,
            Special::GroupLinearId => g.num_groups() - 1,
            Special::Lane => 63,
            Special::SubGroupSize => 64,
            Special::SubGroupId | Special::NumSubGroups => threads,
            Special::SmId => 4095,
            Special::Clock => return None,
        })
    }

    /// A launch size: a constant of the workload when the geometry is known.
    pub(crate) fn launch_size(
        &mut self,
        which: Special,
        ty: STy,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> RVal {
        let Some(g) = self.geometry else {
            return self.special(which, ty, hint, at);
        };
        let v = match which {
            Special::LocalSize(d) => g.group_size[d.index()] as i128,
            Special::NumGroups(d) => g.groups[d.index()] as i128,
            Special::GlobalSize(d) => g.groups[d.index()] as i128 * g.group_size[d.index()] as i128,
            _ => return self.special(which, ty, hint, at),
        };
        RVal::int(v, ty)
    }

    /// A `cuda::memory_order_*` argument.
    pub(crate) fn cuda_order(&self, e: &Expr) -> R<Mo> {
        let bad = || {
            self.err(e.loc, "expected a memory order: cuda::memory_order_relaxed, _acquire, _release, _acq_rel or _seq_cst (or std::memory_order_...)")
        };
        let crate::cfront::ast::ExprKind::Name(p) = &e.kind else {
            return Err(bad());
        };
        let word = match p.as_slice() {
            [.., a, b] if a == "memory_order" => b.clone(),
            [.., w] => w.strip_prefix("memory_order_").ok_or_else(bad)?.to_string(),
            _ => return Err(bad()),
        };
        Ok(match word.as_str() {
            "relaxed" => Mo::Relaxed,
            "consume" | "acquire" => Mo::Acquire,
            "release" => Mo::Release,
            "acq_rel" => Mo::AcqRel,
            "seq_cst" => Mo::SeqCst,
            _ => return Err(bad()),
        })
    }

    /// A `cuda::thread_scope_*`.
    pub(crate) fn cuda_thread_scope(&self, p: &[String], at: SrcLoc) -> R<Scope> {
        let w = p.last().map(String::as_str).unwrap_or("");
        Ok(match w {
            "thread_scope_thread" => Scope::WorkItem,
            "thread_scope_block" => Scope::WorkGroup,
            "thread_scope_device" => Scope::Device,
            "thread_scope_system" => Scope::System,
            "thread_scope_cluster" => {
                return Err(self.err(
                    at,
                    "thread_scope_cluster is not modelled (no thread-block clusters)",
                ))
            }
            _ => {
                return Err(self.err(
                    at,
                    format!(
                    "`{}` is not a scope: cuda::thread_scope_thread, _block, _device or _system",
                    p.join("::")
                ),
                ))
            }
        })
    }

    fn arity(
        &self,
        key: &str,
        args: &[Expr],
        n: std::ops::RangeInclusive<usize>,
        at: SrcLoc,
    ) -> R<()> {
        if n.contains(&args.len()) {
            return Ok(());
        }
        let want = if n.start() == n.end() {
            n.start().to_string()
        } else {
            format!("{} to {}", n.start(), n.end())
        };
        Err(self.err(
            at,
            format!("`{key}` takes {want} arguments, found {}", args.len()),
        ))
    }

    /// A CUDA builtin function; `None` when `key` is not one.
    pub(crate) fn cuda_call(
        &mut self,
        key: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        if let Some(v) = self.cuda_atomic_fn(key, args, hint, unused, at)? {
            return Ok(Some(v));
        }
        let void = Ok(Some(RVal::Void));
        match key {
            "__syncthreads" => {
                self.arity(key, args, 0..=0, at)?;
                self.emit(
                    Inst::Barrier {
                        kind: BarrierKind::WorkGroup,
                        spaces: SpaceSet::BOTH,
                        scope: Scope::WorkGroup,
                    },
                    at,
                );
                void
            }
            "__syncwarp" => {
                self.arity(key, args, 0..=1, at)?;
                if let Some(m) = args.first() {
                    let full = self
                        .constant(m)?
                        .and_then(|v| v.int_value())
                        .map(|v| v as u32 == u32::MAX);
                    if full != Some(true) {
                        return Err(self.err(
                            m.loc,
                            "__syncwarp with a partial mask is not supported (only 0xffffffff)",
                        ));
                    }
                }
                self.emit(
                    Inst::Barrier {
                        kind: BarrierKind::SubGroup,
                        spaces: SpaceSet::BOTH,
                        scope: Scope::SubGroup,
                    },
                    at,
                );
                void
            }
            "__threadfence_block" | "__threadfence" | "__threadfence_system" => {
                self.arity(key, args, 0..=0, at)?;
                let scope = match key {
                    "__threadfence_block" => Scope::WorkGroup,
                    "__threadfence" => Scope::Device,
                    _ => Scope::System,
                };
                self.fence(Mo::SeqCst, scope, SpaceSet::BOTH, at);
                void
            }
            "cuda::atomic_thread_fence"
            | "cuda::std::atomic_thread_fence"
            | "std::atomic_thread_fence" => {
                let scoped = key == "cuda::atomic_thread_fence";
                self.arity(key, args, if scoped { 1..=2 } else { 1..=1 }, at)?;
                let m = self.cuda_order(&args[0])?;
                let scope = match args.get(1) {
                    Some(Expr {
                        kind: crate::cfront::ast::ExprKind::Name(p),
                        loc,
                    }) => self.cuda_thread_scope(p, *loc)?,
                    Some(e) => {
                        return Err(self.err(
                            e.loc,
                            "expected a scope: cuda::thread_scope_block, _device or _system",
                        ))
                    }
                    None => Scope::System,
                };
                self.fence(m, scope, SpaceSet::BOTH, at);
                void
            }
            "clock" | "clock64" | "cuda::ptx::get_sreg_clock64" => {
                self.arity(key, args, 0..=0, at)?;
                Ok(Some(self.special(Special::Clock, STy::I64, hint, at)))
            }
            "cuda::ptx::get_sreg_laneid"
            | "cuda::ptx::get_sreg_warpid"
            | "cuda::ptx::get_sreg_smid"
            | "cuda::ptx::get_sreg_nwarpid" => {
                self.arity(key, args, 0..=0, at)?;
                let which = match key {
                    "cuda::ptx::get_sreg_laneid" => Special::Lane,
                    "cuda::ptx::get_sreg_warpid" => Special::SubGroupId,
                    "cuda::ptx::get_sreg_nwarpid" => Special::NumSubGroups,
                    _ => Special::SmId,
                };
                Ok(Some(self.special(which, STy::U32, hint, at)))
            }
            "min" | "max" | "umin" | "umax" | "llmin" | "llmax" | "ullmin" | "ullmax" | "fminf"
            | "fmaxf" => {
                self.arity(key, args, 2..=2, at)?;
                let op = if key.contains("min") {
                    AluOp::Min
                } else {
                    AluOp::Max
                };
                Ok(Some(self.min_max(op, key, &args[0], &args[1], hint, at)?))
            }
            "abs" | "labs" | "llabs" | "fabsf" => {
                self.arity(key, args, 1..=1, at)?;
                Ok(Some(self.abs(&args[0], hint, at)?))
            }
            "__float_as_uint" | "__float_as_int" | "__uint_as_float" | "__int_as_float" => {
                // The bits of a 32-bit value read as another type (no instruction: a register holds
                // raw bits, an f32 and a 32-bit integer alike in its low 32).
                self.arity(key, args, 1..=1, at)?;
                let (from, to) = match key {
                    "__float_as_uint" => (STy::F32, STy::U32),
                    "__float_as_int" => (STy::F32, STy::I32),
                    "__uint_as_float" => (STy::U32, STy::F32),
                    _ => (STy::I32, STy::F32),
                };
                let x = self.rvalue(&args[0], None)?;
                let op = self.operand_as(x, from, at)?;
                Ok(Some(RVal::Scalar {
                    op,
                    ty: to,
                    max: None,
                }))
            }
            "__ldg" => {
                self.arity(key, args, 1..=1, at)?;
                let p = self.pointer_operand(&args[0])?;
                let lv = self.deref(p, at)?;
                Ok(Some(self.read(lv, hint, at)?))
            }
            _ => Ok(None),
        }
    }

    /// `atomicOp[_block|_system](p, v)` and `atomicCAS(p, compare, v)`.
    fn cuda_atomic_fn(
        &mut self,
        key: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<Option<RVal>> {
        let Some(rest) = key.strip_prefix("atomic") else {
            return Ok(None);
        };
        let (base, scope) = if let Some(b) = rest.strip_suffix("_block") {
            (b, Scope::WorkGroup)
        } else if let Some(b) = rest.strip_suffix("_system") {
            (b, Scope::System)
        } else {
            (rest, Scope::Device)
        };
        let op = match base {
            "Add" => RmwOp::Add,
            "Sub" => RmwOp::Sub,
            "Exch" => RmwOp::Exch,
            "Min" => RmwOp::Min,
            "Max" => RmwOp::Max,
            "Inc" => RmwOp::Inc,
            "Dec" => RmwOp::Dec,
            "And" => RmwOp::And,
            "Or" => RmwOp::Or,
            "Xor" => RmwOp::Xor,
            "CAS" => {
                self.arity(key, args, 3..=3, at)?;
                let o = self.atomic_arg(&args[0], scope)?;
                let cmp = self.rvalue(&args[1], None)?;
                let cmp = self.operand_as(cmp, o.elem, args[1].loc)?;
                let val = self.rvalue(&args[2], None)?;
                let old = self.atomic_cas(o, cmp, val, CasOrd::RELAXED, hint, at)?;
                return Ok(Some(RVal::reg(old, o.elem)));
            }
            _ => return Ok(None),
        };
        self.arity(key, args, 2..=2, at)?;
        let o = self.atomic_arg(&args[0], scope)?;
        let v = self.rvalue(&args[1], None)?;
        self.atomic_rmw(o, (op, RmwOrd::Relaxed), v, hint, unused, at)
            .map(Some)
    }

    /// The atomic object a pointer argument points at.
    pub(crate) fn atomic_arg(&mut self, e: &Expr, scope: Scope) -> R<AtomicObj> {
        let p = self.pointer_operand(e)?;
        self.object_of(p, scope, e.loc)
    }

    fn min_max(
        &mut self,
        op: AluOp,
        key: &str,
        a: &Expr,
        b: &Expr,
        hint: Option<Reg>,
        at: SrcLoc,
    ) -> R<RVal> {
        let x = self.rvalue(a, None)?;
        let y = self.rvalue(b, None)?;
        let (RVal::Scalar { ty: ta, .. }, RVal::Scalar { ty: tb, .. }) = (x, y) else {
            return Err(self.err(at, format!("`{key}` takes numbers")));
        };
        let t = match key {
            "umin" | "umax" => STy::U32,
            "llmin" | "llmax" => STy::I64,
            "ullmin" | "ullmax" => STy::U64,
            "fminf" | "fmaxf" => STy::F32,
            _ => STy::common(ta, tb),
        };
        let xa = self.operand_as(x, t, at)?;
        let yb = self.operand_as(y, t, at)?;
        let d = self.arith(op, t, xa, yb, hint, at);
        Ok(RVal::Scalar {
            op: d,
            ty: t,
            max: None,
        })
    }

    /// `|x|`: `x < 0 ? -x : x` as a compare, a negation and a select.
    pub(crate) fn abs(&mut self, a: &Expr, hint: Option<Reg>, at: SrcLoc) -> R<RVal> {
        let x = self.rvalue(a, None)?;
        let RVal::Scalar { ty, .. } = x else {
            return Err(self.err(at, "`abs` takes a number"));
        };
        let t = ty.promote();
        let v = self.operand_as(x, t, at)?;
        if t.is_float() {
            // Clearing the sign bit is |x| for every float.
            let d = self.arith(AluOp::And, STy::U32, v, Operand::Imm(0x7FFF_FFFF), hint, at);
            return Ok(RVal::Scalar {
                op: d,
                ty: t,
                max: None,
            });
        }
        if !t.is_signed() {
            return Ok(RVal::Scalar {
                op: v,
                ty: t,
                max: None,
            });
        }
        let neg = self.arith(AluOp::Sub, t, Operand::Imm(0), v, None, at);
        let c = self.compare(CmpOp::Lt, t.ir(), v, Operand::Imm(0), None, at)?;
        let c = self.operand(c, at)?;
        let c = self.reg_of(c, Ty::I32, at);
        let d = self.dst(hint, t.ir());
        self.emit(
            Inst::Select {
                dst: d,
                cond: c,
                a: neg,
                b: v,
            },
            at,
        );
        Ok(RVal::reg(d, t))
    }

    /// A member function of a `cuda::atomic_ref`.
    pub(crate) fn atomic_ref_method(
        &mut self,
        obj: &Expr,
        m: &str,
        args: &[Expr],
        hint: Option<Reg>,
        unused: bool,
        at: SrcLoc,
    ) -> R<RVal> {
        if !self.is_atomic_ref_expr(obj) {
            return Err(self.err(at, format!("`.{m}(...)`: member functions exist only on cuda::atomic_ref (there are no structs)")));
        }
        let o = self.atomic_obj(obj)?;
        let order = |l: &Self, i: usize| -> R<Mo> {
            args.get(i)
                .map(|e| l.cuda_order(e))
                .unwrap_or(Ok(Mo::SeqCst))
        };
        let n = args.len();
        let want = |l: &Self, r: std::ops::RangeInclusive<usize>| {
            l.arity(&format!("atomic_ref::{m}"), args, r, at)
        };
        let op = match m {
            "load" => {
                want(self, 0..=1)?;
                let ord = self.load_ord(order(self, 0)?, at)?;
                return Ok(self.atomic_load(o, ord, hint, at));
            }
            "store" => {
                want(self, 1..=2)?;
                let v = self.rvalue(&args[0], None)?;
                let ord = self.store_ord(order(self, 1)?, at)?;
                self.atomic_store(o, v, ord, at)?;
                return Ok(RVal::Void);
            }
            "compare_exchange_strong" | "compare_exchange_weak" => {
                want(self, 2..=4)?;
                let expected = self.expected_of(&args[0], true)?;
                let desired = self.rvalue(&args[1], None)?;
                let (s, f) = match n {
                    2 | 3 => {
                        let s = order(self, 2)?;
                        // C++ [atomics.ref.ops]: one order gives the failure order without release.
                        let f = match s {
                            Mo::AcqRel => Mo::Acquire,
                            Mo::Release => Mo::Relaxed,
                            x => x,
                        };
                        (s, f)
                    }
                    _ => (order(self, 2)?, order(self, 3)?),
                };
                let f = self.failure_ord(f, at)?;
                return self.compare_exchange(o, expected, desired, CasOrd { success: Self::rmw_ord(s), failure: f, weak: m.ends_with("weak") }, hint, at);
            }
            "exchange" => RmwOp::Exch,
            "fetch_add" => RmwOp::Add,
            "fetch_sub" => RmwOp::Sub,
            "fetch_and" => RmwOp::And,
            "fetch_or" => RmwOp::Or,
            "fetch_xor" => RmwOp::Xor,
            "fetch_min" => RmwOp::Min,
            "fetch_max" => RmwOp::Max,
            "wait" | "notify_one" | "notify_all" => return Err(self.err(at, format!("atomic_ref::{m} is not supported"))),
            _ => return Err(self.err(at, format!("cuda::atomic_ref has no member `{m}` (load, store, exchange, compare_exchange_strong/weak, fetch_add/sub/and/or/xor/min/max)"))),
        };
        want(self, 1..=2)?;
        let v = self.rvalue(&args[0], None)?;
        let ord = Self::rmw_ord(order(self, 1)?);
        self.atomic_rmw(o, (op, ord), v, hint, unused, at)
    }
}

/// CUDA functions known but outside the subset, with the reason.
pub(crate) fn unsupported_builtin(key: &str) -> Option<String> {
    let warp = [
        "__shfl_sync",
        "__shfl_up_sync",
        "__shfl_down_sync",
        "__shfl_xor_sync",
        "__shfl",
        "__shfl_up",
        "__shfl_down",
        "__shfl_xor",
        "__ballot_sync",
        "__any_sync",
        "__all_sync",
        "__uni_sync",
        "__activemask",
        "__match_any_sync",
        "__match_all_sync",
        "__reduce_add_sync",
        "__reduce_min_sync",
        "__reduce_max_sync",
        "__ballot",
        "__any",
        "__all",
    ];
    if warp.contains(&key) {
        return Some(format!(
            "`{key}` is not supported: warp-level data exchange is not modelled"
        ));
    }
    Some(match key {
        "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or" => format!("`{key}` is not supported (barriers with a reduction are not modelled; use __syncthreads and an atomic)"),
        "printf" | "assert" | "malloc" | "free" | "memcpy" | "memset" => format!("`{key}` is not supported in kernels"),
        "atomicAdd_double" => "atomicAdd on double is not supported".into(),
        "sqrtf" | "expf" | "logf" | "sinf" | "cosf" | "powf" | "fmodf" | "floorf" | "ceilf" | "rsqrtf" | "__fdividef" | "sqrt" | "exp" | "log" | "sin" | "cos" | "pow" | "fmod" | "floor" | "ceil" => format!("math function `{key}` is not supported (floats have add, sub, mul, div, min and max)"),
        "__popc" | "__popcll" | "__clz" | "__clzll" | "__ffs" | "__ffsll" | "__brev" | "__mulhi" | "__umulhi" => format!("integer intrinsic `{key}` is not supported"),
        "__nanosleep" | "__trap" | "__brkpt" | "cooperative_groups::this_grid" | "cooperative_groups::this_thread_block" => format!("`{key}` is not supported"),
        _ => return None,
    })
}
