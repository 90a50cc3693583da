//! A streaming multiprocessor: resident work-groups and their warps (sub-groups), warp schedulers,
//! SIMT execution, the load/store unit with its coalescer and store buffer, shared (local) memory with
//! bank conflicts and its atomic unit. What an access must wait for, and where it is performed, the SM
//! asks the ordering core (`../ordering`), the same way for kernel and traced instructions.
//!
//! Where to find what:
//!
//! | concept | file |
//! |---|---|
//! | the SM: routing responses to its units, the no-progress diagnosis | `mod.rs` |
//! | launch: programs, work-group slots, special registers, exit and retirement | `launch.rs` |
//! | warp state, stall reasons, SIMT divergence and reconvergence | `warp.rs` |
//! | warp schedulers (greedy-then-oldest, round-robin) and the SM's tick | `scheduler.rs` |
//! | register scoreboard | `scoreboard.rs` |
//! | the ordering gate and issue bookkeeping, common to kernel and trace | `issue.rs` |
//! | kernel instructions: ALU, moves, branches, fences | `exec.rs` |
//! | a memory instruction's addresses and operands, to the LSU or shared memory; race reports | `access.rs` |
//! | ALU semantics (also the WGSL translator's reference) | `alu.rs` |
//! | barriers (work-group and sub-group) | `barrier.rs` |
//! | the coalescer: lanes' addresses to lines, for loads, stores and atomics | `coalescer.rs` |
//! | the load/store unit ([`Lsu`]): issue and completion of global accesses, the store buffer and its drain, the ops in flight, the port into the L1 | `lsu/` |
//! | shared memory: banks, conflicts, its atomic unit | `shared.rs` |
//! | the SM's write frontier (cumulativity) | `lsu/frontier.rs` |
//! | traced instructions (Accel-Sim) | `trace_issue.rs` |
//! | memory-stress warps | `stress.rs` |
//!
//! Execution: each warp keeps one PC per lane; the scheduler runs the lanes at the lowest PC (lanes that
//! diverged reconverge when their PCs meet, as with a post-dominator stack for structured code). A
//! group of lanes that keeps branching backwards while other lanes of its warp wait is rotated out
//! after a bounded number of iterations, as independent thread scheduling does, so spin loops inside a
//! warp make progress. Registers are tracked by a scoreboard: a result is ready `latency` cycles after
//! issue, a load's when its data returns. Each scheduler issues up to `issue_width` instructions per
//! cycle, greedy-then-oldest or round-robin; the LSU accepts `lsu_per_cycle` memory instructions.
//!
//! Program source ([`Program`]): a launch runs either kernel IR (the SIMT execution above, with values)
//! or an Accel-Sim trace, where each warp replays its own recorded stream: the active mask comes with
//! each instruction, register dependencies go through the traced destination and source registers,
//! non-memory opcodes take their class's latency, and memory instructions use the traced addresses and
//! widths on the same paths as kernel accesses (coalescer, store buffer, L1, ...) without values. A
//! traced warp arrives at a barrier as a whole.
//!
//! An exited warp keeps its slot until its memory operations have settled; captured registers are
//! read then, so loads in flight at the exit have written theirs. With `stress.stress_warps`, the SM
//! also runs memory-stress traffic (`stress.rs`); with `RunOptions::races`, it reports every access,
//! atomic read completion, fence and barrier as a race event (`../races.rs`).
//!
//! Not modelled: instruction fetch and caches, register-bank conflicts, dual issue of one warp,
//! predicated execution other than branches, the carve-out between L1 and shared memory.

mod access;
mod alu;
mod barrier;
mod coalescer;
mod exchange;
mod exec;
mod issue;
mod launch;
pub mod lsu;
mod scheduler;
mod scoreboard;
mod shared;
mod stress;
mod trace_issue;
mod warp;

pub use launch::{GroupSlot, Launch, Program, TraceLaunch};
pub use shared::SharedMemory;
pub use stress::{StressWarps, WarpStress};
pub use warp::{MembarState, Stall, Warp};

