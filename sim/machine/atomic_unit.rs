//! The timing of an atomic unit — an L2 slice's, or an SM's (shared memory and L1 atomics).
//!
//! Operations start at most `ops_per_cycle` per cycle; one address is busy `same_address_cycles` per
//! operation (read-modify-write with forwarding; 1 unless a config says otherwise, the H100's L2 was
//! measured at 1.43), so operations on one address serialise; each result returns `latency` cycles
//! after it starts; at most `queue_depth` operations wait (a batch arriving at a full
//! unit waits for the oldest to finish). With `combine_same_address_lanes` a warp's lanes on one
//! address are one operation (the unit computes each lane's returned value as a prefix); without it
//! each lane is its own operation. What an operation does to values is `atomic.rs`.
//!
//! Not modelled: queueing priority between SMs beyond arrival order, unit pipelining hazards other
//! than same-address serialisation.

use super::atomic::AtomicBatch;
use super::cache::AddrMap;
use crate::config::AtomicUnitSpec;
use crate::engine::{Clock, Time};
use std::collections::VecDeque;

/// Busy addresses kept in a sorted list up to this many; above, in a map.
const LIST_MAX: usize = 256;

#[derive(Default)]
pub struct AtomicUnitStats {
    pub ops: u64,
    pub lane_ops: u64,
    pub busy_ps: Time,
    pub queue_ps: Time,
    /// Picoseconds operations waited for an earlier operation on the same address.
    pub serial_ps: Time,
}

/// Timing state of an atomic unit (shared by L2 slices and SMs).
pub struct AtomicUnit {
    clock: Clock,
    latency: u64,
    ops_per_cycle: u64,
    depth: usize,
    combine: bool,
    /// Picoseconds one address is busy per operation (`same_address_cycles` of the unit's clock).
    addr_ps: Time,
    next_issue: Time,
    inflight: VecDeque<Time>,
    /// The addresses still busy after the latest batch's start, ascending, each with when it is free
    /// again. Batches start in time order, so an address free when one starts never matters again:
    /// each batch merges its own (sorted) addresses into this list and drops the ones that are free,
    /// so the list holds only the few addresses of the last cycles' operations (no hashing, no
    /// growth).
    busy: Vec<(u64, Time)>,
    /// The next `busy`, built by the merge (kept for its capacity).
    merged: Vec<(u64, Time)>,
    /// Instead of `busy` while more than [`LIST_MAX`] addresses are in flight: each address with when
    /// it is free again, entries free by a batch's start dropped lazily (when the map has doubled since
    /// the last sweep, or all at once when `busy_until` has passed). Either form gives the same
    /// times: an address free when a batch starts never matters again.
    busy_map: Option<AddrMap<Time>>,
    /// The map's size that triggers the next sweep.
    sweep_at: usize,
    /// [`LIST_MAX`] (a test sets another bound to compare both forms).
    list_max: usize,
    /// The latest time in `busy`: when it is past, `busy` is empty in effect.
    busy_until: Time,
    pub stats: AtomicUnitStats,
}

impl AtomicUnit {
    pub fn new(clock: Clock, spec: &AtomicUnitSpec, combine: bool) -> AtomicUnit {
        AtomicUnit {
            clock,
            latency: spec.latency as u64,
            ops_per_cycle: spec.ops_per_cycle as u64,
            depth: spec.queue_depth as usize,
            combine,
            addr_ps: ((spec.same_address_cycles * clock.period as f64).round() as Time).max(1),
            next_issue: 0,
            inflight: VecDeque::new(),
            busy: Vec::new(),
            merged: Vec::new(),
            busy_map: None,
            sweep_at: LIST_MAX,
            list_max: LIST_MAX,
            busy_until: 0,
            stats: AtomicUnitStats::default(),
        }
    }

    /// Operations issued and not complete at `t` (the timeline's queue-depth counter).
    pub fn depth_at(&self, t: Time) -> usize {
        self.inflight.iter().filter(|&&d| d > t).count()
    }

