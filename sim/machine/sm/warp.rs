//! A warp (sub-group): its lanes, how it advances through its program, what it waits on.
//!
//! SIMT divergence and reconvergence ([`Flow::Simt`]): each lane has its own PC; the warp runs the
//! lanes at the lowest PC together ([`Warp::select`]), so lanes that took different sides of a branch
//! reconverge when their PCs meet again — for structured code the same schedule a post-dominator
//! reconvergence stack gives. A group of lanes that keeps branching backwards while other lanes of its
//! warp wait is rotated out after [`SPIN_ROTATE`] backward branches ([`Warp::branch`]): the scheduler
//! then runs the lanes above the spin loop's branch first, as independent thread scheduling (Volta and
//! later) does, so a lane spinning on a flag that another lane of its warp will set makes progress.
//! A traced warp ([`Flow::Stream`]) replays its recorded instructions in order, with each one's mask.
//!
//! Not modelled: the reconvergence-stack hardware itself, `bssy`/`bsync` barriers of SASS.

use super::barrier::BarrierWait;
use super::scoreboard::Scoreboard;
use crate::engine::Time;
use crate::ordering::InFlight;
use std::cell::Cell;
use std::fmt;

/// Backward branches a divergent lane group may take before the scheduler rotates to other lanes.
pub const SPIN_ROTATE: u32 = 16;

/// Why a warp does not issue (shown by the no-progress diagnosis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// Nothing known: the warp may issue.
    Ready,
    /// A source register, or a destination with a result pending, is not ready.
    RegisterDependency,
    /// An earlier acquire has not completed (`ordering::acquire`).
    EarlierAcquire,
    /// A release's earlier accesses are not yet performed (`ordering::release`).
    Release,
    /// A release waits for the answers to its membar (`ordering::membar`).
    Membar,
    /// A load overlaps some, not all, of its bytes with the warp's buffered stores.
    StoreBufferOverlap,
    /// A store touches more lines than the store buffer holds: it waits for the buffer to drain.
    StoreLargerThanBuffer,
    StoreBufferFull,
    /// An atomic waits for the warp's buffered stores to its lines.
    OwnBufferedStore,
    /// An access waits for the warp's held load to its lines (`ordering::held_load_blocks`).
    HeldLoad,
    /// The LSU's port into the L1 is full (`sm.l1_port_depth`).
    L1PortFull,
    /// Every live lane waits at a barrier.
    Barrier,
    /// Every lane has exited; the warp's memory operations are still in flight.
    Exited,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

impl Stall {
    /// What the warp waits for, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Stall::Ready => "ready",
            Stall::RegisterDependency => "register dependency",
            Stall::EarlierAcquire => "earlier acquire",
            Stall::Release => "release: earlier accesses not yet performed",
            Stall::Membar => "release: membar not yet answered by every L2 slice",
            Stall::StoreBufferOverlap => "load waits for store buffer (partial overlap)",
            Stall::StoreLargerThanBuffer => {
                "store larger than the store buffer waits for it to drain"
            }
            Stall::StoreBufferFull => "store buffer full",
            Stall::OwnBufferedStore => "atomic waits for own buffered store",
            Stall::HeldLoad => "waits for an earlier held load to the same line",
            Stall::L1PortFull => "the L1's input port is full",
            Stall::Barrier => "barrier",
            Stall::Exited => "exited; memory operations in flight",
        }
    }
}

/// The membar of a warp's release (`ordering::membar`): sent once the release's precondition holds,
/// answered by every slice, and reset when the release issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembarState {
    None,
    Sent,
    Answered,
}

/// How a warp advances.
pub enum Flow {
    /// Kernel IR: one PC per lane and every lane's registers (`regs[r * warp_size + lane]`);
    /// `spin`/`rotate_from` drive the forward-progress rotation of divergent spin loops.
    Simt {
        pc: Vec<u32>,
        regs: Vec<u64>,
        spin: u32,
        rotate_from: Option<u32>,
        /// The last [`Warp::select`] answer and the runnable lanes it was for; `pc` changes only in
        /// [`Flow::advance`] and [`Warp::branch`], which keep it right or clear it.
        sel: Cell<Selected>,
    },
    /// A trace: the warp's instructions `next..end` (indices into the trace kernel's instructions).
    Stream { next: u32, end: u32 },
}

