//! The final condition of a litmus test (herd's syntax) and its evaluation on a final state.
//!
//! Grammar (herd's, `lib/stateParser.mly`): `[locations [v; v; ...]] [filter prop] (exists |
//! ~exists | forall) prop`, where `prop := impl`, `impl := disj (=> impl)?`, `disj := conj (\/ conj)*`,
//! `conj := unary (/\ unary)*`, `unary := ~ unary | ( prop ) | true | false | term (= | == | !=)
//! term` (and Dat3M's ordered `< <= > >=`, on values as numbers of their type). A term is an integer, a register `P1:r0` or `1:r0`, a location's value `x`, `[x]` or `*x`
//! on the left of a comparison (`[x]` or `*x` on the right: a bare name there is the location's
//! *address* in herd, which conditions here cannot compare), or an array element `y[1]`. `&&`,
//! `||`, `!` and `not` are accepted as spellings of `/\`, `\/`, `~`; `a => b` is read as
//! `~a \/ b`.
//!
//! Deeply nested input cannot exhaust the stack: nesting of parentheses and negations is limited
//! to [`MAX_DEPTH`], and chains of `/\` or `\/` are built as balanced trees (depth logarithmic in
//! their length), so evaluation, printing and dropping stay shallow too.
//!
//! The *observed variables* are the registers and locations the condition (or a `locations` clause)
//! names, in order of first mention; a final state is their values, which is what outcomes count.
//!
//! A `filter` clause (herd7 and litmus7): executions whose final state fails the filter's
//! proposition are discarded before the final condition is judged, so the oracle's allowed states,
//! the simulator's outcomes and every count leave them out (the simulator counts them apart, as
//! *filtered*). The filter's variables are observed like the condition's.
//!
//! The *witness* of a condition is a state that decides it: for `exists` and `~exists`, a state
//! where the proposition holds; for `forall`, one where it does not. Expectations are about
//! witnesses (`expect: forbidden` = no witness may ever be observed).

use super::lex::{Cursor, Tok};
use super::test::{Location, Thread};
use super::LitmusError;
use crate::ir::{eval, CmpOp, Reg, SrcLoc, Ty};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantifier {
    Exists,
    NotExists,
    Forall,
}

impl Quantifier {
    pub fn name(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "not_exists",
            Quantifier::Forall => "forall",
        }
    }
}

/// Deepest nesting of parentheses and negations in a condition.
pub const MAX_DEPTH: usize = 200;

