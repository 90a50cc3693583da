//! Simulation domains: the fixed parts of the machine that simulate independently between barriers.
//!
//! - an SM domain: one SM (warps, schedulers, store buffer, shared memory, stress warps) with its L1
//!   and the receiving port of its crossbar responses;
//! - a partition domain: the consecutive L2 slices of one memory partition (`l2.partitions`), the DRAM
//!   channels behind them, the values of the lines they own, and the receiving ports of their
//!   requests.
//!
//! Each domain has its own event queue, payload pools, random stream and crossbar outbox; its parts
//! talk to other domains only by crossbar messages, which take at least the crossbar's lookahead to
//! arrive (`XbarSpec::min_transit`), and by the credits a slice gives back for its input
//! (`l2.input_depth`, `credit.rs`), which take at least as long (`XbarSpec::credit_return`). So
//! within a window shorter than the lookahead, no domain can receive anything another domain sends
//! in the same window: domains run the window independently, in any order or in parallel, and the
//! barrier delivers what they sent (see `gpu/`). The domains do not depend on the number of threads,
//! so neither do the results.

use super::atomic::AtomicBatch;
use super::ctx::Ctx;
use super::dram::Dram;
use super::l1::L1;
use super::l2::L2Slice;
use super::memory::GlobalMemory;
use super::msg::Event;
use super::outbox::{Inbox, Mail, Outbox};
use super::pool::{LineBuf, Pool};
use super::provenance::Provenance;
use super::sm::{Sm, SmNotices};
use super::timeline::Recorder;
use super::xbar::SinkPort;
use crate::engine::{EventQueue, PastEvent, Time};
use crate::rng::SplitMix64;

/// An SM with its L1.
pub struct SmDomain {
    pub sm: Sm,
    pub l1: L1,
    pub q: EventQueue<Event>,
    pub lines: Pool<LineBuf>,
    pub batches: Pool<AtomicBatch>,
    /// Bounds of the buffers (no values: an SM reads values through its L1).
    pub mem: GlobalMemory,
    pub out: Outbox,
    pub rng: SplitMix64,
    /// The receiving side of this SM's response port.
    pub sink: SinkPort,
    /// Crossbar messages for this domain, listed here at the barrier and received by
    /// [`SmDomain::receive_mail`] in (arrival, sending domain, order sent) order.
    pub inbox: Inbox,
    /// What the SM reported during the window, with when: finished groups, exits, errors.
    pub notices: Vec<(Time, SmNotices)>,
    /// Events counted by the SM that can happen only finitely often (lanes exited, traced
    /// instructions issued): progress for the watchdog (`watchdog.rs`).
    pub progress: u64,
    /// The SM reported an error: it simulates no further.
    pub halted: bool,
    /// Work-items and warps of each group of the running launch, and the start skew of its warps.
    pub group_threads: u32,
    pub group_warps: u32,
    pub start_skew: u32,
    /// Access provenance, when recorded (`RunOptions::provenance`).
    pub prov: Option<Box<Provenance>>,
    /// `--timeline`: this domain's recorder (`timeline/`); `None` when not recording.
    pub rec: Option<Box<Recorder>>,
}

/// The slices of one memory partition and the DRAM behind them.
pub struct PartDomain {
    /// Id of the first slice; the others follow.
    pub first: u16,
    pub slices: Vec<L2Slice>,
    pub dram: Dram,
    pub q: EventQueue<Event>,
    pub lines: Pool<LineBuf>,
    pub batches: Pool<AtomicBatch>,
    /// The values of the lines these slices own.
    pub mem: GlobalMemory,
    pub out: Outbox,
    pub rng: SplitMix64,
    /// The receiving side of each slice's request port.
    pub sinks: Vec<SinkPort>,
    /// Crossbar messages for these slices, as in [`SmDomain::inbox`].
    pub inbox: Inbox,
    /// Access provenance, when recorded.
    pub prov: Option<Box<Provenance>>,
    /// As [`SmDomain::rec`].
    pub rec: Option<Box<Recorder>>,
}

