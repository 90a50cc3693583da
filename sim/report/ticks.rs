//! Axis coordinates with our own ticks: decades (and 2, 5 multiples over short spans) on log axes,
//! 1-2-5 steps on linear axes, category centres on bar charts; and compact tick text.
//!
//! Not here: what the axes show (the chart description in `plot.rs`) and drawing (`draw.rs`).

use super::plot::Scale;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use std::ops::Range;

#[derive(Clone)]
pub(super) struct Coord {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
}

impl Coord {
    pub fn categories(n: usize) -> Coord {
        Coord {
            scale: Scale::Linear,
            lo: 0.0,
            hi: n as f64,
            major: (0..n).map(|i| i as f64 + 0.5).collect(),
            minor: vec![],
        }
    }

    /// Fits a range around `(lo, hi)` (the data extent) or uses `fixed`. `zero_if_near` pulls a linear
    /// range of non-negative data down to zero when the data start below half their maximum, so that
    /// curves over a wide range are not magnified into a false slope.
    pub fn fit(
        scale: Scale,
        (lo, hi): (f64, f64),
        fixed: Option<(f64, f64)>,
        zero_if_near: bool,
    ) -> Coord {
        match scale {
            Scale::Linear => {
                let (mut lo, mut hi) = fixed.unwrap_or((lo, hi));
                if fixed.is_none() {
                    if zero_if_near && lo > 0.0 && lo <= 0.5 * hi {
                        lo = 0.0;
                    }
                    if lo == hi {
                        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
                        lo -= d;
                        hi += d;
                    }
                    let pad = 0.03 * (hi - lo);
                    // Non-negative data never get a negative axis (cycles from 26 started at -50k).
                    lo = if lo == 0.0 {
                        0.0
                    } else if lo > 0.0 {
                        (lo - pad).max(0.0)
                    } else {
                        lo - pad
                    };
                    hi = if hi == 0.0 { 0.0 } else { hi + pad };
                }
                if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
                    hi = lo + 1.0;
                }
                let step = nice_step((hi - lo) / 6.0);
                if fixed.is_none() {
                    lo = (lo / step).floor() * step;
                    hi = (hi / step).ceil() * step;
                }
                let first = (lo / step).ceil() as i64;
                let last = (hi / step).floor() as i64;
                let major: Vec<f64> = (first..=last).map(|k| snap(k as f64 * step)).collect();
                let minor: Vec<f64> = (2 * first - 1..=2 * last + 1)
                    .map(|k| k as f64 * step / 2.0)
                    .filter(|v| *v >= lo && *v <= hi)
                    .collect();
                Coord {
                    scale,
                    lo,
                    hi,
                    major,
                    minor,
                }
            }
            Scale::Log => {
                let (mut lo, mut hi) = fixed.filter(|(a, b)| *a > 0.0 && b > a).unwrap_or((lo, hi));
                if fixed.is_none() {
                    // Snap outwards to 1, 2 or 5 times a power of ten: whole decades over wide ranges,
                    // without a decade of empty space around a narrow one.
                    let steps = |v: f64| {
                        let d = 10f64.powf(v.log10().floor());
                        [d, 2.0 * d, 5.0 * d, 10.0 * d]
                    };
                    lo = steps(lo)
                        .into_iter()
                        .rfind(|s| *s <= lo * (1.0 + 1e-9))
                        .unwrap_or(lo);
                    hi = steps(hi)
                        .into_iter()
                        .find(|s| *s >= hi * (1.0 - 1e-9))
                        .unwrap_or(hi);
                    if hi <= lo {
                        let both = steps(lo);
                        lo = if both[0] < lo { both[0] } else { lo / 2.0 };
                        hi = lo * 10.0;
                    }
                }
                let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
                let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
                let decades: Vec<f64> = (d0..=d1).map(|d| 10f64.powi(d)).filter(within).collect();
                let mult = |ms: &[f64]| -> Vec<f64> {
                    (d0..=d1)
                        .flat_map(|d| ms.iter().map(move |m| m * 10f64.powi(d)))
                        .filter(within)
                        .collect()
                };
                // Thin decades over very wide ranges; add 2 and 5 when only one or two decades show.
                let mut major = if decades.len() > 12 {
                    let k = decades.len().div_ceil(10);
                    decades.iter().copied().step_by(k).collect()
                } else if decades.len() <= 2 {
                    mult(&[1.0, 2.0, 5.0])
                } else {
                    decades
                };
                // A fitted end between decades (2 or 5 times one) is labelled too when it lies at
                // least half a decade from the nearest label, so that no end of the axis goes bare
                // (a throughput from 0.002 shows "0.002" below "0.01").
                if fixed.is_none() && (3..=12).contains(&major.len()) {
                    if major.first().is_some_and(|&m| m / lo >= 3.0) {
                        major.insert(0, lo);
                    }
                    if major.last().is_some_and(|&m| hi / m >= 3.0) {
                        major.push(hi);
                    }
                }
                let minor = if (d1 - d0) <= 12 {
                    mult(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
                } else {
                    vec![]
                };
                Coord {
                    scale,
                    lo,
                    hi,
                    major,
                    minor,
                }
            }
        }
    }

