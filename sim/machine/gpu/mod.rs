//! A run: the machine from the builder (`build.rs`) in its simulation domains, the window-synchronous
//! parallel event loop with its watchdog, and the collection of statistics and results.
//!
//! Parallel discrete-event simulation, conservative and window-synchronous: the machine is split into
//! fixed domains (`domain.rs`: one per SM with its L1, one per memory partition) that talk only over
//! the crossbar, whose minimum transit is the lookahead `W` (`XbarSpec::min_transit`). Each window
//! `[T, T + W)` — `T` the earliest pending event, so empty stretches of time are skipped — every
//! domain with events in it runs them independently (in parallel with `RunOptions::threads` > 1,
//! one after another otherwise: the same algorithm, so the results are identical by construction;
//! `gpu/team.rs` says how the threads share a pass).
//! At the barrier:
//! - the messages the domains sent are delivered into their receivers in one deterministic order
//!   (destination, arrival time, sending domain, order sent), the receiving port deciding its own
//!   contention (`xbar.rs`); before that, the far messages cross the inter-partition link in
//!   (arrival, sending domain, order sent) order when it has a bandwidth (`far_link.rs`); then the
//!   credits the slices gave back (`l2.input_depth`) enter their SMs' queues in (partition, order
//!   given) order;
//! - what the SMs reported (finished groups, exits, errors) is applied in (time, SM) order: the
//!   dispatcher (`dispatch.rs`) frees room and places waiting groups, which start one lookahead
//!   after the report; the earliest error ends the run;
//! - the watchdog checks progress.
//!
//! Each domain draws from its own seeded random stream (`build.rs`).
//!
//! Watchdog: the run stops with a diagnosis when `watchdog.max_cycles` is reached, when the machine's
//! state has only repeated itself for `watchdog.no_progress_cycles` (`watchdog.rs` defines progress:
//! spinning warps re-reading unchanged values, a deadlock or livelock), or when no event is left while
//! warps are still live (a barrier that can never complete). It looks at whole windows. With
//! `RunOptions::stuck_ok` (litmus launches) a run the watchdog stops ends without an error instead,
//! its live threads listed as unfinished and why (`Unfinished`): a litmus iteration whose loop never
//! ends has no final state, like one deadlocked at a barrier.

mod diagnose;
mod passes;
mod team;
mod trace_blocks;

use super::api::*;
use super::build;
use super::checks;
use super::collect;
use super::dispatch::Dispatcher;
use super::domain::{PartDomain, SmDomain};
use super::far_link::{Direction, FarLink};
use super::interval::Sampler;
use super::memory::GlobalMemory;
use super::msg::Event;
use super::outbox::Outgoing;
use super::races::RaceDetector;
use super::sm::{Launch, Program, TraceLaunch};
use super::timeline::{Recorder, TimelineOptions};
use super::watchdog::{self, Watchdog};
use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::ir::Reg;
use crate::stats::Stats;
use crate::trace::{Trace, TraceCommand};
use crate::workload::{Geometry, ParamValue, Workload};
use passes::{side_by_side, Listing};
use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
pub use trace_blocks::READ_AHEAD_PER_SM;

