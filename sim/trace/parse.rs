//! The text formats: `kernelslist.g` and `kernel-N.traceg` (optionally xz-compressed), as written by
//! Accel-Sim's NVBit tracer, version 3 and later (the format is described in the module header of
//! `trace/mod.rs` and in the trace README the project ships with its samples).
//!
//! With more than one thread ([`load_threads`], `--threads N`) a large kernel's thread blocks are
//! read in parallel, in parts cut at `#BEGIN_TB` lines; the kernel and every error are the ones a
//! sequential read gives (a part that fails makes the file be read again sequentially).
//!
//! Every malformed or truncated input is an error naming the file and line: a header value that does
//! not parse, an instruction line with too few or too many fields, an unknown register, an address
//! count that does not match the active mask, a warp with fewer instruction lines than its `insts =`
//! count, a thread block without `#END_TB`, or fewer thread blocks than the grid has.

use super::*;
use crate::workload::check_launch;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A file that cannot be read, or is not UTF-8 text (`file:line:col` of the first bad byte).
    #[error(transparent)]
    Text(#[from] crate::text::TextError),
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: u32,
        message: String,
    },
}

/// Loads a trace: `path` is a `kernelslist.g` file or the directory that holds one.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    load_threads(path, 1)
}

/// As [`load`], reading each kernel's thread blocks on up to `threads` threads
/// ([`parse_kernel_threads`]; the same trace for any number).
pub fn load_threads(path: &Path, threads: usize) -> Result<Trace, TraceError> {
    let list = if path.is_dir() {
        path.join("kernelslist.g")
    } else {
        path.to_path_buf()
    };
    let file = list.display().to_string();
    let text = crate::text::read(&list)?;
    let dir = list.parent().unwrap_or(Path::new("."));
    let mut commands = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u32 + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let err = |message: String| TraceError::Syntax {
            file: file.clone(),
            line,
            message,
        };
        if let Some(rest) = l.strip_prefix("MemcpyHtoD,") {
            let (a, b) = rest.split_once(',').ok_or_else(|| {
                err(format!(
                    "expected `MemcpyHtoD,0xADDRESS,BYTES`, found `{l}`"
                ))
            })?;
            let addr = parse_hex(a.trim())
                .ok_or_else(|| err(format!("`{}` is not a hex address", a.trim())))?;
            let bytes = b
                .trim()
                .parse::<u64>()
                .map_err(|_| err(format!("`{}` is not a byte count", b.trim())))?;
            if addr.checked_add(bytes).is_none() {
                return Err(err(format!(
                    "MemcpyHtoD of {bytes} bytes at {addr:#x} runs past the end of the 64-bit address space"
                )));
            }
            commands.push(TraceCommand::MemcpyHtoD { addr, bytes, line });
        } else if l.starts_with("MemcpyDtoH,") {
            // A copy back to the host changes no device state: nothing to simulate.
        } else if l.ends_with(".traceg") || l.ends_with(".traceg.xz") {
            let mut p = dir.join(l);
            if !p.exists() && l.ends_with(".traceg") {
                let xz = dir.join(format!("{l}.xz"));
                if xz.exists() {
                    p = xz;
                }
            }
            if !p.exists() {
                return Err(err(format!(
                    "kernel trace `{}` does not exist",
                    p.display()
                )));
            }
            commands.push(TraceCommand::Kernel(load_kernel_threads(&p, threads)?));
        } else {
            return Err(err(format!(
                "expected a kernel trace file name (`kernel-N.traceg` or `.traceg.xz`) or \
                 `MemcpyHtoD,0xADDRESS,BYTES`, found `{l}`"
            )));
        }
    }
    if !commands
        .iter()
        .any(|c| matches!(c, TraceCommand::Kernel(_)))
    {
        return Err(TraceError::Syntax {
            file,
            line: text.lines().count() as u32,
            message: "the list names no kernel".into(),
        });
    }
    Ok(Trace { list, commands })
}

/// Loads one `kernel-N.traceg` or `kernel-N.traceg.xz`.
pub fn load_kernel(path: &Path) -> Result<TraceKernel, TraceError> {
    load_kernel_threads(path, 1)
}

