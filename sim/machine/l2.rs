//! An L2 slice: the device's point of coherence for the addresses it owns, with its atomic unit.
//!
//! Models: address-sliced ownership (linear or XOR hash), a set-associative write-back,
//! write-allocate tag array with LRU, hit latency, MSHRs with same-line requests queued in arrival
//! order behind an outstanding fill (so one line's accesses are served in the order they arrived — the
//! per-location coherence order), one request accepted per L2 cycle, dirty write-backs to DRAM on
//! eviction. Values are read and written in [`GlobalMemory`] at the cycle a request is served.
//!
//! The atomic unit: operations start at most `ops_per_cycle` per cycle; one address takes one cycle per
//! operation (read-modify-write with forwarding), so operations on one address serialise; each result
//! returns `latency` cycles after it starts; at most `queue_depth` operations wait. With
//! `combine_same_address_lanes` a warp's lanes on one address are one operation (the unit computes each
//! lane's returned value as a prefix); without it each lane is its own operation.
//!
//! Not modelled: sectored L2 fills (whole lines move to and from DRAM), L2 compression, far/near
//! partitions of the H100's split L2.

use super::cache::TagArray;
use super::dram::Dram;
use super::msg::*;
use super::xbar::{SourcePort, XbarSpec};
use crate::config::{GpuConfig, SliceHash};
use crate::engine::{Clock, Time};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for addresses (keys that are already well spread in their low bits after a multiply):
/// the default SipHash costs more than the atomic unit's whole bookkeeping.
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let x = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
}

/// A map keyed by address.
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// Which slice owns a line.
pub fn slice_of(line: u64, line_bytes: u32, slices: u32, hash: SliceHash) -> u16 {
    let idx = line >> line_bytes.trailing_zeros();
    let s = slices as u64;
    (match hash {
        SliceHash::Linear => idx % s,
        SliceHash::Xor => {
            let mut x = idx;
            let mut h = 0u64;
            while x != 0 {
                h ^= x;
                x /= s.max(2);
            }
            h % s
        }
    }) as u16
}

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
    next_issue: Time,
    inflight: VecDeque<Time>,
    /// The addresses still busy after the latest arrival, ascending, each with when it is free
    /// again. Arrivals come in time order, so an address free by an arrival never matters again:
    /// each batch merges its own (sorted) addresses into this list and drops the ones that are free,
    /// so the list holds only the few addresses of the last cycles' operations (no hashing, no
    /// growth).
    busy: Vec<(u64, Time)>,
    /// The next `busy`, built by the merge (kept for its capacity).
    merged: Vec<(u64, Time)>,
    /// The latest time in `busy`: when it is past, `busy` is empty in effect.
    busy_until: Time,
    pub stats: AtomicUnitStats,
}

impl AtomicUnit {
    pub fn new(clock: Clock, spec: &crate::config::AtomicUnitSpec, combine: bool) -> AtomicUnit {
        AtomicUnit {
            clock,
            latency: spec.latency as u64,
            ops_per_cycle: spec.ops_per_cycle.max(1) as u64,
            depth: spec.queue_depth.max(1) as usize,
            combine,
            next_issue: 0,
            inflight: VecDeque::new(),
            busy: Vec::new(),
            merged: Vec::new(),
            busy_until: 0,
            stats: AtomicUnitStats::default(),
        }
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
        let combine = self.combine && b.kind.combinable();
        if self.busy_until <= now {
            self.busy.clear();
        }
        // Merge the batch's addresses into the busy list (both ascending), keeping what is still
        // busy after `now`.
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        let busy = &self.busy;
        let mut bi = 0;
        let mut i = 0;
        while i < n {
            let addr = addrs[i];
            let mut j = i + 1;
            while j < n && addrs[j] == addr {
                j += 1;
            }
            let lanes_here = (j - i) as u64;
            i = j;
            while bi < busy.len() && busy[bi].0 < addr {
                if busy[bi].1 > now {
                    merged.push(busy[bi]);
                }
                bi += 1;
            }
            let mut free = 0;
            if bi < busy.len() && busy[bi].0 == addr {
                free = busy[bi].1;
                bi += 1;
            }
            let k = if combine { 1 } else { lanes_here };
            let a_start = start.max(free);
            self.stats.serial_ps += a_start - start;
            let a_end = a_start + c.cycles(k);
            merged.push((addr, a_end));
            self.busy_until = self.busy_until.max(a_end);
            done = done.max(a_end - c.period + c.cycles(self.latency));
            ops += k;
        }
        merged.extend(busy[bi..].iter().filter(|e| e.1 > now));
        self.merged = std::mem::replace(&mut self.busy, merged);
        self.next_issue = start + c.cycles(ops.div_ceil(self.ops_per_cycle));
        self.inflight.push_back(done);
        self.stats.ops += ops;
        self.stats.lane_ops += b.lanes.len() as u64;
        self.stats.busy_ps += c.cycles(ops.div_ceil(self.ops_per_cycle));
        done
    }
}

