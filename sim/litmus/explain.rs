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

use super::cond::Var;
use super::lower::{normalise, workload, Layout, Plan};
use super::run::{find_first, run_launch, LitmusOptions, Schedule};
use super::test::LitmusTest;
use super::LitmusError;
use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::ir::Space;
use crate::machine::memory::GlobalMemory;
use crate::machine::provenance::{AccessKind, ProvEvent, SendKind, ServeKind};
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
        Target::Witness => cond.witness(s),
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

    fn render(&self, out: &mut String) {
        for (ti, t) in self.test.threads.iter().enumerate() {
            let mine: Vec<usize> = (0..self.accs.len())
                .filter(|&i| self.accs[i].thread == ti)
                .collect();
            match self.place[ti] {
                Some((sm, warp, lane)) => {
                    let _ = writeln!(
                        out,
                        "\n{} (SM {sm}, warp slot {warp}, lane {})",
                        t.name,
                        lane % self.ws as u64
                    );
                }
                None => {
                    let _ = writeln!(out, "\n{} (no global-memory access recorded)", t.name);
                }
            }
            for i in mine {
                let _ = writeln!(out, "  {}", self.line(i));
            }
        }
        let _ = writeln!(out, "\nwhy");
        let (facts, needed) = self.why();
        for s in facts {
            let _ = writeln!(out, "  {s}");
        }
        if needed.is_empty() {
            let _ = writeln!(
                out,
                "  needed: no reordering (no two communicating accesses of a thread took effect out of \
                 program order: an interleaving of the threads' accesses gives this state)"
            );
        }
        if !needed.is_empty() {
            let kinds: Vec<String> = needed.iter().map(|n| n.0.clone()).collect();
            let mut uniq: Vec<String> = Vec::new();
            for k in kinds {
                if !uniq.contains(&k) {
                    uniq.push(k);
                }
            }
            if uniq.len() == 1 {
                let _ = writeln!(out, "  needed: {}", uniq[0]);
            } else {
                // A cycle of such accesses closes only if some pair of one thread took effect out of
                // program order; any one of these would do.
                let _ = writeln!(
                    out,
                    "  needed: at least one of {} (all of them happened here)",
                    uniq.join(", ")
                );
            }
            for (_, text) in needed {
                let _ = writeln!(out, "    {text}");
            }
        }
    }

    /// One access's line in its thread's list.
    fn line(&self, i: usize) -> String {
        let a = &self.accs[i];
        let v = |x: Option<i64>| x.map_or("?".to_string(), |v| v.to_string());
        match a.kind {
            AccessKind::Store { buffered } => {
                let mut s = format!(
                    "store {} = {:<4} issued {}",
                    a.loc,
                    v(a.value),
                    self.cyc(a.issued)
                );
                if buffered {
                    match a.vis.drained {
                        Some(d) => {
                            let _ = write!(s, "; in its store buffer until {}", self.cyc(d));
                        }
                        None => s.push_str("; in its store buffer (not drained in the run)"),
                    }
                } else {
                    s.push_str("; not buffered");
                }
                if let Some((p, held)) = a.vis.l1 {
                    let _ = write!(
                        s,
                        "; SM {}'s L1 at {}{}",
                        a.sm,
                        self.cyc(p),
                        if held {
                            " (line held: visible there)"
                        } else {
                            " (line not held: passed through)"
                        }
                    );
                }
                match a.vis.l2 {
                    Some((sl, p)) => {
                        let _ = write!(s, "; L2 slice {sl} at {}", self.cyc(p));
                    }
                    None => s.push_str("; never reached L2"),
                }
                s
            }
            AccessKind::Load | AccessKind::Rmw => {
                let what = if a.is_load() { "load " } else { "atomic" };
                let mut s = format!(
                    "{what} {} -> {:<3} issued {}, completed {}; ",
                    a.loc,
                    v(a.value),
                    self.cyc(a.issued),
                    a.done.map_or("?".into(), |d| self.cyc(d).to_string())
                );
                s.push_str(&match a.served {
                    Served::Forward => "its own store-buffer entry (forwarded)".into(),
                    Served::L1Hit { at, line } => format!(
                        "SM {}'s L1, hit at {} ({})",
                        a.sm,
                        self.cyc(at),
                        self.line_text(line)
                    ),
                    Served::L2 { slice, at, miss } => format!(
                        "L2 slice {slice}, read at {} ({})",
                        self.cyc(at),
                        if miss {
                            "L1 miss, line filled"
                        } else {
                            "bypassing the L1"
                        }
                    ),
                    Served::AtomicL2 { slice, at } => {
                        format!("L2 slice {slice}'s atomic unit at {}", self.cyc(at))
                    }
                    Served::AtomicL1 { at } => {
                        format!("SM {}'s L1 atomic unit at {}", a.sm, self.cyc(at))
                    }
                    Served::Unknown => "served by an unrecorded structure".into(),
                });
                let _ = write!(s, "; its value: {}", self.source_text(a.source));
                if let (Some(got), Some(exp)) = (a.value, self.value_of(a.source, a.addr)) {
                    if got != exp && a.is_load() {
                        let _ = write!(
                            s,
                            " (provenance disagrees: that holds {exp}, the load returned {got})"
                        );
                    }
                }
                s
            }
        }
    }

    /// "load of x", "store to x", "atomic on x".
    fn what(&self, i: usize) -> String {
        let a = &self.accs[i];
        match a.kind {
            AccessKind::Load => format!("load of {}", a.loc),
            AccessKind::Store { .. } => format!("store to {}", a.loc),
            AccessKind::Rmw => format!("atomic on {}", a.loc),
        }
    }

    /// The facts the outcome rests on — stale reads (a load that missed another thread's store)
    /// and the coherence order of different threads' writes — and the reorderings the outcome
    /// needed (kind, sentence).
    fn why(&self) -> (Vec<String>, Vec<(String, String)>) {
        let n = self.accs.len();
        let mut involved = vec![false; n];
        let mut facts = Vec::new();
        for i in 0..n {
            let a = &self.accs[i];
            if !(a.is_load() || matches!(a.kind, AccessKind::Rmw)) {
                continue;
            }
            if let Source::Store(j) = a.source {
                if self.accs[j].thread != a.thread {
                    involved[i] = true;
                    involved[j] = true;
                }
            }
            let Some(mine) = self.co(a.source) else {
                continue;
            };
            for j in 0..n {
                let b = &self.accs[j];
                if !b.writes() || b.addr != a.addr || b.thread == a.thread || j == i {
                    continue;
                }
                let Some(theirs) = self.co(Source::Store(j)) else {
                    continue;
                };
                if theirs <= mine || Source::Store(j) == a.source {
                    continue;
                }
                involved[i] = true;
                involved[j] = true;
                // An atomic reads the latest value at its unit: a later write is simply later.
                if matches!(a.kind, AccessKind::Rmw) {
                    continue;
                }
                let took = self.effect(i).unwrap_or(a.issued);
                let s = match a.served {
                    Served::L1Hit { .. } => {
                        let l2 = b.vis.l2.map(|x| x.1).expect("co has it");
                        let rel = if took < l2 { "before" } else { "after" };
                        let same = if self.cyc(took) == self.cyc(l2) {
                            if took < l2 {
                                ", later in the same cycle"
                            } else {
                                ", earlier in the same cycle"
                            }
                        } else {
                            ""
                        };
                        format!(
                            "stale: {}'s {} {} — a stale L1 line: its value was taken {rel} {}'s {} reached L2 (cycle {}{same})",
                            self.name(i),
                            self.what(i),
                            self.how(i),
                            self.name(j),
                            self.what(j),
                            self.cyc(l2),
                        )
                    }
                    _ => format!(
                        "stale: {}'s {} was {} when {}'s {} {}",
                        self.name(j),
                        self.what(j),
                        self.where_at(j, took),
                        self.name(i),
                        self.what(i),
                        self.how(i)
                    ),
                };
                facts.push(s);
            }
        }
        // Coherence between different threads' writes of one location: their order at L2.
        let mut addrs: Vec<u64> = Vec::new();
        for i in 0..n {
            let a = &self.accs[i];
            if !a.writes() || addrs.contains(&a.addr) {
                continue;
            }
            let mut ws: Vec<(Pt, usize)> = (0..n)
                .filter(|&j| self.accs[j].writes() && self.accs[j].addr == a.addr)
                .filter_map(|j| Some((self.accs[j].vis.l2?.1, j)))
                .collect();
            let threads = |ws: &[(Pt, usize)]| {
                let mut t: Vec<usize> = ws.iter().map(|w| self.accs[w.1].thread).collect();
                t.dedup();
                t.len()
            };
            ws.sort();
            if threads(&ws) < 2 {
                continue;
            }
            addrs.push(a.addr);
            for x in &ws {
                if ws
                    .iter()
                    .any(|y| self.accs[y.1].thread != self.accs[x.1].thread)
                {
                    involved[x.1] = true;
                }
            }
            let order: Vec<String> = ws
                .iter()
                .map(|&(p, j)| {
                    let v = self.accs[j]
                        .value
                        .filter(|_| matches!(self.accs[j].kind, AccessKind::Store { .. }))
                        .map(|v| format!(" ({} = {v})", a.loc))
                        .unwrap_or_default();
                    format!(
                        "{}'s {}{v} at cycle {}",
                        self.name(j),
                        self.what(j),
                        self.cyc(p)
                    )
                })
                .collect();
            facts.push(format!(
                "coherence: the writes of {} reached L2 in this order: {}",
                a.loc,
                order.join(", then ")
            ));
        }
        let mut needed = Vec::new();
        for (ti, t) in self.test.threads.iter().enumerate() {
            let mine: Vec<usize> = (0..n)
                .filter(|&i| self.accs[i].thread == ti && involved[i])
                .collect();
            for (x, &a) in mine.iter().enumerate() {
                for &b in &mine[x + 1..] {
                    let (aa, bb) = (&self.accs[a], &self.accs[b]);
                    if aa.addr == bb.addr {
                        continue;
                    }
                    let (Some(ea), Some(eb)) = (self.effect(a), self.effect(b)) else {
                        continue;
                    };
                    if eb >= ea {
                        continue;
                    }
                    let kind = |x: &Acc| match x.kind {
                        AccessKind::Load => "load",
                        AccessKind::Store { .. } => "store",
                        AccessKind::Rmw => "atomic",
                    };
                    let label = format!("{}→{} reordering in {}", kind(aa), kind(bb), t.name);
                    let b_reads = !matches!(bb.kind, AccessKind::Store { .. });
                    let text = match (aa.writes(), b_reads) {
                        (true, true) => format!(
                            "{}'s {} was {} when its later {} {}",
                            t.name,
                            self.what(a),
                            self.where_at(a, eb),
                            self.what(b),
                            self.how(b)
                        ),
                        (true, false) => format!(
                            "{}'s {} reached L2 at cycle {}, before its earlier {}, which was {}",
                            t.name,
                            self.what(b),
                            self.cyc(eb),
                            self.what(a),
                            self.where_at(a, eb)
                        ),
                        (false, true) => format!(
                            "{}'s {} {}, before its earlier {} {}",
                            t.name,
                            self.what(b),
                            self.how(b),
                            self.what(a),
                            self.how(a)
                        ),
                        (false, false) => format!(
                            "{}'s {} reached L2 at cycle {}, before its earlier {} took its value (it {})",
                            t.name,
                            self.what(b),
                            self.cyc(eb),
                            self.what(a),
                            self.how(a)
                        ),
                    };
                    needed.push((label, text));
                }
            }
        }
        (facts, needed)
    }
}