fn load_kernel_threads(path: &Path, threads: usize) -> Result<TraceKernel, TraceError> {
    let file = path.display().to_string();
    let io = |source| TraceError::Io {
        file: file.clone(),
        source,
    };
    let text = if path.extension().is_some_and(|e| e == "xz") {
        let f = std::fs::File::open(path).map_err(io)?;
        let mut out = Limited(Vec::new());
        lzma_rs::xz_decompress(&mut std::io::BufReader::new(f), &mut out).map_err(|e| {
            TraceError::Syntax {
                file: file.clone(),
                line: 0,
                message: match e {
                    lzma_rs::error::Error::IoError(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                        format!("decompresses to more than {MAX_TEXT_BYTES} bytes (the most a trace file may hold)")
                    }
                    e => format!("not a valid xz stream: {e}"),
                },
            }
        })?;
        let out = out.0;
        // Positions in the decompressed text.
        crate::text::decode(out, &file)?
    } else {
        crate::text::read_up_to(path, MAX_TEXT_BYTES as u64)?
    };
    parse_kernel_threads(&text, path, threads)
}

/// The most text one kernel trace may decompress to: an xz stream is refused past it instead of
/// exhausting memory.
const MAX_TEXT_BYTES: usize = 1 << 34;

/// A `Vec` that refuses to grow past [`MAX_TEXT_BYTES`].
struct Limited(Vec<u8>);

impl std::io::Write for Limited {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_TEXT_BYTES {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn parse_hex(s: &str) -> Option<u64> {
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    hex_digits(s)
}

fn parse_dim3(s: &str) -> Option<[u32; 3]> {
    let s = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = s.split(',').map(|x| x.trim().parse::<u32>().ok());
    let d = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(d)
}

fn parse_reg(tok: &str) -> Result<Option<TraceReg>, String> {
    let (base, max, prefix) = if let Some(n) = tok.strip_prefix("UR") {
        (264, 63, n)
    } else if let Some(n) = tok.strip_prefix("UP") {
        (328, 7, n)
    } else if let Some(n) = tok.strip_prefix('R') {
        (0, 255, n)
    } else if let Some(n) = tok.strip_prefix('P') {
        (256, 7, n)
    } else {
        return Err(format!("`{tok}` is not a register (R, P, UR or UP)"));
    };
    match prefix {
        // RZ, PT, URZ, UPT: constant registers, no dependency.
        "Z" | "T" => Ok(None),
        n => match n.parse::<u16>() {
            Ok(v) if v <= max => Ok(Some(base + v)),
            _ => Err(format!("`{tok}` is not a register (R, P, UR or UP)")),
        },
    }
}

/// Builder state of the thread block being read.
#[derive(Clone)]
struct OpenBlock {
    id: [u32; 3],
    warps: Vec<TraceWarp>,
    line: u32,
    /// Line of its `thread block = x,y,z`.
    id_line: u32,
}

/// The line-by-line reader of one kernel trace: the kernel built so far and where in the format it
/// stands. A part of the file that starts at a `#BEGIN_TB` line can be read by a reader of its own,
/// starting from the header's state (see [`parse_kernel_threads`]).
#[derive(Clone)]
struct Reader<'t> {
    file: &'t str,
    k: TraceKernel,
    lineinfo: bool,
    /// `-kernel name`, `-grid dim`, `-block dim` seen.
    seen_header: [bool; 3],
    block: Option<OpenBlock>,
    /// The warp being read: (index in block, instructions still expected, line of `insts =`).
    warp: Option<(u32, u32, u32)>,
    pending_warp: Option<u32>,
    lineno: u32,
    unknown: Vec<(String, u64)>,
    ops: OpCache<'t>,
    /// The `thread block =` line of each block in `k.blocks`, for duplicate blocks.
    block_lines: Vec<u32>,
}

impl<'t> Reader<'t> {
    fn new(file: &'t str, path: &Path) -> Reader<'t> {
        Reader {
            file,
            k: TraceKernel {
                file: path.to_path_buf(),
                name: String::new(),
                id: 0,
                grid: [0; 3],
                block: [0; 3],
                grid_line: 0,
                block_line: 0,
                shmem: 0,
                nregs: 0,
                binary_version: 0,
                tracer_version: 0,
                shmem_base: 0,
                local_base: 0,
                blocks: Vec::new(),
                insts: Vec::new(),
                regs: Vec::new(),
                addrs: Vec::new(),
                unknown_opcodes: Vec::new(),
            },
            lineinfo: false,
            seen_header: [false; 3],
            block: None,
            warp: None,
            pending_warp: None,
            lineno: 0,
            unknown: Vec::new(),
            ops: OpCache::default(),
            block_lines: Vec::new(),
        }
    }

    /// A reader for a part of the file that starts at line `lineno + 1` with a `#BEGIN_TB`: the
    /// header's state, empty arenas.
    fn part(&self, lineno: u32) -> Reader<'t> {
        let mut r = self.clone();
        r.k.blocks.clear();
        r.k.insts.clear();
        r.k.regs.clear();
        r.k.addrs.clear();
        r.unknown.clear();
        r.block_lines.clear();
        r.lineno = lineno;
        r
    }

