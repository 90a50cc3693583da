//! The L1 data cache of one SM: write-through, possibly stale, invalidated by acquire at device scope.
//!
//! Models: a set-associative tag array (LRU) with per-sector valid bits; sectored misses (only the
//! sectors a request needs travel); MSHRs that merge later requests for the same line (a request whose
//! sectors are missing from the MSHR sends one more read); write-through of every drained store, which
//! updates a present line (`write_through_no_allocate`) or allocates it (`write_through_allocate`);
//! stores that arrive while a fill is outstanding are kept as ordered overlays, so a load that merged
//! into the MSHR *after* a store sees it and a load that merged *before* does not (per-location
//! coherence for the SM's own threads); `InvalidateAll` drops every line and starts a new epoch:
//! requests after it never merge into fills issued before it, whose data is not installed. Accesses
//! at device or system level bypass the array; a system-level load or atomic is served by the L2
//! slice that homes its line, as a device-level one is: every buffer lives in device memory, so
//! nothing crosses to the host (the H100 measured 296 cycles for `ld.relaxed.sys` and
//! `ld.relaxed.gpu` alike, `reports/measured/nvidia-h100-80gb-hbm3-2026-11-27/cuda/cuda-micro.jsonl`).
//! Not modelled: host-resident (pinned or migrated) memory, whose accesses would cross the link.
//! With `atomics.work_group_global_at = "l1"`,
//! work_group-scope atomics on global memory run here, on the line, and write their result through
//! (an overlay on a fill of the line in flight, as a store's bytes are).
//!
//! A run without values (trace replay) keeps the tags and sector state only: the array holds no line
//! data, so a timing-only L1 neither allocates nor touches the megabytes of a full data array.
//!
//! Requests come from the SM's load/store unit through its bounded port (`../sm/lsu/port.rs`,
//! `sm.l1_port_depth`): what waits here for an MSHR still occupies the port, so a full L1 pushes back
//! on the warps and the store buffer. All traffic leaves through one queue into the interconnect, `latency` cycles after it arrived
//! (tag check), so a thread's accesses to one slice stay in order. The extra round trip of the system
//! point (`system.latency`) is added to the acknowledgement of a system-level write only: that is
//! what a system-scope release waits for. A membar (`L1Req::Membar`, `ordering::membar`, with
//! `l2.membar_ack`) leaves through the same queue as one token to every slice, behind everything
//! taken before it; when every slice has answered the L1 tells the SM (`CoreResp::MembarAcked`),
//! `system.latency` later at system level.
//!
//! With `l2.input_depth` > 0 the L1 holds that many credits for each slice's input (`../credit.rs`):
//! a request to a slice takes one before it enters the interconnect; one without waits here, behind
//! any other for that slice (the path stays FIFO), and is sent when a credit comes back
//! ([`L1::credit_returned`], `Event::L2Credit`). While one waits the L1 takes no new request from its
//! input queue (head-of-line, as a miss queue that cannot inject stalls the L1's pipeline); what waits
//! there still occupies the LSU's port, so the push-back reaches the warps with `sm.l1_port_depth`.
//!
//! Not modelled: L1/shared-memory carve-out changes during a run, texture paths, streaming
//! (evict-first) hints.

mod lines;
mod prov;

use super::atomic::perform_batch;
use super::atomic_unit::AtomicUnit;
use super::cache::{AddrMap, TagArray, Way};
use super::credit::Credits;
use super::ctx::Ctx;
use super::msg::*;
use super::near_copy::NearCopies;
use super::pool::{LineBuf, Pool, MAX_LINE};
use super::provenance::ProvEvent;
use super::slice_map::SliceMap;
use super::xbar::{SourcePort, XbarSpec};
use crate::config::{L1Spec, L1WritePolicy};
use crate::engine::{Clock, Time};
use lines::{copy_sectors, LineStore, LineView};
use std::collections::VecDeque;

/// A request waiting for a fill.
#[derive(Debug, Clone, Copy)]
enum Waiter {
    Load {
        who: Requester,
        overlays_seen: usize,
    },
    Atomic {
        who: Requester,
        batch: BatchId,
        seq: u64,
    },
}

