//! `--format herd`: a run's result as litmus7 prints it, so that herdtools' log tools (mcompare7,
//! msort7) read simulated runs beside herd7's model runs and hardware runs.
//!
//! Layout, per test (litmus7's `postlude`, herdtools7 `litmus/skelUtil.ml`, and the log reader
//! `tools/lexLog_tools.mll` that mcompare7 uses):
//!
//! ```text
//! Test MP Allowed
//! Histogram (3 states)
//! 4987  :>1:r0=0; 1:r1=0;
//! 12    *>1:r0=1; 1:r1=0;
//! 5001  :>1:r0=1; 1:r1=1;
//! Ok
//!
//! Witnesses
//! Positive: 12, Negative: 9988
//! Condition exists (1:r0=1 /\ 1:r1=0) is validated
//! Observation MP Sometimes 12 9988
//! ```
//!
//! - `Test NAME KIND`: the kind follows the quantifier (`exists` Allowed, `~exists` Forbidden,
//!   `forall` Required), as herd7 and litmus7 print it (`lib/constrGen.ml`, `pp_kind`).
//! - `Histogram (N states)`, then each state with its count, left-aligned in 6 columns, and `*>`
//!   when the state is a witness of the condition (litmus7's `cond`: the proposition for `exists`
//!   and `~exists`, its negation for `forall`), `:>` otherwise. Bindings are `N:reg=v;` for thread
//!   `PN`'s register and `x=v;` / `y[1]=v;` for memory, registers first by thread and name, then
//!   memory by name; states in order of their bindings' values.
//! - `Ok`/`No`: whether the condition holds over the observed states.
//! - `Witnesses` / `Positive: P, Negative: N`: for `exists` and `forall`, P counts runs whose final
//!   state satisfies the proposition; for `~exists`, runs where it does not (herd7's `check_wit`).
//! - `Condition ... is [NOT ]validated`, the condition printed as herd prints it (`not (...)`,
//!   `/\`, `\/`, parentheses only where needed; `lib/constrGen.ml`, `pp_prop`).
//! - The test's `key = value` lines (`Hash=...`), `Relax` as `Relax NAME Ok|No VALUE`, as litmus7
//!   prints a test's info.
//! - `Observation NAME Never|Sometimes|Always P N`, P and N counting runs where the proposition
//!   holds and where it does not.
//! - Iterations without a final state (a barrier never completed, or a loop never ended) are left
//!   out of the histogram and of every count, as herd7 drops executions that deadlock or exceed its
//!   unrolling; the text and JSON reports count them.
//!
//! Left out: litmus7's `Time NAME seconds` line (a wall-clock time would make two runs with the same
//! inputs and seed differ; mcompare7 reads logs without it), and the `Hash=` line litmus7 computes
//! when a test has none (herd's digest of the test source; a test's own `Hash=` line is printed).

use super::cond::{Prop, Quantifier, Term, Var};
use super::run::LitmusResult;
use super::test::LitmusTest;
use crate::ir::CmpOp;
use std::fmt::Write as _;

/// The herd name of observed variable `v`: `1:r0`, `x`, `y[1]`.
fn var_name(test: &LitmusTest, v: Var) -> String {
    match v {
        Var::Reg { thread, reg } => {
            let t = &test.threads[thread];
            let n = t.name.strip_prefix('P').unwrap_or(&t.name);
            format!("{n}:{}", t.regs[reg as usize].name)
        }
        Var::Loc(l) => test.locations[l].name.clone(),
        Var::Elem { loc, index } => test.locations[loc].elem_name(index),
    }
}

