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
//!   common case: 32-bit arithmetic, loads, ids), `u64` otherwise. Register bits follow `machine::alu`:
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
//! Deviations from the simulator in edge cases (documented, not hidden): int→f32 conversion rounds
//! once (the simulator goes through f64); f32 min/max with a NaN operand follow the driver; ids are
//! computed in 32 bits (launches of more than 2^32 work-items are rejected).

use crate::ir::*;
use crate::machine::alu;
use crate::machine::memory::{GlobalMemory, GLOBAL_BASE};
use crate::workload::{ParamValue, Workload};
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
}

impl FaultCode {
    pub fn from_u32(c: u32) -> Option<FaultCode> {
        Some(match c {
            1 => FaultCode::OutOfBounds,
            2 => FaultCode::Misaligned,
            3 => FaultCode::DivByZero,
            4 => FaultCode::StepLimit,
            _ => return None,
        })
    }
}

/// A workload translated to WGSL, with everything the dispatch needs.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The WGSL module (empty when `spirv` holds the shader).
    pub wgsl: String,
    /// The SPIR-V module (`super::spirv::translate`), passed through to a Vulkan driver; `None` for WGSL.
    pub spirv: Option<Vec<u32>>,
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
        let pc = if f[1] == FaultCode::StepLimit as u32 {
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
            Some(FaultCode::DivByZero) => "integer division by zero".to_string(),
            Some(FaultCode::StepLimit) => format!(
                "exceeded {} basic-block steps (a loop that never ends?)",
                self.max_steps
            ),
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

/// Which registers need 64 bits: a register is narrow when every value written to it fits in 32 bits.
pub(crate) fn wide_registers(k: &Kernel, params: &[(Reg, u64)]) -> Vec<bool> {
    let mut wide = vec![false; k.num_regs()];
    for &(r, v) in params {
        if v > u32::MAX as u64 {
            wide[r as usize] = true;
        }
    }
    let fits_op = |o: Operand, wide: &[bool]| match o {
        Operand::Reg(r) => !wide[r as usize],
        Operand::Imm(v) => v <= u32::MAX as u64,
    };
    loop {
        let mut changed = false;
        for inst in &k.insts {
            let (dst, fits) = match *inst {
                Inst::Mov { dst, src } => (dst, fits_op(src, &wide)),
                Inst::ReadSpecial { dst, .. } => (dst, true),
                Inst::Alu { dst, ty, .. } => (dst, ty.width() == Width::B32),
                Inst::Cmp { dst, .. } => (dst, true),
                Inst::Select { dst, a, b, .. } => (dst, fits_op(a, &wide) && fits_op(b, &wide)),
                Inst::Cvt { dst, from, to, .. } => (
                    dst,
                    to.width() == Width::B32 || (from == Ty::U32 && !to.is_float()),
                ),
                Inst::Load { dst, ty, .. } => (dst, ty.width() == Width::B32),
                Inst::Rmw {
                    dst: Some(dst), ty, ..
                }
                | Inst::Cas {
                    dst: Some(dst), ty, ..
                } => (dst, ty.width() == Width::B32),
                _ => continue,
            };
            if !fits && !wide[dst as usize] {
                wide[dst as usize] = true;
                changed = true;
            }
        }
        if !changed {
            return wide;
        }
    }
}

/// Basic-block leaders: instruction 0, every branch target, every instruction after a branch, exit or
/// barrier. Returns the sorted leader list.
pub(crate) fn leaders(k: &Kernel) -> Vec<usize> {
    let n = k.insts.len();
    let mut set = BTreeSet::new();
    set.insert(0usize);
    for (i, inst) in k.insts.iter().enumerate() {
        match *inst {
            Inst::Branch { target, .. } => {
                if (target as usize) < n {
                    set.insert(target as usize);
                }
                set.insert(i + 1);
            }
            Inst::Exit | Inst::Barrier { .. } => {
                set.insert(i + 1);
            }
            _ => {}
        }
    }
    set.into_iter().filter(|&i| i < n).collect()
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

fn err(k: &Kernel, pc: usize, message: impl Into<String>) -> TranslateError {
    TranslateError {
        location: k.where_is(pc),
        message: message.into(),
    }
}

/// The launch checks and inputs both translations share (`what`: "WGSL" or "SPIR-V"): ids and
/// addresses fit 32 bits, the buffers' layout, and each parameter's register and value.
pub(crate) fn check_launch(
    wl: &Workload,
    what: &str,
) -> Result<(GlobalMemory, Vec<(Reg, u64)>), TranslateError> {
    let k = &wl.kernel;
    let launch = format!("{}:1:1", k.file);
    let launch_err = |message: String| TranslateError {
        location: launch.clone(),
        message,
    };
    let geo = wl.geometry;
    if geo.group_threads() == 0 || geo.num_groups() == 0 {
        return Err(launch_err("the launch has no work-items".into()));
    }
    if geo.num_groups() * geo.group_threads() as u64 > u32::MAX as u64 {
        return Err(launch_err(format!(
            "{} work-items: the {what} translation computes ids in 32 bits (at most {})",
            geo.num_groups() * geo.group_threads() as u64,
            u32::MAX
        )));
    }
    let mem = GlobalMemory::new(&wl.buffers, 0);
    if GLOBAL_BASE + mem.len() > u32::MAX as u64 {
        return Err(launch_err(format!(
            "the buffers take {} bytes; the {what} translation addresses at most {} bytes",
            mem.len(),
            u32::MAX as u64 - GLOBAL_BASE
        )));
    }
    let mut params = Vec::new();
    for p in &wl.params {
        let v = match &p.value {
            ParamValue::Scalar(v) => *v,
            ParamValue::BufferAddr(b) => mem.base_of(b).ok_or_else(|| {
                launch_err(format!("parameter {} names unknown buffer {b}", p.name))
            })?,
        };
        if p.reg as usize >= k.num_regs() {
            return Err(launch_err(format!(
                "parameter {} is register {}, but the kernel has {} registers",
                p.name,
                p.reg,
                k.num_regs()
            )));
        }
        params.push((p.reg, v));
    }
    Ok((mem, params))
}

/// Translates a workload. `caps` says what the adapter offers; use [`Caps::ALL`] to check a workload's
/// translatability independent of an adapter.
pub fn translate(wl: &Workload, caps: Caps, opts: Options) -> Result<Translation, TranslateError> {
    let k = &wl.kernel;
    let geo = wl.geometry;
    let (mem, params) = check_launch(wl, "WGSL")?;
    let leaders = leaders(k);
    let block_of = leaders.iter().enumerate().map(|(b, &i)| (i, b)).collect();
    let local_atomic = k.insts.iter().any(|i| match i {
        Inst::Load { space, ord, .. } => *space == Space::Local && *ord != LoadOrd::Plain,
        Inst::Store { space, ord, .. } => *space == Space::Local && *ord != StoreOrd::Plain,
        Inst::Rmw { space, .. } | Inst::Cas { space, .. } => *space == Space::Local,
        _ => false,
    });
    let mut g = Gen {
        k,
        caps,
        wide: wide_registers(k, &params),
        block_of,
        placed: mem
            .placed
            .iter()
            .map(|p| (p.base, p.bytes.max(1)))
            .collect(),
        local_atomic,
        local_words: k.local_bytes.div_ceil(4),
        bindings: BTreeSet::from([Binding::Fault]),
        needs: Caps::default(),
        emulated: Vec::new(),
        uses_subgroup: false,
        out: String::new(),
        tmp: 0,
    };
    if let Some(r) = g.wide.iter().position(|&w| w) {
        // Name the first instruction that writes a 64-bit value into a register.
        let pc = k.insts.iter().position(|i| dst_of(i) == Some(r as Reg));
        g.need_int64(pc)?;
    }
    // Blocks first (they decide which bindings and builtins exist), then the module around them.
    let mut body = String::new();
    for (b, &start) in leaders.iter().enumerate() {
        let end = leaders.get(b + 1).copied().unwrap_or(k.insts.len());
        g.out.clear();
        g.block(start, end)?;
        let _ = writeln!(body, "// {}\nfn block{b}() -> u32 {{", k.where_is(start));
        body.push_str(&g.out);
        body.push_str("}\n");
    }
    let wgsl = g.module(wl, &params, &body, opts);
    let buffers = mem
        .placed
        .iter()
        .take(wl.buffers.len())
        .map(|p| (p.base - GLOBAL_BASE, p.bytes))
        .collect();
    Ok(Translation {
        wgsl,
        spirv: None,
        bindings: g.bindings.into_iter().collect(),
        memory: mem.into_values(),
        buffers,
        workgroup_size: geo.group_size,
        groups: geo.groups,
        needs: g.needs,
        emulated: g.emulated,
        max_steps: opts.max_steps,
        block_starts: leaders,
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

    /// Whether an instruction needs 64-bit WGSL integers.
    fn uses_64(inst: &Inst) -> bool {
        match inst {
            Inst::Alu { ty, .. } | Inst::Cmp { ty, .. } => ty.width() == Width::B64,
            Inst::Cvt { from, to, .. } => from.width() == Width::B64 || to.width() == Width::B64,
            Inst::Load { ty, .. }
            | Inst::Store { ty, .. }
            | Inst::Rmw { ty, .. }
            | Inst::Cas { ty, .. } => ty.width() == Width::B64,
            _ => false,
        }
    }

    fn block(&mut self, start: usize, end: usize) -> Result<(), TranslateError> {
        let ind = "  ";
        for pc in start..end {
            let inst = &self.k.insts[pc];
            if Self::uses_64(inst) {
                self.need_int64(Some(pc))?;
            }
            self.inst(pc, inst, ind)?;
        }
        // Exits, barriers and branches name their successors; anything else falls through into the
        // next block (or off the end, which exits as in the simulator).
        if !matches!(
            self.k.insts[end - 1],
            Inst::Exit | Inst::Barrier { .. } | Inst::Branch { .. }
        ) {
            let next = self.target(end as u32);
            let _ = writeln!(self.out, "{ind}return {next};");
        }
        Ok(())
    }

    /// The block id (or `DONE`) that continues at instruction `t`.
    fn target(&self, t: u32) -> String {
        match self.block_of.get(&(t as usize)) {
            Some(b) => format!("{b}u"),
            None => "DONE".to_string(),
        }
    }

    fn inst(&mut self, pc: usize, inst: &Inst, ind: &str) -> Result<(), TranslateError> {
        match *inst {
            Inst::Mov { dst, src } => {
                let v = if self.wide[dst as usize] {
                    Val::W64(self.opnd(src, View::U64))
                } else {
                    Val::W32(self.opnd(src, View::U32))
                };
                self.assign(ind, dst, v);
            }
            Inst::ReadSpecial { dst, which } => {
                let e = self.special(pc, which)?;
                self.assign(ind, dst, Val::W32(e));
            }
            Inst::Alu { op, ty, dst, a, b } => self.alu(pc, ind, op, ty, dst, a, b),
            Inst::Cmp { op, ty, dst, a, b } => {
                let v = view_of(ty);
                let o = match op {
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                };
                let e = format!(
                    "select(0u, 1u, {} {o} {})",
                    self.opnd(a, v),
                    self.opnd(b, v)
                );
                self.assign(ind, dst, Val::W32(e));
            }
            Inst::Select { dst, cond, a, b } => {
                let c = self.opnd(
                    Operand::Reg(cond),
                    if self.wide[cond as usize] {
                        View::U64
                    } else {
                        View::U32
                    },
                );
                let zero = if self.wide[cond as usize] {
                    "0lu"
                } else {
                    "0u"
                };
                let v = if self.wide[dst as usize] {
                    Val::W64(format!(
                        "select({}, {}, {c} != {zero})",
                        self.opnd(b, View::U64),
                        self.opnd(a, View::U64)
                    ))
                } else {
                    Val::W32(format!(
                        "select({}, {}, {c} != {zero})",
                        self.opnd(b, View::U32),
                        self.opnd(a, View::U32)
                    ))
                };
                self.assign(ind, dst, v);
            }
            Inst::Cvt { dst, src, from, to } => {
                let s = Operand::Reg(src);
                let v = match (from, to) {
                    (Ty::F32, Ty::F32) => Val::W32(self.opnd(s, View::U32)),
                    (_, Ty::F32) => Val::W32(format!(
                        "bitcast<u32>(f32({}))",
                        self.opnd(s, view_of(from))
                    )),
                    (Ty::F32, Ty::U32) => Val::W32(format!("u32({})", self.opnd(s, View::F32))),
                    (Ty::F32, Ty::I32) => {
                        Val::W32(format!("bitcast<u32>(i32({}))", self.opnd(s, View::F32)))
                    }
                    (Ty::F32, Ty::U64) => Val::W64(format!("u64({})", self.opnd(s, View::F32))),
                    (Ty::F32, Ty::I64) => {
                        Val::W64(format!("bitcast<u64>(i64({}))", self.opnd(s, View::F32)))
                    }
                    (_, Ty::U32 | Ty::I32) => Val::W32(self.opnd(s, View::U32)),
                    (Ty::I32, _) => {
                        Val::W64(format!("bitcast<u64>(i64({}))", self.opnd(s, View::I32)))
                    }
                    (Ty::U32, _) => Val::W64(format!("u64({})", self.opnd(s, View::U32))),
                    (_, _) => Val::W64(self.opnd(s, View::U64)),
                };
                self.assign(ind, dst, v);
            }
            Inst::Branch { target, cond } => {
                let t = self.target(target);
                match cond {
                    None => {
                        let _ = writeln!(self.out, "{ind}return {t};");
                    }
                    Some((r, nz)) => {
                        let (c, zero) = if self.wide[r as usize] {
                            (self.opnd(Operand::Reg(r), View::U64), "0lu")
                        } else {
                            (self.opnd(Operand::Reg(r), View::U32), "0u")
                        };
                        let o = if nz { "!=" } else { "==" };
                        let f = self.target(pc as u32 + 1);
                        let _ = writeln!(self.out, "{ind}return select({f}, {t}, {c} {o} {zero});");
                    }
                }
            }
            Inst::Exit => {
                let _ = writeln!(self.out, "{ind}return DONE;");
            }
            Inst::Barrier {
                kind,
                spaces,
                scope,
            } => {
                if let BarrierKind::Named(b) = kind {
                    if b != (CtaBarrier {
                        id: 0,
                        threads: None,
                        op: BarrierOp::Sync,
                    }) {
                        return Err(err(
                            self.k,
                            pc,
                            "PTX named barriers, thread counts, bar.arrive and bar.red are not translated \
                             to WGSL (it has one work-group barrier)",
                        ));
                    }
                }
                if kind == BarrierKind::SubGroup {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group barriers are not translated to WGSL (they must be reached in \
                         uniform control flow, which the translation cannot promise)",
                    ));
                }
                if scope > Scope::WorkGroup && spaces.global {
                    return Err(err(
                        self.k,
                        pc,
                        format!(
                            "a barrier that orders global memory at {scope} scope: WGSL's \
                             storageBarrier orders memory within the work-group only"
                        ),
                    ));
                }
                let next = self.target(pc as u32 + 1);
                let _ = writeln!(self.out, "{ind}at_barrier = true;\n{ind}return {next};");
            }
            Inst::Fence { ord, scope, .. } => {
                return Err(err(
                    self.k,
                    pc,
                    format!(
                        "fence.{} at {scope} scope: WGSL has no fences (only relaxed atomics and \
                         barriers); it needs SPIR-V with the Vulkan memory model",
                        ord.order().name()
                    ),
                ));
            }
            Inst::Compute { .. } => {
                return Err(err(
                    self.k,
                    pc,
                    "a timing-only trace instruction has no WGSL equivalent",
                ));
            }
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                ..
            } => {
                if let Some(o) = ord.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "load", o));
                }
                let atomic = ord != LoadOrd::Plain;
                let w = ty.width();
                if atomic && w == Width::B64 {
                    self.need_int64_atomics(pc)?;
                    if space == Space::Local {
                        return Err(self.local64(pc));
                    }
                }
                let idx = self.address(pc, ind, space, addr, w)?;
                let e = self.read(space, &idx, w, atomic);
                let v = match w {
                    Width::B32 => Val::W32(e),
                    Width::B64 => Val::W64(e),
                };
                self.assign(ind, dst, v);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                ..
            } => {
                if let Some(o) = ord.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "store", o));
                }
                let atomic = ord != StoreOrd::Plain;
                let w = ty.width();
                if atomic && w == Width::B64 {
                    self.need_int64_atomics(pc)?;
                    if space == Space::Local {
                        return Err(self.local64(pc));
                    }
                }
                let idx = self.address(pc, ind, space, addr, w)?;
                self.write(ind, space, &idx, w, atomic, src);
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                ..
            } => {
                if ord != RmwOrd::Relaxed {
                    return Err(self.order_err(pc, "atomic", ord.order()));
                }
                self.rmw(pc, ind, dst, op, space, addr, operand, ty)?;
            }
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                failure,
                weak,
                ..
            } => {
                if success != RmwOrd::Relaxed {
                    return Err(self.order_err(pc, "compare-exchange", success.order()));
                }
                if let Some(o) = failure.atomic_order().filter(|o| *o != MemOrder::Relaxed) {
                    return Err(self.order_err(pc, "compare-exchange failure", o));
                }
                self.cas(pc, ind, dst, space, addr, expected, desired, ty, weak)?;
            }
        }
        Ok(())
    }

    fn order_err(&self, pc: usize, what: &str, o: MemOrder) -> TranslateError {
        err(
            self.k,
            pc,
            format!(
                "{} {what}: WGSL atomics are relaxed only; {} ordering needs SPIR-V with the Vulkan \
                 memory model",
                o.name(),
                o.name()
            ),
        )
    }

    fn local64(&self, pc: usize) -> TranslateError {
        err(
            self.k,
            pc,
            "64-bit atomics on local memory are not translated (local memory is one array of 32-bit \
             words)",
        )
    }

    fn special(&mut self, pc: usize, s: Special) -> Result<String, TranslateError> {
        let d = |d: Dim| ["x", "y", "z"][d.index()];
        Ok(match s {
            Special::GlobalId(x) => format!("p_gid.{}", d(x)),
            Special::LocalId(x) => format!("p_lid.{}", d(x)),
            Special::GroupId(x) => format!("p_wid.{}", d(x)),
            Special::GlobalSize(x) => format!("(p_nwg.{0} * WG_SIZE.{0})", d(x)),
            Special::LocalSize(x) => format!("WG_SIZE.{}", d(x)),
            Special::NumGroups(x) => format!("p_nwg.{}", d(x)),
            Special::GlobalLinearId => {
                "(p_gid.x + p_nwg.x * WG_SIZE.x * (p_gid.y + p_nwg.y * WG_SIZE.y * p_gid.z))".into()
            }
            Special::LocalLinearId => "p_lidx".into(),
            Special::GroupLinearId => "cur_group".into(),
            Special::Lane | Special::SubGroupId | Special::SubGroupSize | Special::NumSubGroups => {
                if !self.caps.subgroups {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group registers need the SUBGROUP feature, which this adapter lacks",
                    ));
                }
                self.needs.subgroups = true;
                self.uses_subgroup = true;
                match s {
                    Special::Lane => "p_sg_lane",
                    Special::SubGroupSize => "p_sg_size",
                    Special::SubGroupId => "p_sg_id",
                    _ => "p_sg_count",
                }
                .into()
            }
            Special::SmId => {
                return Err(err(self.k, pc, "WGSL has no register for the SM id"));
            }
            Special::Clock => {
                return Err(err(self.k, pc, "WGSL has no clock register"));
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn alu(&mut self, pc: usize, ind: &str, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) {
        // The simulator's semantics (`machine::alu`): f32 bit operations act on the bits.
        let ty = alu::operand_ty(op, ty);
        let v = view_of(ty);
        let (x, y) = (self.opnd(a, v), self.opnd(b, v));
        // Shift amounts wrap at the width, as in the simulator (`alu::shift_mask`).
        let bits = alu::shift_mask(ty);
        let shift = match ty {
            Ty::U64 | Ty::I64 => format!("u32({} & {bits}lu)", self.opnd(b, View::U64)),
            _ => format!("({} & {bits}u)", self.opnd(b, View::U32)),
        };
        let e = match op {
            AluOp::Add => format!("{x} + {y}"),
            AluOp::Sub => format!("{x} - {y}"),
            AluOp::Mul => format!("{x} * {y}"),
            AluOp::Div | AluOp::Rem if ty.is_float() => {
                let o = if op == AluOp::Div { "/" } else { "%" };
                format!("{x} {o} {y}")
            }
            AluOp::Div | AluOp::Rem => {
                // The simulator's faults (`alu::divide_faults`): zero divisor, and MIN / -1 for
                // signed types.
                let (zero, min, m1) = match ty {
                    Ty::U32 => ("0u", None, ""),
                    Ty::U64 => ("0lu", None, ""),
                    Ty::I32 => ("0i", Some("-2147483647i - 1i"), "-1i"),
                    _ => ("0li", Some("-9223372036854775807li - 1li"), "-1li"),
                };
                let bad = match min {
                    None => format!("{y} == {zero}"),
                    Some(min) => format!("{y} == {zero} || ({x} == {min} && {y} == {m1})"),
                };
                let _ = writeln!(
                    self.out,
                    "{ind}if ({bad}) {{ fault({}u, {pc}u, 0u, 0u, 0u); }}",
                    FaultCode::DivByZero as u32
                );
                let o = if op == AluOp::Div { "/" } else { "%" };
                format!("{x} {o} {y}")
            }
            AluOp::Min => format!("min({x}, {y})"),
            AluOp::Max => format!("max({x}, {y})"),
            AluOp::And => format!("{x} & {y}"),
            AluOp::Or => format!("{x} | {y}"),
            AluOp::Xor => format!("{x} ^ {y}"),
            AluOp::Shl => format!("{x} << {shift}"),
            AluOp::Shr => format!("{x} >> {shift}"),
        };
        let v = match ty {
            Ty::U32 => Val::W32(e),
            Ty::I32 => Val::W32(format!("bitcast<u32>({e})")),
            Ty::F32 => Val::W32(format!("bitcast<u32>({e})")),
            Ty::U64 => Val::W64(e),
            Ty::I64 => Val::W64(format!("bitcast<u64>({e})")),
        };
        self.assign(ind, dst, v);
    }

    /// Emits the address computation and its checks; returns the name of the word index (`u32`).
    fn address(
        &mut self,
        pc: usize,
        ind: &str,
        space: Space,
        addr: Address,
        w: Width,
    ) -> Result<String, TranslateError> {
        let bytes = w.bytes();
        let a = self.fresh();
        let ok = self.fresh();
        // The byte address as u32 plus whether it was representable; the simulator computes it as a
        // wrapping u64 sum, and an address that does not fit 32 bits is out of bounds on both sides.
        let base_wide = matches!(addr.base, Operand::Reg(r) if self.wide[r as usize])
            || matches!(addr.base, Operand::Imm(v) if v > u32::MAX as u64);
        let (ahi, fits) = if base_wide {
            self.need_int64(Some(pc))?;
            let a64 = self.fresh();
            let _ = writeln!(
                self.out,
                "{ind}let {a64} = {} + {}lu;",
                self.opnd(addr.base, View::U64),
                addr.offset as u64
            );
            let _ = writeln!(self.out, "{ind}let {a} = u32({a64});");
            (
                format!("u32({a64} >> 32u)"),
                format!("({a64} >> 32u) == 0lu"),
            )
        } else {
            let b = self.opnd(addr.base, View::U32);
            let off = addr.offset;
            if (0..=u32::MAX as i64).contains(&off) {
                let _ = writeln!(self.out, "{ind}let {a} = {b} + {off}u;");
                (format!("select(0u, 1u, {a} < {b})"), format!("{a} >= {b}"))
            } else if (-(u32::MAX as i64)..0).contains(&off) {
                let n = off.unsigned_abs();
                let _ = writeln!(self.out, "{ind}let {a} = {b} - {n}u;");
                (
                    format!("select(0u, 0xFFFFFFFFu, {b} < {n}u)"),
                    format!("{b} >= {n}u"),
                )
            } else {
                let _ = writeln!(self.out, "{ind}let {a} = {b} + {}u;", off as u64 as u32);
                ("0xFFFFFFFFu".into(), "false".into())
            }
        };
        let (in_range, code_space) = match space {
            Space::Global => (format!("in_global{bytes}({a})"), 0u32),
            Space::Local => {
                let lb = self.k.local_bytes;
                let c = if lb >= bytes {
                    format!("{a} <= {}u", lb - bytes)
                } else {
                    "false".into()
                };
                (c, 1)
            }
        };
        let detail = code_space << 8 | bytes;
        let _ = writeln!(self.out, "{ind}let {ok} = {fits} && {in_range};");
        let _ = writeln!(
            self.out,
            "{ind}if (!{ok}) {{ fault({}u, {pc}u, {detail}u, {a}, {ahi}); }}",
            FaultCode::OutOfBounds as u32
        );
        let _ = writeln!(
            self.out,
            "{ind}if (({a} & {}u) != 0u) {{ fault({}u, {pc}u, {detail}u, {a}, 0u); }}",
            bytes - 1,
            FaultCode::Misaligned as u32
        );
        let idx = self.fresh();
        match space {
            Space::Global => {
                let _ = writeln!(self.out, "{ind}let {idx} = ({a} - {GLOBAL_BASE}u) >> 2u;");
            }
            Space::Local => {
                let _ = writeln!(self.out, "{ind}let {idx} = {a} >> 2u;");
            }
        }
        Ok(idx)
    }

    /// A read of `w` at word index `idx` (an expression of type u32 or u64).
    fn read(&mut self, space: Space, idx: &str, w: Width, atomic: bool) -> String {
        match (space, w) {
            (Space::Global, Width::B32) if atomic => {
                self.bindings.insert(Binding::Atomic32);
                format!("atomicLoad(&mem_a[{idx}])")
            }
            (Space::Global, Width::B64) if atomic => {
                self.bindings.insert(Binding::Atomic64);
                format!("atomicLoad(&mem_a64[{idx} >> 1u])")
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Plain);
                format!("mem[{idx}]")
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Plain);
                format!("(u64(mem[{idx}]) | (u64(mem[{idx} + 1u]) << 32u))")
            }
            (Space::Local, Width::B32) => self.lword(idx),
            (Space::Local, Width::B64) => {
                let lo = self.lword(idx);
                let hi = self.lword(&format!("{idx} + 1u"));
                format!("(u64({lo}) | (u64({hi}) << 32u))")
            }
        }
    }

    /// A local word read.
    fn lword(&self, idx: &str) -> String {
        if self.local_atomic {
            format!("atomicLoad(&lmem[{idx}])")
        } else {
            format!("lmem[{idx}]")
        }
    }

    fn lstore(&self, idx: &str, v: &str) -> String {
        if self.local_atomic {
            format!("atomicStore(&lmem[{idx}], {v});")
        } else {
            format!("lmem[{idx}] = {v};")
        }
    }

    fn write(&mut self, ind: &str, space: Space, idx: &str, w: Width, atomic: bool, src: Operand) {
        let s = match (space, w) {
            (Space::Global, Width::B32) if atomic => {
                self.bindings.insert(Binding::Atomic32);
                format!("atomicStore(&mem_a[{idx}], {});", self.opnd(src, View::U32))
            }
            (Space::Global, Width::B64) if atomic => {
                self.bindings.insert(Binding::Atomic64);
                format!(
                    "atomicStore(&mem_a64[{idx} >> 1u], {});",
                    self.opnd(src, View::U64)
                )
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Plain);
                format!("mem[{idx}] = {};", self.opnd(src, View::U32))
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Plain);
                let v = self.opnd(src, View::U64);
                format!("mem[{idx}] = u32({v}); mem[{idx} + 1u] = u32({v} >> 32u);")
            }
            (Space::Local, Width::B32) => self.lstore(idx, &self.opnd(src, View::U32)),
            (Space::Local, Width::B64) => {
                let v = self.opnd(src, View::U64);
                format!(
                    "{} {}",
                    self.lstore(idx, &format!("u32({v})")),
                    self.lstore(&format!("{idx} + 1u"), &format!("u32({v} >> 32u)"))
                )
            }
        };
        let _ = writeln!(self.out, "{ind}if (f_code == 0u) {{ {s} }}");
    }

    /// The WGSL pointer of an atomic of width `w` at word index `idx`, and the binding it uses.
    fn atomic_ptr(&mut self, space: Space, idx: &str, w: Width, signed_minmax: bool) -> String {
        match (space, w) {
            (Space::Local, _) => format!("&lmem[{idx}]"),
            (Space::Global, Width::B32) if signed_minmax => {
                self.bindings.insert(Binding::AtomicI32);
                format!("&mem_ai[{idx}]")
            }
            (Space::Global, Width::B32) => {
                self.bindings.insert(Binding::Atomic32);
                format!("&mem_a[{idx}]")
            }
            (Space::Global, Width::B64) if signed_minmax => {
                self.bindings.insert(Binding::AtomicI64);
                format!("&mem_ai64[{idx} >> 1u]")
            }
            (Space::Global, Width::B64) => {
                self.bindings.insert(Binding::Atomic64);
                format!("&mem_a64[{idx} >> 1u]")
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rmw(
        &mut self,
        pc: usize,
        ind: &str,
        dst: Option<Reg>,
        op: RmwOp,
        space: Space,
        addr: Address,
        operand: Operand,
        ty: Ty,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc)?;
            if space == Space::Local {
                return Err(self.local64(pc));
            }
        }
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let minmax = matches!(op, RmwOp::Min | RmwOp::Max);
        let native_fn = match op {
            RmwOp::Add => Some("atomicAdd"),
            RmwOp::Sub => Some("atomicSub"),
            RmwOp::And => Some("atomicAnd"),
            RmwOp::Or => Some("atomicOr"),
            RmwOp::Xor => Some("atomicXor"),
            RmwOp::Exch => Some("atomicExchange"),
            RmwOp::Min => Some("atomicMin"),
            RmwOp::Max => Some("atomicMax"),
            RmwOp::Inc | RmwOp::Dec => None,
        }
        // f32 atomics and signed min/max on (u32-typed) local memory have no native WGSL form here.
        .filter(|_| ty != Ty::F32 && !(space == Space::Local && signed && minmax));
        let idx = self.address(pc, ind, space, addr, w)?;
        let uv = if w == Width::B64 {
            View::U64
        } else {
            View::U32
        };
        let (t, zero) = if w == Width::B64 {
            ("u64", "0lu")
        } else {
            ("u32", "0u")
        };
        let wrap = |e: String| match w {
            Width::B32 => Val::W32(e),
            Width::B64 => Val::W64(e),
        };
        match native_fn {
            Some(f) => {
                let sm = signed && minmax;
                let p = self.atomic_ptr(space, &idx, w, sm);
                let (v, e) = if sm {
                    let sv = if w == Width::B64 {
                        View::I64
                    } else {
                        View::I32
                    };
                    let call = format!("{f}({p}, {})", self.opnd(operand, sv));
                    let back = if w == Width::B64 { "u64" } else { "u32" };
                    (call.clone(), format!("bitcast<{back}>({call})"))
                } else {
                    let call = format!("{f}({p}, {})", self.opnd(operand, uv));
                    (call.clone(), call)
                };
                match dst {
                    Some(d) => {
                        let r = self.fresh();
                        let _ = writeln!(
                            self.out,
                            "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ {r} = {e}; }}"
                        );
                        self.assign(ind, d, wrap(r));
                    }
                    None => {
                        let _ = writeln!(self.out, "{ind}if (f_code == 0u) {{ _ = {v}; }}");
                    }
                }
            }
            None => {
                self.emulated.push(format!(
                    "{}: atomic {} on {} emulated by a compare-exchange loop",
                    self.k.where_is(pc),
                    rmw_name(op),
                    ty.name()
                ));
                let p = self.atomic_ptr(space, &idx, w, false);
                let old = self.fresh();
                let v = self.opnd(operand, uv);
                let new = rmw_expr(op, ty, &old, &v);
                let _ = writeln!(
                    self.out,
                    "{ind}var {old}: {t} = {zero}; if (f_code == 0u) {{ {old} = atomicLoad({p}); \
                     loop {{ let r = atomicCompareExchangeWeak({p}, {old}, {new}); \
                     if (r.exchanged) {{ break; }} {old} = r.old_value; }} }}"
                );
                if let Some(d) = dst {
                    self.assign(ind, d, wrap(old));
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn cas(
        &mut self,
        pc: usize,
        ind: &str,
        dst: Option<Reg>,
        space: Space,
        addr: Address,
        expected: Operand,
        desired: Operand,
        ty: Ty,
        weak: bool,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc)?;
            if space == Space::Local {
                return Err(self.local64(pc));
            }
        }
        let idx = self.address(pc, ind, space, addr, w)?;
        let uv = if w == Width::B64 {
            View::U64
        } else {
            View::U32
        };
        let p = self.atomic_ptr(space, &idx, w, false);
        let (e, d) = (self.opnd(expected, uv), self.opnd(desired, uv));
        let r = self.fresh();
        let (t, zero) = if w == Width::B64 {
            ("u64", "0lu")
        } else {
            ("u32", "0u")
        };
        if weak {
            let _ = writeln!(
                self.out,
                "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ \
                 {r} = atomicCompareExchangeWeak({p}, {e}, {d}).old_value; }}"
            );
        } else {
            // A strong compare-exchange fails only when the value differs: retry spurious failures.
            let _ = writeln!(
                self.out,
                "{ind}var {r}: {t} = {zero}; if (f_code == 0u) {{ loop {{ \
                 let c = atomicCompareExchangeWeak({p}, {e}, {d}); {r} = c.old_value; \
                 if (c.exchanged || c.old_value != {e}) {{ break; }} }} }}"
            );
        }
        if let Some(dst) = dst {
            let v = match w {
                Width::B32 => Val::W32(r),
                Width::B64 => Val::W64(r),
            };
            self.assign(ind, dst, v);
        }
        Ok(())
    }

    fn module(
        &mut self,
        wl: &Workload,
        params: &[(Reg, u64)],
        body: &str,
        opts: Options,
    ) -> String {
        let k = self.k;
        let blocks = self.block_of.len();
        let has_barrier = k.insts.iter().any(|i| matches!(i, Inst::Barrier { .. }));
        let global_barrier = k
            .insts
            .iter()
            .any(|i| matches!(i, Inst::Barrier { spaces, .. } if spaces.global));
        let mut s = String::new();
        let _ = writeln!(
            s,
            "// Generated by gpumemsim from {} (kernel {}). Do not edit.",
            k.file, k.name
        );
        for b in &self.bindings {
            let _ = writeln!(
                s,
                "@group(0) @binding({}) var<storage, read_write> {};",
                b.index(),
                b.decl()
            );
        }
        if self.local_words > 0 {
            let t = if self.local_atomic {
                "atomic<u32>"
            } else {
                "u32"
            };
            let _ = writeln!(s, "var<workgroup> lmem: array<{t}, {}>;", self.local_words);
        }
        if has_barrier {
            s.push_str("var<workgroup> wg_exited: atomic<u32>;\nvar<workgroup> wg_live: u32;\n");
        }
        let [x, y, z] = wl.geometry.group_size;
        let _ = writeln!(s, "const WG_SIZE = vec3<u32>({x}u, {y}u, {z}u);");
        let _ = writeln!(s, "const GROUP_THREADS: u32 = {}u;", x * y * z);
        let _ = writeln!(s, "const MAX_STEPS: u32 = {}u;", opts.max_steps);
        s.push_str("const DONE: u32 = 0xFFFFFFFFu;\n");
        s.push_str("var<private> cur_thread: u32;\nvar<private> cur_group: u32;\n");
        // A fault is noted in private variables (the first one wins) and recorded once, after the
        // work-item stops. Checks never leave a block early: after a fault the rest of the block runs
        // with its side effects (stores, atomics) skipped, and the dispatcher stops. Early exits
        // (`return` or `break` inside `if`) nest one level each once the driver lowers them, and
        // lavapipe (Mesa 22.3) miscompiles blocks nested that deep.
        s.push_str(
            "var<private> f_code: u32;\nvar<private> f_pc: u32;\nvar<private> f_detail: u32;\n\
             var<private> f_alo: u32;\nvar<private> f_ahi: u32;\n\
             fn fault(code: u32, pc: u32, detail: u32, alo: u32, ahi: u32) {\n\
             \x20 if (f_code == 0u) { f_code = code; f_pc = pc; f_detail = detail; f_alo = alo; f_ahi = ahi; }\n\
             }\n\
             fn record_fault() {\n\
             \x20 if (atomicAdd(&fault_record[0], 1u) == 0u) {\n\
             \x20   atomicStore(&fault_record[1], f_code); atomicStore(&fault_record[2], f_pc);\n\
             \x20   atomicStore(&fault_record[3], f_detail); atomicStore(&fault_record[4], f_alo);\n\
             \x20   atomicStore(&fault_record[5], f_ahi); atomicStore(&fault_record[6], cur_thread);\n\
             \x20   atomicStore(&fault_record[7], cur_group);\n\
             \x20 }\n}\n",
        );
        for bytes in [4u64, 8] {
            let mut conds: Vec<String> = self
                .placed
                .iter()
                .filter(|(_, len)| *len >= bytes)
                .map(|(base, len)| format!("(a >= {base}u && a - {base}u <= {}u)", len - bytes))
                .collect();
            if conds.is_empty() {
                conds.push("false".into());
            }
            let _ = writeln!(
                s,
                "fn in_global{bytes}(a: u32) -> bool {{ return {}; }}",
                conds.join(" || ")
            );
        }
        let mut sg = String::new();
        if self.uses_subgroup {
            for (b, n) in [
                ("subgroup_invocation_id", "sg_lane"),
                ("subgroup_size", "sg_size"),
                ("subgroup_id", "sg_id"),
                ("num_subgroups", "sg_count"),
            ] {
                let _ = write!(sg, ", @builtin({b}) {n}: u32");
                let _ = writeln!(s, "var<private> p_{n}: u32;");
            }
        }
        s.push_str(
            "var<private> p_gid: vec3<u32>;\nvar<private> p_lid: vec3<u32>;\n\
             var<private> p_wid: vec3<u32>;\nvar<private> p_nwg: vec3<u32>;\n\
             var<private> p_lidx: u32;\nvar<private> at_barrier: bool;\n",
        );
        // Registers are private variables so that each basic block can be a function that returns its
        // successor: faults leave a block by `return`, never by a `break` out of a `switch`, which
        // Mesa 22.3's lavapipe miscompiles.
        for r in 0..k.num_regs() {
            let init = params
                .iter()
                .rev()
                .find(|(pr, _)| *pr as usize == r)
                .map(|&(_, v)| v)
                .unwrap_or(0);
            let (t, lit) = if self.wide[r] {
                ("u64", format!("{init}lu"))
            } else {
                ("u32", format!("{}u", init as u32))
            };
            let name = k.reg_names.get(r).map(String::as_str).unwrap_or("");
            let _ = writeln!(s, "var<private> r{r}: {t} = {lit}; // {name}");
        }
        s.push_str(body);
        let _ = writeln!(s, "@compute @workgroup_size({x}, {y}, {z})");
        let _ = writeln!(
            s,
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>, \
             @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, \
             @builtin(local_invocation_index) lidx: u32{sg}) {{"
        );
        s.push_str("  p_gid = gid; p_lid = lid; p_wid = wid; p_nwg = nwg; p_lidx = lidx;\n");
        if self.uses_subgroup {
            s.push_str(
                "  p_sg_lane = sg_lane; p_sg_size = sg_size; p_sg_id = sg_id; p_sg_count = sg_count;\n",
            );
        }
        s.push_str("  cur_group = wid.x + nwg.x * (wid.y + nwg.y * wid.z);\n");
        s.push_str("  cur_thread = cur_group * GROUP_THREADS + lidx;\n");
        s.push_str("  var blk: u32 = 0u;\n  var steps: u32 = 0u;\n");
        let mut cases = String::new();
        for b in 0..blocks {
            let _ = writeln!(cases, "          case {b}u: {{ blk = block{b}(); }}");
        }
        let inner = format!(
            "      loop {{\n\
             \x20       steps += 1u;\n\
             \x20       if (steps > MAX_STEPS) {{ fault({}u, blk, 0u, 0u, 0u); blk = DONE; break; }}\n\
             \x20       switch blk {{\n{cases}\
             \x20         default: {{ blk = DONE; }}\n\
             \x20       }}\n\
             \x20       if (f_code != 0u) {{ blk = DONE; }}\n\
             \x20       if (blk == DONE || at_barrier) {{ break; }}\n\
             \x20     }}\n",
            FaultCode::StepLimit as u32
        );
        if has_barrier {
            // Every work-item runs until it reaches a barrier or exits; all then meet at one barrier in
            // uniform control flow (the loop's exit comes from workgroupUniformLoad).
            s.push_str("  var counted = false;\n  loop {\n    if (blk != DONE) {\n");
            s.push_str(&inner);
            s.push_str("    }\n");
            s.push_str(
                "    if (blk == DONE && !counted) { counted = true; atomicAdd(&wg_exited, 1u); }\n",
            );
            if global_barrier {
                s.push_str("    storageBarrier();\n");
            }
            s.push_str("    workgroupBarrier();\n");
            s.push_str(
                "    if (lidx == 0u) { wg_live = GROUP_THREADS - atomicLoad(&wg_exited); }\n",
            );
            s.push_str("    if (workgroupUniformLoad(&wg_live) == 0u) { break; }\n");
            s.push_str("    at_barrier = false;\n  }\n");
        } else {
            s.push_str(&inner);
        }
        s.push_str("  if (f_code != 0u) { record_fault(); }\n}\n");
        s
    }
}

/// The register an instruction writes.
pub(crate) fn dst_of(inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::Mov { dst, .. }
        | Inst::ReadSpecial { dst, .. }
        | Inst::Alu { dst, .. }
        | Inst::Cmp { dst, .. }
        | Inst::Select { dst, .. }
        | Inst::Cvt { dst, .. }
        | Inst::Load { dst, .. } => Some(dst),
        Inst::Rmw { dst, .. } | Inst::Cas { dst, .. } => dst,
        _ => None,
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
/// (`machine::atomic::apply_rmw`; which f32 operations act on the float: `alu::float_rmw`).
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
        (Ty::F32, op) if !alu::float_rmw(op) => old.to_string(),
        (Ty::F32, RmwOp::Add) => format!("bitcast<u32>(bitcast<f32>({old}) + bitcast<f32>({v}))"),
        (Ty::F32, RmwOp::Sub) => format!("bitcast<u32>(bitcast<f32>({old}) - bitcast<f32>({v}))"),
        (Ty::F32, RmwOp::Min) => {
            format!("bitcast<u32>(min(bitcast<f32>({old}), bitcast<f32>({v})))")
        }
        (Ty::F32, RmwOp::Max) => {
            format!("bitcast<u32>(max(bitcast<f32>({old}), bitcast<f32>({v})))")
        }
        (Ty::F32, RmwOp::Exch) => v.to_string(),
        (Ty::F32, _) => unreachable!("alu::float_rmw lists the f32 operations"),
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
