//! DRAM under the contract. A request is a line access (read or write-back) at a seeded time over a
//! footprint that both reuses open rows and conflicts in banks; its answer is the time its data has
//! moved. The shadow: no access completes sooner than a row hit on an idle channel (CAS, the burst,
//! the controller), and every access is counted once as a row hit or a row miss. Backpressure: a
//! channel queue of one makes requests wait. Flush: after the channels have been idle, a row hit costs
//! exactly its minimum — no old traffic is left in a queue or on a bus.

use super::{check, line_addr, Part, Round, Traffic};
use crate::config::GpuConfig;
use crate::dram::Dram;
use crate::engine::{Clock, Time};
use crate::rng::SplitMix64;
use crate::tests::tiny;

struct DramPart;

impl Part for DramPart {
    const NAME: &'static str = "DRAM";

    fn round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round {
        let mut spec = cfg.dram.clone();
        spec.queue_depth = if traffic.tight { 1 } else { 16 };
        let c = Clock::from_mhz(cfg.clocks.dram_mhz);
        let mut d = Dram::partition(&spec, c, cfg.l2.line_bytes, 1);
        let line = cfg.l2.line_bytes as u64;
        let hit = spec.t_cas as u64
            + line.div_ceil(spec.bytes_per_cycle as u64)
            + spec.controller_latency as u64;
        let mut rng = SplitMix64::new(seed);
        let mut round = Round::default();
        let mut now: Time = 0;
        let mut last = line_addr(0);
        for i in 0..traffic.requests {
            let idle_gap = traffic.flush && i > 0 && rng.below(30) == 0;
            now += if idle_gap {
                c.cycles(1_000_000)
            } else {
                c.cycles(rng.below(4))
            };
            // After an idle gap, the line just accessed again: a row hit on an idle channel.
            let addr = if idle_gap {
                last
            } else {
                line_addr(rng.below(64) * if rng.below(4) == 0 { 4099 } else { 1 })
            };
            let done = d.access(now, addr, rng.below(4) == 0);
            round.answers.push(1);
            let earliest = c.edge_at_or_after(now) + c.cycles(hit);
            if done < earliest {
                round
                    .wrong
                    .push(format!("access {i} done at {done}, before {earliest}"));
            }
            if idle_gap && done != earliest {
                round.wrong.push(format!(
                    "access {i}: a row hit after the channels were idle took until {done}, not {earliest}"
                ));
            }
            last = addr;
        }
        if d.row_hits + d.row_misses != traffic.requests as u64
            || d.reads + d.writes != traffic.requests as u64
        {
            round
                .wrong
                .push("an access was counted other than once".into());
        }
        round.waited = d.queue_ps;
        // Idle: long after, the last line again is a plain row hit.
        let later = now + c.cycles(10_000_000);
        round.idle = d.access(later, last, false) == c.edge_at_or_after(later) + c.cycles(hit);
        round
    }
}

#[test]
fn dram_meets_the_contract() {
    check::<DramPart>(&tiny());
}
