//! Warp schedulers: each cycle, each of the SM's schedulers issues up to `issue_width` instructions
//! from the warps it owns (warp slot `i` belongs to scheduler `i mod schedulers`), visiting them
//! greedy-then-oldest (from the warp that issued last: it keeps issuing until it stalls) or loose
//! round-robin (from the warp after it). A scheduler that finds nothing to issue stops for the cycle.
//! The SM then sleeps until the next cycle if anything issued, else until the earliest time a warp
//! can become ready by itself (start skew, latency, register readiness); memory responses and
//! barrier releases wake it (`Sm::wake`), at the next cycle the schedulers have not run in: they
//! run once per cycle, so a response that arrives in a cycle after its tick is seen the next cycle
//! (as a result written back in a cycle is read by an issue in the next).
//!
//! Not modelled: scheduler-to-warp affinity beyond the slot modulo, dual issue of one warp.

use super::{Sm, Stall, Warp, NEVER};
use crate::config::WarpPolicy;
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::msg::Event;
use crate::timeline::Recorder;

/// The schedulers of one SM and the warp slots each owns.
pub struct Scheduler {
    policy: WarpPolicy,
    issue_width: u32,
    /// Occupied warp slots of each scheduler, ascending: the schedulers visit only these.
    slots: Vec<Vec<u16>>,
    /// The warp slot each scheduler issued from last.
    last: Vec<usize>,
    /// Where each scheduler's visit starts in its slot list ([`Scheduler::window`]), kept until
    /// its last warp or its slots change: most ticks issue nothing and need no search.
    start: Vec<Option<usize>>,
}

impl Scheduler {
    pub fn new(schedulers: u32, issue_width: u32, policy: WarpPolicy) -> Scheduler {
        Scheduler {
            policy,
            issue_width,
            slots: vec![Vec::new(); schedulers as usize],
            last: vec![0; schedulers as usize],
            start: vec![None; schedulers as usize],
        }
    }

    /// Warp slot `slot` is occupied.
    pub fn add(&mut self, slot: usize) {
        let n = self.slots.len();
        let list = &mut self.slots[slot % n];
        let at = list.partition_point(|&x| (x as usize) < slot);
        list.insert(at, slot as u16);
        self.start[slot % n] = None;
    }

    /// Warp slot `slot` is free again.
    pub fn remove(&mut self, slot: usize) {
        let n = self.slots.len();
        self.slots[slot % n].retain(|&x| x as usize != slot);
        self.start[slot % n] = None;
    }

    /// Scheduler `s` issued from warp slot `slot`.
    #[inline]
    pub fn issued_from(&mut self, s: usize, slot: usize) {
        if self.last[s] != slot {
            self.last[s] = slot;
            self.start[s] = None;
        }
    }

    /// Where scheduler `s` starts this time among `nslots` warp slots, and how many it owns:
    /// it visits its slots cyclically from the first at or after its start (greedy: the last warp
    /// that issued; round-robin: the one after it). See [`Scheduler::nth`].
    #[inline]
    pub fn window(&mut self, s: usize, nslots: usize) -> (usize, usize) {
        let len = self.slots[s].len();
        if let Some(first) = self.start[s] {
            return (first, len);
        }
        let start = match self.policy {
            WarpPolicy::Gto => self.last[s],
            WarpPolicy::Lrr => self.last[s] + self.slots.len(),
        } % nslots;
        let first = self.slots[s].partition_point(|&x| (x as usize) < start);
        self.start[s] = Some(first);
        (first, len)
    }

    /// The `k`-th warp slot scheduler `s` visits from `first` (`k` below the count of its slots).
    #[inline]
    pub fn nth(&self, s: usize, first: usize, k: usize) -> usize {
        let mine = &self.slots[s];
        // `first + k` wraps at most once (first <= len): no division per warp.
        let j = if first + k >= mine.len() {
            first + k - mine.len()
        } else {
            first + k
        };
        mine[j] as usize
    }

    /// The visit order of scheduler `s` (as [`Scheduler::window`] and [`Scheduler::nth`] give it).
    #[cfg(test)]
    fn order(&mut self, s: usize, nslots: usize) -> impl Iterator<Item = usize> + '_ {
        let (first, n) = self.window(s, nslots);
        (0..n).map(move |k| self.nth(s, first, k))
    }

    /// Every occupied warp slot.
    #[cfg(test)]
    pub fn occupied(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().flatten().map(|&i| i as usize)
    }
}

/// What the schedulers read of each warp slot every tick, one small record per slot beside the warps (a tick
/// at high occupancy visits dozens of warps, most of them waiting; reading these instead of each
/// warp's state is what keeps a visit cheap). [`Gates::set`] refreshes a slot from its warp wherever
/// the warp's readiness may change — after it is tried, when a memory result or a barrier's release
/// reaches it, when it is placed or retired — and debug builds check at every tick that each slot
/// agrees with its warp.
pub struct Gates {
    /// Per warp slot (one record per slot: a visit reads them in a row).
    slots: Vec<SlotGate>,
    /// Per scheduler, a time no warp of it may be tried before (at most the least `try_at` of its
    /// slots): a scheduler whose warps all wait is passed over with one comparison. A visit that
    /// tries nothing sets it to the least `try_at` it saw; a slot's new `try_at` only lowers it.
    sched_try_at: Vec<Time>,
}

