//! IR → SPIR-V with the Vulkan memory model: the translation that lets the orders and scopes of the
//! kernel language run on a physical adapter (through wgpu's SPIR-V passthrough on Vulkan).
//!
//! Mirrors `super::wgsl` (same register analysis, same basic blocks, same dispatcher, same fault record
//! and bindings, so the dispatch harness runs either) and adds what WGSL cannot say:
//!
//! | IR | SPIR-V (`OpMemoryModel Logical Vulkan`, SPIR-V 1.5) |
//! |---|---|
//! | plain load / store | `OpLoad` / `OpStore` with `NonPrivatePointer` (so releases and acquires order them) |
//! | relaxed atomic | `OpAtomicLoad` / `OpAtomicStore` / `OpAtomic*`, semantics `None` |
//! | acquire load | `OpAtomicLoad`, `Acquire \| MakeVisible \| UniformMemory \| WorkgroupMemory` |
//! | release store | `OpAtomicStore`, `Release \| MakeAvailable \| UniformMemory \| WorkgroupMemory` |
//! | RMW acquire / release / acq_rel | `Acquire\|MakeVisible` / `Release\|MakeAvailable` / `AcquireRelease\|MakeAvailable\|MakeVisible` (+ both storage classes) |
//! | seq_cst (load, store, RMW, fence) | as acquire / release / acq_rel: the Vulkan memory model has no sequentially consistent order (`SequentiallyConsistent` is not allowed with it); each one is listed in [`wgsl::Translation::emulated`] |
//! | compare-exchange | `OpAtomicCompareExchange` (strong; a weak one never fails spuriously, as in the simulator), Equal = success order, Unequal = failure order |
//! | fence (acquire, release, acq_rel) | `OpMemoryBarrier` at the fence's scope, the storage classes of its spaces |
//! | work-group barrier | `OpControlBarrier Workgroup`, memory scope and storage classes of the widest barrier of the kernel |
//! | scope work_group / sub_group / work_item | `Workgroup` / `Subgroup` / `Invocation` |
//! | scope device | `Device` when the device enables `vulkanMemoryModelDeviceScope` ([`SpirvCaps::device_scope`]), `QueueFamily` otherwise (every work-item of a dispatch is in one queue family) |
//! | scope system | as device (Vulkan has no wider scope for shaders; listed in `emulated`) |
//! | 64-bit atomics | `Int64Atomics` on a `u64` view of the memory buffer (global memory only, as in WGSL) |
//!
//! Storage classes: global memory is `StorageBuffer` (ordered by the `UniformMemory` semantics bit),
//! local memory `Workgroup` (`WorkgroupMemory`). Atomics order both (the PTX and OpenCL atomics of the
//! kernel language order every space); fences and barriers order the spaces they name.
//!
//! Rejected with the instruction's `file:line:col`: sub-group barriers (uniform control flow cannot be
//! promised), the `clock` and `smid` registers, a timing-only trace instruction, 64-bit atomics on
//! local memory, 64-bit registers without `Int64`, 64-bit atomics without `Int64Atomics`.
//! Emulated as in WGSL (compare-exchange loops, listed): atomic inc/dec (SPIR-V's have no bound) and
//! f32 atomics. Deviations from the simulator: those of the WGSL translation (int→f32 rounds once; f32
//! min/max with NaN and f32→int of NaN follow the driver).

pub mod words;

use super::wgsl::{
    dst_of, leaders, rmw_name, wide_registers, Binding, Caps, FaultCode, Options, TranslateError,
    Translation, FAULT_WORDS,
};
use crate::ir::*;
use crate::machine::alu;
use crate::machine::memory::GLOBAL_BASE;
use crate::workload::Workload;
use ::spirv as spv;
use spv::{Op, StorageClass as SC};
use std::collections::{BTreeSet, HashMap};
use words::{Func, Module, Type};

/// What the device offers beyond [`Caps`] that the SPIR-V translation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpirvCaps {
    pub base: Caps,
    /// `vulkanMemoryModelDeviceScope` is enabled: device scope is `Device`, else `QueueFamily`.
    pub device_scope: bool,
}

impl SpirvCaps {
    pub const ALL: SpirvCaps = SpirvCaps {
        base: Caps::ALL,
        device_scope: true,
    };
}

const GLSL_FMIN: u32 = 37;
const GLSL_UMIN: u32 = 38;
const GLSL_SMIN: u32 = 39;
const GLSL_FMAX: u32 = 40;
const GLSL_UMAX: u32 = 41;
const GLSL_SMAX: u32 = 42;

/// The SPIR-V scope of an IR scope on a device with or without device scope.
pub fn scope_of(s: Scope, device_scope: bool) -> spv::Scope {
    match s {
        Scope::WorkItem => spv::Scope::Invocation,
        Scope::SubGroup => spv::Scope::Subgroup,
        Scope::WorkGroup => spv::Scope::Workgroup,
        Scope::Device | Scope::System if device_scope => spv::Scope::Device,
        Scope::Device | Scope::System => spv::Scope::QueueFamily,
    }
}

/// The memory semantics of an order over the storage classes of `spaces` (the Vulkan memory model:
/// acquire makes visible, release makes available; sequentially consistent is acquire-release).
pub fn semantics_of(o: MemOrder, spaces: SpaceSet) -> spv::MemorySemantics {
    use spv::MemorySemantics as M;
    let order = match o {
        MemOrder::Relaxed => return M::RELAXED,
        MemOrder::Acquire => M::ACQUIRE | M::MAKE_VISIBLE,
        MemOrder::Release => M::RELEASE | M::MAKE_AVAILABLE,
        MemOrder::AcqRel | MemOrder::SeqCst => {
            M::ACQUIRE_RELEASE | M::MAKE_AVAILABLE | M::MAKE_VISIBLE
        }
    };
    let mut s = order;
    if spaces.global {
        s |= M::UNIFORM_MEMORY;
    }
    if spaces.local {
        s |= M::WORKGROUP_MEMORY;
    }
    s
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum V {
    U32,
    U64,
    F32,
}

struct Ids {
    u32_: u32,
    u64_: u32,
    f32_: u32,
    bool_: u32,
    void: u32,
    mem: u32,
    mem64: u32,
    lmem: u32,
    fault: u32,
    regs: Vec<u32>,
    f: [u32; 5],
    at_barrier: u32,
    cur_group: u32,
    cur_thread: u32,
    gid: u32,
    lid: u32,
    wid: u32,
    nwg: u32,
    lidx: u32,
    sg: [u32; 4],
    fault_fn: u32,
}

struct Gen<'a> {
    k: &'a Kernel,
    caps: SpirvCaps,
    wide: Vec<bool>,
    block_of: HashMap<usize, usize>,
    placed: Vec<(u64, u64)>,
    m: Module,
    ids: Ids,
    f: Option<Func>,
    bindings: BTreeSet<Binding>,
    needs: Caps,
    emulated: Vec<String>,
    group_size: [u32; 3],
    uses_device_scope: bool,
}

fn err(k: &Kernel, pc: usize, message: impl Into<String>) -> TranslateError {
    TranslateError {
        location: k.where_is(pc),
        message: message.into(),
    }
}