struct Mshr {
    line: u64,
    epoch: u32,
    sectors: u32,
    outstanding: u32,
    data: LineBuf,
    /// Stores accepted while the fill was outstanding, oldest first.
    overlays: Vec<(LineBuf, u128)>,
    waiters: Vec<Waiter>,
    live: bool,
    /// Detached from its line by a device-level access (see [`L1::drop_line`]): its data is handed
    /// to the requests that merged before, never installed.
    detached: bool,
}

/// What an interconnect response belongs to.
#[derive(Debug, Clone, Copy)]
enum Pending {
    FillPart {
        mshr: u32,
        sectors: u32,
    },
    Bypass {
        who: Requester,
    },
    Write {
        by: Requester,
        system: bool,
        seq: u64,
    },
    Atomic {
        who: Requester,
    },
    /// One slice's answer to membar `id` (an index into [`L1::membars`]).
    Membar {
        id: u32,
    },
}

/// A membar waiting for its slices' answers (`L1Req::Membar`).
#[derive(Debug, Clone, Copy)]
struct MembarWait {
    warp: u16,
    system: bool,
    /// Slices that have not answered yet.
    left: u32,
}

#[derive(Default)]
pub struct L1Stats {
    pub loads: u64,
    pub load_hits: u64,
    pub load_misses: u64,
    pub mshr_merges: u64,
    pub bypass_loads: u64,
    pub stores: u64,
    pub atomics: u64,
    pub invalidations: u64,
    pub mshr_full_ps: Time,
    pub sector_fills: u64,
}

pub struct L1 {
    sm: u16,
    clock: Clock,
    latency: Time,
    system_latency: Time,
    line_bytes: u32,
    sector_bytes: u32,
    /// The byte mask of each sector of a line.
    sector_masks: Vec<u128>,
    policy: L1WritePolicy,
    slices: SliceMap,
    tags: TagArray,
    /// The far lines whose copy the SM's partition holds (`l2.near_copy_lines`; `None`: no copies).
    pub near: Option<NearCopies>,
    data: LineStore,
    valid: Vec<u32>,
    mshrs: Pool<Mshr>,
    /// Emptied waiter lists of completed fills, reused by the next misses (no allocation per miss).
    spare_waiters: Vec<Vec<Waiter>>,
    mshr_of_line: AddrMap<u32>,
    live_mshrs: usize,
    max_mshrs: usize,
    pending: Pool<Pending>,
    /// Membars waiting for their slices' answers.
    membars: Pool<MembarWait>,
    input: VecDeque<L1Req>,
    blocked_since: Option<Time>,
    epoch: u32,
    pub atomic: AtomicUnit,
    /// This SM's sending port on the request network.
    pub port: SourcePort,
    /// Credits for each slice's input (`l2.input_depth`), and the requests waiting for one.
    pub credits: Credits<Held>,
    xspec: XbarSpec,
    pub stats: L1Stats,
}

/// A request to a slice waiting for a credit: what it sends, and when it would have entered the
/// interconnect.
#[derive(Debug, Clone, Copy)]
pub struct Held {
    req: MemReq,
    payload: u32,
    at: Time,
}

/// What the builder hands an L1 besides its spec (`l1` in the config).
pub struct L1Resources {
    /// The SM's (core) clock.
    pub clock: Clock,
    /// The extra round trip of the system point (`system.latency`), core cycles.
    pub system_latency: u64,
    /// Which slice each request goes to.
    pub slices: SliceMap,
    pub xbar: XbarSpec,
    /// The unit that performs work_group-scope atomics here (`atomics.work_group_global_at = "l1"`).
    pub atomic: AtomicUnit,
    /// Whether the run has values (false for a trace replay, whose L1 keeps tags and sector state
    /// only).
    pub values: bool,
    /// The near copies of far lines (`l2.near_copy_lines` with a split L2), or `None`.
    pub near_copies: Option<NearCopies>,
    /// Credits for each slice's input (`l2.input_depth`; 0: unbounded).
    pub input_depth: u32,
}

