//! The SM ↔ L2-slice crossbar: a request network (each SM's L1 → every slice) and a response network
//! (each slice → every SM), as ports: the sending side of a port belongs to its sender, the receiving
//! side to its receiver, so that each half is updated only by the part (and simulation domain) that
//! owns it.
//!
//! Models: one-way latency; serialisation at each source and each destination port
//! (`bytes_per_cycle`); bounded queues — a source with `queue_depth` messages not yet delivered
//! injects its next one only when the oldest is delivered (backpressure as waiting, never loss);
//! seeded jitter per message (`stress.interconnect_jitter`). Messages on one (source, destination)
//! path are never reordered — a real crossbar path is FIFO, and the memory model's same-address
//! guarantees rely on it — but paths are independent: a thread's accesses to different slices may
//! arrive in any order, and messages from different SMs reach a slice in the order they *arrive*
//! there, not the order they were sent (a destination port serves arrivals; a message delayed on its
//! path does not hold up one that left later from another SM). Both are hardware sources of weak
//! behaviour.
//!
//! Deviation (from one global crossbar state): a source counts a message as delivered for its
//! backpressure at its uncontended arrival (injection + latency + jitter + serialisation); waiting at a
//! busy destination port and behind an earlier message of its path is decided by the receiver, which
//! the sender does not see. The difference shows only when a source fills its whole queue.
//!
//! The inter-partition link of a split L2 (`l2.far_latency`, `with_far`): a far message pays the
//! link's latency on its path here. The link's bandwidth (`l2.far_bytes_per_cycle`) is a resource
//! both partitions' senders share, which no simulation domain owns: it is decided at the window
//! barrier (`far_link.rs`), which moves a far message's arrival later by its wait for the link.
//! Deviation (the same as above): the sender's backpressure counts a far message delivered at its
//! uncontended arrival, not after its wait for the link.
//!
//! The lookahead of parallel simulation ([`SourcePort::min_transit`]): nothing sent at `t` arrives
//! before `t + (latency + 1)` L2 cycles (every message has a header, so it occupies a port at least
//! one cycle).
//!
//! Credits (`l2.input_depth`, `credit.rs`): a slice gives a credit back to the SM when a request
//! leaves its input; the credit reaches the SM [`XbarSpec::credit_return`] later, as a sideband
//! signal that occupies no port and does not cross the link's bandwidth.
//!
//! Not modelled: virtual channels, arbitration fairness beyond first-come first-served, packet
//! fragmentation (a message occupies a port for ceil(bytes / bytes_per_cycle) cycles).

use crate::config::InterconnectSpec;
use crate::engine::{Clock, Time};
use crate::rng::SplitMix64;
use std::collections::VecDeque;

/// Header bytes of every message (address, command, ids).
pub const HEADER_BYTES: u32 = 8;

/// The crossbar's parameters, shared by every port.
#[derive(Debug, Clone, Copy)]
pub struct XbarSpec {
    clock: Clock,
    latency: u64,
    /// Extra one-way latency of a message between an SM and a slice in the other L2 partition
    /// (`l2.far_latency`, L2 cycles); 0: one partition.
    far: u64,
    sms: u32,
    slices: u32,
    bytes_per_cycle: u32,
    depth: usize,
    jitter: u32,
}

impl XbarSpec {
    /// `clock`: the L2 clock; `jitter`: `stress.interconnect_jitter`.
    pub fn new(spec: &InterconnectSpec, clock: Clock, jitter: u32) -> XbarSpec {
        XbarSpec {
            clock,
            far: 0,
            sms: 1,
            slices: 1,
            latency: spec.latency as u64,
            bytes_per_cycle: spec.bytes_per_cycle,
            depth: spec.queue_depth as usize,
            jitter,
        }
    }

    /// Two L2 partitions (A100, H100): SMs `0 .. sms/2` and slices `0 .. slices/2` form the first, the
    /// rest the second; a message between an SM and a slice of different partitions pays `far` more
    /// L2 cycles each way (the inter-partition link).
    pub fn with_far(mut self, far: u32, sms: u32, slices: u32) -> XbarSpec {
        self.far = far as u64;
        self.sms = sms.max(1);
        self.slices = slices.max(1);
        self
    }

