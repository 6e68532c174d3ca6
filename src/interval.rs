//! Half-open intervals on one clock, and the exact algebra of a set of them (SPEC §3).
//!
//! An [`Interval`] is `[start, end)`: inclusive below, exclusive above, so two intervals
//! that touch (`a.end == b.start`) neither overlap nor leave a gap. `start == end` is a
//! zero-length interval; `end < start` cannot be built.
//!
//! [`analyze`] computes, for a set of intervals that all lie on one clock: count, sum,
//! covered union, span, the gaps (listed) and the overlap (amount, the regions of depth ≥ 2,
//! and the maximum depth):
//!
//! ```text
//! 7000      7040      7080      7100
//!   [======= a ========)                 a = [7000, 7080)
//!             [========= b ========)     b = [7040, 7100)
//!   |<-------- union 100 --------->|     sum 140, overlap 40
//!             [== depth 2 ==)            one overlap region, [7040, 7080)
//! ```
//!
//! Identities (checked by the property tests against a tick-by-tick oracle): for a
//! non-empty set, `span = union + Σ gaps`, `sum = union + overlap`,
//! `overlap = Σ (depth − 1) × length` over maximal pieces of constant depth.
//!
//! Cost: O(n log n) for unsorted input (one sort, one sweep); O(n log d) when the input is
//! already sorted by start, where `d` is the maximum depth (no sort is done).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::units::Nanos;

/// A half-open interval `[start, end)` on one clock.
///
/// Invariants: `start <= end`. The fields are private so no interval breaks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Interval {
    start: Nanos,
    end: Nanos,
}

/// An interval whose end lies before its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("interval ends at {end}, before its start {start}")]
pub struct ReversedInterval {
    /// The start given.
    pub start: Nanos,
    /// The end given, earlier than `start`.
    pub end: Nanos,
}

impl Interval {
    /// `[start, end)`.
    ///
    /// # Errors
    /// [`ReversedInterval`] when `end < start`. `end == start` is allowed (zero length).
    pub fn new(start: Nanos, end: Nanos) -> Result<Self, ReversedInterval> {
        if end < start {
            Err(ReversedInterval { start, end })
        } else {
            Ok(Interval { start, end })
        }
    }

    /// The inclusive lower bound.
    pub fn start(&self) -> Nanos {
        self.start
    }

    /// The exclusive upper bound.
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// `end - start` as an `i128`, which cannot overflow.
    pub fn length_wide(&self) -> i128 {
        i128::from(self.end.as_i64()) - i128::from(self.start.as_i64())
    }

    /// Whether the interval covers no time at all.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A maximal stretch where at least two intervals are active at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OverlapRegion {
    /// Where the region starts and ends.
    #[serde(flatten)]
    pub span: Interval,
    /// The largest number of intervals active at once inside the region (≥ 2).
    pub max_depth: u32,
}

/// Everything SPEC §3 defines for a set of intervals on one clock.
///
/// Amounts are `i128` nanoseconds internally because the sum of many `i64` lengths can
/// exceed `i64`; [`crate::engine::wide`] prints them exactly either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAnalysis {
    /// Number of intervals, zero-length ones included.
    pub count: usize,
    /// Σ (end − start): overlap counted once per interval.
    pub sum_ns: i128,
    /// Measure of the union of the intervals.
    pub union_ns: i128,
    /// `[min start, max end)`, or `None` for an empty set.
    pub extent: Option<Interval>,
    /// The maximal uncovered pieces of the extent, in order.
    pub gaps: Vec<Interval>,
    /// The maximal pieces covered at depth ≥ 2, in order.
    pub overlap_regions: Vec<OverlapRegion>,
    /// The largest number of intervals covering one instant (0 when nothing is covered).
    pub max_depth: u32,
    /// Σ over maximal constant-depth pieces of (depth − 1) × length, from the sweep.
    pub weighted_overlap_ns: i128,
}

impl SetAnalysis {
    /// `max end − min start`, or `None` for an empty set (SPEC: `empty-set`).
    pub fn span_ns(&self) -> Option<i128> {
        self.extent.map(|e| e.length_wide())
    }

    /// `sum − union`: the time counted more than once.
    pub fn overlap_ns(&self) -> i128 {
        self.sum_ns - self.union_ns
    }

    /// Σ of the gap lengths.
    pub fn gap_total_ns(&self) -> i128 {
        self.gaps.iter().map(Interval::length_wide).sum()
    }
}

/// Analyzes a set of intervals that all lie on one clock.
///
/// Sorting is skipped when `intervals` is already ordered by start.
///
/// ```
/// use worksheet::interval::{analyze, Interval};
/// use worksheet::units::Nanos;
/// let us = |v: i64| Nanos::new(v * 1_000);
/// let a = Interval::new(us(7000), us(7080)).unwrap();
/// let b = Interval::new(us(7040), us(7100)).unwrap();
/// let r = analyze(&[a, b]);
/// assert_eq!((r.sum_ns, r.union_ns, r.overlap_ns()), (140_000, 100_000, 40_000));
/// assert_eq!(r.max_depth, 2);
/// ```
pub fn analyze(intervals: &[Interval]) -> SetAnalysis {
    let sorted_already = intervals.windows(2).all(|w| w[0].start <= w[1].start);
    if sorted_already {
        sweep(intervals)
    } else {
        let mut owned = intervals.to_vec();
        owned.sort_unstable_by_key(|i| i.start);
        sweep(&owned)
    }
}