    pub fn fraction(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        }
    }
}

/// The 1, 2, 2.5 or 5 times a power of ten nearest to `raw` (a sixth of the span): five to eight ticks.
fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .min_by(|a, b| (raw / a).ln().abs().total_cmp(&(raw / b).ln().abs()))
        .unwrap_or(p)
}

/// Removes binary noise from k·step (0.30000000000000004 → 0.3).
pub(super) fn snap(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 12 - v.abs().log10().floor() as i32;
    let f = 10f64.powi(digits.clamp(0, 300));
    (v * f).round() / f
}

impl Ranged for Coord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = self.fraction(*v);
        // Values far outside the range (or on a log axis, ≤ 0) are pinned just outside the plot.
        let f = if f.is_finite() {
            f.clamp(-0.5, 1.5)
        } else {
            -0.5
        };
        limit.0 + ((limit.1 - limit.0) as f64 * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.max_num_points() == 0 {
            return vec![];
        }
        match hint.weight() {
            KeyPointWeight::Bold => self.major.clone(),
            KeyPointWeight::Any => {
                let mut all: Vec<f64> = self.major.iter().chain(&self.minor).copied().collect();
                all.sort_by(f64::total_cmp);
                all.dedup();
                all
            }
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Compact tick text: `0`, `0.25`, `12`, `1500`, `65.5k`, `1.2M`, `1e-05`.
pub fn format_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e4 {
        let (d, s) = if a >= 1e12 {
            (1e12, "T")
        } else if a >= 1e9 {
            (1e9, "G")
        } else if a >= 1e6 {
            (1e6, "M")
        } else {
            (1e3, "k")
        };
        let q = v / d;
        // `16.38k` reads as neither 16384 nor a round number: a value that one decimal does not
        // hold is written out while it has at most six digits, else to three significant ones.
        if (q * 10.0 - (q * 10.0).round()).abs() < 1e-9 {
            format!("{}{s}", trim(&format!("{q:.1}")))
        } else if a < 1e6 && v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            let decimals = 2usize.saturating_sub(q.abs().log10().floor().max(0.0) as usize);
            format!("{}{s}", trim(&format!("{q:.decimals$}")))
        }
    } else if a >= 1e-3 {
        trim(&format!("{v:.3}"))
    } else {
        format!("{v:.0e}")
    }
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_ticks_are_decades_inside_the_range() {
        let c = Coord::fit(Scale::Log, (1.0, 65536.0), None, false);
        assert_eq!((c.lo, c.hi), (1.0, 100000.0));
        assert_eq!(c.major, vec![1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]);
        let short = Coord::fit(Scale::Log, (64.0, 256.0), None, false);
        assert_eq!((short.lo, short.hi), (50.0, 500.0));
        assert_eq!(short.major, vec![50.0, 100.0, 200.0, 500.0]);
    }

    #[test]
    fn log_axis_ends_between_decades_are_labelled_when_far_enough_from_one() {
        // 0.0022 .. 90: fitted to 0.002 .. 100; 0.002 is labelled below 0.01.
        let c = Coord::fit(Scale::Log, (0.0022, 90.0), None, false);
        assert_eq!((c.lo, c.hi), (0.002, 100.0));
        assert_eq!(c.major.first(), Some(&0.002));
        assert_eq!(c.major.last(), Some(&100.0));
        // 0.006 .. 150: fitted to 0.005 .. 200; 0.005 is a factor 2 from 0.01 (left
        // bare, labels would crowd), 200 is 2 times 100 (also bare).
        let c = Coord::fit(Scale::Log, (0.006, 150.0), None, false);
        assert_eq!((c.lo, c.hi), (0.005, 200.0));
        assert_eq!(c.major, vec![0.01, 0.1, 1.0, 10.0, 100.0]);
        // 3 .. 4500: fitted to 2 .. 5000, both ends labelled.
        let c = Coord::fit(Scale::Log, (3.0, 4500.0), None, false);
        assert_eq!((c.lo, c.hi), (2.0, 5000.0));
        assert_eq!(c.major, vec![2.0, 10.0, 100.0, 1000.0, 5000.0]);
        // A fixed range is left as given.
        let c = Coord::fit(Scale::Log, (3.0, 4500.0), Some((2.0, 5000.0)), false);
        assert_eq!(c.major, vec![10.0, 100.0, 1000.0]);
    }

    #[test]
    fn linear_axis_ticks_are_one_two_five_steps() {
        let c = Coord::fit(Scale::Linear, (0.0, 0.9), None, false);
        assert_eq!(c.major.first(), Some(&0.0));
        let steps: Vec<f64> = c.major.windows(2).map(|w| snap(w[1] - w[0])).collect();
        assert!(steps.iter().all(|s| *s == steps[0]));
        assert!([0.1, 0.2, 0.25, 0.5].contains(&steps[0]), "{steps:?}");
        assert!(c.hi >= 0.9);
    }

    #[test]
    fn tick_text_is_compact() {
        let got: Vec<String> = [0.0, 0.25, 12.0, 1500.0, 65536.0, 1.2e6, 1e-5]
            .iter()
            .map(|v| format_tick(*v))
            .collect();
        assert_eq!(got, ["0", "0.25", "12", "1500", "65536", "1.2M", "1e-5"]);
    }

    /// Padding does not take non-negative data below zero.
    #[test]
    fn a_linear_axis_of_non_negative_data_starts_at_or_above_zero() {
        let c = Coord::fit(Scale::Linear, (26.0, 206626.0), None, false);
        assert_eq!(c.lo, 0.0);
        assert_eq!(c.major.first(), Some(&0.0));
        let c = Coord::fit(Scale::Linear, (-26.0, 100.0), None, false);
        assert!(c.lo < -26.0);
    }

    /// Round values abbreviated, others written out (not `16.38k`), large ones to three digits.
    #[test]
    fn tick_text_is_readable_for_powers_of_two_and_round_values() {
        let got: Vec<String> = [
            16384.0,
            20000.0,
            65500.0,
            -25000.0,
            250000.0,
            1.25e6,
            16777216.0,
            123456789.0,
            4.0e9,
            2.5e12,
        ]
        .iter()
        .map(|v| format_tick(*v))
        .collect();
        assert_eq!(
            got,
            ["16384", "20k", "65.5k", "-25k", "250k", "1.25M", "16.8M", "123M", "4G", "2.5T"]
        );
    }
}
