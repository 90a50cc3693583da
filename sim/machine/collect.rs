//! Statistics of a run as tidy rows, gathered from every domain's parts at the end (`gpu/`).

use super::domain::{PartDomain, SmDomain};
use super::dram::Dram;
use super::far_link::FarLink;
use super::l2::L2Slice;
use super::xbar::PortStats;
use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::stats::Stats;

/// The rows for a run that ended at `now` (`cycles` core cycles) over `groups` work-groups; `link`:
/// the inter-partition link, when it has a bandwidth.
pub fn collect(
    cfg: &GpuConfig,
    now: Time,
    cycles: u64,
    groups: u64,
    sms: &mut [SmDomain],
    parts: &[PartDomain],
    link: Option<&FarLink>,
) -> Stats {
    let mut s = Stats::default();
    let cyc = |ps: Time, c: Clock| ps as f64 / c.period as f64;
    let core = Clock::from_mhz(cfg.clocks.core_mhz);
    let l2c = Clock::from_mhz(cfg.clocks.l2_mhz);
    let dc = Clock::from_mhz(cfg.clocks.dram_mhz);
    s.push("kernel", "cycles", cycles as f64, "cycles");
    s.push(
        "kernel",
        "time",
        cycles as f64 * 1000.0 / cfg.clocks.core_mhz as f64,
        "ns",
    );
    s.push("kernel", "work_groups", groups as f64, "groups");
    let events: u64 = sms.iter().map(|d| d.q.delivered()).sum::<u64>()
        + parts.iter().map(|d| d.q.delivered()).sum::<u64>();
    s.push("kernel", "events", events as f64, "events");
    let (mut wi, mut ti, mut mi) = (0u64, 0u64, 0u64);
    let (mut fence, mut sbfull, mut sbocc, mut sbmax, mut fwd) = (0u64, 0u64, 0u128, 0usize, 0u64);
    let (mut l1_loads, mut l1_hits, mut l1_inv, mut l1_bypass) = (0u64, 0u64, 0u64, 0u64);
    let (mut sh_acc, mut sh_conf) = (0u64, 0u64);
    for d in sms.iter_mut() {
        let (sm, l1) = (&mut d.sm, &d.l1);
        sm.lsu.sb.finish(now);
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
        sbfull += sm.lsu.stats.sb_full_stall_ps;
        fwd += sm.lsu.stats.forwarded_loads;
        sbocc += sm.lsu.sb.occupancy_ps;
        sbmax = sbmax.max(sm.lsu.sb.max_occupancy);
        sh_acc += sm.shared.stats.accesses;
        sh_conf += sm.shared.stats.conflict_cycles;
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
    // Only with a bounded port (`sm.l1_port_depth` > 0): an unbounded one never stalls.
    if cfg.sm.l1_port_depth > 0 {
        let port: u64 = sms.iter().map(|d| d.sm.lsu.stats.l1_port_stall_ps).sum();
        s.push("sm", "l1_port_stall", cyc(port, core), "cycles");
    }
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
        sbocc as f64 / now.max(1) as f64 / sms.len() as f64,
        "entries per SM",
    );
    s.push("store_buffer", "max_occupancy", sbmax as f64, "entries");
    s.push("store_buffer", "forwarded_loads", fwd as f64, "requests");
    s.push(
        "store_buffer",
        "drained",
        sms.iter().map(|d| d.sm.lsu.sb.drained).sum::<u64>() as f64,
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
    // Only where the config keeps near copies (a split L2 with l2.near_copy_lines > 0).
    if sms.iter().any(|d| d.l1.near.is_some()) {
        let hits: u64 = sms
            .iter()
            .filter_map(|d| d.l1.near.as_ref())
            .map(|n| n.hits)
            .sum();
        s.push("l1", "near_copy_reads", hits as f64, "requests");
    }
    let l1a: u64 = sms.iter().map(|d| d.l1.atomic.stats.ops).sum();
    s.push("atomics.sm", "l1_ops", l1a as f64, "operations");
    let sha: u64 = sms.iter().map(|d| d.sm.shared.atomic.stats.ops).sum();
    s.push("atomics.sm", "shared_ops", sha as f64, "operations");
    let (mut r, mut w, mut a, mut h, mut m, mut wb) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut wa = 0u64;
    let mut rf = 0u64;
    let (mut aops, mut alanes, mut abusy, mut aq, mut aser) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let slices: Vec<&L2Slice> = parts.iter().flat_map(|p| &p.slices).collect();
    for sl in &slices {
        r += sl.stats.reads;
        w += sl.stats.writes;
        a += sl.stats.atomics;
        h += sl.stats.hits;
        m += sl.stats.misses;
        wb += sl.stats.writebacks;
        wa += sl.stats.write_allocs;
        rf += sl.stats.read_fills;
        aops += sl.atomic.stats.ops;
        alanes += sl.atomic.stats.lane_ops;
        abusy += sl.atomic.stats.busy_ps;
        aq += sl.atomic.stats.queue_ps;
        aser += sl.atomic.stats.serial_ps;
    }
    for (i, sl) in slices.iter().enumerate() {
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
    s.push("l2", "write_allocs", wa as f64, "requests");
    // Rows only with write-validate, so that runs without it keep their rows.
    if cfg.l2.write_validate {
        s.push("l2", "read_fills", rf as f64, "requests");
    }
    // Rows only with a bounded input (`l2.input_depth` > 0): an unbounded one never waits.
    if cfg.l2.input_depth > 0 {
        let credits = sms.iter().map(|d| d.l1.credits.stats);
        let waits: u64 = credits.clone().map(|c| c.waits).sum();
        let wait: Time = credits.clone().map(|c| c.wait_ps).sum();
        let in_use = credits.map(|c| c.max_in_use).max().unwrap_or(0);
        let queued = slices
            .iter()
            .map(|sl| sl.stats.input_max)
            .max()
            .unwrap_or(0);
        s.push("l2", "input_credit_waits", waits as f64, "requests");
        s.push("l2", "input_credit_wait", cyc(wait, l2c), "L2 cycles");
        s.push(
            "l2",
            "input_credits_max_in_use",
            in_use as f64,
            "requests per SM and slice",
        );
        s.push("l2", "input_max_queued", queued as f64, "requests");
    }
    let nsl = slices.len().max(1) as f64;
    s.push("atomics.l2", "operations", aops as f64, "operations");
    s.push("atomics.l2", "lane_operations", alanes as f64, "operations");
    s.push(
        "atomics.l2",
        "utilisation",
        cyc(abusy, l2c) / (cyc(now, l2c).max(1.0) * nsl),
        "fraction",
    );
    // The mean over every slice hides a hot one (a histogram with few bins, one contended word):
    // the busiest slice says whether some atomic unit is the bottleneck.
    let busiest = slices
        .iter()
        .map(|sl| sl.atomic.stats.busy_ps)
        .max()
        .unwrap_or(0);
    s.push(
        "atomics.l2",
        "busiest_slice_utilisation",
        cyc(busiest, l2c) / cyc(now, l2c).max(1.0),
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
    let sum = |ports: &mut dyn Iterator<Item = PortStats>| {
        ports.fold(PortStats::default(), |a, p| PortStats {
            messages: a.messages + p.messages,
            bytes: a.bytes + p.bytes,
            backpressure_ps: a.backpressure_ps + p.backpressure_ps,
        })
    };
    let req = sum(&mut sms.iter().map(|d| d.l1.port.stats));
    let resp = sum(&mut slices.iter().map(|sl| sl.port.stats));
    s.push("interconnect", "request_bytes", req.bytes as f64, "bytes");
    s.push("interconnect", "response_bytes", resp.bytes as f64, "bytes");
    s.push(
        "interconnect",
        "messages",
        (req.messages + resp.messages) as f64,
        "messages",
    );
    s.push(
        "interconnect",
        "backpressure",
        cyc(req.backpressure_ps + resp.backpressure_ps, l2c),
        "L2 cycles",
    );
    // The inter-partition link, per direction (rows only when it has a bandwidth, so that runs
    // without one keep their rows).
    let cap = link.map_or(1, |l| l.bytes_per_cycle()) as f64;
    for (dir, st) in link.iter().flat_map(|l| l.stats().into_iter().enumerate()) {
        let loc = format!("interconnect.far_link.from_partition{dir}");
        s.push(&loc, "messages", st.messages as f64, "messages");
        s.push(&loc, "bytes", st.bytes as f64, "bytes");
        s.push(&loc, "wait", cyc(st.wait_ps, l2c), "L2 cycles");
        s.push(
            &loc,
            "mean_wait",
            cyc(st.wait_ps, l2c) / st.messages.max(1) as f64,
            "L2 cycles",
        );
        s.push(
            &loc,
            "utilisation",
            st.bytes as f64 / cap / cyc(now, l2c).max(1.0),
            "fraction",
        );
    }
    let dram = |f: fn(&Dram) -> u64| parts.iter().map(|p| f(&p.dram)).sum::<u64>();
    let lb = cfg.l2.line_bytes as f64;
    let (reads, writes) = (dram(|d| d.reads), dram(|d| d.writes));
    s.push("dram", "reads", reads as f64, "lines");
    s.push("dram", "writes", writes as f64, "lines");
    s.push("dram", "row_hits", dram(|d| d.row_hits) as f64, "accesses");
    s.push(
        "dram",
        "row_misses",
        dram(|d| d.row_misses) as f64,
        "accesses",
    );
    let bytes = (reads + writes) as f64 * lb;
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
    let busy: Time = parts.iter().flat_map(|p| &p.dram.busy_ps).sum();
    s.push(
        "dram",
        "bus_utilisation",
        cyc(busy, dc) / (cyc(now, dc).max(1.0) * cfg.dram.channels.max(1) as f64),
        "fraction",
    );
    s
}
