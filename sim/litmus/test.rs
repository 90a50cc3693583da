//! The parsed form of a litmus test, common to both dialects: its locations with their initial values,
//! one instruction sequence per thread in the kernel IR ([`crate::ir::Inst`]) with thread-local
//! registers, the placement of each thread, the final condition and the declared expectation. Also
//! the builder the dialect parsers emit IR through (registers, locations, labels).
//!
//! A thread's code addresses a location through a register holding its address; the lowering
//! (`lower.rs`) computes that register per instance before the thread's first instruction, so the
//! same code runs every instance of the test on its own copy of the locations.

use super::cond::Condition;
use super::LitmusError;
use crate::ir::{Inst, Reg, SrcLoc, Ty};
use std::collections::HashMap;

/// The two herd-style dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `PTX NAME`: thread columns separated by `|`, rows ended by `;`.
    Ptx,
    /// `C NAME` or `OpenCL NAME`: one C function per thread.
    OpenCl,
}

/// A shared memory location of the test.
#[derive(Debug, Clone)]
pub struct Location {
    pub name: String,
    /// Initial value (two's complement of the location's type).
    pub init: i64,
    pub ty: Ty,
    /// Whether the type was given (declaration or a typed access), so that a conflicting width is
    /// an error rather than a silent change.
    pub ty_given: bool,
    pub loc: SrcLoc,
}

/// Initial value of a register: a number, or the address of a location (herd's `0:r1=x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegInit {
    Value(i64),
    Address(usize),
}

#[derive(Debug, Clone)]
pub struct RegInfo {
    pub name: String,
    /// How the register's value is read in conditions (32-bit values live in the low bits).
    pub ty: Ty,
}

/// One thread of the test, with its code in the IR.
#[derive(Debug, Clone)]
pub struct Thread {
    /// `P0`, `P1`, ...
    pub name: String,
    /// Work-group (`cta`/`wg`) the thread belongs to; threads with equal `cta` share a work-group.
    pub cta: u32,
    pub loc: SrcLoc,
    /// Branch targets index this vector; a target equal to its length ends the thread.
    pub insts: Vec<Inst>,
    pub locs: Vec<SrcLoc>,
    pub regs: Vec<RegInfo>,
    /// Registers that hold a location's address (location index, register).
    pub addr_regs: Vec<(usize, Reg)>,
    pub reg_init: Vec<(Reg, RegInit)>,
}

impl Thread {
    pub fn reg_named(&self, name: &str) -> Option<Reg> {
        self.regs
            .iter()
            .position(|r| r.name == name)
            .map(|i| i as Reg)
    }
}

/// What the test declares about its condition's witness (see [`super::cond::Condition::witness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Allowed,
    Forbidden,
}

impl Expect {
    pub fn name(self) -> &'static str {
        match self {
            Expect::Allowed => "allowed",
            Expect::Forbidden => "forbidden",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expectation {
    pub expect: Expect,
    /// An allowed witness that the modelled hardware can produce: `--check` fails when it never
    /// appears.
    pub required: bool,
}

impl std::fmt::Display for Expectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.expect.name())?;
        if self.required {
            f.write_str(", required")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct LitmusTest {
    pub name: String,
    pub file: String,
    pub dialect: Dialect,
    pub comment: Option<String>,
    pub locations: Vec<Location>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    pub expectation: Option<Expectation>,
}

impl LitmusTest {
    pub fn location_named(&self, name: &str) -> Option<usize> {
        self.locations.iter().position(|l| l.name == name)
    }
}

/// Emits one thread's IR: registers by name, locations by name (created on first use with initial
/// value 0, as in herd), labels with forward references.
pub struct ThreadBuilder<'a> {
    pub file: &'a str,
    pub locations: &'a mut Vec<Location>,
    pub t: Thread,
    labels: HashMap<String, u32>,
    fixups: Vec<(usize, String, SrcLoc)>,
    temps: u32,
}

impl<'a> ThreadBuilder<'a> {
    pub fn new(
        file: &'a str,
        locations: &'a mut Vec<Location>,
        name: String,
        cta: u32,
        loc: SrcLoc,
    ) -> Self {
        ThreadBuilder {
            file,
            locations,
            t: Thread {
                name,
                cta,
                loc,
                insts: Vec::new(),
                locs: Vec::new(),
                regs: Vec::new(),
                addr_regs: Vec::new(),
                reg_init: Vec::new(),
            },
            labels: HashMap::new(),
            fixups: Vec::new(),
            temps: 0,
        }
    }

