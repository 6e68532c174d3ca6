//! A time axis for one clock: a "nice" tick step (1, 2 or 5 × 10ᵏ ns), the unit its labels
//! are written in, and a base when absolute labels would be unreadable.
//!
//! Labels are exact decimals of the unit ([`Nanos::format_in`]). When the view lies far from
//! the clock's origin (more than 1 000 steps from it: a monotonic clock read 8 000 s after
//! boot, a 50 ms view), labels are
//! written relative to a base on the tick grid and the caption names the base:
//! `ms after 8123.4 s`. Otherwise they are the clock's own values (`7000 7020 … us`).

use crate::units::{Nanos, Unit};

/// A computed axis.
///
/// Invariants: `step > 0`; every tick lies in the view and on the grid `base + k·step`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Unit of the labels.
    pub unit: Unit,
    /// Tick step (ns).
    pub step: i64,
    /// Labels show `t − base` (0 for absolute labels).
    pub base: i64,
    /// Tick positions (ns on the clock).
    pub ticks: Vec<i64>,
}

impl Axis {
    /// An axis for `view` (ns) with at most about `max_ticks` ticks. Time: O(max_ticks).
    pub fn new(view: (i64, i64), max_ticks: usize) -> Axis {
        let (a, b) = (view.0.min(view.1), view.0.max(view.1));
        let span = i128::from(b) - i128::from(a);
        let want = (span / i128::try_from(max_ticks.max(1)).unwrap_or(1)).max(1);
        let mut step: i128 = 1;
        'search: for exp in 0..19 {
            let pow = 10i128.pow(exp);
            for m in [1, 2, 5] {
                if m * pow >= want {
                    step = m * pow;
                    break 'search;
                }
            }
        }
        let step = i64::try_from(step).unwrap_or(i64::MAX);
        let unit = if step >= 1_000_000_000 {
            Unit::Seconds
        } else if step >= 1_000_000 {
            Unit::Millis
        } else if step >= 1_000 {
            Unit::Micros
        } else {
            Unit::Nanos
        };
        let far = i128::from(a.unsigned_abs().max(b.unsigned_abs())) / i128::from(step) >= 1_000;
        // Grid arithmetic in i128: a grid point below i64::MIN is no tick, but a valid base.
        let (a128, b128, step128) = (i128::from(a), i128::from(b), i128::from(step));
        let floor = a128.div_euclid(step128) * step128;
        let clamp = |v: i128| i64::try_from(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)));
        let base = if far { clamp(floor).unwrap_or(a) } else { 0 };
        let mut ticks = Vec::new();
        let mut t = if floor < a128 { floor + step128 } else { floor };
        while t <= b128 && ticks.len() <= max_ticks * 3 + 3 {
            ticks.push(i64::try_from(t).expect("inside [a, b]"));
            t += step128;
        }
        Axis {
            unit,
            step,
            base,
            ticks,
        }
    }

    /// The label of tick `at` (no unit): `20`, `7040`, `0.5`.
    pub fn label(&self, at: i64) -> String {
        Nanos::new(at.saturating_sub(self.base)).format_in(self.unit)
    }

    /// What the numbers are: `us`, or `ms after 8123.4 s`.
    pub fn unit_caption(&self) -> String {
        if self.base == 0 {
            self.unit.symbol().to_owned()
        } else {
            format!("{} after {}", self.unit.symbol(), Nanos::new(self.base))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_view_near_its_origin_keeps_absolute_labels() {
        // 6997.5 us … 7102.5 us, about 8 ticks → step 20 us
        let a = Axis::new((6_997_500, 7_102_500), 8);
        assert_eq!(a.step, 20_000);
        assert_eq!(a.unit_caption(), "us");
        let labels: Vec<String> = a.ticks.iter().map(|&t| a.label(t)).collect();
        assert_eq!(labels, ["7000", "7020", "7040", "7060", "7080", "7100"]);
    }

    #[test]
    fn a_view_far_from_the_origin_is_labelled_from_a_base() {
        // a 50 ms view 8 123.4 s after boot
        let start = 8_123_400_000_000i64 + 123;
        let a = Axis::new((start, start + 50_000_000), 6);
        assert_eq!(a.step, 10_000_000);
        assert_eq!(a.unit_caption(), "ms after 8123.4 s");
        assert_eq!(a.label(a.ticks[0]), "10");
    }

    #[test]
    fn a_zero_length_view_still_has_a_step() {
        let a = Axis::new((5, 5), 6);
        assert_eq!(a.step, 1);
        assert_eq!(a.ticks, vec![5]);
    }
}
