//! The deterministic discrete-event core: integer time in picoseconds, events ordered by
//! (time, insertion sequence), scheduling into the past refused (Akita's event queue, nexosim's priority
//! queue). Parts never call each other: they push typed events into this queue and the machine's loop
//! delivers them. A part with nothing to do schedules nothing and so sleeps until a message wakes it.
//!
//! Clock domains: each part converts its own cycles to picoseconds with its [`Clock`]; times of
//! different domains compare directly.
//!
//! The order of delivery, exactly (each rule has its unit test below, named after it):
//!
//! 1. *Time first.* [`EventQueue::pop`] delivers the pending event of the least time; the clock
//!    ([`EventQueue::now`]) moves to it and never moves back.
//! 2. *Same time, insertion order.* Of events with the same time, the one scheduled first is
//!    delivered first, whoever scheduled it and however it was scheduled ([`EventQueue::schedule`],
//!    [`EventQueue::at`], [`EventQueue::after`]). Nothing else decides: no priority, no kind of
//!    event, no part. An event scheduled for a time the clock has not reached waits in the heap
//!    under (time, sequence number).
//! 3. *Scheduled for now: after what is due now, before anything later.* An event scheduled while the
//!    clock reads its own time (`after(0)`, `at(now)`, `schedule(now)`, e.g. by a handler of an
//!    event of that time) goes to the now-queue, a FIFO, without a heap operation. It is delivered
//!    after every event of that time already pending — those in the heap were all scheduled before
//!    the clock reached the time, and those in the now-queue before it — and before any event of a
//!    later time. So rule 2 holds for it too: a handler's event for now runs in the same instant,
//!    after the others already due then, never before them. (A part that may act once per cycle and
//!    is woken again in that cycle asks for the next edge instead: [`Clock::free_edge_at_or_after`].)
//! 4. *Never the past.* Scheduling before the clock is refused: [`EventQueue::schedule`] returns
//!    [`PastEvent`], [`EventQueue::at`] stops the run (a part's bug, never a silent reorder).
//! 5. *Windows.* [`EventQueue::pop_before`]`(end)` delivers only events of time before `end`; those
//!    at or after it, including events scheduled for now when the clock reads `end` or later, stay
//!    pending in their order. [`EventQueue::peek_time`] is the time the next pop would deliver.
//! 6. *Renumbering keeps the order.* After 2^32 insertions the pending events are renumbered in
//!    their delivery order ([`EventQueue::renumber`]); rules 1-3 are unchanged by it.
//!
//! Between queues (one per simulation domain) the order of same-time events is the machine's: the
//! barrier puts crossbar messages into their receivers' queues in a fixed order (`machine/gpu/`),
//! and rule 2 then applies to them as to any other insertion.
//!
//! Not modelled: nothing here is timing-specific; the queue is generic over the event type.
//!
//! Planned, not built (issue 42, the one allowed same-time order change; nothing below is in force
//! yet, rules 1-6 above are the order today): every event gets an explicit order key
//! `(time, class, part, source, sequence)` in place of `(time, insertion sequence)`, so that what runs
//! first in a cycle no longer depends on who happened to schedule first:
//!
//! - *class*, in this order: (1) arrivals from other domains delivered at the barrier (crossbar
//!   responses to L1s, requests to slices, credits), (2) fills and responses inside a domain (DRAM
//!   fills, L1 → SM responses), (3) per-cycle ticks of a part that acts once per cycle (SM tick,
//!   store-buffer drain, stress warps, slice tick, DRAM bank), (4) launches. Responses before ticks is
//!   the rule today's code reaches by accident in most cycles (a wake-up scheduled by a response goes
//!   to the next free edge: `Clock::free_edge_at_or_after`), made total;
//! - *part*: the SM or slice id, then within it the unit (L1 before SM before store buffer);
//! - *source*: the sending part's id for arrivals (the barrier's fixed order today), the warp slot
//!   or the MSHR for responses;
//! - *sequence*: insertion order, the last resort, only among events of one source.
//!
//! What the key buys: all class-3 events of a part at one edge collapse into one tick (an SM or a
//! slice woken several times in a cycle is ticked once, with no free-edge bookkeeping), a domain can
//! run a whole cycle per SM or slice as one batch, and a calendar queue (one bucket per cycle for
//! the next 256 cycles, the heap only beyond) replaces the binary heap for the near future, which
//! holds nearly every event. The key depends only on inputs and seed, never on threads. The change
//! re-numbers same-time events and so re-baselines the golden outputs once (issue 42, item 2).
//!
//! Speed: the heap orders small keys (time, sequence, slot packed in one `u128`) while the events
//! themselves stay put in a slab whose slots are reused, so a push or pop compares and moves 16 bytes
//! however large the event type is, and a steady-state run allocates nothing. [`prefetch`] is the
//! parts' way to ask the host for state a later event will read (a hint; it changes no value).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Simulated time in picoseconds.
pub type Time = u64;

