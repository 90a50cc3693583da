//! Candidate executions: one trace per thread (`interp.rs`), a reads-from choice per read (a write
//! to the same location with the value read), then the model's own choices (coherence order per
//! location, the PTX Fence-SC order), which the model enumerates itself because its axioms prune
//! them (`ptx.rs`, `opencl.rs`). Final states are collected over the consistent executions.
//!
//! The fixed part of a candidate is an [`Exec`]: the events (initial writes first, then each
//! thread's in program order), program order, dependencies and the reads-from choice.

use super::event::{Event, Kind, LocKey, Placement};
use super::interp::{home, init_value, initial_keys, Trace};
use super::rel::{members, Rel, Set, MAX_EVENTS};
use super::{ModelError, Race};
use crate::ir::{Space, SpaceSet, SrcLoc};
use crate::normalise;
use crate::test::LitmusTest;
use crate::Var;
use std::collections::{BTreeMap, BTreeSet};

/// One candidate's events and the relations fixed before the model's own choices.
pub struct Exec {
    pub events: Vec<Event>,
    /// The initial writes are events `0..ninit`, one per location instance in `locs`.
    pub ninit: usize,
    pub init: Set,
    pub locs: Vec<LocKey>,
    /// Per event: its location's index in `locs`.
    pub loc_of: Vec<Option<usize>>,
    /// Per location: the events accessing it (its initial write included).
    pub loc_events: Vec<Set>,
    /// Per location: its writes, the initial write first.
    pub loc_writes: Vec<Vec<usize>>,
    /// Program order: same thread, earlier to later.
    pub po: Rel,
    /// Read → event whose address, value or execution depends on it.
    pub dep: Rel,
    /// Reads-from: write → read.
    pub rf: Rel,
    /// Per read: the write it reads from.
    pub rf_src: Vec<Option<usize>>,
    pub place: Vec<Placement>,
    pub thread_names: Vec<String>,
    pub loc_names: Vec<String>,
    pub file: String,
}

impl Exec {
    pub fn n(&self) -> usize {
        self.events.len()
    }

    /// Events satisfying `f`, as a set.
    pub fn set(&self, f: impl Fn(&Event) -> bool) -> Set {
        let mut s = 0;
        for (i, e) in self.events.iter().enumerate() {
            if f(e) {
                s |= 1 << i;
            }
        }
        s
    }

    pub fn same_thread(&self, a: usize, b: usize) -> bool {
        self.events[a].thread.is_some() && self.events[a].thread == self.events[b].thread
    }

    pub fn describe(&self, e: usize) -> String {
        self.events[e].describe(&self.file, &self.thread_names, &self.loc_names)
    }

    /// Program order restricted to events of one location, per location, as one relation.
    pub fn po_loc(&self) -> Rel {
        let mut r = Rel::empty(self.n());
        for (a, la) in self.loc_of.iter().enumerate() {
            if let Some(l) = la {
                r.set_row(a, self.po.row(a) & self.loc_events[*l]);
            }
        }
        r
    }

    /// Barrier instances of work-groups: for each (device, group, barrier number), the threads'
    /// arrive and leave events. `Err` when the threads of a work-group pass different numbers of
    /// barriers (a deadlock in PTX, barrier divergence in OpenCL), with the thread that passed fewer.
    pub fn barrier_pairs(&self) -> Result<Vec<(usize, usize)>, usize> {
        let threads = self.place.len();
        let mut counts = vec![0u32; threads];
        for e in &self.events {
            if e.kind == Kind::BarrierArrive {
                counts[e.thread.expect("thread event")] += 1;
            }
        }
        let mut pairs = Vec::new();
        for t in 0..threads {
            for u in 0..threads {
                if t == u
                    || self.place[t].device != self.place[u].device
                    || self.place[t].group != self.place[u].group
                {
                    continue;
                }
                if counts[t] != counts[u] {
                    return Err(if counts[t] < counts[u] { t } else { u });
                }
                for (a, ea) in self.events.iter().enumerate() {
                    if ea.kind != Kind::BarrierArrive || ea.thread != Some(t) {
                        continue;
                    }
                    for (b, eb) in self.events.iter().enumerate() {
                        if eb.kind == Kind::BarrierLeave
                            && eb.thread == Some(u)
                            && eb.barrier == ea.barrier
                        {
                            pairs.push((a, b));
                        }
                    }
                }
            }
        }
        Ok(pairs)
    }
}

