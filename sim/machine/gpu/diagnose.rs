//! Why a run cannot go on: the no-progress diagnosis (which warps wait on what, barrier waiters per
//! barrier, groups never resident) and, for the litmus runner, the threads left at barriers that can
//! never complete or still running when the watchdog stopped the run.

use super::Gpu;
use crate::Unfinished;

impl Gpu<'_> {
    /// With `stuck_ok`: whether every live warp waits at a barrier (and every group became
    /// resident); if so, records the live threads in `unfinished`.
    pub(super) fn stuck_at_barriers(&mut self) -> bool {
        if !self.stuck_ok || self.dispatcher.waiting() > 0 {
            return false;
        }
        let mut out = Vec::new();
        for d in &self.sms {
            if !d.sm.live_threads(&mut out) {
                return false;
            }
        }
        out.sort_unstable();
        self.unfinished = out;
        self.unfinished_why = Some(Unfinished::AtBarriers);
        true
    }

    /// With `stuck_ok`, when the watchdog stops the run: records every live thread in
    /// `unfinished` (they were still running: a loop that does not end) and says so; without it,
    /// or with groups that never became resident (they would have no threads to list), returns
    /// false and the run ends with the watchdog's error.
    pub(super) fn stop_live(&mut self) -> bool {
        if !self.stuck_ok || self.dispatcher.waiting() > 0 {
            return false;
        }
        let mut out = Vec::new();
        for d in &self.sms {
            d.sm.live_threads(&mut out);
        }
        out.sort_unstable();
        self.unfinished = out;
        self.unfinished_why = Some(Unfinished::Stopped);
        true
    }

    /// The live warps: first those not waiting at a barrier (spinning, or stalled on memory), each
    /// with its PC, instruction and the last address it accessed; then the barrier waiters counted
    /// per barrier; then the groups that never became resident.
    pub(super) fn diagnose(&self) -> String {
        const SHOWN: usize = 24;
        let mut out = String::new();
        let mut shown = 0;
        let mut hidden = 0;
        let mut at_barrier: Vec<(u32, u64)> = Vec::new();
        for sm in self.sms.iter().map(|d| &d.sm) {
            for crate::sm::StuckWarp {
                group,
                warp_in_group: warp,
                pc,
                waiting,
                last_addr: addr,
            } in sm.stuck()
            {
                if waiting == crate::sm::Stall::Barrier {
                    match at_barrier.iter_mut().find(|(p, _)| *p == pc) {
                        Some(e) => e.1 += 1,
                        None => at_barrier.push((pc, 1)),
                    }
                    continue;
                }
                if shown == SHOWN {
                    hidden += 1;
                    continue;
                }
                shown += 1;
                let addr = addr
                    .map(|a| format!("{a:#x}{}", self.buffer_name(a)))
                    .unwrap_or_else(|| "-".into());
                out.push_str(&format!(
                    "  sm{} work-group {group} warp {warp}: pc {pc} at {} `{}`; waiting on: {waiting}; last address {addr}\n",
                    sm.id,
                    self.launch.program.where_is(pc as usize),
                    self.launch.program.describe(pc as usize)
                ));
            }
        }
        if hidden > 0 {
            out.push_str(&format!("  ... and {hidden} more warps like these\n"));
        }
        at_barrier.sort();
        for (pc, n) in at_barrier {
            out.push_str(&format!(
                "  {n} warps wait at the barrier at pc {pc} ({} `{}`)\n",
                self.launch.program.where_is(pc as usize),
                self.launch.program.describe(pc as usize)
            ));
        }
        let pending = self.dispatcher.waiting();
        if pending > 0 {
            out.push_str(&format!(
                "  {pending} work-groups are waiting for an SM: they cannot become resident while the resident ones wait \
                 for them (more groups than the GPU holds at once)\n"
            ));
        }
        out
    }

    fn buffer_name(&self, a: u64) -> String {
        for p in self.sms.first().map(|d| &d.mem.placed[..]).unwrap_or(&[]) {
            if a >= p.base && a < p.base + p.bytes {
                return format!(" ({}[{}])", p.name, (a - p.base) / p.elem_bytes as u64);
            }
        }
        String::new()
    }
}
