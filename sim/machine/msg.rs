//! The typed messages the parts exchange, and the pools that hold their bulky payloads (line data,
//! atomic operation lists) so that events stay small. A payload is owned by whichever message carries
//! its handle; the receiver frees it or passes it on.

use crate::engine::{EventQueue, Time};
use crate::ir::{AtomicOp, RmwOp, Ty};
use crate::rng::SplitMix64;

use super::memory::GlobalMemory;
use super::xbar::Transit;

/// Handle of a line-sized data buffer in the [`Pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataId(pub u32);
/// Handle of an atomic operation batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchId(pub u32);

pub const MAX_LINE: usize = 128;
pub type LineBuf = [u8; MAX_LINE];

/// A free-list arena.
pub struct Pool<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Pool<T> {
    pub fn alloc(&mut self, v: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = v;
            i
        } else {
            self.items.push(v);
            (self.items.len() - 1) as u32
        }
    }
    /// A slot holding whatever its last user left (or `fresh()` for a new slot): for payloads whose
    /// buffers are reused in place, so that a steady state allocates nothing.
    pub fn alloc_reuse(&mut self, fresh: impl FnOnce() -> T) -> (u32, &mut T) {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.items.push(fresh());
                (self.items.len() - 1) as u32
            }
        };
        (i, &mut self.items[i as usize])
    }
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
    /// Moves the value out of slot `i` (leaving `filler`) and frees the slot.
    pub fn take(&mut self, i: u32, filler: T) -> T {
        self.free.push(i);
        std::mem::replace(&mut self.items[i as usize], filler)
    }
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Slots in use.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

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
    pub kind: AtomicOp,
    pub ty: Ty,
    pub lanes: Vec<LaneAtomic>,
}

/// Which level serves an access (named by scope, DESIGN.md's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The SM: L1 for global memory (work_item … work_group scope).
    Sm,
    /// The L2 slices (device scope).
    L2,
    /// The system coherence point (system scope with shared virtual memory).
    System,
}

/// Identifies the SM-side operation a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who {
    pub warp: u16,
    /// Slot of the in-flight memory instruction in the SM (`u32::MAX` for store drains).
    pub op: u32,
}

/// SM (LSU or store buffer) → its L1.
#[derive(Debug, Clone, Copy)]
pub enum L1Req {
    Load {
        who: Who,
        line: u64,
        mask: u128,
        level: Level,
    },
    /// A drained store: write-through. `level` is where its acknowledgement comes from; `seq` is the
    /// SM's write sequence number, returned with the acknowledgement (the SM's write frontier).
    Store {
        who: Who,
        line: u64,
        mask: u128,
        data: DataId,
        level: Level,
        seq: u64,
    },
    /// `seq` numbers the write-through an atomic at the L1 (`at_l1`) produces.
    Atomic {
        who: Who,
        line: u64,
        batch: BatchId,
        level: Level,
        at_l1: bool,
        seq: u64,
    },
    /// Acquire at device scope or wider: drop every line (DESIGN: "device/system invalidate the L1").
    InvalidateAll,
}

/// L1 or the SM's own units → the SM.
#[derive(Debug, Clone, Copy)]
pub enum CoreResp {
    LoadData {
        who: Who,
        line: u64,
        data: DataId,
    },
    /// The store has been accepted by the L1 (visible at SM level).
    StoreAccepted {
        warp: u16,
    },
    /// The store has been acknowledged by the level it was sent to; `seq` as in [`L1Req::Store`].
    StoreAcked {
        warp: u16,
        seq: u64,
    },
    AtomicDone {
        who: Who,
        batch: BatchId,
    },
    /// A shared-memory access finished.
    SharedDone {
        who: Who,
    },
}

/// Request over the interconnect (L1 → L2 slice).
#[derive(Debug, Clone, Copy)]
pub struct MemReq {
    pub sm: u16,
    /// The L1's handle for the response.
    pub tag: u32,
    pub line: u64,
    pub kind: ReqKind,
}

#[derive(Debug, Clone, Copy)]
pub enum ReqKind {
    Read { mask: u128 },
    Write { mask: u128, data: DataId },
    Atomic { batch: BatchId },
}

/// Response over the interconnect (L2 slice → L1).
#[derive(Debug, Clone, Copy)]
pub struct MemResp {
    pub tag: u32,
    pub line: u64,
    pub kind: RespKind,
}

#[derive(Debug, Clone, Copy)]
pub enum RespKind {
    Data(DataId),
    WriteAck,
    AtomicDone(BatchId),
}

