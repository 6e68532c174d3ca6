//! Clock relations from collectives (SPEC §10, "Evidence from collectives").
//!
//! A collective cannot finish on any participant before every participant has started it.
//! For the k-th instance of one collective (same process group, same name, k-th in start
//! order) on ranks a and b, in true time:
//!
//! ```text
//!   rank a        [====== k ======)              true(start_b) ≤ true(end_a)
//!   rank b              [==== k ====)            true(start_a) ≤ true(end_b)
//! ```
//!
//! A relation's offset is the reading offset of SPEC §10's definition: readings `t_a`, `t_b`
//! name one instant when `t_b − t_a = offset(b) − offset(a) =: δ`, so `true(t_b) = t_b − δ` on
//! `a`'s scale. Then `start_b − δ ≤ end_a` and `start_a ≤ end_b − δ`:
//!
//! ```text
//!   δ = offset(b) − offset(a) ∈ [start_b − end_a, end_b − start_a]
//! ```
//!
//! (SPEC §10 writes this rule as `off_b − off_a ∈ [start_a − end_b, end_a − start_b]` with
//! `off` the correction *added* to a reading, `true = t + off`: that is `−δ`, the same bound
//! mirrored. A shift of +250 µs on rank b's clock must move `δ` by +250 µs, which
//! `tests/ranks.rs` checks on the real H200 trace.)
//!
//! The bound is the intersection over all k. Each side remembers the instance that gave it.
//! An empty intersection is conflicting evidence: no relation, and the two instances that
//! conflict are named. The same bound per window of consecutive instances shows drift: the
//! windows of a drifting clock pair move, or conflict, while one overall bound would hide it.
//!
//! Matching by order is only sound when both ranks' traces hold the same instances: the
//! caller states how many were matched and how many were left unmatched on each side.

use std::collections::BTreeMap;

use super::Bound;
use crate::units::Nanos;

/// One instance of a collective on one rank, on that rank's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// Process group name (`"0"`).
    pub group: String,
    /// Collective name (`allreduce`).
    pub name: String,
    /// Kernel start, on the rank's clock.
    pub start: Nanos,
    /// Kernel end (exclusive), on the rank's clock.
    pub end: Nanos,
}

/// Which matched instance gave one side of a bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// `group/name#k` (k from 0 in start order).
    pub label: String,
    /// The value this instance gives for that side.
    pub value: Nanos,
}

/// The bound that one run of matched instances gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The intersection `[lo, hi]` on `off_b − off_a`; empty when the instances conflict.
    pub bound: Bound,
    /// How many matched instances gave it.
    pub count: usize,
    /// The instance that gave the lower side.
    pub lo_from: Witness,
    /// The instance that gave the upper side.
    pub hi_from: Witness,
}

/// A pair of ranks' collectives matched and turned into a bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairEvidence {
    /// Over all matched instances; `None` when none matched.
    pub overall: Option<Evidence>,
    /// Per window of consecutive matched instances (in rank a's start order).
    pub windows: Vec<Evidence>,
    /// The matched instances: `(label, a's instance, b's instance)` in a's start order.
    pub matched: Vec<(String, Instance, Instance)>,
    /// Per `group/name`: instances on a and on b that found no partner.
    pub unmatched: Vec<(String, usize, usize)>,
}

/// Groups instances by `group/name`, each list in start order.
fn by_key(list: &[Instance]) -> BTreeMap<String, Vec<&Instance>> {
    let mut map: BTreeMap<String, Vec<&Instance>> = BTreeMap::new();
    for i in list {
        map.entry(format!("{}/{}", i.group, i.name))
            .or_default()
            .push(i);
    }
    for v in map.values_mut() {
        v.sort_by_key(|i| (i.start, i.end));
    }
    map
}

/// Matches the k-th instance of each collective on `a` and `b`.
fn match_instances(a: &[Instance], b: &[Instance]) -> PairEvidence {
    let (ka, kb) = (by_key(a), by_key(b));
    let mut matched = Vec::new();
    let mut unmatched = Vec::new();
    for (key, la) in &ka {
        let lb = kb.get(key).map_or(&[][..], Vec::as_slice);
        for (k, (x, y)) in la.iter().zip(lb).enumerate() {
            matched.push((format!("{key}#{k}"), (*x).clone(), (*y).clone()));
        }
        if la.len() != lb.len() {
            unmatched.push((
                key.clone(),
                la.len().saturating_sub(lb.len()),
                lb.len().saturating_sub(la.len()),
            ));
        }
    }
    for (key, lb) in &kb {
        if !ka.contains_key(key) {
            unmatched.push((key.clone(), 0, lb.len()));
        }
    }
    matched.sort_by_key(|(_, x, _)| (x.start, x.end));
    PairEvidence {
        overall: None,
        windows: Vec::new(),
        matched,
        unmatched,
    }
}

