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
    match sweep_numbers(intervals) {
        Ok(numbers) => numbers,
        Err(OutOfOrder) => {
            let owned = sorted_by_start(intervals);
            sweep_numbers(&owned).expect("sorted by start just above")
        }
    }
}

/// [`sweep_numbers`] checks the order of this many intervals at a time, just before it
/// reads them: sorted input pays one short extra pass in cache, unsorted input is given back
/// at once.
const ORDER_CHECK_EVERY: usize = 64;

/// [`sweep`] without the lists, with almost no branches: for input sorted by start, one read
/// of each interval and a little register work per interval.
///
/// Per non-empty interval `[s, e)`, with `reach` the largest end before it:
/// - union grows by `max(0, e − max(s, reach))` and a gap opens when `s > reach` (the
///   max-reach merge, without a branch on `s ≥ reach`);
/// - the piece covered a second time is `[s, min(e, reach))` (see [`sweep`]); those pieces,
///   merged by their own max reach, measure the instants of depth ≥ 2;
/// - the depth just after `s` is one plus the number of earlier intervals still open at `s`,
///   and it is only worth counting where it could beat the deepest so far, `deepest`. Every
///   open interval comes at or after the first one whose prefix reach passes `s`, so
///   `deepest` of them can be open only if the reach `deepest` intervals back already passes
///   `s`: one load and one compare ([`RecentEnds::may_exceed`]), rarely true. Then the depth
///   is counted exactly over the last [`RECENT`] ends when nothing older reaches `s`;
///   otherwise (an interval open since far back) the run, the stretch since the last start
///   that nothing open covered, is noted and [`deepest_in_run`] sweeps it exactly afterwards.
///
/// Zero-length intervals count and stretch the extent only. Stops with [`OutOfOrder`]
/// before reading the chunk of [`ORDER_CHECK_EVERY`] intervals that holds the first one
/// starting before its predecessor.
fn sweep_numbers(sorted: &[Interval]) -> Result<SetNumbers, OutOfOrder> {
    let count = sorted.len();
    let Some(first) = sorted.first() else {
        return Ok(SetNumbers {
            count,
            sum_ns: 0,
            union_ns: 0,
            extent: None,
            gap_count: 0,
            max_depth: 0,
            covered_twice_ns: 0,
        });
    };
    let lo = first.start.as_i64();
    // Largest end of a zero-length interval (the others' ends are in `reach`).
    let mut empty_hi = lo;
    let mut previous_start = lo;
    // Every amount below is a sum of non-negative differences of two `i64`, each below
    // 2^64 as a `u64`: `count` of them fit a `u128`.
    let mut sum: u128 = 0;
    let mut union: u128 = 0;
    let mut twice: u128 = 0;
    let mut reach = lo;
    let mut twice_reach = lo;
    let mut gap_count: usize = 0;
    let mut recent = RecentEnds::new();
    let mut deepest: usize = 1;
    let mut run_begin: usize = 0;
    let mut deep_runs: Vec<usize> = Vec::new();
    for (chunk_index, chunk) in sorted.chunks(ORDER_CHECK_EVERY).enumerate() {
        // Checked before the chunk is read, in a loop of its own (short, in cache): unsorted
        // input is given back before any work on it.
        if chunk
            .first()
            .is_some_and(|iv| iv.start.as_i64() < previous_start)
            || !chunk.is_sorted_by_key(|iv| iv.start)
        {
            return Err(OutOfOrder);
        }
        previous_start = chunk.last().map_or(previous_start, |iv| iv.start.as_i64());
        for (offset, iv) in chunk.iter().enumerate() {
            let (s, e) = (iv.start.as_i64(), iv.end.as_i64());
            if s == e {
                empty_hi = empty_hi.max(e);
                continue;
            }
            sum += u128::from(e.wrapping_sub(s) as u64);
            union += u128::from(excess(e, s.max(reach)));
            gap_count += usize::from(s > reach);
            let piece_end = e.min(reach);
            twice += u128::from(excess(piece_end, s.max(twice_reach)));
            twice_reach = twice_reach.max(piece_end);
            if s >= reach {
                run_begin = chunk_index * ORDER_CHECK_EVERY + offset;
            }
            reach = reach.max(e);
            if recent.may_exceed(deepest, s) {
                match recent.open_at(s) {
                    Some(open) => deepest = deepest.max(open + 1),
                    None => {
                        if deep_runs.last() != Some(&run_begin) {
                            deep_runs.push(run_begin);
                        }
                    }
                }
            }
            recent.push(e, reach);
        }
    }
    // No non-empty interval: nothing is covered.
    let mut max_depth = if recent.pushed == 0 {
        0
    } else {
        depth_of(deepest)
    };
    for &begin in &deep_runs {
        max_depth = max_depth.max(deepest_in_run(&sorted[begin..]));
    }
    let hi = reach.max(empty_hi);
    Ok(SetNumbers {
        count,
        sum_ns: amount(sum),
        union_ns: amount(union),
        extent: Some(Interval {
            start: first.start,
            end: Nanos::new(hi),
        }),
        gap_count: gap_count + usize::from(hi > reach),
        max_depth,
        covered_twice_ns: amount(twice),
    })
}

