//! The contract every memory part passes, through one harness (Akita's `memcontrolprotocol` contract
//! and acceptance tests; STYLE.md "Tests"). Each part is driven alone through its interface by an
//! adapter (one file per part) that plays its neighbours and keeps a shadow of what the part must
//! answer; [`check`] runs the same three clauses on every part:
//!
//! - **drain**: every request is answered exactly once — nothing lost, nothing duplicated — every
//!   answer agrees with the shadow, and afterwards the part is idle and its payload pools hold no live
//!   line buffer or atomic batch;
//! - **backpressure**: with its capacity at the minimum (one MSHR, a queue of one), requests wait and
//!   are never dropped: the part reports time spent waiting and still answers everything;
//! - **flush**: the part's way of giving up what it holds — the L1 invalidates every line, the store
//!   buffer drains every entry, the L2 slice drops the lines a host copy overwrote, the atomic unit
//!   and DRAM go idle — leaves nothing stale: answers after it still agree with the shadow, and a part
//!   that went idle serves a new request without waiting for old traffic.
//!
//! "Reset" is construction: no part keeps state across runs. Parts: store buffer
//! (`store_buffer.rs`), L1 with a fake L2 behind it (`l1/`), L2 slice with DRAM and a fake SM in
//! front (`l2_slice.rs`), atomic unit (`atomic_unit.rs`), DRAM (`dram.rs`). Part-specific behaviour
//! (an L1's invalidation epochs, a slice's write-backs, ...) is tested beside each adapter; the
//! hierarchy as a whole against a shadow memory in `../traffic_tests.rs`.

mod atomic_unit;
mod dram;
mod l1;
mod l2_slice;
mod store_buffer;

use super::atomic::AtomicBatch;
use super::memory::{byte_mask, GlobalMemory, GLOBAL_BASE};
use super::msg::Event;
use super::outbox::Outbox;
use super::pool::{LineBuf, Pool, MAX_LINE};
use super::xbar::SinkPort;
use crate::config::GpuConfig;
use crate::engine::{Clock, EventQueue, Time};
use crate::ir::{SrcLoc, Ty};
use crate::rng::SplitMix64;
use crate::workload::{Buffer, Init};
use std::collections::HashMap;

/// How a round of traffic is run.
#[derive(Debug, Clone, Copy)]
pub struct Traffic {
    /// Requests offered.
    pub requests: u32,
    /// The part's capacity at its minimum, so that requests must wait.
    pub tight: bool,
    /// Flushes interleaved with the traffic at seeded random points.
    pub flush: bool,
}

/// What one round showed.
#[derive(Debug, Default)]
pub struct Round {
    /// Answers each request got, by request index (every one must be exactly 1).
    pub answers: Vec<u32>,
    /// Picoseconds requests waited for room.
    pub waited: Time,
    /// The part is idle and no payload is left in the pools.
    pub idle: bool,
    /// Answers that disagree with the shadow, described.
    pub wrong: Vec<String>,
}

impl Round {
    /// The clauses every round must meet.
    fn assert_contract(&self, part: &str, what: &str) {
        assert!(!self.answers.is_empty(), "{part} {what}: no traffic");
        for (i, &n) in self.answers.iter().enumerate() {
            assert_eq!(n, 1, "{part} {what}: request {i} answered {n} times");
        }
        assert!(self.idle, "{part} {what}: not idle after the drain");
        assert!(
            self.wrong.is_empty(),
            "{part} {what}: {} wrong answers, first: {}",
            self.wrong.len(),
            self.wrong[0]
        );
    }
}

/// A memory part under the contract: its adapter runs one seeded round of traffic.
pub trait Part {
    const NAME: &'static str;
    fn round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round;
}

/// Runs the contract's three clauses on part `P` (configs derived from `cfg`).
pub fn check<P: Part>(cfg: &GpuConfig) {
    let plain = |requests| Traffic {
        requests,
        tight: false,
        flush: false,
    };
    for seed in 0..6 {
        P::round(cfg, seed, plain(400)).assert_contract(P::NAME, &format!("drain, seed {seed}"));
    }
    let tight = P::round(
        cfg,
        77,
        Traffic {
            requests: 400,
            tight: true,
            flush: false,
        },
    );
    tight.assert_contract(P::NAME, "backpressure");
    assert!(
        tight.waited > 0,
        "{}: at minimum capacity no request waited",
        P::NAME
    );
    for seed in 0..4 {
        let r = P::round(
            cfg,
            100 + seed,
            Traffic {
                requests: 400,
                tight: false,
                flush: true,
            },
        );
        r.assert_contract(P::NAME, &format!("flush, seed {seed}"));
    }
}