impl L1 {
    /// The L1 of SM `sm`.
    pub fn new(sm: u16, c: &L1Spec, res: L1Resources) -> L1 {
        let sets = c.size_bytes / c.line_bytes / c.ways;
        let tags = TagArray::new(sets, c.ways, c.line_bytes, None);
        let n = tags.capacity_lines();
        let clock = res.clock;
        L1 {
            sm,
            clock,
            latency: clock.cycles(c.latency as u64),
            system_latency: clock.cycles(res.system_latency),
            line_bytes: c.line_bytes,
            sector_bytes: c.sector_bytes,
            sector_masks: (0..c.line_bytes / c.sector_bytes)
                .map(|i| super::memory::byte_mask(i * c.sector_bytes, c.sector_bytes))
                .collect(),
            policy: c.write_policy,
            slices: res.slices,
            tags,
            near: res.near_copies,
            data: LineStore::new(n, res.values),
            valid: vec![0; n],
            mshrs: Pool::default(),
            spare_waiters: Vec::new(),
            mshr_of_line: AddrMap::default(),
            live_mshrs: 0,
            max_mshrs: c.mshrs as usize,
            pending: Pool::default(),
            membars: Pool::default(),
            input: VecDeque::new(),
            blocked_since: None,
            epoch: 0,
            atomic: res.atomic,
            port: res
                .xbar
                .port(true, sm as usize, res.slices.slices() as usize),
            credits: Credits::new(res.input_depth, res.slices.slices() as usize),
            xspec: res.xbar,
            stats: L1Stats::default(),
        }
    }

    /// The sectors a byte mask touches.
    fn sectors_of(&self, mask: u128) -> u32 {
        let mut s = 0u32;
        for (i, &m) in self.sector_masks.iter().enumerate() {
            if mask & m != 0 {
                s |= 1 << i;
            }
        }
        s
    }

    /// The bytes of a set of sectors.
    fn sector_bytes_mask(&self, sectors: u32) -> u128 {
        let mut m = 0u128;
        let mut left = sectors;
        while left != 0 {
            m |= self.sector_masks[left.trailing_zeros() as usize];
            left &= left - 1;
        }
        m
    }

    /// Installs the initial value of a line (pre-warming), if a way is free or evictable.
    pub fn prewarm(&mut self, line: u64, bytes: &LineBuf) {
        if let Some((w, _)) = self.tags.insert(line, |_| false) {
            self.data[w.0 as usize] = *bytes;
            self.valid[w.0 as usize] = (1u32 << (self.line_bytes / self.sector_bytes)) - 1;
        }
    }

    pub fn receive(&mut self, req: L1Req, ctx: &mut Ctx) {
        if self.blocked_since.is_some() || !self.input.is_empty() || self.credits.any_waiting() {
            self.input.push_back(req);
            return;
        }
        if !self.process(req, ctx) {
            self.input.push_back(req);
            self.blocked_since = Some(ctx.now());
        }
    }

    /// Requests waiting in the input queue (for want of an MSHR, or behind one that waits): what the
    /// L1 has not taken yet of what it was sent (`sm/lsu/port.rs`).
    #[inline]
    pub fn queued(&self) -> usize {
        self.input.len()
    }

    /// Retries queued requests after an MSHR freed.
    pub fn retry(&mut self, ctx: &mut Ctx) {
        if let Some(since) = self.blocked_since.take() {
            self.stats.mshr_full_ps += ctx.now() - since;
        }
        while !self.credits.any_waiting() {
            let Some(req) = self.input.pop_front() else {
                break;
            };
            if !self.process(req, ctx) {
                self.input.push_front(req);
                self.blocked_since = Some(ctx.now());
                return;
            }
        }
    }

    fn send(&mut self, ctx: &mut Ctx, line: u64, kind: ReqKind, p: Pending, payload: u32) {
        let slice = self.slices.slice_of(line);
        self.send_to(ctx, slice, line, kind, p, payload);
    }

