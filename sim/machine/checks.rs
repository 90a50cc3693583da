//! End-of-run checks and reported quantities, evaluated on the final memory values.
//!
//! Values are f64 (buffer elements converted from their type), which is exact for integers below
//! 2^53. Folds (`sum(i = a .. b: ...)`) share one step budget per check so that a huge range in a
//! check is an error, not a hang.

use super::api::CheckOutcome;
use crate::ir::Ty;
use crate::workload::{CheckOp, Expr, FoldOp, Workload};
use std::cell::Cell;

/// Fold iterations one check or reported quantity may take.
const FOLD_BUDGET: u64 = 200_000_000;

struct Env<'a> {
    wl: &'a Workload,
    bufs: &'a [Vec<u64>],
    var: i64,
    bound: Vec<i64>,
    steps: &'a Cell<u64>,
}

fn elem(ty: Ty, raw: u64) -> f64 {
    match ty {
        Ty::U32 => (raw as u32) as f64,
        Ty::I32 => (raw as u32 as i32) as f64,
        Ty::U64 => raw as f64,
        Ty::I64 => (raw as i64) as f64,
        Ty::F32 => f32::from_bits(raw as u32) as f64,
    }
}

/// Below this magnitude every f64 integer converts to i64 and back exactly.
const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

/// `x.trunc()`, through an integer conversion where that is exact (the target's baseline has no
/// rounding instruction, and a check over millions of elements calls this for each).
#[inline]
fn trunc(x: f64) -> f64 {
    if x.abs() < EXACT {
        // Same sign of zero as `trunc` (-0.5 truncates to -0.0).
        ((x as i64) as f64).copysign(x)
    } else {
        x.trunc()
    }
}

/// `x.fract() == 0.0`.
#[inline]
fn integral(x: f64) -> bool {
    x - trunc(x) == 0.0
}

/// `a % d` (the remainder with the dividend's sign), through integers where that is exact.
#[inline]
fn rem(a: f64, d: f64) -> f64 {
    if d != 0.0 && a.abs() < EXACT && d.abs() < EXACT && integral(a) && integral(d) {
        (((a as i64) % (d as i64)) as f64).copysign(a)
    } else {
        a % d
    }
}

/// The index of buffer `name`.
#[inline]
fn find(env: &Env, name: &str) -> Result<usize, String> {
    match env.wl.buffers.iter().position(|b| b.name == name) {
        Some(i) => Ok(i),
        None => Err(unknown_buffer(name)),
    }
}

// The error texts, out of line: `eval` recurses once per node of a check evaluated for every element
// of a buffer, and formatting code inside it made every call pay for a large frame.
#[cold]
#[inline(never)]
fn unknown_buffer(name: &str) -> String {
    format!("unknown buffer {name}")
}

#[cold]
#[inline(never)]
fn out_of_bounds(buffer: &str, i: f64, len: usize) -> String {
    format!("{buffer}[{i}] is out of bounds (length {len})")
}

#[cold]
#[inline(never)]
fn message(m: &str) -> String {
    m.to_string()
}

#[cold]
#[inline(never)]
fn unbound(d: u32) -> String {
    format!("fold variable {d} is not bound here")
}

fn eval(e: &Expr, env: &Env) -> Result<f64, String> {
    Ok(match e {
        Expr::Const(c) => *c as f64,
        Expr::ConstF(c) => *c,
        Expr::Var => env.var as f64,
        Expr::Elem { buffer, index } => {
            let b = find(env, buffer)?;
            let i = eval(index, env)?;
            match env.bufs[b].get(i as usize) {
                Some(v) => elem(env.wl.buffers[b].elem, *v),
                None => return Err(out_of_bounds(buffer, i, env.bufs[b].len())),
            }
        }
        Expr::Sum(buffer) => {
            let b = find(env, buffer)?;
            env.bufs[b]
                .iter()
                .map(|&v| elem(env.wl.buffers[b].elem, v))
                .sum()
        }
        Expr::Len(buffer) => env.bufs[find(env, buffer)?].len() as f64,
        Expr::GlobalSize => {
            (env.wl.geometry.num_groups() * env.wl.geometry.group_threads() as u64) as f64
        }
        Expr::NumGroups => env.wl.geometry.num_groups() as f64,
        Expr::GroupSize => env.wl.geometry.group_threads() as f64,
        Expr::Add(a, b) => eval(a, env)? + eval(b, env)?,
        Expr::Sub(a, b) => eval(a, env)? - eval(b, env)?,
        Expr::Mul(a, b) => eval(a, env)? * eval(b, env)?,
        Expr::Div(a, b) => {
            let d = eval(b, env)?;
            if d == 0.0 {
                return Err(message("division by zero"));
            }
            let n = eval(a, env)?;
            if integral(n) && integral(d) {
                trunc(n / d)
            } else {
                n / d
            }
        }
        Expr::Rem(a, b) => {
            let d = eval(b, env)?;
            if d == 0.0 {
                return Err(message("remainder by zero"));
            }
            rem(eval(a, env)?, d)
        }
        Expr::Shl(a, b) => eval(a, env)? * 2f64.powf(eval(b, env)?),
        Expr::Min(a, b) => eval(a, env)?.min(eval(b, env)?),
        Expr::Max(a, b) => eval(a, env)?.max(eval(b, env)?),
        Expr::Cmp(op, a, b) => holds(*op, eval(a, env)?, eval(b, env)?) as u8 as f64,
        Expr::Bound(d) => match env.bound.get(*d as usize) {
            Some(&v) => v as f64,
            None => return Err(unbound(*d)),
        },
        Expr::Fold { op, from, to, body } => fold(*op, from, to, body, env)?,
    })
}

