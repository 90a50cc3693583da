//! Running a litmus test: iterations grouped into launches of many instances, launches spread over
//! cores with rayon, outcomes counted per final state.
//!
//! Determinism: launch `i` draws everything (placement choices and the machine's seed) from
//! `SplitMix64::stream(seed, i)`, and the per-launch results are merged in launch order, so the
//! counts are identical whether launches run in parallel or one after another.
//!
//! Every run checks itself against the oracle (`model/`): the test's allowed final states are
//! computed once per run, each observed state is judged allowed or forbidden, and a forbidden state
//! observed is a soundness failure (with the launch it first appeared in, so that `--seed` replays
//! it). The test's `expect:` line is checked against the model too.
//!
//! An iteration in which some thread never finishes has no final state: it is counted apart
//! (`no_final_state`), is no witness, and is checked against the model like a state. Either every
//! live thread of the launch waits at a barrier that can never complete (a deadlock: the model says
//! whether some execution may deadlock), or the watchdog stopped the launch with threads still
//! running (`no_final_state_stopped`: a loop that did not end, such as a spin loop whose awaited
//! value never comes). The model, like herd's, decides final states of finite executions only, so
//! it cannot say whether a loop may run for ever: a stopped iteration of a test with a loop is
//! judged unknown; one of a test without a loop (straight-line code always ends) is unsound.

use super::cond::{Quantifier, Var};
use super::kernel_builder::final_state;
use super::lower::{reg_bases, workload, Layout, Plan};
use super::model::{self, Decision, Judgement, ModelOptions};
use super::test::{Expect, Expectation, LitmusTest};
use super::LitmusError;
use crate::config::GpuConfig;
use crate::machine::timeline::{Timeline, TimelineOptions};
use crate::machine::{self, RaceReport, RunOptions};
use crate::rng::SplitMix64;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct LitmusOptions {
    pub iterations: u64,
    pub seed: u64,
    /// Detect data races and scope races.
    pub races: bool,
    /// Instances per launch; `None`: as many as the GPU holds at once (at most 16 warps' worth).
    pub instances: Option<u32>,
    /// Spread launches over cores (results do not depend on it).
    pub parallel: bool,
}

impl Default for LitmusOptions {
    fn default() -> Self {
        LitmusOptions {
            iterations: 10_000,
            seed: 1,
            races: false,
            instances: None,
            parallel: true,
        }
    }
}

/// One distinct final state and how often it was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Values of [`LitmusResult::vars`].
    pub values: Vec<i64>,
    pub count: u64,
    /// Whether the condition's proposition holds in this state.
    pub prop: bool,
    /// Whether this state is a witness (see `cond.rs`).
    pub witness: bool,
    /// The first launch it appeared in (launch `i` of seed `s` replays it).
    pub first_launch: u64,
    /// What the model says about the state; `None` when the test could not be modelled.
    pub judgement: Option<Judgement>,
}

/// How a result stands against its expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// The test declares no expectation (and the model found nothing wrong).
    Unchecked,
    Pass,
    /// A state the model forbids was observed: the simulator is unsound.
    Unsound,
    /// The declared expectation contradicts the model.
    ExpectationWrong,
    /// A forbidden witness was observed.
    ForbiddenObserved,
    /// A required allowed witness never appeared.
    RequiredMissing,
}

#[derive(Debug, Clone)]
pub struct LitmusResult {
    pub name: String,
    pub file: String,
    pub iterations: u64,
    pub launches: u64,
    pub quantifier: Quantifier,
    pub condition: String,
    /// Names of the observed variables (`P1:r0`, `x`).
    pub vars: Vec<String>,
    /// Sorted by state.
    pub outcomes: Vec<Outcome>,
    /// Iterations in which the proposition held.
    pub prop_true: u64,
    /// Iterations whose state was a witness.
    pub witnesses: u64,
    /// Iterations without a final state: some thread never finished (a barrier never completed,
    /// or a loop never ended). They are no state, no witness, and not counted in `prop_true`.
    pub no_final_state: u64,
    /// Of `no_final_state`, those the watchdog stopped with a thread still running (a loop that
    /// did not end); the others deadlocked at barriers.
    pub no_final_state_stopped: u64,
    /// Whether some thread of the test has a backward branch (a loop), so that an execution may
    /// run for ever.
    pub has_loop: bool,
    /// The first launch an iteration without a final state appeared in.
    pub no_final_state_launch: u64,
    /// Iterations discarded by the test's `filter` clause (herd's semantics, `cond.rs`): no
    /// outcome, not counted in `iterations`' states nor in `prop_true`.
    pub filtered: u64,
    pub expectation: Option<Expectation>,
    pub races: Vec<RaceReport>,
    pub seed: u64,
    /// The oracle's decision, or why the test could not be modelled.
    pub model: Result<Decision, String>,
    /// Whether the declared expectation agrees with the model (`None`: no expectation, or the
    /// model could not decide).
    pub expectation_agrees: Option<bool>,
}

