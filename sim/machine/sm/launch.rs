//! Launch: the program a launch runs, the work-group slots of an SM, a group's warps from start to
//! retirement, and the special registers a lane reads (its ids in the launch's geometry).
//!
//! A work-group becomes resident in one group slot, its warps in free warp slots (the dispatcher has
//! checked that they fit). A warp whose lanes have all exited leaves its group's barriers at once but
//! keeps its slot until its memory operations have settled, so that no response reaches a warp that
//! reuses the slot; the group finishes when its last warp retires.
//!
//! A traced group's thread block ([`TraceLaunch`]) is handed to the SM when the dispatcher places
//! the group (parsed then, for a streamed trace), held while the group is resident and let go when
//! it finishes, so the blocks in memory are the resident ones.

use super::barrier::Barriers;
use super::warp::{Flow, Stall, Warp};
use super::{lanes, Sm};
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::ir::{Kernel, Reg, Special};
use crate::trace::{TraceBlock, TraceKernel, TraceReg, TRACE_REGS};
use crate::workload::Geometry;
use std::collections::HashSet;
use std::sync::Arc;

/// What the warps of one launch execute.
#[derive(Clone)]
pub enum Program {
    /// Kernel IR with its launch parameters (registers preloaded in every lane).
    Kernel {
        kernel: Kernel,
        params: Vec<(Reg, u64)>,
    },
    /// A traced kernel, with the thread blocks of the groups resident on this SM.
    Trace { kernel: TraceLaunch },
}

/// A traced kernel as one SM runs it: the kernel, and the thread blocks of its resident groups (each
/// SM's [`Launch`] becomes its own copy when the first block is handed to it).
#[derive(Clone)]
pub struct TraceLaunch {
    pub trace: Arc<TraceKernel>,
    /// The kernel's `-shmem base_addr`.
    pub shmem_base: u64,
    /// Blocks handed over by the dispatcher for groups not yet started: (group, block).
    staged: Vec<(u64, Arc<TraceBlock>)>,
    /// The block of the group in each group slot.
    resident: Vec<Option<Arc<TraceBlock>>>,
    /// Each slot's block's instructions (first kernel-wide number, count; `(0, 0)` for none): what
    /// [`TraceLaunch::regs_by_key`] scans, in one small array.
    ranges: Vec<(u32, u32)>,
}

impl TraceLaunch {
    pub fn new(trace: Arc<TraceKernel>) -> TraceLaunch {
        TraceLaunch {
            shmem_base: trace.shmem_base,
            trace,
            staged: Vec::new(),
            resident: Vec::new(),
            ranges: Vec::new(),
        }
    }

    /// The thread block of the group in slot `gs`.
    #[inline]
    pub fn block(&self, gs: usize) -> &TraceBlock {
        self.resident[gs]
            .as_deref()
            .expect("a resident traced group has its block")
    }

    /// The first `n` registers (its destinations) of the instruction whose key
    /// is `key` (`crate::trace::TraceInst::regs`), from the resident block that holds it (an SM holds a few).
    #[inline]
    pub fn regs_by_key(&self, key: u32, n: usize) -> &[TraceReg] {
        let Some(gs) = self
            .ranges
            .iter()
            .position(|&(first, len)| key.wrapping_sub(first) < len)
        else {
            return &[];
        };
        let b = self.block(gs);
        let at = b.inst(key).reg_at as usize;
        &b.regs[at..at + n]
    }

    /// Puts group `group`'s block in slot `gs`: the one staged for it, else (a kernel parsed at load)
    /// its block from the kernel.
    fn install(&mut self, gs: usize, group: u64) {
        let b = match self.staged.iter().position(|(g, _)| *g == group) {
            Some(i) => self.staged.swap_remove(i).1,
            None => self
                .trace
                .group_block(group)
                .expect("the dispatcher stages the blocks of a streamed trace"),
        };
        if self.resident.len() <= gs {
            self.resident.resize(gs + 1, None);
            self.ranges.resize(gs + 1, (0, 0));
        }
        self.ranges[gs] = (b.first, b.insts.len() as u32);
        self.resident[gs] = Some(b);
    }
}

impl Program {
    /// `file:line[:col]` of instruction `pc` (a trace's instruction index names its file line).
    pub fn where_is(&self, pc: usize) -> String {
        match self {
            Program::Kernel { kernel, .. } => kernel.where_is(pc),
            Program::Trace { kernel } => match kernel.trace.inst_at(pc as u32) {
                Some(i) => format!("{}:{}", kernel.trace.file.display(), i.line),
                None => format!("{}:instruction {pc}", kernel.trace.file.display()),
            },
        }
    }

    /// Instruction `pc` as text, for diagnostics.
    pub fn describe(&self, pc: usize) -> String {
        match self {
            Program::Kernel { kernel, .. } => kernel.disassemble(pc),
            Program::Trace { kernel } => match kernel.trace.inst_at(pc as u32) {
                Some(i) => format!("{:?} mask {:08x}", i.op, i.mask),
                None => format!("<no instruction {pc}>"),
            },
        }
    }

