//! Memory-stress warps (`stress.stress_warps`), as GPU litmus harnesses use to expose weak behaviour:
//! per SM, pseudo-warps that keep loading and storing random lines of a scratch region (twice the
//! L1's size, after the workload's buffers) while workload warps are resident on the SM. Their
//! traffic goes through the SM's L1 (evicting lines, occupying MSHRs), the interconnect (queues,
//! port bandwidth) and the L2 slices, like any warp's, so it perturbs the timing of every path the
//! workload uses without touching its memory.
//!
//! Each stress warp issues one access, then waits 0–7 core cycles (seeded) before the next; a load
//! waits for its data first. Stores write zero into the zero-initialised scratch region, so they
//! change no value (and so never count as forward progress for the watchdog).
//!
//! Not modelled: stress warps occupying warp slots or issue cycles of the SM's schedulers (their
//! instruction stream is not simulated, only their memory traffic).
//!
//! Also here, the seeded timing stress of the workload's own warps ([`WarpStress`]): issue stalls
//! (`stress.issue_stall`: after an instruction, the warp issues nothing for a while, as behind an
//! instruction-cache miss or a higher-priority warp) and held loads (`stress.load_delay`: a global
//! load waits in a replay queue before it is sent to the L1, while the warp goes on; what may pass it
//! is `ordering::held_load_blocks`). Both only move accesses in time; neither draws anything when
//! its chance is 0.

use super::Sm;
use crate::config::StressSpec;
use crate::ctx::Ctx;
use crate::msg::{DataId, Event, L1Req, Level, Requester};
use crate::pool::MAX_LINE;
use crate::rng::SplitMix64;

/// Seeded timing stress of the workload's warps (`stress.issue_stall*`, `stress.load_delay*`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WarpStress {
    issue_stall: u32,
    issue_stall_percent: u32,
    load_delay: u32,
    load_delay_percent: u32,
}

impl WarpStress {
    /// The config's bounds with the run's chances (`build::RunStress`: each at most its key).
    pub fn new(s: &StressSpec, issue_stall_percent: u32, load_delay_percent: u32) -> WarpStress {
        debug_assert!(issue_stall_percent <= s.issue_stall_percent);
        debug_assert!(load_delay_percent <= s.load_delay_percent);
        WarpStress {
            issue_stall: s.issue_stall,
            issue_stall_percent,
            load_delay: s.load_delay,
            load_delay_percent,
        }
    }

    /// Core cycles a warp stalls after issuing an instruction (0: none).
    #[inline]
    pub fn issue_stall(&self, rng: &mut SplitMix64) -> u64 {
        draw(self.issue_stall_percent, self.issue_stall, rng)
    }

    /// Core cycles a global load is held before it is sent to the L1 (0: none).
    #[inline]
    pub fn load_hold(&self, rng: &mut SplitMix64) -> u64 {
        draw(self.load_delay_percent, self.load_delay, rng)
    }
}

/// With `percent` % chance, 1..=`max` (validated: `max` ≥ 1 when `percent` > 0); else 0. Draws
/// nothing when `percent` is 0.
#[inline]
fn draw(percent: u32, max: u32, rng: &mut SplitMix64) -> u64 {
    if percent == 0 || rng.below(100) >= percent as u64 {
        return 0;
    }
    1 + rng.upto(max - 1) as u64
}

pub struct StressWarps {
    /// Per stress warp: waiting for a load's data.
    busy: Vec<bool>,
    base: u64,
    lines: u64,
    line_bytes: u64,
    /// A `Stress` event is scheduled.
    pub scheduled: bool,
}

/// The next access of an idle stress warp.
pub enum StressAccess {
    Load { warp: u32, line: u64 },
    Store { warp: u32, line: u64 },
}

impl StressWarps {
    pub fn new(warps: u32, base: u64, bytes: u64, line_bytes: u32) -> StressWarps {
        StressWarps {
            busy: vec![false; warps as usize],
            base,
            lines: (bytes / line_bytes as u64).max(1),
            line_bytes: line_bytes as u64,
            scheduled: false,
        }
    }

    /// The accesses the idle warps issue now (loads mark their warp busy).
    pub fn issue(&mut self, rng: &mut SplitMix64) -> Vec<StressAccess> {
        let mut out = Vec::new();
        for (w, busy) in self.busy.iter_mut().enumerate() {
            if *busy {
                continue;
            }
            let line = self.base + rng.below(self.lines) * self.line_bytes;
            if rng.below(2) == 0 {
                *busy = true;
                out.push(StressAccess::Load {
                    warp: w as u32,
                    line,
                });
            } else {
                out.push(StressAccess::Store {
                    warp: w as u32,
                    line,
                });
            }
        }
        out
    }

    /// A stress load's data arrived.
    pub fn done(&mut self, warp: u32) {
        if let Some(b) = self.busy.get_mut(warp as usize) {
            *b = false;
        }
    }
}