    /// Schedules a batch arriving at `now`; returns when its last result is ready.
    pub fn schedule(&mut self, now: Time, b: &AtomicBatch) -> Time {
        let c = self.clock;
        while self.inflight.front().is_some_and(|&t| t <= now) {
            self.inflight.pop_front();
        }
        let arrive = c.edge_at_or_after(now);
        let mut start = arrive.max(self.next_issue);
        if self.inflight.len() >= self.depth {
            start = start.max(self.inflight[self.inflight.len() - self.depth]);
        }
        self.stats.queue_ps += start - arrive;
        let mut done = start;
        let mut ops = 0u64;
        // Lanes grouped by address (each address's operations depend only on that address's
        // earlier ones, so the order the groups are visited in does not matter).
        let mut addrs: [u64; 64] = [0; 64];
        let n = b.lanes.len().min(64);
        for (a, l) in addrs.iter_mut().zip(&b.lanes) {
            *a = l.addr;
        }
        // Lanes usually come in address order already.
        if !addrs[..n].is_sorted() {
            addrs[..n].sort_unstable();
        }
        let combine = self.combine && b.op.combinable();
        // Batches start in time order (`start` never decreases: arrivals come in time order and
        // `next_issue` only grows): an address free by this start never matters again.
        if self.busy_until <= start {
            self.busy.clear();
            self.busy_map = None;
        }
        if let Some(map) = self.busy_map.as_mut() {
            // A backlogged unit: one lookup per address instead of a pass over every busy one.
            if map.len() >= self.sweep_at {
                map.retain(|_, &mut free| free > start);
                self.sweep_at = (2 * map.len()).max(self.list_max);
            }
        }
        // Merge the batch's addresses into the busy list (both ascending), keeping what is still
        // busy after `start`; or look each up in the map.
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        let busy = &self.busy;
        let mut bi = 0;
        if self.busy_map.is_none() && busy.is_empty() {
            // Nothing busy (the common case once the unit keeps up): every address starts with the
            // batch — the general loop below with every `free` 0, without its lookups.
            let mut kmax = 0;
            for (addr, lanes_here) in address_groups(&addrs[..n]) {
                let k = if combine { 1 } else { lanes_here };
                merged.push((addr, start + k * self.addr_ps));
                kmax = kmax.max(k);
                ops += k;
            }
            if kmax > 0 {
                // The address's last operation starts one interval before it is free.
                let a_end = start + kmax * self.addr_ps;
                self.busy_until = self.busy_until.max(a_end);
                done = done.max(a_end - self.addr_ps + c.cycles(self.latency));
            }
        } else {
            for (addr, lanes_here) in address_groups(&addrs[..n]) {
                let free = match self.busy_map.as_ref() {
                    Some(map) => map.get(&addr).copied().unwrap_or(0),
                    None => {
                        while bi < busy.len() && busy[bi].0 < addr {
                            if busy[bi].1 > start {
                                merged.push(busy[bi]);
                            }
                            bi += 1;
                        }
                        let mut free = 0;
                        if bi < busy.len() && busy[bi].0 == addr {
                            free = busy[bi].1;
                            bi += 1;
                        }
                        free
                    }
                };
                let k = if combine { 1 } else { lanes_here };
                let a_start = start.max(free);
                self.stats.serial_ps += a_start - start;
                let a_end = a_start + k * self.addr_ps;
                match self.busy_map.as_mut() {
                    Some(map) => {
                        map.insert(addr, a_end);
                    }
                    None => merged.push((addr, a_end)),
                }
                self.busy_until = self.busy_until.max(a_end);
                done = done.max(a_end - self.addr_ps + c.cycles(self.latency));
                ops += k;
            }
        }
        if self.busy_map.is_some() {
            self.merged = merged;
            return self.issued(start, ops, done, b.lanes.len());
        }
        merged.extend(busy[bi..].iter().filter(|e| e.1 > start));
        self.merged = std::mem::replace(&mut self.busy, merged);
        if self.busy.len() > self.list_max {
            // Many addresses in flight (a backlog of many warps' distinct addresses): the list
            // becomes a map until the unit drains.
            let map: AddrMap<Time> = self.busy.drain(..).collect();
            self.sweep_at = 2 * map.len();
            self.busy_map = Some(map);
        }
        self.issued(start, ops, done, b.lanes.len())
    }

    /// Bookkeeping of a batch of `ops` operations on `lanes` lanes, starting at `start`, done at
    /// `done`.
    fn issued(&mut self, start: Time, ops: u64, done: Time, lanes: usize) -> Time {
        let c = self.clock;
        self.next_issue = start + c.cycles(ops.div_ceil(self.ops_per_cycle));
        self.inflight.push_back(done);
        self.stats.ops += ops;
        self.stats.lane_ops += lanes as u64;
        self.stats.busy_ps += c.cycles(ops.div_ceil(self.ops_per_cycle));
        done
    }
}

