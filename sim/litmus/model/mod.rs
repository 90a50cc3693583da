//! The oracle: an axiomatic model checker for litmus tests. For a test it enumerates the candidate
//! executions (each thread's paths with the values its loads may return, reads-from, coherence
//! order per location, the PTX Fence-SC order), keeps those the dialect's memory model allows, and
//! returns the allowed final states (values of the condition's observed variables) with herd's
//! verdict for the condition.
//!
//! Models ([`ModelKind`], `gpumemsim model --model`): `ptx`, the PTX memory consistency model for
//! the PTX dialect (`ptx.rs`: Lustig et al., ASPLOS 2019, as in the PTX ISA); for OpenCL, scoped C11
//! (Batty et al., POPL 2016) either with RC11's repairs (`opencl-rc11`, the default: no thin-air
//! cycles, the repaired seq_cst and SC fences; Lahav et al., PLDI 2017) or with the original C11
//! rules as Batty et al. formalised them (`opencl-c11`: thin-air cycles allowed, the 2011 SC-fence
//! rules; "Mathematizing C++ Concurrency", POPL 2011). herd's SVM rule for `all_svm_devices` is
//! not modelled (system scope is the widest scope, nothing more). Before enumerating, `estimate.rs`
//! refuses a test whose work could not end within the bounds ("too large to decide (estimate …)").
//! Flow: `interp.rs` (per-thread traces over a value
//! domain, loops unrolled, spin loops reduced; `live.rs`; values as `crate::ir::eval` computes
//! them) → `exec.rs` (combinations, reads-from, final states) → the model's axioms over relations
//! (`rel.rs`) on events (`event.rs`).
//!
//! What a result means: the allowed states are exact when no bound was hit; when the unrolling
//! bound cut a path (`bound_hit`), they are the states of the executions within the bound, so an
//! observed state outside them is *unknown*, not forbidden, and a verdict that needs the complete set
//! is undecided. Races: an OpenCL test with a race (data, scope or barrier divergence) in some
//! consistent execution has undefined behaviour: the decision carries the race and herd's `Undef`
//! instead of a verdict (`--racy-states` collects the states the axioms allow all the same). PTX
//! gives racy programs a semantics (PTX ISA, "Data races": weak accesses still read from some
//! write, coherence relates morally strong writes): the verdict stands, the race is reported beside
//! it (`Decision::reported_race`). An access herd accepts and marks undefined (`st.acquire`,
//! `ld.release`) makes the test `Undef` under any model.
//!
//! Values are register bits from the simulator's own evaluators (`ir::eval`: integer and f32
//! arithmetic, comparisons, conversions, read-modify-writes), so the oracle's values are the machine's.
//!
//! Not modelled, each reported as "model: <construct> not modelled" with the instruction: special
//! registers, sub-group barriers, an address outside every location's elements (or misaligned),
//! constructs the parser accepted but could not express in the IR (`Thread::pending`: sub-word,
//! vector and 128-bit accesses, f16/f64 atomics, clusters, memory proxies; the IR holds no
//! instruction for them, so a verdict would be about another program), barriers whose generations
//! depend on timing (`check_barriers`: one id with
//! different thread counts, more users than a count, a `bar.arrive` by a thread that uses the
//! barrier again).
//!
//! Barriers: 16 per CTA with optional thread counts, `bar.arrive` and `bar.red` (`exec.rs`
//! `Exec::barrier_sync`). An execution in which a barrier is never completed has no final state;
//! the decision says whether some execution may deadlock (`deadlock`), so that a run's "no final
//! state" count is judged like a state.

mod estimate;
mod event;
mod exec;
mod interp;
mod live;
pub(crate) use live::{loop_headers, successors, uses_defs};
mod opencl;
mod ptx;
mod rel;
mod report;

#[cfg(test)]
mod opencl_tests;
#[cfg(test)]
mod ptx_tests;

pub use report::{brief_line, json_decision, summary, text_decision, ModelJson};

