//! The SM ↔ L2-slice crossbar: a request network and a response network.
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
//! Not modelled: virtual channels, arbitration fairness beyond first-come first-served, packet
//! fragmentation (a message occupies a port for ceil(bytes / bytes_per_cycle) cycles).

use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::rng::SplitMix64;
use std::collections::{BTreeMap, VecDeque};

/// Header bytes of every message (address, command, ids).
pub const HEADER_BYTES: u32 = 8;

struct Network {
    src_free: Vec<Time>,
    /// Per destination port: busy intervals (start → end) of the messages already sent to it. A
    /// message takes the earliest free slot at or after its arrival, so it can pass a message sent
    /// earlier that arrives later.
    dst_busy: Vec<BTreeMap<Time, Time>>,
    /// Per source: delivery times of messages possibly still in flight, oldest first.
    inflight: Vec<VecDeque<Time>>,
    /// Per (src, dst): last delivery time (FIFO per path).
    last: Vec<Time>,
    ndst: usize,
    messages: u64,
    bytes: u64,
    /// Picoseconds messages waited for a full queue.
    backpressure: Time,
}

impl Network {
    fn new(nsrc: usize, ndst: usize) -> Network {
        Network {
            src_free: vec![0; nsrc],
            dst_busy: vec![BTreeMap::new(); ndst],
            inflight: vec![VecDeque::new(); nsrc],
            last: vec![0; nsrc * ndst],
            ndst,
            messages: 0,
            bytes: 0,
            backpressure: 0,
        }
    }
}

pub struct Xbar {
    clock: Clock,
    latency: u64,
    bytes_per_cycle: u32,
    depth: usize,
    jitter: u32,
    req: Network,
    resp: Network,
}

pub struct XbarStats {
    pub req_messages: u64,
    pub req_bytes: u64,
    pub resp_messages: u64,
    pub resp_bytes: u64,
    pub backpressure_ps: Time,
}

impl Xbar {
    pub fn new(cfg: &GpuConfig) -> Xbar {
        let (s, l) = (cfg.sm.count as usize, cfg.l2.slices as usize);
        Xbar {
            clock: Clock::from_mhz(cfg.clocks.l2_mhz),
            latency: cfg.interconnect.latency as u64,
            bytes_per_cycle: cfg.interconnect.bytes_per_cycle.max(1),
            depth: cfg.interconnect.queue_depth.max(1) as usize,
            jitter: cfg.stress.interconnect_jitter,
            req: Network::new(s, l),
            resp: Network::new(l, s),
        }
    }

    /// Sends a request of `payload` bytes from SM `src` to slice `dst`; returns its delivery time.
    pub fn send_request(
        &mut self,
        now: Time,
        src: usize,
        dst: usize,
        payload: u32,
        rng: &mut SplitMix64,
    ) -> Time {
        let (c, lat, bpc, depth, j) = (
            self.clock,
            self.latency,
            self.bytes_per_cycle,
            self.depth,
            self.jitter,
        );
        send(
            &mut self.req,
            c,
            lat,
            bpc,
            depth,
            j,
            now,
            src,
            dst,
            payload,
            rng,
        )
    }

    /// Sends a response from slice `src` to SM `dst`.
    pub fn send_response(
        &mut self,
        now: Time,
        src: usize,
        dst: usize,
        payload: u32,
        rng: &mut SplitMix64,
    ) -> Time {
        let (c, lat, bpc, depth, j) = (
            self.clock,
            self.latency,
            self.bytes_per_cycle,
            self.depth,
            self.jitter,
        );
        send(
            &mut self.resp,
            c,
            lat,
            bpc,
            depth,
            j,
            now,
            src,
            dst,
            payload,
            rng,
        )
    }

