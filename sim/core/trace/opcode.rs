//! SASS opcode → [`TraceOp`]: which opcodes drive the memory model, and the latency class of the rest.
//!
//! The class of a non-memory opcode follows the functional unit that executes it on Volta–Hopper
//! (NVIDIA's CUDA binary utilities instruction-set reference lists the opcodes; Jia et al., "Dissecting
//! the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, measure their latencies): integer
//! add/logic/shift/compare and moves on the integer ALU, `IMAD`/`IMUL` on the multiplier, FP32/FP64/FP16
//! arithmetic and conversions on the FP pipes, `MUFU`, `S2R`, shuffles and the tensor-core ops on the
//! long-latency special path, control flow on the branch unit. The cycles of each class come from the
//! config (`sm.latency`).
//!
//! An opcode this table does not know is timed as an integer-ALU instruction and counted, so a run
//! reports how many instructions were timed by that fallback instead of failing on a new opcode.
//! Texture and surface instructions ([`texture_or_surface`]) are known and refused: they read and
//! write memory through the texture path, which is not modelled, so timing them as compute (or as
//! global loads) would drop or misplace their traffic.

use super::{TraceAccess, TraceMem, TraceOp, TraceSpace};
use crate::ir::{AtomicOp, LatencyClass, RmwOp, Scope};

/// Classifies a full opcode (`RED.E.ADD.STRONG.GPU`). `mem_width` is the trace's memory-width field
/// (bytes per lane, 0 for non-memory instructions). Returns the operation and whether the opcode was
/// known (`false`: timed by the integer-ALU fallback).
pub fn classify(opcode: &str, mem_width: u32) -> (TraceOp, bool) {
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    let quals: Vec<&str> = parts.collect();
    let has = |q: &str| quals.contains(&q);
    let width = || -> u8 {
        if mem_width > 0 {
            return mem_width.min(255) as u8;
        }
        for q in &quals {
            match *q {
                "U8" | "S8" => return 1,
                "U16" | "S16" => return 2,
                "64" => return 8,
                "128" => return 16,
                _ => {}
            }
        }
        4
    };
    let strong = || -> Option<Scope> {
        let i = quals.iter().position(|q| *q == "STRONG")?;
        Some(match quals.get(i + 1).copied() {
            Some("SYS") => Scope::System,
            Some("CTA") | Some("SM") => Scope::WorkGroup,
            _ => Scope::Device,
        })
    };
    let mem = |space, access| {
        TraceOp::Mem(TraceMem {
            space,
            access,
            width: width(),
            strong: match access {
                // Atomics are always strong; SASS prints the scope only when it is not the default.
                TraceAccess::Atomic { .. } => strong().or(Some(Scope::Device)),
                _ => strong(),
            },
        })
    };
    let atomic_op = || -> AtomicOp {
        for q in &quals {
            let op = match *q {
                "ADD" => RmwOp::Add,
                "MIN" => RmwOp::Min,
                "MAX" => RmwOp::Max,
                "INC" => RmwOp::Inc,
                "DEC" => RmwOp::Dec,
                "AND" => RmwOp::And,
                "OR" => RmwOp::Or,
                "XOR" => RmwOp::Xor,
                "EXCH" => RmwOp::Exch,
                "CAS" => return AtomicOp::Cas,
                _ => continue,
            };
            return AtomicOp::Rmw(op);
        }
        AtomicOp::Rmw(RmwOp::Add)
    };
    let atomic = |returning| TraceAccess::Atomic {
        op: atomic_op(),
        returning,
    };
    let op = match base {
        "LDG" | "LD" | "LDGSTS" => mem(TraceSpace::Global, TraceAccess::Load),
        "STG" | "ST" => mem(TraceSpace::Global, TraceAccess::Store),
        "LDL" => mem(TraceSpace::Local, TraceAccess::Load),
        "STL" => mem(TraceSpace::Local, TraceAccess::Store),
        "LDS" | "LDSM" => mem(TraceSpace::Shared, TraceAccess::Load),
        "STS" => mem(TraceSpace::Shared, TraceAccess::Store),
        "ATOM" | "ATOMG" => mem(TraceSpace::Global, atomic(true)),
        "RED" | "REDG" => mem(TraceSpace::Global, atomic(false)),
        "ATOMS" => mem(TraceSpace::Shared, atomic(true)),
        "MEMBAR" => TraceOp::Membar(if has("CTA") {
            Scope::WorkGroup
        } else if has("SYS") {
            Scope::System
        } else {
            Scope::Device
        }),
        "BAR" if !has("ARV") => TraceOp::Barrier,
        "EXIT" => TraceOp::Exit,
        _ => {
            return match class_of(base) {
                Some(c) => (TraceOp::Compute(c), true),
                None => (TraceOp::Compute(LatencyClass::IntAlu), false),
            }
        }
    };
    (op, true)
}