/// What served load or atomic `op` of `sm`, from the events between its issue `from` and its
/// completion `to`.
fn served(
    ev: &[(Time, ProvEvent)],
    from: usize,
    to: usize,
    sm: u16,
    op: u32,
    line: u64,
    addr: u64,
) -> Served {
    let pt = |i: usize| (ev[i].0, i);
    for i in from..to.min(ev.len()) {
        match &ev[i].1 {
            ProvEvent::Forward {
                sm: s,
                op: o,
                line: l,
            } if *s == sm && *o == op && *l == line => return Served::Forward,
            ProvEvent::L1Load {
                sm: s,
                op: o,
                line: l,
                hit,
                ..
            } if *s == sm && *o == op && *l == line => {
                if *hit {
                    return Served::L1Hit {
                        at: pt(i),
                        line: line_source(ev, i, sm, line, addr),
                    };
                }
                // Answered by the line's fill: its latest read of this byte before the answer.
                let ans = (i..to.min(ev.len())).find(|&j| {
                    matches!(&ev[j].1, ProvEvent::L1FillServed { sm: s, op: o, line: l }
                        if *s == sm && *o == op && *l == line)
                });
                let Some(ans) = ans else {
                    return Served::Unknown;
                };
                return match fill_read(ev, ans, sm, line, addr) {
                    Some((slice, at)) => Served::L2 {
                        slice,
                        at,
                        miss: true,
                    },
                    None => Served::Unknown,
                };
            }
            ProvEvent::L1Send {
                sm: s,
                tag,
                line: l,
                kind: SendKind::Bypass { op: o, .. } | SendKind::Atomic { op: o, .. },
                ..
            } if *s == sm && *o == op && *l == line => {
                return match serve_of(ev, i, sm, *tag) {
                    Some((slice, at, ServeKind::Atomic)) => Served::AtomicL2 { slice, at },
                    Some((slice, at, _)) => Served::L2 {
                        slice,
                        at,
                        miss: false,
                    },
                    None => Served::Unknown,
                };
            }
            ProvEvent::L1Atomic {
                sm: s,
                op: o,
                line: l,
            } if *s == sm && *o == op && *l == line => return Served::AtomicL1 { at: pt(i) },
            _ => {}
        }
    }
    Served::Unknown
}

