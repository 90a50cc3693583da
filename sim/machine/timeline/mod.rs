//! The timeline recorder (`--timeline FILE.json`): what happened when, per warp and per memory
//! request, as a Chrome trace event file that Perfetto (ui.perfetto.dev) and chrome://tracing open.
//!
//! Each simulation domain (`domain.rs`) owns one [`Recorder`] behind an `Option` (`Ctx::rec`); the
//! hook sites in the parts test it and do nothing else when recording is off. Domains record
//! independently (in parallel with `--threads`); `render.rs` merges their records in domain order and
//! sorts them by time, so the file does not depend on the number of threads.
//!
//! Recorded (times in core cycles; in the viewer 1 µs = 1 core cycle):
//! - per SM (a process) and warp slot (a thread): what the warp did, as spans — `issue`, each stall
//!   reason of `sm/warp.rs` (`barrier` among them), `ready, not selected` (another warp issued),
//!   `exited; memory operations in flight`. States are sampled when the SM's schedulers tick; an SM
//!   that sleeps keeps each warp's last state until its next tick.
//! - per memory request (an async track of the `memory` process):
//!   - a warp's global load or atomic, from the L1 accepting it to the data returning to the warp
//!     (`sm S op O line L`; a system-scope one is served by the L2 as a device-scope one is); a
//!     local-memory access
//!     (`local memory`, banks and atomic unit);
//!   - a store, from entering the store buffer to its acknowledgement (`store sm S #seq`), with
//!     `store buffer` (waiting to drain) and `write-through` (L1 to the level that acknowledges it,
//!     with `system point` inside it for a system-scope store);
//!   - a crossbar request of an L1 (`req sm S tag T`; the tag is the L1's slot for it, so the track
//!     shows that slot's successive requests), with its stages `crossbar → slice N` (source-port
//!     queueing and transit), `port queue` (the slice's receiving port), `L2 slice N` (input queue,
//!     MSHR wait, lookup), inside it `DRAM` (a miss's fill) and `atomic unit` (queueing behind
//!     earlier operations and execution), then `crossbar → SM` and `port queue` at the SM.
//! - counters: `store buffer entries` per SM, `atomic queue` per L2 slice (operations issued and not
//!   complete), `outstanding requests` (crossbar requests in flight), `DRAM bandwidth` (GB/s over
//!   buckets of 100 core cycles). Counters are sampled at the window barriers of the parallel loop
//!   (every crossbar lookahead of simulated time that has events), only when they change.
//!
//! Not recorded: which L1 miss a warp's load waited for (an L1 MSHR merges several warps' loads into
//! one crossbar request; the two are separate tracks), L1 hit/miss as a separate stage (a load that
//! hits is a short span without a crossbar request), the stress warps' accesses, instruction-level
//! detail (PCs; the no-progress diagnosis shows those), DRAM write-backs as spans (their bytes count
//! in the bandwidth counter).
//!
//! Bounds: `--timeline-window A..B` keeps what overlaps core cycles [A, B), clipped to it;
//! `--timeline-limit N` caps the trace events. When the cap is reached the file keeps every span that
//! starts before the first one dropped, in all tracks alike, and says so in `otherData`; the run
//! prints the cycle it stopped at.

mod render;

use super::msg::{CoreResp, Event, L1Req, MemReq, Requester};
use super::outbox::Outgoing;
use crate::engine::Time;
use std::collections::HashMap;

pub use render::{merge, Timeline};

/// What `--timeline` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineOptions {
    /// Core cycles `[from, to)` to record; `None`: the whole run.
    pub window: Option<(u64, u64)>,
    /// The most trace events the file may hold.
    pub limit: usize,
}

/// The default `--timeline-limit`: about 100 MB of JSON.
pub const DEFAULT_LIMIT: usize = 1_000_000;

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            window: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// Parses `--timeline-window A..B` (core cycles, `A < B`; either side may be left out).
pub fn parse_window(s: &str) -> Result<(u64, u64), String> {
    let bad =
        || format!("{s:?}: expected A..B in core cycles with A < B, e.g. 1000..5000 or 2000..");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let a: u64 = if a.trim().is_empty() {
        0
    } else {
        a.trim().replace('_', "").parse().map_err(|_| bad())?
    };
    let b: u64 = if b.trim().is_empty() {
        u64::MAX
    } else {
        b.trim().replace('_', "").parse().map_err(|_| bad())?
    };
    if a >= b {
        return Err(bad());
    }
    Ok((a, b))
}

