//! [`Summary`]: count, min, median, P90, max and MAD of the measured samples, with the
//! warm-ups and failures that were recorded but left out (SPEC §9).
//!
//! Every statistic is an exact integer number of nanoseconds:
//!
//! - quantiles (median, P90) use the nearest-rank method of [`super::quantile`], so they are
//!   always observed values — for an even count the median is the **lower** middle value;
//! - the MAD is the nearest-rank median of the absolute deviations `|xᵢ − median|`. Both
//!   medians are observed values and the deviations are integers, so the MAD is an exact
//!   integer too: no half-nanoseconds arise and no rounding rule is needed. It is the raw
//!   MAD, **not** scaled by 1.4826 (that constant estimates σ for a normal distribution,
//!   which timing samples are not, and would need floating point).
//!
//! Worked example, measured samples `1 2 … 10` ns: median 5 (rank 5), P90 9 (rank 9);
//! deviations from 5 are `4 3 2 1 0 1 2 3 4 5`, sorted `0 1 1 2 2 3 3 4 4 5`, whose
//! nearest-rank median (rank 5) is **2**.
//!
//! An empty measured set has no summary: [`Summary::of`] returns
//! [`NoMeasuredSamples`], which still carries the counts of what was recorded.

use std::fmt;

use serde::Serialize;

use super::quantile::Percentile;
use super::sample::{Counts, SampleSet};
use super::sorted::{NoMeasuredSamples, Sorted};
use crate::units::Nanos;

/// The statistics of the measured samples of one [`SampleSet`].
///
/// Invariants: `count() >= 1`; `min() <= median() <= p90() <= max()`;
/// `0 <= mad() <= max() - min()`. Built only by [`Summary::of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Summary {
    counts: Counts,
    min: Nanos,
    median: Nanos,
    p90: Nanos,
    max: Nanos,
    mad: Nanos,
}

impl Summary {
    /// Summarizes the measured samples of `set`; warm-ups and failures are counted, never
    /// summarized. Time: O(n log n) (one sort), space O(n).
    ///
    /// ```
    /// use worksheet::stats::{SampleSet, Summary};
    /// use worksheet::units::Nanos;
    ///
    /// let ns = |v: &[i64]| v.iter().copied().map(Nanos::new).collect::<Vec<_>>();
    /// let set = SampleSet::from_runs(&ns(&[5_000, 900]), &ns(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))
    ///     .unwrap();
    /// let s = Summary::of(&set).unwrap();
    /// assert_eq!((s.count(), s.median(), s.p90()), (10, Nanos::new(5), Nanos::new(9)));
    /// assert_eq!((s.mad(), s.warmups(), s.failures()), (Nanos::new(2), 2, 0));
    /// ```
    ///
    /// # Errors
    /// [`NoMeasuredSamples`] when no run is both measured and completed.
    pub fn of(set: &SampleSet) -> Result<Summary, NoMeasuredSamples> {
        let sorted = Sorted::of_measured(set)?;
        Ok(Summary::of_sorted(&sorted, set.counts()))
    }

    /// Summarizes the sorted measured values of a set whose counts are `counts`
    /// (`counts.measured == sorted.len()`). Time: O(n) (for the MAD).
    fn of_sorted(sorted: &Sorted, counts: Counts) -> Summary {
        debug_assert_eq!(counts.measured, sorted.len());
        Summary {
            counts,
            min: sorted.min(),
            median: sorted.median(),
            p90: sorted.quantile(Percentile::P90),
            max: sorted.max(),
            mad: median_absolute_deviation(sorted),
        }
    }

    /// Number of measured samples summarized (at least 1).
    pub fn count(&self) -> usize {
        self.counts.measured
    }

    /// The smallest measured sample.
    pub fn min(&self) -> Nanos {
        self.min
    }

    /// The nearest-rank median (lower middle value for an even count).
    pub fn median(&self) -> Nanos {
        self.median
    }

    /// The nearest-rank 90th percentile.
    pub fn p90(&self) -> Nanos {
        self.p90
    }

    /// The largest measured sample.
    pub fn max(&self) -> Nanos {
        self.max
    }

    /// The median absolute deviation (nearest-rank median of `|xᵢ − median|`, unscaled).
    pub fn mad(&self) -> Nanos {
        self.mad
    }

    /// Warm-up runs recorded (completed or failed), excluded from the statistics.
    pub fn warmups(&self) -> usize {
        self.counts.warmups
    }

    /// Failed runs recorded (warm-up or measured), excluded from the statistics.
    pub fn failures(&self) -> usize {
        self.counts.failures
    }

    /// Everything the set held, by kind.
    pub fn counts(&self) -> Counts {
        self.counts
    }
}

