//! Contract tests every memory part passes, each part driven alone through its message interface by a
//! harness that plays its neighbours (Akita's acceptance tests; STYLE.md "Tests"):
//!
//! - drain: every accepted request is answered exactly once, nothing is lost or duplicated, the part
//!   reports idle afterwards and the payload pools hold no live line buffer or atomic batch;
//! - backpressure: a full queue or a full MSHR file delays requests, never drops them, and the part
//!   resumes when room frees up;
//! - values: each part returns what its contract says — the L1 the latest store it received before a
//!   load (its own SM's per-location coherence), a slice the value in arrival order per line — and an
//!   invalidation (L1) or a drain (store buffer) leaves no stale value to be served.
//!
//! Parts under test: store buffer, L1 (with a fake L2 behind it), crossbar, L2 slice with DRAM (with a
//! fake SM in front), atomic unit. "Reset" is construction: no part keeps state across runs.
//! The hierarchy as a whole is tested against a shadow memory in `traffic_tests.rs`.

use super::atomic::*;
use super::atomic_unit::AtomicUnit;
use super::build;
use super::domain::Ctx;
use super::dram::Dram;
use super::l1::L1;
use super::l2::L2Slice;
use super::memory::{byte_mask, GlobalMemory, GLOBAL_BASE};
use super::msg::*;
use super::pool::*;
use super::store_buffer::{Forward, StoreBuffer};
use super::tests::tiny;
use super::outbox::Outbox;
use super::xbar::{SinkPort, SourcePort};
use crate::config::{DrainOrder, GpuConfig, SbPlacement, StoreBufferSpec};
use crate::engine::{Clock, EventQueue, Time};
use crate::ir::{AtomicOp, RmwOp, SrcLoc, Ty};
use crate::rng::SplitMix64;
use crate::workload::{Buffer, Init};
use std::collections::HashMap;

const LINE: u64 = 128;

/// The world around one part: event queue, payload pools, coherent memory, crossbar outbox (with a
/// receiving port per destination), random source.
struct Bench {
    q: EventQueue<Event>,
    lines: Pool<LineBuf>,
    batches: Pool<AtomicBatch>,
    mem: GlobalMemory,
    out: Outbox,
    sinks: HashMap<(u8, u16), SinkPort>,
    rng: SplitMix64,
    clock: Clock,
}

/// The context a part's handler gets, built from a [`Bench`].
macro_rules! ctx {
    ($b:expr) => {
        Ctx {
            q: &mut $b.q,
            lines: &mut $b.lines,
            batches: &mut $b.batches,
            mem: &mut $b.mem,
            out: &mut $b.out,
            rng: &mut $b.rng,
        }
    };
}

impl Bench {
    /// Memory of `nlines` lines of seeded random values from `GLOBAL_BASE`.
    fn new(cfg: &GpuConfig, nlines: u64, seed: u64) -> Bench {
        let buf = Buffer {
            name: "m".into(),
            elem: Ty::U32,
            len: nlines * LINE / 4,
            init: Init::Random { seed, modulo: 0 },
            loc: SrcLoc::default(),
        };
        Bench {
            q: EventQueue::new(),
            lines: Pool::default(),
            batches: Pool::default(),
            mem: GlobalMemory::new(&[buf], 0),
            out: Outbox::default(),
            sinks: HashMap::new(),
            rng: SplitMix64::new(seed),
            clock: Clock::from_mhz(cfg.clocks.core_mhz),
        }
    }

    fn cycle(&self, n: u64) -> Time {
        self.clock.cycles(n)
    }

    /// The crossbar's receiving side: every message the part sent enters the queue at its delivery
    /// through its destination's port, its payload back in the bench's pools.
    fn deliver(&mut self) {
        for o in std::mem::take(&mut self.out.sent) {
            let key = match o.event {
                Event::SliceIn(slice, _) => (0, slice),
                Event::L1FromXbar(sm, _) => (1, sm),
                other => panic!("not a crossbar message: {other:?}"),
            };
            let now = self.q.now();
            let sink = self.sinks.entry(key).or_insert_with(|| SinkPort::new(64));
            let t = sink.receive(o.transit, o.src as usize, now);
            let ev = o.arrive(&mut self.lines, &mut self.batches);
            self.q.schedule(t, ev).expect("delivered after it was sent");
        }
    }

    /// Asserts the drain contract's last clause: no payload is left alive.
    fn assert_pools_empty(&self) {
        assert_eq!(self.lines.live(), 0, "line buffers leaked");
        assert_eq!(self.batches.live(), 0, "atomic batches leaked");
    }

    fn line_bytes(&self, line: u64) -> LineBuf {
        let mut b = [0u8; MAX_LINE];
        self.mem.read_line(line, LINE as u32, &mut b);
        b
    }
}

fn line_addr(i: u64) -> u64 {
    GLOBAL_BASE + i * LINE
}

/// A random byte mask of whole 4-byte words within a line.
fn word_mask(rng: &mut SplitMix64) -> u128 {
    let mut m = 0u128;
    for w in 0..32 {
        if rng.below(4) == 0 {
            m |= byte_mask(w * 4, 4);
        }
    }
    if m == 0 {
        byte_mask(4 * rng.below(32) as u32, 4)
    } else {
        m
    }
}

