//! The one instruction IR that every front end lowers into: the kernel language, both litmus dialects
//! and (timing-only) Accel-Sim traces.
//!
//! Models: per-thread 64-bit registers holding raw bits; integer and f32 arithmetic; compares; branches;
//! special registers; loads, stores, read-modify-writes, compare-exchange, fences and barriers, each memory
//! operation with an *order* whose type says which orders are legal for it (a load can never be `release`),
//! and a [`Scope`].
//!
//! Warp-level data exchange (`Inst::Warp`, `warp.rs`): shuffles, votes, matches, reductions and
//! the active mask among the lanes of one warp.
//!
//! Does not model: predication other than branch conditions, vector loads (a trace's 64/128-bit accesses
//! are widths, not vectors), texture/constant memory.
//!
//! The order enums follow miri's split into read, write and read-modify-write orderings, so that an
//! impossible combination cannot be built. Scopes follow OpenCL 2.0 / SYCL (`work_item` … `system`);
//! the PTX names `cta`, `gpu`, `sys` and OpenCL's `all_svm_devices` are aliases parsed by the front ends.

mod disasm;
pub mod eval;
pub mod math;
pub mod warp;
pub use math::{FloatMode, MathOp, PrmtMode, Round};
pub use warp::{ReduxOp, ShflMode, VoteMode, WarpOp};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of a per-thread register.
pub type Reg = u16;

/// Memory scope, narrowest first. `Ord` follows inclusion: a wider scope includes every narrower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    WorkItem,
    SubGroup,
    WorkGroup,
    Device,
    System,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::WorkItem,
        Scope::SubGroup,
        Scope::WorkGroup,
        Scope::Device,
        Scope::System,
    ];

    /// Parses the canonical name and the CUDA/PTX and OpenCL aliases.
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "work_item" | "workitem" => Scope::WorkItem,
            "sub_group" | "subgroup" | "warp" => Scope::SubGroup,
            "work_group" | "workgroup" | "wg" | "cta" | "block" => Scope::WorkGroup,
            "device" | "dev" | "gpu" => Scope::Device,
            "system" | "sys" | "all_svm_devices" | "all_devices" => Scope::System,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::WorkItem => "work_item",
            Scope::SubGroup => "sub_group",
            Scope::WorkGroup => "work_group",
            Scope::Device => "device",
            Scope::System => "system",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Address space of a memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// Device memory, shared by all work-groups (CUDA global, OpenCL global).
    Global,
    /// Work-group-local memory (CUDA shared, OpenCL local), one copy per resident work-group.
    Local,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Local => "local",
        }
    }
}

/// Set of address spaces a fence or barrier orders (OpenCL `CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SpaceSet {
    pub local: bool,
    pub global: bool,
}

impl SpaceSet {
    pub const BOTH: SpaceSet = SpaceSet {
        local: true,
        global: true,
    };
    pub const LOCAL: SpaceSet = SpaceSet {
        local: true,
        global: false,
    };
    pub const GLOBAL: SpaceSet = SpaceSet {
        local: false,
        global: true,
    };
    pub const NONE: SpaceSet = SpaceSet {
        local: false,
        global: false,
    };
}

/// Order of a load (plain means non-atomic: PTX `.weak`, OpenCL plain access).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadOrd {
    Plain,
    Relaxed,
    Acquire,
    SeqCst,
}

/// Order of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreOrd {
    Plain,
    Relaxed,
    Release,
    SeqCst,
}

/// Order of an atomic read-modify-write (always atomic, so no plain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RmwOrd {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

/// Order of a fence (a relaxed fence is a no-op and is rejected by the front ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FenceOrd {
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

/// The memory orders as one flat list, for capability tables in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemOrder {
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }
}

impl LoadOrd {
    /// `None` for a plain (non-atomic) load.
    pub fn atomic_order(self) -> Option<MemOrder> {
        match self {
            LoadOrd::Plain => None,
            LoadOrd::Relaxed => Some(MemOrder::Relaxed),
            LoadOrd::Acquire => Some(MemOrder::Acquire),
            LoadOrd::SeqCst => Some(MemOrder::SeqCst),
        }
    }
    pub fn is_acquire(self) -> bool {
        matches!(self, LoadOrd::Acquire | LoadOrd::SeqCst)
    }
}

