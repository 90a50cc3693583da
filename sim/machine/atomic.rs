//! What an atomic does to values: the lanes of one atomic instruction that fall in one line (the
//! payload its messages carry), the arithmetic of each operation, and how a batch is performed against
//! the structure that serves it (an L2 slice's view of device memory, an L1 line, local memory).
//! The timing of the units that perform them is `atomic_unit.rs`.
//!
//! Semantics (CUDA atomic functions; OpenCL C 2.0 §6.13.11.7 `atomic_fetch_key`): integer operations
//! wrap; min/max compare as the type's signedness says; `inc`/`dec` are CUDA's `atomicInc`/`atomicDec`;
//! an f32 add, sub, min, max or exchange acts on the float, other operations leave an f32 word
//! unchanged (the front ends reject them; [`super::alu::float_rmw`]); compare-exchange compares the
//! type's bits. The WGSL translator's emulations follow [`apply_rmw`] (`gpu/wgsl.rs`).

use super::memory::GlobalMemory;
use crate::ir::{AtomicOp, RmwOp, Ty};

/// One lane's part of an atomic instruction.
#[derive(Debug, Clone, Copy)]
pub struct LaneAtomic {
    pub lane: u8,
    pub addr: u64,
    pub operand: u64,
    /// Compare-exchange: the expected value (`operand` is the desired one).
    pub expected: u64,
    pub result: u64,
}

/// The lanes of one atomic instruction that fall in one line.
#[derive(Debug, Clone)]
pub struct AtomicBatch {
    pub op: AtomicOp,
    pub ty: Ty,
    pub lanes: Vec<LaneAtomic>,
}

/// Applies one read-modify-write to `old`, returning the new value (raw bits of `ty`).
pub fn apply_rmw(op: RmwOp, ty: Ty, old: u64, v: u64) -> u64 {
    let mask = if ty.width() == crate::ir::Width::B32 {
        0xFFFF_FFFFu64
    } else {
        u64::MAX
    };
    let (o, v) = (old & mask, v & mask);
    let r = if ty == Ty::F32 {
        let (a, b) = (f32::from_bits(o as u32), f32::from_bits(v as u32));
        match op {
            _ if !super::alu::float_rmw(op) => o,
            RmwOp::Add => (a + b).to_bits() as u64,
            RmwOp::Sub => (a - b).to_bits() as u64,
            RmwOp::Min => a.min(b).to_bits() as u64,
            RmwOp::Max => a.max(b).to_bits() as u64,
            RmwOp::Exch => v,
            _ => unreachable!("alu::float_rmw lists the f32 operations"),
        }
    } else {
        let signed = matches!(ty, Ty::I32 | Ty::I64);
        let sx = |x: u64| {
            if ty == Ty::I32 {
                x as u32 as i32 as i64
            } else {
                x as i64
            }
        };
        match op {
            RmwOp::Add => o.wrapping_add(v),
            RmwOp::Sub => o.wrapping_sub(v),
            RmwOp::And => o & v,
            RmwOp::Or => o | v,
            RmwOp::Xor => o ^ v,
            RmwOp::Exch => v,
            RmwOp::Min => {
                if (signed && sx(v) < sx(o)) || (!signed && v < o) {
                    v
                } else {
                    o
                }
            }
            RmwOp::Max => {
                if (signed && sx(v) > sx(o)) || (!signed && v > o) {
                    v
                } else {
                    o
                }
            }
            RmwOp::Inc => {
                if o >= v {
                    0
                } else {
                    o + 1
                }
            }
            RmwOp::Dec => {
                if o == 0 || o > v {
                    v
                } else {
                    o - 1
                }
            }
        }
    };
    r & mask
}

/// A structure that holds values an atomic unit operates on (the coherent store, an L1 line, local
/// memory).
pub trait ValueStore {
    fn read(&self, addr: u64, len: u32) -> u64;
    fn write(&mut self, addr: u64, len: u32, v: u64);
}

impl ValueStore for GlobalMemory {
    fn read(&self, addr: u64, len: u32) -> u64 {
        GlobalMemory::read(self, addr, len)
    }
    fn write(&mut self, addr: u64, len: u32, v: u64) {
        GlobalMemory::write(self, addr, len, v)
    }
}

/// Performs a batch against the structure that serves it, in lane order, filling each lane's result.
pub fn perform_batch(b: &mut AtomicBatch, store: &mut impl ValueStore) {
    let w = b.ty.width().bytes();
    for l in b.lanes.iter_mut() {
        let old = store.read(l.addr, w);
        l.result = old;
        let new = match b.op {
            AtomicOp::Rmw(op) => apply_rmw(op, b.ty, old, l.operand),
            AtomicOp::Cas => {
                let m = if w == 4 { 0xFFFF_FFFF } else { u64::MAX };
                if old & m == l.expected & m {
                    l.operand & m
                } else {
                    old
                }
            }
        };
        store.write(l.addr, w, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmw_semantics() {
        assert_eq!(apply_rmw(RmwOp::Add, Ty::U32, 0xFFFF_FFFF, 1), 0);
        assert_eq!(
            apply_rmw(RmwOp::Min, Ty::I32, 5, (-3i32) as u32 as u64),
            (-3i32) as u32 as u64
        );
        assert_eq!(apply_rmw(RmwOp::Min, Ty::U32, 5, (-3i32) as u32 as u64), 5);
        assert_eq!(apply_rmw(RmwOp::Inc, Ty::U32, 3, 3), 0);
        assert_eq!(apply_rmw(RmwOp::Dec, Ty::U32, 0, 7), 7);
        let f = apply_rmw(
            RmwOp::Add,
            Ty::F32,
            1.5f32.to_bits() as u64,
            2.25f32.to_bits() as u64,
        );
        assert_eq!(f32::from_bits(f as u32), 3.75);
    }
}
