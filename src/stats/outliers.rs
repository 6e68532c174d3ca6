//! Outliers by Tukey's fences: classified, counted and listed — never dropped.
//!
//! With the quartiles `Q1` = P25 and `Q3` = P75 (nearest rank, see [`super::quantile`]) and
//! `IQR = Q3 − Q1`, a measured sample `x` is
//!
//! ```text
//!  LowSevere │ LowMild │        NotAnOutlier         │ HighMild │ HighSevere
//! ───────────┼─────────┼──────────[Q1 ··· Q3]─────────┼──────────┼───────────
//!      Q1 − 3·IQR  Q1 − 1.5·IQR                 Q3 + 1.5·IQR  Q3 + 3·IQR
//! ```
//!
//! A value lying exactly on a fence is on the inner side (the comparisons are strict `<`
//! and `>`). `1.5·IQR` can end in half a nanosecond, so the fences are kept exactly in
//! **half-nanoseconds** ([`Fence`]) and compared against `2·x`, all in `i128`: nothing
//! rounds and nothing overflows (`Q3 + 3·IQR` may exceed `i64::MAX`).
//!
//! An outlier is a fact about a sample, not a reason to delete it: the classification is
//! reported next to the summary, which keeps every measured sample.
//!
//! Cost: O(n log n) for [`Outliers::of`] (one sort for the quartiles, one pass to classify).

use std::fmt;

use serde::{Serialize, Serializer};

use super::quantile::Percentile;
use super::sample::SampleSet;
use super::sorted::{NoMeasuredSamples, Sorted};
use crate::units::{Nanos, Unit};

/// Where a sample lies relative to Tukey's fences. Ordered from lowest to highest, so the
/// class of a larger value is never lower than the class of a smaller one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Below `Q1 − 3·IQR`.
    LowSevere,
    /// Below `Q1 − 1.5·IQR`, at or above `Q1 − 3·IQR`.
    LowMild,
    /// Within `[Q1 − 1.5·IQR, Q3 + 1.5·IQR]`.
    NotAnOutlier,
    /// Above `Q3 + 1.5·IQR`, at or below `Q3 + 3·IQR`.
    HighMild,
    /// Above `Q3 + 3·IQR`.
    HighSevere,
}

impl Class {
    /// Every class, lowest first.
    pub const ALL: [Class; 5] = [
        Class::LowSevere,
        Class::LowMild,
        Class::NotAnOutlier,
        Class::HighMild,
        Class::HighSevere,
    ];

    /// The stable kebab-case code, for example `high-mild`.
    pub const fn code(self) -> &'static str {
        match self {
            Class::LowSevere => "low-severe",
            Class::LowMild => "low-mild",
            Class::NotAnOutlier => "not-an-outlier",
            Class::HighMild => "high-mild",
            Class::HighSevere => "high-severe",
        }
    }

    /// Whether the class is one of the four outlier classes.
    pub const fn is_outlier(self) -> bool {
        !matches!(self, Class::NotAnOutlier)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A fence position, exact to half a nanosecond.
///
/// Invariants: none beyond the representation; `half_nanos()` is twice the position in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fence {
    half_ns: i128,
}

impl Fence {
    /// The position in half-nanoseconds (`2 × ns`), exact.
    pub fn half_nanos(self) -> i128 {
        self.half_ns
    }

    /// The position as whole nanoseconds, when it is whole and fits in `i64`.
    pub fn as_nanos(self) -> Option<Nanos> {
        if self.half_ns % 2 == 0 {
            i64::try_from(self.half_ns / 2).ok().map(Nanos::new)
        } else {
            None
        }
    }
}

