//! Access provenance: what each structure did with each access, for `litmus --explain`.
//!
//! Models: a plain log of events at the points where a value is taken or placed — an instruction
//! issued (its lanes' threads and addresses), a load answered from the warp's own store-buffer
//! entry, a store leaving the store buffer, an L1 hit, miss, install, local write, drop, and every
//! request the L1 sends (by its interconnect tag), each request served at an L2 slice (where device
//! memory's value is read, written or updated by the atomic unit), and an instruction completing
//! with its lanes' values. Each domain keeps its own log (`domain.rs`); `gpu/` merges them in time
//! order at the end of the run. The explanation (`litmus/explain/`) joins the events by SM, warp,
//! operation slot, line, byte mask and tag.
//!
//! Free when off: the log is an `Option` in the handler's context, checked at each hook site;
//! nothing is allocated and nothing else changes (no random draws, no events), so a recorded run is
//! the same run.
//!
//! Not recorded: work-group-local (shared-memory) accesses, stress-warp traffic, DRAM, evictions (an install or local write after an eviction
//! is recorded; a hit's line is the latest install or write of the line on that SM).

use crate::engine::Time;

/// What an instruction did (at issue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    /// `buffered`: the store entered the store buffer.
    Store {
        buffered: bool,
    },
    Rmw,
}

/// Why the L1 sent a request to a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    /// A fill of an MSHR (the sectors in `mask`).
    Fill,
    /// A device- or system-level load of operation `op` of `warp`.
    Bypass { warp: u16, op: u32 },
    /// A write-through (a drained store, a direct store, or an L1 atomic's result).
    Write { warp: Option<u16> },
    /// An atomic performed at L2 for operation `op`.
    Atomic { warp: u16, op: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeKind {
    Read,
    Write,
    Atomic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvEvent {
    /// A global-memory instruction of a warp issued: each active lane's (thread id, address, stored
    /// value; 0 for loads and atomics). `op`: its slot among the SM's operations in flight (loads
    /// and atomics).
    Issue {
        sm: u16,
        warp: u16,
        op: Option<u32>,
        kind: AccessKind,
        lanes: Vec<(u64, u64, u64)>,
    },
    /// Operation `op` completed: each lane's (thread id, value).
    Done {
        sm: u16,
        op: u32,
        vals: Vec<(u64, u64)>,
    },
    /// A line of load `op` answered from the warp's own store-buffer entries.
    Forward { sm: u16, op: u32, line: u64 },
    /// A store-buffer entry of `warp` left for the L1.
    SbDrain {
        sm: u16,
        warp: u16,
        line: u64,
        mask: u128,
    },
    /// A load's line at the L1: `hit` or a miss (served by the line's fill).
    L1Load {
        sm: u16,
        warp: u16,
        op: u32,
        line: u64,
        hit: bool,
    },
    /// A miss's waiting load got the fill's data.
    L1FillServed { sm: u16, op: u32, line: u64 },
    /// A store reached the L1; `held`: the array holds the line afterwards (it was present, or
    /// write-allocated).
    L1Store {
        sm: u16,
        warp: Option<u16>,
        line: u64,
        mask: u128,
        held: bool,
    },
    /// A fill installed these bytes of the line.
    L1Install { sm: u16, line: u64, mask: u128 },
    /// The L1 dropped `line` (`None`: every line).
    L1Drop { sm: u16, line: Option<u64> },
    /// An atomic of `op` performed in the L1's atomic unit.
    L1Atomic { sm: u16, op: u32, line: u64 },
    /// The L1 sent a request (interconnect `tag`) for `mask` of `line`.
    L1Send {
        sm: u16,
        tag: u32,
        line: u64,
        mask: u128,
        kind: SendKind,
    },
    /// Slice `slice` served request `tag` of SM `sm`: device memory's value read, written or
    /// updated at this time.
    L2Serve {
        slice: u16,
        sm: u16,
        tag: u32,
        line: u64,
        kind: ServeKind,
    },
}

/// One domain's log.
#[derive(Debug, Default)]
pub struct Provenance {
    pub events: Vec<(Time, ProvEvent)>,
}

impl Provenance {
    #[inline]
    pub fn push(&mut self, t: Time, e: ProvEvent) {
        self.events.push((t, e));
    }
}
