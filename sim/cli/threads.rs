//! `--threads N` for the commands whose work runs on rayon's pool (litmus launches, `gpu compare`'s
//! cases): the rest of the command runs inside a pool of N threads instead of the global one (one
//! thread per core). Results never depend on the number: each command collects its parallel work in
//! a fixed order.

use anyhow::{Context, Result};

/// Runs `f` on a pool of `threads` threads (the library's pool builder, so the host's thread hook
/// runs on each), or on the global pool when `None`.
pub(crate) fn with_threads<T: Send>(
    threads: Option<u16>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    match threads {
        None => f(),
        Some(n) => gpumemsim::host::pool(n as usize)
            .build()
            .with_context(|| format!("--threads {n}: cannot start the threads"))?
            .install(f),
    }
}
