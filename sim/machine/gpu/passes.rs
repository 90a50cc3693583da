//! How a window's passes share the simulation domains among the pool's threads: one task per
//! domain with idle threads stealing (running a window, whose work per domain is not known in
//! advance), or one run of consecutive domains per thread of about equal weight (receiving the
//! crossbar messages, whose work per domain is known and small: a task per domain would cost more
//! than its work). Either way each domain is handed to exactly one task and the results do not
//! depend on the threads; the first error in domain order is returned.

use super::super::domain::{PartDomain, SmDomain, Work};
use super::Gpu;
use rayon::prelude::*;

/// How [`Gpu::each_domain`] shares a pass's domains among the pool's threads.
#[derive(Clone, Copy)]
pub(super) enum Balance {
    /// One task per domain, idle threads stealing: for passes whose work per domain is not known
    /// in advance (running a window).
    Steal,
    /// One run of consecutive domains per thread, of about equal numbers of crossbar messages in
    /// their inboxes: for receiving them (work known per domain, and small).
    ByInbox,
}

/// The lengths of at most `threads` consecutive non-empty runs that cover `weights` in order, each
/// of about an equal share of their sum (a run ends once it holds its share of what is left).
fn weighted_runs(weights: &[usize], threads: usize) -> Vec<usize> {
    let mut runs = Vec::with_capacity(threads);
    let (mut at, mut left) = (0, weights.iter().sum::<usize>());
    for k in (1..=threads.max(1)).rev() {
        let rest = weights.len() - at;
        if rest == 0 {
            break;
        }
        if k == 1 || rest == 1 {
            runs.push(rest);
            break;
        }
        let share = left.div_ceil(k);
        let (mut n, mut w) = (0, 0);
        while n < rest - 1 && (n == 0 || w < share) {
            w += weights[at + n];
            n += 1;
        }
        runs.push(n);
        at += n;
        left -= w;
    }
    runs
}

impl Gpu<'_> {
    /// Runs `f` on every domain that `pick` selects: in parallel with a pool, else one after
    /// another. The first error in domain order (SMs, then partitions) is returned. `balance`: how
    /// the domains are shared among the pool's threads.
    pub(super) fn each_domain<E: Send>(
        &mut self,
        pick_sm: impl Fn(&SmDomain) -> bool,
        pick_part: impl Fn(&PartDomain) -> bool,
        balance: Balance,
        f: impl Fn(&mut Work) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let mut work: Vec<Work> = self
            .sms
            .iter_mut()
            .filter(|d| pick_sm(d))
            .map(Work::Sm)
            .chain(
                self.parts
                    .iter_mut()
                    .filter(|d| pick_part(d))
                    .map(Work::Part),
            )
            .collect();
        if !self.parallel || work.len() <= 1 {
            return work.iter_mut().try_for_each(f);
        }
        match balance {
            Balance::Steal => {
                let res: Vec<Result<(), E>> = work.par_iter_mut().map(&f).collect();
                res.into_iter().collect()
            }
            Balance::ByInbox => {
                // Consecutive runs of about equal weight, one per thread: a few tasks instead of
                // one per domain, whose work is small each.
                let weights: Vec<usize> = work.iter().map(Work::inbox_len).collect();
                let mut runs: Vec<&mut [Work]> = Vec::new();
                let mut rest = &mut work[..];
                for n in weighted_runs(&weights, rayon::current_num_threads()) {
                    let (run, tail) = std::mem::take(&mut rest).split_at_mut(n);
                    runs.push(run);
                    rest = tail;
                }
                let res: Vec<Result<(), E>> = runs
                    .par_iter_mut()
                    .map(|run| run.iter_mut().try_for_each(&f))
                    .collect();
                res.into_iter().collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::weighted_runs;

    /// Every weight in exactly one run, in order, each run non-empty.
    fn covers(weights: &[usize], runs: &[usize]) -> bool {
        runs.iter().all(|&n| n > 0) && runs.iter().sum::<usize>() == weights.len()
    }

    #[test]
    fn runs_cover_the_domains_in_order_with_about_equal_weight() {
        let w = [3, 1, 1, 1, 2, 2, 1, 1];
        let r = weighted_runs(&w, 2);
        assert_eq!(r, vec![4, 4], "6 and 6");
        let w = [10, 1, 1, 1, 1];
        assert_eq!(
            weighted_runs(&w, 2),
            vec![1, 4],
            "a heavy first domain is a run alone"
        );
        let w: Vec<usize> = (0..100).map(|i| 1 + i % 3).collect();
        for threads in 1..=8 {
            let r = weighted_runs(&w, threads);
            assert!(covers(&w, &r), "{threads} threads: {r:?}");
            assert!(r.len() <= threads);
            let total: usize = w.iter().sum();
            let mut at = 0;
            for &n in &r {
                let sum: usize = w[at..at + n].iter().sum();
                assert!(
                    sum <= total.div_ceil(threads) + 3,
                    "{threads} threads: run of {sum}"
                );
                at += n;
            }
        }
    }

    #[test]
    fn fewer_domains_than_threads_and_zero_weights_give_non_empty_runs() {
        assert_eq!(weighted_runs(&[5, 5], 8), vec![1, 1]);
        assert_eq!(weighted_runs(&[7], 4), vec![1]);
        assert!(weighted_runs(&[], 4).is_empty());
        let r = weighted_runs(&[0, 0, 0, 0, 0], 2);
        assert!(covers(&[0; 5], &r), "{r:?}");
        assert_eq!(weighted_runs(&[1, 2, 3], 0), vec![3], "no pool: one run");
    }
}