    /// Sends a request to `slice` (the slice homing `line`, or any slice for a membar).
    fn send_to(
        &mut self,
        ctx: &mut Ctx,
        slice: u16,
        line: u64,
        kind: ReqKind,
        p: Pending,
        payload: u32,
    ) {
        let tag = self.pending.alloc(p);
        if let Some(pr) = ctx.prov.as_deref_mut() {
            if let Some(e) = self.prov_send(tag, line, kind, p) {
                pr.push(ctx.q.now(), e);
            }
        }
        let at = ctx.now() + self.latency;
        // A read of a far line whose copy the partition holds takes the near path; a write or an
        // atomic goes to the home slice and drops the SM's copy (`near_copy.rs`).
        let near = match &mut self.near {
            Some(n) if self.xspec.is_far(self.sm as usize, slice as usize) => match kind {
                ReqKind::Read { .. } => n.read(line),
                ReqKind::Write { .. } | ReqKind::Atomic { .. } => {
                    n.drop_copy(line);
                    false
                }
                ReqKind::Membar => false,
            },
            _ => false,
        };
        let req = MemReq {
            sm: self.sm,
            tag,
            line,
            kind,
            near,
        };
        let dst = slice as usize;
        if self.credits.can_send(dst) {
            self.credits.take(dst);
            self.inject(ctx, at, slice, req, payload);
        } else {
            self.credits.wait(dst, at, Held { req, payload, at });
        }
    }

    /// `req` enters the interconnect to `slice` at `at` or as soon as its port allows.
    fn inject(&mut self, ctx: &mut Ctx, at: Time, slice: u16, req: MemReq, payload: u32) {
        let t = self
            .port
            .send(&self.xspec, at, slice as usize, payload, req.near, ctx.rng);
        ctx.out.post(
            t,
            self.sm,
            Event::SliceIn(slice, req),
            ctx.lines,
            ctx.batches,
        );
    }

    /// A credit for `slice`'s input came back: the oldest request waiting for one, if any, is sent;
    /// when none waits any more, the input queue goes on (unless it waits for an MSHR: the fill
    /// that frees one retries it).
    pub fn credit_returned(&mut self, slice: u16, ctx: &mut Ctx) {
        let Some(h) = self.credits.give_back(slice as usize, ctx.now()) else {
            return;
        };
        self.inject(ctx, h.at.max(ctx.now()), slice, h.req, h.payload);
        if !self.credits.any_waiting() && self.blocked_since.is_none() {
            self.retry(ctx);
        }
    }

    fn respond(&self, ctx: &mut Ctx, delay: Time, r: CoreResp) {
        ctx.q.after(delay, Event::SmIn(self.sm, r));
    }

    fn hit_way(&mut self, line: u64, sectors: u32) -> Option<Way> {
        let w = self.tags.lookup(line)?;
        (self.valid[w.0 as usize] & sectors == sectors).then_some(w)
    }

