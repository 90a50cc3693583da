//! The inter-partition link of a split L2 (A100, H100: `l2.far_latency` > 0) as a shared resource
//! with its own bandwidth (`l2.far_bytes_per_cycle` > 0; 0: the link is a latency only, `xbar.rs`).
//!
//! Models: two directions, each carrying the far messages sent from one partition's side — requests
//! of that half's SMs to slices of the other half, and responses of that half's slices to SMs of the
//! other half. Each direction carries `far_bytes_per_cycle` bytes per L2 cycle, headers included, and
//! is wide: several messages share a cycle (a link of 2720 B/clk carries twenty 136-byte responses in
//! one). A message takes the free bytes of the cycles from its uncontended arrival on, in service
//! order, and arrives when its last byte has crossed, less the cycles it needs on an idle link
//! (`ceil(bytes / far_bytes_per_cycle)`, which its path's latency already covers): an idle link
//! changes nothing, a full one moves the arrival at the destination port later by the wait. Messages
//! of one (source, destination) path never overtake each other on the link (a path is FIFO,
//! `xbar.rs`): a message starts no earlier than the previous one of its path arrived.
//!
//! Where it is decided: the link is written by both halves' senders, so no simulation domain can own
//! it. It is decided at the window barrier (`Gpu::deliver`): the far messages of the window, from
//! every outbox, are served in (uncontended arrival, sending domain, order sent) order, before the
//! receiving ports see them. The directions share no state, so each serves its own messages on its
//! own (side by side with a thread pool), which is the same as serving all of them in that order. A
//! message sent in a window arrives after the window ends (the far latency is at least one cycle
//! beyond the lookahead), so every message of a later window finds the link as the earlier windows
//! left it; arrivals only move later, so the lookahead stays valid, and the order does not depend on
//! the number of threads.
//!
//! Deviations: the sender's backpressure (`SourcePort`) counts a far message as delivered at its
//! uncontended arrival, as it does for waiting at a busy destination port (see `xbar.rs`). Across
//! windows the link is first come first served by booking, not by arrival: the far latency is longer
//! than a window, so a message of a later window may arrive before one booked at an earlier barrier;
//! it takes what that one left free from its own arrival on.
//!
//! A read of a near copy (`near_copy.rs`) and its response do not cross.
//!
//! Not modelled: link-level flow control and virtual channels, arbitration beyond first-come
//! first-served.

use super::msg::Event;
use super::outbox::{Mail, Outgoing};
use super::xbar::{Transit, XbarSpec};
use crate::engine::{Clock, Time};
use std::collections::VecDeque;

/// Traffic over one direction of the link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub messages: u64,
    pub bytes: u64,
    /// Picoseconds messages waited for the link beyond their uncontended arrival.
    pub wait_ps: Time,
}

/// The bytes booked in each L2 cycle of one direction, from cycle `base` on; cycles before the last
/// window's end are forgotten.
#[derive(Debug, Clone, Default)]
struct Slots {
    base: u64,
    used: VecDeque<u32>,
    /// Cycles `base .. base + full` are full.
    full: usize,
}

impl Slots {
    /// Books `bytes` at `cap` bytes per cycle from cycle `c` on, in the free bytes of each cycle;
    /// returns the cycle of the last byte. Cycles before `horizon` are forgotten first (nothing is
    /// booked before it).
    fn book(&mut self, c: u64, bytes: u32, cap: u32, horizon: u64) -> u64 {
        while self.base < horizon && !self.used.is_empty() {
            self.used.pop_front();
            self.base += 1;
            self.full = self.full.saturating_sub(1);
        }
        if self.used.is_empty() {
            self.base = c;
            self.full = 0;
        }
        while self.base > c {
            self.used.push_front(0);
            self.base -= 1;
            self.full = 0;
        }
        let mut i = ((c - self.base) as usize).max(self.full);
        let mut left = bytes;
        loop {
            while i >= self.used.len() {
                self.used.push_back(0);
            }
            let take = (cap - self.used[i]).min(left);
            self.used[i] += take;
            left -= take;
            if left == 0 {
                break;
            }
            i += 1;
        }
        while self.full < self.used.len() && self.used[self.full] == cap {
            self.full += 1;
        }
        self.base + i as u64
    }
}

