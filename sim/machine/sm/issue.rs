//! Issue: the ordering gate every instruction of a warp passes once its registers are ready — the
//! same for kernel and traced instructions — and the bookkeeping of an instruction that issued.
//!
//! The gate, in order (a stall at any step leaves the warp as it was):
//! 1. an access, fence or barrier waits while an earlier acquire of its warp is outstanding
//!    (`ordering::acquire`);
//! 2. a load, store or atomic needs the load/store unit, which accepts `sm.lsu_per_cycle` per cycle;
//! 3. the release side of its row must hold (`ordering::Before`): earlier loads returned, earlier
//!    stores performed at the level of its scope, and for a cumulative release the SM's write
//!    frontier (`lsu/frontier.rs`). While it waits, the store buffer is asked to drain;
//! 4. with `l2.membar_ack`, a cumulative release instead waits for its earlier accesses to be sent
//!    (loads returned, stores taken by the L1), then sends its membar and waits until every L2 slice
//!    has answered it (`ordering::membar`).

use super::launch::Program;
use super::{MembarState, Sm, Stall};
use crate::ctx::Ctx;
use crate::engine::Time;
use crate::msg::Level;
use crate::ordering::{self, Access, Before, Rule};

impl Sm {
    /// Issues the next instruction of warp `wi`, if it can issue now.
    pub(super) fn try_issue(
        &mut self,
        wi: usize,
        program: &Program,
        now: Time,
        lsu_left: &mut u32,
        ctx: &mut Ctx,
    ) -> bool {
        match program {
            Program::Kernel { kernel, .. } => self.try_issue_kernel(wi, kernel, now, lsu_left, ctx),
            Program::Trace { kernel, .. } => self.try_issue_trace(wi, kernel, now, lsu_left, ctx),
        }
    }

    /// The ordering gate of warp `wi`'s next instruction, an access, fence or barrier (see the module
    /// header): its rule when it may issue now, `None` when the warp stalls.
    #[inline(always)]
    pub(super) fn gate(
        &mut self,
        wi: usize,
        a: Access,
        lsu_left: u32,
        now: Time,
        ctx: &mut Ctx,
    ) -> Option<Rule> {
        let w = self.warps[wi].as_mut().expect("live");
        if !w.inflight.acquires_done() {
            w.set_stall(Stall::EarlierAcquire);
            return None;
        }
        if a.is_memory() && lsu_left == 0 {
            return None;
        }
        let rule = ordering::rule(&a, self.svm);
        if rule.before == Before::Nothing {
            return Some(rule);
        }
        self.release_ready(wi, rule.before, now, ctx)
            .then_some(rule)
    }

    /// The release side of the gate: whether `before` holds for warp `wi`.
    #[inline]
    fn release_ready(&mut self, wi: usize, before: Before, now: Time, ctx: &mut Ctx) -> bool {
        // With the membar, a cumulative release waits for its earlier accesses to be sent, then for
        // the membar's answers, which stand for their acknowledgements and the write frontier.
        let membar = ordering::membar(before).filter(|_| self.membar);
        let w = self.warps[wi].as_mut().expect("live");
        let own = match membar {
            Some(_) => w.inflight.sent(),
            None => w.inflight.satisfies(before),
        };
        if !own {
            // The frontier mark is taken only once the warp's own accesses are done, so that no
            // later observation escapes it (`ordering::cumulative`).
            w.fence_mark = None;
        }
        let ok = own && (membar.is_some() || !before.cumulative() || self.frontier_reached(wi));
        if !ok {
            let w = self.warps[wi].as_mut().expect("live");
            w.set_stall(Stall::Release);
            self.stats.fence_stall_ps += self.clock.period;
            if w.inflight.buffered > 0 {
                self.lsu.wake_drain(ctx, now);
            }
            return false;
        }
        match membar {
            Some(level) if !self.membar_answered(wi, level, ctx) => {
                self.stats.fence_stall_ps += self.clock.period;
                false
            }
            _ => true,
        }
    }

