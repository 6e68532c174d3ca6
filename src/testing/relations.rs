//! Laws of clock relations and bounded answers (SPEC §10), over cases generated from a
//! known truth.
//!
//! Each generated world has two to five clocks with true offsets `off[i]` and one true
//! instant `T[i]` read on each clock as `t[i] = T[i] + off[i]`. Relations are drawn between
//! random pairs, each a bound `[d − e1, d + e2]` around the true `d = off[b] − off[a]`
//! (`e1, e2 ≥ 0`), so every relation is true. The case asks `elapsed` and `clock-offset`
//! for every ordered pair of clocks and goes through the same validation and engine as a
//! file. The laws:
//!
//! - the truth lies inside every bound (`T[j] − T[i]` for elapsed, `off[j] − off[i]` for
//!   offsets), and true relations never conflict;
//! - a pair is answered exactly when a chain of relations joins it, else `cross-instance`;
//! - removing a relation never narrows any answer (and adding one never widens it);
//! - a chain composes by interval addition, and two relations on one pair intersect.

use proptest::prelude::*;

use crate::case::raw::{
    RawCase, RawClock, RawClockRelation, RawMark, RawQuestion, RawRelationSource, RawTime,
};
use crate::case::validate;
use crate::engine::{evaluate, Report};
use crate::units::Nanos;
use crate::verdict::{Reason, Verdict};

/// A generated world: true offsets, true instants, and true relations `(a, b, e1, e2)`.
#[derive(Clone, Debug)]
struct World {
    offsets: Vec<i64>,
    instants: Vec<i64>,
    relations: Vec<(usize, usize, i64, i64)>,
}

fn arb_world() -> impl Strategy<Value = World> {
    (2usize..=5).prop_flat_map(|n| {
        (
            prop::collection::vec(-1_000_000i64..1_000_000, n),
            prop::collection::vec(0i64..1_000_000, n),
            prop::collection::vec((0..n, 0..n, 0i64..50_000, 0i64..50_000), 0..7),
        )
            .prop_map(|(offsets, instants, relations)| World {
                offsets,
                instants,
                relations,
            })
    })
}

fn t(ns: i64) -> RawTime {
    RawTime::from(Nanos::new(ns))
}

fn clock(i: usize) -> String {
    format!("c{i}")
}

/// The world as a case: one clock per rank, its relations, a mark per clock, and the
/// `elapsed:i:j` and `offset:i:j` questions for every ordered pair.
fn case_of(w: &World) -> RawCase {
    let mut case = RawCase::new("relations");
    let n = w.offsets.len();
    for i in 0..n {
        case.clocks.push(RawClock {
            id: clock(i),
            domain: "host".into(),
            instance: Some(format!("node-{i}")),
        });
        case.marks.push(RawMark {
            id: format!("m{i}"),
            clock: clock(i),
            at: t(w.instants[i] + w.offsets[i]),
        });
    }
    for (k, &(a, b, e1, e2)) in w.relations.iter().enumerate() {
        let d = w.offsets[b] - w.offsets[a];
        case.clock_relations.push(RawClockRelation {
            id: Some(format!("r{k}")),
            a: clock(a),
            b: clock(b),
            lo: t(d - e1),
            hi: t(d + e2),
            source: RawRelationSource::Declared,
            evidence: Vec::new(),
        });
    }
    for i in 0..n {
        for j in 0..n {
            case.questions.push(RawQuestion::Elapsed {
                id: format!("elapsed:{i}:{j}"),
                from: format!("m{i}"),
                to: format!("m{j}"),
                expect: None,
            });
            case.questions.push(RawQuestion::ClockOffset {
                id: format!("offset:{i}:{j}"),
                a: clock(i),
                b: clock(j),
                expect: None,
            });
        }
    }
    case
}

fn report(case: RawCase) -> Report {
    evaluate(&validate(case, "relations").expect("generated cases validate"))
}

fn verdict<'r>(r: &'r Report, id: &str) -> &'r Verdict {
    r.answer(id)
        .and_then(|a| a.outcome.verdict())
        .expect("duration answer")
}

/// Whether a chain of relations joins `i` and `j` (union–find over the relations).
fn joined(n: usize, relations: &[(usize, usize, i64, i64)], i: usize, j: usize) -> bool {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            x = p[x];
        }
        x
    }
    for &(a, b, _, _) in relations {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
    }
    root(&mut parent, i) == root(&mut parent, j)
}

