//! The watchdog's notion of forward progress: machine state that does not repeat.
//!
//! Every `watchdog.no_progress_cycles / 16` cycles (at the first window barrier at or after the
//! sample time, `gpu/`), the watchdog samples the machine's architectural state in parts and
//! remembers the last [`HISTORY`] distinct values of each part:
//! - each resident warp (by SM and warp slot): its work-group, the PC of its last instruction
//!   (unless it is looping, below), its live and at-barrier lane masks, every lane's registers (the predicates are registers of the
//!   IR), the last address it accessed, and the digest of its work-group's local memory (kept up
//!   to date on every local write, as global memory's is);
//! - global memory: a digest kept up to date on every write that changes a value (XOR of a hash of
//!   each 8-byte word's address and value, `digest::word_hash`), so sampling never scans memory;
//! - a count of events that can happen only finitely often: work-groups placed, lanes exited and
//!   traced instructions issued (a trace never loops).
//!
//! A sample is *novel* when some part holds a value that part has not held among its remembered
//! values, or the event count moved. A run makes no forward progress when [`WINDOW`] samples in a
//! row are not novel (so at least `no_progress_cycles` went by holding only states seen before) and
//! every warp has settled since the last novel sample — each had nothing in flight (loads,
//! buffered or unacknowledged stores, local accesses) at some moment after it, so no memory
//! operation issued before the repetition began can still land and change what the warps see.
//!
//! Why each warp has its own history, and when its PC is in it: a spin loop holds the same registers
//! at every point of its body once it settles (each register is rewritten with the same value every
//! iteration), so a looping warp — one that took a backward branch since the last sample — is
//! judged without its PC: it repeats at once, whatever point of the body the samples fall on. (With
//! the PC, a loop body's rarely sampled points keep looking new: 1,056 spinning warps of the
//! oversubscribed latch on the H100 took 13 million cycles to show every phase.) A warp that took no
//! backward branch since the last sample is judged with its PC, so straight-line code that re-reads
//! the same values (an unrolled pointer chase around a ring of nodes) moves on, and a warp stalled
//! in place repeats. One hash over all warps would repeat only after every combination of the warps'
//! states had been seen, which for many warps is never: each warp has its own history. A loop that
//! terminates changes a register (its counter) or memory, so it is progress; so is a warp waiting for
//! loads of addresses it never read before (the last address is in its state).
//!
//! Detects: spin loops and deadlocks whose warps re-read unchanged values (the oversubscribed latch,
//! a lock never released, a flag nobody sets), warps stuck at barriers, livelocks whose memory
//! cycles through a few values (a lock word toggled back and forth).
//! Does not detect (the cycle limit `watchdog.max_cycles` stops these, with its diagnosis): loops
//! whose state never repeats although they will never end — stores of ever larger values, a spin
//! loop that counts its iterations in a register — and livelocks that cycle global memory through
//! more than [`HISTORY`] joint states (many independent words toggling out of phase). L1 contents,
//! store-buffer contents and messages in flight are not part of the state: they are accounted for by
//! the settling rule above, not hashed.

use super::digest::mix;
use super::domain::SmDomain;
use crate::engine::Time;

/// Non-novel samples in a row before a run is declared stuck: the sample interval is
/// `no_progress_cycles / WINDOW`.
pub const WINDOW: u32 = 16;

/// Distinct values remembered per part of the state.
pub const HISTORY: usize = 64;

/// A running hash of words (order-sensitive).
struct Hasher(u64);

impl Hasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = mix(self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    }
}

/// What the watchdog keeps of one warp slot: the warp's states, and its backward branches at the
/// last sample.
#[derive(Default)]
struct WarpSlot {
    states: Ring,
    back_branches: u64,
}

/// The last [`HISTORY`] distinct values of one part of the state.
#[derive(Default)]
struct Ring {
    vals: Vec<u64>,
    next: usize,
}

