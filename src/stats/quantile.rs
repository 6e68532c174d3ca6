//! Quantiles by the **nearest-rank** method: the one quantile method of `worksheet`.
//!
//! For `n` sorted values and a percentile `p` (0 ≤ p ≤ 100), the nearest rank is
//!
//! ```text
//! rank = max(1, ceil(p / 100 × n))      (1-based; the quantile is sorted[rank − 1])
//! ```
//!
//! It always returns a value that was observed — never an interpolation between two —
//! so it is exact in integer nanoseconds and needs no rounding rule. The median is the
//! nearest-rank P50: for an even count it is the **lower** of the two middle values.
//!
//! Worked example, the ten values `1 2 3 4 5 6 7 8 9 10` (ns):
//!
//! ```text
//! p      p/100 × n   rank   quantile
//! P0       0          1        1      (clamped to the first rank: the minimum)
//! P25      2.5        3        3
//! P50      5          5        5      (the median; not 5.5)
//! P75      7.5        8        8
//! P90      9          9        9
//! P100    10         10       10      (the maximum)
//! ```
//!
//! The percentile is held in per-mille ([`Percentile::from_per_mille`]) so that `P99.9`
//! is expressible; the arithmetic is integer (`ceil(pm × n / 1000)` in `u128`).

use std::fmt;

use serde::{Serialize, Serializer};

use super::sorted::Sorted;
use crate::units::Nanos;

/// A percentile, `P0` to `P100`, in steps of 0.1.
///
/// Invariants: `per_mille() <= 1000`. The field is private so no percentile breaks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Percentile {
    per_mille: u16,
}

impl Percentile {
    /// `P0`: the minimum (rank 1).
    pub const MIN: Percentile = Percentile { per_mille: 0 };
    /// `P25`: the first quartile.
    pub const P25: Percentile = Percentile { per_mille: 250 };
    /// `P50`: the median (lower middle value for an even count).
    pub const MEDIAN: Percentile = Percentile { per_mille: 500 };
    /// `P75`: the third quartile.
    pub const P75: Percentile = Percentile { per_mille: 750 };
    /// `P90`.
    pub const P90: Percentile = Percentile { per_mille: 900 };
    /// `P99`.
    pub const P99: Percentile = Percentile { per_mille: 990 };
    /// `P100`: the maximum.
    pub const MAX: Percentile = Percentile { per_mille: 1000 };

    /// `P<percent>`; `None` above 100.
    pub const fn from_percent(percent: u8) -> Option<Percentile> {
        if percent <= 100 {
            Some(Percentile {
                per_mille: percent as u16 * 10,
            })
        } else {
            None
        }
    }

    /// The percentile `per_mille / 10` (`999` is `P99.9`); `None` above 1000.
    pub const fn from_per_mille(per_mille: u16) -> Option<Percentile> {
        if per_mille <= 1000 {
            Some(Percentile { per_mille })
        } else {
            None
        }
    }

    /// The percentile in tenths of a percent (`P90` is `900`).
    pub const fn per_mille(self) -> u16 {
        self.per_mille
    }
}

impl fmt::Display for Percentile {
    /// `P90`, `P99.9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, tenth) = (self.per_mille / 10, self.per_mille % 10);
        if tenth == 0 {
            write!(f, "P{whole}")
        } else {
            write!(f, "P{whole}.{tenth}")
        }
    }
}

impl Serialize for Percentile {
    /// As its name, `"P90"`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The 1-based nearest rank of percentile `p` among `n` values:
/// `max(1, ceil(p/100 × n))`, so always in `1..=n` for `n >= 1`.
///
/// ```
/// use worksheet::stats::{nearest_rank, Percentile};
/// assert_eq!(nearest_rank(Percentile::MEDIAN, 10), 5);
/// assert_eq!(nearest_rank(Percentile::P90, 10), 9);
/// assert_eq!(nearest_rank(Percentile::P25, 10), 3); // ceil(2.5)
/// assert_eq!(nearest_rank(Percentile::MIN, 10), 1); // clamped
/// assert_eq!(nearest_rank(Percentile::MEDIAN, 1), 1);
/// ```
///
/// Time: O(1). Returns 0 only for `n == 0`.
pub fn nearest_rank(p: Percentile, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let exact = (u128::from(p.per_mille) * n as u128).div_ceil(1000);
    // `exact <= n` because `per_mille <= 1000`, so the cast back cannot truncate.
    (exact as usize).max(1)
}

impl Sorted {
    /// The nearest-rank quantile: `sorted[max(1, ceil(p/100 × n)) − 1]` (see the
    /// [module docs](self) for the worked example). Always one of the values.
    ///
    /// ```
    /// use worksheet::stats::{Percentile, Sorted};
    /// use worksheet::units::Nanos;
    ///
    /// let s = Sorted::new((1..=10).map(Nanos::new).collect()).unwrap();
    /// assert_eq!(s.quantile(Percentile::MEDIAN), Nanos::new(5));
    /// assert_eq!(s.quantile(Percentile::P90), Nanos::new(9));
    /// ```
    ///
    /// Time: O(1).
    pub fn quantile(&self, p: Percentile) -> Nanos {
        self.values()[nearest_rank(p, self.len()) - 1]
    }