impl fmt::Display for Fence {
    /// Exact, in the unit [`Nanos`] would pick: `12.5 us`, `7.5 ns`, `-40 us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.half_ns < 0 { "-" } else { "" };
        let abs = self.half_ns.unsigned_abs();
        let (whole_ns, half) = (abs / 2, abs % 2);
        let unit = match whole_ns {
            0..1_000 => Unit::Nanos,
            1_000..1_000_000 => Unit::Micros,
            1_000_000..1_000_000_000 => Unit::Millis,
            _ => Unit::Seconds,
        };
        let per = unit.nanos_per_unit() as u128;
        let (whole, frac_ns) = (whole_ns / per, whole_ns % per);
        // One more decimal place than whole nanoseconds need, for the possible half.
        let frac = frac_ns * 10 + half * 5;
        let mut frac_text = format!("{frac:0width$}", width = unit.fraction_digits() + 1);
        while frac_text.ends_with('0') {
            frac_text.pop();
        }
        if frac_text.is_empty() {
            write!(f, "{sign}{whole} {}", unit.symbol())
        } else {
            write!(f, "{sign}{whole}.{frac_text} {}", unit.symbol())
        }
    }
}

impl Serialize for Fence {
    /// As its exact text, `"12.5 us"`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Tukey's four fences for one set of values.
///
/// Invariants: `low_severe <= low_mild <= high_mild <= high_severe` (IQR ≥ 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TukeyFences {
    q1: Nanos,
    q3: Nanos,
    low_severe: Fence,
    low_mild: Fence,
    high_mild: Fence,
    high_severe: Fence,
}

impl TukeyFences {
    /// The fences of `sorted`, from its nearest-rank quartiles. Time: O(1).
    ///
    /// ```
    /// use worksheet::stats::{Class, Sorted, TukeyFences};
    /// use worksheet::units::Nanos;
    ///
    /// // Q1 = 3, Q3 = 8 (ranks 3 and 8 of 10), IQR = 5: fences −12, −4.5, 15.5, 23.
    /// let s = Sorted::new((1..=10).map(Nanos::new).collect()).unwrap();
    /// let f = TukeyFences::of(&s);
    /// assert_eq!(f.high_mild().to_string(), "15.5 ns");
    /// assert_eq!(f.classify(Nanos::new(16)), Class::HighMild);
    /// assert_eq!(f.classify(Nanos::new(23)), Class::HighMild); // on the fence: inner side
    /// assert_eq!(f.classify(Nanos::new(24)), Class::HighSevere);
    /// ```
    pub fn of(sorted: &Sorted) -> TukeyFences {
        TukeyFences::from_quartiles(
            sorted.quantile(Percentile::P25),
            sorted.quantile(Percentile::P75),
        )
    }

    /// The fences for given quartiles (`q1 <= q3` expected; swapped if not). Time: O(1).
    pub fn from_quartiles(q1: Nanos, q3: Nanos) -> TukeyFences {
        let (q1, q3) = (q1.min(q3), q1.max(q3));
        let (lo, hi) = (i128::from(q1.as_i64()), i128::from(q3.as_i64()));
        let iqr = hi - lo;
        let fence = |half_ns| Fence { half_ns };
        TukeyFences {
            q1,
            q3,
            low_severe: fence(2 * lo - 6 * iqr),
            low_mild: fence(2 * lo - 3 * iqr),
            high_mild: fence(2 * hi + 3 * iqr),
            high_severe: fence(2 * hi + 6 * iqr),
        }
    }

    /// The first quartile (nearest-rank P25).
    pub fn q1(&self) -> Nanos {
        self.q1
    }

    /// The third quartile (nearest-rank P75).
    pub fn q3(&self) -> Nanos {
        self.q3
    }

    /// `Q1 − 3·IQR`.
    pub fn low_severe(&self) -> Fence {
        self.low_severe
    }

    /// `Q1 − 1.5·IQR`.
    pub fn low_mild(&self) -> Fence {
        self.low_mild
    }

    /// `Q3 + 1.5·IQR`.
    pub fn high_mild(&self) -> Fence {
        self.high_mild
    }

    /// `Q3 + 3·IQR`.
    pub fn high_severe(&self) -> Fence {
        self.high_severe
    }