fn random_line(rng: &mut SplitMix64) -> LineBuf {
    let mut b = [0u8; MAX_LINE];
    for x in b.iter_mut() {
        *x = rng.next_u64() as u8;
    }
    b
}

fn apply(dst: &mut LineBuf, src: &LineBuf, mask: u128) {
    for (i, d) in dst.iter_mut().enumerate() {
        if mask & (1u128 << i) != 0 {
            *d = src[i];
        }
    }
}

fn masked_eq(a: &LineBuf, b: &LineBuf, mask: u128) -> bool {
    (0..MAX_LINE).all(|i| mask & (1u128 << i) == 0 || a[i] == b[i])
}

// ---- L1 with a fake L2 ---------------------------------------------------------------------------

/// What the SM side of an L1 received.
#[derive(Debug)]
enum Got {
    Load { op: u32, at: Time, data: LineBuf },
    Accepted(u16),
    Acked(u16),
    Atomic { op: u32, results: Vec<u64> },
}

/// What the harness asked of the L1, in the order the L1 received it.
#[derive(Debug, Clone, Copy)]
enum Asked {
    Load {
        op: u32,
        line: u64,
        mask: u128,
    },
    Store {
        warp: u16,
        line: u64,
        mask: u128,
        data: DataId,
    },
    Atomic {
        op: u32,
        warp: u16,
        at_l1: bool,
    },
    Invalidate,
}

/// Runs the L1 until nothing is left to do. The fake L2 serves every request `l2_delay` after it
/// arrives, in arrival order, from `b.mem`. Returns the SM-side responses and, for every load, the
/// line as the receive-order shadow held it when the L1 received the load.
fn run_l1(
    b: &mut Bench,
    l1: &mut L1,
    l2_delay: Time,
    shadow: &mut HashMap<u64, LineBuf>,
) -> (Vec<Got>, Expected) {
    let mut got = Vec::new();
    let mut expected = HashMap::new();
    let mut atomics = HashMap::new();
    while let Some((now, ev)) = {
        b.deliver();
        b.q.pop()
    } {
        match ev {
            Event::L1In(_, req) => {
                // The L1 processes requests in the order it receives them (a blocked request holds
                // the ones behind it), so this is the order its per-location coherence follows.
                match req {
                    L1Req::Load {
                        who, line, mask, ..
                    } => {
                        let cur = *shadow.entry(line).or_insert_with(|| b.line_bytes(line));
                        expected.insert(who.op, (mask, cur));
                    }
                    L1Req::Store {
                        line, mask, data, ..
                    } => {
                        let d = *b.lines.get(data.0);
                        let e = shadow.entry(line).or_insert_with(|| b.line_bytes(line));
                        apply(e, &d, mask);
                    }
                    // An atomic performed at L2 takes effect there in the order the L1 sends it.
                    L1Req::Atomic {
                        who,
                        line,
                        batch,
                        at_l1: false,
                        ..
                    } => {
                        let mut copy = b.batches.get(batch.0).clone();
                        let cur = *shadow.entry(line).or_insert_with(|| b.line_bytes(line));
                        let mut view = ShadowLine { line, bytes: cur };
                        perform_batch(&mut copy, &mut view);
                        shadow.insert(line, view.bytes);
                        atomics.insert(who.op, copy.lanes.iter().map(|l| l.result).collect());
                    }
                    _ => {}
                }
                l1.receive(req, &mut ctx!(b));
            }
            Event::L1Retry(_) => l1.retry(&mut ctx!(b)),
            Event::L1FromXbar(_, resp) => l1.from_xbar(resp, &mut ctx!(b)),
            Event::SliceIn(_, req) => {
                let kind = match req.kind {
                    ReqKind::Read { .. } => {
                        let buf = b.line_bytes(req.line);
                        RespKind::Data(DataId(b.lines.alloc(buf)))
                    }
                    ReqKind::Write { mask, data } => {
                        let d = *b.lines.get(data.0);
                        b.lines.release(data.0);
                        b.mem.write_masked(req.line, &d, mask);
                        RespKind::WriteAck
                    }
                    ReqKind::Atomic { batch } => {
                        perform_batch(b.batches.get_mut(batch.0), &mut b.mem);
                        RespKind::AtomicDone(batch)
                    }
                };
                b.q.after(
                    l2_delay,
                    Event::L1FromXbar(
                        req.sm,
                        MemResp {
                            tag: req.tag,
                            line: req.line,
                            kind,
                        },
                    ),
                );
            }
            Event::SmIn(_, r) => got.push(match r {
                CoreResp::LoadData { who, data, .. } => {
                    let d = *b.lines.get(data.0);
                    b.lines.release(data.0);
                    Got::Load {
                        op: who.op,
                        at: now,
                        data: d,
                    }
                }
                CoreResp::StoreAccepted { warp } => Got::Accepted(warp),
                CoreResp::StoreAcked { warp, .. } => Got::Acked(warp),
                CoreResp::AtomicDone { who, batch } => {
                    let results = b
                        .batches
                        .get(batch.0)
                        .lanes
                        .iter()
                        .map(|l| l.result)
                        .collect();
                    b.batches.release(batch.0);
                    Got::Atomic {
                        op: who.op,
                        results,
                    }
                }
                CoreResp::SharedDone { .. } => panic!("the L1 never answers SharedDone"),
            }),
            other => panic!("unexpected event for an L1 bench: {other:?}"),
        }
    }
    (
        got,
        Expected {
            loads: expected,
            atomics,
        },
    )
}

