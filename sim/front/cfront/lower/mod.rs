//! C syntax → IR instructions: names bound, expressions typed and converted as C11 §6.3 says, control
//! flow lowered to labels and branches, `__device__` functions inlined at each call, and the CUDA and
//! OpenCL builtins (ids, atomics, fences, barriers) lowered with the orders and scopes their
//! definitions give (`cuda.rs`, `opencl.rs`; the shared atomic emission in `atomics.rs`).
//!
//! One lowering serves kernels and the OpenCL litmus dialect's thread bodies; where they go is a
//! [`Sink`]. The two differ only where [`Mode::Litmus`] says so, each to keep herd's reading of a
//! thread: a discarded read-modify-write result is still returned (one instruction per call, as
//! written), an undeclared name is a register (herd's `r0 = ...`), and `&x` of a location parameter
//! is the location.
//!
//! Code shape, as a simple compiler emits it (the timing of a kernel depends on it): one instruction
//! per operator; constants folded; a value destined for a variable computed straight into the
//! variable's register; kernel loops test at the bottom (`if (!c) goto end; top: body; if (c) goto
//! top`), litmus loops at the top as written (`top: if (!c) goto end; body; goto top`); `&&` and
//! `||` short-circuit with branches; constant launch sizes (`blockDim`, `get_local_size`) are
//! immediates, since the workload fixes them. Global addresses are 64-bit (`p[i]` is a shift and an
//! add, plus a sign extension when `i` is a signed 32-bit value); work-group-local addresses are
//! 32-bit offsets (`s[i]` is one shift, the array's place folded into the access).
//!
//! A kernel's instructions are then scheduled within basic blocks (`cfront/schedule.rs`).
//!
//! Not done: optimisation beyond folding, loop rotation and scheduling (no common subexpressions,
//! no register allocation: every variable has its own register), taking the address of a variable
//! that lives in a register, arrays in private memory.

mod assign;
mod atomics;
mod call;
mod cond;
mod cuda;
mod decl;
mod expr;
mod inline;
mod opencl;
mod stmt;
mod values;

pub use inline::Assignments;
pub use values::{LVal, RVal};

use super::ast::{AddrSpace, BaseTy, Function, Stmt, TypeName};
use super::types::{PtrTy, STy, VTy};
use super::{CError, Dialect};
use crate::ir::*;
use crate::workload::Geometry;
use std::collections::HashMap;

type R<T> = Result<T, CError>;

/// Where lowered instructions, registers and labels go.
pub trait Sink {
    /// The register of a declared variable. A kernel gets a fresh one per declaration; a litmus
    /// thread one per name, so that the test's condition can read it.
    fn var_reg(&mut self, name: &str, ty: Ty) -> Reg;
    /// A register for an intermediate value.
    fn temp(&mut self, ty: Ty) -> Reg;
    fn emit(&mut self, inst: Inst, at: SrcLoc);
    /// Instructions emitted so far.
    fn emitted(&self) -> usize;
    /// A label name no source label can have.
    fn fresh_label(&mut self) -> String;
    fn define_label(&mut self, name: &str, at: SrcLoc) -> R<()>;
    /// A branch to `label` (resolved when the code is complete); taken when `cond` is `None` or
    /// `(reg != 0) == cond.1`.
    fn branch(&mut self, label: &str, cond: Option<(Reg, bool)>, at: SrcLoc);
    /// The register holding the address of litmus location `l` (litmus threads only).
    fn location_addr(&mut self, _l: usize) -> Reg {
        unreachable!("only litmus threads have locations")
    }
    /// The litmus location called `name` and its type (litmus threads only).
    fn location(&mut self, _name: &str) -> Option<(usize, Ty)> {
        None
    }
    /// A construct C11 leaves undefined that herd loads: `true` when the sink records it (a
    /// litmus thread, whose verdict is then `Undef`) and the lowering goes on, `false` when it is
    /// an error (a kernel).
    fn undefined(&mut self, _what: &str, _at: SrcLoc) -> bool {
        false
    }
}

/// Kernel or litmus thread (see the module header for what differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Kernel,
    Litmus,
}

/// What a name stands for.
#[derive(Debug, Clone)]
pub enum Binding {
    /// A variable in a register.
    Var { reg: Reg, ty: VTy },
    /// An immutable value: a header parameter, a file-scope constant, a read-only inlined parameter.
    Val(RVal),
    /// A work-group-local array (`__shared__`, `__local`) at a byte offset of local memory.
    Array {
        offset: u32,
        elem: STy,
        len: u64,
        atomic: bool,
    },
    /// A `cuda::atomic_ref` variable: the referenced object's address in a register.
    AtomicRef(AtomicObj),
    /// A litmus location, seen through a pointer parameter.
    Location { index: usize, ty: PtrTy },
}

/// An object accessed atomically: its address, type and the scope of the accesses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtomicObj {
    pub addr: Address,
    pub space: Space,
    pub elem: STy,
    pub scope: Scope,
}

