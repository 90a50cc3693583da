//! IR → WGSL: the translation that lets a workload of the simulator run on a physical adapter.
//!
//! Models: every IR instruction WGSL can express with the same result — integer and f32 arithmetic on
//! 64-bit register bits, compares, selects, conversions, branches (any control-flow graph), the special
//! registers WGSL has builtins for, plain loads and stores, relaxed atomics (load, store, every
//! read-modify-write, compare-exchange), and work-group barriers over local and global memory.
//!
//! Rejected with the instruction's `file:line:col`, because WGSL cannot express them: acquire, release,
//! acq_rel and seq_cst orders; fences; barriers that order memory beyond the work-group; sub-group
//! barriers; the `clock` and `smid` registers; 64-bit registers or memory without `SHADER_INT64`;
//! 64-bit atomics without `SHADER_INT64_ATOMIC_ALL_OPS` (and on local memory); sub-group registers
//! without `SUBGROUP`.
//!
//! How the IR maps onto WGSL (each choice says why):
//! - **Memory.** All global buffers live in one storage buffer laid out exactly as the simulator lays
//!   them out (`machine::memory::GlobalMemory`: 256-byte aligned from `GLOBAL_BASE`), so that a register
//!   holding a buffer address has the same value on both sides and any address arithmetic works.
//!   The buffer is bound once per *view*: `array<u32>` for plain accesses (so that the driver may cache
//!   them in L1 as it would plain CUDA loads) and `array<atomic<…>>` for atomics. Views alias; results
//!   are checked after every dispatch, so a compiler that exploited the absence of an `Aliased`
//!   decoration would show up as a failed measurement, never as a number.
//! - **Registers** are function variables: `u32` when every definition provably fits in 32 bits (the
//!   common case: 32-bit arithmetic, loads, ids), `u64` otherwise. Register bits follow `ir::eval`:
//!   32-bit results are zero-extended.
//! - **Control flow.** The IR is unstructured, so each basic block becomes one `case` of a
//!   `loop { switch block { … } }` dispatcher, correct for any control-flow graph.
//! - **Barriers.** WGSL requires barriers in uniform control flow, which the dispatcher is not. A barrier
//!   instruction therefore ends the thread's inner dispatcher; all threads then meet at one barrier in
//!   the outer loop, whose exit condition comes from `workgroupUniformLoad` and is therefore uniform.
//!   Threads that exited keep arriving there, so an exit never blocks the rest (CUDA semantics).
//! - **Checks the simulator makes at run time** (out-of-bounds and misaligned addresses, integer
//!   division by zero) are made here too and reported through a fault buffer with the instruction's pc,
//!   the thread and the address. A per-thread step budget turns a spin loop that never ends into a
//!   fault instead of a hung device.
//! - **Emulations.** Atomic `inc`/`dec`, every f32 atomic and signed min/max on local memory have no
//!   WGSL atomic; they become compare-exchange loops, which are atomic but not timed like a native
//!   unit. Each one is listed in [`Translation::emulated`] and in the measurement file.
//!
//! Deviations from the simulator in edge cases (documented, not hidden): f32 min/max with a NaN
//! operand follow the driver; ids are computed in 32 bits (launches of more than 2^32 work-items are
//! rejected). (Integer to f32 conversions round once on both sides.)

mod inst;
mod memory;
mod module;

pub use super::walk::Shader;
use super::walk::Walk;
pub(crate) use super::walk::{err, uses_64};
use crate::ir::eval;
use crate::ir::*;
use crate::machine::memory::GLOBAL_BASE;
use crate::workload::Workload;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use thiserror::Error;
pub use wgpu::naga;

/// What the adapter offers that the translation may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caps {
    /// `u64`/`i64` in shaders (`SHADER_INT64`).
    pub int64: bool,
    /// Every 64-bit atomic (`SHADER_INT64_ATOMIC_ALL_OPS`).
    pub int64_atomics: bool,
    /// Sub-group builtins (`SUBGROUP`).
    pub subgroups: bool,
}

