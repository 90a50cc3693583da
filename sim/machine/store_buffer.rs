//! The scoped store buffer: stores that have left the warp but are not yet visible at the L1.
//!
//! Models: plain and relaxed stores enter the buffer (one entry per warp-store per line, coalescing
//! with a pending entry of the same warp and line where the drain order allows it); a store's own
//! warp reads it back by store-to-load forwarding (never another warp: a value visible to some threads
//! before others would break the multi-copy atomicity that fence.sc restores — so forwarding is
//! restricted to the writer's warp); entries drain to the L1 one per cycle after `drain_delay`
//! (+ seeded `stress.drain_jitter`), either in program order (`fifo`) or per address (`per_address`:
//! only one line's entries keep their order, different lines leave in seeded random order — the
//! hardware source of store→store reordering). Capacity is per warp or shared by the SM
//! (`placement`); a full buffer stalls the storing warp.
//!
//! Release stores, seq_cst stores and read-modify-writes do not enter: the warp first waits until its
//! entries have drained (DESIGN.md: "every earlier store of the thread is acknowledged at level(S)").
//!
//! Not modelled: partial-entry merging across different lines, byte-enable limits.

use super::pool::{LineBuf, MAX_LINE};
use crate::config::{DrainOrder, SbPlacement, StoreBufferSpec};
use crate::engine::Time;
use crate::rng::SplitMix64;

#[derive(Clone)]
pub struct SbEntry {
    pub warp: u16,
    pub line: u64,
    pub mask: u128,
    pub data: LineBuf,
    pub ready_at: Time,
    pub system: bool,
    /// When the entry was made (the timeline's store-buffer span).
    pub since: Time,
}

/// Result of a forwarding lookup for some bytes of one line.
pub enum Forward {
    /// No buffered store of this warp touches these bytes.
    None,
    /// Every byte is covered: the youngest buffered value of each.
    Full(LineBuf),
    /// Some bytes are buffered, some are not: the load waits for the drain.
    Partial,
}

pub struct StoreBuffer {
    pub entries: Vec<SbEntry>,
    capacity: usize,
    placement: SbPlacement,
    order: DrainOrder,
    pub occupancy_ps: u128,
    pub max_occupancy: usize,
    pub drained: u64,
    pub coalesced: u64,
    last_change: Time,
}

