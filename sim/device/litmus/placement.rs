//! Where each instance's threads and locations go in one dispatch (the module header of `mod.rs`
//! describes the layout): the role table (which instance and test thread each work-item runs, or
//! stress, or idle) and the per-location slot permutations, drawn from the harness's seeded stream.
//! The launch kernel that reads them is `kernel.rs`.

use super::kernel::kernel;
use super::LitmusSettings;
use crate::ir::*;
use crate::rng::SplitMix64;
use crate::workload::Workload;
use gpumemsim_litmus::{observed_regs, LitmusTest};

/// Bytes between an instance's copy of a location and the next instance's: one 128-byte line.
pub(super) const SLOT_BYTES: u64 = 128;
/// The role of a work-item of a stress work-group.
pub(super) const ROLE_STRESS: u32 = u32::MAX;
/// The role of a free slot of a testing work-group.
pub(super) const ROLE_IDLE: u32 = u32::MAX - 1;

/// One dispatch's layout: the workload and where each instance's results are.
pub struct Launch {
    pub workload: Workload,
    /// Per location: instance → element index in its buffer.
    pub slot: Vec<Vec<u64>>,
    /// Observed registers: (index into the condition's observed list, thread, register).
    pub observed_regs: Vec<(usize, usize, Reg)>,
    pub instances: u64,
}

