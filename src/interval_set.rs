//! The union of a set of intervals on one clock, as the sorted list of its disjoint pieces,
//! with the set operations a finding needs: union, intersection and difference (SPEC §3).
//!
//! [`crate::interval::analyze`] answers *how much* a set covers. A finding often asks a
//! second question of the covered time itself: how much of the time after the syncs was the
//! device idle? That is `|W ∩ (span − busy)|`, a measure of an intersection and a difference
//! of unions, and adding up the windows of `W` one by one counts their overlaps many times:
//!
//! ```text
//! 0    10   20   30   40
//! w1   [=========)            two windows after two syncs: [0, 20) and [10, 30)
//! w2        [=========)       Σ |w| = 40, but |w1 ∪ w2| = 30
//! busy           [====)       busy [20, 30)
//! W − busy [=======)          |W − busy| = 20: never more than the span, never counted twice
//! ```
//!
//! An [`IntervalSet`] holds the union's maximal pieces, sorted and pairwise separated by a
//! gap (touching pieces are merged: `[0, 10) ∪ [10, 20) = [0, 20)`). Zero-length intervals
//! cover nothing and are dropped. Every operation returns another such set, so measures of
//! composed sets are exact integer ns and never exceed the extent of their operands.
//!
//! Cost: building is O(n log n) (sort, then one merge pass); intersection, difference and
//! union of two sets are one merge pass, O(a + b).

use serde::Serialize;

use crate::interval::Interval;
use crate::units::Nanos;

/// The union of intervals on one clock, as sorted, disjoint, non-touching, non-empty pieces.
///
/// Invariants: for consecutive pieces `p`, `q`: `p.end() < q.start()`; no piece is empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct IntervalSet {
    pieces: Vec<Interval>,
}

impl IntervalSet {
    /// The empty set.
    pub fn new() -> IntervalSet {
        IntervalSet::default()
    }

    /// The union of `intervals`, in any order. Time: O(n log n).
    pub fn from_intervals(intervals: impl IntoIterator<Item = Interval>) -> IntervalSet {
        let mut all: Vec<Interval> = intervals.into_iter().filter(|iv| !iv.is_empty()).collect();
        all.sort_unstable();
        let mut pieces: Vec<Interval> = Vec::with_capacity(all.len());
        for iv in all {
            match pieces.last_mut() {
                Some(last) if iv.start() <= last.end() => {
                    if iv.end() > last.end() {
                        *last = piece(last.start(), iv.end());
                    }
                }
                _ => pieces.push(iv),
            }
        }
        IntervalSet { pieces }
    }

    /// The union of `[start, end)` pairs in ns; pairs with `end <= start` cover nothing.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (i64, i64)>) -> IntervalSet {
        IntervalSet::from_intervals(
            pairs
                .into_iter()
                .filter(|(s, e)| e > s)
                .map(|(s, e)| piece(Nanos::new(s), Nanos::new(e))),
        )
    }

    /// The maximal pieces, in time order.
    pub fn pieces(&self) -> &[Interval] {
        &self.pieces
    }

    /// Whether the set covers no time.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The covered time, ns. It never exceeds the extent.
    pub fn measure_ns(&self) -> i128 {
        self.pieces.iter().map(Interval::length_wide).sum()
    }

    /// `[first start, last end)`, or `None` when empty.
    pub fn extent(&self) -> Option<Interval> {
        let first = self.pieces.first()?;
        let last = self.pieces.last()?;
        Some(piece(first.start(), last.end()))
    }

    /// `self ∪ other`. Time: O(a + b).
    pub fn union(&self, other: &IntervalSet) -> IntervalSet {
        let mut merged: Vec<Interval> = Vec::with_capacity(self.pieces.len() + other.pieces.len());
        let (mut i, mut j) = (0, 0);
        while i < self.pieces.len() || j < other.pieces.len() {
            let take_self = match (self.pieces.get(i), other.pieces.get(j)) {
                (Some(a), Some(b)) => a <= b,
                (Some(_), None) => true,
                _ => false,
            };
            let next = if take_self {
                i += 1;
                self.pieces[i - 1]
            } else {
                j += 1;
                other.pieces[j - 1]
            };
            match merged.last_mut() {
                Some(last) if next.start() <= last.end() => {
                    if next.end() > last.end() {
                        *last = piece(last.start(), next.end());
                    }
                }
                _ => merged.push(next),
            }
        }
        IntervalSet { pieces: merged }
    }

    /// `self ∩ other`. Time: O(a + b).
    pub fn intersection(&self, other: &IntervalSet) -> IntervalSet {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(a), Some(b)) = (self.pieces.get(i), other.pieces.get(j)) {
            let start = a.start().max(b.start());
            let end = a.end().min(b.end());
            if start < end {
                out.push(piece(start, end));
            }
            if a.end() <= b.end() {
                i += 1;
            } else {
                j += 1;
            }
        }
        IntervalSet { pieces: out }
    }

    /// `self − other`: the time `self` covers and `other` does not. Time: O(a + b).
    pub fn difference(&self, other: &IntervalSet) -> IntervalSet {
        let mut out = Vec::new();
        let mut j = 0;
        for a in &self.pieces {
            let mut from = a.start();
            while j < other.pieces.len() && other.pieces[j].end() <= from {
                j += 1;
            }
            let mut k = j;
            while let Some(b) = other.pieces.get(k) {
                if b.start() >= a.end() {
                    break;
                }
                if b.start() > from {
                    out.push(piece(from, b.start()));
                }
                from = from.max(b.end());
                if from >= a.end() {
                    break;
                }
                k += 1;
            }
            if from < a.end() {
                out.push(piece(from, a.end()));
            }
        }
        IntervalSet { pieces: out }
    }

    /// The part of the set inside `[lo, hi)`.
    pub fn clip(&self, lo: i64, hi: i64) -> IntervalSet {
        self.intersection(&IntervalSet::from_pairs([(lo, hi)]))
    }
}