/// Asks the processor to bring the cache line holding `x` closer (a hint: it has no effect on any
/// value). Parts call it where they know what a later event will read — a request's tag set when
/// the request is delivered, a warp's next traced instruction when it issues — so that the read,
/// often a cache miss on the host for a large simulated machine, finds the line there.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program; the address comes from a
    // live reference, and SSE (which the instruction needs) is part of every x86_64 target.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(x as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// A clock domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Period in picoseconds (at least 1).
    pub period: Time,
}

impl Clock {
    #[inline]
    pub fn from_mhz(mhz: u32) -> Clock {
        Clock {
            period: (1_000_000 / mhz.max(1) as u64).max(1),
        }
    }
    /// Duration of `n` cycles.
    #[inline]
    pub fn cycles(self, n: u64) -> Time {
        n * self.period
    }
    /// The first clock edge at or after `t`.
    #[inline]
    pub fn edge_at_or_after(self, t: Time) -> Time {
        t.div_ceil(self.period) * self.period
    }
    /// The first edge at or after `t` later than `used`, the edge a part that acts once per cycle
    /// last acted on (schedulers, a store buffer's drain, an L2 slice's input): what wakes it in a
    /// cycle it has acted in already waits for the next.
    #[inline]
    pub fn free_edge_at_or_after(self, t: Time, used: Option<Time>) -> Time {
        let e = self.edge_at_or_after(t);
        used.map_or(e, |u| e.max(u + self.period))
    }
    /// Whole cycles elapsed at `t`.
    #[inline]
    pub fn cycle_of(self, t: Time) -> u64 {
        t / self.period
    }
}

/// Heap key of an event, one `u128` so that the heap compares and moves two words: the time in the
/// high 64 bits, then the insertion sequence number (32 bits), then the event's slot in the slab
/// (32 bits). Ordering the keys orders the events by (time, insertion); the slot never decides, as
/// sequence numbers are unique. When the sequence numbers run out, the pending events are
/// renumbered in their order ([`EventQueue::renumber`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

impl Key {
    #[inline]
    fn new(time: Time, seq: u32, slot: u32) -> Key {
        Key((time as u128) << 64 | (seq as u128) << 32 | slot as u128)
    }
    #[inline]
    fn time(self) -> Time {
        (self.0 >> 64) as Time
    }
    #[inline]
    fn slot(self) -> u32 {
        self.0 as u32
    }
}

/// Error for an event scheduled before the current time: a bug in a part, reported, never silently
/// reordered.
#[derive(Debug, thiserror::Error)]
#[error("event scheduled into the past: at {at} ps while the clock reads {now} ps")]
pub struct PastEvent {
    pub at: Time,
    pub now: Time,
}

