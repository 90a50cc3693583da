//! Accel-Sim SASS traces: `kernelslist.g` + `kernel-N.traceg[.xz]` → [`TraceKernel`]s that the machine
//! replays for timing.
//!
//! What a trace gives: for every warp of every thread block, the SASS instructions it executed, in
//! order, with the active mask, destination and source registers, and for memory instructions the
//! address of every active lane. What it does not give: data values. A trace run is therefore
//! *timing only*: memory instructions travel through the modelled hierarchy (coalescer, store buffer,
//! L1, interconnect, L2 slices, atomic units, DRAM) at the addresses the trace names, but no value is
//! computed, loaded or checked, and the run's statistics say so (`kernel.values = timing_only`).
//!
//! Modelled from the trace: memory opcodes `LDG`/`STG`/`LD`/`ST` (global or generic), `LDS`/`STS`
//! (shared), `LDL`/`STL` (local, cached like global), `ATOM`/`ATOMG` (atomic returning the old value),
//! `RED` (atomic without a result), `ATOMS` (shared-memory atomic), with access widths from their
//! suffixes (`.U8`, `.S16`, `.64`, `.128`, ...) and the `.STRONG.GPU` / `.STRONG.SYS` qualifiers (strong
//! accesses at device / system scope; unqualified accesses are weak, i.e. plain); `MEMBAR.CTA/.GPU/.SYS`
//! as a seq_cst fence at that scope; `BAR` as the work-group barrier; `EXIT`. Every other opcode occupies
//! the pipeline with the latency of its class ([`crate::ir::LatencyClass`], see `opcode.rs`), and its
//! destination registers become ready after that latency, so register dependencies in the trace stall
//! the warp as they would on hardware.
//!
//! Not modelled: control flow (the trace is the path that was taken), predication beyond the active
//! mask, the constant cache (`LDC`/`ULDC`, reads of a constant bank, are timed as special-path
//! instructions and touch no modelled memory; an `LDG.CONSTANT` is a global load), `MemcpyDtoH`.
//! Refused with an error at the file, line and column rather than misread: texture and surface
//! instructions (`TEX`, `TLD`, `TLD4`, `TMML`, `TXD`, `TXQ`, `SULD`, `SUST`, `SUATOM`, `SURED`, `SUQ`:
//! their memory path is not modelled), and tracer versions before 3 (whose lines carry a block/warp
//! prefix). An instruction line is decoded when its thread block is (`parse.rs`): a refused one stops
//! the run there.

mod decode;
mod memory;
mod opcode;
mod parse;
mod scan;
mod source;
pub mod synth;

pub use memory::{parse_kernel, parse_kernel_threads};
pub use opcode::classify;
pub use parse::{load, load_kernel, load_threads, TraceError};

use crate::ir::{AtomicOp, LatencyClass, Scope};
use std::path::PathBuf;

/// Register number in a warp's scoreboard: `R0..R255` are 0..=255, `P0..P7` 256..=263,
/// `UR0..UR63` 264..=327, `UP0..UP7` 328..=335. `RZ`, `PT`, `URZ` and `UPT` are constants and never
/// appear in a [`TraceInst`].
pub type TraceReg = u16;

/// Number of distinct [`TraceReg`] values.
pub const TRACE_REGS: usize = 336;

/// Address space of a traced memory instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceSpace {
    /// Device memory (`LDG`, `STG`, `ATOMG`, `RED`, generic `LD`/`ST`/`ATOM`).
    Global,
    /// Per-thread local memory (`LDL`, `STL`): cached in L1 and L2 like global memory.
    Local,
    /// Work-group shared memory (`LDS`, `STS`, `ATOMS`): the SM's banks, never the L1.
    Shared,
}

/// What a traced memory instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceAccess {
    Load,
    Store,
    /// A read-modify-write; `returning` is false for `RED` (no result register).
    Atomic {
        op: AtomicOp,
        returning: bool,
    },
}

/// One traced memory instruction's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceMem {
    pub space: TraceSpace,
    pub access: TraceAccess,
    /// Bytes per lane: 1, 2, 4, 8 or 16.
    pub width: u8,
    /// `.STRONG.GPU` → `Some(Device)`, `.STRONG.SYS` → `Some(System)`; `None`: a weak (plain) access.
    /// Atomics are always strong; without a qualifier they are device scope.
    pub strong: Option<Scope>,
}

/// What a traced instruction does, as far as the machine is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceOp {
    /// Occupies the pipeline; its destinations are ready after the class's latency.
    Compute(LatencyClass),
    Mem(TraceMem),
    /// `MEMBAR` at this scope (a seq_cst fence).
    Membar(Scope),
    /// `BAR.SYNC` / `BAR`: the work-group barrier.
    Barrier,
    Exit,
}