/// Whether `opcode` (`TEX.B.LL`, `SUST.D.BA.2D`) is a texture or surface instruction, and which of
/// the two: the trace reader refuses these (the texture path is not modelled).
pub(crate) fn texture_or_surface(opcode: &str) -> Option<&'static str> {
    let base = opcode.split('.').next().unwrap_or("");
    match base {
        "TEX" | "TEXS" | "TLD" | "TLDS" | "TLD4" | "TLD4S" | "TMML" | "TXD" | "TXQ" | "TXA" => {
            Some("texture")
        }
        "SULD" | "SUST" | "SUATOM" | "SURED" | "SUQ" | "SULDGA" | "SUSTGA" => Some("surface"),
        _ => None,
    }
}

fn class_of(base: &str) -> Option<LatencyClass> {
    use LatencyClass::*;
    Some(match base {
        "IADD3" | "IADD" | "IADD32I" | "IMNMX" | "IABS" | "LOP" | "LOP3" | "LOP32I" | "SHF"
        | "SHL" | "SHR" | "ISETP" | "ICMP" | "ISCADD" | "LEA" | "LEA.HI" | "MOV" | "MOV32I"
        | "SEL" | "PRMT" | "FLO" | "POPC" | "BREV" | "BMSK" | "SGXT" | "BFE" | "BFI" | "P2R"
        | "R2P" | "PLOP3" | "PSETP" | "CS2R" | "VOTE" | "VOTEU" | "UIADD3" | "UMOV" | "ULOP3"
        | "USHF" | "USEL" | "ULEA" | "UISETP" | "UPRMT" | "UFLO" | "UPOPC" | "UBREV" | "UP2UR"
        | "UPLOP3" | "S2UR" | "R2UR" | "UR2R" | "NOP" | "DEPBAR" | "ERRBAR" | "CCTL" | "CCTLL"
        | "XMAD" | "IDP" | "I2I" | "LEPC" | "GETLMEMBASE" | "SETLMEMBASE" => IntAlu,
        "IMAD" | "IMAD32I" | "IMUL" | "IMUL32I" | "IMADSP" | "UIMAD" => IntMul,
        "FADD" | "FADD32I" | "FMUL" | "FMUL32I" | "FFMA" | "FFMA32I" | "FMNMX" | "FSET"
        | "FSETP" | "FSEL" | "FCHK" | "FRND" | "FCMP" | "FSWZADD" | "F2F" | "F2I" | "I2F"
        | "F2FP" | "I2FP" | "F2IP" | "HADD2" | "HADD2_32I" | "HMUL2" | "HMUL2_32I" | "HFMA2"
        | "HFMA2_32I" | "HSET2" | "HSETP2" | "HMNMX2" | "DADD" | "DMUL" | "DFMA" | "DMNMX"
        | "DSET" | "DSETP" => FpAlu,
        "MUFU" | "S2R" | "SHFL" | "HMMA" | "IMMA" | "BMMA" | "DMMA" | "HGMMA" | "IGMMA"
        | "BGMMA" | "LDC" | "ULDC" | "MATCH" | "REDUX" | "QSPC" => Special,
        "BRA" | "BRX" | "JMP" | "JMX" | "CALL" | "RET" | "BSSY" | "BSYNC" | "SSY" | "SYNC"
        | "PBK" | "BRK" | "CONT" | "PCNT" | "WARPSYNC" | "YIELD" | "BMOV" | "KILL"
        | "NANOSLEEP" | "BPT" | "RTT" | "PRET" | "PEXIT" | "CAL" | "JCAL" | "ACQBULK" | "BAR"
        | "B2R" | "R2B" | "WARPGROUP" | "ARRIVES" | "SYNCS" => Branch,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_opcodes_carry_space_access_width_and_scope() {
        let (op, known) = classify("RED.E.ADD.STRONG.GPU", 4);
        assert!(known);
        assert_eq!(
            op,
            TraceOp::Mem(TraceMem {
                space: TraceSpace::Global,
                access: TraceAccess::Atomic {
                    op: AtomicOp::Rmw(RmwOp::Add),
                    returning: false
                },
                width: 4,
                strong: Some(Scope::Device),
            })
        );
        let (op, _) = classify("LDG.E.64.STRONG.SYS", 0);
        assert!(
            matches!(op, TraceOp::Mem(m) if m.width == 8 && m.strong == Some(Scope::System)
            && m.access == TraceAccess::Load)
        );
        let (op, _) = classify("STS.U8", 1);
        assert!(
            matches!(op, TraceOp::Mem(m) if m.space == TraceSpace::Shared && m.width == 1
            && m.strong.is_none())
        );
        let (op, _) = classify("ATOMS.CAS", 4);
        assert!(
            matches!(op, TraceOp::Mem(m) if m.access == TraceAccess::Atomic {
            op: AtomicOp::Cas, returning: true })
        );
    }

    #[test]
    fn fences_barriers_and_exit() {
        assert_eq!(
            classify("MEMBAR.SC.CTA", 0).0,
            TraceOp::Membar(Scope::WorkGroup)
        );
        assert_eq!(
            classify("MEMBAR.SC.GPU", 0).0,
            TraceOp::Membar(Scope::Device)
        );
        assert_eq!(classify("MEMBAR.SYS", 0).0, TraceOp::Membar(Scope::System));
        assert_eq!(classify("BAR.SYNC", 0).0, TraceOp::Barrier);
        assert_eq!(classify("BAR.SYNC.DEFER_BLOCKING", 0).0, TraceOp::Barrier);
        assert_eq!(classify("EXIT", 0).0, TraceOp::Exit);
    }

    #[test]
    fn compute_opcodes_get_their_class_and_unknown_ones_fall_back() {
        assert_eq!(
            classify("IMAD.MOV.U32", 0),
            (TraceOp::Compute(LatencyClass::IntMul), true)
        );
        assert_eq!(
            classify("FFMA", 0),
            (TraceOp::Compute(LatencyClass::FpAlu), true)
        );
        assert_eq!(
            classify("MUFU.RCP", 0),
            (TraceOp::Compute(LatencyClass::Special), true)
        );
        assert_eq!(
            classify("BRA", 0),
            (TraceOp::Compute(LatencyClass::Branch), true)
        );
        assert_eq!(
            classify("FOOBAR.X", 0),
            (TraceOp::Compute(LatencyClass::IntAlu), false)
        );
    }

    #[test]
    fn texture_and_surface_opcodes_are_named_and_nothing_else() {
        let named: Vec<_> = [
            "TEX.B.LL",
            "TLD.LZ",
            "TLD4.R",
            "TXQ",
            "SULD.P.2D",
            "SUST.D.BA",
        ]
        .iter()
        .map(|o| texture_or_surface(o))
        .collect();
        assert_eq!(
            named,
            [
                Some("texture"),
                Some("texture"),
                Some("texture"),
                Some("texture"),
                Some("surface"),
                Some("surface")
            ]
        );
        let others = [
            "LDG.E.CONSTANT",
            "LDC",
            "ULDC.64",
            "TEXTURE",
            "STS",
            "MUFU.EX2",
        ];
        assert!(others.iter().all(|o| texture_or_surface(o).is_none()));
    }
}
