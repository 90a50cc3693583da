//! The LSU's port into its L1: a bounded buffer whose sender asks [`L1Port::can_send`] before it
//! sends (Akita's `messaging/port.go` `CanSend`; STYLE.md "bounded inputs"), so that a full L1 pushes
//! back on the warps and the store buffer instead of queueing without limit.
//!
//! Occupancy is what the L1 has not taken yet: requests sent and not yet delivered, plus those waiting
//! in the L1's own input queue (the L1 queues while an MSHR is lacking, or while a request of its
//! waits for a credit of a slice's input, `../../credit.rs`). The domain that owns the SM and its L1
//! reports both ([`L1Port::delivered`], [`L1Port::queued`]); the LSU counts what it sends.
//! Depth `sm.l1_port_depth`; 0 is unbounded (the default until calibrated: it never refuses, and the
//! port then does no bookkeeping at all, so results equal those of a machine without it).
//!
//! Two kinds of request are counted but never refused: an L1 invalidation (an acquire that completed
//! must take effect, `ordering::acquire_effect`) and memory-stress traffic (synthetic load beside the
//! workload, `../stress.rs`). A refused sender waits: the warp stalls ([`super::super::Stall::L1PortFull`]),
//! the store buffer keeps its entry, and both are woken when the L1 takes a request.
//!
//! Not modelled: the port's own latency (a request reaches the L1 in the cycle it is sent, as before),
//! arbitration between the warps and the store buffer beyond first asked, first served.

/// The sending side of an SM's request port into its L1.
#[derive(Debug, Clone)]
pub struct L1Port {
    /// Requests the L1 may hold untaken; `None`: unbounded.
    depth: Option<u32>,
    /// Sent and not yet delivered to the L1.
    in_flight: u32,
    /// Waiting in the L1's input queue, as the domain last reported.
    queued: u32,
    /// A sender was refused since the L1 last took a request: it waits to be woken.
    refused: bool,
}

impl L1Port {
    /// A port of `depth` requests (0: unbounded).
    pub fn new(depth: u32) -> L1Port {
        L1Port {
            depth: (depth > 0).then_some(depth),
            in_flight: 0,
            queued: 0,
            refused: false,
        }
    }

    /// Whether the port has a depth (an unbounded one keeps no count).
    #[inline]
    pub fn bounded(&self) -> bool {
        self.depth.is_some()
    }

    /// Whether `n` more requests fit; a refusal is remembered, so that the refused sender is woken
    /// when the L1 takes one ([`L1Port::take_refused`]). An instruction of more lines than the
    /// port's depth goes when the port is empty (it could never fit otherwise).
    #[inline]
    pub fn can_send(&mut self, n: u32) -> bool {
        let Some(d) = self.depth else {
            return true;
        };
        let used = self.in_flight + self.queued;
        let ok = used + n <= d || used == 0;
        self.refused |= !ok;
        ok
    }

    /// A request went out (refused or not: invalidations and stress traffic are never refused).
    #[inline]
    pub fn sent(&mut self) {
        if self.bounded() {
            self.in_flight += 1;
        }
    }

    /// A request reached the L1.
    #[inline]
    pub fn delivered(&mut self) {
        debug_assert!(self.in_flight > 0, "a delivery the port did not send");
        self.in_flight -= 1;
    }

    /// The L1's input queue holds `n` requests now.
    #[inline]
    pub fn queued(&mut self, n: u32) {
        self.queued = n;
    }

    /// Whether a refused sender waits and the port has room again (then it is no longer waiting).
    #[inline]
    pub fn take_refused(&mut self) -> bool {
        let room = self.depth.is_some_and(|d| self.in_flight + self.queued < d);
        let wake = self.refused && room;
        self.refused &= !wake;
        wake
    }

    /// Requests the L1 has not taken yet.
    #[cfg(test)]
    pub fn occupancy(&self) -> u32 {
        self.in_flight + self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unbounded_port_never_refuses_and_counts_nothing() {
        let mut p = L1Port::new(0);
        for _ in 0..1000 {
            p.sent();
        }
        assert!(p.can_send(1 << 20));
        assert_eq!(p.occupancy(), 0);
        assert!(!p.take_refused(), "nobody was refused");
    }

    #[test]
    fn a_bounded_port_refuses_past_its_depth_until_the_l1_takes_requests() {
        let mut p = L1Port::new(2);
        assert!(p.can_send(2));
        p.sent();
        assert!(!p.can_send(2), "two more do not fit beside one");
        p.sent();
        assert!(!p.can_send(1));
        assert!(
            !p.take_refused(),
            "no room yet: the refused sender keeps waiting"
        );
        // Delivered, but queued in the L1 (its MSHRs are full): still occupied.
        p.delivered();
        p.queued(1);
        assert_eq!(p.occupancy(), 2);
        assert!(!p.take_refused());
        // The L1 takes it: room for one, and the refused sender is woken once.
        p.queued(0);
        assert!(p.take_refused());
        assert!(!p.take_refused(), "woken once");
        assert!(p.can_send(1) && !p.can_send(2));
    }

    #[test]
    fn a_request_wider_than_the_port_goes_when_the_port_is_empty() {
        let mut p = L1Port::new(4);
        assert!(p.can_send(32), "empty: a 32-line store goes at once");
        for _ in 0..32 {
            p.sent();
        }
        assert!(!p.can_send(1), "over its depth until the L1 takes them");
    }
}