    /// Processes one request; `false` if it must wait for a free MSHR.
    fn process(&mut self, req: L1Req, ctx: &mut Ctx) -> bool {
        match req {
            L1Req::Load {
                who,
                line,
                mask,
                level,
            } => {
                if level != Level::Sm {
                    self.stats.bypass_loads += 1;
                    self.drop_line(line);
                    self.prov_drop(ctx, Some(line));
                    self.send(
                        ctx,
                        line,
                        ReqKind::Read { mask },
                        Pending::Bypass { who },
                        0,
                    );
                    return true;
                }
                let sectors = self.sectors_of(mask);
                if let Some(w) = self.hit_way(line, sectors) {
                    self.stats.loads += 1;
                    self.stats.load_hits += 1;
                    self.prov_load(ctx, who, line, true);
                    let id = ctx.lines.alloc(self.data[w.0 as usize]);
                    self.respond(
                        ctx,
                        self.latency,
                        CoreResp::LoadData {
                            who,
                            line,
                            data: DataId(id),
                        },
                    );
                    return true;
                }
                if !self.miss(
                    line,
                    sectors,
                    Waiter::Load {
                        who,
                        overlays_seen: 0,
                    },
                    ctx,
                ) {
                    return false;
                }
                self.prov_load(ctx, who, line, false);
                self.stats.loads += 1;
                self.stats.load_misses += 1;
                true
            }
            L1Req::Store {
                who,
                line,
                mask,
                data,
                level,
                seq,
            } => {
                self.stats.stores += 1;
                let bytes = *ctx.lines.get(data.0);
                self.write_local(line, mask, &bytes);
                if let Some(p) = ctx.prov.as_deref_mut() {
                    let warp = match who {
                        Requester::Drain { warp } | Requester::Warp { warp, .. } => Some(warp),
                        Requester::Stress { .. } => None,
                    };
                    let held = self.tags.probe(line).is_some();
                    p.push(
                        ctx.q.now(),
                        ProvEvent::L1Store {
                            sm: self.sm,
                            warp,
                            line,
                            mask,
                            held,
                        },
                    );
                }
                self.respond(ctx, 0, CoreResp::StoreAccepted { by: who });
                let system = level == Level::System;
                self.send(
                    ctx,
                    line,
                    ReqKind::Write { mask, data },
                    Pending::Write {
                        by: who,
                        system,
                        seq,
                    },
                    mask.count_ones(),
                );
                true
            }
            L1Req::Atomic {
                who,
                line,
                batch,
                // Device and system level alike are served by the L2 (the header's system-scope rule).
                level: _,
                at_l1,
                seq,
            } => {
                self.stats.atomics += 1;
                if at_l1 {
                    return self.atomic_at_l1(ctx, who, batch, line, seq);
                }
                // Performed at L2: this SM's copy of the line must not stay older than the value the
                // atomic returns (see `drop_line`).
                self.drop_line(line);
                self.prov_drop(ctx, Some(line));
                let n = ctx.batches.get(batch.0).lanes.len() as u32 * 8;
                self.send(
                    ctx,
                    line,
                    ReqKind::Atomic { batch },
                    Pending::Atomic { who },
                    n,
                );
                true
            }
            L1Req::InvalidateAll => {
                self.stats.invalidations += 1;
                self.invalidate_all();
                self.prov_drop(ctx, None);
                true
            }
            L1Req::Membar { warp, system } => {
                // One token to every slice, each behind what this L1 sent to it before (the
                // paths are FIFO); it carries no data.
                let slices = self.slices.slices();
                let id = self.membars.alloc(MembarWait {
                    warp,
                    system,
                    left: slices,
                });
                for slice in 0..slices as u16 {
                    self.send_to(ctx, slice, 0, ReqKind::Membar, Pending::Membar { id }, 0);
                }
                true
            }
        }
    }

    /// Drops every line and starts a new epoch (fills in flight are not installed).
    pub fn invalidate_all(&mut self) {
        self.tags.invalidate_all();
        self.valid.fill(0);
        self.epoch += 1;
        self.mshr_of_line.clear();
    }

    /// Drops the lines overlapping `[start, end)` (a host copy wrote them in DRAM).
    pub fn drop_range(&mut self, start: u64, end: u64) {
        let valid = &mut self.valid;
        self.tags
            .invalidate_range(start, end, |w| valid[w.0 as usize] = 0);
    }

    /// Drops this SM's copy of `line` (and detaches an outstanding fill for it) because a request for
    /// it is about to be served at L2. PTX causality: a value a thread has observed at L2 must not be
    /// followed, for a thread it synchronises with inside this SM, by an older value from this L1
    /// ("if W precedes R in causality order, R reads W or a later write"; also the same thread's
    /// read-read coherence when a device-scope load is followed by a weak one). Later requests for
    /// the line miss and are sent after this one on the same (FIFO) path, so they see at least what
    /// it sees; a fill sent before it may carry older data and therefore is not installed.
    fn drop_line(&mut self, line: u64) {
        if let Some(w) = self.tags.probe(line) {
            self.tags.invalidate(w);
            self.valid[w.0 as usize] = 0;
        }
        if let Some(mi) = self.mshr_of_line.remove(&line) {
            self.mshrs.get_mut(mi).detached = true;
        }
    }

