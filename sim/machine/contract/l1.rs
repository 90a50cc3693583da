//! The L1 under the contract, a fake L2 behind it that serves every request a fixed delay after it
//! arrives, in arrival order. A request is a load (through the array or bypassing it), a store, an
//! atomic performed at L2 or an invalidation; its answers are those its kind promises (a load its
//! data, a store its acceptance and its acknowledgement, an atomic its old values). The shadow is the
//! L1's own per-location coherence: applying the requests in the order the L1 received them, every
//! load returns the latest store it received before it (through hits, misses, MSHR merges, overlays
//! of stores on outstanding fills, evictions), every L2 atomic the old values in that order, and every
//! write reaches L2. Backpressure: one MSHR holds every other miss. Flush: invalidations at random
//! points; loads after one never see older data. A membar is answered once, after every slice has
//! answered its token — so after every store the L1 received before it has reached L2. (Atomics performed in the L1 wait for their fill and
//! so take effect after stores received later: they have their own test, without values.)

use super::{
    apply, check, ctx, line_addr, masked_eq, random_line, word_mask, Bench, Part, Round, Traffic,
    LINE,
};
use crate::atomic::{perform_batch, AtomicBatch, LaneAtomic, ValueStore};
use crate::build;
use crate::config::{GpuConfig, L1WritePolicy};
use crate::engine::{Clock, Time};
use crate::ir::{AtomicOp, RmwOp, Ty};
use crate::l1::L1;
use crate::memory::byte_mask;
use crate::msg::*;
use crate::pool::{LineBuf, MAX_LINE};
use crate::tests::tiny;
use std::collections::HashMap;

/// The op of a warp's request.
fn op_of(r: Requester) -> u32 {
    match r {
        Requester::Warp { op, .. } => op,
        other => panic!("a load or atomic of a warp, not {other:?}"),
    }
}

/// The warp of a write-through.
fn warp_of(r: Requester) -> u16 {
    match r {
        Requester::Drain { warp } | Requester::Warp { warp, .. } => warp,
        Requester::Stress { .. } => panic!("no stress traffic here"),
    }
}

/// What the SM side of an L1 received.
#[derive(Debug)]
enum Got {
    Load {
        op: u32,
        at: Time,
        data: LineBuf,
    },
    Accepted(u16),
    Acked(u16),
    Atomic {
        op: u32,
        results: Vec<u64>,
    },
    /// The membar of `warp` answered; `early`: before every store the L1 received ahead of it had
    /// reached L2.
    Membar {
        warp: u16,
        early: bool,
    },
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
    Membar {
        warp: u16,
    },
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
    // Stores received by the L1 and stores that reached L2, and per membar (by warp) how many
    // stores the L1 had received when it received the membar.
    let (mut stores_in, mut stores_at_l2) = (0u32, 0u32);
    let mut membar_after: HashMap<u16, u32> = HashMap::new();
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
                        expected.insert(op_of(who), (mask, cur));
                    }
                    L1Req::Store {
                        line, mask, data, ..
                    } => {
                        let d = *b.lines.get(data.0);
                        let e = shadow.entry(line).or_insert_with(|| b.line_bytes(line));
                        apply(e, &d, mask);
                        stores_in += 1;
                    }
                    L1Req::Membar { warp, .. } => {
                        membar_after.insert(warp, stores_in);
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
                        atomics.insert(op_of(who), copy.lanes.iter().map(|l| l.result).collect());
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
                        stores_at_l2 += 1;
                        RespKind::WriteAck
                    }
                    ReqKind::Atomic { batch } => {
                        perform_batch(b.batches.get_mut(batch.0), &mut b.mem);
                        RespKind::AtomicDone(batch)
                    }
                    ReqKind::Membar => RespKind::MembarAck,
                };
                b.q.after(
                    l2_delay,
                    Event::L1FromXbar(
                        req.sm,
                        MemResp {
                            tag: req.tag,
                            line: req.line,
                            kind,
                            near: false,
                        },
                    ),
                );
            }
            Event::SmIn(_, r) => got.push(match r {
                CoreResp::LoadData { who, data, .. } => {
                    let d = *b.lines.get(data.0);
                    b.lines.release(data.0);
                    Got::Load {
                        op: op_of(who),
                        at: now,
                        data: d,
                    }
                }
                CoreResp::StoreAccepted { by } => Got::Accepted(warp_of(by)),
                CoreResp::StoreAcked { by, .. } => Got::Acked(warp_of(by)),
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
                        op: op_of(who),
                        results,
                    }
                }
                CoreResp::MembarAcked { warp } => Got::Membar {
                    warp,
                    early: stores_at_l2 < membar_after.get(&warp).copied().unwrap_or(u32::MAX),
                },
                CoreResp::SharedDone { .. }
                | CoreResp::SharedPerform { .. }
                | CoreResp::SharedAtomic { .. } => {
                    panic!("the L1 never answers for the shared memory")
                }
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
        Asked::Membar { warp } => L1Req::Membar {
            warp,
            system: false,
        },
    };
    b.q.schedule(at, Event::L1In(0, req)).unwrap();
}

