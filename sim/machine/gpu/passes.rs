//! How a window's passes share the simulation domains among the team's threads (`team.rs`): every
//! domain an item, each thread starting on its own share and taking from the others' when done
//! (running a window, whose work per domain is not known in advance), or one run of consecutive domains per thread of about equal weight (receiving the
//! crossbar messages, whose work per domain is known and small). Either way each domain is run by
//! exactly one thread and the results do not depend on the threads; the first error in domain order
//! is returned.

use super::super::domain::{PartDomain, SmDomain, Work};
use super::super::msg::Event;
use super::super::outbox::Outgoing;
use super::team::Team;
use super::Gpu;
use std::sync::Arc;

/// How [`Gpu::each_domain`] shares a pass's domains among the pool's threads.
#[derive(Clone, Copy)]
pub(super) enum Balance {
    /// Every domain an item, each thread starting on its own share and taking from the others'
    /// when done: for passes whose work per domain is not known in advance (running a window).
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

/// Runs `f` on every item, in parallel with a team, else one after another.
pub(super) fn side_by_side<T: Send>(
    team: &Option<Arc<Team>>,
    items: &mut [T],
    f: &(impl Fn(&mut T) + Sync),
) {
    match team {
        Some(t) if items.len() > 1 => t.for_each_mut(items, f),
        _ => items.iter_mut().for_each(f),
    }
}

/// One of the barrier's two lists of the window's crossbar messages into their destinations'
/// inboxes (`Gpu::deliver`): the SMs' requests into the partitions', the partitions' responses into
/// the SMs'. Each inbox is written by one list only.
pub(super) enum Listing<'a> {
    /// The SMs' outboxes, and the partitions.
    Requests(&'a mut [Vec<Outgoing>], &'a mut [PartDomain]),
    /// The partitions' outboxes (sending domains from the number of SMs on), and the SMs.
    Responses(&'a mut [Vec<Outgoing>], &'a mut [SmDomain]),
}

impl Listing<'_> {
    /// Lists every message in its destination's inbox; `nsm`: the number of SMs, `spp`: slices per
    /// partition.
    pub(super) fn list(&mut self, nsm: usize, spp: u16) {
        const WHO: &str = "SMs send requests to slices, partitions responses to SMs";
        match self {
            Listing::Requests(mail, parts) => {
                for (from, msgs) in mail.iter_mut().enumerate() {
                    for (i, o) in msgs.iter_mut().enumerate() {
                        let Event::SliceIn(slice, _) = o.event else {
                            unreachable!("{WHO}")
                        };
                        parts[(slice / spp) as usize]
                            .inbox
                            .push(from as u32, i as u32, o);
                    }
                }
            }
            Listing::Responses(mail, sms) => {
                for (p, msgs) in mail.iter_mut().enumerate() {
                    for (i, o) in msgs.iter_mut().enumerate() {
                        let Event::L1FromXbar(sm, _) = o.event else {
                            unreachable!("{WHO}")
                        };
                        sms[sm as usize].inbox.push((nsm + p) as u32, i as u32, o);
                    }
                }
            }
        }
    }
}

impl Gpu<'_> {
    /// Runs `f` on every domain that `pick` selects: in parallel with a team, else one after
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
        let team = match &self.team {
            Some(t) if work.len() > 1 => t.clone(),
            _ => return work.iter_mut().try_for_each(f),
        };
        // Each run's first error, in domain order.
        let first = |errs: Vec<Option<E>>| errs.into_iter().flatten().next().map_or(Ok(()), Err);
        match balance {
            Balance::Steal => {
                let mut items: Vec<(Work, Option<E>)> =
                    work.into_iter().map(|w| (w, None)).collect();
                team.for_each_mut(&mut items, &|(w, e): &mut (Work, Option<E>)| {
                    *e = f(w).err()
                });
                first(items.into_iter().map(|(_, e)| e).collect())
            }
            Balance::ByInbox => {
                // Consecutive runs of about equal weight, one per thread: a few chunks instead of
                // one per domain, whose work is small each.
                let weights: Vec<usize> = work.iter().map(Work::inbox_len).collect();
                let mut runs: Vec<(&mut [Work], Option<E>)> = Vec::new();
                let mut rest = &mut work[..];
                for n in weighted_runs(&weights, team.threads()) {
                    let (run, tail) = std::mem::take(&mut rest).split_at_mut(n);
                    runs.push((run, None));
                    rest = tail;
                }
                team.for_each_mut(&mut runs, &|(run, e): &mut (&mut [Work], Option<E>)| {
                    *e = run.iter_mut().try_for_each(&f).err()
                });
                first(runs.into_iter().map(|(_, e)| e).collect())
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
