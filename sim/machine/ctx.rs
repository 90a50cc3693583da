//! The context every part's handler gets: what it may touch besides its own state, all of it
//! belonging to the handler's simulation domain (`domain.rs`). A leaf of the machine: it names the
//! domain's queue and pools, and no part.
//!
//! Not here: the parts themselves, which a handler reaches only through its own `&mut self`.

use super::atomic::AtomicBatch;
use super::memory::GlobalMemory;
use super::msg::Event;
use super::outbox::Outbox;
use super::pool::{LineBuf, Pool};
use super::provenance::Provenance;
use super::timeline::Recorder;
use crate::engine::{EventQueue, Time};
use crate::rng::SplitMix64;

/// What a handler may touch besides its own state — all of it belonging to the handler's simulation
/// domain: the queue, the payload pools, device memory (the bounds of buffers for an SM; the values
/// of the lines its slices own for a memory partition), the crossbar outbox and the domain's random
/// source.
pub struct Ctx<'a> {
    pub q: &'a mut EventQueue<Event>,
    pub lines: &'a mut Pool<LineBuf>,
    pub batches: &'a mut Pool<AtomicBatch>,
    pub mem: &'a mut GlobalMemory,
    pub out: &'a mut Outbox,
    pub rng: &'a mut SplitMix64,
    /// Access provenance (`provenance.rs`), when the run records it.
    pub prov: Option<&'a mut Provenance>,
    /// The domain's timeline recorder (`--timeline`); `None`: recording is off.
    pub rec: Option<&'a mut Recorder>,
}

impl Ctx<'_> {
    pub fn now(&self) -> Time {
        self.q.now()
    }
}