impl StoreBuffer {
    pub fn new(spec: &StoreBufferSpec) -> StoreBuffer {
        StoreBuffer {
            entries: Vec::new(),
            capacity: spec.entries as usize,
            placement: spec.placement,
            order: spec.drain_order,
            occupancy_ps: 0,
            max_occupancy: 0,
            drained: 0,
            coalesced: 0,
            last_change: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Whether a store touching `lines` lines can ever enter (a warp-store larger than the whole
    /// buffer cannot, however far it drains).
    pub fn can_hold(&self, lines: usize) -> bool {
        lines <= self.capacity
    }

    fn account(&mut self, now: Time) {
        self.occupancy_ps += (now - self.last_change) as u128 * self.entries.len() as u128;
        self.last_change = now;
    }

    fn count_for(&self, warp: u16) -> usize {
        match self.placement {
            SbPlacement::PerWarp => self.entries.iter().filter(|e| e.warp == warp).count(),
            SbPlacement::PerSm => self.entries.len(),
        }
    }

    /// Where a new store of `warp` to `line` would coalesce, if anywhere.
    fn merge_target(&self, warp: u16, line: u64, system: bool) -> Option<usize> {
        match self.order {
            DrainOrder::PerAddress => self
                .entries
                .iter()
                .position(|e| e.warp == warp && e.line == line && e.system == system),
            // In FIFO order a store may only join the warp's youngest entry.
            DrainOrder::Fifo => {
                let i = self.entries.iter().rposition(|e| e.warp == warp)?;
                (self.entries[i].line == line && self.entries[i].system == system).then_some(i)
            }
        }
    }

    /// Whether `warp` can buffer a store to these lines now.
    pub fn has_room(&self, warp: u16, lines: impl IntoIterator<Item = u64>) -> bool {
        let new = lines
            .into_iter()
            .filter(|&l| self.merge_target(warp, l, false).is_none())
            .count();
        self.count_for(warp) + new <= self.capacity
    }

    pub fn insert(
        &mut self,
        now: Time,
        warp: u16,
        line: u64,
        mask: u128,
        data: &LineBuf,
        ready_at: Time,
        system: bool,
    ) {
        self.account(now);
        if let Some(i) = self.merge_target(warp, line, system) {
            let e = &mut self.entries[i];
            let mut m = mask;
            while m != 0 {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                e.data[b] = data[b];
            }
            e.mask |= mask;
            self.coalesced += 1;
            return;
        }
        self.entries.push(SbEntry {
            warp,
            line,
            mask,
            data: *data,
            ready_at,
            system,
            since: now,
        });
        self.max_occupancy = self.max_occupancy.max(self.entries.len());
    }

    /// Store-to-load forwarding for `mask` bytes of `line`, from `warp`'s own entries.
    pub fn forward(&self, warp: u16, line: u64, mask: u128) -> Forward {
        let mut covered = 0u128;
        let mut out = [0u8; MAX_LINE];
        for e in self
            .entries
            .iter()
            .rev()
            .filter(|e| e.warp == warp && e.line == line)
        {
            let take = e.mask & mask & !covered;
            let mut m = take;
            while m != 0 {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                out[b] = e.data[b];
            }
            covered |= take;
        }
        if covered == 0 {
            Forward::None
        } else if covered == mask {
            Forward::Full(out)
        } else {
            Forward::Partial
        }
    }

    /// Whether `warp` has a buffered store to `line`.
    pub fn holds(&self, warp: u16, line: u64) -> bool {
        self.entries
            .iter()
            .any(|e| e.warp == warp && e.line == line)
    }

    /// Picks and removes the next entry allowed to drain at `now`.
    pub fn pop_ready(&mut self, now: Time, rng: &mut SplitMix64) -> Option<SbEntry> {
        let eligible = |i: usize, e: &SbEntry| -> bool {
            if e.ready_at > now {
                return false;
            }
            match self.order {
                DrainOrder::Fifo => match self.placement {
                    SbPlacement::PerSm => i == 0,
                    SbPlacement::PerWarp => !self.entries[..i].iter().any(|o| o.warp == e.warp),
                },
                DrainOrder::PerAddress => !self.entries[..i]
                    .iter()
                    .any(|o| o.warp == e.warp && o.line == e.line),
            }
        };
        let mut cands = [0usize; 32];
        let mut n = 0;
        for (i, e) in self.entries.iter().enumerate() {
            if eligible(i, e) && n < cands.len() {
                cands[n] = i;
                n += 1;
            }
        }
        if n == 0 {
            return None;
        }
        let pick = match self.order {
            DrainOrder::Fifo => cands[0],
            DrainOrder::PerAddress => cands[rng.below(n as u64) as usize],
        };
        self.account(now);
        self.drained += 1;
        Some(self.entries.remove(pick))
    }

    /// Earliest time an entry becomes drainable.
    pub fn next_ready(&self) -> Option<Time> {
        self.entries.iter().map(|e| e.ready_at).min()
    }

    pub fn finish(&mut self, now: Time) {
        self.account(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb(order: DrainOrder, entries: u32) -> StoreBuffer {
        StoreBuffer::new(&StoreBufferSpec {
            entries,
            placement: SbPlacement::PerWarp,
            drain_order: order,
            drain_delay: 0,
        })
    }

    #[test]
    fn forwarding_takes_youngest_value_and_detects_partial() {
        let mut b = sb(DrainOrder::Fifo, 8);
        let mut d = [0u8; MAX_LINE];
        d[0] = 1;
        b.insert(0, 0, 0, 0b1, &d, 0, false);
        b.insert(0, 0, 128, 0b1, &d, 0, false);
        d[0] = 2;
        b.insert(0, 0, 0, 0b1, &d, 0, false);
        match b.forward(0, 0, 0b1) {
            Forward::Full(v) => assert_eq!(v[0], 2),
            _ => panic!("expected full forward"),
        }
        assert!(matches!(b.forward(0, 0, 0b11), Forward::Partial));
        assert!(
            matches!(b.forward(1, 0, 0b1), Forward::None),
            "another warp never sees it"
        );
    }

    #[test]
    fn fifo_drains_in_order_and_per_address_can_reorder_lines() {
        let d = [0u8; MAX_LINE];
        let mut rng = SplitMix64::new(1);
        let mut f = sb(DrainOrder::Fifo, 8);
        f.insert(0, 0, 0, 1, &d, 0, false);
        f.insert(0, 0, 128, 1, &d, 0, false);
        assert_eq!(f.pop_ready(0, &mut rng).unwrap().line, 0);
        let mut reordered = false;
        for seed in 0..50 {
            let mut rng = SplitMix64::new(seed);
            let mut p = sb(DrainOrder::PerAddress, 8);
            p.insert(0, 0, 0, 1, &d, 0, false);
            p.insert(0, 0, 128, 1, &d, 0, false);
            p.insert(0, 0, 0, 2, &d, 0, false); // coalesces into the first entry
            reordered |= p.pop_ready(0, &mut rng).unwrap().line == 128;
        }
        assert!(reordered);
    }

    #[test]
    fn capacity_is_enforced() {
        let d = [0u8; MAX_LINE];
        let mut b = sb(DrainOrder::PerAddress, 2);
        b.insert(0, 0, 0, 1, &d, 0, false);
        b.insert(0, 0, 128, 1, &d, 0, false);
        assert!(!b.has_room(0, [256]));
        assert!(b.has_room(0, [0]), "coalescing needs no new entry");
        assert!(b.has_room(1, [256]), "per-warp capacity");
    }
}
