//! The syntax tree of the C subset, as written: declarations, statements, expressions, types.
//! Names are not resolved and nothing is typed here; `lower` does both.

use super::types::STy;
use crate::ir::SrcLoc;

/// An address-space qualifier (OpenCL `__global`/`__local`/`__private`/`__constant`, CUDA
/// `__shared__`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrSpace {
    Global,
    Local,
    Private,
    Constant,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BaseTy {
    Void,
    Scalar(STy),
    /// C++ `auto`: the type of the initialiser.
    Auto,
    /// `cuda::atomic_ref<T, cuda::thread_scope_X>` (scope as written; none: system).
    AtomicRef {
        elem: Box<TypeName>,
        scope: Option<(Vec<String>, SrcLoc)>,
    },
}

/// Declaration specifiers: the base type and its qualifiers.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeSpec {
    pub base: BaseTy,
    pub konst: bool,
    pub volatile: bool,
    /// An atomic type (`atomic_int`, `_Atomic int`).
    pub atomic: bool,
    pub space: Option<(AddrSpace, SrcLoc)>,
    pub loc: SrcLoc,
}

/// Qualifiers of one `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PtrQual {
    pub konst: bool,
    pub volatile: bool,
}

/// A type as written in a cast, a template argument or `sizeof`.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeName {
    pub spec: TypeSpec,
    pub ptrs: Vec<PtrQual>,
    /// C++ reference `T&`.
    pub reference: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Expr(Expr),
    /// `= { a, b }`.
    List(Vec<Expr>, SrcLoc),
    /// C++ direct initialisation `T x(a, b)` / `T x{a}`.
    Ctor(Vec<Expr>, SrcLoc),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    pub name: String,
    pub loc: SrcLoc,
    pub ptrs: Vec<PtrQual>,
    pub reference: bool,
    /// Array dimensions; `None` for `[]`.
    pub array: Vec<Option<Expr>>,
    pub init: Option<Init>,
}

/// Storage-class and CUDA memory-space words of a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Storage {
    /// CUDA `__shared__`.
    pub shared: bool,
    pub extern_: bool,
    pub static_: bool,
    /// CUDA `__global__`, OpenCL `__kernel` (a function declaration).
    pub kernel: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    pub spec: TypeSpec,
    pub storage: Storage,
    pub decls: Vec<Declarator>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
}

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
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TemplateArg {
    Type(TypeName),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Int(u64, STy),
    /// A floating literal (`true`: written with the `f` suffix).
    Float(f64, bool),
    Str(String),
    /// A name, possibly qualified (`cuda::memory_order_relaxed` is `["cuda", "memory_order_relaxed"]`).
    Name(Vec<String>),
    /// A template name with its arguments (`cuda::atomic_ref<int, cuda::thread_scope_block>`).
    Template(Vec<String>, Vec<TemplateArg>),
    Unary(UnOp, Box<Expr>),
    /// `++x` / `--x` (`true`: increment).
    PreInc(bool, Box<Expr>),
    /// `x++` / `x--`.
    PostInc(bool, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `&&` (`true`) or `||`.
    Logical(bool, Box<Expr>, Box<Expr>),
    /// `a = b`, or a compound assignment `a op= b`.
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `a.b` (`false`) or `a->b` (`true`).
    Member(Box<Expr>, String, bool),
    Cast(Box<TypeName>, Box<Expr>),
    SizeofType(Box<TypeName>),
    SizeofExpr(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: SrcLoc,
}

impl Expr {
    pub fn new(kind: ExprKind, loc: SrcLoc) -> Expr {
        Expr { kind, loc }
    }

    /// The name of a plain (unqualified) identifier.
    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(p) if p.len() == 1 => Some(&p[0]),
            _ => None,
        }
    }
}

/// `asm("template" : "=r"(out))`: the one form the front end reads (special registers).
#[derive(Debug, Clone, PartialEq)]
pub struct Asm {
    pub template: String,
    pub outputs: Vec<(String, Expr)>,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Empty,
    Expr(Expr),
    Decl(Decl),
    Block(Vec<Stmt>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    Switch(Expr, Box<Stmt>),
    Case(Expr, Box<Stmt>),
    Default(Box<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    Goto(String),
    Label(String, Box<Stmt>),
    Asm(Asm),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    /// CUDA `__global__`, OpenCL `__kernel`.
    Kernel,
    /// CUDA `__device__`, an OpenCL helper function: inlined at each call.
    Device,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    pub ty: TypeName,
    pub name: String,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub kind: FnKind,
    pub ret: TypeName,
    pub name: String,
    pub loc: SrcLoc,
    pub params: Vec<ParamDecl>,
    pub body: Vec<Stmt>,
    /// Where the body's closing brace is (the implicit return).
    pub end: SrcLoc,
}

/// A translation unit: its functions and file-scope `__shared__` / `__local` declarations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unit {
    pub functions: Vec<Function>,
    pub globals: Vec<Decl>,
}
