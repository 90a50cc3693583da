//! The inter-partition link of a split L2 (A100, H100: `l2.far_latency` > 0) as a shared resource
//! with its own bandwidth (`l2.far_bytes_per_cycle` > 0; 0: the link is a latency only, `xbar.rs`).
//!
//! Models: two directions, each carrying the far messages sent from one partition's side — requests
//! of that half's SMs to slices of the other half, and responses of that half's slices to SMs of the
//! other half. A message occupies its direction `ceil(bytes / far_bytes_per_cycle)` L2 cycles, header
//! included, at the earliest free time at or after its uncontended arrival (the link is crossed in the
//! last stretch of the far path, so an idle link changes nothing); its arrival at the destination port
//! moves later by what it waited. Messages of one (source, destination) path never overtake each other
//! on the link (a path is FIFO, `xbar.rs`): a message starts no earlier than the previous one of its
//! path.
//!
//! Where it is decided: the link is written by both halves' senders, so no simulation domain can own
//! it. It is decided at the window barrier (`Gpu::deliver`), which runs serially: the far messages of
//! the window, from every outbox, are served in (uncontended arrival, sending domain, order sent)
//! order, before the receiving ports see them. A message sent in a window arrives after the window
//! ends (the far latency is at least one cycle beyond the lookahead), so every message of a later
//! window finds the link as the earlier windows left it; arrivals only move later, so the lookahead
//! stays valid, and the order does not depend on the number of threads.
//!
//! Deviation: the sender's backpressure (`SourcePort`) counts a far message as delivered at its
//! uncontended arrival, as it does for waiting at a busy destination port (see `xbar.rs`).
//!
//! Not modelled: the near copy a partition keeps of far lines for its own SMs (A100), link-level
//! flow control and virtual channels, arbitration beyond first-come first-served.

use super::msg::Event;
use super::outbox::Outgoing;
use super::xbar::{reserve, Busy, Transit, XbarSpec};
use crate::engine::{Clock, Time};

/// Traffic over one direction of the link.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkStats {
    pub messages: u64,
    pub bytes: u64,
    /// Picoseconds messages waited for the link beyond their uncontended arrival.
    pub wait_ps: Time,
    /// Picoseconds the link was occupied.
    pub busy_ps: Time,
}

/// Both directions of the link.
#[derive(Debug, Clone)]
pub struct FarLink {
    spec: XbarSpec,
    clock: Clock,
    bytes_per_cycle: u32,
    sms: usize,
    slices: usize,
    /// Per direction (0: from the first partition's side), its reserved intervals.
    dirs: [Busy; 2],
    /// Per path, the link start of its last message: requests at `sm * slices + slice`, responses
    /// after them at `sms * slices + slice * sms + sm`.
    last: Vec<Time>,
    /// The window's far messages in service order: (uncontended arrival, sending domain, index in
    /// its outbox); kept to reuse its allocation.
    order: Vec<(Time, u32, u32)>,
    pub stats: [LinkStats; 2],
}

impl FarLink {
    /// The link of a crossbar with two partitions (`spec.with_far`) between `sms` SMs and `slices`
    /// slices; `clock`: the L2 clock.
    pub fn new(
        spec: XbarSpec,
        clock: Clock,
        bytes_per_cycle: u32,
        sms: usize,
        slices: usize,
    ) -> FarLink {
        FarLink {
            spec,
            clock,
            bytes_per_cycle: bytes_per_cycle.max(1),
            sms,
            slices,
            dirs: [Busy::new(), Busy::new()],
            last: vec![0; 2 * sms * slices],
            order: Vec::new(),
            stats: [LinkStats::default(); 2],
        }
    }

    /// A far message `t` between SM `sm` and slice `slice` (`request`: from the SM) crosses the
    /// link; returns its arrival at the destination port. `horizon`: no later message arrives before
    /// it.
    pub fn cross(
        &mut self,
        t: Transit,
        sm: usize,
        slice: usize,
        request: bool,
        horizon: Time,
    ) -> Time {
        let (dir, path) = if request {
            (sm * 2 / self.sms, sm * self.slices + slice)
        } else {
            (
                slice * 2 / self.slices,
                self.sms * self.slices + slice * self.sms + sm,
            )
        };
        let occ = self
            .clock
            .cycles(t.bytes.div_ceil(self.bytes_per_cycle) as u64);
        let from = t.arrive.max(self.last[path]);
        let at = reserve(&mut self.dirs[dir], from, occ, horizon);
        self.last[path] = at;
        let s = &mut self.stats[dir];
        s.messages += 1;
        s.bytes += t.bytes as u64;
        s.wait_ps += at - t.arrive;
        s.busy_ps += occ;
        at
    }