/// What both directions share: the crossbar's far paths, the L2 clock, the bandwidth and the
/// machine's size.
#[derive(Debug, Clone)]
pub struct Shape {
    spec: XbarSpec,
    clock: Clock,
    bytes_per_cycle: u32,
    sms: usize,
    slices: usize,
    /// Slices per partition domain (the outboxes after the SMs' hold their slices' responses).
    slices_per_part: usize,
}

impl Shape {
    /// The direction and the path (index in [`Direction::last`]) of a message between SM `sm` and
    /// slice `slice` (`request`: from the SM).
    #[inline]
    fn path(&self, sm: usize, slice: usize, request: bool) -> (usize, usize) {
        if request {
            (sm * 2 / self.sms, sm * self.slices + slice)
        } else {
            (
                slice * 2 / self.slices,
                self.sms * self.slices + slice * self.sms + sm,
            )
        }
    }

    /// A message on the near path although its ends are far (a near copy's read, `near_copy.rs`).
    #[inline]
    fn near(o: &Outgoing) -> bool {
        match o.event {
            Event::SliceIn(_, r) => r.near,
            Event::L1FromXbar(_, r) => r.near,
            _ => false,
        }
    }

    /// (SM, slice, from the SM) of a crossbar message.
    #[inline]
    fn ends(o: &Outgoing) -> (usize, usize, bool) {
        match o.event {
            Event::SliceIn(slice, _) => (o.src as usize, slice as usize, true),
            Event::L1FromXbar(sm, _) => (sm as usize, o.src as usize, false),
            _ => unreachable!("only requests and responses cross the crossbar"),
        }
    }
}

/// One direction of the link: its booked bytes per cycle, the last arrival of each of its paths and
/// its traffic. The two directions share nothing, so the barrier may cross them side by side.
#[derive(Debug, Clone)]
pub struct Direction {
    /// 0: from the first partition's side.
    dir: usize,
    slots: Slots,
    /// Per path, the arrival of its last message: requests at `sm * slices + slice`, responses
    /// after them at `sms * slices + slice * sms + sm` (only this direction's paths are used).
    last: Vec<Time>,
    /// The window's far messages of this direction in service order: (uncontended arrival,
    /// sending domain, index in its outbox, path); kept to reuse its allocation.
    order: Vec<(Time, u32, u32, u32)>,
    /// The window's far messages of this direction with their arrival off the link: (sending
    /// domain, index in its outbox, arrival).
    crossed: Vec<(u32, u32, Time)>,
    stats: LinkStats,
}

impl Direction {
    /// A far message `t` of this direction on path `path` crosses; returns its arrival at the
    /// destination port. `horizon`: no later message arrives before it.
    fn cross(&mut self, shape: &Shape, t: Transit, path: usize, horizon: Time) -> Time {
        let c = shape.clock;
        let from = t.arrive.max(self.last[path]);
        let last = self.slots.book(
            c.cycle_of(c.edge_at_or_after(from)),
            t.bytes,
            shape.bytes_per_cycle,
            c.cycle_of(horizon),
        );
        let need = t.bytes.div_ceil(shape.bytes_per_cycle) as u64;
        let at = c.cycles(last + 1 - need).max(from);
        self.last[path] = at;
        let s = &mut self.stats;
        s.messages += 1;
        s.bytes += t.bytes as u64;
        s.wait_ps += at - t.arrive;
        at
    }

