//! Integration tests: one binary (being built).
mod gpu;