/// The event queue.
pub struct EventQueue<E> {
    /// Min-heap of the keys.
    heap: BinaryHeap<Reverse<Key>>,
    /// Slots of the events scheduled at the current time while the clock read it, in the order
    /// scheduled: they come after the heap's events of this time (all scheduled before the clock
    /// reached it) and before any later time, which is their (time, insertion) order without a heap
    /// operation.
    now_fifo: VecDeque<u32>,
    /// Events by slot (a free slot keeps its last event, never read again).
    slab: Vec<E>,
    free: Vec<u32>,
    /// The next sequence number; `seq_limit` is the first that does not fit a key.
    seq: u64,
    seq_limit: u64,
    now: Time,
    delivered: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        // A small start (a machine builds one queue per SM and partition, most of which hold a few
        // dozen events): 1,024 reserved 9 MB for an H100 that the host zeroed page by page at start.
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            now_fifo: VecDeque::new(),
            slab: Vec::with_capacity(64),
            free: Vec::new(),
            seq: 0,
            seq_limit: 1 << 32,
            now: 0,
            delivered: 0,
        }
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events delivered so far.
    #[inline]
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() + self.now_fifo.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.now_fifo.is_empty()
    }

    #[inline]
    fn push(&mut self, time: Time, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = event;
                s
            }
            None => {
                self.slab.push(event);
                (self.slab.len() - 1) as u32
            }
        };
        if time == self.now {
            self.now_fifo.push_back(slot);
            return;
        }
        if self.seq >= self.seq_limit {
            self.renumber();
        }
        self.heap
            .push(Reverse(Key::new(time, self.seq as u32, slot)));
        self.seq += 1;
    }

    /// Gives the pending events the sequence numbers `0..n` in their delivery order, so that
    /// numbering goes on (after 2^32 insertions; the order is unchanged).
    fn renumber(&mut self) {
        let mut keys: Vec<Key> = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|r| r.0)
            .collect();
        keys.sort_unstable();
        let n = keys.len();
        self.heap = keys
            .into_iter()
            .enumerate()
            .map(|(i, k)| Reverse(Key::new(k.time(), i as u32, k.slot())))
            .collect();
        self.seq = n as u64;
    }

    /// Schedules `event` at absolute time `at`.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) -> Result<(), PastEvent> {
        if at < self.now {
            return Err(PastEvent { at, now: self.now });
        }
        self.push(at, event);
        Ok(())
    }

    /// Schedules `event` `delay` picoseconds from now (never in the past).
    #[inline]
    pub fn after(&mut self, delay: Time, event: E) {
        self.push(self.now + delay, event);
    }

    /// Schedules `event` at absolute time `at`, which the caller knows is not in the past (a time
    /// computed from now: a clock edge at or after it, a resource free at or after it). Scheduling
    /// into the past is a bug in the part, and stops the run here (STYLE.md: an assertion, never a
    /// silent clamp); [`EventQueue::schedule`] is the checked form for times from outside.
    #[inline]
    #[track_caller]
    pub fn at(&mut self, at: Time, event: E) {
        assert!(
            at >= self.now,
            "event scheduled into the past: at {at} ps while the clock reads {} ps",
            self.now
        );
        self.push(at, event);
    }

    /// Removes the next event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_before(Time::MAX)
    }

    /// Removes the next event if it is due before `end`, and advances the clock to it. Inlined
    /// always: it is the domains' event loops' own step, and the compiler's choice flips with
    /// unrelated changes elsewhere (+2 % instructions when it is a call).
    #[inline(always)]
    pub fn pop_before(&mut self, end: Time) -> Option<(Time, E)> {
        let (time, slot) = match self.heap.peek() {
            Some(Reverse(k)) if k.time() == self.now || self.now_fifo.is_empty() => {
                let k = *k;
                if k.time() >= end {
                    return None;
                }
                self.heap.pop();
                (k.time(), k.slot())
            }
            _ => {
                if self.now >= end {
                    return None;
                }
                (self.now, self.now_fifo.pop_front()?)
            }
        };
        self.now = time;
        self.delivered += 1;
        self.free.push(slot);
        Some((time, self.slab[slot as usize]))
    }

    /// Time of the next event without removing it.
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        if self.now_fifo.is_empty() {
            self.heap.peek().map(|e| e.0.time())
        } else {
            Some(self.now)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(10, "b").unwrap();
        q.schedule(5, "a").unwrap();
        q.schedule(10, "c").unwrap();
        q.schedule(7, "x").unwrap();
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "x", "b", "c"]);
    }

    #[test]
    fn rule_4_never_the_past_scheduling_into_the_past_is_an_error() {
        let mut q = EventQueue::new();
        q.schedule(10, 1).unwrap();
        q.pop();
        let err = q.schedule(9, 2).unwrap_err();
        assert_eq!((err.at, err.now), (9, 10));
        // At the current time is not the past.
        q.at(10, 3);
        assert_eq!(q.pop(), Some((10, 3)));
    }

    #[test]
    #[should_panic(expected = "event scheduled into the past: at 9 ps while the clock reads 10 ps")]
    fn rule_4_never_the_past_an_asserted_time_in_the_past_stops_the_run() {
        let mut q = EventQueue::new();
        q.schedule(10, 1).unwrap();
        q.pop();
        q.at(9, 2);
    }

    #[test]
    fn rule_6_renumbering_keeps_the_order() {
        let mut q = EventQueue::new();
        q.seq_limit = 4;
        let mut expect = Vec::new();
        // Pushes across several renumberings, at times that interleave with earlier ones.
        for i in 0..40u64 {
            q.schedule(100 + (i * 7) % 13, i).unwrap();
            expect.push((100 + (i * 7) % 13, i));
        }
        expect.sort_by_key(|&(t, i)| (t, i));
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn rule_3_scheduled_for_now_after_what_is_due_before_anything_later() {
        let mut q = EventQueue::new();
        q.schedule(10, "first at 10").unwrap();
        q.schedule(20, "at 20").unwrap();
        q.schedule(10, "second at 10").unwrap();
        assert_eq!(q.pop(), Some((10, "first at 10")));
        // Scheduled while the clock reads 10: after the earlier events of time 10, before 20.
        q.after(0, "third at 10");
        q.schedule(10, "fourth at 10").unwrap();
        assert_eq!(q.peek_time(), Some(10));
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (10, "second at 10"),
                (10, "third at 10"),
                (10, "fourth at 10"),
                (20, "at 20")
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn rule_1_time_first() {
        let mut q = EventQueue::new();
        let mut rng = crate::rng::SplitMix64::new(5);
        for i in 0..200u64 {
            q.schedule(rng.upto(1000) as Time, i).unwrap();
        }
        let mut last = 0;
        while let Some((t, _)) = q.pop() {
            assert!(t >= last, "delivered {t} after {last}");
            assert_eq!(q.now(), t, "the clock moves to the event delivered");
            last = t;
        }
        assert_eq!(q.delivered(), 200);
    }

    #[test]
    fn rule_2_same_time_insertion_order_whatever_the_call() {
        let mut q = EventQueue::new();
        q.schedule(3, "first, at 3").unwrap();
        q.schedule(50, "a").unwrap();
        q.at(50, "b");
        q.after(50, "c");
        q.schedule(50, "d").unwrap();
        assert_eq!(q.pop(), Some((3, "first, at 3")));
        // At 3 now: `after(47)` is the same time, 50, scheduled last.
        q.after(47, "e");
        q.at(50, "f");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn rule_3_a_handlers_event_for_now_runs_in_the_same_instant_after_the_others() {
        // Handlers that, at time 10, schedule a follow-up for now: each follow-up runs after every
        // event already due at 10, in the order scheduled, and before the event at 11.
        let mut q = EventQueue::new();
        for e in ["x", "y", "z"] {
            q.schedule(10, e).unwrap();
        }
        q.schedule(11, "later").unwrap();
        let mut order = Vec::new();
        while let Some((t, e)) = q.pop() {
            order.push((t, e));
            match e {
                "x" => q.after(0, "x's follow-up"),
                "y" => q.at(10, "y's follow-up"),
                "x's follow-up" => q.schedule(10, "its follow-up").unwrap(),
                _ => {}
            }
        }
        assert_eq!(
            order,
            vec![
                (10, "x"),
                (10, "y"),
                (10, "z"),
                (10, "x's follow-up"),
                (10, "y's follow-up"),
                (10, "its follow-up"),
                (11, "later")
            ]
        );
    }

    #[test]
    fn rule_3_events_for_time_zero_before_any_pop_are_in_insertion_order() {
        // At the start the clock reads 0: events for 0 go to the now-queue, later ones to the heap.
        let mut q = EventQueue::new();
        q.schedule(5, "at 5").unwrap();
        q.schedule(0, "first at 0").unwrap();
        q.after(0, "second at 0");
        assert_eq!(q.peek_time(), Some(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["first at 0", "second at 0", "at 5"]);
    }

    #[test]
    fn rule_5_windows_deliver_only_before_their_end() {
        let mut q = EventQueue::new();
        q.schedule(10, "at 10").unwrap();
        q.schedule(20, "at 20").unwrap();
        assert_eq!(q.pop_before(10), None, "an event at the window's end stays");
        assert_eq!(q.pop_before(11), Some((10, "at 10")));
        // Scheduled for now (10): stays pending when the window ends at 10 or before.
        q.after(0, "now, at 10");
        assert_eq!(q.pop_before(10), None);
        assert_eq!(q.peek_time(), Some(10));
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop_before(15), Some((10, "now, at 10")));
        assert_eq!(q.pop_before(15), None);
        assert_eq!(q.peek_time(), Some(20));
        assert_eq!(q.pop_before(Time::MAX), Some((20, "at 20")));
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn clock_edges() {
        let c = Clock::from_mhz(1000);
        assert_eq!(c.period, 1000);
        assert_eq!(c.edge_at_or_after(1), 1000);
        assert_eq!(c.edge_at_or_after(2000), 2000);
        // Once per cycle: the edge acted on already is skipped, an earlier one is not.
        assert_eq!(c.free_edge_at_or_after(2000, None), 2000);
        assert_eq!(c.free_edge_at_or_after(2000, Some(2000)), 3000);
        assert_eq!(c.free_edge_at_or_after(1500, Some(1000)), 2000);
        assert_eq!(c.cycles(3), 3000);
    }
}