impl fmt::Display for Summary {
    /// `n 10, min 1 ns, median 5 ns, P90 9 ns, max 10 ns, MAD 2 ns (2 warm-ups, 0 failed: kept, excluded)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "n {}, min {}, median {}, P90 {}, max {}, MAD {} ({} warm-ups, {} failed: kept, excluded)",
            self.count(),
            self.min,
            self.median,
            self.p90,
            self.max,
            self.mad,
            self.warmups(),
            self.failures()
        )
    }
}

/// The median absolute deviation of `sorted`: the nearest-rank median of `|xᵢ − m|` where
/// `m` is the nearest-rank median. Exact; an observed deviation, never a half-nanosecond.
///
/// ```
/// use worksheet::stats::{median_absolute_deviation, Sorted};
/// use worksheet::units::Nanos;
///
/// let s = Sorted::new([1, 2, 3, 4, 100].map(Nanos::new).to_vec()).unwrap();
/// // median 3; deviations 2 1 0 1 97 → sorted 0 1 1 2 97 → rank 3 → 1
/// assert_eq!(median_absolute_deviation(&s), Nanos::new(1));
/// ```
///
/// Time: O(n) expected (one selection, no second sort); space O(n). Cannot overflow: the
/// values are in `0..=i64::MAX`, so every deviation is too.
pub fn median_absolute_deviation(sorted: &Sorted) -> Nanos {
    let m = sorted.median().as_i64();
    let mut deviations: Vec<i64> = sorted
        .values()
        .iter()
        .map(|v| (v.as_i64() - m).abs())
        .collect();
    let rank = super::quantile::nearest_rank(Percentile::MEDIAN, deviations.len());
    let (_, nth, _) = deviations.select_nth_unstable(rank - 1);
    Nanos::new(*nth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sample::{Outcome, Phase, Sample};
    use proptest::prelude::*;

    fn ns(v: &[i64]) -> Vec<Nanos> {
        v.iter().copied().map(Nanos::new).collect()
    }

    #[test]
    fn one_to_ten_has_median_5_p90_9_mad_2() {
        let set = SampleSet::from_runs(&[], &ns(&[7, 3, 10, 1, 5, 2, 9, 4, 8, 6])).unwrap();
        let s = Summary::of(&set).unwrap();
        assert_eq!(s.count(), 10);
        assert_eq!(s.min(), Nanos::new(1));
        assert_eq!(s.median(), Nanos::new(5));
        assert_eq!(s.p90(), Nanos::new(9));
        assert_eq!(s.max(), Nanos::new(10));
        assert_eq!(s.mad(), Nanos::new(2));
        assert_eq!(
            s.to_string(),
            "n 10, min 1 ns, median 5 ns, P90 9 ns, max 10 ns, MAD 2 ns \
             (0 warm-ups, 0 failed: kept, excluded)"
        );
    }

    #[test]
    fn summary_serializes_exact_values_as_text() {
        let set = SampleSet::from_runs(&ns(&[900]), &ns(&[1_000, 12_500, 2_000])).unwrap();
        assert_eq!(
            serde_json::to_value(Summary::of(&set).unwrap()).unwrap(),
            serde_json::json!({
                "counts": {"total": 4, "measured": 3, "warmups": 1, "completed_warmups": 1, "failures": 0},
                "min": "1 us", "median": "2 us", "p90": "12.5 us", "max": "12.5 us", "mad": "1 us"
            })
        );
    }

    #[test]
    fn microsecond_samples_with_a_slow_first_warmup() {
        // Teaching values: a 900 us cold start, then ~100 us runs and one 140 us straggler.
        let us = |v: i64| Nanos::new(v * 1_000);
        let mut set = SampleSet::new();
        set.record(us(900), Phase::Warmup, Outcome::Completed)
            .unwrap();
        set.record(us(120), Phase::Warmup, Outcome::Completed)
            .unwrap();
        for v in [100, 101, 99, 100, 140, 100, 102, 98] {
            set.record(us(v), Phase::Measured, Outcome::Completed)
                .unwrap();
        }
        set.record(us(5), Phase::Measured, Outcome::Failed).unwrap();
        let s = Summary::of(&set).unwrap();
        // sorted: 98 99 100 100 100 101 102 140; median rank 4 → 100; P90 rank ceil(7.2)=8 → 140
        assert_eq!((s.median(), s.p90(), s.max()), (us(100), us(140), us(140)));
        // deviations: 2 1 0 0 0 1 2 40 → 0 0 0 1 1 2 2 40 → rank 4 → 1 us
        assert_eq!(s.mad(), us(1));
        assert_eq!((s.count(), s.warmups(), s.failures()), (8, 2, 1));
        assert_eq!(s.counts().total, 11);
    }

    #[test]
    fn no_measured_samples_is_an_outcome_not_a_panic() {
        assert_eq!(
            Summary::of(&SampleSet::new()).unwrap_err().counts,
            Counts::default()
        );
        let set = SampleSet::from_runs(&ns(&[10, 20]), &[]).unwrap();
        assert_eq!(Summary::of(&set).unwrap_err().counts.warmups, 2);
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let set = SampleSet::from_runs(&[], &ns(&[0, i64::MAX, i64::MAX])).unwrap();
        let s = Summary::of(&set).unwrap();
        assert_eq!(s.median(), Nanos::new(i64::MAX));
        assert_eq!(s.mad(), Nanos::ZERO);
        let set = SampleSet::from_runs(&[], &ns(&[0, 0, i64::MAX])).unwrap();
        assert_eq!(Summary::of(&set).unwrap().mad(), Nanos::ZERO);
        let set = SampleSet::from_runs(&[], &ns(&[0, i64::MAX])).unwrap();
        assert_eq!(Summary::of(&set).unwrap().mad(), Nanos::ZERO);
    }

    fn values() -> impl Strategy<Value = Vec<i64>> {
        prop_oneof![
            prop::collection::vec(0..=i64::MAX, 1..40),
            prop::collection::vec(0i64..50, 1..40),
        ]
    }

    fn phase_outcome() -> impl Strategy<Value = (Phase, Outcome)> {
        (
            prop_oneof![Just(Phase::Warmup), Just(Phase::Measured)],
            prop_oneof![3 => Just(Outcome::Completed), 1 => Just(Outcome::Failed)],
        )
    }

    fn sample_sets() -> impl Strategy<Value = SampleSet> {
        prop::collection::vec((0i64..1_000_000, phase_outcome()), 0..40).prop_map(|runs| {
            runs.into_iter()
                .map(|(v, (p, o))| Sample::new(Nanos::new(v), p, o).unwrap())
                .collect()
        })
    }

    fn summary(v: &[i64]) -> Summary {
        Summary::of(&SampleSet::from_runs(&[], &ns(v)).unwrap()).unwrap()
    }

    proptest! {
        #[test]
        fn summary_is_permutation_invariant(
            (v, shuffled) in values().prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        ) {
            prop_assert_eq!(summary(&v), summary(&shuffled));
        }

        #[test]
        fn order_statistics_are_ordered(v in values()) {
            let s = summary(&v);
            prop_assert!(s.min() <= s.median());
            prop_assert!(s.median() <= s.p90());
            prop_assert!(s.p90() <= s.max());
            prop_assert!(s.mad() >= Nanos::ZERO);
            prop_assert!(i128::from(s.mad().as_i64())
                <= i128::from(s.max().as_i64()) - i128::from(s.min().as_i64()));
            prop_assert_eq!(s.count(), v.len());
        }

        #[test]
        fn a_constant_sample_has_that_median_and_zero_mad(c in 0..=i64::MAX, n in 1usize..50) {
            let s = summary(&vec![c; n]);
            prop_assert_eq!(s.median(), Nanos::new(c));
            prop_assert_eq!((s.min(), s.p90(), s.max()), (Nanos::new(c), Nanos::new(c), Nanos::new(c)));
            prop_assert_eq!(s.mad(), Nanos::ZERO);
        }

        #[test]
        fn mad_matches_a_sorting_oracle(v in values()) {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let rank = |n: usize| n.div_ceil(2); // nearest-rank P50, n >= 1
            let m = sorted[rank(sorted.len()) - 1];
            let mut dev: Vec<i64> = sorted.iter().map(|x| (x - m).abs()).collect();
            dev.sort_unstable();
            prop_assert_eq!(summary(&v).mad().as_i64(), dev[rank(dev.len()) - 1]);
        }

        #[test]
        fn a_warmup_never_changes_the_statistics(
            set in sample_sets(),
            warm in 0..=i64::MAX,
            at_front in any::<bool>(),
            failed in any::<bool>(),
        ) {
            let outcome = if failed { Outcome::Failed } else { Outcome::Completed };
            let warmup = Sample::new(Nanos::new(warm), Phase::Warmup, outcome).unwrap();
            let mut with: SampleSet = if at_front {
                std::iter::once(warmup).chain(set.all().iter().copied()).collect()
            } else {
                set.all().iter().copied().chain(std::iter::once(warmup)).collect()
            };
            prop_assert_eq!(with.len(), set.len() + 1);
            match (Summary::of(&set), Summary::of(&with)) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(
                        (a.count(), a.min(), a.median(), a.p90(), a.max(), a.mad()),
                        (b.count(), b.min(), b.median(), b.p90(), b.max(), b.mad())
                    );
                    prop_assert_eq!(b.warmups(), a.warmups() + 1);
                    prop_assert_eq!(b.failures(), a.failures() + usize::from(failed));
                }
                (Err(_), Err(e)) => prop_assert_eq!(e.counts.measured, 0),
                _ => prop_assert!(false, "a warm-up changed whether a summary exists"),
            }
            with.record(Nanos::new(1), Phase::Measured, Outcome::Failed).unwrap();
            // A failed measured run is equally invisible to the statistics.
            prop_assert_eq!(
                Summary::of(&with).map(|s| s.median()).ok(),
                Summary::of(&set).map(|s| s.median()).ok()
            );
        }
    }
}
