//! Near copies of far L2 lines (`l2.near_copy_lines`): on a GPU whose L2 is split in two partitions
//! (A100, H100), a partition keeps copies of lines homed in the other one for its own SMs, so a read
//! that finds the copy does not cross to the far partition. On the H100 of
//! `reports/measured/nvidia-h100-80gb-hbm3-2026-11-27` a one-thread pointer chase costs the same
//! 291–305 cycles a step over footprints of 1 to 24 MiB, whatever partition homes its lines (half of
//! them are far); the published far latency (gpu-benches: 475 cycles on the H100 PCIe beyond ~27 MB)
//! shows only once the copies no longer fit.
//!
//! Models: per SM, which far lines its partition holds a copy of, as the SM sees it: a read request
//! (plain, relaxed or acquire load) of a far line that the SM has read before, and whose copy is still
//! held, takes the near path both ways (no far latency, no inter-partition link); any other read takes
//! the far path and leaves a copy. The SM's own writes and atomics go to the home slice and drop its
//! copy. Timing only: the value is still read at the home slice when the request arrives there, so the
//! copy cannot be stale and coherence is the home's, as without copies.
//!
//! A run that starts as a measurement harness's does (`RunOptions::warm_l2`, what `compare` simulates)
//! starts with the last lines the harness copied into memory held (`NearCopies::warm`): on the H100 the
//! first pass over just-copied lines ran at the near latency.
//!
//! Deviations: the copies are kept per SM (the partition's copies are shared by its SMs in hardware,
//! so a line another SM of the same half read is still far here the first time); the oldest copy is
//! replaced first (not the least recently used); another SM's write does not drop a copy (its next
//! read is near here; in hardware it would miss the copy and cross); copies take no capacity from the
//! partition's own lines (on the H100 a 40 MiB footprint is 540 cycles a step, a mixture with DRAM,
//! and near-only here).

use super::cache::AddrMap;
use std::collections::VecDeque;

/// The far lines whose copy an SM's partition holds, as the SM sees it: at most `capacity` of them,
/// the oldest copy replaced first. Memory grows with the copies made, not with the capacity (a
/// preallocated tag array of the H100's 2^17 lines for each of 132 SMs cost a fifth more time on a
/// trace through its page faults).
#[derive(Debug, Clone)]
pub struct NearCopies {
    /// Held copies: line → the number of the read that made the copy (its place in `order`).
    held: AddrMap<u64>,
    /// Copies in the order they were made: (line, its number); a line read again after its copy was
    /// dropped has a newer entry, and the old one is skipped.
    order: VecDeque<(u64, u64)>,
    made: u64,
    capacity: usize,
    /// Line ranges [start, end) held from before the launch (`warm`), less `unwarmed`.
    warm: Vec<(u64, u64)>,
    /// Lines of `warm` whose copy the SM's own write or atomic dropped.
    unwarmed: AddrMap<()>,
    /// Reads that found a copy.
    pub hits: u64,
}

impl NearCopies {
    /// Copies of up to `lines` lines.
    pub fn new(lines: u32) -> NearCopies {
        NearCopies {
            held: AddrMap::default(),
            order: VecDeque::new(),
            made: 0,
            capacity: lines as usize,
            warm: Vec::new(),
            unwarmed: AddrMap::default(),
            hits: 0,
        }
    }

    /// Before the launch, a copy into memory of `ranges` ((base, bytes), in the order written) left the
    /// partition holding copies of their last lines, as many as it keeps (`build::warm_l2`): on the
    /// H100 the harness's first pass over lines it had just copied ran at the near latency.
    pub fn warm(&mut self, ranges: &[(u64, u64)], line_bytes: u64) {
        let mut left = self.capacity as u64 * line_bytes;
        for &(base, bytes) in ranges.iter().rev() {
            if left == 0 {
                break;
            }
            let end = (base + bytes).div_ceil(line_bytes) * line_bytes;
            let start = (base / line_bytes * line_bytes).max(end.saturating_sub(left));
            left -= end - start;
            self.warm.push((start, end));
        }
    }

    fn is_warm(&self, line: u64) -> bool {
        self.warm.iter().any(|&(s, e)| (s..e).contains(&line)) && !self.unwarmed.contains_key(&line)
    }

    /// A read of far `line`: whether the copy is held (true: the near path); a miss makes it, replacing
    /// the oldest copy when all are taken.
    pub fn read(&mut self, line: u64) -> bool {
        if self.held.contains_key(&line) || (!self.warm.is_empty() && self.is_warm(line)) {
            self.hits += 1;
            return true;
        }
        while self.held.len() >= self.capacity {
            let (old, n) = self.order.pop_front().expect("a held copy is in the order");
            if self.held.get(&old) == Some(&n) {
                self.held.remove(&old);
            }
        }
        self.made += 1;
        self.held.insert(line, self.made);
        self.order.push_back((line, self.made));
        // Entries of dropped copies are skipped when they come up; keep the queue bounded.
        if self.order.len() > 2 * self.capacity.max(16) {
            let held = &self.held;
            self.order.retain(|(l, n)| held.get(l) == Some(n));
        }
        false
    }

