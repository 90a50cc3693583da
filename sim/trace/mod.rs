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
//! mask, texture and constant caches (`LDC`, `TEX`, `.CONSTANT` loads are treated as global loads),
//! `MemcpyDtoH`, and tracer versions before 3 (whose lines carry a block/warp prefix): they are refused
//! with a clear error rather than misread.

mod opcode;
mod parse;
pub mod synth;

pub use opcode::classify;
pub use parse::{load, load_kernel, load_threads, parse_kernel, parse_kernel_threads, TraceError};

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
    /// Index of the first register of this instruction in [`TraceKernel::regs`]: `ndst` destinations,
    /// then `nsrc` sources.
    pub regs: u32,
    pub ndst: u8,
    pub nsrc: u8,
    /// The addresses are stored compressed (the trace's address mode 1): a base and a stride, the
    /// `k`-th active lane at `base + k * stride`.
    pub strided: bool,
    /// Memory instructions: index of the first active lane's address in [`TraceKernel::addrs`]; the
    /// active lanes' addresses follow in lane order (`mask.count_ones()` of them), or the base and
    /// the stride when `strided` ([`TraceKernel::lane_addrs`] reads both forms).
    pub addrs: u32,
    /// The trace file's line, for diagnostics.
    pub line: u32,
}

/// The active lanes' addresses of a traced memory instruction ([`TraceKernel::lane_addrs`]).
#[derive(Debug, Clone)]
pub enum LaneAddrs<'a> {
    Listed(std::slice::Iter<'a, u64>),
    Strided { next: u64, stride: u64, left: u32 },
}

impl Iterator for LaneAddrs<'_> {
    type Item = u64;
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
    /// Range of this warp's instructions in [`TraceKernel::insts`].
    pub first: u32,
    pub len: u32,
}

/// One thread block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceBlock {
    pub id: [u32; 3],
    pub warps: Vec<TraceWarp>,
}

/// A traced kernel launch.
#[derive(Debug, Clone, PartialEq)]
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
    pub blocks: Vec<TraceBlock>,
    pub insts: Vec<TraceInst>,
    pub regs: Vec<TraceReg>,
    pub addrs: Vec<u64>,
    /// Opcodes the classification table does not know (timed as integer-ALU instructions), each with
    /// the number of instructions that carry it, in order of first appearance.
    pub unknown_opcodes: Vec<(String, u64)>,
}

impl TraceKernel {
    /// Threads per block.
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

    /// Instructions of one warp.
    pub fn warp_insts(&self, w: &TraceWarp) -> &[TraceInst] {
        &self.insts[w.first as usize..(w.first + w.len) as usize]
    }

    /// Destination registers of `i`.
    pub fn dsts(&self, i: &TraceInst) -> &[TraceReg] {
        &self.regs[i.regs as usize..i.regs as usize + i.ndst as usize]
    }

    /// Source registers of `i`.
    pub fn srcs(&self, i: &TraceInst) -> &[TraceReg] {
        let s = i.regs as usize + i.ndst as usize;
        &self.regs[s..s + i.nsrc as usize]
    }

    /// Active lanes' addresses of a memory instruction, in lane order.
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

    /// Warp instructions and thread instructions (active lanes) in the whole kernel.
    pub fn instruction_counts(&self) -> (u64, u64) {
        let thread = self.insts.iter().map(|i| i.mask.count_ones() as u64).sum();
        (self.insts.len() as u64, thread)
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
    Kernel(TraceKernel),
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
            TraceCommand::Kernel(k) => Some(k),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
