//! The LSU alone, through its interface (issue an access, results back, drain), on the contract
//! harness's bench (`../../../contract`): the bench plays the L1 by popping what the LSU sends, and
//! answers as the L1 would.

use super::super::launch::Program;
use super::super::scoreboard::Dst;
use super::super::stress::WarpStress;
use super::super::warp::{Flow, Warp};
use super::super::Stall;
use super::*;
use crate::config::GpuConfig;
use crate::contract::{ctx, Bench, LINE};
use crate::engine::Clock;
use crate::ir::{LoadOrd, StoreOrd};
use crate::memory::GLOBAL_BASE;
use crate::ordering::{Access, Before, Rule};
use crate::pool::MAX_LINE;
use crate::store_buffer::StoreBuffer;
use crate::tests::{kernel, tiny};

const PLAIN: Rule = Rule {
    before: Before::Nothing,
    acquire: None,
};

/// An LSU of SM 0 of `cfg` with a program that has values, a kernel program, a warp of 32 lanes
/// with 4 registers, and a bench.
fn lsu_of(cfg: &GpuConfig, port: u32) -> (Lsu, Program, Warp, Bench) {
    let clock = Clock::from_mhz(cfg.clocks.core_mhz);
    let lsu = Lsu::new(LsuResources {
        sm: 0,
        clock,
        line_bytes: cfg.l1.line_bytes,
        svm: cfg.system.svm,
        work_group_atomics_at_l1: false,
        warp_stress: WarpStress::default(),
        store_buffer: StoreBuffer::new(&cfg.store_buffer),
        drain_delay: cfg.store_buffer.drain_delay as u64,
        drain_jitter: 0,
        l1_port_depth: port,
        values: true,
    });
    let program = Program::Kernel {
        kernel: kernel(vec![], 4, 0),
        params: vec![],
    };
    let mut w = Warp::new(0, 0, 0, 32, Flow::simt(32, vec![0; 4 * 32]), 4, 0);
    w.live = u32::MAX as u64;
    (lsu, program, w, Bench::new(clock, 8, 1))
}

/// One global access of lanes 0..32 at consecutive 4-byte words from `addr` (one line).
fn access(access: Access, addrs: &[u64; 64], dst: Dst) -> WarpAccess<'_> {
    WarpAccess {
        wi: 0,
        pc: 0,
        mask: u32::MAX as u64,
        addrs,
        stride: Some(4),
        width: 4,
        dst,
        access,
        rule: PLAIN,
        tid0: 0,
    }
}

fn words(addr: u64) -> [u64; 64] {
    let mut a = [0u64; 64];
    for (l, x) in a.iter_mut().enumerate().take(32) {
        *x = addr + 4 * l as u64;
    }
    a
}

const LOAD: Access = Access::Load {
    space: Space::Global,
    ord: LoadOrd::Plain,
    scope: Scope::WorkGroup,
};
const STORE: Access = Access::Store {
    space: Space::Global,
    ord: StoreOrd::Plain,
    scope: Scope::WorkGroup,
};

/// What the LSU sent to the L1 and to itself, in order, until the queue is empty.
fn sent(b: &mut Bench) -> Vec<Event> {
    std::iter::from_fn(|| b.q.pop().map(|(_, e)| e)).collect()
}

#[test]
fn a_load_goes_to_the_l1_and_its_data_completes_it_into_the_warps_register() {
    let cfg = tiny();
    let (mut lsu, program, mut w, mut b) = lsu_of(&cfg, 0);
    let addrs = words(GLOBAL_BASE);
    let a = access(LOAD, &addrs, Dst::Reg(1));
    assert!(lsu.load(&mut w, &program, &a, 4, None, 0, &mut ctx!(b)));
    assert_eq!(w.inflight.loads, 1);
    let evs = sent(&mut b);
    let [Event::L1In(0, L1Req::Load { who, line, .. })] = evs[..] else {
        panic!("one line, one request to the L1: {evs:?}")
    };
    assert_eq!(line, GLOBAL_BASE);
    let Requester::Warp { op, .. } = who else {
        panic!("a warp's request")
    };
    // The L1 answers with the line: lane l reads the word at 4·l.
    let mut data = [0u8; MAX_LINE];
    for l in 0..32 {
        data[4 * l..4 * l + 4].copy_from_slice(&(100 + l as u32).to_le_bytes());
    }
    lsu.load_data(op, line, &data);
    assert!(lsu.part_done(op), "one part: the last");
    let mut races = Vec::new();
    assert!(lsu.complete(op, Some(&mut w), 0, 32, &program, &mut races, &mut ctx!(b)));
    let regs = w.regs_mut();
    assert_eq!(regs[32 + 5], 105, "lane 5's register 1");
    assert_eq!(w.inflight.loads, 0);
    assert!(races.is_empty());
}

#[test]
fn a_load_of_bytes_all_in_the_store_buffer_is_forwarded_and_a_partial_one_waits() {
    let cfg = tiny();
    assert!(cfg.store_buffer.entries > 0, "tiny has a store buffer");
    let (mut lsu, program, mut w, mut b) = lsu_of(&cfg, 0);
    // Lanes 0..16 store into the first half of the line.
    let addrs = words(GLOBAL_BASE);
    let mut half = access(STORE, &addrs, Dst::None);
    half.mask = 0xFFFF;
    let vals: [u64; 64] = std::array::from_fn(|l| 7 + l as u64);
    assert!(lsu.store(&mut w, &half, &vals, 0, &mut ctx!(b)));
    assert_eq!(w.inflight.buffered, 1, "buffered, not sent");
    // A load of the same half: forwarded, answered by the LSU itself a cycle later.
    let mut load = access(LOAD, &addrs, Dst::Reg(2));
    load.mask = 0xFFFF;
    assert!(lsu.load(&mut w, &program, &load, 4, None, 0, &mut ctx!(b)));
    assert_eq!(lsu.stats.forwarded_loads, 1);
    let evs = sent(&mut b);
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::SmIn(0, CoreResp::LoadData { .. }))),
        "forwarded: {evs:?}"
    );
    assert!(!evs.iter().any(|e| matches!(e, Event::L1In(..))), "{evs:?}");
    // The whole line overlaps the buffered half: it waits for the drain.
    let whole = access(LOAD, &addrs, Dst::Reg(3));
    assert!(!lsu.load(&mut w, &program, &whole, 4, None, 0, &mut ctx!(b)));
    assert_eq!(w.stall(), Stall::StoreBufferOverlap);
}

