//! An L2 slice (with the DRAM behind it) under the contract, a fake SM in front. A request is a read,
//! a write, an atomic batch or a membar token over a footprint eight times the slice, so that lines miss, merge into
//! MSHRs, evict and write back; its answer is the response the fake SM receives. The shadow applies
//! requests to device memory in the order they arrive at the slice: the point of coherence serves one
//! line's accesses in arrival order (per-location coherence), so every read and every atomic's old
//! values, and the final memory, must equal it. Backpressure: one MSHR stalls the slice's input.
//! Flush: a host copy drops lines from the slice (`drop_range`) at random points; answers still follow
//! the shadow, and a dropped line is read from DRAM again.

use super::{
    check, ctx, line_addr, memory, random_line, word_mask, Bench, Part, Round, Traffic, LINE,
};
use crate::atomic::{perform_batch, AtomicBatch, LaneAtomic};
use crate::build;
use crate::config::GpuConfig;
use crate::engine::Clock;
use crate::ir::{AtomicOp, RmwOp, Ty};
use crate::msg::*;
use crate::pool::{LineBuf, MAX_LINE};
use crate::tests::tiny;
use std::collections::HashMap;

/// What the fake SM received: the data of a read, a write's acknowledgement, an atomic's old values.
#[derive(Debug, PartialEq)]
enum Answer {
    Data(LineBuf),
    WriteAck,
    Atomic(Vec<u64>),
    MembarAck,
}

struct L2SlicePart;

/// A slice of 8 lines (one set of 8 ways) in front of `cfg`'s DRAM, `mshrs` MSHRs.
fn small_slice(cfg: &GpuConfig, mshrs: u32) -> GpuConfig {
    let mut cfg = cfg.clone();
    cfg.l2.slices = 1;
    cfg.l2.partitions = 1;
    cfg.l2.size_bytes = 8 * LINE;
    cfg.l2.mshrs = mshrs;
    cfg
}

impl Part for L2SlicePart {
    const NAME: &'static str = "L2 slice";

    fn round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round {
        let cfg = small_slice(
            cfg,
            if traffic.tight {
                1
            } else {
                1 + seed as u32 % 4
            },
        );
        slice_round(&cfg, seed, traffic).0
    }
}

