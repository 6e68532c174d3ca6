//! Tokenizer candidates for the import's fast path (issue 24 §1), on one real trace.
//!
//! `tests/data/traces/df_index_resolver.json.gz` (53.7 MB of JSON, 216,092 events) is
//! decompressed once into memory; each candidate then reads the whole text:
//!
//! | bench | what it does |
//! |---|---|
//! | `serde_ignored_any` | reference: one `serde_json::IgnoredAny` pass (validates, builds nothing) |
//! | `serde_six_fields` | `serde_json` into a borrowed struct of the six fields per event, `ts`/`dur` as raw text read exactly (the careful reader's way) |
//! | `sonic_ignored_any` | `sonic-rs` (SIMD JSON) skipping the whole text into `IgnoredAny` |
//! | `sonic_six_fields` | `sonic-rs` into the same borrowed struct, `ts`/`dur` read exactly |
//! | `memchr_scan` | `worksheet::trace::scan`: the hand-written scanner, `ts`/`dur` to ns from the bytes |
//!
//! Every candidate ends by adding up the ns of `ts` and `dur` it read, and the bench checks
//! that all five... four that read times agree before timing anything.
//!
//! After criterion, an **alternating** comparison times each candidate and the
//! `serde_ignored_any` reference in turn, round after round, in CPU time of the bench thread,
//! and prints the medians and the median per-round ratio (a burst of load from other jobs
//! falls on both sides). Only that part: `cargo bench --bench tokenize -- alternating`.
//!
//! Run with `cargo bench --bench tokenize`.

use std::borrow::Cow;
use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, Criterion, SamplingMode, Throughput};
use serde::de::IgnoredAny;

use worksheet::trace::scan::{exact_scaled, scan, Time};

/// The trace, relative to the crate root.
const TRACE: &str = "tests/data/traces/df_index_resolver.json.gz";

/// The decompressed JSON text of the trace.
fn decompressed() -> Vec<u8> {
    let gz = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(TRACE))
        .expect("the trace is in the repository");
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(gz.as_slice())
        .read_to_end(&mut text)
        .expect("the trace is valid gzip");
    text
}

/// The six fields of an event for `serde_json`, borrowed where the text allows.
#[derive(serde::Deserialize)]
struct SerdeHead<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize)]
struct SerdeTop<'a> {
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Vec<SerdeHead<'a>>,
}

/// The six fields of an event for `sonic-rs`, borrowed where the text allows.
#[derive(serde::Deserialize)]
struct SonicHead<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    ts: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow, default)]
    dur: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow, default)]
    args: Option<sonic_rs::LazyValue<'a>>,
}

#[derive(serde::Deserialize)]
struct SonicTop<'a> {
    #[serde(rename = "traceEvents", borrow)]
    trace_events: Vec<SonicHead<'a>>,
}

/// Adds a time's ns to `sum` (only exact values; the trace has no other kind).
fn add(sum: &mut i128, time: Option<Time>) {
    if let Some(Time::Exact(v)) = time {
        *sum += i128::from(v);
    }
}

/// A raw number's text as ns (3 decimals of µs), exactly.
fn ns_of(text: &str) -> Option<Time> {
    exact_scaled(text.as_bytes(), 3).ok()
}

/// Σ ns of `ts` and `dur`, and how many names, read by `serde_json` (the fields, typed).
fn serde_six_fields(text: &[u8]) -> (i128, usize) {
    let top: SerdeTop = serde_json::from_slice(text).expect("the trace is JSON");
    let mut sum = 0;
    let mut names = 0;
    for e in &top.trace_events {
        add(&mut sum, e.ts.and_then(|t| ns_of(t.get())));
        add(&mut sum, e.dur.and_then(|t| ns_of(t.get())));
        names += usize::from(e.name.is_some() && e.ph.is_some() && e.cat.is_some());
        black_box(&e.args);
    }
    (sum, names)
}

/// The same through `sonic-rs`.
fn sonic_six_fields(text: &[u8]) -> (i128, usize) {
    let top: SonicTop = sonic_rs::from_slice(text).expect("the trace is JSON");
    let mut sum = 0;
    let mut names = 0;
    for e in &top.trace_events {
        add(&mut sum, e.ts.as_ref().and_then(|t| ns_of(t.as_raw_str())));
        add(&mut sum, e.dur.as_ref().and_then(|t| ns_of(t.as_raw_str())));
        names += usize::from(e.name.is_some() && e.ph.is_some() && e.cat.is_some());
        black_box(&e.args);
    }
    (sum, names)
}