impl Exec {
    /// PTX barriers (ids 0-15, optional thread counts, `bar.arrive`): the synchronisation of every
    /// completed barrier generation, each participant's arrival before every other participant's
    /// departure (PTX ISA §8.9.5 "memory synchronization": `bar.sync`/`bar.red`/`bar.arrive`
    /// synchronizes with `bar.sync`/`bar.red` on the same barrier); `None` when the execution
    /// deadlocks (it has no final state). Per work-group and id, generation `i` is each
    /// participant's `i`-th arrival there: a barrier without a thread count expects every thread
    /// of the work-group, one with count `b` expects `b` litmus threads (a litmus count counts
    /// litmus threads). A generation short of its participants deadlocks when one of its arrivals
    /// waits; barriers that wait for each other in a cycle (`bar.sync 1; bar.sync 2` against
    /// `bar.sync 2; bar.sync 1`) deadlock too. `decide` has refused the barriers whose generations
    /// depend on timing (`check_barriers`). A completed generation with `bar.red` arrivals gives
    /// each of them the reduction of the members' predicates: a trace that assumed another result
    /// makes the combination no execution (`BarrierStop::Mismatch`).
    pub fn barrier_sync(&self) -> Result<Vec<(usize, usize)>, BarrierStop> {
        let threads = self.place.len();
        // Per thread, its arrivals (event, the departure of the same barrier instance if it waits).
        let mut arrivals: Vec<Vec<(usize, Option<usize>)>> = vec![Vec::new(); threads];
        for (a, ea) in self.events.iter().enumerate() {
            if ea.kind != Kind::BarrierArrive {
                continue;
            }
            let t = ea.thread.expect("thread event");
            let leave = self.events[a + 1..]
                .iter()
                .position(|e| {
                    e.thread == Some(t) && e.kind == Kind::BarrierLeave && e.barrier == ea.barrier
                })
                .map(|i| a + 1 + i);
            arrivals[t].push((a, leave));
        }
        let mut pairs = Vec::new();
        let mut done: Vec<(u32, u32, u8)> = Vec::new();
        for t in 0..threads {
            for &(a, _) in &arrivals[t] {
                let (p, id) = (self.place[t], self.events[a].bar_id);
                if done.contains(&(p.device, p.group, id)) {
                    continue;
                }
                done.push((p.device, p.group, id));
                let group: Vec<usize> = (0..threads)
                    .filter(|&u| self.place[u].device == p.device && self.place[u].group == p.group)
                    .collect();
                let at: Vec<Vec<(usize, Option<usize>)>> = group
                    .iter()
                    .map(|&u| {
                        arrivals[u]
                            .iter()
                            .copied()
                            .filter(|&(x, _)| self.events[x].bar_id == id)
                            .collect()
                    })
                    .collect();
                let need = match self.events[a].bar_threads {
                    None => group.len(),
                    Some(n) => n as usize,
                };
                let gens = at.iter().map(Vec::len).max().unwrap_or(0);
                for g in 0..gens {
                    let members: Vec<(usize, Option<usize>)> =
                        at.iter().filter_map(|v| v.get(g).copied()).collect();
                    if members.len() < need {
                        if members.iter().any(|m| m.1.is_some()) {
                            return Err(BarrierStop::Deadlock);
                        }
                        continue;
                    }
                    let reds: Vec<&Event> = members
                        .iter()
                        .map(|&(x, _)| &self.events[x])
                        .filter(|e| e.bar_red.is_some())
                        .collect();
                    let trues = reds.iter().filter(|e| e.rval != 0).count() as u64;
                    if reds.iter().any(|e| {
                        e.bar_red
                            .expect("a reduction")
                            .result(trues, reds.len() as u64)
                            != e.wval
                    }) {
                        return Err(BarrierStop::Mismatch);
                    }
                    for &(x, _) in &members {
                        for &(_, l) in &members {
                            if let Some(l) = l {
                                if self.events[l].thread != self.events[x].thread {
                                    pairs.push((x, l));
                                }
                            }
                        }
                    }
                }
            }
        }
        // Barriers waiting for each other in a cycle.
        let mut r = self.po.clone();
        for &(x, l) in &pairs {
            r.add(x, l);
        }
        if !r.acyclic() {
            return Err(BarrierStop::Deadlock);
        }
        Ok(pairs)
    }
}

/// Why [`Exec::barrier_sync`] gives no synchronisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierStop {
    /// A barrier is never completed: the execution has no final state.
    Deadlock,
    /// A `bar.red` result differs from the reduction of its generation: no execution.
    Mismatch,
}