    /// The membar of a cumulative release at `level` (`ordering::membar`), once the warp's earlier
    /// accesses are sent: sent the first time the warp gets here, then waited for until every slice
    /// has answered (`CoreResp::MembarAcked`).
    #[inline]
    fn membar_answered(&mut self, wi: usize, level: Level, ctx: &mut Ctx) -> bool {
        let w = self.warps[wi].as_mut().expect("live");
        match w.membar {
            MembarState::Answered => true,
            MembarState::Sent => {
                w.set_stall(Stall::Membar);
                false
            }
            MembarState::None => {
                if self.lsu.membar(w, wi as u16, level == Level::System, ctx) {
                    w.membar = MembarState::Sent;
                    w.set_stall(Stall::Membar);
                }
                false
            }
        }
    }

    /// Whether the SM's write frontier has reached warp `wi`'s mark, taken now if it has none.
    #[inline]
    fn frontier_reached(&mut self, wi: usize) -> bool {
        let next = self.lsu.frontier.next();
        let w = self.warps[wi].as_mut().expect("live");
        let mark = *w.fence_mark.get_or_insert(next);
        self.lsu.frontier.reached(mark)
    }

    /// Bookkeeping of an instruction that issued for the lanes in `mask`.
    #[inline]
    pub(super) fn issued(
        &mut self,
        wi: usize,
        mask: u64,
        is_mem: bool,
        lsu_left: &mut u32,
        now: Time,
        ctx: &mut Ctx,
    ) {
        if is_mem {
            *lsu_left -= 1;
            self.stats.mem_insts += 1;
        }
        self.stats.warp_insts += 1;
        self.stats.thread_insts += mask.count_ones() as u64;
        // A seeded issue stall (`stress.issue_stall`): timing only, no ordering.
        let stall = self.warp_stress.issue_stall(ctx.rng);
        if let Some(w) = self.warps[wi].as_mut() {
            w.ready_at = w
                .ready_at
                .max(now + self.clock.period + self.clock.cycles(stall));
            w.set_stall(Stall::Ready);
            w.fence_mark = None;
            w.membar = MembarState::None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Launch, Program, Sm, Stall};
    use crate::build;
    use crate::contract::{ctx, Bench};
    use crate::engine::{Clock, Time};
    use crate::msg::Event;
    use crate::pool::MAX_LINE;
    use crate::tests::tiny;
    use crate::trace::parse_kernel;
    use crate::workload::Geometry;
    use std::path::Path;
    use std::sync::Arc;

    /// One traced warp of 32 threads running `op` and exiting.
    fn trace(op: &str) -> Program {
        let text = format!(
            "-kernel name = k\n-kernel id = 1\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-shmem = 0\n\
             -nregs = 8\n-binary version = 70\n-cuda stream id = 0\n\
             -shmem base_addr = 0x00007f0e8e000000\n-local mem base_addr = 0x00007f0e8c000000\n\
             -nvbit version = 1.5.5\n-accelsim tracer version = 4\n-enable lineinfo = 0\n\n\
             #BEGIN_TB\n\nthread block = 0,0,0\n\nwarp = 0\ninsts = 2\n\
             0000 ffffffff 0 {op} 0 0\n0010 ffffffff 0 EXIT 0 0\n\n#END_TB\n"
        );
        let kernel = parse_kernel(&text, Path::new("k.traceg")).unwrap();
        Program::Trace {
            kernel: super::super::TraceLaunch::new(Arc::new(kernel)),
        }
    }

    /// SM 0 of the tiny config loaded with one traced warp of 32 threads running `op` and exiting
    /// (not launched), its bench and its clock period.
    fn sm_of(op: &str) -> (Sm, Bench, Time) {
        let cfg = tiny();
        let launch = Arc::new(Launch {
            program: trace(op),
            geo: Geometry {
                groups: [1, 1, 1],
                group_size: [32, 1, 1],
            },
            capture_groups: Default::default(),
            races: false,
        });
        let sm = build::sm(&cfg, 0, &launch, None, build::RunStress::draw(&cfg, 0));
        let clock = Clock::from_mhz(cfg.clocks.core_mhz);
        (sm, Bench::new(clock, 1, 1), clock.period)
    }

    /// Runs the SM's ticks (nothing else answers) until `until` cycles.
    fn ticks(sm: &mut Sm, b: &mut Bench, until: u64) {
        while let Some(t) = b.q.peek_time() {
            if t > b.cycle(until) {
                break;
            }
            let (_, ev) = b.q.pop().unwrap();
            if let Event::SmTick(_) = ev {
                sm.tick(&mut ctx!(b));
            }
        }
    }

    #[test]
    fn the_schedulers_run_once_per_cycle_a_wake_after_the_tick_waits_for_the_next() {
        let (mut sm, mut b, period) = sm_of("IADD3");
        let tick = |ev: &Event| matches!(ev, Event::SmTick(_));
        sm.launch(0, 32, 0, || 0, &mut ctx!(b));
        // The first tick, then a wake-up in its cycle (a response arriving after it).
        let t = b.next_time_of(tick).expect("a tick is due");
        sm.tick(&mut ctx!(b));
        sm.wake(&mut ctx!(b));
        let next = b.next_time_of(tick).expect("the next tick");
        assert!(
            next >= t + period,
            "a second tick in the cycle at {t} ps (at {next} ps)"
        );
    }

    #[test]
    fn the_store_buffer_drains_one_entry_per_cycle_even_when_asked_again_in_it() {
        let (mut sm, mut b, period) = sm_of("IADD3");
        // Two entries of two lines, both ready at once.
        for line in [0x1000u64, 0x2000] {
            sm.lsu.sb.insert(0, 0, line, 1, &[0; MAX_LINE], 0, false);
        }
        sm.lsu.wake_drain(&mut ctx!(b), 0);
        // The times entries left (an entry left when the buffer no longer holds its line).
        let mut left = Vec::new();
        while let Some((t, ev)) = b.q.pop() {
            if let Event::SbDrain(_) = ev {
                let before = [0x1000u64, 0x2000].map(|l| sm.lsu.sb.holds(0, l));
                sm.drain_event(&mut ctx!(b));
                let after = [0x1000u64, 0x2000].map(|l| sm.lsu.sb.holds(0, l));
                if before != after {
                    left.push(t);
                    if left.len() == 1 {
                        // A fence asks for a drain in the same cycle.
                        sm.lsu.wake_drain(&mut ctx!(b), t);
                    }
                }
            }
        }
        assert_eq!(left.len(), 2, "both entries left");
        assert!(
            left[1] >= left[0] + period,
            "entries left at {left:?} ps: two in one cycle of {period} ps"
        );
    }

    #[test]
    fn a_traced_membar_gpu_waits_for_the_sms_write_frontier_as_a_kernel_fence_does() {
        for (op, waits) in [("MEMBAR.GPU", true), ("MEMBAR.CTA", false)] {
            let (mut sm, mut b, _) = sm_of(op);
            // A write another warp sent to the L1 earlier, not yet acknowledged by L2: the L1 is
            // shared, so the membar's warp may have observed it.
            let other = sm.lsu.frontier.number();
            sm.launch(0, 32, 0, || 0, &mut ctx!(b));
            ticks(&mut sm, &mut b, 100);
            let stuck = sm.stuck();
            if waits {
                assert_eq!(stuck.len(), 1, "{op}: the warp waits");
                assert_eq!(stuck[0].waiting, Stall::Release, "{op}");
                assert!(sm.stats.fence_stall_ps > 0);
                sm.lsu.frontier.acked(other);
                sm.wake(&mut ctx!(b));
                ticks(&mut sm, &mut b, 200);
            }
            assert!(
                sm.stuck().is_empty(),
                "{op}: the warp went on once the frontier passed"
            );
        }
    }
}
