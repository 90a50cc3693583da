//! Lowering a litmus test into one launch of the machine that runs many independent instances of it,
//! as GPU litmus harnesses do.
//!
//! Layout of a launch with `B` blocks of `ws` (warp size) instances each, `N = B·ws` instances:
//! - the test's work-groups (distinct `cta`/`wg` numbers, `C` of them) become `B·C` work-groups;
//!   group `g` is cta `g mod C` of block `g / C`; each has `M` warps (`M` = the most threads any cta
//!   has), and thread `j` of a cta runs as warp `j` (spare warps exit at once);
//! - lane `l` of a warp runs the instance with lane index `(l·a_c + d_c) mod ws` of its block, so
//!   an instance's threads sit in different lanes of their warps when placement is randomised;
//! - each global location is a buffer; instance `k` uses elements from `((k·m_L + o_L) mod N)·p_L·n_L`
//!   on (`n_L` elements: 1 for a scalar), so neighbouring elements (one cache line, one store-buffer
//!   entry) belong to different instances, differently for each location, and an instance's locations
//!   fall on L2 slices in varying ways. The padding `p_L` (a power of two up to one element per cache
//!   line) sets how many instances share a line: shared lines make instances move together (one
//!   request serves them all), private lines give each instance its own timing;
//! - a work-group-local location lives in the local memory of its work-group, instance lane `i` at
//!   byte `base_L + i·n_L·size`; its owner thread (the first that uses it) stores a non-zero initial
//!   value before a work-group barrier that every thread of the work-group passes before its first
//!   instruction, and, when the condition reads its final value, copies it to the location's buffer
//!   (laid out as a global location's) after a work-group barrier that every thread of the
//!   work-group passes after its last instruction. Both barriers order only the initialisation and
//!   the final read against the whole test, as herd's initial and final states are;
//! - the groups of one block go to distinct SMs (`RunOptions::group_sm`) when there are at least
//!   `C` SMs, so threads of different work-groups run on different SMs.
//!
//! Registers are read back with `RunOptions::capture` when the warp retires (after its last load
//! has returned), so reading results adds no instruction and no ordering to the test.
//!
//! The kernel: a prologue sends each warp to its thread's code by (cta, warp); the thread's code
//! starts by computing the instance index and its locations' addresses, then sets initial registers
//! and runs the test's instructions. It is written with the launch lowerings' one IR builder
//! (`kernel_builder.rs`), which the physical-GPU harness uses too.

use super::kernel_builder::{
    buffer_params, location_buffers, thread_bases, width_mask, KernelBuilder,
};
use super::local::{address_reg, local_barrier, LocalLayout};
use super::test::LitmusTest;
use crate::config::GpuConfig;
use crate::ir::*;
use crate::rng::SplitMix64;
use crate::workload::{Geometry, Workload};

/// The shape of a test on a config: which work-group and warp each thread gets.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Distinct cta numbers, in order of first appearance.
    pub ctas: Vec<u32>,
    /// Thread `i` → index into `ctas`.
    pub thread_cta: Vec<usize>,
    /// Thread `i` → warp within its work-group.
    pub thread_warp: Vec<u32>,
    /// Warps per work-group.
    pub warps: u32,
    pub ws: u32,
    /// Blocks per launch that fit the GPU at once.
    pub max_blocks: u32,
}

impl Layout {
    pub fn new(test: &LitmusTest, cfg: &GpuConfig) -> Layout {
        let mut ctas: Vec<u32> = Vec::new();
        let mut thread_cta = Vec::new();
        let mut thread_warp = Vec::new();
        let mut per_cta: Vec<u32> = Vec::new();
        for t in &test.threads {
            let ci = match ctas.iter().position(|&c| c == t.cta) {
                Some(i) => i,
                None => {
                    ctas.push(t.cta);
                    per_cta.push(0);
                    ctas.len() - 1
                }
            };
            thread_cta.push(ci);
            thread_warp.push(per_cta[ci]);
            per_cta[ci] += 1;
        }
        let warps = per_cta.iter().copied().max().unwrap_or(1);
        let ws = cfg.sm.warp_size;
        let c = ctas.len() as u32;
        let s = cfg.sm.count.max(1);
        // Work-groups one SM holds at once.
        let per_sm = cfg
            .sm
            .max_groups
            .min(cfg.sm.max_warps / warps.max(1))
            .min(cfg.sm.max_threads / (warps * ws).max(1))
            .max(1);
        let max_blocks = (s * per_sm / c.max(1)).clamp(1, 16);
        Layout {
            ctas,
            thread_cta,
            thread_warp,
            warps,
            ws,
            max_blocks,
        }
    }

