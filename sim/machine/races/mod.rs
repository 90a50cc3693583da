//! Race detection (`RunOptions::races`): data races and scope races in the simulated execution.
//!
//! Happens-before is tracked with a vector clock per thread (sparse: a thread's clock lists only the
//! threads it has synchronised with), FastTrack style: every access is stamped with its thread's own
//! clock value, a release snapshots the clock and then advances it.
//! - program order: a thread's accesses are ordered by its own clock;
//! - release/acquire: a release write (store, RMW, or a relaxed write after a release fence) adds
//!   the writer's snapshot to the location's *sync clock*, keyed by the writer's scope instance; an
//!   acquire read (load, RMW, or a relaxed read followed by an acquire fence) joins the entries that
//!   are *morally strong* with it: each scope includes the other thread (PTX; DESIGN.md's vocabulary);
//! - barriers: a work-group barrier joins the clocks of all threads arriving at it (a sub-group
//!   barrier those of the warp);
//! - seq_cst: fence.sc (and seq_cst accesses) are totally ordered per scope instance in the order the
//!   machine performs them, which is part of PTX's causality order.
//!
//! A *race* is a pair of conflicting accesses (same location, different threads, at least one a
//! write, RMWs count as writes) not ordered by happens-before that is not morally strong: a *data
//! race* when at least one is plain, a *scope race* when both are atomic but a scope is too narrow.
//! Each pair of instructions is reported once, with both instructions' `file:line:col` and threads.
//!
//! Deliberate approximations, all on the side of reporting fewer races, never more:
//! - an acquire joins every release of the location issued before it completed, not only the one it
//!   read from (the machine does not tag values with their writes), and a release never ends an
//!   earlier release sequence;
//! - a barrier orders all memory of its work-group, whatever spaces its flags name;
//! - the shadow state keeps, per 4-byte word, the last write and the reads since it (FastTrack), so a
//!   race with an older access that a later, ordered access superseded is not reported.
//!
//! Bounds: vector clocks grow with the threads that synchronise with each other, quadratically when
//! very many threads synchronise through one location (a device-wide latch over a thousand
//! work-groups). Past [`MAX_CLOCK_ENTRIES`] entries held or [`MAX_JOIN_WORK`] entries visited by
//! joins, the run stops with an error saying so, instead of exhausting memory or running for hours.
//!
//! The SM reports what happens as [`RaceEvent`]s in issue order (completion order for acquires); the
//! machine applies them in event order. With detection off nothing is recorded. Scopes are the
//! ordering core's effective scopes (`ordering::effective_scope`): local memory narrowed to
//! work_group, and under OpenCL/SYCL semantics a relaxed atomic at device scope or wider — its scope
//! is ignored, so it is morally strong with every thread's atomics.

mod report;

use crate::ir::{Kernel, MemOrder, Scope, Space};
pub use report::{RaceAccess, RaceKind, RaceReport};
use std::collections::{HashMap, HashSet};

/// A sparse vector clock: (thread, clock) sorted by thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vc(Vec<(u64, u32)>);

