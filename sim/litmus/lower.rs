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
//! The kernel: a prologue dispatches each warp to its thread's code by (cta, warp); the thread's code
//! starts by computing the instance index and its locations' addresses, then sets initial registers
//! and runs the test's instructions.

use super::local::{address_reg, local_barrier, LocalLayout};
use super::test::{LitmusTest, RegInit};
use crate::config::GpuConfig;
use crate::ir::*;
use crate::rng::SplitMix64;
use crate::workload::{Buffer, Geometry, Init, Param, ParamValue, Workload};

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

/// Registers of the prologue, after the location parameters.
const T_G: usize = 0;
const T_W: usize = 1;
const T_KEY: usize = 2;
const T_TMP: usize = 3;
const T_B: usize = 4;
const T_L: usize = 5;
const T_K: usize = 6;
const N_TEMPS: usize = 7;

/// First kernel register of each thread's registers.
pub fn reg_bases(test: &LitmusTest) -> Vec<Reg> {
    let mut base = test.locations.len() + N_TEMPS;
    test.threads
        .iter()
        .map(|t| {
            let b = base as Reg;
            base += t.regs.len();
            b
        })
        .collect()
}

/// Instructions with their source locations.
#[derive(Default)]
struct Code {
    insts: Vec<Inst>,
    locs: Vec<SrcLoc>,
}

impl Code {
    fn push(&mut self, at: SrcLoc, i: Inst) {
        self.insts.push(i);
        self.locs.push(at);
    }

    fn alu(&mut self, at: SrcLoc, op: AluOp, dst: Reg, a: Operand, b: Operand) {
        self.push(
            at,
            Inst::Alu {
                op,
                ty: Ty::U64,
                dst,
                a,
                b,
            },
        );
    }

    /// `dst = src · factor`: a shift for a power of two (as the layout always used for scalars), a
    /// multiplication otherwise.
    fn scale(&mut self, at: SrcLoc, dst: Reg, src: Reg, factor: u64) {
        if factor.is_power_of_two() {
            let shift = factor.trailing_zeros() as u64;
            self.alu(at, AluOp::Shl, dst, Operand::Reg(src), Operand::Imm(shift));
        } else {
            self.alu(at, AluOp::Mul, dst, Operand::Reg(src), Operand::Imm(factor));
        }
    }
}

