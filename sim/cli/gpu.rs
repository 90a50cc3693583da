//! `gpumemsim gpu emit`: its arguments and where the shader goes (the translation is the library's,
//! `gpumemsim::device::emit`).

use crate::*;
use gpumemsim::device::emit::{self, Lang};

#[derive(clap::Args)]
pub(crate) struct EmitCmd {
    /// Workload (.kern, .cu, .cl, .ptx) or litmus test (.litmus).
    file: PathBuf,
    /// Shader language to write.
    #[arg(long, value_enum, default_value = "wgsl")]
    shader: Lang,
    /// Seed of a litmus test's placement (the harness's first dispatch).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::seed)]
    seed: u64,
    /// File to write (default: standard output).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn cmd_emit(c: EmitCmd) -> Result<ExitCode> {
    cli::outputs::check_io(
        &[("--out", c.out.as_deref(), cli::outputs::Kind::File)],
        &[("the kernel", Some(&c.file))],
    )?;
    let wl = emit::workload_of(&c.file, c.seed).map_err(anyhow::Error::msg)?;
    let bytes = emit::emit(&wl, c.shader)?;
    match &c.out {
        Some(p) => gpumemsim::stats::write_atomic(p, &bytes)
            .with_context(|| format!("writing {}", p.display()))?,
        None => cli::out::bytes(&bytes),
    }
    Ok(ExitCode::SUCCESS)
}