/// What the receive-order shadow says each load (mask, line) and each L2 atomic (old values) returns.
struct Expected {
    loads: HashMap<u32, (u128, LineBuf)>,
    atomics: HashMap<u32, Vec<u64>>,
}

/// A shadow line as the value store of an atomic.
struct ShadowLine {
    line: u64,
    bytes: LineBuf,
}

impl ValueStore for ShadowLine {
    fn read(&self, addr: u64, len: u32) -> u64 {
        let o = (addr - self.line) as usize;
        let mut v = [0u8; 8];
        v[..len as usize].copy_from_slice(&self.bytes[o..o + len as usize]);
        u64::from_le_bytes(v)
    }
    fn write(&mut self, addr: u64, len: u32, v: u64) {
        let o = (addr - self.line) as usize;
        self.bytes[o..o + len as usize].copy_from_slice(&v.to_le_bytes()[..len as usize]);
    }
}

/// Schedules `asked` into the L1 at the given cycles (allocating payloads).
fn ask_l1(b: &mut Bench, at: Time, a: Asked, level: Level) {
    let req = match a {
        Asked::Load { op, line, mask } => L1Req::Load {
            who: Requester::Warp { warp: 0, op },
            line,
            mask,
            level,
        },
        Asked::Store {
            warp,
            line,
            mask,
            data,
        } => L1Req::Store {
            who: Requester::Drain { warp },
            line,
            mask,
            data,
            level: Level::L2,
            seq: 0,
        },
        Asked::Atomic { op, warp, at_l1 } => {
            let addr = line_addr(b.rng.below(8)) + 4 * b.rng.below(32);
            let batch = b.batches.alloc(AtomicBatch {
                op: AtomicOp::Rmw(RmwOp::Add),
                ty: Ty::U32,
                lanes: vec![LaneAtomic {
                    lane: 0,
                    addr,
                    operand: 1 + b.rng.below(9),
                    expected: 0,
                    result: 0,
                }],
            });
            L1Req::Atomic {
                who: Requester::Warp { warp, op },
                line: addr & !(LINE - 1),
                batch: BatchId(batch),
                level: Level::L2,
                at_l1,
                seq: 0,
            }
        }
        Asked::Invalidate => L1Req::InvalidateAll,
    };
    b.q.schedule(at, Event::L1In(0, req)).unwrap();
}

/// A seeded random stream of loads (L1 and bypass), stores, atomics (at L2, and at L1 if
/// `l1_atomics`) and invalidations over `nlines` lines, at random cycles in `0..span`.
fn l1_stream(b: &mut Bench, n: u32, nlines: u64, span: u64, l1_atomics: bool) -> Vec<Asked> {
    let mut asked = Vec::new();
    for id in 0..n {
        let n_at = b.rng.below(span);
        let at = b.cycle(n_at);
        let line = line_addr(b.rng.below(nlines));
        let r = b.rng.below(100);
        let (a, level) = if r < 45 {
            (
                Asked::Load {
                    op: id,
                    line,
                    mask: word_mask(&mut b.rng),
                },
                Level::Sm,
            )
        } else if r < 55 {
            (
                Asked::Load {
                    op: id,
                    line,
                    mask: word_mask(&mut b.rng),
                },
                Level::L2,
            )
        } else if r < 85 || (!l1_atomics && (85..90).contains(&r)) {
            let data = random_line(&mut b.rng);
            (
                Asked::Store {
                    warp: id as u16,
                    line,
                    mask: word_mask(&mut b.rng),
                    data: DataId(b.lines.alloc(data)),
                },
                Level::L2,
            )
        } else if r < 95 {
            (
                Asked::Atomic {
                    op: id,
                    warp: id as u16,
                    at_l1: r < 90,
                },
                Level::L2,
            )
        } else {
            (Asked::Invalidate, Level::Sm)
        };
        ask_l1(b, at, a, level);
        asked.push(a);
    }
    asked
}