impl Flow {
    /// A SIMT warp of `lanes` lanes at PC 0 with registers `regs`.
    pub fn simt(lanes: usize, regs: Vec<u64>) -> Flow {
        Flow::Simt {
            pc: vec![0; lanes],
            regs,
            spin: 0,
            rotate_from: None,
            sel: Cell::default(),
        }
    }

    /// The lanes in `mask` move past the instruction they executed.
    #[inline]
    pub fn advance(&mut self, mask: u64) {
        match self {
            Flow::Simt { pc, sel, .. } => {
                let mut m = mask;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    pc[l] += 1;
                }
                sel.set(sel.get().moved(mask, |at| at + 1));
            }
            Flow::Stream { next, .. } => *next += 1,
        }
    }
}

/// A memo of [`Warp::select`]: for the runnable lanes `cand` (0: none remembered), the PC `at` and
/// the lanes `mask` at it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selected {
    cand: u64,
    at: u32,
    mask: u64,
}

impl Selected {
    /// After the lanes in `moved` changed PC by `to`: when they were exactly the lanes remembered,
    /// all at one PC, they are all at `to(at)` together, which is the answer again (every candidate
    /// at one PC is selected whatever the rotation); otherwise the memo is dropped.
    #[inline]
    fn moved(self, moved: u64, to: impl Fn(u32) -> u32) -> Selected {
        if self.cand != 0 && moved == self.mask && self.mask == self.cand {
            Selected {
                at: to(self.at),
                ..self
            }
        } else {
            Selected::default()
        }
    }
}

/// The SIMT rule behind [`Warp::select`]: of the lanes `cand`, those at the lowest PC, or after a
/// rotation (`rotate_from`: the spin loop's branch) those at the lowest PC above it if any is.
fn lowest(pc: &[u32], rotate_from: Option<u32>, cand: u64) -> (u32, u64) {
    let mut min = u32::MAX;
    let mut above: Option<u32> = None;
    let mut m = cand;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let p = pc[l];
        min = min.min(p);
        if let Some(r) = rotate_from {
            if p > r && above.is_none_or(|a| p < a) {
                above = Some(p);
            }
        }
    }
    let at = match (rotate_from, above) {
        (Some(_), Some(a)) => a,
        _ => min,
    };
    let mut mask = 0u64;
    let mut m = cand;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        if pc[l] == at {
            mask |= 1 << l;
        }
    }
    (at, mask)
}

pub struct Warp {
    pub group_slot: usize,
    /// The work-group's id (kept for the warp's in-flight operations after its group has finished).
    pub group: u64,
    pub warp_in_group: u32,
    pub nlanes: u32,
    /// Lanes that have not exited.
    pub live: u64,
    /// The global linear thread id of lane 0 (lane `l` is `tid0 + l`), set at launch.
    pub tid0: u64,
    /// Lanes waiting at a barrier, and what they wait at.
    pub at_bar: u64,
    pub bar: Option<BarrierWait>,
    pub flow: Flow,
    pub scoreboard: Scoreboard,
    /// The warp issues nothing before this time (start skew, branch and compute latency).
    pub ready_at: Time,
    /// What the warp has in flight, as the ordering rules count it.
    pub inflight: InFlight,
    pub last_addr: Option<u64>,
    pub last_pc: u32,
    stall: Stall,
    /// Every lane has exited; the slot is kept until the warp's memory operations have settled, so
    /// that their responses never reach a warp that later reuses the slot, and captured registers
    /// hold the values of loads still in flight at the exit.
    pub exited: bool,
    /// The SM write frontier a cumulative release waits for (`lsu/frontier.rs`).
    pub fence_mark: Option<u64>,
    /// Where the membar of the release the warp waits at stands (`ordering::membar`).
    pub membar: MembarState,
    /// (op, line) of the warp's loads held before they were sent (`stress.load_delay`), until
    /// each op completes.
    pub held: Vec<(u32, u64)>,
    /// The last time the warp's memory operations all completed (`../watchdog.rs`).
    pub settled_at: Time,
    /// Backward branches taken (`../watchdog.rs`: a looping warp is judged without its PC).
    pub back_branches: u64,
}

