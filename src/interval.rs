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
//! [`analyze_numbers`] computes the same numbers without the gap and region lists
//! ([`SetNumbers`]), for callers that need no lists (import summaries, per-pixel density).
//!
//! Identities (checked by the property tests against a tick-by-tick oracle): for a
//! non-empty set, `span = union + Σ gaps`, `sum = union + overlap`,
//! `overlap = Σ (depth − 1) × length` over maximal pieces of constant depth.
//!
//! Cost: input already sorted by start is read once, in O(n) while at most 16 intervals are
//! open at any instant and O(n log d) beyond (`d` the maximum depth). [`analyze_numbers`]
//! reads sorted input once with almost no branches, counting the depth only where it could
//! beat the deepest so far (O(n) when no interval stays open across more than 64 others;
//! a run where one does is swept again exactly, O(n log d) at worst). Other input is
//! noticed at (or, for [`analyze_numbers`], within 64 intervals of) its first out-of-order
//! interval, copied into buckets by start and sorted (O(n log n)), then swept.
//! `BENCHMARKS.md` has the measured costs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::units::Nanos;

mod numbers;

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
/// Amounts are `i128` nanoseconds because the sum of many `i64` lengths can exceed `i64`;
/// whoever turns one back into a [`Nanos`] must say when it does not fit.
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
/// Input already ordered by start is swept as it is; any other order is copied and sorted
/// first. The order check rides along with the sweep, so sorted input is read once.
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
    match sweep(intervals) {
        Ok(analysis) => analysis,
        Err(OutOfOrder) => {
            let owned = sorted_by_start(intervals);
            sweep(&owned).expect("sorted by start just above")
        }
    }
}

/// The numbers of a [`SetAnalysis`], without its gap and overlap-region lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetNumbers {
    /// Number of intervals, zero-length ones included.
    pub count: usize,
    /// Σ (end − start).
    pub sum_ns: i128,
    /// Measure of the union of the intervals.
    pub union_ns: i128,
    /// `[min start, max end)`, or `None` for an empty set.
    pub extent: Option<Interval>,
    /// How many gaps the extent has (the lists' length in [`SetAnalysis::gaps`]).
    pub gap_count: usize,
    /// The largest number of intervals covering one instant (0 when nothing is covered).
    pub max_depth: u32,
    /// Measure of the instants covered at depth ≥ 2: Σ of the lengths of
    /// [`SetAnalysis::overlap_regions`].
    pub covered_twice_ns: i128,
}

impl SetNumbers {
    /// `max end − min start`, or `None` for an empty set (SPEC: `empty-set`).
    pub fn span_ns(&self) -> Option<i128> {
        self.extent.map(|e| e.length_wide())
    }

    /// `sum − union`: the time counted more than once.
    pub fn overlap_ns(&self) -> i128 {
        self.sum_ns - self.union_ns
    }

    /// Σ of the gap lengths: `span − union`.
    pub fn gap_total_ns(&self) -> i128 {
        self.span_ns().map_or(0, |span| span - self.union_ns)
    }
}

/// The numbers [`analyze`] gives (count, sum, union, span, overlap, gap count, max depth, the
/// measure covered at depth ≥ 2),
/// without building the gap and overlap-region lists: for callers that need no lists.
///
/// Sorted input is read once, with no allocation unless an interval stays open across more
/// than 64 others (its run is then swept again exactly); other input is copied and sorted
/// first, as [`analyze`] does.
///
/// ```
/// use worksheet::interval::{analyze_numbers, Interval};
/// use worksheet::units::Nanos;
/// let us = |v: i64| Nanos::new(v * 1_000);
/// let a = Interval::new(us(7000), us(7080)).unwrap();
/// let b = Interval::new(us(7040), us(7100)).unwrap();
/// let r = analyze_numbers(&[a, b]);
/// assert_eq!((r.sum_ns, r.union_ns, r.overlap_ns(), r.max_depth), (140_000, 100_000, 40_000, 2));
/// ```
pub fn analyze_numbers(intervals: &[Interval]) -> SetNumbers {
    match numbers::sweep_numbers(intervals) {
        Ok(numbers) => numbers,
        Err(OutOfOrder) => {
            let owned = sorted_by_start(intervals);
            numbers::sweep_numbers(&owned).expect("sorted by start just above")
        }
    }
}