use super::ctx::Ctx;
use super::msg::*;
use super::races::RaceEvent;
use crate::config::{InstLatency, SmSpec};
use crate::engine::{Clock, Time};
pub use lsu::{Lsu, LsuResources};
use scheduler::{Gates, Scheduler};
use std::sync::Arc;

/// A time that never comes: a register waiting for memory, a warp with nothing timed to wait for.
const NEVER: Time = Time::MAX;

/// Counters of one SM.
#[derive(Default)]
pub struct SmStats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub mem_insts: u64,
    pub issue_cycles: u64,
    pub fence_stall_ps: Time,
    pub barrier_waits: u64,
}

/// A runtime error of an instruction: its pc, the message, the global thread id and its work-group.
#[derive(Debug, Clone)]
pub struct Fault {
    pub pc: usize,
    pub message: String,
    pub thread: u64,
    pub group: u64,
}

/// What the SM tells the dispatcher after an event.
#[derive(Default)]
pub struct SmNotices {
    /// (group slot, group id) of each work-group that finished.
    pub groups_done: Vec<(usize, u64)>,
    pub error: Option<Fault>,
    pub progress: u64,
    /// (group id, lane-local thread index, final registers) for captured threads.
    pub exits: Vec<(u64, u32, Vec<u64>)>,
    /// Race detection: what happened, in order (empty unless `RunOptions::races`).
    pub races: Vec<RaceEvent>,
}

/// A live warp as the no-progress diagnosis shows it.
#[derive(Debug, Clone)]
pub struct StuckWarp {
    pub group: u64,
    pub warp_in_group: u32,
    pub pc: u32,
    pub waiting: Stall,
    pub last_addr: Option<u64>,
}

/// What the builder hands an SM besides its spec (`sm` in the config): the parts inside it and the
/// values of other tables it depends on.
pub struct SmResources {
    pub clock: Clock,
    /// L1 line size: the coalescer's unit.
    pub line_bytes: u32,
    /// Shared virtual memory (system scope is device scope without it).
    pub svm: bool,
    /// A cumulative release at device or system scope does a membar round trip (`l2.membar_ack`
    /// set; `ordering::membar`).
    pub membar: bool,
    /// Issue stalls of the workload's warps (`stress.rs`; its held loads are the LSU's).
    pub warp_stress: WarpStress,
    pub lsu: Lsu,
    pub shared: SharedMemory,
    pub stress: Option<StressWarps>,
}

pub struct Sm {
    pub id: u16,
    clock: Clock,
    ws: u32,
    launch: Arc<Launch>,
    lat: InstLatency,
    lsu_per_cycle: u32,
    line_bytes: u32,
    svm: bool,
    membar: bool,
    warp_stress: WarpStress,
    pub warps: Vec<Option<Warp>>,
    /// What the schedulers read of each warp slot, beside the warps (`scheduler.rs`).
    gates: Gates,
    sched: Scheduler,
    /// Work-group slots; a resident group's record is boxed (its barriers make it about 1 KB, and
    /// most of an SM's slots are empty in most runs: no memory is touched for them).
    pub groups: Vec<Option<Box<GroupSlot>>>,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_shared: u32,
    /// The load/store unit: global memory, the store buffer, the instructions in flight.
    pub lsu: Lsu,
    tick_at: Option<Time>,
    /// The cycle (clock edge) the schedulers last ran in: they issue once per cycle, so a wake-up
    /// in that cycle (a response after its tick) waits for the next one.
    ticked_at: Option<Time>,
    pub shared: SharedMemory,
    pub stats: SmStats,
    pub notices: SmNotices,
    stress: Option<StressWarps>,
}

impl Sm {
    pub fn new(id: u16, spec: &SmSpec, launch: &Arc<Launch>, res: SmResources) -> Sm {
        Sm {
            id,
            clock: res.clock,
            ws: spec.warp_size,
            launch: launch.clone(),
            lat: spec.latency.clone(),
            lsu_per_cycle: spec.lsu_per_cycle,
            line_bytes: res.line_bytes,
            svm: res.svm,
            membar: res.membar,
            warp_stress: res.warp_stress,
            warps: (0..spec.max_warps).map(|_| None).collect(),
            gates: Gates::new(spec.max_warps as usize, spec.schedulers),
            sched: Scheduler::new(spec.schedulers, spec.issue_width, spec.warp_policy),
            groups: (0..spec.max_groups).map(|_| None).collect(),
            used_threads: 0,
            used_warps: 0,
            used_shared: 0,
            lsu: res.lsu,
            tick_at: None,
            ticked_at: None,
            shared: res.shared,
            stats: SmStats::default(),
            notices: SmNotices::default(),
            stress: res.stress,
        }
    }

