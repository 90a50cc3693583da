//! Work-group-local locations in a launch (see `lower.rs` for the whole layout): each lives in the
//! local memory of its work-group, instance lane `i` at byte `base + i·n·size`, one copy per
//! work-group whose threads use it (OpenCL 2.0 s3.3.1, PTX `.shared`: per CTA). The first thread of
//! each such work-group writes a non-zero initial value into its copy before a work-group barrier all
//! threads of the work-group pass before their first instruction; the first thread that uses the
//! location at all (its home copy, the one herd's final state names) copies a final value the
//! condition reads to the location's buffer after a work-group barrier all of them pass after their
//! last instruction. Those barriers order only herd's initial and final states against the whole test.

use super::capability::local_owners;
use super::cond::Var;
use super::lower::Layout;
use super::test::LitmusTest;
use crate::ir::{BarrierKind, Inst, Reg, Scope, SpaceSet};

/// A work-group barrier over local memory (for the local locations' initial and final values).
pub fn local_barrier() -> Inst {
    Inst::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces: SpaceSet::LOCAL,
        scope: Scope::WorkGroup,
    }
}

/// The register (thread-relative) holding location `l`'s address in thread `t`.
pub fn address_reg(test: &LitmusTest, t: usize, l: usize) -> Reg {
    test.threads[t]
        .addr_regs
        .iter()
        .find(|(x, _)| *x == l)
        .map(|&(_, r)| r)
        .expect("an owner thread has the location's address register")
}

/// Where the work-group-local locations live and which barriers the lowering adds.
pub struct LocalLayout {
    /// Per location: byte offset of its region in local memory (`None` for global locations).
    pub offset: Vec<Option<u64>>,
    /// Bytes of local memory per work-group.
    pub bytes: u32,
    /// Per thread: the local locations whose copy in its work-group it initialises (the first
    /// thread of each work-group that uses the location).
    pub owned: Vec<Vec<usize>>,
    /// Per thread: the local locations whose home copy (the first user's) it copies out for the
    /// final state.
    pub home: Vec<Vec<usize>>,
    /// Per cta (layout index): whether its threads pass a barrier before their first instruction.
    pub init_barrier: Vec<bool>,
    /// Per cta: whether its threads pass a barrier after their last instruction.
    pub final_barrier: Vec<bool>,
}

impl LocalLayout {
    pub fn new(test: &LitmusTest, lay: &Layout) -> LocalLayout {
        let owners = local_owners(test);
        let mut offset = vec![None; test.locations.len()];
        let mut bytes = 0u64;
        let mut owned = vec![Vec::new(); test.threads.len()];
        let mut home = vec![Vec::new(); test.threads.len()];
        let mut init_barrier = vec![false; lay.ctas.len()];
        let mut final_barrier = vec![false; lay.ctas.len()];
        for (l, owner) in owners.iter().enumerate() {
            let Some(t) = *owner else { continue };
            let loc = &test.locations[l];
            offset[l] = Some(bytes);
            bytes += (lay.ws as u64 * loc.bytes()).div_ceil(8) * 8;
            home[t].push(l);
            let cta = lay.thread_cta[t];
            final_barrier[cta] |= test.condition.observed.iter().any(|v| match *v {
                Var::Loc(x) | Var::Elem { loc: x, .. } => x == l,
                Var::Reg { .. } => false,
            });
            // Each work-group using the location has its copy, initialised by its first user.
            let mut groups: Vec<usize> = Vec::new();
            for u in 0..test.threads.len() {
                let g = lay.thread_cta[u];
                if !groups.contains(&g) && test.accesses(u).iter().any(|&(_, a)| a == l) {
                    groups.push(g);
                    owned[u].push(l);
                    init_barrier[g] |= loc.elems.iter().any(|&v| v != 0);
                }
            }
        }
        LocalLayout {
            offset,
            bytes: bytes as u32,
            owned,
            home,
            init_barrier,
            final_barrier,
        }
    }

    /// Elements of local location `l` the condition reads.
    pub fn observed_elems(&self, test: &LitmusTest, l: usize) -> Vec<u32> {
        let mut e: Vec<u32> = test
            .condition
            .observed
            .iter()
            .filter_map(|v| match *v {
                Var::Loc(x) if x == l => Some(0),
                Var::Elem { loc, index } if loc == l => Some(index),
                _ => None,
            })
            .collect();
        e.sort_unstable();
        e.dedup();
        e
    }
}
