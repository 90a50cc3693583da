//! The simulated GPU: the parts of DESIGN.md, wired by one builder (`build.rs`) from the config, and
//! the ordering core every memory access asks (`ordering/`).
//!
//! | part | file |
//! |---|---|
//! | the memory-ordering rules (DESIGN.md's table, scope rules, deviations) | `ordering/` |
//! | SM: warps, schedulers, SIMT, scoreboard, ALU, coalescer, shared memory, barriers | `sm/` (see `sm/mod.rs`) |
//! | the SM's load/store unit: store buffer drain, ops in flight, write frontier, bounded L1 port | `sm/lsu/` |
//! | scoped store buffer | `store_buffer.rs` |
//! | data-race and scope-race detection, and what it reports | `races/` |
//! | L1 data cache (+ L1 atomic unit) | `l1/` |
//! | tag arrays, address-keyed maps | `cache.rs` |
//! | interconnect (sending and receiving ports) | `xbar.rs` |
//! | credits for a bounded input the sender cannot see (an L1's for each L2 slice's input) | `credit.rs` |
//! | the link between the two L2 partitions, and the near copies of far lines | `far_link.rs`, `near_copy.rs` |
//! | messages crossing between simulation domains | `outbox.rs` |
//! | address-to-slice map | `slice_map.rs` |
//! | L2 slices | `l2.rs` |
//! | atomic units' timing (L2 slice, shared memory, L1) | `atomic_unit.rs` |
//! | what atomics do to values (batches, RMW arithmetic) | `atomic.rs` |
//! | DRAM | `dram.rs` |
//! | coherent values of device memory | `memory.rs` |
//! | messages between parts (messages only) | `msg.rs` |
//! | payload pools (line buffers, atomic batches) | `pool.rs` |
//! | work-group dispatcher | `dispatch.rs` |
//! | simulation domains (an SM with its L1; a memory partition) | `domain.rs` |
//! | a handler's context (the domain's queue, pools, memory, outbox, random source) | `ctx.rs` |
//! | digests of memory contents (for the watchdog) | `digest.rs` |
//! | the builder: each part from its spec and resources | `build.rs` |
//! | window-synchronous parallel event loop, diagnosis | `gpu/` |
//! | the watchdog's notion of progress (machine state that does not repeat) | `watchdog.rs` |
//! | statistics of a run | `collect.rs` |
//! | end-of-run checks | `checks.rs` |
//! | load-time capability check and config-dependent lowering | `prepare.rs` |
//! | what callers give a run and get back | `api.rs` |
//! | access provenance for `litmus --explain` (off unless asked) | `provenance.rs` |
//! | the timeline recorder (`--timeline`) and its Chrome trace file | `timeline/` |
//! | statistics every N cycles (`--stats-interval`) | `interval.rs` |
//!
//! Layout: a unit too big for one file is a folder with `mod.rs` (`sm/`, `l1/`, `gpu/`, ...); no
//! `name.rs` beside a `name/`.
//!
//! Tests: unit tests sit beside each unit; `contract/` holds the contract every memory part passes
//! (drain, flush, backpressure) through one harness; `tests.rs` pins machine behaviour on hand-built
//! IR; `traffic_tests.rs` runs random traffic through the whole hierarchy against a shadow memory.

pub mod api;
mod atomic;
mod atomic_unit;
mod build;
pub mod cache;
pub mod checks;
mod collect;
mod credit;
mod ctx;
mod digest;
mod dispatch;
mod domain;
mod dram;
mod far_link;
mod gpu;
pub mod interval;
mod l1;
mod l2;
pub mod memory;
mod msg;
mod near_copy;
pub mod ordering;
mod outbox;
mod pool;
pub mod prepare;
pub mod provenance;
pub mod races;
mod slice_map;
mod sm;
mod store_buffer;
pub mod timeline;
mod watchdog;
mod xbar;

pub use api::*;
pub use gpu::{run, run_trace, READ_AHEAD_PER_SM};

#[cfg(test)]
mod contract;
#[cfg(test)]
mod preset_latency_tests;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod traffic_tests;

// The lower floors' modules under the names this crate has always used for them (ARCHITECTURE.md, "The
// floors are crates").
pub(crate) use gpumemsim_core::{config, engine, host, ir, progress, rng, stats, trace, workload};
#[cfg(test)]
pub(crate) use gpumemsim_front::kernel;