    /// The class of `value`; a value on a fence belongs to the inner side. Time: O(1).
    pub fn classify(&self, value: Nanos) -> Class {
        let x = 2 * i128::from(value.as_i64());
        if x < self.low_severe.half_ns {
            Class::LowSevere
        } else if x < self.low_mild.half_ns {
            Class::LowMild
        } else if x > self.high_severe.half_ns {
            Class::HighSevere
        } else if x > self.high_mild.half_ns {
            Class::HighMild
        } else {
            Class::NotAnOutlier
        }
    }
}

/// One measured sample with its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Classified {
    /// Its index in the raw [`SampleSet`] (warm-ups and failures included).
    pub index: usize,
    /// Its value.
    pub value: Nanos,
    /// Where it lies relative to the fences.
    pub class: Class,
}

/// How many measured samples fall in each class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct ClassCounts {
    /// Below `Q1 − 3·IQR`.
    pub low_severe: usize,
    /// Between the low fences.
    pub low_mild: usize,
    /// Within the mild fences.
    pub not_outliers: usize,
    /// Between the high fences.
    pub high_mild: usize,
    /// Above `Q3 + 3·IQR`.
    pub high_severe: usize,
}

impl ClassCounts {
    /// The count for `class`.
    pub fn get(&self, class: Class) -> usize {
        match class {
            Class::LowSevere => self.low_severe,
            Class::LowMild => self.low_mild,
            Class::NotAnOutlier => self.not_outliers,
            Class::HighMild => self.high_mild,
            Class::HighSevere => self.high_severe,
        }
    }

    /// All four outlier classes together.
    pub fn outliers(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }

    fn add(&mut self, class: Class) {
        let slot = match class {
            Class::LowSevere => &mut self.low_severe,
            Class::LowMild => &mut self.low_mild,
            Class::NotAnOutlier => &mut self.not_outliers,
            Class::HighMild => &mut self.high_mild,
            Class::HighSevere => &mut self.high_severe,
        };
        *slot += 1;
    }
}

/// Every measured sample of a set, classified by the set's Tukey fences.
///
/// Invariants: one entry per measured sample, in run order; nothing dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outliers {
    fences: TukeyFences,
    classified: Vec<Classified>,
    counts: ClassCounts,
}

impl Outliers {
    /// Classifies the measured samples of `set`. Time: O(n log n), space O(n).
    ///
    /// ```
    /// use worksheet::stats::{Class, Outliers, SampleSet};
    /// use worksheet::units::Nanos;
    ///
    /// let us = |v: &[i64]| v.iter().map(|&x| Nanos::new(x * 1_000)).collect::<Vec<_>>();
    /// let set = SampleSet::from_runs(&us(&[900]), &us(&[100, 101, 99, 100, 250, 100])).unwrap();
    /// let o = Outliers::of(&set).unwrap();
    /// let listed: Vec<_> = o.outliers().map(|c| (c.index, c.class)).collect();
    /// assert_eq!(listed, vec![(5, Class::HighSevere)]); // index 5 of the raw record
    /// ```
    ///
    /// # Errors
    /// [`NoMeasuredSamples`] when the set has no completed measured run.
    pub fn of(set: &SampleSet) -> Result<Outliers, NoMeasuredSamples> {
        let sorted = Sorted::of_measured(set)?;
        let fences = TukeyFences::of(&sorted);
        let mut counts = ClassCounts::default();
        let classified = set
            .measured()
            .map(|(index, value)| {
                let class = fences.classify(value);
                counts.add(class);
                Classified {
                    index,
                    value,
                    class,
                }
            })
            .collect();
        Ok(Outliers {
            fences,
            classified,
            counts,
        })
    }

    /// The fences used.
    pub fn fences(&self) -> &TukeyFences {
        &self.fences
    }

    /// Every measured sample with its class, in run order.
    pub fn all(&self) -> &[Classified] {
        &self.classified
    }

