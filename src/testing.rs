//! Generators and a slow, obviously correct oracle for property tests of the interval
//! algebra (SPEC §3).
//!
//! This module exists so that `worksheet`'s own property suite and the suites of projects
//! built on it share one model of what an interval set *means*. It is compiled for the
//! crate's unit tests and, for everyone else, behind the `proptest` feature:
//!
//! ```toml
//! [dev-dependencies]
//! worksheet = { version = "0.1", features = ["proptest"] }
//! proptest = "1"
//! ```
//!
//! It offers two things:
//!
//! - **Strategies** ([`clock_ids`], [`intervals_in`], [`interval_sets_in`],
//!   [`small_interval_sets`]) that draw clocks, intervals and interval sets from tiny
//!   alphabets and tiny domains, so that the cases that matter (equal clocks, equal
//!   endpoints, touching intervals, zero-length intervals, deep nesting) come up all the
//!   time instead of once in a million draws.
//! - **[`DenseOracle`]**, which paints every interval onto an array with one depth counter
//!   per tick and reads every result straight off that array. It is quadratic-ish and only
//!   works on small domains, which is the point: it is too simple to be wrong, so every fast
//!   operation can be checked against it.
//!
//! A property test in another crate then reads:
//!
//! ```
//! use proptest::prelude::*;
//! use worksheet::interval::analyze;
//! use worksheet::testing::{small_interval_sets, DenseOracle};
//!
//! proptest! {
//!     #![proptest_config(ProptestConfig::with_cases(32))]
//!     // In a test file, put `#[test]` on the line above `fn`.
//!     fn union_matches_the_oracle(set in small_interval_sets()) {
//!         let oracle = DenseOracle::new(&set);
//!         prop_assert_eq!(analyze(&set).union_ns, oracle.union_ns());
//!     }
//! }
//! # union_matches_the_oracle();
//! ```
//!
//! For the verdicts of SPEC §4–§5 there is the same pair one level up: [`devices`] draws whole
//! programs over several devices, streams and clock instances, and [`coverage`] holds
//! [`coverage::CoverageModel`], a naive reading of SPEC §4 that says which work each host wait
//! covers. `docs/TESTING.md` lists the laws checked with them.
//!
//! Ticks: tick `t` stands for the instant range `[t, t + 1)` in nanoseconds. An interval
//! `[start, end)` covers exactly the ticks `start, start + 1, …, end − 1`, so a zero-length
//! interval covers no tick. It still counts in [`DenseOracle::count`] and in the extent
//! (`[min start, max end)`), exactly as SPEC §3 says.

use std::ops::RangeInclusive;

use proptest::collection::vec;
use proptest::prelude::*;

use crate::clock::ClockId;
use crate::interval::{Interval, OverlapRegion, SetAnalysis};
use crate::units::Nanos;

/// The default tick domain of [`small_interval_sets`]: endpoints lie in `0..=40`.
pub const SMALL_DOMAIN: RangeInclusive<i64> = 0..=40;

/// The most intervals [`small_interval_sets`] puts in one set.
pub const SMALL_SET_MAX_LEN: usize = 12;

/// The widest extent, in ticks, that [`DenseOracle::new`] accepts.
pub const ORACLE_MAX_TICKS: i128 = 1 << 20;

/// Clocks drawn from tiny alphabets so that equal clocks, same-domain-different-instance
/// and different-domain pairs are all frequent.
///
/// Domains are `host`, `device` or a one- or two-letter name over `{h, d}`; instances are
/// one or two letters over `{a, b}`. Both are always non-empty, as [`ClockId`] requires.
pub fn clock_ids() -> impl Strategy<Value = ClockId> {
    let domain = prop_oneof![
        Just("host".to_owned()),
        Just("device".to_owned()),
        "[hd]{1,2}",
    ];
    let instance = "[ab]{1,2}";
    (domain, instance).prop_map(|(domain, instance)| ClockId::new(domain, instance))
}

/// Intervals whose endpoints both lie in `domain` (inclusive).
///
/// About one draw in six is zero-length; the rest are short compared with the domain, so
/// that sets built from them have gaps as well as overlaps.
///
/// # Panics
/// When `domain` is empty.
pub fn intervals_in(domain: RangeInclusive<i64>) -> impl Strategy<Value = Interval> {
    let (low, high) = (*domain.start(), *domain.end());
    assert!(low <= high, "intervals_in needs a non-empty domain");
    let width = i128::from(high) - i128::from(low);
    let longest = i64::try_from((width / 3).max(1)).unwrap_or(i64::MAX);
    let length = prop_oneof![
        1 => Just(0_i64),
        5 => 1..=longest,
    ];
    (low..=high, length).prop_map(move |(start, length)| {
        let end = start.saturating_add(length).min(high);
        Interval::new(Nanos::new(start), Nanos::new(end)).expect("end is never below start")
    })
}

