//! Statistics over time (`--stats-interval N`): the key counters of the run every N core cycles, as
//! tidy rows `cycle,location,metric,value,unit` (the CSV schema of the run's statistics with the
//! interval's end cycle in front).
//!
//! Each row of a counter holds what happened in the interval that ends at `cycle` (the last interval
//! ends with the run), so a counter's rows add up to the run's total of the same name
//! (`gpu.warp_instructions`, `l1.loads`, `l2.reads`, `dram.bytes`, ...). Two rates per interval
//! (`gpu.ipc`, `dram.bandwidth`) and one level at the interval's end (`store_buffer.entries`, summed
//! over the SMs) come with them.
//!
//! The counters are read at the barriers of the parallel loop (`gpu/`): the sample for the
//! boundary at cycle c is taken before the first window that starts at or after c, so it holds every
//! event before c and, at most, the events of one lookahead window after it (a few cycles; the
//! crossbar's minimum transit). Not sampled: per-SM and per-slice rows (the run's statistics have
//! them as totals), latency distributions.

use super::domain::{PartDomain, SmDomain};
use crate::engine::{Clock, Time};
use crate::stats::fmt_num;
use std::fmt::Write as _;

/// (location, metric, unit) of each counter, in output order.
const COUNTERS: [(&str, &str, &str); 15] = [
    ("gpu", "warp_instructions", "instructions"),
    ("gpu", "thread_instructions", "instructions"),
    ("gpu", "memory_instructions", "instructions"),
    ("l1", "loads", "requests"),
    ("l1", "load_hits", "requests"),
    ("l2", "reads", "requests"),
    ("l2", "writes", "requests"),
    ("l2", "atomics", "requests"),
    ("l2", "misses", "requests"),
    ("atomics.l2", "operations", "operations"),
    ("atomics.sm", "shared_ops", "operations"),
    ("atomics.sm", "l1_ops", "operations"),
    ("store_buffer", "drained", "entries"),
    ("interconnect", "messages", "messages"),
    ("dram", "bytes", "bytes"),
];

/// One row.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    pub cycle: u64,
    pub location: &'static str,
    pub metric: &'static str,
    pub value: f64,
    pub unit: &'static str,
}

/// The rows of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Intervals {
    pub every: u64,
    pub rows: Vec<IntervalRow>,
}

impl Intervals {
    /// Tidy CSV with a header line.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("cycle,location,metric,value,unit\n");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},{},{},{}",
                r.cycle,
                r.location,
                r.metric,
                fmt_num(r.value),
                r.unit
            );
        }
        s
    }
}

/// Takes the samples while the run goes.
pub struct Sampler {
    clock: Clock,
    every: u64,
    /// The next boundary, core cycles.
    next: u64,
    /// The cycle of the last sample.
    prev: u64,
    last: [u64; COUNTERS.len()],
    line_bytes: u64,
    pub out: Intervals,
}

impl Sampler {
    /// Every `every` (≥ 1) core cycles of `clock`; DRAM moves lines of `line_bytes`.
    pub fn new(every: u64, clock: Clock, line_bytes: u32) -> Sampler {
        Sampler {
            clock,
            every,
            next: every,
            prev: 0,
            last: [0; COUNTERS.len()],
            line_bytes: line_bytes as u64,
            out: Intervals {
                every,
                rows: Vec::new(),
            },
        }
    }

    /// Nothing happened before `t`, other than what the domains have simulated: the samples of the
    /// boundaries at or before `t`.
    pub fn before(&mut self, t: Time, sms: &[SmDomain], parts: &[PartDomain]) {
        while self.clock.cycles(self.next) <= t {
            let c = self.next;
            self.sample(c, sms, parts);
            self.next += self.every;
        }
    }

    /// The last interval, ending with the run at `cycle`.
    pub fn finish(&mut self, cycle: u64, sms: &[SmDomain], parts: &[PartDomain]) {
        if cycle > self.prev || self.out.rows.is_empty() {
            self.sample(cycle, sms, parts);
        }
    }

    fn sample(&mut self, cycle: u64, sms: &[SmDomain], parts: &[PartDomain]) {
        let now = counters(sms, parts, self.line_bytes);
        let span = cycle.saturating_sub(self.prev);
        for (i, &(location, metric, unit)) in COUNTERS.iter().enumerate() {
            self.out.rows.push(IntervalRow {
                cycle,
                location,
                metric,
                value: (now[i] - self.last[i]) as f64,
                unit,
            });
        }
        let d = |i: usize| (now[i] - self.last[i]) as f64;
        self.out.rows.push(IntervalRow {
            cycle,
            location: "gpu",
            metric: "ipc",
            value: if span > 0 { d(0) / span as f64 } else { 0.0 },
            unit: "warp instructions/cycle",
        });
        let ns = self.clock.cycles(span) as f64 / 1000.0;
        self.out.rows.push(IntervalRow {
            cycle,
            location: "dram",
            metric: "bandwidth",
            value: if ns > 0.0 { d(14) / ns } else { 0.0 },
            unit: "GB/s",
        });
        let entries: usize = sms.iter().map(|d| d.sm.lsu.sb.entries.len()).sum();
        self.out.rows.push(IntervalRow {
            cycle,
            location: "store_buffer",
            metric: "entries",
            value: entries as f64,
            unit: "entries",
        });
        self.last = now;
        self.prev = cycle;
    }
}

/// The cumulative counters, in [`COUNTERS`] order.
fn counters(sms: &[SmDomain], parts: &[PartDomain], line_bytes: u64) -> [u64; COUNTERS.len()] {
    let mut c = [0u64; COUNTERS.len()];
    for d in sms {
        let st = &d.sm.stats;
        c[0] += st.warp_insts;
        c[1] += st.thread_insts;
        c[2] += st.mem_insts;
        c[3] += d.l1.stats.loads;
        c[4] += d.l1.stats.load_hits;
        c[10] += d.sm.shared.atomic.stats.ops;
        c[11] += d.l1.atomic.stats.ops;
        c[12] += d.sm.lsu.sb.drained;
        c[13] += d.l1.port.stats.messages;
    }
    for p in parts {
        for sl in &p.slices {
            c[5] += sl.stats.reads;
            c[6] += sl.stats.writes;
            c[7] += sl.stats.atomics;
            c[8] += sl.stats.misses;
            c[9] += sl.atomic.stats.ops;
            c[13] += sl.port.stats.messages;
        }
        c[14] += (p.dram.reads + p.dram.writes) * line_bytes;
    }
    c
}