impl LitmusResult {
    /// herd's verdict: does the condition hold over the observed states?
    pub fn validated(&self) -> bool {
        match self.quantifier {
            Quantifier::Exists => self.prop_true > 0,
            Quantifier::NotExists => self.prop_true == 0,
            Quantifier::Forall => self.prop_true == self.finals(),
        }
    }

    /// Iterations that reached a final state.
    pub fn finals(&self) -> u64 {
        self.iterations - self.no_final_state
    }

    /// How the model stands on the iterations without a final state (`None`: there were none, or
    /// the test could not be modelled): deadlocks at barriers as the model judges them; iterations
    /// the watchdog stopped unknown when a thread has a loop (the model decides finite executions
    /// only), forbidden when none has (straight-line code always ends); the worse of the two when
    /// both occurred (forbidden, then unknown).
    pub fn no_final_state_judgement(&self) -> Option<Judgement> {
        if self.no_final_state == 0 {
            return None;
        }
        let d = self.model.as_ref().ok()?;
        let deadlocked =
            (self.no_final_state > self.no_final_state_stopped).then(|| d.judge_no_final_state());
        let stopped = (self.no_final_state_stopped > 0).then(|| d.judge_stopped(self.has_loop));
        let all = [deadlocked, stopped];
        for worst in [Judgement::Forbidden, Judgement::Unknown] {
            if all.contains(&Some(worst)) {
                return Some(worst);
            }
        }
        deadlocked.or(stopped)
    }

    /// Iterations without a final state where the model says every execution completes.
    pub fn unsound_no_final_state(&self) -> bool {
        self.no_final_state_judgement() == Some(Judgement::Forbidden)
    }

    /// The worst of: a state the model forbids observed, an expectation the model contradicts, a
    /// forbidden witness (by the expectation) observed, a required witness missing.
    pub fn check(&self) -> CheckStatus {
        if !self.forbidden_observed().is_empty() || self.unsound_no_final_state() {
            return CheckStatus::Unsound;
        }
        if self.expectation_agrees == Some(false) {
            return CheckStatus::ExpectationWrong;
        }
        match self.expectation {
            None => CheckStatus::Unchecked,
            Some(e) if e.expect == Expect::Forbidden && self.witnesses > 0 => {
                CheckStatus::ForbiddenObserved
            }
            Some(e) if e.required && self.witnesses == 0 => CheckStatus::RequiredMissing,
            Some(_) => CheckStatus::Pass,
        }
    }

    /// Observed states the model forbids.
    pub fn forbidden_observed(&self) -> Vec<&Outcome> {
        self.outcomes
            .iter()
            .filter(|o| o.judgement == Some(Judgement::Forbidden))
            .collect()
    }

    /// Allowed states observed and allowed states, when the model decided the test (no race, no
    /// bound hit).
    pub fn allowed_seen(&self) -> Option<(usize, usize)> {
        let d = self.model.as_ref().ok()?;
        if d.undefined() || d.bound_hit {
            return None;
        }
        let seen = self
            .outcomes
            .iter()
            .filter(|o| o.judgement == Some(Judgement::Allowed))
            .count();
        Some((seen, d.allowed.len()))
    }

