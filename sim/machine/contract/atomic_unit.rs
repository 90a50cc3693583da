//! The atomic unit under the contract. A request is a batch (one address, one to eight lanes); its
//! answer is the time its last result is ready. The shadow is the unit's timing rule stated from the
//! outside: a result is never ready before the batch's arrival plus its operations and the unit's
//! latency, and the operations of later batches on one address finish after the earlier ones (one
//! cycle per operation: same-address serialisation). Backpressure: a queue of one makes batches wait.
//! Flush: after the unit has been idle, a batch completes exactly as on a fresh unit.

use super::{check, Part, Round, Traffic};
use crate::atomic::{AtomicBatch, LaneAtomic};
use crate::atomic_unit::AtomicUnit;
use crate::config::GpuConfig;
use crate::engine::{Clock, Time};
use crate::ir::{AtomicOp, RmwOp, Ty};
use crate::rng::SplitMix64;
use crate::tests::tiny;
use std::collections::HashMap;

struct AtomicUnitPart;

/// `lanes` lanes of an add on `addr`.
pub fn batch(addr: u64, lanes: usize) -> AtomicBatch {
    AtomicBatch {
        op: AtomicOp::Rmw(RmwOp::Add),
        ty: Ty::U32,
        lanes: (0..lanes)
            .map(|i| LaneAtomic {
                lane: i as u8,
                addr,
                operand: 1,
                expected: 0,
                result: 0,
            })
            .collect(),
    }
}

impl Part for AtomicUnitPart {
    const NAME: &'static str = "atomic unit";

    fn round(cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round {
        let c = Clock::from_mhz(cfg.clocks.l2_mhz);
        let mut spec = cfg.atomics.l2.clone();
        spec.queue_depth = if traffic.tight { 1 } else { 64 };
        spec.ops_per_cycle = 1 + seed as u32 % 4;
        let combine = seed % 2 == 1;
        let mut unit = AtomicUnit::new(c, &spec, combine);
        let lat = c.cycles(spec.latency as u64);
        let mut rng = SplitMix64::new(seed);
        let mut round = Round::default();
        let mut last_done: HashMap<u64, Time> = HashMap::new();
        let mut now: Time = 0;
        for i in 0..traffic.requests {
            let idle_gap = traffic.flush && rng.below(30) == 0;
            now += if idle_gap {
                c.cycles(100_000)
            } else {
                c.cycles(rng.below(3))
            };
            let addr = 0x100 + 4 * rng.below(6);
            let lanes = 1 + rng.below(8) as usize;
            let ops = if combine { 1 } else { lanes as u64 };
            let done = unit.schedule(now, &batch(addr, lanes));
            round.answers.push(1);
            let earliest = c.edge_at_or_after(now) + c.cycles(ops) - c.period + lat;
            if done < earliest {
                round
                    .wrong
                    .push(format!("batch {i} ready at {done}, before {earliest}"));
            }
            if idle_gap && done != earliest {
                round.wrong.push(format!(
                    "batch {i} after an idle unit ready at {done}, a fresh unit gives {earliest}"
                ));
            }
            if let Some(&prev) = last_done.get(&addr) {
                if done < prev + c.cycles(ops) {
                    round.wrong.push(format!(
                        "batch {i} on {addr:#x} finished {done}, before the earlier one ({prev}) plus its operations"
                    ));
                }
            }
            last_done.insert(addr, done);
        }
        round.waited = unit.stats.queue_ps;
        // Idle: long after the last result, a batch meets no leftover state.
        let later = now + c.cycles(1_000_000);
        round.idle = unit.schedule(later, &batch(0x100, 1)) == c.edge_at_or_after(later) + lat;
        round
    }
}

#[test]
fn atomic_unit_meets_the_contract() {
    check::<AtomicUnitPart>(&tiny());
}
