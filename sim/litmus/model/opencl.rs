//! The OpenCL 2.0 memory model as scoped C11: Batty, Donaldson and Wickerson, "Overhauling SC atomics
//! in C11 and OpenCL" (POPL 2016, §6: memory scopes, inclusion, the two memory regions, barriers),
//! with the repaired seq_cst semantics of RC11 (Lahav, Vafeiadis, Kang, Hur, Dreyer, "Repairing
//! Sequential Consistency in C/C++11", PLDI 2017, §3), implemented from the papers' definitions:
//!
//! - *inclusion* `incl(a, b)`: both atomic (or fences/barriers) and each one's scope includes the
//!   other's thread (an access to local memory has at most work_group scope, OpenCL 2.0 §3.3.5);
//! - *release sequence* (RC11 §3.1): a release write followed by its thread's atomic writes to the
//!   location, extended by read-modify-writes reading from it (any thread);
//! - *synchronizes-with*: a release write, or a release fence followed by an atomic write, whose
//!   release sequence an atomic read reads from, the read being an acquire or followed by an acquire
//!   fence; the two ends must be inclusive (Batty et al. §6). A work-group barrier is a release fence
//!   on arrival and an acquire fence on leaving, every arrival synchronizing with every other
//!   participant's departure (OpenCL 2.0 §6.13.8 `work_group_barrier`);
//! - *regions*: happens-before is kept per memory region (OpenCL 2.0 §3.3.6: global- and
//!   local-happens-before); a synchronisation orders a region when both of its ends are tagged with it
//!   (an access with its location's region, a fence or barrier with its flags);
//!   `hb_r = (sb ∪ sw_r)+`;
//! - axioms: happens-before irreflexive, Coherence `irreflexive(hb ; eco?)`, Atomicity
//!   `irreflexive(fr ; co)` for read-modify-writes, scoped SC `acyclic(psc ∩ incl)` with RC11's
//!   `psc = psc_base ∪ psc_F` (SC order only among inclusive events, Batty et al. §6), No-Thin-Air
//!   `acyclic(rf ∪ dep)`;
//! - *races* (undefined behaviour, OpenCL 2.0 §3.3.6.x "data race"): two conflicting accesses of
//!   different threads not ordered by happens-before, one plain (a data race) or both atomic but not
//!   inclusive (a heterogeneous or scope race), in some consistent execution; and *barrier
//!   divergence*: work-items of one work-group passing different numbers of barriers.
//!
//! Deviations (numbered):
//! 1. No-Thin-Air is `acyclic(rf ∪ dep)` (dependencies), not RC11's `acyclic(sb ∪ rf)`: OpenCL 2.0,
//!    like C11, allows load buffering with relaxed atomics, and every GPU mapping respects
//!    dependencies.
//! 2. For the SC axiom, happens-before is the union of the regions' happens-before relations.
//! 3. Memory regions are modelled. A local location has a copy per work-group whose threads use it,
//!    each with its initial write; the final state names the copy of the first thread's work-group
//!    (`interp::home`).
//! 5. `opencl-c11` (`OpenCl { c11: true }`): no No-Thin-Air axiom (the value domains start with
//!    every constant stored, so a self-justifying value is found, `interp.rs`), and the SC axiom is
//!    C11-2011's (`sc_consistent_c11`) instead of RC11's `psc`.
//! 4. Every location is accessed with one width.

use super::event::{includes, Kind, Mode};
use super::exec::{linear_extensions, Budget, CheckOut, Exec, Model};
use super::rel::{all, members, Rel, Set};
use super::{Race, RaceKind};
use crate::ir::{Scope, Space};

/// The OpenCL model; `c11` selects the original C11 rules (`opencl-c11`) instead of RC11's.
pub struct OpenCl {
    pub c11: bool,
}

pub struct Static {
    incl: Rel,
    /// Release heads: (event, the writes that start its release sequence).
    heads: Vec<(usize, Set)>,
    /// Acquire ends: (event, the atomic reads whose reads-from it acquires).
    ends: Vec<(usize, Set)>,
    barriers: Result<Vec<(usize, usize)>, usize>,
    sc: Set,
    /// Events tagged with the global / the local region.
    global: Set,
    local: Set,
}

fn scope_of(ex: &Exec, e: usize) -> Scope {
    let ev = &ex.events[e];
    if ev.is_access() && ev.space == Space::Local {
        ev.scope.min(Scope::WorkGroup)
    } else {
        ev.scope
    }
}