    /// Bytes of work-group-local (shared) memory each group allocates.
    pub fn local_bytes(&self) -> u32 {
        match self {
            Program::Kernel { kernel, .. } => kernel.local_bytes,
            Program::Trace { kernel } => kernel.trace.shmem,
        }
    }

    /// Whether the program computes values (kernel IR) or only timing (a trace).
    pub fn has_values(&self) -> bool {
        matches!(self, Program::Kernel { .. })
    }
}

/// One kernel launch as every SM sees it.
#[derive(Clone)]
pub struct Launch {
    pub program: Program,
    pub geo: Geometry,
    /// Work-groups whose threads' registers are captured at exit.
    pub capture_groups: HashSet<u64>,
    /// Report race events (kernel programs only).
    pub races: bool,
}

/// A resident work-group.
pub struct GroupSlot {
    pub group: u64,
    /// Warps with live lanes (barrier participants).
    pub warps: Vec<u16>,
    pub live_warps: u32,
    /// Warps holding a slot: live ones plus exited ones whose memory operations are in flight.
    pub(super) resident_warps: u32,
    pub(super) barriers: Barriers,
    pub threads: u32,
    /// The group's local memory (empty for a trace, which has no values).
    pub local: Vec<u8>,
    /// The digest of `local` for the watchdog (`../watchdog.rs`): written through
    /// `digest::write_tracked`.
    pub local_digest: u64,
}

impl Sm {
    /// The dispatcher placed traced group `group` here: its thread block, until the group starts.
    pub fn stage_trace_block(&mut self, group: u64, block: Arc<TraceBlock>) {
        // Only a traced launch is made this SM's own copy (a kernel's program is never cloned).
        if matches!(self.launch.program, Program::Trace { .. }) {
            if let Program::Trace { kernel } = &mut Arc::make_mut(&mut self.launch).program {
                kernel.staged.push((group, block));
            }
        }
    }

    /// Makes work-group `group` resident and starts its warps (after `skew(i)` cycles each).
    pub fn launch(
        &mut self,
        group: u64,
        threads: u32,
        now: Time,
        mut skew: impl FnMut() -> u64,
        ctx: &mut Ctx,
    ) {
        let Some(gs) = self.groups.iter().position(|g| g.is_none()) else {
            return;
        };
        let nw = threads.div_ceil(self.ws);
        if matches!(self.launch.program, Program::Trace { .. }) {
            if let Program::Trace { kernel } = &mut Arc::make_mut(&mut self.launch).program {
                kernel.install(gs, group);
            }
        }
        let launch = self.launch.clone();
        let ws = self.ws as usize;
        let mut slots = Vec::with_capacity(nw as usize);
        for w in 0..nw {
            let Some(slot) = self.warps.iter().position(|x| x.is_none()) else {
                break;
            };
            let nlanes = (threads - w * self.ws).min(self.ws);
            let (flow, nregs) = match &launch.program {
                Program::Kernel { kernel, params } => {
                    let nregs = kernel.num_regs().max(1);
                    let mut regs = vec![0; nregs * ws];
                    for &(r, v) in params {
                        regs[r as usize * ws..(r as usize + 1) * ws].fill(v);
                    }
                    (Flow::simt(ws, regs), nregs)
                }
                Program::Trace { kernel } => {
                    // A warp the tracer did not list ran no instruction: an empty stream.
                    let tw = kernel.block(gs).warps.get(w as usize);
                    let (next, end) = tw.map(|t| (t.first, t.first + t.len)).unwrap_or((0, 0));
                    (Flow::Stream { next, end }, TRACE_REGS)
                }
            };
            let mut warp = Warp::new(
                gs,
                group,
                w,
                nlanes,
                flow,
                nregs,
                now + self.clock.cycles(skew()),
            );
            warp.tid0 = group * self.launch.geo.group_threads() as u64 + w as u64 * ws as u64;
            self.warps[slot] = Some(warp);
            self.refresh_gate(slot);
            self.sched.add(slot);
            slots.push(slot as u16);
        }
        let local_bytes = launch.program.local_bytes();
        // A trace has no values: its shared memory is timed (banks) but holds nothing.
        let local = if launch.program.has_values() {
            vec![0u8; local_bytes as usize]
        } else {
            Vec::new()
        };
        self.used_threads += threads;
        self.used_warps += nw;
        self.used_shared += local_bytes;
        self.groups[gs] = Some(Box::new(GroupSlot {
            group,
            live_warps: slots.len() as u32,
            resident_warps: slots.len() as u32,
            warps: slots,
            barriers: Barriers::default(),
            threads,
            local,
            local_digest: 0,
        }));
        self.wake(ctx);
        self.wake_stress(ctx, 0);
    }