/// The work a decision may do: reads-from choices checked and orders enumerated (coherence orders,
/// Fence-SC orders, combinations of them), counted across every enumeration of the decision. The
/// candidate limit alone bounded only what a check reported after it returned, so one check could
/// enumerate the coherence orders of a dozen writes for minutes; once the budget is spent, every
/// enumeration stops and the decision's states are those found within it (the bound is hit).
pub struct Budget(std::cell::Cell<u64>);

impl Budget {
    pub fn new(units: u64) -> Budget {
        Budget(std::cell::Cell::new(units))
    }

    /// Takes one unit of work; false once the budget is spent.
    pub fn take(&self) -> bool {
        match self.0.get() {
            0 => false,
            n => {
                self.0.set(n - 1);
                true
            }
        }
    }

    pub fn spent(&self) -> bool {
        self.0.get() == 0
    }
}

/// What a model says about one candidate (events and reads-from) over all its own choices.
pub struct CheckOut {
    /// Candidate executions considered (reads-from fixed, the model's orders varied).
    pub candidates: u64,
    /// One entry per family of consistent executions: per location, the writes that can be last
    /// in coherence order (any combination across locations is consistent).
    pub finals: Vec<Vec<Set>>,
    /// A race in a consistent execution (OpenCL: the program's behaviour is undefined; PTX: the
    /// execution stands, the race is reported).
    pub race: Option<Race>,
}

/// An axiomatic model.
pub trait Model {
    /// What the model precomputes per combination of traces.
    type Static;
    fn prepare(&self, ex: &Exec) -> Self::Static;
    /// Whether read-modify-writes `a` and `b` cannot both read from one write (atomicity).
    fn exclusive(&self, ex: &Exec, st: &Self::Static, a: usize, b: usize) -> bool;
    /// Every consistent choice of the model's orders for the candidate, each order enumerated
    /// taking a unit of `budget` (stopping when it is spent).
    fn check(&self, ex: &Exec, st: &Self::Static, budget: &Budget) -> CheckOut;
}

/// What the enumeration found.
pub struct Collected {
    pub states: BTreeSet<Vec<i64>>,
    pub candidates: u64,
    pub race: Option<Race>,
    /// The candidate limit stopped the enumeration.
    pub limit_hit: bool,
    /// Some candidate was consistent (racy ones included).
    pub consistent: bool,
    /// Some combination of traces (each read with a write of its value) deadlocks at a barrier: an
    /// execution may have no final state. Over-approximated: the candidate is not checked for
    /// consistency.
    pub deadlock: bool,
    /// Stop at the first consistent candidate.
    first_only: bool,
    /// Stop at the first race (its behaviour is undefined: no state needs collecting).
    stop_at_race: bool,
}

impl Collected {
    fn done(&self) -> bool {
        (self.stop_at_race && self.race.is_some())
            || self.limit_hit
            || (self.first_only && self.consistent)
    }
}

