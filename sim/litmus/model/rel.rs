//! Binary relations over the events of one candidate execution, as bit matrices (row `a` holds the
//! events `b` with `a → b`). Executions have at most [`MAX_EVENTS`] events, so a row is one `u128` and
//! composition, union and transitive closure are word operations.
//!
//! Models: the relational algebra the axiomatic models are written in (union, intersection,
//! sequence `;`, inverse, transitive closure `+`, reflexive closure `?`, acyclicity, irreflexivity).
//! Does not model: relations over more than [`MAX_EVENTS`] events (the enumeration refuses such
//! executions with a message).

/// The most events one candidate execution may have (initial writes included).
pub const MAX_EVENTS: usize = 128;

/// A set of events.
pub type Set = u128;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rel {
    rows: Vec<Set>,
}

/// The events `0..n` as a set.
pub fn all(n: usize) -> Set {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// Iterates over the members of a set, lowest first.
pub fn members(mut s: Set) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if s == 0 {
            return None;
        }
        let i = s.trailing_zeros() as usize;
        s &= s - 1;
        Some(i)
    })
}

impl Rel {
    pub fn empty(n: usize) -> Rel {
        debug_assert!(n <= MAX_EVENTS);
        Rel { rows: vec![0; n] }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn add(&mut self, a: usize, b: usize) {
        self.rows[a] |= 1 << b;
    }

    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a] >> b & 1 == 1
    }

    /// The successors of `a`.
    pub fn row(&self, a: usize) -> Set {
        self.rows[a]
    }

    pub fn set_row(&mut self, a: usize, s: Set) {
        self.rows[a] = s;
    }

    /// The predecessors of `b`.
    pub fn column(&self, b: usize) -> Set {
        let mut s = 0;
        for (a, &r) in self.rows.iter().enumerate() {
            if r >> b & 1 == 1 {
                s |= 1 << a;
            }
        }
        s
    }

    /// `[from] ; self ; [to]`: the pairs with `a ∈ from` and `b ∈ to`.
    pub fn restrict(&self, from: Set, to: Set) -> Rel {
        let mut r = Rel::empty(self.len());
        for a in members(from & all(self.len())) {
            r.rows[a] = self.rows[a] & to;
        }
        r
    }

    pub fn union(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a | b).collect(),
        }
    }

    pub fn union_with(&mut self, o: &Rel) {
        for (a, b) in self.rows.iter_mut().zip(&o.rows) {
            *a |= b;
        }
    }

    pub fn intersect(&self, o: &Rel) -> Rel {
        Rel {
            rows: self.rows.iter().zip(&o.rows).map(|(a, b)| a & b).collect(),
        }
    }

    /// `self ; o`.
    pub fn seq(&self, o: &Rel) -> Rel {
        let mut r = Rel::empty(self.len());
        for (a, &row) in self.rows.iter().enumerate() {
            let mut acc = 0;
            for m in members(row) {
                acc |= o.rows[m];
            }
            r.rows[a] = acc;
        }
        r
    }

    #[cfg(test)]
    pub fn inverse(&self) -> Rel {
        let mut r = Rel::empty(self.len());
        for (a, &row) in self.rows.iter().enumerate() {
            for b in members(row) {
                r.rows[b] |= 1 << a;
            }
        }
        r
    }

    /// `self+` (Warshall's algorithm on bit rows).
    pub fn closure(&self) -> Rel {
        let mut r = self.clone();
        let n = r.len();
        for k in 0..n {
            let rk = r.rows[k];
            if rk == 0 {
                continue;
            }
            for i in 0..n {
                if r.rows[i] >> k & 1 == 1 {
                    r.rows[i] |= rk;
                }
            }
        }
        r
    }

    /// `self?`: with the identity on `0..n`.
    pub fn reflexive(&self) -> Rel {
        let mut r = self.clone();
        for a in 0..r.len() {
            r.rows[a] |= 1 << a;
        }
        r
    }

    pub fn irreflexive(&self) -> bool {
        self.rows
            .iter()
            .enumerate()
            .all(|(a, &row)| row >> a & 1 == 0)
    }

    pub fn acyclic(&self) -> bool {
        // Repeatedly remove events without successors; a cycle leaves some behind.
        let n = self.len();
        let mut alive = all(n);
        loop {
            let mut removed = false;
            for a in members(alive) {
                if self.rows[a] & alive == 0 {
                    alive &= !(1 << a);
                    removed = true;
                }
            }
            if alive == 0 {
                return true;
            }
            if !removed {
                return false;
            }
        }
    }

    /// The pairs `(a, b)` of the relation.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(a, &row)| members(row).map(move |b| (a, b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(n: usize, pairs: &[(usize, usize)]) -> Rel {
        let mut r = Rel::empty(n);
        for &(a, b) in pairs {
            r.add(a, b);
        }
        r
    }

    #[test]
    fn closure_sequence_and_inverse() {
        let r = rel(4, &[(0, 1), (1, 2), (2, 3)]);
        let c = r.closure();
        assert!(c.has(0, 3) && c.has(1, 3) && !c.has(3, 0));
        assert_eq!(r.seq(&r), rel(4, &[(0, 2), (1, 3)]));
        assert_eq!(r.inverse(), rel(4, &[(1, 0), (2, 1), (3, 2)]));
        assert_eq!(r.column(2), 1 << 1);
    }

    #[test]
    fn cycles_are_found() {
        assert!(rel(3, &[(0, 1), (1, 2)]).acyclic());
        assert!(!rel(3, &[(0, 1), (1, 2), (2, 0)]).acyclic());
        assert!(!rel(3, &[(1, 1)]).acyclic());
        assert!(!rel(3, &[(0, 1), (1, 0)]).closure().irreflexive());
    }

    #[test]
    fn full_width_rows() {
        let mut r = Rel::empty(128);
        r.add(127, 0);
        r.add(0, 127);
        assert!(!r.acyclic());
        assert_eq!(members(all(128)).count(), 128);
        assert_eq!(
            r.restrict(1, all(128)).pairs().collect::<Vec<_>>(),
            vec![(0, 127)]
        );
    }
}