/// The slice and time at which request `tag` of `sm`, sent at event `sent`, was served.
fn serve_of(
    ev: &[(Time, ProvEvent)],
    sent: usize,
    sm: u16,
    tag: u32,
) -> Option<(u16, Pt, ServeKind)> {
    (sent + 1..ev.len()).find_map(|j| match &ev[j].1 {
        ProvEvent::L2Serve {
            slice,
            sm: s,
            tag: t,
            kind,
            ..
        } if *s == sm && *t == tag => Some((*slice, (ev[j].0, j), *kind)),
        _ => None,
    })
}

/// The L2 read that brought byte `addr` of `line` into `sm`'s L1 for a fill completing at event
/// `at`: the latest fill request covering the byte sent before it.
fn fill_read(
    ev: &[(Time, ProvEvent)],
    at: usize,
    sm: u16,
    line: u64,
    addr: u64,
) -> Option<(u16, Pt)> {
    let sent = (0..at).rev().find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Send { sm: s, line: l, mask, kind: SendKind::Fill, .. }
            if *s == sm && *l == line && covers(*l, *mask, addr))
    })?;
    let ProvEvent::L1Send { tag, .. } = &ev[sent].1 else {
        unreachable!("found above")
    };
    serve_of(ev, sent, sm, *tag).map(|(s, p, _)| (s, p))
}

