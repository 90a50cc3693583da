//! What a warp-level exchange ([`WarpOp`]) computes for each lane, from the
//! lanes' operands and the set of lanes taking part (PTX ISA §9.7.9.6 `shfl.sync`, §9.7.13.6
//! `vote.sync`, §9.7.13.7 `match.sync`, §9.7.13.10 `redux.sync`, §9.7.13.9 `activemask`).
//!
//! `part`: the lanes that execute the instruction and are in its member mask (the machine refuses
//! one whose member mask names a live lane that is not executing it: warp-synchronous code after a
//! divergence). `shfl` reading a lane outside `part` (exited, absent past the work-group's end, or
//! not a member) is undefined in PTX; here it reads that lane's register as it stands, which is what
//! a GPU's register file gives — stated, not refused, because CUDA code shuffles with the full mask
//! in partial warps and discards those values.

use super::Ty;
use serde::{Deserialize, Serialize};

/// The source lane rule of `shfl.sync` (PTX ISA §9.7.9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote.sync` (PTX ISA §9.7.13.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// The reduction of `redux.sync` (PTX ISA §9.7.13.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// A warp-level exchange between the lanes of one warp ([`super::Inst::Warp`]); what each lane
/// computes is [`exchange`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarpOp {
    /// `shfl.sync`: `a` from the lane that `b` (lane or offset) and `c` (clamp and segment mask)
    /// name; the predicate says whether that lane was in range.
    Shfl(ShflMode),
    /// `vote.sync` of predicate `a`.
    Vote(VoteMode),
    /// `match.any.sync`: the lanes whose `a` equals this lane's.
    MatchAny,
    /// `match.all.sync`: the member mask if every lane's `a` is equal, else 0 (predicate: equal).
    MatchAll,
    /// `redux.sync` of `a` over the lanes.
    Redux(ReduxOp),
    /// `activemask`: the lanes executing it.
    ActiveMask,
}

/// The lanes' sources: `a[l]`, `b[l]`, `c[l]` of lane `l` (64 entries; lanes past the warp size unused).
pub struct LaneArgs<'a> {
    pub a: &'a [u64],
    pub b: &'a [u64],
    pub c: &'a [u64],
}

/// Result and predicate of each lane in `part` (entries of other lanes are left as they were).
pub fn exchange(
    op: WarpOp,
    ty: Ty,
    part: u64,
    ws: u32,
    x: &LaneArgs,
    dst: &mut [u64],
    pred: &mut [u64],
) {
    let mask = ty.width().mask();
    let lanes = || (0..ws as usize).filter(move |l| part >> l & 1 == 1);
    match op {
        WarpOp::Shfl(mode) => {
            for l in lanes() {
                let (j, p) = shfl_source(mode, l as u32, x.b[l] as u32, x.c[l] as u32);
                let j = if j < ws { j } else { l as u32 };
                dst[l] = x.a[j as usize] & mask;
                pred[l] = p as u64;
            }
        }
        WarpOp::Vote(mode) => {
            let ones = lanes()
                .filter(|&l| x.a[l] != 0)
                .fold(0u64, |m, l| m | 1 << l);
            let r = match mode {
                VoteMode::All => (ones == part) as u64,
                VoteMode::Any => (ones != 0) as u64,
                VoteMode::Uni => (ones == 0 || ones == part) as u64,
                VoteMode::Ballot => ones,
            };
            for l in lanes() {
                dst[l] = r;
            }
        }
        WarpOp::MatchAny => {
            for l in lanes() {
                let v = x.a[l] & mask;
                dst[l] = lanes()
                    .filter(|&k| x.a[k] & mask == v)
                    .fold(0u64, |m, k| m | 1 << k);
            }
        }
        WarpOp::MatchAll => {
            let first = lanes().next().map(|l| x.a[l] & mask);
            let all = lanes().all(|l| Some(x.a[l] & mask) == first);
            for l in lanes() {
                dst[l] = if all { part } else { 0 };
                pred[l] = all as u64;
            }
        }
        WarpOp::Redux(r) => {
            let signed = matches!(ty, Ty::I32);
            let key = |v: u64| {
                if signed {
                    v as u32 as i32 as i64
                } else {
                    v as u32 as i64
                }
            };
            let mut it = lanes().map(|l| x.a[l] & 0xFFFF_FFFF);
            let Some(first) = it.next() else { return };
            let v = it.fold(first, |acc, v| match r {
                ReduxOp::Add => (acc as u32).wrapping_add(v as u32) as u64,
                ReduxOp::Min => {
                    if key(v) < key(acc) {
                        v
                    } else {
                        acc
                    }
                }
                ReduxOp::Max => {
                    if key(v) > key(acc) {
                        v
                    } else {
                        acc
                    }
                }
                ReduxOp::And => acc & v,
                ReduxOp::Or => acc | v,
                ReduxOp::Xor => acc ^ v,
            });
            for l in lanes() {
                dst[l] = v;
            }
        }
        WarpOp::ActiveMask => {
            for l in lanes() {
                dst[l] = part;
            }
        }
    }
}

