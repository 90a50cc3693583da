//! gpumemsim-front: the source languages, each lowered into the core's IR and workload (ARCHITECTURE.md,
//! "The floors are crates"). It stands on gpumemsim-core only: a front end never sees the machine.
//! - [`kernel`]: the kernel language (`.kern`) and the file-kind choice for every kernel source;
//! - [`cfront`]: the CUDA and OpenCL C front ends (and the OpenCL litmus dialect's thread bodies);
//! - [`ptx`]: PTX as `nvcc -ptx` and NVRTC emit it, and NVRTC itself, loaded at run time;
//! - [`frontend`]: which front end and compiler a workload came from.

pub mod cfront;
pub mod frontend;
pub mod kernel;
pub mod ptx;

// The core's modules under the names the front ends have always used for them.
pub(crate) use gpumemsim_core::{barrier, ir, text, workload};
