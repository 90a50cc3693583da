//! A traced launch's thread blocks on their way to the SMs: each read when the dispatcher places
//! its work-group (a streamed trace's blocks come from the file then; `trace/parse.rs`), and with a
//! thread pool read ahead on it in dispatch order, so that decoding is off the critical path. The
//! blocks, and every error (a trace's bad input found in a block, with its file and line), are the
//! ones a read at placement gives.

use super::team::Team;
use super::{BlockRead, Gpu, SimError};
use crate::trace::{TraceBlock, TraceError, TraceKernel};
use std::sync::mpsc::TryRecvError;
use std::sync::Arc;

/// Thread blocks of a streamed trace read ahead per SM when the run has a thread pool.
const READ_AHEAD_PER_SM: usize = 4;

impl Gpu<'_> {
    /// Work-group `group`'s thread block: read ahead already, or read now.
    pub(super) fn trace_block(
        &mut self,
        k: &Arc<TraceKernel>,
        group: u64,
    ) -> Result<Arc<TraceBlock>, SimError> {
        let read = match self.ahead.front() {
            Some((g, _)) if *g == group => {
                let (_, rx) = self.ahead.pop_front().expect("checked");
                wait_for(&rx, self.team.as_deref()).unwrap_or_else(|| k.group_block(group))
            }
            _ => {
                // Placed out of dispatch order (an explicit placement): start again from here.
                self.ahead.clear();
                k.group_block(group)
            }
        };
        read.map_err(trace_error)
    }

    /// With a thread pool, reads the blocks of the next groups in dispatch order on it (at most
    /// [`READ_AHEAD_PER_SM`] per SM ahead), so that decoding a streamed trace is off the critical
    /// path; the blocks and every error are the ones a read at placement gives.
    pub(super) fn read_ahead(&mut self, k: &Arc<TraceKernel>) {
        // Inside the event loop the pool is taken out of `self.pool` and the loop runs on one of its
        // threads (`parallel`): jobs are spawned on the current pool.
        if !(self.parallel || self.pool.is_some()) {
            return;
        }
        if !k.is_streamed() {
            return;
        }
        let want = READ_AHEAD_PER_SM * self.sms.len();
        let have = self.ahead.len();
        for g in self
            .dispatcher
            .upcoming()
            .skip(have)
            .take(want.saturating_sub(have))
        {
            let (tx, rx) = std::sync::mpsc::channel();
            let k = k.clone();
            let job = move || {
                let _ = tx.send(k.group_block(g));
            };
            match &self.pool {
                Some(pool) if !self.parallel => pool.spawn(job),
                _ => rayon::spawn(job),
            }
            self.ahead.push_back((g, rx));
        }
    }
}

/// The block a read-ahead job sends (`None`: the job is gone). Inside the event loop the reads run on
/// the team's helpers between passes (`team.rs`); a helper that found nothing to do for a while is
/// parked and runs no job, so it is woken before this thread blocks on the read.
fn wait_for(rx: &BlockRead, team: Option<&Team>) -> Option<Result<Arc<TraceBlock>, TraceError>> {
    if let Some(team) = team {
        match rx.try_recv() {
            Ok(r) => return Some(r),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => team.wake(),
        }
    }
    rx.recv().ok()
}

/// A trace's bad input found when a thread block is read, as the run's error (the same text).
pub(super) fn trace_error(e: TraceError) -> SimError {
    use crate::text::TextError;
    let (location, message) = match e {
        TraceError::Syntax {
            file,
            line,
            message,
        } => (format!("{file}:{line}"), message),
        TraceError::Io { file, source } | TraceError::Text(TextError::Io { file, source }) => {
            (file, format!("cannot read: {source}"))
        }
        TraceError::Text(TextError::NotUtf8 {
            file,
            line,
            col,
            byte,
        }) => (
            format!("{file}:{line}:{col}"),
            crate::text::not_utf8_message(byte),
        ),
    };
    SimError::Unsupported { location, message }
}
