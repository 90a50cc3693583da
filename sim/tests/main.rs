//! Integration tests: one binary (being built).

mod config_cli;