/// Runs one round; returns it with the slice's write-backs, misses and the DRAM's reads and writes.
fn slice_round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> (Round, [u64; 4]) {
    let nlines = 64;
    let n = traffic.requests;
    let mut b = Bench::new(Clock::from_mhz(cfg.clocks.core_mhz), nlines, seed);
    let mut slice = build::slice(cfg, 0);
    let mut dram = build::dram(cfg);
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
            _ if b.rng.below(4) == 0 => ReqKind::Membar,
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
                let batch = AtomicBatch {
                    op: AtomicOp::Rmw(op),
                    ty: Ty::U32,
                    lanes,
                };
                ReqKind::Atomic {
                    batch: BatchId(b.batches.alloc(batch)),
                }
            }
        };
        let req = MemReq {
            sm: 0,
            tag,
            line,
            kind,
            near: false,
        };
        b.q.schedule(at, Event::SliceIn(0, req)).unwrap();
    }
    // The shadow: device memory as the slice must show it, requests applied in arrival order.
    let mut shadow = memory(nlines, seed);
    let mut want: HashMap<u32, Answer> = HashMap::new();
    let mut round = Round {
        answers: vec![0; n as usize],
        ..Round::default()
    };
    while let Some((_, ev)) = {
        b.deliver();
        b.q.pop()
    } {
        if traffic.flush && b.rng.below(50) == 0 {
            let line = line_addr(b.rng.below(nlines));
            slice.drop_range(line, line + LINE);
        }
        match ev {
            Event::SliceIn(_, req) => {
                let w = match req.kind {
                    ReqKind::Read { .. } => {
                        let mut d = [0u8; MAX_LINE];
                        shadow.read_line(req.line, LINE as u32, &mut d);
                        Answer::Data(d)
                    }
                    ReqKind::Write { mask, data } => {
                        shadow.write_masked(req.line, b.lines.get(data.0), mask);
                        Answer::WriteAck
                    }
                    ReqKind::Atomic { batch } => {
                        let mut copy = b.batches.get(batch.0).clone();
                        perform_batch(&mut copy, &mut shadow);
                        Answer::Atomic(copy.lanes.iter().map(|l| l.result).collect())
                    }
                    ReqKind::Membar => Answer::MembarAck,
                };
                want.insert(req.tag, w);
                slice.receive(req, &mut ctx!(b));
            }
            Event::SliceTick(_) => slice.tick(&mut ctx!(b), &mut dram),
            Event::DramFill(_, line) => slice.fill(line, &mut ctx!(b), &mut dram),
            Event::L1FromXbar(_, resp) => {
                let got = match resp.kind {
                    RespKind::Data(d) => {
                        let bytes = *b.lines.get(d.0);
                        b.lines.release(d.0);
                        Answer::Data(bytes)
                    }
                    RespKind::WriteAck => Answer::WriteAck,
                    RespKind::AtomicDone(bt) => {
                        let r = b.batches.get(bt.0).lanes.iter().map(|l| l.result).collect();
                        b.batches.release(bt.0);
                        Answer::Atomic(r)
                    }
                    RespKind::MembarAck => Answer::MembarAck,
                };
                round.answers[resp.tag as usize] += 1;
                if want.get(&resp.tag) != Some(&got) {
                    round.wrong.push(format!(
                        "seed {seed}: request {} answered {got:?}, arrival order says {:?}",
                        resp.tag,
                        want.get(&resp.tag)
                    ));
                }
            }
            other => panic!("unexpected event for a slice bench: {other:?}"),
        }
    }
    if b.mem.backing != shadow.backing {
        round
            .wrong
            .push(format!("seed {seed}: final memory differs from the shadow"));
    }
    round.waited = slice.stats.mshr_stall_ps;
    round.idle = slice.idle() && b.pools_empty();
    // Fresh after a drop: the whole footprint leaves the slice, and a read of it misses again.
    slice.drop_range(line_addr(0), line_addr(nlines));
    let misses = slice.stats.misses;
    let at = b.q.now() + b.cycle(10);
    let req = MemReq {
        sm: 0,
        tag: n,
        line: line_addr(3),
        kind: ReqKind::Read { mask: u128::MAX },
        near: false,
    };
    b.q.schedule(at, Event::SliceIn(0, req)).unwrap();
    while let Some((_, ev)) = {
        b.deliver();
        b.q.pop()
    } {
        match ev {
            Event::SliceIn(_, req) => slice.receive(req, &mut ctx!(b)),
            Event::SliceTick(_) => slice.tick(&mut ctx!(b), &mut dram),
            Event::DramFill(_, line) => slice.fill(line, &mut ctx!(b), &mut dram),
            Event::L1FromXbar(_, resp) => {
                if let RespKind::Data(d) = resp.kind {
                    if *b.lines.get(d.0) != b.line_bytes(line_addr(3)) {
                        round
                            .wrong
                            .push("a read after the drop returned stale bytes".into());
                    }
                    b.lines.release(d.0);
                }
            }
            other => panic!("unexpected event for a slice bench: {other:?}"),
        }
    }
    if slice.stats.misses != misses + 1 {
        round
            .wrong
            .push("a dropped line was served without a miss".into());
    }
    let counts = [
        slice.stats.writebacks,
        slice.stats.misses,
        dram.reads,
        dram.writes,
    ];
    (round, counts)
}

#[test]
fn l2_slice_meets_the_contract() {
    check::<L2SlicePart>(&tiny());
}

#[test]
fn l2_slice_writes_back_dirty_evictions_and_reads_each_miss_once() {
    for seed in 0..6 {
        let cfg = small_slice(&tiny(), 1 + seed as u32 % 4);
        let traffic = Traffic {
            requests: 400,
            tight: false,
            flush: false,
        };
        let (_, [writebacks, misses, reads, writes]) = slice_round(&cfg, seed, traffic);
        assert!(writebacks > 0, "seed {seed}: evictions wrote back");
        assert_eq!(writes, writebacks, "every write-back reached DRAM");
        assert_eq!(reads, misses, "every miss read DRAM once");
    }
}

#[test]
fn l2_slice_accepts_one_request_per_cycle_also_when_one_arrives_after_the_cycles_tick() {
    let cfg = tiny();
    let mut b = Bench::new(Clock::from_mhz(cfg.clocks.core_mhz), 64, 1);
    let mut slice = build::slice(&cfg, 0);
    let mut dram = build::dram(&cfg);
    let read = |tag, line| MemReq {
        sm: 0,
        tag,
        line,
        kind: ReqKind::Read { mask: 1 },
        near: false,
    };
    let tick = |ev: &Event| matches!(ev, Event::SliceTick(_));
    slice.receive(read(0, line_addr(0)), &mut ctx!(b));
    let t = b.next_time_of(tick).expect("the slice's tick");
    slice.tick(&mut ctx!(b), &mut dram);
    // A second request reaches the slice in the cycle whose tick took the first.
    slice.receive(read(1, line_addr(1)), &mut ctx!(b));
    let next = b.next_time_of(tick).expect("a tick for the second");
    let period = Clock::from_mhz(cfg.clocks.l2_mhz).period;
    assert!(
        next >= t + period,
        "a second acceptance at {next} ps in the cycle at {t} ps"
    );
}