    /// Between two thread blocks: nothing open.
    fn between_blocks(&self) -> bool {
        self.block.is_none() && self.pending_warp.is_none()
    }

    fn err(&self, message: String) -> TraceError {
        TraceError::Syntax {
            file: self.file.to_string(),
            line: self.lineno,
            message,
        }
    }

    /// Reads the next line of the file.
    fn line(&mut self, raw: &'t str) -> Result<(), TraceError> {
        self.lineno += 1;
        let l = raw.trim();
        if let Some((w, left, _)) = self.warp.as_mut() {
            if *left > 0 {
                if l.is_empty() {
                    return Ok(());
                }
                let w = *w as usize;
                *left -= 1;
                let b = self.block.as_mut().expect("a warp is read inside a block");
                b.warps[w].len += 1;
                let (lineinfo, lineno) = (self.lineinfo, self.lineno);
                return parse_inst(
                    l,
                    lineinfo,
                    lineno,
                    &mut self.k,
                    &mut self.unknown,
                    &mut self.ops,
                )
                .map_err(|m| self.err(m));
            }
        }
        if l.is_empty() {
            return Ok(());
        }
        if let Some(h) = l.strip_prefix('-') {
            if self.block.is_some() || !self.k.blocks.is_empty() {
                return Err(self.err("header line after the first thread block".into()));
            }
            let Some((key, val)) = h.split_once('=') else {
                return Err(self.err(format!("expected `-key = value`, found `{l}`")));
            };
            let (key, val) = (key.trim(), val.trim());
            let num = |v: &str| -> Result<u32, String> {
                v.parse::<u32>()
                    .map_err(|_| format!("`-{key}`: `{v}` is not a number"))
            };
            let hex = |v: &str| -> Result<u64, String> {
                parse_hex(v).ok_or_else(|| format!("`-{key}`: `{v}` is not a hex address"))
            };
            let k = &mut self.k;
            let res: Result<(), String> = (|| {
                match key {
                    "kernel name" => {
                        k.name = val.to_string();
                        self.seen_header[0] = true;
                    }
                    "kernel id" => k.id = num(val)?,
                    "grid dim" => {
                        k.grid = parse_dim3(val).ok_or_else(|| {
                            format!("`-grid dim`: expected (x,y,z), found `{val}`")
                        })?;
                        check_launch(k.grid, [1; 3]).map_err(|l| format!("`-grid dim`: {l}"))?;
                        k.grid_line = self.lineno;
                        self.seen_header[1] = true;
                    }
                    "block dim" => {
                        k.block = parse_dim3(val).ok_or_else(|| {
                            format!("`-block dim`: expected (x,y,z), found `{val}`")
                        })?;
                        check_launch([1; 3], k.block).map_err(|l| format!("`-block dim`: {l}"))?;
                        k.block_line = self.lineno;
                        self.seen_header[2] = true;
                    }
                    "shmem" => k.shmem = num(val)?,
                    "nregs" => k.nregs = num(val)?,
                    "binary version" => k.binary_version = num(val)?,
                    "accelsim tracer version" => k.tracer_version = num(val)?,
                    "enable lineinfo" => self.lineinfo = num(val)? != 0,
                    "shmem base_addr" => k.shmem_base = hex(val)?,
                    "local mem base_addr" => k.local_base = hex(val)?,
                    // Informational keys that do not affect timing.
                    _ => {}
                }
                Ok(())
            })();
            return res.map_err(|m| self.err(m));
        }
        if l.starts_with("#BEGIN_TB") {
            if let Some(b) = &self.block {
                return Err(self.err(format!(
                    "`#BEGIN_TB` inside thread block {:?} opened at line {} (missing `#END_TB`)",
                    b.id, b.line
                )));
            }
            if !(self.seen_header.iter().all(|&s| s)) {
                return Err(self.err(
                    "thread block before the header gave `-kernel name`, `-grid dim` and `-block dim`"
                        .into(),
                ));
            }
            let k = &self.k;
            if k.tracer_version < 3 {
                return Err(self.err(format!(
                    "accelsim tracer version {} (or missing `-accelsim tracer version`): only version 3 and \
                     later are read (earlier ones prefix each line with block and warp ids)",
                    k.tracer_version
                )));
            }
            if k.grid.contains(&0) || k.block.contains(&0) {
                return Err(self.err(format!(
                    "grid dim {:?} / block dim {:?}: every dimension must be at least 1",
                    k.grid, k.block
                )));
            }
            self.block = Some(OpenBlock {
                id: [u32::MAX; 3],
                warps: Vec::new(),
                line: self.lineno,
                id_line: 0,
            });
            self.warp = None;
            return Ok(());
        }
        if l.starts_with("#END_TB") {
            let Some(b) = self.block.take() else {
                return Err(self.err("`#END_TB` without `#BEGIN_TB`".into()));
            };
            if b.id[0] == u32::MAX {
                return Err(self.err("thread block without a `thread block = x,y,z` line".into()));
            }
            if let Some(n) = self.pending_warp {
                return Err(self.err(format!("warp {n} has no `insts =` line")));
            }
            self.k.blocks.push(TraceBlock {
                id: b.id,
                warps: b.warps,
            });
            self.block_lines.push(b.id_line);
            self.warp = None;
            return Ok(());
        }
        if l.starts_with('#') {
            return Ok(());
        }
        if self.block.is_none() {
            return Err(self.err(format!(
                "expected a header line `-key = value` or `#BEGIN_TB`, found `{l}`"
            )));
        }
        if let Some(v) = l.strip_prefix("thread block") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let Some(id) = parse_dim3(&format!("({v})")) else {
                return Err(self.err(format!("expected `thread block = x,y,z`, found `{l}`")));
            };
            if (0..3).any(|d| id[d] >= self.k.grid[d]) {
                return Err(self.err(format!(
                    "thread block {id:?} lies outside grid dim {:?}",
                    self.k.grid
                )));
            }
            let lineno = self.lineno;
            let b = self.block.as_mut().expect("checked");
            b.id = id;
            b.id_line = lineno;
        } else if let Some(v) = l.strip_prefix("warp") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let Ok(w) = v.parse::<u32>() else {
                return Err(self.err(format!("expected `warp = N`, found `{l}`")));
            };
            let nwarps = self.k.block_threads().div_ceil(32);
            if w >= nwarps {
                return Err(self.err(format!(
                    "warp {w}: a block of {} threads has warps 0..{}",
                    self.k.block_threads(),
                    nwarps - 1
                )));
            }
            self.pending_warp = Some(w);
        } else if let Some(v) = l.strip_prefix("insts") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let Ok(n) = v.parse::<u32>() else {
                return Err(self.err(format!("expected `insts = N`, found `{l}`")));
            };
            let Some(w) = self.pending_warp.take() else {
                return Err(self.err("`insts =` without a preceding `warp =` line".into()));
            };
            let first = self.k.insts.len() as u32;
            let b = self.block.as_mut().expect("checked");
            if b.warps.len() as u32 <= w {
                b.warps.resize(
                    w as usize + 1,
                    TraceWarp {
                        first: u32::MAX,
                        len: 0,
                    },
                );
            }
            if b.warps[w as usize].first != u32::MAX {
                return Err(self.err(format!("warp {w} appears twice in this thread block")));
            }
            b.warps[w as usize] = TraceWarp { first, len: 0 };
            self.warp = Some((w, n, self.lineno));
        } else {
            return Err(self.err(format!(
                "expected `warp = N`, `insts = N`, an instruction or `#END_TB`, found `{l}`"
            )));
        }
        Ok(())
    }

    /// Appends what `part` read (a reader made by [`Reader::part`] for the lines after this one's),
    /// moving its arena indices past this one's.
    fn append(&mut self, part: Reader<'t>) {
        let (insts, regs, addrs) = (
            self.k.insts.len() as u32,
            self.k.regs.len() as u32,
            self.k.addrs.len() as u32,
        );
        let p = part.k;
        self.k.blocks.extend(p.blocks.into_iter().map(|mut b| {
            for w in &mut b.warps {
                if w.first != u32::MAX {
                    w.first += insts;
                }
            }
            b
        }));
        self.k.insts.extend(p.insts.into_iter().map(|mut i| {
            i.regs += regs;
            i.addrs += addrs;
            i
        }));
        self.k.regs.extend(p.regs);
        self.k.addrs.extend(p.addrs);
        self.block_lines.extend(part.block_lines);
        for (op, n) in part.unknown {
            match self.unknown.iter_mut().find(|u| u.0 == op) {
                Some(u) => u.1 += n,
                None => self.unknown.push((op, n)),
            }
        }
        self.lineno = part.lineno;
        self.block = part.block;
        self.warp = part.warp;
        self.pending_warp = part.pending_warp;
    }

    /// The end of the file: truncation checks, and the kernel.
    fn finish(mut self) -> Result<TraceKernel, TraceError> {
        if let Some((w, left, at)) = self.warp {
            if left > 0 {
                return Err(self.err(format!(
                    "the file ends inside warp {w} (its `insts =` at line {at} promised {left} more \
                     instruction lines): the trace is truncated"
                )));
            }
        }
        if let Some(b) = &self.block {
            return Err(self.err(format!(
                "the file ends inside thread block {:?} opened at line {} (no `#END_TB`): the trace is truncated",
                b.id, b.line
            )));
        }
        let k = &mut self.k;
        let expected: u64 = k.grid.iter().map(|&g| g as u64).product();
        if !self.seen_header.iter().all(|&s| s) {
            return Err(self.err(
                "no header: `-kernel name`, `-grid dim` and `-block dim` are required".into(),
            ));
        }
        // Every id lies inside the grid (checked at its line), so a grid's worth of blocks is all
        // of them unless one came twice.
        let mut order: Vec<usize> = (0..k.blocks.len()).collect();
        order.sort_by_key(|&i| (k.blocks[i].id[2], k.blocks[i].id[1], k.blocks[i].id[0], i));
        if let Some(w) = order
            .windows(2)
            .find(|w| k.blocks[w[0]].id == k.blocks[w[1]].id)
        {
            let id = k.blocks[w[1]].id;
            return Err(TraceError::Syntax {
                file: self.file.to_string(),
                line: self.block_lines[w[1]],
                message: format!(
                    "thread block {},{},{} appears twice (first at line {})",
                    id[0], id[1], id[2], self.block_lines[w[0]]
                ),
            });
        }
        if (k.blocks.len() as u64) < expected {
            let n = k.blocks.len();
            return Err(self.err(format!(
                "the trace holds {n} of the grid's {expected} thread blocks: it is truncated"
            )));
        }
        for b in &mut k.blocks {
            // A warp the tracer never listed (fewer warps than the block has) ran no instruction.
            for w in &mut b.warps {
                if w.first == u32::MAX {
                    w.first = 0;
                }
            }
        }
        self.k.unknown_opcodes = self.unknown;
        Ok(self.k)
    }
}

