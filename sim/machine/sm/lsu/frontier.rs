//! The SM's write frontier, which a cumulative release waits for (`ordering::cumulative`).
//!
//! Every write the SM sends to its L1 — drained or unbuffered stores of any warp, write-throughs of
//! L1 atomics, stress stores — gets the next sequence number; acknowledgements from the L2 (or the
//! system point) may come back in any order. The frontier is the smallest number not yet
//! acknowledged: every write numbered below it is performed at L2. A release marks the frontier's
//! next number when its own accesses are done and waits until the frontier passes the mark.

use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct WriteFrontier {
    /// The number the next write gets.
    next: u64,
    /// The smallest number not yet acknowledged.
    base: u64,
    /// `acked[i]`: whether write `base + i` is acknowledged.
    acked: VecDeque<bool>,
}

impl WriteFrontier {
    /// Numbers a write the SM sends to its L1.
    #[inline]
    pub fn number(&mut self) -> u64 {
        self.acked.push_back(false);
        self.next += 1;
        self.next - 1
    }

    /// Write `seq` was acknowledged.
    #[inline]
    pub fn acked(&mut self, seq: u64) {
        if let Some(i) = seq.checked_sub(self.base) {
            if let Some(a) = self.acked.get_mut(i as usize) {
                *a = true;
            }
        }
        while self.acked.front() == Some(&true) {
            self.acked.pop_front();
            self.base += 1;
        }
    }

    /// The number the next write will get: a release's mark.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Whether every write numbered below `mark` is acknowledged.
    #[inline]
    pub fn reached(&self, mark: u64) -> bool {
        self.base >= mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frontier_passes_a_mark_only_when_every_earlier_write_is_acknowledged() {
        let mut f = WriteFrontier::default();
        let (a, b, c) = (f.number(), f.number(), f.number());
        let mark = f.next();
        assert!(!f.reached(mark));
        f.acked(c);
        f.acked(a);
        assert!(!f.reached(mark), "write b is still in flight");
        f.acked(b);
        assert!(f.reached(mark));
        // A write after the mark does not hold it back.
        let d = f.number();
        assert!(f.reached(mark) && !f.reached(f.next()));
        f.acked(d);
        assert!(f.reached(f.next()));
    }
}
