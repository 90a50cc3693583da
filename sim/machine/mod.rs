//! The simulated GPU: the parts of DESIGN.md, wired by one builder (`gpu.rs`) from the config.
//!
//! | part | file |
//! |---|---|
//! | SM: warps, schedulers, SIMT, LSU/coalescer, shared memory, ordering rules | `sm.rs` |
//! | scoped store buffer | `store_buffer.rs` |
//! | memory-stress warps | `stress.rs` |
//! | data-race and scope-race detection | `races.rs` |
//! | L1 data cache (+ L1 atomic unit) | `l1.rs` |
//! | tag arrays | `cache.rs` |
//! | interconnect (sending and receiving ports) | `xbar.rs` |
//! | L2 slices and their atomic units | `l2.rs` |
//! | DRAM | `dram.rs` |
//! | coherent values of device memory | `memory.rs` |
//! | messages, payload pools, crossbar outbox | `msg.rs` |
//! | work-group dispatcher | `dispatch.rs` |
//! | simulation domains (an SM with its L1; a memory partition) | `domain.rs` |
//! | builder, window-synchronous parallel event loop, watchdog | `gpu.rs` |
//! | statistics of a run | `collect.rs` |
//! | end-of-run checks | `checks.rs` |
//! | load-time capability check and config-dependent lowering | `prepare.rs` |

pub mod api;
pub mod cache;
pub mod checks;
mod collect;
mod dispatch;
mod domain;
mod dram;
mod gpu;
mod l1;
mod l2;
pub mod memory;
mod msg;
pub mod ordering;
pub mod prepare;
pub mod races;
mod sm;
mod store_buffer;
mod stress;
mod xbar;

pub use api::*;
pub use gpu::{run, run_trace};
#[cfg(test)]
mod contract_tests;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod traffic_tests;
