//! DRAM channels behind the L2 slices: timing only (values live in `memory.rs`, see there why).
//!
//! Models: lines interleaved over channels, then banks; per bank an open row (open-page policy): a row
//! hit costs tCAS, an empty bank tRCD + tCAS, a conflict tRP + tRCD + tCAS; each channel's data bus moves
//! `bytes_per_cycle` per DRAM cycle; a channel holds `queue_depth` requests — beyond that a request
//! waits for the oldest to finish. Requests are served first-come first-served. Every access also pays
//! `controller_latency`: the memory controller, PHY and on-die path, which occupy no bank or bus.
//!
//! A memory partition (`l2.partitions`) has its own `dram.channels / partitions` channels: a line's
//! channel is chosen among its partition's, by its line index; bank and row come from the line index
//! divided by the total number of channels, as if the channels were interleaved across the whole
//! device.
//!
//! Not modelled: refresh, read/write turnaround, FR-FCFS reordering, bank groups.

use crate::config::DramSpec;
use crate::engine::{Clock, Time};
use std::collections::VecDeque;

struct Bank {
    open_row: Option<u64>,
    ready: Time,
}

struct Channel {
    banks: Vec<Bank>,
    bus_free: Time,
    inflight: VecDeque<Time>,
}

pub struct Dram {
    clock: Clock,
    channels: Vec<Channel>,
    /// Channels of the whole device (for the bank and row of a line).
    all_channels: u64,
    line_bytes: u64,
    row_lines: u64,
    t_rcd: u64,
    t_cas: u64,
    t_rp: u64,
    burst: u64,
    controller: u64,
    depth: usize,
    pub reads: u64,
    pub writes: u64,
    pub row_hits: u64,
    pub row_misses: u64,
    pub busy_ps: Vec<Time>,
    /// Picoseconds requests waited for room in a full channel queue.
    pub queue_ps: Time,
}

impl Dram {
    /// The channels of one of `parts` memory partitions (`parts` divides `dram.channels`,
    /// validated); `clock`: the DRAM command clock; `line_bytes`: the L2 line, the unit of transfer.
    pub fn partition(spec: &DramSpec, clock: Clock, line_bytes: u32, parts: u32) -> Dram {
        let line = line_bytes as u64;
        let per = spec.channels / parts;
        let ch = (0..per)
            .map(|_| Channel {
                banks: (0..spec.banks)
                    .map(|_| Bank {
                        open_row: None,
                        ready: 0,
                    })
                    .collect(),
                bus_free: 0,
                inflight: VecDeque::new(),
            })
            .collect();
        Dram {
            clock,
            channels: ch,
            all_channels: spec.channels as u64,
            line_bytes: line,
            row_lines: spec.row_bytes as u64 / line,
            t_rcd: spec.t_rcd as u64,
            t_cas: spec.t_cas as u64,
            t_rp: spec.t_rp as u64,
            burst: line.div_ceil(spec.bytes_per_cycle as u64),
            controller: spec.controller_latency as u64,
            depth: spec.queue_depth as usize,
            reads: 0,
            writes: 0,
            row_hits: 0,
            row_misses: 0,
            busy_ps: vec![0; per as usize],
            queue_ps: 0,
        }
    }

    /// Accesses the line at `line_addr` at `now`; returns when its data has been transferred.
    pub fn access(&mut self, now: Time, line_addr: u64, write: bool) -> Time {
        let idx = line_addr / self.line_bytes;
        let ch_i = (idx % self.channels.len() as u64) as usize;
        let rest = idx / self.all_channels;
        let nb = self.channels[ch_i].banks.len() as u64;
        let bank_i = ((rest / self.row_lines) % nb) as usize;
        let row = rest / (self.row_lines * nb);
        let c = self.clock;
        let (t_rcd, t_cas, t_rp, burst, depth) =
            (self.t_rcd, self.t_cas, self.t_rp, self.burst, self.depth);
        let chan = &mut self.channels[ch_i];
        while chan.inflight.front().is_some_and(|&t| t <= now) {
            chan.inflight.pop_front();
        }
        let mut start = c.edge_at_or_after(now);
        if chan.inflight.len() >= depth {
            let room = chan.inflight[chan.inflight.len() - depth];
            if room > start {
                self.queue_ps += room - start;
                start = room;
            }
        }
        let bank = &mut chan.banks[bank_i];
        start = start.max(bank.ready);
        let access = match bank.open_row {
            Some(r) if r == row => {
                self.row_hits += 1;
                t_cas
            }
            Some(_) => {
                self.row_misses += 1;
                t_rp + t_rcd + t_cas
            }
            None => {
                self.row_misses += 1;
                t_rcd + t_cas
            }
        };
        bank.open_row = Some(row);
        let data_start = (start + c.cycles(access)).max(chan.bus_free);
        let done = data_start + c.cycles(burst);
        chan.bus_free = done;
        bank.ready = data_start;
        chan.inflight.push_back(done);
        self.busy_ps[ch_i] += c.cycles(burst);
        if write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        done + c.cycles(self.controller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dram() -> Dram {
        let cfg =
            crate::config::parse_str(include_str!("../../configs/tiny.toml"), "tiny", &[]).unwrap();
        Dram::partition(
            &cfg.dram,
            Clock::from_mhz(cfg.clocks.dram_mhz),
            cfg.l2.line_bytes,
            1,
        )
    }

    #[test]
    fn row_hit_is_faster_than_row_conflict() {
        let mut d = dram();
        let t0 = d.access(0, 0, false);
        // Same row, same bank (next line on the same channel).
        let nch = d.channels.len() as u64 * 128;
        let t_hit = d.access(t0, nch, false) - t0;
        // Far away: same channel and bank, different row.
        let far = nch * 1_000_003 * 4;
        let t1 = d.access(t0 + t_hit, far, false);
        let t_conflict = t1 - (t0 + t_hit);
        assert!(t_hit < t_conflict, "hit {t_hit} vs conflict {t_conflict}");
        assert_eq!(d.row_hits, 1);
    }

    #[test]
    fn controller_latency_adds_to_every_access_but_not_to_bus_occupancy() {
        let mut cfg =
            crate::config::parse_str(include_str!("../../configs/tiny.toml"), "tiny", &[]).unwrap();
        cfg.dram.controller_latency = 0;
        let mut a = Dram::partition(
            &cfg.dram,
            Clock::from_mhz(cfg.clocks.dram_mhz),
            cfg.l2.line_bytes,
            1,
        );
        cfg.dram.controller_latency = 100;
        let mut b = Dram::partition(
            &cfg.dram,
            Clock::from_mhz(cfg.clocks.dram_mhz),
            cfg.l2.line_bytes,
            1,
        );
        let c = Clock::from_mhz(cfg.clocks.dram_mhz);
        for (i, line) in [0u64, 128, 2 * 128 * 16].into_iter().enumerate() {
            let (ta, tb) = (a.access(0, line, false), b.access(0, line, false));
            assert_eq!(tb - ta, c.cycles(100), "access {i}");
        }
    }

    #[test]
    fn bus_serialises_back_to_back_requests() {
        let mut d = dram();
        let a = d.access(0, 0, false);
        let b = d.access(0, 2 * 128 * 16, false);
        assert!(b > a);
    }
}
