//! The steady-state check: may the median of the measured samples be reported as *the*
//! steady-state time? (SPEC §9, reason codes `single-warmup` and `drift`.)
//!
//! A steady-state claim needs evidence of two kinds, checked in this order:
//!
//! 1. **Warm-up.** At least [`SteadyStatePolicy::min_warmup_runs`] *completed* warm-up
//!    runs (default 2: SPEC §9 asks for more than one). A failed warm-up is kept in the
//!    record but not counted — it may have stopped before warming anything. Too few →
//!    unknown, `single-warmup`.
//! 2. **Stability.** The measured samples, in run order, are cut into thirds of
//!    `k = ⌊n / 3⌋` samples (a middle remainder is left out of the comparison):
//!
//!    ```text
//!    run order →  m1 m2 m3 | m4 m5 m6 | m7 m8 m9
//!                 first third          last third
//!                 median F             median L       overall median M (all nine)
//!    ```
//!
//!    With fewer than [`SteadyStatePolicy::min_measured`] samples (default 6, so each third
//!    has at least two) there is no stability evidence → unknown, `single-warmup`. When
//!    `|F − L| > tolerance × M` the samples drift (still warming, throttling, a cache
//!    filling up) → unknown, `drift`, with both medians in the detail. Otherwise the claim
//!    is known: the value is `M`, with notes naming `F`, `L` and the tolerance.
//!
//! All medians are nearest-rank (see [`super::quantile`]); the comparison is exact integer
//! arithmetic in `i128` (`|F − L| × 1000 > per_mille × M`). A value exactly at the
//! tolerance is within it.
//!
//! Cost: O(n log n) (three sorts of at most n values).

use std::fmt;

use serde::Serialize;

use super::sample::{Counts, SampleSet};
use super::sorted::Sorted;
use crate::units::Nanos;
use crate::verdict::{Reason, Verdict};

/// A relative tolerance, in tenths of a percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Tolerance {
    per_mille: u32,
}

impl Tolerance {
    /// `percent` %.
    pub const fn percent(percent: u32) -> Tolerance {
        Tolerance {
            per_mille: percent.saturating_mul(10),
        }
    }

    /// `per_mille` ‰ (`25` is 2.5 %).
    pub const fn per_mille(per_mille: u32) -> Tolerance {
        Tolerance { per_mille }
    }

    /// The tolerance in tenths of a percent.
    pub const fn as_per_mille(self) -> u32 {
        self.per_mille
    }

    /// Whether `a` and `b` differ by at most this tolerance of `reference`:
    /// `|a − b| × 1000 <= per_mille × reference`, exact in `i128`. Time: O(1).
    pub fn admits(self, a: Nanos, b: Nanos, reference: Nanos) -> bool {
        let diff = (i128::from(a.as_i64()) - i128::from(b.as_i64())).abs();
        diff * 1000 <= i128::from(self.per_mille) * i128::from(reference.as_i64())
    }
}

impl Default for Tolerance {
    /// 5 %.
    fn default() -> Self {
        Tolerance::percent(5)
    }
}

impl fmt::Display for Tolerance {
    /// `5%`, `2.5%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, tenth) = (self.per_mille / 10, self.per_mille % 10);
        if tenth == 0 {
            write!(f, "{whole}%")
        } else {
            write!(f, "{whole}.{tenth}%")
        }
    }
}

/// What a steady-state claim must be backed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SteadyStatePolicy {
    /// Completed warm-up runs needed (default 2). SPEC §9 asks for more than one; a lower
    /// value is the caller's declared choice.
    pub min_warmup_runs: usize,
    /// Largest allowed difference between the first-third and last-third medians, relative
    /// to the overall median (default 5 %).
    pub tolerance: Tolerance,
    /// Measured samples needed to compare thirds (default 6: two per third). Values below
    /// 3 are treated as 3, so that no third is empty.
    pub min_measured: usize,
}

impl Default for SteadyStatePolicy {
    fn default() -> Self {
        SteadyStatePolicy {
            min_warmup_runs: 2,
            tolerance: Tolerance::default(),
            min_measured: 6,
        }
    }
}

impl SteadyStatePolicy {
    /// The measured-sample minimum actually applied: `max(min_measured, 3)`.
    pub fn effective_min_measured(&self) -> usize {
        self.min_measured.max(3)
    }
}

/// The medians compared by the stability check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Thirds {
    /// Median of the first `third_len` measured samples (run order).
    pub first: Nanos,
    /// Median of the last `third_len` measured samples.
    pub last: Nanos,
    /// Median of all measured samples: the steady-state value when stable.
    pub overall: Nanos,
    /// Samples in each compared third, `⌊measured / 3⌋`.
    pub third_len: usize,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// What the set held.
    pub counts: Counts,
}