/// The intersection over `matched` (non-empty), remembering which instance gave each side.
/// `None` when a difference leaves `i64` nanoseconds.
pub fn intersect(matched: &[(String, Instance, Instance)]) -> Option<Evidence> {
    let mut out: Option<Evidence> = None;
    for (label, x, y) in matched {
        let lo = y.start.checked_sub(x.end)?;
        let hi = y.end.checked_sub(x.start)?;
        match &mut out {
            None => {
                out = Some(Evidence {
                    bound: Bound::new(lo, hi),
                    count: 1,
                    lo_from: Witness {
                        label: label.clone(),
                        value: lo,
                    },
                    hi_from: Witness {
                        label: label.clone(),
                        value: hi,
                    },
                });
            }
            Some(e) => {
                e.count += 1;
                if lo > e.bound.lo() {
                    e.lo_from = Witness {
                        label: label.clone(),
                        value: lo,
                    };
                }
                if hi < e.bound.hi() {
                    e.hi_from = Witness {
                        label: label.clone(),
                        value: hi,
                    };
                }
                e.bound = e.bound.intersect(Bound::new(lo, hi));
            }
        }
    }
    out
}

/// The evidence that `a`'s and `b`'s collectives give about `off_b − off_a`, overall and per
/// window of `window` consecutive matched instances (`window = 0`: no windows).
///
/// Time: O(n log n) in the number of instances.
pub fn pair(a: &[Instance], b: &[Instance], window: usize) -> PairEvidence {
    let mut out = match_instances(a, b);
    out.overall = intersect(&out.matched);
    if window > 0 && out.matched.len() > window {
        out.windows = out.matched.chunks(window).filter_map(intersect).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(name: &str, start: i64, end: i64) -> Instance {
        Instance {
            group: "0".into(),
            name: name.into(),
            start: Nanos::new(start),
            end: Nanos::new(end),
        }
    }

    #[test]
    fn one_instance_gives_start_minus_end_to_end_minus_start() {
        //  a: [100, 200)   b: [150, 260)   ⇒   [150 − 200, 260 − 100] = [−50, 160]
        let e = pair(&[inst("ar", 100, 200)], &[inst("ar", 150, 260)], 0);
        let o = e.overall.unwrap();
        assert_eq!(o.bound, Bound::new(Nanos::new(-50), Nanos::new(160)));
        assert_eq!(o.count, 1);
        assert_eq!(o.lo_from.label, "0/ar#0");
    }

    #[test]
    fn instances_intersect_and_name_their_sides() {
        let a = [inst("ar", 0, 100), inst("ar", 1_000, 1_010)];
        let b = [inst("ar", 90, 120), inst("ar", 1_005, 1_030)];
        // k0: [90 − 100, 120 − 0] = [−10, 120]; k1: [1005 − 1010, 1030 − 1000] = [−5, 30].
        let o = pair(&a, &b, 0).overall.unwrap();
        assert_eq!(o.bound, Bound::new(Nanos::new(-5), Nanos::new(30)));
        assert_eq!(o.count, 2);
        assert_eq!(o.lo_from.label, "0/ar#1");
        assert_eq!(o.hi_from.label, "0/ar#1");
    }

    #[test]
    fn order_is_by_start_not_by_input_order() {
        let a = [inst("ar", 1_000, 1_010), inst("ar", 0, 100)];
        let b = [inst("ar", 90, 120), inst("ar", 1_005, 1_030)];
        let o = pair(&a, &b, 0).overall.unwrap();
        assert_eq!(o.bound, Bound::new(Nanos::new(-5), Nanos::new(30)));
    }

    #[test]
    fn different_collectives_are_matched_separately_and_leftovers_counted() {
        let a = [inst("ar", 0, 10), inst("ag", 50, 60), inst("ag", 70, 80)];
        let b = [inst("ag", 55, 65), inst("ar", 2, 12)];
        let e = pair(&a, &b, 0);
        assert_eq!(e.matched.len(), 2);
        assert_eq!(e.unmatched, vec![("0/ag".to_owned(), 1, 0)]);
    }

    #[test]
    fn conflicting_instances_give_an_empty_bound() {
        // Clock b drifts: early instances say off ≈ 0, late ones off ≈ 1000.
        let a = [inst("ar", 0, 10), inst("ar", 5_000, 5_010)];
        let b = [inst("ar", 0, 10), inst("ar", 6_000, 6_010)];
        let e = pair(&a, &b, 1);
        assert!(e.overall.unwrap().bound.is_empty());
        assert_eq!(e.windows.len(), 2);
        assert!(e.windows.iter().all(|w| !w.bound.is_empty()));
    }

    #[test]
    fn nothing_matched_gives_no_evidence() {
        let e = pair(&[inst("ar", 0, 10)], &[inst("ag", 0, 10)], 0);
        assert!(e.overall.is_none());
        assert_eq!(e.unmatched.len(), 2);
    }
}