    /// The lanes in `mask` of warp `wi` exit.
    pub(super) fn exit_lanes(&mut self, wi: usize, mask: u64, ctx: &mut Ctx) {
        let w = self.warps[wi].as_mut().expect("live");
        w.live &= !mask;
        self.notices.progress += 1;
        if w.live != 0 {
            // The lanes still live may now be all the warp has at a barrier.
            self.lanes_left_barrier(wi, ctx);
            return;
        }
        // No lane is left: the warp leaves the group's barriers now, and its slot once its memory
        // operations have settled.
        w.exited = true;
        w.set_stall(Stall::Exited);
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        g.live_warps -= 1;
        g.warps.retain(|&s| s as usize != wi);
        if g.live_warps > 0 {
            self.try_release_group(gs, ctx);
        }
        self.retire_if_settled(wi, ctx.now());
    }

    /// Frees the slot of an exited warp whose memory operations have all settled, and finishes its
    /// work-group when it was the last one.
    pub(super) fn retire_if_settled(&mut self, wi: usize, now: Time) {
        if let Some(w) = self.warps[wi].as_mut().filter(|w| w.inflight.quiet()) {
            w.settled_at = now;
        }
        if !self.warps[wi]
            .as_ref()
            .is_some_and(|w| w.exited && w.inflight.quiet())
        {
            return;
        }
        let w = self.warps[wi].take().expect("checked");
        self.gates.set(wi, None);
        self.sched.remove(wi);
        let gs = w.group_slot;
        let g = self.groups[gs].as_mut().expect("resident");
        if self.launch.capture_groups.contains(&g.group) {
            self.notices
                .exits
                .push((g.group, w.warp_in_group * self.ws, w.regs().to_vec()));
        }
        g.resident_warps -= 1;
        self.used_warps -= 1;
        if g.resident_warps == 0 {
            let g = self.groups[gs].take().expect("resident");
            self.used_threads -= g.threads;
            self.used_shared -= self.launch.program.local_bytes();
            self.notices.groups_done.push((gs, g.group));
            if matches!(self.launch.program, Program::Trace { .. }) {
                if let Program::Trace { kernel } = &mut Arc::make_mut(&mut self.launch).program {
                    kernel.resident[gs] = None;
                    kernel.ranges[gs] = (0, 0);
                }
            }
        }
    }

    /// Special register `s` as each lane of `mask` of warp `wi` reads it at `now`, into `out` by
    /// lane. The group's coordinates are found once per warp, and per lane only the dimensions the
    /// register needs (a division each).
    pub(super) fn specials(
        &self,
        wi: usize,
        mask: u64,
        s: Special,
        now: Time,
        out: &mut [u64; 64],
    ) {
        let w = self.warps[wi].as_ref().expect("live warp");
        let g = self.groups[w.group_slot].as_ref().expect("resident group");
        let gs = self.launch.geo.group_size.map(|x| x as u64);
        let ng = self.launch.geo.groups.map(|x| x as u64);
        let first = w.warp_in_group as u64 * self.ws as u64;
        let gid = [
            g.group % ng[0],
            (g.group / ng[0]) % ng[1],
            g.group / (ng[0] * ng[1]),
        ];
        // The work-item's coordinate `d` in its group, from its linear id.
        let lid = |lin: u64, d: usize| match d {
            0 => lin % gs[0],
            1 => (lin / gs[0]) % gs[1],
            _ => lin / (gs[0] * gs[1]),
        };
        let uniform = |v: u64, out: &mut [u64; 64]| {
            for l in lanes(mask) {
                out[l] = v;
            }
        };
        match s {
            Special::GlobalId(d) => {
                let (d, base) = (d.index(), gid[d.index()] * gs[d.index()]);
                for l in lanes(mask) {
                    out[l] = base + lid(first + l as u64, d);
                }
            }
            Special::LocalId(d) => {
                for l in lanes(mask) {
                    out[l] = lid(first + l as u64, d.index());
                }
            }
            Special::GlobalLinearId => {
                let (sx, sy) = (gs[0] * ng[0], gs[1] * ng[1]);
                for l in lanes(mask) {
                    let lin = first + l as u64;
                    let gx = gid[0] * gs[0] + lid(lin, 0);
                    let gy = gid[1] * gs[1] + lid(lin, 1);
                    let gz = gid[2] * gs[2] + lid(lin, 2);
                    out[l] = gx + sx * (gy + sy * gz);
                }
            }
            Special::LocalLinearId => {
                for l in lanes(mask) {
                    out[l] = first + l as u64;
                }
            }
            Special::Lane => {
                for l in lanes(mask) {
                    out[l] = l as u64;
                }
            }
            Special::GroupId(d) => uniform(gid[d.index()], out),
            Special::GlobalSize(d) => uniform(gs[d.index()] * ng[d.index()], out),
            Special::LocalSize(d) => uniform(gs[d.index()], out),
            Special::NumGroups(d) => uniform(ng[d.index()], out),
            Special::GroupLinearId => uniform(g.group, out),
            Special::SubGroupId => uniform(w.warp_in_group as u64, out),
            Special::SubGroupSize => uniform(self.ws as u64, out),
            Special::NumSubGroups => uniform(g.threads.div_ceil(self.ws) as u64, out),
            Special::SmId => uniform(self.id as u64, out),
            Special::Clock => uniform(self.clock.cycle_of(now), out),
        }
    }
}