/// Every request answered exactly once with the responses its kind promises.
fn assert_each_answered_once(asked: &[Asked], got: &[Got]) {
    let mut loads: HashMap<u32, u32> = HashMap::new();
    let mut atomics: HashMap<u32, u32> = HashMap::new();
    let mut accepted: HashMap<u16, u32> = HashMap::new();
    let mut acked: HashMap<u16, u32> = HashMap::new();
    for g in got {
        match *g {
            Got::Load { op, .. } => *loads.entry(op).or_default() += 1,
            Got::Atomic { op, .. } => *atomics.entry(op).or_default() += 1,
            Got::Accepted(w) => *accepted.entry(w).or_default() += 1,
            Got::Acked(w) => *acked.entry(w).or_default() += 1,
        }
    }
    let mut want_loads = 0;
    let mut want_atomics = 0;
    let mut want_acked = 0;
    for a in asked {
        match *a {
            Asked::Load { op, .. } => {
                want_loads += 1;
                assert_eq!(loads.get(&op), Some(&1), "load {op} answered once");
            }
            Asked::Store { warp, .. } => {
                want_acked += 1;
                assert_eq!(accepted.get(&warp), Some(&1), "store {warp} accepted once");
                assert_eq!(acked.get(&warp), Some(&1), "store {warp} acknowledged once");
            }
            Asked::Atomic { op, warp, at_l1 } => {
                want_atomics += 1;
                assert_eq!(atomics.get(&op), Some(&1), "atomic {op} answered once");
                // An L1 atomic writes its result through like a store: one acknowledgement.
                if at_l1 {
                    want_acked += 1;
                    assert_eq!(
                        acked.get(&warp),
                        Some(&1),
                        "L1 atomic {warp} write-through acked once"
                    );
                }
            }
            Asked::Invalidate => {}
        }
    }
    assert_eq!(
        loads.len(),
        want_loads,
        "no answer to a load nobody asked for"
    );
    assert_eq!(atomics.len(), want_atomics);
    assert_eq!(
        acked.values().sum::<u32>(),
        want_acked,
        "no duplicate acknowledgements"
    );
}

#[test]
fn l1_drains_every_request_exactly_once_and_frees_every_payload() {
    for seed in 0..8 {
        let mut cfg = tiny();
        cfg.l1.mshrs = 1 + (seed as u32 % 4);
        if seed % 2 == 1 {
            cfg.l1.write_policy = crate::config::L1WritePolicy::WriteThroughAllocate;
        }
        let mut b = Bench::new(&cfg, 64, seed);
        let mut l1 = L1::new(0, &cfg, true);
        let asked = l1_stream(&mut b, 600, 64, 3000, true);
        let mut shadow = HashMap::new();
        let (got, _) = run_l1(
            &mut b,
            &mut l1,
            Clock::from_mhz(cfg.clocks.core_mhz).cycles(40),
            &mut shadow,
        );
        assert_each_answered_once(&asked, &got);
        assert!(l1.idle(), "seed {seed}: L1 idle after the drain");
        b.assert_pools_empty();
    }
}

#[test]
fn l1_loads_see_the_latest_store_it_received_before_them() {
    // Loads, bypass loads, stores, L2 atomics and invalidations: per-location coherence for one SM,
    // through hits, misses, MSHR merges, overlays of stores on outstanding fills, evictions,
    // invalidation epochs and lines dropped for L2 atomics. (Atomics performed in the L1 wait for
    // their fill and so take effect after stores received later: not in receive order.)
    for seed in 0..24 {
        let mut cfg = tiny();
        cfg.l1.mshrs = 1 + (seed as u32 % 3) * 4;
        if seed % 2 == 0 {
            cfg.l1.write_policy = crate::config::L1WritePolicy::WriteThroughAllocate;
        }
        let mut b = Bench::new(&cfg, 48, 100 + seed);
        let mut l1 = L1::new(0, &cfg, true);
        let asked = l1_stream(&mut b, 800, 48, 4000, false);
        let mut shadow = HashMap::new();
        let (got, expected) = run_l1(
            &mut b,
            &mut l1,
            Clock::from_mhz(cfg.clocks.core_mhz).cycles(30),
            &mut shadow,
        );
        assert_each_answered_once(&asked, &got);
        for g in &got {
            match g {
                Got::Load { op, data, .. } => {
                    let (mask, want) = &expected.loads[op];
                    assert!(
                        masked_eq(data, want, *mask),
                        "seed {seed}: load {op} returned a value other than the latest store before it"
                    );
                }
                Got::Atomic { op, results } => {
                    assert_eq!(
                        results, &expected.atomics[op],
                        "seed {seed}: atomic {op} old values"
                    )
                }
                _ => {}
            }
        }
        for (line, bytes) in &shadow {
            assert_eq!(
                &b.line_bytes(*line),
                bytes,
                "seed {seed}: write-through reached L2"
            );
        }
        b.assert_pools_empty();
    }
}

#[test]
fn l1_full_mshrs_stall_requests_and_resume() {
    let finish = |mshrs: u32| {
        let mut cfg = tiny();
        cfg.l1.mshrs = mshrs;
        let mut b = Bench::new(&cfg, 16, 3);
        let mut l1 = L1::new(0, &cfg, true);
        let asked: Vec<Asked> = (0..8)
            .map(|i| Asked::Load {
                op: i,
                line: line_addr(i as u64),
                mask: byte_mask(0, 4),
            })
            .collect();
        for a in &asked {
            ask_l1(&mut b, 0, *a, Level::Sm);
        }
        let (got, _) = run_l1(
            &mut b,
            &mut l1,
            Clock::from_mhz(cfg.clocks.core_mhz).cycles(100),
            &mut HashMap::new(),
        );
        assert_each_answered_once(&asked, &got);
        assert!(l1.idle());
        b.assert_pools_empty();
        let last = got
            .iter()
            .filter_map(|g| match g {
                Got::Load { at, .. } => Some(*at),
                _ => None,
            })
            .max()
            .unwrap();
        (b.clock.cycle_of(last), l1.stats.mshr_full_ps)
    };
    let (wide, wide_stall) = finish(16);
    let (narrow, narrow_stall) = finish(1);
    assert_eq!(wide_stall, 0, "16 MSHRs hold 8 misses");
    assert!(narrow_stall > 0, "one MSHR: the others wait");
    // With one MSHR the 8 misses go one after another: at least 8 round trips of the fake L2.
    assert!(
        narrow >= 8 * 100 && wide < 2 * 100 + 100,
        "narrow {narrow} wide {wide}"
    );
}

