//! The executions of each thread on its own: the interpreter runs a thread's IR with every value a
//! load may return (herd's approach: the values come from a *value domain* per location, the initial
//! value and every value some thread's execution writes, computed as a fixpoint), and records one
//! [`Trace`] per path: its memory events with the values read and written, the dependencies of each
//! event (address, data, control) and the final registers.
//!
//! Loops are unrolled: a path that takes a backward branch to one header more than `unroll` times is
//! cut; its events so far are kept as a *cut prefix*, and the test's result says the bound was hit
//! (`bound_hit`) when some cut prefix can be part of a consistent execution (`mod.rs`). Spin loops need no bound: an iteration that
//! returns to its header with no write or barrier and every live register unchanged (value and
//! dependencies) is *redundant*: removing it from an execution leaves a consistent execution with
//! the same final state (it only removes read events and dependency edges, which no axiom of either
//! model needs), so such paths are dropped without counting as cut. `keep_redundant` redundant
//! iterations are kept per header when the iteration holds an access that could race (the OpenCL
//! model keeps one, so that a race in a failing iteration of a spin loop is still found): a plain
//! access, or any access when some atomic of the test has a scope that leaves out a thread.
//!
//! Addresses: a register initialised to a location holds an abstract address (`ADDR_BASE` plus the
//! location's index times 2^32), so that address arithmetic can be resolved; each element of an array
//! is a location of its own.
//!
//! Values are raw register bits, computed by the simulator's own evaluators (`ir::eval`): integer and
//! f32 arithmetic, comparisons, conversions and read-modify-writes give the oracle exactly the bits
//! the machine computes (f32 rounds to nearest even; neither flushes subnormals, which PTX's
//! `atom.add.f32` does on hardware).
//!
//! Not modelled (an error naming the instruction): special registers, sub-group barriers, an address
//! outside every location's elements (or misaligned), a division that faults (by zero, or of the most
//! negative value by -1).

use super::event::{Event, Kind, LocKey, Mode, Placement};
use super::live::{live_in, loop_headers, RegSet};
use super::ModelError;
use crate::ir::eval::{alu, cmp, convert, rmw};
use crate::ir::{Address, BarrierKind, Inst, Operand, Space, SpaceSet, SrcLoc, Width};
use crate::test::{LitmusTest, RegInit, Thread};
use crate::Var;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};

const ADDR_BASE: u64 = 0x5A00_0000_0000_0000;
const LOC_SHIFT: u32 = 32;

/// The most traces one thread may have, and the most values one location's domain may hold.
pub const MAX_TRACES: usize = 200_000;
/// The most events the paths of all threads may hold together (about 100 bytes each), so that the
/// traces' memory is bounded as well as their number.
pub const MAX_STORED_EVENTS: usize = 4_000_000;
pub const MAX_VALUES: usize = 256;
/// The most events one path of a thread may have.
const MAX_THREAD_EVENTS: usize = 128;

/// One path of one thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Trace {
    pub events: Vec<Event>,
    /// Final raw register values.
    pub regs: Vec<u64>,
}

#[derive(Debug, Clone, Copy)]
pub struct InterpOptions {
    pub unroll: u32,
    pub keep_redundant: u32,
    /// Thin-air cycles are allowed (C11-2011): a value may justify itself, so the domain of every
    /// location starts with every constant some store writes (a read of it needs a write of it in
    /// the execution all the same; the fixpoint adds the computed ones).
    pub thin_air: bool,
}

#[derive(Debug)]
pub struct Traces {
    pub per_thread: Vec<Vec<Trace>>,
    /// Per thread: the paths the unrolling bound cut, up to the cut (`regs` meaningless).
    pub cut: Vec<Vec<Trace>>,
}

/// The address a register initialised to location `l` holds.
pub fn address_of(l: usize) -> u64 {
    ADDR_BASE + ((l as u64) << LOC_SHIFT)
}

/// The placement of each thread.
pub fn placements(test: &LitmusTest) -> Vec<Placement> {
    test.threads
        .iter()
        .enumerate()
        .map(|(i, t)| Placement {
            device: t.device,
            group: t.cta,
            sub_group: i as u32,
        })
        .collect()
}