/// Below this many intervals [`sorted_by_start`] uses the standard sort alone.
const BUCKET_SORT_MIN_LEN: usize = 256;

/// [`sorted_by_start`] aims at about this many intervals per bucket...
const BUCKET_TARGET_LEN: usize = 4;

/// ...with at most `2^BUCKET_MAX_BITS` buckets, so the scatter writes to few enough places
/// at once to stay in cache.
const BUCKET_MAX_BITS: u32 = 13;

/// A copy of `intervals` sorted by start (ties in any order): all the sweep needs.
///
/// Short inputs are copied and sorted with `sort_unstable`. Longer ones are copied straight
/// into buckets by the leading bits of `start − min start` (one counting pass, then the
/// copy itself scatters; bucket `b` holds only starts below those of bucket `b + 1`), and
/// each bucket, small enough to stay in cache, is sorted with `sort_unstable`. On evenly
/// spread starts that is a shallower sort, in cache; on any other spread it costs at most
/// two extra passes more than the standard sort. Time: O(n log n); space: the copy.
fn sorted_by_start(intervals: &[Interval]) -> Vec<Interval> {
    let len = intervals.len();
    let Some(&filler) = intervals.first() else {
        return Vec::new();
    };
    if len < BUCKET_SORT_MIN_LEN {
        let mut sorted = intervals.to_vec();
        sorted.sort_unstable_by_key(|interval| interval.start);
        return sorted;
    }
    let (lowest, highest) = intervals
        .iter()
        .fold((filler.start, filler.start), |(low, high), iv| {
            (low.min(iv.start), high.max(iv.start))
        });
    // The spread is below 2^64, so the wrapped difference is the true offset.
    let offset = |start: Nanos| start.as_i64().wrapping_sub(lowest.as_i64()) as u64;
    let spread_bits = u64::BITS - offset(highest).leading_zeros();
    let bucket_bits = (len / BUCKET_TARGET_LEN).ilog2().min(BUCKET_MAX_BITS);
    let shift = spread_bits.saturating_sub(bucket_bits);
    let bucket_of = |iv: &Interval| (offset(iv.start) >> shift) as usize;

    // bounds[b] .. bounds[b + 1] will hold bucket b.
    let mut bounds = vec![0_usize; (1 << bucket_bits) + 1];
    for iv in intervals {
        bounds[bucket_of(iv) + 1] += 1;
    }
    for b in 1..bounds.len() {
        bounds[b] += bounds[b - 1];
    }
    let mut next_slot = bounds.clone();
    let mut sorted = vec![filler; len];
    for iv in intervals {
        let slot = &mut next_slot[bucket_of(iv)];
        sorted[*slot] = *iv;
        *slot += 1;
    }
    for bucket in bounds.windows(2) {
        sorted[bucket[0]..bucket[1]].sort_unstable_by_key(|interval| interval.start);
    }
    sorted
}

/// The sweep met an interval that starts before the one it read last.
#[derive(Debug)]
struct OutOfOrder;

