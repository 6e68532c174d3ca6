//! Which leading samples are a warm-up: slower than the rest by more than the rest's noise.
//!
//! A fixed percentage ("5 % over the median") sits inside the step-to-step noise of a real
//! training loop: it flags a first step at 1.17× while a later step at 1.21× passes. The rule
//! here judges the leading samples against the *spread* of the samples:
//!
//! - the **reference** is the nearest-rank median `m` of all samples (a minority of slow
//!   leading samples cannot move it), and the **noise** is their MAD (the nearest-rank median
//!   of `|xᵢ − m|`, unscaled; SPEC §9);
//! - the **threshold** is `m + K × MAD` with [`NOISE_MADS`] `= 5` (for normal noise, MAD ≈
//!   0.674 σ, so 5 MAD ≈ 3.4 σ: a step-to-step wobble almost never crosses it), and never
//!   less than `m` plus [`FLOOR_PER_MILLE`] ‰ of `m`, so a perfectly regular sample (MAD 0)
//!   does not make a nanosecond of jitter "slow";
//! - a leading run of samples is a **warm-up** when every sample in it lies above the
//!   threshold **and** above every sample after it: a slowness that recurs later in the
//!   run is noise (or a periodic event), not a warm-up;
//! - a run of half the samples or more is no prefix: the median itself is then slow, and no
//!   warm-up is named.
//!
//! ```text
//! step:   #0      #1   #2   #3   #4   #5   #6   #7
//! host:   560     117  100  99   101  121  100  98      (µs)
//! m = 100, MAD = 1, threshold = max(100 + 5, 100 + 1) = 105
//! #0 is above 105 and above every later step → warm-up
//! #1 is above 105 but below #5 (121)      → noise, not warm-up
//! ```

use crate::units::Nanos;

/// How many MADs above the median a sample must lie to be slow (`K`).
pub const NOISE_MADS: i64 = 5;

/// The smallest threshold above the median, in per mille of the median (1 %).
pub const FLOOR_PER_MILLE: i64 = 10;

/// The warm-up found at the start of a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmupPrefix {
    /// How many leading samples are the warm-up (0: none).
    pub len: usize,
    /// The median of all samples.
    pub median: Nanos,
    /// The MAD of all samples around that median.
    pub mad: Nanos,
    /// `max(median + NOISE_MADS × mad, median + FLOOR_PER_MILLE ‰ of median)`.
    pub threshold: Nanos,
}

/// The warm-up prefix of `values` (in run order) by the rule of this module. Time:
/// O(n log n).
pub fn warmup_prefix(values: &[Nanos]) -> WarmupPrefix {
    let median = nearest_rank_median(values.iter().copied());
    let mad = nearest_rank_median(values.iter().map(|v| {
        Nanos::new(
            (i128::from(v.as_i64()) - i128::from(median.as_i64()))
                .abs()
                .min(i128::from(i64::MAX)) as i64,
        )
    }));
    let m = i128::from(median.as_i64());
    let by_noise = m + i128::from(NOISE_MADS) * i128::from(mad.as_i64());
    let by_floor = m + m * i128::from(FLOOR_PER_MILLE) / 1000;
    let threshold = by_noise.max(by_floor).min(i128::from(i64::MAX));
    let threshold = Nanos::new(threshold as i64);
    let mut len = values.iter().take_while(|&&v| v > threshold).count();
    // Shrink until every sample of the run is slower than every sample after it.
    while len > 0 {
        let slowest_after = values[len..].iter().max();
        let fastest_in = values[..len].iter().min();
        match (fastest_in, slowest_after) {
            (Some(a), Some(b)) if a <= b => len -= 1,
            _ => break,
        }
    }
    if len * 2 >= values.len() {
        len = 0;
    }
    WarmupPrefix {
        len,
        median,
        mad,
        threshold,
    }
}

/// The lower-middle value of `values` (nearest rank, SPEC §9); 0 for none.
fn nearest_rank_median(values: impl Iterator<Item = Nanos>) -> Nanos {
    let mut sorted: Vec<Nanos> = values.collect();
    if sorted.is_empty() {
        return Nanos::new(0);
    }
    sorted.sort_unstable();
    let rank = super::nearest_rank(super::Percentile::MEDIAN, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn us(values: &[i64]) -> Vec<Nanos> {
        values.iter().map(|&v| Nanos::new(v * 1_000)).collect()
    }

    #[test]
    fn the_drawn_series_has_one_warmup_step() {
        let p = warmup_prefix(&us(&[560, 117, 100, 99, 101, 121, 100, 98]));
        assert_eq!(p.len, 1);
        assert_eq!(p.median, Nanos::new(100_000));
        assert_eq!(p.mad, Nanos::new(1_000));
        assert_eq!(p.threshold, Nanos::new(105_000));
    }

    #[test]
    fn a_slow_step_that_recurs_later_is_noise() {
        // A3 of the audit review: step 1 at 1.17× and step 5 at 1.21×.
        let p = warmup_prefix(&us(&[100, 117, 100, 99, 101, 121, 100, 98]));
        assert_eq!(p.len, 0);
    }

    #[test]
    fn a_wobble_inside_the_noise_is_not_slow() {
        // Spread of ±10 µs around 100: MAD 6, threshold 130; a first step at 125 is noise.
        let p = warmup_prefix(&us(&[125, 90, 106, 94, 110, 100, 96, 104, 108, 92]));
        assert_eq!(p.threshold, Nanos::new(100_000 + 5 * 6_000));
        assert_eq!(p.len, 0);
    }

    #[test]
    fn two_cold_steps_then_steady() {
        let p = warmup_prefix(&us(&[900, 300, 100, 101, 99, 100, 102, 100]));
        assert_eq!(p.len, 2);
    }

    #[test]
    fn a_slow_half_is_no_prefix() {
        assert_eq!(warmup_prefix(&us(&[500, 500, 500, 100, 100, 100])).len, 0);
    }

    #[test]
    fn a_regular_series_needs_one_percent() {
        assert_eq!(
            warmup_prefix(&us(&[100, 100, 100, 100, 100])).threshold,
            Nanos::new(101_000)
        );
        assert_eq!(
            warmup_prefix(&[Nanos::new(1_001), Nanos::new(1_000), Nanos::new(1_000)]).len,
            0
        );
    }

    proptest! {
        #[test]
        fn a_warmup_is_slower_than_everything_after_it(values in proptest::collection::vec(0_i64..1_000, 0..20)) {
            let ns: Vec<Nanos> = values.iter().map(|&v| Nanos::new(v)).collect();
            let p = warmup_prefix(&ns);
            prop_assert!(p.len * 2 < ns.len().max(1));
            for a in &ns[..p.len] {
                prop_assert!(*a > p.threshold);
                for b in &ns[p.len..] {
                    prop_assert!(a > b);
                }
            }
        }
    }
}
