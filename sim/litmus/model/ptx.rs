//! The PTX memory consistency model (PTX ISA, chapter "Memory Consistency Model", sm_70 and later;
//! formalised by Lustig, Sahasrabuddhe and Giroux, "A Formal Analysis of the NVIDIA PTX Memory
//! Consistency Model", ASPLOS 2019), implemented from the ISA's definitions:
//!
//! - *morally strong* (§"Morally strong operations"): same thread, or both strong with each scope
//!   including the other thread; memory operations must overlap completely (same location);
//! - *observation order* (§"Observation order"): a morally strong reads-from, extended through atomic
//!   read-modify-writes: `obs = (rf ∩ ms)+`;
//! - *release and acquire patterns* (§"Release and Acquire Patterns"): a release operation on M, or
//!   a release operation or fence followed in program order by a strong write (on M for an
//!   operation); dually an acquire operation, or a strong read followed by an acquire operation on
//!   M or an acquire fence. A release pattern *synchronizes with* an acquire pattern when a write of
//!   the first precedes a read of the second in observation order and the pattern's first and last
//!   operations are morally strong (§"Memory synchronization", rule 4); fence.sc operations
//!   synchronize in Fence-SC order (rule 1); `bar.sync` operations of one barrier synchronize
//!   (rule 2: each arrival before every other participant's departure);
//! - *base causality order*: `(po ∪ sw)+`; *causality order*: `base ∪ obs ; base`
//!   (§"Causality order");
//! - *coherence order* (§"Coherence order": "a partial transitive order that relates overlapping
//!   write operations ... related in coherence order if they are morally strong or if they are
//!   related in causality order; unrelated if they are in a data-race"): a weak and a strong write
//!   of different threads without causality between them are not ordered. Enumerated as a total
//!   order per location whose restriction `(co ∩ (ms ∪ cause))+` is the partial order — every
//!   orientation of the morally strong pairs, closed, which are exactly the minimal partial orders
//!   (a larger one only adds from-reads, so forbids more and leaves the maximal writes fewer);
//!   from-reads use the partial order, the final value of a location is a maximal write;
//! - axioms (§"Axioms"): Coherence (causality-ordered writes are coherence-ordered), Fence-SC
//!   (Fence-SC order, a total order over the fence.sc operations, cannot contradict causality
//!   between morally strong fences), Atomicity (of morally strong read-modify-writes), No-Thin-Air
//!   (`acyclic(rf ∪ dep)`, as in the ASPLOS'19 formalisation), SC-per-Location
//!   (`acyclic(po_loc ∪ (com ∩ ms))`), Causality (a read cannot read from a write it precedes in
//!   causality order, nor from a write coherence-before one that precedes it).
//!
//! *Data races* (§"Data races": conflicting overlapping operations, not morally strong, unrelated
//! in causality order) do not make the program undefined: the first race of a consistent execution
//! is reported beside the verdict (`race`).
//!
//! Deviations and limits (numbered):
//! 1. Every location is accessed with one width (the parser enforces it), so single-copy atomicity
//!    is vacuous and "overlap completely" is "same location".
//! 2. The initial write of a location precedes every event in causality order and every write in
//!    coherence order, and is morally strong with nothing.
//! 3. Barriers (`Exec::barrier_sync`): 16 per CTA, thread counts, `bar.arrive`; an execution in
//!    which a barrier is never completed (a thread passing fewer `bar.sync` than another thread of
//!    its CTA, threads at different ids, too few threads for the count) deadlocks: it has no final
//!    state (dropped; the decision says that some execution may deadlock). `bar.red` gives each
//!    participant the reduction of its generation's predicates (traces fork over the results, the
//!    matching ones are kept). Barriers whose generations depend on timing are not modelled
//!    (`check_barriers`).
//! 4. No proxies, no `.cluster` scope, no mixed-size accesses (rejected by the parser).
//!
//! Coherence order, the Fence-SC order's constraints and the causality axiom's second half only
//! relate events of one location, so each location's coherence orders are enumerated on their own
//! and any combination of consistent ones is consistent.

use super::event::{includes, Kind, Mode};
use super::exec::{linear_extensions, Budget, CheckOut, Exec, Model};
use super::rel::{members, Rel, Set};
use super::{Race, RaceKind};

pub struct Ptx;

pub struct Static {
    ms: Rel,
    /// Release patterns: (first operation, the writes of the pattern).
    releases: Vec<(usize, Set)>,
    /// Acquire patterns: (last operation, the reads of the pattern).
    acquires: Vec<(usize, Set)>,
    /// fence.sc operations that are morally strong with another one.
    sc_fences: Vec<usize>,
    barriers: Option<Vec<(usize, usize)>>,
    /// Conflicting accesses of different threads that are not morally strong: a data race where
    /// causality does not order them (`race`).
    conflicts: Vec<(usize, usize)>,
}

fn strong(m: Mode) -> bool {
    m.atomic()
}