/// The track a span belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Track {
    /// A warp slot of an SM (a thread of the SM's process).
    Warp { sm: u16, slot: u16 },
    /// A crossbar request slot of an L1.
    Request { sm: u16, tag: u32 },
    /// One line of a warp's memory instruction (`line` = `u64::MAX`: local memory).
    Access { sm: u16, op: u32, line: u64 },
    /// A store, by the SM's write sequence number.
    Store { sm: u16, seq: u64 },
}

/// A span of time on one track; `depth` 0 is a request's whole life, 1 a stage, 2 inside a stage.
#[derive(Debug, Clone)]
pub struct Span {
    pub track: Track,
    pub name: String,
    pub start: Time,
    pub end: Time,
    pub depth: u8,
    /// `"key": value` pairs of a JSON object, without the braces (may be empty).
    pub args: String,
}

/// A counter's series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Counter {
    StoreBuffer { sm: u16 },
    AtomicQueue { slice: u16 },
    Outstanding,
    DramBandwidth,
}

#[derive(Debug, Clone)]
pub struct Sample {
    pub counter: Counter,
    pub t: Time,
    pub value: f64,
}

/// A request on its way, as the SM side saw it leave.
#[derive(Debug, Clone, Copy)]
struct Sent {
    at: Time,
    line: u64,
    kind: &'static str,
    slice: u16,
}