/// The workload of one launch.
pub fn workload(test: &LitmusTest, lay: &Layout, plan: &Plan) -> Workload {
    let nloc = test.locations.len();
    let temp = |t: usize| (nloc + t) as Reg;
    let r = Operand::Reg;
    let imm = Operand::Imm;
    let n = plan.instances(lay);
    let ws = lay.ws as u64;
    let c = lay.num_ctas() as u64;
    let bases = reg_bases(test);
    let local = LocalLayout::new(test, lay);
    let mut code = Code::default();
    let head = test.threads.first().map(|t| t.loc).unwrap_or_default();
    // Dispatch on (cta, warp).
    let (g, w, key, tmp) = (temp(T_G), temp(T_W), temp(T_KEY), temp(T_TMP));
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
    code.alu(head, AluOp::Rem, key, r(g), imm(c));
    code.alu(head, AluOp::Mul, key, r(key), imm(lay.warps as u64));
    code.alu(head, AluOp::Add, key, r(key), r(w));
    let mut entry_fixups: Vec<(usize, usize)> = Vec::new();
    for (i, t) in test.threads.iter().enumerate() {
        let k = lay.thread_cta[i] as u64 * lay.warps as u64 + lay.thread_warp[i] as u64;
        code.push(
            t.loc,
            Inst::Cmp {
                op: CmpOp::Eq,
                ty: Ty::U64,
                dst: tmp,
                a: r(key),
                b: imm(k),
            },
        );
        entry_fixups.push((code.insts.len(), i));
        code.push(
            t.loc,
            Inst::Branch {
                target: 0,
                cond: Some((tmp, true)),
            },
        );
    }
    code.push(head, Inst::Exit);
    let mut entries = vec![0u32; test.threads.len()];
    let (b, lane, k) = (temp(T_B), temp(T_L), temp(T_K));
    for (i, t) in test.threads.iter().enumerate() {
        entries[i] = code.insts.len() as u32;
        let at = t.loc;
        let (a, d) = plan.lane_map[lay.thread_cta[i]];
        // Instance index k = block·ws + ((lane·a + d) mod ws).
        code.alu(at, AluOp::Div, b, r(g), imm(c));
        code.push(
            at,
            Inst::ReadSpecial {
                dst: lane,
                which: Special::Lane,
            },
        );
        code.alu(at, AluOp::Mul, lane, r(lane), imm(a));
        code.alu(at, AluOp::Add, lane, r(lane), imm(d));
        code.alu(at, AluOp::Rem, lane, r(lane), imm(ws));
        code.alu(at, AluOp::Mul, k, r(b), imm(ws));
        code.alu(at, AluOp::Add, k, r(k), r(lane));
        let base = bases[i];
        for &(l, reg) in &t.addr_regs {
            let dst = base + reg;
            match local.offset[l] {
                // Local: instance lane · bytes of a copy + the location's base.
                Some(off) => {
                    code.scale(at, dst, lane, test.locations[l].bytes());
                    code.alu(at, AluOp::Add, dst, r(dst), imm(off));
                }
                None => global_address(&mut code, at, test, plan, l, dst, k, n),
            }
        }
        for &(reg, init) in &t.reg_init {
            let elem_addr = |l: usize, index: u32| {
                // The parser gives every location a register is initialised to an address register.
                let ar = t.addr_regs.iter().find(|(x, _)| *x == l).map(|&(_, ar)| ar);
                let ar = base + ar.expect("address register of an initialised pointer");
                (
                    ar,
                    index as u64 * test.locations[l].ty.width().bytes() as u64,
                )
            };
            match init {
                RegInit::Value(v) => code.push(
                    at,
                    Inst::Mov {
                        dst: base + reg,
                        src: imm(v as u64),
                    },
                ),
                RegInit::Address(l) => {
                    let (ar, _) = elem_addr(l, 0);
                    code.push(
                        at,
                        Inst::Mov {
                            dst: base + reg,
                            src: r(ar),
                        },
                    )
                }
                RegInit::Element { loc, index } => {
                    let (ar, off) = elem_addr(loc, index);
                    code.alu(at, AluOp::Add, base + reg, r(ar), imm(off));
                }
            }
        }
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
        let off = code.insts.len() as u32;
        for (inst, &iat) in t.insts.iter().zip(&t.locs) {
            code.push(iat, machine_barrier(relocate(inst, base, off), lay.ws));
        }
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
    for (at, i) in entry_fixups {
        if let Inst::Branch { target, .. } = &mut code.insts[at] {
            *target = entries[i];
        }
    }
    let mut reg_names: Vec<String> = test
        .locations
        .iter()
        .map(|l| format!("&{}", l.name))
        .collect();
    reg_names.extend(
        [
            "$group",
            "$warp",
            "$key",
            "$tmp",
            "$block",
            "$lane",
            "$instance",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    for t in &test.threads {
        reg_names.extend(t.regs.iter().map(|r| format!("{}:{}", t.name, r.name)));
    }
    let kernel = Kernel {
        name: test.name.clone(),
        file: test.file.clone(),
        insts: code.insts,
        locs: code.locs,
        reg_names,
        local_bytes: local.bytes,
        semantics: match test.dialect {
            super::test::Dialect::Ptx => Semantics::Ptx,
            super::test::Dialect::OpenCl => Semantics::OpenCl,
        },
    };
    let buffers = test
        .locations
        .iter()
        .zip(&plan.buffer_len)
        .map(|(l, &len)| Buffer {
            name: l.name.clone(),
            elem: l.ty,
            len,
            init: init_of(l, len),
            loc: l.loc,
        })
        .collect();
    let params = test
        .locations
        .iter()
        .enumerate()
        .map(|(i, l)| Param {
            name: l.name.clone(),
            reg: i as Reg,
            value: ParamValue::BufferAddr(l.name.clone()),
        })
        .collect();
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
    code: &mut Code,
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
    code.alu(at, AluOp::Mul, dst, r(k), imm(m));
    code.alu(at, AluOp::Add, dst, r(dst), imm(o));
    code.alu(at, AluOp::Rem, dst, r(dst), imm(n));
    code.scale(at, dst, dst, p * test.locations[l].bytes());
    code.alu(at, AluOp::Add, dst, r(dst), r(l as Reg));
}

/// A buffer of `total` elements for location `l`: every copy holds the initial elements in order
/// (copies start at multiples of the location's length, so element `i` is element `i mod n_L`).
fn init_of(l: &super::test::Location, total: u64) -> Init {
    let mask = width_mask(l.ty);
    if l.elems.iter().all(|&v| v == l.init) {
        return Init::Fill(l.init as u64 & mask);
    }
    Init::Values(
        (0..total)
            .map(|i| l.elems[(i % l.len as u64) as usize] as u64 & mask)
            .collect(),
    )
}

pub fn width_mask(ty: Ty) -> u64 {
    match ty.width() {
        Width::B32 => 0xFFFF_FFFF,
        Width::B64 => u64::MAX,
    }
}

/// A final raw value as the signed or unsigned number of its type.
pub fn normalise(raw: u64, ty: Ty) -> i64 {
    match ty {
        Ty::I32 => raw as u32 as i32 as i64,
        Ty::U32 | Ty::F32 => (raw & 0xFFFF_FFFF) as i64,
        Ty::I64 | Ty::U64 => raw as i64,
    }
}

pub fn relocate(inst: &Inst, base: Reg, off: u32) -> Inst {
    let rr = |x: Reg| x + base;
    let ro = |o: Operand| match o {
        Operand::Reg(x) => Operand::Reg(x + base),
        i => i,
    };
    let ra = |a: Address| Address {
        base: ro(a.base),
        offset: a.offset,
    };
    match *inst {
        Inst::Mov { dst, src } => Inst::Mov {
            dst: rr(dst),
            src: ro(src),
        },
        Inst::ReadSpecial { dst, which } => Inst::ReadSpecial {
            dst: rr(dst),
            which,
        },
        Inst::Alu { op, ty, dst, a, b } => Inst::Alu {
            op,
            ty,
            dst: rr(dst),
            a: ro(a),
            b: ro(b),
        },
        Inst::Cmp { op, ty, dst, a, b } => Inst::Cmp {
            op,
            ty,
            dst: rr(dst),
            a: ro(a),
            b: ro(b),
        },
        Inst::Select { dst, cond, a, b } => Inst::Select {
            dst: rr(dst),
            cond: rr(cond),
            a: ro(a),
            b: ro(b),
        },
        Inst::Cvt { dst, src, from, to } => Inst::Cvt {
            dst: rr(dst),
            src: rr(src),
            from,
            to,
        },
        Inst::Branch { target, cond } => Inst::Branch {
            target: target + off,
            cond: cond.map(|(c, nz)| (rr(c), nz)),
        },
        Inst::Load {
            dst,
            space,
            addr,
            ty,
            ord,
            scope,
        } => Inst::Load {
            dst: rr(dst),
            space,
            addr: ra(addr),
            ty,
            ord,
            scope,
        },
        Inst::Store {
            space,
            addr,
            src,
            ty,
            ord,
            scope,
        } => Inst::Store {
            space,
            addr: ra(addr),
            src: ro(src),
            ty,
            ord,
            scope,
        },
        Inst::Rmw {
            dst,
            op,
            space,
            addr,
            operand,
            ty,
            ord,
            scope,
        } => Inst::Rmw {
            dst: dst.map(rr),
            op,
            space,
            addr: ra(addr),
            operand: ro(operand),
            ty,
            ord,
            scope,
        },
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
            weak,
        } => Inst::Cas {
            dst: dst.map(rr),
            space,
            addr: ra(addr),
            expected: ro(expected),
            desired: ro(desired),
            ty,
            success,
            failure,
            scope,
            weak,
        },
        Inst::Barrier {
            kind: BarrierKind::Named(mut b),
            spaces,
            scope,
        } => {
            if let BarrierOp::Reduce { dst, pred, .. } = &mut b.op {
                *dst = rr(*dst);
                *pred = rr(*pred);
            }
            Inst::Barrier {
                kind: BarrierKind::Named(b),
                spaces,
                scope,
            }
        }
        ref other => other.clone(),
    }
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
