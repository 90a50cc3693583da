//! Progress of long work, shown on stderr: a bar on a terminal, and periodic plain lines elsewhere
//! (Slurm logs, pipes, CI), each with done/total, the rate and the estimated time left.
//!
//! One [`Progress`] per piece of work (`litmus` tests, `measure` cases, `compare` simulations, the
//! points of a sweep plan). It is `Sync`: rayon workers call [`Progress::inc`] as they finish items.
//! Work that reports from inside a loop it does not own (the machine's event loop for `run` and
//! `--races`) takes a `&dyn Report` and calls [`Report::update`] with its own measure of done/total.
//!
//! `run` (with or without `--races`) reports from the machine's event loop (`sim/machine/gpu.rs`):
//! `RunOptions::progress` holds a [`Report`] that is told (work-groups finished, work-groups of the
//! launch) whenever that count changes, checked once per synchronisation window.
//!
//! What it deliberately does not do: print anything for work that ends before the first line is due
//! (quick runs and tests stay quiet), draw on stdout (results go there), or estimate from anything but
//! the average rate since the start.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Seconds between two plain progress lines when stderr is not a terminal.
pub const LINE_INTERVAL: Duration = Duration::from_secs(10);

/// Something that is told how far a piece of work has come.
pub trait Report: Sync {
    /// `done` of `total` units are finished (`total` may grow as the work learns its size).
    fn update(&self, done: u64, total: u64);
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// A plain line at most every `interval`, and one at the end if any was printed.
    Lines { interval: Duration },
    /// Nothing (library callers, tests).
    Hidden,
}

impl Style {
    /// A bar when stderr is a terminal, plain lines every [`LINE_INTERVAL`] otherwise.
    pub fn for_stderr() -> Style {
        if std::io::stderr().is_terminal() {
            Style::Bar
        } else {
            Style::Lines {
                interval: LINE_INTERVAL,
            }
        }
    }
}

/// The progress of one piece of work: `what` (a plural noun, "tests", "points") done of a total.
pub struct Progress {
    label: String,
    what: String,
    style: Style,
    total: AtomicU64,
    done: AtomicU64,
    start: Instant,
    bar: Option<indicatif::ProgressBar>,
    /// When the last plain line was printed, and whether any was.
    last_line: Mutex<(Instant, bool)>,
}

impl Progress {
    /// Progress of `total` `what` (e.g. `Progress::new("litmus", "tests", 20)`), shown as
    /// [`Style::for_stderr`] says.
    pub fn new(label: &str, what: &str, total: u64) -> Progress {
        Progress::with_style(label, what, total, Style::for_stderr())
    }

    pub fn with_style(label: &str, what: &str, total: u64, style: Style) -> Progress {
        let bar = (style == Style::Bar).then(|| {
            let b = indicatif::ProgressBar::new(total);
            let template =
                format!("{label} [{{bar:30}}] {{pos}}/{{len}} {what}, {{elapsed}}, eta {{eta}}");
            if let Ok(s) = indicatif::ProgressStyle::with_template(&template) {
                b.set_style(s.progress_chars("=> "));
            }
            b
        });
        let start = Instant::now();
        Progress {
            label: label.to_string(),
            what: what.to_string(),
            style,
            total: AtomicU64::new(total),
            done: AtomicU64::new(0),
            start,
            bar,
            last_line: Mutex::new((start, false)),
        }
    }

    /// A progress that shows nothing.
    pub fn hidden() -> Progress {
        Progress::with_style("", "", 0, Style::Hidden)
    }

