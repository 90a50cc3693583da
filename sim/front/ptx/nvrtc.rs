//! `.cu` files compiled by NVIDIA's runtime compiler (NVRTC) to PTX, which the PTX front end runs.
//!
//! NVRTC is loaded at run time with `libloading` over its seven C entry points
//! (`nvrtcVersion`, `nvrtcCreateProgram`, `nvrtcCompileProgram`, `nvrtcGetProgramLogSize`,
//! `nvrtcGetProgramLog`, `nvrtcGetPTXSize`, `nvrtcGetPTX`, `nvrtcDestroyProgram`): no link-time
//! dependency and no GPU (NVRTC compiles on the CPU). `libloading` is already in the dependency tree
//! (wgpu's Vulkan loader); `cudarc` would add the whole driver API for these few functions.
//!
//! Where it is found: `GPUMEMSIM_NVRTC` (the library's path), else the pip wheel
//! `nvidia-cuda-nvrtc-cu12` in a Python `site-packages` (the interpreter's own path list, the user's
//! and the system's), else `libnvrtc.so.12` on the loader's path. Headers: the `include/` folders of
//! the `nvidia-cuda-runtime-cu12` (`<cooperative_groups.h>`, `<cuda_runtime.h>`) and
//! `nvidia-cuda-cccl-cu12` (`<cuda/atomic>`, `<cuda/std/...>`) wheels beside it, or
//! `GPUMEMSIM_CUDA_INCLUDE` (folders separated by `:`).
//!
//! Workload parameters reach the code as `constexpr` constants in a namespace of their own
//! (`gpumemsim_param`), declared after the file's last `#include` and brought in with a using
//! directive: NVIDIA's headers never see them (a `-DT=32` macro would break every
//! `template <typename T>` in them), and the code reads `N` as the builtin front end binds it. A
//! `#line` directive after them keeps NVRTC's line numbers the `.cu` file's, so a compile error is
//! shown at its `.cu` line. `<cstdint>`, which NVRTC lacks, is given as `<cuda/std/cstdint>` with its
//! names in the global namespace.
//!
//! Options: `-arch=compute_90 -default-device -std=c++17 --fmad=false -lineinfo`: `--fmad=false`
//! because the IR has no fused multiply-add (NVRTC would contract `a * b + c` into `fma.rn.f32`,
//! which the PTX front end refuses rather than rounding twice); `-lineinfo` so that a PTX
//! instruction the front end refuses is reported at the `.cu` line it came from (`.loc`).
//!
//! `GPUMEMSIM_PTX_OUT=DIR` writes each compiled file's PTX there (`DIR/NAME.cu.ptx`).
//!
//! Compiles are cached in memory per (prepared source, options), so a sweep compiles each variant
//! of a file once per process.

use super::launch::HeaderSource;
use crate::cfront::lexer::HeaderBlock;
use crate::ir::SrcLoc;
use crate::kernel::KernelError;
use crate::text::Located;
use crate::workload::Workload;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

type Prog = *mut c_void;
type CreateFn = unsafe extern "C" fn(
    *mut Prog,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileFn = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut Prog) -> c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;

/// A loaded NVRTC and the header folders it compiles with.
pub struct Nvrtc {
    _lib: libloading::Library,
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    destroy: DestroyFn,
    version: (i32, i32),
    pub library: PathBuf,
    pub includes: Vec<PathBuf>,
}

// The function pointers are plain C entry points; NVRTC's API is thread-safe for distinct programs.
unsafe impl Send for Nvrtc {}
unsafe impl Sync for Nvrtc {}

static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();

/// Folders that may hold Python packages.
fn site_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(o) = std::process::Command::new("python3")
        .args(["-c", "import sys; print('\\n'.join(sys.path))"])
        .stderr(std::process::Stdio::null())
        .output()
    {
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            if !l.is_empty() {
                out.push(PathBuf::from(l));
            }
        }
    }
    let mut roots = vec![PathBuf::from("/usr/local/lib"), PathBuf::from("/usr/lib")];
    if let Some(h) = std::env::var_os("HOME") {
        roots.push(Path::new(&h).join(".local/lib"));
    }
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(Path::new(&v).join("lib"));
    }
    for r in roots {
        if let Ok(rd) = std::fs::read_dir(&r) {
            let mut names: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("python3"))
                })
                .collect();
            names.sort();
            for p in names {
                out.push(p.join("site-packages"));
                out.push(p.join("dist-packages"));
            }
        }
    }
    out.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    out
}