/// The instance of element `elem` of location `l` that the test's initial and final states name:
/// for a global location the one copy, for a work-group-local one the copy of the work-group of
/// the first thread that uses it (each work-group using it has a copy of its own: the final state
/// names the first's; a local location no thread uses has no copy, so its global key).
pub fn home(test: &LitmusTest, l: usize, elem: u32) -> LocKey {
    if test.locations[l].space != Space::Local {
        return LocKey {
            loc: l,
            elem,
            copy: None,
        };
    }
    let group = (0..test.threads.len())
        .find(|&t| test.accesses(t).iter().any(|&(_, a)| a == l))
        .map(|t| test.threads[t].cta);
    LocKey {
        loc: l,
        elem,
        copy: group,
    }
}

/// Every instance of every element of every location, each with its initial write: the one copy
/// of a global location; a copy per work-group whose threads use a work-group-local one (OpenCL 2.0
/// §3.3.1: each work-group has its own local memory), [`home`] first.
pub fn initial_keys(test: &LitmusTest) -> impl Iterator<Item = LocKey> + '_ {
    test.locations.iter().enumerate().flat_map(move |(l, loc)| {
        (0..loc.len).flat_map(move |e| {
            let h = home(test, l, e);
            let mut keys = vec![h];
            if loc.space == Space::Local {
                for (t, th) in test.threads.iter().enumerate() {
                    let k = LocKey {
                        copy: Some(th.cta),
                        ..h
                    };
                    if !keys.contains(&k) && test.accesses(t).iter().any(|&(_, a)| a == l) {
                        keys.push(k);
                    }
                }
            }
            keys
        })
    })
}

/// The initial value of a location instance, as raw bits of its width.
pub fn init_value(test: &LitmusTest, k: LocKey) -> u64 {
    let l = &test.locations[k.loc];
    let v = l.elems.get(k.elem as usize).copied().unwrap_or(l.init);
    v as u64 & l.ty.width().mask()
}

/// Every thread's traces over the fixpoint of the value domains.
pub fn traces(test: &LitmusTest, opts: InterpOptions) -> Result<Traces, ModelError> {
    let place = placements(test);
    let shapes: Vec<Shape> = test
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| Shape::new(test, i, t))
        .collect();
    let mut domain: BTreeMap<LocKey, BTreeSet<u64>> = BTreeMap::new();
    for k in initial_keys(test) {
        domain.entry(k).or_default().insert(init_value(test, k));
    }
    if opts.thin_air {
        let constants: BTreeSet<u64> = test
            .threads
            .iter()
            .flat_map(|t| &t.insts)
            .filter_map(|i| match *i {
                Inst::Store {
                    src: Operand::Imm(v),
                    ..
                } => Some(v as u64),
                _ => None,
            })
            .collect();
        for k in initial_keys(test) {
            let mask = test.locations[k.loc].ty.width().mask();
            let d = domain.entry(k).or_default();
            d.extend(constants.iter().map(|v| v & mask));
        }
    }
    // A value some execution reads was written at the end of a chain of writes, each depending
    // (data or control) on a read of the previous one; No-Thin-Air makes the chain acyclic, so it
    // has at most as many links as the execution has writes. Round `i` adds the values of chains of
    // `i` links, so the rounds stop at that count even where the domain would grow further (a
    // read-modify-write feeding on itself).
    for round in 1.. {
        let mut written = domain.clone();
        let mut per_thread = Vec::with_capacity(shapes.len());
        let mut most_writes = Vec::with_capacity(shapes.len());
        let mut cut = Vec::with_capacity(shapes.len());
        let mut stored = 0;
        for (i, s) in shapes.iter().enumerate() {
            let r = s.run(test, place[i], &domain, opts, &mut written, &mut stored)?;
            per_thread.push(r.traces);
            cut.push(r.cut);
            most_writes.push(r.most_writes);
        }
        let max_writes: usize = most_writes.iter().sum();
        if written == domain || round > max_writes {
            return Ok(Traces { per_thread, cut });
        }
        if let Some((k, v)) = written.iter().find(|(_, v)| v.len() > MAX_VALUES) {
            return Err(ModelError::Limit {
                file: test.file.clone(),
                message: format!(
                    "location {} may hold more than {MAX_VALUES} values ({} so far)",
                    test.locations[k.loc].name,
                    v.len()
                ),
            });
        }
        domain = written;
    }
    unreachable!("the rounds end by returning")
}

