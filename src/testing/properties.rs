//! Property tests of the interval algebra (SPEC §3) against the tick-by-tick
//! [`DenseOracle`], and of the laws the algebra must obey.
//!
//! They live inside the crate, so a plain `cargo test` runs them; other projects reach the
//! same generators and oracle through the `proptest` feature (see [`crate::testing`]).
//!
//! Sets come from a small domain (endpoints in `0..=40`, at most 12 intervals), where
//! equal endpoints, touching, nesting and zero-length intervals are common. Case counts are
//! modest so the whole file runs in a few seconds in a debug build.

use proptest::prelude::*;
use proptest::sample::Index;

use crate::clock::ClockId;
use crate::interval::{analyze, analyze_numbers, Interval, OverlapRegion, SetAnalysis};
use crate::testing::{clock_ids, interval_sets_in, small_interval_sets, DenseOracle};
use crate::units::Nanos;
use crate::verdict::Reason;

/// Cases per property: enough to find the geometry bugs, cheap enough for a 2-core CI.
const CASES: u32 = 192;
/// Cases for the properties over sets of hundreds of intervals.
const BIG_SET_CASES: u32 = 48;

fn iv(start: i64, end: i64) -> Interval {
    Interval::new(Nanos::new(start), Nanos::new(end)).expect("test intervals are ordered")
}

/// `interval` moved by `offset` nanoseconds.
fn shifted(interval: &Interval, offset: i64) -> Interval {
    iv(
        interval.start().as_i64() + offset,
        interval.end().as_i64() + offset,
    )
}

/// Every position-carrying part of `analysis` moved by `offset`; amounts are unchanged.
fn shifted_analysis(analysis: &SetAnalysis, offset: i64) -> SetAnalysis {
    SetAnalysis {
        extent: analysis.extent.map(|e| shifted(&e, offset)),
        gaps: analysis.gaps.iter().map(|g| shifted(g, offset)).collect(),
        overlap_regions: analysis
            .overlap_regions
            .iter()
            .map(|r| OverlapRegion {
                span: shifted(&r.span, offset),
                max_depth: r.max_depth,
            })
            .collect(),
        ..analysis.clone()
    }
}

/// A set and, independently drawn, one of its permutations.
fn set_and_permutation() -> impl Strategy<Value = (Vec<Interval>, Vec<Interval>)> {
    small_interval_sets().prop_flat_map(|set| (Just(set.clone()), Just(set).prop_shuffle()))
}

