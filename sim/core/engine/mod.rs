//! The deterministic discrete-event core: integer time in picoseconds, events ordered by
//! (time, insertion sequence), scheduling into the past refused (Akita's event queue, nexosim's priority
//! queue). Parts never call each other: they push typed events into this queue and the machine's loop
//! delivers them. A part with nothing to do schedules nothing and so sleeps until a message wakes it.
//!
//! Clock domains: each part converts its own cycles to picoseconds with its [`Clock`]; times of
//! different domains compare directly.
//!
//! Not modelled: nothing here is timing-specific; the queue is generic over the event type.
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
    pub fn from_mhz(mhz: u32) -> Clock {
        Clock {
            period: (1_000_000 / mhz.max(1) as u64).max(1),
        }
    }
    /// Duration of `n` cycles.
    pub fn cycles(self, n: u64) -> Time {
        n * self.period
    }
    /// The first clock edge at or after `t`.
    pub fn edge_at_or_after(self, t: Time) -> Time {
        t.div_ceil(self.period) * self.period
    }
    /// The first edge at or after `t` later than `used`, the edge a part that acts once per cycle
    /// last acted on (schedulers, a store buffer's drain, an L2 slice's input): what wakes it in a
    /// cycle it has acted in already waits for the next.
    pub fn free_edge_at_or_after(self, t: Time, used: Option<Time>) -> Time {
        let e = self.edge_at_or_after(t);
        used.map_or(e, |u| e.max(u + self.period))
    }
    /// Whole cycles elapsed at `t`.
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
    fn new(time: Time, seq: u32, slot: u32) -> Key {
        Key((time as u128) << 64 | (seq as u128) << 32 | slot as u128)
    }
    fn time(self) -> Time {
        (self.0 >> 64) as Time
    }
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

    pub fn now(&self) -> Time {
        self.now
    }

    /// Events delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.now_fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.now_fifo.is_empty()
    }

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
    pub fn schedule(&mut self, at: Time, event: E) -> Result<(), PastEvent> {
        if at < self.now {
            return Err(PastEvent { at, now: self.now });
        }
        self.push(at, event);
        Ok(())
    }

    /// Schedules `event` `delay` picoseconds from now (never in the past).
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
    fn scheduling_into_the_past_is_an_error() {
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
    fn an_asserted_time_in_the_past_stops_the_run() {
        let mut q = EventQueue::new();
        q.schedule(10, 1).unwrap();
        q.pop();
        q.at(9, 2);
    }

    #[test]
    fn renumbering_keeps_the_order() {
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
    fn events_at_the_current_time_keep_insertion_order_with_earlier_ones() {
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
