//! The interval algebra's tests: hand-made sets with their real values, and the property
//! tests against a tick-by-tick oracle.

use super::*;

/// A pile deep enough to move the open ends to the heap (past 16), a gap, then a deeper
/// pile: the restart after the gap must forget the first pile's ends, or the second
/// pile's depth comes out one short (a mutant skipping the heap's clear survived).
#[test]
fn a_deeper_pile_after_a_gap_counts_every_open_interval() {
    let mut set = vec![iv(0, 10); FEW_ACTIVE + 1];
    set.extend(vec![iv(100, 110); FEW_ACTIVE + 2]);
    let depth = (FEW_ACTIVE + 2) as u32;
    assert_eq!(analyze_numbers(&set).max_depth, depth);
    assert_eq!(analyze(&set).max_depth, depth);
}

/// The sweep's lists give back their spare room only when they used less than half of
/// it: the memory promise of [`without_excess_capacity`], at its boundary.
#[test]
fn spare_room_is_given_back_below_half_use_only() {
    let filled = |len: usize| {
        let mut list: Vec<u64> = Vec::with_capacity(100);
        list.extend(0..len as u64);
        let before = list.capacity();
        (before, without_excess_capacity(list))
    };
    let (before, small) = filled(10);
    assert!(small.capacity() < before, "10 of {before} used: shrunk");
    assert_eq!(small, (0..10).collect::<Vec<u64>>());
    let (before, half) = filled(50);
    assert_eq!(half.capacity(), before, "exactly half used: kept");
    let (before, most) = filled(60);
    assert_eq!(most.capacity(), before, "60 of {before} used: kept");
}

/// A zero-length interval past the last covered instant stretches the extent, and the
/// stretch is a gap in both analyses (a mutant counting it only when `hi < reach`
/// survived the campaign).
#[test]
fn a_trailing_zero_length_interval_leaves_a_gap() {
    let set = [iv(0, 10), iv(20, 20)];
    let full = analyze(&set);
    assert_eq!(full.gaps, vec![iv(10, 20)]);
    let numbers = analyze_numbers(&set);
    assert_eq!(
        (numbers.gap_count, numbers.gap_total_ns(), numbers.span_ns()),
        (1, 10, Some(20))
    );
    let inside = analyze_numbers(&[iv(0, 10), iv(5, 5)]);
    assert_eq!((inside.gap_count, inside.gap_total_ns()), (0, 0));
}

/// The numbers-only analysis agrees with the full one, field by field, on sets with
/// gaps, touching and zero-length intervals, deep piles (past the 16 kept unsorted),
/// in sorted and in scrambled order.
#[test]
fn numbers_agree_with_the_full_analysis() {
    let mut state: u64 = 0x1234_5678;
    let mut next = |bound: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % bound
    };
    for (n, spread, longest) in [
        (0, 1, 1),
        (1, 10, 5),
        (50, 1000, 30),
        (400, 100, 200),
        (3000, 300_000, 300),
    ] {
        let set: Vec<Interval> = (0..n)
            .map(|_| {
                let start = next(spread) as i64;
                iv(start, start + next(longest) as i64)
            })
            .collect();
        let full = analyze(&set);
        let numbers = analyze_numbers(&set);
        assert_eq!(numbers.count, full.count);
        assert_eq!(numbers.sum_ns, full.sum_ns);
        assert_eq!(numbers.union_ns, full.union_ns);
        assert_eq!(numbers.extent, full.extent);
        assert_eq!(numbers.gap_count, full.gaps.len());
        assert_eq!(numbers.gap_total_ns(), full.gap_total_ns());
        assert_eq!(numbers.max_depth, full.max_depth);
        assert_eq!(numbers.overlap_ns(), full.overlap_ns());
        let regions: i128 = full
            .overlap_regions
            .iter()
            .map(|r| r.span.length_wide())
            .sum();
        assert_eq!(numbers.covered_twice_ns, regions);
        let mut sorted = set.clone();
        sorted.sort_unstable_by_key(|i| i.start);
        assert_eq!(analyze_numbers(&sorted), numbers);
    }
    let touching = [iv(0, 10), iv(10, 20), iv(20, 20), iv(25, 30)];
    let numbers = analyze_numbers(&touching);
    assert_eq!(
        (numbers.union_ns, numbers.gap_count, numbers.max_depth),
        (25, 1, 1)
    );
}

fn iv(start: i64, end: i64) -> Interval {
    Interval::new(Nanos::new(start), Nanos::new(end)).unwrap()
}

#[test]
fn reversed_interval_is_refused() {
    assert!(Interval::new(Nanos::new(5), Nanos::new(4)).is_err());
    assert!(Interval::new(Nanos::new(5), Nanos::new(5)).is_ok());
}