    /// This direction's far messages among `sent` (every domain's outbox, SMs first: `nsm` of them)
    /// cross in (uncontended arrival, sending domain, order sent) order; their arrivals off the link
    /// are kept for [`FarLink::apply`]. `horizon`: the window's end.
    pub fn cross_window(&mut self, shape: &Shape, sent: &Mail, nsm: usize, horizon: Time) {
        self.order.clear();
        self.crossed.clear();
        // An SM's requests all go one way (its side's: SMs `sm` with `sm * 2 / sms` = the
        // direction), and a partition's responses the ways of its first and last slice's sides.
        let sms = (self.dir * shape.sms).div_ceil(2).min(nsm)
            ..((self.dir + 1) * shape.sms).div_ceil(2).min(nsm);
        for d in sms.chain(nsm..sent.len()) {
            let out = &sent[d];
            if out.is_empty() {
                continue;
            }
            if d >= nsm {
                let first = (d - nsm) * shape.slices_per_part;
                let last = first + shape.slices_per_part.max(1) - 1;
                if !(first * 2 / shape.slices..=last * 2 / shape.slices).contains(&self.dir) {
                    continue;
                }
            }
            for (i, o) in out.iter().enumerate() {
                let (sm, slice, request) = Shape::ends(o);
                debug_assert_eq!(request, d < nsm, "SMs send requests, partitions responses");
                let (dir, path) = shape.path(sm, slice, request);
                if dir == self.dir && shape.spec.is_far(sm, slice) && !Shape::near(o) {
                    self.order
                        .push((o.transit.arrive, d as u32, i as u32, path as u32));
                    // Its path's last arrival is read when it crosses, after the sort: a cache
                    // miss on the host unless asked for now (`engine::prefetch`).
                    if let Some(l) = self.last.get(path) {
                        crate::engine::prefetch(l);
                    }
                }
            }
        }
        // A total order on distinct keys (the path follows from the message): the same as a stable
        // sort by arrival of the list built in (domain, order sent) order.
        self.order.sort_unstable();
        let order = std::mem::take(&mut self.order);
        for &(_, d, i, path) in &order {
            let o = &sent[d as usize][i as usize];
            let at = self.cross(shape, o.transit, path as usize, horizon);
            self.crossed.push((d, i, at));
        }
        self.order = order;
    }
}

/// Both directions of the link.
#[derive(Debug, Clone)]
pub struct FarLink {
    shape: Shape,
    dirs: [Direction; 2],
}

impl FarLink {
    /// The link of a crossbar with two partitions (`spec.with_far`) between `sms` SMs and `slices`
    /// slices, `slices_per_part` in each partition domain; `clock`: the L2 clock.
    pub fn new(
        spec: XbarSpec,
        clock: Clock,
        bytes_per_cycle: u32,
        sms: usize,
        slices: usize,
        slices_per_part: usize,
    ) -> FarLink {
        let dir = |dir| Direction {
            dir,
            slots: Slots::default(),
            last: vec![0; 2 * sms * slices],
            order: Vec::new(),
            crossed: Vec::new(),
            stats: LinkStats::default(),
        };
        FarLink {
            shape: Shape {
                spec,
                clock,
                bytes_per_cycle: bytes_per_cycle.max(1),
                sms,
                slices,
                slices_per_part,
            },
            dirs: [dir(0), dir(1)],
        }
    }

    /// A far message `t` between SM `sm` and slice `slice` (`request`: from the SM) crosses the
    /// link; returns its arrival at the destination port. `horizon`: no later message arrives before
    /// it.
    #[cfg(test)]
    pub fn cross(
        &mut self,
        t: Transit,
        sm: usize,
        slice: usize,
        request: bool,
        horizon: Time,
    ) -> Time {
        let (dir, path) = self.shape.path(sm, slice, request);
        self.dirs[dir].cross(&self.shape, t, path, horizon)
    }

    /// Bytes per L2 cycle in each direction.
    pub fn bytes_per_cycle(&self) -> u32 {
        self.shape.bytes_per_cycle
    }

