//! The store buffer under the contract. A request is a store that opens an entry (a store that
//! coalesces into a pending entry travels with it); its answer is the entry draining. The shadow
//! applies every store in each warp's program order: the memory the drained entries leave behind must
//! equal it (each warp owns its lines, so per-line order alone defines it). Backpressure: a buffer of
//! two entries refuses stores until one drains. Flush: every entry drains at once, after which the
//! buffer forwards nothing (a later load reads memory, never a stale buffered value).

use super::{apply, check, line_addr, random_line, word_mask, Part, Round, Traffic};
use crate::config::{DrainOrder, GpuConfig, SbPlacement, StoreBufferSpec};
use crate::pool::{LineBuf, MAX_LINE};
use crate::rng::SplitMix64;
use crate::store_buffer::{Forward, StoreBuffer};
use crate::tests::tiny;
use std::collections::HashMap;

struct StoreBufferPart;

impl Part for StoreBufferPart {
    const NAME: &'static str = "store buffer";

    fn round(_cfg: &GpuConfig, seed: u64, traffic: Traffic) -> Round {
        let placement = [SbPlacement::PerSm, SbPlacement::PerWarp][seed as usize % 2];
        let order = [DrainOrder::Fifo, DrainOrder::PerAddress][(seed as usize / 2) % 2];
        let mut sb = StoreBuffer::new(&StoreBufferSpec {
            entries: if traffic.tight { 2 } else { 64 },
            placement,
            drain_order: order,
            drain_delay: 0,
        });
        let mut rng = SplitMix64::new(seed);
        let mut round = Round::default();
        // Open entries, oldest first, as (warp, line, request index); what memory must become.
        let mut open: Vec<(u16, u64, usize)> = Vec::new();
        let mut want: HashMap<u64, LineBuf> = HashMap::new();
        let mut mem: HashMap<u64, LineBuf> = HashMap::new();
        let mut t = 0;
        let mut stores = 0;
        while stores < traffic.requests {
            t += 1;
            let warp = rng.below(4) as u16;
            // Each warp owns its lines, so the final memory is defined by per-line order alone.
            let line = line_addr(warp as u64 * 8 + rng.below(3));
            if traffic.flush && rng.below(40) == 0 {
                while drain(&mut sb, t, &mut rng, &mut round, &mut open, &mut mem) {}
                for &(w, l, _) in &open {
                    round
                        .wrong
                        .push(format!("warp {w} line {l:#x} still open after a flush"));
                }
                for w in 0..4 {
                    for l in 0..32 {
                        if !matches!(sb.forward(w, line_addr(l), u128::MAX), Forward::None) {
                            round
                                .wrong
                                .push(format!("forwarding after a flush (warp {w})"));
                        }
                    }
                }
            }
            if rng.below(3) == 0 {
                drain(&mut sb, t, &mut rng, &mut round, &mut open, &mut mem);
                continue;
            }
            if !sb.has_room(warp, [line]) {
                round.waited += 1;
                drain(&mut sb, t, &mut rng, &mut round, &mut open, &mut mem);
                continue;
            }
            let d = random_line(&mut rng);
            let m = word_mask(&mut rng);
            apply(want.entry(line).or_insert([0; MAX_LINE]), &d, m);
            let before = sb.entries.len();
            sb.insert(t, warp, line, m, &d, t, false);
            if sb.entries.len() > before {
                open.push((warp, line, round.answers.len()));
                round.answers.push(0);
            }
            stores += 1;
        }
        while drain(&mut sb, t + 1, &mut rng, &mut round, &mut open, &mut mem) {}
        if mem != want {
            round
                .wrong
                .push("the drained stores left other values than program order".into());
        }
        round.idle = sb.entries.is_empty() && sb.next_ready().is_none();
        round
    }
}

/// Drains one entry ready at `now` into `mem`, answering the request that opened it.
fn drain(
    sb: &mut StoreBuffer,
    now: u64,
    rng: &mut SplitMix64,
    round: &mut Round,
    open: &mut Vec<(u16, u64, usize)>,
    mem: &mut HashMap<u64, LineBuf>,
) -> bool {
    let Some(e) = sb.pop_ready(now, rng) else {
        return false;
    };
    apply(mem.entry(e.line).or_insert([0; MAX_LINE]), &e.data, e.mask);
    // The entry drained is the oldest open one of its warp and line (per-address order keeps one
    // entry per warp and line; FIFO drains a warp's oldest entry).
    match open
        .iter()
        .position(|&(w, l, _)| w == e.warp && l == e.line)
    {
        Some(i) => round.answers[open.remove(i).2] += 1,
        None => round
            .wrong
            .push(format!("an entry nobody stored: {:#x}", e.line)),
    }
    true
}

#[test]
fn store_buffer_meets_the_contract() {
    check::<StoreBufferPart>(&tiny());
}