use super::cond::{Condition, Quantifier};
use super::test::{Dialect, Expect, LitmusTest};
use crate::ir::SrcLoc;
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// Which memory model decides a test: `ptx` for the PTX dialect; for OpenCL, scoped C11 with
/// RC11's repairs (`opencl-rc11`, the default) or with the original C11 rules as Batty et al.
/// formalised them (`opencl-c11`: thin-air cycles allowed, the 2011 SC-fence rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ModelKind {
    #[serde(rename = "ptx")]
    Ptx,
    #[serde(rename = "opencl-rc11")]
    OpenClRc11,
    #[serde(rename = "opencl-c11")]
    OpenClC11,
}

impl ModelKind {
    pub const ALL: [ModelKind; 3] = [ModelKind::Ptx, ModelKind::OpenClRc11, ModelKind::OpenClC11];

    /// The default model of a dialect.
    pub fn of(d: Dialect) -> ModelKind {
        match d {
            Dialect::Ptx => ModelKind::Ptx,
            Dialect::OpenCl => ModelKind::OpenClRc11,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Ptx => "ptx",
            ModelKind::OpenClRc11 => "opencl-rc11",
            ModelKind::OpenClC11 => "opencl-c11",
        }
    }
    pub fn parse(s: &str) -> Option<ModelKind> {
        ModelKind::ALL.into_iter().find(|m| m.name() == s)
    }
    /// The dialect whose tests the model decides.
    pub fn dialect(self) -> Dialect {
        match self {
            ModelKind::Ptx => Dialect::Ptx,
            ModelKind::OpenClRc11 | ModelKind::OpenClC11 => Dialect::OpenCl,
        }
    }
    /// Whether a race makes the program's behaviour undefined (C11, OpenCL 2.0 §3.3.6), or
    /// racy executions are executions like others (PTX ISA, "Data races": weak accesses still
    /// read from some write; the race is reported beside the verdict).
    pub fn undefined_on_race(self) -> bool {
        self != ModelKind::Ptx
    }
    /// The model used for `test`: `chosen` when given (it must decide the test's dialect), else
    /// the dialect's default.
    pub fn for_test(chosen: Option<ModelKind>, test: &LitmusTest) -> Result<ModelKind, ModelError> {
        match chosen {
            None => Ok(ModelKind::of(test.dialect)),
            Some(m) if m.dialect() == test.dialect => Ok(m),
            Some(m) => Err(ModelError::Dialect {
                file: test.file.clone(),
                model: m.name(),
                allowed: ModelKind::ALL
                    .into_iter()
                    .filter(|k| k.dialect() == test.dialect)
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct ModelOptions {
    /// How often a path may take a backward branch to one loop header (redundant spin iterations
    /// excepted).
    pub unroll: u32,
    /// Candidate executions after which the enumeration stops (the result then counts as bounded).
    pub max_candidates: u64,
    /// Orders the whole decision may enumerate (`exec::Budget`: coherence and Fence-SC orders and
    /// their combinations), so that it ends in bounded time whatever one candidate holds; spent,
    /// the result counts as bounded.
    pub max_orders: u64,
    /// The model to decide with (`None`: the dialect's default, [`ModelKind::of`]).
    pub model: Option<ModelKind>,
    /// For models under which a race is undefined behaviour: collect the states the axioms allow
    /// all the same (`--racy-states`); the verdict stays `Undef`.
    pub racy_states: bool,
    /// The most work the a-priori estimate (`estimate.rs`) may predict; above it the decision is
    /// "too large to decide" before any enumeration.
    pub max_estimate: f64,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            unroll: 4,
            max_candidates: 50_000_000,
            max_orders: 20_000_000,
            model: None,
            racy_states: false,
            max_estimate: estimate::MAX_ESTIMATE,
        }
    }
}

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("{file}:{}:{}: model: {what} not modelled", at.line, at.col)]
    NotModelled {
        file: String,
        at: SrcLoc,
        what: String,
    },
    #[error("{file}: model: cannot decide within its limits: {message}")]
    Limit { file: String, message: String },
    #[error("{file}: model: too large to decide (estimate {estimate}); the bound is {bound}")]
    TooLarge {
        file: String,
        estimate: String,
        bound: String,
    },
    #[error(
        "{file}: model: the {model} model does not decide this test's dialect (allowed: {allowed})"
    )]
    Dialect {
        file: String,
        model: &'static str,
        allowed: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RaceKind {
    /// Conflicting accesses, one plain, unordered by happens-before.
    Data,
    /// Conflicting atomics unordered by happens-before whose scopes do not include each other.
    Scope,
    /// Work-items of one work-group pass different numbers of barriers.
    BarrierDivergence,
    /// An access written with an order its kind does not have (`st.acquire`, `ld.release`):
    /// herd accepts it and marks the program undefined.
    IllegalOrder,
}

/// Why a test's behaviour is undefined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Race {
    pub kind: RaceKind,
    pub first: String,
    pub second: String,
}