    /// The nearest-rank median ([`Percentile::MEDIAN`]): the lower middle value for an even
    /// count. Time: O(1).
    pub fn median(&self) -> Nanos {
        self.quantile(Percentile::MEDIAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `per_mille` reads back what the percentile was made from.
    #[test]
    fn per_mille_is_the_percentile_in_tenths_of_a_percent() {
        assert_eq!(Percentile::MAX.per_mille(), 1000);
        assert_eq!(Percentile::P90.per_mille(), 900);
        assert_eq!(
            Percentile::from_per_mille(125).map(|p| p.per_mille()),
            Some(125)
        );
    }
    use proptest::prelude::*;

    fn sorted(values: &[i64]) -> Sorted {
        Sorted::new(values.iter().copied().map(Nanos::new).collect()).unwrap()
    }

    #[test]
    fn one_to_ten_by_nearest_rank() {
        let s = sorted(&[10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
        let q = |pm| s.quantile(Percentile::from_per_mille(pm).unwrap()).as_i64();
        assert_eq!(q(0), 1);
        assert_eq!(q(250), 3);
        assert_eq!(q(500), 5);
        assert_eq!(q(750), 8);
        assert_eq!(q(900), 9);
        assert_eq!(q(901), 10); // ceil(9.01)
        assert_eq!(q(1000), 10);
        assert_eq!(s.median(), Nanos::new(5));
    }

    #[test]
    fn even_count_median_is_the_lower_middle_value() {
        assert_eq!(sorted(&[100, 200]).median(), Nanos::new(100));
        assert_eq!(sorted(&[1, 2, 3, 4]).median(), Nanos::new(2));
        assert_eq!(sorted(&[1, 2, 3]).median(), Nanos::new(2));
        assert_eq!(sorted(&[42]).quantile(Percentile::P90), Nanos::new(42));
    }

    #[test]
    fn percentiles_display_and_bound() {
        assert_eq!(Percentile::P90.to_string(), "P90");
        assert_eq!(
            Percentile::from_per_mille(999).unwrap().to_string(),
            "P99.9"
        );
        assert_eq!(Percentile::from_percent(101), None);
        assert_eq!(Percentile::from_per_mille(1001), None);
        assert_eq!(Percentile::from_percent(90), Some(Percentile::P90));
    }

    fn values() -> impl Strategy<Value = Vec<i64>> {
        prop::collection::vec(0..=i64::MAX, 1..60)
    }

    proptest! {
        #[test]
        fn quantiles_are_monotone_in_p(v in values(), a in 0u16..=1000, b in 0u16..=1000) {
            let s = sorted(&v);
            let (lo, hi) = (a.min(b), a.max(b));
            let q = |pm| s.quantile(Percentile::from_per_mille(pm).unwrap());
            prop_assert!(q(lo) <= q(hi));
        }

        #[test]
        fn a_quantile_is_always_a_member(v in values(), pm in 0u16..=1000) {
            let q = sorted(&v).quantile(Percentile::from_per_mille(pm).unwrap());
            prop_assert!(v.contains(&q.as_i64()));
        }

        #[test]
        fn extreme_percentiles_are_min_and_max(v in values()) {
            let s = sorted(&v);
            prop_assert_eq!(s.quantile(Percentile::MIN).as_i64(), *v.iter().min().unwrap());
            prop_assert_eq!(s.quantile(Percentile::MAX).as_i64(), *v.iter().max().unwrap());
        }

        #[test]
        fn nearest_rank_covers_at_least_p_percent(n in 1usize..10_000, pm in 0u16..=1000) {
            // The defining property: rank is the smallest r >= 1 with r/n >= p/100.
            let r = nearest_rank(Percentile::from_per_mille(pm).unwrap(), n);
            prop_assert!((1..=n).contains(&r));
            prop_assert!(r as u128 * 1000 >= u128::from(pm) * n as u128);
            prop_assert!(r == 1 || (r as u128 - 1) * 1000 < u128::from(pm) * n as u128);
        }
    }
}
