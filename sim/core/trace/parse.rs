//! The text formats: `kernelslist.g` and `kernel-N.traceg` (optionally xz-compressed), as written by
//! Accel-Sim's NVBit tracer, version 3 and later (the format is described in the module header of
//! `trace/mod.rs` and in the trace README the project ships with its samples).
//!
//! **Streaming** ([`load`], [`load_kernel`]): a kernel file is read twice. The first pass reads it
//! line by line without keeping it and without decoding instruction lines: it checks the header, the
//! structure (`#BEGIN_TB`, `thread block =`, `warp =`, `insts =` and that many instruction lines,
//! `#END_TB`), that the text is UTF-8, that every block lies inside the grid, that none comes twice and
//! that the grid is covered, and records where each block lies ([`BlockEntry`]: byte offset, length,
//! first line, first instruction). A block's instruction lines are decoded when the dispatcher places
//! its work-group ([`TraceKernel::block`]): the bytes are read again at its offset and parsed by the
//! same reader, starting from the header's state and the block's line number, so an error in an
//! instruction line names the same `file:line` as a whole-file read would, only later (when the block
//! is dispatched; the run stops with that error). The parsed block belongs to its work-group and is
//! freed when the group finishes, so memory holds the index (about 60 bytes per block) and the resident
//! blocks, whatever the trace's length. An `.xz` file cannot be read at an offset: it is decompressed
//! once into an unnamed temporary file (in `std::env::temp_dir()`, removed from the directory as soon
//! as it is open; it needs the decompressed size in disk space) and read from there.
//!
//! **In memory** (`memory.rs`: tests, fuzzing, `gpumemsim bench`'s synthetic traces): every block is
//! parsed at once by the same reader.
//!
//! A warp's instruction lines take fast paths: the first pass counts them (a line that starts with a
//! visible character, found with `memchr`), and decoding reads those in the tracer's own form in one
//! pass over the bytes (`scan.rs`); every other line goes through [`Reader::line`] and the general
//! decoder (`decode.rs`), which give every error. The text is checked as UTF-8 once per buffer or
//! block, not per line. The opcode's classification is cached by PC.
//!
//! Every malformed or truncated input is an error naming the file and line: a header value that does
//! not parse, an instruction line with too few or too many fields, an unknown register, an address
//! count that does not match the active mask, a warp with fewer instruction lines than its `insts =`
//! count, a thread block without `#END_TB`, or fewer thread blocks than the grid has.

use super::decode::{parse_hex, parse_inst, push_inst, OpCache};
use super::scan;
use super::source::{decompress, Kind, Source};
use super::*;
use crate::workload::check_launch;
use std::io::BufRead as _;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
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