impl fmt::Display for Race {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            RaceKind::Data => write!(f, "data race: {} / {}", self.first, self.second),
            RaceKind::Scope => write!(f, "scope race: {} / {}", self.first, self.second),
            RaceKind::BarrierDivergence => {
                write!(f, "barrier divergence: {} ({})", self.first, self.second)
            }
            RaceKind::IllegalOrder => write!(f, "illegal order: {} at {}", self.second, self.first),
        }
    }
}

/// What the model says about one test.
#[derive(Debug, Clone)]
pub struct Decision {
    pub model: ModelKind,
    /// Allowed final states (values of the condition's observed variables), sorted.
    pub allowed: Vec<Vec<i64>>,
    /// Why the behaviour is undefined: a race in some consistent execution under an OpenCL model,
    /// or an access herd marks undefined (`st.acquire`).
    pub race: Option<Race>,
    /// A race in some consistent execution under a model that gives racy programs a semantics
    /// (PTX): reported beside the verdict, which stands.
    pub reported_race: Option<Race>,
    /// `allowed` holds the states of racy executions too, though the behaviour is undefined
    /// (`--racy-states`).
    pub racy_states: bool,
    /// Candidate executions checked.
    pub executions: u64,
    /// The a-priori estimate of the candidate executions (`estimate.rs`: herd's count, one write
    /// per read times every coherence order, over each thread's longest path).
    pub estimate: f64,
    /// The unrolling bound cut a path, or the candidate limit stopped the enumeration: `allowed`
    /// holds only states of executions within the bound.
    pub bound_hit: bool,
    /// Some execution may deadlock at a barrier (it has no final state; over-approximated).
    pub deadlock: bool,
}

/// How one final state stands under the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    Allowed,
    Forbidden,
    /// Not among the states within the bound, but the bound was hit.
    Unknown,
    /// The test races: any state may appear.
    Undefined,
}

impl Decision {
    /// Whether a race makes the test's behaviour undefined under the model (herd's `Undef`).
    pub fn undefined(&self) -> bool {
        self.race.is_some()
    }

    /// herd's result word: `Ok`, `No`, `Undef`, or `None` when undecided.
    pub fn result_word(&self, cond: &Condition) -> Option<&'static str> {
        if self.undefined() {
            return Some("Undef");
        }
        self.verdict(cond).map(|v| if v { "Ok" } else { "No" })
    }

    pub fn allows(&self, state: &[i64]) -> bool {
        self.allowed
            .binary_search_by(|s| s.as_slice().cmp(state))
            .is_ok()
    }

    pub fn judge(&self, state: &[i64]) -> Judgement {
        if self.undefined() {
            Judgement::Undefined
        } else if self.allows(state) {
            Judgement::Allowed
        } else if self.bound_hit {
            Judgement::Unknown
        } else {
            Judgement::Forbidden
        }
    }

    /// How the model stands on an execution the watchdog stopped while a thread still ran (a loop
    /// that did not end): it decides finite executions only, so unknown when some thread has a
    /// loop (`has_loop`), forbidden when none has (straight-line code always ends).
    pub fn judge_stopped(&self, has_loop: bool) -> Judgement {
        if self.undefined() {
            Judgement::Undefined
        } else if has_loop {
            Judgement::Unknown
        } else {
            Judgement::Forbidden
        }
    }

    /// How the model stands on executions without a final state because a barrier never
    /// completed.
    pub fn judge_no_final_state(&self) -> Judgement {
        if self.undefined() {
            Judgement::Undefined
        } else if self.deadlock {
            Judgement::Allowed
        } else if self.bound_hit {
            Judgement::Unknown
        } else {
            Judgement::Forbidden
        }
    }

    /// Whether some allowed state is a witness of the condition (`None`: racy, or none found
    /// within a bound that was hit).
    pub fn witness_allowed(&self, cond: &Condition) -> Option<bool> {
        if self.undefined() {
            return None;
        }
        if self.allowed.iter().any(|s| cond.witness(s)) {
            Some(true)
        } else if self.bound_hit {
            None
        } else {
            Some(false)
        }
    }

    /// herd's verdict: does the condition hold under the model (`Ok`)? `None` when undecided.
    pub fn verdict(&self, cond: &Condition) -> Option<bool> {
        let w = self.witness_allowed(cond)?;
        Some(match cond.quantifier {
            Quantifier::Exists => w,
            Quantifier::NotExists | Quantifier::Forall => !w,
        })
    }

    /// Whether a declared expectation agrees with the model (`None`: undecided). A racy test's
    /// behaviour is undefined, so every state may appear: only `allowed` agrees.
    pub fn agrees(&self, cond: &Condition, expect: Expect) -> Option<bool> {
        if self.undefined() {
            return Some(expect == Expect::Allowed);
        }
        let w = self.witness_allowed(cond)?;
        Some(w == (expect == Expect::Allowed))
    }
}