    /// Warp slot `i`'s readiness changed (or may have): the schedulers' view of it follows.
    #[inline]
    pub(super) fn refresh_gate(&mut self, i: usize) {
        self.gates.set(i, self.warps[i].as_ref());
    }

    /// The next launch's program (between kernels, when no warp is resident).
    pub fn set_launch(&mut self, launch: &Arc<Launch>) {
        debug_assert!(self.warps.iter().all(|w| w.is_none()));
        self.launch = launch.clone();
        self.lsu.set_values(self.has_values());
    }

    fn has_values(&self) -> bool {
        self.launch.program.has_values()
    }

    /// Schedules the warp schedulers' next tick at the next clock edge at which they have not run
    /// yet, unless one comes earlier.
    pub fn wake(&mut self, ctx: &mut Ctx) {
        // Once per cycle: a second tick would issue past `issue_width` and `lsu_per_cycle`.
        let t = self.clock.free_edge_at_or_after(ctx.now(), self.ticked_at);
        if self.tick_at.is_none_or(|x| x > t) {
            self.tick_at = Some(t);
            ctx.q.at(t, Event::SmTick(self.id));
        }
    }

    /// A response from the L1 or the SM's own units.
    pub fn receive(&mut self, r: CoreResp, ctx: &mut Ctx) {
        match r {
            CoreResp::StoreAccepted {
                by: Requester::Stress { .. },
            } => return,
            CoreResp::StoreAcked {
                by: Requester::Stress { .. },
                seq,
            } => {
                self.lsu.store_acked(seq, None);
                self.wake(ctx);
                return;
            }
            CoreResp::LoadData {
                who: Requester::Stress { warp },
                data,
                ..
            } => {
                ctx.lines.release(data.0);
                if let Some(st) = self.stress.as_mut() {
                    st.done(warp);
                }
                return;
            }
            CoreResp::StoreAccepted {
                by: Requester::Drain { warp },
            } => {
                self.lsu.store_accepted(self.warps[warp as usize].as_mut());
                self.retire_if_settled(warp as usize, ctx.now());
            }
            CoreResp::StoreAcked {
                by: Requester::Drain { warp },
                seq,
            } => {
                self.lsu
                    .store_acked(seq, self.warps[warp as usize].as_mut());
                self.retire_if_settled(warp as usize, ctx.now());
            }
            CoreResp::LoadData {
                who: Requester::Warp { op, .. },
                line,
                data,
            } => {
                let bytes = *ctx.lines.get(data.0);
                ctx.lines.release(data.0);
                self.lsu.load_data(op, line, &bytes);
                self.part_done(op, ctx);
            }
            CoreResp::AtomicDone {
                who: Requester::Warp { op, .. },
                batch,
            } => {
                self.lsu.atomic_data(op, ctx.batches.get(batch.0));
                ctx.batches.release(batch.0);
                self.part_done(op, ctx);
            }
            CoreResp::MembarAcked { warp } => {
                if let Some(w) = self.warps[warp as usize].as_mut() {
                    w.membar = MembarState::Answered;
                }
            }
            CoreResp::SharedDone {
                who: Requester::Warp { op, .. },
            } => self.part_done(op, ctx),
            CoreResp::SharedPerform {
                who: Requester::Warp { op, .. },
            } => {
                // Performing wakes no warp (its completion does): no scheduling change.
                self.local_perform(op);
                return;
            }
            CoreResp::SharedAtomic {
                who: Requester::Warp { op, .. },
                batch,
            } => {
                let mut b = std::mem::replace(
                    ctx.batches.get_mut(batch.0),
                    crate::atomic::AtomicBatch {
                        op: crate::ir::AtomicOp::Cas,
                        ty: crate::ir::Ty::U32,
                        lanes: Vec::new(),
                    },
                );
                ctx.batches.release(batch.0);
                self.local_atomic_perform(op, &mut b);
                return;
            }
            other => unreachable!("a response to a requester that sent no such request: {other:?}"),
        }
        self.wake(ctx);
    }