/// Every consistent execution's final state (values of the condition's observed variables), from
/// one trace per thread; with `first_only`, until the first consistent execution; with
/// `stop_at_race`, until the first race (the first race found is kept either way).
#[allow(clippy::too_many_arguments)]
pub fn enumerate<M: Model>(
    test: &LitmusTest,
    per: &[Vec<Trace>],
    place: &[Placement],
    model: &M,
    max_candidates: u64,
    budget: &Budget,
    first_only: bool,
    stop_at_race: bool,
) -> Result<Collected, ModelError> {
    let mut out = Collected {
        states: BTreeSet::new(),
        candidates: 0,
        race: None,
        limit_hit: false,
        consistent: false,
        deadlock: false,
        first_only,
        stop_at_race,
    };
    if per.iter().any(|t| t.is_empty()) {
        return Ok(out);
    }
    // The (location, value) pairs each trace reads and writes, numbered, as bit sets; per thread
    // the union of what its traces write: a combination is only built when every value read can
    // have been written.
    let mut ids: BTreeMap<(LocKey, u64), usize> = initial_keys(test)
        .map(|k| ((k, init_value(test, k)), 0))
        .collect();
    for ts in per {
        for t in ts {
            for e in &t.events {
                if let Some(k) = e.loc {
                    if e.reads() {
                        ids.entry((k, e.rval)).or_insert(0);
                    }
                    if e.writes() {
                        ids.entry((k, e.wval)).or_insert(0);
                    }
                }
            }
        }
    }
    for (i, v) in ids.values_mut().enumerate() {
        *v = i;
    }
    if ids.len() > MAX_PAIRS {
        return Err(ModelError::Limit {
            file: test.file.clone(),
            message: format!(
                "the threads read and write more than {MAX_PAIRS} distinct (location, value) pairs"
            ),
        });
    }
    let sig = |t: &Trace, f: fn(&Event) -> bool, val: fn(&Event) -> u64| -> Bits {
        let mut b = Bits::new();
        for e in t.events.iter().filter(|e| f(e)) {
            if let Some(k) = e.loc {
                b.insert(ids[&(k, val(e))]);
            }
        }
        b
    };
    let reads: Vec<Vec<Bits>> = per
        .iter()
        .map(|ts| {
            ts.iter()
                .map(|t| sig(t, Event::reads, |e| e.rval))
                .collect()
        })
        .collect();
    let writes: Vec<Vec<Bits>> = per
        .iter()
        .map(|ts| {
            ts.iter()
                .map(|t| sig(t, Event::writes, |e| e.wval))
                .collect()
        })
        .collect();
    let mut suffix: Vec<Bits> = vec![Bits::new(); per.len() + 1];
    for t in (0..per.len()).rev() {
        suffix[t] = writes[t].iter().fold(suffix[t + 1], |s, w| s.or(w));
    }
    let mut init = Bits::new();
    for k in initial_keys(test) {
        init.insert(ids[&(k, init_value(test, k))]);
    }
    let ctx = Combos {
        test,
        per,
        reads: &reads,
        writes: &writes,
        suffix: &suffix,
        place,
        max_candidates,
        budget,
    };
    let mut pick = Vec::with_capacity(per.len());
    ctx.choose(model, &mut pick, &init, &Bits::new(), &mut out)?;
    Ok(out)
}

/// The most distinct (location, value) pairs the combination search tracks.
const MAX_PAIRS: usize = 1024;

/// A set of (location, value) pair numbers below [`MAX_PAIRS`] (no allocation: the search builds
/// one per node).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Bits([u64; MAX_PAIRS / 64]);

impl Bits {
    fn new() -> Bits {
        Bits([0; MAX_PAIRS / 64])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    /// `self ∪ o`.
    fn or(&self, o: &Bits) -> Bits {
        let mut r = *self;
        for (a, b) in r.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
        r
    }
    /// `self \ o`.
    fn minus(&self, o: &Bits) -> Bits {
        let mut r = *self;
        for (a, b) in r.0.iter_mut().zip(&o.0) {
            *a &= !b;
        }
        r
    }
    fn subset_of(&self, o: &Bits) -> bool {
        self.0.iter().zip(&o.0).all(|(a, b)| a & !b == 0)
    }
}

/// The depth-first choice of one trace per thread.
struct Combos<'a> {
    test: &'a LitmusTest,
    per: &'a [Vec<Trace>],
    reads: &'a [Vec<Bits>],
    writes: &'a [Vec<Bits>],
    /// Per thread `t`: what threads `t..` may write.
    suffix: &'a [Bits],
    place: &'a [Placement],
    max_candidates: u64,
    budget: &'a Budget,
}

impl Combos<'_> {
    /// `avail`: initial values and the writes of the chosen traces; `pending`: values the chosen
    /// traces read that those do not provide.
    fn choose<M: Model>(
        &self,
        model: &M,
        pick: &mut Vec<usize>,
        avail: &Bits,
        pending: &Bits,
        out: &mut Collected,
    ) -> Result<(), ModelError> {
        let t = pick.len();
        if t == self.per.len() {
            let combo: Vec<&Trace> = pick
                .iter()
                .enumerate()
                .map(|(t, &i)| &self.per[t][i])
                .collect();
            return one_combo(
                self.test,
                &combo,
                self.place,
                model,
                (self.max_candidates, self.budget),
                out,
            );
        }
        for i in 0..self.per[t].len() {
            let avail2 = avail.or(&self.writes[t][i]);
            let pending2 = pending.or(&self.reads[t][i]).minus(&avail2);
            if !pending2.subset_of(&self.suffix[t + 1]) {
                continue;
            }
            pick.push(i);
            self.choose(model, pick, &avail2, &pending2, out)?;
            pick.pop();
            if out.done() {
                return Ok(());
            }
        }
        Ok(())
    }
}

