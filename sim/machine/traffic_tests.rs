//! Random traffic through the whole hierarchy (SM, store buffer, L1, crossbar, L2 slices with atomic
//! units, DRAM) against a shadow memory, run by `machine::run` on tiny and on stressed variants.
//!
//! Each seed generates a straight-line program of slots over a small footprint, so that lines are
//! shared, conflict, evict and hit. Every slot is one kind of access for all threads (some slots for
//! half of them, through a divergent branch), with random orders and scopes, mixed with fences and
//! barriers. Ownership keeps the expected final memory defined without assuming any interleaving:
//! - each word of the "own" region has one writer thread (plain, relaxed, release, seq_cst stores and
//!   atomic exchanges): its final value is that thread's last write, and the owner's own loads must
//!   return its latest write (per-location coherence, store-to-load forwarding);
//! - other threads' loads of an owned word may return its initial value or any value its owner writes
//!   (no value out of thin air);
//! - counters only see atomic adds (final = initial + sum, and the old values returned are distinct),
//!   bit words only atomic ORs, group counters only work_group-scope adds from their own work-group;
//! - read-only words are never written: every load of them returns the initial value.

use super::tests::{kernel, tiny};
use super::*;
use crate::config::{parse_str, GpuConfig};
use crate::ir::*;
use crate::rng::SplitMix64;
use crate::workload::*;
use std::collections::{HashMap, HashSet};

/// Launch shape: 4 work-groups of 64 work-items (8 warps of 32 on tiny's 4 SMs).
const GROUPS: u64 = 4;
const GROUP: u64 = 64;
const T: u64 = GROUPS * GROUP;
/// Words per region.
const OWN_PER_THREAD: u64 = 4;
const COUNTERS: u64 = 8;
const BITS: u64 = 4;
const GROUP_COUNTERS: u64 = 4;
const READ_ONLY: u64 = 96;

const OWN: u64 = 0;
const CNT: u64 = OWN + T * OWN_PER_THREAD;
const OR: u64 = CNT + COUNTERS;
const GRP: u64 = OR + BITS;
const RO: u64 = GRP + GROUPS * GROUP_COUNTERS;
const WORDS: u64 = RO + READ_ONLY;

/// Registers.
const DATA: Reg = 0;
const OUT: Reg = 1;
const TID: Reg = 2;
const GID: Reg = 3;
const LID: Reg = 4;
const ADDR: Reg = 5;
const VAL: Reg = 6;
const TMP: Reg = 7;
const NREGS: usize = 8;

/// Which threads run a slot.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Runs {
    All,
    /// Threads whose id has this parity (a divergent branch around the slot).
    Parity(u64),
}