#[test]
fn l1_invalidation_serves_fresh_values_and_drops_older_fills() {
    let cfg = tiny();
    let mut b = Bench::new(&cfg, 4, 9);
    let mut l1 = L1::new(0, &cfg, true);
    let x = line_addr(1);
    let mask = byte_mask(8, 4);
    // Requests at `n` cycles after the bench's current time (the queue's clock never goes back).
    let ask = |b: &mut Bench, n: u64, a: Asked| {
        let t = b.q.now() + b.cycle(n);
        ask_l1(b, t, a, Level::Sm)
    };
    let value = |got: &[Got], op: u32| {
        got.iter()
            .find_map(|g| match g {
                Got::Load { op: o, data, .. } if *o == op => {
                    Some(u32::from_le_bytes(data[8..12].try_into().unwrap()))
                }
                _ => None,
            })
            .unwrap()
    };
    let delay = b.cycle(50);
    let old = b.mem.read(x + 8, 4) as u32;
    ask(
        &mut b,
        0,
        Asked::Load {
            op: 0,
            line: x,
            mask,
        },
    );
    let (got, _) = run_l1(&mut b, &mut l1, delay, &mut HashMap::new());
    assert_eq!(value(&got, 0), old);
    // Another SM's store reaches L2 behind this L1's back.
    b.mem.write(x + 8, 4, 0xDEAD_BEEF);
    ask(
        &mut b,
        10,
        Asked::Load {
            op: 1,
            line: x,
            mask,
        },
    );
    let (got, _) = run_l1(&mut b, &mut l1, delay, &mut HashMap::new());
    assert_eq!(
        value(&got, 1),
        old,
        "without an invalidation the L1 serves its stale copy"
    );
    ask(&mut b, 10, Asked::Invalidate);
    ask(
        &mut b,
        11,
        Asked::Load {
            op: 2,
            line: x,
            mask,
        },
    );
    ask(
        &mut b,
        300,
        Asked::Load {
            op: 3,
            line: x,
            mask,
        },
    );
    let (got, _) = run_l1(&mut b, &mut l1, delay, &mut HashMap::new());
    assert_eq!((value(&got, 2), value(&got, 3)), (0xDEAD_BEEF, 0xDEAD_BEEF));
    // A fill issued before an invalidation must not install its older data: load 4 misses and its
    // fill (value 1) is in flight when the invalidation comes; a store then makes L2 hold 2; load 5
    // misses again, and load 6 arrives after load 4's fill returned but before load 5's did.
    b.mem.write(x + 8, 4, 1);
    ask(&mut b, 10, Asked::Invalidate);
    let mut two = [0u8; MAX_LINE];
    two[8] = 2;
    let data = DataId(b.lines.alloc(two));
    ask(
        &mut b,
        11,
        Asked::Load {
            op: 4,
            line: x,
            mask,
        },
    );
    ask(&mut b, 20, Asked::Invalidate);
    ask(
        &mut b,
        60,
        Asked::Store {
            warp: 7,
            line: x,
            mask,
            data,
        },
    );
    ask(
        &mut b,
        120,
        Asked::Load {
            op: 5,
            line: x,
            mask,
        },
    );
    let mut shadow = HashMap::new();
    let long = b.cycle(500);
    let fill4 = b.q.now() + b.cycle(11 + 20 + 11) + long;
    let t6 = (fill4 - b.q.now()) / b.clock.period + 20;
    ask(
        &mut b,
        t6,
        Asked::Load {
            op: 6,
            line: x,
            mask,
        },
    );
    let (got, expected) = run_l1(&mut b, &mut l1, long, &mut shadow);
    assert_eq!(
        value(&got, 4),
        1,
        "the load before the invalidation gets its fill"
    );
    assert_eq!(
        (value(&got, 5), value(&got, 6)),
        (2, 2),
        "loads after it never see the older fill"
    );
    for op in 4..=6 {
        let Some(Got::Load { data, .. }) = got
            .iter()
            .find(|g| matches!(g, Got::Load { op: o, .. } if *o == op))
        else {
            unreachable!()
        };
        assert!(
            masked_eq(data, &expected.loads[&op].1, mask),
            "load {op} matches the receive-order shadow"
        );
    }
    assert!(l1.idle());
    b.assert_pools_empty();
}

// ---- crossbar ------------------------------------------------------------------------------------

