//! The one rule for a work-group barrier's fence flags and scope, shared by every front end that
//! writes one (the kernel language's `barrier`, OpenCL C's `barrier`/`work_group_barrier` in
//! kernels and in the OpenCL litmus dialect).
//!
//! OpenCL C 2.0 specification §6.13.8 (Synchronization Functions), `work_group_barrier(flags,
//! scope)`: the flags name the address spaces whose accesses the barrier orders
//! (`CLK_LOCAL_MEM_FENCE`, `CLK_GLOBAL_MEM_FENCE`, `CLK_IMAGE_MEM_FENCE`, or 0 for none); the scope
//! is the work-group, the device or all SVM devices (`memory_scope_work_group`, `_device`,
//! `_all_svm_devices`); local memory is visible only within the work-group, so
//! `CLK_LOCAL_MEM_FENCE` alone goes with `memory_scope_work_group` only (as the reference chapter
//! opencl2-synchronisation says: "CLK_LOCAL_MEM_FENCE只能和memory_scope_work_group一起使用").
//! With both flags and a wider scope, local memory is still ordered at work_group scope (the machine
//! orders each space at the level its scope reaches).
//!
//! Not modelled: image memory (`CLK_IMAGE_MEM_FENCE`), rejected by the front ends.

use crate::ir::{BarrierKind, Inst, Scope, SpaceSet};
use thiserror::Error;

/// Why a barrier's flags and scope do not go together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BarrierRuleError {
    #[error("found scope `{0}` but a work-group barrier's scope is work_group, device or system")]
    ScopeTooNarrow(Scope),
    #[error("found scope `{0}` but a barrier over local memory only is work_group scope (OpenCL 2.0 §6.13.8: CLK_LOCAL_MEM_FENCE goes with memory_scope_work_group)")]
    LocalOnlyWiderScope(Scope),
}

/// The work-group barrier ordering `spaces` at `scope`, or why OpenCL 2.0 rejects the pair.
pub fn work_group_barrier(spaces: SpaceSet, scope: Scope) -> Result<Inst, BarrierRuleError> {
    if scope < Scope::WorkGroup {
        return Err(BarrierRuleError::ScopeTooNarrow(scope));
    }
    if scope > Scope::WorkGroup && spaces.local && !spaces.global {
        return Err(BarrierRuleError::LocalOnlyWiderScope(scope));
    }
    Ok(Inst::Barrier {
        kind: BarrierKind::WorkGroup,
        spaces,
        scope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_only_barriers_are_work_group_scope_and_scopes_start_at_the_work_group() {
        assert!(work_group_barrier(SpaceSet::LOCAL, Scope::WorkGroup).is_ok());
        assert!(work_group_barrier(SpaceSet::GLOBAL, Scope::Device).is_ok());
        assert!(work_group_barrier(SpaceSet::BOTH, Scope::System).is_ok());
        assert!(work_group_barrier(SpaceSet::NONE, Scope::Device).is_ok());
        assert_eq!(
            work_group_barrier(SpaceSet::LOCAL, Scope::Device),
            Err(BarrierRuleError::LocalOnlyWiderScope(Scope::Device))
        );
        assert_eq!(
            work_group_barrier(SpaceSet::BOTH, Scope::SubGroup),
            Err(BarrierRuleError::ScopeTooNarrow(Scope::SubGroup))
        );
    }
}