impl StoreOrd {
    pub fn atomic_order(self) -> Option<MemOrder> {
        match self {
            StoreOrd::Plain => None,
            StoreOrd::Relaxed => Some(MemOrder::Relaxed),
            StoreOrd::Release => Some(MemOrder::Release),
            StoreOrd::SeqCst => Some(MemOrder::SeqCst),
        }
    }
    pub fn is_release(self) -> bool {
        matches!(self, StoreOrd::Release | StoreOrd::SeqCst)
    }
}

impl RmwOrd {
    pub fn order(self) -> MemOrder {
        match self {
            RmwOrd::Relaxed => MemOrder::Relaxed,
            RmwOrd::Acquire => MemOrder::Acquire,
            RmwOrd::Release => MemOrder::Release,
            RmwOrd::AcqRel => MemOrder::AcqRel,
            RmwOrd::SeqCst => MemOrder::SeqCst,
        }
    }
    pub fn is_acquire(self) -> bool {
        matches!(self, RmwOrd::Acquire | RmwOrd::AcqRel | RmwOrd::SeqCst)
    }
    pub fn is_release(self) -> bool {
        matches!(self, RmwOrd::Release | RmwOrd::AcqRel | RmwOrd::SeqCst)
    }
}

impl FenceOrd {
    pub fn order(self) -> MemOrder {
        match self {
            FenceOrd::Acquire => MemOrder::Acquire,
            FenceOrd::Release => MemOrder::Release,
            FenceOrd::AcqRel => MemOrder::AcqRel,
            FenceOrd::SeqCst => MemOrder::SeqCst,
        }
    }
    pub fn is_acquire(self) -> bool {
        !matches!(self, FenceOrd::Release)
    }
    pub fn is_release(self) -> bool {
        !matches!(self, FenceOrd::Acquire)
    }
}

/// Access width of a load, store or atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Width {
    B32,
    B64,
}

impl Width {
    pub fn bytes(self) -> u32 {
        match self {
            Width::B32 => 4,
            Width::B64 => 8,
        }
    }

    /// The bits of a register that a value of this width uses.
    pub fn mask(self) -> u64 {
        match self {
            Width::B32 => 0xFFFF_FFFF,
            Width::B64 => u64::MAX,
        }
    }
}

/// Value type of arithmetic, compares and atomics. Registers hold raw 64-bit patterns; a 32-bit type
/// uses the low 32 bits (signed types sign-extend on load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ty {
    U32,
    I32,
    U64,
    I64,
    F32,
}

impl Ty {
    pub fn width(self) -> Width {
        match self {
            Ty::U32 | Ty::I32 | Ty::F32 => Width::B32,
            Ty::U64 | Ty::I64 => Width::B64,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32)
    }
    pub fn name(self) -> &'static str {
        match self {
            Ty::U32 => "u32",
            Ty::I32 => "i32",
            Ty::U64 => "u64",
            Ty::I64 => "i64",
            Ty::F32 => "f32",
        }
    }
}

/// A register or an immediate (raw 64-bit pattern; f32 immediates are stored as their bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    Reg(Reg),
    Imm(u64),
}

/// Byte address: `base + offset`. For global memory the base is normally a register holding a buffer
/// address (a launch parameter); for local memory, an offset into the work-group's local allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Address {
    pub base: Operand,
    pub offset: i64,
}

/// Dimension of an id or size special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }
}

/// Special (read-only) registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Special {
    GlobalId(Dim),
    LocalId(Dim),
    GroupId(Dim),
    GlobalSize(Dim),
    LocalSize(Dim),
    NumGroups(Dim),
    /// Flattened global id over all dimensions (x fastest).
    GlobalLinearId,
    /// Flattened id within the work-group.
    LocalLinearId,
    /// Flattened work-group id.
    GroupLinearId,
    /// Lane within the sub-group (warp).
    Lane,
    /// Sub-group (warp) index within the work-group.
    SubGroupId,
    /// Sub-group size (the config's warp size).
    SubGroupSize,
    /// Number of sub-groups in the work-group.
    NumSubGroups,
    /// SM the work-group runs on.
    SmId,
    /// Core clock cycle counter.
    Clock,
}

