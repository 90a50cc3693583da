//! Integration tests: one binary. Each file under `sim/tests/` is a module here.

mod cli;
mod config_cli;
mod gpu;
mod kernel_lang;
mod litmus;
mod outputs;
mod reports;
mod sweep;
mod traces;
mod workloads;
