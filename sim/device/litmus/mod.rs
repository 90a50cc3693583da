//! Litmus tests on the physical GPU: many instances of one test per dispatch, with randomised thread
//! placement and memory stress, as the published GPU litmus harnesses run them (Alglave et al.,
//! "GPU concurrency: weak behaviours and programming assumptions", ASPLOS 2015; Levine et al.,
//! "MC Mutants", ASPLOS 2023).
//!
//! Reuses the litmus front end (`gpumemsim_litmus`): its parser, its per-thread IR and condition, and
//! the launch lowerings' one IR builder (`KernelBuilder`: registers by name, thread entries, each
//! thread's addresses, initial registers and relocated body, location buffers, final states). The launch layout is this module's own,
//! made for a real GPU rather than for the simulator's placement controls:
//! - **Testing work-groups** hold instances' threads: each (instance, cta) unit occupies as many slots of
//!   one work-group as the cta has threads; units of one instance with different ctas go to different
//!   work-groups; units go to random work-groups and random slots (a role table, drawn per dispatch
//!   from a seeded stream, tells each work-item which instance and test thread it runs, so nothing is
//!   tied to an id the hardware schedules in order).
//! - **Stress work-groups** (optional) run loads and stores to pseudo-random lines of a scratch buffer
//!   while the tests run; they are separate work-groups, so that the barrier variant's barriers never
//!   wait for them.
//! - **Locations**: each instance has its own copy of every location, one 128-byte line apart, at a
//!   position drawn from a per-location random permutation, so an instance's locations land on
//!   unrelated lines and slices.
//! - **Results**: each test thread stores its observed registers to an output buffer when it ends; the
//!   final values of locations are read from memory. A state is counted per instance; the counts sum to
//!   the instances run (checked).
//! - **Pre-stress** (optional, `pre_stress_iterations`): testing work-items walk the stress lines before
//!   their test code, as MC Mutants' pre-stress does.
//!
//! Variants (applied identically here and in the simulator by `compare`): `relaxed` runs the test as
//! written; `storage_barrier` puts a work-group barrier over global memory between consecutive memory
//! operations of every thread; `release_acquire` makes every atomic store a device-scope release, every
//! atomic load an acquire and every RMW acq_rel; `fence_acq_rel` puts a device-scope acq_rel fence between
//! consecutive memory operations; `seq_cst` makes every atomic seq_cst at device scope. Through WGSL only
//! relaxed atomics, plain accesses and work-group barriers translate (the others are rejected with their
//! location); through SPIR-V (`super::spirv`) every variant runs, seq_cst as acq_rel (listed in
//! [`Counts::weakened`]: the Vulkan memory model has no sequentially consistent order).

mod variants;

use super::adapter::Device;
use super::schema::{LitmusResult, OutcomeCount, ShaderPath, Status};
use super::{wgsl, DeviceError};
use crate::ir::*;
use crate::rng::SplitMix64;
use crate::workload::{Buffer, Geometry, Init, Workload};
use gpumemsim_litmus::{
    buffer_params, final_state, location_buffers, observed_regs, KernelBuilder, LitmusTest,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use variants::*;

/// Settings of the GPU litmus harness.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LitmusSettings {
    /// Instances per dispatch.
    pub instances: u32,
    pub dispatches: u32,
    /// Work-items per work-group (testing and stress alike).
    pub workgroup_size: u32,
    /// Stress work-groups per testing work-group (0: no stress).
    pub stress_ratio: u32,
    /// Loads and stores each stress work-item performs.
    pub stress_iterations: u32,
    /// Loads and stores each testing work-item performs on the stress lines before its test code
    /// (pre-stress, MC Mutants §4): 0 for none.
    #[serde(default)]
    pub pre_stress_iterations: u32,
    pub seed: u64,
}

impl Default for LitmusSettings {
    fn default() -> Self {
        LitmusSettings {
            instances: 4096,
            dispatches: 16,
            workgroup_size: 256,
            stress_ratio: 1,
            stress_iterations: 256,
            pre_stress_iterations: 0,
            seed: 1,
        }
    }
}

/// Bytes between an instance's copy of a location and the next instance's: one 128-byte line.
const SLOT_BYTES: u64 = 128;
/// u32 words of the stress scratch buffer (1 MiB).
const SCRATCH_WORDS: u64 = 1 << 18;
const ROLE_STRESS: u32 = u32::MAX;
const ROLE_IDLE: u32 = u32::MAX - 1;

