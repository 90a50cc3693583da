//! The builder that wires a GPU from a config, the work-group dispatcher, the event loop with its
//! watchdog, and the collection of statistics and results.
//!
//! Dispatch: work-groups in linear order onto SMs round-robin, each when the SM has room for its
//! threads, warps, local memory and a group slot (occupancy limits); an explicit placement
//! (`RunOptions::group_sm`) pins groups to SMs. A group that cannot fit even an empty SM is an error
//! before the run.
//!
//! Watchdog: the run stops with a diagnosis when `watchdog.max_cycles` is reached, or when for
//! `watchdog.no_progress_cycles` no memory value changed, no lane exited, no barrier released and no
//! group was dispatched (spinning warps re-read unchanged values: a deadlock or livelock), or when no
//! event is left while warps are still live (a barrier that can never complete).

use super::api::*;
use super::checks;
use super::dram::Dram;
use super::l1::L1;
use super::l2::L2Slice;
use super::memory::{GlobalMemory, GLOBAL_BASE};
use super::msg::*;
use super::sm::{Sm, SmParams};
use super::xbar::Xbar;
use crate::config::GpuConfig;
use crate::engine::{Clock, EventQueue, Time};
use crate::ir::Reg;
use crate::rng::SplitMix64;
use crate::stats::Stats;
use crate::workload::{ParamValue, Workload};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// The assembled machine.
struct Gpu<'c> {
    cfg: &'c GpuConfig,
    clock: Clock,
    q: EventQueue<Event>,
    lines: Pool<LineBuf>,
    batches: Pool<AtomicBatch>,
    mem: GlobalMemory,
    xbar: Xbar,
    rng: SplitMix64,
    sms: Vec<Sm>,
    l1s: Vec<L1>,
    slices: Vec<L2Slice>,
    dram: Dram,
    pending: VecDeque<u64>,
    placement: Option<Vec<u32>>,
    next_sm: usize,
    group_threads: u32,
    group_warps: u32,
    local_bytes: u32,
    groups_done: u64,
    progress: u64,
    captured: HashMap<u64, Vec<(usize, Reg)>>,
    capture_out: Vec<u64>,
}

macro_rules! ctx {
    ($g:expr) => {
        Ctx {
            q: &mut $g.q,
            lines: &mut $g.lines,
            batches: &mut $g.batches,
            mem: &mut $g.mem,
            xbar: &mut $g.xbar,
            rng: &mut $g.rng,
        }
    };
}
/// The contract tests build the same context around a single part.
#[cfg(test)]
pub(super) use ctx;

