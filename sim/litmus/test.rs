//! The parsed form of a litmus test, common to both dialects: its locations with their initial values,
//! one instruction sequence per thread in the kernel IR ([`crate::ir::Inst`]) with thread-local
//! registers, the placement of each thread, the final condition and the declared expectation. Also
//! the builder the dialect parsers emit IR through (registers, locations, labels).
//!
//! A thread's code addresses a location through a register holding its address; the lowering
//! (`lower.rs`) computes that register per instance before the thread's first instruction, so the
//! same code runs every instance of the test on its own copy of the locations.
//!
//! Beyond the IR, a thread records what the machine cannot run yet (named barriers, sub-word widths,
//! a second device, ...): [`NamedBarrier`] for every PTX barrier as written and [`Pending`] for other
//! constructs, each with its source location; `capability.rs` turns them into load-time errors.
//!
//! Address arithmetic: an access through a register that is not a location's own address register
//! goes through a *checked address* ([`ThreadBuilder::checked_address`]): the address is compared
//! with the bounds of the instance's copy of the location it was derived from and replaced by an
//! address no memory holds when it leaves them, so that the machine stops the run with an
//! out-of-bounds error at that access instead of touching another instance's copy.

pub use super::capability::{BarrierAction, BarrierReduction, Capability, NamedBarrier, Pending};
use super::cond::Condition;
use super::LitmusError;
use crate::ir::{Address, AluOp, CmpOp, Inst, Operand, Reg, Space, SrcLoc, Ty};
use crate::text::Located;
use std::collections::HashMap;

/// Most threads a test may have (each runs as one warp of its work-group).
pub const MAX_THREADS: usize = 64;
/// Most locations a test may have.
pub const MAX_LOCATIONS: usize = 256;
/// Most elements of one array location.
pub const MAX_ARRAY_LEN: u64 = 4096;
/// Most bytes of all locations of one instance together.
pub const MAX_INSTANCE_BYTES: u64 = 64 * 1024;

/// The two herd-style dialects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `PTX NAME`: thread columns separated by `|`, rows ended by `;`.
    Ptx,
    /// `C NAME` or `OpenCL NAME`: one C function per thread.
    OpenCl,
}

/// A shared memory location of the test: a scalar, or an array of `len` elements
/// (`int y[2] = {0, 0};`).
#[derive(Debug, Clone)]
pub struct Location {
    pub name: String,
    /// Initial value of the scalar, or of element 0 of an array (two's complement of the type).
    pub init: i64,
    pub ty: Ty,
    /// Whether the type was given (declaration or a typed access), so that a conflicting width is
    /// an error rather than a silent change.
    pub ty_given: bool,
    pub loc: SrcLoc,
    /// Global memory, or work-group-local memory (OpenCL `local`, PTX `.shared`): one copy per
    /// work-group, shared by the test's threads of that work-group only.
    pub space: Space,
    /// Whether the space was declared (init block, parameter or a `.shared`/`.global` access).
    pub space_given: bool,
    /// Declared as an array (`y[2]`); conditions then name its elements (`y[1]`).
    pub array: bool,
    /// Elements: 1 for a scalar.
    pub len: u32,
    /// Initial value of each element (`len` values; `elems[0] == init`).
    pub elems: Vec<i64>,
}

impl Location {
    /// A global scalar.
    pub fn scalar(name: String, init: i64, ty: Option<Ty>, loc: SrcLoc) -> Location {
        Location {
            name,
            init,
            ty: ty.unwrap_or(Ty::I32),
            ty_given: ty.is_some(),
            loc,
            space: Space::Global,
            space_given: false,
            array: false,
            len: 1,
            elems: vec![init],
        }
    }

    /// Bytes of one instance's copy.
    pub fn bytes(&self) -> u64 {
        self.len as u64 * self.ty.width().bytes() as u64
    }