struct LoopCtx {
    brk: String,
    /// `None` in a `switch` (whose `continue` belongs to the enclosing loop).
    cont: Option<String>,
}

/// An inlined function being lowered.
struct FnCtx {
    name: String,
    ret: Option<(Reg, VTy)>,
    end: String,
    /// User labels of this instance → (internal name, defined yet, first `goto`).
    labels_state: HashMap<String, (String, bool, SrcLoc)>,
    /// What the body assigns (for the value ranges of variables).
    assigned: inline::Assignments,
}

pub struct Lower<'a> {
    pub(crate) sink: &'a mut dyn Sink,
    pub(crate) dialect: Dialect,
    pub(crate) mode: Mode,
    scopes: Vec<Vec<(String, Binding)>>,
    funcs: HashMap<String, &'a Function>,
    loops: Vec<LoopCtx>,
    /// The kernel (first) and the inlined functions being lowered.
    fns: Vec<FnCtx>,
    /// Launch geometry, when known (kernels): the launch sizes fold into immediates.
    pub(crate) geometry: Option<Geometry>,
    /// Bytes of local memory allocated so far (kernels).
    pub(crate) local_bytes: u64,
    /// The labels of the `case`s of the `switch`es being lowered.
    case_labels: Vec<HashMap<*const Stmt, String>>,
    /// `__shared__` arrays allocated, by (function, name): one allocation per declaration.
    shared_allocs: HashMap<(String, String), Binding>,
    /// `extern __shared__` arrays the header sized: (name, byte offset, element type, length).
    pub(crate) dynamic_locals: Vec<(String, u32, STy, u64)>,
    /// Variables whose value is known to lie in `0 ..= bound` wherever they are read (kernels).
    var_bounds: HashMap<Reg, u64>,
    /// Labels made so far: with [`Sink::emitted`], the size of the code ([`MAX_CODE`]).
    labels_made: usize,
    /// Statements, expressions and conditions being lowered, one inside the other ([`MAX_NESTING`]).
    nesting: usize,
}

/// The deepest the lowering recursion goes: statements, expressions and conditions nested, an
/// inlined body counted from its call. The parser bounds one function's nesting
/// ([`crate::cfront::parse_expr::MAX_DEPTH`]); a chain of functions each calling the next stacks
/// their bodies (3,000 of them overflowed the stack). Four times the parser's bound, as one construct
/// takes a few levels here (a condition, then its value), so that no function the parser accepts
/// is refused for its own depth.
pub const MAX_NESTING: usize = 4 * crate::cfront::parse_expr::MAX_DEPTH;

/// The most instructions and labels one kernel or litmus thread lowers to. Device functions are
/// inlined at every call, so functions that call others twice multiply a small file into
/// exponentially much code; no hand-written kernel comes near this.
pub const MAX_CODE: usize = 1_000_000;