/// One dispatch's layout: the workload and where each instance's results are.
pub struct Launch {
    pub workload: Workload,
    /// Per location: instance → element index in its buffer.
    pub slot: Vec<Vec<u64>>,
    /// Observed registers: (index into the condition's observed list, thread, register).
    pub observed_regs: Vec<(usize, usize, Reg)>,
    pub instances: u64,
}

fn shuffle<T>(v: &mut [T], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// Builds one dispatch of `test` with the placement drawn from `rng`.
pub fn launch(
    test: &LitmusTest,
    s: &LitmusSettings,
    rng: &mut SplitMix64,
) -> Result<Launch, String> {
    // What the machine cannot run, and what this layout does not place, is refused up front.
    gpumemsim_litmus::check_runnable(test).map_err(|e| e.to_string())?;
    if let Some(l) = test
        .locations
        .iter()
        .find(|l| l.array || l.space == Space::Local)
    {
        return Err(format!(
            "{}: array and work-group-local locations are not supported by the physical-GPU harness",
            l.name
        ));
    }
    let nt = test.threads.len();
    let nloc = test.locations.len();
    let n = s.instances.max(1) as u64;
    let w = s.workgroup_size.max(1) as u64;
    // Ctas in order of first appearance, and each thread's cta index.
    let mut ctas: Vec<u32> = Vec::new();
    let thread_cta: Vec<usize> = test
        .threads
        .iter()
        .map(|t| match ctas.iter().position(|&c| c == t.cta) {
            Some(i) => i,
            None => {
                ctas.push(t.cta);
                ctas.len() - 1
            }
        })
        .collect();
    let per_cta: Vec<u64> = (0..ctas.len())
        .map(|c| thread_cta.iter().filter(|&&x| x == c).count() as u64)
        .collect();
    if let Some(&big) = per_cta.iter().max().filter(|&&m| m > w) {
        return Err(format!(
            "a work-group of the test has {big} threads; workgroup_size is {w}"
        ));
    }
    // Testing work-groups: enough for every unit at about half occupancy (free slots stay idle, so that
    // units land in varied places), and never fewer than the ctas of one instance.
    let slots_needed = n * nt as u64;
    let testing = (2 * slots_needed).div_ceil(w).max(ctas.len() as u64);
    let stress = testing * s.stress_ratio as u64;
    let groups = testing + stress;
    if groups > 65535 {
        return Err(format!(
            "{groups} work-groups exceed the 65535 of one dimension: fewer instances per dispatch"
        ));
    }
    // Which work-groups test and which stress: a random interleaving.
    let mut kinds: Vec<bool> = (0..groups).map(|g| g < testing).collect();
    shuffle(&mut kinds, rng);
    let testing_ids: Vec<u64> = (0..groups).filter(|&g| kinds[g as usize]).collect();
    let mut role = vec![ROLE_IDLE; (groups * w) as usize];
    for (g, &is_test) in kinds.iter().enumerate() {
        if !is_test && s.stress_ratio > 0 {
            role[g * w as usize..(g + 1) * w as usize].fill(ROLE_STRESS);
        }
    }
    // Free slots of each testing work-group, in random order.
    let mut free: Vec<Vec<u64>> = testing_ids
        .iter()
        .map(|_| {
            let mut v: Vec<u64> = (0..w).collect();
            shuffle(&mut v, rng);
            v
        })
        .collect();
    // Units (instance, cta) in random order, each to a random testing work-group with room that holds no
    // other cta of the same instance.
    let mut units: Vec<(u64, usize)> = (0..n)
        .flat_map(|k| (0..ctas.len()).map(move |c| (k, c)))
        .collect();
    shuffle(&mut units, rng);
    let mut hosts: Vec<Vec<u64>> = vec![Vec::new(); testing_ids.len()];
    for (k, c) in units {
        let need = per_cta[c];
        let start = rng.below(testing_ids.len() as u64) as usize;
        let pick = (0..testing_ids.len())
            .map(|i| (start + i) % testing_ids.len())
            .find(|&i| free[i].len() as u64 >= need && !hosts[i].contains(&k))
            .ok_or("the testing work-groups are full (internal sizing error)")?;
        hosts[pick].push(k);
        let g = testing_ids[pick];
        for (t, _) in thread_cta.iter().enumerate().filter(|(_, &x)| x == c) {
            let slot = free[pick].pop().expect("room was checked");
            role[(g * w + slot) as usize] = (k * nt as u64 + t as u64) as u32;
        }
    }
    // Location copies: instance k of location l at element slot[l][k] · (line / element size).
    let slot: Vec<Vec<u64>> = (0..nloc)
        .map(|_| {
            let mut v: Vec<u64> = (0..n).collect();
            shuffle(&mut v, rng);
            v
        })
        .collect();
    let observed_regs = observed_regs(test);
    let workload = kernel(test, s, n, groups, &role, &slot, &observed_regs);
    Ok(Launch {
        workload,
        slot,
        observed_regs,
        instances: n,
    })
}

/// Elements of location `l`'s type per slot.
fn pad(test: &LitmusTest, l: usize) -> u64 {
    SLOT_BYTES / test.locations[l].ty.width().bytes() as u64
}

/// The launch kernel: each work-item to its role, each thread's code with its instance's addresses,
/// the epilogue that stores observed registers, and the stress loop.
fn kernel(
    test: &LitmusTest,
    s: &LitmusSettings,
    n: u64,
    groups: u64,
    role: &[u32],
    slot: &[Vec<u64>],
    observed_regs: &[(usize, usize, Reg)],
) -> Workload {
    let nt = test.threads.len() as u64;
    let nobs = observed_regs.len().max(1) as u64;
    // Registers: location bases, then harness bases (the buffers' order), then temporaries, then
    // every thread's own.
    let mut code = KernelBuilder::new(test);
    let [r_role, r_slot, r_out, r_scratch] =
        ["$role", "$slot", "$out", "$scratch"].map(|x| code.reg(x));
    let [gid, rl, t, k, c, a, v, i] =
        ["$gid", "$r", "$t", "$k", "$c", "$a", "$v", "$i"].map(|x| code.reg(x));
    let bases = code.thread_regs();
    let stress_regs = StressRegs {
        gid,
        t,
        c,
        a,
        v,
        i,
        scratch: r_scratch,
    };
    let (r, imm) = (Operand::Reg, Operand::Imm);
    let head = test.threads.first().map(|th| th.loc).unwrap_or_default();
    // Prologue: my role.
    code.push(
        head,
        Inst::ReadSpecial {
            dst: gid,
            which: Special::GlobalLinearId,
        },
    );
    word(&mut code, head, a, r_role, gid, 2);
    code.push(head, load_u32(rl, a));
    code.eq(head, Ty::U32, c, rl, ROLE_STRESS as u64);
    let stress_branch = code.branch_if(head, c);
    code.eq(head, Ty::U32, c, rl, ROLE_IDLE as u64);
    let idle_branch = code.branch_if(head, c);
    if s.pre_stress_iterations > 0 {
        stress_walk(&mut code, head, s.pre_stress_iterations, stress_regs);
    }
    code.alu(head, AluOp::Rem, Ty::U32, t, r(rl), imm(nt));
    code.alu(head, AluOp::Div, Ty::U32, k, r(rl), imm(nt));
    let entries = code.thread_entries(Ty::U32, c, t, |ti| ti as u64);
    let exit_at = code.here();
    code.push(head, Inst::Exit);
    for (ti, th) in test.threads.iter().enumerate() {
        let entry = code.here();
        code.set_target(entries[ti], entry);
        let b = bases[ti];
        // Addresses of this instance's copies: base + slot[l][k] · 128.
        code.addresses(ti, |code, l0, l, dst| {
            code.alu(l0, AluOp::Add, Ty::U32, v, r(k), imm(l as u64 * n));
            word(code, l0, a, r_slot, v, 2);
            code.push(l0, load_u32(v, a));
            code.alu(l0, AluOp::Mul, Ty::U64, dst, r(v), imm(SLOT_BYTES));
            let buffer = code.location(l);
            code.alu(l0, AluOp::Add, Ty::U64, dst, r(dst), r(buffer));
        });
        // Arrays are refused in `launch`: no element addresses.
        code.reg_inits(ti);
        // The body; its exits and its end go to the epilogue.
        code.body(ti, true, |inst| inst);
        let end = th.locs.last().copied().unwrap_or(th.loc);
        for (j, &(_, thread, reg)) in observed_regs.iter().enumerate() {
            if thread != ti {
                continue;
            }
            code.alu(end, AluOp::Mul, Ty::U32, v, r(k), imm(nobs));
            code.alu(end, AluOp::Add, Ty::U32, v, r(v), imm(j as u64));
            word(&mut code, end, a, r_out, v, 3);
            code.push(
                end,
                Inst::Store {
                    space: Space::Global,
                    addr: at(a),
                    src: r(b + reg),
                    ty: Ty::U64,
                    ord: StoreOrd::Plain,
                    scope: Scope::Device,
                },
            );
        }
        code.push(end, Inst::Exit);
    }
    // Stress: a linear congruential walk over the scratch lines, load then store at each.
    let stress_at = code.here();
    stress_walk(&mut code, head, s.stress_iterations, stress_regs);
    code.push(head, Inst::Exit);
    code.set_target(stress_branch, stress_at);
    code.set_target(idle_branch, exit_at);
    let mut buffers = location_buffers(test, (0..test.locations.len()).map(|l| n * pad(test, l)));
    let internal = |name: &str, elem, len, init| Buffer {
        name: name.into(),
        elem,
        len,
        init,
        loc: head,
    };
    buffers.push(internal(
        "$role",
        Ty::U32,
        role.len() as u64,
        Init::Values(role.iter().map(|&x| x as u64).collect()),
    ));
    buffers.push(internal(
        "$slot",
        Ty::U32,
        (slot.len() as u64 * n).max(1),
        Init::Values(slot.iter().flatten().copied().collect()),
    ));
    buffers.push(internal("$out", Ty::U64, n * nobs, Init::Zero));
    buffers.push(internal("$scratch", Ty::U32, SCRATCH_WORDS, Init::Zero));
    let params = buffer_params(&buffers);
    Workload {
        kernel: code.finish(0),
        geometry: Geometry {
            groups: [groups as u32, 1, 1],
            group_size: [s.workgroup_size, 1, 1],
        },
        buffers,
        params,
        checks: vec![],
        reports: vec![],
        parameters: vec![],
    }
}

/// The address of register `reg`'s value, no offset.
fn at(reg: Reg) -> Address {
    Address {
        base: Operand::Reg(reg),
        offset: 0,
    }
}

/// A plain global u32 load of `[addr]` into `dst`.
fn load_u32(dst: Reg, addr: Reg) -> Inst {
    Inst::Load {
        dst,
        space: Space::Global,
        addr: at(addr),
        ty: Ty::U32,
        ord: LoadOrd::Plain,
        scope: Scope::Device,
    }
}

/// `dst` = the address of element `index` (`1 << shift` bytes each) of the buffer at `base`.
fn word(code: &mut KernelBuilder, at: SrcLoc, dst: Reg, base: Reg, index: Reg, shift: u64) {
    code.alu(
        at,
        AluOp::Shl,
        Ty::U64,
        dst,
        Operand::Reg(index),
        Operand::Imm(shift),
    );
    code.alu(
        at,
        AluOp::Add,
        Ty::U64,
        dst,
        Operand::Reg(dst),
        Operand::Reg(base),
    );
}

/// The registers the stress walk uses (temporaries of [`kernel`], and the scratch buffer's address).
#[derive(Clone, Copy)]
struct StressRegs {
    gid: Reg,
    t: Reg,
    c: Reg,
    a: Reg,
    v: Reg,
    i: Reg,
    scratch: Reg,
}

/// The stress walk: `iterations` loads and stores to pseudo-random scratch lines (a linear
/// congruential walk, load then store at each), seeded by the work-item's global id.
fn stress_walk(code: &mut KernelBuilder, head: SrcLoc, iterations: u32, regs: StressRegs) {
    let StressRegs {
        gid,
        t,
        c,
        a,
        v,
        i,
        scratch,
    } = regs;
    let (r, imm) = (Operand::Reg, Operand::Imm);
    code.alu(head, AluOp::Mul, Ty::U32, v, r(gid), imm(2_654_435_761));
    code.push(
        head,
        Inst::Mov {
            dst: i,
            src: imm(0),
        },
    );
    let top = code.here();
    code.alu(head, AluOp::Mul, Ty::U32, v, r(v), imm(1_664_525));
    code.alu(head, AluOp::Add, Ty::U32, v, r(v), imm(1_013_904_223));
    code.alu(head, AluOp::Shr, Ty::U32, t, r(v), imm(8));
    code.alu(head, AluOp::Rem, Ty::U32, t, r(t), imm(SCRATCH_WORDS));
    // Whole lines: the word index rounded to 32 words.
    code.alu(head, AluOp::And, Ty::U32, t, r(t), imm(!31u32 as u64));
    word(code, head, a, scratch, t, 2);
    code.push(head, load_u32(c, a));
    code.alu(head, AluOp::Add, Ty::U32, c, r(c), imm(1));
    code.push(
        head,
        Inst::Store {
            space: Space::Global,
            addr: at(a),
            src: r(c),
            ty: Ty::U32,
            ord: StoreOrd::Plain,
            scope: Scope::Device,
        },
    );
    code.alu(head, AluOp::Add, Ty::U32, i, r(i), imm(1));
    code.push(
        head,
        Inst::Cmp {
            op: CmpOp::Lt,
            ty: Ty::U32,
            dst: c,
            a: r(i),
            b: imm(iterations as u64),
        },
    );
    code.push(
        head,
        Inst::Branch {
            target: top,
            cond: Some((c, true)),
        },
    );
}

/// Final states counted over every instance of every dispatch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub instances: u64,
    pub states: BTreeMap<Vec<i64>, u64>,
    /// Orders and scopes the translation weakened (SPIR-V: seq_cst as acq_rel, system as device).
    pub weakened: Vec<String>,
}

