//! Credits: the sender's side of a bounded input it cannot see (credit-based flow control, as a
//! crossbar's source keeps a count of free buffer slots at each destination). Here: each SM's L1 holds
//! `l2.input_depth` credits for each L2 slice's input queue.
//!
//! A sender asks [`Credits::can_send`] before it sends and takes a credit ([`Credits::take`]); a
//! message without one waits, in order behind any other waiting for the same destination
//! ([`Credits::wait`]: a path stays FIFO, which the memory model's same-address guarantees rely on).
//! The receiver gives a credit back when the message leaves its input queue; the credit travels back
//! (`XbarSpec::credit_return`), and on its arrival [`Credits::give_back`] hands the oldest waiting
//! message, if any, to the sender to send now. Nothing polls: a waiting sender is woken by the credit.
//!
//! Occupancy: credits in use to one destination = messages sent to it whose credit has not come back
//! (in flight, waiting in its input, or the credit on its way back), at most the depth.
//!
//! Depth 0 is unbounded (the default, until calibrated): [`Credits::can_send`] always holds and the
//! unit keeps no count, so results equal those of a machine without it.
//!
//! Progress: every depth of at least 1 makes progress — a message needs one credit, and the receiver
//! returns it when the message leaves its input, which does not wait on the sender.
//!
//! Not modelled: credits batched into one return message, a credit return's own contention (it is
//! a sideband signal: latency only).

use crate::engine::Time;
use std::collections::VecDeque;

/// What the credits counted, over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreditStats {
    /// Messages that found no credit and waited for one.
    pub waits: u64,
    /// Picoseconds those messages waited, from when they would have been sent to when a credit came.
    pub wait_ps: Time,
    /// The most credits in use to one destination at any time.
    pub max_in_use: u32,
}

/// A sender's credits for each of its destinations, and the messages waiting for one.
#[derive(Debug, Clone)]
pub struct Credits<T> {
    /// Credits per destination; 0: unbounded.
    depth: u32,
    /// Per destination, credits taken and not returned.
    in_use: Vec<u32>,
    /// Per destination, the messages waiting for a credit, oldest first, with when each would have
    /// been sent.
    waiting: Vec<VecDeque<(Time, T)>>,
    /// Messages waiting, to any destination.
    held: usize,
    pub stats: CreditStats,
}

impl<T> Credits<T> {
    /// `depth` credits (0: unbounded) for each of `destinations`.
    pub fn new(depth: u32, destinations: usize) -> Credits<T> {
        let n = if depth > 0 { destinations } else { 0 };
        Credits {
            depth,
            in_use: vec![0; n],
            waiting: (0..n).map(|_| VecDeque::new()).collect(),
            held: 0,
            stats: CreditStats::default(),
        }
    }

    /// Whether the credits are bounded (an unbounded sender never waits and counts nothing).
    #[inline]
    pub fn bounded(&self) -> bool {
        self.depth > 0
    }

    /// Whether a message to `dst` may be sent now: a credit is free and no earlier message waits
    /// for one (it would be overtaken on its path).
    #[inline]
    pub fn can_send(&self, dst: usize) -> bool {
        !self.bounded() || (self.in_use[dst] < self.depth && self.waiting[dst].is_empty())
    }

    /// Takes a credit for a message to `dst` (after [`Credits::can_send`]).
    #[inline]
    pub fn take(&mut self, dst: usize) {
        if !self.bounded() {
            return;
        }
        debug_assert!(self.can_send(dst), "a credit taken that was not free");
        self.in_use[dst] += 1;
        self.stats.max_in_use = self.stats.max_in_use.max(self.in_use[dst]);
    }

    /// `msg` to `dst`, which would have been sent at `at`, waits for a credit (after
    /// [`Credits::can_send`] refused it).
    pub fn wait(&mut self, dst: usize, at: Time, msg: T) {
        debug_assert!(self.bounded(), "an unbounded sender never waits");
        self.stats.waits += 1;
        self.held += 1;
        self.waiting[dst].push_back((at, msg));
    }

    /// A credit for `dst` came back at `now`. The oldest message waiting for `dst`, if any, takes it
    /// and is returned to be sent now. (Unbounded: nothing was taken, nothing waits.)
    pub fn give_back(&mut self, dst: usize, now: Time) -> Option<T> {
        if !self.bounded() {
            return None;
        }
        debug_assert!(self.in_use[dst] > 0, "a credit returned that was not taken");
        self.in_use[dst] -= 1;
        let (at, msg) = self.waiting[dst].pop_front()?;
        self.held -= 1;
        self.stats.wait_ps += now.saturating_sub(at);
        self.in_use[dst] += 1;
        Some(msg)
    }

    /// Credits in use to `dst` (0 when unbounded).
    pub fn in_use(&self, dst: usize) -> u32 {
        self.in_use.get(dst).copied().unwrap_or(0)
    }

    /// Messages waiting for a credit, to any destination.
    pub fn waiting(&self) -> usize {
        debug_assert_eq!(
            self.held,
            self.waiting.iter().map(VecDeque::len).sum::<usize>()
        );
        self.held
    }

    /// Whether any message waits for a credit.
    #[inline]
    pub fn any_waiting(&self) -> bool {
        self.held > 0
    }
}

#[cfg(test)]
mod tests {
    //! The credit contract, through one harness: a sender with credits, a receiver whose input takes
    //! one message per cycle and whose credits travel back in a fixed time; random traffic.
    use super::*;
    use crate::rng::SplitMix64;
    use std::collections::BTreeMap;

    /// What a run of the harness saw.
    struct Run {
        /// Per destination, the messages in the order they reached its input.
        arrived: Vec<Vec<u32>>,
        /// Per destination, the most messages held at once (sent, credit not back).
        max_held: Vec<u32>,
        stats: CreditStats,
        end: Time,
    }

