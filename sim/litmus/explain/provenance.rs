//! Reading the recorded provenance: what served a load or atomic (the warp's store buffer, an L1 line and
//! the fill or store behind it, an L2 slice, an atomic unit) and when a store became visible at each level.

use super::*;

/// What served load or atomic `op` of `sm`, from the events between its issue `from` and its
/// completion `to`.
pub(super) fn served(
    ev: &[(Time, ProvEvent)],
    from: usize,
    to: usize,
    sm: u16,
    op: u32,
    line: u64,
    addr: u64,
) -> Served {
    let pt = |i: usize| (ev[i].0, i);
    for i in from..to.min(ev.len()) {
        match &ev[i].1 {
            ProvEvent::Forward {
                sm: s,
                op: o,
                line: l,
            } if *s == sm && *o == op && *l == line => return Served::Forward,
            ProvEvent::L1Load {
                sm: s,
                op: o,
                line: l,
                hit,
                ..
            } if *s == sm && *o == op && *l == line => {
                if *hit {
                    return Served::L1Hit {
                        at: pt(i),
                        line: line_source(ev, i, sm, line, addr),
                    };
                }
                // Answered by the line's fill: its latest read of this byte before the answer.
                let ans = (i..to.min(ev.len())).find(|&j| {
                    matches!(&ev[j].1, ProvEvent::L1FillServed { sm: s, op: o, line: l }
                        if *s == sm && *o == op && *l == line)
                });
                let Some(ans) = ans else {
                    return Served::Unknown;
                };
                return match fill_read(ev, ans, sm, line, addr) {
                    Some((slice, at)) => Served::L2 {
                        slice,
                        at,
                        miss: true,
                    },
                    None => Served::Unknown,
                };
            }
            ProvEvent::L1Send {
                sm: s,
                tag,
                line: l,
                kind: SendKind::Bypass { op: o, .. } | SendKind::Atomic { op: o, .. },
                ..
            } if *s == sm && *o == op && *l == line => {
                return match serve_of(ev, i, sm, *tag) {
                    Some((slice, at, ServeKind::Atomic)) => Served::AtomicL2 { slice, at },
                    Some((slice, at, _)) => Served::L2 {
                        slice,
                        at,
                        miss: false,
                    },
                    None => Served::Unknown,
                };
            }
            ProvEvent::L1Atomic {
                sm: s,
                op: o,
                line: l,
            } if *s == sm && *o == op && *l == line => return Served::AtomicL1 { at: pt(i) },
            _ => {}
        }
    }
    Served::Unknown
}

/// The slice and time at which request `tag` of `sm`, sent at event `sent`, was served.
pub(super) fn serve_of(
    ev: &[(Time, ProvEvent)],
    sent: usize,
    sm: u16,
    tag: u32,
) -> Option<(u16, Pt, ServeKind)> {
    (sent + 1..ev.len()).find_map(|j| match &ev[j].1 {
        ProvEvent::L2Serve {
            slice,
            sm: s,
            tag: t,
            kind,
            ..
        } if *s == sm && *t == tag => Some((*slice, (ev[j].0, j), *kind)),
        _ => None,
    })
}

/// The L2 read that brought byte `addr` of `line` into `sm`'s L1 for a fill completing at event
/// `at`: the latest fill request covering the byte sent before it.
pub(super) fn fill_read(
    ev: &[(Time, ProvEvent)],
    at: usize,
    sm: u16,
    line: u64,
    addr: u64,
) -> Option<(u16, Pt)> {
    let sent = (0..at).rev().find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Send { sm: s, line: l, mask, kind: SendKind::Fill, .. }
            if *s == sm && *l == line && covers(*l, *mask, addr))
    })?;
    let ProvEvent::L1Send { tag, .. } = &ev[sent].1 else {
        unreachable!("found above")
    };
    serve_of(ev, sent, sm, *tag).map(|(s, p, _)| (s, p))
}

/// How the L1 line of `sm` hit at event `hit` came to hold byte `addr`: the latest install or
/// local write of it (a local write during the fill counts as later: it is applied on arrival);
/// none: pre-warmed.
pub(super) fn line_source(
    ev: &[(Time, ProvEvent)],
    hit: usize,
    sm: u16,
    line: u64,
    addr: u64,
) -> LineSrc {
    for j in (0..hit).rev() {
        match &ev[j].1 {
            ProvEvent::L1Install {
                sm: s,
                line: l,
                mask,
            } if *s == sm && *l == line && covers(*l, *mask, addr) => {
                let read = fill_read(ev, j, sm, line, addr);
                // A store accepted while the fill was outstanding was applied over it.
                let sent = read.map(|r| r.1 .1).unwrap_or(j);
                let over = (sent..j).rev().find(|&w| {
                    matches!(&ev[w].1, ProvEvent::L1Store { sm: s, line: l, mask, .. }
                        if *s == sm && *l == line && covers(*l, *mask, addr))
                });
                return match over {
                    Some(w) => LineSrc::Written((ev[w].0, w)),
                    None => LineSrc::Fill {
                        installed: (ev[j].0, j),
                        read,
                    },
                };
            }
            ProvEvent::L1Store {
                sm: s,
                line: l,
                mask,
                held: true,
                ..
            } if *s == sm && *l == line && covers(*l, *mask, addr) => {
                return LineSrc::Written((ev[j].0, j))
            }
            _ => {}
        }
    }
    LineSrc::Prewarmed
}

/// When the store issued at event `from` (lane address `addr` of `warp` on `sm`) left the store
/// buffer, reached the L1 and reached L2.
pub(super) fn store_visibility(
    ev: &[(Time, ProvEvent)],
    from: usize,
    sm: u16,
    warp: u16,
    line: u64,
    addr: u64,
    buffered: bool,
) -> Visible {
    let mut v = Visible::default();
    let mut at = from;
    if buffered {
        let Some(d) = (from + 1..ev.len()).find(|&j| {
            matches!(&ev[j].1, ProvEvent::SbDrain { sm: s, warp: w, line: l, mask }
                if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
        }) else {
            return v;
        };
        v.drained = Some((ev[d].0, d));
        at = d;
    }
    let Some(l1) = (at + 1..ev.len()).find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Store { sm: s, warp: Some(w), line: l, mask, .. }
            if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
    }) else {
        return v;
    };
    if let ProvEvent::L1Store { held, .. } = ev[l1].1 {
        v.l1 = Some(((ev[l1].0, l1), held));
    }
    let send = (l1..ev.len()).find(|&j| {
        matches!(&ev[j].1, ProvEvent::L1Send { sm: s, line: l, mask, kind: SendKind::Write { warp: Some(w) }, .. }
            if *s == sm && *w == warp && *l == line && covers(*l, *mask, addr))
    });
    if let Some(s) = send {
        if let ProvEvent::L1Send { tag, .. } = ev[s].1 {
            v.l2 = serve_of(ev, s, sm, tag).map(|(sl, p, _)| (sl, p));
        }
    }
    v
}
