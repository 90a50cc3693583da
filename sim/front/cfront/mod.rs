//! The C-family front ends: CUDA (`.cu`) and OpenCL C 2.0 (`.cl`) kernels, and the thread bodies of
//! the OpenCL litmus dialect, lowered into the one IR ([`crate::ir`]) so that simulation, race
//! detection, the WGSL translation and sweeps treat them like kernel-language workloads.
//!
//! Pipeline: [`lexer`] (C tokens, object-like macros, the `/* gpumemsim ... */` header blocks) →
//! [`parser`] with [`parse_types`], [`parse_stmt`] and [`parse_expr`] (one C-family syntax for both
//! dialects, [`ast`]) → [`lower`] (names
//! bound, C's typing and conversions ([`types`]), control flow, builtins of each dialect, device
//! functions inlined) into a [`lower::Sink`]: a kernel ([`kernel`]) or a litmus thread
//! (`litmus/opencl.rs`); a kernel's basic blocks are then scheduled ([`schedule`]) as a compiler
//! would. The workload header — launch geometry, buffers, parameters, checks — is the
//! kernel language's own declarations written in a comment block ([`header`]).
//!
//! What the subset holds, the mapping of every atomic and fence to the IR's orders and scopes, and
//! what is not supported: workloads/README.md, sections "CUDA kernels" and "OpenCL C kernels".
//!
//! Every error names `file:line:column`; constructs outside the subset are named ("`struct` is not
//! supported"); nesting deeper than [`parse_expr::MAX_DEPTH`] is an error, not a stack overflow;
//! macro expansion ([`lexer`]), inlined code ([`lower::MAX_CODE`]) and the nesting of inlined
//! bodies ([`lower::MAX_NESTING`]) are bounded; a file is read like every other input
//! ([`crate::text::read`]: bounded, and the place of the first byte that is not UTF-8).

pub mod ast;
pub mod header;
pub mod kernel;
pub mod lexer;
pub mod lower;
pub mod parse_expr;
pub mod parse_stmt;
pub mod parse_types;
pub mod parser;
pub mod schedule;
pub mod types;

use crate::ir::SrcLoc;
use crate::kernel::KernelError;
use crate::text::Located;
use crate::workload::Workload;
use std::path::Path;

/// Which C dialect a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// CUDA C++ (`.cu`).
    Cuda,
    /// OpenCL C 2.0 (`.cl`), also the litmus dialect's thread bodies.
    OpenCl,
}

impl Dialect {
    /// The dialect a file name's extension says (`.cu`, `.cl`), if any.
    pub fn of_file(file: &str) -> Option<Dialect> {
        let ext = Path::new(file).extension()?.to_str()?;
        match ext {
            "cu" | "cuh" => Some(Dialect::Cuda),
            "cl" => Some(Dialect::OpenCl),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Cuda => "CUDA",
            Dialect::OpenCl => "OpenCL C",
        }
    }
}

/// An error at a place of the source (the caller adds the file name).
#[derive(Debug, Clone, PartialEq)]
pub struct CError {
    pub loc: SrcLoc,
    pub message: String,
}

impl CError {
    pub fn new(loc: SrcLoc, message: impl Into<String>) -> CError {
        CError {
            loc,
            message: message.into(),
        }
    }

    pub fn in_file(self, file: &str) -> KernelError {
        KernelError::At(Located {
            file: file.to_string(),
            line: self.loc.line,
            col: self.loc.col,
            message: self.message,
        })
    }
}

/// Parses and lowers a CUDA or OpenCL C workload held in memory; `file` names it (and its extension
/// the dialect); `overrides` replace parameter defaults.
pub fn parse(
    text: &str,
    file: &str,
    dialect: Dialect,
    overrides: &[(String, i64)],
) -> Result<Workload, KernelError> {
    kernel::workload(text, file, dialect, overrides)
}
