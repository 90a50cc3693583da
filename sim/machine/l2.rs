//! An L2 slice: the device's point of coherence for the addresses it owns, with its atomic unit.
//!
//! Models: address-sliced ownership (linear or XOR hash), a set-associative write-back,
//! write-allocate tag array with LRU, hit latency, MSHRs with same-line requests queued in arrival
//! order behind an outstanding fill (so one line's accesses are served in the order they arrived — the
//! per-location coherence order), one request accepted per L2 cycle, dirty write-backs to DRAM on
//! eviction. A write miss that covers the whole line allocates it without reading DRAM (nothing of the
//! old line survives). With `l2.write_validate` every write miss does, the slice keeping per way a
//! byte mask of what is valid, and a read or atomic that needs an invalid byte fetches the line then,
//! waiting in an MSHR like any miss (GPU L2s keep per-sector byte masks and fetch on read, as
//! Accel-Sim's `lazy_fetch_on_read` L2 models); without it a partial write miss fetches the line
//! first. Values are read and written in device memory (`memory.rs`) at the cycle a request is
//! served. Atomics are performed there too, timed by the slice's atomic unit (`atomic_unit.rs`).
//!
//! The split L2 of the A100 and H100 (`l2.far_latency` > 0): SMs and slices form two partitions
//! (halves by index, `xbar.rs`); a line is homed in one slice, and a request from an SM of the other
//! partition crosses the inter-partition link, `far_latency` L2 cycles more each way, and waits for
//! the link's bandwidth (`l2.far_bytes_per_cycle`, `far_link.rs`).
//!
//! The copy a partition keeps of lines homed in the other one for its own SMs (`l2.near_copy_lines`)
//! is decided on the SM's side: a read of a far line whose copy is held takes the near path both ways
//! (`near_copy.rs`, where its deviations are listed); the value is still read here, at the home slice.
//!
//! The slice's input: requests the crossbar delivered wait here in arrival order, one accepted per L2
//! cycle. With `l2.input_depth` > 0 it is bounded by credits (`credit.rs`): each SM may have that
//! many requests to this slice whose credit has not come back, and the slice gives a request's credit
//! back (`Outbox::credits`) when the request leaves the input — accepted, into an MSHR or served; a
//! request sent back to the head for want of an MSHR keeps it. With 0 (the default) the input is
//! unbounded, the crossbar's source queues (`interconnect.queue_depth`) the only backpressure before it.
//!
//! Not modelled: sectored L2 fills (whole lines move to and from DRAM), L2 compression, copies of far
//! lines taking capacity from the partition's own lines.

use super::atomic::perform_batch;
use super::atomic_unit::AtomicUnit;
use super::cache::{AddrMap, TagArray};
use super::ctx::Ctx;
use super::dram::Dram;
use super::msg::*;
use super::pool::MAX_LINE;
use super::provenance::{ProvEvent, ServeKind};
use super::xbar::{SourcePort, XbarSpec};
use crate::config::L2Spec;
use crate::engine::{Clock, Time};
use std::collections::VecDeque;

#[derive(Default)]
pub struct SliceStats {
    pub reads: u64,
    pub writes: u64,
    pub atomics: u64,
    pub hits: u64,
    pub misses: u64,
    pub mshr_merges: u64,
    /// Write misses allocated without a DRAM read (whole-line writes; with `l2.write_validate`,
    /// every write miss).
    pub write_allocs: u64,
    /// With `l2.write_validate`: reads and atomics that hit a line whose needed bytes no write had
    /// made valid, and fetched it.
    pub read_fills: u64,
    pub writebacks: u64,
    pub mshr_stall_ps: Time,
    /// The most requests waiting in the input at once (kept only with `l2.input_depth` > 0).
    pub input_max: u32,
}

