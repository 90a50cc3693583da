//! The simulated GPU: the parts of DESIGN.md wired by one builder, and the entry point that runs a
//! workload on them. (Being built.)

pub mod api;
pub use api::*;
