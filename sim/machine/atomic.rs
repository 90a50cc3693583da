//! What an atomic does to values: the lanes of one atomic instruction that fall in one line (the
//! payload its messages carry), and how a batch is performed against the structure that serves it
//! (an L2 slice's view of device memory, an L1 line, local memory), each lane in turn with the IR's
//! read-modify-write and compare-exchange semantics (`crate::ir::eval`: CUDA atomic functions,
//! OpenCL C 2.0 §6.13.11.7). The timing of the units that perform them is `atomic_unit.rs`.

use super::memory::GlobalMemory;
use crate::ir::{eval, AtomicOp, Ty};

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
            AtomicOp::Rmw(op) => eval::rmw(op, b.ty, old, l.operand),
            AtomicOp::Cas => eval::cas(b.ty, old, l.expected, l.operand),
        };
        store.write(l.addr, w, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{RmwOp, Ty};
    use std::collections::HashMap;

    /// Words by address.
    #[derive(Default)]
    struct Words(HashMap<u64, u64>);

    impl ValueStore for Words {
        fn read(&self, addr: u64, _len: u32) -> u64 {
            self.0.get(&addr).copied().unwrap_or(0)
        }
        fn write(&mut self, addr: u64, _len: u32, v: u64) {
            self.0.insert(addr, v);
        }
    }

    fn lane(lane: u8, addr: u64, operand: u64, expected: u64) -> LaneAtomic {
        LaneAtomic {
            lane,
            addr,
            operand,
            expected,
            result: 0,
        }
    }

    #[test]
    fn a_batch_performs_its_lanes_in_order_each_reading_what_the_last_wrote() {
        let mut m = Words::default();
        let mut b = AtomicBatch {
            op: AtomicOp::Rmw(RmwOp::Add),
            ty: Ty::U32,
            lanes: vec![
                lane(0, 0, 0xFFFF_FFFF, 0),
                lane(1, 0, 2, 0),
                lane(2, 4, 7, 0),
            ],
        };
        perform_batch(&mut b, &mut m);
        let results: Vec<u64> = b.lanes.iter().map(|l| l.result).collect();
        assert_eq!(results, [0, 0xFFFF_FFFF, 0]);
        assert_eq!((m.0[&0], m.0[&4]), (1, 7));
        // Compare-exchange: the first lane that expects the value wins, the next sees its write.
        let mut c = AtomicBatch {
            op: AtomicOp::Cas,
            ty: Ty::U32,
            lanes: vec![lane(0, 0, 10, 1), lane(1, 0, 20, 1)],
        };
        perform_batch(&mut c, &mut m);
        assert_eq!((c.lanes[0].result, c.lanes[1].result, m.0[&0]), (1, 10, 10));
    }
}