impl Vc {
    pub fn get(&self, t: u64) -> u32 {
        match self.0.binary_search_by_key(&t, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }

    pub fn set(&mut self, t: u64, c: u32) {
        match self.0.binary_search_by_key(&t, |e| e.0) {
            Ok(i) => self.0[i].1 = c,
            Err(i) => self.0.insert(i, (t, c)),
        }
    }

    /// Joins `o` into this clock; returns the entries visited (the detector's measure of work).
    pub fn join(&mut self, o: &Vc) -> usize {
        if o.0.is_empty() {
            return 0;
        }
        let work = self.0.len() + o.0.len();
        let mut out = Vec::with_capacity(self.0.len() + o.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() || j < o.0.len() {
            match (self.0.get(i), o.0.get(j)) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    out.push((a.0, a.1.max(b.1)));
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    out.push(*a);
                    i += 1;
                }
                (Some(a), None) => {
                    out.push(*a);
                    i += 1;
                }
                (_, Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.0 = out;
        work
    }
}

/// What an access does to its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Rmw,
}

/// An access as the SM issues it.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub tid: u64,
    pub pc: u32,
    pub space: Space,
    pub addr: u64,
    pub bytes: u32,
    pub kind: AccessKind,
    /// `None` for a plain access.
    pub order: Option<MemOrder>,
    /// The effective scope (`ordering::effective_scope`).
    pub scope: Scope,
}

/// What the SM reports, in the order it happens.
#[derive(Debug, Clone)]
pub enum RaceEvent {
    /// A load, store or RMW issued (its release part included).
    Access(Access),
    /// An atomic read completed: `acquire` joins the sync clocks now; a relaxed one keeps them for a
    /// later acquire fence.
    ReadDone {
        tid: u64,
        space: Space,
        addr: u64,
        scope: Scope,
        acquire: bool,
    },
    /// A fence issued.
    Fence {
        tid: u64,
        acquire: bool,
        release: bool,
        seq_cst: bool,
        scope: Scope,
    },
    /// A barrier released these threads together.
    Barrier { tids: Vec<u64> },
}

/// The last access of a word by one thread, as the shadow state keeps it.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    tid: u64,
    clock: u32,
    pc: u32,
    kind: AccessKind,
    order: Option<MemOrder>,
    scope: Scope,
}

#[derive(Default)]
struct Shadow {
    write: Option<Stamp>,
    reads: Vec<Stamp>,
}

/// A release's contribution to a location's sync clock: the writer's warp and scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SyncKey {
    warp: u64,
    scope: Scope,
}

/// Scope levels an acquire fence can have, for the pending clocks of relaxed reads.
const LEVELS: [Scope; 4] = [
    Scope::SubGroup,
    Scope::WorkGroup,
    Scope::Device,
    Scope::System,
];

pub struct RaceDetector {
    group_threads: u64,
    ws: u64,
    clocks: HashMap<u64, Vc>,
    shadow: HashMap<u64, Shadow>,
    sync: HashMap<u64, Vec<(SyncKey, Vc)>>,
    /// Per thread: the clock of its last release fence and that fence's scope.
    fence_rel: HashMap<u64, (Scope, Vc)>,
    /// Per thread and fence level: what its relaxed reads could acquire.
    pending: HashMap<u64, [Vc; 4]>,
    /// seq_cst order per scope instance.
    sc: HashMap<(Scope, u64), Vc>,
    seen: HashSet<(RaceKind, u32, u32)>,
    found: Vec<(RaceKind, u64, Stamp, Stamp)>,
    /// Vector-clock entries allowed ([`MAX_CLOCK_ENTRIES`]; lowered by tests).
    max_entries: usize,
    /// Clock entries visited by joins so far, and how many may be ([`MAX_JOIN_WORK`]): once over
    /// it, the detector stops and [`RaceDetector::over_budget`] says so.
    work: u64,
    max_work: u64,
    /// Events applied since the entries were last counted, and how many may pass before the next
    /// count (a fraction of the last count, so counting costs a bounded share of the work).
    since_count: usize,
    count_every: usize,
}

/// At most this many distinct races are kept (the first ones in simulated time).
const MAX_REPORTS: usize = 64;

/// Vector-clock entries (thread, clock) the detector may hold (16 M). Clocks grow with the
/// threads that synchronise with each other: when very many threads synchronise through one
/// location (a device-wide latch over a thousand work-groups), every thread's clock comes to name
/// all the others, quadratic in the threads. Past this bound the run stops with an error
/// ([`RaceDetector::over_budget`]) instead of exhausting the machine's memory.
pub const MAX_CLOCK_ENTRIES: usize = 16 << 20;

/// Clock entries the joins may visit in one run (seconds of work): the same growth makes each
/// acquire of such a location cost time proportional to the threads, and the run would take hours
/// before the memory bound is reached.
pub const MAX_JOIN_WORK: u64 = 1 << 34;

