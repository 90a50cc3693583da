//! Statistics as tidy rows `location, metric, value, unit` (one schema for JSON and CSV), collected by
//! each part at the end of a run.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// The part: `gpu`, `sm3`, `sm3.l1`, `l2.slice7`, `dram.ch2`, `kernel`, ...
    pub location: String,
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub rows: Vec<Stat>,
}

impl Stats {
    pub fn push(&mut self, location: impl Into<String>, metric: &str, value: f64, unit: &str) {
        self.rows.push(Stat {
            location: location.into(),
            metric: metric.to_string(),
            value,
            unit: unit.to_string(),
        });
    }

    /// The value of `metric` at `location`, if recorded.
    pub fn get(&self, location: &str, metric: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.location == location && r.metric == metric)
            .map(|r| r.value)
    }

    /// Tidy CSV with a header line; fields containing commas or quotes are quoted.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("location,metric,value,unit\n");
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},{},{}",
                csv_field(&r.location),
                csv_field(&r.metric),
                fmt_num(r.value),
                csv_field(&r.unit)
            );
        }
        s
    }
}

/// Integers print without a fractional part, so that outputs are stable and readable.
pub fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a newline.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Whether [`write_atomic`] writes `path` in place: a device or FIFO, or one of the process's own
/// descriptors (`/dev/stdout` redirected to a file names that file, which a rename would unlink from
/// under the shell's descriptor).
pub fn written_in_place(path: &std::path::Path) -> bool {
    let descriptor = ["/dev/stdout", "/dev/stderr"].iter().any(|d| path == *d)
        || path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd");
    (descriptor && path.exists())
        || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Writes to a device, FIFO or descriptor without truncating it; the process's own standard output
/// and error through their handles, so that what the command prints there stays in order with it
/// (`> out.txt` shares one file offset).
fn write_in_place(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let fd = |n: &str| {
        path == std::path::Path::new("/dev/fd").join(n)
            || path == std::path::Path::new("/proc/self/fd").join(n)
    };
    if path == std::path::Path::new("/dev/stdout") || fd("1") {
        let mut o = std::io::stdout().lock();
        // A reader that has gone (`| head`) took what it wanted: not an error (`cli/out.rs`).
        return match o.write_all(contents).and_then(|_| o.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        };
    }
    if path == std::path::Path::new("/dev/stderr") || fd("2") {
        return std::io::stderr().lock().write_all(contents);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(contents)
}

/// Writes `contents` to `path` atomically: a temporary file in the same folder, then a rename, so that
/// no reader ever sees a half-written output.
///
/// A path that names something other than a regular file or a folder (`/dev/null`, `/dev/stdout`, a
/// FIFO) is written in place: a rename would replace the device node itself (as root) or be refused
/// by its folder. A symbolic link to a file is followed, so the link stays and its target is replaced.
pub fn write_atomic(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    if written_in_place(path) {
        return write_in_place(path, contents);
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    // (A dangling link is replaced by the file.)
    let followed = is_link.then(|| std::fs::canonicalize(path).ok()).flatten();
    let path = followed.as_deref().unwrap_or(path);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    // A failed write (a full disk) or rename leaves neither half a file nor the temporary one.
    std::fs::write(&tmp, contents)
        .and_then(|_| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

#[cfg(test)]
mod tests {
    use super::write_atomic;
    use std::os::unix::fs::FileTypeExt;

    /// A FIFO (as `/dev/stdout` or `/dev/null` would be) is written in place and stays a FIFO;
    /// renaming a temporary file over it replaced it (issue 43: `--json /dev/null` run as root would
    /// replace the machine's `/dev/null` with a file). A link to a file stays a link.
    #[test]
    fn special_files_are_written_in_place_and_links_followed() {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let d = std::env::temp_dir().join(format!("gpumemsim-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // A reader that never blocks: opened first, so the writer's open does not wait.
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        write_atomic(&fifo, b"out\n").unwrap();
        let mut got = Vec::new();
        let _ = reader.read_to_end(&mut got);
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
        assert_eq!(got, b"out\n");

        let target = d.join("target.json");
        std::fs::write(&target, "old").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let _ = std::fs::remove_dir_all(&d);
    }
}
