//! What the host program may add to the threads the library starts (its thread pools): a hook run
//! first on each new thread. The command-line tool installs one that sets the thread's heap up for
//! huge pages (`cli/heap.rs`); the library itself does nothing host-specific, and results never
//! depend on a hook.

use std::sync::OnceLock;

static THREAD_START: OnceLock<fn()> = OnceLock::new();

/// Installs `hook`, run first on every thread the library's pools start from now on (the first
/// hook installed stays).
pub fn on_thread_start(hook: fn()) {
    let _ = THREAD_START.set(hook);
}

/// Runs the installed hook, if any (called first on each pool thread).
pub fn thread_started() {
    if let Some(hook) = THREAD_START.get() {
        hook();
    }
}

/// The cores this process may run on (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A pool builder of `threads` threads (0: one per core) whose threads run the hook first.
pub fn pool(threads: usize) -> rayon::ThreadPoolBuilder {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(|_| thread_started())
}