/// Every event of the machine, addressed to one part.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// Warp schedulers of an SM look for work.
    SmTick(u16),
    SmIn(u16, CoreResp),
    /// The store buffer of an SM tries to drain.
    SbDrain(u16),
    L1In(u16, L1Req),
    /// An L1's input queue retries after an MSHR freed.
    L1Retry(u16),
    /// Interconnect delivered a response to an SM's L1.
    L1FromXbar(u16, MemResp),
    /// Interconnect delivered a request to an L2 slice.
    SliceIn(u16, MemReq),
    /// A slice processes its input queue.
    SliceTick(u16),
    /// DRAM returned a line to a slice.
    DramFill(u16, u64),
    /// The dispatcher's work-group (linear id) starts on the SM.
    Launch(u16, u64),
    /// The SM's memory-stress warps issue their next accesses (`stress.stress_warps`).
    Stress(u16),
}

/// A payload travelling with a message between simulation domains (each domain has its own pools).
#[derive(Debug, Clone)]
pub enum Payload {
    None,
    Line(LineBuf),
    Batch(AtomicBatch),
}

/// A crossbar message leaving its sender's simulation domain: its timing at the sending port, the
/// sending port, and the event it becomes at the receiver, whose payload (if any) travels by value
/// (the event's payload handle is re-issued by the receiver's pool).
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub transit: Transit,
    /// The sending port: an SM (requests) or a slice (responses).
    pub src: u16,
    pub event: Event,
    pub payload: Payload,
}

/// The messages a domain sent over the crossbar, in the order it sent them.
#[derive(Debug, Default)]
pub struct Outbox {
    pub sent: Vec<Outgoing>,
}

impl Outbox {
    /// Sends `event` (an `SliceIn` request or an `L1FromXbar` response) from port `src`; its payload
    /// leaves the sender's pools.
    pub fn post(
        &mut self,
        transit: Transit,
        src: u16,
        event: Event,
        lines: &mut Pool<LineBuf>,
        batches: &mut Pool<AtomicBatch>,
    ) {
        let payload = match event {
            Event::SliceIn(
                _,
                MemReq {
                    kind: ReqKind::Write { data, .. },
                    ..
                },
            )
            | Event::L1FromXbar(
                _,
                MemResp {
                    kind: RespKind::Data(data),
                    ..
                },
            ) => Payload::Line(lines.take(data.0, [0; MAX_LINE])),
            Event::SliceIn(
                _,
                MemReq {
                    kind: ReqKind::Atomic { batch },
                    ..
                },
            )
            | Event::L1FromXbar(
                _,
                MemResp {
                    kind: RespKind::AtomicDone(batch),
                    ..
                },
            ) => Payload::Batch(batches.take(
                batch.0,
                AtomicBatch {
                    kind: AtomicOp::Cas,
                    ty: Ty::U32,
                    lanes: Vec::new(),
                },
            )),
            _ => Payload::None,
        };
        self.sent.push(Outgoing {
            transit,
            src,
            event,
            payload,
        });
    }
}

impl Outgoing {
    /// The event as the receiver sees it: its payload placed in the receiver's pools.
    pub fn arrive(self, lines: &mut Pool<LineBuf>, batches: &mut Pool<AtomicBatch>) -> Event {
        let mut ev = self.event;
        match (&mut ev, self.payload) {
            (
                Event::SliceIn(
                    _,
                    MemReq {
                        kind: ReqKind::Write { data, .. },
                        ..
                    },
                )
                | Event::L1FromXbar(
                    _,
                    MemResp {
                        kind: RespKind::Data(data),
                        ..
                    },
                ),
                Payload::Line(b),
            ) => *data = DataId(lines.alloc(b)),
            (
                Event::SliceIn(
                    _,
                    MemReq {
                        kind: ReqKind::Atomic { batch },
                        ..
                    },
                )
                | Event::L1FromXbar(
                    _,
                    MemResp {
                        kind: RespKind::AtomicDone(batch),
                        ..
                    },
                ),
                Payload::Batch(b),
            ) => *batch = BatchId(batches.alloc(b)),
            _ => {}
        }
        ev
    }
}

/// What a handler may touch besides its own state — all of it belonging to the handler's simulation
/// domain: the queue, the payload pools, device memory (the bounds of buffers for an SM; the values
/// of the lines its slices own for a memory partition), the crossbar outbox and the domain's random
/// source.
pub struct Ctx<'a> {
    pub q: &'a mut EventQueue<Event>,
    pub lines: &'a mut Pool<LineBuf>,
    pub batches: &'a mut Pool<AtomicBatch>,
    pub mem: &'a mut GlobalMemory,
    pub out: &'a mut Outbox,
    pub rng: &'a mut SplitMix64,
}

impl Ctx<'_> {
    pub fn now(&self) -> Time {
        self.q.now()
    }
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
            RmwOp::Add => (a + b).to_bits() as u64,
            RmwOp::Sub => (a - b).to_bits() as u64,
            RmwOp::Min => a.min(b).to_bits() as u64,
            RmwOp::Max => a.max(b).to_bits() as u64,
            RmwOp::Exch => v,
            _ => o,
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
        let new = match b.kind {
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