impl Caps {
    /// Everything, for checking translations with naga where no adapter exists.
    pub const ALL: Caps = Caps {
        int64: true,
        int64_atomics: true,
        subgroups: true,
    };
}

/// Options of one translation.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Basic-block steps one work-item may take before it faults (a hang guard).
    pub max_steps: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_steps: 1 << 26 }
    }
}

/// Why a workload cannot be translated.
#[derive(Debug, Clone, Error, PartialEq)]
#[error("{location}: {message}")]
pub struct TranslateError {
    /// `file:line:col` of the instruction (or `file:1:1` for the launch).
    pub location: String,
    pub message: String,
}

/// The storage bindings of the shader. The flat memory buffer is bound once per view the kernel uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Binding {
    /// `array<atomic<u32>, FAULT_WORDS>`: the fault record.
    Fault,
    /// `array<u32>`: plain accesses.
    Plain,
    /// `array<atomic<u32>>`: 32-bit atomics, unsigned min/max.
    Atomic32,
    /// `array<atomic<i32>>`: signed 32-bit min/max.
    AtomicI32,
    /// `array<atomic<u64>>`.
    Atomic64,
    /// `array<atomic<i64>>`: signed 64-bit min/max.
    AtomicI64,
}

impl Binding {
    /// Every view, in binding order.
    pub const ALL: [Binding; 6] = [
        Binding::Fault,
        Binding::Plain,
        Binding::Atomic32,
        Binding::AtomicI32,
        Binding::Atomic64,
        Binding::AtomicI64,
    ];

    pub fn index(self) -> u32 {
        self as u32
    }
    fn decl(self) -> &'static str {
        match self {
            Binding::Fault => "fault_record: array<atomic<u32>, 8>",
            Binding::Plain => "mem: array<u32>",
            Binding::Atomic32 => "mem_a: array<atomic<u32>>",
            Binding::AtomicI32 => "mem_ai: array<atomic<i32>>",
            Binding::Atomic64 => "mem_a64: array<atomic<u64>>",
            Binding::AtomicI64 => "mem_ai64: array<atomic<i64>>",
        }
    }
}

/// Words of the fault record: count, code, pc, detail (space << 8 | bytes), address low, address high,
/// thread, work-group.
pub const FAULT_WORDS: usize = 8;

/// What a fault record's code means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultCode {
    OutOfBounds = 1,
    Misaligned = 2,
    DivByZero = 3,
    StepLimit = 4,
    /// The device left the loop that runs the kernel's blocks before the kernel finished, without a
    /// fault of the kernel's: a driver that ends long-running shader loops (llvmpipe ends every
    /// loop after 65,535 iterations).
    LoopCut = 5,
}

impl FaultCode {
    pub fn from_u32(c: u32) -> Option<FaultCode> {
        Some(match c {
            1 => FaultCode::OutOfBounds,
            2 => FaultCode::Misaligned,
            3 => FaultCode::DivByZero,
            4 => FaultCode::StepLimit,
            5 => FaultCode::LoopCut,
            _ => return None,
        })
    }
}

/// A workload translated to WGSL, with everything the dispatch needs.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The shader: WGSL from [`translate`], SPIR-V from `super::spirv::translate`.
    pub shader: Shader,
    /// Bindings the shader declares (the fault record and the memory views), ascending.
    pub bindings: Vec<Binding>,
    /// Initial bytes of the flat memory (the simulator's layout, from `GLOBAL_BASE`).
    pub memory: Vec<u8>,
    /// Where each workload buffer lives in `memory`: (byte offset, bytes), same order as the buffers.
    pub buffers: Vec<(u64, u64)>,
    pub workgroup_size: [u32; 3],
    pub groups: [u32; 3],
    /// Features the shader needs.
    pub needs: Caps,
    /// Instructions emulated by a compare-exchange loop: `file:line:col: what`.
    pub emulated: Vec<String>,
    pub max_steps: u32,
    /// First instruction of each basic block (block ids index this).
    pub block_starts: Vec<usize>,
}