/// Sets (in arbitrary order, duplicates allowed) of up to `max_len` intervals from
/// [`intervals_in`]`(domain)`. The empty set is included.
pub fn interval_sets_in(
    domain: RangeInclusive<i64>,
    max_len: usize,
) -> impl Strategy<Value = Vec<Interval>> {
    vec(intervals_in(domain), 0..=max_len)
}

/// [`interval_sets_in`] over [`SMALL_DOMAIN`] with at most [`SMALL_SET_MAX_LEN`] intervals:
/// the default for checking the algebra against [`DenseOracle`].
pub fn small_interval_sets() -> impl Strategy<Value = Vec<Interval>> {
    interval_sets_in(SMALL_DOMAIN, SMALL_SET_MAX_LEN)
}

/// A tick-by-tick model of a set of intervals: one depth counter per nanosecond of the
/// extent.
///
/// ```text
/// tick    0 1 2 3 4 5 6 7 8 9
/// a       [=====)                 a = [0, 3)
/// b         [=======)             b = [1, 5)
/// c                     [===)     c = [7, 9)
/// depth   1 2 2 1 0 0 0 1 1 .     extent [0, 9)
/// ```
///
/// Every result is read straight off the depth array: union is the number of ticks of
/// depth ≥ 1, a gap is a maximal run of depth-0 ticks, an overlap region is a maximal run
/// of depth ≥ 2 ticks, sum is Σ depth, overlap is Σ max(depth − 1, 0).
///
/// Invariants: `depth.len()` is the extent's length; `depth[i]` is the number of intervals
/// that cover tick `origin + i`.
///
/// Cost: O(Σ lengths + extent) time and O(extent) memory, so keep domains small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseOracle {
    count: usize,
    origin: i64,
    depth: Vec<u32>,
}

impl DenseOracle {
    /// Paints `intervals` onto a depth array covering `[min start, max end)`.
    ///
    /// # Panics
    /// When the extent is wider than [`ORACLE_MAX_TICKS`]: the oracle is for small domains.
    pub fn new(intervals: &[Interval]) -> Self {
        let origin = intervals
            .iter()
            .map(|iv| iv.start().as_i64())
            .min()
            .unwrap_or(0);
        let end = intervals
            .iter()
            .map(|iv| iv.end().as_i64())
            .max()
            .unwrap_or(0);
        let ticks = i128::from(end) - i128::from(origin);
        assert!(
            ticks <= ORACLE_MAX_TICKS,
            "DenseOracle is for small domains: extent of {ticks} ticks is too wide"
        );
        let ticks = usize::try_from(ticks).expect("max end is never below min start");
        let mut depth = vec![0_u32; ticks];
        for iv in intervals {
            let from = tick_index(origin, iv.start());
            let to = tick_index(origin, iv.end());
            for tick in &mut depth[from..to] {
                *tick += 1;
            }
        }
        DenseOracle {
            count: intervals.len(),
            origin,
            depth,
        }
    }

    /// Number of intervals, zero-length ones included.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Coverage depth at every tick of the extent, from min start to max end.
    pub fn depths(&self) -> &[u32] {
        &self.depth
    }

    /// `[min start, max end)`, or `None` for an empty set. Zero-length intervals count.
    pub fn extent(&self) -> Option<Interval> {
        (self.count > 0).then(|| self.piece(0, self.depth.len()))
    }

    /// `max end − min start`, or `None` for an empty set.
    pub fn span_ns(&self) -> Option<i128> {
        self.extent().map(|e| e.length_wide())
    }

    /// Σ depth over all ticks: each interval's length, overlap counted once per interval.
    pub fn sum_ns(&self) -> i128 {
        self.depth.iter().map(|&d| i128::from(d)).sum()
    }

    /// Number of ticks covered at least once.
    pub fn union_ns(&self) -> i128 {
        count_ticks(self.depth.iter().filter(|&&d| d >= 1))
    }

    /// Σ (depth − 1) over covered ticks: time counted more than once.
    pub fn overlap_ns(&self) -> i128 {
        self.depth
            .iter()
            .map(|&d| i128::from(d.saturating_sub(1)))
            .sum()
    }

