//! How a window's passes share the simulation domains among the team's threads (`team.rs`): every
//! domain an item, each thread starting on its own share of them and taking from the others' when
//! done (the work per domain is not known in advance, and varies from window to window). Each
//! domain is run by exactly one thread, so the results do not depend on the threads; the first
//! error in domain order is returned. Also here: running any independent items side by side (the
//! far link's two directions), and the barrier's two lists of crossbar messages.

use super::super::domain::{PartDomain, SmDomain, Work};
use super::super::msg::Event;
use super::super::outbox::Outgoing;
use super::team::Team;
use super::Gpu;

/// Runs `f` on every item, in parallel with a team, else one after another.
pub(super) fn side_by_side<T: Send>(
    team: Option<&Team>,
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
    /// another. The first error in domain order (SMs, then partitions) is returned.
    pub(super) fn each_domain<E: Send>(
        &mut self,
        pick_sm: impl Fn(&SmDomain) -> bool,
        pick_part: impl Fn(&PartDomain) -> bool,
        f: impl Fn(&mut Work) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let work = self
            .sms
            .iter_mut()
            .filter(|d| pick_sm(d))
            .map(Work::Sm)
            .chain(
                self.parts
                    .iter_mut()
                    .filter(|d| pick_part(d))
                    .map(Work::Part),
            );
        match self.team.as_deref() {
            Some(team) => {
                let mut items: Vec<(Work, Option<E>)> = work.map(|w| (w, None)).collect();
                side_by_side(Some(team), &mut items, &|(w, e): &mut (Work, Option<E>)| {
                    *e = f(w).err()
                });
                items.into_iter().find_map(|(_, e)| e).map_or(Ok(()), Err)
            }
            None => work.into_iter().try_for_each(|mut w| f(&mut w)),
        }
    }
}