    /// Writes a store's bytes into the array and into the overlays of an outstanding fill.
    fn write_local(&mut self, line: u64, mask: u128, bytes: &LineBuf) {
        let way = match self.tags.lookup(line) {
            Some(w) => Some(w),
            None if self.policy == L1WritePolicy::WriteThroughAllocate => {
                let pinned = |_w: Way| false;
                self.tags.insert(line, pinned).map(|(w, _)| {
                    self.valid[w.0 as usize] = 0;
                    w
                })
            }
            None => None,
        };
        if let Some(w) = way {
            let wi = w.0 as usize;
            if self.data.values() {
                let mut m = mask;
                while m != 0 {
                    let i = m.trailing_zeros() as usize;
                    m &= m - 1;
                    self.data[wi][i] = bytes[i];
                }
            }
            // A sector the store covers entirely becomes valid.
            for (s, &sm) in self.sector_masks.iter().enumerate() {
                if mask & sm == sm {
                    self.valid[wi] |= 1 << s;
                }
            }
        }
        if let Some(&mi) = self.mshr_of_line.get(&line) {
            self.mshrs.get_mut(mi).overlays.push((*bytes, mask));
        }
    }

    fn miss(&mut self, line: u64, sectors: u32, waiter: Waiter, ctx: &mut Ctx) -> bool {
        if let Some(&mi) = self.mshr_of_line.get(&line) {
            self.stats.mshr_merges += 1;
            let m = self.mshrs.get_mut(mi);
            let waiter = match waiter {
                Waiter::Load { who, .. } => Waiter::Load {
                    who,
                    overlays_seen: m.overlays.len(),
                },
                w => w,
            };
            m.waiters.push(waiter);
            let missing = sectors & !m.sectors;
            if missing != 0 {
                m.sectors |= missing;
                m.outstanding += 1;
                self.fill_request(ctx, line, mi, missing);
            }
            return true;
        }
        if self.live_mshrs >= self.max_mshrs {
            return false;
        }
        // Every requested sector travels, also those still valid in a present line: the waiters are
        // answered from the fill's own bytes, and a sector left out would read as zeros. (The local
        // writes in a valid sector are not lost: they reached the slice earlier on this FIFO path.)
        let need = sectors;
        let mut waiters = self.spare_waiters.pop().unwrap_or_default();
        waiters.push(waiter);
        let mi = self.mshrs.alloc(Mshr {
            line,
            epoch: self.epoch,
            sectors: need,
            outstanding: 1,
            data: [0u8; MAX_LINE],
            overlays: Vec::new(),
            waiters,
            live: true,
            detached: false,
        });
        self.live_mshrs += 1;
        self.mshr_of_line.insert(line, mi);
        self.fill_request(ctx, line, mi, need);
        true
    }

    fn fill_request(&mut self, ctx: &mut Ctx, line: u64, mshr: u32, sectors: u32) {
        self.stats.sector_fills += sectors.count_ones() as u64;
        let mask = self.sector_bytes_mask(sectors);
        self.send(
            ctx,
            line,
            ReqKind::Read { mask },
            Pending::FillPart { mshr, sectors },
            0,
        );
    }

    /// A work_group-scope atomic performed in this L1: on the line if its sectors are valid, else
    /// after a fill. `false` if it must wait for a free MSHR.
    fn atomic_at_l1(
        &mut self,
        ctx: &mut Ctx,
        who: Requester,
        batch: BatchId,
        line: u64,
        seq: u64,
    ) -> bool {
        let b = ctx.batches.get(batch.0);
        let width = b.ty.width().bytes();
        let mask = b.lanes.iter().fold(0u128, |m, l| {
            m | super::memory::byte_mask((l.addr - line) as u32, width)
        });
        let sectors = self.sectors_of(mask);
        if let Some(w) = self.hit_way(line, sectors) {
            self.atomic_on_line(ctx, who, batch, line, w.0 as usize, seq);
            return true;
        }
        self.miss(line, sectors, Waiter::Atomic { who, batch, seq }, ctx)
    }