/// Morally strong (PTX ISA §"Morally strong operations").
fn morally_strong(ex: &Exec, a: usize, b: usize) -> bool {
    let (ea, eb) = (&ex.events[a], &ex.events[b]);
    let (Some(ta), Some(tb)) = (ea.thread, eb.thread) else {
        return false;
    };
    if ea.is_access() && eb.is_access() && (ea.loc != eb.loc || ea.width != eb.width) {
        return false;
    }
    if ta == tb {
        return true;
    }
    strong(ea.mode)
        && strong(eb.mode)
        && includes(ea.scope, ex.place[ta], ta, ex.place[tb], tb)
        && includes(eb.scope, ex.place[tb], tb, ex.place[ta], ta)
}

impl Model for Ptx {
    type Static = Static;

    fn prepare(&self, ex: &Exec) -> Static {
        let n = ex.n();
        let mut ms = Rel::empty(n);
        for a in ex.ninit..n {
            for b in ex.ninit..n {
                if a != b && morally_strong(ex, a, b) {
                    ms.add(a, b);
                }
            }
        }
        let strong_writes = ex.set(|e| e.is_access() && e.writes() && strong(e.mode));
        let strong_reads = ex.set(|e| e.is_access() && e.reads() && strong(e.mode));
        let mut releases = Vec::new();
        let mut acquires = Vec::new();
        for (i, e) in ex.events.iter().enumerate() {
            let loc = e
                .loc
                .map(|_| ex.loc_events[ex.loc_of[i].expect("access")])
                .unwrap_or(0);
            if e.is_access() && e.writes() && e.mode.release() {
                releases.push((i, (1 << i) | (ex.po.row(i) & strong_writes & loc)));
            } else if e.is_fence() && e.mode.release() {
                releases.push((i, ex.po.row(i) & strong_writes));
            }
            if e.is_access() && e.reads() && e.mode.acquire() {
                acquires.push((i, (1 << i) | (ex.po.column(i) & strong_reads & loc)));
            } else if e.is_fence() && e.mode.acquire() {
                acquires.push((i, ex.po.column(i) & strong_reads));
            }
        }
        let sc = ex.set(|e| e.is_fence() && e.mode.sc());
        let sc_fences = members(sc).filter(|&f| ms.row(f) & sc != 0).collect();
        let mut conflicts = Vec::new();
        for a in ex.ninit..n {
            for b in a + 1..n {
                let (ea, eb) = (&ex.events[a], &ex.events[b]);
                if ea.is_access()
                    && eb.is_access()
                    && ea.loc == eb.loc
                    && !ex.same_thread(a, b)
                    && (ea.writes() || eb.writes())
                    && !ms.has(a, b)
                {
                    conflicts.push((a, b));
                }
            }
        }
        Static {
            conflicts,
            ms,
            releases,
            acquires,
            sc_fences,
            barriers: ex.barrier_sync().ok(),
        }
    }

    fn exclusive(&self, _ex: &Exec, st: &Static, a: usize, b: usize) -> bool {
        st.ms.has(a, b)
    }

    fn check(&self, ex: &Exec, st: &Static, budget: &Budget) -> CheckOut {
        let mut out = CheckOut {
            candidates: 0,
            finals: Vec::new(),
            race: None,
        };
        // Deviation 3: a barrier some thread never reaches deadlocks.
        let Some(barriers) = &st.barriers else {
            return out;
        };
        // No-Thin-Air.
        if !ex.rf.union(&ex.dep).acyclic() {
            return out;
        }
        let obs = ex.rf.intersect(&st.ms).closure();
        let mut sw = Rel::empty(ex.n());
        for &(a, b) in barriers {
            sw.add(a, b);
        }
        for &(a, writes) in &st.releases {
            for &(b, reads) in &st.acquires {
                if a != b && st.ms.has(a, b) && members(writes).any(|w| obs.row(w) & reads != 0) {
                    sw.add(a, b);
                }
            }
        }
        let fences = &st.sc_fences;
        let mut order: Vec<usize> = fences.clone();
        permutations(&mut order, 0, &mut |l| {
            if !budget.take() {
                return;
            }
            let mut sw = sw.clone();
            for (i, &f) in l.iter().enumerate() {
                for &g in &l[i + 1..] {
                    if st.ms.has(f, g) {
                        sw.add(f, g);
                    }
                }
            }
            self.with_sc_order(ex, st, (&obs, &sw, l), budget, &mut out);
        });
        out
    }
}