/// As [`load`]. `threads` does not change the reading: a kernel file's first pass is one stream, and
/// its blocks are decoded when dispatched (ahead on the run's own threads, `machine/gpu/trace_blocks.rs`).
pub fn load_threads(path: &Path, _threads: usize) -> Result<Trace, TraceError> {
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
            commands.push(TraceCommand::Kernel(Arc::new(load_kernel(&p)?)));
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

/// Loads one `kernel-N.traceg` or `kernel-N.traceg.xz`, streamed: the first pass only (see the module
/// header); its blocks are parsed when [`TraceKernel::block`] asks for them.
pub fn load_kernel(path: &Path) -> Result<TraceKernel, TraceError> {
    let file = path.display().to_string();
    let io = |source| TraceError::Io {
        file: file.clone(),
        source,
    };
    let (f, temp) = if path.extension().is_some_and(|e| e == "xz") {
        decompress(path, &file)?
    } else {
        (std::fs::File::open(path).map_err(io)?, None)
    };
    let mut r = Reader::new(&file, false);
    // Whole lines are handed over from a large buffer (no copy per line); a line cut by the
    // buffer's end waits in `carry` for its rest.
    let mut input = std::io::BufReader::with_capacity(1 << 20, &f);
    let mut carry: Vec<u8> = Vec::new();
    let mut offset = 0u64;
    loop {
        let buf = input.fill_buf().map_err(io)?;
        let n = buf.len();
        if n == 0 {
            break;
        }
        match buf.iter().rposition(|&c| c == b'\n') {
            None => carry.extend_from_slice(buf),
            Some(last) => {
                let mut start = 0;
                if !carry.is_empty() {
                    // There is one at `last` at the latest.
                    let nl = buf.iter().position(|&c| c == b'\n').unwrap_or(last);
                    carry.extend_from_slice(&buf[..=nl]);
                    r.lines(&carry, &mut offset)?;
                    carry.clear();
                    start = nl + 1;
                }
                r.lines(&buf[start..=last], &mut offset)?;
                carry.extend_from_slice(&buf[last + 1..]);
            }
        }
        input.consume(n);
    }
    if !carry.is_empty() {
        r.lines(&carry, &mut offset)?;
    }
    drop(input);
    let done = r.finish()?;
    let source = Source::new(
        Kind::File {
            file: f,
            _temp: temp,
            #[cfg(not(unix))]
            lock: Mutex::new(()),
        },
        done.entries.len(),
    );
    Ok(done.kernel(path, source))
}

/// The error for a line that is not UTF-8: the bad byte's line and column (in characters).
pub(crate) fn not_utf8(file: &str, line: u32, bytes: &[u8], valid: usize) -> TraceError {
    let before = std::str::from_utf8(&bytes[..valid]).unwrap_or("");
    TraceError::Text(crate::text::TextError::NotUtf8 {
        file: file.to_string(),
        line,
        col: before.chars().count() as u32 + 1,
        byte: bytes[valid],
    })
}

fn parse_dim3(s: &str) -> Option<[u32; 3]> {
    let s = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = s.split(',').map(|x| x.trim().parse::<u32>().ok());
    let d = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(d)
}

/// The kernel's header as read so far.
#[derive(Clone, Default)]
pub(crate) struct Head {
    name: String,
    id: u32,
    grid: [u32; 3],
    block: [u32; 3],
    grid_line: u32,
    block_line: u32,
    shmem: u32,
    nregs: u32,
    binary_version: u32,
    tracer_version: u32,
    shmem_base: u64,
    local_base: u64,
    lineinfo: bool,
    /// `-kernel name`, `-grid dim`, `-block dim` seen.
    seen: [bool; 3],
}

impl Head {
    fn block_threads(&self) -> u32 {
        self.block.iter().product()
    }
}

/// Builder state of the thread block being read.
pub(crate) struct OpenBlock {
    pub(crate) id: [u32; 3],
    pub(crate) warps: Vec<TraceWarp>,
    pub(crate) line: u32,
    /// Line of its `thread block = x,y,z`.
    pub(crate) id_line: u32,
    pub(crate) offset: u64,
    pub(crate) first: u32,
    pub(crate) insts: Vec<TraceInst>,
    pub(crate) regs: Vec<TraceReg>,
    pub(crate) addrs: Vec<u64>,
    pub(crate) unknown: Vec<(String, u64)>,
    /// Thread instructions (active lanes) so far.
    pub(crate) threads: u64,
}

/// The line-by-line reader of one kernel trace, or of one thread block of it: where in the format it
/// stands, the blocks found, and (when `full`) their instructions decoded.
pub(crate) struct Reader<'f> {
    file: &'f str,
    head: Head,
    /// Decode instruction lines (else only count them: the first pass of a streamed kernel).
    full: bool,
    block: Option<OpenBlock>,
    /// The warp being read: (index in block, instructions still expected, line of `insts =`).
    warp: Option<(u32, u32, u32)>,
    pending_warp: Option<u32>,
    lineno: u32,
    /// Instruction lines so far (kernel-wide numbering).
    ninsts: u32,
    /// Blocks closed so far.
    closed: usize,
    entries: Vec<BlockEntry>,
    /// The `thread block =` line of each block in `entries`, for duplicate blocks.
    block_lines: Vec<u32>,
    /// Decoded blocks (when `full`), with their unknown opcodes.
    parsed: Vec<(TraceBlock, Vec<(String, u64)>)>,
    pub(crate) ops: OpCache,
    pub(crate) live: Option<Arc<AtomicUsize>>,
    /// Reserve arena room from a block's byte length (one block's text at a time).
    reserve: Option<u64>,
}

