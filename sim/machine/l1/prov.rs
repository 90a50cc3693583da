//! Access provenance of the L1 (`litmus --explain`): what it records when a run asks for it
//! (`RunOptions::provenance`); nothing when it does not.

use super::{Pending, L1};
use crate::ctx::Ctx;
use crate::msg::{ReqKind, Requester};
use crate::provenance::{ProvEvent, SendKind};

impl L1 {
    /// Provenance: a request sent for a warp or a fill (stress traffic is not recorded).
    pub(super) fn prov_send(
        &self,
        tag: u32,
        line: u64,
        kind: ReqKind,
        p: Pending,
    ) -> Option<ProvEvent> {
        let warp = |who: Requester| match who {
            Requester::Warp { warp, op } => Some((warp, op)),
            _ => None,
        };
        let (mask, kind) = match (kind, p) {
            (ReqKind::Read { mask }, Pending::FillPart { .. }) => (mask, SendKind::Fill),
            (ReqKind::Read { mask }, Pending::Bypass { who, .. }) => {
                let (warp, op) = warp(who)?;
                (mask, SendKind::Bypass { warp, op })
            }
            (ReqKind::Write { mask, .. }, Pending::Write { by, .. }) => match by {
                Requester::Stress { .. } => return None,
                Requester::Drain { warp } | Requester::Warp { warp, .. } => {
                    (mask, SendKind::Write { warp: Some(warp) })
                }
            },
            (ReqKind::Atomic { .. }, Pending::Atomic { who, .. }) => {
                let (warp, op) = warp(who)?;
                (0, SendKind::Atomic { warp, op })
            }
            _ => return None,
        };
        Some(ProvEvent::L1Send {
            sm: self.sm,
            tag,
            line,
            mask,
            kind,
        })
    }

    /// Provenance: a load of `who` at the L1 (hit, or miss answered by the fill).
    pub(super) fn prov_load(&self, ctx: &mut Ctx, who: Requester, line: u64, hit: bool) {
        if let (Some(p), Requester::Warp { warp, op }) = (ctx.prov.as_deref_mut(), who) {
            let sm = self.sm;
            p.push(
                ctx.q.now(),
                ProvEvent::L1Load {
                    sm,
                    warp,
                    op,
                    line,
                    hit,
                },
            );
        }
    }

    /// Provenance: the L1 dropped `line` (`None`: every line).
    pub(super) fn prov_drop(&self, ctx: &mut Ctx, line: Option<u64>) {
        if let Some(p) = ctx.prov.as_deref_mut() {
            p.push(ctx.q.now(), ProvEvent::L1Drop { sm: self.sm, line });
        }
    }
}