    fn atomic_on_line(
        &mut self,
        ctx: &mut Ctx,
        who: Requester,
        batch: BatchId,
        line: u64,
        way: usize,
        seq: u64,
    ) {
        if let (Some(p), Requester::Warp { op, .. }) = (ctx.prov.as_deref_mut(), who) {
            p.push(
                ctx.q.now(),
                ProvEvent::L1Atomic {
                    sm: self.sm,
                    op,
                    line,
                },
            );
        }
        let done = self
            .atomic
            .schedule(ctx.now() + self.latency, ctx.batches.get(batch.0));
        let mut view = LineView {
            base: line,
            bytes: &mut self.data[way],
            mask: 0,
        };
        perform_batch(ctx.batches.get_mut(batch.0), &mut view);
        let (mask, bytes) = (view.mask, *view.bytes);
        // A fill of this line still in flight carries data older than this result: like a store's
        // bytes (`write_local`), the result is an overlay on it, or installing the fill would undo
        // the atomic and the next one on the line would lose its update.
        if let Some(&mi) = self.mshr_of_line.get(&line) {
            self.mshrs.get_mut(mi).overlays.push((bytes, mask));
        }
        // The result goes on to L2 like a store; its acknowledgement counts as one for the warp.
        let id = ctx.lines.alloc(bytes);
        self.send(
            ctx,
            line,
            ReqKind::Write {
                mask,
                data: DataId(id),
            },
            Pending::Write {
                by: who.drain(),
                system: false,
                seq,
            },
            mask.count_ones(),
        );
        ctx.q.at(
            done,
            Event::SmIn(self.sm, CoreResp::AtomicDone { who, batch }),
        );
    }

    /// A hint that `resp` will arrive (`engine::prefetch`): the request it answers, and the set
    /// its line is filled into.
    #[inline]
    pub fn prefetch_response(&self, resp: &MemResp) {
        self.pending.prefetch(resp.tag);
        if let RespKind::Data(_) = resp.kind {
            self.tags.prefetch(resp.line);
        }
    }

    /// A response from the interconnect.
    pub fn from_xbar(&mut self, resp: MemResp, ctx: &mut Ctx) {
        let p = *self.pending.get(resp.tag);
        self.pending.release(resp.tag);
        let sys = |s: bool| if s { self.system_latency } else { 0 };
        if let Some(r) = ctx.rec.as_deref_mut() {
            let (now, lat) = (ctx.q.now(), self.system_latency);
            if let Pending::Write {
                by,
                system: true,
                seq,
            } = p
            {
                r.system_point(by, Some(seq), resp.line, now, lat)
            }
        }
        match (p, resp.kind) {
            (Pending::Bypass { who }, RespKind::Data(data)) => {
                self.respond(
                    ctx,
                    0,
                    CoreResp::LoadData {
                        who,
                        line: resp.line,
                        data,
                    },
                );
            }
            (Pending::Write { by, system, seq }, RespKind::WriteAck) => {
                self.respond(ctx, sys(system), CoreResp::StoreAcked { by, seq });
            }
            (Pending::Atomic { who }, RespKind::AtomicDone(batch)) => {
                self.respond(ctx, 0, CoreResp::AtomicDone { who, batch });
            }
            (Pending::Membar { id }, RespKind::MembarAck) => {
                let m = self.membars.get_mut(id);
                m.left -= 1;
                if m.left == 0 {
                    let (warp, system) = (m.warp, m.system);
                    self.membars.release(id);
                    // At system level the system point answers too: its round trip after the
                    // slices' (the header's `system.latency`).
                    self.respond(ctx, sys(system), CoreResp::MembarAcked { warp });
                }
            }
            (Pending::FillPart { mshr, sectors }, RespKind::Data(data)) => {
                let sb = self.sector_bytes as usize;
                let m = self.mshrs.get_mut(mshr);
                copy_sectors(&mut m.data, ctx.lines.get(data.0), sectors, sb);
                ctx.lines.release(data.0);
                m.outstanding -= 1;
                if m.outstanding == 0 {
                    self.complete_fill(mshr, ctx);
                }
            }
            _ => {}
        }
    }

