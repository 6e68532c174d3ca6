//! The statistics of `worksheet compare`: exact ratios, a seeded bootstrap of the median
//! ratio, and the rule that turns a confidence interval into a verdict.
//!
//! Times stay integer nanoseconds. A ratio is a fraction of two medians ([`Ratio`]) and is
//! compared exactly by cross-multiplication; only the printed percentages are rounded (to
//! 1 ppm, half away from zero). The bootstrap resamples each side with its own stream of a
//! small seeded PRNG (SplitMix64, written here: 10 lines, no dependency for it). Which side
//! gets which stream depends on the samples, never on the argument order, so
//! `compare(A, B)` is exactly the mirror of `compare(B, A)`: every ratio is the reciprocal.

use std::cmp::Ordering;

use crate::units::Nanos;

/// Resamples of the bootstrap.
pub const RESAMPLES: usize = 2000;
/// Resamples left out at each end of the sorted bootstrap ratios: a 95 % percentile interval.
pub const TAIL: usize = RESAMPLES / 40;
/// The fixed seed of the bootstrap: the same inputs give the same interval on every run.
pub const SEED: u64 = 0x5EED_C0DE_2026_0011;
/// Fewest samples per side for a bootstrap; below it, only disjoint ranges decide.
pub const MIN_BOOTSTRAP: usize = 5;
const PPM: i128 = 1_000_000;

/// An exact positive ratio `num / den` of two nanosecond amounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    /// Numerator (the new run's value).
    pub num: i64,
    /// Denominator (the base run's value); never zero.
    pub den: i64,
}

impl Ratio {
    /// `num / den`, or `None` when `den` is not positive or `num` is negative.
    pub fn new(num: i64, den: i64) -> Option<Ratio> {
        (den > 0 && num >= 0).then_some(Ratio { num, den })
    }

    /// The reciprocal, or `None` for zero.
    pub fn recip(self) -> Option<Ratio> {
        Ratio::new(self.den, self.num)
    }

    /// Exact comparison.
    pub fn cmp_exact(self, other: Ratio) -> Ordering {
        (self.num as i128 * other.den as i128).cmp(&(other.num as i128 * self.den as i128))
    }

    /// Compares with `ppm / 1 000 000` exactly.
    pub fn cmp_ppm(self, ppm: i128) -> Ordering {
        (self.num as i128 * PPM).cmp(&(ppm * self.den as i128))
    }

    /// The ratio in parts per million, rounded half away from zero.
    pub fn ppm(self) -> i64 {
        div_round(self.num as i128 * PPM, self.den as i128) as i64
    }

    /// The relative change `ratio − 1` in ppm (`+1 000 000` is twice as long).
    pub fn change_ppm(self) -> i64 {
        self.ppm() - PPM as i64
    }
}

fn div_round(n: i128, d: i128) -> i128 {
    let q = n / d;
    let r = n % d;
    if 2 * r.abs() >= d.abs() {
        q + n.signum() * d.signum()
    } else {
        q
    }
}

/// `x / y` of two ratios as a ratio of i128 parts, in ppm, rounded.
fn quotient_ppm(x: Ratio, y: Ratio) -> i128 {
    div_round(
        x.num as i128 * y.den as i128 * PPM,
        x.den as i128 * y.num as i128,
    )
}

/// Formats a ppm change as a signed percentage with one decimal: `+100.0 %`, `-3.2 %`.
pub fn percent(ppm: i64) -> String {
    let tenths = div_round(ppm as i128, 1000);
    let sign = if tenths < 0 { "-" } else { "+" };
    let a = tenths.unsigned_abs();
    format!("{sign}{}.{} %", a / 10, a % 10)
}

/// Formats an unsigned ppm amount as a percentage with one decimal: `5.0 %`.
pub fn percent_unsigned(ppm: i64) -> String {
    let tenths = div_round(ppm as i128, 1000).unsigned_abs();
    format!("{}.{} %", tenths / 10, tenths % 10)
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, well-mixed 64-bit generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index below `n` by multiply-shift (bias below `n / 2^64`).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// FNV-1a over the values: orders two sample sets independently of argument order.
fn fingerprint(sorted: &[Nanos]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for v in sorted {
        for b in v.as_i64().to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01B3);
        }
    }
    h
}

/// The nearest-rank (lower) median of sorted values.
pub fn median(sorted: &[Nanos]) -> Nanos {
    sorted[(sorted.len() - 1) / 2]
}

