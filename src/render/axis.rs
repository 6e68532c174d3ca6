//! A time axis for one clock: a "nice" tick step (1, 2 or 5 × 10ᵏ ns), the unit its labels
//! are written in, and a base when absolute labels would be unreadable.
//!
//! A clock far from its zero has one origin ([`clock_origin`]), the same for every view of
//! it: the full picture, a part, a `--window` zoom and the report's timeline all count from
//! it, so the numbers read off one axis select the same time in `--window +A..+B`.
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
    /// The clock's origin ([`clock_origin`]; 0 for a clock read near its zero).
    pub origin: i64,
}

/// The origin a clock's views count from: 0 when its readings are near the clock's zero
/// (a fixture's `7 ms`), else the start of its items rounded down to the largest power of
/// ten not above their span (`1716423322.4 s` for a 694 ms trace), so that the same clock
/// always gets the same origin whatever the view.
pub fn clock_origin(extent: (i64, i64)) -> i64 {
    let (a, b) = (extent.0.min(extent.1), extent.0.max(extent.1));
    let span = (i128::from(b) - i128::from(a)).max(1);
    let mut p: i128 = 1;
    while p * 10 <= span {
        p *= 10;
    }
    let far = i128::from(a.unsigned_abs().max(b.unsigned_abs())) / p >= 1_000;
    if !far {
        return 0;
    }
    i64::try_from(i128::from(a).div_euclid(p) * p).unwrap_or(a)
}

impl Axis {
    /// An axis for `view` (ns) with at most about `max_ticks` ticks, on a clock whose
    /// origin is 0. Time: O(max_ticks).
    pub fn new(view: (i64, i64), max_ticks: usize) -> Axis {
        Axis::with_origin(view, max_ticks, 0)
    }

    /// An axis for `view` (ns) on a clock with `origin` ([`clock_origin`]): ticks lie on the
    /// grid `origin + k·step` and labels count from the origin, or, for a view more than
    /// 1 000 steps from it, from a grid point near the view (named in the caption).
    pub fn with_origin(view: (i64, i64), max_ticks: usize, origin: i64) -> Axis {
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
        let (rel_a, rel_b) = (
            i128::from(a) - i128::from(origin),
            i128::from(b) - i128::from(origin),
        );
        let far = rel_a.abs().max(rel_b.abs()) / i128::from(step) >= 1_000;
        // Grid arithmetic in i128: a grid point below i64::MIN is no tick, but a valid base.
        let step128 = i128::from(step);
        let floor = rel_a.div_euclid(step128) * step128;
        let clamp = |v: i128| i64::try_from(v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)));
        let base = if far {
            clamp(i128::from(origin) + floor).unwrap_or(a)
        } else {
            origin
        };
        let mut ticks = Vec::new();
        let mut t = if floor < rel_a {
            floor + step128
        } else {
            floor
        };
        while t <= rel_b && ticks.len() <= max_ticks * 3 + 3 {
            ticks.push(i64::try_from(i128::from(origin) + t).expect("inside [a, b]"));
            t += step128;
        }
        Axis {
            unit,
            step,
            base,
            ticks,
            origin,
        }
    }

    /// The label of tick `at` (no unit): `20`, `7040`, `0.5`.
    pub fn label(&self, at: i64) -> String {
        Nanos::new(at.saturating_sub(self.base)).format_in(self.unit)
    }

    /// What the numbers are: `us`, `ms after 8123.4 s` (the origin, or a base on a clock
    /// read near its zero), or `us after 8123.4 s + 100 ms` (a base that far from the origin).
    pub fn unit_caption(&self) -> String {
        let unit = self.unit.symbol();
        if self.base == 0 {
            unit.to_owned()
        } else if self.origin == 0 || self.base == self.origin {
            format!("{unit} after {}", Nanos::new(self.base))
        } else {
            format!(
                "{unit} after {} + {}",
                Nanos::new(self.origin),
                Nanos::new(self.base.saturating_sub(self.origin))
            )
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
    fn every_view_of_a_clock_far_from_its_zero_counts_from_one_origin() {
        // a 694.45 ms trace starting 1716423322.412 s after the epoch
        let start = 1_716_423_322_412_000_000i64;
        let origin = clock_origin((start, start + 694_450_000));
        assert_eq!(origin, 1_716_423_322_400_000_000);
        let full = Axis::with_origin((start, start + 694_450_000), 8, origin);
        assert_eq!(full.unit_caption(), "ms after 1716423322.4 s");
        assert_eq!(full.step, 100_000_000);
        assert_eq!(full.label(full.ticks[0]), "100");
        // the zoom to 100..110 ms on that axis labels the same numbers
        let zoom = Axis::with_origin((origin + 100_000_000, origin + 110_000_000), 6, origin);
        assert_eq!(zoom.unit_caption(), "ms after 1716423322.4 s");
        let labels: Vec<String> = zoom.ticks.iter().map(|&t| zoom.label(t)).collect();
        assert_eq!(labels, ["100", "102", "104", "106", "108", "110"]);
        // a 2 us view 100 ms in is labelled from a base the caption places from the origin
        let narrow = Axis::with_origin((origin + 100_000_000, origin + 100_002_000), 4, origin);
        assert_eq!(narrow.unit_caption(), "ns after 1716423322.4 s + 100 ms");
        assert_eq!(narrow.label(narrow.ticks[1]), "500");
        // a clock read near its zero has none
        assert_eq!(clock_origin((6_997_500, 7_102_500)), 0);
    }

    #[test]
    fn a_zero_length_view_still_has_a_step() {
        let a = Axis::new((5, 5), 6);
        assert_eq!(a.step, 1);
        assert_eq!(a.ticks, vec![5]);
    }
}
