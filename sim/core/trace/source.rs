//! Where a streamed kernel's thread blocks come from: the trace file, read again at a block's offset
//! when the dispatcher places it, or an `.xz` file's decompressed copy; or, for a kernel parsed in
//! memory, the blocks parsed at load. The source also keeps what parsing the blocks found (thread
//! instructions, unknown opcodes) and counts the parsed blocks alive (freed when their work-group
//! finishes and the last reference goes).

use super::decode::OpCache;
use super::parse::{not_utf8, Reader, TraceError};
use super::*;
use std::io::{Seek, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The most text one kernel trace may decompress to: an xz stream is refused past it instead of
/// filling the disk.
const MAX_TEXT_BYTES: u64 = 1 << 34;

/// A writer that refuses to grow past [`MAX_TEXT_BYTES`].
struct Limited<W>(W, u64);

impl<W: Write> Write for Limited<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.1 + buf.len() as u64 > MAX_TEXT_BYTES {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.1 += buf.len() as u64;
        self.0.write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A temporary file, removed when dropped (where it could not be removed while open).
pub(crate) struct TempFile(Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Decompresses an `.xz` kernel trace into a temporary file, open for reading at offsets.
pub(crate) fn decompress(
    path: &Path,
    file: &str,
) -> Result<(std::fs::File, Option<TempFile>), TraceError> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let io = |source| TraceError::Io {
        file: file.to_string(),
        source,
    };
    let input = std::fs::File::open(path).map_err(io)?;
    let tmp = std::env::temp_dir().join(format!(
        "gpumemsim-{}-{}.traceg",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let mut out = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| TraceError::Io {
            file: format!("{file} (decompressing into {})", tmp.display()),
            source: e,
        })?;
    // Unnamed from here on where the system allows it (the open handle keeps the data).
    let temp = match std::fs::remove_file(&tmp) {
        Ok(()) => None,
        Err(_) => Some(TempFile(Some(tmp.clone()))),
    };
    {
        let mut w = Limited(std::io::BufWriter::with_capacity(1 << 20, &out), 0);
        lzma_rs::xz_decompress(&mut std::io::BufReader::new(input), &mut w)
            .and_then(|()| w.flush().map_err(lzma_rs::error::Error::IoError))
            .map_err(|e| TraceError::Syntax {
                file: file.to_string(),
                line: 0,
                message: match e {
                    lzma_rs::error::Error::IoError(e)
                        if e.kind() == std::io::ErrorKind::FileTooLarge =>
                    {
                        format!("decompresses to more than {MAX_TEXT_BYTES} bytes (the most a trace file may hold)")
                    }
                    lzma_rs::error::Error::IoError(e) => {
                        format!("cannot decompress into {}: {e}", tmp.display())
                    }
                    e => format!("not a valid xz stream: {e}"),
                },
            })?;
    }
    out.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    Ok((out, temp))
}

/// Where a kernel's parsed thread blocks come from, with what their parsing found.
pub(crate) struct Source {
    pub(crate) kind: Kind,
    /// Per block (file order): its thread instructions once parsed, `u64::MAX` before.
    threads: Vec<AtomicU64>,
    /// The unknown opcodes of each parsed block that has any, by block index.
    unknown: Mutex<Vec<(u32, Unknown)>>,
    ops: Mutex<OpCache>,
    pub(crate) live: Arc<AtomicUsize>,
    peak: AtomicUsize,
}

pub(crate) enum Kind {
    /// Parsed at load.
    Parsed(Vec<Arc<TraceBlock>>),
    /// Read from the file (or the decompressed copy of an `.xz` file) when asked for.
    File {
        file: std::fs::File,
        _temp: Option<TempFile>,
        #[cfg(not(unix))]
        lock: Mutex<()>,
    },
}

impl Source {
    pub(crate) fn new(kind: Kind, blocks: usize) -> Source {
        Source {
            kind,
            threads: (0..blocks).map(|_| AtomicU64::new(u64::MAX)).collect(),
            unknown: Mutex::new(Vec::new()),
            ops: Mutex::new(OpCache::default()),
            live: Arc::new(AtomicUsize::new(0)),
            peak: AtomicUsize::new(0),
        }
    }

    /// The blocks, when parsed at load.
    pub(crate) fn parsed(&self) -> Option<&[Arc<TraceBlock>]> {
        match &self.kind {
            Kind::Parsed(b) => Some(b),
            Kind::File { .. } => None,
        }
    }

    /// Records what parsing block `i` found.
    pub(crate) fn record(&self, i: usize, b: &TraceBlock, unknown: Vec<(String, u64)>) {
        self.threads[i].store(b.thread_instructions(), Ordering::Relaxed);
        if !unknown.is_empty() {
            let mut u = self.unknown.lock().unwrap_or_else(|e| e.into_inner());
            if !u.iter().any(|(at, _)| *at == i as u32) {
                u.push((i as u32, unknown));
            }
        }
        let now = self.live.load(Ordering::Relaxed);
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    pub(crate) fn block(&self, k: &TraceKernel, i: usize) -> Result<Arc<TraceBlock>, TraceError> {
        if let Kind::Parsed(b) = &self.kind {
            return Ok(b[i].clone());
        }
        // The block's text goes into a buffer kept by the thread (grown, never zeroed again), not
        // into a fresh zeroed allocation per block; a buffer grown past `KEEP_BYTES` is let go.
        thread_local! {
            static TEXT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        const KEEP_BYTES: usize = 16 << 20;
        TEXT.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => {
                let r = self.read_block(k, i, &mut buf);
                if buf.capacity() > KEEP_BYTES {
                    *buf = Vec::new();
                }
                r
            }
            Err(_) => self.read_block(k, i, &mut Vec::new()),
        })
    }

    /// Reads and parses block `i` of a kernel read from its file, with `buf` for its text.
    fn read_block(
        &self,
        k: &TraceKernel,
        i: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Arc<TraceBlock>, TraceError> {
        let e = &k.blocks[i];
        let file = k.file.display().to_string();
        let io = |source| TraceError::Io {
            file: file.clone(),
            source,
        };
        let len = e.bytes as usize;
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let buf = &mut buf[..len];
        match &self.kind {
            Kind::Parsed(b) => return Ok(b[i].clone()),
            #[cfg(unix)]
            Kind::File { file: f, .. } => {
                use std::os::unix::fs::FileExt;
                f.read_exact_at(buf, e.offset).map_err(io)?;
            }
            #[cfg(not(unix))]
            Kind::File { file: f, lock, .. } => {
                let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
                use std::io::Read;
                let mut f: &std::fs::File = f;
                f.seek(std::io::SeekFrom::Start(e.offset)).map_err(io)?;
                f.read_exact(buf).map_err(io)?;
            }
        }
        let buf = &*buf;
        let text = std::str::from_utf8(buf).map_err(|err| {
            let at = err.valid_up_to();
            let start = buf[..at]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1);
            let line = e.line + buf[..at].iter().filter(|&&c| c == b'\n').count() as u32;
            not_utf8(&file, line, &buf[start..], at - start)
        })?;
        let ops = std::mem::take(&mut *self.ops.lock().unwrap_or_else(|e| e.into_inner()));
        let mut r = Reader::for_block(&file, k, e, ops, &self.live);
        let res = r.read_block(text, e);
        *self.ops.lock().unwrap_or_else(|e| e.into_inner()) = std::mem::take(&mut r.ops);
        let (b, unknown) = res?;
        self.record(i, &b, unknown);
        Ok(Arc::new(b))
    }

    pub(crate) fn thread_instructions(&self) -> u64 {
        self.threads
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .filter(|&t| t != u64::MAX)
            .sum()
    }

    pub(crate) fn unknown_opcodes(&self) -> Vec<(String, u64)> {
        let mut per_block = self
            .unknown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        per_block.sort_by_key(|(i, _)| *i);
        let mut all: Vec<(String, u64)> = Vec::new();
        for (_, list) in per_block {
            for (op, n) in list {
                match all.iter_mut().find(|u| u.0 == op) {
                    Some(u) => u.1 += n,
                    None => all.push((op, n)),
                }
            }
        }
        all
    }

    pub(crate) fn resident(&self) -> (usize, usize) {
        let now = self.live.load(Ordering::Relaxed);
        (now, self.peak.load(Ordering::Relaxed).max(now))
    }
}