fn build(test: &LitmusTest, combo: &[&Trace], place: &[Placement]) -> Result<Exec, ModelError> {
    let mut keys: BTreeSet<LocKey> = initial_keys(test).collect();
    for t in combo {
        keys.extend(t.events.iter().filter_map(|e| e.loc));
    }
    let locs: Vec<LocKey> = keys.into_iter().collect();
    let ninit = locs.len();
    let total = ninit + combo.iter().map(|t| t.events.len()).sum::<usize>();
    if total > MAX_EVENTS {
        return Err(ModelError::Limit {
            file: test.file.clone(),
            message: format!(
                "an execution has {total} events; the model handles at most {MAX_EVENTS}"
            ),
        });
    }
    let mut events: Vec<Event> = locs
        .iter()
        .map(|&k| {
            let l = &test.locations[k.loc];
            Event {
                thread: None,
                kind: Kind::Init,
                mode: super::event::Mode::Plain,
                scope: crate::ir::Scope::System,
                loc: Some(k),
                space: if k.copy.is_some() {
                    Space::Local
                } else {
                    Space::Global
                },
                spaces: SpaceSet::NONE,
                width: l.ty.width(),
                rval: 0,
                wval: init_value(test, k),
                deps: 0,
                barrier: 0,
                bar_id: 0,
                bar_threads: None,
                bar_red: None,
                at: SrcLoc::default(),
            }
        })
        .collect();
    let n = total;
    let mut po = Rel::empty(n);
    let mut dep = Rel::empty(n);
    for t in combo {
        let base = events.len();
        for (i, e) in t.events.iter().enumerate() {
            let g = base + i;
            for j in i + 1..t.events.len() {
                po.add(g, base + j);
            }
            for d in members(e.deps) {
                dep.add(base + d, g);
            }
            events.push(e.clone());
        }
    }
    let loc_of: Vec<Option<usize>> = events
        .iter()
        .map(|e| {
            e.loc
                .map(|k| locs.binary_search(&k).expect("every key is collected"))
        })
        .collect();
    let mut loc_events = vec![0 as Set; locs.len()];
    let mut loc_writes = vec![Vec::new(); locs.len()];
    for (i, e) in events.iter().enumerate() {
        if let Some(l) = loc_of[i] {
            loc_events[l] |= 1 << i;
            if e.writes() {
                loc_writes[l].push(i);
            }
        }
    }
    Ok(Exec {
        ninit,
        init: super::rel::all(ninit),
        locs,
        loc_of,
        loc_events,
        loc_writes,
        po,
        dep,
        rf: Rel::empty(n),
        rf_src: vec![None; n],
        place: place.to_vec(),
        thread_names: test.threads.iter().map(|t| t.name.clone()).collect(),
        loc_names: test.locations.iter().map(|l| l.name.clone()).collect(),
        file: test.file.clone(),
        events,
    })
}

fn one_combo<M: Model>(
    test: &LitmusTest,
    combo: &[&Trace],
    place: &[Placement],
    model: &M,
    (max_candidates, budget): (u64, &Budget),
    out: &mut Collected,
) -> Result<(), ModelError> {
    let mut ex = build(test, combo, place)?;
    let reads: Vec<usize> = (0..ex.n()).filter(|&i| ex.events[i].reads()).collect();
    // Candidate sources per read: same location, the value read, not the read itself and not a
    // later write of its own thread.
    let mut cands: Vec<Vec<usize>> = Vec::with_capacity(reads.len());
    for &r in &reads {
        let e = &ex.events[r];
        let l = ex.loc_of[r].expect("a read has a location");
        let c: Vec<usize> = ex.loc_writes[l]
            .iter()
            .copied()
            .filter(|&w| w != r && ex.events[w].wval == e.rval && !ex.po.has(r, w))
            .collect();
        if c.is_empty() {
            return Ok(());
        }
        cands.push(c);
    }
    if ex.barrier_sync() == Err(BarrierStop::Deadlock) {
        out.deadlock = true;
    }
    let st = model.prepare(&ex);
    let search = RfSearch {
        test,
        combo,
        model,
        st: &st,
        reads: &reads,
        cands: &cands,
        max_candidates,
        budget,
    };
    search.assign(&mut ex, 0, out);
    Ok(())
}

/// The depth-first choice of a write for each read of one combination of traces.
struct RfSearch<'a, M: Model> {
    test: &'a LitmusTest,
    combo: &'a [&'a Trace],
    model: &'a M,
    st: &'a M::Static,
    reads: &'a [usize],
    cands: &'a [Vec<usize>],
    max_candidates: u64,
    budget: &'a Budget,
}