/// Runs `wl` on the GPU described by `cfg`.
pub fn run(cfg: &GpuConfig, wl: &Workload, opts: &RunOptions) -> Result<RunResult, SimError> {
    // Configs from files are validated when loaded; one built or changed in code is checked here, so
    // that the parts never see a value they cannot handle.
    if let Err(v) = crate::config::validate::validate(cfg) {
        return Err(SimError::Unsupported {
            location: format!("config \"{}\"", cfg.name),
            message: format!("{} = {}: {}", v.key, v.value, v.allowed),
        });
    }
    let prepared = super::prepare::prepare(cfg, wl)?;
    let wl: &Workload = &prepared;
    let geo = wl.geometry;
    let gt = geo.group_threads();
    let ws = cfg.sm.warp_size;
    let gw = gt.div_ceil(ws);
    let k = &wl.kernel;
    let whole = format!("{}:1:1", k.file);
    if gt == 0 || geo.num_groups() == 0 {
        return Err(SimError::Unsupported {
            location: whole,
            message: "the launch has no work-items".into(),
        });
    }
    if gt > cfg.sm.max_threads || gw > cfg.sm.max_warps || k.local_bytes > cfg.sm.max_shared_bytes {
        return Err(SimError::Unsupported {
            location: whole,
            message: format!(
                "a work-group of {gt} work-items ({gw} warps, {} bytes of local memory) does not fit one SM \
                 (sm.max_threads = {}, sm.max_warps = {}, sm.max_shared_bytes = {})",
                k.local_bytes, cfg.sm.max_threads, cfg.sm.max_warps, cfg.sm.max_shared_bytes
            ),
        });
    }
    // The stress warps' scratch region: twice the L1, so that their traffic also evicts lines.
    let scratch = if cfg.stress.stress_warps > 0 {
        2 * cfg.l1.size_bytes as u64
    } else {
        0
    };
    let mem = GlobalMemory::new(&wl.buffers, scratch);
    let mut params: Vec<(Reg, u64)> = Vec::new();
    for p in &wl.params {
        let v = match &p.value {
            ParamValue::Scalar(v) => *v,
            ParamValue::BufferAddr(b) => mem.base_of(b).ok_or_else(|| SimError::Unsupported {
                location: whole.clone(),
                message: format!("parameter {} names unknown buffer {b}", p.name),
            })?,
        };
        params.push((p.reg, v));
    }
    let mut captured: HashMap<u64, Vec<(usize, Reg)>> = HashMap::new();
    for (i, &(t, r)) in opts.capture.iter().enumerate() {
        captured.entry(t).or_default().push((i, r));
    }
    let capture_groups: HashSet<u64> = opts.capture.iter().map(|&(t, _)| t / gt as u64).collect();
    let sp = SmParams {
        params: Arc::new(params),
        kernel: Arc::new(k.clone()),
        geo,
        capture_groups: Arc::new(capture_groups),
        scratch: (scratch > 0).then(|| (mem.base_of("<scratch>").unwrap_or(GLOBAL_BASE), scratch)),
    };
    let mut g = Gpu {
        cfg,
        clock: Clock::from_mhz(cfg.clocks.core_mhz),
        q: EventQueue::new(),
        lines: Pool::default(),
        batches: Pool::default(),
        mem,
        xbar: Xbar::new(cfg),
        rng: SplitMix64::stream(opts.seed, 0x6770_7573),
        sms: (0..cfg.sm.count)
            .map(|i| Sm::new(i as u16, cfg, &sp))
            .collect(),
        l1s: (0..cfg.sm.count).map(|i| L1::new(i as u16, cfg)).collect(),
        slices: (0..cfg.l2.slices)
            .map(|i| L2Slice::new(i as u16, cfg))
            .collect(),
        dram: Dram::new(cfg),
        pending: (0..geo.num_groups()).collect(),
        placement: opts.group_sm.clone(),
        next_sm: 0,
        group_threads: gt,
        group_warps: gw,
        local_bytes: k.local_bytes,
        groups_done: 0,
        progress: 0,
        captured,
        capture_out: vec![0; opts.capture.len()],
    };
    if let Some(p) = &g.placement {
        if let Some(bad) = p.iter().find(|&&s| s >= cfg.sm.count) {
            return Err(SimError::Unsupported {
                location: whole,
                message: format!("placement names SM {bad}, the config has {}", cfg.sm.count),
            });
        }
    }
    if cfg.stress.prewarm_l1 {
        g.prewarm();
    }
    g.q.schedule(0, Event::Dispatch)
        .map_err(|e| internal(&whole, e))?;
    g.event_loop(wl)?;
    g.finish(wl, opts)
}

fn internal(loc: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Unsupported {
        location: loc.to_string(),
        message: format!("internal error: {e}"),
    }
}