    /// The largest depth of any tick (0 when nothing is covered).
    pub fn max_depth(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// The maximal runs of depth-0 ticks inside the extent, in order.
    pub fn gaps(&self) -> Vec<Interval> {
        self.runs_where(|d| d == 0)
            .into_iter()
            .map(|(from, to)| self.piece(from, to))
            .collect()
    }

    /// The maximal runs of depth ≥ 2 ticks, in order, each with the largest depth inside it.
    pub fn overlap_regions(&self) -> Vec<OverlapRegion> {
        self.runs_where(|d| d >= 2)
            .into_iter()
            .map(|(from, to)| OverlapRegion {
                span: self.piece(from, to),
                max_depth: self.depth[from..to].iter().copied().max().unwrap_or(0),
            })
            .collect()
    }

    /// Everything above as the [`SetAnalysis`] that [`analyze`](crate::interval::analyze)
    /// must return for the same set, so a test can compare all of it in one assertion.
    pub fn analysis(&self) -> SetAnalysis {
        SetAnalysis {
            count: self.count(),
            sum_ns: self.sum_ns(),
            union_ns: self.union_ns(),
            extent: self.extent(),
            gaps: self.gaps(),
            overlap_regions: self.overlap_regions(),
            max_depth: self.max_depth(),
            weighted_overlap_ns: self.overlap_ns(),
        }
    }

    /// Index ranges `[from, to)` of the maximal runs of ticks whose depth satisfies `keep`.
    fn runs_where(&self, keep: impl Fn(u32) -> bool) -> Vec<(usize, usize)> {
        let mut runs = Vec::new();
        let mut open: Option<usize> = None;
        for (index, &d) in self.depth.iter().enumerate() {
            match (open, keep(d)) {
                (None, true) => open = Some(index),
                (Some(from), false) => {
                    runs.push((from, index));
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(from) = open {
            runs.push((from, self.depth.len()));
        }
        runs
    }

    /// The interval of ticks `origin + from .. origin + to`.
    fn piece(&self, from: usize, to: usize) -> Interval {
        let at = |index: usize| {
            let offset = i64::try_from(index).expect("extent fits in i64 ticks");
            Nanos::new(self.origin + offset)
        };
        Interval::new(at(from), at(to)).expect("runs are built in increasing order")
    }
}

/// Position of instant `at` in a depth array that starts at `origin`.
fn tick_index(origin: i64, at: Nanos) -> usize {
    usize::try_from(i128::from(at.as_i64()) - i128::from(origin))
        .expect("every endpoint lies inside the extent")
}

/// How many items an iterator yields, as an `i128` amount of nanoseconds.
fn count_ticks<T>(ticks: impl Iterator<Item = T>) -> i128 {
    i128::try_from(ticks.count()).expect("tick counts fit in i128")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: i64, end: i64) -> Interval {
        Interval::new(Nanos::new(start), Nanos::new(end)).unwrap()
    }

    /// tick    0 1 2 3 4 5 6 7 8 9
    /// a       [=====)
    /// b         [=======)
    /// c                     [===)
    #[test]
    fn oracle_reads_the_doc_picture() {
        let oracle = DenseOracle::new(&[iv(0, 3), iv(1, 5), iv(7, 9)]);
        assert_eq!(oracle.depths(), &[1, 2, 2, 1, 1, 0, 0, 1, 1]);
        assert_eq!(oracle.extent(), Some(iv(0, 9)));
        assert_eq!(oracle.union_ns(), 7);
        assert_eq!(oracle.sum_ns(), 9);
        assert_eq!(oracle.overlap_ns(), 2);
        assert_eq!(oracle.gaps(), vec![iv(5, 7)]);
        assert_eq!(
            oracle.overlap_regions(),
            vec![OverlapRegion {
                span: iv(1, 3),
                max_depth: 2
            }]
        );
        assert_eq!(oracle.max_depth(), 2);
    }

    #[test]
    fn zero_length_intervals_widen_the_extent_but_cover_nothing() {
        let oracle = DenseOracle::new(&[iv(2, 2), iv(4, 6), iv(9, 9)]);
        assert_eq!(oracle.count(), 3);
        assert_eq!(oracle.extent(), Some(iv(2, 9)));
        assert_eq!(oracle.union_ns(), 2);
        assert_eq!(oracle.gaps(), vec![iv(2, 4), iv(6, 9)]);
        assert_eq!(oracle.max_depth(), 1);
    }

    #[test]
    fn empty_set_has_no_extent() {
        let oracle = DenseOracle::new(&[]);
        assert_eq!(oracle.extent(), None);
        assert_eq!(oracle.span_ns(), None);
        assert_eq!(
            (oracle.sum_ns(), oracle.union_ns(), oracle.max_depth()),
            (0, 0, 0)
        );
        assert!(oracle.gaps().is_empty());
    }

    #[test]
    fn only_zero_length_intervals_leave_one_gap_and_depth_zero() {
        let oracle = DenseOracle::new(&[iv(-3, -3), iv(5, 5)]);
        assert_eq!(oracle.gaps(), vec![iv(-3, 5)]);
        assert_eq!(oracle.max_depth(), 0);
        assert!(oracle.overlap_regions().is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn generated_intervals_stay_inside_their_domain(iv in intervals_in(-5..=5)) {
            prop_assert!(iv.start().as_i64() >= -5 && iv.end().as_i64() <= 5);
            prop_assert!(iv.start() <= iv.end());
        }

        #[test]
        fn generated_clocks_are_never_blank(clock in clock_ids()) {
            prop_assert!(!clock.domain.is_empty() && !clock.instance.is_empty());
        }
    }
}

pub mod cases;
pub mod coverage;
pub mod devices;

#[cfg(test)]
mod laws;
#[cfg(test)]
mod properties;

#[cfg(test)]
mod relations;
