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
//! supported"); nesting deeper than [`parse_expr::MAX_DEPTH`] is an error, not a stack overflow; input that
//! is not UTF-8 gives the place of the first bad byte.

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
        KernelError::At {
            file: file.to_string(),
            line: self.loc.line,
            col: self.loc.col,
            message: self.message,
        }
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

/// Reads and parses a `.cu` or `.cl` file. Input that is not UTF-8 is an error naming the line and
/// column of the first bad byte.
pub fn load(
    path: &Path,
    dialect: Dialect,
    overrides: &[(String, i64)],
) -> Result<Workload, KernelError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| KernelError::Io {
        file: file.clone(),
        source,
    })?;
    let text = utf8(&bytes).map_err(|e| e.in_file(&file))?;
    parse(text, &file, dialect, overrides)
}

/// `bytes` as text, or the place of the first byte that is not UTF-8.
pub fn utf8(bytes: &[u8]) -> Result<&str, CError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        // The valid prefix is UTF-8: count lines and characters in it.
        let prefix = std::str::from_utf8(good).unwrap_or_default();
        let line = prefix.matches('\n').count() as u32 + 1;
        let col = prefix
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0) as u32
            + 1;
        CError::new(
            SrcLoc { line, col },
            format!(
                "byte 0x{:02X} is not UTF-8: the source must be UTF-8 text",
                bytes[e.valid_up_to()]
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_located() {
        let e = utf8(b"int x;\n  \xC3\x28 y").unwrap_err();
        assert_eq!(e.loc, SrcLoc { line: 2, col: 3 });
        assert!(e.message.contains("0xC3"), "{}", e.message);
        assert_eq!(utf8("ü\n".as_bytes()).unwrap(), "ü\n");
    }
}