impl Gpu<'_> {
    /// `stress.prewarm_l1`: each L1 starts holding the initial values of the workload's lines, in a
    /// seeded order of its own, so that (when the buffers exceed the L1) every SM keeps a different
    /// random subset: some later reads hit stale lines, others miss and see fresh values. The stress
    /// warps' scratch region is not pre-warmed (it would push the workload's lines out).
    fn prewarm(&mut self) {
        let lb = self.cfg.l1.line_bytes as u64;
        let mut lines: Vec<u64> = Vec::new();
        for p in self.mem.placed.iter().filter(|p| p.name != "<scratch>") {
            let mut line = p.base & !(lb - 1);
            while line < p.base + p.bytes {
                lines.push(line);
                line += lb;
            }
        }
        for l1 in &mut self.l1s {
            for i in (1..lines.len()).rev() {
                let j = self.rng.below(i as u64 + 1) as usize;
                lines.swap(i, j);
            }
            for &line in &lines {
                let mut buf = [0u8; MAX_LINE];
                self.mem.read_line(line, lb as u32, &mut buf);
                l1.prewarm(line, &buf);
            }
        }
    }

    fn dispatch(&mut self) {
        let cfg = self.cfg;
        let shared = self.local_bytes;
        let n = self.sms.len();
        let mut i = 0;
        while i < self.pending.len() {
            let group = self.pending[i];
            let target = match &self.placement {
                Some(p) if (group as usize) < p.len() => {
                    let s = p[group as usize] as usize;
                    self.sms[s]
                        .fits(self.group_threads, self.group_warps, shared, cfg)
                        .then_some(s)
                }
                _ => (0..n)
                    .map(|k| (self.next_sm + k) % n)
                    .find(|&s| self.sms[s].fits(self.group_threads, self.group_warps, shared, cfg)),
            };
            match target {
                Some(s) => {
                    self.pending.remove(i);
                    if self.placement.is_none() {
                        self.next_sm = (s + 1) % n;
                    }
                    let skew = cfg.stress.start_skew;
                    let now = self.q.now();
                    let mut skews: Vec<u64> = (0..self.group_warps)
                        .map(|_| self.rng.upto(skew) as u64)
                        .collect();
                    skews.reverse();
                    let mut ctx = ctx!(self);
                    self.sms[s].launch(
                        group,
                        self.group_threads,
                        now,
                        || skews.pop().unwrap_or(0),
                        &mut ctx,
                    );
                    self.progress += 1;
                }
                None if self.placement.is_none() => break,
                None => i += 1,
            }
        }
    }

    fn event_loop(&mut self, wl: &Workload) -> Result<(), SimError> {
        let wd = &self.cfg.watchdog;
        let window = self.clock.cycles(wd.no_progress_cycles);
        let limit = self.clock.cycles(wd.max_cycles);
        let mut last_progress: (u64, Time) = (0, 0);
        let total = wl.geometry.num_groups();
        while let Some((now, ev)) = self.q.pop() {
            match ev {
                Event::SmTick(s) => {
                    let mut ctx = ctx!(self);
                    self.sms[s as usize].tick(&mut ctx);
                    self.after_sm(s as usize, wl)?;
                }
                Event::SmIn(s, r) => {
                    let mut ctx = ctx!(self);
                    self.sms[s as usize].receive(r, &mut ctx);
                    self.after_sm(s as usize, wl)?;
                }
                Event::SbDrain(s) => {
                    let mut ctx = ctx!(self);
                    self.sms[s as usize].drain(&mut ctx);
                }
                Event::L1In(s, r) => {
                    let mut ctx = ctx!(self);
                    self.l1s[s as usize].receive(r, &mut ctx);
                }
                Event::L1Retry(s) => {
                    let mut ctx = ctx!(self);
                    self.l1s[s as usize].retry(&mut ctx);
                }
                Event::L1FromXbar(s, r) => {
                    let mut ctx = ctx!(self);
                    self.l1s[s as usize].from_xbar(r, &mut ctx);
                }
                Event::SliceIn(i, r) => {
                    let mut ctx = ctx!(self);
                    self.slices[i as usize].receive(r, &mut ctx);
                }
                Event::SliceTick(i) => {
                    let mut ctx = ctx!(self);
                    self.slices[i as usize].tick(&mut ctx, &mut self.dram);
                }
                Event::DramFill(i, line) => {
                    let mut ctx = ctx!(self);
                    self.slices[i as usize].fill(line, &mut ctx, &mut self.dram);
                }
                Event::Dispatch => self.dispatch(),
                Event::Stress(s) => {
                    let mut ctx = ctx!(self);
                    self.sms[s as usize].stress_tick(&mut ctx);
                }
            }
            let p = self.progress + self.mem.changes;
            if p != last_progress.0 {
                last_progress = (p, now);
            } else if now - last_progress.1 > window {
                return Err(SimError::NoProgress {
                    cycle: self.clock.cycle_of(now),
                    window: wd.no_progress_cycles,
                    diagnosis: self.diagnose(wl),
                });
            }
            if now > limit {
                return Err(SimError::MaxCycles {
                    cycle: self.clock.cycle_of(now),
                    limit: wd.max_cycles,
                    diagnosis: self.diagnose(wl),
                });
            }
        }
        if self.groups_done < total {
            return Err(SimError::NoProgress {
                cycle: self.clock.cycle_of(self.q.now()),
                window: 0,
                diagnosis: format!(
                    "every part is idle but {} of {total} work-groups have not finished (a barrier that not all \
                     work-items reach, or groups that never fit):\n{}",
                    total - self.groups_done,
                    self.diagnose(wl)
                ),
            });
        }
        Ok(())
    }

    fn after_sm(&mut self, s: usize, wl: &Workload) -> Result<(), SimError> {
        let n = std::mem::take(&mut self.sms[s].notices);
        self.progress += n.progress;
        if let Some((pc, msg, thread, group)) = n.error {
            return Err(SimError::Runtime {
                location: wl.kernel.where_is(pc),
                message: msg,
                thread,
                group,
            });
        }
        let gt = self.group_threads as u64;
        let ws = self.cfg.sm.warp_size as usize;
        for (group, first, regs) in n.exits {
            for lane in 0..ws {
                let t = group * gt + first as u64 + lane as u64;
                if let Some(reqs) = self.captured.get(&t) {
                    for &(i, r) in reqs {
                        self.capture_out[i] = regs[r as usize * ws + lane];
                    }
                }
            }
        }
        self.groups_done += n.groups_done.len() as u64;
        if (!n.groups_done.is_empty() || n.slots_freed) && !self.pending.is_empty() {
            self.q.after(0, Event::Dispatch);
        }
        Ok(())
    }

    /// The live warps: first those not waiting at a barrier (spinning, or stalled on memory), each
    /// with its PC, instruction and the last address it accessed; then the barrier waiters counted
    /// per barrier; then the groups that never became resident.
    fn diagnose(&self, wl: &Workload) -> String {
        const SHOWN: usize = 24;
        let mut out = String::new();
        let mut shown = 0;
        let mut hidden = 0;
        let mut at_barrier: Vec<(u32, u64)> = Vec::new();
        for sm in &self.sms {
            for (group, warp, pc, waiting, addr) in sm.stuck() {
                if waiting == super::sm::BARRIER_WAIT {
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
                    wl.kernel.where_is(pc as usize),
                    wl.kernel.disassemble(pc as usize)
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
                wl.kernel.where_is(pc as usize),
                wl.kernel.disassemble(pc as usize)
            ));
        }
        let pending = self.pending.len();
        if pending > 0 {
            out.push_str(&format!(
                "  {pending} work-groups are waiting for an SM: they cannot become resident while the resident ones wait \
                 for them (more groups than the GPU holds at once)\n"
            ));
        }
        out
    }

    fn buffer_name(&self, a: u64) -> String {
        for p in &self.mem.placed {
            if a >= p.base && a < p.base + p.bytes {
                return format!(" ({}[{}])", p.name, (a - p.base) / p.elem_bytes as u64);
            }
        }
        String::new()
    }

    fn finish(mut self, wl: &Workload, opts: &RunOptions) -> Result<RunResult, SimError> {
        let now = self.q.now();
        let cycles = self.clock.cycle_of(self.clock.edge_at_or_after(now));
        let stats = self.collect_stats(cycles, wl);
        let buffers: Vec<Vec<u64>> = wl
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| self.mem.buffer_values(b, i))
            .collect();
        let (checks, reports) = if opts.skip_checks {
            (Vec::new(), Vec::new())
        } else {
            checks::evaluate(wl, &buffers)
        };
        let time_ns = cycles as f64 * 1000.0 / self.cfg.clocks.core_mhz as f64;
        Ok(RunResult {
            cycles,
            time_ns,
            stats,
            checks,
            reports,
            races: Vec::new(),
            captured: self.capture_out,
            buffers,
        })
    }

    fn collect_stats(&mut self, cycles: u64, wl: &Workload) -> Stats {
        let mut s = Stats::default();
        let now = self.q.now();
        let cyc = |ps: Time, c: Clock| ps as f64 / c.period as f64;
        let core = self.clock;
        let l2c = Clock::from_mhz(self.cfg.clocks.l2_mhz);
        let dc = Clock::from_mhz(self.cfg.clocks.dram_mhz);
        s.push("kernel", "cycles", cycles as f64, "cycles");
        s.push(
            "kernel",
            "time",
            cycles as f64 * 1000.0 / self.cfg.clocks.core_mhz as f64,
            "ns",
        );
        s.push(
            "kernel",
            "work_groups",
            wl.geometry.num_groups() as f64,
            "groups",
        );
        s.push("kernel", "events", self.q.delivered() as f64, "events");
        let (mut wi, mut ti, mut mi) = (0u64, 0u64, 0u64);
        let (mut fence, mut sbfull, mut sbocc, mut sbmax, mut fwd) =
            (0u64, 0u64, 0u128, 0usize, 0u64);
        let (mut l1_loads, mut l1_hits, mut l1_inv, mut l1_bypass) = (0u64, 0u64, 0u64, 0u64);
        let (mut sh_acc, mut sh_conf) = (0u64, 0u64);
        for (sm, l1) in self.sms.iter_mut().zip(&self.l1s) {
            sm.sb.finish(now);
            let loc = format!("sm{}", sm.id);
            let st = &sm.stats;
            s.push(
                &loc,
                "warp_instructions",
                st.warp_insts as f64,
                "instructions",
            );
            s.push(
                &loc,
                "issue_active",
                st.issue_cycles as f64 / cycles.max(1) as f64,
                "fraction",
            );
            s.push(
                format!("{loc}.l1"),
                "loads",
                l1.stats.loads as f64,
                "requests",
            );
            s.push(
                format!("{loc}.l1"),
                "hits",
                l1.stats.load_hits as f64,
                "requests",
            );
            wi += st.warp_insts;
            ti += st.thread_insts;
            mi += st.mem_insts;
            fence += st.fence_stall_ps;
            sbfull += st.sb_full_stall_ps;
            fwd += st.forwarded_loads;
            sbocc += sm.sb.occupancy_ps;
            sbmax = sbmax.max(sm.sb.max_occupancy);
            sh_acc += st.shared_accesses;
            sh_conf += st.bank_conflict_cycles;
            l1_loads += l1.stats.loads;
            l1_hits += l1.stats.load_hits;
            l1_inv += l1.stats.invalidations;
            l1_bypass += l1.stats.bypass_loads;
        }
        let gpu = "gpu";
        s.push(gpu, "warp_instructions", wi as f64, "instructions");
        s.push(gpu, "thread_instructions", ti as f64, "instructions");
        s.push(gpu, "memory_instructions", mi as f64, "instructions");
        s.push(
            gpu,
            "ipc",
            wi as f64 / cycles.max(1) as f64,
            "warp instructions/cycle",
        );
        s.push("sm", "fence_stall", cyc(fence, core), "cycles");
        s.push("sm", "shared_accesses", sh_acc as f64, "accesses");
        s.push("sm", "bank_conflict", sh_conf as f64, "cycles");
        s.push(
            "store_buffer",
            "store_buffer_full_stall",
            cyc(sbfull, core),
            "cycles",
        );
        s.push(
            "store_buffer",
            "mean_occupancy",
            sbocc as f64 / now.max(1) as f64 / self.sms.len() as f64,
            "entries per SM",
        );
        s.push("store_buffer", "max_occupancy", sbmax as f64, "entries");
        s.push("store_buffer", "forwarded_loads", fwd as f64, "requests");
        s.push(
            "store_buffer",
            "drained",
            self.sms.iter().map(|m| m.sb.drained).sum::<u64>() as f64,
            "entries",
        );
        s.push("l1", "loads", l1_loads as f64, "requests");
        s.push(
            "l1",
            "hit_rate",
            if l1_loads > 0 {
                l1_hits as f64 / l1_loads as f64
            } else {
                0.0
            },
            "fraction",
        );
        s.push("l1", "bypass_loads", l1_bypass as f64, "requests");
        s.push("l1", "invalidations", l1_inv as f64, "events");
        let l1a: u64 = self.l1s.iter().map(|l| l.atomic.stats.ops).sum();
        s.push("atomics.sm", "l1_ops", l1a as f64, "operations");
        let sha: u64 = self.sms.iter().map(|m| m.shared_atomic.stats.ops).sum();
        s.push("atomics.sm", "shared_ops", sha as f64, "operations");
        let (mut r, mut w, mut a, mut h, mut m, mut wb) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut aops, mut alanes, mut abusy, mut aq, mut aser) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for sl in &self.slices {
            r += sl.stats.reads;
            w += sl.stats.writes;
            a += sl.stats.atomics;
            h += sl.stats.hits;
            m += sl.stats.misses;
            wb += sl.stats.writebacks;
            aops += sl.atomic.stats.ops;
            alanes += sl.atomic.stats.lane_ops;
            abusy += sl.atomic.stats.busy_ps;
            aq += sl.atomic.stats.queue_ps;
            aser += sl.atomic.stats.serial_ps;
        }
        for (i, sl) in self.slices.iter().enumerate() {
            let loc = format!("l2.slice{i}");
            s.push(
                &loc,
                "requests",
                (sl.stats.reads + sl.stats.writes + sl.stats.atomics) as f64,
                "requests",
            );
            s.push(&loc, "atomic_ops", sl.atomic.stats.ops as f64, "operations");
        }
        s.push("l2", "reads", r as f64, "requests");
        s.push("l2", "writes", w as f64, "requests");
        s.push("l2", "atomics", a as f64, "requests");
        s.push(
            "l2",
            "hit_rate",
            if h + m > 0 {
                h as f64 / (h + m) as f64
            } else {
                0.0
            },
            "fraction",
        );
        s.push("l2", "misses", m as f64, "requests");
        s.push("l2", "writebacks", wb as f64, "lines");
        let nsl = self.slices.len().max(1) as f64;
        s.push("atomics.l2", "operations", aops as f64, "operations");
        s.push("atomics.l2", "lane_operations", alanes as f64, "operations");
        s.push(
            "atomics.l2",
            "utilisation",
            cyc(abusy, l2c) / (cyc(now, l2c).max(1.0) * nsl),
            "fraction",
        );
        s.push(
            "atomics.l2",
            "mean_queue_delay",
            if aops > 0 {
                cyc(aq, l2c) / a.max(1) as f64
            } else {
                0.0
            },
            "L2 cycles",
        );
        s.push(
            "atomics.l2",
            "same_address_wait",
            cyc(aser, l2c),
            "L2 cycles",
        );
        let x = self.xbar.stats();
        s.push("interconnect", "request_bytes", x.req_bytes as f64, "bytes");
        s.push(
            "interconnect",
            "response_bytes",
            x.resp_bytes as f64,
            "bytes",
        );
        s.push(
            "interconnect",
            "messages",
            (x.req_messages + x.resp_messages) as f64,
            "messages",
        );
        s.push(
            "interconnect",
            "backpressure",
            cyc(x.backpressure_ps, l2c),
            "L2 cycles",
        );
        let lb = self.dram.line_bytes() as f64;
        s.push("dram", "reads", self.dram.reads as f64, "lines");
        s.push("dram", "writes", self.dram.writes as f64, "lines");
        s.push("dram", "row_hits", self.dram.row_hits as f64, "accesses");
        s.push(
            "dram",
            "row_misses",
            self.dram.row_misses as f64,
            "accesses",
        );
        let bytes = (self.dram.reads + self.dram.writes) as f64 * lb;
        s.push("dram", "bytes", bytes, "bytes");
        s.push(
            "dram",
            "bandwidth",
            if now > 0 {
                bytes / (now as f64 / 1000.0)
            } else {
                0.0
            },
            "GB/s",
        );
        let busy: Time = self.dram.busy_ps.iter().sum();
        s.push(
            "dram",
            "bus_utilisation",
            cyc(busy, dc) / (cyc(now, dc).max(1.0) * self.dram.busy_ps.len().max(1) as f64),
            "fraction",
        );
        s
    }
}