/// Decides `test` under its dialect's model.
pub fn decide(test: &LitmusTest, opts: &ModelOptions) -> Result<Decision, ModelError> {
    let model = ModelKind::for_test(opts.model, test)?;
    let interp = interp::InterpOptions {
        unroll: opts.unroll,
        // A redundant spin iteration is kept where races are looked for in it (OpenCL: a race
        // inside a failing iteration is a race).
        keep_redundant: match model {
            ModelKind::Ptx => 0,
            ModelKind::OpenClRc11 | ModelKind::OpenClC11 => 1,
        },
        thin_air: model == ModelKind::OpenClC11,
    };
    check_pending(test)?;
    check_barriers(test)?;
    estimate::before_paths(test)?;
    let traces = interp::traces(test, interp)?;
    let estimate = estimate::before_executions(test, &traces.per_thread, opts)?;
    let place = interp::placements(test);
    let budget = exec::Budget::new(opts.max_orders);
    let stop_at_race = model.undefined_on_race() && !opts.racy_states;
    let run = |per_thread: &[Vec<interp::Trace>], first_only| match model {
        ModelKind::Ptx => exec::enumerate(
            test,
            per_thread,
            &place,
            &ptx::Ptx,
            opts.max_candidates,
            &budget,
            first_only,
            stop_at_race,
        ),
        ModelKind::OpenClRc11 | ModelKind::OpenClC11 => exec::enumerate(
            test,
            per_thread,
            &place,
            &opencl::OpenCl {
                c11: model == ModelKind::OpenClC11,
            },
            opts.max_candidates,
            &budget,
            first_only,
            stop_at_race,
        ),
    };
    let c = run(&traces.per_thread, false)?;
    // The bound matters only when a cut path can be part of a consistent execution: its prefix
    // with the other threads' complete or cut paths (consistency is closed under program-order
    // prefixes, so a prefix that is inconsistent with all of them is no execution's).
    let mut bound_hit = c.limit_hit;
    let deadlock = c.deadlock;
    let mut executions = c.candidates;
    for t in 0..traces.cut.len() {
        if bound_hit || traces.cut[t].is_empty() {
            continue;
        }
        let mix: Vec<Vec<interp::Trace>> = (0..traces.cut.len())
            .map(|u| {
                if u == t {
                    traces.cut[u].clone()
                } else {
                    traces.per_thread[u]
                        .iter()
                        .chain(&traces.cut[u])
                        .cloned()
                        .collect()
                }
            })
            .collect();
        let p = run(&mix, true)?;
        executions += p.candidates;
        bound_hit = p.consistent || p.limit_hit;
    }
    // herd's undefined accesses make the whole program undefined, whatever the model.
    let illegal = test.threads.iter().find_map(|t| {
        t.undefined.first().map(|(at, what)| Race {
            kind: RaceKind::IllegalOrder,
            first: format!("{}:{}:{} ({})", test.file, at.line, at.col, t.name),
            second: what.clone(),
        })
    });
    let (race, reported_race) = if model.undefined_on_race() {
        (illegal.or(c.race), None)
    } else {
        (illegal, c.race)
    };
    Ok(Decision {
        model,
        // herd's `filter`: executions whose final state fails it are discarded (`cond.rs`).
        allowed: c
            .states
            .into_iter()
            .filter(|st| test.condition.kept(st))
            .collect(),
        race,
        reported_race,
        racy_states: opts.racy_states,
        estimate,
        executions,
        bound_hit,
        deadlock,
    })
}