    pub fn stats(&self) -> XbarStats {
        XbarStats {
            req_messages: self.req.messages,
            req_bytes: self.req.bytes,
            resp_messages: self.resp.messages,
            resp_bytes: self.resp.bytes,
            backpressure_ps: self.req.backpressure + self.resp.backpressure,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn send(
    n: &mut Network,
    clock: Clock,
    latency: u64,
    bpc: u32,
    depth: usize,
    jitter: u32,
    now: Time,
    src: usize,
    dst: usize,
    payload: u32,
    rng: &mut SplitMix64,
) -> Time {
    let bytes = payload + HEADER_BYTES;
    let occupancy = clock.cycles(bytes.div_ceil(bpc) as u64);
    let q = &mut n.inflight[src];
    while q.front().is_some_and(|&t| t <= now) {
        q.pop_front();
    }
    let mut inject = clock.edge_at_or_after(now).max(n.src_free[src]);
    if q.len() >= depth {
        let oldest = q[q.len() - depth];
        if oldest > inject {
            n.backpressure += oldest - inject;
            inject = oldest;
        }
    }
    n.src_free[src] = inject + occupancy;
    let arrive = inject + clock.cycles(latency + rng.upto(jitter) as u64);
    let at_dst = reserve(&mut n.dst_busy[dst], arrive, occupancy, now);
    let path = &mut n.last[src * n.ndst + dst];
    let delivered = (at_dst + occupancy).max(*path);
    *path = delivered;
    q.push_back(delivered);
    n.messages += 1;
    n.bytes += bytes as u64;
    delivered
}

/// Reserves `occ` picoseconds on a destination port at the earliest free time at or after `arrive`;
/// intervals that ended by `now` are forgotten (nothing sent from now on arrives before now).
fn reserve(busy: &mut BTreeMap<Time, Time>, arrive: Time, occ: Time, now: Time) -> Time {
    while let Some((&s, &e)) = busy.first_key_value() {
        if e > now {
            break;
        }
        busy.remove(&s);
    }
    let mut t = arrive;
    if let Some((_, &e)) = busy.range(..=t).next_back() {
        t = t.max(e);
    }
    for (&s, &e) in busy.range(t..) {
        if s >= t + occ {
            break;
        }
        t = t.max(e);
    }
    busy.insert(t, t + occ);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xbar(depth: u32, jitter: u32) -> Xbar {
        let mut cfg =
            crate::config::parse_str(include_str!("../../configs/tiny.toml"), "tiny", &[]).unwrap();
        cfg.interconnect.queue_depth = depth;
        cfg.stress.interconnect_jitter = jitter;
        Xbar::new(&cfg)
    }

    #[test]
    fn same_path_is_fifo_even_with_jitter() {
        let mut x = xbar(64, 50);
        let mut rng = SplitMix64::new(7);
        let mut last = 0;
        for i in 0..200 {
            let t = x.send_request(i * 1000, 0, 1, 0, &mut rng);
            assert!(t >= last, "reordered on one path");
            last = t;
        }
    }

    #[test]
    fn different_paths_can_reorder_under_jitter() {
        let mut x = xbar(64, 50);
        let mut rng = SplitMix64::new(3);
        let reordered = (0..200).any(|i| {
            let a = x.send_request(i * 100_000, 0, 0, 0, &mut rng);
            let b = x.send_request(i * 100_000 + 1000, 0, 1, 0, &mut rng);
            b < a
        });
        assert!(reordered);
    }

    #[test]
    fn different_sources_can_overtake_at_one_destination_under_jitter() {
        let mut x = xbar(64, 50);
        let mut rng = SplitMix64::new(3);
        let overtaken = (0..200).any(|i| {
            let a = x.send_request(i * 100_000, 0, 0, 0, &mut rng);
            let b = x.send_request(i * 100_000 + 1000, 1, 0, 0, &mut rng);
            b < a
        });
        assert!(
            overtaken,
            "a later message from another SM never arrived first"
        );
    }

    #[test]
    fn destination_port_never_overlaps_two_messages() {
        let mut busy = BTreeMap::new();
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

    #[test]
    fn full_queue_delays_injection() {
        let mut x = xbar(2, 0);
        let mut rng = SplitMix64::new(1);
        let t1 = x.send_request(0, 0, 0, 128, &mut rng);
        let _t2 = x.send_request(0, 0, 1, 128, &mut rng);
        let t3 = x.send_request(0, 0, 2, 128, &mut rng);
        assert!(t3 > t1, "third message must wait for the first delivery");
        assert!(x.stats().backpressure_ps > 0);
    }
}