#[test]
fn crossbar_full_queue_delays_never_drops_and_paths_stay_fifo() {
    for depth in [1u32, 2, 4, 64] {
        let mut cfg = tiny();
        cfg.interconnect.queue_depth = depth;
        cfg.stress.interconnect_jitter = 30;
        let x = XbarSpec::new(&cfg);
        let mut srcs = vec![SourcePort::new(4); 4];
        let mut sinks = vec![SinkPort::new(4); 4];
        let mut rng = SplitMix64::new(depth as u64);
        // (source, destination, sent, uncontended arrival, delivered)
        let mut sent: Vec<(usize, usize, Time, Time, Time)> = Vec::new();
        for i in 0..300u64 {
            let now = (i / 3) * 1000;
            let (src, dst) = (rng.below(4) as usize, rng.below(4) as usize);
            let tr = srcs[src].send(&x, now, dst, 128, &mut rng);
            let t = sinks[dst].receive(tr, src, now);
            assert!(t > now, "delivered after it was sent");
            sent.push((src, dst, now, tr.arrive, t));
        }
        let messages: u64 = srcs.iter().map(|p| p.stats.messages).sum();
        assert_eq!(messages, 300, "every message counted once");
        for s in 0..4 {
            let mine: Vec<_> = sent.iter().filter(|m| m.0 == s).collect();
            // FIFO per (source, destination) path.
            for d in 0..4 {
                let path: Vec<Time> = mine.iter().filter(|m| m.1 == d).map(|m| m.4).collect();
                assert!(
                    path.windows(2).all(|w| w[0] <= w[1]),
                    "path {s}->{d} reordered"
                );
            }
            // A source has at most `depth` messages in flight (as far as it can tell, i.e. until their
            // uncontended delivery): message k enters the network only when message k - depth has
            // left it, so it arrives at least one latency later.
            let lat = Clock::from_mhz(cfg.clocks.l2_mhz).cycles(cfg.interconnect.latency as u64);
            for k in depth as usize..mine.len() {
                assert!(
                    mine[k].3 >= mine[k - depth as usize].3 + lat,
                    "depth {depth}: message {k} of source {s} overtook the queue limit"
                );
            }
        }
        if depth == 1 {
            let waited: Time = srcs.iter().map(|p| p.stats.backpressure_ps).sum();
            assert!(waited > 0, "a full queue makes senders wait");
        }
    }
}

// ---- L2 slice with DRAM, fake SM in front -----------------------------------------------------------

/// What the fake SM received from the slice: tag → (data of a read, or lane results of an atomic).
#[derive(Debug)]
enum SliceGot {
    Data(LineBuf),
    WriteAck,
    Atomic(Vec<u64>),
}