/// The schedulers' view of one warp slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct SlotGate {
    /// `max(scoreboard.blocked_until, ready_at)`: before then, trying the warp would fail without
    /// any effect. 0 for an empty slot.
    try_at: Time,
    ready_at: Time,
    /// The earliest readiness after some past time among the warp's timed registers (`NEVER`:
    /// none; 0: not known since the warp last changed). While it lies after the current time it is
    /// also the earliest after it ([`Scoreboard::next_ready`](super::scoreboard::Scoreboard::next_ready));
    /// once passed (or unknown), the warp's scoreboard is asked again.
    timed: Time,
    /// Whether the warp has lanes that may run (not exited, not all at a barrier).
    runnable: bool,
}

impl Gates {
    pub fn new(slots: usize, schedulers: u32) -> Gates {
        Gates {
            slots: vec![SlotGate::default(); slots],
            sched_try_at: vec![0; schedulers as usize],
        }
    }

    /// Slot `i` holds `w` (or nothing) as it is now.
    #[inline]
    pub fn set(&mut self, i: usize, w: Option<&Warp>) {
        let n = self.sched_try_at.len();
        // A power of two (the presets' four schedulers) needs no division on this per-response path.
        let s = if n.is_power_of_two() {
            i & (n - 1)
        } else {
            i % n
        };
        self.set_in(s, i, w);
    }

    /// [`Gates::set`] for slot `i` of scheduler `s` (`i mod schedulers`), known to the caller.
    #[inline]
    fn set_in(&mut self, s: usize, i: usize, w: Option<&Warp>) {
        let g = Gates::of(w);
        self.sched_try_at[s] = self.sched_try_at[s].min(g.try_at);
        self.slots[i] = g;
    }

    /// The slot's view of `w` (its timed readiness left unknown: asked when needed).
    #[inline]
    fn of(w: Option<&Warp>) -> SlotGate {
        match w {
            Some(w) => SlotGate {
                try_at: w.scoreboard.blocked_until.max(w.ready_at),
                ready_at: w.ready_at,
                timed: 0,
                runnable: w.runnable() != 0,
            },
            None => SlotGate::default(),
        }
    }

    /// Whether slot `i` agrees with `w` at `now` (a known timed readiness still ahead must be the
    /// warp's next one).
    fn agrees(&self, i: usize, w: Option<&Warp>, now: Time) -> bool {
        let (have, want) = (self.slots[i], Gates::of(w));
        (w.is_none() || self.sched_try_at[i % self.sched_try_at.len()] <= want.try_at)
            && (have.try_at, have.ready_at, have.runnable)
                == (want.try_at, want.ready_at, want.runnable)
            && (have.timed <= now
                || w.is_none_or(|w| w.scoreboard.earliest_after(now) == have.timed))
    }
}