impl Sm {
    /// The stress warps issue what they can and sleep once no workload warp is resident.
    pub fn stress_tick(&mut self, ctx: &mut Ctx) {
        let resident = self.used_warps > 0;
        let Some(st) = self.stress.as_mut() else {
            return;
        };
        st.scheduled = false;
        if !resident {
            return;
        }
        for a in st.issue(ctx.rng) {
            let req = match a {
                StressAccess::Load { warp, line } => L1Req::Load {
                    who: Requester::Stress { warp },
                    line,
                    mask: 0xF,
                    level: Level::Sm,
                },
                StressAccess::Store { warp, line } => L1Req::Store {
                    who: Requester::Stress { warp },
                    line,
                    mask: 0xF,
                    data: DataId(ctx.lines.alloc([0u8; MAX_LINE])),
                    level: Level::L2,
                    seq: self.lsu.frontier.number(),
                },
            };
            self.lsu.send_stress(ctx, req);
        }
        let gap = 1 + ctx.rng.upto(7) as u64;
        self.wake_stress(ctx, gap);
    }

    /// Schedules the stress warps' next tick `cycles` core cycles from the next edge.
    pub(super) fn wake_stress(&mut self, ctx: &mut Ctx, cycles: u64) {
        if let Some(st) = self.stress.as_mut() {
            if !st.scheduled {
                st.scheduled = true;
                let t = self.clock.edge_at_or_after(ctx.now()) + self.clock.cycles(cycles);
                ctx.q.at(t, Event::Stress(self.id));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{StressAccess, StressWarps, WarpStress};
    use crate::config::StressSpec;
    use crate::rng::SplitMix64;

    fn spec(issue_stall: u32, issue_pct: u32, load_delay: u32, load_pct: u32) -> StressSpec {
        StressSpec {
            issue_stall,
            issue_stall_percent: issue_pct,
            load_delay,
            load_delay_percent: load_pct,
            ..StressSpec::default()
        }
    }

    #[test]
    fn a_zero_chance_draws_nothing_and_stalls_nothing() {
        let s = WarpStress::new(&spec(5, 50, 9, 50), 0, 0);
        let mut rng = SplitMix64::new(7);
        let before = rng.clone().next_u64();
        for _ in 0..100 {
            assert_eq!(s.issue_stall(&mut rng), 0);
            assert_eq!(s.load_hold(&mut rng), 0);
        }
        assert_eq!(rng.next_u64(), before, "a 0 % chance consumed randomness");
    }

    #[test]
    fn draws_stay_within_their_bounds_and_a_full_chance_always_stalls() {
        let s = WarpStress::new(&spec(5, 100, 3, 100), 100, 100);
        let mut rng = SplitMix64::new(1);
        let (mut stalls, mut holds) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            stalls.push(s.issue_stall(&mut rng));
            holds.push(s.load_hold(&mut rng));
        }
        assert!(stalls.iter().all(|&c| (1..=5).contains(&c)), "{stalls:?}");
        assert!(holds.iter().all(|&c| (1..=3).contains(&c)), "{holds:?}");
        for c in 1..=5 {
            assert!(stalls.contains(&c), "stall {c} never drawn");
        }
        for c in 1..=3 {
            assert!(holds.contains(&c), "hold {c} never drawn");
        }
        // A partial chance stalls some instructions and not others.
        let half = WarpStress::new(&spec(4, 50, 1, 0), 50, 0);
        let n = (0..2000).filter(|_| half.issue_stall(&mut rng) > 0).count();
        assert!((800..1200).contains(&n), "{n} of 2000 stalled at 50 %");
    }

    #[test]
    fn stress_warps_touch_only_their_region_and_a_loading_warp_waits_for_its_data() {
        // 4 warps over 8 lines of 128 bytes from 0x10000.
        let mut st = StressWarps::new(4, 0x10000, 8 * 128, 128);
        let mut rng = SplitMix64::new(3);
        let mut busy = [false; 4];
        let mut seen_load = false;
        for _ in 0..50 {
            let out = st.issue(&mut rng);
            let issued: Vec<u32> = out
                .iter()
                .map(|a| match *a {
                    StressAccess::Load { warp, line } | StressAccess::Store { warp, line } => {
                        assert!(
                            (0x10000..0x10000 + 8 * 128).contains(&line) && line % 128 == 0,
                            "line {line:#x} outside the region"
                        );
                        warp
                    }
                })
                .collect();
            // Exactly the warps not waiting for a load issue, once each.
            let idle: Vec<u32> = (0..4).filter(|&w| !busy[w as usize]).collect();
            assert_eq!(issued, idle);
            for a in &out {
                if let StressAccess::Load { warp, .. } = *a {
                    busy[warp as usize] = true;
                    seen_load = true;
                }
            }
            // Warp 0's and warp 2's loads complete; the others stay busy.
            for w in [0u32, 2] {
                st.done(w);
                busy[w as usize] = false;
            }
        }
        assert!(seen_load);
        // An unknown warp's completion is ignored.
        st.done(99);
    }
}
