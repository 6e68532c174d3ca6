//! The sweep behind [`analyze_numbers`](super::analyze_numbers): the set's numbers without
//! its gap and region lists, read from input sorted by start in one pass with almost no
//! branches, the depth counted only where it could beat the deepest so far.

use super::{depth_of, ActiveEnds, Interval, OutOfOrder, SetNumbers};
use crate::units::Nanos;

/// [`sweep_numbers`] checks the order of this many intervals at a time, just before it
/// reads them: sorted input pays one short extra pass in cache, unsorted input is given back
/// at once.
const ORDER_CHECK_EVERY: usize = 64;

/// [`sweep`](super::sweep) without the lists, with almost no branches: for input sorted by start, one read
/// of each interval and a little register work per interval.
///
/// Per non-empty interval `[s, e)`, with `reach` the largest end before it:
/// - union grows by `max(0, e − max(s, reach))` and a gap opens when `s > reach` (the
///   max-reach merge, without a branch on `s ≥ reach`);
/// - the piece covered a second time is `[s, min(e, reach))` (see [`sweep`](super::sweep)); those pieces,
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
pub(super) fn sweep_numbers(sorted: &[Interval]) -> Result<SetNumbers, OutOfOrder> {
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