/// What a whole-file read found.
pub(crate) struct Done {
    pub(crate) head: Head,
    pub(crate) entries: Vec<BlockEntry>,
    pub(crate) block_of_group: Vec<u32>,
    pub(crate) parsed: Vec<(TraceBlock, Vec<(String, u64)>)>,
}

impl Done {
    pub(crate) fn kernel(self, path: &Path, source: Source) -> TraceKernel {
        let h = self.head;
        TraceKernel {
            file: path.to_path_buf(),
            name: h.name,
            id: h.id,
            grid: h.grid,
            block: h.block,
            grid_line: h.grid_line,
            block_line: h.block_line,
            shmem: h.shmem,
            nregs: h.nregs,
            binary_version: h.binary_version,
            tracer_version: h.tracer_version,
            shmem_base: h.shmem_base,
            local_base: h.local_base,
            lineinfo: h.lineinfo,
            blocks: self.entries,
            block_of_group: self.block_of_group,
            source,
        }
    }
}

impl<'f> Reader<'f> {
    pub(crate) fn new(file: &'f str, full: bool) -> Reader<'f> {
        Reader {
            file,
            head: Head::default(),
            full,
            block: None,
            warp: None,
            pending_warp: None,
            lineno: 0,
            ninsts: 0,
            closed: 0,
            entries: Vec::new(),
            block_lines: Vec::new(),
            parsed: Vec::new(),
            ops: OpCache::default(),
            live: None,
            reserve: None,
        }
    }

    /// A reader for thread block `e` of `k`: the header's state, at the line before the block's.
    pub(crate) fn for_block(
        file: &'f str,
        k: &TraceKernel,
        e: &BlockEntry,
        ops: OpCache,
        live: &Arc<AtomicUsize>,
    ) -> Reader<'f> {
        let mut r = Reader::new(file, true);
        r.head = Head {
            name: k.name.clone(),
            id: k.id,
            grid: k.grid,
            block: k.block,
            grid_line: k.grid_line,
            block_line: k.block_line,
            shmem: k.shmem,
            nregs: k.nregs,
            binary_version: k.binary_version,
            tracer_version: k.tracer_version,
            shmem_base: k.shmem_base,
            local_base: k.local_base,
            lineinfo: k.lineinfo,
            seen: [true; 3],
        };
        r.lineno = e.line - 1;
        r.ninsts = e.first;
        r.closed = 1;
        r.ops = ops;
        r.live = Some(live.clone());
        r.reserve = Some(e.bytes);
        r
    }

