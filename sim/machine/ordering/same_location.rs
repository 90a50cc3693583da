//! Same-location order between a warp's access and its own stores still in the store buffer, and the
//! one place an acquire's effect on the L1 is decided. The load/store unit (`sm/lsu/`) asks these
//! functions; it decides nothing of ordering itself.
//!
//! The store buffer (`../store_buffer.rs`) holds a warp's plain and relaxed stores before they reach
//! the L1 ([`super::enters_store_buffer`]). Everything else of the warp goes to the L1 at once, so an
//! access to a location with a buffered store could overtake it. Per-location coherence forbids that
//! for the warp's own accesses (PTX ISA §8.10.1 "coherence" and §8.10.5 "sequential consistency per
//! location": communication order cannot contradict program order for overlapping accesses; C11
//! 7.17.3 ¶16–¶19 write-write, read-write, write-read, read-read coherence, which OpenCL C 2.0
//! §6.13.11 and SYCL 2020 §3.8.3 adopt). Each function below is one such case.
//!
//! Deviation (stronger than required, numbered as in the module header's list): a store too big for
//! the buffer waits for *all* of its warp's buffered stores, not only those to its lines.

use crate::msg::L1Req;

/// How much of a load's bytes in one line the warp's own buffered stores cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covered {
    /// No buffered store of the warp touches these bytes.
    Nothing,
    /// Every byte: the youngest buffered value of each is known.
    All,
    /// Some bytes, not all.
    Part,
}

/// Where a load's line is served, given its warp's buffered stores to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnStoreLoad {
    /// From the memory system (the L1, at the load's level).
    Memory,
    /// From the store buffer (store-to-load forwarding).
    Forward,
    /// The load waits until the buffer has drained the overlapping stores.
    Wait,
}

/// A load beside its warp's own buffered stores to its bytes (write-read coherence, C11 7.17.3 ¶18;
/// PTX ISA §8.10.5: a read program-ordered after a write to the same location reads that write or a
/// coherence-later one).
///
/// - none buffered: served by memory;
/// - all bytes buffered: forwarded — the youngest buffered store of each byte is the last write of
///   the warp to it, so reading it satisfies write-read coherence without waiting (only the writer's
///   warp forwards: another warp reading the value early would break the multi-copy atomicity that
///   `fence.sc` restores, `store_buffer.rs`);
/// - some bytes: it waits for the drain — memory would return stale bytes for the buffered part and
///   the buffer has none for the rest, so no single source is coherent for the whole load.
#[inline]
pub fn load_beside_own_stores(covered: Covered) -> OwnStoreLoad {
    match covered {
        Covered::Nothing => OwnStoreLoad::Memory,
        Covered::All => OwnStoreLoad::Forward,
        Covered::Part => OwnStoreLoad::Wait,
    }
}

/// A store that cannot enter the store buffer (it touches more lines than the buffer holds) and so
/// goes to the L1 directly: whether it must wait for its warp's buffered stores first. It must, when
/// there are any: going around them, it could reach a location before an earlier store of its warp to
/// it (write-write coherence, C11 7.17.3 ¶16; PTX ISA §8.10.1: program order between overlapping
/// writes is coherence order). Deviation: all of the warp's buffered stores, not only those to its
/// lines (the buffer is asked per line; a store this wide touches most of them anyway).
#[inline]
pub fn bypassing_store_waits(buffered_stores: u32) -> bool {
    buffered_stores > 0
}

/// A read-modify-write on lines where its warp has buffered stores: it waits for them to drain. The
/// atomic is performed at the L1 or the L2, past the buffer; its read must see the warp's earlier
/// write and its write must come after it in coherence order (PTX ISA §8.10.3 "atomicity" and
/// §8.10.1 "coherence"; C11 7.17.3 ¶16–¶18 and 7.17.7.5 ¶2, read-modify-write reads the last value
/// in modification order).
#[inline]
pub fn rmw_waits_for_own_stores(own_store_to_its_lines: bool) -> bool {
    own_store_to_its_lines
}

/// What the SM's L1 must do when an acquire takes effect (row "acquire", [`super::acquire`]: at
/// device or system scope the L1 may hold lines older than the values the acquire synchronised
/// with, so it is invalidated — PTX ISA §8.8 "acquire pattern"; OpenCL 2.0 API §3.3.4
/// `memory_order_acquire`; deviation 6: the whole L1). The one place the machine's invalidation is
/// made: a completing acquire load or atomic, an acquire fence, a barrier with an acquire side.
/// `invalidate_l1`: the acquire's [`Acquire::invalidate_l1`].
#[inline]
pub fn acquire_effect(invalidate_l1: bool) -> Option<L1Req> {
    invalidate_l1.then_some(L1Req::InvalidateAll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::Level;

    #[test]
    fn a_load_is_forwarded_only_when_every_byte_is_buffered_and_waits_on_a_partial_overlap() {
        assert_eq!(
            load_beside_own_stores(Covered::Nothing),
            OwnStoreLoad::Memory
        );
        assert_eq!(load_beside_own_stores(Covered::All), OwnStoreLoad::Forward);
        assert_eq!(load_beside_own_stores(Covered::Part), OwnStoreLoad::Wait);
    }

    #[test]
    fn a_store_around_the_buffer_waits_for_any_buffered_store_and_an_rmw_for_its_lines() {
        assert!(!bypassing_store_waits(0));
        assert!(bypassing_store_waits(1));
        assert!(rmw_waits_for_own_stores(true));
        assert!(!rmw_waits_for_own_stores(false));
    }

    #[test]
    fn only_an_acquire_at_device_scope_or_wider_invalidates_the_l1() {
        assert!(matches!(acquire_effect(true), Some(L1Req::InvalidateAll)));
        assert!(acquire_effect(false).is_none());
        // What decides it is the acquire row's own flag, set from the scope's level.
        let load = crate::ordering::Access::Load {
            space: crate::ir::Space::Global,
            ord: crate::ir::LoadOrd::Acquire,
            scope: crate::ir::Scope::Device,
        };
        let flag = |level| {
            super::super::acquire(&load, level)
                .acquire
                .unwrap()
                .invalidate_l1
        };
        assert!(acquire_effect(flag(Level::L2)).is_some());
        assert!(acquire_effect(flag(Level::System)).is_some());
        assert!(acquire_effect(flag(Level::Sm)).is_none());
    }
}