    /// Only the outliers (any class but [`Class::NotAnOutlier`]), in run order.
    pub fn outliers(&self) -> impl Iterator<Item = &Classified> + '_ {
        self.classified.iter().filter(|c| c.class.is_outlier())
    }

    /// How many samples fall in each class.
    pub fn counts(&self) -> ClassCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `outliers()` adds the four outlier classes, and only those.
    #[test]
    fn outliers_count_the_four_outlier_classes() {
        let counts = ClassCounts {
            low_severe: 2,
            low_mild: 3,
            not_outliers: 100,
            high_mild: 5,
            high_severe: 7,
        };
        assert_eq!(counts.outliers(), 17);
        let total: usize = Class::ALL.iter().map(|&c| counts.get(c)).sum();
        assert_eq!(total, 117);
    }

    /// A fence prints in the unit a value of its size would: each power of a thousand.
    #[test]
    fn fences_print_in_the_natural_unit() {
        let shown = |half_ns: i128| Fence { half_ns }.to_string();
        assert_eq!(shown(15), "7.5 ns");
        assert_eq!(shown(25_000), "12.5 us");
        assert_eq!(shown(3_000_001), "1.5000005 ms");
        assert_eq!(shown(5_000_000_000), "2.5 s");
        assert_eq!(shown(-80_000), "-40 us");
    }

    /// The codes are public interface (JSON, text): each class has its own, as documented.
    #[test]
    fn every_class_has_its_documented_code() {
        let codes: Vec<String> = Class::ALL.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            codes,
            [
                "low-severe",
                "low-mild",
                "not-an-outlier",
                "high-mild",
                "high-severe"
            ]
        );
    }
    use proptest::prelude::*;

    fn ns(v: &[i64]) -> Vec<Nanos> {
        v.iter().copied().map(Nanos::new).collect()
    }

    fn fences(v: &[i64]) -> TukeyFences {
        TukeyFences::of(&Sorted::new(ns(v)).unwrap())
    }

    #[test]
    fn one_to_ten_fences_in_half_nanoseconds() {
        let f = fences(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!((f.q1(), f.q3()), (Nanos::new(3), Nanos::new(8)));
        assert_eq!(f.low_severe().half_nanos(), -24);
        assert_eq!(f.low_mild().half_nanos(), -9);
        assert_eq!(f.high_mild().half_nanos(), 31);
        assert_eq!(f.high_severe().half_nanos(), 46);
        assert_eq!(f.low_mild().to_string(), "-4.5 ns");
        assert_eq!(f.high_severe().as_nanos(), Some(Nanos::new(23)));
        assert_eq!(f.high_mild().as_nanos(), None);
    }

    #[test]
    fn values_on_a_fence_are_on_the_inner_side() {
        // Q1 = 10, Q3 = 20, IQR = 10: fences −20, −5, 35, 50.
        let f = TukeyFences::from_quartiles(Nanos::new(10), Nanos::new(20));
        let c = |v| f.classify(Nanos::new(v));
        assert_eq!(c(-21), Class::LowSevere);
        assert_eq!(c(-20), Class::LowMild);
        assert_eq!(c(-6), Class::LowMild);
        assert_eq!(c(-5), Class::NotAnOutlier);
        assert_eq!(c(35), Class::NotAnOutlier);
        assert_eq!(c(36), Class::HighMild);
        assert_eq!(c(50), Class::HighMild);
        assert_eq!(c(51), Class::HighSevere);
    }

    #[test]
    fn a_constant_set_flags_any_other_value() {
        let f = fences(&[7, 7, 7, 7]);
        assert_eq!(f.classify(Nanos::new(7)), Class::NotAnOutlier);
        assert_eq!(f.classify(Nanos::new(8)), Class::HighSevere);
        assert_eq!(f.classify(Nanos::new(6)), Class::LowSevere);
    }

    #[test]
    fn fences_display_exactly_in_natural_units() {
        let f = |half_ns| Fence { half_ns }.to_string();
        assert_eq!(f(25_001), "12.5005 us");
        assert_eq!(f(25_000), "12.5 us");
        assert_eq!(f(15), "7.5 ns");
        assert_eq!(f(0), "0 ns");
        assert_eq!(f(-80_000), "-40 us");
        assert_eq!(f(3_000_000_001), "1.5000000005 s");
        let past_i64 = Fence {
            half_ns: 2 * i128::from(i64::MAX) + 6,
        };
        assert_eq!(past_i64.as_nanos(), None);
        assert_eq!(past_i64.to_string(), "9223372036.85477581 s");
    }

    #[test]
    fn outliers_are_listed_with_raw_indices_and_kept() {
        use crate::stats::sample::{Outcome, Phase};
        let mut set = SampleSet::new();
        set.record(Nanos::new(5_000), Phase::Warmup, Outcome::Completed)
            .unwrap();
        for v in [100, 0, 101, 99, 100, 250, 100, 180] {
            set.record(Nanos::new(v), Phase::Measured, Outcome::Completed)
                .unwrap();
        }
        set.record(Nanos::new(1), Phase::Measured, Outcome::Failed)
            .unwrap();
        // measured sorted: 0 99 100 100 100 101 180 250; Q1 rank 2 → 99, Q3 rank 6 → 101,
        // IQR 2: fences 93, 96, 104, 107.
        let o = Outliers::of(&set).unwrap();
        assert_eq!(o.all().len(), 8);
        let listed: Vec<_> = o
            .outliers()
            .map(|c| (c.index, c.value.as_i64(), c.class))
            .collect();
        assert_eq!(
            listed,
            vec![
                (2, 0, Class::LowSevere),
                (6, 250, Class::HighSevere),
                (8, 180, Class::HighSevere)
            ]
        );
        assert_eq!(o.counts().outliers(), 3);
        assert_eq!(o.counts().get(Class::NotAnOutlier), 5);
        assert!(Outliers::of(&SampleSet::new()).is_err());
    }

    fn values() -> impl Strategy<Value = Vec<i64>> {
        prop_oneof![
            prop::collection::vec(0i64..1_000, 1..40),
            prop::collection::vec(0..=i64::MAX, 1..40),
        ]
    }

    proptest! {
        #[test]
        fn classification_is_translation_invariant(v in values(), shift in any::<i64>(), probe in 0i64..2_000) {
            // Shift by any amount that keeps every value (and the probe) a duration in i64.
            let lo = *v.iter().min().unwrap();
            let hi = (*v.iter().max().unwrap()).max(probe);
            let shift = i128::from(shift)
                .clamp(-i128::from(lo.min(probe)), i128::from(i64::MAX - hi)) as i64;
            let moved: Vec<i64> = v.iter().map(|x| x + shift).collect();
            let (a, b) = (fences(&v), fences(&moved));
            for (x, y) in v.iter().zip(&moved).chain([(&probe, &(probe + shift))]) {
                prop_assert_eq!(a.classify(Nanos::new(*x)), b.classify(Nanos::new(*y)));
            }
        }

        #[test]
        fn classification_is_monotone_in_value(v in values(), x in 0..=i64::MAX, y in 0..=i64::MAX) {
            let f = fences(&v);
            let (lo, hi) = (x.min(y), x.max(y));
            prop_assert!(f.classify(Nanos::new(lo)) <= f.classify(Nanos::new(hi)));
        }

        #[test]
        fn quartiles_themselves_are_never_outliers(v in values()) {
            let f = fences(&v);
            prop_assert_eq!(f.classify(f.q1()), Class::NotAnOutlier);
            prop_assert_eq!(f.classify(f.q3()), Class::NotAnOutlier);
            prop_assert!(f.low_severe() <= f.low_mild());
            prop_assert!(f.high_mild() <= f.high_severe());
        }

        #[test]
        fn every_measured_sample_is_classified_once(v in values()) {
            let set = SampleSet::from_runs(&[], &ns(&v)).unwrap();
            let o = Outliers::of(&set).unwrap();
            prop_assert_eq!(o.all().len(), v.len());
            let c = o.counts();
            prop_assert_eq!(Class::ALL.iter().map(|&k| c.get(k)).sum::<usize>(), v.len());
        }
    }
}
