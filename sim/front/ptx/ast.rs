//! The PTX syntax tree: a module's variables and functions, a function's statements, an
//! instruction's opcode, modifiers and operands — as written, with places; no meaning yet (the
//! lowering gives it).

use crate::ir::SrcLoc;

/// A state space of a variable declaration (PTX ISA §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateSpace {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

impl StateSpace {
    pub fn name(self) -> &'static str {
        match self {
            StateSpace::Global => "global",
            StateSpace::Const => "const",
            StateSpace::Shared => "shared",
            StateSpace::Local => "local",
            StateSpace::Param => "param",
        }
    }
}

/// An initialiser element.
#[derive(Debug, Clone, PartialEq)]
pub enum InitVal {
    Int(i128),
    Float(f64),
    F32Bits(u32),
    F64Bits(u64),
    /// The address of another variable (`generic(x)` or `x`): not modelled.
    Symbol(String),
}

/// `.global .align 4 .u32 name[4] = {...};` and the like.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub space: StateSpace,
    pub name: String,
    /// Element type without the dot (`u32`, `b8`, ...), and where it was written.
    pub ty: String,
    pub ty_loc: SrcLoc,
    pub align: Option<u64>,
    /// `None`: a scalar; `Some(None)`: `name[]` (size from elsewhere); `Some(Some(n))`: `n` elements
    /// (the product of every dimension).
    pub array: Option<Option<u64>>,
    /// `.v2`/`.v4` element vectors.
    pub vector: u32,
    pub init: Option<Vec<InitVal>>,
    pub is_extern: bool,
    pub loc: SrcLoc,
}

/// One operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Opnd {
    /// A register, special register (`%tid.x`), variable, function or label name.
    Name(String, SrcLoc),
    /// An integer immediate (two's complement, already negated).
    Int(i128, SrcLoc),
    Float(f64, SrcLoc),
    F32Bits(u32, SrcLoc),
    F64Bits(u64, SrcLoc),
    /// `[base]`, `[base+off]`, `[off]`.
    Addr {
        base: Option<String>,
        offset: i64,
        loc: SrcLoc,
    },
    /// `{a, b, ...}`: a vector of registers.
    Vector(Vec<Opnd>, SrcLoc),
    /// `(a, b, ...)`: the argument or return list of a `call`.
    List(Vec<Opnd>, SrcLoc),
    /// `!p`.
    Not(Box<Opnd>, SrcLoc),
    /// `p|q` (a two-result `setp`).
    Pair(Box<Opnd>, Box<Opnd>, SrcLoc),
    /// `_` (a sink destination).
    Sink(SrcLoc),
}

impl Opnd {
    pub fn loc(&self) -> SrcLoc {
        match self {
            Opnd::Name(_, l)
            | Opnd::Int(_, l)
            | Opnd::Float(_, l)
            | Opnd::F32Bits(_, l)
            | Opnd::F64Bits(_, l)
            | Opnd::Vector(_, l)
            | Opnd::List(_, l)
            | Opnd::Not(_, l)
            | Opnd::Pair(_, _, l)
            | Opnd::Sink(l) => *l,
            Opnd::Addr { loc, .. } => *loc,
        }
    }
}

/// One instruction: `@!%p op.mod.mod a, b, c;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instr {
    /// The guard predicate: register name, negated, place.
    pub guard: Option<(String, bool, SrcLoc)>,
    pub op: String,
    /// Modifiers in order, without dots.
    pub mods: Vec<(String, SrcLoc)>,
    pub operands: Vec<Opnd>,
    pub loc: SrcLoc,
}

impl Instr {
    pub fn has(&self, m: &str) -> bool {
        self.mods.iter().any(|(x, _)| x == m)
    }
    /// The whole opcode as written (`ld.global.u32`).
    pub fn spelled(&self) -> String {
        let mut s = self.op.clone();
        for (m, _) in &self.mods {
            s.push('.');
            s.push_str(m);
        }
        s
    }
}

/// A statement of a function body.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `.reg .b32 %r<5>, %x;`: type and the names, each with its range count (`%r<5>` is `%r0`..`%r4`).
    Reg {
        ty: String,
        names: Vec<(String, Option<u32>, SrcLoc)>,
        loc: SrcLoc,
    },
    Var(VarDecl),
    Label(String, SrcLoc),
    Inst(Instr),
    /// `{ ... }`: a nested scope.
    Block(Vec<Stmt>, SrcLoc),
}

/// A `.param` of a function: `.param .u64 name`, `.param .align 8 .b8 name[16]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    pub name: String,
    pub ty: String,
    pub array: Option<u64>,
    /// `.ptr` attribute (with `.global` / `.shared` ...): a pointer parameter.
    pub ptr: bool,
    pub loc: SrcLoc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Func {
    pub name: String,
    pub entry: bool,
    pub params: Vec<ParamDecl>,
    /// A `.func`'s return parameters.
    pub rets: Vec<ParamDecl>,
    /// `None`: a declaration without a body (`.extern .func`).
    pub body: Option<Vec<Stmt>>,
    pub loc: SrcLoc,
    pub end: SrcLoc,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    pub vars: Vec<VarDecl>,
    pub funcs: Vec<Func>,
}