/// How the L1 line of `sm` hit at event `hit` came to hold byte `addr`: the latest install or
/// local write of it (a local write during the fill counts as later: it is applied on arrival);
/// none: pre-warmed.
fn line_source(ev: &[(Time, ProvEvent)], hit: usize, sm: u16, line: u64, addr: u64) -> LineSrc {
    for j in (0..hit).rev() {
        match &ev[j].1 {
            ProvEvent::L1Install {
                sm: s,
                line: l,
                mask,
            } if *s == sm && *l == line && covers(*l, *mask, addr) => {
                let read = fill_read(ev, j, sm, line, addr);
                // A store accepted while the fill was outstanding was applied over it.
                let sent = read.map(|r| r.1 .1).unwrap_or(j);
                let over = (sent..j).rev().find(|&w| {
                    matches!(&ev[w].1, ProvEvent::L1Store { sm: s, line: l, mask, .. }
                        if *s == sm && *l == line && covers(*l, *mask, addr))
                });
                return match over {
                    Some(w) => LineSrc::Written((ev[w].0, w)),
                    None => LineSrc::Fill {
                        installed: (ev[j].0, j),
                        read,
                    },
                };
            }
            ProvEvent::L1Store {
                sm: s,
                line: l,
                mask,
                held: true,
                ..
            } if *s == sm && *l == line && covers(*l, *mask, addr) => {
                return LineSrc::Written((ev[j].0, j))
            }
            _ => {}
        }
    }
    LineSrc::Prewarmed
}

/// When the store issued at event `from` (lane address `addr` of `warp` on `sm`) left the store
/// buffer, reached the L1 and reached L2.
fn store_visibility(
    ev: &[(Time, ProvEvent)],
    from: usize,
    sm: u16,
    warp: u16,
    line: u64,
    addr: u64,
    buffered: bool,
) -> Visible {
    let mut v = Visible::default();
    let mut at = from;
    if buffered {
        let Some(d) = (from + 1..ev.len()).find(|&j| {
            matches!(&ev[j].1, ProvEvent::SbDrain { sm: s, warp: w, line: l, mask }
                if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
        }) else {
            return v;
        };
        v.drained = Some((ev[d].0, d));
        at = d;
    }
    let Some(l1) = (at + 1..ev.len()).find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Store { sm: s, warp: Some(w), line: l, mask, .. }
            if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
    }) else {
        return v;
    };
    if let ProvEvent::L1Store { held, .. } = ev[l1].1 {
        v.l1 = Some(((ev[l1].0, l1), held));
    }
    let send = (l1..ev.len()).find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Send { sm: s, line: l, mask, kind: SendKind::Write { warp: Some(w) }, .. }
            if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
    });
    if let Some(s) = send {
        if let ProvEvent::L1Send { tag, .. } = ev[s].1 {
            v.l2 = serve_of(ev, s, sm, tag).map(|(sl, p, _)| (sl, p));
        }
    }
    v
}