    /// `n` messages from one sender to `dests` destinations, one offered each `gap` ps, travelling
    /// `transit` ps each way; a destination's input releases one message per `serve` ps.
    fn harness(depth: u32, dests: usize, n: u32, gap: Time, serve: Time, seed: u64) -> Run {
        let transit = 50;
        let mut c: Credits<u32> = Credits::new(depth, dests);
        let mut rng = SplitMix64::new(seed);
        // Events by (time, order): 0 = message arrives at a destination's input, 1 = credit back.
        let mut ev: BTreeMap<(Time, u64), (u8, usize, u32)> = BTreeMap::new();
        let mut order = 0u64;
        let mut push = |ev: &mut BTreeMap<_, _>, t: Time, e| {
            order += 1;
            ev.insert((t, order), e);
        };
        let mut input_free = vec![0 as Time; dests];
        let mut held = vec![0u32; dests];
        let mut run = Run {
            arrived: vec![Vec::new(); dests],
            max_held: vec![0; dests],
            stats: CreditStats::default(),
            end: 0,
        };
        let mut next_msg = 0u32;
        let mut offer_at = 0;
        loop {
            let next_ev = ev.keys().next().map(|k| k.0);
            if next_msg < n && next_ev.is_none_or(|t| offer_at <= t) {
                let d = rng.below(dests as u64) as usize;
                if c.can_send(d) {
                    c.take(d);
                    push(&mut ev, offer_at + transit, (0, d, next_msg));
                    held[d] += 1;
                    run.max_held[d] = run.max_held[d].max(held[d]);
                } else {
                    c.wait(d, offer_at, next_msg);
                }
                next_msg += 1;
                offer_at += gap;
                continue;
            }
            let Some((&(t, k), &(kind, d, m))) = ev.iter().next() else {
                break;
            };
            ev.remove(&(t, k));
            run.end = t;
            if kind == 0 {
                // Served in arrival order; leaves the input (and sends its credit back) when served.
                let leave = t.max(input_free[d]) + serve;
                input_free[d] = leave;
                run.arrived[d].push(m);
                push(&mut ev, leave + transit, (1, d, m));
                held[d] -= 1;
            } else if let Some(w) = c.give_back(d, t) {
                push(&mut ev, t + transit, (0, d, w));
                held[d] += 1;
                run.max_held[d] = run.max_held[d].max(held[d]);
            }
        }
        assert_eq!(c.waiting(), 0, "a message was left waiting");
        assert!(
            (0..dests).all(|d| c.in_use(d) == 0),
            "a credit never came back"
        );
        run.stats = c.stats;
        run
    }

    #[test]
    fn a_bounded_sender_never_holds_more_than_its_credits_and_keeps_each_path_in_order() {
        for (depth, seed) in [(1u32, 1u64), (2, 2), (3, 3), (8, 4)] {
            let r = harness(depth, 3, 300, 5, 40, seed);
            let total: usize = r.arrived.iter().map(Vec::len).sum();
            assert_eq!(total, 300, "depth {depth}: every message arrived once");
            for (d, a) in r.arrived.iter().enumerate() {
                assert!(
                    a.windows(2).all(|w| w[0] < w[1]),
                    "depth {depth}: path {d} reordered: {a:?}"
                );
                assert!(
                    r.max_held[d] <= depth,
                    "depth {depth}: path {d} over its credits"
                );
            }
            assert!(r.stats.max_in_use <= depth && r.stats.max_in_use > 0);
            assert!(
                r.stats.waits > 0 && r.stats.wait_ps > 0,
                "depth {depth}: offered faster than served, senders must wait: {:?}",
                r.stats
            );
        }
    }

    #[test]
    fn fewer_credits_wait_more_and_finish_no_sooner() {
        let runs: Vec<Run> = [1u32, 2, 4, 16]
            .into_iter()
            .map(|d| harness(d, 2, 200, 5, 20, 9))
            .collect();
        for w in runs.windows(2) {
            assert!(w[0].stats.wait_ps >= w[1].stats.wait_ps);
            assert!(w[0].end >= w[1].end);
        }
        assert!(runs[0].end > runs[3].end, "one credit is a bottleneck here");
    }

    #[test]
    fn an_unbounded_sender_never_waits_and_counts_nothing() {
        let free = harness(0, 3, 300, 5, 40, 1);
        assert_eq!(free.stats, CreditStats::default());
        // As many credits as messages never bind: the same deliveries at the same times.
        let ample = harness(300, 3, 300, 5, 40, 1);
        assert_eq!(free.arrived, ample.arrived);
        assert_eq!(free.end, ample.end);
        assert_eq!(ample.stats.waits, 0);
    }

    #[test]
    fn a_returned_credit_goes_to_the_oldest_waiting_message_of_its_destination() {
        let mut c: Credits<&str> = Credits::new(1, 2);
        assert!(c.can_send(0));
        c.take(0);
        assert!(
            !c.can_send(0) && c.can_send(1),
            "credits are per destination"
        );
        c.wait(0, 10, "a");
        c.wait(0, 20, "b");
        c.take(1);
        assert_eq!(c.give_back(1, 25), None, "nothing waits for destination 1");
        assert!(c.can_send(1));
        assert_eq!(c.give_back(0, 30), Some("a"));
        assert!(!c.can_send(0), "the credit went to the waiting message");
        assert_eq!(c.give_back(0, 45), Some("b"));
        assert_eq!(c.give_back(0, 50), None);
        assert!(c.can_send(0));
        assert_eq!(
            c.stats,
            CreditStats {
                waits: 2,
                wait_ps: (30 - 10) + (45 - 20),
                max_in_use: 1
            }
        );
    }
}
