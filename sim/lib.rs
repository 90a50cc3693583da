//! gpumemsim: a cycle-level GPU memory-system simulator in which values travel through timed hardware.
//!
//! The library holds everything; `main.rs` is a thin CLI over it. It is the top of a workspace of crates
//! (one per floor: core, machine, front, litmus, report, device) and re-exports each under its module
//! name. Map:
//! - [`config`]: the TOML hardware description, validation, presets;
//! - [`ir`]: the instruction IR all front ends lower into; [`workload`]: a launchable kernel;
//! - [`kernel`]: the kernel language front end; [`cfront`]: the CUDA and OpenCL C front ends (and the
//!   OpenCL litmus dialect's thread bodies); [`barrier`]: the work-group barrier rule they share;
//! - [`litmus`]: herd-style litmus tests (PTX and OpenCL dialects), their runner and expectations;
//! - [`engine`]: the deterministic discrete-event core;
//! - [`machine`]: the GPU parts (SM, store buffer, L1, interconnect, L2, atomic units, DRAM) and the
//!   builder that wires them from a config;
//! - [`trace`]: Accel-Sim SASS traces (timing-only replay);
//! - [`stats`]: tidy statistics; [`rng`]: the seeded random source; [`progress`]: progress of long
//!   work on stderr (a bar on a terminal, periodic lines elsewhere);
//! - [`runner`]: `gpumemsim run` (config + workload → run → summary, JSON, CSV);
//! - [`bench`]: `gpumemsim bench` (simulation speed on a fixed workload set).
//! - [`report`]: charts (PNG, SVG) and HTML reports; [`sweep`]: parameter sweeps over runs;
//! - [`text`]: reading input files as text (non-UTF-8 bytes named by line and column); [`fuzz`]: every
//!   reader of user input fed arbitrary bytes (cargo-fuzz targets and the CI smoke test);
//! - [`host`]: a hook the host program runs on the library's pool threads;
//! - [`version`]: the simulator's build (crate version + source hash) that stamps sweep results.

pub mod bench;
pub mod fuzz;
pub mod runner;
pub mod sweep;
pub mod validate;
pub mod version;

// The floors below this package, each a crate of its own (ARCHITECTURE.md, "The floors are crates"),
// under the module names the library has always had: `gpumemsim::machine::run` is
// `gpumemsim_machine::run`.
pub use gpumemsim_core::{
    barrier, config, engine, host, ir, progress, rng, stats, text, trace, workload,
};
pub use gpumemsim_device as device;
pub use gpumemsim_front::{cfront, frontend, kernel, ptx};
pub use gpumemsim_litmus as litmus;
pub use gpumemsim_machine as machine;
pub use gpumemsim_report as report;
