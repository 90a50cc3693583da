//! The work-group dispatcher (the GPU's work distributor): places the groups of a launch on SMs.
//!
//! Models: groups in linear order onto SMs round-robin, each when the SM has room for its threads,
//! warps, local memory and a group slot (occupancy limits); an explicit placement
//! (`RunOptions::group_sm`) pins groups to SMs. The first wave starts with the launch; a group placed
//! later, when a group has finished and made room, starts one crossbar transit after the SM reported
//! the finished group (the distributor reaches the SMs over the chip's interconnect) — which is also
//! what lets SMs be simulated in parallel between reports.
//!
//! The dispatcher keeps its own account of each SM's occupancy, updated when it places a group and
//! when an SM reports a group finished: the SM's resources are reserved from placement to that
//! report, so a group's warps count until the whole group has finished (an exited warp's slot is not
//! reused by a new group earlier).
//!
//! Not modelled: priorities between streams, concurrent kernels.

use crate::config::SmSpec;
use std::collections::VecDeque;

/// Occupancy of one SM as the dispatcher accounts it.
#[derive(Debug, Clone, Copy, Default)]
struct Room {
    groups: u32,
    warps: u32,
    threads: u32,
    shared: u32,
}

pub struct Dispatcher {
    pending: VecDeque<u64>,
    placement: Option<Vec<u32>>,
    next_sm: usize,
    room: Vec<Room>,
    max: Room,
    /// Size of every group of the launch.
    group: Room,
    pub total: u64,
    pub done: u64,
}

impl Dispatcher {
    pub fn new(sm: &SmSpec, placement: Option<Vec<u32>>) -> Dispatcher {
        Dispatcher {
            pending: VecDeque::new(),
            placement,
            next_sm: 0,
            room: vec![Room::default(); sm.count as usize],
            max: Room {
                groups: sm.max_groups,
                warps: sm.max_warps,
                threads: sm.max_threads,
                shared: sm.max_shared_bytes,
            },
            group: Room::default(),
            total: 0,
            done: 0,
        }
    }

    /// A new launch of `groups` groups of `threads` threads (`warps` warps) and `shared` bytes of
    /// local memory each. The previous launch has finished: every SM is empty.
    pub fn start(&mut self, groups: u64, threads: u32, warps: u32, shared: u32) {
        self.pending = (0..groups).collect();
        self.group = Room {
            groups: 1,
            warps,
            threads,
            shared,
        };
        self.total = groups;
        self.done = 0;
        self.room.fill(Room::default());
    }

    fn fits(&self, s: usize) -> bool {
        let (r, g, m) = (self.room[s], self.group, self.max);
        r.groups < m.groups
            && r.warps + g.warps <= m.warps
            && r.threads + g.threads <= m.threads
            && r.shared + g.shared <= m.shared
    }

    /// Places every pending group that fits now, in order; returns (SM, group) of each placement.
    pub fn dispatch(&mut self) -> Vec<(usize, u64)> {
        let n = self.room.len();
        let mut placed = Vec::new();
        let mut i = 0;
        while i < self.pending.len() {
            let group = self.pending[i];
            let target = match &self.placement {
                Some(p) if (group as usize) < p.len() => {
                    let s = p[group as usize] as usize;
                    self.fits(s).then_some(s)
                }
                _ => (0..n)
                    .map(|k| (self.next_sm + k) % n)
                    .find(|&s| self.fits(s)),
            };
            match target {
                Some(s) => {
                    self.pending.remove(i);
                    if self.placement.is_none() {
                        self.next_sm = (s + 1) % n;
                    }
                    let g = self.group;
                    let r = &mut self.room[s];
                    r.groups += 1;
                    r.warps += g.warps;
                    r.threads += g.threads;
                    r.shared += g.shared;
                    placed.push((s, group));
                }
                None if self.placement.is_none() => break,
                None => i += 1,
            }
        }
        placed
    }

    /// SM `s` reported a group finished: its resources are free again.
    pub fn finished(&mut self, s: usize) {
        let g = self.group;
        let r = &mut self.room[s];
        r.groups -= 1;
        r.warps -= g.warps;
        r.threads -= g.threads;
        r.shared -= g.shared;
        self.done += 1;
    }

    /// The groups not yet placed, in the order they are placed without an explicit placement.
    pub fn upcoming(&self) -> impl Iterator<Item = u64> + '_ {
        self.pending.iter().copied()
    }

    /// Groups not yet placed.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }
}
