//! Printing results: the human report and the JSON objects of `--json` (schema in the README,
//! "Litmus tests").

use super::model::Judgement;
use super::run::{CheckStatus, LitmusResult, Outcome};
use crate::machine::RaceReport;
use serde::Serialize;
use std::fmt::Write as _;

/// One test in the `--json` array.
#[derive(Debug, Clone, Serialize)]
pub struct JsonTest {
    pub name: String,
    pub file: String,
    pub config: String,
    pub seed: u64,
    pub iterations: u64,
    /// `exists`, `not_exists` or `forall`.
    pub quantifier: &'static str,
    pub condition: String,
    /// Iterations in which the proposition held.
    pub prop_true: u64,
    /// Iterations whose final state was a witness (proposition true for exists/~exists, false for
    /// forall).
    pub witnesses: u64,
    /// herd's verdict: the condition holds over the observed states.
    pub validated: bool,
    /// `allowed`, `allowed, required`, `forbidden`, or null.
    pub expectation: Option<String>,
    /// `unchecked`, `pass`, `unsound`, `expectation_wrong`, `forbidden_observed` or
    /// `required_missing`.
    pub check: CheckStatus,
    pub outcomes: Vec<JsonOutcome>,
    pub races: Vec<RaceReport>,
    /// `decided`, `bound_hit`, `racy` or `not_modelled`.
    pub model_status: &'static str,
    /// The race (racy) or the reason (not modelled); null otherwise.
    pub model_note: Option<String>,
    /// The states the model allows; null when racy or not modelled.
    pub model_allowed: Option<Vec<String>>,
    /// Observed states the model forbids, with their counts (must be empty).
    pub forbidden_observed: Vec<JsonOutcome>,
    /// How many of the allowed states were observed (null unless decided).
    pub allowed_seen: Option<usize>,
    /// Whether the expectation agrees with the model (null: nothing to compare).
    pub expectation_agrees: Option<bool>,
    /// Iterations without a final state (a barrier never completed, or a loop never ended); left
    /// out when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_final_state: Option<NoFinalState>,
    /// Iterations the test's `filter` clause discarded; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub filtered: u64,
}