    /// Whether SM `sm` and slice `slice` sit in different L2 partitions.
    pub fn is_far(&self, sm: usize, slice: usize) -> bool {
        self.far > 0 && (sm * 2 / self.sms as usize) != (slice * 2 / self.slices as usize)
    }

    /// A source port of SM `sm` (`from_sm`) or of slice `id`, knowing which destinations are far.
    pub fn port(&self, from_sm: bool, id: usize, destinations: usize) -> SourcePort {
        let mut p = SourcePort::new(destinations);
        if self.far > 0 {
            p.far = (0..destinations)
                .map(|d| {
                    if from_sm {
                        self.is_far(id, d)
                    } else {
                        self.is_far(d, id)
                    }
                })
                .collect();
        }
        p
    }

    /// The least time any message spends between its sender's `now` and its delivery.
    pub fn min_transit(&self) -> Time {
        self.clock.cycles(self.latency + 1)
    }

    /// When a credit that slice `slice` gives back at `now` reaches SM `sm` (`credit.rs`): a
    /// sideband signal, one header's cycle on the wire after the crossbar's latency, plus the
    /// inter-partition link's latency from the other partition; never sooner than the lookahead.
    pub fn credit_return(&self, now: Time, sm: usize, slice: usize) -> Time {
        let far = if self.is_far(sm, slice) { self.far } else { 0 };
        self.clock.edge_at_or_after(now) + self.clock.cycles(self.latency + 1 + far)
    }
}

/// A message on its way: when it reaches its destination port if that port is free, and how long it
/// occupies a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transit {
    pub arrive: Time,
    pub occupancy: Time,
    /// The message's bytes, header included (what it occupies on the inter-partition link).
    pub bytes: u32,
}

/// The sending side of one port.
#[derive(Debug, Clone)]
pub struct SourcePort {
    free: Time,
    /// Uncontended delivery times of messages possibly still in flight, oldest first.
    inflight: VecDeque<Time>,
    /// Per destination, the latest arrival so far: a path is FIFO, so a message never arrives before
    /// one sent earlier on its path, however the jitter falls.
    last_arrive: Vec<Time>,
    /// Per destination, whether it is in the other L2 partition (empty: none is).
    far: Vec<bool>,
    pub stats: PortStats,
}

/// Traffic counted at a sending port.
#[derive(Debug, Clone, Copy, Default)]
pub struct PortStats {
    pub messages: u64,
    pub bytes: u64,
    /// Picoseconds messages waited for a full queue.
    pub backpressure_ps: Time,
}

impl SourcePort {
    /// A port that sends to `destinations` ports.
    pub fn new(destinations: usize) -> SourcePort {
        SourcePort {
            free: 0,
            inflight: VecDeque::new(),
            last_arrive: vec![0; destinations],
            far: Vec::new(),
            stats: PortStats::default(),
        }
    }

    /// Injects a message of `payload` bytes (plus the header) to destination `dst` at `now` or as
    /// soon as the port and its queue allow. `near`: a far destination's message takes the near path
    /// (a read of a near copy and its response, `near_copy.rs`).
    pub fn send(
        &mut self,
        spec: &XbarSpec,
        now: Time,
        dst: usize,
        payload: u32,
        near: bool,
        rng: &mut SplitMix64,
    ) -> Transit {
        let c = spec.clock;
        let bytes = payload + HEADER_BYTES;
        let occupancy = c.cycles(bytes.div_ceil(spec.bytes_per_cycle) as u64);
        while self.inflight.front().is_some_and(|&t| t <= now) {
            self.inflight.pop_front();
        }
        let mut inject = c.edge_at_or_after(now).max(self.free);
        if self.inflight.len() >= spec.depth {
            let oldest = self.inflight[self.inflight.len() - spec.depth];
            if oldest > inject {
                self.stats.backpressure_ps += oldest - inject;
                inject = oldest;
            }
        }
        self.free = inject + occupancy;
        let far = if !near && self.far.get(dst).copied().unwrap_or(false) {
            spec.far
        } else {
            0
        };
        let jittered = inject + c.cycles(spec.latency + far + rng.upto(spec.jitter) as u64);
        let arrive = jittered.max(self.last_arrive[dst]);
        self.last_arrive[dst] = arrive;
        self.inflight.push_back(arrive + occupancy);
        self.stats.messages += 1;
        self.stats.bytes += bytes as u64;
        Transit {
            arrive,
            occupancy,
            bytes,
        }
    }
}

