//! Progress of a sweep as plain lines, for logs (a Slurm task's output, CI, `nohup`): where a terminal
//! would show a bar, a line every interval with the points done out of the total, the rate and the
//! estimated time left, plus a line when the run starts and when it ends.
//!
//! ```text
//! [    0s] shard 1 of 4: 45 points, 12 already done, running 33 on 8 threads
//! [ 1m00s] 20/45 points done (8 now), 0 failed, 0.13 points/s, ETA 3m05s
//! [ 4m02s] 45/45 points done (33 now), 1 failed, 0.14 points/s
//! ```
//!
//! The rate counts the points finished by this run over its elapsed time; the ETA assumes the
//! remaining points cost what the finished ones did (points of a sweep differ in cost: it is a rough
//! guide). A line is written at least every interval even when no point finishes, so that a log shows
//! the run is alive. Implements [`super::exec::Progress`]; the terminal bar lives in the CLI.
//!
//! What this does not do: draw a bar, or read a clock other than the monotonic one (elapsed time, no
//! dates; the batch script's header line carries the date).

use super::exec::{Outcome, Progress};
use super::plan::PointInfo;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    start: Option<Instant>,
    /// Points of the selection, and how many were done before this run.
    total: usize,
    before: usize,
    now: usize,
    failed: usize,
    stop: bool,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// Writes progress lines to a sink (stderr in the CLI) from a ticker thread.
pub struct Lines {
    shared: Shared,
    out: Arc<Mutex<Box<dyn Write + Send>>>,
    ticker: Mutex<Option<JoinHandle<()>>>,
    interval: Duration,
    /// Said in the start line, e.g. `shard 1 of 4`.
    label: String,
    threads: usize,
}

impl Lines {
    pub fn new(
        out: Box<dyn Write + Send>,
        interval: Duration,
        label: String,
        threads: usize,
    ) -> Lines {
        Lines {
            shared: Arc::new((Mutex::new(State::default()), Condvar::new())),
            out: Arc::new(Mutex::new(out)),
            ticker: Mutex::new(None),
            interval,
            label,
            threads,
        }
    }