/// A seeded random stream of loads (L1 and bypass), stores, atomics (at L2, and at L1 if
/// `l1_atomics`) and invalidations over `nlines` lines, at random cycles in `0..span`.
fn l1_stream(
    b: &mut Bench,
    n: u32,
    nlines: u64,
    span: u64,
    l1_atomics: bool,
    invalidations: bool,
) -> Vec<Asked> {
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
        } else if r >= 98 {
            (Asked::Membar { warp: id as u16 }, Level::L2)
        } else if invalidations {
            (Asked::Invalidate, Level::Sm)
        } else {
            (
                Asked::Load {
                    op: id,
                    line,
                    mask: word_mask(&mut b.rng),
                },
                Level::Sm,
            )
        };
        ask_l1(b, at, a, level);
        asked.push(a);
    }
    asked
}

/// Answers per request of `asked`: a load its data, a store its acceptance and acknowledgement (one
/// answer when both came once), an atomic its old values (and at the L1 its write-through's
/// acknowledgement); an invalidation has none and counts as answered. An answer to a request nobody
/// made counts against request 0.
fn answered_once(asked: &[Asked], got: &[Got]) -> Vec<u32> {
    let mut loads: HashMap<u32, u32> = HashMap::new();
    let mut atomics: HashMap<u32, u32> = HashMap::new();
    let mut accepted: HashMap<u16, u32> = HashMap::new();
    let mut acked: HashMap<u16, u32> = HashMap::new();
    let mut membars: HashMap<u16, u32> = HashMap::new();
    for g in got {
        match *g {
            Got::Load { op, .. } => *loads.entry(op).or_default() += 1,
            Got::Atomic { op, .. } => *atomics.entry(op).or_default() += 1,
            Got::Accepted(w) => *accepted.entry(w).or_default() += 1,
            Got::Acked(w) => *acked.entry(w).or_default() += 1,
            Got::Membar { warp, .. } => *membars.entry(warp).or_default() += 1,
        }
    }
    fn once<K: std::hash::Hash + Eq>(m: &HashMap<K, u32>, k: K) -> u32 {
        m.get(&k).copied().unwrap_or(0)
    }
    let mut answers: Vec<u32> = asked
        .iter()
        .map(|a| match *a {
            Asked::Load { op, .. } => once(&loads, op),
            Asked::Store { warp, .. } if once(&accepted, warp) == once(&acked, warp) => {
                once(&acked, warp)
            }
            Asked::Store { .. } => 0,
            Asked::Atomic { op, warp, at_l1 } => match (once(&atomics, op), at_l1) {
                (n, false) => n,
                (n, true) if once(&acked, warp) == n => n,
                _ => 0,
            },
            Asked::Invalidate => 1,
            Asked::Membar { warp } => once(&membars, warp),
        })
        .collect();
    let asked_loads = asked
        .iter()
        .filter(|a| matches!(a, Asked::Load { .. }))
        .count();
    let asked_atomics = asked
        .iter()
        .filter(|a| matches!(a, Asked::Atomic { .. }))
        .count();
    if loads.len() != asked_loads || atomics.len() != asked_atomics {
        answers[0] += 1;
    }
    answers
}

