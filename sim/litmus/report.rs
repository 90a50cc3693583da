//! Printing results: the human report and the JSON objects of `--json` (schema in the README,
//! "Litmus tests").

use super::run::{CheckStatus, LitmusResult};
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
    /// `unchecked`, `pass`, `forbidden_observed` or `required_missing`.
    pub check: CheckStatus,
    pub outcomes: Vec<JsonOutcome>,
    pub races: Vec<RaceReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JsonOutcome {
    pub state: String,
    pub count: u64,
}

pub fn json_report(r: &LitmusResult, config: &str, seed: u64) -> JsonTest {
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
        outcomes: r
            .outcomes
            .iter()
            .map(|o| JsonOutcome {
                state: r.state_string(&o.values),
                count: o.count,
            })
            .collect(),
        races: r.races.clone(),
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
        "States {} (* = witness of the condition)",
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
        let _ = writeln!(
            s,
            " {mark} {:>width$}  {}",
            o.count,
            r.state_string(&o.values)
        );
    }
    let _ = writeln!(
        s,
        "Condition {}: the proposition held in {} of {} iterations",
        r.condition, r.prop_true, r.iterations
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
    };
    let _ = writeln!(
        s,
        "Verdict: {verdict} ({} witnesses); {expect}",
        r.witnesses
    );
    for race in &r.races {
        let _ = writeln!(s, "{race}");
    }
    s
}

/// The closing line of a run over several tests, and whether `--check` fails.
pub fn summary(results: &[LitmusResult]) -> (String, bool) {
    let count = |s: CheckStatus| results.iter().filter(|r| r.check() == s).count();
    let (pass, forb, miss, un) = (
        count(CheckStatus::Pass),
        count(CheckStatus::ForbiddenObserved),
        count(CheckStatus::RequiredMissing),
        count(CheckStatus::Unchecked),
    );
    let mut s = format!(
        "{} tests: {pass} as expected, {forb} with a forbidden witness observed, {miss} with a required witness missing, {un} without expectation",
        results.len()
    );
    for r in results {
        match r.check() {
            CheckStatus::ForbiddenObserved => {
                let _ = write!(s, "\n  FORBIDDEN OBSERVED: {} ({})", r.name, r.file);
            }
            CheckStatus::RequiredMissing => {
                let _ = write!(s, "\n  REQUIRED MISSING:   {} ({})", r.name, r.file);
            }
            _ => {}
        }
    }
    (s, forb + miss > 0)
}
