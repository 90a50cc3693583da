//! Litmus tests on the physical GPU: many instances of one test per dispatch, with randomised thread
//! placement and memory stress, as the published GPU litmus harnesses run them (Alglave et al.,
//! "GPU concurrency: weak behaviours and programming assumptions", ASPLOS 2015; Levine et al.,
//! "MC Mutants", ASPLOS 2023).
//!
//! Reuses the litmus front end (`gpumemsim_litmus`): its parser, its per-thread IR and condition, and
//! the launch lowerings' one IR builder (`KernelBuilder`: registers by name, thread entries, each
//! thread's addresses, initial registers and relocated body, location buffers, final states). The launch layout is this module's own,
//! made for a real GPU rather than for the simulator's placement controls:
//! - **Testing work-groups** hold instances' threads: each (instance, cta) unit occupies as many slots of
//!   one work-group as the cta has threads; units of one instance with different ctas go to different
//!   work-groups; units go to random work-groups and random slots (a role table, drawn per dispatch
//!   from a seeded stream, tells each work-item which instance and test thread it runs, so nothing is
//!   tied to an id the hardware schedules in order).
//! - **Stress work-groups** (optional) run loads and stores to pseudo-random lines of a scratch buffer
//!   while the tests run; they are separate work-groups, so that the barrier variant's barriers never
//!   wait for them.
//! - **Locations**: each instance has its own copy of every location, one 128-byte line apart, at a
//!   position drawn from a per-location random permutation, so an instance's locations land on
//!   unrelated lines and slices.
//! - **Results**: each test thread stores its observed registers to an output buffer when it ends; the
//!   final values of locations are read from memory. A state is counted per instance; the counts sum to
//!   the instances run (checked).
//! - **Pre-stress** (optional, `pre_stress_iterations`): testing work-items walk the stress lines before
//!   their test code, as MC Mutants' pre-stress does.
//!
//! Variants (applied identically here and in the simulator by `compare`): `relaxed` runs the test as
//! written; `storage_barrier` puts a work-group barrier over global memory between consecutive memory
//! operations of every thread; `release_acquire` makes every atomic store a device-scope release, every
//! atomic load an acquire and every RMW acq_rel; `fence_acq_rel` puts a device-scope acq_rel fence between
//! consecutive memory operations; `seq_cst` makes every atomic seq_cst at device scope. Through WGSL only
//! relaxed atomics, plain accesses and work-group barriers translate (the others are rejected with their
//! location); through SPIR-V (`super::spirv`) every variant runs, seq_cst as acq_rel (listed in
//! [`Counts::weakened`]: the Vulkan memory model has no sequentially consistent order).

mod kernel;
mod placement;
mod variants;

use super::adapter::Device;
use super::schema::{LitmusResult, OutcomeCount, ShaderPath, Status};
use super::{wgsl, DeviceError};
use crate::ir::*;
use crate::rng::SplitMix64;
use gpumemsim_litmus::{final_state, LitmusTest};
pub use placement::{launch, Launch};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use variants::*;

use placement::pad;

/// Settings of the GPU litmus harness.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LitmusSettings {
    /// Instances per dispatch.
    pub instances: u32,
    pub dispatches: u32,
    /// Work-items per work-group (testing and stress alike).
    pub workgroup_size: u32,
    /// Stress work-groups per testing work-group (0: no stress).
    pub stress_ratio: u32,
    /// Loads and stores each stress work-item performs.
    pub stress_iterations: u32,
    /// Loads and stores each testing work-item performs on the stress lines before its test code
    /// (pre-stress, MC Mutants §4): 0 for none.
    #[serde(default)]
    pub pre_stress_iterations: u32,
    pub seed: u64,
}

impl Default for LitmusSettings {
    fn default() -> Self {
        LitmusSettings {
            instances: 4096,
            dispatches: 16,
            workgroup_size: 256,
            stress_ratio: 1,
            stress_iterations: 256,
            pre_stress_iterations: 0,
            seed: 1,
        }
    }
}

/// Final states counted over every instance of every dispatch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub instances: u64,
    pub states: BTreeMap<Vec<i64>, u64>,
    /// Orders and scopes the translation weakened (SPIR-V: seq_cst as acq_rel, system as device).
    pub weakened: Vec<String>,
}

/// Runs `test` (already in its variant's form) on the adapter through WGSL.
pub fn run(gpu: &Device, test: &LitmusTest, s: &LitmusSettings) -> Result<Counts, DeviceError> {
    run_with(gpu, test, s, ShaderPath::Wgsl)
}

/// Runs `test` (already in its variant's form) on the adapter through `path`.
pub fn run_with(
    gpu: &Device,
    test: &LitmusTest,
    s: &LitmusSettings,
    path: ShaderPath,
) -> Result<Counts, DeviceError> {
    let mut counts = Counts::default();
    let mut rng = SplitMix64::stream(s.seed, 0x6c69_746d);
    let fail = |message: String| DeviceError::Launch {
        workload: format!("{} ({})", test.name, test.file),
        message,
    };
    let mut compiled: Option<super::harness::Compiled> = None;
    for _ in 0..s.dispatches.max(1) {
        let l = launch(test, s, &mut rng).map_err(fail)?;
        // Every dispatch has the same kernel and sizes: compile once, then only new contents.
        let p = match compiled.as_mut() {
            Some(p) => {
                p.reload(&l.workload)?;
                p
            }
            None => {
                let p = gpu.compile_with(&l.workload, wgsl::Options::default(), path)?;
                counts.weakened = p.translation.emulated.clone();
                compiled.insert(p)
            }
        };
        let out = p.run_once()?;
        let nloc = test.locations.len();
        let outbuf = &out.buffers[nloc + 2];
        let nobs = l.observed_regs.len().max(1);
        for k in 0..l.instances as usize {
            let state = final_state(
                test,
                |j, _, _| outbuf[k * nobs + j],
                // Arrays are refused in `launch`: only element 0.
                |loc, _| out.buffers[loc][(l.slot[loc][k] * pad(test, loc)) as usize],
            );
            *counts.states.entry(state).or_default() += 1;
        }
        counts.instances += l.instances;
    }
    Ok(counts)
}

/// The measurement-file record of a run (or of why it did not run).
pub fn result(
    test: &LitmusTest,
    variant: Variant,
    outcome: Result<Counts, DeviceError>,
) -> LitmusResult {
    let mut r = LitmusResult {
        test: test.name.clone(),
        file: test.file.clone(),
        variant,
        status: Status::Ok,
        error: None,
        instances: 0,
        outcomes: vec![],
        shader: None,
        weakened: vec![],
    };
    match outcome {
        Ok(c) => {
            r.instances = c.instances;
            r.weakened = c.weakened.clone();
            r.outcomes = c
                .states
                .iter()
                .map(|(state, &count)| OutcomeCount {
                    outcome: state_string(test, state),
                    count,
                    weak: test.condition.witness(state),
                })
                .collect();
        }
        Err(e) => {
            r.status = match e {
                DeviceError::Translate(_) => Status::Untranslatable,
                _ => Status::Failed,
            };
            r.error = Some(e.to_string());
        }
    }
    r
}

/// `P1:r0=1; P1:r1=0; x=2;` as the litmus front end renders states.
pub fn state_string(test: &LitmusTest, state: &[i64]) -> String {
    (0..state.len())
        .map(|i| {
            format!(
                "{}={};",
                test.condition.var_name(i, &test.threads, &test.locations),
                state[i]
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod lowering_digest;
