//! The work a decision would do, estimated before it is done, so that a test too large for the
//! enumeration is answered "too large to decide (estimate …)" at once instead of after minutes of
//! search or gigabytes of traces (issue 43: a straight-line 4-thread × 6-access test took 188 s to
//! reach the candidate bound; a 10 × 50 test peaked at 3.1 GB).
//!
//! Two estimates, each an over-approximation of what the enumeration holds or visits:
//!
//! - [`before_paths`], from the program text: a thread's paths are the products of the values its
//!   loads may return. A location's values are at most its initial value, the distinct constants
//!   stored to it and one per store of a computed value ([`values_bound`]); a straight-line
//!   thread's paths are the product over its loads (a thread with loops is left to the
//!   interpreter's own bounds: spin iterations that change nothing are not enumerated, so a
//!   product over unrolled loads says little). Above [`MAX_PATHS`] the traces would not fit.
//! - [`before_executions`], from the traces: the candidate executions as herd counts them, one
//!   write per read (`Π_reads |writes to its location|`) times every coherence order
//!   (`Π_loc |writes|!`), over the longest trace of each straight-line thread and the shortest of
//!   a thread with loops. Above `ModelOptions::max_estimate` (1e10: the suite's largest is 5e7,
//!   the latch tests) the enumeration could not end within its budget.
//!
//! Memory is bounded where it is spent: the interpreter keeps each path once and stops at
//! `interp::MAX_STORED_EVENTS` events over all threads.
//!
//! The estimates over-approximate the search (value pruning and the axioms cut far more), so a
//! test under them may still stop at the budget (`bound_hit`); one above them is refused before
//! any enumeration, within milliseconds.

use super::interp::Trace;
use super::{ModelError, ModelOptions};
use crate::ir::{Inst, Operand};
use crate::test::LitmusTest;
use std::collections::{BTreeMap, BTreeSet};

/// The most paths one thread's text may imply (the interpreter keeps at most
/// `interp::MAX_TRACES`; this bound leaves the value-domain fixpoint room to find fewer).
pub const MAX_PATHS: f64 = 4.0e6;

/// The most candidate-execution work the trace estimate may predict.
pub const MAX_ESTIMATE: f64 = 1.0e10;

/// Per location: an upper bound on the values it may hold.
fn values_bound(test: &LitmusTest) -> Vec<f64> {
    let mut constants: Vec<BTreeSet<u64>> = vec![BTreeSet::new(); test.locations.len()];
    let mut computed = vec![0u32; test.locations.len()];
    let mut unknown = 0u32;
    for (t, th) in test.threads.iter().enumerate() {
        let at: BTreeMap<usize, usize> = test.accesses(t).into_iter().collect();
        for (i, inst) in th.insts.iter().enumerate() {
            let imm = match *inst {
                Inst::Store { src, .. } => match src {
                    Operand::Imm(v) => Some(v),
                    Operand::Reg(_) => None,
                },
                Inst::Rmw { .. } | Inst::Cas { .. } => None,
                _ => continue,
            };
            match (at.get(&i), imm) {
                (Some(&l), Some(v)) => {
                    constants[l].insert(v);
                }
                (Some(&l), None) => computed[l] += 1,
                (None, _) => unknown += 1,
            }
        }
    }
    (0..test.locations.len())
        .map(|l| 1.0 + constants[l].len() as f64 + computed[l] as f64 + unknown as f64)
        .collect()
}

/// Refuses a test whose straight-line threads imply more paths than the traces may hold.
pub fn before_paths(test: &LitmusTest) -> Result<(), ModelError> {
    let values = values_bound(test);
    let all: f64 = values.iter().copied().fold(1.0, f64::max);
    for (t, th) in test.threads.iter().enumerate() {
        if th.has_loop() {
            continue;
        }
        let at: BTreeMap<usize, usize> = test.accesses(t).into_iter().collect();
        let mut paths = 1.0f64;
        for (i, inst) in th.insts.iter().enumerate() {
            let reads = match inst {
                Inst::Load { .. } | Inst::Cas { .. } => true,
                Inst::Rmw { .. } => true,
                _ => false,
            };
            if reads {
                paths *= at.get(&i).map_or(all, |&l| values[l]);
            }
        }
        if paths > MAX_PATHS {
            return Err(ModelError::TooLarge {
                file: test.file.clone(),
                estimate: format!(
                    "thread {} alone has up to {} paths over the values its loads may read",
                    th.name,
                    sci(paths)
                ),
                bound: format!("{} paths per thread", sci(MAX_PATHS)),
            });
        }
    }
    Ok(())
}

/// Refuses a test whose candidate executions (herd's count) times the model's coherence orders
/// exceed `opts.max_estimate`.
pub fn before_executions(
    test: &LitmusTest,
    per_thread: &[Vec<Trace>],
    opts: &ModelOptions,
) -> Result<f64, ModelError> {
    let work = executions(test, per_thread);
    if work > opts.max_estimate {
        return Err(ModelError::TooLarge {
            file: test.file.clone(),
            estimate: format!("{} candidate executions and coherence orders", sci(work)),
            bound: sci(opts.max_estimate),
        });
    }
    Ok(work)
}

/// The work estimate of [`before_executions`] (see the module header).
pub fn executions(test: &LitmusTest, per_thread: &[Vec<Trace>]) -> f64 {
    // The longest trace of each straight-line thread stands for the thread; a thread with loops
    // by its shortest (its longest unrolls every loop to the bound, which the spin-loop reduction
    // and the axioms rarely let an execution reach).
    let longest: Vec<&Trace> = per_thread
        .iter()
        .zip(&test.threads)
        .filter_map(|(ts, th)| {
            if th.has_loop() {
                ts.iter().min_by_key(|t| t.events.len())
            } else {
                ts.iter().max_by_key(|t| t.events.len())
            }
        })
        .collect();
    let mut writes: BTreeMap<(usize, u32, Option<u32>), f64> = BTreeMap::new();
    for t in &longest {
        for e in &t.events {
            if let Some(k) = e.loc.filter(|_| e.writes()) {
                *writes.entry((k.loc, k.elem, k.copy)).or_insert(1.0) += 1.0;
            }
        }
    }
    let mut rf = 1.0f64;
    for t in &longest {
        for e in &t.events {
            if let Some(k) = e.loc.filter(|_| e.reads()) {
                rf *= writes.get(&(k.loc, k.elem, k.copy)).copied().unwrap_or(1.0);
            }
        }
    }
    rf * writes.values().map(|&w| factorial(w)).product::<f64>()
}

fn factorial(n: f64) -> f64 {
    (2..=n as u64).fold(1.0, |a, k| a * k as f64)
}

/// `3.5e17`, or the integer below a million.
pub fn sci(x: f64) -> String {
    if x < 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factorials_and_numbers_print_as_estimates() {
        assert_eq!(factorial(1.0), 1.0);
        assert_eq!(factorial(5.0), 120.0);
        assert_eq!(sci(720.0), "720");
        assert_eq!(sci(3.5e17), "3.5e17");
    }
}