/// Runs `test` (already in its variant's form) on the adapter through WGSL.
pub fn run(gpu: &Device, test: &LitmusTest, s: &LitmusSettings) -> Result<Counts, DeviceError> {
    run_with(gpu, test, s, ShaderPath::Wgsl)
}

/// Runs `test` (already in its variant's form) on the adapter through `path`.
pub fn run_with(
    gpu: &Device,
    test: &LitmusTest,
    s: &LitmusSettings,
    path: ShaderPath,
) -> Result<Counts, DeviceError> {
    let mut counts = Counts::default();
    let mut rng = SplitMix64::stream(s.seed, 0x6c69_746d);
    let fail = |message: String| DeviceError::Launch {
        workload: format!("{} ({})", test.name, test.file),
        message,
    };
    let mut compiled: Option<super::harness::Compiled> = None;
    for _ in 0..s.dispatches.max(1) {
        let l = launch(test, s, &mut rng).map_err(fail)?;
        // Every dispatch has the same kernel and sizes: compile once, then only new contents.
        let p = match compiled.as_mut() {
            Some(p) => {
                p.reload(&l.workload)?;
                p
            }
            None => {
                let p = gpu.compile_with(&l.workload, wgsl::Options::default(), path)?;
                counts.weakened = p.translation.emulated.clone();
                compiled.insert(p)
            }
        };
        let out = p.run_once()?;
        let nloc = test.locations.len();
        let outbuf = &out.buffers[nloc + 2];
        let nobs = l.observed_regs.len().max(1);
        for k in 0..l.instances as usize {
            let state = final_state(
                test,
                |j, _, _| outbuf[k * nobs + j],
                // Arrays are refused in `launch`: only element 0.
                |loc, _| out.buffers[loc][(l.slot[loc][k] * pad(test, loc)) as usize],
            );
            *counts.states.entry(state).or_default() += 1;
        }
        counts.instances += l.instances;
    }
    Ok(counts)
}

