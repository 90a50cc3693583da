//! The events of a candidate execution and the static facts the models ask about them: the memory
//! order of each event (one enum for loads, stores, read-modify-writes and fences, whose legal
//! combinations the IR's typed orders already fix), the location instance it touches, and where its
//! thread runs (device, work-group / CTA, sub-group), from which scope inclusion follows.
//!
//! Scope inclusion (PTX ISA "Scope", OpenCL 2.0 §3.3.5 memory scopes): a scope *includes* a thread
//! when the thread is in the same instance of the scope as the thread performing the operation:
//! `work_item` only the thread itself, `sub_group` its warp (each litmus thread runs in its own warp),
//! `work_group`/`.cta` its work-group on its device, `device`/`.gpu` its device, `system`/`.sys` all.
//!
//! Each element of an array location is a location of its own ([`LocKey`]); an access outside a
//! location's elements, or misaligned, is not modelled (the machine stops it with an error).
//!
//! Does not model: PTX `.cluster` scope and proxies (the parsers reject both).

use crate::ir::{FenceOrd, LoadOrd, RmwOrd, Scope, Space, SpaceSet, SrcLoc, StoreOrd, Width};

/// Memory order of an event. `Plain` is a non-atomic access (PTX `.weak`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Plain,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl Mode {
    pub fn atomic(self) -> bool {
        self != Mode::Plain
    }
    pub fn acquire(self) -> bool {
        matches!(self, Mode::Acquire | Mode::AcqRel | Mode::SeqCst)
    }
    pub fn release(self) -> bool {
        matches!(self, Mode::Release | Mode::AcqRel | Mode::SeqCst)
    }
    pub fn sc(self) -> bool {
        self == Mode::SeqCst
    }
    pub fn of_load(o: LoadOrd) -> Mode {
        match o {
            LoadOrd::Plain => Mode::Plain,
            LoadOrd::Relaxed => Mode::Relaxed,
            LoadOrd::Acquire => Mode::Acquire,
            LoadOrd::SeqCst => Mode::SeqCst,
        }
    }
    pub fn of_store(o: StoreOrd) -> Mode {
        match o {
            StoreOrd::Plain => Mode::Plain,
            StoreOrd::Relaxed => Mode::Relaxed,
            StoreOrd::Release => Mode::Release,
            StoreOrd::SeqCst => Mode::SeqCst,
        }
    }
    pub fn of_rmw(o: RmwOrd) -> Mode {
        match o {
            RmwOrd::Relaxed => Mode::Relaxed,
            RmwOrd::Acquire => Mode::Acquire,
            RmwOrd::Release => Mode::Release,
            RmwOrd::AcqRel => Mode::AcqRel,
            RmwOrd::SeqCst => Mode::SeqCst,
        }
    }
    pub fn of_fence(o: FenceOrd) -> Mode {
        match o {
            FenceOrd::Acquire => Mode::Acquire,
            FenceOrd::Release => Mode::Release,
            FenceOrd::AcqRel => Mode::AcqRel,
            FenceOrd::SeqCst => Mode::SeqCst,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Relaxed => "relaxed",
            Mode::Acquire => "acquire",
            Mode::Release => "release",
            Mode::AcqRel => "acq_rel",
            Mode::SeqCst => "seq_cst",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The initial write of a location (herd's hypothetical write before every thread starts).
    Init,
    Read,
    Write,
    /// An atomic read-modify-write that wrote (one event that reads and writes); a compare-exchange
    /// that failed is a `Read`.
    Rmw,
    Fence,
    /// Arriving at the `n`-th barrier of the thread's work-group: releases the thread's earlier
    /// accesses to the other participants.
    BarrierArrive,
    /// Leaving that barrier once every participant arrived: acquires what they released.
    BarrierLeave,
}

/// A memory location instance: a declared location, the element of an array (0 for a scalar), and,
/// for work-group-local memory, the work-group whose copy it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocKey {
    pub loc: usize,
    pub elem: u32,
    pub copy: Option<u32>,
}

/// Where a thread runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    pub device: u32,
    /// Work-group / CTA number (unique across devices together with `device`).
    pub group: u32,
    /// Sub-group (warp) number; unique per thread in today's litmus layout.
    pub sub_group: u32,
}

/// Does `scope`, used by a thread placed at `by`, include the thread placed at `other`?
pub fn includes(
    scope: Scope,
    by: Placement,
    by_thread: usize,
    other: Placement,
    other_thread: usize,
) -> bool {
    match scope {
        Scope::WorkItem => by_thread == other_thread,
        Scope::SubGroup => {
            by.device == other.device && by.group == other.group && by.sub_group == other.sub_group
        }
        Scope::WorkGroup => by.device == other.device && by.group == other.group,
        Scope::Device => by.device == other.device,
        Scope::System => true,
    }
}

/// One event of a thread's execution (or an initial write).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// Index of the thread; `None` for an initial write.
    pub thread: Option<usize>,
    pub kind: Kind,
    pub mode: Mode,
    /// The scope as written; a local-memory access's scope is narrowed by the models.
    pub scope: Scope,
    pub loc: Option<LocKey>,
    /// Address space of an access.
    pub space: Space,
    /// Address spaces a fence or barrier orders.
    pub spaces: SpaceSet,
    pub width: Width,
    /// Value read (raw bits of the width), for reads and read-modify-writes.
    pub rval: u64,
    /// Value written, for writes, read-modify-writes and initial writes.
    pub wval: u64,
    /// The thread's earlier events (by index in the thread) whose values this event's address,
    /// value or execution depends on (address, data and control dependencies).
    pub deps: u128,
    /// For barrier events: the number of the barrier among the thread's barriers.
    pub barrier: u32,
    /// For barrier events: the barrier's id (0-15) and thread count (`None`: the whole CTA).
    pub bar_id: u8,
    pub bar_threads: Option<u32>,
    /// For the arrival of a `bar.red`: its reduction; `rval` holds the thread's predicate (0 or 1)
    /// and `wval` the result the thread's trace assumed.
    pub bar_red: Option<crate::ir::BarrierReduce>,
    pub at: SrcLoc,
}

impl Event {
    pub fn reads(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Rmw)
    }
    pub fn writes(&self) -> bool {
        matches!(self.kind, Kind::Write | Kind::Rmw | Kind::Init)
    }
    pub fn is_fence(&self) -> bool {
        self.kind == Kind::Fence
    }
    pub fn is_barrier(&self) -> bool {
        matches!(self.kind, Kind::BarrierArrive | Kind::BarrierLeave)
    }
    pub fn is_access(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Write | Kind::Rmw)
    }

    /// What the event is, for messages: `P1's acquire load of x at device scope at t.litmus:7:3`.
    pub fn describe(&self, file: &str, threads: &[String], locations: &[String]) -> String {
        let who = self.thread.map(|t| threads[t].as_str()).unwrap_or("init");
        let what = match self.kind {
            Kind::Init => "initial write",
            Kind::Read => "load",
            Kind::Write => "store",
            Kind::Rmw => "read-modify-write",
            Kind::Fence => "fence",
            Kind::BarrierArrive | Kind::BarrierLeave => "barrier",
        };
        let loc = self
            .loc
            .map(|l| format!(" of {}", locations[l.loc]))
            .unwrap_or_default();
        let scope = if self.mode.atomic() && self.kind != Kind::Init {
            format!(" at {} scope", self.scope)
        } else {
            String::new()
        };
        format!(
            "{who}'s {} {what}{loc}{scope} at {file}:{}",
            self.mode.name(),
            self.at
        )
    }
}
