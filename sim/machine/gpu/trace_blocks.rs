//! A traced launch's thread blocks on their way to the SMs: each read when the dispatcher places
//! its work-group (a streamed trace's blocks come from the file then; `trace/parse.rs`), and read
//! ahead in dispatch order so that decoding is off the critical path: on the run's thread pool, or,
//! when the run simulates on one thread and the machine has another core, on a reader thread of its
//! own, which starts on the first wave's blocks while the machine is being built. The blocks, and
//! every error (a trace's bad input found in a block, with its file and line), are the ones a read
//! at placement gives. Reading ahead holds at most [`READ_AHEAD_PER_SM`] blocks per SM besides the
//! resident groups' (memory stays flat in the trace's length).

use super::super::sm::{Launch, Program};
use super::{Gpu, SimError};
use crate::trace::{TraceBlock, TraceError, TraceKernel};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;

/// A block's read or its outcome.
type Block = Result<Arc<TraceBlock>, TraceError>;

/// A read of one group's block started on the pool or the reader thread. Whoever claims it first
/// reads it: the job, or a thread that needs a block not read yet ([`Gpu::trace_block`]), which
/// reads this one rather than wait for it.
pub(super) struct BlockRead {
    kernel: Arc<TraceKernel>,
    group: u64,
    claimed: Arc<AtomicBool>,
    rx: Receiver<Block>,
    /// Read by the thread that claimed it here.
    done: Option<Block>,
}

impl BlockRead {
    /// Claims the read for the calling thread, which then reads the block.
    fn claim(&mut self) -> bool {
        self.done.is_none() && !self.claimed.swap(true, Ordering::AcqRel)
    }

    /// Reads the block here if no one has started to (`false` otherwise).
    fn read_here(&mut self) -> bool {
        if !self.claim() {
            return false;
        }
        self.done = Some(self.kernel.group_block(self.group));
        true
    }
}

/// Thread blocks of a streamed trace read ahead per SM.
pub const READ_AHEAD_PER_SM: usize = 4;

/// The reader thread of a run that simulates on one thread (`threads`), when its first launch is a
/// streamed trace and the machine has another core for it.
pub(super) fn reader_for(launch: &Launch, threads: usize) -> Option<rayon::ThreadPool> {
    let streamed =
        matches!(&launch.program, Program::Trace { kernel } if kernel.trace.is_streamed());
    if threads > 1 || !streamed || crate::host::cores() < 2 {
        return None;
    }
    crate::host::pool(1)
        .thread_name(|_| "gpumemsim-reader".into())
        .build()
        .ok()
}

/// Starts reading the first groups' blocks of `launch` on `reader`, in dispatch order (the order
/// of the group numbers), as many as [`Gpu::read_ahead`] keeps ahead for `sms` SMs: called before
/// the machine is built, so that the first wave's blocks are decoded meanwhile.
pub(super) fn first_reads(
    reader: &rayon::ThreadPool,
    launch: &Launch,
    sms: usize,
) -> VecDeque<(u64, BlockRead)> {
    let Program::Trace { kernel } = &launch.program else {
        return VecDeque::new();
    };
    let groups = launch.geo.num_groups();
    (0..groups.min((READ_AHEAD_PER_SM * sms) as u64))
        .map(|g| (g, spawn_read(Some(reader), &kernel.trace, g)))
        .collect()
}

/// Reads group `g`'s block of `k` on `pool` (`None`: the current pool), unless another thread
/// claims the read first.
fn spawn_read(pool: Option<&rayon::ThreadPool>, k: &Arc<TraceKernel>, g: u64) -> BlockRead {
    let (tx, rx) = std::sync::mpsc::channel();
    let claimed = Arc::new(AtomicBool::new(false));
    let (kernel, mine) = (k.clone(), claimed.clone());
    let job = move || {
        if !mine.swap(true, Ordering::AcqRel) {
            let _ = tx.send(kernel.group_block(g));
        }
    };
    match pool {
        Some(pool) => pool.spawn(job),
        None => rayon::spawn(job),
    }
    BlockRead {
        kernel: k.clone(),
        group: g,
        claimed,
        rx,
        done: None,
    }
}

impl Gpu<'_> {
    /// Work-group `group`'s thread block: read ahead already, or read now.
    pub(super) fn trace_block(
        &mut self,
        k: &Arc<TraceKernel>,
        group: u64,
    ) -> Result<Arc<TraceBlock>, SimError> {
        let read = match self.ahead.front() {
            Some((g, _)) if *g == group => {
                let (_, read) = self.ahead.pop_front().expect("checked");
                self.wait_for(read)
            }
            _ => {
                // Placed out of dispatch order (an explicit placement): start again from here.
                self.ahead.clear();
                k.group_block(group)
            }
        };
        read.map_err(trace_error)
    }

    /// With a thread pool or a reader thread, reads the blocks of the next groups in dispatch order
    /// on it (at most [`READ_AHEAD_PER_SM`] per SM ahead), so that decoding a streamed trace is off
    /// the critical path; the blocks and every error are the ones a read at placement gives.
    pub(super) fn read_ahead(&mut self, k: &Arc<TraceKernel>) {
        // Inside the event loop the pool is taken out of `self.pool` and the loop runs on one of its
        // threads (`parallel`): jobs are spawned on the current pool.
        let on = match (&self.pool, &self.reader) {
            _ if self.parallel => None,
            (Some(pool), _) | (None, Some(pool)) => Some(pool),
            (None, None) => return,
        };
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
            self.ahead.push_back((g, spawn_read(on, k, g)));
        }
    }
}

impl Gpu<'_> {
    /// The block `read` brings. While it is being read elsewhere, this thread reads the last block
    /// ahead that no one has started (instead of waiting; the first wave of a launch is read by
    /// both); it waits only when none is left. Inside the event loop the reads run on the team's
    /// helpers between passes (`team.rs`); a helper that found nothing to do for a while is parked
    /// and runs no job, so it is woken before this thread waits.
    fn wait_for(&mut self, mut read: BlockRead) -> Block {
        if read.read_here() {
            return read.done.take().expect("just read");
        }
        loop {
            if let Some(done) = read.done.take() {
                return done;
            }
            match read.rx.try_recv() {
                Ok(block) => return block,
                // The job is gone without sending (its pool ended): read it here.
                Err(TryRecvError::Disconnected) => return read.kernel.group_block(read.group),
                Err(TryRecvError::Empty) => {}
            }
            // The last read ahead that no one has started (a pool's threads may take them in any
            // order; a claim lost to one of them since the look leads to the next look).
            let unstarted = |r: &BlockRead| r.done.is_none() && !r.claimed.load(Ordering::Acquire);
            if let Some((_, later)) = self.ahead.iter_mut().rev().find(|(_, r)| unstarted(r)) {
                later.read_here();
                continue;
            }
            if let Some(team) = self.team.as_deref() {
                team.wake();
            }
            return match read.rx.recv() {
                Ok(block) => block,
                Err(_) => read.kernel.group_block(read.group),
            };
        }
    }
}

/// A trace's bad input found when a thread block is read, as the run's error (the same text).
pub(super) fn trace_error(e: TraceError) -> SimError {
    let (location, message) = match e {
        TraceError::Syntax {
            file,
            line,
            message,
        } => (format!("{file}:{line}"), message),
        TraceError::Io { file, source } => (file, format!("cannot read: {source}")),
        TraceError::Text(t) => match t.located() {
            Err((file, source)) => (file, format!("cannot read: {source}")),
            Ok(l) => (l.at(), l.message),
        },
    };
    SimError::Unsupported { location, message }
}
