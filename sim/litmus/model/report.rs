//! Printing the oracle's decisions: the text of `gpumemsim model` and its `--json` objects (schema
//! in the README, "The oracle").

use super::{Decision, ModelError, ModelKind};
use crate::test::LitmusTest;
use serde::Serialize;
use std::fmt::Write as _;

/// One test in `gpumemsim model --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ModelJson {
    pub name: String,
    pub file: String,
    /// The model that decided: `ptx`, `opencl-rc11` or `opencl-c11`.
    pub model: &'static str,
    /// Allowed final states (`P1:r0=1; P1:r1=0;`); null when the test could not be modelled.
    pub allowed: Option<Vec<String>>,
    /// herd's verdict under the model; null when undecided (bound hit), undefined or not modelled.
    pub verdict: Option<bool>,
    /// herd's result word: `Ok`, `No`, `Undef` (a race under an OpenCL model, or an access herd
    /// marks undefined); null when undecided or not modelled.
    pub result: Option<&'static str>,
    /// Candidate executions checked.
    pub executions: u64,
    /// The estimate of the candidate executions made before enumerating (`estimate.rs`).
    pub estimate: Option<f64>,
    /// Whether the unrolling bound (or the candidate limit) cut an execution.
    pub bound_hit: bool,
    /// A race of some consistent execution: it makes an OpenCL test's behaviour undefined; a PTX
    /// test's verdict stands beside it.
    pub race: Option<String>,
    /// Whether the race (or an illegal access) makes the behaviour undefined.
    pub undefined: bool,
    /// The test's declared expectation and whether the model agrees with it.
    pub expectation: Option<String>,
    pub expectation_agrees: Option<bool>,
    /// Why the test could not be modelled.
    pub error: Option<String>,
}

/// `P1:r0=1; P1:r1=0;` for a state of `test`'s observed variables.
pub fn state_string(test: &LitmusTest, values: &[i64]) -> String {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "{}={v};",
                test.condition.var_name(i, &test.threads, &test.locations)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn json_decision(test: &LitmusTest, d: &Result<Decision, ModelError>) -> ModelJson {
    let expectation = test.expectation.map(|e| e.to_string());
    match d {
        Ok(d) => ModelJson {
            name: test.name.clone(),
            file: test.file.clone(),
            model: d.model.name(),
            // Undefined behaviour has no states unless they were asked for.
            allowed: (!d.undefined() || d.racy_states)
                .then(|| d.allowed.iter().map(|s| state_string(test, s)).collect()),
            verdict: d.verdict(&test.condition),
            result: d.result_word(&test.condition),
            executions: d.executions,
            estimate: Some(d.estimate),
            bound_hit: d.bound_hit,
            race: d
                .race
                .as_ref()
                .or(d.reported_race.as_ref())
                .map(|r| r.to_string()),
            undefined: d.undefined(),
            expectation,
            expectation_agrees: test
                .expectation
                .and_then(|e| d.agrees(&test.condition, e.expect)),
            error: None,
        },
        Err(e) => ModelJson {
            name: test.name.clone(),
            file: test.file.clone(),
            model: ModelKind::of(test.dialect).name(),
            allowed: None,
            verdict: None,
            result: None,
            executions: 0,
            estimate: None,
            bound_hit: false,
            race: None,
            undefined: false,
            expectation,
            expectation_agrees: None,
            error: Some(e.to_string()),
        },
    }
}

/// The human report of one decision.
pub fn text_decision(test: &LitmusTest, d: &Result<Decision, ModelError>) -> String {
    let mut s = String::new();
    let d = match d {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(s, "Test {} ({}): {e}", test.name, test.file);
            return s;
        }
    };
    let _ = writeln!(
        s,
        "Test {} ({}): {} model{}, {} candidate executions{}",
        test.name,
        test.file,
        d.model.name(),
        if d.model == ModelKind::of(test.dialect) {
            " (the dialect's default)"
        } else {
            ""
        },
        d.executions,
        if d.bound_hit {
            ", BOUND HIT (states of executions within the bound only)"
        } else {
            ""
        }
    );
    if let Some(r) = &d.race {
        let _ = writeln!(s, "Undefined behaviour: {r}");
        if !d.racy_states {
            let _ = writeln!(
                s,
                "Condition {}: Undef (the states the axioms allow: --racy-states)",
                test.condition.text
            );
            return s;
        }
    }
    if let Some(r) = &d.reported_race {
        let _ = writeln!(
            s,
            "Race (the model gives racy executions a semantics; verdict below): {r}"
        );
    }
    let _ = writeln!(
        s,
        "States {} (* = witness of the condition)",
        d.allowed.len()
    );
    for st in &d.allowed {
        let mark = if test.condition.witness(st) { '*' } else { ' ' };
        let _ = writeln!(s, " {mark} {}", state_string(test, st));
    }
    let verdict = d
        .result_word(&test.condition)
        .unwrap_or("undecided (bound hit)");
    let expect = match test.expectation {
        None => "no expectation declared".to_string(),
        Some(e) => match d.agrees(&test.condition, e.expect) {
            Some(true) => format!("expected {e}: agrees"),
            Some(false) => format!("expected {e}: DISAGREES with the model"),
            None => format!("expected {e}: cannot be checked (bound hit)"),
        },
    };
    let _ = writeln!(s, "Condition {}: {verdict}; {expect}", test.condition.text);
    s
}

/// One line per test for `gpumemsim model --brief`.
pub fn brief_line(j: &ModelJson) -> String {
    let verdict = match (&j.error, j.result, &j.race) {
        (Some(_), _, _) => "error",
        (_, Some(w), Some(_)) if !j.undefined => {
            if w == "Ok" {
                "Ok+race"
            } else {
                "No+race"
            }
        }
        (_, Some(w), _) => w,
        (_, None, _) => "undecided",
    };
    let agrees = match j.expectation_agrees {
        Some(true) => "agrees",
        Some(false) => "DISAGREES",
        None => "-",
    };
    let mut s = format!(
        "{:<32} {:<11} {:>3} states {:>9} executions  {verdict:<9} expectation {agrees}",
        j.name,
        j.model,
        j.allowed.as_ref().map_or(0, |v| v.len()),
        j.executions
    );
    if let Some(e) = &j.error {
        let _ = write!(s, "\n  {e}");
    }
    s
}

/// The closing lines of `gpumemsim model` (`seconds` for all tests, the slowest test and its
/// seconds), and whether the command fails: a test not modelled or an expectation the model
/// contradicts.
pub fn summary(docs: &[ModelJson], seconds: f64, slowest: &str, slowest_s: f64) -> (String, bool) {
    let errors = docs.iter().filter(|d| d.error.is_some()).count();
    let racy = docs.iter().filter(|d| d.race.is_some()).count();
    let undefined = docs.iter().filter(|d| d.undefined).count();
    let bounded = docs.iter().filter(|d| d.bound_hit).count();
    let disagree: Vec<&str> = docs
        .iter()
        .filter(|d| d.expectation_agrees == Some(false))
        .map(|d| d.name.as_str())
        .collect();
    let mut s = format!(
        "{} tests in {seconds:.3} s ({:.0} tests/s; slowest {slowest} in {:.2} ms): {errors} not modelled, {racy} racy ({undefined} undefined), {bounded} with the bound hit, {} expectations disagree with the model",
        docs.len(),
        docs.len() as f64 / seconds.max(1e-9),
        slowest_s * 1e3,
        disagree.len()
    );
    for n in &disagree {
        let _ = write!(s, "\n  EXPECTATION DISAGREES: {n}");
    }
    (s, errors + disagree.len() > 0)
}