fn shuffle<T>(v: &mut [T], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// Builds one dispatch of `test` with the placement drawn from `rng`.
pub fn launch(
    test: &LitmusTest,
    s: &LitmusSettings,
    rng: &mut SplitMix64,
) -> Result<Launch, String> {
    // What the machine cannot run, and what this layout does not place, is refused up front.
    gpumemsim_litmus::check_runnable(test).map_err(|e| e.to_string())?;
    if let Some(l) = test
        .locations
        .iter()
        .find(|l| l.array || l.space == Space::Local)
    {
        return Err(format!(
            "{}: array and work-group-local locations are not supported by the physical-GPU harness",
            l.name
        ));
    }
    let nt = test.threads.len();
    let nloc = test.locations.len();
    let n = s.instances.max(1) as u64;
    let w = s.workgroup_size.max(1) as u64;
    // Ctas in order of first appearance, and each thread's cta index.
    let mut ctas: Vec<u32> = Vec::new();
    let thread_cta: Vec<usize> = test
        .threads
        .iter()
        .map(|t| match ctas.iter().position(|&c| c == t.cta) {
            Some(i) => i,
            None => {
                ctas.push(t.cta);
                ctas.len() - 1
            }
        })
        .collect();
    let per_cta: Vec<u64> = (0..ctas.len())
        .map(|c| thread_cta.iter().filter(|&&x| x == c).count() as u64)
        .collect();
    if let Some(&big) = per_cta.iter().max().filter(|&&m| m > w) {
        return Err(format!(
            "a work-group of the test has {big} threads; workgroup_size is {w}"
        ));
    }
    // Testing work-groups: enough for every unit at about half occupancy (free slots stay idle, so that
    // units land in varied places), and never fewer than the ctas of one instance.
    let slots_needed = n * nt as u64;
    let testing = (2 * slots_needed).div_ceil(w).max(ctas.len() as u64);
    let stress = testing * s.stress_ratio as u64;
    let groups = testing + stress;
    if groups > 65535 {
        return Err(format!(
            "{groups} work-groups exceed the 65535 of one dimension: fewer instances per dispatch"
        ));
    }
    // Which work-groups test and which stress: a random interleaving.
    let mut kinds: Vec<bool> = (0..groups).map(|g| g < testing).collect();
    shuffle(&mut kinds, rng);
    let testing_ids: Vec<u64> = (0..groups).filter(|&g| kinds[g as usize]).collect();
    let mut role = vec![ROLE_IDLE; (groups * w) as usize];
    for (g, &is_test) in kinds.iter().enumerate() {
        if !is_test && s.stress_ratio > 0 {
            role[g * w as usize..(g + 1) * w as usize].fill(ROLE_STRESS);
        }
    }
    // Free slots of each testing work-group, in random order.
    let mut free: Vec<Vec<u64>> = testing_ids
        .iter()
        .map(|_| {
            let mut v: Vec<u64> = (0..w).collect();
            shuffle(&mut v, rng);
            v
        })
        .collect();
    // Units (instance, cta) in random order, each to a random testing work-group with room that holds no
    // other cta of the same instance.
    let mut units: Vec<(u64, usize)> = (0..n)
        .flat_map(|k| (0..ctas.len()).map(move |c| (k, c)))
        .collect();
    shuffle(&mut units, rng);
    let mut hosts: Vec<Vec<u64>> = vec![Vec::new(); testing_ids.len()];
    for (k, c) in units {
        let need = per_cta[c];
        let start = rng.below(testing_ids.len() as u64) as usize;
        let pick = (0..testing_ids.len())
            .map(|i| (start + i) % testing_ids.len())
            .find(|&i| free[i].len() as u64 >= need && !hosts[i].contains(&k))
            .ok_or("the testing work-groups are full (internal sizing error)")?;
        hosts[pick].push(k);
        let g = testing_ids[pick];
        for (t, _) in thread_cta.iter().enumerate().filter(|(_, &x)| x == c) {
            let slot = free[pick].pop().expect("room was checked");
            role[(g * w + slot) as usize] = (k * nt as u64 + t as u64) as u32;
        }
    }
    // Location copies: instance k of location l at element slot[l][k] · (line / element size).
    let slot: Vec<Vec<u64>> = (0..nloc)
        .map(|_| {
            let mut v: Vec<u64> = (0..n).collect();
            shuffle(&mut v, rng);
            v
        })
        .collect();
    let observed_regs = observed_regs(test);
    let workload = kernel(test, s, n, groups, &role, &slot, &observed_regs);
    Ok(Launch {
        workload,
        slot,
        observed_regs,
        instances: n,
    })
}

/// Elements of location `l`'s type per slot.
pub(super) fn pad(test: &LitmusTest, l: usize) -> u64 {
    SLOT_BYTES / test.locations[l].ty.width().bytes() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const SB: &str = "PTX SB
{ x=0; y=0; }
 P0@cta 0,gpu 0          | P1@cta 1,gpu 0          | P2@cta 1,gpu 0 ;
 st.relaxed.gpu [x], 1   | st.relaxed.gpu [y], 1   | ld.relaxed.gpu r1, [x] ;
 ld.relaxed.gpu r0, [y]  | ld.relaxed.gpu r0, [x]  | ;
exists (0:r0=0 /\\ 1:r0=0 /\\ 2:r1=0)
";

    fn settings(seed: u64) -> LitmusSettings {
        LitmusSettings {
            instances: 40,
            workgroup_size: 16,
            stress_ratio: 1,
            seed,
            ..Default::default()
        }
    }

    #[test]
    fn every_instance_thread_has_one_slot_and_its_ctas_distinct_work_groups() {
        let test = gpumemsim_litmus::parse(SB, "sb.litmus").expect("the test parses");
        let nt = test.threads.len() as u64;
        for seed in 1..4 {
            let s = settings(seed);
            let l = launch(&test, &s, &mut SplitMix64::new(seed)).expect("it launches");
            let Some(crate::workload::Init::Values(role)) = l
                .workload
                .buffers
                .iter()
                .find(|b| b.name == "$role")
                .map(|b| b.init.clone())
            else {
                panic!("the role table is a buffer of values")
            };
            let w = s.workgroup_size as u64;
            let mut seen = vec![None; (l.instances * nt) as usize];
            for (slot, &r) in role.iter().enumerate() {
                if r == ROLE_STRESS as u64 || r == ROLE_IDLE as u64 {
                    continue;
                }
                assert!(seen[r as usize].is_none(), "role {r} twice");
                seen[r as usize] = Some(slot as u64 / w);
            }
            assert!(
                seen.iter().all(Option::is_some),
                "every (instance, thread) placed"
            );
            let stress = role.iter().filter(|&&r| r == ROLE_STRESS as u64).count() as u64;
            assert_eq!(stress % w, 0, "stress comes in whole work-groups");
            assert!(stress > 0);
            for k in 0..l.instances as usize {
                let g = |t: usize| seen[k * nt as usize + t].unwrap();
                // P1 and P2 share cta 1: one work-group; P0 (cta 0) another.
                assert_eq!(g(1), g(2), "instance {k}: one cta, one work-group");
                assert_ne!(
                    g(0),
                    g(1),
                    "instance {k}: different ctas, different work-groups"
                );
            }
            // Each location's slots are a permutation of the instances.
            for sl in &l.slot {
                let mut v = sl.clone();
                v.sort();
                assert_eq!(v, (0..l.instances).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn what_the_layout_cannot_place_is_refused() {
        let test = gpumemsim_litmus::parse(SB, "sb.litmus").expect("the test parses");
        let small = LitmusSettings {
            workgroup_size: 1,
            ..settings(1)
        };
        let e = launch(&test, &small, &mut SplitMix64::new(1))
            .err()
            .expect("refused");
        assert!(e.contains("has 2 threads; workgroup_size is 1"), "{e}");
        let many = LitmusSettings {
            instances: 1 << 20,
            ..settings(1)
        };
        let e = launch(&test, &many, &mut SplitMix64::new(1))
            .err()
            .expect("refused");
        assert!(e.contains("exceed the 65535"), "{e}");
    }
}
