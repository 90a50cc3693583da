//! The clock probe: a GPU idles at a low clock and raises it under load (the H100 of
//! `reports/measured/nvidia-h100-80gb-hbm3-2026-11-27/` idles at 345 MHz and runs at 1,980 MHz), so a
//! case measured after the host paused can run at a fraction of the clock its neighbours ran at. On
//! that H100 the first campaign measured the short kernels (contention, histograms, reductions) up to
//! 5.5× slower than a second run that found the clock already raised, while the long chains agreed.
//!
//! `measure` therefore runs a fixed ALU-bound kernel (`PROBE`) until its time settles before the first
//! case; once before and once after every case; and settles again when the probe before a case is more
//! than `RESETTLE` slower than the best settled time, until it is back at that time; a case whose probe
//! after it ran that slow is measured once more (neither on a CPU adapter, whose times follow the
//! host's load). Every case records both probe times beside the reference, so a reader (and `compare`)
//! can tell a case measured at another clock.
//!
//! Models: the clock only as the probe sees it, a ratio of times of one fixed kernel. Does not: read
//! or lock clocks (wgpu can do neither), or keep the clock raised between the repetitions of a case (a
//! case's own repetitions keep the GPU busy; its spread shows when they did not).

use super::adapter::Device;
use super::harness::Compiled;
use super::schema::{ClockCheck, ShaderPath};
use super::{wgsl, DeviceError};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The probe: one sub-group's worth of work-items in one work-group, a chain of dependent additions and
/// no memory traffic but one store each. About 1.1 ms on an H100 at 1,980 MHz, 6.5 ms at 345 MHz.
pub const PROBE: &str = "\
// clock probe (device::clock): dependent register arithmetic, no memory traffic but one store each.
param ITERS = 20000
groups 1
group_size 32
buffer out: u32[32] = zero

kernel clock_probe {
    reg %i, %k, %x, %p
    mov.u32 %i, %global_id
    mov.u32 %x, 0
    mov.u32 %k, 0
loop:
    add.u32 %x, %x, 3
    add.u32 %k, %k, 1
    setp.lt.u32 %p, %k, ITERS
    @%p bra loop
    st.u32 out[%i], %x
}

check forall i in out: out[i] == 3 * ITERS
";

/// Settled: the last `STABLE_RUNS` probe times lie within `STABLE_SPREAD` of each other, after at least
/// `MIN_BUSY` of probe time in all.
pub const STABLE_RUNS: usize = 3;
pub const STABLE_SPREAD: f64 = 0.02;
pub const MIN_BUSY: Duration = Duration::from_millis(200);
/// Settling gives up (and says so) after this long or this many runs.
pub const MAX_SETTLE: Duration = Duration::from_secs(10);
pub const MAX_SETTLE_RUNS: usize = 5_000;
/// A probe this much slower than the reference before a case settles the clock again.
pub const RESETTLE: f64 = 0.05;

/// One settling: how long it took and what the probe settled at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settle {
    /// Median of the last `STABLE_RUNS` probe times, ns.
    pub probe_ns: f64,
    /// Probe runs it took.
    pub runs: usize,
    /// Probe time in all (the GPU was busy this long), ns.
    pub busy_ns: f64,
    /// False when it gave up before the probe's time settled.
    pub stable: bool,
}

/// Runs `probe` (one probe time in ns per call) until its time settles (see the constants above) and,
/// with a `target`, lies within `RESETTLE` of it; or gives up after `MAX_SETTLE_RUNS` runs or when
/// `out_of_time` says so. The target matters: on the H100 a probe repeated at the idle clock is as
/// steady as one at the raised clock, and the clock rose only after about a second of load.
pub fn settle_with<E>(
    mut probe: impl FnMut() -> Result<f64, E>,
    target: Option<f64>,
    mut out_of_time: impl FnMut() -> bool,
) -> Result<Settle, E> {
    let mut times: Vec<f64> = Vec::new();
    let mut busy = 0.0;
    loop {
        let t = probe()?;
        times.push(t);
        busy += t;
        let n = times.len();
        let mut s = times[n.saturating_sub(STABLE_RUNS)..].to_vec();
        s.sort_by(f64::total_cmp);
        let (lo, hi, median) = (s[0], s[s.len() - 1], s[s.len() / 2]);
        let stable = n >= STABLE_RUNS && hi <= lo * (1.0 + STABLE_SPREAD);
        let on_target = target.is_none_or(|t| median <= t * (1.0 + RESETTLE));
        let done = stable && on_target && busy >= MIN_BUSY.as_nanos() as f64;
        if done || n >= MAX_SETTLE_RUNS || out_of_time() {
            return Ok(Settle {
                probe_ns: median,
                runs: n,
                busy_ns: busy,
                stable: done,
            });
        }
    }
}

/// The probe compiled on one adapter, and the best settled time so far (the reference).
pub struct ClockProbe<'g> {
    compiled: Compiled<'g>,
    /// Every settling, in order.
    pub settles: Vec<Settle>,
    /// Settle again before a case whose probe ran slow: not on a CPU adapter, whose times follow the
    /// host's load rather than a clock state (settling there would only measure the noise).
    resettle: bool,
}

impl<'g> ClockProbe<'g> {
    /// Compiles the probe for `path` and settles the clock.
    pub fn start(gpu: &'g Device, path: ShaderPath) -> Result<Self, DeviceError> {
        let wl = crate::kernel::parse(PROBE, "gpu::clock::PROBE", &[])
            .expect("the clock probe is a valid kernel");
        let compiled = gpu.compile_with(&wl, wgsl::Options::default(), path)?;
        let mut p = ClockProbe {
            compiled,
            settles: Vec::new(),
            resettle: !gpu.report.is_cpu(),
        };
        p.settle()?;
        Ok(p)
    }