    pub fn num_ctas(&self) -> u32 {
        self.ctas.len() as u32
    }
}

/// The seeded choices of one launch.
#[derive(Debug, Clone)]
pub struct Plan {
    pub blocks: u32,
    /// Per cta: lane → instance lane is `(lane·a + d) mod ws`.
    pub lane_map: Vec<(u64, u64)>,
    /// Per cta: instance lane → lane (the inverse of `lane_map`).
    pub lane_of: Vec<Vec<u32>>,
    /// Per location: instance `k` → element `((k·m + o) mod N)·p` as `(m, o, p)`.
    pub slot_map: Vec<(u64, u64, u64)>,
    /// Per location: buffer length in elements.
    pub buffer_len: Vec<u64>,
    /// Per location: elements of one instance's copy.
    pub len: Vec<u64>,
    /// SM of each work-group.
    pub group_sm: Vec<u32>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Plan {
    /// The fixed plan (`rng = None`) or a randomised one.
    pub fn new(
        test: &LitmusTest,
        lay: &Layout,
        cfg: &GpuConfig,
        blocks: u32,
        mut rng: Option<&mut SplitMix64>,
    ) -> Plan {
        let ws = lay.ws as u64;
        let n = blocks as u64 * ws;
        let c = lay.num_ctas();
        let s = cfg.sm.count.max(1);
        let mut lane_map = Vec::new();
        for _ in 0..c {
            let (a, d) = match rng.as_deref_mut() {
                Some(r) => {
                    let cands: Vec<u64> = (1..ws.max(2)).filter(|&a| gcd(a, ws) == 1).collect();
                    let a = cands[r.below(cands.len() as u64) as usize];
                    (a, r.below(ws))
                }
                None => (1, 0),
            };
            lane_map.push((a, d));
        }
        let lane_of = lane_map
            .iter()
            .map(|&(a, d)| {
                let mut inv = vec![0u32; ws as usize];
                for l in 0..ws {
                    inv[((l * a + d) % ws) as usize] = l as u32;
                }
                inv
            })
            .collect();
        let line = cfg.l1.line_bytes as u64;
        // Padding up to one instance's copy per line (a power of two): a copy as large as a line or
        // larger is not padded, so a buffer holds at most N·max(copy, line) bytes.
        let max_pad = |l: usize| {
            let fit = (line / test.locations[l].bytes()).max(1);
            1u64 << (63 - fit.leading_zeros())
        };
        // Half the randomised launches pack every location densely (a warp's access is one line, so
        // a fence or release waits for one acknowledgement: short windows between a thread's
        // accesses); the others pad each location by its own random power of two (up to one instance
        // per line: every instance gets its own timing).
        let dense = match rng.as_deref_mut() {
            Some(r) => r.below(2) == 0,
            None => true,
        };
        let slot_map: Vec<(u64, u64, u64)> = (0..test.locations.len())
            .map(|l| match rng.as_deref_mut() {
                Some(r) => {
                    let cands: Vec<u64> = (1..=7u64).filter(|&m| gcd(m, n) == 1).collect();
                    let m = cands[r.below(cands.len() as u64) as usize];
                    let pads = max_pad(l).trailing_zeros() as u64 + 1;
                    let p = if dense { 1 } else { 1 << r.below(pads) };
                    (m, r.below(n), p)
                }
                None => (1, 0, 1),
            })
            .collect();
        let buffer_len = (0..test.locations.len())
            .map(|l| {
                let len = test.locations[l].len as u64;
                if rng.is_some() {
                    n * max_pad(l) * len
                } else {
                    n * len
                }
            })
            .collect();
        // Block b's ctas go to SMs (σ(b)·C + c) mod S through a permutation of the SMs: a block's
        // ctas land on distinct SMs (when C ≤ S) and every SM gets the same number of work-groups
        // (±1), so no group waits for a busy SM while its partners run. Randomised: both the SM
        // permutation and the block order σ are drawn; fixed: identities.
        let shuffle = |v: &mut Vec<u32>, r: &mut SplitMix64| {
            for i in (1..v.len()).rev() {
                let j = r.below(i as u64 + 1) as usize;
                v.swap(i, j);
            }
        };
        let mut perm: Vec<u32> = (0..s).collect();
        let mut order: Vec<u32> = (0..blocks).collect();
        if let Some(r) = rng {
            shuffle(&mut perm, r);
            shuffle(&mut order, r);
        }
        let mut group_sm = Vec::with_capacity((blocks * c) as usize);
        for b in 0..blocks as usize {
            for ci in 0..c {
                group_sm.push(perm[((order[b] * c + ci) % s) as usize]);
            }
        }
        Plan {
            blocks,
            lane_map,
            lane_of,
            slot_map,
            buffer_len,
            len: test.locations.iter().map(|l| l.len as u64).collect(),
            group_sm,
        }
    }

    pub fn instances(&self, lay: &Layout) -> u64 {
        self.blocks as u64 * lay.ws as u64
    }

    /// Element of location `l` (its element 0) that instance `k` uses.
    pub fn slot(&self, lay: &Layout, l: usize, k: u64) -> u64 {
        let (m, o, p) = self.slot_map[l];
        (k * m + o) % self.instances(lay) * p * self.len[l]
    }

    /// Element `index` of array location `l` that instance `k` uses.
    pub fn elem(&self, lay: &Layout, l: usize, k: u64, index: u32) -> u64 {
        self.slot(lay, l, k) + index as u64
    }

    /// Global linear thread id running thread `i` of instance `k`.
    pub fn thread_id(&self, lay: &Layout, i: usize, k: u64) -> u64 {
        let ws = lay.ws as u64;
        let ci = lay.thread_cta[i];
        let (b, il) = (k / ws, k % ws);
        let group = b * lay.num_ctas() as u64 + ci as u64;
        let lane = self.lane_of[ci][il as usize] as u64;
        group * (lay.warps as u64 * ws) + lay.thread_warp[i] as u64 * ws + lane
    }
}

/// Named temporaries of the prologue, after the location parameters.
const TEMPS: [&str; 7] = [
    "$group",
    "$warp",
    "$key",
    "$tmp",
    "$block",
    "$lane",
    "$instance",
];

/// First kernel register of each thread's registers.
pub fn reg_bases(test: &LitmusTest) -> Vec<Reg> {
    thread_bases(test, (test.locations.len() + TEMPS.len()) as Reg)
}

/// The workload of one launch.
pub fn workload(test: &LitmusTest, lay: &Layout, plan: &Plan) -> Workload {
    let r = Operand::Reg;
    let imm = Operand::Imm;
    let n = plan.instances(lay);
    let ws = lay.ws as u64;
    let c = lay.num_ctas() as u64;
    let local = LocalLayout::new(test, lay);
    let mut code = KernelBuilder::new(test);
    let [g, w, key, tmp, b, lane, k] = TEMPS.map(|name| code.reg(name));
    let bases = code.thread_regs();
    let head = test.threads.first().map(|t| t.loc).unwrap_or_default();
    // Each warp to its thread's code by (cta, warp).
    code.push(
        head,
        Inst::ReadSpecial {
            dst: g,
            which: Special::GroupLinearId,
        },
    );
    code.push(
        head,
        Inst::ReadSpecial {
            dst: w,
            which: Special::SubGroupId,
        },
    );
    code.alu(head, AluOp::Rem, Ty::U64, key, r(g), imm(c));
    code.alu(
        head,
        AluOp::Mul,
        Ty::U64,
        key,
        r(key),
        imm(lay.warps as u64),
    );
    code.alu(head, AluOp::Add, Ty::U64, key, r(key), r(w));
    let entries = code.thread_entries(Ty::U64, tmp, key, |i| {
        lay.thread_cta[i] as u64 * lay.warps as u64 + lay.thread_warp[i] as u64
    });
    code.push(head, Inst::Exit);
    for (i, t) in test.threads.iter().enumerate() {
        let entry = code.here();
        code.set_target(entries[i], entry);
        let at = t.loc;
        let (a, d) = plan.lane_map[lay.thread_cta[i]];
        // Instance index k = block·ws + ((lane·a + d) mod ws).
        code.alu(at, AluOp::Div, Ty::U64, b, r(g), imm(c));
        code.push(
            at,
            Inst::ReadSpecial {
                dst: lane,
                which: Special::Lane,
            },
        );
        code.alu(at, AluOp::Mul, Ty::U64, lane, r(lane), imm(a));
        code.alu(at, AluOp::Add, Ty::U64, lane, r(lane), imm(d));
        code.alu(at, AluOp::Rem, Ty::U64, lane, r(lane), imm(ws));
        code.alu(at, AluOp::Mul, Ty::U64, k, r(b), imm(ws));
        code.alu(at, AluOp::Add, Ty::U64, k, r(k), r(lane));
        let base = bases[i];
        code.addresses(i, |code, at, l, dst| match local.offset[l] {
            // Local: instance lane · bytes of a copy + the location's base.
            Some(off) => {
                code.scale(at, dst, lane, test.locations[l].bytes());
                code.alu(at, AluOp::Add, Ty::U64, dst, r(dst), imm(off));
            }
            None => global_address(code, at, test, plan, l, dst, k, n),
        });
        code.reg_inits(i);
        let cta = lay.thread_cta[i];
        // Non-zero initial values of the work-group's local locations, then the barrier that
        // publishes them.
        for &l in &local.owned[i] {
            let loc = &test.locations[l];
            let ar = base + address_reg(test, i, l);
            for (e, &v) in loc.elems.iter().enumerate() {
                if v != 0 {
                    code.push(
                        at,
                        Inst::Store {
                            space: Space::Local,
                            addr: Address {
                                base: r(ar),
                                offset: (e as u64 * loc.ty.width().bytes() as u64) as i64,
                            },
                            src: imm(v as u64 & width_mask(loc.ty)),
                            ty: loc.ty,
                            ord: StoreOrd::Plain,
                            scope: Scope::WorkGroup,
                        },
                    );
                }
            }
        }
        if local.init_barrier[cta] {
            code.push(at, local_barrier());
        }
        // The body, with registers and branch targets moved to this thread's place.
        code.body(i, false, |inst| machine_barrier(inst, lay.ws));
        let last = t.locs.last().copied().unwrap_or(t.loc);
        if local.final_barrier[cta] {
            code.push(last, local_barrier());
        }
        // Final values of observed local locations (their home copies), copied to their buffers.
        for &l in &local.home[i] {
            let loc = &test.locations[l];
            let ar = base + address_reg(test, i, l);
            let size = loc.ty.width().bytes() as u64;
            for e in local.observed_elems(test, l) {
                code.push(
                    last,
                    Inst::Load {
                        dst: tmp,
                        space: Space::Local,
                        addr: Address {
                            base: r(ar),
                            offset: (e as u64 * size) as i64,
                        },
                        ty: loc.ty,
                        ord: LoadOrd::Plain,
                        scope: Scope::WorkGroup,
                    },
                );
                global_address(&mut code, last, test, plan, l, key, k, n);
                code.push(
                    last,
                    Inst::Store {
                        space: Space::Global,
                        addr: Address {
                            base: r(key),
                            offset: (e as u64 * size) as i64,
                        },
                        src: r(tmp),
                        ty: loc.ty,
                        ord: StoreOrd::Plain,
                        scope: Scope::Device,
                    },
                );
            }
        }
        code.push(last, Inst::Exit);
    }
    let kernel = code.finish(local.bytes);
    let buffers = location_buffers(test, plan.buffer_len.iter().copied());
    let params = buffer_params(&buffers);
    Workload {
        kernel,
        geometry: Geometry {
            groups: [plan.blocks * lay.num_ctas(), 1, 1],
            group_size: [lay.warps * lay.ws, 1, 1],
        },
        buffers,
        params,
        checks: Vec::new(),
        reports: Vec::new(),
        parameters: Vec::new(),
    }
}

/// `dst` = address of instance `k`'s copy of global location `l`:
/// `((k·m + o) mod N)·(p·n_L·size) + buffer`.
#[allow(clippy::too_many_arguments)]
fn global_address(
    code: &mut KernelBuilder,
    at: SrcLoc,
    test: &LitmusTest,
    plan: &Plan,
    l: usize,
    dst: Reg,
    k: Reg,
    n: u64,
) {
    let (m, o, p) = plan.slot_map[l];
    let r = Operand::Reg;
    let imm = Operand::Imm;
    code.alu(at, AluOp::Mul, Ty::U64, dst, r(k), imm(m));
    code.alu(at, AluOp::Add, Ty::U64, dst, r(dst), imm(o));
    code.alu(at, AluOp::Rem, Ty::U64, dst, r(dst), imm(n));
    code.scale(at, dst, dst, p * test.locations[l].bytes());
    let buffer = code.location(l);
    code.alu(at, AluOp::Add, Ty::U64, dst, r(dst), r(buffer));
}

/// A barrier's thread count in the machine's threads: a litmus count counts litmus threads (herd's
/// GPU_PTX reading of `bar.cta.sync 1, 2`), and each litmus thread runs as a warp of its own (one
/// instance per lane), so `b` litmus threads are `b` warps of the machine's warp size `ws`.
pub fn machine_barrier(inst: Inst, ws: u32) -> Inst {
    match inst {
        Inst::Barrier {
            kind: BarrierKind::Named(mut b),
            spaces,
            scope,
        } => {
            b.threads = b.threads.map(|n| n * ws);
            Inst::Barrier {
                kind: BarrierKind::Named(b),
                spaces,
                scope,
            }
        }
        other => other,
    }
}
