//! `gpumemsim gpu emit`: the shader a workload or litmus test becomes, without an adapter — WGSL,
//! SPIR-V (binary words, little-endian) or PTX, as the translators write it for a device that offers
//! everything ([`Caps::ALL`], [`SpirvCaps::ALL`]).
//!
//! A `.litmus` file is emitted as the physical-GPU harness's first dispatch of it (default settings,
//! placement drawn from `seed`); any other file is loaded as a workload (`.kern`, `.cu`, `.cl`,
//! `.ptx`, by [`crate::frontend`]). Does not run anything.

use super::spirv::{self, SpirvCaps};
use super::wgsl::{self, Caps, Options};
use crate::rng::SplitMix64;
use crate::workload::Workload;
use std::path::Path;

/// Which shader language `emit` writes (`--shader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Wgsl,
    Spirv,
}

/// The workload `path` names: a litmus test's first harness dispatch, or a loaded workload.
pub fn workload_of(path: &Path, seed: u64) -> Result<Workload, String> {
    if path.extension().is_some_and(|e| e == "litmus") {
        let test = gpumemsim_litmus::load(path).map_err(|e| e.to_string())?;
        let s = super::litmus::LitmusSettings {
            seed,
            ..Default::default()
        };
        let mut rng = SplitMix64::stream(s.seed, 0x6c69_746d);
        super::litmus::launch(&test, &s, &mut rng)
            .map(|l| l.workload)
            .map_err(|e| format!("{}: {e}", path.display()))
    } else {
        crate::frontend::load(path, &[]).map_err(|e| e.to_string())
    }
}

/// The shader `wl` becomes in `lang`, as bytes (text for WGSL, the module's words for SPIR-V).
pub fn emit(wl: &Workload, lang: Lang) -> Result<Vec<u8>, wgsl::TranslateError> {
    let opts = Options::default();
    Ok(match lang {
        Lang::Wgsl => wgsl::translate(wl, Caps::ALL, opts)?.shader.bytes(),
        Lang::Spirv => spirv::translate(wl, SpirvCaps::ALL, opts)?.shader.bytes(),
    })
}