/// `[start, end)` for bounds already known to be ordered.
fn piece(start: Nanos, end: Nanos) -> Interval {
    Interval::new(start, end).unwrap_or_else(|_| {
        Interval::new(start, start).expect("a zero-length interval is always valid")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::small_interval_sets;
    use proptest::prelude::*;

    fn set(pairs: &[(i64, i64)]) -> IntervalSet {
        IntervalSet::from_pairs(pairs.iter().copied())
    }

    fn pairs(s: &IntervalSet) -> Vec<(i64, i64)> {
        s.pieces()
            .iter()
            .map(|p| (p.start().as_i64(), p.end().as_i64()))
            .collect()
    }

    /// Whether tick `t` (the nanosecond `[t, t + 1)`) is covered by one of `intervals`.
    fn covers(intervals: &[Interval], t: i64) -> bool {
        intervals
            .iter()
            .any(|iv| iv.start().as_i64() <= t && t < iv.end().as_i64())
    }

    #[test]
    fn overlapping_windows_are_counted_once() {
        // The drawing in the module doc.
        let windows = set(&[(0, 20), (10, 30)]);
        let busy = set(&[(20, 30)]);
        assert_eq!(windows.measure_ns(), 30);
        assert_eq!(pairs(&windows.difference(&busy)), vec![(0, 20)]);
        assert_eq!(windows.difference(&busy).measure_ns(), 20);
    }

    #[test]
    fn touching_pieces_merge_and_zero_length_ones_vanish() {
        let s = set(&[(10, 20), (0, 10), (25, 25), (30, 40)]);
        assert_eq!(pairs(&s), vec![(0, 20), (30, 40)]);
        assert_eq!(s.extent().map(|e| e.length_wide()), Some(40));
    }

    #[test]
    fn difference_cuts_holes_and_keeps_the_rest() {
        let a = set(&[(0, 100)]);
        let b = set(&[(10, 20), (30, 40), (90, 120)]);
        assert_eq!(pairs(&a.difference(&b)), vec![(0, 10), (20, 30), (40, 90)]);
        assert_eq!(
            pairs(&a.intersection(&b)),
            vec![(10, 20), (30, 40), (90, 100)]
        );
        assert_eq!(pairs(&a.clip(5, 15)), vec![(5, 15)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn operations_match_the_tick_oracle(a in small_interval_sets(), b in small_interval_sets()) {
            let (sa, sb) = (IntervalSet::from_intervals(a.clone()), IntervalSet::from_intervals(b.clone()));
            type Rule = fn(bool, bool) -> bool;
            let ops: [(IntervalSet, Rule); 3] = [
                (sa.union(&sb), |x, y| x || y),
                (sa.intersection(&sb), |x, y| x && y),
                (sa.difference(&sb), |x, y| x && !y),
            ];
            for (result, rule) in ops {
                for w in result.pieces().windows(2) {
                    prop_assert!(w[0].end() < w[1].start());
                }
                let mut expected = 0_i128;
                for t in -5..=70 {
                    let want = rule(covers(&a, t), covers(&b, t));
                    prop_assert_eq!(covers(result.pieces(), t), want, "tick {}", t);
                    expected += i128::from(want);
                }
                prop_assert_eq!(result.measure_ns(), expected);
            }
            prop_assert_eq!(sa.measure_ns(), crate::interval::analyze(&a).union_ns);
        }
    }
}