impl Ptx {
    /// The rest of the check for one Fence-SC order `l` (fence.sc operations, first to last).
    fn with_sc_order(
        &self,
        ex: &Exec,
        st: &Static,
        (obs, sw, l): (&Rel, &Rel, &[usize]),
        budget: &Budget,
        out: &mut CheckOut,
    ) {
        let n = ex.n();
        let mut base = ex.po.union(sw).closure();
        // Deviation 2: the initial writes precede everything.
        for i in 0..ex.ninit {
            base.set_row(i, super::rel::all(n) & !ex.init);
        }
        let cause = base.union(&obs.seq(&base));
        // Causality, first half: a read cannot read from a write it precedes.
        if ex.rf.pairs().any(|(w, r)| cause.has(r, w)) {
            return;
        }
        // Fence-SC: morally strong fences ordered by causality are ordered alike in Fence-SC.
        for (i, &f) in l.iter().enumerate() {
            for &g in &l[i + 1..] {
                if st.ms.has(g, f) && cause.has(g, f) {
                    return;
                }
            }
        }
        let po_loc = ex.po_loc();
        let mut finals = Vec::with_capacity(ex.locs.len());
        let mut count: u64 = 1;
        for li in 0..ex.locs.len() {
            let (f, c) = self.location(ex, st, (&cause, &po_loc), li, budget);
            count = count.saturating_mul(c);
            if f == 0 {
                out.candidates += count;
                return;
            }
            finals.push(f);
        }
        out.candidates += count;
        out.finals.push(finals);
        if out.race.is_none() {
            out.race = race(ex, st, &cause);
        }
    }

    /// The coherence orders of location `li` that satisfy the per-location axioms: the set of
    /// writes that can be last, and how many orders were tried.
    fn location(
        &self,
        ex: &Exec,
        st: &Static,
        (cause, po_loc): (&Rel, &Rel),
        li: usize,
        budget: &Budget,
    ) -> (Set, u64) {
        let n = ex.n();
        let writes = &ex.loc_writes[li];
        let evs = ex.loc_events[li];
        let wset: Set = writes.iter().fold(0, |s, &w| s | 1 << w);
        // Coherence axiom: causality-ordered writes keep that order (the initial write is first).
        let mut must = cause.restrict(wset, wset);
        let reads: Vec<usize> = members(evs).filter(|&r| ex.events[r].reads()).collect();
        let mut finals: Set = 0;
        let count = linear_extensions(
            writes,
            must_with_init(&mut must, ex, wset),
            budget,
            &mut |co| {
                if finals >> co[co.len() - 1] & 1 == 1 {
                    return true;
                }
                // The partial coherence order: total order restricted to morally strong or
                // causality-ordered pairs, transitively closed.
                let mut cop = Rel::empty(n);
                for (i, &a) in co.iter().enumerate() {
                    for &b in &co[i + 1..] {
                        if ex.init >> a & 1 == 1 || st.ms.has(a, b) || cause.has(a, b) {
                            cop.add(a, b);
                        }
                    }
                }
                let cop = cop.closure();
                let mut fr = Rel::empty(n);
                for &r in &reads {
                    let src = ex.rf_src[r].expect("every read reads from a write");
                    fr.set_row(r, cop.row(src) & !(1 << r));
                }
                // Atomicity of morally strong read-modify-writes.
                for &a in &reads {
                    if ex.events[a].kind != Kind::Rmw {
                        continue;
                    }
                    let src = ex.rf_src[a].expect("read");
                    for &w in writes {
                        if w != a && st.ms.has(a, w) && cop.has(src, w) && cop.has(w, a) {
                            return true;
                        }
                    }
                }
                // Causality, second half: no read from a write coherence-before one that precedes it.
                if fr.pairs().any(|(r, w)| cause.has(w, r)) {
                    return true;
                }
                // SC per location.
                let com = ex
                    .rf
                    .union(&cop)
                    .union(&fr)
                    .intersect(&st.ms)
                    .restrict(evs, evs);
                if !po_loc.restrict(evs, evs).union(&com).acyclic() {
                    return true;
                }
                finals |= 1 << co[co.len() - 1];
                true
            },
        );
        (finals, count)
    }
}

/// A data race of a consistent execution (PTX ISA, "Data races": two conflicting overlapping
/// operations, at least one a write, not morally strong and not related in causality order). PTX
/// gives racy programs a semantics (the execution is consistent as it stands); the race is
/// reported beside the verdict. Both strong but a scope too narrow is reported as a scope race.
fn race(ex: &Exec, st: &Static, cause: &Rel) -> Option<Race> {
    let &(a, b) = st
        .conflicts
        .iter()
        .find(|&&(a, b)| !cause.has(a, b) && !cause.has(b, a))?;
    let kind = if strong(ex.events[a].mode) && strong(ex.events[b].mode) {
        RaceKind::Scope
    } else {
        RaceKind::Data
    };
    Some(Race {
        kind,
        first: ex.describe(a),
        second: ex.describe(b),
    })
}

/// `must` with the initial write before every other write.
fn must_with_init<'a>(must: &'a mut Rel, ex: &Exec, wset: Set) -> &'a Rel {
    for i in members(ex.init & wset) {
        must.set_row(i, must.row(i) | (wset & !(1 << i)));
    }
    must
}

/// Calls `f` with every permutation of `v[k..]` (after `v[..k]`).
pub fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k + 1 >= v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permutations(v, k + 1, f);
        v.swap(k, i);
    }
}