impl Translation {
    /// Decodes a non-empty fault record into the simulator's wording.
    pub fn describe_fault(&self, kernel: &Kernel, f: &[u32; FAULT_WORDS]) -> Option<String> {
        if f[0] == 0 {
            return None;
        }
        // A step-limit fault records the block it was in, every other fault the instruction.
        let pc = if f[1] == FaultCode::StepLimit as u32 || f[1] == FaultCode::LoopCut as u32 {
            self.block_starts
                .get(f[2] as usize)
                .copied()
                .unwrap_or(usize::MAX)
        } else {
            f[2] as usize
        };
        let at = kernel.where_is(pc);
        let space = if f[3] >> 8 == 1 { "local" } else { "global" };
        let bytes = f[3] & 0xFF;
        let addr = (f[5] as u64) << 32 | f[4] as u64;
        let what = match FaultCode::from_u32(f[1]) {
            Some(FaultCode::OutOfBounds) => {
                format!("out-of-bounds {space} access of {bytes} bytes at address {addr:#x}")
            }
            Some(FaultCode::Misaligned) => {
                format!("misaligned {space} access of {bytes} bytes at address {addr:#x}")
            }
            Some(FaultCode::DivByZero) => {
                "integer division by zero, or of the most negative value by -1".to_string()
            }
            Some(FaultCode::StepLimit) => format!(
                "exceeded {} basic-block steps (a loop that never ends?)",
                self.max_steps
            ),
            Some(FaultCode::LoopCut) => "the device stopped running the kernel here before it \
                 finished, without a fault of the kernel's: its driver ends long-running shader \
                 loops (llvmpipe ends every loop after 65,535 iterations), so a kernel this long \
                 cannot be measured on it"
                .to_string(),
            None => format!("unknown fault code {}", f[1]),
        };
        Some(format!(
            "{at}: {what} (thread {}, work-group {}; {} faulting work-item{})",
            f[6],
            f[7],
            f[0],
            if f[0] == 1 { "" } else { "s" }
        ))
    }
}

/// Value view of an operand: which WGSL type the expression has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    U32,
    I32,
    F32,
    U64,
    I64,
}

fn view_of(ty: Ty) -> View {
    match ty {
        Ty::U32 => View::U32,
        Ty::I32 => View::I32,
        Ty::F32 => View::F32,
        Ty::U64 => View::U64,
        Ty::I64 => View::I64,
    }
}

/// A value to assign to a register: a `u32` expression or a `u64` expression.
enum Val {
    W32(String),
    W64(String),
}

struct Gen<'a> {
    k: &'a Kernel,
    caps: Caps,
    wide: Vec<bool>,
    /// Leader instruction index → block id.
    block_of: std::collections::HashMap<usize, usize>,
    placed: Vec<(u64, u64)>,
    local_atomic: bool,
    local_words: u32,
    bindings: BTreeSet<Binding>,
    needs: Caps,
    emulated: Vec<String>,
    /// Which special-register builtins main needs.
    uses_subgroup: bool,
    out: String,
    tmp: u32,
}