/// The line size of the benches (tiny's).
pub const LINE: u64 = 128;

/// The world around one part: event queue, payload pools, coherent memory, crossbar outbox (with a
/// receiving port per destination), random source.
pub struct Bench {
    pub q: EventQueue<Event>,
    pub lines: Pool<LineBuf>,
    pub batches: Pool<AtomicBatch>,
    pub mem: GlobalMemory,
    pub out: Outbox,
    sinks: HashMap<(u8, u16), SinkPort>,
    pub rng: SplitMix64,
    pub clock: Clock,
}

/// The context a part's handler gets, built from a [`Bench`].
macro_rules! ctx {
    ($b:expr) => {
        crate::ctx::Ctx {
            q: &mut $b.q,
            lines: &mut $b.lines,
            batches: &mut $b.batches,
            mem: &mut $b.mem,
            out: &mut $b.out,
            rng: &mut $b.rng,
            prov: None,
            rec: None,
        }
    };
}
pub(crate) use ctx;

impl Bench {
    /// Memory of `nlines` lines of seeded random values from `GLOBAL_BASE`, in `clock`.
    pub fn new(clock: Clock, nlines: u64, seed: u64) -> Bench {
        Bench {
            q: EventQueue::new(),
            lines: Pool::default(),
            batches: Pool::default(),
            mem: memory(nlines, seed),
            out: Outbox::default(),
            sinks: HashMap::new(),
            rng: SplitMix64::new(seed),
            clock,
        }
    }

    pub fn cycle(&self, n: u64) -> Time {
        self.clock.cycles(n)
    }

    /// Pops events until one that `want` picks; its time (the events before it are dropped).
    pub fn next_time_of(&mut self, want: impl Fn(&Event) -> bool) -> Option<Time> {
        while let Some((t, ev)) = self.q.pop() {
            if want(&ev) {
                return Some(t);
            }
        }
        None
    }

    /// The crossbar's receiving side: every message the part sent enters the queue at its delivery
    /// through its destination's port, its payload back in the bench's pools.
    pub fn deliver(&mut self) {
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

    /// The drain clause's last part: no payload is left alive.
    pub fn pools_empty(&self) -> bool {
        self.lines.live() == 0 && self.batches.live() == 0
    }

    pub fn line_bytes(&self, line: u64) -> LineBuf {
        let mut b = [0u8; MAX_LINE];
        self.mem.read_line(line, LINE as u32, &mut b);
        b
    }
}

/// `nlines` lines of seeded random values from `GLOBAL_BASE`.
pub fn memory(nlines: u64, seed: u64) -> GlobalMemory {
    let buf = Buffer {
        name: "m".into(),
        elem: Ty::U32,
        len: nlines * LINE / 4,
        init: Init::Random { seed, modulo: 0 },
        loc: SrcLoc::default(),
    };
    GlobalMemory::new(&[buf], 0)
}

pub fn line_addr(i: u64) -> u64 {
    GLOBAL_BASE + i * LINE
}

/// A random byte mask of whole 4-byte words within a line.
pub fn word_mask(rng: &mut SplitMix64) -> u128 {
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

pub fn random_line(rng: &mut SplitMix64) -> LineBuf {
    let mut b = [0u8; MAX_LINE];
    for x in b.iter_mut() {
        *x = rng.next_u64() as u8;
    }
    b
}

/// The bytes of `src` selected by `mask` into `dst`.
pub fn apply(dst: &mut LineBuf, src: &LineBuf, mask: u128) {
    for (i, d) in dst.iter_mut().enumerate() {
        if mask & (1u128 << i) != 0 {
            *d = src[i];
        }
    }
}

pub fn masked_eq(a: &LineBuf, b: &LineBuf, mask: u128) -> bool {
    (0..MAX_LINE).all(|i| mask & (1u128 << i) == 0 || a[i] == b[i])
}