/// One pass over intervals sorted by start; stops with [`OutOfOrder`] at the first
/// interval that starts before its predecessor.
///
/// Besides `reach` (the largest end seen so far, which gives union and gaps as in any
/// interval merge), the overlap comes from one observation: in start order, the part of
/// interval `i` that is covered a second time is exactly
///
/// ```text
/// piece(i) = [start(i), min(end(i), reach before i))      (empty when start(i) ≥ reach)
///
///       [======== a ========)          reach after a
///            [==== b ====)             piece(b) = all of b
///                  [======= c =======) piece(c) = [start c, end a)
/// ```
///
/// An instant of depth `d` lies in the pieces of all but the first interval covering it, so
/// the pieces, merged like the union, are the maximal regions of depth ≥ 2, and their
/// lengths add up to Σ (depth − 1) × length (`weighted_overlap_ns`, computed here without
/// using `sum − union`). Depth itself only rises at a start; [`ActiveEnds`] counts the
/// intervals still open there.
fn sweep(sorted: &[Interval]) -> Result<SetAnalysis, OutOfOrder> {
    let count = sorted.len();
    let Some(first) = sorted.first() else {
        return Ok(SetAnalysis {
            count,
            sum_ns: 0,
            union_ns: 0,
            extent: None,
            gaps: Vec::new(),
            overlap_regions: Vec::new(),
            max_depth: 0,
            weighted_overlap_ns: 0,
        });
    };
    let lo = first.start;
    let mut hi = first.end;
    let mut previous_start = lo;
    let mut sum_ns: i128 = 0;

    // Union and gaps: the covered run `[run_start, reach)` being built.
    let mut run_start = lo;
    let mut reach = lo;
    let mut union_ns: i128 = 0;
    let mut gaps = Vec::with_capacity(count / RESERVE_ONE_PIECE_PER);

    // Overlap: the depth ≥ 2 region being built; a peak of 0 means none is open yet.
    let mut region = OverlapRegion {
        span: *first,
        max_depth: 0,
    };
    let mut regions = Vec::with_capacity(count / RESERVE_ONE_PIECE_PER);
    let mut weighted_overlap_ns: i128 = 0;
    let mut active = ActiveEnds::new();
    let mut max_depth: u32 = 0;

    for iv in sorted {
        if iv.start < previous_start {
            return Err(OutOfOrder);
        }
        previous_start = iv.start;
        hi = hi.max(iv.end);
        sum_ns += iv.length_wide();
        if iv.is_empty() {
            continue;
        }
        if iv.start >= reach {
            // Nothing open reaches this start: depth is back to one.
            if iv.start > reach {
                union_ns += wide(reach) - wide(run_start);
                gaps.push(Interval {
                    start: reach,
                    end: iv.start,
                });
                run_start = iv.start;
            }
            reach = iv.end;
            active.restart_with(iv.end);
            max_depth = max_depth.max(1);
            continue;
        }
        let piece_end = iv.end.min(reach);
        weighted_overlap_ns += wide(piece_end) - wide(iv.start);
        let depth = active.admit(iv.start, iv.end);
        max_depth = max_depth.max(depth);
        if region.max_depth != 0 && iv.start <= region.span.end {
            region.span.end = region.span.end.max(piece_end);
            region.max_depth = region.max_depth.max(depth);
        } else {
            if region.max_depth != 0 {
                regions.push(region);
            }
            region = OverlapRegion {
                span: Interval {
                    start: iv.start,
                    end: piece_end,
                },
                max_depth: depth,
            };
        }
        reach = reach.max(iv.end);
    }
    union_ns += wide(reach) - wide(run_start);
    if hi > reach {
        gaps.push(Interval {
            start: reach,
            end: hi,
        });
    }
    if region.max_depth != 0 {
        regions.push(region);
    }
    Ok(SetAnalysis {
        count,
        sum_ns,
        union_ns,
        extent: Some(Interval { start: lo, end: hi }),
        gaps: without_excess_capacity(gaps),
        overlap_regions: without_excess_capacity(regions),
        max_depth,
        weighted_overlap_ns,
    })
}

/// The sweep reserves room for one gap and one overlap region per this many intervals.
///
/// Growing both lists from empty by doubling cost about a third of the sweep's time on the
/// development machine (reallocation and fresh pages); the guess removes most of it.
const RESERVE_ONE_PIECE_PER: usize = 4;

