//! `litmus --explain`: why one iteration of a test ended in its witness (or a given final state),
//! told from what the modelled hardware did.
//!
//! How: the run looks for the first iteration (launch order, then instance) whose final state is
//! the one asked for, with recording off (`run::find_first`); then launches that one launch again
//! — same seed, same launch index, so the same plan and machine seed — with access provenance
//! recorded (`machine::provenance`), and checks that the re-run ends the chosen instance in the same
//! state. From the recorded events, for each of the instance's threads and each global access in
//! program order: when it issued and completed, what served it (the warp's own store-buffer entry,
//! the SM's L1 line — installed by which fill, from which L2 read, or written by which store, or
//! pre-warmed —, an L2 slice, an atomic unit), and for each store when it left the store buffer,
//! reached its SM's L1 (held there when the line is present or write-allocated) and reached L2.
//!
//! The derivation is general, not per test shape: each load's value has a source store (or the
//! initial value) found from provenance alone — the latest store of the location applied at L2
//! before the L2 read the value came through, the store that wrote the L1 line, or the thread's own
//! buffered store — and checked against the value the load returned. A load *missed* every other
//! thread's store to its location that is later in coherence order (order of arrival at L2) than
//! its source. The accesses that communicate with another thread (reading from or missing another
//! thread's store, or being read or missed) are the ones the outcome depends on; each thread's pairs
//! of them in program order that took effect in the other order (a store at its arrival at L2, a
//! load when its value left L2 or was written into the L1 line) are the reorderings the outcome
//! needed.
//!
//! Not explained: work-group-local (shared-memory) locations and accesses (not recorded), fences
//! and barriers (they appear only through the waits they cause). Times are core cycles from the
//! launch.

mod provenance;
mod render;

use super::cond::Var;
use super::kernel_builder::normalise;
use super::lower::{workload, Layout, Plan};
use super::run::{find_first, run_launch, LitmusOptions, Schedule};
use super::test::LitmusTest;
use super::LitmusError;
use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::ir::Space;
use crate::machine::memory::GlobalMemory;
use crate::machine::provenance::{AccessKind, ProvEvent, SendKind, ServeKind};
use provenance::{served, store_visibility};
use std::fmt::Write as _;

/// A final state as the user gave it (`--state "1:r0=1; 1:r1=0"`): values for some of the
/// condition's observed variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSpec {
    pub text: String,
    /// (index among the condition's observed variables, value).
    pub values: Vec<(usize, i64)>,
}

impl StateSpec {
    pub fn matches(&self, state: &[i64]) -> bool {
        self.values.iter().all(|&(i, v)| state[i] == v)
    }
}

/// Parses `--state` in the test's own syntax: `NAME=VALUE` items separated by `;` or `/\`, where a
/// name is `P1:r0` (or herd's `1:r0`), a location `x` or an element `y[1]`; each must be one the
/// test's condition observes (only those are read back from a run).
pub fn parse_state(text: &str, test: &LitmusTest) -> Result<StateSpec, LitmusError> {
    let cond = &test.condition;
    let names: Vec<String> = (0..cond.observed.len())
        .map(|i| cond.var_name(i, &test.threads, &test.locations))
        .collect();
    let err = |col: usize, message: String| LitmusError::State {
        text: text.to_string(),
        col: col as u32,
        message,
    };
    let mut values: Vec<(usize, i64)> = Vec::new();
    // Items with their 1-based starting column.
    let mut items: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i <= bytes.len() {
        let sep = if i == bytes.len() {
            Some(0)
        } else if bytes[i] == b';' {
            Some(1)
        } else if text[i..].starts_with("/\\") {
            Some(2)
        } else {
            None
        };
        match sep {
            Some(n) => {
                items.push((start, &text[start..i]));
                i += n.max(1);
                start = i;
            }
            None => i += 1,
        }
    }
    let col_of = |byte: usize| text[..byte].chars().count() + 1;
    for (at, item) in items {
        let lead = item.len() - item.trim_start().len();
        let item_t = item.trim();
        if item_t.is_empty() {
            continue;
        }
        let c = col_of(at + lead);
        let Some(eq) = item_t.find('=') else {
            return Err(err(
                c,
                format!("expected NAME=VALUE (e.g. P1:r0=1 or x=2), found `{item_t}`"),
            ));
        };
        let (name, after) = (item_t[..eq].trim(), &item_t[eq + 1..]);
        let value = after.trim();
        // The value's column: after the `=` and the blanks that follow it.
        let vcol = c + item_t[..=eq].chars().count() + (after.len() - after.trim_start().len());
        // herd's `1:r0` names thread 1.
        let full = match name.split_once(':') {
            Some((t, r)) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                let n: usize = t.parse().unwrap_or(usize::MAX);
                match test.threads.get(n) {
                    Some(th) => format!("{}:{}", th.name, r.trim()),
                    None => {
                        let all: Vec<&str> = test.threads.iter().map(|t| t.name.as_str()).collect();
                        return Err(err(
                            c,
                            format!(
                                "thread {t} does not exist (the test has {})",
                                all.join(", ")
                            ),
                        ));
                    }
                }
            }
            _ => name.replace(' ', ""),
        };
        let Some(vi) = names.iter().position(|n| *n == full) else {
            return Err(err(
                c,
                format!(
                    "`{name}` is not observed by the test's condition (only observed variables are \
                     read back; this test observes {})",
                    names.join(", ")
                ),
            ));
        };
        let v = parse_int(value).ok_or_else(|| {
            err(
                vcol,
                format!("`{value}` is not an integer value (for `{name}`)"),
            )
        })?;
        if values.iter().any(|&(j, _)| j == vi) {
            return Err(err(c, format!("`{name}` is given twice")));
        }
        let ty = match cond.observed[vi] {
            Var::Reg { thread, reg } => test.threads[thread].regs[reg as usize].ty,
            Var::Loc(l) | Var::Elem { loc: l, .. } => test.locations[l].ty,
        };
        values.push((vi, normalise(v as u64, ty)));
    }
    if values.is_empty() {
        return Err(err(
            1,
            format!(
                "no NAME=VALUE item (the test observes {})",
                names.join(", ")
            ),
        ));
    }
    Ok(StateSpec {
        text: text.to_string(),
        values,
    })
}

