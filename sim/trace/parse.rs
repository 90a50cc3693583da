//! The text formats: `kernelslist.g` and `kernel-N.traceg` (optionally xz-compressed), as written by
//! Accel-Sim's NVBit tracer, version 3 and later (the format is described in the module header of
//! `trace/mod.rs` and in the trace README the project ships with its samples).
//!
//! Every malformed or truncated input is an error naming the file and line: a header value that does
//! not parse, an instruction line with too few or too many fields, an unknown register, an address
//! count that does not match the active mask, a warp with fewer instruction lines than its `insts =`
//! count, a thread block without `#END_TB`, or fewer thread blocks than the grid has.

use super::*;
use std::io::Read;
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
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: u32,
        message: String,
    },
}

/// Loads a trace: `path` is a `kernelslist.g` file or the directory that holds one.
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let list = if path.is_dir() {
        path.join("kernelslist.g")
    } else {
        path.to_path_buf()
    };
    let file = list.display().to_string();
    let text = std::fs::read_to_string(&list).map_err(|source| TraceError::Io {
        file: file.clone(),
        source,
    })?;
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
            commands.push(TraceCommand::Kernel(load_kernel(&p)?));
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
    let file = path.display().to_string();
    let io = |source| TraceError::Io {
        file: file.clone(),
        source,
    };
    let text = if path.extension().is_some_and(|e| e == "xz") {
        let f = std::fs::File::open(path).map_err(io)?;
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut std::io::BufReader::new(f), &mut out).map_err(|e| {
            TraceError::Syntax {
                file: file.clone(),
                line: 0,
                message: format!("not a valid xz stream: {e}"),
            }
        })?;
        String::from_utf8(out).map_err(|_| TraceError::Syntax {
            file: file.clone(),
            line: 0,
            message: "decompressed trace is not text (UTF-8)".into(),
        })?
    } else {
        let mut s = String::new();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_string(&mut s))
            .map_err(io)?;
        s
    };
    parse_kernel(&text, path)
}