    /// `P1:r0=1; P1:r1=0; x=2;`
    pub fn state_string(&self, values: &[i64]) -> String {
        self.vars
            .iter()
            .zip(values)
            .map(|(n, v)| format!("{n}={v};"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Refuses, before any launch, a test the machine cannot run: constructs it lacks
/// (`capability.rs`), more registers than a kernel has.
pub(super) fn runnable(test: &LitmusTest) -> Result<(), LitmusError> {
    // Constructs the machine cannot run yet stop here, before any launch (`capability.rs`).
    super::capability::check_runnable(test)?;
    let regs: usize =
        test.locations.len() + test.threads.iter().map(|t| t.regs.len()).sum::<usize>();
    if regs > crate::ir::Reg::MAX as usize - 16 {
        return Err(LitmusError::TooLarge {
            file: test.file.clone(),
            message: format!(
                "the test needs {regs} registers; a kernel has at most {}",
                crate::ir::Reg::MAX - 16
            ),
        });
    }
    Ok(())
}

/// The first iteration (in launch order, then instance order) whose final state satisfies `want`:
/// (launch, instance, state). Launches run in parallel in groups as large as the thread pool; the
/// answer does not depend on it.
pub(super) fn find_first(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
    progress: &dyn crate::progress::Report,
    want: &(dyn Fn(&[i64]) -> bool + Sync),
) -> Result<Option<(u64, u64, Vec<i64>)>, LitmusError> {
    runnable(test)?;
    let sched = Schedule::new(test, cfg, opts);
    let step = if opts.parallel {
        rayon::current_num_threads().max(1) as u64
    } else {
        1
    };
    let one = |i: u64| -> Result<Option<(u64, Vec<i64>)>, LitmusError> {
        let (b, count) = sched.launch(i, opts.iterations);
        let (_, _, states) = run_launch(test, &sched.lay, cfg, i, b, count, opts, false, None)?;
        Ok(states
            .into_iter()
            .enumerate()
            .find_map(|(k, st)| st.filter(|s| want(s)).map(|s| (k as u64, s))))
    };
    let mut first = 0;
    while first < sched.launches {
        let end = sched.launches.min(first + step);
        let outs: Vec<_> = if opts.parallel {
            (first..end).into_par_iter().map(one).collect()
        } else {
            (first..end).map(one).collect()
        };
        for (i, o) in (first..end).zip(outs) {
            if let Some((k, st)) = o? {
                return Ok(Some((i, k, st)));
            }
        }
        progress.update(
            (end * sched.per_launch).min(opts.iterations),
            opts.iterations,
        );
        first = end;
    }
    Ok(None)
}

/// How a run's iterations split into launches.
pub(super) struct Schedule {
    pub lay: Layout,
    /// Instances of a full launch.
    pub per_launch: u64,
    pub launches: u64,
}

impl Schedule {
    pub fn new(test: &LitmusTest, cfg: &GpuConfig, opts: &LitmusOptions) -> Schedule {
        let lay = Layout::new(test, cfg);
        let ws = lay.ws as u64;
        let want_blocks = opts
            .instances
            .map(|n| (n as u64).div_ceil(ws).max(1) as u32)
            .unwrap_or(lay.max_blocks);
        let blocks = want_blocks.min(lay.max_blocks).max(1);
        let per_launch = blocks as u64 * ws;
        Schedule {
            launches: opts.iterations.div_ceil(per_launch),
            lay,
            per_launch,
        }
    }

    /// Work-groups and instances of launch `i`.
    pub fn launch(&self, i: u64, iterations: u64) -> (u32, u64) {
        let count = self.per_launch.min(iterations - i * self.per_launch);
        (count.div_ceil(self.lay.ws as u64) as u32, count)
    }
}

/// Launches run (in parallel) before their outputs are merged.
const LAUNCH_CHUNK: u64 = 4096;

struct LaunchOut {
    counts: HashMap<Vec<i64>, u64>,
    /// Instances with a thread that never finished.
    stuck: u64,
    /// Whether the watchdog stopped the launch with threads still running (else they waited at
    /// barriers).
    stopped: bool,
    races: Vec<RaceReport>,
}

/// The timeline (`--timeline`) of the launch of [`run`] that runs iteration `iteration`: that launch
/// again, with the same seed and placement, so its results are the ones `run` counted. A launch runs
/// many instances side by side; the timeline shows all of them. Returns the timeline and the range of
/// iterations the launch ran.
pub fn timeline(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
    iteration: u64,
    topts: &TimelineOptions,
) -> Result<(Timeline, std::ops::Range<u64>), LitmusError> {
    runnable(test)?;
    if iteration >= opts.iterations {
        return Err(LitmusError::TooLarge {
            file: test.file.clone(),
            message: format!(
                "--timeline-iteration {iteration}: the run has {} iterations (0 to {})",
                opts.iterations,
                opts.iterations.saturating_sub(1)
            ),
        });
    }
    let sched = Schedule::new(test, cfg, opts);
    let per = sched.per_launch;
    let i = iteration / per;
    let (b, count) = sched.launch(i, opts.iterations);
    let (_, res, _) = run_launch(test, &sched.lay, cfg, i, b, count, opts, false, Some(topts))?;
    let t = res
        .timeline
        .expect("a launch asked for its timeline records one");
    Ok((t, i * per..i * per + count))
}

/// Runs `test` for `opts.iterations` iterations on `cfg`, checked against the model with its
/// default bound.
pub fn run(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
) -> Result<LitmusResult, LitmusError> {
    run_with_model(
        test,
        cfg,
        opts,
        &ModelOptions::default(),
        &crate::progress::Progress::hidden(),
    )
}

/// [`run`], telling `progress` how many of the iterations are done as launches finish.
pub fn run_reporting(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
    progress: &dyn crate::progress::Report,
) -> Result<LitmusResult, LitmusError> {
    run_with_model(test, cfg, opts, &ModelOptions::default(), progress)
}

/// [`run_reporting`] with the model's options given.
pub fn run_with_model(
    test: &LitmusTest,
    cfg: &GpuConfig,
    opts: &LitmusOptions,
    model_opts: &ModelOptions,
    progress: &dyn crate::progress::Report,
) -> Result<LitmusResult, LitmusError> {
    runnable(test)?;
    let sched = Schedule::new(test, cfg, opts);
    let (lay, launches) = (&sched.lay, sched.launches);
    let done = std::sync::atomic::AtomicU64::new(0);
    let one = |i: u64| -> Result<LaunchOut, LitmusError> {
        let (b, count) = sched.launch(i, opts.iterations);
        let out = launch(test, lay, cfg, i, b, count, opts);
        let d = done.fetch_add(count, std::sync::atomic::Ordering::Relaxed) + count;
        progress.update(d, opts.iterations);
        out
    };
    // Launches merge in order, so the first launch a state appears in is well defined.
    let mut counts: HashMap<Vec<i64>, (u64, u64)> = HashMap::new();
    let mut races: Vec<RaceReport> = Vec::new();
    let (mut no_final_state, mut no_final_state_stopped, mut no_final_state_launch) =
        (0u64, 0, None);
    // Launches in chunks, each merged in launch order before the next starts: the same counts as
    // one pass over all launches, with memory bounded by a chunk whatever `iterations` asks for
    // (10^18 iterations collected every launch's output at once and aborted).
    let mut filtered = 0;
    let mut first = 0;
    while first < launches {
        let end = launches.min(first + LAUNCH_CHUNK);
        let outs: Vec<Result<LaunchOut, LitmusError>> = if opts.parallel {
            (first..end).into_par_iter().map(one).collect()
        } else {
            (first..end).map(one).collect()
        };
        for (k, o) in outs.into_iter().enumerate() {
            let o = o?;
            let launch = first + k as u64;
            if o.stuck > 0 {
                no_final_state += o.stuck;
                if o.stopped {
                    no_final_state_stopped += o.stuck;
                }
                no_final_state_launch.get_or_insert(launch);
            }
            for (s, n) in o.counts {
                if !test.condition.kept(&s) {
                    filtered += n;
                    continue;
                }
                counts.entry(s).or_insert((0, launch)).0 += n;
            }
            for r in o.races {
                if !races.iter().any(|x| x.same_pair(&r)) {
                    races.push(r);
                }
            }
        }
        first = end;
    }
    let cond = &test.condition;
    let decision = model::decide(test, model_opts).map_err(|e| e.to_string());
    let mut outcomes: Vec<Outcome> = counts
        .into_iter()
        .map(|(values, (count, first_launch))| Outcome {
            prop: cond.prop.eval(&values),
            witness: cond.witness(&values),
            judgement: decision.as_ref().ok().map(|d| d.judge(&values)),
            values,
            count,
            first_launch,
        })
        .collect();
    outcomes.sort_by(|a, b| a.values.cmp(&b.values));
    let prop_true = outcomes.iter().filter(|o| o.prop).map(|o| o.count).sum();
    let witnesses = outcomes.iter().filter(|o| o.witness).map(|o| o.count).sum();
    let vars = (0..cond.observed.len())
        .map(|i| cond.var_name(i, &test.threads, &test.locations))
        .collect();
    Ok(LitmusResult {
        name: test.name.clone(),
        file: test.file.clone(),
        iterations: opts.iterations,
        launches,
        quantifier: cond.quantifier,
        condition: cond.text.clone(),
        vars,
        outcomes,
        prop_true,
        witnesses,
        no_final_state,
        no_final_state_stopped,
        has_loop: test.threads.iter().any(|t| t.has_loop()),
        no_final_state_launch: no_final_state_launch.unwrap_or(0),
        filtered,
        expectation: test.expectation,
        races,
        seed: opts.seed,
        expectation_agrees: test
            .expectation
            .and_then(|e| decision.as_ref().ok()?.agrees(cond, e.expect)),
        model: decision,
    })
}

fn launch(
    test: &LitmusTest,
    lay: &Layout,
    cfg: &GpuConfig,
    index: u64,
    blocks: u32,
    count: u64,
    opts: &LitmusOptions,
) -> Result<LaunchOut, LitmusError> {
    let (_, res, states) = run_launch(test, lay, cfg, index, blocks, count, opts, false, None)?;
    let mut counts: HashMap<Vec<i64>, u64> = HashMap::new();
    let mut stuck = 0;
    for state in states {
        match state {
            Some(s) => *counts.entry(s).or_default() += 1,
            None => stuck += 1,
        }
    }
    let races = res
        .races
        .into_iter()
        .map(|r| name_threads(r, test, lay))
        .collect();
    Ok(LaunchOut {
        counts,
        stuck,
        stopped: res.unfinished_why == Some(machine::Unfinished::Stopped),
        races,
    })
}

/// A launch's plan, the machine's result and each instance's final state (see [`run_launch`]).
pub(super) type Launched = (Plan, machine::RunResult, Vec<Option<Vec<i64>>>);

/// Runs launch `index` (`blocks` work-groups, `count` instances): its plan, the machine's result
/// (with access provenance when `provenance`, a timeline when `timeline`) and each instance's final
/// state (`None`: a thread of the instance never finished, so it has no final state).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_launch(
    test: &LitmusTest,
    lay: &Layout,
    cfg: &GpuConfig,
    index: u64,
    blocks: u32,
    count: u64,
    opts: &LitmusOptions,
    provenance: bool,
    timeline: Option<&TimelineOptions>,
) -> Result<Launched, LitmusError> {
    let mut stream = SplitMix64::stream(opts.seed, index);
    let seed = stream.next_u64();
    let plan = Plan::new(
        test,
        lay,
        cfg,
        blocks,
        cfg.stress.randomise_placement.then_some(&mut stream),
    );
    let wl = workload(test, lay, &plan);
    let bases = reg_bases(test);
    let observed = &test.condition.observed;
    let mut capture = Vec::new();
    for k in 0..count {
        for v in observed {
            if let Var::Reg { thread, reg } = *v {
                capture.push((plan.thread_id(lay, thread, k), bases[thread] + reg));
            }
        }
    }
    let res = machine::run(
        cfg,
        &wl,
        &RunOptions {
            seed,
            races: opts.races,
            group_sm: Some(plan.group_sm.clone()),
            capture,
            skip_checks: true,
            provenance,
            timeline: timeline.cloned(),
            stuck_ok: true,
            ..Default::default()
        },
    )
    .map_err(|source| LitmusError::Run {
        test: test.name.clone(),
        file: test.file.clone(),
        launch: index,
        seed: opts.seed,
        source: Box::new(source),
    })?;
    let nregs = observed
        .iter()
        .filter(|v| matches!(v, Var::Reg { .. }))
        .count();
    let states = (0..count)
        .map(|k| {
            // An instance with a thread that never finished has no final state.
            if !res.unfinished.is_empty()
                && (0..test.threads.len()).any(|i| {
                    res.unfinished
                        .binary_search(&plan.thread_id(lay, i, k))
                        .is_ok()
                })
            {
                return None;
            }
            let regs = &res.captured[k as usize * nregs..];
            Some(final_state(
                test,
                |n, _, _| regs[n],
                |l, index| res.buffers[l][plan.elem(lay, l, k, index) as usize],
            ))
        })
        .collect();
    Ok((plan, res, states))
}

/// Rewrites a race report's machine threads as the test's thread names.
fn name_threads(mut r: RaceReport, test: &LitmusTest, lay: &Layout) -> RaceReport {
    let gsize = lay.warps as u64 * lay.ws as u64;
    let name = |tid: u64| -> Option<String> {
        let group = tid / gsize;
        let warp = ((tid % gsize) / lay.ws as u64) as u32;
        let ci = (group % lay.num_ctas() as u64) as usize;
        (0..test.threads.len())
            .find(|&i| lay.thread_cta[i] == ci && lay.thread_warp[i] == warp)
            .map(|i| test.threads[i].name.clone())
    };
    for a in [&mut r.first, &mut r.second] {
        a.name = name(a.thread);
    }
    r
}
