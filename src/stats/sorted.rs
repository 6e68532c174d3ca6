//! [`Sorted`]: the measured values in ascending order, the one input every statistic reads.
//!
//! Sorting once and reading ranks afterwards keeps every statistic exact and cheap: a
//! quantile is one index (O(1)), and the summary, the fences and the steady-state thirds
//! all reuse the same sort.
//!
//! Invariants (enforced by the constructors, relied on everywhere in [`crate::stats`]):
//! at least one value, ascending order, every value `>= 0`.

use std::fmt;

use serde::Serialize;

use super::sample::{Counts, SampleSet};
use crate::units::Nanos;

/// Non-empty, ascending, non-negative nanosecond values.
///
/// Invariants: `len() >= 1`; `values()[i] <= values()[i + 1]`; every value `>= 0`. The
/// field is private so no `Sorted` breaks them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Sorted {
    values: Vec<Nanos>,
}

/// Why values could not become a [`Sorted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SortedError {
    /// No value at all: no statistic is defined.
    #[error("no values: a statistic of an empty set is not defined")]
    Empty,
    /// A value below zero: not a duration.
    #[error("value {value} is negative; a duration is never below zero")]
    Negative {
        /// The first negative value found.
        value: Nanos,
    },
}

/// A sample set with no measured sample (every run was a warm-up or failed, or nothing
/// was recorded): there is nothing to summarize. It carries the counts, so a report can
/// still say what *was* recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no measured samples: {} runs recorded ({} warm-ups, {} failed)",
    counts.total, counts.warmups, counts.failures
)]
pub struct NoMeasuredSamples {
    /// What the set holds.
    pub counts: Counts,
}

impl Sorted {
    /// Sorts `values`. Time: O(n log n).
    ///
    /// # Errors
    /// [`SortedError::Empty`] for no values, [`SortedError::Negative`] for a value `< 0`.
    pub fn new(mut values: Vec<Nanos>) -> Result<Self, SortedError> {
        values.sort_unstable();
        match values.first() {
            None => Err(SortedError::Empty),
            Some(&first) if first < Nanos::ZERO => Err(SortedError::Negative { value: first }),
            Some(_) => Ok(Sorted { values }),
        }
    }

    /// The measured samples of `set` (warm-ups and failures left out), sorted.
    /// Time: O(n log n).
    ///
    /// # Errors
    /// [`NoMeasuredSamples`] when `set` has no completed measured run.
    pub fn of_measured(set: &SampleSet) -> Result<Self, NoMeasuredSamples> {
        Sorted::new(set.measured_values()).map_err(|_| NoMeasuredSamples {
            counts: set.counts(),
        })
    }

    /// Wraps values already known to be non-negative (sample values, absolute deviations);
    /// `None` when empty. Time: O(n log n).
    pub(crate) fn from_non_negative(values: Vec<Nanos>) -> Option<Self> {
        debug_assert!(values.iter().all(|&v| v >= Nanos::ZERO));
        Sorted::new(values).ok()
    }

    /// The values, ascending.
    pub fn values(&self) -> &[Nanos] {
        &self.values
    }

    /// How many values (at least 1).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always `false`: a `Sorted` holds at least one value. Present for API symmetry.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The smallest value. Time: O(1).
    pub fn min(&self) -> Nanos {
        self.values[0]
    }

    /// The largest value. Time: O(1).
    pub fn max(&self) -> Nanos {
        self.values[self.values.len() - 1]
    }
}

impl fmt::Display for Sorted {
    /// `[1 us, 2 us, 3 us]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, v) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{v}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sample::{Outcome, Phase};

    /// A `Sorted` is never empty, and prints as a bracketed, comma-separated list.
    #[test]
    fn a_sorted_set_prints_its_values_in_order() {
        let us = |v: i64| Nanos::new(v * 1_000);
        let sorted = Sorted::new(vec![us(3), us(1), us(2)]).unwrap();
        assert!(!sorted.is_empty());
        assert_eq!(sorted.to_string(), "[1 us, 2 us, 3 us]");
        assert_eq!(Sorted::new(vec![us(7)]).unwrap().to_string(), "[7 us]");
    }

    #[test]
    fn sorting_orders_and_rejects_empty_or_negative() {
        let s = Sorted::new(vec![Nanos::new(3), Nanos::new(1), Nanos::new(2)]).unwrap();
        assert_eq!(s.values(), &[Nanos::new(1), Nanos::new(2), Nanos::new(3)]);
        assert_eq!((s.min(), s.max()), (Nanos::new(1), Nanos::new(3)));
        assert_eq!(Sorted::new(vec![]), Err(SortedError::Empty));
        assert_eq!(
            Sorted::new(vec![Nanos::new(3), Nanos::new(-4)]),
            Err(SortedError::Negative {
                value: Nanos::new(-4)
            })
        );
    }

    #[test]
    fn only_warmups_and_failures_have_no_measured_samples() {
        let mut set = SampleSet::new();
        set.record(Nanos::new(9), Phase::Warmup, Outcome::Completed)
            .unwrap();
        set.record(Nanos::new(9), Phase::Measured, Outcome::Failed)
            .unwrap();
        let err = Sorted::of_measured(&set).unwrap_err();
        assert_eq!(err.counts.total, 2);
        assert_eq!(
            err.to_string(),
            "no measured samples: 2 runs recorded (1 warm-ups, 1 failed)"
        );
    }
}