/// A variable of the final state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Var {
    Reg {
        thread: usize,
        reg: Reg,
    },
    /// A scalar location's final value.
    Loc(usize),
    /// An element of an array location (`y[1]`).
    Elem {
        loc: usize,
        index: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Const(i64),
    /// Index into [`Condition::observed`].
    Var(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prop {
    Const(bool),
    /// `a OP b`: herd's `=` (`==`) and `!=`, and Dat3M's ordered `< <= > >=`, on values as
    /// numbers of their register's or location's type (signed for signed types).
    Cmp {
        op: CmpOp,
        a: Term,
        b: Term,
    },
    Not(Box<Prop>),
    And(Box<Prop>, Box<Prop>),
    Or(Box<Prop>, Box<Prop>),
}

impl Prop {
    pub fn eval(&self, state: &[i64]) -> bool {
        let v = |t: &Term| match *t {
            Term::Const(c) => c,
            Term::Var(i) => state[i],
        };
        match self {
            Prop::Const(b) => *b,
            Prop::Cmp { op, a, b } => eval::cmp(*op, Ty::I64, v(a) as u64, v(b) as u64),
            Prop::Not(p) => !p.eval(state),
            Prop::And(a, b) => a.eval(state) && b.eval(state),
            Prop::Or(a, b) => a.eval(state) || b.eval(state),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Condition {
    pub quantifier: Quantifier,
    pub prop: Prop,
    /// herd's `filter` clause: states where it does not hold are discarded (module header).
    pub filter: Option<Prop>,
    pub observed: Vec<Var>,
    /// The condition as written (whitespace collapsed).
    pub text: String,
    pub loc: SrcLoc,
}

impl Condition {
    /// Whether `state` passes the `filter` clause (always, without one).
    pub fn kept(&self, state: &[i64]) -> bool {
        self.filter.as_ref().map_or(true, |f| f.eval(state))
    }

    /// Whether `state` (values of [`Condition::observed`]) is a witness (see the module header).
    pub fn witness(&self, state: &[i64]) -> bool {
        let p = self.prop.eval(state);
        match self.quantifier {
            Quantifier::Exists | Quantifier::NotExists => p,
            Quantifier::Forall => !p,
        }
    }

    pub fn var_name(&self, i: usize, threads: &[Thread], locations: &[Location]) -> String {
        match self.observed[i] {
            Var::Reg { thread, reg } => format!(
                "{}:{}",
                threads[thread].name, threads[thread].regs[reg as usize].name
            ),
            Var::Loc(l) => locations[l].name.clone(),
            Var::Elem { loc, index } => locations[loc].elem_name(index),
        }
    }
}

/// `items` combined by `mk` into a balanced tree (`None` for no items).
fn balanced(mut items: Vec<Prop>, mk: fn(Box<Prop>, Box<Prop>) -> Prop) -> Option<Prop> {
    fn build(items: &mut Vec<Prop>, n: usize, mk: fn(Box<Prop>, Box<Prop>) -> Prop) -> Prop {
        if n == 1 {
            // Items are taken from the back, so the right half is built first.
            return items.pop().expect("n items left");
        }
        let right = build(items, n - n / 2, mk);
        let left = build(items, n / 2, mk);
        mk(Box::new(left), Box::new(right))
    }
    let n = items.len();
    (n > 0).then(|| build(&mut items, n, mk))
}

struct CondParser<'c, 'a> {
    c: &'c mut Cursor<'a>,
    threads: &'c [Thread],
    locations: &'c [Location],
    observed: Vec<Var>,
    depth: usize,
}

/// Parses the condition at the cursor (to the end of input, or to a scope tree after it).
pub fn parse(
    c: &mut Cursor,
    threads: &[Thread],
    locations: &[Location],
    text: String,
) -> Result<Condition, LitmusError> {
    let loc = c.loc();
    let mut p = CondParser {
        c,
        threads,
        locations,
        observed: Vec::new(),
        depth: 0,
    };
    if p.c.eat_ident("locations") {
        p.c.expect_punct("[")?;
        while !p.c.eat_punct("]") {
            let v = p.var()?;
            p.observe(v);
            if !p.c.eat_punct(";") && !p.c.is_punct("]") {
                return Err(p.c.error("`;` or `]`"));
            }
        }
    }
    let filter = if p.c.eat_ident("filter") {
        Some(p.implication()?)
    } else {
        None
    };
    let quantifier = if p.c.eat_ident("exists") {
        Quantifier::Exists
    } else if p.c.eat_ident("forall") {
        Quantifier::Forall
    } else if (p.c.eat_punct("~") || p.c.eat_punct("!") || p.c.eat_ident("not"))
        && p.c.eat_ident("exists")
    {
        Quantifier::NotExists
    } else {
        return Err(p.c.error(
            "the final condition (`exists`, `~exists` or `forall` followed by a proposition)",
        ));
    };
    let prop = p.implication()?;
    if p.c.is_ident("filter") {
        return Err(p.c.error_at(
            p.c.loc(),
            "a `filter` clause stands before the final condition (`filter P exists Q`)",
        ));
    }
    if p.c.is_ident("with") {
        return Err(p.c.error_at(p.c.loc(), "`with` clauses are not supported"));
    }
    if !p.c.at_end() && !super::scope_tree::at_section(p.c) {
        return Err(p.c.error(
            "the end of the test after the condition (or a scope tree, `scopeTree (device ...)`)",
        ));
    }
    Ok(Condition {
        quantifier,
        prop,
        filter,
        observed: p.observed,
        text,
        loc,
    })
}

impl CondParser<'_, '_> {
    fn observe(&mut self, v: Var) -> usize {
        match self.observed.iter().position(|&o| o == v) {
            Some(i) => i,
            None => {
                self.observed.push(v);
                self.observed.len() - 1
            }
        }
    }

    fn implication(&mut self) -> Result<Prop, LitmusError> {
        let a = self.disj()?;
        if self.c.is_punct("=") && matches!(self.c.peek_at(1), Some(Tok::Punct(">"))) {
            self.c.next();
            self.c.next();
            self.enter()?;
            let b = self.implication()?;
            self.depth -= 1;
            return Ok(Prop::Or(Box::new(Prop::Not(Box::new(a))), Box::new(b)));
        }
        Ok(a)
    }

    fn disj(&mut self) -> Result<Prop, LitmusError> {
        let mut items = vec![self.conj()?];
        while self.c.eat_punct("\\/") || self.c.eat_punct("||") {
            items.push(self.conj()?);
        }
        Ok(balanced(items, Prop::Or).expect("one item"))
    }

    fn conj(&mut self) -> Result<Prop, LitmusError> {
        let mut items = vec![self.unary()?];
        while self.c.eat_punct("/\\") || self.c.eat_punct("&&") {
            items.push(self.unary()?);
        }
        Ok(balanced(items, Prop::And).expect("one item"))
    }

    /// One more level of nesting, within [`MAX_DEPTH`].
    fn enter(&mut self) -> Result<(), LitmusError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.c.error_at(
                self.c.loc(),
                format!("the condition nests parentheses and negations more than {MAX_DEPTH} deep"),
            ));
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<Prop, LitmusError> {
        if self.c.eat_punct("~") || self.c.eat_punct("!") || self.c.eat_ident("not") {
            self.enter()?;
            let p = self.unary()?;
            self.depth -= 1;
            return Ok(Prop::Not(Box::new(p)));
        }
        if self.c.eat_punct("(") {
            self.enter()?;
            let p = self.implication()?;
            self.depth -= 1;
            self.c.expect_punct(")")?;
            return Ok(p);
        }
        if self.c.eat_ident("true") {
            return Ok(Prop::Const(true));
        }
        if self.c.eat_ident("false") {
            return Ok(Prop::Const(false));
        }
        let a = self.term(true)?;
        let op = if self.c.eat_punct("==")
            || (self.c.is_punct("=")
                && !matches!(self.c.peek_at(1), Some(Tok::Punct(">")))
                && self.c.eat_punct("="))
        {
            CmpOp::Eq
        } else if self.c.eat_punct("!=") {
            CmpOp::Ne
        } else if self.c.eat_punct("<=") {
            CmpOp::Le
        } else if self.c.eat_punct(">=") {
            CmpOp::Ge
        } else if self.c.eat_punct("<") {
            CmpOp::Lt
        } else if self.c.eat_punct(">") {
            CmpOp::Gt
        } else {
            return Err(self.c.error("`=`, `==`, `!=`, `<`, `<=`, `>` or `>=`"));
        };
        // herd reads a bare name on the right of `=`/`!=` as an address; it has no ordered
        // comparisons, whose right side is a value as in Dat3M.
        let ordered = !matches!(op, CmpOp::Eq | CmpOp::Ne);
        let b = self.term(ordered)?;
        Ok(Prop::Cmp { op, a, b })
    }

    /// A term; `value`: where a bare location name is its value (the left of a comparison, either
    /// side of an ordered one); on the right of `=` and `!=`, herd reads it as the location's
    /// address.
    fn term(&mut self, value: bool) -> Result<Term, LitmusError> {
        // A number not followed by `:` is a constant (`1:r0` is a register).
        if matches!(self.c.peek(), Some(Tok::Int(_)))
            && !matches!(self.c.peek_at(1), Some(Tok::Punct(":")))
            || self.c.is_punct("-")
        {
            return Ok(Term::Const(self.c.int("a number")?.0));
        }
        if !value {
            if let (Some(Tok::Ident(name)), false) = (
                self.c.peek(),
                matches!(self.c.peek_at(1), Some(Tok::Punct(":"))),
            ) {
                if self.locations.iter().any(|l| l.name == *name) {
                    return Err(self.c.error_at(
                        self.c.loc(),
                        format!("on the right of `=`, `{name}` is the address of {name} (herd's reading); comparing with addresses is not supported: write [{name}] for its value"),
                    ));
                }
            }
        }
        let v = self.var()?;
        Ok(Term::Var(self.observe(v)))
    }

    fn var(&mut self) -> Result<Var, LitmusError> {
        let at = self.c.loc();
        if self.c.eat_punct("[") {
            let (name, at) = self.c.ident("a location")?;
            self.c.expect_punct("]")?;
            return self.location(&name, at);
        }
        if self.c.eat_punct("*") {
            let (name, at) = self.c.ident("a location")?;
            return self.location(&name, at);
        }
        let thread = match self.c.peek() {
            Some(Tok::Int(n)) if matches!(self.c.peek_at(1), Some(Tok::Punct(":"))) => {
                self.c.next();
                Some(format!("P{n}"))
            }
            Some(Tok::Ident(s)) if matches!(self.c.peek_at(1), Some(Tok::Punct(":"))) => {
                self.c.next();
                Some(s.clone())
            }
            Some(Tok::Ident(_)) => None,
            _ => return Err(self.c.error("a register (`P0:r0`), a location or a number")),
        };
        match thread {
            Some(tname) => {
                self.c.expect_punct(":")?;
                let (reg, rat) = self.c.ident("a register name")?;
                let Some(ti) = self.threads.iter().position(|t| t.name == tname) else {
                    let names: Vec<&str> = self.threads.iter().map(|t| t.name.as_str()).collect();
                    return Err(self.c.error_at(
                        at,
                        format!(
                            "no thread {tname} in this test (threads: {})",
                            names.join(", ")
                        ),
                    ));
                };
                let Some(r) = self.threads[ti].reg_named(&reg) else {
                    return Err(self.c.error_at(
                        rat,
                        format!("{tname} has no register {reg} (neither written by its code nor initialised)"),
                    ));
                };
                Ok(Var::Reg { thread: ti, reg: r })
            }
            None => {
                let (name, at) = self.c.ident("a location")?;
                self.location(&name, at)
            }
        }
    }

    /// Location `name`'s value, or with `[i]` following, an element's.
    fn location(&mut self, name: &str, at: SrcLoc) -> Result<Var, LitmusError> {
        let Some(l) = self.locations.iter().position(|l| l.name == name) else {
            return Err(self.c.error_at(
                at,
                format!("unknown location {name} (not initialised and not accessed by any thread)"),
            ));
        };
        let loc = &self.locations[l];
        if self.c.is_punct("[") && matches!(self.c.peek_at(1), Some(Tok::Int(_))) {
            self.c.next();
            let (i, iat) = self.c.int("an element index")?;
            self.c.expect_punct("]")?;
            return match u32::try_from(i).ok().filter(|&i| loc.array && i < loc.len) {
                Some(index) => Ok(Var::Elem { loc: l, index }),
                None => Err(self.c.error_at(
                    iat,
                    format!(
                        "{name} has no element {i} ({})",
                        if loc.array {
                            format!("{} elements", loc.len)
                        } else {
                            "not an array".to_string()
                        }
                    ),
                )),
            };
        }
        if loc.array {
            return Err(self.c.error_at(
                at,
                format!(
                    "{name} is an array: name one of its elements ({name}[0] ... {name}[{}])",
                    loc.len - 1
                ),
            ));
        }
        Ok(Var::Loc(l))
    }
}
