//! gpumemsim-core: the ground floor every other crate of the simulator stands on (ARCHITECTURE.md, "The
//! floors are crates"). It imports no other crate of the workspace.
//! - [`engine`]: the deterministic discrete-event core; [`rng`]: the seeded random source;
//! - [`ir`]: the instruction IR all front ends lower into; [`workload`]: a launchable kernel;
//!   [`barrier`]: the work-group barrier rule front ends share;
//! - [`config`]: the TOML hardware description, validation, presets;
//! - [`trace`]: Accel-Sim SASS traces (reading and decoding; the timed replay is the machine's);
//! - [`stats`]: tidy statistics; [`progress`]: progress of long work on stderr;
//! - [`text`]: reading input files as text, and [`text::Located`], the one located error of the readers;
//! - [`host`]: a hook the host program runs on the library's pool threads.
//!
//! Not here: anything timed (the machine), any source language (the front ends), anything that draws or
//! talks to a physical GPU.

pub mod barrier;
pub mod config;
pub mod engine;
pub mod host;
pub mod ir;
pub mod progress;
pub mod rng;
pub mod stats;
pub mod text;
pub mod trace;
pub mod workload;
