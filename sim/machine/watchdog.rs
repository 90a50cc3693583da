//! The watchdog's notion of forward progress: machine state that does not repeat.
//!
//! Every `watchdog.no_progress_cycles / 16` cycles (at the first window barrier at or after the
//! sample time, `gpu.rs`), the watchdog samples the machine's architectural state in parts and
//! remembers the last [`HISTORY`] distinct values of each part:
//! - each resident warp (by SM and warp slot): its work-group, the PC of its last instruction
//!   (unless it is looping, below), its live and at-barrier lane masks, every lane's registers (the predicates are registers of the
//!   IR), the last address it accessed, and the digest of its work-group's local memory (kept up
//!   to date on every local write, as global memory's is);
//! - global memory: a digest kept up to date on every write that changes a value (XOR of a hash of
//!   each 8-byte word's address and value, [`word_hash`]), so sampling never scans memory;
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

use super::domain::SmDomain;
use crate::engine::Time;

/// Non-novel samples in a row before a run is declared stuck: the sample interval is
/// `no_progress_cycles / WINDOW`.
pub const WINDOW: u32 = 16;

/// Distinct values remembered per part of the state.
pub const HISTORY: usize = 64;

/// A 64-bit mixer (SplitMix64's finaliser).
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The contribution of the aligned 8-byte word at `addr` holding `v` to a memory digest: the digest
/// of a memory is the XOR of its words' hashes relative to its initial contents, so a write changes
/// it by `word_hash(a, old) ^ word_hash(a, new)` for each word that changed (words, not bytes: a
/// line written at the L2 costs at most 16 pairs of hashes, and only where a value changed).
#[inline]
pub fn word_hash(addr: u64, v: u64) -> u64 {
    mix(v ^ mix(addr ^ 0x9e37_79b9_7f4a_7c15))
}

/// The XOR of [`word_hash`] over the aligned words holding addresses `addr..addr + len`, whose
/// bytes are `data[at..]` (a word's bytes lie together in `data`; bytes outside `data` read as 0).
#[inline]
pub fn words_hash(data: &[u8], at: usize, addr: u64, len: usize) -> u64 {
    let mut h = 0;
    let mut w = addr & !7;
    // Up to the address space's end at most (then the word after the last is not computed).
    let end = addr.saturating_add(len as u64);
    while w < end {
        // Index of address w in `data`; a word wholly inside it is read at once.
        let lo = (at as u64).wrapping_add(w).wrapping_sub(addr) as usize;
        if let Some(b) = data
            .get(lo..lo.wrapping_add(8))
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
        {
            h ^= word_hash(w, u64::from_le_bytes(b));
        } else {
            let mut b = [0u8; 8];
            for (i, x) in b.iter_mut().enumerate() {
                // Index of address w + i in `data`.
                if let Some(&v) = data.get(lo.wrapping_add(i)) {
                    *x = v;
                }
            }
            h ^= word_hash(w, u64::from_le_bytes(b));
        }
        let Some(next) = w.checked_add(8) else {
            break;
        };
        w = next;
    }
    h
}

/// Writes `new` at `data[at..]` (the bytes of addresses `addr..`), updating `digest` when a byte
/// changes; returns how many bytes changed.
#[inline]
pub fn write_tracked(data: &mut [u8], at: usize, addr: u64, new: &[u8], digest: &mut u64) -> u64 {
    let old = &data[at..at + new.len()];
    let changed = old.iter().zip(new).filter(|(a, b)| a != b).count() as u64;
    if changed > 0 {
        let before = words_hash(data, at, addr, new.len());
        data[at..at + new.len()].copy_from_slice(new);
        *digest ^= before ^ words_hash(data, at, addr, new.len());
    }
    changed
}

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
    fn a_memory_digest_depends_on_the_contents_only() {
        let mut a = vec![0u8; 16];
        let mut da = 0;
        write_tracked(&mut a, 0, 100, &[1, 2, 3], &mut da);
        write_tracked(&mut a, 1, 101, &[7], &mut da);
        let mut b = vec![0u8; 16];
        let mut db = 0;
        write_tracked(&mut b, 0, 100, &[1, 7, 3], &mut db);
        assert_eq!(da, db, "same bytes, same digest, whatever the writes");
        assert_eq!(write_tracked(&mut b, 0, 100, &[1, 7], &mut db), 0);
        write_tracked(&mut b, 0, 100, &[0, 0, 0], &mut db);
        assert_eq!(db, 0, "back to the initial contents");
        write_tracked(&mut a, 3, 103, &[3], &mut da);
        assert_ne!(da, 0);
    }

    #[test]
    fn a_word_hash_reads_whole_words_as_byte_by_byte() {
        // The byte-by-byte definition: bytes of `data` where they exist, 0 elsewhere (in 128-bit
        // arithmetic: the address space's last word too).
        let slow = |data: &[u8], at: usize, addr: u64, len: usize| {
            let mut h = 0;
            let mut w = (addr & !7) as u128;
            while w < addr as u128 + len as u128 {
                let b: Vec<u8> = (0..8)
                    .map(|i| {
                        let idx = (at as u128 + w + i).wrapping_sub(addr as u128) as usize;
                        data.get(idx).copied().unwrap_or(0)
                    })
                    .collect();
                h ^= word_hash(w as u64, u64::from_le_bytes(b.try_into().unwrap()));
                w += 8;
            }
            h
        };
        let data: Vec<u8> = (0..40u8).map(|x| x.wrapping_mul(37) ^ 0x5a).collect();
        for at in 0..data.len() {
            for len in 1..=data.len() - at {
                // The last: a range that ends where the address space does.
                let last = u64::MAX - len as u64 + 1;
                for addr in [0x1000 + at as u64, 0x1003 + at as u64, 0x2005, 7, last] {
                    assert_eq!(
                        words_hash(&data, at, addr, len),
                        slow(&data, at, addr, len),
                        "at {at} len {len} addr {addr:#x}"
                    );
                }
            }
        }
    }

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