impl Nvrtc {
    /// The process's NVRTC, loaded on first use; `Err` says where it was looked for and how to
    /// install it.
    pub fn get() -> Result<&'static Nvrtc, String> {
        NVRTC
            .get_or_init(Nvrtc::load)
            .as_ref()
            .map_err(|e| e.clone())
    }

    fn load() -> Result<Nvrtc, String> {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("GPUMEMSIM_NVRTC") {
            candidates.push(PathBuf::from(p));
        }
        let sites = site_dirs();
        for s in &sites {
            let p = s.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
            if p.is_file() && !candidates.contains(&p) {
                candidates.push(p);
            }
        }
        candidates.push(PathBuf::from("libnvrtc.so.12"));
        let mut tried = Vec::new();
        for c in candidates {
            // SAFETY: loading NVRTC runs its initialisers, which only set up the library itself.
            match unsafe { libloading::Library::new(&c) } {
                Ok(lib) => return Nvrtc::from_library(lib, c),
                Err(e) => tried.push(format!("{}: {e}", c.display())),
            }
        }
        Err(format!(
            "NVRTC not found (tried {}): install it with `pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12` (scripts/install-deps.sh does), or set GPUMEMSIM_NVRTC to libnvrtc.so.12",
            tried.join("; ")
        ))
    }

    fn from_library(lib: libloading::Library, path: PathBuf) -> Result<Nvrtc, String> {
        // SAFETY: the symbols are NVRTC's documented C entry points with these signatures (nvrtc.h).
        unsafe {
            macro_rules! sym {
                ($name:literal, $t:ty) => {
                    *lib.get::<$t>($name)
                        .map_err(|e| format!("{}: {e}", path.display()))?
                };
            }
            let version_fn: VersionFn = sym!(b"nvrtcVersion\0", VersionFn);
            let (mut major, mut minor) = (0, 0);
            version_fn(&mut major, &mut minor);
            let create = sym!(b"nvrtcCreateProgram\0", CreateFn);
            let compile = sym!(b"nvrtcCompileProgram\0", CompileFn);
            let log_size = sym!(b"nvrtcGetProgramLogSize\0", SizeFn);
            let log = sym!(b"nvrtcGetProgramLog\0", GetFn);
            let ptx_size = sym!(b"nvrtcGetPTXSize\0", SizeFn);
            let ptx = sym!(b"nvrtcGetPTX\0", GetFn);
            let destroy = sym!(b"nvrtcDestroyProgram\0", DestroyFn);
            let mut includes = Vec::new();
            if let Some(v) = std::env::var_os("GPUMEMSIM_CUDA_INCLUDE") {
                includes.extend(std::env::split_paths(&v));
            }
            // The wheels' include folders beside the library (…/nvidia/cuda_nvrtc/lib).
            if let Some(nvidia) = path
                .parent()
                .and_then(|p| p.parent())
                .and_then(|p| p.parent())
            {
                for w in [
                    "cuda_runtime/include",
                    "cuda_cccl/include",
                    "cuda_nvrtc/include",
                ] {
                    let d = nvidia.join(w);
                    if d.is_dir() {
                        includes.push(d);
                    }
                }
            }
            for d in ["/usr/local/cuda/include"] {
                if Path::new(d).is_dir() {
                    includes.push(PathBuf::from(d));
                }
            }
            Ok(Nvrtc {
                _lib: lib,
                create,
                compile,
                log_size,
                log,
                ptx_size,
                ptx,
                destroy,
                version: (major, minor),
                library: path,
                includes,
            })
        }
    }

    pub fn version(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }

    /// The options every compile uses.
    pub fn options(&self) -> Vec<String> {
        let mut o: Vec<String> = [
            "--gpu-architecture=compute_90",
            "-default-device",
            "-std=c++17",
            "--fmad=false",
            "-lineinfo",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for d in &self.includes {
            o.push(format!("-I{}", d.display()));
        }
        o
    }

    /// Compiles `source` (named `name`) to PTX; `Err` is NVRTC's log.
    pub fn compile(&self, source: &str, name: &str, options: &[String]) -> Result<String, String> {
        let src = CString::new(source).map_err(|_| "the source holds a NUL byte".to_string())?;
        let cname = CString::new(name).map_err(|_| "the file name holds a NUL byte".to_string())?;
        let hname = CString::new("cstdint").expect("no NUL");
        let hbody = CString::new(CSTDINT).expect("no NUL");
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()).expect("options hold no NUL"))
            .collect();
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: every pointer is to a live NUL-terminated string or array of them for the call's
        // duration; the program is destroyed on every path.
        unsafe {
            let heads = [hbody.as_ptr()];
            let incs = [hname.as_ptr()];
            let rc = (self.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                1,
                heads.as_ptr(),
                incs.as_ptr(),
            );
            if rc != 0 {
                return Err(format!("nvrtcCreateProgram failed ({rc})"));
            }
            let rc = (self.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
            let mut n = 0usize;
            (self.log_size)(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            (self.log)(prog, log.as_mut_ptr() as *mut c_char);
            let log = CStr::from_bytes_until_nul(&log)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            if rc != 0 {
                (self.destroy)(&mut prog);
                return Err(log);
            }
            let mut n = 0usize;
            (self.ptx_size)(prog, &mut n);
            let mut ptx = vec![0u8; n.max(1)];
            (self.ptx)(prog, ptx.as_mut_ptr() as *mut c_char);
            (self.destroy)(&mut prog);
            Ok(CStr::from_bytes_until_nul(&ptx)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default())
        }
    }
}

