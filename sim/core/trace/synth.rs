//! Synthetic Accel-Sim traces of a known shape, for tests and benchmarks that must not depend on files
//! outside the repository.
//!
//! The kernel: `blocks` thread blocks of `block_threads` threads; every warp runs a prologue (`S2R`, three
//! `IMAD`s computing its addresses), then `iters` times { a coalesced `LDG` (4 bytes per lane), an `IADD3`
//! that depends on it, an `STG` of the result, an optional `RED.E.ADD.STRONG.GPU`, loop bookkeeping
//! (`IADD3`, `ISETP`, `BRA`) }, then `EXIT`. Thread `g` (global linear id) loads and stores word `g` of
//! its arrays in iteration 0 and moves on by the whole grid's footprint each iteration; its atomic goes
//! to word `g` ([`SynthAtomics::Distinct`]), to one word for all threads ([`SynthAtomics::Same`]), or is
//! absent ([`SynthAtomics::None`]). This is the shape of the sample traces the project was given, so
//! that the benchmark numbers can be compared with runs on those files.

use std::fmt::Write as _;

/// Where the synthetic kernel's atomics go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthAtomics {
    Distinct,
    Same,
    None,
}

/// Shape of a synthetic kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synth {
    pub atomics: SynthAtomics,
    pub iters: u32,
    pub blocks: u32,
    pub block_threads: u32,
}

impl Synth {
    /// The shape of the project's sample traces (`v70_*`): 80 blocks of 256 threads.
    pub const fn sample(atomics: SynthAtomics, iters: u32) -> Synth {
        Synth {
            atomics,
            iters,
            blocks: 80,
            block_threads: 256,
        }
    }
}

const LOAD_BASE: u64 = 0x7f00_0000_0000;
const STORE_BASE: u64 = 0x7f10_0000_0000;
const ATOMIC_BASE: u64 = 0x7f20_0000_0000;

/// The `kernel-1.traceg` text of `s`.
pub fn kernel_text(s: &Synth) -> String {
    let kind = match s.atomics {
        SynthAtomics::Distinct => "distinct",
        SynthAtomics::Same => "same",
        SynthAtomics::None => "none",
    };
    let warps = s.block_threads.div_ceil(32);
    let grid_bytes = s.blocks as u64 * s.block_threads as u64 * 4;
    let per_iter = if s.atomics == SynthAtomics::None {
        6
    } else {
        7
    };
    let mut o =
        String::with_capacity((s.blocks * warps) as usize * (per_iter * s.iters as usize + 5) * 48);
    let _ = write!(
        o,
        "-kernel name = synth_{kind}_RED\n-kernel id = 1\n-grid dim = ({},1,1)\n-block dim = ({},1,1)\n\
         -shmem = 0\n-nregs = 16\n-binary version = 70\n-cuda stream id = 0\n\
         -shmem base_addr = 0x00007f0e8e000000\n-local mem base_addr = 0x00007f0e8c000000\n\
         -nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n\
         #traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width \
         [adrrescompress?] [mem_addresses] immediate\n\n\n",
        s.blocks, s.block_threads
    );
    for b in 0..s.blocks {
        let _ = write!(o, "#BEGIN_TB\n\nthread block = {b},0,0\n\n");
        for w in 0..warps {
            let lanes = (s.block_threads - w * 32).min(32);
            let mask: u32 = if lanes == 32 {
                u32::MAX
            } else {
                (1 << lanes) - 1
            };
            let first = (b as u64 * s.block_threads as u64 + w as u64 * 32) * 4;
            let _ = write!(
                o,
                "warp = {w}\ninsts = {}\n",
                4 + per_iter * s.iters as usize + 1
            );
            for (pc, dst) in [
                (0x00, "R0 S2R 0"),
                (0x10, "R2 IMAD 1 R0"),
                (0x20, "R8 IMAD 1 R0"),
                (0x30, "R10 IMAD 1 R0"),
            ] {
                let _ = writeln!(o, "{pc:04x} {mask:08x} 1 {dst} 0");
            }
            for i in 0..s.iters as u64 {
                let off = first + i * grid_bytes;
                let _ = writeln!(
                    o,
                    "0040 {mask:08x} 1 R4 LDG.E 1 R2 4 1 {:#x} 4",
                    LOAD_BASE + off
                );
                let _ = writeln!(o, "0050 {mask:08x} 1 R5 IADD3 1 R4 0");
                let _ = writeln!(
                    o,
                    "0060 {mask:08x} 0 STG.E 2 R8 R5 4 1 {:#x} 4",
                    STORE_BASE + off
                );
                match s.atomics {
                    SynthAtomics::Distinct => {
                        let _ = writeln!(
                            o,
                            "0070 {mask:08x} 0 RED.E.ADD.STRONG.GPU 2 R10 R6 4 1 {:#x} 4",
                            ATOMIC_BASE + off
                        );
                    }
                    SynthAtomics::Same => {
                        let _ = writeln!(o, "0070 {mask:08x} 0 RED.E.ADD.STRONG.GPU 2 R10 R6 4 1 {ATOMIC_BASE:#x} 0");
                    }
                    SynthAtomics::None => {}
                }
                let _ = writeln!(o, "0080 {mask:08x} 1 R12 IADD3 1 R12 0");
                let _ = writeln!(o, "0090 {mask:08x} 0 ISETP 1 R12 0");
                let _ = writeln!(o, "00a0 {mask:08x} 0 BRA 0 0");
            }
            let _ = write!(o, "00b0 {mask:08x} 0 EXIT 0 0\n\n");
        }
        o.push_str("#END_TB\n");
        if b + 1 < s.blocks {
            o.push('\n');
        }
    }
    o
}

/// Writes `DIR/kernelslist.g` and `DIR/kernel-1.traceg` for `s`.
pub fn write_dir(dir: &std::path::Path, s: &Synth) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::stats::write_atomic(&dir.join("kernel-1.traceg"), kernel_text(s).as_bytes())?;
    crate::stats::write_atomic(&dir.join("kernelslist.g"), b"kernel-1.traceg\n")
}
