//! Integration tests: one binary (being built).