#[test]
fn the_store_buffer_drains_through_the_port_and_the_ack_moves_the_write_frontier() {
    let cfg = tiny();
    let (mut lsu, _, mut w, mut b) = lsu_of(&cfg, 0);
    let addrs = words(GLOBAL_BASE);
    let a = access(STORE, &addrs, Dst::None);
    assert!(lsu.store(&mut w, &a, &[1; 64], 0, &mut ctx!(b)));
    let mark = lsu.frontier.next();
    let mut warps = vec![Some(w)];
    let mut drained = None;
    while let Some((_, ev)) = b.q.pop() {
        match ev {
            Event::SbDrain(0) => {
                if lsu.drain(&mut warps, &mut ctx!(b)) {
                    lsu.rearm_drain(&mut ctx!(b));
                }
            }
            Event::L1In(0, L1Req::Store { seq, line, .. }) => drained = Some((seq, line)),
            other => panic!("unexpected {other:?}"),
        }
    }
    let (seq, line) = drained.expect("the entry left for the L1");
    assert_eq!(line, GLOBAL_BASE);
    let w = warps[0].as_mut().unwrap();
    assert_eq!(
        (w.inflight.buffered, w.inflight.to_l1, w.inflight.to_l2),
        (0, 1, 1)
    );
    assert!(!lsu.frontier.reached(mark + 1));
    lsu.store_accepted(Some(w));
    lsu.store_acked(seq, Some(w));
    assert!(
        lsu.frontier.reached(mark + 1),
        "the acknowledged write passed the frontier"
    );
    assert!(w.inflight.quiet());
}

#[test]
fn a_full_l1_port_stalls_the_warp_until_the_l1_takes_a_request() {
    let cfg = tiny();
    let (mut lsu, program, mut w, mut b) = lsu_of(&cfg, 1);
    let (x, y) = (words(GLOBAL_BASE), words(GLOBAL_BASE + LINE));
    assert!(lsu.load(
        &mut w,
        &program,
        &access(LOAD, &x, Dst::Reg(1)),
        4,
        None,
        0,
        &mut ctx!(b)
    ));
    // The first request is in flight: a second does not fit a port of one.
    let second = access(LOAD, &y, Dst::Reg(2));
    assert!(!lsu.load(&mut w, &program, &second, 4, None, 0, &mut ctx!(b)));
    assert_eq!(w.stall(), Stall::L1PortFull);
    assert!(lsu.stats.l1_port_stall_ps > 0);
    // Delivered and taken by the L1 (nothing queued there): room again, the warp is woken.
    lsu.l1.delivered();
    lsu.l1.queued(0);
    assert!(lsu.l1.take_refused());
    assert!(lsu.load(&mut w, &program, &second, 4, None, 0, &mut ctx!(b)));
    assert_eq!(w.inflight.loads, 2);
}

#[test]
fn an_unbounded_port_sends_every_line_of_a_scattered_load_at_once() {
    let cfg = tiny();
    let (mut lsu, program, mut w, mut b) = lsu_of(&cfg, 0);
    // Each lane in its own line.
    let mut addrs = [0u64; 64];
    for (l, a) in addrs.iter_mut().enumerate().take(32) {
        *a = GLOBAL_BASE + LINE * (l as u64 % 8);
    }
    let mut a = access(LOAD, &addrs, Dst::Reg(1));
    a.stride = None;
    assert!(lsu.load(&mut w, &program, &a, 4, None, 0, &mut ctx!(b)));
    let n = sent(&mut b)
        .iter()
        .filter(|e| matches!(e, Event::L1In(0, L1Req::Load { .. })))
        .count();
    assert_eq!(n, 8, "one request per line");
}

#[test]
fn an_atomic_waits_for_its_warps_buffered_store_to_the_line() {
    let cfg = tiny();
    let (mut lsu, program, mut w, mut b) = lsu_of(&cfg, 0);
    let addrs = words(GLOBAL_BASE);
    assert!(lsu.store(
        &mut w,
        &access(STORE, &addrs, Dst::None),
        &[0; 64],
        0,
        &mut ctx!(b)
    ));
    let rmw = Access::Rmw {
        space: Space::Global,
        ord: crate::ir::RmwOrd::Relaxed,
        scope: Scope::Device,
    };
    let a = access(rmw, &addrs, Dst::None);
    let site = lsu.rmw_site(Space::Global, Scope::Device);
    let lanes = (0..32)
        .map(|l| crate::atomic::LaneAtomic {
            lane: l,
            addr: addrs[l as usize],
            operand: 1,
            expected: 0,
            result: 0,
        })
        .collect();
    let op = crate::ir::AtomicOp::Rmw(crate::ir::RmwOp::Add);
    let ty = crate::ir::Ty::U32;
    assert!(!lsu.atomic(
        &mut w,
        &program,
        &a,
        lanes,
        op,
        ty,
        site,
        None,
        0,
        &mut ctx!(b)
    ));
    assert_eq!(w.stall(), Stall::OwnBufferedStore);
}