/// The source lane of a shuffle and whether it is in range (PTX ISA `shfl.sync` pseudocode):
/// `c[4:0]` clamps, `c[12:8]` is the segment mask; out of range, a lane reads its own value.
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1F;
    let cval = c & 0x1F;
    let seg = (c >> 8) & 0x1F;
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, p) = match mode {
        ShflMode::Up => {
            let j = lane as i64 - bval as i64;
            (j, j >= max_lane as i64)
        }
        ShflMode::Down => {
            let j = lane as i64 + bval as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !seg)) as i64;
            (j, j <= max_lane as i64)
        }
    };
    if p {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: WarpOp, ty: Ty, part: u64, a: &[u64], b: u64, c: u64) -> (Vec<u64>, Vec<u64>) {
        let mut aa = vec![0u64; 64];
        aa[..a.len()].copy_from_slice(a);
        let (bb, cc) = (vec![b; 64], vec![c; 64]);
        let (mut d, mut p) = (vec![99u64; 64], vec![99u64; 64]);
        let x = LaneArgs {
            a: &aa,
            b: &bb,
            c: &cc,
        };
        exchange(op, ty, part, 32, &x, &mut d, &mut p);
        (d[..32].to_vec(), p[..32].to_vec())
    }

    #[test]
    fn shuffles_follow_the_isa_lane_rules() {
        let a: Vec<u64> = (0..32).map(|l| 100 + l).collect();
        let full = 0xFFFF_FFFF;
        // __shfl_down_sync(full, v, 4): c = 0x1F.
        let (d, p) = run(WarpOp::Shfl(ShflMode::Down), Ty::U32, full, &a, 4, 0x1F);
        assert_eq!(d[0], 104);
        assert_eq!((d[28], p[28]), (128, 0), "out of range: own value, p false");
        assert_eq!(p[27], 1);
        // __shfl_up_sync(full, v, 1, 8): c = (32 - 8) << 8: segments of 8.
        let (d, p) = run(WarpOp::Shfl(ShflMode::Up), Ty::U32, full, &a, 1, 24 << 8);
        assert_eq!(
            (d[8], p[8]),
            (108, 0),
            "first lane of a segment keeps its value"
        );
        assert_eq!(d[9], 108);
        // __shfl_xor_sync(full, v, 16).
        let (d, _) = run(WarpOp::Shfl(ShflMode::Bfly), Ty::U32, full, &a, 16, 0x1F);
        assert_eq!((d[0], d[17]), (116, 101));
        // __shfl_sync(full, v, 3, 16): idx 3 within each half.
        let (d, _) = run(
            WarpOp::Shfl(ShflMode::Idx),
            Ty::U32,
            full,
            &a,
            3,
            (16 << 8) | 0x1F,
        );
        assert_eq!((d[0], d[20]), (103, 119));
        assert_eq!(shfl_source(ShflMode::Idx, 5, 40, 0x1F), (8, true));
    }

    #[test]
    fn votes_matches_and_reductions_over_the_taking_part_lanes() {
        let part = 0b1111;
        let a = [1, 0, 1, 1];
        assert_eq!(
            run(WarpOp::Vote(VoteMode::Ballot), Ty::U32, part, &a, 0, 0).0[0],
            0b1101
        );
        assert_eq!(
            run(WarpOp::Vote(VoteMode::All), Ty::U32, part, &a, 0, 0).0[1],
            0
        );
        assert_eq!(
            run(WarpOp::Vote(VoteMode::All), Ty::U32, 0b1101, &a, 0, 0).0[0],
            1
        );
        assert_eq!(
            run(WarpOp::Vote(VoteMode::Any), Ty::U32, 0b0010, &a, 0, 0).0[1],
            0
        );
        assert_eq!(
            run(WarpOp::Vote(VoteMode::Uni), Ty::U32, 0b1101, &a, 0, 0).0[0],
            1
        );
        let (d, _) = run(WarpOp::Vote(VoteMode::Ballot), Ty::U32, 0b0101, &a, 0, 0);
        assert_eq!((d[0], d[1]), (0b0101, 99), "lanes outside take no result");
        let v = [7, 9, 7, 9];
        assert_eq!(
            run(WarpOp::MatchAny, Ty::U32, part, &v, 0, 0).0[..4],
            [0b0101, 0b1010, 0b0101, 0b1010]
        );
        assert_eq!(
            run(WarpOp::MatchAll, Ty::U32, part, &v, 0, 0),
            (
                vec![0; 4].into_iter().chain(vec![99; 28]).collect(),
                vec![0; 4].into_iter().chain(vec![99; 28]).collect()
            )
        );
        let (d, p) = run(WarpOp::MatchAll, Ty::U32, 0b0101, &v, 0, 0);
        assert_eq!((d[0], p[0], d[2]), (0b0101, 1, 0b0101));
        let n = [3, (-5i32) as u32 as u64, 10, 1];
        assert_eq!(
            run(WarpOp::Redux(ReduxOp::Add), Ty::U32, part, &n, 0, 0).0[0],
            9
        );
        assert_eq!(
            run(WarpOp::Redux(ReduxOp::Min), Ty::I32, part, &n, 0, 0).0[0],
            (-5i32) as u32 as u64
        );
        assert_eq!(
            run(WarpOp::Redux(ReduxOp::Min), Ty::U32, part, &n, 0, 0).0[0],
            1
        );
        assert_eq!(
            run(WarpOp::Redux(ReduxOp::Max), Ty::U32, part, &n, 0, 0).0[0],
            (-5i32) as u32 as u64
        );
        assert_eq!(
            run(WarpOp::Redux(ReduxOp::Xor), Ty::U32, 0b0101, &n, 0, 0).0[0],
            3 ^ 10
        );
        assert_eq!(
            run(WarpOp::ActiveMask, Ty::U32, 0b0110, &n, 0, 0).0[2],
            0b0110
        );
    }
}