/// Translates a workload to a SPIR-V module; the result's `spirv` holds it and `wgsl` is empty.
pub fn translate(
    wl: &Workload,
    caps: SpirvCaps,
    opts: Options,
) -> Result<Translation, TranslateError> {
    let k = &wl.kernel;
    let launch = format!("{}:1:1", k.file);
    let geo = wl.geometry;
    let (mem, params) = crate::gpu::wgsl::check_launch(wl, "SPIR-V")?;
    let leaders = leaders(k);
    let wide = wide_registers(k, &params);
    if let Some(r) = wide.iter().position(|&w| w) {
        if !caps.base.int64 {
            let pc = k.insts.iter().position(|i| dst_of(i) == Some(r as Reg));
            return Err(TranslateError {
                location: pc
                    .map(|pc| k.where_is(pc))
                    .unwrap_or_else(|| launch.clone()),
                message: "needs 64-bit integers, which this adapter lacks (Int64)".into(),
            });
        }
    }
    let mut m = Module::new();
    let u32_ = m.u32_();
    let bool_ = m.bool_();
    let f32_ = m.f32_();
    let void = m.ty(Type::Void);
    let needs64 = wide.iter().any(|&w| w) || k.insts.iter().any(uses_64);
    let u64_ = if needs64 && caps.base.int64 {
        m.capability(spv::Capability::Int64);
        m.u64_()
    } else {
        0
    };
    let mut g = Gen {
        k,
        caps,
        wide,
        block_of: leaders.iter().enumerate().map(|(b, &i)| (i, b)).collect(),
        placed: mem
            .placed
            .iter()
            .map(|p| (p.base, p.bytes.max(1)))
            .collect(),
        m,
        ids: Ids {
            u32_,
            u64_,
            f32_,
            bool_,
            void,
            mem: 0,
            mem64: 0,
            lmem: 0,
            fault: 0,
            regs: Vec::new(),
            f: [0; 5],
            at_barrier: 0,
            cur_group: 0,
            cur_thread: 0,
            gid: 0,
            lid: 0,
            wid: 0,
            nwg: 0,
            lidx: 0,
            sg: [0; 4],
            fault_fn: 0,
        },
        f: None,
        bindings: BTreeSet::from([Binding::Fault]),
        needs: Caps {
            int64: needs64,
            ..Caps::default()
        },
        emulated: Vec::new(),
        group_size: geo.group_size,
        uses_device_scope: false,
    };
    if needs64 && !caps.base.int64 {
        let pc = k.insts.iter().position(uses_64).unwrap_or(0);
        return Err(err(
            k,
            pc,
            "needs 64-bit integers, which this adapter lacks (Int64)",
        ));
    }
    g.globals(&params);
    g.fault_function();
    let mut block_fns = Vec::new();
    for (b, &start) in leaders.iter().enumerate() {
        let end = leaders.get(b + 1).copied().unwrap_or(k.insts.len());
        block_fns.push(g.block(b, start, end)?);
    }
    let record = g.record_function();
    let main = g.main(&block_fns, record, opts);
    if g.uses_device_scope {
        g.m.capability(spv::Capability::VulkanMemoryModelDeviceScope);
    }
    let words = std::mem::take(&mut g.m).finish(main, geo.group_size);
    let buffers = mem
        .placed
        .iter()
        .take(wl.buffers.len())
        .map(|p| (p.base - GLOBAL_BASE, p.bytes))
        .collect();
    Ok(Translation {
        wgsl: String::new(),
        spirv: Some(words),
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

/// Whether an instruction needs 64-bit integers.
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

impl Gen<'_> {
    fn fx(&mut self) -> &mut Func {
        self.f.as_mut().expect("inside a function")
    }

    /// `op` with a result of type `ty` in the current function.
    fn op(&mut self, ty: u32, op: Op, operands: &[u32]) -> u32 {
        let f = self.f.as_mut().expect("inside a function");
        f.op(&mut self.m, ty, op, operands)
    }

    fn emit(&mut self, op: Op, operands: &[u32]) {
        self.fx().emit(op, operands);
    }

    fn label(&mut self, l: u32) {
        self.fx().label(l);
    }

    fn glsl(&mut self, ty: u32, inst: u32, args: &[u32]) -> u32 {
        let f = self.f.as_mut().expect("inside a function");
        f.glsl(&mut self.m, ty, inst, args)
    }

    fn c32(&mut self, v: u32) -> u32 {
        self.m.c32(v)
    }

    fn load(&mut self, ty: u32, var: u32) -> u32 {
        self.op(ty, Op::Load, &[var])
    }

    fn store(&mut self, var: u32, v: u32) {
        self.emit(Op::Store, &[var, v]);
    }

    /// Storage buffer `struct { T data[]; }` at `binding`, decorated `Aliased` (the views alias).
    fn storage_buffer(&mut self, elem: u32, stride: u32, binding: Binding, name: &str) -> u32 {
        let m = &mut self.m;
        let arr = m.id();
        m.raw_global(Op::TypeRuntimeArray, &[arr, elem]);
        m.decorate(arr, spv::Decoration::ArrayStride, &[stride]);
        let st = m.id();
        m.raw_global(Op::TypeStruct, &[st, arr]);
        m.decorate(st, spv::Decoration::Block, &[]);
        m.member_decorate(st, 0, spv::Decoration::Offset, &[0]);
        let var = m.global_var(SC::StorageBuffer, st, None);
        m.decorate(var, spv::Decoration::DescriptorSet, &[0]);
        m.decorate(var, spv::Decoration::Binding, &[binding.index()]);
        if binding != Binding::Fault {
            m.decorate(var, spv::Decoration::Aliased, &[]);
        }
        m.name(var, name);
        self.bindings.insert(binding);
        var
    }

    fn builtin(&mut self, ty: u32, b: spv::BuiltIn, name: &str) -> u32 {
        let v = self.m.global_var(SC::Input, ty, None);
        self.m.decorate(v, spv::Decoration::BuiltIn, &[b as u32]);
        self.m.name(v, name);
        v
    }

    fn private(&mut self, ty: u32, init: u64, name: &str) -> u32 {
        let c = self.m.constant(ty, init);
        let v = self.m.global_var(SC::Private, ty, Some(c));
        self.m.name(v, name);
        v
    }

    fn globals(&mut self, params: &[(Reg, u64)]) {
        let u = self.ids.u32_;
        self.ids.fault = self.storage_buffer(u, 4, Binding::Fault, "fault_record");
        let uses_global = self
            .k
            .insts
            .iter()
            .any(|i| i.mem_space() == Some(Space::Global));
        if uses_global {
            self.ids.mem = self.storage_buffer(u, 4, Binding::Plain, "mem");
        }
        let uses_atomic64 = self.k.insts.iter().any(|i| match i {
            Inst::Load { ty, ord, space, .. } => {
                *space == Space::Global && *ord != LoadOrd::Plain && ty.width() == Width::B64
            }
            Inst::Store { ty, ord, space, .. } => {
                *space == Space::Global && *ord != StoreOrd::Plain && ty.width() == Width::B64
            }
            Inst::Rmw { ty, space, .. } | Inst::Cas { ty, space, .. } => {
                *space == Space::Global && ty.width() == Width::B64
            }
            _ => false,
        });
        if uses_atomic64 && self.caps.base.int64_atomics && self.ids.u64_ != 0 {
            let u64_ = self.ids.u64_;
            self.ids.mem64 = self.storage_buffer(u64_, 8, Binding::Atomic64, "mem64");
            self.m.capability(spv::Capability::Int64Atomics);
        }
        let local_words = self.k.local_bytes.div_ceil(4);
        let has_barrier = self
            .k
            .insts
            .iter()
            .any(|i| matches!(i, Inst::Barrier { .. }));
        // Local memory plus, with barriers, the exit counter and the live count (the last two words).
        let words = local_words + if has_barrier { 2 } else { 0 };
        if words > 0 {
            let n = self.c32(words);
            let arr = self.m.id();
            self.m.raw_global(Op::TypeArray, &[arr, u, n]);
            self.ids.lmem = self.m.global_var(SC::Workgroup, arr, None);
            self.m.name(self.ids.lmem, "lmem");
        }
        for r in 0..self.k.num_regs() {
            let init = params
                .iter()
                .rev()
                .find(|(pr, _)| *pr as usize == r)
                .map(|&(_, v)| v)
                .unwrap_or(0);
            let (t, v) = if self.wide[r] {
                (self.ids.u64_, init)
            } else {
                (u, init as u32 as u64)
            };
            let name = format!("r{r}");
            let var = self.private(t, v, &name);
            self.ids.regs.push(var);
        }
        for (i, n) in ["f_code", "f_pc", "f_detail", "f_alo", "f_ahi"]
            .iter()
            .enumerate()
        {
            self.ids.f[i] = self.private(u, 0, n);
        }
        let b = self.ids.bool_;
        let fals = self.m.cbool(false);
        self.ids.at_barrier = self.m.global_var(SC::Private, b, Some(fals));
        self.ids.cur_group = self.private(u, 0, "cur_group");
        self.ids.cur_thread = self.private(u, 0, "cur_thread");
        let v3 = self.m.ty(Type::V3U32);
        use spv::BuiltIn as B;
        self.ids.gid = self.builtin(v3, B::GlobalInvocationId, "gid");
        self.ids.lid = self.builtin(v3, B::LocalInvocationId, "lid");
        self.ids.wid = self.builtin(v3, B::WorkgroupId, "wid");
        self.ids.nwg = self.builtin(v3, B::NumWorkgroups, "nwg");
        self.ids.lidx = self.builtin(u, B::LocalInvocationIndex, "lidx");
        let uses_sg = self.k.insts.iter().any(|i| {
            matches!(
                i,
                Inst::ReadSpecial {
                    which: Special::Lane
                        | Special::SubGroupId
                        | Special::SubGroupSize
                        | Special::NumSubGroups,
                    ..
                }
            )
        });
        if uses_sg && self.caps.base.subgroups {
            self.m.capability(spv::Capability::GroupNonUniform);
            self.ids.sg = [
                self.builtin(u, B::SubgroupLocalInvocationId, "sg_lane"),
                self.builtin(u, B::SubgroupSize, "sg_size"),
                self.builtin(u, B::SubgroupId, "sg_id"),
                self.builtin(u, B::NumSubgroups, "sg_count"),
            ];
        }
    }

    /// `fault(cond, code, pc, detail, alo, ahi)`: notes the first fault in the private fault words.
    fn fault_function(&mut self) {
        let (u, b, void) = (self.ids.u32_, self.ids.bool_, self.ids.void);
        let (f, p) = Func::new(&mut self.m, void, &[b, u, u, u, u, u]);
        self.ids.fault_fn = f.id;
        self.m.name(f.id, "fault");
        self.f = Some(f);
        let fc = self.load(u, self.ids.f[0]);
        let zero = self.c32(0);
        let first = self.op(b, Op::IEqual, &[fc, zero]);
        let c = self.op(b, Op::LogicalAnd, &[p[0], first]);
        let (set, merge) = (self.m.id(), self.m.id());
        self.emit(Op::SelectionMerge, &[merge, 0]);
        self.emit(Op::BranchConditional, &[c, set, merge]);
        self.label(set);
        for i in 0..5 {
            self.store(self.ids.f[i], p[i + 1]);
        }
        self.emit(Op::Branch, &[merge]);
        self.label(merge);
        self.emit(Op::Return, &[]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
    }

    fn call_fault(&mut self, cond: u32, code: FaultCode, pc: u32, detail: u32, alo: u32, ahi: u32) {
        let (code, pc, detail) = (self.c32(code as u32), self.c32(pc), self.c32(detail));
        let void = self.ids.void;
        let fun = self.ids.fault_fn;
        self.op(
            void,
            Op::FunctionCall,
            &[fun, cond, code, pc, detail, alo, ahi],
        );
    }

    /// `record_fault()`: the first faulting work-item writes the fault record.
    fn record_function(&mut self) -> u32 {
        let (u, b, void) = (self.ids.u32_, self.ids.bool_, self.ids.void);
        let (f, _) = Func::new(&mut self.m, void, &[]);
        let id = f.id;
        self.m.name(id, "record_fault");
        self.f = Some(f);
        let ptr = self.m.ptr(SC::StorageBuffer, u);
        let zero = self.c32(0);
        let one = self.c32(1);
        let scope = self.scope(Scope::Device);
        let relaxed = self.c32(0);
        let p0 = self.op(ptr, Op::AccessChain, &[self.ids.fault, zero, zero]);
        let old = self.op(u, Op::AtomicIAdd, &[p0, scope, relaxed, one]);
        let first = self.op(b, Op::IEqual, &[old, zero]);
        let (set, merge) = (self.m.id(), self.m.id());
        self.emit(Op::SelectionMerge, &[merge, 0]);
        self.emit(Op::BranchConditional, &[first, set, merge]);
        self.label(set);
        let mut vals: Vec<u32> = (0..5).map(|i| self.ids.f[i]).collect();
        vals.push(self.ids.cur_thread);
        vals.push(self.ids.cur_group);
        for (i, var) in vals.into_iter().enumerate() {
            let v = self.load(u, var);
            let idx = self.c32(i as u32 + 1);
            let p = self.op(ptr, Op::AccessChain, &[self.ids.fault, zero, idx]);
            self.emit(Op::AtomicStore, &[p, scope, relaxed, v]);
        }
        debug_assert_eq!(FAULT_WORDS, 8);
        self.emit(Op::Branch, &[merge]);
        self.label(merge);
        self.emit(Op::Return, &[]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
        id
    }

    /// The id of the constant holding the SPIR-V scope of `s`.
    fn scope(&mut self, s: Scope) -> u32 {
        let sc = scope_of(s, self.caps.device_scope);
        if sc == spv::Scope::Device {
            self.uses_device_scope = true;
        }
        self.c32(sc as u32)
    }

    fn sem(&mut self, o: MemOrder, spaces: SpaceSet) -> u32 {
        let s = semantics_of(o, spaces);
        self.c32(s.bits())
    }

    /// Notes an order or scope Vulkan cannot express and what runs instead.
    fn note_weakened(&mut self, pc: usize, what: &str, o: MemOrder, scope: Scope) {
        if o == MemOrder::SeqCst {
            let run = match what {
                "load" => "acquire",
                "store" => "release",
                _ => "acq_rel",
            };
            self.emulated.push(format!(
                "{}: seq_cst {what} run as {run} (the Vulkan memory model has no sequentially \
                 consistent order)",
                self.k.where_is(pc)
            ));
        }
        if scope == Scope::System && o != MemOrder::Relaxed {
            self.emulated.push(format!(
                "{}: system-scope {what} run at device scope (Vulkan's widest shader scope)",
                self.k.where_is(pc)
            ));
        }
    }

    // ---- registers and operands ----

    fn opnd(&mut self, o: Operand, v: V) -> u32 {
        let (u, u64_, f) = (self.ids.u32_, self.ids.u64_, self.ids.f32_);
        match o {
            Operand::Reg(r) => {
                let wide = self.wide[r as usize];
                let var = self.ids.regs[r as usize];
                let x = self.load(if wide { u64_ } else { u }, var);
                match (v, wide) {
                    (V::U32, false) | (V::U64, true) => x,
                    (V::U32, true) => self.op(u, Op::UConvert, &[x]),
                    (V::U64, false) => self.op(u64_, Op::UConvert, &[x]),
                    (V::F32, false) => self.op(f, Op::Bitcast, &[x]),
                    (V::F32, true) => {
                        let n = self.op(u, Op::UConvert, &[x]);
                        self.op(f, Op::Bitcast, &[n])
                    }
                }
            }
            Operand::Imm(x) => match v {
                V::U32 => self.c32(x as u32),
                V::U64 => self.m.c64(x),
                V::F32 => self.m.constant(f, x as u32 as u64),
            },
        }
    }

    /// Stores `val` (of `width`) into register `dst`, converting to the register's width.
    fn assign(&mut self, dst: Reg, val: u32, width: Width) {
        let wide = self.wide[dst as usize];
        let v = match (width, wide) {
            (Width::B32, false) | (Width::B64, true) => val,
            (Width::B32, true) => self.op(self.ids.u64_, Op::UConvert, &[val]),
            (Width::B64, false) => self.op(self.ids.u32_, Op::UConvert, &[val]),
        };
        let var = self.ids.regs[dst as usize];
        self.store(var, v);
    }

    fn bool_to_u32(&mut self, c: u32) -> u32 {
        let (one, zero) = (self.c32(1), self.c32(0));
        self.op(self.ids.u32_, Op::Select, &[c, one, zero])
    }

    fn nonzero(&mut self, r: Reg) -> u32 {
        let b = self.ids.bool_;
        if self.wide[r as usize] {
            let x = self.opnd(Operand::Reg(r), V::U64);
            let z = self.m.c64(0);
            self.op(b, Op::INotEqual, &[x, z])
        } else {
            let x = self.opnd(Operand::Reg(r), V::U32);
            let z = self.c32(0);
            self.op(b, Op::INotEqual, &[x, z])
        }
    }

    /// The block id (or DONE) that continues at instruction `t`.
    fn target(&mut self, t: u32) -> u32 {
        match self.block_of.get(&(t as usize)) {
            Some(&b) => self.c32(b as u32),
            None => self.c32(u32::MAX),
        }
    }

    /// Runs `body` only while no fault is noted (the `if (f_code == 0u)` of the WGSL translation: after
    /// a fault the rest of the block runs with its side effects skipped); `ty` is the type of the value
    /// `body` returns, 0 for none. Returns the value, or zero when skipped.
    fn guarded(&mut self, ty: u32, body: impl FnOnce(&mut Self) -> u32) -> u32 {
        let u = self.ids.u32_;
        let b = self.ids.bool_;
        let fc = self.load(u, self.ids.f[0]);
        let zero = self.c32(0);
        let ok = self.op(b, Op::IEqual, &[fc, zero]);
        let (then, merge) = (self.m.id(), self.m.id());
        let pre = self.fx().cur;
        self.emit(Op::SelectionMerge, &[merge, 0]);
        self.emit(Op::BranchConditional, &[ok, then, merge]);
        self.label(then);
        let v = body(self);
        let then_end = self.fx().cur;
        self.emit(Op::Branch, &[merge]);
        self.label(merge);
        if ty == 0 {
            return 0;
        }
        let z = self.m.constant(ty, 0);
        self.op(ty, Op::Phi, &[v, then_end, z, pre])
    }

    // ---- blocks ----

    fn block(&mut self, b: usize, start: usize, end: usize) -> Result<u32, TranslateError> {
        let u = self.ids.u32_;
        let (f, _) = Func::new(&mut self.m, u, &[]);
        let id = f.id;
        self.m.name(id, &format!("block{b}"));
        self.f = Some(f);
        let mut ret = None;
        for pc in start..end {
            let inst = self.k.insts[pc].clone();
            if let Some(r) = self.inst(pc, &inst)? {
                ret = Some(r);
            }
        }
        let next = match ret {
            Some(r) => r,
            None => self.target(end as u32),
        };
        self.emit(Op::ReturnValue, &[next]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
        Ok(id)
    }

    /// Emits one instruction; returns the successor block id for branches, exits and barriers.
    fn inst(&mut self, pc: usize, inst: &Inst) -> Result<Option<u32>, TranslateError> {
        let (u, u64_, f, b) = (self.ids.u32_, self.ids.u64_, self.ids.f32_, self.ids.bool_);
        match *inst {
            Inst::Mov { dst, src } => {
                if self.wide[dst as usize] {
                    let v = self.opnd(src, V::U64);
                    self.assign(dst, v, Width::B64);
                } else {
                    let v = self.opnd(src, V::U32);
                    self.assign(dst, v, Width::B32);
                }
            }
            Inst::ReadSpecial { dst, which } => {
                let v = self.special(pc, which)?;
                self.assign(dst, v, Width::B32);
            }
            Inst::Alu { op, ty, dst, a, b } => self.alu(pc, op, ty, dst, a, b),
            Inst::Cmp {
                op,
                ty,
                dst,
                a,
                b: bb,
            } => {
                let v = view(ty);
                let (x, y) = (self.opnd(a, v), self.opnd(bb, v));
                let signed = matches!(ty, Ty::I32 | Ty::I64);
                let o = match (op, ty.is_float(), signed) {
                    (CmpOp::Eq, true, _) => Op::FOrdEqual,
                    (CmpOp::Ne, true, _) => Op::FUnordNotEqual,
                    (CmpOp::Lt, true, _) => Op::FOrdLessThan,
                    (CmpOp::Le, true, _) => Op::FOrdLessThanEqual,
                    (CmpOp::Gt, true, _) => Op::FOrdGreaterThan,
                    (CmpOp::Ge, true, _) => Op::FOrdGreaterThanEqual,
                    (CmpOp::Eq, false, _) => Op::IEqual,
                    (CmpOp::Ne, false, _) => Op::INotEqual,
                    (CmpOp::Lt, false, false) => Op::ULessThan,
                    (CmpOp::Le, false, false) => Op::ULessThanEqual,
                    (CmpOp::Gt, false, false) => Op::UGreaterThan,
                    (CmpOp::Ge, false, false) => Op::UGreaterThanEqual,
                    (CmpOp::Lt, false, true) => Op::SLessThan,
                    (CmpOp::Le, false, true) => Op::SLessThanEqual,
                    (CmpOp::Gt, false, true) => Op::SGreaterThan,
                    (CmpOp::Ge, false, true) => Op::SGreaterThanEqual,
                };
                let c = self.op(b, o, &[x, y]);
                let r = self.bool_to_u32(c);
                self.assign(dst, r, Width::B32);
            }
            Inst::Select {
                dst,
                cond,
                a,
                b: bb,
            } => {
                let c = self.nonzero(cond);
                let (v, t, w) = if self.wide[dst as usize] {
                    (V::U64, u64_, Width::B64)
                } else {
                    (V::U32, u, Width::B32)
                };
                let (x, y) = (self.opnd(a, v), self.opnd(bb, v));
                let r = self.op(t, Op::Select, &[c, x, y]);
                self.assign(dst, r, w);
            }
            Inst::Cvt { dst, src, from, to } => {
                let s = Operand::Reg(src);
                let (v, w) = match (from, to) {
                    (Ty::F32, Ty::F32) => (self.opnd(s, V::U32), Width::B32),
                    (_, Ty::F32) => {
                        let x = self.opnd(s, view(from));
                        let o = if matches!(from, Ty::I32 | Ty::I64) {
                            Op::ConvertSToF
                        } else {
                            Op::ConvertUToF
                        };
                        let fl = self.op(f, o, &[x]);
                        (self.op(u, Op::Bitcast, &[fl]), Width::B32)
                    }
                    (Ty::F32, to) => {
                        // Saturating, as WGSL's conversions (the range of the target type).
                        let x = self.opnd(s, V::F32);
                        let (lo, hi) = match to {
                            Ty::U32 => (0.0f32, 4294967040.0f32),
                            Ty::I32 => (-2147483648.0, 2147483520.0),
                            Ty::U64 => (0.0, 18446742974197923840.0),
                            _ => (-9223372036854775808.0, 9223371487098961920.0),
                        };
                        let (lo, hi) = (self.m.cf32(lo), self.m.cf32(hi));
                        let x = self.glsl(f, GLSL_FMAX, &[x, lo]);
                        let x = self.glsl(f, GLSL_FMIN, &[x, hi]);
                        match to {
                            Ty::U32 => (self.op(u, Op::ConvertFToU, &[x]), Width::B32),
                            Ty::U64 => (self.op(u64_, Op::ConvertFToU, &[x]), Width::B64),
                            Ty::I32 => {
                                let i = self.m.ty(Type::I32);
                                let c = self.op(i, Op::ConvertFToS, &[x]);
                                (self.op(u, Op::Bitcast, &[c]), Width::B32)
                            }
                            _ => {
                                let i = self.m.ty(Type::I64);
                                let c = self.op(i, Op::ConvertFToS, &[x]);
                                (self.op(u64_, Op::Bitcast, &[c]), Width::B64)
                            }
                        }
                    }
                    (_, Ty::U32 | Ty::I32) => (self.opnd(s, V::U32), Width::B32),
                    (Ty::I32, _) => {
                        let x = self.opnd(s, V::U32);
                        (self.op(u64_, Op::SConvert, &[x]), Width::B64)
                    }
                    (Ty::U32, _) => (self.opnd(s, V::U64), Width::B64),
                    (_, _) => (self.opnd(s, V::U64), Width::B64),
                };
                self.assign(dst, v, w);
            }
            Inst::Branch { target, cond } => {
                let t = self.target(target);
                return Ok(Some(match cond {
                    None => t,
                    Some((r, nz)) => {
                        let c = self.nonzero(r);
                        let fall = self.target(pc as u32 + 1);
                        if nz {
                            self.op(u, Op::Select, &[c, t, fall])
                        } else {
                            self.op(u, Op::Select, &[c, fall, t])
                        }
                    }
                }));
            }
            Inst::Exit => return Ok(Some(self.c32(u32::MAX))),
            Inst::Barrier { kind, .. } => {
                if kind == BarrierKind::SubGroup {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group barriers are not translated to SPIR-V (they must be reached in \
                         uniform control flow, which the translation cannot promise)",
                    ));
                }
                let t = self.m.cbool(true);
                self.store(self.ids.at_barrier, t);
                return Ok(Some(self.target(pc as u32 + 1)));
            }
            Inst::Fence { ord, scope, spaces } => {
                if scope == Scope::WorkItem {
                    return Err(err(
                        self.k,
                        pc,
                        "a fence at work_item scope orders nothing Vulkan can express",
                    ));
                }
                self.note_weakened(pc, "fence", ord.order(), scope);
                // A fence that names no space orders both.
                let sp = if spaces == SpaceSet::NONE {
                    SpaceSet::BOTH
                } else {
                    spaces
                };
                let (sc, sem) = (self.scope(scope), self.sem(ord.order(), sp));
                self.guarded(0, |g| {
                    g.emit(Op::MemoryBarrier, &[sc, sem]);
                    0
                });
            }
            Inst::Compute { .. } => {
                return Err(err(
                    self.k,
                    pc,
                    "a timing-only trace instruction has no SPIR-V equivalent",
                ));
            }
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                scope,
            } => {
                let w = ty.width();
                let order = ord.atomic_order();
                if let Some(o) = order {
                    self.note_weakened(pc, "load", o, scope);
                    if w == Width::B64 {
                        self.need_int64_atomics(pc, space)?;
                    }
                }
                let idx = self.address(pc, space, addr, w)?;
                let t = if w == Width::B64 { u64_ } else { u };
                let v = self.guarded(t, |g| match order {
                    Some(o) => {
                        let p = g.pointer(space, idx, w);
                        // A load cannot release: seq_cst is an acquire.
                        let o = if o == MemOrder::SeqCst {
                            MemOrder::Acquire
                        } else {
                            o
                        };
                        let (sc, sem) = (g.scope(scope), g.sem(o, SpaceSet::BOTH));
                        g.op(t, Op::AtomicLoad, &[p, sc, sem])
                    }
                    None => g.plain_read(space, idx, w),
                });
                self.assign(dst, v, w);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                scope,
            } => {
                let w = ty.width();
                let order = ord.atomic_order();
                if let Some(o) = order {
                    self.note_weakened(pc, "store", o, scope);
                    if w == Width::B64 {
                        self.need_int64_atomics(pc, space)?;
                    }
                }
                let idx = self.address(pc, space, addr, w)?;
                let v = self.opnd(src, if w == Width::B64 { V::U64 } else { V::U32 });
                self.guarded(0, |g| {
                    match order {
                        Some(o) => {
                            let p = g.pointer(space, idx, w);
                            // A store cannot acquire: seq_cst is a release.
                            let o = if o == MemOrder::SeqCst {
                                MemOrder::Release
                            } else {
                                o
                            };
                            let (sc, sem) = (g.scope(scope), g.sem(o, SpaceSet::BOTH));
                            g.emit(Op::AtomicStore, &[p, sc, sem, v]);
                        }
                        None => g.plain_write(space, idx, w, v),
                    }
                    0
                });
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                scope,
            } => self.rmw(pc, dst, op, space, addr, operand, ty, ord, scope)?,
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                failure,
                scope,
                ..
            } => {
                let w = ty.width();
                if w == Width::B64 {
                    self.need_int64_atomics(pc, space)?;
                }
                self.note_weakened(pc, "compare-exchange", success.order(), scope);
                let idx = self.address(pc, space, addr, w)?;
                let v = if w == Width::B64 { V::U64 } else { V::U32 };
                let t = if w == Width::B64 { u64_ } else { u };
                let (e, d) = (self.opnd(expected, v), self.opnd(desired, v));
                let fail = failure.atomic_order().unwrap_or(MemOrder::Relaxed);
                // The failure order never releases (SPIR-V: Unequal is not a release).
                let fail = match fail {
                    MemOrder::SeqCst | MemOrder::AcqRel => MemOrder::Acquire,
                    MemOrder::Release => MemOrder::Relaxed,
                    o => o,
                };
                let r = self.guarded(t, |g| {
                    let p = g.pointer(space, idx, w);
                    let sc = g.scope(scope);
                    let eq = g.sem(success.order(), SpaceSet::BOTH);
                    let ne = g.sem(fail, SpaceSet::BOTH);
                    g.op(t, Op::AtomicCompareExchange, &[p, sc, eq, ne, d, e])
                });
                if let Some(dst) = dst {
                    self.assign(dst, r, w);
                }
            }
        }
        Ok(None)
    }

    fn need_int64_atomics(&mut self, pc: usize, space: Space) -> Result<(), TranslateError> {
        if !self.caps.base.int64_atomics || self.ids.u64_ == 0 {
            return Err(err(
                self.k,
                pc,
                "64-bit atomics are not available on this adapter (Int64Atomics)",
            ));
        }
        if space == Space::Local {
            return Err(err(
                self.k,
                pc,
                "64-bit atomics on local memory are not translated (local memory is one array of \
                 32-bit words)",
            ));
        }
        self.needs.int64_atomics = true;
        Ok(())
    }

    fn special(&mut self, pc: usize, s: Special) -> Result<u32, TranslateError> {
        let u = self.ids.u32_;
        let v3 = self.m.ty(Type::V3U32);
        let comp = |g: &mut Self, var: u32, d: Dim| {
            let v = g.load(v3, var);
            g.op(u, Op::CompositeExtract, &[v, d.index() as u32])
        };
        let gs = self.group_size;
        Ok(match s {
            Special::GlobalId(d) => comp(self, self.ids.gid, d),
            Special::LocalId(d) => comp(self, self.ids.lid, d),
            Special::GroupId(d) => comp(self, self.ids.wid, d),
            Special::NumGroups(d) => comp(self, self.ids.nwg, d),
            Special::LocalSize(d) => self.c32(gs[d.index()]),
            Special::GlobalSize(d) => {
                let n = comp(self, self.ids.nwg, d);
                let c = self.c32(gs[d.index()]);
                self.op(u, Op::IMul, &[n, c])
            }
            Special::GlobalLinearId => {
                let g = self.load(v3, self.ids.gid);
                let n = self.load(v3, self.ids.nwg);
                let gx = self.op(u, Op::CompositeExtract, &[g, 0]);
                let gy = self.op(u, Op::CompositeExtract, &[g, 1]);
                let gz = self.op(u, Op::CompositeExtract, &[g, 2]);
                let nx = self.op(u, Op::CompositeExtract, &[n, 0]);
                let ny = self.op(u, Op::CompositeExtract, &[n, 1]);
                let (sx, sy) = (self.c32(gs[0]), self.c32(gs[1]));
                // gx + nx*sx*(gy + ny*sy*gz)
                let a = self.op(u, Op::IMul, &[ny, sy]);
                let a = self.op(u, Op::IMul, &[a, gz]);
                let a = self.op(u, Op::IAdd, &[gy, a]);
                let w = self.op(u, Op::IMul, &[nx, sx]);
                let a = self.op(u, Op::IMul, &[w, a]);
                self.op(u, Op::IAdd, &[gx, a])
            }
            Special::LocalLinearId => self.load(u, self.ids.lidx),
            Special::GroupLinearId => self.load(u, self.ids.cur_group),
            Special::Lane | Special::SubGroupId | Special::SubGroupSize | Special::NumSubGroups => {
                if !self.caps.base.subgroups {
                    return Err(err(
                        self.k,
                        pc,
                        "sub-group registers need sub-group support, which this adapter lacks",
                    ));
                }
                self.needs.subgroups = true;
                let i = match s {
                    Special::Lane => 0,
                    Special::SubGroupSize => 1,
                    Special::SubGroupId => 2,
                    _ => 3,
                };
                self.load(u, self.ids.sg[i])
            }
            Special::SmId => return Err(err(self.k, pc, "the SPIR-V translation has no SM id")),
            Special::Clock => {
                return Err(err(
                    self.k,
                    pc,
                    "the SPIR-V translation has no clock register",
                ))
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn alu(&mut self, pc: usize, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) {
        let ty = alu::operand_ty(op, ty);
        let v = view(ty);
        let (u, u64_, f, bl) = (self.ids.u32_, self.ids.u64_, self.ids.f32_, self.ids.bool_);
        let t = match v {
            V::U32 => u,
            V::U64 => u64_,
            V::F32 => f,
        };
        let (x, mut y) = (self.opnd(a, v), self.opnd(b, v));
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let w64 = ty.width() == Width::B64;
        let (zero, one) = if w64 {
            (self.m.c64(0), self.m.c64(1))
        } else {
            (self.c32(0), self.c32(1))
        };
        let shift = |g: &mut Self| {
            let bits = alu::shift_mask(ty) as u64;
            let m = if w64 {
                g.m.c64(bits)
            } else {
                g.c32(bits as u32)
            };
            g.op(t, Op::BitwiseAnd, &[y, m])
        };
        let r = match op {
            AluOp::Add if ty.is_float() => self.op(t, Op::FAdd, &[x, y]),
            AluOp::Sub if ty.is_float() => self.op(t, Op::FSub, &[x, y]),
            AluOp::Mul if ty.is_float() => self.op(t, Op::FMul, &[x, y]),
            AluOp::Div if ty.is_float() => self.op(t, Op::FDiv, &[x, y]),
            AluOp::Rem if ty.is_float() => self.op(t, Op::FRem, &[x, y]),
            AluOp::Min if ty.is_float() => self.glsl(t, GLSL_FMIN, &[x, y]),
            AluOp::Max if ty.is_float() => self.glsl(t, GLSL_FMAX, &[x, y]),
            AluOp::Add => self.op(t, Op::IAdd, &[x, y]),
            AluOp::Sub => self.op(t, Op::ISub, &[x, y]),
            AluOp::Mul => self.op(t, Op::IMul, &[x, y]),
            AluOp::Div | AluOp::Rem => {
                // The simulator's faults (`alu::divide_faults`); the divisor is replaced by 1 when
                // faulting so that the division itself is defined.
                let mut bad = self.op(bl, Op::IEqual, &[y, zero]);
                if signed {
                    let min = if w64 {
                        self.m.c64(i64::MIN as u64)
                    } else {
                        self.c32(i32::MIN as u32)
                    };
                    let m1 = if w64 {
                        self.m.c64(u64::MAX)
                    } else {
                        self.c32(u32::MAX)
                    };
                    let a_min = self.op(bl, Op::IEqual, &[x, min]);
                    let b_m1 = self.op(bl, Op::IEqual, &[y, m1]);
                    let ovf = self.op(bl, Op::LogicalAnd, &[a_min, b_m1]);
                    bad = self.op(bl, Op::LogicalOr, &[bad, ovf]);
                }
                let z = self.c32(0);
                self.call_fault(bad, FaultCode::DivByZero, pc as u32, 0, z, z);
                y = self.op(t, Op::Select, &[bad, one, y]);
                let o = match (op, signed) {
                    (AluOp::Div, false) => Op::UDiv,
                    (AluOp::Div, true) => Op::SDiv,
                    (_, false) => Op::UMod,
                    (_, true) => Op::SRem,
                };
                self.op(t, o, &[x, y])
            }
            AluOp::Min => self.glsl(t, if signed { GLSL_SMIN } else { GLSL_UMIN }, &[x, y]),
            AluOp::Max => self.glsl(t, if signed { GLSL_SMAX } else { GLSL_UMAX }, &[x, y]),
            AluOp::And => self.op(t, Op::BitwiseAnd, &[x, y]),
            AluOp::Or => self.op(t, Op::BitwiseOr, &[x, y]),
            AluOp::Xor => self.op(t, Op::BitwiseXor, &[x, y]),
            AluOp::Shl => {
                let s = shift(self);
                self.op(t, Op::ShiftLeftLogical, &[x, s])
            }
            AluOp::Shr => {
                let s = shift(self);
                let o = if signed {
                    Op::ShiftRightArithmetic
                } else {
                    Op::ShiftRightLogical
                };
                self.op(t, o, &[x, s])
            }
        };
        let (r, w) = match v {
            V::F32 => (self.op(u, Op::Bitcast, &[r]), Width::B32),
            V::U32 => (r, Width::B32),
            V::U64 => (r, Width::B64),
        };
        self.assign(dst, r, w);
    }

    /// The address computation and its checks (as in the WGSL translation); returns the word index.
    fn address(
        &mut self,
        pc: usize,
        space: Space,
        addr: Address,
        w: Width,
    ) -> Result<u32, TranslateError> {
        let (u, u64_, b) = (self.ids.u32_, self.ids.u64_, self.ids.bool_);
        let bytes = w.bytes();
        let base_wide = matches!(addr.base, Operand::Reg(r) if self.wide[r as usize])
            || matches!(addr.base, Operand::Imm(v) if v > u32::MAX as u64);
        let (a, ahi, fits) = if base_wide {
            if u64_ == 0 {
                return Err(err(
                    self.k,
                    pc,
                    "needs 64-bit integers, which this adapter lacks (Int64)",
                ));
            }
            let base = self.opnd(addr.base, V::U64);
            let off = self.m.c64(addr.offset as u64);
            let a64 = self.op(u64_, Op::IAdd, &[base, off]);
            let a = self.op(u, Op::UConvert, &[a64]);
            let c32 = self.m.c64(32);
            let hi64 = self.op(u64_, Op::ShiftRightLogical, &[a64, c32]);
            let hi = self.op(u, Op::UConvert, &[hi64]);
            let z = self.c32(0);
            let fits = self.op(b, Op::IEqual, &[hi, z]);
            (a, hi, fits)
        } else {
            let base = self.opnd(addr.base, V::U32);
            let off = addr.offset;
            if (0..=u32::MAX as i64).contains(&off) {
                let c = self.c32(off as u32);
                let a = self.op(u, Op::IAdd, &[base, c]);
                let wrapped = self.op(b, Op::ULessThan, &[a, base]);
                let hi = self.bool_to_u32(wrapped);
                let fits = self.op(b, Op::LogicalNot, &[wrapped]);
                (a, hi, fits)
            } else if (-(u32::MAX as i64)..0).contains(&off) {
                let c = self.c32(off.unsigned_abs() as u32);
                let a = self.op(u, Op::ISub, &[base, c]);
                let under = self.op(b, Op::ULessThan, &[base, c]);
                let (ones, z) = (self.c32(u32::MAX), self.c32(0));
                let hi = self.op(u, Op::Select, &[under, ones, z]);
                let fits = self.op(b, Op::LogicalNot, &[under]);
                (a, hi, fits)
            } else {
                let c = self.c32(off as u64 as u32);
                let a = self.op(u, Op::IAdd, &[base, c]);
                (a, self.c32(u32::MAX), self.m.cbool(false))
            }
        };
        let (in_range, code_space) = match space {
            Space::Global => {
                let mut any = self.m.cbool(false);
                for (base, len) in self.placed.clone() {
                    if len < bytes as u64 {
                        continue;
                    }
                    let cb = self.c32(base as u32);
                    let lim = self.c32((len - bytes as u64) as u32);
                    let ge = self.op(b, Op::UGreaterThanEqual, &[a, cb]);
                    let d = self.op(u, Op::ISub, &[a, cb]);
                    let le = self.op(b, Op::ULessThanEqual, &[d, lim]);
                    let both = self.op(b, Op::LogicalAnd, &[ge, le]);
                    any = self.op(b, Op::LogicalOr, &[any, both]);
                }
                (any, 0u32)
            }
            Space::Local => {
                let lb = self.k.local_bytes;
                let c = if lb >= bytes {
                    let lim = self.c32(lb - bytes);
                    self.op(b, Op::ULessThanEqual, &[a, lim])
                } else {
                    self.m.cbool(false)
                };
                (c, 1)
            }
        };
        let detail = code_space << 8 | bytes;
        let ok = self.op(b, Op::LogicalAnd, &[fits, in_range]);
        let bad = self.op(b, Op::LogicalNot, &[ok]);
        self.call_fault(bad, FaultCode::OutOfBounds, pc as u32, detail, a, ahi);
        let mask = self.c32(bytes - 1);
        let low = self.op(u, Op::BitwiseAnd, &[a, mask]);
        let z = self.c32(0);
        let mis = self.op(b, Op::INotEqual, &[low, z]);
        self.call_fault(mis, FaultCode::Misaligned, pc as u32, detail, a, z);
        let two = self.c32(2);
        let rel = match space {
            Space::Global => {
                let gb = self.c32(GLOBAL_BASE as u32);
                self.op(u, Op::ISub, &[a, gb])
            }
            Space::Local => a,
        };
        Ok(self.op(u, Op::ShiftRightLogical, &[rel, two]))
    }

    /// A pointer to the word (or, for 64-bit atomics, the double word) at word index `idx`.
    fn pointer(&mut self, space: Space, idx: u32, w: Width) -> u32 {
        let u = self.ids.u32_;
        let zero = self.c32(0);
        match (space, w) {
            (Space::Local, _) => {
                let p = self.m.ptr(SC::Workgroup, u);
                self.op(p, Op::AccessChain, &[self.ids.lmem, idx])
            }
            (Space::Global, Width::B32) => {
                let p = self.m.ptr(SC::StorageBuffer, u);
                self.op(p, Op::AccessChain, &[self.ids.mem, zero, idx])
            }
            (Space::Global, Width::B64) => {
                let p = self.m.ptr(SC::StorageBuffer, self.ids.u64_);
                let one = self.c32(1);
                let i = self.op(u, Op::ShiftRightLogical, &[idx, one]);
                self.op(p, Op::AccessChain, &[self.ids.mem64, zero, i])
            }
        }
    }

    fn word_ptr(&mut self, space: Space, idx: u32) -> u32 {
        self.pointer(space, idx, Width::B32)
    }

    /// A non-atomic read; `NonPrivatePointer` puts it under the availability and visibility that
    /// releases and acquires perform.
    fn plain_read(&mut self, space: Space, idx: u32, w: Width) -> u32 {
        let u = self.ids.u32_;
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        let p = self.word_ptr(space, idx);
        let lo = self.op(u, Op::Load, &[p, np]);
        if w == Width::B32 {
            return lo;
        }
        let one = self.c32(1);
        let i1 = self.op(u, Op::IAdd, &[idx, one]);
        let p1 = self.word_ptr(space, i1);
        let hi = self.op(u, Op::Load, &[p1, np]);
        let u64_ = self.ids.u64_;
        let lo = self.op(u64_, Op::UConvert, &[lo]);
        let hi = self.op(u64_, Op::UConvert, &[hi]);
        let c32 = self.c32(32);
        let hi = self.op(u64_, Op::ShiftLeftLogical, &[hi, c32]);
        self.op(u64_, Op::BitwiseOr, &[lo, hi])
    }

    fn plain_write(&mut self, space: Space, idx: u32, w: Width, v: u32) {
        let u = self.ids.u32_;
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        let p = self.word_ptr(space, idx);
        if w == Width::B32 {
            self.emit(Op::Store, &[p, v, np]);
            return;
        }
        let lo = self.op(u, Op::UConvert, &[v]);
        self.emit(Op::Store, &[p, lo, np]);
        let c32 = self.c32(32);
        let hi64 = self.op(self.ids.u64_, Op::ShiftRightLogical, &[v, c32]);
        let hi = self.op(u, Op::UConvert, &[hi64]);
        let one = self.c32(1);
        let i1 = self.op(u, Op::IAdd, &[idx, one]);
        let p1 = self.word_ptr(space, i1);
        self.emit(Op::Store, &[p1, hi, np]);
    }

    #[allow(clippy::too_many_arguments)]
    fn rmw(
        &mut self,
        pc: usize,
        dst: Option<Reg>,
        op: RmwOp,
        space: Space,
        addr: Address,
        operand: Operand,
        ty: Ty,
        ord: RmwOrd,
        scope: Scope,
    ) -> Result<(), TranslateError> {
        let w = ty.width();
        if w == Width::B64 {
            self.need_int64_atomics(pc, space)?;
        }
        self.note_weakened(pc, "atomic", ord.order(), scope);
        let idx = self.address(pc, space, addr, w)?;
        let (v, t) = if w == Width::B64 {
            (V::U64, self.ids.u64_)
        } else {
            (V::U32, self.ids.u32_)
        };
        let x = self.opnd(operand, v);
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let native = match (ty, op) {
            (Ty::F32, _) | (_, RmwOp::Inc | RmwOp::Dec) => None,
            (_, RmwOp::Add) => Some(Op::AtomicIAdd),
            (_, RmwOp::Sub) => Some(Op::AtomicISub),
            (_, RmwOp::And) => Some(Op::AtomicAnd),
            (_, RmwOp::Or) => Some(Op::AtomicOr),
            (_, RmwOp::Xor) => Some(Op::AtomicXor),
            (_, RmwOp::Exch) => Some(Op::AtomicExchange),
            (_, RmwOp::Min) if signed => Some(Op::AtomicSMin),
            (_, RmwOp::Max) if signed => Some(Op::AtomicSMax),
            (_, RmwOp::Min) => Some(Op::AtomicUMin),
            (_, RmwOp::Max) => Some(Op::AtomicUMax),
        };
        if native.is_none() {
            self.emulated.push(format!(
                "{}: atomic {} on {} emulated by a compare-exchange loop",
                self.k.where_is(pc),
                rmw_name(op),
                ty.name()
            ));
        }
        let order = ord.order();
        let r = self.guarded(t, |g| {
            let p = g.pointer(space, idx, w);
            let sc = g.scope(scope);
            let sem = g.sem(order, SpaceSet::BOTH);
            match native {
                Some(o) => g.op(t, o, &[p, sc, sem, x]),
                None => g.cas_loop(p, t, sc, order, |g, old| g.rmw_value(op, ty, old, x)),
            }
        });
        if let Some(d) = dst {
            self.assign(d, r, w);
        }
        Ok(())
    }

    /// `old = atomic load; loop { r = cas(p, old, new(old)); if r == old break; old = r }`; returns the
    /// value the successful exchange replaced. The exchange carries `order`; the loads are relaxed.
    fn cas_loop(
        &mut self,
        p: u32,
        t: u32,
        sc: u32,
        order: MemOrder,
        new: impl Fn(&mut Self, u32) -> u32,
    ) -> u32 {
        let bl = self.ids.bool_;
        let relaxed = self.c32(0);
        let var = {
            let f = self.f.as_mut().unwrap();
            f.var(&mut self.m, t)
        };
        let init = self.op(t, Op::AtomicLoad, &[p, sc, relaxed]);
        self.store(var, init);
        let eq = self.sem(order, SpaceSet::BOTH);
        let fail = match order {
            MemOrder::Release | MemOrder::Relaxed => MemOrder::Relaxed,
            _ => MemOrder::Acquire,
        };
        let ne = self.sem(fail, SpaceSet::BOTH);
        let (header, body, cont, merge) = (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        self.emit(Op::Branch, &[header]);
        self.label(header);
        self.emit(Op::LoopMerge, &[merge, cont, 0]);
        self.emit(Op::Branch, &[body]);
        self.label(body);
        let old = self.load(t, var);
        let nv = new(self, old);
        let r = self.op(t, Op::AtomicCompareExchange, &[p, sc, eq, ne, nv, old]);
        self.store(var, r);
        let done = self.op(bl, Op::IEqual, &[r, old]);
        self.emit(Op::BranchConditional, &[done, merge, cont]);
        self.label(cont);
        self.emit(Op::Branch, &[header]);
        self.label(merge);
        self.load(t, var)
    }

    /// The new value of an emulated read-modify-write (`machine::atomic::apply_rmw`).
    fn rmw_value(&mut self, op: RmwOp, ty: Ty, old: u32, v: u32) -> u32 {
        let w64 = ty.width() == Width::B64;
        let (t, bl, f) = (
            if w64 { self.ids.u64_ } else { self.ids.u32_ },
            self.ids.bool_,
            self.ids.f32_,
        );
        let (one, zero) = if w64 {
            (self.m.c64(1), self.m.c64(0))
        } else {
            (self.c32(1), self.c32(0))
        };
        match (ty, op) {
            (Ty::F32, op) if !alu::float_rmw(op) => old,
            (Ty::F32, RmwOp::Exch) => v,
            (Ty::F32, op) => {
                let a = self.op(f, Op::Bitcast, &[old]);
                let b = self.op(f, Op::Bitcast, &[v]);
                let r = match op {
                    RmwOp::Add => self.op(f, Op::FAdd, &[a, b]),
                    RmwOp::Sub => self.op(f, Op::FSub, &[a, b]),
                    RmwOp::Min => self.glsl(f, GLSL_FMIN, &[a, b]),
                    _ => self.glsl(f, GLSL_FMAX, &[a, b]),
                };
                self.op(t, Op::Bitcast, &[r])
            }
            (_, RmwOp::Inc) => {
                let ge = self.op(bl, Op::UGreaterThanEqual, &[old, v]);
                let inc = self.op(t, Op::IAdd, &[old, one]);
                self.op(t, Op::Select, &[ge, zero, inc])
            }
            (_, RmwOp::Dec) => {
                let z = self.op(bl, Op::IEqual, &[old, zero]);
                let gt = self.op(bl, Op::UGreaterThan, &[old, v]);
                let wrap = self.op(bl, Op::LogicalOr, &[z, gt]);
                let dec = self.op(t, Op::ISub, &[old, one]);
                self.op(t, Op::Select, &[wrap, v, dec])
            }
            _ => unreachable!("native read-modify-writes do not loop"),
        }
    }

    /// The entry point: ids into private variables, the dispatcher loop over the block functions, and
    /// (when the kernel has barriers) the outer loop where all work-items meet at one barrier.
    fn main(&mut self, blocks: &[u32], record: u32, opts: Options) -> u32 {
        let (u, bl, void) = (self.ids.u32_, self.ids.bool_, self.ids.void);
        let v3 = self.m.ty(Type::V3U32);
        let (f, _) = Func::new(&mut self.m, void, &[]);
        let id = f.id;
        self.m.name(id, "main");
        self.f = Some(f);
        let (blk, steps, counted) = {
            let f = self.f.as_mut().unwrap();
            let a = f.var(&mut self.m, u);
            let b = f.var(&mut self.m, u);
            let c = f.var(&mut self.m, bl);
            (a, b, c)
        };
        let zero = self.c32(0);
        let done_c = self.c32(u32::MAX);
        let fals = self.m.cbool(false);
        self.store(blk, zero);
        self.store(steps, zero);
        self.store(counted, fals);
        // cur_group = wid.x + nwg.x * (wid.y + nwg.y * wid.z); cur_thread = cur_group * T + lidx.
        let wid = self.load(v3, self.ids.wid);
        let nwg = self.load(v3, self.ids.nwg);
        let wx = self.op(u, Op::CompositeExtract, &[wid, 0]);
        let wy = self.op(u, Op::CompositeExtract, &[wid, 1]);
        let wz = self.op(u, Op::CompositeExtract, &[wid, 2]);
        let nx = self.op(u, Op::CompositeExtract, &[nwg, 0]);
        let ny = self.op(u, Op::CompositeExtract, &[nwg, 1]);
        let a = self.op(u, Op::IMul, &[ny, wz]);
        let a = self.op(u, Op::IAdd, &[wy, a]);
        let a = self.op(u, Op::IMul, &[nx, a]);
        let cg = self.op(u, Op::IAdd, &[wx, a]);
        self.store(self.ids.cur_group, cg);
        let [x, y, z] = self.group_size;
        let gt = self.c32(x * y * z);
        let lidx = self.load(u, self.ids.lidx);
        let ct = self.op(u, Op::IMul, &[cg, gt]);
        let ct = self.op(u, Op::IAdd, &[ct, lidx]);
        self.store(self.ids.cur_thread, ct);
        if self.ids.lmem != 0 {
            self.zero_local(lidx, gt);
        }

        let barriers: Vec<(SpaceSet, Scope)> = self
            .k
            .insts
            .iter()
            .filter_map(|i| match *i {
                Inst::Barrier { spaces, scope, .. } => Some((spaces, scope)),
                _ => None,
            })
            .collect();
        let has_barrier = !barriers.is_empty();
        let (outer_header, outer_body, outer_cont, outer_merge) =
            (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        let after_inner = self.m.id();
        if has_barrier {
            self.emit(Op::Branch, &[outer_header]);
            self.label(outer_header);
            self.emit(Op::LoopMerge, &[outer_merge, outer_cont, 0]);
            self.emit(Op::Branch, &[outer_body]);
            self.label(outer_body);
            let b = self.load(u, blk);
            let live = self.op(bl, Op::INotEqual, &[b, done_c]);
            let inner = self.m.id();
            self.emit(Op::SelectionMerge, &[after_inner, 0]);
            self.emit(Op::BranchConditional, &[live, inner, after_inner]);
            self.label(inner);
        }
        // The inner dispatcher loop.
        let (ih, ib, ic, im, after_sw) = (
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
            self.m.id(),
        );
        self.emit(Op::Branch, &[ih]);
        self.label(ih);
        self.emit(Op::LoopMerge, &[im, ic, 0]);
        self.emit(Op::Branch, &[ib]);
        self.label(ib);
        let s = self.load(u, steps);
        let one = self.c32(1);
        let s = self.op(u, Op::IAdd, &[s, one]);
        self.store(steps, s);
        let maxc = self.c32(opts.max_steps);
        let over = self.op(bl, Op::UGreaterThan, &[s, maxc]);
        let b = self.load(u, blk);
        let z = self.c32(0);
        self.call_fault_dyn(over, FaultCode::StepLimit, b, z);
        let b2 = self.op(u, Op::Select, &[over, done_c, b]);
        self.store(blk, b2);
        let cases: Vec<u32> = blocks.iter().map(|_| self.m.id()).collect();
        self.emit(Op::SelectionMerge, &[after_sw, 0]);
        let mut sw = vec![b2, after_sw];
        for (i, &c) in cases.iter().enumerate() {
            sw.push(i as u32);
            sw.push(c);
        }
        self.emit(Op::Switch, &sw);
        for (i, &c) in cases.iter().enumerate() {
            self.label(c);
            let r = self.op(u, Op::FunctionCall, &[blocks[i]]);
            self.store(blk, r);
            self.emit(Op::Branch, &[after_sw]);
        }
        self.label(after_sw);
        let fc = self.load(u, self.ids.f[0]);
        let faulted = self.op(bl, Op::INotEqual, &[fc, z]);
        let b3 = self.load(u, blk);
        let b3 = self.op(u, Op::Select, &[faulted, done_c, b3]);
        self.store(blk, b3);
        let is_done = self.op(bl, Op::IEqual, &[b3, done_c]);
        let atb = self.load(bl, self.ids.at_barrier);
        let stop = self.op(bl, Op::LogicalOr, &[is_done, atb]);
        self.emit(Op::BranchConditional, &[stop, im, ic]);
        self.label(ic);
        self.emit(Op::Branch, &[ih]);
        self.label(im);
        if has_barrier {
            self.emit(Op::Branch, &[after_inner]);
            self.label(after_inner);
            let local_words = self.k.local_bytes.div_ceil(4);
            let lp = self.m.ptr(SC::Workgroup, u);
            let (ci_exit, ci_live) = (self.c32(local_words), self.c32(local_words + 1));
            let p_exit = self.op(lp, Op::AccessChain, &[self.ids.lmem, ci_exit]);
            let p_live = self.op(lp, Op::AccessChain, &[self.ids.lmem, ci_live]);
            let wg = self.c32(spv::Scope::Workgroup as u32);
            let relaxed = self.c32(0);
            // if (blk == DONE && !counted) { counted = true; atomicAdd(&wg_exited, 1u); }
            let b = self.load(u, blk);
            let d = self.op(bl, Op::IEqual, &[b, done_c]);
            let c = self.load(bl, counted);
            let nc = self.op(bl, Op::LogicalNot, &[c]);
            let cnt = self.op(bl, Op::LogicalAnd, &[d, nc]);
            let (cb, cm) = (self.m.id(), self.m.id());
            self.emit(Op::SelectionMerge, &[cm, 0]);
            self.emit(Op::BranchConditional, &[cnt, cb, cm]);
            self.label(cb);
            let t = self.m.cbool(true);
            self.store(counted, t);
            self.op(u, Op::AtomicIAdd, &[p_exit, wg, relaxed, one]);
            self.emit(Op::Branch, &[cm]);
            self.label(cm);
            // One barrier for every barrier instruction: the widest scope and every space any names.
            let mut spaces = SpaceSet::LOCAL;
            let mut scope = Scope::WorkGroup;
            for (sp, sc) in &barriers {
                spaces.local |= sp.local;
                spaces.global |= sp.global;
                if *sc > scope && sp.global {
                    scope = *sc;
                }
            }
            let msc = self.scope(scope);
            let sem = self.sem(MemOrder::AcqRel, spaces);
            self.emit(Op::ControlBarrier, &[wg, msc, sem]);
            // if (lidx == 0u) { wg_live = GROUP_THREADS - atomicLoad(&wg_exited); }
            let li = self.load(u, self.ids.lidx);
            let first = self.op(bl, Op::IEqual, &[li, z]);
            let (lb, lm) = (self.m.id(), self.m.id());
            self.emit(Op::SelectionMerge, &[lm, 0]);
            self.emit(Op::BranchConditional, &[first, lb, lm]);
            self.label(lb);
            let ex = self.op(u, Op::AtomicLoad, &[p_exit, wg, relaxed]);
            let lv = self.op(u, Op::ISub, &[gt, ex]);
            let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
            self.emit(Op::Store, &[p_live, lv, np]);
            self.emit(Op::Branch, &[lm]);
            self.label(lm);
            // workgroupUniformLoad(&wg_live): barrier, load, barrier.
            let wsem = self.sem(MemOrder::AcqRel, SpaceSet::LOCAL);
            self.emit(Op::ControlBarrier, &[wg, wg, wsem]);
            let live = self.op(u, Op::Load, &[p_live, np]);
            self.emit(Op::ControlBarrier, &[wg, wg, wsem]);
            let none = self.op(bl, Op::IEqual, &[live, z]);
            self.emit(Op::BranchConditional, &[none, outer_merge, outer_cont]);
            self.label(outer_cont);
            self.store(self.ids.at_barrier, fals);
            self.emit(Op::Branch, &[outer_header]);
            self.label(outer_merge);
        }
        let fc = self.load(u, self.ids.f[0]);
        let faulted = self.op(bl, Op::INotEqual, &[fc, z]);
        let (rb, rm) = (self.m.id(), self.m.id());
        self.emit(Op::SelectionMerge, &[rm, 0]);
        self.emit(Op::BranchConditional, &[faulted, rb, rm]);
        self.label(rb);
        self.op(void, Op::FunctionCall, &[record]);
        self.emit(Op::Branch, &[rm]);
        self.label(rm);
        self.emit(Op::Return, &[]);
        let f = self.f.take().unwrap();
        f.finish(&mut self.m);
        id
    }

    /// Zeroes local memory (and the barrier counters) as WGSL's workgroup variables are zeroed: each
    /// work-item clears the words `lidx, lidx + T, …`, then a work-group barrier (uniform: the start
    /// of the entry point).
    fn zero_local(&mut self, lidx: u32, threads: u32) {
        let (u, bl) = (self.ids.u32_, self.ids.bool_);
        let has_barrier = self
            .k
            .insts
            .iter()
            .any(|i| matches!(i, Inst::Barrier { .. }));
        let words = self.k.local_bytes.div_ceil(4) + if has_barrier { 2 } else { 0 };
        let i = {
            let f = self.f.as_mut().unwrap();
            f.var(&mut self.m, u)
        };
        self.store(i, lidx);
        let (header, body, cont, merge) = (self.m.id(), self.m.id(), self.m.id(), self.m.id());
        self.emit(Op::Branch, &[header]);
        self.label(header);
        let x = self.load(u, i);
        let n = self.c32(words);
        let more = self.op(bl, Op::ULessThan, &[x, n]);
        self.emit(Op::LoopMerge, &[merge, cont, 0]);
        self.emit(Op::BranchConditional, &[more, body, merge]);
        self.label(body);
        let lp = self.m.ptr(SC::Workgroup, u);
        let p = self.op(lp, Op::AccessChain, &[self.ids.lmem, x]);
        let zero = self.c32(0);
        let np = spv::MemoryAccess::NON_PRIVATE_POINTER.bits();
        self.emit(Op::Store, &[p, zero, np]);
        self.emit(Op::Branch, &[cont]);
        self.label(cont);
        let next = self.op(u, Op::IAdd, &[x, threads]);
        self.store(i, next);
        self.emit(Op::Branch, &[header]);
        self.label(merge);
        let wg = self.c32(spv::Scope::Workgroup as u32);
        let sem = self.sem(MemOrder::AcqRel, SpaceSet::LOCAL);
        self.emit(Op::ControlBarrier, &[wg, wg, sem]);
    }

    /// A fault whose pc is a run-time value (the step limit records the block).
    fn call_fault_dyn(&mut self, cond: u32, code: FaultCode, pc: u32, z: u32) {
        let code = self.c32(code as u32);
        let void = self.ids.void;
        let fun = self.ids.fault_fn;
        self.op(void, Op::FunctionCall, &[fun, cond, code, pc, z, z, z]);
    }
}

fn view(ty: Ty) -> V {
    match ty {
        Ty::U32 | Ty::I32 => V::U32,
        Ty::F32 => V::F32,
        Ty::U64 | Ty::I64 => V::U64,
    }
}

/// Runs `spirv-val` (SPIRV-Tools) on a module for the Vulkan 1.2 environment (SPIR-V 1.5); `Ok(None)`
/// when the tool is not installed.
pub fn spirv_val(words: &[u32]) -> Result<Option<()>, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = match Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot run spirv-val: {e}")),
    };
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(&bytes)
        .map_err(|e| format!("spirv-val: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("spirv-val: {e}"))?;
    if out.status.success() {
        Ok(Some(()))
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
