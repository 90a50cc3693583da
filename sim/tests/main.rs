//! Integration tests: one binary. Each file under `sim/tests/` is a module here.

mod bad_input;
mod c_front;
mod cli;
mod config_cli;
mod docs;
mod explain;
mod fuzz;
mod gpu;
mod gpu_spirv;
mod kernel_lang;
mod litmus;
mod litmus_ability;
mod litmus_catalogue;
mod litmus_format;
mod oracle;
mod outputs;
mod ptx;
mod reports;
mod sweep;
mod sweep_cluster;
mod timeline;
mod traces;
mod user_kernels;
mod workloads;