pub struct L2Slice {
    id: u16,
    clock: Clock,
    latency: u64,
    line_bytes: u32,
    tags: TagArray,
    dirty: Vec<bool>,
    /// `l2.write_validate`, and the bytes valid in each way a write miss allocated, until they are
    /// all valid (a way not here holds its whole line): a few ways at a time, so a map instead of
    /// a mask per way that a large L2 would zero at start.
    write_validate: bool,
    partial: AddrMap<u128>,
    /// `l2.membar_ack`: L2 cycles to answer a membar token.
    membar_ack: u64,
    max_mshrs: usize,
    mshrs: AddrMap<Vec<MemReq>>,
    /// Emptied waiter lists of filled MSHRs, reused by the next misses (no allocation per miss).
    spare: Vec<Vec<MemReq>>,
    input: VecDeque<MemReq>,
    /// `l2.input_depth` > 0: a request's credit goes back to its SM when it leaves the input.
    credits: bool,
    tick_pending: bool,
    /// The L2 cycle (clock edge) the slice last accepted a request in: one per cycle, so a request
    /// arriving in that cycle after it waits for the next.
    accepted_at: Option<Time>,
    stalled_since: Option<Time>,
    pub atomic: AtomicUnit,
    /// This slice's sending port on the response network.
    pub port: SourcePort,
    xspec: XbarSpec,
    pub stats: SliceStats,
}

impl L2Slice {
    /// Slice `id`: its share of the L2 (`spec`), in the L2 `clock`, with its atomic unit and its
    /// sending port to each of `sms` SMs.
    pub fn new(
        id: u16,
        spec: &L2Spec,
        clock: Clock,
        atomic: AtomicUnit,
        xbar: XbarSpec,
        sms: usize,
    ) -> L2Slice {
        let lines_per_slice = spec.size_bytes / spec.slices as u64 / spec.line_bytes as u64;
        let sets = (lines_per_slice / spec.ways as u64) as u32;
        // A hashed slice map hashes the set index too: on the H100 16,384 lines 4 KiB apart stay in the
        // L2 (302 cycles a step, reports/measured/nvidia-h100-80gb-hbm3-2026-11-27); indexed by the
        // low bits they fell into 8 of each slice's 256 sets and went to DRAM.
        let tags = TagArray::new(
            sets,
            spec.ways,
            spec.line_bytes,
            (spec.hash == crate::config::SliceHash::Xor).then_some(spec.slices),
        );
        let n = tags.capacity_lines();
        L2Slice {
            id,
            clock,
            latency: spec.latency as u64,
            line_bytes: spec.line_bytes,
            tags,
            dirty: vec![false; n],
            write_validate: spec.write_validate,
            partial: AddrMap::default(),
            membar_ack: spec.membar_ack.unwrap_or(0) as u64,
            max_mshrs: spec.mshrs as usize,
            mshrs: AddrMap::default(),
            spare: Vec::new(),
            input: VecDeque::new(),
            credits: spec.input_depth > 0,
            tick_pending: false,
            accepted_at: None,
            stalled_since: None,
            atomic,
            port: xbar.port(false, id as usize, sms),
            xspec: xbar,
            stats: SliceStats::default(),
        }
    }

    /// A hint that a request for `line` will arrive (`engine::prefetch`).
    #[inline]
    pub fn prefetch(&self, line: u64) {
        self.tags.prefetch(line);
    }

    /// A request delivered by the interconnect.
    pub fn receive(&mut self, req: MemReq, ctx: &mut Ctx) {
        self.tags.prefetch(req.line);
        self.input.push_back(req);
        if self.credits {
            self.stats.input_max = self.stats.input_max.max(self.input.len() as u32);
        }
        self.wake(ctx);
    }

    fn wake(&mut self, ctx: &mut Ctx) {
        if !self.tick_pending && self.stalled_since.is_none() && !self.input.is_empty() {
            self.tick_pending = true;
            let t = self
                .clock
                .free_edge_at_or_after(ctx.now(), self.accepted_at);
            ctx.q.at(t, Event::SliceTick(self.id));
        }
    }