    /// `n` more units are done.
    pub fn inc(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(n);
        }
        self.maybe_line();
    }

    /// Sets the total (work that learns its size as it goes).
    pub fn set_total(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    /// Prints a message without breaking the bar.
    pub fn println(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => say(msg),
        }
    }

    /// Ends the work: the bar is cleared; after plain lines, one last line with the final count.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Style::Lines { .. } = self.style {
            let printed = self.last_line.lock().map(|l| l.1).unwrap_or(false);
            if printed {
                say(&self.line(Instant::now()));
            }
        }
    }

    fn maybe_line(&self) {
        let Style::Lines { interval } = self.style else {
            return;
        };
        let now = Instant::now();
        let Ok(mut last) = self.last_line.try_lock() else {
            // Another thread is printing right now.
            return;
        };
        if now.duration_since(last.0) < interval {
            return;
        }
        *last = (now, true);
        say(&self.line(now));
    }

    /// The plain line: `LABEL: DONE/TOTAL WHAT (P%), RATE WHAT/s, elapsed E, eta T`.
    fn line(&self, now: Instant) -> String {
        format_line(
            &self.label,
            &self.what,
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
            now.duration_since(self.start),
        )
    }
}

impl Progress {
    /// Runs `f` (which prints to stdout) without the bar drawn over its output.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// A [`Report`] for one part of this work that starts `base` units in: its `update(done, _)`
    /// sets this progress to `base + done` (a test's iterations within all tests' iterations).
    pub fn part(&self, base: u64) -> Part<'_> {
        Part { whole: self, base }
    }
}

/// See [`Progress::part`].
pub struct Part<'a> {
    whole: &'a Progress,
    base: u64,
}

impl Report for Part<'_> {
    fn update(&self, done: u64, _total: u64) {
        let whole = self.whole.total.load(Ordering::Relaxed);
        self.whole.update(self.base + done, whole);
    }
}

impl Report for Progress {
    fn update(&self, done: u64, total: u64) {
        if total != self.total.load(Ordering::Relaxed) {
            self.set_total(total);
        }
        let before = self.done.swap(done, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
        if done != before {
            self.maybe_line();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // A bar left behind by an early return (an error) must not stay on the screen.
        if let Some(b) = &self.bar {
            if !b.is_finished() {
                b.finish_and_clear();
            }
        }
    }
}

/// Writes a line to stderr, ignoring a failure: `eprintln!` panics when stderr is a closed pipe
/// (`gpumemsim litmus DIR 2>&1 | head`), and with stderr gone there is nobody left to tell.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `LABEL: DONE/TOTAL WHAT (P%), RATE WHAT/s, elapsed E, eta T` (the ETA from the average rate).
pub fn format_line(label: &str, what: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let pct = if total > 0 {
        format!(" ({:.0}%)", 100.0 * done as f64 / total as f64)
    } else {
        String::new()
    };
    let eta = if done >= total {
        "done".to_string()
    } else if rate > 0.0 {
        format!("eta {}", clock((total - done) as f64 / rate))
    } else {
        "eta unknown".to_string()
    };
    format!(
        "{label}: {done}/{total} {what}{pct}, {} {what}/s, elapsed {}, {eta}",
        rate_text(rate),
        clock(secs)
    )
}

fn rate_text(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else if r >= 1.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.3}")
    }
}

/// `1h02m03s`, `2m03s`, `4s`.
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_give_done_total_rate_and_eta() {
        let l = format_line("litmus", "tests", 25, 100, Duration::from_secs(50));
        assert_eq!(
            l,
            "litmus: 25/100 tests (25%), 0.500 tests/s, elapsed 50s, eta 2m30s"
        );
        let l = format_line("plan", "points", 10, 10, Duration::from_secs(3725));
        assert!(l.ends_with("elapsed 1h02m05s, done"), "{l}");
        let l = format_line("x", "cases", 0, 5, Duration::ZERO);
        assert!(l.ends_with("eta unknown"), "{l}");
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let p = Progress::with_style("t", "items", 1000, Style::Hidden);
        use rayon::prelude::*;
        (0..1000).into_par_iter().for_each(|_| p.inc(1));
        assert_eq!(p.done.load(Ordering::Relaxed), 1000);
        p.update(10, 2000);
        assert_eq!(
            (
                p.done.load(Ordering::Relaxed),
                p.total.load(Ordering::Relaxed)
            ),
            (10, 2000)
        );
        p.finish();
    }
}