/// Two-operand arithmetic and logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AluOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// Compare predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The C (and WGSL) operator.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The predicate with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            c => c,
        }
    }
}

/// Latency class of a non-memory instruction (issue 4's traces map SASS opcodes onto these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyClass {
    IntAlu,
    IntMul,
    IntDiv,
    FpAlu,
    FpDiv,
    Special,
    Branch,
}

/// Operation of an atomic read-modify-write (compare-exchange is its own instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RmwOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
    Exch,
    /// CUDA `atomicInc`: `old >= operand ? 0 : old + 1`.
    Inc,
    /// CUDA `atomicDec`: `old == 0 || old > operand ? operand : old - 1`.
    Dec,
}

impl RmwOp {
    /// Whether several lanes' operations on one address can be combined into one (the combined
    /// operand is again one operation of the same kind).
    pub fn combinable(self) -> bool {
        matches!(
            self,
            RmwOp::Add | RmwOp::Sub | RmwOp::And | RmwOp::Or | RmwOp::Xor | RmwOp::Min | RmwOp::Max
        )
    }
}

/// The operation of an atomic read-modify-write, including compare-exchange: the one atomic-operation
/// enum that kernel IR (through [`Inst::atomic_op`]), traces and the machine's atomic units share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtomicOp {
    Rmw(RmwOp),
    /// Compare-exchange: writes the desired value when the old one equals the expected one.
    Cas,
}

impl AtomicOp {
    /// Whether several lanes' operations on one address can be combined into one.
    pub fn combinable(self) -> bool {
        matches!(self, AtomicOp::Rmw(op) if op.combinable())
    }
}

/// Which memory model's scope rules a program follows. The front end that wrote the program sets it
/// (DESIGN.md "Scope rules"); the models differ for relaxed atomics only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// PTX ISA memory consistency model: a relaxed operation keeps its scope, which decides whether
    /// two accesses are morally strong (PTX ISA §8.7 "Morally strong operations"). The kernel
    /// language, PTX litmus tests, CUDA and SASS traces.
    #[default]
    Ptx,
    /// OpenCL 2.0 / SYCL 2020: for `memory_order_relaxed` the memory scope argument is ignored
    /// (SYCL 2020 §3.8.3.2 "Memory scope"; the SYCL reference chapter, 19.2.2), so a relaxed atomic
    /// is atomic for every thread that can access its location. OpenCL litmus tests, OpenCL C.
    OpenCl,
}

/// Barrier kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarrierKind {
    /// Work-group barrier: all work-items of the group arrive, then an acq_rel fence at `scope` over
    /// `spaces` (OpenCL 2.0 `work_group_barrier(flags, scope)`; CUDA `__syncthreads` = both spaces,
    /// work_group scope).
    WorkGroup,
    /// Sub-group barrier (`sub_group_barrier`, `__syncwarp`).
    SubGroup,
    /// A PTX barrier of the CTA (`bar.sync a{, b}`, `bar.arrive a, b`, `bar.red`): one of 16 per
    /// work-group, never synchronising with another id; the ordering of a work-group barrier
    /// (`bar.arrive` only its release side).
    Named(CtaBarrier),
}

impl BarrierKind {
    /// A barrier of the work-group (plain or named), as opposed to the sub-group barrier.
    #[inline]
    pub fn is_work_group(self) -> bool {
        !matches!(self, BarrierKind::SubGroup)
    }

    /// The barrier's id among the work-group's 16 (0 for the plain work-group barrier).
    #[inline]
    pub fn id(self) -> u8 {
        match self {
            BarrierKind::Named(b) => b.id,
            _ => 0,
        }
    }

    /// Whether the executing thread waits for the barrier to complete (not `bar.arrive`).
    #[inline]
    pub fn waits(self) -> bool {
        !matches!(
            self,
            BarrierKind::Named(CtaBarrier {
                op: BarrierOp::Arrive,
                ..
            })
        )
    }
}

