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

mod entry;
mod inst;
mod memory;
pub mod words;

use super::walk::{err, uses_64, Shader, Walk};
use super::wgsl::{
    rmw_name, Binding, Caps, FaultCode, Options, TranslateError, Translation, FAULT_WORDS,
};
use crate::ir::eval;
use crate::ir::*;
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

/// Translates a workload to a SPIR-V module; the result's `spirv` holds it and `wgsl` is empty.
pub fn translate(
    wl: &Workload,
    caps: SpirvCaps,
    opts: Options,
) -> Result<Translation, TranslateError> {
    let k = &wl.kernel;
    let launch = format!("{}:1:1", k.file);
    let geo = wl.geometry;
    let walk = Walk::new(wl, "SPIR-V")?;
    if let Some(pc) = walk.first_wide_def() {
        if !caps.base.int64 {
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
    let needs64 = walk.needs_64();
    let u64_ = if needs64 && caps.base.int64 {
        m.capability(spv::Capability::Int64);
        m.u64_()
    } else {
        0
    };
    let mut g = Gen {
        k,
        caps,
        wide: walk.wide.clone(),
        block_of: walk.block_of.clone(),
        placed: walk.placed(),
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
    g.globals(&walk.params);
    g.fault_function();
    let mut block_fns = Vec::new();
    for (b, start, end) in walk.blocks() {
        block_fns.push(g.block(b, start, end)?);
    }
    let record = g.record_function();
    let main = g.main(&block_fns, record, opts);
    if g.uses_device_scope {
        g.m.capability(spv::Capability::VulkanMemoryModelDeviceScope);
    }
    let words = std::mem::take(&mut g.m).finish(main, geo.group_size);
    Ok(Translation {
        shader: Shader::Spirv(words),
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