/// The assembled machine.
struct Gpu<'c> {
    cfg: &'c GpuConfig,
    clock: Clock,
    /// The lookahead: no crossbar message arrives sooner after it was sent.
    window: Time,
    sms: Vec<SmDomain>,
    parts: Vec<PartDomain>,
    slices_per_part: u16,
    /// The inter-partition link, when it has a bandwidth (`l2.far_bytes_per_cycle`).
    link: Option<FarLink>,
    /// The running launch (its program, geometry and captures).
    launch: Arc<Launch>,
    dispatcher: Dispatcher,
    /// Groups placed so far (an event the watchdog counts).
    placed: u64,
    /// The time of the last event simulated.
    now: Time,
    captured: HashMap<u64, Vec<(usize, Reg)>>,
    capture_out: Vec<u64>,
    /// Threads for the domains of a window and for reading a trace ahead; `None`: one after another
    /// on this thread.
    pool: Option<rayon::ThreadPool>,
    /// The event loop runs inside `pool` (taken out of `pool` meanwhile), on one of its threads.
    parallel: bool,
    /// While the event loop runs inside `pool`: the loop's thread and helpers on as many of the
    /// pool's other threads as the machine has cores, kept at hand as a team for the windows'
    /// passes (`team.rs`), so that no pass pays for waking a thread.
    team: Option<Arc<team::Team>>,
    /// A streamed trace's thread blocks being read ahead on the pool or the reader, in dispatch
    /// order.
    ahead: VecDeque<(u64, trace_blocks::BlockRead)>,
    /// Without a pool: the thread reading a streamed trace ahead (`trace_blocks.rs`), if any.
    reader: Option<rayon::ThreadPool>,
    /// `RunOptions::races`: the detector the SMs' race events feed.
    races: Option<RaceDetector>,
    /// `RunOptions::timeline`: the options and the barrier's recorder (counters); each domain
    /// records its own spans (`timeline/`).
    timeline: Option<(TimelineOptions, Recorder)>,
    /// `RunOptions::stats_interval`.
    intervals: Option<Sampler>,
    /// `RunOptions::stuck_ok`, and the threads left unfinished when it ended a run, and why.
    stuck_ok: bool,
    unfinished: Vec<u64>,
    unfinished_why: Option<Unfinished>,
    /// `RunOptions::progress`.
    progress: Option<ProgressHook>,
    /// The window's crossbar messages at the barrier: every domain's outbox (SMs, then
    /// partitions), swapped in and out so that each keeps its capacity.
    mail: Vec<Vec<Outgoing>>,
}

/// Whether a work-group of `threads` work-items and `local_bytes` of local memory fits one empty SM;
/// the error names `location`.
fn check_fits(
    cfg: &GpuConfig,
    threads: u32,
    local_bytes: u32,
    location: &str,
) -> Result<(), SimError> {
    let warps = threads.div_ceil(cfg.sm.warp_size);
    if threads == 0 {
        return Err(SimError::Unsupported {
            location: location.to_string(),
            message: "the launch has no work-items".into(),
        });
    }
    if threads > cfg.sm.max_threads
        || warps > cfg.sm.max_warps
        || local_bytes > cfg.sm.max_shared_bytes
    {
        return Err(SimError::Unsupported {
            location: location.to_string(),
            message: format!(
                "a work-group of {threads} work-items ({warps} warps, {local_bytes} bytes of local memory) does \
                 not fit one SM (sm.max_threads = {}, sm.max_warps = {}, sm.max_shared_bytes = {})",
                cfg.sm.max_threads, cfg.sm.max_warps, cfg.sm.max_shared_bytes
            ),
        });
    }
    Ok(())
}

/// Configs from files are validated when loaded; one built or changed in code is checked here, so
/// that the parts never see a value they cannot handle.
fn validate(cfg: &GpuConfig) -> Result<(), SimError> {
    crate::config::validate::validate(cfg).map_err(|v| SimError::Unsupported {
        location: format!("config \"{}\"", cfg.name),
        message: format!("{} = {}: {}", v.key, v.value, v.allowed),
    })
}

/// Runs `wl` on the GPU described by `cfg`.
pub fn run(cfg: &GpuConfig, wl: &Workload, opts: &RunOptions) -> Result<RunResult, SimError> {
    validate(cfg)?;
    let prepared = super::prepare::prepare(cfg, wl)?;
    let wl: &Workload = &prepared;
    let geo = wl.geometry;
    let gt = geo.group_threads();
    let k = &wl.kernel;
    let whole = format!("{}:1:1", k.file);
    if geo.num_groups() == 0 {
        return Err(SimError::Unsupported {
            location: whole,
            message: "the launch has no work-items".into(),
        });
    }
    check_fits(cfg, gt, k.local_bytes, &whole)?;
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
    if let Some(p) = &opts.group_sm {
        if let Some(bad) = p.iter().find(|&&s| s >= cfg.sm.count) {
            return Err(SimError::Unsupported {
                location: whole,
                message: format!("placement names SM {bad}, the config has {}", cfg.sm.count),
            });
        }
    }
    let launch = Arc::new(Launch {
        program: Program::Kernel {
            kernel: k.clone(),
            params,
        },
        geo,
        capture_groups: opts.capture.iter().map(|&(t, _)| t / gt as u64).collect(),
        races: opts.races,
    });
    let mut g = Gpu::new(cfg, mem, launch, opts)?;
    g.run_launch()?;
    let stats = g.collect_stats();
    g.finish(stats, Some(wl), opts)
}