    /// The SM writes `line` or runs an atomic on it at the home slice: its copy goes.
    pub fn drop_copy(&mut self, line: u64) {
        self.held.remove(&line);
        if !self.warm.is_empty() && self.is_warm(line) {
            self.unwarmed.insert(line, ());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_read_is_near_until_written_or_evicted() {
        let mut n = NearCopies::new(16);
        assert!(!n.read(0x1000));
        assert!(n.read(0x1000));
        n.drop_copy(0x1000);
        assert!(!n.read(0x1000));
        assert!(n.read(0x1000));
        // 16 copies: 16 more lines replace the oldest, 0x1000's.
        for i in 1..=16u64 {
            assert!(!n.read(0x1000 + i * 128));
        }
        assert!(!n.read(0x1000));
        assert_eq!(n.hits, 2);
        // Dropped copies do not count against the capacity, and their stale order entries are
        // skipped: 16 lines read, dropped and read again all stay held.
        let mut n = NearCopies::new(16);
        for round in 0..4 {
            for i in 0..16u64 {
                assert_eq!(n.read(i * 128), round % 2 == 1, "round {round} line {i}");
                if round % 2 == 1 {
                    n.drop_copy(i * 128);
                }
            }
        }
    }

    #[test]
    fn a_copy_before_the_launch_leaves_its_last_lines_held() {
        // 16 copies; a copy of 32 lines (then of 4 more elsewhere): the last 16 written are held.
        let mut n = NearCopies::new(16);
        n.warm(&[(0x1000, 32 * 128), (0x9000, 4 * 128)], 128);
        let held: Vec<bool> = (0..32u64).map(|i| n.read(0x1000 + i * 128)).collect();
        assert_eq!(held.iter().filter(|&&h| h).count(), 12);
        assert!(held[20..].iter().all(|&h| h) && !held[19]);
        assert!(n.read(0x9000 + 3 * 128));
        // The SM's own write drops a held line.
        n.drop_copy(0x9000);
        assert!(!n.read(0x9000));
    }

    /// The suite's chase.kern over 1 MiB (past the L1, half of its lines homed in the far partition)
    /// with `passes` passes, on the H100 preset with `sets`: (cycles, DRAM reads).
    fn chase(sets: &[&str], passes: i64, warm_l2: bool) -> (u64, f64) {
        let (name, toml) = crate::config::PRESETS
            .iter()
            .find(|(n, _)| n.ends_with("h100.toml"))
            .unwrap();
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = crate::config::parse_str(toml, name, &sets).unwrap();
        let wl = crate::kernel::parse(
            include_str!("../../workloads/measure/chase.kern"),
            "chase.kern",
            &[("FOOT".into(), 1 << 20), ("PASSES".into(), passes)],
        )
        .unwrap();
        let opts = crate::RunOptions {
            warm_l2,
            ..Default::default()
        };
        let r = crate::run(&cfg, &wl, &opts).unwrap();
        assert!(r.all_checks_pass());
        (r.cycles, r.stats.get("dram", "reads").unwrap())
    }

    /// A run that starts as the measurement harness's does (`RunOptions::warm_l2`): the chase's one
    /// pass reads no DRAM and costs what a second pass costs from a cold start.
    #[test]
    fn a_warm_start_costs_what_a_second_pass_costs() {
        let (warm, warm_dram) = chase(&[], 1, true);
        let (one, one_dram) = chase(&[], 1, false);
        let (two, _) = chase(&[], 2, false);
        assert_eq!(warm_dram, 0.0);
        assert!(one_dram >= 8192.0, "{one_dram}");
        // The warm pass is the cold run's second pass, give or take the L1's cold misses' order.
        let second = two - one;
        assert!(
            warm.abs_diff(second) * 100 <= second,
            "warm {warm}, a second pass {second}"
        );
    }

    /// The second pass costs what it costs when every slice is near, and more without copies.
    #[test]
    fn a_second_pass_over_far_lines_costs_what_near_lines_cost() {
        let second_pass = |sets: &[&str]| chase(sets, 2, false).0 - chase(sets, 1, false).0;
        let copies = second_pass(&[]);
        let all_near = second_pass(&["l2.far_latency=0"]);
        let no_copies = second_pass(&["l2.near_copy_lines=0"]);
        assert_eq!(copies, all_near);
        // 8,192 steps, half of them far: 2 x 110 L2 cycles more each at the same clock.
        assert!(
            no_copies > copies + 8192 / 2 * 200,
            "without copies {no_copies}, with {copies}"
        );
    }
}