/// Constructs the parser accepted without an IR instruction (`Thread::pending`): "not modelled",
/// naming the first, since the threads' instructions are not the test's program.
fn check_pending(test: &LitmusTest) -> Result<(), ModelError> {
    let first = test.pending.first();
    match first.or_else(|| test.threads.iter().find_map(|t| t.pending.first())) {
        Some(p) => Err(ModelError::NotModelled {
            file: test.file.clone(),
            at: p.at,
            what: format!("{} ({})", p.capability.name(), p.detail),
        }),
        None => Ok(()),
    }
}

/// PTX barriers whose generations do not depend on timing (`Exec::barrier_sync`), else "not
/// modelled" naming the barrier: per work-group and id, one thread count (or none) for every use;
/// with a count `b`, at most `b` threads using the barrier (more would race for its places);
/// a thread that arrives with `bar.arrive` uses that barrier no other time (a thread that does not
/// wait could join two generations).
fn check_barriers(test: &LitmusTest) -> Result<(), ModelError> {
    use crate::ir::{BarrierKind, Inst};
    let not = |at: SrcLoc, what: String| ModelError::NotModelled {
        file: test.file.clone(),
        at,
        what,
    };
    // (device, cta, id) → (thread count, first use, threads using it).
    type Use = ((u32, u32, u8), Option<u32>, SrcLoc, Vec<usize>);
    let mut seen: Vec<Use> = Vec::new();
    for (ti, t) in test.threads.iter().enumerate() {
        let mut uses: Vec<(u8, bool)> = Vec::new();
        for (i, inst) in t.insts.iter().enumerate() {
            let Inst::Barrier { kind, .. } = inst else {
                continue;
            };
            if !kind.is_work_group() {
                continue;
            }
            let (id, threads) = match kind {
                BarrierKind::Named(b) => (b.id, b.threads),
                _ => (0, None),
            };
            let at = t.locs[i];
            let key = (t.device, t.cta, id);
            match seen.iter_mut().find(|s| s.0 == key) {
                Some(s) => {
                    if s.1 != threads {
                        return Err(not(
                            at,
                            format!(
                                "barrier {id} used with different thread counts ({} at {}:{})",
                                s.1.map_or("all".to_string(), |n| n.to_string()),
                                s.2.line,
                                s.2.col
                            ),
                        ));
                    }
                    if !s.3.contains(&ti) {
                        s.3.push(ti);
                    }
                }
                None => seen.push((key, threads, at, vec![ti])),
            }
            uses.push((id, !kind.waits()));
        }
        for &(id, arrive) in &uses {
            if arrive && uses.iter().filter(|u| u.0 == id).count() > 1 {
                let at = t
                    .insts
                    .iter()
                    .position(|i| matches!(i, Inst::Barrier { kind, .. } if kind.id() == id && !kind.waits()))
                    .map(|i| t.locs[i])
                    .unwrap_or(t.loc);
                return Err(not(
                    at,
                    format!(
                        "bar.arrive on barrier {id} by a thread that uses it again ({}): which \
                         generation each arrival joins depends on timing",
                        t.name
                    ),
                ));
            }
        }
    }
    for ((_, _, id), threads, at, users) in &seen {
        if let Some(n) = threads {
            let places = *n as usize;
            if users.len() > places {
                return Err(not(
                    *at,
                    format!(
                        "barrier {id} with a count of {places} litmus threads used by {} threads: \
                         which of them complete a generation depends on timing",
                        users.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}