impl Warp {
    /// A warp of `nlanes` live lanes with `nregs` registers, issuing from `ready_at`.
    pub fn new(
        group_slot: usize,
        group: u64,
        warp_in_group: u32,
        nlanes: u32,
        flow: Flow,
        nregs: usize,
        ready_at: Time,
    ) -> Warp {
        let mut w = Warp {
            group_slot,
            group,
            warp_in_group,
            nlanes,
            live: 0,
            tid0: 0,
            at_bar: 0,
            bar: None,
            flow,
            scoreboard: Scoreboard::new(nregs),
            ready_at,
            inflight: InFlight::default(),
            last_addr: None,
            last_pc: 0,
            stall: Stall::Ready,
            exited: false,
            fence_mark: None,
            membar: MembarState::None,
            held: Vec::new(),
            settled_at: ready_at,
            back_branches: 0,
        };
        w.live = w.full_mask();
        w
    }

    #[inline]
    pub fn full_mask(&self) -> u64 {
        if self.nlanes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.nlanes) - 1
        }
    }

    #[inline]
    pub fn set_stall(&mut self, s: Stall) {
        self.stall = s;
    }

    /// What the warp waits on: a barrier when every live lane is at one, else the last stall.
    #[inline]
    pub fn stall(&self) -> Stall {
        if self.at_bar != 0 && self.at_bar & self.live == self.live {
            Stall::Barrier
        } else {
            self.stall
        }
    }

    /// Lanes that may run (live, not at a barrier).
    #[inline]
    pub fn runnable(&self) -> u64 {
        self.live & !self.at_bar
    }

    /// SIMT: the lanes to run next and their PC — the lanes at the lowest PC, or after a rotation
    /// the lanes at the lowest PC above the spin loop's branch.
    #[inline]
    pub fn select(&self) -> Option<(u32, u64)> {
        let cand = self.runnable();
        let Flow::Simt {
            pc,
            rotate_from,
            sel,
            ..
        } = &self.flow
        else {
            return None;
        };
        if cand == 0 {
            return None;
        }
        let last = sel.get();
        if last.cand == cand {
            debug_assert_eq!(
                (last.at, last.mask),
                lowest(pc, *rotate_from, cand),
                "the remembered selection is the rule's"
            );
            return Some((last.at, last.mask));
        }
        let (at, mask) = lowest(pc, *rotate_from, cand);
        sel.set(Selected { cand, at, mask });
        Some((at, mask))
    }

    /// A branch at `pc` to `target` by the lanes in `mask`; `taken(lane)` says whether a lane takes
    /// it. Lanes that branch backwards while other lanes of the warp wait count towards the
    /// forward-progress rotation.
    pub fn branch(
        &mut self,
        pc: u32,
        target: u32,
        mask: u64,
        taken: impl Fn(&[u64], usize) -> bool,
    ) {
        let waiting_others = self.runnable() & !mask != 0;
        let Flow::Simt {
            pc: pcs,
            regs,
            spin,
            rotate_from,
            sel,
        } = &mut self.flow
        else {
            unreachable!("kernel instructions run on SIMT warps");
        };
        let mut any = false;
        let mut all = true;
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if taken(regs, l) {
                pcs[l] = target;
                any = true;
            } else {
                pcs[l] += 1;
                all = false;
            }
        }
        // A uniform branch keeps the selected lanes together (at either PC, rotation or not); a
        // divergent one splits them.
        sel.set(if any && !all {
            Selected::default()
        } else {
            sel.get()
                .moved(mask, |at| if any { target } else { at + 1 })
        });
        if any && target <= pc {
            self.back_branches += 1;
        }
        if any && target <= pc && waiting_others {
            *spin += 1;
            if *spin >= SPIN_ROTATE {
                *spin = 0;
                *rotate_from = Some(pc);
            }
        } else if rotate_from.is_some_and(|r| pc > r) || !waiting_others {
            *rotate_from = None;
        }
    }

    /// Every lane's registers (empty for a traced warp, which has no values).
    #[inline]
    pub fn regs(&self) -> &[u64] {
        match &self.flow {
            Flow::Simt { regs, .. } => regs,
            Flow::Stream { .. } => &[],
        }
    }

    #[inline]
    pub fn regs_mut(&mut self) -> &mut [u64] {
        match &mut self.flow {
            Flow::Simt { regs, .. } => regs,
            Flow::Stream { .. } => &mut [],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warp(lanes: u32) -> Warp {
        Warp::new(
            0,
            0,
            0,
            lanes,
            Flow::simt(lanes as usize, vec![0; 4 * 64]),
            4,
            0,
        )
    }

    fn pcs(w: &Warp) -> Vec<u32> {
        match &w.flow {
            Flow::Simt { pc, .. } => pc.clone(),
            Flow::Stream { .. } => unreachable!(),
        }
    }

    #[test]
    fn diverged_lanes_run_lowest_pc_first_and_reconverge_where_pcs_meet() {
        let mut w = warp(4);
        // pc 0: lanes 0 and 1 branch to 5, lanes 2 and 3 fall through to 1.
        w.branch(0, 5, 0b1111, |_, l| l < 2);
        assert_eq!(pcs(&w), [5, 5, 1, 1]);
        assert_eq!(w.select(), Some((1, 0b1100)), "the lower PC runs first");
        // Lanes 2 and 3 run pcs 1..5 and reach 5: the warp reconverges.
        for _ in 1..5 {
            let (_, m) = w.select().unwrap();
            w.flow.advance(m);
        }
        assert_eq!(w.select(), Some((5, 0b1111)), "all lanes together again");
    }

    #[test]
    fn lanes_at_a_barrier_or_exited_are_not_selected() {
        let mut w = warp(4);
        w.at_bar = 0b0011;
        w.live = 0b0111;
        assert_eq!(w.select(), Some((0, 0b0100)));
        assert_eq!(
            w.stall(),
            Stall::Ready,
            "lane 2 is live and not at the barrier"
        );
        w.at_bar = 0b0111;
        assert_eq!(w.select(), None);
        assert_eq!(w.stall(), Stall::Barrier);
    }

    #[test]
    fn a_lane_spinning_while_others_wait_is_rotated_out_after_the_bound() {
        let mut w = warp(2);
        // Lane 0 spins at pc 3 (branch back to 2) while lane 1 waits at pc 7.
        if let Flow::Simt { pc, .. } = &mut w.flow {
            pc[0] = 3;
            pc[1] = 7;
        }
        for i in 0..SPIN_ROTATE {
            assert_eq!(w.select(), Some((3, 0b01)), "iteration {i} still spins");
            w.branch(3, 2, 0b01, |_, _| true);
            w.flow.advance(0b01); // pc 2 → 3
        }
        assert_eq!(
            w.select(),
            Some((7, 0b10)),
            "after the bound the waiting lane runs first"
        );
        // Once the other lane has moved past the spin loop, the rotation ends where it branches.
        w.flow.advance(0b10);
        w.branch(8, 20, 0b10, |_, _| true);
        assert_eq!(w.select(), Some((3, 0b01)));
    }

    #[test]
    fn the_stall_shown_is_the_displayed_reason() {
        assert_eq!(
            Stall::Release.to_string(),
            "release: earlier accesses not yet performed"
        );
        assert_eq!(Stall::Barrier.to_string(), "barrier");
    }
}