#[derive(Default)]
pub struct SliceStats {
    pub reads: u64,
    pub writes: u64,
    pub atomics: u64,
    pub hits: u64,
    pub misses: u64,
    pub mshr_merges: u64,
    pub writebacks: u64,
    pub mshr_stall_ps: Time,
}

pub struct L2Slice {
    id: u16,
    clock: Clock,
    latency: u64,
    line_bytes: u32,
    tags: TagArray,
    dirty: Vec<bool>,
    max_mshrs: usize,
    mshrs: AddrMap<Vec<MemReq>>,
    input: VecDeque<MemReq>,
    tick_pending: bool,
    stalled_since: Option<Time>,
    pub atomic: AtomicUnit,
    /// This slice's sending port on the response network.
    pub port: SourcePort,
    xspec: XbarSpec,
    pub stats: SliceStats,
}

impl L2Slice {
    pub fn new(id: u16, cfg: &GpuConfig) -> L2Slice {
        let clock = Clock::from_mhz(cfg.clocks.l2_mhz);
        let lines_per_slice = cfg.l2.size_bytes / cfg.l2.slices as u64 / cfg.l2.line_bytes as u64;
        let sets = (lines_per_slice / cfg.l2.ways as u64).max(1) as u32;
        let tags = TagArray::new(sets, cfg.l2.ways, cfg.l2.line_bytes);
        let n = tags.capacity_lines();
        L2Slice {
            id,
            clock,
            latency: cfg.l2.latency as u64,
            line_bytes: cfg.l2.line_bytes,
            tags,
            dirty: vec![false; n],
            max_mshrs: cfg.l2.mshrs.max(1) as usize,
            mshrs: AddrMap::default(),
            input: VecDeque::new(),
            tick_pending: false,
            stalled_since: None,
            atomic: AtomicUnit::new(
                clock,
                &cfg.atomics.l2,
                cfg.atomics.combine_same_address_lanes,
            ),
            port: SourcePort::new(cfg.sm.count as usize),
            xspec: XbarSpec::new(cfg),
            stats: SliceStats::default(),
        }
    }

    /// A request delivered by the interconnect.
    pub fn receive(&mut self, req: MemReq, ctx: &mut Ctx) {
        self.input.push_back(req);
        self.wake(ctx);
    }

    fn wake(&mut self, ctx: &mut Ctx) {
        if !self.tick_pending && self.stalled_since.is_none() && !self.input.is_empty() {
            self.tick_pending = true;
            let t = self.clock.edge_at_or_after(ctx.now());
            ctx.q.at_or_now(t, Event::SliceTick(self.id));
        }
    }

    /// Accepts one request per L2 cycle.
    pub fn tick(&mut self, ctx: &mut Ctx, dram: &mut Dram) {
        self.tick_pending = false;
        let Some(req) = self.input.pop_front() else {
            return;
        };
        if let Some(waiters) = self.mshrs.get_mut(&req.line) {
            waiters.push(req);
            self.stats.mshr_merges += 1;
        } else if let Some(w) = self.tags.lookup(req.line) {
            self.stats.hits += 1;
            self.serve(req, ctx, Some(w.0 as usize));
        } else if self.mshrs.len() >= self.max_mshrs {
            // Head-of-line blocking until a fill frees an MSHR: backpressure into the interconnect.
            self.input.push_front(req);
            self.stalled_since = Some(ctx.now());
            return;
        } else {
            self.stats.misses += 1;
            let done = dram.access(ctx.now(), req.line, false);
            ctx.q.at_or_now(done, Event::DramFill(self.id, req.line));
            self.mshrs.insert(req.line, vec![req]);
        }
        if !self.input.is_empty() {
            self.tick_pending = true;
            ctx.q.after(self.clock.period, Event::SliceTick(self.id));
        }
    }