struct L1Part;

/// One round: `n` requests over `nlines` lines within `span` cycles.
fn l1_round(cfg: &GpuConfig, seed: u64, traffic: Traffic, l1_atomics: bool) -> Round {
    let mut cfg = cfg.clone();
    cfg.l1.mshrs = if traffic.tight {
        1
    } else {
        1 + (seed as u32 % 3) * 4
    };
    if seed % 2 == 0 {
        cfg.l1.write_policy = L1WritePolicy::WriteThroughAllocate;
    }
    let nlines = 48;
    let mut b = Bench::new(Clock::from_mhz(cfg.clocks.core_mhz), nlines, 100 + seed);
    let mut l1 = build::l1(&cfg, 0, true);
    let span = 10 * traffic.requests as u64;
    let asked = l1_stream(
        &mut b,
        traffic.requests,
        nlines,
        span,
        l1_atomics,
        traffic.flush,
    );
    let mut shadow = HashMap::new();
    let delay = b.cycle(30);
    let (got, expected) = run_l1(&mut b, &mut l1, delay, &mut shadow);
    let mut round = Round {
        answers: answered_once(&asked, &got),
        waited: l1.stats.mshr_full_ps,
        idle: l1.idle() && b.pools_empty(),
        wrong: Vec::new(),
    };
    if l1_atomics {
        return round;
    }
    for g in &got {
        match g {
            Got::Load { op, data, .. } => {
                let (mask, want) = &expected.loads[op];
                if !masked_eq(data, want, *mask) {
                    round.wrong.push(format!(
                        "seed {seed}: load {op} returned a value other than the latest store before it"
                    ));
                }
            }
            Got::Atomic { op, results } if results != &expected.atomics[op] => {
                round
                    .wrong
                    .push(format!("seed {seed}: atomic {op} old values"));
            }
            Got::Membar { warp, early: true } => round.wrong.push(format!(
                "seed {seed}: membar {warp} answered before the stores received ahead of it reached L2"
            )),
            _ => {}
        }
    }
    for (line, bytes) in &shadow {
        if &b.line_bytes(*line) != bytes {
            round.wrong.push(format!(
                "seed {seed}: the write-through of {line:#x} did not reach L2"
            ));
        }
    }
    round
}

impl Part for L1Part {
    const NAME: &'static str = "L1";

    fn round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round {
        l1_round(cfg, seed, traffic, false)
    }
}

#[test]
fn l1_meets_the_contract() {
    check::<L1Part>(&tiny());
}

#[test]
fn l1_atomics_performed_in_the_l1_are_answered_once_and_written_through() {
    for seed in 0..6 {
        let traffic = Traffic {
            requests: 600,
            tight: seed % 3 == 0,
            flush: true,
        };
        let r = l1_round(&tiny(), seed, traffic, true);
        assert!(
            r.answers.iter().all(|&n| n == 1),
            "seed {seed}: {:?}",
            r.answers
        );
        assert!(r.idle, "seed {seed}: L1 idle after the drain");
    }
}

#[test]
fn l1_full_mshrs_stall_requests_and_resume() {
    let finish = |mshrs: u32| {
        let mut cfg = tiny();
        cfg.l1.mshrs = mshrs;
        let mut b = Bench::new(Clock::from_mhz(cfg.clocks.core_mhz), 16, 3);
        let mut l1 = build::l1(&cfg, 0, true);
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
        assert!(answered_once(&asked, &got).iter().all(|&n| n == 1));
        assert!(l1.idle() && b.pools_empty());
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
    let mut b = Bench::new(Clock::from_mhz(cfg.clocks.core_mhz), 4, 9);
    let mut l1 = build::l1(&cfg, 0, true);
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
    assert!(l1.idle() && b.pools_empty());
}