/// Parses the text of one kernel trace; `path` names it in errors and in the result.
pub fn parse_kernel(text: &str, path: &Path) -> Result<TraceKernel, TraceError> {
    parse_kernel_threads(text, path, 1)
}

/// Bytes of thread blocks below which a trace is read on one thread.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
/// Most parts a kernel's thread blocks are cut into (one thread each).
const MAX_PARTS: usize = 64;

/// As [`parse_kernel`], reading the thread blocks on up to `threads` threads: the text after the
/// header is cut at `#BEGIN_TB` lines into one part per thread, each read by a reader starting from
/// the header's state, and the parts are appended in file order, so the kernel is the same as one
/// thread reads. A part that fails, or that does not end between two blocks, makes the whole file
/// be read again on one thread, so that every error is the one a sequential read reports.
pub fn parse_kernel_threads(
    text: &str,
    path: &Path,
    threads: usize,
) -> Result<TraceKernel, TraceError> {
    let file = path.display().to_string();
    let mut r = Reader::new(&file, path);
    // About one instruction per 40 bytes of text: reserved once instead of grown by copying.
    r.k.insts.reserve(text.len() / 48);
    r.k.regs.reserve(text.len() / 24);
    let body = match text.find("\n#BEGIN_TB") {
        Some(at) if threads > 1 && text.len() - at >= PARALLEL_MIN_BYTES => at + 1,
        _ => {
            for raw in text.lines() {
                r.line(raw)?;
            }
            return r.finish();
        }
    };
    for raw in text[..body].lines() {
        r.line(raw)?;
    }
    if !r.between_blocks() {
        return parse_kernel_threads(text, path, 1);
    }
    // Cut points: the `#BEGIN_TB` line at or after each equal share of the body (at most
    // `MAX_PARTS` parts, whatever the thread count asked for).
    let parts_wanted = threads.min(MAX_PARTS);
    let mut cuts = vec![body];
    for i in 1..parts_wanted {
        let mut want = body + (text.len() - body) * i / parts_wanted;
        while !text.is_char_boundary(want) {
            want += 1;
        }
        let last = *cuts.last().expect("starts with the body");
        if want <= last {
            continue;
        }
        if let Some(at) = text[want..].find("\n#BEGIN_TB") {
            let c = want + at + 1;
            if c > last {
                cuts.push(c);
            }
        }
    }
    cuts.push(text.len());
    let mut starts = Vec::with_capacity(cuts.len());
    let mut line = r.lineno;
    for w in cuts.windows(2) {
        starts.push(line);
        line += text[w[0]..w[1]].bytes().filter(|&b| b == b'\n').count() as u32;
    }
    let parts: Vec<Option<Reader>> = std::thread::scope(|s| {
        let handles: Vec<_> = cuts
            .windows(2)
            .zip(&starts)
            .map(|(w, &first)| {
                let mut p = r.part(first);
                let chunk = &text[w[0]..w[1]];
                s.spawn(move || {
                    p.k.insts.reserve(chunk.len() / 48);
                    p.k.regs.reserve(chunk.len() / 24);
                    for raw in chunk.lines() {
                        p.line(raw).ok()?;
                    }
                    Some(p)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let n = parts.len();
    for (i, p) in parts.into_iter().enumerate() {
        match p {
            Some(p) if i + 1 == n || p.between_blocks() => r.append(p),
            _ => return parse_kernel_threads(text, path, 1),
        }
    }
    r.finish()
}

/// The classifications of the (opcode, memory width) pairs seen so far in a kernel: a trace repeats a
/// few dozen opcodes millions of times, and [`classify`] splits its qualifiers each time.
#[derive(Default, Clone)]
struct OpCache<'t> {
    seen: std::collections::HashMap<
        (&'t str, u32),
        (TraceOp, bool),
        std::hash::BuildHasherDefault<Fnv>,
    >,
    /// The last classification at each PC (by `pc / 16`, for PCs below 1 MiB).
    by_pc: Vec<Option<(&'t str, u32, (TraceOp, bool))>>,
}

/// FNV-1a: the opcode keys are short strings, for which SipHash costs more than the lookup saves.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

impl<'t> OpCache<'t> {
    fn classify(&mut self, pc: u32, opcode: &'t str, mem_width: u32) -> (TraceOp, bool) {
        // The instruction at a PC is the same on every line that names it: one string compare
        // instead of hashing the opcode (checked, so a trace that disagrees is still read right).
        let slot = (pc / 16) as usize;
        if let Some(Some((o, w, r))) = self.by_pc.get(slot) {
            if *o == opcode && *w == mem_width {
                return *r;
            }
        }
        let r = *self
            .seen
            .entry((opcode, mem_width))
            .or_insert_with(|| classify(opcode, mem_width));
        if slot < 1 << 16 {
            if self.by_pc.len() <= slot {
                self.by_pc.resize(slot + 1, None);
            }
            self.by_pc[slot] = Some((opcode, mem_width, r));
        }
        r
    }
}

/// A hex number without prefix (PCs, masks): the digits, at most 16 of them.
fn hex_digits(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let s = if s.len() > 16 {
        match s.trim_start_matches('0') {
            "" => return Some(0),
            t if t.len() > 16 => return None,
            t => t,
        }
    } else {
        s
    };
    let mut v = 0u64;
    for &c in s.as_bytes() {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v << 4 | d as u64;
    }
    Some(v)
}

/// Parses one instruction line into `k`'s arenas.
fn parse_inst<'t>(
    l: &'t str,
    lineinfo: bool,
    lineno: u32,
    k: &mut TraceKernel,
    unknown: &mut Vec<(String, u64)>,
    ops: &mut OpCache<'t>,
) -> Result<(), String> {
    let mut t = l.split_ascii_whitespace();
    let mut next = |what: &str| {
        t.next()
            .ok_or_else(|| format!("instruction line ends early: expected {what}"))
    };
    if lineinfo {
        next("a source line number")?;
    }
    let pc_s = next("the PC")?;
    let pc = hex_digits(pc_s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{pc_s}` is not a hex PC"))?;
    let mask_s = next("the active mask")?;
    let mask = hex_digits(mask_s)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{mask_s}` is not a hex mask"))?;
    let count = |s: &str, what: &str| {
        s.parse::<u8>()
            .map_err(|_| format!("`{s}` is not a {what} count"))
    };
    let ndst = count(next("the destination count")?, "destination")?;
    let regs_at = k.regs.len() as u32;
    let mut nd = 0u8;
    for _ in 0..ndst {
        if let Some(r) = parse_reg(next("a destination register")?)? {
            k.regs.push(r);
            nd += 1;
        }
    }
    let opcode = next("the opcode")?;
    if !opcode.starts_with(|c: char| c.is_ascii_uppercase()) {
        return Err(format!("`{opcode}` is not an opcode"));
    }
    let nsrc = count(next("the source count")?, "source")?;
    let mut ns = 0u8;
    for _ in 0..nsrc {
        if let Some(r) = parse_reg(next("a source register")?)? {
            k.regs.push(r);
            ns += 1;
        }
    }
    let w_s = next("the memory width")?;
    let mem_width: u32 = w_s
        .parse()
        .map_err(|_| format!("`{w_s}` is not a memory width"))?;
    let addrs_at = k.addrs.len() as u32;
    let mut strided = false;
    let active = mask.count_ones() as usize;
    if mem_width > 0 && active > 0 {
        let mode = next("the address mode (0, 1 or 2)")?;
        let hex = |s: &str| parse_hex(s).ok_or_else(|| format!("`{s}` is not a hex address"));
        let dec = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| format!("`{s}` is not a decimal stride or delta"))
        };
        match mode {
            "0" => {
                for _ in 0..active {
                    let a = hex(next("one address per active lane")?)?;
                    k.addrs.push(a);
                }
            }
            "1" => {
                // Kept compressed: the most common form, 2 words instead of one per lane.
                let base = hex(next("the base address")?)?;
                let stride = dec(next("the stride")?)?;
                k.addrs.push(base);
                k.addrs.push(stride as u64);
                strided = true;
            }
            "2" => {
                let mut a = hex(next("the base address")?)?;
                k.addrs.push(a);
                for _ in 1..active {
                    a = a.wrapping_add(dec(next("one delta per further active lane")?)? as u64);
                    k.addrs.push(a);
                }
            }
            m => return Err(format!("address mode `{m}`: expected 0, 1 or 2")),
        }
    }
    // An optional immediate may follow; anything more is a malformed line.
    if t.next().is_some() && t.next().is_some() {
        return Err(format!(
            "unexpected fields at the end of the instruction line (the address list is longer than the \
             {active} active lanes of mask {mask:08x}?)"
        ));
    }
    let (mut op, known) = ops.classify(pc, opcode, mem_width);
    if !known {
        match unknown.iter_mut().find(|u| u.0 == opcode) {
            Some(u) => u.1 += 1,
            None => unknown.push((opcode.to_string(), 1)),
        }
    }
    if matches!(op, TraceOp::Mem(_)) && (mem_width == 0 || active == 0) {
        // No lane touched memory (predicated off): only the issue slot is spent.
        op = TraceOp::Compute(LatencyClass::IntAlu);
    }
    k.insts.push(TraceInst {
        pc,
        mask,
        op,
        regs: regs_at,
        ndst: nd,
        nsrc: ns,
        strided,
        addrs: addrs_at,
        line: lineno,
    });
    Ok(())
}