/// Replays every kernel of an Accel-Sim trace in order on the GPU described by `cfg` (timing only:
/// the trace has no values). Caches keep their contents from one kernel to the next, except that
/// each launch starts with empty L1s (as a kernel launch invalidates them) and the lines a
/// `MemcpyHtoD` wrote leave every cache (the copy went to DRAM; its own duration is not simulated).
pub fn run_trace(cfg: &GpuConfig, trace: &Trace, opts: &RunOptions) -> Result<RunResult, SimError> {
    validate(cfg)?;
    let list = trace.list.display().to_string();
    if cfg.sm.warp_size != 32 {
        return Err(SimError::Unsupported {
            location: list,
            message: format!(
                "Accel-Sim traces record 32-lane warps; this config has sm.warp_size = {}",
                cfg.sm.warp_size
            ),
        });
    }
    let mut launches = Vec::new();
    for c in &trace.commands {
        let TraceCommand::Kernel(k) = c else {
            continue;
        };
        let file = k.file.display().to_string();
        check_fits(cfg, k.block_threads(), k.shmem, &file)?;
        let geo = Geometry {
            groups: k.grid,
            group_size: k.block,
        };
        launches.push(Arc::new(Launch {
            program: Program::Trace {
                kernel: TraceLaunch::new(k.clone()),
            },
            geo,
            capture_groups: Default::default(),
            races: false,
        }));
    }
    let Some(first) = launches.first() else {
        return Err(SimError::Unsupported {
            location: list,
            message: "the trace names no kernel".into(),
        });
    };
    let mut g = Gpu::new(cfg, GlobalMemory::timing_only(), first.clone(), opts)?;
    let mut per_kernel: Vec<(String, u64, u64, u64)> = Vec::new();
    let mut next = launches.iter();
    for c in &trace.commands {
        match c {
            TraceCommand::MemcpyHtoD { addr, bytes, .. } => g.memcpy_to_device(*addr, *bytes),
            TraceCommand::Kernel(k) => {
                let launch = next.next().expect("one launch per kernel");
                let start = g.now;
                let before = g.instructions();
                g.set_launch(launch);
                g.run_launch()?;
                let after = g.instructions();
                let cycles = g.clock.cycle_of(g.now - start);
                per_kernel.push((
                    format!("trace.kernel{}", k.id),
                    cycles,
                    after.0 - before.0,
                    after.1 - before.1,
                ));
            }
        }
    }
    let mut stats = g.collect_stats();
    stats.push("kernel", "timing_only", 1.0, "flag");
    stats.push("kernel", "launches", per_kernel.len() as f64, "kernels");
    for (loc, cycles, warp, thread) in per_kernel {
        stats.push(&loc, "cycles", cycles as f64, "cycles");
        stats.push(&loc, "warp_instructions", warp as f64, "instructions");
        stats.push(&loc, "thread_instructions", thread as f64, "instructions");
    }
    for k in trace.kernels() {
        for (op, n) in &k.unknown_opcodes() {
            stats.push(
                format!("trace.kernel{}.unknown_opcode", k.id),
                op,
                *n as f64,
                "instructions",
            );
        }
    }
    g.finish(stats, None, opts)
}

fn internal(loc: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Unsupported {
        location: loc.to_string(),
        message: format!("internal error: {e}"),
    }
}