/// A domain with work in the current window.
pub enum Work<'a> {
    Sm(&'a mut SmDomain),
    Part(&'a mut PartDomain),
}

impl Work<'_> {
    pub fn run_until(&mut self, end: Time) {
        match self {
            Work::Sm(d) => d.run_until(end),
            Work::Part(d) => d.run_until(end),
        }
    }

    pub fn receive_mail(&mut self, mail: &Mail, end: Time) -> Result<(), PastEvent> {
        match self {
            Work::Sm(d) => d.receive_mail(mail, end),
            Work::Part(d) => d.receive_mail(mail, end),
        }
    }
}

macro_rules! dctx {
    ($d:expr) => {
        Ctx {
            q: &mut $d.q,
            lines: &mut $d.lines,
            batches: &mut $d.batches,
            mem: &mut $d.mem,
            out: &mut $d.out,
            rng: &mut $d.rng,
            prov: $d.prov.as_deref_mut(),
            rec: $d.rec.as_deref_mut(),
        }
    };
}

/// The wire between an SM's LSU and its L1 (`sm/lsu/port.rs`): after an L1 event — a request
/// `delivered` from the LSU, or a retry or fill that let the L1 take queued ones — the port learns
/// what the L1 has not taken yet, and a sender it refused for want of room is woken. A bounded port
/// only: an unbounded one keeps no count. Whether the SM acted.
#[inline]
fn l1_port(sm: &mut Sm, l1: &L1, delivered: bool, ctx: &mut Ctx) -> bool {
    let port = &mut sm.lsu.l1;
    if !port.bounded() {
        return false;
    }
    if delivered {
        port.delivered();
    }
    port.queued(l1.queued() as u32);
    sm.l1_took(ctx);
    true
}

impl SmDomain {
    /// Time of the next event, if any (none once halted).
    pub fn next(&self) -> Option<Time> {
        if self.halted {
            None
        } else {
            self.q.peek_time()
        }
    }

    /// Processes every event before `end`.
    pub fn run_until(&mut self, end: Time) {
        if self.halted {
            return;
        }
        // One context for the whole run (the SM and L1 are borrowed apart from it).
        let mut ctx = dctx!(self);
        let id = self.sm.id;
        let (sm, l1) = (&mut self.sm, &mut self.l1);
        while let Some((now, ev)) = ctx.q.pop_before(end) {
            let sent = ctx.out.sent.len();
            match ev {
                Event::SmTick(s) | Event::SbDrain(s) | Event::Stress(s) | Event::L1Retry(s) => {
                    debug_assert_eq!(s, id, "event for another SM");
                }
                Event::SmIn(s, _) | Event::L1In(s, _) | Event::L1FromXbar(s, _) => {
                    debug_assert_eq!(s, id, "event for another SM");
                }
                Event::L2Credit(s, _) => debug_assert_eq!(s, id, "event for another SM"),
                Event::Launch(s, _) => debug_assert_eq!(s, id, "launch on another SM"),
                _ => {}
            }
            // Whether the SM handled it (an L1 event reports nothing).
            let sm_event = match ev {
                Event::SmTick(_) => {
                    sm.tick(&mut ctx);
                    true
                }
                Event::SmIn(_, r) => {
                    sm.receive(r, &mut ctx);
                    true
                }
                Event::SbDrain(_) => {
                    sm.drain_event(&mut ctx);
                    true
                }
                Event::Stress(_) => {
                    sm.stress_tick(&mut ctx);
                    true
                }
                Event::L1In(_, r) => {
                    l1.receive(r, &mut ctx);
                    l1_port(sm, l1, true, &mut ctx)
                }
                Event::L1Retry(_) => {
                    l1.retry(&mut ctx);
                    l1_port(sm, l1, false, &mut ctx)
                }
                Event::L1FromXbar(_, r) => {
                    l1.from_xbar(r, &mut ctx);
                    l1_port(sm, l1, false, &mut ctx)
                }
                Event::L2Credit(_, slice) => {
                    // A waiting request leaves for the slice, and the L1 may take queued ones.
                    l1.credit_returned(slice, &mut ctx);
                    l1_port(sm, l1, false, &mut ctx)
                }
                Event::Launch(_, group) => {
                    let (skew, warps) = (self.start_skew, self.group_warps);
                    // Each warp's skew, drawn in warp order before the launch.
                    let mut skews: Vec<u64> =
                        (0..warps).map(|_| ctx.rng.upto(skew) as u64).collect();
                    skews.reverse();
                    sm.launch(
                        group,
                        self.group_threads,
                        now,
                        || skews.pop().unwrap_or(0),
                        &mut ctx,
                    );
                    true
                }
                Event::SliceIn(..)
                | Event::SliceTick(_)
                | Event::DramFill(..)
                | Event::DramBank(..) => {
                    unreachable!("a partition's event in an SM domain")
                }
            };
            if let Some(r) = ctx.rec.as_deref_mut() {
                r.sm_event(now, &ev, &ctx.out.sent[sent..]);
            }
            if sm_event {
                // What the SM reported moves into the window's notices.
                let n = &mut sm.notices;
                self.progress += std::mem::take(&mut n.progress);
                if n.error.is_some()
                    || !n.groups_done.is_empty()
                    || !n.exits.is_empty()
                    || !n.races.is_empty()
                {
                    self.halted = n.error.is_some();
                    self.notices.push((now, std::mem::take(n)));
                    if self.halted {
                        break;
                    }
                }
            }
        }
    }

