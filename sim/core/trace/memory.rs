//! Reading a kernel trace held in memory ([`parse_kernel`], [`parse_kernel_threads`]: tests, fuzzing,
//! `gpumemsim bench`'s synthetic traces): every block is parsed at once, so every error is reported
//! before a run, in file order. With more than one thread, the blocks (found by a first pass) are
//! parsed in parallel; the kernel and every error are the ones a sequential read gives (a failure
//! makes the text be read again sequentially). The reading itself is `parse.rs`'s [`Reader`].

use super::decode::OpCache;
use super::parse::{Done, Reader, TraceError};
use super::source::{Kind, Source};
use super::*;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Parses the text of one kernel trace; `path` names it in errors and in the result.
pub fn parse_kernel(text: &str, path: &Path) -> Result<TraceKernel, TraceError> {
    parse_kernel_threads(text, path, 1)
}

/// Bytes of thread blocks below which a trace is read on one thread.
const PARALLEL_MIN_BYTES: usize = 1 << 20;
/// Most parts a kernel's thread blocks are cut into (one thread each).
const MAX_PARTS: usize = 64;

/// Reads all of `text` on one thread, decoding every block.
fn parse_sequential(text: &str, file: &str, live: &Arc<AtomicUsize>) -> Result<Done, TraceError> {
    let mut r = Reader::new(file, true);
    r.live = Some(live.clone());
    r.text(text, &mut 0)?;
    r.finish()
}

/// As [`parse_kernel`], decoding the thread blocks on up to `threads` threads: a first pass finds
/// the blocks, then each thread decodes a run of them, and the blocks are put together in file
/// order, so the kernel is the same as one thread reads. Any failure makes the whole text be read
/// again on one thread, so that every error is the one a sequential read reports.
pub fn parse_kernel_threads(
    text: &str,
    path: &Path,
    threads: usize,
) -> Result<TraceKernel, TraceError> {
    let file = path.display().to_string();
    let live = Arc::new(AtomicUsize::new(0));
    let done = if threads > 1 && text.len() >= PARALLEL_MIN_BYTES {
        parse_parallel(text, &file, path, threads, &live)
            .map_or_else(|| parse_sequential(text, &file, &live), Ok)?
    } else {
        parse_sequential(text, &file, &live)?
    };
    Ok(assemble(done, path, live))
}

/// A kernel whose blocks `done` decoded.
fn assemble(mut done: Done, path: &Path, live: Arc<AtomicUsize>) -> TraceKernel {
    let parsed = std::mem::take(&mut done.parsed);
    let mut source = Source::new(Kind::Parsed(Vec::new()), done.entries.len());
    source.live = live;
    let mut blocks = Vec::with_capacity(parsed.len());
    for (i, (b, unknown)) in parsed.into_iter().enumerate() {
        source.record(i, &b, unknown);
        blocks.push(Arc::new(b));
    }
    source.kind = Kind::Parsed(blocks);
    done.kernel(path, source)
}

/// The parallel read of [`parse_kernel_threads`]; `None` when anything fails.
fn parse_parallel(
    text: &str,
    file: &str,
    path: &Path,
    threads: usize,
    live: &Arc<AtomicUsize>,
) -> Option<Done> {
    let mut r = Reader::new(file, false);
    r.text(text, &mut 0).ok()?;
    let mut done = r.finish().ok()?;
    // A stand-in kernel for the block readers (header, index); its source is never read.
    let probe = Done {
        head: done.head.clone(),
        entries: std::mem::take(&mut done.entries),
        block_of_group: Vec::new(),
        parsed: Vec::new(),
    }
    .kernel(path, Source::new(Kind::Parsed(Vec::new()), 0));
    let parts = threads.min(MAX_PARTS).min(probe.blocks.len()).max(1);
    let per = probe.blocks.len().div_ceil(parts);
    let chunks: Vec<&[BlockEntry]> = probe.blocks.chunks(per.max(1)).collect();
    let results: Vec<Option<Vec<(TraceBlock, Unknown)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let probe = &probe;
                s.spawn(move || {
                    let mut ops = OpCache::default();
                    let mut out = Vec::with_capacity(chunk.len());
                    for e in chunk.iter() {
                        let t = text.get(e.offset as usize..(e.offset + e.bytes) as usize)?;
                        let mut r = Reader::for_block(file, probe, e, ops, live);
                        let b = r.read_block(t, e).ok()?;
                        ops = std::mem::take(&mut r.ops);
                        out.push(b);
                    }
                    Some(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut parsed = Vec::with_capacity(probe.blocks.len());
    for r in results {
        parsed.extend(r?);
    }
    done.entries = probe.blocks;
    done.parsed = parsed;
    Some(done)
}