    /// DRAM delivered `line`: install it and serve everything that waited for it, in arrival order.
    pub fn fill(&mut self, line: u64, ctx: &mut Ctx, dram: &mut Dram) {
        let Some(waiters) = self.mshrs.remove(&line) else {
            return;
        };
        let way = match self.tags.insert(line, |_| false) {
            Some((w, evicted)) => {
                if evicted.is_some() && self.dirty[w.0 as usize] {
                    self.stats.writebacks += 1;
                    dram.access(ctx.now(), evicted.unwrap_or(0), true);
                }
                self.dirty[w.0 as usize] = false;
                Some(w.0 as usize)
            }
            None => None,
        };
        for r in waiters {
            self.serve(r, ctx, way);
        }
        if let Some(since) = self.stalled_since.take() {
            self.stats.mshr_stall_ps += ctx.now() - since;
            self.wake(ctx);
        }
    }

    fn serve(&mut self, req: MemReq, ctx: &mut Ctx, way: Option<usize>) {
        let now = ctx.now();
        let ready = now + self.clock.cycles(self.latency);
        let (kind, payload, at) = match req.kind {
            ReqKind::Read { mask } => {
                self.stats.reads += 1;
                let mut buf = [0u8; MAX_LINE];
                ctx.mem.read_line(req.line, self.line_bytes, &mut buf);
                let id = ctx.lines.alloc(buf);
                (RespKind::Data(DataId(id)), mask.count_ones(), ready)
            }
            ReqKind::Write { mask, data } => {
                self.stats.writes += 1;
                let buf = *ctx.lines.get(data.0);
                ctx.lines.release(data.0);
                ctx.mem.write_masked(req.line, &buf, mask);
                if let Some(w) = way {
                    self.dirty[w] = true;
                }
                (RespKind::WriteAck, 0, ready)
            }
            ReqKind::Atomic { batch } => {
                self.stats.atomics += 1;
                let b = ctx.batches.get_mut(batch.0);
                let done = self
                    .atomic
                    .schedule(now + self.clock.cycles(self.latency), b);
                // Without values (trace replay) there is nothing to compute.
                if ctx.mem.has_values() {
                    perform_batch(b, ctx.mem);
                }
                if let Some(w) = way {
                    self.dirty[w] = true;
                }
                let n = b.lanes.len() as u32 * 4;
                (RespKind::AtomicDone(batch), n, done)
            }
        };
        let t = self
            .port
            .send(&self.xspec, at, req.sm as usize, payload, ctx.rng);
        let resp = MemResp {
            tag: req.tag,
            line: req.line,
            kind,
        };
        ctx.out.post(
            t,
            self.id,
            Event::L1FromXbar(req.sm, resp),
            ctx.lines,
            ctx.batches,
        );
    }

    /// Nothing queued and no miss outstanding (the contract tests' drain check).
    #[cfg(test)]
    pub fn idle(&self) -> bool {
        self.input.is_empty() && self.mshrs.is_empty()
    }

    /// Drops the lines overlapping `[start, end)`: a host copy wrote them in DRAM, so their cached
    /// copies (dirty or not) are stale and the next access misses.
    pub fn drop_range(&mut self, start: u64, end: u64) {
        let lb = self.line_bytes as u64;
        for w in 0..self.tags.capacity_lines() as u32 {
            let way = super::cache::Way(w);
            if let Some(line) = self.tags.line_at(way) {
                if line < end && line + lb > start {
                    self.tags.invalidate(way);
                    self.dirty[w as usize] = false;
                }
            }
        }
    }
}