/// One traced warp instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceInst {
    pub pc: u32,
    /// Active lanes.
    pub mask: u32,
    pub op: TraceOp,
    /// The key of this instruction's registers: its kernel-wide number (what a warp's flow counts),
    /// which finds its thread block among the resident ones (the SM's pending destinations carry it,
    /// `machine::sm::TraceLaunch::regs_by_key`).
    pub regs: u32,
    /// Index of the first register of this instruction in [`TraceBlock::regs`]: `ndst` destinations,
    /// then `nsrc` sources.
    pub reg_at: u32,
    pub ndst: u8,
    pub nsrc: u8,
    /// The addresses are stored compressed (the trace's address mode 1): a base and a stride, the
    /// `k`-th active lane at `base + k * stride`.
    pub strided: bool,
    /// Memory instructions: index of the first active lane's address in [`TraceBlock::addrs`]; the
    /// active lanes' addresses follow in lane order (`mask.count_ones()` of them), or the base and
    /// the stride when `strided` ([`TraceBlock::lane_addrs`] reads both forms).
    pub addrs: u32,
    /// The trace file's line, for diagnostics.
    pub line: u32,
}

/// The active lanes' addresses of a traced memory instruction ([`TraceBlock::lane_addrs`]).
#[derive(Debug, Clone)]
pub enum LaneAddrs<'a> {
    Listed(std::slice::Iter<'a, u64>),
    Strided { next: u64, stride: u64, left: u32 },
}

impl Iterator for LaneAddrs<'_> {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            LaneAddrs::Listed(it) => it.next().copied(),
            LaneAddrs::Strided { next, stride, left } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                let a = *next;
                *next = next.wrapping_add(*stride);
                Some(a)
            }
        }
    }
}

/// One warp's instruction stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceWarp {
    /// Range of this warp's instructions, numbered over the whole kernel in file order (the
    /// instruction "PC" a warp's [`crate::machine::sm`] flow counts; [`TraceBlock::inst`] reads it).
    pub first: u32,
    pub len: u32,
}

/// One thread block, parsed: its warps' instructions and the arenas they index. A streamed kernel
/// ([`TraceKernel::block`]) parses a block when the dispatcher places it and the block is freed when
/// the last reference to it (its work-group's) goes; [`TraceKernel::resident_blocks`] counts them.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceBlock {
    pub id: [u32; 3],
    /// Kernel-wide number of this block's first instruction (its place in file order).
    pub first: u32,
    pub warps: Vec<TraceWarp>,
    pub insts: Vec<TraceInst>,
    pub regs: Vec<TraceReg>,
    pub addrs: Vec<u64>,
    /// The kernel's `-shmem base_addr` (shared-memory addresses are offsets from it).
    pub shmem_base: u64,
    /// Thread instructions (active lanes), counted while the block is read.
    pub(crate) threads: u64,
    pub(crate) live: Live,
}

/// A parsed block's entry in its kernel's count of resident blocks (decremented when dropped).
#[derive(Debug, Default)]
pub(crate) struct Live(Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>);

impl Live {
    pub(crate) fn new(count: &std::sync::Arc<std::sync::atomic::AtomicUsize>) -> Live {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Live(Some(count.clone()))
    }
}

