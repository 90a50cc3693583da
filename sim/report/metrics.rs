//! Error metrics for simulated-versus-measured pairs, shown beside the scatter chart.
//!
//! One sign convention across the project (STYLE.md): a positive error means the simulator is too slow,
//! i.e. `(simulated - measured) / measured > 0`. Pairs with a non-positive or non-finite measured
//! value carry no relative error and are left out (and counted in `skipped`).

use serde::{Deserialize, Serialize};

/// Summary of relative errors over a set of `(measured, simulated)` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Pairs used.
    pub n: usize,
    /// Pairs left out (measured ≤ 0 or either value not finite).
    pub skipped: usize,
    /// Mean of `(sim - meas) / meas`: positive = the simulator is too slow on average.
    pub mean_error: f64,
    /// Mean of `|sim - meas| / meas`.
    pub mean_abs_error: f64,
    /// Largest `|sim - meas| / meas`.
    pub max_abs_error: f64,
    /// Pearson correlation of the two sides (NaN with fewer than two pairs or a constant side).
    pub correlation: f64,
}

impl ErrorSummary {
    /// `None` when no pair is usable.
    pub fn of(pairs: &[(f64, f64)]) -> Option<ErrorSummary> {
        let used: Vec<(f64, f64)> = pairs
            .iter()
            .copied()
            .filter(|(m, s)| m.is_finite() && s.is_finite() && *m > 0.0)
            .collect();
        if used.is_empty() {
            return None;
        }
        let n = used.len() as f64;
        let rel: Vec<f64> = used.iter().map(|(m, s)| (s - m) / m).collect();
        let (mm, ms) = (
            used.iter().map(|p| p.0).sum::<f64>() / n,
            used.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let cov: f64 = used.iter().map(|(m, s)| (m - mm) * (s - ms)).sum();
        let vm: f64 = used.iter().map(|(m, _)| (m - mm).powi(2)).sum();
        let vs: f64 = used.iter().map(|(_, s)| (s - ms).powi(2)).sum();
        Some(ErrorSummary {
            n: used.len(),
            skipped: pairs.len() - used.len(),
            mean_error: rel.iter().sum::<f64>() / n,
            mean_abs_error: rel.iter().map(|r| r.abs()).sum::<f64>() / n,
            max_abs_error: rel.iter().fold(0.0, |a, r| a.max(r.abs())),
            correlation: if used.len() < 2 || vm == 0.0 || vs == 0.0 {
                f64::NAN
            } else {
                cov / (vm.sqrt() * vs.sqrt())
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_error_means_the_simulator_is_too_slow() {
        let e = ErrorSummary::of(&[(100.0, 110.0), (200.0, 220.0), (0.0, 5.0)]).unwrap();
        assert_eq!((e.n, e.skipped), (2, 1));
        assert!((e.mean_error - 0.1).abs() < 1e-12);
        assert!((e.mean_abs_error - 0.1).abs() < 1e-12);
        assert!((e.correlation - 1.0).abs() < 1e-12);
        let fast = ErrorSummary::of(&[(100.0, 50.0)]).unwrap();
        assert!(fast.mean_error < 0.0 && fast.correlation.is_nan());
        assert!(ErrorSummary::of(&[(0.0, 1.0)]).is_none());
    }
}