    /// `x`, or `y[1]` for an element of an array.
    pub fn elem_name(&self, index: u32) -> String {
        if self.array {
            format!("{}[{index}]", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// Initial value of a register: a number, or the address of a location (herd's `0:r1=x`) or of
/// one of its elements (`0:r1=y[1]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegInit {
    Value(i64),
    Address(usize),
    Element { loc: usize, index: u32 },
}

impl RegInit {
    /// The location whose address this is.
    pub fn location(self) -> Option<usize> {
        match self {
            RegInit::Value(_) => None,
            RegInit::Address(l) | RegInit::Element { loc: l, .. } => Some(l),
        }
    }
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
    /// Work-group (`cta`/`wg`) the thread belongs to; threads with equal `cta` (and device) share
    /// a work-group.
    pub cta: u32,
    /// Device (`gpu`/`dev`) the thread runs on.
    pub device: u32,
    /// Whether its header placed it (`@cta 0,gpu 0`), so that a scope tree may not place it too.
    pub placed: bool,
    pub loc: SrcLoc,
    /// Branch targets index this vector; a target equal to its length ends the thread.
    pub insts: Vec<Inst>,
    pub locs: Vec<SrcLoc>,
    pub regs: Vec<RegInfo>,
    /// Registers that hold a location's address (location index, register).
    pub addr_regs: Vec<(usize, Reg)>,
    pub reg_init: Vec<(Reg, RegInit)>,
    /// Registers holding the checked address of one access into a location (see the module
    /// header): (register, location).
    pub checked: Vec<(Reg, usize)>,
    /// Every PTX barrier instruction as written, in program order.
    pub barriers: Vec<NamedBarrier>,
    /// Constructs the machine cannot run yet.
    pub pending: Vec<Pending>,
    /// Constructs herd accepts and marks the program undefined for (PTX `st.acquire`,
    /// `ld.release`; OpenCL loads written release, stores written acquire, a compare-exchange
    /// failure order release or acq_rel, C11 7.17.7): where, and what. The oracle's verdict is
    /// `Undef`; the machine runs the access with the order's part that fits it (relaxed when none).
    pub undefined: Vec<(SrcLoc, String)>,
}

impl Thread {
    /// Whether the thread has a backward branch (a loop), so that it may run for ever.
    pub fn has_loop(&self) -> bool {
        super::model::loop_headers(&self.insts).contains(&true)
    }

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
    /// The name token of the header line (herd's test name: letters, digits, `_ / . - + [ ]`).
    pub name: String,
    pub file: String,
    pub dialect: Dialect,
    /// The rest of the header line after the name (herd's `(texname)`, or a description).
    pub title: Option<String>,
    /// The quoted strings between the header and the init block, joined by line breaks.
    pub comment: Option<String>,
    /// The `key = value` lines between the header and the init block (`Hash=...`, `Cycle=...`), in
    /// order; herd7 and litmus7 print them with the results.
    pub info: Vec<(String, String)>,
    pub locations: Vec<Location>,
    pub threads: Vec<Thread>,
    pub condition: Condition,
    pub expectation: Option<Expectation>,
    /// Constructs of the init block the machine cannot run yet (a thread's own are in
    /// `Thread::pending`).
    pub pending: Vec<Pending>,
}

impl LitmusTest {
    pub fn location_named(&self, name: &str) -> Option<usize> {
        self.locations.iter().position(|l| l.name == name)
    }

    /// Gives every access to a location the location's address space: front ends emit global
    /// accesses, and a location declared `local`/`.shared` anywhere in the test makes all of its
    /// accesses local (run once all threads are parsed, since any thread may declare it).
    pub fn apply_spaces(&mut self) {
        for t in 0..self.threads.len() {
            for (i, l) in self.accesses(t) {
                let space = self.locations[l].space;
                if let Inst::Load { space: s, .. }
                | Inst::Store { space: s, .. }
                | Inst::Rmw { space: s, .. }
                | Inst::Cas { space: s, .. } = &mut self.threads[t].insts[i]
                {
                    *s = space;
                }
            }
        }
    }

    /// The location each memory access of thread `t` goes to (instruction index, location), for
    /// accesses through a location's address register or a checked address.
    pub fn accesses(&self, t: usize) -> Vec<(usize, usize)> {
        let th = &self.threads[t];
        let owner: HashMap<Reg, usize> = th
            .addr_regs
            .iter()
            .map(|&(l, r)| (r, l))
            .chain(th.checked.iter().copied())
            .collect();
        th.insts
            .iter()
            .enumerate()
            .filter_map(|(i, inst)| {
                let (Inst::Load { addr, .. }
                | Inst::Store { addr, .. }
                | Inst::Rmw { addr, .. }
                | Inst::Cas { addr, .. }) = inst
                else {
                    return None;
                };
                match addr.base {
                    Operand::Reg(r) => owner.get(&r).map(|&l| (i, l)),
                    Operand::Imm(_) => None,
                }
            })
            .collect()
    }
}

/// Where a thread runs: work-group `cta` of device `device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Placement {
    pub cta: u32,
    pub device: u32,
    /// Written in the thread's header (not the default).
    pub placed: bool,
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
    /// User registers that hold an address into a location, as last assigned in program order
    /// (the checked address makes a wrong guess an error, never a wrong access).
    derived: HashMap<Reg, usize>,
}

impl<'a> ThreadBuilder<'a> {
    pub fn new(
        file: &'a str,
        locations: &'a mut Vec<Location>,
        name: String,
        place: Placement,
        loc: SrcLoc,
    ) -> Self {
        ThreadBuilder {
            file,
            locations,
            t: Thread {
                name,
                cta: place.cta,
                device: place.device,
                placed: place.placed,
                loc,
                insts: Vec::new(),
                locs: Vec::new(),
                regs: Vec::new(),
                addr_regs: Vec::new(),
                reg_init: Vec::new(),
                checked: Vec::new(),
                barriers: Vec::new(),
                pending: Vec::new(),
                undefined: Vec::new(),
            },
            labels: HashMap::new(),
            fixups: Vec::new(),
            temps: 0,
            derived: HashMap::new(),
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
            if let Some(l) = init.location() {
                self.addr_reg(l);
                self.set_ty(reg, Ty::U64);
                self.derived.insert(reg, l);
            }
        }
        Ok(())
    }

    pub fn error(&self, at: SrcLoc, message: impl Into<String>) -> LitmusError {
        LitmusError::Syntax(Located {
            file: self.file.to_string(),
            line: at.line,
            col: at.col,
            message: message.into(),
        })
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

    /// The location called `name`, created (a global scalar, initially 0) on first use.
    pub fn location(&mut self, name: &str, at: SrcLoc) -> Result<usize, LitmusError> {
        match self.find_location(name) {
            Some(i) => Ok(i),
            None => {
                if self.locations.len() >= MAX_LOCATIONS {
                    return Err(self.error(
                        at,
                        format!("more than {MAX_LOCATIONS} locations in one test"),
                    ));
                }
                self.locations
                    .push(Location::scalar(name.to_string(), 0, None, at));
                Ok(self.locations.len() - 1)
            }
        }
    }

    /// The location a pointer parameter declared in `space` names (OpenCL): `name` itself when
    /// its space is that one or not yet given; when another thread declared `name` in the other
    /// space, a separate object, since OpenCL's local and global memories are disjoint address
    /// spaces (OpenCL 2.0 s3.3.1): `name (local)` or `name (global)`, with `name`'s type and
    /// initial value. A final state's `name` is the object the first thread declaring it names.
    pub fn location_in_space(
        &mut self,
        name: &str,
        space: Space,
        at: SrcLoc,
    ) -> Result<usize, LitmusError> {
        let l = self.location(name, at)?;
        let cur = &self.locations[l];
        if !cur.space_given || cur.space == space {
            self.declare_space(l, space, at)?;
            return Ok(l);
        }
        let other = format!("{name} ({})", space.name());
        if let Some(i) = self.find_location(&other) {
            return Ok(i);
        }
        if self.locations.len() >= MAX_LOCATIONS {
            return Err(self.error(
                at,
                format!("more than {MAX_LOCATIONS} locations in one test"),
            ));
        }
        let mut sib = cur.clone();
        sib.name = other;
        sib.space = space;
        sib.loc = at;
        self.locations.push(sib);
        Ok(self.locations.len() - 1)
    }

    /// Records that location `l` lives in `space` (a parameter's qualifier, a `.shared` access);
    /// a location has one space.
    pub fn declare_space(&mut self, l: usize, space: Space, at: SrcLoc) -> Result<(), LitmusError> {
        let cur = &mut self.locations[l];
        if cur.space_given && cur.space != space {
            let (name, old) = (cur.name.clone(), cur.space);
            return Err(self.error(
                at,
                format!(
                    "location {name} is {} memory here but {} memory elsewhere",
                    space.name(),
                    old.name()
                ),
            ));
        }
        cur.space = space;
        cur.space_given = true;
        Ok(())
    }

    /// The address of byte `offset` of location `l` for an access of `bytes` bytes, checked against
    /// the location's size now.
    pub fn static_address(
        &mut self,
        l: usize,
        offset: i64,
        bytes: u32,
        at: SrcLoc,
    ) -> Result<Address, LitmusError> {
        let loc = &self.locations[l];
        let size = loc.bytes() as i64;
        if offset < 0 || offset + bytes as i64 > size || offset % bytes as i64 != 0 {
            let (name, len) = (loc.name.clone(), loc.len);
            return Err(self.error(
                at,
                format!(
                    "byte offset {offset} of a {bytes}-byte access is outside {name} ({len} element(s) of {} bytes) or misaligned",
                    loc.ty.width().bytes()
                ),
            ));
        }
        let r = self.addr_reg(l);
        Ok(Address {
            base: Operand::Reg(r),
            offset,
        })
    }

    /// The location user register `r` holds an address into, if any (see `derived`).
    pub fn pointer_into(&self, r: Reg) -> Option<usize> {
        self.derived.get(&r).copied()
    }

    /// Records that user register `r` now holds an address into `l` (`None`: no address).
    pub fn set_pointer(&mut self, r: Reg, l: Option<usize>) {
        match l {
            Some(l) => {
                self.derived.insert(r, l);
            }
            None => {
                self.derived.remove(&r);
            }
        }
    }

    /// The address `base + offset` for an access of `bytes` bytes into location `l`, computed at
    /// run time: when it leaves the instance's copy of `l` (or is misaligned), it is replaced by an
    /// address no memory holds, so the machine stops with an out-of-bounds error naming this access.
    pub fn checked_address(
        &mut self,
        base: Reg,
        offset: i64,
        l: usize,
        bytes: u32,
        at: SrcLoc,
    ) -> Address {
        /// An aligned address beyond every buffer and every work-group's local memory.
        const OUTSIDE: u64 = !7;
        let size = self.locations[l].bytes();
        let start = self.addr_reg(l);
        let (addr, rel, ok) = (self.temp(), self.temp(), self.temp());
        for r in [addr, rel] {
            self.set_ty(r, Ty::U64);
        }
        let alu = |op, dst, a, b| Inst::Alu {
            op,
            ty: Ty::U64,
            dst,
            a,
            b,
        };
        self.emit(
            alu(
                AluOp::Add,
                addr,
                Operand::Reg(base),
                Operand::Imm(offset as u64),
            ),
            at,
        );
        self.emit(
            alu(AluOp::Sub, rel, Operand::Reg(addr), Operand::Reg(start)),
            at,
        );
        // In bounds: rel <= size - bytes (unsigned, so below-the-start wraps to a huge value).
        self.emit(
            Inst::Cmp {
                op: CmpOp::Le,
                ty: Ty::U64,
                dst: ok,
                a: Operand::Reg(rel),
                b: Operand::Imm(size.saturating_sub(bytes as u64)),
            },
            at,
        );
        self.emit(
            Inst::Select {
                dst: addr,
                cond: ok,
                a: Operand::Reg(addr),
                b: Operand::Imm(OUTSIDE),
            },
            at,
        );
        self.t.checked.push((addr, l));
        Address {
            base: Operand::Reg(addr),
            offset: 0,
        }
    }

    /// Records a construct the machine cannot run yet.
    pub fn pend(&mut self, at: SrcLoc, capability: Capability, detail: impl Into<String>) {
        self.t.pending.push(Pending {
            at,
            capability,
            detail: detail.into(),
        });
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