/// The receiving side of one port: its busy intervals and, per source, its last delivery (FIFO per
/// path).
#[derive(Debug, Clone)]
pub struct SinkPort {
    /// Busy intervals (start → end) of the messages already received. A message takes the earliest
    /// free slot at or after its arrival, so it can pass a message sent earlier that arrives later.
    busy: VecDeque<(Time, Time)>,
    last: Vec<Time>,
}

impl SinkPort {
    pub fn new(sources: usize) -> SinkPort {
        SinkPort {
            busy: VecDeque::new(),
            last: vec![0; sources],
        }
    }

    /// Receives a message from source `src`; returns its delivery time. `horizon` is a time no later
    /// message arrives before (intervals that ended by then are forgotten).
    #[inline]
    pub fn receive(&mut self, t: Transit, src: usize, horizon: Time) -> Time {
        let at = reserve(&mut self.busy, t.arrive, t.occupancy, horizon);
        let path = &mut self.last[src];
        let delivered = (at + t.occupancy).max(*path);
        *path = delivered;
        delivered
    }
}

/// Reserved intervals `[start, end)` of a port, ascending, disjoint and not touching (a reservation
/// that starts where another ends is merged into it: only the gaps decide where a message fits, so a
/// saturated port is one interval however many messages queue on it); only those that end after the
/// last window's horizon are kept, so the list is short.
pub(super) type Busy = VecDeque<(Time, Time)>;

/// Reserves `occ` picoseconds on a destination port at the earliest free time at or after `arrive`;
/// intervals that ended by `horizon` are forgotten.
/// The number of intervals whose start satisfies `pred` (which holds for a prefix): the deque's
/// `partition_point`, written out over its two slices so that it inlines into this hot path.
#[inline(always)]
fn starting_before(busy: &Busy, pred: impl Fn(Time) -> bool) -> usize {
    let (front, back) = busy.as_slices();
    match back.first() {
        Some(&(s, _)) if pred(s) => front.len() + back.partition_point(|&(s, _)| pred(s)),
        _ => front.partition_point(|&(s, _)| pred(s)),
    }
}