    /// One part (line) of memory instruction `opi` completed; the last one completes it in the LSU
    /// ([`Lsu::complete`]), and its warp's schedulers and retirement follow.
    fn part_done(&mut self, opi: u32, ctx: &mut Ctx) {
        if !self.lsu.part_done(opi) {
            return;
        }
        let wi = self.lsu.op(opi).warp as usize;
        let tid0 = self.warps[wi].as_ref().map_or(0, |w| w.tid0);
        let ws = self.ws as usize;
        let w = self.warps[wi].as_mut();
        let program = &self.launch.program;
        if self
            .lsu
            .complete(opi, w, tid0, ws, program, &mut self.notices.races, ctx)
        {
            self.gates.set(wi, self.warps[wi].as_ref());
            self.retire_if_settled(wi, ctx.now());
        }
    }

    /// The store-buffer drain event: the LSU drains ([`Lsu::drain`]); an entry that left may make
    /// room for a stalled store, so the schedulers look again.
    pub fn drain_event(&mut self, ctx: &mut Ctx) {
        if self.lsu.drain(&mut self.warps, ctx) {
            self.wake(ctx);
            self.lsu.rearm_drain(ctx);
        }
    }

    /// The L1 took requests from its input (a bounded port only): a warp or the drain refused for
    /// want of room tries again.
    pub fn l1_took(&mut self, ctx: &mut Ctx) {
        if self.lsu.l1.take_refused() {
            self.wake(ctx);
            if !self.lsu.sb.entries.is_empty() {
                let now = ctx.now();
                self.lsu.wake_drain(ctx, now);
            }
        }
    }

    /// Records a runtime error of lane `lane` of warp `wi` at `pc`; the run stops with it.
    fn fail(&mut self, wi: usize, pc: u32, lane: usize, message: String) {
        let (group, thread) = self.thread_ids(wi, lane);
        self.notices.error = Some(Fault {
            pc: pc as usize,
            message,
            thread,
            group,
        });
    }

    /// (work-group, global linear thread id) of lane `lane` of warp `wi`.
    fn thread_ids(&self, wi: usize, lane: usize) -> (u64, u64) {
        let w = self.warps[wi].as_ref().expect("live warp");
        (w.group, self.tid0(wi) + lane as u64)
    }

    /// The global linear thread id of lane 0 of warp `wi` (lane `l` is this plus `l`).
    #[inline]
    fn tid0(&self, wi: usize) -> u64 {
        self.warps[wi].as_ref().expect("live warp").tid0
    }

    /// Appends the global thread ids of the live lanes to `out`; whether every live warp waits at
    /// a barrier.
    pub fn live_threads(&self, out: &mut Vec<u64>) -> bool {
        let gt = self.launch.geo.group_threads() as u64;
        let mut all = true;
        for w in self.warps.iter().flatten().filter(|w| w.live != 0) {
            all &= w.stall() == Stall::Barrier;
            for l in lanes(w.live) {
                out.push(w.group * gt + w.warp_in_group as u64 * self.ws as u64 + l as u64);
            }
        }
        all
    }

    /// Live warps, for a no-progress diagnosis.
    pub fn stuck(&self) -> Vec<StuckWarp> {
        self.warps
            .iter()
            .flatten()
            .filter(|w| w.live != 0)
            .map(|w| StuckWarp {
                group: self.groups[w.group_slot]
                    .as_ref()
                    .map(|g| g.group)
                    .unwrap_or(0),
                warp_in_group: w.warp_in_group,
                pc: w.last_pc,
                waiting: w.stall(),
                last_addr: w.last_addr,
            })
            .collect()
    }
}

/// Iterates the set bits of a lane mask.
#[inline]
pub fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}