impl Thirds {
    /// `|first − last|` (cannot overflow: both are in `0..=i64::MAX`).
    pub fn difference(&self) -> Nanos {
        Nanos::new((self.first.as_i64() - self.last.as_i64()).abs())
    }
}

/// The outcome of the steady-state check, before it becomes a [`Verdict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum SteadyState {
    /// Fewer completed warm-ups than the policy needs (`single-warmup`).
    TooFewWarmups {
        /// Completed warm-up runs recorded.
        completed: usize,
        /// Warm-up runs recorded, failed ones included.
        recorded: usize,
        /// Completed warm-up runs the policy needs.
        needed: usize,
    },
    /// Too few measured samples to compare thirds: no stability evidence (`single-warmup`).
    TooFewMeasured {
        /// Measured samples recorded.
        measured: usize,
        /// Measured samples needed.
        needed: usize,
    },
    /// The first and last thirds differ by more than the tolerance (`drift`).
    Drift(Thirds),
    /// Warmed up and stable: the overall median is the steady-state value.
    Steady(Thirds),
}

/// Checks the steady-state evidence of `set` against `policy`; see the
/// [module docs](self). Time: O(n log n).
pub fn assess(set: &SampleSet, policy: &SteadyStatePolicy) -> SteadyState {
    let counts = set.counts();
    if counts.completed_warmups < policy.min_warmup_runs {
        return SteadyState::TooFewWarmups {
            completed: counts.completed_warmups,
            recorded: counts.warmups,
            needed: policy.min_warmup_runs,
        };
    }
    let needed = policy.effective_min_measured();
    let measured = set.measured_values();
    let n = measured.len();
    if n < needed {
        return SteadyState::TooFewMeasured {
            measured: n,
            needed,
        };
    }
    let k = n / 3;
    let median = |values: &[Nanos]| {
        Sorted::from_non_negative(values.to_vec())
            .expect("n >= 3, so every third holds at least one sample")
            .median()
    };
    let thirds = Thirds {
        first: median(&measured[..k]),
        last: median(&measured[n - k..]),
        overall: median(&measured),
        third_len: k,
        tolerance: policy.tolerance,
        counts,
    };
    if policy
        .tolerance
        .admits(thirds.first, thirds.last, thirds.overall)
    {
        SteadyState::Steady(thirds)
    } else {
        SteadyState::Drift(thirds)
    }
}