    fn complete_fill(&mut self, mi: u32, ctx: &mut Ctx) {
        let m = self.mshrs.get_mut(mi);
        m.live = false;
        let (line, epoch, sectors, detached) = (m.line, m.epoch, m.sectors, m.detached);
        let mut waiters = std::mem::take(&mut m.waiters);
        let overlays = std::mem::take(&mut m.overlays);
        let base = m.data;
        self.mshrs.release(mi);
        self.live_mshrs -= 1;
        if self.mshr_of_line.get(&line) == Some(&mi) {
            self.mshr_of_line.remove(&line);
        }
        let view_after = |n: usize| {
            let mut d = base;
            for (b, mask) in &overlays[..n] {
                let mut mm = *mask;
                while mm != 0 {
                    let i = mm.trailing_zeros() as usize;
                    mm &= mm - 1;
                    d[i] = b[i];
                }
            }
            d
        };
        let full = view_after(overlays.len());
        // Install only if no invalidation happened since the miss: an older fill must not make stale
        // data visible to requests that follow an acquire.
        let mut way = None;
        if epoch == self.epoch && !detached {
            let w = match self.tags.lookup(line) {
                Some(w) => Some(w),
                None => self.tags.insert(line, |_| false).map(|(w, _)| {
                    self.valid[w.0 as usize] = 0;
                    w
                }),
            };
            if let Some(w) = w {
                let wi = w.0 as usize;
                copy_sectors(
                    &mut self.data[wi],
                    &full,
                    sectors,
                    self.sector_bytes as usize,
                );
                self.valid[wi] |= sectors;
                way = Some(wi);
                if let Some(p) = ctx.prov.as_deref_mut() {
                    let mask = self.sector_bytes_mask(sectors);
                    p.push(
                        ctx.q.now(),
                        ProvEvent::L1Install {
                            sm: self.sm,
                            line,
                            mask,
                        },
                    );
                }
            }
        }
        for w in waiters.drain(..) {
            match w {
                Waiter::Load { who, overlays_seen } => {
                    if let (Some(p), Requester::Warp { op, .. }) = (ctx.prov.as_deref_mut(), who) {
                        p.push(
                            ctx.q.now(),
                            ProvEvent::L1FillServed {
                                sm: self.sm,
                                op,
                                line,
                            },
                        );
                    }
                    let id = ctx.lines.alloc(view_after(overlays_seen));
                    self.respond(
                        ctx,
                        self.clock.period,
                        CoreResp::LoadData {
                            who,
                            line,
                            data: DataId(id),
                        },
                    );
                }
                Waiter::Atomic { who, batch, seq } => match way {
                    Some(wi) => self.atomic_on_line(ctx, who, batch, line, wi, seq),
                    None => {
                        // An invalidation came while the fill was outstanding, so its data may not be
                        // installed. Running the atomic at L2 instead would lose updates: its result
                        // would race with this L1's later write-throughs of the same word, computed on
                        // fills that do not contain it. It joins the current epoch's access to the line
                        // instead (after that miss's fill, or on the line if present).
                        if !self.atomic_at_l1(ctx, who, batch, line, seq) {
                            self.input.push_front(L1Req::Atomic {
                                who,
                                line,
                                batch,
                                level: Level::Sm,
                                at_l1: true,
                                seq,
                            });
                            self.blocked_since.get_or_insert(ctx.now());
                        }
                    }
                },
            }
        }
        self.spare_waiters.push(waiters);
        if !self.input.is_empty() {
            ctx.q.after(0, Event::L1Retry(self.sm));
        }
    }

    /// Nothing queued and nothing in flight (the contract tests' drain check).
    #[cfg(test)]
    pub fn idle(&self) -> bool {
        self.input.is_empty() && self.pending.live() == 0 && self.credits.waiting() == 0
    }
}