impl Clone for Live {
    fn clone(&self) -> Live {
        match &self.0 {
            Some(c) => Live::new(c),
            None => Live(None),
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(c) = &self.0 {
            c.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl PartialEq for Live {
    fn eq(&self, _: &Live) -> bool {
        true
    }
}

impl TraceBlock {
    /// Instruction `pc` (kernel-wide number, inside this block).
    #[inline]
    pub fn inst(&self, pc: u32) -> &TraceInst {
        &self.insts[(pc - self.first) as usize]
    }

    /// Instructions of one warp.
    #[inline]
    pub fn warp_insts(&self, w: &TraceWarp) -> &[TraceInst] {
        let at = (w.first - self.first) as usize;
        if w.len == 0 {
            return &[];
        }
        &self.insts[at..at + w.len as usize]
    }

    /// A hint (`engine::prefetch`) that the warp that just issued `i` reads the instruction after
    /// it next, `pc` (its stream ends before `end`): that instruction, the one after it, and where
    /// their registers and addresses start — right after `i`'s, as a block lists each warp's
    /// instructions in order and their registers and addresses as it reads them. Reads nothing
    /// but `i`.
    #[inline]
    pub fn prefetch_after(&self, i: &TraceInst, pc: u32, end: u32) {
        use crate::engine::prefetch;
        if pc >= end {
            return;
        }
        self.prefetch_inst(pc);
        if pc + 1 < end {
            self.prefetch_inst(pc + 1);
        }
        if let Some(r) = self
            .regs
            .get(i.reg_at as usize + i.ndst as usize + i.nsrc as usize)
        {
            prefetch(r);
        }
        let words = match (i.op, i.strided) {
            (TraceOp::Mem(_), true) => 2,
            (TraceOp::Mem(_), false) => i.mask.count_ones(),
            _ => 0,
        };
        if let Some(x) = self.addrs.get((i.addrs + words) as usize) {
            prefetch(x);
        }
    }

    /// A hint (`engine::prefetch`) that instruction `pc` (inside this block) will be read soon.
    #[inline]
    pub fn prefetch_inst(&self, pc: u32) {
        if let Some(i) = self.insts.get(pc.wrapping_sub(self.first) as usize) {
            crate::engine::prefetch(i);
        }
    }

    /// Destination then source registers of `i`.
    #[inline]
    pub fn regs_of(&self, i: &TraceInst) -> &[TraceReg] {
        &self.regs[i.reg_at as usize..i.reg_at as usize + i.ndst as usize + i.nsrc as usize]
    }

    /// Destination registers of `i`.
    #[inline]
    pub fn dsts(&self, i: &TraceInst) -> &[TraceReg] {
        &self.regs[i.reg_at as usize..i.reg_at as usize + i.ndst as usize]
    }

    /// Source registers of `i`.
    #[inline]
    pub fn srcs(&self, i: &TraceInst) -> &[TraceReg] {
        let s = i.reg_at as usize + i.ndst as usize;
        &self.regs[s..s + i.nsrc as usize]
    }

    /// Active lanes' addresses of a memory instruction, in lane order.
    #[inline]
    pub fn lane_addrs(&self, i: &TraceInst) -> LaneAddrs<'_> {
        let at = i.addrs as usize;
        let n = i.mask.count_ones();
        if i.strided {
            LaneAddrs::Strided {
                next: self.addrs[at],
                stride: self.addrs[at + 1],
                left: n,
            }
        } else {
            LaneAddrs::Listed(self.addrs[at..at + n as usize].iter())
        }
    }

    /// Thread instructions (active lanes) of the block.
    pub fn thread_instructions(&self) -> u64 {
        self.threads
    }
}

/// Opcodes the classification table does not know, each with its number of instructions.
pub(crate) type Unknown = Vec<(String, u64)>;

/// Where a thread block lies in its kernel's file: the first pass ([`load_kernel`]) records one per
/// `#BEGIN_TB` … `#END_TB`, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEntry {
    pub id: [u32; 3],
    /// Byte offset of the `#BEGIN_TB` line, and bytes up to the end of the `#END_TB` line.
    pub offset: u64,
    pub bytes: u64,
    /// Line number of the `#BEGIN_TB` line.
    pub line: u32,
    /// Kernel-wide number of its first instruction, and its number of instructions.
    pub first: u32,
    pub insts: u32,
}

/// A traced kernel launch: the header, and where each thread block lies. Its blocks are either
/// parsed already (a kernel read from text in memory: [`parse_kernel`]) or read from the file when
/// the dispatcher places them ([`load_kernel`]: peak memory does not grow with the trace's length;
/// `parse.rs` says how).
pub struct TraceKernel {
    /// The `.traceg` file, for diagnostics.
    pub file: PathBuf,
    pub name: String,
    pub id: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Lines of `-grid dim` and `-block dim`, for errors about the launch's size.
    pub grid_line: u32,
    pub block_line: u32,
    /// Shared memory per block, bytes.
    pub shmem: u32,
    pub nregs: u32,
    /// SM architecture the trace was taken on (70 Volta, 75 Turing, 80/86 Ampere, 90 Hopper).
    pub binary_version: u32,
    pub tracer_version: u32,
    pub shmem_base: u64,
    pub local_base: u64,
    /// `-enable lineinfo`: instruction lines start with a source line number.
    pub lineinfo: bool,
    /// The thread blocks in file order.
    pub blocks: Vec<BlockEntry>,
    /// Index in `blocks` of each work-group (linear id).
    pub(crate) block_of_group: Vec<u32>,
    pub(crate) source: source::Source,
}

impl std::fmt::Debug for TraceKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceKernel")
            .field("file", &self.file)
            .field("name", &self.name)
            .field("grid", &self.grid)
            .field("block", &self.block)
            .field("blocks", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for TraceKernel {
    /// The same header, blocks where the same, and (blocks parsed at load) the same instructions.
    fn eq(&self, o: &TraceKernel) -> bool {
        (
            &self.file,
            &self.name,
            self.id,
            self.grid,
            self.block,
            self.grid_line,
            self.block_line,
        ) == (
            &o.file,
            &o.name,
            o.id,
            o.grid,
            o.block,
            o.grid_line,
            o.block_line,
        ) && (
            self.shmem,
            self.nregs,
            self.binary_version,
            self.tracer_version,
            self.shmem_base,
            self.local_base,
            self.lineinfo,
        ) == (
            o.shmem,
            o.nregs,
            o.binary_version,
            o.tracer_version,
            o.shmem_base,
            o.local_base,
            o.lineinfo,
        ) && self.blocks == o.blocks
            && self.block_of_group == o.block_of_group
            && self.source.parsed() == o.source.parsed()
            && self.unknown_opcodes() == o.unknown_opcodes()
    }
}

impl TraceKernel {
    /// Threads per block.
    #[inline]
    pub fn block_threads(&self) -> u32 {
        self.block.iter().product()
    }

    /// Whether a thread block fits one SM of `cfg`; the error names the `-block dim` line (or the
    /// `-shmem` value it needs).
    pub fn check_fits(&self, cfg: &crate::config::SmSpec) -> Result<(), TraceError> {
        cfg.group_fits(self.block_threads(), self.shmem)
            .map_err(|m| TraceError::Syntax {
                file: self.file.display().to_string(),
                line: self.block_line,
                message: format!(
                    "-block dim = ({},{},{}), -shmem = {}: {m}",
                    self.block[0], self.block[1], self.block[2], self.shmem
                ),
            })
    }

    /// Index in [`TraceKernel::blocks`] of work-group `group` (linear id).
    #[inline]
    pub fn block_index_of_group(&self, group: u64) -> usize {
        self.block_of_group[group as usize] as usize
    }

    /// Work-group `group`'s thread block, parsed (read from the file for a streamed kernel; bad
    /// input found there is an error naming the file and line).
    pub fn group_block(&self, group: u64) -> Result<std::sync::Arc<TraceBlock>, TraceError> {
        self.block(self.block_index_of_group(group))
    }

    /// Thread block `i` (file order), parsed.
    pub fn block(&self, i: usize) -> Result<std::sync::Arc<TraceBlock>, TraceError> {
        self.source.block(self, i)
    }

    /// Instruction `pc` (kernel-wide number), for diagnostics: its block is read again if it is no
    /// longer resident.
    pub fn inst_at(&self, pc: u32) -> Option<TraceInst> {
        let i = self.blocks.partition_point(|b| b.first + b.insts <= pc);
        let e = self.blocks.get(i)?;
        if pc < e.first {
            return None;
        }
        let b = self.block(i).ok()?;
        Some(*b.inst(pc))
    }

    /// Warp and thread instructions in the whole kernel. The warp count is the file's; the thread
    /// count (active lanes) is that of the blocks parsed so far: all of them for a kernel parsed at
    /// load, and for a streamed one once a run has dispatched every block.
    pub fn instruction_counts(&self) -> (u64, u64) {
        let warp = self.blocks.iter().map(|b| b.insts as u64).sum();
        (warp, self.source.thread_instructions())
    }

    /// Opcodes the classification table does not know (timed as integer-ALU instructions), each with
    /// the number of instructions that carry it, in order of first appearance in the file (of the
    /// blocks parsed so far, as [`TraceKernel::instruction_counts`]).
    pub fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        self.source.unknown_opcodes()
    }

    /// Whether thread blocks are read from the file as they are dispatched.
    pub fn is_streamed(&self) -> bool {
        self.source.parsed().is_none()
    }

    /// Parsed thread blocks alive now (held by a resident work-group, or parsed at load), and the
    /// most alive at once.
    pub fn resident_blocks(&self) -> (usize, usize) {
        self.source.resident()
    }
}

/// One entry of `kernelslist.g`, in launch order.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceCommand {
    /// `MemcpyHtoD,0xADDR,BYTES`: the host wrote these bytes of device memory before the next launch
    /// (they are in DRAM, not in any cache).
    MemcpyHtoD {
        addr: u64,
        bytes: u64,
        line: u32,
    },
    Kernel(std::sync::Arc<TraceKernel>),
}

/// A whole trace directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The `kernelslist.g` file.
    pub list: PathBuf,
    pub commands: Vec<TraceCommand>,
}

impl Trace {
    pub fn kernels(&self) -> impl Iterator<Item = &TraceKernel> {
        self.commands.iter().filter_map(|c| match c {
            TraceCommand::Kernel(k) => Some(&**k),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