impl RaceDetector {
    pub fn new(group_threads: u32, warp_size: u32) -> RaceDetector {
        RaceDetector {
            group_threads: group_threads.max(1) as u64,
            ws: warp_size.max(1) as u64,
            clocks: HashMap::new(),
            shadow: HashMap::new(),
            sync: HashMap::new(),
            fence_rel: HashMap::new(),
            pending: HashMap::new(),
            sc: HashMap::new(),
            seen: HashSet::new(),
            found: Vec::new(),
            max_entries: MAX_CLOCK_ENTRIES,
            work: 0,
            max_work: MAX_JOIN_WORK,
            since_count: 0,
            count_every: 4096,
        }
    }

    fn group(&self, t: u64) -> u64 {
        t / self.group_threads
    }

    /// Global warp id of thread `t`.
    fn warp(&self, t: u64) -> u64 {
        self.group(t) * self.group_threads.div_ceil(self.ws) + (t % self.group_threads) / self.ws
    }

    /// Whether `scope` taken by thread `a` includes thread `b`.
    fn includes(&self, a: u64, scope: Scope, b: u64) -> bool {
        match scope {
            Scope::WorkItem => a == b,
            Scope::SubGroup => self.warp(a) == self.warp(b),
            Scope::WorkGroup => self.group(a) == self.group(b),
            Scope::Device | Scope::System => true,
        }
    }

    /// Both atomic, and each one's scope includes the other's thread (PTX "morally strong").
    fn morally_strong(&self, x: &Stamp, y: &Stamp) -> bool {
        x.order.is_some()
            && y.order.is_some()
            && self.includes(x.tid, x.scope, y.tid)
            && self.includes(y.tid, y.scope, x.tid)
    }

    fn clock(&mut self, t: u64) -> &mut Vc {
        self.clocks.entry(t).or_insert_with(|| {
            let mut v = Vc::default();
            v.set(t, 1);
            v
        })
    }

    fn own(&mut self, t: u64) -> u32 {
        self.clock(t).get(t)
    }

    /// A release: snapshot the clock, then advance it so later accesses are not covered.
    fn release_snapshot(&mut self, t: u64) -> Vc {
        let c = self.clock(t);
        let snap = c.clone();
        let own = c.get(t);
        c.set(t, own + 1);
        snap
    }

    fn key(space: Space, group: u64, addr: u64) -> u64 {
        match space {
            Space::Global => addr & !3,
            // One local memory per work-group: a separate address space per group.
            Space::Local => (1 << 63) | (group << 32) | (addr & 0xFFFF_FFFC),
        }
    }

    fn add_sync(&mut self, key: u64, warp: u64, scope: Scope, snap: &Vc) {
        let entries = self.sync.entry(key).or_default();
        let k = SyncKey { warp, scope };
        match entries.iter_mut().find(|(x, _)| *x == k) {
            Some((_, v)) => self.work += v.join(snap) as u64,
            None => entries.push((k, snap.clone())),
        }
    }

    /// The join of the sync clock entries of `key` that are morally strong with a read by `t` at
    /// `scope`.
    /// The work is counted in [`RaceDetector::work`]; the joins stop once it is over the budget.
    fn acquirable(&mut self, key: u64, t: u64, scope: Scope) -> Vc {
        let mut out = Vc::default();
        let gs = self.group_threads;
        let wpg = gs.div_ceil(self.ws);
        let mut work = 0;
        for (k, v) in self.sync.get(&key).into_iter().flatten() {
            // A thread of the writer's warp stands for the writer (scopes are no narrower than a
            // sub-group here: work-item releases never reach another thread).
            let w = (k.warp / wpg) * gs + (k.warp % wpg) * self.ws;
            if self.includes(w, k.scope, t) && self.includes(t, scope, w) {
                work += out.join(v) as u64;
                if self.work + work > self.max_work {
                    break;
                }
            }
        }
        self.work += work;
        out
    }

