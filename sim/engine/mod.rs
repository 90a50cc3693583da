//! The deterministic discrete-event engine (being built).