/// Translates a workload. `caps` says what the adapter offers; use [`Caps::ALL`] to check a workload's
/// translatability independent of an adapter.
pub fn translate(wl: &Workload, caps: Caps, opts: Options) -> Result<Translation, TranslateError> {
    let k = &wl.kernel;
    let geo = wl.geometry;
    let walk = Walk::new(wl, "WGSL")?;
    let mut g = Gen {
        k,
        caps,
        wide: walk.wide.clone(),
        block_of: walk.block_of.clone(),
        placed: walk.placed(),
        local_atomic: walk.local_atomic(),
        local_words: k.local_bytes.div_ceil(4),
        bindings: BTreeSet::from([Binding::Fault]),
        needs: Caps::default(),
        emulated: Vec::new(),
        uses_subgroup: false,
        out: String::new(),
        tmp: 0,
    };
    if let Some(pc) = walk.first_wide_def() {
        // Name the first instruction that writes a 64-bit value into a register.
        g.need_int64(pc)?;
    }
    // Blocks first (they decide which bindings and builtins exist), then the module around them.
    let mut body = String::new();
    for (b, start, end) in walk.blocks() {
        g.out.clear();
        g.block(start, end)?;
        let _ = writeln!(body, "// {}\nfn block{b}() -> u32 {{", k.where_is(start));
        body.push_str(&g.out);
        body.push_str("}\n");
    }
    let wgsl = g.module(wl, &walk.params, &body, opts);
    Ok(Translation {
        shader: Shader::Wgsl(wgsl),
        bindings: g.bindings.into_iter().collect(),
        buffers: walk.buffers(wl.buffers.len()),
        memory: walk.mem.into_values(),
        workgroup_size: geo.group_size,
        groups: geo.groups,
        needs: g.needs,
        emulated: g.emulated,
        max_steps: opts.max_steps,
        block_starts: walk.leaders,
    })
}

impl Gen<'_> {
    fn need_int64(&mut self, pc: Option<usize>) -> Result<(), TranslateError> {
        if !self.caps.int64 {
            let at = match pc {
                Some(pc) => self.k.where_is(pc),
                None => format!("{}:1:1", self.k.file),
            };
            return Err(TranslateError {
                location: at,
                message: "needs 64-bit integers, which this adapter lacks (SHADER_INT64)".into(),
            });
        }
        self.needs.int64 = true;
        Ok(())
    }

    fn need_int64_atomics(&mut self, pc: usize) -> Result<(), TranslateError> {
        self.need_int64(Some(pc))?;
        if !self.caps.int64_atomics {
            return Err(err(
                self.k,
                pc,
                "64-bit atomics are not available on this adapter (SHADER_INT64_ATOMIC_ALL_OPS)",
            ));
        }
        self.needs.int64_atomics = true;
        Ok(())
    }

    fn reg(&self, r: Reg) -> String {
        format!("r{r}")
    }

    /// An operand as an expression of `view`'s type.
    fn opnd(&self, o: Operand, view: View) -> String {
        match o {
            Operand::Reg(r) => {
                let w = self.wide[r as usize];
                let n = self.reg(r);
                match (view, w) {
                    (View::U32, false) => n,
                    (View::U32, true) => format!("u32({n})"),
                    (View::I32, false) => format!("bitcast<i32>({n})"),
                    (View::I32, true) => format!("bitcast<i32>(u32({n}))"),
                    (View::F32, false) => format!("bitcast<f32>({n})"),
                    (View::F32, true) => format!("bitcast<f32>(u32({n}))"),
                    (View::U64, false) => format!("u64({n})"),
                    (View::U64, true) => n,
                    (View::I64, false) => format!("bitcast<i64>(u64({n}))"),
                    (View::I64, true) => format!("bitcast<i64>({n})"),
                }
            }
            Operand::Imm(v) => {
                let lo = v as u32;
                match view {
                    View::U32 => format!("{lo}u"),
                    View::I32 => format!("bitcast<i32>({lo}u)"),
                    View::F32 => format!("bitcast<f32>({lo}u)"),
                    View::U64 => format!("{v}lu"),
                    View::I64 => format!("bitcast<i64>({v}lu)"),
                }
            }
        }
    }

    fn assign(&mut self, ind: &str, dst: Reg, v: Val) {
        let n = self.reg(dst);
        let e = match (v, self.wide[dst as usize]) {
            (Val::W32(e), false) | (Val::W64(e), true) => e,
            (Val::W32(e), true) => format!("u64({e})"),
            // Only reached when the analysis proved the value fits (e.g. u32 → u64 conversion).
            (Val::W64(e), false) => format!("u32({e})"),
        };
        let _ = writeln!(self.out, "{ind}{n} = {e};");
    }

    fn fresh(&mut self) -> String {
        self.tmp += 1;
        format!("t{}", self.tmp)
    }
}