/// The median of one resample of `sorted`: draws `n` indices and selects the lower middle
/// one (indices into sorted data order like the values themselves).
fn resample_median(sorted: &[Nanos], rng: &mut SplitMix64, scratch: &mut Vec<usize>) -> Nanos {
    let n = sorted.len();
    scratch.clear();
    scratch.extend((0..n).map(|_| rng.below(n)));
    let mid = (n - 1) / 2;
    let (_, m, _) = scratch.select_nth_unstable(mid);
    sorted[*m]
}

/// A 95 % bootstrap interval of `median(new) / median(base)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Lower end.
    pub low: Ratio,
    /// Upper end.
    pub high: Ratio,
}

/// Bootstraps the median ratio `new / base` of two sorted sample sets (each with at least
/// one value and a positive median in every resample, else `None`).
pub fn bootstrap(base: &[Nanos], new: &[Nanos]) -> Option<Interval> {
    let (fb, fnew) = (fingerprint(base), fingerprint(new));
    // The side that sorts first takes stream 0: independent of argument order.
    let base_first = (fb, base).cmp(&(fnew, new)) != Ordering::Greater;
    let mut rng_base = SplitMix64(SEED ^ if base_first { 0 } else { 0x9E37 });
    let mut rng_new = SplitMix64(SEED ^ if base_first { 0x9E37 } else { 0 });
    let mut scratch = Vec::new();
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let b = resample_median(base, &mut rng_base, &mut scratch);
        let n = resample_median(new, &mut rng_new, &mut scratch);
        ratios.push(Ratio::new(n.as_i64(), b.as_i64())?);
    }
    ratios.sort_by(|a, b| a.cmp_exact(*b));
    Some(Interval {
        low: ratios[TAIL],
        high: ratios[RESAMPLES - 1 - TAIL],
    })
}

/// Bootstraps the median ratio of two paired runs (`base[i]` and `new[i]` are the same
/// instance, such as the i-th launch of one kernel): each resample draws instance indices
/// once and takes both medians over them. One stream serves both sides, so swapping them
/// gives the reciprocal interval exactly.
pub fn bootstrap_paired(base: &[Nanos], new: &[Nanos]) -> Option<Interval> {
    let n = base.len();
    if n == 0 || new.len() != n {
        return None;
    }
    let mut rng = SplitMix64(SEED);
    let (mut xb, mut xn) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut ratios = Vec::with_capacity(RESAMPLES);
    let mid = (n - 1) / 2;
    for _ in 0..RESAMPLES {
        xb.clear();
        xn.clear();
        for _ in 0..n {
            let i = rng.below(n);
            xb.push(base[i]);
            xn.push(new[i]);
        }
        let b = *xb.select_nth_unstable(mid).1;
        let m = *xn.select_nth_unstable(mid).1;
        ratios.push(Ratio::new(m.as_i64(), b.as_i64())?);
    }
    ratios.sort_by(|a, b| a.cmp_exact(*b));
    Some(Interval {
        low: ratios[TAIL],
        high: ratios[RESAMPLES - 1 - TAIL],
    })
}

/// What decided a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Within the threshold both ways, with noise below it.
    Same,
    /// Shorter by more than the threshold, beyond the noise.
    Faster,
    /// Longer by more than the threshold, beyond the noise.
    Slower,
    /// The noise exceeds the threshold.
    NoisyAboveThreshold,
    /// The interval reaches past the threshold: it cannot be told from a real change.
    StraddlesThreshold,
}

/// The noise of an interval around `r`: `max(high / r, r / low) − 1` in ppm (symmetric under
/// swapping the runs).
pub fn noise_ppm(r: Ratio, ci: Interval) -> Option<i64> {
    if r.num == 0 || ci.low.num == 0 {
        return None;
    }
    let up = quotient_ppm(ci.high, r);
    let down = quotient_ppm(r, ci.low);
    Some((up.max(down) - PPM) as i64)
}

