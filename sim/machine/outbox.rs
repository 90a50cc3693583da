//! The crossbar's outbox: messages crossing from one simulation domain to another. The sender posts
//! each message with its timing at the sending port ([`Outgoing`], `xbar.rs`), its payload moved out
//! of the sender's pools; the barrier delivers it into the receiver's queue and pools (`gpu.rs`,
//! `domain.rs`), where the receiving port decides its contention.

use super::atomic::AtomicBatch;
use super::msg::{BatchId, DataId, Event, MemReq, MemResp, ReqKind, RespKind};
use super::pool::{LineBuf, Pool, MAX_LINE};
use super::xbar::Transit;
use crate::engine::Time;
use crate::ir::{AtomicOp, Ty};

/// A payload travelling with a message between simulation domains (each domain has its own pools).
#[derive(Debug, Clone)]
pub enum Payload {
    None,
    Line(LineBuf),
    Batch(AtomicBatch),
}

/// A crossbar message leaving its sender's simulation domain: its timing at the sending port, the
/// sending port, and the event it becomes at the receiver, whose payload (if any) travels by value
/// (the event's payload handle is re-issued by the receiver's pool).
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub transit: Transit,
    /// The sending port: an SM (requests) or a slice (responses).
    pub src: u16,
    pub event: Event,
    pub payload: Payload,
}

/// The messages a domain sent over the crossbar, in the order it sent them.
#[derive(Debug, Default)]
pub struct Outbox {
    pub sent: Vec<Outgoing>,
}

impl Outbox {
    /// Sends `event` (an `SliceIn` request or an `L1FromXbar` response) from port `src`; its payload
    /// leaves the sender's pools.
    pub fn post(
        &mut self,
        transit: Transit,
        src: u16,
        event: Event,
        lines: &mut Pool<LineBuf>,
        batches: &mut Pool<AtomicBatch>,
    ) {
        let payload = match event {
            Event::SliceIn(
                _,
                MemReq {
                    kind: ReqKind::Write { data, .. },
                    ..
                },
            )
            | Event::L1FromXbar(
                _,
                MemResp {
                    kind: RespKind::Data(data),
                    ..
                },
            ) => Payload::Line(lines.take(data.0, [0; MAX_LINE])),
            Event::SliceIn(
                _,
                MemReq {
                    kind: ReqKind::Atomic { batch },
                    ..
                },
            )
            | Event::L1FromXbar(
                _,
                MemResp {
                    kind: RespKind::AtomicDone(batch),
                    ..
                },
            ) => Payload::Batch(batches.take(
                batch.0,
                AtomicBatch {
                    op: AtomicOp::Cas,
                    ty: Ty::U32,
                    lanes: Vec::new(),
                },
            )),
            _ => Payload::None,
        };
        self.sent.push(Outgoing {
            transit,
            src,
            event,
            payload,
        });
    }
}

/// The crossbar messages for one simulation domain: put here at the barrier in (sending domain,
/// order sent) order, received in the barrier's delivery order (arrival, sending domain, order
/// sent). The order is found by sorting (arrival, position) keys, not the messages themselves
/// (a message carries a whole line: hundreds of bytes to move per comparison).
#[derive(Debug, Default)]
pub struct Inbox {
    msgs: Vec<Outgoing>,
    order: Vec<(Time, u32)>,
}

impl Inbox {
    pub fn push(&mut self, o: Outgoing) {
        self.msgs.push(o);
    }

    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// Hands every message to `each` in delivery order (its payload still in it: [`Outgoing::arrive`]
    /// moves it out) and empties the inbox; the first error stops the delivery.
    pub fn deliver<E>(
        &mut self,
        mut each: impl FnMut(&mut Outgoing) -> Result<(), E>,
    ) -> Result<(), E> {
        self.order.clear();
        self.order.extend(
            self.msgs
                .iter()
                .enumerate()
                .map(|(i, o)| (o.transit.arrive, i as u32)),
        );
        // (arrival, position) pairs are distinct, so sorting them is the stable sort by arrival.
        self.order.sort_unstable();
        let mut res = Ok(());
        for &(_, i) in &self.order {
            res = each(&mut self.msgs[i as usize]);
            if res.is_err() {
                break;
            }
        }
        self.msgs.clear();
        res
    }
}

impl Outgoing {
    /// The event as the receiver sees it: its payload moved out of the message into the receiver's
    /// pools.
    pub fn arrive(&mut self, lines: &mut Pool<LineBuf>, batches: &mut Pool<AtomicBatch>) -> Event {
        let mut ev = self.event;
        match (&mut ev, std::mem::replace(&mut self.payload, Payload::None)) {
            (
                Event::SliceIn(
                    _,
                    MemReq {
                        kind: ReqKind::Write { data, .. },
                        ..
                    },
                )
                | Event::L1FromXbar(
                    _,
                    MemResp {
                        kind: RespKind::Data(data),
                        ..
                    },
                ),
                Payload::Line(b),
            ) => *data = DataId(lines.alloc(b)),
            (
                Event::SliceIn(
                    _,
                    MemReq {
                        kind: ReqKind::Atomic { batch },
                        ..
                    },
                )
                | Event::L1FromXbar(
                    _,
                    MemResp {
                        kind: RespKind::AtomicDone(batch),
                        ..
                    },
                ),
                Payload::Batch(b),
            ) => *batch = BatchId(batches.alloc(b)),
            _ => {}
        }
        ev
    }
}