impl Runs {
    fn runs(self, t: u64) -> bool {
        match self {
            Runs::All => true,
            Runs::Parity(p) => t % 2 == p,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Store `t * mul + add` to own word `j`.
    OwnStore {
        j: u64,
        mul: u64,
        add: u64,
        ord: StoreOrd,
        scope: Scope,
        who: Runs,
    },
    /// Atomic exchange of `t * mul + add` into own word `j` (old value discarded).
    OwnExch {
        j: u64,
        mul: u64,
        add: u64,
    },
    /// Load own word `j`, record it.
    OwnLoad {
        j: u64,
        ord: LoadOrd,
        scope: Scope,
        who: Runs,
        rec: u64,
    },
    /// Load word `j` of thread `(t * mul + add) % T`, record it.
    OtherLoad {
        j: u64,
        mul: u64,
        add: u64,
        ord: LoadOrd,
        scope: Scope,
        rec: u64,
    },
    /// Load read-only word `(t * mul + add) % READ_ONLY`, record it.
    RoLoad {
        mul: u64,
        add: u64,
        ord: LoadOrd,
        rec: u64,
    },
    /// Atomic add of `t % 7 + 1` to counter `(t + add) % COUNTERS`, record the old value.
    CntAdd {
        add: u64,
        ord: RmwOrd,
        rec: u64,
    },
    /// Atomic OR of `1 << (t % 32)` into bit word `(t + add) % BITS`.
    Or {
        add: u64,
        ord: RmwOrd,
    },
    /// work_group-scope atomic add of 1 to the group's counter `(lid + add) % GROUP_COUNTERS`.
    GrpAdd {
        add: u64,
    },
    Fence {
        ord: FenceOrd,
        scope: Scope,
    },
    Barrier {
        scope: Scope,
    },
}

fn pick<T: Copy>(rng: &mut SplitMix64, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

fn program(seed: u64, slots: usize) -> Vec<Slot> {
    let mut rng = SplitMix64::stream(seed, 0x7261_6E64);
    let mut rec = 0;
    let mut next_rec = || {
        rec += 1;
        rec - 1
    };
    let scopes = [Scope::WorkGroup, Scope::Device];
    let who = |rng: &mut SplitMix64| match rng.below(3) {
        0 => Runs::Parity(rng.below(2)),
        _ => Runs::All,
    };
    (0..slots)
        .map(|_| match rng.below(20) {
            0..=4 => Slot::OwnStore {
                j: rng.below(OWN_PER_THREAD),
                mul: 2 * rng.below(1 << 20) + 1,
                add: rng.below(1 << 30),
                ord: pick(
                    &mut rng,
                    &[
                        StoreOrd::Plain,
                        StoreOrd::Plain,
                        StoreOrd::Relaxed,
                        StoreOrd::Release,
                        StoreOrd::SeqCst,
                    ],
                ),
                scope: pick(&mut rng, &scopes),
                who: who(&mut rng),
            },
            5 => Slot::OwnExch {
                j: rng.below(OWN_PER_THREAD),
                mul: 2 * rng.below(1 << 20) + 1,
                add: rng.below(1 << 30),
            },
            6..=8 => Slot::OwnLoad {
                j: rng.below(OWN_PER_THREAD),
                ord: pick(
                    &mut rng,
                    &[
                        LoadOrd::Plain,
                        LoadOrd::Relaxed,
                        LoadOrd::Acquire,
                        LoadOrd::SeqCst,
                    ],
                ),
                scope: pick(&mut rng, &scopes),
                who: who(&mut rng),
                rec: next_rec(),
            },
            9..=10 => Slot::OtherLoad {
                j: rng.below(OWN_PER_THREAD),
                mul: 2 * rng.below(T / 2) + 1,
                add: rng.below(T),
                ord: pick(
                    &mut rng,
                    &[LoadOrd::Plain, LoadOrd::Relaxed, LoadOrd::Acquire],
                ),
                scope: pick(&mut rng, &scopes),
                rec: next_rec(),
            },
            11 => Slot::RoLoad {
                mul: 2 * rng.below(READ_ONLY / 2) + 1,
                add: rng.below(READ_ONLY),
                ord: pick(&mut rng, &[LoadOrd::Plain, LoadOrd::Relaxed]),
                rec: next_rec(),
            },
            12..=13 => Slot::CntAdd {
                add: rng.below(COUNTERS),
                ord: pick(&mut rng, &[RmwOrd::Relaxed, RmwOrd::AcqRel, RmwOrd::SeqCst]),
                rec: next_rec(),
            },
            14 => Slot::Or {
                add: rng.below(BITS),
                ord: pick(&mut rng, &[RmwOrd::Relaxed, RmwOrd::Release]),
            },
            15 => Slot::GrpAdd {
                add: rng.below(GROUP_COUNTERS),
            },
            16..=17 => Slot::Fence {
                ord: pick(
                    &mut rng,
                    &[
                        FenceOrd::Acquire,
                        FenceOrd::Release,
                        FenceOrd::AcqRel,
                        FenceOrd::SeqCst,
                    ],
                ),
                scope: pick(&mut rng, &scopes),
            },
            _ => Slot::Barrier {
                scope: pick(&mut rng, &scopes),
            },
        })
        .collect()
}

// ---- lowering to IR ----------------------------------------------------------------------------------

struct Emit {
    insts: Vec<Inst>,
}

const fn r(x: Reg) -> Operand {
    Operand::Reg(x)
}
const fn imm(x: u64) -> Operand {
    Operand::Imm(x)
}

impl Emit {
    fn alu(&mut self, op: AluOp, ty: Ty, dst: Reg, a: Operand, b: Operand) {
        self.insts.push(Inst::Alu { op, ty, dst, a, b });
    }
    /// ADDR = base + 4 * (word register + offset).
    fn word_addr(&mut self, base: Reg, word: Reg, offset: u64) {
        self.alu(AluOp::Add, Ty::U64, ADDR, r(word), imm(offset));
        self.alu(AluOp::Shl, Ty::U64, ADDR, r(ADDR), imm(2));
        self.alu(AluOp::Add, Ty::U64, ADDR, r(ADDR), r(base));
    }
    /// TMP = (t * mul + add) % m.
    fn mix(&mut self, mul: u64, add: u64, m: u64) {
        self.alu(AluOp::Mul, Ty::U64, TMP, r(TID), imm(mul));
        self.alu(AluOp::Add, Ty::U64, TMP, r(TMP), imm(add));
        self.alu(AluOp::Rem, Ty::U64, TMP, r(TMP), imm(m));
    }
    /// VAL = (t * mul + add) as u32.
    fn value(&mut self, mul: u64, add: u64) {
        self.alu(AluOp::Mul, Ty::U32, VAL, r(TID), imm(mul));
        self.alu(AluOp::Add, Ty::U32, VAL, r(VAL), imm(add));
    }
    fn load(&mut self, ord: LoadOrd, scope: Scope) {
        self.insts.push(Inst::Load {
            dst: VAL,
            space: Space::Global,
            addr: Address {
                base: r(ADDR),
                offset: 0,
            },
            ty: Ty::U32,
            ord,
            scope,
        });
    }
    fn store(&mut self, ord: StoreOrd, scope: Scope) {
        self.insts.push(Inst::Store {
            space: Space::Global,
            addr: Address {
                base: r(ADDR),
                offset: 0,
            },
            src: r(VAL),
            ty: Ty::U32,
            ord,
            scope,
        });
    }
    fn rmw(&mut self, op: RmwOp, ord: RmwOrd, scope: Scope, dst: Option<Reg>) {
        self.insts.push(Inst::Rmw {
            dst,
            op,
            space: Space::Global,
            addr: Address {
                base: r(ADDR),
                offset: 0,
            },
            operand: r(VAL),
            ty: Ty::U32,
            ord,
            scope,
        });
    }
    /// out[rec * T + t] = VAL (a plain store to this thread's own record).
    fn record(&mut self, rec: u64) {
        self.word_addr(OUT, TID, rec * T);
        self.store(StoreOrd::Plain, Scope::Device);
    }
}

fn lower(slots: &[Slot]) -> Vec<Inst> {
    let mut e = Emit { insts: Vec::new() };
    e.insts.push(Inst::ReadSpecial {
        dst: TID,
        which: Special::GlobalLinearId,
    });
    e.insts.push(Inst::ReadSpecial {
        dst: GID,
        which: Special::GroupLinearId,
    });
    e.insts.push(Inst::ReadSpecial {
        dst: LID,
        which: Special::LocalLinearId,
    });
    for s in slots {
        let who = match *s {
            Slot::OwnStore { who, .. } | Slot::OwnLoad { who, .. } => who,
            _ => Runs::All,
        };
        // Divergence: threads of the other parity branch over the slot.
        let skip_at = if let Runs::Parity(p) = who {
            e.alu(AluOp::And, Ty::U64, TMP, r(TID), imm(1));
            let at = e.insts.len();
            e.insts.push(Inst::Branch {
                target: 0,
                cond: Some((TMP, p == 0)),
            });
            Some(at)
        } else {
            None
        };
        match *s {
            Slot::OwnStore {
                j,
                mul,
                add,
                ord,
                scope,
                ..
            } => {
                e.value(mul, add);
                e.word_addr(DATA, TID, OWN + j * T);
                e.store(ord, scope);
            }
            Slot::OwnExch { j, mul, add } => {
                e.value(mul, add);
                e.word_addr(DATA, TID, OWN + j * T);
                e.rmw(RmwOp::Exch, RmwOrd::Relaxed, Scope::Device, None);
            }
            Slot::OwnLoad {
                j, ord, scope, rec, ..
            } => {
                e.word_addr(DATA, TID, OWN + j * T);
                e.load(ord, scope);
                e.record(rec);
            }
            Slot::OtherLoad {
                j,
                mul,
                add,
                ord,
                scope,
                rec,
            } => {
                e.mix(mul, add, T);
                e.word_addr(DATA, TMP, OWN + j * T);
                e.load(ord, scope);
                e.record(rec);
            }
            Slot::RoLoad { mul, add, ord, rec } => {
                e.mix(mul, add, READ_ONLY);
                e.word_addr(DATA, TMP, RO);
                e.load(ord, Scope::Device);
                e.record(rec);
            }
            Slot::CntAdd { add, ord, rec } => {
                e.mix(1, add, COUNTERS);
                e.word_addr(DATA, TMP, CNT);
                e.alu(AluOp::Rem, Ty::U32, VAL, r(TID), imm(7));
                e.alu(AluOp::Add, Ty::U32, VAL, r(VAL), imm(1));
                e.rmw(RmwOp::Add, ord, Scope::Device, Some(VAL));
                e.record(rec);
            }
            Slot::Or { add, ord } => {
                e.mix(1, add, BITS);
                e.word_addr(DATA, TMP, OR);
                e.alu(AluOp::Rem, Ty::U32, VAL, r(TID), imm(32));
                e.alu(AluOp::Shl, Ty::U32, VAL, imm(1), r(VAL));
                e.rmw(RmwOp::Or, ord, Scope::Device, None);
            }
            Slot::GrpAdd { add } => {
                e.alu(AluOp::Add, Ty::U64, TMP, r(LID), imm(add));
                e.alu(AluOp::Rem, Ty::U64, TMP, r(TMP), imm(GROUP_COUNTERS));
                e.alu(AluOp::Mul, Ty::U64, VAL, r(GID), imm(GROUP_COUNTERS));
                e.alu(AluOp::Add, Ty::U64, TMP, r(TMP), r(VAL));
                e.word_addr(DATA, TMP, GRP);
                e.insts.push(Inst::Mov {
                    dst: VAL,
                    src: imm(1),
                });
                e.rmw(RmwOp::Add, RmwOrd::Relaxed, Scope::WorkGroup, None);
            }
            Slot::Fence { ord, scope } => e.insts.push(Inst::Fence {
                ord,
                scope,
                spaces: SpaceSet::GLOBAL,
            }),
            Slot::Barrier { scope } => e.insts.push(Inst::Barrier {
                kind: BarrierKind::WorkGroup,
                spaces: SpaceSet::BOTH,
                scope,
            }),
        }
        if let Some(at) = skip_at {
            let end = e.insts.len() as u32;
            if let Inst::Branch { target, .. } = &mut e.insts[at] {
                *target = end;
            }
        }
    }
    e.insts.push(Inst::Exit);
    e.insts
}

// ---- the shadow -----------------------------------------------------------------------------------

/// What a correct machine must leave and return.
struct Expect {
    /// Final value of every data word.
    data: Vec<u64>,
    /// Per record slot and thread: the exact value, or the set of allowed values.
    exact: HashMap<(u64, u64), u64>,
    allowed: HashMap<(u64, u64), HashSet<u64>>,
    /// Records holding old values of fetch-adds, per counter.
    adds: HashMap<u64, Vec<(u64, u64)>>,
}

fn shadow(slots: &[Slot], initial: &[u64]) -> Expect {
    let val = |t: u64, mul: u64, add: u64| (t.wrapping_mul(mul).wrapping_add(add)) & 0xFFFF_FFFF;
    let mut data = initial.to_vec();
    // Every value each owned word ever holds, for other threads' loads.
    let mut ever: HashMap<u64, HashSet<u64>> = (OWN..OWN + T * OWN_PER_THREAD)
        .map(|w| (w, HashSet::from([initial[w as usize]])))
        .collect();
    for s in slots {
        if let Slot::OwnStore {
            j, mul, add, who, ..
        } = *s
        {
            for t in (0..T).filter(|&t| who.runs(t)) {
                ever.get_mut(&(OWN + j * T + t))
                    .unwrap()
                    .insert(val(t, mul, add));
            }
        }
        if let Slot::OwnExch { j, mul, add } = *s {
            for t in 0..T {
                ever.get_mut(&(OWN + j * T + t))
                    .unwrap()
                    .insert(val(t, mul, add));
            }
        }
    }
    let mut e = Expect {
        data: Vec::new(),
        exact: HashMap::new(),
        allowed: HashMap::new(),
        adds: HashMap::new(),
    };
    for s in slots {
        match *s {
            Slot::OwnStore {
                j, mul, add, who, ..
            } => {
                for t in (0..T).filter(|&t| who.runs(t)) {
                    data[(OWN + j * T + t) as usize] = val(t, mul, add);
                }
            }
            Slot::OwnExch { j, mul, add } => {
                for t in 0..T {
                    data[(OWN + j * T + t) as usize] = val(t, mul, add);
                }
            }
            Slot::OwnLoad { j, who, rec, .. } => {
                for t in (0..T).filter(|&t| who.runs(t)) {
                    e.exact.insert((rec, t), data[(OWN + j * T + t) as usize]);
                }
            }
            Slot::OtherLoad {
                j, mul, add, rec, ..
            } => {
                for t in 0..T {
                    let u = (t * mul + add) % T;
                    e.allowed.insert((rec, t), ever[&(OWN + j * T + u)].clone());
                }
            }
            Slot::RoLoad { mul, add, rec, .. } => {
                for t in 0..T {
                    let w = RO + (t * mul + add) % READ_ONLY;
                    e.exact.insert((rec, t), initial[w as usize]);
                }
            }
            Slot::CntAdd { add, rec, .. } => {
                for t in 0..T {
                    let w = CNT + (t + add) % COUNTERS;
                    data[w as usize] = (data[w as usize] + t % 7 + 1) & 0xFFFF_FFFF;
                    e.adds.entry(w).or_default().push((rec, t));
                }
            }
            Slot::Or { add, .. } => {
                for t in 0..T {
                    data[(OR + (t + add) % BITS) as usize] |= 1 << (t % 32);
                }
            }
            Slot::GrpAdd { add } => {
                for t in 0..T {
                    let (g, lid) = (t / GROUP, t % GROUP);
                    data[(GRP + g * GROUP_COUNTERS + (lid + add) % GROUP_COUNTERS) as usize] += 1;
                }
            }
            Slot::Fence { .. } | Slot::Barrier { .. } => {}
        }
    }
    e.data = data;
    e
}

fn records(slots: &[Slot]) -> u64 {
    slots
        .iter()
        .filter(|s| {
            matches!(
                s,
                Slot::OwnLoad { .. }
                    | Slot::OtherLoad { .. }
                    | Slot::RoLoad { .. }
                    | Slot::CntAdd { .. }
            )
        })
        .count() as u64
}

fn workload(slots: &[Slot], seed: u64) -> Workload {
    let insts = lower(slots);
    let buffer = |name: &str, len: u64, init: Init| Buffer {
        name: name.into(),
        elem: Ty::U32,
        len,
        init,
        loc: SrcLoc::default(),
    };
    let param = |name: &str, reg: Reg| Param {
        name: name.into(),
        reg,
        value: ParamValue::BufferAddr(name.into()),
    };
    Workload {
        kernel: kernel(insts, NREGS, 0),
        geometry: Geometry {
            groups: [GROUPS as u32, 1, 1],
            group_size: [GROUP as u32, 1, 1],
        },
        buffers: vec![
            // Small initial values, so that counters never wrap and old values stay ordered.
            buffer("data", WORDS, Init::Random { seed, modulo: 1000 }),
            buffer("out", records(slots).max(1) * T, Init::Fill(0xFFFF_FFFF)),
        ],
        params: vec![param("data", DATA), param("out", OUT)],
        checks: vec![],
        reports: vec![],
        parameters: vec![],
    }
}

/// Runs one program on `cfg` and checks everything against the shadow; `Err` says what differed.
fn check(cfg: &GpuConfig, seed: u64, slots: &[Slot]) -> Result<(), String> {
    let wl = workload(slots, seed);
    let initial: Vec<u64> = (0..WORDS).map(|i| wl.buffers[0].initial(i)).collect();
    let want = shadow(slots, &initial);
    let res = run(
        cfg,
        &wl,
        &RunOptions {
            seed,
            ..Default::default()
        },
    )
    .map_err(|e| format!("run failed: {e}"))?;
    let (data, out) = (&res.buffers[0], &res.buffers[1]);
    let region = |w: u64| match w {
        w if w < CNT => "own",
        w if w < OR => "counter",
        w if w < GRP => "bits",
        w if w < RO => "group counter",
        _ => "read-only",
    };
    for (w, (&got, &exp)) in data.iter().zip(&want.data).enumerate() {
        if got != exp {
            return Err(format!(
                "final data[{w}] ({} word) = {got}, expected {exp}",
                region(w as u64)
            ));
        }
    }
    let rec = |k: u64, t: u64| out[(k * T + t) as usize];
    for (&(k, t), &exp) in &want.exact {
        if rec(k, t) != exp {
            return Err(format!(
                "record {k} of thread {t}: loaded {}, expected exactly {exp}",
                rec(k, t)
            ));
        }
    }
    for (&(k, t), allowed) in &want.allowed {
        if !allowed.contains(&rec(k, t)) {
            return Err(format!(
                "record {k} of thread {t}: loaded {}, a value its owner never wrote",
                rec(k, t)
            ));
        }
    }
    for (&w, recs) in &want.adds {
        let mut olds: Vec<u64> = recs.iter().map(|&(k, t)| rec(k, t)).collect();
        olds.sort_unstable();
        if olds.windows(2).any(|p| p[0] == p[1]) {
            return Err(format!(
                "counter {w}: two fetch-adds returned the same old value"
            ));
        }
        if olds.first() < Some(&initial[w as usize]) || olds.last() >= Some(&want.data[w as usize])
        {
            return Err(format!(
                "counter {w}: an old value outside [initial, final)"
            ));
        }
    }
    Ok(())
}

/// tiny and variants that turn on each source of reordering and each alternative policy.
fn variants() -> Vec<(&'static str, GpuConfig)> {
    let tiny_text = include_str!("../../configs/tiny.toml");
    let with = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse_str(tiny_text, "tiny", &sets).unwrap()
    };
    vec![
        ("tiny", tiny()),
        (
            "stressed (jitter, drain jitter, skew, prewarmed L1)",
            with(&[
                "stress.interconnect_jitter=40",
                "stress.drain_jitter=40",
                "stress.start_skew=60",
                "stress.prewarm_l1=true",
                "store_buffer.drain_delay=10",
            ]),
        ),
        (
            "fifo per-SM store buffer, round-robin, xor slices",
            with(&[
                "store_buffer.drain_order=fifo",
                "store_buffer.placement=per_sm",
                "store_buffer.entries=64",
                "sm.warp_policy=lrr",
                "l2.hash=xor",
            ]),
        ),
        (
            "small L2 (evictions, write-backs), write-allocate L1, one MSHR, FR-FCFS DRAM, L2 write-validate",
            with(&[
                "l2.size_bytes=8192",
                "l2.write_validate=true",
                "dram.frfcfs_cap=1",
                "l1.write_policy=write_through_allocate",
                "l1.mshrs=1",
                "l2.mshrs=2",
                "interconnect.queue_depth=2",
                "stress.interconnect_jitter=25",
            ]),
        ),
        (
            "no store buffer, work_group atomics in L1, uncombined lanes",
            with(&[
                "store_buffer.entries=0",
                "atomics.work_group_global_at=l1",
                "atomics.combine_same_address_lanes=false",
                "stress.drain_jitter=20",
                "stress.start_skew=30",
            ]),
        ),
    ]
}

#[test]
fn random_traffic_matches_the_shadow_memory_on_tiny_and_stressed_variants() {
    let mut failures = Vec::new();
    for (name, cfg) in variants() {
        for seed in 0..12 {
            let slots = program(seed, 28);
            if let Err(e) = check(&cfg, seed, &slots) {
                failures.push(format!("{name}, seed {seed}: {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn random_traffic_is_deterministic_per_seed() {
    let cfg = &variants()[1].1;
    let slots = program(3, 28);
    let wl = workload(&slots, 3);
    let opts = RunOptions {
        seed: 3,
        ..Default::default()
    };
    let a = run(cfg, &wl, &opts).unwrap();
    let b = run(cfg, &wl, &opts).unwrap();
    assert_eq!((a.cycles, &a.buffers), (b.cycles, &b.buffers));
    assert_eq!(
        serde_json::to_string(&a.stats).unwrap(),
        serde_json::to_string(&b.stats).unwrap()
    );
}

#[test]
fn the_shadow_check_catches_a_wrong_final_value() {
    // The checker itself: a program whose only store is skipped by the shadow must be reported.
    let slots = vec![Slot::OwnStore {
        j: 0,
        mul: 1,
        add: 5,
        ord: StoreOrd::Plain,
        scope: Scope::Device,
        who: Runs::All,
    }];
    let mut wrong = slots.clone();
    if let Slot::OwnStore { add, .. } = &mut wrong[0] {
        *add = 6;
    }
    let wl = workload(&slots, 1);
    let res = run(&tiny(), &wl, &RunOptions::default()).unwrap();
    let initial: Vec<u64> = (0..WORDS).map(|i| wl.buffers[0].initial(i)).collect();
    assert_eq!(res.buffers[0], shadow(&slots, &initial).data);
    assert_ne!(res.buffers[0], shadow(&wrong, &initial).data);
}

#[test]
fn a_thread_reads_its_own_device_atomic_through_a_cached_line() {
    // ld x (caches the line in L1); atom.exch.relaxed.gpu x = 7; ld x: coherence (a read after the
    // thread's own write) requires 7, although the exchange was performed at L2.
    let slots = vec![
        Slot::OwnLoad {
            j: 0,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
            who: Runs::All,
            rec: 0,
        },
        Slot::OwnExch {
            j: 0,
            mul: 0,
            add: 7,
        },
        Slot::OwnLoad {
            j: 0,
            ord: LoadOrd::Plain,
            scope: Scope::Device,
            who: Runs::All,
            rec: 1,
        },
    ];
    check(&tiny(), 1, &slots).unwrap();
}

/// Partial-line stores and device-scope loads on tiny, with and without `l2.write_validate`: the
/// loaded values, DRAM line reads, write allocations and read fills.
fn partial_writes(write_validate: bool) -> (Vec<Vec<u64>>, f64, f64, Option<f64>) {
    let text = "groups 1\ngroup_size 1\nbuffer data: u32[64] = 7\nbuffer out: u32[2] = zero\n\
        kernel k {\n reg %v, %w\n st.u32 data[0], 5\n st.u32 data[32], 6\n fence.acq_rel.device\n\
        ld.relaxed.device.u32 %v, data[0]\n ld.relaxed.device.u32 %w, data[1]\n st.u32 out[0], %v\n\
        st.u32 out[1], %w\n}\n";
    let wl = crate::kernel::parse_kern(text, "partial.kern", &[]).unwrap();
    let mut cfg = tiny();
    cfg.l2.write_validate = write_validate;
    let r = run(&cfg, &wl, &RunOptions::default()).unwrap();
    let stat = |loc: &str, m: &str| {
        r.stats
            .rows
            .iter()
            .find(|s| s.location == loc && s.metric == m)
            .map(|s| s.value)
    };
    (
        r.buffers.clone(),
        stat("dram", "reads").unwrap(),
        stat("l2", "write_allocs").unwrap(),
        stat("l2", "read_fills"),
    )
}

#[test]
fn write_validate_allocates_partial_write_misses_and_fetches_only_for_reads_that_need_old_bytes() {
    // data line 0: a 4-byte store then loads of the stored word (valid) and its neighbour (not
    // written: the line is fetched then); data line 1: a 4-byte store never read; out: two stores.
    let (vals, dram_reads, allocs, fills) = partial_writes(true);
    assert_eq!(
        &vals[1],
        &vec![5, 7],
        "the stored word and the old neighbour"
    );
    assert_eq!((vals[0][0], vals[0][1], vals[0][32]), (5, 7, 6));
    assert_eq!(
        allocs, 3.0,
        "every write miss allocated without a DRAM read"
    );
    assert_eq!(
        fills,
        Some(1.0),
        "one load needed bytes no write had made valid"
    );
    assert_eq!(dram_reads, 1.0, "only that load's line came from DRAM");
    // Without it, each partial write miss reads its line first.
    let (vals, dram_reads, allocs, fills) = partial_writes(false);
    assert_eq!(&vals[1], &vec![5, 7]);
    assert_eq!((dram_reads, allocs, fills), (3.0, 0.0, None));
}