    /// Reads whole lines from `bytes` (UTF-8 checked here), the first at byte `offset` of the file.
    fn lines(&mut self, bytes: &[u8], offset: &mut u64) -> Result<(), TraceError> {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                // The lines before the bad one are read first: their errors come first.
                let at = e.valid_up_to();
                let cut = bytes[..at]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                self.lines(&bytes[..cut], offset)?;
                return Err(not_utf8(
                    self.file,
                    self.lineno + 1,
                    &bytes[cut..],
                    at - cut,
                ));
            }
        };
        self.text(text, offset)
    }

    /// Reads the whole lines of `text`, the first at byte `offset` of the file. A warp's instruction
    /// lines go through the fast paths: counted by [`Reader::count_insts`] in the first pass, read by
    /// the one-pass reader (`scan.rs`) when decoding; every other line, and each one a fast path
    /// hands back, through [`Reader::line`].
    pub(crate) fn text(&mut self, text: &str, offset: &mut u64) -> Result<(), TraceError> {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if self.warp.is_some_and(|(_, left, _)| left > 0) {
                let n = if self.full {
                    self.insts_fast(&bytes[at..])
                } else {
                    self.count_insts(&bytes[at..])
                };
                if n > 0 {
                    *offset += n as u64;
                    at += n;
                    continue;
                }
            }
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p + 1);
            self.line(&text[at..end], *offset)?;
            *offset += (end - at) as u64;
            at = end;
        }
        Ok(())
    }

    /// The decoding fast path through a warp's instruction lines: reads the lines at the start of
    /// `rest` that the one-pass reader takes, up to the number the warp still expects, as
    /// [`Reader::line`] would; returns the bytes they span (0: let `line` read the next line).
    fn insts_fast(&mut self, rest: &[u8]) -> usize {
        let Some((w, left, _)) = self.warp else {
            return 0;
        };
        // The kernel-wide count stays below 2^32 (else `line` reports it).
        let left = left.min(u32::MAX - self.ninsts);
        let lineinfo = self.head.lineinfo;
        let Some(b) = self.block.as_mut() else {
            return 0;
        };
        // The one-pass reader reads lines that end with `\n` (a last line without one goes to `line`).
        let Some(last) = memchr::memrchr(b'\n', rest) else {
            return 0;
        };
        let Some(mut lines) = scan::Lines::new(&rest[..=last]) else {
            return 0;
        };
        let mut k = 0u32;
        let mut at = lines.at();
        while k < left {
            let (regs, addrs) = (b.regs.len(), b.addrs.len());
            // A refused instruction is left to `line` (from its start), which says where it is.
            let taken = match lines.inst(lineinfo, b) {
                Some(f) => push_inst(f, self.lineno + k + 1, b, &mut self.ops).is_ok(),
                None => false,
            };
            if !taken {
                b.regs.truncate(regs);
                b.addrs.truncate(addrs);
                break;
            }
            k += 1;
            at = lines.at();
        }
        self.ninsts += k;
        self.lineno += k;
        b.warps[w as usize].len += k;
        if let Some((_, left, _)) = self.warp.as_mut() {
            *left -= k;
        }
        at
    }

    /// The first pass's fast path through a warp's instruction lines: counts the lines at the start
    /// of `rest` that begin with a visible character (so are not blank), up to the number the warp
    /// still expects, as [`Reader::line`] would; returns the bytes they span (0: let `line` read the
    /// next line).
    fn count_insts(&mut self, rest: &[u8]) -> usize {
        let Some((w, left, _)) = self.warp else {
            return 0;
        };
        let (mut k, mut at) = (0u32, 0usize);
        while k < left && rest.get(at).is_some_and(|c| c.is_ascii_graphic()) {
            match memchr::memchr(b'\n', &rest[at..]) {
                Some(p) => at += p + 1,
                None => break,
            }
            k += 1;
        }
        let Some(n) = self.ninsts.checked_add(k) else {
            return 0;
        };
        if k == 0 {
            return 0;
        }
        self.ninsts = n;
        self.lineno += k;
        let b = self.block.as_mut().expect("a warp is read inside a block");
        b.warps[w as usize].len += k;
        if let Some((_, left, _)) = self.warp.as_mut() {
            *left -= k;
        }
        at
    }

    /// Reads the text of block `e` (from its `#BEGIN_TB` to its `#END_TB` line).
    pub(crate) fn read_block(
        &mut self,
        text: &str,
        e: &BlockEntry,
    ) -> Result<(TraceBlock, Vec<(String, u64)>), TraceError> {
        let mut offset = e.offset;
        self.text(text, &mut offset)?;
        if self.block.is_some() || self.parsed.len() != 1 || self.parsed[0].0.id != e.id {
            return Err(self.err(format!(
                "thread block {:?} at line {} is not what the first read of this file found there (the \
                 file changed while it was being simulated)",
                e.id, e.line
            )));
        }
        Ok(self.parsed.pop().expect("checked"))
    }

    fn err(&self, message: String) -> TraceError {
        TraceError::Syntax {
            file: self.file.to_string(),
            line: self.lineno,
            message,
        }
    }

    /// Reads the next line of the file (`raw`, with its line end), which starts at byte `offset`.
    pub(crate) fn line(&mut self, raw: &str, offset: u64) -> Result<(), TraceError> {
        self.lineno += 1;
        let l = raw.trim();
        if let Some((w, left, _)) = self.warp.as_mut() {
            if *left > 0 {
                if l.is_empty() {
                    return Ok(());
                }
                let w = *w as usize;
                *left -= 1;
                let Some(n) = self.ninsts.checked_add(1) else {
                    return Err(self.err(
                        "more than 4294967295 instruction lines in one kernel (the most a trace may hold)"
                            .into(),
                    ));
                };
                self.ninsts = n;
                let b = self.block.as_mut().expect("a warp is read inside a block");
                b.warps[w].len += 1;
                if !self.full {
                    return Ok(());
                }
                let (lineinfo, lineno) = (self.head.lineinfo, self.lineno);
                return parse_inst(l.as_bytes(), lineinfo, lineno, b, &mut self.ops).map_err(|e| {
                    match e.at {
                        // The column of the field, counted in characters of the untrimmed line.
                        Some(at) => {
                            let lead = raw.len() - raw.trim_start().len();
                            let col = raw[..lead + at].chars().count() + 1;
                            self.err(format!("column {col}: {}", e.message))
                        }
                        None => self.err(e.message),
                    }
                });
            }
        }
        if l.is_empty() {
            return Ok(());
        }
        if let Some(h) = l.strip_prefix('-') {
            return self.header(l, h);
        }
        if l.starts_with("#BEGIN_TB") {
            if let Some(b) = &self.block {
                return Err(self.err(format!(
                    "`#BEGIN_TB` inside {} opened at line {} (missing `#END_TB`)",
                    block_name(b.id),
                    b.line
                )));
            }
            if !(self.head.seen.iter().all(|&s| s)) {
                return Err(self.err(
                    "thread block before the header gave `-kernel name`, `-grid dim` and `-block dim`"
                        .into(),
                ));
            }
            let k = &self.head;
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
            // About one instruction per 40 bytes of text: reserved once instead of grown by copying.
            let guess = self.reserve.unwrap_or(0) as usize;
            self.block = Some(OpenBlock {
                id: [u32::MAX; 3],
                warps: Vec::new(),
                line: self.lineno,
                id_line: 0,
                offset,
                first: self.ninsts,
                insts: Vec::with_capacity(guess / 44),
                regs: Vec::with_capacity(guess / 24),
                addrs: Vec::with_capacity(guess / 40),
                unknown: Vec::new(),
                threads: 0,
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
            self.entries.push(BlockEntry {
                id: b.id,
                offset: b.offset,
                bytes: offset + raw.len() as u64 - b.offset,
                line: b.line,
                first: b.first,
                insts: self.ninsts - b.first,
            });
            self.block_lines.push(b.id_line);
            self.closed += 1;
            self.warp = None;
            if self.full {
                let mut warps = b.warps;
                for w in &mut warps {
                    // A warp the tracer never listed (fewer warps than the block has) ran no instruction.
                    if w.first == u32::MAX {
                        w.first = 0;
                    }
                }
                let block = TraceBlock {
                    id: b.id,
                    first: b.first,
                    warps,
                    insts: b.insts,
                    regs: b.regs,
                    addrs: b.addrs,
                    shmem_base: self.head.shmem_base,
                    threads: b.threads,
                    live: self.live.as_ref().map(Live::new).unwrap_or_default(),
                };
                self.parsed.push((block, b.unknown));
            }
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
            if (0..3).any(|d| id[d] >= self.head.grid[d]) {
                return Err(self.err(format!(
                    "thread block {id:?} lies outside grid dim {:?}",
                    self.head.grid
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
            let nwarps = self.head.block_threads().div_ceil(32);
            if w >= nwarps {
                return Err(self.err(format!(
                    "warp {w}: a block of {} threads has warps 0..{}",
                    self.head.block_threads(),
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
            let first = self.ninsts;
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

    /// A `-key = value` header line (`h` without the `-`).
    fn header(&mut self, l: &str, h: &str) -> Result<(), TraceError> {
        if self.block.is_some() || self.closed > 0 {
            return Err(self.err("header line after the first thread block".into()));
        }
        let Some((key, val)) = h.split_once('=') else {
            return Err(self.err(format!("expected `-key = value`, found `{l}`")));
        };
        let (key, val) = (key.trim(), val.trim());
        let num = |v: &str| -> Result<u32, String> {
            v.parse::<u32>().map_err(|e| match e.kind() {
                std::num::IntErrorKind::PosOverflow => {
                    format!("`-{key}`: `{v}` is too large (at most {})", u32::MAX)
                }
                _ => format!("`-{key}`: `{v}` is not a whole number"),
            })
        };
        let hex = |v: &str| -> Result<u64, String> {
            parse_hex(v).ok_or_else(|| format!("`-{key}`: `{v}` is not a hex address"))
        };
        let lineno = self.lineno;
        let k = &mut self.head;
        let res: Result<(), String> = (|| {
            match key {
                "kernel name" => {
                    k.name = val.to_string();
                    k.seen[0] = true;
                }
                "kernel id" => k.id = num(val)?,
                "grid dim" if k.seen[1] => {
                    return Err(format!(
                        "`-grid dim` appears twice (first at line {}): one kernel has one grid",
                        k.grid_line
                    ))
                }
                "block dim" if k.seen[2] => {
                    return Err(format!(
                    "`-block dim` appears twice (first at line {}): one kernel has one block shape",
                    k.block_line
                ))
                }
                "grid dim" => {
                    k.grid = parse_dim3(val)
                        .ok_or_else(|| format!("`-grid dim`: expected (x,y,z), found `{val}`"))?;
                    check_launch(k.grid, [1; 3]).map_err(|l| format!("`-grid dim`: {l}"))?;
                    k.grid_line = lineno;
                    k.seen[1] = true;
                }
                "block dim" => {
                    k.block = parse_dim3(val)
                        .ok_or_else(|| format!("`-block dim`: expected (x,y,z), found `{val}`"))?;
                    check_launch([1; 3], k.block).map_err(|l| format!("`-block dim`: {l}"))?;
                    k.block_line = lineno;
                    k.seen[2] = true;
                }
                "shmem" => k.shmem = num(val)?,
                "nregs" => k.nregs = num(val)?,
                "binary version" => k.binary_version = num(val)?,
                "accelsim tracer version" => k.tracer_version = num(val)?,
                "enable lineinfo" => k.lineinfo = num(val)? != 0,
                "shmem base_addr" => k.shmem_base = hex(val)?,
                "local mem base_addr" => k.local_base = hex(val)?,
                // Informational keys that do not affect timing.
                _ => {}
            }
            Ok(())
        })();
        res.map_err(|m| self.err(m))
    }

    /// The end of the file: truncation checks, duplicate blocks, the grid's coverage.
    pub(crate) fn finish(self) -> Result<Done, TraceError> {
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
                "the file ends inside {} opened at line {} (no `#END_TB`): the trace is truncated",
                block_name(b.id),
                b.line
            )));
        }
        let h = &self.head;
        let expected: u64 = h.grid.iter().map(|&g| g as u64).product();
        if !h.seen.iter().all(|&s| s) {
            return Err(self.err(
                "no header: `-kernel name`, `-grid dim` and `-block dim` are required".into(),
            ));
        }
        // Every id lies inside the grid (checked at its line), so a grid's worth of blocks is all
        // of them unless one came twice.
        let b = &self.entries;
        let mut order: Vec<usize> = (0..b.len()).collect();
        order.sort_by_key(|&i| (b[i].id[2], b[i].id[1], b[i].id[0], i));
        if let Some(w) = order.windows(2).find(|w| b[w[0]].id == b[w[1]].id) {
            let id = b[w[1]].id;
            return Err(TraceError::Syntax {
                file: self.file.to_string(),
                line: self.block_lines[w[1]],
                message: format!(
                    "thread block {},{},{} appears twice (first at line {})",
                    id[0], id[1], id[2], self.block_lines[w[0]]
                ),
            });
        }
        if (b.len() as u64) < expected {
            let n = b.len();
            return Err(self.err(format!(
                "the trace holds {n} of the grid's {expected} thread blocks: it is truncated"
            )));
        }
        let mut block_of_group = vec![0u32; b.len()];
        for (i, e) in b.iter().enumerate() {
            let g = e.id[0] as u64
                + h.grid[0] as u64 * (e.id[1] as u64 + h.grid[1] as u64 * e.id[2] as u64);
            block_of_group[g as usize] = i as u32;
        }
        Ok(Done {
            head: self.head,
            entries: self.entries,
            block_of_group,
            parsed: self.parsed,
        })
    }
}

/// A thread block in a message: its id, or "the thread block" before its `thread block =` line.
fn block_name(id: [u32; 3]) -> String {
    if id == [u32::MAX; 3] {
        "the thread block".to_string()
    } else {
        format!("thread block {},{},{}", id[0], id[1], id[2])
    }
}