impl<'c> Gpu<'c> {
    /// The machine from the builder (`build.rs`), with the run's dispatcher, captures and threads.
    fn new(
        cfg: &'c GpuConfig,
        mem: GlobalMemory,
        launch: Arc<Launch>,
        opts: &RunOptions,
    ) -> Result<Gpu<'c>, SimError> {
        let gt = launch.geo.group_threads();
        // The workload's buffers, for a run that starts with them in the L2 (`RunOptions::warm_l2`).
        let warm: Vec<(u64, u64)> = (mem.placed.iter())
            .filter(|p| opts.warm_l2 && p.name != crate::memory::SCRATCH)
            .map(|p| (p.base, p.bytes))
            .collect();
        let mut captured: HashMap<u64, Vec<(usize, Reg)>> = HashMap::new();
        for (i, &(t, r)) in opts.capture.iter().enumerate() {
            captured.entry(t).or_default().push((i, r));
        }
        let pool = match opts.threads {
            0 | 1 => None,
            n => Some(
                crate::host::pool(n)
                    .build()
                    .map_err(|e| SimError::Unsupported {
                        location: "--threads".into(),
                        message: format!("cannot start {n} threads: {e}"),
                    })?,
            ),
        };
        // A streamed trace's first blocks are decoded on the reader thread meanwhile.
        let reader = trace_blocks::reader_for(&launch, opts.threads);
        let ahead = (reader.as_ref())
            .map(|r| trace_blocks::first_reads(r, &launch, cfg.sm.count as usize))
            .unwrap_or_default();
        // With threads, the domains are built side by side on them (the host's first touch of
        // their memory is most of the time).
        let mut m = match &pool {
            Some(p) => p.install(|| build::build(cfg, mem, &launch, opts.seed, true)),
            None => build::build(cfg, mem, &launch, opts.seed, false),
        };
        if !warm.is_empty() {
            build::warm_l2(cfg, &mut m, &warm);
        }
        if opts.provenance {
            for d in &mut m.sms {
                d.prov = Some(Box::default());
            }
            for p in &mut m.parts {
                p.prov = Some(Box::default());
            }
        }
        let clock = Clock::from_mhz(cfg.clocks.core_mhz);
        if let Some(t) = &opts.timeline {
            for d in &mut m.sms {
                d.rec = Some(Box::new(Recorder::new(t, d.sm.id, clock.period)));
            }
            for d in &mut m.parts {
                d.rec = Some(Box::new(Recorder::new(t, 0, clock.period)));
            }
        }
        Ok(Gpu {
            cfg,
            clock: Clock::from_mhz(cfg.clocks.core_mhz),
            window: m.window,
            sms: m.sms,
            parts: m.parts,
            slices_per_part: m.slices_per_part,
            link: (cfg.l2.far_latency > 0 && cfg.l2.far_bytes_per_cycle > 0).then(|| {
                FarLink::new(
                    build::xbar(cfg),
                    Clock::from_mhz(cfg.clocks.l2_mhz),
                    cfg.l2.far_bytes_per_cycle,
                    cfg.sm.count as usize,
                    cfg.l2.slices as usize,
                    m.slices_per_part as usize,
                )
            }),
            launch,
            dispatcher: Dispatcher::new(&cfg.sm, opts.group_sm.clone()),
            placed: 0,
            now: 0,
            captured,
            capture_out: vec![0; opts.capture.len()],
            pool,
            parallel: false,
            team: None,
            mail: Vec::new(),
            races: opts.races.then(|| RaceDetector::new(gt, cfg.sm.warp_size)),
            timeline: opts
                .timeline
                .as_ref()
                .map(|t| (t.clone(), Recorder::new(t, 0, clock.period))),
            intervals: opts
                .stats_interval
                .map(|n| Sampler::new(n, clock, cfg.l2.line_bytes)),
            stuck_ok: opts.stuck_ok,
            unfinished: Vec::new(),
            unfinished_why: None,
            ahead,
            reader,
            progress: opts.progress.clone(),
        })
    }

    /// Makes `launch` the next kernel: its program on every SM, and empty L1s, as a kernel launch
    /// invalidates them. Called between kernels, when every part is idle.
    fn set_launch(&mut self, launch: &Arc<Launch>) {
        self.launch = launch.clone();
        for d in &mut self.sms {
            d.sm.set_launch(launch);
            d.l1.invalidate_all();
        }
    }

    /// A host-to-device copy of `[addr, addr + bytes)` happened: those lines are in DRAM only.
    fn memcpy_to_device(&mut self, addr: u64, bytes: u64) {
        let end = addr.saturating_add(bytes);
        for d in &mut self.sms {
            d.l1.drop_range(addr, end);
        }
        for p in &mut self.parts {
            for s in &mut p.slices {
                s.drop_range(addr, end);
            }
        }
    }

    /// Warp and thread instructions issued so far.
    fn instructions(&self) -> (u64, u64) {
        self.sms.iter().fold((0, 0), |(w, t), d| {
            (w + d.sm.stats.warp_insts, t + d.sm.stats.thread_insts)
        })
    }

    /// The events that can happen only finitely often (for the watchdog): groups placed, and what the
    /// SMs counted (lanes exited, traced instructions issued).
    fn events(&self) -> u64 {
        self.placed + self.sms.iter().map(|d| d.progress).sum::<u64>()
    }

    /// The digest of global memory's values (`watchdog.rs`), over every partition's shard.
    fn memory_digest(&self) -> u64 {
        self.parts.iter().fold(0, |d, p| d ^ p.mem.digest)
    }

    /// Places what fits; the groups start at `at`. A traced group's thread block is read now (a
    /// streamed trace's bad input is an error here, naming its file and line).
    fn place(&mut self, at: Time) -> Result<(), SimError> {
        let trace = match &self.launch.program {
            Program::Trace { kernel } => Some(kernel.trace.clone()),
            Program::Kernel { .. } => None,
        };
        if let Some(k) = &trace {
            self.read_ahead(k);
        }
        for (s, group) in self.dispatcher.dispatch() {
            self.placed += 1;
            if let Some(k) = &trace {
                let b = self.trace_block(k, group)?;
                self.sms[s].sm.stage_trace_block(group, b);
            }
            self.sms[s]
                .q
                .schedule(at, Event::Launch(s as u16, group))
                .map_err(|e| internal("dispatcher", e))?;
        }
        if let Some(k) = &trace {
            self.read_ahead(k);
        }
        Ok(())
    }

    /// Dispatches every work-group of the current launch and runs until all have finished and the
    /// memory system has drained.
    fn run_launch(&mut self) -> Result<(), SimError> {
        let geo = self.launch.geo;
        let threads = geo.group_threads();
        let warps = threads.div_ceil(self.cfg.sm.warp_size);
        let local = self.launch.program.local_bytes();
        self.dispatcher
            .start(geo.num_groups(), threads, warps, local);
        for d in &mut self.sms {
            d.group_threads = threads;
            d.group_warps = warps;
        }
        self.place(self.now)?;
        match self.pool.take() {
            Some(pool) => {
                // Spinning helpers beyond the cores would take turns with the loop's thread: the
                // team is at most as large as the machine (the pool's other threads only read ahead).
                let threads = pool.current_num_threads().min(crate::host::cores());
                self.parallel = true;
                let r = team::with_team(&pool, threads, |crew| {
                    self.team = Some(crew.clone());
                    let r = self.event_loop();
                    self.team = None;
                    r
                });
                self.parallel = false;
                self.pool = Some(pool);
                r
            }
            None => self.event_loop(),
        }
    }

    /// The earliest pending event of any domain.
    fn next_time(&self) -> Option<Time> {
        let s = self.sms.iter().filter_map(|d| d.next()).min();
        let p = self.parts.iter().filter_map(|d| d.next()).min();
        s.into_iter().chain(p).min()
    }

    /// Every domain runs its events before `end`.
    fn run_window(&mut self, end: Time) {
        let due = |t: Option<Time>| t.is_some_and(|t| t < end);
        let res: Result<(), std::convert::Infallible> = self.each_domain(
            |d| due(d.next()),
            |d| due(d.next()),
            |w| {
                w.run_until(end);
                Ok(())
            },
        );
        let Ok(()) = res;
    }

    /// Delivers the crossbar messages of the window into their receivers (see the module header):
    /// every outbox is taken out into `mail`, the far messages cross the link (`far_link.rs`, each
    /// direction on its own), and each message is listed in its destination's inbox (the requests
    /// and the responses on their own); then every destination receives its messages in (arrival,
    /// sending domain, order sent) order, the destinations independently, as each port's contention
    /// depends only on its own messages. Each step in parallel with a team.
    fn deliver(&mut self, end: Time) -> Result<(), SimError> {
        let nsm = self.sms.len();
        let spp = self.slices_per_part;
        let mut mail = std::mem::take(&mut self.mail);
        mail.resize_with(nsm + self.parts.len(), Vec::new);
        self.swap_outboxes(&mut mail);
        if let Some(link) = self.link.as_mut() {
            let (shape, dirs) = link.directions();
            side_by_side(self.team.as_deref(), dirs, &|d: &mut Direction| {
                d.cross_window(shape, &mail, nsm, end)
            });
            link.apply(&mut mail);
        }
        {
            // SMs send requests to slices, partitions responses to SMs: two independent lists.
            let (requests, responses) = mail.split_at_mut(nsm);
            let mut lists = [
                Listing::Requests(requests, &mut self.parts),
                Listing::Responses(responses, &mut self.sms),
            ];
            side_by_side(self.team.as_deref(), &mut lists, &|l: &mut Listing| {
                l.list(nsm, spp)
            });
        }
        let res = self
            .each_domain(
                |d| !d.inbox.is_empty(),
                |d| !d.inbox.is_empty(),
                |w| w.receive_mail(&mail, end),
            )
            .map_err(|e| internal("crossbar", e));
        // The credits the slices gave back (`l2.input_depth`) into their SMs' queues, in
        // (partition, order given) order: at least a lookahead after they were given, so after the
        // window's end.
        let res = res.and_then(|()| {
            for p in &mut self.parts {
                for (at, sm, slice) in p.out.credits.drain(..) {
                    self.sms[sm as usize]
                        .q
                        .schedule(at, Event::L2Credit(sm, slice))
                        .map_err(|e| internal("crossbar credits", e))?;
                }
            }
            Ok(())
        });
        // The outboxes go back empty, with their capacity.
        mail.iter_mut().for_each(Vec::clear);
        self.swap_outboxes(&mut mail);
        self.mail = mail;
        res
    }

    /// Exchanges every domain's outbox (SMs, then partitions) with `mail`'s.
    fn swap_outboxes(&mut self, mail: &mut [Vec<Outgoing>]) {
        let outs = (self.sms.iter_mut().map(|d| &mut d.out.sent))
            .chain(self.parts.iter_mut().map(|d| &mut d.out.sent));
        for (m, out) in mail.iter_mut().zip(outs) {
            std::mem::swap(m, out);
        }
    }

    /// Applies what the SMs reported in the window, in (time, SM) order.
    fn reports(&mut self) -> Result<(), SimError> {
        let mut notes: Vec<(Time, usize, super::sm::SmNotices)> = Vec::new();
        for (s, d) in self.sms.iter_mut().enumerate() {
            notes.extend(d.notices.drain(..).map(|(t, n)| (t, s, n)));
        }
        notes.sort_by_key(|n| (n.0, n.1));
        let gt = self.launch.geo.group_threads() as u64;
        let ws = self.cfg.sm.warp_size as usize;
        for (t, s, mut n) in notes {
            // Race events in (time, SM) order: within a window no SM can see another's accesses
            // (they are at least a lookahead apart), so this order respects every happens-before.
            if let Some(d) = self.races.as_mut() {
                for ev in n.races.drain(..) {
                    d.apply(ev);
                }
                if let Some(why) = d.over_budget() {
                    return Err(SimError::Unsupported {
                        location: "--races".into(),
                        message: format!(
                            "race detection stopped at cycle {}: {why}. Vector clocks grow with the threads \
                             that synchronise with each other, quadratically when many of the {} work-groups \
                             synchronise through one location; run without --races, or with fewer work-groups",
                            self.clock.cycle_of(t),
                            self.dispatcher.total
                        ),
                    });
                }
            }
            if let Some(f) = n.error {
                return Err(SimError::Runtime {
                    location: self.launch.program.where_is(f.pc),
                    message: f.message,
                    thread: f.thread,
                    group: f.group,
                });
            }
            for (group, first, regs) in n.exits {
                for lane in 0..ws {
                    let th = group * gt + first as u64 + lane as u64;
                    if let Some(reqs) = self.captured.get(&th) {
                        for &(i, r) in reqs {
                            self.capture_out[i] = regs[r as usize * ws + lane];
                        }
                    }
                }
            }
            for _ in &n.groups_done {
                self.dispatcher.finished(s);
            }
            if !n.groups_done.is_empty() && self.dispatcher.waiting() > 0 {
                self.place(t + self.window)?;
            }
        }
        Ok(())
    }

    fn event_loop(&mut self) -> Result<(), SimError> {
        let wd = &self.cfg.watchdog;
        let limit = self.clock.cycles(wd.max_cycles);
        let every = self
            .clock
            .cycles(wd.no_progress_cycles.div_ceil(watchdog::WINDOW as u64));
        let mut dog = Watchdog::new(every, self.now, &self.sms);
        let mut told = u64::MAX;
        while let Some(start) = self.next_time() {
            let end = start + self.window;
            if let Some(s) = self.intervals.as_mut() {
                s.before(start, &self.sms, &self.parts);
            }
            self.run_window(end);
            self.now = self.now.max(
                self.sms
                    .iter()
                    .map(|d| d.q.now())
                    .chain(self.parts.iter().map(|p| p.q.now()))
                    .max()
                    .unwrap_or(0),
            );
            self.deliver(end)?;
            self.reports()?;
            if self.timeline.is_some() {
                self.sample_counters(end);
            }
            if let Some(p) = &self.progress {
                if self.dispatcher.done != told {
                    told = self.dispatcher.done;
                    p.0.update(told, self.dispatcher.total);
                }
            }
            let stuck = dog
                .due(start)
                .then(|| dog.check(start, self.events(), self.memory_digest(), &self.sms))
                .flatten();
            if let Some(stuck) = stuck {
                if self.stuck_at_barriers() || self.stop_live() {
                    return Ok(());
                }
                let c = |t| self.clock.cycle_of(t);
                return Err(SimError::NoProgress {
                    cycle: c(start),
                    window: c(start - stuck.since),
                    diagnosis: format!(
                        "  the state repeats: since cycle {}, {} samples (one every {} cycles) found every warp's \
                         registers, lane masks, last address and PC (unless it loops), local and global memory in \
                         states seen before, and every warp's memory operations settled since\n{}",
                        c(stuck.since),
                        stuck.samples,
                        c(every),
                        self.diagnose()
                    ),
                });
            }
            if start > limit {
                if self.stop_live() {
                    return Ok(());
                }
                return Err(SimError::MaxCycles {
                    cycle: self.clock.cycle_of(start),
                    limit: wd.max_cycles,
                    diagnosis: self.diagnose(),
                });
            }
        }
        let (done, total) = (self.dispatcher.done, self.dispatcher.total);
        if done < total {
            if self.stuck_at_barriers() {
                return Ok(());
            }
            return Err(SimError::NoProgress {
                cycle: self.clock.cycle_of(self.now),
                window: 0,
                diagnosis: format!(
                    "every part is idle but {} of {total} work-groups have not finished (a barrier that not all \
                     work-items reach, or groups that never fit):\n{}",
                    total - done,
                    self.diagnose()
                ),
            });
        }
        Ok(())
    }

    /// The timeline's counters at the barrier at `t`.
    fn sample_counters(&mut self, t: Time) {
        let Some((_, rec)) = self.timeline.as_mut() else {
            return;
        };
        use super::timeline::Counter;
        let mut outstanding = 0;
        for d in &self.sms {
            rec.sample(
                Counter::StoreBuffer { sm: d.sm.id },
                t,
                d.sm.lsu.sb.entries.len() as f64,
            );
            outstanding += d.rec.as_ref().map_or(0, |r| r.outstanding());
        }
        rec.sample(Counter::Outstanding, t, outstanding as f64);
        for p in &self.parts {
            for (i, s) in p.slices.iter().enumerate() {
                let slice = p.first + i as u16;
                rec.sample(
                    Counter::AtomicQueue { slice },
                    t,
                    s.atomic.depth_at(t) as f64,
                );
            }
        }
    }

    /// Cycles from the first launch to the end of the run.
    fn cycles(&self) -> u64 {
        self.clock.cycle_of(self.clock.edge_at_or_after(self.now))
    }

    fn collect_stats(&mut self) -> Stats {
        let cycles = self.cycles();
        collect::collect(
            self.cfg,
            self.now,
            cycles,
            self.dispatcher.total,
            &mut self.sms,
            &self.parts,
            self.link.as_ref(),
        )
    }

    /// The result: `stats`, and for a kernel workload its final buffers, checks and reports.
    fn finish(
        mut self,
        stats: Stats,
        wl: Option<&Workload>,
        opts: &RunOptions,
    ) -> Result<RunResult, SimError> {
        let cycles = self.cycles();
        let provenance = opts.provenance.then(|| {
            let mut all: Vec<_> = self
                .sms
                .iter()
                .filter_map(|d| d.prov.as_ref())
                .chain(self.parts.iter().filter_map(|p| p.prov.as_ref()))
                .flat_map(|p| p.events.iter().cloned())
                .collect();
            all.sort_by_key(|e| e.0);
            all
        });
        let intervals = self.intervals.take().map(|mut s| {
            s.finish(cycles, &self.sms, &self.parts);
            s.out
        });
        let timeline = self.timeline.take().map(|(t, central)| {
            let now = self.now;
            let mut recs = Vec::new();
            let sm_recs = self.sms.iter_mut().map(|d| &mut d.rec);
            for d in sm_recs.chain(self.parts.iter_mut().map(|d| &mut d.rec)) {
                if let Some(mut r) = d.take() {
                    r.close_all(now);
                    recs.push(*r);
                }
            }
            let sms = self.sms.len() as u16;
            super::timeline::merge(recs, central, &t, self.clock.period, sms)
        });
        let shards: Vec<GlobalMemory> = self.parts.into_iter().map(|p| p.mem).collect();
        let mem = GlobalMemory::join(&shards);
        let buffers: Vec<Vec<u64>> = wl
            .map(|wl| {
                wl.buffers
                    .iter()
                    .enumerate()
                    .map(|(i, b)| mem.buffer_values(b, i))
                    .collect()
            })
            .unwrap_or_default();
        let (checks, reports) = match wl {
            Some(wl) if !opts.skip_checks => checks::evaluate(wl, &buffers),
            _ => (Vec::new(), Vec::new()),
        };
        let time_ns = cycles as f64 * 1000.0 / self.cfg.clocks.core_mhz as f64;
        Ok(RunResult {
            cycles,
            time_ns,
            stats,
            checks,
            reports,
            races: match (&self.races, wl) {
                (Some(d), Some(wl)) => d.reports(&wl.kernel),
                _ => Vec::new(),
            },
            captured: self.capture_out,
            buffers,
            provenance,
            timeline,
            intervals,
            unfinished: self.unfinished,
            unfinished_why: self.unfinished_why,
        })
    }
}