    /// The vector-clock entries held: every thread's clock, the locations' sync clocks, the
    /// fences' and relaxed reads' pending clocks, the seq_cst orders.
    fn entries(&self) -> usize {
        self.clocks.values().map(|v| v.0.len()).sum::<usize>()
            + self
                .sync
                .values()
                .flatten()
                .map(|(_, v)| v.0.len())
                .sum::<usize>()
            + self
                .fence_rel
                .values()
                .map(|(_, v)| v.0.len())
                .sum::<usize>()
            + self
                .pending
                .values()
                .flatten()
                .map(|v| v.0.len())
                .sum::<usize>()
            + self.sc.values().map(|v| v.0.len()).sum::<usize>()
    }

    /// Why the detector cannot go on, when its clocks hold more than [`MAX_CLOCK_ENTRIES`]
    /// entries (counted every so many events) or its joins have visited more than
    /// [`MAX_JOIN_WORK`].
    pub fn over_budget(&mut self) -> Option<String> {
        if self.work > self.max_work {
            return Some(format!(
                "its vector-clock joins visited more than {} entries",
                self.max_work
            ));
        }
        if self.since_count < self.count_every {
            return None;
        }
        self.since_count = 0;
        let n = self.entries();
        self.count_every = (n / 16).max(4096);
        (n > self.max_entries).then(|| {
            format!(
                "its vector clocks hold {n} entries, over the limit of {}",
                self.max_entries
            )
        })
    }

    pub fn apply(&mut self, ev: RaceEvent) {
        if self.work > self.max_work {
            return;
        }
        self.since_count += 1;
        match ev {
            RaceEvent::Access(a) => self.access(a),
            RaceEvent::ReadDone {
                tid,
                space,
                addr,
                scope,
                acquire,
            } => {
                let key = Self::key(space, self.group(tid), addr);
                if acquire {
                    let v = self.acquirable(key, tid, scope);
                    let w = self.clock(tid).join(&v);
                    self.work += w as u64;
                } else {
                    let per: Vec<Vc> = LEVELS
                        .iter()
                        .map(|&l| self.acquirable(key, tid, scope.min(l)))
                        .collect();
                    let p = self.pending.entry(tid).or_default();
                    let mut w = 0;
                    for (slot, v) in p.iter_mut().zip(per) {
                        w += slot.join(&v) as u64;
                    }
                    self.work += w;
                }
            }
            RaceEvent::Fence {
                tid,
                acquire,
                release,
                seq_cst,
                scope,
            } => {
                if acquire {
                    let i = LEVELS.iter().position(|&l| l >= scope).unwrap_or(3);
                    if let Some(p) = self.pending.get(&tid) {
                        let v = p[i].clone();
                        let w = self.clock(tid).join(&v);
                        self.work += w as u64;
                    }
                }
                if seq_cst {
                    self.sc_chain(tid, scope);
                }
                if release {
                    let snap = self.release_snapshot(tid);
                    self.fence_rel.insert(tid, (scope, snap));
                }
            }
            RaceEvent::Barrier { tids } => {
                let mut all = Vc::default();
                let mut w = 0;
                for &t in &tids {
                    let c = self.clock(t).clone();
                    w += all.join(&c) as u64;
                }
                for &t in &tids {
                    let c = self.clock(t);
                    w += c.join(&all) as u64;
                    let own = c.get(t);
                    c.set(t, own + 1);
                }
                self.work += w;
            }
        }
    }

    /// seq_cst operations of one scope instance are totally ordered in the order performed.
    fn sc_chain(&mut self, t: u64, scope: Scope) {
        let inst = match scope {
            Scope::WorkItem => t,
            Scope::SubGroup => self.warp(t),
            Scope::WorkGroup => self.group(t),
            Scope::Device | Scope::System => 0,
        };
        let k = (scope.max(Scope::SubGroup), inst);
        let prev = self.sc.get(&k).cloned().unwrap_or_default();
        let c = self.clock(t);
        let w = c.join(&prev);
        let now = c.clone();
        self.work += w as u64;
        self.sc.insert(k, now);
    }