fn inclusive(ex: &Exec, a: usize, b: usize) -> bool {
    let (ea, eb) = (&ex.events[a], &ex.events[b]);
    let (Some(ta), Some(tb)) = (ea.thread, eb.thread) else {
        return false;
    };
    let atomic = |e: &super::event::Event| !e.is_access() || e.mode.atomic();
    atomic(ea)
        && atomic(eb)
        && includes(scope_of(ex, a), ex.place[ta], ta, ex.place[tb], tb)
        && includes(scope_of(ex, b), ex.place[tb], tb, ex.place[ta], ta)
}

impl Model for OpenCl {
    type Static = Static;

    fn prepare(&self, ex: &Exec) -> Static {
        let n = ex.n();
        let mut incl = Rel::empty(n);
        for a in ex.ninit..n {
            for b in ex.ninit..n {
                if inclusive(ex, a, b) {
                    incl.add(a, b);
                }
            }
        }
        let atomic_writes = ex.set(|e| e.is_access() && e.writes() && e.mode.atomic());
        let atomic_reads = ex.set(|e| e.is_access() && e.reads() && e.mode.atomic());
        let mut heads = Vec::new();
        let mut ends = Vec::new();
        for (i, e) in ex.events.iter().enumerate() {
            if e.is_access() && e.writes() && e.mode.release() {
                let loc = ex.loc_events[ex.loc_of[i].expect("access")];
                heads.push((i, (1 << i) | (ex.po.row(i) & atomic_writes & loc)));
            } else if (e.is_fence() || e.kind == Kind::BarrierArrive) && e.mode.release() {
                // A barrier's arrival is a release fence, its departure an acquire fence.
                heads.push((i, ex.po.row(i) & atomic_writes));
            }
            if e.is_access() && e.reads() && e.mode.acquire() {
                ends.push((i, 1 << i));
            } else if (e.is_fence() || e.kind == Kind::BarrierLeave) && e.mode.acquire() {
                ends.push((i, ex.po.column(i) & atomic_reads));
            }
        }
        let tagged = |r: Space| {
            ex.set(|e| {
                if e.is_access() || e.kind == Kind::Init {
                    e.space == r
                } else {
                    match r {
                        Space::Global => e.spaces.global,
                        Space::Local => e.spaces.local,
                    }
                }
            })
        };
        Static {
            incl,
            heads,
            ends,
            barriers: ex.barrier_pairs(),
            sc: ex.set(|e| e.mode.sc() && e.kind != Kind::Init),
            global: tagged(Space::Global),
            local: tagged(Space::Local),
        }
    }

    fn exclusive(&self, _ex: &Exec, _st: &Static, _a: usize, _b: usize) -> bool {
        // Atomicity holds for every read-modify-write; non-inclusive ones race (undefined).
        true
    }

