//! The litmus simulation rate that `gpumemsim bench` reports and `benches/litmus.rs` measures:
//! iterations per second of message passing (MP, relaxed, two work-groups), launches spread over all
//! cores as `gpumemsim litmus` does.

use super::run::{run, LitmusOptions};
use super::{parse, LitmusError};
use crate::config::GpuConfig;
use serde::Serialize;

/// The message-passing test whose rate is reported.
pub const MP_TEST: &str = r#"PTX MP
"message passing, relaxed, across work-groups"
{ x=0; y=0; }
 P0@cta 0,gpu 0             | P1@cta 1,gpu 0             ;
 st.relaxed.gpu [x], 1      | ld.relaxed.gpu r0, [y]     ;
 st.relaxed.gpu [y], 1      | ld.relaxed.gpu r1, [x]     ;
exists (P1:r0=1 /\ P1:r1=0)
"#;

#[derive(Debug, Clone, Serialize)]
pub struct BenchRate {
    pub test: String,
    pub config: String,
    pub iterations: u64,
    pub seconds: f64,
    pub iterations_per_second: f64,
}

/// Runs `iterations` MP iterations on `cfg` and reports the wall-clock rate.
pub fn mp_rate(cfg: &GpuConfig, iterations: u64, seed: u64) -> Result<BenchRate, LitmusError> {
    let test = parse(MP_TEST, "<builtin MP>")?;
    let opts = LitmusOptions {
        iterations,
        seed,
        ..LitmusOptions::default()
    };
    let start = std::time::Instant::now();
    let r = run(&test, cfg, &opts)?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(BenchRate {
        test: "MP".into(),
        config: cfg.name.clone(),
        iterations: r.iterations,
        seconds,
        iterations_per_second: r.iterations as f64 / seconds.max(1e-9),
    })
}