/// Offsets that keep every endpoint of a [`small_interval_sets`] set inside `i64`,
/// including ones that push it against both ends of the range.
fn offsets() -> impl Strategy<Value = i64> {
    prop_oneof![
        -1_000_i64..=1_000,
        any::<i32>().prop_map(i64::from),
        Just(i64::MIN),
        Just(i64::MAX - 40),
        (i64::MIN..=i64::MAX - 40),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    // ---- against the oracle -------------------------------------------------------------

    #[test]
    fn union_matches_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(analyze(&set).union_ns, DenseOracle::new(&set).union_ns());
    }

    #[test]
    fn gaps_match_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(analyze(&set).gaps, DenseOracle::new(&set).gaps());
    }

    #[test]
    fn overlap_amount_matches_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(analyze(&set).overlap_ns(), DenseOracle::new(&set).overlap_ns());
    }

    #[test]
    fn overlap_regions_match_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(
            analyze(&set).overlap_regions,
            DenseOracle::new(&set).overlap_regions()
        );
    }

    #[test]
    fn max_depth_matches_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(analyze(&set).max_depth, DenseOracle::new(&set).max_depth());
    }

    #[test]
    fn whole_analysis_matches_the_oracle(set in small_interval_sets()) {
        prop_assert_eq!(analyze(&set), DenseOracle::new(&set).analysis());
    }

    /// Long sets on a tiny domain: depth well above 2, many shared endpoints.
    #[test]
    fn crowded_sets_match_the_oracle(set in interval_sets_in(-4..=8, 40)) {
        prop_assert_eq!(analyze(&set), DenseOracle::new(&set).analysis());
    }

    /// The numbers-only sweep against the oracle, every field, on plain and crowded sets.
    #[test]
    fn numbers_match_the_oracle(
        set in prop_oneof![small_interval_sets(), interval_sets_in(-4..=8, 40)]
    ) {
        let oracle = DenseOracle::new(&set);
        let n = analyze_numbers(&set);
        prop_assert_eq!(n.count, oracle.count());
        prop_assert_eq!(n.sum_ns, oracle.sum_ns());
        prop_assert_eq!(n.union_ns, oracle.union_ns());
        prop_assert_eq!(n.extent, oracle.extent());
        prop_assert_eq!(n.gap_count, oracle.gaps().len());
        prop_assert_eq!(n.max_depth, oracle.max_depth());
        let twice: i128 = oracle.depths().iter().map(|&d| i128::from(d >= 2)).sum();
        prop_assert_eq!(n.covered_twice_ns, twice);
    }

    // ---- identities of SPEC §3 ----------------------------------------------------------

    #[test]
    fn span_is_union_plus_gaps(set in small_interval_sets()) {
        let r = analyze(&set);
        match r.span_ns() {
            None => prop_assert!(set.is_empty()),
            Some(span) => prop_assert_eq!(span, r.union_ns + r.gap_total_ns()),
        }
    }

    #[test]
    fn sum_is_union_plus_overlap_and_bounds_hold(set in small_interval_sets()) {
        let r = analyze(&set);
        let lengths: i128 = set.iter().map(Interval::length_wide).sum();
        prop_assert_eq!(r.sum_ns, lengths);
        prop_assert_eq!(r.sum_ns, r.union_ns + r.overlap_ns());
        prop_assert!(r.union_ns <= r.sum_ns);
        prop_assert!(r.union_ns <= r.span_ns().unwrap_or(0));
    }

    #[test]
    fn weighted_overlap_equals_overlap(set in small_interval_sets()) {
        let r = analyze(&set);
        prop_assert_eq!(r.weighted_overlap_ns, r.overlap_ns());
    }

    // ---- laws ---------------------------------------------------------------------------

    #[test]
    fn order_of_the_input_does_not_matter((set, permuted) in set_and_permutation()) {
        prop_assert_eq!(analyze(&permuted), analyze(&set));
    }

    #[test]
    fn sorted_and_unsorted_input_give_identical_results(set in small_interval_sets()) {
        let expected = analyze(&set);
        let mut by_start_then_end = set.clone();
        by_start_then_end.sort();
        prop_assert_eq!(&analyze(&by_start_then_end), &expected);
        // Sorted by start only, with ends in falling order: still "sorted" for the fast path.
        let mut by_start_longest_first = set;
        by_start_longest_first.sort_by_key(|i| (i.start(), std::cmp::Reverse(i.end())));
        prop_assert_eq!(&analyze(&by_start_longest_first), &expected);
    }

    #[test]
    fn moving_the_set_moves_every_position(set in small_interval_sets(), offset in offsets()) {
        let moved: Vec<Interval> = set.iter().map(|i| shifted(i, offset)).collect();
        prop_assert_eq!(analyze(&moved), shifted_analysis(&analyze(&set), offset));
    }

    #[test]
    fn a_second_copy_doubles_sum_and_depth_only(set in small_interval_sets()) {
        let once = analyze(&set);
        let twice = analyze(&[set.as_slice(), set.as_slice()].concat());
        prop_assert_eq!(twice.count, 2 * once.count);
        prop_assert_eq!(twice.sum_ns, 2 * once.sum_ns);
        prop_assert_eq!(twice.union_ns, once.union_ns);
        prop_assert_eq!(&twice.gaps, &once.gaps);
        prop_assert_eq!(twice.span_ns(), once.span_ns());
        prop_assert_eq!(twice.max_depth, 2 * once.max_depth);
    }

    #[test]
    fn splitting_an_interval_inside_changes_only_the_count(
        set in small_interval_sets(),
        which in any::<Index>(),
        at in any::<Index>(),
    ) {
        let splittable: Vec<usize> =
            (0..set.len()).filter(|&k| set[k].length_wide() >= 2).collect();
        prop_assume!(!splittable.is_empty());
        let victim = splittable[which.index(splittable.len())];
        let (start, end) = (set[victim].start().as_i64(), set[victim].end().as_i64());
        let cut = start + 1 + at.index((end - start - 1) as usize) as i64;
        let mut split = set.clone();
        split[victim] = iv(start, cut);
        split.push(iv(cut, end));

        let before = analyze(&set);
        let after = analyze(&split);
        prop_assert_eq!(after.count, before.count + 1);
        prop_assert_eq!(SetAnalysis { count: before.count, ..after }, before);
    }

    #[test]
    fn adding_intervals_never_shrinks_the_union(
        set in small_interval_sets(),
        more in small_interval_sets(),
    ) {
        let before = analyze(&set);
        let after = analyze(&[set.as_slice(), more.as_slice()].concat());
        prop_assert!(after.union_ns >= before.union_ns);
        prop_assert!(after.union_ns <= before.union_ns + analyze(&more).sum_ns);
    }

    // ---- the generators themselves ------------------------------------------------------

    #[test]
    fn clock_comparison_is_symmetric_and_names_the_right_reason(
        a in clock_ids(),
        b in clock_ids(),
    ) {
        prop_assert_eq!(a.comparable_with(&a), Ok(()));
        prop_assert_eq!(a.comparable_with(&b), b.comparable_with(&a));
        let expected = if a.domain != b.domain {
            Err(Reason::CrossDomain)
        } else if a.instance != b.instance {
            Err(Reason::CrossInstance)
        } else {
            Ok(())
        };
        prop_assert_eq!(a.comparable_with(&b), expected);
    }
}

