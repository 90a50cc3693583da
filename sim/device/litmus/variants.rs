//! The variants a litmus test runs in on the GPU and in the simulator alike: the test as written,
//! with orders strengthened (release/acquire, seq_cst), or with a barrier or fence between
//! consecutive memory operations of every thread (`compare` applies the same rewrite on both sides).

use super::*;

/// How a test is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    Relaxed,
    StorageBarrier,
    /// Every atomic store a device-scope release, every atomic load a device-scope acquire, every
    /// read-modify-write acq_rel (plain accesses stay plain). SPIR-V only.
    ReleaseAcquire,
    /// A device-scope acq_rel fence over both spaces between consecutive memory operations. SPIR-V
    /// only.
    FenceAcqRel,
    /// Every atomic seq_cst at device scope. SPIR-V runs it as `ReleaseAcquire` (the Vulkan memory
    /// model has no sequentially consistent order; the result lists it), the simulator as seq_cst.
    SeqCst,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Relaxed,
        Variant::StorageBarrier,
        Variant::ReleaseAcquire,
        Variant::FenceAcqRel,
        Variant::SeqCst,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Relaxed => "relaxed",
            Variant::StorageBarrier => "storage_barrier",
            Variant::ReleaseAcquire => "release_acquire",
            Variant::FenceAcqRel => "fence_acq_rel",
            Variant::SeqCst => "seq_cst",
        }
    }

    /// The test as this variant runs it.
    pub fn apply(self, test: &LitmusTest) -> LitmusTest {
        match self {
            Variant::Relaxed => test.clone(),
            Variant::StorageBarrier => with_barriers(test),
            Variant::ReleaseAcquire => with_orders(test, false),
            Variant::FenceAcqRel => with_between(
                test,
                Inst::Fence {
                    ord: FenceOrd::AcqRel,
                    scope: Scope::Device,
                    spaces: SpaceSet::BOTH,
                },
            ),
            Variant::SeqCst => with_orders(test, true),
        }
    }
}

/// The test with every atomic access strengthened to release/acquire (or seq_cst) at device scope.
pub fn with_orders(test: &LitmusTest, seq_cst: bool) -> LitmusTest {
    let mut t = test.clone();
    for th in &mut t.threads {
        for inst in &mut th.insts {
            match inst {
                Inst::Load { ord, scope, .. } if *ord != LoadOrd::Plain => {
                    *ord = if seq_cst {
                        LoadOrd::SeqCst
                    } else {
                        LoadOrd::Acquire
                    };
                    *scope = Scope::Device;
                }
                Inst::Store { ord, scope, .. } if *ord != StoreOrd::Plain => {
                    *ord = if seq_cst {
                        StoreOrd::SeqCst
                    } else {
                        StoreOrd::Release
                    };
                    *scope = Scope::Device;
                }
                Inst::Rmw { ord, scope, .. } => {
                    *ord = if seq_cst {
                        RmwOrd::SeqCst
                    } else {
                        RmwOrd::AcqRel
                    };
                    *scope = Scope::Device;
                }
                Inst::Cas {
                    success,
                    failure,
                    scope,
                    ..
                } => {
                    *success = if seq_cst {
                        RmwOrd::SeqCst
                    } else {
                        RmwOrd::AcqRel
                    };
                    *failure = if seq_cst {
                        LoadOrd::SeqCst
                    } else {
                        LoadOrd::Acquire
                    };
                    *scope = Scope::Device;
                }
                _ => {}
            }
        }
    }
    t
}

/// The test with a work-group barrier over global memory between consecutive memory operations of
/// each thread (branch targets moved accordingly).
pub fn with_barriers(test: &LitmusTest) -> LitmusTest {
    with_between(
        test,
        Inst::Barrier {
            kind: BarrierKind::WorkGroup,
            spaces: SpaceSet::GLOBAL,
            scope: Scope::WorkGroup,
        },
    )
}

/// The test with `sep` between consecutive memory operations of each thread (branch targets moved
/// accordingly).
pub fn with_between(test: &LitmusTest, sep: Inst) -> LitmusTest {
    let mut t = test.clone();
    let is_mem = |i: &Inst| i.mem_space().is_some();
    for th in &mut t.threads {
        let n = th.insts.len();
        // new_index[i]: where old instruction i lands; one barrier before every memory operation that
        // follows an earlier memory operation.
        let mut new_index = Vec::with_capacity(n + 1);
        let (mut insts, mut locs) = (Vec::new(), Vec::new());
        let mut seen_mem = false;
        for (inst, &at) in th.insts.iter().zip(&th.locs) {
            if is_mem(inst) && seen_mem {
                insts.push(sep.clone());
                locs.push(at);
            }
            seen_mem |= is_mem(inst);
            new_index.push(insts.len() as u32);
            insts.push(inst.clone());
            locs.push(at);
        }
        new_index.push(insts.len() as u32);
        for inst in &mut insts {
            if let Inst::Branch { target, .. } = inst {
                *target = new_index[(*target as usize).min(n)];
            }
        }
        th.insts = insts;
        th.locs = locs;
    }
    t
}