    fn access(&mut self, a: Access) {
        let t = a.tid;
        if a.order == Some(MemOrder::SeqCst) {
            self.sc_chain(t, a.scope);
        }
        let clock = self.own(t);
        let stamp = Stamp {
            tid: t,
            clock,
            pc: a.pc,
            kind: a.kind,
            order: a.order,
            scope: a.scope,
        };
        let group = self.group(t);
        let words = a.bytes.div_ceil(4).max(1) as u64;
        for wi in 0..words {
            let key = Self::key(a.space, group, a.addr + 4 * wi);
            self.check(key, a.addr, &stamp);
        }
        let key = Self::key(a.space, group, a.addr);
        if matches!(a.kind, AccessKind::Store | AccessKind::Rmw) && a.order.is_some() {
            let release = matches!(
                a.order,
                Some(MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
            );
            let warp = self.warp(t);
            if release {
                let snap = self.release_snapshot(t);
                self.add_sync(key, warp, a.scope, &snap);
            } else if let Some((fs, snap)) = self.fence_rel.get(&t).cloned() {
                // A relaxed write after a release fence carries the fence's release (C11/PTX
                // fence-based synchronisation), at the narrower of the two scopes.
                self.add_sync(key, warp, fs.min(a.scope), &snap);
            }
        }
    }

    /// Checks one word against its shadow state and records the access.
    fn check(&mut self, key: u64, addr: u64, s: &Stamp) {
        let vc = self.clocks.get(&s.tid).cloned().unwrap_or_default();
        let sh = self.shadow.remove(&key).unwrap_or_default();
        let ordered = |p: &Stamp| p.tid == s.tid || p.clock <= vc.get(p.tid);
        let mut races: Vec<Stamp> = Vec::new();
        if let Some(w) = &sh.write {
            if !ordered(w) && !self.morally_strong(w, s) {
                races.push(*w);
            }
        }
        let is_write = s.kind != AccessKind::Load;
        if is_write {
            for r in &sh.reads {
                if !ordered(r) && !self.morally_strong(r, s) {
                    races.push(*r);
                }
            }
        }
        for p in races {
            self.report(addr, p, *s);
        }
        let mut sh = sh;
        if is_write {
            sh.write = Some(*s);
            sh.reads.clear();
        } else {
            match sh.reads.iter_mut().find(|r| r.tid == s.tid) {
                Some(r) => *r = *s,
                None => sh.reads.push(*s),
            }
        }
        self.shadow.insert(key, sh);
    }

    fn report(&mut self, addr: u64, first: Stamp, second: Stamp) {
        let kind = if first.order.is_none() || second.order.is_none() {
            RaceKind::Data
        } else {
            RaceKind::Scope
        };
        if self.found.len() < MAX_REPORTS && self.seen.insert((kind, first.pc, second.pc)) {
            self.found.push((kind, addr, first, second));
        }
    }

    /// The races found, with instruction locations from `kernel`.
    pub fn reports(&self, kernel: &Kernel) -> Vec<RaceReport> {
        let access = |s: &Stamp| RaceAccess {
            location: kernel.where_is(s.pc as usize),
            thread: s.tid,
            group: self.group(s.tid),
            access: describe(s),
            name: None,
        };
        self.found
            .iter()
            .map(|(kind, addr, a, b)| RaceReport {
                kind: *kind,
                address: *addr,
                first: access(a),
                second: access(b),
            })
            .collect()
    }
}

fn describe(s: &Stamp) -> String {
    let what = match s.kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::Rmw => "rmw",
    };
    match s.order {
        None => format!("plain {what}"),
        Some(o) => format!("{} {what} at {} scope", o.name(), s.scope),
    }
}

#[cfg(test)]
mod tests;