fn parse_hex(s: &str) -> Option<u64> {
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(s, 16).ok()
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
struct OpenBlock {
    id: [u32; 3],
    warps: Vec<TraceWarp>,
    line: u32,
}

/// Parses the text of one kernel trace; `path` names it in errors and in the result.
pub fn parse_kernel(text: &str, path: &Path) -> Result<TraceKernel, TraceError> {
    let file = path.display().to_string();
    let mut k = TraceKernel {
        file: path.to_path_buf(),
        name: String::new(),
        id: 0,
        grid: [0; 3],
        block: [0; 3],
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
    };
    let mut lineinfo = false;
    let mut seen_header = [false; 3]; // name, grid, block
    let mut block: Option<OpenBlock> = None;
    // The warp being read: (index in block, instructions still expected, line of `insts =`).
    let mut warp: Option<(u32, u32, u32)> = None;
    let mut pending_warp: Option<u32> = None;
    let mut lineno = 0u32;
    let mut unknown: Vec<String> = Vec::new();
    for raw in text.lines() {
        lineno += 1;
        let err = |message: String| TraceError::Syntax {
            file: file.clone(),
            line: lineno,
            message,
        };
        let l = raw.trim();
        if let Some((w, left, _)) = warp.as_mut() {
            if *left > 0 {
                if l.is_empty() {
                    continue;
                }
                let b = block.as_mut().expect("a warp is read inside a block");
                parse_inst(l, lineinfo, lineno, &mut k, &mut unknown).map_err(&err)?;
                b.warps[*w as usize].len += 1;
                *left -= 1;
                continue;
            }
        }
        if l.is_empty() {
            continue;
        }
        if let Some(h) = l.strip_prefix('-') {
            if block.is_some() || !k.blocks.is_empty() {
                return Err(err("header line after the first thread block".into()));
            }
            let (key, val) = h
                .split_once('=')
                .ok_or_else(|| err(format!("expected `-key = value`, found `{l}`")))?;
            let (key, val) = (key.trim(), val.trim());
            let num = |v: &str| -> Result<u32, TraceError> {
                v.parse::<u32>()
                    .map_err(|_| err(format!("`-{key}`: `{v}` is not a number")))
            };
            match key {
                "kernel name" => {
                    k.name = val.to_string();
                    seen_header[0] = true;
                }
                "kernel id" => k.id = num(val)?,
                "grid dim" => {
                    k.grid = parse_dim3(val).ok_or_else(|| {
                        err(format!("`-grid dim`: expected (x,y,z), found `{val}`"))
                    })?;
                    seen_header[1] = true;
                }
                "block dim" => {
                    k.block = parse_dim3(val).ok_or_else(|| {
                        err(format!("`-block dim`: expected (x,y,z), found `{val}`"))
                    })?;
                    seen_header[2] = true;
                }
                "shmem" => k.shmem = num(val)?,
                "nregs" => k.nregs = num(val)?,
                "binary version" => k.binary_version = num(val)?,
                "accelsim tracer version" => k.tracer_version = num(val)?,
                "enable lineinfo" => lineinfo = num(val)? != 0,
                "shmem base_addr" => {
                    k.shmem_base = parse_hex(val)
                        .ok_or_else(|| err(format!("`-{key}`: `{val}` is not a hex address")))?
                }
                "local mem base_addr" => {
                    k.local_base = parse_hex(val)
                        .ok_or_else(|| err(format!("`-{key}`: `{val}` is not a hex address")))?
                }
                // Informational keys that do not affect timing.
                _ => {}
            }
            continue;
        }
        if l.starts_with("#BEGIN_TB") {
            if let Some(b) = &block {
                return Err(err(format!(
                    "`#BEGIN_TB` inside thread block {:?} opened at line {} (missing `#END_TB`)",
                    b.id, b.line
                )));
            }
            if !(seen_header.iter().all(|&s| s)) {
                return Err(err(
                    "thread block before the header gave `-kernel name`, `-grid dim` and `-block dim`"
                        .into(),
                ));
            }
            if k.tracer_version < 3 {
                return Err(err(format!(
                    "accelsim tracer version {} (or missing `-accelsim tracer version`): only version 3 and \
                     later are read (earlier ones prefix each line with block and warp ids)",
                    k.tracer_version
                )));
            }
            if k.grid.contains(&0) || k.block.contains(&0) {
                return Err(err(format!(
                    "grid dim {:?} / block dim {:?}: every dimension must be at least 1",
                    k.grid, k.block
                )));
            }
            block = Some(OpenBlock {
                id: [u32::MAX; 3],
                warps: Vec::new(),
                line: lineno,
            });
            warp = None;
            continue;
        }
        if l.starts_with("#END_TB") {
            let b = block
                .take()
                .ok_or_else(|| err("`#END_TB` without `#BEGIN_TB`".into()))?;
            if b.id[0] == u32::MAX {
                return Err(err(
                    "thread block without a `thread block = x,y,z` line".into()
                ));
            }
            if let Some(n) = pending_warp {
                return Err(err(format!("warp {n} has no `insts =` line")));
            }
            k.blocks.push(TraceBlock {
                id: b.id,
                warps: b.warps,
            });
            warp = None;
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        let Some(b) = block.as_mut() else {
            return Err(err(format!(
                "expected a header line `-key = value` or `#BEGIN_TB`, found `{l}`"
            )));
        };
        if let Some(v) = l.strip_prefix("thread block") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let id = parse_dim3(&format!("({v})"))
                .ok_or_else(|| err(format!("expected `thread block = x,y,z`, found `{l}`")))?;
            if (0..3).any(|d| id[d] >= k.grid[d]) {
                return Err(err(format!(
                    "thread block {id:?} lies outside grid dim {:?}",
                    k.grid
                )));
            }
            b.id = id;
        } else if let Some(v) = l.strip_prefix("warp") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let w: u32 = v
                .parse()
                .map_err(|_| err(format!("expected `warp = N`, found `{l}`")))?;
            let nwarps = k.block_threads().div_ceil(32);
            if w >= nwarps {
                return Err(err(format!(
                    "warp {w}: a block of {} threads has warps 0..{}",
                    k.block_threads(),
                    nwarps - 1
                )));
            }
            pending_warp = Some(w);
        } else if let Some(v) = l.strip_prefix("insts") {
            let v = v.trim_start().strip_prefix('=').unwrap_or("").trim();
            let n: u32 = v
                .parse()
                .map_err(|_| err(format!("expected `insts = N`, found `{l}`")))?;
            let w = pending_warp
                .take()
                .ok_or_else(|| err("`insts =` without a preceding `warp =` line".into()))?;
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
                return Err(err(format!("warp {w} appears twice in this thread block")));
            }
            b.warps[w as usize] = TraceWarp {
                first: k.insts.len() as u32,
                len: 0,
            };
            warp = Some((w, n, lineno));
        } else {
            return Err(err(format!(
                "expected `warp = N`, `insts = N`, an instruction or `#END_TB`, found `{l}`"
            )));
        }
    }
    let eof = |message: String| TraceError::Syntax {
        file: file.clone(),
        line: lineno,
        message,
    };
    if let Some((w, left, at)) = warp {
        if left > 0 {
            return Err(eof(format!(
                "the file ends inside warp {w} (its `insts =` at line {at} promised {left} more \
                 instruction lines): the trace is truncated"
            )));
        }
    }
    if let Some(b) = block {
        return Err(eof(format!(
            "the file ends inside thread block {:?} opened at line {} (no `#END_TB`): the trace is truncated",
            b.id, b.line
        )));
    }
    let expected: u64 = k.grid.iter().map(|&g| g as u64).product();
    if !seen_header.iter().all(|&s| s) {
        return Err(eof(
            "no header: `-kernel name`, `-grid dim` and `-block dim` are required".into(),
        ));
    }
    if (k.blocks.len() as u64) < expected {
        return Err(eof(format!(
            "the trace holds {} of the grid's {expected} thread blocks: it is truncated",
            k.blocks.len()
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
    k.unknown_opcodes = unknown;
    Ok(k)
}

/// Parses one instruction line into `k`'s arenas.
fn parse_inst(
    l: &str,
    lineinfo: bool,
    lineno: u32,
    k: &mut TraceKernel,
    unknown: &mut Vec<String>,
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
    let pc = u32::from_str_radix(pc_s, 16).map_err(|_| format!("`{pc_s}` is not a hex PC"))?;
    let mask_s = next("the active mask")?;
    let mask =
        u32::from_str_radix(mask_s, 16).map_err(|_| format!("`{mask_s}` is not a hex mask"))?;
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
                let base = hex(next("the base address")?)?;
                let stride = dec(next("the stride")?)?;
                for i in 0..active as i64 {
                    k.addrs.push(base.wrapping_add((stride * i) as u64));
                }
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
    let (mut op, known) = classify(opcode, mem_width);
    if !known && !unknown.iter().any(|u| u == opcode) {
        unknown.push(opcode.to_string());
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
        addrs: addrs_at,
        line: lineno,
    });
    Ok(())
}