impl Ring {
    /// Whether `v` was seen; if not, it is remembered (in place of the oldest).
    fn seen(&mut self, v: u64) -> bool {
        if self.vals.contains(&v) {
            return true;
        }
        if self.vals.len() < HISTORY {
            self.vals.push(v);
        } else {
            self.vals[self.next] = v;
            self.next = (self.next + 1) % HISTORY;
        }
        false
    }
}

/// Why the watchdog stopped a run: since `since` (the last novel sample), `samples` samples held
/// only states seen before.
#[derive(Debug, Clone, Copy)]
pub struct Stuck {
    pub since: Time,
    pub samples: u32,
}

pub struct Watchdog {
    interval: Time,
    next_sample: Time,
    /// Time of the last novel sample, and the non-novel samples since.
    last_novel: Time,
    stale: u32,
    events: u64,
    memory: Ring,
    /// Per SM, per warp slot.
    warps: Vec<Vec<WarpSlot>>,
}

impl Watchdog {
    /// Samples every `interval` (> 0) from `start`.
    pub fn new(interval: Time, start: Time, sms: &[SmDomain]) -> Watchdog {
        Watchdog {
            interval,
            next_sample: start + interval,
            last_novel: start,
            stale: 0,
            events: 0,
            memory: Ring::default(),
            warps: sms
                .iter()
                .map(|d| (0..d.sm.warps.len()).map(|_| WarpSlot::default()).collect())
                .collect(),
        }
    }

    /// Whether a sample is due at `now`.
    #[inline]
    pub fn due(&self, now: Time) -> bool {
        now >= self.next_sample
    }

    /// Samples the state at `now` (when [`Watchdog::due`]); `Some` when the run makes no progress.
    /// `events` counts the finite events (groups placed, lanes exited, traced instructions);
    /// `memory` is the global memory's digest.
    pub fn check(
        &mut self,
        now: Time,
        events: u64,
        memory: u64,
        sms: &[SmDomain],
    ) -> Option<Stuck> {
        self.next_sample = now + self.interval;
        // Every part is looked at (and remembered) even once one is novel.
        let mut novel = events != self.events;
        self.events = events;
        novel |= !self.memory.seen(memory);
        for (d, rings) in sms.iter().zip(&mut self.warps) {
            for (w, slot) in d.sm.warps.iter().zip(rings.iter_mut()) {
                let Some(w) = w else { continue };
                let looping = w.back_branches != slot.back_branches;
                slot.back_branches = w.back_branches;
                let mut h = Hasher(0);
                h.add(w.group);
                h.add(w.warp_in_group as u64);
                h.add(if looping { u64::MAX } else { w.last_pc as u64 });
                h.add(w.live);
                h.add(w.at_bar);
                h.add(w.last_addr.map_or(u64::MAX, |a| a));
                if let Some(g) = d.sm.groups.get(w.group_slot).and_then(|g| g.as_ref()) {
                    h.add(g.local_digest);
                }
                for &r in w.regs() {
                    h.add(r);
                }
                novel |= !slot.states.seen(h.0);
            }
        }
        if novel {
            self.last_novel = now;
            self.stale = 0;
            return None;
        }
        self.stale += 1;
        let settled = sms
            .iter()
            .flat_map(|d| d.sm.warps.iter().flatten())
            .all(|w| w.inflight.quiet() || w.settled_at > self.last_novel);
        (self.stale >= WINDOW && settled).then_some(Stuck {
            since: self.last_novel,
            samples: self.stale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_remembers_the_last_distinct_values() {
        let mut r = Ring::default();
        assert!(!r.seen(1));
        assert!(r.seen(1));
        for v in 2..=HISTORY as u64 {
            assert!(!r.seen(v));
        }
        assert!(r.seen(1), "{HISTORY} values are remembered");
        assert!(!r.seen(1000));
        assert!(!r.seen(1), "the oldest was forgotten");
    }
}