proptest! {
    // Big sets: fewer cases, each one exercises hundreds of intervals.
    #![proptest_config(ProptestConfig::with_cases(BIG_SET_CASES))]

    /// Piles deeper than the sweep's small list of open intervals (it moves to a heap).
    #[test]
    fn deep_piles_match_the_oracle(set in interval_sets_in(0..=12, 120)) {
        prop_assert_eq!(analyze(&set), DenseOracle::new(&set).analysis());
    }

    /// Sets long enough that unsorted input takes the radix sort.
    #[test]
    fn long_sets_match_the_oracle(set in interval_sets_in(-500..=1_500, 700)) {
        prop_assert_eq!(analyze(&set), DenseOracle::new(&set).analysis());
    }
}

/// The clock alphabets are small on purpose: a few hundred draws must produce equal clocks,
/// same-domain-other-instance pairs and cross-domain pairs.
#[test]
fn clock_generator_produces_every_kind_of_pair() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        proptest::test_runner::TestRng::deterministic_rng(Default::default()),
    );
    let strategy = clock_ids();
    let clocks: Vec<ClockId> = (0..200)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let pairs = clocks.windows(2).map(|w| w[0].comparable_with(&w[1]));
    let (mut same, mut cross_instance, mut cross_domain) = (0, 0, 0);
    for outcome in pairs {
        match outcome {
            Ok(()) => same += 1,
            Err(Reason::CrossInstance) => cross_instance += 1,
            Err(Reason::CrossDomain) => cross_domain += 1,
            Err(other) => panic!("unexpected reason {other:?}"),
        }
    }
    assert!(same > 0, "no equal clocks in 200 draws");
    assert!(cross_instance > 0, "no cross-instance pairs in 200 draws");
    assert!(cross_domain > 0, "no cross-domain pairs in 200 draws");
}

/// The oracle and `analyze` on the SPEC's teaching fixture (case 4, `overlapping-phases`).
///
/// ```text
/// 7000      7040      7080      7100
///   [======= a ========)
///             [========= b ========)
/// ```
#[test]
fn overlapping_phases_agree_with_the_oracle() {
    let set = [iv(7000, 7080), iv(7040, 7100)];
    let r = analyze(&set);
    assert_eq!(r, DenseOracle::new(&set).analysis());
    assert_eq!(
        (r.sum_ns, r.union_ns, r.span_ns(), r.overlap_ns()),
        (140, 100, Some(100), 40)
    );
    assert_eq!(
        r.overlap_regions,
        vec![OverlapRegion {
            span: iv(7040, 7080),
            max_depth: 2
        }]
    );
}