/// One pass over intervals sorted by start.
fn sweep(sorted: &[Interval]) -> SetAnalysis {
    let count = sorted.len();
    let mut sum_ns: i128 = 0;
    let mut extent: Option<(Nanos, Nanos)> = None;
    for iv in sorted {
        sum_ns += iv.length_wide();
        extent = Some(match extent {
            None => (iv.start, iv.end),
            Some((lo, hi)) => (lo.min(iv.start), hi.max(iv.end)),
        });
    }
    let Some((lo, hi)) = extent else {
        return SetAnalysis {
            count,
            sum_ns,
            union_ns: 0,
            extent: None,
            gaps: Vec::new(),
            overlap_regions: Vec::new(),
            max_depth: 0,
            weighted_overlap_ns: 0,
        };
    };

    let mut union_ns: i128 = 0;
    let mut gaps = Vec::new();
    // `reach`: the end of the covered run so far (starts at the extent's low end).
    let mut reach = lo;
    let mut run_start: Option<Nanos> = None;

    // Depth tracking: ends of the active non-empty intervals.
    let mut active: BinaryHeap<Reverse<Nanos>> = BinaryHeap::new();
    let mut depth: u32 = 0;
    let mut max_depth: u32 = 0;
    let mut last_change = lo;
    let mut weighted_overlap_ns: i128 = 0;
    let mut regions: Vec<OverlapRegion> = Vec::new();
    let mut region: Option<(Nanos, u32)> = None;

    // Moves the depth sweep to instant `t`, where the depth becomes `new_depth`.
    let mut step = |t: Nanos,
                    new_depth: u32,
                    depth: &mut u32,
                    last_change: &mut Nanos,
                    regions: &mut Vec<OverlapRegion>,
                    region: &mut Option<(Nanos, u32)>| {
        if *depth >= 2 {
            weighted_overlap_ns += (i128::from(t.as_i64()) - i128::from(last_change.as_i64()))
                * i128::from(*depth - 1);
        }
        *last_change = t;
        if new_depth >= 2 {
            match region {
                Some((_, peak)) => *peak = (*peak).max(new_depth),
                None => {
                    // A region that closed at this very instant continues (maximal pieces).
                    *region = match regions.last() {
                        Some(last) if last.span.end == t => {
                            let last = regions.pop().expect("just looked at it");
                            Some((last.span.start, last.max_depth.max(new_depth)))
                        }
                        _ => Some((t, new_depth)),
                    };
                }
            }
        } else if let Some((from, peak)) = region.take() {
            if from < t {
                regions.push(OverlapRegion {
                    span: Interval {
                        start: from,
                        end: t,
                    },
                    max_depth: peak,
                });
            }
        }
        *depth = new_depth;
    };

    for iv in sorted.iter().filter(|iv| !iv.is_empty()) {
        // Union and gaps.
        match run_start {
            None => {
                if iv.start > reach {
                    gaps.push(Interval {
                        start: reach,
                        end: iv.start,
                    });
                }
                run_start = Some(iv.start);
                reach = iv.end;
            }
            Some(from) => {
                if iv.start > reach {
                    union_ns += i128::from(reach.as_i64()) - i128::from(from.as_i64());
                    gaps.push(Interval {
                        start: reach,
                        end: iv.start,
                    });
                    run_start = Some(iv.start);
                    reach = iv.end;
                } else if iv.end > reach {
                    reach = iv.end;
                }
            }
        }
        // Depth: retire every interval that ended at or before this start (half-open).
        while let Some(&Reverse(end)) = active.peek() {
            if end > iv.start {
                break;
            }
            active.pop();
            // Several intervals may end at one instant: apply them together.
            let mut new_depth = depth - 1;
            while let Some(&Reverse(same)) = active.peek() {
                if same != end {
                    break;
                }
                active.pop();
                new_depth -= 1;
            }
            step(
                end,
                new_depth,
                &mut depth,
                &mut last_change,
                &mut regions,
                &mut region,
            );
        }
        active.push(Reverse(iv.end));
        step(
            iv.start,
            depth + 1,
            &mut depth,
            &mut last_change,
            &mut regions,
            &mut region,
        );
        max_depth = max_depth.max(depth);
    }
    if let Some(from) = run_start {
        union_ns += i128::from(reach.as_i64()) - i128::from(from.as_i64());
    }
    if hi > reach {
        gaps.push(Interval {
            start: reach,
            end: hi,
        });
    }
    while let Some(Reverse(end)) = active.pop() {
        let mut new_depth = depth - 1;
        while let Some(&Reverse(same)) = active.peek() {
            if same != end {
                break;
            }
            active.pop();
            new_depth -= 1;
        }
        step(
            end,
            new_depth,
            &mut depth,
            &mut last_change,
            &mut regions,
            &mut region,
        );
    }

    SetAnalysis {
        count,
        sum_ns,
        union_ns,
        extent: Some(Interval { start: lo, end: hi }),
        gaps,
        overlap_regions: regions,
        max_depth,
        weighted_overlap_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: i64, end: i64) -> Interval {
        Interval::new(Nanos::new(start), Nanos::new(end)).unwrap()
    }

    #[test]
    fn reversed_interval_is_refused() {
        assert!(Interval::new(Nanos::new(5), Nanos::new(4)).is_err());
        assert!(Interval::new(Nanos::new(5), Nanos::new(5)).is_ok());
    }

    ///  0    10    20
    ///  [== a ==)
    ///        [== b ==)
    #[test]
    fn touching_intervals_leave_no_gap_and_no_overlap() {
        let r = analyze(&[iv(0, 10), iv(10, 20)]);
        assert_eq!((r.sum_ns, r.union_ns, r.span_ns()), (20, 20, Some(20)));
        assert!(r.gaps.is_empty());
        assert!(r.overlap_regions.is_empty());
        assert_eq!(r.max_depth, 1);
    }

    ///  0          100
    ///  [=== outer ===)
    ///     [inner)
    ///     20   50
    #[test]
    fn nested_interval_counts_once() {
        let r = analyze(&[iv(0, 100), iv(20, 50)]);
        assert_eq!(r.union_ns, 100);
        assert_eq!(r.overlap_ns(), 30);
        assert_eq!(
            r.overlap_regions,
            vec![OverlapRegion {
                span: iv(20, 50),
                max_depth: 2
            }]
        );
    }

    #[test]
    fn identical_intervals_three_times_reach_depth_three() {
        let r = analyze(&[iv(5, 15), iv(5, 15), iv(5, 15)]);
        assert_eq!((r.union_ns, r.overlap_ns(), r.max_depth), (10, 20, 3));
        assert_eq!(r.weighted_overlap_ns, 20);
        assert_eq!(
            r.overlap_regions,
            vec![OverlapRegion {
                span: iv(5, 15),
                max_depth: 3
            }]
        );
    }

    #[test]
    fn zero_length_interval_inside_changes_count_only() {
        let base = analyze(&[iv(0, 10), iv(20, 30)]);
        let with = analyze(&[iv(0, 10), iv(5, 5), iv(20, 30)]);
        assert_eq!(with.count, base.count + 1);
        assert_eq!(
            (
                with.sum_ns,
                with.union_ns,
                with.span_ns(),
                &with.gaps,
                with.max_depth
            ),
            (
                base.sum_ns,
                base.union_ns,
                base.span_ns(),
                &base.gaps,
                base.max_depth
            )
        );
    }

    #[test]
    fn empty_set_has_no_span() {
        let r = analyze(&[]);
        assert_eq!(
            (r.count, r.sum_ns, r.union_ns, r.span_ns()),
            (0, 0, 0, None)
        );
    }

    ///  0    10        30    40
    ///  [ a  )         [  b  )
    ///       |<- gap ->|
    #[test]
    fn disjoint_intervals_list_their_gap() {
        let r = analyze(&[iv(30, 40), iv(0, 10)]);
        assert_eq!(r.gaps, vec![iv(10, 30)]);
        assert_eq!((r.union_ns, r.span_ns()), (20, Some(40)));
    }

    #[test]
    fn overlap_regions_split_where_depth_falls_to_one() {
        // [0,10) [5,15) [12,20) [14,30): depth ≥ 2 on [5,10) and [12,20)
        let r = analyze(&[iv(0, 10), iv(5, 15), iv(12, 20), iv(14, 30)]);
        assert_eq!(
            r.overlap_regions,
            vec![
                OverlapRegion {
                    span: iv(5, 10),
                    max_depth: 2
                },
                OverlapRegion {
                    span: iv(12, 20),
                    max_depth: 3
                },
            ]
        );
        assert_eq!(r.weighted_overlap_ns, r.overlap_ns());
    }

    /// 0    5    10   15   20
    /// [==== a ===)
    ///      [= b =)
    ///           [===== c ======)
    ///           [== d ==)
    #[test]
    fn overlap_continuing_across_a_shared_boundary_is_one_region() {
        let r = analyze(&[iv(0, 10), iv(5, 10), iv(10, 20), iv(10, 15)]);
        assert_eq!(
            r.overlap_regions,
            vec![OverlapRegion {
                span: iv(5, 15),
                max_depth: 2
            }]
        );
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let r = analyze(&[iv(i64::MIN, i64::MAX), iv(i64::MIN, i64::MAX)]);
        assert_eq!(r.union_ns, i128::from(i64::MAX) - i128::from(i64::MIN));
        assert_eq!(r.sum_ns, 2 * r.union_ns);
    }
}
