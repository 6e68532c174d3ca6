//! Raw samples: every run of a repeated measurement, warm-ups and failures included.
//!
//! A [`SampleSet`] is the record of a measurement session, in run order. Nothing is ever
//! removed from it: warm-up runs and failed runs stay in the raw record (SPEC §9, "raw
//! samples are always kept"), and the statistics read only the *measured* samples — the
//! runs that are neither warm-up nor failed — through [`SampleSet::measured`].
//!
//! ```text
//! index   0        1        2        3        4        5
//! phase   warm-up  warm-up  measured measured measured measured
//! outcome ok       ok       ok       FAILED   ok       ok
//! used    no       no       yes      no       yes      yes      <- measured()
//! ```
//!
//! Invariants: a sample's value is a duration, so it is never negative ([`Sample::new`]
//! refuses `value < 0`). Every statistic of this module therefore lies in `0..=i64::MAX`
//! and absolute deviations (`|x − median|`) cannot overflow `i64`.

use serde::Serialize;

use crate::units::Nanos;

/// Whether a run was a warm-up (recorded, excluded from statistics) or a measured run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// A warm-up run: recorded, counted as steady-state evidence, never in the statistics.
    Warmup,
    /// A measured run: in the statistics when it completed.
    Measured,
}

/// Whether a run completed or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The run completed; its value is a valid duration of the work.
    Completed,
    /// The run failed (error, timeout, failed validation). Its value is kept in the raw
    /// record but describes no completed work, so it is in no statistic.
    Failed,
}

/// One run of a repeated measurement: its duration, phase and outcome.
///
/// Invariants: `value >= 0` (a duration). The fields are private so no sample breaks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Sample {
    value: Nanos,
    phase: Phase,
    outcome: Outcome,
}

/// A sample value below zero: not a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sample value {value} is negative; a duration is never below zero")]
pub struct NegativeSample {
    /// The value given.
    pub value: Nanos,
}

impl Sample {
    /// A sample of `value` in `phase` with `outcome`.
    ///
    /// # Errors
    /// [`NegativeSample`] when `value < 0`.
    pub fn new(value: Nanos, phase: Phase, outcome: Outcome) -> Result<Self, NegativeSample> {
        if value < Nanos::ZERO {
            Err(NegativeSample { value })
        } else {
            Ok(Sample {
                value,
                phase,
                outcome,
            })
        }
    }

    /// The duration recorded for the run (`>= 0`).
    pub fn value(&self) -> Nanos {
        self.value
    }

    /// Warm-up or measured.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Completed or failed.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// Whether the sample enters the statistics: a measured run that completed.
    pub fn is_measured(&self) -> bool {
        self.phase == Phase::Measured && self.outcome == Outcome::Completed
    }
}

/// How many runs of each kind a [`SampleSet`] holds.
///
/// `warmups` counts every warm-up run (completed or failed), `failures` every failed run
/// (warm-up or measured), so a failed warm-up is counted in both; `measured` counts the
/// completed measured runs, the ones in the statistics. `total` is the length of the raw
/// record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Counts {
    /// Every run recorded.
    pub total: usize,
    /// Completed measured runs: those in the statistics.
    pub measured: usize,
    /// Warm-up runs, completed or failed.
    pub warmups: usize,
    /// Warm-up runs that completed: the warm-up evidence a steady-state claim may use.
    pub completed_warmups: usize,
    /// Failed runs, warm-up or measured.
    pub failures: usize,
}

/// Every run of a repeated measurement, in run order, none ever dropped.
///
/// Invariants: the order is the order the runs were recorded in (the steady-state check
/// compares the first and last thirds by that order); every sample is non-negative.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SampleSet {
    samples: Vec<Sample>,
}

impl SampleSet {
    /// An empty record.
    pub fn new() -> Self {
        SampleSet::default()
    }

    /// A record of completed warm-up runs followed by completed measured runs.
    ///
    /// ```
    /// use worksheet::stats::SampleSet;
    /// use worksheet::units::Nanos;
    ///
    /// let ns = |v: &[i64]| v.iter().copied().map(Nanos::new).collect::<Vec<_>>();
    /// let set = SampleSet::from_runs(&ns(&[900, 120]), &ns(&[100, 101, 99])).unwrap();
    /// assert_eq!(set.counts().warmups, 2);
    /// assert_eq!(set.counts().measured, 3);
    /// ```
    ///
    /// # Errors
    /// [`NegativeSample`] for the first negative value.
    pub fn from_runs(warmups: &[Nanos], measured: &[Nanos]) -> Result<Self, NegativeSample> {
        let mut set = SampleSet::new();
        for &v in warmups {
            set.record(v, Phase::Warmup, Outcome::Completed)?;
        }
        for &v in measured {
            set.record(v, Phase::Measured, Outcome::Completed)?;
        }
        Ok(set)
    }

    /// Appends a sample; returns its index in the raw record. Time: O(1) amortized.
    pub fn push(&mut self, sample: Sample) -> usize {
        self.samples.push(sample);
        self.samples.len() - 1
    }

    /// Builds and appends a sample; returns its index in the raw record.
    ///
    /// # Errors
    /// [`NegativeSample`] when `value < 0`; nothing is appended then.
    pub fn record(
        &mut self,
        value: Nanos,
        phase: Phase,
        outcome: Outcome,
    ) -> Result<usize, NegativeSample> {
        Ok(self.push(Sample::new(value, phase, outcome)?))
    }

