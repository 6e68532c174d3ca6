//! How fast is [`analyze`] compared with what it cannot avoid doing?
//!
//! For 10³, 10⁵ and 10⁷ intervals, each size is measured four ways:
//!
//! | bench | input | what it times |
//! |---|---|---|
//! | `analyze_random` | random order | `analyze`: sortedness check, copy, sort, sweep |
//! | `sort_unstable_random` | random order | reference: copy the `Vec` and `sort_unstable` it by start |
//! | `analyze_presorted` | sorted by start | `analyze`: sortedness check, sweep, no sort |
//! | `linear_pass_presorted` | sorted by start | reference: one max-reach merge (the union) |
//!
//! Targets (see `BENCHMARKS.md`): random `analyze` ≤ 1.3 × the sort alone; presorted
//! `analyze` ≤ 2 × the linear pass.
//!
//! The data are deterministic (a SplitMix64 stream with a fixed seed): starts uniform over
//! `[0, n × MEAN_SPACING_NS)`, lengths uniform over `[0, MAX_LENGTH_NS)`, so the mean depth
//! is about 1.5 and the maximum a handful, as in a real trace, and about one interval in
//! five begins after an idle gap.
//!
//! Run with `cargo bench --bench algebra`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

use worksheet::interval::{analyze, Interval};
use worksheet::units::Nanos;

/// Mean distance between consecutive starts.
const MEAN_SPACING_NS: u64 = 100;
/// Lengths are drawn from `[0, MAX_LENGTH_NS)`: mean 150, so mean depth ≈ 1.5.
const MAX_LENGTH_NS: u64 = 300;
/// Fixed seed, so every run measures the same data.
const SEED: u64 = 0x5eed_1234_abcd_0001;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed, seedable 64-bit generator.
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform over `[0, bound)` (multiply-shift; the bias is far below what a bench sees).
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }
}

/// `count` intervals in random order, as described in the module docs.
fn random_intervals(count: usize) -> Vec<Interval> {
    let mut rng = SplitMix64::new(SEED ^ count as u64);
    let domain = count as u64 * MEAN_SPACING_NS;
    (0..count)
        .map(|_| {
            let start = rng.below(domain) as i64;
            let length = rng.below(MAX_LENGTH_NS) as i64;
            Interval::new(Nanos::new(start), Nanos::new(start + length))
                .expect("lengths are non-negative")
        })
        .collect()
}

/// Reference for the sort `analyze` must do on unsorted input: copy, then sort by start.
fn copy_and_sort(intervals: &[Interval]) -> Vec<Interval> {
    let mut owned = intervals.to_vec();
    owned.sort_unstable_by_key(|interval| interval.start());
    owned
}

/// Reference for one pass over sorted input: the covered union by a max-reach merge.
fn union_by_max_reach(sorted: &[Interval]) -> i128 {
    let mut covered: i128 = 0;
    let mut run: Option<(i64, i64)> = None;
    for interval in sorted {
        let (start, end) = (interval.start().as_i64(), interval.end().as_i64());
        run = match run {
            Some((from, reach)) if start <= reach => Some((from, reach.max(end))),
            Some((from, reach)) => {
                covered += i128::from(reach) - i128::from(from);
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    if let Some((from, reach)) = run {
        covered += i128::from(reach) - i128::from(from);
    }
    covered
}

fn bench_sizes(c: &mut Criterion) {
    for exponent in [3_u32, 5, 7] {
        let count = 10_usize.pow(exponent);
        let random = random_intervals(count);
        let presorted = copy_and_sort(&random);
        let size = format!("10^{exponent}");

        let mut group = c.benchmark_group(format!("algebra/{size}"));
        group.throughput(Throughput::Elements(count as u64));
        if exponent >= 7 {
            // Each iteration takes about a second: ten equal samples, no more.
            group
                .sample_size(10)
                .sampling_mode(SamplingMode::Flat)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(5));
        } else if exponent >= 5 {
            group
                .sample_size(30)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
        } else {
            group
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(2));
        }

        group.bench_function(BenchmarkId::new("analyze_random", count), |b| {
            b.iter(|| analyze(black_box(&random)))
        });
        group.bench_function(BenchmarkId::new("sort_unstable_random", count), |b| {
            b.iter(|| copy_and_sort(black_box(&random)))
        });
        group.bench_function(BenchmarkId::new("analyze_presorted", count), |b| {
            b.iter(|| analyze(black_box(&presorted)))
        });
        group.bench_function(BenchmarkId::new("linear_pass_presorted", count), |b| {
            b.iter(|| union_by_max_reach(black_box(&presorted)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_sizes);
criterion_main!(benches);