/// A fold (`sum`, `min`, `max` over `from .. to`), within the check's step budget.
#[inline(never)]
fn fold(op: FoldOp, from: &Expr, to: &Expr, body: &Expr, env: &Env) -> Result<f64, String> {
    let (lo, hi) = (eval(from, env)?, eval(to, env)?);
    if !integral(lo) || !integral(hi) {
        return Err(format!("fold range {lo} .. {hi} is not integral"));
    }
    let (lo, hi) = (lo as i64, hi as i64);
    let n = hi.saturating_sub(lo).max(0) as u64;
    let used = env.steps.get() + n;
    if used > FOLD_BUDGET {
        return Err(format!(
            "check needs more than {FOLD_BUDGET} fold steps (range {lo} .. {hi})"
        ));
    }
    env.steps.set(used);
    let mut inner = Env {
        wl: env.wl,
        bufs: env.bufs,
        var: env.var,
        bound: env.bound.clone(),
        steps: env.steps,
    };
    inner.bound.push(0);
    let mut acc: Option<f64> = None;
    for i in lo..hi {
        *inner.bound.last_mut().expect("pushed") = i;
        let v = eval(body, &inner)?;
        acc = Some(match (op, acc) {
            (_, None) => v,
            (FoldOp::Sum, Some(a)) => a + v,
            (FoldOp::Min, Some(a)) => a.min(v),
            (FoldOp::Max, Some(a)) => a.max(v),
        });
    }
    match (op, acc) {
        (_, Some(v)) => Ok(v),
        (FoldOp::Sum, None) => Ok(0.0),
        (_, None) => Err(format!("min or max over the empty range {lo} .. {hi}")),
    }
}

fn holds(op: CheckOp, a: f64, b: f64) -> bool {
    match op {
        CheckOp::Eq => a == b,
        CheckOp::Ne => a != b,
        CheckOp::Lt => a < b,
        CheckOp::Le => a <= b,
        CheckOp::Gt => a > b,
        CheckOp::Ge => a >= b,
    }
}

fn fmt(v: f64) -> String {
    crate::stats::fmt_num(v)
}

/// Evaluates every check and reported quantity.
pub fn evaluate(wl: &Workload, bufs: &[Vec<u64>]) -> (Vec<CheckOutcome>, Vec<(String, i64)>) {
    let mut out = Vec::new();
    for c in &wl.checks {
        let location = format!("{}:{}:{}", wl.kernel.file, c.loc.line, c.loc.col);
        let range = match &c.forall {
            Some(b) => match wl.buffers.iter().position(|x| &x.name == b) {
                Some(i) => 0..bufs[i].len() as i64,
                None => {
                    out.push(CheckOutcome {
                        text: c.text.clone(),
                        location,
                        passed: false,
                        detail: Some(format!("unknown buffer {b}")),
                    });
                    continue;
                }
            },
            None => 0..1,
        };
        let mut detail = None;
        let steps = Cell::new(0);
        for var in range {
            let env = Env {
                wl,
                bufs,
                var,
                bound: Vec::new(),
                steps: &steps,
            };
            match (eval(&c.lhs, &env), eval(&c.rhs, &env)) {
                (Ok(a), Ok(b)) => {
                    if !holds(c.op, a, b) {
                        let at = if c.forall.is_some() {
                            format!(" at index {var}")
                        } else {
                            String::new()
                        };
                        detail = Some(format!(
                            "failed{at}: left side = {}, right side = {}",
                            fmt(a),
                            fmt(b)
                        ));
                        break;
                    }
                }
                (Err(e), _) | (_, Err(e)) => {
                    detail = Some(e);
                    break;
                }
            }
        }
        out.push(CheckOutcome {
            text: c.text.clone(),
            location,
            passed: detail.is_none(),
            detail,
        });
    }
    let reports = wl
        .reports
        .iter()
        .map(|r| {
            let steps = Cell::new(0);
            let env = Env {
                wl,
                bufs,
                var: 0,
                bound: Vec::new(),
                steps: &steps,
            };
            (
                r.name.clone(),
                eval(&r.expr, &env).map(|v| v as i64).unwrap_or(i64::MIN),
            )
        })
        .collect();
    (out, reports)
}

#[cfg(test)]
mod fast_tests {
    use super::*;

    #[test]
    fn integer_paths_agree_with_the_float_functions() {
        let vals = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.5,
            -2.5,
            7.0,
            -7.0,
            1e15,
            -1e15,
            4.5e15,
            9.1e15,
            -9.1e15,
            1e300,
            f64::INFINITY,
            f64::NAN,
            123456789.0,
            -3.0,
        ];
        for &x in &vals {
            assert_eq!(trunc(x).to_bits(), x.trunc().to_bits(), "trunc {x}");
            assert_eq!(integral(x), x.fract() == 0.0, "integral {x}");
            for &d in &vals {
                assert_eq!(rem(x, d).to_bits(), (x % d).to_bits(), "{x} % {d}");
            }
        }
    }
}