impl<'a> Lower<'a> {
    pub fn new(sink: &'a mut dyn Sink, dialect: Dialect, mode: Mode) -> Lower<'a> {
        Lower {
            sink,
            dialect,
            mode,
            scopes: vec![Vec::new()],
            funcs: HashMap::new(),
            loops: Vec::new(),
            fns: vec![FnCtx {
                name: String::new(),
                ret: None,
                end: String::new(),
                labels_state: HashMap::new(),
                assigned: inline::Assignments::default(),
            }],
            geometry: None,
            local_bytes: 0,
            case_labels: Vec::new(),
            shared_allocs: HashMap::new(),
            dynamic_locals: Vec::new(),
            var_bounds: HashMap::new(),
            labels_made: 0,
            nesting: 0,
        }
    }

    /// Functions the code may call (inlined).
    pub fn add_functions(&mut self, fns: impl IntoIterator<Item = &'a Function>) {
        for f in fns {
            self.funcs.insert(f.name.clone(), f);
        }
    }

    /// Binds `name` in the current scope.
    pub fn bind(&mut self, name: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .push((name.to_string(), b));
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Lowers a function body (the kernel's, or a litmus thread's) at the outermost level.
    pub fn body(&mut self, stmts: &[Stmt], end: SrcLoc) -> R<()> {
        let end_label = self.label();
        self.fns[0].end = end_label.clone();
        self.fns[0].assigned = inline::Assignments::of(stmts);
        self.push_scope();
        for s in stmts {
            self.stmt(s)?;
        }
        self.pop_scope();
        self.check_gotos()?;
        // A litmus thread's `return` ends it here (a kernel's is an exit instruction).
        self.place(&end_label, end)
    }

    // ---- emission helpers ----

    pub(crate) fn emit(&mut self, i: Inst, at: SrcLoc) {
        self.sink.emit(i, at);
    }

    pub(crate) fn temp(&mut self, ty: Ty) -> Reg {
        self.sink.temp(ty)
    }

    /// `hint` if given, else a fresh temporary.
    pub(crate) fn dst(&mut self, hint: Option<Reg>, ty: Ty) -> Reg {
        match hint {
            Some(r) => r,
            None => self.temp(ty),
        }
    }

    pub(crate) fn label(&mut self) -> String {
        self.labels_made += 1;
        self.sink.fresh_label()
    }

    /// An error once the code has grown past [`MAX_CODE`]; checked at every statement, so that
    /// an inlined body (statements) never runs far past it.
    pub(crate) fn check_code_size(&self, at: SrcLoc) -> R<()> {
        if self.sink.emitted() + self.labels_made > MAX_CODE {
            return Err(self.err(
                at,
                format!(
                    "the code grows past {MAX_CODE} instructions and labels here (device \
                     functions are inlined at every call: functions that call others multiply)"
                ),
            ));
        }
        Ok(())
    }

    /// Runs `f` one level deeper, or refuses past [`MAX_NESTING`] (a chain of inlined calls).
    pub(crate) fn nested<T>(&mut self, at: SrcLoc, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.nesting >= MAX_NESTING {
            return Err(self.err(
                at,
                format!(
                    "the code nests more than {MAX_NESTING} levels deep here, counting the bodies \
                     of the calls inlined on the way (functions are inlined: a long chain of \
                     functions each calling the next)"
                ),
            ));
        }
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    pub(crate) fn place(&mut self, l: &str, at: SrcLoc) -> R<()> {
        self.sink.define_label(l, at)
    }

    pub(crate) fn jump(&mut self, l: &str, at: SrcLoc) {
        self.sink.branch(l, None, at);
    }

    /// An operand as a register (an immediate is moved into a temporary).
    pub(crate) fn reg_of(&mut self, op: Operand, ty: Ty, at: SrcLoc) -> Reg {
        match op {
            Operand::Reg(r) => r,
            Operand::Imm(_) => {
                let t = self.temp(ty);
                self.emit(Inst::Mov { dst: t, src: op }, at);
                t
            }
        }
    }

    pub(crate) fn err(&self, at: SrcLoc, m: impl Into<String>) -> CError {
        CError::new(at, m)
    }
}

/// The value type a type name denotes.
pub fn vty_of(t: &TypeName, at: SrcLoc) -> R<VTy> {
    if t.reference {
        return Err(CError::new(at, "references are not supported here"));
    }
    let elem = match &t.spec.base {
        BaseTy::Scalar(s) => *s,
        BaseTy::Void if !t.ptrs.is_empty() => {
            return Err(CError::new(
                at,
                "`void *` is not supported: pointers need an element type",
            ))
        }
        BaseTy::Void => return Err(CError::new(at, "`void` has no values")),
        BaseTy::Auto => return Err(CError::new(at, "`auto` needs an initialiser")),
        BaseTy::AtomicRef { .. } => {
            return Err(CError::new(at, "an atomic_ref is not a value type here"))
        }
    };
    match t.ptrs.len() {
        0 => Ok(VTy::Scalar(elem)),
        1 => {
            if elem == STy::Bool {
                return Err(CError::new(at, "pointers to bool are not supported (bool has no width in memory here; use int)"));
            }
            let space =
                match t.spec.space {
                    Some((AddrSpace::Local, _)) => Space::Local,
                    Some((AddrSpace::Constant, l)) => {
                        return Err(CError::new(
                            l,
                            "`__constant` memory is not supported (use `__global const`)",
                        ))
                    }
                    Some((AddrSpace::Private, l)) => return Err(CError::new(
                        l,
                        "pointers to private memory are not supported: variables live in registers",
                    )),
                    _ => Space::Global,
                };
            Ok(VTy::Ptr(PtrTy {
                elem,
                space,
                atomic: t.spec.atomic,
                volatile: t.spec.volatile,
            }))
        }
        _ => Err(CError::new(at, "pointers to pointers are not supported")),
    }
}

impl Lower<'_> {
    /// Names every file may use without declaring them: limits and OpenCL's fence flags.
    pub(crate) fn builtin_constant(&self, name: &str, _at: SrcLoc) -> R<Option<RVal>> {
        let ocl = self.dialect == Dialect::OpenCl;
        Ok(Some(match name {
            "INT_MAX" => RVal::int(i32::MAX as i128, STy::I32),
            "INT_MIN" => RVal::int(i32::MIN as i128, STy::I32),
            "UINT_MAX" => RVal::int(u32::MAX as i128, STy::U32),
            "LLONG_MAX" | "LONG_MAX" => RVal::int(i64::MAX as i128, STy::I64),
            "LLONG_MIN" | "LONG_MIN" => RVal::int(i64::MIN as i128, STy::I64),
            "ULLONG_MAX" | "ULONG_MAX" => RVal::int(u64::MAX as i128, STy::U64),
            "CLK_LOCAL_MEM_FENCE" if ocl => RVal::int(1, STy::U32),
            "CLK_GLOBAL_MEM_FENCE" if ocl => RVal::int(2, STy::U32),
            "CLK_IMAGE_MEM_FENCE" if ocl => RVal::int(4, STy::U32),
            _ => return Ok(None),
        }))
    }
}