fn parse_int(s: &str) -> Option<i64> {
    let (neg, d) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = match d.strip_prefix("0x").or_else(|| d.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => d.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// What `--explain` looks for.
pub enum Target {
    /// The first iteration whose state is a witness of the condition.
    Witness,
    State(StateSpec),
}

/// The outcome of `--explain`.
pub enum Explained {
    /// The explanation of the chosen iteration, and the timeline of its launch when one was asked
    /// for (`--explain --timeline`: the same re-run, so the picture shows what the text says).
    Found(String, Option<crate::machine::timeline::Timeline>),
    /// No iteration of the run ended in the target: what was looked for.
    NotSeen(String),
}

/// Finds the first iteration that ends in `target` and explains it.
pub fn explain(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
    target: &Target,
    timeline: Option<&crate::machine::timeline::TimelineOptions>,
    progress: &dyn crate::progress::Report,
) -> Result<Explained, LitmusError> {
    let cond = &test.condition;
    let want = |s: &[i64]| match target {
        Target::Witness => cond.kept(s) && cond.witness(s),
        Target::State(spec) => spec.matches(s),
    };
    let what = match target {
        Target::Witness => format!("the witness of `{}`", cond.text),
        Target::State(spec) => format!("the state `{}`", spec.text.trim()),
    };
    let Some((li, k, state)) = find_first(test, cfg, opts, progress, &want)? else {
        return Ok(Explained::NotSeen(format!(
            "{}: no iteration of {} (seed {}) ended in {what}",
            test.name, opts.iterations, opts.seed
        )));
    };
    let sched = Schedule::new(test, cfg, opts);
    let (blocks, count) = sched.launch(li, opts.iterations);
    let (plan, res, states) = run_launch(
        test, &sched.lay, cfg, li, blocks, count, opts, true, timeline,
    )?;
    let names: Vec<String> = (0..cond.observed.len())
        .map(|i| cond.var_name(i, &test.threads, &test.locations))
        .collect();
    let show = |s: &[i64]| {
        names
            .iter()
            .zip(s)
            .map(|(n, v)| format!("{n}={v};"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let again = states[k as usize].as_deref().unwrap_or_default();
    if again != state.as_slice() {
        return Err(LitmusError::Replay {
            file: test.file.clone(),
            message: format!(
                "the recorded re-run of launch {li} ended instance {k} in {} instead of {}",
                show(again),
                show(&state)
            ),
        });
    }
    let recorded = res.timeline;
    let events = res.provenance.unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): iteration {} (launch {li}, instance {k}, seed {}) is the first to end in {what}",
        test.name,
        test.file,
        li * sched.per_launch + k,
        opts.seed
    );
    let _ = writeln!(
        out,
        "final state       {}   (the recorded re-run of launch {li} ends in the same state)",
        show(&state)
    );
    let _ = writeln!(
        out,
        "times             core cycles from the launch ({} MHz); L1 and L2 line {} B",
        cfg.clocks.core_mhz, cfg.l1.line_bytes
    );
    let story = Story::build(test, cfg, &sched.lay, &plan, k, &events);
    story.render(&mut out);
    Ok(Explained::Found(out, recorded))
}

/// A point in the merged log: its time and index (the index orders events of one time).
type Pt = (Time, usize);

/// Where a load's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Init,
    Store(usize),
    Unknown,
}

/// How the L1 line a load hit came to hold its bytes.
#[derive(Debug, Clone, Copy)]
enum LineSrc {
    /// In the L1 since the launch (`stress.prewarm_l1`).
    Prewarmed,
    /// Installed by a fill at `installed`, read at `read` in slice `slice` (when found).
    Fill {
        installed: Pt,
        read: Option<(u16, Pt)>,
    },
    /// Written by a store reaching this L1 (index of the event).
    Written(Pt),
}

/// What served an access.
#[derive(Debug, Clone, Copy)]
enum Served {
    /// Its own warp's store-buffer entry.
    Forward,
    L1Hit {
        at: Pt,
        line: LineSrc,
    },
    /// An L2 read, after an L1 miss (`miss`) or bypassing the L1.
    L2 {
        slice: u16,
        at: Pt,
        miss: bool,
    },
    /// The atomic unit of an L2 slice.
    AtomicL2 {
        slice: u16,
        at: Pt,
    },
    /// The SM's L1 atomic unit.
    AtomicL1 {
        at: Pt,
    },
    Unknown,
}

/// When a store became visible where.
#[derive(Debug, Clone, Copy, Default)]
struct Visible {
    drained: Option<Pt>,
    /// Reached its SM's L1; whether the line is held there afterwards.
    l1: Option<(Pt, bool)>,
    l2: Option<(u16, Pt)>,
}

struct Acc {
    thread: usize,
    sm: u16,
    kind: AccessKind,
    issued: Pt,
    done: Option<Pt>,
    addr: u64,
    /// The location's display name (`x`, `y[1]`).
    loc: String,
    /// Value stored (stores) or returned (loads, atomics), normalised to the location's type.
    value: Option<i64>,
    served: Served,
    vis: Visible,
    source: Source,
}

impl Acc {
    fn is_load(&self) -> bool {
        matches!(self.kind, AccessKind::Load)
    }
    fn writes(&self) -> bool {
        !self.is_load()
    }
}

struct Story<'a> {
    test: &'a LitmusTest,
    clock: Clock,
    ws: u32,
    /// Per thread: (SM, warp slot, lane).
    place: Vec<Option<(u16, u16, u64)>>,
    accs: Vec<Acc>,
    /// Initial value per address.
    init: Vec<(u64, i64)>,
}

fn covers(line: u64, mask: u128, addr: u64) -> bool {
    addr >= line && addr - line < 128 && mask >> (addr - line) & 1 == 1
}

impl<'a> Story<'a> {
    fn build(
        test: &'a LitmusTest,
        cfg: &GpuConfig,
        lay: &Layout,
        plan: &Plan,
        k: u64,
        ev: &[(Time, ProvEvent)],
    ) -> Story<'a> {
        let lb = cfg.l1.line_bytes as u64;
        let wl = workload(test, lay, plan);
        let placed = GlobalMemory::new(&wl.buffers, 0).placed;
        // The instance's global locations: address → (name, type, initial value).
        let mut locs: Vec<(u64, String, crate::ir::Ty, i64)> = Vec::new();
        for (l, loc) in test.locations.iter().enumerate() {
            if loc.space != Space::Global {
                continue;
            }
            let Some(p) = placed.get(l) else { continue };
            for i in 0..loc.len {
                let e = plan.elem(lay, l, k, i);
                let init = loc.elems.get(i as usize).copied().unwrap_or(loc.init);
                locs.push((
                    p.base + e * p.elem_bytes as u64,
                    loc.elem_name(i),
                    loc.ty,
                    init,
                ));
            }
        }
        let pt = |i: usize| (ev[i].0, i);
        let mut accs: Vec<Acc> = Vec::new();
        let mut place = vec![None; test.threads.len()];
        for (ti, _) in test.threads.iter().enumerate() {
            let tid = plan.thread_id(lay, ti, k);
            for (i, (_, e)) in ev.iter().enumerate() {
                let ProvEvent::Issue {
                    sm,
                    warp,
                    op,
                    kind,
                    lanes,
                } = e
                else {
                    continue;
                };
                let Some(&(_, addr, stored)) = lanes.iter().find(|l| l.0 == tid) else {
                    continue;
                };
                place[ti] = Some((*sm, *warp, tid % lay.ws as u64));
                let (loc, ty) = match locs.iter().find(|l| l.0 == addr) {
                    Some(l) => (l.1.clone(), Some(l.2)),
                    None => (format!("{addr:#x}"), None),
                };
                let mut a = Acc {
                    thread: ti,
                    sm: *sm,
                    kind: *kind,
                    issued: pt(i),
                    done: None,
                    addr,
                    loc,
                    value: None,
                    served: Served::Unknown,
                    vis: Visible::default(),
                    source: Source::Unknown,
                };
                let line = addr & !(lb - 1);
                let norm = |v: u64| ty.map_or(v as i64, |t| normalise(v, t));
                match (kind, op) {
                    (AccessKind::Store { buffered }, _) => {
                        a.value = Some(norm(stored));
                        a.vis = store_visibility(ev, i, *sm, *warp, line, addr, *buffered);
                    }
                    (_, Some(op)) => {
                        let done = ev[i..].iter().position(|(_, e)| {
                            matches!(e, ProvEvent::Done { sm: s, op: o, .. } if s == sm && o == op)
                        });
                        let end = done.map_or(ev.len(), |d| i + d);
                        if let Some(d) = done {
                            a.done = Some(pt(i + d));
                            if let ProvEvent::Done { vals, .. } = &ev[i + d].1 {
                                a.value = vals.iter().find(|v| v.0 == tid).map(|v| norm(v.1));
                            }
                        }
                        a.served = served(ev, i, end, *sm, *op, line, addr);
                        if let (Served::AtomicL2 { slice, at }, AccessKind::Rmw) = (a.served, kind)
                        {
                            a.vis.l2 = Some((slice, at));
                        }
                    }
                    _ => {}
                }
                accs.push(a);
            }
        }
        let init = locs.iter().map(|l| (l.0, l.3)).collect();
        let mut s = Story {
            test,
            clock: Clock::from_mhz(cfg.clocks.core_mhz),
            ws: lay.ws,
            place,
            accs,
            init,
        };
        s.sources();
        s
    }

    /// Each load's (and atomic's) source: the store whose value it read, from provenance alone.
    fn sources(&mut self) {
        for i in 0..self.accs.len() {
            let a = &self.accs[i];
            if a.is_load() || matches!(a.kind, AccessKind::Rmw) {
                let src = match a.served {
                    // The thread's own latest earlier write of the location.
                    Served::Forward => self
                        .accs
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| {
                            b.thread == a.thread
                                && b.writes()
                                && b.addr == a.addr
                                && b.issued < a.issued
                        })
                        .map(|(j, _)| Source::Store(j))
                        .next_back()
                        .unwrap_or(Source::Unknown),
                    Served::L2 { at, .. } | Served::AtomicL2 { at, .. } => self.at_l2(a.addr, at),
                    Served::L1Hit { line, .. } => match line {
                        LineSrc::Prewarmed => Source::Init,
                        LineSrc::Fill {
                            read: Some((_, at)),
                            ..
                        } => self.at_l2(a.addr, at),
                        LineSrc::Fill { read: None, .. } => Source::Unknown,
                        LineSrc::Written(w) => self
                            .accs
                            .iter()
                            .position(|b| b.vis.l1.is_some_and(|(p, _)| p == w))
                            .map(Source::Store)
                            .unwrap_or(Source::Unknown),
                    },
                    Served::AtomicL1 { .. } | Served::Unknown => Source::Unknown,
                };
                self.accs[i].source = src;
            }
        }
    }

    /// The latest write of `addr` applied at L2 before `at`.
    fn at_l2(&self, addr: u64, at: Pt) -> Source {
        self.accs
            .iter()
            .enumerate()
            .filter(|(_, b)| b.writes() && b.addr == addr)
            .filter_map(|(j, b)| Some((j, b.vis.l2?.1)))
            .filter(|&(_, p)| p < at)
            .max_by_key(|&(_, p)| p)
            .map_or(Source::Init, |(j, _)| Source::Store(j))
    }

    fn cyc(&self, p: Pt) -> u64 {
        self.clock.cycle_of(p.0)
    }

    fn name(&self, i: usize) -> &str {
        &self.test.threads[self.accs[i].thread].name
    }

    fn value_of(&self, src: Source, addr: u64) -> Option<i64> {
        match src {
            Source::Init => self.init.iter().find(|x| x.0 == addr).map(|x| x.1),
            Source::Store(j) if !self.accs[j].is_load() => {
                // An atomic's written value is not recorded; only plain stores are checked.
                matches!(self.accs[j].kind, AccessKind::Store { .. })
                    .then_some(self.accs[j].value)
                    .flatten()
            }
            _ => None,
        }
    }

    fn source_text(&self, src: Source) -> String {
        match src {
            Source::Init => "the initial value".into(),
            Source::Store(j) => format!(
                "{}'s {}",
                self.name(j),
                if matches!(self.accs[j].kind, AccessKind::Rmw) {
                    "atomic"
                } else {
                    "store"
                }
            ),
            Source::Unknown => "an unrecorded source".into(),
        }
    }

    /// Position in coherence order: the initial value first, then writes by arrival at L2.
    fn co(&self, src: Source) -> Option<Pt> {
        match src {
            Source::Init => Some((0, 0)),
            Source::Store(j) => self.accs[j].vis.l2.map(|v| (v.1 .0 + 1, v.1 .1)),
            Source::Unknown => None,
        }
    }

    /// When the access took effect for other threads: a write at its arrival at L2, a load when its
    /// value was taken (read at L2, or written into the L1 line it hit; the launch for a pre-warmed
    /// line; its issue for a forwarded load).
    fn effect(&self, i: usize) -> Option<Pt> {
        let a = &self.accs[i];
        if a.writes() {
            return a.vis.l2.map(|v| v.1);
        }
        match a.served {
            Served::Forward => Some(a.issued),
            Served::L2 { at, .. } | Served::AtomicL2 { at, .. } | Served::AtomicL1 { at } => {
                Some(at)
            }
            Served::L1Hit { line, .. } => match line {
                LineSrc::Prewarmed => Some((0, 0)),
                LineSrc::Fill { read, installed } => Some(read.map_or(installed, |r| r.1)),
                LineSrc::Written(w) => Some(w),
            },
            Served::Unknown => None,
        }
    }

    /// How a load took its value, as a phrase after "P1's load of x ".
    fn how(&self, i: usize) -> String {
        let a = &self.accs[i];
        match a.served {
            Served::Forward => "was served by its own store-buffer entry".into(),
            Served::L1Hit { at, line } => format!(
                "was served by SM {}'s L1 at cycle {} ({})",
                a.sm,
                self.cyc(at),
                self.line_text(line)
            ),
            Served::L2 { slice, at, .. } => {
                format!("read L2 slice {slice} at cycle {}", self.cyc(at))
            }
            Served::AtomicL2 { slice, at } => format!(
                "was performed by L2 slice {slice}'s atomic unit at cycle {}",
                self.cyc(at)
            ),
            Served::AtomicL1 { at } => format!(
                "was performed by SM {}'s L1 atomic unit at cycle {}",
                a.sm,
                self.cyc(at)
            ),
            Served::Unknown => "was served by an unrecorded structure".into(),
        }
    }

    fn line_text(&self, l: LineSrc) -> String {
        match l {
            LineSrc::Prewarmed => "line pre-warmed with the initial values at launch".into(),
            LineSrc::Fill {
                installed,
                read: Some((slice, r)),
            } => format!(
                "line filled at cycle {} from L2 slice {slice}, read there at cycle {}",
                self.cyc(installed),
                self.cyc(r)
            ),
            LineSrc::Fill {
                installed,
                read: None,
            } => format!("line filled at cycle {}", self.cyc(installed)),
            LineSrc::Written(w) => {
                let by = self
                    .accs
                    .iter()
                    .position(|b| b.vis.l1.is_some_and(|(p, _)| p == w))
                    .map(|j| format!("{}'s store", self.name(j)))
                    .unwrap_or_else(|| "a store".into());
                format!("line written by {by} at cycle {}", self.cyc(w))
            }
        }
    }

    /// Where store `j` was at `p`, as a phrase after "P0's store to x was ".
    fn where_at(&self, j: usize, p: Pt) -> String {
        let v = self.accs[j].vis;
        let l2 =
            v.l2.map(|(s, t)| format!("reached L2 slice {s} at cycle {}", self.cyc(t)))
                .unwrap_or_else(|| "never reached L2 in the run".into());
        match (v.drained, v.l1) {
            (Some(d), _) if d > p => format!(
                "still in its store buffer (drained at cycle {}; {l2})",
                self.cyc(d)
            ),
            (Some(d), Some((l1, _))) if l1 > p => format!(
                "out of its store buffer (cycle {}) but still queued at its SM's L1, which took it \
                 at cycle {} ({l2})",
                self.cyc(d),
                self.cyc(l1)
            ),
            _ if v.l2.is_some_and(|x| x.1 > p) => format!("on its way to L2 ({l2})"),
            _ => l2,
        }
    }
}