/// Sends `n` random reads, writes and atomics over `nlines` lines to one slice at random cycles, runs
/// to the end, and checks the answers against a shadow that applies requests in arrival order.
fn slice_round(cfg: &GpuConfig, seed: u64, n: u32, nlines: u64) -> (L2Slice, Dram, Bench) {
    let mut b = Bench::new(cfg, nlines, seed);
    let mut slice = L2Slice::new(0, cfg);
    let mut dram = Dram::partition(cfg, 1);
    for tag in 0..n {
        let n_at = b.rng.below(4 * n as u64);
        let at = b.cycle(n_at);
        let line = line_addr(b.rng.below(nlines));
        let kind = match b.rng.below(10) {
            0..=4 => ReqKind::Read {
                mask: word_mask(&mut b.rng),
            },
            5..=7 => {
                let d = random_line(&mut b.rng);
                ReqKind::Write {
                    mask: word_mask(&mut b.rng),
                    data: DataId(b.lines.alloc(d)),
                }
            }
            _ => {
                let lanes = (0..1 + b.rng.below(4))
                    .map(|l| LaneAtomic {
                        lane: l as u8,
                        addr: line + 4 * b.rng.below(4),
                        operand: b.rng.below(1000),
                        expected: 0,
                        result: 0,
                    })
                    .collect();
                let op = [RmwOp::Add, RmwOp::Max, RmwOp::Exch][b.rng.below(3) as usize];
                ReqKind::Atomic {
                    batch: BatchId(b.batches.alloc(AtomicBatch {
                        op: AtomicOp::Rmw(op),
                        ty: Ty::U32,
                        lanes,
                    })),
                }
            }
        };
        b.q.schedule(
            at,
            Event::SliceIn(
                0,
                MemReq {
                    sm: 0,
                    tag,
                    line,
                    kind,
                },
            ),
        )
        .unwrap();
    }
    // The shadow: device memory as a slice must show it, requests applied in arrival order.
    let mut shadow = GlobalMemory::new(
        &[Buffer {
            name: "m".into(),
            elem: Ty::U32,
            len: nlines * LINE / 4,
            init: Init::Random { seed, modulo: 0 },
            loc: SrcLoc::default(),
        }],
        0,
    );
    let mut want: HashMap<u32, SliceGot> = HashMap::new();
    let mut got: HashMap<u32, Vec<SliceGot>> = HashMap::new();
    while let Some((_, ev)) = {
        b.deliver();
        b.q.pop()
    } {
        match ev {
            Event::SliceIn(_, req) => {
                let w = match req.kind {
                    ReqKind::Read { .. } => {
                        let mut d = [0u8; MAX_LINE];
                        shadow.read_line(req.line, LINE as u32, &mut d);
                        SliceGot::Data(d)
                    }
                    ReqKind::Write { mask, data } => {
                        shadow.write_masked(req.line, b.lines.get(data.0), mask);
                        SliceGot::WriteAck
                    }
                    ReqKind::Atomic { batch } => {
                        let mut copy = b.batches.get(batch.0).clone();
                        perform_batch(&mut copy, &mut shadow);
                        SliceGot::Atomic(copy.lanes.iter().map(|l| l.result).collect())
                    }
                };
                want.insert(req.tag, w);
                slice.receive(req, &mut ctx!(b));
            }
            Event::SliceTick(_) => slice.tick(&mut ctx!(b), &mut dram),
            Event::DramFill(_, line) => slice.fill(line, &mut ctx!(b), &mut dram),
            Event::L1FromXbar(_, resp) => {
                let g = match resp.kind {
                    RespKind::Data(d) => {
                        let bytes = *b.lines.get(d.0);
                        b.lines.release(d.0);
                        SliceGot::Data(bytes)
                    }
                    RespKind::WriteAck => SliceGot::WriteAck,
                    RespKind::AtomicDone(bt) => {
                        let r = b.batches.get(bt.0).lanes.iter().map(|l| l.result).collect();
                        b.batches.release(bt.0);
                        SliceGot::Atomic(r)
                    }
                };
                got.entry(resp.tag).or_default().push(g);
            }
            other => panic!("unexpected event for a slice bench: {other:?}"),
        }
    }
    assert_eq!(got.len(), n as usize, "seed {seed}: every request answered");
    for (tag, answers) in &got {
        assert_eq!(answers.len(), 1, "seed {seed}: request {tag} answered once");
        match (&answers[0], &want[tag]) {
            (SliceGot::Data(a), SliceGot::Data(w)) => {
                assert_eq!(a[..], w[..], "seed {seed}: read {tag} in arrival order")
            }
            (SliceGot::WriteAck, SliceGot::WriteAck) => {}
            (SliceGot::Atomic(a), SliceGot::Atomic(w)) => {
                assert_eq!(a, w, "seed {seed}: atomic {tag} old values")
            }
            (a, w) => panic!("seed {seed}: request {tag} answered {a:?}, expected {w:?}"),
        }
    }
    assert_eq!(
        b.mem.backing, shadow.backing,
        "seed {seed}: final memory equals the shadow"
    );
    assert!(slice.idle(), "seed {seed}: slice idle after the drain");
    b.assert_pools_empty();
    (slice, dram, b)
}

#[test]
fn l2_slice_answers_in_arrival_order_per_line_and_drains() {
    for seed in 0..10 {
        let mut cfg = tiny();
        // A slice of 8 lines (one set of 8 ways) over a 64-line footprint: misses, evictions,
        // dirty write-backs.
        cfg.l2.slices = 1;
        cfg.l2.size_bytes = 8 * LINE;
        cfg.l2.mshrs = 1 + seed as u32 % 4;
        let (slice, dram, _) = slice_round(&cfg, seed, 400, 64);
        assert!(
            slice.stats.writebacks > 0,
            "seed {seed}: evictions wrote back"
        );
        assert_eq!(
            dram.writes, slice.stats.writebacks,
            "every write-back reached DRAM"
        );
        assert_eq!(dram.reads, slice.stats.misses, "every miss read DRAM once");
    }
}

#[test]
fn l2_full_mshrs_stall_the_slice_and_resume() {
    let mut cfg = tiny();
    cfg.l2.slices = 1;
    cfg.l2.mshrs = 1;
    let (slice, _, _) = slice_round(&cfg, 77, 200, 128);
    assert!(
        slice.stats.mshr_stall_ps > 0,
        "misses waited for the one MSHR"
    );
}

// ---- atomic unit ---------------------------------------------------------------------------------

fn batch(addrs: &[u64]) -> AtomicBatch {
    AtomicBatch {
        op: AtomicOp::Rmw(RmwOp::Add),
        ty: Ty::U32,
        lanes: addrs
            .iter()
            .enumerate()
            .map(|(i, &addr)| LaneAtomic {
                lane: i as u8,
                addr,
                operand: 1,
                expected: 0,
                result: 0,
            })
            .collect(),
    }
}

