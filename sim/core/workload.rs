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

/// Most work-groups one launch may have: the dispatcher keeps a queue entry per work-group, so the
/// number is bounded before anything is allocated (2^24 work-groups take 128 MiB of queue; CUDA's
/// grid allows more, but a launch that large would not finish in simulation anyway).
pub const MAX_GROUPS: u64 = 1 << 24;
/// Most work-items in one work-group: the largest `sm.max_threads` a config may give (a larger group
/// fits no SM). CUDA and OpenCL devices allow 1024.
pub const MAX_GROUP_SIZE: u64 = 65536;

/// Whether a launch of `groups` work-groups of `group_size` work-items each is within the limits
/// every front end applies when it reads a launch ([`MAX_GROUPS`], [`MAX_GROUP_SIZE`]); `Err` says
/// which limit and the value, for the front end to place at the line that declared it.
pub fn check_launch(groups: [u32; 3], group_size: [u32; 3]) -> Result<(), LaunchLimit> {
    let total = |d: [u32; 3]| d.iter().map(|&x| x as u64).product::<u64>();
    let dims = |d: [u32; 3]| format!("{} x {} x {}", d[0], d[1], d[2]);
    if total(group_size) > MAX_GROUP_SIZE {
        return Err(LaunchLimit::GroupSize(format!(
            "a work-group of {} = {} work-items: at most {MAX_GROUP_SIZE} (the most any SM holds)",
            dims(group_size),
            total(group_size)
        )));
    }
    // At most 2^96: exact in u128.
    let groups_total = groups.iter().map(|&x| x as u128).product::<u128>();
    if groups_total > MAX_GROUPS as u128 {
        return Err(LaunchLimit::Groups(format!(
            "{} = {groups_total} work-groups: at most {MAX_GROUPS} in one launch",
            dims(groups)
        )));
    }
    Ok(())
}

/// Which launch limit a geometry exceeds, with the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchLimit {
    Groups(String),
    GroupSize(String),
}

impl std::fmt::Display for LaunchLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaunchLimit::Groups(m) | LaunchLimit::GroupSize(m) => f.write_str(m),
        }
    }
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
