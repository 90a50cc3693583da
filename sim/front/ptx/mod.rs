//! The PTX front end: PTX as `nvcc -ptx` and NVRTC emit it (PTX ISA 7.x-8.x, `.target sm_70` to
//! `sm_90`, `.address_size 64`), lowered into the one IR ([`crate::ir`]), launched with the same
//! workload header as `.cu` files (`cfront::header`, in a `/* gpumemsim ... */` comment).
//!
//! Pipeline: [`lexer`] → [`parser`] ([`ast`]) → [`launch`] (header, entry, parameter binding) →
//! [`lower`] (registers, variables, instructions, calls inlined). [`nvrtc`] compiles `.cu` files to
//! PTX with NVIDIA's runtime compiler, loaded at run time, and hands the PTX to this front end.
//!
//! What is modelled and what is refused is listed in each lowering file's header and, for users, in
//! `docs/ptx.md`. In short, modelled exactly: 32- and 64-bit integer and f32 arithmetic, compares,
//! selects, conversions (`cvt.rn`/`.rzi`, integer widths 8-64), `mul.wide`/`mul.hi`/`mad`,
//! predication, branches, `.func` calls (inlined), loads and stores of 32/64-bit values and vectors
//! in the global, shared, const and param spaces and through generic addresses, every order and
//! scope of `ld`/`st`/`atom`/`red`/`fence`/`membar`, CTA barriers including `bar.red`, the bit
//! operations and float functions of `ir::math`, warp-level exchange (`shfl.sync`, `vote.sync`,
//! `match.sync`, `redux.sync`, `activemask`, `%lanemask_*`: [`lower::warp`]), and the special
//! registers the machine has. Refused with `file:line:col` and "not modelled yet": f64 and f16,
//! 8/16-bit accesses, `.local`, by-value structure parameters of an entry, `bar.warp.sync` with a
//! partial mask, `ld.cg`/`ld.cv`, `trap`, textures, tensor-core and asynchronous-copy instructions.
//!
//! Timing approximations (never a change of what is computed): a guarded instruction other than a
//! branch issues as a branch around it; multi-instruction lowerings (listed in `lower/arith.rs`)
//! issue each part; vectors issue per element; cache hints are ignored; `.const` is served by the
//! data caches; `nanosleep` is one special-function instruction.

pub mod ast;
pub mod launch;
pub mod lexer;
pub mod lower;
pub mod nvrtc;
pub mod parser;

use crate::kernel::KernelError;
use crate::workload::Workload;

/// Parses and lowers a PTX workload held in memory (the header in the PTX file's own comment).
pub fn parse(text: &str, file: &str, overrides: &[(String, i64)]) -> Result<Workload, KernelError> {
    launch::workload(text, file, overrides, None)
}
