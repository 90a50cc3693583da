//! The physical device (a [`Device`]; the simulated GPU is `machine::Gpu`): the same workloads the simulator runs, executed on a real adapter through wgpu,
//! timed with timestamp queries, and compared with the simulator's predictions.
//!
//! | module | what it does |
//! |---|---|
//! | `adapter` | adapter discovery (`gpu list`), opening a device with the features the suite uses |
//! | `walk` | the IR walk every translator shares (launch checks, basic blocks, 64-bit registers), and the [`walk::Shader`] a translation holds |
//! | `wgsl` | IR → WGSL translation (what WGSL cannot express is rejected with its location) |
//! | `spirv` | IR → SPIR-V with the Vulkan memory model (orders, scopes, fences), for adapters with SPIR-V passthrough |
//! | `emit` | `gpu emit`: a workload's or litmus test's shader, written without an adapter |
//! | `clock` | the clock probe: settles the GPU's clock before measuring and brackets every case |
//! | `harness` | compile (`Device::compile`) and timing harness: timestamps around each pass, R repetitions, checked results |
//! | `suite` | the measurement suite file (kernels of `workloads/`, parameter sweeps) |
//! | `schema` | the measurement file `measure` writes and `compare` reads (versioned JSON) |
//! | `measure` | `gpumemsim measure`: a suite on an adapter → measurement file |
//! | `compare` | `gpumemsim compare`: the simulator's predictions beside a measurement file |
//! | `litmus` | litmus tests on the adapter: many instances per dispatch, random placement, stress |
//!
//! Does not model anything: this is the measuring half. Its numbers come from the adapter.

pub mod adapter;
pub mod clock;
pub mod compare;
pub mod emit;
pub mod harness;
pub mod litmus;
pub mod measure;
pub mod schema;
pub mod spirv;
pub mod suite;
pub mod walk;
pub mod wgsl;

pub use adapter::{AdapterReport, Device};
pub use wgsl::TranslateError;

use thiserror::Error;

/// Why something on the physical GPU did not give a number.
#[derive(Debug, Error)]
pub enum DeviceError {
    #[error("no adapter found: {}", adapter::INSTALL_HINT)]
    NoAdapter,
    #[error("--adapter {index}: there {} {count} adapter{} (see `gpumemsim gpu list`)",
        if *count == 1 { "is" } else { "are" }, if *count == 1 { "" } else { "s" })]
    BadAdapterIndex { index: usize, count: usize },
    #[error("cannot open {adapter}: {message}")]
    Open { adapter: String, message: String },
    #[error("{adapter} has no timestamp queries (TIMESTAMP_QUERY), so it cannot time dispatches")]
    NoTimestamps { adapter: String },
    #[error(transparent)]
    Translate(#[from] TranslateError),
    #[error("{workload}: cannot launch: {message}")]
    Launch { workload: String, message: String },
    #[error("{workload}: the adapter rejected the shader: {message}")]
    Shader { workload: String, message: String },
    #[error("{workload}: dispatch failed: {message}")]
    Dispatch { workload: String, message: String },
    /// A run-time fault inside the kernel (the simulator's run-time errors, found on the GPU).
    #[error("{0}")]
    Fault(String),
    /// The final memory failed one of the workload's checks.
    #[error("{location}: check `{check}` failed on the GPU: {detail}")]
    WrongResult {
        location: String,
        check: String,
        detail: String,
    },
}

// The lower floors' modules under the names this crate has always used for them (ARCHITECTURE.md, "The
// floors are crates").
pub(crate) use gpumemsim_core::{config, ir, progress, rng, stats, text, workload};
pub(crate) use gpumemsim_front::{frontend, kernel};
pub(crate) use gpumemsim_machine as machine;
pub(crate) use gpumemsim_report as report;
