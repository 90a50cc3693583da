//! The workload loader: tells the input languages apart by the file's extension and hands the text
//! to its front end — `.kern` to the kernel language ([`crate::kernel`]), `.ptx` to the PTX front end
//! ([`crate::ptx`]), `.cu` to NVIDIA's compiler (NVRTC, [`crate::ptx::nvrtc`]) or the builtin C
//! front end ([`crate::cfront`]) as [`Compiler`] says, `.cl` to the builtin OpenCL C front end. The
//! front ends do not call one another to dispatch; this floor above them does.

use crate::kernel::KernelError;
use crate::text::Located;
use crate::workload::Workload;
use std::path::Path;

/// Which compiler turns a `.cu` file into IR (`--compiler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compiler {
    /// NVRTC when it is found, else the builtin front end.
    #[default]
    Auto,
    /// NVRTC, or an error saying how to install it.
    Nvrtc,
    /// The builtin CUDA C subset.
    Builtin,
}

impl Compiler {
    pub fn parse(s: &str) -> Option<Compiler> {
        Some(match s {
            "auto" => Compiler::Auto,
            "nvrtc" => Compiler::Nvrtc,
            "builtin" => Compiler::Builtin,
            _ => return None,
        })
    }
}

/// The front end that produced a workload, for the summary and the JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontEnd {
    Kern,
    Ptx,
    /// The builtin C front end (`.cu` or `.cl`); `nvrtc_missing` when `auto` looked for NVRTC and
    /// did not find it (the summary says what NVRTC would take more).
    BuiltinC {
        nvrtc_missing: bool,
    },
    /// NVRTC compiled the `.cu` file to PTX (its version), run by the PTX front end.
    Nvrtc {
        version: String,
    },
}

impl FrontEnd {
    /// One word for the JSON document: `kern`, `ptx`, `builtin`, `nvrtc`.
    pub fn name(&self) -> &'static str {
        match self {
            FrontEnd::Kern => "kern",
            FrontEnd::Ptx => "ptx",
            FrontEnd::BuiltinC { .. } => "builtin",
            FrontEnd::Nvrtc { .. } => "nvrtc",
        }
    }

    /// The summary line.
    pub fn describe(&self) -> String {
        match self {
            FrontEnd::Kern => "kernel language".into(),
            FrontEnd::Ptx => "PTX front end".into(),
            FrontEnd::BuiltinC { nvrtc_missing: false } => "builtin C front end".into(),
            FrontEnd::BuiltinC { nvrtc_missing: true } => "builtin C front end (NVRTC not found: it would compile full CUDA C++; scripts/install-deps.sh installs it)".into(),
            FrontEnd::Nvrtc { version } => format!("NVRTC {version} → PTX front end"),
        }
    }
}

/// Parses a workload held in memory with the builtin front ends (the language from `file`'s
/// extension); `overrides` replace parameter defaults.
pub fn parse(text: &str, file: &str, overrides: &[(String, i64)]) -> Result<Workload, KernelError> {
    parse_with(text, file, overrides, Compiler::Builtin).map(|x| x.0)
}

/// Parses a workload held in memory with the compiler chosen for `.cu` files.
pub fn parse_with(
    text: &str,
    file: &str,
    overrides: &[(String, i64)],
    compiler: Compiler,
) -> Result<(Workload, FrontEnd), KernelError> {
    let ext = Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    match ext {
        "ptx" => Ok((crate::ptx::parse(text, file, overrides)?, FrontEnd::Ptx)),
        "cu" | "cuh" => {
            let nvrtc_missing = match compiler {
                Compiler::Builtin => false,
                Compiler::Nvrtc | Compiler::Auto => match crate::ptx::nvrtc::Nvrtc::get() {
                    Ok(n) => {
                        let w = crate::ptx::nvrtc::workload(n, text, file, overrides)?;
                        return Ok((
                            w,
                            FrontEnd::Nvrtc {
                                version: n.version(),
                            },
                        ));
                    }
                    Err(e) if compiler == Compiler::Nvrtc => {
                        return Err(KernelError::At(Located {
                            file: file.to_string(),
                            line: 1,
                            col: 1,
                            message: format!("--compiler nvrtc: {e}"),
                        }))
                    }
                    Err(_) => true,
                },
            };
            let w = crate::cfront::parse(text, file, crate::cfront::Dialect::Cuda, overrides)?;
            Ok((w, FrontEnd::BuiltinC { nvrtc_missing }))
        }
        "cl" => Ok((
            crate::cfront::parse(text, file, crate::cfront::Dialect::OpenCl, overrides)?,
            FrontEnd::BuiltinC {
                nvrtc_missing: false,
            },
        )),
        _ => Ok((
            crate::kernel::parse_kern(text, file, overrides)?,
            FrontEnd::Kern,
        )),
    }
}

/// Reads and parses a workload file with the builtin front ends.
pub fn load(path: &Path, overrides: &[(String, i64)]) -> Result<Workload, KernelError> {
    load_with(path, overrides, Compiler::Builtin).map(|x| x.0)
}

/// Reads and parses a workload file with the compiler chosen for `.cu` files.
pub fn load_with(
    path: &Path,
    overrides: &[(String, i64)],
    compiler: Compiler,
) -> Result<(Workload, FrontEnd), KernelError> {
    let text = crate::text::read(path)?;
    parse_with(&text, &path.display().to_string(), overrides, compiler)
}