/// The iterations of a test that reached no final state.
#[derive(Debug, Clone, Serialize)]
pub struct NoFinalState {
    pub count: u64,
    /// Of `count`, the iterations the watchdog stopped with a thread still running (a loop that
    /// did not end); the others deadlocked at barriers. Left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub stopped: u64,
    /// The first launch one appeared in.
    pub first_launch: u64,
    /// `allowed` (the model has executions that deadlock), `forbidden` (every execution
    /// completes: the simulator is unsound), `unknown` (the model's bound was hit, or a loop did
    /// not end: the model decides finite executions only), `undefined`, or null (not modelled).
    pub model: Option<Judgement>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct JsonOutcome {
    pub state: String,
    pub count: u64,
    /// The first launch the state appeared in.
    pub first_launch: u64,
    /// `allowed`, `forbidden`, `unknown` (bound hit), `undefined` (racy) or null (not modelled).
    pub model: Option<Judgement>,
}

/// How the model stands on a result: status and note.
fn model_status(r: &LitmusResult) -> (&'static str, Option<String>) {
    match &r.model {
        Err(e) => ("not_modelled", Some(e.clone())),
        Ok(d) if d.undefined() => ("racy", d.race.as_ref().map(|x| x.to_string())),
        Ok(d) if d.bound_hit => ("bound_hit", None),
        Ok(_) => ("decided", None),
    }
}

fn json_outcome(r: &LitmusResult, o: &Outcome) -> JsonOutcome {
    JsonOutcome {
        state: r.state_string(&o.values),
        count: o.count,
        first_launch: o.first_launch,
        model: o.judgement,
    }
}

pub fn json_report(r: &LitmusResult, config: &str, seed: u64) -> JsonTest {
    let (model_status, model_note) = model_status(r);
    JsonTest {
        name: r.name.clone(),
        file: r.file.clone(),
        config: config.to_string(),
        seed,
        iterations: r.iterations,
        quantifier: r.quantifier.name(),
        condition: r.condition.clone(),
        prop_true: r.prop_true,
        witnesses: r.witnesses,
        validated: r.validated(),
        expectation: r.expectation.map(|e| e.to_string()),
        check: r.check(),
        outcomes: r.outcomes.iter().map(|o| json_outcome(r, o)).collect(),
        races: r.races.clone(),
        model_status,
        model_note,
        model_allowed: r
            .model
            .as_ref()
            .ok()
            .filter(|d| !d.undefined())
            .map(|d| d.allowed.iter().map(|s| r.state_string(s)).collect()),
        forbidden_observed: r
            .forbidden_observed()
            .into_iter()
            .map(|o| json_outcome(r, o))
            .collect(),
        allowed_seen: r.allowed_seen().map(|(seen, _)| seen),
        expectation_agrees: r.expectation_agrees,
        no_final_state: (r.no_final_state > 0).then(|| NoFinalState {
            count: r.no_final_state,
            stopped: r.no_final_state_stopped,
            first_launch: r.no_final_state_launch,
            model: r.no_final_state_judgement(),
        }),
        filtered: r.filtered,
    }
}

/// The human report of one test.
pub fn text_report(r: &LitmusResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Test {} ({}): {} iterations in {} launches",
        r.name, r.file, r.iterations, r.launches
    );
    let _ = writeln!(
        s,
        "States {} (* = witness of the condition; states the model forbids are marked)",
        r.outcomes.len()
    );
    let width = r
        .outcomes
        .iter()
        .map(|o| o.count.to_string().len())
        .max()
        .unwrap_or(1);
    for o in &r.outcomes {
        let mark = if o.witness { '*' } else { ' ' };
        let judge = match o.judgement {
            Some(Judgement::Allowed) => "",
            Some(Judgement::Forbidden) => "  FORBIDDEN BY THE MODEL",
            Some(Judgement::Unknown) => "  (not within the model's bound)",
            Some(Judgement::Undefined) => "",
            None => "",
        };
        let _ = writeln!(
            s,
            " {mark} {:>width$}  {}{judge}",
            o.count,
            r.state_string(&o.values)
        );
    }
    if r.no_final_state > 0 {
        let judge = match r.no_final_state_judgement() {
            Some(Judgement::Forbidden) => "  FORBIDDEN BY THE MODEL (every execution completes)",
            Some(Judgement::Unknown) if r.no_final_state_stopped > 0 && r.has_loop => {
                "  (the model decides finite executions only)"
            }
            Some(Judgement::Unknown) => "  (not within the model's bound)",
            _ => "",
        };
        let why = match (
            r.no_final_state_stopped,
            r.no_final_state - r.no_final_state_stopped,
        ) {
            (0, _) => "a barrier never completed".to_string(),
            (_, 0) => "a loop never ended: the watchdog stopped it".to_string(),
            (l, b) => format!("{b}: a barrier never completed; {l}: a loop never ended"),
        };
        let _ = writeln!(
            s,
            "   {:>width$}  no final state (a thread never finished: {why}){judge}",
            r.no_final_state
        );
    }
    if r.filtered > 0 {
        let _ = writeln!(
            s,
            "Filter: {} of {} iterations discarded (their state fails the `filter` clause)",
            r.filtered, r.iterations
        );
    }
    let _ = writeln!(
        s,
        "Condition {}: the proposition held in {} of {} iterations",
        r.condition,
        r.prop_true,
        r.iterations - r.filtered
    );
    let verdict = if r.validated() { "Ok" } else { "No" };
    let expect = match (r.expectation, r.check()) {
        (None, _) => "no expectation declared".to_string(),
        (Some(e), CheckStatus::Pass) => format!("expected {e}: as expected"),
        (Some(e), CheckStatus::ForbiddenObserved) => {
            format!(
                "expected {e}: FORBIDDEN witness observed {} times",
                r.witnesses
            )
        }
        (Some(e), CheckStatus::RequiredMissing) => {
            format!("expected {e}: required witness NEVER observed")
        }
        (Some(e), CheckStatus::Unchecked) => format!("expected {e}"),
        (Some(e), CheckStatus::Unsound) => format!("expected {e}"),
        (Some(e), CheckStatus::ExpectationWrong) => {
            format!("expected {e}: CONTRADICTS the model")
        }
    };
    let _ = writeln!(
        s,
        "Verdict: {verdict} ({} witnesses); {expect}",
        r.witnesses
    );
    let _ = writeln!(s, "Model: {}", model_line(r));
    for race in &r.races {
        let _ = writeln!(s, "{race}");
    }
    s
}

/// The model's view of a result in one line.
pub fn model_line(r: &LitmusResult) -> String {
    match &r.model {
        Err(e) => format!("not checked ({e})"),
        Ok(d) if d.undefined() => format!(
            "{} model: undefined behaviour, not checked ({})",
            d.model.name(),
            d.race.as_ref().expect("racy")
        ),
        Ok(d) => {
            let bad = r.forbidden_observed();
            let seen = r
                .outcomes
                .iter()
                .filter(|o| o.judgement == Some(Judgement::Allowed))
                .count();
            let mut l = format!(
                "{} model allows {} states{}, {seen} seen",
                d.model.name(),
                d.allowed.len(),
                if d.bound_hit { " within its bound" } else { "" }
            );
            if d.deadlock {
                l += "; some executions deadlock (no final state)";
            }
            if bad.is_empty() {
                l += "; no forbidden state observed";
            } else {
                let n: u64 = bad.iter().map(|o| o.count).sum();
                let _ = write!(l, "; {} FORBIDDEN states observed ({n} times)", bad.len());
            }
            l
        }
    }
}