pub(crate) fn rmw_name(op: RmwOp) -> &'static str {
    match op {
        RmwOp::Add => "add",
        RmwOp::Sub => "sub",
        RmwOp::And => "and",
        RmwOp::Or => "or",
        RmwOp::Xor => "xor",
        RmwOp::Min => "min",
        RmwOp::Max => "max",
        RmwOp::Exch => "exch",
        RmwOp::Inc => "inc",
        RmwOp::Dec => "dec",
    }
}

/// The new value of an emulated read-modify-write, as the simulator's atomic units compute it
/// (`ir::eval::rmw`; which f32 operations act on the float: `eval::float_rmw`).
fn rmw_expr(op: RmwOp, ty: Ty, old: &str, v: &str) -> String {
    let w64 = ty.width() == Width::B64;
    let (u, one, zero) = if w64 {
        ("u64", "1lu", "0lu")
    } else {
        ("u32", "1u", "0u")
    };
    let s = if w64 { "i64" } else { "i32" };
    match (ty, op) {
        // The simulator leaves f32 memory unchanged for bitwise operations and inc/dec.
        (Ty::F32, op) if !eval::float_rmw(op) => old.to_string(),
        (Ty::F32, RmwOp::Add) => format!("bitcast<u32>(bitcast<f32>({old}) + bitcast<f32>({v}))"),
        (Ty::F32, RmwOp::Sub) => format!("bitcast<u32>(bitcast<f32>({old}) - bitcast<f32>({v}))"),
        (Ty::F32, RmwOp::Min) => {
            format!("bitcast<u32>(min(bitcast<f32>({old}), bitcast<f32>({v})))")
        }
        (Ty::F32, RmwOp::Max) => {
            format!("bitcast<u32>(max(bitcast<f32>({old}), bitcast<f32>({v})))")
        }
        (Ty::F32, RmwOp::Exch) => v.to_string(),
        (Ty::F32, _) => unreachable!("eval::float_rmw lists the f32 operations"),
        (_, RmwOp::Inc) => format!("select({old} + {one}, {zero}, {old} >= {v})"),
        (_, RmwOp::Dec) => {
            format!("select({old} - {one}, {v}, {old} == {zero} || {old} > {v})")
        }
        (_, RmwOp::Min) if matches!(ty, Ty::I32 | Ty::I64) => {
            format!("bitcast<{u}>(min(bitcast<{s}>({old}), bitcast<{s}>({v})))")
        }
        (_, RmwOp::Max) if matches!(ty, Ty::I32 | Ty::I64) => {
            format!("bitcast<{u}>(max(bitcast<{s}>({old}), bitcast<{s}>({v})))")
        }
        (_, RmwOp::Min) => format!("min({old}, {v})"),
        (_, RmwOp::Max) => format!("max({old}, {v})"),
        (_, RmwOp::Add) => format!("{old} + {v}"),
        (_, RmwOp::Sub) => format!("{old} - {v}"),
        (_, RmwOp::And) => format!("{old} & {v}"),
        (_, RmwOp::Or) => format!("{old} | {v}"),
        (_, RmwOp::Xor) => format!("{old} ^ {v}"),
        (_, RmwOp::Exch) => v.to_string(),
    }
}

/// Parses and validates WGSL with naga (the front end wgpu uses), independent of any adapter.
pub fn validate(wgsl: &str) -> Result<(), String> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let mut v = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    );
    v.validate(&module)
        .map_err(|e| e.emit_to_string(wgsl))
        .map(|_| ())
}