    fn check(&self, ex: &Exec, st: &Static, budget: &Budget) -> CheckOut {
        let mut out = CheckOut {
            candidates: 0,
            finals: Vec::new(),
            race: None,
        };
        let n = ex.n();
        // No-Thin-Air (deviation 1); C11-2011 has no such axiom (Batty et al. POPL'11: the
        // standard's thin-air note is not part of the formal model), so thin-air cycles stand.
        if !self.c11 && !ex.rf.union(&ex.dep).acyclic() {
            return out;
        }
        // Synchronizes-with, per region.
        let mut sw_g = Rel::empty(n);
        let mut sw_l = Rel::empty(n);
        let mut add = |a: usize, b: usize| {
            if st.global >> a & st.global >> b & 1 == 1 {
                sw_g.add(a, b);
            }
            if st.local >> a & st.local >> b & 1 == 1 {
                sw_l.add(a, b);
            }
        };
        for &(h, start) in &st.heads {
            let rs = release_sequence(ex, start);
            let mut reached: Set = 0;
            for w in members(rs) {
                reached |= ex.rf.row(w);
            }
            for &(b, reads) in &st.ends {
                if reached & reads != 0 && st.incl.has(h, b) && !ex.same_thread(h, b) {
                    add(h, b);
                }
            }
        }
        let barrier_pairs: &[(usize, usize)] = match &st.barriers {
            Ok(p) => p,
            Err(_) => &[],
        };
        for &(a, b) in barrier_pairs {
            if st.incl.has(a, b) {
                add(a, b);
            }
        }
        let hb_of = |sw: &Rel| {
            let mut hb = ex.po.union(sw).closure();
            for i in 0..ex.ninit {
                hb.set_row(i, all(n) & !ex.init);
            }
            hb
        };
        let hb_g = hb_of(&sw_g);
        let hb_l = if st.local & !ex.init != 0 {
            hb_of(&sw_l)
        } else {
            hb_g.clone()
        };
        let hb_at = |e: usize| {
            if ex.events[e].space == Space::Local {
                &hb_l
            } else {
                &hb_g
            }
        };
        if !hb_g.irreflexive() || !hb_l.irreflexive() {
            return out;
        }
        // Coherence, the reads-from part: irreflexive(hb ; rf).
        if ex.rf.pairs().any(|(w, r)| hb_at(r).has(r, w)) {
            return out;
        }
        // Each location's coherence orders satisfying Coherence and Atomicity.
        let mut per_loc: Vec<Vec<Vec<usize>>> = Vec::with_capacity(ex.locs.len());
        let mut count: u64 = 1;
        let need_orders = st.sc != 0;
        for li in 0..ex.locs.len() {
            let hb = if ex.locs[li].copy.is_some() {
                &hb_l
            } else {
                &hb_g
            };
            let (orders, c) = location(ex, hb, li, need_orders, budget);
            count = count.saturating_mul(c);
            if orders.is_empty() {
                out.candidates += count;
                return out;
            }
            per_loc.push(orders);
        }
        if st.sc == 0 {
            out.candidates += count;
            out.finals.push(
                per_loc
                    .iter()
                    .map(|o| o.iter().fold(0, |s, co| s | 1 << co[co.len() - 1]))
                    .collect(),
            );
        } else {
            let hb = hb_g.union(&hb_l);
            let mut idx = vec![0usize; per_loc.len()];
            while budget.take() {
                out.candidates += 1;
                let cos: Vec<&Vec<usize>> = idx.iter().zip(&per_loc).map(|(&i, o)| &o[i]).collect();
                let ok = if self.c11 {
                    sc_consistent_c11(ex, st, &hb, &cos, budget)
                } else {
                    sc_consistent(ex, st, &hb, &cos)
                };
                if ok {
                    out.finals
                        .push(cos.iter().map(|co| 1 << co[co.len() - 1]).collect());
                }
                let mut t = 0;
                loop {
                    if t == idx.len() {
                        break;
                    }
                    idx[t] += 1;
                    if idx[t] < per_loc[t].len() {
                        break;
                    }
                    idx[t] = 0;
                    t += 1;
                }
                if t == idx.len() {
                    break;
                }
            }
        }
        if out.finals.is_empty() {
            return out;
        }
        out.race = race(ex, st, &hb_g, &hb_l);
        out
    }
}

/// The release sequence from the writes in `start`: extended by read-modify-writes reading from it.
fn release_sequence(ex: &Exec, start: Set) -> Set {
    let rmws = ex.set(|e| e.kind == Kind::Rmw);
    let mut rs = start;
    loop {
        let mut next = rs;
        for w in members(rs) {
            next |= ex.rf.row(w) & rmws;
        }
        if next == rs {
            return rs;
        }
        rs = next;
    }
}

/// Location `li`'s coherence orders (initial write first) consistent with Coherence and Atomicity:
/// all of them when `all_orders`, else one per possible last write. Also how many were tried.
fn location(
    ex: &Exec,
    hb: &Rel,
    li: usize,
    all_orders: bool,
    budget: &Budget,
) -> (Vec<Vec<usize>>, u64) {
    let n = ex.n();
    let writes = &ex.loc_writes[li];
    let evs = ex.loc_events[li];
    let wset: Set = writes.iter().fold(0, |s, &w| s | 1 << w);
    // Coherence (write-write): happens-before between writes is coherence order.
    let mut must = hb.restrict(wset, wset);
    for i in members(ex.init & wset) {
        must.set_row(i, wset & !(1 << i));
    }
    let reads: Vec<usize> = members(evs).filter(|&r| ex.events[r].reads()).collect();
    let hb_loc = hb.restrict(evs, evs);
    let rf_loc = ex.rf.restrict(evs, evs);
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut lasts: Set = 0;
    let count = linear_extensions(writes, &must, budget, &mut |co| {
        let last = co[co.len() - 1];
        if !all_orders && lasts >> last & 1 == 1 {
            return true;
        }
        let mut corel = Rel::empty(n);
        for (i, &a) in co.iter().enumerate() {
            for &b in &co[i + 1..] {
                corel.add(a, b);
            }
        }
        let mut fr = Rel::empty(n);
        for &r in &reads {
            let src = ex.rf_src[r].expect("read");
            fr.set_row(r, corel.row(src) & !(1 << r));
        }
        // Atomicity: a read-modify-write directly follows the write it reads in coherence order
        // (C11 §29.3p12 "the last value (in the modification order) before the write"; Batty et al.
        // POPL'11 `rmw_atomicity`: mo-adjacent, so the write read is mo-before it, which RC11's
        // No-Thin-Air implied and C11-2011 has to say itself).
        for &a in &reads {
            if ex.events[a].kind != Kind::Rmw {
                continue;
            }
            let src = ex.rf_src[a].expect("read");
            if fr.row(a) & corel.column(a) != 0 || !corel.has(src, a) {
                return true;
            }
        }
        let eco = rf_loc.union(&corel).union(&fr).closure();
        if !hb_loc.seq(&eco).irreflexive() {
            return true;
        }
        lasts |= 1 << last;
        found.push(co.to_vec());
        true
    });
    (found, count)
}

