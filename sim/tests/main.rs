//! Integration tests: one binary. Each file under `sim/tests/` is a module here.

mod c_front;
mod config_cli;
mod gpu;
mod kernel_lang;
mod litmus;
mod sweep;
mod traces;
mod workloads;