/// `list`, given back its spare room when it used less than half of it, so a guess that
/// was too generous never leaves more slack than a `Vec` grown by doubling would.
fn without_excess_capacity<T>(mut list: Vec<T>) -> Vec<T> {
    if list.len() < list.capacity() / 2 {
        list.shrink_to_fit();
    }
    list
}

/// A nanosecond value widened so that differences cannot overflow.
fn wide(at: Nanos) -> i128 {
    i128::from(at.as_i64())
}

/// How many open intervals may be kept in an unsorted list before switching to a heap.
const FEW_ACTIVE: usize = 16;

/// While fewer than this many intervals are open, [`ActiveEnds::admit`] reads exactly this
/// many slots, a loop the compiler unrolls (a pile of mean depth 1.5 rarely has 4 open).
const FIXED_SCAN: usize = 4;

/// The ends of the intervals open at the sweep's current start, to count the depth there.
///
/// While at most [`FEW_ACTIVE`] are open (the usual case) they sit in an unsorted array that
/// is compacted without branches at each start, cheaper than a heap for shallow piles. When
/// one more opens, all move to a min-heap, and stay there until the sweep next reaches a
/// start that nothing open covers: a deep pile costs O(log depth) per interval, not O(depth).
///
/// Invariants: either `many` is empty and `few[..few_len]` holds the open ends, or `many`
/// holds them and `few_len` is 0. Every end kept is later than the last start admitted,
/// once that start's [`admit`](Self::admit) has retired the ends at or before it.
struct ActiveEnds {
    few: [Nanos; FEW_ACTIVE],
    few_len: usize,
    many: BinaryHeap<Reverse<Nanos>>,
}

impl ActiveEnds {
    /// No interval open.
    fn new() -> Self {
        ActiveEnds {
            few: [Nanos::ZERO; FEW_ACTIVE],
            few_len: 0,
            many: BinaryHeap::new(),
        }
    }

    /// Forgets every open interval and opens one that ends at `end`.
    #[inline]
    fn restart_with(&mut self, end: Nanos) {
        if !self.many.is_empty() {
            self.many.clear();
        }
        self.few[0] = end;
        self.few_len = 1;
    }

    /// Closes the intervals that end at or before `start` (half-open), opens `[start, end)`
    /// and returns how many are open now: the depth just after `start`.
    #[inline]
    fn admit(&mut self, start: Nanos, end: Nanos) -> u32 {
        if self.many.is_empty() && self.few_len < FIXED_SCAN {
            // The usual case, a loop of fixed length (unrolled): slots at or past `few_len`
            // are read but not kept. (Measured against the variable-length loop below: no
            // gain either way, BENCHMARKS.md.)
            let len = self.few_len;
            let mut kept = 0;
            for read in 0..FIXED_SCAN {
                let open_end = self.few[read];
                self.few[kept] = open_end;
                kept += usize::from((open_end > start) & (read < len));
            }
            // kept ≤ len < FIXED_SCAN < FEW_ACTIVE: room for the new end.
            self.few[kept] = end;
            self.few_len = kept + 1;
            return depth_of(self.few_len);
        }
        if self.many.is_empty() {
            let mut kept = 0;
            for read in 0..self.few_len.min(FEW_ACTIVE) {
                let open_end = self.few[read];
                self.few[kept] = open_end;
                kept += usize::from(open_end > start);
            }
            if kept < FEW_ACTIVE {
                self.few[kept] = end;
                self.few_len = kept + 1;
                return depth_of(self.few_len);
            }
            self.many.extend(self.few.iter().copied().map(Reverse));
            self.few_len = 0;
        }
        while let Some(&Reverse(open_end)) = self.many.peek() {
            if open_end > start {
                break;
            }
            self.many.pop();
        }
        self.many.push(Reverse(end));
        depth_of(self.many.len())
    }
}

/// A count of open intervals as a depth (more than `u32::MAX` cannot be built in memory).
fn depth_of(open: usize) -> u32 {
    u32::try_from(open).expect("fewer than 2^32 intervals open at once")
}

#[cfg(test)]
mod tests;
