//! Charts and reports: the plotting layer ([`plot`]; its SVG writer with embedded glyph outlines is
//! [`svg`]), error metrics for simulated-versus-measured comparisons ([`metrics`]), the offline
//! HTML report writer ([`html`]), and tables as JSON records with the versions of every JSON schema
//! ([`records`]).
//!
//! Everything here turns numbers into files; nothing here simulates. The sweep runner and the compare
//! command build [`plot::Chart`]s from their results and hand them over:
//!
//! - [`plot::Chart::lines`] — one line per swept value (contention curves, any statistic against any
//!   parameter), [`plot::Chart::scatter`] with an optional y = x line (simulated against measured),
//!   [`plot::Chart::bars`] grouped or stacked (latency breakdowns, litmus outcome counts),
//!   [`plot::Chart::histogram`]; [`intervals::chart`] draws a run's `--interval-csv` over time;
//! - axes: [`plot::Axis::linear`] / [`plot::Axis::log`] with a label and a unit;
//! - [`validation::ErrorFigure`] — signed errors per row on a fixed ±25 % axis over each row's
//!   tolerance band, one panel per preset (`validate`);
//! - output: [`plot::Chart::save`] writes `stem.png` and `stem.svg` atomically; [`plot::Chart::render`]
//!   returns the bytes.

mod draw;
pub mod html;
pub mod intervals;
pub mod metrics;
pub mod plot;
pub mod records;
pub mod svg;
mod ticks;
pub mod validation;

// The lower floors' modules under the names this crate has always used for them (ARCHITECTURE.md, "The
// floors are crates").
pub(crate) use gpumemsim_core::stats;