/// Sort key of a binding: registers (by thread number, then name) before memory.
fn var_key(test: &LitmusTest, v: Var) -> (u8, u64, String, u32) {
    match v {
        Var::Reg { thread, reg } => {
            let t = &test.threads[thread];
            let n = t.name[1..].parse::<u64>().unwrap_or(u64::MAX);
            (0, n, t.regs[reg as usize].name.clone(), 0)
        }
        Var::Loc(l) => (1, 0, test.locations[l].name.clone(), 0),
        Var::Elem { loc, index } => (1, 0, test.locations[loc].name.clone(), index),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Top,
    And,
    Or,
}

/// herd's `pp_prop`: parentheses around an `\/` inside `/\` and an `/\`... never; around `\/`
/// inside `/\` only.
fn prop_text(test: &LitmusTest, p: &Prop, above: Op, out: &mut String) {
    let term = |t: &Term| match *t {
        Term::Const(c) => c.to_string(),
        Term::Var(i) => var_name(test, test.condition.observed[i]),
    };
    match p {
        Prop::Const(true) => out.push_str("true"),
        Prop::Const(false) => out.push_str("false"),
        Prop::Cmp { op, a, b } => {
            // herd's atoms are `location=value`: a constant goes to the right.
            let (a, b, op) = match (a, b) {
                (Term::Const(_), Term::Var(_)) => (b, a, op.swapped()),
                _ => (a, b, *op),
            };
            match op {
                CmpOp::Eq => {
                    let _ = write!(out, "{}={}", term(a), term(b));
                }
                CmpOp::Ne => {
                    let _ = write!(out, "not ({}={})", term(a), term(b));
                }
                // Dat3M's ordered comparisons, which herd has not: as written.
                _ => {
                    let _ = write!(out, "{}{}{}", term(a), op.symbol(), term(b));
                }
            }
        }
        Prop::Not(q) => {
            out.push_str("not (");
            prop_text(test, q, Op::Top, out);
            out.push(')');
        }
        Prop::And(a, b) | Prop::Or(a, b) => {
            let here = if matches!(p, Prop::And(..)) {
                Op::And
            } else {
                Op::Or
            };
            let paren = above == Op::And && here == Op::Or;
            if paren {
                out.push('(');
            }
            prop_text(test, a, here, out);
            out.push_str(if here == Op::And { " /\\ " } else { " \\/ " });
            prop_text(test, b, here, out);
            if paren {
                out.push(')');
            }
        }
    }
}

/// The condition as herd prints it: `exists (1:r0=1 /\ 1:r1=0)`.
pub fn condition_text(test: &LitmusTest) -> String {
    let mut prop = String::new();
    prop_text(test, &test.condition.prop, Op::Top, &mut prop);
    let q = match test.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    format!("{q} ({prop})")
}

/// The litmus7 block of one test's result (see the module header).
pub fn herd_report(test: &LitmusTest, r: &LitmusResult) -> String {
    let mut s = String::new();
    let kind = match r.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let _ = writeln!(s, "Test {} {kind}", r.name);
    let observed = &test.condition.observed;
    let mut order: Vec<usize> = (0..observed.len()).collect();
    order.sort_by_key(|&i| var_key(test, observed[i]));
    let names: Vec<String> = order.iter().map(|&i| var_name(test, observed[i])).collect();
    let mut states: Vec<(Vec<i64>, u64, bool)> = r
        .outcomes
        .iter()
        .map(|o| {
            (
                order.iter().map(|&i| o.values[i]).collect(),
                o.count,
                o.witness,
            )
        })
        .collect();
    states.sort();
    let _ = writeln!(s, "Histogram ({} states)", states.len());
    for (values, count, witness) in &states {
        let mark = if *witness { '*' } else { ':' };
        let _ = write!(s, "{count:<6}{mark}>");
        for (i, (n, v)) in names.iter().zip(values).enumerate() {
            if i > 0 {
                s.push(' ');
            }
            let _ = write!(s, "{n}={v};");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "{}", if r.validated() { "Ok" } else { "No" });
    // Iterations without a final state are no state: herd prints none for them.
    let (p, n) = (r.prop_true, r.finals() - r.prop_true);
    let (pos, neg) = match r.quantifier {
        Quantifier::Exists | Quantifier::Forall => (p, n),
        Quantifier::NotExists => (n, p),
    };
    let _ = writeln!(s, "\nWitnesses\nPositive: {pos}, Negative: {neg}");
    let _ = writeln!(
        s,
        "Condition {} is {}validated",
        condition_text(test),
        if r.validated() { "" } else { "NOT " }
    );
    for (k, v) in &test.info {
        if k == "Relax" {
            let ok = if r.witnesses > 0 { "Ok" } else { "No" };
            let _ = writeln!(s, "Relax {} {ok} {v}", r.name);
        } else {
            let _ = writeln!(s, "{k}={v}");
        }
    }
    let obs = if p == 0 {
        "Never"
    } else if n == 0 {
        "Always"
    } else {
        "Sometimes"
    };
    let _ = writeln!(s, "Observation {} {obs} {p} {n}", r.name);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use crate::run::Outcome;

    fn result(test: &LitmusTest, outcomes: Vec<(Vec<i64>, u64)>) -> LitmusResult {
        let cond = &test.condition;
        let outcomes: Vec<Outcome> = outcomes
            .into_iter()
            .map(|(values, count)| Outcome {
                prop: cond.prop.eval(&values),
                witness: cond.witness(&values),
                values,
                count,
                first_launch: 0,
                judgement: None,
            })
            .collect();
        let iterations = outcomes.iter().map(|o| o.count).sum();
        LitmusResult {
            name: test.name.clone(),
            file: test.file.clone(),
            iterations,
            launches: 1,
            quantifier: cond.quantifier,
            condition: cond.text.clone(),
            vars: Vec::new(),
            prop_true: outcomes.iter().filter(|o| o.prop).map(|o| o.count).sum(),
            witnesses: outcomes.iter().filter(|o| o.witness).map(|o| o.count).sum(),
            no_final_state: 0,
            no_final_state_stopped: 0,
            has_loop: false,
            no_final_state_launch: 0,
            filtered: 0,
            outcomes,
            expectation: test.expectation,
            races: Vec::new(),
            seed: 0,
            model: Err("not asked in this test".into()),
            expectation_agrees: None,
        }
    }

    #[test]
    fn message_passing_prints_as_litmus7_does() {
        let t = parse(
            "PTX MP\nHash=abc\n{ x=0; y=0; }\n P0 | P1 ;\n st.weak [x], 1 | ld.weak r0, [y] ;\n st.weak [y], 1 | ld.weak r1, [x] ;\nexists (P1:r1=0 /\\ P1:r0=1)",
            "mp.litmus",
        )
        .unwrap();
        // Observed in order of mention: P1:r1, P1:r0; printed sorted by name.
        let r = result(
            &t,
            vec![(vec![0, 0], 4987), (vec![0, 1], 12), (vec![1, 1], 5001)],
        );
        let want = "Test MP Allowed\nHistogram (3 states)\n4987  :>1:r0=0; 1:r1=0;\n12    *>1:r0=1; 1:r1=0;\n5001  :>1:r0=1; 1:r1=1;\nOk\n\nWitnesses\nPositive: 12, Negative: 9988\nCondition exists (1:r1=0 /\\ 1:r0=1) is validated\nHash=abc\nObservation MP Sometimes 12 9988\n";
        assert_eq!(herd_report(&t, &r), want);
    }

    #[test]
    fn ordered_comparisons_print_as_written_with_the_constant_on_the_right() {
        let t = parse(
            "PTX T\n{ x=0; }\n P0 ;\n ld.weak r0, [x] ;\nexists (1 <= 0:r0 /\\ x < 2)",
            "t.litmus",
        )
        .unwrap();
        let r = result(&t, vec![(vec![0, 0], 3)]);
        let s = herd_report(&t, &r);
        assert!(
            s.contains("Condition exists (0:r0>=1 /\\ x<2) is NOT validated"),
            "{s}"
        );
    }

    #[test]
    fn a_state_that_observes_nothing_keeps_its_marker() {
        // `exists 0==0` observes no variable: each state is the marker alone (the bindings'
        // separator was once trimmed with the marker's `>`).
        let t = parse(
            "PTX T\n{ x=0; }\n P0 ;\n st.weak [x], 1 ;\nexists (0==0)",
            "t.litmus",
        )
        .unwrap();
        let r = result(&t, vec![(vec![], 7)]);
        assert!(
            herd_report(&t, &r).contains("Histogram (1 states)\n7     *>\nOk\n"),
            "{}",
            herd_report(&t, &r)
        );
    }

    #[test]
    fn forbidden_and_required_kinds_count_witnesses_as_herd_does() {
        let t = parse(
            "PTX SB\n{ x=0; y=0; }\n P0 | P1 ;\n st.weak [x], 1 | st.weak [y], 1 ;\n ld.weak r0, [y] | ld.weak r0, [x] ;\n~exists (0:r0=0 /\\ 1:r0=0)",
            "sb.litmus",
        )
        .unwrap();
        let r = result(&t, vec![(vec![0, 1], 10), (vec![1, 1], 5)]);
        let s = herd_report(&t, &r);
        assert!(s.starts_with("Test SB Forbidden\n"), "{s}");
        assert!(
            s.contains("Ok\n\nWitnesses\nPositive: 15, Negative: 0\n"),
            "{s}"
        );
        assert!(
            s.contains("Condition ~exists (0:r0=0 /\\ 1:r0=0) is validated\n"),
            "{s}"
        );
        assert!(s.ends_with("Observation SB Never 0 15\n"), "{s}");
        let t = parse(
            "PTX A\n{ x=0; }\n P0 ;\n st.weak [x], 1 ;\nforall (x=1 \\/ ~(x=2) /\\ (x=3 \\/ x!=4))",
            "a.litmus",
        )
        .unwrap();
        let r = result(&t, vec![(vec![1], 7)]);
        let s = herd_report(&t, &r);
        assert!(
            s.starts_with("Test A Required\nHistogram (1 states)\n7     :>x=1;\nOk\n"),
            "{s}"
        );
        assert!(
            s.contains("Condition forall (x=1 \\/ not (x=2) /\\ (x=3 \\/ not (x=4))) is validated"),
            "{s}"
        );
        assert!(s.contains("Positive: 7, Negative: 0"), "{s}");
        assert!(s.ends_with("Observation A Always 7 0\n"), "{s}");
    }
}
