//! The syntax tree of a kernel file: statements as written, with their expressions and operands,
//! names unresolved and nothing computed (`../lower/` resolves and evaluates).

use crate::ir::SrcLoc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// Binding strength (higher binds tighter) and the operator for a punctuation token.
    pub(super) fn of(p: &str) -> Option<(u8, BinOp)> {
        Some(match p {
            "||" => (1, BinOp::Or),
            "&&" => (2, BinOp::And),
            "==" => (3, BinOp::Eq),
            "!=" => (3, BinOp::Ne),
            "<" => (3, BinOp::Lt),
            "<=" => (3, BinOp::Le),
            ">" => (3, BinOp::Gt),
            ">=" => (3, BinOp::Ge),
            "|" => (4, BinOp::BitOr),
            "^" => (5, BinOp::BitXor),
            "&" => (6, BinOp::BitAnd),
            "<<" => (7, BinOp::Shl),
            ">>" => (7, BinOp::Shr),
            "+" => (8, BinOp::Add),
            "-" => (8, BinOp::Sub),
            "*" => (9, BinOp::Mul),
            "/" => (9, BinOp::Div),
            "%" => (9, BinOp::Rem),
            _ => return None,
        })
    }
}

/// An expression as written (constant expressions and check expressions share this syntax).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64, SrcLoc),
    Float(f64, SrcLoc),
    /// A parameter, buffer, bound variable or built-in constant (`global_size`, ...).
    Name(String, SrcLoc),
    /// `buffer[index]` (checks only).
    Index(String, Box<Expr>, SrcLoc),
    /// `f(args)`: `min`, `max`, `ceil_div`, `log2`, `sum`, `len`.
    Call(String, Vec<Expr>, SrcLoc),
    /// `sum|min|max(VAR = FROM .. TO : BODY)`.
    Fold {
        op: String,
        var: String,
        from: Box<Expr>,
        to: Box<Expr>,
        body: Box<Expr>,
        loc: SrcLoc,
    },
    Neg(Box<Expr>, SrcLoc),
    Not(Box<Expr>, SrcLoc),
    Bin(BinOp, Box<Expr>, Box<Expr>, SrcLoc),
}

impl Expr {
    pub fn loc(&self) -> SrcLoc {
        match self {
            Expr::Int(_, l)
            | Expr::Float(_, l)
            | Expr::Name(_, l)
            | Expr::Index(_, _, l)
            | Expr::Call(_, _, l)
            | Expr::Fold { loc: l, .. }
            | Expr::Neg(_, l)
            | Expr::Not(_, l)
            | Expr::Bin(_, _, _, l) => *l,
        }
    }
}

/// Initial contents of a buffer as written.
#[derive(Debug, Clone, PartialEq)]
pub enum InitSyn {
    Zero,
    Fill(Expr),
    Iota,
    Random { seed: Expr, modulo: Expr },
    Values(Vec<Expr>),
}

/// What a bracketed address or index holds: a base and a constant part.
#[derive(Debug, Clone, PartialEq)]
pub enum BaseSyn {
    Reg(String, SrcLoc),
    /// A bare name: a buffer, local array or parameter (resolved by lowering).
    Name(String, SrcLoc),
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bracket {
    pub base: BaseSyn,
    /// Constant part (byte offset of an address, element offset of an index).
    pub offset: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// `%name`, `%name.x`.
    Reg {
        name: String,
        dim: Option<String>,
        loc: SrcLoc,
    },
    /// `[ ... ]`: a byte address.
    Addr(Bracket, SrcLoc),
    /// `name[ ... ]`: element of a buffer or local array.
    Indexed(String, Bracket, SrcLoc),
    /// A constant expression, or a bare name (buffer, local array, label, parameter).
    Expr(Expr, SrcLoc),
}

impl Operand {
    pub fn loc(&self) -> SrcLoc {
        match self {
            Operand::Reg { loc, .. }
            | Operand::Addr(_, loc)
            | Operand::Indexed(_, _, loc)
            | Operand::Expr(_, loc) => *loc,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct InstSyn {
    /// `@%p` (true) or `@!%p` (false).
    pub pred: Option<(String, bool, SrcLoc)>,
    pub mnemonic: String,
    pub quals: Vec<(String, SrcLoc)>,
    pub operands: Vec<Operand>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Param {
        name: String,
        value: Expr,
    },
    Require {
        cond: Expr,
        message: Option<String>,
    },
    Groups(Vec<Expr>),
    GroupSize(Vec<Expr>),
    Buffer {
        name: String,
        ty: (String, SrcLoc),
        len: Expr,
        init: InitSyn,
    },
    Local {
        name: String,
        ty: (String, SrcLoc),
        len: Expr,
    },
    Arg {
        name: String,
        ty: (String, SrcLoc),
        value: Expr,
    },
    Reg(Vec<(String, SrcLoc)>),
    Check {
        forall: Option<(String, String, SrcLoc)>,
        expr: Expr,
        text: String,
    },
    Report {
        name: String,
        expr: Expr,
    },
    Kernel {
        name: String,
    },
    /// The `}` closing the kernel block.
    EndKernel,
    Label(String),
    Inst(InstSyn),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub loc: SrcLoc,
}
