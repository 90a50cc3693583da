//! The typed messages the parts exchange: requests and responses between an SM and its L1, between
//! an L1 and the L2 slices over the crossbar, and the events of the machine, each addressed to one
//! part. Bulky payloads travel by handle ([`DataId`], [`BatchId`]) into the sender's pools
//! (`pool.rs`).

/// Handle of a line-sized data buffer in the [`Pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataId(pub u32);
/// Handle of an atomic operation batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchId(pub u32);

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

/// Who an SM-side request belongs to, and so where its response goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requester {
    /// A memory instruction of a warp: `op` is its slot among the SM's in-flight operations.
    Warp { warp: u16, op: u32 },
    /// A write-through on behalf of a warp — a store drained from the store buffer or sent without
    /// it, or the result of an atomic performed in the L1 — counted among the warp's stores.
    Drain { warp: u16 },
    /// A memory-stress warp (`sm/stress.rs`): its traffic perturbs timing and is otherwise dropped.
    Stress { warp: u32 },
}

impl Requester {
    /// The write-through of an L1 atomic's result, on behalf of the atomic's warp.
    pub fn drain(self) -> Requester {
        match self {
            Requester::Warp { warp, .. } | Requester::Drain { warp } => Requester::Drain { warp },
            stress @ Requester::Stress { .. } => stress,
        }
    }
}

/// SM (LSU or store buffer) → its L1.
#[derive(Debug, Clone, Copy)]
pub enum L1Req {
    Load {
        who: Requester,
        line: u64,
        mask: u128,
        level: Level,
    },
    /// A drained store: write-through. `level` is where its acknowledgement comes from; `seq` is the
    /// SM's write sequence number, returned with the acknowledgement (the SM's write frontier).
    Store {
        who: Requester,
        line: u64,
        mask: u128,
        data: DataId,
        level: Level,
        seq: u64,
    },
    /// `seq` numbers the write-through an atomic at the L1 (`at_l1`) produces.
    Atomic {
        who: Requester,
        line: u64,
        batch: BatchId,
        level: Level,
        at_l1: bool,
        seq: u64,
    },
    /// Acquire at device scope or wider: drop every line (DESIGN: "device/system invalidate the L1").
    InvalidateAll,
    /// A cumulative release of warp `warp` at device or system level (`ordering::membar`): the L1
    /// sends a membar token to every L2 slice, behind everything it sent before, and answers
    /// [`CoreResp::MembarAcked`] when every slice has answered (`system`: plus the system point's
    /// round trip).
    Membar { warp: u16, system: bool },
}

/// L1 or the SM's own units → the SM.
#[derive(Debug, Clone, Copy)]
pub enum CoreResp {
    LoadData {
        who: Requester,
        line: u64,
        data: DataId,
    },
    /// The store has been accepted by the L1 (visible at SM level).
    StoreAccepted {
        by: Requester,
    },
    /// The store has been acknowledged by the level it was sent to; `seq` as in [`L1Req::Store`].
    StoreAcked {
        by: Requester,
        seq: u64,
    },
    AtomicDone {
        who: Requester,
        batch: BatchId,
    },
    /// Every L2 slice (and at system level the system point) answered warp `warp`'s membar.
    MembarAcked {
        warp: u16,
    },
    /// A shared-memory access finished.
    SharedDone {
        who: Requester,
    },
    /// The banks serve a shared-memory load or store now: it reads or writes its values.
    SharedPerform {
        who: Requester,
    },
    /// The banks serve a shared-memory atomic now: it is performed on the work-group's memory.
    SharedAtomic {
        who: Requester,
        batch: BatchId,
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
    /// A read of a far line whose copy the SM's partition holds (`near_copy.rs`): it and its
    /// response take the near path.
    pub near: bool,
}

#[derive(Debug, Clone, Copy)]
pub enum ReqKind {
    Read {
        mask: u128,
    },
    Write {
        mask: u128,
        data: DataId,
    },
    Atomic {
        batch: BatchId,
    },
    /// A membar token (`ordering::membar`): the slice answers it when it leaves the slice's input,
    /// after everything that arrived before it on the SM's path. It names no line.
    Membar,
}

/// Response over the interconnect (L2 slice → L1).
#[derive(Debug, Clone, Copy)]
pub struct MemResp {
    pub tag: u32,
    pub line: u64,
    pub kind: RespKind,
    /// The response to a `MemReq::near` request: the near path.
    pub near: bool,
}

#[derive(Debug, Clone, Copy)]
pub enum RespKind {
    Data(DataId),
    WriteAck,
    AtomicDone(BatchId),
    /// The slice's answer to a membar token.
    MembarAck,
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
    /// A credit for slice `.1`'s input came back to SM `.0`'s L1 (`l2.input_depth`, `credit.rs`).
    L2Credit(u16, u16),
    /// A slice processes its input queue.
    SliceTick(u16),
    /// DRAM returned a line to a slice.
    DramFill(u16, u64),
    /// A DRAM bank (channel, bank of the partition) with waiting requests can serve the next one
    /// (FR-FCFS, `dram.rs`).
    DramBank(u16, u16),
    /// The dispatcher's work-group (linear id) starts on the SM.
    Launch(u16, u64),
    /// The SM's memory-stress warps issue their next accesses (`stress.stress_warps`).
    Stress(u16),
}