impl<M: Model> RfSearch<'_, M> {
    fn assign(&self, ex: &mut Exec, k: usize, out: &mut Collected) {
        if out.done() {
            return;
        }
        if k == self.reads.len() {
            // A reads-from choice costs a unit too (most fail before any order is enumerated).
            if !self.budget.take() {
                out.limit_hit = true;
                return;
            }
            let r = self.model.check(ex, self.st, self.budget);
            out.candidates += r.candidates;
            if out.candidates > self.max_candidates || self.budget.spent() {
                out.limit_hit = true;
            }
            out.consistent |= r.race.is_some() || !r.finals.is_empty();
            if let Some(race) = r.race {
                out.race.get_or_insert(race);
                if out.stop_at_race {
                    return;
                }
            }
            for f in &r.finals {
                collect_states(self.test, self.combo, ex, f, &mut out.states);
            }
            return;
        }
        let r = self.reads[k];
        for &w in &self.cands[k] {
            // Two read-modify-writes that must be atomic with each other cannot read one write.
            if ex.events[r].kind == Kind::Rmw
                && self.reads[..k].iter().any(|&r2| {
                    ex.rf_src[r2] == Some(w)
                        && ex.events[r2].kind == Kind::Rmw
                        && self.model.exclusive(ex, self.st, r, r2)
                })
            {
                continue;
            }
            ex.rf_src[r] = Some(w);
            ex.rf.add(w, r);
            self.assign(ex, k + 1, out);
            ex.rf.set_row(w, ex.rf.row(w) & !(1 << r));
            ex.rf_src[r] = None;
        }
    }
}

/// The final states of a family of consistent executions: registers from the traces, observed
/// locations from every combination of their possible last writes.
fn collect_states(
    test: &LitmusTest,
    combo: &[&Trace],
    ex: &Exec,
    finals: &[Set],
    states: &mut BTreeSet<Vec<i64>>,
) {
    let obs = &test.condition.observed;
    let mut choices: Vec<Vec<i64>> = Vec::with_capacity(obs.len());
    for v in obs {
        choices.push(match *v {
            Var::Reg { thread, reg } => {
                let ty = test.threads[thread].regs[reg as usize].ty;
                vec![normalise(combo[thread].regs[reg as usize], ty)]
            }
            Var::Loc(l) | Var::Elem { loc: l, .. } => {
                let elem = match *v {
                    Var::Elem { index, .. } => index,
                    _ => 0,
                };
                let li = ex
                    .locs
                    .binary_search(&home(test, l, elem))
                    .expect("every declared location has an initial write");
                let ty = test.locations[l].ty;
                let mut vals: Vec<i64> = members(finals[li])
                    .map(|w| normalise(ex.events[w].wval, ty))
                    .collect();
                vals.sort_unstable();
                vals.dedup();
                vals
            }
        });
    }
    let mut idx = vec![0usize; choices.len()];
    loop {
        states.insert(idx.iter().zip(&choices).map(|(&i, c)| c[i]).collect());
        let mut t = 0;
        loop {
            if t == idx.len() {
                return;
            }
            idx[t] += 1;
            if idx[t] < choices[t].len() {
                break;
            }
            idx[t] = 0;
            t += 1;
        }
    }
}

/// Calls `f` with every order of `items` in which `must(a, b)` puts `a` before `b` (the linear
/// extensions), until `f` returns false. Returns how many orders were produced.
pub fn linear_extensions(
    items: &[usize],
    must: &Rel,
    budget: &Budget,
    f: &mut dyn FnMut(&[usize]) -> bool,
) -> u64 {
    fn go(
        left: Set,
        must: &Rel,
        order: &mut Vec<usize>,
        f: &mut dyn FnMut(&[usize]) -> bool,
        count: &mut u64,
        budget: &Budget,
    ) -> bool {
        if left == 0 {
            if !budget.take() {
                return false;
            }
            *count += 1;
            return f(order);
        }
        for x in members(left) {
            // x can come next when no item still left must precede it.
            if must.column(x) & left & !(1 << x) != 0 {
                continue;
            }
            order.push(x);
            let go_on = go(left & !(1 << x), must, order, f, count, budget);
            order.pop();
            if !go_on {
                return false;
            }
        }
        true
    }
    let mut left: Set = 0;
    for &i in items {
        left |= 1 << i;
    }
    let mut order = Vec::with_capacity(items.len());
    let mut count = 0;
    go(left, must, &mut order, f, &mut count, budget);
    count
}
