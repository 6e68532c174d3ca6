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
//! The linear pass (`union_by_max_reach`) is the least a sweep over sorted input must do
//! for any of the numbers: it reads each interval once, keeps the covered run
//! `[from, reach)` and, at each start past `reach`, adds the run's length to an `i128`
//! total (one compare-and-branch, one `max`, and an add per gap); no allocation, no depth,
//! no sum, no order check.
//!
//! After the criterion groups, an **alternating** comparison (every decade from 10² to 10⁷)
//! times each target and its reference in turn, round after round, within one run (so a burst of load from other jobs
//! falls on both sides), for [`analyze`] and for the numbers-only [`analyze_numbers`], in
//! CPU time of the bench thread (`CLOCK_THREAD_CPUTIME_ID`); it prints the median of each
//! side and the median of the per-round ratios. Only the
//! alternating part: `cargo bench --bench algebra -- alternating`.
//!
//! Run with `cargo bench --bench algebra`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, BenchmarkId, Criterion, SamplingMode, Throughput};

use worksheet::interval::{analyze, analyze_numbers, Interval};
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
        group.bench_function(BenchmarkId::new("numbers_random", count), |b| {
            b.iter(|| analyze_numbers(black_box(&random)))
        });
        group.bench_function(BenchmarkId::new("numbers_presorted", count), |b| {
            b.iter(|| analyze_numbers(black_box(&presorted)))
        });
        group.finish();
    }
}

/// CPU seconds this thread has run: unlike wall time, a timing is not stretched when the
/// scheduler hands the core to another job (on a loaded machine a long timing is preempted
/// more often than a short one, which would bias a ratio of unequal durations).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU seconds per call of `f`, timed over `batch` calls.
fn per_call(batch: usize, f: &mut dyn FnMut()) -> f64 {
    let start = thread_cpu_s();
    for _ in 0..batch {
        f();
    }
    (thread_cpu_s() - start) / batch as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Times `target` and `reference` in turn, `rounds` times, each timing over `batch` calls;
/// prints both medians, their ratio and the median per-round ratio.
fn alternate(
    label: &str,
    rounds: usize,
    batch: usize,
    target: &mut dyn FnMut(),
    reference: &mut dyn FnMut(),
) {
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Swap which side goes first every round.
        let (ta, tb) = if round % 2 == 0 {
            let ta = per_call(batch, target);
            (ta, per_call(batch, reference))
        } else {
            let tb = per_call(batch, reference);
            (per_call(batch, target), tb)
        };
        a.push(ta);
        b.push(tb);
        ratios.push(ta / tb);
    }
    let (ma, mb) = (median(&mut a), median(&mut b));
    println!(
        "{label:44} {:>12.3} µs {:>12.3} µs   ratio of medians {:>6.2}x   median ratio {:>6.2}x",
        ma * 1e6,
        mb * 1e6,
        ma / mb,
        median(&mut ratios)
    );
}

/// The alternating comparison (see the module docs).
fn alternating() {
    println!("alternating: target vs reference (median CPU µs per call), rounds interleaved");
    for (exponent, rounds, batch) in [
        (2_u32, 201, 2000),
        (3, 201, 200),
        (4, 101, 20),
        (5, 61, 3),
        (6, 21, 1),
        (7, 11, 1),
    ] {
        let count = 10_usize.pow(exponent);
        let random = random_intervals(count);
        let presorted = copy_and_sort(&random);
        let size = format!("10^{exponent}");
        alternate(
            &format!("{size} analyze_numbers random / sort_unstable"),
            rounds,
            batch,
            &mut || {
                black_box(analyze_numbers(black_box(&random)));
            },
            &mut || {
                black_box(copy_and_sort(black_box(&random)));
            },
        );
        alternate(
            &format!("{size} analyze_numbers presorted / linear pass"),
            rounds,
            batch * 10,
            &mut || {
                black_box(analyze_numbers(black_box(&presorted)));
            },
            &mut || {
                black_box(union_by_max_reach(black_box(&presorted)));
            },
        );
        alternate(
            &format!("{size} analyze random / sort_unstable"),
            rounds,
            batch,
            &mut || {
                black_box(analyze(black_box(&random)));
            },
            &mut || {
                black_box(copy_and_sort(black_box(&random)));
            },
        );
        alternate(
            &format!("{size} analyze presorted / linear pass"),
            rounds,
            batch * 10,
            &mut || {
                black_box(analyze(black_box(&presorted)));
            },
            &mut || {
                black_box(union_by_max_reach(black_box(&presorted)));
            },
        );
    }
}

criterion_group!(benches, bench_sizes);

fn main() {
    let only_alternating = std::env::args().any(|a| a == "alternating");
    if !only_alternating {
        benches();
    }
    alternating();
    Criterion::default().configure_from_args().final_summary();
}