/// `<cstdint>` for NVRTC (which has `<cuda/std/cstdint>` only): its names in the global namespace.
const CSTDINT: &str = "#pragma once\n#include <cuda/std/cstdint>\nusing cuda::std::int8_t; using cuda::std::int16_t; using cuda::std::int32_t; using cuda::std::int64_t;\nusing cuda::std::uint8_t; using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;\nusing cuda::std::uintptr_t; using cuda::std::intptr_t;\nnamespace std { using cuda::std::int32_t; using cuda::std::uint32_t; using cuda::std::int64_t; using cuda::std::uint64_t; using cuda::std::uint8_t; using cuda::std::int8_t; using cuda::std::uint16_t; using cuda::std::int16_t; }\n";

/// Compiled PTX per (source, options).
static CACHE: OnceLock<Mutex<HashMap<String, Result<String, String>>>> = OnceLock::new();

/// How many times NVRTC compiled a file of this name in this process (cache misses).
pub fn compiles(file: &str) -> usize {
    COMPILES
        .get_or_init(Default::default)
        .lock()
        .expect("never poisoned")
        .get(file)
        .copied()
        .unwrap_or(0)
}
static COMPILES: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();

/// `/* gpumemsim ... */` blocks of a C++ file (the text after the word, and where it starts).
pub fn header_blocks(text: &str) -> Vec<HeaderBlock> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut base = 0usize;
    while let Some(k) = rest.find("/*") {
        let start = base + k + 2;
        let body = &text[start..];
        let Some(end) = body.find("*/") else { break };
        let trimmed = body[..end].trim_start_matches([' ', '\t']);
        if let Some(after) = trimmed.strip_prefix("gpumemsim") {
            if !after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                let after = after.strip_prefix(':').unwrap_or(after);
                let off = start + (end - after.len());
                let before = &text[..off];
                let line = before.matches('\n').count() as u32 + 1;
                let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
                out.push(HeaderBlock {
                    text: after[..after.len()].to_string(),
                    loc: SrcLoc { line, col },
                });
            }
        }
        base = start + end + 2;
        rest = &text[base..];
    }
    out
}

