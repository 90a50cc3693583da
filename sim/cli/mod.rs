//! The larger subcommands' arguments and handlers, one module per command family (the smaller ones
//! stay in `main.rs`).

pub(crate) mod gpu;
pub(crate) mod heap;
pub(crate) mod litmus;
pub(crate) mod out;
pub(crate) mod outputs;
pub(crate) mod sweep;
pub(crate) mod threads;
