//! Standard output and standard error for every command, written so that a closed reader ends the
//! command quietly, as Unix tools do: `gpumemsim model DIR | head` stops when `head` has its lines.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe returns `EPIPE` (`ErrorKind::BrokenPipe`) and
//! `println!` would panic with "failed printing to stdout" (exit 101). Every line the CLI prints goes
//! through [`out!`]/[`outln!`] instead: a broken pipe exits with status 0 at once (what was asked for
//! was read as far as the reader wanted; files are written atomically, so none is left half-written),
//! any other write error is reported on stderr and exits 1. Messages go through [`errln!`]/[`err!`],
//! which never panic: with stderr closed there is nobody left to tell.
//!
//! What this does not do: restore SIGPIPE's default action (that would also kill the process on a
//! pipe to a child such as `sbatch`, where an error is wanted).

use std::io::Write;

/// Writes to stdout; a closed reader ends the process quietly (status 0).
pub(crate) fn stdout(args: std::fmt::Arguments) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args) {
        failed(e);
    }
}

/// Writes bytes (a binary shader) to stdout and flushes them, with the same rule for a closed reader.
pub(crate) fn bytes(b: &[u8]) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(b).and_then(|_| o.flush()) {
        failed(e);
    }
}

/// Flushes stdout at the end of a command (a last line without a newline, or a block buffered
/// by the line writer), with the same rule for a closed reader.
pub(crate) fn flush() {
    if let Err(e) = std::io::stdout().lock().flush() {
        failed(e);
    }
}

/// Writes to stderr, ignoring a failure.
pub(crate) fn stderr(args: std::fmt::Arguments) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

fn failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    stderr(format_args!(
        "error: cannot write to standard output: {e}\n"
    ));
    std::process::exit(1);
}