/// The C parameter names of every `__global__` function in the file, by name.
pub fn signatures(text: &str) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    let mut from = 0;
    while let Some(k) = text[from..].find("__global__") {
        let s = from + k + "__global__".len();
        from = s;
        let Some(open) = text[s..].find('(') else {
            break;
        };
        let head = &text[s..s + open];
        if head.contains(';') || head.contains('{') {
            continue;
        }
        let Some(name) = head
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .last()
        else {
            continue;
        };
        let mut depth = 0i32;
        let mut params = Vec::new();
        let mut cur = String::new();
        for c in text[s + open + 1..].chars() {
            match c {
                '(' | '<' | '[' => depth += 1,
                ')' if depth == 0 => break,
                ')' | '>' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    params.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        if !cur.trim().is_empty() {
            params.push(cur);
        }
        let names: Vec<String> = params
            .iter()
            .map(|p| {
                let p = p.split('=').next().unwrap_or("");
                let p = p.split('[').next().unwrap_or("");
                p.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .last()
                    .unwrap_or("")
                    .to_string()
            })
            .filter(|n| !n.is_empty() && n != "void")
            .collect();
        out.insert(name.to_string(), names);
    }
    out
}

/// The source NVRTC compiles: the file with the workload parameters declared after its last
/// `#include` (see the module header), line numbers kept by `#line`.
pub fn prepare(text: &str, file: &str, parameters: &[(String, i64)]) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let last_include = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("#include"))
        .map_or(0, |i| i + 1);
    let mut s = String::new();
    for l in &lines[..last_include] {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("namespace gpumemsim_param {\n");
    for (n, v) in parameters {
        let t = if i32::try_from(*v).is_ok() {
            "int"
        } else {
            "long long"
        };
        s.push_str(&format!("constexpr {t} {n} = {v};\n"));
    }
    s.push_str("}\nusing namespace gpumemsim_param;\n");
    s.push_str(&format!(
        "#line {} \"{}\"\n",
        last_include + 1,
        file.replace('\\', "/").replace('"', "")
    ));
    for (k, l) in lines[last_include..].iter().enumerate() {
        s.push_str(l);
        if last_include + k + 1 < lines.len() {
            s.push('\n');
        }
    }
    s
}

/// The first `FILE(LINE): error: ...` of an NVRTC log, as the `.cu` place and message.
pub fn log_error(log: &str) -> Option<(u32, String)> {
    for l in log.lines() {
        if let Some(i) = l.find("): error") {
            let open = l[..i].rfind('(')?;
            let line: u32 = l[open + 1..i].parse().ok()?;
            return Some((line, l[i + 3..].trim().to_string()));
        }
    }
    None
}

/// The `.cu` place of PTX line `line`: the last `.loc 1 L C` before it.
fn cu_place(ptx: &str, line: u32) -> Option<(u32, u32)> {
    cu_places(ptx).get(line as usize).copied().flatten()
}

/// Compiles a `.cu` workload with NVRTC and runs its PTX through the PTX front end.
pub fn workload(
    n: &Nvrtc,
    text: &str,
    file: &str,
    overrides: &[(String, i64)],
) -> Result<Workload, KernelError> {
    let blocks = header_blocks(text);
    // The header's parameters (defaults with overrides) are known from the header alone: evaluate
    // it first (without kernel parameters) to get them.
    let parameters = header_parameters(text, file, &blocks, overrides)?;
    let source = prepare(text, file, &parameters);
    let options = n.options();
    let key = format!("{}\u{0}{}", options.join("\u{1}"), source);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let cached = cache
        .lock()
        .expect("the cache lock is never poisoned")
        .get(&key)
        .cloned();
    let result = match cached {
        Some(r) => r,
        None => {
            *COMPILES
                .get_or_init(Default::default)
                .lock()
                .expect("never poisoned")
                .entry(file.to_string())
                .or_insert(0) += 1;
            let name = Path::new(file)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.to_string());
            let r = n.compile(&source, &name, &options);
            cache
                .lock()
                .expect("the cache lock is never poisoned")
                .insert(key, r.clone());
            r
        }
    };
    let ptx = result.map_err(|log| {
        let (line, msg) = log_error(&log).unwrap_or((1, "compile failed".into()));
        KernelError::At(Located {
            file: file.to_string(),
            line,
            col: 1,
            message: format!("NVRTC {}: {msg}\n{}", n.version(), log.trim_end()),
        })
    })?;
    if let Some(dir) = std::env::var_os("GPUMEMSIM_PTX_OUT") {
        // What NVRTC made of the file, for reading (best effort: a failed write is only a warning).
        let name = Path::new(file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = Path::new(&dir).join(format!("{name}.ptx"));
        if let Err(e) = std::fs::write(&path, &ptx) {
            // Not `eprintln!`: it panics when stderr is a closed pipe.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "warning: GPUMEMSIM_PTX_OUT: cannot write {}: {e}",
                path.display()
            );
        }
    }
    let ptx_name = format!("{file} (NVRTC PTX)");
    let src = HeaderSource {
        file,
        text,
        blocks,
        signatures: signatures(text),
    };
    let mut w = super::launch::workload(&ptx, &ptx_name, overrides, Some(src)).map_err(|e| match e {
        KernelError::At(Located { file: f, line, col, message }) if f == ptx_name => match cu_place(&ptx, line) {
            Some((l, c)) => KernelError::At(Located { file: file.to_string(), line: l, col: c, message: format!("{message} (in NVRTC's PTX at line {line}; `--compiler builtin` runs the builtin front end instead)") }),
            None => KernelError::At(Located { file: f, line, col, message }),
        },
        other => other,
    })?;
    // Diagnostics (races, stuck warps, the timeline) name the `.cu` line each instruction came from.
    let places = cu_places(&ptx);
    for l in w.kernel.locs.iter_mut() {
        if let Some(Some((line, col))) = places.get(l.line as usize) {
            *l = SrcLoc {
                line: *line,
                col: *col,
            };
        }
    }
    w.kernel.file = file.to_string();
    Ok(w)
}