/// The steady-state verdict for `set`: known (the overall median, with notes) or unknown
/// with `single-warmup` or `drift`. Time: O(n log n).
///
/// ```
/// use worksheet::stats::{steady_state, SampleSet, SteadyStatePolicy};
/// use worksheet::units::Nanos;
/// use worksheet::verdict::Reason;
///
/// let us = |v: &[i64]| v.iter().map(|&x| Nanos::new(x * 1_000)).collect::<Vec<_>>();
/// let policy = SteadyStatePolicy::default();
///
/// let one_warmup = SampleSet::from_runs(&us(&[900]), &us(&[100; 9])).unwrap();
/// assert_eq!(steady_state(&one_warmup, &policy).reason(), Some(Reason::SingleWarmup));
///
/// let warming = SampleSet::from_runs(&us(&[900, 300]), &us(&[150, 140, 130, 120, 110, 100])).unwrap();
/// assert_eq!(steady_state(&warming, &policy).reason(), Some(Reason::Drift));
///
/// let steady = SampleSet::from_runs(&us(&[900, 300]), &us(&[101, 99, 100, 102, 100, 98])).unwrap();
/// assert_eq!(steady_state(&steady, &policy).to_string(), "known 100 us");
/// ```
pub fn steady_state(set: &SampleSet, policy: &SteadyStatePolicy) -> Verdict {
    assess(set, policy).into()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

impl From<SteadyState> for Verdict {
    fn from(outcome: SteadyState) -> Verdict {
        match outcome {
            SteadyState::TooFewWarmups {
                completed,
                recorded,
                needed,
            } => {
                let failed = recorded - completed;
                let failed_note = if failed > 0 {
                    format!(" ({failed} more failed, not counted)")
                } else {
                    String::new()
                };
                Verdict::unknown_because(
                    Reason::SingleWarmup,
                    format!(
                        "{} recorded{failed_note}; a steady-state claim needs at least {needed}",
                        plural(completed, "completed warm-up run", "completed warm-up runs"),
                    ),
                )
            }
            SteadyState::TooFewMeasured { measured, needed } => Verdict::unknown_because(
                Reason::SingleWarmup,
                format!(
                    "only {}: at least {needed} are needed to compare the first and last \
                     thirds, so there is no stability evidence",
                    plural(measured, "measured sample", "measured samples"),
                ),
            ),
            SteadyState::Drift(t) => Verdict::unknown_because(
                Reason::Drift,
                format!(
                    "first-third median {} and last-third median {} differ by {}, more than \
                     {} of the overall median {} ({} per third, {} measured)",
                    t.first,
                    t.last,
                    t.difference(),
                    t.tolerance,
                    t.overall,
                    t.third_len,
                    t.counts.measured,
                ),
            ),
            SteadyState::Steady(t) => Verdict::known(t.overall)
                .with_note(format!(
                    "steady state: first-third median {}, last-third median {}, within {} \
                     of the overall median",
                    t.first, t.last, t.tolerance
                ))
                .with_note(format!(
                    "nearest-rank median of {}; {} and {} kept, excluded",
                    plural(t.counts.measured, "measured sample", "measured samples"),
                    plural(t.counts.warmups, "warm-up run", "warm-up runs"),
                    plural(t.counts.failures, "failed run", "failed runs"),
                )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::sample::{Outcome, Phase};
    use proptest::prelude::*;

    /// `as_per_mille` reads back the tolerance in tenths of a percent.
    #[test]
    fn a_tolerance_reads_back_in_tenths_of_a_percent() {
        assert_eq!(Tolerance::percent(5).as_per_mille(), 50);
        assert_eq!(Tolerance::percent(0).as_per_mille(), 0);
    }

    fn us(v: &[i64]) -> Vec<Nanos> {
        v.iter().map(|&x| Nanos::new(x * 1_000)).collect()
    }

    fn check(warmups: &[i64], measured: &[i64]) -> Verdict {
        let set = SampleSet::from_runs(&us(warmups), &us(measured)).unwrap();
        steady_state(&set, &SteadyStatePolicy::default())
    }

    fn detail(v: &Verdict) -> &str {
        match v {
            Verdict::Unknown { detail, .. } => detail,
            Verdict::Known { .. } | Verdict::Bounded { .. } => {
                panic!("expected unknown, got {v:?}")
            }
        }
    }

    #[test]
    fn one_warmup_offered_as_steady_state_is_single_warmup() {
        // SPEC §7 edge control 14.
        let v = check(&[900], &[100, 100, 100, 100, 100, 100]);
        assert_eq!(v.reason(), Some(Reason::SingleWarmup));
        assert_eq!(
            detail(&v),
            "1 completed warm-up run recorded; a steady-state claim needs at least 2"
        );
        assert_eq!(check(&[], &[100; 6]).reason(), Some(Reason::SingleWarmup));
    }

    #[test]
    fn a_failed_warmup_is_kept_but_not_counted() {
        let mut set = SampleSet::from_runs(&us(&[900]), &us(&[100; 6])).unwrap();
        set.record(Nanos::new(1), Phase::Warmup, Outcome::Failed)
            .unwrap();
        let v = steady_state(&set, &SteadyStatePolicy::default());
        assert_eq!(
            detail(&v),
            "1 completed warm-up run recorded (1 more failed, not counted); \
             a steady-state claim needs at least 2"
        );
    }

    #[test]
    fn too_few_measured_samples_is_no_stability_evidence() {
        let v = check(&[900, 300], &[100, 100, 100, 100, 100]);
        assert_eq!(v.reason(), Some(Reason::SingleWarmup));
        assert_eq!(
            detail(&v),
            "only 5 measured samples: at least 6 are needed to compare the first and last \
             thirds, so there is no stability evidence"
        );
        assert_eq!(check(&[900, 300], &[]).reason(), Some(Reason::SingleWarmup));
    }

    #[test]
    fn a_downward_trend_is_drift_with_both_medians() {
        // thirds: [150 140 130] median 140, [110 105 100] median 105; overall median 125
        let v = check(&[900, 300], &[150, 140, 130, 120, 125, 125, 110, 105, 100]);
        assert_eq!(v.reason(), Some(Reason::Drift));
        assert_eq!(
            detail(&v),
            "first-third median 140 us and last-third median 105 us differ by 35 us, more \
             than 5% of the overall median 125 us (3 per third, 9 measured)"
        );
    }

    #[test]
    fn stable_samples_are_known_with_notes() {
        let v = check(&[900, 300], &[101, 99, 100, 140, 102, 100, 98]);
        // thirds of 2: [101 99] → 99, [100 98] → 98; overall sorted 98 99 100 100 101 102 140 → 100
        match v {
            Verdict::Known { value, notes } => {
                assert_eq!(value, Nanos::new(100_000));
                assert_eq!(
                    notes,
                    vec![
                        "steady state: first-third median 99 us, last-third median 98 us, \
                         within 5% of the overall median"
                            .to_owned(),
                        "nearest-rank median of 7 measured samples; 2 warm-up runs and 0 \
                         failed runs kept, excluded"
                            .to_owned(),
                    ]
                );
            }
            other => panic!("expected known, got {other:?}"),
        }
    }

    #[test]
    fn exactly_at_the_tolerance_is_within_it() {
        // overall median 100, thirds 95 and 100: |Δ| = 5 = 5% of 100.
        let v = check(&[1, 1], &[95, 95, 100, 100, 100, 100]);
        assert_eq!(v.value(), Some(Nanos::new(100_000)));
        let v = check(&[1, 1], &[94, 94, 100, 100, 100, 100]);
        assert_eq!(v.reason(), Some(Reason::Drift));
    }

    #[test]
    fn tolerance_is_exact_per_mille() {
        assert_eq!(Tolerance::default().to_string(), "5%");
        assert_eq!(Tolerance::per_mille(25).to_string(), "2.5%");
        let t = Tolerance::per_mille(25);
        assert!(t.admits(Nanos::new(1_025), Nanos::new(1_000), Nanos::new(1_000)));
        assert!(!t.admits(Nanos::new(1_026), Nanos::new(1_000), Nanos::new(1_000)));
        // A zero median admits no difference at all.
        assert!(!t.admits(Nanos::new(1), Nanos::new(0), Nanos::ZERO));
        assert!(Tolerance::percent(100).admits(
            Nanos::new(i64::MAX),
            Nanos::ZERO,
            Nanos::new(i64::MAX)
        ));
    }

    #[test]
    fn policy_minimum_below_three_is_raised() {
        let policy = SteadyStatePolicy {
            min_measured: 0,
            ..SteadyStatePolicy::default()
        };
        let set = SampleSet::from_runs(&us(&[1, 1]), &us(&[100, 100])).unwrap();
        assert_eq!(
            assess(&set, &policy),
            SteadyState::TooFewMeasured {
                measured: 2,
                needed: 3
            }
        );
    }

    #[test]
    fn outcomes_serialize_with_a_kebab_case_tag() {
        let set = SampleSet::from_runs(&us(&[900]), &us(&[100; 6])).unwrap();
        assert_eq!(
            serde_json::to_value(assess(&set, &SteadyStatePolicy::default())).unwrap(),
            serde_json::json!({"outcome": "too-few-warmups", "completed": 1, "recorded": 1, "needed": 2})
        );
        let set =
            SampleSet::from_runs(&us(&[900, 300]), &us(&[150, 150, 100, 100, 100, 100])).unwrap();
        assert_eq!(
            serde_json::to_value(assess(&set, &SteadyStatePolicy::default())).unwrap(),
            serde_json::json!({
                "outcome": "drift",
                "first": "150 us", "last": "100 us", "overall": "100 us", "third_len": 2,
                "tolerance": {"per_mille": 50},
                "counts": {"total": 8, "measured": 6, "warmups": 2, "completed_warmups": 2, "failures": 0}
            })
        );
    }

    proptest! {
        #[test]
        fn a_constant_warmed_up_sample_is_steady_at_that_constant(
            c in 0..=i64::MAX, n in 6usize..60, w in 2usize..5,
        ) {
            let set = SampleSet::from_runs(
                &vec![Nanos::new(c); w],
                &vec![Nanos::new(c); n],
            ).unwrap();
            prop_assert_eq!(
                steady_state(&set, &SteadyStatePolicy::default()).value(),
                Some(Nanos::new(c))
            );
        }

        #[test]
        fn known_value_is_the_summary_median(
            v in prop::collection::vec(0i64..1_000_000, 0..40),
        ) {
            let set = SampleSet::from_runs(&us(&[1, 1]), &v.iter().copied().map(Nanos::new).collect::<Vec<_>>()).unwrap();
            let verdict = steady_state(&set, &SteadyStatePolicy::default());
            match verdict {
                Verdict::Known { value, .. } => {
                    prop_assert_eq!(Some(value), crate::stats::Summary::of(&set).ok().map(|s| s.median()));
                }
                Verdict::Bounded { .. } => prop_assert!(false, "one series, one clock: never bounded"),
                Verdict::Unknown { reason, .. } => {
                    prop_assert!(
                        (reason == Reason::SingleWarmup && v.len() < 6)
                            || (reason == Reason::Drift && v.len() >= 6)
                    );
                }
            }
        }
    }
}