/// `to − from` when `to > from`, else 0, exact for any two `i64` (as a `u64`).
#[inline]
fn excess(to: i64, from: i64) -> u64 {
    if to > from {
        to.wrapping_sub(from) as u64
    } else {
        0
    }
}

/// A sum of interval lengths as the signed amount [`SetNumbers`] holds: fewer than 2^63
/// intervals of less than 2^64 ns each stay below 2^127.
fn amount(sum: u128) -> i128 {
    i128::try_from(sum).expect("a sum of fewer than 2^63 lengths below 2^64 fits an i128")
}

/// How many of the latest non-empty intervals [`RecentEnds`] remembers (a power of two).
const RECENT: usize = 64;

/// The ends of the last [`RECENT`] non-empty intervals, and the reach (largest end so far)
/// after each, in two rings indexed by the count of non-empty intervals pushed.
struct RecentEnds {
    ends: [i64; RECENT],
    reaches: [i64; RECENT],
    pushed: usize,
}

impl RecentEnds {
    /// Nothing pushed: every slot holds `i64::MIN`, which no start is before.
    #[inline]
    fn new() -> Self {
        RecentEnds {
            ends: [i64::MIN; RECENT],
            reaches: [i64::MIN; RECENT],
            pushed: 0,
        }
    }

    /// Whether `deepest` earlier intervals can be open at `start` (necessary for the depth
    /// there to exceed `deepest`): only if the reach `min(deepest, RECENT − 1)` pushes back
    /// is after `start`. A slot never written (fewer pushed) reads `i64::MIN`: no.
    #[inline]
    fn may_exceed(&self, deepest: usize, start: i64) -> bool {
        let back = deepest.min(RECENT - 1);
        self.reaches[self.pushed.wrapping_sub(back) % RECENT] > start
    }

    /// How many of the intervals pushed are open at `start`, or `None` when one older than
    /// the ring may be. Reads back from the latest only while the reach before the one read
    /// is after `start` (once it is not, nothing older is open): about as many reads as the
    /// depth.
    #[inline(never)]
    fn open_at(&self, start: i64) -> Option<usize> {
        let mut open = 0;
        for back in 1..=RECENT.min(self.pushed) {
            let slot = (self.pushed - back) % RECENT;
            if self.reaches[slot] <= start {
                // Neither this interval nor any before it reaches `start`.
                return Some(open);
            }
            open += usize::from(self.ends[slot] > start);
        }
        // Every interval pushed was read: none older exists; else one may still be open.
        (self.pushed <= RECENT).then_some(open)
    }