impl Sm {
    /// Warp schedulers: issue what can issue this cycle; sleep when nothing can.
    pub fn tick(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        if self.tick_at != Some(now) {
            return;
        }
        self.tick_at = None;
        debug_assert_ne!(
            self.ticked_at,
            Some(now),
            "the schedulers run once per cycle"
        );
        self.ticked_at = Some(now);
        debug_assert!(
            (0..self.warps.len()).all(|i| self.gates.agrees(i, self.warps[i].as_ref(), now)),
            "the schedulers' view of a warp slot is its warp's state"
        );
        let nslots = self.warps.len();
        // The launch, held while warps are tried (a try may change the SM's copy: a group that
        // retires lets its block go); taken only by a tick that tries a warp, as the count of
        // references is an atomic operation.
        let mut launch: Option<std::sync::Arc<super::Launch>> = None;
        let mut issued_any = false;
        let mut lsu_left = self.lsu_per_cycle;
        for s in 0..self.sched.slots.len() {
            for _ in 0..self.sched.issue_width {
                if self.gates.sched_try_at[s] > now {
                    // Every warp of this scheduler waits: the visit below would try none.
                    break;
                }
                let (first, mine) = self.sched.window(s, nslots);
                let mut done = false;
                // The least `try_at` of the visited slots, for a visit that issues nothing.
                let mut least = NEVER;
                for k in 0..mine {
                    // Only an instruction that issued can free a warp slot (an exit), and the
                    // visit ends there: the slot list is stable while it is read.
                    let i = self.sched.nth(s, first, k);
                    let try_at = self.gates.slots[i].try_at;
                    if try_at > now {
                        // Trying it now would fail without any effect.
                        least = least.min(try_at);
                        continue;
                    }
                    let held = launch.get_or_insert_with(|| self.launch.clone());
                    let issued = self.try_issue(i, &held.program, now, &mut lsu_left, ctx);
                    self.gates.set_in(s, i, self.warps[i].as_ref());
                    least = least.min(self.gates.slots[i].try_at);
                    if issued {
                        if let Some(r) = ctx.rec.as_deref_mut() {
                            r.issued.push(i as u16);
                        }
                        self.sched.issued_from(s, i);
                        issued_any = true;
                        done = true;
                        break;
                    }
                }
                if !done {
                    // Every slot visited, none issued: each `try_at` seen is current.
                    self.gates.sched_try_at[s] = least;
                    break;
                }
            }
        }
        if issued_any {
            self.stats.issue_cycles += 1;
        }
        if let Some(r) = ctx.rec.as_deref_mut() {
            self.record_warps(r, now);
        }
        if self.notices.error.is_some() {
            return;
        }
        // Next wake-up: next cycle if anything may issue, else the earliest timed readiness.
        // `now` is a clock edge: `tick_at` is only ever set to one.
        debug_assert_eq!(
            now % self.clock.period,
            0,
            "an SM ticks on its clock's edges"
        );
        let next = now + self.clock.period;
        let mut wake = NEVER;
        let g = &mut self.gates;
        'scan: for list in &self.sched.slots {
            for &i in list {
                let v = &mut g.slots[i as usize];
                if !v.runnable {
                    continue;
                }
                if v.ready_at > now {
                    wake = wake.min(v.ready_at);
                } else if issued_any {
                    wake = wake.min(next);
                } else {
                    if v.timed <= now {
                        let w = self.warps[i as usize]
                            .as_mut()
                            .expect("a runnable slot holds a warp");
                        v.timed = w.scoreboard.next_ready(now);
                    }
                    wake = wake.min(v.timed);
                }
                if wake <= next {
                    // The tick goes at `max(wake, next)`: the other warps cannot make it earlier.
                    break 'scan;
                }
            }
        }
        if wake != NEVER {
            let t = if wake <= next {
                next
            } else {
                self.clock.edge_at_or_after(wake)
            };
            if self.tick_at.is_none_or(|x| x > t) {
                self.tick_at = Some(t);
                ctx.q.at(t, Event::SmTick(self.id));
            }
        }
    }
}

impl Sm {
    /// The timeline: each warp's state from this tick (`issue` for one cycle if it issued).
    fn record_warps(&self, r: &mut Recorder, now: Time) {
        let next = now + self.clock.period;
        let state = |w: &Warp, t: Time| -> &'static str {
            if w.live == 0 {
                return Stall::Exited.describe();
            }
            match w.stall() {
                Stall::Ready if w.ready_at > t || w.scoreboard.blocked_until > t => {
                    Stall::RegisterDependency.describe()
                }
                Stall::Ready => "ready, not selected",
                s => s.describe(),
            }
        };
        for (i, slot) in self.warps.iter().enumerate() {
            let Some(w) = slot else {
                r.warp_gone(i, now);
                continue;
            };
            if r.issued.contains(&(i as u16)) {
                r.warp_state(i, now, "issue", w.group, w.warp_in_group);
                r.warp_state(i, next, state(w, next), w.group, w.warp_in_group);
            } else {
                r.warp_state(i, now, state(w, now), w.group, w.warp_in_group);
            }
        }
        r.issued.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(policy: WarpPolicy, slots: &[usize]) -> Scheduler {
        let mut s = Scheduler::new(2, 1, policy);
        for &i in slots {
            s.add(i);
        }
        s
    }

    #[test]
    fn warps_belong_to_schedulers_by_slot_and_are_visited_in_slot_order() {
        let mut s = sched(WarpPolicy::Gto, &[6, 0, 2, 3, 5]);
        assert_eq!(s.order(0, 8).collect::<Vec<_>>(), [0, 2, 6]);
        assert_eq!(s.order(1, 8).collect::<Vec<_>>(), [3, 5]);
    }

    #[test]
    fn greedy_keeps_the_last_warp_first_and_round_robin_moves_past_it() {
        let mut g = sched(WarpPolicy::Gto, &[0, 2, 4, 6]);
        g.issued_from(0, 4);
        assert_eq!(g.order(0, 8).collect::<Vec<_>>(), [4, 6, 0, 2]);
        let mut r = sched(WarpPolicy::Lrr, &[0, 2, 4, 6]);
        r.issued_from(0, 4);
        assert_eq!(r.order(0, 8).collect::<Vec<_>>(), [6, 0, 2, 4]);
    }

    #[test]
    fn a_freed_slot_is_no_longer_visited() {
        let mut s = sched(WarpPolicy::Gto, &[0, 2, 4]);
        s.remove(2);
        assert_eq!(s.order(0, 8).collect::<Vec<_>>(), [0, 4]);
        assert_eq!(s.occupied().collect::<Vec<_>>(), [0, 4]);
    }
}