    /// The end line, and the ticker stopped. Also done on drop.
    pub fn finish(&self) {
        let ticker = self.ticker.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(t) = ticker else { return };
        {
            let (m, cv) = &*self.shared;
            let mut s = m.lock().unwrap_or_else(|p| p.into_inner());
            s.stop = true;
            cv.notify_all();
        }
        let _ = t.join();
        let s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        say(&self.out, &line(&s, Instant::now()));
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The ticker: a line every `interval` until `stop`. The stop flag is checked before every wait and
/// after every wake-up (a predicate loop), so a `finish` that sets it before this thread first takes
/// the lock is seen at once instead of after a whole interval (the lost wake-up of issue 43: a sweep
/// sat 60 s after its last point), and a spurious wake-up neither prints nor restarts the interval.
fn tick(shared: &(Mutex<State>, Condvar), out: &Mutex<Box<dyn Write + Send>>, interval: Duration) {
    let (m, cv) = shared;
    let mut s = m.lock().unwrap_or_else(|p| p.into_inner());
    let mut due = Instant::now() + interval;
    while !s.stop {
        let now = Instant::now();
        if now >= due {
            say(out, &line(&s, now));
            due = now + interval;
            continue;
        }
        s = cv
            .wait_timeout(s, due - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

fn say(out: &Mutex<Box<dyn Write + Send>>, text: &str) {
    let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(o, "{text}");
    let _ = o.flush();
}

/// `1h02m`, `3m05s`, `42s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The progress line for `s` at `at`.
fn line(s: &State, at: Instant) -> String {
    let elapsed = s.start.map(|t| at.duration_since(t)).unwrap_or_default();
    let done = s.before + s.now;
    let pct = if s.total == 0 {
        100.0
    } else {
        100.0 * done as f64 / s.total as f64
    };
    let mut text = format!(
        "[{:>6}] {done}/{} points done ({pct:.0}%, {} now), {} failed",
        duration(elapsed),
        s.total,
        s.now,
        s.failed
    );
    let secs = elapsed.as_secs_f64();
    if s.now > 0 && secs > 0.0 {
        let rate = s.now as f64 / secs;
        text.push_str(&format!(
            ", {} points/s",
            crate::stats::fmt_num(round3(rate))
        ));
        let left = s.total - done.min(s.total);
        if left > 0 {
            let eta = Duration::from_secs_f64(left as f64 / rate);
            text.push_str(&format!(", ETA {}", duration(eta)));
        }
    }
    text
}

/// Three significant digits.
fn round3(x: f64) -> f64 {
    if x <= 0.0 {
        return x;
    }
    let p = 10f64.powi(2 - x.log10().floor() as i32);
    (x * p).round() / p
}

impl Progress for Lines {
    fn start(&self, to_run: usize, already_done: usize) {
        let now = Instant::now();
        {
            let mut s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
            s.start = Some(now);
            s.total = to_run + already_done;
            s.before = already_done;
        }
        say(
            &self.out,
            &format!(
                "[{:>6}] {}: {} points, {already_done} already done, running {to_run} on {} thread{}",
                duration(Duration::ZERO),
                self.label,
                to_run + already_done,
                self.threads,
                if self.threads == 1 { "" } else { "s" }
            ),
        );
        let shared = self.shared.clone();
        let out = self.out.clone();
        let interval = self.interval;
        let handle = std::thread::spawn(move || tick(&shared, &*out, interval));
        *self.ticker.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    fn finished(&self, _: &PointInfo, outcome: &Outcome) {
        let mut s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        s.now += 1;
        s.failed += matches!(outcome, Outcome::Error { .. }) as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_done_over_total_rate_and_eta() {
        let t0 = Instant::now();
        let s = State {
            start: Some(t0),
            total: 45,
            before: 12,
            now: 8,
            failed: 1,
            stop: false,
        };
        let l = line(&s, t0 + Duration::from_secs(60));
        assert_eq!(
            l,
            "[ 1m00s] 20/45 points done (44%, 8 now), 1 failed, 0.133 points/s, ETA 3m07s"
        );
        let done = State { now: 33, ..s };
        let l = line(&done, t0 + Duration::from_secs(242));
        assert!(
            l.starts_with("[ 4m02s] 45/45 points done (100%, 33 now)") && !l.contains("ETA"),
            "{l}"
        );
        assert_eq!(duration(Duration::from_secs(3725)), "1h02m");
    }

    /// A sink the test can read.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The stop flag set before the ticker first waits (the order a short shard produces) ends the
    /// ticker at once. Deterministic: the ticker runs on this thread after the flag is set, with an
    /// interval of an hour; before the fix it waited the whole hour.
    #[test]
    fn a_stop_set_before_the_ticker_waits_is_not_lost() {
        let shared = (
            Mutex::new(State {
                stop: true,
                ..State::default()
            }),
            Condvar::new(),
        );
        let buf = Buf::default();
        let out: Mutex<Box<dyn Write + Send>> = Mutex::new(Box::new(buf.clone()));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|sc| {
            sc.spawn(|| {
                tick(&shared, &out, Duration::from_secs(3600));
                tx.send(()).unwrap();
            });
            assert!(
                rx.recv_timeout(Duration::from_secs(120)).is_ok(),
                "the ticker waited although stop was already set"
            );
        });
        assert!(buf.0.lock().unwrap().is_empty(), "no line after stop");
    }

    #[test]
    fn a_line_comes_every_interval_even_when_no_point_finishes() {
        let buf = Buf::default();
        let p = Lines::new(
            Box::new(buf.clone()),
            Duration::from_millis(20),
            "shard 0 of 2".into(),
            1,
        );
        p.start(3, 1);
        std::thread::sleep(Duration::from_millis(150));
        p.finish();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains("shard 0 of 2: 4 points, 1 already done, running 3 on 1 thread"),
            "{text}"
        );
        assert!(
            lines.len() >= 3,
            "a start line, ticks and an end line: {text}"
        );
        assert!(
            lines.iter().skip(1).all(|l| l.contains("1/4 points done")),
            "{text}"
        );
    }
}