    /// Each direction's traffic (0: from the first partition's side).
    pub fn stats(&self) -> [LinkStats; 2] {
        [self.dirs[0].stats, self.dirs[1].stats]
    }

    /// What the directions share, and the directions, to cross a window's messages side by side
    /// ([`Direction::cross_window`], then [`FarLink::apply`]).
    pub fn directions(&mut self) -> (&Shape, &mut [Direction; 2]) {
        (&self.shape, &mut self.dirs)
    }

    /// Moves each far message crossed in the window to its arrival off the link.
    pub fn apply(&self, sent: &mut Mail) {
        for d in &self.dirs {
            for &(from, i, at) in &d.crossed {
                sent[from as usize][i as usize].transit.arrive = at;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four SMs and four slices: SMs 0, 1 and slices 0, 1 form the first partition; far latency 10.
    fn link(bytes_per_cycle: u32) -> (FarLink, Clock) {
        let cfg = crate::tests::tiny();
        let clock = Clock::from_mhz(cfg.clocks.l2_mhz);
        let spec = XbarSpec::new(&cfg.interconnect, clock, 0).with_far(10, 4, 4);
        (FarLink::new(spec, clock, bytes_per_cycle, 4, 4, 2), clock)
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
        let (mut l, c) = link(68);
        let t0 = c.cycles(100);
        // Three 136-byte responses (2 link cycles each) from slice 2 to SM 0 arriving together.
        let a = l.cross(transit(t0, 136), 0, 2, false, 0);
        let b = l.cross(transit(t0, 136), 0, 2, false, 0);
        let d = l.cross(transit(t0, 136), 0, 2, false, 0);
        assert_eq!(
            (a, b, d),
            (t0, t0 + c.cycles(2), t0 + c.cycles(4)),
            "one after another"
        );
        // The other direction (SM 0's request to slice 2) is free at the same time.
        assert_eq!(l.cross(transit(t0, 8), 0, 2, true, 0), t0);
        assert_eq!(l.stats()[1].messages, 3);
        assert_eq!(l.stats()[1].bytes, 3 * 136);
        assert_eq!(l.stats()[1].wait_ps, c.cycles(2 + 4));
        assert_eq!((l.stats()[0].messages, l.stats()[0].wait_ps), (1, 0));
        // A message later than everything booked is not delayed.
        let late = t0 + c.cycles(1000);
        assert_eq!(l.cross(transit(late, 136), 0, 2, false, 0), late);
    }

    #[test]
    fn a_wide_link_carries_several_messages_per_cycle() {
        let (mut l, c) = link(1700);
        let t0 = c.cycles(100);
        // Twelve 136-byte responses fill 1632 of a cycle's 1700 bytes: none waits.
        for k in 0..12 {
            assert_eq!(l.cross(transit(t0, 136), k % 2, 2 + k % 2, false, 0), t0);
        }
        // The thirteenth's last bytes cross in the next cycle.
        assert_eq!(l.cross(transit(t0, 136), 0, 3, false, 0), t0 + c.cycles(1));
        // Requests of the other direction are not affected.
        assert_eq!(l.cross(transit(t0, 8), 0, 3, true, 0), t0);
    }

    #[test]
    fn other_paths_fill_the_gaps_and_every_path_stays_fifo() {
        let (mut l, c) = link(8);
        let t0 = c.cycles(100);
        // Slice 2 -> SM 0: 136 bytes at 8 per cycle take cycles 100 .. 116; slice 3 -> SM 0 at 120 takes
        // 120 .. 136; a header-only message of slice 2 -> SM 1 arriving at 101 crosses at 117.
        assert_eq!(l.cross(transit(t0, 136), 0, 2, false, 0), t0);
        let wall = t0 + c.cycles(20);
        assert_eq!(l.cross(transit(wall, 136), 0, 3, false, 0), wall);
        let gap = l.cross(transit(t0 + c.cycles(1), 8), 1, 2, false, 0);
        assert_eq!(gap, t0 + c.cycles(17));
        // Random traffic: arrivals per path ascending (as the source ports send them), sizes from a
        // header to a line; delivered arrivals per path stay ascending, and never earlier.
        let mut rng = crate::rng::SplitMix64::new(5);
        let (mut l, _) = link(200);
        let mut sent: Vec<Time> = vec![0; 32];
        let mut got: Vec<Time> = vec![0; 32];
        for i in 0..4000u64 {
            let (sm, slice, request) = (
                rng.below(4) as usize,
                rng.below(4) as usize,
                rng.below(2) == 0,
            );
            let path = (sm * 4 + slice) * 2 + request as usize;
            let arrive = c.cycles(i / 8 + rng.below(20)).max(sent[path]);
            sent[path] = arrive;
            let bytes = [8, 12, 40, 136][rng.below(4) as usize];
            let at = l.cross(transit(arrive, bytes), sm, slice, request, c.cycles(i / 8));
            assert!(at >= arrive, "earlier than its uncontended arrival");
            assert!(at >= got[path], "path {path} reordered at message {i}");
            got[path] = at;
        }
        let bytes: u64 = l.stats().iter().map(|s| s.bytes).sum();
        let messages: u64 = l.stats().iter().map(|s| s.messages).sum();
        assert_eq!(messages, 4000);
        assert!(bytes > 0);
    }

    #[test]
    fn a_window_crossed_direction_by_direction_is_the_window_crossed_in_one_order() {
        use crate::msg::{MemReq, MemResp, ReqKind, RespKind};
        use crate::outbox::Payload;
        // Four SMs (outboxes 0..4) and two partitions of two slices (outboxes 4, 5); random
        // messages, far and near, in every outbox, over several windows.
        let mut rng = crate::rng::SplitMix64::new(9);
        let (mut split, c) = link(24);
        let (mut one, _) = link(24);
        for w in 0..20u64 {
            let horizon = c.cycles(w * 8);
            let mut mail: Vec<Vec<Outgoing>> = (0..6).map(|_| Vec::new()).collect();
            for (d, out) in mail.iter_mut().enumerate() {
                let mut at = horizon;
                for _ in 0..rng.below(12) {
                    at += c.cycles(rng.below(3));
                    let (sm, slice) = (rng.below(4) as u16, rng.below(2) as u16);
                    let event = if d < 4 {
                        let kind = ReqKind::Read { mask: 0 };
                        Event::SliceIn(
                            slice + 2 * (rng.below(2) as u16),
                            MemReq {
                                sm: d as u16,
                                tag: 0,
                                line: 0,
                                kind,
                                near: false,
                            },
                        )
                    } else {
                        let kind = RespKind::WriteAck;
                        Event::L1FromXbar(
                            sm,
                            MemResp {
                                tag: 0,
                                line: 0,
                                kind,
                                near: false,
                            },
                        )
                    };
                    let src = if d < 4 {
                        d as u16
                    } else {
                        (d as u16 - 4) * 2 + slice
                    };
                    let bytes = [8, 40, 136][rng.below(3) as usize];
                    out.push(Outgoing {
                        transit: transit(at, bytes),
                        src,
                        event,
                        payload: Payload::None,
                    });
                }
            }
            // One by one, in (arrival, sending domain, order sent) order.
            let mut want: Vec<(Time, usize, usize)> = Vec::new();
            for (d, out) in mail.iter().enumerate() {
                for (i, o) in out.iter().enumerate() {
                    want.push((o.transit.arrive, d, i));
                }
            }
            want.sort();
            let mut expect: Vec<Vec<Time>> = mail
                .iter()
                .map(|m| m.iter().map(|o| o.transit.arrive).collect())
                .collect();
            for &(_, d, i) in &want {
                let o = &mail[d][i];
                let (sm, slice, request) = Shape::ends(o);
                if one.shape.spec.is_far(sm, slice) {
                    expect[d][i] = one.cross(o.transit, sm, slice, request, horizon);
                }
            }
            let (shape, dirs) = split.directions();
            for d in dirs.iter_mut().rev() {
                d.cross_window(shape, &mail, 4, horizon);
            }
            split.apply(&mut mail);
            let got: Vec<Vec<Time>> = mail
                .iter()
                .map(|m| m.iter().map(|o| o.transit.arrive).collect())
                .collect();
            assert_eq!(got, expect, "window {w}");
        }
        assert_eq!(split.stats(), one.stats());
        assert!(
            split.stats().iter().all(|s| s.wait_ps > 0),
            "both directions contended: {:?}",
            split.stats()
        );
    }

    /// `far_stream.kern` on tiny (4 SMs, 4 slices) split in two partitions (far latency 10), with
    /// a link of `bw` bytes per cycle: the timed window, and the run's statistics.
    fn far_stream(bw: u32, far: i64, threads: usize) -> (i64, crate::RunResult) {
        use crate::{run, RunOptions};
        let mut cfg = crate::tests::tiny();
        cfg.l2.far_latency = 10;
        cfg.l2.far_bytes_per_cycle = bw;
        cfg.l2.hash = crate::config::SliceHash::Linear;
        let p = |k: &str, v| (k.to_string(), v);
        let wl = crate::kernel::parse_kern(
            include_str!("../../workloads/reference/far_stream.kern"),
            "far_stream.kern",
            &[
                p("SMS", 4),
                p("SLICES", 4),
                p("G", 256),
                p("ITER", 1),
                p("PASSES", 3),
                p("FAR", far),
            ],
        )
        .unwrap();
        let opts = RunOptions {
            threads,
            ..Default::default()
        };
        let r = run(&cfg, &wl, &opts).unwrap();
        assert!(r.checks.iter().all(|c| c.passed), "{:?}", r.checks);
        let w = r
            .reports
            .iter()
            .find(|(n, _)| n == "window_cycles")
            .unwrap()
            .1;
        (w, r)
    }

    fn link_messages(r: &crate::RunResult) -> f64 {
        r.stats
            .rows
            .iter()
            .filter(|s| s.location.starts_with("interconnect.far_link") && s.metric == "messages")
            .map(|s| s.value)
            .sum()
    }

    #[test]
    fn a_far_stream_saturating_the_link_is_slower_than_a_near_one_and_not_without_a_bandwidth() {
        let (near, rn) = far_stream(16, 0, 1);
        let (far, rf) = far_stream(16, 1, 1);
        // The far stream's lines all cross the link, the near one's (almost) none: its own atomics
        // and latch may.
        let (mf, mn) = (link_messages(&rf), link_messages(&rn));
        assert!(
            mf > 5.0 * mn.max(1.0),
            "far {mf} and near {mn} link messages"
        );
        assert!(
            far as f64 > 1.3 * near as f64,
            "a saturated link: far {far} against near {near} cycles"
        );
        // Unlimited (0): the far latency alone, which the stream hides.
        let (near0, r0) = far_stream(0, 0, 1);
        let (far0, _) = far_stream(0, 1, 1);
        assert_eq!(link_messages(&r0), 0.0, "no link rows without a bandwidth");
        assert!(
            (far0 as f64) < 1.1 * near0 as f64,
            "far {far0} against near {near0} cycles with an unlimited link"
        );
        assert!(
            (near as f64) < 1.02 * near0 as f64,
            "a near stream hardly depends on the link: {near} against {near0} cycles"
        );
    }

    #[test]
    fn a_saturated_link_gives_the_same_results_on_two_threads() {
        let (w1, r1) = far_stream(16, 1, 1);
        let (w2, r2) = far_stream(16, 1, 2);
        assert_eq!(w1, w2);
        assert_eq!(r1.cycles, r2.cycles);
        assert_eq!(r1.stats, r2.stats);
    }
}