    /// Remembers a non-empty interval's end and the reach after it.
    #[inline]
    fn push(&mut self, end: i64, reach: i64) {
        let slot = self.pushed % RECENT;
        self.ends[slot] = end;
        self.reaches[slot] = reach;
        self.pushed += 1;
    }
}

/// The maximum depth within the run that starts at `run[0]`, counted exactly with
/// [`ActiveEnds`]; the run ends before the first non-empty interval that starts where
/// nothing open covers it.
fn deepest_in_run(run: &[Interval]) -> u32 {
    let mut active = ActiveEnds::new();
    let mut reach: Option<Nanos> = None;
    let mut deepest = 0;
    for iv in run {
        if iv.is_empty() {
            continue;
        }
        if reach.is_some_and(|reach| iv.start >= reach) {
            break;
        }
        deepest = deepest.max(active.admit(iv.start, iv.end));
        reach = Some(reach.map_or(iv.end, |reach| reach.max(iv.end)));
    }
    deepest
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
mod tests {
    use super::*;

    /// A pile deep enough to move the open ends to the heap (past 16), a gap, then a deeper
    /// pile: the restart after the gap must forget the first pile's ends, or the second
    /// pile's depth comes out one short (a mutant skipping the heap's clear survived).
    #[test]
    fn a_deeper_pile_after_a_gap_counts_every_open_interval() {
        let mut set = vec![iv(0, 10); FEW_ACTIVE + 1];
        set.extend(vec![iv(100, 110); FEW_ACTIVE + 2]);
        let depth = (FEW_ACTIVE + 2) as u32;
        assert_eq!(analyze_numbers(&set).max_depth, depth);
        assert_eq!(analyze(&set).max_depth, depth);
    }

    /// The sweep's lists give back their spare room only when they used less than half of
    /// it: the memory promise of [`without_excess_capacity`], at its boundary.
    #[test]
    fn spare_room_is_given_back_below_half_use_only() {
        let filled = |len: usize| {
            let mut list: Vec<u64> = Vec::with_capacity(100);
            list.extend(0..len as u64);
            let before = list.capacity();
            (before, without_excess_capacity(list))
        };
        let (before, small) = filled(10);
        assert!(small.capacity() < before, "10 of {before} used: shrunk");
        assert_eq!(small, (0..10).collect::<Vec<u64>>());
        let (before, half) = filled(50);
        assert_eq!(half.capacity(), before, "exactly half used: kept");
        let (before, most) = filled(60);
        assert_eq!(most.capacity(), before, "60 of {before} used: kept");
    }

    /// A zero-length interval past the last covered instant stretches the extent, and the
    /// stretch is a gap in both analyses (a mutant counting it only when `hi < reach`
    /// survived the campaign).
    #[test]
    fn a_trailing_zero_length_interval_leaves_a_gap() {
        let set = [iv(0, 10), iv(20, 20)];
        let full = analyze(&set);
        assert_eq!(full.gaps, vec![iv(10, 20)]);
        let numbers = analyze_numbers(&set);
        assert_eq!(
            (numbers.gap_count, numbers.gap_total_ns(), numbers.span_ns()),
            (1, 10, Some(20))
        );
        let inside = analyze_numbers(&[iv(0, 10), iv(5, 5)]);
        assert_eq!((inside.gap_count, inside.gap_total_ns()), (0, 0));
    }

    /// The numbers-only analysis agrees with the full one, field by field, on sets with
    /// gaps, touching and zero-length intervals, deep piles (past the 16 kept unsorted),
    /// in sorted and in scrambled order.
    #[test]
    fn numbers_agree_with_the_full_analysis() {
        let mut state: u64 = 0x1234_5678;
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % bound
        };
        for (n, spread, longest) in [
            (0, 1, 1),
            (1, 10, 5),
            (50, 1000, 30),
            (400, 100, 200),
            (3000, 300_000, 300),
        ] {
            let set: Vec<Interval> = (0..n)
                .map(|_| {
                    let start = next(spread) as i64;
                    iv(start, start + next(longest) as i64)
                })
                .collect();
            let full = analyze(&set);
            let numbers = analyze_numbers(&set);
            assert_eq!(numbers.count, full.count);
            assert_eq!(numbers.sum_ns, full.sum_ns);
            assert_eq!(numbers.union_ns, full.union_ns);
            assert_eq!(numbers.extent, full.extent);
            assert_eq!(numbers.gap_count, full.gaps.len());
            assert_eq!(numbers.gap_total_ns(), full.gap_total_ns());
            assert_eq!(numbers.max_depth, full.max_depth);
            assert_eq!(numbers.overlap_ns(), full.overlap_ns());
            let regions: i128 = full
                .overlap_regions
                .iter()
                .map(|r| r.span.length_wide())
                .sum();
            assert_eq!(numbers.covered_twice_ns, regions);
            let mut sorted = set.clone();
            sorted.sort_unstable_by_key(|i| i.start);
            assert_eq!(analyze_numbers(&sorted), numbers);
        }
        let touching = [iv(0, 10), iv(10, 20), iv(20, 20), iv(25, 30)];
        let numbers = analyze_numbers(&touching);
        assert_eq!(
            (numbers.union_ns, numbers.gap_count, numbers.max_depth),
            (25, 1, 1)
        );
    }

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

    /// ```text
    /// 0 1 2 …        … 97 98 99 100
    /// [=================== 0 ====)
    ///   [================ 1 ==)
    ///     …      (40 layers)
    /// ```
    #[test]
    fn nested_pile_deeper_than_the_list_of_open_intervals_counts_every_layer() {
        let pile: Vec<Interval> = (0..40).map(|k| iv(k, 100 - k)).collect();
        let r = analyze(&pile);
        assert_eq!(r.max_depth, 40);
        assert_eq!(
            r.overlap_regions,
            vec![OverlapRegion {
                span: iv(1, 99),
                max_depth: 40
            }]
        );
        assert_eq!(r.weighted_overlap_ns, r.overlap_ns());
        assert_eq!(r, crate::testing::DenseOracle::new(&pile).analysis());
    }

    /// [`analyze_numbers`]'s register sweep (and its exact re-sweep of deep runs) against the
    /// list-building [`sweep`] of [`analyze`], the path it replaced, field by field.
    mod numbers_sweep {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;

        fn assert_agree(set: &[Interval]) -> Result<(), TestCaseError> {
            let full = analyze(set);
            let numbers = analyze_numbers(set);
            prop_assert_eq!(numbers.count, full.count);
            prop_assert_eq!(numbers.sum_ns, full.sum_ns);
            prop_assert_eq!(numbers.union_ns, full.union_ns);
            prop_assert_eq!(numbers.extent, full.extent);
            prop_assert_eq!(numbers.gap_count, full.gaps.len());
            prop_assert_eq!(numbers.max_depth, full.max_depth);
            let regions: i128 = full
                .overlap_regions
                .iter()
                .map(|r| r.span.length_wide())
                .sum();
            prop_assert_eq!(numbers.covered_twice_ns, regions);
            Ok(())
        }

        /// Sets as (start, length) pairs: crowded (piles deeper than the kept ends, many
        /// zero-length and touching intervals), sparse, and at the ends of `i64`.
        fn pairs() -> impl Strategy<Value = Vec<(i64, i64)>> {
            prop_oneof![
                vec((-20_i64..60, 0_i64..25), 0..200),
                vec((0_i64..5_000, 0_i64..300), 0..400),
                vec((0_i64..40, prop_oneof![Just(0_i64), 0_i64..3]), 0..120),
                vec(
                    (
                        prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()],
                        prop_oneof![Just(0_i64), Just(i64::MAX), 0_i64..10]
                    ),
                    0..40
                ),
            ]
        }

        fn build(pairs: &[(i64, i64)]) -> Vec<Interval> {
            pairs
                .iter()
                .map(|&(start, length)| iv(start, start.saturating_add(length)))
                .collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Sorted by start: the register sweep reads the input as it is.
            #[test]
            fn sorted_input_agrees_with_the_full_sweep(pairs in pairs()) {
                let mut set = build(&pairs);
                set.sort_unstable_by_key(|i| i.start);
                assert_agree(&set)?;
            }

            /// In the order drawn: mostly unsorted, noticed and sorted first.
            #[test]
            fn unsorted_input_agrees_with_the_full_sweep(pairs in pairs()) {
                assert_agree(&build(&pairs))?;
            }

            /// Sorted but for one swapped pair, anywhere (past the first look at the order
            /// flag too): noticed late, the result is still that of the sorted set.
            #[test]
            fn one_late_disorder_is_noticed(pairs in pairs(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
                let mut set = build(&pairs);
                set.sort_unstable_by_key(|i| i.start);
                if !set.is_empty() {
                    let (a, b) = (a.index(set.len()), b.index(set.len()));
                    set.swap(a, b);
                }
                assert_agree(&set)?;
                let mut sorted = set.clone();
                sorted.sort_unstable_by_key(|i| i.start);
                prop_assert_eq!(analyze_numbers(&set), analyze_numbers(&sorted));
            }
        }

        /// Deep piles in two runs apart, past the kept ends, with the deepest in the second
        /// run, and a late disorder (index 200, after several looks at the order flag).
        #[test]
        fn deep_runs_are_swept_exactly() {
            let mut set: Vec<Interval> = (0..150).map(|k| iv(k, k + 7)).collect();
            set.extend((0..9).map(|k| iv(1_000 + k, 1_100)));
            set.extend((0..50).map(|k| iv(2_000 + 10 * k, 2_005 + 10 * k)));
            let numbers = analyze_numbers(&set);
            assert_eq!(numbers.max_depth, 9);
            assert_eq!(numbers.gap_count, 51);
            assert_eq!(numbers.count, 209);
            let mut scrambled = set.clone();
            scrambled.swap(200, 201);
            assert_eq!(analyze_numbers(&scrambled), numbers);
        }
    }

    mod bucket_sort {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]

            /// Long enough for the bucket sort; each set draws its starts from the whole `i64`
            /// range, a narrow one (fewer buckets than bits), or a few far-apart values
            /// (everything in one or two buckets).
            #[test]
            fn orders_by_start_like_the_standard_sort(
                starts in prop_oneof![
                    vec(any::<i64>(), BUCKET_SORT_MIN_LEN..600),
                    vec(-3_i64..300, BUCKET_SORT_MIN_LEN..600),
                    vec(-70_000_i64..70_000, BUCKET_SORT_MIN_LEN..600),
                    vec((0_i64..4).prop_map(|k| (k << 40) - 1), BUCKET_SORT_MIN_LEN..600),
                ],
            ) {
                let mut set: Vec<Interval> = starts
                    .iter()
                    .zip((0..7).cycle())
                    .map(|(&start, length)| iv(start, start.saturating_add(length)))
                    .collect();
                let mut expected = set.clone();
                expected.sort_unstable_by_key(|i| i.start);
                set = sorted_by_start(&set);
                let starts_of = |v: &[Interval]| v.iter().map(|i| i.start).collect::<Vec<_>>();
                prop_assert_eq!(starts_of(&set), starts_of(&expected));
                set.sort_unstable();
                expected.sort_unstable();
                prop_assert_eq!(set, expected, "the same intervals, none lost or doubled");
            }
        }
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let r = analyze(&[iv(i64::MIN, i64::MAX), iv(i64::MIN, i64::MAX)]);
        assert_eq!(r.union_ns, i128::from(i64::MAX) - i128::from(i64::MIN));
        assert_eq!(r.sum_ns, 2 * r.union_ns);
    }
}