/// Barriers per work-group (PTX: 16 per CTA, ids 0-15).
pub const BARRIERS_PER_GROUP: u8 = 16;

/// A PTX CTA barrier as the machine runs it (PTX ISA, "bar, barrier").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CtaBarrier {
    /// 0-15.
    pub id: u8,
    /// Threads that complete the barrier (a multiple of the warp size; warps count whole, as
    /// PTX counts them); `None`: every thread of the work-group still running.
    pub threads: Option<u32>,
    pub op: BarrierOp,
}

/// What a thread does at a [`CtaBarrier`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarrierOp {
    /// Arrive and wait (`bar.sync`).
    Sync,
    /// Arrive without waiting (`bar.arrive`).
    Arrive,
    /// Arrive, wait, and write into `dst` the reduction of the participants' predicate `pred`
    /// (non-zero is true; `negated` inverts it): `bar.red.popc` counts the true ones, `.and`/`.or`
    /// give 1 or 0. `per_lane`: each lane of a warp is an instance of its own (litmus tests run an
    /// instance per lane), so the reduction combines lane `l` of the participating warps; otherwise
    /// every participating thread.
    Reduce {
        op: BarrierReduce,
        dst: Reg,
        pred: Reg,
        negated: bool,
        per_lane: bool,
    },
}

/// The reduction of `bar.red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BarrierReduce {
    Popc,
    And,
    Or,
}

impl BarrierReduce {
    pub fn name(self) -> &'static str {
        match self {
            BarrierReduce::Popc => "popc",
            BarrierReduce::And => "and",
            BarrierReduce::Or => "or",
        }
    }

    /// The result from the participants (`n`) and how many of them had a true predicate.
    pub fn result(self, trues: u64, n: u64) -> u64 {
        match self {
            BarrierReduce::Popc => trues,
            BarrierReduce::And => (trues == n) as u64,
            BarrierReduce::Or => (trues > 0) as u64,
        }
    }
}

/// How many of [`Inst::Math`]'s operands `op` reads.
pub fn math_arity(op: MathOp) -> usize {
    match op {
        MathOp::Bfi => 4,
        MathOp::Bfe
        | MathOp::Prmt(_)
        | MathOp::Lop3 { .. }
        | MathOp::Shf { .. }
        | MathOp::Dp4a { .. }
        | MathOp::Fma => 3,
        MathOp::FAdd
        | MathOp::FSub
        | MathOp::FMul
        | MathOp::FDiv
        | MathOp::FMin { .. }
        | MathOp::FMax { .. }
        | MathOp::Copysign => 2,
        _ => 1,
    }
}