    /// Accepts one request per L2 cycle.
    pub fn tick(&mut self, ctx: &mut Ctx, dram: &mut Dram) {
        self.tick_pending = false;
        let Some(req) = self.input.pop_front() else {
            return;
        };
        let sm = req.sm;
        if let ReqKind::Membar = req.kind {
            // A membar token names no line: answered once it leaves the input, behind everything
            // that arrived before it (`ordering::membar`).
            self.serve(req, ctx, None);
        } else if let Some(waiters) = self.mshrs.get_mut(&req.line) {
            waiters.push(req);
            self.stats.mshr_merges += 1;
        } else if let Some(w) = self.tags.lookup(req.line) {
            let w = w.0 as usize;
            if self.write_validate && !self.has_bytes(&req, w) {
                // A write allocated the line without its old bytes, and this access needs some:
                // fetch it now (the waiting requests are served in order when it arrives).
                if !self.fetch(req, ctx, dram) {
                    return;
                }
                self.stats.misses += 1;
                self.stats.read_fills += 1;
            } else {
                self.stats.hits += 1;
                self.serve(req, ctx, Some(w));
            }
        } else if self.whole_line_write(&req)
            || (self.write_validate && matches!(req.kind, ReqKind::Write { .. }))
        {
            // Nothing of the old line that the write covers survives it: the line is allocated
            // without a DRAM read (as a write-back L2 with per-byte valid bits, or fetch-on-read,
            // does) and written now; with write-validate only the written bytes are valid.
            self.stats.misses += 1;
            self.stats.write_allocs += 1;
            let way = self.install(req.line, ctx, dram);
            if let (Some(w), true) = (way, self.write_validate) {
                self.partial.insert(w as u64, 0);
            }
            self.serve(req, ctx, way);
        } else if !self.fetch(req, ctx, dram) {
            return;
        } else {
            self.stats.misses += 1;
        }
        // Accepted (a request sent back for want of an MSHR returned above).
        debug_assert_ne!(
            self.accepted_at,
            Some(ctx.now()),
            "one request per L2 cycle"
        );
        self.accepted_at = Some(ctx.now());
        if self.credits {
            // The request left the input: its credit goes back to its SM.
            let at = self
                .xspec
                .credit_return(ctx.now(), sm as usize, self.id as usize);
            ctx.out.credits.push((at, sm, self.id));
        }
        if !self.input.is_empty() {
            self.tick_pending = true;
            ctx.q.after(self.clock.period, Event::SliceTick(self.id));
        }
    }

    /// Sends `req`'s line to DRAM for a fill, `req` waiting in a new MSHR; false (and `req` back at
    /// the head of the input) when every MSHR is taken.
    fn fetch(&mut self, req: MemReq, ctx: &mut Ctx, dram: &mut Dram) -> bool {
        if self.mshrs.len() >= self.max_mshrs {
            // Head-of-line blocking until a fill frees an MSHR: backpressure into the interconnect.
            self.input.push_front(req);
            self.stalled_since = Some(ctx.now());
            return false;
        }
        // Booked at once, or (FR-FCFS) the DRAM schedules the fill when it serves the request.
        if let Some(done) = dram.request(ctx, req.line, false, self.id, Some((req.sm, req.tag))) {
            if let Some(r) = ctx.rec.as_deref_mut() {
                r.dram_fill(req.sm, req.tag, ctx.q.now(), done, self.line_bytes);
            }
            ctx.q.at(done, Event::DramFill(self.id, req.line));
        }
        let mut waiters = self.spare.pop().unwrap_or_default();
        waiters.push(req);
        self.mshrs.insert(req.line, waiters);
        true
    }

    /// Every byte of the line.
    fn full(&self) -> u128 {
        if self.line_bytes >= 128 {
            u128::MAX
        } else {
            (1u128 << self.line_bytes) - 1
        }
    }

    /// Whether way `w` holds the bytes `req` needs (a write needs none; an atomic the whole line).
    fn has_bytes(&self, req: &MemReq, w: usize) -> bool {
        let Some(&valid) = self.partial.get(&(w as u64)) else {
            return true;
        };
        match req.kind {
            ReqKind::Read { mask } => mask & !valid == 0,
            ReqKind::Write { .. } => true,
            ReqKind::Atomic { .. } => false,
            ReqKind::Membar => true,
        }
    }

    /// A write whose byte mask covers the whole line.
    fn whole_line_write(&self, req: &MemReq) -> bool {
        let full = self.full();
        matches!(req.kind, ReqKind::Write { mask, .. } if mask == full)
    }