/// The measurement-file record of a run (or of why it did not run).
pub fn result(
    test: &LitmusTest,
    variant: Variant,
    outcome: Result<Counts, DeviceError>,
) -> LitmusResult {
    let mut r = LitmusResult {
        test: test.name.clone(),
        file: test.file.clone(),
        variant,
        status: Status::Ok,
        error: None,
        instances: 0,
        outcomes: vec![],
        shader: None,
        weakened: vec![],
    };
    match outcome {
        Ok(c) => {
            r.instances = c.instances;
            r.weakened = c.weakened.clone();
            r.outcomes = c
                .states
                .iter()
                .map(|(state, &count)| OutcomeCount {
                    outcome: state_string(test, state),
                    count,
                    weak: test.condition.witness(state),
                })
                .collect();
        }
        Err(e) => {
            r.status = match e {
                DeviceError::Translate(_) => Status::Untranslatable,
                _ => Status::Failed,
            };
            r.error = Some(e.to_string());
        }
    }
    r
}

/// `P1:r0=1; P1:r1=0; x=2;` as the litmus front end renders states.
pub fn state_string(test: &LitmusTest, state: &[i64]) -> String {
    (0..state.len())
        .map(|i| {
            format!(
                "{}={};",
                test.condition.var_name(i, &test.threads, &test.locations),
                state[i]
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod lowering_digest;