///  0    10    20
///  [== a ==)
///        [== b ==)
#[test]
fn touching_intervals_leave_no_gap_and_no_overlap() {
    let r = analyze(&[iv(0, 10), iv(10, 20)]);
    assert_eq!((r.sum_ns, r.union_ns, r.span_ns()), (20, 20, Some(20)));
    assert!(r.gaps.is_empty());
    assert!(r.overlap_regions.is_empty());
    assert_eq!(r.max_depth, 1);
}

///  0          100
///  [=== outer ===)
///     [inner)
///     20   50
#[test]
fn nested_interval_counts_once() {
    let r = analyze(&[iv(0, 100), iv(20, 50)]);
    assert_eq!(r.union_ns, 100);
    assert_eq!(r.overlap_ns(), 30);
    assert_eq!(
        r.overlap_regions,
        vec![OverlapRegion {
            span: iv(20, 50),
            max_depth: 2
        }]
    );
}

#[test]
fn identical_intervals_three_times_reach_depth_three() {
    let r = analyze(&[iv(5, 15), iv(5, 15), iv(5, 15)]);
    assert_eq!((r.union_ns, r.overlap_ns(), r.max_depth), (10, 20, 3));
    assert_eq!(r.weighted_overlap_ns, 20);
    assert_eq!(
        r.overlap_regions,
        vec![OverlapRegion {
            span: iv(5, 15),
            max_depth: 3
        }]
    );
}

#[test]
fn zero_length_interval_inside_changes_count_only() {
    let base = analyze(&[iv(0, 10), iv(20, 30)]);
    let with = analyze(&[iv(0, 10), iv(5, 5), iv(20, 30)]);
    assert_eq!(with.count, base.count + 1);
    assert_eq!(
        (
            with.sum_ns,
            with.union_ns,
            with.span_ns(),
            &with.gaps,
            with.max_depth
        ),
        (
            base.sum_ns,
            base.union_ns,
            base.span_ns(),
            &base.gaps,
            base.max_depth
        )
    );
}

#[test]
fn empty_set_has_no_span() {
    let r = analyze(&[]);
    assert_eq!(
        (r.count, r.sum_ns, r.union_ns, r.span_ns()),
        (0, 0, 0, None)
    );
}

///  0    10        30    40
///  [ a  )         [  b  )
///       |<- gap ->|
#[test]
fn disjoint_intervals_list_their_gap() {
    let r = analyze(&[iv(30, 40), iv(0, 10)]);
    assert_eq!(r.gaps, vec![iv(10, 30)]);
    assert_eq!((r.union_ns, r.span_ns()), (20, Some(40)));
}

#[test]
fn overlap_regions_split_where_depth_falls_to_one() {
    // [0,10) [5,15) [12,20) [14,30): depth ≥ 2 on [5,10) and [12,20)
    let r = analyze(&[iv(0, 10), iv(5, 15), iv(12, 20), iv(14, 30)]);
    assert_eq!(
        r.overlap_regions,
        vec![
            OverlapRegion {
                span: iv(5, 10),
                max_depth: 2
            },
            OverlapRegion {
                span: iv(12, 20),
                max_depth: 3
            },
        ]
    );
    assert_eq!(r.weighted_overlap_ns, r.overlap_ns());
}

/// 0    5    10   15   20
/// [==== a ===)
///      [= b =)
///           [===== c ======)
///           [== d ==)
#[test]
fn overlap_continuing_across_a_shared_boundary_is_one_region() {
    let r = analyze(&[iv(0, 10), iv(5, 10), iv(10, 20), iv(10, 15)]);
    assert_eq!(
        r.overlap_regions,
        vec![OverlapRegion {
            span: iv(5, 15),
            max_depth: 2
        }]
    );
}

/// ```text
/// 0 1 2 …        … 97 98 99 100
/// [=================== 0 ====)
///   [================ 1 ==)
///     …      (40 layers)
/// ```
#[test]
fn nested_pile_deeper_than_the_list_of_open_intervals_counts_every_layer() {
    let pile: Vec<Interval> = (0..40).map(|k| iv(k, 100 - k)).collect();
    let r = analyze(&pile);
    assert_eq!(r.max_depth, 40);
    assert_eq!(
        r.overlap_regions,
        vec![OverlapRegion {
            span: iv(1, 99),
            max_depth: 40
        }]
    );
    assert_eq!(r.weighted_overlap_ns, r.overlap_ns());
    assert_eq!(r, crate::testing::DenseOracle::new(&pile).analysis());
}

/// [`analyze_numbers`]'s register sweep (and its exact re-sweep of deep runs) against the
/// list-building [`sweep`] of [`analyze`], the path it replaced, field by field.
mod numbers_sweep {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn assert_agree(set: &[Interval]) -> Result<(), TestCaseError> {
        let full = analyze(set);
        let numbers = analyze_numbers(set);
        prop_assert_eq!(numbers.count, full.count);
        prop_assert_eq!(numbers.sum_ns, full.sum_ns);
        prop_assert_eq!(numbers.union_ns, full.union_ns);
        prop_assert_eq!(numbers.extent, full.extent);
        prop_assert_eq!(numbers.gap_count, full.gaps.len());
        prop_assert_eq!(numbers.max_depth, full.max_depth);
        let regions: i128 = full
            .overlap_regions
            .iter()
            .map(|r| r.span.length_wide())
            .sum();
        prop_assert_eq!(numbers.covered_twice_ns, regions);
        Ok(())
    }