    /// DRAM delivered `line`: install it and serve everything that waited for it, in arrival order.
    pub fn fill(&mut self, line: u64, ctx: &mut Ctx, dram: &mut Dram) {
        let Some(mut waiters) = self.mshrs.remove(&line) else {
            return;
        };
        // With write-validate the line may be here already, partly valid: the fill completes it.
        let here = if self.write_validate {
            self.tags.lookup(line).map(|w| w.0 as usize)
        } else {
            None
        };
        let way = match here {
            Some(w) => {
                self.partial.remove(&(w as u64));
                Some(w)
            }
            None => self.install(line, ctx, dram),
        };
        for r in waiters.drain(..) {
            self.serve(r, ctx, way);
        }
        self.spare.push(waiters);
        if let Some(since) = self.stalled_since.take() {
            self.stats.mshr_stall_ps += ctx.now() - since;
            self.wake(ctx);
        }
    }

    /// Before the launch: `line` is here and dirty (written by a copy just before), evicting without a
    /// write-back whatever its set's least recently used way held (`build::warm_l2`).
    pub fn preload(&mut self, line: u64) {
        if let Some((w, _)) = self.tags.insert(line, |_| false) {
            self.dirty[w.0 as usize] = true;
            self.partial.remove(&(w.0 as u64));
        }
    }

    /// Installs `line` (clean), writing back the dirty line it evicts; its way.
    fn install(&mut self, line: u64, ctx: &mut Ctx, dram: &mut Dram) -> Option<usize> {
        match self.tags.insert(line, |_| false) {
            Some((w, evicted)) => {
                if evicted.is_some() && self.dirty[w.0 as usize] {
                    self.stats.writebacks += 1;
                    dram.request(ctx, evicted.unwrap_or(0), true, self.id, None);
                    if let Some(r) = ctx.rec.as_deref_mut() {
                        r.dram_write(ctx.q.now(), self.line_bytes);
                    }
                }
                self.dirty[w.0 as usize] = false;
                if !self.partial.is_empty() {
                    self.partial.remove(&(w.0 as u64));
                }
                Some(w.0 as usize)
            }
            None => None,
        }
    }

    fn serve(&mut self, req: MemReq, ctx: &mut Ctx, way: Option<usize>) {
        let now = ctx.now();
        let ready = now + self.clock.cycles(self.latency);
        if let Some(p) = ctx.prov.as_deref_mut() {
            let kind = match req.kind {
                ReqKind::Read { .. } => Some(ServeKind::Read),
                ReqKind::Write { .. } => Some(ServeKind::Write),
                ReqKind::Atomic { .. } => Some(ServeKind::Atomic),
                // A membar touches no location: nothing for the provenance.
                ReqKind::Membar => None,
            };
            let (slice, sm, tag, line) = (self.id, req.sm, req.tag, req.line);
            if let Some(kind) = kind {
                p.push(
                    now,
                    ProvEvent::L2Serve {
                        slice,
                        sm,
                        tag,
                        line,
                        kind,
                    },
                );
            }
        }
        let mut atomic = None;
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
                    // (Most runs have no partly valid line: no hashing then.)
                    let v = if self.partial.is_empty() {
                        None
                    } else {
                        self.partial.get_mut(&(w as u64))
                    };
                    if let Some(v) = v {
                        *v |= mask;
                        if *v == self.full() {
                            self.partial.remove(&(w as u64));
                        }
                    }
                }
                (RespKind::WriteAck, 0, ready)
            }
            ReqKind::Atomic { batch } => {
                self.stats.atomics += 1;
                let b = ctx.batches.get_mut(batch.0);
                let done = self
                    .atomic
                    .schedule(now + self.clock.cycles(self.latency), b);
                atomic = Some((now + self.clock.cycles(self.latency), done));
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
            ReqKind::Membar => (
                RespKind::MembarAck,
                0,
                now + self.clock.cycles(self.membar_ack),
            ),
        };
        let t = self
            .port
            .send(&self.xspec, at, req.sm as usize, payload, req.near, ctx.rng);
        if let Some(r) = ctx.rec.as_deref_mut() {
            r.served(req.sm, req.tag, self.id, now, atomic, at, t.arrive);
        }
        let resp = MemResp {
            tag: req.tag,
            line: req.line,
            kind,
            near: req.near,
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
        let dirty = &mut self.dirty;
        self.tags
            .invalidate_range(start, end, |w| dirty[w.0 as usize] = false);
    }
}