/// The same through the hand-written scanner.
fn memchr_scan(text: &[u8]) -> (i128, usize) {
    let mut sum = 0;
    let mut names = 0;
    scan(text, |e| {
        add(&mut sum, e.ts);
        add(&mut sum, e.dur);
        names += usize::from(e.name.is_some() && e.ph.is_some() && e.cat.is_some());
        black_box(&e.args);
    })
    .expect("the trace scans");
    (sum, names)
}

fn serde_ignored_any(text: &[u8]) {
    black_box(serde_json::from_slice::<IgnoredAny>(text).expect("the trace is JSON"));
}

fn sonic_ignored_any(text: &[u8]) {
    black_box(sonic_rs::from_slice::<IgnoredAny>(text).expect("the trace is JSON"));
}

fn tokenize_bench(c: &mut Criterion) {
    let text = decompressed();
    let mut group = c.benchmark_group("tokenize_df_index_resolver");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("serde_ignored_any", |b| b.iter(|| serde_ignored_any(&text)));
    group.bench_function("serde_six_fields", |b| {
        b.iter(|| black_box(serde_six_fields(&text)))
    });
    group.bench_function("sonic_ignored_any", |b| b.iter(|| sonic_ignored_any(&text)));
    group.bench_function("sonic_six_fields", |b| {
        b.iter(|| black_box(sonic_six_fields(&text)))
    });
    group.bench_function("memchr_scan", |b| b.iter(|| black_box(memchr_scan(&text))));
    group.finish();
}

/// CPU seconds this thread has run (`CLOCK_THREAD_CPUTIME_ID`): a timing is not stretched
/// when the scheduler hands the core to another job.
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

fn timed(f: &mut dyn FnMut()) -> f64 {
    let start = thread_cpu_s();
    f();
    thread_cpu_s() - start
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

/// A candidate's label and one pass of it over the text.
type Candidate<'a> = (&'a str, &'a dyn Fn(&[u8]));

/// Each candidate against `serde_ignored_any`, in turn, `ROUNDS` times.
fn alternating() {
    const ROUNDS: usize = 15;
    let text = decompressed();
    let mb = text.len() as f64 / 1e6;
    let expected = serde_six_fields(&text);
    assert_eq!(
        sonic_six_fields(&text),
        expected,
        "sonic-rs reads the same ns"
    );
    assert_eq!(
        memchr_scan(&text),
        expected,
        "the scanner reads the same ns"
    );
    println!(
        "alternating on {mb:.1} MB of JSON: median CPU ms per pass, candidate vs serde IgnoredAny"
    );
    let candidates: [Candidate; 4] = [
        ("serde_six_fields", &|t| {
            black_box(serde_six_fields(t));
        }),
        ("sonic_ignored_any", &|t| sonic_ignored_any(t)),
        ("sonic_six_fields", &|t| {
            black_box(sonic_six_fields(t));
        }),
        ("memchr_scan", &|t| {
            black_box(memchr_scan(t));
        }),
    ];
    for (label, candidate) in candidates {
        let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let mut run_a = || candidate(&text);
            let mut run_b = || serde_ignored_any(&text);
            let (ta, tb) = if round % 2 == 0 {
                let ta = timed(&mut run_a);
                (ta, timed(&mut run_b))
            } else {
                let tb = timed(&mut run_b);
                (timed(&mut run_a), tb)
            };
            a.push(ta);
            b.push(tb);
            ratios.push(ta / tb);
        }
        let (ma, mb_ref) = (median(&mut a), median(&mut b));
        println!(
            "{label:20} {:>8.1} ms ({:>6.0} MB/s)   IgnoredAny {:>8.1} ms   median ratio {:>5.2}x",
            ma * 1e3,
            mb / ma,
            mb_ref * 1e3,
            median(&mut ratios)
        );
    }
}

criterion_group!(benches, tokenize_bench);

fn main() {
    let only_alternating = std::env::args().any(|a| a == "alternating");
    if !only_alternating {
        benches();
    }
    alternating();
    Criterion::default().configure_from_args().final_summary();
}