/// RC11's SC axiom restricted to inclusive events, for one choice of coherence orders.
fn sc_consistent(ex: &Exec, st: &Static, hb: &Rel, cos: &[&Vec<usize>]) -> bool {
    let n = ex.n();
    let mut co = Rel::empty(n);
    for c in cos {
        for (i, &a) in c.iter().enumerate() {
            for &b in &c[i + 1..] {
                co.add(a, b);
            }
        }
    }
    let mut fr = Rel::empty(n);
    for (r, src) in ex.rf_src.iter().enumerate() {
        if let Some(s) = src {
            fr.set_row(r, co.row(*s) & !(1 << r));
        }
    }
    let eco = ex.rf.union(&co).union(&fr).closure();
    let po_loc = ex.po_loc();
    let mut po_nloc = ex.po.clone();
    let mut hb_loc = Rel::empty(n);
    for a in 0..n {
        po_nloc.set_row(a, ex.po.row(a) & !po_loc.row(a));
        if let Some(l) = ex.loc_of[a] {
            hb_loc.set_row(a, hb.row(a) & ex.loc_events[l]);
        }
    }
    // scb = sb ∪ sb|≠loc ; hb ; sb|≠loc ∪ hb|loc ∪ co ∪ fr
    let scb = ex
        .po
        .union(&po_nloc.seq(hb).seq(&po_nloc))
        .union(&hb_loc)
        .union(&co)
        .union(&fr);
    let fences = st.sc & ex.set(|e| e.is_fence());
    let hb_q = hb.reflexive();
    // psc_base = ([E_sc] ∪ [F_sc] ; hb?) ; scb ; ([E_sc] ∪ hb? ; [F_sc])
    let mut left = Rel::empty(n);
    let mut right = Rel::empty(n);
    for e in members(st.sc) {
        left.add(e, e);
        right.add(e, e);
    }
    for f in members(fences) {
        left.set_row(f, left.row(f) | hb_q.row(f));
    }
    let into_f = hb_q.restrict(all(n), fences);
    right.union_with(&into_f);
    let psc_base = left.seq(&scb).seq(&right);
    // psc_F = [F_sc] ; (hb ∪ hb ; eco ; hb) ; [F_sc]
    let psc_f = hb.union(&hb.seq(&eco).seq(hb)).restrict(fences, fences);
    let psc = psc_base
        .union(&psc_f)
        .restrict(st.sc, st.sc)
        .intersect(&st.incl);
    psc.acyclic()
}