    /// The init block's registers of this thread: (thread name, register, value, where).
    pub fn init_regs(
        &mut self,
        inits: &[(String, String, RegInit, SrcLoc)],
    ) -> Result<(), LitmusError> {
        let name = self.t.name.clone();
        for (t, r, init, at) in inits.iter().filter(|i| i.0 == name) {
            if self.t.reg_named(r).is_some() {
                return Err(self.error(*at, format!("{t}:{r} is initialised twice")));
            }
            let reg = self.reg(r);
            self.t.reg_init.push((reg, *init));
            // A register holding an address: the thread computes the location's address.
            if let RegInit::Address(l) = init {
                self.addr_reg(*l);
                self.set_ty(reg, Ty::U64);
            }
        }
        Ok(())
    }

    pub fn error(&self, at: SrcLoc, message: impl Into<String>) -> LitmusError {
        LitmusError::Syntax {
            file: self.file.to_string(),
            line: at.line,
            col: at.col,
            message: message.into(),
        }
    }

    /// The register called `name`, created on first use.
    pub fn reg(&mut self, name: &str) -> Reg {
        match self.t.reg_named(name) {
            Some(r) => r,
            None => {
                self.t.regs.push(RegInfo {
                    name: name.to_string(),
                    ty: Ty::I32,
                });
                (self.t.regs.len() - 1) as Reg
            }
        }
    }

    /// A fresh register for intermediate values (its name cannot clash with a user's).
    pub fn temp(&mut self) -> Reg {
        self.temps += 1;
        let name = format!("$t{}", self.temps);
        self.reg(&name)
    }

    pub fn set_ty(&mut self, r: Reg, ty: Ty) {
        self.t.regs[r as usize].ty = ty;
    }

    pub fn find_location(&self, name: &str) -> Option<usize> {
        self.locations.iter().position(|l| l.name == name)
    }

    /// The location called `name`, created (initially 0) on first use.
    pub fn location(&mut self, name: &str, at: SrcLoc) -> usize {
        match self.find_location(name) {
            Some(i) => i,
            None => {
                self.locations.push(Location {
                    name: name.to_string(),
                    init: 0,
                    ty: Ty::I32,
                    ty_given: false,
                    loc: at,
                });
                self.locations.len() - 1
            }
        }
    }

    /// Records that location `l` is accessed as `ty`; mixing widths is an error.
    pub fn access_ty(&mut self, l: usize, ty: Option<Ty>, at: SrcLoc) -> Result<Ty, LitmusError> {
        let cur = &mut self.locations[l];
        match ty {
            None => Ok(cur.ty),
            Some(t) if !cur.ty_given => {
                cur.ty = t;
                cur.ty_given = true;
                Ok(t)
            }
            Some(t) if t.width() == cur.ty.width() => Ok(t),
            Some(t) => {
                let (name, old) = (cur.name.clone(), cur.ty);
                Err(self.error(
                    at,
                    format!(
                        "location {name} is accessed as {} here but as {} elsewhere; one location has one width",
                        t.name(),
                        old.name()
                    ),
                ))
            }
        }
    }

    /// The register holding the address of location `l` in this thread.
    pub fn addr_reg(&mut self, l: usize) -> Reg {
        if let Some(&(_, r)) = self.t.addr_regs.iter().find(|(x, _)| *x == l) {
            return r;
        }
        let name = format!("&{}", self.locations[l].name);
        let r = self.reg(&name);
        self.t.regs[r as usize].ty = Ty::U64;
        self.t.addr_regs.push((l, r));
        r
    }

    pub fn emit(&mut self, inst: Inst, at: SrcLoc) {
        self.t.insts.push(inst);
        self.t.locs.push(at);
    }

    pub fn define_label(&mut self, name: &str, at: SrcLoc) -> Result<(), LitmusError> {
        if self.labels.contains_key(name) {
            return Err(self.error(
                at,
                format!("label {name} is defined twice in {}", self.t.name),
            ));
        }
        self.labels
            .insert(name.to_string(), self.t.insts.len() as u32);
        Ok(())
    }

    /// A label name no source label can have.
    pub fn fresh_label(&mut self) -> String {
        self.temps += 1;
        format!("$L{}", self.temps)
    }

    /// A branch to `label` (resolved in [`ThreadBuilder::finish`]).
    pub fn branch(&mut self, label: &str, cond: Option<(Reg, bool)>, at: SrcLoc) {
        self.fixups
            .push((self.t.insts.len(), label.to_string(), at));
        self.emit(Inst::Branch { target: 0, cond }, at);
    }

    pub fn finish(mut self) -> Result<Thread, LitmusError> {
        for (i, label, at) in std::mem::take(&mut self.fixups) {
            let Some(&t) = self.labels.get(&label) else {
                return Err(self.error(at, format!("unknown label {label} in {}", self.t.name)));
            };
            if let Inst::Branch { target, .. } = &mut self.t.insts[i] {
                *target = t;
            }
        }
        Ok(self.t)
    }
}
