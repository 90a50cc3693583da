//! The kernel language front end: a small PTX-flavoured assembly language, text → [`Workload`].
//!
//! One file holds a whole launch: named integer parameters (`param N = 1024`, overridable by the
//! caller), launch geometry, global buffers with initial contents, work-group-local arrays, scalar
//! launch arguments, the kernel body (registers, arithmetic, compares, branches and labels, special
//! registers, loads/stores/atomics with order and scope, fences, barriers), end-of-run checks and
//! reported quantities. `workloads/README.md` is the user's reference with examples.
//!
//! Pipeline: [`lexer`] (tokens with `line:col`) → [`syntax`] (statements, expressions, instruction
//! operands; no meaning yet) → [`lower`] (parameters resolved, names bound, orders checked against the
//! operation, instructions lowered into [`crate::ir`], checks into [`crate::workload::Expr`]).
//!
//! Does not do: whether the target GPU supports an order or scope, or how f32 atomic add is executed —
//! both depend on the config and are decided at load time by `machine::prepare`; local memory and
//! work-group size against the SM's limits (the dispatcher checks them).
//!
//! Every error names `file:line:column`, what was found and what was expected.

pub mod lexer;
mod lower;
mod syntax;

use crate::text::Located;
use crate::workload::Workload;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum KernelError {
    /// A syntax or validation error at a place in the file (the readers' one located error).
    #[error(transparent)]
    At(Located),
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The caller overrides a parameter the file does not declare.
    #[error("{file}: --param {name}: the workload declares no parameter `{name}` (declared: {declared})")]
    UnknownParam {
        file: String,
        name: String,
        declared: String,
    },
}

/// A file the reader could not read, or whose bytes are not text, at its position (`text.rs`).
impl From<crate::text::TextError> for KernelError {
    fn from(e: crate::text::TextError) -> Self {
        match e.located() {
            Err((file, source)) => Self::Io { file, source },
            Ok(at) => Self::At(at),
        }
    }
}

impl KernelError {
    pub(crate) fn at(file: &str, line: u32, col: u32, message: impl Into<String>) -> KernelError {
        KernelError::At(Located::new(file, line, col, message))
    }
}

/// Parses and lowers a kernel-language workload held in memory; `file` names it in errors and
/// diagnostics; `overrides` replace parameter defaults (each name must be declared in the file).
/// Other languages (`.cu`, `.cl`, `.ptx`) are told apart one floor up, by [`crate::frontend`]: a
/// file of theirs given here is an error that says so.
pub fn parse(text: &str, file: &str, overrides: &[(String, i64)]) -> Result<Workload, KernelError> {
    let ext = Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if matches!(ext, "cu" | "cuh" | "cl" | "ptx") {
        return Err(KernelError::at(file, 1, 1, format!("a .{ext} file is not kernel language: load it with `frontend::load`, which chooses its front end")));
    }
    parse_kern(text, file, overrides)
}

/// Parses and lowers kernel-language text (whatever the file name says).
pub fn parse_kern(
    text: &str,
    file: &str,
    overrides: &[(String, i64)],
) -> Result<Workload, KernelError> {
    let tokens = lexer::lex(text, file)?;
    let stmts = syntax::parse(tokens, text, file)?;
    lower::lower(&stmts, file, overrides)
}

/// Reads and parses a kernel-language file (other languages: [`crate::frontend::load`]).
pub fn load(path: &Path, overrides: &[(String, i64)]) -> Result<Workload, KernelError> {
    let text = crate::text::read(path)?;
    parse(&text, &path.display().to_string(), overrides)
}