/// The verdict of an interval `ci` around ratio `r` for a threshold of `threshold_ppm`:
/// slower when the whole interval is at or above `1 + t`, faster when it is at or below
/// `1 / (1 + t)` (the mirror), same when it lies strictly between them and the noise is at
/// most `t`; otherwise ambiguous.
pub fn decide(r: Ratio, ci: Interval, threshold_ppm: i64) -> Call {
    let t = threshold_ppm as i128;
    let up = PPM + t; // 1 + t, in ppm
                      // low ≥ 1 + t
    if ci.low.cmp_ppm(up) != Ordering::Less {
        return Call::Slower;
    }
    // high ≤ 1 / (1 + t)  ⇔  high · (1 + t) ≤ 1
    let high_scaled = ci.high.num as i128 * up;
    if high_scaled <= PPM * ci.high.den as i128 {
        return Call::Faster;
    }
    let noisy = match noise_exceeds(r, ci, up) {
        Some(n) => n,
        None => return Call::NoisyAboveThreshold,
    };
    if noisy {
        return Call::NoisyAboveThreshold;
    }
    let low_scaled = ci.low.num as i128 * up;
    if ci.high.cmp_ppm(up) == Ordering::Less && low_scaled > PPM * ci.low.den as i128 {
        Call::Same
    } else {
        Call::StraddlesThreshold
    }
}

/// Whether `max(high / r, r / low) > up / 10^6`, exactly; `None` when `r` or `low` is zero.
fn noise_exceeds(r: Ratio, ci: Interval, up: i128) -> Option<bool> {
    if r.num == 0 || ci.low.num == 0 {
        return None;
    }
    // high / r > up  ⇔  high.num · r.den · 10^6 > up · high.den · r.num
    let a = ci.high.num as i128 * r.den as i128 * PPM > up * ci.high.den as i128 * r.num as i128;
    let b = r.num as i128 * ci.low.den as i128 * PPM > up * r.den as i128 * ci.low.num as i128;
    Some(a || b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(v: &[i64]) -> Vec<Nanos> {
        let mut v: Vec<Nanos> = v.iter().map(|&x| Nanos::new(x)).collect();
        v.sort();
        v
    }

    #[test]
    fn percentages_round_half_away_from_zero() {
        assert_eq!(percent(1_000_000), "+100.0 %");
        assert_eq!(percent(-31_950), "-3.2 %");
        assert_eq!(percent(49), "+0.0 %");
        assert_eq!(percent_unsigned(50_000), "5.0 %");
        assert_eq!(Ratio::new(3, 2).unwrap().change_ppm(), 500_000);
        assert_eq!(Ratio::new(2, 3).unwrap().ppm(), 666_667);
    }

    #[test]
    fn bootstrap_is_seeded_and_mirrors() {
        let a = ns(&[100, 101, 99, 100, 102, 98, 100, 101]);
        let b = ns(&[200, 202, 198, 201, 199, 200, 203, 197]);
        let ab = bootstrap(&a, &b).unwrap();
        assert_eq!(ab, bootstrap(&a, &b).unwrap());
        let ba = bootstrap(&b, &a).unwrap();
        assert_eq!(ab.low.recip().unwrap(), ba.high);
        assert_eq!(ab.high.recip().unwrap(), ba.low);
        // every resample is about 2x: the interval lies within [197/102, 203/98]
        assert!(ab.low.cmp_exact(Ratio::new(197, 102).unwrap()) != Ordering::Less);
        assert!(ab.high.cmp_exact(Ratio::new(203, 98).unwrap()) != Ordering::Greater);
    }

    #[test]
    fn decide_by_the_interval() {
        let r = |n, d| Ratio::new(n, d).unwrap();
        let ci = |l: Ratio, h: Ratio| Interval { low: l, high: h };
        let t = 50_000; // 5 %
        assert_eq!(decide(r(2, 1), ci(r(19, 10), r(21, 10)), t), Call::Slower);
        assert_eq!(decide(r(1, 2), ci(r(10, 21), r(10, 19)), t), Call::Faster);
        assert_eq!(decide(r(1, 1), ci(r(99, 100), r(101, 100)), t), Call::Same);
        // a 1 % noise around a 4 % change reaches past 5 %
        assert_eq!(
            decide(r(104, 100), ci(r(103, 100), r(106, 100)), t),
            Call::StraddlesThreshold
        );
        // ±20 % noise around no change
        assert_eq!(
            decide(r(1, 1), ci(r(80, 100), r(120, 100)), t),
            Call::NoisyAboveThreshold
        );
        // exactly at 1 + t counts as slower; exactly 1 / (1 + t) as faster
        assert_eq!(
            decide(r(105, 100), ci(r(105, 100), r(105, 100)), t),
            Call::Slower
        );
        assert_eq!(
            decide(r(100, 105), ci(r(100, 105), r(100, 105)), t),
            Call::Faster
        );
    }
}