/// The closing lines of a run over several tests, and whether `--check` fails.
pub fn summary(results: &[LitmusResult]) -> (String, bool) {
    let count = |s: CheckStatus| results.iter().filter(|r| r.check() == s).count();
    let (pass, forb, miss, un) = (
        count(CheckStatus::Pass),
        count(CheckStatus::ForbiddenObserved),
        count(CheckStatus::RequiredMissing),
        count(CheckStatus::Unchecked),
    );
    let unsound: Vec<&LitmusResult> = results
        .iter()
        .filter(|r| !r.forbidden_observed().is_empty() || r.unsound_no_final_state())
        .collect();
    let wrong: Vec<&LitmusResult> = results
        .iter()
        .filter(|r| r.expectation_agrees == Some(false))
        .collect();
    let mut s = format!(
        "{} tests: {pass} as expected, {forb} with a forbidden witness observed, {miss} with a required witness missing, {un} without expectation",
        results.len()
    );
    let decided: Vec<(usize, usize)> = results.iter().filter_map(|r| r.allowed_seen()).collect();
    let (seen, allowed) = decided.iter().fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
    let status = |f: &dyn Fn(&LitmusResult) -> bool| results.iter().filter(|r| f(r)).count();
    let _ = write!(
        s,
        "\nmodel: {} tests forbidden-state free, {} unsound; allowed states seen {seen} of {allowed} ({:.1}%) over {} decided tests; {} racy, {} bound hit, {} not modelled; {} expectations contradict the model",
        results.len() - unsound.len(),
        unsound.len(),
        100.0 * seen as f64 / allowed.max(1) as f64,
        decided.len(),
        status(&|r| r.model.as_ref().is_ok_and(|d| d.undefined())),
        status(&|r| r.model.as_ref().is_ok_and(|d| !d.undefined() && d.bound_hit)),
        status(&|r| r.model.is_err()),
        wrong.len()
    );
    let stuck: Vec<&LitmusResult> = results.iter().filter(|r| r.no_final_state > 0).collect();
    if !stuck.is_empty() {
        let loops = stuck.iter().any(|r| r.no_final_state_stopped > 0);
        let barriers = stuck
            .iter()
            .any(|r| r.no_final_state > r.no_final_state_stopped);
        let why = match (barriers, loops) {
            (true, true) => "a barrier never completed, or a loop never ended",
            (false, true) => "a loop never ended",
            _ => "a barrier never completed",
        };
        let _ = write!(
            s,
            "\n{} tests had iterations without a final state ({why}): {}",
            stuck.len(),
            stuck
                .iter()
                .map(|r| format!("{} ({})", r.name, r.no_final_state))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for r in &unsound {
        if r.unsound_no_final_state() {
            let _ = write!(
                s,
                "\n  UNSOUND: {} ({}): {} iterations without a final state, but the model says every execution completes (no barrier deadlocks, no loop); first in launch {} of seed {}",
                r.name, r.file, r.no_final_state, r.no_final_state_launch, r.seed
            );
        }
        for o in r.forbidden_observed() {
            let _ = write!(
                s,
                "\n  UNSOUND: {} ({}): state {} forbidden by the model, observed {} times, first in launch {} of seed {}",
                r.name,
                r.file,
                r.state_string(&o.values),
                o.count,
                o.first_launch,
                r.seed
            );
        }
    }
    for r in &wrong {
        let e = r.expectation.expect("an expectation to contradict");
        let _ = write!(
            s,
            "\n  EXPECTATION WRONG: {} ({}): declares its witness {}, the model {}",
            r.name,
            r.file,
            e.expect.name(),
            if e.expect == super::test::Expect::Allowed {
                "forbids it"
            } else {
                "allows it"
            }
        );
    }
    for r in results {
        if r.expectation
            .is_some_and(|e| e.expect == super::test::Expect::Forbidden)
            && r.witnesses > 0
        {
            let _ = write!(s, "\n  FORBIDDEN OBSERVED: {} ({})", r.name, r.file);
        }
        if r.expectation.is_some_and(|e| e.required) && r.witnesses == 0 {
            let _ = write!(s, "\n  REQUIRED MISSING:   {} ({})", r.name, r.file);
        }
    }
    let failed = results
        .iter()
        .any(|r| r.check() != CheckStatus::Pass && r.check() != CheckStatus::Unchecked);
    (s, failed)
}
