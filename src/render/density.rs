//! Exact density per pixel column, for lanes with more items than a picture has room for.
//!
//! A column `k` of a view `[a, b)` drawn `w` columns wide is the integer-ns slice
//! `[a + (b−a)·k/w, a + (b−a)·(k+1)/w)`. Each interval is clipped to every column it
//! touches, and each column's clipped set goes through [`crate::interval::analyze_numbers`]: its
//! union is the exact busy time in the column, its measure covered twice the exact time at
//! depth ≥ 2, its max depth the deepest overlap. Nothing is sampled, so a gap of at least one
//! column's width leaves at least one column at most half busy: it stays visible.
//!
//! Time: O(n + Σ columns touched) to bucket, then one `analyze_numbers` per column (no lists built).

use crate::interval::{analyze_numbers, Interval};
use crate::units::Nanos;

/// One pixel column's exact figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Column {
    /// The column's slice `[start, end)` in ns.
    pub start: i64,
    /// End of the slice.
    pub end: i64,
    /// Measure of the union of the intervals inside the slice.
    pub busy_ns: i128,
    /// Measure of the parts of the slice covered at depth ≥ 2.
    pub overlap_ns: i128,
    /// The largest depth inside the slice.
    pub max_depth: u32,
}

impl Column {
    /// The slice's length (at least 1, so a fraction is defined).
    pub fn len(&self) -> i128 {
        (i128::from(self.end) - i128::from(self.start)).max(1)
    }

    /// Whether the slice is empty of time (a view narrower than its columns).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// `busy / len` scaled to `0..=units` and rounded down, except that a column with any
    /// idle time never reaches `units` and one with any busy time never drops to 0.
    pub fn busy_units(&self, units: i128) -> i128 {
        scaled(self.busy_ns, self.len(), units)
    }

    /// The same for the time at depth ≥ 2.
    pub fn overlap_units(&self, units: i128) -> i128 {
        scaled(self.overlap_ns, self.len(), units)
    }
}

fn scaled(part: i128, whole: i128, units: i128) -> i128 {
    if part <= 0 {
        return 0;
    }
    if part >= whole {
        return units;
    }
    (part * units / whole).clamp(1, units - 1)
}

/// The column boundaries of `view` split into `columns` columns (exact integers).
fn boundary(view: (i64, i64), columns: usize, k: usize) -> i64 {
    let (a, b) = (i128::from(view.0), i128::from(view.1));
    let n = i128::try_from(columns.max(1)).unwrap_or(1);
    let k = i128::try_from(k).unwrap_or(0);
    i64::try_from(a + (b - a) * k / n).unwrap_or(view.1)
}

/// The exact busy time, overlap time and depth of `intervals` (half-open, ns) in each of
/// `columns` columns of `view`. Intervals outside the view are ignored; reversed ones too.
pub fn columns(intervals: &[(i64, i64)], view: (i64, i64), columns: usize) -> Vec<Column> {
    let columns = columns.max(1);
    let bounds: Vec<i64> = (0..=columns).map(|k| boundary(view, columns, k)).collect();
    let mut buckets: Vec<Vec<Interval>> = vec![Vec::new(); columns];
    let column_of = |t: i64| -> usize {
        // The last column whose start is ≤ t.
        bounds[..columns]
            .partition_point(|&s| s <= t)
            .saturating_sub(1)
    };
    for &(s, e) in intervals {
        let (s, e) = (s.max(view.0), e.min(view.1));
        if e <= s {
            continue;
        }
        let first = column_of(s);
        for (k, bucket) in buckets.iter_mut().enumerate().skip(first) {
            let (cs, ce) = (bounds[k], bounds[k + 1]);
            if cs >= e {
                break;
            }
            let (a, b) = (s.max(cs), e.min(ce));
            if a < b {
                if let Ok(iv) = Interval::new(Nanos::new(a), Nanos::new(b)) {
                    bucket.push(iv);
                }
            }
        }
    }
    buckets
        .iter()
        .enumerate()
        .map(|(k, slice)| {
            let an = analyze_numbers(slice);
            Column {
                start: bounds[k],
                end: bounds[k + 1],
                busy_ns: an.union_ns,
                overlap_ns: an.covered_twice_ns,
                max_depth: an.max_depth,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    ///  view 0..100 in 10 columns of 10 ns
    ///  a: [0, 25)   b: [20, 30)   c: [31, 32)
    #[test]
    fn each_column_gets_its_exact_busy_and_overlap_time() {
        let cols = columns(&[(0, 25), (20, 30), (31, 32)], (0, 100), 10);
        assert_eq!(cols.len(), 10);
        let busy: Vec<i128> = cols.iter().map(|c| c.busy_ns).collect();
        assert_eq!(busy, vec![10, 10, 10, 1, 0, 0, 0, 0, 0, 0]);
        let overlap: Vec<i128> = cols.iter().map(|c| c.overlap_ns).collect();
        assert_eq!(overlap, vec![0, 0, 5, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(cols[2].max_depth, 2);
        assert_eq!((cols[3].start, cols[3].end), (30, 40));
    }

    #[test]
    fn a_gap_of_one_column_leaves_a_column_at_most_half_busy() {
        // Busy everywhere except [45, 55): one column's width, straddling two columns.
        let cols = columns(&[(0, 45), (55, 100)], (0, 100), 10);
        assert!(cols.iter().any(|c| c.busy_units(16) <= 8));
        // A tiny idle sliver keeps a column below full; a tiny busy sliver above empty.
        let cols = columns(&[(0, 99)], (0, 100), 1);
        assert_eq!(cols[0].busy_units(16), 15);
        let cols = columns(&[(0, 1)], (0, 100), 1);
        assert_eq!(cols[0].busy_units(16), 1);
    }

    #[test]
    fn uneven_and_extreme_views_stay_exact() {
        let cols = columns(&[(i64::MIN, i64::MAX)], (i64::MIN, i64::MAX), 7);
        assert_eq!(cols.first().unwrap().start, i64::MIN);
        assert_eq!(cols.last().unwrap().end, i64::MAX);
        let total: i128 = cols.iter().map(|c| c.busy_ns).sum();
        assert_eq!(total, i128::from(i64::MAX) - i128::from(i64::MIN));
        // More columns than ns: empty columns, no panic.
        let cols = columns(&[(0, 3)], (0, 3), 10);
        assert_eq!(cols.iter().map(|c| c.busy_ns).sum::<i128>(), 3);
    }
}