/// For each PTX line (index = line number), the `.cu` place of the last `.loc 1 L C` before it.
pub fn cu_places(ptx: &str) -> Vec<Option<(u32, u32)>> {
    let mut out = vec![None];
    let mut cur = None;
    for l in ptx.lines() {
        if let Some(rest) = l.trim_start().strip_prefix(".loc") {
            let nums: Vec<u32> = rest
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .take(3)
                .filter_map(|w| w.parse().ok())
                .collect();
            if let [1, line, col] = nums.as_slice() {
                cur = Some((*line, (*col).max(1)));
            }
        }
        out.push(cur);
    }
    out
}

/// The workload parameters a header declares, with `overrides` applied (in declaration order).
pub fn header_parameters(
    text: &str,
    file: &str,
    blocks: &[HeaderBlock],
    overrides: &[(String, i64)],
) -> Result<Vec<(String, i64)>, KernelError> {
    let stmts = crate::cfront::header::statements(blocks).map_err(|e| e.in_file(file))?;
    // `arg` statements need the kernel's parameters: leave them out here.
    let kern: Vec<_> = stmts
        .into_iter()
        .filter(|s| !matches!(s.word.as_str(), "arg" | "local" | "kernel"))
        .collect();
    if kern.is_empty() {
        return Err(KernelError::At(Located { file: file.to_string(), line: 1, col: 1, message: "no workload header: a launch needs a `/* gpumemsim ... */` comment with at least `groups` and `group_size`".into() }));
    }
    let h = crate::cfront::header::evaluate(text, file, &kern, &[], overrides)?;
    Ok(h.workload.parameters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_declared_after_the_includes_and_lines_kept() {
        let s = prepare(
            "#include <cuda/atomic>\n// x\n__global__ void k() {}\n",
            "k.cu",
            &[("T".into(), 32), ("BIG".into(), 1 << 40)],
        );
        assert!(s.starts_with("#include <cuda/atomic>\nnamespace gpumemsim_param {\nconstexpr int T = 32;\nconstexpr long long BIG = 1099511627776;\n}"), "{s}");
        assert!(s.contains("#line 2 \"k.cu\"\n// x\n__global__"), "{s}");
    }

    #[test]
    fn signatures_name_the_c_parameters() {
        let sig = signatures("template <int B>\n__global__ void reduce(const float *in, float out[], int n = 3) {}\n__global__ void k(void) {}");
        assert_eq!(sig["reduce"], vec!["in", "out", "n"]);
        assert!(sig["k"].is_empty());
    }

    #[test]
    fn header_blocks_and_places() {
        let b = header_blocks("// c\n/* not */\n  /* gpumemsim\ngroups 1\n*/");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].loc, SrcLoc { line: 3, col: 15 });
        assert_eq!(b[0].text, "\ngroups 1\n");
    }

    #[test]
    fn log_errors_and_loc_places() {
        assert_eq!(
            log_error("k.cu(12): error: identifier \"x\" is undefined\n"),
            Some((12, "error: identifier \"x\" is undefined".into()))
        );
        assert_eq!(
            cu_place(".loc\t1 7 3\nadd.s32 %r1, %r2, 1;\n.loc\t1 9 5\n", 2),
            Some((7, 3))
        );
    }
}
