//! The crossbar's outbox: messages crossing from one simulation domain to another. The sender posts
//! each message with its timing at the sending port ([`Outgoing`], `xbar.rs`), its payload moved out
//! of the sender's pools; the barrier delivers it into the receiver's queue and pools (`gpu/`,
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

impl Payload {
    /// Moves an atomic batch out (its lanes are a heap vector the receiver's pool takes over); a
    /// line stays, to be copied where it is read.
    fn take_batch(&mut self) -> Option<AtomicBatch> {
        if !matches!(self, Payload::Batch(_)) {
            return None;
        }
        match std::mem::replace(self, Payload::None) {
            Payload::Batch(b) => Some(b),
            _ => None,
        }
    }
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
    /// Credits a partition's slices gave back for their inputs (`l2.input_depth`, `credit.rs`), in
    /// the order given: (arrival at the SM, SM, slice). The barrier puts each into its SM's queue as
    /// an [`Event::L2Credit`] (`gpu/`).
    pub credits: Vec<(Time, u16, u16)>,
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

/// The crossbar messages for one simulation domain, by reference: put here at the barrier as
/// (arrival, sending domain, index in its outbox) keys while the messages stay in the window's
/// [`Mail`], and received in the barrier's delivery order (arrival, sending domain, order sent) by
/// sorting the keys (a message carries a whole line: hundreds of bytes, copied once, into the
/// receiver's pool). An atomic batch is moved here at the barrier (its lanes are a heap vector that
/// the receiver's pool takes over), the slot named by its key.
#[derive(Debug, Default)]
pub struct Inbox {
    keys: Vec<Key>,
    batches: Vec<Option<AtomicBatch>>,
}

/// An inbox entry: arrival, sending domain, index in its outbox, batch slot ([`NO_BATCH`]: none).
/// (arrival, sending domain, index) are distinct, so sorting keys is the stable sort by arrival of
/// the messages listed in (sending domain, order sent) order.
type Key = (Time, u32, u32, u32);
const NO_BATCH: u32 = u32::MAX;

/// Every domain's outbox of one window, indexed by sending domain, taken out at the barrier so that
/// the receivers read it side by side (`gpu/`).
pub type Mail = [Vec<Outgoing>];

impl Inbox {
    /// Lists message `index` of domain `from`'s outbox; an atomic batch leaves the message for this
    /// inbox.
    pub fn push(&mut self, from: u32, index: u32, o: &mut Outgoing) {
        let batch = match o.payload.take_batch() {
            Some(b) => {
                self.batches.push(Some(b));
                (self.batches.len() - 1) as u32
            }
            None => NO_BATCH,
        };
        self.keys.push((o.transit.arrive, from, index, batch));
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Messages listed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Hands every listed message of `mail` to `each` in delivery order, with its atomic batch if it
    /// carries one, and empties the inbox; the first error stops the delivery.
    pub fn deliver<E>(
        &mut self,
        mail: &Mail,
        mut each: impl FnMut(&Outgoing, Option<AtomicBatch>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.keys.sort_unstable();
        let mut res = Ok(());
        for (k, &(_, from, index, batch)) in self.keys.iter().enumerate() {
            // The messages lie in other domains' outboxes, written by other threads: ask for the
            // one a few places on while this one is received (`engine::prefetch`).
            if let Some(&(_, f, i, _)) = self.keys.get(k + 4) {
                if let Some(o) = mail.get(f as usize).and_then(|m| m.get(i as usize)) {
                    crate::engine::prefetch(o);
                }
            }
            let b = (batch != NO_BATCH)
                .then(|| self.batches[batch as usize].take())
                .flatten();
            res = each(&mail[from as usize][index as usize], b);
            if res.is_err() {
                break;
            }
        }
        self.keys.clear();
        self.batches.clear();
        res
    }
}

impl Outgoing {
    /// The event as the receiver sees it, its payload moved out of the message into the receiver's
    /// pools.
    pub fn arrive(mut self, lines: &mut Pool<LineBuf>, batches: &mut Pool<AtomicBatch>) -> Event {
        let batch = self.payload.take_batch();
        self.receive(batch, lines, batches)
    }

    /// The event as the receiver sees it: its line copied into the receiver's pool, its atomic
    /// batch (`batch`, moved out of the message before) put there.
    pub fn receive(
        &self,
        batch: Option<AtomicBatch>,
        lines: &mut Pool<LineBuf>,
        batches: &mut Pool<AtomicBatch>,
    ) -> Event {
        let mut ev = self.event;
        match (&mut ev, &self.payload, batch) {
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
                _,
            ) => *data = DataId(lines.alloc(*b)),
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
                _,
                Some(b),
            ) => *batch = BatchId(batches.alloc(b)),
            _ => {}
        }
        ev
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::LaneAtomic;

    fn transit(arrive: Time) -> Transit {
        Transit {
            arrive,
            occupancy: 0,
            bytes: 8,
        }
    }

    fn read(sm: u16, tag: u32) -> Event {
        Event::SliceIn(
            0,
            MemReq {
                sm,
                tag,
                line: 0,
                kind: ReqKind::Read { mask: 1 },
                near: false,
            },
        )
    }

    #[test]
    fn an_inbox_delivers_by_arrival_then_sending_domain_then_order_sent() {
        // Two senders' outboxes; listed in any order, delivered in one.
        let mut mail: Vec<Vec<Outgoing>> = vec![Vec::new(), Vec::new()];
        for (from, arrivals) in [(0usize, [30, 10, 20]), (1, [10, 30, 10])] {
            for (i, a) in arrivals.into_iter().enumerate() {
                mail[from].push(Outgoing {
                    transit: transit(a),
                    src: from as u16,
                    event: read(from as u16, i as u32),
                    payload: Payload::None,
                });
            }
        }
        let mut inbox = Inbox::default();
        for from in [1usize, 0] {
            for i in [2usize, 0, 1] {
                inbox.push(from as u32, i as u32, &mut mail[from][i]);
            }
        }
        assert_eq!(inbox.len(), 6);
        let mut got = Vec::new();
        inbox
            .deliver(&mail, |o, b| {
                assert!(b.is_none());
                let Event::SliceIn(_, r) = o.event else {
                    unreachable!()
                };
                got.push((o.transit.arrive, r.sm, r.tag));
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(
            got,
            vec![
                (10, 0, 1),
                (10, 1, 0),
                (10, 1, 2),
                (20, 0, 2),
                (30, 0, 0),
                (30, 1, 1)
            ]
        );
        assert!(inbox.is_empty());
    }

    #[test]
    fn payloads_reach_the_receivers_pools_and_leave_nothing_behind() {
        let mut lines: Pool<LineBuf> = Pool::default();
        let mut batches: Pool<AtomicBatch> = Pool::default();
        let mut out = Outbox::default();
        let mut line = [0u8; MAX_LINE];
        line[5] = 7;
        let data = DataId(lines.alloc(line));
        let lane = LaneAtomic {
            lane: 3,
            addr: 64,
            operand: 1,
            expected: 0,
            result: 0,
        };
        let batch = BatchId(batches.alloc(AtomicBatch {
            op: AtomicOp::Cas,
            ty: Ty::U32,
            lanes: vec![lane],
        }));
        let req = |kind| MemReq {
            sm: 0,
            tag: 0,
            line: 0,
            kind,
            near: false,
        };
        let write = Event::SliceIn(0, req(ReqKind::Write { mask: 1, data }));
        let atomic = Event::SliceIn(0, req(ReqKind::Atomic { batch }));
        out.post(transit(5), 0, write, &mut lines, &mut batches);
        out.post(transit(5), 0, atomic, &mut lines, &mut batches);
        let mut mail = vec![std::mem::take(&mut out.sent)];
        let mut inbox = Inbox::default();
        inbox.push(0, 0, &mut mail[0][0]);
        inbox.push(0, 1, &mut mail[0][1]);
        assert!(
            matches!(mail[0][1].payload, Payload::None),
            "the batch moved to the inbox"
        );
        // The receiver's own pools.
        let (mut rl, mut rb): (Pool<LineBuf>, Pool<AtomicBatch>) = Default::default();
        let mut events = Vec::new();
        inbox
            .deliver(&mail, |o, b| {
                events.push(o.receive(b, &mut rl, &mut rb));
                Ok::<(), ()>(())
            })
            .unwrap();
        let Event::SliceIn(
            _,
            MemReq {
                kind: ReqKind::Write { data, .. },
                ..
            },
        ) = events[0]
        else {
            panic!("a write: {:?}", events[0])
        };
        assert_eq!(rl.get(data.0)[5], 7);
        let Event::SliceIn(
            _,
            MemReq {
                kind: ReqKind::Atomic { batch },
                ..
            },
        ) = events[1]
        else {
            panic!("an atomic: {:?}", events[1])
        };
        let got: Vec<(u8, u64, u64)> = (rb.get(batch.0).lanes.iter())
            .map(|l| (l.lane, l.addr, l.operand))
            .collect();
        assert_eq!(got, vec![(lane.lane, lane.addr, lane.operand)]);
        assert_eq!((rl.live(), rb.live()), (1, 1));
    }
}