    /// Receives the window's crossbar messages listed in the inbox (the barrier's delivery, see
    /// `gpu/`; `mail`: every domain's outbox): each port decides its contention in delivery
    /// order; `end` is the window's end.
    pub fn receive_mail(&mut self, mail: &Mail, end: Time) -> Result<(), PastEvent> {
        let (l1, sink, rec, lines, batches, q) = (
            &self.l1,
            &mut self.sink,
            &mut self.rec,
            &mut self.lines,
            &mut self.batches,
            &mut self.q,
        );
        self.inbox.deliver(mail, |o, batch| {
            if let Event::L1FromXbar(_, resp) = &o.event {
                // The L1 takes the response in a later window.
                l1.prefetch_response(resp);
            }
            let t = sink.receive(o.transit, o.src as usize, end);
            if let (Some(r), Event::L1FromXbar(_, resp)) = (rec.as_deref_mut(), &o.event) {
                r.response_accepted(resp.tag, o.transit.arrive, t);
            }
            q.schedule(t, o.receive(batch, lines, batches))
        })
    }
}

impl PartDomain {
    pub fn next(&self) -> Option<Time> {
        self.q.peek_time()
    }

    /// As [`SmDomain::receive_mail`], each request at its slice's port.
    pub fn receive_mail(&mut self, mail: &Mail, end: Time) -> Result<(), PastEvent> {
        let (first, slices, sinks, rec, lines, batches, q) = (
            self.first,
            &self.slices,
            &mut self.sinks,
            &mut self.rec,
            &mut self.lines,
            &mut self.batches,
            &mut self.q,
        );
        self.inbox.deliver(mail, |o, batch| {
            let Event::SliceIn(slice, req) = o.event else {
                unreachable!("a partition receives requests")
            };
            // The slice looks the line up when it serves the request, in a later window.
            slices[(slice - first) as usize].prefetch(req.line);
            let t = sinks[(slice - first) as usize].receive(o.transit, o.src as usize, end);
            if let (Some(r), Event::SliceIn(_, req)) = (rec.as_deref_mut(), &o.event) {
                r.request_accepted(req.sm, req.tag, slice, o.transit.arrive, t);
            }
            q.schedule(t, o.receive(batch, lines, batches))
        })
    }

    /// Processes every event before `end`.
    pub fn run_until(&mut self, end: Time) {
        // One context for the whole run (the slices and DRAM are borrowed apart from it).
        let mut ctx = dctx!(self);
        let (slices, dram, first) = (&mut self.slices, &mut self.dram, self.first);
        while let Some((_, ev)) = ctx.q.pop_before(end) {
            match ev {
                Event::SliceIn(i, r) => slices[(i - first) as usize].receive(r, &mut ctx),
                Event::SliceTick(i) => slices[(i - first) as usize].tick(&mut ctx, dram),
                Event::DramFill(i, line) => slices[(i - first) as usize].fill(line, &mut ctx, dram),
                Event::DramBank(ch, bank) => dram.bank_ready(ch, bank, &mut ctx),
                _ => unreachable!("an SM's event in a partition domain"),
            }
        }
    }
}
