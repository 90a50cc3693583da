//! The shapes the generator instantiates: the classic litmus cycles (diy7's names), each as its
//! threads' accesses and the final condition that witnesses the cycle (the weak outcome).
//!
//! Sources of the shapes: Alglave, Maranget, Tautschnig, "Herding cats" (TOPLAS 2014, §4 and the
//! diy7 catalogue), Sarkar et al. (PLDI 2011) for the names.

/// One access of a shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Write `value` to location `loc` (0 = x, 1 = y, 2 = z, 3 = w).
    W(u8, u32),
    /// Read location `loc` into the thread's next register (`r0`, `r1`, ...).
    R(u8),
}

/// One conjunct of the witness condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// Thread `t`'s register `r` (its `r`-th read) holds the value.
    Reg(u8, u8, u32),
    /// Location `loc` ends with the value.
    Loc(u8, u32),
}

#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub name: &'static str,
    pub threads: &'static [&'static [Op]],
    pub cond: &'static [Cond],
}

use Cond::{Loc, Reg};
use Op::{R, W};

const X: u8 = 0;
const Y: u8 = 1;
const Z: u8 = 2;
const W_: u8 = 3;

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "MP",
        threads: &[&[W(X, 1), W(Y, 1)], &[R(Y), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(1, 1, 0)],
    },
    Shape {
        name: "SB",
        threads: &[&[W(X, 1), R(Y)], &[W(Y, 1), R(X)]],
        cond: &[Reg(0, 0, 0), Reg(1, 0, 0)],
    },
    Shape {
        name: "LB",
        threads: &[&[R(X), W(Y, 1)], &[R(Y), W(X, 1)]],
        cond: &[Reg(0, 0, 1), Reg(1, 0, 1)],
    },
    Shape {
        name: "S",
        threads: &[&[W(X, 2), W(Y, 1)], &[R(Y), W(X, 1)]],
        cond: &[Reg(1, 0, 1), Loc(X, 2)],
    },
    Shape {
        name: "R",
        threads: &[&[W(X, 1), W(Y, 1)], &[W(Y, 2), R(X)]],
        cond: &[Loc(Y, 2), Reg(1, 0, 0)],
    },
    Shape {
        name: "2+2W",
        threads: &[&[W(X, 2), W(Y, 1)], &[W(Y, 2), W(X, 1)]],
        cond: &[Loc(X, 2), Loc(Y, 2)],
    },
    Shape {
        name: "CoRR",
        threads: &[&[W(X, 1)], &[R(X), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(1, 1, 0)],
    },
    Shape {
        name: "CoWR",
        threads: &[&[W(X, 1), R(X)], &[W(X, 2)]],
        cond: &[Reg(0, 0, 2), Loc(X, 1)],
    },
    Shape {
        name: "CoRW",
        threads: &[&[R(X), W(X, 1)], &[W(X, 2)]],
        cond: &[Reg(0, 0, 2), Loc(X, 2)],
    },
    Shape {
        name: "WRC",
        threads: &[&[W(X, 1)], &[R(X), W(Y, 1)], &[R(Y), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(2, 0, 1), Reg(2, 1, 0)],
    },
    Shape {
        name: "ISA2",
        threads: &[&[W(X, 1), W(Y, 1)], &[R(Y), W(Z, 1)], &[R(Z), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(2, 0, 1), Reg(2, 1, 0)],
    },
    Shape {
        name: "RWC",
        threads: &[&[W(X, 1)], &[R(X), R(Y)], &[W(Y, 1), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(1, 1, 0), Reg(2, 0, 0)],
    },
    Shape {
        name: "W+RWC",
        threads: &[&[W(X, 1), W(Y, 1)], &[R(Y), R(Z)], &[W(Z, 1), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(1, 1, 0), Reg(2, 0, 0)],
    },
    Shape {
        name: "3.SB",
        threads: &[&[W(X, 1), R(Y)], &[W(Y, 1), R(Z)], &[W(Z, 1), R(X)]],
        cond: &[Reg(0, 0, 0), Reg(1, 0, 0), Reg(2, 0, 0)],
    },
    Shape {
        name: "3.LB",
        threads: &[&[R(X), W(Y, 1)], &[R(Y), W(Z, 1)], &[R(Z), W(X, 1)]],
        cond: &[Reg(0, 0, 1), Reg(1, 0, 1), Reg(2, 0, 1)],
    },
    Shape {
        name: "4.SB",
        threads: &[
            &[W(X, 1), R(Y)],
            &[W(Y, 1), R(Z)],
            &[W(Z, 1), R(W_)],
            &[W(W_, 1), R(X)],
        ],
        cond: &[Reg(0, 0, 0), Reg(1, 0, 0), Reg(2, 0, 0), Reg(3, 0, 0)],
    },
    Shape {
        name: "IRIW",
        threads: &[&[W(X, 1)], &[R(X), R(Y)], &[W(Y, 1)], &[R(Y), R(X)]],
        cond: &[Reg(1, 0, 1), Reg(1, 1, 0), Reg(3, 0, 1), Reg(3, 1, 0)],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_name_existing_registers() {
        for s in SHAPES {
            for c in s.cond {
                if let Reg(t, r, _) = *c {
                    let reads = s.threads[t as usize]
                        .iter()
                        .filter(|o| matches!(o, R(_)))
                        .count();
                    assert!((r as usize) < reads, "{}: P{t}:r{r}", s.name);
                }
            }
        }
    }
}