#[test]
fn atomic_unit_serialises_one_address_pipelines_others_and_pushes_back() {
    let cfg = tiny();
    let c = Clock::from_mhz(cfg.clocks.l2_mhz);
    let unit = |depth: u32, combine: bool, per_cycle: u32| {
        let mut spec = cfg.atomics.l2.clone();
        spec.queue_depth = depth;
        spec.ops_per_cycle = per_cycle;
        AtomicUnit::new(c, &spec, combine)
    };
    let lat = c.cycles(cfg.atomics.l2.latency as u64);
    // Eight lanes, four operations per cycle: on eight addresses they pipeline, on one address they
    // serialise at one per cycle.
    let spread: Vec<u64> = (0..8).map(|i| 0x100 + 4 * i).collect();
    let mut u = unit(64, false, 4);
    assert_eq!(u.schedule(0, &batch(&spread)), lat);
    assert_eq!(u.stats.serial_ps, 0);
    let mut u = unit(64, false, 4);
    assert_eq!(u.schedule(0, &batch(&[0x100; 8])), c.cycles(7) + lat);
    // The next operation on that address waits for the eight; one elsewhere does not.
    let same = u.schedule(0, &batch(&[0x100]));
    let other = u.schedule(0, &batch(&[0x200]));
    assert!(same >= c.cycles(8) + lat && u.stats.serial_ps > 0, "{same}");
    assert!(other < same, "{other} {same}");
    // A warp's 32 lanes on one address: one operation when combined, 32 otherwise.
    let lanes = [0x100u64; 32];
    let one = unit(64, true, 1).schedule(0, &batch(&lanes));
    let many = unit(64, false, 1).schedule(0, &batch(&lanes));
    assert_eq!(many - one, c.cycles(31));
    // Queue depth 2: the third operation arriving at once waits for the first to finish.
    let mut u = unit(2, true, 1);
    let first = u.schedule(0, &batch(&[0x100]));
    u.schedule(0, &batch(&[0x200]));
    let third = u.schedule(0, &batch(&[0x300]));
    assert!(
        third >= first + lat && u.stats.queue_ps > 0,
        "{first} {third}"
    );
    // Drained: long after, a new operation starts at once (no state left behind).
    let later = 1_000 * c.period;
    assert_eq!(u.schedule(later, &batch(&[0x100])), later + lat);
}

// ---- store buffer --------------------------------------------------------------------------------

fn sb(entries: u32, placement: SbPlacement, order: DrainOrder) -> StoreBuffer {
    StoreBuffer::new(&StoreBufferSpec {
        entries,
        placement,
        drain_order: order,
        drain_delay: 0,
    })
}

#[test]
fn store_buffer_drains_each_store_once_keeping_per_line_order() {
    for (seed, order) in [
        (1, DrainOrder::Fifo),
        (2, DrainOrder::PerAddress),
        (3, DrainOrder::PerAddress),
    ] {
        let mut rng = SplitMix64::new(seed);
        let mut b = sb(64, SbPlacement::PerSm, order);
        // Program order per warp, and the memory every warp's stores leave behind.
        let mut want: HashMap<u64, LineBuf> = HashMap::new();
        let mut mem: HashMap<u64, LineBuf> = HashMap::new();
        let mut drained = 0;
        for t in 0..400u64 {
            let warp = rng.below(4) as u16;
            // Each warp owns its own lines, so the final memory is defined by per-line order alone.
            let line = line_addr(warp as u64 * 8 + rng.below(3));
            if b.has_room(warp, [line]) && rng.below(3) > 0 {
                let d = random_line(&mut rng);
                let m = word_mask(&mut rng);
                apply(want.entry(line).or_insert([0; MAX_LINE]), &d, m);
                b.insert(t, warp, line, m, &d, t, false);
            } else if let Some(e) = b.pop_ready(t, &mut rng) {
                apply(mem.entry(e.line).or_insert([0; MAX_LINE]), &e.data, e.mask);
                drained += 1;
            }
        }
        while let Some(e) = b.pop_ready(1000, &mut rng) {
            apply(mem.entry(e.line).or_insert([0; MAX_LINE]), &e.data, e.mask);
            drained += 1;
        }
        assert!(b.entries.is_empty(), "drained to empty");
        assert_eq!(b.drained, drained);
        assert_eq!(mem, want, "every store drained once, in order per line");
        // Drained: nothing left to forward, so loads go to memory and see fresh values.
        for &line in want.keys() {
            for w in 0..4 {
                assert!(matches!(b.forward(w, line, u128::MAX), Forward::None));
            }
        }
    }
}

#[test]
fn store_buffer_full_refuses_until_an_entry_drains() {
    for placement in [SbPlacement::PerWarp, SbPlacement::PerSm] {
        let mut rng = SplitMix64::new(5);
        let mut b = sb(4, placement, DrainOrder::Fifo);
        let d = [7u8; MAX_LINE];
        for i in 0..4 {
            assert!(b.has_room(0, [line_addr(i)]));
            b.insert(0, 0, line_addr(i), 1, &d, 0, false);
        }
        assert!(!b.has_room(0, [line_addr(9)]), "{placement:?}: full");
        assert!(
            b.has_room(0, [line_addr(3)]),
            "coalescing into the youngest entry needs no room"
        );
        assert_eq!(
            b.has_room(1, [line_addr(9)]),
            placement == SbPlacement::PerWarp,
            "per-warp capacity is each warp's own"
        );
        let e = b.pop_ready(0, &mut rng).unwrap();
        assert_eq!(e.line, line_addr(0), "FIFO drains the oldest");
        assert!(
            b.has_room(0, [line_addr(9)]),
            "{placement:?}: room again after a drain"
        );
    }
}