fn range(v: &Verdict) -> Option<(i64, i64)> {
    v.range().map(|(lo, hi)| (lo.as_i64(), hi.as_i64()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_truth_lies_inside_every_bound(w in arb_world()) {
        let r = report(case_of(&w));
        let n = w.offsets.len();
        for i in 0..n {
            for j in 0..n {
                let elapsed = verdict(&r, &format!("elapsed:{i}:{j}"));
                let offset = verdict(&r, &format!("offset:{i}:{j}"));
                if i != j && !joined(n, &w.relations, i, j) {
                    prop_assert_eq!(elapsed.reason(), Some(Reason::CrossInstance));
                    prop_assert_eq!(offset.reason(), Some(Reason::CrossInstance));
                    continue;
                }
                let (lo, hi) = range(elapsed).expect("a joined pair is bounded");
                let truth = w.instants[j] - w.instants[i];
                prop_assert!(lo <= truth && truth <= hi, "elapsed {i}->{j}: {truth} not in [{lo}, {hi}]");
                let (lo, hi) = range(offset).expect("a joined pair is bounded");
                let truth = w.offsets[j] - w.offsets[i];
                prop_assert!(lo <= truth && truth <= hi, "offset {i}->{j}: {truth} not in [{lo}, {hi}]");
                if i != j {
                    prop_assert!(matches!(elapsed, Verdict::Bounded { .. }), "across clocks is never a bare known: {elapsed}");
                }
            }
        }
    }

    #[test]
    fn removing_evidence_never_narrows(w in arb_world(), pick in any::<prop::sample::Index>()) {
        prop_assume!(!w.relations.is_empty());
        let before = report(case_of(&w));
        let mut fewer = w.clone();
        fewer.relations.remove(pick.index(w.relations.len()));
        let after = report(case_of(&fewer));
        let n = w.offsets.len();
        for i in 0..n {
            for j in 0..n {
                for kind in ["elapsed", "offset"] {
                    let id = format!("{kind}:{i}:{j}");
                    let (b, a) = (verdict(&before, &id), verdict(&after, &id));
                    match (range(b), range(a)) {
                        (Some((bl, bh)), Some((al, ah))) => prop_assert!(al <= bl && bh <= ah, "{id}: [{al}, {ah}] is narrower than [{bl}, {bh}]"),
                        (Some(_), None) => prop_assert_eq!(a.reason(), Some(Reason::CrossInstance)),
                        (None, Some(_)) => prop_assert!(false, "{id}: removing evidence made an unknown bounded"),
                        (None, None) => {}
                    }
                }
            }
        }
    }

    #[test]
    fn a_chain_composes_by_interval_addition(
        l1 in -100_000i64..100_000, w1 in 0i64..100_000,
        l2 in -100_000i64..100_000, w2 in 0i64..100_000,
    ) {
        let w = World { offsets: vec![0, 0, 0], instants: vec![0, 0, 0], relations: Vec::new() };
        let mut case = case_of(&w);
        for (k, (a, b, lo, hi)) in [(0, 1, l1, l1 + w1), (1, 2, l2, l2 + w2)].into_iter().enumerate() {
            case.clock_relations.push(RawClockRelation {
                id: Some(format!("r{k}")), a: clock(a), b: clock(b), lo: t(lo), hi: t(hi),
                source: RawRelationSource::Declared, evidence: Vec::new(),
            });
        }
        let r = report(case);
        prop_assert_eq!(range(verdict(&r, "offset:0:2")), Some((l1 + l2, l1 + w1 + l2 + w2)));
        prop_assert_eq!(range(verdict(&r, "offset:2:0")), Some((-(l1 + w1 + l2 + w2), -(l1 + l2))));
    }

    #[test]
    fn two_relations_on_one_pair_intersect(
        l1 in -100_000i64..100_000, w1 in 0i64..100_000,
        l2 in -100_000i64..100_000, w2 in 0i64..100_000,
    ) {
        let w = World { offsets: vec![0, 0], instants: vec![0, 0], relations: Vec::new() };
        let mut case = case_of(&w);
        for (k, (lo, hi)) in [(l1, l1 + w1), (l2, l2 + w2)].into_iter().enumerate() {
            case.clock_relations.push(RawClockRelation {
                id: Some(format!("r{k}")), a: clock(0), b: clock(1), lo: t(lo), hi: t(hi),
                source: RawRelationSource::Declared, evidence: Vec::new(),
            });
        }
        let r = report(case);
        let (lo, hi) = (l1.max(l2), (l1 + w1).min(l2 + w2));
        let v = verdict(&r, "offset:0:1");
        if lo <= hi {
            prop_assert_eq!(range(v), Some((lo, hi)));
        } else {
            prop_assert_eq!(v.reason(), Some(Reason::InconsistentRelation));
            let Verdict::Unknown { detail, .. } = v else { unreachable!() };
            prop_assert!(detail.contains("`r0`") && detail.contains("`r1`"), "{}", detail);
        }
    }
}
