//! A workload: a kernel plus everything a launch needs — geometry, global buffers with initial
//! contents, launch parameters (registers preloaded with buffer addresses or scalars), and the checks on
//! memory evaluated after the run. The kernel language and the litmus front ends both produce this.

use crate::ir::{Kernel, Reg, SrcLoc, Ty};
use serde::{Deserialize, Serialize};

/// Launch geometry: work-groups × work-items per group, 3-D.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Geometry {
    pub groups: [u32; 3],
    pub group_size: [u32; 3],
}

impl Geometry {
    pub fn num_groups(&self) -> u64 {
        self.groups.iter().map(|&g| g as u64).product()
    }
    pub fn group_threads(&self) -> u32 {
        self.group_size.iter().product()
    }
}

/// Initial contents of a buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// All elements zero.
    Zero,
    /// All elements this raw value.
    Fill(u64),
    /// Element `i` = `i`.
    Iota,
    /// Explicit values (shorter lists are zero-padded).
    Values(Vec<u64>),
    /// Seeded pseudo-random values in `0..modulo` (`modulo = 0`: any value).
    Random { seed: u64, modulo: u64 },
}

/// A global buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    pub name: String,
    pub elem: Ty,
    pub len: u64,
    pub init: Init,
    /// Where it was declared.
    pub loc: SrcLoc,
}

impl Buffer {
    pub fn bytes(&self) -> u64 {
        self.len * self.elem.width().bytes() as u64
    }
    /// The initial raw value of element `i`.
    pub fn initial(&self, i: u64) -> u64 {
        match &self.init {
            Init::Zero => 0,
            Init::Fill(v) => *v,
            Init::Iota => i,
            Init::Values(v) => v.get(i as usize).copied().unwrap_or(0),
            Init::Random { seed, modulo } => {
                let r = crate::rng::SplitMix64::hash(
                    seed.wrapping_add(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                );
                if *modulo == 0 {
                    r
                } else {
                    r % modulo
                }
            }
        }
    }
}

/// What a launch parameter register holds at start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ParamValue {
    /// Base byte address of the named buffer.
    BufferAddr(String),
    /// A scalar.
    Scalar(u64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub reg: Reg,
    pub value: ParamValue,
}

/// A value-level expression over final memory, for checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Const(i64),
    /// A non-integral constant (for f32 buffers).
    ConstF(f64),
    /// `buffer[index]` as the buffer's element type (signed types sign-extended).
    Elem {
        buffer: String,
        index: Box<Expr>,
    },
    /// Sum of all elements of a buffer.
    Sum(String),
    /// Number of elements of a buffer.
    Len(String),
    /// Launch totals.
    GlobalSize,
    NumGroups,
    GroupSize,
    /// Bound variable of a `forall` check.
    Var,
    /// Variable of the enclosing [`Expr::Fold`]s: 0 is the outermost.
    Bound(u32),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Rem(Box<Expr>, Box<Expr>),
    /// `a << b` = `a * 2^b` (exact in f64 for the set encodings checks use).
    Shl(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    /// 1 when `a op b` holds, else 0 (so that `sum(i = 0 .. n: x[i] == v)` counts).
    Cmp(CheckOp, Box<Expr>, Box<Expr>),
    /// `op` over `body` for the bound variable in `from .. to` (half-open); the variable is
    /// `Bound(depth)` inside `body`, where depth is the number of enclosing folds.
    Fold {
        op: FoldOp,
        from: Box<Expr>,
        to: Box<Expr>,
        body: Box<Expr>,
    },
}

/// Reduction of an [`Expr::Fold`]. Over an empty range sum is 0; min and max are errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FoldOp {
    Sum,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// An end-of-run check: `lhs op rhs`, optionally for every index `Var` in `0..len(buffer)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The check as written, for messages.
    pub text: String,
    pub loc: SrcLoc,
    pub lhs: Expr,
    pub op: CheckOp,
    pub rhs: Expr,
    /// `Some(buffer)`: evaluate for `Var` = every index of that buffer.
    pub forall: Option<String>,
}

/// A quantity computed from final memory and reported with the statistics (`report lost = ...`); it
/// never fails the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantity {
    pub name: String,
    pub loc: SrcLoc,
    pub expr: Expr,
}

/// A complete launchable workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub kernel: Kernel,
    pub geometry: Geometry,
    pub buffers: Vec<Buffer>,
    pub params: Vec<Param>,
    pub checks: Vec<Check>,
    pub reports: Vec<Quantity>,
    /// The workload's named parameters as resolved for this launch (defaults with the caller's
    /// overrides applied), in declaration order, so that reports and sweeps can print them.
    pub parameters: Vec<(String, i64)>,
}