/// What the interpreter precomputes for one thread.
struct Shape<'t> {
    index: usize,
    thread: &'t Thread,
    live: Vec<RegSet>,
    headers: Vec<bool>,
    init_regs: Vec<u64>,
    /// Some atomic access or fence of the test has a scope that leaves out a thread.
    narrow: bool,
}

/// The paths of one thread over one value domain.
struct Paths {
    traces: Vec<Trace>,
    /// The paths the unrolling bound cut, up to the cut.
    cut: Vec<Trace>,
    /// The most writes (and barriers) any path made, finished or not.
    most_writes: usize,
}

#[derive(Clone)]
struct Visit {
    header: usize,
    live: Vec<(u64, u128)>,
    effects: u32,
    racy: u32,
    redundant: u32,
}

#[derive(Clone)]
struct Path {
    pc: usize,
    regs: Vec<u64>,
    taint: Vec<u128>,
    ctrl: u128,
    events: Vec<Event>,
    effects: u32,
    barriers: u32,
    visits: Vec<Visit>,
    back: Vec<(usize, u32)>,
}

enum Step {
    /// Continue with this path (and the others pushed).
    Go,
    /// The path ended (thread finished).
    Done,
    /// Cut by the unrolling bound.
    Cut,
}

impl<'t> Shape<'t> {
    fn new(test: &LitmusTest, index: usize, thread: &'t Thread) -> Shape<'t> {
        let n = thread.regs.len();
        let mut at_exit = RegSet::new(n);
        for v in &test.condition.observed {
            if let Var::Reg { thread: t, reg } = *v {
                if t == index {
                    at_exit.insert(reg);
                }
            }
        }
        let place = placements(test);
        let narrow = test.threads.iter().enumerate().any(|(i, t)| {
            t.insts.iter().any(|inst| {
                let scope = match *inst {
                    Inst::Load { scope, .. }
                    | Inst::Store { scope, .. }
                    | Inst::Rmw { scope, .. }
                    | Inst::Cas { scope, .. }
                    | Inst::Fence { scope, .. } => scope,
                    _ => return false,
                };
                (0..place.len()).any(|j| !super::event::includes(scope, place[i], i, place[j], j))
            })
        });
        let mut init_regs = vec![0u64; n];
        for &(l, r) in &thread.addr_regs {
            init_regs[r as usize] = address_of(l);
        }
        for &(r, init) in &thread.reg_init {
            init_regs[r as usize] = match init {
                RegInit::Value(v) => v as u64,
                RegInit::Address(l) => address_of(l),
                // An element other than the first is refused where it is accessed (`location`).
                RegInit::Element { loc, index } => address_of(loc)
                    .wrapping_add(index as u64 * test.locations[loc].ty.width().bytes() as u64),
            };
        }
        Shape {
            index,
            thread,
            live: live_in(&thread.insts, n, &at_exit),
            headers: loop_headers(&thread.insts),
            init_regs,
            narrow,
        }
    }

    fn not_modelled(&self, test: &LitmusTest, pc: usize, what: impl Into<String>) -> ModelError {
        ModelError::NotModelled {
            file: test.file.clone(),
            at: self.thread.locs.get(pc).copied().unwrap_or(self.thread.loc),
            what: format!("{} ({})", what.into(), self.thread.name),
        }
    }

    /// All paths of the thread.
    fn run(
        &self,
        test: &LitmusTest,
        place: Placement,
        domain: &BTreeMap<LocKey, BTreeSet<u64>>,
        opts: InterpOptions,
        written: &mut BTreeMap<LocKey, BTreeSet<u64>>,
        stored: &mut usize,
    ) -> Result<Paths, ModelError> {
        let n = self.thread.regs.len();
        let start = Path {
            pc: 0,
            regs: self.init_regs.clone(),
            taint: vec![0; n],
            ctrl: 0,
            events: Vec::new(),
            effects: 0,
            barriers: 0,
            visits: Vec::new(),
            back: Vec::new(),
        };
        let mut stack = vec![start];
        let mut out: Vec<Trace> = Vec::new();
        // Traces by hash, as indices into `out` (the traces are kept once).
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut cut: Vec<Trace> = Vec::new();
        let mut cut_seen: HashSet<Vec<Event>> = HashSet::new();
        let mut most_writes = 0;
        while let Some(mut p) = stack.pop() {
            // Every turn of this loop starts with the path just arrived at `p.pc` (popped paths
            // included: a fork has executed its load).
            loop {
                // Paths that end unfinished count too: their writes may feed a finished path
                // of the next round (a spin loop waits for values the next round brings).
                most_writes = most_writes.max(p.effects as usize);
                if let Some(e) = p.events.last().filter(|e| e.writes()) {
                    if let Some(k) = e.loc {
                        written.entry(k).or_default().insert(e.wval);
                    }
                }
                if self.headers.get(p.pc).copied().unwrap_or(false) && !self.visit(&mut p, opts) {
                    break;
                }
                match self.step(test, place, domain, opts, &mut p, &mut stack)? {
                    Step::Go => {}
                    Step::Done => {
                        let t = Trace {
                            events: std::mem::take(&mut p.events),
                            regs: std::mem::take(&mut p.regs),
                        };
                        let h = {
                            let mut s = std::collections::hash_map::DefaultHasher::new();
                            t.hash(&mut s);
                            s.finish()
                        };
                        let same = seen.entry(h).or_default();
                        if !same.iter().any(|&i| out[i] == t) {
                            same.push(out.len());
                            *stored += t.events.len();
                            out.push(t);
                            if out.len() > MAX_TRACES || *stored > MAX_STORED_EVENTS {
                                return Err(ModelError::TooLarge {
                                    file: test.file.clone(),
                                    estimate: format!(
                                        "thread {} has more than {} paths, the threads' paths \
                                         more than {} events",
                                        self.thread.name,
                                        out.len() - 1,
                                        *stored - out[out.len() - 1].events.len()
                                    ),
                                    bound: format!(
                                        "{MAX_TRACES} paths per thread and {MAX_STORED_EVENTS} \
                                         events in all"
                                    ),
                                });
                            }
                        }
                        break;
                    }
                    Step::Cut => {
                        if cut_seen.insert(p.events.clone()) {
                            cut.push(Trace {
                                events: std::mem::take(&mut p.events),
                                regs: Vec::new(),
                            });
                        }
                        break;
                    }
                }
            }
        }
        Ok(Paths {
            traces: out,
            cut,
            most_writes,
        })
    }

    /// Arrival at a loop header: false when the iteration just finished was redundant once too
    /// often.
    fn visit(&self, p: &mut Path, opts: InterpOptions) -> bool {
        let h = p.pc;
        // Accesses so far that could take part in a race (see the module header).
        let racy = p
            .events
            .iter()
            .filter(|e| e.is_access() && (self.narrow || !e.mode.atomic()))
            .count() as u32;
        let live: Vec<(u64, u128)> = self.live[h]
            .iter()
            .map(|r| (p.regs[r as usize], p.taint[r as usize]))
            .collect();
        match p.visits.iter_mut().find(|v| v.header == h) {
            Some(v) if v.live == live && v.effects == p.effects => {
                if v.racy == racy {
                    return false;
                }
                v.racy = racy;
                v.redundant += 1;
                v.redundant <= opts.keep_redundant
            }
            Some(v) => {
                v.live = live;
                v.effects = p.effects;
                v.racy = racy;
                v.redundant = 0;
                true
            }
            None => {
                p.visits.push(Visit {
                    header: h,
                    live,
                    effects: p.effects,
                    racy,
                    redundant: 0,
                });
                true
            }
        }
    }

    fn val(p: &Path, o: Operand) -> (u64, u128) {
        match o {
            Operand::Reg(r) => (p.regs[r as usize], p.taint[r as usize]),
            Operand::Imm(v) => (v, 0),
        }
    }

    fn location(
        &self,
        test: &LitmusTest,
        p: &Path,
        place: Placement,
        space: Space,
        a: Address,
    ) -> Result<(LocKey, u128), ModelError> {
        let (base, taint) = Self::val(p, a.base);
        let addr = base.wrapping_add(a.offset as u64);
        let rel = addr.wrapping_sub(ADDR_BASE);
        let l = (rel >> LOC_SHIFT) as usize;
        let offset = rel & ((1 << LOC_SHIFT) - 1);
        let elem = test.locations.get(l).and_then(|loc| {
            let bytes = loc.ty.width().bytes() as u64;
            (offset % bytes == 0 && offset / bytes < loc.len as u64)
                .then_some((offset / bytes) as u32)
        });
        let Some(elem) = elem.filter(|_| addr >= ADDR_BASE) else {
            // The machine stops such an access with an out-of-bounds error; no execution has it.
            return Err(self.not_modelled(
                test,
                p.pc,
                "an address outside every location's elements, or misaligned",
            ));
        };
        let copy = match space {
            Space::Global => None,
            Space::Local => Some(place.group),
        };
        Ok((LocKey { loc: l, elem, copy }, taint))
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &self,
        p: &Path,
        kind: Kind,
        mode: Mode,
        scope: crate::ir::Scope,
        loc: Option<LocKey>,
        space: Space,
        spaces: SpaceSet,
        width: Width,
        deps: u128,
        at: SrcLoc,
    ) -> Event {
        Event {
            thread: Some(self.index),
            kind,
            mode,
            scope,
            loc,
            space,
            spaces,
            width,
            rval: 0,
            wval: 0,
            deps: deps | p.ctrl,
            barrier: 0,
            bar_id: 0,
            bar_threads: None,
            bar_red: None,
            at,
        }
    }

    /// Executes the instruction at `p.pc`; loads fork the path once per possible value (the forks
    /// are pushed on `stack`, `p` continues with the first).
    fn step(
        &self,
        test: &LitmusTest,
        place: Placement,
        domain: &BTreeMap<LocKey, BTreeSet<u64>>,
        opts: InterpOptions,
        p: &mut Path,
        stack: &mut Vec<Path>,
    ) -> Result<Step, ModelError> {
        let insts = &self.thread.insts;
        if p.pc >= insts.len() {
            return Ok(Step::Done);
        }
        if p.events.len() >= MAX_THREAD_EVENTS {
            return Err(ModelError::Limit {
                file: test.file.clone(),
                message: format!(
                    "thread {} has a path with more than {MAX_THREAD_EVENTS} memory events (lower --unroll)",
                    self.thread.name
                ),
            });
        }
        let at = self
            .thread
            .locs
            .get(p.pc)
            .copied()
            .unwrap_or(self.thread.loc);
        let pc = p.pc;
        let values = |k: LocKey, w: Width| -> Vec<u64> {
            let m = w.mask();
            let mut v: Vec<u64> = match domain.get(&k) {
                Some(s) => s.iter().map(|x| x & m).collect(),
                None => vec![init_value(test, k) & m],
            };
            v.dedup();
            v
        };
        match insts[pc] {
            Inst::Mov { dst, src } => {
                let (v, t) = Self::val(p, src);
                p.regs[dst as usize] = v;
                p.taint[dst as usize] = t;
            }
            Inst::Alu { op, ty, dst, a, b } => {
                let ((x, tx), (y, ty_)) = (Self::val(p, a), Self::val(p, b));
                let Some(v) = alu(op, ty, x, y) else {
                    return Err(self.not_modelled(test, pc, "division by zero or overflow"));
                };
                p.regs[dst as usize] = v;
                p.taint[dst as usize] = tx | ty_;
            }
            Inst::Cmp { op, ty, dst, a, b } => {
                let ((x, tx), (y, ty_)) = (Self::val(p, a), Self::val(p, b));
                p.regs[dst as usize] = cmp(op, ty, x, y) as u64;
                p.taint[dst as usize] = tx | ty_;
            }
            Inst::Select { dst, cond, a, b } => {
                let c = p.regs[cond as usize] != 0;
                let (v, t) = Self::val(p, if c { a } else { b });
                p.regs[dst as usize] = v;
                p.taint[dst as usize] = t | p.taint[cond as usize];
            }
            Inst::Branch { target, cond } => {
                let taken = match cond {
                    None => true,
                    Some((r, nz)) => {
                        p.ctrl |= p.taint[r as usize];
                        (p.regs[r as usize] != 0) == nz
                    }
                };
                if taken {
                    let t = target as usize;
                    if t <= pc {
                        let c = match p.back.iter_mut().find(|(h, _)| *h == t) {
                            Some((_, c)) => c,
                            None => {
                                p.back.push((t, 0));
                                &mut p.back.last_mut().expect("pushed").1
                            }
                        };
                        *c += 1;
                        if *c > opts.unroll {
                            return Ok(Step::Cut);
                        }
                    }
                    p.pc = t;
                    return Ok(Step::Go);
                }
            }
            Inst::Load {
                dst,
                space,
                addr,
                ty,
                ord,
                scope,
            } => {
                let (k, at_) = self.location(test, p, place, space, addr)?;
                let mut e = self.event(
                    p,
                    Kind::Read,
                    Mode::of_load(ord),
                    scope,
                    Some(k),
                    space,
                    SpaceSet::NONE,
                    ty.width(),
                    at_,
                    at,
                );
                let idx = p.events.len();
                fork(p, stack, &values(k, ty.width()), |target, v| {
                    e.rval = v;
                    target.events.push(e.clone());
                    target.regs[dst as usize] = v;
                    target.taint[dst as usize] = 1 << idx;
                    target.pc = pc + 1;
                });
                return Ok(Step::Go);
            }
            Inst::Store {
                space,
                addr,
                src,
                ty,
                ord,
                scope,
            } => {
                let (k, at_) = self.location(test, p, place, space, addr)?;
                let (v, tv) = Self::val(p, src);
                let mut e = self.event(
                    p,
                    Kind::Write,
                    Mode::of_store(ord),
                    scope,
                    Some(k),
                    space,
                    SpaceSet::NONE,
                    ty.width(),
                    at_ | tv,
                    at,
                );
                e.wval = v & ty.width().mask();
                p.events.push(e);
                p.effects += 1;
            }
            Inst::Rmw {
                dst,
                op,
                space,
                addr,
                operand,
                ty,
                ord,
                scope,
            } => {
                let (k, at_) = self.location(test, p, place, space, addr)?;
                let (v, tv) = Self::val(p, operand);
                let base = self.event(
                    p,
                    Kind::Rmw,
                    Mode::of_rmw(ord),
                    scope,
                    Some(k),
                    space,
                    SpaceSet::NONE,
                    ty.width(),
                    at_ | tv,
                    at,
                );
                let idx = p.events.len();
                fork(p, stack, &values(k, ty.width()), |target, old| {
                    let mut e = base.clone();
                    e.rval = old;
                    e.wval = rmw(op, ty, old, v);
                    target.events.push(e);
                    target.effects += 1;
                    if let Some(d) = dst {
                        target.regs[d as usize] = old;
                        target.taint[d as usize] = 1 << idx;
                    }
                    target.pc = pc + 1;
                });
                return Ok(Step::Go);
            }
            Inst::Cas {
                dst,
                space,
                addr,
                expected,
                desired,
                ty,
                success,
                failure,
                scope,
                ..
            } => {
                let (k, at_) = self.location(test, p, place, space, addr)?;
                let ((exp, te), (des, td)) = (Self::val(p, expected), Self::val(p, desired));
                let m = ty.width().mask();
                let idx = p.events.len();
                fork(p, stack, &values(k, ty.width()), |target, old| {
                    let ok = old == exp & m;
                    let (kind, mode) = if ok {
                        (Kind::Rmw, Mode::of_rmw(success))
                    } else {
                        (Kind::Read, Mode::of_load(failure))
                    };
                    let mut e = self.event(
                        target,
                        kind,
                        mode,
                        scope,
                        Some(k),
                        space,
                        SpaceSet::NONE,
                        ty.width(),
                        at_ | te | td,
                        at,
                    );
                    e.rval = old;
                    if ok {
                        e.wval = des & m;
                        target.effects += 1;
                    }
                    target.events.push(e);
                    if let Some(d) = dst {
                        target.regs[d as usize] = old;
                        target.taint[d as usize] = 1 << idx;
                    }
                    target.pc = pc + 1;
                });
                return Ok(Step::Go);
            }
            Inst::Fence { ord, scope, spaces } => {
                let e = self.event(
                    p,
                    Kind::Fence,
                    Mode::of_fence(ord),
                    scope,
                    None,
                    Space::Global,
                    spaces,
                    Width::B32,
                    0,
                    at,
                );
                p.events.push(e);
            }
            Inst::Barrier {
                kind: kind @ (BarrierKind::WorkGroup | BarrierKind::Named(_)),
                spaces,
                scope,
            } => {
                let (id, threads) = match kind {
                    BarrierKind::Named(b) => (b.id, b.threads),
                    _ => (0, None),
                };
                if let BarrierKind::Named(crate::ir::CtaBarrier {
                    op:
                        crate::ir::BarrierOp::Reduce {
                            op,
                            dst,
                            pred,
                            negated,
                            ..
                        },
                    ..
                }) = kind
                {
                    // bar.red: the result depends on the other participants' predicates. The path
                    // forks over every result it could get (popc: 0 to the participants; and/or: 0
                    // or 1); `Exec::barrier_sync` keeps the combinations whose results match.
                    let holds = (p.regs[pred as usize] != 0) != negated;
                    let most = match threads {
                        Some(n) => n as u64,
                        None => test
                            .threads
                            .iter()
                            .filter(|t| t.device == self.thread.device && t.cta == self.thread.cta)
                            .count() as u64,
                    };
                    let results: Vec<u64> = match op {
                        crate::ir::BarrierReduce::Popc => (0..=most).collect(),
                        _ => vec![0, 1],
                    };
                    let mut arrive = self.event(
                        p,
                        Kind::BarrierArrive,
                        Mode::Release,
                        scope,
                        None,
                        Space::Global,
                        spaces,
                        Width::B32,
                        0,
                        at,
                    );
                    arrive.barrier = p.barriers;
                    arrive.bar_id = id;
                    arrive.bar_threads = threads;
                    arrive.bar_red = Some(op);
                    arrive.rval = holds as u64;
                    let mut leave = arrive.clone();
                    leave.kind = Kind::BarrierLeave;
                    leave.mode = Mode::Acquire;
                    leave.bar_red = None;
                    leave.rval = 0;
                    let taint = p.taint[pred as usize];
                    for (i, &v) in results.iter().enumerate() {
                        let mut q = if i + 1 == results.len() {
                            None
                        } else {
                            Some(p.clone())
                        };
                        let target = q.as_mut().unwrap_or(p);
                        arrive.wval = v;
                        target.events.push(arrive.clone());
                        target.events.push(leave.clone());
                        target.regs[dst as usize] = v;
                        target.taint[dst as usize] = taint;
                        target.barriers += 1;
                        target.effects += 1;
                        target.pc = pc + 1;
                        if let Some(q) = q {
                            stack.push(q);
                        }
                    }
                    return Ok(Step::Go);
                }
                // `bar.arrive` releases and does not wait: no departure.
                let parts: &[(Kind, Mode)] = if kind.waits() {
                    &[
                        (Kind::BarrierArrive, Mode::Release),
                        (Kind::BarrierLeave, Mode::Acquire),
                    ]
                } else {
                    &[(Kind::BarrierArrive, Mode::Release)]
                };
                for &(kind, mode) in parts {
                    let mut e = self.event(
                        p,
                        kind,
                        mode,
                        scope,
                        None,
                        Space::Global,
                        spaces,
                        Width::B32,
                        0,
                        at,
                    );
                    e.barrier = p.barriers;
                    e.bar_id = id;
                    e.bar_threads = threads;
                    p.events.push(e);
                }
                p.barriers += 1;
                p.effects += 1;
            }
            Inst::Barrier {
                kind: BarrierKind::SubGroup,
                ..
            } => {
                return Err(self.not_modelled(test, pc, "sub-group barrier"));
            }
            Inst::ReadSpecial { .. } => {
                return Err(self.not_modelled(test, pc, "special registers"));
            }
            Inst::Math { .. } => {
                return Err(self.not_modelled(test, pc, "bit and floating-point functions"));
            }
            Inst::Warp { .. } => {
                return Err(self.not_modelled(test, pc, "warp-level exchanges"));
            }
            Inst::Cvt { dst, src, from, to } => {
                p.regs[dst as usize] = convert(p.regs[src as usize], from, to);
                p.taint[dst as usize] = p.taint[src as usize];
            }
            Inst::Compute { .. } => {}
            Inst::Exit => return Ok(Step::Done),
        }
        p.pc = pc + 1;
        Ok(Step::Go)
    }
}

/// Continues path `p` once for each value in `vals` that a read may return: `apply` sets up the
/// path for the value, the last value in `p` itself, the others in copies of `p` as it was, pushed
/// to `stack` first.
fn fork(p: &mut Path, stack: &mut Vec<Path>, vals: &[u64], mut apply: impl FnMut(&mut Path, u64)) {
    let Some((&last, others)) = vals.split_last() else {
        return;
    };
    for &v in others {
        let mut q = p.clone();
        apply(&mut q, v);
        stack.push(q);
    }
    apply(p, last);
}