    /// One probe run, checked, its pass time in ns.
    pub fn time(&self) -> Result<f64, DeviceError> {
        let (out, _) = self.compiled.run_checked()?;
        out.ns.ok_or_else(|| DeviceError::NoTimestamps {
            adapter: self.compiled.workload.kernel.name.clone(),
        })
    }

    /// Runs the probe until its time settles (after the first settling: at the reference).
    pub fn settle(&mut self) -> Result<Settle, DeviceError> {
        let t0 = Instant::now();
        let target = (!self.settles.is_empty()).then(|| self.reference_ns());
        let s = settle_with(|| self.time(), target, || t0.elapsed() >= MAX_SETTLE)?;
        self.settles.push(s);
        Ok(s)
    }

    /// The reference: the fastest settled probe time.
    pub fn reference_ns(&self) -> f64 {
        self.settles
            .iter()
            .map(|s| s.probe_ns)
            .fold(f64::INFINITY, f64::min)
    }

    /// Around one case: a probe before (settling again first when it is `RESETTLE` slower than the
    /// reference), `case`, a probe after. When the probe after is `RESETTLE` slower (the clock fell
    /// while the case ran: on the H100, during host work between repetitions), the clock is settled
    /// and the case run once more; the second attempt is kept, and its record says so.
    pub fn around<T>(
        &mut self,
        mut case: impl FnMut() -> T,
    ) -> Result<(T, ClockCheck), DeviceError> {
        let mut resettled = false;
        let mut attempt =
            |p: &mut Self, resettled: &mut bool| -> Result<(T, f64, f64), DeviceError> {
                let mut before = p.time()?;
                if p.resettle && before > p.reference_ns() * (1.0 + RESETTLE) {
                    p.settle()?;
                    before = p.time()?;
                    *resettled = true;
                }
                let r = case();
                Ok((r, before, p.time()?))
            };
        let (mut r, mut before, mut after) = attempt(self, &mut resettled)?;
        if self.resettle && after > self.reference_ns() * (1.0 + RESETTLE) {
            (r, before, after) = attempt(self, &mut resettled)?;
        }
        Ok((
            r,
            ClockCheck {
                before_ns: before,
                after_ns: after,
                reference_ns: self.reference_ns(),
                resettled,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(times: &[f64]) -> Settle {
        let mut it = times.iter().copied().chain(std::iter::repeat(1e6));
        settle_with(|| Ok::<_, ()>(it.next().unwrap()), None, || false).unwrap()
    }

    #[test]
    fn settles_once_the_probe_stops_speeding_up_and_the_gpu_was_busy_long_enough() {
        // 6.5 ms at an idle clock, then the clock rises: 1.1 ms from the sixth run on.
        let mut t = vec![6.5e6, 6.5e6, 6.4e6, 3.0e6, 1.5e6];
        t.extend(std::iter::repeat_n(1.1e6, 400));
        let s = run(&t);
        assert!(s.stable);
        assert_eq!(s.probe_ns, 1.1e6);
        // 200 ms of probe time: 23.9 ms in the first five runs, then 161 runs of 1.1 ms.
        assert_eq!(s.runs, 5 + 161);
        assert!(s.busy_ns >= MIN_BUSY.as_nanos() as f64);
    }

    #[test]
    fn three_close_times_are_not_enough_before_the_gpu_was_busy() {
        let s = run(&[1e6, 1e6, 1e6, 1e6]);
        assert!(s.stable);
        assert_eq!(s.runs, 200);
    }

    #[test]
    fn settling_again_waits_for_the_reference_not_for_a_steady_idle_clock() {
        // Steady at the idle clock for 300 runs (2 s), then the clock rises.
        let mut t = vec![6.5e6; 300];
        t.extend(std::iter::repeat_n(1.1e6, 100));
        let mut it = t.iter().copied();
        let s = settle_with(|| Ok::<_, ()>(it.next().unwrap()), Some(1.1e6), || false).unwrap();
        assert!(s.stable);
        assert_eq!((s.probe_ns, s.runs), (1.1e6, 303));
        // Without a target the idle clock would have passed as settled after 200 ms.
        let mut it = t.iter().copied();
        let s = settle_with(|| Ok::<_, ()>(it.next().unwrap()), None, || false).unwrap();
        assert_eq!((s.probe_ns, s.runs), (6.5e6, 31));
    }

    #[test]
    fn a_probe_that_never_settles_gives_up_and_says_so() {
        // Alternating 1 and 2 ms never lie within 2 % of each other.
        let t: Vec<f64> = (0..MAX_SETTLE_RUNS + 10)
            .map(|i| if i % 2 == 0 { 1e6 } else { 2e6 })
            .collect();
        let s = run(&t);
        assert!(!s.stable);
        assert_eq!(s.runs, MAX_SETTLE_RUNS);
        let n = std::cell::Cell::new(0);
        let s = settle_with(
            || Ok::<_, ()>(if n.get() % 2 == 0 { 1e6 } else { 2e6 }),
            None,
            || {
                n.set(n.get() + 1);
                n.get() > 7
            },
        )
        .unwrap();
        assert!(!s.stable);
        assert_eq!(s.runs, 8);
    }

    #[test]
    fn the_probe_is_a_valid_kernel_that_checks_itself() {
        let wl = crate::kernel::parse(PROBE, "probe", &[]).unwrap();
        let (name, toml) = crate::config::PRESETS
            .iter()
            .find(|(name, _)| name.ends_with("tiny.toml"))
            .unwrap();
        let cfg = crate::config::parse_str(toml, name, &[]).unwrap();
        let r = crate::machine::run(&cfg, &wl, &Default::default()).unwrap();
        assert!(r.all_checks_pass(), "{:?}", r.checks);
    }
}
