//! The simulator's identity: the crate version plus a hash of the source it was built from (computed by
//! `build.rs`: every Rust file of the library and binary, the embedded configs, `Cargo.toml` and
//! `Cargo.lock`). Sweeps stamp every point result with [`BUILD`] so that results of different simulators
//! never mix silently; `gpumemsim --version` prints it.
//!
//! What it deliberately does not identify: the compiler version and the build profile (debug and release
//! builds of one source compute the same results and share the build).

/// The crate version, e.g. `0.1.0`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// 16 hex digits: FNV-1a of the source (see the module header).
pub const SOURCE_HASH: &str = env!("GPUMEMSIM_SOURCE_HASH");

/// `VERSION+SOURCE_HASH`, e.g. `0.1.0+3f2a9c1d5e6b7a80`: what a point result records.
pub const BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+",
    env!("GPUMEMSIM_SOURCE_HASH")
);