#[inline]
pub(super) fn reserve(busy: &mut Busy, arrive: Time, occ: Time, horizon: Time) -> Time {
    while busy.front().is_some_and(|&(_, e)| e <= horizon) {
        busy.pop_front();
    }
    let mut t = arrive;
    // The interval starting last at or before the arrival; then those after it, in order.
    let mut i = starting_before(busy, |s| s <= t);
    if i > 0 {
        t = t.max(busy[i - 1].1);
    }
    while i < busy.len() && busy[i].0 < t {
        i += 1;
    }
    for &(s, e) in busy.range(i..) {
        if s >= t + occ {
            break;
        }
        t = t.max(e);
    }
    let end = t + occ;
    let at = starting_before(busy, |s| s < t);
    // `[t, end)` lies in the gap between intervals `at - 1` and `at`: merge with the ones it touches.
    let joins_prev = at > 0 && busy[at - 1].1 == t;
    let joins_next = at < busy.len() && busy[at].0 == end;
    match (joins_prev, joins_next) {
        (true, true) => {
            busy[at - 1].1 = busy[at].1;
            busy.remove(at);
        }
        (true, false) => busy[at - 1].1 = end,
        (false, true) => busy[at].0 = t,
        (false, false) => busy.insert(at, (t, end)),
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(depth: u32, jitter: u32) -> XbarSpec {
        let mut cfg =
            crate::config::parse_str(include_str!("../../configs/tiny.toml"), "tiny", &[]).unwrap();
        cfg.interconnect.queue_depth = depth;
        XbarSpec::new(
            &cfg.interconnect,
            Clock::from_mhz(cfg.clocks.l2_mhz),
            jitter,
        )
    }

    /// Sends from `src` over `srcs` to sink `dst`, delivering at once (one sender at a time).
    fn send(
        spec: &XbarSpec,
        srcs: &mut [SourcePort],
        sinks: &mut [SinkPort],
        now: Time,
        src: usize,
        dst: usize,
        rng: &mut SplitMix64,
    ) -> Time {
        let t = srcs[src].send(spec, now, dst, 0, false, rng);
        sinks[dst].receive(t, src, now)
    }

    #[test]
    fn same_path_is_fifo_even_with_jitter() {
        let x = spec(64, 50);
        let (mut srcs, mut sinks) = (vec![SourcePort::new(2)], vec![SinkPort::new(1); 2]);
        let mut rng = SplitMix64::new(7);
        let mut last = 0;
        for i in 0..200 {
            let t = send(&x, &mut srcs, &mut sinks, i * 1000, 0, 1, &mut rng);
            assert!(t >= last, "reordered on one path");
            last = t;
        }
    }

    #[test]
    fn different_paths_can_reorder_under_jitter() {
        let x = spec(64, 50);
        let (mut srcs, mut sinks) = (vec![SourcePort::new(2)], vec![SinkPort::new(1); 2]);
        let mut rng = SplitMix64::new(3);
        let reordered = (0..200).any(|i| {
            let a = send(&x, &mut srcs, &mut sinks, i * 100_000, 0, 0, &mut rng);
            let b = send(
                &x,
                &mut srcs,
                &mut sinks,
                i * 100_000 + 1000,
                0,
                1,
                &mut rng,
            );
            b < a
        });
        assert!(reordered);
    }

    #[test]
    fn different_sources_can_overtake_at_one_destination_under_jitter() {
        let x = spec(64, 50);
        let (mut srcs, mut sinks) = (vec![SourcePort::new(1); 2], vec![SinkPort::new(2)]);
        let mut rng = SplitMix64::new(3);
        let overtaken = (0..200).any(|i| {
            let a = send(&x, &mut srcs, &mut sinks, i * 100_000, 0, 0, &mut rng);
            let b = send(
                &x,
                &mut srcs,
                &mut sinks,
                i * 100_000 + 1000,
                1,
                0,
                &mut rng,
            );
            b < a
        });
        assert!(
            overtaken,
            "a later message from another SM never arrived first"
        );
    }

    #[test]
    fn destination_port_never_overlaps_two_messages() {
        let mut busy = Busy::new();
        let a = reserve(&mut busy, 100, 10, 0);
        let b = reserve(&mut busy, 105, 10, 0);
        let c = reserve(&mut busy, 50, 10, 0);
        let d = reserve(&mut busy, 55, 50, 0);
        assert_eq!(
            (a, b, c),
            (100, 110, 50),
            "the early arrival takes the free slot before"
        );
        assert_eq!(d, 120, "a long message waits for a gap long enough");
    }

    /// The unmerged reservation list the merged one must agree with: every message its own interval.
    fn reserve_unmerged(busy: &mut Vec<(Time, Time)>, arrive: Time, occ: Time) -> Time {
        busy.sort();
        let mut t = arrive;
        while let Some(&(_, e)) = busy.iter().find(|&&(s, e)| s < t + occ && e > t) {
            t = e;
        }
        busy.push((t, t + occ));
        t
    }

    #[test]
    fn merged_reservations_give_the_slots_of_one_interval_per_message() {
        let mut rng = SplitMix64::new(7);
        for round in 0..50u64 {
            let mut merged = Busy::new();
            let mut plain = Vec::new();
            let mut horizon = 0;
            for i in 0..400u64 {
                // Bursts at one time (a saturated port), spread arrivals, occupancies of 1-4 slots.
                let arrive = horizon
                    + if round % 2 == 0 {
                        rng.upto(8) as u64 * 10
                    } else {
                        rng.upto(200) as u64
                    };
                let occ = (1 + rng.upto(3) as u64) * 10;
                let a = reserve(&mut merged, arrive, occ, horizon);
                let b = reserve_unmerged(&mut plain, arrive, occ);
                assert_eq!(a, b, "round {round}, message {i}");
                if i % 50 == 49 {
                    horizon += 100;
                }
            }
            assert!(merged
                .iter()
                .zip(merged.iter().skip(1))
                .all(|(x, y)| x.1 < y.0));
        }
    }

    #[test]
    fn full_queue_delays_injection() {
        let x = spec(2, 0);
        let mut p = SourcePort::new(3);
        let mut rng = SplitMix64::new(1);
        let t1 = p.send(&x, 0, 0, 128, false, &mut rng);
        let _t2 = p.send(&x, 0, 1, 128, false, &mut rng);
        let t3 = p.send(&x, 0, 2, 128, false, &mut rng);
        assert!(
            t3.arrive >= t1.arrive + t1.occupancy,
            "third message must wait for the first delivery"
        );
        assert!(p.stats.backpressure_ps > 0);
    }

    #[test]
    fn nothing_arrives_sooner_than_the_lookahead() {
        let x = spec(64, 0);
        let mut p = SourcePort::new(1);
        let mut rng = SplitMix64::new(1);
        for now in [0, 1, 999, 1000, 12_345] {
            let t = p.send(&x, now, 0, 0, false, &mut rng);
            assert!(t.arrive + t.occupancy >= now + x.min_transit());
        }
    }

    #[test]
    fn crossbar_full_queue_delays_never_drops_and_paths_stay_fifo() {
        for depth in [1u32, 2, 4, 64] {
            let cfg = crate::tests::tiny();
            let x = spec(depth, 30);
            let mut srcs = vec![SourcePort::new(4); 4];
            let mut sinks = vec![SinkPort::new(4); 4];
            let mut rng = SplitMix64::new(depth as u64);
            // (source, destination, sent, uncontended arrival, delivered)
            let mut sent: Vec<(usize, usize, Time, Time, Time)> = Vec::new();
            for i in 0..300u64 {
                let now = (i / 3) * 1000;
                let (src, dst) = (rng.below(4) as usize, rng.below(4) as usize);
                let tr = srcs[src].send(&x, now, dst, 128, false, &mut rng);
                let t = sinks[dst].receive(tr, src, now);
                assert!(t > now, "delivered after it was sent");
                sent.push((src, dst, now, tr.arrive, t));
            }
            let messages: u64 = srcs.iter().map(|p| p.stats.messages).sum();
            assert_eq!(messages, 300, "every message counted once");
            for s in 0..4 {
                let mine: Vec<_> = sent.iter().filter(|m| m.0 == s).collect();
                // FIFO per (source, destination) path.
                for d in 0..4 {
                    let path: Vec<Time> = mine.iter().filter(|m| m.1 == d).map(|m| m.4).collect();
                    assert!(
                        path.windows(2).all(|w| w[0] <= w[1]),
                        "path {s}->{d} reordered"
                    );
                }
                // A source has at most `depth` messages in flight (as far as it can tell, i.e. until their
                // uncontended delivery): message k enters the network only when message k - depth has
                // left it, so it arrives at least one latency later.
                let lat =
                    Clock::from_mhz(cfg.clocks.l2_mhz).cycles(cfg.interconnect.latency as u64);
                for k in depth as usize..mine.len() {
                    assert!(
                        mine[k].3 >= mine[k - depth as usize].3 + lat,
                        "depth {depth}: message {k} of source {s} overtook the queue limit"
                    );
                }
            }
            if depth == 1 {
                let waited: Time = srcs.iter().map(|p| p.stats.backpressure_ps).sum();
                assert!(waited > 0, "a full queue makes senders wait");
            }
        }
    }
}