    /// The far messages among `sent` (every domain's outbox, SMs first: `nsm` of them) cross the link
    /// in (uncontended arrival, sending domain, order sent) order; each one's arrival is moved to
    /// when it leaves the link. `horizon`: the window's end.
    pub fn cross_window(&mut self, sent: &mut [&mut Vec<Outgoing>], nsm: usize, horizon: Time) {
        let ends = |o: &Outgoing| match o.event {
            Event::SliceIn(slice, _) => (o.src as usize, slice as usize, true),
            Event::L1FromXbar(sm, _) => (sm as usize, o.src as usize, false),
            _ => unreachable!("only requests and responses cross the crossbar"),
        };
        self.order.clear();
        for (d, out) in sent.iter().enumerate() {
            for (i, o) in out.iter().enumerate() {
                let (sm, slice, request) = ends(o);
                debug_assert_eq!(request, d < nsm, "SMs send requests, partitions responses");
                if self.spec.is_far(sm, slice) {
                    self.order.push((o.transit.arrive, d as u32, i as u32));
                }
            }
        }
        // A total order on distinct keys: the same as a stable sort by arrival of the list built in
        // (domain, order sent) order.
        self.order.sort_unstable();
        let order = std::mem::take(&mut self.order);
        for &(_, d, i) in &order {
            let o = &mut sent[d as usize][i as usize];
            let (sm, slice, request) = ends(o);
            o.transit.arrive = self.cross(o.transit, sm, slice, request, horizon);
        }
        self.order = order;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four SMs and four slices: SMs 0, 1 and slices 0, 1 form the first partition; far latency 10.
    fn link(bytes_per_cycle: u32) -> (FarLink, Clock) {
        let cfg = crate::machine::tests::tiny();
        let clock = Clock::from_mhz(cfg.clocks.l2_mhz);
        let spec = XbarSpec::new(&cfg.interconnect, clock, 0).with_far(10, 4, 4);
        (FarLink::new(spec, clock, bytes_per_cycle, 4, 4), clock)
    }

    fn transit(arrive: Time, bytes: u32) -> Transit {
        Transit {
            arrive,
            occupancy: 0,
            bytes,
        }
    }

    #[test]
    fn a_busy_direction_serialises_and_an_idle_one_changes_nothing() {
        let (mut l, c) = link(16);
        let t0 = c.cycles(100);
        // Three 136-byte responses (9 link cycles each) from slice 2 to SM 0 arriving together.
        let a = l.cross(transit(t0, 136), 0, 2, false, 0);
        let b = l.cross(transit(t0, 136), 0, 2, false, 0);
        let d = l.cross(transit(t0, 136), 0, 2, false, 0);
        assert_eq!(
            (a, b, d),
            (t0, t0 + c.cycles(9), t0 + c.cycles(18)),
            "one after another"
        );
        // The other direction (SM 0's request to slice 2) is free at the same time.
        assert_eq!(l.cross(transit(t0, 8), 0, 2, true, 0), t0);
        assert_eq!(l.stats[1].messages, 3);
        assert_eq!(l.stats[1].bytes, 3 * 136);
        assert_eq!(l.stats[1].wait_ps, c.cycles(9 + 18));
        assert_eq!(l.stats[1].busy_ps, c.cycles(27));
        assert_eq!((l.stats[0].messages, l.stats[0].wait_ps), (1, 0));
        // A message later than everything booked is not delayed.
        let late = t0 + c.cycles(1000);
        assert_eq!(l.cross(transit(late, 136), 0, 2, false, 0), late);
    }

    #[test]
    fn a_path_stays_fifo_on_the_link_while_other_paths_fill_gaps() {
        let (mut l, c) = link(8);
        let t0 = c.cycles(100);
        // Path P = slice 2 -> SM 0: a 136-byte response (17 link cycles); then another path's one at
        // t0 + 20, leaving a gap [t0 + 17, t0 + 20).
        let a = l.cross(transit(t0, 136), 0, 2, false, 0);
        let wall = l.cross(transit(t0 + c.cycles(20), 136), 0, 3, false, 0);
        assert_eq!((a, wall), (t0, t0 + c.cycles(20)));
        // A header-only message of a third path arriving at t0 + 1 takes the gap at 17.
        let other = l.cross(transit(t0 + c.cycles(1), 8), 1, 2, false, 0);
        assert_eq!(other, t0 + c.cycles(17));
        // A long one on P does not fit the rest of the gap: it waits behind the wall.
        let b = l.cross(transit(t0 + c.cycles(1), 136), 0, 2, false, 0);
        assert_eq!(b, t0 + c.cycles(37));
        // A short one on P sent after it would fit the gap at 18, but must not pass it.
        let after = l.cross(transit(t0 + c.cycles(2), 8), 0, 2, false, 0);
        assert!(after > b, "path reordered on the link: {after} <= {b}");
        // The same short message on a fresh path of this direction (SM 2's request to slice 0)
        // takes the gap.
        let fresh = l.cross(transit(t0 + c.cycles(2), 8), 2, 0, true, 0);
        assert_eq!(fresh, t0 + c.cycles(18));
        assert_eq!(
            l.stats[0].messages, 0,
            "all of these cross from the second partition"
        );
    }
}