/// The C11-2011 seq_cst rules, as Batty, Owens, Sarkar, Sewell and Weber formalised them
/// ("Mathematizing C++ Concurrency", POPL 2011: `sc_accesses_consistent_sc`,
/// `sc_accesses_sc_reads_restricted`, `sc_fenced_sc_fences_heeded`; C++11 §29.3p3-p6), scoped as in
/// Batty et al. POPL 2016 (the rules relate inclusive events only). Some total order S over the
/// SC events such that:
/// - S contains happens-before and coherence order between SC events (§29.3p3);
/// - an SC read reads from the last SC write to its location before it in S, or from a non-SC write
///   that happens-before no SC write to the location before the read in S (§29.3p3);
/// - §29.3p4: a write A sequenced before an SC fence X, X before an SC read B in S: B does not read
///   from a write coherence-before A;
/// - §29.3p5: an SC write A before an SC fence X in S, X sequenced before a read B: likewise;
/// - §29.3p6: A sequenced before SC fence X, X before SC fence Y in S, Y sequenced before B:
///   likewise.
/// These fence rules are weaker than RC11's `psc_F` (no hb ; eco ; hb between fences), and the
/// `hb ⊆ S` rule is stronger than RC11's `scb` (Lahav et al. PLDI'17 §2 show it unsound for the
/// Power mapping): the two models differ both ways.
fn sc_consistent_c11(
    ex: &Exec,
    st: &Static,
    hb: &Rel,
    cos: &[&Vec<usize>],
    budget: &Budget,
) -> bool {
    let n = ex.n();
    let mut co = Rel::empty(n);
    for c in cos {
        for (i, &a) in c.iter().enumerate() {
            for &b in &c[i + 1..] {
                co.add(a, b);
            }
        }
    }
    let sc: Vec<usize> = members(st.sc).collect();
    let must = hb.union(&co).restrict(st.sc, st.sc).intersect(&st.incl);
    let fences = st.sc & ex.set(|e| e.is_fence());
    let atomic = |e: usize| ex.events[e].is_access() && ex.events[e].mode.atomic();
    let same_loc = |a: usize, b: usize| ex.loc_of[a].is_some() && ex.loc_of[a] == ex.loc_of[b];
    let reads: Vec<usize> = (ex.ninit..n)
        .filter(|&r| ex.events[r].reads() && atomic(r))
        .collect();
    let writes: Vec<usize> = (0..n).filter(|&w| ex.events[w].writes()).collect();
    // B reads from a write coherence-before A.
    let before = |b: usize, a: usize| {
        let src = ex.rf_src[b].expect("a read reads from a write");
        co.has(src, a)
    };
    let mut found = false;
    linear_extensions(&sc, &must, budget, &mut |order| {
        let mut pos = vec![usize::MAX; n];
        for (i, &e) in order.iter().enumerate() {
            pos[e] = i;
        }
        let s = |a: usize, b: usize| pos[a] < pos[b] && pos[b] != usize::MAX;
        for &b in &reads {
            let src = ex.rf_src[b].expect("read");
            // §29.3p3: SC reads.
            if st.sc >> b & 1 == 1 {
                let sc_writes = writes
                    .iter()
                    .copied()
                    .filter(|&c| st.sc >> c & 1 == 1 && same_loc(c, b) && st.incl.has(c, b));
                let ok = if st.sc >> src & 1 == 1 {
                    s(src, b) && !sc_writes.clone().any(|c| c != src && s(src, c) && s(c, b))
                } else {
                    !sc_writes.clone().any(|c| hb.has(src, c) && s(c, b))
                };
                if !ok {
                    return true;
                }
            }
            for &a in writes
                .iter()
                .filter(|&&a| a >= ex.ninit && same_loc(a, b) && atomic(a))
            {
                if !st.incl.has(a, b) || !before(b, a) {
                    continue;
                }
                for x in members(fences) {
                    // §29.3p4 and §29.3p5.
                    if (ex.po.has(a, x) && st.sc >> b & 1 == 1 && s(x, b))
                        || (st.sc >> a & 1 == 1 && s(a, x) && ex.po.has(x, b))
                    {
                        return true;
                    }
                    // §29.3p6.
                    if ex.po.has(a, x)
                        && members(fences).any(|y| s(x, y) && st.incl.has(x, y) && ex.po.has(y, b))
                    {
                        return true;
                    }
                }
            }
        }
        found = true;
        false
    });
    found
}

/// A race in this (consistent) execution, if any.
fn race(ex: &Exec, st: &Static, hb_g: &Rel, hb_l: &Rel) -> Option<Race> {
    if let Err(t) = st.barriers {
        let e = ex
            .events
            .iter()
            .position(|e| e.thread == Some(t) && e.is_barrier())
            .or_else(|| ex.events.iter().position(|e| e.is_barrier()))
            .unwrap_or(ex.ninit);
        return Some(Race {
            kind: RaceKind::BarrierDivergence,
            first: format!(
                "{} passes fewer work-group barriers than another work-item of its work-group",
                ex.thread_names[t]
            ),
            second: ex.describe(e),
        });
    }
    // A scope race is reported before a data race it may cause (the plain accesses a too narrow
    // synchronisation leaves unordered).
    let mut data: Option<Race> = None;
    for a in ex.ninit..ex.n() {
        for b in a + 1..ex.n() {
            let (ea, eb) = (&ex.events[a], &ex.events[b]);
            if !ea.is_access()
                || !eb.is_access()
                || ea.loc != eb.loc
                || ex.same_thread(a, b)
                || !(ea.writes() || eb.writes())
            {
                continue;
            }
            let hb = if ea.space == Space::Local { hb_l } else { hb_g };
            if hb.has(a, b) || hb.has(b, a) {
                continue;
            }
            let race = |kind| Race {
                kind,
                first: ex.describe(a),
                second: ex.describe(b),
            };
            if ea.mode == Mode::Plain || eb.mode == Mode::Plain {
                data = data.or_else(|| Some(race(RaceKind::Data)));
            } else if !st.incl.has(a, b) {
                return Some(race(RaceKind::Scope));
            }
        }
    }
    data
}