/// One IR instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Inst {
    Mov {
        dst: Reg,
        src: Operand,
    },
    ReadSpecial {
        dst: Reg,
        which: Special,
    },
    Alu {
        op: AluOp,
        ty: Ty,
        dst: Reg,
        a: Operand,
        b: Operand,
    },
    /// `dst = (a op b) ? 1 : 0`.
    Cmp {
        op: CmpOp,
        ty: Ty,
        dst: Reg,
        a: Operand,
        b: Operand,
    },
    /// `dst = cond != 0 ? a : b`.
    Select {
        dst: Reg,
        cond: Reg,
        a: Operand,
        b: Operand,
    },
    /// Convert between types (`cvt`): int ↔ f32, widening and narrowing.
    Cvt {
        dst: Reg,
        src: Reg,
        from: Ty,
        to: Ty,
    },
    /// Unconditional (`cond == None`) or conditional branch: taken when `(reg != 0) == if_nonzero`.
    Branch {
        target: u32,
        cond: Option<(Reg, bool)>,
    },
    Load {
        dst: Reg,
        space: Space,
        addr: Address,
        ty: Ty,
        ord: LoadOrd,
        scope: Scope,
    },
    Store {
        space: Space,
        addr: Address,
        src: Operand,
        ty: Ty,
        ord: StoreOrd,
        scope: Scope,
    },
    /// Atomic read-modify-write; `dst == None` is the non-returning form (PTX `red`).
    Rmw {
        dst: Option<Reg>,
        op: RmwOp,
        space: Space,
        addr: Address,
        operand: Operand,
        ty: Ty,
        ord: RmwOrd,
        scope: Scope,
    },
    /// Compare-exchange. `dst` receives the old value; success when it equals `expected`.
    /// `weak` may fail spuriously (the simulator never makes it do so; documented there).
    Cas {
        dst: Option<Reg>,
        space: Space,
        addr: Address,
        expected: Operand,
        desired: Operand,
        ty: Ty,
        success: RmwOrd,
        failure: LoadOrd,
        scope: Scope,
        weak: bool,
    },
    Fence {
        ord: FenceOrd,
        scope: Scope,
        spaces: SpaceSet,
    },
    Barrier {
        kind: BarrierKind,
        spaces: SpaceSet,
        scope: Scope,
    },
    /// A bit operation or floating-point instruction beyond [`Inst::Alu`] (PTX `popc`, `fma`,
    /// `sqrt`, `add.rz`, ...): `dst = op(args)`; unused operands are `Imm(0)`. `ty` is the operand
    /// type (the result of `popc`, `clz` and `bfind` is u32).
    Math {
        op: MathOp,
        ty: Ty,
        mode: FloatMode,
        dst: Reg,
        args: [Operand; 4],
    },
    /// A warp-level exchange between the lanes of one warp (PTX `shfl.sync`, `vote.sync`,
    /// `match.sync`, `redux.sync`, `activemask`; what each lane computes is [`warp::exchange`]).
    /// The lanes taking part are those executing it that `members` (a lane mask, the same in
    /// every executing lane) names; `dst` gets the result, `pred` the second result (`shfl`: the
    /// source lane was in range; `match.all`: every value was equal). `args`: the operands `a`,
    /// `b`, `c` of [`warp::LaneArgs`] (unused ones `Imm(0)`). Timed by `sm.latency.warp_exchange`.
    Warp {
        op: WarpOp,
        ty: Ty,
        dst: Reg,
        pred: Option<Reg>,
        args: [Operand; 3],
        members: Operand,
    },
    /// A non-memory instruction that only occupies the pipeline (trace replay).
    Compute {
        class: LatencyClass,
    },
    Exit,
}

impl Inst {
    /// The atomic operation of a read-modify-write or compare-exchange.
    pub fn atomic_op(&self) -> Option<AtomicOp> {
        match *self {
            Inst::Rmw { op, .. } => Some(AtomicOp::Rmw(op)),
            Inst::Cas { .. } => Some(AtomicOp::Cas),
            _ => None,
        }
    }

    /// The address space touched by a memory instruction.
    pub fn mem_space(&self) -> Option<Space> {
        match self {
            Inst::Load { space, .. }
            | Inst::Store { space, .. }
            | Inst::Rmw { space, .. }
            | Inst::Cas { space, .. } => Some(*space),
            _ => None,
        }
    }
}

/// Where an instruction came from, for error messages and diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SrcLoc {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A compiled kernel: straight-line instruction vector with branch targets as indices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    /// Source file, for diagnostics.
    pub file: String,
    pub insts: Vec<Inst>,
    /// `locs[i]` is the source location of `insts[i]`.
    pub locs: Vec<SrcLoc>,
    /// Register names, index = register number (for diagnostics and litmus outcomes).
    pub reg_names: Vec<String>,
    /// Bytes of work-group-local memory each work-group allocates.
    pub local_bytes: u32,
    /// The memory model whose scope rules the program follows (set by the front end).
    #[serde(default)]
    pub semantics: Semantics,
}

impl Kernel {
    pub fn num_regs(&self) -> usize {
        self.reg_names.len()
    }

    /// `file:line:col` of instruction `pc`.
    pub fn where_is(&self, pc: usize) -> String {
        match self.locs.get(pc) {
            Some(l) => format!("{}:{}:{}", self.file, l.line, l.col),
            None => format!("{}:pc {}", self.file, pc),
        }
    }
}

/// f32 helpers: registers hold an f32 in the low 32 bits.
pub fn f32_bits(x: f32) -> u64 {
    x.to_bits() as u64
}
pub fn bits_f32(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