/// The records of one simulation domain (or of the barrier, for counters).
#[derive(Debug)]
pub struct Recorder {
    /// The SM of an SM domain (0 for a partition domain or the barrier).
    sm: u16,
    from: Time,
    to: Time,
    cap: usize,
    cost: usize,
    /// The start of the earliest span dropped at the cap.
    pub full_at: Option<Time>,
    pub spans: Vec<Span>,
    pub samples: Vec<Sample>,
    /// (time, bytes) of each DRAM access.
    pub dram: Vec<(Time, u32)>,
    /// Per warp slot: the open state (name, since, group, warp in group).
    warps: Vec<Option<(&'static str, Time, u64, u32)>>,
    /// Warp slots that issued at the current tick.
    pub issued: Vec<u16>,
    sent: HashMap<u32, Sent>,
    /// Partition side: when a slice's port accepted (sm, tag).
    accepted: HashMap<(u16, u32), Time>,
    /// Open accesses: (op, line, since, kind).
    accesses: Vec<(u32, u64, Time, &'static str)>,
    /// Open stores: seq → (entered the store buffer, line, left it).
    stores: HashMap<u64, (Time, u64, Time)>,
    /// Counters' last values (only changes are recorded).
    last: HashMap<Counter, f64>,
}

impl Recorder {
    /// A recorder for the domain of SM `sm` (any value for other domains); `period`: the core
    /// clock's period, to turn the window's cycles into time.
    pub fn new(opts: &TimelineOptions, sm: u16, period: Time) -> Recorder {
        let (a, b) = opts.window.unwrap_or((0, u64::MAX));
        Recorder {
            sm,
            from: a.saturating_mul(period),
            to: b.saturating_mul(period),
            cap: opts.limit,
            cost: 0,
            full_at: None,
            spans: Vec::new(),
            samples: Vec::new(),
            dram: Vec::new(),
            warps: Vec::new(),
            issued: Vec::new(),
            sent: HashMap::new(),
            accepted: HashMap::new(),
            accesses: Vec::new(),
            stores: HashMap::new(),
            last: HashMap::new(),
        }
    }

    /// Whether the cap leaves room for `cost` more events; notes the drop at `start` when not.
    fn room(&mut self, cost: usize, start: Time) -> bool {
        if self.cost + cost > self.cap {
            self.full_at = Some(self.full_at.map_or(start, |f| f.min(start)));
            return false;
        }
        self.cost += cost;
        true
    }

    /// Records a span, clipped to the window; empty spans are not recorded.
    pub fn span(
        &mut self,
        track: Track,
        name: impl Into<String>,
        start: Time,
        end: Time,
        depth: u8,
        args: String,
    ) {
        let (s, e) = (start.max(self.from), end.min(self.to));
        if s >= e {
            return;
        }
        let cost = if matches!(track, Track::Warp { .. }) {
            1
        } else {
            2
        };
        if !self.room(cost, s) {
            return;
        }
        self.spans.push(Span {
            track,
            name: name.into(),
            start: s,
            end: e,
            depth,
            args,
        });
    }

    /// A counter's value at `t`, recorded when it changed.
    pub fn sample(&mut self, counter: Counter, t: Time, value: f64) {
        if self.last.get(&counter) == Some(&value) {
            return;
        }
        self.last.insert(counter, value);
        if t < self.from || t >= self.to || !self.room(1, t) {
            return;
        }
        self.samples.push(Sample { counter, t, value });
    }

    // --- warps -------------------------------------------------------------------------------

    /// Warp slot `slot` (of work-group `group`, warp `wig` in it) is in `state` from `t`.
    pub fn warp_state(&mut self, slot: usize, t: Time, state: &'static str, group: u64, wig: u32) {
        if self.warps.len() <= slot {
            self.warps.resize(slot + 1, None);
        }
        // A second tick in the cycle a warp issued sees it after that cycle: the issue stands.
        let t = self.warps[slot].map_or(t, |o| t.max(o.1));
        match self.warps[slot] {
            Some((s, _, g, w)) if s == state && g == group && w == wig => {}
            open => {
                self.close_warp(slot, open, t);
                self.warps[slot] = Some((state, t, group, wig));
            }
        }
    }

    /// Warp slot `slot` is empty from `t`.
    pub fn warp_gone(&mut self, slot: usize, t: Time) {
        if let Some(open) = self.warps.get_mut(slot).and_then(|o| o.take()) {
            self.close_warp(slot, Some(open), t.max(open.1));
        }
    }

    fn close_warp(&mut self, slot: usize, open: Option<(&'static str, Time, u64, u32)>, t: Time) {
        if let Some((s, since, g, w)) = open {
            let track = Track::Warp {
                sm: self.sm,
                slot: slot as u16,
            };
            self.span(
                track,
                s,
                since,
                t,
                0,
                format!("\"work_group\": {g}, \"warp\": {w}"),
            );
        }
    }

    /// Closes every open warp state at `t` (the end of the run).
    pub fn close_all(&mut self, t: Time) {
        for slot in 0..self.warps.len() {
            self.warp_gone(slot, t);
        }
    }

    /// Warp slots with an open state.
    pub fn open_warps(&self) -> impl Iterator<Item = usize> + '_ {
        self.warps
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_some())
            .map(|(i, _)| i)
    }

    // --- SM domain ---------------------------------------------------------------------------

    /// An event of the SM domain was handled at `now`; `sent`: the crossbar messages it posted.
    pub fn sm_event(&mut self, now: Time, ev: &Event, sent: &[Outgoing]) {
        match *ev {
            Event::L1In(
                _,
                L1Req::Load {
                    who: Requester::Warp { op, .. },
                    line,
                    ..
                },
            ) => self.accesses.push((op, line, now, "load")),
            Event::L1In(
                _,
                L1Req::Atomic {
                    who: Requester::Warp { op, .. },
                    line,
                    ..
                },
            ) => self.accesses.push((op, line, now, "atomic")),
            Event::L1In(
                _,
                L1Req::Store {
                    who: Requester::Drain { .. },
                    line,
                    seq,
                    ..
                },
            ) => {
                self.stores.entry(seq).or_insert((now, line, now));
            }
            Event::SmIn(
                _,
                CoreResp::LoadData {
                    who: Requester::Warp { op, .. },
                    line,
                    ..
                },
            ) => self.access_done(op, Some(line), now),
            Event::SmIn(
                _,
                CoreResp::AtomicDone {
                    who: Requester::Warp { op, .. },
                    ..
                },
            ) => self.access_done(op, None, now),
            Event::SmIn(
                _,
                CoreResp::StoreAcked {
                    by: Requester::Drain { .. },
                    seq,
                },
            ) => {
                if let Some((since, line, drained)) = self.stores.remove(&seq) {
                    let track = Track::Store { sm: self.sm, seq };
                    let args = format!("\"line\": \"{line:#x}\"");
                    self.span(track, format!("store {line:#x}"), since, now, 0, args);
                    self.span(track, "write-through", drained, now, 1, String::new());
                }
            }
            Event::L1FromXbar(_, r) => {
                if let Some(s) = self.sent.remove(&r.tag) {
                    let track = Track::Request {
                        sm: self.sm,
                        tag: r.tag,
                    };
                    let args = format!(
                        "\"line\": \"{:#x}\", \"slice\": {}, \"kind\": \"{}\"",
                        s.line, s.slice, s.kind
                    );
                    let name = format!("{} {:#x} → slice {}", s.kind, s.line, s.slice);
                    self.span(track, name, s.at, now, 0, args);
                }
            }
            _ => {}
        }
        for o in sent {
            if let Event::SliceIn(
                slice,
                MemReq {
                    tag, line, kind, ..
                },
            ) = o.event
            {
                let kind = match kind {
                    super::msg::ReqKind::Read { .. } => "read",
                    super::msg::ReqKind::Write { .. } => "write",
                    super::msg::ReqKind::Atomic { .. } => "atomic",
                    super::msg::ReqKind::Membar => "membar",
                };
                self.sent.insert(
                    tag,
                    Sent {
                        at: now,
                        line,
                        kind,
                        slice,
                    },
                );
                let track = Track::Request { sm: self.sm, tag };
                self.span(
                    track,
                    format!("crossbar → slice {slice}"),
                    now,
                    o.transit.arrive,
                    1,
                    String::new(),
                );
            }
        }
    }

    fn access_done(&mut self, op: u32, line: Option<u64>, now: Time) {
        let Some(i) = self
            .accesses
            .iter()
            .position(|a| a.0 == op && line.is_none_or(|l| l == a.1))
        else {
            return;
        };
        let (op, line, since, kind) = self.accesses.swap_remove(i);
        let track = Track::Access {
            sm: self.sm,
            op,
            line,
        };
        let args = format!("\"line\": \"{line:#x}\"");
        self.span(track, format!("{kind} {line:#x}"), since, now, 0, args);
    }

    /// A local-memory access of op `op` from `now` to `done`.
    pub fn local(&mut self, op: u32, now: Time, done: Time) {
        let track = Track::Access {
            sm: self.sm,
            op,
            line: u64::MAX,
        };
        self.span(track, "local memory", now, done, 0, String::new());
    }

    /// A response for `who` reached the L1 at `now` from a system-scope access: it waits `lat` for
    /// the system point (`system.latency`), a stage of the access (or of the store `seq`).
    pub fn system_point(
        &mut self,
        who: Requester,
        seq: Option<u64>,
        line: u64,
        now: Time,
        lat: Time,
    ) {
        let (track, depth) = match (who, seq) {
            (Requester::Drain { .. }, Some(seq)) => (Track::Store { sm: self.sm, seq }, 2),
            (Requester::Warp { op, .. }, None) => (
                Track::Access {
                    sm: self.sm,
                    op,
                    line,
                },
                1,
            ),
            _ => return,
        };
        self.span(track, "system point", now, now + lat, depth, String::new());
    }

    /// A store of line `line` with write sequence number `seq` left the store buffer at `now`,
    /// having entered it at `since`.
    pub fn store_drained(&mut self, seq: u64, line: u64, since: Time, now: Time) {
        self.stores.insert(seq, (since, line, now));
        let track = Track::Store { sm: self.sm, seq };
        self.span(track, "store buffer", since, now, 1, String::new());
    }

    /// A response to request `tag` arrived at the SM's port at `arrive` and was accepted at `t`.
    pub fn response_accepted(&mut self, tag: u32, arrive: Time, t: Time) {
        let track = Track::Request { sm: self.sm, tag };
        self.span(track, "port queue (SM)", arrive, t, 1, String::new());
    }

    /// Crossbar requests in flight from this SM.
    pub fn outstanding(&self) -> usize {
        self.sent.len()
    }

    // --- partition domain ---------------------------------------------------------------------

    /// Request (sm, tag) reached slice `slice`'s port at `arrive`, accepted at `t`.
    pub fn request_accepted(&mut self, sm: u16, tag: u32, slice: u16, arrive: Time, t: Time) {
        let track = Track::Request { sm, tag };
        self.span(
            track,
            format!("port queue (slice {slice})"),
            arrive,
            t,
            1,
            String::new(),
        );
        self.accepted.insert((sm, tag), t);
    }

    /// A miss of request (sm, tag) went to DRAM at `now`; the line is back at `done`.
    pub fn dram_fill(&mut self, sm: u16, tag: u32, now: Time, done: Time, bytes: u32) {
        self.dram_write(now, bytes);
        self.span(
            Track::Request { sm, tag },
            "DRAM",
            now,
            done,
            2,
            String::new(),
        );
    }

    /// A DRAM write-back of `bytes` at `now`.
    pub fn dram_write(&mut self, now: Time, bytes: u32) {
        // Kept within the window and the limit, like spans (the counter's samples come from them).
        if now >= self.from && now < self.to && self.dram.len() < self.cap {
            self.dram.push((now, bytes));
        }
    }

    /// Slice `slice` served request (sm, tag) at `now`: its atomic (if any) ran in `atomic`, its
    /// response is ready at `ready` and arrives at the SM's port at `arrive`.
    #[allow(clippy::too_many_arguments)]
    pub fn served(
        &mut self,
        sm: u16,
        tag: u32,
        slice: u16,
        now: Time,
        atomic: Option<(Time, Time)>,
        ready: Time,
        arrive: Time,
    ) {
        let track = Track::Request { sm, tag };
        let since = self.accepted.remove(&(sm, tag)).unwrap_or(now);
        self.span(
            track,
            format!("L2 slice {slice}"),
            since,
            ready,
            1,
            String::new(),
        );
        if let Some((a, b)) = atomic {
            self.span(track, "atomic unit", a, b, 2, String::new());
        }
        self.span(track, "crossbar → SM", ready, arrive, 1, String::new());
    }
}
