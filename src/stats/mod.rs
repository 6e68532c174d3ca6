//! Statistics over repeated samples, exact in integer nanoseconds (SPEC §9).
//!
//! A timing run is repeated: a few warm-up runs, then measured runs, some of which may
//! fail. This module keeps all of them and answers, without floating point and without
//! I/O, the questions SPEC §9 asks:
//!
//! - **What was recorded?** [`SampleSet`] holds every run in run order — warm-ups and
//!   failures included, never dropped — and exposes the *measured* ones (measured phase,
//!   completed) that the statistics read ([`sample`]).
//! - **What are the numbers?** [`Summary`]: count, min, median, P90, max and the median
//!   absolute deviation of the measured samples, with the warm-ups and failures counted
//!   beside them ([`summary`]). An empty measured set is the typed outcome
//!   [`NoMeasuredSamples`], not a panic.
//! - **Which samples are unusual?** [`Outliers`]: every measured sample classified by
//!   Tukey's fences ([`Class::LowSevere`] … [`Class::HighSevere`]), counted and listed
//!   with its index in the raw record — and kept ([`outliers`]).
//! - **Is it a steady state?** [`steady_state`] returns a [`Verdict`](crate::verdict::Verdict):
//!   known (the median) only with enough warm-ups and first and last thirds that agree;
//!   otherwise unknown, `single-warmup` or `drift` ([`steady`]).
//!
//! ## One quantile method: nearest rank
//!
//! Every quantile — the median and the quartiles included — is the nearest-rank
//! quantile `sorted[max(1, ⌈p/100 × n⌉) − 1]` ([`quantile`]). It always returns an
//! observed sample, so values stay exact integers and no interpolation or rounding rule
//! is needed. For an even count the median is the **lower** middle value: the samples
//! `1 … 10` have median 5 and P90 9. The MAD is the nearest-rank median of the absolute
//! deviations from that median — again an observed integer, unscaled.
//!
//! ```
//! use worksheet::stats::{steady_state, Outliers, SampleSet, SteadyStatePolicy, Summary};
//! use worksheet::units::Nanos;
//!
//! let us = |v: &[i64]| v.iter().map(|&x| Nanos::new(x * 1_000)).collect::<Vec<_>>();
//! let set = SampleSet::from_runs(&us(&[900, 130]), &us(&[100, 102, 99, 101, 160, 100, 98]))
//!     .unwrap();
//!
//! let summary = Summary::of(&set).unwrap();
//! assert_eq!(summary.median(), Nanos::new(100_000));
//! assert_eq!(summary.p90(), Nanos::new(160_000));
//! assert_eq!(summary.warmups(), 2);
//!
//! let outliers = Outliers::of(&set).unwrap();
//! assert_eq!(outliers.counts().outliers(), 1); // the 160 us run, kept and listed
//!
//! let verdict = steady_state(&set, &SteadyStatePolicy::default());
//! assert_eq!(verdict.to_string(), "known 100 us");
//! ```
//!
//! Invariants of the whole module: samples are durations (`>= 0`), so every statistic
//! lies in `0..=i64::MAX` and deviations never overflow; intermediate products (fences,
//! tolerances) are computed in `i128`.
//!
//! Codemap: [`sample`] (raw record), [`sorted`] (the sorted measured values every
//! statistic reads), [`quantile`] (nearest rank), [`summary`] (count … MAD), [`outliers`]
//! (Tukey fences), [`steady`] (the steady-state verdict), [`warmup`] (which leading samples
//! are a warm-up, judged by the samples' own noise).

pub mod outliers;
pub mod quantile;
pub mod sample;
pub mod sorted;
pub mod steady;
pub mod summary;
pub mod warmup;

pub use outliers::{Class, ClassCounts, Classified, Fence, Outliers, TukeyFences};
pub use quantile::{nearest_rank, Percentile};
pub use sample::{Counts, NegativeSample, Outcome, Phase, Sample, SampleSet};
pub use sorted::{NoMeasuredSamples, Sorted, SortedError};
pub use steady::{assess, steady_state, SteadyState, SteadyStatePolicy, Thirds, Tolerance};
pub use summary::{median_absolute_deviation, Summary};
pub use warmup::{warmup_prefix, WarmupPrefix};