    /// Every sample, in run order (the raw record).
    pub fn all(&self) -> &[Sample] {
        &self.samples
    }

    /// Number of samples in the raw record.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The measured samples (measured phase, completed), in run order, each with its index
    /// in the raw record. Time: O(n) to walk.
    pub fn measured(&self) -> impl Iterator<Item = (usize, Nanos)> + '_ {
        self.samples
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_measured())
            .map(|(i, s)| (i, s.value))
    }

    /// The measured values alone, in run order. Time and space: O(n).
    pub fn measured_values(&self) -> Vec<Nanos> {
        self.measured().map(|(_, v)| v).collect()
    }

    /// How many runs of each kind were recorded. Time: O(n).
    pub fn counts(&self) -> Counts {
        let mut c = Counts {
            total: self.samples.len(),
            ..Counts::default()
        };
        for s in &self.samples {
            match (s.phase, s.outcome) {
                (Phase::Measured, Outcome::Completed) => c.measured += 1,
                (Phase::Measured, Outcome::Failed) => c.failures += 1,
                (Phase::Warmup, Outcome::Completed) => {
                    c.warmups += 1;
                    c.completed_warmups += 1;
                }
                (Phase::Warmup, Outcome::Failed) => {
                    c.warmups += 1;
                    c.failures += 1;
                }
            }
        }
        c
    }
}

impl Extend<Sample> for SampleSet {
    fn extend<T: IntoIterator<Item = Sample>>(&mut self, iter: T) {
        self.samples.extend(iter);
    }
}

impl FromIterator<Sample> for SampleSet {
    fn from_iter<T: IntoIterator<Item = Sample>>(iter: T) -> Self {
        SampleSet {
            samples: iter.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push` returns the index the sample has in the raw record.
    #[test]
    fn push_returns_each_samples_index() {
        let mut set = SampleSet::new();
        let sample = |ns| Sample::new(Nanos::new(ns), Phase::Measured, Outcome::Completed).unwrap();
        assert_eq!(set.push(sample(5)), 0);
        assert_eq!(set.push(sample(6)), 1);
        assert_eq!(set.push(sample(7)), 2);
        assert!(!set.is_empty());
        assert!(SampleSet::new().is_empty());
    }

    /// `extend` appends after what is there, in order, and `counts` counts every kind.
    #[test]
    fn extend_appends_in_order_and_counts_count_each_kind() {
        let sample = |ns, phase, outcome| Sample::new(Nanos::new(ns), phase, outcome).unwrap();
        let mut set = SampleSet::new();
        set.push(sample(1, Phase::Warmup, Outcome::Completed));
        set.extend([
            sample(2, Phase::Warmup, Outcome::Failed),
            sample(3, Phase::Measured, Outcome::Completed),
            sample(4, Phase::Measured, Outcome::Failed),
            sample(5, Phase::Measured, Outcome::Completed),
        ]);
        assert_eq!(
            set.measured().collect::<Vec<_>>(),
            [(2, Nanos::new(3)), (4, Nanos::new(5))]
        );
        let c = set.counts();
        assert_eq!(
            (
                c.total,
                c.measured,
                c.failures,
                c.warmups,
                c.completed_warmups
            ),
            (5, 2, 2, 2, 1)
        );
    }

    /// `value` reads back the duration recorded.
    #[test]
    fn a_sample_keeps_its_value() {
        let sample = Sample::new(Nanos::new(1_234), Phase::Measured, Outcome::Completed).unwrap();
        assert_eq!(sample.value(), Nanos::new(1_234));
    }

    #[test]
    fn negative_values_are_not_samples() {
        let err = Sample::new(Nanos::new(-1), Phase::Measured, Outcome::Completed).unwrap_err();
        assert_eq!(err.value, Nanos::new(-1));
        assert!(Sample::new(Nanos::ZERO, Phase::Measured, Outcome::Completed).is_ok());
    }

    #[test]
    fn warmups_and_failures_are_kept_but_not_measured() {
        let mut set = SampleSet::new();
        set.record(Nanos::new(900), Phase::Warmup, Outcome::Completed)
            .unwrap();
        set.record(Nanos::new(5), Phase::Warmup, Outcome::Failed)
            .unwrap();
        set.record(Nanos::new(100), Phase::Measured, Outcome::Completed)
            .unwrap();
        set.record(Nanos::new(7), Phase::Measured, Outcome::Failed)
            .unwrap();
        set.record(Nanos::new(101), Phase::Measured, Outcome::Completed)
            .unwrap();
        assert_eq!(set.len(), 5);
        assert_eq!(
            set.measured().collect::<Vec<_>>(),
            vec![(2, Nanos::new(100)), (4, Nanos::new(101))]
        );
        assert_eq!(
            set.counts(),
            Counts {
                total: 5,
                measured: 2,
                warmups: 2,
                completed_warmups: 1,
                failures: 2,
            }
        );
    }

    #[test]
    fn a_rejected_sample_is_not_appended() {
        let mut set = SampleSet::new();
        assert!(set
            .record(Nanos::new(-3), Phase::Measured, Outcome::Completed)
            .is_err());
        assert!(set.is_empty());
    }
}