/// The distinct addresses of an ascending list with how many times each appears.
fn address_groups(addrs: &[u64]) -> impl Iterator<Item = (u64, u64)> + '_ {
    addrs
        .chunk_by(|a, b| a == b)
        .map(|g| (g[0], g.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::LaneAtomic;
    use crate::ir::{AtomicOp, RmwOp, Ty};
    use crate::tests::tiny;

    fn batch(addrs: &[u64]) -> AtomicBatch {
        AtomicBatch {
            op: AtomicOp::Rmw(RmwOp::Add),
            ty: Ty::U32,
            lanes: addrs
                .iter()
                .enumerate()
                .map(|(i, &addr)| LaneAtomic {
                    lane: i as u8,
                    addr,
                    operand: 1,
                    expected: 0,
                    result: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn the_busy_map_gives_the_times_of_the_busy_list() {
        // A backlogged unit: batches of 32 lanes over a few thousand addresses, some repeated, so
        // that hundreds of addresses are in flight; one unit keeps the list throughout, the other
        // switches to the map above 8 addresses.
        let cfg = tiny();
        let c = Clock::from_mhz(cfg.clocks.l2_mhz);
        let mut spec = cfg.atomics.l2.clone();
        spec.queue_depth = 4096;
        let mut list = AtomicUnit::new(c, &spec, false);
        list.list_max = usize::MAX;
        let mut map = AtomicUnit::new(c, &spec, false);
        map.list_max = 8;
        let mut x = 1u64;
        let mut now = 0;
        let mut mapped = false;
        for round in 0..3000u64 {
            let addrs: Vec<u64> = (0..32)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    0x1000 + 4 * ((x >> 40) % if round % 5 == 0 { 16 } else { 4096 })
                })
                .collect();
            let b = batch(&addrs);
            assert_eq!(
                list.schedule(now, &b),
                map.schedule(now, &b),
                "round {round}"
            );
            mapped |= map.busy_map.is_some();
            // Mostly back to back, sometimes a pause long enough to drain.
            now += if round % 700 == 699 {
                c.cycles(1_000_000)
            } else {
                c.cycles(x % 3)
            };
        }
        assert!(mapped, "the map form was exercised");
        assert_eq!(list.stats.serial_ps, map.stats.serial_ps);
        assert_eq!(list.stats.queue_ps, map.stats.queue_ps);
    }

    #[test]
    fn atomic_unit_serialises_one_address_pipelines_others_and_pushes_back() {
        let cfg = tiny();
        let c = Clock::from_mhz(cfg.clocks.l2_mhz);
        let unit = |depth: u32, combine: bool, per_cycle: u32| {
            let mut spec = cfg.atomics.l2.clone();
            spec.queue_depth = depth;
            spec.ops_per_cycle = per_cycle;
            AtomicUnit::new(c, &spec, combine)
        };
        let lat = c.cycles(cfg.atomics.l2.latency as u64);
        // Eight lanes, four operations per cycle: on eight addresses they pipeline, on one address they
        // serialise at one per cycle.
        let spread: Vec<u64> = (0..8).map(|i| 0x100 + 4 * i).collect();
        let mut u = unit(64, false, 4);
        assert_eq!(u.schedule(0, &batch(&spread)), lat);
        assert_eq!(u.stats.serial_ps, 0);
        let mut u = unit(64, false, 4);
        assert_eq!(u.schedule(0, &batch(&[0x100; 8])), c.cycles(7) + lat);
        // The next operation on that address waits for the eight; one elsewhere does not.
        let same = u.schedule(0, &batch(&[0x100]));
        let other = u.schedule(0, &batch(&[0x200]));
        assert!(same >= c.cycles(8) + lat && u.stats.serial_ps > 0, "{same}");
        assert!(other < same, "{other} {same}");
        // A warp's 32 lanes on one address: one operation when combined, 32 otherwise.
        let lanes = [0x100u64; 32];
        let one = unit(64, true, 1).schedule(0, &batch(&lanes));
        let many = unit(64, false, 1).schedule(0, &batch(&lanes));
        assert_eq!(many - one, c.cycles(31));
        // Queue depth 2: the third operation arriving at once waits for the first to finish.
        let mut u = unit(2, true, 1);
        let first = u.schedule(0, &batch(&[0x100]));
        u.schedule(0, &batch(&[0x200]));
        let third = u.schedule(0, &batch(&[0x300]));
        assert!(
            third >= first + lat && u.stats.queue_ps > 0,
            "{first} {third}"
        );
        // Drained: long after, a new operation starts at once (no state left behind).
        let later = 1_000 * c.period;
        assert_eq!(u.schedule(later, &batch(&[0x100])), later + lat);
    }

    #[test]
    fn one_address_takes_its_interval_per_operation_and_holds_up_no_other() {
        let cfg = tiny();
        let c = Clock::from_mhz(cfg.clocks.l2_mhz);
        let lat = c.cycles(cfg.atomics.l2.latency as u64);
        let unit = |interval: f64| {
            let mut spec = cfg.atomics.l2.clone();
            spec.ops_per_cycle = 4;
            spec.same_address_cycles = interval;
            AtomicUnit::new(c, &spec, false)
        };
        let step = (1.5 * c.period as f64).round() as Time;
        // Eight lanes on one address: the last starts seven intervals after the first.
        let mut u = unit(1.5);
        assert_eq!(u.schedule(0, &batch(&[0x100; 8])), 7 * step + lat);
        // The next one on that address waits for all eight; one elsewhere starts with the unit's
        // issue rate (eight operations at four a cycle), not behind the address.
        assert_eq!(u.schedule(0, &batch(&[0x100])), 8 * step + lat);
        assert_eq!(u.schedule(0, &batch(&[0x200])), c.cycles(3) + lat);
        // An interval of one cycle is the unit's clock: the times of `ops_per_cycle` alone.
        let mut u = unit(1.0);
        assert_eq!(u.schedule(0, &batch(&[0x100; 8])), c.cycles(7) + lat);
    }
}