    /// Sets as (start, length) pairs: crowded (piles deeper than the kept ends, many
    /// zero-length and touching intervals), sparse, and at the ends of `i64`.
    fn pairs() -> impl Strategy<Value = Vec<(i64, i64)>> {
        prop_oneof![
            vec((-20_i64..60, 0_i64..25), 0..200),
            vec((0_i64..5_000, 0_i64..300), 0..400),
            vec((0_i64..40, prop_oneof![Just(0_i64), 0_i64..3]), 0..120),
            vec(
                (
                    prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()],
                    prop_oneof![Just(0_i64), Just(i64::MAX), 0_i64..10]
                ),
                0..40
            ),
        ]
    }

    fn build(pairs: &[(i64, i64)]) -> Vec<Interval> {
        pairs
            .iter()
            .map(|&(start, length)| iv(start, start.saturating_add(length)))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Sorted by start: the register sweep reads the input as it is.
        #[test]
        fn sorted_input_agrees_with_the_full_sweep(pairs in pairs()) {
            let mut set = build(&pairs);
            set.sort_unstable_by_key(|i| i.start);
            assert_agree(&set)?;
        }

        /// In the order drawn: mostly unsorted, noticed and sorted first.
        #[test]
        fn unsorted_input_agrees_with_the_full_sweep(pairs in pairs()) {
            assert_agree(&build(&pairs))?;
        }

        /// Sorted but for one swapped pair, anywhere (past the first look at the order
        /// flag too): noticed late, the result is still that of the sorted set.
        #[test]
        fn one_late_disorder_is_noticed(pairs in pairs(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
            let mut set = build(&pairs);
            set.sort_unstable_by_key(|i| i.start);
            if !set.is_empty() {
                let (a, b) = (a.index(set.len()), b.index(set.len()));
                set.swap(a, b);
            }
            assert_agree(&set)?;
            let mut sorted = set.clone();
            sorted.sort_unstable_by_key(|i| i.start);
            prop_assert_eq!(analyze_numbers(&set), analyze_numbers(&sorted));
        }
    }

    /// Deep piles in two runs apart, past the kept ends, with the deepest in the second
    /// run, and a late disorder (index 200, after several looks at the order flag).
    #[test]
    fn deep_runs_are_swept_exactly() {
        let mut set: Vec<Interval> = (0..150).map(|k| iv(k, k + 7)).collect();
        set.extend((0..9).map(|k| iv(1_000 + k, 1_100)));
        set.extend((0..50).map(|k| iv(2_000 + 10 * k, 2_005 + 10 * k)));
        let numbers = analyze_numbers(&set);
        assert_eq!(numbers.max_depth, 9);
        assert_eq!(numbers.gap_count, 51);
        assert_eq!(numbers.count, 209);
        let mut scrambled = set.clone();
        scrambled.swap(200, 201);
        assert_eq!(analyze_numbers(&scrambled), numbers);
    }
}

mod bucket_sort {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Long enough for the bucket sort; each set draws its starts from the whole `i64`
        /// range, a narrow one (fewer buckets than bits), or a few far-apart values
        /// (everything in one or two buckets).
        #[test]
        fn orders_by_start_like_the_standard_sort(
            starts in prop_oneof![
                vec(any::<i64>(), BUCKET_SORT_MIN_LEN..600),
                vec(-3_i64..300, BUCKET_SORT_MIN_LEN..600),
                vec(-70_000_i64..70_000, BUCKET_SORT_MIN_LEN..600),
                vec((0_i64..4).prop_map(|k| (k << 40) - 1), BUCKET_SORT_MIN_LEN..600),
            ],
        ) {
            let mut set: Vec<Interval> = starts
                .iter()
                .zip((0..7).cycle())
                .map(|(&start, length)| iv(start, start.saturating_add(length)))
                .collect();
            let mut expected = set.clone();
            expected.sort_unstable_by_key(|i| i.start);
            set = sorted_by_start(&set);
            let starts_of = |v: &[Interval]| v.iter().map(|i| i.start).collect::<Vec<_>>();
            prop_assert_eq!(starts_of(&set), starts_of(&expected));
            set.sort_unstable();
            expected.sort_unstable();
            prop_assert_eq!(set, expected, "the same intervals, none lost or doubled");
        }
    }
}

#[test]
fn extreme_values_do_not_overflow() {
    let r = analyze(&[iv(i64::MIN, i64::MAX), iv(i64::MIN, i64::MAX)]);
    assert_eq!(r.union_ns, i128::from(i64::MAX) - i128::from(i64::MIN));
    assert_eq!(r.sum_ns, 2 * r.union_ns);
}
